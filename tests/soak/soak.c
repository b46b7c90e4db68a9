/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * soak SECONDS: every PE mixes every kind of operation with random sizes and random peers for
 * SECONDS (default 30), verifying all data, until the time is up (agreed by a max-reduction, so
 * every PE stops at the same round). One round:
 *   1. each PE picks a target and a size (rand_pe: a generator every PE can replay for every
 *      other PE, so a target knows what to expect) and sends it a block by put, put_nbi or
 *      put-with-signal, and atomically adds round+1 to its counter for this sender there;
 *   2. a barrier; each PE verifies every block sent to it this round, the signal and counters;
 *   3. each PE gets a random-sized piece of a random peer's reference block (blocking or nbi);
 *   4. one collective chosen by the round (same on all PEs): all-to-all, broadcast from a
 *      random root, or a sum reduction, verified;
 *   5. the stop decision (a max-reduction of "my time is up").
 * Prints `soak: PASS (rounds, operations, bytes verified, seconds)` or the first failures.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>
#include <shmemx.h>

#include "../test.h"

#define MAXB 65536 /* largest point-to-point block */
#define COLLB 4096 /* bytes per PE of a collective */

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
    return t_mix(a * 0x9e3779b97f4a7c15ULL ^ t_mix(b + 0x632be59bd9b4e019ULL) ^ (c << 17));
}

/* What PE `pe` does in round r: replayable by every PE. */
struct plan {
    int target, kind; /* kind: 0 put, 1 put_nbi, 2 put_signal */
    size_t len;
};

static struct plan plan_of(int pe, long r, int npes)
{
    uint64_t h = mix((uint64_t)pe, (uint64_t)r, 1);
    struct plan p;
    p.target = (int)(h % (uint64_t)npes);
    p.kind = (int)((h >> 20) % 3);
    /* Sizes spread over 1 B .. 64 KiB, small ones most often. */
    size_t cap = (size_t)1 << (1 + (h >> 24) % 16);
    p.len = 1 + (size_t)((h >> 40) % cap);
    return p;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 30;
    shmem_init();
    t_start("soak");
    int me = shmem_my_pe(), npes = shmem_n_pes();
    uint8_t *inbox = shmem_malloc((size_t)npes * MAXB);     /* inbox[src] */
    uint8_t *ref = shmem_malloc(MAXB);                       /* my reference block */
    uint64_t *sig = shmem_calloc((size_t)npes, sizeof(uint64_t));  /* sig[src] */
    long *ctr = shmem_calloc((size_t)npes, sizeof(long));          /* ctr[src] */
    uint8_t *csrc = shmem_malloc((size_t)npes * COLLB);
    uint8_t *cdst = shmem_malloc((size_t)npes * COLLB);
    long *rsrc = shmem_malloc(64 * sizeof(long));
    long *rdst = shmem_malloc(64 * sizeof(long));
    long *stop_in = shmem_malloc(sizeof(long));
    long *stop_out = shmem_malloc(sizeof(long));
    uint8_t *local = malloc(MAXB);
    long *want_ctr = calloc((size_t)npes, sizeof(long));
    if (!inbox || !ref || !sig || !ctr || !csrc || !cdst || !rsrc || !rdst || !stop_in ||
        !stop_out || !local || !want_ctr) {
        printf("soak: FAIL (PE %d: out of memory)\n", me);
        return 1;
    }
    t_fill(ref, MAXB, me, 0xfeed);
    shmem_barrier_all();
    double start = shmemx_wtime();
    unsigned long long ops = 0, bytes = 0;
    long r = 0;
    for (;; r++) {
        /* 1. point-to-point */
        struct plan p = plan_of(me, r, npes);
        t_fill(local, p.len, me, (uint64_t)r);
        uint8_t *slot = inbox + (size_t)me * MAXB;
        if (p.kind == 0) {
            shmem_putmem(slot, local, p.len, p.target);
        } else if (p.kind == 1) {
            shmem_putmem_nbi(slot, local, p.len, p.target);
        } else {
            shmem_putmem_signal(slot, local, p.len, &sig[me], (uint64_t)r + 1, SHMEM_SIGNAL_SET,
                                p.target);
        }
        shmem_long_atomic_add(&ctr[me], r + 1, p.target);
        ops += 2;
        /* 2. barrier (completes everything), then verify what came to me */
        shmem_barrier_all();
        for (int src = 0; src < npes; src++) {
            struct plan q = plan_of(src, r, npes);
            if (q.target != me) {
                continue;
            }
            bytes += t_verify(inbox + (size_t)src * MAXB, q.len, src, (uint64_t)r,
                              "round %ld: %zu-byte block from PE %d (kind %d)", r, q.len, src,
                              q.kind) == 0 ? q.len : 0;
            want_ctr[src] += r + 1;
            if (q.kind == 2) {
                uint64_t s = shmem_signal_fetch(&sig[src]);
                t_check(s == (uint64_t)r + 1, "round %ld: signal from PE %d is %llu, want %ld", r,
                        src, (unsigned long long)s, r + 1);
            }
        }
        for (int src = 0; src < npes; src++) {
            long c = shmem_long_atomic_fetch(&ctr[src], me);
            t_check(c == want_ctr[src], "round %ld: counter of PE %d is %ld, want %ld", r, src, c,
                    want_ctr[src]);
        }
        /* Nobody writes my inbox for the next round before I have read it. */
        shmem_barrier_all();
        /* 3. a get of a random piece of a random peer's reference block */
        uint64_t h = mix((uint64_t)me, (uint64_t)r, 2);
        int from = (int)(h % (uint64_t)npes);
        size_t off = (size_t)((h >> 16) % MAXB), len = 1 + (size_t)((h >> 32) % (MAXB - off));
        if (h & 1) {
            shmem_getmem_nbi(local, ref + off, len, from);
            shmem_quiet();
        } else {
            shmem_getmem(local, ref + off, len, from);
        }
        uint8_t *whole = malloc(MAXB);
        if (whole) {
            t_fill(whole, MAXB, from, 0xfeed);
            bytes += t_compare(local, whole + off, len, "round %ld: get of %zu bytes at %zu from PE %d",
                               r, len, off, from) == 0 ? len : 0;
            free(whole);
        }
        ops++;
        /* 4. one collective, the same on every PE */
        int coll = (int)(mix(0, (uint64_t)r, 3) % 3);
        if (coll == 0) {
            for (int k = 0; k < npes; k++) {
                t_fill(csrc + (size_t)k * COLLB, COLLB, me, (uint64_t)(r * 1000 + k));
            }
            shmem_alltoallmem(SHMEM_TEAM_WORLD, cdst, csrc, COLLB);
            for (int k = 0; k < npes; k++) {
                bytes += t_verify(cdst + (size_t)k * COLLB, COLLB, k, (uint64_t)(r * 1000 + me),
                                  "round %ld: all-to-all block from PE %d", r, k) == 0 ? COLLB : 0;
            }
        } else if (coll == 1) {
            int root = (int)(mix(0, (uint64_t)r, 4) % (uint64_t)npes);
            t_fill(csrc, COLLB, me, (uint64_t)r);
            shmem_broadcastmem(SHMEM_TEAM_WORLD, cdst, csrc, COLLB, root);
            bytes += t_verify(cdst, COLLB, root, (uint64_t)r, "round %ld: broadcast from PE %d", r,
                              root) == 0 ? COLLB : 0;
        } else {
            for (int i = 0; i < 64; i++) {
                rsrc[i] = (long)(me + 1) * (r + i);
            }
            shmem_long_sum_reduce(SHMEM_TEAM_WORLD, rdst, rsrc, 64);
            for (int i = 0; i < 64; i++) {
                long want = (long)npes * (npes + 1) / 2 * (r + i);
                t_check(rdst[i] == want, "round %ld: sum[%d] is %ld, want %ld", r, i, rdst[i], want);
            }
            bytes += 64 * sizeof(long);
        }
        ops++;
        /* 5. stop together */
        *stop_in = shmemx_wtime() - start >= secs || t_state.fails > 0;
        shmem_long_max_reduce(SHMEM_TEAM_WORLD, stop_out, stop_in, 1);
        if (*stop_out) {
            break;
        }
    }
    double took = shmemx_wtime() - start;
    shmem_barrier_all();
    int rc = 0;
    if (t_state.fails == 0) {
        if (me == 0) {
            printf("soak: PASS (%d PEs, %ld rounds, %llu operations and %llu bytes verified on "
                   "PE 0, %.1f s)\n", npes, r + 1, ops, bytes, took);
        }
    } else {
        rc = t_finish(NULL);
    }
    shmem_finalize();
    return rc;
}
