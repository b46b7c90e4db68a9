/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal_order: a put-with-signal's signal is never observed before its data (spec 1.5 section
 * 9.9: "the signal ... is updated after the data transfer completes"), for every size, both
 * signal operations, full 64-bit signal values, and every form of the call.
 *
 * PEs talk in pairs (0<->1, 2<->3, ...; with an odd count the last PE talks to itself). Both
 * PEs of a pair send and receive at once. Each round the sender fills its source with a
 * pattern of its own for that round and puts it with a signal; the receiver waits for the
 * round's signal value and at once checks every byte (a stale byte from the previous round is a
 * failure: the signal came before the data), then acknowledges; the sender reuses the
 * destination only after that acknowledgement.
 *
 * 1. Sizes 1 B .. 8 MiB (odd sizes, and sizes above 1 MiB; signal_order.env sets
 *    FABSHMEM_MAX_MSG_SIZE=256K so large puts go out in many pieces that may land in any
 *    order), SHMEM_SIGNAL_SET with increasing values above 2^32 whose low halves decrease (waited
 *    with EQ and GE) and SHMEM_SIGNAL_ADD with addends above 2^32 that wrap the 64-bit signal
 *    (waited with EQ). Each round uses the next call form: putmem_signal, its _nbi and ctx
 *    forms, put8/16/32/64/128_signal[_nbi], long/int/uint64 put_signal[_nbi], and the C11
 *    generic shmem_put_signal[_nbi]. Acknowledged with an atomic increment.
 * 2. Many rounds of small puts with SHMEM_SIGNAL_ADD 1 (waited with GE), acknowledged by a
 *    put-with-signal back whose data (the round number) is checked too.
 * 3. Pipelined: 512 put-with-signals in flight at once, each into its own slot with its own
 *    signal word; the receiver waits for the slots in a scrambled order and checks each as soon
 *    as its signal is seen.
 * 4. Signals that travel in 8 bytes of immediate data where the provider has them (shm, tcp):
 *    values below 2^18 on words in the first 512 MiB of the heap or in static memory. Rounds
 *    switch between such values and ones just beyond (2^18 - 1, 2^18 + r; ADD 2^18), on a word
 *    in the heap, one in static memory and one past 512 MiB of the heap (signal_order.env sets
 *    SHMEM_SYMMETRIC_SIZE=1G), for every form and size up to 256 KiB + 1 (past
 *    FABSHMEM_MAX_MSG_SIZE). Waited with EQ; the data is checked at the signal.
 */
#include "../test.h"

#define NAME "signal_order"
#define KIB ((size_t)1024)
#define MIB (KIB * KIB)
#define MAXSZ (8 * MIB)

#define SMALL_ROUNDS 2000
#define PIPE_SLOTS 512
#define PIPE_SLOT 2048
#define PIPE_REPS 8

static const size_t sizes[] = {1,           3,         8,          24,         64,
                               100,         1000,      4096,       4103,       65536,
                               256 * KIB - 1, 256 * KIB + 1, MIB + 13, 3 * MIB + 1, MAXSZ};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Rounds per size: many for small transfers, a few for the multi-MiB ones. */
static int rounds_for(size_t n)
{
    if (n <= 4103) {
        return 250;
    }
    if (n <= 65536) {
        return 60;
    }
    if (n <= 256 * KIB + 1) {
        return 16;
    }
    if (n <= MIB + 13) {
        return 6;
    }
    return 3;
}

/* ------------------------------------------------------------------ the call forms */
enum {
    F_PUTMEM,
    F_PUTMEM_NBI,
    F_CTX_PUTMEM,
    F_CTX_PUTMEM_NBI,
    F_PUT8,
    F_PUT16_NBI,
    F_PUT32,
    F_PUT64_NBI,
    F_PUT128,
    F_PUT128_NBI,
    F_LONG,
    F_INT_NBI,
    F_UINT64,
    F_CTX_LONG_NBI,
    F_GENERIC,
    F_GENERIC_NBI,
    NFORMS
};
static const struct {
    const char *name;
    size_t esize; /* the byte count must be a multiple of this */
    int nbi;
} forms[NFORMS] = {
    [F_PUTMEM] = {"shmem_putmem_signal", 1, 0},
    [F_PUTMEM_NBI] = {"shmem_putmem_signal_nbi", 1, 1},
    [F_CTX_PUTMEM] = {"shmem_ctx_putmem_signal", 1, 0},
    [F_CTX_PUTMEM_NBI] = {"shmem_ctx_putmem_signal_nbi", 1, 1},
    [F_PUT8] = {"shmem_put8_signal", 1, 0},
    [F_PUT16_NBI] = {"shmem_put16_signal_nbi", 2, 1},
    [F_PUT32] = {"shmem_put32_signal", 4, 0},
    [F_PUT64_NBI] = {"shmem_put64_signal_nbi", 8, 1},
    [F_PUT128] = {"shmem_put128_signal", 16, 0},
    [F_PUT128_NBI] = {"shmem_put128_signal_nbi", 16, 1},
    [F_LONG] = {"shmem_long_put_signal", sizeof(long), 0},
    [F_INT_NBI] = {"shmem_int_put_signal_nbi", sizeof(int), 1},
    [F_UINT64] = {"shmem_uint64_put_signal", 8, 0},
    [F_CTX_LONG_NBI] = {"shmem_ctx_long_put_signal_nbi", sizeof(long), 1},
    [F_GENERIC] = {"shmem_put_signal (generic, long)", sizeof(long), 0},
    [F_GENERIC_NBI] = {"shmem_put_signal_nbi (generic, long)", sizeof(long), 1},
};

/* The first form at or after `start` whose element size divides n. */
static int pick_form(int start, size_t n)
{
    for (int k = 0; k < NFORMS; k++) {
        int f = (start + k) % NFORMS;
        if (n % forms[f].esize == 0) {
            return f;
        }
    }
    return F_PUTMEM;
}

static void send_signal(int f, void *dest, const void *src, size_t n, uint64_t *sig, uint64_t v,
                        int op, int pe)
{
    size_t ne = n / forms[f].esize;
    switch (f) {
    case F_PUTMEM:
        shmem_putmem_signal(dest, src, n, sig, v, op, pe);
        break;
    case F_PUTMEM_NBI:
        shmem_putmem_signal_nbi(dest, src, n, sig, v, op, pe);
        break;
    case F_CTX_PUTMEM:
        shmem_ctx_putmem_signal(SHMEM_CTX_DEFAULT, dest, src, n, sig, v, op, pe);
        break;
    case F_CTX_PUTMEM_NBI:
        shmem_ctx_putmem_signal_nbi(SHMEM_CTX_DEFAULT, dest, src, n, sig, v, op, pe);
        break;
    case F_PUT8:
        shmem_put8_signal(dest, src, ne, sig, v, op, pe);
        break;
    case F_PUT16_NBI:
        shmem_put16_signal_nbi(dest, src, ne, sig, v, op, pe);
        break;
    case F_PUT32:
        shmem_put32_signal(dest, src, ne, sig, v, op, pe);
        break;
    case F_PUT64_NBI:
        shmem_put64_signal_nbi(dest, src, ne, sig, v, op, pe);
        break;
    case F_PUT128:
        shmem_put128_signal(dest, src, ne, sig, v, op, pe);
        break;
    case F_PUT128_NBI:
        shmem_put128_signal_nbi(dest, src, ne, sig, v, op, pe);
        break;
    case F_LONG:
        shmem_long_put_signal((long *)dest, (const long *)src, ne, sig, v, op, pe);
        break;
    case F_INT_NBI:
        shmem_int_put_signal_nbi((int *)dest, (const int *)src, ne, sig, v, op, pe);
        break;
    case F_UINT64:
        shmem_uint64_put_signal((uint64_t *)dest, (const uint64_t *)src, ne, sig, v, op, pe);
        break;
    case F_CTX_LONG_NBI:
        shmem_ctx_long_put_signal_nbi(SHMEM_CTX_DEFAULT, (long *)dest, (const long *)src, ne,
                                      sig, v, op, pe);
        break;
    case F_GENERIC:
        shmem_put_signal((long *)dest, (const long *)src, ne, sig, v, op, pe);
        break;
    default:
        shmem_put_signal_nbi((long *)dest, (const long *)src, ne, sig, v, op, pe);
        break;
    }
}

/* SET values: strictly increasing (for GE), above 2^32 with the top bit set, and with low
 * halves that decrease, so a signal cut to 32 bits never matches. */
static uint64_t set_value(int r)
{
    return 0xC000000000000000ULL + ((uint64_t)(r + 1) << 32) + (0xFFFFFFFFULL - (uint64_t)r);
}
/* ADD: the signal starts just below 2^64 and the addends carry across both halves, so the sum
 * wraps within a few rounds. */
#define ADD_START 0xFFFFFFFB00000000ULL
static uint64_t add_value(int r)
{
    return ((uint64_t)(r % 7 + 1) << 32) + 0x9E3779B9ULL;
}

static int me, npes, partner;

/* ------------------------------------------------------------------ 1: sizes x SET/ADD */
static void phase_sizes(uint8_t *data, uint8_t *src, uint64_t *sig, uint64_t *ack)
{
    int form_start = 0;
    for (size_t si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        int rounds = rounds_for(n);
        for (int op = SHMEM_SIGNAL_SET; op <= SHMEM_SIGNAL_ADD; op++) {
            const char *opname = op == SHMEM_SIGNAL_SET ? "SET" : "ADD";
            /* Read nothing back after the barrier: my partner's first ADD may land at once. */
            uint64_t expect = op == SHMEM_SIGNAL_ADD ? ADD_START : 0;
            *sig = expect;
            *ack = 0;
            shmem_barrier_all();
            int prev_nbi = 0;
            for (int r = 0; r < rounds; r++) {
                uint64_t salt = ((uint64_t)si << 40) | ((uint64_t)op << 32) | (uint64_t)r;
                /* My partner has checked my previous round: its destination is free. */
                shmem_uint64_wait_until(ack, SHMEM_CMP_GE, (uint64_t)r);
                if (prev_nbi) {
                    shmem_quiet(); /* the _nbi source may be reused only after quiet */
                }
                int f = pick_form(form_start++, n);
                prev_nbi = forms[f].nbi;
                t_fill(src, n, me, salt);
                uint64_t v = op == SHMEM_SIGNAL_SET ? set_value(r) : add_value(r);
                send_signal(f, data, src, n, sig, v, op, partner);

                /* Receive my partner's round r (it used the same form). */
                expect = op == SHMEM_SIGNAL_SET ? set_value(r) : expect + add_value(r);
                int cmp = (op == SHMEM_SIGNAL_SET && r % 2) ? SHMEM_CMP_GE : SHMEM_CMP_EQ;
                uint64_t got = shmem_signal_wait_until(sig, cmp, expect);
                t_verify(data, n, partner, salt, "%zu bytes, %s %s, round %d: data at signal",
                         n, opname, forms[f].name, r);
                t_check(got == expect,
                        "%zu bytes, %s %s, round %d: shmem_signal_wait_until returned 0x%016" PRIx64
                        ", want 0x%016" PRIx64,
                        n, opname, forms[f].name, r, got, expect);
                uint64_t fetched = shmem_signal_fetch(sig);
                t_check(fetched == expect,
                        "%zu bytes, %s %s, round %d: shmem_signal_fetch 0x%016" PRIx64
                        ", want 0x%016" PRIx64,
                        n, opname, forms[f].name, r, fetched, expect);
                shmem_uint64_atomic_inc(ack, partner);
            }
            shmem_uint64_wait_until(ack, SHMEM_CMP_GE, (uint64_t)rounds);
            shmem_quiet();
            shmem_barrier_all();
        }
    }
}

/* ------------------------------------------------------------------ 2: many small ADD 1 */
static void phase_small_add(uint8_t *data, uint8_t *src, uint64_t *sig, uint64_t *acksig,
                            long *echo)
{
    *sig = 0;
    *acksig = 0;
    *echo = -1;
    shmem_barrier_all();
    for (int r = 0; r < SMALL_ROUNDS; r++) {
        size_t n = 1 + (size_t)r % 64;
        uint64_t salt = 0x5a000000ULL + (uint64_t)r;
        if (r > 0) {
            /* The ack's data (the round my partner checked) is there when its signal is. */
            uint64_t a = shmem_signal_wait_until(acksig, SHMEM_CMP_GE, (uint64_t)r);
            t_check(a == (uint64_t)r, "small ADD round %d: ack signal %" PRIu64 ", want %d", r,
                    a, r);
            t_check(*echo == r - 1, "small ADD round %d: ack carries round %ld, want %d", r,
                    *echo, r - 1);
        }
        shmem_quiet();
        t_fill(src, n, me, salt);
        if (r % 2) {
            shmem_putmem_signal_nbi(data, src, n, sig, 1, SHMEM_SIGNAL_ADD, partner);
        } else {
            shmem_putmem_signal(data, src, n, sig, 1, SHMEM_SIGNAL_ADD, partner);
        }
        uint64_t got = shmem_signal_wait_until(sig, SHMEM_CMP_GE, (uint64_t)r + 1);
        t_verify(data, n, partner, salt, "small ADD round %d (%zu bytes): data at signal", r, n);
        t_check(got == (uint64_t)r + 1, "small ADD round %d: signal %" PRIu64 ", want %d", r,
                got, r + 1);
        static long round_no;
        round_no = r;
        shmem_putmem_signal(echo, &round_no, sizeof(round_no), acksig, 1, SHMEM_SIGNAL_ADD,
                            partner);
    }
    shmem_signal_wait_until(acksig, SHMEM_CMP_GE, SMALL_ROUNDS);
    shmem_quiet();
    shmem_barrier_all();
}

/* ------------------------------------------------------------------ 3: pipelined slots */
static size_t pipe_len(size_t i)
{
    return 1 + (size_t)(t_pattern(-2, i) % PIPE_SLOT);
}
static uint64_t pipe_value(int rep, size_t i)
{
    return t_pattern(-3, ((uint64_t)rep << 32) | i) | 1; /* never 0, the reset value */
}

static void phase_pipelined(uint8_t *data, uint8_t *src, uint64_t *sigs, uint64_t *ack)
{
    for (int rep = 0; rep < PIPE_REPS; rep++) {
        memset(sigs, 0, PIPE_SLOTS * sizeof(uint64_t));
        *ack = 0;
        shmem_barrier_all();
        for (size_t i = 0; i < PIPE_SLOTS; i++) {
            t_fill(src + i * PIPE_SLOT, pipe_len(i), me, 0x77000000ULL + (uint64_t)rep * 1000 + i);
        }
        for (size_t i = 0; i < PIPE_SLOTS; i++) {
            size_t off = i * PIPE_SLOT;
            uint64_t v = pipe_value(rep, i);
            /* On a zeroed signal, ADD v and SET v both leave v. */
            int op = (i / 2) % 2 ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET;
            if (i % 2) {
                shmem_putmem_signal_nbi(data + off, src + off, pipe_len(i), &sigs[i], v, op,
                                        partner);
            } else {
                shmem_putmem_signal(data + off, src + off, pipe_len(i), &sigs[i], v, op,
                                    partner);
            }
        }
        /* Odd multiplier, power-of-two count: a permutation that jumps around. */
        for (size_t k = 0; k < PIPE_SLOTS; k++) {
            size_t i = (k * 389 + 77) % PIPE_SLOTS;
            uint64_t v = pipe_value(rep, i);
            uint64_t got = shmem_signal_wait_until(&sigs[i], SHMEM_CMP_EQ, v);
            t_verify(data + i * PIPE_SLOT, pipe_len(i), partner,
                     0x77000000ULL + (uint64_t)rep * 1000 + i,
                     "pipelined rep %d slot %zu (%zu bytes): data at signal", rep, i, pipe_len(i));
            t_check(got == v, "pipelined rep %d slot %zu: signal 0x%016" PRIx64 ", want 0x%016" PRIx64,
                    rep, i, got, v);
        }
        shmem_uint64_atomic_inc(ack, partner);
        shmem_uint64_wait_until(ack, SHMEM_CMP_EQ, 1);
        shmem_quiet();
        shmem_barrier_all();
    }
}

/* ------------------------------------------------------------------ 4: small signals */
#define WIDE_LIMIT (1ULL << 18)
static uint64_t static_sig;

/* Distinct SET values within a run: r + 1, just below the limit, just above it. */
static uint64_t wide_set(int r)
{
    if (r % 2) {
        return WIDE_LIMIT - 1 - (uint64_t)r;
    }
    return r % 4 == 0 ? (uint64_t)r + 1 : WIDE_LIMIT + (uint64_t)r;
}
static uint64_t wide_add(int r)
{
    return r % 3 == 2 ? WIDE_LIMIT : r % 3 == 1 ? WIDE_LIMIT - 1 : (uint64_t)r + 1;
}

static void phase_wide(uint8_t *data, uint8_t *src, uint64_t *heap_sig, uint64_t *far_sig,
                       uint64_t *ack)
{
    uint64_t *words[] = {heap_sig, &static_sig, far_sig};
    const char *wname[] = {"heap", "static", "heap past 512 MiB"};
    int nwords = far_sig ? 3 : 2;
    int form_start = 5;
    for (size_t si = 0; si < NSIZES && sizes[si] <= 256 * KIB + 1; si++) {
        size_t n = sizes[si];
        int rounds = rounds_for(n) / 4 + 2;
        for (int op = SHMEM_SIGNAL_SET; op <= SHMEM_SIGNAL_ADD; op++) {
            for (int w = 0; w < nwords; w++) {
                uint64_t *sig = words[w];
                *sig = 0;
                *ack = 0;
                shmem_barrier_all();
                uint64_t expect = 0;
                int prev_nbi = 0;
                for (int r = 0; r < rounds; r++) {
                    uint64_t salt = 0x3c0000000000ULL | ((uint64_t)si << 24) |
                                    ((uint64_t)(op * 3 + w) << 16) | (uint64_t)r;
                    shmem_uint64_wait_until(ack, SHMEM_CMP_GE, (uint64_t)r);
                    if (prev_nbi) {
                        shmem_quiet();
                    }
                    int f = pick_form(form_start++, n);
                    prev_nbi = forms[f].nbi;
                    t_fill(src, n, me, salt);
                    uint64_t v = op == SHMEM_SIGNAL_SET ? wide_set(r) : wide_add(r);
                    send_signal(f, data, src, n, sig, v, op, partner);
                    expect = op == SHMEM_SIGNAL_SET ? v : expect + v;
                    uint64_t got = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, expect);
                    t_verify(data, n, partner, salt,
                             "%zu bytes, %s %" PRIu64 " on a %s word, %s, round %d: data at "
                             "signal", n, op == SHMEM_SIGNAL_SET ? "SET" : "ADD", v, wname[w],
                             forms[f].name, r);
                    t_check(got == expect,
                            "%zu bytes on a %s word, round %d: signal %" PRIu64 ", want %" PRIu64,
                            n, wname[w], r, got, expect);
                    shmem_uint64_atomic_inc(ack, partner);
                }
                shmem_uint64_wait_until(ack, SHMEM_CMP_GE, (uint64_t)rounds);
                shmem_quiet();
                shmem_barrier_all();
            }
        }
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    partner = me ^ 1;
    if (partner >= npes) {
        partner = me; /* odd count: the last PE talks to itself */
    }

    uint8_t *data = shmem_malloc(MAXSZ);
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    uint64_t *ack = shmem_calloc(1, sizeof(uint64_t));
    uint64_t *sigs = shmem_calloc(PIPE_SLOTS, sizeof(uint64_t));
    long *echo = shmem_calloc(1, sizeof(long));
    uint8_t *src = aligned_alloc(64, MAXSZ);
    if (!t_check(data && sig && ack && sigs && echo && src, "allocation failed")) {
        shmem_global_exit(1);
    }
    memset(data, 0, MAXSZ);

    phase_sizes(data, src, sig, ack);
    phase_small_add(data, src, sig, ack, echo);
    phase_pipelined(data, src, sigs, ack);
    /* A word past the first 512 MiB of the heap: signal_order.env gives a 1 GiB heap; a run
     * with a smaller one (valgrind's, 16 MiB) says so and tests the other words. */
    uint8_t *gap = shmem_malloc(520 * MIB);
    uint64_t *far_sig = gap ? shmem_calloc(1, sizeof(uint64_t)) : NULL;
    if (!far_sig && me == 0) {
        printf(NAME ": phase 4 without a word past 512 MiB (SHMEM_SYMMETRIC_SIZE below 1G)\n");
    }
    phase_wide(data, src, sig, far_sig, ack);

    free(src);
    shmem_free(far_sig);
    shmem_free(gap);
    shmem_free(echo);
    shmem_free(sigs);
    shmem_free(ack);
    shmem_free(sig);
    shmem_free(data);
    shmem_finalize();
    return t_finish(NAME);
}
