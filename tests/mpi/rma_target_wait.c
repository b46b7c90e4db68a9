/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_target_wait: a PE waiting in a barrier keeps serving the puts and gets aimed at it through
 * the provider, by polling, not between naps, even after the kernel preempted it in that wait.
 *
 * With manual data progress (shm, tcp;ofi_rxm, efa) a delivery-complete put and a get complete
 * only when the target's engine polls, so a target's wait is its service loop. A wait on a
 * crowded core may sleep between polls (runtime/nap.c); a target doing so held each put + quiet
 * and each get for one nanosleep (20 to 70 us here against 1 us), and once preempted it napped
 * in its long waits for a second.
 *
 * PE 1 makes its core crowded: its main thread and a busy thread of its own are pinned to one
 * CPU, the busy one spinning for BUSY_MS while the main thread enters shmem_barrier_all, so the
 * kernel preempts the wait. PE 0 lets that happen, then does ROUNDS rounds of a put + quiet and
 * a get of the value back (checked), and enters the barrier. PE 1 counts the voluntary context
 * switches of its main thread across the barrier (getrusage RUSAGE_THREAD): each nap is one,
 * a spinning or yielding wait makes none (a preemption or sched_yield is counted as
 * involuntary). Failing: more than ROUNDS / 4 (napping makes at least one per round). The test
 * asserts no time; it prints PE 0's median round for the reader. Its .env sends every PE through
 * the provider (FABSHMEM_INTRANODE=fabric), so each configuration tests its provider.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../test.h"

#define NAME "rma_target_wait"
#define ROUNDS 2000
#define BUSY_MS 30
#define PE0_DELAY_US 60000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void *busy(void *arg)
{
    double end = now_us() + BUSY_MS * 1000.0;
    volatile unsigned long spins = 0;
    (void)arg;
    while (now_us() < end) {
        spins++;
    }
    return NULL;
}

static long voluntary_switches(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    uint64_t *word = shmem_calloc(1, sizeof(uint64_t));
    double *lat = calloc(ROUNDS, sizeof(double));
    if (npes < 2) {
        shmem_finalize();
        t_skip(NAME, "needs 2 PEs");
    }
    if (!t_check(word != NULL && lat != NULL, "allocation failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }
    shmem_barrier_all();
    if (me == 1) {
        /* Crowd this PE's core: the barrier's wait and a busy thread share one CPU. */
        cpu_set_t old, one;
        pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
        pthread_t th;
        int started = pthread_create(&th, &attr, busy, NULL) == 0;
        t_check(started, "could not start the busy thread");
        long before = voluntary_switches();
        shmem_barrier_all(); /* PE 0's rounds run while this waits */
        long naps = voluntary_switches() - before;
        if (started) {
            pthread_join(th, NULL);
        }
        pthread_attr_destroy(&attr);
        pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
        printf("%s: PE 1 made %ld voluntary context switches waiting in the barrier while PE 0 "
               "ran %d put + quiet + get rounds at it\n", NAME, naps, ROUNDS);
        t_check(naps >= 0 && naps <= ROUNDS / 4,
                "the target's wait slept %ld times during %d rounds aimed at it: it served them "
                "between naps instead of polling", naps, ROUNDS);
    } else {
        if (me == 0) {
            usleep(PE0_DELAY_US); /* PE 1's wait gets preempted meanwhile */
            long wrong = 0;
            for (int r = 0; r < ROUNDS; r++) {
                uint64_t v = (uint64_t)(r + 1) * 0x9e3779b97f4a7c15ULL;
                double t0 = now_us();
                shmem_uint64_p(word, v, 1);
                shmem_quiet();
                uint64_t got = shmem_uint64_g(word, 1);
                lat[r] = now_us() - t0;
                if (got != v && wrong++ < 3) {
                    t_check(0, "round %d: got 0x%llx back, put 0x%llx", r,
                            (unsigned long long)got, (unsigned long long)v);
                }
            }
            t_check(wrong == 0, "%ld of %d rounds read back a value other than the one put", wrong,
                    ROUNDS);
            qsort(lat, ROUNDS, sizeof(double), cmp_double);
            printf("%s: PE 0: put + quiet + get to a PE waiting in a barrier, median %.2f us "
                   "(not judged)\n", NAME, lat[ROUNDS / 2]);
        }
        shmem_barrier_all();
    }
    free(lat);
    shmem_free(word);
    shmem_finalize();
    return t_finish(NAME);
}
