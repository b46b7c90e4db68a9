/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend.h: how memory that is not plain host memory is reached: the one question the
 * operations ask before they move data.
 *
 * RMA, signals, atomics, waits and the collectives move host memory themselves (a load or
 * memcpy where the peer's segment is mapped, the fabric otherwise). A segment or a local buffer
 * they cannot touch that way, the device heap or a buffer in GPU memory, belongs to a memory
 * backend: a table of operations that init.c installs once, after the backend's module
 * (devmem.c) set itself up on every PE, and clears at finalize. The operations ask
 * fsh_backend_involved() (one load and one branch while no backend is installed) and hand the
 * transfer over; none of them names the backend's module, so the device heap sits under the
 * operations it serves, and is reached only downward.
 */
#ifndef FSH_BACKEND_H
#define FSH_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mr.h"

struct fsh_ctx;

struct fsh_backend {
    /* The symmetric segment the backend owns (FSH_SEG_DEVICE). */
    enum fsh_seg seg;
    /* A local buffer in the backend's memory (GPU memory, in the heap or not)? */
    bool (*owns)(const void *p);
    /* Blocking: complete at the target on return, the source reusable. Either side may be
     * the backend's memory: the segment (seg, off) of pe, or the local buffer. */
    int (*put)(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src, size_t len,
               int pe);
    int (*get)(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, size_t len,
               int pe);
    /* An atomic (enum fsh_amo_op) on the size-byte (4 or 8) object at off of pe's segment
     * seg; complete on return, fetch gets the old value of a fetching op. */
    int (*amo)(int op, uint64_t off, const void *value, const void *cond, void *fetch,
               size_t size, int pe);
    /* Put-with-signal whose signal word is the backend's (off soff of pe's segment seg is the
     * data's destination, len 0: none; op FSH_AMO_SET or FSH_AMO_ADD): complete on return, the
     * signal never before the data; 1 when the backend cannot do both in one go for this pair
     * (the caller puts the data, then applies the signal with amo). */
    int (*put_signal)(enum fsh_seg seg, uint64_t off, const void *src, size_t len, uint64_t soff,
                      int op, uint64_t value, int pe);
    /* A local copy, either side the backend's memory or host memory. */
    int (*copy)(void *dst, const void *src, size_t len);
    /* Make NIC writes into the backend's memory visible to its device before what guards them
     * (a signal, a sync, a satisfied wait) lets the program use them; NULL when nothing needs
     * doing (the backend's own protocol copied the data in). */
    void (*visible)(void);
};

/* The installed backend, or NULL: read on every put and get, written only by init.c before the
 * first operation and after the last (read-only while the job runs, like fsh_rt). */
extern const struct fsh_backend *fsh_backend_active;

/* Install b (NULL: none). */
void fsh_backend_set(const struct fsh_backend *b);

/* Does a transfer with remote side seg and local buffer local need the backend? */
static inline bool fsh_backend_involved(enum fsh_seg seg, const void *local)
{
    const struct fsh_backend *b = fsh_backend_active;
    return __builtin_expect(b != NULL, 0) && (seg == b->seg || b->owns(local));
}

/* Is seg the backend's segment? */
static inline bool fsh_backend_segment(enum fsh_seg seg)
{
    const struct fsh_backend *b = fsh_backend_active;
    return __builtin_expect(b != NULL, 0) && seg == b->seg;
}

/* Is local in the backend's memory (not the host's to load)? */
static inline bool fsh_backend_owns(const void *local)
{
    const struct fsh_backend *b = fsh_backend_active;
    return __builtin_expect(b != NULL, 0) && b->owns(local);
}

/* The transfers of the installed backend (only after one of the questions above said yes). */
static inline int fsh_backend_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off,
                                  const void *src, size_t len, int pe)
{
    return fsh_backend_active->put(ctx, seg, off, src, len, pe);
}

static inline int fsh_backend_get(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg,
                                  uint64_t off, size_t len, int pe)
{
    return fsh_backend_active->get(ctx, dest, seg, off, len, pe);
}

static inline int fsh_backend_amo(int op, uint64_t off, const void *value, const void *cond,
                                  void *fetch, size_t size, int pe)
{
    return fsh_backend_active->amo(op, off, value, cond, fetch, size, pe);
}

static inline int fsh_backend_put_signal(enum fsh_seg seg, uint64_t off, const void *src,
                                         size_t len, uint64_t soff, int op, uint64_t value,
                                         int pe)
{
    return fsh_backend_active->put_signal(seg, off, src, len, soff, op, value, pe);
}

static inline int fsh_backend_copy(void *dst, const void *src, size_t len)
{
    return fsh_backend_active->copy(dst, src, len);
}

/* Before data a guard (signal, sync, wait) protects is used: the backend's visible(). */
static inline void fsh_backend_guard(void)
{
    const struct fsh_backend *b = fsh_backend_active;
    if (__builtin_expect(b != NULL, 0) && b->visible) {
        b->visible();
    }
}

#endif
