/*
 * devmem.c: the device symmetric heap and the staging protocol that moves data to and from it.
 *
 * Owns the device heap (FSH_SEG_DEVICE: one cuMemAlloc per PE, carved by the deterministic
 * allocator's second instance), the choice of registration path, and the staging slots.
 *
 * Path choice (printed by SHMEM_INFO=1 and fabshmem-info --doctor): GPU memory can be handed to
 * the NIC as a dmabuf (FI_MR_DMABUF, libfabric >= 1.20) or with iface FI_HMEM_CUDA, both only
 * when the provider lists FI_HMEM. Neither is implemented yet: this file records why each is or
 * is not possible and always takes the staging path, which works on every provider.
 *
 * Staging protocol. Each PE owns, in its (registered) symmetric heap, DEPTH (2) inbox slots per
 * source PE (64-byte header + FABSHMEM_DEVICE_CHUNK bytes), DEPTH outbox slots, and
 * done[src][k], the sequence number of the last request from src in slot k it finished. s's
 * q-th request to t uses slot k = q mod DEPTH and is one fabric write of header (+ data, for a
 * put) from s's outbox[k] into t's inbox[s][k], with immediate data naming (s, k) (kind
 * FSH_IMM_DEV). t's progress engine gets that event only once the whole write landed; it
 * copies the data into its GPU (put) or its GPU's data into the slot (get), synchronizes the
 * copy, then stores done[s][k] = q with release order. s learns it by reading done[s][k] from
 * t (one 8-byte read per poll, or a load when t's heap is mapped here), and for a get then
 * reads the slot's data. Request q is only sent once q - DEPTH is done (and, for a get, its
 * data read), so a slot is never overwritten early, whatever order events arrive in.
 * Pipelining: while t copies chunk i into its GPU, chunk i+1 travels into the other slot (get:
 * t copies chunk i+1 out while s reads chunk i). Nothing is posted from the event handler.
 *
 * Consequences: a put into a device heap is complete at the target when it returns (so a
 * signal sent after it is applied after the data is visible to the GPU); local device memory
 * is copied directly; a local buffer in GPU memory going to or coming from a host segment is
 * bounced through the outbox. Device memory of a PE on the same node goes through the same
 * protocol (no CUDA IPC). Calls are serialized per PE under the engine lock, and every call
 * waits for its own requests: the path is correct everywhere, not as fast as direct
 * registration would be.
 */
#include "devmem.h"

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda.h"
#include "error.h"
#include "fabric.h"
#include "heap.h"
#include "local.h"
#include "log.h"
#include "progress.h"
#include "rt.h"
#include "topology.h"

#define HDR 64
#define DEPTH 2 /* requests in flight per (source, target) pair: double buffering */
#define DONE_ERR (1ULL << 63)

enum { REQ_PUT = 1, REQ_GET = 2 };

struct req {
    uint64_t seq;
    uint64_t off; /* in the target's device heap */
    uint64_t len;
    uint32_t op;
    uint32_t reserved[9];
};
_Static_assert(sizeof(struct req) == HDR, "a request header is 64 bytes");

static struct {
    uint8_t *base; /* device heap (GPU address) */
    size_t size;
    size_t chunk;  /* data bytes per slot */
    size_t slot;   /* HDR + chunk, rounded up */
    int npes;
    /* symmetric, in the host heap: inbox[npes][DEPTH] slots, outbox[DEPTH] slots,
     * done[npes][DEPTH], probe */
    uint8_t *block;
    uint8_t *inbox, *outbox;
    uint64_t *done, *probe;
    uint64_t inbox_off, done_off;
    uint64_t *sent; /* [pe]: our last request's sequence number to pe (request q uses slot q % DEPTH) */
    char line[512];
} dv = {.line = "device heap: off (FABSHMEM_DEVICE_HEAP_SIZE=0)"};

bool fsh_dev_on;

const char *fsh_dev_describe(void)
{
    return dv.line;
}

size_t fsh_dev_heap_size(void)
{
    return dv.size;
}

static size_t slot_index(int pe, unsigned k)
{
    return (size_t)pe * DEPTH + k;
}

/* ---------------------------------------------------------------- target side */

/* Immediate payload: source PE << 1 | slot. */
static void on_request(uint32_t payload)
{
    unsigned k = payload % DEPTH;
    uint32_t src = payload / DEPTH;
    if ((int)src >= dv.npes) {
        FSH_WARN("device request from PE %u is out of range: dropped", src);
        return;
    }
    size_t i = slot_index((int)src, k);
    struct req *r = (struct req *)(dv.inbox + i * dv.slot);
    uint8_t *data = (uint8_t *)r + HDR;
    int rc = -EINVAL;
    if (r->len <= dv.chunk && r->off <= dv.size && r->len <= dv.size - r->off) {
        rc = r->op == REQ_PUT ? fsh_cuda_copy(dv.base + r->off, data, r->len)
                              : fsh_cuda_copy(data, dv.base + r->off, r->len);
    }
    if (rc != 0) {
        FSH_WARN("device request %s of %llu bytes at offset %llu from PE %u failed: %s",
                 r->op == REQ_PUT ? "put" : "get", (unsigned long long)r->len,
                 (unsigned long long)r->off, src,
                 fsh_err_last() ? fsh_err_last()->msg : "out of the device heap");
    }
    /* Release: the copy above completed (synchronized) before the requester can see this. */
    __atomic_store_n(&dv.done[i], r->seq | (rc ? DONE_ERR : 0), __ATOMIC_RELEASE);
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
    uint64_t off = dv.done_off + slot_index(fsh_rt.pe, (unsigned)(w->seq % DEPTH)) * sizeof(uint64_t);
    const uint64_t *mapped = fsh_local_addr(w->pe, FSH_SEG_HEAP, off);
    uint64_t v;
    if (mapped) {
        v = __atomic_load_n(mapped, __ATOMIC_ACQUIRE);
    } else {
        struct fsh_op_track sync = {0, 0};
        w->err = fsh_rma_read(&fsh_ctx_default, &sync, dv.probe, sizeof(uint64_t), w->pe,
                              FSH_SEG_HEAP, off);
        if (w->err == 0) {
            w->err = fsh_progress_wait_track(&sync, "device heap: reading the target's progress");
        }
        if (w->err != 0) {
            return true;
        }
        v = __atomic_load_n(dv.probe, __ATOMIC_ACQUIRE);
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
    int rc = fsh_progress_wait(acked, &w, op == REQ_PUT ? "device put: waiting for the target to copy into its GPU" : "device get: waiting for the target to copy from its GPU", pe);
    return rc ? rc : w.err;
}

/* The outbox slot of request seq: header, then data. */
static struct req *outslot(uint64_t seq)
{
    return (struct req *)(dv.outbox + (size_t)(seq % DEPTH) * dv.slot);
}

/* Claim the next request to pe: the slot it uses is free once the request DEPTH before it
 * finished (its ack also means its write from our outbox slot completed). */
static int claim(int pe, uint32_t op, uint64_t *seq)
{
    *seq = dv.sent[pe] + 1;
    int rc = *seq > DEPTH ? wait_done(pe, *seq - DEPTH, op) : 0;
    if (rc == 0) {
        dv.sent[pe] = *seq;
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
    struct fsh_op_track sync = {0, 0};
    uint64_t slot = dv.inbox_off + slot_index(fsh_rt.pe, k) * dv.slot;
    uint32_t imm = ((uint32_t)FSH_IMM_DEV << FSH_IMM_KIND_SHIFT) |
                   ((uint32_t)fsh_rt.pe * DEPTH + k);
    int rc = fsh_rma_write(&fsh_ctx_default, &sync, r, HDR + (op == REQ_PUT ? len : 0), pe,
                           FSH_SEG_HEAP, slot, true, imm);
    if (rc == 0) {
        rc = fsh_progress_wait_track(&sync, "device heap: sending a request");
    }
    return rc;
}

static size_t piece(size_t len, size_t done)
{
    return len - done < dv.chunk ? len - done : dv.chunk;
}

int fsh_dev_copy(void *dst, const void *src, size_t len)
{
    return fsh_cuda_copy(dst, src, len);
}

/* Into pe's device heap, pipelined: while the target copies chunk i into its GPU, chunk i+1
 * is already on its way into the other slot. */
static int put_staged(uint64_t off, const void *src, size_t len, int pe)
{
    int rc = 0;
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
        uint64_t q = dv.sent[pe] >= i - 1 ? dv.sent[pe] - (i - 1) : 0;
        rc = wait_done(pe, q, REQ_PUT);
    }
    return rc;
}

/* From pe's device heap, pipelined: up to DEPTH requests ahead of the chunk being read. */
static int get_staged(struct fsh_ctx *ctx, void *dest, uint64_t off, size_t len, int pe)
{
    int rc = 0;
    size_t asked = 0, got = 0;
    uint64_t first = dv.sent[pe] + 1; /* the sequence number of chunk 0 */
    while (got < len && rc == 0) {
        while (asked < len && rc == 0 && dv.sent[pe] + 1 - first < DEPTH + got / dv.chunk) {
            uint64_t seq;
            size_t n = piece(len, asked);
            rc = claim(pe, REQ_GET, &seq);
            if (rc == 0) {
                rc = post_request(pe, seq, REQ_GET, off + asked, n);
            }
            asked += n;
        }
        uint64_t seq = first + got / dv.chunk;
        size_t n = piece(len, got);
        if (rc == 0) {
            rc = wait_done(pe, seq, REQ_GET);
        }
        uint8_t *bounce = (uint8_t *)outslot(seq) + HDR;
        uint64_t data = dv.inbox_off + slot_index(fsh_rt.pe, (unsigned)(seq % DEPTH)) * dv.slot + HDR;
        if (rc == 0) {
            rc = fsh_rma_get(ctx, bounce, FSH_SEG_HEAP, data, n, pe, false);
        }
        if (rc == 0) {
            rc = fsh_cuda_copy((uint8_t *)dest + got, bounce, n);
        }
        got += n;
    }
    return rc;
}

int fsh_dev_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src, size_t len,
                int pe)
{
    if (seg == FSH_SEG_DEVICE && pe == fsh_rt.pe) {
        return fsh_cuda_copy(dv.base + off, src, len);
    }
    int rc = 0;
    fsh_progress_lock();
    if (seg == FSH_SEG_DEVICE) {
        rc = put_staged(off, src, len, pe);
    } else {
        /* A GPU source to a host segment: bounced through outbox slot 0, whose last request
         * finished (every staged call ends with its requests done). */
        uint8_t *bounce = dv.outbox + HDR;
        for (size_t done = 0; done < len && rc == 0;) {
            size_t n = piece(len, done);
            rc = fsh_cuda_copy(bounce, (const uint8_t *)src + done, n);
            if (rc == 0) {
                rc = fsh_rma_put(ctx, seg, off + done, bounce, n, pe, false);
            }
            done += n;
        }
    }
    fsh_progress_unlock();
    return rc;
}

int fsh_dev_get(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, size_t len,
                int pe)
{
    if (seg == FSH_SEG_DEVICE && pe == fsh_rt.pe) {
        return fsh_cuda_copy(dest, dv.base + off, len);
    }
    int rc = 0;
    fsh_progress_lock();
    if (seg == FSH_SEG_DEVICE) {
        rc = get_staged(ctx, dest, off, len, pe);
    } else {
        /* A host segment into a GPU destination: bounced through outbox slot 0. */
        uint8_t *bounce = dv.outbox + HDR;
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

bool fsh_dev_involved_on(enum fsh_seg seg, const void *local)
{
    return seg == FSH_SEG_DEVICE || fsh_cuda_is_device(local);
}

/* ---------------------------------------------------------------- heap */

void *fsh_dev_alloc(size_t size, size_t align)
{
    if (!fsh_dev_on) {
        fsh_err(-ENODEV, "set FABSHMEM_DEVICE_HEAP_SIZE (e.g. 1G) on a host where every PE has a GPU",
                "%s", dv.line);
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

const char *fsh_dev_path(bool prov_hmem, char *why, size_t len)
{
    /* The direct paths are not built (issue 9 stays open for them): say so when the provider
     * would allow one, so a user on such a system knows the staging path is a choice of this
     * version, not of the system. */
    const char *direct = prov_hmem ? "provider lists FI_HMEM, but fabshmem does not register "
                                     "GPU memory directly yet"
                                   : "no FI_HMEM";
#ifdef FI_MR_DMABUF
    const char *dmabuf = direct;
#else
    const char *dmabuf = "this libfabric has no FI_MR_DMABUF (needs 1.20)";
#endif
    snprintf(why, len, "dmabuf: %s; FI_HMEM_CUDA: %s", dmabuf, direct);
    return "staging";
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

int fsh_dev_init(const struct fsh_config *cfg, bool everywhere)
{
    size_t size = (cfg->FABSHMEM_DEVICE_HEAP_SIZE + 4095) & ~(size_t)4095;
    if (size == 0) {
        return 0;
    }
    if (!everywhere) {
        snprintf(dv.line, sizeof(dv.line), "device heap: off (%s%s)",
                 fsh_cuda_ready() ? "a peer PE has no GPU" : fsh_cuda_reason(),
                 fsh_cuda_ready() ? "; it is on for every PE or none" : "");
        /* Once for the job; every PE's own reason at info level. */
        if (fsh_rt.pe == 0) {
            FSH_WARN("FABSHMEM_DEVICE_HEAP_SIZE=%zu but the %s", size, dv.line);
        } else {
            FSH_INFO("%s", dv.line);
        }
        fsh_cuda_close();
        return 0;
    }
    size_t max = fsh_rma_max_write();
    dv.chunk = cfg->FABSHMEM_DEVICE_CHUNK ? cfg->FABSHMEM_DEVICE_CHUNK : 1;
    if (max > HDR && dv.chunk > max - HDR) {
        dv.chunk = max - HDR; /* one request is one fabric write */
    }
    dv.slot = (HDR + dv.chunk + FSH_HEAP_MIN_ALIGN - 1) & ~(size_t)(FSH_HEAP_MIN_ALIGN - 1);
    dv.npes = fsh_rt.npes;
    if ((uint64_t)dv.npes * DEPTH > FSH_IMM_PAYLOAD_MASK) {
        return fsh_err(-ENOTSUP, "run fewer PEs, or leave FABSHMEM_DEVICE_HEAP_SIZE at 0",
                       "the device heap's requests address at most %u PEs",
                       (unsigned)(FSH_IMM_PAYLOAD_MASK / DEPTH));
    }
    size_t n = (size_t)dv.npes;
    /* Every PE allocates the same block at the same point of init: symmetric. */
    size_t slots = (n + 1) * DEPTH;
    size_t total = slots * dv.slot + (n * DEPTH + 1) * sizeof(uint64_t);
    dv.block = fsh_heap_alloc(total, 0);
    if (!dv.block) {
        return fsh_err_last()->code;
    }
    memset(dv.block, 0, total);
    dv.inbox = dv.block;
    dv.outbox = dv.block + n * DEPTH * dv.slot;
    dv.done = (uint64_t *)(dv.block + slots * dv.slot);
    dv.probe = dv.done + n * DEPTH;
    enum fsh_seg seg;
    if (fsh_mr_lookup(dv.block, total, &seg, &dv.inbox_off) != 0 || seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "device staging slots are not in the symmetric heap");
    }
    dv.done_off = dv.inbox_off + slots * dv.slot;
    dv.sent = calloc(n, sizeof(uint64_t));
    if (!dv.sent) {
        return fsh_err(-ENOMEM, "", "out of memory for device staging state of %zu peers", n);
    }
    dv.base = fsh_cuda_alloc(size);
    if (!dv.base) {
        return fsh_err_last()->code;
    }
    dv.size = size;
    int rc = fsh_heap_dev_init(dv.base, size);
    if (rc == 0) {
        rc = fsh_progress_register_imm(FSH_IMM_DEV, on_request);
    }
    if (rc != 0) {
        return rc;
    }
    /* Pinned staging slots make the GPU copies DMA directly; optional. */
    (void)fsh_cuda_host_register(dv.block, total);
    fsh_mr_set_segment(FSH_SEG_DEVICE, dv.base, size);
    /* Would the driver export the heap as a dmabuf (what the dmabuf path will hand the NIC)?
     * Only reported for now. */
    int fd = -1;
    bool dmabuf = fsh_cuda_dmabuf_fd(dv.base, size, &fd) == 0;
    if (dmabuf) {
        close(fd);
    }
    char why[256];
    const char *path = fsh_dev_path(fsh_fabric_attr()->has_hmem, why, sizeof(why));
    snprintf(dv.line, sizeof(dv.line),
             "device heap: %zu bytes at %p on %s; path: %s through %zu-byte slots (%s; the "
             "driver %s export it as a dmabuf)", size, (void *)dv.base, fsh_cuda_reason(), path,
             dv.chunk, why, dmabuf ? "can" : "cannot");
    fsh_dev_on = true;
    return 0;
}

void fsh_dev_fini(void)
{
    if (fsh_dev_on) {
        fsh_mr_set_segment(FSH_SEG_DEVICE, NULL, 0);
        fsh_heap_dev_fini();
        fsh_cuda_host_unregister(dv.block);
        fsh_cuda_free(dv.base);
    }
    fsh_cuda_close();
    free(dv.sent);
    memset(&dv, 0, sizeof(dv));
    fsh_dev_on = false;
    snprintf(dv.line, sizeof(dv.line), "device heap: off");
}
