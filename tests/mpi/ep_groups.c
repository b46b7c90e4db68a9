/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_groups: the expert-parallel exchange over EP groups, sub-teams that split the world, every
 * byte judged (ep_judge.h) with the group's own PE numbers.
 *
 * Two splits, each group running every case of ep_exchange at once on its own handle:
 *   - even and odd PEs (shmem_team_split_strided, stride 2): groups of equal size at an even
 *     number of PEs, different sizes (so different shapes and block sizes) at an odd one;
 *   - the first npes - 1 PEs and the last one alone (a group of one exchanges with itself).
 * Each group's data comes from seeds of its own, so a token that crossed into the other group
 * is wrong data, not an accident of equal bytes. The world team runs between the splits, on
 * handles made after the group handles were destroyed.
 */
#include <stdio.h>

#include "../ep_judge.h"

#define NAME "ep_groups"

/* Every case on team (this PE's group g), with the group's numbering. */
static void run_group(shmem_team_t team, int g)
{
    me = shmem_team_my_pe(team);
    npes = shmem_team_n_pes(team);
    t_check(me >= 0 && npes >= 1, "group %d: team numbers %d of %d", g, me, npes);
    struct ecase cases[8];
    int nc = ep_cases(cases);
    for (int ci = 0; ci < nc; ci++) {
        ep_host_case(team, ci + 16 * (g + 1), &cases[ci]);
    }
}

/* This PE's team of the split of the world into [0, first) and [first, N) when stride is 1,
 * or into even and odd PEs when stride is 2; g is set to its group. */
static shmem_team_t split(int stride, int first, int *g)
{
    int N = shmem_n_pes(), w = shmem_my_pe();
    shmem_team_t a = SHMEM_TEAM_INVALID, b = SHMEM_TEAM_INVALID;
    if (stride == 2) {
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (N + 1) / 2, NULL, 0, &a);
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, N / 2, NULL, 0, &b);
        *g = w % 2;
    } else {
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, first, NULL, 0, &a);
        shmem_team_split_strided(SHMEM_TEAM_WORLD, first, 1, N - first, NULL, 0, &b);
        *g = w < first ? 2 : 3;
    }
    return a != SHMEM_TEAM_INVALID ? a : b;
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int N = shmem_n_pes(), g;
    shmem_team_t t = split(2, 0, &g);
    if (t_check(t != SHMEM_TEAM_INVALID, "PE %d is in no even/odd group", shmem_my_pe())) {
        run_group(t, g);
        shmem_team_destroy(t);
    }
    run_group(SHMEM_TEAM_WORLD, 5);
    t = split(1, N - 1, &g);
    if (t_check(t != SHMEM_TEAM_INVALID, "PE %d is in no first/last group", shmem_my_pe())) {
        run_group(t, g);
        shmem_team_destroy(t);
    }
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
