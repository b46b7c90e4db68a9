/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_barrier: shmem_team_sync on the world, shared, tail (odd size) and evens (stride 2)
 * teams, and the deprecated active-set shmem_barrier and shmem_sync.
 *
 * Every round each member puts (team, round, its number) into a slot of its right neighbour in
 * the team and synchronizes; after the synchronization the neighbour must find exactly that
 * value. team_sync and shmem_sync do not complete puts, so a shmem_quiet comes first;
 * shmem_barrier does (it implies a quiet), so there the put is left outstanding. Slots
 * alternate by parity: a fast PE may write round k+1 while its neighbour still checks round k,
 * never k+2. The rounds run back to back, alternating between the teams, with no other
 * synchronization. A sleeping last PE proves nobody leaves a sync before everyone entered.
 * pSync arrays (initialized to SHMEM_SYNC_VALUE) must be unchanged after the active-set calls.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "../coll_test.h"

#define NAME "coll_barrier"
#define ROUNDS 300
#define MAX_PES 256

static int me, npes;
static long slot[CT_MAX_TEAMS + 3][2];
static long psync[3][SHMEM_BARRIER_SYNC_SIZE];

static long value(int which, int round, int sender)
{
    return ((long)which * 1000003 + round) * 1024 + sender;
}

static void team_rounds(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < ct_nteams; i++) {
            struct ct_team *t = &ct_teams[i];
            if (t->me < 0) {
                continue;
            }
            int right = t->world[(t->me + 1) % t->size];
            int left = (t->me + t->size - 1) % t->size;
            long v = value(i, r, t->me);
            if (r % 2 == 0) {
                shmem_long_p(&slot[i][r % 2], v, right);
            } else {
                shmem_putmem_nbi(&slot[i][r % 2], &v, sizeof(v), right);
            }
            shmem_quiet();
            int rc = shmem_team_sync(t->team);
            t_check(rc == 0, "team_sync(%s) returned %d", t->name, rc);
            long want = value(i, r, left);
            t_check(slot[i][r % 2] == want,
                    "team %s round %d: slot from team PE %d = %ld, want %ld (receiver %d)",
                    t->name, r, left, slot[i][r % 2], want, t->me);
        }
    }
    shmem_barrier_all();
}

/* The last team PE sleeps before the sync and stamps every member first: after the sync each
 * member must see the stamp. */
static void sleeper(void)
{
    static long stamp[CT_MAX_TEAMS];
    for (int i = 0; i < ct_nteams; i++) {
        struct ct_team *t = &ct_teams[i];
        if (t->me < 0) {
            continue;
        }
        if (t->me == t->size - 1) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            for (int k = 0; k < t->size; k++) {
                shmem_long_p(&stamp[i], 4242 + i, t->world[k]);
            }
            shmem_quiet();
        }
        shmem_team_sync(t->team);
        t_check(stamp[i] == 4242 + i, "team %s: after the sync the last PE's stamp is %ld",
                t->name, stamp[i]);
    }
    shmem_barrier_all();
}

/* Active sets: (start, logstride, size). */
struct aset {
    int start, log, size;
};

static int in_set(const struct aset *a, int pe, int *idx)
{
    int d = pe - a->start;
    if (d < 0 || d % (1 << a->log) != 0 || d / (1 << a->log) >= a->size) {
        return 0;
    }
    *idx = d / (1 << a->log);
    return 1;
}

static void active_sets(void)
{
    struct aset sets[3];
    int nsets = 0;
    sets[nsets++] = (struct aset){0, 0, npes};
    sets[nsets++] = (struct aset){0, 1, (npes + 1) / 2};
    if (npes >= 2) {
        sets[nsets++] = (struct aset){1, 0, npes - 1};
    }
    for (int s = 0; s < 3; s++) {
        for (int k = 0; k < SHMEM_BARRIER_SYNC_SIZE; k++) {
            psync[s][k] = SHMEM_SYNC_VALUE;
        }
    }
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        for (int s = 0; s < nsets; s++) {
            const struct aset *a = &sets[s];
            int idx;
            if (!in_set(a, me, &idx)) {
                continue;
            }
            int right = a->start + ((idx + 1) % a->size) * (1 << a->log);
            int left = (idx + a->size - 1) % a->size;
            long v = value(CT_MAX_TEAMS + s, r, idx);
            long *dst = &slot[CT_MAX_TEAMS + s][r % 2];
            int use_sync = r % 3 == 2;
            if (use_sync) {
                shmem_long_p(dst, v, right);
                shmem_quiet();
                shmem_sync(a->start, a->log, a->size, psync[s]);
            } else {
                /* shmem_barrier completes the put itself. */
                shmem_putmem_nbi(dst, &v, sizeof(v), right);
                shmem_barrier(a->start, a->log, a->size, psync[s]);
            }
            long want = value(CT_MAX_TEAMS + s, r, left);
            t_check(*dst == want,
                    "active set (%d,%d,%d) %s round %d: slot from set PE %d = %ld, want %ld",
                    a->start, a->log, a->size, use_sync ? "shmem_sync" : "shmem_barrier", r,
                    left, *dst, want);
        }
    }
    shmem_barrier_all();
    for (int s = 0; s < 3; s++) {
        for (int k = 0; k < SHMEM_BARRIER_SYNC_SIZE; k++) {
            if (!t_check(psync[s][k] == SHMEM_SYNC_VALUE, "pSync[%d] of set %d is %ld after use",
                         k, s, psync[s][k])) {
                break;
            }
        }
    }
}

/* A team of one PE: sync returns at once; many syncs back to back on the world. */
static void trivial(void)
{
    shmem_team_t one = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, 1, 1, NULL, 0, &one);
    t_check(rc == 0, "split of the last PE returned %d", rc);
    if (one != SHMEM_TEAM_INVALID) {
        for (int i = 0; i < 100; i++) {
            t_check(shmem_team_sync(one) == 0, "team_sync of a 1-PE team");
        }
        shmem_team_destroy(one);
    }
    for (int i = 0; i < 1000; i++) {
        if (shmem_team_sync(SHMEM_TEAM_WORLD) != 0) {
            t_check(0, "team_sync(world) failed at call %d", i);
            break;
        }
    }
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes > MAX_PES) {
        t_skip(NAME, "more PEs than the test's tables");
    }
    ct_teams_init();
    team_rounds();
    sleeper();
    active_sets();
    trivial();
    ct_teams_fini();
    shmem_barrier_all();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
