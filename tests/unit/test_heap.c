/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_heap: the symmetric allocator's invariants without a launcher.
 *
 * Determinism (the same call sequence gives the same offsets on two independent heaps),
 * alignment, exhaustion returning NULL without damage, coalescing back to one free block,
 * realloc in place and by moving (contents kept), double-free detection, and a randomized
 * alloc/free/realloc run with fsh_heap_check() after every step and a shadow copy of every
 * block's contents to catch overlap.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "heap.h"
#include "unit.h"

#define HEAP (8u << 20)

/* Run a fixed, allocation-heavy sequence and record every offset. */
static void sequence(uint8_t *base, size_t *offs, int n)
{
    fsh_heap_init(base, HEAP);
    void *live[64] = {0};
    for (int i = 0; i < n; i++) {
        int slot = (i * 7) % 64;
        if (live[slot]) {
            fsh_heap_free(live[slot]);
            live[slot] = NULL;
        }
        size_t size = (size_t)((i * 2654435761u) % 50000) + 1;
        size_t align = (i % 5 == 0) ? (size_t)1 << (6 + i % 7) : 0;
        live[slot] = fsh_heap_alloc(size, align);
        offs[i] = live[slot] ? (size_t)((uint8_t *)live[slot] - base) : SIZE_MAX;
    }
    fsh_heap_fini();
}

int main(void)
{
    unit_name = "test_heap";
    uint8_t *a = fsh_heap_map(HEAP, -1);
    uint8_t *b = fsh_heap_map(HEAP, -1);
    UNIT_CHECK(a && b, "map two heaps");
    UNIT_CHECK(((uintptr_t)a & ((2u << 20) - 1)) == 0, "heap base aligned to 2 MiB");
    if (!a || !b) {
        printf("test_heap: FAIL (cannot map)\n");
        return 1;
    }

    /* Determinism across two heaps at different addresses. */
    enum { N = 500 };
    static size_t oa[N], ob[N];
    sequence(a, oa, N);
    sequence(b, ob, N);
    UNIT_CHECK(memcmp(oa, ob, sizeof(oa)) == 0, "same call sequence gives the same offsets");

    /* Alignment and exhaustion. */
    fsh_heap_init(a, HEAP);
    for (size_t al = 1; al <= (2u << 20); al <<= 1) {
        void *p = fsh_heap_alloc(100, al);
        char what[64];
        snprintf(what, sizeof(what), "alignment %zu honoured", al);
        UNIT_CHECK(p && ((uintptr_t)p % al) == 0 && ((uintptr_t)p % FSH_HEAP_MIN_ALIGN) == 0, "%s",
                   what);
        fsh_heap_free(p);
    }
    UNIT_CHECK(fsh_heap_alloc(64, 3) == NULL, "alignment 3 rejected");
    fsh_err_clear();
    struct fsh_heap_stats st0, st1;
    fsh_heap_stats(&st0);
    UNIT_CHECK(fsh_heap_alloc(HEAP + 1, 0) == NULL, "larger than the heap: NULL");
    UNIT_CHECK(fsh_err_last() && strstr(fsh_err_last()->msg, "exhausted"), "exhaustion explained");
    fsh_err_clear();
    UNIT_CHECK(fsh_heap_alloc(SIZE_MAX, 0) == NULL, "SIZE_MAX: NULL, no overflow");
    fsh_err_clear();
    fsh_heap_stats(&st1);
    UNIT_CHECK(memcmp(&st0, &st1, sizeof(st0)) == 0 && fsh_heap_check() == 0,
               "failed alloc leaves heap as it was");

    /* Fill exactly, then one more byte fails; free all coalesces back to one block. */
    void *big = fsh_heap_alloc(HEAP, 0);
    UNIT_CHECK(big == a, "whole heap in one block at offset 0");
    UNIT_CHECK(fsh_heap_alloc(1, 0) == NULL, "full heap: NULL");
    fsh_err_clear();
    UNIT_CHECK(fsh_heap_free(big) == 0, "free whole heap");
    void *p[100];
    for (int i = 0; i < 100; i++) {
        p[i] = fsh_heap_alloc(1000 + (size_t)i, 0);
    }
    for (int i = 0; i < 100; i += 2) {
        fsh_heap_free(p[i]);
    }
    for (int i = 1; i < 100; i += 2) {
        fsh_heap_free(p[i]);
    }
    fsh_heap_stats(&st1);
    UNIT_CHECK(st1.blocks == 1 && st1.free == HEAP && fsh_heap_check() == 0,
               "everything coalesces");

    /* Double free and foreign pointers are refused. */
    void *q = fsh_heap_alloc(128, 0);
    UNIT_CHECK(fsh_heap_free(q) == 0, "first free");
    UNIT_CHECK(fsh_heap_free(q) != 0, "double free refused");
    fsh_err_clear();
    int local;
    UNIT_CHECK(fsh_heap_free(&local) != 0, "stack pointer refused");
    UNIT_CHECK(fsh_heap_free((uint8_t *)fsh_heap_alloc(256, 0) + 8) != 0,
               "interior pointer refused");
    fsh_err_clear();
    fsh_heap_fini();

    /* realloc: shrink in place, grow in place into free space, grow by moving. */
    fsh_heap_init(a, HEAP);
    uint8_t *r = fsh_heap_alloc(1000, 0);
    memset(r, 0xab, 1000);
    uint8_t *r2 = fsh_heap_realloc(r, 500);
    UNIT_CHECK(r2 == r, "shrink in place");
    uint8_t *r3 = fsh_heap_realloc(r2, 4000);
    UNIT_CHECK(r3 == r, "grow in place into the free tail");
    int same = 1;
    for (int i = 0; i < 500; i++) {
        same &= r3[i] == 0xab;
    }
    UNIT_CHECK(same, "contents kept across in-place realloc");
    uint8_t *blocker = fsh_heap_alloc(64, 0);
    (void)blocker;
    uint8_t *r4 = fsh_heap_realloc(r3, 100000);
    UNIT_CHECK(r4 && r4 != r3, "grow by moving when blocked");
    same = 1;
    for (int i = 0; i < 500; i++) {
        same &= r4[i] == 0xab;
    }
    UNIT_CHECK(same, "contents kept across moving realloc");
    UNIT_CHECK(fsh_heap_realloc(r4, HEAP * 2) == NULL && fsh_heap_block_size(r4) >= 100000,
               "failed realloc keeps the old block");
    fsh_err_clear();
    UNIT_CHECK(fsh_heap_check() == 0, "heap sound after reallocs");
    fsh_heap_fini();

    /* Randomized: a shadow byte per block catches overlapping blocks. */
    fsh_heap_init(a, HEAP);
    enum { SLOTS = 128 };
    uint8_t *blk[SLOTS] = {0};
    size_t len[SLOTS] = {0};
    srand(12345);
    for (int step = 0; step < 20000; step++) {
        int s = rand() % SLOTS;
        int op = rand() % 3;
        if (blk[s] && op == 0) {
            fsh_heap_free(blk[s]);
            blk[s] = NULL;
        } else if (blk[s] && op == 1) {
            size_t n = (size_t)(rand() % 70000) + 1;
            uint8_t *nb = fsh_heap_realloc(blk[s], n);
            if (nb) {
                size_t keep = n < len[s] ? n : len[s];
                for (size_t i = 0; i < keep; i++) {
                    if (nb[i] != (uint8_t)s) {
                        UNIT_CHECK(0, "realloc lost contents");
                        break;
                    }
                }
                memset(nb, s, n);
                blk[s] = nb;
                len[s] = n;
            }
            fsh_err_clear();
        } else if (!blk[s]) {
            size_t n = (size_t)(rand() % 70000) + 1;
            blk[s] = fsh_heap_alloc(n, (rand() % 4 == 0) ? 4096 : 0);
            fsh_err_clear();
            if (blk[s]) {
                memset(blk[s], s, n);
                len[s] = n;
            }
        }
        if (step % 97 == 0) {
            UNIT_CHECK(fsh_heap_check() == 0, "invariants hold during random run");
            for (int t = 0; t < SLOTS; t++) {
                for (size_t i = 0; blk[t] && i < len[t]; i += 509) {
                    if (blk[t][i] != (uint8_t)t) {
                        UNIT_CHECK(0, "block contents overwritten (overlap)");
                        break;
                    }
                }
            }
        }
    }
    fsh_heap_fini();
    fsh_heap_unmap(a, HEAP);
    fsh_heap_unmap(b, HEAP);
    if (unit_failures) {
        printf("test_heap: FAIL (%d checks failed)\n", unit_failures);
        return 1;
    }
    printf("test_heap: PASS\n");
    return 0;
}
