/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_device: the expert-parallel exchange's GPU path (include/shmemx_ep_device.h): its phase
 * functions, the very code kernels run, driven by CPU threads playing blocks against this
 * PE's real proxy, on a host-heap handle (shmemx_device_handle_host). Every byte is judged by
 * ep_judge.h, the same independent judge as ep_exchange.
 *
 * Each phase runs as nparts threads (1, 3 or 5 by call: one part, parts with several PEs,
 * more parts than PEs), joined before the next phase, as kernels on one stream would be.
 * Modes, each over ep_judge's five cases of four calls (call 2 without a combine):
 *  - device: every PE takes the GPU path every call;
 *  - mixed: on each call half the PEs take the host reference (shmemx_ep_*), the others the
 *    GPU path, the halves swapping every call, so one handle switches paths call by call and
 *    every pair of PEs exchanges across paths both ways;
 *  - mapped (shm only): the device API handle's window is the host heap, mapped at every
 *    peer, so the puts are stores through the mapping (no descriptor may be posted).
 *  - blocks: each part is 3 or 4 lanes (threads) running the block forms' logic (lane runs
 *    of tokens with a prefix over lanes, elements split over lanes, the lanes meeting at a
 *    barrier where a GPU block meets at __syncthreads).
 *  - groups: device and mixed again with the world split into even and odd PEs (EP groups,
 *    shmemx_ep_create over sub-teams), numbered by the group, seeded by it.
 * Twins: the same inputs through both paths on two handles, with inexact weights and expert
 * outputs, must give identical rows and combined tokens (same order of terms, same rounding).
 * Then the errors, on every PE alike (nobody waits for a peer that posted nothing): an
 * expert id out of range, a repeated id, n > max_tokens and a receive half first each return
 * SHMEMX_DEV_EINVAL from every part, record the cause and its details, and keep failing.
 */
#include <pthread.h>
#include <stdio.h>

/* Lanes: the block forms' logic (lane of nl, shared scratch, the lanes meeting between steps)
 * run by nl CPU threads per part, meeting at a barrier where a block would __syncthreads. */
struct lanes {
    pthread_barrier_t b;
    int flag;
};
static __thread struct lanes *my_lanes;
static int lanes_sync_or(int pred);
#define SHMEMX_EP_HOST_SYNC_OR(pred) lanes_sync_or(pred)
#include <shmemx_ep_device.h>

#include "../ep_judge.h"

#define NAME "ep_device"
#define CALLS 4
#define MAXPARTS 5
#define MAXLANES 4

/* The OR of pred over the part's lanes, all of them meeting (three barriers: set, read,
 * reset). */
static int lanes_sync_or(int pred)
{
    struct lanes *g = my_lanes;
    if (pred) {
        __atomic_store_n(&g->flag, 1, __ATOMIC_RELAXED);
    }
    int first = pthread_barrier_wait(&g->b) == PTHREAD_BARRIER_SERIAL_THREAD;
    int any = __atomic_load_n(&g->flag, __ATOMIC_ACQUIRE);
    pthread_barrier_wait(&g->b);
    if (first) {
        __atomic_store_n(&g->flag, 0, __ATOMIC_RELAXED);
    }
    pthread_barrier_wait(&g->b);
    return any;
}

enum phase { P_DSEND, P_DRECV, P_CSEND, P_CRECV };

struct part {
    shmemx_device_t h;
    shmemx_ep_device_t d;
    enum phase ph;
    const void *tok, *sc, *eout;
    const int32_t *idx;
    const float *w;
    size_t n;
    void *out;
    int part, nparts, rc;
    unsigned lane, nl;
    uint32_t *scr;
    struct lanes *group;
    pthread_t thread;
};

static shmemx_device_t dev; /* the host handle of the device API */

static void *run_part(void *arg)
{
    struct part *p = arg;
    if (p->nl > 1) { /* a lane of a block */
        my_lanes = p->group;
        switch (p->ph) {
        case P_DSEND:
            p->rc = shmemx_dev_ep_dsend_(p->h, p->d, p->tok, p->sc, p->idx, p->w, p->n, p->part,
                                         p->nparts, p->lane, p->nl, p->scr);
            break;
        case P_DRECV:
            p->rc = shmemx_dev_ep_drecv_(p->h, p->d, p->part, p->nparts, p->lane, p->nl);
            break;
        case P_CSEND:
            p->rc = shmemx_dev_ep_csend_(p->h, p->d, p->eout, p->part, p->nparts, p->lane, p->nl);
            break;
        case P_CRECV:
            p->rc = shmemx_dev_ep_crecv_(p->h, p->d, p->out, p->part, p->nparts, p->lane, p->nl);
            break;
        }
        return NULL;
    }
    switch (p->ph) {
    case P_DSEND:
        p->rc = shmemx_dev_ep_dispatch_send(p->h, p->d, p->tok, p->sc, p->idx, p->w, p->n,
                                            p->part, p->nparts);
        break;
    case P_DRECV:
        p->rc = shmemx_dev_ep_dispatch_recv(p->h, p->d, p->part, p->nparts);
        break;
    case P_CSEND:
        p->rc = shmemx_dev_ep_combine_send(p->h, p->d, p->eout, p->part, p->nparts);
        break;
    case P_CRECV:
        p->rc = shmemx_dev_ep_combine_recv(p->h, p->d, p->out, p->part, p->nparts);
        break;
    }
    return NULL;
}

/* One phase as nparts parts of nl lanes (threads) each; every lane's rc must be want.
 * Returns 1 when they were. */
static int phase_lanes(shmemx_device_t h, shmemx_ep_device_t d, struct part proto, int nparts,
                       unsigned nl, int want, const char *what)
{
    struct part p[MAXPARTS * MAXLANES];
    struct lanes g[MAXPARTS];
    uint32_t scr[MAXPARTS][MAXLANES + 1];
    int n = nparts * (int)nl;
    for (int i = 0; i < nparts; i++) {
        g[i].flag = 0;
        pthread_barrier_init(&g[i].b, NULL, nl);
    }
    for (int i = 0; i < n; i++) {
        int part = i / (int)nl;
        p[i] = proto;
        p[i].h = h;
        p[i].h.channel = part % h.nchan; /* a block's ring */
        p[i].d = d;
        p[i].part = part;
        p[i].nparts = nparts;
        p[i].lane = (unsigned)i % nl;
        p[i].nl = nl;
        p[i].scr = scr[part];
        p[i].group = &g[part];
        pthread_create(&p[i].thread, NULL, run_part, &p[i]);
    }
    int ok = 1;
    for (int i = 0; i < n; i++) {
        pthread_join(p[i].thread, NULL);
        ok &= t_check(p[i].rc == want,
                      "%s: phase %d part %d of %d, lane %u of %u returned %d, expected %d", what,
                      (int)proto.ph, p[i].part, nparts, p[i].lane, nl, p[i].rc, want);
    }
    for (int i = 0; i < nparts; i++) {
        pthread_barrier_destroy(&g[i].b);
    }
    return ok;
}

static int phase(shmemx_device_t h, shmemx_ep_device_t d, struct part proto, int nparts,
                 int want, const char *what)
{
    return phase_lanes(h, d, proto, nparts, 1, want, what);
}

/* The received rows as the reference's recv struct, for the judge. */
static shmemx_ep_recv_t recv_of(shmemx_ep_device_t d)
{
    shmemx_ep_recv_t r = {.total = (size_t)shmemx_dev_ep_total(d),
                          .local_experts = d.L,
                          .first_expert = d.me * d.L,
                          .tokens = d.out_tokens,
                          .scales = d.scale_bytes ? d.out_scales : NULL,
                          .expert_count = d.ecount,
                          .expert_offset = d.eoffset,
                          .src_pe = d.src_pe,
                          .src_token = d.src_token};
    return r;
}

enum mode { M_DEVICE, M_MIXED, M_MAPPED, M_BLOCKS };
static const char *const mode_name[] = {"device", "mixed", "mapped", "blocks"};

/* The EP group of this PE's calls: the world (set by main), or its even or odd half. */
static shmem_team_t group;

static void run_case(int ci, const struct ecase *k, enum mode mode, shmemx_device_t h)
{
    shmemx_ep_config_t cfg = ep_config(k);
    shmemx_ep_t ep = shmemx_ep_create(group, &cfg);
    shmemx_ep_device_t d;
    if (!t_check(ep != NULL && shmemx_ep_device_handle(ep, &d) == 0,
                 "case %s: create or handle failed", k->what)) {
        return;
    }
    shmemx_ep_device_t d2;
    shmemx_ep_device_handle(ep, &d2);
    t_check(d2.st == d.st && d2.dpack == d.dpack && d.npes == npes && d.me == me &&
                d.L == k->E / npes,
            "case %s: a second handle differs, or the shape is wrong", k->what);
    size_t tb = k->H * k->de, ce = ep_ce(k);
    uint8_t *tok = malloc(k->M * tb + 1), *sc = malloc(k->M * k->sb + 1);
    int32_t *idx = malloc(k->M * (size_t)k->k * sizeof(int32_t));
    float *w = malloc(k->M * (size_t)k->k * sizeof(float));
    size_t cap = (size_t)npes * k->M * (size_t)k->k;
    uint8_t *eout = malloc(cap * k->H * ce + 1), *out = malloc(k->M * k->H * ce + 1);
    for (int c = 0; c < CALLS; c++) {
        int on_dev = mode != M_MIXED || (me + c) % 2 == 1;
        int nparts = mode == M_BLOCKS ? 1 + c % 2 : 1 + 2 * (c % 3);
        unsigned nl = mode == M_BLOCKS ? 3 + (unsigned)(c % 2) : 1; /* lanes per part */
        char what[64];
        snprintf(what, sizeof(what), "%s, %s, %d parts of %u lanes", mode_name[mode],
                 on_dev ? "GPU path" : "host calls", nparts, nl);
        size_t n = ep_inputs(k, ci, c, tok, sc, idx, w);
        shmemx_ep_recv_t r;
        memset(&r, 0, sizeof(r));
        struct part proto = {.tok = tok, .sc = k->sb ? sc : NULL, .idx = idx, .w = w, .n = n,
                             .eout = eout, .out = out};
        if (on_dev) {
            proto.ph = P_DSEND;
            phase_lanes(h, d, proto, nparts, nl, 0, what);
            proto.ph = P_DRECV;
            phase_lanes(h, d, proto, nparts, nl, 0, what);
            r = recv_of(d);
        } else {
            shmemx_ep_dispatch_send(ep, tok, k->sb ? sc : NULL, idx, w, n);
            shmemx_ep_dispatch_recv(ep, &r);
        }
        t_check(d.st->seq == (uint64_t)c + 1, "case %s call %d (%s): call number %llu",
                k->what, c, what, (unsigned long long)d.st->seq);
        int ok = ep_judge_dispatch(k, ci, c, what, &r);
        if (c == 2) {
            continue; /* a dispatch without combine */
        }
        if (ok) {
            ep_experts(k, &r, eout);
        }
        memset(out, 0xee, n * k->H * ce);
        if (on_dev) {
            proto.ph = P_CSEND;
            phase_lanes(h, d, proto, nparts, nl, 0, what);
            proto.ph = P_CRECV;
            phase_lanes(h, d, proto, nparts, nl, 0, what);
        } else {
            shmemx_ep_combine_send(ep, eout);
            shmemx_ep_combine_recv(ep, out);
        }
        ep_judge_combine(k, c, what, n, tok, idx, w, out);
    }
    t_check(shmemx_ep_device_check(ep) == 0, "case %s: an error was recorded", k->what);
    shmemx_ep_destroy(ep);
    free(tok);
    free(sc);
    free(idx);
    free(w);
    free(eout);
    free(out);
}

/* Twins: the same inputs through the host reference (handle a) and the GPU path (handle b),
 * with weights and expert outputs that are not exact (random floats): the received rows and
 * the combined tokens must be identical bit for bit, which holds only when the GPU path adds
 * the same terms in the same order and rounds to bfloat16 the same way. */
static void twins(int ci, const struct ecase *k)
{
    shmemx_ep_config_t cfg = ep_config(k);
    shmemx_ep_t a = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    shmemx_ep_t b = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    shmemx_ep_device_t d;
    shmemx_ep_device_handle(b, &d);
    size_t tb = k->H * k->de, ce = ep_ce(k);
    uint8_t *tok = malloc(k->M * tb + 1), *sc = malloc(k->M * k->sb + 1);
    int32_t *idx = malloc(k->M * (size_t)k->k * sizeof(int32_t));
    float *w = malloc(k->M * (size_t)k->k * sizeof(float));
    size_t cap = (size_t)npes * k->M * (size_t)k->k;
    uint8_t *eout = malloc(cap * k->H * ce + 1), *out_a = malloc(k->M * k->H * ce + 1),
            *out_b = malloc(k->M * k->H * ce + 1);
    for (int c = 0; c < 2; c++) {
        size_t n = ep_inputs(k, ci, c, tok, sc, idx, w);
        for (size_t i = 0; i < n * (size_t)k->k; i++) {
            w[i] = (float)(t_mix(i * 31 + (uint64_t)me) % 100000) / 77777.0f;
        }
        shmemx_ep_recv_t ra, rb;
        shmemx_ep_dispatch_send(a, tok, k->sb ? sc : NULL, idx, w, n);
        shmemx_ep_dispatch_recv(a, &ra);
        struct part proto = {.tok = tok, .sc = k->sb ? sc : NULL, .idx = idx, .w = w, .n = n,
                             .eout = eout, .out = out_b};
        proto.ph = P_DSEND;
        phase(dev, d, proto, 3, 0, "twins");
        proto.ph = P_DRECV;
        phase(dev, d, proto, 3, 0, "twins");
        rb = recv_of(d);
        int same = ra.total == rb.total && memcmp(ra.tokens, rb.tokens, ra.total * tb) == 0 &&
                   memcmp(ra.src_pe, rb.src_pe, ra.total * sizeof(int)) == 0 &&
                   memcmp(ra.src_token, rb.src_token, ra.total * sizeof(int)) == 0 &&
                   (k->sb == 0 || memcmp(ra.scales, rb.scales, ra.total * k->sb) == 0);
        t_check(same, "twins case %s call %d: the GPU path received other rows", k->what, c);
        for (size_t r = 0; r < ra.total; r++) {
            for (size_t h = 0; h < k->H; h++) {
                float v = (float)((const uint8_t *)ra.tokens)[r * tb + h * k->de] / 3.3f -
                          (float)h * 0.0173f + (float)r * 1e-3f;
                if (ce == 4) {
                    ((float *)eout)[r * k->H + h] = v;
                } else {
                    ((uint16_t *)eout)[r * k->H + h] = to_bf16(v);
                }
            }
        }
        shmemx_ep_combine_send(a, eout);
        shmemx_ep_combine_recv(a, out_a);
        proto.ph = P_CSEND;
        phase(dev, d, proto, 3, 0, "twins");
        proto.ph = P_CRECV;
        phase(dev, d, proto, 3, 0, "twins");
        size_t diff = 0;
        for (size_t i = 0; i < n * k->H * ce; i++) {
            diff += out_a[i] != out_b[i];
        }
        t_check(diff == 0, "twins case %s call %d: %zu bytes of the combined tokens differ",
                k->what, c, diff);
    }
    shmemx_ep_destroy(b);
    shmemx_ep_destroy(a);
    free(tok);
    free(sc);
    free(idx);
    free(w);
    free(eout);
    free(out_a);
    free(out_b);
}

/* A device API handle whose window is the host heap, mapped at every peer (shm); 0 if not. */
static int mapped_handle(shmemx_device_t *m, void ***base)
{
    *base = malloc(sizeof(void *) * (size_t)npes);
    int all = 1;
    for (int pe = 0; pe < npes; pe++) {
        (*base)[pe] = shmem_ptr((void *)(uintptr_t)dev.heap_base, pe);
        all = all && (*base)[pe];
    }
    *m = dev;
    m->peer_base = (void *const *)*base;
    m->win_base = dev.heap_base;
    m->win_size = dev.heap_size;
    m->win_seg = dev.heap_seg;
    return all;
}

/* One bad call on a fresh handle: every part returns SHMEMX_DEV_EINVAL with cause why and
 * details a, b, c (-1: not checked); the next phase fails the same way. */
static void bad(const char *what, int why, int64_t a, int64_t b, int64_t c, int recv_first,
                size_t n, int32_t bad_idx, int bad_pos, unsigned nl)
{
    shmemx_ep_config_t cfg = {.max_tokens = 8,
                              .hidden = 4,
                              .dispatch_elem_bytes = 1,
                              .combine_type = SHMEMX_EP_FLOAT32,
                              .num_experts = 2 * npes,
                              .topk = 2,
                              .scale_bytes = 0};
    shmemx_ep_t ep = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    shmemx_ep_device_t d;
    shmemx_ep_device_handle(ep, &d);
    static uint8_t tok[9 * 4];
    static int32_t idx[9 * 2];
    static float w[9 * 2];
    for (int t = 0; t < 9; t++) {
        idx[2 * t] = t % (2 * npes);
        idx[2 * t + 1] = (t + 1) % (2 * npes);
    }
    if (bad_pos >= 0) {
        idx[bad_pos] = bad_idx;
    }
    struct part proto = {.tok = tok, .idx = idx, .w = w, .n = n};
    proto.ph = recv_first ? P_DRECV : P_DSEND;
    phase_lanes(dev, d, proto, 3, nl, SHMEMX_DEV_EINVAL, what);
    t_check(d.st->error == why && d.st->err_a == a && (b < 0 || d.st->err_b == b) &&
                (c < 0 || d.st->err_c == c),
            "%s: error %d (%lld, %lld, %lld), expected %d (%lld, %lld, %lld)", what,
            (int)d.st->error, (long long)d.st->err_a, (long long)d.st->err_b,
            (long long)d.st->err_c, why, (long long)a, (long long)b, (long long)c);
    t_check(d.st->seq == 0 && d.st->state == SHMEMX_EP_ST_IDLE,
            "%s: the failed call moved the state (call %llu, state %u)", what,
            (unsigned long long)d.st->seq, d.st->state);
    proto.ph = P_DSEND;
    proto.n = 1;
    phase(dev, d, proto, 2, SHMEMX_DEV_EINVAL, what); /* sticky */
    shmemx_ep_destroy(ep);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    group = SHMEM_TEAM_WORLD;
    if (shmemx_device_handle_host(&dev) != 0) {
        t_check(0, "shmemx_device_handle_host failed");
        return t_finish(NAME);
    }
    struct ecase cases[8];
    int nc = ep_cases(cases);
    for (int ci = 0; ci < nc; ci++) {
        run_case(ci, &cases[ci], M_DEVICE, dev);
        run_case(ci, &cases[ci], M_MIXED, dev);
        run_case(ci, &cases[ci], M_BLOCKS, dev);
        twins(ci, &cases[ci]);
    }
    /* EP groups: the even and the odd PEs exchange apart, through both paths */
    shmem_team_t half[2] = {SHMEM_TEAM_INVALID, SHMEM_TEAM_INVALID};
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &half[0]);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &half[1]);
    int g = shmem_my_pe() % 2;
    group = half[g];
    if (t_check(group != SHMEM_TEAM_INVALID, "PE %d is in no even/odd group", shmem_my_pe())) {
        me = shmem_team_my_pe(group);
        npes = shmem_team_n_pes(group);
        struct ecase gcases[8];
        int gn = ep_cases(gcases);
        for (int ci = 0; ci < gn; ci++) {
            run_case(ci + 16 * (g + 1), &gcases[ci], M_DEVICE, dev);
            run_case(ci + 16 * (g + 1), &gcases[ci], M_MIXED, dev);
        }
        shmem_team_destroy(group);
    }
    group = SHMEM_TEAM_WORLD;
    me = shmem_my_pe();
    npes = shmem_n_pes();
    /* float32 partials of a token from several PEs, several experts each: the order of the
     * terms shows in the last bits */
    struct ecase fp32 = cases[2];
    fp32.what = "top-8 fp32";
    fp32.ctype = SHMEMX_EP_FLOAT32;
    twins(2, &fp32);
    shmemx_device_t m;
    void **base;
    if (mapped_handle(&m, &base)) {
        uint64_t before = 0, after = 0;
        for (int c = 0; c < dev.nchan; c++) {
            before += __atomic_load_n(&dev.claim[c].head, __ATOMIC_ACQUIRE);
        }
        for (int ci = 0; ci < nc; ci++) {
            run_case(ci, &cases[ci], M_MAPPED, m);
        }
        for (int c = 0; c < dev.nchan; c++) {
            after += __atomic_load_n(&dev.claim[c].head, __ATOMIC_ACQUIRE);
        }
        t_check(after == before, "mapped: %llu descriptors were posted although every peer is mapped",
                (unsigned long long)(after - before));
        if (me == 0) {
            printf("  mapped: %d PEs reached through the mapping\n", npes);
        }
    }
    free(base);
    int E = 2 * npes;
    bad("expert out of range", SHMEMX_EP_ERR_EXPERT, 3, 1, E, 0, 5, E, 2 * 3 + 1, 1);
    bad("expert -2", SHMEMX_EP_ERR_EXPERT, 0, 0, -2, 0, 5, -2, 0, 1);
    bad("repeated expert", SHMEMX_EP_ERR_REPEAT, 2, 0, 2 % E, 0, 5, 2 % E, 2 * 2 + 1, 1);
    bad("n > max_tokens", SHMEMX_EP_ERR_NTOKENS, 9, 8, -1, 0, 9, 0, -1, 1);
    bad("receive half first", SHMEMX_EP_ERR_ORDER, SHMEMX_EP_ST_IDLE, SHMEMX_EP_ST_DRECV, -1,
        1, 5, 0, -1, 1);
    /* found by one lane of a block (token 3: lane 0 of 3): every lane fails */
    bad("expert out of range, lanes", SHMEMX_EP_ERR_EXPERT, 3, 1, E, 0, 5, E, 2 * 3 + 1, 3);
    t_check(__atomic_load_n(dev.error, __ATOMIC_ACQUIRE) == 0, "the proxy's error word is %llx",
            (unsigned long long)*dev.error);
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
