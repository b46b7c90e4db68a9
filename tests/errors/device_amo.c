/*
 * device_amo: an atomic on a long in the device heap ends the job with a message naming the
 * routine and what it supports (atomics need the CPU or the NIC to touch the word, and GPU
 * memory is neither's on the staging path). Runs on the mock CUDA driver (built --with-cuda
 * only, so is this test). PE 0 makes the bad call; the other PE waits in a barrier.
 */
#include <stdio.h>
#include <stdlib.h>

#include <shmemx.h>

int main(void)
{
    setenv("FABSHMEM_CUDA_LIB", FSH_MOCK_CUDA, 0);
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *x = shmemx_malloc_device(sizeof(long));
    if (me == 0 && x) {
        shmem_long_atomic_add(x, 1, (me + 1) % npes);
        printf("device_amo: shmem_long_atomic_add on device memory returned\n");
    } else if (!x) {
        printf("device_amo: no device heap: %s\n", shmemx_device_info());
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
