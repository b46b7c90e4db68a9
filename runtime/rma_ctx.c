/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_ctx.c: contexts, their handles, and which of them get an endpoint of their own.
 *
 * Owns every context object (the default one and those shmem_ctx_create makes), the list of
 * the live ones (quiet of all, the session batches' flush and team destroy walk it), the
 * handle table that turns what the user holds into a context, and the lane budget: how many
 * contexts may have an endpoint of their own (a lane, progress.h), how many do, a team's
 * reservations, and, where a target must know an endpoint before it reaches it (efa-direct),
 * the lanes opened at init that no context has now. All of it is under the engine lock; only
 * the limit is also read without it, as a hint that create checks again under the lock.
 * It never posts: destroying a context (rma.c) completes its operations first and then hands
 * it to fsh_rma_ctx_release.
 */
#include "rma_ctx.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "arrive.h"
#include "env.h"
#include "error.h"
#include "exchange.h"
#include "fabric.h"
#include "log.h"
#include "rt.h"

struct fsh_ctx fsh_ctx_default = {.handle = FSH_CTX_DEFAULT_HANDLE};
static struct fsh_ctx *ctx_list = &fsh_ctx_default;
/* Slot 0 is the default context's for good (generation 1); the others are handed out by
 * create under the progress lock, which also guards gen[] and used. */
struct fsh_ctx_slot fsh_ctx_slots[FSH_CTX_SLOTS] = {
    [0] = {FSH_CTX_DEFAULT_HANDLE, &fsh_ctx_default}};
static struct {
    uintptr_t gen[FSH_CTX_SLOTS]; /* the generation last given out in each slot */
    unsigned used;                /* slots below this were handed out at least once */
} handles = {.gen = {[0] = 1}, .used = 1};

/* Contexts' own endpoints: how many may exist, how many are committed (open outside a team's
 * reservation, plus every reservation), and why none may, for SHMEM_INFO. Under the engine
 * lock. */
static struct {
    long limit;
    bool automatic; /* FABSHMEM_CTX_ENDPOINTS=-1 chose limit */
    long committed;
    long open;
    const char *why_not;
    char failed[200]; /* why opening one failed: no further context tries */
    /* Where a target must know an endpoint before it reaches it (efa-direct), the lanes are
     * opened at init and published in the exchange (fsh_rma_lanes_preopen): pool[0..npool)
     * are those no context has now, opened of them in all. */
    struct fsh_lane **pool;
    long npool, opened;
} lane_budget;

struct fsh_ctx *fsh_rma_ctx_first(void)
{
    FSH_ASSERT_ENGINE_HELD();
    return ctx_list;
}

const char *fsh_rma_ctx_why(uintptr_t handle)
{
    if (handle == 0) {
        return "is SHMEM_CTX_INVALID";
    }
    uintptr_t gen = handle >> FSH_CTX_IDX_BITS;
    fsh_progress_lock();
    uintptr_t last = handles.gen[handle & (FSH_CTX_SLOTS - 1)];
    fsh_progress_unlock();
    /* A generation this slot has given out before: a context that existed and was destroyed.
     * Anything else was never returned by shmem_ctx_create. */
    return gen >= 1 && gen <= last ? "was destroyed (shmem_ctx_destroy, or shmem_team_destroy of its team)"
                                   : "is not a context handle (never returned by shmem_ctx_create: uninitialized or overwritten)";
}

static void lane_give(struct fsh_ctx *c);

/* FABSHMEM_CTX_ENDPOINTS=-1: how many, for a job of npes PEs: FSH_LANES_AUTO_MAX, fewer where
 * every endpoint keeps a connection per peer (ofi_rxm: as many as the open-file limit leaves
 * room for). */
static long lanes_auto(int npes)
{
    const long most = FSH_LANES_AUTO_MAX;
    if (!strstr(fsh_fabric_attr()->prov, "ofi_rxm")) {
        return most; /* connectionless (efa's SRD): an endpoint costs no per-peer state */
    }
    /* ofi_rxm keeps a connection (tcp: a socket) per endpoint and peer, at both ends. With
     * every PE's contexts reaching every PE, each endpoint (a lane has one per rail) costs this
     * PE a few descriptors of its own plus two per peer (its connection, and a peer's endpoint
     * connecting here); the engine's connections (one per peer) and some room stay free. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
        return most;
    }
    long used = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        used += e->d_name[0] != '.';
    }
    if (d) {
        closedir(d);
    }
    long room = (long)rl.rlim_cur - used - npes - 16;
    long n = room / ((3 + 2L * npes) * fsh_fabric_nrails());
    return n < 0 ? 0 : n > most ? most : n;
}

/* The lanes published at init (efa-direct), as every PE counts them alike. */
static long lanes_wanted(void)
{
    if (!fsh_fabric_attr()->av_first || !fsh_fabric_lanes_possible()) {
        return 0;
    }
    long want = fsh_env()->FABSHMEM_CTX_ENDPOINTS;
    long n = fsh_arrive_counts() ? fsh_arrive_lanes()
             : want < 0                ? FSH_LANES_AUTO_MAX
                                       : want;
    /* Every PE's go into every AV: a bounded number (FSH_EXCHANGE_LANES_MAX). */
    return n > FSH_EXCHANGE_LANES_MAX ? FSH_EXCHANGE_LANES_MAX : n;
}

int fsh_rma_lanes_published(void)
{
    /* A name per lane and rail: room for the most rails any PE may have. */
    return (int)lanes_wanted() * FSH_MAX_RAILS;
}

int fsh_rma_lanes_preopen(void)
{
    long n = lanes_wanted();
    if (n == 0) {
        return 0;
    }
    long want = fsh_env()->FABSHMEM_CTX_ENDPOINTS;
    long fit = want < 0 ? lanes_auto(fsh_rt.npes) : want;
    n = n < fit ? n : fit;
    lane_budget.pool = calloc((size_t)(n > 0 ? n : 1), sizeof(*lane_budget.pool));
    if (!lane_budget.pool) {
        return fsh_err(-ENOMEM, "set FABSHMEM_CTX_ENDPOINTS=0",
                       "out of memory for %ld contexts' endpoints", n);
    }
    while (lane_budget.npool < n) {
        if (fsh_lane_open(&lane_budget.pool[lane_budget.npool]) != 0) {
            /* The provider's limit: the contexts have as many as it gave. */
            const struct fsh_error *e = fsh_err_last();
            snprintf(lane_budget.failed, sizeof(lane_budget.failed),
                     "opening the %ld%s at init failed: %.120s", lane_budget.npool + 1,
                     lane_budget.npool == 0 ? "st" : "th", e ? e->msg : "");
            fsh_err_clear();
            break;
        }
        lane_budget.npool++;
    }
    lane_budget.opened = lane_budget.npool;
    return 0;
}

size_t fsh_rma_lane_names(uint8_t *names, size_t stride, size_t max, uint16_t *len)
{
    size_t n = 0;
    int nrails = fsh_fabric_nrails();
    *len = 0;
    for (long i = 0; i < lane_budget.npool && n + (size_t)nrails <= max; i++) {
        for (int r = 0; r < nrails; r++) {
            size_t l = stride;
            if (fsh_fabric_lane_name(r, fsh_lane_ep(lane_budget.pool[i], r),
                                     names + (n + r) * stride, &l) != 0 ||
                (n + r > 0 && l != *len)) {
                fsh_err_clear();
                return n; /* published as far as named alike: the lanes after stay unused */
            }
            *len = (uint16_t)l;
        }
        n += (size_t)nrails;
    }
    return n;
}

/* Close the lanes opened at init that no context has (all of them at finalize). */
static void pool_close(void)
{
    while (lane_budget.npool > 0) {
        fsh_lane_close(lane_budget.pool[--lane_budget.npool]);
    }
    free(lane_budget.pool);
    lane_budget.pool = NULL;
}

void fsh_rma_lanes_init(long limit)
{
    lane_budget.why_not = limit == 0 ? "FABSHMEM_CTX_ENDPOINTS=0" : fsh_fabric_lanes_why_not();
    lane_budget.automatic = limit < 0;
    if (!lane_budget.why_not && lane_budget.automatic) {
        limit = lanes_auto(fsh_rt.npes);
        lane_budget.why_not = limit == 0
                                  ? "every endpoint keeps a connection per peer, and the open-file "
                                    "limit leaves none for them at this PE count (raise ulimit -n, "
                                    "or set FABSHMEM_CTX_ENDPOINTS)"
                                  : NULL;
    }
    if (!lane_budget.why_not && fsh_arrive_counts()) {
        /* Each lane's writes are counted apart at the targets: no more lanes than slots. */
        long slots = fsh_arrive_lanes();
        limit = limit < slots ? limit : slots;
        lane_budget.why_not = limit == 0
                                  ? "quiet counts arrivals at the targets, per endpoint, and at "
                                    "this PE count the counts of even one would take more than "
                                    "the 2 MiB of heap they may have"
                                  : NULL;
    }
    if (!lane_budget.why_not && fsh_fabric_attr()->av_first) {
        /* Only those opened at init and published: a target knows no other. */
        limit = limit < lane_budget.opened ? limit : lane_budget.opened;
        lane_budget.why_not = limit > 0 ? NULL
                              : lane_budget.failed[0]
                                  ? lane_budget.failed
                                  : "a target must have an endpoint's address before its "
                                    "first operation (efa-direct), and none was opened at init";
    }
    lane_budget.limit = lane_budget.why_not ? 0 : limit;
    lane_budget.committed = 0;
    lane_budget.open = 0;
    if (lane_budget.why_not) {
        pool_close();
    }
}

void fsh_rma_lanes_reserve(struct fsh_lane_reserve *r, int n)
{
    fsh_progress_lock();
    long room = lane_budget.limit - lane_budget.committed;
    r->granted = n <= 0 ? 0 : n < room ? n : (int)(room > 0 ? room : 0);
    r->taken = 0;
    lane_budget.committed += r->granted;
    fsh_progress_unlock();
}

void fsh_rma_lanes_unreserve(struct fsh_lane_reserve *r)
{
    fsh_progress_lock();
    lane_budget.committed -= r->granted;
    r->granted = 0;
    fsh_progress_unlock();
}

void fsh_rma_lanes_describe(char *buf, size_t len)
{
    if (lane_budget.why_not) {
        snprintf(buf, len, "none: every context posts through the engine's endpoint (%s)",
                 lane_budget.why_not);
    } else {
        int rails = fsh_fabric_nrails();
        snprintf(buf, len, "up to %ld (FABSHMEM_CTX_ENDPOINTS%s), %ld in use%s%s: a context "
                 "created while one is left has %s, and a lock of its own%s", lane_budget.limit,
                 lane_budget.automatic ? "=-1, auto" : "", lane_budget.open,
                 lane_budget.pool ? ", opened at init and known to every PE (a target must know "
                                    "an endpoint first)" : "",
                 fsh_arrive_active ? ", writes counted apart at the targets" : "",
                 rails > 1 ? "an endpoint and a completion queue on each rail"
                           : "an endpoint, a completion queue",
                 fsh_fabric_multirail() ? " (and posts again on a live rail what it had in "
                                          "flight on a failed one)" : "");
    }
}

/* An endpoint of its own for a new context, from its team's reservation or what is left of
 * the limit; none is no error (the context posts through the engine). Called without locks. */
static void lane_take(struct fsh_ctx *c, struct fsh_lane_reserve *reserve)
{
    fsh_progress_lock();
    if (lane_budget.limit <= 0) {
        fsh_progress_unlock(); /* opening one failed since this context's check */
        return;
    }
    if (reserve && reserve->taken < reserve->granted) {
        reserve->taken++;
        c->reserve = reserve;
    } else if (lane_budget.committed < lane_budget.limit) {
        lane_budget.committed++;
    } else {
        fsh_progress_unlock();
        return;
    }
    long open = ++lane_budget.open;
    /* Where targets count arrivals, a slot of counts of its own (lanes_init keeps the limit
     * within the slots; none only when its lists cannot be allocated). */
    c->slot = fsh_arrive_slot_take();
    if (fsh_arrive_active && c->slot == 0) {
        fsh_progress_unlock();
        lane_give(c);
        return;
    }
    if (lane_budget.pool) {
        /* One opened at init (the limit keeps within them, so one is left). */
        c->lane = lane_budget.pool[--lane_budget.npool];
        fsh_progress_unlock();
        FSH_DEBUG("a context with an endpoint of its own, opened at init (%ld in use)", open);
        return;
    }
    fsh_progress_unlock();
    /* Opened outside the engine lock: the domain is thread-safe (lanes exist only then). */
    if (fsh_lane_open(&c->lane) != 0) {
        /* The provider refuses a further endpoint (its limit, or memory): this context and
         * every later one post through the engine's, as they would without lanes. */
        const struct fsh_error *e = fsh_err_last();
        FSH_DEBUG("a context without an endpoint of its own, and no later one tries: %s",
                  e ? e->msg : "");
        fsh_progress_lock();
        if (!lane_budget.why_not) {
            snprintf(lane_budget.failed, sizeof(lane_budget.failed), "opening one failed: %.170s",
                     e ? e->msg : "");
            lane_budget.why_not = lane_budget.failed;
            __atomic_store_n(&lane_budget.limit, 0, __ATOMIC_RELAXED);
        }
        fsh_progress_unlock();
        fsh_err_clear();
        c->lane = NULL;
        lane_give(c);
        return;
    }
    FSH_DEBUG("a context with an endpoint of its own (%ld open)", open);
}

/* Give back what lane_take counted. Closes the lane, if it is open and not one opened at
 * init (that one waits for the next context). */
static void lane_give(struct fsh_ctx *c)
{
    if (!lane_budget.pool) {
        fsh_lane_close(c->lane);
    }
    fsh_progress_lock();
    if (lane_budget.pool && c->lane) {
        lane_budget.pool[lane_budget.npool++] = c->lane;
    }
    c->lane = NULL;
    if (c->reserve) {
        c->reserve->taken--;
        c->reserve = NULL;
    } else {
        lane_budget.committed--;
    }
    fsh_arrive_slot_give(c->slot);
    c->slot = 0;
    lane_budget.open--;
    fsh_progress_unlock();
}

int fsh_rma_ctx_create(long options, void *team, struct fsh_lane_reserve *reserve,
                       struct fsh_ctx **out)
{
    struct fsh_ctx *c = calloc(1, sizeof(*c));
    if (!c) {
        return fsh_err(-ENOMEM, "destroy contexts no longer needed", "out of memory for a context");
    }
    c->options = options;
    c->team = team;
    if (__atomic_load_n(&lane_budget.limit, __ATOMIC_RELAXED) > 0) {
        lane_take(c, reserve);
    }
    fsh_progress_lock();
    /* A slot never used first, so that a freed one rests (and its stale handles stay
     * recognisable as destroyed rather than as another context) as long as possible. */
    unsigned i = handles.used;
    if (i >= FSH_CTX_SLOTS) {
        for (i = 1; i < FSH_CTX_SLOTS && fsh_ctx_slots[i].handle != 0; i++) {
        }
    }
    if (i >= FSH_CTX_SLOTS) {
        fsh_progress_unlock();
        if (c->lane) {
            lane_give(c);
        }
        free(c);
        return fsh_err(-ENOSPC, "destroy contexts no longer needed",
                       "%u contexts exist at once, the most this library holds", FSH_CTX_SLOTS);
    }
    handles.used = i + 1 > handles.used ? i + 1 : handles.used;
    c->handle = (++handles.gen[i] << FSH_CTX_IDX_BITS) | i;
    fsh_ctx_slots[i].ctx = c;
    __atomic_store_n(&fsh_ctx_slots[i].handle, c->handle, __ATOMIC_RELEASE);
    c->next = ctx_list;
    ctx_list = c;
    fsh_progress_unlock();
    *out = c;
    return 0;
}

void fsh_rma_ctx_release(struct fsh_ctx *ctx)
{
    fsh_progress_lock();
    __atomic_store_n(&fsh_ctx_slots[ctx->handle & (FSH_CTX_SLOTS - 1)].handle, 0,
                     __ATOMIC_RELEASE);
    for (struct fsh_ctx **p = &ctx_list; *p; p = &(*p)->next) {
        if (*p == ctx) {
            *p = ctx->next;
            break;
        }
    }
    fsh_progress_unlock();
    if (ctx->lane) {
        lane_give(ctx);
    }
    free(ctx);
}

void fsh_rma_ctx_fini(void)
{
    /* Contexts the program did not destroy end with the library (their operations completed
     * in finalize's quiet); their slots keep their generations, so a handle kept across a
     * later shmem_init is still recognised as destroyed. The default context starts over: a
     * new engine counts its writes from zero. */
    while (ctx_list != &fsh_ctx_default) {
        struct fsh_ctx *c = ctx_list;
        ctx_list = c->next;
        fsh_ctx_slots[c->handle & (FSH_CTX_SLOTS - 1)].handle = 0;
        fsh_lane_close(c->lane);
        free(c);
    }
    pool_close();
    memset(&lane_budget, 0, sizeof(lane_budget));
    memset(&fsh_ctx_default, 0, sizeof(fsh_ctx_default));
    fsh_ctx_default.handle = FSH_CTX_DEFAULT_HANDLE;
}

int fsh_rma_ctx_count_on(const void *team, long mask)
{
    int n = 0;
    fsh_progress_lock();
    for (struct fsh_ctx *c = ctx_list; c; c = c->next) {
        n += c->team == team && (c->options & mask);
    }
    fsh_progress_unlock();
    return n;
}
