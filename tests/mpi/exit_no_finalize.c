/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exit_no_finalize: every PE returns 0 from main without calling shmem_finalize. The at-exit
 * finalize runs on every PE and they synchronize among themselves (finalize's own slot), so
 * the job ends cleanly with status 0, and puts made just before the return are complete: each
 * PE checks, after a barrier, what its neighbour put, then leaves.
 */
#include "../test.h"

#define NAME "exit_no_finalize"

static long got, last;

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_long_p(&got, 31L * me + 5, (me + 1) % npes);
    shmem_barrier_all();
    int from = (me - 1 + npes) % npes;
    t_check(got == 31L * from + 5, "got %ld from PE %d, want %ld", got, from, 31L * from + 5);
    /* A last put nobody waits for: the implicit finalize completes it before the PEs leave. */
    shmem_long_p(&last, me, (me + 1) % npes);
    return t_finish(NAME);
}
