/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_dev_bad: input the expert-parallel exchange's GPU path (include/shmemx_ep_device.h)
 * cannot work with: the phase returns SHMEMX_DEV_EINVAL with the cause recorded in the
 * handle, and shmemx_ep_device_check on the host ends the job naming cause and fix; the other
 * PE, waiting in the exchange, ends with it (no hang). EP_DEV_BAD picks the case (each has its
 * .expect), always on PE 0, through the phase functions run by this CPU thread:
 *   expert (default)  token 1 routed to expert 8 of 8
 *   ntokens           17 tokens into a handle made for 16
 *   order             dispatch_recv before any dispatch_send
 *   heap              (every PE) device_heap = 1 with the device heap off: create refuses
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>
#include <shmemx.h>
#include <shmemx_ep_device.h>

int main(void)
{
    const char *bad = getenv("EP_DEV_BAD") ? getenv("EP_DEV_BAD") : "expert";
    shmem_init();
    int me = shmem_my_pe();
    shmemx_ep_config_t cfg = {.max_tokens = 16,
                              .hidden = 8,
                              .dispatch_elem_bytes = 1,
                              .combine_type = SHMEMX_EP_BFLOAT16,
                              .num_experts = 8,
                              .topk = 2,
                              .scale_bytes = 0,
                              .device_heap = strcmp(bad, "heap") == 0};
    shmemx_ep_t ep = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    shmemx_device_t h;
    shmemx_ep_device_t d;
    if (shmemx_device_handle_host(&h) != 0 || shmemx_ep_device_handle(ep, &d) != 0) {
        printf("ep_dev_bad: no handle\n");
        return 1;
    }
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
    int rc = me == 0 && strcmp(bad, "order") == 0
                 ? shmemx_dev_ep_dispatch_recv(h, d, 0, 1)
                 : shmemx_dev_ep_dispatch_send(h, d, tok, NULL, idx, w, n, 0, 1);
    printf("ep_dev_bad: PE %d: the phase returned %d (SHMEMX_DEV_EINVAL is %d)\n", me, rc,
           SHMEMX_DEV_EINVAL);
    fflush(stdout);
    shmemx_ep_device_check(ep); /* PE 0 ends the job here */
    rc = shmemx_dev_ep_dispatch_recv(h, d, 0, 1);
    printf("ep_dev_bad: PE %d returned from the exchange (case %s, %d)\n", me, bad, rc);
    shmemx_ep_destroy(ep);
    shmem_finalize();
    return 0;
}
