/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap.h: the symmetric heap allocator.
 *
 * Deterministic: the same sequence of calls gives the same offsets on every PE, which is what
 * makes a block symmetric. It only does the bookkeeping (the collective barriers of
 * shmem_malloc and friends are the API's); it never touches the fabric.
 */
#ifndef FSH_HEAP_H
#define FSH_HEAP_H

#include <stdbool.h>
#include <stddef.h>

/* The allocator has two instances with the same rules: the symmetric heap (fsh_heap_*) and the
 * device heap on the PE's GPU (fsh_heap_dev_*: no realloc; its memory is never touched here). */
enum { FSH_HEAP_HOST = 0, FSH_HEAP_DEVICE, FSH_HEAP_NKINDS };

/* Every block is aligned at least this much (a cache line; enough for any AMO type). */
#define FSH_HEAP_MIN_ALIGN 64

/* Map size bytes (a multiple of the page size) at a 2 MiB aligned base: fd < 0 private
 * memory, else the file fd shared (local.c's memfds: our heap, and peers' segments). Returns
 * the base or NULL (error recorded). */
void *fsh_heap_map(size_t size, int fd);
void fsh_heap_unmap(void *base, size_t size);

/* Manage [base, base+size) — the bookkeeping itself lives outside the heap, so a remote write
 * into the heap can never corrupt it. */
int fsh_heap_init(void *base, size_t size);
void fsh_heap_fini(void);

/* The heap bytes an allocation of size takes (every block is a multiple of the alignment). */
static inline size_t fsh_heap_rounded(size_t size)
{
    return (size + FSH_HEAP_MIN_ALIGN - 1) & ~(size_t)(FSH_HEAP_MIN_ALIGN - 1);
}

/* NULL when no block fits (error recorded with the sizes); align: power of two or 0. */
void *fsh_heap_alloc(size_t size, size_t align);
/* -EINVAL when p is not the start of a live block (double free, foreign pointer). */
int fsh_heap_free(void *p);
/* What the runtime itself takes from the symmetric heap at init (what: the user and the
 * arithmetic, e.g. "put-with-signal's inboxes (2 x 3 PEs x 8 slots x 64 bytes)"); on failure
 * the error says how much SHMEM_SYMMETRIC_SIZE would do, or alt (another fix). */
void *fsh_heap_reserve(size_t size, size_t align, const char *what, const char *alt);
/* Grow or shrink; in place when possible, else move (copying the old contents). NULL on
 * failure, with the old block left as it was. */
void *fsh_heap_realloc(void *p, size_t size);
/* Size of the live block starting at p, 0 if none. */
size_t fsh_heap_block_size(const void *p);
/* True when [p, p+len) lies inside one live block (a walk of the blocks: for debug checks). */
bool fsh_heap_in_live_block(const void *p, size_t len);

struct fsh_heap_stats {
    size_t size, used, free, largest_free;
    size_t blocks, free_blocks;
};
void fsh_heap_stats(struct fsh_heap_stats *st);
/* Check every invariant (ordering, no overlap, coalesced free space, totals); 0 when sound. */
int fsh_heap_check(void);

/* The device heap: [base, base+size) of GPU memory, same allocation rules. */
int fsh_heap_dev_init(void *base, size_t size);
void fsh_heap_dev_fini(void);
void *fsh_heap_dev_alloc(size_t size, size_t align);
int fsh_heap_dev_free(void *p);

#endif
