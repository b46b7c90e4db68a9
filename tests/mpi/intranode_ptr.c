/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * intranode_ptr: shmem_ptr and shmem_team_ptr give load/store access to exactly the PEs the
 * intra-node path maps: with FABSHMEM_INTRANODE=auto (the default) every PE of this node (the
 * members of SHMEM_TEAM_SHARED, which FABSHMEM_SIM_NODES splits) and the caller itself; with
 * FABSHMEM_INTRANODE=fabric only the caller. Every PE stores through every pointer it gets,
 * into heap and static memory, and every PE checks what arrived in its own memory: from each
 * PE that could reach it, and nothing from the others.
 */
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "../test.h"

#define MAXPE 64

static long sdata[MAXPE];

static long tag(int from, int to)
{
    return 1000L * (from + 1) + to;
}

int main(void)
{
    shmem_init();
    t_start("intranode_ptr");
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (!t_check(n <= MAXPE, "at most %d PEs", MAXPE)) {
        return t_finish(NULL);
    }
    const char *mode = getenv("FABSHMEM_INTRANODE");
    int fabric = mode && strcmp(mode, "fabric") == 0;
    long *h = shmem_calloc(MAXPE, sizeof(long));
    if (!t_check(h != NULL, "shmem_calloc")) {
        return t_finish(NULL);
    }

    int local = 0;
    for (int pe = 0; pe < n; pe++) {
        int shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) >= 0;
        int expect = pe == me || (shared && !fabric);
        long *p = shmem_ptr(h, pe);
        long *q = shmem_ptr(sdata, pe);
        t_check((p != NULL) == expect, "shmem_ptr(heap, %d) = %p, expected %s", pe, (void *)p,
              expect ? "a pointer" : "NULL");
        t_check((q != NULL) == expect, "shmem_ptr(static, %d) = %p, expected %s", pe, (void *)q,
              expect ? "a pointer" : "NULL");
        if (pe == me) {
            t_check(p == h && q == sdata, "shmem_ptr to myself must be the address itself");
        }
        if (p) {
            p[me] = tag(me, pe);
            q[me] = -tag(me, pe);
            local++;
        }
    }
    /* shmem_team_ptr on the shared team: every member, in the team's numbering. */
    int ns = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    for (int i = 0; i < ns; i++) {
        int world = shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD);
        long *p = shmem_team_ptr(SHMEM_TEAM_SHARED, h, i);
        t_check(p == shmem_ptr(h, world), "shmem_team_ptr(SHARED, %d) differs from shmem_ptr(%d)",
              i, world);
    }
    long stack_var = 0;
    t_check(shmem_ptr(&stack_var, me) == NULL, "shmem_ptr of a stack address must be NULL");
    t_check(shmem_ptr(h, n) == NULL && shmem_ptr(h, -1) == NULL, "shmem_ptr of a bad PE must be NULL");

    shmem_barrier_all();
    int got = 0;
    for (int pe = 0; pe < n; pe++) {
        int shared = shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) >= 0;
        int reached = pe == me || (shared && !fabric);
        long want = reached ? tag(pe, me) : 0;
        t_check(h[pe] == want, "heap slot of PE %d is %ld, expected %ld", pe, h[pe], want);
        t_check(sdata[pe] == -want, "static slot of PE %d is %ld, expected %ld", pe, sdata[pe],
              -want);
        got += reached;
    }
    t_check(got == local, "reached %d PEs but was reached by %d", local, got);
    shmem_barrier_all();
    shmem_free(h);
    shmem_finalize();
    return t_finish(NULL);
}
