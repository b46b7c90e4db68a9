/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_cswap: atomic_compare_swap elects exactly one winner per round.
 *
 * 1. R rounds; in each every PE tries compare_swap(word[r] on PE 0, 0 -> my id). A PE that
 *    fetched 0 won and counts itself on a second counter (atomic_inc). Every PE sends what it
 *    fetched to PE 0, which checks: exactly one winner per round (the counter says 1 and exactly
 *    one PE fetched 0), the word holds that winner's id, and every loser fetched the winner's
 *    id. For int (typed), long (ctx form on SHMEM_CTX_DEFAULT), uint64_t with ids above 2^32,
 *    long long (C11 generic), and uint64_t with compare_swap_nbi (all rounds in flight, one
 *    quiet).
 * 2. A compare-and-swap loop (atomic_fetch, then compare_swap until it succeeds) increments a
 *    counter K times per PE: the counter ends at exactly K * npes.
 */
#include "../test.h"

#define NAME "amo_cswap"
#define R 400
#define K 200

static int me, npes;

/* PE 0's analysis of one election: olds[p*R + r] is what PE p fetched in round r, ids[p] the
 * value PE p swaps in, words[r] the final word, wins[r] the winner count. */
static void judge(const char *what, const unsigned long long *olds, const unsigned long long *ids,
                  const unsigned long long *words, const long *wins)
{
    long bad = 0;
    for (int r = 0; r < R && bad < 5; r++) {
        int winner = -1, nwin = 0;
        for (int p = 0; p < npes; p++) {
            if (olds[(size_t)p * R + (size_t)r] == 0) {
                winner = p;
                nwin++;
            }
        }
        int ok = t_check(nwin == 1 && wins[r] == 1,
                         "%s round %d: %d PEs fetched 0, the winner counter says %ld", what, r,
                         nwin, wins[r]);
        if (ok && winner >= 0) {
            ok = t_check(words[r] == ids[winner],
                         "%s round %d: word holds 0x%llx, the winner PE %d's id is 0x%llx", what,
                         r, words[r], winner, ids[winner]);
            for (int p = 0; p < npes && ok; p++) {
                unsigned long long o = olds[(size_t)p * R + (size_t)r];
                if (p != winner) {
                    ok = t_check(o == ids[winner],
                                 "%s round %d: loser PE %d fetched 0x%llx, want winner's 0x%llx",
                                 what, r, p, o, ids[winner]);
                }
            }
        }
        bad += !ok;
    }
}

/* CSWAP(word, id) returns the old value as TY. IDOF(pe) is PE pe's id (never 0). */
#define ELECTION(TY, TN, IDOF, CSWAP)                                                             \
    static void election_##TN(void)                                                               \
    {                                                                                             \
        TY *words = shmem_calloc(R, sizeof(TY));                                                  \
        long *wins = shmem_calloc(R, sizeof(long));                                               \
        unsigned long long *olds = shmem_calloc((size_t)npes * R, sizeof(unsigned long long));    \
        unsigned long long *mine = malloc(R * sizeof(unsigned long long));                        \
        unsigned long long *ids = malloc((size_t)npes * sizeof(unsigned long long));              \
        if (!t_check(words && wins && olds && mine && ids, #TN ": allocation failed")) {          \
            return;                                                                               \
        }                                                                                         \
        for (int p = 0; p < npes; p++) {                                                          \
            ids[p] = (unsigned long long)(TY)IDOF(p);                                             \
        }                                                                                         \
        const TY id = (TY)IDOF(me);                                                               \
        shmem_barrier_all();                                                                      \
        for (int r = 0; r < R; r++) {                                                             \
            TY old = CSWAP(&words[r], id);                                                        \
            mine[r] = (unsigned long long)old;                                                    \
            if (old == 0) {                                                                       \
                shmem_long_atomic_inc(&wins[r], 0);                                               \
            }                                                                                     \
        }                                                                                         \
        shmem_putmem(olds + (size_t)me * R, mine, R * sizeof(unsigned long long), 0);             \
        shmem_barrier_all();                                                                      \
        if (me == 0) {                                                                            \
            unsigned long long *w = malloc(R * sizeof(unsigned long long));                       \
            for (int r = 0; w && r < R; r++) {                                                    \
                w[r] = (unsigned long long)words[r];                                              \
            }                                                                                     \
            if (w) {                                                                              \
                judge(#TN, olds, ids, w, wins);                                                   \
            }                                                                                     \
            free(w);                                                                              \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        free(ids);                                                                                \
        free(mine);                                                                               \
        shmem_free(olds);                                                                         \
        shmem_free(wins);                                                                         \
        shmem_free(words);                                                                        \
    }

#define SMALL_ID(p) ((p) + 1)
#define BIG_ID(p) ((((uint64_t)(p) + 1) << 33) | 0x80000001ULL)
#define NEG_ID(p) (-1000LL - (long long)(p))
#define INT_CSWAP(w, id) shmem_int_atomic_compare_swap(w, 0, id, 0)
#define LONG_CSWAP(w, id) shmem_ctx_long_atomic_compare_swap(SHMEM_CTX_DEFAULT, w, 0, id, 0)
#define U64_CSWAP(w, id) shmem_uint64_atomic_compare_swap(w, 0, id, 0)
#define LL_CSWAP(w, id) shmem_atomic_compare_swap(w, 0LL, id, 0)

ELECTION(int, int, SMALL_ID, INT_CSWAP)
ELECTION(long, long_ctx, SMALL_ID, LONG_CSWAP)
ELECTION(uint64_t, uint64_big, BIG_ID, U64_CSWAP)
ELECTION(long long, longlong_generic, NEG_ID, LL_CSWAP)

/* The same with every round's compare_swap_nbi in flight at once. */
static void election_nbi(void)
{
    uint64_t *words = shmem_calloc(R, sizeof(uint64_t));
    long *wins = shmem_calloc(R, sizeof(long));
    unsigned long long *olds = shmem_calloc((size_t)npes * R, sizeof(unsigned long long));
    uint64_t *fetched = malloc(R * sizeof(uint64_t));
    unsigned long long *mine = malloc(R * sizeof(unsigned long long));
    unsigned long long *ids = malloc((size_t)npes * sizeof(unsigned long long));
    if (!t_check(words && wins && olds && fetched && mine && ids, "nbi: allocation failed")) {
        return;
    }
    for (int p = 0; p < npes; p++) {
        ids[p] = BIG_ID(p);
    }
    for (int r = 0; r < R; r++) {
        fetched[r] = 0xDEADBEEFDEADBEEFULL;
    }
    shmem_barrier_all();
    for (int r = 0; r < R; r++) {
        if (r % 2) {
            shmem_ctx_uint64_atomic_compare_swap_nbi(SHMEM_CTX_DEFAULT, &fetched[r], &words[r], 0,
                                                     BIG_ID(me), 0);
        } else {
            shmem_uint64_atomic_compare_swap_nbi(&fetched[r], &words[r], 0, BIG_ID(me), 0);
        }
    }
    shmem_quiet();
    for (int r = 0; r < R; r++) {
        mine[r] = fetched[r];
        if (fetched[r] == 0) {
            shmem_long_atomic_inc(&wins[r], 0);
        }
    }
    shmem_putmem(olds + (size_t)me * R, mine, R * sizeof(unsigned long long), 0);
    shmem_barrier_all();
    if (me == 0) {
        unsigned long long *w = malloc(R * sizeof(unsigned long long));
        for (int r = 0; w && r < R; r++) {
            w[r] = words[r];
        }
        if (w) {
            judge("uint64 compare_swap_nbi", olds, ids, w, wins);
        }
        free(w);
    }
    shmem_barrier_all();
    free(ids);
    free(mine);
    free(fetched);
    shmem_free(olds);
    shmem_free(wins);
    shmem_free(words);
}

/* An increment built from atomic_fetch + compare_swap retries. */
static void cas_loop(void)
{
    long *ctr = shmem_calloc(1, sizeof(long));
    if (!t_check(ctr != NULL, "cas loop: allocation failed")) {
        return;
    }
    shmem_barrier_all();
    for (int i = 0; i < K; i++) {
        long old = shmem_long_atomic_fetch(ctr, 0);
        for (;;) {
            long seen = shmem_long_atomic_compare_swap(ctr, old, old + 1, 0);
            if (seen == old) {
                break;
            }
            t_check(seen > old, "cas loop: the counter went back from %ld to %ld", old, seen);
            old = seen;
        }
    }
    shmem_barrier_all();
    if (me == 0) {
        t_check(*ctr == (long)K * npes, "cas loop: counter %ld, want %ld", *ctr, (long)K * npes);
    }
    shmem_barrier_all();
    shmem_free(ctr);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();

    election_int();
    election_long_ctx();
    election_uint64_big();
    election_longlong_generic();
    election_nbi();
    cas_loop();

    shmem_finalize();
    return t_finish(NAME);
}
