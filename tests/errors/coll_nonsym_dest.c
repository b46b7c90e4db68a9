/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_nonsym_dest: a collective's dest is written by peers, so it must be symmetric; a stack
 * array ends the job on every PE with the address report.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int npes = shmem_n_pes();
    long *src = shmem_calloc((size_t)npes, sizeof(long));
    long dest[64];
    shmem_long_alltoall(SHMEM_TEAM_WORLD, dest, src, 1);
    printf("coll_nonsym_dest: shmem_long_alltoall into a stack array returned\n");
    shmem_finalize();
    return (int)dest[0];
}
