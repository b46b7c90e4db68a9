/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctx_lanes: contexts with endpoints of their own in a SHMEM_THREAD_MULTIPLE program. The
 * .env allows two (FABSHMEM_CTX_ENDPOINTS=2); NTHR threads each create a context, so where
 * the fabric allows them two contexts post on endpoints of their own and the others through
 * the engine's (SHMEM_INFO names which; on a provider without them every context is the
 * engine's, and the data must be the same). Every thread, in ROUNDS rounds, into its own
 * slots of the right neighbour:
 *   - a blocking put (its source overwritten at once: it must be reusable on return), a put_nbi,
 *     or a strided long iput (destination stride 2), from a malloc'd or a symmetric source,
 *     of 1 byte to 150,000 bytes (above the provider's inject size and message pieces);
 *   - a fetch_add and an add on its own counter at the right neighbour (the fetched values
 *     must count up exactly: only this thread adds there, and pe_quiet completes each round);
 *   - ctx_pe_quiet on the right neighbour, then a blocking get or a get_nbi + ctx_quiet of
 *     what it just put, checked at once, and an atomic fetch of the counter.
 * One more context, created on a team split with SHMEM_TEAM_NUM_CONTEXTS = 1 (every PE), puts
 * to its right neighbour and reads it back. Last, progress without calls (the spec's progress
 * rule): each PE puts PROG_BYTES with put_nbi on a context of its own and, without quiet and
 * without any call that could drive that context, spins on plain memory until the left
 * neighbour's data has landed (then acknowledges it with a put) and its own was acknowledged;
 * only the progress thread can move the context's transfer meanwhile. A spin that lasts 60 s
 * fails the test instead of hanging. After join + barrier every slot is checked, the gaps of strided puts too.
 */
#include <pthread.h>
#include <time.h>

#include "../test.h"

#define NAME "ctx_lanes"
#define NTHR 3
#define ROUNDS 24
#define SLOT ((size_t)160 << 10)

static int me, npes, left, right;
static uint8_t *reg;  /* [thread][round] slots written by the left neighbour */
static uint8_t *ssrc; /* symmetric sources, [thread] one slot each */
static long *ctrs;    /* [thread]: added to by the left neighbour's thread */

static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
#define CHECK(...)                                                                                \
    do {                                                                                          \
        pthread_mutex_lock(&check_lock);                                                          \
        t_check(__VA_ARGS__);                                                                     \
        pthread_mutex_unlock(&check_lock);                                                        \
    } while (0)

static const size_t sizes[] = {1, 7, 64, 65, 1000, 4096, 65536 + 13, 150000};

/* Round i's kind: 0 blocking put, 1 put_nbi, 2 strided iput. */
static int kind_of(int i)
{
    return i % 3;
}
static size_t len_of(int t, int i)
{
    size_t n = sizes[(size_t)(t + i * 5) % (sizeof(sizes) / sizeof(sizes[0]))];
    /* A strided put spreads its longs over twice the bytes: it must fit the slot. */
    return kind_of(i) == 2 && n > SLOT / 2 - 16 ? SLOT / 2 - 16 : n;
}
static uint64_t salt_of(int t, int i)
{
    return 0x7000000 + (uint64_t)t * 1000 + (uint64_t)i;
}
static uint8_t *slot(int t, int i)
{
    return reg + ((size_t)t * ROUNDS + (size_t)i) * SLOT;
}
/* What slot (t, i) of a PE holds once its left neighbour `from` wrote it: the pattern, spread
 * to every other long for a strided put (the longs between stay 0). */
static size_t check_slot(const uint8_t *got, int from, int t, int i, const char *when)
{
    size_t n = len_of(t, i);
    if (kind_of(i) != 2) {
        pthread_mutex_lock(&check_lock);
        size_t bad = t_verify(got, n, from, salt_of(t, i), "%s: thread %d round %d (%zu bytes)",
                              when, t, i, n);
        pthread_mutex_unlock(&check_lock);
        return bad;
    }
    size_t nl = (n + sizeof(long) - 1) / sizeof(long);
    long *want = calloc(nl, sizeof(long));
    if (!want) {
        CHECK(0, "calloc failed");
        return 1;
    }
    t_fill(want, nl * sizeof(long), from, salt_of(t, i));
    const long *g = (const long *)got;
    size_t bad = 0;
    for (size_t k = 0; k < nl; k++) {
        bad += g[2 * k] != want[k] || (k + 1 < nl && g[2 * k + 1] != 0);
    }
    CHECK(bad == 0, "%s: thread %d round %d: %zu of %zu strided longs wrong", when, t, i, bad,
          nl);
    free(want);
    return bad;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint8_t *priv = malloc(SLOT);
    uint8_t *back = malloc(2 * SLOT);
    if (!priv || !back) {
        CHECK(0, "thread %d: malloc failed", t);
        return NULL;
    }
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    int rc = shmem_ctx_create(t % 2 ? SHMEM_CTX_PRIVATE : SHMEM_CTX_SERIALIZED, &ctx);
    CHECK(rc == 0 && ctx != SHMEM_CTX_INVALID, "thread %d: shmem_ctx_create returned %d", t, rc);
    if (ctx == SHMEM_CTX_INVALID) {
        return NULL;
    }
    uint8_t *sym = ssrc + (size_t)t * SLOT;
    for (int i = 0; i < ROUNDS; i++) {
        size_t n = len_of(t, i);
        uint8_t *src = i % 2 ? priv : sym;
        uint8_t *dst = slot(t, i);
        size_t nl = (n + sizeof(long) - 1) / sizeof(long);
        t_fill(src, kind_of(i) == 2 ? nl * sizeof(long) : n, me, salt_of(t, i));
        switch (kind_of(i)) {
        case 0:
            shmem_ctx_putmem(ctx, dst, src, n, right);
            memset(src, 0xa5, n); /* reusable on return: this must not reach the target */
            break;
        case 1:
            shmem_ctx_putmem_nbi(ctx, dst, src, n, right);
            break;
        default:
            shmem_ctx_long_iput(ctx, (long *)dst, (const long *)src, 2, 1, nl, right);
            break;
        }
        long f = shmem_ctx_long_atomic_fetch_add(ctx, &ctrs[t], 1, right);
        CHECK(f == 2L * i, "thread %d round %d: fetch_add fetched %ld, want %ld", t, i, f, 2L * i);
        shmem_ctx_long_atomic_add(ctx, &ctrs[t], 1, right);
        shmem_ctx_pe_quiet(ctx, &right, 1);
        f = shmem_ctx_long_atomic_fetch(ctx, &ctrs[t], right);
        CHECK(f == 2L * i + 2, "thread %d round %d: counter %ld after pe_quiet, want %ld", t, i,
              f, 2L * i + 2);
        size_t span = kind_of(i) == 2 ? 2 * nl * sizeof(long) : n;
        memset(back, 0x5a, span);
        if (i % 4 < 2) {
            shmem_ctx_getmem(ctx, back, dst, span, right);
        } else {
            shmem_ctx_getmem_nbi(ctx, back, dst, span, right);
            shmem_ctx_quiet(ctx);
        }
        check_slot(back, me, t, i, "read back at once");
    }
    shmem_ctx_destroy(ctx);
    free(back);
    free(priv);
    return NULL;
}

#define PROG_BYTES ((size_t)8 << 20)

/* Has the left neighbour's put landed? Every 4,096th byte and the last one, as the spin's
 * evidence (the whole buffer is checked after the quiet and barrier). The transport writes the
 * buffer while this reads it: the OpenSHMEM model, which .ci/tsan.supp names (ctx_lanes_spin_). */
static int ctx_lanes_spin_landed(const uint8_t *buf)
{
    for (size_t i = 0;; i += 4096) {
        size_t at = i < PROG_BYTES ? i : PROG_BYTES - 1;
        if (__atomic_load_n(&buf[at], __ATOMIC_RELAXED) != t_byte(left, 0x7200000, at)) {
            return 0;
        }
        if (at == PROG_BYTES - 1) {
            return 1;
        }
    }
}

/* The acknowledgement a peer's put sets: read as ctx_lanes_spin_landed reads. */
static long ctx_lanes_spin_ack(const long *ack)
{
    return __atomic_load_n(ack, __ATOMIC_ACQUIRE);
}

static void progress_without_calls(uint8_t *pbuf, long *ack)
{
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    if (!t_check(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "shmem_ctx_create failed")) {
        return;
    }
    uint8_t *src = malloc(PROG_BYTES);
    if (!t_check(src != NULL, "malloc failed")) {
        shmem_ctx_destroy(ctx);
        return;
    }
    t_fill(src, PROG_BYTES, me, 0x7200000);
    shmem_ctx_putmem_nbi(ctx, pbuf, src, PROG_BYTES, right);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int seen = 0, acked = 0;
    double waited = 0;
    while ((!seen || !acked) && waited < 60) {
        if (!seen && ctx_lanes_spin_landed(pbuf)) {
            seen = 1;
            shmem_long_p(ack, 1, left);
        }
        acked = ctx_lanes_spin_ack(ack) != 0;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    }
    t_check(seen, "the left neighbour's put_nbi never landed without calls (60 s)");
    t_check(acked, "my put_nbi was not acknowledged without calls (60 s)");
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    free(src);
    shmem_barrier_all();
    t_verify(pbuf, PROG_BYTES, left, 0x7200000, "put_nbi moved without calls, after the barrier");
}

/* A context on a team whose configuration asked for one: team-relative PE numbers. */
static void team_context(uint8_t *tslot)
{
    shmem_team_t team = SHMEM_TEAM_INVALID;
    shmem_team_config_t conf = {.num_contexts = 1};
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &conf,
                                      SHMEM_TEAM_NUM_CONTEXTS, &team);
    if (!t_check(rc == 0 && team != SHMEM_TEAM_INVALID, "team split returned %d", rc)) {
        return;
    }
    int tme = shmem_team_my_pe(team);
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    rc = shmem_team_create_ctx(team, SHMEM_CTX_PRIVATE, &ctx);
    if (t_check(rc == 0, "shmem_team_create_ctx returned %d", rc)) {
        int tright = (tme + 1) % npes;
        uint8_t src[3000], back[3000];
        t_fill(src, sizeof(src), me, 0x7100000);
        shmem_ctx_putmem(ctx, tslot, src, sizeof(src), tright);
        shmem_ctx_quiet(ctx);
        shmem_ctx_getmem(ctx, back, tslot, sizeof(back), tright);
        t_verify(back, sizeof(back), me, 0x7100000, "team context: read back");
        shmem_ctx_destroy(ctx);
    }
    shmem_team_sync(team);
    t_verify(tslot, 3000, left, 0x7100000, "team context: put by the team's left neighbour");
    shmem_team_destroy(team);
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
    if (!t_check(rc == 0 && provided == SHMEM_THREAD_MULTIPLE,
                 "shmem_init_thread returned %d, provided %d", rc, provided)) {
        shmem_finalize();
        return t_finish(NAME);
    }
    reg = shmem_calloc((size_t)NTHR * ROUNDS, SLOT);
    ssrc = shmem_malloc((size_t)NTHR * SLOT);
    uint8_t *tslot = shmem_calloc(1, 3000);
    ctrs = shmem_calloc(NTHR, sizeof(long));
    uint8_t *pbuf = shmem_calloc(1, PROG_BYTES);
    long *ack = shmem_calloc(1, sizeof(long));
    if (!t_check(reg && ssrc && tslot && ctrs && pbuf && ack, "allocation failed")) {
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
    size_t bad = 0;
    for (int t = 0; t < NTHR; t++) {
        for (int i = 0; i < ROUNDS && bad < 5; i++) {
            bad += check_slot(slot(t, i), left, t, i, "after the barrier");
        }
        t_check(ctrs[t] == 2L * ROUNDS, "counter %d: %ld, want %ld", t, ctrs[t], 2L * ROUNDS);
    }
    shmem_barrier_all();
    team_context(tslot);
    shmem_barrier_all();
    if (npes > 1) {
        progress_without_calls(pbuf, ack);
    }
    shmem_barrier_all();
    shmem_free(ack);
    shmem_free(pbuf);
    shmem_free(ctrs);
    shmem_free(tslot);
    shmem_free(ssrc);
    shmem_free(reg);
    shmem_finalize();
    return t_finish(NAME);
}
