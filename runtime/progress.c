/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.c: the progress engine.
 *
 * Owns the operation pool, the CQ reading, the engine lock and the progress thread. With manual
 * data progress (shm, tcp;ofi_rxm, efa) nothing moves, including reads, writes and atomics
 * aimed at this PE, unless someone reads the CQ, so every blocking call loops here, and the
 * progress thread covers a PE that computes without calling the library.
 *
 * Completions are classified by their operation context, never by their flags: providers
 * disagree on flags (tcp;ofi_rxm marks a target completion REMOTE_WRITE|REMOTE_CQ_DATA without
 * FI_RMA; sockets sets FI_REMOTE_CQ_DATA on the initiator's own completion), and target
 * completions do not reliably carry a NULL context (shm reports 0x1). A completion whose
 * context is one of our operation records is ours; any other is a remote event, and its
 * immediate data selects the handler.
 *
 * Under FABSHMEM_CHAOS=delay, entries read from the CQ are held in a small buffer and handed
 * out in random order over later polls, so handlers see remote events (and the initiator sees
 * completions) in orders SRD could produce.
 *
 * A fabric error is reported once with the operation, the peer and the provider's words, and
 * propagated as -errno: the API boundary ends the job, because a lost put cannot be recovered.
 */
#define _GNU_SOURCE
#include "progress.h"

#include <errno.h>
#include <pthread.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "fabric.h"
#include "log.h"
#include "mr.h"
#include "rt.h"

/* The provider's per-operation scratch space (FI_CONTEXT2 mode) is the first member of every
 * record, kept opaque in progress.h so that no libfabric type reaches the layers above. */
_Static_assert(sizeof(((struct fsh_op *)0)->fi) >= sizeof(struct fi_context2) &&
                   offsetof(struct fsh_op, fi) == 0 &&
                   _Alignof(struct fsh_op) >= _Alignof(struct fi_context2),
               "struct fsh_op's fi must hold a struct fi_context2 at its start");

#define HOLD_MAX 64 /* completions held back under chaos */

/* A lock's holder, as the --enable-debug checks see it (progress.h, "The lock contract"): the
 * holding thread (the address of its `mine`, below), how often it holds it, and where it took
 * it first. Written by the holder only; unused in release builds. */
struct lock_check {
    const void *owner;
    int depth;
    const char *file;
    int line;
};

static struct {
    struct fsh_op *pool;
    struct fsh_op *free;
    size_t depth;
    size_t in_use;
    bool yield;
    double timeout, user_timeout;
    fsh_imm_handler handlers[FSH_IMM_NKINDS];
    void (*poll_hook)(void);
    int (*post_hooks[FSH_POST_NHOOKS])(void);
    int failed; /* a fabric error was seen: every later wait fails at once */
    fsh_probe_fn probe; /* liveness (live.c) */
    double probe_interval;
    uint64_t *heartbeat;
    uint64_t events; /* CQ entries read so far: live.c's evidence that the fabric still moves */
    /* the write counter: writes posted (all, while a counter exists), those never issued, the
     * posted count at the last moment every write had completed, the failures seen */
    bool wcount; /* the rails count completed writes */
    fsh_way_fn way_hook;
    size_t lane_keep;  /* bytes per lane record for the lane hook's copies */
    unsigned deaths;   /* fsh_fabric_deaths() when the engine last looked */
    int nrails;
    bool count_writes;
    uint64_t wposted, wdead, werr;
    uint64_t wdrained;
    /* engine lock */
    bool locking;
    pthread_mutex_t lock;
    struct lock_check check;
    /* progress thread */
    pthread_t thread;
    bool thread_running;
    volatile int thread_stop;
    long interval_us;
    long sleep_max_us; /* the longest idle sleep */
    /* chaos: held CQ entries */
    bool chaos_delay;
    uint64_t rng;
    struct fi_cq_data_entry held[HOLD_MAX];
    size_t nheld;
} pg;

/* Bounce slots (the section of that name below): one registered block cut into n slots of
 * size bytes, the free ones on a stack. */
struct bounce {
    uint8_t *base;
    size_t size, n;
    void **free;
    size_t nfree;
    struct fsh_mr_set *set;
};

/* A lane (progress.h): an endpoint and CQ of its own, with its own records and lock. Only
 * its own operations complete on its CQ: peers know the engine's endpoint alone. */
struct fsh_lane {
    struct fid_ep *ep[FSH_MAX_RAILS]; /* one on every rail, with a CQ each */
    struct fid_cq *cq[FSH_MAX_RAILS];
    int nrails;
    struct fsh_op *pool, *free;
    size_t depth, in_use;
    uint8_t *scratch; /* FSH_LANE_SCRATCH bytes per record */
    uint8_t *keep;    /* pg.lane_keep bytes per record (the lane hook's), or NULL */
    unsigned deaths;  /* fsh_fabric_deaths() when it last looked */
    struct bounce bb; /* slots of its own, made at its first blocking put (fsh_lane_bounce_take) */
    bool bb_tried;
    pthread_mutex_t lock;
    struct lock_check check;
    struct fsh_lane *next; /* the open lanes (lanes_open), which the progress thread polls */
};
static struct fsh_lane *lanes_open; /* under the engine lock */

/* ------------------------------------------------------------------ lock checks
 *
 * Every take and release of the engine's and the lanes' locks goes through these, so that
 * --enable-debug builds (FSH_DEBUG_BUILD) check the contract of progress.h on every one; in
 * release builds they are the bare pthread calls (the engine's: only once locking is real). */
#ifdef FSH_DEBUG_BUILD
#define SITE , const char *file, int line
#define SITE0 const char *file, int line
/* This thread's lane locks: how many takes it holds in all, and the lane it took last (with
 * where), for the messages. Its address is the thread's identity in struct lock_check. */
static _Thread_local struct {
    int lanes;
    const struct fsh_lane *lane;
    const char *file;
    int line;
} mine;

static const char *base_name(const char *file)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    return slash ? slash + 1 : file ? file : "?";
}

static void __attribute__((noreturn)) lock_broken(const char *file, int line, const char *what,
                                                   const char *rule)
{
    fprintf(stderr, "fabshmem: PE %d/%d (%s:%d): lock contract broken at %s:%d: %s\n",
            fsh_rt.pe, fsh_rt.npes, fsh_rt.host, (int)getpid(), base_name(file), line, what);
    fprintf(stderr, "fabshmem: rule (runtime/progress.h, the lock contract): %s\n", rule);
    fflush(stderr);
    /* The default action, whatever a library installed (libfabric's psm2 provider catches
     * SIGABRT and exits 1): the process ends by SIGABRT, with a core where they are on. */
    signal(SIGABRT, SIG_DFL);
    abort();
}

static bool held(const struct lock_check *c)
{
    return __atomic_load_n(&c->owner, __ATOMIC_RELAXED) == (const void *)&mine;
}

static void took(struct lock_check *c, const char *file, int line)
{
    if (c->depth++ == 0) {
        __atomic_store_n(&c->owner, (const void *)&mine, __ATOMIC_RELAXED);
        c->file = file;
        c->line = line;
    }
}

static void released(struct lock_check *c, const char *name, const char *file, int line)
{
    if (!held(c) || c->depth <= 0) {
        char what[128];
        snprintf(what, sizeof(what), "releases the %s, which this thread does not hold", name);
        lock_broken(file, line, what, "only the thread that took a lock lets it go, once per take");
    }
    if (--c->depth == 0) {
        __atomic_store_n(&c->owner, NULL, __ATOMIC_RELAXED);
    }
}

/* Before blocking on the engine lock: a lane lock held makes it a deadlock with a quiet of all
 * contexts (engine held, waiting for that lane). Unlocked engine: no other thread may be in
 * it (the program did not ask for threads). */
static void engine_may_block(const char *file, int line)
{
    if (held(&pg.check)) {
        return; /* recursive: does not block */
    }
    if (mine.lanes > 0) {
        char what[192];
        snprintf(what, sizeof(what), "blocks on the engine lock while holding a lane lock (taken "
                 "at %s:%d)", base_name(mine.file), mine.line);
        lock_broken(file, line, what, "a thread holding a lane lock never blocks on the engine "
                    "lock: let the lane lock go first (held once), or trylock the engine");
    }
    if (!pg.locking && __atomic_load_n(&pg.check.owner, __ATOMIC_RELAXED)) {
        char what[192];
        snprintf(what, sizeof(what), "enters the engine while another thread is in it (since "
                 "%s:%d) and locking is off", base_name(pg.check.file), pg.check.line);
        lock_broken(file, line, what, "a second thread enters the library only after "
                    "fsh_progress_enable_locking (SHMEM_THREAD_MULTIPLE or the progress thread)");
    }
}

/* Locking becomes real: a logical holder now would unlock a mutex it never locked. */
static void locking_may_start(const char *file, int line)
{
    if (__atomic_load_n(&pg.check.owner, __ATOMIC_RELAXED)) {
        char what[192];
        snprintf(what, sizeof(what), "makes the engine lock real while it is held (since %s:%d)",
                 base_name(pg.check.file), pg.check.line);
        lock_broken(file, line, what, "fsh_progress_enable_locking is called with the engine "
                    "lock free, before a second thread enters the library");
    }
}

static void lane_may_block(struct fsh_lane *l, const char *file, int line)
{
    if (mine.lanes > 0 && !held(&l->check)) {
        char what[192];
        snprintf(what, sizeof(what), "blocks on a lane lock while holding another lane's (taken "
                 "at %s:%d)", base_name(mine.file), mine.line);
        lock_broken(file, line, what, "a thread holds one lane lock at a time");
    }
}

static void lane_took(struct fsh_lane *l, const char *file, int line)
{
    if (!held(&l->check)) {
        mine.lane = l;
        mine.file = file;
        mine.line = line;
    }
    took(&l->check, file, line);
    mine.lanes++;
}

static void lane_released(struct fsh_lane *l, const char *file, int line)
{
    released(&l->check, "lane lock", file, line);
    mine.lanes--;
}

void fsh_lock_expect(enum fsh_lock_expect what, const struct fsh_lane *l, const char *file,
                     int line, const char *func)
{
    char msg[256];
    switch (what) {
    case FSH_EXPECT_ENGINE:
        if (held(&pg.check)) {
            return;
        }
        snprintf(msg, sizeof(msg), "%s runs without the engine lock", func);
        lock_broken(file, line, msg, "the engine's state (records, tracks, CQ, handlers' state) "
                    "is touched only under the engine lock: fsh_progress_lock() first");
    case FSH_EXPECT_LANE:
    case FSH_EXPECT_LANE_ONCE:
        if (held(&l->check) && (what == FSH_EXPECT_LANE || l->check.depth == 1)) {
            return;
        }
        snprintf(msg, sizeof(msg), "%s runs %s", func, held(&l->check)
                 ? "with its lane's lock held more than once (it must let it go to wait)"
                 : "without its lane's lock");
        lock_broken(file, line, msg, what == FSH_EXPECT_LANE
                    ? "a lane's records, CQs and bounce slots are touched only under its lock"
                    : "a lane's post is called with its lock held exactly once, so that a "
                      "full queue's wait can let it go");
    case FSH_EXPECT_NO_LANE:
        if (mine.lanes == 0) {
            return;
        }
        snprintf(msg, sizeof(msg), "%s runs with a lane lock held (taken at %s:%d)", func,
                 base_name(mine.file), mine.line);
        lock_broken(file, line, msg, "no wait, probe or backoff starts with a lane lock held: it "
                    "may block on the engine lock, which a quiet of all contexts holds while it "
                    "waits for that lane");
    }
}
#define CHECK(stmt) stmt
#else
#define SITE
#define SITE0 void
#define CHECK(stmt) ((void)0)
#endif

/* The engine lock's take, trylock and release (real once locking is on). */
static void engine_lock(SITE0)
{
    CHECK(engine_may_block(file, line));
    if (pg.locking) {
        pthread_mutex_lock(&pg.lock);
    }
    CHECK(took(&pg.check, file, line));
}

/* Whether or not locking is real (a lane's poll tries the mutex itself either way). */
static bool engine_trylock(SITE0)
{
    if (pthread_mutex_trylock(&pg.lock) != 0) {
        return false;
    }
    CHECK(took(&pg.check, file, line));
    return true;
}

static void engine_unlock(bool real SITE)
{
    CHECK(released(&pg.check, "engine lock", file, line));
    if (real) {
        pthread_mutex_unlock(&pg.lock);
    }
}

static void lane_lock(struct fsh_lane *l SITE)
{
    CHECK(lane_may_block(l, file, line));
    pthread_mutex_lock(&l->lock);
    CHECK(lane_took(l, file, line));
}

static bool lane_trylock(struct fsh_lane *l SITE)
{
    if (pthread_mutex_trylock(&l->lock) != 0) {
        return false;
    }
    CHECK(lane_took(l, file, line));
    return true;
}

static void lane_unlock(struct fsh_lane *l SITE)
{
    CHECK(lane_released(l, file, line));
    pthread_mutex_unlock(&l->lock);
}

#ifdef FSH_DEBUG_BUILD
void fsh_progress_lock_at(const char *file, int line)
{
    engine_lock(file, line);
}

void fsh_progress_unlock_at(const char *file, int line)
{
    engine_unlock(pg.locking, file, line);
}

void fsh_lane_lock_at(struct fsh_lane *l, const char *file, int line)
{
    lane_lock(l, file, line);
}

void fsh_lane_unlock_at(struct fsh_lane *l, const char *file, int line)
{
    lane_unlock(l, file, line);
}
#define HERE , __FILE__, __LINE__
#define HERE0 __FILE__, __LINE__
#else
void fsh_progress_lock(void)
{
    engine_lock();
}

void fsh_progress_unlock(void)
{
    engine_unlock(pg.locking);
}

void fsh_lane_lock(struct fsh_lane *l)
{
    lane_lock(l);
}

void fsh_lane_unlock(struct fsh_lane *l)
{
    lane_unlock(l);
}
#define HERE
#define HERE0
#endif

/* The records a wait's reports look at: the lane's, or the engine's, locked by their lock
 * until records_done. */
static const struct fsh_op *records(struct fsh_lane *l, size_t *depth, size_t *in_use)
{
    if (l && !lane_trylock(l HERE)) {
        /* Its owner is posting (and may wait for the engine's lock, which this thread may
         * hold): the report goes without the lane's records. */
        *depth = *in_use = 0;
        return NULL;
    }
    if (!l) {
        fsh_progress_lock();
    }
    *depth = l ? l->depth : pg.depth;
    *in_use = l ? l->in_use : pg.in_use;
    return l ? l->pool : pg.pool;
}

static void records_done(struct fsh_lane *l, const struct fsh_op *ops)
{
    if (!l) {
        fsh_progress_unlock();
    } else if (ops) {
        fsh_lane_unlock(l);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double fsh_progress_now(void)
{
    return now();
}

uint64_t fsh_progress_random(void)
{
    FSH_ASSERT_ENGINE_HELD();
    /* xorshift64*: plenty for shuffling test traffic. */
    pg.rng ^= pg.rng >> 12;
    pg.rng ^= pg.rng << 25;
    pg.rng ^= pg.rng >> 27;
    return pg.rng * 2685821657736338717ULL;
}

int fsh_progress_init(const struct fsh_progress_config *cfg)
{
    pg.pool = calloc(cfg->depth, sizeof(*pg.pool));
    if (!pg.pool) {
        return fsh_err(-ENOMEM, "lower FABSHMEM_TX_DEPTH", "cannot allocate %zu operation records",
                       cfg->depth);
    }
    for (size_t i = 0; i < cfg->depth; i++) {
        pg.pool[i].next_free = (i + 1 < cfg->depth) ? &pg.pool[i + 1] : NULL;
    }
    pg.free = pg.pool;
    pg.depth = cfg->depth;
    pg.in_use = 0;
    pg.yield = cfg->yield;
    pg.timeout = cfg->timeout;
    pg.user_timeout = cfg->user_timeout;
    pg.failed = 0;
    pg.chaos_delay = cfg->chaos_delay;
    pg.wcount = fsh_fabric_counts_writes();
    pg.nrails = fsh_fabric_nrails();
    pg.count_writes = pg.wcount;
    pg.rng = cfg->seed * 0x9e3779b97f4a7c15ULL + 1;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&pg.lock, &attr);
    pthread_mutexattr_destroy(&attr);
    return 0;
}

void fsh_progress_fini(void)
{
    fsh_progress_thread_stop();
    pthread_mutex_destroy(&pg.lock);
    free(pg.pool);
    memset(&pg, 0, sizeof(pg));
}

int fsh_progress_register_imm(enum fsh_imm_kind kind, fsh_imm_handler fn)
{
    if (kind <= 0 || kind >= FSH_IMM_NKINDS || pg.handlers[kind]) {
        return fsh_err(-EINVAL, "", "immediate-data kind %d invalid or taken", kind);
    }
    pg.handlers[kind] = fn;
    return 0;
}

void fsh_progress_set_poll_hook(void (*fn)(void))
{
    pg.poll_hook = fn;
}

void fsh_progress_set_post_hook(enum fsh_post_hook which, int (*fn)(void))
{
    pg.post_hooks[which] = fn;
}

void fsh_progress_enable_locking(void)
{
    CHECK(locking_may_start(__FILE__, __LINE__));
    pg.locking = true;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case FSH_OP_PUT: return "put";
    case FSH_OP_GET: return "get";
    case FSH_OP_PUT_IMM: return "put with notification";
    case FSH_OP_ATOMIC: return "atomic";
    default: return "operation";
    }
}

/* Track counters are written under the engine lock and read without it by waiters. */
static void bump(uint64_t *counter)
{
    __atomic_store_n(counter, *counter + 1, __ATOMIC_RELEASE);
}

/* Our operation record, or NULL when the completion is someone else's: a remote event. */
static struct fsh_op *own_op(void *context)
{
    uintptr_t c = (uintptr_t)context, lo = (uintptr_t)pg.pool;
    if (c < lo || c >= lo + pg.depth * sizeof(struct fsh_op) || (c - lo) % sizeof(struct fsh_op)) {
        return NULL;
    }
    return context;
}

/* The operation is done: its result copied out, its tracks counted. */
static void finish(struct fsh_op *op)
{
    if (op->copy_dst) {
        memcpy(op->copy_dst, op->copy_src, op->copy_len);
    }
    /* Release: whoever sees the new count also sees the copied result. */
    bump(&op->track->completed);
    if (op->sync) {
        bump(&op->sync->completed);
    }
}

static void complete(struct fsh_op *op)
{
    if (op->orphan) {
        fsh_progress_op_put(op); /* its work was re-posted under another record */
        return;
    }
    if (op->kind == 0) {
        /* A record that is not in flight: the provider reported a completion twice. Taking
         * it would put the record on the free list twice and cross two operations' results. */
        FSH_ERROR("provider %s reported a second completion for operation record %zu; ignored",
                  fsh_fabric_attr()->prov, fsh_progress_op_index(op));
        return;
    }
    finish(op);
    fsh_progress_op_put(op);
}

void fsh_progress_op_complete(struct fsh_op *op)
{
    FSH_ASSERT_ENGINE_HELD();
    complete(op);
}

void fsh_progress_op_posted(struct fsh_op *op, struct fsh_op_track *counted, bool write)
{
    if (!op || own_op(op)) {
        FSH_ASSERT_ENGINE_HELD(); /* a lane's record: its lane's lock (lane_op_put checks) */
    }
    if (write && pg.wcount) {
        pg.wposted++;
    }
    if (!op) {
        __atomic_store_n(&counted->wmark, pg.wposted, __ATOMIC_RELEASE);
        return;
    }
    bump(&op->track->posted);
    if (op->sync) {
        bump(&op->sync->posted);
    }
}

static void lane_op_put(struct fsh_lane *l, struct fsh_op *op);

/* Back to its free list: op's record, of lane l or (NULL) the engine's. */
static void put_back(struct fsh_lane *l, struct fsh_op *op)
{
    if (l) {
        lane_op_put(l, op);
    } else {
        fsh_progress_op_put(op);
    }
}

/* op failed: counted complete (waiters see the error, not a hang), no result copied. */
static void drop(struct fsh_lane *l, struct fsh_op *op)
{
    op->copy_dst = NULL;
    if (l) {
        finish(op);
        lane_op_put(l, op);
    } else {
        complete(op);
    }
}

void fsh_progress_op_unissued(struct fsh_op *op, bool write)
{
    FSH_ASSERT_ENGINE_HELD();
    if (write && pg.wcount) {
        pg.wdead++;
    }
    if (op) {
        drop(NULL, op);
    }
}

bool fsh_progress_counts_writes(void)
{
    return pg.count_writes;
}

void fsh_progress_stop_counting_writes(void)
{
    pg.count_writes = false;
}

/* Has every write up to mark completed? Read under the engine lock, where nothing is posted:
 * completed + failed + never issued == posted means all writes posted so far are done (they
 * complete in any order, so fewer than that says nothing about any one of them). A failure
 * is recorded: the waits then end with it. */
static bool writes_done(uint64_t mark)
{
    if (mark <= __atomic_load_n(&pg.wdrained, __ATOMIC_ACQUIRE)) {
        return true;
    }
    fsh_progress_lock();
    uint64_t posted = pg.wposted;
    uint64_t done, failed;
    fsh_fabric_writes(&done, &failed);
    if (failed > pg.werr) {
        pg.failed = 1;
        fsh_err(-EIO, "the peer PE may have died or become unreachable; see its messages and the launcher's",
                "%llu put(s) counted without a completion entry failed on provider %s (the "
                "target PE is not known: set FABSHMEM_PUT_COUNTER=0 to have every put reported "
                "with its PE)", (unsigned long long)(failed - pg.werr), fsh_fabric_attr()->prov);
        pg.werr = failed;
    }
    if (done + failed + pg.wdead >= posted) {
        __atomic_store_n(&pg.wdrained, posted, __ATOMIC_RELEASE);
    }
    fsh_progress_unlock();
    return mark <= __atomic_load_n(&pg.wdrained, __ATOMIC_ACQUIRE);
}

/* Errors that say the way failed (a connection or a link), not the operation: a bad key or a
 * length the target refuses (FI_EACCES, FI_EINVAL, ...) would fail on every rail, and trying
 * another would hide it. FI_ECANCELED counts too: fabshmem never cancels an operation, so one
 * canceled is one the provider dropped with its connection (tcp;ofi_rxm cancels what is in
 * flight on a reset connection: "Operation canceled (Transport endpoint is not connected)"). */
static bool transport_failed(int err)
{
    switch (err) {
    case FI_ECANCELED:
    case FI_EIO:
    case FI_ENOTCONN:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ECONNREFUSED:
    case FI_ETIMEDOUT:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ENETDOWN:
    case EPIPE:
    case EHOSTDOWN:
        return true;
    default:
        return false;
    }
}

/* Record the failure of op (what the provider's error entry e says) and return it. */
static int op_failed(const struct fsh_op *op, const struct fi_cq_err_entry *e, const char *prov)
{
    return fsh_err(-(int)e->err, "the peer PE may have died or become unreachable; see its messages and the launcher's",
                   "%s of %zu bytes to PE %d failed: %s (%s)", kind_name(op->kind), op->len,
                   op->pe, fi_strerror((int)e->err), prov ? prov : "");
}

/* Read the error entry at the head of cq into e, and the provider's words for it into buf
 * (*prov). fi_cq_readerr's result: < 0 when there was none to read. */
static ssize_t read_error(struct fid_cq *cq, struct fi_cq_err_entry *e, char *buf, size_t len,
                          const char **prov)
{
    memset(e, 0, sizeof(*e));
    ssize_t rc = fi_cq_readerr(cq, e, 0);
    if (rc >= 0) {
        *prov = fi_cq_strerror(cq, e->prov_errno, e->err_data, buf, len);
    }
    return rc;
}

/* The error entry e of op, a record of lane l (NULL: the engine's): an orphan's is no news; a
 * way's failure (several ways to its PE) goes to the way hook, which posts again what was in
 * flight on it; anything else fails the operation. */
static int op_error(struct fsh_lane *l, struct fsh_op *op, const struct fi_cq_err_entry *e,
                    const char *prov)
{
    if (op->orphan) {
        put_back(l, op); /* re-posted elsewhere: its failure is no news */
        return 0;
    }
    if (pg.way_hook && fsh_fabric_ways(op->pe) > 1 && transport_failed((int)e->err)) {
        char why[320];
        snprintf(why, sizeof(why), "failed a %s of %zu bytes to it%s (%s; %s)",
                 kind_name(op->kind), op->len, l ? " from a context's endpoint" : "",
                 fi_strerror((int)e->err), prov ? prov : "");
        if (l) {
            FSH_ASSERT_LANE_HELD(l);
        } else {
            FSH_ASSERT_ENGINE_HELD();
        }
        int hrc = pg.way_hook(l, op->pe, op->way, why);
        if (hrc == 0 && op->orphan) {
            put_back(l, op); /* the provider is done with it, and it went again */
            return 0;
        }
        if (hrc != 0) {
            pg.failed = 1;
            drop(l, op);
            return hrc;
        }
    }
    pg.failed = 1;
    int err = op_failed(op, e, prov);
    drop(l, op);
    return err;
}

static int report_error(int rail)
{
    struct fi_cq_err_entry e;
    char provbuf[256];
    const char *prov = NULL;
    ssize_t rc = read_error(fsh_fabric_cq(rail), &e, provbuf, sizeof(provbuf), &prov);
    if (rc < 0) {
        return (rc == -FI_EAGAIN) ? 0 : (int)rc;
    }
    struct fsh_op *op = own_op(e.op_context);
    if (op) {
        return op_error(NULL, op, &e, prov);
    }
    pg.failed = 1;
    return fsh_err(-(int)e.err, "a peer PE may have died; see its messages and the launcher's",
                   "a remote operation aimed at this PE failed: %s (%s)", fi_strerror((int)e.err),
                   prov ? prov : "");
}

static void dispatch(const struct fi_cq_data_entry *ev)
{
    struct fsh_op *op = own_op(ev->op_context);
    if (op) {
        complete(op);
        return;
    }
    if (ev->flags & FI_REMOTE_CQ_DATA) {
        uint32_t imm = (uint32_t)ev->data;
        unsigned kind = imm >> FSH_IMM_KIND_SHIFT;
        if (kind < FSH_IMM_NKINDS && pg.handlers[kind]) {
            pg.handlers[kind](imm & FSH_IMM_PAYLOAD_MASK, (uint32_t)(ev->data >> 32));
        } else {
            FSH_WARN("remote event with unknown kind %u (immediate 0x%08x) dropped", kind, imm);
        }
    }
}

/* Chaos: keep what was read, hand out a random part of what is held. */
static int dispatch_shuffled(const struct fi_cq_data_entry *ev, ssize_t n)
{
    int handled = 0;
    for (ssize_t i = 0; i < n; i++) {
        if (pg.nheld == HOLD_MAX) {
            size_t k = (size_t)(fsh_progress_random() % pg.nheld);
            struct fi_cq_data_entry e = pg.held[k];
            pg.held[k] = pg.held[--pg.nheld];
            dispatch(&e);
            handled++;
        }
        pg.held[pg.nheld++] = ev[i];
    }
    /* Release about half of what is held, in random order; an idle poll releases everything
     * so nothing is held forever. */
    size_t release = (n == 0) ? pg.nheld : pg.nheld / 2 + (size_t)(fsh_progress_random() % 2);
    while (release-- && pg.nheld) {
        size_t k = (size_t)(fsh_progress_random() % pg.nheld);
        struct fi_cq_data_entry e = pg.held[k];
        pg.held[k] = pg.held[--pg.nheld];
        dispatch(&e);
        handled++;
    }
    return handled;
}

/* A way died since l (NULL: the engine) last looked (another lane's failure, a probe): its hook
 * posts again what l had in flight there. 0, or the error to report. */
static int sweep(struct fsh_lane *l)
{
    if (!pg.way_hook) {
        return 0;
    }
    if (l) {
        FSH_ASSERT_LANE_HELD(l);
    } else {
        FSH_ASSERT_ENGINE_HELD();
    }
    unsigned *seen = l ? &l->deaths : &pg.deaths;
    unsigned now_dead = fsh_fabric_deaths();
    if (now_dead == *seen) {
        return 0;
    }
    *seen = now_dead;
    return pg.way_hook(l, -1, 0, NULL);
}

/* Under the engine lock and no lane lock: what a poll runs may post on the engine's path (the
 * poll hook, the way hook's sweep, the post hooks), and a post that finds the queue full backs
 * off, which must not start with a lane lock held. */
static int poll_locked(void)
{
    FSH_ASSERT_ENGINE_HELD();
    FSH_ASSERT_NO_LANE_HELD();
    if (pg.heartbeat) {
        __atomic_store_n(pg.heartbeat, *pg.heartbeat + 1, __ATOMIC_RELAXED);
    }
    if (pg.poll_hook) {
        pg.poll_hook();
    }
    int swept = sweep(NULL);
    if (swept < 0) {
        return swept;
    }
    /* Every rail's CQ; an error entry is read after what the others brought is handled. */
    struct fi_cq_data_entry ev[16 * FSH_MAX_RAILS];
    ssize_t n = 0;
    int err_rail = -1;
    for (int r = 0; r < pg.nrails; r++) {
        ssize_t got = fi_cq_read(fsh_fabric_cq(r), ev + n, 16);
        if (got == -FI_EAVAIL) {
            err_rail = err_rail < 0 ? r : err_rail;
        } else if (got < 0 && got != -FI_EAGAIN) {
            pg.failed = 1;
            return fsh_err((int)got, "", "reading the completion queue of rail %s failed: %s",
                           fsh_fabric_rail_name(r), fi_strerror((int)-got));
        } else if (got > 0) {
            n += got;
        }
    }
    pg.events += (uint64_t)n;
    int handled = (int)n;
    if (pg.chaos_delay) {
        handled = dispatch_shuffled(ev, n);
    } else {
        for (ssize_t i = 0; i < n; i++) {
            dispatch(&ev[i]);
        }
    }
    if (err_rail >= 0) {
        return report_error(err_rail);
    }
    for (int h = 0; h < FSH_POST_NHOOKS; h++) {
        int rc = pg.post_hooks[h] ? pg.post_hooks[h]() : 0;
        if (rc < 0) {
            return rc;
        }
    }
    if (!pg.chaos_delay && n == 0 && pg.failed) {
        return -EIO;
    }
    return handled;
}

int fsh_progress_poll(void)
{
    fsh_progress_lock();
    int n = poll_locked();
    fsh_progress_unlock();
    return n;
}

/* " (to PE a, PE b, ...)": the peers of the operations in flight, for a report that names no
 * peer of its own (a wait for completions). */
static void inflight_peers(const struct fsh_op *ops, size_t depth, char *buf, size_t len)
{
    int seen[4], n = 0;
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < depth && n < 4; i++) {
        int pe = ops[i].kind ? ops[i].pe : -1;
        bool dup = pe < 0;
        for (int j = 0; j < n && !dup; j++) {
            dup = seen[j] == pe;
        }
        if (!dup && at < len) {
            at += (size_t)snprintf(buf + at, len - at, "%sPE %d", n ? ", " : " (to ", pe);
            seen[n++] = pe;
        }
    }
    if (n && at < len) {
        snprintf(buf + at, len - at, ")");
    }
}

void fsh_progress_set_probe(fsh_probe_fn fn, double interval)
{
    pg.probe = fn;
    pg.probe_interval = interval;
}

int fsh_progress_set_way_hook(fsh_way_fn fn, size_t lane_keep)
{
    /* Lanes opened before (at init, published: efa-direct) get their keep space now. */
    fsh_progress_lock();
    int rc = 0;
    for (struct fsh_lane *l = lanes_open; l && rc == 0; l = l->next) {
        free(l->keep);
        l->keep = calloc(l->depth, lane_keep);
        rc = l->keep ? 0 : fsh_err(-ENOMEM, "set FABSHMEM_CTX_ENDPOINTS=0, or FABSHMEM_RAILS=1",
                                   "out of memory for the copies of a context's requests "
                                   "(multi-rail)");
    }
    pg.way_hook = fn;
    pg.lane_keep = lane_keep;
    fsh_progress_unlock();
    return rc;
}

void fsh_progress_set_heartbeat(uint64_t *word)
{
    pg.heartbeat = word;
}

uint64_t fsh_progress_events(void)
{
    FSH_ASSERT_ENGINE_HELD();
    return pg.events;
}

bool fsh_progress_serves(void)
{
    return pg.thread_running || !fsh_fabric_attr()->manual_progress;
}

/* The peers a wait depends on: its own, else those of the operations in flight (distinct, at
 * most max), else none (the probe then covers every PE). */
static int wait_peers(struct fsh_lane *l, int peer, int *pes, int max)
{
    if (peer >= 0) {
        pes[0] = peer;
        return 1;
    }
    int n = 0;
    size_t depth, in_use;
    const struct fsh_op *ops = records(l, &depth, &in_use);
    for (size_t i = 0; i < depth && n < max; i++) {
        int pe = ops[i].kind ? ops[i].pe : -1;
        bool dup = pe < 0;
        for (int j = 0; j < n && !dup; j++) {
            dup = pes[j] == pe;
        }
        if (!dup) {
            pes[n++] = pe;
        }
    }
    records_done(l, ops);
    return n;
}

/* Once the wait has lasted a probe interval, and every interval after, have its peers probed.
 * A peer found gone ends the wait, unless what it was waited for landed meanwhile: the probe
 * may race with the peer's last writes, so the CQ is drained (an idle poll also releases what
 * chaos holds back) and done() asked once more. */
static int probe(struct fsh_lane *l, struct fsh_wait_clock *c, double t, bool arrival,
                 const char *what, int peer, fsh_done_fn done, const void *arg)
{
    if (!pg.probe || pg.probe_interval <= 0 || t - c->probed < pg.probe_interval) {
        return 0;
    }
    c->probed = t;
    int pes[16];
    int n = wait_peers(l, peer, pes, 16);
    int rc = pg.probe(pes, n, arrival, what);
    if (rc == 0 || !done) {
        return rc;
    }
    for (int i = 0; i < 8 && fsh_progress_poll() > 0; i++) {
    }
    if (done(arg)) {
        fsh_err_clear();
        return 0;
    }
    return rc;
}

static int backoff(struct fsh_lane *l, struct fsh_wait_clock *c, double timeout,
                   const char *what, int peer)
{
    if (c->start == 0) {
        c->start = c->probed = now();
        return 0;
    }
    if (pg.yield) {
        sched_yield();
    }
    if (timeout > 0 && now() - c->start > timeout) {
        char who[32] = "", to[64] = "";
        size_t depth, in_use;
        const struct fsh_op *ops = records(l, &depth, &in_use);
        if (peer >= 0) {
            snprintf(who, sizeof(who), " for PE %d", peer);
        } else {
            inflight_peers(ops, depth, to, sizeof(to));
        }
        records_done(l, ops);
        return fsh_err(-ETIMEDOUT,
                       "a peer may be stuck or dead, or never entering the matching call; raise the timeout (FABSHMEM_TIMEOUT, FABSHMEM_WAIT_TIMEOUT for user waits) if the work is just slow",
                       "%s: waited %.0f s%s with %llu operation(s) in flight%s and no end in sight",
                       what, timeout, who, (unsigned long long)in_use, to);
    }
    return 0;
}

int fsh_progress_backoff(struct fsh_wait_clock *c, const char *what, int peer)
{
    FSH_ASSERT_NO_LANE_HELD();
    int rc = backoff(NULL, c, pg.timeout, what, peer);
    return rc ? rc : probe(NULL, c, now(), false, what, peer, NULL, NULL);
}

static __thread struct fsh_wait_now wait_now;
static void (*wait_end)(void); /* live.c: a published wait ended */

struct fsh_wait_now *fsh_progress_wait_now(void)
{
    return &wait_now;
}

void fsh_progress_set_wait_end(void (*fn)(void))
{
    wait_end = fn;
}

bool fsh_progress_ops_in_flight(const struct fsh_op_track *ignore)
{
    fsh_progress_lock();
    bool any = pg.nheld > 0 || !writes_done(pg.wposted);
    for (size_t i = 0; i < pg.depth && !any; i++) {
        any = pg.pool[i].kind != 0 && pg.pool[i].track != ignore;
    }
    for (struct fsh_lane *l = lanes_open; l && !any; l = l->next) {
        if (pthread_mutex_trylock(&l->lock) != 0) {
            any = true;
            break;
        }
        for (size_t i = 0; i < l->depth && !any; i++) {
            any = l->pool[i].kind != 0 && l->pool[i].track != ignore;
        }
        pthread_mutex_unlock(&l->lock);
    }
    fsh_progress_unlock();
    return any;
}

static int wait_loop(struct fsh_lane *l, fsh_done_fn done, const void *arg, const char *what,
                     int peer, double timeout, bool arrival);
static int lane_and_engine_poll(struct fsh_lane *l);

/* Every wait, as the outermost of this thread or nested in one (a done() that waits itself).
 * Only the outermost is what the thread waits in, for the deadlock check (live.c). */
static int wait_impl(struct fsh_lane *l, fsh_done_fn done, const void *arg, const char *what,
                     int peer, double timeout, bool arrival)
{
    FSH_ASSERT_NO_LANE_HELD();
    struct fsh_wait_now *w = &wait_now;
    if (w->depth++ == 0) {
        w->what = what;
        w->peer = peer;
        w->published = false;
    }
    int rc = wait_loop(l, done, arg, what, peer, timeout, arrival);
    if (--w->depth == 0) {
        if (w->published && wait_end) {
            wait_end();
        }
        w->published = false;
        w->watch = NULL;
        w->watch_len = 0;
        w->open_ended = false;
    }
    return rc;
}

/* l: a lane's wait, which polls the lane and, when nobody else holds it, the engine. */
static int wait_loop(struct fsh_lane *l, fsh_done_fn done, const void *arg, const char *what,
                     int peer, double timeout, bool arrival)
{
    struct fsh_wait_clock c = {0, 0};
    unsigned idle = 0;
    for (;;) {
        int n = l ? lane_and_engine_poll(l) : fsh_progress_poll();
        if (n < 0) {
            return n;
        }
        if (done(arg)) {
            return 0;
        }
        if (n > 0) {
            idle = 0;
            continue;
        }
        /* Check the clock (and yield) only every so often: clock_gettime is not free. */
        if (++idle % 64 == 0 || pg.yield) {
            int rc = backoff(l, &c, timeout, what, peer);
            if (rc == 0) {
                rc = probe(l, &c, now(), arrival, what, peer, done, arg);
            }
            if (rc != 0) {
                return rc;
            }
        }
    }
}

int fsh_progress_wait(fsh_done_fn done, const void *arg, const char *what, int peer)
{
    return wait_impl(NULL, done, arg, what, peer, pg.timeout, false);
}

int fsh_progress_wait_user(fsh_done_fn done, const void *arg, const char *what, int peer)
{
    return wait_impl(NULL, done, arg, what, peer, pg.user_timeout, false);
}

int fsh_progress_wait_arrival(fsh_done_fn done, const void *arg, const char *what, int peer)
{
    return wait_impl(NULL, done, arg, what, peer, pg.timeout, true);
}

int fsh_progress_wait_watched(fsh_done_fn done, const void *arg, const char *what,
                              const void *watch, size_t len)
{
    if (wait_now.depth == 0) {
        wait_now.watch = watch;
        wait_now.watch_len = len;
        wait_now.open_ended = watch == NULL;
    }
    return wait_impl(NULL, done, arg, what, -1, pg.user_timeout, false);
}

bool fsh_progress_track_idle_to(const struct fsh_op_track *t, const bool *pes)
{
    bool idle = true;
    fsh_progress_lock();
    for (size_t i = 0; i < pg.depth && idle; i++) {
        const struct fsh_op *op = &pg.pool[i];
        idle = !(op->kind && op->track == t && pes[op->pe]);
    }
    fsh_progress_unlock();
    /* Counted puts carry no PE: all of the track's must be done. */
    return idle && writes_done(__atomic_load_n(&t->wmark, __ATOMIC_ACQUIRE));
}

bool fsh_progress_track_done(const struct fsh_op_track *t)
{
    return __atomic_load_n(&t->completed, __ATOMIC_ACQUIRE) ==
               __atomic_load_n(&t->posted, __ATOMIC_ACQUIRE) &&
           writes_done(__atomic_load_n(&t->wmark, __ATOMIC_ACQUIRE));
}

static bool track_done(const void *arg)
{
    return fsh_progress_track_done(arg);
}

int fsh_progress_wait_track(const struct fsh_op_track *t, const char *what)
{
    FSH_ASSERT_NO_LANE_HELD();
    if (fsh_progress_track_done(t)) {
        return pg.failed ? -EIO : 0;
    }
    return fsh_progress_wait(track_done, t, what, -1);
}

static bool pool_available(const void *arg)
{
    return pg.free != NULL;
}

/* A record taken from a free list, made ready for an operation of kind to pe. */
static void op_init(struct fsh_op *op, int kind, int pe, size_t len)
{
    op->kind = kind;
    op->pe = pe;
    op->len = len;
    op->sync = NULL;
    op->tmp_mr = NULL;
    op->bounce = NULL;
    op->copy_dst = NULL;
    op->way = 0;
    op->orphan = false;
}

struct fsh_op *fsh_progress_op_get(int kind, int pe, size_t len)
{
    FSH_ASSERT_ENGINE_HELD();
    if (!pg.free && fsh_progress_wait(pool_available, NULL, "waiting for a free operation slot", pe) != 0) {
        return NULL;
    }
    struct fsh_op *op = pg.free;
    pg.free = op->next_free;
    pg.in_use++;
    op_init(op, kind, pe, len);
    return op;
}

void fsh_progress_op_put(struct fsh_op *op)
{
    FSH_ASSERT_ENGINE_HELD();
    if (op->tmp_mr) {
        fsh_mr_release(op->tmp_mr);
        op->tmp_mr = NULL;
    }
    if (op->bounce) {
        fsh_progress_bounce_give(op->bounce);
        op->bounce = NULL;
    }
    op->kind = 0; /* not in flight */
    op->next_free = pg.free;
    pg.free = op;
    pg.in_use--;
}

/* ------------------------------------------------------------ bounce slots
 *
 * The engine's (bb) are taken and given back under the engine lock (posts and completions
 * hold it); a lane's under the lane's lock. */
static struct bounce bb;

static void bounce_fini(struct bounce *b)
{
    if (b->set) {
        fsh_mr_dereg_local(b->set);
    }
    free(b->free);
    free(b->base);
    memset(b, 0, sizeof(*b));
}

static int bounce_init(struct bounce *b, size_t size, size_t n)
{
    size = (size + 63) & ~(size_t)63;
    void *base = NULL;
    if (posix_memalign(&base, 4096, size * n) != 0) {
        return fsh_err(-ENOMEM, "set FABSHMEM_BOUNCE_SIZE=0, or lower FABSHMEM_BOUNCE_SLOTS",
                       "cannot allocate %zu bounce slots of %zu bytes", n, size);
    }
    b->base = base;
    b->free = calloc(n, sizeof(*b->free));
    int rc = b->free ? fsh_mr_reg_local(base, size * n, &b->set)
                     : fsh_err(-ENOMEM, "set FABSHMEM_BOUNCE_SIZE=0", "out of memory for the "
                               "bounce slots' list");
    if (rc != 0) {
        bounce_fini(b);
        return rc;
    }
    b->size = size;
    b->n = n;
    for (size_t i = 0; i < n; i++) {
        b->free[i] = b->base + (n - 1 - i) * size;
    }
    b->nfree = n;
    return 0;
}

static void *bounce_take(struct bounce *b, size_t len)
{
    return len > b->size || b->nfree == 0 ? NULL : b->free[--b->nfree];
}

static void bounce_give(struct bounce *b, void *slot)
{
    b->free[b->nfree++] = slot;
}

static bool bounce_owns(const struct bounce *b, const void *p)
{
    const uint8_t *q = p;
    return b->base && q >= b->base && q < b->base + b->size * b->n;
}

int fsh_progress_bounce_init(size_t size, size_t n)
{
    return bounce_init(&bb, size, n);
}

void fsh_progress_bounce_fini(void)
{
    bounce_fini(&bb);
}

void *fsh_progress_bounce_take(size_t len)
{
    FSH_ASSERT_ENGINE_HELD();
    return bounce_take(&bb, len);
}

void fsh_progress_bounce_give(void *slot)
{
    FSH_ASSERT_ENGINE_HELD();
    bounce_give(&bb, slot);
}

bool fsh_progress_bounce_owns(const void *p)
{
    return bounce_owns(&bb, p);
}

void *fsh_progress_bounce_desc(int rail)
{
    return fsh_mr_set_desc(bb.set, rail);
}

size_t fsh_progress_op_index(const struct fsh_op *op)
{
    return (size_t)(op - pg.pool);
}

struct fsh_op *fsh_progress_op_at(size_t i)
{
    return &pg.pool[i];
}

size_t fsh_progress_depth(void)
{
    return pg.depth;
}

/* ------------------------------------------------------------------ lanes */

static void lane_free(struct fsh_lane *l)
{
    for (int r = 0; r < l->nrails; r++) {
        fsh_fabric_lane_close(l->ep[r], l->cq[r]);
    }
    bounce_fini(&l->bb);
    free(l->keep);
    free(l->scratch);
    free(l->pool);
    free(l);
}

int fsh_lane_open(struct fsh_lane **out)
{
    *out = NULL;
    struct fsh_lane *l = calloc(1, sizeof(*l));
    size_t depth = pg.depth;
    if (l) {
        l->pool = calloc(depth, sizeof(*l->pool));
        l->scratch = calloc(depth, FSH_LANE_SCRATCH);
        l->keep = pg.lane_keep ? calloc(depth, pg.lane_keep) : NULL;
    }
    if (!l || !l->pool || !l->scratch || (pg.lane_keep && !l->keep)) {
        if (l) {
            lane_free(l);
        }
        return fsh_err(-ENOMEM, "destroy contexts no longer needed, or set FABSHMEM_CTX_ENDPOINTS=0",
                       "cannot allocate %zu operation records for a context's endpoint", depth);
    }
    /* An endpoint on every rail: an operation goes on the rail of its way to the peer, and
     * when a way dies, again on another (the lane's hook), all under the lane's lock. */
    for (; l->nrails < pg.nrails; l->nrails++) {
        int r = l->nrails;
        int rc = fsh_fabric_lane_open(r, &l->ep[r], &l->cq[r], depth);
        if (rc != 0) {
            lane_free(l);
            return rc;
        }
    }
    for (size_t i = 0; i < depth; i++) {
        l->pool[i].next_free = i + 1 < depth ? &l->pool[i + 1] : NULL;
    }
    l->free = l->pool;
    l->depth = depth;
    l->deaths = fsh_fabric_deaths();
    /* Recursive: a post that finds the provider's queue full polls the lane it holds. */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&l->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    fsh_progress_lock();
    l->next = lanes_open;
    __atomic_store_n(&lanes_open, l, __ATOMIC_RELAXED);
    fsh_progress_unlock();
    *out = l;
    return 0;
}

void fsh_lane_close(struct fsh_lane *l)
{
    if (!l) {
        return;
    }
    fsh_progress_lock(); /* the progress thread polls the list under it */
    for (struct fsh_lane **p = &lanes_open; *p; p = &(*p)->next) {
        if (*p == l) {
            __atomic_store_n(p, l->next, __ATOMIC_RELAXED);
            break;
        }
    }
    fsh_progress_unlock();
    pthread_mutex_destroy(&l->lock);
    lane_free(l);
}

struct fid_ep *fsh_lane_ep(const struct fsh_lane *l, int rail)
{
    return l->ep[rail];
}

void *fsh_lane_keep(struct fsh_lane *l, const struct fsh_op *op)
{
    return l->keep + (size_t)(op - l->pool) * pg.lane_keep;
}

size_t fsh_lane_depth(const struct fsh_lane *l)
{
    return l->depth;
}

struct fsh_op *fsh_lane_op_at(struct fsh_lane *l, size_t i)
{
    return &l->pool[i];
}

void *fsh_lane_bounce_take(struct fsh_lane *l, size_t len)
{
    FSH_ASSERT_LANE_HELD(l);
    if (!l->bb_tried && bb.size > 0) {
        /* The engine's slot size, fewer slots: made once, registered outside the engine lock
         * (the domain is thread-safe where lanes exist). */
        l->bb_tried = true;
        size_t n = bb.n < FSH_LANE_BOUNCE_SLOTS ? bb.n : FSH_LANE_BOUNCE_SLOTS;
        if (bounce_init(&l->bb, bb.size, n) != 0) {
            FSH_DEBUG("a context's endpoint without bounce slots: %s",
                      fsh_err_last() ? fsh_err_last()->msg : "");
            fsh_err_clear();
        }
    }
    return bounce_take(&l->bb, len);
}

void fsh_lane_bounce_give(struct fsh_lane *l, void *slot)
{
    FSH_ASSERT_LANE_HELD(l);
    bounce_give(&l->bb, slot);
}

bool fsh_lane_bounce_owns(const struct fsh_lane *l, const void *p)
{
    return bounce_owns(&l->bb, p);
}

void *fsh_lane_bounce_desc(const struct fsh_lane *l, int rail)
{
    return fsh_mr_set_desc(l->bb.set, rail);
}

void *fsh_lane_scratch(struct fsh_lane *l, const struct fsh_op *op)
{
    return l->scratch + (size_t)(op - l->pool) * FSH_LANE_SCRATCH;
}

static void lane_op_put(struct fsh_lane *l, struct fsh_op *op)
{
    FSH_ASSERT_LANE_HELD(l);
    if (op->bounce) {
        bounce_give(&l->bb, op->bounce);
        op->bounce = NULL;
    }
    op->kind = 0;
    op->next_free = l->free;
    l->free = op;
    l->in_use--;
}

/* The error entry at the head of the lane's CQ of rail r (op_error). */
static int lane_error(struct fsh_lane *l, int r)
{
    struct fi_cq_err_entry e;
    char provbuf[256];
    const char *prov = NULL;
    if (read_error(l->cq[r], &e, provbuf, sizeof(provbuf), &prov) < 0) {
        pg.failed = 1;
        return -EIO;
    }
    return op_error(l, e.op_context, &e, prov);
}

/* Read the lane's CQs once and complete what they brought. Caller holds the lane's lock. */
static int lane_poll_locked(struct fsh_lane *l)
{
    FSH_ASSERT_LANE_HELD(l);
    int n = sweep(l);
    for (int r = 0; r < l->nrails && n >= 0; r++) {
        struct fi_cq_data_entry ev[16];
        ssize_t got = fi_cq_read(l->cq[r], ev, 16);
        for (ssize_t i = 0; i < got; i++) {
            struct fsh_op *op = ev[i].op_context;
            if (op->kind == 0) {
                FSH_ERROR("provider %s reported a second completion for a context's operation; ignored",
                          fsh_fabric_attr()->prov);
                continue;
            }
            if (!op->orphan) {
                finish(op);
            }
            lane_op_put(l, op);
        }
        if (got > 0) {
            n += (int)got;
        } else if (got == -FI_EAVAIL) {
            int err = lane_error(l, r);
            n = err < 0 ? err : n;
        } else if (got != -FI_EAGAIN) {
            pg.failed = 1;
            n = fsh_err((int)got, "", "reading a context's completion queue failed: %s",
                        fi_strerror((int)-got));
        }
    }
    return n;
}

/* Never blocks on the lane's lock: its owner may be posting and waiting for the engine's
 * lock, which a waiter here may hold (quiet of all contexts); then the owner reads the queue.
 * Called with no lane lock held, so the lane's own hook (a way died: its records posted again,
 * which may wait for a record or back off) runs with the lane held once and can let it go. */
static int lane_poll(struct fsh_lane *l)
{
    FSH_ASSERT_NO_LANE_HELD();
    if (!lane_trylock(l HERE)) {
        return 0;
    }
    int n = lane_poll_locked(l);
    fsh_lane_unlock(l);
    return n;
}

/* A lane's wait polls the lane, and the engine too when no other thread holds it: with manual
 * progress nothing aimed at this PE moves otherwise, and a peer may be waiting for that. No
 * lane lock is held: the engine's poll posts (its post hooks: amo.c's answers, the session
 * batches; the chaos releases; posts again after a way died), and a post may back off. */
static int lane_and_engine_poll(struct fsh_lane *l)
{
    int n = lane_poll(l);
    if (n < 0) {
        return n;
    }
    if (engine_trylock(HERE0)) {
        int m = poll_locked();
        engine_unlock(true HERE);
        if (m < 0) {
            return m;
        }
        n += m;
    }
    return pg.failed && n == 0 ? -EIO : n;
}

/* A lane's post found the provider's queue full (xport.c): the caller holds the lane's lock
 * once, and lets it go for the poll, so that what the engine's poll posts never runs under it
 * (the lock contract); the lane is the caller's again on return. */
int fsh_lane_poll(struct fsh_lane *l)
{
    FSH_ASSERT_LANE_ONCE(l);
    fsh_lane_unlock(l);
    int n = lane_and_engine_poll(l);
    fsh_lane_lock(l);
    return n;
}

/* The progress thread's share of the lanes: what their owners posted moves while they compute
 * (the spec's progress without calls), without ever waiting for an owner's lock. */
static int poll_lanes(void)
{
    int n = 0;
    fsh_progress_lock();
    for (struct fsh_lane *l = lanes_open; l && n >= 0; l = l->next) {
        int m = lane_poll(l);
        n = m < 0 ? m : n + m;
    }
    fsh_progress_unlock();
    return n;
}

static bool lane_available(const void *arg)
{
    struct fsh_lane *l = (struct fsh_lane *)arg;
    /* The progress thread gives records back too: read under the lock, never wait for it. */
    if (!lane_trylock(l HERE)) {
        return false;
    }
    bool any = l->free != NULL;
    fsh_lane_unlock(l);
    return any;
}

struct fsh_op *fsh_lane_op_get(struct fsh_lane *l, int kind, int pe, size_t len)
{
    FSH_ASSERT_LANE_HELD(l);
    while (!l->free) {
        /* Wait without the lock, for the other waits on the lane. */
        fsh_lane_unlock(l);
        int rc = wait_impl(l, lane_available, l, "waiting for a free operation slot of a context",
                           pe, pg.timeout, false);
        fsh_lane_lock(l);
        if (rc != 0) {
            return NULL;
        }
    }
    struct fsh_op *op = l->free;
    l->free = op->next_free;
    l->in_use++;
    op_init(op, kind, pe, len);
    return op;
}

void fsh_lane_op_unposted(struct fsh_lane *l, struct fsh_op *op)
{
    lane_op_put(l, op);
}

/* The engine's test: a lane's tracks carry no write mark (nothing on a lane is counted), so
 * it compares posted and completed. */
int fsh_lane_wait_track(struct fsh_lane *l, const struct fsh_op_track *t, const char *what)
{
    FSH_ASSERT_NO_LANE_HELD();
    if (fsh_progress_track_done(t)) {
        return pg.failed ? -EIO : 0;
    }
    return wait_impl(l, track_done, t, what, -1, pg.timeout, false);
}

struct lane_pes {
    struct fsh_lane *l;
    const struct fsh_op_track *t;
    const bool *pes;
};

static bool lane_idle_to(const void *arg)
{
    const struct lane_pes *w = arg;
    bool idle = true;
    if (!lane_trylock(w->l HERE)) {
        return false; /* its owner posts: ask again at the next poll */
    }
    for (size_t i = 0; i < w->l->depth && idle; i++) {
        const struct fsh_op *op = &w->l->pool[i];
        idle = !(op->kind && op->track == w->t && w->pes[op->pe]);
    }
    fsh_lane_unlock(w->l);
    return idle;
}

int fsh_lane_wait_idle_to(struct fsh_lane *l, const struct fsh_op_track *t, const bool *pes,
                          const char *what, int peer)
{
    struct lane_pes w = {l, t, pes};
    return wait_impl(l, lane_idle_to, &w, what, peer, pg.timeout, false);
}

/* ------------------------------------------------------------------ progress thread */

/* Polls while there is traffic; when a poll finds nothing it sleeps, doubling the sleep from
 * FABSHMEM_PROGRESS_INTERVAL up to 16 times that while nothing happens, so an idle PE costs
 * almost no CPU and a busy one is served within an interval. */
static void *thread_main(void *arg)
{
    long sleep_us = pg.interval_us, max_us = pg.sleep_max_us;
    while (!__atomic_load_n(&pg.thread_stop, __ATOMIC_ACQUIRE)) {
        int n = fsh_progress_poll();
        if (n >= 0 && __atomic_load_n(&lanes_open, __ATOMIC_RELAXED)) {
            int m = poll_lanes();
            n = m < 0 ? m : n + m;
        }
        if (n < 0) {
            /* The error is recorded; the application's next call reports it. */
            break;
        }
        if (n > 0) {
            sleep_us = pg.interval_us;
            continue;
        }
        struct timespec ts = {sleep_us / 1000000, (sleep_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
        if (sleep_us < max_us) {
            sleep_us *= 2;
        }
    }
    return NULL;
}

int fsh_progress_thread_start(long interval_us)
{
    pg.interval_us = interval_us > 0 ? interval_us : 1;
    /* Idle sleeps stay well below a probe interval: peers read our heartbeat to tell a stopped
     * process from an idle one. Fixed here, before the thread exists: finalize clears the
     * probe while the thread still runs. */
    pg.sleep_max_us = pg.interval_us * 16;
    if (pg.probe_interval > 0 && pg.sleep_max_us > (long)(pg.probe_interval * 1e6 / 4)) {
        pg.sleep_max_us = (long)(pg.probe_interval * 1e6 / 4);
    }
    pg.thread_stop = 0;
    fsh_progress_enable_locking();
    int rc = pthread_create(&pg.thread, NULL, thread_main, NULL);
    if (rc != 0) {
        return fsh_err(-rc, "set FABSHMEM_PROGRESS_THREAD=off", "cannot start the progress thread: %s",
                       strerror(rc));
    }
    pg.thread_running = true;
    return 0;
}

void fsh_progress_thread_stop(void)
{
    if (pg.thread_running) {
        __atomic_store_n(&pg.thread_stop, 1, __ATOMIC_RELEASE);
        pthread_join(pg.thread, NULL);
        pg.thread_running = false;
    }
}
