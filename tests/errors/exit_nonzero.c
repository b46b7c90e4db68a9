/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exit_nonzero: PE 1 calls exit(3) without shmem_finalize while PE 0 waits in a barrier. The
 * job must end at once with status 3 and a message naming PE 1; PE 0 must never leave the
 * barrier (finalize's synchronization is not a barrier of the user's).
 */
#include <stdio.h>
#include <stdlib.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() < 2) {
        printf("exit_nonzero: needs 2 PEs\n");
        return 1;
    }
    if (me == 1) {
        exit(3);
    }
    shmem_barrier_all();
    printf("exit_nonzero: PE %d left the barrier that PE 1 never entered\n", me);
    shmem_finalize();
    return 0;
}
