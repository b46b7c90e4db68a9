/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_inboxes: more PEs do atomics to one PE than it keeps inboxes for, and every AMO is
 * applied exactly once.
 *
 * Without provider atomics (the efa-direct configurations) an AMO to a PE this PE does not map
 * is a request written into an inbox the target lends to the source; a target lends
 * FABSHMEM_AMO_PEERS of them at once. The test sets FABSHMEM_AMO_PEERS=1 before shmem_init
 * (unless the caller chose a value), so from 3 PEs on every target has more sources than
 * inboxes: sources must wait for one and holders must give theirs back, or AMOs fail (as they
 * did: "raise FABSHMEM_AMO_PEERS") or hang. On the other configurations the same checks hold
 * for CPU or provider atomics.
 *
 * 1. Every PE, N_ROUNDS times, interleaved: fetch_add, add and a compare_swap increment on
 *    counters of PE 0, a fetch_add, an add and a compare_swap on counters of its neighbours
 *    (right and left: every PE is a target of two sources, PE 0 of all), every LOCK_EVERY
 *    rounds a get/put increment of a PE 0 counter under a lock (shmem_set_lock: atomics to
 *    PE 0), every NBI_EVERY rounds a burst of fetch_add_nbi and a quiet. Totals are exact;
 *    the values fetched from PE 0's counters, gathered at PE 0, are exactly 0..total-1 each
 *    once; on the counters only I update the fetched values are exactly 0, 1, 2, ...
 * 2. A holder that computes lets go: PE 1 does one AMO to PE 0 (it now holds an inbox there,
 *    with 1 inbox the only one), then computes without calling the library while every other
 *    PE does N_IDLE fetch_adds to PE 0 and then tells PE 1 by an atomic set. PE 1 must see
 *    all of them within IDLE_LIMIT seconds: its progress thread gave the inbox back when PE 0
 *    asked.
 */
#include <time.h>
#include <unistd.h>

#include "../test.h"

#define NAME "amo_inboxes"
#define N_ROUNDS 160
#define LOCK_EVERY 4
#define NBI_EVERY 20
#define N_NBI 16
#define N_IDLE 100
#define IDLE_LIMIT 30.0

static int me, npes;
static long lock; /* symmetric, 0 at start as the spec requires */

/* PE 0's counters: [0] fetch_add [1] add [2] cswap increments [3] under the lock [4] nbi
 * fetch_add [5] phase 2. Mine, from neighbours: [6] fetch_add from the left [7] add from the
 * right [8] cswap from the left. */
static long *c;
/* At PE 0: what every PE fetched, a row per PE: fetch_add, cswap's old values, nbi. */
static long *got_fa, *got_cs, *got_nbi;
static long *flags; /* at PE 1, phase 2: [pe] set by pe when its AMOs completed */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Increment the counter at pe by compare_swap until mine wins: the old value it replaced. */
static long cswap_inc(long *ctr, int pe)
{
    long old = shmem_long_atomic_fetch(ctr, pe);
    for (;;) {
        long seen = shmem_long_atomic_compare_swap(ctr, old, old + 1, pe);
        if (seen == old) {
            return old;
        }
        old = seen;
    }
}

/* At PE 0: rows of per PE values, together exactly 0..per * npes - 1, each once. */
static void check_all_once(const char *what, const long *rows, int per)
{
    long total = (long)per * npes;
    char *seen = calloc((size_t)total, 1);
    if (!t_check(seen != NULL, "out of memory")) {
        return;
    }
    long bad = 0, dup = 0;
    for (long i = 0; i < total; i++) {
        long v = rows[i];
        if (v < 0 || v >= total) {
            if (bad++ == 0) {
                t_check(0, "%s: PE %ld fetched %ld, outside 0..%ld", what, i / per, v, total - 1);
            }
        } else if (seen[v]++) {
            if (dup++ == 0) {
                t_check(0, "%s: value %ld fetched twice (again by PE %ld)", what, v, i / per);
            }
        }
    }
    t_check(bad == 0 && dup == 0, "%s: %ld values out of range, %ld fetched twice", what, bad,
            dup);
    free(seen);
}

static void contention(void)
{
    long fa[N_ROUNDS], cs[N_ROUNDS], nbi[N_ROUNDS / NBI_EVERY * N_NBI];
    long prev_fa = -1, added = 0;
    int locked = 0, nnbi = 0, right = (me + 1) % npes, left = (me + npes - 1) % npes;
    shmem_barrier_all();
    for (int i = 0; i < N_ROUNDS; i++) {
        fa[i] = shmem_long_atomic_fetch_add(&c[0], 1, 0);
        t_check(fa[i] > prev_fa, "fetch_add #%d at PE 0: %ld after %ld", i, fa[i], prev_fa);
        prev_fa = fa[i];
        shmem_long_atomic_add(&c[1], i + 1, 0);
        added += i + 1;
        cs[i] = cswap_inc(&c[2], 0);
        long mine = shmem_long_atomic_fetch_add(&c[6], 1, right);
        t_check(mine == i, "fetch_add #%d on a counter of PE %d only I update: %ld", i, right,
                mine);
        shmem_long_atomic_add(&c[7], 3, left);
        long old = shmem_long_atomic_compare_swap(&c[8], i, i + 1, right);
        t_check(old == i, "compare_swap #%d on a counter of PE %d only I update: %ld", i, right,
                old);
        if (i % LOCK_EVERY == 0) {
            shmem_set_lock(&lock);
            long v = shmem_long_g(&c[3], 0);
            shmem_long_p(&c[3], v + 1, 0);
            shmem_clear_lock(&lock); /* completes the put first */
            locked++;
        }
        if (i % NBI_EVERY == NBI_EVERY - 1) {
            for (int k = 0; k < N_NBI; k++) {
                shmem_long_atomic_fetch_add_nbi(&nbi[nnbi + k], &c[4], 1, 0);
            }
            shmem_quiet();
            nnbi += N_NBI;
        }
    }
    shmem_long_put(&got_fa[me * N_ROUNDS], fa, N_ROUNDS, 0);
    shmem_long_put(&got_cs[me * N_ROUNDS], cs, N_ROUNDS, 0);
    shmem_long_put(&got_nbi[me * nnbi], nbi, (size_t)nnbi, 0);
    shmem_barrier_all();
    if (me == 0) {
        long n = (long)N_ROUNDS * npes;
        t_check(c[0] == n, "fetch_add total at PE 0 %ld, want %ld", c[0], n);
        t_check(c[1] == added * npes, "add total at PE 0 %ld, want %ld", c[1], added * npes);
        t_check(c[2] == n, "compare_swap increments at PE 0 %ld, want %ld", c[2], n);
        t_check(c[3] == (long)locked * npes, "increments under the lock %ld, want %ld", c[3],
                (long)locked * npes);
        t_check(c[4] == (long)nnbi * npes, "fetch_add_nbi total at PE 0 %ld, want %ld", c[4],
                (long)nnbi * npes);
        check_all_once("fetch_add at PE 0", got_fa, N_ROUNDS);
        check_all_once("compare_swap at PE 0", got_cs, N_ROUNDS);
        check_all_once("fetch_add_nbi at PE 0", got_nbi, nnbi);
    }
    t_check(c[6] == N_ROUNDS, "fetch_add total from my left neighbour %ld, want %d", c[6],
            N_ROUNDS);
    t_check(c[7] == 3L * N_ROUNDS, "add total from my right neighbour %ld, want %d", c[7],
            3 * N_ROUNDS);
    t_check(c[8] == N_ROUNDS, "compare_swap increments from my left neighbour %ld, want %d", c[8],
            N_ROUNDS);
}

static void idle_holder(void)
{
    const int holder = 1;
    shmem_barrier_all();
    if (me == holder) {
        shmem_long_atomic_add(&c[5], 1, 0);
    }
    shmem_barrier_all();
    if (me == holder) {
        /* Computing: no library call until the others are done or the limit passed. */
        double t0 = now(), t = t0;
        int done = 0;
        while (t - t0 < IDLE_LIMIT) {
            done = 0;
            for (int pe = 0; pe < npes; pe++) {
                done += pe != holder && __atomic_load_n(&flags[pe], __ATOMIC_ACQUIRE) != 0;
            }
            if (done == npes - 1) {
                break;
            }
            usleep(1000);
            t = now();
        }
        t_check(done == npes - 1, "while PE %d computed for %.0f s only %d of %d PEs finished "
                "their atomics to PE 0: its inbox there was not given back", holder, t - t0,
                done, npes - 1);
    } else {
        long prev = -1;
        for (int i = 0; i < N_IDLE; i++) {
            long v = shmem_long_atomic_fetch_add(&c[5], 1, 0);
            t_check(v > prev && v <= (long)N_IDLE * (npes - 1),
                    "phase 2 fetch_add #%d at PE 0: %ld after %ld", i, v, prev);
            prev = v;
        }
        /* An atomic, not a put: PE 1 reads the flag with atomic loads while its progress
         * thread applies what lands there. */
        shmem_long_atomic_set(&flags[me], 1, holder);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (me == 0) {
        long want = 1 + (long)N_IDLE * (npes - 1);
        t_check(c[5] == want, "phase 2 total at PE 0 %ld, want %ld", c[5], want);
    }
}

int main(void)
{
    /* One inbox per target (the same on every PE: it shapes the symmetric heap). */
    setenv("FABSHMEM_AMO_PEERS", "1", 0);
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    int nbi_per = N_ROUNDS / NBI_EVERY * N_NBI;
    c = shmem_calloc(9, sizeof(long));
    got_fa = shmem_calloc((size_t)npes * N_ROUNDS, sizeof(long));
    got_cs = shmem_calloc((size_t)npes * N_ROUNDS, sizeof(long));
    got_nbi = shmem_calloc((size_t)npes * (size_t)nbi_per, sizeof(long));
    flags = shmem_calloc((size_t)npes, sizeof(long));
    if (!t_check(c && got_fa && got_cs && got_nbi && flags, "shmem_calloc failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }
    contention();
    if (npes >= 2) {
        idle_holder();
    }
    shmem_barrier_all();
    shmem_finalize();
    return t_finish(NAME);
}
