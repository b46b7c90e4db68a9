/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal.c: put-with-signal, correct when the fabric delivers out of order.
 *
 * The rule: the target applies a signal only after all the data it guards has landed, and the
 * initiator needs neither a fence nor a round trip to make that so.
 *
 * Inboxes. Every PE lends inboxes from a pool in its symmetric heap (FABSHMEM_SIGNAL_PEERS of
 * them, lease chunks: lease.c). A source's first signal to a target claims one there (a write
 * with immediate data, then a read of the answer: once per pair) and keeps it for the job. An
 * inbox is S descriptor slots (S = FABSHMEM_SIGNAL_SLOTS, a power of two <= 64) followed by
 * its applied word. A source the target has no inbox left for sends its signals as a put,
 * completed at the target, then an atomic SET or ADD on the signal (put_then_signal).
 *
 * Wire protocol. A put-with-signal from PE s to PE t with sequence number q (s's q-th signal
 * to t) uses slot k = q mod S of s's inbox at t and is at most 1 + P fabric writes, each
 * carrying a 32-bit immediate (EFA carries exactly 4 bytes):
 *
 *     bits 31..28  kind: 2 = descriptor landed (FSH_IMM_SIG_DESC), 3 = a data piece landed
 *                  (FSH_IMM_SIG_DATA)
 *     bits 27..6   s's inbox at t (its lease chunk there), not the source PE
 *     bits  5..0   slot k
 *
 *   - P data writes (P = 0 when the data travels inline, else ceil(len / max message size)),
 *     straight from the source buffer to the destination, immediate kind 3;
 *   - one descriptor write, staged in s's outgoing ring (registered, at least 256 slots shared
 *     by all targets, each freed once its target applied it), into slot k of s's inbox at t,
 *     immediate kind 2: {q, signal address (segment << 56 | offset), signal value,
 *     SHMEM_SIGNAL_SET or _ADD, P, and for small puts the data itself with its
 *     destination}: 64 bytes (a slot) with up to 16 bytes of data, or for data up to a
 *     quarter of the inbox (S * 64 / 4 bytes, less the 48-byte header) m consecutive slots,
 *     the data running on through them. Such a descriptor takes sequence numbers q .. q+m-1,
 *     and never wraps: when it would pass the inbox's end, the slots up to the end are
 *     skipped (their numbers given up as padding, which the descriptor names and the target
 *     counts applied with it) and it starts at slot 0.
 *
 * A signal of any 64-bit value and either operation thus travels in the descriptor, not in
 * the 4-byte immediate, which only names the inbox and slot. The target counts, per (inbox,
 * slot), the data pieces seen and whether the descriptor was seen; the arrival order does not
 * matter: pieces before the descriptor are counted and wait, a descriptor before its pieces
 * waits for them.
 * When the descriptor is there and the count reaches its P, the target copies inline data,
 * applies the signal with a release-ordered atomic (SET: store; ADD: fetch-add, wrapping
 * modulo 2^64), and marks q applied. A completion event for a write is raised only once that
 * write's data is in memory, so "all P events seen" means "all data landed".
 *
 * Flow control: slot k can only be reused once the target applied the signal that held it. The
 * target publishes in s's inbox its applied word = the q below which every signal from s was
 * applied (signals may complete out of order; a 64-bit mask of completed slots beyond the
 * prefix advances it). The initiator allows S signals in flight per target; when they are all
 * in flight it reads that word at t (one 8-byte get) and waits, driving progress, until a slot
 * frees. That round trip happens only when a target falls S signals behind, never in the
 * common case.
 *
 * Completion: a delivered descriptor is not yet an applied signal (nor, for small puts, copied
 * data): the target applies it when its progress engine sees the events. shmem_quiet and
 * shmem_fence promise the signal update is complete, so quiet also waits until every target
 * that has outstanding signals from this PE reports them applied: one 8-byte read per such
 * target, all in flight at once, and nothing at all when no signal is outstanding.
 *
 * Fabric operations per put-with-signal: 1 up to the inline limit (464 bytes with the default
 * 32 slots), 2 for anything up to the provider's message size, 1 + ceil(len / max message)
 * beyond. Where the provider takes two remote segments per write (shm, tcp; EFA takes one), a
 * put whose descriptor and data fit its inject size together (shm: up to 4032 bytes), or a
 * bounce slot (FABSHMEM_BOUNCE_SIZE: tcp up to 8 KiB), is one write all the same: both
 * are staged, injected or posted from the slot, and scattered to the slot and to the
 * destination; its one event comes once both landed, so the descriptor names no pieces.
 *
 * Where the provider carries 8 bytes of immediate data (shm, tcp; not EFA), a signal whose
 * value and word fit travels in the immediate itself (FSH_IMM_SIG_WIDE): the data goes from the
 * source straight to its destination in one write, and the target applies the signal from the
 * immediate when the write's event comes (its data landed): no descriptor, no copy at the
 * target, no place in the ring. The slot is taken and applied as above, so flow control and
 * quiet are the same. The 60 bits after the kind: slot 6 | source's chunk here 8 | operation 1
 * (1: ADD) | segment 1 (0: heap, 1: data) | value 18 | signal offset / 8 26 (the first 512 MiB
 * of the segment). It is used for data of 1 byte up to the message size, from host memory to
 * host memory, above the inline size (below it, a blocking put-with-signal that the provider
 * cannot inject copies into a descriptor and returns at once) or injected or non-blocking.
 *
 * A target whose memory is mapped here (local.c) takes none of this: the data is copied, then
 * the signal is updated with the same release atomic the target's engine would use, so a
 * waiter that sees the signal sees the data; it is complete (applied) on return.
 */
#include "signal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amo.h"
#include "arrive.h"
#include "backend.h"
#include "error.h"
#include "fabric.h"
#include "heap.h"
#include "lease.h"
#include "local.h"
#include "log.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"
#include "shmem.h"

#define SLOT_DATA 16 /* data bytes in a descriptor's first slot */
#define SLOT_BITS 6
#define SEG_SHIFT 56
/* The wide form's fields (bit offsets in the 60 bits after the kind). */
#define WIDE_CHUNK_BITS 8
#define WIDE_OP_AT 14
#define WIDE_SEG_AT 15
#define WIDE_VALUE_AT 16
#define WIDE_VALUE_BITS 18
#define WIDE_OFF_AT 34
#define WIDE_OFF_BITS 26
_Static_assert(SLOT_BITS + WIDE_CHUNK_BITS == WIDE_OP_AT &&
               WIDE_VALUE_AT + WIDE_VALUE_BITS == WIDE_OFF_AT &&
               WIDE_OFF_AT + WIDE_OFF_BITS == 64 - 4, "the wide form fills the 60 bits");
_Static_assert(FSH_LEASE_MAX_CHUNKS <= 1 << WIDE_CHUNK_BITS, "a chunk fits the wide form");

struct desc {
    uint64_t seq;
    uint64_t sig;   /* segment << 56 | offset */
    uint64_t value;
    uint64_t dest;  /* inline data destination: segment << 56 | offset */
    uint32_t op;    /* SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD */
    uint32_t pieces;
    uint32_t inline_len; /* data bytes inline: data[] and, past 16, the slots that follow */
    uint32_t skip;       /* slots given up as padding before this one (never wrapping) */
    uint8_t data[SLOT_DATA];
};
_Static_assert(sizeof(struct desc) == 64, "a descriptor slot is 64 bytes on the wire");
_Static_assert(sizeof(struct desc) <= FSH_RMA_BOUNCE_EXTRA, "a bounce slot holds a descriptor "
               "ahead of FABSHMEM_BOUNCE_SIZE bytes of data");
#define HEADER offsetof(struct desc, data)

struct slot_state {
    uint32_t arrived;
    uint32_t have_desc;
};

/* A target's inbox for one source: its descriptor slots, then the applied prefix (one lease
 * chunk). */
#define BOX_BYTES(slots) ((size_t)(slots) * sizeof(struct desc) + 64)
#define RING_MIN 256 /* descriptor slots of the outgoing ring, at least */
#define NO_BOX (-2)  /* not asked yet */
#define DENIED_BOX (-1)

/* A descriptor in the outgoing ring: free once its target applied sequence number end. */
struct ring_entry {
    int pe;
    uint64_t end;      /* the target's applied prefix that frees it */
    uint64_t ring_end; /* the ring position after it */
};

static struct {
    unsigned slots;
    size_t inline_max; /* largest data sent inside the descriptor */
    /* target side: the inboxes, one lease chunk per source that asked */
    struct fsh_lease_pool pool;
    struct slot_state *state; /* [chunk * slots + k] */
    uint64_t *done_mask;      /* [chunk]: slots applied beyond the prefix */
    /* initiator side: descriptors staged until applied, in a ring shared by all targets */
    struct desc *ring;        /* registered heap */
    unsigned ring_slots;
    uint64_t head, tail;      /* ring positions taken, freed */
    struct ring_entry *fifo;  /* [ring_slots]: the ring's descriptors, oldest first */
    uint64_t fifo_head, fifo_tail;
    uint64_t *probe;          /* [dst]: landing spots of applied-prefix reads (registered) */
    uint8_t *pair;            /* a descriptor and its data, staged for one injected write
                               * (NULL: the provider takes one remote segment per write) */
    bool wide;                /* signals may travel in 8 bytes of immediate data */
    /* initiator side, per target */
    int16_t *box;             /* [dst]: our chunk at dst, NO_BOX or DENIED_BOX */
    uint64_t *sent;           /* [dst]: next sequence number */
    uint64_t *known;          /* [dst]: last applied prefix read from dst */
    int *pending;             /* targets that may have unapplied signals from us */
    size_t npending;
    bool *is_pending;         /* [dst] */
} sigput;

static struct desc *inbox(unsigned chunk)
{
    return fsh_lease_chunk(&sigput.pool, chunk);
}

static uint64_t *applied(unsigned chunk)
{
    return (uint64_t *)(inbox(chunk) + sigput.slots);
}

static inline uint64_t pack_addr(enum fsh_seg seg, uint64_t off)
{
    return ((uint64_t)seg << SEG_SHIFT) | off;
}

static inline void *unpack_addr(uint64_t a)
{
    return fsh_mr_local_addr((enum fsh_seg)(a >> SEG_SHIFT), a & ((1ULL << SEG_SHIFT) - 1));
}

/* The signal update, ordered after every store before it (and, on the direct GPU paths,
 * after the NIC's writes into GPU memory are visible to the GPU). */
static void update(uint64_t *sig, uint64_t value, uint32_t op)
{
    fsh_backend_guard();
    if (op == SHMEM_SIGNAL_ADD) {
        __atomic_fetch_add(sig, value, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(sig, value, __ATOMIC_RELEASE);
    }
}

/* Slots a descriptor with len bytes of inline data takes. */
static unsigned desc_slots(size_t len)
{
    return len <= SLOT_DATA ? 1 : 1 + (unsigned)((len - SLOT_DATA + sizeof(struct desc) - 1) /
                                                  sizeof(struct desc));
}

/* Sequence numbers [first, end) of chunk's source are applied: advance the applied prefix over
 * them and over any applied out of order before (they wait in the mask). */
static void mark_applied(unsigned chunk, uint64_t first, uint64_t end)
{
    uint64_t *mask = &sigput.done_mask[chunk];
    uint64_t prefix = *applied(chunk);
    for (uint64_t j = first; j < end; j++) {
        *mask |= 1ULL << (j % sigput.slots);
    }
    while (*mask & (1ULL << (prefix % sigput.slots))) {
        *mask &= ~(1ULL << (prefix % sigput.slots));
        prefix++;
    }
    __atomic_store_n(applied(chunk), prefix, __ATOMIC_RELEASE);
}

static void apply(unsigned chunk, unsigned k, struct slot_state *st)
{
    const struct desc *d = &inbox(chunk)[k];
    if (d->inline_len) {
        memcpy(unpack_addr(d->dest), (const char *)d + HEADER, d->inline_len);
    }
    update(unpack_addr(d->sig), d->value, d->op);
    st->arrived = 0;
    st->have_desc = 0;
    mark_applied(chunk, d->seq - d->skip, d->seq + desc_slots(d->inline_len));
}

/* Immediate payload: the source's chunk here << SLOT_BITS | slot. */
static void on_event(uint32_t payload, bool is_desc)
{
    unsigned k = payload & ((1u << SLOT_BITS) - 1);
    unsigned chunk = payload >> SLOT_BITS;
    if (fsh_lease_owner(&sigput.pool, chunk) < 0 || k >= sigput.slots) {
        FSH_WARN("signal event for inbox %u slot %u, which no PE holds: dropped", chunk, k);
        return;
    }
    struct slot_state *st = &sigput.state[(size_t)chunk * sigput.slots + k];
    if (is_desc) {
        st->have_desc = 1;
    } else {
        st->arrived++;
    }
    if (st->have_desc && st->arrived == inbox(chunk)[k].pieces) {
        apply(chunk, k, st);
    }
}

static void on_desc(uint32_t payload, uint32_t high)
{
    on_event(payload, true);
}

static void on_data(uint32_t payload, uint32_t high)
{
    on_event(payload, false);
}

static uint64_t wide_field(uint64_t body, unsigned at, unsigned bits)
{
    return (body >> at) & ((1ULL << bits) - 1);
}

/* The wide form: its write's data landed; the signal is in the immediate. */
static void on_wide(uint32_t payload, uint32_t high)
{
    uint64_t body = payload | (uint64_t)high << FSH_IMM_KIND_SHIFT;
    unsigned k = (unsigned)wide_field(body, 0, SLOT_BITS);
    unsigned chunk = (unsigned)wide_field(body, SLOT_BITS, WIDE_CHUNK_BITS);
    if (fsh_lease_owner(&sigput.pool, chunk) < 0 || k >= sigput.slots) {
        FSH_WARN("signal for inbox %u slot %u, which no PE holds: dropped", chunk, k);
        return;
    }
    enum fsh_seg seg = wide_field(body, WIDE_SEG_AT, 1) ? FSH_SEG_DATA : FSH_SEG_HEAP;
    uint64_t *sig = fsh_mr_local_addr(seg, wide_field(body, WIDE_OFF_AT, WIDE_OFF_BITS) * 8);
    update(sig, wide_field(body, WIDE_VALUE_AT, WIDE_VALUE_BITS),
           wide_field(body, WIDE_OP_AT, 1) ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET);
    mark_applied(chunk, k, k + 1); /* only the slot's place in the mask counts */
}

/* Does this put-with-signal travel in the wide form? inject: the provider injects src. */
static bool wide_fits(const void *src, size_t len, bool inject, enum fsh_seg dseg,
                      enum fsh_seg sseg, uint64_t soff, uint64_t value, bool nbi)
{
    return sigput.wide && len > 0 && len <= fsh_fabric_attr()->max_msg_size &&
           (nbi || len > sigput.inline_max || inject) && dseg != FSH_SEG_DEVICE &&
           (sseg == FSH_SEG_HEAP || sseg == FSH_SEG_DATA) && !fsh_mr_is_device(src, len) &&
           value >> WIDE_VALUE_BITS == 0 && soff % 8 == 0 && (soff / 8) >> WIDE_OFF_BITS == 0;
}

/* The wide form's immediate data: kind, then who (chunk << SLOT_BITS | slot) and the signal. */
static uint64_t wide_imm(uint32_t who, int op, enum fsh_seg sseg, uint64_t soff, uint64_t value)
{
    uint64_t body = who | (uint64_t)(op == SHMEM_SIGNAL_ADD) << WIDE_OP_AT |
                    (uint64_t)(sseg == FSH_SEG_DATA) << WIDE_SEG_AT | value << WIDE_VALUE_AT |
                    (soff / 8) << WIDE_OFF_AT;
    return (uint64_t)FSH_IMM_SIG_WIDE << FSH_IMM_KIND_SHIFT | (body & FSH_IMM_PAYLOAD_MASK) |
           (body >> FSH_IMM_KIND_SHIFT) << 32;
}

static unsigned ring_size(unsigned slots)
{
    return 4 * slots > RING_MIN ? 4 * slots : RING_MIN;
}

/* The outgoing ring and the read landings, one block. */
static size_t ring_block_bytes(unsigned slots, int npes)
{
    return ring_size(slots) * sizeof(struct desc) + (size_t)npes * sizeof(uint64_t);
}

size_t fsh_signal_heap_bytes(int npes, long slots, long peers)
{
    return fsh_lease_heap_bytes(npes, fsh_lease_chunks(npes, peers), BOX_BYTES(slots)) +
           fsh_heap_rounded(ring_block_bytes((unsigned)slots, npes));
}

int fsh_signal_init(long slots, long peers)
{
    if (slots < 1 || slots > 64 || (slots & (slots - 1))) {
        return fsh_err(-EINVAL, "use a power of two from 1 to 64",
                       "FABSHMEM_SIGNAL_SLOTS=%ld is not a power of two in 1..64", slots);
    }
    /* peers is 1..FSH_LEASE_MAX_CHUNKS: env.c checks FABSHMEM_SIGNAL_PEERS at load. */
    sigput.slots = (unsigned)slots;
    /* Up to a quarter of a peer's inbox inline: a stream of such puts still keeps four in
     * flight; at least one slot's worth. */
    size_t quarter = sigput.slots * sizeof(struct desc) / 4;
    sigput.inline_max = (quarter > sizeof(struct desc) ? quarter : sizeof(struct desc)) - HEADER;
    size_t n = (size_t)fsh_rt.npes;
    unsigned chunks = fsh_lease_chunks(fsh_rt.npes, peers);
    char what[192];
    snprintf(what, sizeof(what), "put-with-signal's inboxes (%u sources x %u slots x %zu bytes)",
             chunks, sigput.slots, sizeof(struct desc));
    int rc = fsh_lease_init(&sigput.pool, FSH_LEASE_SIGNAL, chunks, BOX_BYTES(sigput.slots), NULL,
                            what, "lower FABSHMEM_SIGNAL_PEERS or FABSHMEM_SIGNAL_SLOTS");
    if (rc != 0) {
        return rc;
    }
    sigput.ring_slots = ring_size(sigput.slots);
    size_t ring = sigput.ring_slots * sizeof(struct desc);
    snprintf(what, sizeof(what),
             "put-with-signal's outgoing ring (%u x %zu bytes) and %zu PEs' "
             "read landings",
             sigput.ring_slots, sizeof(struct desc), n);
    uint8_t *block = fsh_heap_reserve(ring_block_bytes(sigput.slots, fsh_rt.npes), 64, what,
                                      "lower FABSHMEM_SIGNAL_SLOTS");
    if (!block) {
        return fsh_err_last()->code;
    }
    sigput.ring = (struct desc *)block;
    sigput.probe = (uint64_t *)(block + ring);
    sigput.state = calloc((size_t)chunks * sigput.slots, sizeof(*sigput.state));
    sigput.done_mask = calloc(chunks, sizeof(uint64_t));
    sigput.fifo = calloc(sigput.ring_slots, sizeof(*sigput.fifo));
    sigput.box = malloc(n * sizeof(int16_t));
    sigput.sent = calloc(n, sizeof(uint64_t));
    sigput.known = calloc(n, sizeof(uint64_t));
    sigput.pending = calloc(n, sizeof(int));
    sigput.is_pending = calloc(n, sizeof(bool));
    if (!sigput.state || !sigput.done_mask || !sigput.fifo || !sigput.box || !sigput.sent ||
        !sigput.known || !sigput.pending || !sigput.is_pending) {
        return fsh_err(-ENOMEM, "", "out of memory for signal state of %zu peers", n);
    }
    for (size_t i = 0; i < n; i++) {
        sigput.box[i] = NO_BOX;
    }
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    if (fa->rma_iov_limit >= 2 && fa->inject_size > sizeof(struct desc) + sigput.inline_max) {
        sigput.pair = malloc(fa->inject_size);
        if (!sigput.pair) {
            return fsh_err(-ENOMEM, "", "out of memory for put-with-signal's staging");
        }
    }
    sigput.wide = fa->cq_data_size >= sizeof(uint64_t);
    rc = fsh_progress_register_imm(FSH_IMM_SIG_DESC, on_desc);
    if (rc == 0) {
        rc = fsh_progress_register_imm(FSH_IMM_SIG_DATA, on_data);
    }
    if (rc == 0) {
        rc = fsh_progress_register_imm(FSH_IMM_SIG_WIDE, on_wide);
    }
    fsh_rma_set_quiet_hook(fsh_signal_quiet);
    return rc;
}

void fsh_signal_fini(void)
{
    fsh_lease_fini(&sigput.pool);
    free(sigput.state);
    free(sigput.done_mask);
    free(sigput.fifo);
    free(sigput.box);
    free(sigput.sent);
    free(sigput.known);
    free(sigput.pending);
    free(sigput.is_pending);
    free(sigput.pair);
    fsh_rma_set_quiet_hook(NULL);
    memset(&sigput, 0, sizeof(sigput));
}

struct slot_wait {
    int pe;
    uint64_t seq;  /* the first sequence number to take */
    unsigned need; /* slots to take, padding included */
};

/* Where pe keeps its applied prefix for us: the end of our chunk there. */
static uint64_t applied_off(int pe, const void *unused)
{
    (void)unused;
    return fsh_lease_chunk_off(&sigput.pool, (unsigned)sigput.box[pe]) +
           sigput.slots * sizeof(struct desc);
}

static void known_at_least(int pe, uint64_t v)
{
    if (v > sigput.known[pe]) {
        sigput.known[pe] = v;
    }
}

static void probe_take(int pe)
{
    known_at_least(pe, __atomic_load_n(&sigput.probe[pe], __ATOMIC_ACQUIRE));
}

/* Is there a free slot toward pe? Reads pe's applied prefix for us when there is not. */
static bool slot_free(const void *arg)
{
    const struct slot_wait *w = arg;
    if (w->seq + w->need - sigput.known[w->pe] <= sigput.slots) {
        return true;
    }
    uint64_t v;
    if (fsh_rma_read_word(w->pe, applied_off(w->pe, NULL), &sigput.probe[w->pe], sizeof(uint64_t),
                          &v, "put-with-signal: reading the target's applied count") == 0) {
        known_at_least(w->pe, v);
    }
    return w->seq + w->need - sigput.known[w->pe] <= sigput.slots;
}

/* Read the applied prefix of every pending target; keep those still behind. */
static bool all_applied(const void *arg)
{
    int *err = (int *)arg;
    *err = fsh_rma_read_words(&fsh_ctx_default, sigput.pending, sigput.npending, sigput.probe,
                              applied_off, NULL, "quiet: reading targets' applied signal counts");
    if (*err != 0) {
        return true;
    }
    size_t keep = 0;
    for (size_t i = 0; i < sigput.npending; i++) {
        int pe = sigput.pending[i];
        probe_take(pe);
        if (sigput.known[pe] < sigput.sent[pe]) {
            sigput.pending[keep++] = pe;
        } else {
            sigput.is_pending[pe] = false;
        }
    }
    __atomic_store_n(&sigput.npending, keep, __ATOMIC_RELAXED);
    return keep == 0;
}

/* Free the ring's oldest descriptors that their targets applied. */
static bool ring_reclaim(void)
{
    bool freed = false;
    while (sigput.fifo_tail < sigput.fifo_head) {
        const struct ring_entry *e = &sigput.fifo[sigput.fifo_tail % sigput.ring_slots];
        if (sigput.known[e->pe] < e->end) {
            break;
        }
        sigput.tail = e->ring_end;
        sigput.fifo_tail++;
        freed = true;
    }
    return freed;
}

struct ring_wait {
    unsigned need;
    int err;
};

static bool ring_room(const void *arg)
{
    struct ring_wait *w = (struct ring_wait *)arg;
    if (sigput.head + w->need - sigput.tail <= sigput.ring_slots || ring_reclaim()) {
        return sigput.head + w->need - sigput.tail <= sigput.ring_slots;
    }
    /* Learn what every target with signals of ours outstanding applied, all reads at once. */
    all_applied(&w->err);
    ring_reclaim();
    return w->err != 0 || sigput.head + w->need - sigput.tail <= sigput.ring_slots;
}

/* m consecutive ring slots (never wrapping) for a descriptor to pe that its target frees by
 * applying sequence number end - 1. */
static int ring_take(unsigned m, int pe, uint64_t end, struct desc **d)
{
    unsigned pos = (unsigned)(sigput.head % sigput.ring_slots);
    unsigned pad = pos + m > sigput.ring_slots ? sigput.ring_slots - pos : 0;
    struct ring_wait w = {pad + m, 0};
    if (!ring_room(&w)) {
        int rc = fsh_progress_wait(ring_room, &w,
                                   "put-with-signal: targets have not applied "
                                   "earlier signals",
                                   sigput.fifo[sigput.fifo_tail % sigput.ring_slots].pe);
        if (rc != 0) {
            return rc;
        }
    }
    if (w.err != 0) {
        return w.err;
    }
    *d = &sigput.ring[(sigput.head + pad) % sigput.ring_slots];
    sigput.head += pad + m;
    sigput.fifo[sigput.fifo_head % sigput.ring_slots] = (struct ring_entry){pe, end, sigput.head};
    sigput.fifo_head++;
    return 0;
}

int fsh_signal_quiet(void)
{
    /* Without the lock: a signal another thread issues at this moment is not one this quiet
     * must complete (it was not issued before the call). */
    if (__atomic_load_n(&sigput.npending, __ATOMIC_RELAXED) == 0) {
        return 0;
    }
    int err = 0;
    fsh_progress_lock();
    int rc = all_applied(&err) ? err
                               : fsh_progress_wait(all_applied, &err,
                                                   "quiet: waiting for targets to apply "
                                                   "put-with-signal operations",
                                                   sigput.npending ? sigput.pending[0] : -1);
    fsh_progress_unlock();
    return rc ? rc : err;
}

/* One put-with-signal's arguments, and what the variants' conditions and senders share. */
struct sig_call {
    struct fsh_ctx *ctx;
    enum fsh_seg dseg, sseg;
    uint64_t doff, soff, value;
    const void *src;
    size_t len;
    int op, pe;
    bool nbi;
    bool inject;              /* the provider injects src (fabric variants only) */
    uint64_t *lsig;           /* the signal mapped in this process, or NULL */
    void *ldest;              /* the destination mapped in this process, or NULL */
    struct fsh_op_track sync; /* a blocking put's writes that must leave before it returns */
};

/* A variant of put-with-signal: where it applies (its condition holds and no earlier row's
 * did) and what carries it out. The fabric rows run under the engine lock. */
struct sig_variant {
    const char *name;
    const char *what;
    bool (*applies)(const struct sig_call *c);
    int (*run)(struct sig_call *c);
};

/* The signal without an inbox at pe (its pool was full when we asked): the data complete at
 * pe first (delivery complete, as quiet completes puts), then the signal as a fabric atomic. */
static int put_then_signal(struct sig_call *c)
{
    struct fsh_op_track sync = {0, 0, 0};
    size_t max = fsh_fabric_attr()->max_msg_size;
    int rc = 0;
    for (size_t done = 0; done < c->len && rc == 0; done += max) {
        size_t n = c->len - done < max ? c->len - done : max;
        rc = fsh_rma_write(c->ctx, &sync, (const char *)c->src + done, n, c->pe, c->dseg,
                           c->doff + done, false, 0);
    }
    int wrc = fsh_progress_wait_track(&sync, "put-with-signal: waiting for the data to land");
    if (rc == 0 && wrc == 0) {
        wrc = fsh_arrive_landed(c->pe); /* where completions say nothing of the target's memory */
    }
    if (rc == 0 && wrc == 0) {
        rc = fsh_amo(c->ctx, c->op == SHMEM_SIGNAL_ADD ? FSH_AMO_ADD : FSH_AMO_SET, c->sseg,
                     c->soff, &c->value, NULL, NULL, sizeof(uint64_t), c->pe, c->nbi);
    }
    return rc ? rc : wrc;
}

/* Our inbox at pe: asked for on the first signal to pe, kept for the job. */
static int box_of(int pe)
{
    if (sigput.box[pe] == NO_BOX) {
        int c = fsh_lease_claim(&sigput.pool, pe);
        if (c == -ENOSPC) {
            FSH_INFO("put-with-signal: PE %d has no inbox left for this PE (FABSHMEM_SIGNAL_PEERS="
                     "%u); signals to it travel as a put and an atomic",
                     pe, sigput.pool.nchunks);
            c = DENIED_BOX;
        } else if (c < 0) {
            return c;
        }
        sigput.box[pe] = (int16_t)c;
    }
    return 0;
}

/* Wait until slots for m descriptor slots are free at c->pe: the first sequence number in *q,
 * the slots skipped before it (to the inbox's end) in *skip. Inline data takes m slots from k
 * on; slots up to the inbox's end that cannot hold them are skipped. */
static int slots_wait(const struct sig_call *c, unsigned m, uint64_t *q, unsigned *skip)
{
    unsigned k0 = (unsigned)(sigput.sent[c->pe] % sigput.slots);
    *skip = k0 + m > sigput.slots ? sigput.slots - k0 : 0;
    struct slot_wait w = {c->pe, sigput.sent[c->pe], *skip + m};
    if (!slot_free(&w)) {
        int rc = fsh_progress_wait(slot_free, &w, "put-with-signal: the target has not applied the earlier signals", c->pe);
        if (rc != 0) {
            return rc;
        }
    }
    *q = w.seq + *skip;
    return 0;
}

/* Sequence numbers up to end are taken: pe has signals outstanding (quiet asks it). */
static void slots_taken(int pe, uint64_t end)
{
    sigput.sent[pe] = end;
    if (!sigput.is_pending[pe]) {
        sigput.is_pending[pe] = true;
        sigput.pending[sigput.npending] = pe;
        __atomic_store_n(&sigput.npending, sigput.npending + 1, __ATOMIC_RELAXED);
    }
}

/* Who sends slot q: the immediate's payload (our inbox at pe, the slot). */
static uint32_t who_of(int pe, uint64_t q)
{
    return ((uint32_t)sigput.box[pe] << SLOT_BITS) | (unsigned)(q % sigput.slots);
}

/* The descriptor's header for sequence number q; its slot's offset at pe in *at. */
static void desc_fill(struct desc *d, const struct sig_call *c, uint64_t q, unsigned skip,
                      uint64_t *at)
{
    memset(d, 0, sizeof(*d));
    d->seq = q;
    d->skip = skip;
    d->sig = pack_addr(c->sseg, c->soff);
    d->value = c->value;
    d->op = (uint32_t)c->op;
    *at = fsh_lease_chunk_off(&sigput.pool, (unsigned)sigput.box[c->pe]) +
          (q % sigput.slots) * sizeof(struct desc);
}

static uint32_t imm_desc(uint32_t who)
{
    return ((uint32_t)FSH_IMM_SIG_DESC << FSH_IMM_KIND_SHIFT) | who;
}

/* The descriptor (with inline data: HEADER + len bytes) stays in the ring until the target
 * applied it, so it needs no wait here, injected or not. */
static int desc_send(const struct sig_call *c, const struct desc *d, size_t dlen, uint64_t at,
                     uint32_t who)
{
    return fsh_rma_write(c->ctx, NULL, d, dlen, c->pe, FSH_SEG_HEAP, at, true, imm_desc(who));
}

/* Variant conditions: each as fsh_signal_put tested it, the earlier rows' failing. */
/* The mapped row's condition and sender, on their own for fsh_signal_put's first test (which
 * needs no sig_call built). */
static inline bool mapped_holds(const uint64_t *lsig, const void *ldest, size_t len)
{
    return lsig && (ldest || len == 0);
}

static inline int mapped_put(void *ldest, const void *src, size_t len, uint64_t *lsig,
                             uint64_t value, int op)
{
    if (len) {
        memcpy(ldest, src, len);
    }
    update(lsig, value, (uint32_t)op);
    return 0;
}

static bool is_mapped(const struct sig_call *c)
{
    return mapped_holds(c->lsig, c->ldest, c->len);
}

static bool is_denied(const struct sig_call *c)
{
    return sigput.box[c->pe] == DENIED_BOX;
}

static bool is_wide(const struct sig_call *c)
{
    return wide_fits(c->src, c->len, c->inject, c->dseg, c->sseg, c->soff, c->value, c->nbi);
}

static bool is_inline(const struct sig_call *c)
{
    return c->len <= sigput.inline_max;
}

static bool is_pair_inject(const struct sig_call *c)
{
    return sigput.pair && fsh_rma_pair_fits(sizeof(struct desc), c->src, c->len);
}

static bool is_pair_bounce(const struct sig_call *c)
{
    return fsh_fabric_attr()->rma_iov_limit >= 2 && !fsh_mr_is_device(c->src, c->len);
}

static bool always(const struct sig_call *c)
{
    (void)c;
    return true;
}

/* Variant senders. */
static int run_mapped(struct sig_call *c)
{
    return mapped_put(c->ldest, c->src, c->len, c->lsig, c->value, c->op);
}

static int run_wide(struct sig_call *c)
{
    uint64_t q;
    unsigned skip;
    int rc = slots_wait(c, 1, &q, &skip);
    if (rc != 0) {
        return rc;
    }
    slots_taken(c->pe, q + 1);
    return fsh_rma_write(c->ctx, !c->nbi && !c->inject ? &c->sync : NULL, c->src, c->len, c->pe,
                         c->dseg, c->doff, true,
                         wide_imm(who_of(c->pe, q), c->op, c->sseg, c->soff, c->value));
}

static int run_inline(struct sig_call *c)
{
    unsigned m = desc_slots(c->len), skip;
    uint64_t q, at;
    struct desc *d;
    int rc = slots_wait(c, m, &q, &skip);
    if (rc == 0) {
        rc = ring_take(m, c->pe, q + m, &d);
    }
    if (rc != 0) {
        return rc;
    }
    slots_taken(c->pe, q + m);
    desc_fill(d, c, q, skip, &at);
    d->inline_len = (uint32_t)c->len;
    d->dest = pack_addr(c->dseg, c->doff);
    if (c->len) {
        memcpy((char *)d + HEADER, c->src, c->len); /* on through the slots that follow */
    }
    return desc_send(c, d, c->len > SLOT_DATA ? HEADER + c->len : sizeof(*d), at,
                     who_of(c->pe, q));
}

/* The descriptor and the data in one write from stage, scattered to the slot and to dest: the
 * write's event comes once both landed, so the descriptor waits for no piece. */
static int pair_send(struct sig_call *c, uint8_t *stage, uint64_t q, unsigned skip)
{
    struct desc *d = (struct desc *)(void *)stage;
    uint64_t at;
    slots_taken(c->pe, q + 1);
    desc_fill(d, c, q, skip, &at);
    memcpy(stage + sizeof(*d), c->src, c->len);
    return fsh_rma_write_pair(c->ctx, stage, c->pe, FSH_SEG_HEAP, at, sizeof(*d), c->dseg,
                              c->doff, c->len, imm_desc(who_of(c->pe, q)));
}

/* The data in pieces of the message size, each with an immediate, then the descriptor from
 * the ring, which counts them. */
static int pieces_send(struct sig_call *c, uint64_t q, unsigned skip)
{
    struct desc *d;
    uint64_t at;
    int rc = ring_take(1, c->pe, q + 1, &d);
    if (rc != 0) {
        return rc;
    }
    slots_taken(c->pe, q + 1);
    desc_fill(d, c, q, skip, &at);
    size_t max = fsh_fabric_attr()->max_msg_size;
    d->pieces = (uint32_t)((c->len + max - 1) / max);
    uint32_t who = who_of(c->pe, q);
    uint32_t imm = ((uint32_t)FSH_IMM_SIG_DATA << FSH_IMM_KIND_SHIFT) | who;
    for (size_t done = 0; done < c->len && rc == 0; done += max) {
        size_t n = c->len - done < max ? c->len - done : max;
        const char *piece = (const char *)c->src + done;
        bool wait = !c->nbi && !fsh_rma_injects(piece, n);
        rc = fsh_rma_write(c->ctx, wait ? &c->sync : NULL, piece, n, c->pe, c->dseg,
                           c->doff + done, true, imm);
    }
    return rc != 0 ? rc : desc_send(c, d, sizeof(*d), at, who);
}

/* sigput.pair is injected: no place in the ring (which keeps what must stay until the target
 * applied it). */
static int run_pair_inject(struct sig_call *c)
{
    uint64_t q;
    unsigned skip;
    int rc = slots_wait(c, 1, &q, &skip);
    return rc != 0 ? rc : pair_send(c, sigput.pair, q, skip);
}

/* From a bounce slot (rma.c's, given back when the write completed) while one that holds it
 * is free; else as pieces. */
static int run_pair_bounce(struct sig_call *c)
{
    uint64_t q;
    unsigned skip;
    int rc = slots_wait(c, 1, &q, &skip);
    if (rc != 0) {
        return rc;
    }
    uint8_t *stage = fsh_progress_bounce_take(sizeof(struct desc) + c->len);
    return stage ? pair_send(c, stage, q, skip) : pieces_send(c, q, skip);
}

static int run_pieces(struct sig_call *c)
{
    uint64_t q;
    unsigned skip;
    int rc = slots_wait(c, 1, &q, &skip);
    return rc != 0 ? rc : pieces_send(c, q, skip);
}

/* The variants, in the order they are tried: the first whose condition holds carries the put
 * (docs/signal.md shows this table; SHMEM_INFO=1 prints which applies to which sizes). */
enum { V_MAPPED, V_DENIED, V_WIDE, V_INLINE, V_PAIR_INJECT, V_PAIR_BOUNCE, V_PIECES, V_N };
static const struct sig_variant variants[V_N] = {
    [V_MAPPED] = {"mapped", "same node: copy, then a release atomic on the signal", is_mapped,
                  run_mapped},
    [V_DENIED] = {"no-inbox", "the target has no inbox for us: put, wait, then an AMO",
                  is_denied, put_then_signal},
    [V_WIDE] = {"wide-imm", "one write, the signal in 8 bytes of immediate data", is_wide,
                run_wide},
    [V_INLINE] = {"inline", "the data inside the descriptor", is_inline, run_inline},
    [V_PAIR_INJECT] = {"pair-inject", "descriptor and data in one injected write",
                       is_pair_inject, run_pair_inject},
    [V_PAIR_BOUNCE] = {"pair-bounce", "descriptor and data in one write from a bounce slot "
                       "(pieces when none is free)", is_pair_bounce, run_pair_bounce},
    [V_PIECES] = {"pieces", "data writes, then the descriptor from the ring", always,
                  run_pieces},
};

/* The first variant from `from` on whose condition holds (the last one's always does). */
static inline const struct sig_variant *sig_select(const struct sig_call *c, unsigned from)
{
    const struct sig_variant *v = &variants[from];
    while (!v->applies(c)) {
        v++;
    }
    return v;
}

int fsh_signal_put(struct fsh_ctx *ctx, enum fsh_seg dseg, uint64_t doff, const void *src,
                   size_t len, enum fsh_seg sseg, uint64_t soff, uint64_t value, int op, int pe,
                   bool nbi)
{
    /* The table's first row (is_mapped, run_mapped) tested as it is, before anything else. */
    uint64_t *lsig = fsh_local_addr(pe, sseg, soff);
    void *ldest = len ? fsh_local_addr(pe, dseg, doff) : NULL;
    if (mapped_holds(lsig, ldest, len)) {
        return mapped_put(ldest, src, len, lsig, value, op);
    }
    /* The fabric rows, from the second on: our inbox at pe (claimed on the first signal)
     * decides the first of them. */
    struct sig_call c = {.ctx = ctx, .dseg = dseg, .sseg = sseg, .doff = doff, .soff = soff,
                         .value = value, .src = src, .len = len, .op = op, .pe = pe, .nbi = nbi,
                         .lsig = lsig, .ldest = ldest};
    fsh_progress_lock();
    int rc = box_of(pe);
    if (rc == 0) {
        c.inject = !is_denied(&c) && fsh_rma_injects(src, len);
        rc = sig_select(&c, V_DENIED)->run(&c);
    }
    fsh_progress_unlock();
    /* A blocking put-with-signal returns when the source may be reused: at once when it was
     * copied (inline or injected), else when its pieces completed. */
    if (rc == 0 && !nbi && !fsh_progress_track_done(&c.sync)) {
        rc = fsh_progress_wait_track(&c.sync, "put-with-signal: waiting for the data to leave");
    }
    return rc;
}

/* "464 B", "4 KiB", "8 MiB": a size for SHMEM_INFO. */
static const char *size_str(size_t n, char *buf, size_t len)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    while (u < 4 && n >= 1024 && n % 1024 == 0) {
        n /= 1024;
        u++;
    }
    snprintf(buf, len, "%zu %s", n, unit[u]);
    return buf;
}

void fsh_signal_print_info(void)
{
    int mapped = 0, fabric = 0;
    for (int pe = 0; pe < fsh_rt.npes; pe++) {
        fsh_local_addr(pe, FSH_SEG_HEAP, 0) ? mapped++ : fabric++;
    }
    char line[1024], a[32], b[32];
    size_t len = sizeof(line);
    int n = mapped ? snprintf(line, len, "put-with-signal: mapped PEs (%d of %d): any size: %s",
                              mapped, fsh_rt.npes, variants[V_MAPPED].name)
                   : snprintf(line, len, "put-with-signal: mapped PEs: none");
    if (fsh_fabric_none()) {
        printf("  %s\n", line);
        return;
    }
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    n += snprintf(line + n, len - (size_t)n, "; fabric PEs (%d):", fabric);
    if (sigput.wide) {
        n += snprintf(line + n, len - (size_t)n, " 1 B to %s: %s where it fits (host memory, "
                      "value < 2^%u, signal in the heap's first %s or static data",
                      size_str(fa->max_msg_size, a, sizeof(a)), variants[V_WIDE].name,
                      WIDE_VALUE_BITS, size_str((size_t)8 << WIDE_OFF_BITS, b, sizeof(b)));
        if (fa->inject_size < sigput.inline_max) {
            n += snprintf(line + n, len - (size_t)n, ", not blocking from %zu B to %zu B",
                          fa->inject_size + 1, sigput.inline_max);
        }
        n += snprintf(line + n, len - (size_t)n, "), else");
    }
    n += snprintf(line + n, len - (size_t)n, " <= %s: %s",
                  size_str(sigput.inline_max, a, sizeof(a)), variants[V_INLINE].name);
    if (sigput.pair) {
        n += snprintf(line + n, len - (size_t)n, "; <= %s: %s",
                      size_str(fa->inject_size - sizeof(struct desc), a, sizeof(a)),
                      variants[V_PAIR_INJECT].name);
    }
    if (fa->rma_iov_limit >= 2) {
        n += snprintf(line + n, len - (size_t)n, "; larger: %s (%s when no free bounce slot "
                      "holds it: run time)", variants[V_PAIR_BOUNCE].name, variants[V_PIECES].name);
    } else {
        n += snprintf(line + n, len - (size_t)n, "; larger: %s", variants[V_PIECES].name);
    }
    if (sigput.pool.nchunks >= (unsigned)fsh_rt.npes) {
        snprintf(line + n, len - (size_t)n, "; %s: never (%u inboxes for %d PEs)",
                 variants[V_DENIED].name, sigput.pool.nchunks, fsh_rt.npes);
    } else {
        snprintf(line + n, len - (size_t)n,
                 "; %s to a PE whose %u inboxes are taken (run "
                 "time, FABSHMEM_SIGNAL_PEERS)",
                 variants[V_DENIED].name, sigput.pool.nchunks);
    }
    printf("  %s\n", line);
}
