/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll.h: the collective operations, as the API layer and init call them.
 *
 * Built on counted writes (notify.h) over the one-sided layer (rma.h), never on libfabric.
 * Every routine runs on a team (team.h); the deprecated active-set forms run on a transient
 * team (fsh_team_aset) after fsh_coll_sync on it. Sizes are in bytes unless said otherwise.
 * Routines return 0, -errno for a failure that ends the job (recorded), or a positive value
 * for a failure the spec reports as a nonzero return.
 */
#ifndef FSH_COLL_H
#define FSH_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <shmem.h>
#include <shmem_table.h>

#include "team.h"

/* Set up counters, scratch and the predefined teams (node_of[pe]: node of each world PE).
 * Collective over all PEs. */
int fsh_coll_init(const int *node_of, unsigned max_teams);
void fsh_coll_fini(void);

/* shmem_barrier_all: quiet, then synchronize all PEs. */
int fsh_coll_barrier_all(void);
/* shmem_sync_all: synchronize all PEs; earlier puts are not completed by it. */
int fsh_coll_sync_all(void);
/* barrier_all whose arrivals carry fingerprint fp (notify.h) instead of a plain barrier's:
 * the barrier that ends a symmetric allocation. */
int fsh_coll_barrier_all_fp(uint16_t fp);
/* shmem_finalize's synchronization of all PEs, on a region no user collective counts. */
int fsh_coll_finalize_sync(void);
/* Synchronize the PEs of t (dissemination). what names the routine in timeout reports. */
int fsh_coll_sync(struct fsh_team *t, const char *what);
/* The same carrying fingerprint fp instead of a plain sync's (0: none). */
int fsh_coll_sync_fp(struct fsh_team *t, const char *what, uint16_t fp);

/* Block i of src (bytes each) to team PE i, landing at dest + me*bytes there. */
int fsh_coll_alltoall(struct fsh_team *t, void *dest, const void *src, size_t bytes);
/* Strided: element j of block k from src + (k*nelems + j)*sst*esize to dest + (me*nelems +
 * j)*dst*esize on team PE k. */
int fsh_coll_alltoalls(struct fsh_team *t, void *dest, const void *src, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems, size_t esize);
/* One step of 8-byte words between all members (used by alltoallv and collect): team PE k
 * gets each[k], or `all` when each is NULL; on return (*in)[k] holds the word PE k sent me
 * (my own entry untouched). */
int fsh_coll_exchange_words(struct fsh_team *t, const char *what, const size_t *each,
                            uint64_t all, uint64_t **in);
/* shmemx_alltoallv; counts and displacements in elements of esize bytes (shmemx.h). */
int fsh_coll_alltoallv(struct fsh_team *t, void *dest, size_t dest_nelems, const void *src,
                       const size_t *send_counts, const size_t *send_displs,
                       size_t *recv_counts, size_t *recv_displs, size_t esize);
/* A size (or other argument) that differs between the members of a collective: world PE pe
 * passed theirs where this PE passed its own. pe is -1 when none was seen. */
struct fsh_coll_mismatch {
    int pe;
    uint64_t theirs;
};
/* FABSHMEM_CHECK: compare v with every member's (one exchange of words). Returns 0 when all
 * are equal, 1 with *mm naming the first member that differs, or -errno. */
int fsh_coll_compare(struct fsh_team *t, uint64_t v, struct fsh_coll_mismatch *mm);
/* bytes from src of team PE root to dest of every other member; also to the root's dest
 * when to_root (the team form; the active-set form leaves the root's dest alone). No PE
 * receives more than its own bytes: where a member passed another size, the smaller moves and
 * 1 is returned with *mm (seen by that member's parent in the tree). */
int fsh_coll_broadcast(struct fsh_team *t, void *dest, const void *src, size_t bytes, int root,
                       bool to_root, struct fsh_coll_mismatch *mm);
/* Concatenate every member's bytes (fcollect: the same on all) in team order into dest. */
int fsh_coll_collect(struct fsh_team *t, void *dest, const void *src, size_t bytes);
int fsh_coll_fcollect(struct fsh_team *t, void *dest, const void *src, size_t bytes);

/* Reductions: one entry per C type of the spec's reduction tables (FSH_TYPE_TABLE rows). */
#define FSH_RTYPE_ENUM(CTYPE, NAME, ...) FSH_RTYPE_##NAME,
enum fsh_red_type { FSH_TYPE_TABLE(FSH_RTYPE_ENUM) FSH_RTYPE_COUNT };
#undef FSH_RTYPE_ENUM
enum fsh_red_op {
    FSH_RED_AND, FSH_RED_OR, FSH_RED_XOR, FSH_RED_MAX, FSH_RED_MIN, FSH_RED_SUM, FSH_RED_PROD,
    FSH_RED_NOPS,
    /* The prefix sums (OpenSHMEM 1.6 sum_inscan/sum_exscan), not reductions of the tables. */
    FSH_RED_INSCAN = FSH_RED_NOPS, FSH_RED_EXSCAN
};
/* dest[i] = OP over the team of src[i], i < nreduce; dest may equal src. For the scans, on
 * team PE p: the sum of src[i] over team PEs 0..p (INSCAN) or 0..p-1 (EXSCAN, 0 on PE 0). */
int fsh_coll_reduce(struct fsh_team *t, void *dest, const void *src, size_t nreduce,
                    enum fsh_red_type type, enum fsh_red_op op);

#endif
