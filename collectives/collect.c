/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * collect.c: all-gather, of equal (fcollect) or differing (collect) sizes, in team order.
 *
 * Every PE writes its block straight into every other member's dest at its offset, in the
 * staggered order of all-to-all (PE i starts with i+1): N-1 pipelined writes per PE, each byte
 * crossing the fabric once, and one wait per sender. For collect the offsets are prefix sums
 * of the sizes, which the PEs first exchange as one 8-byte word each through the team's
 * scratch mailboxes (a step: every PE needs every size). fcollect's blocks carry the call's
 * fingerprint (notify.h), compared by each receiver: a different nelems is named.
 */
#include "coll.h"

#include <errno.h>
#include <string.h>

#include "error.h"
#include "notify.h"

/* My block to dest + at on every other member; sizes[k] (NULL: all `bytes`) from each. */
static int gather(struct fsh_team *t, void *dest, size_t total, const void *src, size_t bytes,
                  size_t at, const uint64_t *sizes, const char *what, uint16_t fp)
{
    int n = t->size, me = t->my_pe, rc = 0;
    if (total == 0) {
        return 0;
    }
    enum fsh_seg seg;
    uint64_t off;
    rc = fsh_notify_dest(dest, total, &seg, &off);
    if (rc != 0) {
        return rc;
    }
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    for (int i = 1; i < n && rc == 0; i++) {
        int from = (me - i + n) % n;
        size_t in = sizes ? sizes[from] : bytes;
        if (in > 0) {
            fsh_notify_expect(t, from, fsh_notify_pieces(in));
        }
        if (bytes > 0) {
            rc = fsh_notify_put_fp(&b, (me + i) % n, seg, off + at, src, bytes, fp);
        }
    }
    if (bytes > 0) {
        memmove((char *)dest + at, src, bytes);
    }
    for (int i = 1; i < n && rc == 0; i++) {
        int from = (me - i + n) % n;
        if ((sizes ? sizes[from] : bytes) > 0) {
            rc = fsh_notify_wait(t, from, what);
            if (rc == 0) {
                rc = fsh_notify_fp_check(t, from, fp, true);
            }
        }
    }
    int crc = fsh_notify_complete(&b, what);
    return rc ? rc : crc;
}

int fsh_coll_fcollect(struct fsh_team *t, void *dest, const void *src, size_t bytes)
{
    return gather(t, dest, bytes * (size_t)t->size, src, bytes, bytes * (size_t)t->my_pe, NULL,
                  "fcollect", t->fp);
}

int fsh_coll_collect(struct fsh_team *t, void *dest, const void *src, size_t bytes)
{
    int n = t->size, me = t->my_pe;
    uint64_t *in;
    int rc = fsh_coll_exchange_words(t, "collect: exchanging sizes", NULL, bytes, &in);
    if (rc != 0) {
        return rc;
    }
    in[me] = bytes;
    size_t at = 0, total = 0;
    for (int k = 0; k < n; k++) {
        if (k == me) {
            at = total;
        }
        total += __atomic_load_n(&in[k], __ATOMIC_ACQUIRE);
    }
    if (dest == NULL && total > 0) {
        /* A zero nelems lets this PE pass NULL only when the others collect nothing either. */
        return fsh_err(-EINVAL, "pass a symmetric dest with room for the sum of every PE's nelems (NULL only when every PE passes 0)",
                       "dest is NULL, but the team collects %zu bytes into it", total);
    }
    return gather(t, dest, total, src, bytes, at, in, "collect", 0);
}
