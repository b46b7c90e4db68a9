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
 * barrier even into the same dest, once each PE is done with it before its next call; a
 * broadcast never uses the team's scratch.
 */
#include "coll.h"

#include <string.h>

#include "notify.h"

int fsh_coll_broadcast(struct fsh_team *t, void *dest, const void *src, size_t bytes, int root,
                       bool to_root)
{
    int n = t->size;
    int r = (t->my_pe - root + n) % n;
    if (bytes == 0) {
        return 0;
    }
    enum fsh_seg seg;
    uint64_t off;
    int rc = fsh_notify_dest(dest, bytes, &seg, &off);
    if (rc != 0) {
        return rc;
    }
    int low = r == 0 ? 1 << 30 : (r & -r);
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t->slot);
    if (r != 0) {
        int parent = fsh_team_world_pe(t, (r - low + root) % n);
        rc = fsh_notify_signal(&b, parent); /* ready */
        fsh_notify_expect(t->slot, parent, fsh_notify_pieces(bytes));
        if (rc == 0) {
            rc = fsh_notify_wait(t->slot, parent, "broadcast: waiting for the data");
        }
    } else if (to_root && dest != src) {
        memmove(dest, src, bytes);
    }
    const void *from = r == 0 ? src : dest;
    int top = 1;
    while (top < n && top < low) {
        top *= 2;
    }
    for (int k = top / 2; k >= 1 && rc == 0; k /= 2) {
        if (k < low && r + k < n) {
            int child = fsh_team_world_pe(t, (r + k + root) % n);
            fsh_notify_expect(t->slot, child, 1);
            rc = fsh_notify_wait(t->slot, child, "broadcast: waiting for a PE to enter the call");
            if (rc == 0) {
                rc = fsh_notify_put(&b, child, seg, off, from, bytes);
            }
        }
    }
    int crc = fsh_notify_complete(&b, "broadcast: forwarding");
    return rc ? rc : crc;
}
