/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reduce.c: all-reduce of every type and operation of the spec's reduction tables.
 *
 * Algorithm: recursive doubling, on chunks of the scratch's landing size. With P the largest
 * power of two <= N, the N-P "extra" PEs first fold their chunk into PE (extra - P); the P PEs
 * then exchange partial results with PE (i XOR 2^k) for k = 0 .. log2 P - 1, each reducing
 * what it received into its own; finally each folded-into PE writes the result straight into
 * its extra's dest. That is log2 P + 2 latencies for any N, which is what matters for the
 * small and medium sizes reductions mostly have. From 1 KiB on a team whose PEs all map each
 * other's memory (one node) reduces in place instead (mapped()): a reduce-scatter and all-gather
 * through the mapping between two barriers, each byte loaded and stored once, no chunking.
 *
 * Every PE ends with the bit-identical result: at each step both partners combine the same
 * two operands with a commutative operation (IEEE addition and multiplication, complex ones
 * included, are commutative bit for bit), so PEs never disagree by a rounding.
 *
 * Partner data lands in the team's scratch (notify.c), one buffer per round, double buffered
 * by the step parity; each chunk is one step, of the team's landing size (8 KiB on the world
 * team up to 16 PEs; an arena team leases buffers that size at its first reduction when the
 * arena has room, notify.c). dest accumulates (a copy of source first, so dest == source
 * works), and a PE completes its write of a round before it reduces into the buffer it sent
 * from.
 *
 * Scans (OpenSHMEM 1.6 sum_inscan/sum_exscan) use the same landing buffers and steps. The
 * first 2*rem PEs (rem = N - P) pair up, the lower of each pair handing its chunk to the upper
 * one, so P "virtual" PEs remain in team order (pair j, then PEs 2*rem.., one each). They run
 * the hypercube prefix sum: in round k virtual PE v swaps its block total with v XOR 2^k and,
 * when that partner is below it, adds the partner's total to its exclusive prefix too. Last,
 * each upper PE of a pair hands the pair's exclusive prefix to the lower one. Every PE thus
 * waits for every other's entry, so a scan is a full step as the double buffering needs, and
 * dest is only ever written by its own PE (nothing remote lands there). Exclusive prefixes
 * start at all-zero bytes, the zero of every type: team PE 0's exclusive result (spec).
 *
 * Every write of a reduction or scan carries the call's fingerprint (nreduce, type, operation:
 * notify.h) and every PE compares the one of each block it waited for before using it, so two
 * PEs that passed different nreduce (or operations) name the difference at their first
 * exchange instead of reducing garbage.
 */
#include "coll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "local.h"
#include "mr.h"
#include "notify.h"

typedef void (*kernel_fn)(void *acc, const void *in, size_t n);

/* Each kernel starts on a cache line: its loop's alignment then never depends on how much code
 * precedes it in the library (a 32 KiB long sum moved by 14% when fabric.c grew by 600 bytes). */
#define KERNEL(CTYPE, NAME, OPN, EXPR)                                                           \
    __attribute__((aligned(64))) static void k_##NAME##_##OPN(void *acc, const void *in,         \
                                                              size_t n)                          \
    {                                                                                            \
        CTYPE *a = acc;                                                                          \
        const CTYPE *b = in;                                                                     \
        for (size_t i = 0; i < n; i++) {                                                         \
            CTYPE x = a[i], y = b[i];                                                            \
            a[i] = (CTYPE)(EXPR);                                                                \
        }                                                                                        \
    }
#define KERNEL_ROW(CTYPE, NAME, R, A, E, B, S, RBIT, RMM, RAR, GEN)                              \
    FSH_IF(RBIT, KERNEL(CTYPE, NAME, and, x & y) KERNEL(CTYPE, NAME, or, x | y)                  \
                     KERNEL(CTYPE, NAME, xor, x ^ y))                                            \
    FSH_IF(RMM, KERNEL(CTYPE, NAME, max, x > y ? x : y) KERNEL(CTYPE, NAME, min, x < y ? x : y)) \
    FSH_IF(RAR, KERNEL(CTYPE, NAME, sum, x + y) KERNEL(CTYPE, NAME, prod, x * y))
FSH_TYPE_TABLE(KERNEL_ROW)

static const struct {
    size_t size;
    kernel_fn fn[FSH_RED_NOPS];
} kinds[FSH_RTYPE_COUNT] = {
#define KIND_ROW(CTYPE, NAME, R, A, E, B, S, RBIT, RMM, RAR, GEN)                                \
    [FSH_RTYPE_##NAME] = {sizeof(CTYPE),                                                         \
                          {FSH_IF(RBIT, [FSH_RED_AND] = k_##NAME##_and,                          \
                                  [FSH_RED_OR] = k_##NAME##_or, [FSH_RED_XOR] = k_##NAME##_xor,) \
                           FSH_IF(RMM, [FSH_RED_MAX] = k_##NAME##_max,                           \
                                  [FSH_RED_MIN] = k_##NAME##_min,)                               \
                           FSH_IF(RAR, [FSH_RED_SUM] = k_##NAME##_sum,                           \
                                  [FSH_RED_PROD] = k_##NAME##_prod,)}},
    FSH_TYPE_TABLE(KIND_ROW)
#undef KIND_ROW
};

/* The 1.4 active-set and/or/xor (shmem_<T>_and_to_all) also take the signed types short,
 * int, long and long long, which the 1.5 tables leave out of the bitwise reductions. */
#define DEP_BIT_ROW(CTYPE, NAME)                                                                 \
    KERNEL(CTYPE, NAME##_dep, and, x & y)                                                        \
    KERNEL(CTYPE, NAME##_dep, or, x | y) KERNEL(CTYPE, NAME##_dep, xor, x ^ y)
FSH_DEPRECATED_REDUCE_INT_TYPES(DEP_BIT_ROW)
static const kernel_fn dep_bits[FSH_RTYPE_COUNT][FSH_RED_XOR + 1] = {
#define DEP_BIT_ENTRY(CTYPE, NAME)                                                               \
    [FSH_RTYPE_##NAME] = {k_##NAME##_dep_and, k_##NAME##_dep_or, k_##NAME##_dep_xor},
    FSH_DEPRECATED_REDUCE_INT_TYPES(DEP_BIT_ENTRY)
#undef DEP_BIT_ENTRY
};

static kernel_fn kernel_of(enum fsh_red_type type, enum fsh_red_op op)
{
    if (type >= FSH_RTYPE_COUNT || op >= FSH_RED_NOPS) {
        return NULL;
    }
    if (kinds[type].fn[op]) {
        return kinds[type].fn[op];
    }
    return op <= FSH_RED_XOR ? dep_bits[type][op] : NULL;
}

struct chunk {
    struct fsh_team *t;
    kernel_fn fn;
    char *acc;     /* this chunk of dest */
    size_t count;  /* elements */
    size_t bytes;
    unsigned par;
};

/* Send acc to team PE `peer`'s landing buffer `round`, receive theirs in mine, reduce. */
static int exchange(struct chunk *c, int peer, unsigned round)
{
    struct fsh_team *t = c->t;
    void *land = fsh_notify_red(t, c->par, round);
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    fsh_notify_expect(t, peer, fsh_notify_pieces(c->bytes));
    int rc = fsh_notify_put_fp(&b, peer, FSH_SEG_HEAP, fsh_notify_scratch_off(land), c->acc,
                               c->bytes, t->fp);
    if (rc == 0) {
        rc = fsh_notify_wait(t, peer, "reduction: waiting for a partner");
    }
    if (rc == 0) {
        rc = fsh_notify_fp_check(t, peer, t->fp, true);
    }
    int crc = fsh_notify_complete(&b, "reduction: sending to a partner");
    if (rc == 0 && crc == 0) {
        c->fn(c->acc, land, c->count);
    }
    return rc ? rc : crc;
}

static int one_chunk(struct chunk *c, enum fsh_seg dseg, uint64_t doff)
{
    struct fsh_team *t = c->t;
    int n = t->size, me = t->my_pe, p2 = 1;
    while (p2 * 2 <= n) {
        p2 *= 2;
    }
    int rem = n - p2, rc = 0;
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    if (me >= p2) {
        /* An extra: hand my chunk to my partner, receive the result in dest. */
        int partner = me - p2;
        fsh_notify_expect(t, partner, fsh_notify_pieces(c->bytes));
        rc = fsh_notify_put_fp(&b, partner, FSH_SEG_HEAP,
                               fsh_notify_scratch_off(fsh_notify_red(t, c->par, 0)), c->acc,
                               c->bytes, t->fp);
        int crc = fsh_notify_complete(&b, "reduction: folding into a partner");
        if (rc == 0 && crc == 0) {
            rc = fsh_notify_wait(t, partner, "reduction: waiting for the result");
        }
        if (rc == 0 && crc == 0) {
            rc = fsh_notify_fp_check(t, partner, t->fp, true);
        }
        return rc ? rc : crc;
    }
    if (me < rem) {
        int extra = me + p2;
        fsh_notify_expect(t, extra, fsh_notify_pieces(c->bytes));
        rc = fsh_notify_wait(t, extra, "reduction: waiting for a folded PE");
        if (rc == 0) {
            rc = fsh_notify_fp_check(t, extra, t->fp, true);
        }
        if (rc != 0) {
            return rc;
        }
        c->fn(c->acc, fsh_notify_red(t, c->par, 0), c->count);
    }
    unsigned round = 1;
    for (int dist = 1; dist < p2 && rc == 0; dist *= 2, round++) {
        rc = exchange(c, me ^ dist, round);
    }
    if (rc == 0 && me < rem) {
        rc = fsh_notify_put_fp(&b, me + p2, dseg, doff, c->acc, c->bytes, t->fp);
        int crc = fsh_notify_complete(&b, "reduction: returning the result");
        rc = rc ? rc : crc;
    }
    return rc;
}

/* ------------------------------------------------------------------ mapped */

/* From this many bytes a team whose PEs all map each other's heap (one node) reduces in place
 * through the mapping (mapped() below) instead of exchanging chunks through the scratch. */
#define MAPPED_MIN_BYTES 1024
#define FSH_MAPPED_MAX_PES 64 /* views on the stack; larger teams take the chunked path */

/* Source and dest of every team PE, as this PE addresses them; false when some PE is not
 * mapped here (another node, or FABSHMEM_INTRANODE=fabric) or source is not symmetric. */
static bool mapped_views(struct fsh_team *t, const void *src, enum fsh_seg dseg, uint64_t doff,
                         size_t bytes, char **srcs, char **dsts)
{
    enum fsh_seg sseg;
    uint64_t soff;
    if (dseg == FSH_SEG_DEVICE || fsh_mr_lookup(src, bytes, &sseg, &soff) != 0 ||
        sseg == FSH_SEG_DEVICE) {
        return false;
    }
    for (int i = 0; i < t->size; i++) {
        int pe = fsh_team_world_pe(t, i);
        srcs[i] = fsh_local_addr(pe, sseg, soff);
        dsts[i] = fsh_local_addr(pe, dseg, doff);
        if (!srcs[i] || !dsts[i]) {
            return false;
        }
    }
    return true;
}

/* A barrier that also checks every PE passed the same call: the AND of key in the high half
 * and of ~key in the low half equals both only when every PE's key is the same, and a PE whose
 * key differs in some bit sees it in one half or the other, so all PEs notice. */
static int mapped_sync(struct fsh_team *t, uint32_t key, const char *what)
{
    uint64_t word = ((uint64_t)key << 32) | (uint32_t)~key;
    int rc = fsh_notify_and_word(t, &word);
    if (rc == 0 && word != (((uint64_t)key << 32) | (uint32_t)~key)) {
        rc = fsh_err(-EINVAL, "every PE of the team must call the same collectives in the same order, with the same nelems, PE_root, strides, type and operation",
                     "%s: the team's PEs called the reduction with different arguments", what);
    }
    return rc;
}

/* Reduce-scatter then all-gather through the mapping, one pass over the data: after a barrier
 * (every PE's source is ready and its dest free), team PE r reduces its part of the array,
 * loading that part of every PE's source, and stores the result into that part of every PE's
 * dest; a second barrier and every dest is whole, and no source is read any more. Each element
 * is reduced by one PE only, so every PE ends with the same bits. Where dest is source, the part
 * a PE writes on another PE is one only it reads there, and only before it writes. */
static int mapped(struct fsh_team *t, kernel_fn fn, char *dest, char **srcs, char **dsts,
                  size_t nelems, size_t esize)
{
    uint32_t key = (uint32_t)t->fp | ((uint32_t)(nelems * 31 + esize) << 16);
    int rc = mapped_sync(t, key, "reduction: entering");
    if (rc != 0) {
        return rc;
    }
    int n = t->size, me = t->my_pe;
    size_t line = esize < 64 ? 64 / esize : 1;
    size_t per = ((nelems + (size_t)n - 1) / (size_t)n + line - 1) / line * line;
    size_t lo = per * (size_t)me < nelems ? per * (size_t)me : nelems;
    size_t hi = lo + per < nelems ? lo + per : nelems;
    if (hi > lo) {
        size_t off = lo * esize, len = (hi - lo) * esize;
        char *acc = dest + off;
        if (acc != srcs[me] + off) {
            memmove(acc, srcs[me] + off, len);
        }
        for (int k = 1; k < n; k++) {
            int i = (me + k) % n;
            fn(acc, srcs[i] + off, hi - lo);
        }
        for (int k = 1; k < n; k++) {
            int i = (me + k) % n;
            memcpy(dsts[i] + off, acc, len);
        }
    }
    return mapped_sync(t, key, "reduction: leaving");
}

/* ------------------------------------------------------------------ scans */

struct scan {
    struct fsh_team *t;
    kernel_fn add;
    const char *src; /* this chunk of source */
    char *dst;       /* this chunk of dest (may be src) */
    char *tot, *exc; /* private: my (virtual) block total, my exclusive prefix */
    size_t count, bytes;
    unsigned par;
    bool inclusive;
};

/* dest = exc (+ source when inclusive); exc may be scratch of this step. */
static void scan_result(struct scan *c, char *exc)
{
    if (c->inclusive) {
        c->add(exc, c->src, c->count);
    }
    memmove(c->dst, exc, c->bytes);
}

/* Send len bytes from src to round `round`'s landing buffer of team PE `to`, wait for the
 * block `from` sends to mine, complete my write. */
static int scan_swap(struct scan *c, int to, int from, unsigned round, const void *src,
                     const char *what)
{
    struct fsh_team *t = c->t;
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    int rc = 0;
    if (to >= 0) {
        uint64_t off = fsh_notify_scratch_off(fsh_notify_red(t, c->par, round));
        rc = fsh_notify_put_fp(&b, to, FSH_SEG_HEAP, off, src, c->bytes, t->fp);
    }
    if (from >= 0) {
        fsh_notify_expect(t, from, fsh_notify_pieces(c->bytes));
        if (rc == 0) {
            rc = fsh_notify_wait(t, from, what);
        }
        if (rc == 0) {
            rc = fsh_notify_fp_check(t, from, t->fp, true);
        }
    }
    int crc = fsh_notify_complete(&b, what);
    return rc ? rc : crc;
}

static int scan_chunk(struct scan *c)
{
    struct fsh_team *t = c->t;
    int n = t->size, me = t->my_pe, p2 = 1;
    while (p2 * 2 <= n) {
        p2 *= 2;
    }
    int rem = n - p2, rc;
    char *land0 = 2 * rem > 0 ? fsh_notify_red(t, c->par, 0) : NULL;
    if (me < 2 * rem && me % 2 == 0) {
        /* The lower PE of a pair: my chunk up, the sum of everything below the pair back. */
        rc = scan_swap(c, me + 1, me + 1, 0, c->src, "scan: waiting for the sum below");
        if (rc == 0) {
            scan_result(c, land0);
        }
        return rc;
    }
    memcpy(c->tot, c->src, c->bytes);
    memset(c->exc, 0, c->bytes);
    int v = me < 2 * rem ? me / 2 : me - rem;
    if (me < 2 * rem) {
        rc = scan_swap(c, -1, me - 1, 0, NULL, "scan: waiting for my pair's chunk");
        if (rc != 0) {
            return rc;
        }
        c->add(c->tot, land0, c->count);
    }
    for (unsigned k = 0; (1 << k) < p2; k++) {
        int w = v ^ (1 << k), peer = w < rem ? 2 * w + 1 : w + rem;
        rc = scan_swap(c, peer, peer, k + 1, c->tot, "scan: waiting for a partner");
        if (rc != 0) {
            return rc;
        }
        char *in = fsh_notify_red(t, c->par, k + 1);
        if (w < v) {
            c->add(c->exc, in, c->count);
        }
        c->add(c->tot, in, c->count);
    }
    if (me < 2 * rem) {
        rc = scan_swap(c, me - 1, -1, 0, c->exc, "scan: answering my pair");
        if (rc != 0) {
            return rc;
        }
        c->add(c->exc, land0, c->count); /* my pair's chunk is below me */
    }
    scan_result(c, c->exc);
    return 0;
}

static int scan(struct fsh_team *t, void *dest, const void *src, size_t nelems, size_t esize,
                kernel_fn add, bool inclusive)
{
    size_t per = fsh_notify_red_chunk(t) / esize;
    char *work = malloc(2 * per * esize);
    if (!work) {
        return fsh_err(-ENOMEM, "free some memory", "no room for the scan's %zu-byte buffers",
                       2 * per * esize);
    }
    int rc = 0;
    for (size_t base = 0; base < nelems && rc == 0; base += per) {
        struct scan c = {
            .t = t,
            .add = add,
            .src = (const char *)src + base * esize,
            .dst = (char *)dest + base * esize,
            .tot = work,
            .exc = work + per * esize,
            .count = nelems - base < per ? nelems - base : per,
            .par = fsh_team_step(t),
            .inclusive = inclusive,
        };
        c.bytes = c.count * esize;
        rc = scan_chunk(&c);
    }
    free(work);
    return rc;
}

/* ------------------------------------------------------------------ reductions */

/* An arena team's first reduction or scan: agree with the members on free arena pages and
 * lease landing buffers of the full size there when there is room (notify.c). */
static int lease(struct fsh_team *t)
{
    if (!fsh_notify_lease_wanted(t->nr)) {
        return 0;
    }
    uint64_t free_pages = fsh_notify_free_pages();
    int rc = fsh_notify_and_word(t, &free_pages);
    if (rc == 0) {
        fsh_notify_lease(t->nr, free_pages);
    }
    return rc;
}

int fsh_coll_reduce(struct fsh_team *t, void *dest, const void *src, size_t nreduce,
                    enum fsh_red_type type, enum fsh_red_op op)
{
    bool is_scan = op == FSH_RED_INSCAN || op == FSH_RED_EXSCAN;
    kernel_fn fn = kernel_of(type, is_scan ? FSH_RED_SUM : op);
    if (!fn) {
        return fsh_err(-EINVAL, "", "no reduction kernel for type %d, operation %d", type, op);
    }
    size_t esize = kinds[type].size;
    if (nreduce == 0) {
        return 0;
    }
    int rc = t->size > 1 ? lease(t) : 0;
    if (rc != 0) {
        return rc;
    }
    if (is_scan) {
        return scan(t, dest, src, nreduce, esize, fn, op == FSH_RED_INSCAN);
    }
    if (t->size == 1) {
        if (dest != src) {
            memmove(dest, src, nreduce * esize);
        }
        return 0;
    }
    enum fsh_seg seg;
    uint64_t off;
    rc = fsh_notify_dest(dest, nreduce * esize, &seg, &off);
    if (rc != 0) {
        return rc;
    }
    if (nreduce * esize >= MAPPED_MIN_BYTES && t->size <= FSH_MAPPED_MAX_PES) {
        char *views[2 * FSH_MAPPED_MAX_PES];
        if (mapped_views(t, src, seg, off, nreduce * esize, views, views + t->size)) {
            return mapped(t, fn, dest, views, views + t->size, nreduce, esize);
        }
    }
    if (dest != src) {
        memmove(dest, src, nreduce * esize);
    }
    size_t per = fsh_notify_red_chunk(t) / esize;
    for (size_t base = 0; base < nreduce && rc == 0; base += per) {
        struct chunk c = {
            .t = t,
            .fn = fn,
            .acc = (char *)dest + base * esize,
            .count = nreduce - base < per ? nreduce - base : per,
            .par = fsh_team_step(t),
        };
        c.bytes = c.count * esize;
        rc = one_chunk(&c, seg, off + base * esize);
    }
    return rc;
}
