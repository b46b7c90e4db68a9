/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_memory.c: the OpenSHMEM routines that allocate and free symmetric memory, on the host
 * heap (shmem_malloc and its kin) and on the device heap (shmemx_*_device).
 *
 * Like api.c: arguments checked first, then one module (the heap or the device heap), and an
 * invalid argument or a failed collective step ends the job with init.c's two-line report.
 * What makes these routines a group is that every one is collective: the barriers that carry
 * the call's fingerprint, and the FABSHMEM_CHECK comparisons, are here.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "api.h"
#include "api_check.h"
#include "coll.h"
#include "devmem.h"
#include "error.h"
#include "fingerprint.h"
#include "heap.h"
#include "init.h"
#include "log.h"
#include "mr.h"
#include "notify.h"
#include "rt.h"
#include "shmem.h"
#include "shmemx.h"
#include "team.h"

/* ------------------------------------------------------------------ symmetric memory */
/* Allocation is collective: every PE makes the same calls with the same sizes, so the
 * deterministic allocator gives every PE the same offsets. A failure is the same on every PE
 * too: NULL and a warning, never a corrupted heap. Barriers are where the spec puts them:
 * after allocation (nobody targets a block before every PE has it), before free (nobody frees
 * a block a peer is still writing). Each of these barriers carries the call's fingerprint
 * (kind, size, alignment, the block's offset: fingerprint.h), so a PE whose call differs from a
 * peer's is named at that call, by default and at no cost ("PE 1 called shmem_malloc(1048576)
 * while PE 0 called shmem_malloc(1024)"), before any put can land in a block that is not
 * where its target has it. */

/* A block's symmetric offset plus one (0 for NULL), for fingerprints. */
static uint64_t block_at(const void *p)
{
    enum fsh_seg seg;
    uint64_t off;
    if (!p || fsh_mr_lookup(p, 1, &seg, &off) != 0) {
        return p ? (uint64_t)(uintptr_t)p : 0;
    }
    return (off + 1) ^ ((uint64_t)seg << 56);
}

/* The barrier of an allocation call, with its fingerprint. */
static void alloc_barrier(const char *fn, enum fsh_fp_kind kind, uint64_t a, uint64_t b,
                          uint64_t c)
{
    done(fn, fsh_coll_barrier_all_fp(fsh_fingerprint_of(kind, a, b, c, 0)));
}

static void *alloc_done(const char *fn, enum fsh_fp_kind kind, void *p, size_t size,
                        uint64_t arg)
{
    if (!p) {
        const struct fsh_error *e = fsh_err_last();
        FSH_WARN("%s(%zu) returns NULL: %s%s%s", fn, size, e ? e->msg : "allocation failed",
                 e && e->fix[0] ? "; " : "", e ? e->fix : "");
        fsh_err_clear();
    }
    alloc_barrier(fn, kind, size, arg, block_at(p));
    return p;
}

/* FABSHMEM_CHECK: every PE must pass the same size and alignment, or the blocks (and all
 * later offsets) differ between PEs. Two AND-reductions over the world: a bit where the
 * arguments differ is 0 in the AND of the words on the PEs that hold a 1 there, and 0 in the
 * AND of the complements on the PEs that hold a 0, so every PE sees the mismatch. */
static void check_same_size(const char *fn, size_t size, size_t align)
{
    if (!fsh_rt.checks) {
        return;
    }
    uint64_t mine = (uint64_t)size ^ ((uint64_t)align << 48), all = mine, all_not = ~mine;
    done(fn, fsh_notify_and_word(&fsh_team_world, &all));
    done(fn, fsh_notify_and_word(&fsh_team_world, &all_not));
    if (all != mine || ~all_not != mine) {
        fsh_init_fatal(fn, "symmetric allocation is collective: every PE must pass the same size (and alignment) in the same order",
                       "size %zu (alignment %zu) differs from another PE's (FABSHMEM_CHECK)", size,
                       align);
    }
}

/* FABSHMEM_CHECK: every PE must free (or reallocate) the same block, or the heaps diverge
 * (PE 0's next block lands where PE 1's live one is). The same two AND-reductions, on the
 * block's symmetric offset (segment in the top byte; 0 for NULL). */
static void check_same_block(const char *fn, const void *ptr)
{
    if (!fsh_rt.checks) {
        return;
    }
    enum fsh_seg seg = FSH_SEG_HEAP;
    uint64_t off = (uint64_t)(uintptr_t)ptr;
    if (ptr && fsh_mr_lookup(ptr, 1, &seg, &off) != 0) {
        seg = FSH_SEG_HEAP; /* not symmetric: the release below says so; compare the address */
    }
    uint64_t mine = ptr ? (off + 1) ^ ((uint64_t)seg << 56) : 0, all = mine, all_not = ~mine;
    done(fn, fsh_notify_and_word(&fsh_team_world, &all));
    done(fn, fsh_notify_and_word(&fsh_team_world, &all_not));
    if (all != mine || ~all_not != mine) {
        size_t size = ptr && seg == FSH_SEG_HEAP ? fsh_heap_block_size(ptr) : 0;
        fsh_init_fatal(fn, "symmetric free is collective: every PE must free the same block (the pointer the same shmem_malloc call returned) in the same order",
                       "block %p (offset %#llx of its symmetric segment, %zu bytes) differs from the block another PE frees (FABSHMEM_CHECK)",
                       ptr, (unsigned long long)(ptr ? off : 0), size);
    }
}

static void *aligned_alloc_sym(const char *fn, size_t align, size_t size)
{
    running(fn);
    check_same_size(fn, size, align);
    if (size == 0) {
        return NULL;
    }
    return alloc_done(fn, align ? FSH_FP_ALIGN : FSH_FP_MALLOC, fsh_heap_alloc(size, align), size,
                      align);
}

FSH_PROFILED(shmem_malloc)
void *pshmem_malloc(size_t size)
{
    return aligned_alloc_sym(FSH_FN, 0, size);
}

FSH_PROFILED(shmem_malloc_with_hints)
void *pshmem_malloc_with_hints(size_t size, long hints)
{
    /* Hints describe use, not placement; every block already supports every use. */
    return aligned_alloc_sym(FSH_FN, 0, size);
}

FSH_PROFILED(shmem_align)
void *pshmem_align(size_t alignment, size_t size)
{
    running(FSH_FN);
    if (alignment == 0 || (alignment & (alignment - 1))) {
        FSH_WARN("shmem_align: alignment %zu is not a power of two; returning NULL", alignment);
        alloc_barrier(FSH_FN, FSH_FP_ALIGN, size, alignment, 0);
        return NULL;
    }
    return aligned_alloc_sym(FSH_FN, alignment, size);
}

FSH_PROFILED(shmem_calloc)
void *pshmem_calloc(size_t count, size_t size)
{
    running(FSH_FN);
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        total = SIZE_MAX;
    }
    check_same_size(FSH_FN, total, 0);
    if (total == SIZE_MAX) {
        FSH_WARN("shmem_calloc(%zu, %zu): size overflows; returning NULL", count, size);
        alloc_barrier(FSH_FN, FSH_FP_CALLOC, total, 0, 0);
        return NULL;
    }
    if (total == 0) {
        return NULL;
    }
    void *p = fsh_heap_alloc(total, 0);
    if (p) {
        memset(p, 0, total);
    }
    return alloc_done(FSH_FN, FSH_FP_CALLOC, p, total, 0);
}

FSH_PROFILED(shmem_realloc)
void *pshmem_realloc(void *ptr, size_t size)
{
    running(FSH_FN);
    if (!ptr) {
        return pshmem_malloc(size);
    }
    check_same_size(FSH_FN, size, 0);
    check_same_block(FSH_FN, ptr);
    if (size == 0) {
        pshmem_free(ptr);
        return NULL;
    }
    uint64_t old = block_at(ptr);
    alloc_barrier(FSH_FN, FSH_FP_REALLOC, size, old, 0);
    void *p = fsh_heap_realloc(ptr, size);
    if (!p && fsh_err_last() && fsh_err_last()->code == -EINVAL) {
        fsh_init_fatal_err(FSH_FN, -EINVAL);
    }
    return alloc_done(FSH_FN, FSH_FP_REALLOC, p, size, old);
}

/* Free is collective: the barrier first, so nobody frees a block a peer is still writing. */
static void free_sym(const char *fn, enum fsh_fp_kind kind, void *ptr, int (*release)(void *))
{
    running(fn);
    check_same_block(fn, ptr);
    if (!ptr) {
        return;
    }
    alloc_barrier(fn, kind, block_at(ptr), 0, 0);
    done(fn, release(ptr));
}

FSH_PROFILED(shmem_free)
void pshmem_free(void *ptr)
{
    free_sym(FSH_FN, FSH_FP_FREE, ptr, fsh_heap_free);
}

/* ------------------------------------------------------------------ device heap (shmemx.h) */
/* Collective like shmem_malloc: the same calls on every PE give the same offsets (the device
 * heap has its own deterministic allocator), a barrier after allocation and before free. */

static void *alloc_device(const char *fn, size_t size, bool zero)
{
    running(fn);
    if (size == 0) {
        return NULL;
    }
    void *p = fsh_dev_alloc(size, 0);
    if (p && zero && fsh_dev_memset(p, 0, size) != 0) {
        fsh_init_fatal_err(fn, fsh_err_last()->code);
    }
    return alloc_done(fn, FSH_FP_MALLOC_DEVICE, p, size, 0);
}

void *shmemx_malloc_device(size_t size)
{
    return alloc_device(__func__, size, false);
}

void *shmemx_calloc_device(size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        running(__func__);
        FSH_WARN("shmemx_calloc_device(%zu, %zu): size overflows; returning NULL", count, size);
        alloc_barrier(__func__, FSH_FP_MALLOC_DEVICE, total, 0, 0);
        return NULL;
    }
    return alloc_device(__func__, total, true);
}

void shmemx_free_device(void *ptr)
{
    free_sym(__func__, FSH_FP_FREE_DEVICE, ptr, fsh_dev_free);
}

size_t shmemx_device_heap_size(void)
{
    running(__func__);
    return fsh_dev_heap_size();
}

const char *shmemx_device_info(void)
{
    running(__func__);
    return fsh_dev_describe();
}
