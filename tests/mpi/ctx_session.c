/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctx_session: OpenSHMEM 1.6 sessions (shmem_ctx_session_start/stop) change nothing but speed.
 * Inside BATCH sessions fabshmem holds small puts and posts them together
 * (runtime/rma_session.c); every check here is on the data the right neighbour finds.
 *
 * 1. On the default context, a private, a shared (options 0) and a serialized one: in a BATCH
 *    session, NPUT puts of 1..48 bytes (consecutive, scattered and overlapping, blocking, nbi
 *    and shmem_p), non-fetching AMOs and put-with-signal; stop, shmem_ctx_quiet, barrier: the
 *    neighbour finds every byte, the AMO total and the signal.
 * 2. Configurations: config NULL, mask 0, mask SHMEM_CTX_SESSION_TOTAL_OPS with total_ops 0, 1,
 *    7 and SIZE_MAX, unknown option and mask bits, a session without BATCH; nested starts (the
 *    second adds BATCH), stop twice, stop with no session.
 * 3. shmem_ctx_session_start/stop on SHMEM_CTX_INVALID do nothing.
 * 4. Inside a session: a put, shmem_ctx_quiet, then a get of the same bytes from the neighbour
 *    returns them; a barrier inside the session completes what the session holds.
 * 5. A put in a session is not held while its PE waits: a token goes round the ring, each PE
 *    putting it in a session and waiting for its own (no quiet) before stopping.
 * 6. 500 sessions in a row, one put each, one quiet at the end.
 * 7. SHMEM_THREAD_MULTIPLE (where provided): NTHR threads, each with a private context and a
 *    session of its own, and all of them putting on one shared context in a session the main
 *    thread opened and stops after they joined.
 */
#include <pthread.h>

#include "../test.h"

#define NAME "ctx_session"
#define NPUT 400
#define AREA (NPUT * 64 + 64)
#define NAMO 100
#define NTHR 4
#define TPUT 200
#define CYCLES 500

static int me, npes, left, right;
static uint8_t *area, *src;
static long *amo;
static uint64_t *sig;
static long *token;

/* The n-th put of a run: its offset in area and length (1..48 bytes). Puts come in blocks of 8
 * in 512 bytes: even blocks are contiguous (each put starts where the last ended, so they merge),
 * odd blocks scattered (64 bytes apart), their last put overlapping the one before it. */
static int overlaps_prev(int n)
{
    return (n / 8) % 2 == 1 && n % 8 == 7;
}

static void put_shape(int n, size_t *off, size_t *len)
{
    int b = n / 8, j = n % 8;
    *len = 1 + (size_t)(t_mix((uint64_t)n) % 48);
    size_t base = (size_t)b * 512;
    if (b % 2 == 0) {
        *off = base;
        for (int k = b * 8; k < n; k++) {
            *off += 1 + (size_t)(t_mix((uint64_t)k) % 48);
        }
    } else {
        *off = base + (size_t)(overlaps_prev(n) ? (j - 1) * 64 + 4 : j * 64);
    }
}

/* What area[off] should hold at the neighbour after run `salt` (the last put covering it wins:
 * the overlapping put is fenced after the one it overlaps, and the test quiets between runs). */
static void expected(uint8_t *want, uint64_t salt)
{
    memset(want, 0, AREA);
    for (int n = 0; n < NPUT; n++) {
        size_t off, len;
        put_shape(n, &off, &len);
        for (size_t i = 0; i < len; i++) {
            want[off + i] = t_byte(left, salt + (uint64_t)n, i);
        }
    }
}

static void issue_puts(shmem_ctx_t ctx, uint64_t salt)
{
    for (int n = 0; n < NPUT; n++) {
        size_t off, len;
        put_shape(n, &off, &len);
        uint8_t *s = src + (size_t)n * 64;
        for (size_t i = 0; i < len; i++) {
            s[i] = t_byte(me, salt + (uint64_t)n, i);
        }
        if (overlaps_prev(n)) {
            /* overlaps the previous put: unordered without a fence, so fence first */
            shmem_ctx_fence(ctx);
        }
        if (len == 1 && n % 2) {
            shmem_ctx_char_p(ctx, (char *)area + off, (char)s[0], right);
        } else if (n % 4 == 1) {
            shmem_ctx_putmem(ctx, area + off, s, len, right);
        } else {
            shmem_ctx_putmem_nbi(ctx, area + off, s, len, right);
        }
    }
}

static void check_area(const char *what, uint64_t salt)
{
    uint8_t *want = malloc(AREA);
    expected(want, salt);
    size_t bad = 0, first = AREA;
    for (size_t i = 0; i < AREA; i++) {
        if (area[i] != want[i]) {
            first = bad++ ? first : i;
        }
    }
    t_check(bad == 0, "%s: %zu of %d bytes wrong, first at %zu (0x%02x, want 0x%02x)", what,
            bad, AREA, first, first < AREA ? area[first] : 0, first < AREA ? want[first] : 0);
    free(want);
    memset(area, 0, AREA);
}

/* One run of puts, AMOs and a put-with-signal on ctx, in a session started by start(). */
static void run(const char *what, shmem_ctx_t ctx, long options,
                const shmem_ctx_session_config_t *cfg, long mask, uint64_t salt)
{
    *amo = 0;
    *sig = 0;
    shmem_barrier_all();
    shmem_ctx_session_start(ctx, options, cfg, mask);
    issue_puts(ctx, salt);
    for (int i = 0; i < NAMO; i++) {
        shmem_ctx_long_atomic_add(ctx, amo, 1 + i % 3, right);
    }
    uint64_t word = t_pattern(me, salt);
    shmem_ctx_putmem_signal_nbi(ctx, area + AREA - 8, &word, 8, sig, 5, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    uint64_t got;
    memcpy(&got, area + AREA - 8, 8);
    t_check(got == t_pattern(left, salt), "%s: put-with-signal data 0x%llx, want 0x%llx", what,
            (unsigned long long)got, (unsigned long long)t_pattern(left, salt));
    memset(area + AREA - 8, 0, 8);
    long want = 0;
    for (int i = 0; i < NAMO; i++) {
        want += 1 + i % 3;
    }
    t_check(*amo == want, "%s: AMO total %ld, want %ld", what, *amo, want);
    t_check(*sig == 5, "%s: signal %llu, want 5", what, (unsigned long long)*sig);
    check_area(what, salt);
}

static void contexts(void)
{
    const long opts[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED};
    const char *names[] = {"shared context", "private context", "serialized context"};
    run("default context", SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, NULL, 0, 100);
    for (int i = 0; i < 3; i++) {
        shmem_ctx_t ctx;
        t_check(shmem_ctx_create(opts[i], &ctx) == 0, "shmem_ctx_create(%ld)", opts[i]);
        run(names[i], ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0, 200 + (uint64_t)i);
        shmem_ctx_destroy(ctx);
    }
}

static void configs(void)
{
    shmem_ctx_t ctx;
    t_check(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "shmem_ctx_create");
    shmem_ctx_session_config_t cfg = {.total_ops = 0};
    const size_t totals[] = {0, 1, 7, SIZE_MAX};
    char what[96];
    for (int i = 0; i < 4; i++) {
        cfg.total_ops = totals[i];
        snprintf(what, sizeof(what), "total_ops %zu", totals[i]);
        run(what, ctx, SHMEM_CTX_SESSION_BATCH, &cfg, SHMEM_CTX_SESSION_TOTAL_OPS, 300 + (uint64_t)i);
    }
    cfg.total_ops = 1;
    run("mask 0 (total_ops ignored)", ctx, SHMEM_CTX_SESSION_BATCH, &cfg, 0, 310);
    run("unknown option and mask bits", ctx, SHMEM_CTX_SESSION_BATCH | (1L << 20), &cfg,
        SHMEM_CTX_SESSION_TOTAL_OPS | (1L << 30), 311);
    run("no BATCH option", ctx, 0, NULL, 0, 312);
    /* nested: a session without options, then BATCH added, stopped twice */
    shmem_barrier_all();
    shmem_ctx_session_start(ctx, 0, NULL, 0);
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &cfg, SHMEM_CTX_SESSION_TOTAL_OPS);
    cfg.total_ops = SIZE_MAX;
    shmem_ctx_session_start(ctx, 0, &cfg, SHMEM_CTX_SESSION_TOTAL_OPS);
    issue_puts(ctx, 320);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    check_area("nested starts, two stops", 320);
    shmem_ctx_session_stop(ctx); /* no session: no effect */
    shmem_ctx_destroy(ctx);
    /* SHMEM_CTX_INVALID: no action */
    shmem_ctx_session_start(SHMEM_CTX_INVALID, SHMEM_CTX_SESSION_BATCH, &cfg,
                            SHMEM_CTX_SESSION_TOTAL_OPS);
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);
}

/* quiet and barrier inside a session; a get after the quiet sees the put */
static void inside(void)
{
    shmem_barrier_all();
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    issue_puts(SHMEM_CTX_DEFAULT, 400);
    shmem_barrier_all(); /* completes the session's puts */
    check_area("barrier inside a session", 400);
    shmem_barrier_all();
    uint64_t v = t_pattern(me, 401), back = 0;
    shmem_putmem(area + 64, &v, 8, right);
    shmem_quiet();
    shmem_getmem(&back, area + 64, 8, right);
    t_check(back == v, "get after put and quiet in a session: 0x%llx, want 0x%llx",
            (unsigned long long)back, (unsigned long long)v);
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    memset(area, 0, AREA);
}

/* A held put must move while its PE waits: token ring, no quiet before the wait. */
static void ring(void)
{
    *token = 0;
    shmem_barrier_all();
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    for (long round = 1; round <= 20; round++) {
        if (me == 0) {
            shmem_long_p(token, round, right);
            shmem_long_wait_until(token, SHMEM_CMP_EQ, round);
        } else {
            shmem_long_wait_until(token, SHMEM_CMP_EQ, round);
            shmem_long_p(token, round, right);
        }
    }
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    shmem_quiet();
    shmem_barrier_all();
    t_check(*token == 20, "token ring in a session: %ld, want 20", *token);
}

static void cycles(void)
{
    shmem_barrier_all();
    for (int c = 0; c < CYCLES; c++) {
        shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, NULL, 0);
        shmem_char_p((char *)area + c, (char)t_byte(me, 500, (size_t)c), right);
        shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    }
    shmem_quiet();
    shmem_barrier_all();
    size_t bad = 0;
    for (int c = 0; c < CYCLES; c++) {
        bad += area[c] != t_byte(left, 500, (size_t)c);
    }
    t_check(bad == 0, "%d sessions in a row: %zu bytes wrong", CYCLES, bad);
    shmem_barrier_all();
    memset(area, 0, AREA);
}

static shmem_ctx_t shared;

/* Thread t owns area[t * TREG .. ): the first half through its private context, the second
 * through the shared one. */
#define TREG (AREA / NTHR)
static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    shmem_ctx_t mine;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &mine) != 0) {
        t_check(0, "thread %d: shmem_ctx_create", t);
        return NULL;
    }
    shmem_ctx_session_start(mine, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    uint8_t buf[8];
    for (int i = 0; i < TPUT / 2; i++) {
        for (size_t k = 0; k < 8; k++) {
            buf[k] = t_byte(me, 600 + (uint64_t)t, (size_t)i * 8 + k);
        }
        size_t off = (size_t)t * TREG + (size_t)i * 8;
        shmem_ctx_putmem_nbi(mine, area + off, buf, 8, right);
        shmem_ctx_putmem_nbi(shared, area + off + TREG / 2, buf, 8, right);
    }
    shmem_ctx_session_stop(mine);
    shmem_ctx_destroy(mine); /* completes its puts */
    return NULL;
}

static void threads(int provided)
{
    if (provided != SHMEM_THREAD_MULTIPLE) {
        if (me == 0) {
            printf("  %s: threads part skipped (SHMEM_THREAD_MULTIPLE not provided)\n", NAME);
        }
        return;
    }
    t_check(shmem_ctx_create(0, &shared) == 0, "shmem_ctx_create(shared)");
    shmem_barrier_all();
    shmem_ctx_session_start(shared, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    pthread_t th[NTHR];
    for (int t = 0; t < NTHR; t++) {
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    }
    for (int t = 0; t < NTHR; t++) {
        pthread_join(th[t], NULL);
    }
    shmem_ctx_session_stop(shared);
    shmem_ctx_quiet(shared);
    shmem_barrier_all();
    size_t bad = 0;
    for (int t = 0; t < NTHR; t++) {
        for (size_t b = 0; b < (size_t)TPUT / 2 * 8; b++) {
            uint8_t want = t_byte(left, 600 + (uint64_t)t, b);
            bad += area[(size_t)t * TREG + b] != want;
            bad += area[(size_t)t * TREG + TREG / 2 + b] != want;
        }
    }
    t_check(bad == 0, "threads: %zu bytes wrong", bad);
    shmem_ctx_destroy(shared);
    shmem_barrier_all();
}

int main(void)
{
    int provided = 0;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    left = (me + npes - 1) % npes;
    right = (me + 1) % npes;
    area = shmem_calloc(AREA, 1);
    amo = shmem_calloc(1, sizeof(long));
    sig = shmem_calloc(1, sizeof(uint64_t));
    token = shmem_calloc(1, sizeof(long));
    src = malloc(NPUT * 64);
    if (!area || !amo || !sig || !token || !src) {
        t_check(0, "allocation");
        return t_finish(NAME);
    }
    contexts();
    configs();
    inside();
    ring();
    cycles();
    threads(provided);
    shmem_barrier_all();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
