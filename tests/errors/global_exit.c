/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * global_exit: shmem_global_exit(7) on PE 1 ends the whole job, including PE 0 blocked in a
 * barrier that PE 1 never enters, and the job's exit status is 7 (FSH_GLOBAL_EXIT_STATUS sets
 * another status: global_exit_zero.expect runs it with 0).
 */
#include <stdio.h>
#include <stdlib.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes < 2) {
        printf("global_exit: needs 2 PEs\n");
        return 1;
    }
    if (me == 1) {
        const char *s = getenv("FSH_GLOBAL_EXIT_STATUS");
        int status = s ? atoi(s) : 7;
        printf("global_exit: PE 1 calls shmem_global_exit(%d)\n", status);
        fflush(stdout);
        shmem_global_exit(status);
        printf("global_exit: shmem_global_exit returned\n");
        return 0;
    }
    shmem_barrier_all();
    printf("global_exit: PE %d left the barrier that PE 1 never entered\n", me);
    shmem_finalize();
    return 0;
}
