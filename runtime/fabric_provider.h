/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_provider.h: which libfabric provider, on which NIC, and what it offers.
 *
 * fabric_provider.c chooses the provider for the job (and the entry of each further rail) and
 * describes it in struct fsh_fabric_attr, whose limits the whole runtime obeys; fabric.c opens
 * the rails on what it chose and keeps that description (fsh_fabric_attr). fabric.h includes
 * this header: the rest of the runtime reads these names through it.
 */
#ifndef FSH_FABRIC_PROVIDER_H
#define FSH_FABRIC_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "env.h"

/* libfabric's description of an endpoint, opaque here (fabric.h says why). */
struct fi_info;

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
    bool order_waw;          /* tx msg_order has FI_ORDER_(RMA_)WAW: one endpoint's writes to
                              * one target are handled there in the order posted */
    bool order_raw;          /* ... FI_ORDER_(RMA_)RAW: a read after writes, after them */
    bool order_atomic_raw;   /* tx and rx msg_order have FI_ORDER_ATOMIC_RAW (or 1.x's
                              * FI_ORDER_RAW, which covers atomics): an atomic fetch after atomic
                              * updates is handled after them (amo.c's flush) */
    bool count_arrivals;     /* FABSHMEM_REMOTE_COMPLETION: count (or auto without
                              * delivery-complete): targets count plain writes, quiet reads the
                              * counts (rma_post.c) */
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

/* Before fsh_fabric_open: the program is SHMEM_THREAD_MULTIPLE, so the domain is asked
 * FI_THREAD_SAFE first (threads then post to different endpoints of it at once: contexts' own,
 * fabric.h's lanes). */
void fsh_fabric_want_threads(bool on);

/* For fabric.c. choose: the provider of this job and rail 0's entry of it (*info, freed by
 * fsh_fabric_provider_close), described in *attr; 0 or -errno (recorded). rail: the entry of a
 * further rail on NIC name, the same provider with the same capabilities, registration modes
 * and addresses, so that every rail can carry every operation; it lowers *attr's inject and
 * message sizes to its own. NULL (nothing recorded) when there is none; *own: a list of its
 * own to free with the rail, or NULL. profile: FABSHMEM_PROVIDER_PROFILE's word for what is
 * used (efa-direct also when the provider is). mr_str: registration modes as FABSHMEM_MR_MODE
 * words. threads: fsh_fabric_want_threads was given true. close: forget the choice. */
int fsh_fabric_provider_choose(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                               const struct fsh_fabric_nic *nic, struct fsh_fabric_attr *attr,
                               struct fi_info **info);
struct fi_info *fsh_fabric_provider_rail(const char *name, struct fsh_fabric_attr *attr,
                                         struct fi_info **own);
const char *fsh_fabric_provider_profile(void);
void fsh_fabric_provider_mr_str(uint64_t mode, char *buf, size_t len);
bool fsh_fabric_provider_threads(void);
void fsh_fabric_provider_close(void);

#endif
