/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_domain: one atomicity domain for the whole job, whichever path each PE takes to a
 * location. Every PE hammers the same counters of PE 0 and of the last PE (heap and static)
 * with atomic_inc and atomic_fetch_add at once; totals must be exact and every fetched value
 * unique. With FABSHMEM_SIM_NODES=2 (the shm-nodes2 configuration) half the PEs are on the
 * target's pretend node and half are not, and local.c's rule sends every AMO through the
 * provider. (Breaking that rule does not make this test fail on the shm provider, which
 * applies atomics with CPU atomic instructions itself; it matters for NICs that apply them.)
 */
#include "../test.h"

#define NAME "amo_domain"
#define ROUNDS 5000

static long sctr;

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *hctr = shmem_calloc(2, sizeof(long));
    unsigned char *seen = calloc((size_t)n * ROUNDS, 1);
    if (!t_check(hctr != NULL && seen != NULL, "allocation")) {
        return t_finish(NULL);
    }
    sctr = 0;
    shmem_barrier_all();
    int last = n - 1;
    for (int i = 0; i < ROUNDS; i++) {
        shmem_long_atomic_inc(&hctr[0], 0);
        shmem_long_atomic_inc(&sctr, last);
        long v = shmem_long_atomic_fetch_add(&hctr[1], 1, last);
        if (t_check(v >= 0 && v < (long)n * ROUNDS, "fetched %ld out of range", v)) {
            seen[v] = 1;
        }
    }
    shmem_barrier_all();
    long total = (long)n * ROUNDS;
    if (me == 0) {
        t_check(hctr[0] == total, "heap counter of PE 0 is %ld, want %ld", hctr[0], total);
    }
    if (me == last) {
        t_check(sctr == total, "static counter of PE %d is %ld, want %ld", last, sctr, total);
        t_check(hctr[1] == total, "fetch_add counter of PE %d is %ld, want %ld", last, hctr[1],
                total);
    }
    /* Each fetched value was fetched by exactly one PE: OR the marks over all PEs, count. */
    static long count;
    static long mine_n;
    long mine = 0;
    for (long v = 0; v < total; v++) {
        mine += seen[v];
    }
    mine_n = mine;
    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &count, &mine_n, 1);
    t_check(count == total, "%ld distinct values fetched over all PEs, want %ld", count, total);
    free(seen);
    shmem_free(hctr);
    shmem_finalize();
    return t_finish(NULL);
}
