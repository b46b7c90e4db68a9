/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_quiet_landed: after shmem_quiet a put is in the target's memory, even when the target is
 * busy and the provider completes a write before the target has it.
 *
 * Each round, PE 1 (the target) sleeps without calling the library while PE 0 puts a new value
 * into a word of PE 1's heap (small: injected), calls shmem_quiet, and reads the word back with
 * a get. The get must return the new value: quiet promised the put complete at the target.
 *
 * The case it guards: a provider without delivery-complete (EFA's efa-direct, and shm or tcp
 * under FABSHMEM_PROVIDER_PROFILE=efa-direct) completes an injected write once it is sent;
 * shm's target applies it only when its progress engine runs, while shm serves a get straight
 * from the target's memory. So a quiet that trusted the completion returns while the word is
 * still old, and the get sees that (FABSHMEM_REMOTE_COMPLETION=delivery under the profile
 * fails here). Counting arrivals, quiet waits until the sleeping target counted the put.
 * Also checked: pe_quiet, fence and a put from a second context, with the same get.
 */
#include <unistd.h>

#include "../test.h"

#define NAME "rma_quiet_landed"
#define ROUNDS 12
#define SLEEP_US 30000

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    uint64_t *word = shmem_calloc(4, sizeof(uint64_t));
    if (!t_check(word != NULL, "allocation failed")) {
        shmem_finalize();
        return t_finish(NAME);
    }
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        ctx = SHMEM_CTX_DEFAULT;
    }
    size_t stale = 0;
    for (int r = 1; r <= ROUNDS && npes >= 2; r++) {
        shmem_barrier_all();
        if (me == 1) {
            usleep(SLEEP_US); /* no library call: no progress of our own */
        } else if (me == 0) {
            int how = r % 4; /* quiet, pe_quiet, fence, a second context */
            uint64_t v = (uint64_t)r * 0x9e3779b97f4a7c15ULL, got = 0;
            if (how == 3) {
                shmem_ctx_uint64_put(ctx, &word[how], &v, 1, 1);
                shmem_ctx_quiet(ctx);
            } else {
                shmem_uint64_put(&word[how], &v, 1, 1);
                if (how == 0) {
                    shmem_quiet();
                } else if (how == 1) {
                    int pes[1] = {1};
                    shmem_pe_quiet(pes, 1);
                } else {
                    shmem_fence();
                    shmem_quiet();
                }
            }
            shmem_uint64_get(&got, &word[how], 1, 1);
            if (got != v) {
                stale++;
                t_check(0, "round %d (%s): the get after it returned 0x%llx, the put wrote 0x%llx",
                        r, how == 0 ? "quiet" : how == 1 ? "pe_quiet" : how == 2 ? "fence+quiet" : "ctx quiet",
                        (unsigned long long)got, (unsigned long long)v);
            }
        }
        shmem_barrier_all();
    }
    if (me == 0) {
        printf("%s: %zu of %d rounds read a stale value after quiet\n", NAME, stale, ROUNDS);
    }
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_ctx_destroy(ctx);
    }
    shmem_free(word);
    shmem_finalize();
    return t_finish(NAME);
}
