/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_after_finalize: the library cannot come up again after shmem_finalize (the spec makes
 * that undefined); the report says so instead of failing somewhere inside the fabric.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    shmem_finalize();
    shmem_init();
    printf("init_after_finalize: the second shmem_init returned\n");
    return 0;
}
