/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_amo: AMOs applied by the target (runtime/amo.c without provider atomics, as on
 * efa-direct) on the fake transport; the target is PE 1, looped back here, so this PE's engine
 * applies the requests that its own AMO calls send, and answers them.
 *
 * In the fake's random order, with and without the runtime's chaos orders, for 8- and 4-byte
 * words: 64 blocking fetch-adds fetch exactly 0, 1, ..., 63 in turn; 100 non-blocking adds
 * and 48 non-blocking fetch-adds in flight together sum exactly (each applied once) and the
 * fetched values are 48 distinct ones; set, swap, compare-and-swap (hit and miss), fetch, and,
 * or and xor give the values and old values the spec says. Far more requests than the inbox
 * has slots are in flight, so slots are reused only after their answers.
 */
#include <stdint.h>
#include <string.h>

#include "amo.h"
#include "error.h"
#include "fake.h"
#include "heap.h"
#include "mr.h"
#include "rma.h"
#include "unit.h"

/* One AMO of size bytes on w; the operands are 64-bit and cut to size. */
static uint64_t amo(int op, void *w, size_t size, uint64_t v, uint64_t cond, bool nbi,
                    void *fetch)
{
    uint64_t got = 0;
    uint32_t v4 = (uint32_t)v, c4 = (uint32_t)cond, g4 = 0;
    const void *vp = size == 8 ? (const void *)&v : (const void *)&v4;
    const void *cp = size == 8 ? (const void *)&cond : (const void *)&c4;
    void *fp = fetch ? fetch : size == 8 ? (void *)&got : (void *)&g4;
    int rc = fsh_amo(&fsh_ctx_default, op, FSH_SEG_HEAP, fake_heap_off(w, size), vp, cp,
                     fsh_amo_fetches(op) ? fp : NULL, size, 1, nbi);
    UNIT_CHECK(rc == 0, "amo %d on %zu bytes: %d (%s)", op, size, rc,
               fsh_err_last() ? fsh_err_last()->msg : "");
    return size == 8 ? got : g4;
}

static uint64_t word(const void *w, size_t size)
{
    return size == 8 ? *(const uint64_t *)w : *(const uint32_t *)w;
}

static void run(uint64_t seed, bool chaos, size_t size)
{
    struct fake_config c = fake_lean(seed);
    c.chaos = chaos;
    int rc = fake_start(&c);
    rc = rc ? rc : fsh_amo_init(2);
    UNIT_CHECK(rc == 0 && fsh_amo_by_target(), "start, AMOs by target: %d", rc);
    if (rc != 0) {
        return;
    }
    uint8_t *w = fsh_heap_alloc(64, 64);
    memset(w, 0, 64);
    void *a = w, *b = w + 8, *cw = w + 16, *d = w + 24;
    for (uint64_t i = 0; i < 64; i++) {
        uint64_t old = amo(FSH_AMO_FETCH_ADD, a, size, 1, 0, false, NULL);
        UNIT_CHECK(old == i, "seed %llu size %zu: blocking fetch-add %llu fetched %llu",
                   (unsigned long long)seed, size, (unsigned long long)i,
                   (unsigned long long)old);
    }
    static uint64_t fetched[48];
    memset(fetched, 0xFF, sizeof(fetched));
    uint64_t want_b = 0;
    for (int i = 0; i < 148; i++) {
        if (i % 3 == 0 && i / 3 < 48) {
            amo(FSH_AMO_FETCH_ADD, cw, size, 1, 0, true, &fetched[i / 3]);
        } else {
            amo(FSH_AMO_ADD, b, size, (uint64_t)i, 0, true, NULL);
            want_b += (uint64_t)i;
        }
    }
    rc = fsh_rma_quiet(&fsh_ctx_default);
    UNIT_CHECK(rc == 0, "quiet: %d", rc);
    UNIT_CHECK(word(b, size) == (size == 8 ? want_b : (uint32_t)want_b),
               "seed %llu size %zu: adds sum to %llu (%llu)", (unsigned long long)seed, size,
               (unsigned long long)want_b, (unsigned long long)word(b, size));
    UNIT_CHECK(word(cw, size) == 48, "48 fetch-adds applied once each (%llu)",
               (unsigned long long)word(cw, size));
    uint64_t seen = 0;
    for (int i = 0; i < 48; i++) {
        uint32_t f4;
        memcpy(&f4, &fetched[i], sizeof(f4));
        uint64_t f = size == 8 ? fetched[i] : f4;
        if (f < 48) {
            seen |= 1ULL << f;
        }
    }
    UNIT_CHECK(seen == (1ULL << 48) - 1, "the fetch-adds fetched 0..47 once each (mask 0x%llx)",
               (unsigned long long)seen);
    amo(FSH_AMO_SET, d, size, 0x5555, 0, false, NULL);
    rc = fsh_rma_quiet(&fsh_ctx_default);
    UNIT_CHECK(rc == 0 && word(d, size) == 0x5555, "set (%llu)", (unsigned long long)word(d, size));
    UNIT_CHECK(amo(FSH_AMO_SWAP, d, size, 7, 0, false, NULL) == 0x5555 && word(d, size) == 7,
               "swap");
    UNIT_CHECK(amo(FSH_AMO_CSWAP, d, size, 9, 8, false, NULL) == 7 && word(d, size) == 7,
               "compare-and-swap, miss");
    UNIT_CHECK(amo(FSH_AMO_CSWAP, d, size, 9, 7, false, NULL) == 7 && word(d, size) == 9,
               "compare-and-swap, hit");
    UNIT_CHECK(amo(FSH_AMO_FETCH_AND, d, size, 0xC, 0, false, NULL) == 9 && word(d, size) == 8,
               "fetch-and");
    UNIT_CHECK(amo(FSH_AMO_FETCH_OR, d, size, 0x3, 0, false, NULL) == 8 && word(d, size) == 0xB,
               "fetch-or");
    UNIT_CHECK(amo(FSH_AMO_FETCH_XOR, d, size, 0xF, 0, false, NULL) == 0xB && word(d, size) == 4,
               "fetch-xor");
    UNIT_CHECK(amo(FSH_AMO_FETCH, d, size, 0, 0, false, NULL) == 4, "fetch");
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
    printf("test_amo: seed %llu, %zu-byte words%s: %llu writes on the wire\n",
           (unsigned long long)seed, size, chaos ? ", chaos" : "",
           (unsigned long long)fake_stats()->posted);
    fsh_amo_fini();
    fake_stop();
}

static void words8(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        run(seed, seed == 3, 8);
    }
}

static void words4(void)
{
    for (uint64_t seed = 4; seed <= 5; seed++) {
        run(seed, seed == 5, 4);
    }
}

int main(void)
{
    unit_name = "test_amo";
    unit_case("words8", words8, 60);
    unit_case("words4", words4, 60);
    return unit_exit();
}
