/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * broadcast.c: one PE's data to every member of a team, along a binomial tree.
 *
 * With ranks relative to the root (r = (i - root) mod N), PE r receives from r - lowbit(r)
 * and forwards to r + 2^k for every 2^k < lowbit(r) (the root: every 2^k < N), the largest
 * subtree first so the longest chain starts earliest. Each PE forwards from its own dest once
 * the whole block arrived: ceil(log2 N) steps, N-1 writes in all, each PE sending at most
 * log2 N blocks. The tree suits the small and medium sizes most codes broadcast; for large
 * blocks on many PEs a scatter followed by an all-gather would move each byte fewer times
 * (not done yet: the tree is bandwidth-optimal up to 2 PEs and within 2x beyond).
 *
 * Only the parent writes a PE's dest, once per call, and only after that PE said it entered
 * the call (a data-less "ready" arrival, sent on entry): a root many calls ahead must not
 * overwrite a dest a slow PE is still reading, since nothing else in a broadcast makes the
 * root wait for anybody. The ready messages travel while the data waits for the tree above,
 * so they cost about one latency at the root. Back-to-back broadcasts therefore need no
 * barrier even into the same dest, once each PE is done with it before its next call.
 *
 * The ready is an 8-byte counted write of the size the PE asked for (its nelems in bytes) into
 * the parent's ask mailbox (notify.h: the mailboxes of the team's next step, safe to share as
 * notify.c explains): the parent writes at most that many bytes, so a PE never
 * receives more than it asked for, whatever the others passed. A parent that sees another size
 * than its own sends the smaller, then data-less arrivals up to the count the child expects
 * (its own size's pieces), and reports the mismatch (fsh_coll_broadcast's *mm) instead of
 * corrupting the child's memory or its counts. The ready costs what a data-less one did (one
 * injected write); a PE with nothing to receive still takes part, so that a size of zero on
 * some PEs only cannot leave a parent waiting.
 *
 * Fingerprints (notify.h): the ready word carries the call's fingerprint in its top 16 bits
 * (the size in the low 47), so a parent that meets another nelems, PE_root or element size
 * ends the job naming both calls before it writes anything (the clamping above remains for a
 * difference the 15 bits miss). A child of the root expects one arrival more than its data:
 * a "hello" from the root (its fingerprint and bit 47 in the child's ask mailbox for it, which
 * the child counts and does not read), which the root writes when the child's ready is late
 * (HELLO_WAIT), or else folded into the data (counted twice: fsh_notify_put_plus, no extra
 * message but on EFA). Where two PEs both take themselves for the root, each waits for the
 * other's ready, sends its hello after HELLO_WAIT and finds the other's instead of a ready,
 * and the difference is named rather than both waiting forever. (The root is nobody's child,
 * so its mailbox at a child is never one the child reads a ready from.)
 */
#include "coll.h"

#include <string.h>

#include "fingerprint.h"
#include "notify.h"

#define ASK_HELLO ((uint64_t)1 << 47)
#define HELLO_WAIT 0.001 /* seconds a root waits for a child's ready before its hello */
#define ASK_BYTES (ASK_HELLO - 1)

/* To child (team PE) that asked for `ask` bytes: at most that, then the arrivals it expects;
 * plus one more where it expects a hello that was not sent. */
static int answer(struct fsh_notify_batch *b, int child, enum fsh_seg seg, uint64_t off,
                  const void *from, size_t bytes, size_t ask, bool plus)
{
    if (__builtin_expect(ask == bytes, 1)) {
        return plus ? fsh_notify_put_plus(b, child, seg, off, from, bytes)
                    : fsh_notify_put(b, child, seg, off, from, bytes);
    }
    size_t len = bytes < ask ? bytes : ask;
    int rc = plus ? fsh_notify_put_plus(b, child, seg, off, from, len)
                  : fsh_notify_put(b, child, seg, off, from, len);
    for (uint32_t k = fsh_notify_pieces(len); k < fsh_notify_pieces(ask) && rc == 0; k++) {
        rc = fsh_notify_signal(b, child);
    }
    return rc;
}

int fsh_coll_broadcast(struct fsh_team *t, void *dest, const void *src, size_t bytes, int root,
                       bool to_root, struct fsh_coll_mismatch *mm)
{
    int n = t->size;
    int r = (t->my_pe - root + n) % n;
    mm->pe = -1;
    if (n == 1) {
        if (to_root && dest != src && bytes > 0) {
            memmove(dest, src, bytes);
        }
        return 0;
    }
    enum fsh_seg seg = FSH_SEG_HEAP;
    uint64_t off = 0;
    int rc = bytes > 0 ? fsh_notify_dest(dest, bytes, &seg, &off) : 0;
    if (rc != 0) {
        return rc;
    }
    int low = r == 0 ? 1 << 30 : (r & -r);
    uint64_t *asks = fsh_notify_asks(t);
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    uint64_t tag = (uint64_t)t->fp << 48;
    if (r != 0) {
        int parent = (r - low + root) % n;
        rc = fsh_notify_word(&b, parent, &asks[t->my_pe], tag | bytes);
        bool hello = parent == root && t->fp != 0;
        fsh_notify_expect(t, parent, fsh_notify_pieces(bytes) + hello);
        if (rc == 0) {
            rc = fsh_notify_wait(t, parent, "broadcast: waiting for the data");
        }
    } else if (to_root && dest != src && bytes > 0) {
        memmove(dest, src, bytes);
    }
    const void *from = r == 0 ? src : dest;
    int top = 1;
    while (top < n && top < low) {
        top *= 2;
    }
    for (int k = top / 2; k >= 1 && rc == 0; k /= 2) {
        if (k < low && r + k < n) {
            int child = (r + k + root) % n;
            fsh_notify_expect(t, child, 1);
            /* The root's hello, only for a child whose ready is late (HELLO_WAIT): else the
             * data counts as it too. */
            bool plus = r == 0 && t->fp != 0, late = false;
            if (plus) {
                rc = fsh_notify_wait_for(t, child, "broadcast: waiting for a PE to enter the call",
                                         HELLO_WAIT, &late);
            }
            if (rc == 0 && late) {
                plus = false;
                rc = fsh_notify_word(&b, child, &asks[t->my_pe], tag | ASK_HELLO);
            }
            if (rc == 0 && !plus) {
                rc = fsh_notify_wait(t, child, "broadcast: waiting for a PE to enter the call");
            }
            if (rc != 0) {
                break;
            }
            uint64_t word = __atomic_load_n(&asks[child], __ATOMIC_ACQUIRE);
            if (__builtin_expect((word & ~ASK_BYTES) != tag, 0)) {
                /* Another call's fingerprint, or a hello: the child takes itself for the
                 * root. */
                rc = fsh_fingerprint_report(fsh_team_world_pe(t, child), t->fp,
                                            (uint16_t)(word >> 48));
                break;
            }
            size_t ask = (size_t)(word & ASK_BYTES);
            if (ask != bytes && mm->pe < 0) {
                mm->pe = fsh_team_world_pe(t, child);
                mm->theirs = ask;
            }
            rc = answer(&b, child, seg, off, from, bytes, ask, plus);
        }
    }
    int crc = fsh_notify_complete(&b, "broadcast: forwarding");
    return rc ? rc : crc ? crc : mm->pe >= 0;
}
