/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_bcast_pull: large team broadcasts (shmem_broadcastmem), where on one node a child reads
 * its data itself from its parent (broadcast.c's pulled broadcasts: the root's source when it is
 * in the symmetric heap, else the parent's dest chunk by chunk as the parent fills it), back to
 * back with no barrier, the root overwriting its source as soon as each call returns.
 *
 * On every team of coll_test.h (world, shared, tail, evens), roots turning, each call's result
 * checked right after it on every team PE (the root's dest too), with the byte after the data
 * checked to keep its sentinel:
 *  1. sizes around the pull's limit and its chunks: 65535, 65536, 65537, 98311, 262144 and
 *     1 MiB + 3 bytes, mixed with 8, 240, 4096 (the eager and the ready path) in one cycle,
 *     from a symmetric source;
 *  2. the same sizes from a private (malloc) source: children read the parent's dest;
 *  3. in place on the root (dest == source), and a source that overlaps dest on the root
 *     (dest = source + 4096: the root's copy moves its own source);
 *  4. 60 calls of 1 MiB + 3 from a fixed root while the last team PE sleeps 2 ms every few
 *     calls before it enters: the root must not return (and overwrite its source) before
 *     that PE has read it.
 * Also under chaos and at 3 and 4 PEs (odd trees, a parent that is not the root). Waits do
 * not yield (FABSHMEM_YIELD=never unless set): parents hand chunks on as they copy them, as on a
 * node with a core per PE, even where 3 or 4 PEs share this machine's cores.
 */
#include <unistd.h>

#include "../coll_test.h"

#define NAME "coll_bcast_pull"
#define MAXB ((size_t)1048576 + 3)
#define OVER 4096

static int me;
static uint8_t *sym_src, *dst, *priv_src;

static uint64_t salt_of(int kase, int ti, int it, size_t n)
{
    return ((uint64_t)kase << 56) ^ ((uint64_t)ti << 48) ^ ((uint64_t)n << 16) ^ (uint64_t)it;
}

/* One broadcast on team ti of nb bytes from src (the root's) into d, checked. */
static void one(int kase, int ti, int it, int root, uint8_t *d, uint8_t *src, size_t nb,
                const char *what)
{
    struct ct_team *t = &ct_teams[ti];
    uint64_t salt = salt_of(kase, ti, it, nb);
    d[nb] = CT_SENTINEL;
    if (t->me == root) {
        t_fill(src, nb, ct_key(me, 0), salt);
    } else if (src != d) {
        t_fill(src, nb, ct_key(me, 1), salt); /* a non-root's source is not sent */
    }
    int rc = shmem_broadcastmem(t->team, d, src, nb, root);
    t_check(rc == 0, "%s broadcastmem(%s, %zu, root %d) returned %d", what, t->name, nb, root,
            rc);
    if (t->me == root && (src + nb <= d || d + nb <= src)) {
        memset(src, 0x3c, nb); /* the call is done with it */
    }
    t_verify(d, nb, ct_key(t->world[root], 0), salt, "%s call %d on %s (%zu bytes, root %d)",
             what, it, t->name, nb, root);
    t_check(d[nb] == CT_SENTINEL, "%s call %d on %s (%zu bytes): byte past the data is %#x",
            what, it, t->name, nb, d[nb]);
}

int main(void)
{
    static const size_t sizes[] = {65535, 8, 65536, 240, 65537, 4096, 98311, 262144, MAXB};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    setenv("FABSHMEM_YIELD", "never", 0);
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    ct_teams_init();
    sym_src = shmem_malloc(MAXB + OVER + 1);
    dst = shmem_malloc(MAXB + OVER + 1);
    priv_src = malloc(MAXB + 1);
    t_check(sym_src && dst && priv_src, "allocation of %zu bytes failed", MAXB + OVER + 1);
    if (!sym_src || !dst || !priv_src) {
        return t_finish(NAME);
    }
    shmem_barrier_all();
    for (int ti = 0; ti < ct_nteams; ti++) {
        struct ct_team *t = &ct_teams[ti];
        if (t->me < 0) {
            shmem_barrier_all();
            continue;
        }
        for (int it = 0; it < 2 * nsizes; it++) {
            one(1, ti, it, it % t->size, dst, sym_src, sizes[it % nsizes], "symmetric");
        }
        for (int it = 0; it < 2 * nsizes; it++) {
            one(2, ti, it, (it + 1) % t->size, dst, priv_src, sizes[it % nsizes], "private");
        }
        for (int it = 0; it < 6; it++) {
            int root = it % t->size;
            size_t nb = it % 2 ? MAXB : 98311;
            /* In place: every PE passes dest as source (only the root's is read). */
            one(3, ti, it, root, dst, dst, nb, "in place");
            /* Overlapping on the root: dest starts OVER bytes into the source. */
            one(4, ti, it, root, sym_src + OVER, sym_src, nb, "overlapping");
        }
        for (int it = 0; it < 60; it++) {
            if (t->me == t->size - 1 && it % 7 == 2) {
                usleep(2000);
            }
            one(5, ti, it, 0, dst, sym_src, MAXB, "slow child");
        }
        shmem_barrier_all();
    }
    shmem_barrier_all();
    ct_teams_fini();
    shmem_free(sym_src);
    shmem_free(dst);
    free(priv_src);
    shmem_finalize();
    return t_finish(NAME);
}
