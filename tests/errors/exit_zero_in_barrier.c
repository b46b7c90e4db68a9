/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exit_zero_in_barrier: PE 1 returns 0 from main without shmem_finalize while PE 0 waits in a
 * barrier PE 1 never enters. PE 1's implicit finalize must not release PE 0's barrier: PE 0's
 * probe finds PE 1 finalizing at exit and ends the job naming both.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() < 2) {
        printf("exit_zero_in_barrier: needs 2 PEs\n");
        return 1;
    }
    if (me == 1) {
        return 0;
    }
    shmem_barrier_all();
    printf("exit_zero_in_barrier: PE %d left the barrier that PE 1 never entered\n", me);
    shmem_finalize();
    return 0;
}
