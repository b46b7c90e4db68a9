/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_typed: every typed RMA routine of the spec's standard RMA types moves whole elements of
 * its type, right-neighbour to left-neighbour.
 *
 * For each type, each of put, ctx_put (SHMEM_CTX_DEFAULT), put_nbi + quiet, ctx_put_nbi +
 * ctx_quiet, p, ctx_p, get, ctx_get, get_nbi + quiet, ctx_get_nbi + ctx_quiet, g and ctx_g
 * transfers elements 1..NE-2 of a NE-element array; elements 0 and NE-1 hold a poison value that
 * must survive, so a wrong element size or count shows up as a changed neighbour. Values come
 * from t_pattern and differ per PE and per step; floating types use values exactly
 * representable in the type (long double uses bits beyond double's precision, so a transfer
 * through a double would be caught). Values are compared as values (long double has padding).
 */
#include "../test.h"

#define NAME "rma_typed"
#define NE 37
#define POISON 0x55000000ULL

/* An exactly representable float/double value from the pattern. */
static double fval(int pe, uint64_t i)
{
    return (double)(int32_t)(t_pattern(pe, i) >> 40) / 8.0;
}
/* A long double value needing more than double's 53-bit mantissa (x86 80-bit: 64 bits). */
static long double ldval(int pe, uint64_t i)
{
    uint64_t h = t_pattern(pe, i);
    return (long double)(int16_t)h + (long double)((h >> 16) & 0xffff) * 0x1p-40L + 0x1p-46L;
}
#define TV(T, pe, i)                                                                             \
    _Generic((T)0, float: (T)fval((pe), (i)), double: (T)fval((pe), (i)),                       \
             long double: (T)ldval((pe), (i)), default: (T)t_pattern((pe), (i)))

/* Put-style step: my values to the right neighbour's `dst`, then check what the left one sent. */
#define PUT_STEP(T, N, opname, CALL)                                                             \
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
            T want = (i >= 1 && i < NE - 1) ? TV(T, left, salt + i)                              \
                                            : TV(T, me, POISON + salt + i);                      \
            t_check(dst[i] == want, "%s %s: element %d = %Lg, want %Lg", #T, opname, i,          \
                    (long double)dst[i], (long double)want);                                     \
        }                                                                                        \
    } while (0)

/* Get-style step: the right neighbour's symmetric `sym` into private `priv`. */
#define GET_STEP(T, N, opname, CALL)                                                             \
    do {                                                                                         \
        salt += 1000;                                                                            \
        for (int i = 0; i < NE; i++) {                                                           \
            sym[i] = TV(T, me, salt + i);                                                        \
            priv[i] = TV(T, me, POISON + salt + i);                                              \
        }                                                                                        \
        shmem_barrier_all();                                                                     \
        CALL;                                                                                    \
        for (int i = 0; i < NE; i++) {                                                           \
            T want = (i >= 1 && i < NE - 1) ? TV(T, right, salt + i)                             \
                                            : TV(T, me, POISON + salt + i);                      \
            t_check(priv[i] == want, "%s %s: element %d = %Lg, want %Lg", #T, opname, i,         \
                    (long double)priv[i], (long double)want);                                    \
        }                                                                                        \
        shmem_barrier_all(); /* peers are done reading sym before it is refilled */              \
    } while (0)

#define TYPED_TEST(T, N)                                                                         \
    static void test_##N(void *dbuf, void *sbuf, int me, int right, int left, uint64_t salt)    \
    {                                                                                            \
        T *dst = dbuf, *sym = sbuf;                                                              \
        T priv[NE];                                                                              \
        shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;                                                     \
        PUT_STEP(T, N, "put", shmem_##N##_put(dst + 1, priv + 1, NE - 2, right));                \
        PUT_STEP(T, N, "ctx_put", shmem_ctx_##N##_put(ctx, dst + 1, priv + 1, NE - 2, right));   \
        PUT_STEP(T, N, "put_nbi", shmem_##N##_put_nbi(dst + 1, priv + 1, NE - 2, right);         \
                 shmem_quiet());                                                                 \
        PUT_STEP(T, N, "ctx_put_nbi",                                                            \
                 shmem_ctx_##N##_put_nbi(ctx, dst + 1, priv + 1, NE - 2, right);                 \
                 shmem_ctx_quiet(ctx));                                                          \
        PUT_STEP(T, N, "p", for (int k = 1; k < NE - 1; k++) {                                   \
            shmem_##N##_p(&dst[k], priv[k], right);                                              \
        });                                                                                      \
        PUT_STEP(T, N, "ctx_p", for (int k = 1; k < NE - 1; k++) {                               \
            shmem_ctx_##N##_p(ctx, &dst[k], priv[k], right);                                     \
        });                                                                                      \
        GET_STEP(T, N, "get", shmem_##N##_get(priv + 1, sym + 1, NE - 2, right));                \
        GET_STEP(T, N, "ctx_get", shmem_ctx_##N##_get(ctx, priv + 1, sym + 1, NE - 2, right));   \
        GET_STEP(T, N, "get_nbi", shmem_##N##_get_nbi(priv + 1, sym + 1, NE - 2, right);         \
                 shmem_quiet());                                                                 \
        GET_STEP(T, N, "ctx_get_nbi",                                                            \
                 shmem_ctx_##N##_get_nbi(ctx, priv + 1, sym + 1, NE - 2, right);                 \
                 shmem_ctx_quiet(ctx));                                                          \
        GET_STEP(T, N, "g", for (int k = 1; k < NE - 1; k++) {                                   \
            priv[k] = shmem_##N##_g(&sym[k], right);                                             \
        });                                                                                      \
        GET_STEP(T, N, "ctx_g", for (int k = 1; k < NE - 1; k++) {                               \
            priv[k] = shmem_ctx_##N##_g(ctx, &sym[k], right);                                    \
        });                                                                                      \
    }

/* The spec's standard RMA types, listed here independently of the library's own table. */
#define TEST_TYPES(X)                                                                            \
    X(float, float) X(double, double) X(long double, longdouble) X(char, char)                   \
    X(signed char, schar) X(short, short) X(int, int) X(long, long) X(long long, longlong)       \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)                      \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16)   \
    X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16)                    \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

TEST_TYPES(TYPED_TEST)

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    /* One pair of symmetric buffers serves every type (16 bytes covers long double). */
    void *dbuf = shmem_align(16, NE * 16);
    void *sbuf = shmem_align(16, NE * 16);
    if (t_check(dbuf != NULL && sbuf != NULL, "shmem_align failed")) {
        uint64_t salt = 0;
#define RUN(T, N) test_##N(dbuf, sbuf, me, right, left, salt += 100000);
        TEST_TYPES(RUN)
#undef RUN
    }
    shmem_free(sbuf);
    shmem_free(dbuf);
    shmem_finalize();
    return t_finish(NAME);
}
