/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_device.c: the host side of the expert-parallel exchange's GPU path
 * (include/shmemx_ep_device.h, docs/ep.md "GPU path"): the handle kernels and CPU threads
 * run the phases with, and the report of an error they recorded.
 *
 * The handle points into the reference's symmetric block (ep.c allocates it, in the device
 * heap when the config asks) and to private buffers of its own, one allocation carved in
 * pieces: device memory through the CUDA layer when the block is in the device heap, host
 * memory otherwise (CPU threads run the phases there, in the tests). For a host handle the
 * state block is the reference's (ep->st0), so one handle may take either path call by call;
 * a device-heap handle has its state in device memory and only the GPU path.
 * The library never launches a kernel: the launchers are in the header, for nvcc.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pshmem.h>
#include <shmemx.h>

#include "api_check.h"
#include "cuda.h"
#include "ep.h"
#include "init.h"

static size_t up64(size_t v)
{
    return (v + 63) & ~(size_t)63;
}

/* Carve the next piece of len bytes from *at (64-byte aligned); NULL for 0 bytes. */
static void *piece(char *base, size_t *at, size_t len)
{
    if (!len) {
        return NULL;
    }
    void *p = base ? base + *at : NULL;
    *at += up64(len);
    return p;
}

/* The layout of the private block, into d (or only its size, with base NULL). */
static size_t carve(struct shmemx_ep *ep, shmemx_ep_device_t *d, char *base)
{
    size_t N = (size_t)ep->npes, M = ep->cfg.max_tokens, kk = (size_t)ep->kk;
    size_t L = (size_t)ep->L, cap = N * M * kk, at = 0;
    d->st = piece(base, &at, sizeof(struct shmemx_ep_dev_state));
    d->wpe = piece(base, &at, N * sizeof(int));
    d->dpack = piece(base, &at, N * M * d->es);
    d->cnt_out = piece(base, &at, N * d->cb);
    d->tok_ent = piece(base, &at, M * N * sizeof(int32_t));
    d->cpack = piece(base, &at, N * M * d->crow);
    d->nent = piece(base, &at, N * sizeof(uint32_t));
    d->ent_row = piece(base, &at, N * M * kk * sizeof(int32_t));
    d->ent_w = piece(base, &at, N * M * kk * sizeof(float));
    d->ent_n = piece(base, &at, N * M * sizeof(int32_t));
    d->out_tokens = piece(base, &at, cap * d->tok_bytes);
    d->out_scales = piece(base, &at, cap * d->scale_bytes);
    d->src_pe = piece(base, &at, cap * sizeof(int));
    d->src_token = piece(base, &at, cap * sizeof(int));
    d->ecount = piece(base, &at, L * sizeof(size_t));
    d->eoffset = piece(base, &at, L * sizeof(size_t));
    d->cursor = piece(base, &at, L * N * sizeof(uint64_t));
    return at;
}

__attribute__((visibility("default"))) int shmemx_ep_device_handle(struct shmemx_ep *ep,
                                                                   shmemx_ep_device_t *d)
{
    static const char fn[] = "shmemx_ep_device_handle";
    running(fn);
    if (!ep || !d) {
        fsh_init_fatal(fn, "pass a handle from shmemx_ep_create and a shmemx_ep_device_t to fill",
                       "%s is NULL", ep ? "d" : "ep");
    }
    if (ep->has_dev) {
        *d = ep->dev;
        return 0;
    }
    bool gpu = ep->cfg.device_heap != 0;
    if (gpu && !fsh_cuda_ready()) {
        fsh_init_fatal(fn, "report this: the device heap is on without a GPU",
                       "the handle's block is in the device heap but no GPU is open");
    }
    shmemx_ep_device_t h;
    memset(&h, 0, sizeof(h));
    h.max_tokens = ep->cfg.max_tokens;
    h.hidden = ep->cfg.hidden;
    h.elem_bytes = ep->cfg.dispatch_elem_bytes;
    h.scale_bytes = ep->cfg.scale_bytes;
    h.num_experts = ep->cfg.num_experts;
    h.topk = ep->cfg.topk;
    h.npes = ep->npes;
    h.me = ep->me;
    h.L = ep->L;
    h.kk = ep->kk;
    h.tok_bytes = ep->tok_bytes;
    h.ce = ep->ce;
    h.hb = ep->hb;
    h.es = ep->es;
    h.cb = ep->cb;
    h.crow = (ep->cfg.hidden * ep->ce + 7) & ~(size_t)7; /* ep.c's crow() */
    h.sig = ep->sig;
    h.counts = ep->counts;
    h.dslab = ep->dslab;
    h.cslab = ep->cslab;
    size_t len = carve(ep, &h, NULL);
    char *mem = gpu ? fsh_cuda_alloc(len) : calloc(1, len);
    if (!mem) {
        fsh_init_fatal(fn, "use a smaller shape (max_tokens, hidden, topk) or free memory",
                       "no room for the GPU path's %zu bytes of private buffers (%s memory)", len,
                       gpu ? "device" : "host");
    }
    carve(ep, &h, mem);
    if (gpu) {
        /* zeroed; then the PE table and the state (the reference's, so calls go on) */
        if (fsh_cuda_memset(mem, 0, len) != 0 ||
            fsh_cuda_copy((void *)h.wpe, ep->wpe, (size_t)ep->npes * sizeof(int)) != 0 ||
            fsh_cuda_copy(h.st, ep->st, sizeof(*h.st)) != 0) {
            fsh_init_fatal_err(fn, -EIO);
        }
        ep->st = h.st;
    } else {
        memcpy((void *)h.wpe, ep->wpe, (size_t)ep->npes * sizeof(int));
        h.st = ep->st; /* shared with the host reference */
    }
    ep->dev = h;
    ep->dev_mem = mem;
    ep->has_dev = 1;
    *d = h;
    return 0;
}

void fsh_ep_device_state(struct shmemx_ep *ep, struct shmemx_ep_dev_state *out)
{
    if (ep->st != &ep->st0) {
        if (fsh_cuda_copy(out, ep->st, sizeof(*out)) != 0) {
            fsh_init_fatal_err("shmemx_ep_device_check", -EIO);
        }
        return;
    }
    memcpy(out, ep->st, sizeof(*out));
    out->error = __atomic_load_n(&ep->st->error, __ATOMIC_ACQUIRE);
}

static const char *const fixes[] = {
    [SHMEMX_EP_ERR_EXPERT] = "expert ids are 0..num_experts-1, or -1 for none",
    [SHMEMX_EP_ERR_REPEAT] = "a token chooses each expert at most once",
    [SHMEMX_EP_ERR_NTOKENS] = "dispatch at most max_tokens tokens per call, or create the handle with a larger max_tokens",
    [SHMEMX_EP_ERR_ORDER] = "call dispatch_send, dispatch_recv, then optionally combine_send, combine_recv, each phase's parts all finished before the next phase starts",
    [SHMEMX_EP_ERR_PEER] = "call the exchange in the same order on every PE of the team",
    [SHMEMX_EP_ERR_CORRUPT] = "report this: a message of the exchange is corrupt",
    [SHMEMX_EP_ERR_PROXY] = "see the device API's message above (the proxy's cause)",
    [SHMEMX_EP_ERR_NULL] = "pass every buffer the phase needs (tokens, topk_idx, topk_weights, scales when scale_bytes > 0; expert_out; out)",
};

static const char *phase_name(int64_t s)
{
    static const char *const name[] = {"nothing", "dispatch_send", "dispatch_recv",
                                       "combine_send"};
    return name[s & 3];
}

__attribute__((visibility("default"))) int shmemx_ep_device_check(struct shmemx_ep *ep)
{
    static const char fn[] = "shmemx_ep_device_check";
    running(fn);
    if (!ep) {
        fsh_init_fatal(fn, "pass a handle from shmemx_ep_create", "handle is NULL");
    }
    struct shmemx_ep_dev_state st;
    fsh_ep_device_state(ep, &st);
    if (st.error == 0) {
        return 0;
    }
    int64_t a = st.err_a, b = st.err_b, c = st.err_c;
    const char *fix = st.error > 0 && st.error <= SHMEMX_EP_ERR_NULL ? fixes[st.error]
                                                                     : "report this";
    switch (st.error) {
    case SHMEMX_EP_ERR_EXPERT:
        fsh_init_fatal(fn, fix, "GPU path: topk_idx[%lld][%lld] = %lld is outside [-1, %d)",
                       (long long)a, (long long)b, (long long)c, ep->cfg.num_experts);
    case SHMEMX_EP_ERR_REPEAT:
        fsh_init_fatal(fn, fix, "GPU path: topk_idx[%lld] names expert %lld twice",
                       (long long)a, (long long)c);
    case SHMEMX_EP_ERR_NTOKENS:
        fsh_init_fatal(fn, fix, "GPU path: n = %lld tokens exceeds max_tokens = %lld",
                       (long long)a, (long long)b);
    case SHMEMX_EP_ERR_ORDER:
        fsh_init_fatal(fn, fix, "GPU path: %s called out of order (the last call was %s%s)",
                       b == SHMEMX_EP_ST_IDLE ? "combine_recv" : phase_name(b),
                       phase_name(a), a & SHMEMX_EP_ST_DEVICE ? "" : " of the host calls");
    case SHMEMX_EP_ERR_PEER:
        fsh_init_fatal(fn, fix, "GPU path: team PE %lld is at call %lld where this PE is at %lld",
                       (long long)a, (long long)b, (long long)c);
    case SHMEMX_EP_ERR_CORRUPT:
        fsh_init_fatal(fn, fix, "GPU path: entry %lld from team PE %lld does not fit (value %lld)",
                       (long long)b, (long long)a, (long long)c);
    case SHMEMX_EP_ERR_PROXY:
        fsh_init_fatal(fn, fix, "GPU path: the device API returned %lld (team PE %lld)",
                       (long long)a, (long long)b);
    case SHMEMX_EP_ERR_NULL:
        fsh_init_fatal(fn, fix, "GPU path: a buffer is NULL with %lld tokens or rows",
                       (long long)a);
    default:
        fsh_init_fatal(fn, fix, "GPU path: error %d", (int)st.error);
    }
}

void fsh_ep_device_free(struct shmemx_ep *ep)
{
    if (!ep->has_dev) {
        return;
    }
    if (ep->cfg.device_heap) {
        fsh_cuda_free(ep->dev_mem);
    } else {
        free(ep->dev_mem);
    }
    ep->st = &ep->st0;
    ep->has_dev = 0;
}
