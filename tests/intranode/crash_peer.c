/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_peer: PE 1 is killed outright (SIGKILL) in the middle of a job, after every PE has
 * used the intra-node path and the shm provider. Run by crash_cleanup.sh, which checks that
 * the job ends (bounded), that no PE survives it, and that nothing of the job is left in
 * /dev/shm.
 */
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static long flag;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *h = shmem_malloc(4096);
    if (!h) {
        return 1;
    }
    /* Traffic on both segments and an atomic, so every path has been set up. */
    shmem_long_p(h, me, (me + 1) % n);
    shmem_long_p(&flag, me, (me + 1) % n);
    shmem_long_atomic_inc(&h[1], 0);
    shmem_barrier_all();
    printf("crash_peer: PE %d pid %d\n", me, (int)getpid());
    fflush(stdout);
    shmem_barrier_all();
    if (me == 1) {
        raise(SIGKILL);
    }
    /* The others wait for PE 1 forever; the launcher has to end them. */
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, -1);
    shmem_finalize();
    return 0;
}
