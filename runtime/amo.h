/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo.h: remote atomic memory operations: libfabric atomics, or applied by the target's
 * progress engine where the provider has none.
 */
#ifndef FSH_AMO_H
#define FSH_AMO_H

#include <stdbool.h>
#include <stddef.h>

#include "amo_op.h"
#include "mr.h"

struct fsh_ctx;

/* Query the provider (once) and register the operand/result bounce buffers. Without
 * provider atomics, reserve the inboxes of AMOs applied by the target (peers of them, lent to
 * sources: FABSHMEM_AMO_PEERS): collective, at the same point of init on every PE. */
int fsh_amo_init(long peers);
/* Are AMOs applied by their target's engine (an open fabric without atomics)? */
bool fsh_amo_by_target(void);
/* Heap bytes fsh_amo_init reserves then for npes PEs (the memory model's figure). */
size_t fsh_amo_heap_bytes(int npes, long peers);
void fsh_amo_fini(void);

/* One atomic on the size-byte (4 or 8) object at (seg, off) of pe. value: operand (unused for
 * fetch/inc/fetch_inc), cond: compare value (cswap), fetch: where the old value goes (fetching
 * ops). Blocking fetching ops return with *fetch set; nbi ones and the non-fetching ops return
 * once posted (quiet completes them). */
int fsh_amo(struct fsh_ctx *ctx, int op, enum fsh_seg seg, uint64_t off, const void *value,
            const void *cond, void *fetch, size_t size, int pe, bool nbi);

/* Quiet's part: complete the non-fetching AMOs posted injected since the last flush (one
 * fetching read per PE they went to, ordered after them by the provider) and wait for every
 * flush in flight. 0 at once where there are none. */
int fsh_amo_flush(void);

#endif
