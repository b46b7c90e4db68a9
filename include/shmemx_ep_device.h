/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shmemx_ep_device.h: the GPU path of the expert-parallel exchange (docs/ep.md, "GPU path"):
 * dispatch and combine, each split into its send and receive halves, as code a kernel runs
 * (and, the same code, CPU threads in fabshmem's tests), over the device API of
 * shmemx_device.h.
 *
 * It keeps the host reference's (shmemx_ep_*, collectives/ep.c) semantics, receive layout,
 * wire protocol and symmetric layout exactly: per call c, a counts message then one slab per
 * destination, each a put-with-signal SET to c; every slot doubled by the parity of c; the
 * receive halves wait per source; no barrier. So a PE on this path and a PE on the host
 * reference exchange with each other, and one handle may switch paths between calls.
 *
 * Use: shmemx_ep_create (with .device_heap = 1 for kernels: its buffers in the device heap),
 * then shmemx_ep_device_handle(ep, &d) on the host (local), and d with a shmemx_device_t h to
 * kernels by value. Each half is a phase function taking (part, nparts): the parts split the
 * work without any grid-wide synchronization (dispatch_send and combine_send by destination
 * or source PE, dispatch_recv by source PE, combine_recv by token), and every part of a
 * phase must run it (with the same nparts) before any part runs the next phase of that
 * handle: kernels one after another on a stream, or CPU threads joined. The call number and
 * the phase live in d.st (device memory for a GPU handle): every part reads them on entry and
 * counts its arrival at its end; the part that arrives last (d.st->arrive reaching nparts)
 * alone advances them, after all parts read them.
 *
 * Forms: thread (shmemx_dev_ep_*: a part is one thread, host or device); block (GPU:
 * shmemx_dev_ep_*_block, a part per block, blockIdx over gridDim, the block's threads
 * copying in parallel); kernels shmemx_dev_ep_*_kernel and launchers
 * shmemx_ep_*_on_stream(h, d, ..., stream) (nvcc only: no host synchronization, capturable
 * in a CUDA graph). Errors: a phase returns 0 or a negative SHMEMX_DEV_E* code; bad input
 * (an expert id out of range or repeated, n > max_tokens, calls out of order, a peer at
 * another call) sets d.st->error (the first error wins; on a GPU one printf names the PE and
 * the cause) and every later phase returns SHMEMX_DEV_EINVAL; shmemx_ep_device_check(ep) on
 * the host ends the job naming cause and fix.
 */
#ifndef SHMEMX_EP_DEVICE_H
#define SHMEMX_EP_DEVICE_H

#include "shmemx_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phases (d.st->state), as the host reference numbers them; SHMEMX_EP_ST_DEVICE marks a
 * call this path made (the halves of one call go through one path). */
#define SHMEMX_EP_ST_IDLE 0u
#define SHMEMX_EP_ST_DSENT 1u
#define SHMEMX_EP_ST_DRECV 2u
#define SHMEMX_EP_ST_CSENT 3u
#define SHMEMX_EP_ST_DEVICE 0x10u

/* Causes in d.st->error (details in err_a, err_b, err_c). */
#define SHMEMX_EP_ERR_EXPERT 1   /* token a, position b names expert c outside [-1, E) */
#define SHMEMX_EP_ERR_REPEAT 2   /* token a names expert c twice */
#define SHMEMX_EP_ERR_NTOKENS 3  /* n = a exceeds max_tokens = b */
#define SHMEMX_EP_ERR_ORDER 4    /* phase b called after state a */
#define SHMEMX_EP_ERR_PEER 5     /* team PE a is at call b where this PE is at call c */
#define SHMEMX_EP_ERR_CORRUPT 6  /* team PE a sent entry b that does not fit its counts */
#define SHMEMX_EP_ERR_PROXY 7    /* the device API failed: code a */
#define SHMEMX_EP_ERR_NULL 8     /* a buffer is NULL with n = a */

/* Symmetric signal kinds, as the reference lays them out. */
#define SHMEMX_EP_SIG_COUNTS 0
#define SHMEMX_EP_SIG_DATA 1
#define SHMEMX_EP_SIG_COMBINE 2
#define SHMEMX_EP_SIG_KINDS 3

/* Most threads a block form takes (its scratch is in shared memory). */
#define SHMEMX_EP_MAX_LANES 1024

struct shmemx_ep_dev_state {
    uint64_t seq;    /* call number of the last dispatch_send (the same on every PE) */
    uint64_t n;      /* tokens of that dispatch */
    uint64_t total;  /* rows its dispatch_recv received */
    uint32_t state;  /* SHMEMX_EP_ST_* */
    uint32_t arrive; /* parts of the running phase that finished */
    int32_t error;   /* 0 or SHMEMX_EP_ERR_* */
    uint32_t claim;  /* taken by the first part that fails */
    int64_t err_a, err_b, err_c;
};

/* The handle: plain data, passed by value. Team PEs; the PE of team PE p in the device API
 * (world numbering) is wpe[p]. Addresses are the caller's side's (device pointers for a GPU
 * handle). */
typedef struct shmemx_ep_device {
    uint64_t max_tokens, hidden, elem_bytes, scale_bytes; /* M, H, dispatch element, scales */
    int num_experts, topk, npes, me, L, kk;               /* L local experts, kk = min(k, L) */
    uint64_t tok_bytes, ce, hb, es, cb, crow; /* token, combine element, entry header, entry,
                                               * counts message, combine row (8-aligned) */
    const int *wpe;
    /* the symmetric block (this PE's addresses) */
    uint64_t *sig;                 /* [2][SIG_KINDS][npes] */
    char *counts, *dslab, *cslab;  /* [2][npes][cb], [2][npes][M][es], [2][npes][M][crow] */
    /* private */
    char *dpack;                   /* [npes][M][es] packed entries per destination */
    uint32_t *cnt_out;             /* [npes][cb/4] counts sent */
    int32_t *tok_ent;              /* [M][npes] entry of token t at PE p, or -1 */
    char *cpack;                   /* [npes][M][crow] partials per source */
    uint32_t *nent;                /* [npes] entries received */
    int32_t *ent_row;              /* [npes][M][kk] output row of each expert of an entry */
    float *ent_w;                  /* [npes][M][kk] */
    int32_t *ent_n;                /* [npes][M] */
    char *out_tokens, *out_scales; /* [rows][tok_bytes], [rows][scale_bytes] */
    int *src_pe, *src_token;       /* [rows] */
    size_t *ecount, *eoffset;      /* [L] */
    uint64_t *cursor;              /* [L][npes] next row of source s in expert e */
    struct shmemx_ep_dev_state *st;
} shmemx_ep_device_t;

/* ---- helpers ---- */

/* The lanes of a part meet (nl > 1: a GPU block; on the host only where a test defines
 * SHMEMX_EP_HOST_SYNC_OR(pred), a barrier of the part's threads returning the OR of pred, to
 * run the block forms' lane logic from CPU threads). */
#if defined(__CUDA_ARCH__)
#define SHMEMX_EP_SYNC_(nl)                                                                     \
    do {                                                                                       \
        if ((nl) > 1) {                                                                        \
            __syncthreads();                                                                   \
        }                                                                                      \
    } while (0)
#elif defined(SHMEMX_EP_HOST_SYNC_OR)
#define SHMEMX_EP_SYNC_(nl)                                                                     \
    do {                                                                                       \
        if ((nl) > 1) {                                                                        \
            (void)SHMEMX_EP_HOST_SYNC_OR(0);                                                   \
        }                                                                                      \
    } while (0)
#else
#define SHMEMX_EP_SYNC_(nl) ((void)(nl))
#endif

SHMEMX_DFN uint64_t *shmemx_dev_ep_sig_(shmemx_ep_device_t d, uint64_t c, int kind, int pe)
{
    return d.sig + ((c & 1) * SHMEMX_EP_SIG_KINDS + (uint64_t)kind) * (uint64_t)d.npes +
           (uint64_t)pe;
}

SHMEMX_DFN char *shmemx_dev_ep_counts_(shmemx_ep_device_t d, uint64_t c, int pe)
{
    return d.counts + ((c & 1) * (uint64_t)d.npes + (uint64_t)pe) * d.cb;
}

SHMEMX_DFN char *shmemx_dev_ep_dslab_(shmemx_ep_device_t d, uint64_t c, int pe)
{
    return d.dslab + ((c & 1) * (uint64_t)d.npes + (uint64_t)pe) * d.max_tokens * d.es;
}

SHMEMX_DFN char *shmemx_dev_ep_cslab_(shmemx_ep_device_t d, uint64_t c, int pe)
{
    return d.cslab + ((c & 1) * (uint64_t)d.npes + (uint64_t)pe) * d.max_tokens * d.crow;
}

SHMEMX_DFN uint32_t shmemx_dev_ep_add32_(uint32_t *p, uint32_t v)
{
#if defined(__CUDA_ARCH__)
    return atomicAdd((unsigned int *)p, v);
#else
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
#endif
}

SHMEMX_DFN int32_t shmemx_dev_ep_error_(shmemx_ep_device_t d)
{
#if defined(__CUDA_ARCH__)
    return *(const volatile int32_t *)&d.st->error;
#else
    return __atomic_load_n(&d.st->error, __ATOMIC_ACQUIRE);
#endif
}

/* The code a phase returns for an error of cause why. */
SHMEMX_DFN int shmemx_dev_ep_code_(int32_t why, int64_t a)
{
    return why == SHMEMX_EP_ERR_PROXY ? (int)a : SHMEMX_DEV_EINVAL;
}

/* Record an error (the first one wins) and return its code. */
SHMEMX_DFN int shmemx_dev_ep_fail_(shmemx_ep_device_t d, int32_t why, int64_t a, int64_t b,
                                   int64_t c)
{
    struct shmemx_ep_dev_state *st = d.st;
#if defined(__CUDA_ARCH__)
    if (atomicCAS((unsigned int *)&st->claim, 0u, 1u) == 0u) {
        st->err_a = a;
        st->err_b = b;
        st->err_c = c;
        __threadfence_system();
        atomicExch((int *)&st->error, (int)why);
        printf("fabshmem ep device path: PE %d (team PE %d): %s (%lld, %lld, %lld); "
               "shmemx_ep_device_check says more\n",
               d.wpe[d.me], d.me,
               why == SHMEMX_EP_ERR_EXPERT    ? "expert id out of range"
               : why == SHMEMX_EP_ERR_REPEAT  ? "expert id repeated in a token"
               : why == SHMEMX_EP_ERR_NTOKENS ? "n exceeds max_tokens"
               : why == SHMEMX_EP_ERR_ORDER   ? "calls out of order"
               : why == SHMEMX_EP_ERR_PEER    ? "a peer is at another call"
               : why == SHMEMX_EP_ERR_CORRUPT ? "a corrupt message"
               : why == SHMEMX_EP_ERR_PROXY   ? "the device API failed"
                                              : "a NULL buffer",
               (long long)a, (long long)b, (long long)c);
    }
#else
    uint32_t zero = 0;
    if (__atomic_compare_exchange_n(&st->claim, &zero, 1u, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        st->err_a = a;
        st->err_b = b;
        st->err_c = c;
        __atomic_store_n(&st->error, why, __ATOMIC_RELEASE);
    }
#endif
    return shmemx_dev_ep_code_(why, a);
}

/* Every lane's rc agreed on (a block's lanes meet here): a lane's own error, else
 * SHMEMX_DEV_EINVAL when another lane failed, else 0. */
SHMEMX_DFN int shmemx_dev_ep_any_(int rc, unsigned nl)
{
#if defined(__CUDA_ARCH__)
    if (nl > 1) {
        int any = __syncthreads_or(rc != 0);
        return rc ? rc : any ? SHMEMX_DEV_EINVAL : 0;
    }
#elif defined(SHMEMX_EP_HOST_SYNC_OR)
    if (nl > 1) {
        int any = SHMEMX_EP_HOST_SYNC_OR(rc != 0);
        return rc ? rc : any ? SHMEMX_DEV_EINVAL : 0;
    }
#endif
    (void)nl;
    return rc;
}

/* A post's result rc (to team PE pe) as every lane of the part sees it: lane 0 records a
 * failure as the device API's; then any lane's error is every lane's. */
SHMEMX_DFN int shmemx_dev_ep_posted_(shmemx_ep_device_t d, int rc, int pe, unsigned lane,
                                     unsigned nl)
{
    if (rc != 0 && lane == 0) {
        rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_PROXY, rc, pe, 0);
    }
    return shmemx_dev_ep_any_(rc, nl);
}

/* The phase may run: no error so far, and the state is one of ok (a bit per state value). */
SHMEMX_DFN int shmemx_dev_ep_enter_(shmemx_ep_device_t d, uint32_t ok, uint32_t phase)
{
    int32_t e = shmemx_dev_ep_error_(d);
    if (e != 0) {
        return shmemx_dev_ep_code_(e, d.st->err_a);
    }
    uint32_t s = d.st->state;
    if (s >= 32 || !((ok >> s) & 1u)) {
        return shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_ORDER, (int64_t)s, (int64_t)phase, 0);
    }
    return 0;
}

/* This part is done (lane 0 only, after the part's last sync): the last part to arrive
 * advances the state; every part read it before it arrived. */
SHMEMX_DFN void shmemx_dev_ep_arrive_(shmemx_ep_device_t d, int nparts, uint32_t state,
                                      uint64_t seq, uint64_t n)
{
    struct shmemx_ep_dev_state *st = d.st;
#if defined(__CUDA_ARCH__)
    __threadfence(); /* this part's writes before its arrival */
#endif
    if (shmemx_dev_ep_add32_(&st->arrive, 1) + 1 == (uint32_t)nparts) {
        st->arrive = 0;
        if (state == (SHMEMX_EP_ST_DSENT | SHMEMX_EP_ST_DEVICE)) {
            st->seq = seq;
            st->n = n;
        }
        st->state = state;
#if defined(__CUDA_ARCH__)
        __threadfence();
#else
        __atomic_thread_fence(__ATOMIC_RELEASE);
#endif
    }
}

/* n bytes, the lanes of a block in parallel (8-byte words where both ends allow). */
SHMEMX_DFN void shmemx_dev_ep_copy_(void *dst, const void *src, size_t n, unsigned lane,
                                    unsigned nl)
{
#if defined(__CUDA_ARCH__)
    size_t words = ((uintptr_t)dst | (uintptr_t)src) % 8 == 0 ? n / 8 : 0;
    for (size_t i = lane; i < words; i += nl) {
        ((uint64_t *)dst)[i] = ((const uint64_t *)src)[i];
    }
    for (size_t i = words * 8 + lane; i < n; i += nl) {
        ((char *)dst)[i] = ((const char *)src)[i];
    }
#else
    size_t chunk = (n + nl - 1) / nl, at = lane * chunk; /* a lane's run */
    if (at < n) {
        memcpy((char *)dst + at, (const char *)src + at, n - at < chunk ? n - at : chunk);
    }
#endif
}

/* A put-with-signal of the part: the block form on a GPU when the block's lanes are all
 * here (mapped peers are copied by all of them), else the thread form by lane 0. */
SHMEMX_DFN int shmemx_dev_ep_put_(shmemx_device_t h, void *dest, const void *src, size_t n,
                                  uint64_t *sig, uint64_t value, int pe, unsigned lane,
                                  unsigned nl)
{
#if defined(__CUDA_ARCH__)
    if (nl > 1) {
        return shmemx_dev_put_signal_nbi_block(h, dest, src, n, sig, value,
                                               SHMEMX_DEV_SIGNAL_SET, pe);
    }
#endif
    (void)nl;
    return lane == 0 ? shmemx_dev_put_signal_nbi(h, dest, src, n, sig, value,
                                                 SHMEMX_DEV_SIGNAL_SET, pe)
                     : 0;
}

/* Wait for source s's signal of kind for call c (lane 0): a value other than c is a peer at
 * another call. */
SHMEMX_DFN int shmemx_dev_ep_wait_(shmemx_device_t h, shmemx_ep_device_t d, uint64_t c,
                                   int kind, int s)
{
    uint64_t seen = 0;
    int rc = shmemx_dev_signal_wait_until(h, shmemx_dev_ep_sig_(d, c, kind, s),
                                          SHMEMX_DEV_CMP_GE, c, &seen);
    if (rc != 0) {
        return shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_PROXY, rc, s, 0);
    }
    if (seen != c) {
        return shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_PEER, s, (int64_t)seen, (int64_t)c);
    }
    return 0;
}

/* ---- element arithmetic, exactly the reference's ---- */

SHMEMX_DFN float shmemx_dev_ep_u2f_(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
#endif
}

SHMEMX_DFN uint32_t shmemx_dev_ep_f2u_(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
#endif
}

/* Element h of a row of combine elements (ce bytes: 4 float, 2 bfloat16). */
SHMEMX_DFN float shmemx_dev_ep_get_(const char *row, uint64_t h, uint64_t ce)
{
    if (ce == 4) {
        return shmemx_dev_ep_u2f_(((const uint32_t *)row)[h]);
    }
    return shmemx_dev_ep_u2f_((uint32_t)((const uint16_t *)row)[h] << 16);
}

/* Round to nearest even (bfloat16), NaN stays NaN: the reference's rounding. */
SHMEMX_DFN void shmemx_dev_ep_set_(char *row, uint64_t h, uint64_t ce, float v)
{
    uint32_t u = shmemx_dev_ep_f2u_(v);
    if (ce == 4) {
        ((uint32_t *)row)[h] = u;
        return;
    }
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        ((uint16_t *)row)[h] = (uint16_t)((u >> 16) | 0x40);
        return;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    ((uint16_t *)row)[h] = (uint16_t)(u >> 16);
}

/* acc + w * x, rounded after the product and after the sum (no fused multiply-add, as the
 * reference's host code). */
SHMEMX_DFN float shmemx_dev_ep_madd_(float acc, float w, float x)
{
#if defined(__CUDA_ARCH__)
    return __fadd_rn(acc, __fmul_rn(w, x));
#else
    return acc + w * x;
#endif
}

/* ---- the phases, written once: part of nparts, lane of nl lanes (1 lane: a thread; on a
 * GPU nl > 1 means every thread of the block, lane = its index). scr: nl + 1 words shared by
 * the lanes. ---- */

SHMEMX_DFN int shmemx_dev_ep_dsend_(shmemx_device_t h, shmemx_ep_device_t d,
                                    const void *tokens, const void *scales,
                                    const int32_t *topk_idx, const float *topk_weights,
                                    size_t n, int part, int nparts, unsigned lane, unsigned nl,
                                    uint32_t *scr)
{
    int N = d.npes, L = d.L, k = d.topk, E = d.num_experts, me = d.me;
    uint64_t M = d.max_tokens, cw = d.cb / 4;
    int rc = shmemx_dev_ep_enter_(d,
                                  1u << SHMEMX_EP_ST_IDLE | 1u << SHMEMX_EP_ST_DRECV |
                                      1u << (SHMEMX_EP_ST_DRECV | SHMEMX_EP_ST_DEVICE),
                                  SHMEMX_EP_ST_DSENT);
    if (rc == 0 && n > M) {
        rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_NTOKENS, (int64_t)n, (int64_t)M, 0);
    }
    if (rc == 0 && n && (!tokens || !topk_idx || !topk_weights || (d.scale_bytes && !scales))) {
        rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_NULL, (int64_t)n, 0, 0);
    }
    /* Every part checks every token: none posts anything for a call that fails. */
    for (size_t t = lane; rc == 0 && t < n; t += nl) {
        for (int j = 0; j < k && rc == 0; j++) {
            int32_t e = topk_idx[t * (size_t)k + (size_t)j];
            if (e < -1 || e >= E) {
                rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_EXPERT, (int64_t)t, j, e);
            }
            for (int i = 0; i < j && e >= 0 && rc == 0; i++) {
                if (topk_idx[t * (size_t)k + (size_t)i] == e) {
                    rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_REPEAT, (int64_t)t, i, e);
                }
            }
        }
    }
    rc = shmemx_dev_ep_any_(rc, nl);
    if (rc != 0) {
        return rc;
    }
    uint64_t c = d.st->seq + 1;
    size_t chunk = (n + nl - 1) / nl, t0 = lane * chunk, t1 = t0 + chunk < n ? t0 + chunk : n;
    for (int i = 1 + part; i <= N; i += nparts) {
        int dd = (me + i) % N;
        uint32_t *cd = d.cnt_out + (size_t)dd * cw;
        char *pk = d.dpack + (size_t)dd * M * d.es;
        if (lane == 0) {
            for (uint64_t x = 0; x < cw; x++) {
                cd[x] = 0;
            }
        }
        SHMEMX_EP_SYNC_(nl);
        /* Entries per lane's run of tokens, and the per-expert counts. */
        uint32_t mine = 0;
        for (size_t t = t0; t < t1; t++) {
            int hit = 0;
            for (int j = 0; j < k; j++) {
                int32_t e = topk_idx[t * (size_t)k + (size_t)j];
                if (e >= 0 && e / L == dd) {
                    hit = 1;
                    shmemx_dev_ep_add32_(&cd[1 + e % L], 1);
                }
            }
            mine += (uint32_t)hit;
        }
        scr[1 + lane] = mine;
        SHMEMX_EP_SYNC_(nl);
        if (lane == 0) { /* entry indices follow token order: an exclusive prefix over lanes */
            uint32_t sum = 0;
            for (unsigned l = 0; l < nl; l++) {
                uint32_t v = scr[1 + l];
                scr[1 + l] = sum;
                sum += v;
            }
            cd[0] = sum;
            scr[0] = sum;
        }
        SHMEMX_EP_SYNC_(nl);
        uint32_t x = scr[1 + lane], total = scr[0];
        for (size_t t = t0; t < t1; t++) {
            int32_t ne = 0;
            char *ent = pk + (size_t)x * d.es;
            for (int j = 0; j < k; j++) {
                int32_t e = topk_idx[t * (size_t)k + (size_t)j];
                if (e >= 0 && e / L == dd) {
                    ((int32_t *)(ent + 8))[2 * ne] = e % L;
                    ((float *)(ent + 8))[2 * ne + 1] = topk_weights[t * (size_t)k + (size_t)j];
                    ne++;
                }
            }
            d.tok_ent[t * (size_t)N + (size_t)dd] = ne ? (int32_t)x : -1;
            if (ne) {
                ((int32_t *)ent)[0] = (int32_t)t;
                ((int32_t *)ent)[1] = ne;
                x++;
            }
        }
        SHMEMX_EP_SYNC_(nl);
        /* The bytes, entry by entry, all lanes on one entry (coalesced on a GPU). */
        for (uint32_t y = 0; y < total; y++) {
            char *ent = pk + (size_t)y * d.es;
            size_t t = (size_t)((const int32_t *)ent)[0];
            shmemx_dev_ep_copy_(ent + d.hb, (const char *)tokens + t * d.tok_bytes, d.tok_bytes,
                                lane, nl);
            if (d.scale_bytes) {
                shmemx_dev_ep_copy_(ent + d.hb + d.tok_bytes,
                                    (const char *)scales + t * d.scale_bytes, d.scale_bytes,
                                    lane, nl);
            }
        }
        SHMEMX_EP_SYNC_(nl);
        /* Counts, then the slab, each signalled with the call number. */
        rc = lane == 0 ? shmemx_dev_put_signal_nbi(
                             h, shmemx_dev_ep_counts_(d, c, me), cd, d.cb,
                             shmemx_dev_ep_sig_(d, c, SHMEMX_EP_SIG_COUNTS, me), c,
                             SHMEMX_DEV_SIGNAL_SET, d.wpe[dd])
                       : 0;
        if (total) {
            int r2 = shmemx_dev_ep_put_(h, shmemx_dev_ep_dslab_(d, c, me), pk,
                                        (size_t)total * d.es,
                                        shmemx_dev_ep_sig_(d, c, SHMEMX_EP_SIG_DATA, me), c,
                                        d.wpe[dd], lane, nl);
            rc = rc ? rc : r2;
        }
        rc = shmemx_dev_ep_posted_(d, rc, dd, lane, nl);
        if (rc != 0) {
            return rc;
        }
    }
    SHMEMX_EP_SYNC_(nl);
    if (lane == 0) {
        shmemx_dev_ep_arrive_(d, nparts, SHMEMX_EP_ST_DSENT | SHMEMX_EP_ST_DEVICE, c, n);
    }
    return 0;
}

/* Start rows of source s in each local expert (counts of call c): the rows of the earlier
 * experts, then of the sources before s; into out[e * stride]. */
SHMEMX_DFN void shmemx_dev_ep_starts_(shmemx_ep_device_t d, uint64_t c, int s, uint64_t *out,
                                      uint64_t stride)
{
    uint64_t base = 0;
    for (int e = 0; e < d.L; e++) {
        uint64_t all = 0, before = 0;
        for (int p = 0; p < d.npes; p++) {
            uint32_t v = ((const uint32_t *)shmemx_dev_ep_counts_(d, c, p))[1 + e];
            before += p < s ? v : 0;
            all += v;
        }
        out[(uint64_t)e * stride] = base + before;
        base += all;
    }
}

SHMEMX_DFN int shmemx_dev_ep_drecv_(shmemx_device_t h, shmemx_ep_device_t d, int part,
                                    int nparts, unsigned lane, unsigned nl)
{
    int N = d.npes, L = d.L, me = d.me;
    uint64_t M = d.max_tokens, kk = (uint64_t)d.kk;
    int rc = shmemx_dev_ep_enter_(d, 1u << (SHMEMX_EP_ST_DSENT | SHMEMX_EP_ST_DEVICE),
                                  SHMEMX_EP_ST_DRECV);
    rc = shmemx_dev_ep_any_(rc, nl);
    if (rc != 0) {
        return rc;
    }
    uint64_t c = d.st->seq;
    /* Every source's counts (each part: the layout needs them all). */
    for (int i = 0; lane == 0 && rc == 0 && i < N; i++) {
        int s = (me - i + N) % N;
        rc = shmemx_dev_ep_wait_(h, d, c, SHMEMX_EP_SIG_COUNTS, s);
        uint32_t ns = ((const uint32_t *)shmemx_dev_ep_counts_(d, c, s))[0];
        if (rc == 0 && ns > M) {
            rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_CORRUPT, s, (int64_t)ns, 0);
        }
    }
    rc = shmemx_dev_ep_any_(rc, nl);
    if (rc != 0) {
        return rc;
    }
    if (lane == 0 && part == 0) {
        uint64_t total = 0;
        for (int e = 0; e < L; e++) {
            uint64_t cnt = 0;
            for (int p = 0; p < N; p++) {
                cnt += ((const uint32_t *)shmemx_dev_ep_counts_(d, c, p))[1 + e];
            }
            d.eoffset[e] = (size_t)total;
            d.ecount[e] = (size_t)cnt;
            total += cnt;
        }
        d.st->total = total;
    }
    for (int i = part; i < N; i += nparts) {
        int s = (me - i + N) % N;
        const char *slab = shmemx_dev_ep_dslab_(d, c, s);
        uint32_t ns = ((const uint32_t *)shmemx_dev_ep_counts_(d, c, s))[0];
        if (lane == 0) {
            d.nent[s] = ns;
            shmemx_dev_ep_starts_(d, c, s, d.cursor + s, (uint64_t)N);
            if (ns) {
                rc = shmemx_dev_ep_wait_(h, d, c, SHMEMX_EP_SIG_DATA, s);
            }
            /* Rows in entry order: one lane, integers only. */
            for (uint32_t x = 0; rc == 0 && x < ns; x++) {
                const char *ent = slab + (size_t)x * d.es;
                int32_t ne = ((const int32_t *)ent)[1];
                if (ne < 1 || (uint64_t)ne > kk) {
                    rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_CORRUPT, s, x, ne);
                    break;
                }
                d.ent_n[(size_t)s * M + x] = ne;
                for (int j = 0; j < ne; j++) {
                    int32_t le = ((const int32_t *)(ent + 8))[2 * j];
                    if (le < 0 || le >= L) {
                        rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_CORRUPT, s, x, le);
                        break;
                    }
                    uint64_t row = d.cursor[(size_t)le * (size_t)N + (size_t)s]++;
                    d.src_pe[row] = s;
                    d.src_token[row] = ((const int32_t *)ent)[0];
                    d.ent_row[((size_t)s * M + x) * kk + (size_t)j] = (int32_t)row;
                    d.ent_w[((size_t)s * M + x) * kk + (size_t)j] =
                        ((const float *)(ent + 8))[2 * j + 1];
                }
            }
            /* Each expert's rows of s end where the next source's begin. */
            uint64_t base = 0;
            for (int e = 0; rc == 0 && e < L; e++) {
                uint64_t all = 0, upto = 0;
                for (int p = 0; p < N; p++) {
                    uint32_t v = ((const uint32_t *)shmemx_dev_ep_counts_(d, c, p))[1 + e];
                    upto += p <= s ? v : 0;
                    all += v;
                }
                if (d.cursor[(size_t)e * (size_t)N + (size_t)s] != base + upto) {
                    rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_CORRUPT, s, -1, e);
                }
                base += all;
            }
        }
        rc = shmemx_dev_ep_any_(rc, nl);
        if (rc != 0) {
            return rc;
        }
        for (uint32_t x = 0; x < ns; x++) {
            const char *ent = slab + (size_t)x * d.es;
            int32_t ne = d.ent_n[(size_t)s * M + x];
            for (int j = 0; j < ne; j++) {
                uint64_t row = (uint64_t)d.ent_row[((size_t)s * M + x) * kk + (size_t)j];
                shmemx_dev_ep_copy_(d.out_tokens + row * d.tok_bytes, ent + d.hb, d.tok_bytes,
                                    lane, nl);
                if (d.scale_bytes) {
                    shmemx_dev_ep_copy_(d.out_scales + row * d.scale_bytes,
                                        ent + d.hb + d.tok_bytes, d.scale_bytes, lane, nl);
                }
            }
        }
        SHMEMX_EP_SYNC_(nl);
    }
    /* My slabs have left: the packed buffers may be reused. */
    if (lane == 0) {
        int q = shmemx_dev_quiet_all(h);
        rc = q ? shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_PROXY, q, -1, 0) : 0;
    }
    rc = shmemx_dev_ep_any_(rc, nl);
    if (rc == 0 && lane == 0) {
        shmemx_dev_ep_arrive_(d, nparts, SHMEMX_EP_ST_DRECV | SHMEMX_EP_ST_DEVICE, 0, 0);
    }
    return rc;
}

SHMEMX_DFN int shmemx_dev_ep_csend_(shmemx_device_t h, shmemx_ep_device_t d,
                                    const void *expert_out, int part, int nparts,
                                    unsigned lane, unsigned nl)
{
    int N = d.npes, me = d.me;
    uint64_t M = d.max_tokens, H = d.hidden, kk = (uint64_t)d.kk;
    int rc = shmemx_dev_ep_enter_(d, 1u << (SHMEMX_EP_ST_DRECV | SHMEMX_EP_ST_DEVICE),
                                  SHMEMX_EP_ST_CSENT);
    if (rc == 0 && !expert_out && d.st->total) {
        rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_NULL, (int64_t)d.st->total, 0, 0);
    }
    rc = shmemx_dev_ep_any_(rc, nl);
    if (rc != 0) {
        return rc;
    }
    uint64_t c = d.st->seq, in_row = H * d.ce;
    for (int i = 1 + part; i <= N; i += nparts) {
        int s = (me + i) % N;
        uint32_t ns = d.nent[s];
        if (!ns) {
            continue;
        }
        char *pk = d.cpack + (size_t)s * M * d.crow;
        for (uint32_t x = 0; x < ns; x++) {
            int32_t ne = d.ent_n[(size_t)s * M + x];
            const int32_t *rows = d.ent_row + ((size_t)s * M + x) * kk;
            const float *ws = d.ent_w + ((size_t)s * M + x) * kk;
            for (uint64_t e = lane; e < H; e += nl) {
                float acc = 0.0f;
                for (int j = 0; j < ne; j++) {
                    acc = shmemx_dev_ep_madd_(
                        acc, ws[j],
                        shmemx_dev_ep_get_((const char *)expert_out + (uint64_t)rows[j] * in_row,
                                           e, d.ce));
                }
                shmemx_dev_ep_set_(pk + (size_t)x * d.crow, e, d.ce, acc);
            }
        }
        SHMEMX_EP_SYNC_(nl);
        rc = shmemx_dev_ep_put_(h, shmemx_dev_ep_cslab_(d, c, me), pk, (size_t)ns * d.crow,
                                shmemx_dev_ep_sig_(d, c, SHMEMX_EP_SIG_COMBINE, me), c,
                                d.wpe[s], lane, nl);
        rc = shmemx_dev_ep_posted_(d, rc, s, lane, nl);
        if (rc != 0) {
            return rc;
        }
    }
    SHMEMX_EP_SYNC_(nl);
    if (lane == 0) {
        shmemx_dev_ep_arrive_(d, nparts, SHMEMX_EP_ST_CSENT | SHMEMX_EP_ST_DEVICE, 0, 0);
    }
    return 0;
}

SHMEMX_DFN int shmemx_dev_ep_crecv_(shmemx_device_t h, shmemx_ep_device_t d, void *out,
                                    int part, int nparts, unsigned lane, unsigned nl)
{
    int N = d.npes, me = d.me;
    uint64_t H = d.hidden, cw = d.cb / 4;
    int rc = shmemx_dev_ep_enter_(d, 1u << (SHMEMX_EP_ST_CSENT | SHMEMX_EP_ST_DEVICE),
                                  SHMEMX_EP_ST_IDLE);
    uint64_t n = d.st->n, c = d.st->seq;
    if (rc == 0 && !out && n) {
        rc = shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_NULL, (int64_t)n, 0, 0);
    }
    /* The PEs that owe me partials: those I sent entries to. */
    for (int i = 0; lane == 0 && rc == 0 && i < N; i++) {
        int p = (me - i + N) % N;
        if (d.cnt_out[(size_t)p * cw]) {
            rc = shmemx_dev_ep_wait_(h, d, c, SHMEMX_EP_SIG_COMBINE, p);
        }
    }
    rc = shmemx_dev_ep_any_(rc, nl);
    if (rc != 0) {
        return rc;
    }
    uint64_t chunk = (n + (uint64_t)nparts - 1) / (uint64_t)nparts;
    uint64_t t0 = (uint64_t)part * chunk, t1 = t0 + chunk < n ? t0 + chunk : n;
    for (uint64_t t = t0; t < t1; t++) {
        for (uint64_t e = lane; e < H; e += nl) {
            float acc = 0.0f;
            /* Partials in team-PE order: the same sum whatever order they arrived in. */
            for (int p = 0; p < N; p++) {
                int32_t x = d.tok_ent[t * (uint64_t)N + (uint64_t)p];
                if (x >= 0) {
                    acc = shmemx_dev_ep_madd_(
                        acc, 1.0f,
                        shmemx_dev_ep_get_(shmemx_dev_ep_cslab_(d, c, p) + (uint64_t)x * d.crow,
                                           e, d.ce));
                }
            }
            shmemx_dev_ep_set_((char *)out + t * H * d.ce, e, d.ce, acc);
        }
    }
    SHMEMX_EP_SYNC_(nl);
    if (lane == 0) {
        int q = shmemx_dev_quiet_all(h);
        rc = q ? shmemx_dev_ep_fail_(d, SHMEMX_EP_ERR_PROXY, q, -1, 0) : 0;
    }
    rc = shmemx_dev_ep_any_(rc, nl);
    if (rc == 0 && lane == 0) {
        shmemx_dev_ep_arrive_(d, nparts, SHMEMX_EP_ST_IDLE, 0, 0);
    }
    return rc;
}

/* ---- thread forms (host or device): part of nparts, one thread each ---- */

SHMEMX_DFN int shmemx_dev_ep_dispatch_send(shmemx_device_t h, shmemx_ep_device_t d,
                                           const void *tokens, const void *scales,
                                           const int32_t *topk_idx, const float *topk_weights,
                                           size_t n, int part, int nparts)
{
    uint32_t scr[2];
    return shmemx_dev_ep_dsend_(h, d, tokens, scales, topk_idx, topk_weights, n, part, nparts,
                                0, 1, scr);
}

SHMEMX_DFN int shmemx_dev_ep_dispatch_recv(shmemx_device_t h, shmemx_ep_device_t d, int part,
                                           int nparts)
{
    return shmemx_dev_ep_drecv_(h, d, part, nparts, 0, 1);
}

SHMEMX_DFN int shmemx_dev_ep_combine_send(shmemx_device_t h, shmemx_ep_device_t d,
                                          const void *expert_out, int part, int nparts)
{
    return shmemx_dev_ep_csend_(h, d, expert_out, part, nparts, 0, 1);
}

SHMEMX_DFN int shmemx_dev_ep_combine_recv(shmemx_device_t h, shmemx_ep_device_t d, void *out,
                                          int part, int nparts)
{
    return shmemx_dev_ep_crecv_(h, d, out, part, nparts, 0, 1);
}

/* Rows received by the last dispatch_recv (after every part of it returned). */
SHMEMX_DFN uint64_t shmemx_dev_ep_total(shmemx_ep_device_t d)
{
    return d.st->total;
}

/* ---- block forms, kernels and stream launchers (nvcc) ---- */
#if defined(__CUDACC__)

SHMEMX_DEVFN int shmemx_dev_ep_block_rc_(int rc)
{
    __shared__ int shmemx_dev_ep_brc;
    __syncthreads();
    if (shmemx_dev_tid_() == 0) {
        shmemx_dev_ep_brc = rc;
    }
    __syncthreads();
    return shmemx_dev_ep_brc;
}

SHMEMX_DEVFN int shmemx_dev_ep_part_(void)
{
    return (int)(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
}

SHMEMX_DEVFN int shmemx_dev_ep_nparts_(void)
{
    return (int)(gridDim.x * gridDim.y * gridDim.z);
}

SHMEMX_DEVFN unsigned shmemx_dev_ep_nl_(void)
{
    return blockDim.x * blockDim.y * blockDim.z;
}

/* Every thread of every block of the grid calls each with the same arguments; a block is a
 * part (blocks of up to SHMEMX_EP_MAX_LANES threads). */
SHMEMX_DEVFN int shmemx_dev_ep_dispatch_send_block(shmemx_device_t h, shmemx_ep_device_t d,
                                                   const void *tokens, const void *scales,
                                                   const int32_t *topk_idx,
                                                   const float *topk_weights, size_t n)
{
    __shared__ uint32_t shmemx_dev_ep_scr[SHMEMX_EP_MAX_LANES + 1];
    int rc = shmemx_dev_ep_dsend_(h, d, tokens, scales, topk_idx, topk_weights, n,
                                  shmemx_dev_ep_part_(), shmemx_dev_ep_nparts_(),
                                  shmemx_dev_tid_(), shmemx_dev_ep_nl_(), shmemx_dev_ep_scr);
    return shmemx_dev_ep_block_rc_(rc);
}

SHMEMX_DEVFN int shmemx_dev_ep_dispatch_recv_block(shmemx_device_t h, shmemx_ep_device_t d)
{
    int rc = shmemx_dev_ep_drecv_(h, d, shmemx_dev_ep_part_(), shmemx_dev_ep_nparts_(),
                                  shmemx_dev_tid_(), shmemx_dev_ep_nl_());
    return shmemx_dev_ep_block_rc_(rc);
}

SHMEMX_DEVFN int shmemx_dev_ep_combine_send_block(shmemx_device_t h, shmemx_ep_device_t d,
                                                  const void *expert_out)
{
    int rc = shmemx_dev_ep_csend_(h, d, expert_out, shmemx_dev_ep_part_(),
                                  shmemx_dev_ep_nparts_(), shmemx_dev_tid_(),
                                  shmemx_dev_ep_nl_());
    return shmemx_dev_ep_block_rc_(rc);
}

SHMEMX_DEVFN int shmemx_dev_ep_combine_recv_block(shmemx_device_t h, shmemx_ep_device_t d,
                                                  void *out)
{
    int rc = shmemx_dev_ep_crecv_(h, d, out, shmemx_dev_ep_part_(), shmemx_dev_ep_nparts_(),
                                  shmemx_dev_tid_(), shmemx_dev_ep_nl_());
    return shmemx_dev_ep_block_rc_(rc);
}

/* The kernels the launchers start (errors: d.st->error, shmemx_ep_device_check). */
static __global__ void shmemx_dev_ep_dispatch_send_kernel(shmemx_device_t h,
                                                          shmemx_ep_device_t d,
                                                          const void *tokens,
                                                          const void *scales,
                                                          const int32_t *topk_idx,
                                                          const float *topk_weights, size_t n)
{
    (void)shmemx_dev_ep_dispatch_send_block(h, d, tokens, scales, topk_idx, topk_weights, n);
}

static __global__ void shmemx_dev_ep_dispatch_recv_kernel(shmemx_device_t h,
                                                          shmemx_ep_device_t d)
{
    (void)shmemx_dev_ep_dispatch_recv_block(h, d);
}

static __global__ void shmemx_dev_ep_combine_send_kernel(shmemx_device_t h,
                                                         shmemx_ep_device_t d,
                                                         const void *expert_out)
{
    (void)shmemx_dev_ep_combine_send_block(h, d, expert_out);
}

static __global__ void shmemx_dev_ep_combine_recv_kernel(shmemx_device_t h,
                                                         shmemx_ep_device_t d, void *out)
{
    (void)shmemx_dev_ep_combine_recv_block(h, d, out);
}

/* Threads per block of the launchers. */
#ifndef SHMEMX_EP_THREADS
#define SHMEMX_EP_THREADS 256
#endif

/* Launchers: the phase's kernel on the caller's stream, one block per destination or source
 * PE (per 32 tokens for combine_recv, at most 132 blocks); returns the launch's error. No
 * host synchronization: a stream (or a CUDA graph capturing it) runs the four in order. */
static inline cudaError_t shmemx_ep_dispatch_send_on_stream(
    shmemx_device_t h, shmemx_ep_device_t d, const void *tokens, const void *scales,
    const int32_t *topk_idx, const float *topk_weights, size_t n, cudaStream_t stream)
{
    shmemx_dev_ep_dispatch_send_kernel<<<(unsigned)d.npes, SHMEMX_EP_THREADS, 0, stream>>>(
        h, d, tokens, scales, topk_idx, topk_weights, n);
    return cudaGetLastError();
}

static inline cudaError_t shmemx_ep_dispatch_recv_on_stream(shmemx_device_t h,
                                                            shmemx_ep_device_t d,
                                                            cudaStream_t stream)
{
    shmemx_dev_ep_dispatch_recv_kernel<<<(unsigned)d.npes, SHMEMX_EP_THREADS, 0, stream>>>(h,
                                                                                        d);
    return cudaGetLastError();
}

static inline cudaError_t shmemx_ep_combine_send_on_stream(shmemx_device_t h,
                                                           shmemx_ep_device_t d,
                                                           const void *expert_out,
                                                           cudaStream_t stream)
{
    shmemx_dev_ep_combine_send_kernel<<<(unsigned)d.npes, SHMEMX_EP_THREADS, 0, stream>>>(
        h, d, expert_out);
    return cudaGetLastError();
}

static inline cudaError_t shmemx_ep_combine_recv_on_stream(shmemx_device_t h,
                                                           shmemx_ep_device_t d, void *out,
                                                           cudaStream_t stream)
{
    uint64_t blocks = (d.max_tokens + 31) / 32;
    blocks = blocks < 1 ? 1 : blocks > 132 ? 132 : blocks;
    shmemx_dev_ep_combine_recv_kernel<<<(unsigned)blocks, SHMEMX_EP_THREADS, 0, stream>>>(
        h, d, out);
    return cudaGetLastError();
}

#endif /* __CUDACC__ */

/* ---- the host side (libfabshmem) ---- */

/* d for ep (a shmemx_ep_t): local, after shmemx_ep_create; the first call allocates the
 * private buffers (device memory when ep's block is in the device heap, else host memory,
 * for CPU threads) and the state, later calls return the same. 0, or the job ends naming
 * cause and fix. */
struct shmemx_ep;
int shmemx_ep_device_handle(struct shmemx_ep *ep, shmemx_ep_device_t *d);
/* 0 when the device path met no error on ep; else the job ends with the cause and the fix
 * (after the kernels finished: synchronize their stream first). */
int shmemx_ep_device_check(struct shmemx_ep *ep);

#ifdef __cplusplus
}
#endif

#endif
