/*
 * team.h: teams, the ordered PE sets collectives run on. Only SHMEM_TEAM_WORLD exists so far.
 */
#ifndef FSH_TEAM_H
#define FSH_TEAM_H

struct fsh_team {
    int start, stride, size; /* world PEs start, start+stride, ... */
    int my_pe;               /* my index in the team, -1 when not a member */
    unsigned slot;           /* index of the team's synchronization state (0: world) */
};

extern struct fsh_team fsh_team_world;

/* Fill in the world team once the job's size is known. */
void fsh_team_init_world(int me, int npes);

#endif
