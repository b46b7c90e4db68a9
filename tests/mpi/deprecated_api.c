/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * deprecated_api: the names OpenSHMEM 1.5 deprecates still work and mean what they used to.
 *
 * start_pes(0) initialises; _my_pe/_num_pes agree with shmem_my_pe/shmem_n_pes; shmalloc,
 * shmemalign, shrealloc and shfree behave like their shmem_ successors (blocks are symmetric RMA
 * targets, shrealloc keeps content); the _SHMEM_* constants equal the SHMEM_* ones; the cache
 * routines are callable no-ops that leave data intact.
 */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "../test.h"

#define NAME "deprecated_api"

int main(void)
{
    start_pes(0);
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    t_check(_my_pe() == me, "_my_pe() = %d, shmem_my_pe() = %d", _my_pe(), me);
    t_check(_num_pes() == npes, "_num_pes() = %d, shmem_n_pes() = %d", _num_pes(), npes);

    /* Constants: compile-time equal. */
    t_check(_SHMEM_MAJOR_VERSION == SHMEM_MAJOR_VERSION, "_SHMEM_MAJOR_VERSION");
    t_check(_SHMEM_MINOR_VERSION == SHMEM_MINOR_VERSION, "_SHMEM_MINOR_VERSION");
    t_check(_SHMEM_MAX_NAME_LEN == SHMEM_MAX_NAME_LEN, "_SHMEM_MAX_NAME_LEN");
    t_check(strcmp(_SHMEM_VENDOR_STRING, SHMEM_VENDOR_STRING) == 0, "_SHMEM_VENDOR_STRING");
    t_check(_SHMEM_SYNC_VALUE == SHMEM_SYNC_VALUE, "_SHMEM_SYNC_VALUE");
    t_check(_SHMEM_BARRIER_SYNC_SIZE == SHMEM_BARRIER_SYNC_SIZE, "_SHMEM_BARRIER_SYNC_SIZE");
    t_check(_SHMEM_BCAST_SYNC_SIZE == SHMEM_BCAST_SYNC_SIZE, "_SHMEM_BCAST_SYNC_SIZE");
    t_check(_SHMEM_REDUCE_SYNC_SIZE == SHMEM_REDUCE_SYNC_SIZE, "_SHMEM_REDUCE_SYNC_SIZE");
    t_check(_SHMEM_COLLECT_SYNC_SIZE == SHMEM_COLLECT_SYNC_SIZE, "_SHMEM_COLLECT_SYNC_SIZE");
    t_check(_SHMEM_REDUCE_MIN_WRKDATA_SIZE == SHMEM_REDUCE_MIN_WRKDATA_SIZE,
            "_SHMEM_REDUCE_MIN_WRKDATA_SIZE");
    t_check(_SHMEM_CMP_EQ == SHMEM_CMP_EQ && _SHMEM_CMP_NE == SHMEM_CMP_NE &&
                _SHMEM_CMP_GT == SHMEM_CMP_GT && _SHMEM_CMP_GE == SHMEM_CMP_GE &&
                _SHMEM_CMP_LT == SHMEM_CMP_LT && _SHMEM_CMP_LE == SHMEM_CMP_LE,
            "_SHMEM_CMP_*");
    t_check(SHMEM_CMP_EQ != SHMEM_CMP_NE && SHMEM_CMP_GT != SHMEM_CMP_LT, "SHMEM_CMP_* distinct");

    /* Allocation under the old names. */
    uint8_t *a = shmalloc(10000);
    uint8_t *b = shmemalign(256, 3000);
    t_check(a != NULL, "shmalloc(10000) returned NULL");
    t_check(b != NULL && (uintptr_t)b % 256 == 0, "shmemalign(256, 3000) = %p", (void *)b);
    if (a != NULL && b != NULL) {
        uint8_t src[10000];
        t_fill(src, sizeof(src), me, 1);
        shmem_putmem(a, src, 10000, right);
        t_fill(src, 3000, me, 2);
        shmem_putmem(b, src, 3000, left);
        shmem_barrier_all();
        /* The cache routines must not disturb anything. */
        shmem_clear_cache_inv();
        shmem_set_cache_inv();
        shmem_clear_cache_line_inv(a);
        shmem_set_cache_line_inv(a);
        shmem_udcflush();
        shmem_udcflush_line(b);
        t_verify(a, 10000, left, 1, "shmalloc block after putmem");
        t_verify(b, 3000, right, 2, "shmemalign block after putmem");

        uint8_t *g = shrealloc(a, 200000);
        if (t_check(g != NULL, "shrealloc(a, 200000) returned NULL")) {
            a = g;
            t_verify(a, 10000, left, 1, "shrealloc'd block content");
            t_fill(a, 200000, me, 3);
            shmem_barrier_all();
            uint8_t *got = malloc(200000);
            if (got != NULL) {
                shmem_getmem(got, a, 200000, right);
                t_verify(got, 200000, right, 3, "getmem from the right neighbour's shrealloc "
                         "block");
                free(got);
            }
        }
    }
    shmem_barrier_all();
    shfree(b);
    shfree(a);
    shmem_finalize();
    return t_finish(NAME);
}
