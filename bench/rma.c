/*
 * rma: put and get latency and put bandwidth between PE 0 and PE 1, over a size sweep.
 *
 *   mpirun -n 2 ./bench/rma [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP] [-W WINDOW]
 *
 * Written against the standard OpenSHMEM API only, so it also builds with other
 * implementations' oshcc. Per size:
 *   put+quiet  blocking shmem_putmem then shmem_quiet: the time until the data is delivered
 *   get        blocking shmem_getmem: a full round trip
 *   put bw     a window of shmem_putmem_nbi then one shmem_quiet, in MB/s (10^6 bytes/s)
 * Latencies are the median (and minimum) of the timed iterations. After the timed loops PE 0
 * puts a size-specific pattern and PE 1 checks every byte: the #wrong column counts bytes that
 * did not arrive as sent. No time is asserted.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static uint8_t pattern(size_t size, size_t i)
{
    return (uint8_t)(i * 131 + size * 7 + 1);
}

int main(int argc, char **argv)
{
    size_t min = 8, max = 1 << 20;
    int iters = 200, warmup = 20, window = 64;
    int opt;
    while ((opt = getopt(argc, argv, "b:e:n:w:W:h")) != -1) {
        switch (opt) {
        case 'b': min = bench_parse_size(optarg); break;
        case 'e': max = bench_parse_size(optarg); break;
        case 'n': iters = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        case 'W': window = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-b MIN] [-e MAX] [-n ITERS] [-w WARMUP] [-W WINDOW]\n",
                    argv[0]);
            return 2;
        }
    }
    if (min == 0) {
        min = 1;
    }
    if (iters < 1 || warmup < 0 || window < 1 || max < min) {
        fprintf(stderr, "rma: bad arguments\n");
        return 2;
    }
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int peer = npes > 1 ? 1 : 0;
    uint8_t *dst = shmem_malloc(max);
    uint8_t *src = shmem_malloc(max);
    double *t = malloc(sizeof(double) * (size_t)iters);
    if (!dst || !src || !t) {
        if (me == 0) {
            fprintf(stderr, "rma: cannot allocate 2 x %zu bytes (raise SHMEM_SYMMETRIC_SIZE)\n", max);
        }
        shmem_global_exit(1);
    }
    memset(src, 0x5a, max);
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    if (me == 0) {
        printf("# %s: PE 0 -> PE %d of %d; %d iterations (+%d warmup), window %d\n", name, peer,
               npes, iters, warmup, window);
        printf("# %10s %14s %10s %14s %10s %12s %7s\n", "size(B)", "put+quiet(us)", "min", "get(us)",
               "min", "put bw(MB/s)", "#wrong");
    }
    long total_wrong = 0;
    for (size_t size = min; size <= max; size *= 2) {
        double put_med = 0, put_min = 0, get_med = 0, get_min = 0, bw = 0;
        shmem_barrier_all();
        if (me == 0) {
            for (int i = -warmup; i < iters; i++) {
                double t0 = bench_now_us();
                shmem_putmem(dst, src, size, peer);
                shmem_quiet();
                if (i >= 0) {
                    t[i] = bench_now_us() - t0;
                }
            }
            put_med = bench_median(t, iters);
            put_min = t[0];
            for (int i = -warmup; i < iters; i++) {
                double t0 = bench_now_us();
                shmem_getmem(dst, src, size, peer);
                if (i >= 0) {
                    t[i] = bench_now_us() - t0;
                }
            }
            get_med = bench_median(t, iters);
            get_min = t[0];
            int reps = iters / 10 > 2 ? iters / 10 : 2;
            bw = bench_put_bw(dst, src, size, peer, window, reps);
            for (size_t i = 0; i < size; i++) {
                src[i] = pattern(size, i);
            }
            shmem_putmem(dst, src, size, peer);
        }
        shmem_barrier_all();
        long wrong = 0;
        if (me == peer) {
            for (size_t i = 0; i < size; i++) {
                wrong += dst[i] != pattern(size, i);
            }
            if (peer != 0) {
                shmem_long_p((long *)dst, wrong, 0);
            }
        }
        shmem_barrier_all();
        if (me == 0) {
            if (peer != 0) {
                wrong = *(long *)dst;
            }
            total_wrong += wrong;
            printf("  %10zu %14.2f %10.2f %14.2f %10.2f %12.1f %7ld\n", size, put_med, put_min,
                   get_med, get_min, bw, wrong);
            fflush(stdout);
        }
    }
    if (me == 0) {
        printf("# %s\n", total_wrong ? "DATA ERRORS: results above are not valid" : "all data verified");
    }
    shmem_free(src);
    shmem_free(dst);
    free(t);
    shmem_finalize();
    return total_wrong ? 1 : 0;
}
