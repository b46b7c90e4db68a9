/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctx_independent: communication contexts. Each context completes and orders its own
 * operations: shmem_ctx_quiet(A) completes A's puts whatever B has in flight, shmem_ctx_fence(A)
 * orders A's puts, shmem_ctx_destroy completes the context's outstanding operations, and AMOs
 * and put-with-signal work on created contexts.
 *
 * 1. shmem_ctx_create with options 0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED,
 *    SHMEM_CTX_NOSTORE (and PRIVATE|SERIALIZED) returns 0 and distinct valid contexts;
 *    shmem_ctx_get_team gives SHMEM_TEAM_WORLD for them and for SHMEM_CTX_DEFAULT.
 * 2. Contexts A and B each put a large region (many _nbi pieces) to the right neighbour.
 *    shmem_ctx_quiet(A), then an atomic flag on the default context: the neighbour waits for the
 *    flag and finds all of A's data (a quiet that did not complete A would show stale bytes).
 *    Then the same for B.
 * 3. On A: a large _nbi put, shmem_ctx_fence(A), a put-with-signal on A: when the signal is seen
 *    the large put has landed too.
 * 4. A context C with a large _nbi put outstanding is destroyed; a flag on the default context
 *    follows: the neighbour finds C's data (ctx_destroy quiets C).
 * 5. AMOs and put-with-signal on created contexts: exact counter totals, signalled data checked.
 *    A SHMEM_CTX_NOSTORE context serves gets and fetching AMOs.
 * 6. 64 contexts alive at once, each with its own _nbi put, destroyed in scrambled order; then
 *    many create/put/destroy cycles.
 */
#include "../test.h"

#define NAME "ctx_independent"
#define BIG (2 * 1024 * 1024)
#define PIECE (64 * 1024)
#define ROUNDS 4
#define NAMO 200
#define NCTX 64
#define SLOT 512
#define CYCLES 100

static int me, npes, left, right;

/* Put n bytes as PIECE-sized _nbi pieces on ctx. */
static void put_pieces(shmem_ctx_t ctx, uint8_t *dest, const uint8_t *src, size_t n, int pe)
{
    for (size_t off = 0; off < n; off += PIECE) {
        size_t len = n - off < PIECE ? n - off : PIECE;
        shmem_ctx_putmem_nbi(ctx, dest + off, src + off, len, pe);
    }
}

static void create_options(void)
{
    const long opts[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE,
                         SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED};
    const int nopts = (int)(sizeof(opts) / sizeof(opts[0]));
    shmem_ctx_t ctx[8];
    shmem_team_t team = SHMEM_TEAM_INVALID;
    int rc = shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team);
    t_check(rc == 0 && team == SHMEM_TEAM_WORLD,
            "shmem_ctx_get_team(SHMEM_CTX_DEFAULT) returned %d, team %p (world %p)", rc,
            (void *)team, (void *)SHMEM_TEAM_WORLD);
    for (int i = 0; i < nopts; i++) {
        ctx[i] = SHMEM_CTX_INVALID;
        rc = shmem_ctx_create(opts[i], &ctx[i]);
        t_check(rc == 0 && ctx[i] != SHMEM_CTX_INVALID && ctx[i] != SHMEM_CTX_DEFAULT,
                "shmem_ctx_create(0x%lx) returned %d, ctx %p", opts[i], rc, (void *)ctx[i]);
        for (int j = 0; j < i; j++) {
            t_check(ctx[i] != ctx[j], "shmem_ctx_create(0x%lx) returned the context of 0x%lx",
                    opts[i], opts[j]);
        }
        team = SHMEM_TEAM_INVALID;
        rc = shmem_ctx_get_team(ctx[i], &team);
        t_check(rc == 0 && team == SHMEM_TEAM_WORLD,
                "shmem_ctx_get_team(ctx of 0x%lx) returned %d, team %p (world %p)", opts[i], rc,
                (void *)team, (void *)SHMEM_TEAM_WORLD);
    }
    for (int i = 0; i < nopts; i++) {
        if (ctx[i] != SHMEM_CTX_INVALID) {
            shmem_ctx_destroy(ctx[i]);
        }
    }
    /* Destroying SHMEM_CTX_INVALID is a no-op (spec: "If ctx is SHMEM_CTX_INVALID, no
     * operation is performed"). */
    shmem_ctx_destroy(SHMEM_CTX_INVALID);
    /* So are quiet and fence on it (1.5: "If ctx has the value SHMEM_CTX_INVALID, no operation
     * is performed"). */
    shmem_ctx_quiet(SHMEM_CTX_INVALID);
    shmem_ctx_fence(SHMEM_CTX_INVALID);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;

    uint8_t *ra = shmem_malloc(BIG), *rb = shmem_malloc(BIG), *rc_ = shmem_malloc(BIG);
    uint64_t *flags = shmem_calloc(8, sizeof(uint64_t));
    long *ctrs = shmem_calloc(4, sizeof(long));
    uint8_t *slots = shmem_calloc(NCTX + 2, SLOT);
    uint8_t *sa = malloc(BIG), *sb = malloc(BIG), *sc = malloc(BIG);
    uint8_t *ss = malloc((size_t)NCTX * SLOT);
    if (!t_check(ra && rb && rc_ && flags && ctrs && slots && sa && sb && sc && ss,
                 "allocation failed")) {
        shmem_global_exit(1);
    }
    uint64_t *flag_a = &flags[0], *flag_b = &flags[1], *sig_a = &flags[2], *flag_c = &flags[3],
             *sig_s = &flags[4];

    /* ---- 1 */
    create_options();
    shmem_barrier_all();

    shmem_ctx_t A = SHMEM_CTX_INVALID, B = SHMEM_CTX_INVALID;
    int rc = shmem_ctx_create(0, &A);
    int rc2 = shmem_ctx_create(SHMEM_CTX_PRIVATE, &B);
    if (!t_check(rc == 0 && rc2 == 0, "shmem_ctx_create for A and B returned %d and %d", rc,
                 rc2)) {
        shmem_global_exit(1);
    }

    /* ---- 2: quiet(A) completes A whatever B has in flight */
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t salt = 0x100 + (uint64_t)r;
        t_fill(sa, BIG, me, salt);
        t_fill(sb, BIG, me, salt + 0x1000);
        put_pieces(B, rb, sb, BIG, right); /* B first: A's quiet must not depend on it */
        put_pieces(A, ra, sa, BIG, right);
        shmem_ctx_quiet(A);
        shmem_uint64_atomic_set(flag_a, (uint64_t)r + 1, right);
        shmem_uint64_wait_until(flag_a, SHMEM_CMP_EQ, (uint64_t)r + 1);
        t_verify(ra, BIG, left, salt, "round %d: context A's data after ctx_quiet(A) + flag", r);
        shmem_ctx_quiet(B);
        shmem_uint64_atomic_set(flag_b, (uint64_t)r + 1, right);
        shmem_uint64_wait_until(flag_b, SHMEM_CMP_EQ, (uint64_t)r + 1);
        t_verify(rb, BIG, left, salt + 0x1000, "round %d: context B's data after ctx_quiet(B) + flag",
                 r);
        shmem_barrier_all(); /* checked before the next round overwrites */
    }

    /* ---- 3: ctx_fence(A) orders A's big put before A's put-with-signal */
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t salt = 0x200 + (uint64_t)r;
        static uint64_t token;
        token = (uint64_t)r;
        t_fill(sa, BIG, me, salt);
        put_pieces(A, ra, sa, BIG, right);
        shmem_ctx_fence(A);
        shmem_ctx_putmem_signal(A, rb, &token, sizeof(token), sig_a, (uint64_t)r + 1,
                                SHMEM_SIGNAL_SET, right);
        shmem_signal_wait_until(sig_a, SHMEM_CMP_EQ, (uint64_t)r + 1);
        uint64_t got_token;
        memcpy(&got_token, rb, sizeof(got_token));
        t_check(got_token == (uint64_t)r, "round %d: ctx put_signal's data %" PRIu64, r,
                got_token);
        t_verify(ra, BIG, left, salt, "round %d: A's put before ctx_fence(A), at A's signal", r);
        shmem_ctx_quiet(A);
        shmem_barrier_all();
    }

    /* ---- 4: ctx_destroy completes the context's operations */
    for (int r = 0; r < 2; r++) {
        shmem_ctx_t Cx = SHMEM_CTX_INVALID;
        rc = shmem_ctx_create(r ? SHMEM_CTX_SERIALIZED : 0, &Cx);
        if (!t_check(rc == 0, "shmem_ctx_create for C returned %d", rc)) {
            break;
        }
        uint64_t salt = 0x300 + (uint64_t)r;
        t_fill(sc, BIG, me, salt);
        put_pieces(Cx, rc_, sc, BIG, right);
        shmem_ctx_destroy(Cx);
        shmem_uint64_atomic_set(flag_c, (uint64_t)r + 1, right);
        shmem_uint64_wait_until(flag_c, SHMEM_CMP_EQ, (uint64_t)r + 1);
        t_verify(rc_, BIG, left, salt, "round %d: data of a destroyed context", r);
        shmem_barrier_all();
    }

    /* ---- 5: AMOs and put-with-signal on created contexts; a NOSTORE context */
    long prev = -1;
    for (int i = 0; i < NAMO; i++) {
        long f = shmem_ctx_long_atomic_fetch_add(A, &ctrs[0], 1, 0);
        t_check(f > prev && f < (long)NAMO * npes, "ctx A fetch_add #%d fetched %ld", i, f);
        prev = f;
        shmem_ctx_long_atomic_inc(B, &ctrs[1], right);
        shmem_ctx_long_atomic_add(A, &ctrs[2], 3, 0);
    }
    shmem_ctx_quiet(B);
    shmem_ctx_quiet(A);
    t_fill(sa, 4096, me, 0x400);
    t_fill(sb, 4096, me, 0x401);
    /* Two put-with-signals adding to one signal, one per context. */
    shmem_ctx_putmem_signal(A, ra, sa, 4096, sig_s, 1, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_long_put_signal_nbi(B, (long *)rb, (const long *)sb, 4096 / sizeof(long), sig_s,
                                  1, SHMEM_SIGNAL_ADD, right);
    shmem_signal_wait_until(sig_s, SHMEM_CMP_EQ, 2);
    t_verify(ra, 4096, left, 0x400, "ctx_putmem_signal on A: data at signal");
    t_verify(rb, 4096, left, 0x401, "ctx_long_put_signal_nbi on B: data at signal");
    shmem_ctx_quiet(B);
    shmem_barrier_all();
    if (me == 0) {
        t_check(ctrs[0] == (long)NAMO * npes, "ctx A fetch_add total %ld, want %ld", ctrs[0],
                (long)NAMO * npes);
        t_check(ctrs[2] == 3L * NAMO * npes, "ctx A add total %ld, want %ld", ctrs[2],
                3L * NAMO * npes);
    }
    t_check(ctrs[1] == NAMO, "ctx B inc from my left neighbour: %ld, want %d", ctrs[1], NAMO);

    shmem_ctx_t NS = SHMEM_CTX_INVALID;
    rc = shmem_ctx_create(SHMEM_CTX_NOSTORE, &NS);
    if (t_check(rc == 0, "shmem_ctx_create(SHMEM_CTX_NOSTORE) returned %d", rc)) {
        /* My right neighbour's ra holds my 0x400 pattern; rb my 0x401 one. */
        uint8_t *back = malloc(4096);
        memset(back, 0, 4096);
        shmem_ctx_getmem(NS, back, ra, 4096, right);
        t_verify(back, 4096, me, 0x400, "ctx_getmem on a NOSTORE context");
        memset(back, 0, 4096);
        shmem_ctx_getmem_nbi(NS, back, rb, 4096, right);
        shmem_ctx_quiet(NS);
        t_verify(back, 4096, me, 0x401, "ctx_getmem_nbi + ctx_quiet on a NOSTORE context");
        long v = shmem_ctx_long_atomic_fetch(NS, &ctrs[0], 0);
        t_check(v == (long)NAMO * npes, "ctx_long_atomic_fetch on a NOSTORE context: %ld", v);
        free(back);
        shmem_ctx_destroy(NS);
    }
    shmem_ctx_destroy(B);
    shmem_ctx_destroy(A);
    shmem_barrier_all();

    /* ---- 6: many contexts at once, then many create/destroy cycles */
    shmem_ctx_t many[NCTX];
    int nmade = 0;
    for (int i = 0; i < NCTX; i++) {
        long o = i % 3 == 0 ? 0 : i % 3 == 1 ? SHMEM_CTX_PRIVATE : SHMEM_CTX_SERIALIZED;
        many[i] = SHMEM_CTX_INVALID;
        rc = shmem_ctx_create(o, &many[i]);
        if (!t_check(rc == 0, "shmem_ctx_create #%d of %d live contexts returned %d", i, NCTX,
                     rc)) {
            break;
        }
        nmade++;
    }
    for (int i = 0; i < nmade; i++) {
        t_fill(ss + (size_t)i * SLOT, SLOT, me, 0x500 + (uint64_t)i);
        shmem_ctx_putmem_nbi(many[i], slots + (size_t)i * SLOT, ss + (size_t)i * SLOT, SLOT,
                             right);
    }
    for (int k = 0; k < nmade; k++) {
        int i = (k * 37 + 11) % nmade; /* a permutation when gcd(37, nmade) == 1 */
        if (nmade % 37 == 0) {
            i = k;
        }
        shmem_ctx_destroy(many[i]);
    }
    shmem_barrier_all();
    for (int i = 0; i < nmade; i++) {
        t_verify(slots + (size_t)i * SLOT, SLOT, left, 0x500 + (uint64_t)i,
                 "slot of context #%d (destroyed without a quiet)", i);
    }
    shmem_barrier_all();
    for (int c = 0; c < CYCLES; c++) {
        shmem_ctx_t x = SHMEM_CTX_INVALID;
        rc = shmem_ctx_create(c % 2 ? SHMEM_CTX_PRIVATE : 0, &x);
        if (!t_check(rc == 0, "create/destroy cycle %d: shmem_ctx_create returned %d", c, rc)) {
            break;
        }
        shmem_ctx_long_atomic_inc(x, &ctrs[3], 0);
        shmem_ctx_long_p(x, (long *)(slots + (size_t)NCTX * SLOT), (long)c, right);
        shmem_ctx_destroy(x);
    }
    shmem_barrier_all();
    if (me == 0) {
        t_check(ctrs[3] == (long)CYCLES * npes, "create/destroy cycles: counter %ld, want %ld",
                ctrs[3], (long)CYCLES * npes);
    }
    long lastp;
    memcpy(&lastp, slots + (size_t)NCTX * SLOT, sizeof(lastp));
    t_check(lastp == CYCLES - 1, "create/destroy cycles: last p of my left neighbour %ld", lastp);
    shmem_barrier_all();

    free(ss);
    free(sc);
    free(sb);
    free(sa);
    shmem_free(slots);
    shmem_free(ctrs);
    shmem_free(flags);
    shmem_free(rc_);
    shmem_free(rb);
    shmem_free(ra);
    shmem_finalize();
    return t_finish(NAME);
}
