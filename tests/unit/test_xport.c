/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_xport: xport.c's failover on the fake transport: two rails, two ways to PE 1, every
 * request kept (fsh_xport_enable_failover), and a way that fails with operations in flight.
 *
 * - failed_way: striped 128 KiB puts (pieces on both ways), small injected puts and gets are
 *   posted; part of the wire happens; then way 0 fails (what was in flight there is lost and
 *   completes in error). The engine's error handler must take the way out of use and post
 *   again, on way 1, with way 1's keys and descriptors, what was stranded; quiet then ends
 *   without error, every byte is at its destination, every get brought the target's bytes, the
 *   context's track counts each operation once, and nothing was posted on the dead way after
 *   the runtime knew it (the fake counts any such post as a violation).
 * - probe_found: the way is declared dead by a probe (fsh_xport_fail_way, as live.c does)
 *   while its operations may still complete: they are posted again, the originals become
 *   orphans whose late completions free their records only, and each operation still counts
 *   once.
 * - imm_in_flight: a write with immediate data in flight on the failed way cannot go again
 *   (it may have landed): the poll reports -EHOSTUNREACH naming it, and it is not re-posted.
 * - all_ways: with both ways failed, way 0's operations move to way 1 and fail there too;
 *   the last way's failure is the operation's, and quiet ends with it, naming the PE.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "fake.h"
#include "fabric.h"
#include "heap.h"
#include "mr.h"
#include "progress.h"
#include "rma.h"
#include "unit.h"
#include "xport.h"

#define BIG (128u << 10)
#define NSMALL 16
#define NGET 8

static int start(uint64_t seed)
{
    struct fake_config c = fake_lean(seed);
    c.nrails = 2;
    c.mode = FAKE_MANUAL;
    int rc = fake_start(&c);
    if (rc == 0) {
        rc = fsh_xport_enable_failover();
    }
    UNIT_CHECK(rc == 0, "fake start with failover: %d", rc);
    return rc;
}

static struct {
    uint8_t *big_src, *big_dst;
    uint8_t small_src[NSMALL][16];
    uint8_t *small_dst;
    uint8_t *get_src;
    uint8_t get_dst[NGET][512];
} b;

/* Post the mix: one striped put, NSMALL injected puts, NGET gets. */
static void post_mix(void)
{
    b.big_src = malloc(BIG);
    b.big_dst = fsh_heap_alloc(BIG, 64);
    b.small_dst = fsh_heap_alloc(NSMALL * 16, 64);
    b.get_src = fsh_heap_alloc(NGET * 512, 64);
    memset(b.big_dst, 0, BIG);
    memset(b.small_dst, 0, NSMALL * 16);
    for (size_t j = 0; j < BIG; j++) {
        b.big_src[j] = (uint8_t)(j * 13 + 5);
    }
    for (size_t j = 0; j < NGET * 512; j++) {
        b.get_src[j] = (uint8_t)(j * 3 + 1);
    }
    memset(b.get_dst, 0, sizeof(b.get_dst));
    int rc = fsh_rma_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(b.big_dst, BIG), b.big_src, BIG,
                         1, true);
    UNIT_CHECK(rc == 0, "striped put posted: %d", rc);
    for (int i = 0; i < NSMALL; i++) {
        memset(b.small_src[i], 0x40 + i, 16);
        rc = fsh_rma_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(b.small_dst + i * 16, 16),
                         b.small_src[i], 16, 1, true);
        UNIT_CHECK(rc == 0, "small put %d posted: %d", i, rc);
        memset(b.small_src[i], 0xEE, 16); /* injected: the source is free at once */
    }
    for (int i = 0; i < NGET; i++) {
        rc = fsh_rma_get(&fsh_ctx_default, b.get_dst[i], FSH_SEG_HEAP,
                         fake_heap_off(b.get_src + i * 512, 512), 512, 1, true);
        UNIT_CHECK(rc == 0, "get %d posted: %d", i, rc);
    }
    UNIT_CHECK(fake_stats()->posted_on_way[0] > 0 && fake_stats()->posted_on_way[1] > 0,
               "the mix went on both ways (%llu, %llu)",
               (unsigned long long)fake_stats()->posted_on_way[0],
               (unsigned long long)fake_stats()->posted_on_way[1]);
}

static void check_mix(const char *what)
{
    size_t bad = 0;
    for (size_t j = 0; j < BIG; j++) {
        bad += b.big_dst[j] != (uint8_t)(j * 13 + 5);
    }
    UNIT_CHECK(bad == 0, "%s: striped put complete (%zu bytes wrong)", what, bad);
    for (int i = 0; i < NSMALL; i++) {
        for (int j = 0; j < 16; j++) {
            if (b.small_dst[i * 16 + j] != 0x40 + i) {
                UNIT_CHECK(false, "%s: small put %d byte %d is 0x%02x", what, i, j,
                           b.small_dst[i * 16 + j]);
                break;
            }
        }
    }
    for (int i = 0; i < NGET; i++) {
        for (int j = 0; j < 512; j++) {
            if (b.get_dst[i][j] != (uint8_t)((i * 512 + j) * 3 + 1)) {
                UNIT_CHECK(false, "%s: get %d byte %d is 0x%02x", what, i, j, b.get_dst[i][j]);
                break;
            }
        }
    }
    const struct fsh_op_track *t = &fsh_ctx_default.track;
    UNIT_CHECK(t->posted == t->completed, "%s: the track counts each operation once (%llu "
               "posted, %llu completed)", what, (unsigned long long)t->posted,
               (unsigned long long)t->completed);
    UNIT_CHECK(fake_violations() == 0, "%s: no wire violation", what);
    free(b.big_src);
}

/* Let about a third of the wire happen, in the fake's order. */
static void some(unsigned n)
{
    while (n-- && fake_pending()) {
        size_t i = (size_t)n * 7 % fake_pending();
        if (fake_deliver(i) != 0) {
            long j = fake_find(FAKE_LAND, 0);
            if (j >= 0) {
                fake_deliver((size_t)j);
            }
        }
    }
}

static void failed_way(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        if (start(seed) != 0) {
            return;
        }
        post_mix();
        some((unsigned)(fake_pending() / 3 + seed));
        uint64_t before = fake_stats()->posted_on_way[1];
        fake_fail_way(1, 0);
        fake_set_mode(FAKE_AUTO);
        int rc = fsh_rma_quiet(&fsh_ctx_default);
        UNIT_CHECK(rc == 0, "seed %llu: quiet after way 0 failed: %d (%s)",
                   (unsigned long long)seed, rc, fsh_err_last() ? fsh_err_last()->msg : "");
        UNIT_CHECK(!fsh_fabric_way_alive(1, 0) && fsh_fabric_ways(1) == 1,
                   "seed %llu: way 0 out of use, way 1 left", (unsigned long long)seed);
        UNIT_CHECK(fake_stats()->errors > 0 && fake_stats()->posted_on_way[1] > before,
                   "seed %llu: operations failed (%llu) and went again on way 1 (%llu more)",
                   (unsigned long long)seed, (unsigned long long)fake_stats()->errors,
                   (unsigned long long)(fake_stats()->posted_on_way[1] - before));
        check_mix("failed_way");
        fake_stop();
    }
}

static void probe_found(void)
{
    if (start(7) != 0) {
        return;
    }
    post_mix();
    some(10);
    uint64_t before = fake_stats()->posted_on_way[1];
    /* Auto from here: the sweep may need records while the pool is full, and polls for them
     * (the originals may complete meanwhile, which it must notice). */
    fake_set_mode(FAKE_AUTO);
    fsh_progress_lock();
    int rc = fsh_xport_fail_way(1, 0, "found by a test's probe");
    fsh_progress_unlock();
    UNIT_CHECK(rc == 0, "fail_way: %d", rc);
    UNIT_CHECK(fake_stats()->posted_on_way[1] > before, "stranded operations went again");
    /* The originals are still on the wire (the way did not really fail): they complete too,
     * and only free their records. */
    rc = fsh_rma_quiet(&fsh_ctx_default);
    UNIT_CHECK(rc == 0, "quiet: %d (%s)", rc, fsh_err_last() ? fsh_err_last()->msg : "");
    fake_drain();
    fsh_progress_poll();
    check_mix("probe_found");
    size_t in_use = 0;
    for (size_t i = 0; i < fsh_progress_depth(); i++) {
        in_use += fsh_progress_op_at(i)->kind != 0;
    }
    UNIT_CHECK(in_use == 0, "every record back in the pool once the wire is empty (%zu in use)",
               in_use);
}

static void imm_in_flight(void)
{
    if (start(3) != 0) {
        return;
    }
    uint64_t *w = fsh_heap_alloc(8, 8);
    static uint64_t v = 77;
    int rc = fsh_rma_write(&fsh_ctx_default, NULL, &v, 8, 1, FSH_SEG_HEAP, fake_heap_off(w, 8), true,
                           (uint64_t)FSH_IMM_COLL << FSH_IMM_KIND_SHIFT);
    UNIT_CHECK(rc == 0, "write with immediate data posted: %d", rc);
    uint64_t way1 = fake_stats()->posted_on_way[1];
    fake_fail_way(1, 0);
    fake_set_mode(FAKE_AUTO);
    rc = 0;
    for (int i = 0; i < 20 && rc == 0; i++) {
        rc = fsh_progress_poll();
        rc = rc > 0 ? 0 : rc;
    }
    UNIT_CHECK(rc == -EHOSTUNREACH, "the poll reports the write that cannot go again: %d", rc);
    UNIT_CHECK(fsh_err_last() && strstr(fsh_err_last()->msg, "immediate data"),
               "the error names it: %s", fsh_err_last() ? fsh_err_last()->msg : "(none)");
    UNIT_CHECK(fake_stats()->posted_on_way[1] == way1, "and it was not posted again");
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

static void all_ways(void)
{
    if (start(5) != 0) {
        return;
    }
    post_mix();
    fake_fail_way(1, 0);
    fake_fail_way(1, 1);
    fake_set_mode(FAKE_AUTO);
    int rc = fsh_rma_quiet(&fsh_ctx_default);
    /* Way 0's failure moves its operations to way 1; way 1's failure, the last way, is the
     * operation's: quiet ends with it, naming the PE. */
    UNIT_CHECK(rc < 0, "quiet with no way left fails: %d", rc);
    UNIT_CHECK(fsh_err_last() && strstr(fsh_err_last()->msg, "PE 1"),
               "the error names the PE: %s", fsh_err_last() ? fsh_err_last()->msg : "(none)");
    UNIT_CHECK(!fsh_fabric_way_alive(1, 0), "way 0 out of use");
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

int main(void)
{
    unit_name = "test_xport";
    unit_case("failed_way", failed_way, 60);
    unit_case("probe_found", probe_found, 60);
    unit_case("imm_in_flight", imm_in_flight, 60);
    unit_case("all_ways", all_ways, 60);
    return unit_exit();
}
