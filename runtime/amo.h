/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo.h: remote atomic memory operations: libfabric atomics, or applied by the target's
 * progress engine where the provider has none.
 */
#ifndef FSH_AMO_H
#define FSH_AMO_H

#include <stdbool.h>
#include <stddef.h>

#include "mr.h"

struct fsh_ctx;

enum fsh_amo_op {
    FSH_AMO_FETCH = 1, FSH_AMO_SET, FSH_AMO_SWAP, FSH_AMO_CSWAP,
    FSH_AMO_FETCH_INC, FSH_AMO_INC, FSH_AMO_FETCH_ADD, FSH_AMO_ADD,
    FSH_AMO_FETCH_AND, FSH_AMO_AND, FSH_AMO_FETCH_OR, FSH_AMO_OR,
    FSH_AMO_FETCH_XOR, FSH_AMO_XOR,
};

/* Query the provider (once) and register the operand/result bounce buffers. Without
 * provider atomics, reserve the inboxes of AMOs applied by the target (peers of them, lent to
 * sources: FABSHMEM_AMO_PEERS): collective, at the same point of init on every PE. */
int fsh_amo_init(long peers);
/* Are AMOs applied by their target's engine (an open fabric without atomics)? */
bool fsh_amo_by_target(void);
/* Heap bytes fsh_amo_init reserves then for npes PEs (the memory model's figure). */
size_t fsh_amo_heap_bytes(int npes, long peers);
void fsh_amo_fini(void);

/* True for the fetching ops (they return the old value). */
bool fsh_amo_fetches(int op);

/* One atomic on the size-byte (4 or 8) object at (seg, off) of pe. value: operand (unused for
 * fetch/inc/fetch_inc), cond: compare value (cswap), fetch: where the old value goes (fetching
 * ops). Blocking fetching ops return with *fetch set; nbi ones and the non-fetching ops return
 * once posted (quiet completes them). */
int fsh_amo(struct fsh_ctx *ctx, int op, enum fsh_seg seg, uint64_t off, const void *value,
            const void *cond, void *fetch, size_t size, int pe, bool nbi);

/* Apply op to the size-byte object at target in this process's memory with CPU atomics (the
 * one-node domain; devmem.c also uses it on a host copy of a device word). fetch may be NULL. */
void fsh_amo_apply(int op, void *target, const void *value, const void *cond, void *fetch,
                   size_t size);

#endif
