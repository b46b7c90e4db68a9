/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bad_symsize: SHMEM_SYMMETRIC_SIZE that is not a size stops shmem_init with the value quoted.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    printf("bad_symsize: shmem_init returned\n");
    shmem_finalize();
    return 0;
}
