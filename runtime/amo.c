/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo.c: OpenSHMEM atomics as libfabric atomics.
 *
 * Every OpenSHMEM AMO (standard, extended and bitwise) is bit-exact on the unsigned integer of
 * the same size: two's-complement addition does not depend on signedness, and fetch, set, swap
 * and compare-and-swap of a float are copies and comparisons of its bits. So only FI_UINT32 and
 * FI_UINT64 are ever used, and their support is queried once at init. A provider lacking one
 * ends the job at the first such AMO with the operation and provider named (there is no
 * emulation: an emulated AMO would not be atomic with respect to the provider's own).
 *
 * The whole job is one atomicity domain (the rule is local.c's): when every PE is on one node
 * and maps every other, every AMO is a CPU atomic on mapped memory (fsh_amo_apply below);
 * otherwise all AMOs, also those aimed at the calling PE, go through the fabric. AMOs on the
 * device heap are a domain of their own: every one is applied by the owning PE's CPU (devmem.c),
 * whatever the registration path, so they are atomic with respect to each other.
 *
 * On the fabric, the non-fetching ones (set, inc, add, and, or, xor) are posted as fetching
 * atomics whose result is dropped: a fetching atomic's completion means it was applied at the
 * target on every provider, which quiet needs, while FI_DELIVERY_COMPLETE on plain atomics is
 * not dependable (libfabric 1.17's shm crosses the results of operations in flight with it).
 * Operand, compare value and result travel through a bounce slot tied to the operation record
 * (registered once), so providers that need local descriptors work without a registration per
 * call; a fetched value is copied to the caller's buffer on completion.
 */
#include "amo.h"

#include <errno.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devmem.h"
#include "error.h"
#include "fabric.h"
#include "local.h"
#include "log.h"
#include "progress.h"
#include "rma.h"
#include "xport.h"

struct bounce {
    uint64_t operand;
    uint64_t compare;
    uint64_t result;
};

/* What each shmem op becomes: the libfabric op, and which call. */
struct mapping {
    int fi_op;
    int type; /* FSH_X_ATOMIC, FSH_X_FETCH, FSH_X_COMPARE */
    bool operand_is_one;
};

static const struct mapping map[] = {
    [FSH_AMO_FETCH] = {FI_ATOMIC_READ, FSH_X_FETCH, false},
    [FSH_AMO_SET] = {FI_ATOMIC_WRITE, FSH_X_ATOMIC, false},
    [FSH_AMO_SWAP] = {FI_ATOMIC_WRITE, FSH_X_FETCH, false},
    [FSH_AMO_CSWAP] = {FI_CSWAP, FSH_X_COMPARE, false},
    [FSH_AMO_FETCH_INC] = {FI_SUM, FSH_X_FETCH, true},
    [FSH_AMO_INC] = {FI_SUM, FSH_X_ATOMIC, true},
    [FSH_AMO_FETCH_ADD] = {FI_SUM, FSH_X_FETCH, false},
    [FSH_AMO_ADD] = {FI_SUM, FSH_X_ATOMIC, false},
    [FSH_AMO_FETCH_AND] = {FI_BAND, FSH_X_FETCH, false},
    [FSH_AMO_AND] = {FI_BAND, FSH_X_ATOMIC, false},
    [FSH_AMO_FETCH_OR] = {FI_BOR, FSH_X_FETCH, false},
    [FSH_AMO_OR] = {FI_BOR, FSH_X_ATOMIC, false},
    [FSH_AMO_FETCH_XOR] = {FI_BXOR, FSH_X_FETCH, false},
    [FSH_AMO_XOR] = {FI_BXOR, FSH_X_ATOMIC, false},
};
#define NOPS (sizeof(map) / sizeof(map[0]))

static struct {
    struct bounce *bufs; /* [operation record index] */
    struct fid_mr *mr;
    void *desc;
    /* supported[op][size == 8] */
    bool supported[NOPS][2];
    bool queried;
} am;

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

bool fsh_amo_fetches(int op)
{
    return op > 0 && (size_t)op < NOPS && map[op].type != FSH_X_ATOMIC;
}

/* The call an op is posted with: the non-fetching ones go as fetching (see above). */
static int post_type(int op)
{
    return map[op].type == FSH_X_ATOMIC ? FSH_X_FETCH : map[op].type;
}

static bool query(int op, int dt)
{
    struct fi_atomic_attr attr;
    uint64_t flags = post_type(op) == FSH_X_COMPARE ? FI_COMPARE_ATOMIC : FI_FETCH_ATOMIC;
    return fi_query_atomic(fsh_fabric_domain(), (enum fi_datatype)dt, (enum fi_op)map[op].fi_op,
                           &attr, flags) == 0 &&
           attr.count >= 1;
}

int fsh_amo_init(void)
{
    size_t depth = fsh_progress_depth();
    am.bufs = calloc(depth, sizeof(*am.bufs));
    if (!am.bufs) {
        return fsh_err(-ENOMEM, "lower FABSHMEM_TX_DEPTH", "out of memory for atomics' buffers");
    }
    int rc = fsh_mr_reg_local(am.bufs, depth * sizeof(*am.bufs), &am.mr, &am.desc);
    if (rc != 0) {
        return rc;
    }
    if (!fsh_fabric_attr()->has_atomics) {
        FSH_INFO("provider %s has no FI_ATOMIC: every AMO will fail with a message",
                 fsh_fabric_attr()->prov);
        return 0;
    }
    for (size_t op = 1; op < NOPS; op++) {
        am.supported[op][0] = query((int)op, FI_UINT32);
        am.supported[op][1] = query((int)op, FI_UINT64);
    }
    am.queried = true;
    return 0;
}

void fsh_amo_fini(void)
{
    fsh_mr_dereg_local(am.mr);
    free(am.bufs);
    memset(&am, 0, sizeof(am));
}

/* One op on T at p; the old value goes to *old. Sequentially consistent, like the fabric's
 * (which completes before the next operation of a blocking call is posted). */
#define CPU_AMO(T, p, op, v, c, old)                                                        \
    do {                                                                                    \
        T *a_ = (T *)(p), v_ = (T)(v), c_ = (T)(c), o_ = 0;                                 \
        switch (op) {                                                                       \
        case FSH_AMO_FETCH: o_ = __atomic_load_n(a_, __ATOMIC_SEQ_CST); break;              \
        case FSH_AMO_SET:                                                                   \
        case FSH_AMO_SWAP: o_ = __atomic_exchange_n(a_, v_, __ATOMIC_SEQ_CST); break;       \
        case FSH_AMO_CSWAP:                                                                 \
            o_ = c_;                                                                        \
            __atomic_compare_exchange_n(a_, &o_, v_, false, __ATOMIC_SEQ_CST,               \
                                        __ATOMIC_SEQ_CST);                                  \
            break;                                                                          \
        case FSH_AMO_FETCH_INC:                                                             \
        case FSH_AMO_INC: o_ = __atomic_fetch_add(a_, (T)1, __ATOMIC_SEQ_CST); break;       \
        case FSH_AMO_FETCH_ADD:                                                             \
        case FSH_AMO_ADD: o_ = __atomic_fetch_add(a_, v_, __ATOMIC_SEQ_CST); break;         \
        case FSH_AMO_FETCH_AND:                                                             \
        case FSH_AMO_AND: o_ = __atomic_fetch_and(a_, v_, __ATOMIC_SEQ_CST); break;         \
        case FSH_AMO_FETCH_OR:                                                              \
        case FSH_AMO_OR: o_ = __atomic_fetch_or(a_, v_, __ATOMIC_SEQ_CST); break;           \
        default: o_ = __atomic_fetch_xor(a_, v_, __ATOMIC_SEQ_CST); break;                  \
        }                                                                                   \
        *(old) = o_;                                                                        \
    } while (0)

void fsh_amo_apply(int op, void *target, const void *value, const void *cond, void *fetch,
                   size_t size)
{
    uint64_t v = 0, c = 0;
    if (value) {
        memcpy(&v, value, size);
    }
    if (cond) {
        memcpy(&c, cond, size);
    }
    if (size == 8) {
        uint64_t old;
        CPU_AMO(uint64_t, target, op, v, c, &old);
        if (fetch && fsh_amo_fetches(op)) {
            memcpy(fetch, &old, size);
        }
    } else {
        uint32_t old;
        CPU_AMO(uint32_t, target, op, v, c, &old);
        if (fetch && fsh_amo_fetches(op)) {
            memcpy(fetch, &old, size);
        }
    }
}

int fsh_amo(struct fsh_ctx *ctx, int op, enum fsh_seg seg, uint64_t off, const void *value,
            const void *cond, void *fetch, size_t size, int pe, bool nbi)
{
    if (__builtin_expect(seg == FSH_SEG_DEVICE, 0)) {
        /* Applied by the owner's CPU (devmem.c); complete on return, also when nbi. */
        return fsh_dev_amo(op, off, value, cond, fetch, size, pe);
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
    if (!am.queried || !am.supported[op][size == 8]) {
        return fsh_err(-ENOTSUP, "choose a provider with atomics (efa, shm, tcp;ofi_rxm: FI_PROVIDER)",
                       "provider %s cannot do atomic %s on %zu-byte integers",
                       fsh_fabric_attr()->prov, op_name(op), size);
    }
    const struct mapping *m = &map[op];
    struct fsh_op_track sync = {0, 0, 0};
    bool wait = m->type != FSH_X_ATOMIC && !nbi;
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);

    fsh_progress_lock();
    struct fsh_op *o = fsh_progress_op_get(FSH_OP_ATOMIC, pe, size);
    if (!o) {
        fsh_progress_unlock();
        return fsh_err_last() ? fsh_err_last()->code : -EIO;
    }
    o->track = &ctx->track;
    o->sync = wait ? &sync : NULL;
    struct bounce *b = &am.bufs[fsh_progress_op_index(o)];
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
    struct fsh_xreq r = {
        .type = post_type(op),
        .op = o,
        .pe = pe,
        .local = &b->operand,
        .len = size,
        .desc = am.desc,
        .raddr = raddr,
        .key = key,
        .flags = FI_COMPLETION,
        .datatype = size == 8 ? FI_UINT64 : FI_UINT32,
        .atomic_op = m->fi_op,
        .result = &b->result,
        .result_desc = am.desc,
        .compare = &b->compare,
        .compare_desc = am.desc,
    };
    int rc = fsh_xport_post(&r);
    fsh_progress_unlock();
    if (rc == 0 && wait) {
        rc = fsh_progress_wait_track(&sync, "atomic: waiting for the old value");
    }
    return rc;
}
