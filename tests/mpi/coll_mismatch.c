/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_mismatch: a broadcast whose nelems differ between PEs never writes past the block a
 * receiver asked for (issue 16). Without FABSHMEM_CHECK the call completes: a PE whose parent
 * in the tree passed more receives only its own nelems (guard bytes after its block are
 * unchanged), a PE that asked for more than the root sent keeps the rest of its block as it
 * was, the PE that saw the difference warns and returns nonzero, and later collectives on the
 * team still work (the arrival counts stayed matched). Team and active-set forms, a size of
 * zero on one PE, then matched calls. (FABSHMEM_CHECK=1 makes the mismatch fatal with its
 * sizes named: tests/errors/coll_nelems_mismatch.)
 */
/* The active-set shmem_broadcast64 is deprecated; its size check is tested here all the same. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <shmem.h>

#include "../test.h"

#define BIG 1000
#define SMALL 96
#define GUARD 64
#define FILL 0xee

static long psync[SHMEM_BCAST_SYNC_SIZE];

static unsigned char *dst, *src;
static int me, npes;

/* Fill src (root) with the call's pattern and dst with FILL everywhere, then synchronize. */
static void prepare(uint64_t salt)
{
    t_fill(src, BIG, 0, salt);
    memset(dst, FILL, BIG + GUARD);
    shmem_barrier_all();
}

/* dst[0, got) holds the root's pattern, dst[got, BIG + GUARD) is still FILL. */
static void verify(const char *what, uint64_t salt, size_t got)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < BIG + GUARD; i++) {
        unsigned char want = i < got ? t_byte(0, salt, i) : FILL;
        if (dst[i] != want && bad++ == 0) {
            first = i;
        }
    }
    t_check(bad == 0, "%s: %zu bytes wrong, the first at %zu (the block asked for ends at %zu)",
            what, bad, first, got);
}

int main(void)
{
    shmem_init();
    t_start("coll_mismatch");
    me = shmem_my_pe();
    npes = shmem_n_pes();
    dst = shmem_malloc(BIG + GUARD);
    src = shmem_malloc(BIG);
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++) {
        psync[i] = SHMEM_SYNC_VALUE;
    }
    if (npes < 2) {
        t_skip("coll_mismatch", "needs 2 PEs or more");
    }

    /* 1. The root passes more than the others: they receive SMALL bytes, no more. */
    prepare(1);
    size_t mine = me == 0 ? BIG : SMALL;
    int rc = shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, mine, 0);
    verify("root BIG, others SMALL", 1, me == 0 ? BIG : SMALL);
    t_check(me != 0 || rc != 0, "the root saw the difference but shmem_broadcastmem returned 0");

    /* 2. The root passes less: the others keep the rest of their block as it was. */
    prepare(2);
    mine = me == 0 ? SMALL : BIG;
    shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, mine, 0);
    verify("root SMALL, others BIG", 2, SMALL);

    /* 3. PE 1 passes zero: it receives nothing, and nobody waits for it. */
    prepare(3);
    mine = me == 1 ? 0 : SMALL;
    shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, mine, 0);
    verify("PE 1 zero, others SMALL", 3, me == 1 ? 0 : SMALL);

    /* 4. The active-set form (64-bit elements; the root's dest is left alone there). */
    prepare(4);
    mine = me == 0 ? BIG / 8 : SMALL / 8;
    shmem_broadcast64(dst, src, mine, 0, 0, 0, npes, psync);
    verify("shmem_broadcast64, root BIG, others SMALL", 4, me == 0 ? 0 : SMALL);

    /* 5. Matched calls afterwards: every count is still in step. */
    for (uint64_t salt = 5; salt < 8; salt++) {
        prepare(salt);
        rc = shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, BIG, (int)(salt % (uint64_t)npes));
        t_check(rc == 0, "matched shmem_broadcastmem returned %d", rc);
        /* Every PE filled src alike, so any root sends PE 0's pattern. */
        verify("matched call after the mismatches", salt, BIG);
    }
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
    int code = t_finish(NULL);
    shmem_finalize();
    return code;
}
