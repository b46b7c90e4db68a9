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
 * Only the parent writes a PE's dest (or the PE itself, pulling: below), once per call, and
 * only after that PE said it entered the call (a "ready" arrival, sent on entry): a root many
 * calls ahead must not overwrite a dest a slow PE is still reading, since nothing else in a
 * broadcast makes the root wait for anybody. The ready messages travel while the data waits
 * for the tree above, so they cost about one latency at the root. Back-to-back broadcasts
 * therefore need no barrier even into the same dest, once each PE is done with it before its
 * next call.
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
 *
 * Eager broadcasts (the world team of a job on one node whose PEs all map each other,
 * fsh_notify_eager): the k-th broadcast's parent also writes slot k of each child's ring
 * (notify.h), published by one compare-and-swap of its head word (k, fingerprint, state,
 * size): a PE with at most EAGER_DATA bytes puts the data there and goes on (no ready, no
 * counts: one line crosses between the cores, back to back the root runs up to a ring
 * ahead); a PE with more runs the tree above, and marks the slot of a child whose ready is
 * late (HELLO_WAIT: an eager child sends none). A PE reads the slot with
 * its own size in the same way: the data, or on a mark the ready path (so a parent that
 * passed more names the difference from the ready, as before); a larger one that finds data
 * there while it waits names the difference itself. A slot's reader frees it (state FREE)
 * once it has read it, a mark at the end of its call; a writer takes the slot when it holds
 * the broadcast a ring before, read (credits in the slot itself: back to back, no other line
 * crosses, where a separate consumed word crossed each call once the root was a ring ahead),
 * and else only once the child's done word (the number of the last broadcast it finished)
 * says it finished that one: the slot's writers change with the root and with calls too
 * large for it, and a parent a ring ahead must not take a slot an earlier parent has still to
 * fill. A root's own claim needs no reading.
 * The root claims its own slot k
 * (state ROOT): two PEs that both take themselves for the root, or two parents of one PE,
 * meet in one slot's compare-and-swap, and the second names the other's call.
 *
 * Pulled broadcasts (a child of at least PULL_MIN bytes whose parent's memory is mapped here,
 * host memory): the child reads its data itself, so that the two copies a team broadcast's
 * root made (into its own dest, then into the child's) become one each on two cores at once.
 * Its ready carries ASK_PULL; the parent answers with an offer in the child's ask mailbox for
 * it (its fingerprint and size, like a ready): ASK_SRC where the root's source is in its heap
 * (the offset in the root's fsh_notify_bsrc word: the child copies it whole while the root
 * copies it into its own dest), else ASK_PULL: read my dest, chunk by chunk as I signal
 * PULL_CHUNK bytes of it ready (a root copying its private source into its dest, or a parent
 * that pulls itself and is passed on behind it), or neither: I pushed it (the root of an
 * active-set broadcast has no dest to read; its children of the same call never ask to pull,
 * only a mix of the two forms does). The child copies min(its size, the parent's) and sends
 * a "done"; the parent returns only after every such child's done, since its source or dest
 * is being read until then (and its mailbox at the child is free only then). A size mismatch
 * is named from the ready as on the push path. A root whose source overlaps its dest copies
 * first and offers its dest.
 */
#include "coll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "nap.h"
#include "notify.h"
#include "local.h"
#include "env.h"
#include "error.h"
#include "rt.h"

#define ASK_HELLO ((uint64_t)1 << 47)
#define HELLO_WAIT 0.001 /* seconds a root waits for a child's ready before its hello */
#define ASK_PULL ((uint64_t)1 << 46) /* a ready: I read from your dest; an offer: read mine */
#define ASK_SRC ((uint64_t)1 << 45)  /* an offer: read my source (my fsh_notify_bsrc) */
#define ASK_BYTES (ASK_SRC - 1)
#define PULL_MIN (64 * 1024)   /* a mapped child of at least this many bytes reads its data */
#define PULL_MIN_CROWDED (512 * 1024) /* the same where PEs outnumber the cores (handoffs) */
#define PULL_CHUNK (32 * 1024) /* a parent signals its dest's progress in chunks of this */
#define PULL_POLLS 4096        /* a chunk's polls before its wait */
#define MAX_KIDS 32            /* children of one PE: log2 of a team's size */

/* An eager slot: its head word, the writer's world PE, the data. */
#define EAGER_DATA (FSH_NOTIFY_EAGER_SLOT - 16)
enum { SLOT_ROOT = 1, SLOT_DATA = 2, SLOT_MARK = 3, SLOT_FREE = 4 };
#define SLOT_SEQ(h) ((uint32_t)(h))
#define SLOT_FP(h) ((uint16_t)((h) >> 32))
#define SLOT_STATE(h) ((unsigned)((h) >> 48) & 7u)
#define SLOT_SIZE(h) ((size_t)((h) >> 51) & 8191u)
_Static_assert(EAGER_DATA < 8192, "a slot's size fits its 13 bits");

static uint64_t eager_seq;  /* broadcasts of the world team so far */

static uint64_t slot_word(uint64_t seq, uint16_t fp, unsigned state, size_t size)
{
    return (uint32_t)seq | (uint64_t)fp << 32 | (uint64_t)state << 48 | (uint64_t)size << 51;
}

/* May the slot for seq, now holding h, of world PE pe be written? When it holds the broadcast
 * a ring before, read (or a root's claim); else only once pe has finished that broadcast, as
 * its done word says: a slot is written by the parent of that broadcast, which is not always
 * the same PE (roots turn, and larger calls skip the ring), so a parent a ring ahead must not
 * take it before an earlier one's parent has written it and pe read it. */
static bool slot_writable(int pe, uint64_t h, uint64_t seq)
{
    unsigned st = SLOT_STATE(h);
    if (seq <= FSH_NOTIFY_EAGER_SLOTS) {
        return true;
    }
    if (SLOT_SEQ(h) == (uint32_t)(seq - FSH_NOTIFY_EAGER_SLOTS)) {
        /* That one's data or mark is freed before the child's done word moves: no need to
         * take the done word's line from the child while waiting for the slot. */
        return st == SLOT_FREE || st == SLOT_ROOT;
    }
    uint32_t done = (uint32_t)__atomic_load_n(fsh_notify_eager_done(pe), __ATOMIC_ACQUIRE);
    return (int32_t)(done - (uint32_t)(seq - FSH_NOTIFY_EAGER_SLOTS)) >= 0;
}

struct head_want {
    const uint64_t *head;
    uint64_t was, seq;
    int pe;
};

static bool head_moved(const void *arg)
{
    const struct head_want *w = arg;
    uint64_t h = __atomic_load_n(w->head, __ATOMIC_ACQUIRE);
    return h != w->was || slot_writable(w->pe, h, w->seq);
}

/* Two writers of one slot: the other one's call differs from mine. */
static int slot_clash(int other, uint64_t h, uint16_t fp, uint64_t seq)
{
    if (SLOT_FP(h) != fp) {
        return fsh_fingerprint_report(other, fp, SLOT_FP(h));
    }
    return fsh_err(-EPROTO, "every PE of the team must call the same collectives in the same "
                   "order, with the same nelems, PE_root, strides, type and operation",
                   "broadcast %llu of the world team: PE %d and PE %d passed different PE_root "
                   "(both wrote PE %d's part)", (unsigned long long)seq, fsh_rt.pe, other,
                   SLOT_STATE(h) == SLOT_ROOT ? other : fsh_rt.pe);
}

/* Publish `word` in world PE pe's slot for seq, with len bytes of data (pe may be me: the
 * root's claim). */
static int slot_put(int pe, uint64_t seq, uint64_t word, const void *data, size_t len,
                    uint16_t fp)
{
    char *slot = fsh_notify_eager_slot(pe, seq);
    uint64_t *head = (uint64_t *)(void *)slot;
    uint64_t h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
    while (SLOT_SEQ(h) != (uint32_t)seq) {
        if (pe != fsh_rt.pe && !slot_writable(pe, h, seq)) {
            /* An older broadcast's, not read yet: the ring is full. */
            struct head_want w = {head, h, seq, pe};
            char msg[160];
            snprintf(msg, sizeof(msg), "broadcast: waiting for PE %d to finish broadcast %llu",
                     pe, (unsigned long long)(seq - FSH_NOTIFY_EAGER_SLOTS));
            int rc = fsh_progress_wait_arrival(head_moved, &w, msg, pe);
            if (rc != 0) {
                return rc;
            }
            h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
            continue;
        }
        if (pe != fsh_rt.pe) {
            head[1] = (uint64_t)fsh_rt.pe;
            if (len > 0) {
                memcpy(slot + 16, data, len);
            }
        }
        if (__atomic_compare_exchange_n(head, &h, word, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            return 0;
        }
    }
    /* Taken for this broadcast: by the child as a root, or by another parent. */
    return slot_clash(pe != fsh_rt.pe ? pe : (int)head[1], h, fp, seq);
}

struct slot_want {
    const uint64_t *head;
    uint32_t seq;
};

static bool slot_here(const void *arg)
{
    const struct slot_want *w = arg;
    return SLOT_SEQ(__atomic_load_n(w->head, __ATOMIC_ACQUIRE)) == w->seq;
}

static bool slot_data(const void *arg)
{
    const struct slot_want *w = arg;
    uint64_t h = __atomic_load_n(w->head, __ATOMIC_ACQUIRE);
    return SLOT_SEQ(h) == w->seq && SLOT_STATE(h) == SLOT_DATA;
}

/* A slot with data where I passed another size and fingerprint: name it. */
static int slot_differs(int parent, uint64_t h, uint16_t fp, size_t bytes)
{
    if (SLOT_FP(h) != fp) {
        return fsh_fingerprint_report(parent, fp, SLOT_FP(h));
    }
    return fsh_err(-EPROTO, "every PE of the team must call the same collectives in the same "
                   "order, with the same nelems, PE_root, strides, type and operation",
                   "broadcast: PE %d sent %zu bytes, PE %d passed %zu", parent, SLOT_SIZE(h),
                   fsh_rt.pe, bytes);
}

/* The eager part of a child's receipt: 0 with *got when the data was in my slot (copied,
 * at most bytes), 0 without it on a mark (take the ready path), or -errno. */
static int slot_take(int parent, uint64_t seq, void *dest, size_t bytes, uint16_t fp,
                     struct fsh_coll_mismatch *mm, bool *got)
{
    uint64_t *head = (uint64_t *)(void *)fsh_notify_eager_slot(fsh_rt.pe, seq);
    struct slot_want w = {head, (uint32_t)seq};
    *got = false;
    if (!slot_here(&w)) {
        int rc = fsh_progress_wait_arrival(slot_here, &w, "broadcast: waiting for the data",
                                           parent);
        if (rc != 0) {
            return rc;
        }
    }
    uint64_t h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
    if (SLOT_STATE(h) != SLOT_DATA) {
        return 0;
    }
    if (fp != 0 && SLOT_FP(h) != fp) {
        return fsh_fingerprint_report(parent, fp, SLOT_FP(h));
    }
    size_t sent = SLOT_SIZE(h);
    if (sent != bytes) {
        mm->pe = parent;
        mm->theirs = sent;
    }
    if (bytes > 0) {
        memcpy(dest, (char *)head + 16, sent < bytes ? sent : bytes);
    }
    __atomic_store_n(head, slot_word(seq, fp, SLOT_FREE, 0), __ATOMIC_RELEASE);
    *got = true;
    return 0;
}

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

/* ------------------------------------------------------------------ pulled broadcasts */

static uint32_t chunks_of(size_t len)
{
    return (uint32_t)((len + PULL_CHUNK - 1) / PULL_CHUNK);
}

/* Do chunks go from PE to PE as they are copied? Not where waits yield the core (PEs
 * outnumber the cores, or FABSHMEM_YIELD=always): a chunk handed over would wait for a time slice,
 * so a parent hands its data over whole. */
static bool handoffs(void)
{
    static int on = -1;
    if (on < 0) {
        int i = fsh_env_word_index("FABSHMEM_YIELD");
        on = !(i == 0 ? fsh_rt.oversubscribed : i == 1);
    }
    return on;
}

/* Does a child read its data from world PE pw's dest itself? Large sizes, host memory its
 * parent's mapping shows here, and a parent whose dest will hold the data (not the root of
 * an active-set broadcast, which leaves its dest alone). */
static bool pulls_from(int pw, enum fsh_seg seg, uint64_t off, size_t bytes, bool from_root,
                       bool to_root)
{
    return bytes >= (handoffs() ? PULL_MIN : PULL_MIN_CROWDED) && seg != FSH_SEG_DEVICE &&
           (to_root || !from_root) &&
           fsh_local_addr(pw, seg, off) != NULL && fsh_local_addr(pw, FSH_SEG_HEAP, 0) != NULL;
}

/* A child that reads from this PE: chunks of its `want` bytes signalled so far. */
struct kid {
    int child;   /* team PE */
    size_t want; /* what it reads: the smaller of its size and mine */
    uint32_t sent;
};

/* Signal to each pulling child the chunks of it that `avail` bytes of my dest now hold. */
static int feed(struct fsh_notify_batch *b, struct kid *kids, int nk, size_t avail)
{
    int rc = 0;
    for (int i = 0; i < nk && rc == 0; i++) {
        uint32_t ready = avail >= kids[i].want ? chunks_of(kids[i].want)
                                               : (uint32_t)(avail / PULL_CHUNK);
        while (kids[i].sent < ready && rc == 0) {
            rc = fsh_notify_signal(b, kids[i].child);
            kids[i].sent++;
        }
    }
    return rc;
}

/* Wait for the next chunk of my parent's: a short poll first (the parent is usually copying
 * it right now), so that a chunk costs no wait message. */
static int wait_chunk(const struct fsh_team *t, int parent)
{
    fsh_notify_expect(t, parent, 1);
    for (unsigned i = 0; i < PULL_POLLS && handoffs(); i++) {
        if (fsh_notify_reached(t, parent)) {
            return 0;
        }
        fsh_cpu_relax();
    }
    return fsh_notify_wait(t, parent, "broadcast: waiting for the parent's next chunk");
}

/* The child's side once its parent's offer is in (the word in my ask mailbox for the parent):
 * read min(its size, mine) from the parent's dest chunk by chunk as the parent signals them,
 * feeding my own pulling children on the way; or, where the parent pushed instead, wait for
 * that. Then the "done" that lets the parent return. */
static int pull(const struct fsh_team *t, struct fsh_notify_batch *b, int parent, int pw,
                uint64_t word, uint64_t tag, void *dest, size_t bytes, enum fsh_seg seg,
                uint64_t off, struct kid *kids, int nk)
{
    if ((word & ~(ASK_BYTES | ASK_PULL | ASK_SRC)) != tag) {
        return fsh_fingerprint_report(pw, t->fp, (uint16_t)(word >> 48));
    }
    size_t theirs = (size_t)(word & ASK_BYTES), m = theirs < bytes ? theirs : bytes;
    int rc = 0;
    if (word & ASK_SRC) {
        /* The root's source, whole: copied while the root copies it into its own dest. */
        uint64_t soff = __atomic_load_n(fsh_notify_bsrc(pw), __ATOMIC_RELAXED);
        const char *from = fsh_local_addr(pw, FSH_SEG_HEAP, soff);
        for (size_t lo = 0; lo < m && rc == 0; lo += PULL_CHUNK) {
            size_t len = m - lo < PULL_CHUNK ? m - lo : PULL_CHUNK;
            memcpy((char *)dest + lo, from + lo, len);
            rc = feed(b, kids, nk, lo + len);
        }
    } else if (word & ASK_PULL) {
        const char *from = fsh_local_addr(pw, seg, off);
        for (uint32_t k = 0; k < chunks_of(m) && rc == 0; k++) {
            size_t lo = (size_t)k * PULL_CHUNK, len = m - lo < PULL_CHUNK ? m - lo : PULL_CHUNK;
            rc = wait_chunk(t, parent);
            if (rc == 0) {
                memcpy((char *)dest + lo, from + lo, len);
                rc = feed(b, kids, nk, lo + len);
            }
        }
    } else {
        /* Pushed, pieces up to my size (answer). */
        fsh_notify_expect(t, parent, fsh_notify_pieces(bytes));
        rc = fsh_notify_wait(t, parent, "broadcast: waiting for the data");
    }
    return rc ? rc : fsh_notify_signal(b, parent);
}

struct serve {
    struct fsh_team *t;
    struct fsh_notify_batch *b;
    uint64_t *asks, tag, seq;
    enum fsh_seg seg;
    uint64_t off;
    const void *from;
    size_t bytes;
    int r;
    bool ring, readable; /* readable: my dest (or src) will hold the data: a pull is served */
    bool src_ok;         /* the root's src is in its heap: children read it there */
    struct fsh_coll_mismatch *mm;
    struct kid *kids;
    int nk;
};

/* Child (team PE) of mine: wait for its ready, check it, then push its data (or as much as it
 * asked for), or offer it my dest to read from (a pulling child: s->kids). */
static int serve_child(struct serve *s, int child)
{
    struct fsh_team *t = s->t;
    /* The root's hello, only for a child whose ready is late (HELLO_WAIT): else the data (or
     * the offer) counts as it too. A late child may wait in its eager slot: mark it. */
    bool plus = s->r == 0 && t->fp != 0, late = false;
    int rc = 0;
    if (plus || s->ring) {
        rc = fsh_notify_wait_for(t, child, "broadcast: waiting for a PE to enter the call",
                                 HELLO_WAIT, &late);
    }
    if (rc == 0 && late && s->ring) {
        rc = slot_put(fsh_team_world_pe(t, child), s->seq,
                      slot_word(s->seq, t->fp, SLOT_MARK, 0), NULL, 0, t->fp);
    }
    if (rc == 0 && late && plus) {
        plus = false;
        rc = fsh_notify_word(s->b, child, &s->asks[t->my_pe], s->tag | ASK_HELLO);
        if (rc == 0) {
            /* The offer that may follow lands in the same mailbox, after this. */
            rc = fsh_notify_complete(s->b, "broadcast: a hello");
        }
    }
    if (rc == 0 && !plus) {
        rc = fsh_notify_wait(t, child, "broadcast: waiting for a PE to enter the call");
    }
    if (rc != 0) {
        return rc;
    }
    uint64_t word = __atomic_load_n(&s->asks[child], __ATOMIC_ACQUIRE);
    if (__builtin_expect((word & ~(ASK_BYTES | ASK_PULL | ASK_SRC)) != s->tag, 0)) {
        /* Another call's fingerprint, or a hello: the child takes itself for the root. */
        return fsh_fingerprint_report(fsh_team_world_pe(t, child), t->fp,
                                      (uint16_t)(word >> 48));
    }
    size_t ask = (size_t)(word & ASK_BYTES);
    if (ask != s->bytes && s->mm->pe < 0) {
        s->mm->pe = fsh_team_world_pe(t, child);
        s->mm->theirs = ask;
    }
    if (!(word & ASK_PULL)) {
        return answer(s->b, child, s->seg, s->off, s->from, s->bytes, ask, plus);
    }
    /* The offer: my size, and whether to read it from my dest or wait for my push. Its
     * mailbox is mine at the child, free again once the child's done is in. */
    uint64_t offer = s->tag | (s->src_ok ? ASK_SRC : s->readable ? ASK_PULL : 0) | s->bytes;
    rc = fsh_notify_word(s->b, child, &s->asks[t->my_pe], offer);
    if (rc == 0 && plus) {
        rc = fsh_notify_signal(s->b, child);
    }
    if (rc == 0) {
        /* Counted toward the child's first wait: in place before anything counted later. */
        rc = fsh_notify_complete(s->b, "broadcast: an offer");
    }
    /* Its done is waited for at the end (nothing to read where I pushed). */
    fsh_notify_expect(t, child, 1);
    /* Chunks signalled only to a child that reads my dest. */
    size_t want = !s->readable || s->src_ok ? 0 : ask < s->bytes ? ask : s->bytes;
    s->kids[s->nk++] = (struct kid){child, want, 0};
    if (rc == 0 && !s->readable) {
        rc = answer(s->b, child, s->seg, s->off, s->from, s->bytes, ask, false);
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
    bool ring = fsh_notify_eager(t), small = ring && bytes <= EAGER_DATA, got = false;
    /* An eager call writes slots, never dest's remote copies: the API checked dest already. */
    int rc = bytes > 0 && !small ? fsh_notify_dest(dest, bytes, &seg, &off) : 0;
    if (rc != 0) {
        return rc;
    }
    int low = r == 0 ? 1 << 30 : (r & -r);
    uint64_t *asks = fsh_notify_asks(t);
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    uint64_t tag = (uint64_t)t->fp << 48;
    uint64_t seq = ring ? ++eager_seq : 0;
    struct kid kids[MAX_KIDS];
    struct serve s = {t, &b, asks, tag, seq, seg, off, r == 0 ? src : dest, bytes, r, ring,
                      r != 0 || to_root, false, mm, kids, 0};
    int parent = 0, pw = 0;
    bool pulling = false, copy = false; /* copy: the root's own copy still to do */
    if (r != 0) {
        parent = (r - low + root) % n;
        pw = fsh_team_world_pe(t, parent);
        if (small) {
            rc = slot_take(pw, seq, dest, bytes, t->fp, mm, &got);
        }
        bool hello = parent == root && t->fp != 0;
        pulling = !got && pulls_from(pw, seg, off, bytes, parent == root, to_root);
        if (rc == 0 && !got) {
            rc = fsh_notify_word(&b, parent, &asks[t->my_pe],
                                 tag | (pulling ? ASK_PULL : 0) | bytes);
            fsh_notify_expect(t, parent, (pulling ? 1 : fsh_notify_pieces(bytes)) + hello);
        }
        /* A larger PE than an eager parent would wait for ever: it looks at its slot too. */
        if (rc == 0 && !got && ring) {
            uint64_t *head = (uint64_t *)(void *)fsh_notify_eager_slot(fsh_rt.pe, seq);
            struct slot_want w = {head, (uint32_t)seq};
            bool hit;
            rc = fsh_notify_wait_or(t, parent, "broadcast: waiting for the data", slot_data, &w,
                                    &hit);
            if (rc == 0 && hit) {
                rc = slot_differs(pw, __atomic_load_n(head, __ATOMIC_ACQUIRE), t->fp, bytes);
            }
        } else if (rc == 0 && !got) {
            rc = fsh_notify_wait(t, parent, "broadcast: waiting for the data");
        }
    } else {
        if (ring) {
            rc = slot_put(fsh_rt.pe, seq, slot_word(seq, t->fp, SLOT_ROOT, 0), NULL, 0, t->fp);
        }
        copy = to_root && dest != src && bytes > 0;
        enum fsh_seg sseg;
        uint64_t soff;
        if (bytes >= PULL_MIN && fsh_mr_lookup(src, bytes, &sseg, &soff) == 0 &&
            sseg == FSH_SEG_HEAP) {
            /* Children that pull read my source itself (published by the offers). */
            __atomic_store_n(fsh_notify_bsrc(fsh_rt.pe), soff, __ATOMIC_RELAXED);
            s.src_ok = s.readable = true;
        }
        if (copy && ((const char *)src < (const char *)dest + bytes &&
                     (const char *)dest < (const char *)src + bytes)) {
            /* Overlapping: copy first, and send from dest (src is partly overwritten). */
            memmove(dest, src, bytes);
            copy = false;
            s.from = dest;
            s.src_ok = false;
        }
    }
    int top = 1;
    while (top < n && top < low) {
        top *= 2;
    }
    /* Children, the largest subtree first. A PE still pulling its own data serves now only
     * those whose ready is in already (they pull behind it, chunk by chunk), the rest after;
     * none where PEs outnumber the cores (a chunk handed over would wait for a time slice). */
    bool served[MAX_KIDS] = {false};
    int nc = 0;
    for (int k = top / 2; k >= 1 && rc == 0; k /= 2, nc++) {
        if (!(k < low && r + k < n)) {
            continue;
        }
        int child = (r + k + root) % n;
        if (small) {
            rc = slot_put(fsh_team_world_pe(t, child), seq,
                          slot_word(seq, t->fp, SLOT_DATA, bytes), s.from, bytes, t->fp);
            served[nc] = true;
            continue;
        }
        fsh_notify_expect(t, child, 1); /* its ready */
        if (pulling && (!handoffs() || !fsh_notify_reached(t, child) ||
                        !(__atomic_load_n(&asks[child], __ATOMIC_ACQUIRE) & ASK_PULL))) {
            continue;
        }
        rc = serve_child(&s, child);
        served[nc] = true;
    }
    /* My own data: the root's copy into its dest, or a pulling child's reads; the children
     * that pull from me follow it chunk by chunk. */
    if (rc == 0 && pulling) {
        uint64_t word = __atomic_load_n(&asks[parent], __ATOMIC_ACQUIRE);
        rc = pull(t, &b, parent, pw, word, tag, dest, bytes, seg, off, kids, s.nk);
    } else if (rc == 0 && copy) {
        size_t step = handoffs() ? PULL_CHUNK : bytes;
        for (size_t lo = 0; lo < bytes && rc == 0; lo += step) {
            size_t len = bytes - lo < step ? bytes - lo : step;
            memcpy((char *)dest + lo, (const char *)src + lo, len);
            rc = feed(&b, kids, s.nk, lo + len);
        }
    }
    if (rc == 0) {
        rc = feed(&b, kids, s.nk, bytes);
    }
    nc = 0;
    for (int k = top / 2; k >= 1 && rc == 0; k /= 2, nc++) {
        if (k < low && r + k < n && !served[nc]) {
            rc = serve_child(&s, (r + k + root) % n);
            if (rc == 0) {
                rc = feed(&b, kids, s.nk, bytes);
            }
        }
    }
    /* The pulling children's done: my dest (or src) is theirs to read until then. */
    for (int i = 0; i < s.nk && rc == 0; i++) {
        rc = fsh_notify_wait(t, kids[i].child, "broadcast: waiting for a PE to read its data");
    }
    int crc = fsh_notify_complete(&b, "broadcast: forwarding");
    if (ring && r != 0 && !got && rc == 0) {
        /* A mark my parent left (my ready was late): read, free it. */
        uint64_t *head = (uint64_t *)(void *)fsh_notify_eager_slot(fsh_rt.pe, seq);
        uint64_t h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
        if (SLOT_SEQ(h) == (uint32_t)seq && SLOT_STATE(h) == SLOT_MARK) {
            __atomic_store_n(head, slot_word(seq, SLOT_FP(h), SLOT_FREE, 0), __ATOMIC_RELEASE);
        }
    }
    if (ring && rc == 0) {
        /* Done with this one, its slot included: the parents of later ones may take that slot
         * (slot_writable). */
        __atomic_store_n(fsh_notify_eager_done(fsh_rt.pe), seq, __ATOMIC_RELEASE);
    }
    return rc ? rc : crc ? crc : mm->pe >= 0;
}
