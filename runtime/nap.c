/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nap.c: a spinning wait on a crowded core sleeps, with a short slice (nap.h says when).
 *
 * Why sleep rather than spin or sched_yield: spinning on costs a slice per step, and
 * sched_yield lets every busy process run its slice first; a short sleep gives the core away
 * and brings the wait back as a woken task, which the scheduler runs at once, the sooner with
 * a short slice. On a quiet core nobody preempts a wait, so none of this happens there.
 */
#define _GNU_SOURCE
#include "nap.h"

#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* When a wait of this thread last found itself preempted while it spun: for CROWDED_FOR
 * seconds after, its long waits nap without waiting to be preempted again (each would lose a
 * slice to learn what the last one learned). */
static __thread double crowded_at;
#define CROWDED_FOR 1.0

#define NAP_SLICE_NS 100000 /* a short slice: the scheduler runs a woken short-slice task first */

long fsh_nap_preemptions(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

bool fsh_nap_crowded(long *preempted, double t)
{
    long p = fsh_nap_preemptions();
    if (p != *preempted) {
        crowded_at = t;
        *preempted = p;
    }
    return crowded_at > 0 && t - crowded_at < CROWDED_FOR;
}

void fsh_nap_sleep(void)
{
    struct timespec ts = {0, 1000};
    nanosleep(&ts, NULL);
}

void fsh_nap_slice_shorten(struct fsh_nap_slice *s)
{
    memset(&s->saved, 0, sizeof(s->saved));
    s->shortened = false;
    if (syscall(SYS_sched_getattr, 0, &s->saved, sizeof(s->saved), 0) != 0 ||
        s->saved.policy != 0) {
        return;
    }
    __typeof__(s->saved) a = s->saved;
    a.size = sizeof(a);
    a.runtime = NAP_SLICE_NS;
    s->shortened = syscall(SYS_sched_setattr, 0, &a, 0) == 0;
}

void fsh_nap_slice_restore(struct fsh_nap_slice *s)
{
    if (s->shortened) {
        s->saved.size = sizeof(s->saved);
        (void)syscall(SYS_sched_setattr, 0, &s->saved, 0);
        s->shortened = false;
    }
}
