/*
 * bench.h: what the benchmarks share: the clock, size arguments, the median, and the windowed
 * put bandwidth that serves as a ceiling. Standard OpenSHMEM API only, so every benchmark
 * still builds with other implementations' oshcc.
 */
#ifndef FSH_BENCH_H
#define FSH_BENCH_H

#include <shmem.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* "64", "4k", "2M", "1G". */
static inline size_t bench_parse_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
    }
    return v;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Put bandwidth in MB/s (10^6 bytes/s) from the calling PE to peer: reps rounds (after one
 * untimed round) of `window` shmem_putmem_nbi of size bytes, each round ended by shmem_quiet. */
static inline double bench_put_bw(void *dst, const void *src, size_t size, int peer, int window,
                                  int reps)
{
    double t0 = 0;
    for (int r = -1; r < reps; r++) {
        if (r == 0) {
            t0 = bench_now_us();
        }
        for (int w = 0; w < window; w++) {
            shmem_putmem_nbi(dst, src, size, peer);
        }
        shmem_quiet();
    }
    return (double)size * window * reps / (bench_now_us() - t0);
}

#endif
