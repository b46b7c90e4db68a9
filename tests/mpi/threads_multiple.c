/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * threads_multiple: SHMEM_THREAD_MULTIPLE. shmem_init_thread must provide it, and NTHR threads
 * per PE then communicate at once: every thread, interleaved in one loop,
 *   - puts (blocking and _nbi, 8..PSLOT bytes) into its own region of the right neighbour,
 *   - takes atomic_fetch_add tickets from one counter on PE 0 (its own tickets grow strictly),
 *   - sends put-with-signals into its own region of the right neighbour, adding 1 to a signal
 *     word of its own, and
 *   - puts and increments through a context it created itself with SHMEM_CTX_PRIVATE,
 * then completes (ctx_quiet, ctx_destroy, quiet) and waits for the left neighbour's thread of
 * the same number to finish its signals, checking that region at once. After join + barrier
 * every byte of every region and every counter total is checked.
 */
#include <pthread.h>

#include "../test.h"

#define NAME "threads_multiple"
#define NTHR 4
#define ITERS 600
#define PSLOT 1024
#define SSLOT 256
#define CSLOT 64

static int me, npes, left, right;
static uint8_t *preg, *sreg, *creg;
static uint64_t *sigs;
static long *counter, *ctx_ctrs;

/* t_check and t_verify update shared counters: one thread at a time (t_verify calls below
 * take the lock themselves). */
static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
#define CHECK(...)                                                                                \
    do {                                                                                          \
        pthread_mutex_lock(&check_lock);                                                          \
        t_check(__VA_ARGS__);                                                                     \
        pthread_mutex_unlock(&check_lock);                                                        \
    } while (0)
static size_t plen(int pe, int t, int i)
{
    return 8 + (size_t)(t_pattern(pe, (uint64_t)t * 100000 + (uint64_t)i) % (PSLOT - 7));
}
static size_t slen(int pe, int t, int i)
{
    return 1 + (size_t)(t_pattern(pe, 0x5000000 + (uint64_t)t * 100000 + (uint64_t)i) % SSLOT);
}
static uint64_t psalt(int t, int i)
{
    return 0x1000000 + (uint64_t)t * 100000 + (uint64_t)i;
}
static uint64_t ssalt(int t, int i)
{
    return 0x2000000 + (uint64_t)t * 100000 + (uint64_t)i;
}
static uint64_t csalt(int t, int i)
{
    return 0x3000000 + (uint64_t)t * 100000 + (uint64_t)i;
}
static size_t pidx(int t, int i)
{
    return (size_t)t * ITERS + (size_t)i;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint8_t *psrc = malloc((size_t)ITERS * PSLOT);
    uint8_t *ssrc = malloc((size_t)ITERS * SSLOT);
    uint8_t *csrc = malloc((size_t)ITERS * CSLOT);
    if (psrc == NULL || ssrc == NULL || csrc == NULL) {
        CHECK(0, "thread %d: malloc failed", t);
        return NULL;
    }
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    int rc = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx);
    CHECK(rc == 0, "thread %d: shmem_ctx_create(SHMEM_CTX_PRIVATE) returned %d", t, rc);
    long prev = -1;
    for (int i = 0; i < ITERS; i++) {
        uint8_t *ps = psrc + (size_t)i * PSLOT;
        size_t pl = plen(me, t, i);
        t_fill(ps, pl, me, psalt(t, i));
        uint8_t *pd = preg + pidx(t, i) * PSLOT;
        if (i % 2) {
            shmem_putmem_nbi(pd, ps, pl, right);
        } else {
            shmem_putmem(pd, ps, pl, right);
        }

        long f = shmem_long_atomic_fetch_add(counter, 1, 0);
        if (f <= prev || f >= (long)NTHR * ITERS * npes) {
            CHECK(0, "thread %d: fetch_add #%d fetched %ld after %ld", t, i, f, prev);
        }
        prev = f;

        uint8_t *ss = ssrc + (size_t)i * SSLOT;
        size_t sl = slen(me, t, i);
        t_fill(ss, sl, me, ssalt(t, i));
        uint8_t *sd = sreg + pidx(t, i) * SSLOT;
        if (i % 3 == 0) {
            shmem_putmem_signal_nbi(sd, ss, sl, &sigs[t], 1, SHMEM_SIGNAL_ADD, right);
        } else {
            shmem_putmem_signal(sd, ss, sl, &sigs[t], 1, SHMEM_SIGNAL_ADD, right);
        }

        if (ctx != SHMEM_CTX_INVALID) {
            uint8_t *cs = csrc + (size_t)i * CSLOT;
            t_fill(cs, CSLOT, me, csalt(t, i));
            shmem_ctx_putmem_nbi(ctx, creg + pidx(t, i) * CSLOT, cs, CSLOT, right);
            shmem_ctx_long_atomic_inc(ctx, &ctx_ctrs[t], 0);
        }
    }
    if (ctx != SHMEM_CTX_INVALID) {
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    shmem_quiet();

    /* My left neighbour's thread t signals me ITERS times: its region is complete then. */
    uint64_t got = shmem_signal_wait_until(&sigs[t], SHMEM_CMP_EQ, ITERS);
    CHECK(got == ITERS, "thread %d: signal %" PRIu64 ", want %d", t, got, ITERS);
    int bad = 0;
    for (int i = 0; i < ITERS && bad < 3; i++) {
        size_t n = slen(left, t, i);
        pthread_mutex_lock(&check_lock);
        bad += t_verify(sreg + pidx(t, i) * SSLOT, n, left, ssalt(t, i),
                        "thread %d: put-with-signal #%d at the signal", t, i) != 0;
        pthread_mutex_unlock(&check_lock);
    }
    free(csrc);
    free(ssrc);
    free(psrc);
    return NULL;
}

int main(void)
{
    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    int ok = t_check(rc == 0, "shmem_init_thread returned %d", rc);
    ok &= t_check(provided == SHMEM_THREAD_MULTIPLE,
                  "shmem_init_thread(SHMEM_THREAD_MULTIPLE) provided %d", provided);
    int queried = -1;
    shmem_query_thread(&queried);
    t_check(queried == provided, "shmem_query_thread says %d, init provided %d", queried,
            provided);
    if (!ok) {
        shmem_finalize();
        return t_finish(NAME); /* running threads without the level would be undefined */
    }

    preg = shmem_calloc((size_t)NTHR * ITERS, PSLOT);
    sreg = shmem_calloc((size_t)NTHR * ITERS, SSLOT);
    creg = shmem_calloc((size_t)NTHR * ITERS, CSLOT);
    sigs = shmem_calloc(NTHR, sizeof(uint64_t));
    counter = shmem_calloc(1, sizeof(long));
    ctx_ctrs = shmem_calloc(NTHR, sizeof(long));
    if (!t_check(preg && sreg && creg && sigs && counter && ctx_ctrs, "allocation failed")) {
        shmem_global_exit(1);
    }
    shmem_barrier_all();

    pthread_t th[NTHR];
    int started = 0;
    for (int t = 0; t < NTHR; t++) {
        if (!t_check(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0,
                     "pthread_create %d failed", t)) {
            shmem_global_exit(1);
        }
        started++;
    }
    for (int t = 0; t < started; t++) {
        pthread_join(th[t], NULL);
    }
    shmem_barrier_all();

    int bad = 0;
    for (int t = 0; t < NTHR; t++) {
        for (int i = 0; i < ITERS && bad < 5; i++) {
            bad += t_verify(preg + pidx(t, i) * PSLOT, plen(left, t, i), left, psalt(t, i),
                            "thread %d's put #%d", t, i) != 0;
            bad += t_verify(creg + pidx(t, i) * CSLOT, CSLOT, left, csalt(t, i),
                            "thread %d's private-context put #%d", t, i) != 0;
        }
    }
    if (me == 0) {
        t_check(*counter == (long)NTHR * ITERS * npes, "fetch_add counter %ld, want %ld",
                *counter, (long)NTHR * ITERS * npes);
        for (int t = 0; t < NTHR; t++) {
            t_check(ctx_ctrs[t] == (long)ITERS * npes,
                    "private-context counter of thread %d: %ld, want %ld", t, ctx_ctrs[t],
                    (long)ITERS * npes);
        }
    }
    shmem_barrier_all();

    shmem_free(ctx_ctrs);
    shmem_free(counter);
    shmem_free(sigs);
    shmem_free(creg);
    shmem_free(sreg);
    shmem_free(preg);
    shmem_finalize();
    return t_finish(NAME);
}
