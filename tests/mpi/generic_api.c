/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * generic_api: the C11 _Generic interfaces (shmem_put, shmem_get, shmem_p, shmem_g, shmem_iput,
 * shmem_iget, shmem_put_nbi, shmem_get_nbi), with and without a leading context, pick the
 * routine of the pointed-to type.
 *
 * A wrong selection moves the wrong number of bytes or converts values; each step moves
 * elements 1..NE-2 (strided: every second element) of NE-element arrays whose other elements
 * are poisoned and must survive, and compares every element by value.
 */
#include "../test.h"

#define NAME "generic_api"
#define NE 21
#define POISON 0x66000000ULL

static double fval(int pe, uint64_t i)
{
    return (double)(int32_t)(t_pattern(pe, i) >> 40) / 4.0;
}
#define TV(T, pe, i)                                                                             \
    _Generic((T)0, float: (T)fval((pe), (i)), double: (T)fval((pe), (i)),                       \
             default: (T)t_pattern((pe), (i)))

/* Which elements a step moves: contiguous 1..NE-2, or (strided) 1, 3, 5, ... below NE-1. */
static int moved(int i, int strided)
{
    return i >= 1 && i < NE - 1 && (!strided || i % 2 == 1);
}
#define NSTRIDED ((NE - 2 + 1) / 2)

#define PUT_STEP(T, opname, strided, CALL)                                                       \
    do {                                                                                         \
        salt += 1000;                                                                            \
        for (int i = 0; i < NE; i++) {                                                           \
            priv[i] = TV(T, me, salt + i);                                                       \
            dst[i] = TV(T, me, POISON + salt + i);                                               \
        }                                                                                        \
        shmem_barrier_all();                                                                     \
        CALL;                                                                                    \
        shmem_barrier_all();                                                                     \
        for (int i = 0; i < NE; i++) {                                                           \
            T want = moved(i, strided) ? TV(T, left, salt + i) : TV(T, me, POISON + salt + i);   \
            t_check(dst[i] == want, "%s %s: element %d = %g, want %g", #T, opname, i,            \
                    (double)dst[i], (double)want);                                               \
        }                                                                                        \
    } while (0)

#define GET_STEP(T, opname, strided, CALL)                                                       \
    do {                                                                                         \
        salt += 1000;                                                                            \
        for (int i = 0; i < NE; i++) {                                                           \
            sym[i] = TV(T, me, salt + i);                                                        \
            priv[i] = TV(T, me, POISON + salt + i);                                              \
        }                                                                                        \
        shmem_barrier_all();                                                                     \
        CALL;                                                                                    \
        for (int i = 0; i < NE; i++) {                                                           \
            T want = moved(i, strided) ? TV(T, right, salt + i) : TV(T, me, POISON + salt + i);  \
            t_check(priv[i] == want, "%s %s: element %d = %g, want %g", #T, opname, i,           \
                    (double)priv[i], (double)want);                                              \
        }                                                                                        \
        shmem_barrier_all();                                                                     \
    } while (0)

#define GENERIC_TEST(T, N)                                                                       \
    static void test_##N(void *dbuf, void *sbuf, int me, int right, int left, uint64_t salt)    \
    {                                                                                            \
        T *dst = dbuf, *sym = sbuf;                                                              \
        T priv[NE];                                                                              \
        shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;                                                     \
        PUT_STEP(T, "shmem_put", 0, shmem_put(dst + 1, priv + 1, NE - 2, right));                \
        PUT_STEP(T, "shmem_put(ctx)", 0, shmem_put(ctx, dst + 1, priv + 1, NE - 2, right));      \
        PUT_STEP(T, "shmem_put_nbi", 0, shmem_put_nbi(dst + 1, priv + 1, NE - 2, right);         \
                 shmem_quiet());                                                                 \
        PUT_STEP(T, "shmem_put_nbi(ctx)", 0,                                                     \
                 shmem_put_nbi(ctx, dst + 1, priv + 1, NE - 2, right); shmem_ctx_quiet(ctx));    \
        PUT_STEP(T, "shmem_p", 0, for (int k = 1; k < NE - 1; k++) {                             \
            shmem_p(&dst[k], priv[k], right);                                                    \
        });                                                                                      \
        PUT_STEP(T, "shmem_p(ctx)", 0, for (int k = 1; k < NE - 1; k++) {                        \
            shmem_p(ctx, &dst[k], priv[k], right);                                               \
        });                                                                                      \
        PUT_STEP(T, "shmem_iput", 1, shmem_iput(dst + 1, priv + 1, 2, 2, NSTRIDED, right));      \
        PUT_STEP(T, "shmem_iput(ctx)", 1,                                                        \
                 shmem_iput(ctx, dst + 1, priv + 1, 2, 2, NSTRIDED, right));                     \
        GET_STEP(T, "shmem_get", 0, shmem_get(priv + 1, sym + 1, NE - 2, right));                \
        GET_STEP(T, "shmem_get(ctx)", 0, shmem_get(ctx, priv + 1, sym + 1, NE - 2, right));      \
        GET_STEP(T, "shmem_get_nbi", 0, shmem_get_nbi(priv + 1, sym + 1, NE - 2, right);         \
                 shmem_quiet());                                                                 \
        GET_STEP(T, "shmem_get_nbi(ctx)", 0,                                                     \
                 shmem_get_nbi(ctx, priv + 1, sym + 1, NE - 2, right); shmem_ctx_quiet(ctx));    \
        GET_STEP(T, "shmem_g", 0, for (int k = 1; k < NE - 1; k++) {                             \
            priv[k] = shmem_g(&sym[k], right);                                                   \
        });                                                                                      \
        GET_STEP(T, "shmem_g(ctx)", 0, for (int k = 1; k < NE - 1; k++) {                        \
            priv[k] = shmem_g(ctx, &sym[k], right);                                              \
        });                                                                                      \
        GET_STEP(T, "shmem_g(const)", 0, for (int k = 1; k < NE - 1; k++) {                      \
            const T *cs = &sym[k];                                                               \
            priv[k] = shmem_g(cs, right);                                                        \
        });                                                                                      \
        GET_STEP(T, "shmem_iget", 1, shmem_iget(priv + 1, sym + 1, 2, 2, NSTRIDED, right));      \
        GET_STEP(T, "shmem_iget(ctx)", 1,                                                        \
                 shmem_iget(ctx, priv + 1, sym + 1, 2, 2, NSTRIDED, right));                     \
    }

#define TYPES(X)                                                                                 \
    X(int, int) X(long, long) X(double, double) X(char, char) X(unsigned char, uchar)            \
    X(float, float)
TYPES(GENERIC_TEST)

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    void *dbuf = shmem_align(16, NE * 16);
    void *sbuf = shmem_align(16, NE * 16);
    if (t_check(dbuf != NULL && sbuf != NULL, "shmem_align failed")) {
        uint64_t salt = 0;
#define RUN(T, N) test_##N(dbuf, sbuf, me, right, left, salt += 100000);
        TYPES(RUN)
#undef RUN
    }
    shmem_free(sbuf);
    shmem_free(dbuf);
    shmem_finalize();
    return t_finish(NAME);
}
