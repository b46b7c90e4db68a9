/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proxy.h: the device API's CPU proxy (proxy.c): the rings GPU threads write descriptors into,
 * and the threads that drain them through put and put-with-signal.
 */
#ifndef FSH_PROXY_H
#define FSH_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shmemx_device.h"

/* At init: read FABSHMEM_DEVICE_CHANNELS / _RING / _PROXIES (nothing is allocated or
 * started until the first handle). */
struct fsh_config;
int fsh_proxy_init(const struct fsh_config *cfg);
/* Has the proxy been started (the barrier word allocated)? */
bool fsh_proxy_started(void);
/* Start it, once: the rings (host-mapped when the GPU is open, else host memory for CPU
 * producers), the error word, the proxy threads, each with its context. barrier: this PE's barrier
 * word, a symmetric 8-byte word allocated collectively by the caller (device heap when on). */
int fsh_proxy_start(uint64_t *barrier);
/* The handle kernels use (device addresses) when the GPU is open; host: the same rings as
 * host pointers, for CPU producers. */
void fsh_proxy_handle(shmemx_device_t *h, bool host);
/* Stop the threads after each completed what it took, free everything. */
void fsh_proxy_fini(void);
/* Counters for the benchmark and tests: descriptors taken, operations posted for them (fewer
 * where adjacent puts merged), rounds (batches) posted. */
void fsh_proxy_stats(uint64_t *descs, uint64_t *posts, uint64_t *rounds);

#endif
