/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma: one-sided latency, bandwidth and message rate between PE 0 and PE 1 over a size sweep,
 * on a heap target (shmem_malloc) and a static one (a symmetric global array); the private
 * target is the heap one with PE 0's side in malloc'd memory (a non-symmetric source of puts,
 * destination of gets: what a provider needing local registration must register). With
 * fabshmem's device heap, device puts into PE 1's GPU heap from PE 0's host heap and devdev
 * from PE 0's GPU heap (GPU to GPU; fi_ceiling's cuda_d2d_bw is its copy ceiling).
 *
 *   mpirun -n 2 ./bench/rma [-b 8] [-e 1M] [-T heap,static,private] [-t put_lat,put_bw] [--csv]
 *
 * Standard OpenSHMEM API only; put_signal_lat needs 1.5 and compiles out on 1.4 (a note says
 * n/a). Tests, PE 0 active unless said (times: median and minimum of the timed iterations):
 *   put_lat         shmem_putmem + shmem_quiet: until the data is delivered at PE 1
 *   put_nbi_lat     shmem_putmem_nbi + shmem_quiet
 *   put_ret         shmem_putmem alone: until it returns, the source reusable (a quiet follows,
 *                   untimed)
 *   get_lat         shmem_getmem: a round trip
 *   get_nbi_lat     shmem_getmem_nbi + shmem_quiet
 *   put_bw          rounds of WINDOW shmem_putmem_nbi + one shmem_quiet; MB/s (10^6 B/s) from
 *                   the median (and fastest) round
 *   put_rate        the same rounds counted in messages: Mmsg/s
 *   put_rate_rand   put_rate's rounds with each put to a random size-aligned place of a 1 MiB
 *                   array of PE 1 (GUPS-like: non-fetching updates at random addresses, one PE
 *                   to another); the places come from a table made before the timing; heap
 *                   target of its own, sizes up to 4 KiB
 *   bibw            PE 0 and PE 1 run put_bw rounds at each other at once; the sum, MB/s
 *   put_signal_lat  ping-pong of shmem_putmem_signal (SET) + shmem_signal_wait_until: half a
 *                   round trip, the time until PE 1 may use the data
 *   put_session_rate (OpenSHMEM 1.6) rounds of WINDOW shmem_ctx_putmem_nbi + shmem_ctx_quiet on
 *                   a context of its own, put w to element w of an array (consecutive), every
 *                   other round inside a SHMEM_CTX_SESSION_BATCH session (total_ops WINDOW):
 *                   Mmsg/s with the session, and as put_nosession_rate the rounds without it,
 *                   measured alternately in the same run; sizes up to 4 KiB
 *   put_session_scatter_rate  the same with put w to element 2w (no two puts adjacent), and
 *                   put_nosession_scatter_rate
 *   ctx_threads_rate  (only when named with -t: the program then runs SHMEM_THREAD_MULTIPLE)
 *                   BENCH_THREADS threads of PE 0 (default 2), each with a SHMEM_CTX_PRIVATE
 *                   context of its own, run put_rate's rounds on it (ctx_putmem_nbi, ctx_quiet)
 *                   at once, each into its own part of PE 1's area: all their messages over
 *                   the time from the common start until the last ends, Mmsg/s
 * After each test's timed loop the data is checked: PE 0 sends a size- and test-specific pattern
 * the same way (for gets, PE 1's target holds it and PE 0 reads it back) and every byte is
 * compared; #wrong counts those not as sent.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_shmem.h"

#define STATIC_MAX (4u << 20)

/* The static target: remote is where peers write and read, local the source/destination of
 * PE 0's side (static too, so both targets are whole symmetric-variable cases). */
static unsigned char static_remote[STATIC_MAX];
static unsigned char static_local[STATIC_MAX];
#if BENCH_HAVE_SIGNAL
static uint64_t sig;
#endif
/* sessions (1.6): shmem_ctx_session_start and its constants */
#ifdef SHMEM_CTX_SESSION_BATCH
#define BENCH_HAVE_SESSION 1
#else
#define BENCH_HAVE_SESSION 0
#endif
#define SESSION_MAX 4096 /* largest size of the session tests: sessions batch small puts */
#define RAND_AREA ((size_t)1 << 20) /* put_rate_rand: PE 1's array, as GUPS's table */
#define RAND_MAX_SIZE 4096          /* put_rate_rand: largest size (small updates) */
#define RAND_NOFF 65536             /* put_rate_rand: random places drawn before the timing */

/* remote: where peers write and read; local: PE 0's source/destination. On the device
 * target (fabshmem's shmemx_malloc_device) remote is GPU memory, local host heap, and the
 * checks reach remote through a driver copy (shmem_getmem/putmem to oneself) into scratch. On
 * the devdev target local is GPU memory too (local_dev), reached the same way. */
struct target {
    const char *name;
    unsigned char *remote, *local;
    size_t cap;
    unsigned char *scratch; /* device targets only */
    int local_dev;          /* devdev: local is in this PE's device heap */
};

static const struct bench_desc desc = {
    .name = "rma",
    .tests = "put_lat,put_nbi_lat,put_ret,get_lat,get_nbi_lat,put_bw,put_rate,bibw,put_signal_lat,"
             "put_rate_rand,put_session_rate,put_session_scatter_rate,ctx_threads_rate",
#if BENCH_HAVE_DEVICE
    .targets = "heap,static,private,device,devdev",
#else
    .targets = "heap,static,private",
#endif
    .defaults = "heap",
};

static struct bench_opts opts;
static double *samples;
static int me, peer;

/* The bytes of this PE's remote area not as sent (see struct target). */
static long count_remote(const struct target *t, size_t size, unsigned long seed)
{
    if (!t->scratch) {
        return bench_count_wrong(t->remote, size, seed);
    }
    memset(t->scratch, 0, size);
    shmem_getmem(t->scratch, t->remote, size, me);
    return bench_count_wrong(t->scratch, size, seed);
}

/* Writes the pattern into this PE's remote area. */
static void fill_remote(const struct target *t, size_t size, unsigned long seed)
{
    if (!t->scratch) {
        bench_fill(t->remote, size, seed);
        return;
    }
    bench_fill(t->scratch, size, seed);
    shmem_putmem(t->remote, t->scratch, size, me);
}

/* The same for this PE's local area (PE 0's source of puts, destination of gets). */
static long count_local(const struct target *t, size_t size, unsigned long seed)
{
    if (!t->local_dev) {
        return bench_count_wrong(t->local, size, seed);
    }
    memset(t->scratch, 0, size);
    shmem_getmem(t->scratch, t->local, size, me);
    return bench_count_wrong(t->scratch, size, seed);
}

static void fill_local(const struct target *t, size_t size, unsigned long seed)
{
    if (!t->local_dev) {
        bench_fill(t->local, size, seed);
        return;
    }
    bench_fill(t->scratch, size, seed);
    shmem_putmem(t->local, t->scratch, size, me);
}

static void clear_local(const struct target *t, size_t size)
{
    if (!t->local_dev) {
        memset(t->local, 0, size);
        return;
    }
    memset(t->scratch, 0, size);
    shmem_putmem(t->local, t->scratch, size, me);
}

/* Times WINDOW nbi puts + quiet per round on the calling PE; returns the median round in us
 * (*best: the fastest). */
static double put_rounds(const struct target *t, size_t size, double *best)
{
    int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    int warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
    for (int r = -warm; r < rounds; r++) {
        double t0 = bench_now_us();
        for (int w = 0; w < opts.window; w++) {
            shmem_putmem_nbi(t->remote, t->local, size, peer);
        }
        shmem_quiet();
        if (r >= 0) {
            samples[r] = bench_now_us() - t0;
        }
    }
    return bench_stats(samples, rounds, best);
}

/* PE 0 times iters of op; median (and min) on PE 0. */
static double time_ops(int op, const struct target *t, size_t size, double *best)
{
    for (int i = -opts.warmup; i < opts.iters; i++) {
        double t0 = bench_now_us();
        switch (op) {
        case 0: shmem_putmem(t->remote, t->local, size, peer); shmem_quiet(); break;
        case 1: shmem_putmem_nbi(t->remote, t->local, size, peer); shmem_quiet(); break;
        case 2: shmem_getmem(t->local, t->remote, size, peer); break;
        case 3: shmem_getmem_nbi(t->local, t->remote, size, peer); shmem_quiet(); break;
        default: shmem_putmem(t->remote, t->local, size, peer); break;
        }
        if (i >= 0) {
            samples[i] = bench_now_us() - t0;
        }
        if (op == 4) {
            shmem_quiet(); /* untimed: put_ret is the time until the source is reusable */
        }
    }
    return bench_stats(samples, opts.iters, best);
}

/* The data check of a put test: PE 0 puts the pattern (blocking or nbi), PE 1 counts. */
static long check_put(const struct target *t, size_t size, unsigned long seed, int nbi)
{
    shmem_barrier_all();
    if (me == 0) {
        fill_local(t, size, seed);
        if (nbi) {
            shmem_putmem_nbi(t->remote, t->local, size, peer);
            shmem_quiet();
        } else {
            shmem_putmem(t->remote, t->local, size, peer);
        }
    }
    shmem_barrier_all();
    long wrong = me == peer ? count_remote(t, size, seed) : 0;
    return bench_sum(wrong);
}

/* The data check of a get test: PE 1's target holds the pattern, PE 0 reads it. */
static long check_get(const struct target *t, size_t size, unsigned long seed, int nbi)
{
    shmem_barrier_all();
    if (me == peer) {
        fill_remote(t, size, seed);
    }
    shmem_barrier_all();
    long wrong = 0;
    if (me == 0) {
        clear_local(t, size);
        if (nbi) {
            shmem_getmem_nbi(t->local, t->remote, size, peer);
            shmem_quiet();
        } else {
            shmem_getmem(t->local, t->remote, size, peer);
        }
        wrong = count_local(t, size, seed);
    }
    return bench_sum(wrong);
}

static void latency_test(const char *name, int op, const struct target *t, const char *what)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    bench_section(name, t->name, "us", what);
    for (size_t size = opts.min; size <= opts.max && size <= t->cap;
         size = bench_next_size(&opts, size)) {
        double med = 0, best = 0;
        shmem_barrier_all();
        if (me == 0) {
            med = time_ops(op, t, size, &best);
        }
        unsigned long seed = size * 8 + (unsigned long)op;
        long wrong = op < 2 || op == 4 ? check_put(t, size, seed, op == 1)
                                       : check_get(t, size, seed, op == 3);
        bench_row(size, med, best, wrong);
    }
}

/* put_bw (rate = 0) and put_rate (rate = 1). */
static void window_test(const char *name, int rate, const struct target *t, const char *what)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    bench_section(name, t->name, rate ? "Mmsg/s" : "MB/s", what);
    for (size_t size = opts.min; size <= opts.max && size <= t->cap;
         size = bench_next_size(&opts, size)) {
        double med = 0, best = 0, per = rate ? (double)opts.window : (double)size * opts.window;
        shmem_barrier_all();
        if (me == 0) {
            med = put_rounds(t, size, &best);
        }
        long wrong = check_put(t, size, size * 8 + 4 + (unsigned long)rate, 1);
        bench_row(size, me == 0 ? per / med : 0, me == 0 ? per / best : 0, wrong);
    }
}

static void bibw_test(const struct target *t)
{
    if (!bench_want(&opts, "bibw")) {
        return;
    }
    bench_section("bibw", t->name, "MB/s",
                  "PE 0 <-> PE 1 at once, WINDOW shmem_putmem_nbi + shmem_quiet per round, sum");
    int other = me == 0 ? peer : 0;
    for (size_t size = opts.min; size <= opts.max && size <= t->cap;
         size = bench_next_size(&opts, size)) {
        double med = 0, best = 0;
        shmem_barrier_all();
        if (me == 0 || me == peer) {
            /* both directions share the rounds; each PE sends to the other */
            struct target mine = *t;
            int save = peer;
            peer = other;
            med = put_rounds(&mine, size, &best);
            peer = save;
        }
        /* the slower direction bounds the pair: twice its bandwidth */
        double slow = bench_max(med), slow_best = bench_max(best);
        unsigned long seed = size * 8 + 6;
        shmem_barrier_all();
        if (me == 0 || me == peer) {
            fill_local(t, size, seed + (unsigned long)me);
            shmem_putmem_nbi(t->remote, t->local, size, other);
            shmem_quiet();
        }
        shmem_barrier_all();
        long wrong = 0;
        if (me == 0 || me == peer) {
            wrong = count_remote(t, size, seed + (unsigned long)other);
        }
        wrong = bench_sum(wrong);
        double bytes = 2.0 * (double)size * opts.window;
        bench_row(size, me == 0 ? bytes / slow : 0, me == 0 ? bytes / slow_best : 0, wrong);
    }
}

static void signal_test(const struct target *t)
{
    if (!bench_want(&opts, "put_signal_lat")) {
        return;
    }
#if BENCH_HAVE_SIGNAL
    bench_section("put_signal_lat", t->name, "us",
                  "ping-pong of shmem_putmem_signal + shmem_signal_wait_until, half round trip");
    uint64_t seq = 0;
    for (size_t size = opts.min; size <= opts.max && size <= t->cap;
         size = bench_next_size(&opts, size)) {
        double med = 0, best = 0;
        sig = 0;
        seq = 0;
        shmem_barrier_all();
        for (int i = -opts.warmup; i < opts.iters; i++) {
            seq++;
            if (me == 0) {
                double t0 = bench_now_us();
                shmem_putmem_signal(t->remote, t->local, size, &sig, seq, SHMEM_SIGNAL_SET, peer);
                if (peer != 0) {
                    shmem_signal_wait_until(&sig, SHMEM_CMP_GE, seq);
                }
                if (i >= 0) {
                    samples[i] = (bench_now_us() - t0) / (peer != 0 ? 2 : 1);
                }
            } else if (me == peer) {
                shmem_signal_wait_until(&sig, SHMEM_CMP_GE, seq);
                shmem_putmem_signal(t->remote, t->local, size, &sig, seq, SHMEM_SIGNAL_SET, 0);
            }
        }
        if (me == 0) {
            med = bench_stats(samples, opts.iters, &best);
        }
        /* the check: the signal says the data is there, so PE 1 checks right after the wait */
        unsigned long seed = size * 8 + 7;
        shmem_barrier_all();
        seq++;
        long wrong = 0;
        if (me == 0) {
            fill_local(t, size, seed);
            shmem_putmem_signal(t->remote, t->local, size, &sig, seq, SHMEM_SIGNAL_SET, peer);
        }
        if (me == peer) {
            shmem_signal_wait_until(&sig, SHMEM_CMP_GE, seq);
            wrong = count_remote(t, size, seed);
        }
        wrong = bench_sum(wrong);
        bench_row(size, med, best, wrong);
    }
#else
    (void)t;
    bench_note("put_signal_lat: n/a (this OpenSHMEM %d.%d has no put-with-signal)",
               SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
#endif
}

/* Slots of size bytes in RAND_AREA: the largest power of two that fits, so that w * odd mod it
 * visits distinct slots (the check's places). */
static size_t rand_slots(size_t size)
{
    size_t n = 1;
    while (n * 2 * size <= RAND_AREA) {
        n *= 2;
    }
    return n;
}

/* put_rate_rand: rounds of WINDOW shmem_putmem_nbi to random places of PE 1's 1 MiB array +
 * shmem_quiet, Mmsg/s. The check: WINDOW puts, each its own part of a pattern, to distinct
 * places (w times an odd number modulo the slots), then PE 1 gathers them. */
static void rand_test(void)
{
    if (!bench_want(&opts, "put_rate_rand")) {
        return;
    }
    size_t top = opts.max < RAND_MAX_SIZE ? opts.max : RAND_MAX_SIZE;
    size_t span = (size_t)opts.window * top;
    unsigned char *dst = shmem_calloc(1, RAND_AREA), *src = shmem_malloc(span);
    unsigned char *gather = malloc(span);
    size_t *place = malloc(sizeof(*place) * RAND_NOFF);
    if (!dst || !src || !gather || !place) {
        if (me == 0) {
            fprintf(stderr, "rma: put_rate_rand: no room for %zu bytes of heap\n",
                    RAND_AREA + span);
        }
        shmem_global_exit(1);
    }
    bench_section("put_rate_rand", "heap", "Mmsg/s",
                  "WINDOW shmem_putmem_nbi to random places of a 1 MiB array + shmem_quiet per "
                  "round, PE 0 -> PE 1");
    for (size_t size = opts.min; size <= top; size = bench_next_size(&opts, size)) {
        size_t slots = rand_slots(size);
        uint64_t x = 0x9e3779b97f4a7c15ull ^ size; /* xorshift64: the same places every run */
        for (size_t i = 0; i < RAND_NOFF; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            place[i] = (size_t)(x % slots) * size;
        }
        memset(src, 0x5a, span);
        double med = 0, best = 0;
        shmem_barrier_all();
        if (me == 0) {
            int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
            int warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
            size_t k = 0;
            for (int r = -warm; r < rounds; r++) {
                double t0 = bench_now_us();
                for (int w = 0; w < opts.window; w++) {
                    shmem_putmem_nbi(dst + place[k], src + (size_t)w * size, size, peer);
                    k = (k + 1) & (RAND_NOFF - 1);
                }
                shmem_quiet();
                if (r >= 0) {
                    samples[r] = bench_now_us() - t0;
                }
            }
            med = bench_stats(samples, rounds, &best);
        }
        /* the check: distinct places, a pattern over them */
        unsigned long seed = size * 8 + 11;
        size_t n = (size_t)opts.window < slots ? (size_t)opts.window : slots;
        shmem_barrier_all();
        if (me == 0) {
            bench_fill(src, n * size, seed);
            for (size_t w = 0; w < n; w++) {
                shmem_putmem_nbi(dst + (w * 2654435761u % slots) * size, src + w * size, size,
                                 peer);
            }
            shmem_quiet();
        }
        shmem_barrier_all();
        long bad = 0;
        if (me == peer) {
            for (size_t w = 0; w < n; w++) {
                memcpy(gather + w * size, dst + (w * 2654435761u % slots) * size, size);
            }
            bad = bench_count_wrong(gather, n * size, seed);
        }
        double per = (double)opts.window;
        bench_row(size, me == 0 ? per / med : 0, me == 0 ? per / best : 0, bench_sum(bad));
    }
    shmem_barrier_all();
    free(place);
    free(gather);
    shmem_free(src);
    shmem_free(dst);
}

#if BENCH_HAVE_SESSION
/* One round of WINDOW puts of size bytes, put w from src + w*size to dst + w*gap*size, and the
 * quiet, on ctx; inside a BATCH session when session. Its time in us. */
static double session_round(shmem_ctx_t ctx, unsigned char *dst, const unsigned char *src,
                            size_t size, size_t gap, int session)
{
    shmem_ctx_session_config_t cfg = {.total_ops = (size_t)opts.window};
    double t0 = bench_now_us();
    if (session) {
        shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &cfg, SHMEM_CTX_SESSION_TOTAL_OPS);
    }
    for (int w = 0; w < opts.window; w++) {
        shmem_ctx_putmem_nbi(ctx, dst + (size_t)w * gap * size, src + (size_t)w * size, size,
                             peer);
    }
    if (session) {
        shmem_ctx_session_stop(ctx);
    }
    shmem_ctx_quiet(ctx);
    return bench_now_us() - t0;
}

/* put_session_rate (gap 1) and put_session_scatter_rate (gap 2): rounds with and without a
 * session alternate, so both see the same machine; two sections from one run. */
static void session_test(const char *name, const char *off_name, size_t gap)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    size_t top = opts.max < SESSION_MAX ? opts.max : SESSION_MAX;
    size_t span = (size_t)opts.window * top;
    unsigned char *dst = shmem_malloc(span * gap), *src = shmem_malloc(span);
    double *off = malloc(sizeof(double) * (size_t)(opts.iters > 3 ? opts.iters : 3));
    size_t nsizes = 0;
    double res[64][4];
    long wrong[64];
    shmem_ctx_t ctx;
    if (!dst || !src || !off || shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        if (me == 0) {
            fprintf(stderr, "rma: %s: no context or %zu bytes of heap\n", name, span * (gap + 1));
        }
        shmem_global_exit(1);
    }
    for (size_t size = opts.min; size <= top && nsizes < 64; size = bench_next_size(&opts, size)) {
        int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
        int warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
        memset(src, 0x5a, span);
        shmem_barrier_all();
        if (me == 0) {
            for (int r = -warm; r < rounds; r++) {
                double a = session_round(ctx, dst, src, size, gap, 0);
                double b = session_round(ctx, dst, src, size, gap, 1);
                if (r >= 0) {
                    off[r] = a;
                    samples[r] = b;
                }
            }
            double per = (double)opts.window, best_on, best_off;
            double on = bench_stats(samples, rounds, &best_on);
            double no = bench_stats(off, rounds, &best_off);
            res[nsizes][0] = per / on;
            res[nsizes][1] = per / best_on;
            res[nsizes][2] = per / no;
            res[nsizes][3] = per / best_off;
        }
        /* the check: a pattern over the WINDOW puts of one session, PE 1 gathers its slots */
        unsigned long seed = size * 8 + 9 + gap;
        shmem_barrier_all();
        if (me == 0) {
            bench_fill(src, (size_t)opts.window * size, seed);
            session_round(ctx, dst, src, size, gap, 1);
        }
        shmem_barrier_all();
        long bad = 0;
        if (me == peer) {
            for (int w = 0; w < opts.window; w++) {
                memmove(src + (size_t)w * size, dst + (size_t)w * gap * size, size);
            }
            bad = bench_count_wrong(src, (size_t)opts.window * size, seed);
            memset(dst, 0, span * gap);
        }
        wrong[nsizes++] = bench_sum(bad);
    }
    const char *sep = gap > 1 ? "every other element" : "consecutive elements";
    char what[160];
    snprintf(what, sizeof(what),
             "WINDOW shmem_ctx_putmem_nbi (%s) + quiet per round in a BATCH session", sep);
    bench_section(name, "heap", "Mmsg/s", what);
    size_t i = 0;
    for (size_t size = opts.min; i < nsizes; size = bench_next_size(&opts, size), i++) {
        bench_row(size, res[i][0], res[i][1], wrong[i]);
    }
    snprintf(what, sizeof(what),
             "the same rounds without a session, alternating with them (%s)", sep);
    bench_section(off_name, "heap", "Mmsg/s", what);
    i = 0;
    for (size_t size = opts.min; i < nsizes; size = bench_next_size(&opts, size), i++) {
        bench_row(size, res[i][2], res[i][3], wrong[i]);
    }
    shmem_ctx_destroy(ctx);
    free(off);
    shmem_free(src);
    shmem_free(dst);
}
#endif

static void ctx_threads_test(const struct target *t);

static void run_target(const struct target *t)
{
    if (opts.max > t->cap && opts.min <= t->cap) {
        bench_note("%s target: sizes above %zu bytes skipped", t->name, t->cap);
    }
    latency_test("put_lat", 0, t, "shmem_putmem + shmem_quiet, PE 0 -> PE 1");
    latency_test("put_nbi_lat", 1, t, "shmem_putmem_nbi + shmem_quiet, PE 0 -> PE 1");
    latency_test("put_ret", 4, t, "shmem_putmem until it returns (source reusable), PE 0 -> PE 1");
    latency_test("get_lat", 2, t, "shmem_getmem, PE 0 <- PE 1");
    latency_test("get_nbi_lat", 3, t, "shmem_getmem_nbi + shmem_quiet, PE 0 <- PE 1");
    window_test("put_bw", 0, t, "WINDOW shmem_putmem_nbi + shmem_quiet per round, PE 0 -> PE 1");
    window_test("put_rate", 1, t, "WINDOW shmem_putmem_nbi + shmem_quiet per round, PE 0 -> PE 1");
    bibw_test(t);
    signal_test(t);
    ctx_threads_test(t);
}

/* ctx_threads_rate: the threads of PE 0 and what they share. */
static struct {
    const struct target *t;
    size_t size;
    int nthreads, rounds;
    pthread_barrier_t go;
    double end[64];
} ct;

static void *ctx_thread(void *arg)
{
    int k = (int)(intptr_t)arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        ctx = SHMEM_CTX_DEFAULT;
    }
    unsigned char *dst = ct.t->remote + (size_t)k * ct.size;
    unsigned char *src = ct.t->local + (size_t)k * ct.size;
    bench_fill(src, ct.size, ct.size * 8 + 7 + (unsigned long)k);
    int warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
    for (int r = 0; r < warm; r++) {
        for (int w = 0; w < opts.window; w++) {
            shmem_ctx_putmem_nbi(ctx, dst, src, ct.size, peer);
        }
        shmem_ctx_quiet(ctx);
    }
    pthread_barrier_wait(&ct.go);
    for (int r = 0; r < ct.rounds; r++) {
        for (int w = 0; w < opts.window; w++) {
            shmem_ctx_putmem_nbi(ctx, dst, src, ct.size, peer);
        }
        shmem_ctx_quiet(ctx);
    }
    ct.end[k] = bench_now_us();
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_ctx_destroy(ctx);
    }
    return NULL;
}

static void ctx_threads_test(const struct target *t)
{
    if (!opts.tests || !strstr(opts.tests, "ctx_threads_rate")) {
        return;
    }
    if (t->local_dev) {
        bench_note("ctx_threads_rate: not run on the %s target (its threads fill host sources)",
                   t->name);
        return;
    }
    const char *env = getenv("BENCH_THREADS");
    ct.nthreads = env && atoi(env) > 0 ? atoi(env) : 2;
    ct.nthreads = ct.nthreads > 64 ? 64 : ct.nthreads;
    ct.rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    ct.t = t;
    if (opts.max * (size_t)ct.nthreads > t->cap) {
        bench_note("ctx_threads_rate: sizes above %zu bytes skipped (each thread has its own "
                   "part of the -e bytes)", t->cap / (size_t)ct.nthreads);
    }
    bench_section("ctx_threads_rate", t->name, "Mmsg/s",
                  "threads of PE 0, each WINDOW shmem_ctx_putmem_nbi + shmem_ctx_quiet per round "
                  "on a private context of its own, PE 0 -> PE 1 (BENCH_THREADS)");
    for (size_t size = opts.min; size <= opts.max && size * (size_t)ct.nthreads <= t->cap;
         size = bench_next_size(&opts, size)) {
        double rate = 0;
        shmem_barrier_all();
        if (me == 0) {
            ct.size = size;
            pthread_t th[64];
            pthread_barrier_init(&ct.go, NULL, (unsigned)ct.nthreads + 1);
            for (int k = 0; k < ct.nthreads; k++) {
                pthread_create(&th[k], NULL, ctx_thread, (void *)(intptr_t)k);
            }
            pthread_barrier_wait(&ct.go);
            double t0 = bench_now_us(), last = t0;
            for (int k = 0; k < ct.nthreads; k++) {
                pthread_join(th[k], NULL);
                last = ct.end[k] > last ? ct.end[k] : last;
            }
            pthread_barrier_destroy(&ct.go);
            rate = (double)ct.nthreads * ct.rounds * opts.window / (last - t0);
        }
        shmem_barrier_all();
        long wrong = 0;
        if (me == peer) {
            for (int k = 0; k < ct.nthreads; k++) {
                wrong += bench_count_wrong(t->remote + (size_t)k * size, size,
                                           size * 8 + 7 + (unsigned long)k);
            }
        }
        bench_row(size, rate, rate, bench_sum(wrong));
    }
}

#if BENCH_HAVE_DEVICE
/* The device target: PE 1's remote area in its GPU's symmetric heap, PE 0's side in the host
 * heap (host -> peer GPU puts, peer GPU -> host gets). The devdev target (devdev != 0): PE 0's
 * side in its own device heap too (GPU -> peer GPU puts, peer GPU -> GPU gets). */
static void run_device(int devdev)
{
    const char *name = devdev ? "devdev" : "device";
    size_t need = devdev ? 2 * opts.max : opts.max;
    if (shmemx_device_heap_size() < need) {
        bench_note("%s target: skipped (%s; FABSHMEM_DEVICE_HEAP_SIZE must hold %zu bytes)", name,
                   shmemx_device_info(), need);
        return;
    }
    bench_note("%s target: %s", name, shmemx_device_info());
    struct target dev = {name, shmemx_malloc_device(opts.max),
                         devdev ? shmemx_calloc_device(1, opts.max) : shmem_malloc(opts.max),
                         opts.max, malloc(opts.max), devdev};
    if (!dev.remote || !dev.local || !dev.scratch) {
        if (me == 0) {
            fprintf(stderr, "rma: cannot allocate %zu bytes of device heap and %zu of %s\n",
                    opts.max, opts.max, devdev ? "device heap" : "host heap");
        }
        shmem_global_exit(1);
    }
    if (!devdev) {
        memset(dev.local, 0x5a, opts.max);
    }
    run_target(&dev);
    shmem_barrier_all();
    free(dev.scratch);
    if (devdev) {
        shmemx_free_device(dev.local);
    } else {
        shmem_free(dev.local);
    }
    shmemx_free_device(dev.remote);
}
#endif

/* t's two sides allocated, or the job ends naming what was not; PE 0's side filled. */
static void target_ready(struct target *t, const char *what)
{
    if (!t->remote || !t->local) {
        if (me == 0) {
            fprintf(stderr, "rma: cannot allocate %s, %zu bytes (raise SHMEM_SYMMETRIC_SIZE)\n",
                    what, t->cap);
        }
        shmem_global_exit(1);
    }
    memset(t->local, 0x5a, t->cap);
}

int main(int argc, char **argv)
{
    bench_parse(&opts, &desc, argc, argv);
    if (opts.tests && strstr(opts.tests, "ctx_threads_rate")) {
        int provided = 0;
        shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
        if (provided != SHMEM_THREAD_MULTIPLE) {
            fprintf(stderr, "rma: ctx_threads_rate needs SHMEM_THREAD_MULTIPLE (provided %d)\n",
                    provided);
            shmem_global_exit(2);
        }
    } else {
        shmem_init();
    }
    me = shmem_my_pe();
    peer = shmem_n_pes() > 1 ? 1 : 0;
    bench_shmem_start(&opts, &desc);
    int n = opts.iters > 3 ? opts.iters : 3;
    samples = malloc(sizeof(double) * (size_t)n);
    struct target heap = {"heap", NULL, NULL, opts.max, NULL, 0};
    if (bench_want_target(&opts, "heap")) {
        heap.remote = shmem_malloc(opts.max);
        heap.local = shmem_malloc(opts.max);
        target_ready(&heap, "2 x the largest size of heap");
    }
    if (!samples) {
        shmem_global_exit(1);
    }
    if (heap.remote) {
        run_target(&heap);
    }
    if (bench_want_target(&opts, "static")) {
        struct target st = {"static", static_remote, static_local, STATIC_MAX, NULL, 0};
        memset(static_local, 0x5a, STATIC_MAX);
        run_target(&st);
    }
    if (bench_want_target(&opts, "private")) {
        struct target pv = {"private", shmem_malloc(opts.max), malloc(opts.max), opts.max, NULL, 0};
        target_ready(&pv, "the largest size of heap and of private memory");
        run_target(&pv);
        shmem_barrier_all();
        free(pv.local);
        shmem_free(pv.remote);
    }
#if BENCH_HAVE_DEVICE
    if (bench_want_target(&opts, "device")) {
        run_device(0);
    }
    if (bench_want_target(&opts, "devdev")) {
        run_device(1);
    }
#endif
    rand_test();
#if BENCH_HAVE_SESSION
    session_test("put_session_rate", "put_nosession_rate", 1);
    session_test("put_session_scatter_rate", "put_nosession_scatter_rate", 2);
#else
    if (bench_want(&opts, "put_session_rate") || bench_want(&opts, "put_session_scatter_rate")) {
        bench_note("put_session_rate: n/a (this OpenSHMEM %d.%d has no sessions)",
                   SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
    }
#endif
    int rc = bench_finish();
    shmem_barrier_all();
    if (heap.remote) {
        shmem_free(heap.local);
        shmem_free(heap.remote);
    }
    free(samples);
    shmem_finalize();
    return rc;
}
