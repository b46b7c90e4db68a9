/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * notify_wait.c: a receiver's side of counted writes: what it expects from each sender, and
 * the waits that end when the arrivals reach it (notify.c says why the counts stay exact).
 *
 * A wait reads the sender's arrival counter in this PE's region (acquire: the data its writes
 * carried is visible once the count is reached) and goes through the progress engine's one
 * waiting routine, which names the sender and the counts when it ends on a dead peer or a
 * time limit. It never sends anything.
 */
#include "notify.h"

#include <stdio.h>
#include <time.h>

#include "progress.h"
#include "team_type.h"

/* The counter index of team PE i in t's region (notify.c numbers senders the same way). */
static size_t counter_of(const struct fsh_team *t, int i)
{
    return t->nr->by_world ? (size_t)fsh_team_world_pe(t, i) : (size_t)i;
}

void fsh_notify_expect(const struct fsh_team *t, int i, uint32_t n)
{
    t->nr->expected[counter_of(t, i)] += n;
}

struct want {
    const uint32_t *arrived;
    uint32_t expected;
};

static bool reached(const void *arg)
{
    const struct want *w = arg;
    uint32_t a = __atomic_load_n(w->arrived, __ATOMIC_ACQUIRE);
    return (int32_t)(a - w->expected) >= 0;
}

/* Wait with done(arg) for w, the counter of team index i, named in the wait's message. */
static int wait_counter(const struct fsh_team *t, int i, const char *what, const struct want *w,
                        fsh_done_fn done, const void *arg)
{
    int from = fsh_team_world_pe(t, i);
    char msg[256];
    /* The counts run from the team's making, over all its collectives: say so. */
    snprintf(msg, sizeof(msg),
             "%s: waiting for PE %d (%u of the %u writes this team's collectives expect from it "
             "so far have arrived)", what, from, __atomic_load_n(w->arrived, __ATOMIC_RELAXED),
             w->expected);
    /* A collective's arrival comes only from the sender itself: a sender gone into finalize
     * (or exit) never sends it. Finalize's own sync waits for peers that may still compute. */
    if (t->nr == fsh_notify_final()) {
        return fsh_progress_wait(done, arg, msg, from);
    }
    return fsh_progress_wait_arrival(done, arg, msg, from);
}

int fsh_notify_wait(const struct fsh_team *t, int i, const char *what)
{
    size_t c = counter_of(t, i);
    struct want w = {&t->nr->cells[c].arrived, t->nr->expected[c]};
    return reached(&w) ? 0 : wait_counter(t, i, what, &w, reached, &w);
}

bool fsh_notify_reached(const struct fsh_team *t, int i)
{
    size_t c = counter_of(t, i);
    struct want w = {&t->nr->cells[c].arrived, t->nr->expected[c]};
    return reached(&w);
}

struct want_or {
    struct want w;
    fsh_done_fn other;
    const void *arg;
    unsigned polls;
};

static bool reached_or_other(const void *arg)
{
    struct want_or *f = (struct want_or *)arg;
    return reached(&f->w) || ((++f->polls & 63) == 0 && f->other(f->arg));
}

int fsh_notify_wait_or(const struct fsh_team *t, int i, const char *what, fsh_done_fn other,
                       const void *arg, bool *hit)
{
    size_t c = counter_of(t, i);
    struct want_or f = {.w = {&t->nr->cells[c].arrived, t->nr->expected[c]}, other, arg, 0};
    *hit = false;
    if (reached(&f.w)) {
        return 0;
    }
    int rc = wait_counter(t, i, what, &f.w, reached_or_other, &f);
    *hit = rc == 0 && !reached(&f.w);
    return rc;
}

struct want_for {
    struct want w;
    struct timespec end;
    unsigned polls;
    bool late;
};

static bool reached_or_late(const void *arg)
{
    struct want_for *f = (struct want_for *)arg;
    if (reached(&f->w)) {
        return true;
    }
    /* The clock every 64 polls: this wait is for a peer that is late already. */
    if ((++f->polls & 63) == 0) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > f->end.tv_sec ||
            (now.tv_sec == f->end.tv_sec && now.tv_nsec >= f->end.tv_nsec)) {
            f->late = true;
            return true;
        }
    }
    return false;
}

int fsh_notify_wait_for(const struct fsh_team *t, int i, const char *what, double secs,
                        bool *late)
{
    size_t c = counter_of(t, i);
    struct want_for f = {.w = {&t->nr->cells[c].arrived, t->nr->expected[c]}};
    *late = false;
    if (reached(&f.w)) {
        return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &f.end);
    long ns = f.end.tv_nsec + (long)(secs * 1e9);
    f.end.tv_sec += ns / 1000000000L;
    f.end.tv_nsec = ns % 1000000000L;
    int from = fsh_team_world_pe(t, i);
    char msg[160];
    snprintf(msg, sizeof(msg), "%s: waiting for PE %d (%u of %u arrivals)", what, from,
             __atomic_load_n(f.w.arrived, __ATOMIC_RELAXED), f.w.expected);
    int rc = fsh_progress_wait_arrival(reached_or_late, &f, msg, from);
    *late = rc == 0 && !reached(&f.w);
    return rc;
}
