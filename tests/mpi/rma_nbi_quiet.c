/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_nbi_quiet: many non-blocking puts and gets in flight at once all complete at one
 * shmem_quiet, and shmem_fence orders two puts to the same location.
 *
 * 1. NPUT shmem_putmem_nbi of 8..256 bytes into distinct slots on the right neighbour, far more
 *    than any provider's transmit queue, then one shmem_quiet and a barrier: the neighbour checks
 *    every slot. Sources are distinct private buffers that stay untouched until the quiet, as
 *    the spec requires.
 * 2. NGET shmem_getmem_nbi from the right neighbour's slots into a private array, one quiet,
 *    every byte checked (the data was not there before the quiet returned: the array was
 *    poisoned).
 * 3. Fence: a large put of value A over a region, shmem_fence, then a small put of value B over
 *    its start, to the same PE. After quiet + barrier the start must hold B and the rest A; without
 *    ordering, the large put (split or rendezvous in most transports) could land last.
 */
#include "../test.h"

#define NAME "rma_nbi_quiet"
#define NPUT 10000
#define NGET 1000
#define SLOT 256
#define FENCE_BIG (256 * 1024)
#define FENCE_ROUNDS 20

/* Size of the message for slot i: 8..256 bytes, varied but deterministic. */
static size_t slot_len(size_t i)
{
    return 8 + (size_t)(t_pattern(-1, i) % (SLOT - 7));
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    uint8_t *slots = shmem_malloc((size_t)NPUT * SLOT);
    uint8_t *big = shmem_malloc(FENCE_BIG);
    uint8_t *src = malloc((size_t)NPUT * SLOT);
    uint8_t *got = malloc((size_t)NGET * SLOT);
    uint8_t *abuf = malloc(FENCE_BIG);
    if (!t_check(slots && big && src && got && abuf, "allocation failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }

    /* ---- 1: NPUT puts in flight, one quiet */
    memset(slots, 0, (size_t)NPUT * SLOT);
    for (size_t i = 0; i < NPUT; i++) {
        t_fill(src + i * SLOT, SLOT, me, i);
    }
    shmem_barrier_all();
    for (size_t i = 0; i < NPUT; i++) {
        shmem_putmem_nbi(slots + i * SLOT, src + i * SLOT, slot_len(i), right);
    }
    shmem_quiet();
    shmem_barrier_all();
    size_t bad_slots = 0;
    for (size_t i = 0; i < NPUT; i++) {
        size_t len = slot_len(i);
        int ok = 1;
        for (size_t b = 0; b < len; b++) {
            if (slots[i * SLOT + b] != t_byte(left, i, b)) {
                ok = 0;
                break;
            }
        }
        for (size_t b = len; b < SLOT && ok; b++) {
            ok = slots[i * SLOT + b] == 0;
        }
        if (!ok) {
            if (bad_slots < 3) {
                t_verify(slots + i * SLOT, len, left, i, "putmem_nbi slot %zu (len %zu)", i,
                         len);
                for (size_t b = len; b < SLOT; b++) {
                    if (!t_check(slots[i * SLOT + b] == 0,
                                 "putmem_nbi slot %zu: byte %zu past the end (len %zu) written",
                                 i, b, len)) {
                        break;
                    }
                }
            }
            bad_slots++;
        }
    }
    t_check(bad_slots == 0, "%zu of %d putmem_nbi slots wrong", bad_slots, NPUT);

    /* ---- 2: NGET gets in flight, one quiet. The slots now hold the left neighbour's data on
     * every PE; I read my right neighbour's slots, which hold my own data. */
    t_fill(got, (size_t)NGET * SLOT, me, 0xdead);
    for (size_t i = 0; i < NGET; i++) {
        shmem_getmem_nbi(got + i * SLOT, slots + i * SLOT, slot_len(i), right);
    }
    shmem_quiet();
    bad_slots = 0;
    for (size_t i = 0; i < NGET; i++) {
        size_t len = slot_len(i);
        if (memcmp(got + i * SLOT, src + i * SLOT, len) != 0) {
            if (bad_slots < 3) {
                t_compare(got + i * SLOT, src + i * SLOT, len, "getmem_nbi slot %zu (len %zu)",
                          i, len);
            }
            bad_slots++;
        }
    }
    t_check(bad_slots == 0, "%zu of %d getmem_nbi slots wrong", bad_slots, NGET);
    shmem_barrier_all();

    /* ---- 3: fence orders a big put before a small put to the same place */
    uint8_t bval[8 + 3 * (FENCE_ROUNDS - 1)];
    for (int r = 0; r < FENCE_ROUNDS; r++) {
        size_t blen = 8 + (size_t)r * 3; /* 8..65 bytes: all of bval in the last round */
        t_fill(abuf, FENCE_BIG, me, 5000 + (uint64_t)r);
        t_fill(bval, blen, me, 6000 + (uint64_t)r);
        if (r % 2 == 0) {
            shmem_putmem(big, abuf, FENCE_BIG, right);
            shmem_fence();
            shmem_putmem(big, bval, blen, right);
        } else {
            shmem_putmem_nbi(big, abuf, FENCE_BIG, right);
            shmem_fence();
            shmem_putmem_nbi(big, bval, blen, right);
        }
        shmem_quiet();
        shmem_barrier_all();
        t_verify(big, blen, left, 6000 + (uint64_t)r, "fence round %d: second put's bytes", r);
        /* The rest still holds the first put's pattern at its own offsets. */
        uint8_t *want = malloc(FENCE_BIG);
        if (want != NULL) {
            t_fill(want, FENCE_BIG, left, 5000 + (uint64_t)r);
            t_compare(big + blen, want + blen, FENCE_BIG - blen,
                      "fence round %d: first put's bytes after the second put", r);
            free(want);
        }
        shmem_barrier_all(); /* checked before the next round overwrites */
    }

    free(abuf);
    free(got);
    free(src);
    shmem_free(big);
    shmem_free(slots);
    shmem_finalize();
    return t_finish(NAME);
}
