/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * team.h: teams, the ordered PE sets collectives run on.
 *
 * A team maps its PE numbers 0..size-1 to world PEs, either arithmetically (start + i*stride:
 * the world team and every split of a strided team) or through a member list (the shared team
 * of a node, and splits of it). Each team owns a region: its arrival counters and scratch in
 * notify.c, at the same heap offset on every member (disjoint teams may share one, overlapping
 * ones never do), and a slot: the local index of its handle. What a team is (struct
 * fsh_team and its inline accessors) is team_type.h's, so the modules team.c uses (notify.c)
 * can take a team without depending on this one.
 */
#ifndef FSH_TEAM_H
#define FSH_TEAM_H

#include <shmem.h>

#include "team_type.h"

extern struct fsh_team fsh_team_world;
extern struct fsh_team fsh_team_shared;

/* Set up the world team and this node's shared team (node_of[pe]: the node of each world
 * PE), and the slot bookkeeping: max_teams slots for teams existing at once. */
int fsh_team_init(int me, int npes, const int *node_of, unsigned max_teams);
void fsh_team_fini(void);

/* Team handles are (generation << 6 | slot), never pointers: the team table holds the live
 * handle of each slot, and every team made on a slot gets a new generation, so a destroyed,
 * twice destroyed or made-up handle is told apart from a live one (and never dereferenced).
 * The team of a handle, or NULL when it names no live team (SHMEM_TEAM_INVALID included). */
struct fsh_team *fsh_team_of(shmem_team_t handle);
/* Why handle names no live team, for the caller's message: "is SHMEM_TEAM_INVALID", "was
 * destroyed" or "is not a team handle". */
const char *fsh_team_why(shmem_team_t handle);

/* The index of world PE `world` in t, or -1. */
int fsh_team_index(const struct fsh_team *t, int world);

/* An active set of the deprecated collectives, as a transient team on the active-set region.
 * Returns -EINVAL (recorded) when the set leaves the world or does not contain this PE. */
int fsh_team_aset(struct fsh_team *t, int start, int log_stride, int size);

/* Splits, collective over the parent. On success *out is the new team, or NULL on PEs that
 * are not in it. Returns 0, a positive value for the spec's "nonzero" failures (bad
 * arguments, no free slot, no room in the team arena: reported with a warning, *out NULL
 * everywhere), or -errno on a communication failure. */
int fsh_team_split_strided(struct fsh_team *parent, int start, int stride, int size,
                           const shmem_team_config_t *config, long mask, struct fsh_team **out);
int fsh_team_split_2d(struct fsh_team *parent, int xrange, const shmem_team_config_t *xconfig,
                      long xmask, struct fsh_team **xout, const shmem_team_config_t *yconfig,
                      long ymask, struct fsh_team **yout);
void fsh_team_destroy(struct fsh_team *t);

#endif
