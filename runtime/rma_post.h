/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_post.h: one RMA operation of a context onto the fabric, on the engine's endpoint or the
 * context's own (a lane), with its completion accounted to the context. For rma.c and
 * rma_session.c; other modules post through rma.h.
 */
#ifndef FSH_RMA_POST_H
#define FSH_RMA_POST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric.h"
#include "mr.h"
#include "progress.h"
#include "rma_ctx.h"
#include "xport.h"

/* The inject rule: small enough, and not device memory (a provider copies an injected payload
 * with the CPU). */
static inline bool fsh_rma_post_injects(size_t len, bool dev)
{
    return len <= fsh_fabric_attr()->inject_size && !dev;
}

/* Post one piece through the engine: a write (kind FSH_OP_PUT, or FSH_OP_PUT_IMM with
 * has_imm) or a read (FSH_OP_GET) of the local buffer [local, local + len) to or from the
 * remote segments seg[0..nseg) (their lengths add up to len; more than one only for a
 * session's batch or a pair), with rail 0's keys (xport puts in those of the way's rail),
 * counted on ctx's track and on sync (may be NULL). It takes way k to pe (the pieces of a
 * striped transfer count k up; 0 otherwise). Non-blocking. */
int fsh_rma_post(struct fsh_ctx *ctx, struct fsh_op_track *sync, int kind, void *local,
                 size_t len, int pe, const struct fsh_xseg *seg, size_t nseg, bool has_imm,
                 uint64_t imm, unsigned k);
/* Post [local, local + len) to or from (seg, off) of pe on lane (ctx's own, where the buffer
 * allows: rma.c's lane_for; NULL: through the engine), in as many pieces as the provider's
 * message size and pe's ways ask for. Non-blocking. */
int fsh_rma_post_split(struct fsh_ctx *ctx, struct fsh_lane *lane, struct fsh_op_track *sync,
                       int kind, void *local, enum fsh_seg seg, uint64_t off, size_t len, int pe);

/* Quiet's flush of counted injected puts, one ordered operation per target PE written since
 * the last (rma_post.c's header). */
/* What fsh_rma_post_flush_init reserves of the symmetric heap, on every PE. */
#define FSH_RMA_POST_FLUSH_BYTES 64

/* Reserve the flush word (always, so the heap's layout does not depend on the provider) and
 * choose the mode from the provider's ordering. After fsh_arrive_init. */
int fsh_rma_post_flush_init(void);
void fsh_rma_post_flush_fini(void);

/* Post one flush to every PE marked since the last call, on ctx's track, and wait for them:
 * on return every counted put posted before the call is in its target's memory. */
int fsh_rma_post_flush(struct fsh_ctx *ctx);

/* Would a small put to pe be the first since the last flush (posted delivery-complete with a
 * record: a lone put + quiet costs that one write)? Read without the engine lock: a hint. */
bool fsh_rma_post_first_to(int pe);

/* SHMEM_INFO's line. */
const char *fsh_rma_post_flush_describe(void);

#endif
