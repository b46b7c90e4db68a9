/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * before_init: an RMA call before shmem_init is reported as such (not as a crash or a bad
 * address), even without a launcher.
 */
#include <stdio.h>

#include <shmem.h>

static char dest[16];

int main(void)
{
    char src[16] = "before init";
    shmem_putmem(dest, src, sizeof(src), 0);
    printf("before_init: shmem_putmem before shmem_init returned\n");
    return 0;
}
