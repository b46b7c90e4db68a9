/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * footprint.h: what fabshmem itself takes from the symmetric heap, computed from the same
 * functions the modules reserve with, so the memory model (README, SHMEM_INFO, the error when
 * it does not fit) cannot drift from what init does.
 */
#ifndef FSH_FOOTPRINT_H
#define FSH_FOOTPRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "env.h"

enum { FSH_FOOTPRINT_PARTS = 8 };

struct fsh_footprint {
    const char *name[FSH_FOOTPRINT_PARTS];
    size_t bytes[FSH_FOOTPRINT_PARTS];
    size_t total;
};

/* The symmetric heap bytes init reserves for npes PEs with cfg's settings; device: the device
 * heap is on (its staging inboxes live in the host heap). */
void fsh_footprint(int npes, const struct fsh_config *cfg, bool device, struct fsh_footprint *f);

/* "signal inboxes 135 KiB + collectives 1.1 MiB + ... = 1.3 MiB" into buf. */
void fsh_footprint_describe(const struct fsh_footprint *f, char *buf, size_t len);

/* Bytes in a short human form (B, KiB, MiB, GiB with one decimal) into buf. */
void fsh_footprint_size(size_t bytes, char *buf, size_t len);

#endif
