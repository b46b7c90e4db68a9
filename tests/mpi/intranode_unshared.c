/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * intranode_unshared: a PE that cannot share its memory. Before shmem_init, the PE of launcher
 * rank 1 (PMIX_RANK) installs a seccomp filter that refuses memfd_create, so its heap and its
 * static data stay private: no other PE can map them, and it maps no other PE.
 *
 * With FABSHMEM_FABRIC=always (set here unless the environment says otherwise) the job runs,
 * and everything between PE 1 and the others goes through the provider while the rest of the
 * node still maps each other: shmem_ptr must be NULL exactly for the pairs with PE 1, and puts,
 * gets, AMOs (all through the fabric: not every PE is mapped) and put-with-signal between
 * every pair are checked. With FABSHMEM_FABRIC=auto the same job must stop in shmem_init with
 * the reason (tests/errors/no_fabric_unmapped.expect runs this program that way).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <shmem.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "../test.h"

#define MAXPE 64
#define BLOCK 1024 /* bytes each PE puts with a signal to the next */

static long sdata[MAXPE]; /* static memory: PE 1's stays private too */

/* memfd_create fails with ENOSYS in this process from now on (as on a kernel without it). */
static int refuse_memfd(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_memfd_create, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
        return -1;
    }
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static long tag(int from, int to)
{
    return 1000L * (from + 1) + to;
}

int main(void)
{
    const char *rank = getenv("PMIX_RANK");
    int refused = rank && strcmp(rank, "1") == 0 ? refuse_memfd() : 1;
    setenv("FABSHMEM_FABRIC", "always", 0);
    shmem_init();
    t_start("intranode_unshared");
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (!t_check(n >= 2 && n <= MAXPE, "2..%d PEs", MAXPE) ||
        !t_check(me != 1 || refused == 0, "PE 1 could not install its seccomp filter")) {
        return t_finish(NULL);
    }
    long *h = shmem_calloc(MAXPE, sizeof(long));
    long *got = shmem_calloc(MAXPE, sizeof(long));
    long *counter = shmem_calloc(1, sizeof(long));
    long *fv = shmem_calloc(1, sizeof(long)); /* a PE's fetched value, for the others to read */
    char *block = shmem_calloc(BLOCK, 1);
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    char *out = malloc(BLOCK);
    if (!t_check(h && got && counter && fv && block && sig && out, "allocation")) {
        return t_finish(NULL);
    }

    /* Nobody maps PE 1, PE 1 maps nobody; the other PEs of a one-node job do map each other
     * (FABSHMEM_INTRANODE=fabric or FABSHMEM_SIM_NODES take that away: not checked then). */
    for (int pe = 0; pe < n; pe++) {
        if (pe != me && (pe == 1 || me == 1)) {
            t_check(shmem_ptr(h, pe) == NULL, "shmem_ptr to PE %d is not NULL", pe);
            t_check(shmem_ptr(sdata, pe) == NULL, "shmem_ptr to PE %d's static data", pe);
        }
    }

    /* Puts into heap and static memory of every PE, then gets of every PE's own word. */
    for (int pe = 0; pe < n; pe++) {
        long v = tag(me, pe);
        shmem_long_put(&h[me], &v, 1, pe);
        shmem_long_p(&sdata[me], v, pe);
    }
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        t_check(h[pe] == tag(pe, me), "heap word from PE %d: %ld, want %ld", pe, h[pe],
                tag(pe, me));
        t_check(sdata[pe] == tag(pe, me), "static word from PE %d: %ld, want %ld", pe,
                sdata[pe], tag(pe, me));
        long g = shmem_long_g(&h[me], pe);
        t_check(g == tag(me, pe), "get from PE %d: %ld, want %ld", pe, g, tag(me, pe));
        shmem_long_get(&got[pe], &sdata[pe], 1, pe);
        t_check(got[pe] == tag(pe, pe), "get of PE %d's static word: %ld, want %ld", pe, got[pe],
                tag(pe, pe));
    }

    /* Every PE adds to one counter on every PE: each must end at n, and the fetched values
     * at each target must be distinct (one atomicity domain for all). */
    long fetched[MAXPE];
    for (int pe = 0; pe < n; pe++) {
        fetched[pe] = shmem_long_atomic_fetch_inc(counter, pe);
    }
    shmem_barrier_all();
    t_check(*counter == n, "counter %ld after %d increments", *counter, n);
    for (int pe = 0; pe < n; pe++) {
        *fv = fetched[pe];
        shmem_barrier_all();
        unsigned long long seen = 0;
        for (int from = 0; from < n; from++) {
            long f = shmem_long_g(fv, from);
            t_check(f >= 0 && f < n && !(seen & (1ULL << f)),
                    "PE %d's fetch_inc at PE %d returned %ld (repeated or out of range)", from,
                    pe, f);
            seen |= f >= 0 && f < n ? 1ULL << f : 0;
        }
        shmem_barrier_all();
    }

    /* A put-with-signal around the ring: the data must be there when the signal is. */
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    for (int i = 0; i < BLOCK; i++) {
        out[i] = (char)(me * 7 + i);
    }
    shmem_putmem_signal(block, out, BLOCK, sig, 1, SHMEM_SIGNAL_SET, next);
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    int bad = 0;
    for (int i = 0; i < BLOCK; i++) {
        bad += block[i] != (char)(prev * 7 + i);
    }
    t_check(bad == 0, "%d of %d bytes from PE %d wrong when its signal arrived", bad, BLOCK,
            prev);

    shmem_barrier_all();
    free(out);
    shmem_free(sig);
    shmem_free(block);
    shmem_free(fv);
    shmem_free(counter);
    shmem_free(got);
    shmem_free(h);
    return t_finish(NULL);
}
