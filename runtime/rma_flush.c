/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_flush.c: quiet's completion of counted injected puts, one ordered operation per target.
 *
 * A counted put (rma_post.c: injected, no record, no completion entry, counted by the write
 * counter) would have to be posted delivery-complete for the counter to mean "landed", and on
 * shm that costs an answer from the target per put. Where the provider promises an order
 * between one endpoint's operations to one target (tx_attr->msg_order), that answer is needed
 * once per target per quiet instead:
 *  - FI_ORDER_WAW and FI_DELIVERY_COMPLETE (shm, tcp;ofi_rxm): the first counted put to a
 *    target since the last flush stays delivery-complete (a lone put + quiet costs one
 *    operation, as before); later ones are posted transmit-complete and the target marked
 *    dirty; quiet posts one delivery-complete 8-byte write to each dirty target. The target handles writes in the order posted, so when that
 *    write is visible there (its completion), every earlier write was handled, and a small
 *    injected write's data is placed when it is handled (the payload travels with it).
 *  - FI_ORDER_RAW without the above: one 8-byte read per dirty target, which the target
 *    answers only after the writes before it (at the endpoint's completion level: shm then
 *    serves it from its progress engine, in order, not by a copy from the initiator's side).
 *  - No ordering (efa, efa-direct, the efa-direct profile), or targets counting arrivals
 *    (FABSHMEM_REMOTE_COMPLETION=count): nothing changes; each counted put stays
 *    delivery-complete, or is counted at its target (arrive.c).
 * Only counted puts are flushed: operations with records keep their delivery-complete level.
 * The ordering is per endpoint pair: counted puts exist only where every write to a PE leaves
 * from the engine's one endpoint (no lanes' counted writes, no multi-rail job), which is the
 * endpoint the flush leaves from too. Under FABSHMEM_CHAOS=reorder xport holds operations back;
 * the flush first releases them, so it still follows every put it completes.
 * The flush word is 64 bytes of the symmetric heap, reserved on every PE whatever the mode
 * (the layout must not depend on the provider): writes land in its first word, reads land in
 * its second. Nobody reads either. The dirty set is guarded by the engine lock.
 */
#include "rma_flush.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "arrive.h"
#include "error.h"
#include "heap.h"
#include "log.h"
#include "rma_post.h"
#include "rt.h"

static struct {
    enum fsh_flush_mode mode;
    uint64_t *word;  /* the reserved flush words: [0] written by flushes, [1] read into */
    uint64_t off;    /* word's heap offset */
    uint8_t *state;  /* [pe]: CLEAN, ONE or DIRTY since the last flush */
    int *list;       /* the PEs not CLEAN, n of them */
    size_t n;
} fl;

/* A target's state since the last flush: no counted put; one, posted delivery-complete (the
 * write counter completes it, nothing to flush: a lone put + quiet costs one operation, not
 * two); more, the later ones transmit-complete (one flush completes them all). */
enum { CLEAN, ONE, DIRTY };

int fsh_rma_flush_init(void)
{
    fl.word = fsh_heap_reserve(FSH_RMA_FLUSH_HEAP_BYTES, 64, "quiet's flush word (64 bytes)",
                               NULL);
    if (!fl.word) {
        return fsh_err_last()->code;
    }
    enum fsh_seg seg;
    if (fsh_mr_lookup(fl.word, FSH_RMA_FLUSH_HEAP_BYTES, &seg, &fl.off) != 0 || seg != FSH_SEG_HEAP) {
        return fsh_err(-EFAULT, "", "quiet's flush word is not in the registered heap");
    }
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    fl.mode = FSH_FLUSH_NONE;
    if (fsh_fabric_none() || !fsh_progress_counts_writes() || fsh_arrive_active) {
        return 0;
    }
    if (fa->order_waw && fa->delivery_complete) {
        fl.mode = FSH_FLUSH_WRITE;
    } else if (fa->order_raw) {
        fl.mode = FSH_FLUSH_READ;
    }
    if (fl.mode != FSH_FLUSH_NONE) {
        fl.state = calloc((size_t)fsh_rt.npes, sizeof(*fl.state));
        fl.list = calloc((size_t)fsh_rt.npes, sizeof(*fl.list));
        if (!fl.state || !fl.list) {
            return fsh_err(-ENOMEM, "", "out of memory for quiet's set of %d target PEs",
                           fsh_rt.npes);
        }
    }
    return 0;
}

void fsh_rma_flush_fini(void)
{
    free(fl.state);
    free(fl.list);
    fl.state = NULL;
    fl.list = NULL;
    fl.n = 0;
    fl.mode = FSH_FLUSH_NONE;
    fl.word = NULL;
}

enum fsh_flush_mode fsh_rma_flush_mode(void)
{
    return fl.mode;
}

bool fsh_rma_flush_mark(int pe)
{
    FSH_ASSERT_ENGINE_HELD();
    if (fl.state[pe] == CLEAN) {
        fl.state[pe] = ONE;
        fl.list[fl.n] = pe;
        __atomic_store_n(&fl.n, fl.n + 1, __ATOMIC_RELAXED);
        return false;
    }
    fl.state[pe] = DIRTY;
    return true;
}

int fsh_rma_flush(struct fsh_ctx *ctx)
{
    /* Nothing marked: no lock taken (this thread's own marks, made before, are seen). */
    if (fl.mode == FSH_FLUSH_NONE || __atomic_load_n(&fl.n, __ATOMIC_RELAXED) == 0) {
        return 0;
    }
    fsh_progress_lock();
    if (fl.n == 0) {
        fsh_progress_unlock();
        return 0;
    }
    /* Held puts (chaos) go first: the flush completes only what was issued before it. */
    int rc = fsh_xport_release_held();
    struct fsh_op_track sync = {0, 0, 0};
    bool write = fl.mode == FSH_FLUSH_WRITE;
    for (size_t i = 0; i < fl.n; i++) {
        int pe = fl.list[i];
        bool dirty = fl.state[pe] == DIRTY;
        fl.state[pe] = CLEAN;
        if (rc != 0 || !dirty) {
            continue;
        }
        uint64_t raddr, key;
        fsh_mr_remote(pe, FSH_SEG_HEAP, fl.off, &raddr, &key);
        struct fsh_xseg seg = {raddr, sizeof(uint64_t), key};
        rc = fsh_rma_post(ctx, &sync, write ? FSH_OP_PUT : FSH_OP_GET, &fl.word[write ? 0 : 1],
                          sizeof(uint64_t), pe, &seg, 1, false, 0, 0);
    }
    __atomic_store_n(&fl.n, 0, __ATOMIC_RELAXED);
    fsh_progress_unlock();
    /* What was posted is waited for, also after a failed post. */
    int wrc = fsh_progress_wait_track(&sync, "quiet: waiting for the flush of injected puts");
    return rc ? rc : wrc;
}

const char *fsh_rma_flush_describe(void)
{
    switch (fl.mode) {
    case FSH_FLUSH_WRITE:
        return "injected ones transmit-complete, counted by the write counter; quiet sends one "
               "delivery-complete write to each PE written since (the provider orders WAW)";
    case FSH_FLUSH_READ:
        return "injected ones transmit-complete, counted by the write counter; quiet sends one "
               "read to each PE written since (the provider orders RAW)";
    default:
        return NULL;
    }
}
