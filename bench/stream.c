/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stream: the stream-ordered put-with-signal against the host call and against "a launch plus
 * the same copy" on the same stream (docs/stream.md). PE 0 times, PE 1 is the target (its
 * device heap), every sample one operation made complete:
 *   put_signal_host    shmem_putmem_signal into PE 1's device heap (complete on return)
 *   put_signal_stream  shmemx_putmem_signal_on_stream, then cuStreamSynchronize
 *   launch_copy        cuLaunchHostFunc of an empty function (a kernel launch's stand-in: the
 *                      mock has no kernels) and a device-to-device copy of the same size on the
 *                      stream, then cuStreamSynchronize
 * The rows' ratio that matters (issue 33): put_signal_stream over put_signal_host (the cost of
 * the stream path) and over put_signal_host + launch_copy. Here, on the mock driver, streams are
 * threads and copies memcpy: the figures say what the CPU side costs, nothing about a GPU. With
 * FABSHMEM_CUDA_LIB=libcuda.so.1 on a GPU machine the same program measures the real thing
 * (the launch stand-in is then a host function, slower than a kernel launch). The data check:
 * PE 1 reads back the last put of each size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmemx.h>

#include "../tests/gpu/stream_drv.h"
#include "bench.h"
#include "bench_shmem.h"

static const struct bench_desc desc = {
    .name = "stream",
    .tests = "put_signal_host,put_signal_stream,launch_copy",
    .targets = "device",
    .defaults = "device",
};

static struct bench_opts opts;
static double *samples;

static void nothing(void *arg)
{
    (void)arg;
}

int main(int argc, char **argv)
{
    bench_parse(&opts, &desc, argc, argv);
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2 || shmemx_device_heap_size() == 0) {
        if (me == 0) {
            fprintf(stderr, "stream: needs 2 PEs and a device heap (FABSHMEM_DEVICE_HEAP_SIZE, "
                            "FABSHMEM_CUDA_LIB): %s\n", shmemx_device_info());
        }
        shmem_finalize();
        return 2;
    }
    bench_shmem_start(&opts, &desc);
    drv_open();
    int n = opts.iters > 3 ? opts.iters : 3;
    samples = malloc(sizeof(double) * (size_t)n);
    unsigned char *src = shmemx_malloc_device(opts.max);
    unsigned char *dst = shmemx_malloc_device(opts.max);
    unsigned char *copy = shmemx_malloc_device(opts.max);
    unsigned char *host = malloc(opts.max);
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    void *s = NULL;
    DRV(drv.stream_create(&s, 1));
    if (!samples || !src || !dst || !copy || !host || !sig) {
        fprintf(stderr, "stream: out of memory (lower -e, or raise FABSHMEM_DEVICE_HEAP_SIZE)\n");
        shmem_global_exit(1);
    }
    const char *what[3] = {
        "shmem_putmem_signal into the peer's device heap, complete on return",
        "shmemx_putmem_signal_on_stream + cuStreamSynchronize",
        "cuLaunchHostFunc (empty) + cuMemcpyDtoDAsync of the size + cuStreamSynchronize"};
    const char *names[3] = {"put_signal_host", "put_signal_stream", "launch_copy"};
    for (int test = 0; test < 3; test++) {
        if (!bench_want(&opts, names[test])) {
            continue;
        }
        bench_section(names[test], "device", "us", what[test]);
        for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size)) {
            unsigned long seed = (unsigned long)test * 1000 + size;
            bench_fill(host, size, seed);
            shmem_putmem(src, host, size, me); /* into our own device source */
            shmem_barrier_all();
            double best = 0, median = 0;
            if (me == 0) {
                for (int i = -opts.warmup; i < opts.iters; i++) {
                    double t0 = bench_now_us();
                    if (test == 0) {
                        shmem_putmem_signal(dst, src, size, sig, (uint64_t)i, SHMEM_SIGNAL_SET, 1);
                    } else if (test == 1) {
                        shmemx_putmem_signal_on_stream(dst, src, size, sig, (uint64_t)i,
                                                       SHMEM_SIGNAL_SET, 1, s);
                        DRV(drv.stream_sync(s));
                    } else {
                        DRV(drv.host_fn(s, nothing, NULL));
                        DRV(drv.dtod((uint64_t)(uintptr_t)copy, (uint64_t)(uintptr_t)src, size,
                                     s));
                        DRV(drv.stream_sync(s));
                    }
                    if (i >= 0) {
                        samples[i] = bench_now_us() - t0;
                    }
                }
                median = bench_stats(samples, opts.iters, &best);
            }
            shmem_barrier_all();
            long wrong = 0;
            if (me == 1 && test < 2) {
                memset(host, 0, size);
                shmem_getmem(host, dst, size, me);
                wrong = bench_count_wrong(host, size, seed);
            }
            if (me == 0 && test == 2) {
                memset(host, 0, size);
                shmem_getmem(host, copy, size, me);
                wrong = bench_count_wrong(host, size, seed);
            }
            /* PE 1's count reaches PE 0, which prints. */
            static long wrong_all;
            wrong_all = 0;
            shmem_barrier_all();
            shmem_long_atomic_add(&wrong_all, wrong, 0);
            shmem_barrier_all();
            bench_row(size, median, best, wrong_all);
        }
    }
    if (me == 0) {
        bench_note("%s", shmemx_stream_info());
    }
    shmem_barrier_all();
    DRV(drv.stream_destroy(s));
    int rc = bench_finish();
    shmem_finalize();
    return rc;
}
