/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait.c: waiting for and testing symmetric variables that peers update.
 *
 * Peers change these variables behind the program's back (a put, an atomic, a signal applied
 * by our progress engine), so every read is an atomic acquire load of the right width: the
 * compiler cannot hoist it out of the loop, and data written before the update (a signal's
 * payload) is visible once the new value is. Every round of a wait drives progress first:
 * with manual-progress providers the update may not land until this PE reads its CQ.
 * Variables in the device heap are compared on a host copy taken by the driver each round
 * (their updates, device AMOs and puts, are applied by this PE's engine with driver copies).
 */
#include "wait.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "error.h"
#include "progress.h"
#include "shmem.h"

bool fsh_wait_cmp_valid(int cmp)
{
    return cmp >= SHMEM_CMP_EQ && cmp <= SHMEM_CMP_LE;
}

static int64_t load_signed(const void *p, size_t esize)
{
    switch (esize) {
    case 1: return __atomic_load_n((const int8_t *)p, __ATOMIC_ACQUIRE);
    case 2: return __atomic_load_n((const int16_t *)p, __ATOMIC_ACQUIRE);
    case 4: return __atomic_load_n((const int32_t *)p, __ATOMIC_ACQUIRE);
    default: return __atomic_load_n((const int64_t *)p, __ATOMIC_ACQUIRE);
    }
}

static uint64_t load_unsigned(const void *p, size_t esize)
{
    switch (esize) {
    case 1: return __atomic_load_n((const uint8_t *)p, __ATOMIC_ACQUIRE);
    case 2: return __atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE);
    case 4: return __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE);
    default: return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
    }
}

#define CMP(a, cmp, b)                                                                        \
    ((cmp) == SHMEM_CMP_EQ   ? (a) == (b)                                                     \
     : (cmp) == SHMEM_CMP_NE ? (a) != (b)                                                     \
     : (cmp) == SHMEM_CMP_GT ? (a) > (b)                                                      \
     : (cmp) == SHMEM_CMP_GE ? (a) >= (b)                                                     \
     : (cmp) == SHMEM_CMP_LT ? (a) < (b)                                                      \
                             : (a) <= (b))

bool fsh_wait_compare(const void *a, int cmp, const void *b, size_t esize, bool is_signed)
{
    if (is_signed) {
        int64_t x = load_signed(a, esize), y = load_signed(b, esize);
        return CMP(x, cmp, y);
    }
    uint64_t x = load_unsigned(a, esize), y = load_unsigned(b, esize);
    return CMP(x, cmp, y);
}

struct query {
    int mode;
    char *ivars; /* what is compared: the variables, or the host copy of device ones */
    const void *device; /* ivars in the device heap: copied into ivars before each round */
    int err;
    size_t nelems;
    const int *status;
    int cmp;
    const char *values;
    bool vector;
    size_t esize;
    bool is_signed;
    size_t *indices;
    size_t result;
};

static bool satisfied(const struct query *q, size_t i)
{
    const char *v = q->values + (q->vector ? i * q->esize : 0);
    return fsh_wait_compare(q->ivars + i * q->esize, q->cmp, v, q->esize, q->is_signed);
}

static __thread size_t any_next; /* where this thread's next ANY scan starts */

/* Evaluate once; true when the wait is over, with the mode's result in q->result. */
static bool evaluate(const void *arg)
{
    struct query *q = (struct query *)arg;
    size_t unmasked = 0, hits = 0;
    if (q->device && (q->err = fsh_backend_copy(q->ivars, q->device, q->nelems * q->esize)) != 0) {
        q->result = 0;
        return true;
    }
    /* An ANY scan starts after the index this thread's last ANY returned, so a series of
     * calls returns every satisfied index in turn (the spec's fairness; scanning from 0
     * returned the lowest one forever). */
    size_t start = q->mode == FSH_SYNC_ANY && q->nelems ? any_next % q->nelems : 0;
    for (size_t k = 0; k < q->nelems; k++) {
        size_t i = start + k < q->nelems ? start + k : start + k - q->nelems;
        if (q->status && q->status[i]) {
            continue;
        }
        unmasked++;
        if (!satisfied(q, i)) {
            if (q->mode == FSH_SYNC_ALL || q->mode == FSH_SYNC_ONE) {
                q->result = 0;
                return false;
            }
            continue;
        }
        if (q->mode == FSH_SYNC_ANY) {
            q->result = i;
            any_next = i + 1;
            return true;
        }
        if (q->mode == FSH_SYNC_SOME) {
            q->indices[hits] = i;
        }
        hits++;
    }
    switch (q->mode) {
    case FSH_SYNC_ONE:
    case FSH_SYNC_ALL:
        q->result = 1;
        return true;
    case FSH_SYNC_ANY:
        q->result = SIZE_MAX;
        return unmasked == 0; /* nothing can ever satisfy it: the wait is over */
    default:
        q->result = hits;
        return hits > 0 || unmasked == 0;
    }
}

/* Evaluate q until it holds (block) or once; then the backend's guard. q->device set: q->ivars
 * is the host copy compared each round. */
static int run(struct query *q, bool block, const char *what)
{
    int err = 0;
    if (!block) {
        /* A test makes progress once, so a test loop also moves the fabric. */
        int rc = fsh_progress_poll();
        if (rc < 0) {
            err = rc;
        } else {
            evaluate(q);
        }
    } else if (!evaluate(q)) {
        /* A kernel may write device variables: such a wait is never part of a deadlock. */
        err = fsh_progress_wait_watched(evaluate, q, what, q->device ? NULL : q->ivars,
                                        q->nelems * q->esize);
    }
    if (err == 0) {
        err = q->err;
    }
    if (err == 0 && (block || q->result)) {
        fsh_backend_guard(); /* data the satisfied variable guards may be NIC-written GPU memory */
    }
    return err;
}

size_t fsh_wait_sync(int mode, bool block, void *ivars, size_t nelems, const int *status,
                     int cmp, const void *values, bool vector, size_t esize, bool is_signed,
                     size_t *indices, const char *what, int *err)
{
    struct query q = {mode, ivars, NULL, 0, nelems, status, cmp, values, vector, esize,
                      is_signed, indices, 0};
    uint64_t small[8]; /* the host copy of a few device variables: no allocation per call */
    *err = 0;
    if (fsh_backend_owns(ivars)) {
        /* Device memory is not the host's to load: each round compares a fresh copy. */
        q.device = ivars;
        q.ivars = nelems * esize <= sizeof(small) ? (char *)small : malloc(nelems * esize);
        if (!q.ivars) {
            *err = fsh_err(-ENOMEM, "", "out of memory for a copy of %zu device variables", nelems);
            return 0;
        }
    }
    *err = run(&q, block, what);
    if (q.device && q.ivars != (char *)small) {
        free(q.ivars);
    }
    return *err ? 0 : q.result;
}

uint64_t fsh_wait_signal(uint64_t *sig, int cmp, uint64_t value, const char *what, int *err)
{
    uint64_t copy = 0;
    struct query q = {FSH_SYNC_ONE, (char *)sig, NULL, 0, 1, NULL, cmp, (const char *)&value,
                      false, sizeof(value), false, NULL, 0};
    if (fsh_backend_owns(sig)) {
        q.device = sig;
        q.ivars = (char *)&copy;
    }
    *err = run(&q, true, what);
    /* A device word: the copy that satisfied the wait (a second read would cost another
     * synchronized copy and could return a later value). */
    return *err ? 0 : q.device ? copy : __atomic_load_n(sig, __ATOMIC_ACQUIRE);
}
