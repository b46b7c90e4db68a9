/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_nelems_mismatch: a collective whose nelems (or PE_root, or strides) differ between PEs.
 * Without checks a larger sender writes past a smaller receiver's block (fcollect, alltoall,
 * reductions) or the arrival counts go out of step. By default the fingerprints the
 * collectives' messages carry name both PEs and their values (tests/errors/coll_fp_*); with
 * FABSHMEM_CHECK=1 the arguments are compared before any data moves (coll_mismatch_*).
 * FSH_COLL_CASE picks the collective (default: shmem_broadcastmem); broadcast_rev has the root
 * pass the smaller nelems, broadcast_zero has PE 1 pass 0, broadcast64 is the active-set form,
 * broadcast_pull(_rev) the same as broadcast(_rev) with sizes whose children pull.
 */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>

static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 200];

int main(void)
{
    const char *c = getenv("FSH_COLL_CASE");
    c = c ? c : "broadcast";
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) {
        psync[i] = SHMEM_SYNC_VALUE;
    }
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *src = shmem_calloc(20000, sizeof(long));
    long *dst = shmem_calloc(20000 * (size_t)npes, sizeof(long));
    size_t n = me == 0 ? 100 : 10; /* PE 0 passes 100, the others 10 */
    if (!strcmp(c, "broadcast")) {
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, n, 0);
    } else if (!strcmp(c, "broadcast_rev")) {
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, me == 0 ? 10 : 100, 0);
    } else if (!strcmp(c, "broadcast_zero")) {
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, me == 1 ? 0 : 10, 0);
    } else if (!strcmp(c, "broadcast_pull")) {
        /* one node: children large enough to read their data themselves (broadcast.c) */
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, me == 0 ? 160000 : 80000, 0);
    } else if (!strcmp(c, "broadcast_pull_rev")) {
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, me == 0 ? 8000 : 160000, 0);
    } else if (!strcmp(c, "broadcast64")) {
        shmem_broadcast64(dst, src, n, 0, 0, 0, npes, psync);
    } else if (!strcmp(c, "broadcast_root")) {
        shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 10, me == 0 ? 0 : 1);
    } else if (!strcmp(c, "fcollect")) {
        shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, n);
    } else if (!strcmp(c, "reduce")) {
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, n);
    } else if (!strcmp(c, "reduce_large")) {
        /* one node: both through the mapping (1 KiB and more) */
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, me == 0 ? 4000 : 3000);
    } else if (!strcmp(c, "reduce_mixed")) {
        /* one node: PE 0 through the mapping, the others through the chunks */
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, me == 0 ? 4000 : 100);
    } else if (!strcmp(c, "alltoall")) {
        shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, n);
    } else if (!strcmp(c, "alltoalls")) {
        shmem_long_alltoalls(SHMEM_TEAM_WORLD, dst, src, 1, me == 0 ? 2 : 1, 10);
    } else if (!strcmp(c, "to_all")) {
        shmem_long_sum_to_all(dst, src, (int)n, 0, 0, npes, pwrk, psync);
    } else if (!strcmp(c, "fcollect64")) {
        shmem_fcollect64(dst, src, n, 0, 0, npes, psync);
    }
    printf("coll_nelems_mismatch: %s returned on PE %d\n", c, me);
    shmem_finalize();
    return 0;
}
