/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_session.h: the batches of small puts of a context (FABSHMEM_PUT_BATCH), and OpenSHMEM
 * 1.6 sessions on a context, which may ask for them too.
 */
#ifndef FSH_RMA_SESSION_H
#define FSH_RMA_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"
#include "rma_ctx.h"

/* OpenSHMEM 1.6 sessions, a hint that never changes semantics. Start opens one on ctx or adds
 * to the open one: batch (the BATCH option) is OR-ed in; has_total replaces the total_ops hint
 * (else the open session's stays, SIZE_MAX on a new one). While a BATCH session is open, small
 * host-memory puts to fabric peers are copied into a per-PE batch and posted together, one
 * write carrying up to the inject size over up to the provider's rma_iov_limit remote segments
 * (contiguous puts merge into one). A batch is posted when it is full, when a put does not fit
 * or overlaps it, when total_ops puts were issued, before a get on the context, by quiet,
 * fence, pe_quiet, stop and destroy, and by any poll of the progress engine (every wait), so
 * nothing is held while this PE waits. Stop posts what is held; it does not quiet (the spec).
 * 0 or -errno (recorded); a batch that cannot be allocated just means no batching. */
int fsh_rma_session_start(struct fsh_ctx *ctx, bool batch, size_t total_ops, bool has_total);
int fsh_rma_session_stop(struct fsh_ctx *ctx);
/* At destroy, after its quiet: ends ctx's session and drops its batch. */
int fsh_rma_session_end(struct fsh_ctx *ctx);

/* Outside sessions too (FABSHMEM_PUT_BATCH): does ctx batch small puts without being asked?
 * On every context without an endpoint of its own (a lane), where the setting (auto: the
 * progress thread runs) allows. Decided at the first call after init. */
bool fsh_rma_session_implicit(const struct fsh_ctx *ctx);
/* SHMEM_INFO's line: how small puts are batched, or why not. */
void fsh_rma_session_describe(char *buf, size_t len);

/* ctx's batch, or NULL: read without the engine lock (set and dropped under it, atomically, so
 * another thread's put may look without taking it). */
static inline struct fsh_batch *fsh_rma_session_batched(struct fsh_ctx *ctx)
{
    return __atomic_load_n(&ctx->batch, __ATOMIC_ACQUIRE);
}

/* A put to (seg, off) of pe, a fabric peer, on ctx while it has a batch (ctx->batch) or may
 * get one (fsh_rma_session_implicit): copied into the batch when it is small enough and in host
 * memory (src is then free at once). 1 when the batch does not take it (the caller posts it;
 * what the batch held for pe was posted first), else 0 or -errno. */
int fsh_rma_session_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                        size_t len, int pe);
/* Post what ctx's batch holds, if it has one (before a get on ctx, and by its quiets). 0 or
 * -errno. */
int fsh_rma_session_flush(struct fsh_ctx *ctx);
/* A first put to a PE since the last quiet, posted at once by rma.c on a context without a
 * batch: counted with the puts (FABSHMEM_LOG=info's line), where it is small. */
void fsh_rma_session_count_first(size_t len);
/* Post what ctx's batch holds for pe, before another write of ctx to pe (so that it follows
 * them, where the provider orders one endpoint's writes). 0 or -errno. */
int fsh_rma_session_flush_pe(struct fsh_ctx *ctx, int pe);
/* At shmem_finalize, after its quiet posted what every batch held: drops the batches, so that
 * none reaches a later shmem_init. */
void fsh_rma_session_fini(void);

#endif
