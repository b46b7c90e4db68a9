/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devmem.h: the device symmetric heap (FABSHMEM_DEVICE_HEAP_SIZE on each PE's GPU) and RMA to
 * and from GPU memory.
 *
 * The heap is segment FSH_SEG_DEVICE: collective and deterministic like the host heap. How a
 * peer's device memory is reached is the registration path, chosen once at init and printed
 * by SHMEM_INFO=1: dmabuf or FI_HMEM_CUDA when the fabric can register GPU memory, else the
 * staging path (bounce buffers in the symmetric heap, the target's progress engine copying
 * to and from its GPU). Every entry point here is blocking: when it returns, the data is in
 * place at the target (in GPU memory, complete) and the source may be reused.
 */
#ifndef FSH_DEVMEM_H
#define FSH_DEVMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "env.h"
#include "mr.h"
#include "rma.h"

/* Load CUDA and open this PE's GPU when FABSHMEM_DEVICE_HEAP_SIZE > 0: 0 with a GPU, else
 * -ENODEV (not an error: the reason is kept for fsh_dev_describe). */
int fsh_dev_open(const struct fsh_config *cfg);
/* Once every PE opened (everywhere: init.c's agreement; the heap is on for all PEs or none):
 * allocate and manage the heap and set up the staging slots (a symmetric-heap allocation, the
 * same on every PE). Without a GPU somewhere it returns 0 with the heap off and a warning. */
int fsh_dev_init(const struct fsh_config *cfg, bool everywhere);
/* The host heap bytes the staging path reserves for npes PEs with FABSHMEM_DEVICE_CHUNK chunk
 * and FABSHMEM_DEVICE_PEERS peers (the memory model's figure; fsh_dev_init reserves exactly
 * this). */
size_t fsh_dev_heap_bytes(int npes, size_t chunk, long peers);
void fsh_dev_fini(void);
/* The device heap is usable (on every PE). Read on every put and get: a plain flag. */
extern bool fsh_dev_on;
/* It is registered with the NIC (dmabuf or FI_HMEM_CUDA path) on every PE. */
extern bool fsh_dev_direct;
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
/* Make NIC writes into GPU memory visible to the GPU before what guards them (a signal, a
 * barrier, a wait) lets the program use them: only on the direct paths, one flag test else. */
void fsh_dev_visible(void);
static inline void fsh_dev_guard(void)
{
    if (__builtin_expect(fsh_dev_direct, 0)) {
        fsh_dev_visible();
    }
}
/* One line: the path and why, or why the device heap is off. */
const char *fsh_dev_describe(void);
size_t fsh_dev_heap_size(void);

/* Bookkeeping of the device heap (the API adds the barriers). NULL (error recorded) on failure. */
void *fsh_dev_alloc(size_t size, size_t align);
int fsh_dev_free(void *p);
int fsh_dev_memset(void *p, int c, size_t len);

/* Does an RMA with remote side seg and local buffer local need this module (device heap, or a
 * local buffer in GPU memory)? False whenever the device heap is off: then one load and one
 * branch, inline, on the put/get path. */
bool fsh_dev_involved_on(enum fsh_seg seg, const void *local);
static inline bool fsh_dev_involved(enum fsh_seg seg, const void *local)
{
    return __builtin_expect(fsh_dev_on, 0) && fsh_dev_involved_on(seg, local);
}

/* put/get between any local buffer (host or GPU) and (seg, off) of pe, any segment. */
int fsh_dev_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src, size_t len,
                int pe);
int fsh_dev_get(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, size_t len,
                int pe);
/* An atomic (enum fsh_amo_op) on the size-byte (4 or 8) object at off of pe's device heap.
 * Applied by pe's CPU on a copy of the word (read, apply, write back) under its engine lock:
 * atomic with respect to every other AMO on device memory, not to GPU kernels writing the same
 * word at the same time. Complete on return; fetch gets the old value of fetching ops. */
int fsh_dev_amo(int op, uint64_t off, const void *value, const void *cond, void *fetch,
                size_t size, int pe);
/* A local copy, either side host or GPU memory. */
int fsh_dev_copy(void *dst, const void *src, size_t len);

#endif
