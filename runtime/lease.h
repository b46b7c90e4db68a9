/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lease.h: inbox space a target grants a source on first use (the protocol is in lease.c).
 *
 * A protocol that needs room at the target for each source (put-with-signal's descriptor
 * slots, the device heap's staging slots) takes it from a pool of a few equal chunks in the
 * target's symmetric heap instead of reserving it for every PE of the job: the memory is
 * O(chunks) + 4 bytes per PE, whatever the job's size.
 */
#ifndef FSH_LEASE_H
#define FSH_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"

enum fsh_lease_id { FSH_LEASE_SIGNAL = 0, FSH_LEASE_DEVICE = 1, FSH_LEASE_AMO = 2, FSH_LEASE_NPOOLS };

#define FSH_LEASE_MAX_CHUNKS 254 /* a chunk index, "denied" and "released" fit a byte */

struct fsh_lease_pool {
    enum fsh_lease_id id;
    unsigned nchunks;
    size_t chunk;       /* bytes per chunk, a multiple of 64 */
    uint8_t *base;      /* nchunks chunks, symmetric (the same offset on every PE) */
    uint64_t base_off;  /* its heap offset */
    uint32_t *grant;    /* [src]: claims from src answered << 8 | the answer (symmetric) */
    uint64_t grant_off;
    uint64_t *sink;     /* [0]: the zero claims are written from, [1]: where they land */
    uint32_t *probe;    /* landing of grant reads (registered) */
    int *owner;         /* [chunk]: the PE holding it, -1: free (target side) */
    void (*granted)(unsigned chunk); /* target side: a free chunk goes to a new holder */
    uint8_t *asked;     /* [chunk]: its holder was asked to give it back (target side) */
    unsigned nasked;    /* chunks asked back and not yet given back */
    int *queue;         /* [npes]: sources whose claim waits for a chunk, oldest at qhead
                         * (made on the first such claim) */
    unsigned qhead, nqueued;
    /* holder side, set by the protocol (may stay NULL): pe asks for its chunk back */
    void (*on_ask)(int pe);
    uint32_t *claims;   /* [pe]: claims sent to pe (initiator side) */
};

/* The chunks of a pool of at most `wanted` for npes PEs: no more than there are sources. */
static inline unsigned fsh_lease_chunks(int npes, long wanted)
{
    return (unsigned)(wanted < npes ? wanted : npes);
}

/* Heap bytes a pool of nchunks chunks of `chunk` bytes reserves for npes PEs: what
 * fsh_lease_init takes (the memory model's table is computed from it). */
size_t fsh_lease_heap_bytes(int npes, unsigned nchunks, size_t chunk);

/* Reserve the pool (collective: every PE the same, at the same point of init). The chunks
 * start zeroed; granted (may be NULL) is called on the target, in its progress engine, before
 * it answers a claim with a chunk that was free. what/alt name it in an out-of-heap report. */
int fsh_lease_init(struct fsh_lease_pool *p, enum fsh_lease_id id, unsigned nchunks,
                   size_t chunk, void (*granted)(unsigned chunk), const char *what,
                   const char *alt);
void fsh_lease_fini(struct fsh_lease_pool *p);

/* Ask pe for a chunk and wait for its answer (pe's progress engine gives it): the chunk's
 * index, -ENOSPC when every chunk of pe's pool is held (nothing recorded), or -errno. A source
 * that holds a chunk of pe is given the same one again. Caller holds the engine lock. */
int fsh_lease_claim(struct fsh_lease_pool *p, int pe);
/* The same, but when every chunk of pe's pool is held, wait until pe gives this PE one that
 * a holder gave back (claims waiting are served first come, first served): the chunk's index,
 * or -errno. Caller holds the engine lock. */
int fsh_lease_claim_wait(struct fsh_lease_pool *p, int pe);
/* Give pe's chunk back (no wait: pe frees it when the write lands). Only once nothing of
 * ours is in flight into it. */
int fsh_lease_release(struct fsh_lease_pool *p, int pe);

/* Target side: claims waiting for a chunk of this PE. */
static inline unsigned fsh_lease_waiting(const struct fsh_lease_pool *p)
{
    return p->nqueued;
}

/* Target side: ask the holder of chunk c to give it back (a message; the holder's pool calls
 * its on_ask with this PE). Once per grant: a chunk already asked for, or free, is left
 * alone. Posts: not from an event handler. 0 or -errno. */
int fsh_lease_ask(struct fsh_lease_pool *p, unsigned c);

/* Chunk c of this PE, and its offset in the heap (the same at every PE). */
static inline void *fsh_lease_chunk(const struct fsh_lease_pool *p, unsigned c)
{
    return p->base + (size_t)c * p->chunk;
}

static inline uint64_t fsh_lease_chunk_off(const struct fsh_lease_pool *p, unsigned c)
{
    return p->base_off + (uint64_t)c * p->chunk;
}

/* Has chunk c's holder been asked to give it back since it was granted (target side)? */
static inline bool fsh_lease_asked(const struct fsh_lease_pool *p, unsigned c)
{
    return c < p->nchunks && p->asked[c];
}

/* The PE holding chunk c of this PE, or -1 (target side). */
static inline int fsh_lease_owner(const struct fsh_lease_pool *p, unsigned c)
{
    return c < p->nchunks ? p->owner[c] : -1;
}

#endif
