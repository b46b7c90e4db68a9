/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * team_destroy_world: the predefined teams cannot be destroyed; trying ends the job.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    shmem_team_destroy(SHMEM_TEAM_WORLD);
    printf("team_destroy_world: shmem_team_destroy(SHMEM_TEAM_WORLD) returned\n");
    shmem_finalize();
    return 0;
}
