/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * barrier_timeout: a PE that never reaches the barrier (it sleeps) makes the others' barrier
 * end after FABSHMEM_TIMEOUT with a report naming the PE they wait for; the abort then ends
 * the sleeper too.
 */
#include <stdio.h>
#include <unistd.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    if (shmem_my_pe() == 1) {
        sleep(60);
    }
    shmem_barrier_all();
    printf("barrier_timeout: PE %d left the barrier\n", shmem_my_pe());
    shmem_finalize();
    return 0;
}
