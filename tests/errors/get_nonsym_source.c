/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * get_nonsym_source: a get whose source is on the caller's stack ends the job: the remote
 * side of a get must be symmetric.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long stack_src[4] = {1, 2, 3, 4};
    long dst[4];
    if (me == 0) {
        shmem_long_get(dst, stack_src, 4, (me + 1) % npes);
        printf("get_nonsym_source: shmem_long_get from a stack address returned\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    return (int)dst[0] + (int)stack_src[0];
}
