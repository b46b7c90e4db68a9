/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal_stress [ROUNDS]: many rounds of put-with-signal between every pair of PEs, itself
 * included, in the spirit of tests-sos's unit/put_signal (which once died of SIGSEGV on shm
 * with FABSHMEM_INTRANODE=fabric, issue 35) and ending the way it does: the last round's
 * receivers check their data, then PE 0 sends every PE a last block as that test does, without
 * waiting for its own, and all go straight into shmem_free and shmem_finalize.
 *
 * Every round starts with a barrier; then each PE sends every PE (in turn from its right
 * neighbour, ending with itself) a block of a size that changes per round and pair (1 byte to
 * 64 KiB, odd sizes too) into that sender's own region of the receiver's buffer, with the
 * signal word of that sender at the receiver. Signals live in the program's data segment (a
 * static array) in even rounds and in the heap in odd ones; the four ways alternate per round
 * and pair: blocking SET on the default context, blocking ADD on a context of its own, nbi SET
 * on the context, nbi ADD on the default context (ADD adds what takes the word to the round's
 * value, so the word always ends equal to the round number + 1 either way). Each receiver
 * waits for every sender's word (shmem_signal_wait_until, or shmem_uint64_wait_until in every
 * third round) and checks the whole block (a pattern of sender, round and byte). The sender
 * keeps one source buffer per receiver untouched until its quiet at the round's end. Every 16
 * rounds the buffer is freed and allocated again (at a new size). Default 200 rounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../test.h"

#define MAXPES 64
#define MAXB (64 * 1024)

static uint64_t sig_static[MAXPES]; /* [sender]: signals in the data segment */

static const size_t sizes[] = {1, 8, 13, 64, 100, 1024, 4095, 4096, 4097, 8192, 30000, MAXB};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static size_t size_of(int from, int to, long round)
{
    return sizes[(size_t)(round * 7 + from * 3 + to) % NSIZES];
}

static unsigned char byte_of(int from, long round, size_t i)
{
    return (unsigned char)((size_t)from * 131u + (size_t)round * 29u + i * 7u + (i >> 8));
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 200;
    shmem_init();
    t_start("signal_stress");
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes > MAXPES) {
        t_skip("signal_stress", "more than 64 PEs");
    }
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx) != 0) {
        ctx = SHMEM_CTX_DEFAULT; /* the spec's failure: no context left; the default works */
    }
    uint64_t *sig_heap = shmem_calloc((size_t)npes, sizeof(uint64_t));
    size_t region = MAXB;
    unsigned char *dest = shmem_malloc((size_t)npes * region);
    unsigned char *src = malloc((size_t)npes * MAXB);
    uint64_t last[2][MAXPES]; /* [static or heap][to]: the value this PE last gave that word */
    memset(last, 0, sizeof(last));
    if (!sig_heap || !dest || !src) {
        t_check(0, "allocation failed");
        return t_finish("signal_stress");
    }
    long wrong = 0;
    for (long r = 0; r < rounds; r++) {
        if (r > 0 && r % 16 == 0) {
            /* Churn: a new buffer, of another size; every PE is past the last round's checks
             * (the barrier inside shmem_free). */
            shmem_free(dest);
            region = MAXB + (size_t)(r % 64) * 64;
            dest = shmem_malloc((size_t)npes * region);
            if (!t_check(dest != NULL, "round %ld: shmem_malloc failed", r)) {
                break;
            }
        }
        shmem_barrier_all();
        int heap = (int)(r & 1);
        uint64_t *sig = heap ? sig_heap : sig_static;
        uint64_t value = (uint64_t)r + 1;
        for (int k = 1; k <= npes; k++) {
            int to = (me + k) % npes;
            size_t n = size_of(me, to, r);
            unsigned char *s = src + (size_t)to * MAXB;
            for (size_t i = 0; i < n; i++) {
                s[i] = byte_of(me, r, i);
            }
            unsigned char *d = dest + (size_t)me * region;
            uint64_t *w = &sig[me];
            uint64_t add = value - last[heap][to];
            last[heap][to] = value;
            switch ((r + to) % 4) {
            case 0:
                shmem_putmem_signal(d, s, n, w, value, SHMEM_SIGNAL_SET, to);
                break;
            case 1:
                shmem_ctx_putmem_signal(ctx, d, s, n, w, add, SHMEM_SIGNAL_ADD, to);
                break;
            case 2:
                shmem_ctx_putmem_signal_nbi(ctx, d, s, n, w, value, SHMEM_SIGNAL_SET, to);
                break;
            default:
                shmem_putmem_signal_nbi(d, s, n, w, add, SHMEM_SIGNAL_ADD, to);
                break;
            }
        }
        for (int from = 0; from < npes; from++) {
            if (r % 3 == 2) {
                shmem_uint64_wait_until(&sig[from], SHMEM_CMP_EQ, value);
            } else {
                (void)shmem_signal_wait_until(&sig[from], SHMEM_CMP_EQ, value);
            }
            size_t n = size_of(from, me, r);
            const unsigned char *d = dest + (size_t)from * region;
            long bad = 0;
            for (size_t i = 0; i < n; i++) {
                bad += d[i] != byte_of(from, r, i);
            }
            if (bad && wrong < 10) {
                t_check(0, "round %ld: %ld of %zu bytes from PE %d wrong (signal %s)", r, bad, n,
                        from, heap ? "in the heap" : "static");
            }
            wrong += bad;
        }
        shmem_ctx_quiet(ctx);
        shmem_quiet();
    }
    t_check(wrong == 0, "%ld wrong bytes in %ld rounds", wrong, rounds);
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_ctx_destroy(ctx);
    }
    if (!dest) {
        return t_finish("signal_stress");
    }
    /* tests-sos's put_signal itself: PE 0 sends every PE, itself included, a block with a
     * static signal and does not wait for its own; the others wait, check, and all go
     * straight into shmem_free and shmem_finalize. */
    static uint64_t sos_sig;
    long sos_block[10];
    for (int i = 0; i < 10; i++) {
        sos_block[i] = i + 1000L * (long)rounds;
    }
    shmem_barrier_all(); /* every PE checked the last round's blocks (PE 0 writes over its) */
    if (me == 0) {
        for (int pe = 0; pe < npes; pe++) {
            shmem_long_put_signal((long *)dest, sos_block, 10, &sos_sig, 1, SHMEM_SIGNAL_SET, pe);
        }
    } else {
        shmem_uint64_wait_until(&sos_sig, SHMEM_CMP_EQ, 1);
        for (int i = 0; i < 10; i++) {
            t_check(((long *)dest)[i] == sos_block[i], "last put: element %d is %ld, not %ld", i,
                    ((long *)dest)[i], sos_block[i]);
        }
    }
    shmem_free(dest);
    shmem_free(sig_heap);
    free(src);
    shmem_finalize();
    return t_finish("signal_stress");
}
