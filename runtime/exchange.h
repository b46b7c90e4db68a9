/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange.h: what every PE tells every other at init, in one all-gather.
 *
 * One blob per PE: its fabric address, its node, the settings that must agree (layout), its
 * segments' keys (mr.c), its intra-node records (local.c) and, where targets must know an
 * endpoint before it reaches them (efa-direct), its contexts' endpoints (rma.c). init packs its own, lets the
 * bootstrap gather them, unpacks every PE's and inserts the addresses into the AV; the steps
 * are apart so that bench/sim_scale can drive them for a large job without its peers.
 */
#ifndef FSH_EXCHANGE_H
#define FSH_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

struct fsh_exchange {
    size_t one;      /* bytes per PE's blob */
    int npes;
    uint8_t *mine;   /* this PE's blob */
    uint8_t *all;    /* [npes] blobs, rank order: what the all-gather fills */
    uint8_t *slots;  /* [npes * FSH_ADDR_MAX]: the addresses, for fsh_fabric_insert_peers */
    uint16_t *lens;  /* [npes] */
    int *node_of;    /* [npes] */
    size_t published;     /* lanes' address slots per blob (fsh_rma_lanes_published) */
    uint8_t *lane_names;  /* every PE's published lanes, back to back, 64 bytes apart */
    size_t nlanes;        /* how many */
    uint16_t lane_len;    /* the length of each */
};

/* Allocate for npes PEs and pack this PE's blob. 0 or -errno (recorded). */
int fsh_exchange_pack(struct fsh_exchange *x, int npes);
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
