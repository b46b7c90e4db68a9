/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_strided: iput/iget place element i of the source (stride sst) at element i*dst of the
 * destination, and touch nothing in between.
 *
 * Typed (shmem_<T>_iput/iget for a spread of element sizes, some through SHMEM_CTX_DEFAULT) and
 * sized (shmem_iputN/igetN) routines run with every pair of strides from {1, 2, 3} and nelems
 * 0, 1, 5, 100. The whole source holds the sender's pattern, so an element taken from the wrong
 * source position is caught; the destination is poisoned first and compared in full, so the
 * gaps between strided elements and the bytes past the last one must be unchanged.
 */
#include "../strided_test.h"

#define NAME "rma_strided"
#define MAXEL 320 /* elements: 1 + 3 * 99 + 1 and a tail */
#define REGION (16 * MAXEL)

typedef void (*strided_fn)(void *, const void *, ptrdiff_t, ptrdiff_t, size_t, int);

/* Wrappers give every routine one signature; the typed ones keep their real types inside. */
#define TYPED_WRAP(T, N)                                                                         \
    static void iput_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t n, int pe)    \
    {                                                                                            \
        shmem_##N##_iput((T *)d, (const T *)s, a, b, n, pe);                                     \
    }                                                                                            \
    static void iget_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t n, int pe)    \
    {                                                                                            \
        shmem_##N##_iget((T *)d, (const T *)s, a, b, n, pe);                                     \
    }                                                                                            \
    static void ctx_iput_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t n, int pe)\
    {                                                                                            \
        shmem_ctx_##N##_iput(SHMEM_CTX_DEFAULT, (T *)d, (const T *)s, a, b, n, pe);              \
    }                                                                                            \
    static void ctx_iget_##N(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t n, int pe)\
    {                                                                                            \
        shmem_ctx_##N##_iget(SHMEM_CTX_DEFAULT, (T *)d, (const T *)s, a, b, n, pe);              \
    }
#define TYPES(X)                                                                                 \
    X(char, char) X(short, short) X(int, int) X(long, long) X(float, float) X(double, double)    \
    X(long double, longdouble) X(unsigned char, uchar) X(int32_t, int32) X(uint64_t, uint64)     \
    X(size_t, size) X(ptrdiff_t, ptrdiff)
TYPES(TYPED_WRAP)

static void ctx_iput64(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t n, int pe)
{
    shmem_ctx_iput64(SHMEM_CTX_DEFAULT, d, s, a, b, n, pe);
}
static void ctx_iget64(void *d, const void *s, ptrdiff_t a, ptrdiff_t b, size_t n, int pe)
{
    shmem_ctx_iget64(SHMEM_CTX_DEFAULT, d, s, a, b, n, pe);
}

struct op {
    const char *name;
    size_t esize;
    int is_get;
    strided_fn fn;
};

#define TYPED_OPS(T, N)                                                                          \
    {"shmem_" #N "_iput", sizeof(T), 0, iput_##N}, {"shmem_" #N "_iget", sizeof(T), 1, iget_##N}, \
    {"shmem_ctx_" #N "_iput", sizeof(T), 0, ctx_iput_##N},                                      \
    {"shmem_ctx_" #N "_iget", sizeof(T), 1, ctx_iget_##N},
static const struct op ops[] = {
    TYPES(TYPED_OPS)
    {"shmem_iput8", 1, 0, shmem_iput8}, {"shmem_iget8", 1, 1, shmem_iget8},
    {"shmem_iput16", 2, 0, shmem_iput16}, {"shmem_iget16", 2, 1, shmem_iget16},
    {"shmem_iput32", 4, 0, shmem_iput32}, {"shmem_iget32", 4, 1, shmem_iget32},
    {"shmem_iput64", 8, 0, shmem_iput64}, {"shmem_iget64", 8, 1, shmem_iget64},
    {"shmem_iput128", 16, 0, shmem_iput128}, {"shmem_iget128", 16, 1, shmem_iget128},
    {"shmem_ctx_iput64", 8, 0, ctx_iput64}, {"shmem_ctx_iget64", 8, 1, ctx_iget64},
};
static const size_t counts[] = {0, 1, 5, 100};

/* Every pair of strides from {1, 2, 3} with every count. */
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))
#define NCASES (3 * 3 * NCOUNTS)

static void xfer(const void *op, void *dest, const void *src, const struct st_case *c, int pe)
{
    ((const struct op *)op)->fn(dest, src, c->dst, c->sst, c->nblocks, pe);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    static struct st_case cases[NCASES];
    for (size_t c = 0; c < NCASES; c++) {
        cases[c] = (struct st_case){1, counts[c % NCOUNTS], (ptrdiff_t)(1 + (c / NCOUNTS / 3) % 3),
                                    (ptrdiff_t)(1 + (c / NCOUNTS) % 3)};
    }
    struct st_env e;
    if (st_init(&e, cases, NCASES, REGION)) {
        for (size_t oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
            st_run(&e, ops[oi].name, ops[oi].esize, ops[oi].is_get, xfer, &ops[oi]);
        }
    }
    st_fini(&e);
    shmem_finalize();
    return t_finish(NAME);
}
