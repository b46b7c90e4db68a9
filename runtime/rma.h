/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.h: one-sided puts and gets on the fabric, and their completion.
 *
 * Callers pass the remote side as (segment, offset) from fsh_mr_lookup(); the local side is any
 * buffer. A context (struct fsh_ctx, rma_ctx.h, which this header brings: every operation
 * takes one) tracks its operations so quiet can wait for exactly them.
 * Transfers larger than the provider's message limit are split; small puts are injected (the
 * source is reusable on return).
 */
#ifndef FSH_RMA_H
#define FSH_RMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"
#include "progress.h"
#include "rma_ctx.h"

/* shmem_ctx_destroy: completes the context's operations, ends its session, and frees it
 * (fsh_rma_ctx_release). */
int fsh_rma_ctx_destroy(struct fsh_ctx *ctx);
/* Destroy every context created on team (shmem_team_destroy); the first failure is returned,
 * every context is destroyed. */
int fsh_rma_ctx_destroy_on(const void *team);
/* At init, with the fabric open and the peers inserted: bounce slots for blocking puts of up
 * to size bytes (FABSHMEM_BOUNCE_SIZE, -1: auto; FABSHMEM_BOUNCE_SLOTS of them), so that such
 * a put returns once it is copied. 0 or -errno. */
int fsh_rma_bounce_init(long size, long slots);
/* A slot holds this much more than FABSHMEM_BOUNCE_SIZE: a put-with-signal's descriptor
 * ahead of that much data (signal.c), so both go in one write. */
#define FSH_RMA_BOUNCE_EXTRA 64
/* One line for SHMEM_INFO: blocking puts' bounce slots, or why there are none. */
void fsh_rma_bounce_describe(char *buf, size_t len);
/* At shmem_finalize, after its quiet: frees the contexts left alive and resets the default
 * one (its session closed), for a later shmem_init. */
void fsh_rma_fini(void);

/* nbi false: return when src may be reused (put) / dest holds the data (get). */
int fsh_rma_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src, size_t len,
                int pe, bool nbi);
int fsh_rma_get(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, size_t len,
                int pe, bool nbi);
/* Strided, in blocks: nblocks blocks of bsize elements of esize bytes; block i goes from
 * src + i*sst*esize to remote off + i*dst*esize (ibget: from remote off + i*sst*esize to
 * dest + i*dst*esize). Strides count elements; iput/iget are bsize 1. Complete on return. */
int fsh_rma_ibput(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe);
int fsh_rma_ibget(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, ptrdiff_t dst,
                  ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe);
/* One write of len bytes (at most the provider's message size) to (seg, off) of pe. With
 * has_imm it raises a remote event carrying imm (32 bits; 64 where the provider's
 * cq_data_size is 8, for a kind that uses bits 63..32) at the target once its data is in
 * place, and its completion then only says that src may be reused (transmit-complete): the
 * caller learns of its landing from the target. Non-blocking; src must stay valid until the
 * operation completes unless len fits the inject size. sync (may be NULL) counts it too. */
int fsh_rma_write(struct fsh_ctx *ctx, struct fsh_op_track *sync, const void *src, size_t len,
                  int pe, enum fsh_seg seg, uint64_t off, bool has_imm, uint64_t imm);

/* Is a write of len bytes from src injected (the source reusable when the post returns)? */
bool fsh_rma_injects(const void *src, size_t len);
/* One write with immediate data imm (the event fsh_rma_write raises) that scatters
 * [src, src + len_a + len_b) to two ranges of pe: len_a bytes at (seg_a, off_a), then len_b at
 * (seg_b, off_b). The event comes once both landed. Only where the provider takes two remote
 * segments per write and data (the len_b bytes staged behind len_a others) is host memory;
 * src is injected where fsh_rma_pair_fits (len_a + len_b fit the inject size), else it must
 * be a bounce slot (progress.h), which the write's record gives back. */
bool fsh_rma_pair_fits(size_t len_a, const void *data, size_t len_b);
int fsh_rma_write_pair(struct fsh_ctx *ctx, const void *src, int pe, enum fsh_seg seg_a,
                       uint64_t off_a, size_t len_a, enum fsh_seg seg_b, uint64_t off_b,
                       size_t len_b, uint32_t imm);
/* The largest len fsh_rma_write and fsh_rma_read take (the provider's message size). */
size_t fsh_rma_max_write(void);
/* One read of len bytes (at most the provider's message size) from (seg, off) of pe into dest.
 * Non-blocking; sync (may be NULL) counts it too. */
int fsh_rma_read(struct fsh_ctx *ctx, struct fsh_op_track *sync, void *dest, size_t len, int pe,
                 enum fsh_seg seg, uint64_t off);
/* The same read on way `way` to pe (fabric.h; 0 with one rail): liveness probes each rail. */
int fsh_rma_read_way(struct fsh_ctx *ctx, struct fsh_op_track *sync, void *dest, size_t len,
                     int pe, enum fsh_seg seg, uint64_t off, unsigned way);
/* The 4- or 8-byte word at off of pe's heap, as it is now (acquire): a load when pe's heap is
 * mapped here, else a read into landing (registered memory of this PE) waited for; what names
 * the wait. 0 or -errno (recorded). */
int fsh_rma_read_word(int pe, uint64_t off, void *landing, size_t size, uint64_t *value,
                      const char *what);

/* Wait until every operation of the context has completed (data visible at the target). */
int fsh_rma_quiet(struct fsh_ctx *ctx);
/* Quiet for the operations of ctx to the world PEs marked in pes[] only (OpenSHMEM 1.6
 * pe_quiet; NULL: none, just the memory fence); one names the PE when there is only one (for
 * liveness reports), else -1. put-with-signal's updates are waited for at every target, as
 * quiet does. */
int fsh_rma_pe_quiet(struct fsh_ctx *ctx, const bool *pes, int one);
/* Quiet every live context (barrier_all, finalize). */
int fsh_rma_quiet_all(void);
/* Work a higher layer must finish before quiet returns (signal.c: its signals applied at
 * their targets). Runs after the context's operations completed. */
void fsh_rma_set_quiet_hook(int (*hook)(void));
/* A higher layer's flush of what it posted counted on the engine's endpoint (amo.c: its
 * injected atomics), run by every quiet, fence and pe_quiet right after the puts' flush. */
void fsh_rma_set_flush_hook(int (*hook)(void));
/* Order earlier puts before later ones to the same PE. With no ordering assumed on the fabric,
 * this is completion of the earlier ones, i.e. quiet. */
int fsh_rma_fence(struct fsh_ctx *ctx);

/* Read the 8-byte word at heap offset off(pe, arg) of every PE of pes[0..n) into landing[pe]
 * (registered), all reads in flight at once, on ctx (its own endpoint, if it has one; NULL: the
 * default context); returns once all landed. For the counts targets keep for a source
 * (arrive.c's arrivals, which reads them through this as its fsh_arrive_read_fn, given by
 * init.c; applied signals in signal.c). */
int fsh_rma_read_words(struct fsh_ctx *ctx, const int *pes, size_t n, uint64_t *landing,
                       uint64_t (*off)(int pe, const void *arg), const void *arg,
                       const char *what);

#endif
