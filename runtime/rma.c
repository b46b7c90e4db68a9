/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.c: puts, gets, quiet and fence: the OpenSHMEM semantics over the posting of
 * rma_post.c.
 *
 * Owns what a put or get means to its caller, and when quiet may return:
 *  - A PE whose segments are mapped here (local.c: PEs of this node, and this PE itself) is not
 *    reached through the fabric at all: puts and gets are memory copies, complete on return,
 *    and quiet and fence add the full memory fence local.c's ordering rules ask for.
 *  - A context's operations go on its own endpoint (a lane, rma_ctx.c) where the buffer
 *    allows, else through the engine; a blocking call waits for its own operations on one of
 *    the two.
 *  - A blocking put returns once its source may be reused: at once when injected or copied
 *    into a bounce slot (FABSHMEM_BOUNCE_SIZE), else when it completed. A small put is copied
 *    into the context's batch (rma_session.c: FABSHMEM_PUT_BATCH, BATCH sessions); any other
 *    write of the context to that PE is posted after what the batch holds.
 *  - Quiet waits for every operation of the context (its tracks on the engine and its lane;
 *    where targets count arrivals, their counts: arrive.c; where the provider orders writes,
 *    one flush per target of its injected puts: rma_post.c, and of its injected atomics:
 *    amo.c), then for what quiet completes per
 *    target PE (the arrival counts and the quiet hook: signals applied). Fence is quiet: no
 *    ordering is assumed on the fabric.
 *  - Destroying a context completes its operations first.
 * It never reads the CQ itself (progress.c does) and never blocks except through
 * fsh_progress_wait*.
 */
#include "rma.h"

#include <stdio.h>
#include <string.h>

#include "arrive.h"
#include "fabric.h"
#include "local.h"
#include "rma_post.h"
#include "rma_session.h"
#include "xport.h"

static int (*quiet_hook)(void);

void fsh_rma_set_quiet_hook(int (*hook)(void))
{
    quiet_hook = hook;
}

static int (*flush_hook)(void);

void fsh_rma_set_flush_hook(int (*hook)(void))
{
    flush_hook = hook;
}

bool fsh_rma_injects(const void *src, size_t len)
{
    return fsh_rma_post_injects(len, fsh_mr_is_device(src, len));
}

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

/* Post one piece to one remote range. */
static int post_to(struct fsh_ctx *ctx, struct fsh_op_track *sync, int kind, void *local,
                   size_t len, int pe, uint64_t raddr, uint64_t key, bool has_imm, uint64_t imm)
{
    struct fsh_xseg seg = {raddr, len, key};
    return fsh_rma_post(ctx, sync, kind, local, len, pe, &seg, 1, has_imm, imm, 0);
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
} bounce;

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
        bounce.why = size < 0 ? "none: shm completes a write once it copied it into the target "
                                "(FABSHMEM_BOUNCE_SIZE sets a size)"
                              : "none (FABSHMEM_BOUNCE_SIZE=0 or FABSHMEM_BOUNCE_SLOTS=0)";
        return 0;
    }
    if (want > fa->max_msg_size) {
        want = fa->max_msg_size;
    }
    /* Nothing to gain at or below the inject size: such a put is copied by the provider. */
    if (want <= fa->inject_size) {
        bounce.why = "none: FABSHMEM_BOUNCE_SIZE is not above the inject size";
        return 0;
    }
    int rc = fsh_progress_bounce_init(want + FSH_RMA_BOUNCE_EXTRA, (size_t)slots);
    bounce.put_max = rc == 0 ? want : 0;
    return rc;
}

void fsh_rma_bounce_describe(char *buf, size_t len)
{
    size_t size = bounce.put_max;
    if (size) {
        snprintf(buf, len, "%zu slots of %zu bytes: a blocking put above the inject size and up to "
                 "%zu bytes is copied and returns (FABSHMEM_BOUNCE_SIZE, FABSHMEM_BOUNCE_SLOTS)",
                 (size_t)fsh_env()->FABSHMEM_BOUNCE_SLOTS, size, size);
    } else {
        snprintf(buf, len, "%s", bounce.why ? bounce.why : "none");
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
    return fsh_rma_post_split(ctx, ctx->lane, NULL, FSH_OP_PUT, slot, seg, off, len, pe);
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
    /* With a batch (FABSHMEM_PUT_BATCH, or a BATCH session) a small put is copied into it: the
     * source is free at once, blocking or not, as an injected put's is. A first put to pe
     * since the last quiet is not (rma_session.c), so a context without a batch yet skips the
     * call for it. */
    bool batched = fsh_rma_session_batched(ctx) != NULL;
    bool first = !batched && fsh_rma_post_first_to(pe);
    if (batched || (!first && fsh_rma_session_implicit(ctx))) {
        int rc = fsh_rma_session_put(ctx, seg, off, src, len, pe);
        if (rc <= 0) {
            return rc;
        }
    } else if (first) {
        /* The first put to pe since the last quiet, and ctx holds nothing: posted at once,
         * without a call into the batches (put + quiet costs what it did before them). */
        fsh_rma_session_count_first(len);
    }
    /* An injected put leaves the source free at once; anything larger must complete before a
     * blocking put returns, because the provider reads the source until then, unless it was
     * copied into a bounce slot. */
    struct fsh_lane *lane = lane_for(ctx, src, len);
    if (nbi || (fsh_rma_injects(src, len) && (!lane || len <= fsh_xport_lane_inject()))) {
        return fsh_rma_post_split(ctx, lane, NULL, FSH_OP_PUT, (void *)src, seg, off, len, pe);
    }
    if (len <= bounce.put_max && !fsh_mr_is_device(src, len)) {
        /* On the context's own endpoint, from its slots, whatever the source (lane_for may
         * have sent an unregistered one to the engine). */
        int rc = ctx->lane ? lane_bounce_put(ctx, seg, off, src, len, pe)
                           : bounce_put(ctx, seg, off, src, len, pe);
        if (rc <= 0) {
            return rc;
        }
    }
    struct fsh_op_track sync = {0, 0, 0};
    int rc = fsh_rma_post_split(ctx, lane, &sync, FSH_OP_PUT, (void *)src, seg, off, len, pe);
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
    int frc = fsh_rma_session_flush(ctx); /* a get reads after the puts held before it */
    if (frc != 0) {
        return frc;
    }
    if (nbi) {
        return fsh_rma_post_split(ctx, lane_for(ctx, dest, len), NULL, FSH_OP_GET, dest, seg, off,
                                  len, pe);
    }
    struct fsh_op_track sync = {0, 0, 0};
    struct fsh_lane *lane = lane_for(ctx, dest, len);
    int rc = fsh_rma_post_split(ctx, lane, &sync, FSH_OP_GET, dest, seg, off, len, pe);
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
        rc = fsh_rma_post_split(ctx, lane, &sync, kind, local + (ptrdiff_t)i * lstep, seg,
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
    int rc = fsh_rma_session_flush_pe(ctx, pe); /* after the puts held for pe */
    if (rc != 0) {
        return rc;
    }
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);
    return post_to(ctx, sync, has_imm ? FSH_OP_PUT_IMM : FSH_OP_PUT, (void *)src, len, pe, raddr,
                   key, has_imm, imm);
}

bool fsh_rma_pair_fits(size_t len_a, const void *data, size_t len_b)
{
    return fsh_fabric_attr()->rma_iov_limit >= 2 &&
           fsh_rma_post_injects(len_a + len_b, fsh_mr_is_device(data, len_b));
}

int fsh_rma_write_pair(struct fsh_ctx *ctx, const void *src, int pe, enum fsh_seg seg_a,
                       uint64_t off_a, size_t len_a, enum fsh_seg seg_b, uint64_t off_b,
                       size_t len_b, uint32_t imm)
{
    int rc = fsh_rma_session_flush_pe(ctx, pe); /* after the puts held for pe */
    if (rc != 0) {
        return rc;
    }
    struct fsh_xseg segs[2] = {{.len = len_a}, {.len = len_b}};
    fsh_mr_remote(pe, seg_a, off_a, &segs[0].addr, &segs[0].key);
    fsh_mr_remote(pe, seg_b, off_b, &segs[1].addr, &segs[1].key);
    return fsh_rma_post(ctx, NULL, FSH_OP_PUT_IMM, (void *)src, len_a + len_b, pe, segs, 2, true,
                        imm, 0);
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
    return fsh_rma_post(ctx, sync, FSH_OP_GET, dest, len, pe, &piece, 1, false, 0,
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
    int rc = fsh_rma_session_flush(ctx);
    if (rc == 0) {
        rc = fsh_rma_post_flush(ctx); /* injected puts: one flush per target (rma_post.c) */
    }
    if (rc == 0 && flush_hook) {
        rc = flush_hook(); /* injected atomics: the same, by a fetch (amo.c) */
    }
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
    int rc = fsh_rma_session_flush(ctx);
    if (rc == 0) {
        rc = fsh_rma_post_flush(ctx); /* every PE written to: more than asked, never less */
    }
    if (rc == 0 && flush_hook) {
        rc = flush_hook(); /* every PE updated: more than asked, never less */
    }
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
    for (struct fsh_ctx *c = fsh_rma_ctx_first(); c && rc == 0; c = c->next) {
        rc = quiet_track(c);
    }
    fsh_progress_unlock();
    return rc ? rc : per_pe_quiet();
}

int fsh_rma_ctx_destroy(struct fsh_ctx *ctx)
{
    /* The spec: destroying a context completes its outstanding operations. */
    int rc = fsh_rma_quiet(ctx);
    int stop_rc = fsh_rma_session_end(ctx); /* quiet posted what it held: nothing to post */
    fsh_rma_ctx_release(ctx);
    return rc ? rc : stop_rc;
}

int fsh_rma_ctx_destroy_on(const void *team)
{
    int rc = 0;
    for (;;) {
        struct fsh_ctx *victim = NULL;
        fsh_progress_lock();
        for (struct fsh_ctx *c = fsh_rma_ctx_first(); c && !victim; c = c->next) {
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

void fsh_rma_fini(void)
{
    fsh_rma_session_fini();
    fsh_rma_ctx_fini();
    quiet_hook = NULL;
    flush_hook = NULL;
    fsh_rma_post_flush_fini();
    fsh_arrive_fini();
    fsh_progress_bounce_fini();
    memset(&bounce, 0, sizeof(bounce));
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
        rc = fsh_rma_post_split(ctx, ctx->lane, &sync, FSH_OP_GET, &landing[pes[i]],
                                FSH_SEG_HEAP, off(pes[i], arg), sizeof(uint64_t), pes[i]);
    }
    int wrc = wait_sync(ctx->lane, &sync, what);
    return rc ? rc : wrc;
}
