/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_aset_outside: a PE calling a deprecated active-set collective for a set it is not in
 * (PE_start 1, stride 1, size 1 called by PE 0) ends the job naming the set.
 */
#include <stdio.h>

#include <shmem.h>

/* The deprecated active-set API is what this case tests. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static long pSync[SHMEM_BARRIER_SYNC_SIZE];

int main(void)
{
    shmem_init();
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) {
        pSync[i] = SHMEM_SYNC_VALUE;
    }
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        shmem_barrier(1, 0, 1, pSync);
        printf("coll_aset_outside: shmem_barrier returned\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
