/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_alltoall: shmem_alltoallmem, the typed shmem_<T>_alltoall (every standard RMA type,
 * long double included), shmem_alltoallsmem and shmem_<T>_alltoalls with strides other than 1,
 * and the deprecated active-set shmem_alltoall32/64 and shmem_alltoalls32/64.
 *
 * Teams: world, shared, tail (PEs 1..n-1, odd size with 4 PEs), evens (stride 2). Block sizes
 * 0, 1, 7, 4096 bytes and 1.5 MiB (+5, unaligned; world and tail only). Calls run back to back
 * with no barrier, alternating between two dest buffers and checking each result right after
 * its call (the spec's readiness rule allows it); 100 calls for the small sizes. Calls on the
 * world, tail and evens teams also run interleaved, 100 rounds without any barrier.
 *
 * Every byte of every block is checked: the block PE i sends to PE k holds the pattern of
 * (i, k, case, iteration) (coll_test.h), so a stale, misplaced or misrouted byte shows, and the
 * message names sender, receiver, offset, expected and got. Space past the result and the holes
 * of strided results must keep the sentinel. pSync arrays must be unchanged.
 */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "../coll_test.h"

#define NAME "coll_alltoall"
#define BIG (3 * 512 * 1024 + 5)
#define MARGIN 64
#define TYPED_MAX 300 /* elements per block in the typed cases */
#define TYPED_BYTES (TYPED_MAX * 16 * 3)

static int me, npes;
static uint8_t *src, *dst[2]; /* npes * BIG + MARGIN bytes each */
static uint8_t *tsrc, *tdst[2]; /* npes * TYPED_BYTES + MARGIN bytes each */
static long psync[SHMEM_ALLTOALL_SYNC_SIZE];

static uint64_t salt_of(int kase, int team, int it)
{
    return ((uint64_t)kase << 40) ^ ((uint64_t)team << 32) ^ (uint64_t)it;
}

/* ------------------------------------------------------------------ alltoallmem */
static void mem_case(int ti, size_t nb, int iters)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    int n = t->size;
    for (int it = 0; it < iters; it++) {
        uint8_t *d = dst[it % 2];
        uint64_t salt = salt_of(1, ti, it) ^ nb << 20;
        for (int k = 0; k < n; k++) {
            t_fill(src + (size_t)k * nb, nb, ct_key(me, t->world[k]), salt);
        }
        int rc = shmem_alltoallmem(t->team, d, src, nb);
        t_check(rc == 0, "alltoallmem(%s, %zu bytes) returned %d", t->name, nb, rc);
        ct_slow_reader(t, it);
        for (int i = 0; i < n; i++) {
            t_verify(d + (size_t)i * nb, nb, ct_key(t->world[i], me), salt,
                     "alltoallmem(%s, %zu bytes) call %d: block from PE %d to PE %d", t->name, nb,
                     it, t->world[i], me);
        }
        ct_verify_fill(d + (size_t)n * nb, MARGIN, CT_SENTINEL,
                       "alltoallmem(%s, %zu bytes) call %d: past the result", t->name, nb, it);
        /* This buffer is next used two calls later: make it ready now. */
        memset(d, CT_SENTINEL, (size_t)n * nb + MARGIN);
    }
}

/* Calls on different teams interleaved with no barrier: each round every PE runs one
 * alltoallmem on each team it belongs to (world, tail, evens, in that order), each team with
 * its own pair of dest buffers (ibuf[team][parity]). */
#define INTER_BYTES 13
#define INTER_ROUNDS 100
static uint8_t *ibuf[CT_MAX_TEAMS][2];

static void interleaved(void)
{
    for (int it = 0; it < INTER_ROUNDS; it++) {
        for (int ti = 0; ti < ct_nteams; ti++) {
            struct ct_team *t = &ct_teams[ti];
            if (t->me < 0 || ti == 1) {
                continue; /* shared is the world again */
            }
            uint8_t *d = ibuf[ti][it % 2];
            uint64_t salt = salt_of(7, ti, it);
            for (int k = 0; k < t->size; k++) {
                t_fill(src + (size_t)k * INTER_BYTES, INTER_BYTES, ct_key(me, t->world[k]), salt);
            }
            int rc = shmem_alltoallmem(t->team, d, src, INTER_BYTES);
            t_check(rc == 0, "interleaved alltoallmem(%s) returned %d", t->name, rc);
            ct_slow_reader(t, it);
            for (int i = 0; i < t->size; i++) {
                t_verify(d + (size_t)i * INTER_BYTES, INTER_BYTES, ct_key(t->world[i], me), salt,
                         "interleaved alltoallmem(%s) round %d: block from PE %d to PE %d",
                         t->name, it, t->world[i], me);
            }
            memset(d, CT_SENTINEL, (size_t)t->size * INTER_BYTES);
        }
    }
}

/* ------------------------------------------------------------------ alltoallsmem */
static void mems_case(int ti, ptrdiff_t ds, ptrdiff_t ss, size_t ne, int iters)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    int n = t->size;
    size_t span_s = ((size_t)n * ne) * (size_t)ss, span_d = ((size_t)n * ne) * (size_t)ds;
    for (int it = 0; it < iters; it++) {
        uint8_t *d = dst[it % 2];
        uint64_t salt = salt_of(2, ti, it) ^ ne << 20;
        memset(src, 0x5a, span_s);
        for (int k = 0; k < n; k++) {
            for (size_t j = 0; j < ne; j++) {
                src[((size_t)k * ne + j) * (size_t)ss] = t_byte(ct_key(me, t->world[k]), salt, j);
            }
        }
        int rc = shmem_alltoallsmem(t->team, d, src, ds, ss, ne);
        t_check(rc == 0, "alltoallsmem(%s, dst %td, sst %td, %zu) returned %d", t->name, ds, ss,
                ne, rc);
        size_t bad = 0;
        for (int i = 0; i < n && bad == 0; i++) {
            for (size_t j = 0; j < ne; j++) {
                size_t at = ((size_t)i * ne + j) * (size_t)ds;
                uint8_t want = t_byte(ct_key(t->world[i], me), salt, j);
                if (!t_check(d[at] == want,
                             "alltoallsmem(%s, dst %td, sst %td, %zu) call %d: element %zu from "
                             "PE %d to PE %d: got 0x%02x, want 0x%02x",
                             t->name, ds, ss, ne, it, j, t->world[i], me, d[at], want)) {
                    bad++;
                    break;
                }
            }
        }
        for (size_t x = 0; x < span_d + MARGIN; x++) {
            if (x < span_d && x % (size_t)ds == 0) {
                continue;
            }
            if (!t_check(d[x] == CT_SENTINEL,
                         "alltoallsmem(%s, dst %td, sst %td, %zu) call %d: hole byte %zu "
                         "overwritten (0x%02x)",
                         t->name, ds, ss, ne, it, x, d[x])) {
                break;
            }
        }
        memset(d, CT_SENTINEL, span_d + MARGIN);
    }
}

/* ------------------------------------------------------------------ typed forms */
/* One typed alltoall (stride 1) and one typed alltoalls (dst 2, sst 3) of ne elements per
 * block; dest holes must keep the sentinel. */
#define DEF_TYPED(T, N, K)                                                                         \
    static void typed_##N(struct ct_team *t, int ti, size_t ne, int call)                          \
    {                                                                                              \
        int n = t->size;                                                                           \
        for (int strided = 0; strided < 2; strided++) {                                            \
            size_t ds = strided ? 2 : 1, ss = strided ? 3 : 1;                                     \
            T *s = (T *)tsrc, *d = (T *)tdst[strided];                                             \
            uint64_t salt = salt_of(3 + strided, ti, call) ^ ne << 20;                             \
            for (int k = 0; k < n; k++) {                                                          \
                for (size_t j = 0; j < ne; j++) {                                                  \
                    s[((size_t)k * ne + j) * ss] = CT_VAL(K, T, me, t->world[k], salt, j);         \
                }                                                                                  \
            }                                                                                      \
            int rc = strided ? shmem_##N##_alltoalls(t->team, d, s, (ptrdiff_t)ds,                 \
                                                     (ptrdiff_t)ss, ne)                            \
                             : shmem_##N##_alltoall(t->team, d, s, ne);                            \
            t_check(rc == 0, "%s_alltoall%s(%s, %zu) returned %d", #N, strided ? "s" : "",         \
                    t->name, ne, rc);                                                              \
            for (int i = 0; i < n; i++) {                                                          \
                for (size_t j = 0; j < ne; j++) {                                                  \
                    T want = CT_VAL(K, T, t->world[i], me, salt, j);                               \
                    T got = d[((size_t)i * ne + j) * ds];                                          \
                    if (!t_check(got == want,                                                      \
                                 "%s_alltoall%s(%s, %zu) call %d: element %zu from PE %d to PE "   \
                                 "%d: got %Lg, want %Lg",                                          \
                                 #N, strided ? "s" : "", t->name, ne, call, j, t->world[i], me,    \
                                 (long double)got, (long double)want)) {                           \
                        i = n;                                                                     \
                        break;                                                                     \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
            size_t span = (size_t)n * ne * ds * sizeof(T);                                         \
            uint8_t *db = (uint8_t *)d;                                                            \
            for (size_t x = 0; x < span + MARGIN; x++) {                                           \
                if (x < span && (x / sizeof(T)) % ds == 0) {                                       \
                    continue;                                                                      \
                }                                                                                  \
                if (!t_check(db[x] == CT_SENTINEL,                                                 \
                             "%s_alltoall%s(%s, %zu) call %d: hole byte %zu overwritten",          \
                             #N, strided ? "s" : "", t->name, ne, call, x)) {                      \
                    break;                                                                         \
                }                                                                                  \
            }                                                                                      \
            memset(d, CT_SENTINEL, span + MARGIN);                                                 \
        }                                                                                          \
    }
CT_RMA_TYPES(DEF_TYPED)

#define CALL_TYPED(T, N, K) typed_##N(t, ti, ne, call++);

static void typed_case(int ti, size_t ne)
{
    struct ct_team *t = &ct_teams[ti];
    if (t->me < 0) {
        return;
    }
    int call = 0;
    /* Calls alternate between tdst[0] (alltoall) and tdst[1] (alltoalls). */
    CT_RMA_TYPES(CALL_TYPED)

    /* The C11 generic selection reaches the same routine. */
    double *s = (double *)tsrc, *d = (double *)tdst[0];
    for (int k = 0; k < t->size; k++) {
        for (size_t j = 0; j < ne; j++) {
            s[(size_t)k * ne + j] = CT_VAL(FLT, double, me, t->world[k], 99, j);
        }
    }
    int rc = shmem_alltoall(t->team, d, s, ne);
    t_check(rc == 0, "generic shmem_alltoall(double) returned %d", rc);
    for (int i = 0; i < t->size; i++) {
        for (size_t j = 0; j < ne; j++) {
            double want = CT_VAL(FLT, double, t->world[i], me, 99, j);
            if (!t_check(d[(size_t)i * ne + j] == want,
                         "generic alltoall(%s): element %zu from PE %d: got %g, want %g", t->name,
                         j, t->world[i], d[(size_t)i * ne + j], want)) {
                break;
            }
        }
    }
    memset(d, CT_SENTINEL, (size_t)t->size * ne * sizeof(double) + MARGIN);
}

/* ------------------------------------------------------------------ deprecated active sets */
static void aset_case(int start, int logs, int size, int bits, size_t ne, int strided)
{
    int stride = 1 << logs, idx = (me - start) / stride;
    int member = me >= start && (me - start) % stride == 0 && idx < size;
    size_t es = (size_t)bits / 8;
    ptrdiff_t ds = strided ? 3 : 1, ss = strided ? 2 : 1;
    uint64_t salt = salt_of(5 + bits, start * 16 + logs, (int)ne) ^ (uint64_t)strided << 30;
    shmem_barrier_all(); /* pSync may be reused only after a barrier */
    if (!member) {
        shmem_barrier_all();
        return;
    }
    size_t span_d = (size_t)size * ne * (size_t)ds * es;
    memset(src, 0x5a, (size_t)size * ne * (size_t)ss * es);
    for (int k = 0; k < size; k++) {
        for (size_t j = 0; j < ne; j++) {
            uint64_t v = t_pattern(ct_key(me, start + k * stride), salt ^ j);
            memcpy(src + ((size_t)k * ne + j) * (size_t)ss * es, &v, es);
        }
    }
    if (bits == 32 && !strided) {
        shmem_alltoall32(dst[0], src, ne, start, logs, size, psync);
    } else if (bits == 64 && !strided) {
        shmem_alltoall64(dst[0], src, ne, start, logs, size, psync);
    } else if (bits == 32) {
        shmem_alltoalls32(dst[0], src, ds, ss, ne, start, logs, size, psync);
    } else {
        shmem_alltoalls64(dst[0], src, ds, ss, ne, start, logs, size, psync);
    }
    for (int i = 0; i < size; i++) {
        for (size_t j = 0; j < ne; j++) {
            uint64_t w = t_pattern(ct_key(start + i * stride, me), salt ^ j), g = 0;
            memcpy(&g, dst[0] + ((size_t)i * ne + j) * (size_t)ds * es, es);
            if (bits == 32) {
                w &= 0xffffffffULL;
            }
            if (!t_check(g == w,
                         "shmem_alltoall%s%d(set %d,%d,%d, %zu): element %zu from PE %d to PE "
                         "%d: got 0x%" PRIx64 ", want 0x%" PRIx64,
                         strided ? "s" : "", bits, start, logs, size, ne, j, start + i * stride,
                         me, g, w)) {
                i = size;
                break;
            }
        }
    }
    for (size_t x = 0; x < span_d + MARGIN; x++) {
        if (x < span_d && (x / es) % (size_t)ds == 0) {
            continue;
        }
        if (!t_check(dst[0][x] == CT_SENTINEL, "shmem_alltoall%s%d: hole byte %zu overwritten",
                     strided ? "s" : "", bits, x)) {
            break;
        }
    }
    memset(dst[0], CT_SENTINEL, span_d + MARGIN);
    shmem_barrier_all();
}

static void deprecated(void)
{
    for (int k = 0; k < SHMEM_ALLTOALL_SYNC_SIZE; k++) {
        psync[k] = SHMEM_SYNC_VALUE;
    }
    const size_t sizes[] = {0, 1, 7, 1000};
    for (int bits = 32; bits <= 64; bits += 32) {
        for (int s = 0; s < 4; s++) {
            for (int strided = 0; strided < 2; strided++) {
                aset_case(0, 0, npes, bits, sizes[s], strided);
                aset_case(0, 1, (npes + 1) / 2, bits, sizes[s], strided);
                if (npes >= 2) {
                    aset_case(1, 0, npes - 1, bits, sizes[s], strided);
                }
            }
        }
    }
    ct_check_psync(psync, SHMEM_ALLTOALL_SYNC_SIZE);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    src = ct_alloc((size_t)npes * BIG + MARGIN);
    dst[0] = ct_alloc((size_t)npes * BIG + MARGIN);
    dst[1] = ct_alloc((size_t)npes * BIG + MARGIN);
    tsrc = ct_alloc((size_t)npes * TYPED_BYTES + MARGIN);
    tdst[0] = ct_alloc((size_t)npes * TYPED_BYTES + MARGIN);
    tdst[1] = ct_alloc((size_t)npes * TYPED_BYTES + MARGIN);
    for (int ti = 0; ti < CT_MAX_TEAMS; ti++) {
        ibuf[ti][0] = ct_alloc((size_t)npes * INTER_BYTES);
        ibuf[ti][1] = ct_alloc((size_t)npes * INTER_BYTES);
    }
    ct_teams_init();
    shmem_barrier_all();
    interleaved();
    shmem_barrier_all();

    /* Between cases on different teams a barrier: the teams share the dest buffers. */
    const struct {
        size_t nb;
        int iters;
    } mem_sizes[] = {{0, 4}, {1, 20}, {7, 100}, {4096, 100}, {BIG, 2}};
    for (int ti = 0; ti < ct_nteams; ti++) {
        for (size_t s = 0; s < sizeof(mem_sizes) / sizeof(mem_sizes[0]); s++) {
            if (mem_sizes[s].nb == BIG && ti != 0 && ti != 2) {
                continue;
            }
            mem_case(ti, mem_sizes[s].nb, mem_sizes[s].iters);
            shmem_barrier_all();
        }
        mems_case(ti, 3, 2, 5, 20);
        shmem_barrier_all();
        mems_case(ti, 2, 5, 1000, 4);
        shmem_barrier_all();
        mems_case(ti, 1, 1, 77, 4);
        shmem_barrier_all();
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
