/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma.h: one-sided puts and gets on the fabric, and their completion.
 *
 * Callers pass the remote side as (segment, offset) from fsh_mr_lookup(); the local side is any
 * buffer. A context (struct fsh_ctx) tracks its operations so quiet can wait for exactly them.
 * Transfers larger than the provider's message limit are split; small puts are injected (the
 * source is reusable on return).
 */
#ifndef FSH_RMA_H
#define FSH_RMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"
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

/* shmem_ctx_create/destroy: an independent completion stream. While contexts' own endpoints
 * are available (fsh_rma_lanes_init), the context gets one (a lane, progress.h): its puts,
 * gets and provider atomics (amo.c) go there, under its own lock, and only the rest (AMOs
 * applied by targets, signals, batches, device memory, and where descriptors are needed
 * atomics and unregistered buffers) through the engine. Otherwise it is a
 * completion stream on the engine's endpoint. team: the team it is created on (NULL: world),
 * whose reservation (may be NULL) is drawn on first. Create fails (-ENOSPC, recorded) when
 * FSH_CTX_SLOTS contexts exist; a context without an endpoint of its own is no failure.
 * Destroy completes the context's operations first. */
int fsh_rma_ctx_create(long options, void *team, struct fsh_lane_reserve *reserve,
                       struct fsh_ctx **ctx);
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
int fsh_rma_ctx_destroy(struct fsh_ctx *ctx);
/* At init, with the fabric open and the peers inserted: bounce slots for blocking puts of up
 * to size bytes (FABSHMEM_BOUNCE_SIZE, -1: auto; FABSHMEM_BOUNCE_SLOTS of them), so that such
 * a put returns once it is copied. 0 or -errno. */
int fsh_rma_bounce_init(long size, long slots);
/* A slot holds this much more than FABSHMEM_BOUNCE_SIZE: a put-with-signal's descriptor
 * ahead of that much data (signal.c), so both go in one write. */
#define FSH_RMA_BOUNCE_EXTRA 64
/* One line for SHMEM_INFO: blocking puts' bounce slots, or why there are none. */
void fsh_rma_bounce_describe(char *buf, size_t len);
/* At shmem_finalize, after its quiet: frees the contexts left alive and resets the default
 * one (its session closed), for a later shmem_init. */
void fsh_rma_fini(void);
/* Contexts created on team (struct fsh_team *) whose options have a bit of mask. */
int fsh_rma_ctx_count_on(const void *team, long mask);
/* Destroy every context created on team (shmem_team_destroy); the first failure is returned,
 * every context is destroyed. */
int fsh_rma_ctx_destroy_on(const void *team);

/* OpenSHMEM 1.6 sessions, a hint that never changes semantics. Start opens one on ctx or adds
 * to the open one: batch (the BATCH option) is OR-ed in; has_total replaces the total_ops hint
 * (else the open session's stays, SIZE_MAX on a new one). While a BATCH session is open, small
 * host-memory puts to fabric peers are copied into a per-PE batch and posted together, one
 * write carrying up to the inject size over up to the provider's rma_iov_limit remote segments
 * (contiguous puts merge into one). A batch is posted when it is full, when a put does not fit
 * or overlaps it, when total_ops puts were issued, before a get on the context, by quiet,
 * fence, pe_quiet, stop and destroy, and by any poll of the progress engine (every wait), so
 * nothing is held while this PE waits. Stop posts what is held; it does not quiet (the spec).
 * 0 or -errno (recorded); a batch that cannot be allocated just means no batching. */
int fsh_rma_session_start(struct fsh_ctx *ctx, bool batch, size_t total_ops, bool has_total);
int fsh_rma_session_stop(struct fsh_ctx *ctx);

/* nbi false: return when src may be reused (put) / dest holds the data (get). */
int fsh_rma_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src, size_t len,
                int pe, bool nbi);
int fsh_rma_get(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, size_t len,
                int pe, bool nbi);
/* Strided, in blocks: nblocks blocks of bsize elements of esize bytes; block i goes from
 * src + i*sst*esize to remote off + i*dst*esize (ibget: from remote off + i*sst*esize to
 * dest + i*dst*esize). Strides count elements; iput/iget are bsize 1. Complete on return. */
int fsh_rma_ibput(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                  ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe);
int fsh_rma_ibget(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, ptrdiff_t dst,
                  ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe);
/* One write of len bytes (at most the provider's message size) to (seg, off) of pe. With
 * has_imm it raises a remote event carrying imm (32 bits; 64 where the provider's
 * cq_data_size is 8, for a kind that uses bits 63..32) at the target once its data is in
 * place, and its completion then only says that src may be reused (transmit-complete): the
 * caller learns of its landing from the target. Non-blocking; src must stay valid until the
 * operation completes unless len fits the inject size. sync (may be NULL) counts it too. */
int fsh_rma_write(struct fsh_ctx *ctx, struct fsh_op_track *sync, const void *src, size_t len,
                  int pe, enum fsh_seg seg, uint64_t off, bool has_imm, uint64_t imm);

/* Is a write of len bytes from src injected (the source reusable when the post returns)? */
bool fsh_rma_injects(const void *src, size_t len);
/* One write with immediate data imm (the event fsh_rma_write raises) that scatters
 * [src, src + len_a + len_b) to two ranges of pe: len_a bytes at (seg_a, off_a), then len_b at
 * (seg_b, off_b). The event comes once both landed. Only where the provider takes two remote
 * segments per write and data (the len_b bytes staged behind len_a others) is host memory;
 * src is injected where fsh_rma_pair_fits (len_a + len_b fit the inject size), else it must
 * be a bounce slot (progress.h), which the write's record gives back. */
bool fsh_rma_pair_fits(size_t len_a, const void *data, size_t len_b);
int fsh_rma_write_pair(struct fsh_ctx *ctx, const void *src, int pe, enum fsh_seg seg_a,
                       uint64_t off_a, size_t len_a, enum fsh_seg seg_b, uint64_t off_b,
                       size_t len_b, uint32_t imm);
/* The largest len fsh_rma_write and fsh_rma_read take (the provider's message size). */
size_t fsh_rma_max_write(void);
/* One read of len bytes (at most the provider's message size) from (seg, off) of pe into dest.
 * Non-blocking; sync (may be NULL) counts it too. */
int fsh_rma_read(struct fsh_ctx *ctx, struct fsh_op_track *sync, void *dest, size_t len, int pe,
                 enum fsh_seg seg, uint64_t off);
/* The same read on way `way` to pe (fabric.h; 0 with one rail): liveness probes each rail. */
int fsh_rma_read_way(struct fsh_ctx *ctx, struct fsh_op_track *sync, void *dest, size_t len,
                     int pe, enum fsh_seg seg, uint64_t off, unsigned way);
/* The 4- or 8-byte word at off of pe's heap, as it is now (acquire): a load when pe's heap is
 * mapped here, else a read into landing (registered memory of this PE) waited for; what names
 * the wait. 0 or -errno (recorded). */
int fsh_rma_read_word(int pe, uint64_t off, void *landing, size_t size, uint64_t *value,
                      const char *what);

/* Wait until every operation of the context has completed (data visible at the target). */
int fsh_rma_quiet(struct fsh_ctx *ctx);
/* Quiet for the operations of ctx to the world PEs marked in pes[] only (OpenSHMEM 1.6
 * pe_quiet; NULL: none, just the memory fence); one names the PE when there is only one (for
 * liveness reports), else -1. put-with-signal's updates are waited for at every target, as
 * quiet does. */
int fsh_rma_pe_quiet(struct fsh_ctx *ctx, const bool *pes, int one);
/* Quiet every live context (barrier_all, finalize). */
int fsh_rma_quiet_all(void);
/* Work a higher layer must finish before quiet returns (signal.c: its signals applied at
 * their targets). Runs after the context's operations completed. */
void fsh_rma_set_quiet_hook(int (*hook)(void));
/* Order earlier puts before later ones to the same PE. With no ordering assumed on the fabric,
 * this is completion of the earlier ones, i.e. quiet. */
int fsh_rma_fence(struct fsh_ctx *ctx);

/* Read the 8-byte word at heap offset off(pe, arg) of every PE of pes[0..n) into landing[pe]
 * (registered), all reads in flight at once, on ctx (its own endpoint, if it has one; NULL: the
 * default context); returns once all landed. For the counts targets keep for a source
 * (arrive.c's arrivals, which reads them through this as its fsh_arrive_read_fn, given by
 * init.c; applied signals in signal.c). */
int fsh_rma_read_words(struct fsh_ctx *ctx, const int *pes, size_t n, uint64_t *landing,
                       uint64_t (*off)(int pe, const void *arg), const void *arg,
                       const char *what);

#endif
