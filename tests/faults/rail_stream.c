/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rail_stream SECONDS [ctx|default [BYTES]]: PE 0 streams verified puts and gets of BYTES (1 MiB
 * when not given) to PE 1 for SECONDS, the cut of a rail in the middle (tests/multihost/rails.sh)
 * included. With ctx the program is SHMEM_THREAD_MULTIPLE and PE 0 streams on a private context
 * of its own (which gets an endpoint of its own on every rail where the fabric allows: its
 * failover is the context's). A blocking put of up to FABSHMEM_BOUNCE_SIZE bytes returns from a
 * bounce slot, which a put posted again after the cut must still send from.
 *
 * PE 0 puts a new pattern into one of SLOTS slots of PE 1 each round (shmem_quiet every
 * SLOTS rounds), and gets the slot of the round before back and verifies it; it prints
 * "rail_stream: ready" after the first second, and at the end tells PE 1 how many rounds it
 * made and how many of them came after the cut (rounds after the first SECONDS / 3). PE 1 waits
 * in shmem_barrier_all the whole time (its waits probe PE 0 on every rail), then verifies the
 * last SLOTS rounds' data in its slots. Both print PASS only with every byte right.
 */
#include <stdbool.h>
#include <time.h>

#include "../test.h"

#define NAME "rail_stream"
#define SLOTS 8

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 20;
    bool own = argc > 2 && strcmp(argv[2], "ctx") == 0;
    size_t size = argc > 3 ? (size_t)atol(argv[3]) : (size_t)1 << 20;
    int provided = SHMEM_THREAD_SINGLE;
    if (own) {
        shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    } else {
        shmem_init();
    }
    t_start(NAME);
    int me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        t_check(0, "needs 2 PEs, has %d", shmem_n_pes());
        return t_finish(NAME);
    }
    uint8_t *slots = (uint8_t *)shmem_malloc(SLOTS * size);
    static long rounds; /* PE 1's: PE 0's round count, set at the end */
    uint8_t *src = (uint8_t *)malloc(size), *back = (uint8_t *)malloc(size);
    t_check(size > 0 && slots && src && back, "BYTES %zu, or out of memory", size);
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (own) {
        t_check(provided == SHMEM_THREAD_MULTIPLE, "provided thread level %d", provided);
        t_check(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "shmem_ctx_create failed");
    }
    shmem_barrier_all();
    if (me == 0) {
        double t0 = now();
        long r = 0, late = 0;
        bool said = false;
        for (; now() - t0 < secs; r++) {
            t_fill(src, size, 0, (uint64_t)r);
            shmem_ctx_putmem(ctx, slots + (size_t)(r % SLOTS) * size, src, size, 1);
            if (r > 0) {
                /* The previous round's put is complete (blocking put + quiet below or the
                 * blocking put's own completion): read it back. */
                shmem_ctx_quiet(ctx);
                shmem_ctx_getmem(ctx, back, slots + (size_t)((r - 1) % SLOTS) * size, size, 1);
                t_verify(back, size, 0, (uint64_t)(r - 1), "round %ld read back", r - 1);
            }
            if (!said && now() - t0 > 1) {
                printf(NAME ": ready\n");
                fflush(stdout);
                said = true;
            }
            late += now() - t0 > secs / 3;
        }
        shmem_ctx_quiet(ctx);
        shmem_long_p(&rounds, r, 1);
        printf(NAME ": %ld rounds, %ld in the last two thirds\n", r, late);
        t_check(late > 0, "no round after the first third");
    }
    shmem_barrier_all();
    if (me == 1) {
        t_check(rounds >= SLOTS, "only %ld rounds", rounds);
        for (long r = rounds - SLOTS; r >= 0 && r < rounds; r++) {
            t_verify(slots + (size_t)(r % SLOTS) * size, size, 0, (uint64_t)r, "round %ld", r);
        }
    }
    shmem_barrier_all();
    if (own) {
        shmem_ctx_destroy(ctx);
    }
    shmem_free(slots);
    free(src);
    free(back);
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
