/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait_bad_cmp: a comparison code that is not one of SHMEM_CMP_* ends the job before waiting
 * (it would otherwise wait forever on a condition nothing can satisfy).
 */
#include <stdio.h>

#include <shmem.h>

static long flag;

int main(void)
{
    shmem_init();
    shmem_long_wait_until(&flag, 42, 0);
    printf("wait_bad_cmp: shmem_long_wait_until with cmp 42 returned\n");
    shmem_finalize();
    return 0;
}
