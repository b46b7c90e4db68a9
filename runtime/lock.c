/* SPDX-License-Identifier: BSD-3-Clause */
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
 *
 * Misuse is named, never a corrupted word or a hang: each PE keeps, in a small record table in
 * the symmetric heap, the locks it waits for or holds with their tickets. set_lock by the
 * holder and clear_lock without holding are refused from this PE's own table. A word that was
 * not 0 at first use (or was written by other code) shows as more tickets ahead than PEs, or
 * as a ticket being served that no PE has: a set_lock that waits a probe interval reads the
 * other PEs' tables, and when two looks an interval apart find the served ticket owned by
 * nobody while it did not move, the lock is reported. A PE holding more than RECS locks at
 * once is not tracked (its table says so, and the check then gives no verdict).
 */
#include "lock.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "amo.h"
#include "error.h"
#include "heap.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"

#define HOME 0
#define NEXT 0    /* byte offset of the next-ticket half */
#define SERVING 4 /* byte offset of the now-serving half */

#define RECS 16 /* locks one PE may wait for or hold at once and still be tracked */

/* One lock this PE waits for or holds: key = (seg << 62 | off) + 1, 0 for a free record. */
struct rec {
    uint64_t key;
    uint32_t ticket;
    uint32_t held;
};

/* This PE's table, in the symmetric heap (peers read it), and its offset there. */
struct table {
    uint64_t untracked; /* nonzero: more than RECS locks at once, no verdict from this PE */
    struct rec rec[RECS];
};

static struct {
    struct table *mine;
    uint64_t off;
    double interval;
} lock_table;

size_t fsh_lock_heap_bytes(void)
{
    return fsh_heap_rounded(sizeof(struct table));
}

int fsh_lock_init(double interval)
{
    lock_table.mine = fsh_heap_alloc(sizeof(struct table), 64);
    enum fsh_seg seg;
    if (!lock_table.mine ||
        fsh_mr_lookup(lock_table.mine, sizeof(struct table), &seg, &lock_table.off) != 0) {
        return fsh_err(-ENOMEM, "raise SHMEM_SYMMETRIC_SIZE", "no room for the lock table");
    }
    memset(lock_table.mine, 0, sizeof(struct table));
    lock_table.interval = interval; /* 0: FABSHMEM_PROBE_INTERVAL=0, no looks */
    return 0;
}

static uint64_t key_of(enum fsh_seg seg, uint64_t off)
{
    return ((uint64_t)seg << 62 | off) + 1;
}

static struct rec *find(uint64_t key)
{
    for (int i = 0; i < RECS; i++) {
        if (__atomic_load_n(&lock_table.mine->rec[i].key, __ATOMIC_RELAXED) == key) {
            return &lock_table.mine->rec[i];
        }
    }
    return NULL;
}

/* Record ticket for key; a full table marks this PE untracked instead. */
static struct rec *record(uint64_t key, uint32_t ticket, bool held)
{
    struct rec *r = find(0);
    if (!r) {
        __atomic_fetch_add(&lock_table.mine->untracked, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    __atomic_store_n(&r->ticket, ticket, __ATOMIC_RELAXED);
    __atomic_store_n(&r->held, held, __ATOMIC_RELAXED);
    __atomic_store_n(&r->key, key, __ATOMIC_RELEASE);
    return r;
}

static void forget(uint64_t key)
{
    struct rec *r = find(key);
    if (r) {
        __atomic_store_n(&r->key, 0, __ATOMIC_RELEASE);
    } else if (lock_table.mine && lock_table.mine->untracked) {
        __atomic_fetch_sub(&lock_table.mine->untracked, 1, __ATOMIC_RELAXED);
    }
}

/* Whether some PE's table has ticket for key (or some PE is untracked: no verdict). */
static int owned(uint64_t key, uint32_t ticket, bool *yes)
{
    struct table t;
    *yes = false;
    for (int pe = 0; pe < fsh_rt.npes && !*yes; pe++) {
        int rc =
            fsh_rma_get(&fsh_ctx_default, &t, FSH_SEG_HEAP, lock_table.off, sizeof(t), pe, false);
        if (rc != 0) {
            return rc;
        }
        *yes = t.untracked != 0;
        for (int i = 0; i < RECS && !*yes; i++) {
            *yes = t.rec[i].key == key && t.rec[i].ticket == ticket;
        }
    }
    return 0;
}

struct serving_wait {
    enum fsh_seg seg;
    uint64_t off;
    uint32_t ticket;
    int err;
    const void *addr;
    double checked;   /* when the served ticket was last read for a look (0: never) */
    uint32_t last;    /* the served ticket then */
    int unowned;      /* looks in a row that found it owned by no PE */
};

static int corrupt(const struct serving_wait *w, uint32_t serving, const char *why)
{
    return fsh_err(-EINVAL, "a lock must be 0 before its first use on every PE, and changed by the lock routines only",
                   "lock %p serves ticket %u while this PE holds ticket %u: %s", w->addr, serving,
                   w->ticket, why);
}

static bool my_turn(const void *arg)
{
    struct serving_wait *w = (struct serving_wait *)arg;
    uint32_t serving = 0;
    w->err = fsh_amo(&fsh_ctx_default, FSH_AMO_FETCH, w->seg, w->off + SERVING, NULL, NULL,
                     &serving, sizeof(serving), HOME, false);
    if (w->err != 0 || serving == w->ticket) {
        return true;
    }
    if (w->checked == 0) {
        /* The first read, at the wait's start: the looks compare against it. */
        w->checked = fsh_progress_now();
        w->last = serving;
    }
    if ((uint32_t)(w->ticket - serving) >= (uint32_t)fsh_rt.npes) {
        /* Each PE holds at most one ticket of a lock: more ahead than PEs is no lock state. */
        w->err = corrupt(w, serving, "more tickets ahead than the job has PEs");
        return true;
    }
    double t = fsh_progress_now();
    if (lock_table.interval <= 0 || t - w->checked < lock_table.interval) {
        return false;
    }
    w->checked = t;
    if (serving != w->last) {
        w->last = serving;
        w->unowned = 0;
        return false;
    }
    bool yes = true;
    w->err = owned(key_of(w->seg, w->off), serving, &yes);
    w->unowned = yes ? 0 : w->unowned + 1;
    if (w->err == 0 && w->unowned >= 2) {
        w->err = corrupt(w, serving, "no PE has that ticket, and it is not moving");
    }
    return w->err != 0;
}

int fsh_lock_set(enum fsh_seg seg, uint64_t off, const void *addr)
{
    uint64_t key = key_of(seg, off);
    struct rec *r = find(key);
    if (r) {
        return fsh_err(-EDEADLK, "clear the lock before setting it again (OpenSHMEM locks are not recursive), and let one thread of a PE take a given lock",
                       "this PE already %s lock %p (ticket %u)",
                       r->held ? "holds" : "waits for", addr, r->ticket);
    }
    uint32_t one = 1, ticket = 0;
    int rc = fsh_amo(&fsh_ctx_default, FSH_AMO_FETCH_ADD, seg, off + NEXT, &one, NULL, &ticket,
                     sizeof(ticket), HOME, false);
    if (rc != 0) {
        return rc;
    }
    r = record(key, ticket, false);
    struct serving_wait w = {seg, off, ticket, 0, addr, 0, ticket, 0};
    if (!my_turn(&w)) {
        char what[64];
        snprintf(what, sizeof(what), "shmem_set_lock: waiting for ticket %u", ticket);
        rc = fsh_progress_wait_user(my_turn, &w, what, HOME);
    }
    rc = rc ? rc : w.err;
    if (rc == 0 && r) {
        __atomic_store_n(&r->held, 1, __ATOMIC_RELAXED);
    }
    return rc;
}

int fsh_lock_test(enum fsh_seg seg, uint64_t off, const void *addr, int *acquired)
{
    struct rec *r = find(key_of(seg, off));
    if (r) {
        return fsh_err(-EDEADLK, "clear the lock before taking it again (OpenSHMEM locks are not recursive)",
                       "this PE already %s lock %p (ticket %u)",
                       r->held ? "holds" : "waits for", addr, r->ticket);
    }
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
    if (*acquired) {
        (void)record(key_of(seg, off), half[0], true);
    }
    return rc;
}

int fsh_lock_clear(enum fsh_seg seg, uint64_t off, const void *addr)
{
    uint64_t key = key_of(seg, off);
    struct rec *r = find(key);
    if ((!r || !r->held) && !lock_table.mine->untracked) {
        /* Serving the next ticket for a lock nobody here holds would hand it to two PEs. */
        return fsh_err(-EPERM, "clear only a lock this PE set (shmem_set_lock) or acquired (shmem_test_lock returned 0)",
                       "this PE does not hold lock %p", addr);
    }
    forget(key);
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
