/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.c: puts and gets as libfabric RMA writes and reads.
 *
 * Owns the posting of data operations and their completion accounting per context. Rules kept
 * here:
 *  - No ordering between operations is assumed (EFA's SRD delivers out of order). Quiet waits
 *    for the completion of every operation of the context, and those are requested delivery
 *    complete (FSH_XF_DELIVERED) where the provider has it: complete means visible at the target.
 *    Writes with immediate data are the exception: their landing is known from the target's
 *    event, never from their completion (see post()).
 *  - Where the provider has no delivery-complete (efa-direct: a write completes once the
 *    NIC sent it), a completion says nothing about the target's memory. Then every plain write
 *    carries immediate data too (FSH_IMM_ARRIVE, the source PE): the target's progress engine,
 *    which sees that event only once the write's data is in its memory, counts it in
 *    count[source], a word of its symmetric heap; the initiator counts what it posted to each
 *    PE, and quiet, after the completions, reads count[me] at every PE it wrote to since
 *    (8 bytes each, all in flight at once) until the counts reach what was posted before the
 *    quiet began. FABSHMEM_REMOTE_COMPLETION=count forces it on any provider, delivery keeps
 *    the provider's completion (arrive.c).
 *  - A put small enough is injected (FSH_XF_INJECT): the source may be reused at once, and the
 *    operation still completes later, which quiet counts. Where the fabric has a write counter
 *    such a put has no operation record and no completion entry: the counter counts it, and
 *    the context's track keeps a mark that quiet waits for (progress.c).
 *  - A transfer larger than the provider's message size is split into pieces.
 *  - Operations are handed to xport.c, which retries -FI_EAGAIN with progress.
 *  - Local buffers get a descriptor when the provider needs one (FI_MR_LOCAL): the segment's, or
 *    a temporary registration released when the operation completes.
 * It never reads the CQ itself (progress.c does) and never blocks except through
 * fsh_progress_wait*.
 *
 * Sessions (OpenSHMEM 1.6, a hint): in a BATCH session small puts to fabric peers are copied
 * into a per-context, per-PE batch and posted as one injected write that scatters them over up
 * to the provider's rma_iov_limit remote segments (contiguous ones merged), so N puts cost the
 * provider one message, one operation and one completion. Nothing is held while anybody waits:
 * every poll of the progress engine posts what is held (its post hook), as do quiet, fence,
 * pe_quiet, a get on the context, session stop and destroy. Puts in a batch are as unordered
 * as puts always are; one that overlaps a held one is not merged with it (the batch goes
 * first), so overlapping puts keep the order they would have had without the session.
 *
 * A PE whose segments are mapped here (local.c: PEs of this node, and this PE itself) is not
 * reached through the fabric at all: puts and gets are memory copies, complete on return, and
 * quiet and fence add the full memory fence local.c's ordering rules ask for.
 */
#include "rma.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "arrive.h"
#include "error.h"
#include "exchange.h"
#include "fabric.h"
#include "local.h"
#include "log.h"
#include "rt.h"
#include "xport.h"

struct fsh_ctx fsh_ctx_default = {.handle = FSH_CTX_DEFAULT_HANDLE};
static struct fsh_ctx *ctx_list = &fsh_ctx_default;
/* Slot 0 is the default context's for good (generation 1); the others are handed out by
 * create under the progress lock, which also guards gen[] and used. */
struct fsh_ctx_slot fsh_ctx_slots[FSH_CTX_SLOTS] = {
    [0] = {FSH_CTX_DEFAULT_HANDLE, &fsh_ctx_default}};
static struct {
    uintptr_t gen[FSH_CTX_SLOTS]; /* the generation last given out in each slot */
    unsigned used;                /* slots below this were handed out at least once */
} hs = {.gen = {[0] = 1}, .used = 1};
static int (*quiet_hook)(void);


/* A session's batches: BATCH_SLOTS open batches per context, chosen by PE (a put to another PE
 * of the same slot posts the held one first). Guarded by the engine lock. */
#define BATCH_SLOTS 4
struct batch_slot {
    int pe; /* -1: empty */
    size_t len, nseg;
    struct fsh_xseg seg[FSH_XREQ_SEGS];
    uint8_t *data; /* cap bytes: the payloads, in segment order */
};
struct fsh_batch {
    size_t cap;  /* bytes per write: the inject size, so the write is injected */
    size_t segs; /* remote segments per write */
    size_t ops;  /* puts batched since the last total_ops flush */
    struct batch_slot slot[BATCH_SLOTS];
};
static struct {
    unsigned held;  /* non-empty slots, all contexts: the post hook's fast exit at 0 */
    bool flushing;  /* the hook is posting (a post that polls must not re-enter it) */
} bs;

void fsh_rma_set_quiet_hook(int (*hook)(void))
{
    quiet_hook = hook;
}

/* The inject rule: small enough, and not device memory (a provider copies an injected payload
 * with the CPU). */
static bool injects(size_t len, bool dev)
{
    return len <= fsh_fabric_attr()->inject_size && !dev;
}

bool fsh_rma_injects(const void *src, size_t len)
{
    return injects(len, fsh_mr_is_device(src, len));
}

/* Post one piece: a write (optionally with immediate data) or a read, of the local buffer
 * [local, local + len) to or from the remote segments seg[0..nseg) (their lengths add up to
 * len; more than one only for a batch's write or a pair), with rail 0's keys (xport puts in
 * those of the way's rail). It takes way k to pe (the pieces of a striped transfer count k
 * up; 0 otherwise). */
static int post(struct fsh_ctx *ctx, struct fsh_op_track *sync, int kind, void *local, size_t len,
                int pe, const struct fsh_xseg *seg, size_t nseg, bool has_imm, uint64_t imm,
                unsigned k)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    struct fsh_path path = fsh_fabric_path(pe, k);
    bool write = kind != FSH_OP_GET;
    bool dev = fsh_mr_is_device(local, len);
    bool inject = write && injects(len, dev);
    void *desc = NULL;
    struct fsh_mr_tmp *tmp = NULL;
    /* A bounce slot (fsh_rma_put) is post()'s from here on: the record gives it back. */
    bool bounce = write && !inject && fsh_progress_bounce_owns(local);
    int rc = 0;
    fsh_progress_lock();
    if (bounce) {
        desc = fa->mr_local ? fsh_progress_bounce_desc(path.rail) : NULL;
    } else if (!inject && (fa->mr_local || dev)) {
        rc = fsh_mr_desc(local, len, path.rail, &desc, &tmp);
        if (rc != 0) {
            goto unlock;
        }
    }
    /* An injected write nobody waits for by itself is counted, not tracked: no record, no
     * completion entry; the context's quiet waits for the write counter. */
    bool counted = inject && !sync && fsh_progress_counts_writes();
    struct fsh_op *op = NULL;
    if (!counted) {
        op = fsh_progress_op_get(kind, pe, len);
        if (!op) {
            if (tmp) {
                fsh_mr_release(tmp);
            }
            if (bounce) {
                fsh_progress_bounce_give(local);
            }
            rc = fsh_err_last() ? fsh_err_last()->code : -EIO;
            goto unlock;
        }
        op->track = &ctx->track;
        op->sync = sync;
        op->tmp_mr = tmp;
        op->bounce = bounce ? local : NULL;
    }
    /* Delivery-complete where the provider has it, so a completion means visible at the
     * target; but not for a write with immediate data: the target's event says when it
     * landed, and whoever waits for its effect learns it from there (signals: the applied
     * counts quiet reads; collectives and device requests: the target's reply), so the
     * initiator's completion only frees the source, and shm then needs no response per write
     * (put-with-signal ping-pong 2.3 -> 1.25 us at 64 B). Reads carry the endpoint's level
     * too, as fi_read would: shm takes a read without it by process_vm_readv from the
     * initiator, 2 us for 8 bytes where the target's progress engine answers in 0.8 us. */
    bool counted_arrival = write && !has_imm && fsh_arrive_active;
    if (counted_arrival) {
        has_imm = true;
        imm = fsh_arrive_imm(0);
    }
    bool dc = fa->delivery_complete && !has_imm;
    unsigned flags = (counted ? 0 : FSH_XF_COMPLETION) | (dc ? FSH_XF_DELIVERED : 0);
    if (write) {
        flags |= inject ? FSH_XF_INJECT : 0;
        flags |= has_imm ? FSH_XF_IMM : 0;
    }
    struct fsh_xreq r = {
        .type = write ? FSH_X_WRITE : FSH_X_READ,
        .op = op,
        .counted = &ctx->track,
        .pe = pe,
        .path = path,
        .local = local,
        .len = len,
        .desc = desc,
        .raddr = seg[0].addr,
        .key = seg[0].key,
        .data = imm,
        .flags = flags,
    };
    if (nseg > 1) {
        memcpy(r.seg, seg, nseg * sizeof(*seg));
        r.nseg = nseg;
    }
    rc = fsh_xport_post(&r);
    if (rc == 0 && counted_arrival) {
        fsh_arrive_posted(0, pe);
    }
unlock:
    fsh_progress_unlock();
    return rc;
}

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
} ln;

/* The lane a put or get of ctx takes for [local, local + len): ctx's own, unless the buffer
 * would need work of the engine's (device memory; a descriptor the provider wants for memory
 * outside the symmetric segments, which takes a temporary registration). */
static struct fsh_lane *lane_for(const struct fsh_ctx *ctx, const void *local, size_t len)
{
    if (!ctx->lane || fsh_mr_is_device(local, len)) {
        return NULL;
    }
    enum fsh_seg seg;
    uint64_t off;
    if (fsh_fabric_attr()->mr_local && fsh_mr_lookup(local, len, &seg, &off) != 0) {
        return NULL;
    }
    return ctx->lane;
}

/* post() on ctx's lane: a record of the lane for every operation (no write counter, no
 * chaos), counted on ctx->ltrack, under the lane's lock alone. Where targets count arrivals,
 * a write carries the lane's slot (ctx->slot) and waits while a quiet reads its counts. */
static int post_lane(struct fsh_lane *lane, struct fsh_ctx *ctx, struct fsh_op_track *sync,
                     int kind, void *local, size_t len, int pe, const struct fsh_xseg *seg,
                     unsigned k)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    bool write = kind != FSH_OP_GET;
    /* host memory (lane_for); in a multi-rail job up to what its record keeps a copy of */
    bool inject = write && injects(len, false) && len <= fsh_xport_lane_inject();
    struct fsh_path path = fsh_fabric_path(pe, k);
    bool counted = write && fsh_arrive_active;
    void *desc = NULL;
    struct fsh_mr_tmp *tmp = NULL;
    int rc = 0;
    fsh_lane_lock(lane);
    /* A bounce slot (lane_bounce_put) is the record's from here on. */
    bool bounce = write && !inject && fsh_lane_bounce_owns(lane, local);
    while (counted && fsh_arrive_quieting(ctx->slot)) {
        fsh_lane_unlock(lane);
        sched_yield();
        fsh_lane_lock(lane);
    }
    if (bounce) {
        desc = fa->mr_local ? fsh_lane_bounce_desc(lane, path.rail) : NULL;
    } else if (!inject && fa->mr_local) {
        rc = fsh_mr_desc(local, len, path.rail, &desc, &tmp); /* a segment's (lane_for): no tmp */
    }
    struct fsh_op *op = rc == 0 ? fsh_lane_op_get(lane, kind, pe, len) : NULL;
    if (!op && bounce) {
        fsh_lane_bounce_give(lane, local);
    }
    if (op) {
        op->track = &ctx->ltrack;
        op->sync = sync;
        op->bounce = bounce ? local : NULL;
        bool dc = fa->delivery_complete && !counted;
        struct fsh_xreq r = {
            .type = write ? FSH_X_WRITE : FSH_X_READ,
            .op = op,
            .pe = pe,
            .path = path,
            .local = local,
            .len = len,
            .desc = desc,
            .raddr = seg->addr,
            .key = seg->key,
            .data = counted ? fsh_arrive_imm(ctx->slot) : 0,
            .flags = FSH_XF_COMPLETION | (dc ? FSH_XF_DELIVERED : 0) |
                     (inject ? FSH_XF_INJECT : 0) | (counted ? FSH_XF_IMM : 0),
        };
        rc = fsh_xport_post_lane(lane, &r);
        if (rc == 0 && counted) {
            fsh_arrive_posted(ctx->slot, pe);
        }
    } else if (rc == 0) {
        rc = fsh_err_last() ? fsh_err_last()->code : -EIO;
    }
    fsh_lane_unlock(lane);
    return rc;
}

/* Post one piece to one remote range. */
static int post_to(struct fsh_ctx *ctx, struct fsh_op_track *sync, int kind, void *local,
                   size_t len, int pe, uint64_t raddr, uint64_t key, bool has_imm, uint64_t imm)
{
    struct fsh_xseg seg = {raddr, len, key};
    return post(ctx, sync, kind, local, len, pe, &seg, 1, has_imm, imm, 0);
}

/* Below this a transfer goes whole on one rail: a piece of a striped one is at least half. */
#define STRIPE_MIN ((size_t)64 << 10)

/* Post [0, len) on lane (lane_for; NULL: through the engine) in pieces of at most the
 * provider's message size; with several ways to pe and
 * at least STRIPE_MIN bytes, in pieces of about equal size on every way, so that every rail
 * carries its share and they end together. */
static int post_split(struct fsh_ctx *ctx, struct fsh_lane *lane, struct fsh_op_track *sync,
                      int kind, void *local, enum fsh_seg seg, uint64_t off, size_t len, int pe)
{
    size_t max = fsh_fabric_attr()->max_msg_size;
    unsigned ways = fsh_fabric_ways(pe);
    if (ways > 1 && len >= STRIPE_MIN) {
        size_t per = (len + ways - 1) / ways;
        per = (per + 63) & ~(size_t)63;
        max = per < max ? per : max;
    }
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);
    unsigned k = 0;
    for (size_t done = 0; done < len; k++) {
        size_t n = len - done < max ? len - done : max;
        struct fsh_xseg piece = {raddr + done, n, key};
        int rc = lane ? post_lane(lane, ctx, sync, kind, (char *)local + done, n, pe, &piece, k)
                      : post(ctx, sync, kind, (char *)local + done, n, pe, &piece, 1, false, 0, k);
        if (rc != 0) {
            return rc;
        }
        done += n;
    }
    return 0;
}

/* Post what the slot holds (one injected write) and empty it. Caller holds the engine lock. */
static int flush_slot(struct fsh_ctx *ctx, struct batch_slot *s)
{
    FSH_ASSERT_ENGINE_HELD();
    if (s->pe < 0) {
        return 0;
    }
    /* Emptied first: a post that polls (queue full) runs the post hook, which must not post
     * this batch again. The payload stays put until the post returned (it is injected). */
    struct batch_slot out = *s;
    s->pe = -1;
    s->len = 0;
    s->nseg = 0;
    bs.held--;
    return post(ctx, NULL, FSH_OP_PUT, out.data, out.len, out.pe, out.seg, out.nseg, false, 0,
                0);
}

static int flush_ctx(struct fsh_ctx *ctx)
{
    int rc = 0;
    for (size_t i = 0; ctx->batch && i < BATCH_SLOTS; i++) {
        int frc = flush_slot(ctx, &ctx->batch->slot[i]);
        rc = rc ? rc : frc;
    }
    return rc;
}

static int flush_ctx_locked(struct fsh_ctx *ctx)
{
    if (!ctx->batch) {
        return 0;
    }
    fsh_progress_lock();
    int rc = flush_ctx(ctx);
    fsh_progress_unlock();
    return rc;
}

/* The post hook: any poll posts every held batch. */
static int flush_held(void)
{
    if (bs.held == 0 || bs.flushing) {
        return 0;
    }
    bs.flushing = true;
    int rc = 0;
    for (struct fsh_ctx *c = ctx_list; c; c = c->next) {
        int frc = flush_ctx(c);
        rc = rc ? rc : frc;
    }
    bs.flushing = false;
    return rc;
}

/* May the put [raddr, raddr + len) under key join what slot s holds for pe? */
static bool joins(const struct fsh_batch *b, const struct batch_slot *s, int pe, uint64_t raddr,
                  uint64_t key, size_t len)
{
    if (s->pe != pe || s->len + len > b->cap) {
        return false;
    }
    for (size_t i = 0; i < s->nseg; i++) {
        const struct fsh_xseg *g = &s->seg[i];
        if (g->key == key && raddr < g->addr + g->len && g->addr < raddr + len) {
            return false; /* overlaps a held put: that one goes first */
        }
    }
    const struct fsh_xseg *last = &s->seg[s->nseg - 1];
    return s->nseg < b->segs || (last->key == key && last->addr + last->len == raddr);
}

/* Add a put to ctx's batch for pe. Caller holds the engine lock; ctx->batch is set. */
static int batch_put(struct fsh_ctx *ctx, int pe, uint64_t raddr, uint64_t key, const void *src,
                     size_t len)
{
    FSH_ASSERT_ENGINE_HELD();
    struct fsh_batch *b = ctx->batch;
    struct batch_slot *s = &b->slot[(unsigned)pe % BATCH_SLOTS];
    if (s->pe >= 0 && !joins(b, s, pe, raddr, key, len)) {
        int rc = flush_slot(ctx, s);
        if (rc != 0) {
            return rc;
        }
    }
    if (s->pe < 0) {
        s->pe = pe;
        bs.held++;
    }
    struct fsh_xseg *last = s->nseg ? &s->seg[s->nseg - 1] : NULL;
    if (last && last->key == key && last->addr + last->len == raddr) {
        last->len += len;
    } else {
        s->seg[s->nseg++] = (struct fsh_xseg){raddr, len, key};
    }
    memcpy(s->data + s->len, src, len);
    s->len += len;
    /* total_ops puts issued: the session's expected work is all here, nothing more will join
     * it, so it goes now rather than at the next poll. */
    if (++b->ops >= ctx->total_ops) {
        b->ops = 0;
        return flush_ctx(ctx);
    }
    return 0;
}

/* Batching pays when at least two puts fit a write and the session expects more than one. */
static bool batch_wanted(const struct fsh_ctx *ctx)
{
    return ctx->session_batch && ctx->total_ops >= 2 && fsh_fabric_attr()->inject_size >= 16;
}

static int batch_alloc(struct fsh_ctx *ctx)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    size_t cap = fa->inject_size;
    struct fsh_batch *b = calloc(1, sizeof(*b) + BATCH_SLOTS * cap);
    if (!b) {
        FSH_DEBUG("session: no memory for a batch; the session's puts are posted one by one");
        return 0; /* a hint: without the batch, puts go as always */
    }
    b->cap = cap;
    b->segs = fa->rma_iov_limit < FSH_XREQ_SEGS ? fa->rma_iov_limit : FSH_XREQ_SEGS;
    for (size_t i = 0; i < BATCH_SLOTS; i++) {
        b->slot[i].pe = -1;
        b->slot[i].data = (uint8_t *)(b + 1) + i * cap;
    }
    ctx->batch = b;
    fsh_progress_set_post_hook(FSH_POST_BATCHES, flush_held);
    return 0;
}

/* Post what is held and drop the batch. Caller holds the engine lock. */
static int batch_free(struct fsh_ctx *ctx)
{
    FSH_ASSERT_ENGINE_HELD();
    int rc = flush_ctx(ctx);
    free(ctx->batch);
    ctx->batch = NULL;
    return rc;
}

int fsh_rma_session_start(struct fsh_ctx *ctx, bool batch, size_t total_ops, bool has_total)
{
    fsh_progress_lock();
    if (!ctx->session) {
        ctx->session = true;
        ctx->session_batch = false;
        ctx->total_ops = SIZE_MAX;
    }
    ctx->session_batch |= batch;
    if (has_total) {
        ctx->total_ops = total_ops;
    }
    int rc = 0;
    if (batch_wanted(ctx) && !ctx->batch) {
        rc = batch_alloc(ctx);
    } else if (!batch_wanted(ctx) && ctx->batch) {
        rc = batch_free(ctx);
    }
    fsh_progress_unlock();
    return rc;
}

int fsh_rma_session_stop(struct fsh_ctx *ctx)
{
    fsh_progress_lock();
    int rc = ctx->batch ? batch_free(ctx) : 0;
    ctx->session = false;
    ctx->session_batch = false;
    ctx->total_ops = SIZE_MAX;
    fsh_progress_unlock();
    return rc;
}

/* A blocking put of at most the bounce size (FABSHMEM_BOUNCE_SIZE) through the engine: copied
 * into a bounce slot and posted from there, so it returns without waiting for its completion;
 * quiet waits for it as for a put_nbi. 1 when no slot is free (the caller posts from src and
 * waits), else 0 or -errno. A context with an endpoint of its own uses its lane's slots
 * (lane_bounce_put). */
static int bounce_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                      size_t len, int pe)
{
    fsh_progress_lock();
    void *slot = fsh_progress_bounce_take(len);
    int rc = 1;
    if (slot) {
        memcpy(slot, src, len);
        rc = fsh_rma_write(ctx, NULL, slot, len, pe, seg, off, false, 0);
    }
    fsh_progress_unlock();
    return rc;
}

/* Bounce slots: why there are none, for SHMEM_INFO (NULL: there are, or no fabric). */
static struct {
    const char *why;
    size_t put_max; /* FABSHMEM_BOUNCE_SIZE as applied; a slot holds FSH_RMA_BOUNCE_EXTRA more */
} bn;

/* Auto: on every provider but shm. shm's write completes once the provider copied it into
 * the target (1 KiB: 0.84 us for put_ret here), where another provider's waits for the
 * target's answer over the network (tcp: 10.5 us); copying 8 KiB takes well under a
 * microsecond. */
#define BOUNCE_AUTO ((size_t)8 << 10)

int fsh_rma_bounce_init(long size, long slots)
{
    /* Both in range (env.c's limits). */
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    size_t want = size < 0 ? (strcmp(fa->prov, "shm") == 0 ? 0 : BOUNCE_AUTO) : (size_t)size;
    if (fsh_fabric_none()) {
        return 0;
    }
    if (want == 0 || slots == 0) {
        bn.why = size < 0 ? "none: shm completes a write once it copied it into the target "
                            "(FABSHMEM_BOUNCE_SIZE sets a size)"
                          : "none (FABSHMEM_BOUNCE_SIZE=0 or FABSHMEM_BOUNCE_SLOTS=0)";
        return 0;
    }
    if (want > fa->max_msg_size) {
        want = fa->max_msg_size;
    }
    /* Nothing to gain at or below the inject size: such a put is copied by the provider. */
    if (want <= fa->inject_size) {
        bn.why = "none: FABSHMEM_BOUNCE_SIZE is not above the inject size";
        return 0;
    }
    int rc = fsh_progress_bounce_init(want + FSH_RMA_BOUNCE_EXTRA, (size_t)slots);
    bn.put_max = rc == 0 ? want : 0;
    return rc;
}

void fsh_rma_bounce_describe(char *buf, size_t len)
{
    size_t size = bn.put_max;
    if (size) {
        snprintf(buf, len, "%zu slots of %zu bytes: a blocking put above the inject size and up to "
                 "%zu bytes is copied and returns (FABSHMEM_BOUNCE_SIZE, FABSHMEM_BOUNCE_SLOTS)",
                 (size_t)fsh_env()->FABSHMEM_BOUNCE_SLOTS, size, size);
    } else {
        snprintf(buf, len, "%s", bn.why ? bn.why : "none");
    }
}

/* bounce_put on ctx's own endpoint, from a slot of the lane's (any source: the slot has the
 * descriptor). The lock is let go before the post, whose waits must be able to let it go
 * (a recursive hold would keep it through them). */
static int lane_bounce_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                           size_t len, int pe)
{
    fsh_lane_lock(ctx->lane);
    void *slot = fsh_lane_bounce_take(ctx->lane, len);
    fsh_lane_unlock(ctx->lane);
    if (!slot) {
        return 1;
    }
    memcpy(slot, src, len);
    return post_split(ctx, ctx->lane, NULL, FSH_OP_PUT, slot, seg, off, len, pe);
}

/* Wait for a blocking call's own operations, all posted on lane (NULL: through the engine):
 * one way per call, so that its track is counted under one lock. */
static int wait_sync(struct fsh_lane *lane, const struct fsh_op_track *sync, const char *what)
{
    return lane ? fsh_lane_wait_track(lane, sync, what) : fsh_progress_wait_track(sync, what);
}

int fsh_rma_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src, size_t len,
                int pe, bool nbi)
{
    if (len == 0) {
        return 0;
    }
    void *dst = fsh_local_addr(pe, seg, off);
    if (dst) {
        memcpy(dst, src, len);
        return 0;
    }
    /* In a batch session a small put is copied into the batch: the source is free at once,
     * blocking or not, as an injected put's is. */
    /* (A batch holds the inject size: the size test needs no lock, and a larger put skips the
     * lookups.) */
    if (ctx->batch && len <= fsh_fabric_attr()->inject_size / 2 && !fsh_mr_is_device(src, len)) {
        uint64_t raddr, key;
        fsh_mr_remote(pe, seg, off, &raddr, &key);
        fsh_progress_lock();
        int rc = ctx->batch ? batch_put(ctx, pe, raddr, key, src, len) : 1;
        fsh_progress_unlock();
        if (rc <= 0) {
            return rc;
        }
    }
    /* An injected put leaves the source free at once; anything larger must complete before a
     * blocking put returns, because the provider reads the source until then, unless it was
     * copied into a bounce slot. */
    struct fsh_lane *lane = lane_for(ctx, src, len);
    if (nbi || (fsh_rma_injects(src, len) && (!lane || len <= fsh_xport_lane_inject()))) {
        return post_split(ctx, lane, NULL, FSH_OP_PUT, (void *)src, seg, off, len, pe);
    }
    if (len <= bn.put_max && !fsh_mr_is_device(src, len)) {
        /* On the context's own endpoint, from its slots, whatever the source (lane_for may
         * have sent an unregistered one to the engine). */
        int rc = ctx->lane ? lane_bounce_put(ctx, seg, off, src, len, pe)
                           : bounce_put(ctx, seg, off, src, len, pe);
        if (rc <= 0) {
            return rc;
        }
    }
    struct fsh_op_track sync = {0, 0, 0};
    int rc = post_split(ctx, lane, &sync, FSH_OP_PUT, (void *)src, seg, off, len, pe);
    int wrc = wait_sync(lane, &sync, "put: waiting for the transfer to complete");
    return rc ? rc : wrc;
}

int fsh_rma_get(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, size_t len,
                int pe, bool nbi)
{
    if (len == 0) {
        return 0;
    }
    const void *from = fsh_local_addr(pe, seg, off);
    if (from) {
        memcpy(dest, from, len);
        return 0;
    }
    int frc = flush_ctx_locked(ctx); /* a get reads after the puts held before it */
    if (frc != 0) {
        return frc;
    }
    if (nbi) {
        return post_split(ctx, lane_for(ctx, dest, len), NULL, FSH_OP_GET, dest, seg, off, len,
                          pe);
    }
    struct fsh_op_track sync = {0, 0, 0};
    struct fsh_lane *lane = lane_for(ctx, dest, len);
    int rc = post_split(ctx, lane, &sync, FSH_OP_GET, dest, seg, off, len, pe);
    int wrc = wait_sync(lane, &sync, "get: waiting for the data");
    return rc ? rc : wrc;
}

/* Strided transfers move nblocks blocks of bsize contiguous elements (iput/iget: blocks of one
 * element); block i is at i*rstride elements from the remote start and i*lstride from the local
 * one. Each block is one transfer (split at the provider's message size like any put), all
 * posted before the one wait, so they travel concurrently; when both strides equal bsize the
 * blocks touch and the whole is one contiguous transfer. Blocking: complete on return. */
static int strided(struct fsh_ctx *ctx, int kind, char *local, enum fsh_seg seg, uint64_t off,
                   ptrdiff_t rstride, ptrdiff_t lstride, size_t bsize, size_t nblocks,
                   size_t esize, int pe)
{
    size_t bbytes = bsize * esize;
    if (nblocks == 0 || bbytes == 0) {
        return 0;
    }
    ptrdiff_t rstep = rstride * (ptrdiff_t)esize, lstep = lstride * (ptrdiff_t)esize;
    char *mapped = fsh_local_addr(pe, seg, off);
    if (mapped) {
        for (size_t i = 0; i < nblocks; i++) {
            char *r = mapped + (ptrdiff_t)i * rstep;
            char *l = local + (ptrdiff_t)i * lstep;
            memcpy(kind == FSH_OP_GET ? l : r, kind == FSH_OP_GET ? r : l, bbytes);
        }
        return 0;
    }
    if ((size_t)rstride == bsize && (size_t)lstride == bsize) {
        bbytes *= nblocks; /* contiguous on both sides: one block */
        nblocks = 1;
    }
    /* One way for all blocks: the call's own track is counted under one lock. */
    struct fsh_lane *lane = ctx->lane;
    for (size_t i = 0; i < nblocks && lane; i++) {
        lane = lane_for(ctx, local + (ptrdiff_t)i * lstep, bbytes);
    }
    struct fsh_op_track sync = {0, 0, 0};
    int rc = 0;
    for (size_t i = 0; i < nblocks && rc == 0; i++) {
        rc = post_split(ctx, lane, &sync, kind, local + (ptrdiff_t)i * lstep, seg,
                        off + (uint64_t)((ptrdiff_t)i * rstep), bbytes, pe);
    }
    int wrc = wait_sync(lane, &sync, kind == FSH_OP_GET ? "iget: waiting for the data"
                                                       : "iput: waiting for the transfer");
    return rc ? rc : wrc;
}

int fsh_rma_ibput(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe)
{
    return strided(ctx, FSH_OP_PUT, (char *)src, seg, off, dst, sst, bsize, nblocks, esize, pe);
}

int fsh_rma_ibget(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, ptrdiff_t dst,
                  ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe)
{
    return strided(ctx, FSH_OP_GET, dest, seg, off, sst, dst, bsize, nblocks, esize, pe);
}

int fsh_rma_write(struct fsh_ctx *ctx, struct fsh_op_track *sync, const void *src, size_t len,
                  int pe, enum fsh_seg seg, uint64_t off, bool has_imm, uint64_t imm)
{
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);
    return post_to(ctx, sync, has_imm ? FSH_OP_PUT_IMM : FSH_OP_PUT, (void *)src, len, pe, raddr,
                   key, has_imm, imm);
}

bool fsh_rma_pair_fits(size_t len_a, const void *data, size_t len_b)
{
    return fsh_fabric_attr()->rma_iov_limit >= 2 &&
           injects(len_a + len_b, fsh_mr_is_device(data, len_b));
}

int fsh_rma_write_pair(struct fsh_ctx *ctx, const void *src, int pe, enum fsh_seg seg_a,
                       uint64_t off_a, size_t len_a, enum fsh_seg seg_b, uint64_t off_b,
                       size_t len_b, uint32_t imm)
{
    struct fsh_xseg segs[2] = {{.len = len_a}, {.len = len_b}};
    fsh_mr_remote(pe, seg_a, off_a, &segs[0].addr, &segs[0].key);
    fsh_mr_remote(pe, seg_b, off_b, &segs[1].addr, &segs[1].key);
    return post(ctx, NULL, FSH_OP_PUT_IMM, (void *)src, len_a + len_b, pe, segs, 2, true, imm, 0);
}

size_t fsh_rma_max_write(void)
{
    return fsh_fabric_attr()->max_msg_size;
}

int fsh_rma_read(struct fsh_ctx *ctx, struct fsh_op_track *sync, void *dest, size_t len, int pe,
                 enum fsh_seg seg, uint64_t off)
{
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);
    return post_to(ctx, sync, FSH_OP_GET, dest, len, pe, raddr, key, false, 0);
}

int fsh_rma_read_way(struct fsh_ctx *ctx, struct fsh_op_track *sync, void *dest, size_t len,
                     int pe, enum fsh_seg seg, uint64_t off, unsigned way)
{
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);
    struct fsh_xseg piece = {raddr, len, key};
    return post(ctx, sync, FSH_OP_GET, dest, len, pe, &piece, 1, false, 0,
                fsh_fabric_k_of_way(pe, way));
}

int fsh_rma_read_word(int pe, uint64_t off, void *landing, size_t size, uint64_t *value,
                      const char *what)
{
    const void *mapped = fsh_local_addr(pe, FSH_SEG_HEAP, off);
    const void *from = mapped ? mapped : landing;
    if (!mapped) {
        struct fsh_op_track sync = {0, 0, 0};
        int rc = fsh_rma_read(&fsh_ctx_default, &sync, landing, size, pe, FSH_SEG_HEAP, off);
        if (rc == 0) {
            rc = fsh_progress_wait_track(&sync, what);
        }
        if (rc != 0) {
            return rc;
        }
    }
    *value = size == sizeof(uint32_t) ? __atomic_load_n((const uint32_t *)from, __ATOMIC_ACQUIRE)
                                      : __atomic_load_n((const uint64_t *)from, __ATOMIC_ACQUIRE);
    return 0;
}

static int quiet_track(struct fsh_ctx *ctx)
{
    int rc = flush_ctx_locked(ctx);
    if (rc == 0 && ctx->lane) {
        rc = fsh_lane_wait_track(ctx->lane, &ctx->ltrack,
                                 "quiet: waiting for outstanding operations");
    }
    if (rc == 0 && ctx->slot) {
        rc = fsh_arrive_lane_quiet(ctx, ctx->lane, ctx->slot);
    }
    if (rc != 0) {
        return rc;
    }
    return fsh_progress_wait_track(&ctx->track, "quiet: waiting for outstanding operations");
}

/* What quiet completes per target PE, not per context, once for every kind of quiet: the
 * arrivals counted at targets, then the signals they applied (the hook). */
static int per_pe_quiet(void)
{
    int rc = fsh_arrive_quiet();
    if (rc == 0 && quiet_hook) {
        rc = quiet_hook();
    }
    return rc;
}

int fsh_rma_quiet(struct fsh_ctx *ctx)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* local puts before what follows (local.c) */
    int rc = quiet_track(ctx);
    return rc ? rc : per_pe_quiet();
}

struct pe_wait {
    const struct fsh_op_track *track;
    const bool *pes;
};

static bool pes_idle(const void *arg)
{
    const struct pe_wait *w = arg;
    return fsh_progress_track_idle_to(w->track, w->pes);
}

int fsh_rma_pe_quiet(struct fsh_ctx *ctx, const bool *pes, int one)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* local puts before what follows (local.c) */
    if (!pes) {
        return 0;
    }
    int rc = flush_ctx_locked(ctx);
    if (rc != 0) {
        return rc;
    }
    const char *what = "pe_quiet: waiting for the operations to the chosen PEs";
    if (ctx->lane) {
        rc = fsh_lane_wait_idle_to(ctx->lane, &ctx->ltrack, pes, what, one);
        if (rc == 0 && ctx->slot) {
            /* every PE it wrote to: more than asked, never less */
            rc = fsh_arrive_lane_quiet(ctx, ctx->lane, ctx->slot);
        }
        if (rc != 0) {
            return rc;
        }
    }
    struct pe_wait w = {&ctx->track, pes};
    rc = fsh_progress_wait(pes_idle, &w, what, one);
    return rc ? rc : per_pe_quiet();
}

int fsh_rma_fence(struct fsh_ctx *ctx)
{
    return fsh_rma_quiet(ctx);
}

int fsh_rma_quiet_all(void)
{
    int rc = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    fsh_progress_lock();
    for (struct fsh_ctx *c = ctx_list; c && rc == 0; c = c->next) {
        rc = quiet_track(c);
    }
    fsh_progress_unlock();
    return rc ? rc : per_pe_quiet();
}

const char *fsh_rma_ctx_why(uintptr_t handle)
{
    if (handle == 0) {
        return "is SHMEM_CTX_INVALID";
    }
    uintptr_t gen = handle >> FSH_CTX_IDX_BITS;
    fsh_progress_lock();
    uintptr_t last = hs.gen[handle & (FSH_CTX_SLOTS - 1)];
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
    ln.pool = calloc((size_t)(n > 0 ? n : 1), sizeof(*ln.pool));
    if (!ln.pool) {
        return fsh_err(-ENOMEM, "set FABSHMEM_CTX_ENDPOINTS=0",
                       "out of memory for %ld contexts' endpoints", n);
    }
    while (ln.npool < n) {
        if (fsh_lane_open(&ln.pool[ln.npool]) != 0) {
            /* The provider's limit: the contexts have as many as it gave. */
            const struct fsh_error *e = fsh_err_last();
            snprintf(ln.failed, sizeof(ln.failed), "opening the %ld%s at init failed: %.120s",
                     ln.npool + 1, ln.npool == 0 ? "st" : "th", e ? e->msg : "");
            fsh_err_clear();
            break;
        }
        ln.npool++;
    }
    ln.opened = ln.npool;
    return 0;
}

size_t fsh_rma_lane_names(uint8_t *names, size_t stride, size_t max, uint16_t *len)
{
    size_t n = 0;
    int nrails = fsh_fabric_nrails();
    *len = 0;
    for (long i = 0; i < ln.npool && n + (size_t)nrails <= max; i++) {
        for (int r = 0; r < nrails; r++) {
            size_t l = stride;
            if (fsh_fabric_lane_name(r, fsh_lane_ep(ln.pool[i], r), names + (n + r) * stride,
                                     &l) != 0 ||
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
    while (ln.npool > 0) {
        fsh_lane_close(ln.pool[--ln.npool]);
    }
    free(ln.pool);
    ln.pool = NULL;
}

void fsh_rma_lanes_init(long limit)
{
    ln.why_not = limit == 0 ? "FABSHMEM_CTX_ENDPOINTS=0" : fsh_fabric_lanes_why_not();
    ln.automatic = limit < 0;
    if (!ln.why_not && ln.automatic) {
        limit = lanes_auto(fsh_rt.npes);
        ln.why_not = limit == 0 ? "every endpoint keeps a connection per peer, and the open-file "
                                  "limit leaves none for them at this PE count (raise ulimit -n, "
                                  "or set FABSHMEM_CTX_ENDPOINTS)"
                                : NULL;
    }
    if (!ln.why_not && fsh_arrive_counts()) {
        /* Each lane's writes are counted apart at the targets: no more lanes than slots. */
        long slots = fsh_arrive_lanes();
        limit = limit < slots ? limit : slots;
        ln.why_not = limit == 0 ? "quiet counts arrivals at the targets, per endpoint, and at "
                                  "this PE count the counts of even one would take more than "
                                  "the 2 MiB of heap they may have"
                                : NULL;
    }
    if (!ln.why_not && fsh_fabric_attr()->av_first) {
        /* Only those opened at init and published: a target knows no other. */
        limit = limit < ln.opened ? limit : ln.opened;
        ln.why_not = limit > 0     ? NULL
                     : ln.failed[0] ? ln.failed
                                    : "a target must have an endpoint's address before its "
                                      "first operation (efa-direct), and none was opened at init";
    }
    ln.limit = ln.why_not ? 0 : limit;
    ln.committed = 0;
    ln.open = 0;
    if (ln.why_not) {
        pool_close();
    }
}

void fsh_rma_lanes_reserve(struct fsh_lane_reserve *r, int n)
{
    fsh_progress_lock();
    long room = ln.limit - ln.committed;
    r->granted = n <= 0 ? 0 : n < room ? n : (int)(room > 0 ? room : 0);
    r->taken = 0;
    ln.committed += r->granted;
    fsh_progress_unlock();
}

void fsh_rma_lanes_unreserve(struct fsh_lane_reserve *r)
{
    fsh_progress_lock();
    ln.committed -= r->granted;
    r->granted = 0;
    fsh_progress_unlock();
}

void fsh_rma_lanes_describe(char *buf, size_t len)
{
    if (ln.why_not) {
        snprintf(buf, len, "none: every context posts through the engine's endpoint (%s)",
                 ln.why_not);
    } else {
        int rails = fsh_fabric_nrails();
        snprintf(buf, len, "up to %ld (FABSHMEM_CTX_ENDPOINTS%s), %ld in use%s%s: a context "
                 "created while one is left has %s, and a lock of its own%s", ln.limit,
                 ln.automatic ? "=-1, auto" : "", ln.open,
                 ln.pool ? ", opened at init and known to every PE (a target must know an "
                           "endpoint first)" : "",
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
    if (ln.limit <= 0) {
        fsh_progress_unlock(); /* opening one failed since this context's check */
        return;
    }
    if (reserve && reserve->taken < reserve->granted) {
        reserve->taken++;
        c->reserve = reserve;
    } else if (ln.committed < ln.limit) {
        ln.committed++;
    } else {
        fsh_progress_unlock();
        return;
    }
    long open = ++ln.open;
    /* Where targets count arrivals, a slot of counts of its own (lanes_init keeps the limit
     * within the slots; none only when its lists cannot be allocated). */
    c->slot = fsh_arrive_slot_take();
    if (fsh_arrive_active && c->slot == 0) {
        fsh_progress_unlock();
        lane_give(c);
        return;
    }
    if (ln.pool) {
        /* One opened at init (the limit keeps within them, so one is left). */
        c->lane = ln.pool[--ln.npool];
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
        if (!ln.why_not) {
            snprintf(ln.failed, sizeof(ln.failed), "opening one failed: %.170s", e ? e->msg : "");
            ln.why_not = ln.failed;
            __atomic_store_n(&ln.limit, 0, __ATOMIC_RELAXED);
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
    if (!ln.pool) {
        fsh_lane_close(c->lane);
    }
    fsh_progress_lock();
    if (ln.pool && c->lane) {
        ln.pool[ln.npool++] = c->lane;
    }
    c->lane = NULL;
    if (c->reserve) {
        c->reserve->taken--;
        c->reserve = NULL;
    } else {
        ln.committed--;
    }
    fsh_arrive_slot_give(c->slot);
    c->slot = 0;
    ln.open--;
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
    if (__atomic_load_n(&ln.limit, __ATOMIC_RELAXED) > 0) {
        lane_take(c, reserve);
    }
    fsh_progress_lock();
    /* A slot never used first, so that a freed one rests (and its stale handles stay
     * recognisable as destroyed rather than as another context) as long as possible. */
    unsigned i = hs.used;
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
    hs.used = i + 1 > hs.used ? i + 1 : hs.used;
    c->handle = (++hs.gen[i] << FSH_CTX_IDX_BITS) | i;
    fsh_ctx_slots[i].ctx = c;
    __atomic_store_n(&fsh_ctx_slots[i].handle, c->handle, __ATOMIC_RELEASE);
    c->next = ctx_list;
    ctx_list = c;
    fsh_progress_unlock();
    *out = c;
    return 0;
}

int fsh_rma_ctx_destroy(struct fsh_ctx *ctx)
{
    /* The spec: destroying a context completes its outstanding operations. */
    int rc = fsh_rma_quiet(ctx);
    fsh_progress_lock();
    __atomic_store_n(&fsh_ctx_slots[ctx->handle & (FSH_CTX_SLOTS - 1)].handle, 0,
                     __ATOMIC_RELEASE);
    for (struct fsh_ctx **p = &ctx_list; *p; p = &(*p)->next) {
        if (*p == ctx) {
            *p = ctx->next;
            break;
        }
    }
    if (ctx->batch) {
        int brc = batch_free(ctx); /* quiet posted what it held: nothing left to post */
        rc = rc ? rc : brc;
    }
    fsh_progress_unlock();
    if (ctx->lane) {
        lane_give(ctx);
    }
    free(ctx);
    return rc;
}

void fsh_rma_fini(void)
{
    /* Contexts the program did not destroy end with the library (their operations completed
     * in finalize's quiet); their slots keep their generations, so a handle kept across a
     * later shmem_init is still recognised as destroyed. The default context starts over: a
     * new engine counts its writes from zero. */
    while (ctx_list != &fsh_ctx_default) {
        struct fsh_ctx *c = ctx_list;
        ctx_list = c->next;
        fsh_ctx_slots[c->handle & (FSH_CTX_SLOTS - 1)].handle = 0;
        free(c->batch);
        fsh_lane_close(c->lane);
        free(c);
    }
    pool_close();
    memset(&ln, 0, sizeof(ln));
    /* A session left open on the default context must not reach the next init (its batch
     * was sized for this fabric); quiet_all posted what every batch held. */
    free(fsh_ctx_default.batch);
    memset(&fsh_ctx_default, 0, sizeof(fsh_ctx_default));
    fsh_ctx_default.handle = FSH_CTX_DEFAULT_HANDLE;
    memset(&bs, 0, sizeof(bs));
    quiet_hook = NULL;
    fsh_arrive_fini();
    fsh_progress_bounce_fini();
    memset(&bn, 0, sizeof(bn));
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

int fsh_rma_ctx_destroy_on(const void *team)
{
    int rc = 0;
    for (;;) {
        struct fsh_ctx *victim = NULL;
        fsh_progress_lock();
        for (struct fsh_ctx *c = ctx_list; c && !victim; c = c->next) {
            victim = c->team == team ? c : NULL;
        }
        fsh_progress_unlock();
        if (!victim) {
            return rc;
        }
        int drc = fsh_rma_ctx_destroy(victim);
        rc = rc ? rc : drc;
    }
}

/* ---------------------------------------------------------------- words of every target */

int fsh_rma_read_words(struct fsh_ctx *ctx, const int *pes, size_t n, uint64_t *landing,
                       uint64_t (*off)(int pe, const void *arg), const void *arg,
                       const char *what)
{
    ctx = ctx ? ctx : &fsh_ctx_default;
    struct fsh_op_track sync = {0, 0, 0};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = post_split(ctx, ctx->lane, &sync, FSH_OP_GET, &landing[pes[i]], FSH_SEG_HEAP,
                        off(pes[i], arg), sizeof(uint64_t), pes[i]);
    }
    int wrc = wait_sync(ctx->lane, &sync, what);
    return rc ? rc : wrc;
}
