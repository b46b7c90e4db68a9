/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_scan: the OpenSHMEM 1.6 prefix sums shmem_<T>_sum_inscan and shmem_<T>_sum_exscan, for
 * every type of the sum reduction's table (written here from the spec, so a missing routine
 * fails to link), and the generics shmem_sum_inscan/shmem_sum_exscan.
 *
 * On team PE p, element i of dest must be the sum of element i of source over team PEs 0..p
 * (inscan) or 0..p-1 (exscan, 0 on team PE 0); the reference is computed here from the team's
 * definition (coll_test.h). Values are small integers (|x| <= 15, complex parts too), exact in
 * every type. Teams: world, shared, tail (odd size with 4 PEs), evens (stride 2). Sizes 0 (NULL
 * buffers), 1, 7 (in place), 1000 and 3001 (in place or not; 3001 elements cross the library's
 * chunking for every type but char); on the world also 20000. Calls run back to back without
 * barriers, alternating two dest buffers, each result checked right after its call, nothing
 * past nelems written; scans and reductions also run interleaved on the same team.
 */
#include <complex.h>

#include "../coll_test.h"

#define NAME "coll_scan"
#define LARGE 20000
#define ESZ 16 /* the largest element: long double, double _Complex */
#define MARGIN 64

static int me;
static uint8_t *bsrc, *bdst[2]; /* symmetric */
static int nextbuf;

/* X(CTYPE, NAME, KIND): the types of SUM in the spec's reduction table. KIND: INT integer,
 * CPX complex (floating types take the integer values too). */
#define SUM_TYPES(X)                                                                               \
    X(char, char, INT) X(signed char, schar, INT) X(short, short, INT) X(int, int, INT)            \
    X(long, long, INT) X(long long, longlong, INT) X(ptrdiff_t, ptrdiff, INT)                      \
    X(unsigned char, uchar, INT) X(unsigned short, ushort, INT) X(unsigned int, uint, INT)         \
    X(unsigned long, ulong, INT) X(unsigned long long, ulonglong, INT) X(int8_t, int8, INT)        \
    X(int16_t, int16, INT) X(int32_t, int32, INT) X(int64_t, int64, INT)                           \
    X(uint8_t, uint8, INT) X(uint16_t, uint16, INT) X(uint32_t, uint32, INT)                       \
    X(uint64_t, uint64, INT) X(size_t, size, INT) X(float, float, INT) X(double, double, INT)      \
    X(long double, longdouble, INT) X(double _Complex, complexd, CPX)                              \
    X(float _Complex, complexf, CPX)

/* Element i of world PE pe in a case: 0..15 (unsigned-safe), complex with an imaginary part. */
static uint64_t vhash(int pe, uint64_t salt, size_t i)
{
    return t_pattern(pe, salt ^ ((uint64_t)i << 1));
}
#define GEN_INT(T, h) ((T)((h) % 16))
#define GEN_CPX(T, h) ((T)((h) % 16) + (T)((int)(((h) >> 20) % 31) - 15) * (T)I)
#define SHOW_INT(buf, v) snprintf(buf, sizeof(buf), "%Lg", (long double)(v))
#define SHOW_CPX(buf, v) snprintf(buf, sizeof(buf), "%g%+gi", (double)creal(v), (double)cimag(v))

/* Check d[0..n) against the prefix over team PEs 0..upto-1 (inscan: upto = me + 1). */
#define CHECK_SCAN(T, K, d, n, t, upto, salt, what, ...)                                           \
    do {                                                                                           \
        size_t bad_ = 0, first_ = 0;                                                               \
        T got_ = 0, want1_ = 0;                                                                    \
        for (size_t i_ = 0; i_ < (n); i_++) {                                                      \
            T w_ = 0;                                                                              \
            for (int p_ = 0; p_ < (upto); p_++) {                                                  \
                w_ = (T)(w_ + GEN_##K(T, vhash((t)->world[p_], salt, i_)));                        \
            }                                                                                      \
            if ((d)[i_] != w_ && bad_++ == 0) {                                                    \
                first_ = i_;                                                                       \
                got_ = (d)[i_];                                                                    \
                want1_ = w_;                                                                       \
            }                                                                                      \
        }                                                                                          \
        CT_REPORT(SHOW_##K, bad_, n, first_, got_, want1_, what, __VA_ARGS__);                     \
        ct_verify_fill((d) + (n), MARGIN, CT_SENTINEL, what, __VA_ARGS__);                         \
    } while (0)

/* One call of shmem_<N>_sum_<KIND> (generic: through shmem_sum_<KIND>) and its check. */
#define DEF_RUN(T, N, K)                                                                           \
    static void run_##N(struct ct_team *t, size_t n, int inplace, int ex, int generic,             \
                        uint64_t salt)                                                             \
    {                                                                                              \
        T *d = (T *)bdst[nextbuf++ % 2];                                                           \
        T *s = inplace ? d : (T *)bsrc;                                                            \
        for (size_t i = 0; i < n; i++) {                                                           \
            s[i] = GEN_##K(T, vhash(me, salt, i));                                                 \
        }                                                                                          \
        int rc;                                                                                    \
        if (n == 0) {                                                                              \
            rc = ex ? shmem_##N##_sum_exscan(t->team, NULL, NULL, 0)                               \
                    : shmem_##N##_sum_inscan(t->team, NULL, NULL, 0);                              \
        } else if (generic) {                                                                      \
            rc = ex ? shmem_sum_exscan(t->team, d, s, n) : shmem_sum_inscan(t->team, d, s, n);     \
        } else {                                                                                   \
            rc = ex ? shmem_##N##_sum_exscan(t->team, d, s, n)                                     \
                    : shmem_##N##_sum_inscan(t->team, d, s, n);                                    \
        }                                                                                          \
        t_check(rc == 0, "shmem_%s_sum_%s(%s, %zu) returned %d", #N, ex ? "exscan" : "inscan",    \
                t->name, n, rc);                                                                   \
        ct_slow_reader(t, nextbuf);                                                                \
        CHECK_SCAN(T, K, d, n, t, t->me + !ex, salt, "shmem_%s_sum_%s(%s, %zu%s%s) on PE %d", #N,  \
                   ex ? "exscan" : "inscan", t->name, n, inplace ? ", in place" : "",              \
                   generic ? ", generic" : "", me);                                                \
        memset(d, CT_SENTINEL, n * sizeof(T) + MARGIN);                                            \
    }
SUM_TYPES(DEF_RUN)

struct scase {
    const char *name;
    void (*run)(struct ct_team *t, size_t n, int inplace, int ex, int generic, uint64_t salt);
};
#define ENT(T, N, K) {#N, run_##N},
static const struct scase cases[] = {SUM_TYPES(ENT)};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void team_scans(int ti, int large)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    nextbuf = 0;
    for (size_t c = 0; c < NCASES; c++) {
        for (int ex = 0; ex < 2; ex++) {
            uint64_t salt = ((uint64_t)ti << 40) ^ ((uint64_t)c << 24) ^ ((uint64_t)ex << 20);
            cases[c].run(t, 0, 0, ex, 0, salt ^ 1);
            cases[c].run(t, 1, 0, ex, 1, salt ^ 2);
            cases[c].run(t, 7, 1, ex, 0, salt ^ 3);
            cases[c].run(t, 1000, 0, ex, 1, salt ^ 4);
            cases[c].run(t, 3001, (int)c % 2, ex, 0, salt ^ 5);
            if (large) {
                cases[c].run(t, LARGE, (int)c % 3 == 0, ex, 0, salt ^ 6);
            }
        }
    }
}

/* Scans and sum reductions on the same team, back to back: they share its scratch. */
static void mixed(int ti)
{
    struct ct_team *t = &ct_teams[ti];
    static long red[2][9], src[9];
    if (t->me < 0) {
        return;
    }
    for (int it = 0; it < 50; it++) {
        cases[4].run(t, 9, it % 2, it % 3 == 0, it % 2, (uint64_t)it << 8); /* long */
        long *d = red[it % 2];
        for (int k = 0; k < 9; k++) {
            src[k] = (long)it * 1000 + me * 10 + k;
        }
        int rc = shmem_long_sum_reduce(t->team, d, src, 9);
        t_check(rc == 0, "shmem_long_sum_reduce(%s) returned %d", t->name, rc);
        for (int k = 0; k < 9; k++) {
            long want = 0;
            for (int p = 0; p < t->size; p++) {
                want += (long)it * 1000 + t->world[p] * 10 + k;
            }
            if (!t_check(d[k] == want, "sum_reduce(%s) between scans, round %d: [%d] = %ld, "
                         "want %ld", t->name, it, k, d[k], want)) {
                break;
            }
        }
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    ct_teams_init();
    size_t room = (size_t)LARGE * ESZ + MARGIN;
    bsrc = ct_alloc(room);
    bdst[0] = ct_alloc(room);
    bdst[1] = ct_alloc(room);
    for (int ti = 0; ti < ct_nteams; ti++) {
        team_scans(ti, ti == 0);
        shmem_barrier_all();
    }
    for (int ti = 0; ti < ct_nteams; ti++) {
        mixed(ti);
    }
    shmem_barrier_all();
    ct_teams_fini();
    shmem_free(bdst[1]);
    shmem_free(bdst[0]);
    shmem_free(bsrc);
    shmem_finalize();
    return t_finish(NAME);
}
