/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_reduce: every reduction of OpenSHMEM 1.5 (and/or/xor, max/min, sum/prod, each over the
 * types of its table in the spec) and the deprecated active-set shmem_<T>_<op>_to_all (the
 * types of OpenSHMEM 1.4) with pWrk and pSync.
 *
 * The type lists below are written from the spec's tables, not taken from the library's
 * header, so a missing routine fails to link. Data comes from a hash of (PE, op, index, case);
 * the reference is computed locally over the team's PEs. Values keep every result exact: full
 * range for the bitwise ops and max/min (integers), integers for floating types, small
 * values (|x| <= 15, or <= 1000 for floating types) for sum, and 1 with a few 2 and -1 (and i
 * for complex) for prod, so no result overflows with up to 8 PEs.
 *
 * Teams: world, shared, tail (odd size with 4 PEs), evens (stride 2). Sizes 0, 1, 7 (in
 * place), 1000 (both) and 4099 (odd, both); on the world also 100000 elements, to cross any
 * internal chunking. Calls run back to back without barriers, alternating two dest buffers,
 * each result checked right after its call; nothing past nreduce may be written; reductions on
 * the world, tail and evens teams also run interleaved without barriers. The active-set
 * forms run on (all), (evens), (1..n-1) with sizes 1, 7 (in place) and 1000; pSync must be
 * unchanged after.
 */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <complex.h>

#include "../coll_test.h"

#define NAME "coll_reduce"
#define LARGE 100000
#define ESZ 16 /* the largest element: long double, double _Complex */
#define MARGIN 64

static int me, npes;
static uint8_t *bsrc, *bdst[2], *bwrk; /* symmetric */
static int nextbuf;                    /* which dest buffer the next call uses */
static long psync[SHMEM_REDUCE_SYNC_SIZE];

/* ------------------------------------------------------------------ type lists (the spec's) */
/* X(CTYPE, NAME, KIND). KIND: U unsigned, S signed, C plain char, F floating, Z complex. */
#define RBIT_TYPES(X)                                                                              \
    X(unsigned char, uchar, U) X(unsigned short, ushort, U) X(unsigned int, uint, U)               \
    X(unsigned long, ulong, U) X(unsigned long long, ulonglong, U) X(int8_t, int8, S)              \
    X(int16_t, int16, S) X(int32_t, int32, S) X(int64_t, int64, S) X(uint8_t, uint8, U)            \
    X(uint16_t, uint16, U) X(uint32_t, uint32, U) X(uint64_t, uint64, U) X(size_t, size, U)
#define RMINMAX_TYPES(X)                                                                           \
    X(char, char, C) X(signed char, schar, S) X(short, short, S) X(int, int, S) X(long, long, S)   \
    X(long long, longlong, S) X(ptrdiff_t, ptrdiff, S) RBIT_TYPES(X) X(float, float, F)            \
    X(double, double, F) X(long double, longdouble, F)
#define RARITH_TYPES(X)                                                                            \
    RMINMAX_TYPES(X) X(double _Complex, complexd, Z) X(float _Complex, complexf, Z)

/* OpenSHMEM 1.4's active-set reductions. */
#define OLD_INT_TYPES(X)                                                                         \
    X(short, short, S) X(int, int, S) X(long, long, S) X(long long, longlong, S)
#define OLD_FLT_TYPES(X) X(float, float, F) X(double, double, F) X(long double, longdouble, F)
#define OLD_CPLX_TYPES(X) X(double _Complex, complexd, Z) X(float _Complex, complexf, Z)

/* ------------------------------------------------------------------ values and operators */
#define GEN_BIT_U(T, h) ((T)(h))
#define GEN_BIT_S(T, h) ((T)(h))
#define GEN_MM_U(T, h) ((T)(h))
#define GEN_MM_S(T, h) ((T)(h))
#define GEN_MM_C(T, h) ((T)(h))
#define GEN_MM_F(T, h) ((T)((long long)((h) % 2000001) - 1000000))
#define GEN_SUM_U(T, h) ((T)((h) % 31))
#define GEN_SUM_C(T, h) ((T)((h) % 31))
#define GEN_SUM_S(T, h) ((T)((int)((h) % 31) - 15))
#define GEN_SUM_F(T, h) ((T)((int)((h) % 2001) - 1000))
#define GEN_SUM_Z(T, h) ((T)((int)((h) % 201) - 100) + (T)((int)(((h) >> 20) % 201) - 100) * (T)I)
#define GEN_PROD_U(T, h) ((T)((h) % 8 == 0 ? 2 : 1))
#define GEN_PROD_C(T, h) ((T)((h) % 8 == 0 ? 2 : 1))
#define GEN_PROD_S(T, h) ((T)((h) % 8 == 0 ? 2 : (h) % 8 == 1 ? -1 : 1))
#define GEN_PROD_F(T, h) GEN_PROD_S(T, h)
#define GEN_PROD_Z(T, h) ((h) % 8 == 0 ? (T)2 : (h) % 8 == 1 ? (T)I : (h) % 8 == 2 ? (T)-1 : (T)1)

#define COMB_and(a, b) ((a) & (b))
#define COMB_or(a, b) ((a) | (b))
#define COMB_xor(a, b) ((a) ^ (b))
#define COMB_max(a, b) ((a) > (b) ? (a) : (b))
#define COMB_min(a, b) ((a) < (b) ? (a) : (b))
#define COMB_sum(a, b) ((a) + (b))
#define COMB_prod(a, b) ((a) * (b))

/* The hash behind element i of world PE pe for an op (named by its string's first two
 * letters, so every op gets its own data) in a case. */
static uint64_t vhash(int pe, const char *op, uint64_t salt, size_t i)
{
    return t_pattern(pe * 1024 + op[0] * 7 + op[1], salt ^ ((uint64_t)i << 1));
}

/* Printing a value of each kind. */
#define SHOW_U(buf, v) snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(v))
#define SHOW_S(buf, v) snprintf(buf, sizeof(buf), "%lld", (long long)(v))
#define SHOW_C(buf, v) snprintf(buf, sizeof(buf), "%d", (int)(v))
#define SHOW_F(buf, v) snprintf(buf, sizeof(buf), "%.21Lg", (long double)(v))
#define SHOW_Z(buf, v) snprintf(buf, sizeof(buf), "%g%+gi", (double)creal(v), (double)cimag(v))

/* Compare d[0..n) with the reference over the PEs world[0..size); one t_check for the first
 * mismatch (with the count), then the space past n must hold the sentinel. */
#define CHECK_RESULT(T, K, OP, CLS, d, n, world, size, salt, what, ...)                            \
    do {                                                                                           \
        size_t bad_ = 0, first_ = 0;                                                               \
        T got_ = 0, want1_ = 0;                                                                    \
        for (size_t i_ = 0; i_ < (n); i_++) {                                                      \
            T w_ = GEN_##CLS##_##K(T, vhash((world)[0], #OP, salt, i_));                           \
            for (int p_ = 1; p_ < (size); p_++) {                                                  \
                w_ = (T)COMB_##OP(w_, GEN_##CLS##_##K(T, vhash((world)[p_], #OP, salt, i_)));      \
            }                                                                                      \
            if ((d)[i_] != w_) {                                                                   \
                if (bad_++ == 0) {                                                                 \
                    first_ = i_;                                                                   \
                    got_ = (d)[i_];                                                                \
                    want1_ = w_;                                                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        CT_REPORT(SHOW_##K, bad_, n, first_, got_, want1_, what, __VA_ARGS__);                     \
        ct_verify_fill((d) + (n), MARGIN, CT_SENTINEL, what, __VA_ARGS__);                         \
    } while (0)

/* ------------------------------------------------------------------ team reductions */
#define DEF_RUN(T, N, K, OP, CLS)                                                                  \
    static void run_##N##_##OP(struct ct_team *t, size_t n, int inplace, uint64_t salt)            \
    {                                                                                              \
        T *d = (T *)bdst[nextbuf++ % 2];                                                           \
        T *s = inplace ? d : (T *)bsrc;                                                            \
        for (size_t i = 0; i < n; i++) {                                                           \
            s[i] = GEN_##CLS##_##K(T, vhash(me, #OP, salt, i));                                    \
        }                                                                                          \
        int rc = shmem_##N##_##OP##_reduce(t->team, d, s, n);                                      \
        t_check(rc == 0, "shmem_%s_%s_reduce(%s, %zu) returned %d", #N, #OP, t->name, n, rc);      \
        ct_slow_reader(t, nextbuf);                                                                \
        CHECK_RESULT(T, K, OP, CLS, d, n, t->world, t->size, salt,                                 \
                     "shmem_%s_%s_reduce(%s, %zu%s) on PE %d", #N, #OP, t->name, n,                \
                     inplace ? ", in place" : "", me);                                             \
        memset(d, CT_SENTINEL, n * sizeof(T) + MARGIN);                                            \
    }
#define DEF_BIT(T, N, K)                                                                         \
    DEF_RUN(T, N, K, and, BIT) DEF_RUN(T, N, K, or, BIT) DEF_RUN(T, N, K, xor, BIT)
#define DEF_MM(T, N, K) DEF_RUN(T, N, K, max, MM) DEF_RUN(T, N, K, min, MM)
#define DEF_AR(T, N, K) DEF_RUN(T, N, K, sum, SUM) DEF_RUN(T, N, K, prod, PROD)
RBIT_TYPES(DEF_BIT)
RMINMAX_TYPES(DEF_MM)
RARITH_TYPES(DEF_AR)

struct rcase {
    const char *name;
    void (*run)(struct ct_team *t, size_t n, int inplace, uint64_t salt);
};
#define ENT(N, OP) {#N "_" #OP, run_##N##_##OP},
#define ENT_BIT(T, N, K) ENT(N, and) ENT(N, or) ENT(N, xor)
#define ENT_MM(T, N, K) ENT(N, max) ENT(N, min)
#define ENT_AR(T, N, K) ENT(N, sum) ENT(N, prod)
static const struct rcase cases[] = {RBIT_TYPES(ENT_BIT) RMINMAX_TYPES(ENT_MM)
                                         RARITH_TYPES(ENT_AR)};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void team_reductions(int ti, int large)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    nextbuf = 0;
    for (size_t c = 0; c < NCASES; c++) {
        uint64_t salt = ((uint64_t)ti << 40) ^ ((uint64_t)c << 24);
        cases[c].run(t, 0, 0, salt ^ 1);
        cases[c].run(t, 1, 0, salt ^ 2);
        cases[c].run(t, 7, 1, salt ^ 3);
        cases[c].run(t, 1000, 0, salt ^ 4);
        cases[c].run(t, 1000, 1, salt ^ 5);
        cases[c].run(t, 4099, c % 2, salt ^ 6);
        if (large) {
            cases[c].run(t, LARGE, c % 3 == 0, salt ^ 7);
        }
    }
}

/* Reductions on different teams interleaved with no barrier: each round every PE reduces on
 * each team it belongs to (world, tail, evens), each team with its own pair of dest buffers. */
#define INTER_N 9
static long ibuf[CT_MAX_TEAMS][2][INTER_N], isrc[INTER_N];

static void interleaved(void)
{
    for (int it = 0; it < 100; it++) {
        for (int ti = 0; ti < ct_nteams; ti++) {
            struct ct_team *t = &ct_teams[ti];
            if (t->me < 0 || ti == 1) {
                continue; /* shared is the world again */
            }
            long *d = ibuf[ti][it % 2];
            for (int k = 0; k < INTER_N; k++) {
                isrc[k] = (long)it * 100000 + ti * 1000 + me * 10 + k;
            }
            int rc = shmem_long_sum_reduce(t->team, d, isrc, INTER_N);
            ct_slow_reader(t, it);
            for (int k = 0; k < INTER_N; k++) {
                long want = 0;
                for (int i = 0; i < t->size; i++) {
                    want += (long)it * 100000 + ti * 1000 + t->world[i] * 10 + k;
                }
                if (!t_check(rc == 0 && d[k] == want,
                             "interleaved long_sum_reduce(%s) round %d: [%d] = %ld, want %ld "
                             "(rc %d)",
                             t->name, it, k, d[k], want, rc)) {
                    break;
                }
            }
        }
    }
    shmem_barrier_all();
}

/* The C11 generic names select the same routines. */
static void generic(void)
{
    struct ct_team *t = &ct_teams[0];
    int *si = (int *)bsrc, *di = (int *)bdst[0];
    for (int i = 0; i < 10; i++) {
        si[i] = me * 100 + i;
    }
    int rc = shmem_sum_reduce(SHMEM_TEAM_WORLD, di, si, 10);
    t_check(rc == 0, "generic shmem_sum_reduce(int) returned %d", rc);
    for (int i = 0; i < 10; i++) {
        int want = 0;
        for (int p = 0; p < t->size; p++) {
            want += p * 100 + i;
        }
        t_check(di[i] == want, "generic sum_reduce(int)[%d] = %d, want %d", i, di[i], want);
    }
    double *sd = (double *)bsrc, *dd = (double *)bdst[1];
    for (int i = 0; i < 10; i++) {
        sd[i] = (double)((me * 37 + i * 11) % 17);
    }
    rc = shmem_max_reduce(SHMEM_TEAM_WORLD, dd, sd, 10);
    t_check(rc == 0, "generic shmem_max_reduce(double) returned %d", rc);
    for (int i = 0; i < 10; i++) {
        double want = 0;
        for (int p = 0; p < t->size; p++) {
            double v = (double)((p * 37 + i * 11) % 17);
            want = v > want ? v : want;
        }
        t_check(dd[i] == want, "generic max_reduce(double)[%d] = %g, want %g", i, dd[i], want);
    }
    memset(bdst[0], CT_SENTINEL, 10 * sizeof(int) + MARGIN);
    memset(bdst[1], CT_SENTINEL, 10 * sizeof(double) + MARGIN);
    shmem_barrier_all();
}

/* ------------------------------------------------------------------ deprecated active sets */
#define DEF_TOALL(T, N, K, OP, CLS)                                                                \
    static void toall_##N##_##OP(const int *world, int start, int logs, int size, size_t n,        \
                                 int inplace, uint64_t salt)                                       \
    {                                                                                              \
        T *d = (T *)bdst[0];                                                                       \
        T *s = inplace ? d : (T *)bsrc;                                                            \
        for (size_t i = 0; i < n; i++) {                                                           \
            s[i] = GEN_##CLS##_##K(T, vhash(me, #OP, salt, i));                                    \
        }                                                                                          \
        shmem_##N##_##OP##_to_all(d, s, (int)n, start, logs, size, (T *)bwrk, psync);              \
        CHECK_RESULT(T, K, OP, CLS, d, n, world, size, salt,                                       \
                     "shmem_%s_%s_to_all(set %d,%d,%d, %zu%s) on PE %d", #N, #OP, start, logs,     \
                     size, n, inplace ? ", in place" : "", me);                                    \
        memset(d, CT_SENTINEL, n * sizeof(T) + MARGIN);                                            \
    }
#define DEF_OBIT(T, N, K)                                                                          \
    DEF_TOALL(T, N, K, and, BIT) DEF_TOALL(T, N, K, or, BIT) DEF_TOALL(T, N, K, xor, BIT)
#define DEF_OMM(T, N, K) DEF_TOALL(T, N, K, max, MM) DEF_TOALL(T, N, K, min, MM)
#define DEF_OAR(T, N, K) DEF_TOALL(T, N, K, sum, SUM) DEF_TOALL(T, N, K, prod, PROD)
OLD_INT_TYPES(DEF_OBIT)
OLD_INT_TYPES(DEF_OMM)
OLD_FLT_TYPES(DEF_OMM)
OLD_INT_TYPES(DEF_OAR)
OLD_FLT_TYPES(DEF_OAR)
OLD_CPLX_TYPES(DEF_OAR)

struct ocase {
    const char *name;
    void (*run)(const int *world, int start, int logs, int size, size_t n, int inplace,
                uint64_t salt);
};
#define OENT(N, OP) {#N "_" #OP "_to_all", toall_##N##_##OP},
#define OENT_BIT(T, N, K) OENT(N, and) OENT(N, or) OENT(N, xor)
#define OENT_MM(T, N, K) OENT(N, max) OENT(N, min)
#define OENT_AR(T, N, K) OENT(N, sum) OENT(N, prod)
/* The bitwise ones last: 1.5 dropped and/or/xor for the signed types, so a library that lost
 * them on the way fails there without hiding the rest. */
static const struct ocase ocases[] = {
    OLD_INT_TYPES(OENT_MM) OLD_FLT_TYPES(OENT_MM) OLD_INT_TYPES(OENT_AR) OLD_FLT_TYPES(OENT_AR)
        OLD_CPLX_TYPES(OENT_AR) OLD_INT_TYPES(OENT_BIT)};
#define NOCASES (sizeof(ocases) / sizeof(ocases[0]))

static void active_sets(void)
{
    for (int k = 0; k < SHMEM_REDUCE_SYNC_SIZE; k++) {
        psync[k] = SHMEM_SYNC_VALUE;
    }
    const int sets[3][3] = {{0, 0, npes}, {0, 1, (npes + 1) / 2}, {1, 0, npes - 1}};
    const size_t sizes[3] = {1, 7, 1000};
    int world[1024];
    for (int a = 0; a < 3; a++) {
        int start = sets[a][0], logs = sets[a][1], size = sets[a][2], stride = 1 << logs;
        if (size < 1 || size > 1024) {
            continue;
        }
        int member = 0;
        for (int k = 0; k < size; k++) {
            world[k] = start + k * stride;
            member |= world[k] == me;
        }
        for (size_t c = 0; c < NOCASES; c++) {
            for (int s = 0; s < 3; s++) {
                /* pSync may be reused only after a barrier; dest is ready after it too. */
                shmem_barrier_all();
                if (member) {
                    uint64_t salt = ((uint64_t)a << 40) ^ ((uint64_t)c << 24) ^ (uint64_t)s;
                    ocases[c].run(world, start, logs, size, sizes[s], s == 1, salt);
                }
            }
        }
    }
    shmem_barrier_all();
    ct_check_psync(psync, SHMEM_REDUCE_SYNC_SIZE);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    bsrc = ct_alloc((size_t)LARGE * ESZ + MARGIN);
    bdst[0] = ct_alloc((size_t)LARGE * ESZ + MARGIN);
    bdst[1] = ct_alloc((size_t)LARGE * ESZ + MARGIN);
    bwrk = ct_alloc((size_t)(LARGE / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE) * ESZ);
    ct_teams_init();
    shmem_barrier_all();

    /* The teams share the dest buffers: a barrier between teams. */
    for (int ti = 0; ti < ct_nteams; ti++) {
        team_reductions(ti, ti == 0);
        shmem_barrier_all();
    }
    interleaved();
    generic();
    active_sets();

    ct_teams_fini();
    shmem_barrier_all();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
