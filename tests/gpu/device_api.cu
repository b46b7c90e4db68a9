// SPDX-License-Identifier: BSD-3-Clause
/*
 * device_api: the device API (include/shmemx_device.h) from real kernels, 2 PEs (one GPU is
 * enough: both PEs open it). Needs a GPU; run by tests/gpu/device_check.sh:
 *
 *   nvcc -arch=native -I<build>/include -Iinclude tests/gpu/device_api.cu -L<build>/.libs \
 *        -lfabshmem -o device_api
 *   FABSHMEM_DEVICE_HEAP_SIZE=256M mpirun -n 2 ./device_api
 *
 * Each case runs twice: with the handle as given (peers whose device heap is mapped here are
 * reached by stores) and with peer_base cleared (everything through the proxy). Each checks
 * data byte for byte on the host after the kernels:
 *  - put_signal: one block puts N bytes (block form) with a SET signal to the next PE, waits
 *    for its own signal, then the host verifies the bytes from the previous PE;
 *  - put_nbi warp + quiet + barrier: every warp puts a stripe, quiet, device barrier, verify;
 *  - put (thread) + fence + put_signal ADD from many blocks: the counter equals the number of
 *    blocks and every block's word is in place;
 *  - team barrier (block form, the world team's device handle): every PE puts its word to
 *    every member, PE 0 late by 200 us, barrier; each then checks every member's word.
 * Prints `device_api: PASS` or `device_api: FAIL (...)`.
 */
#include <cuda_runtime.h>
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_device.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 20)
#define BLOCKS 16

static int fails;

#define CHECK(c, ...)                                                                          \
    do {                                                                                       \
        if (!(c)) {                                                                            \
            fails++;                                                                           \
            printf("  PE %d: ", shmem_my_pe());                                                \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
        }                                                                                      \
    } while (0)

#define CUDA(x)                                                                                \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("device_api: FAIL (%s: %s)\n", #x, cudaGetErrorString(e_));                 \
            shmem_global_exit(1);                                                              \
        }                                                                                      \
    } while (0)

__host__ __device__ static unsigned char pattern(int pe, int round, size_t i)
{
    return (unsigned char)(i * 131 + (size_t)pe * 17 + (size_t)round * 7 + 1);
}

__global__ void fill(unsigned char *p, size_t n, int pe, int round)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        p[i] = pattern(pe, round, i);
    }
}

__global__ void k_put_signal(shmemx_device_t h, unsigned char *dst, const unsigned char *src,
                             uint64_t *sig, uint64_t value, int *rc)
{
    int next = (h.pe + 1) % h.npes;
    int r = shmemx_dev_put_signal_nbi_block(h, dst, src, N, sig, value, SHMEMX_DEV_SIGNAL_SET,
                                            next);
    if (threadIdx.x == 0) {
        if (r == 0) {
            r = shmemx_dev_signal_wait_until(h, sig, SHMEMX_DEV_CMP_EQ, value, NULL);
        }
        if (r == 0) {
            r = shmemx_dev_quiet(h);
        }
        *rc = r;
    }
}

__global__ void k_warp_put(shmemx_device_t h, unsigned char *dst, const unsigned char *src,
                           int *rc)
{
    int next = (h.pe + 1) % h.npes;
    unsigned warps = gridDim.x * blockDim.x / 32;
    unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    size_t stripe = N / warps;
    int r = shmemx_dev_put_nbi_warp(h, dst + w * stripe, src + w * stripe, stripe, next);
    int q = shmemx_dev_quiet_block(h); /* every thread of the block calls it */
    r = r ? r : q;
    if (r != 0 && threadIdx.x % 32 == 0) {
        atomicExch(rc, r);
    }
}

__global__ void k_barrier(shmemx_device_t h, int *rc)
{
    int r = shmemx_dev_quiet_all(h);
    if (r == 0) {
        r = shmemx_dev_barrier_all(h);
    }
    *rc = r;
}

__global__ void k_counter(shmemx_device_t h, uint64_t *words, uint64_t *count, int *rc)
{
    int next = (h.pe + 1) % h.npes;
    if (threadIdx.x == 0) {
        uint64_t v = 1000u * (uint64_t)h.pe + blockIdx.x;
        uint64_t *src = &words[BLOCKS + blockIdx.x]; /* a private word of this PE's heap */
        *src = v;
        int r = shmemx_dev_put(h, &words[blockIdx.x], src, 8, next);
        if (r == 0) {
            r = shmemx_dev_fence(h);
        }
        if (r == 0) {
            r = shmemx_dev_put_signal_nbi(h, NULL, NULL, 0, count, 1, SHMEMX_DEV_SIGNAL_ADD,
                                          next);
        }
        if (r == 0) {
            r = shmemx_dev_signal_wait_until(h, count, SHMEMX_DEV_CMP_GE, BLOCKS, NULL);
        }
        if (r != 0) {
            atomicExch(rc, r);
        }
    }
}

/* One block: this PE's word v + my to every member (blocking), the team barrier, then every
 * member's word must be there: *rc = the barrier's rc, or -50 - (words wrong). */
__global__ void k_team(shmemx_device_t h, shmemx_dev_team_t t, uint64_t *tw, uint64_t v,
                       int *rc)
{
    int r = 0;
    if (threadIdx.x == 0) {
        if (t.my == 0) { /* late: the others must wait for it */
            uint64_t t0, t1;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
            do {
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
            } while (t1 - t0 < 200000);
        }
        tw[64] = v + (uint64_t)t.my; /* the source: a private word of this PE's heap */
        for (int i = 0; i < t.size && r == 0; i++) {
            r = shmemx_dev_put(h, &tw[t.my], &tw[64], 8, t.start + i * t.stride);
        }
    }
    int b = shmemx_dev_team_barrier_block(h, t);
    if (threadIdx.x == 0) {
        int bad = 0;
        for (int i = 0; i < t.size; i++) {
            bad += *(volatile uint64_t *)&tw[i] != v + (uint64_t)i;
        }
        *rc = r ? r : b ? b : bad ? -50 - bad : 0;
    }
}

static void run(shmemx_device_t h, shmemx_dev_team_t team, const char *how, int round)
{
    int me = shmem_my_pe(), npes = shmem_n_pes(), prev = (me + npes - 1) % npes;
    unsigned char *dst = (unsigned char *)shmemx_malloc_device(N);
    uint64_t *sig = (uint64_t *)shmemx_calloc_device(1, 64);
    uint64_t *words = (uint64_t *)shmemx_calloc_device(2 * BLOCKS + 16, 8);
    unsigned char *src, *host = (unsigned char *)malloc(N);
    int *rc, hrc = 0;
    CUDA(cudaMalloc((void **)&src, N));
    CUDA(cudaMalloc((void **)&rc, sizeof(int)));
    CUDA(cudaMemset(rc, 0, sizeof(int)));
    fill<<<64, 256>>>(src, N, me, round);
    CUDA(cudaDeviceSynchronize());
    shmem_barrier_all();

    k_put_signal<<<1, 256>>>(h, dst, src, sig, 100 + (uint64_t)round, rc);
    CUDA(cudaDeviceSynchronize());
    CUDA(cudaMemcpy(&hrc, rc, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(hrc == 0, "%s put_signal: kernel returned %d", how, hrc);
    CUDA(cudaMemcpy(host, dst, N, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        bad += host[i] != pattern(prev, round, i);
    }
    CHECK(bad == 0, "%s put_signal: %zu of %d bytes from PE %d wrong", how, bad, N, prev);
    shmem_barrier_all();

    fill<<<64, 256>>>(src, N, me, round + 1);
    CUDA(cudaDeviceSynchronize());
    k_warp_put<<<8, 128>>>(h, dst, src, rc);
    CUDA(cudaDeviceSynchronize());
    k_barrier<<<1, 1>>>(h, rc);
    CUDA(cudaDeviceSynchronize());
    CUDA(cudaMemcpy(&hrc, rc, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(hrc == 0, "%s warp put / barrier: kernel returned %d", how, hrc);
    CUDA(cudaMemcpy(host, dst, N, cudaMemcpyDeviceToHost));
    bad = 0;
    for (size_t i = 0; i < N; i++) {
        bad += host[i] != pattern(prev, round + 1, i);
    }
    CHECK(bad == 0, "%s warp put: %zu of %d bytes from PE %d wrong", how, bad, N, prev);
    shmem_barrier_all();

    k_counter<<<BLOCKS, 32>>>(h, words, &words[2 * BLOCKS], rc);
    CUDA(cudaDeviceSynchronize());
    CUDA(cudaMemcpy(&hrc, rc, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(hrc == 0, "%s counter: kernel returned %d", how, hrc);
    uint64_t got[BLOCKS + 1];
    CUDA(cudaMemcpy(got, words, BLOCKS * 8, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(&got[BLOCKS], &words[2 * BLOCKS], 8, cudaMemcpyDeviceToHost));
    CHECK(got[BLOCKS] == BLOCKS, "%s counter: %llu signals, want %d", how,
          (unsigned long long)got[BLOCKS], BLOCKS);
    for (int b = 0; b < BLOCKS; b++) {
        CHECK(got[b] == 1000u * (uint64_t)prev + (uint64_t)b, "%s counter: word %d is %llu", how,
              b, (unsigned long long)got[b]);
    }
    shmem_barrier_all();

    uint64_t *tw = (uint64_t *)shmemx_calloc_device(72, 8);
    shmem_barrier_all();
    k_team<<<1, 64>>>(h, team, tw, 7000 + 100 * (uint64_t)round, rc);
    CUDA(cudaDeviceSynchronize());
    CUDA(cudaMemcpy(&hrc, rc, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(hrc == 0, "%s team barrier: kernel returned %d (-50 - n: n words missing after it)",
          how, hrc);
    shmem_barrier_all();
    shmemx_free_device(tw);
    CUDA(cudaFree(src));
    CUDA(cudaFree(rc));
    free(host);
    shmemx_free_device(words);
    shmemx_free_device(sig);
    shmemx_free_device(dst);
}

int main(void)
{
    shmem_init();
    shmemx_device_t h;
    if (shmemx_device_handle(&h) != 0 || h.win_size == 0) {
        printf("device_api: FAIL (no device API handle with a device heap: set "
               "FABSHMEM_DEVICE_HEAP_SIZE and run on a GPU)\n");
        shmem_finalize();
        return 1;
    }
    int mapped = 0;
    shmemx_device_t hh; /* the host handle: the GPU handle's peer table is device memory */
    if (shmemx_device_handle_host(&hh) == 0) {
        for (int pe = 0; pe < hh.npes; pe++) {
            mapped += hh.peer_base[pe] != NULL;
        }
    }
    if (shmem_my_pe() == 0) {
        printf("  device_api: %d of %d PEs mapped here, %d rings of %llu\n", mapped, h.npes,
               h.nchan, (unsigned long long)h.nslots);
    }
    shmemx_dev_team_t team;
    if (shmemx_device_team(SHMEM_TEAM_WORLD, &team) != 0) {
        printf("device_api: FAIL (PE %d: shmemx_device_team(SHMEM_TEAM_WORLD) failed)\n",
               shmem_my_pe());
        shmem_finalize();
        return 1;
    }
    run(h, team, "as given", 1);
    shmemx_device_t proxied = h;
    proxied.peer_base = NULL; /* every peer through the proxy */
    run(proxied, team, "proxied", 3);
    if (shmem_my_pe() == 0 || fails) {
        printf("device_api: %s (PE %d: %d checks failed)\n", fails ? "FAIL" : "PASS",
               shmem_my_pe(), fails);
    }
    shmem_finalize();
    return fails ? 1 : 0;
}
