/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_bounce: a blocking put copied into a bounce slot (FABSHMEM_BOUNCE_SIZE) returns before
 * its transfer completes, and the source is the program's again at once: what lands is what
 * the source held at the call, whatever the program writes into it afterwards.
 *
 * Every PE puts to its right neighbour PUTS blocks of sizes from above the inject size to
 * twice the bounce size of rma_bounce.env (so some take a slot and some cannot), each from
 * one source buffer that it overwrites with the next block's pattern, or with garbage, right
 * after the call returns. More puts than slots go out before the one quiet, so the slots run
 * out and later puts wait for their completion instead; a private (stack) source and a
 * symmetric one alternate, and the typed and ctx forms are used too. After quiet and a
 * barrier each PE checks every block it received in full. A put that returned while the
 * provider still read a source it did not copy lands the later pattern or the garbage. The
 * program asks for SHMEM_THREAD_MULTIPLE, so where contexts get endpoints of their own (tcp)
 * the ctx form's puts go from that endpoint's own slots (16, fewer than the puts in flight).
 *
 * Then the same for blocking put-with-signal (shmem_putmem_signal, ADD 1 to one counter per
 * round), whose descriptor and data go in one write from a bounce slot where the provider
 * takes two remote segments per write (tcp): the receiver waits for the counter alone, with
 * no quiet, and checks every block.
 */
#include "../test.h"

#define NAME "rma_bounce"
#define PUTS 200
#define SIGNALS 100
#define MAXLEN (32 * 1024)

static size_t size_of(int i)
{
    /* 100 bytes .. 32 KiB, odd sizes too: a slot holds at most 16 KiB (rma_bounce.env). */
    static const size_t sizes[] = {100, 1000, 4096, 8191, 16384, 16385, 32768, 3000};
    return sizes[i % 8];
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    size_t total = 0;
    for (int i = 0; i < PUTS; i++) {
        total += size_of(i);
    }
    uint8_t *dst = shmem_malloc(total);
    uint8_t *ssrc = shmem_malloc(MAXLEN);
    static uint8_t psrc[MAXLEN];
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        ctx = SHMEM_CTX_DEFAULT;
    }
    if (!t_check(dst && ssrc, "allocation failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }
    memset(dst, 0, total);
    shmem_barrier_all();
    for (int round = 0; round < 3; round++) {
        size_t at = 0;
        for (int i = 0; i < PUTS; i++) {
            size_t n = size_of(i);
            uint8_t *src = i % 2 ? ssrc : psrc;
            uint64_t salt = (uint64_t)round * 1000 + (uint64_t)i;
            t_fill(src, n, me, salt);
            switch (i % 4) {
            case 0: shmem_putmem(dst + at, src, n, right); break;
            case 1: shmem_ctx_putmem(ctx, dst + at, src, n, right); break;
            case 2: shmem_uint8_put(dst + at, src, n, right); break;
            default: shmem_put8(dst + at, src, n, right); break;
            }
            /* The source is ours again: scribble over it at once. */
            memset(src, 0xa5 ^ i, n);
            at += n;
        }
        shmem_ctx_quiet(ctx);
        shmem_quiet();
        shmem_barrier_all();
        at = 0;
        size_t bad = 0;
        for (int i = 0; i < PUTS; i++) {
            size_t n = size_of(i);
            uint64_t salt = (uint64_t)round * 1000 + (uint64_t)i;
            bad += t_verify(dst + at, n, left, salt, "round %d put %d (%zu bytes) from PE %d",
                            round, i, n, left) != 0;
            at += n;
        }
        if (me == 0) {
            printf("%s: round %d: %d blocking puts of 100 B..32 KiB, %zu wrong\n", NAME, round,
                   PUTS, bad);
        }
        shmem_barrier_all();
    }
    uint64_t *sig = shmem_calloc(3, sizeof(uint64_t));
    for (int round = 0; round < 3 && t_check(sig != NULL, "allocation failed"); round++) {
        size_t at = 0;
        for (int i = 0; i < SIGNALS; i++) {
            size_t n = size_of(i);
            uint8_t *src = i % 2 ? ssrc : psrc;
            uint64_t salt = 7000 + (uint64_t)round * 1000 + (uint64_t)i;
            t_fill(src, n, me, salt);
            shmem_putmem_signal(dst + at, src, n, &sig[round], 1, SHMEM_SIGNAL_ADD, right);
            memset(src, 0x5a ^ i, n);
            at += n;
        }
        shmem_signal_wait_until(&sig[round], SHMEM_CMP_EQ, SIGNALS);
        at = 0;
        size_t bad = 0;
        for (int i = 0; i < SIGNALS; i++) {
            size_t n = size_of(i);
            uint64_t salt = 7000 + (uint64_t)round * 1000 + (uint64_t)i;
            bad += t_verify(dst + at, n, left, salt, "signal round %d put %d (%zu bytes) from PE %d",
                            round, i, n, left) != 0;
            at += n;
        }
        if (me == 0) {
            printf("%s: signal round %d: %d blocking put-with-signals of 100 B..32 KiB, %zu wrong\n",
                   NAME, round, SIGNALS, bad);
        }
        shmem_barrier_all(); /* nobody writes into dst again before its owner checked it */
    }
    shmem_free(sig);
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_ctx_destroy(ctx);
    }
    shmem_free(ssrc);
    shmem_free(dst);
    shmem_finalize();
    return t_finish(NAME);
}
