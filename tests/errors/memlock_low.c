/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memlock_low: with local memory registration forced (as EFA requires) and a locked-memory
 * limit far below the heap, shmem_init stops with the limit it found and the ulimit fix,
 * instead of a registration failure deep in the provider.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    printf("memlock_low: shmem_init returned\n");
    shmem_finalize();
    return 0;
}
