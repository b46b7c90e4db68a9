/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane.c: lanes, a context's own endpoints and CQs (one of each on every rail), with their own
 * operation records, scratch, keep space, bounce slots and lock (progress.h, "Lanes").
 *
 * Threads posting on contexts of their own share no lock: a lane's post, completion and wait
 * take its lock alone, and look at the engine only by trylock. Nobody aims at a lane (peers
 * know the engine's endpoints), so its CQs hold its own completions only; they are judged by
 * the engine's rules (engine.h: finish, op_error, the way hook's sweep), and a lane's waits are
 * the engine's wait loop polling the lane. The open lanes are listed under the engine lock,
 * which the progress thread takes to poll each of them by trylock.
 *
 * The lock contract (progress.h): a lane's lock is taken by trylock by anything that runs in a
 * poll or a report; a poll of a lane runs with no lane lock held before it (lane_poll), so the
 * way hook's posts again run with the lane held once and can let it go; the engine's poll never
 * runs under a lane lock (fsh_lane_poll lets the lane go for it). Never blocks on the engine
 * lock with a lane lock held.
 */
#define _GNU_SOURCE
#include "progress.h"

#include <errno.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"
#include "engine.h"
#include "error.h"
#include "fabric.h"
#include "guard.h"
#include "log.h"
#include "mr.h"

/* A lane (progress.h): an endpoint and CQ of its own on every rail, with its own records and
 * lock. Only its own operations complete on its CQs: peers know the engine's endpoints. */
struct fsh_lane {
    struct fid_ep *ep[FSH_MAX_RAILS]; /* one on every rail, with a CQ each */
    struct fid_cq *cq[FSH_MAX_RAILS];
    int nrails;
    struct fsh_op *pool, *free;
    size_t depth, in_use;
    uint8_t *scratch; /* FSH_LANE_SCRATCH bytes per record */
    uint8_t *keep;    /* the way hook's bytes per record (fsh_engine_lane_keep), or NULL */
    unsigned deaths;  /* fsh_fabric_deaths() when it last looked */
    struct fsh_bounce bb; /* slots of its own, made at its first blocking put */
    bool bb_tried;
    struct fsh_guard guard; /* its lock */
    struct fsh_lane *next;  /* the open lanes (open_lanes), which the progress thread polls */
};
static struct fsh_lane *open_lanes; /* under the engine lock */

#ifdef FSH_DEBUG_BUILD
void fsh_lane_lock_at(struct fsh_lane *l, const char *file, int line)
{
    fsh_guard_lane_lock(&l->guard, file, line);
}

void fsh_lane_unlock_at(struct fsh_lane *l, const char *file, int line)
{
    fsh_guard_lane_unlock(&l->guard, file, line);
}

const struct fsh_guard *fsh_lane_guard(const struct fsh_lane *l)
{
    return &l->guard;
}
#else
void fsh_lane_lock(struct fsh_lane *l)
{
    fsh_guard_lane_lock(&l->guard);
}

void fsh_lane_unlock(struct fsh_lane *l)
{
    fsh_guard_lane_unlock(&l->guard);
}
#endif


static void lane_free(struct fsh_lane *l)
{
    for (int r = 0; r < l->nrails; r++) {
        fsh_fabric_lane_close(l->ep[r], l->cq[r]);
    }
    fsh_bounce_fini(&l->bb);
    free(l->keep);
    free(l->scratch);
    free(l->pool);
    free(l);
}

int fsh_lane_open(struct fsh_lane **out)
{
    *out = NULL;
    struct fsh_lane *l = calloc(1, sizeof(*l));
    size_t depth = fsh_progress_depth();
    if (l) {
        l->pool = calloc(depth, sizeof(*l->pool));
        l->scratch = calloc(depth, FSH_LANE_SCRATCH);
        l->keep = fsh_engine_lane_keep() ? calloc(depth, fsh_engine_lane_keep()) : NULL;
    }
    if (!l || !l->pool || !l->scratch || (fsh_engine_lane_keep() && !l->keep)) {
        if (l) {
            lane_free(l);
        }
        return fsh_err(-ENOMEM, "destroy contexts no longer needed, or set FABSHMEM_CTX_ENDPOINTS=0",
                       "cannot allocate %zu operation records for a context's endpoint", depth);
    }
    /* An endpoint on every rail: an operation goes on the rail of its way to the peer, and
     * when a way dies, again on another (the lane's hook), all under the lane's lock. */
    for (; l->nrails < fsh_fabric_nrails(); l->nrails++) {
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
    fsh_guard_init(&l->guard);
    fsh_progress_lock();
    l->next = open_lanes;
    __atomic_store_n(&open_lanes, l, __ATOMIC_RELAXED);
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
    for (struct fsh_lane **p = &open_lanes; *p; p = &(*p)->next) {
        if (*p == l) {
            __atomic_store_n(p, l->next, __ATOMIC_RELAXED);
            break;
        }
    }
    fsh_progress_unlock();
    fsh_guard_destroy(&l->guard);
    lane_free(l);
}

struct fid_ep *fsh_lane_ep(const struct fsh_lane *l, int rail)
{
    return l->ep[rail];
}

void *fsh_lane_keep(struct fsh_lane *l, const struct fsh_op *op)
{
    return l->keep + (size_t)(op - l->pool) * fsh_engine_lane_keep();
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
    const struct fsh_bounce *bb = fsh_bounce_engine();
    if (!l->bb_tried && bb->size > 0) {
        /* The engine's slot size, fewer slots: made once, registered outside the engine lock
         * (the domain is thread-safe where lanes exist). */
        l->bb_tried = true;
        size_t n = bb->n < FSH_LANE_BOUNCE_SLOTS ? bb->n : FSH_LANE_BOUNCE_SLOTS;
        if (fsh_bounce_init(&l->bb, bb->size, n) != 0) {
            FSH_DEBUG("a context's endpoint without bounce slots: %s",
                      fsh_err_last() ? fsh_err_last()->msg : "");
            fsh_err_clear();
        }
    }
    return fsh_bounce_take(&l->bb, len);
}

void fsh_lane_bounce_give(struct fsh_lane *l, void *slot)
{
    FSH_ASSERT_LANE_HELD(l);
    fsh_bounce_give(&l->bb, slot);
}

bool fsh_lane_bounce_owns(const struct fsh_lane *l, const void *p)
{
    return fsh_bounce_owns(&l->bb, p);
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
        fsh_bounce_give(&l->bb, op->bounce);
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
    if (fsh_engine_read_error(l->cq[r], &e, provbuf, sizeof(provbuf), &prov) < 0) {
        fsh_engine_fail();
        return -EIO;
    }
    return fsh_engine_op_error(l, e.op_context, &e, prov);
}

/* Read the lane's CQs once and complete what they brought. Caller holds the lane's lock. */
static int lane_poll_locked(struct fsh_lane *l)
{
    FSH_ASSERT_LANE_HELD(l);
    int n = fsh_engine_sweep(l, &l->deaths);
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
                fsh_engine_finish(op);
            }
            lane_op_put(l, op);
        }
        if (got > 0) {
            n += (int)got;
        } else if (got == -FI_EAVAIL) {
            int err = lane_error(l, r);
            n = err < 0 ? err : n;
        } else if (got != -FI_EAGAIN) {
            fsh_engine_fail();
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
    if (!fsh_guard_lane_trylock(&l->guard FSH_GUARD_HERE)) {
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
int fsh_lane_poll_waiting(struct fsh_lane *l)
{
    int n = lane_poll(l);
    if (n < 0) {
        return n;
    }
    int m = fsh_engine_poll_try();
    if (m < 0) {
        return m;
    }
    n += m;
    return fsh_engine_failed() && n == 0 ? -EIO : n;
}

/* A lane's post found the provider's queue full (xport.c): the caller holds the lane's lock
 * once, and lets it go for the poll, so that what the engine's poll posts never runs under it
 * (the lock contract); the lane is the caller's again on return. */
int fsh_lane_poll(struct fsh_lane *l)
{
    FSH_ASSERT_LANE_ONCE(l);
    fsh_lane_unlock(l);
    int n = fsh_lane_poll_waiting(l);
    fsh_lane_lock(l);
    return n;
}

/* The progress thread's share of the lanes: what their owners posted moves while they compute
 * (the spec's progress without calls), without ever waiting for an owner's lock. */
int fsh_lane_poll_open(void)
{
    int n = 0;
    fsh_progress_lock();
    for (struct fsh_lane *l = open_lanes; l && n >= 0; l = l->next) {
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
    if (!fsh_guard_lane_trylock(&l->guard FSH_GUARD_HERE)) {
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
        int rc = fsh_engine_wait(l, lane_available, l,
                                 "waiting for a free operation slot of a context", pe);
        fsh_lane_lock(l);
        if (rc != 0) {
            return NULL;
        }
    }
    struct fsh_op *op = l->free;
    l->free = op->next_free;
    l->in_use++;
    fsh_engine_op_init(op, kind, pe, len);
    return op;
}

void fsh_lane_op_unposted(struct fsh_lane *l, struct fsh_op *op)
{
    lane_op_put(l, op);
}

static bool track_done(const void *arg)
{
    return fsh_progress_track_done(arg);
}

/* The engine's test: a lane's tracks carry no write mark (nothing on a lane is counted), so
 * it compares posted and completed. */
int fsh_lane_wait_track(struct fsh_lane *l, const struct fsh_op_track *t, const char *what)
{
    FSH_ASSERT_NO_LANE_HELD();
    if (fsh_progress_track_done(t)) {
        return fsh_engine_failed() ? -EIO : 0;
    }
    return fsh_engine_wait(l, track_done, t, what, -1);
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
    if (!fsh_guard_lane_trylock(&w->l->guard FSH_GUARD_HERE)) {
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
    return fsh_engine_wait(l, lane_idle_to, &w, what, peer);
}

const struct fsh_op *fsh_lane_records(struct fsh_lane *l, size_t *depth, size_t *in_use)
{
    if (!fsh_guard_lane_trylock(&l->guard FSH_GUARD_HERE)) {
        /* Its owner is posting (and may wait for the engine's lock, which this thread may
         * hold): the report goes without the lane's records. */
        *depth = *in_use = 0;
        return NULL;
    }
    *depth = l->depth;
    *in_use = l->in_use;
    return l->pool;
}

void fsh_lane_records_done(struct fsh_lane *l)
{
    fsh_lane_unlock(l);
}

bool fsh_lane_any_open(void)
{
    return __atomic_load_n(&open_lanes, __ATOMIC_RELAXED) != NULL;
}

bool fsh_lane_any_in_flight(const struct fsh_op_track *ignore)
{
    FSH_ASSERT_ENGINE_HELD();
    for (struct fsh_lane *l = open_lanes; l; l = l->next) {
        if (pthread_mutex_trylock(&l->guard.mutex) != 0) {
            return true;
        }
        bool any = false;
        for (size_t i = 0; i < l->depth && !any; i++) {
            any = l->pool[i].kind != 0 && l->pool[i].track != ignore;
        }
        pthread_mutex_unlock(&l->guard.mutex);
        if (any) {
            return true;
        }
    }
    return false;
}

int fsh_lane_set_keep(size_t keep)
{
    FSH_ASSERT_ENGINE_HELD();
    for (struct fsh_lane *l = open_lanes; l; l = l->next) {
        free(l->keep);
        l->keep = calloc(l->depth, keep);
        if (!l->keep) {
            return fsh_err(-ENOMEM, "set FABSHMEM_CTX_ENDPOINTS=0, or FABSHMEM_RAILS=1",
                           "out of memory for the copies of a context's requests (multi-rail)");
        }
    }
    return 0;
}
