/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devmem.c: the device symmetric heap and the staging protocol that moves data to and from it.
 *
 * Owns the device heap (FSH_SEG_DEVICE: one cuMemAlloc per PE, carved by the deterministic
 * allocator's second instance), the choice of registration path, and the staging slots.
 *
 * Path choice (FABSHMEM_DEVICE_PATH; printed by SHMEM_INFO=1, predicted by fabshmem-info
 * --doctor): GPU memory is handed to the NIC as a dmabuf (FI_MR_DMABUF, libfabric >= 1.20) or
 * with iface FI_HMEM_CUDA, both only when the provider lists FI_HMEM (fabric_provider.c asks
 * for it when a device heap is configured), else the staging path below, which works on every
 * provider. auto takes the first that is possible and registers; every PE must manage it, else
 * all use staging. On a direct path the heap's key is exchanged and the provider moves device data;
 * the backend's visible() (fsh_backend_guard) makes NIC writes visible to the GPU
 * (cuFlushGPUDirectRDMAWrites) before a signal, a sync or a satisfied wait lets the program
 * use them. Atomics on device memory take the staging slots (REQ_AMO) on every registration
 * path: the owner's CPU applies them on a copy of the word under the heap's AMO lock, one
 * domain for all of them whatever the path (a same-node peer that maps the heap takes the same
 * lock and applies them itself: devmap.c).
 *
 * Staging protocol. Each PE owns, in its (registered) symmetric heap, a pool of
 * FABSHMEM_DEVICE_PEERS inboxes (lease.c), each DEPTH (2) slots (64-byte header +
 * FABSHMEM_DEVICE_CHUNK bytes) and done[k], the sequence number of the last request in slot k
 * it finished; and DEPTH outbox slots. A staged call of s toward t first takes one of t's
 * inboxes, c (waiting while other sources hold all of them), and gives it back when the call
 * ends: a PE's calls are serialized, so it holds one inbox at a time, and the memory is the
 * pool's whatever the job's size. t zeroes done[] when it grants c, so s numbers its requests
 * from 1 in each call. Request q uses slot k = q mod DEPTH and is one fabric write of header
 * (+ data, for a put) from s's outbox[k] into t's inbox c slot k, with immediate data naming
 * (c, k) (kind FSH_IMM_DEV). t's progress engine gets that event only once the whole write
 * landed; it copies the data into its GPU (put) or its GPU's data into the slot (get),
 * synchronizes the copy, then stores done[k] = q with release order. s learns it by reading
 * done[k] from t (one 8-byte read per poll, or a load when t's heap is mapped here), and for a
 * get then reads the slot's data. Request q is only sent once q - DEPTH is done (and, for a
 * get, its data read), so a slot is never overwritten early, whatever order events arrive in.
 * Pipelining: while t copies chunk i into its GPU, chunk i+1 travels into the other slot (get:
 * t copies chunk i+1 out while s reads chunk i). Nothing is posted from the event handler.
 *
 * Consequences: a put into a device heap is complete at the target when it returns (so a
 * signal sent after it is applied after the data is visible to the GPU); local device memory
 * is copied directly; a local buffer in GPU memory going to or coming from a host segment is
 * bounced through the outbox. Calls are serialized per PE under the engine lock, and every call
 * waits for its own requests: the path is correct everywhere, not as fast as direct
 * registration would be.
 *
 * Same node: the heaps of the node's other PEs are mapped here, not staged (devmap.c, with
 * FABSHMEM_DEVICE_MAP=1, the default): a put or get on one is one driver copy, and a device
 * atomic on one is applied here under that heap's AMO lock (devmap.c says how and why).
 * Counters of staged requests, bounces, mapped copies and mapped atomics are in
 * fsh_dev_describe, so tests can prove which path ran.
 */
#include "devmem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "amo_op.h"
#include "arrive.h"
#include "backend.h"
#include "cuda.h"
#include "devheap.h"
#include "error.h"
#include "fabric.h"
#include "gdr.h"
#include "heap.h"
#include "lease.h"
#include "local.h"
#include "log.h"
#include "mr.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"
#include "topology.h"

#define HDR 64
#define DEPTH 2 /* requests in flight per (source, target) pair: double buffering */
#define DONE_ERR (1ULL << 63)

enum { REQ_PUT = 1, REQ_GET = 2, REQ_AMO = 3 };
_Static_assert(REQ_AMO < FSH_DEVHEAP_REQ_KINDS, "a counter for every request op");

struct req {
    uint64_t seq;
    uint64_t off; /* in the target's device heap */
    uint64_t len; /* data bytes; for an AMO the object's size (4 or 8) */
    uint32_t op;
    uint32_t amo;     /* REQ_AMO: the fsh_amo_op */
    uint64_t operand; /* REQ_AMO: value and compare value (low len bytes) */
    uint64_t compare;
    uint32_t reserved[4];
};
_Static_assert(sizeof(struct req) == HDR, "a request header is 64 bytes");


struct fsh_devheap fsh_devheap = {.line = "device heap: off (FABSHMEM_DEVICE_HEAP_SIZE=0)"};

bool fsh_dev_on;

enum path { PATH_STAGING, PATH_CUDA, PATH_DMABUF };
static const char *const path_names[] = {"staging", "cuda", "dmabuf"};

const char *fsh_dev_describe(void)
{
    if (!fsh_dev_on) {
        return fsh_devheap.line;
    }
    snprintf(fsh_devheap.full, sizeof(fsh_devheap.full),
             "%s; same node: %s; requests staged: %llu put, %llu get, %llu atomic; copies "
             "through mappings: %llu; atomics through mappings: %llu; bounced: %llu; %s",
             fsh_devheap.line, fsh_devheap.map_why,
             (unsigned long long)__atomic_load_n(&fsh_devheap.staged[REQ_PUT], __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&fsh_devheap.staged[REQ_GET], __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&fsh_devheap.staged[REQ_AMO], __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&fsh_devheap.through_map, __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&fsh_devheap.amo_mapped, __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&fsh_devheap.bounced, __ATOMIC_RELAXED),
             fsh_gdr_describe());
    return fsh_devheap.full;
}


size_t fsh_dev_heap_size(void)
{
    return fsh_devheap.size;
}

/* Inbox c: DEPTH slots, then done[DEPTH]. Its slot k here, and the offsets of its slot k and
 * done[k] (the same on every PE). */
static struct req *in_slot(unsigned c, unsigned k)
{
    return (struct req *)((uint8_t *)fsh_lease_chunk(&fsh_devheap.pool, c) +
                          (size_t)k * fsh_devheap.slot);
}

static uint64_t *done_word(unsigned c, unsigned k)
{
    uint8_t *inbox = fsh_lease_chunk(&fsh_devheap.pool, c);
    return (uint64_t *)(inbox + DEPTH * fsh_devheap.slot) + k;
}

static uint64_t in_slot_off(unsigned c, unsigned k)
{
    return fsh_lease_chunk_off(&fsh_devheap.pool, c) + (uint64_t)k * fsh_devheap.slot;
}

static uint64_t done_off(unsigned c, unsigned k)
{
    return fsh_lease_chunk_off(&fsh_devheap.pool, c) + DEPTH * fsh_devheap.slot +
           k * sizeof(uint64_t);
}

static size_t inbox_bytes(size_t slot)
{
    return DEPTH * slot + DEPTH * sizeof(uint64_t);
}

static size_t slot_bytes(size_t chunk)
{
    return (HDR + chunk + FSH_HEAP_MIN_ALIGN - 1) & ~(size_t)(FSH_HEAP_MIN_ALIGN - 1);
}

/* Our outbox: DEPTH slots, then the landing of done reads. */
static size_t outbox_bytes(size_t slot)
{
    return DEPTH * slot + 64;
}

size_t fsh_dev_heap_bytes(int npes, size_t chunk, long peers)
{
    size_t slot = slot_bytes(chunk);
    return fsh_lease_heap_bytes(npes, fsh_lease_chunks(npes, peers), inbox_bytes(slot)) +
           fsh_heap_rounded(outbox_bytes(slot));
}

/* ---------------------------------------------------------------- target side */

/* A small copy between our own heap's GPU pages and host memory through the GDRCopy mapping
 * (loads and stores across PCIe, no driver call), anything else by a synchronized driver copy. */
int fsh_devheap_copy(void *dst, const void *src, size_t len)
{
    if (len <= FSH_GDR_READ_MAX && fsh_gdr_covers(src, len) && !fsh_cuda_is_device(dst) &&
        fsh_gdr_read(dst, src, len) == 0) {
        return 0;
    }
    if (len <= FSH_GDR_WRITE_MAX && fsh_gdr_covers(dst, len) && !fsh_cuda_is_device(src) &&
        fsh_gdr_write(dst, src, len) == 0) {
        return 0;
    }
    return fsh_cuda_copy(dst, src, len);
}

/* On our own heap: from the handler below or from our own calls. */
static int apply_amo(int op, uint64_t off, const void *value, const void *cond, void *fetch,
                     size_t size)
{
    return fsh_devmap_apply(fsh_devheap.base, fsh_devheap.amo_lock, op, off, value, cond, fetch,
                            size);
}

/* A source takes inbox c: its requests count from 1. */
static void on_granted(unsigned c)
{
    for (unsigned k = 0; k < DEPTH; k++) {
        __atomic_store_n(done_word(c, k), 0, __ATOMIC_RELAXED);
    }
}

/* Immediate payload: inbox * DEPTH + slot. */
static void on_request(uint32_t payload, uint32_t high)
{
    unsigned k = payload % DEPTH;
    unsigned c = payload / DEPTH;
    int src = fsh_lease_owner(&fsh_devheap.pool, c);
    if (src < 0) {
        FSH_WARN("device request in inbox %u, which no PE holds: dropped", c);
        return;
    }
    struct req *r = in_slot(c, k);
    uint8_t *data = (uint8_t *)r + HDR;
    int rc = -EINVAL;
    if (r->op == REQ_AMO) {
        /* The old value goes back in the slot's data, where the requester reads it. */
        rc = (r->len == 4 || r->len == 8) && r->amo > 0 && r->amo <= FSH_AMO_XOR
                 ? apply_amo((int)r->amo, r->off, &r->operand, &r->compare, data, r->len)
                 : -EINVAL;
    } else if (r->len <= fsh_devheap.chunk && r->off <= fsh_devheap.size &&
               r->len <= fsh_devheap.size - r->off) {
        rc = r->op == REQ_PUT ? fsh_devheap_copy(fsh_devheap.base + r->off, data, r->len)
                              : fsh_devheap_copy(data, fsh_devheap.base + r->off, r->len);
    }
    if (rc != 0) {
        FSH_WARN("device request %s of %llu bytes at offset %llu from PE %u failed: %s",
                 r->op == REQ_PUT ? "put" : r->op == REQ_GET ? "get" : "atomic",
                 (unsigned long long)r->len,
                 (unsigned long long)r->off, (unsigned)src,
                 fsh_err_last() ? fsh_err_last()->msg : "out of the device heap");
    }
    /* Release: the copy above completed (synchronized) before the requester can see this. */
    __atomic_store_n(done_word(c, k), r->seq | (rc ? DONE_ERR : 0), __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------- initiator side */

struct ack_wait {
    int pe;
    uint64_t seq; /* wait until the slot of seq reports seq done */
    int err;
};

static bool acked(const void *arg)
{
    struct ack_wait *w = (struct ack_wait *)arg;
    uint64_t off = done_off((unsigned)fsh_devheap.held, (unsigned)(w->seq % DEPTH)), v;
    w->err = fsh_rma_read_word(w->pe, off, fsh_devheap.probe, sizeof(uint64_t), &v,
                               "device heap: reading the target's progress");
    if (w->err != 0) {
        return true;
    }
    if ((v & ~DONE_ERR) != w->seq) {
        return false;
    }
    if (v & DONE_ERR) {
        w->err = fsh_err(-EIO, "the target PE's log says why (FABSHMEM_LOG=warn)",
                         "PE %d could not copy to or from its GPU", w->pe);
    }
    return true;
}

/* Wait until pe finished our request seq (nothing to wait for when seq is 0). */
static int wait_done(int pe, uint64_t seq, uint32_t op)
{
    if (seq == 0) {
        return 0;
    }
    struct ack_wait w = {pe, seq, 0};
    static const char *const what[] = {
        [REQ_PUT] = "device put: waiting for the target to copy into its GPU",
        [REQ_GET] = "device get: waiting for the target to copy from its GPU",
        [REQ_AMO] = "device atomic: waiting for the target to apply it",
    };
    int rc = fsh_progress_wait(acked, &w, what[op], pe);
    return rc ? rc : w.err;
}

/* The outbox slot of request seq: header, then data. */
static struct req *outslot(uint64_t seq)
{
    return (struct req *)(fsh_devheap.outbox + (size_t)(seq % DEPTH) * fsh_devheap.slot);
}

/* Take an inbox at pe for this call, waiting (queued at pe) while other sources hold every
 * one: a holder gives its inbox back at the end of its call. */
static int lease_take(int pe)
{
    fsh_devheap.lease_pe = pe;
    fsh_devheap.held = -1;
    int c = fsh_lease_claim_wait(&fsh_devheap.pool, pe);
    if (c < 0) {
        return c;
    }
    fsh_devheap.held = c;
    fsh_devheap.sent = 0;
    return 0;
}

/* End of the call: every request in the inbox is done, so it goes back (not after an error,
 * when one might still be in flight: then it stays held). */
static int lease_give(int rc)
{
    if (rc == 0 && fsh_devheap.held >= 0) {
        rc = fsh_lease_release(&fsh_devheap.pool, fsh_devheap.lease_pe);
    }
    fsh_devheap.held = -1;
    return rc;
}

/* Claim the next request to pe: the slot it uses is free once the request DEPTH before it
 * finished (its ack also means its write from our outbox slot completed). */
static int claim(int pe, uint32_t op, uint64_t *seq)
{
    *seq = fsh_devheap.sent + 1;
    int rc = *seq > DEPTH ? wait_done(pe, *seq - DEPTH, op) : 0;
    if (rc == 0) {
        fsh_devheap.sent = *seq;
    }
    return rc;
}

/* Send request seq to pe (for a put, its data is already in the outbox slot). Returns once
 * the write completed; the target's work is awaited later (wait_done). */
static int post_request(int pe, uint64_t seq, uint32_t op, uint64_t off, size_t len)
{
    struct req *r = outslot(seq);
    unsigned k = (unsigned)(seq % DEPTH);
    r->seq = seq;
    r->off = off;
    r->len = len;
    r->op = op;
    struct fsh_op_track sync = {0, 0, 0};
    __atomic_add_fetch(&fsh_devheap.staged[op], 1, __ATOMIC_RELAXED);
    uint64_t slot = in_slot_off((unsigned)fsh_devheap.held, k);
    uint32_t imm = ((uint32_t)FSH_IMM_DEV << FSH_IMM_KIND_SHIFT) |
                   ((uint32_t)fsh_devheap.held * DEPTH + k);
    int rc = fsh_rma_write(&fsh_ctx_default, &sync, r, HDR + (op == REQ_PUT ? len : 0), pe,
                           FSH_SEG_HEAP, slot, true, imm);
    if (rc == 0) {
        rc = fsh_progress_wait_track(&sync, "device heap: sending a request");
    }
    return rc;
}

static size_t piece(size_t len, size_t done)
{
    return len - done < fsh_devheap.chunk ? len - done : fsh_devheap.chunk;
}

static int dev_copy(void *dst, const void *src, size_t len)
{
    return fsh_devheap_copy(dst, src, len); /* a wait's polls: through GDRCopy where mapped */
}

/* Into pe's device heap, pipelined: while the target copies chunk i into its GPU, chunk i+1
 * is already on its way into the other slot. */
static int put_staged(uint64_t off, const void *src, size_t len, int pe)
{
    int rc = lease_take(pe);
    for (size_t done = 0; done < len && rc == 0;) {
        size_t n = piece(len, done);
        uint64_t seq;
        rc = claim(pe, REQ_PUT, &seq);
        if (rc == 0) {
            /* From host memory a copy, from GPU memory a device-to-host copy. */
            rc = fsh_cuda_copy((uint8_t *)outslot(seq) + HDR, (const uint8_t *)src + done, n);
        }
        if (rc == 0) {
            rc = post_request(pe, seq, REQ_PUT, off + done, n);
        }
        done += n;
    }
    /* Complete at the target: the last DEPTH requests (all earlier ones were awaited). */
    for (unsigned i = DEPTH; i > 0 && rc == 0; i--) {
        uint64_t q = fsh_devheap.sent >= i - 1 ? fsh_devheap.sent - (i - 1) : 0;
        rc = wait_done(pe, q, REQ_PUT);
    }
    return lease_give(rc);
}

/* From pe's device heap, pipelined: up to DEPTH requests ahead of the chunk being read. */
static int get_staged(struct fsh_ctx *ctx, void *dest, uint64_t off, size_t len, int pe)
{
    int rc = lease_take(pe);
    size_t asked = 0, got = 0;
    uint64_t first = 1; /* the sequence number of chunk 0 */
    while (got < len && rc == 0) {
        while (asked < len && rc == 0 &&
               fsh_devheap.sent + 1 - first < DEPTH + got / fsh_devheap.chunk) {
            uint64_t seq;
            size_t n = piece(len, asked);
            rc = claim(pe, REQ_GET, &seq);
            if (rc == 0) {
                rc = post_request(pe, seq, REQ_GET, off + asked, n);
            }
            asked += n;
        }
        uint64_t seq = first + got / fsh_devheap.chunk;
        size_t n = piece(len, got);
        if (rc == 0) {
            rc = wait_done(pe, seq, REQ_GET);
        }
        uint8_t *bounce = (uint8_t *)outslot(seq) + HDR;
        uint64_t data = in_slot_off((unsigned)fsh_devheap.held, (unsigned)(seq % DEPTH)) + HDR;
        if (rc == 0) {
            rc = fsh_rma_get(ctx, bounce, FSH_SEG_HEAP, data, n, pe, false);
        }
        if (rc == 0) {
            rc = fsh_cuda_copy((uint8_t *)dest + got, bounce, n);
        }
        got += n;
    }
    return lease_give(rc);
}

/* ---------------------------------------------------------------- direct paths */

/* Can the fabric move this transfer itself (dmabuf / FI_HMEM_CUDA path)? The device heap is
 * registered; a local GPU buffer outside it is not (it is bounced), and a host segment that
 * rma.c would reach with memcpy (this PE, a mapped peer) must not meet GPU memory. */
static bool direct_ok(enum fsh_seg seg, uint64_t off, const void *local, int pe)
{
    if (!fsh_devheap.direct) {
        return false;
    }
    const uint8_t *l = local;
    if (fsh_cuda_is_device(local)) {
        bool in_heap = l >= fsh_devheap.base && l < fsh_devheap.base + fsh_devheap.size;
        return in_heap && (seg == FSH_SEG_DEVICE || !fsh_local_addr(pe, seg, off));
    }
    return true;
}

/* One blocking transfer through the fabric, complete at the target on return (split at the
 * provider's largest message). */
static int fabric_rma(bool put, struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off,
                      uint8_t *local, size_t len, int pe)
{
    struct fsh_op_track sync = {0, 0, 0};
    size_t max = fsh_rma_max_write();
    int rc = 0;
    for (size_t done = 0; done < len && rc == 0;) {
        size_t n = len - done < max ? len - done : max;
        rc = put ? fsh_rma_write(ctx, &sync, local + done, n, pe, seg, off + done, false, 0)
                 : fsh_rma_read(ctx, &sync, local + done, n, pe, seg, off + done);
        done += n;
    }
    int wrc = fsh_progress_wait_track(&sync, put ? "device put: waiting for its completion"
                                                 : "device get: waiting for its completion");
    if (rc == 0 && wrc == 0 && put) {
        wrc = fsh_arrive_landed(pe); /* where completions say nothing of the target's memory */
    }
    return rc ? rc : wrc;
}

static void visible(void)
{
    (void)fsh_cuda_flush_rdma();
}

/* ---------------------------------------------------------------- entry points */

static int dev_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                   size_t len, int pe)
{
    uint8_t *at = fsh_devmap_at(seg, off, pe);
    if (at) {
        return fsh_devmap_copy(at, src, len, pe); /* synchronized: complete at the target */
    }
    if (direct_ok(seg, off, src, pe)) {
        return fabric_rma(true, ctx, seg, off, (uint8_t *)src, len, pe);
    }
    int rc = 0;
    fsh_progress_lock();
    if (seg == FSH_SEG_DEVICE && !fsh_devheap.direct) {
        rc = put_staged(off, src, len, pe);
    } else {
        /* A GPU source the fabric does not take (a host segment, or a buffer outside the
         * registered heap): bounced through outbox slot 0, whose last request finished (every
         * staged call ends with its requests done), each piece complete at the target before
         * the next (a signal sent after this call must not overtake the data). */
        uint8_t *bounce = fsh_devheap.outbox + HDR;
        __atomic_add_fetch(&fsh_devheap.bounced, 1, __ATOMIC_RELAXED);
        for (size_t done = 0; done < len && rc == 0;) {
            size_t n = piece(len, done);
            rc = fsh_cuda_copy(bounce, (const uint8_t *)src + done, n);
            if (rc == 0) {
                rc = fabric_rma(true, ctx, seg, off + done, bounce, n, pe);
            }
            done += n;
        }
    }
    fsh_progress_unlock();
    return rc;
}

static int dev_get(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, size_t len,
                   int pe)
{
    uint8_t *at = fsh_devmap_at(seg, off, pe);
    if (at) {
        return fsh_devmap_copy(dest, at, len, pe);
    }
    if (direct_ok(seg, off, dest, pe)) {
        return fabric_rma(false, ctx, seg, off, dest, len, pe);
    }
    int rc = 0;
    fsh_progress_lock();
    if (seg == FSH_SEG_DEVICE && !fsh_devheap.direct) {
        rc = get_staged(ctx, dest, off, len, pe);
    } else {
        /* Into a GPU destination the fabric does not take: bounced through outbox slot 0. */
        uint8_t *bounce = fsh_devheap.outbox + HDR;
        __atomic_add_fetch(&fsh_devheap.bounced, 1, __ATOMIC_RELAXED);
        for (size_t done = 0; done < len && rc == 0;) {
            size_t n = piece(len, done);
            rc = fsh_rma_get(ctx, bounce, seg, off + done, n, pe, false);
            if (rc == 0) {
                rc = fsh_cuda_copy((uint8_t *)dest + done, bounce, n);
            }
            done += n;
        }
    }
    fsh_progress_unlock();
    return rc;
}

static int dev_amo(int op, uint64_t off, const void *value, const void *cond, void *fetch,
                   size_t size, int pe)
{
    fsh_progress_lock(); /* our own device AMOs, and our handler's, one at a time */
    int rc;
    if (pe == fsh_rt.pe) {
        rc = apply_amo(op, off, value, cond, fsh_amo_fetches(op) ? fetch : NULL, size);
        fsh_progress_unlock();
        return rc;
    }
    uint32_t *lock = fsh_devmap_peer_lock(pe);
    if (lock) {
        __atomic_add_fetch(&fsh_devheap.amo_mapped, 1, __ATOMIC_RELAXED);
        rc = fsh_devmap_apply(fsh_devheap.peer[pe], lock, op, off, value, cond,
                              fsh_amo_fetches(op) ? fetch : NULL, size);
        fsh_progress_unlock();
        return rc;
    }
    uint64_t seq;
    rc = lease_take(pe);
    if (rc == 0) {
        rc = claim(pe, REQ_AMO, &seq);
    }
    if (rc == 0) {
        struct req *r = outslot(seq);
        r->amo = (uint32_t)op;
        r->operand = r->compare = 0;
        if (value) {
            memcpy(&r->operand, value, size);
        }
        if (cond) {
            memcpy(&r->compare, cond, size);
        }
        rc = post_request(pe, seq, REQ_AMO, off, size);
    }
    if (rc == 0) {
        rc = wait_done(pe, seq, REQ_AMO);
    }
    if (rc == 0 && fsh_amo_fetches(op) && fetch) {
        /* The old value is in our inbox slot at the target. */
        uint8_t *bounce = (uint8_t *)outslot(seq) + HDR;
        uint64_t at = in_slot_off((unsigned)fsh_devheap.held, (unsigned)(seq % DEPTH)) + HDR;
        rc = fsh_rma_get(&fsh_ctx_default, bounce, FSH_SEG_HEAP, at, size, pe, false);
        if (rc == 0) {
            memcpy(fetch, bounce, size);
        }
    }
    rc = lease_give(rc);
    fsh_progress_unlock();
    return rc;
}

/* Put-with-signal, the signal word in the device heap: in one go where this PE's driver reaches
 * the data's destination (a mapping, or our own memory) and the signal's heap with its AMO lock
 * (ours, or a mapped peer's whose host heap is mapped too); 1 otherwise. */
static int dev_put_signal(enum fsh_seg seg, uint64_t off, const void *src, size_t len,
                          uint64_t soff, int op, uint64_t value, int pe)
{
    uint8_t *heap = pe == fsh_rt.pe ? fsh_devheap.base : fsh_devheap.peer ? fsh_devheap.peer[pe] : NULL;
    uint32_t *lock = pe == fsh_rt.pe ? fsh_devheap.amo_lock : fsh_devmap_peer_lock(pe);
    uint8_t *at = len ? fsh_devmap_at(seg, off, pe) : NULL;
    if (!heap || !lock || (len && !at)) {
        return 1;
    }
    fsh_progress_lock(); /* our device AMOs, and our handler's, one at a time */
    int rc = fsh_devmap_put_signal(at, src, len, heap, lock, op, soff, value);
    fsh_progress_unlock();
    if (pe != fsh_rt.pe) {
        if (len) {
            __atomic_add_fetch(&fsh_devheap.through_map, 1, __ATOMIC_RELAXED);
        }
        __atomic_add_fetch(&fsh_devheap.amo_mapped, 1, __ATOMIC_RELAXED);
    }
    return rc;
}

/* What the operations reach the device heap and GPU buffers by (backend.h), installed by init.c
 * once the heap is on everywhere. visible() only on a direct path: staging copies the data in
 * itself, synchronized, before the request is reported done. */
static const struct fsh_backend backend_staged = {
    .seg = FSH_SEG_DEVICE, .owns = fsh_cuda_is_device, .put = dev_put, .get = dev_get,
    .amo = dev_amo, .put_signal = dev_put_signal, .copy = dev_copy, .visible = NULL,
};
static const struct fsh_backend backend_direct = {
    .seg = FSH_SEG_DEVICE, .owns = fsh_cuda_is_device, .put = dev_put, .get = dev_get,
    .amo = dev_amo, .put_signal = dev_put_signal, .copy = dev_copy, .visible = visible,
};

const struct fsh_backend *fsh_dev_backend(void)
{
    return !fsh_dev_on ? NULL : fsh_devheap.direct ? &backend_direct : &backend_staged;
}

/* ---------------------------------------------------------------- heap */

void *fsh_dev_alloc(size_t size, size_t align)
{
    if (!fsh_dev_on) {
        fsh_err(-ENODEV, "set FABSHMEM_DEVICE_HEAP_SIZE (e.g. 1G) on a host where every PE has a GPU",
                "%s", fsh_devheap.line);
        return NULL;
    }
    return fsh_heap_dev_alloc(size, align);
}

int fsh_dev_free(void *p)
{
    return fsh_heap_dev_free(p);
}

int fsh_dev_memset(void *p, int c, size_t len)
{
    return fsh_cuda_memset(p, c, len);
}

/* ---------------------------------------------------------------- init */

/* Providers that hand a registration to a NIC, where a dmabuf is how GPU memory reaches it.
 * The others (shm, tcp, sockets) copy GPU memory themselves through the CUDA runtime and keep
 * registrations in libfabric's shared MR map (prov/util), which turns a dmabuf back into an
 * address range. */
static bool nic_provider(const char *prov)
{
    static const char *const nic[] = {"efa", "verbs", "cxi", "psm3", "opx", "ucx"};
    for (size_t i = 0; prov && i < sizeof(nic) / sizeof(nic[0]); i++) {
        if (strncmp(prov, nic[i], strlen(nic[i])) == 0) {
            return true;
        }
    }
    return false;
}

/* Why path p cannot be used on this system, or NULL when it can be tried. f: the provider
 * (name, FI_HMEM, FI_MR_VIRT_ADDR); pick: auto is choosing, rather than a forced path. */
static const char *unavailable(int p, const struct fsh_dev_prov *f, bool exportable, bool pick)
{
    if (p == PATH_STAGING) {
        return NULL;
    }
    if (!f->hmem) {
        return "the provider does not list FI_HMEM (a libfabric built without CUDA support, "
               "like Debian's)";
    }
    if (p == PATH_DMABUF) {
        const char *why = fsh_fabric_dmabuf_why_not();
        if (why) {
            return why;
        }
        if (!exportable) {
            return "the CUDA driver cannot export the device heap as a dmabuf "
                   "(cuMemGetHandleForAddressRange: needs driver and kernel dmabuf support)";
        }
        /* libfabric (2.6 and its main branch, prov/util/src/util_mr_map.c) records a dmabuf
         * region's base from mr_iov, which aliases the dmabuf struct: with offset addressing
         * every remote access lands off the region (seen on an H100 with shm). */
        bool nic = nic_provider(f->name);
        if (!nic && !f->virt_addr) {
            return "libfabric's shared MR map misplaces a dmabuf region when remote addresses "
                   "are offsets (no FI_MR_VIRT_ADDR): the data would land in the wrong place";
        }
        if (!nic && pick) {
            return "the provider copies GPU memory itself, so a dmabuf gains nothing over cuda "
                   "(it is for NICs: efa, verbs)";
        }
    }
    return NULL;
}

int fsh_dev_parse_path(const char *word, int *want)
{
    /* Its words (env.c): auto, then the order of enum path. */
    size_t n;
    const char *const *names = fsh_env_words("FABSHMEM_DEVICE_PATH", &n);
    int i;
    int rc = fsh_env_parse_choice("FABSHMEM_DEVICE_PATH", word, names, n, &i);
    *want = rc == 0 ? i - 1 : -1;
    return rc;
}

/* Append "path: reason" to why, the list of paths passed over (n bytes long so far). */
static size_t passed_over(char *why, size_t n, size_t len, int p, const char *no)
{
    return n + (size_t)snprintf(why + n, n < len ? len - n : 0, "%s%s: %s", n ? "; " : "",
                                path_names[p], no);
}

const char *fsh_dev_path(int want, const struct fsh_dev_prov *f, bool exportable, char *why,
                         size_t len)
{
    size_t n = 0;
    why[0] = '\0';
    for (int p = PATH_DMABUF; p >= PATH_STAGING; p--) {
        const char *no = unavailable(p, f, exportable, want < 0);
        if (want >= 0 && p != want) {
            continue;
        }
        if (!no) {
            return path_names[p];
        }
        n = passed_over(why, n, len, p, no);
    }
    return NULL;
}

/* Register the device heap by the first path in order (FABSHMEM_DEVICE_PATH=auto: dmabuf,
 * cuda, staging) that this system allows and whose registration succeeds; a forced path that
 * cannot be had is an error. why collects the reason each better path was passed over. */
static int choose_path(int want, bool exportable, int fd, bool system, char *why, size_t len)
{
    const struct fsh_fabric_attr *a = fsh_fabric_attr();
    struct fsh_dev_prov f = {a->prov, a->has_hmem, a->mr_virt_addr};
    size_t n = 0;
    why[0] = '\0';
    for (int p = PATH_DMABUF; p >= PATH_STAGING; p--) {
        if (want >= 0 && p != want) {
            continue;
        }
        const char *no = unavailable(p, &f, exportable, want < 0);
        int rc = 0;
        if (!no && p != PATH_STAGING) {
            rc = fsh_mr_reg_device(FSH_SEG_DEVICE, fsh_devheap.base, fsh_devheap.size,
                                   fsh_cuda_device(), p == PATH_DMABUF ? fd : -1, system);
            no = rc ? fsh_err_last()->msg : NULL;
        }
        if (!no) {
            fsh_devheap.path = p;
            return 0;
        }
        if (want >= 0) {
            return rc ? rc : fsh_err(-ENOTSUP, "FABSHMEM_DEVICE_PATH=auto takes the best path available (staging works everywhere)",
                                     "FABSHMEM_DEVICE_PATH=%s is not possible here: %s",
                                     path_names[p], no);
        }
        n = passed_over(why, n, len, p, no);
        if (rc != 0) {
            /* Recovered (the reason is in why now): a later error must not be reported as
             * this one, which fsh_err_last() would keep returning. */
            fsh_err_clear();
        }
    }
    return fsh_err(-EIO, "", "no registration path for the device heap"); /* unreachable */
}

int fsh_dev_open(const struct fsh_config *cfg)
{
    if (cfg->FABSHMEM_DEVICE_HEAP_SIZE == 0) {
        return -ENODEV;
    }
    const struct fsh_topo_pe *me = fsh_topo_mine();
    const char *busid = me && me->gpu >= 0 ? fsh_topo_gpu_busid(me->gpu) : NULL;
    return fsh_cuda_open(cfg->FABSHMEM_CUDA_LIB, busid, fsh_rt.local_rank);
}

int fsh_dev_init(const struct fsh_config *cfg, bool everywhere, bool *registered)
{
    *registered = false;
    size_t size = (cfg->FABSHMEM_DEVICE_HEAP_SIZE + 4095) & ~(size_t)4095;
    if (size == 0) {
        return 0;
    }
    if (!everywhere) {
        snprintf(fsh_devheap.line, sizeof(fsh_devheap.line), "device heap: off (%s%s)",
                 fsh_cuda_ready() ? "a peer PE has no GPU" : fsh_cuda_reason(),
                 fsh_cuda_ready() ? "; it is on for every PE or none" : "");
        /* Once for the job; every PE's own reason at info level. */
        if (fsh_rt.pe == 0) {
            FSH_WARN("FABSHMEM_DEVICE_HEAP_SIZE=%zu but the %s", size, fsh_devheap.line);
        } else {
            FSH_INFO("%s", fsh_devheap.line);
        }
        fsh_cuda_close();
        return 0;
    }
    size_t max = fsh_rma_max_write();
    fsh_devheap.chunk = cfg->FABSHMEM_DEVICE_CHUNK; /* at least 1 (env.c) */
    if (max > HDR && fsh_devheap.chunk > max - HDR) {
        fsh_devheap.chunk = max - HDR; /* one request is one fabric write */
    }
    fsh_devheap.slot = slot_bytes(fsh_devheap.chunk);
    /* FABSHMEM_DEVICE_PEERS is 1..FSH_LEASE_MAX_CHUNKS: env.c checks it at load. */
    /* Every PE reserves the same blocks at the same point of init: symmetric. */
    unsigned inboxes = fsh_lease_chunks(fsh_rt.npes, cfg->FABSHMEM_DEVICE_PEERS);
    char what[192];
    snprintf(what, sizeof(what), "the device heap's staging inboxes (%u x %d slots x %zu bytes "
             "of FABSHMEM_DEVICE_CHUNK + header)", inboxes, DEPTH, fsh_devheap.slot);
    int rc =
        fsh_lease_init(&fsh_devheap.pool, FSH_LEASE_DEVICE, inboxes, inbox_bytes(fsh_devheap.slot),
                       on_granted, what, "lower FABSHMEM_DEVICE_CHUNK or FABSHMEM_DEVICE_PEERS");
    if (rc != 0) {
        return rc;
    }
    size_t total = outbox_bytes(fsh_devheap.slot);
    snprintf(what, sizeof(what), "the device heap's staging outbox (%d x %zu bytes)", DEPTH,
             fsh_devheap.slot);
    fsh_devheap.block = fsh_heap_reserve(total, 64, what, "lower FABSHMEM_DEVICE_CHUNK");
    if (!fsh_devheap.block) {
        return fsh_err_last()->code;
    }
    fsh_devheap.outbox = fsh_devheap.block;
    fsh_devheap.probe = (uint64_t *)(fsh_devheap.block + DEPTH * fsh_devheap.slot);
    /* in the probe's 64 bytes */
    fsh_devheap.amo_lock = (uint32_t *)(fsh_devheap.block + DEPTH * fsh_devheap.slot + 32);
    *fsh_devheap.amo_lock = 0;
    enum fsh_seg lseg;
    if (fsh_mr_lookup(fsh_devheap.amo_lock, sizeof(*fsh_devheap.amo_lock), &lseg,
                      &fsh_devheap.amo_lock_off) != 0 ||
        lseg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "the device-AMO lock is not in the symmetric heap");
    }
    fsh_devheap.held = -1;
    fsh_devheap.base = fsh_cuda_alloc(size);
    if (!fsh_devheap.base) {
        return fsh_err_last()->code;
    }
    fsh_devheap.size = size;
    /* FABSHMEM_GDRCOPY: the heap's GPU pages mapped for our own small reads and writes; only
     * "on" makes its absence an error. */
    int gdr_mode = fsh_env_word_index("FABSHMEM_GDRCOPY");
    rc = fsh_gdr_open((enum fsh_gdr_mode)gdr_mode, cfg->FABSHMEM_GDRCOPY_LIB, fsh_devheap.base, size);
    if (rc != 0 && gdr_mode == FSH_GDR_ON) {
        return rc;
    }
    rc = fsh_heap_dev_init(fsh_devheap.base, size);
    if (rc == 0) {
        rc = fsh_progress_register_imm(FSH_IMM_DEV, on_request);
    }
    if (rc != 0) {
        return rc;
    }
    /* Pinned staging slots make the GPU copies DMA directly; optional. */
    (void)fsh_cuda_host_register(fsh_devheap.block, total);
    (void)fsh_cuda_host_register(fsh_devheap.pool.base, inboxes * fsh_devheap.pool.chunk);
    int want;
    rc = fsh_dev_parse_path(cfg->FABSHMEM_DEVICE_PATH, &want);
    int fd = -1;
    bool exportable = fsh_cuda_dmabuf_fd(fsh_devheap.base, size, &fd) == 0;
    bool system = fsh_env_word_index("FABSHMEM_DEVICE_IFACE") == 1; /* cuda, system: env.c */
    if (rc == 0) {
        rc = choose_path(want, exportable, fd, system, fsh_devheap.why, sizeof(fsh_devheap.why));
    }
    if (fd >= 0) {
        close(fd); /* a dmabuf registration holds its own reference */
    }
    if (rc == 0) {
        fsh_devheap.system = system;
        *registered = fsh_devheap.path != PATH_STAGING;
    }
    return rc;
}

int fsh_dev_start(const struct fsh_config *cfg, bool all_registered)
{
    char *why = fsh_devheap.why;
    size_t size = fsh_devheap.size;
    bool system = fsh_devheap.system;
    int rc = 0;
    if (fsh_devheap.path != PATH_STAGING && !all_registered) {
        fsh_mr_dereg_segment(FSH_SEG_DEVICE);
        passed_over(why, strlen(why), sizeof(fsh_devheap.why), fsh_devheap.path,
                    "a peer PE could not register its device heap");
        fsh_devheap.path = PATH_STAGING;
    }
    if (fsh_devheap.path != PATH_STAGING) {
        rc = fsh_mr_exchange_segment(FSH_SEG_DEVICE, cfg->FABSHMEM_TIMEOUT);
    }
    if (rc == 0) {
        rc = fsh_devmap_open(cfg);
    }
    if (rc != 0) {
        return rc;
    }
    if (fsh_devheap.path == PATH_STAGING) {
        fsh_mr_set_segment(FSH_SEG_DEVICE, fsh_devheap.base, size);
        snprintf(fsh_devheap.line, sizeof(fsh_devheap.line),
                 "device heap: %zu bytes at %p on %s; path: staging through %zu-byte slots%s%s%s",
                 size, (void *)fsh_devheap.base, fsh_cuda_reason(), fsh_devheap.chunk,
                 why[0] ? " (" : "", why, why[0] ? ")" : "");
    } else {
        snprintf(fsh_devheap.line, sizeof(fsh_devheap.line),
                 "device heap: %zu bytes at %p on %s; path: %s (registered with %s%s%s%s)", size,
                 (void *)fsh_devheap.base, fsh_cuda_reason(), path_names[fsh_devheap.path],
                 fsh_fabric_attr()->prov,
                 system ? " as host memory, FABSHMEM_DEVICE_IFACE=system" : "",
                 why[0] ? "; passed over: " : "", why);
    }
    fsh_devheap.direct = fsh_devheap.path != PATH_STAGING;
    /* Now, before the program has a stream: cuda.h says why not at the first stream call. */
    fsh_cuda_stream_prepare((size_t)cfg->FABSHMEM_STREAM_SLOTS * FSH_CUDA_STREAM_SLOT_BYTES);
    fsh_dev_on = true;
    return 0;
}

void fsh_dev_fini(void)
{
    if (fsh_dev_on) {
        fsh_mr_dereg_segment(FSH_SEG_DEVICE); /* before the memory goes */
        fsh_heap_dev_fini();
        fsh_cuda_host_unregister(fsh_devheap.block);
        fsh_cuda_host_unregister(fsh_devheap.pool.base);
        fsh_gdr_close(); /* unpinned before the memory goes */
        fsh_cuda_free(fsh_devheap.base);
    }
    fsh_gdr_close(); /* after a failed init too */
    fsh_devmap_close(); /* also after a start that failed once they were mapped */
    fsh_cuda_close();
    fsh_lease_fini(&fsh_devheap.pool);
    memset(&fsh_devheap, 0, sizeof(fsh_devheap));
    fsh_dev_on = false;
    snprintf(fsh_devheap.line, sizeof(fsh_devheap.line), "device heap: off");
}
