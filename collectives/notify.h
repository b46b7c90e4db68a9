/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * notify.h: counted writes, the one mechanism every collective synchronizes with.
 *
 * A collective moves data with writes whose immediate data names the team's region (its
 * counters and scratch) and the sender; the target's progress engine counts arrivals per
 * (region, sender) once each write has landed. A receiver adds what it expects from a sender
 * to that sender's expected count and waits until the arrivals reach it. Counts only grow
 * while a team lives, so consecutive collectives need no reset; the rules that keep them
 * exact are written out in notify.c.
 *
 * A region lives in the symmetric heap at the same offset on every member of its team and
 * holds, for a team of n PEs: n cells (an arrival counter and two fingerprints each), 2 x n
 * 8-byte mailboxes (double buffered by the parity of the team's step, fsh_team_step), a few
 * source words for 8-byte writes, and the reductions' landing buffers. The world team, the
 * active sets and shmem_finalize have regions of their own, sized by the job; every other
 * team's region is carved from a small arena of FSH_NOTIFY_PAGES pages when the team is made
 * (team.c agrees on the pages).
 */
#ifndef FSH_NOTIFY_H
#define FSH_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"
#include "progress.h"

struct fsh_team;

/* Pages of the team arena: an arrival's immediate names a region in 6 bits, 3 of its values
 * name the world, finalize and active-set regions, the other 61 an arena page. */
#define FSH_NOTIFY_PAGES 61

/* What a region keeps for one sender, in the symmetric heap: its arrivals counted, and the
 * fingerprints of its last two fingerprinted messages (by the parity of their number). */
struct fsh_notify_cell {
    uint32_t arrived;
    uint16_t fp[2];
};

/* The counters and scratch of one team (notify.c lays them out). */
struct fsh_notify_region {
    unsigned code;      /* names the region in an arrival's immediate */
    int n;              /* senders counted: 0..n-1 */
    bool by_world;      /* senders counted by world PE (active sets), else by team index */
    struct fsh_notify_cell *cells; /* [n], symmetric heap */
    uint32_t *expected; /* [n], private */
    uint32_t *fp_out;   /* [n], private: fingerprinted messages sent to each member */
    uint32_t *fp_in;    /* [n], private: fingerprinted messages checked from each member */
    uint64_t *words;    /* [2][n] mailboxes, symmetric heap */
    uint64_t *ring;     /* sources of 8-byte writes, registered */
    char *land;         /* [2][rounds] landing buffers of chunk bytes, symmetric heap */
    size_t chunk;
    unsigned rounds;
    uint64_t pages;     /* arena pages of the region (0: a region of the job) */
    uint64_t lease;     /* arena pages of larger landing buffers leased later */
    bool lease_tried;
};

/* The writes of one collective call (or one phase of it) on team t: completing the batch
 * makes its sources reusable and, with delivery completion, its data visible at the
 * targets. */
struct fsh_notify_batch {
    struct fsh_op_track sync;
    const struct fsh_team *t;
    unsigned ring_used;
};

/* The symmetric heap bytes fsh_notify_init reserves for a job of npes PEs with
 * FABSHMEM_MAX_TEAMS=max_teams. Pure: callable before init (a memory table uses it). */
size_t fsh_notify_heap_bytes(int npes, unsigned max_teams);
/* The arena pages a team of n PEs takes in such a job (pure, like the above): a team of
 * npes PEs always fits, and so do two of half of them. */
unsigned fsh_notify_team_pages(int npes, unsigned max_teams, int n);

/* Reserve the regions of the job and the team arena. Collective over all PEs (heap
 * reservation). */
int fsh_notify_init(int npes, unsigned max_teams);
void fsh_notify_fini(void);
struct fsh_notify_region *fsh_notify_world(void);
/* The active-set collectives' region: counted by world PE, mailboxes by index in the set. */
struct fsh_notify_region *fsh_notify_aset(void);
/* shmem_finalize's synchronization: no user collective counts its arrivals. */
struct fsh_notify_region *fsh_notify_final(void);

/* The arena: pages free on this PE (bit i: page i), the pages a team of n PEs takes, and the
 * first run of `pages` pages in a mask of free pages (pure: the same answer on every PE that
 * agreed on the mask). */
uint64_t fsh_notify_free_pages(void);
unsigned fsh_notify_pages_for(int n);
bool fsh_notify_fit(uint64_t free, unsigned pages, unsigned *first);
size_t fsh_notify_page_bytes(void);
/* The region of a new team of n PEs on pages first.. (agreed by the members); fsh_notify_release
 * zeroes it and gives the pages (and any lease) back: only when the team's last collective on
 * this PE has returned, so that nothing can still land in it. */
int fsh_notify_carve(int n, unsigned first, struct fsh_notify_region **out);
void fsh_notify_release(struct fsh_notify_region *r);
/* Larger landing buffers for an arena team, tried once, at its first reduction: whether to
 * try (the same answer on every member), and the lease itself from the members' agreed free
 * pages (kept small when the arena is short: the team's own buffers still work). */
bool fsh_notify_lease_wanted(const struct fsh_notify_region *r);
void fsh_notify_lease(struct fsh_notify_region *r, uint64_t free);

static inline void fsh_notify_batch_init(struct fsh_notify_batch *b, const struct fsh_team *t)
{
    b->sync = (struct fsh_op_track){0, 0, 0};
    b->t = t;
    b->ring_used = 0;
}

/* Write len bytes from src to (seg, off) of team PE i, in pieces of at most the provider's
 * message size; each piece counts one arrival there. len 0 sends one data-less arrival. */
int fsh_notify_put(struct fsh_notify_batch *b, int i, enum fsh_seg seg, uint64_t off,
                   const void *src, size_t len);
/* value into the mailbox `word` (an address from fsh_notify_words or fsh_notify_asks) of team
 * PE i, as one arrival, like a data-less one in cost. */
int fsh_notify_word(struct fsh_notify_batch *b, int i, uint64_t *word, uint64_t value);
/* One data-less arrival at team PE i (a barrier round). */
int fsh_notify_signal(struct fsh_notify_batch *b, int i);
/* Arrivals one fsh_notify_put of len bytes raises at its target. */
uint32_t fsh_notify_pieces(size_t len);
/* Wait until every write of the batch completed. */
int fsh_notify_complete(struct fsh_notify_batch *b, const char *what);

/* ------------------------------------------------------------------ fingerprints
 * A collective's arguments travel with the messages it sends anyway, as a 16-bit fingerprint
 * (notify.c says where), and each receiver compares the sender's with its own: a mismatch ends
 * the call with -EPROTO and a recorded error that names both PEs' calls. A fingerprint of 0
 * means none (nothing is sent or checked). fingerprint.c makes them and names a mismatch.
 *
 * A fingerprinted data-less arrival (always carries it), and a fingerprinted fsh_notify_put
 * (carries it in a mapped peer's cell or in the immediate data's upper half; on a provider
 * with 4 bytes of immediate data, EFA, as many of its bits as the sender field's spare bits
 * hold: notify.c). */
int fsh_notify_signal_fp(struct fsh_notify_batch *b, int i, uint16_t fp);
int fsh_notify_put_fp(struct fsh_notify_batch *b, int i, enum fsh_seg seg, uint64_t off,
                      const void *src, size_t len, uint16_t fp);
/* After a wait for team PE i's arrivals: compare the fingerprint of its next fingerprinted
 * message (a signal; data: a put) with mine. 0, or -EPROTO with the mismatch recorded. */
int fsh_notify_fp_check(const struct fsh_team *t, int i, uint16_t fp, bool data);

/* Expect n more arrivals from team PE i; wait until all expected ones arrived. */
void fsh_notify_expect(const struct fsh_team *t, int i, uint32_t n);
int fsh_notify_wait(const struct fsh_team *t, int i, const char *what);
/* Whether every arrival expected from team PE i is in: one load, no progress (a caller that
 * polls before it waits). */
bool fsh_notify_reached(const struct fsh_team *t, int i);
/* The same wait, given up after secs seconds: 0 with *late false when everything arrived, 0
 * with *late true when the time ran out first (nothing consumed: wait again), or -errno. */
int fsh_notify_wait_for(const struct fsh_team *t, int i, const char *what, double secs,
                        bool *late);
/* The same wait, ended also by other(arg) (asked every 64 polls): *hit when that came first. */
int fsh_notify_wait_or(const struct fsh_team *t, int i, const char *what, fsh_done_fn other,
                       const void *arg, bool *hit);
/* fsh_notify_put that raises one arrival more than its pieces at team PE i, at no extra
 * message where it can (a mapped peer, or a flag in the upper half of an 8-byte immediate);
 * on EFA a data-less arrival follows it. */
int fsh_notify_put_plus(struct fsh_notify_batch *b, int i, enum fsh_seg seg, uint64_t off,
                        const void *src, size_t len);

/* *word = AND of every member's *word, in the rounds of a barrier; takes a step. Team
 * creation agrees on arena pages with it, init and the API on a flag of every PE. */
int fsh_notify_and_word(struct fsh_team *t, uint64_t *word);

/* words(t, parity)[i]: the mailbox team PE i writes into in a step of that parity. */
uint64_t *fsh_notify_words(const struct fsh_team *t, unsigned parity);
/* asks(t)[i]: the size team PE i asked for in the "ready" it sent this PE (broadcast.c): the
 * mailboxes of the team's next step, which a broadcast does not take (notify.c says why
 * sharing them is safe). */
uint64_t *fsh_notify_asks(const struct fsh_team *t);
/* A landing buffer of fsh_notify_red_chunk(t) bytes for round `round` of a reduction step:
 * round 0 receives the fold of a team whose size is no power of two, rounds 1..log2 of the
 * exchanges. */
void *fsh_notify_red(const struct fsh_team *t, unsigned parity, unsigned round);
size_t fsh_notify_red_chunk(const struct fsh_team *t);
/* The symmetric (seg, off) of a collective's dest of len bytes; -EFAULT (recorded) when it
 * is not symmetric. */
int fsh_notify_dest(const void *dest, size_t len, enum fsh_seg *seg, uint64_t *off);
/* The eager ring of small broadcasts on the world team (broadcast.c), where every PE of the
 * job is on one node and maps every other (init agrees: fsh_notify_eager_enable): per PE
 * FSH_NOTIFY_EAGER_SLOTS slots of FSH_NOTIFY_EAGER_SLOT bytes, the one of the broadcast
 * numbered seq written by that PE's parent in it. Addresses are PE pe's, as mapped here (pe
 * may be this PE). */
#define FSH_NOTIFY_EAGER_SLOTS 8
#define FSH_NOTIFY_EAGER_SLOT 320
void fsh_notify_eager_enable(bool on);
bool fsh_notify_eager(const struct fsh_team *t);
char *fsh_notify_eager_slot(int pe, uint64_t seq);
/* PE pe's number of the last world-team broadcast it finished (its own line, as mapped here). */
uint64_t *fsh_notify_eager_done(int pe);
/* World PE pe's broadcast source word (broadcast.c: where a root's source is, for the
 * children that read it there), as mapped here (pe may be this PE); NULL when not mapped. */
uint64_t *fsh_notify_bsrc(int pe);
/* Heap offset (the same on every PE) of a scratch address returned above. */
uint64_t fsh_notify_scratch_off(const void *p);

#endif
