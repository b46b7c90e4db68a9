/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_op.h: the atomic operations as arithmetic on a word of this process's memory: their
 * names (enum fsh_amo_op), which of them fetch, and the CPU atomic that applies one.
 *
 * Pure and header-only (inlined where it is applied): amo.c applies AMOs this way in the
 * one-node domain and in the target's engine, devmap.c on a host copy of a device word. It
 * knows nothing of PEs, segments or the fabric.
 */
#ifndef FSH_AMO_OP_H
#define FSH_AMO_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum fsh_amo_op {
    FSH_AMO_FETCH = 1, FSH_AMO_SET, FSH_AMO_SWAP, FSH_AMO_CSWAP,
    FSH_AMO_FETCH_INC, FSH_AMO_INC, FSH_AMO_FETCH_ADD, FSH_AMO_ADD,
    FSH_AMO_FETCH_AND, FSH_AMO_AND, FSH_AMO_FETCH_OR, FSH_AMO_OR,
    FSH_AMO_FETCH_XOR, FSH_AMO_XOR,
};

/* True for the fetching ops (they return the old value); false for the others and for a
 * number that is no op. */
static inline bool fsh_amo_fetches(int op)
{
    switch (op) {
    case FSH_AMO_FETCH:
    case FSH_AMO_SWAP:
    case FSH_AMO_CSWAP:
    case FSH_AMO_FETCH_INC:
    case FSH_AMO_FETCH_ADD:
    case FSH_AMO_FETCH_AND:
    case FSH_AMO_FETCH_OR:
    case FSH_AMO_FETCH_XOR:
        return true;
    default:
        return false;
    }
}

/* One op on T at p; the old value goes to *old. Sequentially consistent, like the fabric's
 * (which completes before the next operation of a blocking call is posted). */
#define FSH_CPU_AMO(T, p, op, v, c, old)                                                    \
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

/* Apply op to the size-byte (4 or 8) object at target with CPU atomics. value: the operand
 * (unused by fetch, inc, fetch_inc), cond: the compare value (cswap), fetch: where the old
 * value of a fetching op goes (may be NULL). */
static inline void fsh_amo_apply(int op, void *target, const void *value, const void *cond,
                                 void *fetch, size_t size)
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
        FSH_CPU_AMO(uint64_t, target, op, v, c, &old);
        if (fetch && fsh_amo_fetches(op)) {
            memcpy(fetch, &old, size);
        }
    } else {
        uint32_t old;
        FSH_CPU_AMO(uint32_t, target, op, v, c, &old);
        if (fetch && fsh_amo_fetches(op)) {
            memcpy(fetch, &old, size);
        }
    }
}

#endif
