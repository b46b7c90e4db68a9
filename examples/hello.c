/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hello: the smallest OpenSHMEM program. Every PE starts the library, says who it is, and adds
 * one to a counter that lives on PE 0; after a barrier PE 0 checks that it counted everybody.
 *
 *   mpirun -n 2 ./examples/hello
 *
 * Exit status 0 when the count is right, 1 otherwise.
 */
#include <shmem.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    static long count; /* a static is symmetric: every PE has one, at the same address */
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    printf("hello from PE %d of %d on %s\n", me, npes, host);

    shmem_long_atomic_inc(&count, 0); /* one atomic increment of PE 0's counter */
    shmem_barrier_all();              /* completes every PE's increment, then synchronizes */

    int ok = me != 0 || count == npes;
    if (me == 0) {
        printf("hello: PE 0 counted %ld of %d PEs: %s\n", count, npes, ok ? "OK" : "WRONG");
    }
    shmem_finalize();
    return ok ? 0 : 1;
}
