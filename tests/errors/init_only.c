/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_only: shmem_init, then shmem_finalize. The program of the error cases that are only
 * about the configuration (an .expect file with `program: init_only` and its env: lines): it
 * must die in shmem_init, so reaching the printf is the failure.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    printf("init_only: shmem_init returned\n");
    shmem_finalize();
    return 0;
}
