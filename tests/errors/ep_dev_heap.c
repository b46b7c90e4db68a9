/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_dev_heap: an expert-parallel handle whose buffers are in the device heap (device_heap =
 * 1, on the mock CUDA driver: built --with-cuda only, so is this test). Its GPU path's handle
 * is made (private buffers and state in device memory; the state read back is clean), then the
 * host reference, which reads its buffers with CPU loads, is refused on it with the fix.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <shmemx.h>
#include <shmemx_ep_device.h>

int main(void)
{
    setenv("FABSHMEM_CUDA_LIB", FSH_MOCK_CUDA, 0);
    shmem_init();
    int me = shmem_my_pe();
    shmemx_ep_config_t cfg = {.max_tokens = 16,
                              .hidden = 8,
                              .dispatch_elem_bytes = 1,
                              .combine_type = SHMEMX_EP_BFLOAT16,
                              .num_experts = 8,
                              .topk = 2,
                              .scale_bytes = 4,
                              .device_heap = 1};
    shmemx_ep_t ep = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    shmemx_ep_device_t d;
    shmemx_device_t h;
    int ok = shmemx_ep_device_handle(ep, &d) == 0 && shmemx_device_handle_host(&h) == 0 &&
             shmemx_ep_device_check(ep) == 0;
    uint64_t sig = (uint64_t)(uintptr_t)d.sig, end = (uint64_t)(uintptr_t)(d.cslab + 1);
    ok = ok && h.win_size && sig >= h.win_base && end <= h.win_base + h.win_size &&
         (d.st < (struct shmemx_ep_dev_state *)(uintptr_t)h.heap_base ||
          (uint64_t)(uintptr_t)d.st >= h.heap_base + h.heap_size);
    printf("ep_dev_heap: PE %d: device handle %s (block in the device heap)\n", me,
           ok ? "made" : "WRONG");
    fflush(stdout);
    static uint8_t tok[16 * 8];
    static int32_t idx[16 * 2];
    static float w[16 * 2];
    if (me == 0) {
        shmemx_ep_dispatch_send(ep, tok, tok, idx, w, 1);
        printf("ep_dev_heap: the host reference ran on a device-heap handle\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
