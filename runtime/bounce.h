/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bounce.h: bounce slots, registered buffers a blocking put above the inject size is copied
 * into, so that it returns as soon as the copy is made (progress.h says how rma.c uses them).
 *
 * A set of slots is one registered block cut into n slots of size bytes, the free ones on a
 * stack. The engine's set (fsh_progress_bounce_*, progress.h) is taken and given back under
 * the engine lock; a lane's (lane.c, its first blocking put makes it) under the lane's. The set
 * itself has no lock: its owner's lock guards it.
 */
#ifndef FSH_BOUNCE_H
#define FSH_BOUNCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fsh_mr_set; /* mr.h */

struct fsh_bounce {
    uint8_t *base;
    size_t size, n;
    void **free;
    size_t nfree;
    struct fsh_mr_set *set;
};

/* n slots of size bytes (rounded up to 64), registered on every rail: 0 or -errno (recorded,
 * the set left empty). */
int fsh_bounce_init(struct fsh_bounce *b, size_t size, size_t n);
void fsh_bounce_fini(struct fsh_bounce *b);
/* A free slot for len bytes, or NULL (len above the size, none free, or no slots). */
void *fsh_bounce_take(struct fsh_bounce *b, size_t len);
void fsh_bounce_give(struct fsh_bounce *b, void *slot);
bool fsh_bounce_owns(const struct fsh_bounce *b, const void *p);
/* The engine's set, for the shape of a lane's (same size, fewer slots). */
const struct fsh_bounce *fsh_bounce_engine(void);

#endif
