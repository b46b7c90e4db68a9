/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_putget_mem: shmem_putmem/shmem_getmem move exactly the bytes asked for, between every
 * neighbouring pair, at any size and alignment.
 *
 * Every PE puts to its right neighbour (me+1)%n and its left neighbour (me+n-1)%n, into two
 * separate receive regions, so with 1 or 2 PEs the writes never overlap. Sizes straddle the
 * thresholds a transport cares about (0, 1, word, cache line, page, inject and eager limits, 1 MiB
 * + 3); source and destination sit at odd offsets (+1, +3, +7). Sources rotate between the
 * symmetric heap, malloc'd memory and the stack (a put's source need not be symmetric), and so do
 * get destinations. GUARD bytes on both sides of each destination hold a known pattern that must
 * survive, and the source must be unchanged after the transfer.
 */
#include "../test.h"

#define NAME "rma_putget_mem"
#define GUARD 256
#define STACK_MAX 4097

static const size_t sizes[] = {0, 1, 3, 7, 8, 63, 64, 65, 4095, 4096, 4097, 65537,
                               (1u << 20) + 3};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXSZ ((size_t)(1u << 20) + 3)
/* (source offset, destination offset) pairs. */
static const size_t offs[][2] = {{0, 0}, {1, 3}, {3, 7}, {7, 1}};
#define NOFFS (sizeof(offs) / sizeof(offs[0]))
#define REGION (MAXSZ + 8 + 2 * GUARD)
#define POISON_SALT 0x9000000ULL

static const char *kind_name[] = {"heap", "malloc", "stack"};

/* Check one destination: [GUARD+doff, +s) holds pattern (src_pe, salt), the GUARD bytes around
 * it still match `expect` (the poison it was filled with). */
static void check_dest(const uint8_t *buf, const uint8_t *expect, size_t doff, size_t s,
                       int src_pe, uint64_t salt, const char *what)
{
    t_verify(buf + GUARD + doff, s, src_pe, salt, "%s size %zu doff %zu: data", what, s, doff);
    t_compare(buf, expect, GUARD + doff, "%s size %zu doff %zu: guard before", what, s, doff);
    t_compare(buf + GUARD + doff + s, expect + GUARD + doff + s, GUARD,
              "%s size %zu doff %zu: guard after", what, s, doff);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    uint8_t *src = shmem_malloc(REGION);
    uint8_t *recv_r = shmem_malloc(REGION); /* written by the left neighbour */
    uint8_t *recv_l = shmem_malloc(REGION); /* written by the right neighbour */
    uint8_t *psrc = malloc(REGION);
    uint8_t *pdst = malloc(REGION);
    uint8_t *expect = malloc(REGION);
    if (!t_check(src && recv_r && recv_l && psrc && pdst && expect, "allocation failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }

    uint64_t round = 0;
    for (size_t si = 0; si < NSIZES; si++) {
        for (size_t oi = 0; oi < NOFFS; oi++, round++) {
            size_t s = sizes[si], soff = offs[oi][0], doff = offs[oi][1];
            int kind = (int)(round % 3);
            if (kind == 2 && s + soff > STACK_MAX) {
                kind = 1;
            }
            uint64_t salt = round * 4;
            uint8_t stack_buf[STACK_MAX + 8 + 2 * GUARD];

            /* ---- put: my pattern into both neighbours' receive regions */
            uint8_t *from = kind == 0 ? src : kind == 1 ? psrc : stack_buf;
            t_fill(from + soff, s, me, salt);
            t_fill(expect, 2 * GUARD + doff + s, me, POISON_SALT + salt);
            memcpy(recv_r, expect, 2 * GUARD + doff + s);
            memcpy(recv_l, expect, 2 * GUARD + doff + s);
            shmem_barrier_all(); /* neighbours' regions are poisoned before anyone writes */
            shmem_putmem(recv_r + GUARD + doff, from + soff, s, right);
            shmem_putmem(recv_l + GUARD + doff, from + soff, s, left);
            t_verify(from + soff, s, me, salt, "put source (%s) size %zu changed",
                     kind_name[kind], s);
            shmem_barrier_all(); /* puts are complete and visible */
            check_dest(recv_r, expect, doff, s, left, salt, "putmem from left");
            check_dest(recv_l, expect, doff, s, right, salt, "putmem from right");

            /* ---- get: neighbours' patterns from their symmetric source */
            salt++;
            t_fill(src + soff, s, me, salt);
            shmem_barrier_all(); /* every source is ready */
            uint8_t *to = kind == 0 ? recv_r : kind == 1 ? pdst : stack_buf;
            t_fill(expect, 2 * GUARD + doff + s, me, POISON_SALT + salt);
            memcpy(to, expect, 2 * GUARD + doff + s);
            shmem_getmem(to + GUARD + doff, src + soff, s, right);
            check_dest(to, expect, doff, s, right, salt,
                       kind == 0 ? "getmem into heap" : kind == 1 ? "getmem into malloc"
                                                                  : "getmem into stack");
            memcpy(to, expect, 2 * GUARD + doff + s);
            shmem_getmem(to + GUARD + doff, src + soff, s, left);
            check_dest(to, expect, doff, s, left, salt, "getmem from left");
            shmem_barrier_all(); /* nobody refills src while a peer still reads it */
        }
    }

    /* Every PE to every PE (not only neighbours), one mid-size message each. */
    size_t s = 1000;
    uint8_t *slots = shmem_calloc((size_t)npes, s);
    if (t_check(slots != NULL, "shmem_calloc(%d, %zu) returned NULL", npes, s)) {
        t_fill(psrc, s, me, 777);
        for (int p = 0; p < npes; p++) {
            shmem_putmem(slots + (size_t)me * s, psrc, s, (me + p) % npes);
        }
        shmem_barrier_all();
        for (int p = 0; p < npes; p++) {
            t_verify(slots + (size_t)p * s, s, p, 777, "all-to-all putmem slot of PE %d", p);
        }
        shmem_barrier_all();
        shmem_free(slots);
    }

    free(expect);
    free(pdst);
    free(psrc);
    shmem_free(recv_l);
    shmem_free(recv_r);
    shmem_free(src);
    shmem_finalize();
    return t_finish(NAME);
}
