/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fingerprint.c: a collective call's identity in 16 bits, and naming two calls that differ.
 *
 * A collective's arguments (kind, sizes, root, type, operation; an allocation's size,
 * alignment and resulting offset: fingerprint.h) are hashed into 16 bits (bit 15 set, so never
 * 0). notify.c carries the fingerprints with the messages a collective sends anyway and
 * compares them on arrival; this file makes them and, when two differ, names both calls.
 *
 * Each PE keeps the arguments of its last two fingerprinted calls (struct record) where
 * notify.c gives it room: in the collectives' scratch, at the same heap offset on every PE. A
 * PE that meets a fingerprint other than its own reads the sender's two records there (a load
 * or a fabric read, the slow path only) and names both calls, or says that the sender has
 * moved on. Two records suffice: a peer is at most one fingerprinted call ahead when it looks
 * (notify.c says why). Making a fingerprint costs a few multiplies and, for a call other than
 * the last two, a few stores; nothing here sends or waits, except the report's reads.
 */
#include "fingerprint.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "rma.h"
#include "rt.h"

/* One fingerprinted call's arguments (fsh_fingerprint_of), 64 bytes in the scratch. */
struct record {
    uint64_t fp, kind, arg[4], seq, spare;
};
_Static_assert(2 * sizeof(struct record) == FSH_FINGERPRINT_BYTES, "two records");

static struct {
    struct record *recs; /* [2] in the scratch, NULL before fsh_fingerprint_open */
    uint64_t recs_off;   /* their heap offset, the same on every PE */
    uint64_t *landing;   /* 8 registered bytes a peer's record is read into */
    uint64_t seq;        /* records published */
    unsigned cur;        /* the record of the call in progress */
} calls;

void fsh_fingerprint_open(void *recs, uint64_t recs_off, uint64_t *landing)
{
    calls.recs = recs;
    calls.recs_off = recs_off;
    calls.landing = landing;
    calls.seq = 0;
    calls.cur = 0;
}

static bool same_call(const struct record *r, enum fsh_fp_kind kind, uint64_t a, uint64_t b,
                      uint64_t c, uint64_t d)
{
    return r->kind == (uint64_t)kind && r->arg[0] == a && r->arg[1] == b && r->arg[2] == c &&
           r->arg[3] == d && r->fp != 0;
}

uint16_t fsh_fingerprint_of(enum fsh_fp_kind kind, uint64_t a, uint64_t b, uint64_t c,
                            uint64_t d)
{
    /* The same call as one of the last two (a loop of barriers, of the same reduction, of
     * malloc and free): its record stands, no hash and no stores. */
    if (calls.recs) {
        struct record *r = calls.recs;
        if (same_call(&r[calls.cur], kind, a, b, c, d)) {
            return (uint16_t)r[calls.cur].fp;
        }
        if (same_call(&r[calls.cur ^ 1], kind, a, b, c, d)) {
            calls.cur ^= 1;
            return (uint16_t)r[calls.cur].fp;
        }
    }
    /* Each argument times its own odd constant (independent multiplies: a few cycles in
     * all), then one multiply-xorshift round: a difference in any argument changes the 15 bits
     * kept with probability about 1 - 2^-15; bit 15 marks a fingerprint (never 0). */
    uint64_t h = ((uint64_t)kind * 0x9e3779b97f4a7c15ull) ^ (a * 0xbf58476d1ce4e5b9ull) ^
                 ((b + 0x5851f42d4c957f2dull) * 0x94d049bb133111ebull) ^
                 (((c << 32) | (c >> 32)) * 0xd6e8feb86659fd93ull) ^ (d * 0xa0761d6478bd642full);
    h ^= h >> 29;
    h *= 0xe7037ed1a0b428dbull;
    h ^= h >> 32;
    uint16_t fp15 = (uint16_t)((h ^ (h >> 15)) & 0x7fffu);
    /* The 15 bits are never 0: notify.c's cells read 0 as "none came". */
    uint16_t fp = (uint16_t)(0x8000u | (fp15 ? fp15 : 1));
    if (calls.recs) {
        /* Published for a peer that meets a different fingerprint (fsh_fingerprint_report);
         * the last two different calls, since a peer may be one call ahead when it looks. */
        calls.cur ^= 1;
        struct record *r = &calls.recs[calls.cur];
        __atomic_store_n(&r->fp, 0, __ATOMIC_RELAXED);
        r->kind = kind;
        r->arg[0] = a;
        r->arg[1] = b;
        r->arg[2] = c;
        r->arg[3] = d;
        r->seq = ++calls.seq;
        __atomic_store_n(&r->fp, fp, __ATOMIC_RELEASE);
    }
    return fp;
}

/* ------------------------------------------------------------------ naming a mismatch
 * The slow path: this PE's record of the call, and the peer's read from its scratch. */

static const char *const kind_names[FSH_FP_NKINDS] = {
    [FSH_FP_BCAST] = "a broadcast",
    [FSH_FP_REDUCE] = "a reduction",
    [FSH_FP_ALLTOALL] = "an all-to-all",
    [FSH_FP_ALLTOALLS] = "a strided all-to-all",
    [FSH_FP_FCOLLECT] = "an fcollect",
    [FSH_FP_MALLOC] = "shmem_malloc",
    [FSH_FP_CALLOC] = "shmem_calloc",
    [FSH_FP_ALIGN] = "shmem_align",
    [FSH_FP_REALLOC] = "shmem_realloc",
    [FSH_FP_FREE] = "shmem_free",
    [FSH_FP_MALLOC_DEVICE] = "shmemx_malloc_device",
    [FSH_FP_FREE_DEVICE] = "shmemx_free_device",
};
/* The arguments' names per kind (NULL: not shown). */
static const char *const arg_names[FSH_FP_NKINDS][4] = {
    [FSH_FP_BCAST] = {"nelems", "PE_root", "element size"},
    [FSH_FP_REDUCE] = {"nreduce", "type", "operation", "element size"},
    [FSH_FP_ALLTOALL] = {"nelems", "element size"},
    [FSH_FP_ALLTOALLS] = {"nelems", "dst", "sst", "element size"},
    [FSH_FP_FCOLLECT] = {"nelems", "element size"},
};

static bool is_alloc(uint64_t kind)
{
    return kind >= FSH_FP_MALLOC && kind < FSH_FP_NKINDS;
}

/* "shmem_malloc(1024)", "a reduction (nreduce 10, type 4, operation 5, element size 8)". */
static void describe(char *buf, size_t size, const struct record *r)
{
    const char *name = r->kind < FSH_FP_NKINDS && kind_names[r->kind] ? kind_names[r->kind]
                                                                       : "an unknown call";
    if (r->kind == FSH_FP_FREE || r->kind == FSH_FP_FREE_DEVICE) {
        /* api.c passes the offset plus one, the segment in the top byte */
        snprintf(buf, size, "%s of the block at offset %#llx", name,
                 (unsigned long long)((r->arg[0] - 1) & (((uint64_t)1 << 56) - 1)));
        return;
    }
    if (r->kind == FSH_FP_ALIGN) {
        snprintf(buf, size, "%s(%llu, %llu)", name, (unsigned long long)r->arg[1],
                 (unsigned long long)r->arg[0]);
        return;
    }
    if (is_alloc(r->kind)) {
        snprintf(buf, size, "%s(%llu)", name, (unsigned long long)r->arg[0]);
        return;
    }
    size_t at = (size_t)snprintf(buf, size, "%s", name);
    const char *sep = " (";
    for (int k = 0; k < 4 && r->kind < FSH_FP_NKINDS && at < size; k++) {
        if (arg_names[r->kind][k]) {
            at += (size_t)snprintf(buf + at, size - at, "%s%s %llu", sep, arg_names[r->kind][k],
                                   (unsigned long long)r->arg[k]);
            sep = ", ";
        }
    }
    if (sep[0] == ',' && at < size) {
        snprintf(buf + at, size - at, ")");
    }
}

/* World PE pe's record of the call whose fingerprint was theirs, read from its scratch (a
 * load when mapped here, else a fabric read): false when it has moved two calls on since. */
static bool peer_record(int pe, uint16_t theirs, uint16_t bits, struct record *out)
{
    for (int k = 0; k < 2; k++) {
        uint64_t *w = (uint64_t *)out;
        uint64_t base = calls.recs_off + (uint64_t)k * sizeof(struct record);
        for (size_t j = 0; j < sizeof(*out) / sizeof(uint64_t); j++) {
            if (fsh_rma_read_word(pe, base + j * sizeof(uint64_t), calls.landing, sizeof(uint64_t),
                                  &w[j], "collective: reading a peer's arguments") != 0) {
                fsh_err_clear();
                return false;
            }
        }
        if (theirs != 0 && ((out->fp ^ theirs) & bits) == 0) {
            return true;
        }
    }
    return false;
}

int fsh_fingerprint_report(int pe, uint16_t mine, uint16_t theirs)
{
    return fsh_fingerprint_report_bits(pe, mine, theirs, 0x7fffu);
}

int fsh_fingerprint_report_bits(int pe, uint16_t mine, uint16_t theirs, uint16_t bits)
{
    struct record me = calls.recs[calls.cur], peer;
    if (me.fp != mine) {
        memset(&me, 0, sizeof(me));
    }
    bool alloc = is_alloc(me.kind);
    const char *fix = alloc ? "symmetric allocation is collective: every PE must make the same allocation calls with the same sizes in the same order"
                            : "every PE of the team must call the same collectives in the same order, with the same nelems, PE_root, strides, type and operation";
    char a[160], b[160];
    describe(a, sizeof(a), &me);
    if (theirs == 0) {
        return fsh_err(-EPROTO, fix,
                       "PE %d sent no fingerprint where PE %d's %s expected one: it is in "
                       "another collective call (collective fingerprint)", pe, fsh_rt.pe, a);
    }
    if (!peer_record(pe, theirs, bits, &peer)) {
        return fsh_err(-EPROTO, fix,
                       "PE %d is in another collective call than PE %d's %s, or passed other "
                       "arguments (fingerprint %#x, PE %d's %#x; it has made two calls since) "
                       "(collective fingerprint)",
                       pe, fsh_rt.pe, a, theirs & bits, fsh_rt.pe, mine & bits);
    }
    if (peer.kind == me.kind && !alloc) {
        for (int k = 0; k < 4; k++) {
            const char *an = me.kind < FSH_FP_NKINDS ? arg_names[me.kind][k] : NULL;
            if (an && peer.arg[k] != me.arg[k]) {
                return fsh_err(-EPROTO, fix, "PE %d passed %s %llu, PE %d passed %llu "
                               "(collective fingerprint)", fsh_rt.pe, an,
                               (unsigned long long)me.arg[k], pe,
                               (unsigned long long)peer.arg[k]);
            }
        }
    }
    describe(b, sizeof(b), &peer);
    return fsh_err(-EPROTO, alloc || is_alloc(peer.kind) ? "symmetric allocation is collective: every PE must make the same allocation calls with the same sizes in the same order" : fix,
                   "PE %d called %s while PE %d called %s (collective fingerprint)", pe, b,
                   fsh_rt.pe, a);
}
