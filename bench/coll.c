/*
 * coll: barrier latency and all-to-all time and bus bandwidth over a size sweep, with the put
 * bandwidth of the same fabric measured in the same run as the ceiling.
 *
 *   mpirun -n N ./bench/coll [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP]
 *
 * Standard OpenSHMEM 1.5 API only (teams, shmem_alltoallmem), so it builds with other
 * implementations' oshcc where they have 1.5. Reported:
 *   barrier       shmem_barrier_all and shmem_team_sync(SHMEM_TEAM_WORLD): mean time per call
 *                 over ITERS back-to-back calls, the slowest PE's.
 *   alltoall      shmem_alltoallmem with a block of `size` bytes per peer: mean time per call
 *                 (slowest PE), algbw = N*size / time and busbw = algbw * (N-1)/N, as
 *                 nccl-tests defines them (bytes leaving one PE for the others, per second).
 *   put bw        the ceiling: PE 0 -> PE 1 windowed shmem_putmem_nbi of `size` bytes + quiet
 *                 (one sender, so it is what one PE's link delivers); ratio = busbw / put bw.
 * After the timed calls every PE checks every byte of one more all-to-all against a pattern
 * of (sender, receiver, index); #wrong sums the bad bytes of all PEs. No time is asserted.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static uint8_t pattern(int from, int to, size_t i)
{
    return (uint8_t)(i * 131 + (size_t)from * 17 + (size_t)to * 7 + 1);
}

/* The slowest PE's value. */
static double slowest(double v)
{
    static double in, out;
    in = v;
    shmem_double_max_reduce(SHMEM_TEAM_WORLD, &out, &in, 1);
    return out;
}

static double put_bw(uint8_t *dst, const uint8_t *src, size_t size, int iters)
{
    double bw = 0;
    shmem_barrier_all();
    if (shmem_my_pe() == 0 && shmem_n_pes() > 1) {
        bw = bench_put_bw(dst, src, size, 1, 16, iters / 4 > 2 ? iters / 4 : 2);
    }
    shmem_barrier_all();
    return slowest(bw);
}

int main(int argc, char **argv)
{
    size_t min = 8, max = 1 << 20;
    int iters = 100, warmup = 10, opt;
    while ((opt = getopt(argc, argv, "b:e:n:w:h")) != -1) {
        switch (opt) {
        case 'b': min = bench_parse_size(optarg); break;
        case 'e': max = bench_parse_size(optarg); break;
        case 'n': iters = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP]\n", argv[0]);
            return 2;
        }
    }
    if (min == 0) {
        min = 1;
    }
    if (iters < 1 || warmup < 0 || max < min) {
        fprintf(stderr, "coll: bad arguments\n");
        return 2;
    }
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    size_t span = max * (size_t)npes;
    uint8_t *src = shmem_malloc(span), *dst = shmem_malloc(span);
    if (!src || !dst) {
        if (me == 0) {
            fprintf(stderr, "coll: cannot allocate 2 x %zu bytes (raise SHMEM_SYMMETRIC_SIZE)\n",
                    span);
        }
        shmem_global_exit(1);
    }
    memset(src, 0x5a, span);
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);

    for (int i = 0; i < warmup; i++) {
        shmem_barrier_all();
    }
    double t0 = bench_now_us();
    for (int i = 0; i < iters; i++) {
        shmem_barrier_all();
    }
    double bar = slowest((bench_now_us() - t0) / iters);
    t0 = bench_now_us();
    for (int i = 0; i < iters; i++) {
        shmem_team_sync(SHMEM_TEAM_WORLD);
    }
    double sync = slowest((bench_now_us() - t0) / iters);
    if (me == 0) {
        printf("# %s: %d PEs; %d iterations (+%d warmup)\n", name, npes, iters, warmup);
        printf("# barrier_all(us) %10.2f   team_sync(us) %10.2f\n", bar, sync);
        printf("# %10s %12s %12s %12s %12s %8s %7s\n", "size(B)", "a2a(us)", "algbw(MB/s)",
               "busbw(MB/s)", "put bw(MB/s)", "ratio", "#wrong");
    }

    long total_wrong = 0;
    for (size_t size = min; size <= max; size *= 2) {
        int n = size >= (1 << 20) ? (iters + 9) / 10 : iters;
        shmem_barrier_all();
        for (int i = -warmup; i < n; i++) {
            if (i == 0) {
                shmem_barrier_all();
                t0 = bench_now_us();
            }
            shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, size);
        }
        double t = slowest((bench_now_us() - t0) / n);
        double ceiling = put_bw(dst, src, size, n);
        for (int to = 0; to < npes; to++) {
            for (size_t i = 0; i < size; i++) {
                src[(size_t)to * size + i] = pattern(me, to, i);
            }
        }
        shmem_barrier_all();
        shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, size);
        static long wrong, wrong_all;
        wrong = 0;
        for (int from = 0; from < npes; from++) {
            for (size_t i = 0; i < size; i++) {
                wrong += dst[(size_t)from * size + i] != pattern(from, me, i);
            }
        }
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &wrong_all, &wrong, 1);
        total_wrong += wrong_all;
        double algbw = (double)size * npes / t;
        double busbw = algbw * (npes - 1) / npes;
        if (me == 0) {
            printf("  %10zu %12.2f %12.1f %12.1f %12.1f %8.2f %7ld\n", size, t, algbw, busbw,
                   ceiling, ceiling > 0 ? busbw / ceiling : 0.0, wrong_all);
            fflush(stdout);
        }
    }
    if (me == 0) {
        printf("# %s\n", total_wrong ? "DATA ERRORS: results above are not valid" : "all data verified");
    }
    shmem_free(src);
    shmem_free(dst);
    shmem_finalize();
    return total_wrong ? 1 : 0;
}
