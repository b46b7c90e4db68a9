/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange.h: what every PE tells every other at init, in one all-gather.
 *
 * One blob per PE: its fabric address, its node, the settings that must agree (layout), its
 * segments' keys (mr.c), its intra-node records (local.c) and, where targets must know an
 * endpoint before it reaches them (efa-direct), its contexts' endpoints (rma_ctx.c). init packs its own, lets the
 * bootstrap gather them, unpacks every PE's and inserts the addresses into the AV; the steps
 * are apart so that bench/sim_scale can drive them for a large job without its peers.
 */
#ifndef FSH_EXCHANGE_H
#define FSH_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

/* What a PE tells the others of its contexts' own endpoints (rma_ctx.c decides; init passes it
 * in): counted, a layout setting (lanes counted apart at targets); published, the name slots
 * every blob has for them, one per lane and rail (efa-direct: a target must know them first;
 * 0 elsewhere, the same on every PE); the n names of this PE, len bytes each,
 * FSH_EXCHANGE_LANE_ADDR_MAX apart in names. At most FSH_EXCHANGE_LANES_MAX lanes, each with
 * a name per rail (fabric.h's FSH_MAX_RAILS at most). */
#define FSH_EXCHANGE_LANES_MAX 64
/* A name: its rail's fabric id and index (5 bytes), then the address: efa-direct's are 32
 * bytes, a sockaddr at most 28. */
#define FSH_EXCHANGE_LANE_ADDR_MAX 40
struct fsh_exchange_lanes {
    uint64_t counted;
    size_t published;
    const uint8_t *names;
    size_t n;
    uint16_t len;
};

struct fsh_exchange {
    size_t one;      /* bytes per PE's blob */
    int npes;
    uint8_t *mine;   /* this PE's blob */
    uint8_t *all;    /* [npes] blobs, rank order: what the all-gather fills */
    uint8_t *slots;  /* [npes * FSH_ADDR_MAX]: the addresses, for fsh_fabric_insert_peers */
    uint16_t *lens;  /* [npes] */
    int *node_of;    /* [npes] */
    uint64_t counted;     /* lanes counted apart (a layout setting) */
    size_t published;     /* lanes' address slots per blob */
    uint8_t *lane_names;  /* every PE's published lanes, FSH_EXCHANGE_LANE_ADDR_MAX apart */
    size_t nlanes;        /* how many */
    uint16_t lane_len;    /* the length of each */
};

/* Allocate for npes PEs and pack this PE's blob, with its lanes (NULL: none). 0 or -errno
 * (recorded). */
int fsh_exchange_pack(struct fsh_exchange *x, int npes, const struct fsh_exchange_lanes *lanes);
/* Every PE's settings against PE 0's (the first that differs ends init with its name and both
 * values), then addresses, nodes, keys and intra-node records taken in. */
int fsh_exchange_unpack(struct fsh_exchange *x);
void fsh_exchange_free(struct fsh_exchange *x);
/* The contexts' endpoints every PE published (efa-direct: a target must know them first) into
 * the AV, after the peers. 0 or -errno (recorded). */
int fsh_exchange_insert_lanes(const struct fsh_exchange *x);

/* Simulation only (bench/sim_scale): blob i as this PE's, with another address and node. */
void fsh_exchange_fake_peer(struct fsh_exchange *x, int i, const void *addr, uint16_t addrlen,
                            int node);
/* This PE's address as packed (into addr, FSH_ADDR_MAX bytes); its length. */
uint16_t fsh_exchange_my_addr(const struct fsh_exchange *x, void *addr);

#endif
