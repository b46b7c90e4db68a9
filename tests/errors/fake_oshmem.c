/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_oshmem.c: a stand-in for another OpenSHMEM library, built as tests/errors/fake/
 * liboshmem.so.40 (the name of Open MPI's OSHMEM) and linked into tests/errors/two_shmem after
 * libfabshmem. It defines shmem_init as such a library does; if this one were ever called
 * (fabshmem's not being the one the program reached), it says so and exits with a status the
 * test does not accept.
 */
#include <stdio.h>
#include <stdlib.h>

void shmem_init(void);

void shmem_init(void)
{
    printf("fake liboshmem: its own shmem_init was called, not fabshmem's\n");
    fflush(stdout);
    exit(0);
}
