/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_stream.c: the stream-ordered calls (shmemx_*_on_stream): put-with-signal, signal wait,
 * quiet, barrier and all-to-all queued on a CUDA stream, with no host synchronization.
 *
 * Owns a table of slots in host memory mapped for the GPU, and one worker thread. A call checks
 * its arguments (here, so a mistake is reported at the call, not later on another thread),
 * fills a slot's descriptor, and queues on the stream: a write of the slot's "go" word, a wait
 * until its "done" word is 1, a write of done back to 0 (the stream memory operations,
 * cuStreamWriteValue32 / cuStreamWaitValue32; where they cannot be used, one cuLaunchHostFunc
 * whose function does the same from the driver's thread). The worker sees go, performs the
 * operation through the same routines as the host calls (api.h, the collectives, quiet), then
 * writes go = 0 and done = 1; the stream moves on and resets done. The stream thus waits for
 * the operation, and the operation waits for the stream's earlier work: that is the order.
 *
 * Why a thread of its own, not the progress thread's hook: the operations block (a barrier
 * waits for every PE, a put-with-signal into the device heap waits for its staging), and a
 * hook runs inside an engine poll, where nothing may wait; and the progress thread is not
 * always there. Signal waits are tested, never waited for, so one stream's wait does not hold
 * up another stream's operations; a collective does hold the worker until every PE joined.
 *
 * Graphs: the queued operations name fixed words, so a captured sequence replays as is; a slot
 * used under capture stays the graph's until the driver says the graph, its instantiations
 * and their launches are gone (a CUDA user object whose destructor returns it, on a driver
 * thread: atomics only), or until shmem_finalize on a driver without user objects; and
 * FABSHMEM_STREAM_SLOTS bounds the slots held by live graphs. Invariants: a slot is reused
 * only once the worker finished it and its stream reset done; the worker never runs a slot
 * whose go the stream has not written. Never does: synchronize a stream, call a stream
 * function from the worker, or run an operation on the caller's thread.
 *
 * The table's page-locked memory and the probe of the memory operations are made when the
 * device heap starts (fsh_cuda_stream_prepare), not at the first call: a page-locked
 * allocation is an implicit synchronization point (CUDA Programming Guide, "Implicit
 * Synchronization") and the probe synchronizes fabshmem's stream, so a first call doing them
 * waited for a program's stream held at that moment (a gate, a wait for a later signal), and
 * never returned (an H200 showed it). The first call allocates host memory and starts the
 * worker; its CUDA calls only queue on the program's stream.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shmem.h>
#include <shmemx.h>

#include "api.h"
#include "api_check.h"
#include "coll.h"
#include "cuda.h"
#include "devmem.h"
#include "env.h"
#include "error.h"
#include "init.h"
#include "live.h"
#include "log.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"
#include "team.h"
#include "wait.h"

/* The words of a slot, in host memory mapped for the GPU: go written by the stream, done by
 * the worker, each on its own cache line. */
#define SLOT_BYTES FSH_CUDA_STREAM_SLOT_BYTES
#define DONE_OFF 64

enum op_kind { OP_PUT_SIGNAL = 1, OP_WAIT, OP_QUIET, OP_BARRIER, OP_ALLTOALL };
enum slot_state { S_FREE = 0, S_ARMED, S_FINISHED, S_GRAPH };
enum mode { MODE_MEMOPS = 1, MODE_HOSTFN }; /* env.c's words of FABSHMEM_STREAM_MODE */

struct op {
    int state;        /* enum slot_state; atomic */
    int kind;         /* enum op_kind */
    const char *fn;   /* the public routine, for errors where the operation runs */
    void *dest;
    const void *src;
    size_t n;
    uint64_t *sig;
    uint64_t value;
    int sig_op;       /* SHMEM_SIGNAL_* (put), SHMEM_CMP_* (wait) */
    int pe;
    shmem_team_t team;
    unsigned index;
};

static struct {
    pthread_mutex_t lock; /* start-up, claims, the worker's sleep */
    pthread_cond_t wake;
    bool started;
    bool stop;
    pthread_t thread;
    enum mode mode;
    char *words;          /* host address of the table */
    char *words_dev;      /* the GPU's address of the same bytes */
    struct op *ops;
    unsigned nslots;
    unsigned graph;       /* slots kept by captures; atomic (graph_gone lowers it) */
    bool ties;            /* captured slots are returned by graph_gone (user objects) */
    unsigned armed;       /* slots queued outside a capture and not finished */
    char info[512];
} sc = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static uint32_t *go_word(unsigned i)
{
    return (uint32_t *)(sc.words + (size_t)i * SLOT_BYTES);
}

static uint32_t *done_word(unsigned i)
{
    return (uint32_t *)(sc.words + (size_t)i * SLOT_BYTES + DONE_OFF);
}

static void pause_a_little(unsigned *idle)
{
    if (++*idle < 200) {
        sched_yield();
        return;
    }
    /* Nothing for a while: sleep, longer the longer it lasts (a captured graph may be launched
     * any time, so a worker with graph slots never sleeps for good). */
    struct timespec ts = {0, *idle < 20000 ? 20000 : 500000};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ the worker */

/* Run op; false when it is a wait that does not hold yet. */
static bool run(struct op *op)
{
    switch (op->kind) {
    case OP_PUT_SIGNAL:
        fsh_api_put_signal(op->fn, SHMEM_CTX_DEFAULT, op->dest, op->src, op->n, op->sig,
                           op->value, op->sig_op, op->pe, 0);
        return true;
    case OP_WAIT:
        return fsh_api_sync(op->fn, FSH_SYNC_ONE, 0, op->sig, 1, NULL, op->sig_op, &op->value, 0,
                            sizeof(uint64_t), 0, NULL) == 1;
    case OP_QUIET: done(op->fn, fsh_rma_quiet(&fsh_ctx_default)); return true;
    case OP_BARRIER: done(op->fn, fsh_coll_barrier_all()); return true;
    case OP_ALLTOALL:
        fsh_api_alltoall(op->fn, op->team, op->dest, op->src, op->n, 1);
        return true;
    default: return true;
    }
}

static void *worker_main(void *arg)
{
    (void)arg;
    unsigned idle = 0;
    for (;;) {
        pthread_mutex_lock(&sc.lock);
        while (!sc.stop && sc.armed == 0 && __atomic_load_n(&sc.graph, __ATOMIC_ACQUIRE) == 0) {
            pthread_cond_wait(&sc.wake, &sc.lock);
        }
        bool stop = sc.stop;
        pthread_mutex_unlock(&sc.lock);
        if (stop) {
            return NULL;
        }
        bool moved = false;
        for (unsigned i = 0; i < sc.nslots; i++) {
            struct op *op = &sc.ops[i];
            int state = __atomic_load_n(&op->state, __ATOMIC_ACQUIRE);
            if ((state != S_ARMED && state != S_GRAPH) ||
                __atomic_load_n(go_word(i), __ATOMIC_ACQUIRE) != 1) {
                continue;
            }
            if (!run(op)) {
                continue; /* a signal wait not yet satisfied: look again next round */
            }
            moved = true;
            /* go back to 0 before done: the stream writes go again only after it saw done. And
             * done before FINISHED: a claim takes a FINISHED slot once done is 0 again, which
             * must mean "reset by the stream", never "not yet written". */
            __atomic_store_n(go_word(i), 0, __ATOMIC_RELEASE);
            __atomic_store_n(done_word(i), 1, __ATOMIC_RELEASE);
            if (state == S_ARMED) {
                __atomic_store_n(&op->state, S_FINISHED, __ATOMIC_RELEASE);
                pthread_mutex_lock(&sc.lock);
                sc.armed--;
                pthread_mutex_unlock(&sc.lock);
            }
        }
        if (moved) {
            idle = 0;
        } else {
            pause_a_little(&idle);
        }
    }
}

/* The fallback's host function, on the driver's thread when the stream reaches it: what the
 * memory operations would do (no CUDA call in here, as the driver requires). */
static void host_fn(void *arg)
{
    struct op *op = arg;
    unsigned i = op->index, idle = 0;
    __atomic_store_n(go_word(i), 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(done_word(i), __ATOMIC_ACQUIRE) != 1) {
        pause_a_little(&idle);
    }
    __atomic_store_n(done_word(i), 0, __ATOMIC_RELEASE);
}

static void untie_all(void);

static void stop_worker(void)
{
    pthread_mutex_lock(&sc.lock);
    if (!sc.started) {
        pthread_mutex_unlock(&sc.lock);
        return;
    }
    sc.stop = true;
    pthread_cond_broadcast(&sc.wake);
    pthread_mutex_unlock(&sc.lock);
    pthread_join(sc.thread, NULL);
    untie_all();
    if (sc.armed > 0) {
        FSH_WARN("%u stream-ordered operation(s) never ran: their streams had not reached them "
                 "at shmem_finalize (synchronize the streams before shmem_finalize); those "
                 "streams now wait forever", sc.armed);
    }
    free(sc.ops); /* the words are cuda.c's (freed when the device heap closes) */
    sc.ops = NULL;
    sc.words = sc.words_dev = NULL;
    sc.nslots = sc.graph = sc.armed = 0;
    sc.stop = false;
    __atomic_store_n(&sc.started, false, __ATOMIC_RELEASE); /* a later shmem_init starts anew */
}

/* ------------------------------------------------------------------ graph slots
 *
 * A slot used under capture is tied to its graph (fsh_cuda_stream_tie): the driver calls
 * graph_gone once the graph, every executable graph made from it and every launch of those
 * are gone; the slot's stream reset done by then, and no launch will write go again. It runs
 * on a driver thread, maybe after shmem_finalize: it touches the table only while the table
 * is the one the tie was made for (tie_gen, which stop_worker moves on) and stop_worker waits
 * for a running graph_gone (ties_running) before it frees the table. */
struct tie {
    unsigned index;
    unsigned long gen;
};

static unsigned long tie_gen;  /* atomic: the table's generation */
static unsigned ties_running; /* atomic: graph_gone calls now between their two counts */

static void graph_gone(void *arg)
{
    struct tie *t = arg;
    __atomic_add_fetch(&ties_running, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&tie_gen, __ATOMIC_SEQ_CST) == t->gen) {
        __atomic_store_n(&sc.ops[t->index].state, S_FREE, __ATOMIC_RELEASE);
        __atomic_sub_fetch(&sc.graph, 1, __ATOMIC_ACQ_REL);
    }
    __atomic_sub_fetch(&ties_running, 1, __ATOMIC_SEQ_CST);
    free(t);
}

/* Before the table is freed: no graph_gone touches it any more. */
static void untie_all(void)
{
    __atomic_add_fetch(&tie_gen, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&ties_running, __ATOMIC_SEQ_CST) != 0) {
        sched_yield();
    }
}

/* Slot i was taken under capture on stream: tie it to the graph. Where that cannot be done it
 * stays the graph's until shmem_finalize (today's drivers all can). */
static void tie(const char *fn, void *stream, unsigned i)
{
    if (!sc.ties) {
        return;
    }
    struct tie *t = malloc(sizeof(*t));
    if (!t) {
        FSH_WARN("%s: no memory to tie a stream slot to its graph: it stays the graph's until shmem_finalize",
                 fn);
        return;
    }
    t->index = i;
    t->gen = __atomic_load_n(&tie_gen, __ATOMIC_SEQ_CST);
    int rc = fsh_cuda_stream_tie(stream, graph_gone, t);
    if (rc != 0) {
        free(t);
        done(fn, rc);
    }
}

/* ------------------------------------------------------------------ start-up */

/* The table (prepared when the device heap started), the way streams are served, the worker.
 * Under sc.lock. */
static int start(void)
{
    const struct fsh_config *cfg = fsh_env();
    /* Both checked by env.c at load: the word's index is enum mode (0: auto), the count is in
     * 1..65536. */
    int want = fsh_env_word_index("FABSHMEM_STREAM_MODE");
    long n = cfg->FABSHMEM_STREAM_SLOTS;
    char why[256] = "", attrs[128] = "";
    bool memops = fsh_cuda_stream_memops(why, sizeof(why), attrs, sizeof(attrs));
    if (want == MODE_MEMOPS && !memops) {
        return fsh_err(-ENOTSUP, "set FABSHMEM_STREAM_MODE=auto (or hostfunc)",
                       "FABSHMEM_STREAM_MODE=memops, but the stream memory operations cannot be used here: %s",
                       why);
    }
    sc.mode = want == MODE_HOSTFN || !memops ? MODE_HOSTFN : MODE_MEMOPS;
    const char *no_ties = fsh_cuda_graph_ties_missing();
    sc.ties = !no_ties;
    char graphs[160];
    if (sc.ties) {
        snprintf(graphs, sizeof(graphs), "captured slots return when their graph is destroyed");
    } else {
        snprintf(graphs, sizeof(graphs), "captured slots kept until shmem_finalize: no CUDA user objects, the driver lacks %s",
                 no_ties);
    }
    void *words = NULL, *dev = NULL;
    size_t bytes = 0;
    int rc = fsh_cuda_stream_words(&words, &dev, &bytes);
    if (rc != 0) {
        return rc;
    }
    if (bytes < (size_t)n * SLOT_BYTES) {
        return fsh_err(-EINVAL, "", "the stream table holds %zu bytes, %ld slots need %zu", bytes,
                       n, (size_t)n * SLOT_BYTES);
    }
    sc.ops = calloc((size_t)n, sizeof(*sc.ops));
    if (!sc.ops) {
        return fsh_err(-ENOMEM, "lower FABSHMEM_STREAM_SLOTS", "no memory for %ld stream slots", n);
    }
    sc.words = words;
    sc.words_dev = dev;
    sc.nslots = (unsigned)n;
    for (unsigned i = 0; i < sc.nslots; i++) {
        sc.ops[i].index = i;
    }
    if (sc.mode == MODE_MEMOPS) {
        snprintf(sc.info, sizeof(sc.info), "stream: cuStreamWriteValue32/cuStreamWaitValue32 on host-mapped words (%s), %u slots (%s), one worker thread",
                 attrs, sc.nslots, graphs);
    } else {
        snprintf(sc.info, sizeof(sc.info), "stream: cuLaunchHostFunc (%s), %u slots (%s), one worker thread",
                 want == MODE_HOSTFN ? "FABSHMEM_STREAM_MODE=hostfunc" : why, sc.nslots, graphs);
    }
    /* A second thread now calls into the library beside the program's: the engine lock must be
     * real (this call is outside the library on the program's thread, and a progress thread,
     * if any, made it real already), and the program's waits are no longer the only actor. */
    fsh_progress_enable_locking();
    fsh_live_helper_thread();
    sc.stop = false;
    int e = pthread_create(&sc.thread, NULL, worker_main, NULL);
    if (e != 0) {
        free(sc.ops);
        sc.ops = NULL;
        sc.words = sc.words_dev = NULL;
        return fsh_err(-e, "", "cannot start the stream worker thread: %s", strerror(e));
    }
    __atomic_store_n(&sc.started, true, __ATOMIC_RELEASE);
    fsh_init_on_finalize(stop_worker);
    FSH_INFO("%s", sc.info);
    if (fsh_rt.pe == 0 && cfg->SHMEM_INFO) {
        printf("  %s\n", sc.info);
        fflush(stdout);
    }
    return 0;
}

/* Every stream call starts here: the library runs, the device heap is on, the worker is up,
 * and stream is a live stream of this PE's GPU. */
static void begin(const char *fn, void *stream)
{
    running(fn);
    if (!fsh_dev_on) {
        fsh_init_fatal(fn, "set FABSHMEM_DEVICE_HEAP_SIZE (e.g. 1G) on every PE, on hosts with a GPU",
                       "the stream-ordered calls need the device heap, which is off (%s)",
                       fsh_dev_describe());
    }
    if (!__atomic_load_n(&sc.started, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&sc.lock);
        int rc = sc.started ? 0 : start();
        pthread_mutex_unlock(&sc.lock);
        done(fn, rc);
    }
    done(fn, fsh_cuda_stream_check(stream));
}

/* Every slot is held by a graph: for good? Without user objects, yes. With them, a graph just
 * destroyed returns its slots only when the driver's thread runs the destructors (soon, not
 * at once): so only once the table stayed full for GRAPHS_FULL_S seconds. */
#define GRAPHS_FULL_S 2.0
static bool graphs_full(double *since)
{
    if (!sc.ties) {
        return true;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    if (*since == 0) {
        *since = now;
    }
    return now - *since > GRAPHS_FULL_S;
}

/* A slot for op, queued on stream. The descriptor is copied in before the slot is armed. */
static void enqueue(const char *fn, void *stream, const struct op *desc)
{
    bool capturing = false;
    done(fn, fsh_cuda_stream_capturing(stream, &capturing));
    struct op *op = NULL;
    unsigned idle = 0;
    double full_since = 0;
    while (!op) {
        pthread_mutex_lock(&sc.lock);
        for (unsigned i = 0; i < sc.nslots && !op; i++) {
            int st = __atomic_load_n(&sc.ops[i].state, __ATOMIC_ACQUIRE);
            if (st == S_FREE ||
                (st == S_FINISHED && __atomic_load_n(done_word(i), __ATOMIC_ACQUIRE) == 0)) {
                op = &sc.ops[i];
            }
        }
        if (op) {
            /* Field by field: state is the worker's to read (atomically) at any time. */
            op->kind = desc->kind;
            op->fn = fn;
            op->dest = desc->dest;
            op->src = desc->src;
            op->n = desc->n;
            op->sig = desc->sig;
            op->value = desc->value;
            op->sig_op = desc->sig_op;
            op->pe = desc->pe;
            op->team = desc->team;
            if (capturing) {
                __atomic_add_fetch(&sc.graph, 1, __ATOMIC_ACQ_REL);
            } else {
                sc.armed++;
            }
            __atomic_store_n(&op->state, capturing ? S_GRAPH : S_ARMED, __ATOMIC_RELEASE);
            pthread_cond_broadcast(&sc.wake);
        }
        unsigned graph = __atomic_load_n(&sc.graph, __ATOMIC_ACQUIRE);
        pthread_mutex_unlock(&sc.lock);
        if (!op && graph == sc.nslots && graphs_full(&full_since)) {
            fsh_init_fatal(fn, sc.ties ? "raise FABSHMEM_STREAM_SLOTS, or destroy the graphs (and their instantiations) no longer needed"
                                       : "raise FABSHMEM_STREAM_SLOTS (slots used under capture stay the graph's until shmem_finalize on this driver)",
                           "all %u stream slots are kept by captured CUDA graphs", sc.nslots);
        }
        if (graph < sc.nslots) {
            full_since = 0; /* full again later: a new grace period */
        }
        if (!op) {
            /* The streams have not yet reached (or reset) the slots in use: wait for them, as
             * the driver makes a launch wait when a stream's queue is full. */
            pause_a_little(&idle);
        }
    }
    unsigned i = op->index;
    int rc;
    if (capturing) {
        tie(fn, stream, i);
    }
    if (sc.mode == MODE_MEMOPS) {
        char *go = sc.words_dev + (size_t)i * SLOT_BYTES, *dn = go + DONE_OFF;
        rc = fsh_cuda_stream_write32(stream, go, 1);
        if (rc == 0) {
            rc = fsh_cuda_stream_wait32(stream, dn, 1);
        }
        if (rc == 0) {
            rc = fsh_cuda_stream_write32(stream, dn, 0);
        }
    } else {
        rc = fsh_cuda_stream_host_fn(stream, host_fn, op);
    }
    done(fn, rc);
}

/* ------------------------------------------------------------------ the calls */

static void check_signal_word(const char *fn, const uint64_t *sig)
{
    enum fsh_seg seg;
    uint64_t off;
    check_sym(fn, "sig_addr", sig, sizeof(uint64_t), &seg, &off);
    if ((uintptr_t)sig % sizeof(uint64_t) != 0) {
        fsh_init_fatal(fn, "use a uint64_t signal word from symmetric memory, 8-byte aligned",
                       "sig_addr %p is not 8-byte aligned", (const void *)sig);
    }
}

void shmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nbytes,
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                    void *stream)
{
    const char *fn = __func__;
    begin(fn, stream);
    check_pe(fn, pe);
    check_size(fn, nbytes);
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD) {
        fsh_init_fatal(fn, "use SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD", "invalid sig_op %d", sig_op);
    }
    if (nbytes > 0) {
        enum fsh_seg seg;
        uint64_t off;
        check_sym(fn, "dest", dest, nbytes, &seg, &off);
        check_local(fn, "source", source, nbytes);
    }
    check_signal_word(fn, sig_addr);
    struct op d = {.kind = OP_PUT_SIGNAL, .dest = dest, .src = source, .n = nbytes,
                   .sig = sig_addr, .value = signal, .sig_op = sig_op, .pe = pe};
    enqueue(fn, stream, &d);
}

void shmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value,
                                        void *stream)
{
    const char *fn = __func__;
    begin(fn, stream);
    if (!fsh_wait_cmp_valid(cmp)) {
        fsh_init_fatal(fn, "use SHMEM_CMP_EQ, _NE, _GT, _GE, _LT or _LE", "invalid comparison %d",
                       cmp);
    }
    check_signal_word(fn, sig_addr);
    struct op d = {.kind = OP_WAIT, .sig = sig_addr, .value = cmp_value, .sig_op = cmp};
    enqueue(fn, stream, &d);
}

void shmemx_quiet_on_stream(void *stream)
{
    begin(__func__, stream);
    struct op d = {.kind = OP_QUIET};
    enqueue(__func__, stream, &d);
}

void shmemx_barrier_all_on_stream(void *stream)
{
    begin(__func__, stream);
    struct op d = {.kind = OP_BARRIER};
    enqueue(__func__, stream, &d);
}

void shmemx_alltoallmem_on_stream(shmem_team_t team, void *dest, const void *source,
                                  size_t nelems, void *stream)
{
    const char *fn = __func__;
    begin(fn, stream);
    struct fsh_team *t = fsh_team_of(team);
    if (!t) {
        fsh_init_fatal(fn, "pass a team this PE belongs to (SHMEM_TEAM_WORLD, or a split that succeeded and is not destroyed)",
                       "team %p %s", (void *)team,
                       team == SHMEM_TEAM_INVALID ? "is SHMEM_TEAM_INVALID" : fsh_team_why(team));
    }
    size_t bytes = bytes_of(nelems, (size_t)t->size);
    check_size(fn, bytes);
    if (bytes > 0) {
        enum fsh_seg seg;
        uint64_t off;
        check_sym(fn, "dest", dest, bytes, &seg, &off);
        check_sym(fn, "source", source, bytes, &seg, &off);
    }
    struct op d = {.kind = OP_ALLTOALL, .team = team, .dest = dest, .src = source, .n = nelems};
    enqueue(fn, stream, &d);
}

const char *shmemx_stream_info(void)
{
    if (!__atomic_load_n(&sc.started, __ATOMIC_ACQUIRE)) {
        return fsh_dev_on ? "stream: not started (it starts at the first stream-ordered call)"
                          : "stream: off (the stream-ordered calls need the device heap)";
    }
    return sc.info;
}
