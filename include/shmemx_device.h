/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shmemx_device.h: fabshmem's device API: put, put-with-signal, signal wait, fence, quiet, and
 * world and team barriers called from CUDA kernels (docs/device-api.md).
 *
 * Use: after shmem_init, every PE calls shmemx_device_handle(&h) (collective the first time)
 * and passes h to its kernels by value; a team's members add shmemx_device_team(team, &t)
 * for shmemx_dev_team_barrier. The header is all inline code: kernels need no
 * relocatable device code and the program no libcudart; it compiles as C or C++ for the host
 * too, where the same functions run from CPU threads (fabshmem's tests do exactly that).
 *
 * Two ways to a peer:
 * - mapped (its device heap is mapped in this process, h.peer_base[pe] != NULL): loads and
 *   stores through the mapping, then the signal updated with a system-scope release (no
 *   fence between: the release orders the data before it);
 * - proxied (any other peer, or the host heap): a 64-byte descriptor into one of the handle's
 *   rings in host-mapped memory, which this PE's CPU proxy (runtime/proxy.c) drains and posts
 *   through the runtime's put and put-with-signal (signal applied only after its data landed,
 *   on every fabric). Completion comes back as the ring's done count.
 *
 * Rings: channel c has nslots descriptors (a power of two) and three counters: head (slots
 * claimed by producers with a fetch-add), tail (slots the proxy took: slot s may be written
 * once s < tail + nslots, the producers' credits) and done (slots whose operations completed).
 * The proxy writes tail and done (host-mapped, h.chan) and never reads head: head lives where
 * the producers are (h.claim: device memory for a GPU handle), beside the tail and done values
 * a producer last saw. A claim is then an L2 atomic, not a PCIe one; a post reads the
 * host-mapped tail only when the cached one gives no credit, and a quiet reads the host-mapped
 * done only when something was posted since the last done it saw: an idle quiet is a fence
 * and two device-memory loads.
 * Every 8-byte word of a descriptor carries, in bit 63, the parity of its lap round the ring
 * (1 on the first lap), so the proxy takes a descriptor only when all eight words are of the
 * lap it expects: a half-written descriptor is never consumed, and no separate valid flag or
 * ordering between the words is needed. Word 7 repeats the slot's sequence number.
 *
 * Errors: the functions return 0 or a negative SHMEMX_DEV_E* code. When the proxy met an
 * error (a peer died, an operation failed), h.error holds it and every wait and post returns
 * SHMEMX_DEV_EPROXY instead of waiting forever (a wait reads it every SHMEMX_DEV_CHECK_EVERY
 * polls); on a GPU the first thread to see it prints one line naming the PE and the errno.
 */
#ifndef SHMEMX_DEVICE_H
#define SHMEMX_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#if !defined(__CUDA_ARCH__)
#include <sched.h>
#include <string.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define SHMEMX_DFN static __host__ __device__ __forceinline__
#define SHMEMX_DEVFN static __device__ __forceinline__
#else
#define SHMEMX_DFN static inline
#endif

/* Return codes. */
#define SHMEMX_DEV_EPROXY (-1) /* the proxy failed (h.error says why); nothing more completes */
#define SHMEMX_DEV_EADDR (-2)  /* an address outside the symmetric heaps */
#define SHMEMX_DEV_EINVAL (-3) /* bad input to a device collective (its handle's error says which) */

/* Descriptor operations (word 0, bits 7..0). */
#define SHMEMX_DEV_OP_PUT 1
#define SHMEMX_DEV_OP_PUT_SIGNAL 2 /* len may be 0: the signal alone */
#define SHMEMX_DEV_OP_FENCE 3      /* what came before is delivered before what comes after */

/* Signal operations, the values of shmem.h's SHMEM_SIGNAL_SET and SHMEM_SIGNAL_ADD. */
#define SHMEMX_DEV_SIGNAL_SET 0
#define SHMEMX_DEV_SIGNAL_ADD 1
/* Comparisons, the values of shmem.h's SHMEM_CMP_*. */
#define SHMEMX_DEV_CMP_EQ 1
#define SHMEMX_DEV_CMP_NE 2
#define SHMEMX_DEV_CMP_GT 3
#define SHMEMX_DEV_CMP_GE 4
#define SHMEMX_DEV_CMP_LT 5
#define SHMEMX_DEV_CMP_LE 6

#define SHMEMX_DEV_TAG (1ULL << 63)
#define SHMEMX_DEV_PAYLOAD (~SHMEMX_DEV_TAG)

struct shmemx_dev_desc {
    uint64_t w[8]; /* 0: op | dseg << 8 | sseg << 12 | sig_op << 16 | pe << 24;  1: dest offset;
                    * 2: source address;  3: length;  4: signal offset;  5, 6: signal value,
                    * low and high 32 bits;  7: the slot's sequence number.  Bit 63: lap tag. */
};

/* A ring's counters the proxy writes (host-mapped). */
struct shmemx_dev_chan {
    uint64_t tail; /* taken by the proxy (credits) */
    uint64_t pad1[7];
    uint64_t done; /* completed by the proxy (quiet) */
    uint64_t pad2[7];
};

/* A ring's producer side, which the proxy never reads: device memory for a GPU handle, host
 * memory for a host handle. tail_seen and done_seen only ever hold values tail and done had
 * (both grow), so they are lower bounds a producer may trust without reading the ring's. */
struct shmemx_dev_claim {
    uint64_t head;      /* claimed by producers */
    uint64_t tail_seen; /* the largest tail a producer read */
    uint64_t done_seen; /* the largest done a producer read */
    uint64_t pad[5];
};

/* The handle: plain data, passed by value. Pointers are addresses the caller's side (kernel
 * or host thread) can use. */
typedef struct shmemx_device {
    int pe, npes;
    int nchan;          /* channels (rings) */
    int channel;        /* ring a thread posts to: -1 on a GPU means blockIdx mod nchan */
    uint64_t nslots;    /* descriptors per ring, a power of two */
    struct shmemx_dev_chan *chan;  /* nchan counters, host-mapped */
    struct shmemx_dev_claim *claim; /* nchan producer sides (device memory on a GPU) */
    struct shmemx_dev_desc *ring;  /* nchan * nslots descriptors, host-mapped */
    void *const *peer_base;        /* npes entries: pe's window as mapped here, or NULL
                                    * (a GPU handle's table is in device memory) */
    uint64_t win_base, win_size;   /* this PE's window (its device heap) */
    int win_seg;                   /* the window's segment number for the proxy */
    int heap_seg;                  /* the host heap's */
    uint64_t heap_base, heap_size; /* this PE's host symmetric heap (reached by the proxy) */
    uint64_t *barrier;             /* the barrier's symmetric counter (window or heap) */
    uint64_t *epoch;               /* barriers this handle kind entered here (device memory
                                    * for a GPU handle, host memory for a host handle) */
    const uint64_t *error;         /* 0, or errno | (pe + 1) << 32 from the proxy */
} shmemx_device_t;

/* A team for the device barrier (shmemx_device_team): plain data, passed by value. Its PEs
 * are world PEs start + i * stride, i < size; my is this PE's index. sync is this team's
 * symmetric line: word 0 the barrier counter peers add to, word 1 the barriers this PE
 * entered (device memory when the device heap is on). */
typedef struct shmemx_dev_team {
    int start, stride, size, my;
    uint64_t *sync;
} shmemx_dev_team_t;

/* ---- memory order: system scope on a GPU, __atomic builtins on the host ---- */

SHMEMX_DFN uint64_t shmemx_dev_load_(const uint64_t *p)
{
#if defined(__CUDA_ARCH__)
    uint64_t v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

SHMEMX_DFN void shmemx_dev_store_(uint64_t *p, uint64_t v)
{
#if defined(__CUDA_ARCH__)
    asm volatile("st.release.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

/* A descriptor word: each is taken only with its lap tag, so no order among them is needed;
 * the fence before the claim orders the source data before all of them. (Release on the host
 * costs nothing on x86 and tells TSan what the fence does.) */
SHMEMX_DFN void shmemx_dev_store_word_(uint64_t *p, uint64_t v)
{
#if defined(__CUDA_ARCH__)
    asm volatile("st.relaxed.sys.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

SHMEMX_DFN void shmemx_dev_add_(uint64_t *p, uint64_t v)
{
#if defined(__CUDA_ARCH__)
    asm volatile("red.release.sys.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
#endif
}

/* The producer side (h.claim) is touched only by the producers of one handle kind: GPU
 * threads of one device, or CPU threads. So GPU scope: L2 atomics and loads, no PCIe. */
SHMEMX_DFN uint64_t shmemx_dev_claim_add_(uint64_t *p)
{
#if defined(__CUDA_ARCH__)
    return (uint64_t)atomicAdd((unsigned long long *)p, 1ULL);
#else
    return __atomic_fetch_add(p, 1, __ATOMIC_ACQ_REL);
#endif
}

/* A producer-side word with acquire at GPU scope: what the thread that raised it had seen
 * (the proxy's release of tail or done, acquired at system scope) is seen here too. */
SHMEMX_DFN uint64_t shmemx_dev_claim_load_(const uint64_t *p)
{
#if defined(__CUDA_ARCH__)
    uint64_t v;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/* Raise a producer-side word to at least v (a release: it passes on what this thread saw). */
SHMEMX_DFN void shmemx_dev_claim_max_(uint64_t *p, uint64_t v)
{
#if defined(__CUDA_ARCH__)
    asm volatile("red.release.gpu.max.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (old < v &&
           !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
#endif
}

/* Everything this thread wrote (data through a mapping, a source buffer) is visible system
 * wide before what it writes next. */
SHMEMX_DFN void shmemx_dev_fence_system_(void)
{
#if defined(__CUDA_ARCH__)
    __threadfence_system();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* 0 while the proxy is well; else SHMEMX_DEV_EPROXY, announced once by a GPU thread. */
SHMEMX_DFN int shmemx_dev_check_(shmemx_device_t h)
{
    uint64_t e = shmemx_dev_load_(h.error);
    if (e == 0) {
        return 0;
    }
#if defined(__CUDA_ARCH__)
    printf("fabshmem device API: PE %d: the proxy failed (errno %d, PE %d); its host log says "
           "why\n",
           h.pe, (int)(uint32_t)e, (int)(e >> 32) - 1);
#endif
    return SHMEMX_DEV_EPROXY;
}

/* Polls of a wait between two reads of the error word (a power of two), and polls a GPU
 * thread spins before it starts to sleep between them. */
#define SHMEMX_DEV_CHECK_EVERY 256u
#define SHMEMX_DEV_SPIN 128u

/* One unsuccessful poll of a wait; *polls counts them (0 before the first). The error word is
 * in host-mapped memory: on a GPU each read of it crosses PCIe (about a microsecond), while
 * the words waited on (a signal in the device heap, a ring counter) may be local, and a value
 * landing during that read would be seen that much later. So it is read once every
 * SHMEMX_DEV_CHECK_EVERY polls (a dead proxy is still reported, some hundred microseconds
 * later). A GPU thread spins the first SHMEMX_DEV_SPIN polls, then sleeps a little between
 * them; a CPU thread (the tests' producers, on few cores) yields every time. */
SHMEMX_DFN int shmemx_dev_miss_(shmemx_device_t h, uint32_t *polls)
{
    uint32_t n = ++*polls;
    if (n % SHMEMX_DEV_CHECK_EVERY == 0 && shmemx_dev_check_(h) != 0) {
        return SHMEMX_DEV_EPROXY;
    }
#if defined(__CUDA_ARCH__)
    if (n > SHMEMX_DEV_SPIN) {
        __nanosleep(64);
    }
#else
    sched_yield();
#endif
    return 0;
}

/* ---- addresses ---- */

/* The segment and offset of symmetric address p (n bytes), or -1. */
SHMEMX_DFN int shmemx_dev_where_(shmemx_device_t h, const void *p, size_t n, uint64_t *off)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    if (a >= h.win_base && a - h.win_base <= h.win_size && n <= h.win_size - (a - h.win_base)) {
        *off = a - h.win_base;
        return h.win_seg;
    }
    if (a >= h.heap_base && a - h.heap_base <= h.heap_size &&
        n <= h.heap_size - (a - h.heap_base)) {
        *off = a - h.heap_base;
        return h.heap_seg;
    }
    return -1;
}

/* pe's window as mapped here, or NULL. (A GPU handle's table is in device memory: one read,
 * an L2 hit, not a PCIe round trip.) */
SHMEMX_DFN char *shmemx_dev_peer_(shmemx_device_t h, int pe)
{
    return h.peer_base ? (char *)h.peer_base[pe] : NULL;
}

/* pe's copy of window offset off, mapped here, or NULL. */
SHMEMX_DFN void *shmemx_dev_mapped_(shmemx_device_t h, int seg, uint64_t off, int pe)
{
    char *b = seg == h.win_seg ? shmemx_dev_peer_(h, pe) : NULL;
    return b ? b + off : NULL;
}

/* Where both ends are 8-byte aligned: 8-byte words (one store for 8 bytes), then the tail's
 * bytes; otherwise bytes. */
SHMEMX_DFN void shmemx_dev_copy_(void *dst, const void *src, size_t n)
{
#if defined(__CUDA_ARCH__)
    size_t words = ((uintptr_t)dst | (uintptr_t)src) % 8 == 0 ? n / 8 : 0;
    for (size_t i = 0; i < words; i++) {
        ((uint64_t *)dst)[i] = ((const uint64_t *)src)[i];
    }
    for (size_t i = words * 8; i < n; i++) {
        ((char *)dst)[i] = ((const char *)src)[i];
    }
#else
    memcpy(dst, src, n);
#endif
}

SHMEMX_DFN void shmemx_dev_signal_apply_(uint64_t *sig, uint64_t value, int op)
{
    if (op == SHMEMX_DEV_SIGNAL_ADD) {
        shmemx_dev_add_(sig, value);
    } else {
        shmemx_dev_store_(sig, value);
    }
}

/* ---- the ring producer ---- */

SHMEMX_DFN struct shmemx_dev_chan *shmemx_dev_chan_(shmemx_device_t h, int *c)
{
    int k = h.channel;
#if defined(__CUDA_ARCH__)
    if (k < 0) {
        k = (int)((blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)) %
                  (unsigned)h.nchan);
    }
#else
    if (k < 0) {
        k = 0;
    }
#endif
    *c = k % h.nchan;
    return &h.chan[*c];
}

/* Write descriptor words w[0..6] into the next slot of this thread's ring; *ticket: its
 * sequence number there. Waits for a credit while the ring is full. */
SHMEMX_DFN int shmemx_dev_post_(shmemx_device_t h, const uint64_t w[7], uint64_t *ticket)
{
    int c;
    struct shmemx_dev_chan *ch = shmemx_dev_chan_(h, &c);
    struct shmemx_dev_claim *cl = &h.claim[c];
    /* The source data (and anything stored before) is visible before the descriptor is. */
    shmemx_dev_fence_system_();
    uint64_t s = shmemx_dev_claim_add_(&cl->head);
    if (s - shmemx_dev_claim_load_(&cl->tail_seen) >= h.nslots) {
        /* No credit as last seen: read the proxy's tail (host-mapped) until there is one. */
        uint32_t polls = 0;
        uint64_t t;
        while (s - (t = shmemx_dev_load_(&ch->tail)) >= h.nslots) {
            if (shmemx_dev_miss_(h, &polls) != 0) {
                return SHMEMX_DEV_EPROXY;
            }
        }
        shmemx_dev_claim_max_(&cl->tail_seen, t);
    }
    struct shmemx_dev_desc *d = &h.ring[(uint64_t)c * h.nslots + (s & (h.nslots - 1))];
    uint64_t tag = (s / h.nslots) & 1 ? 0 : SHMEMX_DEV_TAG;
    for (int i = 0; i < 7; i++) {
        shmemx_dev_store_word_(&d->w[i], (w[i] & SHMEMX_DEV_PAYLOAD) | tag);
    }
    shmemx_dev_store_word_(&d->w[7], (s & SHMEMX_DEV_PAYLOAD) | tag);
    *ticket = s;
    return 0;
}

/* Wait until the proxy completed slot `upto - 1` of ring c (and all before). The host-mapped
 * done word is read only when the one last seen is short of upto. */
SHMEMX_DFN int shmemx_dev_wait_done_(shmemx_device_t h, int c, uint64_t upto)
{
    struct shmemx_dev_claim *cl = &h.claim[c];
    if (shmemx_dev_claim_load_(&cl->done_seen) >= upto) {
        return 0;
    }
    uint32_t polls = 0;
    uint64_t d;
    while ((d = shmemx_dev_load_(&h.chan[c].done)) < upto) {
        if (shmemx_dev_miss_(h, &polls) != 0) {
            return SHMEMX_DEV_EPROXY;
        }
    }
    shmemx_dev_claim_max_(&cl->done_seen, d);
    return 0;
}

/* Slots claimed on ring c so far (relaxed: this thread's own claims, and its block's before a
 * bar.sync, are seen by coherence; a smaller done_seen read beside it only sends the caller to
 * the host-mapped done). */
SHMEMX_DFN uint64_t shmemx_dev_head_(shmemx_device_t h, int c)
{
#if defined(__CUDA_ARCH__)
    uint64_t v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(&h.claim[c].head) : "memory");
    return v;
#else
    return __atomic_load_n(&h.claim[c].head, __ATOMIC_ACQUIRE);
#endif
}

/* One operation to pe. */
SHMEMX_DFN int shmemx_dev_op_(shmemx_device_t h, int op, void *dest, const void *src, size_t n,
                              uint64_t *sig, uint64_t value, int sig_op, int pe, int blocking)
{
    uint64_t doff = 0, soff = 0;
    int dseg = 0, sseg = 0;
    if (n > 0 && (dseg = shmemx_dev_where_(h, dest, n, &doff)) < 0) {
        return SHMEMX_DEV_EADDR;
    }
    if (op == SHMEMX_DEV_OP_PUT_SIGNAL && (sseg = shmemx_dev_where_(h, sig, 8, &soff)) < 0) {
        return SHMEMX_DEV_EADDR;
    }
    char *pb = shmemx_dev_peer_(h, pe); /* read once */
    char *ld = n > 0 && pb && dseg == h.win_seg ? pb + doff : NULL;
    uint64_t *ls = op == SHMEMX_DEV_OP_PUT_SIGNAL && pb && sseg == h.win_seg
                       ? (uint64_t *)(pb + soff)
                       : NULL;
    if ((n == 0 || ld) && (op != SHMEMX_DEV_OP_PUT_SIGNAL || ls)) {
        if (n > 0) {
            shmemx_dev_copy_(ld, src, n);
        }
        if (ls) {
            /* The data before the signal, with no fence between them: the signal update is
             * itself a release at system scope (st.release.sys, red.release.sys.add; on the
             * host a release atomic). In the PTX memory model a release orders every memory
             * operation that precedes it in this thread's program order (and, cumulatively,
             * every one this thread observed) before it, for any thread that observes the new
             * value with an acquire at a scope containing both (the waiter's ld.acquire.sys):
             * the C++ release-store mapping of the PTX atomics ABI. The fence.sc.sys
             * (__threadfence_system) that stood here added only the sequential consistency
             * of fences with each other, which no waiter relies on, and a second MEMBAR.SYS.
             * The block form fences once more in its thread 0, after its bar.sync
             * (shmemx_dev_put_signal_nbi_block). */
            shmemx_dev_signal_apply_(ls, value, sig_op);
        }
        return 0;
    }
    uint64_t w[7] = {(uint64_t)op | (uint64_t)dseg << 8 | (uint64_t)sseg << 12 |
                         (uint64_t)sig_op << 16 | (uint64_t)(uint32_t)pe << 24,
                     doff, (uint64_t)(uintptr_t)src, (uint64_t)n, soff, value & 0xffffffffu,
                     value >> 32};
    uint64_t t;
    int rc = shmemx_dev_post_(h, w, &t);
    if (rc == 0 && blocking) {
        int c;
        shmemx_dev_chan_(h, &c);
        rc = shmemx_dev_wait_done_(h, c, t + 1);
    }
    return rc;
}

/* ---- the API: thread forms (host and device) ---- */

/* n bytes from src (this PE's memory the GPU and the proxy can read: device memory) to
 * symmetric dest on pe. nbi: src may be reused after shmemx_dev_quiet. */
SHMEMX_DFN int shmemx_dev_put_nbi(shmemx_device_t h, void *dest, const void *src, size_t n,
                                  int pe)
{
    return n ? shmemx_dev_op_(h, SHMEMX_DEV_OP_PUT, dest, src, n, NULL, 0, 0, pe, 0) : 0;
}

SHMEMX_DFN int shmemx_dev_put(shmemx_device_t h, void *dest, const void *src, size_t n, int pe)
{
    return n ? shmemx_dev_op_(h, SHMEMX_DEV_OP_PUT, dest, src, n, NULL, 0, 0, pe, 1) : 0;
}

/* The data, then sig on pe updated (SET or ADD) once the data is visible there. */
SHMEMX_DFN int shmemx_dev_put_signal_nbi(shmemx_device_t h, void *dest, const void *src,
                                         size_t n, uint64_t *sig, uint64_t value, int sig_op,
                                         int pe)
{
    return shmemx_dev_op_(h, SHMEMX_DEV_OP_PUT_SIGNAL, dest, src, n, sig, value, sig_op, pe, 0);
}

SHMEMX_DFN int shmemx_dev_put_signal(shmemx_device_t h, void *dest, const void *src, size_t n,
                                     uint64_t *sig, uint64_t value, int sig_op, int pe)
{
    return shmemx_dev_op_(h, SHMEMX_DEV_OP_PUT_SIGNAL, dest, src, n, sig, value, sig_op, pe, 1);
}

SHMEMX_DFN int shmemx_dev_cmp_(uint64_t v, int cmp, uint64_t x)
{
    switch (cmp) {
    case SHMEMX_DEV_CMP_EQ: return v == x;
    case SHMEMX_DEV_CMP_NE: return v != x;
    case SHMEMX_DEV_CMP_GT: return v > x;
    case SHMEMX_DEV_CMP_LE: return v <= x;
    case SHMEMX_DEV_CMP_LT: return v < x;
    case SHMEMX_DEV_CMP_GE: return v >= x;
    default: return v <= x;
    }
}

/* Wait until this PE's signal word *sig compares true with value; *seen (may be NULL) gets
 * the word's value then. */
SHMEMX_DFN int shmemx_dev_signal_wait_until(shmemx_device_t h, uint64_t *sig, int cmp,
                                            uint64_t value, uint64_t *seen)
{
    uint64_t v;
    uint32_t polls = 0;
    while (!shmemx_dev_cmp_(v = shmemx_dev_load_(sig), cmp, value)) {
        if (shmemx_dev_miss_(h, &polls) != 0) {
            return SHMEMX_DEV_EPROXY;
        }
    }
    if (seen) {
        *seen = v;
    }
    return 0;
}

/* Operations of this thread to one PE are delivered in order across the fence. */
SHMEMX_DFN int shmemx_dev_fence(shmemx_device_t h)
{
    shmemx_dev_fence_system_();
    uint64_t w[7] = {SHMEMX_DEV_OP_FENCE, 0, 0, 0, 0, 0, 0};
    uint64_t t;
    return shmemx_dev_post_(h, w, &t);
}

/* Every operation posted so far on this thread's ring (its block's on a GPU) has completed:
 * the data and signals are visible at their targets, and sources may be reused. With nothing
 * posted since the last completion a producer saw: the fence and two device-memory loads. */
SHMEMX_DFN int shmemx_dev_quiet(shmemx_device_t h)
{
    int c;
    shmemx_dev_chan_(h, &c);
    shmemx_dev_fence_system_();
    return shmemx_dev_wait_done_(h, c, shmemx_dev_head_(h, c));
}

/* Quiet of every ring of this PE. */
SHMEMX_DFN int shmemx_dev_quiet_all(shmemx_device_t h)
{
    shmemx_dev_fence_system_();
    for (int c = 0; c < h.nchan; c++) {
        int rc = shmemx_dev_wait_done_(h, c, shmemx_dev_head_(h, c));
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* A barrier of all PEs: called by one thread per PE (the block form: one block). Completes
 * every operation this PE posted before it (quiet of every ring). */
SHMEMX_DFN int shmemx_dev_barrier_all(shmemx_device_t h)
{
    int rc = shmemx_dev_quiet_all(h);
    if (rc != 0 || h.npes == 1) {
        return rc;
    }
    uint64_t e = *h.epoch + 1;
    *h.epoch = e;
    for (int i = 1; i < h.npes && rc == 0; i++) {
        int pe = (h.pe + i) % h.npes;
        rc = shmemx_dev_op_(h, SHMEMX_DEV_OP_PUT_SIGNAL, NULL, NULL, 0, h.barrier, 1,
                            SHMEMX_DEV_SIGNAL_ADD, pe, 0);
    }
    if (rc == 0) {
        rc = shmemx_dev_signal_wait_until(h, h.barrier, SHMEMX_DEV_CMP_GE,
                                          e * (uint64_t)(h.npes - 1), NULL);
    }
    return rc;
}

/* A barrier of team t: called by one thread of every member PE (the block form: one block).
 * Completes every operation this PE posted before it (quiet of every ring), then adds 1 to
 * every other member's counter and waits until its own counter has every other member's
 * arrivals for this barrier. Correct for strided teams and for a team of one PE (the quiet
 * alone). */
SHMEMX_DFN int shmemx_dev_team_barrier(shmemx_device_t h, shmemx_dev_team_t t)
{
    if (t.my < 0 || t.my >= t.size || !t.sync) {
        return SHMEMX_DEV_EADDR; /* not a member, or no team handle */
    }
    int rc = shmemx_dev_quiet_all(h);
    if (rc != 0 || t.size == 1) {
        return rc;
    }
    uint64_t e = t.sync[1] + 1; /* only this PE's barrier thread touches it */
    t.sync[1] = e;
    for (int i = 1; i < t.size && rc == 0; i++) {
        int pe = t.start + ((t.my + i) % t.size) * t.stride;
        rc = shmemx_dev_op_(h, SHMEMX_DEV_OP_PUT_SIGNAL, NULL, NULL, 0, &t.sync[0], 1,
                            SHMEMX_DEV_SIGNAL_ADD, pe, 0);
    }
    if (rc == 0) {
        rc = shmemx_dev_signal_wait_until(h, &t.sync[0], SHMEMX_DEV_CMP_GE,
                                          e * (uint64_t)(t.size - 1), NULL);
    }
    return rc;
}

/* ---- warp and block forms (GPU only): every thread of the warp / block calls with the same
 * arguments; the data moves in parallel over a mapping, one descriptor goes to a proxy. ---- */
#if defined(__CUDACC__)

SHMEMX_DEVFN int shmemx_dev_coll_put_nbi_(shmemx_device_t h, void *dest, const void *src,
                                          size_t n, int pe, unsigned me, unsigned nthreads,
                                          int *leader_rc)
{
    uint64_t doff;
    int seg = shmemx_dev_where_(h, dest, n, &doff);
    char *ld = seg < 0 ? NULL : (char *)shmemx_dev_mapped_(h, seg, doff, pe);
    if (seg >= 0 && ld) {
        size_t words = (((uintptr_t)ld | (uintptr_t)src) % 8 == 0) ? n / 8 : 0;
        for (size_t i = me; i < words; i += nthreads) {
            ((uint64_t *)ld)[i] = ((const uint64_t *)src)[i];
        }
        for (size_t i = words * 8 + me; i < n; i += nthreads) {
            ld[i] = ((const char *)src)[i];
        }
        return 0;
    }
    if (me == 0) {
        *leader_rc = shmemx_dev_put_nbi(h, dest, src, n, pe);
    }
    return 1; /* the leader's result decides */
}

SHMEMX_DEVFN unsigned shmemx_dev_tid_(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

SHMEMX_DEVFN int shmemx_dev_put_nbi_warp(shmemx_device_t h, void *dest, const void *src,
                                         size_t n, int pe)
{
    unsigned lane = shmemx_dev_tid_() % 32;
    int rc = 0;
    __syncwarp();
    int lead = shmemx_dev_coll_put_nbi_(h, dest, src, n, pe, lane, 32, &rc);
    __syncwarp();
    return lead ? __shfl_sync(0xffffffffu, rc, 0) : 0;
}

SHMEMX_DEVFN int shmemx_dev_put_nbi_block(shmemx_device_t h, void *dest, const void *src,
                                          size_t n, int pe)
{
    __shared__ int shmemx_dev_block_rc;
    unsigned me = shmemx_dev_tid_(), nt = blockDim.x * blockDim.y * blockDim.z;
    int rc = 0;
    __syncthreads();
    int lead = shmemx_dev_coll_put_nbi_(h, dest, src, n, pe, me, nt, &rc);
    if (me == 0) {
        shmemx_dev_block_rc = lead ? rc : 0;
    }
    __syncthreads();
    return shmemx_dev_block_rc;
}

/* The block's data, then one signal (mapped: thread 0's release after the block's barrier). */
SHMEMX_DEVFN int shmemx_dev_put_signal_nbi_block(shmemx_device_t h, void *dest,
                                                 const void *src, size_t n, uint64_t *sig,
                                                 uint64_t value, int sig_op, int pe)
{
    __shared__ int shmemx_dev_block_src;
    uint64_t doff;
    int seg = shmemx_dev_where_(h, dest, n, &doff);
    unsigned me = shmemx_dev_tid_();
    int rc = 0;
    if (seg >= 0 && shmemx_dev_mapped_(h, seg, doff, pe)) {
        /* Every thread's stores, then (put_nbi_block's closing bar.sync) thread 0's signal,
         * a release at system scope: the barrier orders the other threads' stores before
         * everything thread 0 does after it (CTA-scope synchronization), and the release is
         * cumulative, so a waiter that acquires the signal sees all of them; no per-thread
         * fence is needed. Thread 0 still fences once at system scope before it signals, as
         * the cooperative-groups grid barrier does after its bar.sync: the block form has not
         * run on a GPU since the per-thread fences went, and one fence per block is cheap
         * beside the block's data. */
        shmemx_dev_put_nbi_block(h, dest, src, n, pe);
        if (me == 0) {
            shmemx_dev_fence_system_();
            rc = shmemx_dev_put_signal_nbi(h, NULL, NULL, 0, sig, value, sig_op, pe);
        }
    } else {
        __syncthreads();
        if (me == 0) {
            rc = shmemx_dev_put_signal_nbi(h, dest, src, n, sig, value, sig_op, pe);
        }
    }
    if (me == 0) {
        shmemx_dev_block_src = rc;
    }
    __syncthreads();
    return shmemx_dev_block_src;
}

SHMEMX_DEVFN int shmemx_dev_quiet_block(shmemx_device_t h)
{
    __shared__ int shmemx_dev_block_qrc;
    __syncthreads();
    if (shmemx_dev_tid_() == 0) {
        shmemx_dev_block_qrc = shmemx_dev_quiet(h);
    }
    __syncthreads();
    return shmemx_dev_block_qrc;
}

SHMEMX_DEVFN int shmemx_dev_barrier_all_block(shmemx_device_t h)
{
    __shared__ int shmemx_dev_block_brc;
    __syncthreads();
    if (shmemx_dev_tid_() == 0) {
        shmemx_dev_block_brc = shmemx_dev_barrier_all(h);
    }
    __syncthreads();
    return shmemx_dev_block_brc;
}

SHMEMX_DEVFN int shmemx_dev_team_barrier_block(shmemx_device_t h, shmemx_dev_team_t t)
{
    __shared__ int shmemx_dev_block_trc;
    __syncthreads();
    if (shmemx_dev_tid_() == 0) {
        shmemx_dev_block_trc = shmemx_dev_team_barrier(h, t);
    }
    __syncthreads();
    return shmemx_dev_block_trc;
}

#endif /* __CUDACC__ */

#ifdef __cplusplus
}
#endif

/* The host side: the handle, after shmem_init. Collective the first time (it allocates the
 * barrier's symmetric word and starts the proxy). 0, or -1 with a warning saying why. */
#ifdef __cplusplus
extern "C" {
#endif
int shmemx_device_handle(shmemx_device_t *h);
/* The same rings addressed from CPU threads (the tests' producers; equal to the above on a
 * host without a GPU). */
int shmemx_device_handle_host(shmemx_device_t *h);
/* A device barrier's handle for team (a shmem_team_t, which is struct fsh_team *), after
 * shmemx_device_handle: collective over the team's members (its PEs
 * agree on one of a fixed number of symmetric lines, zero it, and synchronize). The team's
 * world PEs must be start + i * stride (every split of the world team is). 0, or -1 with a
 * warning saying why. */
struct fsh_team;
int shmemx_device_team(struct fsh_team *team, shmemx_dev_team_t *t);
/* The team handle's line returned (after the team's last device barrier, on every member). */
void shmemx_device_team_free(shmemx_dev_team_t *t);
/* This PE's proxy since it started: descriptors taken, operations posted for them (fewer where
 * adjacent contiguous puts were merged), rounds. Zeros before the first handle. */
void shmemx_device_proxy_stats(uint64_t *descs, uint64_t *posts, uint64_t *rounds);
#ifdef __cplusplus
}
#endif

#endif
