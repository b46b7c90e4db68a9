/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device_lock: a distributed lock word in the device heap ends the job with a message naming
 * the routine and what it supports (the lock protocol spins on the word with CPU loads, and a
 * host CPU cannot load GPU memory). Runs on the mock CUDA driver (built --with-cuda only, so is
 * this test). PE 0 makes the bad call; the other PE waits in a barrier.
 */
#include <stdio.h>
#include <stdlib.h>

#include <shmemx.h>

int main(void)
{
    setenv("FABSHMEM_CUDA_LIB", FSH_MOCK_CUDA, 0);
    shmem_init();
    int me = shmem_my_pe();
    long *lock = shmemx_calloc_device(1, sizeof(long));
    if (me == 0 && lock) {
        shmem_set_lock(lock);
        printf("device_lock: shmem_set_lock on device memory returned\n");
    } else if (!lock) {
        printf("device_lock: no device heap: %s\n", shmemx_device_info());
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
