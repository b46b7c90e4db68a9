/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * team.c: the teams of the job, their handles and their regions.
 *
 * SHMEM_TEAM_WORLD holds every PE in rank order, SHMEM_TEAM_SHARED the PEs of this node in
 * rank order; the world's region is notify.c's world region, the shared team's is carved
 * from the team arena at init (every PE's arena is empty then, so the PEs of a node, which
 * agree on their number, take the same pages). A split agrees on arena pages for the new
 * team(s) with one AND-reduction of the parent members' free-page masks, so the choice is
 * identical on every member without a coordinator; the same word carries one bit saying
 * whether the PE has a free slot (handle) for each new team. When a slot or pages are
 * missing on some parent member the split fails on all of them alike (a nonzero return and a
 * warning naming FABSHMEM_MAX_TEAMS), never a crash or a hang.
 *
 * The user holds handles, not pointers (team.h): the table below maps a slot to its live
 * handle and team. World and shared keep generation 1 of slots 0 and 1 for the whole job.
 * Slots are local: a team's handle may differ between PEs, as the spec allows.
 *
 * Destroy needs no communication: every collective completes its own writes and waits for
 * every arrival it expects before it returns, so no arrival for a destroyed team can still be
 * in flight, and its pages are only ever reused through a later split in which all the new
 * members say they are free.
 */
#include "team.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"
#include "notify.h"
#include "rt.h"

#define IDX_BITS 6 /* team slots: FABSHMEM_MAX_TEAMS <= 62 */
#define SLOTS_OK ((uint64_t)1 << 63) /* in a split's agreement word: slots free here */
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
    struct fsh_notify_region *shared_nr;
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
                                       .slot = 0, .nr = fsh_notify_world(), .predefined = true};
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
    unsigned first;
    if (!fsh_notify_fit(fsh_notify_free_pages(), fsh_notify_pages_for(n), &first)) {
        free(local);
        return fsh_err(-ENOMEM, "raise FABSHMEM_MAX_TEAMS (the team arena grows with it)",
                       "the team arena (%d pages of %zu bytes) cannot hold SHMEM_TEAM_SHARED "
                       "of %d PEs (%u pages)", FSH_NOTIFY_PAGES, fsh_notify_page_bytes(), n,
                       fsh_notify_pages_for(n));
    }
    int rc = fsh_notify_carve(n, first, &slots.shared_nr);
    if (rc != 0) {
        free(local);
        return rc;
    }
    fsh_team_shared = (struct fsh_team){.my_pe = mine, .slot = 1, .nr = slots.shared_nr,
                                        .predefined = true};
    publish(&fsh_team_shared, 1);
    return strided_or_list(&fsh_team_shared, local, n);
}

void fsh_team_fini(void)
{
    memset(slots.handle, 0, sizeof(slots.handle));
    free(fsh_team_shared.members);
    fsh_team_shared.members = NULL;
    fsh_notify_release(slots.shared_nr);
    slots.shared_nr = NULL;
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
    if (t->stride == 1) {
        return d >= 0 && d < t->size ? (int)d : -1; /* no division: every active-set call */
    }
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
                           .nr = fsh_notify_aset()};
    t->my_pe = fsh_team_index(t, fsh_rt.pe);
    if (t->my_pe < 0) {
        return fsh_err(-EINVAL, "only members of the active set may call its collectives",
                       "PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d)",
                       fsh_rt.pe, start, log_stride, size);
    }
    return 0;
}

/* The lowest slot free here (agree() made sure there is one). */
static unsigned free_slot(void)
{
    return (unsigned)__builtin_ctzll(slots.all & ~slots.used);
}

/* A team of the parent's PEs start, start+stride, ... (size of them) on arena pages from
 * `first`; *out is NULL when this PE is not among them. */
static int make_team(struct fsh_team *parent, int start, int stride, int size, unsigned first,
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
    int rc = fsh_notify_carve(size, first, &t->nr);
    if (rc != 0) {
        free(t);
        free(members);
        return rc;
    }
    unsigned slot = free_slot();
    t->my_pe = (int)(rel / stride);
    t->slot = slot;
    if (config && (mask & SHMEM_TEAM_NUM_CONTEXTS)) {
        t->config.num_contexts = config->num_contexts;
        t->config_mask = SHMEM_TEAM_NUM_CONTEXTS;
        /* Best effort (the spec): endpoints of their own for that many contexts, as far as
         * FABSHMEM_CTX_ENDPOINTS has some left. */
        fsh_rma_lanes_reserve(&t->lanes, config->num_contexts);
    }
    strided_or_list(t, members, size);
    slots.used |= (uint64_t)1 << slot;
    publish(t, slot);
    *out = t;
    return 0;
}

/* Agree over the parent on the arena pages of `want` new teams of sizes size[k], the first
 * pages of each in first[k] (pages of different teams do not overlap: an x-team and a y-team
 * of a 2D split share members). Returns 0, 1 (warned: no slot or no room on some member, the
 * same answer on all) or -errno. */
static int agree(struct fsh_team *parent, int want, const int size[2], unsigned first[2],
                 const char *what)
{
    uint64_t word = fsh_notify_free_pages();
    if (__builtin_popcountll(slots.all & ~slots.used) >= want) {
        word |= SLOTS_OK;
    }
    int rc = fsh_notify_and_word(parent, &word);
    if (rc != 0) {
        return rc;
    }
    if (!(word & SLOTS_OK)) {
        FSH_WARN("%s: no free team slot (FABSHMEM_MAX_TEAMS=%u teams may exist at once, "
                 "counting SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED); destroy teams no longer "
                 "needed or raise FABSHMEM_MAX_TEAMS", what, slots.max_teams);
        return 1;
    }
    uint64_t free = word & ~SLOTS_OK;
    for (int k = 0; k < want; k++) {
        unsigned pages = fsh_notify_pages_for(size[k]);
        if (!fsh_notify_fit(free, pages, &first[k])) {
            FSH_WARN("%s: no room for a team of %d PEs in the team arena (%u pages of %zu bytes "
                     "needed, %d free on every member of the parent; the arena is %d pages, "
                     "set by FABSHMEM_MAX_TEAMS=%u); destroy teams no longer needed or raise "
                     "FABSHMEM_MAX_TEAMS", what, size[k], pages, fsh_notify_page_bytes(),
                     __builtin_popcountll(free), FSH_NOTIFY_PAGES, slots.max_teams);
            return 1;
        }
        free &= ~((((uint64_t)1 << pages) - 1) << first[k]);
    }
    return 0;
}

int fsh_team_split_strided(struct fsh_team *parent, int start, int stride, int size,
                           const shmem_team_config_t *config, long mask, struct fsh_team **out)
{
    *out = NULL;
    if (size < 1 || (stride == 0 && size > 1)) {
        FSH_WARN("shmem_team_split_strided: size %d with stride %d: a team has at least one PE, "
                 "and stride 0 (the same PE again) is allowed only with size 1", size, stride);
        return 1;
    }
    if (start < 0 || start >= parent->size || (long)start + (long)(size - 1) * stride < 0 ||
        (long)start + (long)(size - 1) * stride >= parent->size) {
        FSH_WARN("shmem_team_split_strided: start %d, stride %d, size %d leave the parent team "
                 "of %d PEs; every member must be 0 <= start + i*stride < %d", start, stride,
                 size, parent->size, parent->size);
        return 1;
    }
    int sizes[2] = {size, 0};
    unsigned first[2];
    int rc = agree(parent, 1, sizes, first, "shmem_team_split_strided");
    if (rc != 0) {
        return rc;
    }
    return make_team(parent, start, stride == 0 ? 1 : stride, size, first[0], config, mask, out);
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
    /* Rows of x consecutive parent PEs share the pages of the largest row, columns those of
     * the largest column: rows are disjoint from each other, and so are columns. */
    int sizes[2] = {x, (n + x - 1) / x};
    unsigned first[2];
    int rc = agree(parent, 2, sizes, first, "shmem_team_split_2d");
    if (rc != 0) {
        return rc;
    }
    int me = parent->my_pe;
    int row = me / x, col = me % x;
    int row_size = n - row * x < x ? n - row * x : x;
    int col_size = (n - col + x - 1) / x;
    rc = make_team(parent, row * x, 1, row_size, first[0], xconfig, xmask, xout);
    if (rc == 0) {
        rc = make_team(parent, col, x, col_size, first[1], yconfig, ymask, yout);
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
    fsh_rma_lanes_unreserve(&t->lanes);
    fsh_notify_release(t->nr);
    free(t->members);
    free(t);
}
