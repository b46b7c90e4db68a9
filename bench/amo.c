/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo: atomic latency and rate on a 64-bit counter of PE 1, from PE 0, on a heap target
 * (shmem_malloc) and a static one (a symmetric global).
 *
 *   mpirun -n 2 ./bench/amo [-n 1000] [-W 64] [-T heap,static] [--csv]
 *
 * The long forms only (shmem_long_atomic_*): Open MPI's OSHMEM corrupts the caller's stack in
 * shmem_int_cswap, and the 64-bit counter is what applications use. Tests (size column: 8):
 *   fadd_lat    shmem_long_atomic_fetch_add, blocking: a round trip to the counter
 *   cswap_lat   shmem_long_atomic_compare_swap, blocking, always succeeding (cond = old value)
 *   add_rate    rounds of WINDOW shmem_long_atomic_add + shmem_quiet: Mops/s
 *   fadd_rate   rounds of WINDOW shmem_long_atomic_fetch_add_nbi + shmem_quiet (1.5 only)
 *   cswap_rate  rounds of WINDOW shmem_long_atomic_compare_swap_nbi on WINDOW counters (1.5 only)
 *   gups_rate   GUPS's update: rounds of WINDOW shmem_uint64_atomic_xor (non-fetching) of random
 *               values at random 8-byte words of a TABLE_WORDS-word table on PE 1 + shmem_quiet:
 *               millions of updates per second (MUP/s); checked against a copy PE 0 keeps
 * The checks come after the timed loops from what the loops returned: every fetched value must
 * be the one the sequence implies, and the counters end at the number of operations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_shmem.h"

#define MAX_WINDOW 4096
#define TABLE_WORDS (1 << 16) /* gups_rate's table: 512 KiB */

static long static_ctr[TABLE_WORDS]; /* MAX_WINDOW counters, or gups_rate's table */

static const struct bench_desc desc = {
    .name = "amo",
    .tests = "fadd_lat,cswap_lat,add_rate,fadd_rate,cswap_rate,gups_rate",
    .targets = "heap,static",
    .defaults = "heap",
};

static struct bench_opts opts;
static double *samples;
static long *fetched;
static int me, peer;

/* Sets every counter of PE peer to 0 (collective). */
static void reset(long *ctr)
{
    shmem_barrier_all();
    if (me == peer) {
        memset(ctr, 0, sizeof(long) * MAX_WINDOW);
    }
    shmem_barrier_all();
}

/* The counter of PE peer, as PE 0 reads it. */
static long remote_value(long *ctr)
{
    return shmem_long_atomic_fetch(ctr, peer);
}

static void lat_test(const char *name, int cswap, long *ctr, const char *tname)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    bench_section(name, tname, "us",
                  cswap ? "shmem_long_atomic_compare_swap, PE 0 -> PE 1"
                        : "shmem_long_atomic_fetch_add, PE 0 -> PE 1");
    reset(ctr);
    int total = opts.warmup + opts.iters;
    double med = 0, best = 0;
    long wrong = 0;
    if (me == 0) {
        for (int i = 0; i < total; i++) {
            double t0 = bench_now_us();
            fetched[i] = cswap ? shmem_long_atomic_compare_swap(ctr, i, i + 1, peer)
                               : shmem_long_atomic_fetch_add(ctr, 1, peer);
            if (i >= opts.warmup) {
                samples[i - opts.warmup] = bench_now_us() - t0;
            }
        }
        med = bench_stats(samples, opts.iters, &best);
        for (int i = 0; i < total; i++) {
            wrong += fetched[i] != i;
        }
        wrong += remote_value(ctr) != total;
    }
    bench_row(sizeof(long), med, best, bench_sum(wrong));
}

/* op 0: add, 1: fetch_add_nbi, 2: compare_swap_nbi on window counters. */
static void rate_test(const char *name, int op, long *ctr, const char *tname, const char *what)
{
    if (!bench_want(&opts, name)) {
        return;
    }
#if !BENCH_SHMEM_15
    if (op != 0) {
        (void)ctr;
        (void)tname;
        (void)what;
        bench_note("%s: n/a (OpenSHMEM %d.%d has no non-blocking fetching atomics)", name,
                   SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
        return;
    }
#endif
    bench_section(name, tname, "Mops/s", what);
    reset(ctr);
    int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    int warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
    int W = opts.window;
    double med = 0, best = 0;
    long wrong = 0;
    if (me == 0) {
        for (int r = -warm; r < rounds; r++) {
            long rnd = r + warm;
            double t0 = bench_now_us();
            for (int w = 0; w < W; w++) {
                switch (op) {
                case 0: shmem_long_atomic_add(ctr, 1, peer); break;
#if BENCH_SHMEM_15
                case 1: shmem_long_atomic_fetch_add_nbi(&fetched[w], ctr, 1, peer); break;
                default:
                    shmem_long_atomic_compare_swap_nbi(&fetched[w], &ctr[w], rnd, rnd + 1,
                                                       peer);
                    break;
#endif
                }
            }
            shmem_quiet();
            if (r >= 0) {
                samples[r] = bench_now_us() - t0;
            }
            /* fetch_add: this round's values are round*W .. round*W + W-1, in any order */
            if (op == 1) {
                long sum = 0;
                for (int w = 0; w < W; w++) {
                    wrong += fetched[w] < rnd * W || fetched[w] >= (rnd + 1) * W;
                    sum += fetched[w];
                }
                wrong += sum != rnd * W * W + (long)W * (W - 1) / 2;
            } else if (op == 2) {
                for (int w = 0; w < W; w++) {
                    wrong += fetched[w] != rnd;
                }
            }
        }
        med = bench_stats(samples, rounds, &best);
        long expect = op == 2 ? rounds + warm : (long)(rounds + warm) * W;
        wrong += remote_value(ctr) != expect;
    }
    bench_row(sizeof(long), me == 0 ? W / med : 0, me == 0 ? W / best : 0, bench_sum(wrong));
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* GUPS's update (non-fetching xor at random places), WINDOW per round + quiet. The table is
 * the target's (heap or static); PE 0 xors the same values into a private copy, and the
 * table, read back at the end, must equal it. */
static void gups_test(uint64_t *table, const char *tname)
{
    if (!bench_want(&opts, "gups_rate")) {
        return;
    }
    bench_section("gups_rate", tname, "MUP/s",
                  "WINDOW shmem_uint64_atomic_xor at random words of a 512 KiB table + "
                  "shmem_quiet per round");
    shmem_barrier_all();
    if (me == peer) {
        memset(table, 0, sizeof(uint64_t) * TABLE_WORDS);
    }
    shmem_barrier_all();
    int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    int warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
    int W = opts.window;
    double med = 0, best = 0;
    long wrong = 0;
    if (me == 0) {
        uint64_t *copy = calloc(TABLE_WORDS, sizeof(uint64_t));
        uint64_t *back = malloc(sizeof(uint64_t) * TABLE_WORDS);
        uint64_t rng = 0x9e3779b97f4a7c15ULL;
        for (int r = -warm; r < rounds && copy && back; r++) {
            double t0 = bench_now_us();
            for (int w = 0; w < W; w++) {
                uint64_t v = xorshift(&rng);
                size_t i = (size_t)(v >> 48) & (TABLE_WORDS - 1);
                shmem_uint64_atomic_xor(&table[i], v, peer);
            }
            shmem_quiet();
            if (r >= 0) {
                samples[r] = bench_now_us() - t0;
            }
        }
        med = bench_stats(samples, rounds, &best);
        if (copy && back) {
            rng = 0x9e3779b97f4a7c15ULL;
            for (long u = 0; u < (long)(rounds + warm) * W; u++) {
                uint64_t v = xorshift(&rng);
                copy[(size_t)(v >> 48) & (TABLE_WORDS - 1)] ^= v;
            }
            shmem_getmem(back, table, sizeof(uint64_t) * TABLE_WORDS, peer);
            for (size_t i = 0; i < TABLE_WORDS; i++) {
                wrong += back[i] != copy[i];
            }
        } else {
            wrong = 1;
        }
        free(copy);
        free(back);
    }
    bench_row(sizeof(uint64_t), me == 0 ? W / med : 0, me == 0 ? W / best : 0, bench_sum(wrong));
}

static void run_target(long *ctr, const char *tname)
{
    lat_test("fadd_lat", 0, ctr, tname);
    lat_test("cswap_lat", 1, ctr, tname);
    rate_test("add_rate", 0, ctr, tname, "WINDOW shmem_long_atomic_add + shmem_quiet per round");
    rate_test("fadd_rate", 1, ctr, tname,
              "WINDOW shmem_long_atomic_fetch_add_nbi + shmem_quiet per round");
    rate_test("cswap_rate", 2, ctr, tname,
              "WINDOW shmem_long_atomic_compare_swap_nbi (on WINDOW counters) + shmem_quiet");
    gups_test((uint64_t *)ctr, tname);
}

int main(int argc, char **argv)
{
    bench_parse(&opts, &desc, argc, argv);
    if (opts.window > MAX_WINDOW) {
        fprintf(stderr, "amo: -W at most %d\n", MAX_WINDOW);
        return 2;
    }
    shmem_init();
    me = shmem_my_pe();
    peer = shmem_n_pes() > 1 ? 1 : 0;
    bench_shmem_start(&opts, &desc);
    size_t n = (size_t)(opts.iters + opts.warmup) + MAX_WINDOW;
    samples = malloc(sizeof(double) * n);
    fetched = malloc(sizeof(long) * n);
    long *heap_ctr = shmem_malloc(sizeof(long) * TABLE_WORDS);
    if (!samples || !fetched || !heap_ctr) {
        fprintf(stderr, "amo: out of memory\n");
        shmem_global_exit(1);
    }
    if (bench_want_target(&opts, "heap")) {
        run_target(heap_ctr, "heap");
    }
    if (bench_want_target(&opts, "static")) {
        run_target(static_ctr, "static");
    }
    int rc = bench_finish();
    shmem_barrier_all();
    shmem_free(heap_ctr);
    free(samples);
    free(fetched);
    shmem_finalize();
    return rc;
}
