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
 * still old, and the get sees that. Counting arrivals, quiet waits until the sleeping target
 * counted the put. (FABSHMEM_REMOTE_COMPLETION=delivery under the profile, which trusts the
 * completion, passes here all the same on shm and tcp of libfabric 1.17 and 2.7: fabshmem's
 * get does not overtake the put at the sleeping target there. A library whose get does,
 * below, fails.)
 * Also checked: pe_quiet, fence and a put from a second context, with the same get. The
 * program asks for SHMEM_THREAD_MULTIPLE, so that second context has an endpoint of its own
 * where the fabric gives contexts one (tcp, also under the profile): its writes are counted
 * apart at the targets, and its quiet reads those counts through its own endpoint.
 *
 * With 3 PEs or more, the same promise seen by a third PE: PE 0 puts into the sleeping PE 1,
 * quiets, then puts a flag into PE 2, which waits for the flag and gets the word from PE 1.
 * quiet's completion is global, so PE 2 must read the new value, whichever way its get
 * reaches PE 1's memory. Odd rounds put and quiet on the second context. (Sandia OpenSHMEM 1.5.3 on libfabric 2.7's shm, this file built with
 * its oshcc, fails both checks: its quiet does not wait for injected puts to land.)
 */
#include <unistd.h>

#include "../test.h"

#define NAME "rma_quiet_landed"
#define ROUNDS 12
#define SLEEP_US 30000

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
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
    /* The third PE's view. */
    uint64_t *flag = shmem_calloc(1, sizeof(uint64_t));
    size_t stale3 = 0;
    for (int r = 1; r <= ROUNDS && npes >= 3 && t_check(flag != NULL, "allocation failed"); r++) {
        uint64_t v = (uint64_t)r * 0xc2b2ae3d27d4eb4fULL;
        shmem_barrier_all();
        if (me == 1) {
            usleep(SLEEP_US); /* no library call: no progress of our own */
        } else if (me == 0) {
            if (r % 2) {
                shmem_ctx_uint64_p(ctx, &word[0], v, 1);
                shmem_ctx_quiet(ctx);
            } else {
                shmem_uint64_p(&word[0], v, 1);
                shmem_quiet();
            }
            shmem_uint64_atomic_set(flag, (uint64_t)r, 2);
        } else if (me == 2) {
            shmem_uint64_wait_until(flag, SHMEM_CMP_EQ, (uint64_t)r);
            uint64_t got = shmem_uint64_g(&word[0], 1);
            if (got != v) {
                stale3++;
                t_check(0, "round %d: PE 2 got 0x%llx from PE 1 after PE 0's quiet and flag, PE 0 "
                        "put 0x%llx", r, (unsigned long long)got, (unsigned long long)v);
            }
        }
        shmem_barrier_all();
    }
    if (me == 2) {
        printf("%s: %zu of %d rounds: a third PE read a stale value after quiet\n", NAME, stale3,
               ROUNDS);
    }
    shmem_free(flag);
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_ctx_destroy(ctx);
    }
    shmem_free(word);
    shmem_finalize();
    return t_finish(NAME);
}
