/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.c: the OpenSHMEM entry points that are not generated per type, and the type-erased
 * routines the generated ones call. The collectives are api_coll.c's, and the routines that
 * allocate and free symmetric memory api_memory.c's.
 *
 * Each routine checks its arguments first (library state, PE range, context, symmetric
 * addresses, sizes; always on, they cost a few compares), then calls one module. An invalid
 * argument or a failed operation ends the job with the two-line report of init.c, naming the
 * routine, the cause and the fix. Nothing below this file knows the public names.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amo.h"
#include "api.h"
#include "api_check.h"
#include "backend.h"
#include "coll.h"
#include "devmem.h"
#include "error.h"
#include "init.h"
#include "local.h"
#include "log.h"
#include "mr.h"
#include "lock.h"
#include "progress.h"
#include "rma.h"
#include "rma_session.h"
#include "rt.h"
#include "shmem.h"
#include "shmemx.h"
#include "signal.h"
#include "team.h"

FSH_API shmem_ctx_t const SHMEM_CTX_DEFAULT = (shmem_ctx_t)FSH_CTX_DEFAULT_HANDLE;

/* ------------------------------------------------------------------ RMA (type-erased) */

void fsh_api_put(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                 int pe, int nbi)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    pe = ctx_pe(fn, c, pe);
    check_size(fn, nbytes);
    if (nbytes == 0) {
        return;
    }
    enum fsh_seg seg;
    uint64_t off;
    check_sym(fn, "dest", dest, nbytes, &seg, &off);
    check_local(fn, "source", src, nbytes);
    if (__builtin_expect(fsh_backend_involved(seg, src), 0)) {
        done(fn, fsh_backend_put(c, seg, off, src, nbytes, pe)); /* complete on return */
        return;
    }
    done(fn, fsh_rma_put(c, seg, off, src, nbytes, pe, nbi != 0));
}

void fsh_api_get(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                 int pe, int nbi)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    pe = ctx_pe(fn, c, pe);
    check_size(fn, nbytes);
    if (nbytes == 0) {
        return;
    }
    enum fsh_seg seg;
    uint64_t off;
    check_sym(fn, "source", src, nbytes, &seg, &off);
    check_local(fn, "dest", dest, nbytes);
    if (__builtin_expect(fsh_backend_involved(seg, dest), 0)) {
        done(fn, fsh_backend_get(c, dest, seg, off, nbytes, pe)); /* complete on return */
        return;
    }
    done(fn, fsh_rma_get(c, dest, seg, off, nbytes, pe, nbi != 0));
}

/* Bytes spanned by nblocks blocks of bsize elements at a stride: ((nblocks-1)*stride + bsize)
 * * esize. iput/iget (not blocked: bsize 1) take any stride that is not negative; the blocked
 * ibput/ibget need a stride of at least bsize (the spec: bsize means contiguous blocks, less
 * would overlap them), checked only where a stride is used, between blocks. */
static size_t strided_extent(const char *fn, const char *what, ptrdiff_t stride, size_t bsize,
                             size_t nblocks, size_t esize, bool blocked)
{
    if (stride < 0 && !blocked) {
        fsh_init_fatal(fn, "strides are counted in elements and must not be negative",
                       "%s stride %td is negative", what, stride);
    }
    if (blocked && nblocks > 1 && (stride < 0 || (size_t)stride < bsize)) {
        fsh_init_fatal(fn, "block strides are counted in elements and must be at least bsize (a stride of bsize means contiguous blocks)",
                       "%s stride %td is less than bsize %zu", what, stride, bsize);
    }
    size_t span;
    if (__builtin_mul_overflow(nblocks > 1 ? (size_t)stride : 0, nblocks - 1, &span) ||
        __builtin_add_overflow(span, bsize, &span) || __builtin_mul_overflow(span, esize, &span)) {
        fsh_init_fatal(fn, "check nelems and the strides", "strided transfer overflows the address space");
    }
    return span;
}

/* Strided transfers with GPU memory on either side: block by block through devmem.c (each
 * complete on return). Correct everywhere; for speed, keep strided data in host memory. */
static int dev_strided(struct fsh_ctx *c, bool put, char *local, ptrdiff_t lst, enum fsh_seg seg,
                       uint64_t off, ptrdiff_t rst, size_t bsize, size_t nblocks, size_t esize,
                       int pe)
{
    int rc = 0;
    for (size_t i = 0; i < nblocks && rc == 0; i++) {
        char *l = local + i * (size_t)lst * esize;
        uint64_t o = off + i * (uint64_t)rst * esize;
        rc = put ? fsh_backend_put(c, seg, o, l, bsize * esize, pe)
                 : fsh_backend_get(c, l, seg, o, bsize * esize, pe);
    }
    return rc;
}

/* iput/iget (bsize 1, not blocked) and ibput/ibget: nblocks blocks of bsize elements, block i
 * from source + i*sst to dest + i*dst (strides in elements). The remote side (dest of a put,
 * source of a get) must be symmetric over its whole span. */
static void strided(const char *fn, shmem_ctx_t ctx, bool put, void *dest, const void *src,
                    ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize,
                    int pe, bool blocked)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    pe = ctx_pe(fn, c, pe);
    if (nblocks == 0 || bsize == 0) {
        return;
    }
    size_t dspan = strided_extent(fn, "dest", dst, bsize, nblocks, esize, blocked);
    size_t sspan = strided_extent(fn, "source", sst, bsize, nblocks, esize, blocked);
    enum fsh_seg seg;
    uint64_t off;
    char *local = put ? (char *)src : dest;
    check_sym(fn, put ? "dest" : "source", put ? dest : src, put ? dspan : sspan, &seg, &off);
    check_local(fn, put ? "source" : "dest", local, put ? sspan : dspan);
    if (__builtin_expect(fsh_backend_involved(seg, local), 0)) {
        done(fn, dev_strided(c, put, local, put ? sst : dst, seg, off, put ? dst : sst, bsize,
                             nblocks, esize, pe));
        return;
    }
    done(fn, put ? fsh_rma_ibput(c, seg, off, src, dst, sst, bsize, nblocks, esize, pe)
                 : fsh_rma_ibget(c, dest, seg, off, dst, sst, bsize, nblocks, esize, pe));
}

void fsh_api_iput(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    strided(fn, ctx, true, dest, src, dst, sst, 1, nelems, esize, pe, false);
}

void fsh_api_iget(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    strided(fn, ctx, false, dest, src, dst, sst, 1, nelems, esize, pe, false);
}

void fsh_api_ibput(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                   ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe)
{
    strided(fn, ctx, true, dest, src, dst, sst, bsize, nblocks, esize, pe, true);
}

void fsh_api_ibget(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                   ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe)
{
    strided(fn, ctx, false, dest, src, dst, sst, bsize, nblocks, esize, pe, true);
}

/* ------------------------------------------------------------------ atomics */

static inline void check_aligned(const char *fn, const char *what, const void *addr, size_t size)
{
    if (__builtin_expect(((uintptr_t)addr & (size - 1)) != 0, 0)) {
        fsh_init_fatal(fn, "atomics need naturally aligned objects: use a variable of the type, or shmem_align",
                       "%s %p is not aligned to %zu bytes", what, addr, size);
    }
}

void fsh_api_amo(const char *fn, shmem_ctx_t ctx, int op, void *target, const void *value,
                 const void *cond, void *fetch, size_t size, int pe, int nbi)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    pe = ctx_pe(fn, c, pe);
    enum fsh_seg seg;
    uint64_t off;
    check_sym(fn, op == FSH_AMO_FETCH ? "source" : "dest", target, size, &seg, &off);
    check_aligned(fn, op == FSH_AMO_FETCH ? "source" : "dest", target, size);
    if (fsh_amo_fetches(op)) {
        check_local(fn, "fetch", fetch, size);
    }
    done(fn, fsh_amo(c, op, seg, off, value, cond, fetch, size, pe, nbi != 0));
}

/* ------------------------------------------------------------------ point-to-point sync */

static inline void check_cmp(const char *fn, int cmp)
{
    if (__builtin_expect(!fsh_wait_cmp_valid(cmp), 0)) {
        fsh_init_fatal(fn, "use SHMEM_CMP_EQ, _NE, _GT, _GE, _LT or _LE", "invalid comparison %d",
                       cmp);
    }
}

size_t fsh_api_sync(const char *fn, int mode, int block, void *ivars, size_t nelems,
                    const int *status, int cmp, const void *values, int vector, size_t esize,
                    int is_signed, size_t *indices)
{
    running(fn);
    check_cmp(fn, cmp);
    if (nelems > 0) {
        enum fsh_seg seg;
        uint64_t off;
        size_t bytes;
        if (__builtin_mul_overflow(nelems, esize, &bytes) || bytes > (SIZE_MAX >> 1)) {
            fsh_init_fatal(fn, "check nelems", "nelems %zu of %zu-byte variables overflows the address space",
                           nelems, esize);
        }
        check_sym(fn, "ivars", ivars, bytes, &seg, &off);
        check_aligned(fn, "ivars", ivars, esize);
        check_local(fn, "cmp_values", values, 1);
        if (mode == FSH_SYNC_SOME) {
            check_local(fn, "indices", indices, 1);
        }
    }
    int err = 0;
    size_t r = fsh_wait_sync(mode, block != 0, ivars, nelems, status, cmp, values, vector != 0,
                             esize, is_signed != 0, indices, fn, &err);
    done(fn, err);
    return r;
}

/* ------------------------------------------------------------------ signals */

static inline void check_signal(const char *fn, const uint64_t *sig_addr, enum fsh_seg *seg,
                                uint64_t *off)
{
    check_sym(fn, "sig_addr", sig_addr, sizeof(uint64_t), seg, off);
    check_aligned(fn, "sig_addr", sig_addr, sizeof(uint64_t));
}

/* A signal in the device heap: the data first, complete at the target, then the update as a
 * device AMO, so it can never be seen before the data; in one go (one synchronization of the
 * driver for SET) where this PE's driver reaches both, e.g. a same-node peer's mapped heap. */
static int put_signal_dev(struct fsh_ctx *c, enum fsh_seg dseg, uint64_t doff, const void *src,
                          size_t nbytes, uint64_t soff, uint64_t signal, int sig_op, int pe)
{
    int op = sig_op == SHMEM_SIGNAL_SET ? FSH_AMO_SET : FSH_AMO_ADD;
    int rc = 0;
    if (nbytes == 0 || fsh_backend_involved(dseg, src)) {
        rc = fsh_backend_put_signal(dseg, doff, src, nbytes, soff, op, signal, pe);
        if (rc != 1) {
            return rc;
        }
        rc = 0;
    }
    if (nbytes > 0 && fsh_backend_involved(dseg, src)) {
        rc = fsh_backend_put(c, dseg, doff, src, nbytes, pe);
    } else if (nbytes > 0) {
        rc = fsh_rma_put(c, dseg, doff, src, nbytes, pe, false);
        if (rc == 0) {
            rc = fsh_rma_quiet(c);
        }
    }
    if (rc == 0) {
        rc = fsh_backend_amo(op, soff, &signal, NULL, NULL, sizeof(uint64_t), pe);
    }
    return rc;
}

/* The value of a signal word of this PE, host or device heap. */
static uint64_t signal_value(const char *fn, const uint64_t *sig_addr, enum fsh_seg seg,
                             uint64_t off)
{
    if (seg != FSH_SEG_DEVICE) {
        return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
    }
    uint64_t v = 0;
    done(fn, fsh_backend_amo(FSH_AMO_FETCH, off, NULL, NULL, &v, sizeof(v), fsh_rt.pe));
    return v;
}

void fsh_api_put_signal(const char *fn, shmem_ctx_t ctx, void *dest, const void *src,
                        size_t nbytes, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                        int nbi)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    pe = ctx_pe(fn, c, pe);
    check_size(fn, nbytes);
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD) {
        fsh_init_fatal(fn, "use SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD", "invalid sig_op %d", sig_op);
    }
    enum fsh_seg dseg = FSH_SEG_HEAP, sseg;
    uint64_t doff = 0, soff;
    if (nbytes > 0) {
        check_sym(fn, "dest", dest, nbytes, &dseg, &doff);
        check_local(fn, "source", src, nbytes);
    }
    check_signal(fn, sig_addr, &sseg, &soff);
    if (__builtin_expect(sseg == FSH_SEG_DEVICE, 0)) {
        done(fn, put_signal_dev(c, dseg, doff, src, nbytes, soff, signal, sig_op, pe));
        return;
    }
    if (nbytes > 0 && __builtin_expect(fsh_backend_involved(dseg, src), 0)) {
        /* The data first, complete at the target (in its GPU memory when dest is there); then
         * the signal alone, which therefore can never be seen before the data. */
        done(fn, fsh_backend_put(c, dseg, doff, src, nbytes, pe));
        nbytes = 0;
    }
    done(fn, fsh_signal_put(c, dseg, doff, src, nbytes, sseg, soff, signal, sig_op, pe, nbi != 0));
}

FSH_PROFILED(shmem_signal_fetch)
uint64_t pshmem_signal_fetch(const uint64_t *sig_addr)
{
    running(FSH_FN);
    enum fsh_seg seg;
    uint64_t off;
    check_signal(FSH_FN, sig_addr, &seg, &off);
    /* One pass of progress, so a loop of fetches also lets signals land. */
    done(FSH_FN, fsh_progress_poll() < 0 ? -EIO : 0);
    return signal_value(FSH_FN, sig_addr, seg, off);
}

FSH_PROFILED(shmem_signal_add)
void pshmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    fsh_api_put_signal(FSH_FN, SHMEM_CTX_DEFAULT, NULL, NULL, 0, sig_addr, signal,
                       SHMEM_SIGNAL_ADD, pe, 0);
}

FSH_PROFILED(shmem_signal_set)
void pshmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    fsh_api_put_signal(FSH_FN, SHMEM_CTX_DEFAULT, NULL, NULL, 0, sig_addr, signal,
                       SHMEM_SIGNAL_SET, pe, 0);
}

FSH_PROFILED(shmem_ctx_signal_add)
void pshmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    fsh_api_put_signal(FSH_FN, ctx, NULL, NULL, 0, sig_addr, signal, SHMEM_SIGNAL_ADD, pe, 0);
}

FSH_PROFILED(shmem_ctx_signal_set)
void pshmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    fsh_api_put_signal(FSH_FN, ctx, NULL, NULL, 0, sig_addr, signal, SHMEM_SIGNAL_SET, pe, 0);
}

FSH_PROFILED(shmem_signal_wait_until)
uint64_t pshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    running(FSH_FN);
    check_cmp(FSH_FN, cmp);
    enum fsh_seg seg;
    uint64_t off;
    check_signal(FSH_FN, sig_addr, &seg, &off);
    int err = 0;
    uint64_t v = fsh_wait_signal(sig_addr, cmp, cmp_value, FSH_FN, &err);
    done(FSH_FN, err);
    return v;
}

/* ------------------------------------------------------------------ locks */

static void check_lock(const char *fn, long *lock, enum fsh_seg *seg, uint64_t *off)
{
    running(fn);
    check_sym(fn, "lock", lock, sizeof(long), seg, off);
    check_aligned(fn, "lock", lock, sizeof(long));
    check_not_device(fn, "lock", *seg);
}

FSH_PROFILED(shmem_set_lock)
void pshmem_set_lock(long *lock)
{
    enum fsh_seg seg;
    uint64_t off;
    check_lock(FSH_FN, lock, &seg, &off);
    done(FSH_FN, fsh_lock_set(seg, off, lock));
}

FSH_PROFILED(shmem_clear_lock)
void pshmem_clear_lock(long *lock)
{
    enum fsh_seg seg;
    uint64_t off;
    check_lock(FSH_FN, lock, &seg, &off);
    done(FSH_FN, fsh_lock_clear(seg, off, lock));
}

FSH_PROFILED(shmem_test_lock)
int pshmem_test_lock(long *lock)
{
    enum fsh_seg seg;
    uint64_t off;
    check_lock(FSH_FN, lock, &seg, &off);
    int acquired = 0;
    done(FSH_FN, fsh_lock_test(seg, off, lock, &acquired));
    return acquired ? 0 : 1;
}

/* ------------------------------------------------------------------ contexts */

int fsh_api_ctx_create(const char *fn, long options, void *team,
                       struct fsh_lane_reserve *reserve, shmem_ctx_t *ctx)
{
    const long known = SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE;
    if (options & ~known) {
        fsh_init_fatal(fn, "combine SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE and SHMEM_CTX_NOSTORE",
                       "unknown option bits 0x%lx", options & ~known);
    }
    if (!ctx) {
        fsh_init_fatal(fn, "pass the address of a shmem_ctx_t to receive the context",
                       "ctx is NULL");
    }
    struct fsh_ctx *c;
    if (fsh_rma_ctx_create(options, team, reserve, &c) != 0) {
        /* The spec's failure mode: nonzero return, SHMEM_CTX_INVALID. */
        const struct fsh_error *e = fsh_err_last();
        FSH_WARN("%s: no context: %s; %s", fn, e ? e->msg : "", e ? e->fix : "");
        fsh_err_clear();
        *ctx = SHMEM_CTX_INVALID;
        return 1;
    }
    *ctx = (shmem_ctx_t)c->handle;
    return 0;
}

FSH_PROFILED(shmem_ctx_create)
int pshmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    running(FSH_FN);
    return fsh_api_ctx_create(FSH_FN, options, NULL, NULL, ctx);
}

FSH_PROFILED(shmem_ctx_destroy)
void pshmem_ctx_destroy(shmem_ctx_t ctx)
{
    running(FSH_FN);
    if (ctx == SHMEM_CTX_INVALID) {
        return; /* the spec: no effect */
    }
    if (ctx == SHMEM_CTX_DEFAULT) {
        fsh_init_fatal(FSH_FN, "destroy only contexts made by shmem_ctx_create",
                       "SHMEM_CTX_DEFAULT cannot be destroyed");
    }
    done(FSH_FN, fsh_rma_ctx_destroy(check_ctx(FSH_FN, ctx)));
}

FSH_PROFILED(shmem_ctx_get_team)
int pshmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    running(FSH_FN);
    if (ctx == SHMEM_CTX_INVALID || !team) {
        if (team) {
            *team = SHMEM_TEAM_INVALID;
        }
        return -1;
    }
    const struct fsh_ctx *c = check_ctx(FSH_FN, ctx);
    *team = c->team ? (shmem_team_t)((const struct fsh_team *)c->team)->handle : SHMEM_TEAM_WORLD;
    return 0;
}

/* OpenSHMEM 1.6 sessions. On SHMEM_CTX_INVALID start performs no action (the spec); stop does
 * the same, as every other context routine does there. Unknown option or mask bits are ignored:
 * no combination of options is undefined, and a session is only a hint. */
FSH_PROFILED(shmem_ctx_session_start)
void pshmem_ctx_session_start(shmem_ctx_t ctx, long options,
                              const shmem_ctx_session_config_t *config, long config_mask)
{
    running(FSH_FN);
    if (ctx == SHMEM_CTX_INVALID) {
        return;
    }
    struct fsh_ctx *c = check_ctx(FSH_FN, ctx);
    bool has_total = config && (config_mask & SHMEM_CTX_SESSION_TOTAL_OPS);
    done(FSH_FN, fsh_rma_session_start(c, (options & SHMEM_CTX_SESSION_BATCH) != 0,
                                       has_total ? config->total_ops : SIZE_MAX, has_total));
}

FSH_PROFILED(shmem_ctx_session_stop)
void pshmem_ctx_session_stop(shmem_ctx_t ctx)
{
    running(FSH_FN);
    if (ctx != SHMEM_CTX_INVALID) {
        done(FSH_FN, fsh_rma_session_stop(check_ctx(FSH_FN, ctx)));
    }
}

/* ------------------------------------------------------------------ setup, exit, query */

FSH_PROFILED(shmem_init)
void pshmem_init(void)
{
    fsh_init_run(FSH_FN, SHMEM_THREAD_SINGLE, NULL);
}

FSH_PROFILED(shmem_init_thread)
int pshmem_init_thread(int requested, int *provided)
{
    fsh_init_run(FSH_FN, requested, provided);
    return 0;
}

FSH_PROFILED(shmem_query_thread)
void pshmem_query_thread(int *provided)
{
    running(FSH_FN);
    *provided = fsh_rt.thread_level;
}

/* OpenSHMEM 1.6: callable at any time, before shmem_init and after shmem_finalize too, so it
 * checks no state; 1 exactly from the end of initialization to the start of the last
 * finalize's completion (a PE that is initializing is not yet initialized; a finalize that
 * matches a nested init leaves the library initialized). */
FSH_PROFILED(shmem_query_initialized)
void pshmem_query_initialized(int *initialized)
{
    if (!initialized) {
        fsh_init_fatal(FSH_FN, "pass the address of an int to receive the state",
                       "initialized is NULL");
    }
    *initialized = __atomic_load_n(&fsh_rt.state, __ATOMIC_ACQUIRE) == FSH_STATE_RUNNING;
}

FSH_PROFILED(shmem_finalize)
void pshmem_finalize(void)
{
    if (fsh_rt.state == FSH_STATE_FINALIZED) {
        return; /* a finalize beyond the inits' count changes nothing */
    }
    running(FSH_FN);
    fsh_init_finalize(FSH_FN);
}

FSH_PROFILED(shmem_global_exit)
void pshmem_global_exit(int status)
{
    running(FSH_FN);
    fsh_init_global_exit(status);
}

FSH_PROFILED(shmem_my_pe)
int pshmem_my_pe(void)
{
    running(FSH_FN);
    return fsh_rt.pe;
}

FSH_PROFILED(shmem_n_pes)
int pshmem_n_pes(void)
{
    running(FSH_FN);
    return fsh_rt.npes;
}

FSH_PROFILED(shmem_pe_accessible)
int pshmem_pe_accessible(int pe)
{
    running(FSH_FN);
    return pe >= 0 && pe < fsh_rt.npes;
}

FSH_PROFILED(shmem_addr_accessible)
int pshmem_addr_accessible(const void *addr, int pe)
{
    running(FSH_FN);
    enum fsh_seg seg;
    uint64_t off;
    return pe >= 0 && pe < fsh_rt.npes && fsh_mr_lookup(addr, 1, &seg, &off) == 0;
}

FSH_PROFILED(shmem_ptr)
void *pshmem_ptr(const void *dest, int pe)
{
    running(FSH_FN);
    enum fsh_seg seg;
    uint64_t off;
    /* The calling PE and the PEs of its node whose memory is mapped here (local.c; a device
     * block: devmem.c); NULL for the others, and for every PE with FABSHMEM_INTRANODE=fabric
     * except the caller (device blocks: FABSHMEM_DEVICE_MAP=0). */
    if (pe < 0 || pe >= fsh_rt.npes || fsh_mr_lookup(dest, 1, &seg, &off) != 0) {
        return NULL;
    }
    if (pe == fsh_rt.pe) {
        return (void *)dest;
    }
    if (seg == FSH_SEG_DEVICE) {
        /* A same-node peer's device heap mapped here (devmap.c): a device pointer for this
         * PE's kernels and driver copies. */
        uint8_t *b = fsh_dev_peer_base(pe);
        return b ? b + off : NULL;
    }
    return fsh_local_addr(pe, seg, off);
}

/* The profiling interface's control (pshmem.h): the library makes no use of it, as the spec
 * says; a profiling tool defines shmem_pcontrol to take the program's calls. */
FSH_PROFILED(shmem_pcontrol)
void pshmem_pcontrol(int level, ...)
{
    (void)level;
}

FSH_PROFILED(shmem_info_get_version)
void pshmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}

FSH_PROFILED(shmem_info_get_name)
void pshmem_info_get_name(char *name)
{
    snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

double shmemx_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ ordering, barrier */

FSH_PROFILED(shmem_quiet)
void pshmem_quiet(void)
{
    running(FSH_FN);
    done(FSH_FN, fsh_rma_quiet(&fsh_ctx_default));
}


FSH_PROFILED(shmem_fence)
void pshmem_fence(void)
{
    running(FSH_FN);
    done(FSH_FN, fsh_rma_fence(&fsh_ctx_default));
}

/* The spec (1.5): quiet and fence on SHMEM_CTX_INVALID perform no operation. */
FSH_PROFILED(shmem_ctx_quiet)
void pshmem_ctx_quiet(shmem_ctx_t ctx)
{
    running(FSH_FN);
    if (ctx != SHMEM_CTX_INVALID) {
        done(FSH_FN, fsh_rma_quiet(check_ctx(FSH_FN, ctx)));
    }
}

/* The PEs of a pe_quiet, checked (a bad PE ends the job like any RMA's), as a mask over world
 * PEs. */
static void pe_quiet(const char *fn, struct fsh_ctx *c, const int *pes, size_t n)
{
    if (n > 0 && !pes) {
        fsh_init_fatal(fn, "pass an array of npes PE numbers", "target_pes is NULL with npes %zu",
                       n);
    }
    if (n == 0) {
        done(fn, fsh_rma_pe_quiet(c, NULL, -1));
        return;
    }
    bool *mask = calloc((size_t)fsh_rt.npes, sizeof(bool));
    if (!mask) {
        fsh_init_fatal(fn, "", "out of memory for a mask of %d PEs", fsh_rt.npes);
    }
    int one = -1;
    for (size_t i = 0; i < n; i++) {
        one = ctx_pe(fn, c, pes[i]);
        mask[one] = true;
    }
    int rc = fsh_rma_pe_quiet(c, mask, n == 1 ? one : -1);
    free(mask);
    done(fn, rc);
}

FSH_PROFILED(shmem_pe_quiet)
void pshmem_pe_quiet(const int *target_pes, size_t npes)
{
    running(FSH_FN);
    pe_quiet(FSH_FN, &fsh_ctx_default, target_pes, npes);
}

FSH_PROFILED(shmem_ctx_pe_quiet)
void pshmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    running(FSH_FN);
    if (ctx != SHMEM_CTX_INVALID) {
        pe_quiet(FSH_FN, check_ctx(FSH_FN, ctx), target_pes, npes);
    }
}

FSH_PROFILED(shmem_ctx_fence)
void pshmem_ctx_fence(shmem_ctx_t ctx)
{
    running(FSH_FN);
    if (ctx != SHMEM_CTX_INVALID) {
        done(FSH_FN, fsh_rma_fence(check_ctx(FSH_FN, ctx)));
    }
}

FSH_PROFILED(shmem_barrier_all)
void pshmem_barrier_all(void)
{
    running(FSH_FN);
    done(FSH_FN, fsh_coll_barrier_all());
}

FSH_PROFILED(shmem_sync_all)
void pshmem_sync_all(void)
{
    running(FSH_FN);
    done(FSH_FN, fsh_coll_sync_all());
}

/* ------------------------------------------------------------------ deprecated names */

FSH_PROFILED(start_pes)
void pstart_pes(int npes)
{
    (void)npes; /* ignored, as the spec says: the launcher decides */
    pshmem_init();
}

FSH_PROFILED(_my_pe)
int p_my_pe(void)
{
    return pshmem_my_pe();
}

FSH_PROFILED(_num_pes)
int p_num_pes(void)
{
    return pshmem_n_pes();
}

FSH_PROFILED(shmalloc)
void *pshmalloc(size_t size)
{
    return pshmem_malloc(size);
}

FSH_PROFILED(shfree)
void pshfree(void *ptr)
{
    pshmem_free(ptr);
}

FSH_PROFILED(shrealloc)
void *pshrealloc(void *ptr, size_t size)
{
    return pshmem_realloc(ptr, size);
}

FSH_PROFILED(shmemalign)
void *pshmemalign(size_t alignment, size_t size)
{
    return pshmem_align(alignment, size);
}

/* Cache management: every host fabshmem runs on is cache coherent, so these do nothing, as
 * the spec allows. */
FSH_PROFILED(shmem_clear_cache_inv)
void pshmem_clear_cache_inv(void)
{
}

FSH_PROFILED(shmem_set_cache_inv)
void pshmem_set_cache_inv(void)
{
}

FSH_PROFILED(shmem_clear_cache_line_inv)
void pshmem_clear_cache_line_inv(void *dest)
{
}

FSH_PROFILED(shmem_set_cache_line_inv)
void pshmem_set_cache_line_inv(void *dest)
{
}

FSH_PROFILED(shmem_udcflush)
void pshmem_udcflush(void)
{
}

FSH_PROFILED(shmem_udcflush_line)
void pshmem_udcflush_line(void *dest)
{
}
