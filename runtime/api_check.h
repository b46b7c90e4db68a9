/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_check.h: the argument checks every public entry point starts with, shared by the API
 * files (api.c, api_coll.c).
 *
 * Each check is a few compares inline; on failure it ends the job through init.c's fatal path
 * with the routine's name, the cause and the fix. Checks are always on; the costlier ones
 * (FABSHMEM_CHECK) only when asked for.
 */
#ifndef FSH_API_CHECK_H
#define FSH_API_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <shmem.h>

#include "crash.h"
#include "heap.h"
#include "init.h"
#include "mr.h"
#include "rma.h"
#include "rt.h"
#include "team.h"

static inline void __attribute__((noreturn)) not_running(const char *fn)
{
    if (fsh_rt.forked) {
        fsh_init_fatal(fn, "make OpenSHMEM calls in the PE itself, not in a child it forked",
                       "called in a process forked after shmem_init (a forked child is no PE)");
    }
    if (fsh_rt.state == FSH_STATE_FINALIZED) {
        fsh_init_fatal(fn, "make shmem_finalize the last OpenSHMEM call of the program",
                       "called after shmem_finalize");
    }
    fsh_init_fatal(fn, "call shmem_init() (or shmem_init_thread) before any other OpenSHMEM routine",
                   "called before shmem_init");
}

static inline void running(const char *fn)
{
    if (__builtin_expect(fsh_rt.state != FSH_STATE_RUNNING, 0)) {
        not_running(fn);
    }
    fsh_crash_enter(fn); /* named if this call crashes (crash.h) */
}

static inline void check_pe(const char *fn, int pe)
{
    if (__builtin_expect(pe < 0 || pe >= fsh_rt.npes, 0)) {
        fsh_init_fatal(fn, "PEs are numbered 0..shmem_n_pes()-1", "PE %d out of range [0,%d)", pe,
                       fsh_rt.npes);
    }
}

static inline void __attribute__((noreturn)) bad_ctx(const char *fn, shmem_ctx_t ctx)
{
    fsh_init_fatal(fn, "pass a context from shmem_ctx_create (or SHMEM_CTX_DEFAULT) that has not been destroyed, and check that create returned 0",
                   "context %p %s", (void *)ctx, fsh_rma_ctx_why((uintptr_t)ctx));
}

/* The context of a handle (rma.h): one compare with its slot's live handle. */
static inline struct fsh_ctx *check_ctx(const char *fn, shmem_ctx_t ctx)
{
    const struct fsh_ctx_slot *s = fsh_rma_ctx_slot((uintptr_t)ctx);
    if (__builtin_expect(s->handle != (uintptr_t)ctx, 0)) {
        bad_ctx(fn, ctx);
    }
    return s->ctx;
}

/* The world PE a point-to-point routine on context c aims at: on a context made by
 * shmem_team_create_ctx, pe is numbered in that team (spec), else in the world. */
static inline int ctx_pe(const char *fn, const struct fsh_ctx *c, int pe)
{
    const struct fsh_team *t = c->team;
    if (__builtin_expect(t == NULL, 1)) {
        check_pe(fn, pe);
        return pe;
    }
    if (__builtin_expect(pe < 0 || pe >= t->size, 0)) {
        fsh_init_fatal(fn, "on a context created on a team, PEs are numbered 0..shmem_team_n_pes(team)-1",
                       "PE %d out of range [0,%d) of the context's team", pe, t->size);
    }
    return fsh_team_world_pe(t, pe);
}

/* The remote side of an RMA must lie wholly inside one symmetric segment. */
static inline void check_sym(const char *fn, const char *what, const void *addr, size_t len,
                             enum fsh_seg *seg, uint64_t *off)
{
    if (__builtin_expect(fsh_mr_lookup(addr, len, seg, off) != 0, 0)) {
        fsh_init_fatal(fn, "use memory from shmem_malloc/shmem_calloc/shmem_align, or a global or static variable of the program",
                       "%s %p is not symmetric (%zu bytes not within the symmetric heap or the program's data/bss)",
                       what, addr, len);
    }
    /* FABSHMEM_CHECK: a heap address must also lie in a live block (a walk of the blocks). */
    if (__builtin_expect(fsh_rt.checks, 0) && *seg == FSH_SEG_HEAP &&
        !fsh_heap_in_live_block(addr, len)) {
        fsh_init_fatal(fn, "do not use a symmetric block after shmem_free, nor beyond the size it was allocated with",
                       "%s %p (%zu bytes) is in the symmetric heap but not within a live block (freed, or past its end)",
                       what, addr, len);
    }
}

/* The device heap takes RMA (strided too), put-with-signal, atomics, waits and the all-to-all
 * collectives; what the CPU must read and write in place there (a lock's words, the other
 * collectives' buffers, which they copy and combine with the CPU) is refused with this
 * message. */
static inline void check_not_device(const char *fn, const char *what, enum fsh_seg seg)
{
    if (__builtin_expect(seg == FSH_SEG_DEVICE, 0)) {
        fsh_init_fatal(fn, "keep this object in host symmetric memory (shmem_malloc or a global); the device heap takes RMA, put-with-signal, atomics, waits and all-to-all",
                       "%s is in the device heap (shmemx_malloc_device), which %s does not support",
                       what, fn);
    }
}

static inline void check_local(const char *fn, const char *what, const void *p, size_t len)
{
    if (__builtin_expect(len > 0 && p == NULL, 0)) {
        fsh_init_fatal(fn, "pass a valid buffer", "%s is NULL with %zu bytes to transfer", what,
                       len);
    }
}

static inline void check_size(const char *fn, size_t nbytes)
{
    /* api_typed.c passes SIZE_MAX when nelems * sizeof(T) overflows. */
    if (__builtin_expect(nbytes > (SIZE_MAX >> 1), 0)) {
        fsh_init_fatal(fn, "check nelems", "transfer size overflows the address space");
    }
}

static inline void done(const char *fn, int rc)
{
    if (__builtin_expect(rc != 0, 0)) {
        fsh_init_fatal_err(fn, rc);
    }
}

#endif
