/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * no_provider: with FI_PROVIDER naming a provider that does not exist, shmem_init fails with a
 * report that says no provider was found and repeats the name asked for.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    printf("no_provider: shmem_init returned\n");
    shmem_finalize();
    return 0;
}
