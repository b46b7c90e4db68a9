/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * local.h: the intra-node path. PEs on one node map each other's symmetric segments, so
 * puts, gets, signals, atomics and the collectives' writes between them are loads, stores and
 * CPU atomics instead of fabric operations.
 *
 * Both symmetric segments live in memory a peer can map: the heap is created on a memfd, and
 * the program's data+bss are moved onto a memfd at init (same addresses, same contents). The
 * descriptors travel in the init exchange as (pid, fd); a peer on the same node opens
 * /proc/<pid>/fd/<fd> and maps it. Nothing is ever named in /dev/shm, so a crash cannot leave
 * files behind; the memory goes when the last PE that maps it exits.
 *
 * The rules the callers keep are written out in local.c: which PEs take this path, the memory
 * ordering of quiet and fence, and the one atomicity domain of AMOs.
 */
#ifndef FSH_LOCAL_H
#define FSH_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"

enum fsh_intranode { FSH_INTRANODE_AUTO = 0, FSH_INTRANODE_FABRIC };

struct fsh_local {
    /* [pe * FSH_NSEGS + seg]: where (seg, 0) of pe is in this process, or NULL when pe is
     * reached through the fabric. */
    uint8_t **base;
    /* Every AMO of the job is a CPU atomic on mapped memory (see local.c); else all go through
     * the fabric. The same on every PE. */
    bool cpu_atomics;
};
extern struct fsh_local fsh_local;

/* Parse FABSHMEM_INTRANODE (auto|fabric) into *mode; -EINVAL (recorded) when it is neither. */
int fsh_local_parse_mode(const char *value, enum fsh_intranode *mode);

/* Decide the path before the segments exist: sharing when mode is auto and other PEs run on
 * this node (local_size > 1). With mode auto a PE always reaches itself by load/store. */
int fsh_local_init(enum fsh_intranode mode, int npes, int local_size);
void fsh_local_fini(void);

/* A memfd of size bytes for the symmetric heap when sharing (heap.c maps it), else -1: a
 * private heap. A memfd that cannot be made is reported at info level and sharing is off. */
int fsh_local_heap_fd(size_t size);
/* Move the data+bss segment [base, base+len) onto a memfd (when sharing): same addresses,
 * same contents. On failure the segment stays private and peers reach it through the fabric
 * (info message). Call before the segment is registered with the fabric. */
void fsh_local_share_data(void *base, size_t len);

/* The per-PE part of the exchange blob. */
size_t fsh_local_blob_size(void);
void fsh_local_blob_pack(void *blob);
void fsh_local_blob_unpack(int pe, const void *blob);

/* Map the segments of every PE with node_of[pe] == node_of[me]. Returns 0 also when some
 * could not be mapped (those go through the fabric); *all_mapped says whether every one was. */
int fsh_local_attach(const int *node_of, bool *all_mapped);

/* The address of (seg, off) of pe in this process, or NULL when pe is not mapped. */
static inline void *fsh_local_addr(int pe, enum fsh_seg seg, uint64_t off)
{
    uint8_t *b = fsh_local.base ? fsh_local.base[(size_t)pe * FSH_NSEGS + seg] : NULL;
    return b ? b + off : NULL;
}

/* Can this build share its static data (not under ThreadSanitizer: see local.c)? Without it
 * peers reach that segment, and every AMO, through the fabric. */
bool fsh_local_shares_data(void);

/* The first peer fsh_local_attach could not map, and why (for an error when nothing else can
 * reach it). */
const char *fsh_local_unmapped(void);

/* The process id pe published in the exchange (meaningful for a PE of this node), 0: none. */
int fsh_local_pid(int pe);
/* The pid of any PE (0: unknown) when it runs in this PE's process space (the same kernel,
 * pid namespace and host name), whatever node the job says it is on: its /proc entry is its. */
int fsh_local_visible_pid(int pe);

/* For SHMEM_INFO: the path chosen, e.g. "load/store with 3 local PEs, CPU atomics". */
void fsh_local_describe(char *buf, size_t len);

#endif
