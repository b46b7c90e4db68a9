/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * strided_test.h: the driver shared by the strided RMA tests (rma_strided: iput/iget,
 * rma_blocked: ibput/ibget).
 *
 * A case is nblocks blocks of bsize elements, block i from source element 1 + i*sst to
 * destination element 1 + i*dst (iput/iget: bsize 1). Every case of one routine runs at once,
 * each in its own region of the buffers, so a routine costs two barriers rather than one per
 * case. Puts go from private memory to the right neighbour's symmetric dst; gets read the right
 * neighbour's symmetric sym into private memory. The whole source holds the sender's pattern
 * and the destination is poisoned first and compared in full, so an element or block from the
 * wrong place, a byte past one, or a touched gap is caught.
 */
#ifndef FSH_STRIDED_TEST_H
#define FSH_STRIDED_TEST_H

#include "test.h"

struct st_case {
    size_t bsize, nblocks;
    ptrdiff_t dst, sst;
};

/* Performs case c of routine op (the test's own description of it) on pe. */
typedef void (*st_xfer)(const void *op, void *dest, const void *src, const struct st_case *c,
                        int pe);

struct st_env {
    const struct st_case *cases;
    size_t ncases, region;
    uint8_t *dst, *sym, *priv; /* ncases regions each */
    uint8_t *expect, *data;    /* one region each */
    uint64_t salt;
};

/* Collective: the buffers for ncases cases of region bytes. 0 (and a failed check) if any
 * allocation failed. */
static inline T_UNUSED int st_init(struct st_env *e, const struct st_case *cases, size_t ncases,
                                   size_t region)
{
    *e = (struct st_env){cases, ncases, region, NULL, NULL, NULL, NULL, NULL, 0};
    e->dst = shmem_align(16, ncases * region);
    e->sym = shmem_align(16, ncases * region);
    e->priv = aligned_alloc(16, ncases * region);
    e->expect = aligned_alloc(16, region);
    e->data = aligned_alloc(16, region);
    return t_check(e->dst && e->sym && e->priv && e->expect && e->data, "allocation failed");
}

static inline T_UNUSED void st_fini(struct st_env *e)
{
    free(e->data);
    free(e->expect);
    free(e->priv);
    shmem_free(e->sym);
    shmem_free(e->dst);
}

/* Collective: every case of one routine (esize-byte elements, a get when is_get), checked. */
static inline T_UNUSED void st_run(struct st_env *e, const char *name, size_t es, int is_get,
                                   st_xfer xfer, const void *op)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    int sender = is_get ? right : left;
    uint8_t *src = is_get ? e->sym : e->priv;
    uint8_t *dest = is_get ? e->priv : e->dst;
    size_t rg = e->region;
    e->salt += 1000;
    for (size_t c = 0; c < e->ncases; c++) {
        t_fill(src + c * rg, rg, me, e->salt + 2 * c);
        t_fill(dest + c * rg, rg, me, e->salt + 2 * c + 1);
    }
    shmem_barrier_all(); /* every destination is poisoned, every source ready */
    for (size_t c = 0; c < e->ncases; c++) {
        xfer(op, dest + c * rg + es, src + c * rg + es, &e->cases[c], right);
    }
    if (!is_get) {
        shmem_barrier_all(); /* the left neighbour's puts are complete */
    }
    for (size_t c = 0; c < e->ncases; c++) {
        const struct st_case *k = &e->cases[c];
        /* The sender's whole source region, then the image of the destination: poison, with
         * source block 1 + i*sst copied to 1 + i*dst (in elements). */
        t_fill(e->data, rg, sender, e->salt + 2 * c);
        t_fill(e->expect, rg, me, e->salt + 2 * c + 1);
        for (size_t i = 0; i < k->nblocks; i++) {
            memcpy(e->expect + (1 + i * (size_t)k->dst) * es,
                   e->data + (1 + i * (size_t)k->sst) * es, k->bsize * es);
        }
        t_compare(dest + c * rg, e->expect, rg, "%s bsize %zu nblocks %zu dst %td sst %td", name,
                  k->bsize, k->nblocks, k->dst, k->sst);
    }
    if (is_get) {
        shmem_barrier_all(); /* the peer's reads of sym are done before it is refilled */
    }
}

#endif
