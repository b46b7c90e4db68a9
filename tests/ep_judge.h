/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_judge.h: the independent judge of the expert-parallel exchange, shared by ep_exchange
 * (the host reference) and ep_device (the GPU path's phases run by CPU threads, and both
 * mixed).
 *
 * Every PE can regenerate every PE's tokens, scales, routing and weights of any call from a
 * hash of (case, call, PE, token), so each receiver computes on its own what dispatch must
 * deliver (rows per local expert, in source-PE then token order, their source, every byte of
 * token and scale) and what combine must return (the weighted sum over the token's experts of
 * an "expert output" computed from the token's bytes and the expert's id). Outputs are small
 * integers and weights quarters, so sums are exact in float32 and bfloat16 and the comparison
 * is bit for bit.
 */
#ifndef FSH_EP_JUDGE_H
#define FSH_EP_JUDGE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>
#include <shmemx.h>

#include "test.h"

struct ecase {
    const char *what;
    size_t M, H, de, sb;
    int ctype, E, k;
    int route; /* 0 random, 1 all to expert 0, 2 random with holes, 3 even only, 4 random n=0 odd */
};

/* me, npes: set by the program. */
static int me, npes;

static T_UNUSED uint64_t h4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return t_mix(t_mix(t_mix(t_mix(a) ^ b) ^ c) ^ d);
}

/* The cases both tests run; returns their number. */
static T_UNUSED int ep_cases(struct ecase *cases)
{
    int e8 = npes * ((8 + npes - 1) / npes); /* >= 8 experts, a multiple of npes */
    if (e8 == npes) {
        e8 = 2 * npes; /* more than one expert per PE */
    }
    const struct ecase all[] = {
        {"random top-2 fp8 bf16", 37, 24, 1, 4, SHMEMX_EP_BFLOAT16, 4 * npes, 2, 0},
        {"all to expert 0", 20, 16, 2, 0, SHMEMX_EP_FLOAT32, 2 * npes, 1, 1},
        {"top-8 holes", 16, 12, 4, 8, SHMEMX_EP_BFLOAT16, e8, 8, 2},
        {"even experts only", 25, 8, 1, 0, SHMEMX_EP_FLOAT32, 4 * npes, 2, 3},
        {"top-1 n=0 on odd PEs", 30, 20, 2, 2, SHMEMX_EP_BFLOAT16, 3 * npes, 1, 4},
    };
    memcpy(cases, all, sizeof(all));
    return (int)(sizeof(all) / sizeof(all[0]));
}

/* Tokens PE p dispatches in call c of case ci. */
static T_UNUSED size_t n_of(const struct ecase *k, int ci, int c, int p)
{
    if (k->route == 4 && p % 2 == 1) {
        return 0;
    }
    if (ci == 0 && p == npes - 1 && c == 1) {
        return 0;
    }
    if (c == 3) {
        return k->M; /* full */
    }
    return (size_t)(h4(ci, c, p, 77) % (k->M + 1));
}

/* Routing of token t of PE p: k ids (distinct, -1 allowed) and weights (quarters). */
static T_UNUSED void route_of(const struct ecase *k, int ci, int c, int p, size_t t,
                              int32_t *idx, float *w)
{
    for (int j = 0; j < k->k; j++) {
        uint64_t r = h4(ci, c, p, t * 64 + (uint64_t)j);
        int32_t e;
        int ok;
        do {
            switch (k->route) {
            case 1:
                e = 0;
                break;
            case 3:
                e = (int32_t)(2 * (r % (uint64_t)(k->E / 2)));
                break;
            default:
                e = (int32_t)(r % (uint64_t)k->E);
                break;
            }
            ok = 1;
            for (int i = 0; i < j; i++) {
                ok &= idx[i] != e;
            }
            r = t_mix(r + 1);
        } while (!ok);
        if (k->route == 2 && r % 5 == 0) {
            e = -1;
        }
        idx[j] = e;
        w[j] = (float)(1 + (r >> 8) % 4) * 0.25f;
    }
}

static T_UNUSED uint8_t tok_byte(int ci, int c, int p, size_t t, size_t i)
{
    return (uint8_t)h4(ci * 1000 + c, p, t, i);
}

static T_UNUSED uint8_t scale_byte(int ci, int c, int p, size_t t, size_t i)
{
    return (uint8_t)h4(ci * 1000 + c, p, t, i + 0x100000);
}

/* The "expert": output element h of expert e for a token, from the token's byte h. */
static T_UNUSED float expert_value(int e, uint8_t b)
{
    return (float)((int)((b + (unsigned)e * 7u) % 5u) - 2);
}

static T_UNUSED uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16); /* exact values only: truncation is the value */
}

static T_UNUSED float from_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static T_UNUSED void put_elem(int ctype, void *row, size_t h, float v)
{
    if (ctype == SHMEMX_EP_FLOAT32) {
        ((float *)row)[h] = v;
    } else {
        ((uint16_t *)row)[h] = to_bf16(v);
    }
}

static T_UNUSED float get_elem(int ctype, const void *row, size_t h)
{
    return ctype == SHMEMX_EP_FLOAT32 ? ((const float *)row)[h]
                                      : from_bf16(((const uint16_t *)row)[h]);
}

/* The handle's shape for case k. */
static T_UNUSED shmemx_ep_config_t ep_config(const struct ecase *k)
{
    shmemx_ep_config_t cfg = {.max_tokens = k->M,
                              .hidden = k->H,
                              .dispatch_elem_bytes = k->de,
                              .combine_type = k->ctype,
                              .num_experts = k->E,
                              .topk = k->k,
                              .scale_bytes = k->sb};
    return cfg;
}

static T_UNUSED size_t ep_ce(const struct ecase *k)
{
    return k->ctype == SHMEMX_EP_FLOAT32 ? 4 : 2;
}

/* This PE's inputs of call c: returns n. */
static T_UNUSED size_t ep_inputs(const struct ecase *k, int ci, int c, uint8_t *tok, uint8_t *sc,
                                 int32_t *idx, float *w)
{
    size_t n = n_of(k, ci, c, me), tb = k->H * k->de;
    for (size_t t = 0; t < n; t++) {
        for (size_t i = 0; i < tb; i++) {
            tok[t * tb + i] = tok_byte(ci, c, me, t, i);
        }
        for (size_t i = 0; i < k->sb; i++) {
            sc[t * k->sb + i] = scale_byte(ci, c, me, t, i);
        }
        route_of(k, ci, c, me, t, idx + t * (size_t)k->k, w + t * (size_t)k->k);
    }
    return n;
}

/* Judge what dispatch_recv gave this PE in call c (what: the path, for messages); returns 1
 * when the layout is right (so the experts may run on it). */
static T_UNUSED int ep_judge_dispatch(const struct ecase *k, int ci, int c, const char *what,
                                      const shmemx_ep_recv_t *r)
{
    size_t tb = k->H * k->de;
    int L = k->E / npes;
    long fails = t_state.fails;
    int32_t ridx[16];
    float rw[16];
    t_check(r->local_experts == L && r->first_expert == me * L,
            "case %s call %d (%s): local_experts %d first %d, expected %d %d", k->what, c, what,
            r->local_experts, r->first_expert, L, me * L);
    size_t row = 0;
    for (int le = 0; le < L; le++) {
        int e = me * L + le;
        t_check(r->expert_offset[le] == row,
                "case %s call %d (%s): expert %d offset %zu, expected %zu", k->what, c, what, e,
                r->expert_offset[le], row);
        size_t start = row;
        for (int p = 0; p < npes; p++) {
            size_t np = n_of(k, ci, c, p);
            for (size_t t = 0; t < np; t++) {
                route_of(k, ci, c, p, t, ridx, rw);
                int hit = 0;
                for (int j = 0; j < k->k; j++) {
                    hit |= ridx[j] == e;
                }
                if (!hit) {
                    continue;
                }
                if (row < r->total && r->expert_offset[le] == start) {
                    int okrow = t_check(r->src_pe[row] == p && r->src_token[row] == (int)t,
                                        "case %s call %d (%s): expert %d row %zu from PE %d token %d, expected PE %d token %zu",
                                        k->what, c, what, e, row, r->src_pe[row],
                                        r->src_token[row], p, t);
                    const uint8_t *got = (const uint8_t *)r->tokens + row * tb;
                    for (size_t i = 0; okrow && i < tb; i++) {
                        okrow = t_check(got[i] == tok_byte(ci, c, p, t, i),
                                        "case %s call %d (%s): expert %d row %zu byte %zu wrong",
                                        k->what, c, what, e, row, i);
                    }
                    /* r->scales is NULL without scales: no pointer arithmetic on it */
                    const uint8_t *gs = k->sb ? (const uint8_t *)r->scales + row * k->sb : NULL;
                    for (size_t i = 0; okrow && i < k->sb; i++) {
                        okrow = t_check(gs[i] == scale_byte(ci, c, p, t, i),
                                        "case %s call %d (%s): expert %d row %zu scale byte %zu wrong",
                                        k->what, c, what, e, row, i);
                    }
                }
                row++;
            }
        }
        t_check(r->expert_count[le] == row - start,
                "case %s call %d (%s): expert %d count %zu, expected %zu", k->what, c, what, e,
                r->expert_count[le], row - start);
    }
    t_check(r->total == row, "case %s call %d (%s): total %zu rows, expected %zu", k->what, c,
            what, r->total, row);
    if (k->sb == 0) {
        t_check(r->scales == NULL, "case %s (%s): scales not NULL without scale_bytes", k->what,
                what);
    }
    return t_state.fails == fails && r->total == row;
}

/* The experts: each received row's output from its bytes and expert id, into eout. */
static T_UNUSED void ep_experts(const struct ecase *k, const shmemx_ep_recv_t *r, uint8_t *eout)
{
    size_t tb = k->H * k->de, ce = ep_ce(k);
    for (int le = 0; le < r->local_experts; le++) {
        for (size_t x = 0; x < r->expert_count[le]; x++) {
            size_t rr = r->expert_offset[le] + x;
            const uint8_t *in = (const uint8_t *)r->tokens + rr * tb;
            for (size_t h = 0; h < k->H; h++) {
                put_elem(k->ctype, eout + rr * k->H * ce, h,
                         expert_value(r->first_expert + le, in[h * k->de]));
            }
        }
    }
}

/* Judge combine's out for this PE's n tokens of call c. */
static T_UNUSED void ep_judge_combine(const struct ecase *k, int c, const char *what, size_t n,
                                      const uint8_t *tok, const int32_t *idx, const float *w,
                                      const uint8_t *out)
{
    size_t tb = k->H * k->de, ce = ep_ce(k);
    for (size_t t = 0; t < n; t++) {
        int ok = 1;
        for (size_t h = 0; h < k->H && ok; h++) {
            float want = 0.0f;
            for (int j = 0; j < k->k; j++) {
                int32_t e = idx[t * (size_t)k->k + (size_t)j];
                if (e >= 0) {
                    want += w[t * (size_t)k->k + (size_t)j] * expert_value(e, tok[t * tb + h * k->de]);
                }
            }
            float got = get_elem(k->ctype, out + t * k->H * ce, h);
            ok = t_check(got == want,
                         "case %s call %d (%s): combined token %zu element %zu = %g, expected %g",
                         k->what, c, what, t, h, (double)got, (double)want);
        }
    }
}

/* Case k with seed ci on the host reference over team (me and npes: this PE's number and the
 * team's size): EP_CALLS calls on one handle back to back, no barrier; call 2 dispatches
 * without a combine, so the call sequence moves on without one. */
#define EP_CALLS 4
static T_UNUSED void ep_host_case(shmem_team_t team, int ci, const struct ecase *k)
{
    shmemx_ep_config_t cfg = ep_config(k);
    shmemx_ep_t ep = shmemx_ep_create(team, &cfg);
    if (!t_check(ep != NULL, "case %s: create returned NULL", k->what)) {
        return;
    }
    size_t tb = k->H * k->de, ce = ep_ce(k);
    uint8_t *tok = malloc(k->M * tb + 1), *sc = malloc(k->M * k->sb + 1);
    int32_t *idx = malloc(k->M * (size_t)k->k * sizeof(int32_t));
    float *w = malloc(k->M * (size_t)k->k * sizeof(float));
    size_t cap = (size_t)npes * k->M * (size_t)k->k;
    uint8_t *eout = malloc(cap * k->H * ce + 1), *out = malloc(k->M * k->H * ce + 1);
    for (int c = 0; c < EP_CALLS; c++) {
        size_t n = ep_inputs(k, ci, c, tok, sc, idx, w);
        shmemx_ep_dispatch_send(ep, tok, k->sb ? sc : NULL, idx, w, n);
        shmemx_ep_recv_t r;
        memset(&r, 0, sizeof(r));
        shmemx_ep_dispatch_recv(ep, &r);
        int ok = ep_judge_dispatch(k, ci, c, "host", &r);
        if (c == 2) {
            continue; /* a dispatch without combine */
        }
        if (ok) {
            ep_experts(k, &r, eout);
        }
        shmemx_ep_combine_send(ep, eout);
        memset(out, 0xee, n * k->H * ce);
        shmemx_ep_combine_recv(ep, out);
        ep_judge_combine(k, c, "host", n, tok, idx, w, out);
    }
    shmemx_ep_destroy(ep);
    free(tok);
    free(sc);
    free(idx);
    free(w);
    free(eout);
    free(out);
}

#endif
