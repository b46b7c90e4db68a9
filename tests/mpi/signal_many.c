/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal_many: put-with-signal from many senders into one target. A signal that counts the
 * puts it guards only reaches its total when every one of those puts has landed.
 *
 * 1. Every PE but 0 sends K put-with-signals (blocking and _nbi, 1..SLOT bytes) into its own
 *    region of PE 0, each adding 1 to one shared counter. PE 0 polls the counter with
 *    shmem_signal_fetch while it grows (never decreasing, never above the total), waits with
 *    shmem_signal_wait_until(EQ, K * (npes - 1)) and then checks every slot of every region.
 *    (A singleton run sends to itself.)
 * 2. The same with one counter per sender: PE 0 waits for each sender's counter in turn and
 *    checks that sender's region at once, while the other senders are still sending.
 * 3. SET from one sender with increasing values, a shmem_fence between puts: when PE 0 sees the
 *    value of put r with GE, puts 0..r have all landed (the fence orders them), so it checks
 *    every slot up to the one the value names.
 */
#include "../test.h"

#define NAME "signal_many"
#define K 1000
/* Sizes cross every path: data in the descriptor's first slot (<= 16 bytes), running on
 * through further slots (up to 464 bytes with the default 32 slots, wrapping the inbox's end
 * by padding), and in separate writes. */
#define SLOT 600
#define SET_PUTS 1500
#define SET_BASE 0x100000000ULL /* SET values start above 2^32 */

static int me, npes;

static size_t slot_len(int pe, int k)
{
    return 1 + (size_t)(t_pattern(pe, (uint64_t)k + 0x1000) % SLOT);
}

/* Senders are PEs 1..npes-1; a singleton sends to itself as "sender 0". */
static int first_sender(void)
{
    return npes > 1 ? 1 : 0;
}
static int nsenders(void)
{
    return npes > 1 ? npes - 1 : 1;
}

/* Slot r of the SET phase: even r go through uint64 put_signal, so whole words, at least one. */
static size_t set_len(int r)
{
    size_t len = slot_len(npes > 1 ? npes - 1 : 0, r + 7000);
    if (r % 2 == 0) {
        len = len < 8 ? 8 : len / 8 * 8;
    }
    return len;
}

static void send_region(uint8_t *region, uint8_t *src, uint64_t *sig, uint64_t salt0)
{
    for (int k = 0; k < K; k++) {
        size_t off = ((size_t)me * K + (size_t)k) * SLOT;
        size_t len = slot_len(me, k);
        t_fill(src + (size_t)k * SLOT, len, me, salt0 + (uint64_t)k);
        switch (k % 3) {
        case 0:
            shmem_putmem_signal(region + off, src + (size_t)k * SLOT, len, sig, 1,
                                SHMEM_SIGNAL_ADD, 0);
            break;
        case 1:
            shmem_putmem_signal_nbi(region + off, src + (size_t)k * SLOT, len, sig, 1,
                                    SHMEM_SIGNAL_ADD, 0);
            break;
        default:
            shmem_ctx_putmem_signal_nbi(SHMEM_CTX_DEFAULT, region + off, src + (size_t)k * SLOT,
                                        len, sig, 1, SHMEM_SIGNAL_ADD, 0);
            break;
        }
    }
    shmem_quiet();
}

static void check_region(const uint8_t *region, int s, uint64_t salt0, const char *what)
{
    size_t bad = 0;
    for (int k = 0; k < K; k++) {
        size_t off = ((size_t)s * K + (size_t)k) * SLOT;
        size_t len = slot_len(s, k);
        if (bad < 3) {
            bad += t_verify(region + off, len, s, salt0 + (uint64_t)k, "%s: sender %d slot %d",
                            what, s, k) != 0;
        }
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    uint64_t total = (uint64_t)K * (uint64_t)nsenders();

    uint8_t *region = shmem_calloc((size_t)npes * K, SLOT);
    uint64_t *counter = shmem_calloc(1, sizeof(uint64_t));
    uint64_t *counters = shmem_calloc((size_t)npes, sizeof(uint64_t));
    uint64_t *setsig = shmem_calloc(1, sizeof(uint64_t));
    uint8_t *src = malloc((size_t)(K > SET_PUTS ? K : SET_PUTS) * SLOT);
    if (!t_check(region && counter && counters && setsig && src, "allocation failed")) {
        shmem_global_exit(1);
    }
    int sending = npes > 1 ? me != 0 : 1;

    /* ---- 1: one shared counter */
    shmem_barrier_all();
    if (sending) {
        send_region(region, src, counter, 0x10000);
    }
    if (me == 0) {
        uint64_t last = 0;
        long polls = 0;
        while (last < total && polls < 100000000L) {
            uint64_t v = shmem_signal_fetch(counter);
            t_check(v >= last && v <= total,
                    "shared counter went from %" PRIu64 " to %" PRIu64 " (total %" PRIu64 ")",
                    last, v, total);
            last = v > last ? v : last;
            polls++;
            if (v > total) {
                break;
            }
        }
        uint64_t got = shmem_signal_wait_until(counter, SHMEM_CMP_EQ, total);
        t_check(got == total, "shared counter: wait returned %" PRIu64 ", want %" PRIu64, got,
                total);
        for (int s = first_sender(); s < first_sender() + nsenders(); s++) {
            check_region(region, s, 0x10000, "shared counter");
        }
        t_check(shmem_signal_fetch(counter) == total, "shared counter: %" PRIu64
                " after all checks, want %" PRIu64, shmem_signal_fetch(counter), total);
    }
    shmem_barrier_all();

    /* ---- 2: one counter per sender, regions checked as their counters complete */
    if (me == 0) {
        memset(region, 0, (size_t)npes * K * SLOT);
    }
    shmem_barrier_all();
    if (sending) {
        send_region(region, src, &counters[me], 0x20000);
    }
    if (me == 0) {
        for (int s = first_sender(); s < first_sender() + nsenders(); s++) {
            uint64_t got = shmem_signal_wait_until(&counters[s], SHMEM_CMP_EQ, K);
            t_check(got == K, "sender %d's counter: %" PRIu64 ", want %d", s, got, K);
            check_region(region, s, 0x20000, "per-sender counter");
        }
    }
    shmem_barrier_all();

    /* ---- 3: SET with increasing values from one sender, fenced */
    int setter = npes > 1 ? npes - 1 : 0;
    if (me == setter) {
        for (int r = 0; r < SET_PUTS; r++) {
            size_t len = set_len(r);
            t_fill(src + (size_t)r * SLOT, len, me, 0x30000 + (uint64_t)r);
            uint64_t v = SET_BASE + ((uint64_t)r << 20) + 1;
            if (r % 2) {
                shmem_putmem_signal_nbi(region + (size_t)r * SLOT, src + (size_t)r * SLOT, len,
                                        setsig, v, SHMEM_SIGNAL_SET, 0);
            } else {
                shmem_uint64_put_signal((uint64_t *)(region + (size_t)r * SLOT),
                                        (const uint64_t *)(src + (size_t)r * SLOT), len / 8,
                                        setsig, v, SHMEM_SIGNAL_SET, 0);
            }
            shmem_fence();
        }
        shmem_quiet();
    }
    if (me == 0) {
        int checked = 0; /* slots [0, checked) verified */
        for (int r = 0; r < SET_PUTS; r++) {
            uint64_t want = SET_BASE + ((uint64_t)r << 20) + 1;
            uint64_t got = shmem_signal_wait_until(setsig, SHMEM_CMP_GE, want);
            uint64_t top = (got - SET_BASE) >> 20; /* the last put whose signal I see */
            if (!t_check(got >= want && ((got - SET_BASE) & 0xFFFFF) == 1 && top < SET_PUTS,
                         "SET: signal 0x%" PRIx64 " is not a value put %d or later sent", got,
                         r)) {
                break;
            }
            for (; checked <= (int)top; checked++) {
                t_verify(region + (size_t)checked * SLOT, set_len(checked), setter, 0x30000 + (uint64_t)checked,
                         "SET (fenced): slot %d when the signal shows put %d", checked, (int)top);
            }
            r = (int)top;
        }
        t_check(checked == SET_PUTS, "SET: checked %d of %d slots", checked, SET_PUTS);
        t_check(shmem_signal_fetch(setsig) == SET_BASE + ((uint64_t)(SET_PUTS - 1) << 20) + 1,
                "SET: final signal 0x%" PRIx64, shmem_signal_fetch(setsig));
    }
    shmem_barrier_all();

    free(src);
    shmem_free(setsig);
    shmem_free(counters);
    shmem_free(counter);
    shmem_free(region);
    shmem_finalize();
    return t_finish(NAME);
}
