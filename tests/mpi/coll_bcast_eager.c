/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_bcast_eager: back-to-back world-team broadcasts with no barrier between them, where a
 * root may run a whole ring of calls ahead of a slow PE (broadcast.c's eager slots on one
 * node; the ready path elsewhere, which this checks the same way).
 *
 *  1. 1200 calls of shmem_broadcastmem into one dest, the root turning (call % npes), the
 *     size cycling over 0, 1, 8, 239, 240, 241, 256, 303, 304 (the largest eager slot), 305 and
 *     1000 bytes (so eager and ready calls alternate), the root refilling its source at once
 *     after each call; every PE checks each call's bytes and that the byte after them kept the
 *     sentinel it wrote before the call.
 *  2. 400 calls of 8 bytes from PE 0, the last PE sleeping 300 us every 16th call: the root
 *     fills the ring and waits for credits; every call's value is checked.
 *  3. 400 calls of the active-set shmem_broadcast64 over every PE (the world team), one
 *     element, the root turning, checked likewise (the root's dest must stay untouched).
 */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <unistd.h>

#include "../coll_test.h"

#define NAME "coll_bcast_eager"
#define MAXB 1000
#define SENT 0xa5

static int me, npes;
static unsigned char *dst, *src; /* symmetric, MAXB + 1 bytes */
static long psync[2][SHMEM_BCAST_SYNC_SIZE];

static unsigned char byte_of(int root, int call, size_t j)
{
    return t_pattern8(root, (uint64_t)call * 1024 + j);
}

static void fill(int root, int call, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        src[j] = byte_of(root, call, j);
    }
}

static void check(const char *phase, int root, int call, size_t n)
{
    size_t bad = 0, first = 0;
    for (size_t j = 0; j < n; j++) {
        if (dst[j] != byte_of(root, call, j) && bad++ == 0) {
            first = j;
        }
    }
    t_check(bad == 0, "%s call %d (root %d, %zu bytes): %zu bytes wrong, first at %zu: %#x, "
            "want %#x", phase, call, root, n, bad, first, dst[first],
            byte_of(root, call, first));
    t_check(dst[n] == SENT, "%s call %d (root %d, %zu bytes): byte %zu past the data is %#x, "
            "not the sentinel", phase, call, root, n, n, dst[n]);
}

int main(void)
{
    static const size_t sizes[] = {0, 1, 8, 239, 240, 241, 256, 303, 304, 305, 1000};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < SHMEM_BCAST_SYNC_SIZE; k++) {
            psync[i][k] = SHMEM_SYNC_VALUE;
        }
    }
    dst = shmem_malloc(MAXB + 1);
    src = shmem_malloc(MAXB + 1);
    t_check(dst && src, "shmem_malloc(%d) failed", MAXB + 1);
    if (!dst || !src) {
        return t_finish(NAME);
    }
    shmem_barrier_all();

    for (int c = 0; c < 1200; c++) {
        int root = c % npes;
        size_t n = sizes[c % nsizes];
        memset(dst, SENT, MAXB + 1);
        if (me == root) {
            fill(root, c, n);
        }
        int rc = shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, n, root);
        t_check(rc == 0, "turning call %d returned %d", c, rc);
        check("turning", root, c, n);
        if (me == root) {
            memset(src, 0, MAXB); /* the call copied it, or sent it before returning */
        }
    }

    for (int c = 0; c < 400; c++) {
        memset(dst, SENT, MAXB + 1);
        if (me == 0) {
            fill(0, c, 8);
        }
        if (me == npes - 1 && c % 16 == 0) {
            usleep(300);
        }
        int rc = shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, 8, 0);
        t_check(rc == 0, "slow-PE call %d returned %d", c, rc);
        check("slow-PE", 0, c, 8);
        if (me == 0) {
            memset(src, 0, 8);
        }
    }

    for (int c = 0; c < 400; c++) {
        int root = c % npes;
        memset(dst, SENT, MAXB + 1);
        if (me == root) {
            fill(root, c, 8);
        }
        shmem_broadcast64(dst, src, 1, root, 0, 0, npes, psync[c & 1]);
        if (me == root) {
            for (int j = 0; j < 9; j++) {
                t_check(dst[j] == SENT, "broadcast64 call %d: the root's dest byte %d written",
                        c, j);
            }
            memset(src, 0, 8);
        } else {
            check("broadcast64", root, c, 8);
        }
    }

    shmem_barrier_all();
    for (int i = 0; i < 2; i++) {
        ct_check_psync(psync[i], SHMEM_BCAST_SYNC_SIZE);
    }
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return t_finish(NAME);
}
