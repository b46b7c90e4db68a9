/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nap.c: how a wait pauses: a spinning wait on a crowded core sleeps, with a short slice (nap.h
 * says when), never where its polls serve peers; the optional gap between empty polls.
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

bool fsh_nap_allowed(double spin, bool manual)
{
    /* Where peers reach this PE through a provider that moves data only while it polls
     * (manual progress: shm, tcp;ofi_rxm, efa), a wait's polls are what serves their puts,
     * gets and atomics: a napping wait (one nanosleep is 20-70 us on a shared VM) would hold
     * each of them that long, and a PE preempted once naps in its long waits for a second
     * (put + quiet 8 B on shm 0.8 -> 68 us against a PE waiting in a barrier). Such waits
     * spin, and yield where PEs outnumber cores, as before the naps. */
    return spin > 0 && !manual;
}

unsigned fsh_nap_poll_gap(long ns, bool manual)
{
    /* A target that polls shm back to back reads the command queue its peers' writes go into
     * while they write it, and every injected write then waits for the line to come back:
     * put_rate 8 B on libfabric 2.6 4.7 -> 5.7 Mmsg/s with 200 ns between the empty polls of
     * the target's wait, fi_ceiling's own target 6.5 -> 7.4; but whatever the target answers
     * waits up to the gap (get 8 B 1.03 -> 1.15 us, put-with-signal 0.37 -> 0.43). So it is
     * FABSHMEM_POLL_GAP_NS, off by default, for rate-bound programs. */
    return ns > 0 && manual ? fsh_relax_count(ns) : 0;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

unsigned fsh_relax_count(long ns)
{
    double best = 0;
    for (int k = 0; k < 5; k++) {
        double t0 = mono_now();
        for (int i = 0; i < 1024; i++) {
            fsh_cpu_relax();
        }
        double dt = (mono_now() - t0) / 1024;
        best = k == 0 || dt < best ? dt : best;
    }
    double n = best > 0 ? (double)ns * 1e-9 / best : 0;
    return n < 1 ? 1 : n > 1e5 ? 100000 : (unsigned)n;
}
