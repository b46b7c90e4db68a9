/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * put_null_source: a NULL source with a non-zero size ends the job with a report instead of a
 * segmentation fault inside the provider.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    char *buf = shmem_malloc(64);
    shmem_putmem(buf, NULL, 16, shmem_my_pe());
    printf("put_null_source: shmem_putmem from NULL returned\n");
    shmem_finalize();
    return 0;
}
