/*
 * api.c: the OpenSHMEM entry points that are not generated per type, and the type-erased
 * routines the generated ones call.
 *
 * Each routine checks its arguments first (library state, PE range, context, symmetric
 * addresses, sizes; always on, they cost a few compares), then calls one module. An invalid
 * argument or a failed operation ends the job with the two-line report of init.c, naming the
 * routine, the cause and the fix. Nothing below this file knows the public names.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "coll.h"
#include "error.h"
#include "heap.h"
#include "init.h"
#include "log.h"
#include "mr.h"
#include "rma.h"
#include "rt.h"
#include "shmem.h"
#include "shmemx.h"

FSH_API shmem_ctx_t const SHMEM_CTX_DEFAULT = &fsh_ctx_default;

/* ------------------------------------------------------------------ argument checks */

static void __attribute__((noreturn)) not_running(const char *fn)
{
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
}

static inline void check_pe(const char *fn, int pe)
{
    if (__builtin_expect(pe < 0 || pe >= fsh_rt.npes, 0)) {
        fsh_init_fatal(fn, "PEs are numbered 0..shmem_n_pes()-1", "PE %d out of range [0,%d)", pe,
                       fsh_rt.npes);
    }
}

static inline struct fsh_ctx *check_ctx(const char *fn, shmem_ctx_t ctx)
{
    if (__builtin_expect(ctx == SHMEM_CTX_INVALID, 0)) {
        fsh_init_fatal(fn, "create contexts with shmem_ctx_create and check its return value",
                       "context is SHMEM_CTX_INVALID");
    }
    return ctx;
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

/* ------------------------------------------------------------------ RMA (type-erased) */

void fsh_api_put(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                 int pe, int nbi)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    check_pe(fn, pe);
    check_size(fn, nbytes);
    if (nbytes == 0) {
        return;
    }
    enum fsh_seg seg;
    uint64_t off;
    check_sym(fn, "dest", dest, nbytes, &seg, &off);
    check_local(fn, "source", src, nbytes);
    done(fn, fsh_rma_put(c, seg, off, src, nbytes, pe, nbi != 0));
}

void fsh_api_get(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                 int pe, int nbi)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    check_pe(fn, pe);
    check_size(fn, nbytes);
    if (nbytes == 0) {
        return;
    }
    enum fsh_seg seg;
    uint64_t off;
    check_sym(fn, "source", src, nbytes, &seg, &off);
    check_local(fn, "dest", dest, nbytes);
    done(fn, fsh_rma_get(c, dest, seg, off, nbytes, pe, nbi != 0));
}

/* Bytes spanned by nelems elements at a stride: (nelems-1)*stride*esize + esize. */
static size_t strided_extent(const char *fn, const char *what, ptrdiff_t stride, size_t nelems,
                             size_t esize)
{
    if (stride < 0) {
        fsh_init_fatal(fn, "strides are counted in elements and must not be negative",
                       "%s stride %td is negative", what, stride);
    }
    size_t span;
    if (__builtin_mul_overflow((size_t)stride, nelems - 1, &span) ||
        __builtin_add_overflow(span, 1, &span) || __builtin_mul_overflow(span, esize, &span)) {
        fsh_init_fatal(fn, "check nelems and the strides", "strided transfer overflows the address space");
    }
    return span;
}

void fsh_api_iput(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    check_pe(fn, pe);
    if (nelems == 0) {
        return;
    }
    size_t dspan = strided_extent(fn, "dest", dst, nelems, esize);
    size_t sspan = strided_extent(fn, "source", sst, nelems, esize);
    enum fsh_seg seg;
    uint64_t off;
    check_sym(fn, "dest", dest, dspan, &seg, &off);
    check_local(fn, "source", src, sspan);
    done(fn, fsh_rma_iput(c, seg, off, src, dst, sst, nelems, esize, pe));
}

void fsh_api_iget(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    running(fn);
    struct fsh_ctx *c = check_ctx(fn, ctx);
    check_pe(fn, pe);
    if (nelems == 0) {
        return;
    }
    size_t dspan = strided_extent(fn, "dest", dst, nelems, esize);
    size_t sspan = strided_extent(fn, "source", sst, nelems, esize);
    enum fsh_seg seg;
    uint64_t off;
    check_sym(fn, "source", src, sspan, &seg, &off);
    check_local(fn, "dest", dest, dspan);
    done(fn, fsh_rma_iget(c, dest, seg, off, dst, sst, nelems, esize, pe));
}

/* ------------------------------------------------------------------ setup, exit, query */

void shmem_init(void)
{
    fsh_init_run(__func__, SHMEM_THREAD_SINGLE, NULL);
}

int shmem_init_thread(int requested, int *provided)
{
    fsh_init_run(__func__, requested, provided);
    return 0;
}

void shmem_query_thread(int *provided)
{
    running(__func__);
    *provided = fsh_rt.thread_level;
}

void shmem_finalize(void)
{
    if (fsh_rt.state == FSH_STATE_FINALIZED) {
        return; /* a second finalize changes nothing */
    }
    running(__func__);
    fsh_init_finalize(__func__);
}

void shmem_global_exit(int status)
{
    running(__func__);
    fsh_init_global_exit(status);
}

int shmem_my_pe(void)
{
    running(__func__);
    return fsh_rt.pe;
}

int shmem_n_pes(void)
{
    running(__func__);
    return fsh_rt.npes;
}

int shmem_pe_accessible(int pe)
{
    running(__func__);
    return pe >= 0 && pe < fsh_rt.npes;
}

int shmem_addr_accessible(const void *addr, int pe)
{
    running(__func__);
    enum fsh_seg seg;
    uint64_t off;
    return pe >= 0 && pe < fsh_rt.npes && fsh_mr_lookup(addr, 1, &seg, &off) == 0;
}

void *shmem_ptr(const void *dest, int pe)
{
    running(__func__);
    enum fsh_seg seg;
    uint64_t off;
    /* Only the calling PE's memory is load/store accessible until peers' heaps are mapped. */
    if (pe != fsh_rt.pe || fsh_mr_lookup(dest, 1, &seg, &off) != 0) {
        return NULL;
    }
    return (void *)dest;
}

void shmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
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

void shmem_quiet(void)
{
    running(__func__);
    done(__func__, fsh_rma_quiet(&fsh_ctx_default));
}

void shmem_fence(void)
{
    running(__func__);
    done(__func__, fsh_rma_fence(&fsh_ctx_default));
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    running(__func__);
    done(__func__, fsh_rma_quiet(check_ctx(__func__, ctx)));
}

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    running(__func__);
    done(__func__, fsh_rma_fence(check_ctx(__func__, ctx)));
}

void shmem_barrier_all(void)
{
    running(__func__);
    done(__func__, fsh_coll_barrier_all());
}

void shmem_sync_all(void)
{
    running(__func__);
    done(__func__, fsh_coll_sync_all());
}

/* ------------------------------------------------------------------ symmetric memory */
/* Allocation is collective: every PE makes the same calls with the same sizes, so the
 * deterministic allocator gives every PE the same offsets. A failure is the same on every PE
 * too: NULL and a warning, never a corrupted heap. Barriers are where the spec puts them:
 * after allocation (nobody targets a block before every PE has it), before free (nobody frees
 * a block a peer is still writing). */

static void *alloc_done(const char *fn, void *p, size_t size)
{
    if (!p) {
        const struct fsh_error *e = fsh_err_last();
        FSH_WARN("%s(%zu) returns NULL: %s%s%s", fn, size, e ? e->msg : "allocation failed",
                 e && e->fix[0] ? "; " : "", e ? e->fix : "");
        fsh_err_clear();
    }
    done(fn, fsh_coll_barrier_all());
    return p;
}

static void *aligned_alloc_sym(const char *fn, size_t align, size_t size)
{
    running(fn);
    if (size == 0) {
        return NULL;
    }
    return alloc_done(fn, fsh_heap_alloc(size, align), size);
}

void *shmem_malloc(size_t size)
{
    return aligned_alloc_sym(__func__, 0, size);
}

void *shmem_malloc_with_hints(size_t size, long hints)
{
    /* Hints describe use, not placement; every block already supports every use. */
    return aligned_alloc_sym(__func__, 0, size);
}

void *shmem_align(size_t alignment, size_t size)
{
    running(__func__);
    if (alignment == 0 || (alignment & (alignment - 1))) {
        FSH_WARN("shmem_align: alignment %zu is not a power of two; returning NULL", alignment);
        done(__func__, fsh_coll_barrier_all());
        return NULL;
    }
    return aligned_alloc_sym(__func__, alignment, size);
}

void *shmem_calloc(size_t count, size_t size)
{
    running(__func__);
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        FSH_WARN("shmem_calloc(%zu, %zu): size overflows; returning NULL", count, size);
        done(__func__, fsh_coll_barrier_all());
        return NULL;
    }
    if (total == 0) {
        return NULL;
    }
    void *p = fsh_heap_alloc(total, 0);
    if (p) {
        memset(p, 0, total);
    }
    return alloc_done(__func__, p, total);
}

void *shmem_realloc(void *ptr, size_t size)
{
    running(__func__);
    if (!ptr) {
        return shmem_malloc(size);
    }
    if (size == 0) {
        shmem_free(ptr);
        return NULL;
    }
    done(__func__, fsh_coll_barrier_all());
    void *p = fsh_heap_realloc(ptr, size);
    if (!p && fsh_err_last() && fsh_err_last()->code == -EINVAL) {
        fsh_init_fatal_err(__func__, -EINVAL);
    }
    return alloc_done(__func__, p, size);
}

void shmem_free(void *ptr)
{
    running(__func__);
    if (!ptr) {
        return;
    }
    done(__func__, fsh_coll_barrier_all());
    done(__func__, fsh_heap_free(ptr));
}

/* ------------------------------------------------------------------ deprecated names */

void start_pes(int npes)
{
    (void)npes; /* ignored, as the spec says: the launcher decides */
    shmem_init();
}

int _my_pe(void)
{
    return shmem_my_pe();
}

int _num_pes(void)
{
    return shmem_n_pes();
}

void *shmalloc(size_t size)
{
    return shmem_malloc(size);
}

void shfree(void *ptr)
{
    shmem_free(ptr);
}

void *shrealloc(void *ptr, size_t size)
{
    return shmem_realloc(ptr, size);
}

void *shmemalign(size_t alignment, size_t size)
{
    return shmem_align(alignment, size);
}

/* Cache management: every host fabshmem runs on is cache coherent, so these do nothing, as
 * the spec allows. */
void shmem_clear_cache_inv(void)
{
}

void shmem_set_cache_inv(void)
{
}

void shmem_clear_cache_line_inv(void *dest)
{
}

void shmem_set_cache_line_inv(void *dest)
{
}

void shmem_udcflush(void)
{
}

void shmem_udcflush_line(void *dest)
{
}
