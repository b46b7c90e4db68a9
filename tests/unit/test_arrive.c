/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_arrive: remote completion by counting (runtime/arrive.c) on the fake transport, shaped
 * like efa-direct: a write's completion says only that it left, so every plain write carries
 * FSH_IMM_ARRIVE and the target (PE 1, looped back here) counts it once its data is in place.
 *
 * - counts_and_quiet: 40 puts of 1 to 3000 bytes (injected, in pieces, blocking and not) whose
 *   completions all come first while every landing is held back for a while; quiet must not
 *   return before every byte landed, and the target's count is then exactly the writes posted.
 *   A second quiet with nothing new posts nothing (its fast exit); fsh_arrive_landed (what
 *   put-with-signal's fallback waits with) also waits for the landings.
 * - random: the same in the fake's random order with the runtime's chaos orders, several seeds.
 */
#include <stdint.h>
#include <string.h>

#include "arrive.h"
#include "error.h"
#include "fake.h"
#include "heap.h"
#include "mr.h"
#include "progress.h"
#include "rma.h"
#include "unit.h"

#define NPUT 40
#define MAXLEN 3000

static unsigned ticks, hold_ticks;

static bool hold_landings(const struct fake_event *e)
{
    return e->kind != FAKE_LAND || ticks >= hold_ticks;
}

static void tick(void)
{
    ticks++;
}

static void run(uint64_t seed, bool chaos, unsigned hold)
{
    struct fake_config c = fake_lean(seed);
    c.count_arrivals = true;
    c.delivery_complete = false;
    c.max_msg_size = 1024;
    c.chaos = chaos;
    int rc = fake_start(&c);
    rc = rc ? rc : fsh_arrive_init(fsh_rma_read_words);
    UNIT_CHECK(rc == 0 && fsh_arrive_active, "start with counted arrivals: %d", rc);
    if (rc != 0) {
        return;
    }
    uint8_t *dst[NPUT];
    size_t len[NPUT];
    static uint8_t src[NPUT][MAXLEN];
    uint64_t r = seed;
    for (int i = 0; i < NPUT; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        len[i] = 1 + (size_t)((r >> 33) % MAXLEN);
        dst[i] = fsh_heap_alloc(len[i], 8);
        memset(dst[i], 0, len[i]);
        memset(src[i], 0x11 + i, len[i]);
    }
    ticks = 0;
    hold_ticks = hold;
    fake_set_tick(tick);
    fake_set_gate(hold_landings);
    for (int i = 0; i < NPUT; i++) {
        bool nbi = i % 3 != 0;
        rc = fsh_rma_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(dst[i], len[i]), src[i], len[i],
                         1, nbi);
        UNIT_CHECK(rc == 0, "put %d of %zu bytes: %d (%s)", i, len[i], rc,
                   fsh_err_last() ? fsh_err_last()->msg : "");
    }
    uint64_t sent = 0;
    for (int i = 0; i < NPUT; i++) {
        sent += (len[i] + c.max_msg_size - 1) / c.max_msg_size;
    }
    rc = fsh_rma_quiet(&fsh_ctx_default);
    UNIT_CHECK(rc == 0, "quiet: %d (%s)", rc, fsh_err_last() ? fsh_err_last()->msg : "");
    for (int i = 0; i < NPUT; i++) {
        size_t bad = 0;
        for (size_t j = 0; j < len[i]; j++) {
            bad += dst[i][j] != 0x11 + i;
        }
        UNIT_CHECK(bad == 0, "seed %llu: put %d: %zu of %zu bytes not there when quiet returned",
                   (unsigned long long)seed, i, bad, len[i]);
    }
    UNIT_CHECK(ticks >= hold || hold == 0, "quiet waited out the held landings (%u ticks)", ticks);
    uint64_t posted = fake_stats()->posted;
    rc = fsh_rma_quiet(&fsh_ctx_default);
    UNIT_CHECK(rc == 0 && fake_stats()->posted == posted,
               "a second quiet posts nothing (%llu more)",
               (unsigned long long)(fake_stats()->posted - posted));
    /* Another write, then fsh_arrive_landed: it too waits for the landing. */
    hold_ticks = ticks + hold;
    static uint8_t one[100];
    memset(one, 0x5A, sizeof(one));
    rc = fsh_rma_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(dst[0], 1), one, 1, 1, true);
    sent++;
    rc = rc ? rc : fsh_progress_wait_track(&fsh_ctx_default.track, "test: completions");
    rc = rc ? rc : fsh_arrive_landed(1);
    UNIT_CHECK(rc == 0 && dst[0][0] == 0x5A, "landed(1) waited for the write (rc %d, 0x%02x)",
               rc, dst[0][0]);
    UNIT_CHECK(fake_stats()->remote_events == sent, "one arrival per write: %llu, want %llu",
               (unsigned long long)fake_stats()->remote_events, (unsigned long long)sent);
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
    fake_set_gate(NULL);
    fake_set_tick(NULL);
    fsh_arrive_fini();
    fake_stop();
}

static void counts_and_quiet(void)
{
    run(1, false, 40);
}

static void random_orders(void)
{
    for (uint64_t seed = 2; seed <= 5; seed++) {
        run(seed, seed % 2 == 0, (unsigned)(seed * 5));
    }
}

int main(void)
{
    unit_name = "test_arrive";
    unit_case("counts_and_quiet", counts_and_quiet, 60);
    unit_case("random", random_orders, 60);
    return unit_exit();
}
