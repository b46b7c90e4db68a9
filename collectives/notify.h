/*
 * notify.h: counted writes, the one mechanism every collective synchronizes with.
 *
 * A collective moves data with writes whose immediate data names a slot (one per team) and
 * the sender; the target's progress engine counts arrivals per (slot, sender) once each write
 * has landed. A receiver adds what it expects from a sender to that sender's expected count
 * and waits until the arrivals reach it. Counts only grow, so consecutive collectives need no
 * reset; the rules that keep them exact are written out in notify.c.
 *
 * Each slot also owns a little symmetric scratch (in the heap, the same offsets everywhere):
 * 8-byte mailboxes indexed by sender, and landing buffers for reductions, both double
 * buffered by the parity of the team's step (fsh_team_step).
 */
#ifndef FSH_NOTIFY_H
#define FSH_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"
#include "progress.h"

/* The writes of one collective call (or one phase of it): completing the batch makes its
 * sources reusable and, with delivery completion, its data visible at the targets. */
struct fsh_notify_batch {
    struct fsh_op_track sync;
    unsigned slot;
};

/* Allocate the counters and the scratch of max_teams team slots plus one slot for the
 * active-set (deprecated pSync) collectives. Collective over all PEs (heap allocation). */
int fsh_notify_init(int npes, unsigned max_teams);
/* The heap bytes fsh_notify_init reserves (the memory model's figure). */
size_t fsh_notify_heap_bytes(int npes, unsigned max_teams);
void fsh_notify_fini(void);
unsigned fsh_notify_aset_slot(void);
/* The slot of shmem_finalize's synchronization: no user collective counts its arrivals. */
unsigned fsh_notify_final_slot(void);

static inline void fsh_notify_batch_init(struct fsh_notify_batch *b, unsigned slot)
{
    b->sync = (struct fsh_op_track){0, 0, 0};
    b->slot = slot;
}

/* Write len bytes from src to (seg, off) of world PE pe, in pieces of at most the provider's
 * message size; each piece counts one arrival at pe. len 0 sends one data-less arrival. */
int fsh_notify_put(struct fsh_notify_batch *b, int pe, enum fsh_seg seg, uint64_t off,
                   const void *src, size_t len);
/* value into the scratch word `word` (an address from the accessors below) of pe, as one
 * arrival, like a data-less one in cost; src (registered scratch of this PE) holds the value
 * until the batch completes. */
int fsh_notify_word(struct fsh_notify_batch *b, int pe, uint64_t *word, uint64_t value,
                    uint64_t *src);
/* One data-less arrival at pe (a "ready" or a barrier round). */
int fsh_notify_signal(struct fsh_notify_batch *b, int pe);
/* Arrivals one fsh_notify_put of len bytes raises at its target. */
uint32_t fsh_notify_pieces(size_t len);
/* Wait until every write of the batch completed. */
int fsh_notify_complete(struct fsh_notify_batch *b, const char *what);

/* Expect n more arrivals from world PE from on slot; wait until all expected ones arrived. */
void fsh_notify_expect(unsigned slot, int from, uint32_t n);
int fsh_notify_wait(unsigned slot, int from, const char *what);

/* Scratch of a slot. words_in(slot, parity)[i]: the 8-byte mailbox team PE i writes into;
 * words_out(slot)[i]: the source of my 8-byte value for team PE i (registered, stays valid
 * until the batch completes). red(slot, parity, round): a landing buffer of red_chunk bytes
 * for round `round` (< red_rounds) of a reduction step. */
uint64_t *fsh_notify_words_in(unsigned slot, unsigned parity);
uint64_t *fsh_notify_words_out(unsigned slot);
void *fsh_notify_red(unsigned slot, unsigned parity, unsigned round);
/* asks(slot)[i]: the size team PE i asked for in the "ready" it sent this PE (broadcast.c).
 * Not double buffered: i writes it again only after this PE answered the last one. */
uint64_t *fsh_notify_asks(unsigned slot);
size_t fsh_notify_red_chunk(void);
unsigned fsh_notify_red_rounds(void);
/* The symmetric (seg, off) of a collective's dest of len bytes; -EFAULT (recorded) when it
 * is not symmetric. */
int fsh_notify_dest(const void *dest, size_t len, enum fsh_seg *seg, uint64_t *off);
/* Heap offset (the same on every PE) of a scratch address returned above. */
uint64_t fsh_notify_scratch_off(const void *p);

#endif
