/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc_fork: fork after shmem_init gives the child private memory. The parent sets globals
 * (.data and .bss) and heap words, forks, and stores new values at once; the child checks it
 * sees the values as they were at the fork, overwrites them all, and exits (through exit, so
 * the library's at-exit handlers run in it) with 0 when it saw the right values. The parent
 * then checks its values are its own, that peers' puts and AMOs still land in the same memory,
 * and that system("true") works. Besides words, the heap holds 6 MiB of written data (whole
 * 2 MiB blocks, which the child's copy takes in large pages). PE 0 prints the median fork+wait
 * time (information only).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../test.h"

#define NAME "proc_fork"
#define NHEAP 1024
#define NGLOB 1024
#define ROUNDS 20
#define NBIG (6u << 17) /* 6 MiB of longs: whole 2 MiB blocks of data, copied in large pages */

static long gdata = 7;      /* .data */
static long gbss[NGLOB];    /* .bss */
static long from_left = -1; /* a peer's put lands here after the forks */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long *big;

static int big_is(int me)
{
    for (size_t i = 0; i < NBIG; i++) {
        if (big[i] != (long)(i * 3 + (size_t)me)) {
            return 0;
        }
    }
    return 1;
}

/* The child: did it see the parent's values of the fork's time? Then it scribbles. */
static int child(long *heap, int me, long round)
{
    int ok = gdata == 1000 + me + round && big_is(me);
    for (size_t i = 0; i < NBIG; i++) {
        big[i] = -1;
    }
    for (int i = 0; i < NGLOB; i++) {
        ok = ok && gbss[i] == me * 10000L + i + round;
    }
    for (int i = 0; i < NHEAP; i++) {
        ok = ok && heap[i] == me * 100000L + i + round;
    }
    gdata = -1;
    for (int i = 0; i < NGLOB; i++) {
        gbss[i] = -1;
    }
    for (int i = 0; i < NHEAP; i++) {
        heap[i] = -1;
    }
    return ok ? 0 : 1;
}

static void set_values(long *heap, int me, long round)
{
    gdata = 1000 + me + round;
    for (int i = 0; i < NGLOB; i++) {
        gbss[i] = me * 10000L + i + round;
    }
    for (int i = 0; i < NHEAP; i++) {
        heap[i] = me * 100000L + i + round;
    }
}

static int values_are(long *heap, int me, long round)
{
    int ok = gdata == 1000 + me + round;
    for (int i = 0; i < NGLOB; i++) {
        ok = ok && gbss[i] == me * 10000L + i + round;
    }
    for (int i = 0; i < NHEAP; i++) {
        ok = ok && heap[i] == me * 100000L + i + round;
    }
    return ok;
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *heap = shmem_malloc(NHEAP * sizeof(long));
    long *counter = shmem_calloc(1, sizeof(long));
    big = shmem_malloc(NBIG * sizeof(long));
    for (size_t i = 0; i < NBIG; i++) {
        big[i] = (long)(i * 3 + (size_t)me);
    }
    double us[ROUNDS];
    for (long r = 0; r < ROUNDS; r++) {
        set_values(heap, me, r);
        double t0 = now_us();
        pid_t pid = fork();
        if (pid == 0) {
            exit(child(heap, me, r));
        }
        t_check(pid > 0, "fork failed");
        /* At once, while the child may still be reading: it must not see these. */
        set_values(heap, me, r + 1);
        int status = 0;
        t_check(waitpid(pid, &status, 0) == pid, "waitpid failed");
        us[r] = now_us() - t0;
        t_check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "round %ld: the child saw other values than the parent's at the fork "
                "(status %d)", r, status);
        t_check(values_are(heap, me, r + 1) && big_is(me),
                "round %ld: the child's stores changed the parent's memory", r);
    }
    /* Peers still reach the same memory: a put into a global and the heap, an AMO. */
    int right = (me + 1) % npes, left = (me - 1 + npes) % npes;
    shmem_barrier_all();
    shmem_long_p(&from_left, 5000 + me, right);
    shmem_long_p(&heap[7], 6000 + me, right);
    shmem_long_atomic_inc(counter, 0);
    shmem_barrier_all();
    t_check(from_left == 5000 + left, "a peer's put into a global after fork: %ld", from_left);
    t_check(heap[7] == 6000 + left, "a peer's put into the heap after fork: %ld", heap[7]);
    if (me == 0) {
        t_check(*counter == npes, "AMO count after fork: %ld, want %d", *counter, npes);
    }
    int rc = system("true");
    t_check(rc == 0, "system(\"true\") returned %d", rc);
    if (me == 0) {
        qsort(us, ROUNDS, sizeof(us[0]), cmp);
        printf("  fork+wait median %.0f us (heap %s)\n", us[ROUNDS / 2],
               getenv("SHMEM_SYMMETRIC_SIZE") ? getenv("SHMEM_SYMMETRIC_SIZE") : "default");
    }
    shmem_barrier_all();
    shmem_free(big);
    shmem_free(counter);
    shmem_free(heap);
    rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
