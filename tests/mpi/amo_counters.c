/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_counters: atomics under contention leave exact results, for every standard AMO type, the
 * extended (float/double) and bitwise ones, the ctx forms, the deprecated names and the fetching
 * _nbi forms.
 *
 * 1. Standard AMO types (int, long, long long, the unsigned ones, int32/int64/uint32/uint64,
 *    size_t, ptrdiff_t): every PE does N_ADD atomic_add (addends that are negative, above 2^32
 *    or wrapping) and atomic_inc on counters of PE 0 and of its right neighbour, ctx_atomic_add
 *    on SHMEM_CTX_DEFAULT, and N_FETCH atomic_fetch_add / atomic_fetch_inc: totals are exact;
 *    each PE's fetched values grow strictly and stay in range; on a counter only I update
 *    (ctx_atomic_fetch_inc on my right neighbour) the fetched values are exactly 0, 1, 2, ...;
 *    atomic_fetch reads the totals and atomic_set writes a neighbour's word.
 * 2. Bitwise types: every PE sets its own bits with atomic_or, clears them with atomic_and, and
 *    toggles them with fetch_xor or with xor followed by shmem_fence (the fetched value shows
 *    exactly how often I toggled before),
 *    plain, ctx and fetching _nbi forms; the results have exactly every PE's bits.
 * 3. Extended types (float, double, long): a chain of atomic_swap calls from all PEs on one
 *    word passes every value on exactly once (each value swapped in is fetched by exactly one
 *    later swap or is the final value); concurrent atomic_set/atomic_fetch never see a torn
 *    value.
 * 4. The deprecated names (shmem_int_fadd, shmem_long_finc, shmem_int_add, shmem_long_inc,
 *    shmem_int_cswap, shmem_long_swap, shmem_swap, shmem_double_swap, shmem_int_fetch,
 *    shmem_long_set) give the same results; and every other type of their tables (uint, ulong,
 *    ulonglong, int32, int64, uint32, uint64, size, ptrdiff: OpenSHMEM 1.4's deprecated
 *    synopses) counts, compares-and-swaps, sets, swaps and fetches right through its own name.
 * 5. Fetching _nbi forms: many atomic_fetch_add_nbi / fetch_inc_nbi into distinct fetch slots,
 *    one shmem_quiet: the fetched values are distinct and, over all PEs, exactly 0..total-1.
 */
#include "../test.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define NAME "amo_counters"
#define N_ADD 600
#define N_FETCH 200
#define NBITS_ROUNDS 48
#define N_SWAP 150
#define N_NBI 500

static int me, npes, left, right;

/* ------------------------------------------------------------------ 1: standard AMO types */
/* Counters: [0] add@0 [1] inc@0 [2] fetch_add(2)@0 [3] fetch_inc@0 [4] add@right [5] inc@right
 * [6] ctx add@0 [7] ctx fetch_inc@right [8] atomic_set by the left neighbour. */
#define COUNTER_TEST(T, TN, V)                                                                    \
    static void counters_##TN(void)                                                               \
    {                                                                                             \
        T *c = shmem_calloc(9, sizeof(T));                                                        \
        if (!t_check(c != NULL, #TN ": shmem_calloc failed")) {                                   \
            return;                                                                               \
        }                                                                                         \
        const T v = (T)(V);                                                                       \
        shmem_barrier_all();                                                                      \
        for (int i = 0; i < N_ADD; i++) {                                                         \
            shmem_##TN##_atomic_add(&c[0], v, 0);                                                 \
            shmem_##TN##_atomic_inc(&c[1], 0);                                                    \
            shmem_##TN##_atomic_add(&c[4], v, right);                                             \
            shmem_##TN##_atomic_inc(&c[5], right);                                                \
            shmem_ctx_##TN##_atomic_add(SHMEM_CTX_DEFAULT, &c[6], v, 0);                          \
        }                                                                                         \
        T prev_fa = 0, prev_fi = 0;                                                               \
        for (int i = 0; i < N_FETCH; i++) {                                                       \
            T fa = shmem_##TN##_atomic_fetch_add(&c[2], (T)2, 0);                                 \
            T fi = shmem_##TN##_atomic_fetch_inc(&c[3], 0);                                       \
            T mine = shmem_ctx_##TN##_atomic_fetch_inc(SHMEM_CTX_DEFAULT, &c[7], right);          \
            t_check(fa % 2 == 0 && fa < (T)(2 * N_FETCH * npes) && (i == 0 || fa > prev_fa),      \
                    #TN " fetch_add #%d: fetched %lld (previous %lld, limit %d)", i,              \
                    (long long)fa, (long long)prev_fa, 2 * N_FETCH * npes);                       \
            t_check(fi < (T)(N_FETCH * npes) && (i == 0 || fi > prev_fi),                         \
                    #TN " fetch_inc #%d: fetched %lld (previous %lld, limit %d)", i,              \
                    (long long)fi, (long long)prev_fi, N_FETCH * npes);                           \
            t_check(mine == (T)i, #TN " ctx fetch_inc on a counter only I update: #%d got %lld",  \
                    i, (long long)mine);                                                          \
            prev_fa = fa;                                                                         \
            prev_fi = fi;                                                                         \
        }                                                                                         \
        shmem_##TN##_atomic_set(&c[8], (T)(me * 1000 + 17), right);                               \
        shmem_barrier_all();                                                                      \
        const T all = (T)(N_ADD * npes);                                                          \
        const T want_add_all = (T)(v * all), want_add_right = (T)(v * (T)N_ADD);                  \
        if (me == 0) {                                                                            \
            t_check(c[0] == want_add_all, #TN " atomic_add total 0x%llx, want 0x%llx",            \
                    (unsigned long long)c[0], (unsigned long long)want_add_all);                  \
            t_check(c[1] == all, #TN " atomic_inc total %lld, want %lld", (long long)c[1],        \
                    (long long)all);                                                              \
            t_check(c[2] == (T)(2 * N_FETCH * npes), #TN " fetch_add total %lld, want %d",        \
                    (long long)c[2], 2 * N_FETCH * npes);                                         \
            t_check(c[3] == (T)(N_FETCH * npes), #TN " fetch_inc total %lld, want %d",            \
                    (long long)c[3], N_FETCH * npes);                                             \
            t_check(c[6] == want_add_all, #TN " ctx atomic_add total 0x%llx, want 0x%llx",        \
                    (unsigned long long)c[6], (unsigned long long)want_add_all);                  \
        }                                                                                         \
        t_check(c[4] == want_add_right, #TN " atomic_add from my left neighbour 0x%llx, want "    \
                "0x%llx", (unsigned long long)c[4], (unsigned long long)want_add_right);          \
        t_check(c[5] == (T)N_ADD, #TN " atomic_inc from my left neighbour %lld, want %d",         \
                (long long)c[5], N_ADD);                                                          \
        t_check(c[7] == (T)N_FETCH, #TN " ctx fetch_inc from my left neighbour %lld, want %d",    \
                (long long)c[7], N_FETCH);                                                        \
        t_check(c[8] == (T)(left * 1000 + 17), #TN " atomic_set by my left neighbour: %lld",      \
                (long long)c[8]);                                                                 \
        T f0 = shmem_##TN##_atomic_fetch(&c[0], 0);                                               \
        T f8 = shmem_ctx_##TN##_atomic_fetch(SHMEM_CTX_DEFAULT, &c[8], right);                    \
        t_check(f0 == want_add_all, #TN " atomic_fetch of PE 0's total 0x%llx, want 0x%llx",      \
                (unsigned long long)f0, (unsigned long long)want_add_all);                        \
        t_check(f8 == (T)(me * 1000 + 17), #TN " atomic_fetch of what I set: %lld",               \
                (long long)f8);                                                                   \
        shmem_barrier_all();                                                                      \
        shmem_free(c);                                                                            \
    }

COUNTER_TEST(int, int, -3)
COUNTER_TEST(long, long, 0x100000001L)
COUNTER_TEST(long long, longlong, -0x100000003LL)
COUNTER_TEST(unsigned int, uint, 0x80000001u)
COUNTER_TEST(unsigned long, ulong, 0x100000007UL)
COUNTER_TEST(unsigned long long, ulonglong, 0xFFFFFFFFFFFFFFF1ULL)
COUNTER_TEST(int32_t, int32, -7)
COUNTER_TEST(int64_t, int64, -0x200000001LL)
COUNTER_TEST(uint32_t, uint32, 0xC0000003u)
COUNTER_TEST(uint64_t, uint64, 0x100000001ULL)
COUNTER_TEST(size_t, size, 5)
COUNTER_TEST(ptrdiff_t, ptrdiff, -9)

/* ------------------------------------------------------------------ 2: bitwise types */
/* My bits: one in the low half of 32-bit types, and one in each half of 64-bit ones. */
#define BIT_OF(T, pe)                                                                             \
    ((T)((sizeof(T) == 8 ? ((uint64_t)1 << (32 + (pe) % 32)) : 0) | ((uint64_t)1 << ((pe) % 32))))

#define BITWISE_TEST(T, TN)                                                                       \
    static void bitwise_##TN(void)                                                                \
    {                                                                                             \
        /* [r] or, [R + r] and, [2R + r] fetch_or, [3R + r] fetch_and, [4R] xor, [4R+1+r] nbi */  \
        const int R = NBITS_ROUNDS;                                                               \
        T *w = shmem_calloc((size_t)(5 * R + 1), sizeof(T));                                      \
        T *fo = malloc((size_t)R * sizeof(T));                                                    \
        if (!t_check(w != NULL && fo != NULL, #TN ": allocation failed")) {                       \
            return;                                                                               \
        }                                                                                         \
        for (int r = 0; r < R; r++) {                                                             \
            w[R + r] = (T)~(T)0;                                                                  \
            w[3 * R + r] = (T)~(T)0;                                                              \
        }                                                                                         \
        const T bit = BIT_OF(T, me);                                                              \
        shmem_barrier_all();                                                                      \
        for (int r = 0; r < R; r++) {                                                             \
            if (r % 2) {                                                                          \
                shmem_ctx_##TN##_atomic_or(SHMEM_CTX_DEFAULT, &w[r], bit, 0);                     \
                shmem_ctx_##TN##_atomic_and(SHMEM_CTX_DEFAULT, &w[R + r], (T)~bit, 0);            \
            } else {                                                                              \
                shmem_##TN##_atomic_or(&w[r], bit, 0);                                            \
                shmem_##TN##_atomic_and(&w[R + r], (T)~bit, 0);                                   \
            }                                                                                     \
            T f = shmem_##TN##_atomic_fetch_or(&w[2 * R + r], bit, 0);                            \
            t_check((f & bit) == 0, #TN " fetch_or round %d: my bits already set in 0x%llx", r,   \
                    (unsigned long long)f);                                                       \
            f = shmem_ctx_##TN##_atomic_fetch_and(SHMEM_CTX_DEFAULT, &w[3 * R + r], (T)~bit, 0);  \
            t_check((f & bit) == bit, #TN " fetch_and round %d: my bits already clear in 0x%llx", \
                    r, (unsigned long long)f);                                                    \
            /* One toggle per round; before round r my bits were toggled r times. */             \
            if (r % 3 == 1) {                                                                     \
                /* A non-fetching AMO may still be in flight (spec: only fence or quiet           \
                 * orders it before the next round's fetch_xor to the same word). */              \
                shmem_##TN##_atomic_xor(&w[4 * R], bit, 0);                                       \
                shmem_fence();                                                                    \
            } else {                                                                              \
                f = shmem_##TN##_atomic_fetch_xor(&w[4 * R], bit, 0);                             \
                t_check((f & bit) == ((r % 2) ? bit : 0),                                         \
                        #TN " fetch_xor round %d: my bits in 0x%llx after %d toggles", r,         \
                        (unsigned long long)f, r);                                                \
            }                                                                                     \
            shmem_##TN##_atomic_fetch_or_nbi(&fo[r], &w[4 * R + 1 + (r % (R - 1))], bit, 0);      \
        }                                                                                         \
        shmem_quiet();                                                                            \
        /* Word 4R+1+k got my bits once at round k, word 4R+1 twice (rounds 0 and R-1, with no  \
         * order between them): exactly one of those two fetches saw them clear. */              \
        for (int r = 1; r < R - 1; r++) {                                                         \
            t_check((fo[r] & bit) == 0, #TN " fetch_or_nbi round %d: my bits set in 0x%llx", r,   \
                    (unsigned long long)fo[r]);                                                   \
        }                                                                                         \
        t_check(((fo[0] & bit) == 0) != ((fo[R - 1] & bit) == 0),                                 \
                #TN " fetch_or_nbi twice on one word: fetched 0x%llx and 0x%llx",                 \
                (unsigned long long)fo[0], (unsigned long long)fo[R - 1]);                        \
        shmem_barrier_all();                                                                      \
        if (me == 0) {                                                                            \
            T all = 0;                                                                            \
            for (int p = 0; p < npes; p++) {                                                      \
                all |= BIT_OF(T, p);                                                              \
            }                                                                                     \
            for (int r = 0; r < R; r++) {                                                         \
                t_check(w[r] == all, #TN " atomic_or word %d: 0x%llx, want 0x%llx", r,            \
                        (unsigned long long)w[r], (unsigned long long)all);                       \
                t_check(w[R + r] == (T)~all, #TN " atomic_and word %d: 0x%llx, want 0x%llx", r,   \
                        (unsigned long long)w[R + r], (unsigned long long)(T)~all);               \
                t_check(w[2 * R + r] == all, #TN " fetch_or word %d: 0x%llx, want 0x%llx", r,     \
                        (unsigned long long)w[2 * R + r], (unsigned long long)all);               \
                t_check(w[3 * R + r] == (T)~all, #TN " fetch_and word %d: 0x%llx, want 0x%llx",   \
                        r, (unsigned long long)w[3 * R + r], (unsigned long long)(T)~all);        \
            }                                                                                     \
            /* Every PE toggled its bits R times (R is even): the xor word is back to 0. */      \
            t_check(w[4 * R] == 0, #TN " xor word 0x%llx, want 0", (unsigned long long)w[4 * R]); \
            for (int k = 0; k < R - 1; k++) {                                                     \
                t_check(w[4 * R + 1 + k] == all, #TN " fetch_or_nbi word %d: 0x%llx, want 0x%llx", \
                        k, (unsigned long long)w[4 * R + 1 + k], (unsigned long long)all);        \
            }                                                                                     \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        free(fo);                                                                                 \
        shmem_free(w);                                                                            \
    }

BITWISE_TEST(unsigned int, uint)
BITWISE_TEST(unsigned long, ulong)
BITWISE_TEST(unsigned long long, ulonglong)
BITWISE_TEST(int32_t, int32)
BITWISE_TEST(int64_t, int64)
BITWISE_TEST(uint32_t, uint32)
BITWISE_TEST(uint64_t, uint64)

/* ------------------------------------------------------------------ 3: swap chains */
/* PE p's i-th swap puts in the value of id p*N_SWAP+i+1; id 0 is the word's initial value.
 * Every PE sends what it fetched to PE 0, which checks that each id was fetched exactly once,
 * counting the final value as fetched. SWAP(T, dest, value) is the call under test. */
#define SWAP_CHAIN(T, TN, TO_VAL, FROM_VAL, SWAP_EVEN, SWAP_ODD)                                  \
    static void swap_chain_##TN(void)                                                             \
    {                                                                                             \
        T *word = shmem_malloc(sizeof(T));                                                        \
        T *got = shmem_malloc((size_t)npes * N_SWAP * sizeof(T));                                 \
        T *mine = malloc(N_SWAP * sizeof(T));                                                     \
        int *seen = calloc((size_t)npes * N_SWAP + 1, sizeof(int));                               \
        if (!t_check(word && got && mine && seen, #TN " swap: allocation failed")) {              \
            return;                                                                               \
        }                                                                                         \
        *word = TO_VAL(0);                                                                        \
        shmem_barrier_all();                                                                      \
        for (int i = 0; i < N_SWAP; i++) {                                                        \
            T val = TO_VAL(me * N_SWAP + i + 1);                                                  \
            mine[i] = (i % 2) ? SWAP_ODD(word, val, 0) : SWAP_EVEN(word, val, 0);                 \
        }                                                                                         \
        shmem_putmem(got + (size_t)me * N_SWAP, mine, N_SWAP * sizeof(T), 0);                     \
        shmem_barrier_all();                                                                      \
        if (me == 0) {                                                                            \
            long bad = 0, total = (long)npes * N_SWAP;                                            \
            for (long k = 0; k <= total; k++) {                                                   \
                T v = k < total ? got[k] : *word;                                                 \
                long id = FROM_VAL(v);                                                            \
                if (id < 0 || id > total) {                                                       \
                    bad++;                                                                        \
                    t_check(0, #TN " swap: value #%ld is no value ever swapped in", k);           \
                    continue;                                                                     \
                }                                                                                 \
                seen[id]++;                                                                       \
            }                                                                                     \
            for (long id = 0; id <= total && bad < 5; id++) {                                     \
                if (!t_check(seen[id] == 1, #TN " swap: value id %ld came out %d times", id,      \
                             seen[id])) {                                                         \
                    bad++;                                                                        \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        free(seen);                                                                               \
        free(mine);                                                                               \
        shmem_free(got);                                                                          \
        shmem_free(word);                                                                         \
    }

/* Values with all bits busy: a torn or truncated swap is no id. */
#define LONG_TO(id) ((long)((uint64_t)(id) * 0x0001000000010001ULL))
static long long_from(long v)
{
    uint64_t u = (uint64_t)v;
    uint64_t id = u & 0xFFFF;
    return (uint64_t)LONG_TO(id) == u ? (long)id : -1;
}
#define DOUBLE_TO(id) ((double)(id) * 1.5 + 0.25)
static long double_from(double v)
{
    double id = (v - 0.25) / 1.5;
    long l = (long)id;
    return (double)l == id && DOUBLE_TO(l) == v ? l : -1;
}
#define FLOAT_TO(id) ((float)(id) + 0.5f)
static long float_from(float v)
{
    long l = (long)(v - 0.5f);
    return FLOAT_TO(l) == v ? l : -1;
}
#define LONG_SWAP_DEP(d, v, pe) shmem_long_swap(d, v, pe)
#define LONG_SWAP_OLD(d, v, pe) shmem_swap(d, v, pe)
#define DOUBLE_SWAP(d, v, pe) shmem_double_atomic_swap(d, v, pe)
#define DOUBLE_SWAP_DEP(d, v, pe) shmem_double_swap(d, v, pe)
#define FLOAT_SWAP(d, v, pe) shmem_float_atomic_swap(d, v, pe)
#define FLOAT_SWAP_CTX(d, v, pe) shmem_ctx_float_atomic_swap(SHMEM_CTX_DEFAULT, d, v, pe)
#define LONG_SWAP(d, v, pe) shmem_long_atomic_swap(d, v, pe)
#define LONG_SWAP_GEN(d, v, pe) shmem_atomic_swap(d, v, pe)

SWAP_CHAIN(long, long, LONG_TO, long_from, LONG_SWAP, LONG_SWAP_GEN)
SWAP_CHAIN(long, long_dep, LONG_TO, long_from, LONG_SWAP_DEP, LONG_SWAP_OLD)
SWAP_CHAIN(double, double, DOUBLE_TO, double_from, DOUBLE_SWAP, DOUBLE_SWAP_DEP)
SWAP_CHAIN(float, float, FLOAT_TO, float_from, FLOAT_SWAP, FLOAT_SWAP_CTX)

/* Concurrent set and fetch of one word: every fetch returns a whole value someone set. */
static void set_fetch_contention(void)
{
    uint64_t *u = shmem_malloc(sizeof(uint64_t));
    double *d = shmem_malloc(sizeof(double));
    float *f = shmem_malloc(sizeof(float));
    if (!t_check(u && d && f, "set/fetch: allocation failed")) {
        return;
    }
    *u = 0;
    *d = DOUBLE_TO(0);
    *f = FLOAT_TO(0);
    shmem_barrier_all();
    long total = (long)npes * N_SWAP;
    for (int i = 0; i < N_SWAP; i++) {
        long id = (long)me * N_SWAP + i + 1;
        shmem_uint64_atomic_set(u, (uint64_t)id * 0x0000000100000001ULL, 0);
        shmem_double_atomic_set(d, DOUBLE_TO(id), 0);
        shmem_ctx_float_atomic_set(SHMEM_CTX_DEFAULT, f, FLOAT_TO(id), 0);
        uint64_t gu = shmem_uint64_atomic_fetch(u, 0);
        double gd = shmem_double_atomic_fetch(d, 0);
        float gf = shmem_ctx_float_atomic_fetch(SHMEM_CTX_DEFAULT, f, 0);
        t_check((gu >> 32) == (gu & 0xFFFFFFFFu) && (long)(gu >> 32) <= total,
                "uint64 atomic_fetch under contention: torn value 0x%016" PRIx64, gu);
        long idd = double_from(gd), idf = float_from(gf);
        t_check(idd >= 0 && idd <= total, "double atomic_fetch under contention: %.17g", gd);
        t_check(idf >= 0 && idf <= total, "float atomic_fetch under contention: %.9g",
                (double)gf);
    }
    /* Neighbour set/fetch of the extended types, with fractional values. */
    shmem_barrier_all();
    shmem_double_atomic_set(d, me + 0.25, right);
    shmem_float_atomic_set(f, (float)me + 0.75f, right);
    shmem_barrier_all();
    t_check(*d == left + 0.25, "double atomic_set by my left neighbour: %.17g", *d);
    t_check(*f == (float)left + 0.75f, "float atomic_set by my left neighbour: %.9g",
            (double)*f);
    t_check(shmem_double_atomic_fetch(d, right) == me + 0.25, "double atomic_fetch of my set");
    t_check(shmem_float_atomic_fetch(f, right) == (float)me + 0.75f,
            "float atomic_fetch of my set");
    shmem_barrier_all();
    shmem_free(f);
    shmem_free(d);
    shmem_free(u);
}

/* ------------------------------------------------------------------ 4: deprecated names */
static void deprecated_names(void)
{
    const int n = N_FETCH;
    int *di = shmem_calloc(2 + (size_t)n * 2, sizeof(int)); /* [0] add [1] fadd, cswap words */
    long *dl = shmem_calloc(3, sizeof(long)); /* [0] inc [1] finc [2] set */
    if (!t_check(di && dl, "deprecated: allocation failed")) {
        return;
    }
    int *cs = di + 2, *wins = di + 2 + n;
    shmem_barrier_all();
    int prev_fadd = -1;
    long prev_finc = -1;
    for (int i = 0; i < n; i++) {
        shmem_int_add(&di[0], 3, 0);
        shmem_long_inc(&dl[0], 0);
        int fa = shmem_int_fadd(&di[1], 2, 0);
        long fi = shmem_long_finc(&dl[1], 0);
        t_check(fa % 2 == 0 && fa > prev_fadd && fa < 2 * n * npes,
                "shmem_int_fadd #%d fetched %d (previous %d)", i, fa, prev_fadd);
        t_check(fi > prev_finc && fi < (long)n * npes,
                "shmem_long_finc #%d fetched %ld (previous %ld)", i, fi, prev_finc);
        prev_fadd = fa;
        prev_finc = fi;
        int old = shmem_int_cswap(&cs[i], 0, me + 1, 0);
        t_check(old >= 0 && old <= npes, "shmem_int_cswap #%d returned %d", i, old);
        if (old == 0) {
            shmem_int_add(&wins[i], 1, 0);
        }
    }
    shmem_long_set(&dl[2], 500L + me, right);
    shmem_barrier_all();
    if (me == 0) {
        t_check(di[0] == 3 * n * npes, "shmem_int_add total %d, want %d", di[0], 3 * n * npes);
        t_check(di[1] == 2 * n * npes, "shmem_int_fadd total %d, want %d", di[1], 2 * n * npes);
        t_check(dl[0] == (long)n * npes, "shmem_long_inc total %ld, want %d", dl[0], n * npes);
        t_check(dl[1] == (long)n * npes, "shmem_long_finc total %ld, want %d", dl[1], n * npes);
        for (int i = 0; i < n; i++) {
            t_check(wins[i] == 1 && cs[i] >= 1 && cs[i] <= npes,
                    "shmem_int_cswap word %d: %d winners, value %d", i, wins[i], cs[i]);
        }
    }
    t_check(dl[2] == 500L + left, "shmem_long_set by my left neighbour: %ld", dl[2]);
    int f = shmem_int_fetch(&di[0], 0);
    t_check(f == 3 * n * npes, "shmem_int_fetch of the shmem_int_add total: %d", f);
    shmem_barrier_all();
    shmem_free(dl);
    shmem_free(di);
}

/* The other rows of the deprecated names' tables, each through its own typed name: w[0] counts
 * add 2 + inc from every PE on PE 0, w[1] fadd 1 + finc (each fetch below 2 * npes), and on my
 * right neighbour's w[2] (cswap from 0) and w[3] (set, then swap, then fetch) only I act. */
#define DEP_TYPED(T, N)                                                                            \
    do {                                                                                           \
        T *w = shmem_calloc(4, sizeof(T));                                                         \
        if (!t_check(w != NULL, "deprecated " #N ": allocation failed")) {                         \
            return;                                                                                \
        }                                                                                          \
        shmem_barrier_all();                                                                       \
        shmem_##N##_add(&w[0], (T)2, 0);                                                           \
        shmem_##N##_inc(&w[0], 0);                                                                 \
        T a = shmem_##N##_fadd(&w[1], (T)1, 0), b = shmem_##N##_finc(&w[1], 0);                    \
        T old = shmem_##N##_cswap(&w[2], (T)0, (T)(me + 1), right);                               \
        shmem_##N##_set(&w[3], (T)(10 + me), right);                                               \
        shmem_barrier_all();                                                                       \
        T was = shmem_##N##_swap(&w[3], (T)(20 + me), right);                                      \
        shmem_barrier_all();                                                                       \
        T now = shmem_##N##_fetch(&w[3], right);                                                   \
        t_check(a < (T)(2 * npes) && b < (T)(2 * npes) && a != b,                                  \
                "shmem_" #N "_fadd/finc fetched %lld and %lld", (long long)a, (long long)b);       \
        t_check(old == 0 && w[2] == (T)(left + 1), "shmem_" #N "_cswap: old %lld, mine %lld",      \
                (long long)old, (long long)w[2]);                                                  \
        t_check(was == (T)(10 + me) && now == (T)(20 + me) && w[3] == (T)(20 + left),              \
                "shmem_" #N "_set/swap/fetch: swapped out %lld, fetched %lld, mine %lld",          \
                (long long)was, (long long)now, (long long)w[3]);                                  \
        if (me == 0) {                                                                             \
            t_check(w[0] == (T)(3 * npes) && w[1] == (T)(2 * npes),                                \
                    "shmem_" #N "_add+inc total %lld, fadd+finc total %lld, want %d and %d",       \
                    (long long)w[0], (long long)w[1], 3 * npes, 2 * npes);                         \
        }                                                                                          \
        shmem_barrier_all();                                                                       \
        shmem_free(w);                                                                             \
    } while (0)

static void deprecated_typed(void)
{
    DEP_TYPED(unsigned int, uint);
    DEP_TYPED(unsigned long, ulong);
    DEP_TYPED(unsigned long long, ulonglong);
    DEP_TYPED(int32_t, int32);
    DEP_TYPED(int64_t, int64);
    DEP_TYPED(uint32_t, uint32);
    DEP_TYPED(uint64_t, uint64);
    DEP_TYPED(size_t, size);
    DEP_TYPED(ptrdiff_t, ptrdiff);
}

/* ------------------------------------------------------------------ 5: fetching _nbi forms */
static void nbi_fetches(void)
{
    long *ctr = shmem_calloc(1, sizeof(long));
    uint64_t *uctr = shmem_calloc(1, sizeof(uint64_t));
    long *all = shmem_calloc((size_t)npes * N_NBI, sizeof(long));
    long *fl = malloc(N_NBI * sizeof(long));
    uint64_t *fu = malloc(N_NBI * sizeof(uint64_t));
    char *seen = calloc((size_t)npes * N_NBI, 1);
    if (!t_check(ctr && uctr && all && fl && fu && seen, "nbi: allocation failed")) {
        return;
    }
    for (int i = 0; i < N_NBI; i++) {
        fl[i] = -1;
        fu[i] = UINT64_MAX;
    }
    shmem_barrier_all();
    for (int i = 0; i < N_NBI; i++) {
        if (i % 3 == 2) {
            shmem_ctx_long_atomic_fetch_add_nbi(SHMEM_CTX_DEFAULT, &fl[i], ctr, 1, 0);
        } else {
            shmem_long_atomic_fetch_add_nbi(&fl[i], ctr, 1, 0);
        }
        /* Only I update my right neighbour's uctr: its values are mine, 0..N_NBI-1. */
        shmem_uint64_atomic_fetch_inc_nbi(&fu[i], uctr, right);
    }
    shmem_quiet();
    char *mine = calloc(N_NBI, 1);
    for (int i = 0; i < N_NBI && mine; i++) {
        long v = fl[i];
        t_check(v >= 0 && v < (long)npes * N_NBI, "long fetch_add_nbi slot %d: %ld", i, v);
        t_check(fu[i] < N_NBI && !mine[fu[i] < N_NBI ? fu[i] : 0],
                "uint64 fetch_inc_nbi slot %d: %" PRIu64 " out of range or repeated", i, fu[i]);
        if (fu[i] < N_NBI) {
            mine[fu[i]] = 1;
        }
    }
    free(mine);
    shmem_long_put(all + (size_t)me * N_NBI, fl, N_NBI, 0);
    shmem_barrier_all();
    if (me == 0) {
        long total = (long)npes * N_NBI, bad = 0;
        for (long k = 0; k < total; k++) {
            long v = all[k];
            if (v < 0 || v >= total || seen[v]) {
                if (bad++ < 5) {
                    t_check(0, "long fetch_add_nbi: PE %ld slot %ld fetched %ld (%s)", k / N_NBI,
                            k % N_NBI, v, v < 0 || v >= total ? "out of range" : "duplicate");
                }
                continue;
            }
            seen[v] = 1;
        }
        t_check(*ctr == total, "long fetch_add_nbi total %ld, want %ld", *ctr, total);
    }
    t_check(*uctr == N_NBI, "uint64 fetch_inc_nbi total %" PRIu64 ", want %d", *uctr, N_NBI);
    shmem_barrier_all();
    free(seen);
    free(fu);
    free(fl);
    shmem_free(all);
    shmem_free(uctr);
    shmem_free(ctr);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;

    counters_int();
    counters_long();
    counters_longlong();
    counters_uint();
    counters_ulong();
    counters_ulonglong();
    counters_int32();
    counters_int64();
    counters_uint32();
    counters_uint64();
    counters_size();
    counters_ptrdiff();

    bitwise_uint();
    bitwise_ulong();
    bitwise_ulonglong();
    bitwise_int32();
    bitwise_int64();
    bitwise_uint32();
    bitwise_uint64();

    swap_chain_long();
    swap_chain_long_dep();
    swap_chain_double();
    swap_chain_float();
    set_fetch_contention();

    deprecated_names();
    deprecated_typed();
    nbi_fetches();

    shmem_finalize();
    return t_finish(NAME);
}
