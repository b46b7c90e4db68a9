/*
 * notify.c: counted writes and the collectives' symmetric scratch.
 *
 * A write for a collective carries a 32-bit immediate: kind FSH_IMM_COLL, the slot (6 bits)
 * and the sender's world PE (22 bits). The target's progress engine sees the immediate only
 * after the write's data is in place, and then adds one to arrived[slot][sender]. A receiver
 * keeps expected[slot][sender], the number of arrivals its algorithm has asked for from that
 * sender since the job began, and a wait ends when arrived >= expected (compared modulo 2^32).
 *
 * Why per-sender counts stay exact with no reset, whatever the fabric reorders:
 *   1. Every PE pair runs a slot's collectives in the same order (the spec's rule for a team),
 *      and in every algorithm each arrival sent is expected by its receiver in the same call,
 *      so the sender's stream of arrivals and the receiver's stream of expectations match
 *      one for one.
 *   2. A sender completes (with delivery completion: the data is at the target) the writes a
 *      receiver counts toward one wait before it posts any it counts toward a later wait.
 *      Reaching a count therefore means every earlier write of that sender has landed, even
 *      when a later one was counted first.
 * Counting per sender, rather than per slot, is what makes a fast peer harmless: its next
 * call's arrivals raise only its own count, never stand in for a slow peer's.
 *
 * Scratch data (8-byte mailboxes, reduction landing buffers) is double buffered by the parity
 * of the team's step: a step is a phase in which every member's completion needs every
 * member's contribution, so no PE can be more than one step ahead of another.
 *
 * A receiver whose memory is mapped here (runtime/local.c: a PE of this node) is written
 * directly: the data is copied into its mapping, then its arrived counter for us (which lives
 * in the symmetric heap for this reason) is raised by the same number of arrivals the fabric
 * would have raised, with a release atomic; its acquire load of the counter then sees the
 * data. Such a write is complete on return, so rule 2 holds trivially, and the counts are
 * the same whichever path a pair uses.
 *
 * shmem_finalize synchronizes on a slot of its own, so its arrivals are never counted by a
 * user's collective: a PE that finalizes (or exits) while a peer waits in a barrier leaves
 * that barrier waiting, and the peer's liveness probe (live.c) names it.
 *
 * Memory: per (slot, PE) a 32-bit arrived counter (symmetric heap) and a 32-bit expected
 * counter (private) and, per slot, 32 bytes per PE of mailboxes plus 2 x red_rounds x
 * red_chunk bytes of landing space in the symmetric heap.
 */
#include "notify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "heap.h"
#include "local.h"
#include "rma.h"
#include "rt.h"

#define SENDER_BITS 22
#define SLOT_BITS 6
#define RED_CHUNK 8192

static struct {
    int npes;
    unsigned nslots; /* team slots, then finalize's slot, then the active-set slot */
    uint32_t *arrived;     /* [slot * npes + sender], symmetric heap */
    uint64_t arrived_off;  /* its heap offset */
    uint32_t *expected;
    char *scratch;
    uint64_t scratch_off;
    size_t slot_bytes;
    size_t words_in_off, words_out_off, asks_off, red_off;
    unsigned red_rounds;
    uint64_t *zero; /* source of data-less arrivals, registered */
    uint64_t *sink; /* where data-less arrivals land */
    uint64_t sink_off;
} nt;

static void on_arrival(uint32_t payload)
{
    unsigned slot = (payload >> SENDER_BITS) & ((1u << SLOT_BITS) - 1);
    unsigned from = payload & ((1u << SENDER_BITS) - 1);
    if (slot < nt.nslots && from < (unsigned)nt.npes) {
        __atomic_fetch_add(&nt.arrived[(size_t)slot * nt.npes + from], 1, __ATOMIC_RELEASE);
    }
}

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* The scratch layout for npes PEs and max_teams teams (sets nt's offsets); its heap bytes. */
static size_t layout(int npes, unsigned max_teams)
{
    unsigned nslots = max_teams + 2;
    size_t ncount = (size_t)nslots * (size_t)npes;
    /* Rounds of a reduction: the fold of the PEs beyond a power of two, and log2 of it. */
    nt.red_rounds = 1;
    while ((1L << (nt.red_rounds - 1)) < npes) {
        nt.red_rounds++;
    }
    nt.words_in_off = 64;
    nt.words_out_off = nt.words_in_off + align64(2 * (size_t)npes * sizeof(uint64_t));
    nt.asks_off = nt.words_out_off + align64((size_t)npes * sizeof(uint64_t));
    nt.red_off = nt.asks_off + align64((size_t)npes * sizeof(uint64_t));
    nt.slot_bytes = nt.red_off + 2 * (size_t)nt.red_rounds * RED_CHUNK;
    return nt.slot_bytes * nslots + align64(ncount * sizeof(uint32_t));
}

size_t fsh_notify_heap_bytes(int npes, unsigned max_teams)
{
    return fsh_heap_rounded(layout(npes, max_teams));
}

int fsh_notify_init(int npes, unsigned max_teams)
{
    if (npes > (1 << SENDER_BITS)) {
        return fsh_err(-ENOTSUP, "run at most 4194304 PEs",
                       "%d PEs: collectives name the sender in 22 bits", npes);
    }
    if (max_teams < 2 || max_teams + 2 > (1u << SLOT_BITS)) {
        return fsh_err(-EINVAL, "set FABSHMEM_MAX_TEAMS to 2..62",
                       "FABSHMEM_MAX_TEAMS=%u is out of range (world and shared take two)",
                       max_teams);
    }
    nt.npes = npes;
    nt.nslots = max_teams + 2;
    size_t ncount = (size_t)nt.nslots * (size_t)npes;
    nt.expected = calloc(ncount, sizeof(uint32_t));
    if (!nt.expected) {
        return fsh_err(-ENOMEM, "lower FABSHMEM_MAX_TEAMS", "out of memory for %zu counters",
                       ncount);
    }
    size_t total = fsh_notify_heap_bytes(npes, max_teams);
    char what[160];
    snprintf(what, sizeof(what), "the collectives' scratch (%u team slots x %zu bytes for %d PEs)",
             nt.nslots, nt.slot_bytes, npes);
    nt.scratch = fsh_heap_reserve(total, 64, what, "lower FABSHMEM_MAX_TEAMS");
    if (!nt.scratch) {
        return fsh_err_last()->code;
    }
    enum fsh_seg seg;
    if (fsh_mr_lookup(nt.scratch, total, &seg, &nt.scratch_off) != 0 || seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "collective scratch is not in the registered heap");
    }
    /* Fresh heap memory is zero; no memset: a faster local peer may already count into it. */
    nt.arrived = (uint32_t *)(nt.scratch + nt.slot_bytes * nt.nslots);
    nt.arrived_off = nt.scratch_off + nt.slot_bytes * nt.nslots;
    /* Slot 0's first two words: the data-less arrivals' source and sink. */
    nt.zero = (uint64_t *)nt.scratch;
    nt.sink = nt.zero + 1;
    nt.sink_off = nt.scratch_off + sizeof(uint64_t);
    return fsh_progress_register_imm(FSH_IMM_COLL, on_arrival);
}

void fsh_notify_fini(void)
{
    /* The scratch goes with the heap. */
    nt.nslots = 0; /* arrivals polled during teardown are dropped, not counted */
    free(nt.expected);
    nt.arrived = nt.expected = NULL;
}

unsigned fsh_notify_aset_slot(void)
{
    return nt.nslots - 1;
}

unsigned fsh_notify_final_slot(void)
{
    return nt.nslots - 2;
}

uint32_t fsh_notify_pieces(size_t len)
{
    size_t max = fsh_rma_max_write();
    return len == 0 ? 1 : (uint32_t)((len + max - 1) / max);
}

static uint32_t imm_of(const struct fsh_notify_batch *b)
{
    return ((uint32_t)FSH_IMM_COLL << FSH_IMM_KIND_SHIFT) | (b->slot << SENDER_BITS) |
           (uint32_t)fsh_rt.pe;
}

/* pe's arrived counter for this PE on the batch's slot, when pe is mapped here. */
static uint32_t *mapped_counter(const struct fsh_notify_batch *b, int pe)
{
    uint64_t i = (uint64_t)b->slot * (uint64_t)nt.npes + (uint64_t)fsh_rt.pe;
    return fsh_local_addr(pe, FSH_SEG_HEAP, nt.arrived_off + i * sizeof(uint32_t));
}

int fsh_notify_signal(struct fsh_notify_batch *b, int pe)
{
    uint32_t *counter = mapped_counter(b, pe);
    if (counter) {
        __atomic_fetch_add(counter, 1, __ATOMIC_RELEASE);
        return 0;
    }
    return fsh_rma_write(&fsh_ctx_default, &b->sync, nt.zero, sizeof(uint64_t), pe, FSH_SEG_HEAP,
                         nt.sink_off, true, imm_of(b));
}

int fsh_notify_word(struct fsh_notify_batch *b, int pe, uint64_t *word, uint64_t value,
                    uint64_t *src)
{
    uint64_t off = fsh_notify_scratch_off(word);
    uint32_t *counter = mapped_counter(b, pe);
    if (counter) {
        /* As a write would: the value in place, then the arrival that publishes it. */
        uint64_t *dst = fsh_local_addr(pe, FSH_SEG_HEAP, off);
        __atomic_store_n(dst, value, __ATOMIC_RELAXED);
        __atomic_fetch_add(counter, 1, __ATOMIC_RELEASE);
        return 0;
    }
    *src = value;
    return fsh_rma_write(&fsh_ctx_default, &b->sync, src, sizeof(uint64_t), pe, FSH_SEG_HEAP, off,
                         true, imm_of(b));
}

int fsh_notify_put(struct fsh_notify_batch *b, int pe, enum fsh_seg seg, uint64_t off,
                   const void *src, size_t len)
{
    if (len == 0) {
        return fsh_notify_signal(b, pe);
    }
    uint32_t *counter = mapped_counter(b, pe);
    void *dst = counter ? fsh_local_addr(pe, seg, off) : NULL;
    if (dst) {
        memcpy(dst, src, len);
        __atomic_fetch_add(counter, fsh_notify_pieces(len), __ATOMIC_RELEASE);
        return 0;
    }
    uint32_t imm = imm_of(b);
    size_t max = fsh_rma_max_write();
    for (size_t done = 0; done < len;) {
        size_t n = len - done < max ? len - done : max;
        int rc = fsh_rma_write(&fsh_ctx_default, &b->sync, (const char *)src + done, n, pe, seg,
                               off + done, true, imm);
        if (rc != 0) {
            return rc;
        }
        done += n;
    }
    return 0;
}

int fsh_notify_complete(struct fsh_notify_batch *b, const char *what)
{
    if (fsh_progress_track_done(&b->sync)) {
        return 0;
    }
    return fsh_progress_wait_track(&b->sync, what);
}

void fsh_notify_expect(unsigned slot, int from, uint32_t n)
{
    nt.expected[(size_t)slot * nt.npes + from] += n;
}

struct want {
    const uint32_t *arrived;
    uint32_t expected;
};

static bool reached(const void *arg)
{
    const struct want *w = arg;
    uint32_t a = __atomic_load_n(w->arrived, __ATOMIC_ACQUIRE);
    return (int32_t)(a - w->expected) >= 0;
}

int fsh_notify_wait(unsigned slot, int from, const char *what)
{
    size_t i = (size_t)slot * nt.npes + from;
    struct want w = {&nt.arrived[i], nt.expected[i]};
    if (reached(&w)) {
        return 0;
    }
    char msg[160];
    snprintf(msg, sizeof(msg), "%s: waiting for PE %d (%u of %u arrivals)", what, from,
             __atomic_load_n(w.arrived, __ATOMIC_RELAXED), w.expected);
    /* A collective's arrival comes only from the sender itself: a sender gone into finalize
     * (or exit) never sends it. Finalize's own sync waits for peers that may still compute. */
    if (slot == fsh_notify_final_slot()) {
        return fsh_progress_wait(reached, &w, msg, from);
    }
    return fsh_progress_wait_arrival(reached, &w, msg, from);
}

static char *slot_base(unsigned slot)
{
    return nt.scratch + (size_t)slot * nt.slot_bytes;
}

uint64_t *fsh_notify_words_in(unsigned slot, unsigned parity)
{
    return (uint64_t *)(slot_base(slot) + nt.words_in_off) + (size_t)(parity & 1) * nt.npes;
}

uint64_t *fsh_notify_words_out(unsigned slot)
{
    return (uint64_t *)(slot_base(slot) + nt.words_out_off);
}

uint64_t *fsh_notify_asks(unsigned slot)
{
    return (uint64_t *)(slot_base(slot) + nt.asks_off);
}

void *fsh_notify_red(unsigned slot, unsigned parity, unsigned round)
{
    return slot_base(slot) + nt.red_off + ((size_t)(parity & 1) * nt.red_rounds + round) * RED_CHUNK;
}

size_t fsh_notify_red_chunk(void)
{
    return RED_CHUNK;
}

unsigned fsh_notify_red_rounds(void)
{
    return nt.red_rounds;
}

int fsh_notify_dest(const void *dest, size_t len, enum fsh_seg *seg, uint64_t *off)
{
    if (fsh_mr_lookup(dest, len ? len : 1, seg, off) != 0) {
        return fsh_err(-EFAULT, "pass a symmetric dest", "dest %p is not symmetric", dest);
    }
    return 0;
}

uint64_t fsh_notify_scratch_off(const void *p)
{
    return nt.scratch_off + (uint64_t)((const char *)p - nt.scratch);
}
