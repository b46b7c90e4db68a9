/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault_pe MODE: the program of the fault tests (tests/faults/kill_pe.sh). Every PE runs MODE's
 * operation in a loop that never ends by itself; PE 1, the victim, kills itself with SIGKILL
 * at iteration 20, so the survivors are inside (or entering) the operation when it dies:
 *   barrier      shmem_barrier_all
 *   alltoall     shmem_long_alltoall of 256 longs per peer
 *   signal_wait  the victim sends each survivor a put-with-signal per iteration; survivors
 *                wait for it with shmem_signal_wait_until (a user wait: no timeout by default)
 *   atomic       survivors fetch-add a counter on the victim, the victim one on PE 0
 *   forever      barriers and no victim: the job runs until the launcher is signalled
 *                (tests/faults/signal_mpirun.sh); each PE prints `fault_pe: PE n ready` first
 *   compute      like forever, but the PEs compute (sleep) without calling the library
 *                (tests/faults/kill_mpirun.sh: only the bootstrap's thread can see mpirun go)
 * The survivors must end (through the launcher, a fabric error, or their liveness probes) with
 * a message naming the victim; the runner measures how long that takes. Before dying the
 * victim prints `fault_pe: PE 1 killed at <CLOCK_REALTIME seconds>` for the runner.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <shmem.h>

#define VICTIM 1
#define KILL_AT 20
#define NELEMS 256

static void die(int it, int sig)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("fault_pe: PE %d killed at %ld.%09ld (iteration %d)\n", VICTIM, (long)ts.tv_sec,
           ts.tv_nsec, it);
    fflush(stdout);
    raise(sig);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes < 2) {
        printf("fault_pe: SKIP (needs 2 PEs or more)\n");
        shmem_finalize();
        return 77;
    }
    long *src = shmem_calloc((size_t)NELEMS * (size_t)npes, sizeof(long));
    long *dst = shmem_calloc((size_t)NELEMS * (size_t)npes, sizeof(long));
    long *data = shmem_calloc(1, sizeof(long));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    long *counter = shmem_calloc(1, sizeof(long));
    if (!src || !dst || !data || !sig || !counter) {
        printf("fault_pe: FAIL (shmem_calloc)\n");
        return 1;
    }
    bool compute = strcmp(mode, "compute") == 0;
    bool forever = compute || strcmp(mode, "forever") == 0;
    if (forever) {
        printf("fault_pe: PE %d ready\n", me);
        fflush(stdout);
    }
    for (int it = 0;; it++) {
        if (me == VICTIM && it == KILL_AT && !forever) {
            die(it, SIGKILL);
        }
        if (compute) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        } else if (forever || strcmp(mode, "barrier") == 0) {
            shmem_barrier_all();
        } else if (strcmp(mode, "alltoall") == 0) {
            shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, NELEMS);
        } else if (strcmp(mode, "signal_wait") == 0) {
            if (me == VICTIM) {
                long v = it;
                for (int pe = 0; pe < npes; pe++) {
                    if (pe != VICTIM) {
                        shmem_long_put_signal(data, &v, 1, sig, (uint64_t)it + 1,
                                              SHMEM_SIGNAL_SET, pe);
                    }
                }
                shmem_quiet();
            } else {
                shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)it + 1);
            }
        } else if (strcmp(mode, "atomic") == 0) {
            (void)shmem_long_atomic_fetch_add(counter, 1, me == VICTIM ? 0 : VICTIM);
        } else {
            printf("fault_pe: FAIL (unknown mode '%s')\n", mode);
            return 1;
        }
    }
}
