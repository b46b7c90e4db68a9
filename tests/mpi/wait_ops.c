/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait_ops: point-to-point synchronization. shmem_<T>_wait_until and shmem_<T>_test with every
 * comparison operator, and the _all/_any/_some forms (scalar and _vector) with status masks,
 * for every SYNC type of the spec, on values a peer writes with shmem_<T>_p or an atomic.
 *
 * Every PE's ivars are written by its left neighbour. Each step: the owner initialises its
 * ivars, barrier, checks that the tests report "not satisfied", barrier, the neighbour writes,
 * the owner waits and checks the result (the values, the returned index or indices) and that
 * the tests now report "satisfied", barrier.
 *   1. One ivar per operator (EQ NE GT GE LT LE). The writer first stores a value that does not
 *      satisfy the comparison, then (after shmem_fence) one that does. The values cross zero
 *      for signed types and sit near the maximum for unsigned ones, and the initial values are
 *      chosen so that comparing with the wrong signedness makes the first test say
 *      "satisfied". Odd operators go through the C11 generic shmem_wait_until / shmem_test.
 *   2. Eight ivars, elements 1, 4 and 7 masked by status. wait_until_all only needs the
 *      unmasked ones; wait_until_any / _some must ignore masked elements even when those
 *      satisfy the comparison; all-masked gives 1 for test_all, SIZE_MAX for test_any and 0 for
 *      test_some. The same for the _vector forms (one cmp_value per element).
 *   3. The deprecated shmem_wait, shmem_int_wait, shmem_long_wait and the untyped
 *      shmem_wait_until; the generic _any/_some/_vector forms.
 */
#include "../test.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define NAME "wait_ops"
#define NV 8

static int me, npes, left, right;

static const int cmps[6] = {SHMEM_CMP_EQ, SHMEM_CMP_NE, SHMEM_CMP_GT,
                            SHMEM_CMP_GE, SHMEM_CMP_LT, SHMEM_CMP_LE};
static const char *cmp_names[6] = {"EQ", "NE", "GT", "GE", "LT", "LE"};

/* Per operator: initial value, the non-satisfying value written first, the satisfying final
 * value, and the comparison value. Cast to the type under test; the unsigned ones count down
 * from the type's maximum (~0 - k truncates to max - k). */
#define TOP(k) (~0ULL - (k))
static const unsigned long long vals_signed[6][4] = {
    {3, (unsigned long long)-8LL, (unsigned long long)-7LL, (unsigned long long)-7LL},
    {(unsigned long long)-9LL, (unsigned long long)-9LL, 9, (unsigned long long)-9LL},
    {(unsigned long long)-20LL, (unsigned long long)-10LL, 7, (unsigned long long)-10LL},
    {(unsigned long long)-20LL, (unsigned long long)-11LL, (unsigned long long)-10LL,
     (unsigned long long)-10LL},
    {5, (unsigned long long)-3LL, (unsigned long long)-4LL, (unsigned long long)-3LL},
    {5, (unsigned long long)-2LL, (unsigned long long)-3LL, (unsigned long long)-3LL},
};
static const unsigned long long vals_unsigned[6][4] = {
    {3, TOP(7), TOP(6), TOP(6)},  {TOP(0), TOP(0), 0, TOP(0)}, {7, TOP(10), TOP(0), TOP(10)},
    {5, TOP(2), TOP(1), TOP(1)},  {TOP(0), 10, 9, 10},         {TOP(3), 6, 5, 5},
};

static const int every_masked[NV] = {1, 1, 1, 1, 1, 1, 1, 1};

static int masked(size_t i)
{
    return i % 3 == 1;
}

#define T_IF_0(...)
#define T_IF_1(...) __VA_ARGS__
#define T_IF(flag, ...) T_IF_##flag(__VA_ARGS__)

/* The writer's store of value v into ivar on pe: shmem_<T>_p, or for AMO types (HAS_AMO) an
 * atomic_set when `atomic` is set. */
#define WAIT_TESTS(T, TN, IS_SIGNED, HAS_AMO)                                                     \
    static void store_##TN(T *ivar, T v, int pe, int atomic)                                      \
    {                                                                                             \
        (void)atomic;                                                                             \
        T_IF(HAS_AMO, if (atomic) {                                                               \
            shmem_##TN##_atomic_set(ivar, v, pe);                                                 \
            return;                                                                               \
        })                                                                                        \
        shmem_##TN##_p(ivar, v, pe);                                                              \
    }                                                                                             \
                                                                                                  \
    static void wait_tests_##TN(void)                                                             \
    {                                                                                             \
        const unsigned long long(*vals)[4] = (IS_SIGNED) ? vals_signed : vals_unsigned;           \
        T *iv = shmem_calloc(6 + NV, sizeof(T));                                                  \
        if (!t_check(iv != NULL, #TN ": shmem_calloc failed")) {                                  \
            return;                                                                               \
        }                                                                                         \
        T *arr = iv + 6;                                                                          \
        int status[NV], none[NV], all_masked[NV];                                                 \
        size_t idx[NV];                                                                           \
        for (size_t i = 0; i < NV; i++) {                                                         \
            status[i] = masked(i);                                                                \
            none[i] = 0;                                                                          \
            all_masked[i] = 1;                                                                    \
        }                                                                                         \
                                                                                                  \
        /* ---- 1: each operator on one ivar */                                                   \
        for (int k = 0; k < 6; k++) {                                                             \
            iv[k] = (T)vals[k][0];                                                                \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        for (int k = 0; k < 6; k++) {                                                             \
            int t = (k % 2) ? shmem_test(&iv[k], cmps[k], (T)vals[k][3])                          \
                            : shmem_##TN##_test(&iv[k], cmps[k], (T)vals[k][3]);                  \
            t_check(t == 0, #TN " test %s 0x%llx on initial 0x%llx returned %d, want 0",         \
                    cmp_names[k], (unsigned long long)(T)vals[k][3],                              \
                    (unsigned long long)(T)vals[k][0], t);                                        \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        for (int k = 0; k < 6; k++) {                                                             \
            store_##TN(&iv[k], (T)vals[k][1], right, 0);                                          \
            shmem_fence();                                                                        \
            store_##TN(&iv[k], (T)vals[k][2], right, k % 2);                                      \
        }                                                                                         \
        shmem_quiet();                                                                            \
        for (int k = 0; k < 6; k++) {                                                             \
            if (k % 2) {                                                                          \
                shmem_wait_until(&iv[k], cmps[k], (T)vals[k][3]);                                 \
            } else {                                                                              \
                shmem_##TN##_wait_until(&iv[k], cmps[k], (T)vals[k][3]);                          \
            }                                                                                     \
            t_check(iv[k] == (T)vals[k][2],                                                       \
                    #TN " wait_until %s 0x%llx returned with ivar 0x%llx, want 0x%llx",           \
                    cmp_names[k], (unsigned long long)(T)vals[k][3], (unsigned long long)iv[k],   \
                    (unsigned long long)(T)vals[k][2]);                                           \
            int t = shmem_##TN##_test(&iv[k], cmps[k], (T)vals[k][3]);                            \
            t_check(t == 1, #TN " test %s after the update returned %d, want 1", cmp_names[k],    \
                    t);                                                                           \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
                                                                                                  \
        const T X = (T)((IS_SIGNED) ? (unsigned long long)-77LL : TOP(77));                       \
        const T Y = (T)((IS_SIGNED) ? 12ULL : TOP(78));                                           \
        /* ---- 2a: wait_until_all, scalar EQ X; masked elements stay Y */                        \
        for (size_t i = 0; i < NV; i++) {                                                         \
            arr[i] = Y;                                                                           \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        t_check(shmem_##TN##_test_all(arr, NV, status, SHMEM_CMP_EQ, X) == 0,                     \
                #TN " test_all before the update is not 0");                                      \
        t_check(shmem_##TN##_test_all(arr, NV, all_masked, SHMEM_CMP_EQ, X) == 1,                 \
                #TN " test_all with every element masked is not 1");                              \
        t_check(shmem_##TN##_test_any(arr, NV, all_masked, SHMEM_CMP_NE, X) == SIZE_MAX,          \
                #TN " test_any with every element masked is not SIZE_MAX");                       \
        t_check(shmem_##TN##_test_some(arr, NV, idx, all_masked, SHMEM_CMP_NE, X) == 0,           \
                #TN " test_some with every element masked is not 0");                             \
        t_check(shmem_##TN##_test_any(arr, NV, status, SHMEM_CMP_EQ, X) == SIZE_MAX,              \
                #TN " test_any before the update is not SIZE_MAX");                               \
        t_check(shmem_##TN##_test_some(arr, NV, idx, NULL, SHMEM_CMP_EQ, X) == 0,                 \
                #TN " test_some (no status) before the update is not 0");                         \
        shmem_barrier_all();                                                                      \
        for (size_t i = 0; i < NV; i++) {                                                         \
            if (!masked(i)) {                                                                     \
                store_##TN(&arr[i], X, right, (int)(i % 2));                                      \
            }                                                                                     \
        }                                                                                         \
        shmem_quiet();                                                                            \
        shmem_##TN##_wait_until_all(arr, NV, status, SHMEM_CMP_EQ, X);                            \
        for (size_t i = 0; i < NV; i++) {                                                         \
            t_check(arr[i] == (masked(i) ? Y : X),                                                \
                    #TN " after wait_until_all element %zu is 0x%llx", i,                         \
                    (unsigned long long)arr[i]);                                                  \
        }                                                                                         \
        t_check(shmem_##TN##_test_all(arr, NV, status, SHMEM_CMP_EQ, X) == 1,                     \
                #TN " test_all after the update is not 1");                                       \
        t_check(shmem_##TN##_test_all(arr, NV, NULL, SHMEM_CMP_EQ, X) == 0,                       \
                #TN " test_all without status counts the masked elements: not 0");                \
        shmem_barrier_all();                                                                      \
                                                                                                  \
        /* ---- 2b: wait_until_any: masked elements satisfy, but only element 5 counts */         \
        for (size_t i = 0; i < NV; i++) {                                                         \
            arr[i] = masked(i) ? X : Y;                                                           \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        size_t a = shmem_##TN##_test_any(arr, NV, status, SHMEM_CMP_EQ, X);                       \
        t_check(a == SIZE_MAX, #TN " test_any before the update returned %zu (masked?)", a);      \
        a = shmem_##TN##_test_any(arr, NV, NULL, SHMEM_CMP_EQ, X);                                \
        t_check(a < NV && masked(a), #TN " test_any without status returned %zu", a);             \
        shmem_barrier_all();                                                                      \
        store_##TN(&arr[5], X, right, 1);                                                         \
        shmem_quiet();                                                                            \
        a = shmem_##TN##_wait_until_any(arr, NV, status, SHMEM_CMP_EQ, X);                        \
        t_check(a == 5, #TN " wait_until_any returned %zu, want 5", a);                           \
        a = shmem_##TN##_test_any(arr, NV, status, SHMEM_CMP_EQ, X);                              \
        t_check(a == 5, #TN " test_any after the update returned %zu, want 5", a);                \
        shmem_barrier_all();                                                                      \
                                                                                                  \
        /* ---- 2c: wait_until_some: elements 0, 3, 6 become X; masked ones are X already */      \
        for (size_t i = 0; i < NV; i++) {                                                         \
            arr[i] = masked(i) ? X : Y;                                                           \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        size_t n = shmem_##TN##_test_some(arr, NV, idx, status, SHMEM_CMP_EQ, X);                 \
        t_check(n == 0, #TN " test_some before the update returned %zu", n);                      \
        shmem_barrier_all();                                                                      \
        store_##TN(&arr[0], X, right, 0);                                                         \
        store_##TN(&arr[3], X, right, 1);                                                         \
        store_##TN(&arr[6], X, right, 0);                                                         \
        shmem_quiet();                                                                            \
        n = shmem_##TN##_wait_until_some(arr, NV, idx, status, SHMEM_CMP_EQ, X);                  \
        check_some(#TN " wait_until_some", idx, n, 0x49, 0);                                      \
        shmem_barrier_all(); /* the writer's stores are complete */                               \
        n = shmem_##TN##_test_some(arr, NV, idx, status, SHMEM_CMP_EQ, X);                        \
        check_some(#TN " test_some after the update", idx, n, 0x49, 1);                           \
        shmem_barrier_all();                                                                      \
                                                                                                  \
        /* ---- 2d: vector forms. vals[i] = base + 3i; all_vector with GE */                      \
        T cv[NV];                                                                                 \
        for (size_t i = 0; i < NV; i++) {                                                         \
            cv[i] = (T)(((IS_SIGNED) ? (unsigned long long)-40LL : TOP(40)) + 3 * i);             \
            arr[i] = (T)(cv[i] - 1);                                                              \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        t_check(shmem_##TN##_test_all_vector(arr, NV, status, SHMEM_CMP_GE, cv) == 0,             \
                #TN " test_all_vector GE before the update is not 0");                            \
        t_check(shmem_##TN##_test_all_vector(arr, NV, all_masked, SHMEM_CMP_GE, cv) == 1,         \
                #TN " test_all_vector with every element masked is not 1");                       \
        t_check(shmem_##TN##_test_any_vector(arr, NV, status, SHMEM_CMP_GE, cv) == SIZE_MAX,      \
                #TN " test_any_vector GE before the update is not SIZE_MAX");                     \
        t_check(shmem_##TN##_test_some_vector(arr, NV, idx, none, SHMEM_CMP_GE, cv) == 0,         \
                #TN " test_some_vector GE before the update is not 0");                           \
        shmem_barrier_all();                                                                      \
        for (size_t i = 0; i < NV; i++) {                                                         \
            if (!masked(i)) {                                                                     \
                store_##TN(&arr[i], (T)(cv[i] + (i % 2)), right, (int)(i % 2));                   \
            }                                                                                     \
        }                                                                                         \
        shmem_quiet();                                                                            \
        shmem_##TN##_wait_until_all_vector(arr, NV, status, SHMEM_CMP_GE, cv);                    \
        for (size_t i = 0; i < NV; i++) {                                                         \
            T want = masked(i) ? (T)(cv[i] - 1) : (T)(cv[i] + (i % 2));                           \
            t_check(arr[i] == want, #TN " after wait_until_all_vector element %zu is 0x%llx", i, \
                    (unsigned long long)arr[i]);                                                  \
        }                                                                                         \
        t_check(shmem_##TN##_test_all_vector(arr, NV, status, SHMEM_CMP_GE, cv) == 1,             \
                #TN " test_all_vector GE after the update is not 1");                             \
        shmem_barrier_all();                                                                      \
                                                                                                  \
        /* ---- 2e: any_vector with LT; masked elements satisfy LT already */                     \
        for (size_t i = 0; i < NV; i++) {                                                         \
            arr[i] = masked(i) ? (T)(cv[i] - 1) : cv[i];                                          \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        a = shmem_##TN##_test_any_vector(arr, NV, status, SHMEM_CMP_LT, cv);                      \
        t_check(a == SIZE_MAX, #TN " test_any_vector LT before the update returned %zu", a);      \
        shmem_barrier_all();                                                                      \
        store_##TN(&arr[2], (T)(cv[2] - 5), right, 0);                                            \
        shmem_quiet();                                                                            \
        a = shmem_##TN##_wait_until_any_vector(arr, NV, status, SHMEM_CMP_LT, cv);                \
        t_check(a == 2, #TN " wait_until_any_vector LT returned %zu, want 2", a);                 \
        a = shmem_##TN##_test_any_vector(arr, NV, status, SHMEM_CMP_LT, cv);                      \
        t_check(a == 2, #TN " test_any_vector LT after the update returned %zu, want 2", a);      \
        shmem_barrier_all();                                                                      \
                                                                                                  \
        /* ---- 2f: some_vector with NE; masked elements differ already */                        \
        for (size_t i = 0; i < NV; i++) {                                                         \
            arr[i] = masked(i) ? (T)(cv[i] + 1) : cv[i];                                          \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        n = shmem_##TN##_test_some_vector(arr, NV, idx, status, SHMEM_CMP_NE, cv);                \
        t_check(n == 0, #TN " test_some_vector NE before the update returned %zu", n);            \
        t_check(shmem_##TN##_test_all_vector(arr, NV, status, SHMEM_CMP_EQ, cv) == 1,             \
                #TN " test_all_vector EQ on the unmasked elements is not 1");                     \
        shmem_barrier_all();                                                                      \
        store_##TN(&arr[3], (T)(cv[3] + 7), right, 1);                                            \
        store_##TN(&arr[5], (T)(cv[5] + 7), right, 0);                                            \
        shmem_quiet();                                                                            \
        n = shmem_##TN##_wait_until_some_vector(arr, NV, idx, status, SHMEM_CMP_NE, cv);          \
        check_some(#TN " wait_until_some_vector", idx, n, 0x28, 0);                               \
        shmem_barrier_all();                                                                      \
        n = shmem_##TN##_test_some_vector(arr, NV, idx, status, SHMEM_CMP_NE, cv);                \
        check_some(#TN " test_some_vector after the update", idx, n, 0x28, 1);                    \
        n = shmem_##TN##_test_some_vector(arr, NV, idx, all_masked, SHMEM_CMP_NE, cv);            \
        t_check(n == 0, #TN " test_some_vector with every element masked returned %zu", n);       \
        shmem_barrier_all();                                                                      \
        shmem_free(iv);                                                                           \
    }

/* The indices returned by a _some call: n of them, distinct, all in the bit set `want`; with
 * `exact` exactly the set. */
static void check_some(const char *what, const size_t *idx, size_t n, unsigned want, int exact)
{
    unsigned got = 0;
    int ok = t_check(n >= 1 && n <= NV, "%s returned %zu indices", what, n);
    for (size_t j = 0; ok && j < n; j++) {
        ok = t_check(idx[j] < NV && (want >> idx[j] & 1) && !(got >> idx[j] & 1),
                     "%s: index %zu (#%zu) is not expected or repeated (want set 0x%x)", what,
                     idx[j], j, want);
        got |= 1u << (idx[j] % NV);
    }
    if (ok && exact) {
        t_check(got == want, "%s: indices 0x%x, want 0x%x", what, got, want);
    }
}

WAIT_TESTS(short, short, 1, 0)
WAIT_TESTS(int, int, 1, 1)
WAIT_TESTS(long, long, 1, 1)
WAIT_TESTS(long long, longlong, 1, 1)
WAIT_TESTS(unsigned short, ushort, 0, 0)
WAIT_TESTS(unsigned int, uint, 0, 1)
WAIT_TESTS(unsigned long, ulong, 0, 1)
WAIT_TESTS(unsigned long long, ulonglong, 0, 1)
WAIT_TESTS(int32_t, int32, 1, 1)
WAIT_TESTS(int64_t, int64, 1, 1)
WAIT_TESTS(uint32_t, uint32, 0, 1)
WAIT_TESTS(uint64_t, uint64, 0, 1)
WAIT_TESTS(size_t, size, 0, 1)
WAIT_TESTS(ptrdiff_t, ptrdiff, 1, 1)

/* ------------------------------------------------------------------ 3: deprecated, generic */
static long dep_long[4];
static int dep_int;
static short dep_short;

static void deprecated_and_generic(void)
{
    dep_long[0] = 11;
    dep_long[1] = 11;
    dep_long[2] = -5;
    dep_int = -3;
    dep_short = 4;
    shmem_barrier_all();
    shmem_long_p(&dep_long[0], 12, right);
    shmem_long_p(&dep_long[1], -400, right);
    shmem_long_p(&dep_long[2], 5, right);
    shmem_int_p(&dep_int, 3, right);
    shmem_short_p(&dep_short, -4, right);
    shmem_quiet();
    shmem_wait(&dep_long[0], 11);
    t_check(dep_long[0] == 12, "shmem_wait returned with %ld, want 12", dep_long[0]);
    shmem_long_wait(&dep_long[1], 11);
    t_check(dep_long[1] == -400, "shmem_long_wait returned with %ld, want -400", dep_long[1]);
    (shmem_wait_until)(&dep_long[2], SHMEM_CMP_GT, 0); /* the deprecated untyped function */
    t_check(dep_long[2] == 5, "shmem_wait_until (untyped) returned with %ld, want 5",
            dep_long[2]);
    shmem_int_wait(&dep_int, -3);
    t_check(dep_int == 3, "shmem_int_wait returned with %d, want 3", dep_int);
    shmem_short_wait(&dep_short, 4);
    t_check(dep_short == -4, "shmem_short_wait returned with %d, want -4", dep_short);
    shmem_barrier_all();

    /* Generic _all/_any/_some and _vector forms on long and unsigned int. */
    long *lv = shmem_calloc(NV, sizeof(long));
    unsigned int *uv = shmem_calloc(NV, sizeof(unsigned int));
    if (!t_check(lv && uv, "generic: allocation failed")) {
        return;
    }
    int status[NV];
    size_t idx[NV];
    long lcv[NV];
    for (size_t i = 0; i < NV; i++) {
        status[i] = masked(i);
        lv[i] = -1;
        uv[i] = 0xFFFFFFF0u;
        lcv[i] = -100 - (long)i;
    }
    shmem_barrier_all();
    t_check(shmem_test_any(lv, NV, status, SHMEM_CMP_GE, 0L) == SIZE_MAX,
            "generic test_any GE 0 before the update");
    t_check(shmem_test_all(uv, NV, status, SHMEM_CMP_LT, 16u) == 0,
            "generic test_all LT 16 before the update");
    t_check(shmem_test_some_vector(lv, NV, idx, status, SHMEM_CMP_LE, lcv) == 0,
            "generic test_some_vector LE before the update");
    shmem_barrier_all();
    shmem_long_p(&lv[6], 0, right);
    for (size_t i = 0; i < NV; i++) {
        if (!masked(i)) {
            shmem_uint_p(&uv[i], (unsigned)i, right);
        }
    }
    shmem_quiet();
    size_t a = shmem_wait_until_any(lv, NV, status, SHMEM_CMP_GE, 0L);
    t_check(a == 6, "generic wait_until_any returned %zu, want 6", a);
    shmem_wait_until_all(uv, NV, status, SHMEM_CMP_LT, 16u);
    for (size_t i = 0; i < NV; i++) {
        t_check(uv[i] == (masked(i) ? 0xFFFFFFF0u : (unsigned)i),
                "generic wait_until_all: element %zu is 0x%x", i, uv[i]);
    }
    t_check(shmem_test(&lv[6], SHMEM_CMP_EQ, 0L) == 1, "generic test EQ after the update");
    shmem_barrier_all();
    shmem_long_p(&lv[2], -102 - 1, right); /* lcv[2] = -102: LE holds */
    shmem_quiet();
    size_t n = shmem_wait_until_some_vector(lv, NV, idx, status, SHMEM_CMP_LE, lcv);
    check_some("generic wait_until_some_vector", idx, n, 0x04, 1);
    shmem_wait_until_all_vector(lv, NV, every_masked, SHMEM_CMP_EQ, lcv); /* returns at once */
    a = shmem_wait_until_any_vector(lv, NV, status, SHMEM_CMP_LE, lcv);
    t_check(a == 2, "generic wait_until_any_vector returned %zu, want 2", a);
    n = shmem_wait_until_some(uv, NV, idx, status, SHMEM_CMP_EQ, 3u);
    check_some("generic wait_until_some", idx, n, 0x08, 1);
    shmem_barrier_all();
    shmem_free(uv);
    shmem_free(lv);
}

/* Every element satisfies (but a masked one): a series of test_any / wait_until_any calls, and
 * their _vector forms, must return every unmasked index in time (1.5: a series of calls returns
 * each satisfied index eventually), never the masked one; scanning from 0 always gave 0. */
static void any_fairness(void)
{
    enum { N = 8, MASKED = 3 };
    static long av[N];
    long want[N];
    int status[N] = {0};
    int seen[4][N] = {{0}};
    status[MASKED] = 1;
    for (int i = 0; i < N; i++) {
        av[i] = 5;
        want[i] = 5;
    }
    for (int r = 0; r < 8 * N; r++) {
        size_t got[4] = {
            shmem_long_test_any(av, N, status, SHMEM_CMP_EQ, 5),
            shmem_long_wait_until_any(av, N, status, SHMEM_CMP_EQ, 5),
            shmem_long_test_any_vector(av, N, status, SHMEM_CMP_EQ, want),
            shmem_long_wait_until_any_vector(av, N, status, SHMEM_CMP_EQ, want),
        };
        for (int f = 0; f < 4; f++) {
            t_check(got[f] < N, "any form %d returned %zu with every element satisfied", f, got[f]);
            if (got[f] < N) {
                seen[f][got[f]]++;
            }
        }
    }
    static const char *const names[4] = {"test_any", "wait_until_any", "test_any_vector",
                                         "wait_until_any_vector"};
    for (int f = 0; f < 4; f++) {
        for (int i = 0; i < N; i++) {
            if (i == MASKED) {
                t_check(seen[f][i] == 0, "%s returned the masked index %d", names[f], i);
            } else {
                t_check(seen[f][i] > 0, "%s never returned satisfied index %d in %d calls",
                        names[f], i, 8 * N);
            }
        }
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;

    wait_tests_short();
    wait_tests_int();
    wait_tests_long();
    wait_tests_longlong();
    wait_tests_ushort();
    wait_tests_uint();
    wait_tests_ulong();
    wait_tests_ulonglong();
    wait_tests_int32();
    wait_tests_int64();
    wait_tests_uint32();
    wait_tests_uint64();
    wait_tests_size();
    wait_tests_ptrdiff();
    deprecated_and_generic();
    any_fairness();

    shmem_finalize();
    return t_finish(NAME);
}
