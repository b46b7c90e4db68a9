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
 *    target is marked: quiet flushes each marked target with one operation (below).
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
#include <stdlib.h>
#include <string.h>

#include "arrive.h"
#include "error.h"
#include "heap.h"
#include "rt.h"

/* ---------------------------------------------------------------- quiet's flush per target
 *
 * A counted put (injected, no record, no completion entry, counted by the write
 * counter) would have to be posted delivery-complete for the counter to mean "landed", and on
 * shm that costs an answer from the target per put. Where the provider promises an order
 * between one endpoint's operations to one target (tx_attr->msg_order), that answer is needed
 * once per target per quiet instead:
 *  - FI_ORDER_WAW and FI_DELIVERY_COMPLETE (shm, tcp;ofi_rxm): the first small put to a
 *    target since the last flush is delivery-complete, with a record and a completion entry
 *    (a lone put + quiet costs one operation, as fi_write does); later ones are posted
 *    transmit-complete, counted, and the target marked dirty; quiet posts one
 *    delivery-complete 8-byte write to each dirty target. The target handles writes in the
 *    order posted, so when that write is visible there (its completion), every earlier write
 *    was handled, and a small injected write's data is placed when it is handled (the
 *    payload travels with it).
 *  - FI_ORDER_RAW without the above: one 8-byte read per dirty target, which the target
 *    answers only after the writes before it (at the endpoint's completion level: shm then
 *    serves it from its progress engine, in order, not by a copy from the initiator's side).
 *  - No ordering (efa, efa-direct, the efa-direct profile), or targets counting arrivals
 *    (FABSHMEM_REMOTE_COMPLETION=count): nothing changes; each counted put stays
 *    delivery-complete, or is counted at its target (arrive.c).
 * Only counted puts are flushed: operations with records keep their delivery-complete level.
 * The ordering is per endpoint pair: counted puts exist only where every write to a PE leaves
 * from the engine's one endpoint (no lanes' counted writes, no multi-rail job), which is the
 * endpoint the flush leaves from too. Under FABSHMEM_CHAOS=reorder xport holds operations back;
 * the flush first releases them, so it still follows every put it completes.
 * The flush word is 64 bytes of the symmetric heap, reserved on every PE whatever the mode
 * (the layout must not depend on the provider): writes land in its first word, reads land in
 * its second. Nobody reads either. The dirty set is guarded by the engine lock.
 */

/* How quiet completes counted puts (see the header). */
enum flush_mode {
    FLUSH_NONE,  /* each counted put is delivery-complete; the write counter is quiet's */
    FLUSH_WRITE, /* one delivery-complete 8-byte write per dirty target (FI_ORDER_WAW) */
    FLUSH_READ,  /* one 8-byte read per dirty target (FI_ORDER_RAW) */
};

static struct {
    enum flush_mode mode;
    uint64_t *word;  /* the reserved flush words: [0] written by flushes, [1] read into */
    uint64_t off;    /* word's heap offset */
    uint8_t *state;  /* [pe]: CLEAN, ONE or DIRTY since the last flush */
    int *list;       /* the PEs not CLEAN, n of them */
    size_t n;
    int *flushing;   /* a flush's copy of the DIRTY ones: its posts may poll, and a poll's post
                      * hook (session batches) may mark PEs anew meanwhile */
} fl;

/* A target's state since the last flush: no small put; one, posted delivery-complete with a
 * record (its completion entry completes it, nothing to flush: a lone put + quiet costs one
 * operation, not two); more, the later ones transmit-complete and counted (one flush
 * completes them all). */
enum { CLEAN, ONE, DIRTY };

int fsh_rma_post_flush_init(void)
{
    fl.word = fsh_heap_reserve(FSH_RMA_POST_FLUSH_BYTES, 64, "quiet's flush word (64 bytes)",
                               NULL);
    if (!fl.word) {
        return fsh_err_last()->code;
    }
    enum fsh_seg seg;
    if (fsh_mr_lookup(fl.word, FSH_RMA_POST_FLUSH_BYTES, &seg, &fl.off) != 0 ||
        seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "quiet's flush word is not in the registered heap");
    }
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    fl.mode = FLUSH_NONE;
    if (fsh_fabric_none() || !fsh_progress_counts_writes() || fsh_arrive_active) {
        return 0;
    }
    if (fa->order_waw && fa->delivery_complete) {
        fl.mode = FLUSH_WRITE;
    } else if (fa->order_raw) {
        fl.mode = FLUSH_READ;
    }
    if (fl.mode != FLUSH_NONE) {
        fl.state = calloc((size_t)fsh_rt.npes, sizeof(*fl.state));
        fl.list = calloc((size_t)fsh_rt.npes, sizeof(*fl.list));
        fl.flushing = calloc((size_t)fsh_rt.npes, sizeof(*fl.flushing));
        if (!fl.state || !fl.list || !fl.flushing) {
            return fsh_err(-ENOMEM, "", "out of memory for quiet's set of %d target PEs",
                           fsh_rt.npes);
        }
    }
    return 0;
}

void fsh_rma_post_flush_fini(void)
{
    free(fl.state);
    free(fl.list);
    free(fl.flushing);
    fl.state = NULL;
    fl.list = NULL;
    fl.flushing = NULL;
    fl.n = 0;
    fl.mode = FLUSH_NONE;
    fl.word = NULL;
}

static enum flush_mode flush_mode(void)
{
    return fl.mode;
}

static bool flush_mark(int pe)
{
    FSH_ASSERT_ENGINE_HELD();
    if (fl.state[pe] == CLEAN) {
        __atomic_store_n(&fl.state[pe], ONE, __ATOMIC_RELAXED);
        fl.list[fl.n] = pe;
        __atomic_store_n(&fl.n, fl.n + 1, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_store_n(&fl.state[pe], DIRTY, __ATOMIC_RELAXED);
    return true;
}

bool fsh_rma_post_first_to(int pe)
{
    /* Marks are made only for counted puts: without the write counter (SHMEM_THREAD_MULTIPLE
     * stops it after init) a PE would stay CLEAN and every put look like a first one. */
    return fl.mode != FLUSH_NONE && fsh_progress_counts_writes() &&
           __atomic_load_n(&fl.state[pe], __ATOMIC_RELAXED) == CLEAN;
}

int fsh_rma_post_flush(struct fsh_ctx *ctx)
{
    /* Nothing marked: no lock taken (this thread's own marks, made before, are seen). */
    if (fl.mode == FLUSH_NONE || __atomic_load_n(&fl.n, __ATOMIC_RELAXED) == 0) {
        return 0;
    }
    fsh_progress_lock();
    if (fl.n == 0) {
        fsh_progress_unlock();
        return 0;
    }
    /* Held puts (chaos) go first: the flush completes only what was issued before it. */
    int rc = fsh_xport_release_held();
    /* The set is taken whole before anything is posted: what is marked while the flushes are
     * posted starts a new set, for the next quiet. */
    size_t nflush = 0;
    for (size_t i = 0; i < fl.n; i++) {
        int pe = fl.list[i];
        if (fl.state[pe] == DIRTY) {
            fl.flushing[nflush++] = pe;
        }
        __atomic_store_n(&fl.state[pe], CLEAN, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&fl.n, 0, __ATOMIC_RELAXED);
    struct fsh_op_track sync = {0, 0, 0};
    bool write = fl.mode == FLUSH_WRITE;
    for (size_t i = 0; i < nflush && rc == 0; i++) {
        int pe = fl.flushing[i];
        uint64_t raddr, key;
        fsh_mr_remote(pe, FSH_SEG_HEAP, fl.off, &raddr, &key);
        struct fsh_xseg seg = {raddr, sizeof(uint64_t), key};
        rc = fsh_rma_post(ctx, &sync, write ? FSH_OP_PUT : FSH_OP_GET, &fl.word[write ? 0 : 1],
                          sizeof(uint64_t), pe, &seg, 1, false, 0, 0);
    }
    fsh_progress_unlock();
    /* What was posted is waited for, also after a failed post. */
    int wrc = fsh_progress_wait_track(&sync, "quiet: waiting for the flush of injected puts");
    return rc ? rc : wrc;
}

const char *fsh_rma_post_flush_describe(void)
{
#define FIRST_THEN_COUNTED                                                                    \
    "injected; the first to a PE since the last quiet delivery-complete with a completion "    \
    "entry, the next ones transmit-complete, counted by the write counter; quiet sends one "
    switch (fl.mode) {
    case FLUSH_WRITE:
        return FIRST_THEN_COUNTED "delivery-complete write to each PE that got those (the "
                                  "provider orders WAW)";
    case FLUSH_READ:
        return FIRST_THEN_COUNTED "read to each PE that got those (the provider orders RAW)";
    default:
        return NULL;
    }
}

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
    /* Where quiet flushes its targets, a counted put's target is marked; the first put to a PE
     * since the last flush is not counted but posted as fi_write_lat's ceiling posts a write:
     * delivery-complete, with a record and a completion entry, so that a lone put + quiet
     * costs that one write and quiet's wait one CQ (no write counter, whose read drives the
     * provider's progress a second time per poll: tcp's put + quiet 8 B went 8.05 -> 6.53 us
     * against fi_write's 6.29). Later ones go transmit-complete, counted, and the flush
     * completes them. */
    bool flushed = false;
    if (counted && !has_imm && flush_mode() != FLUSH_NONE) {
        flushed = flush_mark(pe);
        counted = flushed;
    }
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
    /* A counted put where quiet flushes its target (rma_post.c) needs only to leave: the
     * flush, ordered after it, completes it. */
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
