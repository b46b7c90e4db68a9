/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.h: the completion queue, the per-operation records, the engine lock, and the one
 * wait loop.
 *
 * Every fabric operation carries a struct fsh_op from a fixed pool; its completion bumps the
 * counters of the tracks it belongs to (a context's, and optionally a blocking call's own) and
 * copies a fetched result out. Remote events (immediate data of a write aimed at us) are
 * dispatched by the kind in their top four bits to the handler registered for it. Every
 * blocking wait in the runtime is fsh_progress_wait*(): it polls, yields when oversubscribed,
 * has the PEs it waits for probed (live.c) every probe interval, so a dead or unreachable
 * peer ends it (a stopped one is warned about), and ends with a report after the opt-in
 * timeout.
 *
 * Threads: when the program asked for SHMEM_THREAD_MULTIPLE or the progress thread runs, all
 * engine state (CQ, endpoint, pool, tracks, remote-event state) is guarded by one recursive
 * lock, taken with fsh_progress_lock(); otherwise the lock costs one predictable branch. The
 * whole rule for it and the lanes' locks is "The lock contract" below.
 *
 * Where it is implemented: progress.c (the records, the CQ, the waits), lane.c (fsh_lane_*),
 * bounce.c (fsh_progress_bounce_*), poller.c (the progress thread, fsh_progress_serves),
 * guard.c/guard.h (the locks and their checks); engine.h is what progress.c and lane.c share.
 */
#ifndef FSH_PROGRESS_H
#define FSH_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guard.h" /* the locks' checks (enum fsh_lock_expect) */
#include "nap.h"   /* fsh_cpu_relax, fsh_relax_count */

/* Counts of operations posted and completed; quiet waits for equality. Puts counted by the
 * write counter (no record) leave a mark instead: the engine's count of writes posted, taken
 * right after the last of them; the track is done once every write up to the mark completed. */
struct fsh_op_track {
    uint64_t posted;
    uint64_t completed;
    uint64_t wmark;
};

struct fsh_mr_tmp; /* mr.h */

enum fsh_op_kind { FSH_OP_PUT = 1, FSH_OP_GET, FSH_OP_PUT_IMM, FSH_OP_ATOMIC };

struct fsh_op {
    void *fi[8];                 /* provider scratch space (FI_CONTEXT2 mode: libfabric's
                                  * struct fi_context2, which progress.c checks fits); stays
                                  * first, and is opaque above the transport */
    struct fsh_op_track *track;  /* the context's track */
    struct fsh_op_track *sync;   /* a blocking call's own track, or NULL */
    struct fsh_mr_tmp *tmp_mr;   /* temporary registration (mr.h), released on completion */
    void *bounce;                /* the bounce slot it sends from, given back on completion */
    void *copy_dst;              /* on completion copy copy_len bytes from copy_src here */
    const void *copy_src;
    size_t copy_len;
    size_t len;
    int kind;                    /* enum fsh_op_kind, for error reports */
    int pe;
    unsigned way;                /* the way to pe it went on (fabric.h), for a rail's failure */
    bool orphan;                 /* re-posted on another way after its own died: whatever the
                                  * provider still reports of it only frees the record */
    struct fsh_op *next_free;
};

/* Immediate data (32 bits; EFA carries 4 bytes): kind in bits 31..28, the rest the kind's.
 * Where the provider carries 8 bytes (fsh_fabric_attr()->cq_data_size; shm, tcp), a kind may
 * use bits 63..32 too (only where it has them: the sender checks). */
#define FSH_IMM_KIND_SHIFT 28
#define FSH_IMM_PAYLOAD_MASK ((1u << FSH_IMM_KIND_SHIFT) - 1)
enum fsh_imm_kind {
    FSH_IMM_COLL = 1,     /* collectives' counted writes and signals (notify.c) */
    FSH_IMM_SIG_DESC = 2, /* put-with-signal: descriptor landed (signal.c) */
    FSH_IMM_SIG_DATA = 3, /* put-with-signal: one data piece landed (signal.c) */
    FSH_IMM_DEV = 4,      /* device heap staging: a request landed in our inbox (devmem.c) */
    FSH_IMM_LEASE = 5,    /* a claim or release of inbox space (lease.c) */
    FSH_IMM_AMO = 6,      /* an AMO request landed in our inbox (amo.c, no provider atomics) */
    FSH_IMM_AMO_REPLY = 7, /* the target applied our AMO request: its old value landed */
    FSH_IMM_ARRIVE = 8,   /* a plain write landed, counted for quiet (arrive.c, count mode) */
    FSH_IMM_SIG_WIDE = 9, /* put-with-signal whose signal is in 8 bytes of immediate data */
    FSH_IMM_NKINDS = 16
};
/* payload: bits 27..0; high: bits 63..32. */
typedef void (*fsh_imm_handler)(uint32_t payload, uint32_t high);

struct fsh_progress_config {
    size_t depth;          /* operation records */
    bool yield;            /* waits yield the CPU between polls */
    double spin;           /* seconds a wait polls without progress before it naps; 0: never */
    long poll_gap_ns;      /* FABSHMEM_POLL_GAP_NS: pause between a wait's empty polls; 0: off */
    double timeout;        /* internal waits, seconds; 0: none */
    double user_timeout;   /* user waits, seconds; 0: none */
    bool chaos_delay;      /* hold completions and remote events, deliver them shuffled */
    uint64_t seed;
};

int fsh_progress_init(const struct fsh_progress_config *cfg);
void fsh_progress_fini(void);
int fsh_progress_register_imm(enum fsh_imm_kind kind, fsh_imm_handler fn);
/* Called on every poll, before the CQ is read (the transport releases held operations). */
void fsh_progress_set_poll_hook(void (*fn)(void));
/* Operations a higher layer holds back, posted at the end of every poll (after the events were
 * dispatched), so anybody who waits makes them move: a session's batched puts (rma_session.c), and
 * what amo.c's handlers queued (a handler never posts): the answers to AMO requests, the asks
 * for inboxes back and the give-backs. One hook per holder;
 * fn returns 0 or -errno (recorded), which the poll returns; NULL removes it. A hook must not
 * re-enter itself: a post that polls (queue full) runs every hook again. */
enum fsh_post_hook { FSH_POST_BATCHES, FSH_POST_ANSWERS, FSH_POST_NHOOKS };
void fsh_progress_set_post_hook(enum fsh_post_hook which, int (*fn)(void));

/* ------------------------------------------------------------------ the lock contract
 *
 * The one rule for the runtime's locks (docs/architecture.md, "Locks", says the same with
 * every site). Two kinds, both recursive pthread mutexes:
 *
 * - The engine lock (fsh_progress_lock/unlock). Guards the engine: the rails' CQs and
 *   endpoints as the engine uses them, the operation pool and its free list, the tracks of
 *   records posted through the engine, the bounce slots, the chaos queues, the open lanes'
 *   list, the remote-event state of every handler, and what modules say is "under the engine
 *   lock" (rma_ctx.c's context slots and lane budget; rma_session.c's batches; signal.c's
 *   inboxes; amo.c's inbox state; arrive.c's engine-sender lists; devmem.c's device AMOs;
 *   lease.c's claims). It is a real mutex only after fsh_progress_enable_locking()
 *   (SHMEM_THREAD_MULTIPLE, or the progress thread), called while nobody holds it; before, a
 *   lock is one branch.
 * - A lane lock (fsh_lane_lock/unlock, one per lane). Guards that lane's endpoints and CQs,
 *   records, scratch, keep space and bounce slots, the tracks of its records (ctx->ltrack),
 *   and arrive.c's per-lane sender state. Recursive (a holder may take it again), though no
 *   poll runs under a second take: a post that finds the provider's queue full lets it go
 *   while it polls (fsh_lane_poll).
 *
 * The order: engine before lane. A thread holding a lane lock never blocks on the engine lock;
 * every path that may block on it (a wait, the liveness probe, fsh_progress_backoff, a wait for
 * a free record) first lets the lane lock go, held once: so no wait (fsh_progress_wait*,
 * fsh_lane_wait*) starts with a lane lock held, and fsh_xport_post_lane is called with it held
 * exactly once. Nor does the engine's poll run under a lane lock (fsh_lane_poll lets the lane
 * go first, then tries the engine): what it runs may post on the engine's path (post hooks,
 * chaos releases, posts again after a way died), and such a post may back off. A thread holding
 * the engine lock may block on a lane lock outside polls and reports (fsh_rma_quiet_all's lane
 * quiets); what runs inside a poll or a wait's report (lane_poll, records, lane_available,
 * lane_idle_to) takes a lane lock by trylock only: a failed try means "look again later". A
 * thread never blocks on a second lane's lock while it holds one.
 *
 *   holder          may take, blocking                         only by trylock
 *   nothing         the engine lock; any lane lock
 *   the engine      the engine again; a lane (not in a poll)   a lane, inside a poll
 *   a lane          that lane again                            nothing (no engine poll)
 *
 * Callbacks and the lock held when they run:
 *   immediate-data handlers (fsh_progress_register_imm), the poll hook, the post hooks, the
 *   heartbeat: the engine lock (they run inside an engine poll; a handler never posts, a post
 *   hook never re-enters itself).
 *   the way hook (fsh_progress_set_way_hook): l NULL, the engine lock; l set, that lane's lock
 *   (and the engine's too when the progress thread or a quiet of all contexts polls the lane).
 *   the probe (fsh_progress_set_probe): no lane lock; it takes the engine lock itself.
 *   wait predicates (fsh_done_fn): the caller's locks, which are never a lane's.
 *   rma.c's quiet hook: no lock.
 *
 * Checked in --enable-debug builds (FSH_DEBUG_BUILD; release builds compile none of it): each
 * lock knows its owner thread, depth and the site that took it; the engine's blocking lock fails
 * when the thread holds a lane lock, a lane's when it holds another lane's; functions that
 * assume a lock held (or no lane lock held) say so with the FSH_ASSERT_* below at entry. A
 * broken rule ends the process (abort) with two lines naming the lock, the site (file:line)
 * and the rule. The engine lock is tracked by its logical holder even before locking is real,
 * so single-threaded runs check the same contract. */

/* Make the engine lock real (before a second thread may enter the library). */
void fsh_progress_enable_locking(void);
struct fsh_lane;
#ifdef FSH_DEBUG_BUILD
void fsh_progress_lock_at(const char *file, int line);
void fsh_progress_unlock_at(const char *file, int line);
void fsh_lane_lock_at(struct fsh_lane *l, const char *file, int line);
void fsh_lane_unlock_at(struct fsh_lane *l, const char *file, int line);
/* enum fsh_lock_expect: guard.h */
void fsh_lock_expect(enum fsh_lock_expect what, const struct fsh_lane *l, const char *file,
                     int line, const char *func);
#define fsh_progress_lock() fsh_progress_lock_at(__FILE__, __LINE__)
#define fsh_progress_unlock() fsh_progress_unlock_at(__FILE__, __LINE__)
#define fsh_lane_lock(l) fsh_lane_lock_at((l), __FILE__, __LINE__)
#define fsh_lane_unlock(l) fsh_lane_unlock_at((l), __FILE__, __LINE__)
/* This thread holds the engine lock. */
#define FSH_ASSERT_ENGINE_HELD() \
    fsh_lock_expect(FSH_EXPECT_ENGINE, NULL, __FILE__, __LINE__, __func__)
/* This thread holds lane l's lock (at least once; _ONCE: exactly once). */
#define FSH_ASSERT_LANE_HELD(l) fsh_lock_expect(FSH_EXPECT_LANE, (l), __FILE__, __LINE__, __func__)
#define FSH_ASSERT_LANE_ONCE(l) \
    fsh_lock_expect(FSH_EXPECT_LANE_ONCE, (l), __FILE__, __LINE__, __func__)
/* This thread holds no lane lock (it may block on the engine lock). */
#define FSH_ASSERT_NO_LANE_HELD() \
    fsh_lock_expect(FSH_EXPECT_NO_LANE, NULL, __FILE__, __LINE__, __func__)
#else
void fsh_progress_lock(void);
void fsh_progress_unlock(void);
void fsh_lane_lock(struct fsh_lane *l);
void fsh_lane_unlock(struct fsh_lane *l);
#define FSH_ASSERT_ENGINE_HELD() ((void)0)
#define FSH_ASSERT_LANE_HELD(l) ((void)0)
#define FSH_ASSERT_LANE_ONCE(l) ((void)0)
#define FSH_ASSERT_NO_LANE_HELD() ((void)0)
#endif
/* The progress thread: polls, and sleeps interval_us when it found nothing. */
int fsh_progress_thread_start(long interval_us);
void fsh_progress_thread_stop(void);

/* An operation record; polls while the pool is empty. NULL (error recorded) on timeout or a
 * fabric error. Caller holds the engine lock. */
struct fsh_op *fsh_progress_op_get(int kind, int pe, size_t len);
/* Give back a record whose operation was never counted as posted (closes its temporary
 * registration, if any). */
void fsh_progress_op_put(struct fsh_op *op);
/* Complete a record whose completion is not a CQ entry of its own (amo.c: an AMO applied by
 * its target completes when the target's answer arrives): copies its result, counts it
 * completed on its tracks, gives it back. Caller holds the engine lock. */
void fsh_progress_op_complete(struct fsh_op *op);
/* The operation was accepted: count it as posted on its tracks (op), or for a counted write
 * (op NULL) mark the track counted. write: it is a write (the write counter will count it).
 * Caller holds the engine lock; for a lane's record (write false: no counter sees it), the
 * lane's. */
void fsh_progress_op_posted(struct fsh_op *op, struct fsh_op_track *counted, bool write);
/* An operation counted as posted that will never complete (posting it failed later): count it
 * completed without a result and give the record back (op may be NULL: a counted write), so
 * waits end with the recorded error. */
void fsh_progress_op_unissued(struct fsh_op *op, bool write);
/* Bounce slots: registered buffers a blocking put above the inject size is copied into, so
 * that it returns as soon as the copy is made, not after its completion (rma.c). n slots of
 * size bytes (both > 0), registered on every rail; 0 or -errno. A slot is taken under the
 * engine lock (NULL: len above the size, none free, or no slots), handed to fsh_rma_post() as
 * a write's source, and given back when that operation's record is (fsh_progress_op_put), or
 * by fsh_rma_post() when it got no record. */
int fsh_progress_bounce_init(size_t size, size_t n);
void fsh_progress_bounce_fini(void);
void *fsh_progress_bounce_take(size_t len);
void fsh_progress_bounce_give(void *slot);
/* Is p a bounce slot (then its descriptor on rail `rail` is bounce_desc's)? */
bool fsh_progress_bounce_owns(const void *p);
void *fsh_progress_bounce_desc(int rail);
/* Injected writes may go without a completion entry and a record, counted by the fabric's
 * rails' write counters (fsh_fabric_counts_writes). Off: every operation has its record. */
bool fsh_progress_counts_writes(void);
/* Stop offering it (SHMEM_THREAD_MULTIPLE: a counter drains only when no thread posts, so a
 * quiet beside a thread that keeps posting could wait long). */
void fsh_progress_stop_counting_writes(void);
/* The engine's random stream (FABSHMEM_CHAOS choices). Caller holds the engine lock. */
uint64_t fsh_progress_random(void);
/* The record's index in the pool (0 .. depth-1), for per-operation side buffers. */
size_t fsh_progress_op_index(const struct fsh_op *op);
/* Record i (0 <= i < fsh_progress_depth()): in flight when its kind is not 0. */
struct fsh_op *fsh_progress_op_at(size_t i);
size_t fsh_progress_depth(void);

/* Read the CQ once and dispatch. >= 0 events handled, or -errno after a fabric error (the
 * error is recorded with the peer and the operation). Takes the engine lock. */
int fsh_progress_poll(void);

/* Poll until done(arg) is true. what/peer name the wait in the reports (peer -1: none; then
 * the peers of the operations in flight are probed, or every PE).
 * _wait uses the internal timeout (FABSHMEM_TIMEOUT), _wait_user the user one; _wait_arrival
 * is an internal wait for something only peer itself sends (a collective's arrival), so a
 * peer found in shmem_finalize or exit ends it too. */
typedef bool (*fsh_done_fn)(const void *arg);
int fsh_progress_wait(fsh_done_fn done, const void *arg, const char *what, int peer);
int fsh_progress_wait_user(fsh_done_fn done, const void *arg, const char *what, int peer);
int fsh_progress_wait_arrival(fsh_done_fn done, const void *arg, const char *what, int peer);

/* The liveness probe (live.c registers it): called by a wait that has lasted interval
 * seconds, and every interval after, with the PEs it waits for (npes 0: every PE) and whether
 * the wait needs them to act (arrival). 0, or -errno (recorded) to end the wait. */
/* A failed operation on a way of several to its PE (multi-rail): the hook takes the way out of
 * use and posts again what l (a lane, its lock held; NULL: the engine, its lock held) had in
 * flight on it, the failed operation included (it becomes an orphan); 0 when that was done,
 * else the error to report. why describes the failure. With pe < 0 it only posts again what
 * was in flight on ways that died since (a poll calls it so when fsh_fabric_deaths() moved).
 * Every lane record gets lane_keep bytes of the hook's own (fsh_lane_keep), lanes already open
 * included: 0 or -errno (recorded). */
struct fsh_lane;
typedef int (*fsh_way_fn)(struct fsh_lane *l, int pe, unsigned way, const char *why);
int fsh_progress_set_way_hook(fsh_way_fn fn, size_t lane_keep);
typedef int (*fsh_probe_fn)(const int *pes, int npes, bool arrival, const char *what);
void fsh_progress_set_probe(fsh_probe_fn fn, double interval);
/* A word every poll of this process raises (live.c publishes it: peers that read it see
 * whether this PE's progress engine still runs). NULL: none. */
void fsh_progress_set_heartbeat(uint64_t *word);
/* The outermost wait the calling thread is in, for live.c's deadlock check: what and peer as
 * the wait was given them, the memory a user wait compares (NULL: none), and whether the probe
 * published it in the liveness block (then the wait's end calls the end hook, which says this
 * PE moved on). depth 0: the thread waits in nothing. */
struct fsh_wait_now {
    int depth;
    const char *what;
    int peer;
    const void *watch;
    size_t watch_len;
    bool open_ended; /* may end with no PE acting (device memory a kernel may write) */
    bool published;
};
struct fsh_wait_now *fsh_progress_wait_now(void);
void fsh_progress_set_wait_end(void (*fn)(void));
/* fsh_progress_wait_user for a wait whose end needs watch[0..len) to change (wait.c); watch
 * NULL: variables that may change with no PE acting (device memory a kernel may write), so
 * the wait is never taken for part of a deadlock. */
int fsh_progress_wait_watched(fsh_done_fn done, const void *arg, const char *what,
                              const void *watch, size_t len);
/* Could an operation of this PE still complete and so end a wait, this PE's or a peer's: a
 * write, an atomic, a notification or a read in flight (the engine's or a lane's; a lane busy
 * elsewhere counts as yes), counted writes not drained, or completions held back by chaos?
 * Operations whose context track is `ignore` are not counted (the liveness probes' reads, which
 * end no wait). Takes the engine lock. */
bool fsh_progress_ops_in_flight(const struct fsh_op_track *ignore);
/* Completion-queue entries read so far (call with the engine lock held). */
uint64_t fsh_progress_events(void);
/* CLOCK_MONOTONIC in seconds: the clock of every wait, probe and time limit. */
double fsh_progress_now(void);
/* This PE answers fabric reads while the program computes: the progress thread runs, or the
 * provider progresses by itself. */
bool fsh_progress_serves(void);
/* Poll until every operation of the track completed. */
int fsh_progress_wait_track(const struct fsh_op_track *t, const char *what);
bool fsh_progress_track_done(const struct fsh_op_track *t);
/* Has t no operation in flight to a PE marked in pes[] (indexed by world PE)? */
bool fsh_progress_track_idle_to(const struct fsh_op_track *t, const bool *pes);

/* Lanes: a context's own endpoints and CQs (one of each on every rail), with its own
 * operation records and lock, so that threads posting on contexts of their own share no lock
 * (rma_ctx.c decides which contexts get one, rma.c which operations take it). Nobody aims at a lane
 * (peers know the engine's endpoints), so its CQs hold its own completions only. Its waits poll it, and the engine
 * when no other thread holds the engine's lock (trylock), probe peers and time out as every
 * wait does. open: 0 or -errno (recorded). */
struct fid_ep;
int fsh_lane_open(struct fsh_lane **out);
void fsh_lane_close(struct fsh_lane *l);
struct fid_ep *fsh_lane_ep(const struct fsh_lane *l, int rail);
/* The lane hook's bytes for record op (fsh_progress_set_way_hook's lane_keep); its records. */
void *fsh_lane_keep(struct fsh_lane *l, const struct fsh_op *op);
size_t fsh_lane_depth(const struct fsh_lane *l);
struct fsh_op *fsh_lane_op_at(struct fsh_lane *l, size_t i);
/* A record of the lane (caller holds its lock; may drop it to wait); NULL (recorded) on
 * timeout or error. Once the provider accepted it, fsh_progress_op_posted(op, NULL, false)
 * counts it on its tracks; unposted: the post failed, the record goes back. */
struct fsh_op *fsh_lane_op_get(struct fsh_lane *l, int kind, int pe, size_t len);
/* FSH_LANE_SCRATCH bytes of plain (unregistered) memory that belong to the lane's record op
 * while it is in flight: an atomic's operand, compare value and result (amo.c). */
#define FSH_LANE_SCRATCH 32
void *fsh_lane_scratch(struct fsh_lane *l, const struct fsh_op *op);
void fsh_lane_op_unposted(struct fsh_lane *l, struct fsh_op *op);
/* The lane's own bounce slots (the engine's size, at most FSH_LANE_BOUNCE_SLOTS of them,
 * made at the first take), under the lane's lock: NULL when len is above the size, none is
 * free, or the engine has none. A slot handed to a lane's post belongs to its record, which
 * gives it back on completion (or hands it to the record that posts it again, when its way
 * died); give: back without a record. desc: the slots' descriptor on rail. */
#define FSH_LANE_BOUNCE_SLOTS 16
void *fsh_lane_bounce_take(struct fsh_lane *l, size_t len);
void fsh_lane_bounce_give(struct fsh_lane *l, void *slot);
bool fsh_lane_bounce_owns(const struct fsh_lane *l, const void *p);
void *fsh_lane_bounce_desc(const struct fsh_lane *l, int rail);
/* A lane's post found the provider's queue full (xport.c): read the lane's CQ, and the
 * engine's (see above), once: >= 0 events, or -errno. Called with the lane's lock held exactly
 * once, which it lets go for the poll and takes again: the engine's poll posts (post hooks,
 * chaos releases, posts again after a way died), and those posts may back off. */
int fsh_lane_poll(struct fsh_lane *l);
/* Wait until every operation of t (all posted on l) completed. */
int fsh_lane_wait_track(struct fsh_lane *l, const struct fsh_op_track *t, const char *what);
/* Wait until t has no operation on l in flight to a PE marked in pes[]. */
int fsh_lane_wait_idle_to(struct fsh_lane *l, const struct fsh_op_track *t, const bool *pes,
                          const char *what, int peer);

/* Called by busy loops that are not waits (EAGAIN retries): yields when oversubscribed, probes
 * peer like a wait, and returns -ETIMEDOUT (recorded) once FABSHMEM_TIMEOUT has passed since
 * the loop's first call (clock zeroed before it). */
struct fsh_wait_clock {
    double start, probed;
    long preempted; /* the thread's involuntary context switches when the wait began */
    bool nap;       /* spun FABSHMEM_SPIN_US without progress, preempted: sleep between polls */
};
int fsh_progress_backoff(struct fsh_wait_clock *c, const char *what, int peer);

#endif
