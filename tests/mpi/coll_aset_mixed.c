/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_aset_mixed: the deprecated active-set broadcast and reductions over every PE run on the
 * world team with no sync of their own (runtime/api_coll.c, aset_team): interleaved with team
 * collectives on SHMEM_TEAM_WORLD and with active-set calls on a partial set (the even PEs),
 * back to back with no barrier, each result checked right after its call.
 *
 * Each round: shmem_long_sum_to_all over all PEs (nreduce 1, 300 or 600: the chunked path and,
 * from 1 KiB, the one-node mapped one), shmem_broadcast64 over all PEs from a rotating root (its
 * own dest must keep the sentinel: the active-set form does not write it), a team max reduction
 * on the world, shmem_long_sum_to_all on the even PEs, a team broadcast on the world. Every
 * collective has two dest buffers used in turn and two pSync (and pWrk) arrays, so a PE one
 * call ahead never writes what a peer is still checking; every 7th round the last PE dawdles
 * before its checks, as a PE busy with its result would.
 */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "../coll_test.h"

#define NAME "coll_aset_mixed"
#define ROUNDS 60
#define MAXN 600 /* longs: 4800 B, above the mapped reduction's 1 KiB */

static int me, npes;
static long *rd[2], *bd[2], *td[2], *ed[2], *wd[2], *src; /* symmetric, MAXN longs each */
static long rsync[2][SHMEM_REDUCE_SYNC_SIZE], esync[2][SHMEM_REDUCE_SYNC_SIZE];
static long bsync[2][SHMEM_BCAST_SYNC_SIZE];
static long rwrk[2][MAXN / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long ewrk[2][MAXN / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];

/* Element j of world PE pe's contribution in round k, call c: 1..1000. */
static long val(int pe, int k, int c, int j)
{
    return (long)(t_pattern(pe, ((uint64_t)k * 8 + (uint64_t)c) * 1024 + (uint64_t)j) % 1000) + 1;
}

static void fill(int k, int c, int n)
{
    for (int j = 0; j < n; j++) {
        src[j] = val(me, k, c, j);
    }
}

/* got[0..n) against want(j); the rest of the buffer keeps the sentinel. */
#define CHECK(got, n, WANT, what, k)                                                               \
    do {                                                                                           \
        size_t bad_ = 0, first_ = 0;                                                               \
        long g_ = 0, w_ = 0;                                                                       \
        for (int j = 0; j < (n); j++) {                                                            \
            long want_ = (WANT);                                                                   \
            if ((got)[j] != want_) {                                                               \
                if (bad_++ == 0) {                                                                 \
                    first_ = (size_t)j, g_ = (got)[j], w_ = want_;                                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        t_check(bad_ == 0, "%s, round %d, PE %d: %zu of %d wrong, first at %zu: got %ld, want %ld", \
                what, k, me, bad_, (int)(n), first_, g_, w_);                                      \
        ct_verify_fill((got) + (n), sizeof(long) * (size_t)(MAXN - (n)), CT_SENTINEL,             \
                       "%s, round %d, past the result", what, k);                                  \
    } while (0)

static long sum_of(int k, int c, int j, int start, int stride, int size)
{
    long s = 0;
    for (int i = 0; i < size; i++) {
        s += val(start + i * stride, k, c, j);
    }
    return s;
}

static long max_of(int k, int c, int j)
{
    long m = 0;
    for (int pe = 0; pe < npes; pe++) {
        long v = val(pe, k, c, j);
        m = v > m ? v : m;
    }
    return m;
}

static void reset(long *buf)
{
    memset(buf, CT_SENTINEL, sizeof(long) * MAXN);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    t_start(NAME);
    src = ct_alloc(sizeof(long) * MAXN);
    long **bufs[] = {rd, bd, td, ed, wd};
    for (size_t b = 0; b < sizeof(bufs) / sizeof(bufs[0]); b++) {
        bufs[b][0] = ct_alloc(sizeof(long) * MAXN);
        bufs[b][1] = ct_alloc(sizeof(long) * MAXN);
    }
    for (int p = 0; p < 2; p++) {
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) {
            rsync[p][i] = esync[p][i] = SHMEM_SYNC_VALUE;
        }
        for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++) {
            bsync[p][i] = SHMEM_SYNC_VALUE;
        }
    }
    static const int sizes[] = {1, 300, MAXN};
    int evens = (npes + 1) / 2;
    shmem_barrier_all();
    for (int k = 0; k < ROUNDS; k++) {
        int p = k & 1, n = sizes[k % 3], root = k % npes;
        int dawdle = k % 7 == 3 && me == npes - 1;
        struct timespec nap = {0, 1000 * 1000};

        /* The sources are private to each call: refilled only once the call returned. */
        reset(rd[p]);
        fill(k, 0, n);
        shmem_long_sum_to_all(rd[p], src, n, 0, 0, npes, rwrk[p], rsync[p]);
        if (dawdle) {
            nanosleep(&nap, NULL);
        }
        CHECK(rd[p], n, sum_of(k, 0, j, 0, 1, npes), "shmem_long_sum_to_all (all PEs)", k);

        reset(bd[p]);
        fill(k, 1, n);
        shmem_broadcast64(bd[p], src, (size_t)n, root, 0, 0, npes, bsync[p]);
        if (dawdle) {
            nanosleep(&nap, NULL);
        }
        if (me == root) {
            ct_verify_fill(bd[p], sizeof(long) * MAXN, CT_SENTINEL,
                           "shmem_broadcast64 root's dest, round %d", k);
        } else {
            CHECK(bd[p], n, val(root, k, 1, j), "shmem_broadcast64 (all PEs)", k);
        }

        reset(td[p]);
        fill(k, 2, n);
        shmem_long_max_reduce(SHMEM_TEAM_WORLD, td[p], src, (size_t)n);
        CHECK(td[p], n, max_of(k, 2, j), "shmem_long_max_reduce (world)", k);

        if (me % 2 == 0) {
            reset(ed[p]);
            fill(k, 3, n);
            shmem_long_sum_to_all(ed[p], src, n, 0, 1, evens, ewrk[p], esync[p]);
            if (dawdle) {
                nanosleep(&nap, NULL);
            }
            CHECK(ed[p], n, sum_of(k, 3, j, 0, 2, evens), "shmem_long_sum_to_all (even PEs)", k);
        }

        reset(wd[p]);
        fill(k, 4, n);
        shmem_broadcastmem(SHMEM_TEAM_WORLD, wd[p], src, sizeof(long) * (size_t)n,
                           (root + 1) % npes);
        CHECK(wd[p], n, val((root + 1) % npes, k, 4, j), "shmem_broadcastmem (world)", k);
    }
    shmem_barrier_all();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
