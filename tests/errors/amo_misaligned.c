/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_misaligned: shmem_long_atomic_add on a symmetric address one byte past an aligned one
 * ends the job: atomics need naturally aligned objects (the address is symmetric, so the only
 * fault is the alignment). PE 0 makes the bad call; the other PEs wait in a barrier.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *buf = shmem_calloc(8, sizeof(long));
    if (me == 0) {
        long *odd = (long *)(void *)(buf + 1);
        shmem_long_atomic_add(odd, 1, (me + 1) % npes);
        printf("amo_misaligned: shmem_long_atomic_add on a misaligned address returned\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
