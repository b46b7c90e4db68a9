/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_typed_coll.c: the typed team collectives, reductions and all-to-allv, and the
 * deprecated active-set reductions.
 *
 * Expanded from FSH_TYPE_TABLE (and the 1.4 reduction type lists) in shmem_table.h, like
 * api_typed.c: each body is one call into api_coll.c with the element size and, for
 * reductions, the type's and operation's enum (collectives/coll.h). No logic lives here.
 */
#include <shmem.h>
#include <shmemx.h>
#include <shmem_table.h>

#include "api.h"
#include "coll.h"

#define FSH_DEF_COLL(CTYPE, NAME)                                                                \
    FSH_PROFILED(shmem_##NAME##_alltoall)                                                        \
    int pshmem_##NAME##_alltoall(shmem_team_t team, CTYPE *dest, const CTYPE *source,            \
                                size_t nelems)                                                   \
    {                                                                                            \
        return fsh_api_alltoall(FSH_FN, team, dest, source, nelems, sizeof(CTYPE));              \
    }                                                                                            \
    FSH_PROFILED(shmem_##NAME##_alltoalls)                                                       \
    int pshmem_##NAME##_alltoalls(shmem_team_t team, CTYPE *dest, const CTYPE *source,           \
                                 ptrdiff_t dst, ptrdiff_t sst, size_t nelems)                    \
    {                                                                                            \
        return fsh_api_alltoalls(FSH_FN, team, dest, source, dst, sst, nelems, sizeof(CTYPE));   \
    }                                                                                            \
    FSH_PROFILED(shmem_##NAME##_broadcast)                                                       \
    int pshmem_##NAME##_broadcast(shmem_team_t team, CTYPE *dest, const CTYPE *source,           \
                                 size_t nelems, int PE_root)                                     \
    {                                                                                            \
        return fsh_api_broadcast(FSH_FN, team, dest, source, nelems, PE_root, sizeof(CTYPE));    \
    }                                                                                            \
    FSH_PROFILED(shmem_##NAME##_collect)                                                         \
    int pshmem_##NAME##_collect(shmem_team_t team, CTYPE *dest, const CTYPE *source,             \
                               size_t nelems)                                                    \
    {                                                                                            \
        return fsh_api_collect(FSH_FN, team, dest, source, nelems, sizeof(CTYPE), 0);            \
    }                                                                                            \
    FSH_PROFILED(shmem_##NAME##_fcollect)                                                        \
    int pshmem_##NAME##_fcollect(shmem_team_t team, CTYPE *dest, const CTYPE *source,            \
                                size_t nelems)                                                   \
    {                                                                                            \
        return fsh_api_collect(FSH_FN, team, dest, source, nelems, sizeof(CTYPE), 1);            \
    }                                                                                            \
    int shmemx_##NAME##_alltoallv(shmem_team_t team, CTYPE *dest, size_t dest_nelems,            \
                                  const CTYPE *source, const size_t *send_counts,                \
                                  const size_t *send_displs, size_t *recv_counts,                \
                                  size_t *recv_displs)                                           \
    {                                                                                            \
        return fsh_api_alltoallv(__func__, team, dest, dest_nelems, source, send_counts,         \
                                 send_displs, recv_counts, recv_displs, sizeof(CTYPE));          \
    }
#define FSH_DEF_COLL_ROW(CTYPE, NAME, RMA, ...) FSH_IF(RMA, FSH_DEF_COLL(CTYPE, NAME))
FSH_TYPE_TABLE(FSH_DEF_COLL_ROW)

/* shmem_<NAME>_<FN>: the reductions (FN op_reduce) and the 1.6 scans (sum_inscan/exscan). */
#define FSH_DEF_REDUCE(CTYPE, NAME, FN, ENUM)                                                    \
    FSH_PROFILED(shmem_##NAME##_##FN)                                                            \
    int pshmem_##NAME##_##FN(shmem_team_t team, CTYPE *dest, const CTYPE *source,                \
                            size_t nreduce)                                                      \
    {                                                                                            \
        return fsh_api_reduce(FSH_FN, team, dest, source, nreduce, sizeof(CTYPE),                \
                              FSH_RTYPE_##NAME, ENUM);                                           \
    }
#define FSH_DEF_REDUCE_ROW(CTYPE, NAME, R, A, E, B, S, RBIT, RMM, RAR, GEN)                      \
    FSH_IF(RBIT, FSH_DEF_REDUCE(CTYPE, NAME, and_reduce, FSH_RED_AND)                            \
                     FSH_DEF_REDUCE(CTYPE, NAME, or_reduce, FSH_RED_OR)                          \
                         FSH_DEF_REDUCE(CTYPE, NAME, xor_reduce, FSH_RED_XOR))                   \
    FSH_IF(RMM, FSH_DEF_REDUCE(CTYPE, NAME, max_reduce, FSH_RED_MAX)                             \
                    FSH_DEF_REDUCE(CTYPE, NAME, min_reduce, FSH_RED_MIN))                        \
    FSH_IF(RAR, FSH_DEF_REDUCE(CTYPE, NAME, sum_reduce, FSH_RED_SUM)                             \
                    FSH_DEF_REDUCE(CTYPE, NAME, prod_reduce, FSH_RED_PROD)                       \
                        FSH_DEF_REDUCE(CTYPE, NAME, sum_inscan, FSH_RED_INSCAN)                  \
                            FSH_DEF_REDUCE(CTYPE, NAME, sum_exscan, FSH_RED_EXSCAN))
FSH_TYPE_TABLE(FSH_DEF_REDUCE_ROW)

#define FSH_DEF_TO_ALL(CTYPE, NAME, OP, ENUM)                                                    \
    FSH_PROFILED(shmem_##NAME##_##OP##_to_all)                                                   \
    void pshmem_##NAME##_##OP##_to_all(CTYPE *dest, const CTYPE *source, int nreduce,            \
                                      int PE_start, int logPE_stride, int PE_size, CTYPE *pWrk,  \
                                      long *pSync)                                               \
    {                                                                                            \
        (void)pWrk;                                                                              \
        (void)pSync;                                                                             \
        fsh_api_to_all(FSH_FN, dest, source, nreduce, PE_start, logPE_stride, PE_size,           \
                       sizeof(CTYPE), FSH_RTYPE_##NAME, ENUM);                                   \
    }
#define FSH_DEF_TO_ALL_BIT(CTYPE, NAME)                                                          \
    FSH_DEF_TO_ALL(CTYPE, NAME, and, FSH_RED_AND)                                                \
    FSH_DEF_TO_ALL(CTYPE, NAME, or, FSH_RED_OR) FSH_DEF_TO_ALL(CTYPE, NAME, xor, FSH_RED_XOR)
#define FSH_DEF_TO_ALL_MINMAX(CTYPE, NAME)                                                       \
    FSH_DEF_TO_ALL(CTYPE, NAME, max, FSH_RED_MAX) FSH_DEF_TO_ALL(CTYPE, NAME, min, FSH_RED_MIN)
#define FSH_DEF_TO_ALL_ARITH(CTYPE, NAME)                                                        \
    FSH_DEF_TO_ALL(CTYPE, NAME, sum, FSH_RED_SUM) FSH_DEF_TO_ALL(CTYPE, NAME, prod, FSH_RED_PROD)
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_DEF_TO_ALL_BIT)
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_DEF_TO_ALL_MINMAX)
FSH_DEPRECATED_REDUCE_FLOAT_TYPES(FSH_DEF_TO_ALL_MINMAX)
FSH_DEPRECATED_REDUCE_INT_TYPES(FSH_DEF_TO_ALL_ARITH)
FSH_DEPRECATED_REDUCE_FLOAT_TYPES(FSH_DEF_TO_ALL_ARITH)
FSH_DEF_TO_ALL_ARITH(double _Complex, complexd)
FSH_DEF_TO_ALL_ARITH(float _Complex, complexf)
