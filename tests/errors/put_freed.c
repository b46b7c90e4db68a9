/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * put_freed: with FABSHMEM_CHECK=1, a put into a symmetric block that was freed ends the job:
 * the address is still inside the heap, so only the debug check can tell.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *keep = shmem_malloc(64);
    char *gone = shmem_malloc(4096);
    shmem_free(gone);
    char src[8] = "abcdefg";
    if (me == 0) {
        shmem_putmem(gone, src, sizeof(src), (me + 1) % npes);
        printf("put_freed: shmem_putmem into a freed block returned\n");
    }
    shmem_barrier_all();
    shmem_free(keep);
    shmem_finalize();
    return 0;
}
