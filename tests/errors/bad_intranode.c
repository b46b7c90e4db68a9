/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bad_intranode: FABSHMEM_INTRANODE that is neither auto nor fabric stops shmem_init with the
 * value quoted and both choices named.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    printf("bad_intranode: shmem_init returned\n");
    shmem_finalize();
    return 0;
}
