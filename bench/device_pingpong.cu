// SPDX-License-Identifier: BSD-3-Clause
/*
 * device_pingpong: 8-byte put-with-signal ping-pong between 2 PEs, device heap to device heap,
 * from a kernel through the mapping, from a kernel through the proxy, and from the host API;
 * per direction (half the round trip), median of -r repetitions of -n iterations. Data
 * checked: every round's 8 bytes must be the sender's round number (a #wrong column).
 * Needs a GPU; run by tests/gpu/device_check.sh:
 *
 *   nvcc -arch=native -Iinclude bench/device_pingpong.cu -L.libs -lfabshmem -o device_pingpong
 *   FABSHMEM_DEVICE_HEAP_SIZE=64M mpirun -n 2 ./device_pingpong [-n iters] [-r reps]
 *
 * The "mapped" row is meaningful only where the peer's heap is mapped (the first column
 * says how many PEs are); otherwise that row goes through the proxy too, and says so.
 *
 * -q: the idle device quiet instead (any number of PEs): one thread calls shmemx_dev_quiet
 * -n times with nothing in flight (after one proxied put it completed), timed in the kernel
 * with %globaltimer; then the block form from 256 threads. Rows "  idle quiet  USEC  RC" and
 * "  idle quiet, block  USEC  RC", per call, median of -r kernels.
 */
#include <cuda_runtime.h>
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_device.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__device__ static uint64_t now_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* One thread: iters round trips; out[0] = ns elapsed, out[1] = wrong payloads, out[2] = rc. */
__global__ void k_pingpong(shmemx_device_t h, uint64_t *buf, uint64_t *sig, uint64_t base,
                           int iters, uint64_t *out)
{
    int peer = 1 - h.pe;
    uint64_t *mine = &buf[1]; /* the source word, private */
    uint64_t wrong = 0, t0 = now_ns();
    int rc = 0;
    for (int i = 1; i <= iters && rc == 0; i++) {
        uint64_t v = base + (uint64_t)i;
        if (h.pe == 0) {
            *mine = v;
            rc = shmemx_dev_put_signal_nbi(h, &buf[0], mine, 8, sig, v, SHMEMX_DEV_SIGNAL_SET,
                                           peer);
            rc = rc ? rc : shmemx_dev_signal_wait_until(h, sig + 8, SHMEMX_DEV_CMP_EQ, v, NULL);
            wrong += rc == 0 && *(volatile uint64_t *)&buf[2] != v;
        } else {
            rc = shmemx_dev_signal_wait_until(h, sig, SHMEMX_DEV_CMP_EQ, v, NULL);
            wrong += rc == 0 && *(volatile uint64_t *)&buf[0] != v;
            *mine = v;
            rc = rc ? rc : shmemx_dev_put_signal_nbi(h, &buf[2], mine, 8, sig + 8, v,
                                                     SHMEMX_DEV_SIGNAL_SET, peer);
        }
    }
    rc = rc ? rc : shmemx_dev_quiet(h);
    out[0] = now_ns() - t0;
    out[1] = wrong;
    out[2] = (uint64_t)(int64_t)rc;
}

/* One thread (or a block: block != 0) calls quiet iters times with nothing posted since the
 * last completion; out[0] = ns elapsed (thread 0), out[1] = the first nonzero rc. */
__global__ void k_idle_quiet(shmemx_device_t h, int iters, int block, uint64_t *out)
{
    int rc = 0;
    uint64_t t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        int r = block ? shmemx_dev_quiet_block(h) : shmemx_dev_quiet(h);
        rc = rc ? rc : r;
    }
    uint64_t t1 = now_ns();
    if (threadIdx.x == 0) {
        out[0] = t1 - t0;
        out[1] = (uint64_t)(int64_t)rc;
    }
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double kernel_row(shmemx_device_t h, uint64_t *buf, uint64_t *sig, int iters, int reps,
                         uint64_t *wrong_out, uint64_t *base, int *rc_out)
{
    uint64_t *out;
    double us[64];
    cudaMalloc((void **)&out, 3 * sizeof(uint64_t));
    *wrong_out = 0;
    for (int r = 0; r < reps; r++) {
        shmem_barrier_all();
        k_pingpong<<<1, 1>>>(h, buf, sig, *base, iters, out);
        cudaDeviceSynchronize();
        uint64_t o[3];
        cudaMemcpy(o, out, sizeof(o), cudaMemcpyDeviceToHost);
        us[r] = o[0] / 1e3 / (2.0 * iters);
        *wrong_out += o[1];
        if ((int64_t)o[2] != 0) {
            *rc_out = (int)(int64_t)o[2];
        }
        *base += (uint64_t)iters;
    }
    cudaFree(out);
    qsort(us, (size_t)reps, sizeof(double), cmp_d);
    return us[reps / 2];
}

static double host_row(uint64_t *buf, uint64_t *sig, int iters, int reps, uint64_t *wrong_out,
                       uint64_t *base)
{
    int me = shmem_my_pe(), peer = 1 - me;
    double us[64];
    uint64_t *src = (uint64_t *)malloc(8);
    *wrong_out = 0;
    for (int r = 0; r < reps; r++) {
        shmem_barrier_all();
        double t0 = wall();
        for (int i = 1; i <= iters; i++) {
            uint64_t v = *base + (uint64_t)i;
            uint64_t got = 0;
            *src = v;
            if (me == 0) {
                shmem_putmem_signal(&buf[0], src, 8, sig, v, SHMEM_SIGNAL_SET, peer);
                shmem_signal_wait_until(sig + 8, SHMEM_CMP_EQ, v);
                shmem_getmem(&got, &buf[2], 8, me);
            } else {
                shmem_signal_wait_until(sig, SHMEM_CMP_EQ, v);
                shmem_getmem(&got, &buf[0], 8, me);
                shmem_putmem_signal(&buf[2], src, 8, sig + 8, v, SHMEM_SIGNAL_SET, peer);
            }
            *wrong_out += got != v;
        }
        us[r] = (wall() - t0) * 1e6 / (2.0 * iters);
        *base += (uint64_t)iters;
    }
    free(src);
    qsort(us, (size_t)reps, sizeof(double), cmp_d);
    return us[reps / 2];
}

/* Per call, median of reps kernels of iters calls; *rc_out: a nonzero rc a kernel saw. */
static double idle_row(shmemx_device_t h, int iters, int reps, int block, int *rc_out)
{
    uint64_t *out;
    double us[64];
    cudaMalloc((void **)&out, 2 * sizeof(uint64_t));
    for (int r = 0; r < reps; r++) {
        k_idle_quiet<<<1, block ? 256 : 1>>>(h, iters, block, out);
        uint64_t o[2] = {0, 0};
        if (cudaDeviceSynchronize() != cudaSuccess ||
            cudaMemcpy(o, out, sizeof(o), cudaMemcpyDeviceToHost) != cudaSuccess) {
            *rc_out = -100;
        }
        us[r] = o[0] / 1e3 / iters;
        if ((int64_t)o[1] != 0) {
            *rc_out = (int)(int64_t)o[1];
        }
    }
    cudaFree(out);
    qsort(us, (size_t)reps, sizeof(double), cmp_d);
    return us[reps / 2];
}

/* One 8-byte put through the proxy, and its quiet: *rc. */
__global__ void k_one_put(shmemx_device_t h, uint64_t *dst, uint64_t *src, int pe, int *rc)
{
    *src = 42;
    int r = shmemx_dev_put_nbi(h, dst, src, 8, pe);
    *rc = r ? r : shmemx_dev_quiet(h);
}

static int idle_quiet(int iters, int reps)
{
    shmemx_device_t h;
    if (shmemx_device_handle(&h) != 0 || h.win_size == 0) {
        printf("device_pingpong: no device heap (set FABSHMEM_DEVICE_HEAP_SIZE, run on a GPU)\n");
        return 1;
    }
    /* Something through the proxy first (peer table dropped: every peer proxied), so the
     * quiets below follow a completed one, as in an application. */
    uint64_t *buf = (uint64_t *)shmemx_calloc_device(2, 8);
    int *drc, rc = 0, put_rc = -100;
    cudaMalloc((void **)&drc, sizeof(int));
    shmemx_device_t px = h;
    px.peer_base = NULL;
    k_one_put<<<1, 1>>>(px, &buf[0], &buf[1], (h.pe + 1) % h.npes, drc);
    cudaDeviceSynchronize();
    cudaMemcpy(&put_rc, drc, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(drc);
    shmem_barrier_all();
    rc = put_rc;
    double one = idle_row(h, iters, reps, 0, &rc);
    double blk = idle_row(h, iters, reps, 1, &rc);
    if (shmem_my_pe() == 0) {
        printf("# device_pingpong -q: shmemx_dev_quiet with nothing in flight, per call, median "
               "of %d x %d\n",
               reps, iters);
        printf("# %-30s %12s %8s  %s\n", "way", "usec", "rc", "target");
        printf("  %-30s %12.3f %8d  <= 1 us\n", "idle quiet", one, rc);
        printf("  %-30s %12.3f %8d\n", "idle quiet, block", blk, rc);
    }
    shmem_barrier_all();
    shmemx_free_device(buf);
    return rc != 0;
}

int main(int argc, char **argv)
{
    int iters = 1000, reps = 5, c, quiet = 0;
    while ((c = getopt(argc, argv, "n:r:q")) != -1) {
        if (c == 'n') {
            iters = atoi(optarg) > 0 ? atoi(optarg) : 1;
        } else if (c == 'r') {
            reps = atoi(optarg) > 64 ? 64 : atoi(optarg) > 0 ? atoi(optarg) : 1;
        } else if (c == 'q') {
            quiet = 1;
        }
    }
    shmem_init();
    if (quiet) {
        int rc = idle_quiet(iters, reps);
        shmem_finalize();
        return rc;
    }
    if (shmem_n_pes() != 2) {
        printf("device_pingpong: run with 2 PEs\n");
        shmem_finalize();
        return 1;
    }
    shmemx_device_t h;
    if (shmemx_device_handle(&h) != 0 || h.win_size == 0) {
        printf("device_pingpong: no device heap (set FABSHMEM_DEVICE_HEAP_SIZE, run on a GPU)\n");
        shmem_finalize();
        return 1;
    }
    /* Whether the peer is mapped: the host handle's table (the GPU handle's is in device
     * memory). */
    shmemx_device_t hh;
    int peer = 1 - shmem_my_pe();
    int is_mapped = shmemx_device_handle_host(&hh) == 0 && hh.peer_base[peer];
    uint64_t *buf = (uint64_t *)shmemx_calloc_device(4, 8);
    uint64_t *sig = (uint64_t *)shmemx_calloc_device(16, 8);
    uint64_t base = 0, wrong;
    int rc = 0;
    double mapped = kernel_row(h, buf, sig, iters, reps, &wrong, &base, &rc);
    uint64_t wrong_m = wrong;
    shmemx_device_t px = h;
    px.peer_base = NULL;
    double proxied = kernel_row(px, buf, sig, iters, reps, &wrong, &base, &rc);
    uint64_t wrong_p = wrong;
    double host = host_row(buf, sig, iters / 10 > 0 ? iters / 10 : 1, reps, &wrong, &base);
    if (shmem_my_pe() == 0) {
        printf("# device_pingpong: 8 B put-with-signal, device heap, per direction, median of "
               "%d x %d\n",
               reps, iters);
        printf("# %-30s %12s %8s  %s\n", "way", "usec", "#wrong", "target");
        printf("  %-30s %12.2f %8llu  <= 2 us\n",
               is_mapped ? "kernel, mapping" : "kernel, mapping (not mapped: proxy)",
               mapped, (unsigned long long)wrong_m);
        printf("  %-30s %12.2f %8llu  <= 5 us\n", "kernel, proxy", proxied,
               (unsigned long long)wrong_p);
        printf("  %-30s %12.2f %8llu  <= 10 us\n", "host API", host, (unsigned long long)wrong);
        if (rc) {
            printf("# a kernel returned %d\n", rc);
        }
    }
    shmem_barrier_all();
    shmemx_free_device(sig);
    shmemx_free_device(buf);
    shmem_finalize();
    return rc != 0;
}
