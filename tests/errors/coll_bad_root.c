/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_bad_root: shmem_broadcastmem with PE_root outside the team ends the job naming the
 * root and the team's range; the other PE, waiting in the broadcast for data that will never
 * come, is ended with it (no hang).
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *buf = shmem_malloc(64);
    int root = me == 0 ? npes : 0;
    shmem_broadcastmem(SHMEM_TEAM_WORLD, buf, buf, 64, root);
    printf("coll_bad_root: PE %d returned from the broadcast\n", me);
    shmem_finalize();
    return 0;
}
