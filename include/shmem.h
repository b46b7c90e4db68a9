/*
 * shmem.h: the OpenSHMEM 1.5 API as fabshmem implements it.
 *
 * Only names from the OpenSHMEM specification live here (extensions are in shmemx.h). Typed
 * routines are generated from one table, FSH_TYPE_TABLE, so the spec's type lists are written
 * down exactly once; the library's exported symbols are diffed against
 * tests/data/shmem_api_symbols.txt so no variant can go missing silently.
 */
#ifndef FABSHMEM_SHMEM_H
#define FABSHMEM_SHMEM_H

#include <stddef.h>
#include <stdint.h>
#if !defined(__cplusplus)
#include <complex.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define FSH_API __attribute__((visibility("default")))
#define FSH_DEPRECATED __attribute__((deprecated))

/* ------------------------------------------------------------------ library constants */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "fabshmem 0.1.0"
#define SHMEM_VENDOR_MAJOR_VERSION 0
#define SHMEM_VENDOR_MINOR_VERSION 1
#define SHMEM_VENDOR_PATCH_VERSION 0

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

/* pSync/pWrk sizes of the active-set (deprecated) collectives; values are what this
 * implementation needs (one slot per dissemination round and phase), all >= spec minimums. */
#define SHMEM_SYNC_VALUE (-1L)
#define SHMEM_BARRIER_SYNC_SIZE 128
#define SHMEM_BCAST_SYNC_SIZE 128
#define SHMEM_REDUCE_SYNC_SIZE 128
#define SHMEM_COLLECT_SYNC_SIZE 128
#define SHMEM_ALLTOALL_SYNC_SIZE 128
#define SHMEM_ALLTOALLS_SYNC_SIZE 128
#define SHMEM_SYNC_SIZE 128
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 16

#define SHMEM_CMP_EQ 1
#define SHMEM_CMP_NE 2
#define SHMEM_CMP_GT 3
#define SHMEM_CMP_GE 4
#define SHMEM_CMP_LT 5
#define SHMEM_CMP_LE 6

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

#define SHMEM_CTX_SERIALIZED (1L << 0)
#define SHMEM_CTX_PRIVATE (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

/* Deprecated names of the constants (spec section "Deprecated API"): same values. */
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

/* ------------------------------------------------------------------ contexts */
/* A context is an independent stream of RMA operations with its own completion tracking.
 * SHMEM_CTX_DEFAULT always exists; SHMEM_CTX_INVALID is never a usable context. */
typedef struct fsh_ctx *shmem_ctx_t;
FSH_API extern shmem_ctx_t const SHMEM_CTX_DEFAULT;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* ------------------------------------------------------------------ the type table
 * One row per C type of the spec's typed interfaces. Columns are 0/1 memberships of the spec's
 * tables:
 *   RMA      Standard RMA types (put/get/p/g/iput/iget)
 *   AMO      Standard AMO types
 *   EXTAMO   Extended AMO types (fetch/set/swap)
 *   BITAMO   Bitwise AMO types (and/or/xor)
 *   SYNC     Point-to-point synchronization types (wait_until/test)
 *   RBIT     Reduction types of and/or/xor
 *   RMINMAX  Reduction types of max/min
 *   RARITH   Reduction types of sum/prod
 *   GENERIC  the type takes part in C11 _Generic selection (the fixed-width aliases do not:
 *            they would repeat a type already listed)
 */
/*  X(CTYPE,              NAME,       RMA AMO EXT BIT SYNC RBIT RMM RAR GEN) */
#define FSH_TYPE_TABLE(X)                                                 \
    X(float,              float,      1,  0,  1,  0,  0,   0,   1,  1,  1) \
    X(double,             double,     1,  0,  1,  0,  0,   0,   1,  1,  1) \
    X(long double,        longdouble, 1,  0,  0,  0,  0,   0,   1,  1,  1) \
    X(char,               char,       1,  0,  0,  0,  0,   0,   1,  1,  1) \
    X(signed char,        schar,      1,  0,  0,  0,  0,   0,   1,  1,  1) \
    X(short,              short,      1,  0,  0,  0,  1,   0,   1,  1,  1) \
    X(int,                int,        1,  1,  1,  0,  1,   0,   1,  1,  1) \
    X(long,               long,       1,  1,  1,  0,  1,   0,   1,  1,  1) \
    X(long long,          longlong,   1,  1,  1,  0,  1,   0,   1,  1,  1) \
    X(unsigned char,      uchar,      1,  0,  0,  0,  0,   1,   1,  1,  1) \
    X(unsigned short,     ushort,     1,  0,  0,  0,  1,   1,   1,  1,  1) \
    X(unsigned int,       uint,       1,  1,  1,  1,  1,   1,   1,  1,  1) \
    X(unsigned long,      ulong,      1,  1,  1,  1,  1,   1,   1,  1,  1) \
    X(unsigned long long, ulonglong,  1,  1,  1,  1,  1,   1,   1,  1,  1) \
    X(int8_t,             int8,       1,  0,  0,  0,  0,   1,   1,  1,  0) \
    X(int16_t,            int16,      1,  0,  0,  0,  0,   1,   1,  1,  0) \
    X(int32_t,            int32,      1,  1,  1,  1,  1,   1,   1,  1,  0) \
    X(int64_t,            int64,      1,  1,  1,  1,  1,   1,   1,  1,  0) \
    X(uint8_t,            uint8,      1,  0,  0,  0,  0,   1,   1,  1,  0) \
    X(uint16_t,           uint16,     1,  0,  0,  0,  0,   1,   1,  1,  0) \
    X(uint32_t,           uint32,     1,  1,  1,  1,  1,   1,   1,  1,  0) \
    X(uint64_t,           uint64,     1,  1,  1,  1,  1,   1,   1,  1,  0) \
    X(size_t,             size,       1,  1,  1,  0,  1,   1,   1,  1,  0) \
    X(ptrdiff_t,          ptrdiff,    1,  1,  1,  0,  1,   0,   1,  1,  0) \
    FSH_TYPE_TABLE_COMPLEX(X)

/* Complex types exist only for sum/prod reductions, and only in C. */
#if !defined(__cplusplus)
#define FSH_TYPE_TABLE_COMPLEX(X)                                         \
    X(double _Complex,    complexd,   0,  0,  0,  0,  0,   0,   0,  1,  0) \
    X(float _Complex,     complexf,   0,  0,  0,  0,  0,   0,   0,  1,  0)
#else
#define FSH_TYPE_TABLE_COMPLEX(X)
#endif

/* Expand ARGS only when a table column is 1. */
#define FSH_IF_0(...)
#define FSH_IF_1(...) __VA_ARGS__
#define FSH_IF(flag, ...) FSH_IF_##flag(__VA_ARGS__)

/* The sized RMA routines (putN/getN/iputN/igetN) exist for these bit widths; 128 moves
 * 16-byte elements. */
#define FSH_SIZE_TABLE(X) X(8, uint8_t) X(16, uint16_t) X(32, uint32_t) X(64, uint64_t) \
    X(128, struct fsh_u128)
struct fsh_u128 {
    uint64_t w[2];
};

/* ------------------------------------------------------------------ setup, exit, query */
FSH_API void shmem_init(void);
FSH_API int shmem_init_thread(int requested, int *provided);
FSH_API void shmem_query_thread(int *provided);
FSH_API void shmem_finalize(void);
FSH_API void shmem_global_exit(int status);
FSH_API int shmem_my_pe(void);
FSH_API int shmem_n_pes(void);
FSH_API int shmem_pe_accessible(int pe);
FSH_API int shmem_addr_accessible(const void *addr, int pe);
FSH_API void *shmem_ptr(const void *dest, int pe);
FSH_API void shmem_info_get_version(int *major, int *minor);
FSH_API void shmem_info_get_name(char *name);

/* ------------------------------------------------------------------ symmetric memory */
FSH_API void *shmem_malloc(size_t size);
FSH_API void *shmem_calloc(size_t count, size_t size);
FSH_API void *shmem_align(size_t alignment, size_t size);
FSH_API void *shmem_realloc(void *ptr, size_t size);
FSH_API void *shmem_malloc_with_hints(size_t size, long hints);
FSH_API void shmem_free(void *ptr);

/* ------------------------------------------------------------------ untyped RMA */
FSH_API void shmem_putmem(void *dest, const void *source, size_t nelems, int pe);
FSH_API void shmem_getmem(void *dest, const void *source, size_t nelems, int pe);
FSH_API void shmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
FSH_API void shmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);
FSH_API void shmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                              int pe);
FSH_API void shmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,
                              int pe);
FSH_API void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                                  size_t nelems, int pe);
FSH_API void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                                  size_t nelems, int pe);

/* ------------------------------------------------------------------ ordering, completion */
FSH_API void shmem_quiet(void);
FSH_API void shmem_fence(void);
FSH_API void shmem_ctx_quiet(shmem_ctx_t ctx);
FSH_API void shmem_ctx_fence(shmem_ctx_t ctx);

/* ------------------------------------------------------------------ barrier and sync */
FSH_API void shmem_barrier_all(void);
FSH_API void shmem_sync_all(void);

/* ------------------------------------------------------------------ deprecated names */
FSH_API FSH_DEPRECATED void start_pes(int npes);
FSH_API FSH_DEPRECATED int _my_pe(void);
FSH_API FSH_DEPRECATED int _num_pes(void);
FSH_API FSH_DEPRECATED void *shmalloc(size_t size);
FSH_API FSH_DEPRECATED void shfree(void *ptr);
FSH_API FSH_DEPRECATED void *shrealloc(void *ptr, size_t size);
FSH_API FSH_DEPRECATED void *shmemalign(size_t alignment, size_t size);
/* Cache-management routines: no-ops on cache-coherent hosts, kept for old codes. */
FSH_API FSH_DEPRECATED void shmem_clear_cache_inv(void);
FSH_API FSH_DEPRECATED void shmem_set_cache_inv(void);
FSH_API FSH_DEPRECATED void shmem_clear_cache_line_inv(void *dest);
FSH_API FSH_DEPRECATED void shmem_set_cache_line_inv(void *dest);
FSH_API FSH_DEPRECATED void shmem_udcflush(void);
FSH_API FSH_DEPRECATED void shmem_udcflush_line(void *dest);

/* ------------------------------------------------------------------ typed RMA (generated) */
/* BEGIN GENERATED TYPED API: prototypes expanded from FSH_TYPE_TABLE / FSH_SIZE_TABLE */
/* Every row with RMA=1 gets the spec's eight typed RMA routines and their eight ctx forms.
 * The rows are never written out by hand: adding a type to FSH_TYPE_TABLE declares all 16. */
#define FSH_DECL_RMA(CTYPE, NAME)                                                                \
    FSH_API void shmem_##NAME##_put(CTYPE *dest, const CTYPE *source, size_t nelems, int pe);    \
    FSH_API void shmem_##NAME##_put_nbi(CTYPE *dest, const CTYPE *source, size_t nelems,         \
                                        int pe);                                                 \
    FSH_API void shmem_##NAME##_get(CTYPE *dest, const CTYPE *source, size_t nelems, int pe);    \
    FSH_API void shmem_##NAME##_get_nbi(CTYPE *dest, const CTYPE *source, size_t nelems,         \
                                        int pe);                                                 \
    FSH_API void shmem_##NAME##_p(CTYPE *dest, CTYPE value, int pe);                             \
    FSH_API CTYPE shmem_##NAME##_g(const CTYPE *source, int pe);                                 \
    FSH_API void shmem_##NAME##_iput(CTYPE *dest, const CTYPE *source, ptrdiff_t dst,            \
                                     ptrdiff_t sst, size_t nelems, int pe);                      \
    FSH_API void shmem_##NAME##_iget(CTYPE *dest, const CTYPE *source, ptrdiff_t dst,            \
                                     ptrdiff_t sst, size_t nelems, int pe);                      \
    FSH_API void shmem_ctx_##NAME##_put(shmem_ctx_t ctx, CTYPE *dest, const CTYPE *source,       \
                                        size_t nelems, int pe);                                  \
    FSH_API void shmem_ctx_##NAME##_put_nbi(shmem_ctx_t ctx, CTYPE *dest, const CTYPE *source,   \
                                            size_t nelems, int pe);                              \
    FSH_API void shmem_ctx_##NAME##_get(shmem_ctx_t ctx, CTYPE *dest, const CTYPE *source,       \
                                        size_t nelems, int pe);                                  \
    FSH_API void shmem_ctx_##NAME##_get_nbi(shmem_ctx_t ctx, CTYPE *dest, const CTYPE *source,   \
                                            size_t nelems, int pe);                              \
    FSH_API void shmem_ctx_##NAME##_p(shmem_ctx_t ctx, CTYPE *dest, CTYPE value, int pe);        \
    FSH_API CTYPE shmem_ctx_##NAME##_g(shmem_ctx_t ctx, const CTYPE *source, int pe);            \
    FSH_API void shmem_ctx_##NAME##_iput(shmem_ctx_t ctx, CTYPE *dest, const CTYPE *source,      \
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);   \
    FSH_API void shmem_ctx_##NAME##_iget(shmem_ctx_t ctx, CTYPE *dest, const CTYPE *source,      \
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
#define FSH_DECL_RMA_ROW(CTYPE, NAME, RMA, ...) FSH_IF(RMA, FSH_DECL_RMA(CTYPE, NAME))
FSH_TYPE_TABLE(FSH_DECL_RMA_ROW)

/* The sized routines move raw BITS/8-byte elements; nelems and the strides count elements. */
#define FSH_DECL_SIZED(BITS, ETYPE)                                                              \
    FSH_API void shmem_put##BITS(void *dest, const void *source, size_t nelems, int pe);         \
    FSH_API void shmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);   \
    FSH_API void shmem_get##BITS(void *dest, const void *source, size_t nelems, int pe);         \
    FSH_API void shmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);   \
    FSH_API void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                  size_t nelems, int pe);                                        \
    FSH_API void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                  size_t nelems, int pe);                                        \
    FSH_API void shmem_ctx_put##BITS(shmem_ctx_t ctx, void *dest, const void *source,            \
                                     size_t nelems, int pe);                                     \
    FSH_API void shmem_ctx_put##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source,      \
                                           size_t nelems, int pe);                               \
    FSH_API void shmem_ctx_get##BITS(shmem_ctx_t ctx, void *dest, const void *source,            \
                                     size_t nelems, int pe);                                     \
    FSH_API void shmem_ctx_get##BITS##_nbi(shmem_ctx_t ctx, void *dest, const void *source,      \
                                           size_t nelems, int pe);                               \
    FSH_API void shmem_ctx_iput##BITS(shmem_ctx_t ctx, void *dest, const void *source,           \
                                      ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);      \
    FSH_API void shmem_ctx_iget##BITS(shmem_ctx_t ctx, void *dest, const void *source,           \
                                      ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
FSH_SIZE_TABLE(FSH_DECL_SIZED)
/* END GENERATED TYPED API */

/* ------------------------------------------------------------------ C11 generic RMA */
/* shmem_put(dest, source, nelems, pe) and shmem_put(ctx, dest, source, nelems, pe) etc. select
 * the typed routine from the type of dest (of source for shmem_g). Only rows with GENERIC=1
 * take part: the fixed-width aliases name types already listed, and _Generic rejects a type
 * listed twice. There is deliberately no default association, so an unsupported type is a
 * compile error rather than a silent byte copy. The ctx form is told apart by argument count. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

#define FSH_NARG(...) FSH_NARG_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define FSH_NARG_(a1, a2, a3, a4, a5, a6, a7, a8, a9, n, ...) n
#define FSH_CAT(a, b) FSH_CAT_(a, b)
#define FSH_CAT_(a, b) a##b

/* One association per GENERIC row, each led by its comma so the list follows the controlling
 * expression directly: _Generic((dest) FSH_GLIST(put)). shmem_g also accepts a source pointer
 * that is not const-qualified, since _Generic matches qualified pointees exactly. */
#define FSH_GA(GEN, CTYPE, FN) FSH_IF(GEN, , CTYPE *: FN)
#define FSH_GA_put(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(GEN, T, shmem_##N##_put)
#define FSH_GA_put_nbi(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                               \
    FSH_GA(GEN, T, shmem_##N##_put_nbi)
#define FSH_GA_get(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(GEN, T, shmem_##N##_get)
#define FSH_GA_get_nbi(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                               \
    FSH_GA(GEN, T, shmem_##N##_get_nbi)
#define FSH_GA_p(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(GEN, T, shmem_##N##_p)
#define FSH_GA_g(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                                     \
    FSH_IF(GEN, , T *: shmem_##N##_g, const T *: shmem_##N##_g)
#define FSH_GA_iput(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(GEN, T, shmem_##N##_iput)
#define FSH_GA_iget(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(GEN, T, shmem_##N##_iget)
#define FSH_GA_ctx_put(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                               \
    FSH_GA(GEN, T, shmem_ctx_##N##_put)
#define FSH_GA_ctx_put_nbi(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                           \
    FSH_GA(GEN, T, shmem_ctx_##N##_put_nbi)
#define FSH_GA_ctx_get(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                               \
    FSH_GA(GEN, T, shmem_ctx_##N##_get)
#define FSH_GA_ctx_get_nbi(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                           \
    FSH_GA(GEN, T, shmem_ctx_##N##_get_nbi)
#define FSH_GA_ctx_p(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(GEN, T, shmem_ctx_##N##_p)
#define FSH_GA_ctx_g(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                                 \
    FSH_IF(GEN, , T *: shmem_ctx_##N##_g, const T *: shmem_ctx_##N##_g)
#define FSH_GA_ctx_iput(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                              \
    FSH_GA(GEN, T, shmem_ctx_##N##_iput)
#define FSH_GA_ctx_iget(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                              \
    FSH_GA(GEN, T, shmem_ctx_##N##_iget)
#define FSH_GLIST(OP) FSH_TYPE_TABLE(FSH_GA_##OP)

/* FSH_G_<op>_<argument count>: the plain form, then the form with a leading ctx. */
#define FSH_G_put_4(d, s, n, pe) _Generic((d) FSH_GLIST(put))(d, s, n, pe)
#define FSH_G_put_5(c, d, s, n, pe) _Generic((d) FSH_GLIST(ctx_put))(c, d, s, n, pe)
#define FSH_G_put_nbi_4(d, s, n, pe) _Generic((d) FSH_GLIST(put_nbi))(d, s, n, pe)
#define FSH_G_put_nbi_5(c, d, s, n, pe) _Generic((d) FSH_GLIST(ctx_put_nbi))(c, d, s, n, pe)
#define FSH_G_get_4(d, s, n, pe) _Generic((d) FSH_GLIST(get))(d, s, n, pe)
#define FSH_G_get_5(c, d, s, n, pe) _Generic((d) FSH_GLIST(ctx_get))(c, d, s, n, pe)
#define FSH_G_get_nbi_4(d, s, n, pe) _Generic((d) FSH_GLIST(get_nbi))(d, s, n, pe)
#define FSH_G_get_nbi_5(c, d, s, n, pe) _Generic((d) FSH_GLIST(ctx_get_nbi))(c, d, s, n, pe)
#define FSH_G_p_3(d, v, pe) _Generic((d) FSH_GLIST(p))(d, v, pe)
#define FSH_G_p_4(c, d, v, pe) _Generic((d) FSH_GLIST(ctx_p))(c, d, v, pe)
#define FSH_G_g_2(s, pe) _Generic((s) FSH_GLIST(g))(s, pe)
#define FSH_G_g_3(c, s, pe) _Generic((s) FSH_GLIST(ctx_g))(c, s, pe)
#define FSH_G_iput_6(d, s, dst, sst, n, pe) _Generic((d) FSH_GLIST(iput))(d, s, dst, sst, n, pe)
#define FSH_G_iput_7(c, d, s, dst, sst, n, pe)                                                  \
    _Generic((d) FSH_GLIST(ctx_iput))(c, d, s, dst, sst, n, pe)
#define FSH_G_iget_6(d, s, dst, sst, n, pe) _Generic((d) FSH_GLIST(iget))(d, s, dst, sst, n, pe)
#define FSH_G_iget_7(c, d, s, dst, sst, n, pe)                                                  \
    _Generic((d) FSH_GLIST(ctx_iget))(c, d, s, dst, sst, n, pe)

#define shmem_put(...) FSH_CAT(FSH_G_put_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_put_nbi(...) FSH_CAT(FSH_G_put_nbi_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_get(...) FSH_CAT(FSH_G_get_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_get_nbi(...) FSH_CAT(FSH_G_get_nbi_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_p(...) FSH_CAT(FSH_G_p_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_g(...) FSH_CAT(FSH_G_g_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_iput(...) FSH_CAT(FSH_G_iput_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_iget(...) FSH_CAT(FSH_G_iget_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)

#endif /* C11 generic RMA */

#ifdef __cplusplus
}
#endif

#endif /* FABSHMEM_SHMEM_H */
