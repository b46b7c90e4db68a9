/*
 * barrier.c: barrier and sync over all PEs, as a dissemination algorithm.
 *
 * Round k (k = 0 .. ceil(log2 N)-1): PE i notifies PE (i + 2^k) mod N and waits for the
 * notification of PE (i - 2^k) mod N. After the last round every PE has heard, directly or
 * transitively, from every other, so nobody leaves before everybody arrived. N need not be a
 * power of two.
 *
 * A notification is an 8-byte put into the peer's scratch word whose immediate data says
 * "collective sync, team slot s, round k"; the peer's progress engine counts arrivals per
 * (slot, round). Counts only grow, and barrier number e of a team waits for count >= e in each
 * round: a fast PE that already sends the next barrier's round-k notification only raises the
 * count to e+1, which can never satisfy a wait of barrier e+2 early, since that PE cannot get
 * two barriers ahead of a peer that has not finished this one. Back-to-back barriers therefore
 * need no reset and never confuse each other.
 *
 * The notification carries no data the waiter reads: the immediate is applied only after its
 * write landed, and barrier_all completes every earlier put (quiet) before notifying, so data
 * put before a barrier is visible after it.
 */
#include "coll.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "heap.h"
#include "mr.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"

#define MAX_ROUNDS 32 /* 2^32 PEs */
#define MAX_SLOTS 64  /* team slots: world is 0 */

/* Payload of an FSH_IMM_COLL immediate: slot in bits 13..8, round in bits 4..0. */
#define IMM_SLOT_SHIFT 8

static struct {
    uint64_t arrivals[MAX_SLOTS][MAX_ROUNDS];
    uint64_t epoch[MAX_SLOTS];
    /* Two symmetric words: [0] is where peers' notifications land, [1] the source of ours.
     * Both are in the registered heap, so no notification ever needs a registration of its
     * own, even on providers that want local descriptors and do not inject. */
    uint64_t *words;
    enum fsh_seg seg;
    uint64_t target_off;
} bar;

static void on_notify(uint32_t payload)
{
    unsigned slot = (payload >> IMM_SLOT_SHIFT) & (MAX_SLOTS - 1);
    unsigned round = payload & (MAX_ROUNDS - 1);
    bar.arrivals[slot][round]++;
}

int fsh_coll_init(void)
{
    bar.words = fsh_heap_alloc(2 * sizeof(uint64_t), 0);
    if (!bar.words) {
        return fsh_err_last()->code;
    }
    if (fsh_mr_lookup(bar.words, 2 * sizeof(uint64_t), &bar.seg, &bar.target_off) != 0) {
        return fsh_err(-EFAULT, "", "barrier words are not in a registered segment");
    }
    return fsh_progress_register_imm(FSH_IMM_COLL, on_notify);
}

void fsh_coll_fini(void)
{
    /* The barrier words go with the heap. */
}

struct arrival {
    unsigned slot, round;
    uint64_t want;
};

static bool arrived(const void *arg)
{
    const struct arrival *a = arg;
    return bar.arrivals[a->slot][a->round] >= a->want;
}

static int dissemination(unsigned slot, int me, int n, const char *what)
{
    uint64_t epoch = ++bar.epoch[slot];
    for (unsigned k = 0; ((int64_t)1 << k) < n; k++) {
        int dist = (int)((1L << k) % n);
        int to = (me + dist) % n;
        int from = (me - dist + n) % n;
        uint32_t imm = ((uint32_t)FSH_IMM_COLL << FSH_IMM_KIND_SHIFT) |
                       (slot << IMM_SLOT_SHIFT) | k;
        /* The value is never read (the immediate is the message); a notification still in
         * flight from the previous barrier may see it change, harmlessly. */
        bar.words[1] = epoch;
        int rc = fsh_rma_write(&fsh_ctx_default, NULL, &bar.words[1], sizeof(uint64_t), to,
                               bar.seg, bar.target_off, true, imm);
        if (rc != 0) {
            return rc;
        }
        struct arrival a = {slot, k, epoch};
        if (!arrived(&a)) {
            char msg[96];
            snprintf(msg, sizeof(msg), "%s: round %u of barrier %llu, waiting for PE %d", what, k,
                     (unsigned long long)epoch, from);
            rc = fsh_progress_wait(arrived, &a, msg, from);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

int fsh_coll_barrier_all(void)
{
    int rc = fsh_rma_quiet_all();
    if (rc != 0) {
        return rc;
    }
    return dissemination(0, fsh_rt.pe, fsh_rt.npes, "shmem_barrier_all");
}

int fsh_coll_sync_all(void)
{
    return dissemination(0, fsh_rt.pe, fsh_rt.npes, "shmem_sync_all");
}
