/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.h: the libfabric endpoint every other transport module posts to.
 *
 * One RDM endpoint per rail with its own address vector, completion queue and, where the
 * provider has one, a counter of completed writes. A rail is one NIC: a PE with several NICs
 * near it (p5: four per GPU) opens one rail on each (FABSHMEM_RAILS caps them), and
 * fsh_fabric_path spreads operations over them at both ends. One NIC, one rail: as before.
 * fabric_provider.h chooses the provider and says what it offers, fabric_route.h the ways to
 * each peer; this header includes both, so the runtime reads them all through it. fabric.c
 * opens the rails; xport.c, mr.c and progress.c use the handles below. Nothing above the
 * transport layer includes <rdma/...>, this header neither: those three include what they
 * call.
 */
#ifndef FSH_FABRIC_H
#define FSH_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "env.h"
#include "fabric_provider.h"
#include "fabric_route.h"

/* libfabric's handles, opaque here: this header is read above the transport too, where no
 * <rdma/...> is included (docs/architecture.md's layers). */
struct fid_domain;
struct fid_ep;
struct fid_cq;

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
/* Insert every PE's address (slots of FSH_ADDR_MAX bytes, lengths in lens[]) in one call, and
 * the ways to each peer over the rails (fabric_route.h). */
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

int fsh_fabric_nrails(void);
/* Rail r's NIC (its libfabric domain name). */
const char *fsh_fabric_rail_name(int rail);
struct fid_domain *fsh_fabric_domain(int rail);
struct fid_ep *fsh_fabric_ep(int rail);
struct fid_cq *fsh_fabric_cq(int rail);
/* Contexts' own endpoints ("lanes", progress.h; FI_THREAD_SAFE is asked for them:
 * fsh_fabric_want_threads). lanes_why_not: NULL when a context may have an endpoint of its
 * own, else why not, for SHMEM_INFO; lanes_possible: it is NULL (known before the peers' rails
 * are: init sizes the lanes' arrival counts with it, the same on every PE). lane_open: an
 * endpoint on rail's domain and AV with a CQ of its own for depth operations (a lane has one
 * on every rail); 0 or -errno (recorded). */
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

#endif
