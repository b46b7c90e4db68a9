/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rt.h: the runtime identity, the one global shared by all modules.
 *
 * Who this PE is, how many there are, where it runs, the log threshold and whether debug
 * checks are on. Everything else a module needs lives in that module's own static state and is
 * reached through its header. Defined in rt.c; read everywhere, written only here:
 *  - init.c, in shmem_init before the modules start (one thread): log_level, checks, pe, npes,
 *    local_rank, local_size, node_id, num_nodes (FABSHMEM_SIM_NODES splits the host into
 *    simulated nodes), singleton, oversubscribed, then thread_level; host and pid at their
 *    first use (shmem_init, or the fatal path of a call made before it).
 *  - state: init.c (INIT and RUNNING in shmem_init; FINALIZED in shmem_finalize and
 *    shmem_global_exit), and local.c's fork handler in a forked child (RUNNING -> FINALIZED).
 *  - forked: local.c's fork handler, in the child only.
 * A program that runs modules without init.c (tests/unit/fake_fabric.c, bench/sim_scale.c)
 * fills it as init.c would, before it starts them.
 */
#ifndef FSH_RT_H
#define FSH_RT_H

#include <stdbool.h>

/* The log threshold's values (log.h logs by it; here because log_level is one of them). */
enum fsh_log_level { FSH_LOG_ERROR = 0, FSH_LOG_WARN, FSH_LOG_INFO, FSH_LOG_DEBUG, FSH_LOG_TRACE };

enum fsh_state { FSH_STATE_NEW = 0, FSH_STATE_INIT, FSH_STATE_RUNNING, FSH_STATE_FINALIZED };

struct fsh_rt {
    int pe;          /* my rank in the world team, -1 before bootstrap */
    int npes;        /* size of the world team */
    int local_rank;  /* rank among the PEs on this node */
    int local_size;  /* PEs on this node */
    int node_id;     /* index of this node */
    int num_nodes;   /* nodes in the job */
    int log_level;   /* enum fsh_log_level */
    bool singleton;  /* started without a launcher */
    bool oversubscribed; /* more PEs on this node than cores: waits yield the CPU */
    bool checks;     /* FABSHMEM_CHECK (or SHMEM_DEBUG): the costly argument checks are on */
    enum fsh_state state;
    bool forked;     /* a child forked after shmem_init (set there by local.c): not a PE */
    int thread_level; /* SHMEM_THREAD_* provided */
    char host[64];
    int pid;
};

extern struct fsh_rt fsh_rt;

#endif
