/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device_team: the device API's team barrier (shmemx_dev_team_barrier, include/shmemx_device.h,
 * the code kernels run) called from CPU threads against the real proxy, on strided teams
 * (the even and the odd PEs of the world, stride 2), the world team, and teams of one PE.
 *
 * Each round, every member writes round * 1000 + its index into its word at every member with
 * a blocking device put (complete at the target on return), one member sleeping first (a
 * different one each round, so it is the last to arrive), then barriers: after the barrier
 * every member must hold every member's word of this round. A barrier that lets a PE through
 * before the late member arrived fails the check. A second barrier keeps the next round's
 * writes from overtaking anyone's check. The teams' barriers interleave (strided, world, one
 * PE), so counters of different teams that mixed would let a PE through early too.
 *
 * A team of one PE: its barrier is a quiet: a put_nbi to this PE through the proxy must have
 * landed when it returns. Then a team line freed and taken again (a new team handle) starts
 * from zero: its barriers still wait for everybody.
 */
#include <time.h>

#include "../test.h"
#include <shmemx_device.h>

#define NAME "device_team"
#define ROUNDS 12

static int me, npes;
static shmemx_device_t h;

struct team {
    const char *name;
    shmem_team_t team;
    shmemx_dev_team_t dt;
    uint64_t *words; /* symmetric: [npes], indexed by team index */
};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void make(struct team *t, const char *name, shmem_team_t team)
{
    t->name = name;
    t->team = team;
    t->words = shmem_calloc((size_t)npes, sizeof(uint64_t)); /* world-collective */
    t->dt = (shmemx_dev_team_t){.my = -1};
    if (team != SHMEM_TEAM_INVALID) {
        int rc = shmemx_device_team(team, &t->dt);
        t_check(rc == 0, "%s: shmemx_device_team returned %d", name, rc);
        t_check(t->dt.size == shmem_team_n_pes(team) && t->dt.my == shmem_team_my_pe(team),
                "%s: handle size %d index %d, team %d %d", name, t->dt.size, t->dt.my,
                shmem_team_n_pes(team), shmem_team_my_pe(team));
        for (int i = 0; i < t->dt.size; i++) {
            int w = shmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD);
            t_check(w == t->dt.start + i * t->dt.stride, "%s: index %d is PE %d, handle says %d",
                    name, i, w, t->dt.start + i * t->dt.stride);
        }
    }
}

/* One round on t (a member's call). */
static void round_on(struct team *t, int r)
{
    shmemx_dev_team_t d = t->dt;
    uint64_t v = (uint64_t)r * 1000 + (uint64_t)d.my;
    if (d.my == r % d.size) {
        sleep_ms(30); /* the last to arrive this round */
    }
    for (int i = 0; i < d.size; i++) {
        int rc = shmemx_dev_put(h, &t->words[d.my], &v, sizeof(v), d.start + i * d.stride);
        t_check(rc == 0, "%s round %d: put to index %d returned %d", t->name, r, i, rc);
    }
    int rc = shmemx_dev_team_barrier(h, d);
    t_check(rc == 0, "%s round %d: barrier returned %d", t->name, r, rc);
    for (int i = 0; i < d.size; i++) {
        uint64_t got = __atomic_load_n(&t->words[i], __ATOMIC_ACQUIRE);
        t_check(got == (uint64_t)r * 1000 + (uint64_t)i,
                "%s round %d: index %d's word is %llu after the barrier (left early)", t->name, r,
                i, (unsigned long long)got);
    }
    rc = shmemx_dev_team_barrier(h, d);
    t_check(rc == 0, "%s round %d: second barrier returned %d", t->name, r, rc);
}

/* A team of one: its barrier completes what this PE posted. */
static void one(struct team *t, int r)
{
    uint64_t v = 0xabc000 + (uint64_t)r;
    int rc = shmemx_dev_put_nbi(h, &t->words[0], &v, sizeof(v), me);
    rc = rc ? rc : shmemx_dev_team_barrier(h, t->dt);
    t_check(rc == 0, "%s round %d: put / barrier returned %d", t->name, r, rc);
    uint64_t got = __atomic_load_n(&t->words[0], __ATOMIC_ACQUIRE);
    t_check(got == v, "%s round %d: the put before the barrier has not landed (%llx)", t->name,
            r, (unsigned long long)got);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (shmemx_device_handle_host(&h) != 0) {
        t_check(0, "shmemx_device_handle_host failed");
        return t_finish(NAME);
    }
    shmem_team_t even, odd = SHMEM_TEAM_INVALID, last;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even);
    if (npes > 1) {
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd);
    }
    shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, 1, 1, NULL, 0, &last);
    struct team world, ev, od, la;
    make(&world, "world", SHMEM_TEAM_WORLD);
    make(&ev, "even", even);
    make(&od, "odd", odd);
    make(&la, "last", last);
    struct team *mine = me % 2 ? &od : &ev;
    for (int r = 1; r <= ROUNDS; r++) {
        if (mine->dt.size == 1) {
            one(mine, r);
        } else {
            round_on(mine, r);
        }
        round_on(&world, r);
        if (la.dt.my == 0) {
            one(&la, r);
        }
    }
    /* The strided team's line freed and taken again: zeroed, and still a barrier. */
    shmem_barrier_all();
    shmemx_device_team_free(&mine->dt);
    t_check(mine->dt.sync == NULL, "free left the handle's line");
    int rc = shmemx_device_team(mine->team, &mine->dt);
    t_check(rc == 0, "%s again: shmemx_device_team returned %d", mine->name, rc);
    memset(mine->words, 0, (size_t)npes * sizeof(uint64_t));
    shmem_barrier_all();
    for (int r = ROUNDS + 1; r <= ROUNDS + 4 && rc == 0; r++) {
        if (mine->dt.size == 1) {
            one(mine, r);
        } else {
            round_on(mine, r);
        }
    }
    shmem_barrier_all();
    if (me == 0) {
        printf("  %d PEs: even team %d PEs, odd %d, world %d, %d rounds each\n", npes, (npes + 1) / 2,
               npes / 2, world.dt.size, ROUNDS);
    }
    t_check(__atomic_load_n(h.error, __ATOMIC_ACQUIRE) == 0, "the proxy's error word is %llx",
            (unsigned long long)*h.error);
    return t_finish(NAME);
}
