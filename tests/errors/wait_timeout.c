/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait_timeout: a user wait that nothing will ever satisfy ends after FABSHMEM_WAIT_TIMEOUT
 * with a report naming the routine, instead of hanging the job.
 */
#include <stdio.h>

#include <shmem.h>

static long flag;

int main(void)
{
    shmem_init();
    if (shmem_my_pe() == 0) {
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
        printf("wait_timeout: shmem_long_wait_until returned with flag %ld\n", flag);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
