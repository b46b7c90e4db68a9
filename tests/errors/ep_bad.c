/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_bad: arguments the expert-parallel exchange (shmemx_ep_*) cannot work with end the job
 * with the cause and the fix, on the PE that passed them; the other PE, waiting in the
 * exchange, ends with it (no hang). EP_BAD picks the case (each has its .expect):
 *   topk (default)  topk 9 with 8 experts at create
 *   expert          PE 0 routes a token to expert 8 of 8
 *   ntokens         PE 0 dispatches 17 tokens with max_tokens 16
 *   group           PE 1 creates with hidden 16 where PE 0 passes 8 (one EP group: world)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>
#include <shmemx.h>

int main(void)
{
    const char *bad = getenv("EP_BAD") ? getenv("EP_BAD") : "topk";
    shmem_init();
    int me = shmem_my_pe();
    shmemx_ep_config_t cfg = {.max_tokens = 16,
                              .hidden = me == 1 && strcmp(bad, "group") == 0 ? 16 : 8,
                              .dispatch_elem_bytes = 1,
                              .combine_type = SHMEMX_EP_BFLOAT16,
                              .num_experts = 8,
                              .topk = strcmp(bad, "topk") == 0 ? 9 : 2,
                              .scale_bytes = 0};
    shmemx_ep_t ep = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    static uint8_t tok[17 * 8];
    static int32_t idx[17 * 2];
    static float w[17 * 2];
    for (int i = 0; i < 17; i++) {
        idx[2 * i] = i % 8;
        idx[2 * i + 1] = (i + 1) % 8;
    }
    size_t n = 4;
    if (me == 0 && strcmp(bad, "expert") == 0) {
        idx[3] = 8;
    }
    if (me == 0 && strcmp(bad, "ntokens") == 0) {
        n = 17;
    }
    shmemx_ep_dispatch_send(ep, tok, NULL, idx, w, n);
    shmemx_ep_recv_t r;
    shmemx_ep_dispatch_recv(ep, &r);
    printf("ep_bad: PE %d returned from the exchange (case %s)\n", me, bad);
    shmemx_ep_destroy(ep);
    shmem_finalize();
    return 0;
}
