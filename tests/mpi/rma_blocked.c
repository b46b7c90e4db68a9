/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_blocked: the OpenSHMEM 1.6 blocked strided ibput/ibget copy nblocks blocks of bsize
 * contiguous elements, block i from source element i*sst to destination element i*dst, and
 * touch nothing in between.
 *
 * Typed (shmem_<T>_ibput/ibget for a spread of element sizes), their ctx forms on
 * SHMEM_CTX_DEFAULT and on a created context, the sized shmem_ibputN/ibgetN for every N, and
 * the C11 generics shmem_ibput/shmem_ibget in both forms run the same cases: block sizes 1
 * (as iput), 3, 16 and 200 (past the pieces of FABSHMEM_MAX_MSG_SIZE in rma_blocked.env, so a
 * block is split), strides equal to bsize (contiguous: one transfer) and larger on either side,
 * 0 and 1 blocks, and bsize 0. The whole source holds the sender's pattern and the destination
 * is poisoned first and compared in full, so a block from the wrong place, a byte past a block
 * or a touched gap is caught.
 */
#include "../strided_test.h"

#define NAME "rma_blocked"
#define REGION (16 * 1024)

typedef void (*blocked_fn)(void *, const void *, ptrdiff_t, ptrdiff_t, size_t, size_t, int);

static shmem_ctx_t ctx; /* a created context, for the ctx forms */

/* Wrappers give every routine one signature; the typed ones keep their real types inside. */
#define TYPED_WRAP(T, N)                                                                         \
    static void ibput_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t bs, size_t n, \
                          int pe)                                                                \
    {                                                                                            \
        shmem_##N##_ibput((T *)d, (const T *)s, a, b, bs, n, pe);                                \
    }                                                                                            \
    static void ibget_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t bs, size_t n, \
                          int pe)                                                                \
    {                                                                                            \
        shmem_##N##_ibget((T *)d, (const T *)s, a, b, bs, n, pe);                                \
    }                                                                                            \
    static void ctx_ibput_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t bs,       \
                              size_t n, int pe)                                                  \
    {                                                                                            \
        shmem_ctx_##N##_ibput(SHMEM_CTX_DEFAULT, (T *)d, (const T *)s, a, b, bs, n, pe);         \
    }                                                                                            \
    static void ctx_ibget_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t bs,       \
                              size_t n, int pe)                                                  \
    {                                                                                            \
        shmem_ctx_##N##_ibget(ctx, (T *)d, (const T *)s, a, b, bs, n, pe);                       \
    }                                                                                            \
    static void gen_ibput_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t bs,       \
                              size_t n, int pe)                                                  \
    {                                                                                            \
        shmem_ibput((T *)d, (const T *)s, a, b, bs, n, pe);                                      \
    }                                                                                            \
    static void gen_ibget_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t bs,       \
                              size_t n, int pe)                                                  \
    {                                                                                            \
        shmem_ibget(ctx, (T *)d, (const T *)s, a, b, bs, n, pe);                                 \
    }
#define TYPES(X)                                                                                 \
    X(char, char) X(short, short) X(int, int) X(double, double) X(long double, longdouble)       \
    X(uint64_t, uint64) X(ptrdiff_t, ptrdiff)
TYPES(TYPED_WRAP)

#define SIZED_WRAP(BITS)                                                                         \
    static void ctx_ibput##BITS(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t bs,     \
                                size_t n, int pe)                                                \
    {                                                                                            \
        shmem_ctx_ibput##BITS(ctx, d, s, a, b, bs, n, pe);                                       \
    }                                                                                            \
    static void ctx_ibget##BITS(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t bs,     \
                                size_t n, int pe)                                                \
    {                                                                                            \
        shmem_ctx_ibget##BITS(SHMEM_CTX_DEFAULT, d, s, a, b, bs, n, pe);                         \
    }
#define SIZES(X) X(8) X(16) X(32) X(64) X(128)
SIZES(SIZED_WRAP)

struct op {
    const char *name;
    size_t esize;
    int is_get;
    blocked_fn fn;
};

#define TYPED_OPS(T, N)                                                                          \
    {"shmem_" #N "_ibput", sizeof(T), 0, ibput_##N},                                             \
    {"shmem_" #N "_ibget", sizeof(T), 1, ibget_##N},                                             \
    {"shmem_ctx_" #N "_ibput (default)", sizeof(T), 0, ctx_ibput_##N},                           \
    {"shmem_ctx_" #N "_ibget (created)", sizeof(T), 1, ctx_ibget_##N},                           \
    {"shmem_ibput(" #T " *)", sizeof(T), 0, gen_ibput_##N},                                      \
    {"shmem_ibget(ctx, " #T " *)", sizeof(T), 1, gen_ibget_##N},
#define SIZED_OPS(BITS)                                                                          \
    {"shmem_ibput" #BITS, BITS / 8, 0, shmem_ibput##BITS},                                       \
    {"shmem_ibget" #BITS, BITS / 8, 1, shmem_ibget##BITS},                                       \
    {"shmem_ctx_ibput" #BITS " (created)", BITS / 8, 0, ctx_ibput##BITS},                        \
    {"shmem_ctx_ibget" #BITS " (default)", BITS / 8, 1, ctx_ibget##BITS},
static const struct op ops[] = {TYPES(TYPED_OPS) SIZES(SIZED_OPS)};

/* (bsize, nblocks, dst, sst): every case fits REGION for 16-byte elements, with the leading
 * element the transfer skips. */
static const struct st_case cases[] = {
    {1, 7, 1, 1},     {1, 7, 3, 2},   {3, 0, 3, 3},     {3, 1, 3, 3},  {3, 4, 3, 3},
    {3, 4, 5, 3},     {3, 4, 3, 7},   {4, 6, 9, 4},     {16, 5, 17, 40}, {2, 33, 2, 5},
    {200, 3, 230, 200}, {200, 2, 200, 333}, {0, 5, 0, 0},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void xfer(const void *op, void *dest, const void *src, const struct st_case *c, int pe)
{
    ((const struct op *)op)->fn(dest, src, c->dst, c->sst, c->bsize, c->nblocks, pe);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    struct st_env e;
    if (st_init(&e, cases, NCASES, REGION) &&
        t_check(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create failed")) {
        for (size_t oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
            st_run(&e, ops[oi].name, ops[oi].esize, ops[oi].is_get, xfer, &ops[oi]);
        }
        shmem_ctx_destroy(ctx);
    }
    st_fini(&e);
    shmem_finalize();
    return t_finish(NAME);
}
