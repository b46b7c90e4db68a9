/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * free_twice: shmem_free of a block that was already freed ends the job with a report naming
 * the pointer; the heap is never corrupted by it.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    char *buf = shmem_malloc(64);
    shmem_free(buf);
    shmem_free(buf);
    printf("free_twice: the second shmem_free returned\n");
    shmem_finalize();
    return 0;
}
