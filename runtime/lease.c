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
 * Only writes with immediate data and reads: no fabric atomics (efa-direct has none), and
 * the answer waits only for the target's progress engine, which every protocol built on it
 * needs anyway. Memory: nchunks x chunk, 4 bytes per PE of answers, 16 bytes of sink.
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

static void on_lease(uint32_t payload)
{
    unsigned id = (payload >> POOL_SHIFT) & 3;
    int src = (int)(payload & ((1u << SRC_BITS) - 1));
    struct fsh_lease_pool *p = id < FSH_LEASE_NPOOLS ? pools[id] : NULL;
    if (!p || src >= fsh_rt.npes) {
        FSH_WARN("lease message for pool %u from PE %d is out of range: dropped", id, src);
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
    unsigned answer = held;
    if (payload & RELEASE_BIT) {
        if (held != DENIED) {
            p->owner[held] = -1;
        }
        answer = RELEASED;
    } else if (answer == DENIED && free_c != DENIED) {
        answer = free_c;
        p->owner[answer] = src;
        if (p->granted) {
            p->granted(answer);
        }
    }
    uint32_t n = (__atomic_load_n(&p->grant[src], __ATOMIC_RELAXED) >> 8) + 1;
    /* Release: the chunk's reset above is visible to whoever sees the answer. */
    __atomic_store_n(&p->grant[src], (n << 8) | answer, __ATOMIC_RELEASE);
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
    p->claims = calloc(n, sizeof(uint32_t));
    if (!p->owner || !p->claims) {
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
    free(p->claims);
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

int fsh_lease_claim(struct fsh_lease_pool *p, int pe)
{
    unsigned answer = RELEASED;
    while (answer == RELEASED) {
        struct answer_wait w = {p, pe, ++p->claims[pe], 0, 0};
        int rc = send(p, pe, 0);
        if (rc == 0 && !answered(&w)) {
            char what[96];
            static const char *const user[] = {[FSH_LEASE_SIGNAL] = "put-with-signal",
                                               [FSH_LEASE_DEVICE] = "device heap staging",
                                               [FSH_LEASE_AMO] = "atomics"};
            snprintf(what, sizeof(what), "waiting for PE %d to grant inbox space (%s)", pe,
                     user[p->id]);
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
    if (answer == DENIED) {
        return -ENOSPC;
    }
    if (answer >= p->nchunks) {
        return fsh_err(-EPROTO, "run the same fabshmem on every PE",
                       "PE %d granted chunk %u of a pool of %u", pe, answer, p->nchunks);
    }
    return (int)answer;
}

int fsh_lease_release(struct fsh_lease_pool *p, int pe)
{
    p->claims[pe]++; /* answered too: see the top of this file */
    return send(p, pe, RELEASE_BIT);
}
