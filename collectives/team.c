/*
 * team.c: the teams of the job. SHMEM_TEAM_WORLD holds every PE in rank order, with
 * synchronization slot 0; contexts created with shmem_ctx_create belong to it.
 */
#include "team.h"

#include <shmem.h>

struct fsh_team fsh_team_world = {0, 1, 0, -1, 0};
FSH_API shmem_team_t const SHMEM_TEAM_WORLD = &fsh_team_world;

void fsh_team_init_world(int me, int npes)
{
    fsh_team_world.start = 0;
    fsh_team_world.stride = 1;
    fsh_team_world.size = npes;
    fsh_team_world.my_pe = me;
    fsh_team_world.slot = 0;
}
