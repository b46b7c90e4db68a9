/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal.h: put-with-signal (the protocol is described in signal.c).
 */
#ifndef FSH_SIGNAL_H
#define FSH_SIGNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"

struct fsh_ctx;

/* Reserve the inboxes (a pool of `peers` of them, granted to sources on first use), the
 * outgoing ring, and register the event handlers. Collective (heap reservations). */
int fsh_signal_init(long slots, long peers);
/* The heap bytes fsh_signal_init reserves for npes PEs (the memory model's figure). */
size_t fsh_signal_heap_bytes(int npes, long slots, long peers);
void fsh_signal_fini(void);

/* len bytes from src to (dseg, doff) of pe, then the 64-bit signal at (sseg, soff) of pe
 * updated with op (SHMEM_SIGNAL_SET/ADD) once every byte landed. Blocking (nbi false): returns
 * when src may be reused. */
int fsh_signal_put(struct fsh_ctx *ctx, enum fsh_seg dseg, uint64_t doff, const void *src,
                   size_t len, enum fsh_seg sseg, uint64_t soff, uint64_t value, int op, int pe,
                   bool nbi);

/* For SHMEM_INFO=1: one line on stdout, which variant carries which sizes to mapped and to
 * fabric peers (signal.c's table), and which choices are made only at run time. */
void fsh_signal_print_info(void);

/* Wait until every signal this PE issued was applied at its target (part of quiet). */
int fsh_signal_quiet(void);

#endif
