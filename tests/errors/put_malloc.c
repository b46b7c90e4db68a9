/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * put_malloc: a put whose dest comes from malloc (private memory, different on every PE) ends
 * the job with the non-symmetric address report.
 */
#include <stdio.h>
#include <stdlib.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *priv = malloc(64);
    char src[8] = "abcdefg";
    if (priv == NULL) {
        return 2;
    }
    if (me == 0) {
        shmem_putmem(priv, src, sizeof(src), (me + 1) % npes);
        printf("put_malloc: shmem_putmem to malloc'd memory returned\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    free(priv);
    return 0;
}
