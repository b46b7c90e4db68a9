/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_rmw: shmem_set_lock / shmem_test_lock / shmem_clear_lock give mutual exclusion, so a
 * read-modify-write made of a plain get and put (no atomic) loses no update.
 *
 * Inside the lock a PE reads the counter with shmem_long_g, writes it back plus one with
 * shmem_long_p and quiets; an occupancy word (atomic_fetch_inc on entry must fetch 0, atomic_add
 * of -1 on exit) catches two PEs in the critical section directly.
 *   1. M iterations per PE under lock1 (a static, i.e. symmetric data-segment, lock) on a
 *      counter of PE 0.
 *   2. M iterations per PE under lock2 (a heap lock) on a counter of the last PE, acquired by
 *      a shmem_test_lock loop (it returns 0 once the lock is mine).
 *   3. C iterations holding both locks (always lock1 first), updating both counters.
 *   4. Independence: PE 0 holds lock1 while every other PE does L iterations under lock2; it
 *      releases lock1 only after they are done (a lock2 that waited for lock1 would hang).
 * At the end counter1 == (M + C) * npes and counter2 == (M + C) * npes + L * (npes - 1).
 */
#include "../test.h"

#define NAME "lock_rmw"
#define M 150
#define C 60
#define L 80

static long lock1; /* symmetric: static data, zero-initialised as the spec requires */
static long counter1, inside1;

static int me, npes;

static void enter(long *inside, int pe, const char *what, int it)
{
    long n = shmem_long_atomic_fetch_inc(inside, pe);
    t_check(n == 0, "%s iteration %d: %ld other PE(s) inside the critical section", what, it, n);
}
static void leave(long *inside, int pe)
{
    shmem_long_atomic_add(inside, -1, pe);
}

/* The non-atomic increment the lock protects. */
static void rmw(long *counter, int pe)
{
    long v = shmem_long_g(counter, pe);
    shmem_long_p(counter, v + 1, pe);
    shmem_quiet();
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    int last = npes - 1;

    long *lock2 = shmem_calloc(1, sizeof(long));
    long *counter2 = shmem_calloc(1, sizeof(long));
    long *inside2 = shmem_calloc(1, sizeof(long));
    long *done = shmem_calloc(1, sizeof(long));
    if (!t_check(lock2 && counter2 && inside2 && done, "allocation failed")) {
        shmem_global_exit(1);
    }
    shmem_barrier_all();

    /* ---- 1: set_lock */
    for (int i = 0; i < M; i++) {
        shmem_set_lock(&lock1);
        enter(&inside1, 0, "set_lock", i);
        rmw(&counter1, 0);
        leave(&inside1, 0);
        shmem_clear_lock(&lock1);
    }

    /* ---- 2: test_lock loop */
    for (int i = 0; i < M; i++) {
        int r;
        while ((r = shmem_test_lock(lock2)) != 0) {
            t_check(r == 1, "shmem_test_lock returned %d (want 0 or 1)", r);
        }
        enter(inside2, last, "test_lock", i);
        rmw(counter2, last);
        leave(inside2, last);
        shmem_clear_lock(lock2);
    }

    /* ---- 3: both locks, in a fixed order */
    for (int i = 0; i < C; i++) {
        shmem_set_lock(&lock1);
        enter(&inside1, 0, "nested (lock1)", i);
        shmem_set_lock(lock2);
        enter(inside2, last, "nested (lock2)", i);
        rmw(&counter1, 0);
        rmw(counter2, last);
        leave(inside2, last);
        shmem_clear_lock(lock2);
        leave(&inside1, 0);
        shmem_clear_lock(&lock1);
    }
    shmem_barrier_all();

    /* ---- 4: lock2 works while lock1 is held elsewhere */
    if (me == 0) {
        shmem_set_lock(&lock1);
    }
    shmem_barrier_all(); /* lock1 is held by PE 0 from here */
    if (me != 0) {
        for (int i = 0; i < L; i++) {
            shmem_set_lock(lock2);
            enter(inside2, last, "independent lock2", i);
            rmw(counter2, last);
            leave(inside2, last);
            shmem_clear_lock(lock2);
        }
        shmem_long_atomic_inc(done, 0);
    } else {
        shmem_long_wait_until(done, SHMEM_CMP_EQ, npes - 1);
        shmem_clear_lock(&lock1);
    }
    shmem_barrier_all();

    if (me == 0) {
        long want = (long)(M + C) * npes;
        t_check(counter1 == want, "counter1 (lock1) is %ld, want %ld", counter1, want);
        t_check(inside1 == 0, "lock1 occupancy word ends at %ld", inside1);
    }
    if (me == last) {
        long want = (long)(M + C) * npes + (long)L * (npes - 1);
        t_check(*counter2 == want, "counter2 (lock2) is %ld, want %ld", *counter2, want);
        t_check(*inside2 == 0, "lock2 occupancy word ends at %ld", *inside2);
    }
    /* Both locks are free again: a test_lock takes each at once. */
    shmem_barrier_all();
    if (me == 0) {
        t_check(shmem_test_lock(&lock1) == 0, "lock1 still held after everyone released it");
        shmem_clear_lock(&lock1);
        t_check(shmem_test_lock(lock2) == 0, "lock2 still held after everyone released it");
        shmem_clear_lock(lock2);
    }
    shmem_barrier_all();

    shmem_free(done);
    shmem_free(inside2);
    shmem_free(counter2);
    shmem_free(lock2);
    shmem_finalize();
    return t_finish(NAME);
}
