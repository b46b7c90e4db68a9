/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stop_pe SECONDS TAG: a stopped PE is waited for (tests/faults/stop_pe.sh). Every PE puts a
 * block into its right neighbour and reads it back after a barrier, in a loop. Early in the
 * loop PE 1 forks a helper that stops PE 1 with SIGSTOP, sleeps SECONDS, continues it with
 * SIGCONT and exits; PE 1 then runs a few hundred more rounds and tells every PE to end. The
 * other PEs wait for PE 1 in a barrier (or a quiet) all the while it is stopped. Each PE checks
 * every block it received, and PE 1 measures the longest pause between two of its rounds (it
 * must be the stop: the runner checks it covers most of SECONDS, so the stop really happened
 * inside the loop). Prints `stop_pe: PE n PASS (rounds R, longest pause X s)` or
 * `stop_pe: PE n FAIL (why)`, and exits 0 or 1. TAG is only for the runner's orphan check.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>

#define VICTIM 1
#define NELEMS 512
#define STOP_AT 50   /* the round at which PE 1 forks the helper */
#define AFTER 300    /* rounds after the helper ended */

static long block[NELEMS]; /* what the left neighbour puts (symmetric: a global) */
static long go = 1;        /* PE 1 sets it to 0 on every PE to end the loop */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long value(int pe, long round, long i)
{
    return ((long)pe << 40) ^ (round << 12) ^ i;
}

/* The helper: only async-signal-safe calls (it is a child of a threaded process). It dies
 * with PE 1 (a job that ends early leaves nothing behind). */
static pid_t stopper(unsigned seconds)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) {
            _exit(1);
        }
        struct timespec delay = {0, 20000000}; /* into the loop's stride */
        nanosleep(&delay, NULL);
        kill(parent, SIGSTOP);
        struct timespec stop = {(time_t)seconds, 0};
        while (nanosleep(&stop, &stop) != 0) {
        }
        kill(parent, SIGCONT);
        _exit(0);
    }
    return pid;
}

int main(int argc, char **argv)
{
    unsigned seconds = argc > 1 ? (unsigned)atoi(argv[1]) : 30;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes < 2) {
        printf("stop_pe: SKIP (needs 2 PEs or more)\n");
        shmem_finalize();
        return 77;
    }
    static long src[NELEMS];
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    pid_t helper = -1;
    long round = 0, after = -1, wrong = 0;
    double last = now(), paused = 0;
    for (; go; round++) {
        for (long i = 0; i < NELEMS; i++) {
            src[i] = value(me, round, i);
        }
        shmem_long_put(block, src, NELEMS, right);
        if (me == VICTIM) {
            if (round == STOP_AT) {
                helper = stopper(seconds);
                if (helper < 0) {
                    perror("stop_pe: fork");
                    shmem_global_exit(1);
                }
            }
            if (helper > 0 && after < 0 && waitpid(helper, NULL, WNOHANG) == helper) {
                after = round;
            }
        }
        shmem_barrier_all();
        for (long i = 0; i < NELEMS; i++) {
            wrong += block[i] != value(left, round, i);
        }
        /* Between the barriers: every PE read go last before the first one, and reads it next
         * after the second, so all see the same value. */
        if (me == VICTIM && after >= 0 && round >= after + AFTER) {
            for (int pe = 0; pe < npes; pe++) {
                shmem_long_p(&go, 0, pe);
            }
        }
        shmem_barrier_all(); /* nobody overwrites a block before its reader checked it */
        double t = now();
        if (t - last > paused) {
            paused = t - last;
        }
        last = t;
    }
    shmem_finalize();
    if (wrong) {
        printf("stop_pe: PE %d FAIL (%ld wrong elements in %ld rounds)\n", me, wrong, round);
        return 1;
    }
    printf("stop_pe: PE %d PASS (rounds %ld, longest pause %.1f s)\n", me, round, paused);
    return 0;
}
