/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * two_shmem: a program linked with libfabshmem and another OpenSHMEM library (a stand-in named
 * liboshmem.so.40, Open MPI's OSHMEM's name: tests/errors/fake_oshmem.c), as a build that picked
 * another implementation's oshcc beside fabshmem makes one. shmem_init must end the job with the
 * two-line report naming both libraries and the fix (two_shmem.expect).
 */
#include <shmem.h>
#include <stdio.h>

int main(void)
{
    shmem_init();
    printf("two_shmem: shmem_init returned with two OpenSHMEM libraries loaded\n");
    shmem_finalize();
    return 0;
}
