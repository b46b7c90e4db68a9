/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_invalid_team: a collective on the SHMEM_TEAM_INVALID a split handed to a PE outside
 * the new team ends the job with the cause and the fix.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe();
    shmem_team_t odd;
    /* PE 0 is not in the team of odd PEs: it gets SHMEM_TEAM_INVALID. */
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, shmem_n_pes() / 2, NULL, 0, &odd);
    static long x, y;
    if (me == 0) {
        shmem_long_sum_reduce(odd, &y, &x, 1);
        printf("coll_invalid_team: the reduction on SHMEM_TEAM_INVALID returned\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
