/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_route.h: how an operation reaches a peer: the peers' addresses in this PE's address
 * vectors, the ways to each peer over the rails (fabric.h), which way an operation takes, and
 * the ways found dead (failover).
 *
 * fabric_route.c owns them; fabric.c hands it this PE's rails when it inserts the peers.
 * fabric.h includes this header: the rest of the runtime reads these names through it.
 */
#ifndef FSH_FABRIC_ROUTE_H
#define FSH_FABRIC_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric_provider.h"

/* An address vector, opaque here (fabric.h says why). */
struct fid_av;

#define FSH_ADDR_MAX 240 /* slot for one PE's address (and its rails') in the exchange blob */

/* How an operation reaches a peer: from my rail `rail` to the peer's rail `dst` (whose
 * memory keys it must carry), at address addr of my rail's AV. */
struct fsh_path {
    int rail, dst;
    uint64_t addr; /* an fi_addr_t */
    unsigned way; /* its index among the ways to the peer */
};
/* Ways taken out of use so far, in the whole job's routes: a context's endpoint compares it
 * with what it saw last, to post again what it had in flight on a way that died. */
unsigned fsh_fabric_deaths(void);
/* Has any PE of the job more than one rail (known to all after fsh_fabric_insert_peers)? */
bool fsh_fabric_multirail(void);
/* Live ways to pe: pieces 0..ways-1 of a striped transfer take different ones. */
unsigned fsh_fabric_ways(int pe);
/* Ways to pe, dead ones included (way indexes run below it). */
unsigned fsh_fabric_ways_all(int pe);
bool fsh_fabric_way_alive(int pe, unsigned way);
/* The k for which fsh_fabric_path(pe, k) takes way `way` (while it lives). */
unsigned fsh_fabric_k_of_way(int pe, unsigned way);
/* Way `way` to pe, or the next live one when it is dead. */
struct fsh_path fsh_fabric_path_way(int pe, unsigned way);
/* Take a way to pe out of use, with a warning naming the rail and why (what pe did on it);
 * returns the live ways left. Multi-rail only. Any thread may call it and the functions
 * around it (a context's endpoint does, under its own lock): the dead ways are atomic. */
unsigned fsh_fabric_kill_way(int pe, unsigned way, const char *why);
/* Piece k of an operation to pe (k = 0 for one that is not striped). */
struct fsh_path fsh_fabric_path(int pe, unsigned k);
/* The way of atomics to pe: always to the same rail of pe (its first), so that atomics from
 * every PE meet in one NIC, whose atomics are atomic with respect to each other. */
struct fsh_path fsh_fabric_path_atomic(int pe);

/* The extra bytes of a PE's slot (len0: its address length), or NULL (*n 0) for a one-rail PE
 * (the slot's layout: fsh_fabric_getname, fabric.c). */
const uint8_t *fsh_fabric_slot_extra(const uint8_t *slot, size_t len0, size_t *n);

/* For fabric.c: one of this PE's rails as the routes use it. */
struct fsh_route_rail {
    struct fid_av *av;
    uint32_t fabric_id; /* rails of equal ids reach each other */
    const char *name;   /* its NIC, for messages */
};
/* Insert every PE's address (slots of FSH_ADDR_MAX bytes, lengths in lens[]) into rail 0's AV
 * in one call and, when any PE has more than one rail, build the ways to every peer over
 * this PE's nrails rails (mine, kept until fsh_fabric_route_close; none without a fabric),
 * me being this PE. a: the provider's description. 0 or -errno (recorded). */
int fsh_fabric_route_insert(const struct fsh_fabric_attr *a, const struct fsh_route_rail *mine,
                            int nrails, int me, const uint8_t *slots, const uint16_t *lens,
                            int npes);
/* Forget the peers and their ways (the fabric closes). */
void fsh_fabric_route_close(void);

#endif
