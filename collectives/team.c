/*
 * team.c: the teams of the job and their slots.
 *
 * SHMEM_TEAM_WORLD holds every PE in rank order (slot 0); SHMEM_TEAM_SHARED the PEs of this
 * node in rank order (slot 1, the same number on every node since those teams are disjoint).
 * A split agrees on a slot for the new team(s) with one AND-reduction of the parent members'
 * free-slot masks, so the choice is identical on every member without a coordinator; the
 * members mark it used and give it back in shmem_team_destroy. When no slot is free on all
 * parent members the split fails on all of them alike (a nonzero return and a warning naming
 * FABSHMEM_MAX_TEAMS), never a crash or a hang.
 *
 * The user holds handles, not pointers (team.h): the table below maps a slot to its live
 * handle and team. World and shared keep generation 1 of slots 0 and 1 for the whole job.
 *
 * Destroy needs no communication: every collective completes its own writes before it
 * returns, so no arrival for a destroyed team can still be in flight, and a slot is only ever
 * reused through a later split in which all its new members take part.
 */
#include "team.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "error.h"
#include "log.h"
#include "notify.h"
#include "rt.h"

#define IDX_BITS 6 /* team slots: FABSHMEM_MAX_TEAMS <= 63 (notify.c) */
#define NSLOTS (1u << IDX_BITS)
#define HANDLE(gen, slot) (((uintptr_t)(gen) << IDX_BITS) | (uintptr_t)(slot))

struct fsh_team fsh_team_world;
struct fsh_team fsh_team_shared;
FSH_API shmem_team_t const SHMEM_TEAM_WORLD = (shmem_team_t)HANDLE(1, 0);
FSH_API shmem_team_t const SHMEM_TEAM_SHARED = (shmem_team_t)HANDLE(1, 1);

static struct {
    uint64_t used;     /* slots held by teams this PE is in */
    uint64_t all;      /* every team slot */
    unsigned max_teams;
    uintptr_t handle[NSLOTS]; /* the live handle of each slot, 0: none */
    struct fsh_team *team[NSLOTS];
    uintptr_t gen[NSLOTS];    /* the generation last given out in each slot */
} slots;

struct fsh_team *fsh_team_of(shmem_team_t handle)
{
    uintptr_t h = (uintptr_t)handle;
    unsigned i = (unsigned)(h & (NSLOTS - 1));
    return h != 0 && slots.handle[i] == h ? slots.team[i] : NULL;
}

const char *fsh_team_why(shmem_team_t handle)
{
    uintptr_t h = (uintptr_t)handle, gen = h >> IDX_BITS;
    if (h == 0) {
        return "is SHMEM_TEAM_INVALID";
    }
    /* A generation its slot has given out: a team that existed here and was destroyed. */
    return gen >= 1 && gen <= slots.gen[h & (NSLOTS - 1)]
               ? "was destroyed (shmem_team_destroy)"
               : "is not a team handle (never returned by a split: uninitialized or overwritten)";
}

static void publish(struct fsh_team *t, unsigned slot)
{
    t->handle = HANDLE(++slots.gen[slot], slot);
    slots.team[slot] = t;
    slots.handle[slot] = t->handle;
}

static int strided_or_list(struct fsh_team *t, int *members, int n)
{
    /* A list with a constant stride is stored as start/stride: translation is arithmetic. */
    int stride = n > 1 ? members[1] - members[0] : 1;
    bool strided = true;
    for (int i = 2; i < n && strided; i++) {
        strided = members[i] - members[i - 1] == stride;
    }
    t->size = n;
    if (strided && stride != 0) {
        t->start = members[0];
        t->stride = stride;
        t->members = NULL;
        free(members);
    } else {
        t->members = members;
    }
    return 0;
}

int fsh_team_init(int me, int npes, const int *node_of, unsigned max_teams)
{
    slots.max_teams = max_teams;
    slots.all = ((uint64_t)1 << max_teams) - 1; /* max_teams <= 62 (notify.c checks) */
    slots.used = 3; /* world and shared */
    fsh_team_world = (struct fsh_team){.size = npes, .my_pe = me, .start = 0, .stride = 1,
                                       .slot = 0, .predefined = true};
    /* Generation 1 on every start, so the handles match SHMEM_TEAM_WORLD/SHARED. */
    slots.gen[0] = slots.gen[1] = 0;
    publish(&fsh_team_world, 0);
    int *local = malloc((size_t)npes * sizeof(int));
    if (!local) {
        return fsh_err(-ENOMEM, "", "out of memory for the shared team");
    }
    int n = 0, mine = 0;
    for (int pe = 0; pe < npes; pe++) {
        if (node_of[pe] == node_of[me]) {
            if (pe == me) {
                mine = n;
            }
            local[n++] = pe;
        }
    }
    fsh_team_shared = (struct fsh_team){.my_pe = mine, .slot = 1, .predefined = true};
    publish(&fsh_team_shared, 1);
    return strided_or_list(&fsh_team_shared, local, n);
}

void fsh_team_fini(void)
{
    memset(slots.handle, 0, sizeof(slots.handle));
    free(fsh_team_shared.members);
    fsh_team_shared.members = NULL;
}

int fsh_team_index(const struct fsh_team *t, int world)
{
    if (t->members) {
        for (int i = 0; i < t->size; i++) {
            if (t->members[i] == world) {
                return i;
            }
        }
        return -1;
    }
    long d = (long)world - t->start;
    if (d % t->stride != 0) {
        return -1;
    }
    long i = d / t->stride;
    return i >= 0 && i < t->size ? (int)i : -1;
}

int fsh_team_aset(struct fsh_team *t, int start, int log_stride, int size)
{
    if (start < 0 || log_stride < 0 || log_stride > 30 || size < 1 ||
        (long)start + ((long)(size - 1) << log_stride) >= fsh_rt.npes) {
        return fsh_err(-EINVAL, "the set is PE_start + k * 2^logPE_stride for k < PE_size, all below shmem_n_pes()",
                       "active set (PE_start %d, logPE_stride %d, PE_size %d) does not fit in %d PEs",
                       start, log_stride, size, fsh_rt.npes);
    }
    *t = (struct fsh_team){.size = size, .start = start, .stride = 1 << log_stride,
                           .slot = fsh_notify_aset_slot()};
    t->my_pe = fsh_team_index(t, fsh_rt.pe);
    if (t->my_pe < 0) {
        return fsh_err(-EINVAL, "only members of the active set may call its collectives",
                       "PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d)",
                       fsh_rt.pe, start, log_stride, size);
    }
    return 0;
}

/* A team of the parent's PEs start, start+stride, ... (size of them) on slot `slot`; *out is
 * NULL when this PE is not among them. */
static int make_team(struct fsh_team *parent, int start, int stride, int size, unsigned slot,
                     const shmem_team_config_t *config, long mask, struct fsh_team **out)
{
    *out = NULL;
    long rel = (long)parent->my_pe - start;
    if (rel % stride != 0 || rel / stride < 0 || rel / stride >= size) {
        return 0;
    }
    struct fsh_team *t = calloc(1, sizeof(*t));
    int *members = malloc((size_t)size * sizeof(int));
    if (!t || !members) {
        free(t);
        free(members);
        return fsh_err(-ENOMEM, "", "out of memory for a team of %d PEs", size);
    }
    for (int i = 0; i < size; i++) {
        members[i] = fsh_team_world_pe(parent, start + i * stride);
    }
    t->my_pe = (int)(rel / stride);
    t->slot = slot;
    if (config && (mask & SHMEM_TEAM_NUM_CONTEXTS)) {
        t->config.num_contexts = config->num_contexts;
        t->config_mask = SHMEM_TEAM_NUM_CONTEXTS;
    }
    strided_or_list(t, members, size);
    slots.used |= (uint64_t)1 << slot;
    publish(t, slot);
    *out = t;
    return 0;
}

/* The lowest `want` slots free on every member of the parent, agreed by all of them. */
static int agree_slots(struct fsh_team *parent, int want, unsigned got[2])
{
    uint64_t free_mask = slots.all & ~slots.used;
    int rc = fsh_coll_and_word(parent, &free_mask);
    if (rc != 0) {
        return rc;
    }
    for (int k = 0; k < want; k++) {
        if (free_mask == 0) {
            FSH_WARN("team split: no free team slot (FABSHMEM_MAX_TEAMS=%u teams may exist at "
                     "once, counting SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED); destroy teams no "
                     "longer needed or raise FABSHMEM_MAX_TEAMS", slots.max_teams);
            return 1;
        }
        got[k] = (unsigned)__builtin_ctzll(free_mask);
        free_mask &= free_mask - 1;
    }
    return 0;
}

int fsh_team_split_strided(struct fsh_team *parent, int start, int stride, int size,
                           const shmem_team_config_t *config, long mask, struct fsh_team **out)
{
    *out = NULL;
    if (size < 1 || start < 0 || start >= parent->size || (stride == 0 && size > 1) ||
        (long)start + (long)(size - 1) * stride < 0 ||
        (long)start + (long)(size - 1) * stride >= parent->size) {
        FSH_WARN("shmem_team_split_strided: start %d, stride %d, size %d leave the parent team "
                 "of %d PEs; every member must be 0 <= start + i*stride < %d", start, stride,
                 size, parent->size, parent->size);
        return 1;
    }
    unsigned slot[2];
    int rc = agree_slots(parent, 1, slot);
    if (rc != 0) {
        return rc;
    }
    return make_team(parent, start, stride == 0 ? 1 : stride, size, slot[0], config, mask, out);
}

int fsh_team_split_2d(struct fsh_team *parent, int xrange, const shmem_team_config_t *xconfig,
                      long xmask, struct fsh_team **xout, const shmem_team_config_t *yconfig,
                      long ymask, struct fsh_team **yout)
{
    *xout = *yout = NULL;
    if (xrange < 1) {
        FSH_WARN("shmem_team_split_2d: xrange %d must be at least 1", xrange);
        return 1;
    }
    int n = parent->size;
    int x = xrange > n ? n : xrange;
    unsigned slot[2];
    int rc = agree_slots(parent, 2, slot);
    if (rc != 0) {
        return rc;
    }
    /* Rows of x consecutive parent PEs share slot[0], columns slot[1]: rows are disjoint
     * from each other, and so are columns. */
    int me = parent->my_pe;
    int row = me / x, col = me % x;
    int row_size = n - row * x < x ? n - row * x : x;
    int col_size = (n - col + x - 1) / x;
    rc = make_team(parent, row * x, 1, row_size, slot[0], xconfig, xmask, xout);
    if (rc == 0) {
        rc = make_team(parent, col, x, col_size, slot[1], yconfig, ymask, yout);
    }
    return rc;
}

void fsh_team_destroy(struct fsh_team *t)
{
    if (t->predefined) {
        return;
    }
    slots.used &= ~((uint64_t)1 << t->slot);
    slots.handle[t->slot] = 0;
    free(t->members);
    free(t);
}
