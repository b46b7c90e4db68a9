/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo.c: OpenSHMEM atomics as libfabric atomics, or, on a provider without any, as CPU atomics
 * applied by the target (below).
 *
 * Every OpenSHMEM AMO (standard, extended and bitwise) is bit-exact on the unsigned integer of
 * the same size: two's-complement addition does not depend on signedness, and fetch, set, swap
 * and compare-and-swap of a float are copies and comparisons of its bits. So only FI_UINT32 and
 * FI_UINT64 are ever used, and their support is queried once at init. A provider that has
 * atomics but lacks one of these ends the job at the first such AMO with the operation and
 * provider named (no emulation beside its atomics: it would not be atomic with respect to them).
 *
 * The whole job is one atomicity domain (the rule is local.c's): when every PE is on one node
 * and maps every other, every AMO is a CPU atomic on mapped memory (fsh_amo_apply below);
 * otherwise all AMOs, also those aimed at the calling PE, go through the fabric. AMOs on the
 * device heap are a domain of their own: every one is applied by a CPU under its heap's AMO lock
 * (the owner's, or a same-node peer's through the mapping: devmap.c), whatever the registration
 * path, so they are atomic with respect to each other.
 *
 * On the fabric, the non-fetching ones (set, inc, add, and, or, xor) are posted as fetching
 * atomics whose result is dropped: a fetching atomic's completion means it was applied at the
 * target on every provider, which quiet needs, while FI_DELIVERY_COMPLETE on plain atomics is
 * not dependable (libfabric 1.17's shm crosses the results of operations in flight with it).
 * Operand, compare value and result travel through a bounce slot tied to the operation record
 * (registered once), so providers that need local descriptors work without a registration per
 * call; a fetched value is copied to the caller's buffer on completion.
 *
 * Except where one fetch can complete many of them (quiet's flush, below): where the provider
 * reports FI_ORDER_ATOMIC_RAW (or FI_ORDER_RAW, which covers atomics) in both tx and rx
 * msg_order (shm, tcp;ofi_rxm; never efa-direct), the engine counts writes (the write counter
 * counts atomic updates too: fi_ep_bind(3)) and the AMO leaves from the engine's endpoint (no
 * lane), the second and later non-fetching AMOs to a PE since the last quiet are posted as
 * plain atomics, injected and transmit-complete, with no record and no completion entry; the
 * write counter counts them and the PE is marked. Quiet (fsh_amo_flush) then posts ONE fetching
 * atomic read per marked PE, of the word the last such AMO updated there, and waits for it:
 * the target handles one endpoint's atomic fetch after the atomic updates posted before it
 * (ATOMIC_RAW), and a fetch completes only once it was applied there, so when it completes
 * every earlier AMO to that PE was applied. The first AMO to a PE since the last quiet keeps
 * the fetching way, so an AMO + quiet still costs one operation. All AMOs stay provider
 * atomics (one atomicity domain); fetching AMOs are unchanged. rma.c runs the flush in every
 * quiet, fence and pe_quiet (its flush hook, set here), and fence is quiet, so AMOs after a
 * fence follow the earlier ones. Under FABSHMEM_CHAOS=reorder the operations held back are
 * posted before the flush. FABSHMEM_PUT_COUNTER=0 (no write counter) and
 * SHMEM_THREAD_MULTIPLE (no counted writes) keep every AMO on the fetching way.
 *
 * Without provider atomics (efa-direct, or FABSHMEM_PROVIDER_PROFILE=efa-direct) every AMO is
 * a CPU atomic on the target's memory, so the job is still one atomicity domain: this PE's own
 * memory and that of PEs it maps (local.c) are updated directly; any other PE's memory is
 * updated by that PE's progress engine, applied by the target:
 *
 *   - the source holds an inbox of REQ_SLOTS 64-byte request slots at the target, granted on
 *     its first AMO there (lease.c, pool FSH_LEASE_AMO, FABSHMEM_AMO_PEERS inboxes per target)
 *     and kept until the target asks for it back (below);
 *   - a request {target segment << 56 | offset, operand, compare value, reply offset, op,
 *     size, tag} is staged in one of the source's OUT_SLOTS outbox slots (symmetric heap) and
 *     written into a free slot k of its inbox with immediate data FSH_IMM_AMO | chunk << 4 | k;
 *   - the target's engine, at that event (the whole request has landed), applies the op with
 *     fsh_amo_apply and queues the answer; at the end of the poll (handlers never post) it
 *     writes the 8-byte old value from the request slot back into the source's outbox slot
 *     (the reply offset) with immediate data FSH_IMM_AMO_REPLY | tag;
 *   - that event completes the AMO's operation record at the source (the fetched value is
 *     copied out, the context's track counts it complete) and frees slot k and the outbox slot.
 * Non-fetching AMOs are answered the same way: the answer is the acknowledgement that quiet
 * waits for (the record stays in flight on the context's track until it arrives), and it is
 * also the flow control (a slot is reused only after its answer, so after the target read it).
 * Arrival order does not matter: each request and answer is self-contained. A target that
 * stops progressing is found by the waits' liveness probes (the record names its PE).
 *
 * Inboxes are lent, not owned, so no AMO fails for want of one, whatever the number of sources:
 *   - a source without an inbox claims one and, when the target's are all held, waits for one
 *     (fsh_lease_claim_wait: its claim is queued at the target and served first come, first
 *     served when a holder gives an inbox back);
 *   - a target with claims waiting asks as many holders to give theirs back as there are
 *     claims waiting, those whose inbox received a request (or was granted) least recently
 *     first: an idle holder's goes before a busy one's;
 *   - a holder asked gives its inbox back once none of its requests there is in flight (every
 *     answer arrived, so the target read them all and no slot is written again): at the end of
 *     any poll, so also from the progress thread while the program computes or waits
 *     elsewhere; an AMO to that target meanwhile lets the ones in flight be answered, gives it
 *     back and queues for one again. A fresh grant is used for at least one request first.
 * Without waiting claims nothing moves: up to FABSHMEM_AMO_PEERS sources keep their inboxes,
 * and each AMO costs one request and one answer. Beyond that, an inbox changes hands at the
 * cost of a claim and a release, and a holder whose progress engine never runs (no progress
 * thread, computing) keeps its inbox until it next calls the library.
 */
#include "amo.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
#include "xport.h"

struct bounce {
    uint64_t operand;
    uint64_t compare;
    uint64_t result;
};

/* What each shmem op becomes: the transport's atomic op, and which call. */
struct mapping {
    int xop;  /* FSH_XA_* */
    int type; /* FSH_X_ATOMIC, FSH_X_FETCH, FSH_X_COMPARE */
    bool operand_is_one;
};

static const struct mapping map[] = {
    [FSH_AMO_FETCH] = {FSH_XA_READ, FSH_X_FETCH, false},
    [FSH_AMO_SET] = {FSH_XA_WRITE, FSH_X_ATOMIC, false},
    [FSH_AMO_SWAP] = {FSH_XA_WRITE, FSH_X_FETCH, false},
    [FSH_AMO_CSWAP] = {FSH_XA_CSWAP, FSH_X_COMPARE, false},
    [FSH_AMO_FETCH_INC] = {FSH_XA_SUM, FSH_X_FETCH, true},
    [FSH_AMO_INC] = {FSH_XA_SUM, FSH_X_ATOMIC, true},
    [FSH_AMO_FETCH_ADD] = {FSH_XA_SUM, FSH_X_FETCH, false},
    [FSH_AMO_ADD] = {FSH_XA_SUM, FSH_X_ATOMIC, false},
    [FSH_AMO_FETCH_AND] = {FSH_XA_BAND, FSH_X_FETCH, false},
    [FSH_AMO_AND] = {FSH_XA_BAND, FSH_X_ATOMIC, false},
    [FSH_AMO_FETCH_OR] = {FSH_XA_BOR, FSH_X_FETCH, false},
    [FSH_AMO_OR] = {FSH_XA_BOR, FSH_X_ATOMIC, false},
    [FSH_AMO_FETCH_XOR] = {FSH_XA_BXOR, FSH_X_FETCH, false},
    [FSH_AMO_XOR] = {FSH_XA_BXOR, FSH_X_ATOMIC, false},
};
#define NOPS (sizeof(map) / sizeof(map[0]))

static struct {
    struct bounce *bufs; /* [operation record index] */
    struct fsh_mr_set *reg; /* bufs, on every rail */
    void *desc[FSH_MAX_RAILS]; /* its descriptor on each rail, looked up once */
    /* supported[op][size == 8] */
    bool supported[NOPS][2];
    bool queried;
} provider_amo;

/* ---- AMOs applied by the target (no provider atomics), see the top of the file ---- */
#define REQ_SLOTS 16 /* requests in flight from one source to one target */
#define SLOT_BITS 4
#define OUT_SLOTS 64 /* requests in flight from this PE, all targets */
#define SEG_SHIFT 56
#define NO_BOX (-1)

struct req {
    uint64_t addr;    /* at the target: segment << SEG_SHIFT | offset */
    uint64_t operand;
    uint64_t compare;
    uint64_t reply;   /* heap offset at the source where the old value goes */
    uint64_t old;     /* the answer: the target writes it back from here, it lands here */
    uint32_t op;      /* enum fsh_amo_op */
    uint32_t size;    /* 4 or 8 */
    uint32_t tag;     /* the source's outbox slot, named by the answer's immediate data */
    uint32_t reserved[3];
};
_Static_assert(sizeof(struct req) == 64, "an AMO request slot is 64 bytes on the wire");
_Static_assert(REQ_SLOTS == 1 << SLOT_BITS, "slot bits");

struct pending {
    struct fsh_op *rec; /* the AMO's record, completed by the answer; NULL: slot free */
    int pe;
    unsigned k;         /* its slot in our inbox at pe */
};

/* This PE as a source, toward one target. */
struct peer {
    int16_t box;   /* our inbox (chunk) there, NO_BOX: none */
    uint16_t busy; /* its slots awaiting their answer */
    bool asked;    /* the target wants it back: given back once nothing is in flight there */
};

static struct {
    bool on;
    struct fsh_lease_pool pool; /* target side: inboxes of REQ_SLOTS requests */
    uint32_t *answers;          /* target side: chunk << SLOT_BITS | k of requests to answer */
    unsigned nanswers;
    uint64_t *used;             /* target side: [chunk] when it last got a request or a holder */
    uint64_t clock;
    bool in_hook;
    struct req *out;            /* [OUT_SLOTS] outgoing requests, in the registered heap */
    uint64_t out_off;
    uint64_t out_busy;          /* bit per outbox slot */
    struct pending pend[OUT_SLOTS];
    struct peer *peer;          /* [pe] */
    int *giving;                /* PEs whose inbox we hold and were asked for back */
    unsigned ngiving;
    int pinned;                 /* the PE a request is being made to: its inbox stays, -1 */
} target_amo;

/* ---- quiet's flush of injected non-fetching AMOs (see the top of the file) ---- */

/* A target's state since the last flush: no non-fetching AMO; one (posted fetching, with a
 * record: nothing to flush); more (the later ones injected and counted: flushed). */
enum { CLEAN, ONE, DIRTY };

/* Where a PE's last injected AMO went: the flush reads that word (it is registered, and a
 * read of it changes nothing). */
struct flush_word {
    uint64_t raddr, key;
    size_t size;
};

static struct {
    bool on;                  /* the provider orders an atomic fetch after atomic updates */
    bool plain[NOPS][2];      /* [op][size == 8]: posted as a plain atomic too */
    uint8_t *state;           /* [pe]: CLEAN, ONE or DIRTY */
    int *list;                /* the PEs not CLEAN, n of them */
    size_t n;
    int *flushing;            /* a flush's copy of the DIRTY ones (its posts may poll) */
    struct flush_word *word;  /* [pe] */
    struct fsh_op_track track; /* flushes in flight, whoever posted them */
} af;

static const char *op_name(int op)
{
    static const char *const names[] = {
        [FSH_AMO_FETCH] = "fetch", [FSH_AMO_SET] = "set", [FSH_AMO_SWAP] = "swap",
        [FSH_AMO_CSWAP] = "compare_swap", [FSH_AMO_FETCH_INC] = "fetch_inc",
        [FSH_AMO_INC] = "inc", [FSH_AMO_FETCH_ADD] = "fetch_add", [FSH_AMO_ADD] = "add",
        [FSH_AMO_FETCH_AND] = "fetch_and", [FSH_AMO_AND] = "and",
        [FSH_AMO_FETCH_OR] = "fetch_or", [FSH_AMO_OR] = "or",
        [FSH_AMO_FETCH_XOR] = "fetch_xor", [FSH_AMO_XOR] = "xor",
    };
    return (op > 0 && (size_t)op < NOPS) ? names[op] : "?";
}

/* The call an op is posted with: the non-fetching ones go as fetching (see above). */
static int post_type(int op)
{
    return map[op].type == FSH_X_ATOMIC ? FSH_X_FETCH : map[op].type;
}

static bool query(int op, size_t size)
{
    return fsh_xport_atomic_ok(map[op].xop, post_type(op), size);
}

static int by_target_init(long peers);

/* Quiet's flush, where the provider orders it (see the top of the file). */
static int flush_init(void)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    if (!fa->order_atomic_raw || fa->inject_size < sizeof(uint64_t) ||
        !provider_amo.supported[FSH_AMO_FETCH][0] || !provider_amo.supported[FSH_AMO_FETCH][1]) {
        return 0;
    }
    for (size_t op = 1; op < NOPS; op++) {
        if (map[op].type == FSH_X_ATOMIC) {
            af.plain[op][0] = fsh_xport_atomic_ok(map[op].xop, FSH_X_ATOMIC, sizeof(uint32_t));
            af.plain[op][1] = fsh_xport_atomic_ok(map[op].xop, FSH_X_ATOMIC, sizeof(uint64_t));
        }
    }
    size_t n = (size_t)fsh_rt.npes;
    af.state = calloc(n, sizeof(*af.state));
    af.list = calloc(n, sizeof(*af.list));
    af.flushing = calloc(n, sizeof(*af.flushing));
    af.word = calloc(n, sizeof(*af.word));
    if (!af.state || !af.list || !af.flushing || !af.word) {
        return fsh_err(-ENOMEM, "", "out of memory for the atomics' flush state of %zu PEs", n);
    }
    af.on = true;
    fsh_rma_set_flush_hook(fsh_amo_flush);
    return 0;
}

int fsh_amo_init(long peers)
{
    size_t depth = fsh_progress_depth();
    provider_amo.bufs = calloc(depth, sizeof(*provider_amo.bufs));
    if (!provider_amo.bufs) {
        return fsh_err(-ENOMEM, "lower FABSHMEM_TX_DEPTH", "out of memory for atomics' buffers");
    }
    int rc =
        fsh_mr_reg_local(provider_amo.bufs, depth * sizeof(*provider_amo.bufs), &provider_amo.reg);
    if (rc != 0) {
        return rc;
    }
    for (int r = 0; r < fsh_fabric_nrails(); r++) {
        provider_amo.desc[r] = fsh_mr_set_desc(provider_amo.reg, r);
    }
    if (fsh_fabric_none()) {
        return 0; /* no fabric: every PE is mapped, every AMO a CPU atomic (local.c) */
    }
    if (!fsh_fabric_attr()->has_atomics) {
        FSH_INFO("provider %s has no FI_ATOMIC: AMOs are CPU atomics, applied by the target's "
                 "progress engine where its memory is not mapped here", fsh_fabric_attr()->prov);
        return by_target_init(peers);
    }
    for (size_t op = 1; op < NOPS; op++) {
        provider_amo.supported[op][0] = query((int)op, sizeof(uint32_t));
        provider_amo.supported[op][1] = query((int)op, sizeof(uint64_t));
    }
    provider_amo.queried = true;
    return flush_init();
}

void fsh_amo_fini(void)
{
    if (target_amo.on) {
        fsh_progress_set_post_hook(FSH_POST_ANSWERS, NULL);
        fsh_lease_fini(&target_amo.pool);
        free(target_amo.answers);
        free(target_amo.used);
        free(target_amo.peer);
        free(target_amo.giving);
        memset(&target_amo, 0, sizeof(target_amo));
    }
    if (af.on) {
        fsh_rma_set_flush_hook(NULL);
    }
    free(af.state);
    free(af.list);
    free(af.flushing);
    free(af.word);
    memset(&af, 0, sizeof(af));
    fsh_mr_dereg_local(provider_amo.reg);
    free(provider_amo.bufs);
    memset(&provider_amo, 0, sizeof(provider_amo));
}

bool fsh_amo_by_target(void)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    return fa->prov[0] && !fa->has_atomics;
}

size_t fsh_amo_heap_bytes(int npes, long peers)
{
    return fsh_lease_heap_bytes(npes, fsh_lease_chunks(npes, peers),
                                REQ_SLOTS * sizeof(struct req)) +
           fsh_heap_rounded(OUT_SLOTS * sizeof(struct req));
}

static struct req *in_slot(unsigned chunk, unsigned k)
{
    return (struct req *)fsh_lease_chunk(&target_amo.pool, chunk) + k;
}

/* Target side, in the engine: a request landed in slot k of chunk c. Apply it, queue the
 * answer (posted by answer_all at the end of the poll). */
static void on_request(uint32_t payload, uint32_t high)
{
    unsigned k = payload & (REQ_SLOTS - 1), c = payload >> SLOT_BITS;
    int src = fsh_lease_owner(&target_amo.pool, c);
    if (src < 0) {
        FSH_WARN("atomic request in inbox %u, which no PE holds: dropped", c);
        return;
    }
    struct req *r = in_slot(c, k);
    enum fsh_seg seg = (enum fsh_seg)(r->addr >> SEG_SHIFT);
    uint64_t off = r->addr & ((1ULL << SEG_SHIFT) - 1);
    void *at = seg < FSH_SEG_DEVICE ? fsh_mr_local_addr(seg, off) : NULL;
    enum fsh_seg got;
    uint64_t got_off;
    r->old = 0;
    if (at && (r->size == 4 || r->size == 8) && off % r->size == 0 && r->op > 0 &&
        r->op <= FSH_AMO_XOR && fsh_mr_lookup(at, r->size, &got, &got_off) == 0 && got == seg) {
        fsh_amo_apply((int)r->op, at, &r->operand, &r->compare, &r->old, r->size);
    } else {
        /* The source checked its arguments: this is no request of ours. Answered anyway, so
         * the source does not wait forever. */
        FSH_WARN("atomic request from PE %d (op %u, %u bytes at segment %d offset %llu) is "
                 "malformed: not applied", src, r->op, r->size, (int)seg,
                 (unsigned long long)off);
    }
    target_amo.used[c] = ++target_amo.clock;
    target_amo.answers[target_amo.nanswers++] = payload;
}

/* Target side: a holder was granted chunk c (counts as a use: not asked back at once). */
static void on_grant(unsigned c)
{
    target_amo.used[c] = ++target_amo.clock;
}

/* Post the queued answers. */
static int answer_all(void)
{
    int rc = 0;
    while (target_amo.nanswers && rc == 0) {
        uint32_t payload = target_amo.answers[--target_amo.nanswers];
        unsigned k = payload & (REQ_SLOTS - 1), c = payload >> SLOT_BITS;
        struct req *r = in_slot(c, k);
        uint32_t imm = ((uint32_t)FSH_IMM_AMO_REPLY << FSH_IMM_KIND_SHIFT) |
                       (r->tag & FSH_IMM_PAYLOAD_MASK);
        rc = fsh_rma_write(&fsh_ctx_default, NULL, &r->old, sizeof(r->old),
                           fsh_lease_owner(&target_amo.pool, c), FSH_SEG_HEAP, r->reply, true, imm);
    }
    return rc;
}

/* Target side: claims wait for an inbox. Ask one holder per claim waiting (beyond those asked
 * already), the least recently used inbox first. */
static int ask_back(void)
{
    int rc = 0;
    while (rc == 0 && fsh_lease_waiting(&target_amo.pool) > target_amo.pool.nasked) {
        unsigned best = target_amo.pool.nchunks;
        for (unsigned c = 0; c < target_amo.pool.nchunks; c++) {
            if (fsh_lease_owner(&target_amo.pool, c) >= 0 &&
                !fsh_lease_asked(&target_amo.pool, c) &&
                (best == target_amo.pool.nchunks || target_amo.used[c] < target_amo.used[best])) {
                best = c;
            }
        }
        if (best == target_amo.pool.nchunks) {
            break; /* every inbox is asked for already */
        }
        FSH_TRACE("atomics: %u claim(s) wait for an inbox here: asking PE %d for inbox %u back",
                  fsh_lease_waiting(&target_amo.pool), fsh_lease_owner(&target_amo.pool, best),
                  best);
        rc = fsh_lease_ask(&target_amo.pool, best);
    }
    return rc;
}

/* Source side: the PEs whose inbox we hold and were asked for back (target_amo.giving). */
static void list_giving(int pe)
{
    target_amo.giving[target_amo.ngiving++] = pe;
}

static void unlist_giving(int pe)
{
    for (unsigned i = 0; i < target_amo.ngiving; i++) {
        if (target_amo.giving[i] == pe) {
            target_amo.giving[i] = target_amo.giving[--target_amo.ngiving];
            return;
        }
    }
}

/* Give our inbox at pe back. Only once none of our requests there is in flight. */
static int give_back(int pe)
{
    struct peer *q = &target_amo.peer[pe];
    q->box = NO_BOX;
    if (q->asked) {
        q->asked = false;
        unlist_giving(pe);
    }
    FSH_TRACE("atomics: giving our inbox at PE %d back", pe);
    return fsh_lease_release(&target_amo.pool, pe);
}

/* Source side: give back the inboxes asked for that have nothing in flight. */
static int give_back_idle(void)
{
    int rc = 0;
    for (unsigned i = 0; i < target_amo.ngiving && rc == 0;) {
        int pe = target_amo.giving[i];
        if (target_amo.peer[pe].busy || pe == target_amo.pinned) {
            i++;
        } else {
            rc = give_back(pe); /* takes giving[i] out: the next one moved there */
        }
    }
    return rc;
}

/* The post hook, at the end of every poll: answers, asks and give-backs. A post that polls
 * (queue full) runs the hook again: it then returns at once, and these loops post what the
 * nested poll queued. */
static int at_poll_end(void)
{
    if (target_amo.in_hook || (target_amo.nanswers == 0 && target_amo.ngiving == 0 &&
                               fsh_lease_waiting(&target_amo.pool) <= target_amo.pool.nasked)) {
        return 0;
    }
    target_amo.in_hook = true;
    int rc = answer_all();
    if (rc == 0) {
        rc = ask_back();
    }
    if (rc == 0) {
        rc = give_back_idle();
    }
    target_amo.in_hook = false;
    return rc;
}

/* Source side, in the engine: pe asks for its inbox back. One that arrives when we hold none
 * there and claim none is from before we gave it back: ignored. */
static void on_ask(int pe)
{
    struct peer *q = &target_amo.peer[pe];
    if (q->asked || (q->box == NO_BOX && target_amo.pinned != pe)) {
        return;
    }
    q->asked = true;
    if (q->box != NO_BOX) {
        list_giving(pe);
    }
}

/* Source side, in the engine: the target applied the request of outbox slot tag. */
static void on_answer(uint32_t tag, uint32_t high)
{
    struct pending *p = tag < OUT_SLOTS ? &target_amo.pend[tag] : NULL;
    if (!p || !p->rec) {
        FSH_WARN("answer to atomic request %u, which is not in flight: dropped", tag);
        return;
    }
    struct fsh_op *rec = p->rec;
    p->rec = NULL;
    target_amo.peer[p->pe].busy &= (uint16_t)~(1u << p->k);
    target_amo.out_busy &= ~(1ULL << tag);
    fsh_progress_op_complete(rec);
}

static int by_target_init(long peers)
{
    /* peers is 1..FSH_LEASE_MAX_CHUNKS: env.c checks FABSHMEM_AMO_PEERS at load. */
    unsigned chunks = fsh_lease_chunks(fsh_rt.npes, peers);
    char what[160];
    snprintf(what, sizeof(what), "atomics' inboxes (%u sources x %d requests x %zu bytes)",
             chunks, REQ_SLOTS, sizeof(struct req));
    int rc = fsh_lease_init(&target_amo.pool, FSH_LEASE_AMO, chunks, REQ_SLOTS * sizeof(struct req),
                            on_grant, what, "lower FABSHMEM_AMO_PEERS");
    if (rc != 0) {
        return rc;
    }
    target_amo.pool.on_ask = on_ask;
    target_amo.pinned = -1;
    target_amo.on = true;
    target_amo.out =
        fsh_heap_reserve(OUT_SLOTS * sizeof(struct req), 64, "atomics' outgoing requests", NULL);
    if (!target_amo.out) {
        return fsh_err_last()->code;
    }
    enum fsh_seg seg;
    size_t out_bytes = OUT_SLOTS * sizeof(struct req);
    if (fsh_mr_lookup(target_amo.out, out_bytes, &seg, &target_amo.out_off) != 0 ||
        seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "atomics' outgoing requests are not in the registered heap");
    }
    size_t n = (size_t)fsh_rt.npes;
    target_amo.answers = calloc((size_t)chunks * REQ_SLOTS, sizeof(uint32_t));
    target_amo.used = calloc(chunks, sizeof(uint64_t));
    target_amo.peer = calloc(n, sizeof(struct peer));
    target_amo.giving = malloc(n * sizeof(int));
    if (!target_amo.answers || !target_amo.used || !target_amo.peer || !target_amo.giving) {
        return fsh_err(-ENOMEM, "", "out of memory for the atomics' state of %zu PEs", n);
    }
    for (size_t i = 0; i < n; i++) {
        target_amo.peer[i].box = NO_BOX;
    }
    rc = fsh_progress_register_imm(FSH_IMM_AMO, on_request);
    if (rc == 0) {
        rc = fsh_progress_register_imm(FSH_IMM_AMO_REPLY, on_answer);
    }
    fsh_progress_set_post_hook(FSH_POST_ANSWERS, at_poll_end);
    return rc;
}

struct slot_wait {
    int pe;
};

/* A free request slot at pe and a free outbox slot. */
static bool slot_free(const void *arg)
{
    const struct slot_wait *w = arg;
    return target_amo.peer[w->pe].busy != (uint16_t)((1u << REQ_SLOTS) - 1) &&
           target_amo.out_busy != ~0ULL;
}

/* Nothing of ours in flight in our inbox at pe. */
static bool drained(const void *arg)
{
    const struct slot_wait *w = arg;
    return target_amo.peer[w->pe].busy == 0;
}

/* Our inbox at pe for the next request: the one we hold, unless pe asked for it back (then it
 * goes back once what is in flight there was answered, and we queue for one again). */
static int inbox(int pe)
{
    struct peer *q = &target_amo.peer[pe];
    struct slot_wait w = {pe};
    int rc = 0;
    if (q->box != NO_BOX && q->asked) {
        if (!drained(&w)) {
            rc = fsh_progress_wait(drained, &w, "atomic: waiting for the target to apply earlier "
                                                "atomics before giving its inbox back", pe);
        }
        if (rc == 0) {
            rc = give_back(pe);
        }
    }
    if (rc == 0 && q->box == NO_BOX) {
        int c = fsh_lease_claim_wait(&target_amo.pool, pe);
        if (c < 0) {
            return c;
        }
        q->box = (int16_t)c;
        if (q->asked) {
            list_giving(pe); /* asked while we waited: after this request */
        }
    }
    return rc;
}

/* The AMO as a request to pe's engine. Caller holds the engine lock; *rec is the record
 * (counted posted) on success. */
static int request(struct fsh_ctx *ctx, int op, enum fsh_seg seg, uint64_t off,
                   const void *value, const void *cond, void *fetch, size_t size, int pe,
                   struct fsh_op_track *sync)
{
    FSH_ASSERT_ENGINE_HELD();
    struct peer *q = &target_amo.peer[pe];
    int rc = inbox(pe);
    if (rc != 0) {
        return rc;
    }
    struct slot_wait w = {pe};
    if (!slot_free(&w)) {
        rc = fsh_progress_wait(slot_free, &w, "atomic: waiting for the target to apply "
                                              "earlier atomics", pe);
        if (rc != 0) {
            return rc;
        }
    }
    struct fsh_op *rec = fsh_progress_op_get(FSH_OP_ATOMIC, pe, size);
    if (!rec) {
        return fsh_err_last() ? fsh_err_last()->code : -EIO;
    }
    unsigned k = (unsigned)__builtin_ctz(~(unsigned)q->busy);
    unsigned tag = (unsigned)__builtin_ctzll(~target_amo.out_busy);
    struct req *r = &target_amo.out[tag];
    *r = (struct req){
        .addr = ((uint64_t)seg << SEG_SHIFT) | off,
        .reply = target_amo.out_off + tag * sizeof(struct req) + offsetof(struct req, old),
        .op = (uint32_t)op,
        .size = (uint32_t)size,
        .tag = tag,
    };
    if (value) {
        memcpy(&r->operand, value, size);
    }
    if (cond) {
        memcpy(&r->compare, cond, size);
    }
    rec->track = &ctx->track;
    rec->sync = sync;
    if (fetch && fsh_amo_fetches(op)) {
        rec->copy_dst = fetch;
        rec->copy_src = &r->old;
        rec->copy_len = size;
    }
    q->busy |= (uint16_t)(1u << k);
    target_amo.out_busy |= 1ULL << tag;
    target_amo.pend[tag] = (struct pending){rec, pe, k};
    /* Counted before the request goes: its answer may arrive within the post's own polls. */
    fsh_progress_op_posted(rec, NULL, false);
    uint64_t slot =
        fsh_lease_chunk_off(&target_amo.pool, (unsigned)q->box) + k * sizeof(struct req);
    uint32_t imm = ((uint32_t)FSH_IMM_AMO << FSH_IMM_KIND_SHIFT) |
                   ((uint32_t)q->box << SLOT_BITS) | k;
    /* On the default context: the record, on ctx's track, covers it (answered means landed). */
    rc = fsh_rma_write(&fsh_ctx_default, NULL, r, sizeof(*r), pe, FSH_SEG_HEAP, slot, true, imm);
    if (rc != 0 && target_amo.pend[tag].rec == rec) {
        target_amo.pend[tag].rec = NULL;
        q->busy &= (uint16_t)~(1u << k);
        target_amo.out_busy &= ~(1ULL << tag);
        fsh_progress_op_unissued(rec, false);
    }
    return rc;
}

static int by_target(struct fsh_ctx *ctx, int op, enum fsh_seg seg, uint64_t off,
                     const void *value, const void *cond, void *fetch, size_t size, int pe,
                     bool nbi)
{
    /* Our own memory and memory we map: the same CPU atomic the target's engine applies. */
    void *at = pe == fsh_rt.pe ? fsh_mr_local_addr(seg, off) : fsh_local_addr(pe, seg, off);
    if (at) {
        fsh_amo_apply(op, at, value, cond, fetch, size);
        return 0;
    }
    struct fsh_op_track sync = {0, 0, 0};
    bool wait = fsh_amo_fetches(op) && !nbi;
    fsh_progress_lock();
    /* Our inbox at pe stays ours until the request is in it (the post hook gives back
     * others, polled meanwhile). */
    int pinned = target_amo.pinned;
    target_amo.pinned = pe;
    int rc = request(ctx, op, seg, off, value, cond, fetch, size, pe, wait ? &sync : NULL);
    target_amo.pinned = pinned;
    fsh_progress_unlock();
    if (rc == 0 && wait) {
        rc = fsh_progress_wait_track(&sync, "atomic: waiting for the target to apply it");
    }
    return rc;
}

/* Mark r's target (a non-fetching AMO about to be posted): true when it is not the first there
 * since the last flush, so that it goes injected and counted, and the flush reads its word. */
static bool flush_mark(int pe, const struct fsh_xreq *r)
{
    FSH_ASSERT_ENGINE_HELD();
    if (af.state[pe] == CLEAN) {
        af.state[pe] = ONE;
        af.list[af.n] = pe;
        __atomic_store_n(&af.n, af.n + 1, __ATOMIC_RELAXED);
        return false;
    }
    af.state[pe] = DIRTY;
    af.word[pe] = (struct flush_word){r->raddr, r->key, r->len};
    return true;
}

/* r (a non-fetching AMO) as a plain atomic, injected (the operand is copied at the call),
 * transmit-complete, with no record: the write counter counts it on ctx's track, and quiet's
 * flush completes it. */
static int post_counted(struct fsh_ctx *ctx, struct fsh_xreq *r, const struct mapping *m,
                        const void *value)
{
    uint64_t operand = 0;
    if (m->operand_is_one) {
        operand = 1;
    } else if (value) {
        memcpy(&operand, value, r->len);
    }
    r->type = FSH_X_ATOMIC;
    r->op = NULL;
    r->counted = &ctx->track;
    r->flags = FSH_XF_INJECT;
    r->local = &operand;
    return fsh_xport_post(r);
}

/* One fetching read of the word of pe's last injected AMO, on the flush track. */
static int post_flush(int pe)
{
    const struct flush_word *w = &af.word[pe];
    struct fsh_op *o = fsh_progress_op_get(FSH_OP_ATOMIC, pe, w->size);
    if (!o) {
        return fsh_err_last() ? fsh_err_last()->code : -EIO;
    }
    o->track = &af.track;
    o->sync = NULL;
    struct bounce *b = &provider_amo.bufs[fsh_progress_op_index(o)];
    b->operand = 0;
    struct fsh_xreq r = {
        .type = FSH_X_FETCH,
        .op = o,
        .pe = pe,
        .path = fsh_fabric_path_atomic(pe),
        .len = w->size,
        .flags = FSH_XF_COMPLETION,
        .atomic_op = FSH_XA_READ,
        .raddr = w->raddr,
        .key = w->key,
        .local = &b->operand,
        .result = &b->result,
        .compare = &b->compare,
    };
    r.desc = r.result_desc = r.compare_desc = provider_amo.desc[r.path.rail];
    return fsh_xport_post(&r);
}

int fsh_amo_flush(void)
{
    /* Nothing marked: no lock taken (this thread's own marks, made before, are seen). A flush
     * another thread posted may cover AMOs of this one: waited for too. */
    if (!af.on || __atomic_load_n(&af.n, __ATOMIC_RELAXED) == 0) {
        return !af.on || fsh_progress_track_done(&af.track)
                   ? 0
                   : fsh_progress_wait_track(&af.track, "quiet: waiting for a flush of atomics");
    }
    fsh_progress_lock();
    /* Held operations (chaos) go first: the flush completes only what was issued before it. */
    int rc = af.n ? fsh_xport_release_held() : 0;
    /* The set is taken whole before anything is posted: AMOs marked while the flushes are
     * posted (their posts may poll) start a new set, for the next quiet. */
    size_t nflush = 0;
    for (size_t i = 0; i < af.n; i++) {
        int pe = af.list[i];
        if (af.state[pe] == DIRTY) {
            af.flushing[nflush++] = pe;
        }
        af.state[pe] = CLEAN;
    }
    __atomic_store_n(&af.n, 0, __ATOMIC_RELAXED);
    for (size_t i = 0; i < nflush && rc == 0; i++) {
        rc = post_flush(af.flushing[i]);
    }
    fsh_progress_unlock();
    /* What was posted is waited for, also after a failed post. */
    int wrc = fsh_progress_wait_track(&af.track, "quiet: waiting for the flush of atomics");
    return rc ? rc : wrc;
}

int fsh_amo(struct fsh_ctx *ctx, int op, enum fsh_seg seg, uint64_t off, const void *value,
            const void *cond, void *fetch, size_t size, int pe, bool nbi)
{
    if (fsh_backend_segment(seg)) {
        /* The device heap's: applied by the owner's CPU; complete on return, also when nbi. */
        return fsh_backend_amo(op, off, value, cond, fetch, size, pe);
    }
    if (fsh_local.cpu_atomics) {
        void *target = fsh_local_addr(pe, seg, off);
        if (target) {
            fsh_amo_apply(op, target, value, cond, fetch, size);
            return 0;
        }
        /* Unreachable in a one-node job where every PE is mapped; a segment that does not
         * exist (no data) falls through to the fabric's error. */
    }
    if (target_amo.on) {
        return by_target(ctx, op, seg, off, value, cond, fetch, size, pe, nbi);
    }
    if (!provider_amo.queried || !provider_amo.supported[op][size == 8]) {
        return fsh_err(-ENOTSUP, "choose a provider with atomics (efa, shm, tcp;ofi_rxm: FI_PROVIDER)",
                       "provider %s cannot do atomic %s on %zu-byte integers",
                       fsh_fabric_attr()->prov, op_name(op), size);
    }
    const struct mapping *m = &map[op];
    struct fsh_op_track sync = {0, 0, 0};
    bool wait = m->type != FSH_X_ATOMIC && !nbi;
    struct fsh_xreq r = {
        .type = post_type(op),
        .pe = pe,
        .path = fsh_fabric_path_atomic(pe),
        .len = size,
        .flags = FSH_XF_COMPLETION,
        .atomic_op = m->xop,
    };
    fsh_mr_remote(pe, seg, off, &r.raddr, &r.key);
    /* A context with an endpoint of its own posts there, under its own lock, where the
     * bounce needs no registration (its records' scratch is plain memory). */
    struct fsh_lane *lane = ctx->lane && !fsh_fabric_attr()->mr_local ? ctx->lane : NULL;
    if (lane) {
        fsh_lane_lock(lane);
        r.op = fsh_lane_op_get(lane, FSH_OP_ATOMIC, pe, size);
    } else {
        fsh_progress_lock();
        if (m->type == FSH_X_ATOMIC && af.on && af.plain[op][size == 8] &&
            fsh_progress_counts_writes() && flush_mark(pe, &r)) {
            int rc = post_counted(ctx, &r, m, value);
            fsh_progress_unlock();
            return rc;
        }
        r.op = fsh_progress_op_get(FSH_OP_ATOMIC, pe, size);
    }
    int rc = r.op ? 0 : fsh_err_last() ? fsh_err_last()->code : -EIO;
    if (r.op) {
        struct fsh_op *o = r.op;
        o->track = lane ? &ctx->ltrack : &ctx->track;
        o->sync = wait ? &sync : NULL;
        _Static_assert(sizeof(struct bounce) <= FSH_LANE_SCRATCH, "a bounce fits a lane's scratch");
        struct bounce *b =
            lane ? fsh_lane_scratch(lane, o) : &provider_amo.bufs[fsh_progress_op_index(o)];
        b->operand = 0;
        if (m->operand_is_one) {
            b->operand = 1;
        } else if (value) {
            memcpy(&b->operand, value, size);
        }
        if (cond) {
            memcpy(&b->compare, cond, size);
        }
        if (m->type != FSH_X_ATOMIC && fetch) {
            o->copy_dst = fetch;
            o->copy_src = &b->result;
            o->copy_len = size;
        }
        r.local = &b->operand;
        r.result = &b->result;
        r.compare = &b->compare;
        r.desc = r.result_desc = r.compare_desc = lane ? NULL : provider_amo.desc[r.path.rail];
        rc = lane ? fsh_xport_post_lane(lane, &r) : fsh_xport_post(&r);
    }
    if (lane) {
        fsh_lane_unlock(lane);
    } else {
        fsh_progress_unlock();
    }
    if (rc == 0 && wait) {
        rc = lane ? fsh_lane_wait_track(lane, &sync, "atomic: waiting for the old value")
                  : fsh_progress_wait_track(&sync, "atomic: waiting for the old value");
    }
    return rc;
}
