/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_zero: every collective takes a zero count, with dest and source NULL or not
 * (OpenSHMEM 1.5, annex "Undefined Behavior": a null pointer with a zero count is supported),
 * and a zero-count call leaves the team's sequence of collectives intact.
 *
 * On each team (world, shared, tail, evens) every PE calls broadcast, collect, fcollect,
 * alltoall, alltoalls (typed and mem forms) and each reduction (and/or/xor, max/min, sum/prod):
 * first with (NULL, NULL, 0), then with symmetric buffers and 0 into a dest that nothing else
 * writes (it must keep its sentinel), then at once, with no barrier, a real call of the same
 * routine whose data is checked. collect's real call has a zero count (and NULL source) on
 * some PEs only. The deprecated active-set forms (alltoall32/64, alltoalls32/64,
 * broadcast32/64, collect32/64, fcollect32/64 and shmem_long_<op>_to_all) take the same cases on
 * all PEs and on the even PEs; their pSync must be unchanged.
 */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "../coll_test.h"

#define NAME "coll_zero"
#define N 5       /* elements per PE in the real calls */
#define MAXPES 16 /* the buffers below hold N elements from up to this many PEs */
#define ROOM (N * MAXPES)
#define MARGIN 8 /* longs past a result that must keep the sentinel */

static int me, npes;
static long *dst, *zdst, *src; /* symmetric, ROOM + MARGIN longs each */
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N];

/* Element j that world PE `pe` contributes to call `salt`: 1..1000. */
static long val(int pe, uint64_t salt, int j)
{
    return (long)(t_pattern(pe, salt * 64 + (uint64_t)j) % 1000) + 1;
}

static void fill_src(uint64_t salt, int count)
{
    for (int j = 0; j < count; j++) {
        src[j] = val(me, salt, j);
    }
}

/* Before each routine: both dests hold the sentinel, and no PE calls it before every PE of the
 * group has reset its own (sync), so a result can only come from the call under test. */
static void reset(void)
{
    memset(dst, CT_SENTINEL, sizeof(long) * (ROOM + MARGIN));
    memset(zdst, CT_SENTINEL, sizeof(long) * (ROOM + MARGIN));
}

/* zdst receives only zero-count calls: it must hold the sentinel still. */
static void untouched(const char *what, const char *group)
{
    ct_verify_fill(zdst, sizeof(long) * (ROOM + MARGIN), CT_SENTINEL, "%s on %s with nelems 0",
                   what, group);
}

static void expect(const long *want, int count, const char *what, const char *group)
{
    for (int j = 0; j < count; j++) {
        if (!t_check(dst[j] == want[j], "%s on %s: element %d is %ld, want %ld", what, group, j,
                     dst[j], want[j])) {
            return;
        }
    }
    ct_verify_fill(dst + count, sizeof(long) * MARGIN, CT_SENTINEL, "%s on %s: past the result",
                   what, group);
}

/* ------------------------------------------------------------------ team-based forms */
/* Each runs right after reset() and a sync of the team: zero-count calls (NULL, then zdst),
 * then the real call with no barrier in between. */

static void t_bcast(struct ct_team *t, uint64_t salt)
{
    int root = t->size - 1;
    long want[N];
    t_check(shmem_long_broadcast(t->team, NULL, NULL, 0, root) == 0, "broadcast NULL,0 failed");
    t_check(shmem_broadcastmem(t->team, NULL, NULL, 0, 0) == 0, "broadcastmem NULL,0 failed");
    t_check(shmem_long_broadcast(t->team, zdst, src, 0, root) == 0, "broadcast 0 failed");
    fill_src(salt, N);
    t_check(shmem_long_broadcast(t->team, dst, src, N, root) == 0, "broadcast failed");
    untouched("shmem_long_broadcast", t->name);
    for (int j = 0; j < N; j++) {
        want[j] = val(t->world[root], salt, j);
    }
    expect(want, N, "shmem_long_broadcast", t->name);
}

static void t_fcollect(struct ct_team *t, uint64_t salt)
{
    long want[ROOM];
    t_check(shmem_long_fcollect(t->team, NULL, NULL, 0) == 0, "fcollect NULL,0 failed");
    t_check(shmem_fcollectmem(t->team, NULL, NULL, 0) == 0, "fcollectmem NULL,0 failed");
    t_check(shmem_long_fcollect(t->team, zdst, src, 0) == 0, "fcollect 0 failed");
    fill_src(salt, N);
    t_check(shmem_long_fcollect(t->team, dst, src, N) == 0, "fcollect failed");
    untouched("shmem_long_fcollect", t->name);
    for (int p = 0; p < t->size; p++) {
        for (int j = 0; j < N; j++) {
            want[p * N + j] = val(t->world[p], salt, j);
        }
    }
    expect(want, N * t->size, "shmem_long_fcollect", t->name);
}

/* collect: all zero (NULL and not), then team PE i contributes i % 3 elements, so some PEs
 * pass 0 (and source NULL) with a dest that receives the others' blocks. */
static void t_collect(struct ct_team *t, uint64_t salt)
{
    long want[ROOM];
    int mine = t->me % 3, at = 0;
    t_check(shmem_long_collect(t->team, NULL, NULL, 0) == 0, "collect NULL,0 failed");
    t_check(shmem_collectmem(t->team, NULL, NULL, 0) == 0, "collectmem NULL,0 failed");
    t_check(shmem_long_collect(t->team, zdst, src, 0) == 0, "collect 0 failed");
    fill_src(salt, mine);
    t_check(shmem_long_collect(t->team, dst, mine ? src : NULL, (size_t)mine) == 0,
            "collect of %d failed", mine);
    untouched("shmem_long_collect", t->name);
    for (int p = 0; p < t->size; p++) {
        for (int j = 0; j < p % 3; j++) {
            want[at++] = val(t->world[p], salt, j);
        }
    }
    expect(want, at, "shmem_long_collect (team PE i gives i % 3)", t->name);
}

/* Block k of the source goes to team PE k; element j of the block from world PE p to world PE
 * q is val(p, salt + q, j). */
static void fill_blocks(const int *world, int size, uint64_t salt, int per)
{
    for (int k = 0; k < size; k++) {
        for (int j = 0; j < per; j++) {
            src[k * per + j] = val(me, salt + (uint64_t)world[k], j);
        }
    }
}

static void want_blocks(long *want, const int *world, int size, uint64_t salt, int per)
{
    for (int p = 0; p < size; p++) {
        for (int j = 0; j < per; j++) {
            want[p * per + j] = val(world[p], salt + (uint64_t)me, j);
        }
    }
}

static void t_alltoall(struct ct_team *t, uint64_t salt)
{
    long want[ROOM];
    t_check(shmem_long_alltoall(t->team, NULL, NULL, 0) == 0, "alltoall NULL,0 failed");
    t_check(shmem_alltoallmem(t->team, NULL, NULL, 0) == 0, "alltoallmem NULL,0 failed");
    t_check(shmem_long_alltoall(t->team, zdst, src, 0) == 0, "alltoall 0 failed");
    fill_blocks(t->world, t->size, salt, 2);
    t_check(shmem_long_alltoall(t->team, dst, src, 2) == 0, "alltoall failed");
    untouched("shmem_long_alltoall", t->name);
    want_blocks(want, t->world, t->size, salt, 2);
    expect(want, 2 * t->size, "shmem_long_alltoall", t->name);
}

static void t_alltoalls(struct ct_team *t, uint64_t salt)
{
    long want[ROOM];
    t_check(shmem_long_alltoalls(t->team, NULL, NULL, 2, 3, 0) == 0, "alltoalls NULL,0 failed");
    t_check(shmem_alltoallsmem(t->team, NULL, NULL, 1, 1, 0) == 0, "alltoallsmem NULL,0 failed");
    t_check(shmem_long_alltoalls(t->team, zdst, src, 2, 3, 0) == 0, "alltoalls 0 failed");
    fill_blocks(t->world, t->size, salt, 2);
    t_check(shmem_long_alltoalls(t->team, dst, src, 1, 1, 2) == 0, "alltoalls failed");
    untouched("shmem_long_alltoalls", t->name);
    want_blocks(want, t->world, t->size, salt, 2);
    expect(want, 2 * t->size, "shmem_long_alltoalls", t->name);
}

/* One reduction: and/or/xor over unsigned long (their table has no long), the others over
 * long. PROD takes sources of 1 and 2 only, so no product overflows. */
#define SRC_and(x) (x)
#define SRC_or(x) (x)
#define SRC_xor(x) (x)
#define SRC_max(x) (x)
#define SRC_min(x) (x)
#define SRC_sum(x) (x)
#define SRC_prod(x) ((x) % 2 + 1)
#define COMB_and(w, v) ((w) & (v))
#define COMB_or(w, v) ((w) | (v))
#define COMB_xor(w, v) ((w) ^ (v))
#define COMB_max(w, v) ((w) > (v) ? (w) : (v))
#define COMB_min(w, v) ((w) < (v) ? (w) : (v))
#define COMB_sum(w, v) ((w) + (v))
#define COMB_prod(w, v) ((w) * (v))

/* The reference over the PEs world[0..size) into want[0..N). */
#define REFERENCE(T, OP, world, size, salt, want)                                                \
    for (int j = 0; j < N; j++) {                                                                \
        T w = (T)SRC_##OP(val((world)[0], salt, j));                                             \
        for (int p = 1; p < (size); p++) {                                                       \
            w = (T)COMB_##OP(w, (T)SRC_##OP(val((world)[p], salt, j)));                          \
        }                                                                                        \
        (want)[j] = (long)w;                                                                     \
    }

#define RED(T, NAME, OP)                                                                         \
    static void r_##OP(struct ct_team *t, uint64_t salt)                                         \
    {                                                                                            \
        T *s = (T *)src;                                                                         \
        long want[N];                                                                            \
        t_check(shmem_##NAME##_##OP##_reduce(t->team, NULL, NULL, 0) == 0,                       \
                #OP "_reduce NULL,0 failed");                                                    \
        t_check(shmem_##NAME##_##OP##_reduce(t->team, (T *)zdst, s, 0) == 0,                     \
                #OP "_reduce 0 failed");                                                         \
        for (int j = 0; j < N; j++) {                                                            \
            s[j] = (T)SRC_##OP(val(me, salt, j));                                                \
        }                                                                                        \
        t_check(shmem_##NAME##_##OP##_reduce(t->team, (T *)dst, s, N) == 0,                      \
                #OP "_reduce failed");                                                           \
        untouched("shmem_" #NAME "_" #OP "_reduce", t->name);                                    \
        REFERENCE(T, OP, t->world, t->size, salt, want)                                          \
        expect(want, N, "shmem_" #NAME "_" #OP "_reduce", t->name);                              \
    }
RED(unsigned long, ulong, and)
RED(unsigned long, ulong, or)
RED(unsigned long, ulong, xor)
RED(long, long, max)
RED(long, long, min)
RED(long, long, sum)
RED(long, long, prod)

typedef void (*team_call)(struct ct_team *, uint64_t);
static const team_call team_calls[] = {
    t_bcast, t_fcollect, t_collect, t_alltoall, t_alltoalls,
    r_and, r_or, r_xor, r_max, r_min, r_sum, r_prod,
};
#define NTEAM_CALLS (sizeof(team_calls) / sizeof(team_calls[0]))

/* ------------------------------------------------------------------ active-set forms */

struct aset {
    const char *name;
    int start, log_stride, size;
    int world[MAXPES];
    int me; /* index of this PE in the set, -1 outside */
};

static void a_bcast(const struct aset *a, uint64_t salt)
{
    int root = a->size - 1;
    long want[N];
    shmem_broadcast32(NULL, NULL, 0, root, a->start, a->log_stride, a->size, psync);
    shmem_broadcast64(NULL, NULL, 0, root, a->start, a->log_stride, a->size, psync);
    shmem_broadcast64(zdst, src, 0, root, a->start, a->log_stride, a->size, psync);
    fill_src(salt, N);
    shmem_broadcast64(dst, src, N, root, a->start, a->log_stride, a->size, psync);
    untouched("shmem_broadcast64", a->name);
    if (a->me == root) {
        return; /* the active-set form leaves the root's dest alone */
    }
    for (int j = 0; j < N; j++) {
        want[j] = val(a->world[root], salt, j);
    }
    expect(want, N, "shmem_broadcast64", a->name);
}

static void a_collect(const struct aset *a, uint64_t salt)
{
    long want[ROOM];
    int mine = a->me % 3, at = 0;
    shmem_collect32(NULL, NULL, 0, a->start, a->log_stride, a->size, psync);
    shmem_collect64(NULL, NULL, 0, a->start, a->log_stride, a->size, psync);
    shmem_fcollect32(NULL, NULL, 0, a->start, a->log_stride, a->size, psync);
    shmem_fcollect64(NULL, NULL, 0, a->start, a->log_stride, a->size, psync);
    shmem_collect64(zdst, src, 0, a->start, a->log_stride, a->size, psync);
    shmem_fcollect64(zdst, src, 0, a->start, a->log_stride, a->size, psync);
    fill_src(salt, mine);
    shmem_collect64(dst, mine ? src : NULL, (size_t)mine, a->start, a->log_stride, a->size,
                    psync);
    untouched("shmem_collect64/fcollect64", a->name);
    for (int p = 0; p < a->size; p++) {
        for (int j = 0; j < p % 3; j++) {
            want[at++] = val(a->world[p], salt, j);
        }
    }
    expect(want, at, "shmem_collect64 (set PE i gives i % 3)", a->name);
}

static void a_alltoall(const struct aset *a, uint64_t salt)
{
    long want[ROOM];
    shmem_alltoall32(NULL, NULL, 0, a->start, a->log_stride, a->size, psync);
    shmem_alltoall64(NULL, NULL, 0, a->start, a->log_stride, a->size, psync);
    shmem_alltoalls32(NULL, NULL, 2, 3, 0, a->start, a->log_stride, a->size, psync);
    shmem_alltoalls64(NULL, NULL, 2, 3, 0, a->start, a->log_stride, a->size, psync);
    shmem_alltoall64(zdst, src, 0, a->start, a->log_stride, a->size, psync);
    shmem_alltoalls64(zdst, src, 2, 3, 0, a->start, a->log_stride, a->size, psync);
    fill_blocks(a->world, a->size, salt, 2);
    shmem_alltoall64(dst, src, 2, a->start, a->log_stride, a->size, psync);
    untouched("shmem_alltoall64/alltoalls64", a->name);
    want_blocks(want, a->world, a->size, salt, 2);
    expect(want, 2 * a->size, "shmem_alltoall64", a->name);
}

#define TO_ALL(T, NAME, OP)                                                                      \
    static void a_##OP(const struct aset *a, uint64_t salt)                                      \
    {                                                                                            \
        T *s = (T *)src;                                                                         \
        long want[N];                                                                            \
        shmem_##NAME##_##OP##_to_all(NULL, NULL, 0, a->start, a->log_stride, a->size, NULL,      \
                                     psync);                                                     \
        shmem_##NAME##_##OP##_to_all((T *)zdst, s, 0, a->start, a->log_stride, a->size,          \
                                     (T *)pwrk, psync);                                          \
        for (int j = 0; j < N; j++) {                                                            \
            s[j] = (T)SRC_##OP(val(me, salt, j));                                                \
        }                                                                                        \
        shmem_##NAME##_##OP##_to_all((T *)dst, s, N, a->start, a->log_stride, a->size,           \
                                     (T *)pwrk, psync);                                          \
        untouched("shmem_" #NAME "_" #OP "_to_all", a->name);                                    \
        REFERENCE(T, OP, a->world, a->size, salt, want)                                          \
        expect(want, N, "shmem_" #NAME "_" #OP "_to_all", a->name);                              \
    }
TO_ALL(long, long, and)
TO_ALL(long, long, or)
TO_ALL(long, long, xor)
TO_ALL(long, long, max)
TO_ALL(long, long, min)
TO_ALL(long, long, sum)
TO_ALL(long, long, prod)

typedef void (*aset_call)(const struct aset *, uint64_t);
static const aset_call aset_calls[] = {
    a_bcast, a_collect, a_alltoall, a_and, a_or, a_xor, a_max, a_min, a_sum, a_prod,
};
#define NASET_CALLS (sizeof(aset_calls) / sizeof(aset_calls[0]))

static void aset_init(struct aset *a, const char *name, int log_stride, int size)
{
    a->name = name;
    a->start = 0;
    a->log_stride = log_stride;
    a->size = size;
    a->me = -1;
    for (int i = 0; i < size; i++) {
        a->world[i] = i << log_stride;
        if (a->world[i] == me) {
            a->me = i;
        }
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes > MAXPES) {
        t_skip(NAME, "more PEs than the test's buffers hold");
    }
    for (int k = 0; k < SHMEM_REDUCE_SYNC_SIZE; k++) {
        psync[k] = SHMEM_SYNC_VALUE;
    }
    dst = ct_alloc(sizeof(long) * (ROOM + MARGIN));
    zdst = ct_alloc(sizeof(long) * (ROOM + MARGIN));
    src = ct_alloc(sizeof(long) * (ROOM + MARGIN));
    ct_teams_init();
    for (int round = 0; round < 3; round++) {
        for (int ti = 0; ti < ct_nteams; ti++) {
            struct ct_team *t = &ct_teams[ti];
            if (t->me < 0) {
                continue;
            }
            for (size_t c = 0; c < NTEAM_CALLS; c++) {
                reset();
                shmem_team_sync(t->team);
                team_calls[c](t, (uint64_t)(round * 100 + ti * 20) + c + 1);
            }
        }
    }
    ct_teams_fini();

    struct aset sets[2];
    aset_init(&sets[0], "all PEs", 0, npes);
    aset_init(&sets[1], "even PEs", 1, (npes + 1) / 2);
    for (int round = 0; round < 2; round++) {
        for (int si = 0; si < 2; si++) {
            for (size_t c = 0; c < NASET_CALLS; c++) {
                reset();
                shmem_barrier_all();
                if (sets[si].me >= 0) {
                    aset_calls[c](&sets[si], (uint64_t)(1000 + round * 100 + si * 20) + c);
                }
            }
        }
    }
    ct_check_psync(psync, SHMEM_REDUCE_SYNC_SIZE);

    shmem_barrier_all();
    shmem_free(src);
    shmem_free(zdst);
    shmem_free(dst);
    shmem_finalize();
    return t_finish(NAME);
}
