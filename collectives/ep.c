/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep.c: the expert-parallel (MoE) exchange, shmemx_ep_*: dispatch sends each token to the
 * PEs owning its top-k experts, combine brings the expert outputs back weighted. This is the
 * host-driven reference on host memory (docs/ep.md); it judges the GPU path.
 *
 * Built on the public one-sided API (through its pshmem_ names, so a profiling tool sees only
 * the program's calls), which is why the module sits in the API layer: it uses
 * put-with-signal and the public waits, which name a dead peer like every other wait.
 *
 * Protocol of dispatch call c (c = 1, 2, ... per handle; the same on every PE, since every
 * member takes part in every call): a sender packs, per destination PE, one slab of entries
 * (a token once per destination, with the list of that PE's experts it chose and their
 * weights), then posts to every member a counts message ([entries, count per local expert])
 * signalled with SET c, then to every member with entries its slab in one put signalled with
 * SET c. The receive half waits per source for its counts, lays out the expert-major result
 * from them, then waits per source for its slab and unpacks it. Combine for call c returns,
 * per (source, entry), the entry's weighted partial sum in one put per peer signalled with c.
 *
 * Buffers: all symmetric memory is one block allocated at create; every slot is doubled by
 * the parity of c. That is enough without acknowledgements: a sender posts call c+1 only after
 * its receive half of call c saw every member's call-c counts, which each member sent after
 * finishing its own receive halves of call c-1 (program order), so the slot of parity
 * (c+1)&1 at every receiver is no longer read. The send half's packed buffers are private and
 * reused only after the receive half's quiet.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pshmem.h>
#include <shmemx.h>

#include "api_check.h"
#include "ep.h"
#include "init.h"

/* The phases, as the GPU path numbers them (shmemx_ep_device.h): one state for both paths. */
#define EP_IDLE SHMEMX_EP_ST_IDLE
#define EP_DSENT SHMEMX_EP_ST_DSENT
#define EP_DRECV SHMEMX_EP_ST_DRECV
#define EP_CSENT SHMEMX_EP_ST_CSENT

static size_t align8(size_t v)
{
    return (v + 7) & ~(size_t)7;
}

static size_t min_sz(size_t a, size_t b)
{
    return a < b ? a : b;
}

static size_t combine_bytes(int type)
{
    return type == SHMEMX_EP_FLOAT32 ? 4 : type == SHMEMX_EP_BFLOAT16 ? 2 : 0;
}

/* Every size of a shape; returns 0 and fills the sizes, or a static text saying what is wrong
 * with its fix through *fix. */
static const char *shape_error(const shmemx_ep_config_t *c, int npes, const char **fix)
{
    if (!c) {
        *fix = "pass a filled shmemx_ep_config_t";
        return "config is NULL";
    }
    if (c->dispatch_elem_bytes != 1 && c->dispatch_elem_bytes != 2 &&
        c->dispatch_elem_bytes != 4) {
        *fix = "dispatch elements are 1, 2 or 4 bytes (FP8, BF16, FP32)";
        return "dispatch_elem_bytes is not 1, 2 or 4";
    }
    if (!combine_bytes(c->combine_type)) {
        *fix = "use SHMEMX_EP_FLOAT32 or SHMEMX_EP_BFLOAT16";
        return "combine_type is unknown";
    }
    if (c->max_tokens == 0 || c->hidden == 0 || c->max_tokens > (1u << 30) ||
        c->hidden > (1u << 30) || c->scale_bytes > (1u << 20)) {
        *fix = "max_tokens and hidden are at least 1 (and below 2^30)";
        return "max_tokens or hidden is 0 or too large";
    }
    if (c->num_experts < 1 || c->num_experts % npes != 0) {
        *fix = "use a number of experts that is a positive multiple of the team's size";
        return "num_experts is not a multiple of the team's PEs";
    }
    if (c->topk < 1 || c->topk > c->num_experts) {
        *fix = "topk is 1..num_experts (a token chooses distinct experts)";
        return "topk is out of range";
    }
    return NULL;
}

struct sizes {
    size_t tok, ce, hb, es, cb, sig, counts, dslab, cslab, total;
};

static void sizes_of(const shmemx_ep_config_t *c, int npes, struct sizes *s)
{
    size_t L = (size_t)c->num_experts / (size_t)npes, M = c->max_tokens;
    size_t kk = min_sz((size_t)c->topk, L);
    s->tok = c->hidden * c->dispatch_elem_bytes;
    s->ce = combine_bytes(c->combine_type);
    s->hb = 8 + 8 * kk; /* src token, entries, then (local expert, weight) pairs */
    s->es = align8(s->hb + s->tok + c->scale_bytes);
    s->cb = align8(4 * (1 + L));
    s->sig = 2 * SIG_KINDS * (size_t)npes * sizeof(uint64_t);
    s->counts = 2 * (size_t)npes * s->cb;
    s->dslab = 2 * (size_t)npes * M * s->es;
    s->cslab = 2 * (size_t)npes * M * align8(c->hidden * s->ce);
    s->total = s->sig + s->counts + s->dslab + s->cslab;
}

size_t shmemx_ep_heap_bytes(const shmemx_ep_config_t *config, int npes)
{
    const char *fix;
    if (npes < 1 || shape_error(config, npes, &fix)) {
        return 0;
    }
    struct sizes s;
    sizes_of(config, npes, &s);
    return s.total;
}

/* ------------------------------------------------------------------ element conversion */

static float bf16_to_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* Round to nearest, ties to even; NaN stays NaN. */
static uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((u >> 16) | 0x40);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* acc[h] += w * row[h] for a whole row: the type is chosen once per row, not per element. */
static void axpy_row(const shmemx_ep_t ep, float *acc, float w, const char *row, size_t H)
{
    if (ep->cfg.combine_type == SHMEMX_EP_FLOAT32) {
        for (size_t h = 0; h < H; h++) {
            float f;
            memcpy(&f, row + 4 * h, 4);
            acc[h] += w * f;
        }
    } else {
        for (size_t h = 0; h < H; h++) {
            uint16_t b;
            memcpy(&b, row + 2 * h, 2);
            acc[h] += w * bf16_to_float(b);
        }
    }
}

static void store_row(const shmemx_ep_t ep, char *row, const float *acc, size_t H)
{
    if (ep->cfg.combine_type == SHMEMX_EP_FLOAT32) {
        memcpy(row, acc, H * 4);
    } else {
        for (size_t h = 0; h < H; h++) {
            uint16_t b = float_to_bf16(acc[h]);
            memcpy(row + 2 * h, &b, 2);
        }
    }
}

/* ------------------------------------------------------------------ create, destroy */

static uint64_t *sig_of(shmemx_ep_t ep, uint64_t c, int kind, int pe)
{
    return ep->sig + ((c & 1) * SIG_KINDS + (size_t)kind) * (size_t)ep->npes + (size_t)pe;
}

static char *counts_of(shmemx_ep_t ep, uint64_t c, int pe)
{
    return ep->counts + ((c & 1) * (size_t)ep->npes + (size_t)pe) * ep->cb;
}

static char *dslab_of(shmemx_ep_t ep, uint64_t c, int pe)
{
    return ep->dslab + ((c & 1) * (size_t)ep->npes + (size_t)pe) * ep->cfg.max_tokens * ep->es;
}

static size_t crow(shmemx_ep_t ep)
{
    return align8(ep->cfg.hidden * ep->ce);
}

static char *cslab_of(shmemx_ep_t ep, uint64_t c, int pe)
{
    return ep->cslab + ((c & 1) * (size_t)ep->npes + (size_t)pe) * ep->cfg.max_tokens * crow(ep);
}

static void free_private(shmemx_ep_t ep)
{
    free(ep->wpe);
    free(ep->dpack);
    free(ep->cnt_out);
    free(ep->route_pe);
    free(ep->route_i);
    free(ep->nroute);
    free(ep->cpack);
    free(ep->nent);
    free(ep->ent_row);
    free(ep->ent_w);
    free(ep->ent_n);
    free(ep->out_tokens);
    free(ep->out_scales);
    free(ep->src_pe);
    free(ep->src_token);
    free(ep->ecount);
    free(ep->eoffset);
    free(ep->cursor);
    free(ep);
}

/* What a PE offers at create: its block's size, a print of its shape and group, its heap. */
struct offer {
    uint64_t total, print, device;
};

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t shape_print(shmemx_ep_t ep)
{
    const shmemx_ep_config_t *c = &ep->cfg;
    const uint64_t v[] = {c->max_tokens,          c->hidden,           c->dispatch_elem_bytes,
                          (uint64_t)c->combine_type, (uint64_t)c->num_experts,
                          (uint64_t)c->topk,      c->scale_bytes,      (uint64_t)ep->npes};
    uint64_t h = 0;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        h = mix64(h ^ v[i]);
    }
    for (int p = 0; p < ep->npes; p++) {
        h = mix64(h ^ (uint64_t)ep->wpe[p]);
    }
    return h;
}

/* Every PE of the program creates at once (the block is symmetric), each over its own EP group
 * (a team; the groups may differ in size and shape): the block is the largest any PE needs,
 * every member of this PE's group must have passed the same team and shape, and every PE the
 * same heap. Collective over every PE; returns the block's size. */
static size_t agree(const char *fn, shmemx_ep_t ep, size_t mine)
{
    int W = pshmem_n_pes();
    struct offer *all = pshmem_malloc(((size_t)W + 1) * sizeof(*all));
    if (!all) {
        fsh_init_fatal(fn, "raise SHMEM_SYMMETRIC_SIZE", "no room for %zu bytes of create's offers",
                       ((size_t)W + 1) * sizeof(*all));
    }
    struct offer *my = &all[W];
    my->total = mine;
    my->print = shape_print(ep);
    my->device = (uint64_t)(ep->cfg.device_heap != 0);
    pshmem_fcollectmem(SHMEM_TEAM_WORLD, all, my, sizeof(*my));
    size_t most = 0;
    for (int w = 0; w < W; w++) {
        most = all[w].total > most ? (size_t)all[w].total : most;
        if (all[w].device != my->device) {
            fsh_init_fatal(fn, "pass the same device_heap on every PE (the block is allocated by all of them at once)",
                           "PE %d passed device_heap %d, this PE %d", w, (int)all[w].device,
                           (int)my->device);
        }
    }
    for (int p = 0; p < ep->npes; p++) {
        if (all[ep->wpe[p]].print != my->print) {
            fsh_init_fatal(fn, "pass the same team and config on every PE of an EP group",
                           "team PE %d (PE %d) passed another team or shape than this PE (team of %d PEs, max_tokens %zu, hidden %zu, %d experts, top-%d)",
                           p, ep->wpe[p], ep->npes, ep->cfg.max_tokens, ep->cfg.hidden,
                           ep->cfg.num_experts, ep->cfg.topk);
        }
    }
    pshmem_free(all);
    return most;
}

shmemx_ep_t shmemx_ep_create(shmem_team_t team, const shmemx_ep_config_t *config)
{
    static const char fn[] = "shmemx_ep_create";
    running(fn);
    int npes = pshmem_team_n_pes(team), me = pshmem_team_my_pe(team);
    if (npes < 1 || me < 0) {
        fsh_init_fatal(fn, "pass a valid team this PE belongs to", "team is invalid here");
    }
    const char *fix = NULL, *why = shape_error(config, npes, &fix);
    if (why) {
        fsh_init_fatal(fn, fix, "%s (num_experts %d, topk %d, %d PEs)", why,
                       config ? config->num_experts : 0, config ? config->topk : 0, npes);
    }
    struct sizes s;
    sizes_of(config, npes, &s);
    shmemx_ep_t ep = calloc(1, sizeof(*ep));
    if (!ep) {
        fsh_init_fatal(fn, "free memory", "out of memory for the handle");
    }
    ep->cfg = *config;
    ep->npes = npes;
    ep->me = me;
    ep->L = config->num_experts / npes;
    ep->kk = config->topk < ep->L ? config->topk : ep->L;
    ep->kn = config->topk < npes ? config->topk : npes;
    ep->tok_bytes = s.tok;
    ep->ce = s.ce;
    ep->hb = s.hb;
    ep->es = s.es;
    ep->cb = s.cb;
    size_t M = config->max_tokens, N = (size_t)npes, kk = (size_t)ep->kk;
    ep->cap = N * M * kk;
    ep->wpe = malloc(N * sizeof(int));
    ep->dpack = malloc(N * M * ep->es);
    ep->cnt_out = malloc(N * ep->cb);
    ep->route_pe = malloc(M * (size_t)ep->kn * sizeof(int));
    ep->route_i = malloc(M * (size_t)ep->kn * sizeof(int));
    ep->nroute = malloc(M * sizeof(int));
    ep->cpack = malloc(N * M * crow(ep));
    ep->nent = calloc(N, sizeof(uint32_t));
    ep->ent_row = malloc(N * M * kk * sizeof(int));
    ep->ent_w = malloc(N * M * kk * sizeof(float));
    ep->ent_n = malloc(N * M * sizeof(int));
    ep->out_tokens = malloc(ep->cap * ep->tok_bytes);
    ep->out_scales = config->scale_bytes ? malloc(ep->cap * config->scale_bytes) : NULL;
    ep->src_pe = malloc(ep->cap * sizeof(int));
    ep->src_token = malloc(ep->cap * sizeof(int));
    ep->ecount = calloc((size_t)ep->L, sizeof(size_t));
    ep->eoffset = calloc((size_t)ep->L, sizeof(size_t));
    ep->cursor = malloc((size_t)ep->L * N * sizeof(size_t));
    if (!ep->wpe || !ep->dpack || !ep->cnt_out || !ep->route_pe || !ep->route_i || !ep->nroute ||
        !ep->cpack || !ep->nent || !ep->ent_row || !ep->ent_w || !ep->ent_n || !ep->out_tokens ||
        (config->scale_bytes && !ep->out_scales) || !ep->src_pe || !ep->src_token ||
        !ep->ecount || !ep->eoffset || !ep->cursor) {
        fsh_init_fatal(fn, "use a smaller shape (max_tokens, hidden, topk) or free memory",
                       "out of memory for the handle's private buffers");
    }
    for (int i = 0; i < npes; i++) {
        ep->wpe[i] = pshmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD);
    }
    if (config->device_heap && shmemx_device_heap_size() == 0) {
        fsh_init_fatal(fn, "set FABSHMEM_DEVICE_HEAP_SIZE (at least shmemx_ep_heap_bytes) on every PE of a GPU machine, or create with device_heap = 0",
                       "device_heap is set but the device heap is off (%s)", shmemx_device_info());
    }
    size_t block = agree(fn, ep, s.total);
    /* collective over every PE; signals start at 0 */
    ep->sym = config->device_heap ? shmemx_calloc_device(1, block) : pshmem_calloc(1, block);
    if (!ep->sym) {
        fsh_init_fatal(fn, config->device_heap ? "raise FABSHMEM_DEVICE_HEAP_SIZE (see shmemx_ep_heap_bytes) or use a smaller shape" : "raise SHMEM_SYMMETRIC_SIZE (see shmemx_ep_heap_bytes) or use a smaller shape",
                       "no room for %zu bytes of symmetric buffers", block);
    }
    ep->sig = (uint64_t *)ep->sym;
    ep->counts = ep->sym + s.sig;
    ep->dslab = ep->counts + s.counts;
    ep->cslab = ep->dslab + s.dslab;
    ep->st = &ep->st0; /* calloc: call 0, EP_IDLE, no error */
    return ep;
}

void shmemx_ep_destroy(shmemx_ep_t ep)
{
    static const char fn[] = "shmemx_ep_destroy";
    running(fn);
    if (!ep) {
        fsh_init_fatal(fn, "pass a handle from shmemx_ep_create", "handle is NULL");
    }
    struct shmemx_ep_dev_state st;
    fsh_ep_device_state(ep, &st);
    uint32_t phase = st.state & ~SHMEMX_EP_ST_DEVICE;
    if (!st.error && (phase == EP_DSENT || phase == EP_CSENT)) {
        fsh_init_fatal(fn, "finish the exchange with its receive half before destroying",
                       "a send half has no receive half yet");
    }
    /* collective: every peer is done writing into this PE's block */
    if (ep->cfg.device_heap) {
        shmemx_free_device(ep->sym);
    } else {
        pshmem_free(ep->sym);
    }
    fsh_ep_device_free(ep);
    free_private(ep);
}

/* ------------------------------------------------------------------ dispatch */

/* The host calls run on a host handle in the state ok1 or ok2 (a dispatch may follow the GPU
 * path's receive half too); an error the GPU path recorded ends the job here. */
static void check_state(shmemx_ep_t ep, const char *fn, unsigned ok1, unsigned ok2,
                        const char *fix)
{
    if (!ep) {
        fsh_init_fatal(fn, "pass a handle from shmemx_ep_create", "handle is NULL");
    }
    if (ep->cfg.device_heap) {
        fsh_init_fatal(fn, "use the GPU path (include/shmemx_ep_device.h) on a handle created with device_heap, or create another handle without it for the host calls",
                       "the handle's buffers are in the device heap");
    }
    if (__atomic_load_n(&ep->st->error, __ATOMIC_ACQUIRE)) {
        shmemx_ep_device_check(ep); /* ends the job naming the GPU path's error */
    }
    unsigned s = ep->st->state;
    if (s != ok1 && s != ok2 &&
        !(ok1 == EP_IDLE && s == (EP_DRECV | SHMEMX_EP_ST_DEVICE))) {
        static const char *name[] = {"nothing", "dispatch_send", "dispatch_recv",
                                     "combine_send"};
        fsh_init_fatal(fn, fix, "called out of order (the last call was %s%s)", name[s & 3],
                       s & SHMEMX_EP_ST_DEVICE ? " of the GPU path" : "");
    }
}

/* Post counts to every member (staggered from me+1), then each non-empty slab. */
static void post_dispatch(shmemx_ep_t ep)
{
    int N = ep->npes, me = ep->me;
    uint64_t c = ep->st->seq;
    for (int i = 1; i <= N; i++) {
        int d = (me + i) % N;
        pshmem_putmem_signal_nbi(counts_of(ep, c, me), (char *)ep->cnt_out + (size_t)d * ep->cb,
                                 ep->cb, sig_of(ep, c, SIG_COUNTS, me), c, SHMEM_SIGNAL_SET,
                                 ep->wpe[d]);
    }
    for (int i = 1; i <= N; i++) {
        int d = (me + i) % N;
        uint32_t n = ep->cnt_out[(size_t)d * (ep->cb / 4)];
        if (n) {
            pshmem_putmem_signal_nbi(dslab_of(ep, c, me),
                                     ep->dpack + (size_t)d * ep->cfg.max_tokens * ep->es,
                                     n * ep->es, sig_of(ep, c, SIG_DATA, me), c,
                                     SHMEM_SIGNAL_SET, ep->wpe[d]);
        }
    }
}

int shmemx_ep_dispatch_send(shmemx_ep_t ep, const void *tokens, const void *scales,
                            const int32_t *topk_idx, const float *topk_weights, size_t n)
{
    static const char fn[] = "shmemx_ep_dispatch_send";
    running(fn);
    check_state(ep, fn, EP_IDLE, EP_DRECV,
                "call shmemx_ep_dispatch_recv (and combine_recv after a combine_send) first");
    const shmemx_ep_config_t *c = &ep->cfg;
    int k = c->topk, E = c->num_experts, L = ep->L, N = ep->npes;
    if (n > c->max_tokens) {
        fsh_init_fatal(fn, "dispatch at most max_tokens tokens per call, or create the handle with a larger max_tokens",
                       "n = %zu tokens exceeds max_tokens = %zu", n, c->max_tokens);
    }
    if (n && (!tokens || !topk_idx || !topk_weights || (c->scale_bytes && !scales))) {
        fsh_init_fatal(fn, "pass tokens, topk_idx and topk_weights (and scales when scale_bytes > 0)",
                       "a buffer is NULL with n = %zu", n);
    }
    for (size_t t = 0; t < n; t++) {
        for (int j = 0; j < k; j++) {
            int32_t e = topk_idx[t * (size_t)k + (size_t)j];
            if (e < -1 || e >= E) {
                fsh_init_fatal(fn, "expert ids are 0..num_experts-1, or -1 for none",
                               "topk_idx[%zu][%d] = %d is outside [-1, %d)", t, j, (int)e, E);
            }
            for (int i = 0; i < j && e >= 0; i++) {
                if (topk_idx[t * (size_t)k + (size_t)i] == e) {
                    fsh_init_fatal(fn, "a token chooses each expert at most once",
                                   "topk_idx[%zu] names expert %d twice", t, (int)e);
                }
            }
        }
    }
    size_t cw = ep->cb / 4, M = c->max_tokens;
    memset(ep->cnt_out, 0, (size_t)N * ep->cb);
    for (size_t t = 0; t < n; t++) {
        ep->nroute[t] = 0;
        for (int j = 0; j < k; j++) {
            int32_t e = topk_idx[t * (size_t)k + (size_t)j];
            if (e < 0) {
                continue;
            }
            int d = e / L;
            uint32_t *cd = ep->cnt_out + (size_t)d * cw;
            int r;
            for (r = 0; r < ep->nroute[t] && ep->route_pe[t * (size_t)ep->kn + (size_t)r] != d;
                 r++) {
            }
            char *ent;
            if (r == ep->nroute[t]) { /* first expert of t on d: a new entry */
                ep->route_pe[t * (size_t)ep->kn + (size_t)r] = d;
                ep->route_i[t * (size_t)ep->kn + (size_t)r] = (int)cd[0];
                ep->nroute[t]++;
                ent = ep->dpack + ((size_t)d * M + cd[0]) * ep->es;
                int32_t hdr[2] = {(int32_t)t, 0};
                memcpy(ent, hdr, sizeof(hdr));
                memcpy(ent + ep->hb, (const char *)tokens + t * ep->tok_bytes, ep->tok_bytes);
                if (c->scale_bytes) {
                    memcpy(ent + ep->hb + ep->tok_bytes,
                           (const char *)scales + t * c->scale_bytes, c->scale_bytes);
                }
                cd[0]++;
            } else {
                ent = ep->dpack + ((size_t)d * M + (size_t)ep->route_i[t * (size_t)ep->kn + (size_t)r]) * ep->es;
            }
            int32_t ne;
            memcpy(&ne, ent + 4, 4);
            int32_t le = e % L;
            float w = topk_weights[t * (size_t)k + (size_t)j];
            memcpy(ent + 8 + 8 * (size_t)ne, &le, 4);
            memcpy(ent + 12 + 8 * (size_t)ne, &w, 4);
            ne++;
            memcpy(ent + 4, &ne, 4);
            cd[1 + le]++;
        }
    }
    ep->st->n = n;
    ep->st->seq++;
    post_dispatch(ep);
    ep->st->state = EP_DSENT;
    return 0;
}

/* Wait until source s's signal of this call is set; a larger value means calls out of order. */
static void wait_sig(shmemx_ep_t ep, const char *fn, int kind, int s)
{
    uint64_t *w = sig_of(ep, ep->st->seq, kind, s);
    pshmem_signal_wait_until(w, SHMEM_CMP_GE, ep->st->seq);
    uint64_t v = pshmem_signal_fetch(w);
    if (v != ep->st->seq) {
        fsh_init_fatal(fn, "call the exchange in the same order on every PE of the team",
                       "team PE %d is at call %llu where this PE is at %llu", s,
                       (unsigned long long)v, (unsigned long long)ep->st->seq);
    }
}

int shmemx_ep_dispatch_recv(shmemx_ep_t ep, shmemx_ep_recv_t *recv)
{
    static const char fn[] = "shmemx_ep_dispatch_recv";
    running(fn);
    check_state(ep, fn, EP_DSENT, EP_DSENT, "call shmemx_ep_dispatch_send first");
    if (!recv) {
        fsh_init_fatal(fn, "pass a shmemx_ep_recv_t to fill", "recv is NULL");
    }
    int N = ep->npes, L = ep->L, me = ep->me;
    size_t M = ep->cfg.max_tokens, kk = (size_t)ep->kk;
    uint64_t c = ep->st->seq;
    /* Counts first, from every source: they fix the expert-major layout. */
    for (int i = 0; i < N; i++) {
        int s = (me - i + N) % N;
        wait_sig(ep, fn, SIG_COUNTS, s);
        const uint32_t *cs = (const uint32_t *)counts_of(ep, c, s);
        ep->nent[s] = cs[0];
        if (cs[0] > M) {
            fsh_init_fatal(fn, "report this: the counts message is corrupt",
                           "team PE %d announced %u entries (max_tokens %zu)", s, cs[0], M);
        }
        for (int e = 0; e < L; e++) {
            ep->cursor[(size_t)e * (size_t)N + (size_t)s] = cs[1 + e];
        }
    }
    size_t total = 0;
    for (int e = 0; e < L; e++) {
        ep->eoffset[e] = total;
        size_t sum = 0;
        for (int s = 0; s < N; s++) {
            size_t v = ep->cursor[(size_t)e * (size_t)N + (size_t)s];
            ep->cursor[(size_t)e * (size_t)N + (size_t)s] = total + sum; /* start of s in e */
            sum += v;
        }
        ep->ecount[e] = sum;
        total += sum;
    }
    /* Then each source's slab, unpacked into rows as it arrives. */
    for (int i = 0; i < N; i++) {
        int s = (me - i + N) % N;
        if (!ep->nent[s]) {
            continue;
        }
        wait_sig(ep, fn, SIG_DATA, s);
        const char *slab = dslab_of(ep, c, s);
        for (uint32_t x = 0; x < ep->nent[s]; x++) {
            const char *ent = slab + (size_t)x * ep->es;
            int32_t hdr[2];
            memcpy(hdr, ent, sizeof(hdr));
            if (hdr[1] < 1 || (size_t)hdr[1] > kk) {
                fsh_init_fatal(fn, "report this: a dispatch entry is corrupt",
                               "entry %u from team PE %d lists %d experts", x, s, (int)hdr[1]);
            }
            ep->ent_n[(size_t)s * M + x] = hdr[1];
            for (int j = 0; j < hdr[1]; j++) {
                int32_t le;
                float w;
                memcpy(&le, ent + 8 + 8 * (size_t)j, 4);
                memcpy(&w, ent + 12 + 8 * (size_t)j, 4);
                if (le < 0 || le >= L) {
                    fsh_init_fatal(fn, "report this: a dispatch entry is corrupt",
                                   "entry %u from team PE %d names local expert %d of %d", x,
                                   s, (int)le, L);
                }
                size_t *cu = &ep->cursor[(size_t)le * (size_t)N + (size_t)s];
                size_t row = (*cu)++;
                memcpy(ep->out_tokens + row * ep->tok_bytes, ent + ep->hb, ep->tok_bytes);
                if (ep->cfg.scale_bytes) {
                    memcpy(ep->out_scales + row * ep->cfg.scale_bytes,
                           ent + ep->hb + ep->tok_bytes, ep->cfg.scale_bytes);
                }
                ep->src_pe[row] = s;
                ep->src_token[row] = hdr[0];
                ep->ent_row[((size_t)s * M + x) * kk + (size_t)j] = (int)row;
                ep->ent_w[((size_t)s * M + x) * kk + (size_t)j] = w;
            }
        }
    }
    /* Each source's rows of each expert must end where the next source's begin. */
    for (int e = 0; e < L; e++) {
        for (int s = 0; s < N; s++) {
            size_t end = s + 1 < N ? ep->cursor[(size_t)e * (size_t)N + (size_t)s + 1] -
                                         ((const uint32_t *)counts_of(ep, c, s + 1))[1 + e]
                                   : ep->eoffset[e] + ep->ecount[e];
            if (ep->cursor[(size_t)e * (size_t)N + (size_t)s] != end) {
                fsh_init_fatal(fn, "report this: counts and data disagree",
                               "team PE %d's rows for local expert %d end at %zu, not %zu", s,
                               e, ep->cursor[(size_t)e * (size_t)N + (size_t)s], end);
            }
        }
    }
    pshmem_quiet(); /* my slabs have left: the packed buffers may be reused */
    ep->recv.total = total;
    ep->recv.local_experts = L;
    ep->recv.first_expert = me * L;
    ep->recv.tokens = ep->out_tokens;
    ep->recv.scales = ep->out_scales;
    ep->recv.expert_count = ep->ecount;
    ep->recv.expert_offset = ep->eoffset;
    ep->recv.src_pe = ep->src_pe;
    ep->recv.src_token = ep->src_token;
    *recv = ep->recv;
    ep->st->state = EP_DRECV;
    return 0;
}

/* ------------------------------------------------------------------ combine */

int shmemx_ep_combine_send(shmemx_ep_t ep, const void *expert_out)
{
    static const char fn[] = "shmemx_ep_combine_send";
    running(fn);
    check_state(ep, fn, EP_DRECV, EP_DRECV,
                "combine once after each shmemx_ep_dispatch_recv");
    if (!expert_out && ep->recv.total) {
        fsh_init_fatal(fn, "pass the expert outputs, one row per received row",
                       "expert_out is NULL with %zu rows received", ep->recv.total);
    }
    int N = ep->npes, me = ep->me;
    size_t M = ep->cfg.max_tokens, H = ep->cfg.hidden, kk = (size_t)ep->kk, rb = crow(ep);
    size_t in_row = H * ep->ce;
    float acc_small[256];
    float *acc = H <= 256 ? acc_small : malloc(H * sizeof(float));
    if (!acc) {
        fsh_init_fatal(fn, "free memory", "out of memory for a row accumulator");
    }
    uint64_t c = ep->st->seq;
    for (int i = 1; i <= N; i++) {
        int s = (me + i) % N;
        char *pk = ep->cpack + (size_t)s * M * rb;
        for (uint32_t x = 0; x < ep->nent[s]; x++) {
            for (size_t h = 0; h < H; h++) {
                acc[h] = 0.0f;
            }
            int ne = ep->ent_n[(size_t)s * M + x];
            for (int j = 0; j < ne; j++) {
                int row = ep->ent_row[((size_t)s * M + x) * kk + (size_t)j];
                float w = ep->ent_w[((size_t)s * M + x) * kk + (size_t)j];
                axpy_row(ep, acc, w, (const char *)expert_out + (size_t)row * in_row, H);
            }
            store_row(ep, pk + (size_t)x * rb, acc, H);
        }
        if (ep->nent[s]) {
            pshmem_putmem_signal_nbi(cslab_of(ep, c, me), pk, ep->nent[s] * rb,
                                     sig_of(ep, c, SIG_COMBINE, me), c, SHMEM_SIGNAL_SET,
                                     ep->wpe[s]);
        }
    }
    if (acc != acc_small) {
        free(acc);
    }
    ep->st->state = EP_CSENT;
    return 0;
}

int shmemx_ep_combine_recv(shmemx_ep_t ep, void *out)
{
    static const char fn[] = "shmemx_ep_combine_recv";
    running(fn);
    check_state(ep, fn, EP_CSENT, EP_CSENT, "call shmemx_ep_combine_send first");
    if (!out && ep->st->n) {
        fsh_init_fatal(fn, "pass room for n x hidden combined elements", "out is NULL");
    }
    int N = ep->npes, me = ep->me;
    size_t H = ep->cfg.hidden, rb = crow(ep), kn = (size_t)ep->kn;
    uint64_t c = ep->st->seq;
    /* Which PEs owe me partials: those I sent entries to. */
    size_t cw = ep->cb / 4;
    for (int i = 0; i < N; i++) {
        int p = (me - i + N) % N;
        if (ep->cnt_out[(size_t)p * cw]) {
            wait_sig(ep, fn, SIG_COMBINE, p);
        }
    }
    float acc_small[256];
    float *acc = H <= 256 ? acc_small : malloc(H * sizeof(float));
    if (!acc) {
        fsh_init_fatal(fn, "free memory", "out of memory for a row accumulator");
    }
    for (size_t t = 0; t < ep->st->n; t++) {
        for (size_t h = 0; h < H; h++) {
            acc[h] = 0.0f;
        }
        /* Partials in team-PE order, so the sum is the same whatever order they arrived in. */
        for (int p = 0; p < N; p++) {
            for (int r = 0; r < ep->nroute[t]; r++) {
                if (ep->route_pe[t * kn + (size_t)r] != p) {
                    continue;
                }
                const char *row = cslab_of(ep, c, p) + (size_t)ep->route_i[t * kn + (size_t)r] * rb;
                axpy_row(ep, acc, 1.0f, row, H);
            }
        }
        store_row(ep, (char *)out + t * H * ep->ce, acc, H);
    }
    if (acc != acc_small) {
        free(acc);
    }
    pshmem_quiet(); /* my partials have left: the packed buffers may be reused */
    ep->st->state = EP_IDLE;
    return 0;
}
