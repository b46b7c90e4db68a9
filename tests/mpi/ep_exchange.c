/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep_exchange: the expert-parallel exchange (shmemx_ep_*), every byte judged independently.
 *
 * Every PE can regenerate every PE's tokens, scales, routing and weights of any call from a
 * hash of (case, call, PE, token), so each receiver computes on its own what dispatch must
 * deliver (rows per local expert, in source-PE then token order, their source, every byte of
 * token and scale) and what combine must return (the weighted sum over the token's experts of
 * an "expert output" computed from the token's bytes and the expert's id). Outputs are small
 * integers and weights quarters, so sums are exact in float32 and bfloat16 and the comparison
 * is bit for bit.
 *
 * Cases (each 4 calls on one handle back to back, no barrier; call 2 dispatches without a
 * combine, so the call sequence moves on without one): random top-2 routing with FP8-sized
 * elements, scales and bfloat16 combine, some PEs with n = 0; every token to expert 0 (k = 1,
 * float32); top-8 with more experts per PE than 1 and holes (-1); only even experts used (the
 * odd ones receive nothing); top-1 with n = 0 on every odd PE; n = max_tokens.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>
#include <shmemx.h>

#include "../test.h"

#define NAME "ep_exchange"
#define CALLS 4

struct ecase {
    const char *what;
    size_t M, H, de, sb;
    int ctype, E, k;
    int route; /* 0 random, 1 all to expert 0, 2 random with holes, 3 even only, 4 random n=0 odd */
};

static int me, npes;

static uint64_t h4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return t_mix(t_mix(t_mix(t_mix(a) ^ b) ^ c) ^ d);
}

/* Tokens PE p dispatches in call c of case ci. */
static size_t n_of(const struct ecase *k, int ci, int c, int p)
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
static void route_of(const struct ecase *k, int ci, int c, int p, size_t t, int32_t *idx,
                     float *w)
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

static uint8_t tok_byte(int ci, int c, int p, size_t t, size_t i)
{
    return (uint8_t)h4(ci * 1000 + c, p, t, i);
}

static uint8_t scale_byte(int ci, int c, int p, size_t t, size_t i)
{
    return (uint8_t)h4(ci * 1000 + c, p, t, i + 0x100000);
}

/* The "expert": output element h of expert e for a token, from the token's byte h. */
static float expert_value(int e, uint8_t b)
{
    return (float)((int)((b + (unsigned)e * 7u) % 5u) - 2);
}

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16); /* exact values only: truncation is the value */
}

static float from_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void put_elem(int ctype, void *row, size_t h, float v)
{
    if (ctype == SHMEMX_EP_FLOAT32) {
        ((float *)row)[h] = v;
    } else {
        ((uint16_t *)row)[h] = to_bf16(v);
    }
}

static float get_elem(int ctype, const void *row, size_t h)
{
    return ctype == SHMEMX_EP_FLOAT32 ? ((const float *)row)[h]
                                      : from_bf16(((const uint16_t *)row)[h]);
}

static void run_case(int ci, const struct ecase *k)
{
    shmemx_ep_config_t cfg = {.max_tokens = k->M,
                              .hidden = k->H,
                              .dispatch_elem_bytes = k->de,
                              .combine_type = k->ctype,
                              .num_experts = k->E,
                              .topk = k->k,
                              .scale_bytes = k->sb};
    shmemx_ep_t ep = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    if (!t_check(ep != NULL, "case %s: create returned NULL", k->what)) {
        return;
    }
    size_t tb = k->H * k->de, ce = k->ctype == SHMEMX_EP_FLOAT32 ? 4 : 2;
    int L = k->E / npes;
    uint8_t *tok = malloc(k->M * tb + 1), *sc = malloc(k->M * k->sb + 1);
    int32_t *idx = malloc(k->M * (size_t)k->k * sizeof(int32_t));
    float *w = malloc(k->M * (size_t)k->k * sizeof(float));
    int32_t ridx[16];
    float rw[16];
    size_t cap = (size_t)npes * k->M * (size_t)k->k;
    uint8_t *eout = malloc(cap * k->H * ce + 1), *out = malloc(k->M * k->H * ce + 1);
    for (int c = 0; c < CALLS; c++) {
        size_t n = n_of(k, ci, c, me);
        for (size_t t = 0; t < n; t++) {
            for (size_t i = 0; i < tb; i++) {
                tok[t * tb + i] = tok_byte(ci, c, me, t, i);
            }
            for (size_t i = 0; i < k->sb; i++) {
                sc[t * k->sb + i] = scale_byte(ci, c, me, t, i);
            }
            route_of(k, ci, c, me, t, idx + t * (size_t)k->k, w + t * (size_t)k->k);
        }
        shmemx_ep_dispatch_send(ep, tok, k->sb ? sc : NULL, idx, w, n);
        shmemx_ep_recv_t r;
        memset(&r, 0, sizeof(r));
        shmemx_ep_dispatch_recv(ep, &r);
        /* Judge dispatch: rebuild every PE's routing. */
        t_check(r.local_experts == L && r.first_expert == me * L,
                "case %s call %d: local_experts %d first %d, expected %d %d", k->what, c,
                r.local_experts, r.first_expert, L, me * L);
        size_t row = 0;
        for (int le = 0; le < L; le++) {
            int e = me * L + le;
            t_check(r.expert_offset[le] == row, "case %s call %d: expert %d offset %zu, expected %zu",
                    k->what, c, e, r.expert_offset[le], row);
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
                    if (row < r.total && r.expert_offset[le] == start) {
                        int okrow = t_check(r.src_pe[row] == p && r.src_token[row] == (int)t,
                                            "case %s call %d: expert %d row %zu from PE %d token %d, expected PE %d token %zu",
                                            k->what, c, e, row, r.src_pe[row], r.src_token[row], p, t);
                        const uint8_t *got = (const uint8_t *)r.tokens + row * tb;
                        for (size_t i = 0; okrow && i < tb; i++) {
                            okrow = t_check(got[i] == tok_byte(ci, c, p, t, i),
                                            "case %s call %d: expert %d row %zu byte %zu wrong", k->what,
                                            c, e, row, i);
                        }
                        /* r.scales is NULL without scales: no pointer arithmetic on it */
                        const uint8_t *gs =
                            k->sb ? (const uint8_t *)r.scales + row * k->sb : NULL;
                        for (size_t i = 0; okrow && i < k->sb; i++) {
                            okrow = t_check(gs[i] == scale_byte(ci, c, p, t, i),
                                            "case %s call %d: expert %d row %zu scale byte %zu wrong",
                                            k->what, c, e, row, i);
                        }
                    }
                    row++;
                }
            }
            t_check(r.expert_count[le] == row - start, "case %s call %d: expert %d count %zu, expected %zu",
                    k->what, c, e, r.expert_count[le], row - start);
        }
        t_check(r.total == row, "case %s call %d: total %zu rows, expected %zu", k->what, c, r.total,
                row);
        if (k->sb == 0) {
            t_check(r.scales == NULL, "case %s: scales not NULL without scale_bytes", k->what);
        }
        if (c == 2) {
            continue; /* a dispatch without combine */
        }
        /* The experts: each row's output from its received bytes and expert id. */
        for (int le = 0; le < L && r.total == row; le++) {
            for (size_t x = 0; x < r.expert_count[le]; x++) {
                size_t rr = r.expert_offset[le] + x;
                const uint8_t *in = (const uint8_t *)r.tokens + rr * tb;
                for (size_t h = 0; h < k->H; h++) {
                    put_elem(k->ctype, eout + rr * k->H * ce, h,
                             expert_value(me * L + le, in[h * k->de]));
                }
            }
        }
        shmemx_ep_combine_send(ep, eout);
        memset(out, 0xee, n * k->H * ce);
        shmemx_ep_combine_recv(ep, out);
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
                ok = t_check(got == want, "case %s call %d: combined token %zu element %zu = %g, expected %g",
                             k->what, c, t, h, (double)got, (double)want);
            }
        }
    }
    shmemx_ep_destroy(ep);
    free(tok);
    free(sc);
    free(idx);
    free(w);
    free(eout);
    free(out);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    int e8 = npes * ((8 + npes - 1) / npes); /* >= 8 experts, a multiple of npes */
    if (e8 == npes) {
        e8 = 2 * npes; /* more than one expert per PE */
    }
    const struct ecase cases[] = {
        {"random top-2 fp8 bf16", 37, 24, 1, 4, SHMEMX_EP_BFLOAT16, 4 * npes, 2, 0},
        {"all to expert 0", 20, 16, 2, 0, SHMEMX_EP_FLOAT32, 2 * npes, 1, 1},
        {"top-8 holes", 16, 12, 4, 8, SHMEMX_EP_BFLOAT16, e8, 8, 2},
        {"even experts only", 25, 8, 1, 0, SHMEMX_EP_FLOAT32, 4 * npes, 2, 3},
        {"top-1 n=0 on odd PEs", 30, 20, 2, 2, SHMEMX_EP_BFLOAT16, 3 * npes, 1, 4},
    };
    for (int ci = 0; ci < (int)(sizeof(cases) / sizeof(cases[0])); ci++) {
        run_case(ci, &cases[ci]);
    }
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
