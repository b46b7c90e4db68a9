/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_fp_malloc: PE 0 allocates 1 KiB where PE 1 allocates 1 MiB, then both allocate a second
 * block and PE 0 puts into PE 1's. The second blocks sit at different offsets on the two PEs,
 * so without a check the put lands inside PE 1's first block and PE 1 finds its second block
 * untouched (data lost, no word). At default settings the barrier that ends each allocation
 * carries its fingerprint (kind, size, alignment, offset), so the job ends at the first
 * shmem_malloc naming both calls. FSH_MALLOC_CASE=free (PE 0 frees its first block, PE 1 its
 * second) and =realloc (different sizes) name those calls the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>

int main(void)
{
    const char *c = getenv("FSH_MALLOC_CASE");
    c = c ? c : "malloc";
    shmem_init();
    int me = shmem_my_pe();
    if (!strcmp(c, "free")) {
        char *a = shmem_malloc(64), *b = shmem_malloc(128);
        shmem_free(me == 0 ? a : b);
    } else if (!strcmp(c, "realloc")) {
        char *a = shmem_malloc(64);
        a = shmem_realloc(a, me == 0 ? 4096 : 8192);
    }
    char *first = shmem_malloc(me == 0 ? 1024 : 1024 * 1024);
    long *second = shmem_malloc(8 * sizeof(long));
    for (int i = 0; i < 8; i++) {
        second[i] = -1;
    }
    shmem_barrier_all();
    if (me == 0 && shmem_n_pes() > 1) {
        long v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        shmem_long_put(second, v, 8, 1);
    }
    shmem_barrier_all();
    int lost = 0;
    for (int i = 0; me == 1 && i < 8; i++) {
        lost += second[i] != i + 1;
    }
    printf("coll_fp_malloc: PE %d: first block %p, second %p, %d of 8 words lost\n", me,
           (void *)first, (void *)second, lost);
    shmem_finalize();
    return lost ? 1 : 0;
}
