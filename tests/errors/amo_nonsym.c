/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_nonsym: shmem_int_atomic_fetch_add on a malloc'd (private, not symmetric) int ends the
 * job, naming the address. PE 0 makes the bad call; the other PEs wait in a barrier.
 */
#include <stdio.h>
#include <stdlib.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int *priv = malloc(sizeof(int));
    if (priv == NULL) {
        return 2;
    }
    *priv = 0;
    if (me == 0) {
        int old = shmem_int_atomic_fetch_add(priv, 1, (me + 1) % npes);
        printf("amo_nonsym: shmem_int_atomic_fetch_add on private memory returned %d\n", old);
    }
    shmem_barrier_all();
    shmem_finalize();
    free(priv);
    return 0;
}
