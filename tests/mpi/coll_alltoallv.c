/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_alltoallv: the extension shmemx_alltoallvmem and its typed forms (shmemx.h).
 *
 * Each call every PE sends an irregular number of bytes to every team PE: counts come from a
 * hash of (sender, receiver, call), a quarter of them zero, one receiver per call gets nothing
 * at all, every tenth call has blocks up to ~200 KB. Blocks sit in the (private, malloc'ed)
 * source in reverse team order with gaps. Every receiver checks recv_counts, recv_displs (the
 * prefix sums in team order, recv_displs[0] == 0) and every byte of every block (pattern of
 * sender, receiver, call), and that nothing was written past the blocks. dest_size is exact on
 * some calls. 100 calls back to back on the world (30 on the other teams), alternating two dest
 * buffers with no barrier between them.
 *
 * Overflow: one PE (v) offers dest_size one byte short of what is bound for it. It must return
 * nonzero and receive nothing (its dest untouched); every PE that had data for v returns
 * nonzero; the others return 0; every other pair is exchanged normally (checked), and the next
 * call works again. Tried on every team, with some PE having nothing for v when npes >= 3.
 *
 * The typed form shmemx_int64_alltoallv and the C11 shmemx_alltoallv (double) count elements.
 * coll_alltoallv.env splits writes at 16 KiB, so the large blocks arrive in many pieces.
 */
#include "../coll_test.h"
#include <shmemx.h>

#define NAME "coll_alltoallv"
#define SMALL_MAX 3000
#define BIG_MAX 200000
#define GAP 5
#define MARGIN 64

static int me, npes;
static uint8_t *dst[2]; /* symmetric, npes * BIG_MAX + MARGIN bytes */
static uint8_t *src;    /* private */
static size_t *scounts, *sdispls, *rcounts, *rdispls;

static uint64_t salt_of(int ti, int call)
{
    return ((uint64_t)ti << 32) ^ (uint64_t)call * 0x10001ULL;
}

/* Bytes team PE s sends to team PE r in call `call` of team ti; `empty` receives nothing. */
static size_t vcount(int ti, int s, int r, int call, int empty)
{
    if (r == empty) {
        return 0;
    }
    uint64_t h = t_pattern(s * 131 + r, salt_of(ti, call));
    if (h % 4 == 0) {
        return 0;
    }
    size_t max = call % 10 == 9 ? BIG_MAX : SMALL_MAX;
    return 1 + (size_t)((h >> 8) % max);
}

/* Fill this PE's counts, displacements (in elements of `unit` bytes) and source for one call.
 * Blocks go in reverse team order with GAP elements before each; team PE zero_s sends nothing
 * to zero_r (-1: none). */
static void build_source(struct ct_team *t, int ti, int call, int empty, int zero_s, int zero_r,
                         size_t unit)
{
    size_t off = 0;
    for (int j = t->size - 1; j >= 0; j--) {
        size_t c = vcount(ti, t->me, j, call, empty);
        if (t->me == zero_s && j == zero_r) {
            c = 0;
        }
        c = (c + unit - 1) / unit; /* elements */
        memset(src + off * unit, 0x5a, GAP * unit);
        sdispls[j] = off + GAP;
        scounts[j] = c;
        t_fill(src + sdispls[j] * unit, c * unit, ct_key(me, t->world[j]), salt_of(ti, call));
        off = sdispls[j] + c;
    }
}

/* What team PE s sends to this PE in that call, in elements of `unit` bytes. */
static size_t expect_count(struct ct_team *t, int ti, int s, int call, int empty, int zero_s,
                           int zero_r, size_t unit)
{
    size_t c = vcount(ti, s, t->me, call, empty);
    if (s == zero_s && t->me == zero_r) {
        c = 0;
    }
    return (c + unit - 1) / unit;
}

/* Check recv_counts, recv_displs and the data of one call on this PE; returns the total. */
static size_t check_result(struct ct_team *t, int ti, int call, int empty, int zero_s,
                           int zero_r, size_t unit, const uint8_t *d, const char *what)
{
    size_t pos = 0;
    for (int i = 0; i < t->size; i++) {
        size_t c = expect_count(t, ti, i, call, empty, zero_s, zero_r, unit);
        t_check(rcounts[i] == c, "%s(%s) call %d: recv_counts[%d] = %zu, want %zu", what, t->name,
                call, i, rcounts[i], c);
        t_check(rdispls[i] == pos, "%s(%s) call %d: recv_displs[%d] = %zu, want %zu", what,
                t->name, call, i, rdispls[i], pos);
        t_verify(d + pos * unit, c * unit, ct_key(t->world[i], me), salt_of(ti, call),
                 "%s(%s) call %d: block from PE %d (team %d) to PE %d (team %d)", what, t->name,
                 call, t->world[i], i, me, t->me);
        pos += c;
    }
    ct_verify_fill(d + pos * unit, MARGIN, CT_SENTINEL, "%s(%s) call %d: past the blocks", what,
                   t->name, call);
    return pos;
}

static void normal_calls(int ti, int calls, int first_call, int buf0)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    for (int k = 0; k < calls; k++) {
        int call = first_call + k;
        int empty = call % t->size;
        uint8_t *d = dst[(k + buf0) % 2];
        build_source(t, ti, call, empty, -1, -1, 1);
        size_t total = 0;
        for (int i = 0; i < t->size; i++) {
            total += expect_count(t, ti, i, call, empty, -1, -1, 1);
        }
        size_t dsize = call % 3 == 0 ? total : total + (size_t)(call % 7) * 100;
        for (int i = 0; i < t->size; i++) {
            rcounts[i] = rdispls[i] = (size_t)-1;
        }
        int rc = shmemx_alltoallvmem(t->team, d, dsize, src, scounts, sdispls, rcounts, rdispls);
        t_check(rc == 0, "alltoallvmem(%s) call %d (dest_size %zu, needed %zu) returned %d",
                t->name, call, dsize, total, rc);
        ct_slow_reader(t, k);
        size_t got = check_result(t, ti, call, empty, -1, -1, 1, d, "alltoallvmem");
        memset(d, CT_SENTINEL, got + MARGIN);
    }
}

/* One PE (v) has one byte too few; see the header. */
static void overflow(int ti, int call)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    int n = t->size;
    int v = call % n;
    int zero_s = n >= 3 ? (v + 1) % n : -1; /* has nothing for v */
    int empty = n >= 2 ? (v + n - 1) % n : -1; /* receives nothing, but is no victim */
    /* v must be owed something: the sender after zero_s always has data for it. */
    for (;;) {
        int owed = 0;
        for (int s = 0; s < n; s++) {
            owed += s != zero_s && vcount(ti, s, v, call, empty) > 0;
        }
        if (owed > 0) {
            break;
        }
        call += 1000; /* the same on every PE: another hash */
    }
    uint8_t *d = dst[0];
    build_source(t, ti, call, empty, zero_s, v, 1);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        total += expect_count(t, ti, i, call, empty, zero_s, v, 1);
    }
    size_t dsize = total + 10;
    if (t->me == v) {
        dsize = total - 1;
    }
    int has_data_for_v = scounts[v] > 0;
    int rc = shmemx_alltoallvmem(t->team, d, dsize, src, scounts, sdispls, rcounts, rdispls);
    if (t->me == v) {
        t_check(total > 0 && rc != 0,
                "overflow(%s) call %d: the PE short of room (dest_size %zu, needs %zu) got %d",
                t->name, call, dsize, total, rc);
        ct_verify_fill(d, total + MARGIN, CT_SENTINEL,
                       "overflow(%s) call %d: dest of the PE short of room", t->name, call);
        memset(d, CT_SENTINEL, total + MARGIN);
    } else {
        if (has_data_for_v) {
            t_check(rc != 0, "overflow(%s) call %d: team PE %d had %zu bytes for the full PE %d "
                             "but got 0", t->name, call, t->me, scounts[v], v);
        } else {
            t_check(rc == 0, "overflow(%s) call %d: team PE %d had nothing for the full PE %d but "
                             "got %d", t->name, call, t->me, v, rc);
        }
        size_t got = check_result(t, ti, call, empty, zero_s, v, 1, d, "overflow alltoallvmem");
        memset(d, CT_SENTINEL, got + MARGIN);
    }
    /* And the team works normally right after (starting on the other dest buffer). */
    normal_calls(ti, 2, call + 1, 1);
}

static void typed(int ti, int calls)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    for (int k = 0; k < calls; k++) {
        int call = 500 + k;
        int empty = (call + 1) % t->size;
        size_t unit = k % 2 == 0 ? sizeof(int64_t) : sizeof(double);
        uint8_t *d = dst[k % 2];
        /* Byte patterns in 8-byte elements: doubles are only copied, never computed on. */
        build_source(t, ti, call, empty, -1, -1, unit);
        size_t total = 0;
        for (int i = 0; i < t->size; i++) {
            total += expect_count(t, ti, i, call, empty, -1, -1, unit);
        }
        int rc;
        const char *what;
        if (k % 2 == 0) {
            what = "shmemx_int64_alltoallv";
            rc = shmemx_int64_alltoallv(t->team, (int64_t *)d, total, (const int64_t *)src,
                                        scounts, sdispls, rcounts, rdispls);
        } else {
            what = "shmemx_alltoallv(double)";
            rc = shmemx_alltoallv(t->team, (double *)d, total + 3, (const double *)src, scounts,
                                  sdispls, rcounts, rdispls);
        }
        t_check(rc == 0, "%s(%s) call %d returned %d", what, t->name, call, rc);
        size_t got = check_result(t, ti, call, empty, -1, -1, unit, d, what);
        memset(d, CT_SENTINEL, got * unit + MARGIN);
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    size_t cap = (size_t)npes * (BIG_MAX + GAP + 8) * sizeof(double) + MARGIN;
    dst[0] = ct_alloc(cap);
    dst[1] = ct_alloc(cap);
    src = malloc(cap);
    scounts = malloc(sizeof(size_t) * (size_t)npes);
    sdispls = malloc(sizeof(size_t) * (size_t)npes);
    rcounts = malloc(sizeof(size_t) * (size_t)npes);
    rdispls = malloc(sizeof(size_t) * (size_t)npes);
    if (src == NULL || scounts == NULL || sdispls == NULL || rcounts == NULL || rdispls == NULL) {
        t_skip(NAME, "out of memory");
    }
    ct_teams_init();
    shmem_barrier_all();

    /* The teams share the dest buffers: a barrier between teams. */
    for (int ti = 0; ti < ct_nteams; ti++) {
        normal_calls(ti, ti == 0 ? 100 : 30, 0, 0);
        shmem_barrier_all();
        overflow(ti, 7);
        shmem_barrier_all();
        overflow(ti, 8);
        shmem_barrier_all();
        typed(ti, 10);
        shmem_barrier_all();
    }

    ct_teams_fini();
    shmem_barrier_all();
    int rc = t_finish(NAME);
    free(src);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    shmem_finalize();
    return rc;
}
