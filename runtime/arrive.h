/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arrive.h: remote completion by counting (FABSHMEM_REMOTE_COMPLETION).
 *
 * Where the provider cannot say that a write is in the target's memory (efa-direct completes a
 * write once sent), each plain write carries immediate data, the target counts the arrivals
 * per sender and source, and quiet reads the counts. A sender is the engine (slot 0, under the
 * engine lock) or a context's own endpoint (a lane: slot 1.., under the lane's lock); rma_post.c
 * posts the writes and rma.c calls the quiets. arrive never calls them by name (all layer 7,
 * the rma modules above it): the quiets read the counts through the reader fsh_arrive_init is
 * given.
 */
#ifndef FSH_ARRIVE_H
#define FSH_ARRIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "progress.h"
#include "rt.h"

/* rma_ctx.h's context: arrive hands it to the reader and never looks inside it. */
struct fsh_ctx;

/* How a quiet reads the counts: the 8-byte word at heap offset off(pe, arg) of every PE of
 * pes[0..n) into landing[pe] (registered), all in flight at once, on ctx (NULL: the default
 * context); returns once all landed, 0 or -errno (recorded). rma.c's fsh_rma_read_words, which
 * init.c passes to fsh_arrive_init. Called with the engine lock held (the engine's quiet) or
 * with no lock (a lane's quiet). */
typedef int (*fsh_arrive_read_fn)(struct fsh_ctx *ctx, const int *pes, size_t n,
                                  uint64_t *landing, uint64_t (*off)(int pe, const void *arg),
                                  const void *arg, const char *what);

/* Counting, from fsh_arrive_init to fsh_arrive_fini: a global so that a put's test inlines. */
extern bool fsh_arrive_active;

/* Will quiet count (fabric_provider.c decides it with the provider: false before one is open)? */
bool fsh_arrive_counts(void);
/* How many contexts' own endpoints targets count apart, each with counts of its own: a
 * setting every PE must agree on (it sizes the counts' block; the exchange compares it). */
int fsh_arrive_lanes(void);
/* The heap bytes the counts take for npes PEs (the memory model's figure). */
size_t fsh_arrive_heap_bytes(int npes);
/* Reserve the counts in the heap and start counting (collective: the same point of init on
 * every PE), reading them back with read; 0 or -errno (recorded). fini: stop, at finalize. */
int fsh_arrive_init(fsh_arrive_read_fn read);
void fsh_arrive_fini(void);

/* The immediate data of a counted write from slot's sender. */
static inline uint32_t fsh_arrive_imm(int slot)
{
    return ((uint32_t)FSH_IMM_ARRIVE << FSH_IMM_KIND_SHIFT) |
           (uint32_t)(slot * fsh_rt.npes + fsh_rt.pe);
}
/* A counted write of slot's sender to pe was handed to the provider (under slot's lock). */
void fsh_arrive_posted(int slot, int pe);
/* Is a quiet reading slot's counts (a lane's writes wait meanwhile; under the lane's lock)? */
bool fsh_arrive_quieting(int slot);
/* A slot of counts for a new lane (engine lock): 0 when none is free or its lists cannot be
 * allocated, or nothing is counted; give: back when the lane is. */
int fsh_arrive_slot_take(void);
void fsh_arrive_slot_give(int slot);

/* Quiet's share: wait until the engine's writes posted before the call are in their targets'
 * memory (nothing to do unless counting). lane_quiet: the same for the writes of ctx's lane,
 * lane, counted in slot (ctx's own; read on ctx). */
int fsh_arrive_quiet(void);
int fsh_arrive_lane_quiet(struct fsh_ctx *ctx, struct fsh_lane *lane, int slot);
/* Wait until every write posted to pe so far is in pe's memory: nothing to do unless arrivals
 * are counted (a write's completion says it then). */
int fsh_arrive_landed(int pe);
/* One line for SHMEM_INFO: how quiet learns that puts landed. */
const char *fsh_arrive_describe(void);

#endif
