/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rt.h: the runtime identity, the one global shared by all modules.
 *
 * Written only by init.c (once, during shmem_init) and read everywhere else: who this PE is,
 * how many there are, where it runs, the log threshold and whether debug checks are on. Everything else a module needs
 * lives in that module's own static state and is reached through its header.
 */
#ifndef FSH_RT_H
#define FSH_RT_H

#include <stdbool.h>

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
