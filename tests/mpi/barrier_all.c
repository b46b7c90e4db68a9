/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * barrier_all: shmem_barrier_all completes every PE's earlier puts (it implies shmem_quiet) and
 * no PE leaves it before all have entered; shmem_sync_all synchronises without completing
 * puts, so a quiet before it makes them visible.
 *
 * Each iteration every PE writes the iteration number into its own slot on every PE (blocking
 * put, non-blocking put, or p, in turn), then barriers, then checks that every slot holds the
 * current iteration. Slots alternate by parity: a fast PE may write iteration k+1 while a slow
 * one is still checking k, but never k+2 (that needs the next barrier). The same runs with
 * quiet + sync_all.
 */
#include <time.h>

#include "../test.h"

#define NAME "barrier_all"
#define ITERS 200
#define SYNC_ITERS 100
#define MAX_PES 1024

static long slots[2][MAX_PES];

static void round_trip(int it, int me, int npes, int use_sync)
{
    long v = (long)it * 1000003 + me;
    int par = it % 2;
    for (int p = 0; p < npes; p++) {
        int pe = (me + p) % npes;
        switch (it % 3) {
        case 0:
            shmem_putmem(&slots[par][me], &v, sizeof(v), pe);
            break;
        case 1:
            shmem_putmem_nbi(&slots[par][me], &v, sizeof(v), pe);
            break;
        default:
            shmem_long_p(&slots[par][me], v, pe);
            break;
        }
    }
    if (use_sync) {
        shmem_quiet();
        shmem_sync_all();
    } else {
        shmem_barrier_all();
    }
    for (int p = 0; p < npes; p++) {
        long want = (long)it * 1000003 + p;
        t_check(slots[par][p] == want, "%s iteration %d: slot of PE %d = %ld, want %ld",
                use_sync ? "quiet+sync_all" : "barrier_all", it, p, slots[par][p], want);
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes > MAX_PES) {
        t_skip(NAME, "more PEs than the test's slot table");
    }
    for (int it = 0; it < ITERS; it++) {
        round_trip(it, me, npes, 0);
    }
    /* A slow PE must still see the last barrier's data before moving on. */
    shmem_barrier_all();
    for (int it = ITERS; it < ITERS + SYNC_ITERS; it++) {
        round_trip(it, me, npes, 1);
    }
    shmem_barrier_all();

    /* Barrier as a pure synchroniser: nobody leaves before the last PE arrives. PE n-1 sleeps,
     * then stamps a value on everyone; after the barrier everyone must already see it. */
    static long stamp;
    if (me == npes - 1) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        for (int p = 0; p < npes; p++) {
            shmem_long_p(&stamp, 4242, p);
        }
    }
    shmem_barrier_all();
    t_check(stamp == 4242, "after a barrier a late PE's put is missing (stamp %ld)", stamp);

    shmem_finalize();
    return t_finish(NAME);
}
