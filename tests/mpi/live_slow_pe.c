/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * live_slow_pe: a PE that computes (sleeps without calling the library) for 2.5 probe
 * intervals (FABSHMEM_PROBE_INTERVAL=1 in live_slow_pe.env) while its peers wait for it is
 * waited for, not taken for dead: in a user wait (shmem_wait_until, which probes every PE), in
 * shmem_barrier_all (a collective's arrival from a named peer) and in an all-to-all. Every
 * phase checks the data that crossed it. In the shm configuration the progress thread is off
 * (a one-node job), in the others it runs; live_slow_pe_nothread (the same program) turns it
 * off everywhere: both kinds of silence must be tolerated.
 */
#include <time.h>

#include "../test.h"

#define NAME "live_slow_pe"
#define MAX_PES 64

static long flag;
static long slots[MAX_PES];
static long src[MAX_PES], dst[MAX_PES];

static void compute(void)
{
    struct timespec ts = {2, 500000000}; /* 2.5 probe intervals */
    nanosleep(&ts, NULL);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes > MAX_PES) {
        t_skip(NAME, "more than 64 PEs");
    }
    int slow = npes - 1;

    /* 1: the others wait (user wait) for a flag the slow PE sets after computing. */
    if (me == slow) {
        compute();
        for (int pe = 0; pe < npes; pe++) {
            shmem_long_p(&flag, 1000 + slow, pe);
        }
        shmem_quiet();
    } else {
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1000 + slow);
    }
    t_check(flag == 1000 + slow, "phase 1: flag %ld, want %d", flag, 1000 + slow);

    /* 2: the others wait in a barrier while the slow PE computes; puts made before it must be
     * visible after it. */
    if (me == 0 && npes > 1) {
        compute();
    }
    for (int pe = 0; pe < npes; pe++) {
        shmem_long_p(&slots[me], 7 * me + 1, pe);
    }
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++) {
        t_check(slots[pe] == 7 * pe + 1, "phase 2: slot %d holds %ld, want %d", pe, slots[pe],
                7 * pe + 1);
    }

    /* 3: an all-to-all entered late by the slow PE. */
    for (int pe = 0; pe < npes; pe++) {
        src[pe] = 100L * me + pe;
    }
    shmem_barrier_all();
    if (me == slow) {
        compute();
    }
    shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, 1);
    for (int pe = 0; pe < npes; pe++) {
        t_check(dst[pe] == 100L * pe + me, "phase 3: from PE %d got %ld, want %ld", pe, dst[pe],
                100L * pe + me);
    }
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
