/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * finalize_early: a PE waiting inside shmem_finalize still serves RMA aimed at it.
 *
 * shmem_finalize is collective: PE 0 enters it first and must keep the fabric progressing
 * (manual-progress providers complete a peer's read or write only while the target polls)
 * until every PE has arrived. Meanwhile the other PEs read PE 0's heap and static data, write
 * new data there and read it back, blocking and non-blocking, and check everything themselves.
 * PE 0 cannot check anything after its finalize; with 1 PE the test is init, data, finalize.
 */
#include <time.h>

#include "../test.h"

#define NAME "finalize_early"
#define LEN (256 * 1024 + 5)
#define NSMALL 200

static long counter_slots[NSMALL];
static uint8_t static_buf[4096];

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();

    uint8_t *heap = shmem_malloc((size_t)npes * LEN);
    if (!t_check(heap != NULL, "shmem_malloc failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }
    if (me == 0) {
        t_fill(heap, (size_t)npes * LEN, 0, 1);
        t_fill(static_buf, sizeof(static_buf), 0, 2);
    }
    shmem_barrier_all(); /* PE 0's data is in place */

    if (me == 0) {
        /* Straight into finalize; the others are still working on our memory. */
        shmem_finalize();
        return t_finish(NAME);
    }

    /* Let PE 0 get well into finalize before the traffic starts. */
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);

    uint8_t *buf = malloc(LEN);
    if (!t_check(buf != NULL, "malloc")) {
        shmem_finalize();
        return t_finish(NAME);
    }
    uint8_t *mine = heap + (size_t)me * LEN; /* my own region of PE 0's heap */

    /* 1: PE 0's initial data, large and small, blocking and non-blocking. */
    shmem_getmem(buf, mine, LEN, 0);
    {
        /* Region `me` of a buffer filled as one: compare with a full expected image. */
        uint8_t *want = malloc((size_t)npes * LEN);
        if (want != NULL) {
            t_fill(want, (size_t)npes * LEN, 0, 1);
            t_compare(buf, want + (size_t)me * LEN, LEN, "getmem of PE 0's heap (in finalize)");
            free(want);
        }
    }
    uint8_t sb[4096];
    shmem_getmem_nbi(sb, static_buf, sizeof(sb), 0);
    shmem_quiet();
    t_verify(sb, sizeof(sb), 0, 2, "getmem_nbi of PE 0's static buffer (in finalize)");

    /* 2: write my pattern into my region of PE 0's heap, read it back. */
    t_fill(buf, LEN, me, 3);
    shmem_putmem(mine, buf, LEN, 0);
    shmem_quiet();
    memset(buf, 0, LEN);
    shmem_getmem(buf, mine, LEN, 0);
    t_verify(buf, LEN, me, 3, "putmem then getmem on PE 0 (in finalize)");

    /* 3: many small non-blocking puts to my own slots of a static array, one quiet, read back.
     * Slots are per PE (me-1, me-1+(npes-1), ...) so PEs never write the same one. */
    static long vals[NSMALL]; /* sources stay untouched until the quiet */
    for (int i = me - 1; i < NSMALL; i += npes - 1) {
        vals[i] = (long)t_pattern(me, 100 + (uint64_t)i);
        shmem_long_put_nbi(&counter_slots[i], &vals[i], 1, 0);
    }
    shmem_quiet();
    for (int i = me - 1; i < NSMALL; i += npes - 1) {
        long got = shmem_long_g(&counter_slots[i], 0);
        long want = (long)t_pattern(me, 100 + (uint64_t)i);
        t_check(got == want, "long_g of slot %d on PE 0 (in finalize) = %ld, want %ld", i, got,
                want);
    }

    free(buf);
    shmem_finalize();
    return t_finish(NAME);
}
