/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devheap.h: what devmem.c and devmap.c share, and no other module calls.
 *
 * The two files are one unit cut in two along its seam: devmem.c owns the device heap, its
 * registration path, the staging protocol and the backend; devmap.c owns the same-node
 * mapping of the peers' heaps and the AMO lock every device atomic is applied under. The
 * state of the device heap is one struct, fsh_devheap, defined in devmem.c; devmap.c's calls,
 * for devmem.c, are declared here. (Nothing here includes devmem.h: devmap.c includes both,
 * devmem.c only this one of devmap's, so the two never include each other.)
 */
#ifndef FSH_DEVHEAP_H
#define FSH_DEVHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lease.h"
#include "mr.h"

struct fsh_config;

/* The staging requests' ops (devmem.c's REQ_PUT, REQ_GET, REQ_AMO: 1..3), by which the
 * counters of staged requests are kept. */
#define FSH_DEVHEAP_REQ_KINDS 4

/* The device heap's state (HDR, DEPTH and enum path are devmem.c's). */
struct fsh_devheap {
    uint8_t *base; /* device heap (GPU address) */
    size_t size;
    size_t chunk;  /* data bytes per slot */
    size_t slot;   /* HDR + chunk, rounded up */
    /* symmetric, in the host heap: the inboxes (DEPTH slots, then done[DEPTH]) granted to
     * sources per call; our outbox[DEPTH] slots and the landing of done reads */
    struct fsh_lease_pool pool;
    uint8_t *block;
    uint8_t *outbox;
    uint64_t *probe;
    int held;       /* the inbox we hold at lease_pe during a call, -1: none */
    int lease_pe;
    uint64_t sent;  /* our last request's sequence number in it (request q uses slot q % DEPTH) */
    int path;       /* enum path: the same on every PE once started */
    bool direct;    /* registered with the NIC on every PE (dmabuf or FI_HMEM_CUDA path) */
    bool system;    /* FABSHMEM_DEVICE_IFACE=system */
    char why[384];  /* why each better path was passed over */
    char line[768];
    /* the same-node mapping (devmap.c): peer[pe] is pe's device heap mapped here, NULL when it
     * is not; peer[me] is our own heap */
    uint8_t **peer;
    int mapped, node_peers;
    char map_why[256];
    uint64_t staged[FSH_DEVHEAP_REQ_KINDS]; /* requests sent, by op */
    uint64_t bounced, through_map; /* GPU <-> host-segment bounces; copies over a mapping */
    uint64_t amo_mapped;           /* atomics applied here on a peer's mapped heap */
    uint32_t *amo_lock;            /* our heap's device-AMO lock (host heap, symmetric) */
    uint64_t amo_lock_off;         /* its offset in the host heap */
    char full[1280];
};
extern struct fsh_devheap fsh_devheap;

/* ---- devmem.c, for devmap.c */

/* A copy either side of which may be device memory: small ones between our own heap's GPU
 * pages and host memory through the GDRCopy mapping (gdr.h), the rest by a driver copy;
 * complete on return either way. */
int fsh_devheap_copy(void *dst, const void *src, size_t len);

/* ---- devmap.c, for devmem.c */

/* At start, after the path is settled (every PE calls it, whatever it decided): export our
 * heap, all-gather the handles, map the heaps of our node's other PEs (FABSHMEM_DEVICE_MAP). A
 * refusal only leaves that peer on the other paths; an error is a failed exchange or memory. */
int fsh_devmap_open(const struct fsh_config *cfg);
/* Unmap the peers' heaps (also after a start that failed once they were mapped). */
void fsh_devmap_close(void);
/* Where (seg, off) of pe is in this process when one driver copy can reach it, else NULL. */
uint8_t *fsh_devmap_at(enum fsh_seg seg, uint64_t off, int pe);
/* One driver copy to or from such a place, synchronized (counted when pe is a peer). */
int fsh_devmap_copy(void *dst, const void *src, size_t len, int pe);
/* pe's device-AMO lock word when this PE applies its AMOs on pe's heap itself, else NULL. */
uint32_t *fsh_devmap_peer_lock(int pe);
/* An AMO on the device heap at heap (ours, or a mapped peer's whose lock is lock), applied by
 * this CPU under that lock; the engine lock held. fetch: the old value, or NULL. */
int fsh_devmap_apply(uint8_t *heap, uint32_t *lock, int op, uint64_t off, const void *value,
                     const void *cond, void *fetch, size_t size);

/* A put-with-signal (data of len bytes from src to dst, then the signal op FSH_AMO_SET or
 * another AMO of value on the word at off of the device heap at heap, under lock) with one
 * synchronization for SET, two otherwise; both sides reachable by the driver here. The engine
 * lock held. */
int fsh_devmap_put_signal(void *dst, const void *src, size_t len, uint8_t *heap, uint32_t *lock,
                          int op, uint64_t off, uint64_t value);

#endif
