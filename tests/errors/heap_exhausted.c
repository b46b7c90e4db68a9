/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap_exhausted: shmem_malloc beyond the symmetric heap returns NULL on every PE with a
 * warning giving the sizes and the fix; it is not fatal, and the heap still works afterwards.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    char *big = shmem_malloc((size_t)1 << 30);
    char *small = shmem_malloc(64);
    int ok = big == NULL && small != NULL;
    shmem_free(small);
    shmem_finalize();
    printf("heap_exhausted: %s\n", ok ? "PASS" : "FAIL (want NULL for 1 GiB, a block for 64 B)");
    return ok ? 0 : 1;
}
