/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pshmem.h: the OpenSHMEM profiling interface: a pshmem_ name for every routine of shmem.h.
 *
 * libfabshmem defines each routine as pshmem_<name> and exports shmem_<name> as a weak alias of
 * it. A tool (a library linked before libfabshmem, or LD_PRELOADed) that defines shmem_putmem
 * therefore receives the program's calls, and reaches the implementation through
 * pshmem_putmem; the library never calls its own shmem_ names, so a tool sees only the
 * program's calls. The deprecated routines without the shmem_ prefix take a plain p
 * (pstart_pes, p_my_pe, pshmalloc, ...). The C11 generics are macros and have no pshmem_ form
 * (spec); shmemx_ extensions have none either. shmem_pcontrol is a no-op for a tool to define.
 *
 * Every declaration takes its type from the shmem_ routine's (__typeof__), so the two can never
 * differ; the typed names follow the type table (include/shmem_table.h), like the shmem_
 * declarations themselves: expanded from it in the table form of this header
 * (include/table/pshmem.h), written out one by one in the installed pshmem.h.
 */
#ifndef FABSHMEM_PSHMEM_H
#define FABSHMEM_PSHMEM_H

#include "shmem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Taking the type of a deprecated routine is no use of it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* flat-header: omit */
#define FSH_PDECL(name) FSH_API __typeof__(name) p##name;
/* flat-header: end */

/* ------------------------------------------------------------------ routines written out */
/* flat-header: expand */
FSH_PDECL(shmem_init) FSH_PDECL(shmem_init_thread) FSH_PDECL(shmem_query_thread)
FSH_PDECL(shmem_query_initialized) FSH_PDECL(shmem_finalize) FSH_PDECL(shmem_global_exit)
FSH_PDECL(shmem_my_pe) FSH_PDECL(shmem_n_pes) FSH_PDECL(shmem_pe_accessible)
FSH_PDECL(shmem_addr_accessible) FSH_PDECL(shmem_ptr) FSH_PDECL(shmem_info_get_version)
FSH_PDECL(shmem_info_get_name) FSH_PDECL(shmem_pcontrol)
FSH_PDECL(shmem_malloc) FSH_PDECL(shmem_calloc) FSH_PDECL(shmem_align) FSH_PDECL(shmem_realloc)
FSH_PDECL(shmem_malloc_with_hints) FSH_PDECL(shmem_free)
FSH_PDECL(shmem_putmem) FSH_PDECL(shmem_getmem) FSH_PDECL(shmem_putmem_nbi)
FSH_PDECL(shmem_getmem_nbi) FSH_PDECL(shmem_ctx_putmem) FSH_PDECL(shmem_ctx_getmem)
FSH_PDECL(shmem_ctx_putmem_nbi) FSH_PDECL(shmem_ctx_getmem_nbi)
FSH_PDECL(shmem_quiet) FSH_PDECL(shmem_fence) FSH_PDECL(shmem_ctx_quiet) FSH_PDECL(shmem_ctx_fence)
FSH_PDECL(shmem_pe_quiet) FSH_PDECL(shmem_ctx_pe_quiet)
FSH_PDECL(shmem_ctx_create) FSH_PDECL(shmem_ctx_destroy) FSH_PDECL(shmem_ctx_get_team)
FSH_PDECL(shmem_ctx_session_start) FSH_PDECL(shmem_ctx_session_stop)
FSH_PDECL(shmem_signal_fetch) FSH_PDECL(shmem_signal_wait_until) FSH_PDECL(shmem_signal_add)
FSH_PDECL(shmem_signal_set) FSH_PDECL(shmem_ctx_signal_add) FSH_PDECL(shmem_ctx_signal_set)
FSH_PDECL(shmem_set_lock) FSH_PDECL(shmem_clear_lock) FSH_PDECL(shmem_test_lock)
FSH_PDECL(shmem_barrier_all) FSH_PDECL(shmem_sync_all) FSH_PDECL(shmem_team_sync)
FSH_PDECL(shmem_team_my_pe) FSH_PDECL(shmem_team_n_pes) FSH_PDECL(shmem_team_get_config)
FSH_PDECL(shmem_team_translate_pe) FSH_PDECL(shmem_team_split_strided)
FSH_PDECL(shmem_team_split_2d) FSH_PDECL(shmem_team_destroy) FSH_PDECL(shmem_team_create_ctx)
FSH_PDECL(shmem_team_ptr)
FSH_PDECL(shmem_alltoallmem) FSH_PDECL(shmem_alltoallsmem) FSH_PDECL(shmem_broadcastmem)
FSH_PDECL(shmem_collectmem) FSH_PDECL(shmem_fcollectmem)
/* flat-header: end */
/* deprecated */
/* flat-header: expand */
FSH_PDECL(shmem_barrier) FSH_PDECL(start_pes) FSH_PDECL(_my_pe)
FSH_PDECL(_num_pes) FSH_PDECL(shmalloc) FSH_PDECL(shfree) FSH_PDECL(shrealloc)
FSH_PDECL(shmemalign) FSH_PDECL(shmem_clear_cache_inv) FSH_PDECL(shmem_set_cache_inv)
FSH_PDECL(shmem_clear_cache_line_inv) FSH_PDECL(shmem_set_cache_line_inv)
FSH_PDECL(shmem_udcflush) FSH_PDECL(shmem_udcflush_line) FSH_PDECL(shmem_wait)
/* flat-header: end */
#ifdef __cplusplus
/* In C++ these names are overload sets (shmem.h's generic overloads), which __typeof__ cannot
 * name, so the C routines' prototypes are written out. */
FSH_API void pshmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
FSH_API long pshmem_swap(long *target, long value, int pe);
FSH_API void pshmem_wait_until(long *ivar, int cmp, long cmp_value);
#else
/* flat-header: expand */
FSH_PDECL(shmem_sync) FSH_PDECL(shmem_swap) FSH_PDECL(shmem_wait_until)
/* flat-header: end */
#endif
/* flat-header: omit */
#define FSH_PDECL_ASET_COLL(BITS)                                                                \
    FSH_PDECL(shmem_alltoall##BITS) FSH_PDECL(shmem_alltoalls##BITS)                             \
    FSH_PDECL(shmem_broadcast##BITS) FSH_PDECL(shmem_collect##BITS)                              \
    FSH_PDECL(shmem_fcollect##BITS)
/* flat-header: end */
/* flat-header: expand */
FSH_PDECL_ASET_COLL(32)
FSH_PDECL_ASET_COLL(64)
/* flat-header: end */

/* ------------------------------------------------------------------ typed (generated) */
/* flat-header: omit */
/* PFX is empty for the plain form and ctx_ for the ctx form, as in shmem.h. */
#define FSH_PDECL_RMA(N, PFX)                                                                    \
    FSH_PDECL(shmem_##PFX##N##_put) FSH_PDECL(shmem_##PFX##N##_put_nbi)                          \
    FSH_PDECL(shmem_##PFX##N##_get) FSH_PDECL(shmem_##PFX##N##_get_nbi)                          \
    FSH_PDECL(shmem_##PFX##N##_p) FSH_PDECL(shmem_##PFX##N##_g)                                  \
    FSH_PDECL(shmem_##PFX##N##_iput) FSH_PDECL(shmem_##PFX##N##_iget)                            \
    FSH_PDECL(shmem_##PFX##N##_ibput) FSH_PDECL(shmem_##PFX##N##_ibget)                          \
    FSH_PDECL(shmem_##PFX##N##_put_signal) FSH_PDECL(shmem_##PFX##N##_put_signal_nbi)
#define FSH_PDECL_COLL(N)                                                                        \
    FSH_PDECL(shmem_##N##_alltoall) FSH_PDECL(shmem_##N##_alltoalls)                             \
    FSH_PDECL(shmem_##N##_broadcast) FSH_PDECL(shmem_##N##_collect)                              \
    FSH_PDECL(shmem_##N##_fcollect)
#define FSH_PDECL_AMO(N, PFX)                                                                    \
    FSH_PDECL(shmem_##PFX##N##_atomic_compare_swap) FSH_PDECL(shmem_##PFX##N##_atomic_fetch_inc) \
    FSH_PDECL(shmem_##PFX##N##_atomic_inc) FSH_PDECL(shmem_##PFX##N##_atomic_fetch_add)          \
    FSH_PDECL(shmem_##PFX##N##_atomic_add)                                                       \
    FSH_PDECL(shmem_##PFX##N##_atomic_compare_swap_nbi)                                          \
    FSH_PDECL(shmem_##PFX##N##_atomic_fetch_inc_nbi)                                             \
    FSH_PDECL(shmem_##PFX##N##_atomic_fetch_add_nbi)
#define FSH_PDECL_EXTAMO(N, PFX)                                                                 \
    FSH_PDECL(shmem_##PFX##N##_atomic_fetch) FSH_PDECL(shmem_##PFX##N##_atomic_set)              \
    FSH_PDECL(shmem_##PFX##N##_atomic_swap) FSH_PDECL(shmem_##PFX##N##_atomic_fetch_nbi)         \
    FSH_PDECL(shmem_##PFX##N##_atomic_swap_nbi)
#define FSH_PDECL_BITOP(N, PFX, OP)                                                              \
    FSH_PDECL(shmem_##PFX##N##_atomic_fetch_##OP) FSH_PDECL(shmem_##PFX##N##_atomic_##OP)        \
    FSH_PDECL(shmem_##PFX##N##_atomic_fetch_##OP##_nbi)
#define FSH_PDECL_BITAMO(N, PFX)                                                                 \
    FSH_PDECL_BITOP(N, PFX, and) FSH_PDECL_BITOP(N, PFX, or) FSH_PDECL_BITOP(N, PFX, xor)
#define FSH_PDECL_SYNC(N)                                                                        \
    FSH_PDECL(shmem_##N##_wait_until) FSH_PDECL(shmem_##N##_wait_until_all)                      \
    FSH_PDECL(shmem_##N##_wait_until_any) FSH_PDECL(shmem_##N##_wait_until_some)                 \
    FSH_PDECL(shmem_##N##_wait_until_all_vector) FSH_PDECL(shmem_##N##_wait_until_any_vector)    \
    FSH_PDECL(shmem_##N##_wait_until_some_vector) FSH_PDECL(shmem_##N##_test)                    \
    FSH_PDECL(shmem_##N##_test_all) FSH_PDECL(shmem_##N##_test_any)                              \
    FSH_PDECL(shmem_##N##_test_some) FSH_PDECL(shmem_##N##_test_all_vector)                      \
    FSH_PDECL(shmem_##N##_test_any_vector) FSH_PDECL(shmem_##N##_test_some_vector)
/* The sum/prod reductions and scans are written out: in C++ the complex ones are overload sets
 * (shmem.h's overloads for C's complex types), which __typeof__ cannot name. */
#define FSH_PDECL_RAR(T, N, OP)                                                                  \
    FSH_API int pshmem_##N##_##OP(shmem_team_t team, T *dest, const T *source, size_t nelems);
#define FSH_PDECL_ROW(T, N, RMA, AMO, EXT, BIT, SYNC, RBIT, RMM, RAR, GEN)                       \
    FSH_IF(RMA, FSH_PDECL_RMA(N, ) FSH_PDECL_RMA(N, ctx_) FSH_PDECL_COLL(N))                     \
    FSH_IF(AMO, FSH_PDECL_AMO(N, ) FSH_PDECL_AMO(N, ctx_))                                       \
    FSH_IF(EXT, FSH_PDECL_EXTAMO(N, ) FSH_PDECL_EXTAMO(N, ctx_))                                 \
    FSH_IF(BIT, FSH_PDECL_BITAMO(N, ) FSH_PDECL_BITAMO(N, ctx_))                                 \
    FSH_IF(SYNC, FSH_PDECL_SYNC(N))                                                              \
    FSH_IF(RBIT, FSH_PDECL(shmem_##N##_and_reduce) FSH_PDECL(shmem_##N##_or_reduce)              \
                     FSH_PDECL(shmem_##N##_xor_reduce))                                          \
    FSH_IF(RMM, FSH_PDECL(shmem_##N##_max_reduce) FSH_PDECL(shmem_##N##_min_reduce))             \
    FSH_IF(RAR, FSH_PDECL_RAR(T, N, sum_reduce) FSH_PDECL_RAR(T, N, prod_reduce)                 \
                    FSH_PDECL_RAR(T, N, sum_inscan) FSH_PDECL_RAR(T, N, sum_exscan))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_PDECL_ROW)
/* flat-header: end */

/* Sized: the widths of the sized routines, and putmem_signal (the `mem` row of the signal
 * routines). */
/* flat-header: omit */
#define FSH_PDECL_SIZED_(BITS, PFX)                                                              \
    FSH_PDECL(shmem_##PFX##put##BITS) FSH_PDECL(shmem_##PFX##put##BITS##_nbi)                    \
    FSH_PDECL(shmem_##PFX##get##BITS) FSH_PDECL(shmem_##PFX##get##BITS##_nbi)                    \
    FSH_PDECL(shmem_##PFX##iput##BITS) FSH_PDECL(shmem_##PFX##iget##BITS)                        \
    FSH_PDECL(shmem_##PFX##ibput##BITS) FSH_PDECL(shmem_##PFX##ibget##BITS)
#define FSH_PDECL_SIGNAL_(BITS, PFX)                                                             \
    FSH_PDECL(shmem_##PFX##put##BITS##_signal) FSH_PDECL(shmem_##PFX##put##BITS##_signal_nbi)
#define FSH_PDECL_SIZED(BITS, ETYPE)                                                             \
    FSH_PDECL_SIZED_(BITS, ) FSH_PDECL_SIZED_(BITS, ctx_)                                        \
    FSH_PDECL_SIGNAL_(BITS, ) FSH_PDECL_SIGNAL_(BITS, ctx_)
/* flat-header: end */
/* flat-header: expand */
FSH_SIZE_TABLE(FSH_PDECL_SIZED)
FSH_PDECL_SIGNAL_(mem, )
FSH_PDECL_SIGNAL_(mem, ctx_)
/* flat-header: end */

/* Deprecated typed routines, over shmem.h's deprecated type lists. */
/* flat-header: omit */
#define FSH_PDECL_DEP_AMO(T, N)                                                                  \
    FSH_PDECL(shmem_##N##_cswap) FSH_PDECL(shmem_##N##_finc) FSH_PDECL(shmem_##N##_inc)          \
    FSH_PDECL(shmem_##N##_fadd) FSH_PDECL(shmem_##N##_add)
#define FSH_PDECL_DEP_EXTAMO(T, N)                                                               \
    FSH_PDECL(shmem_##N##_fetch) FSH_PDECL(shmem_##N##_set) FSH_PDECL(shmem_##N##_swap)
#define FSH_PDECL_DEP_WAIT(T, N) FSH_PDECL(shmem_##N##_wait)
/* flat-header: end */
/* flat-header: expand */
FSH_DEPRECATED_AMO_TYPES(FSH_PDECL_DEP_AMO)
FSH_DEPRECATED_EXTAMO_TYPES(FSH_PDECL_DEP_EXTAMO)
FSH_DEPRECATED_WAIT_TYPES(FSH_PDECL_DEP_WAIT)
/* flat-header: end */
/* flat-header: omit */
#define FSH_PDECL_TO_ALL(N, OP) FSH_PDECL(shmem_##N##_##OP##_to_all)
#define FSH_PDECL_TO_ALL_BIT(T, N)                                                               \
    FSH_PDECL_TO_ALL(N, and) FSH_PDECL_TO_ALL(N, or) FSH_PDECL_TO_ALL(N, xor)
#define FSH_PDECL_TO_ALL_MINMAX(T, N) FSH_PDECL_TO_ALL(N, max) FSH_PDECL_TO_ALL(N, min)
/* Written out, as the team reductions above. */
#define FSH_PDECL_TO_ALL_T(T, N, OP)                                                             \
    FSH_API void pshmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start, \
                                            int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define FSH_PDECL_TO_ALL_ARITH(T, N) FSH_PDECL_TO_ALL_T(T, N, sum) FSH_PDECL_TO_ALL_T(T, N, prod)
/* flat-header: end */
/* flat-header: expand */
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_PDECL_TO_ALL_BIT)
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_PDECL_TO_ALL_MINMAX)
FSH_DEPRECATED_REDUCE_FLOAT_TYPES(FSH_PDECL_TO_ALL_MINMAX)
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_PDECL_TO_ALL_ARITH)
FSH_DEPRECATED_REDUCE_FLOAT_TYPES(FSH_PDECL_TO_ALL_ARITH)
FSH_PDECL_TO_ALL_ARITH(FSH_COMPLEXD, complexd)
FSH_PDECL_TO_ALL_ARITH(FSH_COMPLEXF, complexf)
/* flat-header: end */

#pragma GCC diagnostic pop

#ifdef __cplusplus
}
#endif

#endif /* FABSHMEM_PSHMEM_H */
