/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_sized: shmem_putN/getN (N = 8, 16, 32, 64, 128), their _nbi and ctx forms count nelems in
 * N-bit elements.
 *
 * Each routine moves nelems elements (0, 1, 5, 33) into element 1 of a poisoned buffer; the
 * whole buffer is then compared with the expected image, so a count taken as bytes (too short)
 * or as a wider element (too long), or an offset in the wrong unit, shows as wrong bytes. Puts
 * go to the right neighbour, gets come from it.
 */
#include "../test.h"

#define NAME "rma_sized"
#define MAXN 33
#define REGION (16 * (MAXN + 2) + 64)

typedef void (*plain_fn)(void *, const void *, size_t, int);
typedef void (*ctx_fn)(shmem_ctx_t, void *, const void *, size_t, int);

struct op {
    const char *name;
    size_t esize;
    int is_get;
    int nbi;
    plain_fn fn;  /* exactly one of fn, cfn is set */
    ctx_fn cfn;
};

#define OPS_FOR(B)                                                                               \
    {"shmem_put" #B, B / 8, 0, 0, shmem_put##B, NULL},                                           \
    {"shmem_put" #B "_nbi", B / 8, 0, 1, shmem_put##B##_nbi, NULL},                              \
    {"shmem_ctx_put" #B, B / 8, 0, 0, NULL, shmem_ctx_put##B},                                   \
    {"shmem_ctx_put" #B "_nbi", B / 8, 0, 1, NULL, shmem_ctx_put##B##_nbi},                      \
    {"shmem_get" #B, B / 8, 1, 0, shmem_get##B, NULL},                                           \
    {"shmem_get" #B "_nbi", B / 8, 1, 1, shmem_get##B##_nbi, NULL},                              \
    {"shmem_ctx_get" #B, B / 8, 1, 0, NULL, shmem_ctx_get##B},                                   \
    {"shmem_ctx_get" #B "_nbi", B / 8, 1, 1, NULL, shmem_ctx_get##B##_nbi}

static const struct op ops[] = {OPS_FOR(8), OPS_FOR(16), OPS_FOR(32), OPS_FOR(64),
                                OPS_FOR(128)};
static const size_t counts[] = {0, 1, 5, MAXN};

static void call(const struct op *o, void *dest, const void *src, size_t n, int pe)
{
    if (o->fn != NULL) {
        o->fn(dest, src, n, pe);
        if (o->nbi) {
            shmem_quiet();
        }
    } else {
        o->cfn(SHMEM_CTX_DEFAULT, dest, src, n, pe);
        if (o->nbi) {
            shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
        }
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    uint8_t *dst = shmem_align(16, REGION);
    uint8_t *sym = shmem_align(16, REGION);
    _Alignas(16) uint8_t priv[REGION], expect[REGION], data[REGION];
    if (!t_check(dst != NULL && sym != NULL, "shmem_align failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }

    uint64_t salt = 0;
    for (size_t oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
        const struct op *o = &ops[oi];
        for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
            size_t n = counts[ci], nbytes = n * o->esize;
            salt += 10;
            /* expect: poison everywhere, the data in elements 1..n (the sender's pattern) */
            t_fill(expect, REGION, me, salt + 1);
            int sender = o->is_get ? right : left;
            t_fill(data, nbytes, sender, salt);
            memcpy(expect + o->esize, data, nbytes);
            if (!o->is_get) {
                t_fill(priv, REGION, me, salt + 2);
                t_fill(priv + o->esize, nbytes, me, salt); /* source: elements 1..n */
                t_fill(dst, REGION, me, salt + 1);
                shmem_barrier_all();
                call(o, dst + o->esize, priv + o->esize, n, right);
                shmem_barrier_all();
                t_compare(dst, expect, REGION, "%s nelems %zu", o->name, n);
            } else {
                t_fill(sym, REGION, me, salt + 2);
                t_fill(sym + o->esize, nbytes, me, salt);
                t_fill(priv, REGION, me, salt + 1);
                shmem_barrier_all();
                call(o, priv + o->esize, sym + o->esize, n, right);
                t_compare(priv, expect, REGION, "%s nelems %zu", o->name, n);
                shmem_barrier_all(); /* the peer's read of sym is done before it changes */
            }
        }
    }

    shmem_free(sym);
    shmem_free(dst);
    shmem_finalize();
    return t_finish(NAME);
}
