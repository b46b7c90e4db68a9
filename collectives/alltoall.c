/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoall.c: all-to-all exchanges: fixed blocks (alltoall), strided elements (alltoalls) and
 * variable blocks (shmemx_alltoallv).
 *
 * Schedule: team PE i writes to i+1, i+2, ... (mod N), so at any moment the PEs aim at
 * different targets instead of all starting on PE 0. Every write is posted before any wait
 * (pipelined: the provider's queue depth bounds what is in flight, and posting drives
 * progress when it is full); each block raises its arrivals at the receiver, which waits for
 * the blocks of all senders and then completes its own writes. No barrier is needed around
 * or between calls: arrivals are counted per sender (notify.c), and dest readiness is the
 * caller's rule (spec). Each block carries the call's fingerprint (nelems, element size, strides:
 * notify.h), compared by its receiver once it landed: PEs that passed different sizes name the
 * difference (the larger block has landed by then, past the smaller receiver's: the job ends
 * there; FABSHMEM_CHECK=1 compares before any data moves).
 *
 * alltoallv cannot know where to write before the receiver has seen every count, so it runs
 * in three phases on the team's scratch mailboxes: counts (every sender tells every receiver
 * its count), offsets (every receiver answers each sender with the displacement of its block,
 * a prefix sum in team order, or "no room"), then data (one counted write per non-empty
 * block). The first two are steps (every PE needs every other's word), so their mailboxes
 * alternate by step parity.
 *
 * Device buffers (a dest in the device heap, or a source in GPU memory) take devmem.c's path:
 * each block is a blocking put that is complete at its target (in GPU memory) when it returns,
 * in the same staggered order, and one team sync after the last of them ends the exchange.
 */
#include "coll.h"

#include <errno.h>
#include <string.h>

#include "backend.h"
#include "error.h"
#include "log.h"
#include "notify.h"
#include "rma.h"

#define NO_ROOM UINT64_MAX

/* Wait for the arrivals expected from every other member (comparing the fingerprint fp of
 * each sender's block, unless 0), then complete my writes. */
static int finish(struct fsh_team *t, struct fsh_notify_batch *b, const char *what, uint16_t fp)
{
    int n = t->size, me = t->my_pe, rc = 0;
    for (int i = 1; i < n && rc == 0; i++) {
        rc = fsh_notify_wait(t, (me - i + n) % n, what);
        if (rc == 0) {
            rc = fsh_notify_fp_check(t, (me - i + n) % n, fp, true);
        }
    }
    int crc = fsh_notify_complete(b, what);
    return rc ? rc : crc;
}

/* Block `to` of the device path (blocking, complete at the target on return). */
static int put_dev(struct fsh_team *t, int to, enum fsh_seg seg, uint64_t off, const void *src,
                   size_t bytes)
{
    return fsh_backend_put(&fsh_ctx_default, seg, off, src, bytes, fsh_team_world_pe(t, to));
}

static int end_dev(struct fsh_team *t, int rc, const char *what)
{
    /* Sync even after an error, so the peers are not left waiting for this PE. */
    int src = fsh_coll_sync_fp(t, what, t->fp);
    return rc ? rc : src;
}

static int alltoall_dev(struct fsh_team *t, void *dest, const void *src, size_t bytes,
                        enum fsh_seg seg, uint64_t off)
{
    int n = t->size, me = t->my_pe, rc = 0;
    for (int i = 1; i < n && rc == 0; i++) {
        int to = (me + i) % n;
        rc = put_dev(t, to, seg, off + (uint64_t)me * bytes, (const char *)src + (size_t)to * bytes,
                     bytes);
    }
    if (rc == 0) {
        rc = fsh_backend_copy((char *)dest + (size_t)me * bytes, (const char *)src + (size_t)me * bytes,
                          bytes);
    }
    return end_dev(t, rc, "alltoall (device memory)");
}

int fsh_coll_alltoall(struct fsh_team *t, void *dest, const void *src, size_t bytes)
{
    int n = t->size, me = t->my_pe;
    if (bytes == 0) {
        return 0; /* the same on every PE: nothing moves, nothing to count */
    }
    enum fsh_seg seg;
    uint64_t off;
    int rc = fsh_notify_dest(dest, bytes * (size_t)n, &seg, &off);
    if (rc != 0) {
        return rc;
    }
    if (fsh_backend_involved(seg, src)) {
        return alltoall_dev(t, dest, src, bytes, seg, off);
    }
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    uint32_t pieces = fsh_notify_pieces(bytes);
    for (int i = 1; i < n && rc == 0; i++) {
        int to = (me + i) % n;
        fsh_notify_expect(t, (me - i + n) % n, pieces);
        rc = fsh_notify_put_fp(&b, to, seg, off + (uint64_t)me * bytes,
                               (const char *)src + (size_t)to * bytes, bytes, t->fp);
    }
    memcpy((char *)dest + (size_t)me * bytes, (const char *)src + (size_t)me * bytes, bytes);
    int frc = finish(t, &b, "alltoall", t->fp);
    return rc ? rc : frc;
}

int fsh_coll_alltoalls(struct fsh_team *t, void *dest, const void *src, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems, size_t esize)
{
    if (dst == 1 && sst == 1) {
        return fsh_coll_alltoall(t, dest, src, nelems * esize);
    }
    if (nelems == 0) {
        return 0; /* the same on every PE; dest may be NULL then */
    }
    enum fsh_seg dseg;
    uint64_t doff;
    if (fsh_notify_dest(dest, esize, &dseg, &doff) == 0 && fsh_backend_involved(dseg, src)) {
        return fsh_err(-ENOTSUP, "use unit strides (shmem_alltoallmem) for GPU memory",
                       "strided all-to-all does not take GPU memory");
    }
    int n = t->size, me = t->my_pe;
    enum fsh_seg seg;
    uint64_t off;
    int rc = fsh_notify_dest(dest, esize, &seg, &off);
    if (rc != 0) {
        return rc;
    }
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    const char *s = src;
    for (int i = 1; i < n && rc == 0; i++) {
        int to = (me + i) % n;
        fsh_notify_expect(t, (me - i + n) % n, (uint32_t)nelems * fsh_notify_pieces(esize));
        for (size_t j = 0; j < nelems && rc == 0; j++) {
            ptrdiff_t si = ((ptrdiff_t)to * (ptrdiff_t)nelems + (ptrdiff_t)j) * sst;
            ptrdiff_t di = ((ptrdiff_t)me * (ptrdiff_t)nelems + (ptrdiff_t)j) * dst;
            /* The first element of each block carries the fingerprint. */
            rc = fsh_notify_put_fp(&b, to, seg, off + (uint64_t)(di * (ptrdiff_t)esize),
                                   s + si * (ptrdiff_t)esize, esize, j == 0 ? t->fp : 0);
        }
    }
    for (size_t j = 0; j < nelems; j++) {
        ptrdiff_t si = ((ptrdiff_t)me * (ptrdiff_t)nelems + (ptrdiff_t)j) * sst;
        ptrdiff_t di = ((ptrdiff_t)me * (ptrdiff_t)nelems + (ptrdiff_t)j) * dst;
        memcpy((char *)dest + di * (ptrdiff_t)esize, s + si * (ptrdiff_t)esize, esize);
    }
    int frc = finish(t, &b, "alltoalls", t->fp);
    return rc ? rc : frc;
}

int fsh_coll_exchange_words(struct fsh_team *t, const char *what, const size_t *each,
                            uint64_t all, uint64_t **in)
{
    int n = t->size, me = t->my_pe, rc = 0;
    *in = fsh_notify_words(t, fsh_team_step(t));
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    for (int i = 1; i < n && rc == 0; i++) {
        int to = (me + i) % n;
        fsh_notify_expect(t, (me - i + n) % n, 1);
        rc = fsh_notify_word(&b, to, &(*in)[me], each ? (uint64_t)each[to] : all);
    }
    int frc = finish(t, &b, what, 0);
    return rc ? rc : frc;
}

int fsh_coll_compare(struct fsh_team *t, uint64_t v, struct fsh_coll_mismatch *mm)
{
    int n = t->size, me = t->my_pe;
    uint64_t *in;
    mm->pe = -1;
    int rc = fsh_coll_exchange_words(t, "checking the arguments (FABSHMEM_CHECK)", NULL, v, &in);
    for (int i = 1; i < n && rc == 0 && mm->pe < 0; i++) {
        int k = (me + i) % n;
        uint64_t theirs = __atomic_load_n(&in[k], __ATOMIC_ACQUIRE);
        if (theirs != v) {
            mm->pe = fsh_team_world_pe(t, k);
            mm->theirs = theirs;
        }
    }
    return rc ? rc : mm->pe >= 0;
}

int fsh_coll_alltoallv(struct fsh_team *t, void *dest, size_t dest_nelems, const void *src,
                       const size_t *send_counts, const size_t *send_displs,
                       size_t *recv_counts, size_t *recv_displs, size_t esize)
{
    int n = t->size, me = t->my_pe;
    uint64_t *in;

    /* Phase 1: counts. */
    int rc = fsh_coll_exchange_words(t, "alltoallv: exchanging counts", send_counts, 0, &in);
    if (rc != 0) {
        return rc;
    }
    size_t total = 0;
    bool room = true;
    for (int k = 0; k < n; k++) {
        recv_counts[k] = k == me ? send_counts[me] : (size_t)__atomic_load_n(&in[k], __ATOMIC_ACQUIRE);
        recv_displs[k] = total;
        if (recv_counts[k] > SIZE_MAX / esize - total) {
            room = false;
        } else {
            total += recv_counts[k];
        }
    }
    if (!room || total > dest_nelems) {
        room = false;
        FSH_WARN("shmemx_alltoallv: %zu elements of %zu bytes arrive at team PE %d but dest "
                 "holds %zu: nothing is received here; give dest room for the sum of the "
                 "counts", total, esize, me, dest_nelems);
    }

    /* Phase 2: every receiver tells each sender where its block goes. */
    rc = fsh_coll_exchange_words(t, "alltoallv: exchanging offsets", room ? recv_displs : NULL,
                                 NO_ROOM, &in);
    if (rc != 0) {
        return rc;
    }

    /* Phase 3: the blocks. */
    enum fsh_seg seg;
    uint64_t off;
    rc = fsh_notify_dest(dest, dest_nelems * esize, &seg, &off);
    if (rc != 0) {
        return rc;
    }
    int refused = 0;
    if (fsh_backend_involved(seg, src)) {
        for (int i = 1; i < n && rc == 0; i++) {
            int to = (me + i) % n;
            uint64_t at = __atomic_load_n(&in[to], __ATOMIC_ACQUIRE);
            if (send_counts[to] > 0 && at == NO_ROOM) {
                refused++;
            } else if (send_counts[to] > 0) {
                rc = put_dev(t, to, seg, off + at * esize,
                             (const char *)src + send_displs[to] * esize, send_counts[to] * esize);
            }
        }
        if (rc == 0 && room) {
            rc = fsh_backend_copy((char *)dest + recv_displs[me] * esize,
                              (const char *)src + send_displs[me] * esize, send_counts[me] * esize);
        }
        rc = end_dev(t, rc, "alltoallv (device memory)");
        if (rc == 0 && refused) {
            FSH_WARN("shmemx_alltoallv: %d team PE(s) had no room for this PE's blocks; they were "
                     "not sent", refused);
        }
        return rc ? rc : (room && !refused ? 0 : 1);
    }
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    for (int i = 1; i < n && rc == 0; i++) {
        int to = (me + i) % n, from = (me - i + n) % n;
        if (room && recv_counts[from] > 0) {
            fsh_notify_expect(t, from, fsh_notify_pieces(recv_counts[from] * esize));
        }
        if (send_counts[to] == 0) {
            continue;
        }
        uint64_t at = __atomic_load_n(&in[to], __ATOMIC_ACQUIRE);
        if (at == NO_ROOM) {
            refused++;
            continue;
        }
        rc = fsh_notify_put(&b, to, seg, off + at * esize,
                            (const char *)src + send_displs[to] * esize, send_counts[to] * esize);
    }
    if (room) {
        memmove((char *)dest + recv_displs[me] * esize,
                (const char *)src + send_displs[me] * esize, send_counts[me] * esize);
    }
    for (int i = 1; i < n && rc == 0; i++) {
        int from = (me - i + n) % n;
        if (room && recv_counts[from] > 0) {
            rc = fsh_notify_wait(t, from, "alltoallv: receiving");
        }
    }
    int crc = fsh_notify_complete(&b, "alltoallv: sending");
    if (rc || crc) {
        return rc ? rc : crc;
    }
    if (refused) {
        FSH_WARN("shmemx_alltoallv: %d team PE(s) had no room for this PE's blocks; they were "
                 "not sent", refused);
    }
    return room && !refused ? 0 : 1;
}
