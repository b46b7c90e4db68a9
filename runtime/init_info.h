/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_info.h: what init tells about the job (SHMEM_INFO, the topology map, the phases'
 * timings) and the start-up checks that only report (init_info.c).
 */
#ifndef FSH_INIT_INFO_H
#define FSH_INIT_INFO_H

#include <stddef.h>

#include "env.h"

/* The phase of init that just ended is name; NULL starts the clock. Wall time
 * (CLOCK_MONOTONIC), so a phase that waits for slower peers shows the wait. */
void fsh_init_info_phase(const char *name);
/* "pmix 12.1 ms, topology 40.2 ms, ..., total 98.0 ms": every phase, then the total (measured
 * from the start, so an unnamed stretch shows as a gap). */
void fsh_init_info_phases(char *line, size_t len);

/* SHMEM_INFO's report of the job, the fabric, the heap at heap_base and every setting. */
void fsh_init_info_print(const struct fsh_config *cfg, void *heap_base, size_t heap_size);
/* This PE's line of the topology map, with the endpoint it opened: one write per line, so
 * PEs sharing the launcher's output do not interleave them. */
void fsh_init_info_place(void);

/* Does fabshmem's own state fit a symmetric heap of heap_size bytes? 0, or -ENOMEM recorded
 * with the arithmetic, before any part is reserved (the device staging inboxes, reserved only
 * once the device heap is known to be on, report for themselves). */
int fsh_init_info_fits(const struct fsh_config *cfg, size_t heap_size);
/* What init reserved must be what the memory model says (README, SHMEM_INFO): a difference
 * is a bug in one of them, warned about, never fatal. */
void fsh_init_info_footprint(const struct fsh_config *cfg);
/* Another OpenSHMEM library in this process (its shmem_* would mix with ours): -EEXIST
 * recorded, naming its file and how to build with fabshmem's wrapper alone; else 0. */
int fsh_init_info_rival(void);

#endif
