/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.c: the progress engine.
 *
 * Owns the operation pool, the CQ reading, the engine lock and the waits (the lanes are lane.c's,
 * the bounce slots bounce.c's, the progress thread poller.c's, the locks' checks guard.c's). With manual
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
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "error.h"
#include "fabric.h"
#include "guard.h"
#include "log.h"
#include "mr.h"
#include "nap.h"
#include "rt.h"

/* The provider's per-operation scratch space (FI_CONTEXT2 mode) is the first member of every
 * record, kept opaque in progress.h so that no libfabric type reaches the layers above. */
_Static_assert(sizeof(((struct fsh_op *)0)->fi) >= sizeof(struct fi_context2) &&
                   offsetof(struct fsh_op, fi) == 0 &&
                   _Alignof(struct fsh_op) >= _Alignof(struct fi_context2),
               "struct fsh_op's fi must hold a struct fi_context2 at its start");

#define HOLD_MAX 64 /* completions held back under chaos */

static struct {
    struct fsh_op *pool;
    struct fsh_op *free;
    size_t depth;
    size_t in_use;
    bool yield;
    double spin;
    bool nap; /* a long wait may nap on a crowded core (nap.h): not where its polls serve peers */
    unsigned gap_relax; /* fsh_cpu_relax() calls of about FABSHMEM_POLL_GAP_NS: between the empty
                         * polls of a wait with nothing of this PE in flight (0: none) */
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
    /* engine lock (guard.h): real once locking is */
    bool locking;
    struct fsh_guard lock;
    /* chaos: held CQ entries */
    bool chaos_delay;
    uint64_t rng;
    struct fi_cq_data_entry held[HOLD_MAX];
    size_t nheld;
} engine;

/* ------------------------------------------------------------------ the engine lock
 *
 * Taken and let go through guard.h, which checks the lock contract in --enable-debug builds
 * (the site of each take is the caller's) and is the bare pthread call in release builds. */
#ifdef FSH_DEBUG_BUILD
void fsh_progress_lock_at(const char *file, int line)
{
    fsh_guard_engine_lock(&engine.lock, engine.locking, file, line);
}

void fsh_progress_unlock_at(const char *file, int line)
{
    fsh_guard_engine_unlock(&engine.lock, engine.locking, file, line);
}

void fsh_lock_expect(enum fsh_lock_expect what, const struct fsh_lane *l, const char *file,
                     int line, const char *func)
{
    fsh_guard_expect(what, &engine.lock, l ? fsh_lane_guard(l) : NULL, file, line, func);
}
#else
void fsh_progress_lock(void)
{
    fsh_guard_engine_lock(&engine.lock, engine.locking);
}

void fsh_progress_unlock(void)
{
    fsh_guard_engine_unlock(&engine.lock, engine.locking);
}
#endif

/* The records a wait's reports look at: the lane's, or the engine's, locked by their lock
 * until records_done. */
static const struct fsh_op *records(struct fsh_lane *l, size_t *depth, size_t *in_use)
{
    if (l) {
        return fsh_lane_records(l, depth, in_use);
    }
    fsh_progress_lock();
    *depth = engine.depth;
    *in_use = engine.in_use;
    return engine.pool;
}

static void records_done(struct fsh_lane *l, const struct fsh_op *ops)
{
    if (!l) {
        fsh_progress_unlock();
    } else if (ops) {
        fsh_lane_records_done(l);
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
    engine.rng ^= engine.rng >> 12;
    engine.rng ^= engine.rng << 25;
    engine.rng ^= engine.rng >> 27;
    return engine.rng * 2685821657736338717ULL;
}

int fsh_progress_init(const struct fsh_progress_config *cfg)
{
    engine.pool = calloc(cfg->depth, sizeof(*engine.pool));
    if (!engine.pool) {
        return fsh_err(-ENOMEM, "lower FABSHMEM_TX_DEPTH", "cannot allocate %zu operation records",
                       cfg->depth);
    }
    for (size_t i = 0; i < cfg->depth; i++) {
        engine.pool[i].next_free = (i + 1 < cfg->depth) ? &engine.pool[i + 1] : NULL;
    }
    engine.free = engine.pool;
    engine.depth = cfg->depth;
    engine.in_use = 0;
    engine.yield = cfg->yield;
    engine.spin = cfg->spin;
    bool manual = !fsh_fabric_none() && fsh_fabric_attr()->manual_progress;
    engine.nap = fsh_nap_allowed(cfg->spin, manual);
    engine.gap_relax = fsh_nap_poll_gap(cfg->poll_gap_ns, manual);
    engine.timeout = cfg->timeout;
    engine.user_timeout = cfg->user_timeout;
    engine.failed = 0;
    engine.chaos_delay = cfg->chaos_delay;
    engine.wcount = fsh_fabric_counts_writes();
    engine.nrails = fsh_fabric_nrails();
    engine.count_writes = engine.wcount;
    engine.rng = cfg->seed * 0x9e3779b97f4a7c15ULL + 1;
    fsh_guard_init(&engine.lock);
    return 0;
}

void fsh_progress_fini(void)
{
    fsh_progress_thread_stop();
    fsh_guard_destroy(&engine.lock);
    free(engine.pool);
    memset(&engine, 0, sizeof(engine));
}

int fsh_progress_register_imm(enum fsh_imm_kind kind, fsh_imm_handler fn)
{
    if (kind <= 0 || kind >= FSH_IMM_NKINDS || engine.handlers[kind]) {
        return fsh_err(-EINVAL, "", "immediate-data kind %d invalid or taken", kind);
    }
    engine.handlers[kind] = fn;
    return 0;
}

void fsh_progress_set_poll_hook(void (*fn)(void))
{
    engine.poll_hook = fn;
}

void fsh_progress_set_post_hook(enum fsh_post_hook which, int (*fn)(void))
{
    engine.post_hooks[which] = fn;
}

void fsh_progress_enable_locking(void)
{
    /* Already real (the progress thread, another thread level): nothing to do, and no write
     * that threads reading it now would race with (a second caller: api_stream.c, proxy.c). */
    if (__atomic_load_n(&engine.locking, __ATOMIC_ACQUIRE)) {
        return;
    }
    fsh_guard_engine_real(&engine.lock FSH_GUARD_HERE);
    engine.locking = true;
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
    uintptr_t c = (uintptr_t)context, lo = (uintptr_t)engine.pool;
    if (c < lo || c >= lo + engine.depth * sizeof(struct fsh_op) || (c - lo) % sizeof(struct fsh_op)) {
        return NULL;
    }
    return context;
}

/* The operation is done: its result copied out, its tracks counted. */
void fsh_engine_finish(struct fsh_op *op)
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
    fsh_engine_finish(op);
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
    if (write && engine.wcount) {
        engine.wposted++;
    }
    if (!op) {
        __atomic_store_n(&counted->wmark, engine.wposted, __ATOMIC_RELEASE);
        return;
    }
    bump(&op->track->posted);
    if (op->sync) {
        bump(&op->sync->posted);
    }
}

/* Back to its free list: op's record, of lane l or (NULL) the engine's. */
static void put_back(struct fsh_lane *l, struct fsh_op *op)
{
    if (l) {
        fsh_lane_op_unposted(l, op);
    } else {
        fsh_progress_op_put(op);
    }
}

/* op failed: counted complete (waiters see the error, not a hang), no result copied. */
static void drop(struct fsh_lane *l, struct fsh_op *op)
{
    op->copy_dst = NULL;
    if (l) {
        fsh_engine_finish(op);
        fsh_lane_op_unposted(l, op);
    } else {
        complete(op);
    }
}

void fsh_progress_op_unissued(struct fsh_op *op, bool write)
{
    FSH_ASSERT_ENGINE_HELD();
    if (write && engine.wcount) {
        engine.wdead++;
    }
    if (op) {
        drop(NULL, op);
    }
}

bool fsh_progress_counts_writes(void)
{
    return engine.count_writes;
}

void fsh_progress_stop_counting_writes(void)
{
    engine.count_writes = false;
}

/* Has every write up to mark completed? Read under the engine lock, where nothing is posted:
 * completed + failed + never issued == posted means all writes posted so far are done (they
 * complete in any order, so fewer than that says nothing about any one of them). A failure
 * is recorded: the waits then end with it. */
static bool writes_done(uint64_t mark)
{
    if (mark <= __atomic_load_n(&engine.wdrained, __ATOMIC_ACQUIRE)) {
        return true;
    }
    fsh_progress_lock();
    uint64_t posted = engine.wposted;
    uint64_t done, failed;
    fsh_fabric_writes(&done, &failed);
    if (failed > engine.werr) {
        engine.failed = 1;
        fsh_err(-EIO, "the peer PE may have died or become unreachable; see its messages and the launcher's",
                "%llu put(s) counted without a completion entry failed on provider %s (the "
                "target PE is not known: set FABSHMEM_PUT_COUNTER=0 to have every put reported "
                "with its PE)", (unsigned long long)(failed - engine.werr), fsh_fabric_attr()->prov);
        engine.werr = failed;
    }
    if (done + failed + engine.wdead >= posted) {
        __atomic_store_n(&engine.wdrained, posted, __ATOMIC_RELEASE);
    }
    fsh_progress_unlock();
    return mark <= __atomic_load_n(&engine.wdrained, __ATOMIC_ACQUIRE);
}

/* Record the failure of op (what the provider's error entry e says) and return it. */
static int op_failed(const struct fsh_op *op, const struct fi_cq_err_entry *e, const char *prov)
{
    return fsh_err(-(int)e->err, "the peer PE may have died or become unreachable; see its messages and the launcher's",
                   "%s of %zu bytes to PE %d failed: %s (%s)", kind_name(op->kind), op->len,
                   op->pe, fi_strerror((int)e->err), prov ? prov : "");
}

/* The error entry e of op, a record of lane l (NULL: the engine's): an orphan's is no news; a
 * way's failure (several ways to its PE) goes to the way hook, which posts again what was in
 * flight on it; anything else fails the operation. */
int fsh_engine_op_error(struct fsh_lane *l, struct fsh_op *op, const struct fi_cq_err_entry *e,
                        const char *prov)
{
    if (op->orphan) {
        put_back(l, op); /* re-posted elsewhere: its failure is no news */
        return 0;
    }
    if (engine.way_hook && fsh_fabric_ways(op->pe) > 1 && fsh_engine_transport_failed((int)e->err)) {
        char why[320];
        snprintf(why, sizeof(why), "failed a %s of %zu bytes to it%s (%s; %s)",
                 kind_name(op->kind), op->len, l ? " from a context's endpoint" : "",
                 fi_strerror((int)e->err), prov ? prov : "");
        if (l) {
            FSH_ASSERT_LANE_HELD(l);
        } else {
            FSH_ASSERT_ENGINE_HELD();
        }
        int hrc = engine.way_hook(l, op->pe, op->way, why);
        if (hrc == 0 && op->orphan) {
            put_back(l, op); /* the provider is done with it, and it went again */
            return 0;
        }
        if (hrc != 0) {
            engine.failed = 1;
            drop(l, op);
            return hrc;
        }
    }
    engine.failed = 1;
    int err = op_failed(op, e, prov);
    drop(l, op);
    return err;
}

static int report_error(int rail)
{
    struct fi_cq_err_entry e;
    char provbuf[256];
    const char *prov = NULL;
    ssize_t rc = fsh_engine_read_error(fsh_fabric_cq(rail), &e, provbuf, sizeof(provbuf), &prov);
    if (rc < 0) {
        return (rc == -FI_EAGAIN) ? 0 : (int)rc;
    }
    struct fsh_op *op = own_op(e.op_context);
    if (op) {
        return fsh_engine_op_error(NULL, op, &e, prov);
    }
    engine.failed = 1;
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
        if (kind < FSH_IMM_NKINDS && engine.handlers[kind]) {
            engine.handlers[kind](imm & FSH_IMM_PAYLOAD_MASK, (uint32_t)(ev->data >> 32));
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
        if (engine.nheld == HOLD_MAX) {
            size_t k = (size_t)(fsh_progress_random() % engine.nheld);
            struct fi_cq_data_entry e = engine.held[k];
            engine.held[k] = engine.held[--engine.nheld];
            dispatch(&e);
            handled++;
        }
        engine.held[engine.nheld++] = ev[i];
    }
    /* Release about half of what is held, in random order; an idle poll releases everything
     * so nothing is held forever. */
    size_t release = (n == 0) ? engine.nheld : engine.nheld / 2 + (size_t)(fsh_progress_random() % 2);
    while (release-- && engine.nheld) {
        size_t k = (size_t)(fsh_progress_random() % engine.nheld);
        struct fi_cq_data_entry e = engine.held[k];
        engine.held[k] = engine.held[--engine.nheld];
        dispatch(&e);
        handled++;
    }
    return handled;
}

/* A way died since l (NULL: the engine) last looked (another lane's failure, a probe): its hook
 * posts again what l had in flight there. 0, or the error to report. */
int fsh_engine_sweep(struct fsh_lane *l, unsigned *seen)
{
    if (!engine.way_hook) {
        return 0;
    }
    if (l) {
        FSH_ASSERT_LANE_HELD(l);
    } else {
        FSH_ASSERT_ENGINE_HELD();
    }
    unsigned now_dead = fsh_fabric_deaths();
    if (now_dead == *seen) {
        return 0;
    }
    *seen = now_dead;
    return engine.way_hook(l, -1, 0, NULL);
}

/* Under the engine lock and no lane lock: what a poll runs may post on the engine's path (the
 * poll hook, the way hook's sweep, the post hooks), and a post that finds the queue full backs
 * off, which must not start with a lane lock held. */
static int poll_locked(void)
{
    FSH_ASSERT_ENGINE_HELD();
    FSH_ASSERT_NO_LANE_HELD();
    if (engine.heartbeat) {
        __atomic_store_n(engine.heartbeat, *engine.heartbeat + 1, __ATOMIC_RELAXED);
    }
    if (engine.poll_hook) {
        engine.poll_hook();
    }
    int swept = fsh_engine_sweep(NULL, &engine.deaths);
    if (swept < 0) {
        return swept;
    }
    /* Every rail's CQ; an error entry is read after what the others brought is handled. */
    struct fi_cq_data_entry ev[16 * FSH_MAX_RAILS];
    ssize_t n = 0;
    int err_rail = -1;
    for (int r = 0; r < engine.nrails; r++) {
        ssize_t got = fi_cq_read(fsh_fabric_cq(r), ev + n, 16);
        if (got == -FI_EAVAIL) {
            err_rail = err_rail < 0 ? r : err_rail;
        } else if (got < 0 && got != -FI_EAGAIN) {
            engine.failed = 1;
            return fsh_err((int)got, "", "reading the completion queue of rail %s failed: %s",
                           fsh_fabric_rail_name(r), fi_strerror((int)-got));
        } else if (got > 0) {
            n += got;
        }
    }
    engine.events += (uint64_t)n;
    int handled = (int)n;
    if (engine.chaos_delay) {
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
        int rc = engine.post_hooks[h] ? engine.post_hooks[h]() : 0;
        if (rc < 0) {
            return rc;
        }
    }
    if (!engine.chaos_delay && n == 0 && engine.failed) {
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

int fsh_engine_poll_try(void)
{
    FSH_ASSERT_NO_LANE_HELD();
    if (!fsh_guard_engine_trylock(&engine.lock FSH_GUARD_HERE)) {
        return 0;
    }
    int n = poll_locked();
    fsh_guard_engine_unlock(&engine.lock, true FSH_GUARD_HERE);
    return n;
}

bool fsh_engine_failed(void)
{
    return engine.failed != 0;
}

void fsh_engine_fail(void)
{
    engine.failed = 1;
}

size_t fsh_engine_lane_keep(void)
{
    return engine.lane_keep;
}

double fsh_engine_probe_interval(void)
{
    return engine.probe_interval;
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
    engine.probe = fn;
    engine.probe_interval = interval;
}

int fsh_progress_set_way_hook(fsh_way_fn fn, size_t lane_keep)
{
    /* Lanes opened before (at init, published: efa-direct) get their keep space now. */
    fsh_progress_lock();
    int rc = fsh_lane_set_keep(lane_keep);
    engine.way_hook = fn;
    engine.lane_keep = lane_keep;
    fsh_progress_unlock();
    return rc;
}

void fsh_progress_set_heartbeat(uint64_t *word)
{
    engine.heartbeat = word;
}

uint64_t fsh_progress_events(void)
{
    FSH_ASSERT_ENGINE_HELD();
    return engine.events;
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
    if (!engine.probe || engine.probe_interval <= 0 || t - c->probed < engine.probe_interval) {
        return 0;
    }
    c->probed = t;
    int pes[16];
    int n = wait_peers(l, peer, pes, 16);
    int rc = engine.probe(pes, n, arrival, what);
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
        c->preempted = fsh_nap_preemptions();
        return 0;
    }
    double t = now();
    if (!engine.yield && !c->nap && engine.nap && t - c->start > engine.spin) {
        c->nap = fsh_nap_crowded(&c->preempted, t);
    }
    if (engine.yield) {
        sched_yield();
    } else if (c->nap) {
        fsh_nap_sleep(); /* spun long without progress on a shared core (nap.h) */
    }
    if (timeout > 0 && t - c->start > timeout) {
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
    int rc = backoff(NULL, c, engine.timeout, what, peer);
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
    bool any = engine.nheld > 0 || !writes_done(engine.wposted);
    for (size_t i = 0; i < engine.depth && !any; i++) {
        any = engine.pool[i].kind != 0 && engine.pool[i].track != ignore;
    }
    any = any || fsh_lane_any_in_flight(ignore);
    fsh_progress_unlock();
    return any;
}

static int wait_loop(struct fsh_lane *l, fsh_done_fn done, const void *arg, const char *what,
                     int peer, double timeout, bool arrival);

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

static int wait_spin(struct fsh_lane *l, fsh_done_fn done, const void *arg, const char *what,
                     int peer, double timeout, bool arrival, struct fsh_nap_slice *slice);

/* l: a lane's wait, which polls the lane and, when nobody else holds it, the engine. */
static int wait_loop(struct fsh_lane *l, fsh_done_fn done, const void *arg, const char *what,
                     int peer, double timeout, bool arrival)
{
    struct fsh_nap_slice slice = {.shortened = false};
    int rc = wait_spin(l, done, arg, what, peer, timeout, arrival, &slice);
    fsh_nap_slice_restore(&slice);
    return rc;
}

static int wait_spin(struct fsh_lane *l, fsh_done_fn done, const void *arg, const char *what,
                     int peer, double timeout, bool arrival, struct fsh_nap_slice *slice)
{
    struct fsh_wait_clock c = {0};
    unsigned idle = 0;
    bool napping = false;
    for (;;) {
        int n = l ? fsh_lane_poll_waiting(l) : fsh_progress_poll();
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
        /* Nothing of its own in flight: whatever it waits for comes from peers, whom a poll
         * right away would slow (fsh_progress_init). Its own completions are polled for back
         * to back. */
        if (!l && engine.gap_relax && __atomic_load_n(&engine.in_use, __ATOMIC_RELAXED) == 0) {
            for (unsigned i = 0; i < engine.gap_relax; i++) {
                fsh_cpu_relax();
            }
        }
        /* Check the clock (and yield) only every so often: clock_gettime is not free. */
        if (++idle % 64 == 0 || engine.yield || c.nap) {
            int rc = backoff(l, &c, timeout, what, peer);
            if (rc == 0) {
                rc = probe(l, &c, now(), arrival, what, peer, done, arg);
            }
            if (rc != 0) {
                return rc;
            }
            if (c.nap && !napping) {
                napping = true;
                fsh_nap_slice_shorten(slice);
            }
        }
    }
}

int fsh_engine_wait(struct fsh_lane *l, bool (*done)(const void *), const void *arg,
                    const char *what, int peer)
{
    return wait_impl(l, done, arg, what, peer, engine.timeout, false);
}

int fsh_progress_wait(fsh_done_fn done, const void *arg, const char *what, int peer)
{
    return wait_impl(NULL, done, arg, what, peer, engine.timeout, false);
}

int fsh_progress_wait_user(fsh_done_fn done, const void *arg, const char *what, int peer)
{
    return wait_impl(NULL, done, arg, what, peer, engine.user_timeout, false);
}

int fsh_progress_wait_arrival(fsh_done_fn done, const void *arg, const char *what, int peer)
{
    return wait_impl(NULL, done, arg, what, peer, engine.timeout, true);
}

int fsh_progress_wait_watched(fsh_done_fn done, const void *arg, const char *what,
                              const void *watch, size_t len)
{
    if (wait_now.depth == 0) {
        wait_now.watch = watch;
        wait_now.watch_len = len;
        wait_now.open_ended = watch == NULL;
    }
    return wait_impl(NULL, done, arg, what, -1, engine.user_timeout, false);
}

bool fsh_progress_track_idle_to(const struct fsh_op_track *t, const bool *pes)
{
    bool idle = true;
    fsh_progress_lock();
    for (size_t i = 0; i < engine.depth && idle; i++) {
        const struct fsh_op *op = &engine.pool[i];
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
        return engine.failed ? -EIO : 0;
    }
    return fsh_progress_wait(track_done, t, what, -1);
}

static bool pool_available(const void *arg)
{
    return engine.free != NULL;
}

/* A record taken from a free list, made ready for an operation of kind to pe. */
void fsh_engine_op_init(struct fsh_op *op, int kind, int pe, size_t len)
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
    if (!engine.free && fsh_progress_wait(pool_available, NULL, "waiting for a free operation slot", pe) != 0) {
        return NULL;
    }
    struct fsh_op *op = engine.free;
    engine.free = op->next_free;
    engine.in_use++;
    fsh_engine_op_init(op, kind, pe, len);
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
    op->next_free = engine.free;
    engine.free = op;
    engine.in_use--;
}

size_t fsh_progress_op_index(const struct fsh_op *op)
{
    return (size_t)(op - engine.pool);
}

struct fsh_op *fsh_progress_op_at(size_t i)
{
    return &engine.pool[i];
}

size_t fsh_progress_depth(void)
{
    return engine.depth;
}
