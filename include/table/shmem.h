/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shmem.h: the OpenSHMEM 1.6 API as fabshmem implements it.
 *
 * Only names from the OpenSHMEM specification live here (extensions are in shmemx.h). The typed
 * routines follow one table, so the spec's type lists are written down exactly once; the
 * library's exported symbols are diffed against tests/data/shmem_api_symbols.txt so no variant
 * can go missing silently.
 */
#ifndef FABSHMEM_SHMEM_H
#define FABSHMEM_SHMEM_H

#include <stddef.h>
#include <stdint.h>
/* Quoted, so the installed pair finds each other whatever -I a program passes. */
#include "fabshmem_version.h"

#ifdef __cplusplus
/* For the C++ overloads at the end (outside extern "C", where C++ headers must be included):
 * std::complex<T> is the C++ name of the complex reductions' types (same layout as T _Complex,
 * the standard's guarantee), and std::enable_if picks the exact-width overloads. */
#include <complex>
#include <type_traits>
extern "C" {
#endif

#define FSH_API __attribute__((visibility("default")))
#define FSH_DEPRECATED __attribute__((deprecated))

/* ------------------------------------------------------------------ library constants */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 6
#define SHMEM_MAX_NAME_LEN 256
/* fabshmem's own release numbers are FABSHMEM_MAJOR/MINOR/PATCH_VERSION (fabshmem_version.h):
 * the spec reserves the SHMEM_ prefix for its own names. */
#define SHMEM_VENDOR_STRING "fabshmem " FABSHMEM_VERSION_STRING

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

/* OpenSHMEM 1.6 sessions: the option of shmem_ctx_session_start, and the config_mask bit. */
#define SHMEM_CTX_SESSION_BATCH (1L << 0)
#define SHMEM_CTX_SESSION_TOTAL_OPS (1L << 0)

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
 * SHMEM_CTX_DEFAULT always exists; SHMEM_CTX_INVALID is never a usable context. Handles of
 * contexts and teams are opaque values, not addresses: the library checks each one it is
 * given, so a destroyed or made-up handle is reported rather than followed. */
typedef struct fsh_ctx *shmem_ctx_t;
FSH_API extern shmem_ctx_t const SHMEM_CTX_DEFAULT;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* ------------------------------------------------------------------ teams */
/* A team is an ordered set of PEs. SHMEM_TEAM_WORLD holds every PE; contexts created with
 * shmem_ctx_create belong to it. */
typedef struct fsh_team *shmem_team_t;
FSH_API extern shmem_team_t const SHMEM_TEAM_WORLD;
/* The PEs of this node (they can map each other's memory), in world order. */
FSH_API extern shmem_team_t const SHMEM_TEAM_SHARED;
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)

/* Team configuration: how many contexts the program will create on the team (a hint here;
 * fabshmem's contexts are not a limited resource). The mask says which fields are set. */
typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* ------------------------------------------------------------------ the type table
 * The typed routines below follow one table, include/shmem_table.h (not installed): a row per
 * C type of the spec's typed interfaces, a 0/1 column per spec table the type belongs to. Their
 * prototypes, C11 generic lists and C++ overloads are expanded from it in the table form of
 * this header (include/table/shmem.h), and written out one by one in the installed shmem.h. */
/* flat-header: omit */
#include "../shmem_table.h"
/* flat-header: end */

/* Complex types exist only for sum/prod reductions (and the scans). C++ spells them
 * std::complex<double> and std::complex<float>: layout-compatible with double _Complex and
 * float _Complex (an array of two, real part first), so the same exported routines serve both. */
#if !defined(__cplusplus)
#define FSH_COMPLEXD double _Complex
#define FSH_COMPLEXF float _Complex
#else
#define FSH_COMPLEXD std::complex<double>
#define FSH_COMPLEXF std::complex<float>
#endif

/* The element of the 128-bit sized routines (shmem_put128, ...): 16 bytes, moved as they are. */
struct fsh_u128 {
    uint64_t w[2];
};

/* ------------------------------------------------------------------ setup, exit, query */
FSH_API void shmem_init(void);
FSH_API int shmem_init_thread(int requested, int *provided);
FSH_API void shmem_query_thread(int *provided);
/* OpenSHMEM 1.6: *initialized is 1 between shmem_init (or shmem_init_thread) and
 * shmem_finalize, 0 otherwise; callable at any time, before shmem_init too. */
FSH_API void shmem_query_initialized(int *initialized);
FSH_API void shmem_finalize(void);
FSH_API void shmem_global_exit(int status);
FSH_API int shmem_my_pe(void);
FSH_API int shmem_n_pes(void);
FSH_API int shmem_pe_accessible(int pe);
FSH_API int shmem_addr_accessible(const void *addr, int pe);
FSH_API void *shmem_ptr(const void *dest, int pe);
FSH_API void shmem_info_get_version(int *major, int *minor);
FSH_API void shmem_info_get_name(char *name);
/* The profiling interface (pshmem.h): a no-op here, for a profiling tool to define; level <= 0
 * off, 1 on (the default), 2 flush, > 2 the tool's own meaning and arguments. */
FSH_API void shmem_pcontrol(int level, ...);

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
/* OpenSHMEM 1.6: completion of the operations to target_pes[0..npes) only. */
FSH_API void shmem_pe_quiet(const int *target_pes, size_t npes);
FSH_API void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);

/* ------------------------------------------------------------------ contexts */
FSH_API int shmem_ctx_create(long options, shmem_ctx_t *ctx);
FSH_API void shmem_ctx_destroy(shmem_ctx_t ctx);
FSH_API int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

/* OpenSHMEM 1.6 sessions: a hint that a phase of RMA/AMO calls on ctx follows. It never changes
 * completion or ordering; stop neither quiets nor synchronizes. total_ops (used when
 * config_mask has SHMEM_CTX_SESSION_TOTAL_OPS; default SIZE_MAX) is the expected number of RMA
 * calls in the session. */
typedef struct {
    size_t total_ops;
} shmem_ctx_session_config_t;
FSH_API void shmem_ctx_session_start(shmem_ctx_t ctx, long options,
                                     const shmem_ctx_session_config_t *config, long config_mask);
FSH_API void shmem_ctx_session_stop(shmem_ctx_t ctx);

/* ------------------------------------------------------------------ signals */
FSH_API uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
FSH_API uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);
/* OpenSHMEM 1.6: a signal update alone (like a put-with-signal of no data): atomic with
 * respect to every other signal update of the word; complete at quiet. */
FSH_API void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
FSH_API void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
FSH_API void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
FSH_API void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);

/* ------------------------------------------------------------------ distributed locks */
FSH_API void shmem_set_lock(long *lock);
FSH_API void shmem_clear_lock(long *lock);
FSH_API int shmem_test_lock(long *lock);

/* ------------------------------------------------------------------ barrier and sync */
FSH_API void shmem_barrier_all(void);
FSH_API void shmem_sync_all(void);
FSH_API int shmem_team_sync(shmem_team_t team);

/* ------------------------------------------------------------------ teams */
/* Team routines return 0 on success and nonzero on failure (bad arguments, or no free team
 * slot: FABSHMEM_MAX_TEAMS teams exist at once); a failed split yields SHMEM_TEAM_INVALID.
 * Splits and destroy are collective over the parent (split) or the team (destroy). */
FSH_API int shmem_team_my_pe(shmem_team_t team);
FSH_API int shmem_team_n_pes(shmem_team_t team);
FSH_API int shmem_team_get_config(shmem_team_t team, long config_mask,
                                  shmem_team_config_t *config);
FSH_API int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
FSH_API int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                                     const shmem_team_config_t *config, long config_mask,
                                     shmem_team_t *new_team);
FSH_API int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                                const shmem_team_config_t *xaxis_config, long xaxis_mask,
                                shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                                long yaxis_mask, shmem_team_t *yaxis_team);
FSH_API void shmem_team_destroy(shmem_team_t team);
FSH_API int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
FSH_API void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);

/* ------------------------------------------------------------------ untyped collectives */
/* Team collectives return 0 on success. nelems counts bytes for the *mem forms. Before a PE
 * calls one, dest on every PE of the team must be ready to receive (the spec's rule): calls
 * on the same team need no barrier between them when they use different dest buffers, or
 * when each PE is done reading dest before its next call. */
FSH_API int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
FSH_API int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                               ptrdiff_t sst, size_t nelems);
FSH_API int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                               int PE_root);
FSH_API int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
FSH_API int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);

/* The active-set forms (deprecated): the set is PE_start, PE_start + 2^logPE_stride, ...
 * (PE_size PEs); pSync (and pWrk) are symmetric arrays of the *_SYNC_SIZE constants above,
 * initialized to SHMEM_SYNC_VALUE. fabshmem keeps its synchronization state elsewhere and
 * leaves them unchanged, so the spec's reuse rules are met trivially. */
FSH_API FSH_DEPRECATED void shmem_barrier(int PE_start, int logPE_stride, int PE_size,
                                          long *pSync);
FSH_API FSH_DEPRECATED void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
/* flat-header: omit */
#define FSH_DECL_ASET_COLL(BITS)                                                                 \
    FSH_API FSH_DEPRECATED void shmem_alltoall##BITS(void *dest, const void *source,             \
                                                     size_t nelems, int PE_start,                \
                                                     int logPE_stride, int PE_size,              \
                                                     long *pSync);                               \
    FSH_API FSH_DEPRECATED void shmem_alltoalls##BITS(void *dest, const void *source,            \
                                                      ptrdiff_t dst, ptrdiff_t sst,              \
                                                      size_t nelems, int PE_start,               \
                                                      int logPE_stride, int PE_size,             \
                                                      long *pSync);                              \
    FSH_API FSH_DEPRECATED void shmem_broadcast##BITS(void *dest, const void *source,            \
                                                      size_t nelems, int PE_root, int PE_start,  \
                                                      int logPE_stride, int PE_size,             \
                                                      long *pSync);                              \
    FSH_API FSH_DEPRECATED void shmem_collect##BITS(void *dest, const void *source,              \
                                                    size_t nelems, int PE_start,                 \
                                                    int logPE_stride, int PE_size, long *pSync); \
    FSH_API FSH_DEPRECATED void shmem_fcollect##BITS(void *dest, const void *source,             \
                                                     size_t nelems, int PE_start,                \
                                                     int logPE_stride, int PE_size,              \
                                                     long *pSync);
/* flat-header: end */
/* flat-header: expand */
FSH_DECL_ASET_COLL(32)
FSH_DECL_ASET_COLL(64)
/* flat-header: end */

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
/* BEGIN TYPED API: a declaration per row of the type table and routine */
/* Every row with RMA=1 gets the spec's eight typed RMA routines and their eight ctx forms,
 * and the OpenSHMEM 1.6 blocked strided ibput/ibget with theirs: nblocks blocks of bsize
 * contiguous elements, block i from source + i*sst to dest + i*dst (strides in elements, at
 * least bsize), complete on return like iput/iget. */
/* flat-header: omit */
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
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);   \
    FSH_API void shmem_##NAME##_ibput(CTYPE *dest, const CTYPE *source, ptrdiff_t dst,           \
                                      ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);      \
    FSH_API void shmem_##NAME##_ibget(CTYPE *dest, const CTYPE *source, ptrdiff_t dst,           \
                                      ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);      \
    FSH_API void shmem_ctx_##NAME##_ibput(shmem_ctx_t ctx, CTYPE *dest, const CTYPE *source,     \
                                          ptrdiff_t dst, ptrdiff_t sst, size_t bsize,            \
                                          size_t nblocks, int pe);                               \
    FSH_API void shmem_ctx_##NAME##_ibget(shmem_ctx_t ctx, CTYPE *dest, const CTYPE *source,     \
                                          ptrdiff_t dst, ptrdiff_t sst, size_t bsize,            \
                                          size_t nblocks, int pe);
#define FSH_DECL_RMA_ROW(CTYPE, NAME, RMA, ...) FSH_IF(RMA, FSH_DECL_RMA(CTYPE, NAME))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_DECL_RMA_ROW)
/* flat-header: end */

/* The sized routines move raw BITS/8-byte elements; nelems, bsize and the strides count
 * elements. (OpenSHMEM 1.6 has no ibputmem/ibgetmem.) */
/* flat-header: omit */
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
                                      ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);      \
    FSH_API void shmem_ibput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                   size_t bsize, size_t nblocks, int pe);                        \
    FSH_API void shmem_ibget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                   size_t bsize, size_t nblocks, int pe);                        \
    FSH_API void shmem_ctx_ibput##BITS(shmem_ctx_t ctx, void *dest, const void *source,          \
                                       ptrdiff_t dst, ptrdiff_t sst, size_t bsize,               \
                                       size_t nblocks, int pe);                                  \
    FSH_API void shmem_ctx_ibget##BITS(shmem_ctx_t ctx, void *dest, const void *source,          \
                                       ptrdiff_t dst, ptrdiff_t sst, size_t bsize,               \
                                       size_t nblocks, int pe);
/* flat-header: end */
/* flat-header: expand */
FSH_SIZE_TABLE(FSH_DECL_SIZED)
/* flat-header: end */

/* ------------------------------------------------------------------ typed AMOs (generated) */
/* Standard AMO types (AMO=1): compare_swap, inc and add, with their fetching _nbi forms. */
/* flat-header: omit */
#define FSH_DECL_AMO(CTYPE, NAME, PFX)                                                           \
    FSH_API CTYPE shmem_##PFX##NAME##_atomic_compare_swap(FSH_PARAM_##PFX CTYPE *dest,           \
                                                          CTYPE cond, CTYPE value, int pe);      \
    FSH_API CTYPE shmem_##PFX##NAME##_atomic_fetch_inc(FSH_PARAM_##PFX CTYPE *dest, int pe);     \
    FSH_API void shmem_##PFX##NAME##_atomic_inc(FSH_PARAM_##PFX CTYPE *dest, int pe);            \
    FSH_API CTYPE shmem_##PFX##NAME##_atomic_fetch_add(FSH_PARAM_##PFX CTYPE *dest, CTYPE value, \
                                                       int pe);                                  \
    FSH_API void shmem_##PFX##NAME##_atomic_add(FSH_PARAM_##PFX CTYPE *dest, CTYPE value,        \
                                                int pe);                                         \
    FSH_API void shmem_##PFX##NAME##_atomic_compare_swap_nbi(FSH_PARAM_##PFX CTYPE *fetch,       \
                                                             CTYPE *dest, CTYPE cond,            \
                                                             CTYPE value, int pe);               \
    FSH_API void shmem_##PFX##NAME##_atomic_fetch_inc_nbi(FSH_PARAM_##PFX CTYPE *fetch,          \
                                                          CTYPE *dest, int pe);                  \
    FSH_API void shmem_##PFX##NAME##_atomic_fetch_add_nbi(FSH_PARAM_##PFX CTYPE *fetch,          \
                                                          CTYPE *dest, CTYPE value, int pe);
/* flat-header: end */

/* Extended AMO types (EXTAMO=1): fetch, set and swap. */
/* flat-header: omit */
#define FSH_DECL_EXTAMO(CTYPE, NAME, PFX)                                                        \
    FSH_API CTYPE shmem_##PFX##NAME##_atomic_fetch(FSH_PARAM_##PFX const CTYPE *source, int pe); \
    FSH_API void shmem_##PFX##NAME##_atomic_set(FSH_PARAM_##PFX CTYPE *dest, CTYPE value,        \
                                                int pe);                                         \
    FSH_API CTYPE shmem_##PFX##NAME##_atomic_swap(FSH_PARAM_##PFX CTYPE *dest, CTYPE value,      \
                                                  int pe);                                       \
    FSH_API void shmem_##PFX##NAME##_atomic_fetch_nbi(FSH_PARAM_##PFX CTYPE *fetch,              \
                                                      const CTYPE *source, int pe);              \
    FSH_API void shmem_##PFX##NAME##_atomic_swap_nbi(FSH_PARAM_##PFX CTYPE *fetch, CTYPE *dest,  \
                                                     CTYPE value, int pe);
/* flat-header: end */

/* Bitwise AMO types (BITAMO=1): and, or, xor, each fetching, non-fetching and fetching _nbi. */
/* flat-header: omit */
#define FSH_DECL_BITOP(CTYPE, NAME, PFX, OP)                                                     \
    FSH_API CTYPE shmem_##PFX##NAME##_atomic_fetch_##OP(FSH_PARAM_##PFX CTYPE *dest,             \
                                                        CTYPE value, int pe);                    \
    FSH_API void shmem_##PFX##NAME##_atomic_##OP(FSH_PARAM_##PFX CTYPE *dest, CTYPE value,       \
                                                 int pe);                                        \
    FSH_API void shmem_##PFX##NAME##_atomic_fetch_##OP##_nbi(FSH_PARAM_##PFX CTYPE *fetch,       \
                                                             CTYPE *dest, CTYPE value, int pe);
#define FSH_DECL_BITAMO(CTYPE, NAME, PFX)                                                        \
    FSH_DECL_BITOP(CTYPE, NAME, PFX, and)                                                        \
    FSH_DECL_BITOP(CTYPE, NAME, PFX, or)                                                         \
    FSH_DECL_BITOP(CTYPE, NAME, PFX, xor)
/* flat-header: end */

/* flat-header: omit */
#define FSH_DECL_AMO_ROW(CTYPE, NAME, RMA, AMO, EXT, BIT, ...)                                   \
    FSH_IF(AMO, FSH_DECL_AMO(CTYPE, NAME, ) FSH_DECL_AMO(CTYPE, NAME, ctx_))                     \
    FSH_IF(EXT, FSH_DECL_EXTAMO(CTYPE, NAME, ) FSH_DECL_EXTAMO(CTYPE, NAME, ctx_))               \
    FSH_IF(BIT, FSH_DECL_BITAMO(CTYPE, NAME, ) FSH_DECL_BITAMO(CTYPE, NAME, ctx_))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_DECL_AMO_ROW)
/* flat-header: end */

/* The deprecated AMO names (OpenSHMEM 1.3's, deprecated by 1.4), for every type of the
 * standard AMO table, and fetch/set/swap of the extended one. */
/* flat-header: omit */
#define FSH_DECL_DEPRECATED_AMO(CTYPE, NAME)                                                     \
    FSH_API FSH_DEPRECATED CTYPE shmem_##NAME##_cswap(CTYPE *dest, CTYPE cond, CTYPE value,      \
                                                      int pe);                                   \
    FSH_API FSH_DEPRECATED CTYPE shmem_##NAME##_finc(CTYPE *dest, int pe);                       \
    FSH_API FSH_DEPRECATED void shmem_##NAME##_inc(CTYPE *dest, int pe);                         \
    FSH_API FSH_DEPRECATED CTYPE shmem_##NAME##_fadd(CTYPE *dest, CTYPE value, int pe);          \
    FSH_API FSH_DEPRECATED void shmem_##NAME##_add(CTYPE *dest, CTYPE value, int pe);
#define FSH_DECL_DEPRECATED_EXTAMO(CTYPE, NAME)                                                  \
    FSH_API FSH_DEPRECATED CTYPE shmem_##NAME##_fetch(const CTYPE *source, int pe);              \
    FSH_API FSH_DEPRECATED void shmem_##NAME##_set(CTYPE *dest, CTYPE value, int pe);            \
    FSH_API FSH_DEPRECATED CTYPE shmem_##NAME##_swap(CTYPE *dest, CTYPE value, int pe);
/* flat-header: end */
/* flat-header: expand */
FSH_DEPRECATED_AMO_TYPES(FSH_DECL_DEPRECATED_AMO)
FSH_DEPRECATED_EXTAMO_TYPES(FSH_DECL_DEPRECATED_EXTAMO)
/* flat-header: end */
/* In C++ the untyped shmem_swap is the long overload of the deprecated generic (the C++
 * overloads at the end): a C-linkage function of the same signature would clash with it. */
#if !defined(__cplusplus)
FSH_API FSH_DEPRECATED long shmem_swap(long *target, long value, int pe);
#endif

/* ------------------------------------------------------------------ typed p2p sync (generated) */
/* SYNC=1 rows: wait_until and test on one ivar, and the _all/_any/_some forms on an array of
 * nelems ivars (status masks elements out; may be NULL), each also comparing against a vector
 * of cmp_values. _any returns the index of a satisfied element (SIZE_MAX if none); _some
 * stores the indices of all satisfied elements in indices and returns their number. */
/* flat-header: omit */
#define FSH_DECL_SYNC(CTYPE, NAME)                                                               \
    FSH_API void shmem_##NAME##_wait_until(CTYPE *ivar, int cmp, CTYPE cmp_value);               \
    FSH_API void shmem_##NAME##_wait_until_all(CTYPE *ivars, size_t nelems, const int *status,   \
                                               int cmp, CTYPE cmp_value);                        \
    FSH_API size_t shmem_##NAME##_wait_until_any(CTYPE *ivars, size_t nelems, const int *status, \
                                                 int cmp, CTYPE cmp_value);                      \
    FSH_API size_t shmem_##NAME##_wait_until_some(CTYPE *ivars, size_t nelems, size_t *indices,  \
                                                  const int *status, int cmp, CTYPE cmp_value);  \
    FSH_API void shmem_##NAME##_wait_until_all_vector(CTYPE *ivars, size_t nelems,               \
                                                      const int *status, int cmp,                \
                                                      CTYPE *cmp_values);                        \
    FSH_API size_t shmem_##NAME##_wait_until_any_vector(CTYPE *ivars, size_t nelems,             \
                                                        const int *status, int cmp,              \
                                                        CTYPE *cmp_values);                      \
    FSH_API size_t shmem_##NAME##_wait_until_some_vector(CTYPE *ivars, size_t nelems,            \
                                                         size_t *indices, const int *status,     \
                                                         int cmp, CTYPE *cmp_values);            \
    FSH_API int shmem_##NAME##_test(CTYPE *ivar, int cmp, CTYPE cmp_value);                      \
    FSH_API int shmem_##NAME##_test_all(CTYPE *ivars, size_t nelems, const int *status, int cmp, \
                                        CTYPE cmp_value);                                        \
    FSH_API size_t shmem_##NAME##_test_any(CTYPE *ivars, size_t nelems, const int *status,       \
                                           int cmp, CTYPE cmp_value);                            \
    FSH_API size_t shmem_##NAME##_test_some(CTYPE *ivars, size_t nelems, size_t *indices,        \
                                            const int *status, int cmp, CTYPE cmp_value);        \
    FSH_API int shmem_##NAME##_test_all_vector(CTYPE *ivars, size_t nelems, const int *status,   \
                                               int cmp, CTYPE *cmp_values);                      \
    FSH_API size_t shmem_##NAME##_test_any_vector(CTYPE *ivars, size_t nelems,                   \
                                                  const int *status, int cmp,                    \
                                                  CTYPE *cmp_values);                            \
    FSH_API size_t shmem_##NAME##_test_some_vector(CTYPE *ivars, size_t nelems, size_t *indices, \
                                                   const int *status, int cmp,                   \
                                                   CTYPE *cmp_values);
#define FSH_DECL_SYNC_ROW(CTYPE, NAME, RMA, AMO, EXT, BIT, SYNC, ...)                            \
    FSH_IF(SYNC, FSH_DECL_SYNC(CTYPE, NAME))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_DECL_SYNC_ROW)
/* flat-header: end */

/* Deprecated: shmem_TYPENAME_wait(ivar, v) waits until *ivar != v; the untyped forms take a
 * long. In C11 the shmem_wait_until generic below takes the untyped function's name. */
/* flat-header: omit */
#define FSH_DECL_DEPRECATED_WAIT(CTYPE, NAME)                                                    \
    FSH_API FSH_DEPRECATED void shmem_##NAME##_wait(CTYPE *ivar, CTYPE cmp_value);
/* flat-header: end */
/* flat-header: expand */
FSH_DEPRECATED_WAIT_TYPES(FSH_DECL_DEPRECATED_WAIT)
/* flat-header: end */
FSH_API FSH_DEPRECATED void shmem_wait(long *ivar, long cmp_value);
/* In C++ the long overload of shmem_wait_until (not deprecated) takes this one's place, as
 * shmem_swap's does above. */
#if !defined(__cplusplus)
FSH_API FSH_DEPRECATED void shmem_wait_until(long *ivar, int cmp, long cmp_value);
#endif

/* ------------------------------------------------------------------ put with signal (generated) */
/* nelems elements to dest on pe, then the 64-bit signal at sig_addr on pe updated with sig_op
 * (SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD), never visible before the data. Typed for RMA=1
 * rows; sized for the sized routines' widths plus `mem`, whose elements are bytes
 * (shmem_putmem_signal). */
/* flat-header: omit */
#define FSH_DECL_SIGNAL(CTYPE, NAME, PFX)                                                        \
    FSH_API void shmem_##PFX##NAME##_put_signal(FSH_PARAM_##PFX CTYPE *dest,                     \
                                                const CTYPE *source, size_t nelems,              \
                                                uint64_t *sig_addr, uint64_t signal,             \
                                                int sig_op, int pe);                             \
    FSH_API void shmem_##PFX##NAME##_put_signal_nbi(FSH_PARAM_##PFX CTYPE *dest,                 \
                                                    const CTYPE *source, size_t nelems,          \
                                                    uint64_t *sig_addr, uint64_t signal,         \
                                                    int sig_op, int pe);
#define FSH_DECL_SIGNAL_ROW(CTYPE, NAME, RMA, ...)                                               \
    FSH_IF(RMA, FSH_DECL_SIGNAL(CTYPE, NAME, ) FSH_DECL_SIGNAL(CTYPE, NAME, ctx_))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_DECL_SIGNAL_ROW)
/* flat-header: end */

/* flat-header: omit */
#define FSH_DECL_SIZED_SIGNAL_(BITS, PFX)                                                        \
    FSH_API void shmem_##PFX##put##BITS##_signal(FSH_PARAM_##PFX void *dest, const void *source, \
                                                 size_t nelems, uint64_t *sig_addr,              \
                                                 uint64_t signal, int sig_op, int pe);           \
    FSH_API void shmem_##PFX##put##BITS##_signal_nbi(FSH_PARAM_##PFX void *dest,                 \
                                                     const void *source, size_t nelems,          \
                                                     uint64_t *sig_addr, uint64_t signal,        \
                                                     int sig_op, int pe);
#define FSH_DECL_SIZED_SIGNAL(BITS, ETYPE)                                                       \
    FSH_DECL_SIZED_SIGNAL_(BITS, ) FSH_DECL_SIZED_SIGNAL_(BITS, ctx_)
/* flat-header: end */
/* flat-header: expand */
FSH_SIZE_TABLE(FSH_DECL_SIZED_SIGNAL)
FSH_DECL_SIZED_SIGNAL(mem, unsigned char)
/* flat-header: end */

/* ------------------------------------------------------------------ typed collectives (generated) */
/* RMA=1 rows: the team collectives in elements of the type. */
/* flat-header: omit */
#define FSH_DECL_COLL(CTYPE, NAME)                                                               \
    FSH_API int shmem_##NAME##_alltoall(shmem_team_t team, CTYPE *dest, const CTYPE *source,     \
                                        size_t nelems);                                          \
    FSH_API int shmem_##NAME##_alltoalls(shmem_team_t team, CTYPE *dest, const CTYPE *source,    \
                                         ptrdiff_t dst, ptrdiff_t sst, size_t nelems);           \
    FSH_API int shmem_##NAME##_broadcast(shmem_team_t team, CTYPE *dest, const CTYPE *source,    \
                                         size_t nelems, int PE_root);                            \
    FSH_API int shmem_##NAME##_collect(shmem_team_t team, CTYPE *dest, const CTYPE *source,      \
                                       size_t nelems);                                           \
    FSH_API int shmem_##NAME##_fcollect(shmem_team_t team, CTYPE *dest, const CTYPE *source,     \
                                        size_t nelems);
#define FSH_DECL_COLL_ROW(CTYPE, NAME, RMA, ...) FSH_IF(RMA, FSH_DECL_COLL(CTYPE, NAME))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_DECL_COLL_ROW)
/* flat-header: end */

/* Reductions: and/or/xor for RBIT rows, max/min for RMINMAX rows, sum/prod for RARITH rows.
 * dest[i] = source[i] OP over every PE of the team, for i < nreduce; dest may be source. */
/* flat-header: omit */
#define FSH_DECL_REDUCE(CTYPE, NAME, OP)                                                         \
    FSH_API int shmem_##NAME##_##OP##_reduce(shmem_team_t team, CTYPE *dest,                     \
                                             const CTYPE *source, size_t nreduce);
#define FSH_DECL_REDUCE_ROW(CTYPE, NAME, R, A, E, B, S, RBIT, RMM, RAR, GEN)                     \
    FSH_IF(RBIT, FSH_DECL_REDUCE(CTYPE, NAME, and) FSH_DECL_REDUCE(CTYPE, NAME, or)              \
                     FSH_DECL_REDUCE(CTYPE, NAME, xor))                                          \
    FSH_IF(RMM, FSH_DECL_REDUCE(CTYPE, NAME, max) FSH_DECL_REDUCE(CTYPE, NAME, min))             \
    FSH_IF(RAR, FSH_DECL_REDUCE(CTYPE, NAME, sum) FSH_DECL_REDUCE(CTYPE, NAME, prod))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_DECL_REDUCE_ROW)
/* flat-header: end */

/* OpenSHMEM 1.6 scans, for the RARITH rows: on team PE p, dest[i] = the sum of source[i] over
 * team PEs 0..p (inscan) or 0..p-1 (exscan; 0 on team PE 0), i < nelems; dest may be source. */
/* flat-header: omit */
#define FSH_DECL_SCAN(CTYPE, NAME, KIND)                                                         \
    FSH_API int shmem_##NAME##_sum_##KIND(shmem_team_t team, CTYPE *dest, const CTYPE *source,   \
                                          size_t nelems);
#define FSH_DECL_SCAN_ROW(CTYPE, NAME, R, A, E, B, S, RBIT, RMM, RAR, GEN)                       \
    FSH_IF(RAR, FSH_DECL_SCAN(CTYPE, NAME, inscan) FSH_DECL_SCAN(CTYPE, NAME, exscan))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_DECL_SCAN_ROW)
/* flat-header: end */

/* The deprecated active-set reductions exist for the types OpenSHMEM 1.4 had. pWrk holds at
 * least max(nreduce/2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE) elements (unused by fabshmem). */
/* flat-header: omit */
#define FSH_DECL_TO_ALL(CTYPE, NAME, OP)                                                         \
    FSH_API FSH_DEPRECATED void shmem_##NAME##_##OP##_to_all(CTYPE *dest, const CTYPE *source,   \
                                                             int nreduce, int PE_start,          \
                                                             int logPE_stride, int PE_size,      \
                                                             CTYPE *pWrk, long *pSync);
#define FSH_DECL_TO_ALL_BIT(CTYPE, NAME)                                                         \
    FSH_DECL_TO_ALL(CTYPE, NAME, and) FSH_DECL_TO_ALL(CTYPE, NAME, or)                           \
    FSH_DECL_TO_ALL(CTYPE, NAME, xor)
#define FSH_DECL_TO_ALL_MINMAX(CTYPE, NAME)                                                      \
    FSH_DECL_TO_ALL(CTYPE, NAME, max) FSH_DECL_TO_ALL(CTYPE, NAME, min)
#define FSH_DECL_TO_ALL_ARITH(CTYPE, NAME)                                                       \
    FSH_DECL_TO_ALL(CTYPE, NAME, sum) FSH_DECL_TO_ALL(CTYPE, NAME, prod)
/* flat-header: end */
/* flat-header: expand */
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_DECL_TO_ALL_BIT)
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_DECL_TO_ALL_MINMAX)
FSH_DEPRECATED_REDUCE_FLOAT_TYPES(FSH_DECL_TO_ALL_MINMAX)
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_DECL_TO_ALL_ARITH)
FSH_DEPRECATED_REDUCE_FLOAT_TYPES(FSH_DECL_TO_ALL_ARITH)
FSH_DECL_TO_ALL_ARITH(FSH_COMPLEXD, complexd)
FSH_DECL_TO_ALL_ARITH(FSH_COMPLEXF, complexf)
/* flat-header: end */

/* END TYPED API */

/* ------------------------------------------------------------------ C11 generic RMA */
/* shmem_put(dest, source, nelems, pe) and shmem_put(ctx, dest, source, nelems, pe) etc. select
 * the typed routine from the type of dest (of source for shmem_g), over every type of the
 * routine's spec table: the standard types first, then the exact-width typedefs that list
 * lacks (the FSH_GL_<op> lists below; _Generic rejects a type listed twice, and int32_t is
 * usually int). A type of no row is a compile error rather than a silent byte copy. The ctx
 * form is told apart by argument count. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

#define FSH_NARG(...) FSH_NARG_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define FSH_NARG_(a1, a2, a3, a4, a5, a6, a7, a8, a9, n, ...) n
#define FSH_CAT(a, b) FSH_CAT_(a, b)
#define FSH_CAT_(a, b) a##b

/* FSH_GL_<op>(x): the routine <op> for the type of x, a selection over the distinct standard
 * types of the routine's spec table (GEN 1 in the type table) whose default is a second
 * selection over the exact-width typedefs (GEN W) of the table that the first list lacks:
 * int32_t is int here, which the bitwise AMOs' table does not hold. shmem_g and
 * shmem_atomic_fetch also accept a source pointer that is not const-qualified, since _Generic
 * matches qualified pointees exactly. A type listed in neither selects
 * fsh_generic_type_not_in_spec_table, which is no function, so the call does not compile:
 * the type is not in the spec's table of that routine. */
struct fsh_generic_type_not_in_spec_table;
extern const struct fsh_generic_type_not_in_spec_table fsh_generic_type_not_in_spec_table;
/* flat-header: omit */
/* One association per row of a selection, each led by its comma so the list follows the
 * controlling expression directly. */
#define FSH_GA(RMA, GEN, CTYPE, FN) FSH_IF2(RMA, GEN, , CTYPE *: FN)
#define FSH_GA_put(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(c1, GEN, T, shmem_##N##_put)
#define FSH_GA_put_nbi(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                               \
    FSH_GA(c1, GEN, T, shmem_##N##_put_nbi)
#define FSH_GA_get(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(c1, GEN, T, shmem_##N##_get)
#define FSH_GA_get_nbi(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                               \
    FSH_GA(c1, GEN, T, shmem_##N##_get_nbi)
#define FSH_GA_p(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(c1, GEN, T, shmem_##N##_p)
#define FSH_GA_g(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                                     \
    FSH_IF2(c1, GEN, , T *: shmem_##N##_g, const T *: shmem_##N##_g)
#define FSH_GA_iput(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(c1, GEN, T, shmem_##N##_iput)
#define FSH_GA_iget(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN) FSH_GA(c1, GEN, T, shmem_##N##_iget)
#define FSH_GA_ctx_put(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                               \
    FSH_GA(c1, GEN, T, shmem_ctx_##N##_put)
#define FSH_GA_ctx_put_nbi(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                           \
    FSH_GA(c1, GEN, T, shmem_ctx_##N##_put_nbi)
#define FSH_GA_ctx_get(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                               \
    FSH_GA(c1, GEN, T, shmem_ctx_##N##_get)
#define FSH_GA_ctx_get_nbi(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                           \
    FSH_GA(c1, GEN, T, shmem_ctx_##N##_get_nbi)
#define FSH_GA_ctx_p(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                                 \
    FSH_GA(c1, GEN, T, shmem_ctx_##N##_p)
#define FSH_GA_ctx_g(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                                 \
    FSH_IF2(c1, GEN, , T *: shmem_ctx_##N##_g, const T *: shmem_ctx_##N##_g)
#define FSH_GA_ctx_iput(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                              \
    FSH_GA(c1, GEN, T, shmem_ctx_##N##_iput)
#define FSH_GA_ctx_iget(T, N, c1, c2, c3, c4, c5, c6, c7, c8, GEN)                              \
    FSH_GA(c1, GEN, T, shmem_ctx_##N##_iget)
/* (FSH_GA_RMA is defined with the AMO lists below; it is expanded only at a call.) */
#define FSH_GA_ibput(...) FSH_GA_RMA(__VA_ARGS__, , ibput)
#define FSH_GA_ibget(...) FSH_GA_RMA(__VA_ARGS__, , ibget)
#define FSH_GA_ctx_ibput(...) FSH_GA_RMA(__VA_ARGS__, ctx_, ibput)
#define FSH_GA_ctx_ibget(...) FSH_GA_RMA(__VA_ARGS__, ctx_, ibget)
/* The two selections of FSH_GL_<op>, over the rows the row macro L gives. */
#define FSH_GSELECT(x, L)                                                                        \
    _Generic((x) FSH_TYPE_TABLE(L),                                                              \
        default: _Generic((x) FSH_TYPE_TABLE_W(L),                                               \
                     default: fsh_generic_type_not_in_spec_table))
/* flat-header: end */
/* flat-header: expand */
#define FSH_GL_put(x) FSH_GSELECT(x, FSH_GA_put)
#define FSH_GL_ctx_put(x) FSH_GSELECT(x, FSH_GA_ctx_put)
#define FSH_GL_put_nbi(x) FSH_GSELECT(x, FSH_GA_put_nbi)
#define FSH_GL_ctx_put_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_put_nbi)
#define FSH_GL_get(x) FSH_GSELECT(x, FSH_GA_get)
#define FSH_GL_ctx_get(x) FSH_GSELECT(x, FSH_GA_ctx_get)
#define FSH_GL_get_nbi(x) FSH_GSELECT(x, FSH_GA_get_nbi)
#define FSH_GL_ctx_get_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_get_nbi)
#define FSH_GL_p(x) FSH_GSELECT(x, FSH_GA_p)
#define FSH_GL_ctx_p(x) FSH_GSELECT(x, FSH_GA_ctx_p)
#define FSH_GL_g(x) FSH_GSELECT(x, FSH_GA_g)
#define FSH_GL_ctx_g(x) FSH_GSELECT(x, FSH_GA_ctx_g)
#define FSH_GL_iput(x) FSH_GSELECT(x, FSH_GA_iput)
#define FSH_GL_ctx_iput(x) FSH_GSELECT(x, FSH_GA_ctx_iput)
#define FSH_GL_iget(x) FSH_GSELECT(x, FSH_GA_iget)
#define FSH_GL_ctx_iget(x) FSH_GSELECT(x, FSH_GA_ctx_iget)
#define FSH_GL_ibput(x) FSH_GSELECT(x, FSH_GA_ibput)
#define FSH_GL_ctx_ibput(x) FSH_GSELECT(x, FSH_GA_ctx_ibput)
#define FSH_GL_ibget(x) FSH_GSELECT(x, FSH_GA_ibget)
#define FSH_GL_ctx_ibget(x) FSH_GSELECT(x, FSH_GA_ctx_ibget)
/* flat-header: end */

#define FSH_GLIST(x, OP) FSH_GL_##OP(x)
/* FSH_G_<op>_<argument count>: the plain form, then the form with a leading ctx. */
#define FSH_G_put_4(d, s, n, pe) FSH_GLIST(d, put)(d, s, n, pe)
#define FSH_G_put_5(c, d, s, n, pe) FSH_GLIST(d, ctx_put)(c, d, s, n, pe)
#define FSH_G_put_nbi_4(d, s, n, pe) FSH_GLIST(d, put_nbi)(d, s, n, pe)
#define FSH_G_put_nbi_5(c, d, s, n, pe) FSH_GLIST(d, ctx_put_nbi)(c, d, s, n, pe)
#define FSH_G_get_4(d, s, n, pe) FSH_GLIST(d, get)(d, s, n, pe)
#define FSH_G_get_5(c, d, s, n, pe) FSH_GLIST(d, ctx_get)(c, d, s, n, pe)
#define FSH_G_get_nbi_4(d, s, n, pe) FSH_GLIST(d, get_nbi)(d, s, n, pe)
#define FSH_G_get_nbi_5(c, d, s, n, pe) FSH_GLIST(d, ctx_get_nbi)(c, d, s, n, pe)
#define FSH_G_p_3(d, v, pe) FSH_GLIST(d, p)(d, v, pe)
#define FSH_G_p_4(c, d, v, pe) FSH_GLIST(d, ctx_p)(c, d, v, pe)
#define FSH_G_g_2(s, pe) FSH_GLIST(s, g)(s, pe)
#define FSH_G_g_3(c, s, pe) FSH_GLIST(s, ctx_g)(c, s, pe)
#define FSH_G_iput_6(d, s, dst, sst, n, pe) FSH_GLIST(d, iput)(d, s, dst, sst, n, pe)
#define FSH_G_iput_7(c, d, s, dst, sst, n, pe)                                                  \
    FSH_GLIST(d, ctx_iput)(c, d, s, dst, sst, n, pe)
#define FSH_G_iget_6(d, s, dst, sst, n, pe) FSH_GLIST(d, iget)(d, s, dst, sst, n, pe)
#define FSH_G_iget_7(c, d, s, dst, sst, n, pe)                                                  \
    FSH_GLIST(d, ctx_iget)(c, d, s, dst, sst, n, pe)
#define FSH_G_ibput_7(d, s, dst, sst, b, n, pe) FSH_GLIST(d, ibput)(d, s, dst, sst, b, n, pe)
#define FSH_G_ibput_8(c, d, s, dst, sst, b, n, pe)                                              \
    FSH_GLIST(d, ctx_ibput)(c, d, s, dst, sst, b, n, pe)
#define FSH_G_ibget_7(d, s, dst, sst, b, n, pe) FSH_GLIST(d, ibget)(d, s, dst, sst, b, n, pe)
#define FSH_G_ibget_8(c, d, s, dst, sst, b, n, pe)                                              \
    FSH_GLIST(d, ctx_ibget)(c, d, s, dst, sst, b, n, pe)

#define shmem_put(...) FSH_CAT(FSH_G_put_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_put_nbi(...) FSH_CAT(FSH_G_put_nbi_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_get(...) FSH_CAT(FSH_G_get_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_get_nbi(...) FSH_CAT(FSH_G_get_nbi_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_p(...) FSH_CAT(FSH_G_p_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_g(...) FSH_CAT(FSH_G_g_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_iput(...) FSH_CAT(FSH_G_iput_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_iget(...) FSH_CAT(FSH_G_iget_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
/* OpenSHMEM 1.6 */
#define shmem_ibput(...) FSH_CAT(FSH_G_ibput_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)
#define shmem_ibget(...) FSH_CAT(FSH_G_ibget_, FSH_NARG(__VA_ARGS__))(__VA_ARGS__)


/* ---------------------------------------------------------- C11 generic AMO, sync and signal */
/* The same scheme for atomics, point-to-point synchronization and put-with-signal, with one
 * more filter: a row joins an operation's list only when it is in that operation's spec table
 * too, so shmem_atomic_fetch_and on a float * or shmem_wait_until on a char * is a compile
 * error. */
/* flat-header: omit */
/* FSH_GA_<COL>(<row>, PFX, OP) is the association `, T *: shmem_<PFX><NAME>_<OP>` of a
 * row whose COL and GEN columns are both 1, and nothing for any other row. Operation names
 * are only ever pasted, never expanded, so a user macro named like one (test, atomic_add)
 * cannot break these. */
#define FSH_GA_RMA(T, N, R, A, E, B, S, x, y, z, GEN, PFX, OP)                                   \
    FSH_IF2(R, GEN, , T *: shmem_##PFX##N##_##OP)
#define FSH_GA_AMO(T, N, R, A, E, B, S, x, y, z, GEN, PFX, OP)                                   \
    FSH_IF2(A, GEN, , T *: shmem_##PFX##N##_##OP)
#define FSH_GA_EXT(T, N, R, A, E, B, S, x, y, z, GEN, PFX, OP)                                   \
    FSH_IF2(E, GEN, , T *: shmem_##PFX##N##_##OP)
#define FSH_GA_BIT(T, N, R, A, E, B, S, x, y, z, GEN, PFX, OP)                                   \
    FSH_IF2(B, GEN, , T *: shmem_##PFX##N##_##OP)
#define FSH_GA_SYNC(T, N, R, A, E, B, S, x, y, z, GEN, PFX, OP)                                  \
    FSH_IF2(S, GEN, , T *: shmem_##PFX##N##_##OP)
/* atomic_fetch reads through a const TYPE *source and accepts it with or without const. */
#define FSH_GA_EXTC(T, N, R, A, E, B, S, x, y, z, GEN, PFX, OP)                                  \
    FSH_IF2(E, GEN, , T *: shmem_##PFX##N##_##OP, const T *: shmem_##PFX##N##_##OP)

/* The per-operation row macros FSH_GLIST expands: plain form, then ctx form. */
#define FSH_GA_atomic_compare_swap(...) FSH_GA_AMO(__VA_ARGS__, , atomic_compare_swap)
#define FSH_GA_ctx_atomic_compare_swap(...) FSH_GA_AMO(__VA_ARGS__, ctx_, atomic_compare_swap)
#define FSH_GA_atomic_fetch_inc(...) FSH_GA_AMO(__VA_ARGS__, , atomic_fetch_inc)
#define FSH_GA_ctx_atomic_fetch_inc(...) FSH_GA_AMO(__VA_ARGS__, ctx_, atomic_fetch_inc)
#define FSH_GA_atomic_inc(...) FSH_GA_AMO(__VA_ARGS__, , atomic_inc)
#define FSH_GA_ctx_atomic_inc(...) FSH_GA_AMO(__VA_ARGS__, ctx_, atomic_inc)
#define FSH_GA_atomic_fetch_add(...) FSH_GA_AMO(__VA_ARGS__, , atomic_fetch_add)
#define FSH_GA_ctx_atomic_fetch_add(...) FSH_GA_AMO(__VA_ARGS__, ctx_, atomic_fetch_add)
#define FSH_GA_atomic_add(...) FSH_GA_AMO(__VA_ARGS__, , atomic_add)
#define FSH_GA_ctx_atomic_add(...) FSH_GA_AMO(__VA_ARGS__, ctx_, atomic_add)
#define FSH_GA_atomic_compare_swap_nbi(...) FSH_GA_AMO(__VA_ARGS__, , atomic_compare_swap_nbi)
#define FSH_GA_ctx_atomic_compare_swap_nbi(...)                                                  \
    FSH_GA_AMO(__VA_ARGS__, ctx_, atomic_compare_swap_nbi)
#define FSH_GA_atomic_fetch_inc_nbi(...) FSH_GA_AMO(__VA_ARGS__, , atomic_fetch_inc_nbi)
#define FSH_GA_ctx_atomic_fetch_inc_nbi(...) FSH_GA_AMO(__VA_ARGS__, ctx_, atomic_fetch_inc_nbi)
#define FSH_GA_atomic_fetch_add_nbi(...) FSH_GA_AMO(__VA_ARGS__, , atomic_fetch_add_nbi)
#define FSH_GA_ctx_atomic_fetch_add_nbi(...) FSH_GA_AMO(__VA_ARGS__, ctx_, atomic_fetch_add_nbi)
#define FSH_GA_atomic_fetch(...) FSH_GA_EXTC(__VA_ARGS__, , atomic_fetch)
#define FSH_GA_ctx_atomic_fetch(...) FSH_GA_EXTC(__VA_ARGS__, ctx_, atomic_fetch)
#define FSH_GA_atomic_set(...) FSH_GA_EXT(__VA_ARGS__, , atomic_set)
#define FSH_GA_ctx_atomic_set(...) FSH_GA_EXT(__VA_ARGS__, ctx_, atomic_set)
#define FSH_GA_atomic_swap(...) FSH_GA_EXT(__VA_ARGS__, , atomic_swap)
#define FSH_GA_ctx_atomic_swap(...) FSH_GA_EXT(__VA_ARGS__, ctx_, atomic_swap)
#define FSH_GA_atomic_fetch_nbi(...) FSH_GA_EXT(__VA_ARGS__, , atomic_fetch_nbi)
#define FSH_GA_ctx_atomic_fetch_nbi(...) FSH_GA_EXT(__VA_ARGS__, ctx_, atomic_fetch_nbi)
#define FSH_GA_atomic_swap_nbi(...) FSH_GA_EXT(__VA_ARGS__, , atomic_swap_nbi)
#define FSH_GA_ctx_atomic_swap_nbi(...) FSH_GA_EXT(__VA_ARGS__, ctx_, atomic_swap_nbi)
#define FSH_GA_atomic_fetch_and(...) FSH_GA_BIT(__VA_ARGS__, , atomic_fetch_and)
#define FSH_GA_ctx_atomic_fetch_and(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_fetch_and)
#define FSH_GA_atomic_fetch_or(...) FSH_GA_BIT(__VA_ARGS__, , atomic_fetch_or)
#define FSH_GA_ctx_atomic_fetch_or(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_fetch_or)
#define FSH_GA_atomic_fetch_xor(...) FSH_GA_BIT(__VA_ARGS__, , atomic_fetch_xor)
#define FSH_GA_ctx_atomic_fetch_xor(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_fetch_xor)
#define FSH_GA_atomic_and(...) FSH_GA_BIT(__VA_ARGS__, , atomic_and)
#define FSH_GA_ctx_atomic_and(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_and)
#define FSH_GA_atomic_or(...) FSH_GA_BIT(__VA_ARGS__, , atomic_or)
#define FSH_GA_ctx_atomic_or(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_or)
#define FSH_GA_atomic_xor(...) FSH_GA_BIT(__VA_ARGS__, , atomic_xor)
#define FSH_GA_ctx_atomic_xor(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_xor)
#define FSH_GA_atomic_fetch_and_nbi(...) FSH_GA_BIT(__VA_ARGS__, , atomic_fetch_and_nbi)
#define FSH_GA_ctx_atomic_fetch_and_nbi(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_fetch_and_nbi)
#define FSH_GA_atomic_fetch_or_nbi(...) FSH_GA_BIT(__VA_ARGS__, , atomic_fetch_or_nbi)
#define FSH_GA_ctx_atomic_fetch_or_nbi(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_fetch_or_nbi)
#define FSH_GA_atomic_fetch_xor_nbi(...) FSH_GA_BIT(__VA_ARGS__, , atomic_fetch_xor_nbi)
#define FSH_GA_ctx_atomic_fetch_xor_nbi(...) FSH_GA_BIT(__VA_ARGS__, ctx_, atomic_fetch_xor_nbi)
#define FSH_GA_wait_until(...) FSH_GA_SYNC(__VA_ARGS__, , wait_until)
#define FSH_GA_wait_until_all(...) FSH_GA_SYNC(__VA_ARGS__, , wait_until_all)
#define FSH_GA_wait_until_any(...) FSH_GA_SYNC(__VA_ARGS__, , wait_until_any)
#define FSH_GA_wait_until_some(...) FSH_GA_SYNC(__VA_ARGS__, , wait_until_some)
#define FSH_GA_wait_until_all_vector(...) FSH_GA_SYNC(__VA_ARGS__, , wait_until_all_vector)
#define FSH_GA_wait_until_any_vector(...) FSH_GA_SYNC(__VA_ARGS__, , wait_until_any_vector)
#define FSH_GA_wait_until_some_vector(...) FSH_GA_SYNC(__VA_ARGS__, , wait_until_some_vector)
#define FSH_GA_test(...) FSH_GA_SYNC(__VA_ARGS__, , test)
#define FSH_GA_test_all(...) FSH_GA_SYNC(__VA_ARGS__, , test_all)
#define FSH_GA_test_any(...) FSH_GA_SYNC(__VA_ARGS__, , test_any)
#define FSH_GA_test_some(...) FSH_GA_SYNC(__VA_ARGS__, , test_some)
#define FSH_GA_test_all_vector(...) FSH_GA_SYNC(__VA_ARGS__, , test_all_vector)
#define FSH_GA_test_any_vector(...) FSH_GA_SYNC(__VA_ARGS__, , test_any_vector)
#define FSH_GA_test_some_vector(...) FSH_GA_SYNC(__VA_ARGS__, , test_some_vector)
#define FSH_GA_put_signal(...) FSH_GA_RMA(__VA_ARGS__, , put_signal)
#define FSH_GA_ctx_put_signal(...) FSH_GA_RMA(__VA_ARGS__, ctx_, put_signal)
#define FSH_GA_put_signal_nbi(...) FSH_GA_RMA(__VA_ARGS__, , put_signal_nbi)
#define FSH_GA_ctx_put_signal_nbi(...) FSH_GA_RMA(__VA_ARGS__, ctx_, put_signal_nbi)
/* flat-header: end */
/* flat-header: expand */
#define FSH_GL_atomic_compare_swap(x) FSH_GSELECT(x, FSH_GA_atomic_compare_swap)
#define FSH_GL_ctx_atomic_compare_swap(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_compare_swap)
#define FSH_GL_atomic_fetch_inc(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_inc)
#define FSH_GL_ctx_atomic_fetch_inc(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_inc)
#define FSH_GL_atomic_inc(x) FSH_GSELECT(x, FSH_GA_atomic_inc)
#define FSH_GL_ctx_atomic_inc(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_inc)
#define FSH_GL_atomic_fetch_add(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_add)
#define FSH_GL_ctx_atomic_fetch_add(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_add)
#define FSH_GL_atomic_add(x) FSH_GSELECT(x, FSH_GA_atomic_add)
#define FSH_GL_ctx_atomic_add(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_add)
#define FSH_GL_atomic_compare_swap_nbi(x) FSH_GSELECT(x, FSH_GA_atomic_compare_swap_nbi)
#define FSH_GL_ctx_atomic_compare_swap_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_compare_swap_nbi)
#define FSH_GL_atomic_fetch_inc_nbi(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_inc_nbi)
#define FSH_GL_ctx_atomic_fetch_inc_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_inc_nbi)
#define FSH_GL_atomic_fetch_add_nbi(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_add_nbi)
#define FSH_GL_ctx_atomic_fetch_add_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_add_nbi)
#define FSH_GL_atomic_fetch(x) FSH_GSELECT(x, FSH_GA_atomic_fetch)
#define FSH_GL_ctx_atomic_fetch(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch)
#define FSH_GL_atomic_set(x) FSH_GSELECT(x, FSH_GA_atomic_set)
#define FSH_GL_ctx_atomic_set(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_set)
#define FSH_GL_atomic_swap(x) FSH_GSELECT(x, FSH_GA_atomic_swap)
#define FSH_GL_ctx_atomic_swap(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_swap)
#define FSH_GL_atomic_fetch_nbi(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_nbi)
#define FSH_GL_ctx_atomic_fetch_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_nbi)
#define FSH_GL_atomic_swap_nbi(x) FSH_GSELECT(x, FSH_GA_atomic_swap_nbi)
#define FSH_GL_ctx_atomic_swap_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_swap_nbi)
#define FSH_GL_atomic_fetch_and(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_and)
#define FSH_GL_ctx_atomic_fetch_and(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_and)
#define FSH_GL_atomic_fetch_or(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_or)
#define FSH_GL_ctx_atomic_fetch_or(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_or)
#define FSH_GL_atomic_fetch_xor(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_xor)
#define FSH_GL_ctx_atomic_fetch_xor(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_xor)
#define FSH_GL_atomic_and(x) FSH_GSELECT(x, FSH_GA_atomic_and)
#define FSH_GL_ctx_atomic_and(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_and)
#define FSH_GL_atomic_or(x) FSH_GSELECT(x, FSH_GA_atomic_or)
#define FSH_GL_ctx_atomic_or(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_or)
#define FSH_GL_atomic_xor(x) FSH_GSELECT(x, FSH_GA_atomic_xor)
#define FSH_GL_ctx_atomic_xor(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_xor)
#define FSH_GL_atomic_fetch_and_nbi(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_and_nbi)
#define FSH_GL_ctx_atomic_fetch_and_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_and_nbi)
#define FSH_GL_atomic_fetch_or_nbi(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_or_nbi)
#define FSH_GL_ctx_atomic_fetch_or_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_or_nbi)
#define FSH_GL_atomic_fetch_xor_nbi(x) FSH_GSELECT(x, FSH_GA_atomic_fetch_xor_nbi)
#define FSH_GL_ctx_atomic_fetch_xor_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_atomic_fetch_xor_nbi)
#define FSH_GL_wait_until(x) FSH_GSELECT(x, FSH_GA_wait_until)
#define FSH_GL_wait_until_all(x) FSH_GSELECT(x, FSH_GA_wait_until_all)
#define FSH_GL_wait_until_any(x) FSH_GSELECT(x, FSH_GA_wait_until_any)
#define FSH_GL_wait_until_some(x) FSH_GSELECT(x, FSH_GA_wait_until_some)
#define FSH_GL_wait_until_all_vector(x) FSH_GSELECT(x, FSH_GA_wait_until_all_vector)
#define FSH_GL_wait_until_any_vector(x) FSH_GSELECT(x, FSH_GA_wait_until_any_vector)
#define FSH_GL_wait_until_some_vector(x) FSH_GSELECT(x, FSH_GA_wait_until_some_vector)
#define FSH_GL_test(x) FSH_GSELECT(x, FSH_GA_test)
#define FSH_GL_test_all(x) FSH_GSELECT(x, FSH_GA_test_all)
#define FSH_GL_test_any(x) FSH_GSELECT(x, FSH_GA_test_any)
#define FSH_GL_test_some(x) FSH_GSELECT(x, FSH_GA_test_some)
#define FSH_GL_test_all_vector(x) FSH_GSELECT(x, FSH_GA_test_all_vector)
#define FSH_GL_test_any_vector(x) FSH_GSELECT(x, FSH_GA_test_any_vector)
#define FSH_GL_test_some_vector(x) FSH_GSELECT(x, FSH_GA_test_some_vector)
#define FSH_GL_put_signal(x) FSH_GSELECT(x, FSH_GA_put_signal)
#define FSH_GL_ctx_put_signal(x) FSH_GSELECT(x, FSH_GA_ctx_put_signal)
#define FSH_GL_put_signal_nbi(x) FSH_GSELECT(x, FSH_GA_put_signal_nbi)
#define FSH_GL_ctx_put_signal_nbi(x) FSH_GSELECT(x, FSH_GA_ctx_put_signal_nbi)
/* flat-header: end */

/* FSH_GCALL(OP, NPLAIN, args): the plain form when there are NPLAIN arguments, selected on the
 * first (the pointer the operation is typed by: dest, source, fetch or ivars), else the ctx
 * form, selected on the second. Any other count names an undefined FSH_GSEL_* and fails.
 * FSH_G1/FSH_G2 take the lists of both forms and use the one they need. */
#define FSH_G1(L1, L2, a, ...) L1(a)(a, __VA_ARGS__)
#define FSH_G2(L1, L2, c, a, ...) L2(a)(c, a, __VA_ARGS__)
#define FSH_GSEL_2_2 FSH_G1
#define FSH_GSEL_2_3 FSH_G2
#define FSH_GSEL_3_3 FSH_G1
#define FSH_GSEL_3_4 FSH_G2
#define FSH_GSEL_4_4 FSH_G1
#define FSH_GSEL_4_5 FSH_G2
#define FSH_GSEL_5_5 FSH_G1
#define FSH_GSEL_5_6 FSH_G2
#define FSH_GSEL_7_7 FSH_G1
#define FSH_GSEL_7_8 FSH_G2
#define FSH_GCALL(OP, NPLAIN, ...)                                                               \
    FSH_CAT(FSH_GSEL_##NPLAIN##_, FSH_NARG(__VA_ARGS__))(FSH_GL_##OP, FSH_GL_ctx_##OP,           \
                                                         __VA_ARGS__)
/* Synchronization has no ctx forms: always selected on ivar/ivars, the first argument. */
#define FSH_GSYNC(OP, ...) FSH_G1(FSH_GL_##OP, , __VA_ARGS__)

#define shmem_atomic_fetch(...) FSH_GCALL(atomic_fetch, 2, __VA_ARGS__)
#define shmem_atomic_set(...) FSH_GCALL(atomic_set, 3, __VA_ARGS__)
#define shmem_atomic_swap(...) FSH_GCALL(atomic_swap, 3, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) FSH_GCALL(atomic_compare_swap, 4, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) FSH_GCALL(atomic_fetch_inc, 2, __VA_ARGS__)
#define shmem_atomic_inc(...) FSH_GCALL(atomic_inc, 2, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) FSH_GCALL(atomic_fetch_add, 3, __VA_ARGS__)
#define shmem_atomic_add(...) FSH_GCALL(atomic_add, 3, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) FSH_GCALL(atomic_fetch_and, 3, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) FSH_GCALL(atomic_fetch_or, 3, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) FSH_GCALL(atomic_fetch_xor, 3, __VA_ARGS__)
#define shmem_atomic_and(...) FSH_GCALL(atomic_and, 3, __VA_ARGS__)
#define shmem_atomic_or(...) FSH_GCALL(atomic_or, 3, __VA_ARGS__)
#define shmem_atomic_xor(...) FSH_GCALL(atomic_xor, 3, __VA_ARGS__)
/* The fetching _nbi forms are selected on `fetch`, their first (non-ctx) argument. */
#define shmem_atomic_fetch_nbi(...) FSH_GCALL(atomic_fetch_nbi, 3, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) FSH_GCALL(atomic_swap_nbi, 4, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) FSH_GCALL(atomic_compare_swap_nbi, 5, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) FSH_GCALL(atomic_fetch_inc_nbi, 3, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) FSH_GCALL(atomic_fetch_add_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) FSH_GCALL(atomic_fetch_and_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) FSH_GCALL(atomic_fetch_or_nbi, 4, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) FSH_GCALL(atomic_fetch_xor_nbi, 4, __VA_ARGS__)

#define shmem_wait_until(...) FSH_GSYNC(wait_until, __VA_ARGS__)
#define shmem_wait_until_all(...) FSH_GSYNC(wait_until_all, __VA_ARGS__)
#define shmem_wait_until_any(...) FSH_GSYNC(wait_until_any, __VA_ARGS__)
#define shmem_wait_until_some(...) FSH_GSYNC(wait_until_some, __VA_ARGS__)
#define shmem_wait_until_all_vector(...) FSH_GSYNC(wait_until_all_vector, __VA_ARGS__)
#define shmem_wait_until_any_vector(...) FSH_GSYNC(wait_until_any_vector, __VA_ARGS__)
#define shmem_wait_until_some_vector(...) FSH_GSYNC(wait_until_some_vector, __VA_ARGS__)
#define shmem_test(...) FSH_GSYNC(test, __VA_ARGS__)
#define shmem_test_all(...) FSH_GSYNC(test_all, __VA_ARGS__)
#define shmem_test_any(...) FSH_GSYNC(test_any, __VA_ARGS__)
#define shmem_test_some(...) FSH_GSYNC(test_some, __VA_ARGS__)
#define shmem_test_all_vector(...) FSH_GSYNC(test_all_vector, __VA_ARGS__)
#define shmem_test_any_vector(...) FSH_GSYNC(test_any_vector, __VA_ARGS__)
#define shmem_test_some_vector(...) FSH_GSYNC(test_some_vector, __VA_ARGS__)

#define shmem_put_signal(...) FSH_GCALL(put_signal, 7, __VA_ARGS__)
#define shmem_put_signal_nbi(...) FSH_GCALL(put_signal_nbi, 7, __VA_ARGS__)

/* Collectives take the team first and are selected on dest, their second argument; the
 * reductions only on the rows of their spec table. */
/* flat-header: omit */
#define FSH_GA_RBIT(T, N, R, A, E, B, S, RBIT, RMM, RAR, GEN, OP)                                \
    FSH_IF2(RBIT, GEN, , T *: shmem_##N##_##OP)
#define FSH_GA_RMM(T, N, R, A, E, B, S, RBIT, RMM, RAR, GEN, OP)                                 \
    FSH_IF2(RMM, GEN, , T *: shmem_##N##_##OP)
#define FSH_GA_RAR(T, N, R, A, E, B, S, RBIT, RMM, RAR, GEN, OP)                                 \
    FSH_IF2(RAR, GEN, , T *: shmem_##N##_##OP)
#define FSH_GA_alltoall(...) FSH_GA_RMA(__VA_ARGS__, , alltoall)
#define FSH_GA_alltoalls(...) FSH_GA_RMA(__VA_ARGS__, , alltoalls)
#define FSH_GA_broadcast(...) FSH_GA_RMA(__VA_ARGS__, , broadcast)
#define FSH_GA_collect(...) FSH_GA_RMA(__VA_ARGS__, , collect)
#define FSH_GA_fcollect(...) FSH_GA_RMA(__VA_ARGS__, , fcollect)
#define FSH_GA_and_reduce(...) FSH_GA_RBIT(__VA_ARGS__, and_reduce)
#define FSH_GA_or_reduce(...) FSH_GA_RBIT(__VA_ARGS__, or_reduce)
#define FSH_GA_xor_reduce(...) FSH_GA_RBIT(__VA_ARGS__, xor_reduce)
#define FSH_GA_max_reduce(...) FSH_GA_RMM(__VA_ARGS__, max_reduce)
#define FSH_GA_min_reduce(...) FSH_GA_RMM(__VA_ARGS__, min_reduce)
#define FSH_GA_sum_reduce(...) FSH_GA_RAR(__VA_ARGS__, sum_reduce)
#define FSH_GA_prod_reduce(...) FSH_GA_RAR(__VA_ARGS__, prod_reduce)
#define FSH_GA_sum_inscan(...) FSH_GA_RAR(__VA_ARGS__, sum_inscan)
#define FSH_GA_sum_exscan(...) FSH_GA_RAR(__VA_ARGS__, sum_exscan)
/* flat-header: end */
/* flat-header: expand */
#define FSH_GL_alltoall(x) FSH_GSELECT(x, FSH_GA_alltoall)
#define FSH_GL_alltoalls(x) FSH_GSELECT(x, FSH_GA_alltoalls)
#define FSH_GL_broadcast(x) FSH_GSELECT(x, FSH_GA_broadcast)
#define FSH_GL_collect(x) FSH_GSELECT(x, FSH_GA_collect)
#define FSH_GL_fcollect(x) FSH_GSELECT(x, FSH_GA_fcollect)
#define FSH_GL_and_reduce(x) FSH_GSELECT(x, FSH_GA_and_reduce)
#define FSH_GL_or_reduce(x) FSH_GSELECT(x, FSH_GA_or_reduce)
#define FSH_GL_xor_reduce(x) FSH_GSELECT(x, FSH_GA_xor_reduce)
#define FSH_GL_max_reduce(x) FSH_GSELECT(x, FSH_GA_max_reduce)
#define FSH_GL_min_reduce(x) FSH_GSELECT(x, FSH_GA_min_reduce)
#define FSH_GL_sum_reduce(x) FSH_GSELECT(x, FSH_GA_sum_reduce)
#define FSH_GL_prod_reduce(x) FSH_GSELECT(x, FSH_GA_prod_reduce)
#define FSH_GL_sum_inscan(x) FSH_GSELECT(x, FSH_GA_sum_inscan)
#define FSH_GL_sum_exscan(x) FSH_GSELECT(x, FSH_GA_sum_exscan)
/* flat-header: end */
#define FSH_GTEAM(OP, ...) FSH_G2(, FSH_GL_##OP, __VA_ARGS__)

#define shmem_alltoall(...) FSH_GTEAM(alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) FSH_GTEAM(alltoalls, __VA_ARGS__)
#define shmem_broadcast(...) FSH_GTEAM(broadcast, __VA_ARGS__)
#define shmem_collect(...) FSH_GTEAM(collect, __VA_ARGS__)
#define shmem_fcollect(...) FSH_GTEAM(fcollect, __VA_ARGS__)
#define shmem_and_reduce(...) FSH_GTEAM(and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...) FSH_GTEAM(or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...) FSH_GTEAM(xor_reduce, __VA_ARGS__)
#define shmem_max_reduce(...) FSH_GTEAM(max_reduce, __VA_ARGS__)
#define shmem_min_reduce(...) FSH_GTEAM(min_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...) FSH_GTEAM(sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...) FSH_GTEAM(prod_reduce, __VA_ARGS__)
/* OpenSHMEM 1.6 */
#define shmem_sum_inscan(...) FSH_GTEAM(sum_inscan, __VA_ARGS__)
#define shmem_sum_exscan(...) FSH_GTEAM(sum_exscan, __VA_ARGS__)

/* ---------------------------------------------------------- C11 generic deprecated AMOs, sync */
/* The 1.3 generic AMOs (deprecated), over the distinct standard types of their tables (one
 * selection suffices: every other row's type is one of them). shmem_swap on a long * is also
 * the untyped long routine of that name, which it selects. */
/* flat-header: omit */
#define FSH_GD(CTYPE, NAME, OP) , CTYPE *: shmem_##NAME##_##OP
#define FSH_GD_cswap(T, N) FSH_GD(T, N, cswap)
#define FSH_GD_finc(T, N) FSH_GD(T, N, finc)
#define FSH_GD_inc(T, N) FSH_GD(T, N, inc)
#define FSH_GD_fadd(T, N) FSH_GD(T, N, fadd)
#define FSH_GD_add(T, N) FSH_GD(T, N, add)
#define FSH_GD_fetch(T, N) FSH_GD(T, N, fetch), const T *: shmem_##N##_fetch
#define FSH_GD_set(T, N) FSH_GD(T, N, set)
#define FSH_GD_swap(T, N) FSH_GD(T, N, swap)
/* flat-header: end */
/* flat-header: expand */
#define FSH_GL_cswap(x) _Generic((x) FSH_DEPRECATED_AMO_GENERIC(FSH_GD_cswap))
#define FSH_GL_finc(x) _Generic((x) FSH_DEPRECATED_AMO_GENERIC(FSH_GD_finc))
#define FSH_GL_inc(x) _Generic((x) FSH_DEPRECATED_AMO_GENERIC(FSH_GD_inc))
#define FSH_GL_fadd(x) _Generic((x) FSH_DEPRECATED_AMO_GENERIC(FSH_GD_fadd))
#define FSH_GL_add(x) _Generic((x) FSH_DEPRECATED_AMO_GENERIC(FSH_GD_add))
#define FSH_GL_fetch(x) _Generic((x) FSH_DEPRECATED_EXTAMO_GENERIC(FSH_GD_fetch))
#define FSH_GL_set(x) _Generic((x) FSH_DEPRECATED_EXTAMO_GENERIC(FSH_GD_set))
#define FSH_GL_swap(x) _Generic((x) FSH_DEPRECATED_EXTAMO_GENERIC(FSH_GD_swap))
/* flat-header: end */
#define FSH_GDEP(OP, d, ...) FSH_GL_##OP(d)(d, __VA_ARGS__)

#define shmem_cswap(...) FSH_GDEP(cswap, __VA_ARGS__)
#define shmem_finc(...) FSH_GDEP(finc, __VA_ARGS__)
#define shmem_inc(...) FSH_GDEP(inc, __VA_ARGS__)
#define shmem_fadd(...) FSH_GDEP(fadd, __VA_ARGS__)
#define shmem_add(...) FSH_GDEP(add, __VA_ARGS__)
#define shmem_fetch(...) FSH_GDEP(fetch, __VA_ARGS__)
#define shmem_set(...) FSH_GDEP(set, __VA_ARGS__)
#define shmem_swap(...) FSH_GDEP(swap, __VA_ARGS__)

/* shmem_sync(team) is shmem_team_sync (the C11 form of OpenSHMEM 1.5); the deprecated
 * active-set shmem_sync(PE_start, logPE_stride, PE_size, pSync) keeps its meaning, told apart
 * by argument count. Any count but 4 goes to shmem_team_sync, whose prototype then refuses
 * what is not one team. */
#define FSH_SYNC_T(...) shmem_team_sync(__VA_ARGS__)
#define FSH_SYNC_4(...) (shmem_sync)(__VA_ARGS__)
#define shmem_sync(...)                                                                          \
    FSH_CAT(FSH_SYNC_, FSH_NARG_(__VA_ARGS__, T, T, T, T, T, 4, T, T, T, T))(__VA_ARGS__)

#endif /* C11 generic selection */


#ifdef __cplusplus
}

/* ------------------------------------------------------------------ C++ overloads */
/* What the C11 generics are to C, inline overloads of the same names are to C++:
 * shmem_put(dest, source, nelems, pe) and shmem_put(ctx, dest, source, nelems, pe) resolve, by
 * the type of the pointer the routine is typed by (as in C: dest, source, fetch or ivars), to
 * the typed C routine of that type, over every type of the routine's spec table. They are
 * written from the type table's rows and columns, like the prototypes above; a type of no row
 * has no overload, so the call does not compile.
 *
 * The GENERIC column plays the part it plays in C. The distinct standard types (1) get plain
 * overloads. An exact-width typedef (W) usually names one of them, and an overload of its own
 * would then be a second definition, so each is a template enabled for exactly that type, and
 * only when the routine's table holds no standard type of the same identity: int32_t * selects
 * the int overload of shmem_put, and the int32 routine of shmem_atomic_and, whose table has no
 * int. size_t and ptrdiff_t (0) are standard types of every table that holds them.
 *
 * Each overload is one call of the typed routine; names of operations are only pasted, as in
 * the C section, so a program's macro named like one cannot break them. */
/* flat-header: omit */
/* FSH_CXX_COL_<COL>(K, row): K(IN, GEN, COL, CTYPE, NAME), IN being the row's COL column; used
 * as FSH_TYPE_ROWS(FSH_CXX_COL_<COL>, K). */
#define FSH_CXX_COL_RMA(K, T, N, R, A, E, B, S, RB, RM, RA, G) K(R, G, RMA, T, N)
#define FSH_CXX_COL_AMO(K, T, N, R, A, E, B, S, RB, RM, RA, G) K(A, G, AMO, T, N)
#define FSH_CXX_COL_EXT(K, T, N, R, A, E, B, S, RB, RM, RA, G) K(E, G, EXT, T, N)
#define FSH_CXX_COL_BIT(K, T, N, R, A, E, B, S, RB, RM, RA, G) K(B, G, BIT, T, N)
#define FSH_CXX_COL_SYNC(K, T, N, R, A, E, B, S, RB, RM, RA, G) K(S, G, SYNC, T, N)
#define FSH_CXX_COL_RBIT(K, T, N, R, A, E, B, S, RB, RM, RA, G) K(RB, G, RBIT, T, N)
#define FSH_CXX_COL_RMM(K, T, N, R, A, E, B, S, RB, RM, RA, G) K(RM, G, RMM, T, N)
#define FSH_CXX_COL_RAR(K, T, N, R, A, E, B, S, RB, RM, RA, G) K(RA, G, RAR, T, N)

/* fsh_cxx_std_<COL><T>::value: T is one of the column's standard (GEN 1) types. */
#define FSH_CXX_STD(IN, G, COL, T, N) FSH_CXX_STD_##IN##G(T)
#define FSH_CXX_STD_11(T) || std::is_same<fsh_t, T>::value
#define FSH_CXX_STD_10(T)
#define FSH_CXX_STD_1W(T)
#define FSH_CXX_STD_00(T)
#define FSH_CXX_STD_01(T)
#define FSH_CXX_STD_0W(T)
#define FSH_CXX_TRAIT(COL)                                                                       \
    template <class fsh_t>                                                                       \
    struct fsh_cxx_std_##COL                                                                     \
        : std::integral_constant<bool, false FSH_TYPE_ROWS(FSH_CXX_COL_##COL, FSH_CXX_STD)> {};

/* FSH_CXX_H(G, COL, T): how an overload of row T opens; FSH_CXX_P(G, T): the pointee type of
 * the pointer it is selected by (deduced in a template). D marks the deprecated generics. */
#define FSH_CXX_H(G, COL, T) FSH_CXX_H_##G(COL, T)
#define FSH_CXX_H_1(COL, T) inline
#define FSH_CXX_H_D(COL, T) FSH_DEPRECATED inline
#define FSH_CXX_H_W(COL, T)                                                                      \
    template <class fsh_t, typename std::enable_if<std::is_same<fsh_t, T>::value &&              \
                                                       !fsh_cxx_std_##COL<fsh_t>::value,         \
                                                   int>::type = 0>                               \
    inline
#define FSH_CXX_P(G, T) FSH_CXX_P_##G(T)
#define FSH_CXX_P_1(T) T
#define FSH_CXX_P_D(T) T
#define FSH_CXX_P_W(T) fsh_t
/* One overload: RET NAME PARAMS, returning CALLEE ARGS. */
#define FSH_CXX_FN(G, COL, T, RET, NAME, PARAMS, CALLEE, ARGS)                                   \
    FSH_CXX_H(G, COL, T) RET NAME PARAMS { return CALLEE ARGS; }
/* The ctx argument of the ctx forms, beside FSH_PARAM_##PFX. */
#define FSH_ARG_
#define FSH_ARG_ctx_ ctx,

/* The shapes of the overloads, each for a plain (X empty) or ctx (X ctx_) form of OP. */
#define FSH_CXX_PUT(G, C, T, N, X, OP)                                                           \
    FSH_CXX_FN(G, C, T, void, shmem_##OP,                                                        \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *dest, const T *source, size_t nelems, int pe),    \
               shmem_##X##N##_##OP, (FSH_ARG_##X dest, source, nelems, pe))
#define FSH_CXX_STRIDED(G, C, T, N, X, OP)                                                       \
    FSH_CXX_FN(G, C, T, void, shmem_##OP,                                                        \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *dest, const T *source, ptrdiff_t dst,             \
                ptrdiff_t sst, size_t nelems, int pe),                                           \
               shmem_##X##N##_##OP, (FSH_ARG_##X dest, source, dst, sst, nelems, pe))
#define FSH_CXX_BLOCKED(G, C, T, N, X, OP)                                                       \
    FSH_CXX_FN(G, C, T, void, shmem_##OP,                                                        \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *dest, const T *source, ptrdiff_t dst,             \
                ptrdiff_t sst, size_t bsize, size_t nblocks, int pe),                            \
               shmem_##X##N##_##OP, (FSH_ARG_##X dest, source, dst, sst, bsize, nblocks, pe))
#define FSH_CXX_SIGNAL(G, C, T, N, X, OP)                                                        \
    FSH_CXX_FN(G, C, T, void, shmem_##OP,                                                        \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *dest, const T *source, size_t nelems,             \
                uint64_t *sig_addr, uint64_t signal, int sig_op, int pe),                        \
               shmem_##X##N##_##OP,                                                              \
               (FSH_ARG_##X dest, source, nelems, sig_addr, signal, sig_op, pe))
#define FSH_CXX_RMA_(G, C, T, N, X)                                                              \
    FSH_CXX_PUT(G, C, T, N, X, put) FSH_CXX_PUT(G, C, T, N, X, put_nbi)                          \
    FSH_CXX_PUT(G, C, T, N, X, get) FSH_CXX_PUT(G, C, T, N, X, get_nbi)                          \
    FSH_CXX_FN(G, C, T, void, shmem_p, (FSH_PARAM_##X FSH_CXX_P(G, T) *dest, T value, int pe),   \
               shmem_##X##N##_p, (FSH_ARG_##X dest, value, pe))                                  \
    FSH_CXX_FN(G, C, T, T, shmem_g, (FSH_PARAM_##X const FSH_CXX_P(G, T) *source, int pe),       \
               shmem_##X##N##_g, (FSH_ARG_##X source, pe))                                       \
    FSH_CXX_STRIDED(G, C, T, N, X, iput) FSH_CXX_STRIDED(G, C, T, N, X, iget)                    \
    FSH_CXX_BLOCKED(G, C, T, N, X, ibput) FSH_CXX_BLOCKED(G, C, T, N, X, ibget)                  \
    FSH_CXX_SIGNAL(G, C, T, N, X, put_signal) FSH_CXX_SIGNAL(G, C, T, N, X, put_signal_nbi)
/* Team collectives: the team first, selected on dest. */
#define FSH_CXX_TEAM(G, C, T, N, OP)                                                             \
    FSH_CXX_FN(G, C, T, int, shmem_##OP,                                                         \
               (shmem_team_t team, FSH_CXX_P(G, T) *dest, const T *source, size_t nelems),       \
               shmem_##N##_##OP, (team, dest, source, nelems))
#define FSH_CXX_OPS_RMA(G, C, T, N)                                                              \
    FSH_CXX_RMA_(G, C, T, N, ) FSH_CXX_RMA_(G, C, T, N, ctx_)                                    \
    FSH_CXX_TEAM(G, C, T, N, alltoall) FSH_CXX_TEAM(G, C, T, N, collect)                         \
    FSH_CXX_TEAM(G, C, T, N, fcollect)                                                           \
    FSH_CXX_FN(G, C, T, int, shmem_alltoalls,                                                    \
               (shmem_team_t team, FSH_CXX_P(G, T) *dest, const T *source, ptrdiff_t dst,        \
                ptrdiff_t sst, size_t nelems),                                                   \
               shmem_##N##_alltoalls, (team, dest, source, dst, sst, nelems))                    \
    FSH_CXX_FN(G, C, T, int, shmem_broadcast,                                                    \
               (shmem_team_t team, FSH_CXX_P(G, T) *dest, const T *source, size_t nelems,        \
                int PE_root),                                                                    \
               shmem_##N##_broadcast, (team, dest, source, nelems, PE_root))
#define FSH_CXX_OPS_RBIT(G, C, T, N)                                                             \
    FSH_CXX_TEAM(G, C, T, N, and_reduce) FSH_CXX_TEAM(G, C, T, N, or_reduce)                     \
    FSH_CXX_TEAM(G, C, T, N, xor_reduce)
#define FSH_CXX_OPS_RMM(G, C, T, N)                                                              \
    FSH_CXX_TEAM(G, C, T, N, max_reduce) FSH_CXX_TEAM(G, C, T, N, min_reduce)
#define FSH_CXX_OPS_RAR(G, C, T, N)                                                              \
    FSH_CXX_TEAM(G, C, T, N, sum_reduce) FSH_CXX_TEAM(G, C, T, N, prod_reduce)                   \
    FSH_CXX_TEAM(G, C, T, N, sum_inscan) FSH_CXX_TEAM(G, C, T, N, sum_exscan)

/* Atomics: (dest[, value...], pe) returning R, and the fetching _nbi forms (fetch, dest, ...). */
#define FSH_CXX_AMO0(G, C, T, N, X, R, OP)                                                       \
    FSH_CXX_FN(G, C, T, R, shmem_##OP, (FSH_PARAM_##X FSH_CXX_P(G, T) *dest, int pe),            \
               shmem_##X##N##_##OP, (FSH_ARG_##X dest, pe))
#define FSH_CXX_AMO1(G, C, T, N, X, R, OP)                                                       \
    FSH_CXX_FN(G, C, T, R, shmem_##OP, (FSH_PARAM_##X FSH_CXX_P(G, T) *dest, T value, int pe),   \
               shmem_##X##N##_##OP, (FSH_ARG_##X dest, value, pe))
#define FSH_CXX_NBI0(G, C, T, N, X, OP)                                                          \
    FSH_CXX_FN(G, C, T, void, shmem_##OP,                                                        \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *fetch, T *dest, int pe), shmem_##X##N##_##OP,     \
               (FSH_ARG_##X fetch, dest, pe))
#define FSH_CXX_NBI1(G, C, T, N, X, OP)                                                          \
    FSH_CXX_FN(G, C, T, void, shmem_##OP,                                                        \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *fetch, T *dest, T value, int pe),                 \
               shmem_##X##N##_##OP, (FSH_ARG_##X fetch, dest, value, pe))
#define FSH_CXX_AMO_(G, C, T, N, X)                                                              \
    FSH_CXX_FN(G, C, T, T, shmem_atomic_compare_swap,                                            \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *dest, T cond, T value, int pe),                   \
               shmem_##X##N##_atomic_compare_swap, (FSH_ARG_##X dest, cond, value, pe))          \
    FSH_CXX_AMO0(G, C, T, N, X, T, atomic_fetch_inc) FSH_CXX_AMO0(G, C, T, N, X, void, atomic_inc) \
    FSH_CXX_AMO1(G, C, T, N, X, T, atomic_fetch_add) FSH_CXX_AMO1(G, C, T, N, X, void, atomic_add) \
    FSH_CXX_FN(G, C, T, void, shmem_atomic_compare_swap_nbi,                                     \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *fetch, T *dest, T cond, T value, int pe),         \
               shmem_##X##N##_atomic_compare_swap_nbi,                                           \
               (FSH_ARG_##X fetch, dest, cond, value, pe))                                       \
    FSH_CXX_NBI0(G, C, T, N, X, atomic_fetch_inc_nbi)                                            \
    FSH_CXX_NBI1(G, C, T, N, X, atomic_fetch_add_nbi)
#define FSH_CXX_OPS_AMO(G, C, T, N) FSH_CXX_AMO_(G, C, T, N, ) FSH_CXX_AMO_(G, C, T, N, ctx_)
/* atomic_fetch and atomic_fetch_nbi read through const T *source. */
#define FSH_CXX_EXT_(G, C, T, N, X)                                                              \
    FSH_CXX_FN(G, C, T, T, shmem_atomic_fetch,                                                   \
               (FSH_PARAM_##X const FSH_CXX_P(G, T) *source, int pe), shmem_##X##N##_atomic_fetch, \
               (FSH_ARG_##X source, pe))                                                         \
    FSH_CXX_AMO1(G, C, T, N, X, void, atomic_set) FSH_CXX_AMO1(G, C, T, N, X, T, atomic_swap)   \
    FSH_CXX_FN(G, C, T, void, shmem_atomic_fetch_nbi,                                            \
               (FSH_PARAM_##X FSH_CXX_P(G, T) *fetch, const T *source, int pe),                  \
               shmem_##X##N##_atomic_fetch_nbi, (FSH_ARG_##X fetch, source, pe))                 \
    FSH_CXX_NBI1(G, C, T, N, X, atomic_swap_nbi)
#define FSH_CXX_OPS_EXT(G, C, T, N) FSH_CXX_EXT_(G, C, T, N, ) FSH_CXX_EXT_(G, C, T, N, ctx_)
#define FSH_CXX_BIT_(G, C, T, N, X)                                                              \
    FSH_CXX_AMO1(G, C, T, N, X, T, atomic_fetch_and) FSH_CXX_AMO1(G, C, T, N, X, void, atomic_and) \
    FSH_CXX_NBI1(G, C, T, N, X, atomic_fetch_and_nbi)                                            \
    FSH_CXX_AMO1(G, C, T, N, X, T, atomic_fetch_or) FSH_CXX_AMO1(G, C, T, N, X, void, atomic_or)   \
    FSH_CXX_NBI1(G, C, T, N, X, atomic_fetch_or_nbi)                                             \
    FSH_CXX_AMO1(G, C, T, N, X, T, atomic_fetch_xor) FSH_CXX_AMO1(G, C, T, N, X, void, atomic_xor) \
    FSH_CXX_NBI1(G, C, T, N, X, atomic_fetch_xor_nbi)
#define FSH_CXX_OPS_BIT(G, C, T, N) FSH_CXX_BIT_(G, C, T, N, ) FSH_CXX_BIT_(G, C, T, N, ctx_)

/* Point-to-point synchronization (no ctx forms): on an array of ivars, against one cmp_value
 * (V = T) or a vector of them (V = T *). */
#define FSH_CXX_WAIT(G, C, T, N, R, OP, V)                                                       \
    FSH_CXX_FN(G, C, T, R, shmem_##OP,                                                           \
               (FSH_CXX_P(G, T) *ivars, size_t nelems, const int *status, int cmp, V cmp_value), \
               shmem_##N##_##OP, (ivars, nelems, status, cmp, cmp_value))
#define FSH_CXX_SOME(G, C, T, N, OP, V)                                                          \
    FSH_CXX_FN(G, C, T, size_t, shmem_##OP,                                                      \
               (FSH_CXX_P(G, T) *ivars, size_t nelems, size_t *indices, const int *status,       \
                int cmp, V cmp_value),                                                           \
               shmem_##N##_##OP, (ivars, nelems, indices, status, cmp, cmp_value))
#define FSH_CXX_SYNC_(G, C, T, N, RA, OP, SFX, V)                                                \
    FSH_CXX_WAIT(G, C, T, N, RA, OP##_all##SFX, V)                                               \
    FSH_CXX_WAIT(G, C, T, N, size_t, OP##_any##SFX, V) FSH_CXX_SOME(G, C, T, N, OP##_some##SFX, V)
#define FSH_CXX_OPS_SYNC(G, C, T, N)                                                             \
    FSH_CXX_FN(G, C, T, void, shmem_wait_until,                                                  \
               (FSH_CXX_P(G, T) *ivar, int cmp, T cmp_value), shmem_##N##_wait_until,            \
               (ivar, cmp, cmp_value))                                                           \
    FSH_CXX_FN(G, C, T, int, shmem_test, (FSH_CXX_P(G, T) *ivar, int cmp, T cmp_value),          \
               shmem_##N##_test, (ivar, cmp, cmp_value))                                         \
    FSH_CXX_SYNC_(G, C, T, N, void, wait_until, , T)                                             \
    FSH_CXX_SYNC_(G, C, T, N, void, wait_until, _vector, T *)                                    \
    FSH_CXX_SYNC_(G, C, T, N, int, test, , T) FSH_CXX_SYNC_(G, C, T, N, int, test, _vector, T *)

/* Every row's overloads, column by column: rows of GEN 1 and W whose column is 1. */
#define FSH_CXX_OVL(IN, G, COL, T, N) FSH_CXX_OVL_##IN##G(G, COL, T, N)
#define FSH_CXX_OVL_11(G, COL, T, N) FSH_CXX_OPS_##COL(G, COL, T, N)
#define FSH_CXX_OVL_1W(G, COL, T, N) FSH_CXX_OPS_##COL(G, COL, T, N)
#define FSH_CXX_OVL_10(G, COL, T, N)
#define FSH_CXX_OVL_00(G, COL, T, N)
#define FSH_CXX_OVL_01(G, COL, T, N)
#define FSH_CXX_OVL_0W(G, COL, T, N)
/* flat-header: end */
/* fsh_cxx_std_<COL><T>::value: T is one of the standard (GEN 1) types of the column's spec
 * table; an exact-width overload (a template) is enabled only where it is false. */
/* flat-header: expand */
FSH_CXX_TRAIT(RMA)
FSH_CXX_TRAIT(AMO)
FSH_CXX_TRAIT(EXT)
FSH_CXX_TRAIT(BIT)
FSH_CXX_TRAIT(SYNC)
FSH_CXX_TRAIT(RBIT)
FSH_CXX_TRAIT(RMM)
FSH_CXX_TRAIT(RAR)
/* flat-header: end */

/* The overloads, table by table: RMA and collectives, AMO, extended AMO, bitwise AMO,
 * point-to-point synchronization, then the reductions (bitwise, min/max, arithmetic). */
/* flat-header: expand */
FSH_TYPE_ROWS(FSH_CXX_COL_RMA, FSH_CXX_OVL)
FSH_TYPE_ROWS(FSH_CXX_COL_AMO, FSH_CXX_OVL)
FSH_TYPE_ROWS(FSH_CXX_COL_EXT, FSH_CXX_OVL)
FSH_TYPE_ROWS(FSH_CXX_COL_BIT, FSH_CXX_OVL)
FSH_TYPE_ROWS(FSH_CXX_COL_SYNC, FSH_CXX_OVL)
FSH_TYPE_ROWS(FSH_CXX_COL_RBIT, FSH_CXX_OVL)
FSH_TYPE_ROWS(FSH_CXX_COL_RMM, FSH_CXX_OVL)
FSH_TYPE_ROWS(FSH_CXX_COL_RAR, FSH_CXX_OVL)
/* flat-header: end */

/* shmem_sync(team) is shmem_team_sync; the deprecated active-set shmem_sync(PE_start,
 * logPE_stride, PE_size, pSync) above is the other overload. */
inline int shmem_sync(shmem_team_t team)
{
    return shmem_team_sync(team);
}

/* The complex routines also take C's complex types where the C++ compiler has them (g++ and
 * clang++, as an extension: __complex__ float is float _Complex): Sandia OpenSHMEM declares
 * these routines with them in C++ too, so programs written for it pass them. Same layout as
 * std::complex<T>, so each overload is the std::complex routine, and the generic names
 * (shmem_sum_reduce, ...) select them like the std::complex ones. */
#if defined(__GNUC__)
/* flat-header: omit */
#define FSH_CXX_GNU_TEAM(T, S, N, OP)                                                            \
    inline int shmem_##N##_##OP(shmem_team_t team, T *dest, const T *source, size_t nelems)      \
    {                                                                                            \
        return shmem_##N##_##OP(team, reinterpret_cast<S *>(dest),                               \
                                reinterpret_cast<const S *>(source), nelems);                    \
    }                                                                                            \
    inline int shmem_##OP(shmem_team_t team, T *dest, const T *source, size_t nelems)            \
    {                                                                                            \
        return shmem_##N##_##OP(team, dest, source, nelems);                                     \
    }
#define FSH_CXX_GNU_TO_ALL(T, S, N, OP)                                                          \
    FSH_DEPRECATED inline void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce,  \
                                                         int PE_start, int logPE_stride,         \
                                                         int PE_size, T *pWrk, long *pSync)      \
    {                                                                                            \
        shmem_##N##_##OP##_to_all(reinterpret_cast<S *>(dest),                                   \
                                  reinterpret_cast<const S *>(source), nreduce, PE_start,        \
                                  logPE_stride, PE_size, reinterpret_cast<S *>(pWrk), pSync);    \
    }
#define FSH_CXX_GNU_COMPLEX(T, S, N)                                                             \
    FSH_CXX_GNU_TEAM(T, S, N, sum_reduce) FSH_CXX_GNU_TEAM(T, S, N, prod_reduce)                 \
    FSH_CXX_GNU_TEAM(T, S, N, sum_inscan) FSH_CXX_GNU_TEAM(T, S, N, sum_exscan)                  \
    FSH_CXX_GNU_TO_ALL(T, S, N, sum) FSH_CXX_GNU_TO_ALL(T, S, N, prod)
/* flat-header: end */
/* __extension__: no -pedantic warning in programs that include this header. */
__extension__ typedef __complex__ double fsh_cxx_gnu_complexd;
__extension__ typedef __complex__ float fsh_cxx_gnu_complexf;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* flat-header: expand */
FSH_CXX_GNU_COMPLEX(fsh_cxx_gnu_complexd, std::complex<double>, complexd)
FSH_CXX_GNU_COMPLEX(fsh_cxx_gnu_complexf, std::complex<float>, complexf)
/* flat-header: end */
#pragma GCC diagnostic pop
#endif

/* The deprecated generic AMOs over the distinct standard types of their tables, deprecated
 * themselves, so a program is warned where it calls one and not where this header defines it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/* flat-header: omit */
#define FSH_CXX_DEP_AMO(T, N)                                                                    \
    FSH_CXX_FN(D, , T, T, shmem_cswap, (T *dest, T cond, T value, int pe), shmem_##N##_cswap,    \
               (dest, cond, value, pe))                                                          \
    FSH_CXX_AMO0(D, , T, N, , T, finc) FSH_CXX_AMO0(D, , T, N, , void, inc)                      \
    FSH_CXX_AMO1(D, , T, N, , T, fadd) FSH_CXX_AMO1(D, , T, N, , void, add)
#define FSH_CXX_DEP_EXTAMO(T, N)                                                                 \
    FSH_CXX_FN(D, , T, T, shmem_fetch, (const T *source, int pe), shmem_##N##_fetch,             \
               (source, pe))                                                                     \
    FSH_CXX_AMO1(D, , T, N, , void, set) FSH_CXX_AMO1(D, , T, N, , T, swap)
/* flat-header: end */
/* flat-header: expand */
FSH_DEPRECATED_AMO_GENERIC(FSH_CXX_DEP_AMO)
FSH_DEPRECATED_EXTAMO_GENERIC(FSH_CXX_DEP_EXTAMO)
/* flat-header: end */
#pragma GCC diagnostic pop
#endif /* __cplusplus */

#endif /* FABSHMEM_SHMEM_H */
