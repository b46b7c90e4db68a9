/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_teams: the team API of OpenSHMEM 1.5.
 *
 * 1. SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED (every PE here, one host; with FABSHMEM_SIM_NODES
 *    the block of PEs of my pretend node) report their members in the world's order; SHMEM_TEAM_INVALID has my_pe and
 *    n_pes -1 and translates to -1.
 * 2. split_strided: evens (stride 2), the tail 1..npes-1 (an odd size with 4 PEs), a single
 *    PE, a split of a split; members get the right my_pe/n_pes, outsiders SHMEM_TEAM_INVALID;
 *    translate_pe both ways, -1 for PEs outside the destination team. Bad arguments (start out
 *    of range, a team running past the parent, an invalid parent) return nonzero and
 *    SHMEM_TEAM_INVALID on every PE.
 * 3. split_2d with xrange 1, 2, 3: x-teams are rows of xrange consecutive PEs, y-teams the
 *    columns; sizes, numbers and translations checked against the definition.
 * 4. get_config returns the SHMEM_TEAM_NUM_CONTEXTS given at the split.
 * 5. team_create_ctx: shmem_ctx_get_team returns the team; PE numbers of the context's RMA are
 *    team numbers (a put to team PE k lands on world PE evens[k]).
 * 6. shmem_team_ptr on the calling PE gives the address itself; for others NULL or an address
 *    that reads the peer's data.
 * 7. The team limit (FABSHMEM_MAX_TEAMS, default 32 counting WORLD and SHARED): splitting in a
 *    loop ends with a nonzero return and SHMEM_TEAM_INVALID, after exactly max-2 teams; after
 *    destroying them, creation works again.
 * 8. Team slots reused by teams of other members: 60 rounds of split, collectives with data
 *    checks (sum reduction, fcollect, broadcast, alltoall), destroy.
 * 9. team_sync on two overlapping teams used alternately, with a data check proving each sync
 *    orders the puts (quiet) before it.
 */
#include "../coll_test.h"

#define NAME "coll_teams"
#define SYNC_ITERS 200
#define LIMIT_TRIES 200

static int me, npes;

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

/* Check team against its definition: `size` PEs start, start+stride, ... of the world. */
static void check_team(const char *what, shmem_team_t team, int start, int stride, int size)
{
    int mine = -1;
    for (int i = 0; i < size; i++) {
        if (start + i * stride == me) {
            mine = i;
        }
    }
    if (mine < 0) {
        t_check(team == SHMEM_TEAM_INVALID, "%s: non-member got a valid team", what);
        return;
    }
    if (!t_check(team != SHMEM_TEAM_INVALID, "%s: member got SHMEM_TEAM_INVALID", what)) {
        return;
    }
    t_check(shmem_team_my_pe(team) == mine, "%s: my_pe %d, want %d", what,
            shmem_team_my_pe(team), mine);
    t_check(shmem_team_n_pes(team) == size, "%s: n_pes %d, want %d", what,
            shmem_team_n_pes(team), size);
    for (int i = 0; i < size; i++) {
        int w = shmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD);
        t_check(w == start + i * stride, "%s: translate(team %d -> world) = %d, want %d", what, i,
                w, start + i * stride);
    }
    for (int w = 0; w < npes; w++) {
        int want = -1;
        if ((w - start) % stride == 0 && (w - start) / stride >= 0 &&
            (w - start) / stride < size) {
            want = (w - start) / stride;
        }
        int got = shmem_team_translate_pe(SHMEM_TEAM_WORLD, w, team);
        t_check(got == want, "%s: translate(world %d -> team) = %d, want %d", what, w, got, want);
    }
    t_check(shmem_team_translate_pe(team, size, SHMEM_TEAM_WORLD) == -1,
            "%s: translate of team PE %d (out of range) = %d, want -1", what, size,
            shmem_team_translate_pe(team, size, SHMEM_TEAM_WORLD));
}

static void predefined(void)
{
    t_check(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me, "world my_pe %d, want %d",
            shmem_team_my_pe(SHMEM_TEAM_WORLD), me);
    t_check(shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes, "world n_pes %d, want %d",
            shmem_team_n_pes(SHMEM_TEAM_WORLD), npes);
    check_team("world", SHMEM_TEAM_WORLD, 0, 1, npes);
    int node_start, node_size;
    ct_my_node(&node_start, &node_size);
    check_team("shared", SHMEM_TEAM_SHARED, node_start, 1, node_size);
    for (int i = 0; i < node_size; i++) {
        int s = shmem_team_translate_pe(SHMEM_TEAM_SHARED, i, SHMEM_TEAM_WORLD);
        t_check(s == node_start + i, "translate(shared %d -> world) = %d", i, s);
    }
    t_check(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1, "my_pe(INVALID) = %d, want -1",
            shmem_team_my_pe(SHMEM_TEAM_INVALID));
    t_check(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "n_pes(INVALID) = %d, want -1",
            shmem_team_n_pes(SHMEM_TEAM_INVALID));
    t_check(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD) == -1,
            "translate from INVALID = %d, want -1",
            shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD));
    t_check(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID) == -1,
            "translate to INVALID = %d, want -1",
            shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID));
    t_check(shmem_team_translate_pe(SHMEM_TEAM_WORLD, -1, SHMEM_TEAM_WORLD) == -1,
            "translate of world PE -1 = %d, want -1",
            shmem_team_translate_pe(SHMEM_TEAM_WORLD, -1, SHMEM_TEAM_WORLD));
    shmem_team_config_t conf = {.num_contexts = 5};
    t_check(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &conf) != 0,
            "get_config(INVALID) returned 0");
    t_check(shmem_team_translate_pe(SHMEM_TEAM_WORLD, npes, SHMEM_TEAM_WORLD) == -1,
            "translate of world PE %d (out of range) = %d, want -1", npes,
            shmem_team_translate_pe(SHMEM_TEAM_WORLD, npes, SHMEM_TEAM_WORLD));
    t_check(shmem_team_sync(SHMEM_TEAM_WORLD) == 0, "team_sync(world) != 0");
    t_check(shmem_team_sync(SHMEM_TEAM_SHARED) == 0, "team_sync(shared) != 0");
}

/* Split, check, optionally sync, destroy. */
static void split_one(int start, int stride, int size)
{
    char what[96];
    snprintf(what, sizeof(what), "split_strided(world, %d, %d, %d)", start, stride, size);
    shmem_team_t t = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &t);
    if (!t_check(rc == 0, "%s returned %d", what, rc)) {
        return;
    }
    check_team(what, t, start, stride, size);
    if (t != SHMEM_TEAM_INVALID) {
        t_check(shmem_team_sync(t) == 0, "%s: team_sync != 0", what);
        shmem_team_destroy(t);
    }
}

static void bad_split(const char *why, shmem_team_t parent, int start, int stride, int size)
{
    shmem_team_t t = SHMEM_TEAM_WORLD; /* must be overwritten */
    int rc = shmem_team_split_strided(parent, start, stride, size, NULL, 0, &t);
    t_check(rc != 0, "split_strided with %s (%d, %d, %d) returned 0", why, start, stride, size);
    t_check(t == SHMEM_TEAM_INVALID, "split_strided with %s: new team not SHMEM_TEAM_INVALID",
            why);
    if (rc == 0 && t != SHMEM_TEAM_INVALID && t != SHMEM_TEAM_WORLD) {
        shmem_team_destroy(t);
    }
}

static void strided(void)
{
    split_one(0, 1, npes);
    split_one(0, 2, ceil_div(npes, 2));
    if (npes >= 2) {
        split_one(1, 1, npes - 1);
        split_one(1, 2, npes / 2);
        split_one(npes - 1, 1, 1);
    }
    if (npes >= 3) {
        split_one(0, npes - 1, 2);
    }
    split_one(0, 1, 1);

    /* A split of a split: the evens' tail (world PEs 2, 4, ...). */
    shmem_team_t ev = SHMEM_TEAM_INVALID, sub = SHMEM_TEAM_INVALID;
    int ne = ceil_div(npes, 2);
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, ne, NULL, 0, &ev);
    t_check(rc == 0, "split evens returned %d", rc);
    if (ev != SHMEM_TEAM_INVALID && ne >= 2) {
        rc = shmem_team_split_strided(ev, 1, 1, ne - 1, NULL, 0, &sub);
        t_check(rc == 0, "split of evens returned %d", rc);
        check_team("evens' tail", sub, 2, 2, ne - 1);
        if (sub != SHMEM_TEAM_INVALID) {
            /* translate between the child and its parent */
            int sme = shmem_team_my_pe(sub);
            int pe = shmem_team_translate_pe(sub, sme, ev);
            t_check(pe == sme + 1, "translate(sub %d -> evens) = %d, want %d", sme, pe, sme + 1);
            pe = shmem_team_translate_pe(ev, 0, sub);
            t_check(pe == -1, "translate(evens 0 -> sub) = %d, want -1", pe);
            shmem_team_destroy(sub);
        }
    }
    if (ev != SHMEM_TEAM_INVALID) {
        shmem_team_destroy(ev);
    }

    /* Bad arguments: every PE passes the same, and every PE must see the failure. */
    bad_split("start out of range", SHMEM_TEAM_WORLD, npes, 1, 1);
    bad_split("negative start", SHMEM_TEAM_WORLD, -1, 1, 1);
    bad_split("size past the parent", SHMEM_TEAM_WORLD, 0, 1, npes + 1);
    bad_split("stride past the parent", SHMEM_TEAM_WORLD, 0, 2, npes + 1);
    bad_split("an invalid parent", SHMEM_TEAM_INVALID, 0, 1, 1);
    shmem_barrier_all();
}

/* split_2d with xrange: check both axes against the definition. */
static void two_d(int xrange)
{
    shmem_team_t x = SHMEM_TEAM_INVALID, y = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, xrange, NULL, 0, &x, NULL, 0, &y);
    if (!t_check(rc == 0, "split_2d(world, %d) returned %d", xrange, rc)) {
        return;
    }
    int row = me / xrange, col = me % xrange;
    int xsize = npes - row * xrange < xrange ? npes - row * xrange : xrange;
    int ysize = ceil_div(npes - col, xrange);
    char what[64];
    snprintf(what, sizeof(what), "split_2d(%d) x-team of row %d", xrange, row);
    check_team(what, x, row * xrange, 1, xsize);
    snprintf(what, sizeof(what), "split_2d(%d) y-team of column %d", xrange, col);
    check_team(what, y, col, xrange, ysize);
    if (x != SHMEM_TEAM_INVALID && y != SHMEM_TEAM_INVALID) {
        /* x <-> y: my own number translates; a row neighbour is in no column of mine. */
        int py = shmem_team_translate_pe(x, col, y);
        t_check(py == row, "split_2d(%d): translate(x %d -> y) = %d, want %d", xrange, col, py,
                row);
        if (xsize > 1) {
            int other = (col + 1) % xsize;
            py = shmem_team_translate_pe(x, other, y);
            t_check(py == -1, "split_2d(%d): translate(x %d -> y) = %d, want -1", xrange, other,
                    py);
        }
        t_check(shmem_team_sync(x) == 0 && shmem_team_sync(y) == 0, "split_2d team_sync");
    }
    if (x != SHMEM_TEAM_INVALID) {
        shmem_team_destroy(x);
    }
    if (y != SHMEM_TEAM_INVALID) {
        shmem_team_destroy(y);
    }
}

static void config_and_ctx(void)
{
    shmem_team_config_t conf = {.num_contexts = 3};
    shmem_team_t ev = SHMEM_TEAM_INVALID;
    int ne = ceil_div(npes, 2);
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, ne, &conf, SHMEM_TEAM_NUM_CONTEXTS,
                                      &ev);
    t_check(rc == 0, "split evens with a config returned %d", rc);

    shmem_team_config_t got = {.num_contexts = -7};
    rc = shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &got);
    t_check(rc == 0, "get_config(world) returned %d", rc);
    t_check(got.num_contexts >= 0, "get_config(world): num_contexts %d", got.num_contexts);

    shmem_ctx_t c = SHMEM_CTX_INVALID;
    shmem_team_t back = SHMEM_TEAM_INVALID;
    rc = shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &back);
    t_check(rc == 0 && back == SHMEM_TEAM_WORLD, "ctx_get_team(default): rc %d", rc);

    rc = shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &c);
    t_check(rc != 0, "team_create_ctx(INVALID) returned 0");

    static long box[64];
    memset(box, 0, sizeof(box));
    shmem_barrier_all();
    if (ev != SHMEM_TEAM_INVALID) {
        got.num_contexts = -7;
        rc = shmem_team_get_config(ev, SHMEM_TEAM_NUM_CONTEXTS, &got);
        t_check(rc == 0 && got.num_contexts == 3, "get_config(evens): rc %d, num_contexts %d",
                rc, got.num_contexts);

        c = SHMEM_CTX_INVALID;
        rc = shmem_team_create_ctx(ev, 0, &c);
        if (t_check(rc == 0 && c != SHMEM_CTX_INVALID, "team_create_ctx(evens) returned %d",
                    rc)) {
            back = SHMEM_TEAM_INVALID;
            rc = shmem_ctx_get_team(c, &back);
            t_check(rc == 0 && back == ev, "ctx_get_team of a team context: rc %d, team %p/%p",
                    rc, (void *)back, (void *)ev);
            /* The context's PE numbers are team numbers: put to every team PE k, which is
             * world PE 2k. */
            int tme = shmem_team_my_pe(ev);
            for (int k = 0; k < ne; k++) {
                shmem_ctx_long_p(c, &box[tme], 1000 + tme * 10 + k, k);
            }
            shmem_ctx_quiet(c);
            shmem_team_sync(ev);
            for (int k = 0; k < ne; k++) {
                t_check(box[k] == 1000 + k * 10 + tme,
                        "team context put: box[%d] on team PE %d (world %d) = %ld, want %d", k,
                        tme, me, box[k], 1000 + k * 10 + tme);
            }
            /* A get on the context reads team PE numbers too. */
            int peer = (tme + 1) % ne;
            long v = shmem_ctx_long_g(c, &box[peer], peer);
            t_check(v == 1000 + peer * 10 + peer, "team context get from team PE %d = %ld", peer,
                    v);
            shmem_team_sync(ev);
            shmem_ctx_destroy(c);
        }
    }
    shmem_barrier_all();
    /* Odd PEs got no evens team and no word of it: nothing landed in their box. */
    if (me % 2 == 1) {
        for (int k = 0; k < 64; k++) {
            t_check(box[k] == 0, "team context put reached world PE %d (odd): box[%d] = %ld", me,
                    k, box[k]);
        }
    }
    if (ev != SHMEM_TEAM_INVALID) {
        shmem_team_destroy(ev);
    }
}

static void team_ptr(void)
{
    static long cell;
    cell = 77 + me;
    shmem_barrier_all();
    void *p = shmem_team_ptr(SHMEM_TEAM_WORLD, &cell, me);
    t_check(p == (void *)&cell, "team_ptr(world, &cell, me) = %p, want %p", p, (void *)&cell);
    p = shmem_team_ptr(SHMEM_TEAM_SHARED, &cell, shmem_team_my_pe(SHMEM_TEAM_SHARED));
    t_check(p == (void *)&cell, "team_ptr(shared, &cell, my shared PE) = %p, want %p", p,
            (void *)&cell);
    for (int pe = 0; pe < npes; pe++) {
        long *q = shmem_team_ptr(SHMEM_TEAM_WORLD, &cell, pe);
        if (q != NULL) {
            t_check(*q == 77 + pe, "team_ptr(world, &cell, %d) reads %ld, want %d", pe, *q,
                    77 + pe);
        }
    }
    shmem_team_t ev = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, ceil_div(npes, 2), NULL, 0, &ev);
    if (ev != SHMEM_TEAM_INVALID) {
        int tme = shmem_team_my_pe(ev);
        p = shmem_team_ptr(ev, &cell, tme);
        t_check(p == (void *)&cell, "team_ptr(evens, &cell, %d) = %p, want %p", tme, p,
                (void *)&cell);
        for (int k = 0; k < shmem_team_n_pes(ev); k++) {
            long *q = shmem_team_ptr(ev, &cell, k);
            if (q != NULL) {
                t_check(*q == 77 + 2 * k, "team_ptr(evens, &cell, %d) reads %ld, want %d", k, *q,
                        77 + 2 * k);
            }
        }
        shmem_team_destroy(ev);
    }
    shmem_barrier_all();
}

static void limit(void)
{
    static shmem_team_t made[LIMIT_TRIES];
    int max = 32;
    const char *env = getenv("FABSHMEM_MAX_TEAMS");
    if (env != NULL) {
        max = atoi(env);
    }
    int n = 0, rc = 0;
    for (n = 0; n < LIMIT_TRIES; n++) {
        made[n] = SHMEM_TEAM_WORLD;
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &made[n]);
        if (rc != 0) {
            break;
        }
        if (!t_check(made[n] != SHMEM_TEAM_INVALID, "limit: split %d returned 0 but INVALID", n)) {
            break;
        }
    }
    t_check(rc != 0, "limit: %d splits all succeeded", LIMIT_TRIES);
    if (n < LIMIT_TRIES) {
        t_check(made[n] == SHMEM_TEAM_INVALID, "limit: failed split gave a valid team");
    }
    t_check(n == max - 2, "limit: %d teams created before failure, want %d (max %d minus world "
                          "and shared)", n, max - 2, max);
    /* The teams made are usable. */
    for (int i = 0; i < n; i += 7) {
        t_check(shmem_team_sync(made[i]) == 0, "limit: team_sync of team %d", i);
        t_check(shmem_team_my_pe(made[i]) == me, "limit: my_pe of team %d", i);
    }
    for (int i = n - 1; i >= 0; i--) {
        shmem_team_destroy(made[i]);
    }
    /* Creation works again, as often as before. */
    int again = 0;
    for (again = 0; again < n; again++) {
        made[again] = SHMEM_TEAM_INVALID;
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &made[again]);
        if (rc != 0 || made[again] == SHMEM_TEAM_INVALID) {
            break;
        }
    }
    t_check(again == n, "limit: after destroying, only %d of %d teams could be created again",
            again, n);
    for (int i = again - 1; i >= 0; i--) {
        shmem_team_destroy(made[i]);
    }
    shmem_barrier_all();
}

/* Team slots are reused with other members: 60 rounds of split (start, stride and size varying),
 * collectives with a data check (sum reduction, fcollect, broadcast, alltoall), destroy. Stale
 * arrival counts or scratch of an earlier team on the same slot would show as wrong data or a
 * hang. */
static void reuse(void)
{
    static long src[8], dst[8 * 64], big[8 * 64];
    for (int round = 0; round < 60; round++) {
        int stride = npes >= 3 && round % 3 == 2 ? 2 : 1;
        int start = round % npes;
        if (start + stride > npes - 1) {
            start = round % 2 == 0 ? 0 : npes - 1;
        }
        int size = (npes - 1 - start) / stride + 1;
        if (round % 4 == 1 && size > 1) {
            size--;
        }
        shmem_team_t t = SHMEM_TEAM_INVALID;
        int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &t);
        t_check(rc == 0, "reuse round %d: split(%d, %d, %d) returned %d", round, start, stride,
                size, rc);
        if (t != SHMEM_TEAM_INVALID && size <= 64) {
            int tme = shmem_team_my_pe(t);
            for (int k = 0; k < 8; k++) {
                src[k] = (long)round * 1000 + me * 10 + k;
            }
            rc = shmem_long_sum_reduce(t, dst, src, 8);
            for (int k = 0; k < 8; k++) {
                long want = 0;
                for (int i = 0; i < size; i++) {
                    want += (long)round * 1000 + (start + i * stride) * 10 + k;
                }
                t_check(rc == 0 && dst[k] == want,
                        "reuse round %d (team %d,%d,%d): sum_reduce[%d] = %ld, want %ld (rc %d)",
                        round, start, stride, size, k, dst[k], want, rc);
            }
            rc = shmem_long_fcollect(t, big, src, 8);
            for (int i = 0; i < size; i++) {
                for (int k = 0; k < 8; k++) {
                    long want = (long)round * 1000 + (start + i * stride) * 10 + k;
                    t_check(rc == 0 && big[i * 8 + k] == want,
                            "reuse round %d (team %d,%d,%d): fcollect block %d [%d] = %ld, want "
                            "%ld (rc %d)",
                            round, start, stride, size, i, k, big[i * 8 + k], want, rc);
                }
            }
            int root = round % size;
            rc = shmem_long_broadcast(t, dst, src, 8, root);
            for (int k = 0; k < 8; k++) {
                long want = (long)round * 1000 + (start + root * stride) * 10 + k;
                t_check(rc == 0 && dst[k] == want,
                        "reuse round %d (team %d,%d,%d): broadcast from %d [%d] = %ld, want %ld",
                        round, start, stride, size, root, k, dst[k], want);
            }
            /* The next call writes dst and big: everyone must be done reading them. */
            shmem_team_sync(t);
            for (int i = 0; i < size; i++) {
                big[i] = (long)round * 1000 + me * 10 + i; /* the block for team PE i */
            }
            rc = shmem_long_alltoall(t, dst, big, 1);
            for (int i = 0; i < size; i++) {
                long want = (long)round * 1000 + (start + i * stride) * 10 + tme;
                t_check(rc == 0 && dst[i] == want,
                        "reuse round %d (team %d,%d,%d): alltoall from %d = %ld, want %ld", round,
                        start, stride, size, i, dst[i], want);
            }
            shmem_team_sync(t);
            shmem_team_destroy(t);
        }
    }
    shmem_barrier_all();
}

/* Overlapping teams A = PEs 0..n-2 and B = PEs 1..n-1 (both the world when npes <= 2 would
 * leave them empty or disjoint), synced alternately. Each round a member puts the round number
 * to its right neighbour in the team, quiets, syncs, and checks what its left neighbour put. */
static void overlapping(void)
{
    static long slot[2][2];
    int sz = npes >= 3 ? npes - 1 : npes;
    int start_b = npes >= 3 ? 1 : 0;
    shmem_team_t ab[2] = {SHMEM_TEAM_INVALID, SHMEM_TEAM_INVALID};
    int rc0 = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, sz, NULL, 0, &ab[0]);
    int rc1 = shmem_team_split_strided(SHMEM_TEAM_WORLD, start_b, 1, sz, NULL, 0, &ab[1]);
    t_check(rc0 == 0 && rc1 == 0, "overlapping splits returned %d, %d", rc0, rc1);
    int starts[2] = {0, start_b};
    for (int it = 0; it < SYNC_ITERS; it++) {
        for (int w = 0; w < 2; w++) {
            shmem_team_t t = ab[w];
            if (t == SHMEM_TEAM_INVALID) {
                continue;
            }
            int tme = me - starts[w];
            int right = starts[w] + (tme + 1) % sz;
            int left = (tme + sz - 1) % sz;
            long v = (long)it * 100 + w * 10 + tme;
            shmem_long_p(&slot[w][it % 2], v, right);
            shmem_quiet();
            int rc = shmem_team_sync(t);
            long want = (long)it * 100 + w * 10 + left;
            t_check(rc == 0 && slot[w][it % 2] == want,
                    "overlapping team %c round %d: rc %d, slot from team PE %d = %ld, want %ld",
                    'A' + w, it, rc, left, slot[w][it % 2], want);
        }
    }
    shmem_barrier_all();
    for (int w = 0; w < 2; w++) {
        if (ab[w] != SHMEM_TEAM_INVALID) {
            shmem_team_destroy(ab[w]);
        }
    }
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();

    predefined();
    strided();
    for (int xr = 1; xr <= 3; xr++) {
        two_d(xr);
    }
    config_and_ctx();
    team_ptr();
    limit();
    reuse();
    overlapping();

    shmem_barrier_all();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
