/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ibput_short_stride: a block stride of ibput/ibget counts elements and must be at least bsize
 * (blocks would overlap otherwise); a shorter one ends the job instead of writing overlapping
 * blocks.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int *buf = shmem_calloc(64, sizeof(int));
    int src[16] = {0};
    shmem_int_ibput(buf, src, 2, 4, 4, 3, shmem_my_pe());
    printf("ibput_short_stride: shmem_int_ibput with dst 2 < bsize 4 returned\n");
    shmem_finalize();
    return 0;
}
