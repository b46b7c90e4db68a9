/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal_pe_quiet: OpenSHMEM 1.6's signal updates without data (shmem_signal_add/set and their
 * ctx forms) and shmem_pe_quiet/shmem_ctx_pe_quiet, data-checked.
 *
 *   - every PE adds 1 + its number to a word of every PE (itself included) ROUNDS times, half
 *     through shmem_signal_add and half through put-with-signal ADD of no data: the sum must be
 *     exact (one atomicity domain for all signal updates);
 *   - shmem_signal_set / shmem_ctx_signal_set: each PE sets a word of the next PE; the next PE
 *     waits for it with shmem_signal_wait_until and must see exactly the value set;
 *   - pe_quiet: PE i puts BIG bytes (nbi) to PE i+1 and some to PE i+2, calls
 *     shmem_pe_quiet({i+1}), then sets i+1's flag with shmem_signal_set; PE i+1 waits for the
 *     flag and checks every byte (complete before the flag is the promise of pe_quiet); the same
 *     through a created context and shmem_ctx_pe_quiet; npes = 0 and SHMEM_CTX_INVALID do
 *     nothing.
 */
#include "../test.h"

#define NAME "signal_pe_quiet"
#define ROUNDS 50
#define BIG (200 * 1000)

static uint64_t sum_word, set_word, flag_word, ctx_flag_word;

static void check_add(int me, int npes)
{
    sum_word = 0;
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < npes; k++) {
            int pe = (me + k) % npes;
            if (r % 2) {
                shmem_signal_add(&sum_word, (uint64_t)me + 1, pe);
            } else {
                shmem_putmem_signal(NULL, NULL, 0, &sum_word, (uint64_t)me + 1, SHMEM_SIGNAL_ADD, pe);
            }
        }
    }
    shmem_ctx_signal_add(SHMEM_CTX_DEFAULT, &sum_word, 1000, (me + 1) % npes);
    shmem_quiet();
    shmem_barrier_all();
    uint64_t want = (uint64_t)ROUNDS * (uint64_t)npes * (uint64_t)(npes + 1) / 2 + 1000;
    uint64_t got = shmem_signal_fetch(&sum_word);
    t_check(got == want, "signal_add total %" PRIu64 ", want %" PRIu64, got, want);
}

static void check_set(int me, int npes)
{
    set_word = 0;
    shmem_barrier_all();
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    uint64_t v = 0xabc000 + (uint64_t)me;
    shmem_signal_set(&set_word, v, next);
    uint64_t got = shmem_signal_wait_until(&set_word, SHMEM_CMP_NE, 0);
    t_check(got == 0xabc000 + (uint64_t)prev, "signal_set from PE %d: got %#" PRIx64, prev, got);
    shmem_barrier_all();
    shmem_ctx_signal_set(SHMEM_CTX_DEFAULT, &set_word, v + 1, next);
    got = shmem_signal_wait_until(&set_word, SHMEM_CMP_EQ, 0xabc000 + (uint64_t)prev + 1);
    t_check(got == 0xabc001 + (uint64_t)prev, "ctx_signal_set from PE %d: got %#" PRIx64, prev, got);
    shmem_barrier_all();
}

static void check_pe_quiet(int me, int npes, shmem_ctx_t ctx, uint64_t *flag, uint64_t salt)
{
    uint8_t *dst = shmem_malloc(BIG), *dst2 = shmem_malloc(BIG);
    uint8_t *src = malloc(BIG), *src2 = malloc(BIG);
    *flag = 0;
    shmem_barrier_all();
    int next = (me + 1) % npes, far = (me + 2) % npes, prev = (me + npes - 1) % npes;
    t_fill(src, BIG, me, salt);
    t_fill(src2, BIG, me, salt + 1);
    if (ctx == SHMEM_CTX_DEFAULT) {
        shmem_putmem_nbi(dst2, src2, BIG, far);
        shmem_putmem_nbi(dst, src, BIG, next);
        shmem_pe_quiet(&next, 1);
    } else {
        shmem_ctx_putmem_nbi(ctx, dst2, src2, BIG, far);
        shmem_ctx_putmem_nbi(ctx, dst, src, BIG, next);
        shmem_ctx_pe_quiet(ctx, &next, 1);
    }
    shmem_signal_set(flag, 1, next);
    shmem_signal_wait_until(flag, SHMEM_CMP_EQ, 1);
    t_verify(dst, BIG, prev, salt, "data from PE %d when its flag arrived after pe_quiet", prev);
    shmem_quiet();
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_ctx_quiet(ctx);
    }
    shmem_barrier_all();
    int from_far = (me + npes - 2) % npes;
    t_verify(dst2, BIG, from_far, salt + 1, "data from PE %d after quiet", from_far);
    shmem_barrier_all();
    free(src);
    free(src2);
    shmem_free(dst);
    shmem_free(dst2);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    check_add(me, npes);
    check_set(me, npes);
    check_pe_quiet(me, npes, SHMEM_CTX_DEFAULT, &flag_word, 10);
    shmem_ctx_t ctx;
    t_check(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create failed");
    check_pe_quiet(me, npes, ctx, &ctx_flag_word, 20);
    shmem_ctx_destroy(ctx);
    shmem_pe_quiet(NULL, 0);
    shmem_ctx_pe_quiet(SHMEM_CTX_INVALID, &me, 1);
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
