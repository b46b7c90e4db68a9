/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * deadlock: every PE waits inside the library and no wait can ever be satisfied. The job
 * must end within seconds, naming what each PE waits in, on every path. The case comes from
 * FSH_DEADLOCK_CASE (each tests/errors/deadlock_*.expect sets it):
 *   exit_barrier   PE 1 returns 0 from main without shmem_finalize; the others wait in
 *                  shmem_barrier_all (PE 1's implicit finalize waits for them)
 *   exit_wait      the same, the others waiting in shmem_wait_until for a flag PE 1 never sets
 *   exit_lock      PE 1 takes a lock and returns 0 without releasing it or finalizing; the
 *                  others wait in shmem_set_lock
 *   fin_barrier    PE 1 calls shmem_finalize while the others wait in a barrier it skipped
 *   wait_fin       PE 0 waits for a flag nobody sets while every other PE is in shmem_finalize
 *   alone          a job of one PE (started without a launcher) waits for a flag
 * Reaching the line after the wait is a failure (the wait cannot be satisfied), and so is a
 * wait the library has not named within FSH_DEADLOCK_WITHIN seconds (default 20: an alarm
 * ends the waiting PE without the message the .expect wants; the library's own abort resets
 * the alarm).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmem.h>

static long flag;
static long lock;

static void late(int sig)
{
    (void)sig;
    static const char msg[] = "deadlock: the wait was not named in time\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(3);
}

/* From here the wait must be named within the limit. */
static void limit(void)
{
    const char *w = getenv("FSH_DEADLOCK_WITHIN");
    signal(SIGALRM, late);
    alarm(w ? (unsigned)atoi(w) : 20);
}

int main(void)
{
    const char *c = getenv("FSH_DEADLOCK_CASE");
    if (!c) {
        fprintf(stderr, "deadlock: set FSH_DEADLOCK_CASE\n");
        return 2;
    }
    shmem_init();
    int me = shmem_my_pe();
    if (strcmp(c, "alone") == 0) {
        limit();
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
        printf("deadlock: PE %d left a wait (%s) that nothing can satisfy\n", me, c);
        shmem_finalize();
        return 1;
    }
    if (shmem_n_pes() < 2) {
        printf("deadlock: needs 2 PEs\n");
        shmem_finalize();
        return 1;
    }
    shmem_barrier_all();
    if (strcmp(c, "exit_barrier") == 0) {
        if (me == 1) {
            return 0;
        }
        limit();
        shmem_barrier_all();
    } else if (strcmp(c, "exit_wait") == 0) {
        if (me == 1) {
            return 0;
        }
        limit();
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    } else if (strcmp(c, "exit_lock") == 0) {
        if (me == 1) {
            shmem_set_lock(&lock);
            shmem_barrier_all();
            return 0;
        }
        shmem_barrier_all();
        limit();
        shmem_set_lock(&lock);
    } else if (strcmp(c, "fin_barrier") == 0) {
        if (me == 1) {
            shmem_finalize();
            return 0;
        }
        limit();
        shmem_barrier_all();
    } else if (strcmp(c, "wait_fin") == 0) {
        if (me != 0) {
            shmem_finalize();
            return 0;
        }
        limit();
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    } else {
        fprintf(stderr, "deadlock: unknown FSH_DEADLOCK_CASE=%s\n", c);
        return 2;
    }
    printf("deadlock: PE %d left a wait (%s) that nothing can satisfy\n", me, c);
    shmem_finalize();
    return 1;
}
