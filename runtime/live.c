/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * live.c: the liveness word and the probes that tell a dead peer from a slow one.
 *
 * A wait never ends because it is long: a PE writing a checkpoint for an hour is waited for.
 * It ends when a peer it waits for is found unable to ever answer, by the probe the progress
 * engine calls once a wait has lasted FABSHMEM_PROBE_INTERVAL seconds and every interval after:
 *   - a PE of this node (the same node in the exchange) is a process: /proc/<pid>/stat gone or
 *     a zombie means dead. Stopped (state T: SIGSTOP, ^Z, a checkpointer, a scheduler's
 *     suspend) is alive: a warning says so after QUIET_WARN intervals and again each time the
 *     stop has lasted twice as long, and the wait goes on (only FABSHMEM_TIMEOUT, the user's
 *     opt-in, ends a wait on a live peer). A traced stop (t: a debugger) is not even warned
 *     about: a person is looking at it. Its liveness word is read through the mapping
 *     (local.c) when there is one.
 *   - a PE of another node that runs on this machine all the same (FABSHMEM_SIM_NODES; the
 *     exchange says which process space each pid is in, local.c) is probed as below, but its
 *     process is looked at first (unless FABSHMEM_PROC_REMOTE=0, for tests): stopped, it is
 *     waited for as above and its silence (over tcp a stopped PE answers nothing) is not taken
 *     for unreachability. A PE of another machine that is silent is asked about to its
 *     node-mates instead (see the section of that name).
 *   - a PE elsewhere is asked with a 16-byte fabric read of its liveness word and heartbeat
 *     (raised by every poll of its progress engine). A read that fails ends the job through
 *     the fabric error path (progress.c names the peer). A read unanswered for UNREACH_AFTER
 *     intervals in which this PE's completion queue delivered nothing at all (a busy link
 *     queues the probe behind bulk data: tcp answers it after the stream, and a live stream
 *     keeps delivering) means unreachable, but only when the peer serves reads without
 *     calling the library (its progress thread, or a provider with automatic progress: the
 *     word says so, and until a first answer the peer is assumed configured as this PE is);
 *     otherwise a peer that computes simply does not answer, and that is no evidence. An
 *     answered heartbeat that has not moved for QUIET_WARN intervals (from a peer that
 *     serves) is a process that does not run: reads are answered by the hardware (EFA) or the
 *     initiator (shm's CMA) while it is stopped. Stopped or hung, it is alive as far as anyone
 *     can tell: warned about like a stopped PE, and waited for.
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
 * Every wait in the library ends, then, when what it waits for cannot come; one more case is
 * when nothing can come because every PE waits (a deadlock: see the section of that name).
 *
 * The block (BLOCK_WORDS words, read whole by a probe): the word, with state (enum
 * fsh_live_state) in bits 0..7, exit status in 8..15, "serves reads" in bit 16; the heartbeat;
 * then what this PE waits in (the deadlock section); last, the PEs of its node it saw stopped
 * (the node-mates section).
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
#include "log.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"
#include "shmem.h"
#include "xport.h"

#define SLOTS 16        /* fabric probes in flight */
/* Intervals a PE may stay stopped, or its answered heartbeat still, before a warning says so;
 * the next warning comes when that time has doubled, and so on. Never an error: a stopped
 * process is alive (^Z and fg, a debugger, a checkpointer, a scheduler's suspend). */
#define QUIET_WARN 3
/* Intervals a fabric probe may stay unanswered while nothing arrives at all. Generous: over
 * tcp between hosts, the last pieces of a large all-to-all were seen to stall for 6 s with
 * nothing arriving anywhere, from a live peer (tests/multihost), and a cut link is silent for
 * 20 s and more before tcp says anything. */
#define UNREACH_AFTER 10
/* The same for a PE of this node reached through the fabric (FABSHMEM_INTRANODE=fabric), whose
 * process /proc shows running (not stopped): no remote node's stall to allow for, so an
 * unanswered probe says the path is down (a loopback link taken down was silent for 88 s). */
#define LOCAL_UNREACH_AFTER 4
#define SERVES_BIT (1ull << 16)
/* Intervals a probe on one way may stay unanswered while another way of the same PE answers
 * a later one, before that way counts as dead. */
#define RAIL_AFTER 5
/* The block: word, heartbeat, wait, moves, the wait's description (deadlock section), and the
 * node-mates this PE saw stopped (node-mates section). */
#define BLOCK_WORDS 16
#define WAIT_WORD 2
#define MOVES_WORD 3
#define WHAT_WORD 4
#define MATES_WORD 15
#define WHAT_BYTES ((MATES_WORD - WHAT_WORD) * sizeof(uint64_t))
/* Node-mates: the PEs of a node with the lowest MATE_LOOKERS local ranks look at every PE of
 * their node each probe; a PE elsewhere asks up to MATES_ASKED of them about a PE that has not
 * answered for ASK_AFTER intervals. Local ranks from MATE_BITS on are not covered. */
#define MATE_LOOKERS 3
#define MATES_ASKED 2
#define ASK_AFTER 2
#define MATE_BITS 64

struct slot {
    int pe;                    /* -1: free */
    unsigned way;              /* the way to pe it went on */
    double posted;             /* when the read was posted */
    struct fsh_op_track track; /* its completion */
    bool counted;              /* its completion was taken out of the events (probe()) */
};

static struct {
    bool on;
    double interval;
    int npes;
    uint64_t *word;      /* this PE's word, in the heap */
    uint64_t word_off;   /* its heap offset, the same on every PE */
    uint64_t *dst;       /* [SLOTS][2] landing places of the reads (registered heap) */
    bool *same_node;     /* [pe] */
    int *node_of;        /* [pe]: its node, as the exchange says */
    bool proc_remote;    /* look in /proc at a PE of another node that runs on this machine */
    int my_lrank;        /* this PE's local rank (node-mates section) */
    uint64_t *mates;     /* [pe]: its MATES_WORD as last read, */
    double *mates_at;    /* [pe]: from a probe posted then (0: never) */
    double *stopped_at;  /* [pe]: when a PE was first seen stopped, 0: not stopped */
    double *stopped_seen;/* [pe]: when it was last seen stopped */
    double *stop_warn;   /* [pe]: how long stopped at the next warning, 0: the first */
    double *still_warn;  /* [pe]: how long its heartbeat still at the next warning, 0: the first */
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
} peer_watch;

static struct fsh_ctx probe_ctx; /* not on the contexts' list: quiet never waits for probes */

static void sighted(int pe, const uint64_t *block, double at); /* the deadlock section's */

static int probe_one(int pe, bool arrival, const char *what, double t);
static int probe_remote(int pe, bool arrival, const char *what, double t);
static int ask_mates(int pe, const char *what, double t, bool *said);

void fsh_live_publish(enum fsh_live_state state, int status)
{
    if (!peer_watch.word) {
        return;
    }
    uint64_t cur = __atomic_load_n(peer_watch.word, __ATOMIC_RELAXED);
    if (state == FSH_LIVE_FINALIZE && (cur & 0xff) == FSH_LIVE_EXIT) {
        return;
    }
    uint64_t w = (uint64_t)state | ((uint64_t)(status & 0xff) << 8) |
                 (fsh_progress_serves() ? SERVES_BIT : 0);
    __atomic_store_n(peer_watch.word, w, __ATOMIC_RELEASE);
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

/* Is a warning about something lasting `lasted` seconds due? The first at QUIET_WARN intervals,
 * each next one when the time has doubled. *next: the duration of the next warning, 0 at first. */
static bool warn_due(double *next, double lasted)
{
    if (*next == 0) {
        *next = QUIET_WARN * peer_watch.interval;
    }
    if (lasted < *next) {
        return false;
    }
    while (*next <= lasted) {
        *next *= 2;
    }
    return true;
}

/* The state letter of a process in /proc/<pid>/stat ('R', 'S', 'T', ...), or 0 when it is gone. */
static char proc_state(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) {
        return 0;
    }
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) S ...": comm may hold spaces and parentheses; the state follows the last ')'. */
    const char *paren = strrchr(buf, ')');
    return (paren && paren[1] == ' ') ? paren[2] : '?';
}

/* pe's process is seen stopped (state T) at t: a warning now and then, never an error. An
 * episode is counted from the first probe that saw it; a gap of several intervals without a
 * probe (this PE stopped waiting for it) starts a new one. */
static void stopped_as(int pe, const char *who, const char *cont, const char *what, double t)
{
    if (peer_watch.stopped_at[pe] == 0 ||
        t - peer_watch.stopped_seen[pe] > QUIET_WARN * peer_watch.interval) {
        peer_watch.stopped_at[pe] = t;
        peer_watch.stop_warn[pe] = 0;
    }
    peer_watch.stopped_seen[pe] = t;
    double lasted = t - peer_watch.stopped_at[pe];
    if (warn_due(&peer_watch.stop_warn[pe], lasted)) {
        FSH_WARN("PE %d (%s) is stopped (SIGSTOP or ^Z) for %.0f s while PE %d waits in %s; "
                 "waiting for it to be continued (%s): a stopped PE holds up every PE "
                 "that waits for it (FABSHMEM_TIMEOUT limits such waits)",
                 pe, who, lasted, fsh_rt.pe, what, cont);
    }
}

static void stopped(int pe, int pid, const char *what, double t)
{
    char who[128], cont[48];
    snprintf(who, sizeof(who), "pid %d on %s", pid, fsh_rt.host);
    snprintf(cont, sizeof(cont), "kill -CONT %d", pid);
    stopped_as(pe, who, cont, what, t);
}

static void running(int pe)
{
    peer_watch.stopped_at[pe] = 0;
    peer_watch.stop_warn[pe] = 0;
}

/* A PE of this node: its word through the mapping, then its process. */
static int probe_local(int pe, bool arrival, const char *what, double t)
{
    const uint64_t *w = fsh_local_addr(pe, FSH_SEG_HEAP, peer_watch.word_off);
    if (w) {
        int rc = left(pe, __atomic_load_n(w, __ATOMIC_ACQUIRE), arrival, what);
        if (rc != 0) {
            return rc;
        }
    }
    int pid = fsh_local_pid(pe);
    if (pid <= 0) {
        return 0;
    }
    char state = proc_state(pid);
    if (state == 0 || state == 'Z' || state == 'X') {
        return fsh_err(-ESRCH, "see that PE's own messages and the launcher's: it was killed or crashed (a PE that ends must call shmem_finalize, or shmem_global_exit to end the job)",
                       "PE %d (pid %d on %s) is gone while PE %d waits in %s", pe, pid,
                       fsh_rt.host, fsh_rt.pe, what);
    }
    if (state == 'T') {
        stopped(pe, pid, what, t);
    } else {
        running(pe);
    }
    return 0;
}

/* The probe in flight to pe on way `way`, or (way < 0) on any way. */
static struct slot *slot_of(int pe, int way)
{
    for (int i = 0; i < SLOTS; i++) {
        if (peer_watch.slots[i].pe == pe && (way < 0 || peer_watch.slots[i].way == (unsigned)way)) {
            return &peer_watch.slots[i];
        }
    }
    return NULL;
}

/* A PE elsewhere, on one way: collect the answer of the read in flight, or post one. */
static int probe_way(int pe, unsigned way, bool arrival, const char *what, double t)
{
    struct slot *s = slot_of(pe, (int)way);
    bool serves =
        peer_watch.seen[pe] ? (peer_watch.seen[pe] & SERVES_BIT) != 0 : fsh_progress_serves();
    if (s && fsh_progress_track_done(&s->track)) {
        const uint64_t *d = &peer_watch.dst[BLOCK_WORDS * (size_t)(s - peer_watch.slots)];
        uint64_t w = __atomic_load_n(&d[0], __ATOMIC_ACQUIRE), beat = d[1];
        s->pe = -1;
        if (s->posted > peer_watch.answered[pe]) {
            peer_watch.answered[pe] = s->posted;
            peer_watch.answered_way[pe] = (int)way;
        }
        if (!fsh_fabric_way_alive(pe, way)) {
            return 0; /* a dead way's probe, answered on another: only the slot is freed */
        }
        peer_watch.seen[pe] = w | 1ull << 63;
        sighted(pe, d, s->posted);
        serves = (w & SERVES_BIT) != 0;
        int rc = left(pe, w, arrival, what);
        if (rc != 0) {
            return rc;
        }
        peer_watch.mates[pe] = __atomic_load_n(&d[MATES_WORD], __ATOMIC_ACQUIRE);
        peer_watch.mates_at[pe] = s->posted;
        if (beat != peer_watch.beat[pe] || peer_watch.beat_at[pe] == 0) {
            if (beat != peer_watch.beat[pe]) {
                running(pe); /* it polled since: not stopped (any more) */
            }
            peer_watch.beat[pe] = beat;
            peer_watch.beat_at[pe] = t;
            peer_watch.still_warn[pe] = 0;
        } else if (serves && (w & 0xff) != FSH_LIVE_INIT &&
                   warn_due(&peer_watch.still_warn[pe], t - peer_watch.beat_at[pe])) {
            /* Reads answered by the NIC (EFA) or by the reader (shm's CMA) while the process
             * does not run: stopped, or hung. Either way alive as far as anyone can tell. */
            FSH_WARN("PE %d (pid %d on another node) answers fabric probes but its progress engine "
                     "has not run for %.0f s "
                     "while PE %d waits in %s: it is stopped (SIGSTOP, ^Z, a debugger) or hung; "
                     "waiting for it (FABSHMEM_TIMEOUT limits such waits)",
                     pe, fsh_local_pid(pe), t - peer_watch.beat_at[pe], fsh_rt.pe, what);
        }
        s = NULL;
    }
    if (!fsh_fabric_way_alive(pe, way)) {
        return 0;
    }
    if (s) {
        if (fsh_fabric_ways_all(pe) > 1 && t - s->posted >= RAIL_AFTER * peer_watch.interval &&
            peer_watch.answered[pe] > s->posted) {
            char why[160];
            snprintf(why, sizeof(why),
                     "does not answer a probe on this way for %.0f s while it "
                     "answers on rail %s",
                     t - s->posted,
                     fsh_fabric_rail_name(
                         fsh_fabric_path_way(pe, (unsigned)peer_watch.answered_way[pe]).rail));
            return fsh_xport_fail_way(pe, way, why);
        }
        /* Unanswered only counts while nothing moves: a congested link is not a cut one. */
        double waited =
            t - (s->posted > peer_watch.quiet_since ? s->posted : peer_watch.quiet_since);
        int after = UNREACH_AFTER;
        if (peer_watch.same_node[pe]) {
            /* Its process runs (probe_one looked): counted from its last stop. */
            double since = t - peer_watch.stopped_seen[pe];
            waited = waited < since ? waited : since;
            after = LOCAL_UNREACH_AFTER;
        } else if (serves && t - s->posted >= ASK_AFTER * peer_watch.interval) {
            /* Silent: its node-mates may see it stopped (node-mates section). */
            bool said = false;
            int rc = ask_mates(pe, what, t, &said);
            if (rc != 0 || said) {
                return rc;
            }
            if (peer_watch.stopped_at[pe] != 0) {
                double since = t - peer_watch.stopped_seen[pe]; /* counted from the last word */
                waited = waited < since ? waited : since;
            }
        }
        if (serves && waited >= after * peer_watch.interval) {
            return fsh_err(-EHOSTUNREACH, "check that PE's node and the network to it (a cut link, a dead node, a stopped process); FABSHMEM_PROBE_INTERVAL sets how often peers are probed",
                           "PE %d does not answer a fabric probe for %.0f s, and nothing arrived from any PE meanwhile: unreachable or stopped (PE %d waits in %s)",
                           pe, waited, fsh_rt.pe, what);
        }
        return 0;
    }
    for (int i = 0; i < SLOTS && !s; i++) {
        if (peer_watch.slots[i].pe < 0) {
            s = &peer_watch.slots[i];
        }
    }
    if (!s) {
        return 0; /* every slot busy with an unanswered probe: they are the ones to watch */
    }
    s->pe = pe;
    s->way = way;
    s->posted = t;
    s->counted = false;
    int rc = fsh_rma_read_way(
        &probe_ctx, &s->track, &peer_watch.dst[BLOCK_WORDS * (size_t)(s - peer_watch.slots)],
        BLOCK_WORDS * sizeof(uint64_t), pe, FSH_SEG_HEAP, peer_watch.word_off, way);
    if (rc != 0) {
        s->pe = -1;
    }
    return rc;
}

/* A PE elsewhere: every way to it (one without rails). One that runs on this very machine
 * all the same (a pretend node of FABSHMEM_SIM_NODES) is a process to look at: stopped, it
 * is waited for like a PE of this node, and what its silence would otherwise suggest (over
 * tcp a stopped PE answers nothing: unreachable) is not concluded. */
static int probe_remote(int pe, bool arrival, const char *what, double t)
{
    int pid = peer_watch.proc_remote ? fsh_local_visible_pid(pe) : 0;
    char state = pid > 0 ? proc_state(pid) : 0;
    if (state == 'T' || state == 't') {
        if (state == 'T') {
            stopped(pe, pid, what, t);
        }
        peer_watch.beat_at[pe] = 0; /* a still heartbeat is explained; counted anew once it runs */
        return 0;
    }
    if (state != 0) {
        running(pe); /* else a node-mate's word, or its moving heartbeat, says (probe_way) */
    }
    int rc = 0;
    for (unsigned w = 0, n = fsh_fabric_ways_all(pe); w < n && rc == 0; w++) {
        rc = probe_way(pe, w, arrival, what, t);
    }
    return rc;
}

/* ------------------------------------------------------------------ node-mates
 *
 * A stopped PE answers nothing over tcp (nothing serves its reads), so from another machine it
 * looks like a cut link. Its node-mates can tell: each PE of the MATE_LOOKERS lowest local
 * ranks of a node, at each probe of a wait (so while it has waited an interval), reads /proc of
 * every PE of its node and publishes in MATES_WORD of its block a bit per local rank in state
 * T; the word is cleared when that wait ends, so a bit is at most an interval old or absent. A
 * PE elsewhere whose probe of pe has gone unanswered for ASK_AFTER intervals reads the blocks
 * of MATES_ASKED node-mates of pe (those lookers, other than pe) with the same fabric probe;
 * a fresh block with pe's bit set makes pe stopped: warned about like a stopped PE of this
 * node, waited for, its silence counted only from the last such word. A PE alone on its node,
 * a node whose lookers are all stopped too (the whole job suspended there), or a looker that
 * computes instead of waiting: no word, and the silence is judged as before. */

/* pe's local rank: the PEs of its node before it. */
static int lrank_of(int pe)
{
    int r = 0;
    for (int q = 0; q < pe; q++) {
        r += peer_watch.node_of[q] == peer_watch.node_of[pe];
    }
    return r;
}

/* This PE is a looker: the stopped PEs of its node, by local rank, into MATES_WORD. */
static void look_at_mates(void)
{
    if (peer_watch.my_lrank >= MATE_LOOKERS || fsh_progress_wait_now()->depth == 0) {
        return; /* a retry loop, not a wait: no wait's end would clear the word */
    }
    uint64_t bits = 0;
    for (int pe = 0, r = 0; pe < peer_watch.npes && r < MATE_BITS; pe++) {
        if (!peer_watch.same_node[pe]) {
            continue;
        }
        int pid = pe == fsh_rt.pe ? 0 : fsh_local_pid(pe);
        if (pid > 0 && proc_state(pid) == 'T') {
            bits |= 1ull << r;
        }
        r++;
    }
    __atomic_store_n(&peer_watch.word[MATES_WORD], bits, __ATOMIC_RELEASE);
}

/* pe, of another node, has not answered for ASK_AFTER intervals: read its lookers' blocks
 * (posted now, answered by a later probe) and see whether a fresh one says it is stopped
 * (*said: then it was warned about as stopped). */
static int ask_mates(int pe, const char *what, double t, bool *said)
{
    static bool asking; /* a looker's own silence is not asked about in turn */
    int r = lrank_of(pe);
    if (asking || r >= MATE_BITS) {
        return 0;
    }
    asking = true;
    int rc = 0, asked = 0;
    for (int m = 0, mr = 0; m < peer_watch.npes && mr < MATE_LOOKERS && asked < MATES_ASKED &&
                            rc == 0 && !*said;
         m++) {
        if (peer_watch.node_of[m] != peer_watch.node_of[pe]) {
            continue;
        }
        mr++;
        if (m == pe || m == fsh_rt.pe) {
            continue;
        }
        asked++;
        rc = probe_remote(m, false, what, t);
        if (rc == 0 && peer_watch.mates_at[m] >= t - (ASK_AFTER + 1) * peer_watch.interval &&
            (peer_watch.mates[m] >> r) & 1) {
            char who[96];
            snprintf(who, sizeof(who), "on another node, seen stopped by its node-mate PE %d", m);
            stopped_as(pe, who, "kill -CONT on its node", what, t);
            peer_watch.beat_at[pe] = 0;
            *said = true;
        }
    }
    asking = false;
    return rc;
}

/* ------------------------------------------------------------------ deadlock
 *
 * A wait can also never end with every PE alive: each waits in the library for something only
 * another PE's action could bring, and that PE waits too (a flag nobody will set, a lock its
 * holder took out of main, a PE gone into its finalize at exit while the others wait for it).
 * So each PE says in its block what its thread waits in:
 *   - WAIT_WORD: W_IN while its outermost wait has lasted a probe interval (published by the
 *     probe: a shorter wait is never part of a deadlock, which lasts forever); W_FLIGHT while
 *     an operation of this PE is in flight (a write, an atomic or a read other than these
 *     probes: its landing may end a wait, this PE's own included; a read held up on a cut rail
 *     is failover's to judge, not a deadlock); W_ONE while the program runs one thread
 *     (SHMEM_THREAD_SINGLE: no other thread of it can act) and the wait is decidable (not on
 *     device memory a kernel may write); the PE it waits for + 1 in bits 32..63 (0: none);
 *   - MOVES_WORD: raised when a published wait ends, and when the variables a user wait
 *     compares (shmem_wait_until) changed from one probe to the next;
 *   - the wait's description from WHAT_WORD on, NUL-terminated.
 * PE 0 (part of any deadlock, since a deadlock includes every PE), once its own wait has lasted
 * an interval, looks at every block in rounds: through the mapping, else with the fabric probe
 * (a read posted after the round began). A round that finds a PE outside a wait, with W_FLIGHT,
 * or without W_ONE ends at once (no deadlock now). Two complete rounds in a row that find
 * every PE in the same wait as the round before (the wait word and MOVES_WORD unchanged) with
 * its heartbeat moved (it polls: a stopped PE is not waiting in the library, it is waited for)
 * make a deadlock: each round's looks all follow the previous round's, so at one moment every
 * PE waited with nothing of its own in flight, and for two rounds after nothing anywhere moved.
 * PE 0 lists each PE's wait and ends the wait with -EDEADLK: the usual fatal path ends the job.
 * Cost: nothing unless PE 0 waits an interval; then one look per PE per round (a round ends at
 * the first PE found computing). */
#define W_IN 1ull
#define W_FLIGHT 2ull
#define W_ONE 4ull
/* fsh_live_helper_thread: a thread of the library acts for this PE (never cleared: the job's
 * waits stay open-ended once it ran). */
static bool helper;
#define STABLE_ROUNDS 2

struct sight {
    uint64_t word, beat, wait, moves;
    double at; /* when it was taken (a fabric read: when it was posted); 0: never */
    char what[WHAT_BYTES];
};

static struct {
    struct sight *now;   /* [pe]: the latest look */
    struct sight *prev;  /* [pe]: the last complete round's */
    bool have_prev;
    double round;        /* when the current round began; 0: none */
    double first;        /* when the first of the stable rounds began */
    int stable;          /* complete rounds in a row that matched the one before */
    uint64_t sum;        /* the watched variables' checksum at the last probe */
} deadlock_watch;

static void sighted(int pe, const uint64_t *block, double at)
{
    if (!deadlock_watch.now) {
        return;
    }
    struct sight *g = &deadlock_watch.now[pe];
    g->word = __atomic_load_n(&block[0], __ATOMIC_ACQUIRE);
    g->beat = __atomic_load_n(&block[1], __ATOMIC_ACQUIRE);
    g->wait = __atomic_load_n(&block[WAIT_WORD], __ATOMIC_ACQUIRE);
    g->moves = __atomic_load_n(&block[MOVES_WORD], __ATOMIC_ACQUIRE);
    memcpy(g->what, &block[WHAT_WORD], WHAT_BYTES);
    g->what[WHAT_BYTES - 1] = '\0';
    g->at = at;
}

static uint64_t checksum(const void *p, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    const volatile unsigned char *c = p;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ c[i]) * 1099511628211ull;
    }
    return h;
}

/* The probe of a wait that lasted an interval: say what this thread waits in. */
static void publish_wait(void)
{
    struct fsh_wait_now *w = fsh_progress_wait_now();
    if (!peer_watch.word || w->depth == 0) {
        return; /* a retry loop, not a wait */
    }
    uint64_t *moves = &peer_watch.word[MOVES_WORD];
    if (w->watch) {
        uint64_t sum = checksum(w->watch, w->watch_len);
        if (w->published && sum != deadlock_watch.sum) {
            __atomic_fetch_add(moves, 1, __ATOMIC_RELEASE);
        }
        deadlock_watch.sum = sum;
    }
    if (!w->published) {
        char *what = (char *)&peer_watch.word[WHAT_WORD];
        if (w->watch) {
            snprintf(what, WHAT_BYTES, "%s (for a change of its %zu-byte variable at %p)",
                     w->what, w->watch_len, w->watch);
        } else {
            snprintf(what, WHAT_BYTES, "%s", w->what);
        }
    }
    bool one = fsh_rt.thread_level == SHMEM_THREAD_SINGLE && !w->open_ended &&
               !__atomic_load_n(&helper, __ATOMIC_ACQUIRE);
    bool flight = fsh_progress_ops_in_flight(&probe_ctx.track);
    uint64_t word = W_IN | (one ? W_ONE : 0) | (flight ? W_FLIGHT : 0) |
                    (uint64_t)(uint32_t)(w->peer + 1) << 32;
    __atomic_store_n(&peer_watch.word[WAIT_WORD], word, __ATOMIC_RELEASE);
    w->published = true;
}

void fsh_live_helper_thread(void)
{
    __atomic_store_n(&helper, true, __ATOMIC_RELEASE);
}

/* progress.c: a wait publish_wait published has ended. */
static void wait_ended(void)
{
    if (!peer_watch.word) {
        return;
    }
    __atomic_store_n(&peer_watch.word[WAIT_WORD], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&peer_watch.word[MATES_WORD], 0, __ATOMIC_RELEASE); /* looked while waiting */
    /* Threads of a THREAD_MULTIPLE program end their waits at once: one add each. */
    __atomic_fetch_add(&peer_watch.word[MOVES_WORD], 1, __ATOMIC_RELEASE);
}

static bool stuck(const struct sight *g)
{
    unsigned state = (unsigned)(g->word & 0xff);
    return state != FSH_LIVE_INIT && (g->wait & W_IN) && (g->wait & W_ONE) &&
           !(g->wait & W_FLIGHT);
}

/* One PE's line of the report. */
static void describe(char *buf, size_t len, int pe, const struct sight *g)
{
    unsigned state = (unsigned)(g->word & 0xff);
    if (state == FSH_LIVE_EXIT) {
        snprintf(buf, len, "PE %d left main without shmem_finalize (exit %d) and its finalize at exit waits in %s",
                 pe, (int)((g->word >> 8) & 0xff), g->what);
    } else {
        snprintf(buf, len, "PE %d waits in %s", pe, g->what);
    }
}

static int deadlock_report(double t)
{
    char msg[sizeof(((struct fsh_error *)0)->msg)];
    size_t at =
        (size_t)snprintf(msg, sizeof(msg),
                         peer_watch.npes > 1 ? "deadlock: every PE waits in the library for "
                                               "another PE, and nothing moved for %.0f s:"
                                             : "deadlock: the job's only PE waits in the library "
                                               "for what no PE can do (nothing moved for %.0f s):",
                         t - deadlock_watch.first);
    bool exited = false, lock = false;
    for (int pe = 0; pe < peer_watch.npes; pe++) {
        char line[WHAT_BYTES + 128];
        describe(line, sizeof(line), pe, &deadlock_watch.now[pe]);
        exited |= (deadlock_watch.now[pe].word & 0xff) == FSH_LIVE_EXIT;
        lock |= strstr(deadlock_watch.now[pe].what, "shmem_set_lock") != NULL;
        if (peer_watch.npes > 2 && pe < 64) {
            FSH_ERROR("deadlock: %s", line);
        }
        if (at < sizeof(msg)) {
            at += (size_t)snprintf(msg + at, sizeof(msg) - at, "%s %s", pe ? ";" : "", line);
        }
    }
    if (at >= sizeof(msg)) {
        snprintf(msg + sizeof(msg) - 20, 20, " ... (listed above)");
    }
    const char *fix = exited ? "end every PE with shmem_finalize (a PE that returns from main without it finalizes at exit, and waits there for the others), or call shmem_global_exit to end the job"
                      : lock ? "every shmem_set_lock needs a shmem_clear_lock by the holder before it finalizes; and every PE must make the same collective calls"
                             : "each PE waits for another to act: make every PE reach the same collective calls in the same order, and set every flag a PE waits for before that PE's wait needs it";
    return fsh_err(-EDEADLK, fix, "%s", msg);
}

/* PE 0's look at every PE, once per probe (see above). 0, or -EDEADLK (recorded). */
static int deadlock_check(const char *what, double t)
{
    if (!deadlock_watch.now || fsh_rt.pe != 0 || fsh_progress_wait_now()->depth == 0) {
        return 0;
    }
    sighted(fsh_rt.pe, peer_watch.word, t);
    if (!stuck(&deadlock_watch.now[fsh_rt.pe])) {
        deadlock_watch.round = 0;
        deadlock_watch.stable = 0;
        return 0;
    }
    if (deadlock_watch.round == 0) {
        deadlock_watch.round = t;
    }
    for (int pe = 0; pe < peer_watch.npes; pe++) {
        if (pe != fsh_rt.pe) {
            const uint64_t *b = peer_watch.same_node[pe]
                                    ? fsh_local_addr(pe, FSH_SEG_HEAP, peer_watch.word_off)
                                    : NULL;
            if (b) {
                sighted(pe, b, t);
            } else if (deadlock_watch.now[pe].at < deadlock_watch.round) {
                /* Collects the answer of the read in flight (sighted), posts the next. */
                int rc = probe_one(pe, false, what, t);
                if (rc != 0) {
                    return rc;
                }
                if (deadlock_watch.now[pe].at < deadlock_watch.round) {
                    continue;
                }
            }
        }
        if (!stuck(&deadlock_watch.now[pe])) {
            deadlock_watch.round = 0; /* that PE acts (or may): no deadlock now */
            deadlock_watch.stable = 0;
            deadlock_watch.have_prev = false;
            return 0;
        }
    }
    bool complete = true;
    for (int pe = 0; pe < peer_watch.npes && complete; pe++) {
        complete = deadlock_watch.now[pe].at >= deadlock_watch.round;
    }
    if (!complete) {
        return 0;
    }
    bool same = deadlock_watch.have_prev;
    for (int pe = 0; pe < peer_watch.npes && same; pe++) {
        const struct sight *a = &deadlock_watch.prev[pe], *b = &deadlock_watch.now[pe];
        same = a->wait == b->wait && a->moves == b->moves && (pe == fsh_rt.pe || a->beat != b->beat);
    }
    if (!same) {
        deadlock_watch.stable = 0;
        deadlock_watch.first = deadlock_watch.round;
    } else {
        deadlock_watch.stable++;
    }
    memcpy(deadlock_watch.prev, deadlock_watch.now, sizeof(struct sight) * (size_t)peer_watch.npes);
    deadlock_watch.have_prev = true;
    deadlock_watch.round = t;
    return deadlock_watch.stable >= STABLE_ROUNDS ? deadlock_report(t) : 0;
}

static int probe_one(int pe, bool arrival, const char *what, double t)
{
    if (pe < 0 || pe >= peer_watch.npes || pe == fsh_rt.pe) {
        return 0;
    }
    if (!peer_watch.same_node[pe]) {
        return probe_remote(pe, arrival, what, t);
    }
    /* A PE of this node whose heap is not mapped (FABSHMEM_INTRANODE=fabric): its process
     * first (gone or stopped is named without a fabric read), then its word over the fabric,
     * as for a PE elsewhere. */
    int rc = probe_local(pe, arrival, what, t);
    if (rc != 0 || fsh_local_addr(pe, FSH_SEG_HEAP, peer_watch.word_off)) {
        return rc;
    }
    if (peer_watch.stopped_at[pe] != 0) {
        /* Stopped, as its process says: it answers nothing, and that is no evidence of a cut
         * path; an answer is due only from its next run on. */
        return 0;
    }
    return probe_remote(pe, arrival, what, t);
}

static int probe(const int *pes, int npes, bool arrival, const char *what)
{
    fsh_progress_lock();
    if (peer_watch.busy) {
        fsh_progress_unlock();
        return 0;
    }
    peer_watch.busy = true;
    double t = fsh_progress_now();
    /* The completions of these probes' own reads are no sign that the fabric moves (the
     * node-mates' answers would otherwise reset the count of a silent PE at every ask). */
    uint64_t events = fsh_progress_events(), own = 0;
    for (int i = 0; i < SLOTS; i++) {
        struct slot *sl = &peer_watch.slots[i];
        if (sl->pe >= 0 && !sl->counted && fsh_progress_track_done(&sl->track)) {
            sl->counted = true;
            own++;
        }
    }
    if (events - peer_watch.events > own) {
        peer_watch.quiet_since = t;
    }
    peer_watch.events = events;
    int rc = 0;
    for (int i = 0; i < npes && rc == 0; i++) {
        rc = probe_one(pes[i], arrival, what, t);
    }
    if (npes == 0) {
        /* Nobody named: every local PE, and the remote ones in turn. */
        for (int pe = 0; pe < peer_watch.npes && rc == 0; pe++) {
            if (peer_watch.same_node[pe] || slot_of(pe, -1)) {
                rc = probe_one(pe, arrival, what, t);
            }
        }
        for (int k = 0; k < peer_watch.npes && rc == 0 && slot_of(-1, -1); k++) {
            int pe = peer_watch.next_remote;
            peer_watch.next_remote = (peer_watch.next_remote + 1) % peer_watch.npes;
            if (!peer_watch.same_node[pe] && !slot_of(pe, -1)) {
                rc = probe_one(pe, arrival, what, t);
            }
        }
    }
    if (rc == 0) {
        look_at_mates();
        publish_wait();
        rc = deadlock_check(what, t);
    }
    peer_watch.busy = false;
    fsh_progress_unlock();
    return rc;
}

size_t fsh_live_heap_bytes(void)
{
    return fsh_heap_rounded(sizeof(uint64_t) * BLOCK_WORDS * (1 + SLOTS));
}

int fsh_live_init(const int *node_of, double interval, bool proc_remote)
{
    /* Written so that NaN fails too. */
    if (!(interval == 0 || (interval >= 0.1 && interval <= 3600))) {
        return fsh_err(-EINVAL, "use seconds between 0.1 and 3600 (0: no probes), e.g. FABSHMEM_PROBE_INTERVAL=2",
                       "FABSHMEM_PROBE_INTERVAL=%g is out of range", interval);
    }
    memset(&peer_watch, 0, sizeof(peer_watch));
    memset(&probe_ctx, 0, sizeof(probe_ctx));
    peer_watch.npes = fsh_rt.npes;
    peer_watch.interval = interval;
    size_t bytes = fsh_live_heap_bytes();
    peer_watch.word = fsh_heap_alloc(bytes, 64);
    peer_watch.same_node = calloc((size_t)peer_watch.npes, sizeof(bool));
    peer_watch.stopped_at = calloc((size_t)peer_watch.npes, sizeof(double));
    peer_watch.stopped_seen = calloc((size_t)peer_watch.npes, sizeof(double));
    peer_watch.stop_warn = calloc((size_t)peer_watch.npes, sizeof(double));
    peer_watch.still_warn = calloc((size_t)peer_watch.npes, sizeof(double));
    peer_watch.seen = calloc((size_t)peer_watch.npes, sizeof(uint64_t));
    peer_watch.beat = calloc((size_t)peer_watch.npes, sizeof(uint64_t));
    peer_watch.beat_at = calloc((size_t)peer_watch.npes, sizeof(double));
    peer_watch.answered = calloc((size_t)peer_watch.npes, sizeof(double));
    peer_watch.answered_way = calloc((size_t)peer_watch.npes, sizeof(int));
    peer_watch.node_of = calloc((size_t)peer_watch.npes, sizeof(int));
    peer_watch.mates = calloc((size_t)peer_watch.npes, sizeof(uint64_t));
    peer_watch.mates_at = calloc((size_t)peer_watch.npes, sizeof(double));
    peer_watch.proc_remote = proc_remote;
    memset(&deadlock_watch, 0, sizeof(deadlock_watch));
    if (fsh_rt.pe == 0) { /* the one PE that looks for deadlocks */
        deadlock_watch.now = calloc((size_t)peer_watch.npes, sizeof(struct sight));
        deadlock_watch.prev = calloc((size_t)peer_watch.npes, sizeof(struct sight));
    }
    if (!peer_watch.word || !peer_watch.same_node || !peer_watch.stopped_at ||
        !peer_watch.stopped_seen || !peer_watch.stop_warn || !peer_watch.still_warn ||
        !peer_watch.seen || !peer_watch.beat || !peer_watch.beat_at || !peer_watch.answered ||
        !peer_watch.answered_way || !peer_watch.node_of || !peer_watch.mates ||
        !peer_watch.mates_at ||
        (fsh_rt.pe == 0 && (!deadlock_watch.now || !deadlock_watch.prev))) {
        return fsh_err(-ENOMEM, "raise SHMEM_SYMMETRIC_SIZE",
                       "no room for the liveness word of %d PEs", peer_watch.npes);
    }
    enum fsh_seg seg;
    if (fsh_mr_lookup(peer_watch.word, bytes, &seg, &peer_watch.word_off) != 0 ||
        seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "the liveness word is not in the registered heap");
    }
    peer_watch.dst = peer_watch.word + BLOCK_WORDS;
    fsh_progress_set_heartbeat(peer_watch.word + 1);
    for (int pe = 0; pe < peer_watch.npes; pe++) {
        peer_watch.same_node[pe] = node_of[pe] == node_of[fsh_rt.pe];
        peer_watch.node_of[pe] = node_of[pe];
    }
    peer_watch.my_lrank = lrank_of(fsh_rt.pe);
    for (int i = 0; i < SLOTS; i++) {
        peer_watch.slots[i].pe = -1;
    }
    peer_watch.on = interval > 0;
    if (peer_watch.on) {
        fsh_progress_set_probe(probe, interval);
        fsh_progress_set_wait_end(wait_ended);
    }
    return 0;
}

void fsh_live_stop(void)
{
    fsh_progress_set_probe(NULL, 0);
    for (int i = 0; i < SLOTS; i++) {
        if (peer_watch.slots[i].pe >= 0) {
            (void)fsh_progress_wait_track(&peer_watch.slots[i].track, "finalize: a liveness probe");
            peer_watch.slots[i].pe = -1;
        }
    }
}

void fsh_live_fini(void)
{
    fsh_progress_set_probe(NULL, 0);
    fsh_progress_set_wait_end(NULL);
    free(deadlock_watch.now);
    free(deadlock_watch.prev);
    memset(&deadlock_watch, 0, sizeof(deadlock_watch));
    fsh_progress_set_heartbeat(NULL);
    free(peer_watch.beat);
    free(peer_watch.beat_at);
    free(peer_watch.answered);
    free(peer_watch.answered_way);
    free(peer_watch.same_node);
    free(peer_watch.node_of);
    free(peer_watch.mates);
    free(peer_watch.mates_at);
    free(peer_watch.stopped_at);
    free(peer_watch.stopped_seen);
    free(peer_watch.stop_warn);
    free(peer_watch.still_warn);
    free(peer_watch.seen);
    memset(&peer_watch, 0, sizeof(peer_watch));
}
