/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_only: shmem_init, then shmem_finalize. The program of the error cases that are only
 * about the configuration (an .expect file with `program: init_only` and its env: lines): it
 * must die in shmem_init, so reaching the printf is the failure. Only PE 0 prints it: a line
 * of another PE could land inside one of PE 0's SHMEM_INFO lines (mpirun forwards each PE's
 * output in chunks of its own), which the info cases match whole.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    if (shmem_my_pe() == 0) {
        printf("init_only: shmem_init returned\n");
    }
    shmem_finalize();
    return 0;
}
