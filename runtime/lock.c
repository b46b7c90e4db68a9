/*
 * lock.c: fair distributed locks as ticket locks on PE 0's copy of the lock word.
 *
 * The symmetric long holds two 32-bit counters: the next ticket (bytes 0..3) and the ticket
 * now served (bytes 4..7). set_lock takes a ticket with a 32-bit fetch-add on the first half and
 * waits until the second half reaches it: PEs get the lock in the order they asked (FIFO), so
 * nobody starves under contention. Each half is updated by 32-bit atomics only, so the ticket
 * counter wrapping after 2^32 acquisitions never carries into the served counter.
 * clear_lock completes the holder's outstanding operations (quiet), then serves the next
 * ticket. test_lock succeeds only if nobody holds or waits for the lock: a compare-and-swap of
 * the whole word from (t, t) to (t+1, t).
 *
 * The spec requires the lock to start at 0 on every PE and to be used by all PEs with the same
 * variable; only PE 0's copy is ever touched.
 */
#include "lock.h"

#include <stdbool.h>
#include <stdio.h>

#include "amo.h"
#include "progress.h"
#include "rma.h"

#define HOME 0
#define NEXT 0    /* byte offset of the next-ticket half */
#define SERVING 4 /* byte offset of the now-serving half */

struct serving_wait {
    enum fsh_seg seg;
    uint64_t off;
    uint32_t ticket;
    int err;
};

static bool my_turn(const void *arg)
{
    struct serving_wait *w = (struct serving_wait *)arg;
    uint32_t serving = 0;
    w->err = fsh_amo(&fsh_ctx_default, FSH_AMO_FETCH, w->seg, w->off + SERVING, NULL, NULL,
                     &serving, sizeof(serving), HOME, false);
    return w->err != 0 || serving == w->ticket;
}

int fsh_lock_set(enum fsh_seg seg, uint64_t off)
{
    uint32_t one = 1, ticket = 0;
    int rc = fsh_amo(&fsh_ctx_default, FSH_AMO_FETCH_ADD, seg, off + NEXT, &one, NULL, &ticket,
                     sizeof(ticket), HOME, false);
    if (rc != 0) {
        return rc;
    }
    struct serving_wait w = {seg, off, ticket, 0};
    if (!my_turn(&w)) {
        char what[64];
        snprintf(what, sizeof(what), "shmem_set_lock: waiting for ticket %u", ticket);
        rc = fsh_progress_wait_user(my_turn, &w, what, HOME);
    }
    return rc ? rc : w.err;
}

int fsh_lock_test(enum fsh_seg seg, uint64_t off, int *acquired)
{
    uint64_t word = 0;
    int rc = fsh_amo(&fsh_ctx_default, FSH_AMO_FETCH, seg, off, NULL, NULL, &word, sizeof(word),
                     HOME, false);
    if (rc != 0) {
        return rc;
    }
    uint32_t half[2];
    __builtin_memcpy(half, &word, sizeof(half));
    *acquired = 0;
    if (half[0] != half[1]) {
        return 0; /* held, or others are queued */
    }
    uint32_t want[2] = {half[0] + 1, half[1]};
    uint64_t next, old = 0;
    __builtin_memcpy(&next, want, sizeof(next));
    rc = fsh_amo(&fsh_ctx_default, FSH_AMO_CSWAP, seg, off, &next, &word, &old, sizeof(old), HOME,
                 false);
    *acquired = (rc == 0 && old == word);
    return rc;
}

int fsh_lock_clear(enum fsh_seg seg, uint64_t off)
{
    int rc = fsh_rma_quiet_all();
    if (rc != 0) {
        return rc;
    }
    uint32_t one = 1;
    rc = fsh_amo(&fsh_ctx_default, FSH_AMO_ADD, seg, off + SERVING, &one, NULL, NULL,
                 sizeof(one), HOME, false);
    if (rc == 0) {
        /* The release must reach PE 0 before this PE can be said to have let go. */
        rc = fsh_rma_quiet(&fsh_ctx_default);
    }
    return rc;
}
