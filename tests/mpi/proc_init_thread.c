/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc_init_thread: a thread started before shmem_init (an OpenMP or I/O runtime's) stores to
 * globals throughout shmem_init, which moves the data segment onto a memfd when PEs share a
 * node. One thread increments a plain global, another a global with atomic adds; each counts
 * its increments in a local too. After shmem_init they stop; every global must equal its
 * thread's count: a store that landed in the old pages after they were copied would be lost.
 * A large initialized array after the counters makes the copy long (it is all non-zero, so
 * every page of it is copied), as a real program's data would.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "../test.h"

#define NAME "proc_init_thread"
#define BIG (8u << 20)

static struct {
    volatile long plain;
    char pad1[256];
    long atomic;
    char pad2[256];
    uint8_t big[BIG];
} g;
static volatile int stop; /* main -> threads: shmem_init has returned */

static void *plain_thread(void *arg)
{
    long n = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        g.plain++;
        n++;
    }
    *(long *)arg = n;
    return NULL;
}

static void *atomic_thread(void *arg)
{
    long n = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        __atomic_fetch_add(&g.atomic, 1, __ATOMIC_RELAXED);
        n++;
    }
    *(long *)arg = n;
    return NULL;
}

int main(void)
{
    memset(g.big, 0x5a, sizeof(g.big));
    long counted[2] = {0, 0};
    pthread_t th[2];
    pthread_create(&th[0], NULL, plain_thread, &counted[0]);
    pthread_create(&th[1], NULL, atomic_thread, &counted[1]);
    /* Both threads are storing before shmem_init starts. */
    while (g.plain == 0 || __atomic_load_n(&g.atomic, __ATOMIC_RELAXED) == 0) {
    }
    shmem_init();
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    t_start(NAME);
    t_check(g.plain == counted[0], "plain global %ld after %ld increments: %ld lost",
            (long)g.plain, counted[0], counted[0] - (long)g.plain);
    t_check(g.atomic == counted[1], "atomic global %ld after %ld increments: %ld lost", g.atomic,
            counted[1], counted[1] - g.atomic);
    size_t bad = 0;
    for (size_t i = 0; i < sizeof(g.big); i++) {
        bad += g.big[i] != 0x5a;
    }
    t_check(bad == 0, "%zu bytes of the initialized array changed", bad);
    /* The moved segment is still symmetric memory: a put into it from the left neighbour. */
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_barrier_all();
    shmem_long_p(&g.atomic, 100 + me, (me + 1) % npes);
    shmem_barrier_all();
    t_check(g.atomic == 100 + (me - 1 + npes) % npes, "a put after init: %ld", g.atomic);
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
