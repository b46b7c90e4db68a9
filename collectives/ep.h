/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep.h: the expert-parallel exchange's handle, shared by its host reference (ep.c) and the
 * host side of its GPU path (ep_device.c, include/shmemx_ep_device.h). Nothing else reads it.
 *
 * The call number, the phase and the last dispatch's n live in a state block the two paths
 * share (st: st0 here, or device memory for a handle whose buffers are in the device heap),
 * so one handle may take either path call by call.
 */
#ifndef FSH_EP_H
#define FSH_EP_H

#include <stddef.h>
#include <stdint.h>

#include <shmemx.h>

#include "shmemx_ep_device.h"

enum { SIG_COUNTS, SIG_DATA, SIG_COMBINE, SIG_KINDS };

struct shmemx_ep {
    shmemx_ep_config_t cfg;
    int npes, me, L, kk; /* team size, my team PE, local experts, min(topk, L) */
    int kn;              /* min(topk, npes): PEs one token reaches at most */
    int *wpe;            /* world PE of each team PE */
    size_t tok_bytes, ce, hb, es, cb; /* token, combine element, entry header, entry, counts */
    struct shmemx_ep_dev_state st0;   /* the state, for host handles */
    struct shmemx_ep_dev_state *st;   /* &st0, or device memory (device-heap handles) */
    /* symmetric block */
    char *sym;
    uint64_t *sig;                 /* [2][SIG_KINDS][npes] */
    char *counts, *dslab, *cslab;  /* [2][npes][cb], [2][npes][M][es], [2][npes][M][hidden*ce] */
    /* send side (private) */
    char *dpack;                   /* [npes][M][es] */
    uint32_t *cnt_out;             /* [npes][cb/4] */
    int *route_pe, *route_i, *nroute; /* [M][kn], [M][kn], [M]: where token t's partials come from */
    char *cpack;                   /* [npes][M][hidden*ce] */
    /* receive side (private) */
    uint32_t *nent;                /* [npes] entries received from each source */
    int *ent_row;                  /* [npes][M][kk] output row of each expert of an entry */
    float *ent_w;                  /* [npes][M][kk] */
    int *ent_n;                    /* [npes][M] */
    size_t cap;                    /* rows the output can hold: npes*M*kk */
    char *out_tokens, *out_scales;
    int *src_pe, *src_token;
    size_t *ecount, *eoffset, *cursor; /* [L], [L], [L][npes] */
    shmemx_ep_recv_t recv;
    /* the GPU path (ep_device.c): its handle once made, and the one block its buffers are */
    int has_dev;
    shmemx_ep_device_t dev;
    void *dev_mem;
};

/* A copy of the state (from device memory for a device-heap handle). */
void fsh_ep_device_state(struct shmemx_ep *ep, struct shmemx_ep_dev_state *out);
/* Free the GPU path's buffers (destroy). */
void fsh_ep_device_free(struct shmemx_ep *ep);

#endif
