/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * get_bad_pe: shmem_getmem from PE -1 ends the job with the PE-range report.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    long *src = shmem_malloc(sizeof(long));
    long dst = 0;
    shmem_getmem(&dst, src, sizeof(long), -1);
    printf("get_bad_pe: shmem_getmem from PE -1 returned\n");
    shmem_finalize();
    return 0;
}
