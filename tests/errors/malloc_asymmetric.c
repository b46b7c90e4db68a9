/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * malloc_asymmetric: PEs passing different sizes to shmem_malloc get blocks at different
 * offsets, and every later block differs too. With FABSHMEM_CHECK=1 the sizes are compared
 * across PEs and the job ends at the faulty call.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe();
    char *buf = shmem_malloc(64 + 64 * (size_t)me);
    printf("malloc_asymmetric: PE %d: shmem_malloc with a PE-dependent size returned %p\n", me,
           (void *)buf);
    shmem_finalize();
    return 0;
}
