/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bootstrap.h: who am I, who else is there, and one all-gather to introduce everybody.
 *
 * Backed by PMIx when a launcher started us (mpirun, srun --mpi=pmix, prterun), and by a
 * one-PE implementation otherwise (a plain ./app is a singleton job, not an error). The
 * bootstrap knows nothing of libfabric: it moves opaque bytes.
 */
#ifndef FSH_BOOTSTRAP_H
#define FSH_BOOTSTRAP_H

#include <stddef.h>

struct fsh_boot_info {
    int rank, size;
    int local_rank, local_size;
    int node_id, num_nodes;
    int node_leader; /* the lowest rank on this node: it works out what the node's PEs share
                      * (fsh_boot_node_publish); -1 when the launcher does not say */
    int singleton;
};

struct fsh_boot_ops {
    const char *name;
    int (*init)(struct fsh_boot_info *info);
    int (*allgather)(const void *mine, size_t len, void *all, double timeout_s);
    int (*fence)(double timeout_s, void (*progress)(void));
    int (*node_publish)(const char *key, const void *data, size_t len);
    int (*node_fetch)(int leader, const char *key, void **data, size_t *len, double timeout_s);
    void (*abort)(int status, const char *msg) __attribute__((noreturn));
    void (*fini)(void);
};

extern const struct fsh_boot_ops fsh_boot_pmix_ops;
extern const struct fsh_boot_ops fsh_boot_single_ops;

/* PMIx when a launcher is present, else singleton. */
int fsh_boot_init(struct fsh_boot_info *info);
/* Every PE contributes len bytes (len equal on all PEs); all receives size*len bytes, rank order.
 * timeout_s > 0 bounds the wait (a PE that never arrives ends the job with a message). */
int fsh_boot_allgather(const void *mine, size_t len, void *all, double timeout_s);
/* Wait until every PE arrived. progress (may be NULL) runs repeatedly while waiting, so a PE
 * in the fence still serves the fabric operations peers aim at it. */
int fsh_boot_fence(double timeout_s, void (*progress)(void));
/* What every PE of a node would otherwise work out for itself, once per node: the node's leader
 * publishes len bytes under key, visible to its node's PEs only; the others fetch them, each
 * waiting up to timeout_s (0: no limit) for the leader to publish. Fetched bytes are malloc'ed
 * (*data NULL for len 0); the caller frees them. Nothing is left behind: the launcher holds the
 * bytes for the job's length. */
int fsh_boot_node_publish(const char *key, const void *data, size_t len);
int fsh_boot_node_fetch(int leader, const char *key, void **data, size_t *len, double timeout_s);

/* End the whole job: every PE, through the launcher. Never returns. */
void fsh_boot_abort(int status, const char *msg) __attribute__((noreturn));
void fsh_boot_fini(void);
/* The launcher is gone (mpirun killed, its daemon lost): nobody can end this process or reach
 * the job's other PEs through it any more. fn, set before fsh_boot_init, says so and ends the
 * process; it runs on the bootstrap's own thread (PMIx's), so a PE that computes without
 * calling the library ends too. fsh_boot_lost calls it (or _exit(1) when none was set). */
void fsh_boot_set_lost(void (*fn)(void));
void fsh_boot_lost(void) __attribute__((noreturn));
/* "pmix" or "singleton" */
const char *fsh_boot_name(void);

#endif
