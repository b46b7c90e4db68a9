/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_typed.c: the definitions of the typed and sized RMA routines and of shmem_putmem and its
 * untyped siblings.
 *
 * Everything here is expanded from FSH_TYPE_TABLE and FSH_SIZE_TABLE (shmem_table.h), the same
 * tables that generate the prototypes, so a definition cannot drift from its declaration. Each
 * body is exactly one call into the type-erased routines of api.h with a byte count or element
 * size; argument checks, error messages and the transfer itself live there, in ordinary
 * debuggable C. This file never checks arguments, never touches the fabric and holds no state.
 * The `fn` passed down is FSH_FN, so error messages name the routine the user called.
 */
#include <stdint.h>

#include <shmem.h>
#include <shmem_table.h>

#include "api.h"

/* CTX_OF_##PFX: the context of the plain (PFX empty) or ctx_ form of a routine. */
#define CTX_OF_ SHMEM_CTX_DEFAULT
#define CTX_OF_ctx_ ctx

/* ------------------------------------------------------------------ untyped RMA */
/* shmem_putmem/getmem, with NBI 1 their _nbi forms (SFX _nbi), plain or ctx_ (PFX). */
#define DEF_MEM(PFX, SFX, NBI)                                                                   \
    FSH_PROFILED(shmem_##PFX##putmem##SFX)                                                       \
    void pshmem_##PFX##putmem##SFX(FSH_PARAM_##PFX void *dest, const void *source,               \
                                   size_t nelems, int pe)                                        \
    {                                                                                            \
        fsh_api_put(FSH_FN, CTX_OF_##PFX, dest, source, nelems, pe, NBI);                        \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##getmem##SFX)                                                       \
    void pshmem_##PFX##getmem##SFX(FSH_PARAM_##PFX void *dest, const void *source,               \
                                   size_t nelems, int pe)                                        \
    {                                                                                            \
        fsh_api_get(FSH_FN, CTX_OF_##PFX, dest, source, nelems, pe, NBI);                        \
    }
DEF_MEM(, , 0)
DEF_MEM(, _nbi, 1)
DEF_MEM(ctx_, , 0)
DEF_MEM(ctx_, _nbi, 1)

/* ------------------------------------------------------------------ typed RMA */
/* OpenSHMEM 1.6 blocked strided put and get, typed and sized alike: PUT and GET are the
 * routines' names, T the pointers' target type (void for the sized ones), ESIZE the element
 * size; PFX is empty (plain form) or ctx_, whose FSH_PARAM_ctx_ (shmem_table.h) opens the
 * parameter list with the context. */
#define DEF_BLOCKED(PUT, GET, T, ESIZE, PFX)                                                     \
    FSH_PROFILED(PUT)                                                                            \
    void FSH_P(PUT)(FSH_PARAM_##PFX T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,      \
                    size_t bsize, size_t nblocks, int pe)                                        \
    {                                                                                            \
        fsh_api_ibput(FSH_FN, CTX_OF_##PFX, dest, source, dst, sst, bsize, nblocks, ESIZE, pe);  \
    }                                                                                            \
    FSH_PROFILED(GET)                                                                            \
    void FSH_P(GET)(FSH_PARAM_##PFX T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,      \
                    size_t bsize, size_t nblocks, int pe)                                        \
    {                                                                                            \
        fsh_api_ibget(FSH_FN, CTX_OF_##PFX, dest, source, dst, sst, bsize, nblocks, ESIZE, pe);  \
    }

/* The contiguous and strided routines of one type, in a plain and a ctx form. CTX is either
 * `SHMEM_CTX_DEFAULT` (the plain form) or `ctx` (the parameter of the ctx form); PFX and ARG
 * add that parameter to the ctx form's name and parameter list. */
#define DEF_PUTGET(CTYPE, NAME, PFX, ARG, CTX)                                                   \
    FSH_PROFILED(shmem_##PFX##NAME##_put)                                                        \
    void pshmem_##PFX##NAME##_put(ARG CTYPE *dest, const CTYPE *source, size_t nelems, int pe)   \
    {                                                                                            \
        fsh_api_put(FSH_FN, CTX, dest, source, bytes_of(nelems, sizeof(CTYPE)), pe, 0);          \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##NAME##_put_nbi)                                                    \
    void pshmem_##PFX##NAME##_put_nbi(ARG CTYPE *dest, const CTYPE *source, size_t nelems,       \
                                     int pe)                                                     \
    {                                                                                            \
        fsh_api_put(FSH_FN, CTX, dest, source, bytes_of(nelems, sizeof(CTYPE)), pe, 1);          \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##NAME##_get)                                                        \
    void pshmem_##PFX##NAME##_get(ARG CTYPE *dest, const CTYPE *source, size_t nelems, int pe)   \
    {                                                                                            \
        fsh_api_get(FSH_FN, CTX, dest, source, bytes_of(nelems, sizeof(CTYPE)), pe, 0);          \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##NAME##_get_nbi)                                                    \
    void pshmem_##PFX##NAME##_get_nbi(ARG CTYPE *dest, const CTYPE *source, size_t nelems,       \
                                     int pe)                                                     \
    {                                                                                            \
        fsh_api_get(FSH_FN, CTX, dest, source, bytes_of(nelems, sizeof(CTYPE)), pe, 1);          \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##NAME##_iput)                                                       \
    void pshmem_##PFX##NAME##_iput(ARG CTYPE *dest, const CTYPE *source, ptrdiff_t dst,          \
                                  ptrdiff_t sst, size_t nelems, int pe)                          \
    {                                                                                            \
        fsh_api_iput(FSH_FN, CTX, dest, source, dst, sst, nelems, sizeof(CTYPE), pe);            \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##NAME##_iget)                                                       \
    void pshmem_##PFX##NAME##_iget(ARG CTYPE *dest, const CTYPE *source, ptrdiff_t dst,          \
                                  ptrdiff_t sst, size_t nelems, int pe)                          \
    {                                                                                            \
        fsh_api_iget(FSH_FN, CTX, dest, source, dst, sst, nelems, sizeof(CTYPE), pe);            \
    }                                                                                            \
    DEF_BLOCKED(shmem_##PFX##NAME##_ibput, shmem_##PFX##NAME##_ibget, CTYPE, sizeof(CTYPE),      \
                PFX)

/* Single-element p and g. g's result starts at 0 so that, should api.c ever return from an
 * error without writing it, the caller gets a defined value rather than stack garbage. */
#define DEF_PG(CTYPE, NAME, PFX, ARG, CTX)                                                       \
    FSH_PROFILED(shmem_##PFX##NAME##_p)                                                          \
    void pshmem_##PFX##NAME##_p(ARG CTYPE *dest, CTYPE value, int pe)                            \
    {                                                                                            \
        fsh_api_put(FSH_FN, CTX, dest, &value, sizeof(CTYPE), pe, 0);                            \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##NAME##_g)                                                          \
    CTYPE pshmem_##PFX##NAME##_g(ARG const CTYPE *source, int pe)                                \
    {                                                                                            \
        CTYPE v = 0;                                                                             \
        fsh_api_get(FSH_FN, CTX, &v, source, sizeof(CTYPE), pe, 0);                              \
        return v;                                                                                \
    }

#define CTX_ARG shmem_ctx_t ctx,
#define DEF_RMA(CTYPE, NAME)                                                                     \
    DEF_PUTGET(CTYPE, NAME, , , SHMEM_CTX_DEFAULT)                                               \
    DEF_PUTGET(CTYPE, NAME, ctx_, CTX_ARG, ctx)                                                  \
    DEF_PG(CTYPE, NAME, , , SHMEM_CTX_DEFAULT)                                                   \
    DEF_PG(CTYPE, NAME, ctx_, CTX_ARG, ctx)
#define DEF_RMA_ROW(CTYPE, NAME, RMA, ...) FSH_IF(RMA, DEF_RMA(CTYPE, NAME))

FSH_TYPE_TABLE(DEF_RMA_ROW)

/* ------------------------------------------------------------------ sized RMA */
/* putN/getN/iputN/igetN (and ibputN/ibgetN): elements of N/8 bytes, whatever their type
 * (ETYPE gives the size). */
#define DEF_SIZED(BITS, ETYPE, PFX, ARG, CTX)                                                    \
    FSH_PROFILED(shmem_##PFX##put##BITS)                                                         \
    void pshmem_##PFX##put##BITS(ARG void *dest, const void *source, size_t nelems, int pe)      \
    {                                                                                            \
        fsh_api_put(FSH_FN, CTX, dest, source, bytes_of(nelems, sizeof(ETYPE)), pe, 0);          \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##put##BITS##_nbi)                                                   \
    void pshmem_##PFX##put##BITS##_nbi(ARG void *dest, const void *source, size_t nelems, int pe) \
    {                                                                                            \
        fsh_api_put(FSH_FN, CTX, dest, source, bytes_of(nelems, sizeof(ETYPE)), pe, 1);          \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##get##BITS)                                                         \
    void pshmem_##PFX##get##BITS(ARG void *dest, const void *source, size_t nelems, int pe)      \
    {                                                                                            \
        fsh_api_get(FSH_FN, CTX, dest, source, bytes_of(nelems, sizeof(ETYPE)), pe, 0);          \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##get##BITS##_nbi)                                                   \
    void pshmem_##PFX##get##BITS##_nbi(ARG void *dest, const void *source, size_t nelems, int pe) \
    {                                                                                            \
        fsh_api_get(FSH_FN, CTX, dest, source, bytes_of(nelems, sizeof(ETYPE)), pe, 1);          \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##iput##BITS)                                                        \
    void pshmem_##PFX##iput##BITS(ARG void *dest, const void *source, ptrdiff_t dst,             \
                                 ptrdiff_t sst, size_t nelems, int pe)                           \
    {                                                                                            \
        fsh_api_iput(FSH_FN, CTX, dest, source, dst, sst, nelems, sizeof(ETYPE), pe);            \
    }                                                                                            \
    FSH_PROFILED(shmem_##PFX##iget##BITS)                                                        \
    void pshmem_##PFX##iget##BITS(ARG void *dest, const void *source, ptrdiff_t dst,             \
                                 ptrdiff_t sst, size_t nelems, int pe)                           \
    {                                                                                            \
        fsh_api_iget(FSH_FN, CTX, dest, source, dst, sst, nelems, sizeof(ETYPE), pe);            \
    }                                                                                            \
    DEF_BLOCKED(shmem_##PFX##ibput##BITS, shmem_##PFX##ibget##BITS, void, sizeof(ETYPE), PFX)
#define DEF_SIZED_ROW(BITS, ETYPE)                                                               \
    DEF_SIZED(BITS, ETYPE, , , SHMEM_CTX_DEFAULT)                                                \
    DEF_SIZED(BITS, ETYPE, ctx_, CTX_ARG, ctx)

FSH_SIZE_TABLE(DEF_SIZED_ROW)
