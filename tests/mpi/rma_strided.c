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
#include "../test.h"

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

/* Every (dst stride, src stride, nelems) case of one routine runs at once, each in its own
 * REGION, so a routine costs two barriers rather than one per case. */
#define NCASES (3 * 3 * (sizeof(counts) / sizeof(counts[0])))

static void case_params(size_t c, ptrdiff_t *ds, ptrdiff_t *ss, size_t *n)
{
    size_t ncounts = sizeof(counts) / sizeof(counts[0]);
    *n = counts[c % ncounts];
    *ss = (ptrdiff_t)(1 + (c / ncounts) % 3);
    *ds = (ptrdiff_t)(1 + (c / ncounts / 3) % 3);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    uint8_t *dst = shmem_align(16, NCASES * REGION);
    uint8_t *sym = shmem_align(16, NCASES * REGION);
    uint8_t *priv = aligned_alloc(16, NCASES * REGION);
    _Alignas(16) static uint8_t expect[REGION], data[REGION];
    if (!t_check(dst != NULL && sym != NULL && priv != NULL, "allocation failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }

    uint64_t salt = 0;
    for (size_t oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
        const struct op *o = &ops[oi];
        size_t es = o->esize;
        int sender = o->is_get ? right : left;
        uint8_t *src = o->is_get ? sym : priv;
        uint8_t *dest = o->is_get ? priv : dst;
        salt += 1000;
        for (size_t c = 0; c < NCASES; c++) {
            t_fill(src + c * REGION, REGION, me, salt + 2 * c);
            t_fill(dest + c * REGION, REGION, me, salt + 2 * c + 1);
        }
        shmem_barrier_all(); /* every destination is poisoned, every source ready */
        for (size_t c = 0; c < NCASES; c++) {
            ptrdiff_t ds, ss;
            size_t n;
            case_params(c, &ds, &ss, &n);
            o->fn(dest + c * REGION + es, src + c * REGION + es, ds, ss, n, right);
        }
        if (!o->is_get) {
            shmem_barrier_all(); /* the left neighbour's iputs are complete */
        }
        for (size_t c = 0; c < NCASES; c++) {
            ptrdiff_t ds, ss;
            size_t n;
            case_params(c, &ds, &ss, &n);
            /* The sender's whole source region, then the image of the destination: poison,
             * with source element 1 + i*ss copied to element 1 + i*ds. */
            t_fill(data, REGION, sender, salt + 2 * c);
            t_fill(expect, REGION, me, salt + 2 * c + 1);
            for (size_t i = 0; i < n; i++) {
                memcpy(expect + (1 + i * (size_t)ds) * es, data + (1 + i * (size_t)ss) * es, es);
            }
            t_compare(dest + c * REGION, expect, REGION, "%s dst %td sst %td nelems %zu",
                      o->name, ds, ss, n);
        }
        if (o->is_get) {
            shmem_barrier_all(); /* the peer's reads of sym are done before it is refilled */
        }
    }

    free(priv);
    shmem_free(sym);
    shmem_free(dst);
    shmem_finalize();
    return t_finish(NAME);
}
