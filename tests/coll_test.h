/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_test.h: what the tests of teams and collectives share beyond test.h.
 *
 * ct_teams_init() builds the teams every collective test runs on, each with the list of its
 * members' world PE numbers computed from the team's definition (never from the library), so a
 * wrong translation or membership shows up as data at the wrong place:
 *   world   SHMEM_TEAM_WORLD
 *   shared  SHMEM_TEAM_SHARED: the PEs of my node. With FABSHMEM_SIM_NODES=k the block of my
 *           pretend node (PE p is on node p*k/npes); else, under Open MPI's mpirun, the block of
 *           OMPI_COMM_WORLD_LOCAL_SIZE ranks around me (its default mapping fills a host with
 *           consecutive ranks: tests/multihost); else every PE
 *   tail    PEs 1..npes-1 (start 1, stride 1): size 3 with 4 PEs, an odd size (npes >= 2)
 *   evens   PEs 0, 2, 4, ... (start 0, stride 2): stride 2 and a different membership
 * On a PE outside a team its handle is SHMEM_TEAM_INVALID and `me` is -1; collectives skip it.
 *
 * Block data uses t_fill/t_verify keyed by (sender, receiver): ct_key() folds both world PE
 * numbers into the pattern's "pe", the salt carries the case and the iteration, so a block
 * from the wrong sender, for the wrong receiver, from an earlier iteration or at the wrong
 * offset is caught. The messages name sender, receiver, offset, expected and got bytes.
 *
 * ct_slow_reader() makes the last team PE dawdle before checking the result of some calls: the
 * others run ahead into the next calls, which must not write a dest that PE is still reading
 * (back-to-back calls alternate two dest buffers and check each result before the next call,
 * which the library's contract allows).
 *
 * Everything is static and unused-tolerant, like test.h.
 */
#ifndef FSH_COLL_TEST_H
#define FSH_COLL_TEST_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#endif
#include <time.h>

#include "test.h"

#define CT_MAX_TEAMS 4
#define CT_SENTINEL 0xa5

struct ct_team {
    const char *name;
    shmem_team_t team; /* SHMEM_TEAM_INVALID on PEs outside it */
    int size;          /* number of PEs, the same on every PE */
    int me;            /* this PE's number in the team, -1 outside */
    int owned;         /* created by a split: destroyed by ct_teams_fini */
    int *world;        /* world PE number of each team PE */
};

static struct ct_team ct_teams[CT_MAX_TEAMS] T_UNUSED;
static int ct_nteams T_UNUSED;

/* Record a team of `size` PEs start, start+stride, ... of the world and check that the
 * library's view (n_pes, my_pe) agrees with the definition. */
static inline T_UNUSED void ct_add(const char *name, shmem_team_t team, int start, int stride,
                                   int size, int owned)
{
    struct ct_team *t = &ct_teams[ct_nteams++];
    int me = shmem_my_pe();
    t->name = name;
    t->team = team;
    t->size = size;
    t->owned = owned;
    t->me = -1;
    t->world = malloc(sizeof(int) * (size_t)size);
    if (t->world == NULL) {
        t_check(0, "out of memory");
        exit(1);
    }
    for (int i = 0; i < size; i++) {
        t->world[i] = start + i * stride;
        if (t->world[i] == me) {
            t->me = i;
        }
    }
    if (t->me < 0) {
        t_check(team == SHMEM_TEAM_INVALID, "team %s: PE outside it got a valid handle", name);
        t->team = SHMEM_TEAM_INVALID;
        return;
    }
    t_check(team != SHMEM_TEAM_INVALID, "team %s: member got SHMEM_TEAM_INVALID", name);
    if (team == SHMEM_TEAM_INVALID) {
        t->me = -1;
        return;
    }
    t_check(shmem_team_n_pes(team) == size, "team %s: n_pes %d, want %d", name,
            shmem_team_n_pes(team), size);
    t_check(shmem_team_my_pe(team) == t->me, "team %s: my_pe %d, want %d", name,
            shmem_team_my_pe(team), t->me);
}

/* Split a strided team off the world (collective over the world); records it. */
static inline T_UNUSED void ct_split(const char *name, int start, int stride, int size)
{
    shmem_team_t team = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &team);
    t_check(rc == 0, "split_strided(world, %d, %d, %d) returned %d", start, stride, size, rc);
    ct_add(name, rc == 0 ? team : SHMEM_TEAM_INVALID, start, stride, size, 1);
}

/* The PEs of my node: [*start, *start + *size). */
static inline T_UNUSED void ct_my_node(int *start, int *size)
{
    int npes = shmem_n_pes(), me = shmem_my_pe();
    const char *sim = getenv("FABSHMEM_SIM_NODES");
    long k = sim ? atol(sim) : 0;
    if (k < 2) {
        const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
        const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        *start = lr && ls ? me - atoi(lr) : 0;
        *size = lr && ls ? atoi(ls) : npes;
        return;
    }
    long node = (long)me * k / npes;
    *start = me;
    while (*start > 0 && (long)(*start - 1) * k / npes == node) {
        (*start)--;
    }
    *size = 0;
    while (*start + *size < npes && (long)(*start + *size) * k / npes == node) {
        (*size)++;
    }
}

/* The four teams above; collective over the world. */
static inline T_UNUSED void ct_teams_init(void)
{
    int npes = shmem_n_pes(), node_start, node_size;
    ct_nteams = 0;
    ct_add("world", SHMEM_TEAM_WORLD, 0, 1, npes, 0);
    ct_my_node(&node_start, &node_size);
    ct_add("shared", SHMEM_TEAM_SHARED, node_start, 1, node_size, 0);
    if (npes >= 2) {
        ct_split("tail", 1, 1, npes - 1);
    }
    ct_split("evens", 0, 2, (npes + 1) / 2);
}

static inline T_UNUSED void ct_teams_fini(void)
{
    for (int i = 0; i < ct_nteams; i++) {
        if (ct_teams[i].owned && ct_teams[i].team != SHMEM_TEAM_INVALID) {
            shmem_team_destroy(ct_teams[i].team);
        }
        free(ct_teams[i].world);
    }
    ct_nteams = 0;
}

/* Call between a collective's return and the check of its result: every 25th call the last
 * team PE sleeps 2 ms, as a PE busy with its result would. */
static inline T_UNUSED void ct_slow_reader(const struct ct_team *t, int call)
{
    if (t->me == t->size - 1 && t->size > 1 && call % 25 == 3) {
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* The pattern "pe" of the block that world PE `sender` sends to world PE `receiver`. */
static inline T_UNUSED int ct_key(int sender, int receiver)
{
    return sender * 1031 + receiver;
}

/* Check that n bytes all hold `byte` (untouched space around a result). */
static inline T_UNUSED __attribute__((format(printf, 4, 5))) size_t
ct_verify_fill(const void *buf, size_t n, uint8_t byte, const char *what, ...)
{
    const uint8_t *p = buf;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != byte) {
            if (bad == 0) {
                first = i;
            }
            bad++;
        }
    }
    if (bad != 0) {
        va_list ap;
        va_start(ap, what);
        t_bytes_failed(what, ap, "overwritten", bad, n, first, p[first], byte);
        va_end(ap);
    }
    return bad;
}

/* The one detail line of a typed check that found `bad` of n elements wrong, the first at
 * index `first` (got, want): SHOW(buf, value) prints a value; what/... name the call. */
#define CT_REPORT(SHOW, bad, n, first, got, want, what, ...)                                       \
    do {                                                                                           \
        if ((bad) != 0) {                                                                          \
            char g_[96], w_[96], label_[160];                                                      \
            SHOW(g_, got);                                                                         \
            SHOW(w_, want);                                                                        \
            snprintf(label_, sizeof(label_), what, __VA_ARGS__);                                   \
            t_check(0, "%s: %zu of %zu elements wrong, first at index %zu: got %s, want %s",       \
                    label_, (size_t)(bad), (size_t)(n), (size_t)(first), g_, w_);                  \
        }                                                                                          \
    } while (0)

/* Allocate n symmetric bytes (collective) and fill them with the sentinel; exit on failure. */
static inline T_UNUSED void *ct_alloc(size_t n)
{
    void *p = shmem_malloc(n == 0 ? 1 : n);
    if (p == NULL) {
        t_check(0, "shmem_malloc(%zu) failed", n);
        printf("%s: FAIL (out of symmetric memory)\n", t_state.name);
        fflush(stdout);
        shmem_global_exit(1);
    }
    memset(p, CT_SENTINEL, n);
    return p;
}

/* ------------------------------------------------------------------ typed values */
/* Values of a type from a 64-bit hash: integers take its low bits, floating types an integer
 * plus one half, exact in every floating type. */
#define CT_GEN_INT(T, h) ((T)(h))
#define CT_GEN_FLT(T, h) ((T)((long long)((h) % 2000003) - 1000001) + (T)0.5)

/* X(CTYPE, NAME, KIND): the standard RMA types of OpenSHMEM 1.5 (the types of the typed
 * collectives), KIND INT or FLT. */
#define CT_RMA_TYPES(X)                                                                            \
    X(float, float, FLT) X(double, double, FLT) X(long double, longdouble, FLT)                    \
    X(char, char, INT) X(signed char, schar, INT) X(short, short, INT) X(int, int, INT)            \
    X(long, long, INT) X(long long, longlong, INT) X(unsigned char, uchar, INT)                    \
    X(unsigned short, ushort, INT) X(unsigned int, uint, INT) X(unsigned long, ulong, INT)         \
    X(unsigned long long, ulonglong, INT) X(int8_t, int8, INT) X(int16_t, int16, INT)              \
    X(int32_t, int32, INT) X(int64_t, int64, INT) X(uint8_t, uint8, INT)                           \
    X(uint16_t, uint16, INT) X(uint32_t, uint32, INT) X(uint64_t, uint64, INT)                     \
    X(size_t, size, INT) X(ptrdiff_t, ptrdiff, INT)

/* The deprecated collectives must leave their pSync as the program set it. */
static inline T_UNUSED void ct_check_psync(const long *psync, int n)
{
    for (int k = 0; k < n; k++) {
        if (!t_check(psync[k] == SHMEM_SYNC_VALUE, "pSync[%d] is %ld after use", k, psync[k])) {
            break;
        }
    }
}

/* The element of type T that world PE `from` sends to world PE `to` at index j. */
#define CT_VAL(K, T, from, to, salt, j)                                                            \
    CT_GEN_##K(T, t_pattern(ct_key(from, to), (uint64_t)(salt) ^ (uint64_t)(j)))

#endif /* FSH_COLL_TEST_H */
