/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_bcast_collect: shmem_broadcastmem / shmem_<T>_broadcast, shmem_collectmem /
 * shmem_<T>_collect, shmem_fcollectmem / shmem_<T>_fcollect, and the deprecated active-set
 * shmem_broadcast32/64, shmem_collect32/64 and shmem_fcollect32/64.
 *
 * Teams: world, shared, tail (odd size with 4 PEs), evens (stride 2). Calls run back to back
 * with no barrier, alternating two dest buffers, each result checked right after its call.
 *  - broadcast from every root in turn, 0, 1, 7 (100 calls), 4096 bytes and 3 MiB (+3, world
 *    and tail), and 100 calls of 7 bytes from one fixed root (a root never waits for anyone,
 *    and a slow reader, ct_slow_reader, lags behind): every team PE, the root included, ends
 *    with the root's bytes; non-roots hold other bytes in source, so reading the wrong source
 *    shows; nothing past nelems is written. Also in place on the root (dest == source).
 *  - collect with a different nelems on every PE (zeros included, all-zero too), up to 1 MiB:
 *    dest is the concatenation in team order; fcollect with equal nelems.
 *  - typed forms for every standard RMA type (long double included), element values checked.
 *  - deprecated forms on active sets (all, evens, 1..n-1): PE_root is an index in the set and
 *    the root's dest is NOT written (OpenSHMEM 1.4 semantics); pSync unchanged.
 */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "../coll_test.h"

#define NAME "coll_bcast_collect"
#define BIG_B (3 * 1024 * 1024 + 3)
#define BIG_C (1024 * 1024 + 1)
#define MARGIN 64
#define TYPED_MAX 100

static int me, npes;
static uint8_t *src, *dst[2];
static size_t cap;
static long psync[SHMEM_COLLECT_SYNC_SIZE];

static uint64_t salt_of(int kase, int ti, int it, size_t n)
{
    return ((uint64_t)kase << 56) ^ ((uint64_t)ti << 48) ^ ((uint64_t)n << 16) ^ (uint64_t)it;
}

/* ------------------------------------------------------------------ broadcast */
/* Root: every team PE in turn, or team PE 0 throughout (fixed_root). */
static void bcast_case(int ti, size_t nb, int iters, int fixed_root)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    for (int it = 0; it < iters; it++) {
        int root = fixed_root ? 0 : it % t->size;
        uint8_t *d = dst[it % 2];
        uint64_t salt = salt_of(1 + 8 * fixed_root, ti, it, nb);
        if (t->me == root) {
            t_fill(src, nb, ct_key(me, 0), salt);
        } else {
            t_fill(src, nb, ct_key(me, 1), salt); /* a non-root's source is not sent */
        }
        int rc = shmem_broadcastmem(t->team, d, src, nb, root);
        t_check(rc == 0, "broadcastmem(%s, %zu, root %d) returned %d", t->name, nb, root, rc);
        ct_slow_reader(t, it);
        t_verify(d, nb, ct_key(t->world[root], 0), salt,
                 "broadcastmem(%s, %zu bytes) call %d: from root %d (world %d) on PE %d%s",
                 t->name, nb, it, root, t->world[root], me, t->me == root ? " (the root)" : "");
        ct_verify_fill(d + nb, MARGIN, CT_SENTINEL, "broadcastmem(%s, %zu) call %d: past nelems",
                       t->name, nb, it);
        memset(d, CT_SENTINEL, nb + MARGIN);
    }
}

/* The root's dest is its source (in place): the root's data must stay, the others get it. A
 * team_sync between calls: the root writes its own dest before the call. */
static void bcast_inplace(int ti, size_t nb)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    for (int root = 0; root < t->size; root++) {
        uint64_t salt = salt_of(6, ti, root, nb);
        if (t->me == root) {
            t_fill(dst[0], nb, ct_key(me, 0), salt);
        }
        int rc = shmem_broadcastmem(t->team, dst[0], dst[0], nb, root);
        t_check(rc == 0, "broadcastmem(%s, in place on root %d) returned %d", t->name, root, rc);
        t_verify(dst[0], nb, ct_key(t->world[root], 0), salt,
                 "broadcastmem(%s, %zu bytes, in place on root %d) on PE %d", t->name, nb, root,
                 me);
        ct_verify_fill(dst[0] + nb, MARGIN, CT_SENTINEL, "broadcastmem(%s, in place): past nelems",
                       t->name);
        shmem_team_sync(t->team);
        memset(dst[0], CT_SENTINEL, nb + MARGIN);
        shmem_team_sync(t->team);
    }
}

/* ------------------------------------------------------------------ collect / fcollect */
static size_t ccount(int ti, int pe, int it, size_t max)
{
    if (max == 0) {
        return 0;
    }
    uint64_t h = t_pattern(pe + 7, ((uint64_t)ti << 32) ^ (uint64_t)it ^ max << 40);
    if (h % 4 == 0) {
        return 0;
    }
    return (size_t)((h >> 8) % (max + 1));
}

static void collect_case(int ti, size_t max, int iters, int fixed)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    const char *what = fixed ? "fcollectmem" : "collectmem";
    for (int it = 0; it < iters; it++) {
        uint8_t *d = dst[it % 2];
        uint64_t salt = salt_of(2 + fixed, ti, it, max);
        size_t mine = fixed ? max : ccount(ti, t->me, it, max);
        t_fill(src, mine, ct_key(me, 0), salt);
        int rc = fixed ? shmem_fcollectmem(t->team, d, src, mine)
                       : shmem_collectmem(t->team, d, src, mine);
        t_check(rc == 0, "%s(%s, %zu) returned %d", what, t->name, mine, rc);
        ct_slow_reader(t, it);
        size_t pos = 0;
        for (int i = 0; i < t->size; i++) {
            size_t c = fixed ? max : ccount(ti, i, it, max);
            t_verify(d + pos, c, ct_key(t->world[i], 0), salt,
                     "%s(%s) call %d: %zu bytes from PE %d (team %d) at offset %zu on PE %d", what,
                     t->name, it, c, t->world[i], i, pos, me);
            pos += c;
        }
        ct_verify_fill(d + pos, MARGIN, CT_SENTINEL, "%s(%s) call %d: past the %zu bytes", what,
                       t->name, it, pos);
        memset(d, CT_SENTINEL, pos + MARGIN);
    }
}

/* ------------------------------------------------------------------ typed forms */
/* Broadcast from every root, then collect (PE i gives i % 3 * ne / 2 elements) and fcollect;
 * each call on the other dest buffer. */
#define DEF_TYPED(T, N, K)                                                                         \
    static void typed_##N(struct ct_team *t, int ti, size_t ne, int *call)                         \
    {                                                                                              \
        T *s = (T *)src;                                                                           \
        for (int root = 0; root < t->size; root++) {                                               \
            T *d = (T *)dst[(*call)++ % 2];                                                        \
            for (size_t j = 0; j < ne; j++) {                                                      \
                s[j] = CT_VAL(K, T, me, t->me == root ? 0 : 1, *call + 1000 * ti, j);              \
            }                                                                                      \
            int rc = shmem_##N##_broadcast(t->team, d, s, ne, root);                               \
            t_check(rc == 0, "%s_broadcast(%s) returned %d", #N, t->name, rc);                     \
            for (size_t j = 0; j < ne; j++) {                                                      \
                T want = CT_VAL(K, T, t->world[root], 0, *call + 1000 * ti, j);                    \
                if (!t_check(d[j] == want,                                                         \
                             "%s_broadcast(%s, %zu, root %d): element %zu on PE %d: got %Lg, "     \
                             "want %Lg",                                                           \
                             #N, t->name, ne, root, j, me, (long double)d[j],                      \
                             (long double)want)) {                                                 \
                    break;                                                                         \
                }                                                                                  \
            }                                                                                      \
            ct_verify_fill(d + ne, MARGIN, CT_SENTINEL, "%s_broadcast: past nelems", #N);          \
            memset(d, CT_SENTINEL, ne * sizeof(T) + MARGIN);                                       \
        }                                                                                          \
        for (int fixed = 0; fixed < 2; fixed++) {                                                  \
            T *d = (T *)dst[(*call)++ % 2];                                                        \
            size_t mine = fixed ? ne : (size_t)(t->me % 3) * ne / 2;                               \
            for (size_t j = 0; j < mine; j++) {                                                    \
                s[j] = CT_VAL(K, T, me, 0, *call + 1000 * ti, j);                                  \
            }                                                                                      \
            int rc = fixed ? shmem_##N##_fcollect(t->team, d, s, mine)                             \
                           : shmem_##N##_collect(t->team, d, s, mine);                             \
            t_check(rc == 0, "%s_%scollect(%s) returned %d", #N, fixed ? "f" : "", t->name, rc);   \
            size_t pos = 0;                                                                        \
            for (int i = 0; i < t->size; i++) {                                                    \
                size_t c = fixed ? ne : (size_t)(i % 3) * ne / 2;                                  \
                for (size_t j = 0; j < c; j++) {                                                   \
                    T want = CT_VAL(K, T, t->world[i], 0, *call + 1000 * ti, j);                   \
                    if (!t_check(d[pos + j] == want,                                               \
                                 "%s_%scollect(%s, %zu): element %zu from PE %d on PE %d: got "    \
                                 "%Lg, want %Lg",                                                  \
                                 #N, fixed ? "f" : "", t->name, ne, j, t->world[i], me,            \
                                 (long double)d[pos + j], (long double)want)) {                    \
                        break;                                                                     \
                    }                                                                              \
                }                                                                                  \
                pos += c;                                                                          \
            }                                                                                      \
            ct_verify_fill(d + pos, MARGIN, CT_SENTINEL, "%s_%scollect: past the result", #N,      \
                           fixed ? "f" : "");                                                      \
            memset(d, CT_SENTINEL, pos * sizeof(T) + MARGIN);                                      \
        }                                                                                          \
    }
CT_RMA_TYPES(DEF_TYPED)

#define CALL_TYPED(T, N, K) typed_##N(t, ti, ne, &call);

static void typed_case(int ti, size_t ne)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    int call = 0;
    CT_RMA_TYPES(CALL_TYPED)
}

/* ------------------------------------------------------------------ deprecated active sets */
/* kind 0 broadcast, 1 collect, 2 fcollect; ne in elements of bits/8 bytes. */
static void aset_case(int kind, int start, int logs, int size, int bits, size_t ne, int root)
{
    static const char *names[] = {"broadcast", "collect", "fcollect"};
    int stride = 1 << logs, idx = (me - start) / stride;
    int member = me >= start && (me - start) % stride == 0 && idx < size;
    size_t es = (size_t)bits / 8;
    uint64_t salt = salt_of(4 + kind, start * 16 + logs, bits + root, ne);
    shmem_barrier_all(); /* pSync may be reused only after a barrier */
    if (!member) {
        shmem_barrier_all();
        return;
    }
    size_t mine = kind == 1 ? (size_t)(idx % 3) * ne / 2 : ne;
    t_fill(src, mine * es, ct_key(me, 0), salt);
    if (kind == 0 && bits == 32) {
        shmem_broadcast32(dst[0], src, ne, root, start, logs, size, psync);
    } else if (kind == 0) {
        shmem_broadcast64(dst[0], src, ne, root, start, logs, size, psync);
    } else if (kind == 1 && bits == 32) {
        shmem_collect32(dst[0], src, mine, start, logs, size, psync);
    } else if (kind == 1) {
        shmem_collect64(dst[0], src, mine, start, logs, size, psync);
    } else if (bits == 32) {
        shmem_fcollect32(dst[0], src, mine, start, logs, size, psync);
    } else {
        shmem_fcollect64(dst[0], src, mine, start, logs, size, psync);
    }
    size_t pos = 0;
    if (kind == 0) {
        if (idx == root) {
            ct_verify_fill(dst[0], ne * es + MARGIN, CT_SENTINEL,
                           "shmem_broadcast%d(set %d,%d,%d, root %d): the root's dest was "
                           "written",
                           bits, start, logs, size, root);
        } else {
            t_verify(dst[0], ne * es, ct_key(start + root * stride, 0), salt,
                     "shmem_broadcast%d(set %d,%d,%d, %zu, root %d) on PE %d", bits, start, logs,
                     size, ne, root, me);
            pos = ne * es;
        }
    } else {
        for (int i = 0; i < size; i++) {
            size_t c = (kind == 1 ? (size_t)(i % 3) * ne / 2 : ne) * es;
            t_verify(dst[0] + pos, c, ct_key(start + i * stride, 0), salt,
                     "shmem_%s%d(set %d,%d,%d, %zu): block of PE %d at offset %zu on PE %d",
                     names[kind], bits, start, logs, size, ne, start + i * stride, pos, me);
            pos += c;
        }
    }
    ct_verify_fill(dst[0] + pos, MARGIN, CT_SENTINEL, "shmem_%s%d(set %d,%d,%d): past the result",
                   names[kind], bits, start, logs, size);
    memset(dst[0], CT_SENTINEL, pos + MARGIN);
    shmem_barrier_all();
}

static void deprecated(void)
{
    for (int k = 0; k < SHMEM_COLLECT_SYNC_SIZE; k++) {
        psync[k] = SHMEM_SYNC_VALUE;
    }
    const size_t sizes[] = {0, 1, 7, 1000};
    const int sets[3][3] = {{0, 0, npes}, {0, 1, (npes + 1) / 2}, {1, 0, npes - 1}};
    for (int bits = 32; bits <= 64; bits += 32) {
        for (int s = 0; s < 4; s++) {
            for (int a = 0; a < 3; a++) {
                int size = sets[a][2];
                if (size < 1) {
                    continue;
                }
                for (int root = 0; root < size; root++) {
                    aset_case(0, sets[a][0], sets[a][1], size, bits, sizes[s], root);
                }
                aset_case(1, sets[a][0], sets[a][1], size, bits, sizes[s], 0);
                aset_case(2, sets[a][0], sets[a][1], size, bits, sizes[s], 0);
            }
        }
    }
    ct_check_psync(psync, SHMEM_COLLECT_SYNC_SIZE);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    cap = (size_t)npes * BIG_C;
    if (cap < BIG_B) {
        cap = BIG_B;
    }
    cap += MARGIN;
    src = ct_alloc(cap);
    dst[0] = ct_alloc(cap);
    dst[1] = ct_alloc(cap);
    ct_teams_init();
    shmem_barrier_all();

    /* The teams share the dest buffers: a barrier between cases. */
    for (int ti = 0; ti < ct_nteams; ti++) {
        int n = ct_teams[ti].size, big = ti == 0 || ti == 2;
        bcast_case(ti, 0, 4, 0);
        shmem_barrier_all();
        bcast_case(ti, 1, 2 * n, 0);
        shmem_barrier_all();
        bcast_case(ti, 7, 100, 0);
        shmem_barrier_all();
        bcast_case(ti, 7, 100, 1);
        shmem_barrier_all();
        bcast_case(ti, 4096, 4 * n, 0);
        shmem_barrier_all();
        bcast_inplace(ti, 1000);
        shmem_barrier_all();
        if (big) {
            bcast_case(ti, BIG_B, n, 0);
            shmem_barrier_all();
        }
        collect_case(ti, 0, 4, 0);
        shmem_barrier_all();
        collect_case(ti, 10, 100, 0);
        shmem_barrier_all();
        collect_case(ti, 5000, 20, 0);
        shmem_barrier_all();
        if (big) {
            collect_case(ti, BIG_C, 3, 0);
            shmem_barrier_all();
        }
        collect_case(ti, 0, 4, 1);
        shmem_barrier_all();
        collect_case(ti, 1, 20, 1);
        shmem_barrier_all();
        collect_case(ti, 13, 100, 1);
        shmem_barrier_all();
        collect_case(ti, 4096, 20, 1);
        shmem_barrier_all();
        if (big) {
            collect_case(ti, BIG_C, 2, 1);
            shmem_barrier_all();
        }
        typed_case(ti, 1);
        shmem_barrier_all();
        typed_case(ti, TYPED_MAX);
        shmem_barrier_all();
    }
    deprecated();

    ct_teams_fini();
    shmem_barrier_all();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
