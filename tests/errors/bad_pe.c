/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bad_pe: shmem_putmem to PE shmem_n_pes() (one past the last) ends the job with the
 * PE-range report. PE 0 makes the bad call while the other PEs wait in a barrier: the abort
 * must end them too.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *buf = shmem_malloc(64);
    char c = 'x';
    if (me == 0) {
        shmem_putmem(buf, &c, 1, npes);
        printf("bad_pe: shmem_putmem to PE %d returned\n", npes);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
