/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.h: the libfabric endpoint every other transport module posts to.
 *
 * One RDM endpoint per rail with its own address vector, completion queue and, where the
 * provider has one, a counter of completed writes. A rail is one NIC: a PE with several NICs
 * near it (p5: four per GPU) opens one rail on each (FABSHMEM_RAILS caps them), and
 * fsh_fabric_path spreads operations over them at both ends. One NIC, one rail: as before.
 * fabric.c chooses the provider and keeps its limits; xport.c, mr.c and progress.c use the
 * handles below. Nothing above the transport layer includes <rdma/...>, this header neither:
 * those three include what they call.
 */
#ifndef FSH_FABRIC_H
#define FSH_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "env.h"

/* libfabric's handles, opaque here: this header is read above the transport too, where no
 * <rdma/...> is included (docs/architecture.md's layers). */
struct fi_info;
struct fid_domain;
struct fid_ep;
struct fid_cq;

/* What the rest of the runtime needs to know about the chosen provider. */
struct fsh_fabric_attr {
    char prov[64];
    char domain[64];
    char nic_hint[64];       /* the NIC asked for and obeyed, or "" (the provider chose) */
    uint32_t addr_format;
    size_t addrlen;          /* our own address, as fi_getname returned it */
    uint64_t mr_mode;        /* as returned by the provider */
    bool mr_local;           /* local buffers need a descriptor (provider or forced) */
    bool mr_virt_addr;       /* remote addresses are virtual addresses, else offsets */
    bool mr_prov_key;        /* keys are chosen by the provider */
    bool mr_allocated;       /* only allocated, pinned memory may be registered */
    bool pins_memory;        /* registration locks pages (RLIMIT_MEMLOCK applies) */
    bool has_atomics;
    bool has_hmem;           /* the endpoint lists FI_HMEM (device memory registration) */
    bool delivery_complete;  /* completions mean the data is visible at the target */
    bool count_arrivals;     /* FABSHMEM_REMOTE_COMPLETION: count (or auto without
                              * delivery-complete): targets count plain writes, quiet reads the
                              * counts (rma.c) */
    bool av_first;           /* a target must have the initiator in its AV before the first
                              * RMA reaches it (efa-direct, a device limitation): init fences
                              * once every PE inserted its peers */
    bool manual_progress;    /* data moves only while someone reads the CQ */
    size_t inject_size;      /* 0: never inject */
    size_t max_msg_size;     /* transfers are split into pieces of at most this */
    size_t rma_iov_limit;    /* remote segments one write may scatter to (1 on EFA) */
    size_t cq_data_size;     /* bytes of immediate data (4 on EFA) */
    size_t tx_depth;         /* operations in flight before new ones wait */
    size_t mr_key_size;
    bool thread_safe;        /* the domain was opened FI_THREAD_SAFE (fsh_fabric_want_threads) */
};

#define FSH_ADDR_MAX 240 /* slot for one PE's address (and its rails') in the exchange blob */
#define FSH_MAX_RAILS 4  /* endpoints (one per NIC) a PE opens; every registration is on each */

/* The NIC(s) topology chose for this PE. It is applied to providers whose domains are NICs that
 * fi_getinfo can filter (efa, verbs); when the user forced it (FABSHMEM_NIC) to every provider
 * whose domains are devices or interfaces (all but shm), and then a miss is an error. A
 * topology choice never makes a provider fail to open: without a match the provider chooses. */
struct fsh_fabric_nic {
    const char *names[FSH_MAX_RAILS]; /* libfabric domain names: rail 0's first, then the
                                       * further NICs for rails (NULL / "": no preference) */
    int count;
    bool forced;
};

int fsh_fabric_open(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                    const struct fsh_fabric_nic *nic);
/* No provider at all: a job whose PEs all run on one node and map each other's memory
 * (init.c decides). Zero rails: the exchange carries no address, nothing is registered or
 * inserted, the progress engine has no queue to read, and an operation that would need the
 * fabric is refused (xport.c) instead of posted. */
void fsh_fabric_open_none(const struct fsh_boot_info *boot);
bool fsh_fabric_none(void);
void fsh_fabric_close(void);
const struct fsh_fabric_attr *fsh_fabric_attr(void);

/* My address, copied into buf (at most FSH_ADDR_MAX bytes); returns its length or -errno. With
 * several rails the further rails' addresses follow it in buf, then extra_len bytes of extra
 * (the caller's: further rails' memory keys), all in the one exchange. */
int fsh_fabric_getname(void *buf, size_t buflen, const void *extra, size_t extra_len);
/* The extra bytes of a PE's slot (len0: its address length), or NULL (*n 0) for a one-rail PE. */
const uint8_t *fsh_fabric_slot_extra(const uint8_t *slot, size_t len0, size_t *n);
/* Insert every PE's address (slots of FSH_ADDR_MAX bytes, lengths in lens[]) in one call. */
int fsh_fabric_insert_peers(const uint8_t *slots, const uint16_t *lens, int npes);
/* A short description of the provider for SHMEM_INFO and fabshmem-info. */
void fsh_fabric_describe(char *buf, size_t len);

/* Remove what the provider named in the file system (shm's regions in /dev/shm: this PE's and,
 * once the peers are inserted, every peer's, since a peer killed with SIGKILL cannot remove its
 * own) without closing anything: at the end of init, on the paths that end the job, and in
 * signal handlers (async-signal-safe). */
void fsh_fabric_unlink_shared(void);
/* Does the provider reach peers through regions named in /dev/shm (shm)? Then a peer's region
 * is mapped at the first operation to it (libfabric >= 1.18; 1.17 mapped at AV insert), and
 * the peer maps this PE's when it takes its name: both names must exist at that moment. */
bool fsh_fabric_named_regions(void);
/* Init removed the names for good (after every PE mapped every region): the process that
 * guarded this PE's name during init, in case the PE died there, ends. */
void fsh_fabric_names_gone(void);

/* The providers tried when none is forced, in order (shm only for single-node jobs). */
const char *const *fsh_fabric_default_order(size_t *n);
/* One fi_getinfo for an RDM endpoint with the hints the runtime uses (its context mode,
 * threading, resource management), asking caps and op_flags with the registration modes
 * mr_offer. prov may be NULL (libfabric's own order, filtered by FI_PROVIDER); domain NULL or
 * "" for any. fabshmem-info asks the same questions through it. */
int fsh_fabric_getinfo(const char *prov, const char *domain, uint64_t mr_offer, uint64_t caps,
                       uint64_t op_flags, struct fi_info **out);

/* Can a registration take a dmabuf (FI_MR_DMABUF)? NULL when fabshmem was built against a
 * libfabric that has it and the one loaded is 1.20 or later, else why not (for the user). */
const char *fsh_fabric_dmabuf_why_not(void);

int fsh_fabric_nrails(void);
/* Rail r's NIC (its libfabric domain name). */
const char *fsh_fabric_rail_name(int rail);
struct fid_domain *fsh_fabric_domain(int rail);
struct fid_ep *fsh_fabric_ep(int rail);
struct fid_cq *fsh_fabric_cq(int rail);
/* Contexts' own endpoints ("lanes", progress.h). want_threads, before fsh_fabric_open: the
 * program is SHMEM_THREAD_MULTIPLE, so the domain is asked FI_THREAD_SAFE first (threads then
 * post to different endpoints of it at once). lanes_why_not: NULL when a context may have an
 * endpoint of its own, else why not, for SHMEM_INFO; lanes_possible: it is NULL (known before
 * the peers' rails are: init sizes the lanes' arrival counts with it, the same on every PE).
 * lane_open: an endpoint on rail's domain and AV with a CQ of its own for depth operations (a
 * lane has one on every rail); 0 or -errno (recorded). */
void fsh_fabric_want_threads(bool on);
const char *fsh_fabric_lanes_why_not(void);
bool fsh_fabric_lanes_possible(void);
/* FABSHMEM_CTX_ENDPOINTS=-1: at most this many (rma_ctx.c: fewer where every endpoint keeps a
 * connection per peer). */
#define FSH_LANES_AUTO_MAX 16
int fsh_fabric_lane_open(int rail, struct fid_ep **ep, struct fid_cq **cq, size_t depth);
/* A lane's published name: its rail's fabric id (4 bytes) and index (1), then its address
 * (fi_getname). *len: the room (more than FSH_LANE_NAME_HEAD), then the name's length. 0 or
 * -errno (recorded). */
#define FSH_LANE_NAME_HEAD 5
int fsh_fabric_lane_name(int rail, struct fid_ep *ep, uint8_t *buf, size_t *len);
/* Every PE's published lane names (n of len bytes, stride apart), each into the AV of every
 * rail of this PE on its fabric (after the peers, whose fi_addr stays their PE). Targets never
 * aim at them; efa-direct needs them there before a lane's first operation arrives. 0 or
 * -errno (recorded). */
int fsh_fabric_insert_lanes(const uint8_t *names, size_t n, size_t len, size_t stride);
void fsh_fabric_lane_close(struct fid_ep *ep, struct fid_cq *cq);
/* Do the rails count completed writes (a counter each, CQs bound for selective completion)?
 * Off: the provider has no counter, or FABSHMEM_PUT_COUNTER is off; then every operation asks
 * for its entry. */
bool fsh_fabric_counts_writes(void);
/* Completed and failed writes, summed over the rails. */
void fsh_fabric_writes(uint64_t *done, uint64_t *failed);

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

#endif
