/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devmem.h: the device symmetric heap (FABSHMEM_DEVICE_HEAP_SIZE on each PE's GPU) and RMA to
 * and from GPU memory.
 *
 * The heap is segment FSH_SEG_DEVICE: collective and deterministic like the host heap. How a
 * peer's device memory is reached is the registration path, chosen once at init and printed
 * by SHMEM_INFO=1: dmabuf or FI_HMEM_CUDA when the fabric can register GPU memory, else the
 * staging path (bounce buffers in the symmetric heap, the target's progress engine copying
 * to and from its GPU).
 *
 * The operations never call this module: they reach the device heap and GPU buffers through
 * the backend it hands init.c (fsh_dev_backend, backend.h), whose every transfer is blocking
 * (when it returns, the data is in place at the target, in GPU memory, and the source may be
 * reused). What is named here is init's (open, init, start, fini), the API's management of the
 * heap (alloc, free, memset, size, describe) and fabshmem-info's (the path choice).
 */
#ifndef FSH_DEVMEM_H
#define FSH_DEVMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "env.h"

/* Load CUDA and open this PE's GPU when FABSHMEM_DEVICE_HEAP_SIZE > 0: 0 with a GPU, else
 * -ENODEV (not an error: the reason is kept for fsh_dev_describe). */
int fsh_dev_open(const struct fsh_config *cfg);
/* Once every PE opened (everywhere: init.c's agreement; the heap is on for all PEs or none):
 * allocate the heap, set up the staging slots (a symmetric-heap allocation, the same on every
 * PE) and register the heap by the best path this PE can have; *registered says whether it
 * did so with the NIC. Without a GPU somewhere it returns 0 with the heap off and a warning. */
int fsh_dev_init(const struct fsh_config *cfg, bool everywhere, bool *registered);
/* Then, with init.c's agreement whether every PE registered (a peer's heap without a key can
 * only be reached by staging): exchange the keys or fall back to staging, and turn the heap
 * on. */
int fsh_dev_start(const struct fsh_config *cfg, bool all_registered);
/* The backend the operations reach the heap and GPU buffers by once it is on, else NULL. */
const struct fsh_backend *fsh_dev_backend(void);
/* The host heap bytes the staging path reserves for npes PEs with FABSHMEM_DEVICE_CHUNK chunk
 * and FABSHMEM_DEVICE_PEERS peers (the memory model's figure; fsh_dev_init reserves exactly
 * this). */
size_t fsh_dev_heap_bytes(int npes, size_t chunk, long peers);
void fsh_dev_fini(void);
/* The device heap is usable (on every PE). */
extern bool fsh_dev_on;
/* FABSHMEM_DEVICE_PATH: auto (*want = -1), staging, cuda or dmabuf (0, 1, 2); error otherwise. */
int fsh_dev_parse_path(const char *word, int *want);
/* What the choice of path needs to know of the provider. */
struct fsh_dev_prov {
    const char *name; /* libfabric provider name, NULL when none */
    bool hmem;        /* lists FI_HMEM */
    bool virt_addr;   /* remote addresses are virtual addresses (FI_MR_VIRT_ADDR) */
};
/* The path FABSHMEM_DEVICE_PATH=want would take given the provider and whether the driver
 * exports dmabufs (NULL when a forced path cannot be had); why says why each better path is
 * passed over. Pure: for fabshmem-info --doctor. */
const char *fsh_dev_path(int want, const struct fsh_dev_prov *f, bool exportable, char *why,
                         size_t len);
/* One line: the path and why, or why the device heap is off; once on, also the same-node
 * mapping (how many peers, or why not) and counters of staged requests, bounces and copies
 * through mappings (which path ran). */
const char *fsh_dev_describe(void);
/* The base of pe's device heap as mapped into this PE's address space (a device pointer this
 * PE's kernels and driver copies can use): this PE's own heap for pe == me, NULL when pe's heap
 * is not mapped here (another node, FABSHMEM_DEVICE_MAP=0, the driver refused, heap off). */
void *fsh_dev_peer_base(int pe);
size_t fsh_dev_heap_size(void);
/* pe's device heap base as mapped in this process (a pointer kernels of this PE may use), the
 * own heap's base for this PE, NULL when pe's heap is not mapped here (or the heap is off). */
void *fsh_dev_peer_base(int pe);

/* Bookkeeping of the device heap (the API adds the barriers). NULL (error recorded) on failure. */
void *fsh_dev_alloc(size_t size, size_t align);
int fsh_dev_free(void *p);
int fsh_dev_memset(void *p, int c, size_t len);

#endif
