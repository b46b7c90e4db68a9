/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * free_mismatch: PE 0 frees block A while PE 1 frees block B. The heaps then differ (the next
 * shmem_malloc returns different offsets on the two PEs, and a put lands in the wrong block);
 * with FABSHMEM_CHECK=1 the blocks are compared across PEs and the job ends at the free.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe();
    char *a = shmem_malloc(64);
    char *b = shmem_malloc(128);
    shmem_free(me == 0 ? a : b);
    char *c = shmem_malloc(64);
    printf("free_mismatch: PE %d: the next block is at %p (a %p, b %p)\n", me, (void *)c,
           (void *)a, (void *)b);
    shmem_finalize();
    return 0;
}
