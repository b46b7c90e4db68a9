/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll: barrier latency, all-to-all / all-to-allv time and bus bandwidth, broadcast and sum
 * reduction time over a size sweep, on every PE of the job (run it at 2, 4, ... PEs for the
 * curve against the PE count).
 *
 *   mpirun -n 4 ./bench/coll [-b 8] [-e 1M] [-t barrier,alltoall] [--csv]
 *
 * Standard OpenSHMEM API; what a 1.4 library lacks compiles out with an n/a note. Tests:
 *   init            shmem_init itself, timed by each PE with CLOCK_MONOTONIC (size column 0):
 *                   one sample per run, so `median` is the slowest PE's (the job can do nothing
 *                   before its last PE is ready) and `best` the fastest's; #wrong counts PEs
 *                   for which the job init built does not work (each puts its number into its
 *                   right neighbour's word, each checks its left neighbour's). bench/scale.sh
 *                   takes the median over runs
 *   barrier         shmem_barrier_all (size column 0)
 *   team_sync       shmem_team_sync(SHMEM_TEAM_WORLD) (1.5)
 *   alltoall        shmem_alltoallmem(SHMEM_TEAM_WORLD), a block of `size` bytes per PE pair (1.5)
 *   alltoall64      the deprecated active-set shmem_alltoall64 with pSync: the one all-to-all
 *                   both 1.4 and 1.5 libraries have, so peers compare on the same call
 *   alltoallv       fabshmem's shmemx_alltoallvmem, PE i sends size*((i+j)%3+1)/2 bytes to PE j
 *   broadcast       shmem_broadcastmem(SHMEM_TEAM_WORLD) of size bytes from PE 0 (1.5)
 *   broadcast64     the deprecated active-set shmem_broadcast64 with pSync, from PE 0 (the
 *                   root's dest is not written; it checks nothing)
 *   reduce          shmem_long_sum_reduce(SHMEM_TEAM_WORLD) of size/8 longs (1.5)
 *   sum_to_all      the deprecated active-set shmem_long_sum_to_all with pSync and pWrk: like
 *                   alltoall64, the form both 1.4 and 1.5 libraries have
 *   broadcast64_sep, sum_to_all_sep  the same calls with a barrier after each, not timed (the
 *                   OSU benchmarks' way: a root cannot run ahead of the others)
 *   malloc_free     shmem_malloc(size) then shmem_free of it (each a collective with a
 *                   barrier); #wrong counts PEs whose left neighbour's put into a fresh block
 *                   did not land where they look (blocks at different offsets)
 * Each call is timed on every PE; a row holds the slowest PE's median (and its minimum). Each
 * all-to-all test also gives a <test>_busbw row: bytes leaving one PE for the others (on
 * average) per second, which for equal blocks is nccl-tests' busbw = algbw * (N-1)/N. After the
 * timed calls every PE checks every byte of one more call against a pattern of (sender,
 * receiver, index); #wrong sums the bad bytes of all PEs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_shmem.h"

static const struct bench_desc desc = {
    .name = "coll",
    .tests = "init,barrier,team_sync,alltoall,alltoall64,alltoallv,broadcast,broadcast64,"
             "broadcast64_sep,reduce,sum_to_all,sum_to_all_sep,malloc_free",
    .targets = "",
    .defaults = "",
};

static long psync[2][SHMEM_ALLTOALL_SYNC_SIZE];
static long bpsync[2][SHMEM_BCAST_SYNC_SIZE];
static long rpsync[2][SHMEM_REDUCE_SYNC_SIZE];
static long *pwrk; /* the active-set reduction's work array (symmetric) */

static struct bench_opts opts;
static double *samples;
static int me, npes;
static unsigned char *src, *dst;
static size_t span;

/* The slowest PE's median and minimum of samples[0..n) (collective). */
static double slowest(int n, double *best)
{
    double mn;
    double med = bench_stats(samples, n, &mn);
    *best = bench_max(mn);
    return bench_max(med);
}

static int ring; /* init's check: the left neighbour's PE number, put there by it */

static void init_test(double took)
{
    if (!bench_want(&opts, "init")) {
        return;
    }
    ring = -1;
    shmem_barrier_all();
    shmem_int_p(&ring, me, (me + 1) % npes);
    shmem_barrier_all();
    long wrong = bench_sum(ring != (me + npes - 1) % npes);
    double last = bench_max(took);
    double first = -bench_max(-took);
    bench_section("init", "world", "us", "shmem_init, slowest PE (best: the fastest PE)");
    bench_row(0, last, first, wrong);
}

static unsigned long seed_of(size_t size, int from, int to)
{
    return size * 1000003ul + (unsigned long)from * 1009ul + (unsigned long)to;
}

static void sync_test(const char *name, int team)
{
    if (!bench_want(&opts, name)) {
        return;
    }
#if !BENCH_SHMEM_15
    if (team) {
        bench_note("%s: n/a (OpenSHMEM %d.%d has no teams)", name, SHMEM_MAJOR_VERSION,
                   SHMEM_MINOR_VERSION);
        return;
    }
#endif
    bench_section(name, "world", "us",
                  team ? "shmem_team_sync(SHMEM_TEAM_WORLD), back to back, slowest PE"
                       : "shmem_barrier_all, back to back, slowest PE");
    shmem_barrier_all();
    for (int i = -opts.warmup; i < opts.iters; i++) {
        double t0 = bench_now_us();
#if BENCH_SHMEM_15
        if (team) {
            shmem_team_sync(SHMEM_TEAM_WORLD);
        } else
#endif
        {
            shmem_barrier_all();
        }
        if (i >= 0) {
            samples[i] = bench_now_us() - t0;
        }
    }
    double best, med = slowest(opts.iters, &best);
    bench_row(0, med, best, 0);
}

/* Block size in bytes that PE from sends to PE to in test kind (2: alltoallv). */
static size_t block(int kind, size_t size, int from, int to)
{
    return kind == 2 ? size * (size_t)((from + to) % 3 + 1) / 2 : size;
}

/* One call of test kind (0 alltoall, 1 alltoall64, 2 alltoallv); returns nonzero on failure. */
static int a2a_call(int kind, size_t size, long call)
{
    switch (kind) {
#if BENCH_SHMEM_15
    case 0: return shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, size);
#endif
    case 1:
        /* two pSync arrays in turn: finishing call k+1 means every PE left call k. Deprecated
         * in 1.5, and measured on purpose: it is the all-to-all every peer has. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        shmem_alltoall64(dst, src, size / 8, 0, 0, npes, psync[call & 1]);
#pragma GCC diagnostic pop
        return 0;
#if BENCH_HAVE_ALLTOALLV
    case 2: {
        static size_t counts[BENCH_MAX_PES], displs[BENCH_MAX_PES], rcounts[BENCH_MAX_PES],
            rdispls[BENCH_MAX_PES];
        size_t at = 0;
        for (int j = 0; j < npes; j++) {
            counts[j] = block(2, size, me, j);
            displs[j] = at;
            at += counts[j];
        }
        return shmemx_alltoallvmem(SHMEM_TEAM_WORLD, dst, span, src, counts, displs, rcounts,
                                   rdispls);
    }
#endif
    default: return -1;
    }
}

/* Bytes the blocks of test kind put at dst on this PE: offsets of sender from's block. */
static size_t recv_offset(int kind, size_t size, int from)
{
    size_t at = 0;
    for (int j = 0; j < from; j++) {
        at += block(kind, size, j, me);
    }
    return at;
}

static long a2a_check(int kind, size_t size, long call)
{
    size_t at = 0;
    for (int to = 0; to < npes; to++) {
        size_t b = block(kind, size, me, to);
        bench_fill(src + at, b, seed_of(size, me, to));
        at += b;
    }
    memset(dst, 0, span);
    shmem_barrier_all();
    long wrong = a2a_call(kind, size, call) != 0;
    for (int from = 0; from < npes; from++) {
        wrong += bench_count_wrong(dst + recv_offset(kind, size, from), block(kind, size, from, me),
                                   seed_of(size, from, me));
    }
    return bench_sum(wrong);
}

static void a2a_test(const char *name, int kind, const char *what)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    if ((kind == 0 && !BENCH_SHMEM_15) || (kind == 2 && !BENCH_HAVE_ALLTOALLV)) {
        bench_note("%s: n/a (not in this OpenSHMEM %d.%d)", name, SHMEM_MAJOR_VERSION,
                   SHMEM_MINOR_VERSION);
        return;
    }
    size_t nsizes = 0;
    for (size_t s = opts.min; s <= opts.max; s = bench_next_size(&opts, s)) {
        nsizes++;
    }
    double *res = calloc(nsizes * 4, sizeof(double));
    long *wrong = calloc(nsizes, sizeof(long));
    if (!res || !wrong) {
        fprintf(stderr, "coll: out of memory\n");
        shmem_global_exit(1);
    }
    long call = 0;
    size_t k = 0;
    for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size), k++) {
        if (kind == 1 && size % 8) {
            res[4 * k] = -1; /* alltoall64 moves whole 64-bit elements */
            continue;
        }
        int n = size >= (1u << 20) ? (opts.iters + 9) / 10 : opts.iters;
        shmem_barrier_all();
        for (int i = -opts.warmup; i < n; i++) {
            double t0 = bench_now_us();
            a2a_call(kind, size, call++);
            if (i >= 0) {
                samples[i] = bench_now_us() - t0;
            }
        }
        double best, med = slowest(n, &best);
        double off = 0; /* bytes leaving a PE for the others, averaged over the PEs */
        for (int from = 0; from < npes; from++) {
            for (int to = 0; to < npes; to++) {
                off += from == to ? 0 : (double)block(kind, size, from, to);
            }
        }
        off /= npes;
        res[4 * k] = med;
        res[4 * k + 1] = best;
        res[4 * k + 2] = off / med;
        res[4 * k + 3] = off / best;
        wrong[k] = a2a_check(kind, size, call++);
    }
    char busbw[48];
    snprintf(busbw, sizeof(busbw), "%s_busbw", name);
    for (int pass = 0; pass < 2; pass++) {
        bench_section(pass ? busbw : name, "heap", pass ? "MB/s" : "us", what);
        k = 0;
        for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size), k++) {
            if (res[4 * k] >= 0) {
                bench_row(size, res[4 * k + 2 * pass], res[4 * k + 2 * pass + 1], wrong[k]);
            }
        }
    }
    free(res);
    free(wrong);
}

/* One broadcast of size bytes from PE 0: the team form (aset 0), or the deprecated active-set
 * shmem_broadcast64 with pSync (aset 1), which both 1.4 and 1.5 libraries have, so peers compare
 * on the same call. The active-set form leaves the root's dest alone (spec). */
static void bcast_call(int aset, size_t size, long call)
{
#if BENCH_SHMEM_15
    if (!aset) {
        shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, size, 0);
        return;
    }
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    shmem_broadcast64(dst, src, size / 8, 0, 0, 0, npes, bpsync[call & 1]);
#pragma GCC diagnostic pop
}

/* Back-to-back broadcasts from PE 0; then every PE checks the bytes of one more. */
static void bcast_test(const char *name, int aset, int sep)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    if (!aset && !BENCH_SHMEM_15) {
        bench_note("%s: n/a (OpenSHMEM %d.%d has no shmem_broadcastmem)", name,
                   SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
        return;
    }
    bench_section(name, "heap", "us",
                  !aset ? "shmem_broadcastmem from PE 0, size bytes, slowest PE"
                  : sep ? "shmem_broadcast64 (active set, pSync) from PE 0, size bytes, then an "
                          "untimed barrier, slowest PE"
                        : "shmem_broadcast64 (active set, pSync) from PE 0, size bytes, slowest PE");
    long call = 0;
    for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size)) {
        if (aset && size % 8) {
            continue; /* whole 64-bit elements */
        }
        int n = size >= (1u << 20) ? (opts.iters + 9) / 10 : opts.iters;
        shmem_barrier_all();
        for (int i = -opts.warmup; i < n; i++) {
            double t0 = bench_now_us();
            bcast_call(aset, size, call++);
            double t1 = bench_now_us();
            if (sep) {
                shmem_barrier_all();
            }
            if (i >= 0) {
                samples[i] = t1 - t0;
            }
        }
        double best, med = slowest(n, &best);
        for (size_t j = 0; j < size; j++) {
            src[j] = (unsigned char)(seed_of(size, 0, 0) + j);
        }
        memset(dst, 0, size);
        shmem_barrier_all();
        bcast_call(aset, size, call++);
        long wrong = 0;
        for (size_t j = 0; j < size && !(aset && me == 0); j++) {
            wrong += dst[j] != (unsigned char)(seed_of(size, 0, 0) + j);
        }
        memset(src, 0x5a, size);
        bench_row(size, med, best, bench_sum(wrong));
    }
}

/* One sum reduction of nelems longs: the team form (aset 0), or the deprecated active-set
 * shmem_long_sum_to_all with pSync and pWrk (aset 1). */
static void reduce_call(int aset, size_t nelems, long call)
{
#if BENCH_SHMEM_15
    if (!aset) {
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, (long *)dst, (long *)src, nelems);
        return;
    }
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    shmem_long_sum_to_all((long *)dst, (long *)src, (int)nelems, 0, 0, npes, pwrk,
                          rpsync[call & 1]);
#pragma GCC diagnostic pop
}

/* Back-to-back sum reductions of size/8 longs into dst; then every PE checks one more. */
static void reduce_test(const char *name, int aset, int sep)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    if (!aset && !BENCH_SHMEM_15) {
        bench_note("%s: n/a (OpenSHMEM %d.%d has no team reductions)", name, SHMEM_MAJOR_VERSION,
                   SHMEM_MINOR_VERSION);
        return;
    }
    bench_section(name, "heap", "us",
                  sep    ? "shmem_long_sum_to_all (active set, pSync, pWrk), size bytes of longs, "
                           "then an untimed barrier, slowest PE"
                  : aset ? "shmem_long_sum_to_all (active set, pSync, pWrk), size bytes of longs, "
                           "slowest PE"
                       : "shmem_long_sum_reduce(SHMEM_TEAM_WORLD), size bytes of longs, slowest PE");
    long *s = (long *)src, *d = (long *)dst;
    long call = 0;
    for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size)) {
        size_t nelems = size / sizeof(long);
        if (nelems == 0 || size % sizeof(long)) {
            continue; /* whole longs only */
        }
        int n = size >= (1u << 20) ? (opts.iters + 9) / 10 : opts.iters;
        shmem_barrier_all();
        for (int i = -opts.warmup; i < n; i++) {
            double t0 = bench_now_us();
            reduce_call(aset, nelems, call++);
            double t1 = bench_now_us();
            if (sep) {
                shmem_barrier_all();
            }
            if (i >= 0) {
                samples[i] = t1 - t0;
            }
        }
        double best, med = slowest(n, &best);
        /* PE p contributes p + j to element j: the sum is npes*j + npes*(npes-1)/2. */
        for (size_t j = 0; j < nelems; j++) {
            s[j] = me + (long)j;
        }
        memset(d, 0, size);
        shmem_barrier_all();
        reduce_call(aset, nelems, call++);
        long wrong = 0;
        for (size_t j = 0; j < nelems; j++) {
            wrong += d[j] != (long)npes * (long)j + (long)npes * (npes - 1) / 2;
        }
        memset(src, 0x5a, size);
        bench_row(size, med, best, bench_sum(wrong));
    }
}

/* Back-to-back shmem_malloc(size) + shmem_free pairs; then every PE checks that a put from its
 * left neighbour into one more block landed in its own block. */
static void malloc_test(void)
{
    if (!bench_want(&opts, "malloc_free")) {
        return;
    }
    bench_section("malloc_free", "heap", "us", "shmem_malloc(size) + shmem_free, slowest PE");
    for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size)) {
        shmem_barrier_all();
        for (int i = -opts.warmup; i < opts.iters; i++) {
            double t0 = bench_now_us();
            void *p = shmem_malloc(size);
            shmem_free(p);
            if (i >= 0) {
                samples[i] = bench_now_us() - t0;
            }
        }
        double best, med = slowest(opts.iters, &best);
        int *p = shmem_malloc(size > sizeof(int) ? size : sizeof(int));
        long wrong = 0;
        if (p) {
            *p = -1;
            shmem_barrier_all();
            shmem_int_p(p, me, (me + 1) % npes);
            shmem_barrier_all();
            wrong = *p != (me + npes - 1) % npes;
        } else {
            wrong = 1;
        }
        shmem_free(p);
        bench_row(size, med, best, bench_sum(wrong));
    }
}

int main(int argc, char **argv)
{
    bench_parse(&opts, &desc, argc, argv);
    double t0 = bench_now_us();
    shmem_init();
    double took = bench_now_us() - t0;
    me = shmem_my_pe();
    npes = shmem_n_pes();
    bench_shmem_start(&opts, &desc);
    init_test(took);
    for (int i = 0; i < SHMEM_ALLTOALL_SYNC_SIZE; i++) {
        psync[0][i] = psync[1][i] = SHMEM_SYNC_VALUE;
    }
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++) {
        bpsync[0][i] = bpsync[1][i] = SHMEM_SYNC_VALUE;
    }
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) {
        rpsync[0][i] = rpsync[1][i] = SHMEM_SYNC_VALUE;
    }
    span = (opts.max * 3 / 2 + 1) * (size_t)npes;
    src = shmem_malloc(span);
    dst = shmem_malloc(span);
    /* pWrk: max(nreduce/2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE) longs (spec) */
    size_t nwrk = opts.max / sizeof(long) / 2 + 1;
    pwrk = shmem_malloc(sizeof(long) * (nwrk > SHMEM_REDUCE_MIN_WRKDATA_SIZE
                                            ? nwrk : SHMEM_REDUCE_MIN_WRKDATA_SIZE));
    samples = malloc(sizeof(double) * (size_t)(opts.iters > 3 ? opts.iters : 3));
    if (!src || !dst || !pwrk || !samples) {
        if (me == 0) {
            fprintf(stderr, "coll: cannot allocate 2 x %zu bytes (raise SHMEM_SYMMETRIC_SIZE)\n",
                    span);
        }
        shmem_global_exit(1);
    }
    memset(src, 0x5a, span);
    shmem_barrier_all();
    sync_test("barrier", 0);
    sync_test("team_sync", 1);
    a2a_test("alltoall", 0, "shmem_alltoallmem, size bytes per PE pair, slowest PE");
    a2a_test("alltoall64", 1, "shmem_alltoall64 (active set, pSync), size bytes per PE pair");
    a2a_test("alltoallv", 2, "shmemx_alltoallvmem, size*((i+j)%3+1)/2 bytes from PE i to j");
    bcast_test("broadcast", 0, 0);
    bcast_test("broadcast64", 1, 0);
    bcast_test("broadcast64_sep", 1, 1);
    reduce_test("reduce", 0, 0);
    reduce_test("sum_to_all", 1, 0);
    reduce_test("sum_to_all_sep", 1, 1);
    malloc_test();
    int rc = bench_finish();
    shmem_barrier_all();
    shmem_free(pwrk);
    shmem_free(dst);
    shmem_free(src);
    free(samples);
    shmem_finalize();
    return rc;
}
