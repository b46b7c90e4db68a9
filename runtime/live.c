/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * live.c: the liveness word and the probes that tell a dead peer from a slow one.
 *
 * A wait never ends because it is long: a PE writing a checkpoint for an hour is waited for.
 * It ends when a peer it waits for is found unable to ever answer, by the probe the progress
 * engine calls once a wait has lasted FABSHMEM_PROBE_INTERVAL seconds and every interval after:
 *   - a PE of this node (the same node in the exchange) is a process: /proc/<pid>/stat gone or
 *     a zombie means dead; stopped (state T: SIGSTOP, ^Z) for longer than STOP_GRACE intervals
 *     means stopped. A traced stop (t: a debugger) is not counted: a person is looking at it.
 *     Its liveness word is read through the mapping (local.c) when there is one.
 *   - a PE elsewhere is asked with a 16-byte fabric read of its liveness word and heartbeat
 *     (raised by every poll of its progress engine). A read that fails ends the job through
 *     the fabric error path (progress.c names the peer). A read unanswered for UNREACH_AFTER
 *     intervals in which this PE's completion queue delivered nothing at all (a busy link
 *     queues the probe behind bulk data: tcp answers it after the stream, and a live stream
 *     keeps delivering), or a heartbeat that has not moved for STILL_AFTER intervals, counts
 *     only when the peer serves reads without calling the library (its progress thread, or a
 *     provider with automatic progress: the word says so, and until a first answer the peer
 *     is assumed configured as this PE is); otherwise a peer that computes simply does not
 *     answer, and that is no evidence. The heartbeat matters where reads are answered by the hardware (EFA)
 *     or the initiator (shm's CMA): a stopped process answers those.
 *   - with several rails (fabric.h) a PE elsewhere is probed on each of its live ways. A way
 *     whose probe stays unanswered for RAIL_AFTER intervals while a probe posted later on
 *     another way of the same PE was answered is dead, not slow (the PE serves reads, and
 *     stripes keep every way equally busy): xport takes it out of use and posts again what
 *     was in flight on it. Only when no way is left is the PE unreachable.
 *   - the word says what the peer is doing. A wait that needs the peer to act (a collective's
 *     arrival) cannot end when the peer went into shmem_finalize or exit(): that is a
 *     mismatch of collective calls and ends the job, naming both.
 *
 * Cost: a wait shorter than an interval costs nothing. Each probe reads /proc for the local
 * PEs it names and keeps at most SLOTS 16-byte reads in flight. A wait that names its peer (a barrier
 * round, a lock) probes that PE; a wait for completions probes the targets of the operations
 * in flight; a wait that names nobody (shmem_wait_until) probes every PE of this node and up
 * to SLOTS others per interval in turn, so it covers N remote PEs in N / SLOTS intervals.
 *
 * Word layout (64 bits): state (enum fsh_live_state) in bits 0..7, exit status in 8..15,
 * "serves reads" in bit 16; the heartbeat is the next word.
 */
#define _GNU_SOURCE
#include "live.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "heap.h"
#include "local.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"
#include "xport.h"

#define SLOTS 16        /* fabric probes in flight */
#define STOP_GRACE 3    /* intervals a local PE may stay stopped */
#define STILL_AFTER 3   /* intervals an answered heartbeat may stay still */
/* Intervals a fabric probe may stay unanswered while nothing arrives at all. Generous: over
 * tcp between hosts, the last pieces of a large all-to-all were seen to stall for 6 s with
 * nothing arriving anywhere, from a live peer (tests/multihost), and a cut link is silent for
 * 20 s and more before tcp says anything. */
#define UNREACH_AFTER 10
#define SERVES_BIT (1ull << 16)
/* Intervals a probe on one way may stay unanswered while another way of the same PE answers
 * a later one, before that way counts as dead. */
#define RAIL_AFTER 5

struct slot {
    int pe;                    /* -1: free */
    unsigned way;              /* the way to pe it went on */
    double posted;             /* when the read was posted */
    struct fsh_op_track track; /* its completion */
};

static struct {
    bool on;
    double interval;
    int npes;
    uint64_t *word;      /* this PE's word, in the heap */
    uint64_t word_off;   /* its heap offset, the same on every PE */
    uint64_t *dst;       /* [SLOTS][2] landing places of the reads (registered heap) */
    bool *same_node;     /* [pe] */
    double *stopped_at;  /* [pe]: when a local PE was first seen stopped, 0: not stopped */
    uint64_t *seen;      /* [pe]: the last word read, 0: none yet */
    uint64_t *beat;      /* [pe]: the last heartbeat read */
    double *beat_at;     /* [pe]: when it was first read with that value */
    double *answered;    /* [pe]: when the latest answered probe was posted */
    int *answered_way;   /* [pe]: its way */
    struct slot slots[SLOTS];
    int next_remote;     /* rotation of a probe of every PE */
    uint64_t events;     /* the progress engine's count of CQ entries at the last probe */
    double quiet_since;  /* since when it has not moved */
    bool busy;           /* a probe is running (a probe's own post may wait) */
} lv;

static struct fsh_ctx probe_ctx; /* not on the contexts' list: quiet never waits for probes */

void fsh_live_publish(enum fsh_live_state state, int status)
{
    if (!lv.word) {
        return;
    }
    uint64_t cur = __atomic_load_n(lv.word, __ATOMIC_RELAXED);
    if (state == FSH_LIVE_FINALIZE && (cur & 0xff) == FSH_LIVE_EXIT) {
        return;
    }
    uint64_t w = (uint64_t)state | ((uint64_t)(status & 0xff) << 8) |
                 (fsh_progress_serves() ? SERVES_BIT : 0);
    __atomic_store_n(lv.word, w, __ATOMIC_RELEASE);
}

/* A word that shows the peer cannot arrive any more, for a wait that needs it to. */
static int left(int pe, uint64_t w, bool arrival, const char *what)
{
    unsigned state = (unsigned)(w & 0xff);
    if (!arrival || (state != FSH_LIVE_FINALIZE && state != FSH_LIVE_EXIT)) {
        return 0;
    }
    const char *fix = "every PE must make the same collective calls, in the same order, before "
                      "shmem_finalize; end a program with shmem_finalize, or shmem_global_exit "
                      "to end every PE";
    if (state == FSH_LIVE_EXIT) {
        return fsh_err(-EPIPE, fix, "PE %d called exit(%d) without shmem_finalize while PE %d waits in %s",
                       pe, (int)((w >> 8) & 0xff), fsh_rt.pe, what);
    }
    return fsh_err(-EPIPE, fix, "PE %d entered shmem_finalize while PE %d waits in %s", pe,
                   fsh_rt.pe, what);
}

static int probe_remote(int pe, bool arrival, const char *what, double t);

/* A PE of this node: its word through the mapping (or, where its heap is not mapped, through
 * the fabric, as for a PE elsewhere: FABSHMEM_INTRANODE=fabric), then its process. */
static int probe_local(int pe, bool arrival, const char *what, double t)
{
    const uint64_t *w = fsh_local_addr(pe, FSH_SEG_HEAP, lv.word_off);
    int rc = w ? left(pe, __atomic_load_n(w, __ATOMIC_ACQUIRE), arrival, what)
               : probe_remote(pe, arrival, what, t);
    if (rc != 0) {
        return rc;
    }
    int pid = fsh_local_pid(pe);
    if (pid <= 0) {
        return 0;
    }
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = 0;
    if (f) {
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    /* "pid (comm) S ...": comm may hold spaces and parentheses; the state follows the last ')'. */
    const char *paren = strrchr(buf, ')');
    char state = (paren && paren[1] == ' ') ? paren[2] : '?';
    if (!f || state == 'Z' || state == 'X') {
        return fsh_err(-ESRCH, "see that PE's own messages and the launcher's: it was killed or crashed (a PE that ends must call shmem_finalize, or shmem_global_exit to end the job)",
                       "PE %d (pid %d on %s) is gone while PE %d waits in %s", pe, pid,
                       fsh_rt.host, fsh_rt.pe, what);
    }
    if (state != 'T') {
        lv.stopped_at[pe] = 0;
        return 0;
    }
    if (lv.stopped_at[pe] == 0) {
        lv.stopped_at[pe] = t;
    }
    double stopped = t - lv.stopped_at[pe];
    if (stopped >= STOP_GRACE * lv.interval) {
        return fsh_err(-EHOSTDOWN, "continue it (kill -CONT) or end the job; a stopped PE stops every PE that waits for it",
                       "PE %d (pid %d on %s) is stopped (SIGSTOP or ^Z) for %.0f s while PE %d waits in %s",
                       pe, pid, fsh_rt.host, stopped, fsh_rt.pe, what);
    }
    return 0;
}

/* The probe in flight to pe on way `way`, or (way < 0) on any way. */
static struct slot *slot_of(int pe, int way)
{
    for (int i = 0; i < SLOTS; i++) {
        if (lv.slots[i].pe == pe && (way < 0 || lv.slots[i].way == (unsigned)way)) {
            return &lv.slots[i];
        }
    }
    return NULL;
}

/* A PE elsewhere, on one way: collect the answer of the read in flight, or post one. */
static int probe_way(int pe, unsigned way, bool arrival, const char *what, double t)
{
    struct slot *s = slot_of(pe, (int)way);
    bool serves = lv.seen[pe] ? (lv.seen[pe] & SERVES_BIT) != 0 : fsh_progress_serves();
    if (s && fsh_progress_track_done(&s->track)) {
        const uint64_t *d = &lv.dst[2 * (size_t)(s - lv.slots)];
        uint64_t w = __atomic_load_n(&d[0], __ATOMIC_ACQUIRE), beat = d[1];
        s->pe = -1;
        if (s->posted > lv.answered[pe]) {
            lv.answered[pe] = s->posted;
            lv.answered_way[pe] = (int)way;
        }
        if (!fsh_fabric_way_alive(pe, way)) {
            return 0; /* a dead way's probe, answered on another: only the slot is freed */
        }
        lv.seen[pe] = w | 1ull << 63;
        serves = (w & SERVES_BIT) != 0;
        int rc = left(pe, w, arrival, what);
        if (rc != 0) {
            return rc;
        }
        if (beat != lv.beat[pe] || lv.beat_at[pe] == 0) {
            lv.beat[pe] = beat;
            lv.beat_at[pe] = t;
        } else if (serves && (w & 0xff) != FSH_LIVE_INIT && t - lv.beat_at[pe] >= STILL_AFTER * lv.interval) {
            return fsh_err(-EHOSTDOWN, "continue it (kill -CONT) or end the job; check that PE's node",
                           "PE %d answers fabric probes but its progress engine has not run for %.0f s: stopped or hung (PE %d waits in %s)",
                           pe, t - lv.beat_at[pe], fsh_rt.pe, what);
        }
        s = NULL;
    }
    if (!fsh_fabric_way_alive(pe, way)) {
        return 0;
    }
    if (s) {
        if (fsh_fabric_ways_all(pe) > 1 && t - s->posted >= RAIL_AFTER * lv.interval &&
            lv.answered[pe] > s->posted) {
            char why[160];
            snprintf(why, sizeof(why), "does not answer a probe on this way for %.0f s while it "
                     "answers on rail %s", t - s->posted,
                     fsh_fabric_rail_name(fsh_fabric_path_way(pe, (unsigned)lv.answered_way[pe]).rail));
            return fsh_xport_fail_way(pe, way, why);
        }
        /* Unanswered only counts while nothing moves: a congested link is not a cut one. */
        double waited = t - (s->posted > lv.quiet_since ? s->posted : lv.quiet_since);
        if (serves && waited >= UNREACH_AFTER * lv.interval) {
            return fsh_err(-EHOSTUNREACH, "check that PE's node and the network to it (a cut link, a dead node, a stopped process); FABSHMEM_PROBE_INTERVAL sets how often peers are probed",
                           "PE %d does not answer a fabric probe for %.0f s, and nothing arrived from any PE meanwhile: unreachable or stopped (PE %d waits in %s)",
                           pe, waited, fsh_rt.pe, what);
        }
        return 0;
    }
    for (int i = 0; i < SLOTS && !s; i++) {
        if (lv.slots[i].pe < 0) {
            s = &lv.slots[i];
        }
    }
    if (!s) {
        return 0; /* every slot busy with an unanswered probe: they are the ones to watch */
    }
    s->pe = pe;
    s->way = way;
    s->posted = t;
    int rc = fsh_rma_read_way(&probe_ctx, &s->track, &lv.dst[2 * (size_t)(s - lv.slots)],
                              2 * sizeof(uint64_t), pe, FSH_SEG_HEAP, lv.word_off, way);
    if (rc != 0) {
        s->pe = -1;
    }
    return rc;
}

/* A PE elsewhere: every way to it (one without rails). */
static int probe_remote(int pe, bool arrival, const char *what, double t)
{
    int rc = 0;
    for (unsigned w = 0, n = fsh_fabric_ways_all(pe); w < n && rc == 0; w++) {
        rc = probe_way(pe, w, arrival, what, t);
    }
    return rc;
}

static int probe_one(int pe, bool arrival, const char *what, double t)
{
    if (pe < 0 || pe >= lv.npes || pe == fsh_rt.pe) {
        return 0;
    }
    return lv.same_node[pe] ? probe_local(pe, arrival, what, t)
                            : probe_remote(pe, arrival, what, t);
}

static int probe(const int *pes, int npes, bool arrival, const char *what)
{
    fsh_progress_lock();
    if (lv.busy) {
        fsh_progress_unlock();
        return 0;
    }
    lv.busy = true;
    double t = fsh_progress_now();
    uint64_t events = fsh_progress_events();
    if (events != lv.events) {
        lv.events = events;
        lv.quiet_since = t;
    }
    int rc = 0;
    for (int i = 0; i < npes && rc == 0; i++) {
        rc = probe_one(pes[i], arrival, what, t);
    }
    if (npes == 0) {
        /* Nobody named: every local PE, and the remote ones in turn. */
        for (int pe = 0; pe < lv.npes && rc == 0; pe++) {
            if (lv.same_node[pe] || slot_of(pe, -1)) {
                rc = probe_one(pe, arrival, what, t);
            }
        }
        for (int k = 0; k < lv.npes && rc == 0 && slot_of(-1, -1); k++) {
            int pe = lv.next_remote;
            lv.next_remote = (lv.next_remote + 1) % lv.npes;
            if (!lv.same_node[pe] && !slot_of(pe, -1)) {
                rc = probe_one(pe, arrival, what, t);
            }
        }
    }
    lv.busy = false;
    fsh_progress_unlock();
    return rc;
}

size_t fsh_live_heap_bytes(void)
{
    return fsh_heap_rounded(sizeof(uint64_t) * 2 * (1 + SLOTS));
}

int fsh_live_init(const int *node_of, double interval)
{
    /* Written so that NaN fails too. */
    if (!(interval == 0 || (interval >= 0.1 && interval <= 3600))) {
        return fsh_err(-EINVAL, "use seconds between 0.1 and 3600 (0: no probes), e.g. FABSHMEM_PROBE_INTERVAL=2",
                       "FABSHMEM_PROBE_INTERVAL=%g is out of range", interval);
    }
    memset(&lv, 0, sizeof(lv));
    memset(&probe_ctx, 0, sizeof(probe_ctx));
    lv.npes = fsh_rt.npes;
    lv.interval = interval;
    size_t bytes = fsh_live_heap_bytes();
    lv.word = fsh_heap_alloc(bytes, 64);
    lv.same_node = calloc((size_t)lv.npes, sizeof(bool));
    lv.stopped_at = calloc((size_t)lv.npes, sizeof(double));
    lv.seen = calloc((size_t)lv.npes, sizeof(uint64_t));
    lv.beat = calloc((size_t)lv.npes, sizeof(uint64_t));
    lv.beat_at = calloc((size_t)lv.npes, sizeof(double));
    lv.answered = calloc((size_t)lv.npes, sizeof(double));
    lv.answered_way = calloc((size_t)lv.npes, sizeof(int));
    if (!lv.word || !lv.same_node || !lv.stopped_at || !lv.seen || !lv.beat || !lv.beat_at ||
        !lv.answered || !lv.answered_way) {
        return fsh_err(-ENOMEM, "raise SHMEM_SYMMETRIC_SIZE", "no room for the liveness word of %d PEs",
                       lv.npes);
    }
    enum fsh_seg seg;
    if (fsh_mr_lookup(lv.word, bytes, &seg, &lv.word_off) != 0 || seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "the liveness word is not in the registered heap");
    }
    lv.dst = lv.word + 2;
    fsh_progress_set_heartbeat(lv.word + 1);
    for (int pe = 0; pe < lv.npes; pe++) {
        lv.same_node[pe] = node_of[pe] == node_of[fsh_rt.pe];
    }
    for (int i = 0; i < SLOTS; i++) {
        lv.slots[i].pe = -1;
    }
    lv.on = interval > 0;
    if (lv.on) {
        fsh_progress_set_probe(probe, interval);
    }
    return 0;
}

void fsh_live_stop(void)
{
    fsh_progress_set_probe(NULL, 0);
    for (int i = 0; i < SLOTS; i++) {
        if (lv.slots[i].pe >= 0) {
            (void)fsh_progress_wait_track(&lv.slots[i].track, "finalize: a liveness probe");
            lv.slots[i].pe = -1;
        }
    }
}

void fsh_live_fini(void)
{
    fsh_progress_set_probe(NULL, 0);
    fsh_progress_set_heartbeat(NULL);
    free(lv.beat);
    free(lv.beat_at);
    free(lv.answered);
    free(lv.answered_way);
    free(lv.same_node);
    free(lv.stopped_at);
    free(lv.seen);
    memset(&lv, 0, sizeof(lv));
}
