/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bounce.c: bounce slots (bounce.h), and the engine's own set (progress.h's
 * fsh_progress_bounce_*).
 *
 * The engine's set is taken and given back under the engine lock (posts and completions hold
 * it); a lane's under the lane's lock (lane.c). A slot handed to a post belongs to the record
 * that posts it, which gives it back on completion. Registers with mr.c; posts nothing.
 */
#include "bounce.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mr.h"
#include "progress.h"

static struct fsh_bounce engine_slots;

void fsh_bounce_fini(struct fsh_bounce *b)
{
    if (b->set) {
        fsh_mr_dereg_local(b->set);
    }
    free(b->free);
    free(b->base);
    memset(b, 0, sizeof(*b));
}

int fsh_bounce_init(struct fsh_bounce *b, size_t size, size_t n)
{
    size = (size + 63) & ~(size_t)63;
    void *base = NULL;
    if (posix_memalign(&base, 4096, size * n) != 0) {
        return fsh_err(-ENOMEM, "set FABSHMEM_BOUNCE_SIZE=0, or lower FABSHMEM_BOUNCE_SLOTS",
                       "cannot allocate %zu bounce slots of %zu bytes", n, size);
    }
    b->base = base;
    b->free = calloc(n, sizeof(*b->free));
    int rc = b->free ? fsh_mr_reg_local(base, size * n, &b->set)
                     : fsh_err(-ENOMEM, "set FABSHMEM_BOUNCE_SIZE=0", "out of memory for the "
                               "bounce slots' list");
    if (rc != 0) {
        fsh_bounce_fini(b);
        return rc;
    }
    b->size = size;
    b->n = n;
    for (size_t i = 0; i < n; i++) {
        b->free[i] = b->base + (n - 1 - i) * size;
    }
    b->nfree = n;
    return 0;
}

void *fsh_bounce_take(struct fsh_bounce *b, size_t len)
{
    return len > b->size || b->nfree == 0 ? NULL : b->free[--b->nfree];
}

void fsh_bounce_give(struct fsh_bounce *b, void *slot)
{
    b->free[b->nfree++] = slot;
}

bool fsh_bounce_owns(const struct fsh_bounce *b, const void *p)
{
    const uint8_t *q = p;
    return b->base && q >= b->base && q < b->base + b->size * b->n;
}

const struct fsh_bounce *fsh_bounce_engine(void)
{
    return &engine_slots;
}

int fsh_progress_bounce_init(size_t size, size_t n)
{
    return fsh_bounce_init(&engine_slots, size, n);
}

void fsh_progress_bounce_fini(void)
{
    fsh_bounce_fini(&engine_slots);
}

void *fsh_progress_bounce_take(size_t len)
{
    FSH_ASSERT_ENGINE_HELD();
    return fsh_bounce_take(&engine_slots, len);
}

void fsh_progress_bounce_give(void *slot)
{
    FSH_ASSERT_ENGINE_HELD();
    fsh_bounce_give(&engine_slots, slot);
}

bool fsh_progress_bounce_owns(const void *p)
{
    return fsh_bounce_owns(&engine_slots, p);
}

void *fsh_progress_bounce_desc(int rail)
{
    return fsh_mr_set_desc(engine_slots.set, rail);
}
