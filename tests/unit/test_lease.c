/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lease: inbox leases (runtime/lease.c) on the fake transport, a 4-PE job whose target is
 * PE 1 (looped back here, so this PE's engine answers as PE 1), with one chunk in the pool.
 *
 * PE 0 (this process, through lease.c's own claim, release and ask) and PEs 2 and 3 (played by
 * the test: their claims and releases are remote events with the wire format below) compete
 * for the chunk:
 * - grant_queue_giveback: PE 0 is granted the chunk (and granted again what it holds); PE 2's
 *   waiting claim is queued, PE 3's plain claim denied; PE 0 gives back and the chunk goes
 *   straight to PE 2 (first come, first served), answered with the claim count; PE 0 is then
 *   denied; asked to give back, PE 2 releases and PE 0's waiting claim gets the chunk.
 * - release_overtaken: the fabric delivers PE 0's new claim before its release sent ahead of
 *   it; the answer to the last message is RELEASED, and the claim is made again and granted.
 * The answers are read where the target stores them (grant[src]: count << 8 | answer).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "fake.h"
#include "lease.h"
#include "progress.h"
#include "unit.h"

/* lease.c's wire format (its header comment): a LEASE immediate carries pool << 22, the
 * release, queue and ask bits, and the sender's PE; an answer is a chunk, DENIED or RELEASED. */
#define POOL_SHIFT 22
#define RELEASE_BIT (1u << 24)
#define QUEUE_BIT (1u << 25)
#define ASK_BIT (1u << 26)
#define DENIED 0xFFu
#define RELEASED 0xFEu

static struct fsh_lease_pool pool;
static int granted_calls, asked_by = -1;

static void on_granted(unsigned c)
{
    (void)c;
    granted_calls++;
}

static void on_ask(int pe)
{
    asked_by = pe;
}

static uint64_t msg(int src, uint32_t bits)
{
    return ((uint64_t)FSH_IMM_LEASE << FSH_IMM_KIND_SHIFT) |
           ((uint64_t)FSH_LEASE_DEVICE << POOL_SHIFT) | bits | (uint64_t)src;
}

static void settle(void)
{
    for (int i = 0; i < 8; i++) {
        fake_drain();
        fsh_progress_poll();
    }
}

static int start(uint64_t seed)
{
    struct fake_config c = fake_lean(seed);
    c.npes = 4;
    int rc = fake_start(&c);
    if (rc == 0) {
        rc = fsh_lease_init(&pool, FSH_LEASE_DEVICE, 1, 256, on_granted, "test pool", "");
    }
    pool.on_ask = on_ask;
    UNIT_CHECK(rc == 0, "start: %d", rc);
    return rc;
}

/* lease.h: claims are made under the engine lock (checked in --enable-debug builds). */
static int claim_locked(int pe, bool wait)
{
    fsh_progress_lock();
    int c = wait ? fsh_lease_claim_wait(&pool, pe) : fsh_lease_claim(&pool, pe);
    fsh_progress_unlock();
    return c;
}

static void grant_queue_giveback(void)
{
    if (start(1) != 0) {
        return;
    }
    int c = claim_locked(1, false);
    UNIT_CHECK(c == 0 && pool.owner[0] == 0 && granted_calls == 1,
               "PE 0 granted chunk 0 (%d, owner %d, %d grants)", c, pool.owner[0], granted_calls);
    UNIT_CHECK(pool.grant[0] == (1u << 8 | 0), "answer 1: chunk 0 (0x%x)", pool.grant[0]);
    c = claim_locked(1, false);
    UNIT_CHECK(c == 0 && granted_calls == 1, "claim again: the chunk held (%d)", c);

    fake_remote_event(msg(2, QUEUE_BIT));
    fake_remote_event(msg(3, 0));
    settle();
    UNIT_CHECK(pool.nqueued == 1 && pool.grant[2] == 0, "PE 2 waits in the queue (%u, 0x%x)",
               pool.nqueued, pool.grant[2]);
    UNIT_CHECK(pool.grant[3] == (1u << 8 | DENIED), "PE 3 denied (0x%x)", pool.grant[3]);

    int rc = fsh_lease_release(&pool, 1);
    settle();
    UNIT_CHECK(rc == 0 && pool.owner[0] == 2 && pool.nqueued == 0 && granted_calls == 2,
               "given back, the chunk went to PE 2 (rc %d, owner %d, queued %u)", rc,
               pool.owner[0], pool.nqueued);
    UNIT_CHECK(pool.grant[2] == (1u << 8 | 0), "PE 2 answered chunk 0 (0x%x)", pool.grant[2]);
    UNIT_CHECK(pool.grant[0] == (3u << 8 | RELEASED), "PE 0's release answered (0x%x)",
               pool.grant[0]);
    c = claim_locked(1, false);
    UNIT_CHECK(c == -ENOSPC, "PE 0 now denied: %d", c);

    rc = fsh_lease_ask(&pool, 0);
    settle();
    UNIT_CHECK(rc == 0 && pool.nasked == 1 && asked_by == 0,
               "PE 2 asked to give back (rc %d, nasked %u, asked by %d)", rc, pool.nasked,
               asked_by);
    fake_remote_event(msg(2, RELEASE_BIT));
    settle();
    UNIT_CHECK(pool.owner[0] == -1 && pool.nasked == 0, "PE 2 gave back (owner %d, nasked %u)",
               pool.owner[0], pool.nasked);
    c = claim_locked(1, true);
    UNIT_CHECK(c == 0 && pool.owner[0] == 0, "PE 0's waiting claim granted (%d)", c);
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

/* Hold a release's landing while a claim is on the wire. */
static bool release_after_claim(const struct fake_event *e)
{
    if (e->kind != FAKE_LAND || !(e->imm & RELEASE_BIT)) {
        return true;
    }
    for (size_t i = 0; i < fake_pending(); i++) {
        const struct fake_event *o = fake_event_at(i);
        if (o->kind == FAKE_LAND && o->has_imm &&
            (o->imm >> FSH_IMM_KIND_SHIFT) == FSH_IMM_LEASE && !(o->imm & RELEASE_BIT)) {
            return false;
        }
    }
    return true;
}

static void release_overtaken(void)
{
    if (start(2) != 0) {
        return;
    }
    int c = claim_locked(1, false);
    UNIT_CHECK(c == 0, "granted: %d", c);
    fake_set_mode(FAKE_MANUAL);
    int rc = fsh_lease_release(&pool, 1);
    UNIT_CHECK(rc == 0 && fake_find(FAKE_LAND, FSH_IMM_LEASE) >= 0, "release on the wire");
    fake_set_gate(release_after_claim);
    fake_set_mode(FAKE_AUTO);
    c = claim_locked(1, false);
    fake_set_gate(NULL);
    settle();
    UNIT_CHECK(c == 0 && pool.owner[0] == 0, "claimed again after RELEASED: %d (owner %d)", c,
               pool.owner[0]);
    UNIT_CHECK((pool.grant[0] >> 8) == pool.claims[1], "answers %u, claims %u",
               pool.grant[0] >> 8, pool.claims[1]);
    UNIT_CHECK(pool.claims[1] == 4, "claim, release, claim, claim again: 4 (%u)",
               pool.claims[1]);
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

int main(void)
{
    unit_name = "test_lease";
    unit_case("grant_queue_giveback", grant_queue_giveback, 60);
    unit_case("release_overtaken", release_overtaken, 60);
    return unit_exit();
}
