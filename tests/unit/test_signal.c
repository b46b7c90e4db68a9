/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_signal: put-with-signal (runtime/signal.c) on the fake transport (fake.h), both ends in
 * this process (PE 0 signals PE 1, which the fake loops back here).
 *
 * - pieces_first / desc_first / inline_done_first: the test orders the wire itself. A 1000-byte
 *   put goes as 4 data writes and a descriptor (256-byte messages, 4-byte immediate data, one
 *   remote segment per write: efa-direct's shape); whichever lands first, the signal stays 0
 *   until the last byte landed, and then has its value with all the data in place. An inline
 *   put (data in the descriptor) whose completion comes before it lands is not applied
 *   before it lands.
 * - denied_fallback: the target's only inbox is held by another source (PE 2, played by the
 *   test), so the claim is denied and the put-with-signal goes as a put, then an atomic
 *   applied by the target: no descriptor travels, and the signal still never shows before
 *   its data (checked at every poll) and has its value after quiet.
 * - random_*: 300 puts of mixed sizes (0 to 1000 bytes, inline, pieces, wide, paired), blocking
 *   and not, with 4 slots per source (so every slot and the ring are reused many times), in the
 *   fake's random order and, for some seeds, the runtime's own chaos orders on top. At every
 *   poll, every signal seen set must guard data already complete; at the end quiet returns
 *   only when every signal was applied, each word has its value (SET) or the sum (ADD), and
 *   the fake saw nothing a NIC would refuse.
 */
#include <stdint.h>
#include <string.h>

#include "amo.h"
#include "error.h"
#include "fake.h"
#include "heap.h"
#include "mr.h"
#include "progress.h"
#include "rma.h"
#include "shmem.h"
#include "signal.h"
#include "unit.h"

#define N 300
#define MAXLEN 1000

static uint8_t pattern(size_t i, size_t j)
{
    return (uint8_t)(i * 31 + j * 7 + 1);
}

static bool same(const uint8_t *p, size_t i, size_t len)
{
    for (size_t j = 0; j < len; j++) {
        if (p[j] != pattern(i, j)) {
            return false;
        }
    }
    return true;
}

static int start(struct fake_config c, long slots)
{
    int rc = fake_start(&c);
    if (rc == 0) {
        rc = fsh_signal_init(slots, 2);
    }
    UNIT_CHECK(rc == 0, "fake and signal start: %d (%s)", rc,
               fsh_err_last() ? fsh_err_last()->msg : "");
    return rc;
}

/* The first signal to PE 1 claims our inbox there (a round trip): done in auto mode. */
static void claim_inbox(void)
{
    uint64_t *w = fsh_heap_alloc(8, 8);
    *w = 0;
    int rc = fsh_signal_put(&fsh_ctx_default, FSH_SEG_HEAP, 0, NULL, 0, FSH_SEG_HEAP,
                            fake_heap_off(w, 8), 1, SHMEM_SIGNAL_SET, 1, false);
    rc = rc ? rc : fsh_signal_quiet();
    UNIT_CHECK(rc == 0 && *w == 1, "the first signal applied (rc %d, word %llu)", rc,
               (unsigned long long)*w);
}

static void deliver_all(enum fake_event_kind kind, int imm_kind, size_t max)
{
    long i;
    while (max-- && (i = fake_find(kind, imm_kind)) >= 0) {
        UNIT_CHECK(fake_deliver((size_t)i) == 0, "event %ld may happen", i);
    }
}

/* A 1000-byte put-with-signal, its events in the order `order` gives: 'd' the descriptor's
 * landing, 'p' one data piece's landing. */
static void ordered(const char *order)
{
    struct fake_config c = fake_lean(1);
    c.max_msg_size = 256;
    if (start(c, 8) != 0) {
        return;
    }
    claim_inbox();
    fake_set_mode(FAKE_MANUAL);
    uint8_t *dst = fsh_heap_alloc(MAXLEN, 64);
    uint64_t *sig = fsh_heap_alloc(8, 8);
    static uint8_t src[MAXLEN];
    for (size_t j = 0; j < MAXLEN; j++) {
        src[j] = pattern(5, j);
    }
    memset(dst, 0, MAXLEN);
    *sig = 0;
    int rc = fsh_signal_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(dst, MAXLEN), src, MAXLEN,
                            FSH_SEG_HEAP, fake_heap_off(sig, 8), 42, SHMEM_SIGNAL_SET, 1, true);
    UNIT_CHECK(rc == 0, "put-with-signal posted: %d", rc);
    UNIT_CHECK(fake_find(FAKE_LAND, FSH_IMM_SIG_DATA) >= 0 &&
                   fake_find(FAKE_LAND, FSH_IMM_SIG_DESC) >= 0,
               "the put went as data pieces and a descriptor");
    size_t pieces = 0;
    for (const char *o = order; *o; o++) {
        UNIT_CHECK(*sig == 0, "order %s: signal %llu before step %zu", order,
                   (unsigned long long)*sig, (size_t)(o - order));
        if (*o == 'd') {
            deliver_all(FAKE_LAND, FSH_IMM_SIG_DESC, 1);
        } else {
            deliver_all(FAKE_LAND, FSH_IMM_SIG_DATA, 1);
            pieces++;
        }
        /* Completions too, in between: they must not move the target. */
        deliver_all(FAKE_DONE, 0, 1);
        fsh_progress_poll();
        fsh_progress_poll();
    }
    UNIT_CHECK(pieces == 4 && fake_find(FAKE_LAND, FSH_IMM_SIG_DATA) < 0,
               "order %s: 4 pieces (%zu)", order, pieces);
    UNIT_CHECK(*sig == 42, "order %s: signal applied once all landed (%llu)", order,
               (unsigned long long)*sig);
    UNIT_CHECK(same(dst, 5, MAXLEN), "order %s: data in place under the signal", order);
    fake_set_mode(FAKE_AUTO);
    UNIT_CHECK(fsh_signal_quiet() == 0, "quiet after the ordered put");
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

static void pieces_first(void)
{
    ordered("ppppd");
}

static void desc_first(void)
{
    ordered("dppp" "p");
}

static void desc_between(void)
{
    ordered("ppdpp");
}

/* Inline data: the descriptor carries it; its completion (not delivery complete) comes first,
 * and neither data nor signal may show before the descriptor landed. */
static void inline_done_first(void)
{
    if (start(fake_lean(2), 8) != 0) {
        return;
    }
    claim_inbox();
    fake_set_mode(FAKE_MANUAL);
    uint8_t *dst = fsh_heap_alloc(64, 64);
    uint64_t *sig = fsh_heap_alloc(8, 8);
    uint8_t src[40];
    for (size_t j = 0; j < sizeof(src); j++) {
        src[j] = pattern(9, j);
    }
    memset(dst, 0, 64);
    *sig = 5;
    int rc = fsh_signal_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(dst, 40), src, sizeof(src),
                            FSH_SEG_HEAP, fake_heap_off(sig, 8), 3, SHMEM_SIGNAL_ADD, 1, false);
    UNIT_CHECK(rc == 0, "inline put-with-signal: %d", rc);
    memset(src, 0xEE, sizeof(src)); /* returned: the source is the caller's again */
    UNIT_CHECK(fake_find(FAKE_LAND, FSH_IMM_SIG_DATA) < 0, "inline: no data piece");
    deliver_all(FAKE_DONE, 0, 8);
    fsh_progress_poll();
    UNIT_CHECK(*sig == 5 && dst[0] == 0, "inline: nothing before the descriptor landed");
    deliver_all(FAKE_LAND, FSH_IMM_SIG_DESC, 8);
    fsh_progress_poll();
    fsh_progress_poll();
    UNIT_CHECK(*sig == 8, "inline: ADD applied once (%llu)", (unsigned long long)*sig);
    UNIT_CHECK(same(dst, 9, sizeof(src)), "inline: the data as it was when the call returned");
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

/* ---------------------------------------------------------------- random orders */

static struct {
    uint8_t *dst[N];
    size_t len[N];
    uint64_t *sig;   /* [N]: SET words */
    uint64_t *sum;   /* one ADD word */
    unsigned bad;
} rs;

static void invariant(void)
{
    for (size_t i = 0; i < N; i++) {
        uint64_t v = __atomic_load_n(&rs.sig[i], __ATOMIC_ACQUIRE);
        if (v != 0 && (v != i + 1 || !same(rs.dst[i], i, rs.len[i])) && rs.bad++ < 5) {
            UNIT_CHECK(false, "signal %zu is %llu while its %zu bytes are %s", i,
                       (unsigned long long)v, rs.len[i],
                       same(rs.dst[i], i, rs.len[i]) ? "complete" : "not all there");
        }
    }
}

static void random_run(struct fake_config c)
{
    static const size_t lens[] = {0, 1, 8, 16, 17, 40, 100, 255, 256, 257, 600, MAXLEN};
    if (start(c, 4) != 0) {
        return;
    }
    rs.sig = fsh_heap_alloc(N * 8, 64);
    rs.sum = fsh_heap_alloc(8, 8);
    memset(rs.sig, 0, N * 8);
    *rs.sum = 0;
    uint8_t *srcs = malloc((size_t)N * MAXLEN);
    uint64_t want_sum = 0, r = c.seed * 7 + 3;
    for (size_t i = 0; i < N; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        rs.len[i] = lens[(r >> 33) % (sizeof(lens) / sizeof(lens[0]))];
        rs.dst[i] = fsh_heap_alloc(rs.len[i] ? rs.len[i] : 1, 8);
        memset(rs.dst[i], 0, rs.len[i]);
        for (size_t j = 0; j < rs.len[i]; j++) {
            srcs[i * MAXLEN + j] = pattern(i, j);
        }
    }
    fake_set_tick(invariant);
    for (size_t i = 0; i < N; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        bool nbi = (r >> 40) & 1, add = (r >> 41) % 4 == 0;
        uint64_t *w = add ? rs.sum : &rs.sig[i];
        uint64_t value = add ? i : i + 1;
        want_sum += add ? i : 0;
        int rc = fsh_signal_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(rs.dst[i], rs.len[i]),
                                srcs + i * MAXLEN, rs.len[i], FSH_SEG_HEAP, fake_heap_off(w, 8), value,
                                add ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET, 1, nbi);
        UNIT_CHECK(rc == 0, "put-with-signal %zu (%zu bytes): %d (%s)", i, rs.len[i], rc,
                   fsh_err_last() ? fsh_err_last()->msg : "");
        if (rc != 0) {
            break; /* the engine failed: every later wait would fail the same way */
        }
        if (!nbi) {
            /* Returned: the source is free (a blocking call), and is overwritten. */
            memset(srcs + i * MAXLEN, 0xA5, rs.len[i]);
        }
        if (add) {
            rs.len[i] = 0; /* nothing to compare under an ADD word */
        }
    }
    int rc = fsh_rma_quiet(&fsh_ctx_default);
    UNIT_CHECK(rc == 0, "quiet: %d", rc);
    invariant();
    size_t set = 0;
    for (size_t i = 0; i < N; i++) {
        set += rs.sig[i] != 0;
        if (rs.sig[i] == 0 && rs.len[i] != 0) {
            UNIT_CHECK(rs.sig[i] != 0, "after quiet, SET signal %zu is applied", i);
        }
    }
    UNIT_CHECK(*rs.sum == want_sum, "after quiet, the ADD word is the sum: %llu, want %llu",
               (unsigned long long)*rs.sum, (unsigned long long)want_sum);
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
    printf("test_signal: seed %llu: %zu SET words, %llu writes posted, %llu remote events\n",
           (unsigned long long)c.seed, set, (unsigned long long)fake_stats()->posted,
           (unsigned long long)fake_stats()->remote_events);
    free(srcs);
    fake_set_tick(NULL);
    fsh_signal_fini();
    fake_stop();
}

static void random_efa(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct fake_config c = fake_lean(seed);
        c.max_msg_size = 256;
        random_run(c);
    }
}

static void random_efa_chaos(void)
{
    struct fake_config c = fake_lean(11);
    c.max_msg_size = 256;
    c.chaos = true;
    random_run(c);
}

/* 8 bytes of immediate data (the wide form), two remote segments per write and a 512-byte
 * inject (the paired form): shm and tcp's shape. */
static void random_wide_pair(void)
{
    struct fake_config c = fake_lean(21);
    c.cq_data_size = 8;
    c.rma_iov_limit = 2;
    c.inject_size = 512;
    c.max_msg_size = 4096;
    c.mr_local = false;
    c.chaos = true;
    random_run(c);
}

#define NDENIED 20
static struct {
    uint8_t *dst[NDENIED];
    uint64_t *sig;
    bool desc_seen, amo_seen;
    unsigned bad;
} df;

static bool observe(const struct fake_event *e)
{
    unsigned kind = e->has_imm ? (unsigned)((uint32_t)e->imm >> FSH_IMM_KIND_SHIFT) : 0;
    df.desc_seen = df.desc_seen || kind == FSH_IMM_SIG_DESC || kind == FSH_IMM_SIG_WIDE;
    df.amo_seen = df.amo_seen || kind == FSH_IMM_AMO;
    return true;
}

static void denied_invariant(void)
{
    for (size_t i = 0; i < NDENIED; i++) {
        if (__atomic_load_n(&df.sig[i], __ATOMIC_ACQUIRE) != 0 && !same(df.dst[i], i, 600) &&
            df.bad++ == 0) {
            UNIT_CHECK(false, "denied: signal %zu shows before its 600 bytes landed", i);
        }
    }
}

static void denied_fallback(void)
{
    for (uint64_t seed = 41; seed <= 43; seed++) {
        struct fake_config c = fake_lean(seed);
        c.npes = 3;
        c.max_msg_size = 256;
        c.chaos = seed == 43;
        int rc = fake_start(&c);
        rc = rc ? rc : fsh_amo_init(2);
        rc = rc ? rc : fsh_signal_init(8, 1); /* one inbox per target */
        UNIT_CHECK(rc == 0, "start: %d", rc);
        if (rc != 0) {
            return;
        }
        /* PE 2 claims the one inbox here (lease.c's wire format: pool 0 << 22 | source). */
        fake_remote_event((uint64_t)FSH_IMM_LEASE << FSH_IMM_KIND_SHIFT | 2);
        df.sig = fsh_heap_alloc(NDENIED * 8, 64);
        memset(df.sig, 0, NDENIED * 8);
        /* One AMO first, so that the atomics' own inbox at PE 1 is held: the signals' atomics
         * then go at once, racing their data on the wire. */
        uint64_t old = 1;
        rc = fsh_amo(&fsh_ctx_default, FSH_AMO_FETCH, FSH_SEG_HEAP, fake_heap_off(df.sig, 8), &old, NULL,
                     &old, 8, 1, false);
        UNIT_CHECK(rc == 0 && old == 0, "the first AMO: %d", rc);
        static uint8_t src[NDENIED][600];
        for (size_t i = 0; i < NDENIED; i++) {
            df.dst[i] = fsh_heap_alloc(600, 64);
            memset(df.dst[i], 0, 600);
            for (size_t j = 0; j < 600; j++) {
                src[i][j] = pattern(i, j);
            }
        }
        df.bad = 0;
        df.desc_seen = df.amo_seen = false;
        fake_set_gate(observe);
        fake_set_tick(denied_invariant);
        for (size_t i = 0; i < NDENIED && rc == 0; i++) {
            rc = fsh_signal_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(df.dst[i], 600), src[i],
                                600, FSH_SEG_HEAP, fake_heap_off(&df.sig[i], 8), i + 1,
                                SHMEM_SIGNAL_SET, 1, i % 2 == 0);
            UNIT_CHECK(rc == 0, "denied put-with-signal %zu: %d (%s)", i, rc,
                       fsh_err_last() ? fsh_err_last()->msg : "");
        }
        /* Complete, like any AMO, at quiet. */
        rc = fsh_rma_quiet(&fsh_ctx_default);
        UNIT_CHECK(rc == 0 && fake_violations() == 0, "quiet %d, no wire violation", rc);
        denied_invariant();
        for (size_t i = 0; i < NDENIED; i++) {
            UNIT_CHECK(df.sig[i] == i + 1, "seed %llu: signal %zu applied after quiet (%llu)",
                       (unsigned long long)seed, i, (unsigned long long)df.sig[i]);
        }
        UNIT_CHECK(df.amo_seen && !df.desc_seen, "they went as puts and atomics (atomics %d, "
                   "descriptors %d)", df.amo_seen, df.desc_seen);
        fake_set_gate(NULL);
        fake_set_tick(NULL);
        fsh_signal_fini();
        fsh_amo_fini();
        fake_stop();
    }
}

int main(void)
{
    unit_name = "test_signal";
    unit_case("pieces_first", pieces_first, 60);
    unit_case("desc_first", desc_first, 60);
    unit_case("desc_between", desc_between, 60);
    unit_case("inline_done_first", inline_done_first, 60);
    unit_case("denied_fallback", denied_fallback, 60);
    unit_case("random_efa", random_efa, 120);
    unit_case("random_efa_chaos", random_efa_chaos, 120);
    unit_case("random_wide_pair", random_wide_pair, 120);
    return unit_exit();
}
