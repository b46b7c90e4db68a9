/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ring_put: every PE passes a block of numbers to its right-hand neighbour, N times over, so
 * after N steps each block is home again. Shows symmetric heap allocation, a blocking put, and
 * the barrier that completes puts; every received block is checked.
 *
 *   mpirun -n 4 ./examples/ring_put
 *
 * Exit status 0 when every block arrived intact at every step, 1 otherwise.
 */
#include <shmem.h>
#include <stdio.h>

#define LEN 1024

/* What block `origin` holds at index i: its origin is visible in every value. */
static long value(int origin, int i)
{
    return (long)origin * 1000003L + i;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes;
    long *inbox = shmem_malloc(LEN * sizeof(long)); /* symmetric: same offset on every PE */
    long block[LEN];                                /* private: only the source of puts */
    if (!inbox) {
        fprintf(stderr, "ring_put: shmem_malloc failed\n");
        shmem_global_exit(1);
    }
    for (int i = 0; i < LEN; i++) {
        block[i] = value(me, i);
    }

    long wrong = 0;
    for (int step = 1; step <= npes; step++) {
        shmem_long_put(inbox, block, LEN, right); /* into the neighbour's inbox */
        shmem_barrier_all();                      /* every put has landed */
        int origin = ((me - step) % npes + npes) % npes;
        for (int i = 0; i < LEN; i++) {
            wrong += inbox[i] != value(origin, i);
            block[i] = inbox[i];
        }
        shmem_barrier_all(); /* nobody overwrites an inbox that is still being read */
    }

    static long total; /* sum of every PE's count of bad values, on PE 0 */
    shmem_long_atomic_add(&total, wrong, 0);
    shmem_barrier_all();
    if (me == 0) {
        printf("ring_put: %d PEs passed %d longs %d steps around the ring: %s\n", npes, LEN, npes,
               total == 0 ? "OK" : "WRONG");
    }
    int ok = me != 0 || total == 0;
    shmem_free(inbox);
    shmem_finalize();
    return ok ? 0 : 1;
}
