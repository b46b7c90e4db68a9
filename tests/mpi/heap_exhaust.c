/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap_exhaust: a request larger than the symmetric heap returns NULL on every PE and leaves
 * the heap fully usable.
 *
 * heap_exhaust.env sets SHMEM_SYMMETRIC_SIZE=8M. shmem_malloc(64M), shmem_calloc and
 * shmem_align of the same size, and shmem_realloc growing a live block to 64M all return NULL
 * (the realloc leaves the original block and its content in place); then 1 MiB blocks are
 * allocated, used as RMA targets and checked. Any warning the library prints goes to stderr and
 * is not checked here.
 */
#include "../test.h"

#define NAME "heap_exhaust"
#define MIB ((size_t)1 << 20)

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    void *p = shmem_malloc(64 * MIB);
    t_check(p == NULL, "shmem_malloc(64M) with an 8M heap returned %p, want NULL", p);
    shmem_free(p);
    p = shmem_calloc(64, MIB);
    t_check(p == NULL, "shmem_calloc(64, 1M) with an 8M heap returned %p, want NULL", p);
    shmem_free(p);
    p = shmem_align(4096, 64 * MIB);
    t_check(p == NULL, "shmem_align(4096, 64M) with an 8M heap returned %p, want NULL", p);
    shmem_free(p);
    p = shmem_malloc((size_t)-1 / 2);
    t_check(p == NULL, "shmem_malloc(SIZE_MAX/2) returned %p, want NULL", p);
    shmem_free(p);
    p = shmem_calloc((size_t)1 << 33, (size_t)1 << 33); /* count * size overflows */
    t_check(p == NULL, "shmem_calloc(2^33, 2^33) returned %p, want NULL", p);
    shmem_free(p);

    uint8_t *keep = shmem_malloc(4096);
    if (t_check(keep != NULL, "shmem_malloc(4096) after failures returned NULL")) {
        t_fill(keep, 4096, me, 1);
        void *r = shmem_realloc(keep, 64 * MIB);
        t_check(r == NULL, "shmem_realloc(4K block, 64M) returned %p, want NULL", r);
        if (r != NULL) {
            keep = r;
        } else {
            t_verify(keep, 4096, me, 1, "block after a failed shmem_realloc");
        }
    }

    /* The heap still works: two 1 MiB blocks, RMA into both. */
    uint8_t *a = shmem_malloc(MIB);
    uint8_t *b = shmem_malloc(MIB);
    uint8_t *src = malloc(MIB);
    if (t_check(a != NULL && b != NULL, "shmem_malloc(1M) after the failures returned NULL") &&
        t_check(src != NULL, "malloc")) {
        t_fill(src, MIB, me, 10);
        shmem_putmem(a, src, MIB, right);
        t_fill(src, MIB, me, 11);
        shmem_putmem(b, src, MIB, left);
        shmem_barrier_all();
        t_verify(a, MIB, left, 10, "1 MiB block a after putmem from PE %d", left);
        t_verify(b, MIB, right, 11, "1 MiB block b after putmem from PE %d", right);
    }
    free(src);
    shmem_free(b);
    shmem_free(a);
    shmem_free(keep);
    shmem_finalize();
    return t_finish(NAME);
}
