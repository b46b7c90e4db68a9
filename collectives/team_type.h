/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * team_type.h: what a team is, for the modules below team.c that take one.
 *
 * struct fsh_team and the inline accessors of its members and scratch steps. team.c makes,
 * names and destroys teams and calls notify.c to lay out their regions; notify.c and the
 * collectives read a team through this header alone, so no include leads from them back up
 * to team.c (tests/unit/layers.sh checks there is no cycle).
 */
#ifndef FSH_TEAM_TYPE_H
#define FSH_TEAM_TYPE_H

#include <stdbool.h>
#include <stdint.h>

#include <shmem.h>

#include "rma.h"

struct fsh_notify_region;

struct fsh_team {
    int size;
    int my_pe;         /* my index in the team */
    int start, stride; /* world PE of index i when members is NULL */
    int *members;      /* world PE of each index, or NULL */
    unsigned slot;     /* in this PE's team table (handles) */
    struct fsh_notify_region *nr; /* counters and scratch (notify.h) */
    uint64_t steps;    /* scratch steps taken: their parity picks the scratch buffers */
    uint16_t fp;       /* the fingerprint of the call in progress (fingerprint.h), set by the API */
    shmem_team_config_t config;
    long config_mask;
    struct fsh_lane_reserve lanes; /* contexts' endpoints set aside for it (num_contexts) */
    bool predefined;   /* world and shared: never destroyed */
    uintptr_t handle;  /* what the user holds (fsh_team_of) */
};

static inline int fsh_team_world_pe(const struct fsh_team *t, int i)
{
    return t->members ? t->members[i] : t->start + i * t->stride;
}

/* The parity of the team's next scratch step, counting it taken. */
static inline unsigned fsh_team_step(struct fsh_team *t)
{
    return (unsigned)(t->steps++ & 1);
}

#endif
