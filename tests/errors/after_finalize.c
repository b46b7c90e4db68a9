/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * after_finalize: a call after shmem_finalize is reported as such.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    shmem_finalize();
    shmem_barrier_all();
    printf("after_finalize: shmem_barrier_all after shmem_finalize returned\n");
    return 0;
}
