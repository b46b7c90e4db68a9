/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arrive.c: remote completion by counting (FABSHMEM_REMOTE_COMPLETION).
 *
 * Where the provider cannot say that a write is in the target's memory (efa-direct completes
 * a write once sent), every plain write carries immediate data (FSH_IMM_ARRIVE), the target's
 * progress engine counts it once the data is in place, and quiet reads the counts.
 *
 * The target's side is on_arrival (its progress engine, under the engine lock, one writer per
 * word); the initiator's, fsh_arrive_posted (rma_post.c, on the engine or a lane, after the write
 * was handed over: a write that failed to post is not waited for) and the quiets below. Counts
 * are 64-bit: they never wrap. A write posted again after a rail failed could land twice, so
 * counted writes are not idempotent (xport.c ends the job when one is in flight on a failed
 * rail, naming it).
 *
 * Each sender has counts of its own at every target (count[slot * npes + src]): a quiet
 * waits until the target's count reaches what its sender had posted when the quiet began,
 * which proves those writes landed only if no later write of the same count could land in
 * their place. The engine's quiet holds the engine lock throughout, so nothing is posted
 * through the engine meanwhile; a lane's quiet makes the lane's writes wait (quiets), and no
 * other sender shares its counts. So contexts with endpoints of their own (lanes) keep their
 * own lock on this path too: slot 1.. is a lane's while it is open, and its counts carry on
 * when a later lane takes the slot (they only grow).
 * Memory: count[] and landing[] in the symmetric heap, 16 bytes per PE and slot (the lanes'
 * at most LANE_COUNTS_MAX); sent, known, the pending list and a quiet's scratch lists private,
 * 33 bytes per PE and slot used. */
#include "arrive.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "error.h"
#include "fabric.h"
#include "heap.h"
#include "log.h"
#include "mr.h"
#include "progress.h"
#include "rt.h"

/* A sender posts counted writes and reads their counts back: the engine (slot 0, under the
 * engine lock) or a context's own endpoint (slot 1..nslots-1, under its lane's lock). */
struct sender {
    uint64_t *landing;  /* registered (the heap): reads of targets' counts of this slot */
    uint64_t *sent;     /* writes posted to each PE */
    uint64_t *known;    /* what each PE last reported */
    int *pending;       /* the PEs with known < sent: npending of them */
    bool *is_pending;
    size_t npending;
    int *wait_pe;       /* a quiet's PEs and the counts they must reach */
    uint64_t *wait_want;
    int quiets;         /* a lane's quiets reading its counts now: its writes wait (post_lane) */
};
bool fsh_arrive_active;

static struct {
    uint64_t *count;    /* symmetric: count[slot * npes + src], plain writes that landed here */
    uint64_t count_off; /* its offset in the heap, the same on every PE */
    int nslots;         /* the engine and the lanes counted apart (fsh_arrive_lanes) */
    struct sender *s;   /* [nslots]; a lane's arrays are allocated at its slot's first use */
    int *free_slot;     /* lane slots not in use (engine lock) */
    int nfree;
    fsh_arrive_read_fn read; /* reads the targets' counts (rma.c's, given at init) */
} arrive_counts;

bool fsh_arrive_counts(void)
{
    return fsh_fabric_attr()->count_arrivals;
}

/* The heap a job gives the lanes' counts at most (counts and landing, 16 bytes per PE and
 * lane): 16 lanes up to 8,192 PEs, 1 at 131,072. */
#define LANE_COUNTS_MAX ((size_t)2 << 20)

/* The most lanes counted apart: FABSHMEM_CTX_ENDPOINTS (auto: the connectionless count), as
 * far as slot * npes + src fits the immediate data's payload and the counts LANE_COUNTS_MAX. */
static int counted_lanes_for(int npes, long want)
{
    size_t n1 = (size_t)(npes > 0 ? npes : 1);
    long fit = (long)(FSH_IMM_PAYLOAD_MASK / n1) - 1;
    long heap = (long)(LANE_COUNTS_MAX / (n1 * 2 * sizeof(uint64_t)));
    long n = want < 0 ? FSH_LANES_AUTO_MAX : want;
    n = n < fit ? n : fit;
    n = n < heap ? n : heap;
    return n < 0 ? 0 : (int)n;
}

int fsh_arrive_lanes(void)
{
    if (!fsh_arrive_counts() || !fsh_fabric_lanes_possible()) {
        return 0;
    }
    return counted_lanes_for(fsh_rt.npes, fsh_env()->FABSHMEM_CTX_ENDPOINTS);
}

size_t fsh_arrive_heap_bytes(int npes)
{
    size_t slots = 1 + (size_t)(fsh_fabric_lanes_possible()
                                    ? counted_lanes_for(npes, fsh_env()->FABSHMEM_CTX_ENDPOINTS)
                                    : 0);
    return 2 * fsh_heap_rounded(slots * (size_t)npes * sizeof(uint64_t));
}

static void on_arrival(uint32_t payload, uint32_t high)
{
    size_t idx = payload & FSH_IMM_PAYLOAD_MASK;
    if (!fsh_arrive_active) {
        return; /* after finalize's counting ended: nobody waits for it */
    }
    if (idx >= (size_t)arrive_counts.nslots * (size_t)fsh_rt.npes) {
        FSH_WARN("a write's arrival names PE %zu (slot %zu) of %d: not counted",
                 idx % (size_t)fsh_rt.npes, idx / (size_t)fsh_rt.npes, fsh_rt.npes);
        return;
    }
    __atomic_store_n(&arrive_counts.count[idx], arrive_counts.count[idx] + 1, __ATOMIC_RELEASE);
}

static void posted(struct sender *s, int pe)
{
    s->sent[pe]++;
    if (!s->is_pending[pe]) {
        s->is_pending[pe] = true;
        s->pending[s->npending] = pe;
        /* Read without the lock by fsh_arrive_quiet's fast exit. */
        __atomic_store_n(&s->npending, s->npending + 1, __ATOMIC_RELAXED);
    }
}

void fsh_arrive_posted(int slot, int pe)
{
    posted(&arrive_counts.s[slot], pe);
}

bool fsh_arrive_quieting(int slot)
{
    return arrive_counts.s[slot].quiets > 0;
}

/* A sender's private arrays (its landing is in the heap block, set by the caller). */
static int sender_alloc(struct sender *s, int npes)
{
    s->sent = calloc((size_t)npes, sizeof(uint64_t));
    s->known = calloc((size_t)npes, sizeof(uint64_t));
    s->pending = calloc((size_t)npes, sizeof(int));
    s->is_pending = calloc((size_t)npes, sizeof(bool));
    s->wait_pe = calloc((size_t)npes, sizeof(int));
    s->wait_want = calloc((size_t)npes, sizeof(uint64_t));
    if (!s->sent || !s->known || !s->pending || !s->is_pending || !s->wait_pe || !s->wait_want) {
        return fsh_err(-ENOMEM, "", "out of memory for the arrival counts of %d PEs", npes);
    }
    return 0;
}

static void sender_free(struct sender *s)
{
    free(s->sent);
    free(s->known);
    free(s->pending);
    free(s->is_pending);
    free(s->wait_pe);
    free(s->wait_want);
}

int fsh_arrive_init(fsh_arrive_read_fn read)
{
    if (!fsh_arrive_counts()) {
        return 0;
    }
    int npes = fsh_rt.npes, nslots = 1 + fsh_arrive_lanes();
    size_t per_slot = (size_t)npes * sizeof(uint64_t);
    size_t words = fsh_heap_rounded((size_t)nslots * per_slot);
    char what[160];
    snprintf(what, sizeof(what), "the arrival counts of remote completion (%d PEs x %d senders x "
             "16 bytes)", npes, nslots);
    uint8_t *block = fsh_heap_reserve(2 * words, 64, what,
                                      "use a provider with FI_DELIVERY_COMPLETE, lower "
                                      "FABSHMEM_CTX_ENDPOINTS, or raise SHMEM_SYMMETRIC_SIZE");
    if (!block) {
        return fsh_err_last()->code;
    }
    enum fsh_seg seg;
    if (fsh_mr_lookup(block, 2 * words, &seg, &arrive_counts.count_off) != 0 ||
        seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "the arrival counts are not in the registered heap");
    }
    arrive_counts.count = (uint64_t *)block;
    arrive_counts.nslots = nslots;
    arrive_counts.read = read;
    arrive_counts.s = calloc((size_t)nslots, sizeof(*arrive_counts.s));
    arrive_counts.free_slot = calloc((size_t)nslots, sizeof(int));
    if (!arrive_counts.s || !arrive_counts.free_slot) {
        return fsh_err(-ENOMEM, "", "out of memory for the arrival counts of %d senders", nslots);
    }
    for (int i = 0; i < nslots; i++) {
        arrive_counts.s[i].landing = (uint64_t *)(block + words + (size_t)i * per_slot);
    }
    for (int i = nslots - 1; i >= 1; i--) {
        arrive_counts.free_slot[arrive_counts.nfree++] = i;
    }
    int rc = sender_alloc(&arrive_counts.s[0], npes);
    if (rc == 0) {
        rc = fsh_progress_register_imm(FSH_IMM_ARRIVE, on_arrival);
    }
    if (rc == 0) {
        fsh_arrive_active = true;
    }
    return rc;
}

void fsh_arrive_fini(void)
{
    for (int i = 0; arrive_counts.s && i < arrive_counts.nslots; i++) {
        sender_free(&arrive_counts.s[i]);
    }
    free(arrive_counts.s);
    free(arrive_counts.free_slot);
    memset(&arrive_counts, 0, sizeof(arrive_counts));
    fsh_arrive_active = false;
}

/* A slot of counts for a new lane (engine lock): 0 when none is free or its arrays cannot be
 * had (the context then posts through the engine). Counting off: 0, nothing to count. */
int fsh_arrive_slot_take(void)
{
    if (!fsh_arrive_active || arrive_counts.nfree == 0) {
        return 0;
    }
    int slot = arrive_counts.free_slot[arrive_counts.nfree - 1];
    struct sender *s = &arrive_counts.s[slot];
    if (!s->sent && sender_alloc(s, fsh_rt.npes) != 0) {
        sender_free(s);
        uint64_t *landing = s->landing;
        memset(s, 0, sizeof(*s));
        s->landing = landing;
        fsh_err_clear();
        return 0;
    }
    arrive_counts.nfree--;
    return slot;
}

void fsh_arrive_slot_give(int slot)
{
    if (slot > 0) {
        arrive_counts.free_slot[arrive_counts.nfree++] = slot;
    }
}

const char *fsh_arrive_describe(void)
{
    if (fsh_arrive_active) {
        return "remote completion: targets count arrivals, quiet reads the counts "
               "(FABSHMEM_REMOTE_COMPLETION=count, or the provider has no delivery-complete)";
    }
    return fsh_fabric_attr()->delivery_complete
               ? "remote completion: the provider's delivery-complete"
               : "remote completion: the provider's default completion "
                 "(FABSHMEM_REMOTE_COMPLETION=delivery)";
}

/* A quiet's targets: the PEs it waits for and the count each must reach; ctx is the lane's
 * context whose counts are read (NULL: the engine's) and lane its lane. */
struct arrival_wait {
    struct fsh_ctx *ctx;
    struct fsh_lane *lane;
    struct sender *s;
    size_t n;
    int *pe;
    uint64_t *want;
    int err;
};

/* Where every PE counts the writes of s's sender from here: its word of the target's count[]
 * (the same offset on all). */
static uint64_t count_off(int pe, const void *s)
{
    (void)pe;
    size_t slot = (size_t)((const struct sender *)s - arrive_counts.s);
    return arrive_counts.count_off +
           ((uint64_t)slot * (uint64_t)fsh_rt.npes + (uint64_t)fsh_rt.pe) * sizeof(uint64_t);
}

/* Read the count of every PE still waited for; keep those behind. The engine's under the
 * engine lock, a lane's without. */
static bool all_arrived(const void *arg)
{
    struct arrival_wait *w = (struct arrival_wait *)arg;
    w->err = arrive_counts.read(w->ctx, w->pe, w->n, w->s->landing, count_off, w->s,
                                "quiet: reading targets' arrival counts");
    if (w->err != 0) {
        return true;
    }
    if (w->lane) {
        fsh_lane_lock(w->lane); /* known[]: another quiet of the lane may read at once */
    }
    size_t keep = 0;
    for (size_t i = 0; i < w->n; i++) {
        int pe = w->pe[i];
        uint64_t v = __atomic_load_n(&w->s->landing[pe], __ATOMIC_ACQUIRE);
        w->s->known[pe] = v > w->s->known[pe] ? v : w->s->known[pe];
        if (w->s->known[pe] < w->want[i]) {
            w->pe[keep] = pe;
            w->want[keep++] = w->want[i];
        }
    }
    if (w->lane) {
        fsh_lane_unlock(w->lane);
    }
    w->n = keep;
    return keep == 0;
}

/* The PEs of s's writes posted to pe (only >= 0), or to every PE written since, not yet known
 * to have landed, and the counts they must reach. Under s's lock. */
static void arrivals_to_wait(struct arrival_wait *w, int only)
{
    struct sender *s = w->s;
    for (size_t i = 0; i < s->npending; i++) {
        int pe = s->pending[i];
        if ((only < 0 || pe == only) && s->known[pe] < s->sent[pe]) {
            w->pe[w->n] = pe;
            w->want[w->n++] = s->sent[pe];
        }
    }
}

/* Forget the PEs that caught up (a quiet of everything leaves only later writes). Under s's
 * lock. */
static void arrivals_forget(struct sender *s)
{
    size_t keep = 0;
    for (size_t i = 0; i < s->npending; i++) {
        int pe = s->pending[i];
        if (s->known[pe] < s->sent[pe]) {
            s->pending[keep++] = pe;
        } else {
            s->is_pending[pe] = false;
        }
    }
    __atomic_store_n(&s->npending, keep, __ATOMIC_RELAXED);
}

/* Wait until the engine's writes posted to pe (only >= 0), or to every PE written since,
 * before this call are in their memory. The engine lock is held throughout (waits poll under
 * it), so one quiet at a time uses the scratch lists and nothing is posted meanwhile. */
static int wait_arrivals(int only)
{
    fsh_progress_lock();
    struct sender *s = &arrive_counts.s[0];
    struct arrival_wait w = {NULL, NULL, s, 0, s->wait_pe, s->wait_want, 0};
    arrivals_to_wait(&w, only);
    int rc = 0;
    if (w.n > 0 && !all_arrived(&w)) {
        rc = fsh_progress_wait(all_arrived, &w, "quiet: waiting for puts to land at their targets",
                               w.pe[0]);
    }
    rc = rc ? rc : w.err;
    arrivals_forget(s);
    fsh_progress_unlock();
    return rc;
}

int fsh_arrive_quiet(void)
{
    /* Without the lock: a write another thread posts at this moment is not one this quiet
     * must complete. */
    if (!fsh_arrive_active ||
        __atomic_load_n(&arrive_counts.s[0].npending, __ATOMIC_RELAXED) == 0) {
        return 0;
    }
    return wait_arrivals(-1);
}

/* The same for the writes ctx posted on its lane, without the engine lock: the lane's writes
 * wait meanwhile (a write posted now could land in place of one waited for), and the counts
 * are read on the lane. Another quiet of the lane at once (a shared context's threads, quiet
 * of all contexts) reads with lists of its own. */
int fsh_arrive_lane_quiet(struct fsh_ctx *ctx, struct fsh_lane *lane, int slot)
{
    struct sender *s = &arrive_counts.s[slot];
    if (__atomic_load_n(&s->npending, __ATOMIC_RELAXED) == 0) {
        return 0;
    }
    int *pe = NULL;
    uint64_t *want = NULL;
    fsh_lane_lock(lane);
    if (s->quiets > 0) {
        pe = malloc((size_t)fsh_rt.npes * sizeof(*pe));
        want = malloc((size_t)fsh_rt.npes * sizeof(*want));
        if (!pe || !want) {
            fsh_lane_unlock(lane);
            free(pe);
            free(want);
            return fsh_err(-ENOMEM, "", "out of memory for a quiet of %d PEs", fsh_rt.npes);
        }
    }
    s->quiets++;
    struct arrival_wait w = {ctx, lane, s, 0, pe ? pe : s->wait_pe, want ? want : s->wait_want,
                             0};
    arrivals_to_wait(&w, -1);
    fsh_lane_unlock(lane);
    while (w.n > 0 && !all_arrived(&w)) {
        sched_yield(); /* the counts follow the completions by the targets' progress */
    }
    fsh_lane_lock(lane);
    arrivals_forget(s);
    s->quiets--;
    fsh_lane_unlock(lane);
    free(pe);
    free(want);
    return w.err;
}

int fsh_arrive_landed(int pe)
{
    if (!fsh_arrive_active) {
        return 0;
    }
    return wait_arrivals(pe);
}
