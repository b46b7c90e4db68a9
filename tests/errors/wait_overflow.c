/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait_overflow: shmem_long_test_all with nelems so large that nelems * sizeof(long) wraps
 * around: the byte count once wrapped to a small number, passed the symmetry check and read
 * far past the array (a segfault). It must end with a message naming the routine and nelems.
 */
#include <stdint.h>
#include <stdio.h>

#include <shmem.h>

static long ivars[4];

int main(void)
{
    shmem_init();
    size_t nelems = SIZE_MAX / sizeof(long) + 2; /* nelems * 8 wraps to 8 */
    int r = shmem_long_test_all(ivars, nelems, NULL, SHMEM_CMP_EQ, 0);
    printf("wait_overflow: test_all returned %d\n", r);
    shmem_finalize();
    return 0;
}
