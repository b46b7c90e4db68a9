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
#define CALLS 4

static void run_case(int ci, const struct ecase *k)
{
    shmemx_ep_config_t cfg = ep_config(k);
    shmemx_ep_t ep = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    if (!t_check(ep != NULL, "case %s: create returned NULL", k->what)) {
        return;
    }
    size_t tb = k->H * k->de, ce = ep_ce(k);
    uint8_t *tok = malloc(k->M * tb + 1), *sc = malloc(k->M * k->sb + 1);
    int32_t *idx = malloc(k->M * (size_t)k->k * sizeof(int32_t));
    float *w = malloc(k->M * (size_t)k->k * sizeof(float));
    size_t cap = (size_t)npes * k->M * (size_t)k->k;
    uint8_t *eout = malloc(cap * k->H * ce + 1), *out = malloc(k->M * k->H * ce + 1);
    for (int c = 0; c < CALLS; c++) {
        size_t n = ep_inputs(k, ci, c, tok, sc, idx, w);
        shmemx_ep_dispatch_send(ep, tok, k->sb ? sc : NULL, idx, w, n);
        shmemx_ep_recv_t r;
        memset(&r, 0, sizeof(r));
        shmemx_ep_dispatch_recv(ep, &r);
        int ok = ep_judge_dispatch(k, ci, c, "host", &r);
        if (c == 2) {
            continue; /* a dispatch without combine */
        }
        if (ok) {
            ep_experts(k, &r, eout);
        }
        shmemx_ep_combine_send(ep, eout);
        memset(out, 0xee, n * k->H * ce);
        shmemx_ep_combine_recv(ep, out);
        ep_judge_combine(k, c, "host", n, tok, idx, w, out);
    }
    shmemx_ep_destroy(ep);
    free(tok);
    free(sc);
    free(idx);
    free(w);
    free(eout);
    free(out);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    struct ecase cases[8];
    int nc = ep_cases(cases);
    for (int ci = 0; ci < nc; ci++) {
        run_case(ci, &cases[ci]);
    }
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
