/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_ctx.h: contexts (shmem_ctx_create): the object the operations of rma.h run on, the
 * handles users hold, the list of live contexts, and which contexts get an endpoint of their
 * own (a lane, progress.h).
 */
#ifndef FSH_RMA_CTX_H
#define FSH_RMA_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "progress.h"

struct fsh_batch;

/* A team's share of the contexts' own endpoints (SHMEM_TEAM_NUM_CONTEXTS): granted at its
 * creation, taken by contexts created on it. */
struct fsh_lane_reserve {
    int granted, taken;
};

struct fsh_ctx {
    struct fsh_op_track track;
    struct fsh_lane *lane;       /* its own endpoint (progress.h), or NULL: the engine's */
    struct fsh_op_track ltrack;  /* the operations posted on lane */
    struct fsh_lane_reserve *reserve; /* the team reservation its lane came from, or NULL */
    int slot;                    /* its lane's counts at the targets (counting), or 0 */
    long options;
    bool session;         /* a session is open (shmem_ctx_session_start) */
    bool session_batch;   /* ... with the BATCH hint */
    size_t total_ops;     /* its total_ops hint (SIZE_MAX: none) */
    struct fsh_batch *batch; /* small puts held to be posted together, while batching */
    void *team;           /* the team it was created on (collectives' object), NULL: world */
    struct fsh_ctx *next; /* live contexts, for quiet of all */
    uintptr_t handle;     /* what the user holds (below) */
};

extern struct fsh_ctx fsh_ctx_default;

/* The live contexts, newest first, the default one last, linked by next. Under the engine
 * lock. */
struct fsh_ctx *fsh_rma_ctx_first(void);

/* Context handles. The user holds (generation << FSH_CTX_IDX_BITS | index), never a pointer:
 * fsh_ctx_slots[index] holds the live handle of that slot (0 when free) and its context, and
 * every create gives the slot a new generation. A handle is live exactly when it equals its
 * slot's, so a destroyed, twice destroyed or made-up handle is caught by one compare, even
 * after its slot was reused, and never dereferenced. The table is exported only so that the
 * API's check inlines (a put costs that compare, as the NULL check before it did). */
#define FSH_CTX_IDX_BITS 12
#define FSH_CTX_SLOTS (1u << FSH_CTX_IDX_BITS) /* contexts that may exist at once */
#define FSH_CTX_DEFAULT_HANDLE ((uintptr_t)1 << FSH_CTX_IDX_BITS)
struct fsh_ctx_slot {
    uintptr_t handle;
    struct fsh_ctx *ctx;
};
/* hidden: addressed PC-relative by the API's check, not through the GOT */
extern struct fsh_ctx_slot fsh_ctx_slots[FSH_CTX_SLOTS] __attribute__((visibility("hidden")));

static inline const struct fsh_ctx_slot *fsh_rma_ctx_slot(uintptr_t handle)
{
    return &fsh_ctx_slots[handle & (FSH_CTX_SLOTS - 1)];
}

/* Why handle names no live context, for the caller's message: "is SHMEM_CTX_INVALID" (0),
 * "was destroyed" or "is not a context handle". */
const char *fsh_rma_ctx_why(uintptr_t handle);

/* shmem_ctx_create: an independent completion stream. While contexts' own endpoints
 * are available (fsh_rma_lanes_init), the context gets one (a lane, progress.h): its puts,
 * gets and provider atomics (amo.c) go there, under its own lock, and only the rest (AMOs
 * applied by targets, signals, batches, device memory, and where descriptors are needed
 * atomics and unregistered buffers) through the engine. Otherwise it is a
 * completion stream on the engine's endpoint. team: the team it is created on (NULL: world),
 * whose reservation (may be NULL) is drawn on first. Create fails (-ENOSPC, recorded) when
 * FSH_CTX_SLOTS contexts exist; a context without an endpoint of its own is no failure.
 * fsh_rma_ctx_destroy (rma.h) ends it. */
int fsh_rma_ctx_create(long options, void *team, struct fsh_lane_reserve *reserve,
                       struct fsh_ctx **ctx);
/* The end of fsh_rma_ctx_destroy, once the context's operations completed and its session
 * ended: its handle stops naming it, it leaves the live list, its endpoint is given back,
 * and it is freed. */
void fsh_rma_ctx_release(struct fsh_ctx *ctx);
/* At shmem_finalize, once the sessions' batches are gone (fsh_rma_session_fini): frees the
 * contexts left alive, closes every context's endpoint and resets the default context, for a
 * later shmem_init. */
void fsh_rma_ctx_fini(void);
/* Contexts created on team (struct fsh_team *) whose options have a bit of mask. */
int fsh_rma_ctx_count_on(const void *team, long mask);

/* At init, with the fabric open: up to limit contexts (FABSHMEM_CTX_ENDPOINTS) get an
 * endpoint of their own, where the fabric allows (fsh_fabric_lanes_why_not). */
void fsh_rma_lanes_init(long limit);
/* Where a target must know an endpoint before it reaches it (efa-direct), the lanes are opened
 * before the exchange and published in it. lanes_published: the address slots every PE's
 * exchange blob has for them (0: none; the same on every PE). lanes_preopen: open them (as many
 * as the provider gives: no error for fewer; slots / rails of them). lane_names: their names,
 * one per lane and rail (fsh_fabric_lane_name), stride bytes apart in names, at most max; *len
 * their length (all alike); returns how many. */
int fsh_rma_lanes_published(void);
int fsh_rma_lanes_preopen(void);
size_t fsh_rma_lane_names(uint8_t *names, size_t stride, size_t max, uint16_t *len);
/* Set aside up to n endpoints for contexts of a team (SHMEM_TEAM_NUM_CONTEXTS: best effort);
 * give them back when the team is destroyed (its contexts first). */
void fsh_rma_lanes_reserve(struct fsh_lane_reserve *r, int n);
void fsh_rma_lanes_unreserve(struct fsh_lane_reserve *r);
/* One line for SHMEM_INFO: contexts' endpoints, how many, or why none. */
void fsh_rma_lanes_describe(char *buf, size_t len);

#endif
