/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prof_interpose: the OpenSHMEM profiling interface. Run with tests/prof/libfsh_prof_tool.so
 * LD_PRELOADed (prof_interpose.env): the tool defines shmem_putmem, shmem_int_put,
 * shmem_barrier_all, shmem_malloc, shmem_free and shmem_pcontrol, counts the calls and
 * forwards them to the pshmem_ names. This program knows nothing of the tool: it makes a known
 * number of calls, checks their data, and asks the tool for its counts through
 * shmem_pcontrol(3, long *) (a tool-defined level, as the spec allows). The counts must be
 * exactly the program's own calls: the library's internal work (the barriers inside
 * shmem_malloc and shmem_free, shmalloc and shmem_realloc allocating through the
 * implementation, shmem_team_sync) never goes through the interposable shmem_ names.
 * Without the tool the counts stay -1 and the test fails. prof_static is this program with the
 * tool's object linked in and libfabshmem linked statically (Makefile.am): no LD_PRELOAD, the
 * same counts.
 */
/* shmalloc and shfree are called on purpose: deprecated routines must not reach shmem_ names. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "../test.h"

#ifndef NAME
#define NAME "prof_interpose"
#endif

enum { C_PUTMEM, C_INT_PUT, C_BARRIER_ALL, C_MALLOC, C_FREE, C_PCONTROL, C_N };
static const char *cname[C_N] = {"shmem_putmem",  "shmem_int_put", "shmem_barrier_all",
                                 "shmem_malloc",  "shmem_free",    "shmem_pcontrol"};

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes(), right = (me + 1) % npes;
    int left = (me + npes - 1) % npes;

    long *buf = shmem_malloc(8 * sizeof(long)); /* malloc 1 (its barrier is internal) */
    int *ibuf = shmalloc(8 * sizeof(int));      /* deprecated: not shmem_malloc */
    char *more = shmem_realloc(NULL, 64);       /* allocates without calling shmem_malloc */
    shmem_team_sync(SHMEM_TEAM_WORLD);          /* not shmem_barrier_all */
    long mine[8];
    int imine[8];
    for (int i = 0; i < 8; i++) {
        mine[i] = (long)t_pattern(me, (uint64_t)i);
        imine[i] = (int)t_pattern32(me, (uint64_t)i);
    }
    shmem_putmem(buf, mine, 4 * sizeof(long), right); /* putmem 1..3 */
    shmem_putmem(buf + 4, mine + 4, 2 * sizeof(long), right);
    shmem_putmem(buf + 6, mine + 6, 2 * sizeof(long), right);
    shmem_int_put(ibuf, imine, 5, right); /* int_put 1..2 */
    shmem_int_put(ibuf + 5, imine + 5, 3, right);
    shmem_barrier_all(); /* barrier_all 1 */
    for (int i = 0; i < 8; i++) {
        t_check(buf[i] == (long)t_pattern(left, (uint64_t)i), "shmem_putmem element %d", i);
        t_check(ibuf[i] == (int)t_pattern32(left, (uint64_t)i), "shmem_int_put element %d", i);
    }
    shmem_barrier_all(); /* barrier_all 2 */
    shmem_pcontrol(1);   /* pcontrol 1 */

    long got[C_N], want[C_N] = {3, 2, 2, 1, 0, 2};
    for (int i = 0; i < C_N; i++) {
        got[i] = -1;
    }
    shmem_pcontrol(3, got); /* pcontrol 2: the tool's counts */
    for (int i = 0; i < C_N; i++) {
        t_check(got[i] == want[i], "the tool counted %ld calls of %s, want %ld%s", got[i],
                cname[i], want[i],
                got[i] == -1 ? " (tool not loaded: LD_PRELOAD, or its object not linked in)" : "");
    }

    shmem_free(more); /* counted after the check: free 1 */
    shfree(ibuf);
    shmem_free(buf);
    shmem_finalize();
    return t_finish(NAME);
}
