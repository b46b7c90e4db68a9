/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_static: global and static variables are symmetric: RMA on them reaches the same variable
 * on the peer, not the heap or a neighbouring variable.
 *
 * Covered: initialised data (.data) arrays and scalars, zero-initialised (.bss) arrays and
 * scalars, a static local of a function, arrays of several KiB. First every PE reads its right
 * neighbour's initial values (which only the right variable holds), then writes its pattern
 * into the neighbour's variables with putmem, typed put, p and iput, then reads back what the
 * neighbour stored locally with getmem, typed get, g and iget.
 */
#include "../test.h"

#define NAME "rma_static"
#define NDATA 2048
#define NBSS 3000
#define NDBL 1000
#define NFN 5000

long g_data[NDATA] = {[0 ... 6] = 0x5a5a5a5a, [7] = 7, [8 ... NDATA - 2] = 0x5a5a5a5a,
                      [NDATA - 1] = -1};
int g_scalar = 1234;
static int s_bss[NBSS];
static short s_scalar;
static double s_init_arr[NDBL] = {[0] = 2.5, [1] = 1.5, [2 ... NDBL - 1] = 2.5};
static char s_small[3] = {'a', 'b', 'c'};

static char *fn_static(void)
{
    static char buf[NFN];
    return buf;
}

/* Expected initial value of g_data[i] and s_init_arr[i]. */
static long data_init(int i)
{
    return i == 7 ? 7 : i == NDATA - 1 ? -1 : 0x5a5a5a5a;
}
static double dbl_init(int i)
{
    return i == 1 ? 1.5 : 2.5;
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    char *fbuf = fn_static();
    static long pl[NDATA];
    static int pi[NBSS];
    static double pd[NDBL];
    static char pc[NFN];

    /* ---- 1: the right neighbour's initial values, read before anyone writes */
    shmem_getmem(pl, g_data, sizeof(g_data), right);
    for (int i = 0; i < NDATA; i++) {
        if (!t_check(pl[i] == data_init(i), "initial g_data[%d] on PE %d = %ld, want %ld", i,
                     right, pl[i], data_init(i))) {
            break;
        }
    }
    shmem_int_get(pi, s_bss, NBSS, right);
    for (int i = 0; i < NBSS; i++) {
        if (!t_check(pi[i] == 0, "initial s_bss[%d] on PE %d = %d", i, right, pi[i])) {
            break;
        }
    }
    shmem_getmem(pc, fbuf, NFN, right);
    for (int i = 0; i < NFN; i++) {
        if (!t_check(pc[i] == 0, "initial function static buf[%d] on PE %d = %d", i, right,
                     pc[i])) {
            break;
        }
    }
    shmem_double_get(pd, s_init_arr, NDBL, right);
    for (int i = 0; i < NDBL; i++) {
        if (!t_check(pd[i] == dbl_init(i), "initial s_init_arr[%d] on PE %d = %g", i, right,
                     pd[i])) {
            break;
        }
    }
    int gs = shmem_int_g(&g_scalar, right);
    t_check(gs == 1234, "initial g_scalar on PE %d = %d, want 1234", right, gs);
    short ss = shmem_short_g(&s_scalar, right);
    t_check(ss == 0, "initial s_scalar on PE %d = %d, want 0", right, ss);
    char sc[3];
    shmem_char_get(sc, s_small, 3, right);
    t_check(sc[0] == 'a' && sc[1] == 'b' && sc[2] == 'c', "initial s_small on PE %d wrong",
            right);
    shmem_barrier_all(); /* everyone has read the initial values */

    /* ---- 2: my pattern into the right neighbour's variables */
    for (int i = 0; i < NDATA; i++) {
        pl[i] = (long)t_pattern(me, (uint64_t)i);
    }
    shmem_putmem(g_data, pl, sizeof(g_data), right);
    for (int i = 0; i < NBSS; i++) {
        pi[i] = (int)t_pattern(me, 10000 + (uint64_t)i);
    }
    shmem_int_put(s_bss + 1, pi + 1, NBSS - 2, right); /* first and last stay 0 */
    t_fill(pc + 3, NFN - 6, me, 20000);
    shmem_putmem(fbuf + 3, pc + 3, NFN - 6, right);
    for (int i = 0; i < NDBL; i++) {
        pd[i] = (double)(int32_t)t_pattern(me, 30000 + (uint64_t)i) / 4.0;
    }
    shmem_double_iput(s_init_arr, pd, 2, 1, NDBL / 2, right); /* even slots; odd keep init */
    shmem_int_p(&g_scalar, 100 + me, right);
    shmem_short_p(&s_scalar, (short)(200 + me), right);
    shmem_char_p(&s_small[1], 'X', right);
    shmem_barrier_all();

    for (int i = 0; i < NDATA; i++) {
        long want = (long)t_pattern(left, (uint64_t)i);
        if (!t_check(g_data[i] == want, "g_data[%d] = %ld after putmem from PE %d, want %ld", i,
                     g_data[i], left, want)) {
            break;
        }
    }
    for (int i = 0; i < NBSS; i++) {
        int want = (i == 0 || i == NBSS - 1) ? 0 : (int)t_pattern(left, 10000 + (uint64_t)i);
        if (!t_check(s_bss[i] == want, "s_bss[%d] = %d after int_put from PE %d, want %d", i,
                     s_bss[i], left, want)) {
            break;
        }
    }
    for (int i = 0; i < 3; i++) {
        t_check(fbuf[i] == 0 && fbuf[NFN - 1 - i] == 0,
                "function static: bytes outside the put written");
    }
    t_verify(fbuf + 3, NFN - 6, left, 20000, "function static buf after putmem at offset 3");
    for (int i = 0; i < NDBL; i++) {
        double want = i % 2 == 0 ? (double)(int32_t)t_pattern(left, 30000 + (uint64_t)i / 2) / 4.0
                                 : dbl_init(i);
        if (!t_check(s_init_arr[i] == want, "s_init_arr[%d] = %g after iput from PE %d, want %g",
                     i, s_init_arr[i], left, want)) {
            break;
        }
    }
    t_check(g_scalar == 100 + left, "g_scalar = %d, want %d", g_scalar, 100 + left);
    t_check(s_scalar == 200 + left, "s_scalar = %d, want %d", s_scalar, 200 + left);
    t_check(s_small[0] == 'a' && s_small[1] == 'X' && s_small[2] == 'c',
            "s_small = %c%c%c, want aXc", s_small[0], s_small[1], s_small[2]);
    shmem_barrier_all(); /* checked before the variables change again */

    /* ---- 3: local stores, then the right neighbour reads them */
    for (int i = 0; i < NDATA; i++) {
        g_data[i] = (long)t_pattern(me, 40000 + (uint64_t)i);
    }
    for (int i = 0; i < NBSS; i++) {
        s_bss[i] = (int)t_pattern(me, 50000 + (uint64_t)i);
    }
    t_fill(fbuf, NFN, me, 60000);
    for (int i = 0; i < NDBL; i++) {
        s_init_arr[i] = (double)i * 0.25 + me;
    }
    g_scalar = 300 + me;
    s_scalar = (short)(400 + me);
    shmem_barrier_all();

    memset(pl, 0, sizeof(pl));
    shmem_long_get(pl, g_data, NDATA, right);
    for (int i = 0; i < NDATA; i++) {
        long want = (long)t_pattern(right, 40000 + (uint64_t)i);
        if (!t_check(pl[i] == want, "long_get g_data[%d] from PE %d = %ld, want %ld", i, right,
                     pl[i], want)) {
            break;
        }
    }
    memset(pi, 0, sizeof(pi));
    shmem_getmem(pi, s_bss, sizeof(s_bss), right);
    for (int i = 0; i < NBSS; i++) {
        int want = (int)t_pattern(right, 50000 + (uint64_t)i);
        if (!t_check(pi[i] == want, "getmem s_bss[%d] from PE %d = %d, want %d", i, right, pi[i],
                     want)) {
            break;
        }
    }
    memset(pc, 0, sizeof(pc));
    shmem_getmem_nbi(pc, fbuf, NFN, right);
    shmem_quiet();
    t_verify(pc, NFN, right, 60000, "getmem_nbi of function static from PE %d", right);
    memset(pd, 0, sizeof(pd));
    shmem_double_iget(pd, s_init_arr + 1, 1, 3, NDBL / 3, right); /* elements 1, 4, 7, ... */
    for (int i = 0; i < NDBL / 3; i++) {
        double want = (double)(1 + 3 * i) * 0.25 + right;
        if (!t_check(pd[i] == want, "iget s_init_arr[%d] from PE %d = %g, want %g", 1 + 3 * i,
                     right, pd[i], want)) {
            break;
        }
    }
    gs = shmem_int_g(&g_scalar, right);
    t_check(gs == 300 + right, "g of g_scalar from PE %d = %d, want %d", right, gs, 300 + right);
    ss = shmem_short_g(&s_scalar, right);
    t_check(ss == 400 + right, "g of s_scalar from PE %d = %d, want %d", right, ss, 400 + right);

    shmem_barrier_all();
    shmem_finalize();
    return t_finish(NAME);
}
