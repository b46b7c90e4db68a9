/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep: the expert-parallel exchange (shmemx_ep_*, docs/ep.md) against two baselines measured in
 * the same run. The size column is tokens per PE (default 128, the low-latency shape, and
 * 4096, the throughput shape: -b 128 -e 4096 -f 32); hidden 7168, top-8 of 256 experts (a
 * multiple of the PEs is taken when 256 is not), FP8 dispatch (1 byte), BF16 combine, 4 scale
 * bytes per token. EP_HIDDEN, EP_TOPK and EP_EXPERTS in the environment change the shape
 * (the throughput shape at hidden 7168 needs ~1.5 GiB per PE).
 *
 *   dispatch   shmemx_ep_dispatch_send + _recv
 *   combine    shmemx_ep_combine_send + _recv (after an untimed dispatch)
 *   both       dispatch then combine
 *   a2av_both  the same exchange through shmemx_alltoallvmem with a host round trip: pack per
 *              destination, alltoallv, unpack expert-major; expert rows weighted per source,
 *              alltoallv back, summed by the owner (the same arithmetic, in the same order)
 *   copy_both  the copy ceiling: one memcpy of the bytes both directions move on this PE
 *   a2av_dispatch  the baseline's dispatch half alone (no arithmetic: the protocols compared)
 *   dev_both   dispatch then combine through the GPU path's phase functions
 *              (include/shmemx_ep_device.h) run by EP_DEV_PARTS CPU threads per phase (default
 *              2, persistent, a barrier between phases) on the same handle: the emulation of
 *              the kernels, descriptors through this PE's device API proxy
 *
 * Routing is uniform top-k without repeats, from a seed per (PE, token). After the timed loops
 * the combine results of `both`, `a2av_both` and `dev_both` are compared element by element
 * (#wrong, the elements that differ from `both`'s; all compute the same sums in the same
 * order). The notes give the
 * bytes moved per PE and the ratio of a2av_both to both. Times are the slowest PE's median.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>
#include <shmemx.h>
#include <shmemx_ep_device.h>

#include "bench.h"
#include "bench_shmem.h"

static const struct bench_desc desc = {
    .name = "ep",
    .tests = "dispatch,combine,both,a2av_both,copy_both,a2av_dispatch,dev_both",
    .targets = "",
    .defaults = "",
};

static struct bench_opts opts;
static int me, npes;
static size_t H = 7168, SB = 4;
static int K = 8, E = 256;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static float bf16f(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t fbf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((u >> 16) | 0x40);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* The layer's inputs on this PE for n tokens. */
struct input {
    size_t n;
    uint8_t *tok, *sc;
    int32_t *idx;
    float *w;
};

static void make_input(struct input *in, size_t n)
{
    in->n = n;
    in->tok = malloc(n * H + 1);
    in->sc = malloc(n * SB + 1);
    in->idx = malloc(n * (size_t)K * sizeof(int32_t));
    in->w = malloc(n * (size_t)K * sizeof(float));
    for (size_t t = 0; t < n; t++) {
        for (size_t i = 0; i < H; i++) {
            in->tok[t * H + i] = (uint8_t)mix((uint64_t)me << 40 ^ t << 16 ^ i);
        }
        memset(in->sc + t * SB, (int)t, SB);
        for (int j = 0; j < K; j++) {
            uint64_t r = mix((uint64_t)me << 48 ^ t << 8 ^ (uint64_t)j);
            int32_t e;
            int dup;
            do {
                e = (int32_t)(r % (uint64_t)E);
                dup = 0;
                for (int i = 0; i < j; i++) {
                    dup |= in->idx[t * (size_t)K + (size_t)i] == e;
                }
                r = mix(r);
            } while (dup);
            in->idx[t * (size_t)K + (size_t)j] = e;
            in->w[t * (size_t)K + (size_t)j] = (float)(r % 1000) / 1000.0f;
        }
    }
}

static void free_input(struct input *in)
{
    free(in->tok);
    free(in->sc);
    free(in->idx);
    free(in->w);
}

/* Expert output of a received row: a function of its bytes (computed once, untimed). */
static void expert_rows(uint16_t *out, const uint8_t *tok, size_t rows)
{
    for (size_t r = 0; r < rows; r++) {
        for (size_t h = 0; h < H; h++) {
            out[r * H + h] = fbf16((float)((int)tok[r * H + h] - 128) / 64.0f);
        }
    }
}

/* ------------------------------------------------------------------ the alltoallv baseline */

struct a2av {
    int L;
    size_t ent; /* bytes of an entry: token, scale, src token, count, (expert, weight) x K */
    uint8_t *send, *recv;   /* packed entries out; received entries (symmetric) */
    size_t recv_size;
    uint16_t *csend, *crecv; /* combine rows out; back (symmetric) */
    size_t crecv_size;
    size_t *sc, *sd, *rc, *rd, *csc, *csd, *crc, *crd;
    int *route_pe, *route_i, *nroute; /* per token: which PE, which entry there */
    uint8_t *rows;          /* expert-major tokens */
    uint16_t *eout;         /* expert outputs */
    int *row_of;            /* [entry][K] row, -1 none */
    float *w_of;
    size_t nrecv, total;
};

static size_t ent_bytes(void)
{
    return (H + SB + 8 + 8 * (size_t)K + 7) & ~(size_t)7;
}

static void a2av_init(struct a2av *a, size_t M)
{
    a->L = E / npes;
    a->ent = ent_bytes();
    a->send = malloc((size_t)npes * M * a->ent);
    a->recv_size = (size_t)npes * M * a->ent;
    a->recv = shmem_malloc(a->recv_size);
    a->csend = malloc((size_t)npes * M * H * 2);
    a->crecv_size = (size_t)npes * M * H * 2;
    a->crecv = shmem_malloc(a->crecv_size);
    size_t np = (size_t)npes;
    a->sc = calloc(np, sizeof(size_t));
    a->sd = calloc(np, sizeof(size_t));
    a->rc = calloc(np, sizeof(size_t));
    a->rd = calloc(np, sizeof(size_t));
    a->csc = calloc(np, sizeof(size_t));
    a->csd = calloc(np, sizeof(size_t));
    a->crc = calloc(np, sizeof(size_t));
    a->crd = calloc(np, sizeof(size_t));
    a->route_pe = malloc(M * (size_t)K * sizeof(int));
    a->route_i = malloc(M * (size_t)K * sizeof(int));
    a->nroute = malloc(M * sizeof(int));
    a->rows = malloc(np * M * (size_t)K * H);
    a->eout = malloc(np * M * (size_t)K * H * 2);
    a->row_of = malloc(np * M * (size_t)K * sizeof(int));
    a->w_of = malloc(np * M * (size_t)K * sizeof(float));
}

static void a2av_fini(struct a2av *a)
{
    shmem_free(a->recv);
    shmem_free(a->crecv);
    free(a->send);
    free(a->csend);
    free(a->sc);
    free(a->sd);
    free(a->rc);
    free(a->rd);
    free(a->csc);
    free(a->csd);
    free(a->crc);
    free(a->crd);
    free(a->route_pe);
    free(a->route_i);
    free(a->nroute);
    free(a->rows);
    free(a->eout);
    free(a->row_of);
    free(a->w_of);
}

/* Dispatch: pack entries per destination PE (a token once per PE), alltoallv, then lay the rows
 * out expert-major (source order, then token order, as shmemx_ep does). */
static void a2av_dispatch(struct a2av *a, const struct input *in, size_t M)
{
    int L = a->L;
    size_t *fill = a->sc;
    memset(fill, 0, (size_t)npes * sizeof(size_t));
    for (size_t t = 0; t < in->n; t++) {
        a->nroute[t] = 0;
        for (int j = 0; j < K; j++) {
            int e = in->idx[t * (size_t)K + (size_t)j], d = e / L, r;
            for (r = 0; r < a->nroute[t] && a->route_pe[t * (size_t)K + (size_t)r] != d; r++) {
            }
            uint8_t *ent;
            if (r == a->nroute[t]) {
                a->route_pe[t * (size_t)K + (size_t)r] = d;
                a->route_i[t * (size_t)K + (size_t)r] = (int)fill[d];
                a->nroute[t]++;
                ent = a->send + ((size_t)d * M + fill[d]) * a->ent;
                memcpy(ent, in->tok + t * H, H);
                memcpy(ent + H, in->sc + t * SB, SB);
                int32_t hdr[2] = {(int32_t)t, 0};
                memcpy(ent + H + SB, hdr, 8);
                fill[d]++;
            } else {
                ent = a->send + ((size_t)d * M + (size_t)a->route_i[t * (size_t)K + (size_t)r]) *
                                    a->ent;
            }
            int32_t ne;
            memcpy(&ne, ent + H + SB + 4, 4);
            int32_t le = e % L;
            memcpy(ent + H + SB + 8 + 8 * (size_t)ne, &le, 4);
            memcpy(ent + H + SB + 12 + 8 * (size_t)ne, &in->w[t * (size_t)K + (size_t)j], 4);
            ne++;
            memcpy(ent + H + SB + 4, &ne, 4);
        }
    }
    for (int d = 0; d < npes; d++) {
        a->sc[d] *= a->ent;
        a->sd[d] = (size_t)d * M * a->ent;
    }
    shmemx_alltoallvmem(SHMEM_TEAM_WORLD, a->recv, a->recv_size, a->send, a->sc, a->sd, a->rc,
                        a->rd);
    /* Count rows per local expert, then place them. */
    size_t *cnt = calloc((size_t)L * (size_t)npes + 1, sizeof(size_t));
    a->nrecv = 0;
    for (int s = 0; s < npes; s++) {
        for (size_t x = 0; x < a->rc[s] / a->ent; x++) {
            const uint8_t *ent = a->recv + a->rd[s] + x * a->ent;
            int32_t ne;
            memcpy(&ne, ent + H + SB + 4, 4);
            for (int j = 0; j < ne; j++) {
                int32_t le;
                memcpy(&le, ent + H + SB + 8 + 8 * (size_t)j, 4);
                cnt[(size_t)le * (size_t)npes + (size_t)s]++;
            }
        }
    }
    size_t at = 0;
    for (size_t i = 0; i < (size_t)L * (size_t)npes; i++) {
        size_t v = cnt[i];
        cnt[i] = at;
        at += v;
    }
    a->total = at;
    size_t nent = 0;
    for (int s = 0; s < npes; s++) {
        for (size_t x = 0; x < a->rc[s] / a->ent; x++, nent++) {
            const uint8_t *ent = a->recv + a->rd[s] + x * a->ent;
            int32_t ne;
            memcpy(&ne, ent + H + SB + 4, 4);
            for (int j = 0; j < K; j++) {
                a->row_of[nent * (size_t)K + (size_t)j] = -1;
            }
            for (int j = 0; j < ne; j++) {
                int32_t le;
                float w;
                memcpy(&le, ent + H + SB + 8 + 8 * (size_t)j, 4);
                memcpy(&w, ent + H + SB + 12 + 8 * (size_t)j, 4);
                size_t row = cnt[(size_t)le * (size_t)npes + (size_t)s]++;
                memcpy(a->rows + row * H, ent, H);
                a->row_of[nent * (size_t)K + (size_t)j] = (int)row;
                a->w_of[nent * (size_t)K + (size_t)j] = w;
            }
        }
    }
    a->nrecv = nent;
    free(cnt);
}

/* Combine: weighted partial per received entry, alltoallv back, the owner sums in PE order. */
static void a2av_combine(struct a2av *a, const struct input *in, uint16_t *out, size_t M)
{
    float *acc = malloc(H * sizeof(float));
    size_t nent = 0;
    for (int s = 0; s < npes; s++) {
        size_t ns = a->rc[s] / a->ent;
        for (size_t x = 0; x < ns; x++, nent++) {
            for (size_t h = 0; h < H; h++) {
                acc[h] = 0.0f;
            }
            for (int j = 0; j < K && a->row_of[nent * (size_t)K + (size_t)j] >= 0; j++) {
                const uint16_t *row = a->eout + (size_t)a->row_of[nent * (size_t)K + (size_t)j] * H;
                float w = a->w_of[nent * (size_t)K + (size_t)j];
                for (size_t h = 0; h < H; h++) {
                    acc[h] += w * bf16f(row[h]);
                }
            }
            for (size_t h = 0; h < H; h++) {
                a->csend[((size_t)s * M + x) * H + h] = fbf16(acc[h]);
            }
        }
        a->csc[s] = ns * H * 2;
        a->csd[s] = (size_t)s * M * H * 2;
    }
    shmemx_alltoallvmem(SHMEM_TEAM_WORLD, a->crecv, a->crecv_size, a->csend, a->csc, a->csd,
                        a->crc, a->crd);
    for (size_t t = 0; t < in->n; t++) {
        for (size_t h = 0; h < H; h++) {
            acc[h] = 0.0f;
        }
        for (int p = 0; p < npes; p++) {
            for (int r = 0; r < a->nroute[t]; r++) {
                if (a->route_pe[t * (size_t)K + (size_t)r] != p) {
                    continue;
                }
                const uint16_t *row =
                    a->crecv + (a->crd[p] / 2) + (size_t)a->route_i[t * (size_t)K + (size_t)r] * H;
                for (size_t h = 0; h < H; h++) {
                    acc[h] += bf16f(row[h]);
                }
            }
        }
        for (size_t h = 0; h < H; h++) {
            out[t * H + h] = fbf16(acc[h]);
        }
    }
    free(acc);
}

/* ------------------------------------------------------------------ timing */

/* ------------------------------------------------------------------ the GPU path, emulated */

/* Parts of a phase as persistent threads: the caller is part 0; go and done are barriers. */
struct devpool {
    int parts, phase, rc; /* phase: 0..3 the four halves, 4 stop */
    shmemx_device_t h;
    shmemx_ep_device_t d;
    const struct input *in;
    size_t n;
    const void *eout;
    void *out;
    pthread_barrier_t go, done;
    pthread_t thread[16];
};

static void dev_part(struct devpool *p, int part)
{
    shmemx_device_t h = p->h;
    h.channel = part % h.nchan;
    int rc = 0;
    switch (p->phase) {
    case 0:
        rc = shmemx_dev_ep_dispatch_send(h, p->d, p->in->tok, p->in->sc, p->in->idx, p->in->w,
                                         p->n, part, p->parts);
        break;
    case 1:
        rc = shmemx_dev_ep_dispatch_recv(h, p->d, part, p->parts);
        break;
    case 2:
        rc = shmemx_dev_ep_combine_send(h, p->d, p->eout, part, p->parts);
        break;
    case 3:
        rc = shmemx_dev_ep_combine_recv(h, p->d, p->out, part, p->parts);
        break;
    }
    if (rc != 0) {
        __atomic_store_n(&p->rc, rc, __ATOMIC_RELAXED);
    }
}

static struct devpool *pool_of(void *arg, int *part)
{
    uintptr_t v = (uintptr_t)arg;
    *part = (int)(v & 15);
    return (struct devpool *)(v & ~(uintptr_t)15);
}

static void *dev_worker(void *arg)
{
    int part;
    struct devpool *p = pool_of(arg, &part);
    for (;;) {
        pthread_barrier_wait(&p->go);
        if (p->phase == 4) {
            return NULL;
        }
        dev_part(p, part);
        pthread_barrier_wait(&p->done);
    }
}

static void dev_phase(struct devpool *p, int phase)
{
    p->phase = phase;
    pthread_barrier_wait(&p->go);
    if (phase != 4) {
        dev_part(p, 0);
        pthread_barrier_wait(&p->done);
    }
}

static struct devpool *dev_start(shmemx_ep_t ep, int parts)
{
    struct devpool *p = aligned_alloc(16, (sizeof(*p) + 15) & ~(size_t)15);
    memset(p, 0, sizeof(*p));
    p->parts = parts < 1 ? 1 : parts > 16 ? 16 : parts;
    if (shmemx_device_handle_host(&p->h) != 0 || shmemx_ep_device_handle(ep, &p->d) != 0) {
        free(p);
        return NULL;
    }
    pthread_barrier_init(&p->go, NULL, (unsigned)p->parts);
    pthread_barrier_init(&p->done, NULL, (unsigned)p->parts);
    for (int i = 1; i < p->parts; i++) {
        pthread_create(&p->thread[i], NULL, dev_worker, (void *)((uintptr_t)p | (uintptr_t)i));
    }
    return p;
}

static void dev_stop(struct devpool *p)
{
    dev_phase(p, 4);
    for (int i = 1; i < p->parts; i++) {
        pthread_join(p->thread[i], NULL);
    }
    pthread_barrier_destroy(&p->go);
    pthread_barrier_destroy(&p->done);
    free(p);
}

static double med_of(double *s, int n, double *best)
{
    double mn;
    double med = bench_stats(s, n, &mn);
    *best = bench_max(mn);
    return bench_max(med);
}

int main(int argc, char **argv)
{
    bench_parse(&opts, &desc, argc, argv);
    if (opts.min == 8 && opts.max == (1u << 20)) { /* the driver's defaults: the two shapes */
        opts.min = 128;
        opts.max = 4096;
        opts.factor = 32;
    }
    if (getenv("EP_HIDDEN")) {
        H = (size_t)atol(getenv("EP_HIDDEN"));
    }
    if (getenv("EP_TOPK")) {
        K = atoi(getenv("EP_TOPK"));
    }
    if (getenv("EP_EXPERTS")) {
        E = atoi(getenv("EP_EXPERTS"));
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    bench_shmem_start(&opts, &desc);
    if (E % npes) {
        E = npes * (E / npes + 1);
    }
    bench_note("shape: hidden %zu, top-%d of %d experts (%d per PE), FP8 dispatch, BF16 combine, "
               "%zu scale bytes; size = tokens per PE",
               H, K, E, E / npes, SB);
    int iters = opts.iters, warm = opts.warmup;
    double *samp = malloc((size_t)iters * sizeof(double));
    for (size_t M = opts.min; M <= opts.max; M = bench_next_size(&opts, M)) {
        shmemx_ep_config_t cfg = {.max_tokens = M,
                                  .hidden = H,
                                  .dispatch_elem_bytes = 1,
                                  .combine_type = SHMEMX_EP_BFLOAT16,
                                  .num_experts = E,
                                  .topk = K,
                                  .scale_bytes = SB};
        shmemx_ep_t ep = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
        struct input in;
        make_input(&in, M);
        struct a2av a;
        a2av_init(&a, M);
        uint16_t *out = malloc(M * H * 2), *out_ref = malloc(M * H * 2);
        size_t cap = (size_t)npes * M * (size_t)K;
        uint16_t *eout = malloc(cap * H * 2);
        shmemx_ep_recv_t r;
        /* One untimed exchange: expert outputs, and the bytes moved. */
        shmemx_ep_dispatch_send(ep, in.tok, in.sc, in.idx, in.w, M);
        shmemx_ep_dispatch_recv(ep, &r);
        expert_rows(eout, r.tokens, r.total);
        shmemx_ep_combine_send(ep, eout);
        shmemx_ep_combine_recv(ep, out);
        size_t entries = 0; /* (token, destination PE) pairs this PE sends */
        for (size_t t = 0; t < M; t++) {
            for (int p = 0; p < npes; p++) {
                int hit = 0;
                for (int j = 0; j < K; j++) {
                    hit |= in.idx[t * (size_t)K + (size_t)j] / (E / npes) == p;
                }
                entries += (size_t)hit;
            }
        }
        size_t dbytes = entries * (H + SB), cbytes = entries * H * 2;
        bench_note("%zu tokens: PE 0 sends %zu token copies: dispatch %.2f MB, combine %.2f MB; "
                   "symmetric heap per handle %.1f MB",
                   M, entries, dbytes / 1e6, cbytes / 1e6,
                   shmemx_ep_heap_bytes(&cfg, npes) / 1e6);
        double med[7] = {0}, best[7];
        const char *names[7] = {"dispatch",  "combine",       "both",    "a2av_both",
                                "copy_both", "a2av_dispatch", "dev_both"};
        uint16_t *out_dev = malloc(M * H * 2);
        struct devpool *dp = NULL;
        if (bench_want(&opts, "dev_both")) {
            dp = dev_start(ep, getenv("EP_DEV_PARTS") ? atoi(getenv("EP_DEV_PARTS")) : 2);
            if (!dp) {
                bench_note("dev_both: no device API handle");
            } else {
                dp->in = &in;
                dp->n = M;
                dp->eout = eout;
                dp->out = out_dev;
            }
        }
        for (int k = 0; k < 7; k++) {
            if (!bench_want(&opts, names[k]) || (k == 6 && !dp)) {
                continue;
            }
            uint8_t *c1 = k == 4 ? malloc(dbytes + cbytes + 1) : NULL;
            uint8_t *c2 = k == 4 ? malloc(dbytes + cbytes + 1) : NULL;
            if (c1) {
                memset(c1, 1, dbytes + cbytes + 1);
                memset(c2, 2, dbytes + cbytes + 1);
            }
            for (int i = -warm; i < iters; i++) {
                shmem_barrier_all();
                if (k == 1) {
                    shmemx_ep_dispatch_send(ep, in.tok, in.sc, in.idx, in.w, M);
                    shmemx_ep_dispatch_recv(ep, &r);
                    shmem_barrier_all();
                }
                double t0 = bench_now_us();
                switch (k) {
                case 0:
                    shmemx_ep_dispatch_send(ep, in.tok, in.sc, in.idx, in.w, M);
                    shmemx_ep_dispatch_recv(ep, &r);
                    break;
                case 1:
                    shmemx_ep_combine_send(ep, eout);
                    shmemx_ep_combine_recv(ep, out);
                    break;
                case 2:
                    shmemx_ep_dispatch_send(ep, in.tok, in.sc, in.idx, in.w, M);
                    shmemx_ep_dispatch_recv(ep, &r);
                    shmemx_ep_combine_send(ep, eout);
                    shmemx_ep_combine_recv(ep, out);
                    break;
                case 3:
                    a2av_dispatch(&a, &in, M);
                    if (i == -warm) {
                        expert_rows(a.eout, a.rows, a.total);
                    }
                    a2av_combine(&a, &in, out_ref, M);
                    break;
                case 4:
                    memcpy(c2, c1, dbytes + cbytes);
                    break;
                case 6:
                    for (int ph = 0; ph < 4; ph++) {
                        dev_phase(dp, ph);
                    }
                    break;
                default:
                    a2av_dispatch(&a, &in, M);
                    break;
                }
                if (i >= 0) {
                    samp[i] = bench_now_us() - t0;
                }
            }
            free(c1);
            free(c2);
            med[k] = med_of(samp, iters, &best[k]);
        }
        /* The data check: both ways must give the same combined tokens. */
        long wrong = 0;
        if (bench_want(&opts, "both") && bench_want(&opts, "a2av_both")) {
            for (size_t i = 0; i < M * H; i++) {
                wrong += out[i] != out_ref[i];
            }
        }
        long dwrong = 0;
        if (dp) {
            dwrong = dp->rc != 0 ? (long)(M * H) : 0;
            for (size_t i = 0; i < M * H && bench_want(&opts, "both"); i++) {
                dwrong += out[i] != out_dev[i];
            }
            dev_stop(dp);
        }
        wrong = bench_sum(wrong);
        dwrong = bench_sum(dwrong);
        for (int k = 0; k < 7; k++) {
            if (bench_want(&opts, names[k]) && (k != 6 || med[6] > 0)) {
                bench_section(names[k], "world", "us", names[k]);
                bench_row(M, med[k], best[k], k >= 2 && k <= 3 ? wrong : k == 6 ? dwrong : 0);
            }
        }
        if (med[2] > 0 && med[6] > 0) {
            bench_note("%zu tokens: dev_both / both = %.2fx (the GPU path emulated by CPU "
                       "threads)",
                       M, med[6] / med[2]);
        }
        if (med[2] > 0 && med[3] > 0) {
            bench_note("%zu tokens: a2av_both / both = %.2fx; both / copy_both = %.2fx", M,
                       med[3] / med[2], med[4] > 0 ? med[2] / med[4] : 0.0);
        }
        if (med[0] > 0 && med[5] > 0) {
            bench_note("%zu tokens: a2av_dispatch / dispatch = %.2fx", M, med[5] / med[0]);
        }
        free(out);
        free(out_dev);
        free(out_ref);
        free(eout);
        a2av_fini(&a);
        free_input(&in);
        shmemx_ep_destroy(ep);
    }
    free(samp);
    int rc = bench_finish();
    shmem_finalize();
    return rc;
}
