/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lease.c: inbox space granted on first use.
 *
 * Protocols that let a source write into room at the target that belongs to it alone
 * (put-with-signal's descriptors, the device heap's staging requests) used to reserve that room
 * for every PE of the job on every PE: 4 KiB per peer for signals, 512 KiB per peer for
 * staging, so the job's size multiplied it (at 1,024 PEs the staging slots alone outgrew the
 * default heap). A pool instead holds a few equal chunks per PE, and a target gives one to a
 * source when the source first asks:
 *
 *   - the source writes 8 bytes with immediate data (kind FSH_IMM_LEASE: pool, claim or
 *     release, its PE) into the target's sink word;
 *   - the target's progress engine, once the write landed, picks a free chunk (or the one the
 *     source already holds), records the holder, and stores grant[src] = n << 8 | answer, where
 *     n counts the claims it answered for src and the answer is the chunk or DENIED;
 *   - the source reads grant[src] (an 8-byte-aligned 4-byte read; a load when the target's heap
 *     is mapped here) until n is its own count of claims sent, so an answer to an earlier claim
 *     is never taken for this one.
 * A release is the same write with the release bit: the target frees the chunk when it lands,
 * which the source may only send once nothing of its own is in flight into the chunk. It is
 * not waited for, and it is answered too (RELEASED): a claim the fabric delivers before the
 * release sent ahead of it would be answered "the chunk you hold" and then lose that chunk, so
 * the source, whose count covers both, sees RELEASED as the last answer and claims again.
 *
 * A source that would rather wait than be denied (fsh_lease_claim_wait: atomics, which have no
 * other way) sets the queue bit: with every chunk held, the target keeps the claim in a
 * first-come queue instead of answering DENIED, and answers it when a chunk is given back: the
 * chunk goes straight to the queue's head, so nobody who asks later overtakes it. Holders give
 * back when the protocol's policy says so; the target can ask one to (fsh_lease_ask: a message
 * with the ask bit into the holder's sink word; its engine calls the pool's on_ask with the
 * target). The target asks only holders it has not asked since their grant, and counts them
 * (nasked), so a protocol can ask one holder per waiting claim.
 *
 * Only writes with immediate data and reads: no fabric atomics (efa-direct has none), and
 * the answer waits only for the target's progress engine, which every protocol built on it
 * needs anyway. Memory: nchunks x chunk, 4 bytes per PE of answers, 16 bytes of sink; off the
 * heap, 4 bytes per PE of claims sent, and 4 more for the queue once a claim waits.
 */
#include "lease.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "heap.h"
#include "log.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"

#define DENIED 0xFFu
#define RELEASED 0xFEu
#define SRC_BITS 22
#define POOL_SHIFT 22 /* 2 bits of pool */
#define RELEASE_BIT (1u << 24)
#define QUEUE_BIT (1u << 25) /* a claim: wait for a chunk rather than be denied */
#define ASK_BIT (1u << 26)   /* from the target to a holder: give the chunk back */

static struct fsh_lease_pool *pools[FSH_LEASE_NPOOLS];
static bool handler_registered;

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

size_t fsh_lease_heap_bytes(int npes, unsigned nchunks, size_t chunk)
{
    return (size_t)nchunks * align64(chunk) + align64((size_t)npes * sizeof(uint32_t)) + 64;
}

/* The answer to src's latest claim or release: n counts them, so the source can tell. */
static void answer(struct fsh_lease_pool *p, int src, unsigned a)
{
    uint32_t n = (__atomic_load_n(&p->grant[src], __ATOMIC_RELAXED) >> 8) + 1;
    /* Release: the chunk's reset (granted) is visible to whoever sees the answer. */
    __atomic_store_n(&p->grant[src], (n << 8) | a, __ATOMIC_RELEASE);
}

/* Chunk c changes hands: its holder is no longer asked to give it back. */
static void unask(struct fsh_lease_pool *p, unsigned c)
{
    if (p->asked[c]) {
        p->asked[c] = 0;
        p->nasked--;
    }
}

/* Chunk c goes to src, a new holder. */
static void grant(struct fsh_lease_pool *p, unsigned c, int src)
{
    p->owner[c] = src;
    unask(p, c);
    if (p->granted) {
        p->granted(c);
    }
}

/* The queue, made on the first claim that waits (pools whose sources never wait have none):
 * false when there is no memory for it (the claim is then denied). */
static bool queue_room(struct fsh_lease_pool *p)
{
    if (!p->queue) {
        p->queue = malloc((size_t)fsh_rt.npes * sizeof(int));
    }
    return p->queue != NULL;
}

static void on_lease(uint32_t payload, uint32_t high)
{
    unsigned id = (payload >> POOL_SHIFT) & 3;
    int src = (int)(payload & ((1u << SRC_BITS) - 1));
    struct fsh_lease_pool *p = id < FSH_LEASE_NPOOLS ? pools[id] : NULL;
    if (!p || src >= fsh_rt.npes) {
        FSH_WARN("lease message for pool %u from PE %d is out of range: dropped", id, src);
        return;
    }
    if (payload & ASK_BIT) {
        /* Holder side: src, the target, wants its chunk back. */
        if (p->on_ask) {
            p->on_ask(src);
        }
        return;
    }
    unsigned held = DENIED, free_c = DENIED;
    for (unsigned c = 0; c < p->nchunks; c++) {
        if (p->owner[c] == src) {
            held = c;
        } else if (p->owner[c] < 0 && free_c == DENIED) {
            free_c = c;
        }
    }
    if (payload & RELEASE_BIT) {
        answer(p, src, RELEASED);
        if (held != DENIED) {
            p->owner[held] = -1;
            unask(p, held);
            if (p->nqueued) {
                /* First come, first served: the oldest waiting claim gets it. */
                int w = p->queue[p->qhead];
                p->qhead = (p->qhead + 1) % (unsigned)fsh_rt.npes;
                p->nqueued--;
                grant(p, held, w);
                answer(p, w, held);
            }
        }
        return;
    }
    if (held == DENIED && free_c != DENIED) {
        grant(p, free_c, src);
        held = free_c;
    } else if (held == DENIED && (payload & QUEUE_BIT) && queue_room(p)) {
        /* Answered when a chunk is given back. A source has one claim in flight per target,
         * so it is queued at most once and the queue never holds more than npes. */
        p->queue[(p->qhead + p->nqueued) % (unsigned)fsh_rt.npes] = src;
        p->nqueued++;
        return;
    }
    answer(p, src, held);
}

int fsh_lease_init(struct fsh_lease_pool *p, enum fsh_lease_id id, unsigned nchunks,
                   size_t chunk, void (*granted)(unsigned chunk), const char *what,
                   const char *alt)
{
    if (nchunks < 1 || nchunks > FSH_LEASE_MAX_CHUNKS) {
        return fsh_err(-EINVAL, "", "%s: %u chunks is outside 1..%d", what, nchunks,
                       FSH_LEASE_MAX_CHUNKS);
    }
    if (fsh_rt.npes > (1 << SRC_BITS)) {
        return fsh_err(-ENOTSUP, "run at most 4194304 PEs", "%s: a lease names at most %d PEs",
                       what, 1 << SRC_BITS);
    }
    memset(p, 0, sizeof(*p));
    p->id = id;
    p->nchunks = nchunks;
    p->chunk = align64(chunk);
    p->granted = granted;
    size_t n = (size_t)fsh_rt.npes;
    size_t total = fsh_lease_heap_bytes(fsh_rt.npes, nchunks, chunk);
    p->base = fsh_heap_reserve(total, 64, what, alt);
    if (!p->base) {
        return fsh_err_last()->code;
    }
    memset(p->base, 0, total);
    p->grant = (uint32_t *)(p->base + (size_t)nchunks * p->chunk);
    p->sink = (uint64_t *)((uint8_t *)p->grant + align64(n * sizeof(uint32_t)));
    p->probe = (uint32_t *)(p->sink + 2);
    enum fsh_seg seg;
    if (fsh_mr_lookup(p->base, total, &seg, &p->base_off) != 0 || seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "%s: not in the registered heap", what);
    }
    p->grant_off = p->base_off + (uint64_t)((uint8_t *)p->grant - p->base);
    p->owner = malloc(nchunks * sizeof(int));
    p->asked = calloc(nchunks, 1);
    p->claims = calloc(n, sizeof(uint32_t));
    if (!p->owner || !p->asked || !p->claims) {
        return fsh_err(-ENOMEM, "", "%s: out of memory for the lease state of %zu PEs", what, n);
    }
    for (unsigned c = 0; c < nchunks; c++) {
        p->owner[c] = -1;
    }
    if (!handler_registered) {
        int rc = fsh_progress_register_imm(FSH_IMM_LEASE, on_lease);
        if (rc != 0) {
            return rc;
        }
        handler_registered = true;
    }
    pools[id] = p;
    return 0;
}

void fsh_lease_fini(struct fsh_lease_pool *p)
{
    if (pools[p->id] == p) {
        pools[p->id] = NULL;
    }
    /* The engine's handler table goes with the engine: the next init registers again. */
    bool any = false;
    for (int i = 0; i < FSH_LEASE_NPOOLS; i++) {
        any = any || pools[i];
    }
    handler_registered = any;
    free(p->owner);
    free(p->asked);
    free(p->claims);
    free(p->queue);
    /* The chunks go with the heap. */
    memset(p, 0, sizeof(*p));
}

static int send(struct fsh_lease_pool *p, int pe, uint32_t bits)
{
    uint32_t imm = ((uint32_t)FSH_IMM_LEASE << FSH_IMM_KIND_SHIFT) |
                   ((uint32_t)p->id << POOL_SHIFT) | bits | (uint32_t)fsh_rt.pe;
    uint64_t sink_off = p->grant_off + (uint64_t)((uint8_t *)&p->sink[1] - (uint8_t *)p->grant);
    return fsh_rma_write(&fsh_ctx_default, NULL, &p->sink[0], sizeof(uint64_t), pe, FSH_SEG_HEAP,
                         sink_off, true, imm);
}

struct answer_wait {
    struct fsh_lease_pool *p;
    int pe;
    uint32_t want; /* our claim count, as the answer carries it */
    uint32_t got;
    int err;
};

static bool answered(const void *arg)
{
    struct answer_wait *w = (struct answer_wait *)arg;
    uint64_t off = w->p->grant_off + (uint64_t)fsh_rt.pe * sizeof(uint32_t), v;
    w->err = fsh_rma_read_word(w->pe, off, w->p->probe, sizeof(uint32_t), &v,
                               "lease: reading the target's answer");
    if (w->err != 0) {
        return true;
    }
    w->got = (uint32_t)v;
    return (w->got >> 8) == (w->want & 0xFFFFFFu);
}

static int claim(struct fsh_lease_pool *p, int pe, uint32_t bits)
{
    static const char *const user[] = {[FSH_LEASE_SIGNAL] = "put-with-signal",
                                       [FSH_LEASE_DEVICE] = "device heap staging",
                                       [FSH_LEASE_AMO] = "atomics"};
    unsigned answer = RELEASED;
    while (answer == RELEASED) {
        struct answer_wait w = {p, pe, ++p->claims[pe], 0, 0};
        int rc = send(p, pe, bits);
        if (rc == 0 && !answered(&w)) {
            char what[160];
            if (bits & QUEUE_BIT) {
                snprintf(what, sizeof(what), "waiting for PE %d to grant inbox space (%s; its "
                         "%u inboxes may all be held by other PEs, one is given back soon)", pe,
                         user[p->id], p->nchunks);
            } else {
                snprintf(what, sizeof(what), "waiting for PE %d to grant inbox space (%s)", pe,
                         user[p->id]);
            }
            rc = fsh_progress_wait(answered, &w, what, pe);
        }
        if (rc == 0) {
            rc = w.err;
        }
        if (rc != 0) {
            return rc;
        }
        answer = w.got & 0xFFu;
    }
    if (answer == DENIED && (bits & QUEUE_BIT)) {
        return fsh_err(-ENOMEM, "", "PE %d is out of memory for the queue of claims that wait "
                       "for its inbox space (%s)", pe, user[p->id]);
    }
    if (answer == DENIED) {
        return -ENOSPC;
    }
    if (answer >= p->nchunks) {
        return fsh_err(-EPROTO, "run the same fabshmem on every PE",
                       "PE %d granted chunk %u of a pool of %u", pe, answer, p->nchunks);
    }
    return (int)answer;
}

int fsh_lease_claim(struct fsh_lease_pool *p, int pe)
{
    FSH_ASSERT_ENGINE_HELD();
    return claim(p, pe, 0);
}

int fsh_lease_claim_wait(struct fsh_lease_pool *p, int pe)
{
    FSH_ASSERT_ENGINE_HELD();
    return claim(p, pe, QUEUE_BIT);
}

int fsh_lease_release(struct fsh_lease_pool *p, int pe)
{
    p->claims[pe]++; /* answered too: see the top of this file */
    return send(p, pe, RELEASE_BIT);
}

int fsh_lease_ask(struct fsh_lease_pool *p, unsigned c)
{
    int holder = fsh_lease_owner(p, c);
    if (holder < 0 || p->asked[c]) {
        return 0;
    }
    p->asked[c] = 1;
    p->nasked++;
    return send(p, holder, ASK_BIT);
}
