/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * deadlock_none: long waits that end are never taken for a deadlock (live.c: every PE waits
 * in the library and nothing moves). With FABSHMEM_PROBE_INTERVAL=0.5 (deadlock_none.env) a
 * deadlock is named after about 3 intervals; each phase keeps every PE but one waiting for
 * about 6 intervals:
 *   1. a chain: PE i waits in shmem_wait_until for PE i+1, the last PE computes (outside the
 *      library), then sets PE n-2's flag, which sets PE n-3's, ... down to PE 0;
 *   2. a lock: PE n-1 holds it and computes while the others wait in shmem_set_lock, then each
 *      takes it in turn and adds to a counter under it;
 *   3. threads (FSH_DEADLOCK_THREADS=1, deadlock_none_threads.env: SHMEM_THREAD_MULTIPLE):
 *      every PE's main thread waits in the library (PE 0 in shmem_wait_until, the others in
 *      shmem_barrier_all) while a second thread of the last PE sleeps, then sets PE 0's flag:
 *      a multi-threaded PE is never judged, since a thread outside the library may act.
 * Every phase checks the values that crossed it.
 */
#include <pthread.h>
#include <time.h>

#include "../test.h"

#define NAME "deadlock_none"

static long flag[3];
static long lock;
static long counter;

static void compute(void)
{
    struct timespec ts = {3, 0}; /* 6 probe intervals */
    nanosleep(&ts, NULL);
}

static void *late_setter(void *arg)
{
    (void)arg;
    compute();
    shmem_long_atomic_set(&flag[2], 77, 0);
    return NULL;
}

int main(void)
{
    const char *th = getenv("FSH_DEADLOCK_THREADS");
    int threads = th && strcmp(th, "1") == 0;
    if (threads) {
        int provided = 0;
        if (shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) != 0 ||
            provided != SHMEM_THREAD_MULTIPLE) {
            printf("%s: SKIP (no SHMEM_THREAD_MULTIPLE)\n", NAME);
            return 77;
        }
    } else {
        shmem_init();
    }
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int last = npes - 1;
    if (npes < 2) {
        t_skip(NAME, "needs 2 PEs");
    }

    if (!threads) {
        /* 1: the chain. */
        if (me == last) {
            compute();
        } else {
            shmem_long_wait_until(&flag[0], SHMEM_CMP_EQ, 100 + me + 1);
        }
        if (me > 0) {
            shmem_long_atomic_set(&flag[0], 100 + me, me - 1);
        }
        t_check(me == last || flag[0] == 100 + me + 1, "phase 1: flag %ld, want %d", flag[0],
                100 + me + 1);
        shmem_barrier_all();

        /* 2: the lock, held by a PE that computes. */
        if (me == last) {
            shmem_set_lock(&lock);
        }
        shmem_barrier_all();
        if (me == last) {
            compute();
            shmem_long_atomic_add(&counter, 1, 0);
            shmem_clear_lock(&lock);
        } else {
            shmem_set_lock(&lock);
            long c = shmem_long_atomic_fetch(&counter, 0);
            shmem_long_atomic_set(&counter, c + 10, 0);
            shmem_clear_lock(&lock);
        }
        shmem_barrier_all();
        if (me == 0) {
            t_check(counter == 1 + 10L * (npes - 1), "phase 2: counter %ld, want %ld", counter,
                    1 + 10L * (npes - 1));
        }
    } else {
        /* 3: every main thread waits; a second thread of the last PE acts. */
        pthread_t t;
        if (me == last && pthread_create(&t, NULL, late_setter, NULL) != 0) {
            t_check(0, "phase 3: pthread_create failed");
            shmem_long_atomic_set(&flag[2], 77, 0);
        } else if (me == last) {
            shmem_barrier_all();
            pthread_join(t, NULL);
        }
        if (me == 0) {
            shmem_long_wait_until(&flag[2], SHMEM_CMP_EQ, 77);
            t_check(flag[2] == 77, "phase 3: flag %ld, want 77", flag[2]);
        }
        if (me != last) {
            shmem_barrier_all();
        }
    }
    shmem_barrier_all();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
