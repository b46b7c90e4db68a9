/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap_alloc: the symmetric heap routines return usable, correctly aligned, symmetric blocks.
 *
 * Checks: shmem_malloc blocks are aligned for any type and do not overlap; shmem_calloc zeroes
 * (even memory a freed block had dirtied); shmem_align honours 8..4096 and 4..16 MiB (an RMA
 * target each), and returns NULL beyond 1 GiB; shmem_realloc keeps the
 * content when growing (possibly moving) and shrinking, and realloc(NULL) allocates;
 * shmem_malloc_with_hints works with each hint; malloc(0) and calloc(0, n) return NULL and
 * shmem_free(NULL) does nothing. Every block's offset from a first block is the same on all PEs
 * (each PE compares its table with PE 0's), and blocks are RMA targets (the right neighbour's
 * block receives a put, checked by its owner). A long alloc/free sequence fragments the heap;
 * afterwards one block as large as the sum of the pieces must fit again (freed blocks
 * coalesce).
 */
#include <stdalign.h>
#include <stddef.h>

#include "../test.h"

#define NAME "heap_alloc"
#define MAXBLK 64
#define NFRAG 48
#define FRAG_ROUNDS 20
#define PROBE_MAX 512
#define MIB ((size_t)1 << 20)

static long offsets[MAXBLK]; /* symmetric: this PE's block offsets, compared with PE 0's */

/* Fill a block with my pattern, put it to the right neighbour's copy, and after a barrier check
 * that mine holds the left neighbour's pattern. Collective. */
static void rma_check(uint8_t *blk, size_t len, uint64_t salt, const char *what, int me,
                      int right, int left)
{
    uint8_t *src = malloc(len);
    if (!t_check(src != NULL, "malloc")) {
        shmem_barrier_all();
        shmem_barrier_all();
        return;
    }
    t_fill(src, len, me, salt);
    shmem_barrier_all();
    shmem_putmem(blk, src, len, right);
    shmem_barrier_all();
    t_verify(blk, len, left, salt, "%s: RMA target (%zu bytes)", what, len);
    free(src);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    uint8_t *blk[MAXBLK] = {0};
    size_t len[MAXBLK] = {0};
    int nblk = 0;

    /* ---- zero sizes and NULL */
    void *z = shmem_malloc(0);
    t_check(z == NULL, "shmem_malloc(0) = %p, want NULL", z);
    z = shmem_calloc(0, 16);
    t_check(z == NULL, "shmem_calloc(0, 16) = %p, want NULL", z);
    z = shmem_calloc(16, 0);
    t_check(z == NULL, "shmem_calloc(16, 0) = %p, want NULL", z);
    shmem_free(NULL);

    /* ---- malloc: sizes from 1 byte to 1 MiB, aligned for any type, disjoint */
    static const size_t msz[] = {1, 7, 8, 100, 4096, 4097, 65536, MIB, 3};
    for (size_t i = 0; i < sizeof(msz) / sizeof(msz[0]); i++, nblk++) {
        blk[nblk] = shmem_malloc(msz[i]);
        len[nblk] = msz[i];
        t_check(blk[nblk] != NULL, "shmem_malloc(%zu) returned NULL", msz[i]);
        t_check((uintptr_t)blk[nblk] % alignof(max_align_t) == 0,
                "shmem_malloc(%zu) = %p not aligned to %zu", msz[i], (void *)blk[nblk],
                alignof(max_align_t));
    }
    /* ---- align: every power of two 8..4096 */
    for (size_t a = 8; a <= 4096; a *= 2, nblk++) {
        len[nblk] = 3 * a + 5;
        blk[nblk] = shmem_align(a, len[nblk]);
        t_check(blk[nblk] != NULL, "shmem_align(%zu, %zu) returned NULL", a, len[nblk]);
        t_check((uintptr_t)blk[nblk] % a == 0, "shmem_align(%zu) = %p misaligned", a,
                (void *)blk[nblk]);
    }
    /* ---- with hints */
    static const long hints[] = {0, SHMEM_MALLOC_ATOMICS_REMOTE, SHMEM_MALLOC_SIGNAL_REMOTE,
                                 SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE};
    for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++, nblk++) {
        len[nblk] = 1000 + i;
        blk[nblk] = shmem_malloc_with_hints(len[nblk], hints[i]);
        t_check(blk[nblk] != NULL, "shmem_malloc_with_hints(%zu, %ld) returned NULL", len[nblk],
                hints[i]);
    }
    /* ---- calloc zeroes, even over memory a freed block dirtied */
    uint8_t *dirty = shmem_malloc(20000);
    if (dirty != NULL) {
        memset(dirty, 0xee, 20000);
    }
    shmem_free(dirty);
    for (int k = 0; k < 2; k++, nblk++) {
        len[nblk] = k == 0 ? 20000 : 4 * 1000;
        blk[nblk] = k == 0 ? shmem_calloc(20000, 1) : shmem_calloc(1000, 4);
        if (t_check(blk[nblk] != NULL, "shmem_calloc returned NULL")) {
            size_t nz = 0;
            for (size_t b = 0; b < len[nblk]; b++) {
                nz += blk[nblk][b] != 0;
            }
            t_check(nz == 0, "shmem_calloc block of %zu bytes has %zu non-zero bytes", len[nblk],
                    nz);
        }
    }
    /* ---- realloc(NULL) allocates */
    len[nblk] = 5000;
    blk[nblk] = shmem_realloc(NULL, 5000);
    t_check(blk[nblk] != NULL, "shmem_realloc(NULL, 5000) returned NULL");
    nblk++;

    /* Disjoint: fill every block with its own pattern, then check them all. */
    for (int i = 0; i < nblk; i++) {
        if (blk[i] != NULL) {
            t_fill(blk[i], len[i], me, 100 + (uint64_t)i);
        }
    }
    for (int i = 0; i < nblk; i++) {
        if (blk[i] != NULL) {
            t_verify(blk[i], len[i], me, 100 + (uint64_t)i, "block %d (%zu bytes) overlaps "
                     "another", i, len[i]);
        }
    }

    /* ---- realloc: grow (keeps content), then shrink (keeps the prefix) */
    int ri = nblk - 1;
    if (blk[ri] != NULL) {
        uint8_t *g = shmem_realloc(blk[ri], 300000); /* likely moves: blocks follow it */
        if (t_check(g != NULL, "shmem_realloc grow to 300000 returned NULL")) {
            t_verify(g, 5000, me, 100 + (uint64_t)ri, "realloc grow 5000 -> 300000: content");
            blk[ri] = g;
            len[ri] = 300000;
            t_fill(g, 300000, me, 900);
            uint8_t *s = shmem_realloc(g, 1000);
            if (t_check(s != NULL, "shmem_realloc shrink to 1000 returned NULL")) {
                t_verify(s, 1000, me, 900, "realloc shrink 300000 -> 1000: content");
                blk[ri] = s;
                len[ri] = 1000;
            }
        }
    }

    /* ---- symmetry: offsets from block 0 equal PE 0's */
    for (int i = 0; i < nblk; i++) {
        offsets[i] = blk[i] ? (long)((intptr_t)blk[i] - (intptr_t)blk[0]) : -1;
    }
    shmem_barrier_all();
    long pe0[MAXBLK];
    shmem_getmem(pe0, offsets, sizeof(long) * (size_t)nblk, 0);
    for (int i = 0; i < nblk; i++) {
        t_check(pe0[i] == offsets[i], "block %d: offset %ld here, %ld on PE 0 (not symmetric)", i,
                offsets[i], pe0[i]);
    }

    /* ---- every block is an RMA target */
    for (int i = 0; i < nblk; i++) {
        if (blk[i] != NULL) {
            char what[32];
            snprintf(what, sizeof(what), "block %d", i);
            rma_check(blk[i], len[i], 200 + (uint64_t)i, what, me, right, left);
        }
    }
    for (int i = nblk - 1; i >= 0; i--) {
        shmem_free(blk[i]);
    }

    /* ---- fragmentation: rounds of allocating NFRAG blocks of varied size and freeing them in
     * a scattered order; block contents must stay intact meanwhile. */
    uint8_t *frag[NFRAG] = {0};
    size_t flen[NFRAG];
    uint64_t fsalt[NFRAG];
    for (int r = 0; r < FRAG_ROUNDS; r++) {
        for (int i = 0; i < NFRAG; i++) {
            if (frag[i] == NULL) {
                fsalt[i] = 1000 + (uint64_t)(r * NFRAG + i);
                flen[i] = 64 + (size_t)(t_pattern(-2, fsalt[i]) % 60000);
                frag[i] = shmem_malloc(flen[i]);
                if (t_check(frag[i] != NULL, "fragment round %d: shmem_malloc(%zu) NULL", r,
                            flen[i])) {
                    t_fill(frag[i], flen[i], me, fsalt[i]);
                }
            }
        }
        for (int i = 0; i < NFRAG; i++) {
            if (frag[i] != NULL) {
                t_verify(frag[i], flen[i], me, fsalt[i], "fragment round %d: block %d", r, i);
            }
        }
        /* free about half, in an order that leaves holes of every size */
        for (int i = 0; i < NFRAG; i++) {
            int j = (i * 7 + r) % NFRAG;
            if (frag[j] != NULL && (t_pattern(-3, fsalt[j]) & 1)) {
                shmem_free(frag[j]);
                frag[j] = NULL;
            }
        }
    }
    for (int i = 0; i < NFRAG; i++) {
        shmem_free(frag[i]);
        frag[i] = NULL;
    }

    /* ---- coalescing: fill the heap with 1 MiB blocks, free them, then one block of nearly all
     * that space must fit. Only when the heap is small enough to probe (the runner's 64M). */
    static uint8_t *probe[PROBE_MAX];
    int np = 0;
    while (np < PROBE_MAX && (probe[np] = shmem_malloc(MIB)) != NULL) {
        np++;
    }
    for (int i = np - 1; i >= 0; i--) {
        shmem_free(probe[i]);
    }
    if (np < PROBE_MAX) {
        t_check(np >= 2, "only %d blocks of 1 MiB fit in the heap", np);
        size_t big = (size_t)(np - 1) * MIB;
        uint8_t *b = shmem_malloc(big);
        if (t_check(b != NULL, "after fragmentation and freeing: shmem_malloc(%zu) NULL although "
                    "%d blocks of 1 MiB fitted (free blocks not coalesced?)", big, np)) {
            rma_check(b, big, 300, "coalesced block", me, right, left);
        }
        shmem_free(b);
    } else {
        printf("  %s: note: heap holds more than %d MiB, coalescing check not run\n", NAME,
               PROBE_MAX);
    }

    /* ---- large alignments: 4, 8 and 16 MiB (beyond the 2 MiB of a page-aligned base), each an
     * RMA target; beyond 1 GiB, NULL on every PE (no offset is aligned everywhere). */
    for (size_t a = 4 * MIB; a <= 16 * MIB; a *= 2) {
        uint8_t *p = shmem_align(a, 4096);
        if (t_check(p != NULL, "shmem_align(%zu, 4096) returned NULL", a)) {
            t_check((uintptr_t)p % a == 0, "shmem_align(%zu) = %p misaligned", a, (void *)p);
            rma_check(p, 4096, 400 + a / MIB, "large alignment", me, right, left);
        }
        shmem_free(p);
    }
    void *huge = shmem_align((size_t)2 << 30, 64);
    t_check(huge == NULL, "shmem_align(2 GiB, 64) = %p, want NULL", huge);

    shmem_finalize();
    return t_finish(NAME);
}
