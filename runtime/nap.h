/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nap.h: when a spinning wait should sleep instead (a core shared with busy processes), the
 * short scheduler slice a sleeping wait asks for, and the CPU pause between polls (progress.h
 * includes it for fsh_cpu_relax). progress.c's wait loop is the one user of the naps.
 *
 * A wait spins while its core is its own: nobody preempts it, and its wake-up latency is a
 * poll. Once it has spun FABSHMEM_SPIN_US without progress and the kernel took the core from
 * it meanwhile (an involuntary context switch), the peer it waits for may be one of the
 * processes kept waiting: it then sleeps 1 us between polls, and for a second after, this
 * thread's long waits sleep without waiting to be preempted again.
 */
#ifndef FSH_NAP_H
#define FSH_NAP_H

#include <stdbool.h>
#include <stdint.h>

/* This thread's involuntary context switches so far. */
long fsh_nap_preemptions(void);

/* Should a wait that began with *preempted switches, spinning without progress since, sleep
 * now (t: the time now)? Updates *preempted. */
bool fsh_nap_crowded(long *preempted, double t);

/* The CPU's spin-wait hint (x86 pause, arm yield): a polling loop's pause that leaves the
 * core's resources and the polled cache lines alone a while. */
static inline void fsh_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}
/* fsh_cpu_relax() calls that take about ns nanoseconds on this CPU (the fastest of a few
 * timings, so that a preemption does not shorten the gap; at least 1). Needs no engine. */
unsigned fsh_relax_count(long ns);

/* Whether a wait may nap at all: FABSHMEM_SPIN_US (spin) > 0 and no peer reaches this PE
 * through a manual-progress provider (manual), whose data moves only while the PE polls. */
bool fsh_nap_allowed(double spin, bool manual);

/* fsh_cpu_relax() calls between a wait's empty polls for FABSHMEM_POLL_GAP_NS = ns (0: none;
 * only with a manual-progress provider, where the target's polls contend with its writers). */
unsigned fsh_nap_poll_gap(long ns, bool manual);

/* One nap between polls. */
void fsh_nap_sleep(void);

/* The thread's scheduling attributes while a napping wait runs with a short slice (Linux >=
 * 6.12 reads sched_runtime of a SCHED_OTHER thread as its slice; older kernels ignore it). */
struct fsh_nap_slice {
    struct {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
    } saved; /* the kernel's struct sched_attr, as it was */
    bool shortened;
};

/* Ask for the short slice (an ordinary thread only: a real-time one is left as it is). */
void fsh_nap_slice_shorten(struct fsh_nap_slice *s);
/* The thread's own slice back, if it was shortened. */
void fsh_nap_slice_restore(struct fsh_nap_slice *s);

#endif
