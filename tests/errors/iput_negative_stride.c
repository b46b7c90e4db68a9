/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iput_negative_stride: strides are element counts and must not be negative; a negative one
 * ends the job instead of writing below the destination.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int *buf = shmem_calloc(64, sizeof(int));
    int src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    shmem_int_iput(buf + 32, src, -1, 1, 8, shmem_my_pe());
    printf("iput_negative_stride: shmem_int_iput with dst -1 returned\n");
    shmem_finalize();
    return 0;
}
