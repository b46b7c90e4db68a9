/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_large: transfers larger than any provider's maximum message arrive whole.
 *
 * 64 MiB and 64 MiB + 13 bytes (the latter at an odd destination offset, so the last piece of a
 * split transfer is short and unaligned), as put, put_nbi + quiet, get and get_nbi + quiet,
 * between right and left neighbours. Every round uses a new pattern, so a piece left over from
 * an earlier round or written to the wrong offset is caught; guard bytes around the destination
 * must survive. rma_large.env sets SHMEM_SYMMETRIC_SIZE (two 64 MiB buffers per PE) and
 * FABSHMEM_MAX_MSG_SIZE=1M, so the library's splitting path runs with 64+ pieces on every
 * provider.
 */
#include "../test.h"

#define NAME "rma_large"
#define MIB (1024 * 1024)
#define GUARD 64
#define REGION ((size_t)64 * MIB + 13 + 2 * GUARD + 8)

static const size_t sizes[] = {(size_t)64 * MIB, (size_t)64 * MIB + 13};
static const size_t dest_off[] = {0, 5};
static const char *mode_name[] = {"putmem", "putmem_nbi", "getmem", "getmem_nbi"};

/* The guard bytes on both sides of [GUARD+off, +len) hold their fixed pattern. */
static void set_guards(uint8_t *buf, size_t off, size_t len, int pe)
{
    t_fill(buf, GUARD + off, pe, 1);
    t_fill(buf + GUARD + off + len, GUARD, pe, 2);
}
static void check_guards(const uint8_t *buf, size_t off, size_t len, int pe, const char *what)
{
    t_verify(buf, GUARD + off, pe, 1, "%s: guard before", what);
    t_verify(buf + GUARD + off + len, GUARD, pe, 2, "%s: guard after", what);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    uint8_t *dst = shmem_malloc(REGION);
    uint8_t *sym = shmem_malloc(REGION);
    uint8_t *src = malloc(REGION);
    uint8_t *want = malloc(REGION);
    if (!t_check(dst != NULL && sym != NULL, "shmem_malloc of 2 x %zu bytes failed (is "
                 "SHMEM_SYMMETRIC_SIZE from rma_large.env in effect?)", REGION) ||
        !t_check(src != NULL && want != NULL, "malloc failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }
    memset(dst, 0, REGION);

    uint64_t salt = 100;
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t len = sizes[si], off = dest_off[si];
        for (int mode = 0; mode < 4; mode++) {
            char what[96];
            snprintf(what, sizeof(what), "%s of %zu bytes", mode_name[mode], len);
            salt += 10;
            int is_get = mode >= 2, nbi = mode % 2;
            int sender = is_get ? right : left;
            if (!is_get) {
                /* my pattern to the right neighbour's dst */
                t_fill(src + 3, len, me, salt);
                set_guards(dst, off, len, me);
                shmem_barrier_all();
                if (nbi) {
                    shmem_putmem_nbi(dst + GUARD + off, src + 3, len, right);
                    shmem_quiet();
                } else {
                    shmem_putmem(dst + GUARD + off, src + 3, len, right);
                }
                shmem_barrier_all();
            } else {
                /* the right neighbour's sym into my dst */
                t_fill(sym + 3, len, me, salt);
                set_guards(dst, off, len, me);
                shmem_barrier_all();
                if (nbi) {
                    shmem_getmem_nbi(dst + GUARD + off, sym + 3, len, right);
                    shmem_quiet();
                } else {
                    shmem_getmem(dst + GUARD + off, sym + 3, len, right);
                }
            }
            t_fill(want, len, sender, salt);
            t_compare(dst + GUARD + off, want, len, "%s", what);
            check_guards(dst, off, len, me, what);
            shmem_barrier_all(); /* reads of sym done, dst checked, before the next round */
        }
    }

    free(want);
    free(src);
    shmem_free(sym);
    shmem_free(dst);
    shmem_finalize();
    return t_finish(NAME);
}
