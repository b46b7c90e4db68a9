/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_post.c: one RMA operation of a context, posted as a libfabric write or read.
 *
 * Owns how a piece of a put or get becomes a request to xport.c, on the engine's endpoint or
 * the context's own (a lane), and the accounting quiet (rma.c) relies on. Rules kept here:
 *  - No ordering between operations is assumed (EFA's SRD delivers out of order). Every
 *    operation is counted on its context's track, and requested delivery complete
 *    (FSH_XF_DELIVERED) where the provider has it: complete means visible at the target.
 *    Writes with immediate data are the exception: their landing is known from the target's
 *    event, never from their completion (see fsh_rma_post()).
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
 *    the context's track keeps a mark that quiet waits for (progress.c). Where the provider
 *    orders writes (or reads) after writes, such a put is only transmit-complete and its
 *    target is marked: quiet flushes each marked target with one operation (rma_flush.c).
 *  - A transfer larger than the provider's message size is split into pieces.
 *  - Operations are handed to xport.c, which retries -FI_EAGAIN with progress.
 *  - Local buffers get a descriptor when the provider needs one (FI_MR_LOCAL): the segment's, or
 *    a temporary registration released when the operation completes.
 * It never reads the CQ itself (progress.c does) and never blocks except through
 * fsh_progress_wait*.
 */
#include "rma_post.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

#include "arrive.h"
#include "error.h"
#include "rma_flush.h"

int fsh_rma_post(struct fsh_ctx *ctx, struct fsh_op_track *sync, int kind, void *local,
                 size_t len, int pe, const struct fsh_xseg *seg, size_t nseg, bool has_imm,
                 uint64_t imm, unsigned k)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    struct fsh_path path = fsh_fabric_path(pe, k);
    bool write = kind != FSH_OP_GET;
    bool dev = fsh_mr_is_device(local, len);
    bool inject = write && fsh_rma_post_injects(len, dev);
    void *desc = NULL;
    struct fsh_mr_tmp *tmp = NULL;
    /* A bounce slot (rma.c's fsh_rma_put) is this post's from here on: the record gives it
     * back. */
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
    /* A counted put where quiet flushes its target (rma_flush.c) needs only to leave: the
     * flush, ordered after it, completes it. */
    bool flushed = counted && !has_imm && fsh_rma_flush_mode() != FSH_FLUSH_NONE &&
                   fsh_rma_flush_mark(pe);
    bool dc = fa->delivery_complete && !has_imm && !flushed;
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

/* fsh_rma_post() on ctx's lane: a record of the lane for every operation (no write counter, no
 * chaos), counted on ctx->ltrack, under the lane's lock alone. Where targets count arrivals,
 * a write carries the lane's slot (ctx->slot) and waits while a quiet reads its counts. */
static int post_lane(struct fsh_lane *lane, struct fsh_ctx *ctx, struct fsh_op_track *sync,
                     int kind, void *local, size_t len, int pe, const struct fsh_xseg *seg,
                     unsigned k)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    bool write = kind != FSH_OP_GET;
    /* host memory (rma.c's lane_for); in a multi-rail job up to what its record keeps a copy
     * of */
    bool inject = write && fsh_rma_post_injects(len, false) && len <= fsh_xport_lane_inject();
    struct fsh_path path = fsh_fabric_path(pe, k);
    bool counted = write && fsh_arrive_active;
    void *desc = NULL;
    struct fsh_mr_tmp *tmp = NULL;
    int rc = 0;
    fsh_lane_lock(lane);
    /* A bounce slot (rma.c's lane_bounce_put) is the record's from here on. */
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

/* Below this a transfer goes whole on one rail: a piece of a striped one is at least half. */
#define STRIPE_MIN ((size_t)64 << 10)

/* In pieces of at most the provider's message size; with several ways to pe and at least
 * STRIPE_MIN bytes, in pieces of about equal size on every way, so that every rail carries its
 * share and they end together. */
int fsh_rma_post_split(struct fsh_ctx *ctx, struct fsh_lane *lane, struct fsh_op_track *sync,
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
                      : fsh_rma_post(ctx, sync, kind, (char *)local + done, n, pe, &piece, 1, false,
                                     0, k);
        if (rc != 0) {
            return rc;
        }
        done += n;
    }
    return 0;
}
