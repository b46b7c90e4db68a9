/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_exchange: the expert-parallel exchange (shmemx_ep_*), every byte judged independently.
 *
 * The judge (ep_judge.h, shared with ep_device): every PE regenerates every PE's tokens,
 * scales, routing and weights of any call from a hash, so each receiver computes on its own
 * what dispatch must deliver and what combine must return, and compares bit for bit.
 *
 * Cases (each 4 calls on one handle back to back, no barrier; call 2 dispatches without a
 * combine, so the call sequence moves on without one): random top-2 routing with FP8-sized
 * elements, scales and bfloat16 combine, some PEs with n = 0; every token to expert 0 (k = 1,
 * float32); top-8 with more experts per PE than 1 and holes (-1); only even experts used (the
 * odd ones receive nothing); top-1 with n = 0 on every odd PE; n = max_tokens.
 */
#include <stdio.h>

#include "../ep_judge.h"

#define NAME "ep_exchange"

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    struct ecase cases[8];
    int nc = ep_cases(cases);
    for (int ci = 0; ci < nc; ci++) {
        ep_host_case(SHMEM_TEAM_WORLD, ci, &cases[ci]);
    }
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
