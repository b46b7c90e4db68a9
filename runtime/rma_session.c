/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_session.c: the batches of small puts, on every context (FABSHMEM_PUT_BATCH) and inside
 * OpenSHMEM 1.6 sessions (a hint).
 *
 * Small puts to fabric peers are copied into a per-context, per-PE batch and posted as one
 * injected write that scatters them over up to the provider's rma_iov_limit remote segments
 * (contiguous ones merged), so N puts cost the provider one message, one operation and one
 * completion. Implicitly on every context without an endpoint of its own (FABSHMEM_PUT_BATCH,
 * auto: where the progress thread runs), and in BATCH sessions. Nothing is held while anybody
 * waits: every poll of the progress engine posts what is held (its post hook; the progress
 * thread's polls too), as do quiet, fence, pe_quiet, a get on the context, any other write of
 * the context to the same PE (rma.c: posted after what the batch holds, so the order the
 * provider gives one endpoint's writes is kept), session stop and destroy. Puts in a batch are
 * as unordered as puts always are, but overlapping puts keep the order they would have had
 * without batches: they share a write only where the provider applies its segments in order
 * (overlap_in_order), else the batch goes first. No put is dropped or replaced.
 * Why it is legal: a put's source is copied before it returns (a blocking put may return at
 * once); quiet and fence post the batch before they complete what was posted; device memory is
 * never copied here. The batches are under the engine lock. Without a batch (none wanted, or no
 * memory for one) puts go as they always do.
 */
#include "rma_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "fabric.h"
#include "log.h"
#include "progress.h"
#include "rma_post.h"
#include "xport.h"

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
    bool overlap; /* one write may carry puts that overlap (overlap_in_order) */
    size_t ops;  /* puts batched since the last total_ops flush */
    struct batch_slot slot[BATCH_SLOTS];
};
static struct {
    unsigned held;  /* non-empty slots, all contexts: the post hook's fast exit at 0 */
    bool flushing;  /* the hook is posting (a post that polls must not re-enter it) */
    /* puts batched, writes that carried them, puts that joined a held one they overlap
     * (FABSHMEM_LOG=info) */
    uint64_t puts, writes, over;
    uint64_t direct; /* first puts to a PE since a quiet, posted at once (a write each) */
} batches;

/* FABSHMEM_PUT_BATCH, decided at the first put after init (the progress thread runs by then):
 * 1 on, -1 off (why says why), 0 not yet. */
static struct {
    int state;
    const char *why;
} implicit;

static int implicit_decide(void)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    int w = fsh_env_word_index("FABSHMEM_PUT_BATCH"); /* auto, on, off, 1, 0 */
    const char *why = NULL;
    if (fsh_fabric_none()) {
        why = "none: no PE is reached through the fabric";
    } else if (w == 2 || w == 4) {
        why = "off (FABSHMEM_PUT_BATCH=off): every small put is one write";
    } else if (fa->inject_size < 16) {
        why = "off: the provider injects less than 16 bytes, so no two puts fit a write";
    } else if (w == 0 && !(fa->manual_progress && fsh_progress_serves())) {
        why = "off: no progress thread posts what is held while the program computes without "
              "calling the library (FABSHMEM_PROGRESS_THREAD; FABSHMEM_PUT_BATCH=on batches "
              "anyway)";
    }
    implicit.why = why;
    __atomic_store_n(&implicit.state, why ? -1 : 1, __ATOMIC_RELAXED);
    return why ? -1 : 1;
}

bool fsh_rma_session_implicit(const struct fsh_ctx *ctx)
{
    int st = __atomic_load_n(&implicit.state, __ATOMIC_RELAXED);
    return !ctx->lane && (st ? st : implicit_decide()) > 0;
}

/* Remote segments one batch write scatters over: the provider's rma_iov_limit, at most
 * FSH_XREQ_SEGS. */
static size_t write_segs(const struct fsh_fabric_attr *fa)
{
    return fa->rma_iov_limit < FSH_XREQ_SEGS ? fa->rma_iov_limit : FSH_XREQ_SEGS;
}

void fsh_rma_session_describe(char *buf, size_t len)
{
    if (!implicit.state) {
        implicit_decide();
    }
    if (implicit.why) {
        snprintf(buf, len, "%s", implicit.why);
        return;
    }
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    size_t segs = write_segs(fa);
    snprintf(buf, len, "puts up to %zu B from host memory go to a batch per PE, posted as one "
             "injected write over up to %zu remote segment%s at every poll, quiet, fence and get; "
             "not on contexts with endpoints of their own (FABSHMEM_PUT_BATCH=%s)",
             fa->inject_size / 2, segs, segs == 1 ? "" : "s",
             fsh_env_word_index("FABSHMEM_PUT_BATCH") == 0 ? "auto: the progress thread runs"
                                                            : "on");
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
    __atomic_store_n(&batches.held, batches.held - 1, __ATOMIC_RELAXED);
    batches.writes++;
    return fsh_rma_post(ctx, NULL, FSH_OP_PUT, out.data, out.len, out.pe, out.seg, out.nseg, false,
                        0, 0);
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

/* May ctx hold anything? Read without the lock: this thread's own batching, done before, is
 * seen; a flush that finds nothing held anywhere takes no lock. */
static bool may_hold(struct fsh_ctx *ctx)
{
    return fsh_rma_session_batched(ctx) && __atomic_load_n(&batches.held, __ATOMIC_RELAXED) != 0;
}

int fsh_rma_session_flush(struct fsh_ctx *ctx)
{
    if (!may_hold(ctx)) {
        return 0;
    }
    fsh_progress_lock();
    int rc = flush_ctx(ctx);
    fsh_progress_unlock();
    return rc;
}

/* Post what ctx's batch holds for pe, before another write of ctx to pe. Caller holds the
 * engine lock. */
static int flush_pe_locked(struct fsh_ctx *ctx, int pe)
{
    struct batch_slot *s = ctx->batch ? &ctx->batch->slot[(unsigned)pe % BATCH_SLOTS] : NULL;
    return s && s->pe == pe ? flush_slot(ctx, s) : 0;
}

int fsh_rma_session_flush_pe(struct fsh_ctx *ctx, int pe)
{
    if (!may_hold(ctx)) {
        return 0;
    }
    fsh_progress_lock();
    int rc = flush_pe_locked(ctx, pe);
    fsh_progress_unlock();
    return rc;
}

/* The post hook: any poll posts every held batch. */
static int flush_held(void)
{
    if (batches.held == 0 || batches.flushing) {
        return 0;
    }
    batches.flushing = true;
    int rc = 0;
    for (struct fsh_ctx *c = fsh_rma_ctx_first(); c; c = c->next) {
        int frc = flush_ctx(c);
        rc = rc ? rc : frc;
    }
    batches.flushing = false;
    return rc;
}

/* May the put [raddr, raddr + len) under key join what slot s holds for pe? *over: it
 * overlaps a held put (and joins it: b->overlap). */
static bool joins(const struct fsh_batch *b, const struct batch_slot *s, int pe, uint64_t raddr,
                  uint64_t key, size_t len, bool *over)
{
    if (s->pe != pe || s->len + len > b->cap) {
        return false;
    }
    for (size_t i = 0; i < s->nseg && !*over; i++) {
        const struct fsh_xseg *g = &s->seg[i];
        *over = g->key == key && raddr < g->addr + g->len && g->addr < raddr + len;
    }
    if (*over && !b->overlap) {
        return false; /* that one goes first */
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
    bool over = false;
    if (s->pe >= 0 && !joins(b, s, pe, raddr, key, len, &over)) {
        over = false;
        int rc = flush_slot(ctx, s);
        if (rc != 0) {
            return rc;
        }
    }
    batches.over += over;
    if (s->pe < 0) {
        s->pe = pe;
        __atomic_store_n(&batches.held, batches.held + 1, __ATOMIC_RELAXED);
    }
    batches.puts++;
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
    if (ctx->session && ++b->ops >= ctx->total_ops) {
        b->ops = 0;
        return flush_ctx(ctx);
    }
    return 0;
}

void fsh_rma_session_count_first(size_t len)
{
    batches.direct += len <= fsh_fabric_attr()->inject_size / 2;
}

/* Is a batch wanted on ctx? Not in a session whose total_ops says batching cannot pay (fewer
 * than two puts); else in a BATCH session, or implicitly (FABSHMEM_PUT_BATCH). At least two
 * puts must fit a write. */
static bool batch_wanted(const struct fsh_ctx *ctx)
{
    if (fsh_fabric_attr()->inject_size < 16 || (ctx->session && ctx->total_ops < 2)) {
        return false;
    }
    return ctx->session_batch || fsh_rma_session_implicit(ctx);
}

static int batch_alloc(struct fsh_ctx *ctx);

int fsh_rma_session_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                        size_t len, int pe)
{
    /* The first put to pe since the last quiet, with nothing held for pe, is posted at once,
     * as without batches: delivery-complete with a completion entry (rma_post.c), so a lone
     * put + quiet costs that write and no batch work; the puts after it are batched. Read
     * without the lock (a hint: this thread's own batching is seen). Only while puts are
     * counted, so never under SHMEM_THREAD_MULTIPLE: the count needs no atomic. */
    struct fsh_batch *b = fsh_rma_session_batched(ctx);
    struct batch_slot *s = b ? &b->slot[(unsigned)pe % BATCH_SLOTS] : NULL;
    if (fsh_rma_post_first_to(pe) && (!s || __atomic_load_n(&s->pe, __ATOMIC_RELAXED) != pe)) {
        fsh_rma_session_count_first(len);
        return 1;
    }
    /* Up to half a batch (a batch holds the inject size): the size test needs no lock, and a
     * larger put skips the lookups. What the batch holds for pe goes before it. */
    if (len > fsh_fabric_attr()->inject_size / 2 || fsh_mr_is_device(src, len)) {
        int rc = fsh_rma_session_flush_pe(ctx, pe);
        return rc ? rc : 1;
    }
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);
    fsh_progress_lock();
    if (!ctx->batch && batch_wanted(ctx)) {
        batch_alloc(ctx); /* none (no memory): the put goes as always */
    }
    int rc = ctx->batch ? batch_put(ctx, pe, raddr, key, src, len) : 1;
    fsh_progress_unlock();
    return rc;
}

/* May one write carry puts that overlap? It then holds them in the order issued, segment
 * after segment (a put merged into the last segment comes after every earlier one too), and
 * the later one must land last, as it would have as a separate write after the earlier one
 * where the provider orders one endpoint's writes (WAW). shm and tcp;ofi_rxm copy a write's
 * segments one after another, in order: shm's target copies an inline or injected write with
 * ofi_copy_to_mr_iov over the segments in order, tcp's receives its payload into the segments
 * in order (one readv into the target's iovec, after ofi_rxm copied an injected write into one
 * buffer and posted it with the same segments). Where the provider orders no writes, two
 * separate writes were not ordered either, so neither is the one write (the spec orders
 * overlapping puts only across a fence, which posts the batch). Any other provider: an
 * overlapping put posts the batch first, as before. */
static bool overlap_in_order(const struct fsh_fabric_attr *fa)
{
    return !fa->order_waw || strcmp(fa->prov, "shm") == 0 || strcmp(fa->prov, "tcp;ofi_rxm") == 0;
}

static int batch_alloc(struct fsh_ctx *ctx)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    size_t cap = fa->inject_size;
    struct fsh_batch *b = calloc(1, sizeof(*b) + BATCH_SLOTS * cap);
    if (!b) {
        FSH_DEBUG("no memory for a batch of puts; the context's puts are posted one by one");
        if (!ctx->session_batch) {
            implicit.why = "off: no memory for a batch";
            __atomic_store_n(&implicit.state, -1, __ATOMIC_RELAXED);
        }
        return 0; /* a hint: without the batch, puts go as always */
    }
    b->cap = cap;
    b->segs = write_segs(fa);
    b->overlap = overlap_in_order(fa);
    for (size_t i = 0; i < BATCH_SLOTS; i++) {
        b->slot[i].pe = -1;
        b->slot[i].data = (uint8_t *)(b + 1) + i * cap;
    }
    __atomic_store_n(&ctx->batch, b, __ATOMIC_RELEASE);
    fsh_progress_set_post_hook(FSH_POST_BATCHES, flush_held);
    return 0;
}

/* Post what is held and drop the batch. Caller holds the engine lock. */
static int batch_free(struct fsh_ctx *ctx)
{
    FSH_ASSERT_ENGINE_HELD();
    int rc = flush_ctx(ctx);
    free(ctx->batch);
    __atomic_store_n(&ctx->batch, NULL, __ATOMIC_RELEASE);
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
    ctx->session = false;
    ctx->session_batch = false;
    ctx->total_ops = SIZE_MAX;
    /* What is held goes (the spec's stop posts, it does not quiet); the batch stays where the
     * context batches without a session. */
    int rc = !ctx->batch ? 0 : batch_wanted(ctx) ? flush_ctx(ctx) : batch_free(ctx);
    fsh_progress_unlock();
    return rc;
}

int fsh_rma_session_end(struct fsh_ctx *ctx)
{
    fsh_progress_lock();
    ctx->session = false;
    ctx->session_batch = false;
    int rc = ctx->batch ? batch_free(ctx) : 0;
    fsh_progress_unlock();
    return rc;
}

void fsh_rma_session_fini(void)
{
    /* A batch must not reach the next init (it was sized for this fabric). */
    fsh_progress_lock();
    for (struct fsh_ctx *c = fsh_rma_ctx_first(); c; c = c->next) {
        free(c->batch);
        __atomic_store_n(&c->batch, NULL, __ATOMIC_RELEASE);
    }
    fsh_progress_unlock();
    if (implicit.state > 0 || batches.puts > 0) {
        /* the first puts after a quiet count as puts and writes too: each was one */
        FSH_INFO("put batches: %llu puts went as %llu writes, %llu in a write with a put they "
                 "overlap", (unsigned long long)(batches.puts + batches.direct),
                 (unsigned long long)(batches.writes + batches.direct),
                 (unsigned long long)batches.over);
    }
    memset(&batches, 0, sizeof(batches));
    memset(&implicit, 0, sizeof(implicit));
}
