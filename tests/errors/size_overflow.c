/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * size_overflow: nelems * sizeof(long) overflowing size_t must not wrap to a small transfer:
 * the job ends with the overflow report.
 */
#include <stdint.h>
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    long *buf = shmem_malloc(64);
    long src[8] = {0};
    /* 2^61 + 1 longs: the byte count wraps to 8 without the check. */
    size_t nelems = (SIZE_MAX / sizeof(long)) + 2;
    shmem_long_put(buf, src, nelems, shmem_my_pe());
    printf("size_overflow: shmem_long_put of %zu elements returned\n", nelems);
    shmem_finalize();
    return 0;
}
