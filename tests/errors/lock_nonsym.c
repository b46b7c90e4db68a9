/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_nonsym: shmem_set_lock on a lock that is a stack variable (not symmetric) ends the job,
 * naming the address. PE 0 makes the bad call; the other PEs wait in a barrier.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe();
    long stack_lock = 0;
    if (me == 0) {
        shmem_set_lock(&stack_lock);
        printf("lock_nonsym: shmem_set_lock on a stack lock returned\n");
        shmem_clear_lock(&stack_lock);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
