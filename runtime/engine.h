/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine.h: what the progress engine (progress.c) and the lanes (lane.c) share, and no other
 * module calls.
 *
 * The two files are one unit cut in two along its seam: the engine owns the operation pool,
 * the engine's CQs and lock, the waits and the progress thread; the lanes own their endpoints,
 * CQs, records and locks. A lane's completions and errors are judged by the engine's rules
 * (finish, op_error, the way hook's sweep), its waits are the engine's wait loop polling the
 * lane, and the engine's reports, in-flight test and progress thread look at the open lanes:
 * those calls, both ways, are declared here. The locks each call assumes are said with it
 * (progress.h, "The lock contract").
 */
#ifndef FSH_ENGINE_H
#define FSH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct fsh_op;
struct fsh_op_track;
struct fsh_lane;
struct fsh_guard;
struct fid_cq;
struct fi_cq_err_entry;

/* ---- progress.c, for lane.c (and poller.c, the progress thread) */

/* A fabric error was seen: every later wait fails at once. fail: say so. */
bool fsh_engine_failed(void);
void fsh_engine_fail(void);
/* The way hook's bytes per lane record (fsh_progress_set_way_hook's lane_keep). */
size_t fsh_engine_lane_keep(void);
/* The liveness probe's interval, seconds (0: none): the progress thread sleeps well below it. */
double fsh_engine_probe_interval(void);
/* Poll the engine when no other thread holds its lock (trylock), with no lane lock held: >= 0
 * events (0: busy), or -errno. */
int fsh_engine_poll_try(void);
/* A record taken from a free list, made ready for an operation of kind to pe. */
void fsh_engine_op_init(struct fsh_op *op, int kind, int pe, size_t len);
/* The operation is done: its result copied out, its tracks counted. */
void fsh_engine_finish(struct fsh_op *op);
/* Does provider error err say the way to the peer failed (a connection or a link), not the
 * operation? (engine_error.c) */
bool fsh_engine_transport_failed(int err);
/* Read the error entry at the head of cq into e, and the provider's words for it into buf
 * (*prov): fi_cq_readerr's result, < 0 when there was none. */
ssize_t fsh_engine_read_error(struct fid_cq *cq, struct fi_cq_err_entry *e, char *buf, size_t len,
                              const char **prov);
/* The error entry e of op, a record of lane l (its lock held) or of the engine (l NULL, the
 * engine lock held): 0 when the way hook posted it again, else the error (recorded). */
int fsh_engine_op_error(struct fsh_lane *l, struct fsh_op *op, const struct fi_cq_err_entry *e,
                        const char *prov);
/* A way died since l (NULL: the engine) last looked (*seen): the way hook posts again what l
 * had in flight there. 0, or the error to report. */
int fsh_engine_sweep(struct fsh_lane *l, unsigned *seen);
/* The wait of a lane (no lane lock held): polls l and the engine until done(arg), probes and
 * times out (FABSHMEM_TIMEOUT) as every wait does. */
int fsh_engine_wait(struct fsh_lane *l, bool (*done)(const void *), const void *arg,
                    const char *what, int peer);

/* ---- lane.c, for progress.c */

/* The lane's records for a wait's report, its lock taken by trylock: NULL (and 0, 0) when its
 * owner holds it; else records_done lets it go. */
const struct fsh_op *fsh_lane_records(struct fsh_lane *l, size_t *depth, size_t *in_use);
void fsh_lane_records_done(struct fsh_lane *l);
/* A lane's wait's poll (no lane lock held): the lane, then the engine by trylock. */
int fsh_lane_poll_waiting(struct fsh_lane *l);
/* The progress thread's share: poll every open lane by trylock (takes the engine lock). */
bool fsh_lane_any_open(void);
int fsh_lane_poll_open(void);
/* Has an open lane an operation in flight not on track ignore (a busy lane counts as yes)?
 * Caller holds the engine lock. */
bool fsh_lane_any_in_flight(const struct fsh_op_track *ignore);
/* Give every open lane's records keep bytes each for the way hook: 0 or -errno (recorded).
 * Caller holds the engine lock. */
int fsh_lane_set_keep(size_t keep);
#ifdef FSH_DEBUG_BUILD
/* The lane's lock, for fsh_lock_expect's checks. */
const struct fsh_guard *fsh_lane_guard(const struct fsh_lane *l);
#endif

#endif
