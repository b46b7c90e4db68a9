/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * notify.c: counted writes and the collectives' symmetric scratch.
 *
 * A write for a collective carries a 32-bit immediate: kind FSH_IMM_COLL, the code of the
 * team's region (6 bits) and the sender's number in that region (22 bits: its team index, or
 * its world PE in the regions counted by world PE). The target's progress engine sees the
 * immediate only after the write's data is in place, and then adds one to the arrival counter
 * in that sender's cell of that region. A receiver keeps expected[sender], the number of
 * arrivals its algorithm has asked for from that sender since the team was made, and a wait
 * ends when arrived >= expected (compared modulo 2^32).
 *
 * Why per-sender counts stay exact with no reset, whatever the fabric reorders:
 *   1. Every PE pair runs a team's collectives in the same order (the spec's rule for a
 *      team), and in every algorithm each arrival sent is expected by its receiver in the
 *      same call, so the sender's stream of arrivals and the receiver's stream of
 *      expectations match one for one.
 *   2. A sender completes (with delivery completion: the data is at the target) the writes a
 *      receiver counts toward one wait before it posts any it counts toward a later wait.
 *      Reaching a count therefore means every earlier write of that sender has landed, even
 *      when a later one was counted first.
 *   3. A region's counters start at zero on every member and see only that team's arrivals:
 *      the world, active-set and finalize regions are fixed for the job; an arena team's
 *      pages were free on every member when the members agreed on them (team.c), and a PE
 *      zeroes them when it destroys the team, which rule 1 makes safe: every arrival sent to
 *      it on the team was expected, and waited for, by a call that has returned. A member
 *      that is faster than this PE may count into the new region before this PE has finished
 *      making the team: the region is found from the immediate alone (the code is its first
 *      page), so the arrival is counted all the same.
 * Counting per sender, rather than per team, is what makes a fast peer harmless: its next
 * call's arrivals raise only its own count, never stand in for a slow peer's. The active sets
 * count by world PE: two sets may number the same PE differently, and rule 1 holds per pair
 * of PEs, not per index.
 *
 * Mailboxes (8 bytes each) are indexed by the writer and double buffered by the parity of the
 * team's step: a step is a phase in which every member's completion needs every member's
 * contribution, so no PE is more than one step ahead of another. Every write into the
 * mailbox [q][j] of a PE comes from team PE j, and j writes it again only after that PE read
 * the last value: j's next write to [q] is either a step of parity q, two steps later, which
 * j finishes only after that PE sent its word of the step between (after reading [q]), or a
 * broadcast's "ready" (below), into a mailbox its reader reads before answering it. A
 * broadcast is not a step (a root waits for nobody's data), so its "ready" words use the
 * mailboxes of the team's next step without taking it: a PE reads the ready of its child j
 * before it sends j the data j needs to finish, so j's next write there (the next step, or
 * the ready of a later broadcast) comes after the read. The active sets' collectives each
 * start with a sync of the set, so their steps may count from 0 in every call (the
 * all-to-alls take no step and skip it).
 *
 * Reductions land data in per-round buffers double buffered the same way (reduce.c). The
 * world and active-set regions have landing buffers of 8 KiB per round up to 16 PEs, smaller
 * beyond (the job's regions stay within a fixed landing budget); an arena team's buffers
 * fill what is left of its pages, and at its first reduction the team leases larger ones
 * from free arena pages when the members agree on some (kept to half the arena, so leases
 * never crowd out new teams).
 *
 * A receiver whose memory is mapped here (runtime/local.c: a PE of this node) is written
 * directly: the data is copied into its mapping, then its arrived counter for us (which lives
 * in the symmetric heap for this reason) is raised by the same number of arrivals the fabric
 * would have raised, with a release atomic; its acquire load of the counter then sees the
 * data. Such a write is complete on return, so rule 2 holds trivially, and the counts are
 * the same whichever path a pair uses.
 *
 * Fingerprints. A collective's arguments (kind, sizes, root, type, operation; an allocation's
 * size, alignment and resulting offset) are hashed into 16 bits by fingerprint.c, and each PE
 * compares the fingerprint of what it received with its own. They travel with messages that are
 * sent anyway: a data-less arrival (barrier rounds) writes its 2 bytes into the receiver's cell
 * for the sender instead of into the sink, so the arrival counted after they landed publishes them
 * on every provider (EFA's 4-byte immediate has no room: kind, region and sender fill it); a put
 * carries it in the upper half of an 8-byte immediate, which the progress engine stores in the
 * cell before counting the arrival (providers with 4 bytes, EFA: above the sender's number,
 * in the spare bits of the 22-bit sender field, the half, bit 1 of the message's number and
 * dbits of the fingerprint, dbits = 22 - log2(npes) - 2, at most 15, none past 2^19 PEs; the
 * receiver compares those bits; both sides know, since the immediate size is checked to be the
 * same at init); a mapped peer's
 * cell is written directly, before the release that counts the arrival. A cell keeps two
 * fingerprints, picked by the parity of the number of fingerprinted messages from that sender
 * (counted by both sides, fp_out and fp_in), each stored with bit 1 of that number (fp_cell): a
 * receiver whose count was reached by the sender's next message before the engine handled this
 * one's event polls until the value of this number is there. Every such message is compared by its
 * receiver in the call it belongs to. Two suffice: a sender's next-but-one fingerprinted message
 * to a PE comes only after that PE compared this one, since every call that sends one either needs
 * every member to have entered it (barrier, reduction, all-to-all, fcollect: the receiver has left
 * the call before) or waits for that very receiver (a broadcast's ready and hello, notify.h), and
 * a reduction's later chunks wait for the partner's previous chunk, sent after its check.
 * Broadcasts carry theirs in the ready words (broadcast.c). Each PE also keeps the arguments of
 * its last two fingerprinted calls in the scratch (fingerprint.c's records, at REC_OFF); a PE that
 * meets a different fingerprint reads the sender's and names both calls. The check costs a load
 * and a compare per message received, and a few stores per call.
 *
 * shmem_finalize synchronizes on a region of its own, so its arrivals are never counted by a
 * user's collective: a PE that finalizes (or exits) while a peer waits in a barrier leaves
 * that barrier waiting, and the peer's liveness probe (live.c) names it.
 *
 * Memory (symmetric heap, fsh_notify_heap_bytes): per world PE an 8-byte cell (its arrival counter
 * and two fingerprints) and 16 bytes of mailboxes in the world region, the same in the active-set
 * region, an 8-byte cell for finalize; landing buffers of at most 64 KiB (world) and 32 KiB
 * (active sets); and the arena, 3 KiB per FABSHMEM_MAX_TEAMS, that the other teams share, and at
 * least enough for a team of every PE (about 24 bytes per PE: a split as large as the world always
 * fits); 2.5 KiB for the eager broadcast slots and a line (broadcast.c). Private: 12 bytes per
 * sender of each region (expected counts, fingerprints sent and checked).
 */
#include "notify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fabric.h"
#include "fingerprint.h"
#include "heap.h"
#include "local.h"
#include "rma.h"
#include "rt.h"
#include "team_type.h"

#define SENDER_BITS 22
#define CODE_BITS 6
#define CODE_WORLD 0
#define CODE_FINAL 1
#define CODE_ASET 2
#define CODE_PAGE0 3 /* CODE_PAGE0 + p: the arena region whose first page is p */
#define RING 16      /* source words of a batch's 8-byte writes before it must complete */
#define CHUNK_MAX 8192
#define CHUNK_MIN 128 /* with the 3 KiB per team, 30 teams of up to 16 PEs take a page each */
#define WORLD_LAND (64 * 1024)
#define ASET_LAND (32 * 1024)
#define ARENA_PER_TEAM 3072
#define TEAM_PAGES 59 /* of the 61: a team of every PE fits, */
#define HALF_PAGES 30 /* and two of half of them */
#define HEAD 192 /* data-less arrivals' source and sink, a landing word, BSRC_OFF, records */
#define BSRC_OFF 32 /* a broadcast root's source, for the children that read it */
#define REC_OFF 64 /* fingerprint.c's records of this PE's last two fingerprinted calls */
_Static_assert(REC_OFF + FSH_FINGERPRINT_BYTES <= HEAD, "the records fit the scratch's head");
#define FP_HIGH 0x80000000u /* in the immediate's upper half: a fingerprint, */
#define FP_PAR_SHIFT 30     /* the parity of its message number, and the 16 bits */
#define PLUS_HIGH (1u << 29) /* in the upper half: count this write as two arrivals */
/* The eager broadcast ring (broadcast.c). */
#define EAGER_RING (FSH_NOTIFY_EAGER_SLOTS * FSH_NOTIFY_EAGER_SLOT)
#define EAGER_BYTES (EAGER_RING + 64) /* and a line for the number of the last one done */

static struct {
    int npes;
    bool open;      /* arrivals polled after fini are dropped, not counted */
    char *scratch;  /* the reservation */
    uint64_t scratch_off;
    struct fsh_notify_region world, aset, final;
    char *arena;
    size_t page;
    uint64_t used; /* arena pages held here */
    uint64_t *zero; /* source of data-less arrivals, registered */
    uint64_t sink_off; /* where data-less arrivals land */
    bool fp_data;   /* data puts carry fingerprints (8 bytes of immediate data) */
    unsigned sbits; /* bits of the sender field a sender's number takes (npes - 1 fits) */
    unsigned dbits; /* 4-byte immediates: fingerprint bits a put carries above them (0: none) */
    char *eager;    /* this PE's eager ring of slots */
    bool eager_on;  /* every PE on one node maps every other (agreed at init) */
} notify_mem;

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Landing rounds of a team of n: log2 of the largest power of two p2 <= n, and one for the
 * fold of the n - p2 others when there are any. */
static unsigned rounds_of(int n)
{
    unsigned r = 0;
    int p2 = 1;
    while (p2 * 2 <= n) {
        p2 *= 2;
        r++;
    }
    return r + (n > p2);
}

/* Bytes of a region's cells, mailboxes and ring (the landing buffers follow). */
static size_t fixed_bytes(int n)
{
    return align64(sizeof(struct fsh_notify_cell) * (size_t)n) + align64(16 * (size_t)n) +
           RING * sizeof(uint64_t);
}

/* The landing chunk that fits rounds x 2 buffers in `budget` bytes, at most CHUNK_MAX. */
static size_t chunk_within(unsigned rounds, size_t budget)
{
    if (rounds == 0) {
        return 0;
    }
    size_t c = (budget / (2 * (size_t)rounds)) & ~(size_t)63;
    return c > CHUNK_MAX ? CHUNK_MAX : c;
}

static size_t job_region_bytes(int n, size_t land_budget)
{
    unsigned r = rounds_of(n);
    return fixed_bytes(n) + 2 * (size_t)r * chunk_within(r, land_budget);
}

/* The least a team of n PEs takes of the arena: its counters, mailboxes and ring, and the
 * smallest landing buffers. */
static size_t team_bytes(int n)
{
    return fixed_bytes(n) + 2 * (size_t)rounds_of(n) * CHUNK_MIN;
}

/* An arena page: 3 KiB per team slot over the pages, but never so small that a team of every
 * PE would not fit in TEAM_PAGES pages (a split of the world's size, or two of half of it,
 * must be possible whatever the job's size: with the 3 KiB alone, a team of more than ~4,800
 * PEs could never be made at the default 32 teams). */
static size_t page_bytes(int npes, unsigned max_teams)
{
    size_t p = ((size_t)max_teams * ARENA_PER_TEAM / FSH_NOTIFY_PAGES) & ~(size_t)63;
    size_t world = align64((team_bytes(npes) + TEAM_PAGES - 1) / TEAM_PAGES);
    size_t half = align64((team_bytes(npes - npes / 2) + HALF_PAGES - 1) / HALF_PAGES);
    p = p > world ? p : world;
    p = p > half ? p : half;
    return p < 64 ? 64 : p;
}

unsigned fsh_notify_team_pages(int npes, unsigned max_teams, int n)
{
    size_t page = page_bytes(npes, max_teams);
    return (unsigned)((team_bytes(n) + page - 1) / page);
}

size_t fsh_notify_heap_bytes(int npes, unsigned max_teams)
{
    return HEAD + job_region_bytes(npes, WORLD_LAND) + job_region_bytes(npes, ASET_LAND) +
           align64(sizeof(struct fsh_notify_cell) * (size_t)npes) + EAGER_BYTES +
           FSH_NOTIFY_PAGES * page_bytes(npes, max_teams);
}

/* Lay a region of n senders out at p (heap), landing buffers of `chunk` at land. */
static void lay_out(struct fsh_notify_region *r, char *p, int n, char *land, size_t chunk)
{
    r->n = n;
    r->cells = (struct fsh_notify_cell *)p;
    r->words = (uint64_t *)(p + align64(sizeof(struct fsh_notify_cell) * (size_t)n));
    r->ring = r->words + align64(16 * (size_t)n) / sizeof(uint64_t);
    r->rounds = rounds_of(n);
    r->land = land;
    r->chunk = chunk;
}

static void on_arrival(uint32_t payload, uint32_t high)
{
    unsigned code = (payload >> SENDER_BITS) & ((1u << CODE_BITS) - 1);
    uint32_t field = payload & ((1u << SENDER_BITS) - 1);
    size_t from = field & ((1u << notify_mem.sbits) - 1);
    uint32_t fpf = field >> notify_mem.sbits; /* a put's fingerprint in a 4-byte immediate */
    struct fsh_notify_cell *cell = NULL;
    if (!notify_mem.open) {
        return;
    }
    if (code >= CODE_PAGE0) {
        /* An arena region's cells open its first page; the sender may be faster than this
         * PE's own making of the team (rule 3). */
        size_t at = (code - CODE_PAGE0) * notify_mem.page + from * sizeof(*cell);
        if (at + sizeof(*cell) <= FSH_NOTIFY_PAGES * notify_mem.page) {
            cell = (struct fsh_notify_cell *)(notify_mem.arena + at);
        }
    } else if (from < (size_t)notify_mem.npes) {
        struct fsh_notify_region *r = code == CODE_WORLD   ? &notify_mem.world
                                      : code == CODE_FINAL ? &notify_mem.final
                                                           : &notify_mem.aset;
        cell = &r->cells[from];
    }
    if (cell) {
        if (high & FP_HIGH) {
            /* A put's fingerprint, in place before the arrival that publishes it. */
            __atomic_store_n(&cell->fp[(high >> FP_PAR_SHIFT) & 1], (uint16_t)high,
                             __ATOMIC_RELAXED);
        } else if (fpf) {
            /* The same from the sender field's spare bits: half, bit 1 of the number, bits. */
            unsigned d = notify_mem.dbits;
            __atomic_store_n(&cell->fp[(fpf >> (d + 1)) & 1],
                             (uint16_t)((((fpf >> d) & 1) << 15) | (fpf & ((1u << d) - 1))),
                             __ATOMIC_RELAXED);
        }
        __atomic_fetch_add(&cell->arrived, 1 + !!(high & PLUS_HIGH), __ATOMIC_RELEASE);
    }
}

/* The private per-sender counts of a region of n: expected, fp_out, fp_in. */
static int counts(struct fsh_notify_region *r, int n)
{
    r->expected = calloc(3 * (size_t)n, sizeof(uint32_t));
    if (!r->expected) {
        return fsh_err(-ENOMEM, "free some memory", "out of memory for %d counters", n);
    }
    r->fp_out = r->expected + n;
    r->fp_in = r->fp_out + n;
    return 0;
}

static int job_region(struct fsh_notify_region *r, unsigned code, char **p, int n,
                      size_t land_budget, bool mailboxes)
{
    r->code = code;
    r->by_world = true;
    int rc = counts(r, n);
    if (rc != 0) {
        return rc;
    }
    if (!mailboxes) {
        r->n = n;
        r->cells = (struct fsh_notify_cell *)*p;
        *p += align64(sizeof(struct fsh_notify_cell) * (size_t)n);
        return 0;
    }
    size_t chunk = chunk_within(rounds_of(n), land_budget);
    lay_out(r, *p, n, *p + fixed_bytes(n), chunk);
    *p += fixed_bytes(n) + 2 * (size_t)r->rounds * chunk;
    return 0;
}

int fsh_notify_init(int npes, unsigned max_teams)
{
    if (npes > (1 << SENDER_BITS)) {
        return fsh_err(-ENOTSUP, "run at most 4194304 PEs",
                       "%d PEs: collectives name the sender in 22 bits", npes);
    }
    if (max_teams < 2 || max_teams > 62) {
        return fsh_err(-EINVAL, "set FABSHMEM_MAX_TEAMS to 2..62",
                       "FABSHMEM_MAX_TEAMS=%u is out of range", max_teams);
    }
    notify_mem.npes = npes;
    notify_mem.page = page_bytes(npes, max_teams);
    size_t total = fsh_notify_heap_bytes(npes, max_teams);
    char what[160];
    snprintf(what, sizeof(what),
             "the collectives' scratch (%d PEs, a team arena of %d x %zu bytes)", npes,
             FSH_NOTIFY_PAGES, notify_mem.page);
    notify_mem.scratch = fsh_heap_reserve(total, 64, what, "lower FABSHMEM_MAX_TEAMS");
    if (!notify_mem.scratch) {
        return fsh_err_last()->code;
    }
    enum fsh_seg seg;
    if (fsh_mr_lookup(notify_mem.scratch, total, &seg, &notify_mem.scratch_off) != 0 ||
        seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "collective scratch is not in the registered heap");
    }
    /* Fresh heap memory is zero; no memset: a faster local peer may already count into it. */
    notify_mem.zero = (uint64_t *)notify_mem.scratch;
    notify_mem.sink_off = notify_mem.scratch_off + sizeof(uint64_t);
    notify_mem.fp_data = fsh_fabric_attr()->cq_data_size >= sizeof(uint64_t);
    /* With 4 bytes of immediate data a put's fingerprint rides in the sender field's spare
     * bits: the half and bit 1 of the message's number, then up to 15 bits of it. */
    unsigned need = npes > 2 ? 64u - (unsigned)__builtin_clzll((unsigned long long)npes - 1) : 1;
    notify_mem.sbits = need < SENDER_BITS ? need : SENDER_BITS; /* npes - 1 fits */
    unsigned spare = SENDER_BITS - notify_mem.sbits;
    notify_mem.dbits = notify_mem.fp_data || spare < 3 ? 0 : spare - 2 > 15 ? 15 : spare - 2;
    fsh_fingerprint_open(notify_mem.scratch + REC_OFF, notify_mem.scratch_off + REC_OFF,
                         (uint64_t *)(notify_mem.scratch + 2 * sizeof(uint64_t)));
    char *p = notify_mem.scratch + HEAD;
    int rc = job_region(&notify_mem.world, CODE_WORLD, &p, npes, WORLD_LAND, true);
    if (rc == 0) {
        rc = job_region(&notify_mem.aset, CODE_ASET, &p, npes, ASET_LAND, true);
    }
    if (rc == 0) {
        rc = job_region(&notify_mem.final, CODE_FINAL, &p, npes, 0, false);
    }
    if (rc != 0) {
        return rc;
    }
    notify_mem.eager = p;
    notify_mem.eager_on = false;
    p += EAGER_BYTES;
    notify_mem.arena = p;
    notify_mem.used = 0;
    if ((size_t)(p - notify_mem.scratch) + FSH_NOTIFY_PAGES * notify_mem.page != total) {
        return fsh_err(-EFAULT, "",
                       "collective scratch layout (%zu bytes) differs from "
                       "fsh_notify_heap_bytes (%zu)",
                       (size_t)(p - notify_mem.scratch) + FSH_NOTIFY_PAGES * notify_mem.page,
                       total);
    }
    notify_mem.open = true;
    return fsh_progress_register_imm(FSH_IMM_COLL, on_arrival);
}

void fsh_notify_fini(void)
{
    /* The scratch goes with the heap. */
    notify_mem.open = false;
    free(notify_mem.world.expected);
    free(notify_mem.aset.expected);
    free(notify_mem.final.expected);
    notify_mem.world.fp_out = notify_mem.aset.fp_out = notify_mem.final.fp_out = NULL;
    notify_mem.world.fp_in = notify_mem.aset.fp_in = notify_mem.final.fp_in = NULL;
    notify_mem.world.expected = notify_mem.aset.expected = notify_mem.final.expected = NULL;
}

struct fsh_notify_region *fsh_notify_world(void)
{
    return &notify_mem.world;
}

struct fsh_notify_region *fsh_notify_aset(void)
{
    return &notify_mem.aset;
}

struct fsh_notify_region *fsh_notify_final(void)
{
    return &notify_mem.final;
}

/* ------------------------------------------------------------------ the arena */

uint64_t fsh_notify_free_pages(void)
{
    return ~notify_mem.used & (((uint64_t)1 << FSH_NOTIFY_PAGES) - 1);
}

size_t fsh_notify_page_bytes(void)
{
    return notify_mem.page;
}

static unsigned pages_of(size_t bytes)
{
    return (unsigned)((bytes + notify_mem.page - 1) / notify_mem.page);
}

unsigned fsh_notify_pages_for(int n)
{
    return pages_of(team_bytes(n)); /* notify_mem.page is page_bytes(npes, max_teams) */
}

static uint64_t run_mask(unsigned first, unsigned pages)
{
    return (pages >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << pages) - 1)) << first;
}

bool fsh_notify_fit(uint64_t free, unsigned pages, unsigned *first)
{
    for (unsigned f = 0; pages > 0 && f + pages <= FSH_NOTIFY_PAGES; f++) {
        if ((free & run_mask(f, pages)) == run_mask(f, pages)) {
            *first = f;
            return true;
        }
    }
    return false;
}

int fsh_notify_carve(int n, unsigned first, struct fsh_notify_region **out)
{
    struct fsh_notify_region *r = calloc(1, sizeof(*r));
    if (!r || counts(r, n) != 0) {
        free(r);
        return fsh_err(-ENOMEM, "free some memory", "out of memory for a team of %d PEs", n);
    }
    unsigned pages = fsh_notify_pages_for(n);
    char *p = notify_mem.arena + (size_t)first * notify_mem.page;
    unsigned rounds = rounds_of(n);
    /* The landing buffers take the rest of the region's pages. */
    size_t chunk = chunk_within(rounds, pages * notify_mem.page - fixed_bytes(n));
    lay_out(r, p, n, p + fixed_bytes(n), chunk);
    r->code = CODE_PAGE0 + first;
    r->by_world = false;
    r->pages = run_mask(first, pages);
    notify_mem.used |= r->pages;
    *out = r;
    return 0;
}

static void zero_pages(uint64_t pages)
{
    for (unsigned p = 0; p < FSH_NOTIFY_PAGES; p++) {
        if (pages & ((uint64_t)1 << p)) {
            memset(notify_mem.arena + (size_t)p * notify_mem.page, 0, notify_mem.page);
        }
    }
}

void fsh_notify_release(struct fsh_notify_region *r)
{
    if (!r || r->pages == 0) {
        return;
    }
    /* Zero for the next team on these pages (rule 3): every arrival of this team has been
     * counted by a call that returned, and no member writes here again. */
    zero_pages(r->pages | r->lease);
    notify_mem.used &= ~(r->pages | r->lease);
    free(r->expected);
    free(r);
}

bool fsh_notify_lease_wanted(const struct fsh_notify_region *r)
{
    return r->pages != 0 && !r->lease_tried && r->rounds > 0 && r->chunk < CHUNK_MAX;
}

void fsh_notify_lease(struct fsh_notify_region *r, uint64_t free)
{
    r->lease_tried = true;
    for (size_t c = CHUNK_MAX; c > r->chunk && c >= 1024; c /= 2) {
        unsigned pages = pages_of(2 * (size_t)r->rounds * c), first;
        /* Half the arena stays free for new teams whatever the leases take. */
        if ((unsigned)__builtin_popcountll(free) >= pages + FSH_NOTIFY_PAGES / 2 &&
            fsh_notify_fit(free, pages, &first)) {
            r->lease = run_mask(first, pages);
            notify_mem.used |= r->lease;
            r->land = notify_mem.arena + (size_t)first * notify_mem.page;
            r->chunk = c;
            return;
        }
    }
}

/* ------------------------------------------------------------------ counted writes */

uint32_t fsh_notify_pieces(size_t len)
{
    size_t max = fsh_rma_max_write();
    return len == 0 ? 1 : (uint32_t)((len + max - 1) / max);
}

/* The sender's number in the region of t, and the counter index of team PE i. */
static uint32_t my_number(const struct fsh_team *t)
{
    return t->nr->by_world ? (uint32_t)fsh_rt.pe : (uint32_t)t->my_pe;
}

static size_t counter_of(const struct fsh_team *t, int i)
{
    return t->nr->by_world ? (size_t)fsh_team_world_pe(t, i) : (size_t)i;
}

static uint32_t imm_of(const struct fsh_notify_batch *b)
{
    return ((uint32_t)FSH_IMM_COLL << FSH_IMM_KIND_SHIFT) | (b->t->nr->code << SENDER_BITS) |
           my_number(b->t);
}

/* Team PE i's cell for this PE, when i is mapped here. */
static struct fsh_notify_cell *mapped_cell(const struct fsh_notify_batch *b, int i)
{
    const struct fsh_notify_region *r = b->t->nr;
    uint64_t off = fsh_notify_scratch_off(&r->cells[my_number(b->t)]);
    return fsh_local_addr(fsh_team_world_pe(b->t, i), FSH_SEG_HEAP, off);
}

static uint32_t *mapped_counter(const struct fsh_notify_batch *b, int i)
{
    struct fsh_notify_cell *c = mapped_cell(b, i);
    return c ? &c->arrived : NULL;
}

int fsh_notify_signal(struct fsh_notify_batch *b, int i)
{
    uint32_t *counter = mapped_counter(b, i);
    if (counter) {
        __atomic_fetch_add(counter, 1, __ATOMIC_RELEASE);
        return 0;
    }
    return fsh_rma_write(&fsh_ctx_default, &b->sync, notify_mem.zero, sizeof(uint64_t),
                         fsh_team_world_pe(b->t, i), FSH_SEG_HEAP, notify_mem.sink_off, true,
                         imm_of(b));
}

int fsh_notify_word(struct fsh_notify_batch *b, int i, uint64_t *word, uint64_t value)
{
    uint64_t off = fsh_notify_scratch_off(word);
    int pe = fsh_team_world_pe(b->t, i);
    uint32_t *counter = mapped_counter(b, i);
    if (counter) {
        /* As a write would: the value in place, then the arrival that publishes it. */
        uint64_t *dst = fsh_local_addr(pe, FSH_SEG_HEAP, off);
        __atomic_store_n(dst, value, __ATOMIC_RELAXED);
        __atomic_fetch_add(counter, 1, __ATOMIC_RELEASE);
        return 0;
    }
    if (b->ring_used == RING) {
        /* The ring's sources must stay put until their writes complete: a few words per
         * team instead of one per member. */
        int rc = fsh_notify_complete(b, "collective: sending 8-byte words");
        if (rc != 0) {
            return rc;
        }
        b->ring_used = 0;
    }
    uint64_t *src = &b->t->nr->ring[b->ring_used++];
    *src = value;
    return fsh_rma_write(&fsh_ctx_default, &b->sync, src, sizeof(uint64_t), pe, FSH_SEG_HEAP, off,
                         true, imm_of(b));
}

/* len bytes to pe in pieces of at most the provider's largest write, each counted on arrival;
 * every piece carries imm, the last one last_imm. */
static int write_pieces(struct fsh_notify_batch *b, int pe, enum fsh_seg seg, uint64_t off,
                        const void *src, size_t len, uint64_t imm, uint64_t last_imm)
{
    size_t max = fsh_rma_max_write();
    for (size_t done = 0; done < len;) {
        size_t n = len - done < max ? len - done : max;
        int rc = fsh_rma_write(&fsh_ctx_default, &b->sync, (const char *)src + done, n, pe, seg,
                               off + done, true, done + n == len ? last_imm : imm);
        if (rc != 0) {
            return rc;
        }
        done += n;
    }
    return 0;
}

int fsh_notify_put(struct fsh_notify_batch *b, int i, enum fsh_seg seg, uint64_t off,
                   const void *src, size_t len)
{
    if (len == 0) {
        return fsh_notify_signal(b, i);
    }
    int pe = fsh_team_world_pe(b->t, i);
    uint32_t *counter = mapped_counter(b, i);
    void *dst = counter ? fsh_local_addr(pe, seg, off) : NULL;
    if (dst) {
        memcpy(dst, src, len);
        __atomic_fetch_add(counter, fsh_notify_pieces(len), __ATOMIC_RELEASE);
        return 0;
    }
    return write_pieces(b, pe, seg, off, src, len, imm_of(b), imm_of(b));
}

/* ------------------------------------------------------------------ fingerprints */

/* A cell half holds bit 1 of the message's number (bit 0 picks the half) over the 15 bits of
 * its fingerprint: the receiver tells this message's value from the one two messages before,
 * which matters where the engine stores it (an immediate's upper half): the count a receiver
 * waits for may be reached by the arrival of the sender's next message before this one's
 * event was handled (events are handled in the order the CQ, or chaos, gives them). */
static uint16_t fp_cell(uint32_t n, uint16_t fp)
{
    return (uint16_t)((((n >> 1) & 1) << 15) | (fp & 0x7fffu));
}

/* The fingerprint bits a put carries in a 4-byte immediate (dbits of them, never all 0). */
static uint16_t fp_short(uint16_t fp)
{
    uint16_t v = (uint16_t)(fp & ((1u << notify_mem.dbits) - 1));
    return v ? v : 1;
}

/* The sender's side: the number of its next fingerprinted message to team PE i. */
static uint32_t fp_next(const struct fsh_team *t, int i)
{
    return t->nr->fp_out[counter_of(t, i)]++;
}

int fsh_notify_signal_fp(struct fsh_notify_batch *b, int i, uint16_t fp)
{
    if (fp == 0) {
        return fsh_notify_signal(b, i);
    }
    uint32_t n = fp_next(b->t, i);
    struct fsh_notify_cell *cell = mapped_cell(b, i);
    if (cell) {
        __atomic_store_n(&cell->fp[n & 1], fp_cell(n, fp), __ATOMIC_RELAXED);
        __atomic_fetch_add(&cell->arrived, 1, __ATOMIC_RELEASE);
        return 0;
    }
    if (b->ring_used == RING) {
        int rc = fsh_notify_complete(b, "collective: sending fingerprints");
        if (rc != 0) {
            return rc;
        }
        b->ring_used = 0;
    }
    /* Two bytes written into the receiver's cell, the arrival counted after they landed:
     * legal on every provider (EFA's 4 bytes of immediate data are all taken). */
    uint16_t *src = (uint16_t *)&b->t->nr->ring[b->ring_used++];
    *src = fp_cell(n, fp);
    uint64_t off = fsh_notify_scratch_off(&b->t->nr->cells[my_number(b->t)].fp[n & 1]);
    return fsh_rma_write(&fsh_ctx_default, &b->sync, src, sizeof(*src),
                         fsh_team_world_pe(b->t, i), FSH_SEG_HEAP, off, true, imm_of(b));
}

int fsh_notify_put_fp(struct fsh_notify_batch *b, int i, enum fsh_seg seg, uint64_t off,
                      const void *src, size_t len, uint16_t fp)
{
    if (fp == 0 || (!notify_mem.fp_data && notify_mem.dbits == 0)) {
        return fsh_notify_put(b, i, seg, off, src, len);
    }
    if (len == 0) {
        return fsh_notify_signal_fp(b, i, fp);
    }
    uint32_t k = fp_next(b->t, i);
    int pe = fsh_team_world_pe(b->t, i);
    struct fsh_notify_cell *cell = mapped_cell(b, i);
    void *dst = cell ? fsh_local_addr(pe, seg, off) : NULL;
    uint16_t v = notify_mem.fp_data ? fp : fp_short(fp);
    if (dst) {
        memcpy(dst, src, len);
        __atomic_store_n(&cell->fp[k & 1], fp_cell(k, v), __ATOMIC_RELAXED);
        __atomic_fetch_add(&cell->arrived, fsh_notify_pieces(len), __ATOMIC_RELEASE);
        return 0;
    }
    /* Every piece carries it (the same value into the same half of the cell). */
    uint64_t imm = imm_of(b);
    if (notify_mem.fp_data) {
        imm |= (uint64_t)(FP_HIGH | ((k & 1) << FP_PAR_SHIFT) | fp_cell(k, v)) << 32;
    } else {
        unsigned d = notify_mem.dbits;
        imm |= (uint64_t)(((k & 1) << (d + 1)) | (((k >> 1) & 1) << d) | v) << notify_mem.sbits;
    }
    return write_pieces(b, pe, seg, off, src, len, imm, imm);
}

#define FP_POLLS 200000 /* polls a landed message's fingerprint may take to be handled */

struct want_fp {
    const uint16_t *half;
    uint16_t seq;
    unsigned polls;
};

static bool fp_here(const struct want_fp *f)
{
    uint16_t v = __atomic_load_n(f->half, __ATOMIC_ACQUIRE);
    return (v & 0x7fffu) != 0 && (v & 0x8000u) == f->seq;
}

static bool fp_here_or_never(const void *arg)
{
    struct want_fp *f = (struct want_fp *)arg;
    return fp_here(f) || ++f->polls >= FP_POLLS;
}

int fsh_notify_fp_check(const struct fsh_team *t, int i, uint16_t fp, bool data)
{
    bool short_fp = data && !notify_mem.fp_data;
    if (fp == 0 || (short_fp && notify_mem.dbits == 0)) {
        return 0;
    }
    size_t c = counter_of(t, i);
    uint32_t n = t->nr->fp_in[c]++;
    uint16_t want = fp_cell(n, short_fp ? fp_short(fp) : fp);
    struct want_fp f = {&t->nr->cells[c].fp[n & 1], (uint16_t)(want & 0x8000u), 0};
    /* The wait before this acquired the arrival that published it, except where the engine
     * still has to handle this message's event (fp_cell): poll for it. A message without a
     * fingerprint (another collective) never brings one: FP_POLLS bounds that. */
    if (__builtin_expect(!fp_here(&f), 0)) {
        int rc = fsh_progress_wait_arrival(fp_here_or_never, &f,
                                           "collective: waiting for a fingerprint to be handled",
                                           fsh_team_world_pe(t, i));
        if (rc != 0) {
            return rc;
        }
    }
    uint16_t theirs = __atomic_load_n(f.half, __ATOMIC_RELAXED);
    if (__builtin_expect(theirs == want, 1)) {
        return 0;
    }
    /* theirs: 0 when none ever came; the report matches the sender's records on the bits
     * the message carried (15, or dbits of a 4-byte immediate's put). */
    return fsh_fingerprint_report_bits(fsh_team_world_pe(t, i), fp,
                                       fp_here(&f) ? (uint16_t)(0x8000u | theirs) : 0,
                                       short_fp ? (uint16_t)((1u << notify_mem.dbits) - 1)
                                                : 0x7fffu);
}

int fsh_notify_put_plus(struct fsh_notify_batch *b, int i, enum fsh_seg seg, uint64_t off,
                        const void *src, size_t len)
{
    int pe = fsh_team_world_pe(b->t, i);
    uint32_t *counter = mapped_counter(b, i);
    void *dst = counter && len ? fsh_local_addr(pe, seg, off) : NULL;
    if (counter && (dst || len == 0)) {
        if (len) {
            memcpy(dst, src, len);
        }
        __atomic_fetch_add(counter, fsh_notify_pieces(len) + 1, __ATOMIC_RELEASE);
        return 0;
    }
    if (!notify_mem.fp_data) {
        int rc = fsh_notify_put(b, i, seg, off, src, len);
        return rc ? rc : fsh_notify_signal(b, i);
    }
    uint64_t imm = imm_of(b), plus = imm | (uint64_t)PLUS_HIGH << 32;
    if (len == 0) {
        return fsh_rma_write(&fsh_ctx_default, &b->sync, notify_mem.zero, sizeof(uint64_t), pe,
                             FSH_SEG_HEAP, notify_mem.sink_off, true, plus);
    }
    return write_pieces(b, pe, seg, off, src, len, imm, plus);
}

int fsh_notify_complete(struct fsh_notify_batch *b, const char *what)
{
    if (fsh_progress_track_done(&b->sync)) {
        return 0;
    }
    return fsh_progress_wait_track(&b->sync, what);
}

/* The dissemination rounds of a barrier (barrier.c) carrying an 8-byte word: an all-reduce
 * for idempotent operations (AND here; hearing a value twice is harmless). The word of round
 * k comes from team PE me - 2^k and lands in that sender's mailbox, as every mailbox write
 * does. */
int fsh_notify_and_word(struct fsh_team *t, uint64_t *word)
{
    int n = t->size, me = t->my_pe;
    uint64_t *in = fsh_notify_words(t, fsh_team_step(t));
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    int rc = 0;
    for (int dist = 1; dist < n && rc == 0; dist *= 2) {
        int from = (me - dist + n) % n;
        rc = fsh_notify_word(&b, (me + dist) % n, &in[me], *word);
        if (rc == 0) {
            fsh_notify_expect(t, from, 1);
            rc = fsh_notify_wait(t, from, "team split: agreeing on a word (AND)");
        }
        if (rc == 0) {
            *word &= __atomic_load_n(&in[from], __ATOMIC_ACQUIRE);
        }
    }
    int crc = fsh_notify_complete(&b, "team split: agreeing on a word (AND)");
    return rc ? rc : crc;
}

/* ------------------------------------------------------------------ scratch */

uint64_t *fsh_notify_words(const struct fsh_team *t, unsigned parity)
{
    return t->nr->words + (size_t)(parity & 1) * (size_t)t->nr->n;
}

uint64_t *fsh_notify_asks(const struct fsh_team *t)
{
    return fsh_notify_words(t, (unsigned)(t->steps & 1));
}

void *fsh_notify_red(const struct fsh_team *t, unsigned parity, unsigned round)
{
    const struct fsh_notify_region *r = t->nr;
    /* A power-of-two team folds nothing: its buffers start with round 1. */
    int p2 = 1;
    while (p2 * 2 <= t->size) {
        p2 *= 2;
    }
    unsigned k = round - (t->size > p2 ? 0 : 1);
    return r->land + ((size_t)(parity & 1) * r->rounds + k) * r->chunk;
}

size_t fsh_notify_red_chunk(const struct fsh_team *t)
{
    /* A team of one lands nothing: its scans still go by chunks. */
    return t->nr->chunk ? t->nr->chunk : CHUNK_MAX;
}

int fsh_notify_dest(const void *dest, size_t len, enum fsh_seg *seg, uint64_t *off)
{
    if (fsh_mr_lookup(dest, len ? len : 1, seg, off) != 0) {
        return fsh_err(-EFAULT, "pass a symmetric dest", "dest %p is not symmetric", dest);
    }
    return 0;
}

void fsh_notify_eager_enable(bool on)
{
    notify_mem.eager_on = on;
}

bool fsh_notify_eager(const struct fsh_team *t)
{
    return notify_mem.eager_on && t->nr == &notify_mem.world;
}

char *fsh_notify_eager_slot(int pe, uint64_t seq)
{
    char *mine = notify_mem.eager + (size_t)(seq % FSH_NOTIFY_EAGER_SLOTS) * FSH_NOTIFY_EAGER_SLOT;
    return pe == fsh_rt.pe ? mine : fsh_local_addr(pe, FSH_SEG_HEAP, fsh_notify_scratch_off(mine));
}

uint64_t *fsh_notify_eager_done(int pe)
{
    char *mine = notify_mem.eager + EAGER_RING;
    return pe == fsh_rt.pe ? (uint64_t *)(void *)mine
                           : fsh_local_addr(pe, FSH_SEG_HEAP, fsh_notify_scratch_off(mine));
}

uint64_t *fsh_notify_bsrc(int pe)
{
    char *mine = notify_mem.scratch + BSRC_OFF;
    return pe == fsh_rt.pe ? (uint64_t *)(void *)mine
                           : fsh_local_addr(pe, FSH_SEG_HEAP, notify_mem.scratch_off + BSRC_OFF);
}

uint64_t fsh_notify_scratch_off(const void *p)
{
    return notify_mem.scratch_off + (uint64_t)((const char *)p - notify_mem.scratch);
}
