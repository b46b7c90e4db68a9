/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_typed_amo.c: the definitions of the typed atomics (shmem_<T>_atomic_*), of the typed
 * point-to-point synchronization routines (shmem_<T>_wait_until*, shmem_<T>_test*), of the
 * put-with-signal routines (typed, sized and putmem), and of their deprecated 1.3 names.
 *
 * Everything here is expanded from FSH_TYPE_TABLE and FSH_SIZE_TABLE (shmem_table.h), the same
 * tables (and, for the deprecated names, the same short type lists) that generate the
 * prototypes, so a definition cannot drift from its declaration. Each body is exactly one
 * call into the type-erased routines of api.h (fsh_api_amo, fsh_api_sync, fsh_api_put_signal)
 * with the element size, and for waits the signedness of the type (computed from the C type
 * by types.h); atomics need only the size, since amo.c works on the same-size unsigned integer; argument checks, error messages and
 * the operations themselves live there, in ordinary debuggable C. This file never checks
 * arguments, never touches the fabric and holds no state. The `fn` passed down is FSH_FN, so
 * error messages name the routine the user called, deprecated names included.
 */
#include <stddef.h>
#include <stdint.h>

#include <shmem.h>
#include <shmem_table.h>

#include "api.h"
#include "types.h"

/* The definitions use the header's prefix convention: PFX is empty (plain form) or ctx_ (ctx
 * form), FSH_PARAM_##PFX adds the context parameter, and CTX_OF_##PFX is the context to use. */
#define CTX_OF_ SHMEM_CTX_DEFAULT
#define CTX_OF_ctx_ ctx

/* ------------------------------------------------------------------ atomics */
/* One function per shape of the spec's AMO signatures. FN is the full routine name, OP the
 * fsh_amo_op. The blocking fetching shapes return `old`, which starts at 0 so that, should
 * api.c ever return from an error without writing it, the caller gets a defined value. The
 * fetch shape casts const away only to share fsh_api_amo's signature: FSH_AMO_FETCH reads. */
#define AMO_ARGS(T) sizeof(T)

/* T FN(T *dest, T value, int pe): swap, fetch_add, fetch_and/or/xor */
#define DEF_FETCH_VALUE(T, FN, PFX, OP)                                                          \
    FSH_PROFILED(FN)                                                                             \
    T FSH_P(FN)(FSH_PARAM_##PFX T *dest, T value, int pe)                                        \
    {                                                                                            \
        T old = 0;                                                                               \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, OP, dest, &value, NULL, &old, AMO_ARGS(T), pe, 0);     \
        return old;                                                                              \
    }
/* void FN(T *dest, T value, int pe): set, add, and/or/xor */
#define DEF_UPDATE_VALUE(T, FN, PFX, OP)                                                         \
    FSH_PROFILED(FN)                                                                             \
    void FSH_P(FN)(FSH_PARAM_##PFX T *dest, T value, int pe)                                     \
    {                                                                                            \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, OP, dest, &value, NULL, NULL, AMO_ARGS(T), pe, 0);     \
    }
/* T FN(T *dest, int pe): fetch_inc */
#define DEF_FETCH_NOVALUE(T, FN, PFX, OP)                                                        \
    FSH_PROFILED(FN)                                                                             \
    T FSH_P(FN)(FSH_PARAM_##PFX T *dest, int pe)                                                 \
    {                                                                                            \
        T old = 0;                                                                               \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, OP, dest, NULL, NULL, &old, AMO_ARGS(T), pe, 0);       \
        return old;                                                                              \
    }
/* void FN(T *dest, int pe): inc */
#define DEF_UPDATE_NOVALUE(T, FN, PFX, OP)                                                       \
    FSH_PROFILED(FN)                                                                             \
    void FSH_P(FN)(FSH_PARAM_##PFX T *dest, int pe)                                              \
    {                                                                                            \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, OP, dest, NULL, NULL, NULL, AMO_ARGS(T), pe, 0);       \
    }
/* T FN(const T *source, int pe): fetch */
#define DEF_FETCH(T, FN, PFX)                                                                    \
    FSH_PROFILED(FN)                                                                             \
    T FSH_P(FN)(FSH_PARAM_##PFX const T *source, int pe)                                         \
    {                                                                                            \
        T old = 0;                                                                               \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, FSH_AMO_FETCH, (void *)source, NULL, NULL, &old,       \
                    AMO_ARGS(T), pe, 0);                                                         \
        return old;                                                                              \
    }
/* T FN(T *dest, T cond, T value, int pe): compare_swap */
#define DEF_CSWAP(T, FN, PFX)                                                                    \
    FSH_PROFILED(FN)                                                                             \
    T FSH_P(FN)(FSH_PARAM_##PFX T *dest, T cond, T value, int pe)                                \
    {                                                                                            \
        T old = 0;                                                                               \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, FSH_AMO_CSWAP, dest, &value, &cond, &old,              \
                    AMO_ARGS(T), pe, 0);                                                         \
        return old;                                                                              \
    }

/* The fetching _nbi shapes: the old value goes to *fetch, valid after shmem_quiet. */
/* void FN(T *fetch, T *dest, T value, int pe): swap_nbi, fetch_add_nbi, fetch_and/or/xor_nbi */
#define DEF_NBI_VALUE(T, FN, PFX, OP)                                                            \
    FSH_PROFILED(FN)                                                                             \
    void FSH_P(FN)(FSH_PARAM_##PFX T *fetch, T *dest, T value, int pe)                           \
    {                                                                                            \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, OP, dest, &value, NULL, fetch, AMO_ARGS(T), pe, 1);    \
    }
/* void FN(T *fetch, T *dest, int pe): fetch_inc_nbi */
#define DEF_NBI_NOVALUE(T, FN, PFX, OP)                                                          \
    FSH_PROFILED(FN)                                                                             \
    void FSH_P(FN)(FSH_PARAM_##PFX T *fetch, T *dest, int pe)                                    \
    {                                                                                            \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, OP, dest, NULL, NULL, fetch, AMO_ARGS(T), pe, 1);      \
    }
/* void FN(T *fetch, const T *source, int pe): fetch_nbi */
#define DEF_NBI_FETCH(T, FN, PFX)                                                                \
    FSH_PROFILED(FN)                                                                             \
    void FSH_P(FN)(FSH_PARAM_##PFX T *fetch, const T *source, int pe)                            \
    {                                                                                            \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, FSH_AMO_FETCH, (void *)source, NULL, NULL, fetch,      \
                    AMO_ARGS(T), pe, 1);                                                         \
    }
/* void FN(T *fetch, T *dest, T cond, T value, int pe): compare_swap_nbi */
#define DEF_NBI_CSWAP(T, FN, PFX)                                                                \
    FSH_PROFILED(FN)                                                                             \
    void FSH_P(FN)(FSH_PARAM_##PFX T *fetch, T *dest, T cond, T value, int pe)                   \
    {                                                                                            \
        fsh_api_amo(FSH_FN, CTX_OF_##PFX, FSH_AMO_CSWAP, dest, &value, &cond, fetch,             \
                    AMO_ARGS(T), pe, 1);                                                         \
    }

/* The routines of each AMO table, in one form (PFX) of one type, as in FSH_DECL_AMO & co. */
#define DEF_AMO(T, N, PFX)                                                                       \
    DEF_CSWAP(T, shmem_##PFX##N##_atomic_compare_swap, PFX)                                      \
    DEF_FETCH_NOVALUE(T, shmem_##PFX##N##_atomic_fetch_inc, PFX, FSH_AMO_FETCH_INC)              \
    DEF_UPDATE_NOVALUE(T, shmem_##PFX##N##_atomic_inc, PFX, FSH_AMO_INC)                         \
    DEF_FETCH_VALUE(T, shmem_##PFX##N##_atomic_fetch_add, PFX, FSH_AMO_FETCH_ADD)                \
    DEF_UPDATE_VALUE(T, shmem_##PFX##N##_atomic_add, PFX, FSH_AMO_ADD)                           \
    DEF_NBI_CSWAP(T, shmem_##PFX##N##_atomic_compare_swap_nbi, PFX)                              \
    DEF_NBI_NOVALUE(T, shmem_##PFX##N##_atomic_fetch_inc_nbi, PFX, FSH_AMO_FETCH_INC)            \
    DEF_NBI_VALUE(T, shmem_##PFX##N##_atomic_fetch_add_nbi, PFX, FSH_AMO_FETCH_ADD)
#define DEF_EXTAMO(T, N, PFX)                                                                    \
    DEF_FETCH(T, shmem_##PFX##N##_atomic_fetch, PFX)                                             \
    DEF_UPDATE_VALUE(T, shmem_##PFX##N##_atomic_set, PFX, FSH_AMO_SET)                           \
    DEF_FETCH_VALUE(T, shmem_##PFX##N##_atomic_swap, PFX, FSH_AMO_SWAP)                          \
    DEF_NBI_FETCH(T, shmem_##PFX##N##_atomic_fetch_nbi, PFX)                                     \
    DEF_NBI_VALUE(T, shmem_##PFX##N##_atomic_swap_nbi, PFX, FSH_AMO_SWAP)
#define DEF_BITAMO(T, N, PFX)                                                                    \
    DEF_FETCH_VALUE(T, shmem_##PFX##N##_atomic_fetch_and, PFX, FSH_AMO_FETCH_AND)                \
    DEF_UPDATE_VALUE(T, shmem_##PFX##N##_atomic_and, PFX, FSH_AMO_AND)                           \
    DEF_NBI_VALUE(T, shmem_##PFX##N##_atomic_fetch_and_nbi, PFX, FSH_AMO_FETCH_AND)              \
    DEF_FETCH_VALUE(T, shmem_##PFX##N##_atomic_fetch_or, PFX, FSH_AMO_FETCH_OR)                  \
    DEF_UPDATE_VALUE(T, shmem_##PFX##N##_atomic_or, PFX, FSH_AMO_OR)                             \
    DEF_NBI_VALUE(T, shmem_##PFX##N##_atomic_fetch_or_nbi, PFX, FSH_AMO_FETCH_OR)                \
    DEF_FETCH_VALUE(T, shmem_##PFX##N##_atomic_fetch_xor, PFX, FSH_AMO_FETCH_XOR)                \
    DEF_UPDATE_VALUE(T, shmem_##PFX##N##_atomic_xor, PFX, FSH_AMO_XOR)                           \
    DEF_NBI_VALUE(T, shmem_##PFX##N##_atomic_fetch_xor_nbi, PFX, FSH_AMO_FETCH_XOR)

#define DEF_AMO_ROW(T, N, RMA, AMO, EXT, BIT, ...)                                               \
    FSH_IF(AMO, DEF_AMO(T, N, ) DEF_AMO(T, N, ctx_))                                             \
    FSH_IF(EXT, DEF_EXTAMO(T, N, ) DEF_EXTAMO(T, N, ctx_))                                       \
    FSH_IF(BIT, DEF_BITAMO(T, N, ) DEF_BITAMO(T, N, ctx_))

FSH_TYPE_TABLE(DEF_AMO_ROW)

/* ------------------------------------------------------------------ deprecated atomics */
/* The 1.3 names, plain form only, over the header's deprecated type lists. */
#define DEF_DEPRECATED_AMO(T, N)                                                                 \
    DEF_CSWAP(T, shmem_##N##_cswap, )                                                            \
    DEF_FETCH_NOVALUE(T, shmem_##N##_finc, , FSH_AMO_FETCH_INC)                                  \
    DEF_UPDATE_NOVALUE(T, shmem_##N##_inc, , FSH_AMO_INC)                                        \
    DEF_FETCH_VALUE(T, shmem_##N##_fadd, , FSH_AMO_FETCH_ADD)                                    \
    DEF_UPDATE_VALUE(T, shmem_##N##_add, , FSH_AMO_ADD)
#define DEF_DEPRECATED_EXTAMO(T, N)                                                              \
    DEF_FETCH(T, shmem_##N##_fetch, )                                                            \
    DEF_UPDATE_VALUE(T, shmem_##N##_set, , FSH_AMO_SET)                                          \
    DEF_FETCH_VALUE(T, shmem_##N##_swap, , FSH_AMO_SWAP)

FSH_DEPRECATED_AMO_TYPES(DEF_DEPRECATED_AMO)
FSH_DEPRECATED_EXTAMO_TYPES(DEF_DEPRECATED_EXTAMO)
/* The untyped 1.x swap (in C11 also the generic macro, which a name not followed by a
 * parenthesis does not expand). */
DEF_FETCH_VALUE(long, shmem_swap, , FSH_AMO_SWAP)

/* ------------------------------------------------------------------ point-to-point sync */
/* SYNC(T, MODE, BLOCK, IVARS, NELEMS, STATUS, VALUES, VECTOR, INDICES) is the one call of each
 * body; `cmp` is always the routine's own parameter. Waits (BLOCK 1) return when satisfied,
 * tests (BLOCK 0) report at once. The single-ivar forms are mode ONE on one element. */
#define SYNC(T, MODE, BLOCK, IVARS, NELEMS, STATUS, VALUES, VECTOR, INDICES)                     \
    fsh_api_sync(FSH_FN, MODE, BLOCK, IVARS, NELEMS, STATUS, cmp, VALUES, VECTOR, sizeof(T),     \
                 FSH_TYPE_SIGNED(T), INDICES)

#define DEF_SYNC(T, N)                                                                           \
    FSH_PROFILED(shmem_##N##_wait_until)                                                         \
    void pshmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                  \
    {                                                                                            \
        SYNC(T, FSH_SYNC_ONE, 1, ivar, 1, NULL, &cmp_value, 0, NULL);                            \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_wait_until_all)                                                     \
    void pshmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,        \
                                    T cmp_value)                                                 \
    {                                                                                            \
        SYNC(T, FSH_SYNC_ALL, 1, ivars, nelems, status, &cmp_value, 0, NULL);                    \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_wait_until_any)                                                     \
    size_t pshmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,      \
                                      T cmp_value)                                               \
    {                                                                                            \
        return SYNC(T, FSH_SYNC_ANY, 1, ivars, nelems, status, &cmp_value, 0, NULL);             \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_wait_until_some)                                                    \
    size_t pshmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                \
                                       const int *status, int cmp, T cmp_value)                  \
    {                                                                                            \
        return SYNC(T, FSH_SYNC_SOME, 1, ivars, nelems, status, &cmp_value, 0, indices);         \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_wait_until_all_vector)                                              \
    void pshmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                           T *cmp_values)                                        \
    {                                                                                            \
        SYNC(T, FSH_SYNC_ALL, 1, ivars, nelems, status, cmp_values, 1, NULL);                    \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_wait_until_any_vector)                                              \
    size_t pshmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,        \
                                             int cmp, T *cmp_values)                             \
    {                                                                                            \
        return SYNC(T, FSH_SYNC_ANY, 1, ivars, nelems, status, cmp_values, 1, NULL);             \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_wait_until_some_vector)                                             \
    size_t pshmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,         \
                                              const int *status, int cmp, T *cmp_values)         \
    {                                                                                            \
        return SYNC(T, FSH_SYNC_SOME, 1, ivars, nelems, status, cmp_values, 1, indices);         \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_test)                                                               \
    int pshmem_##N##_test(T *ivar, int cmp, T cmp_value)                                         \
    {                                                                                            \
        return (int)SYNC(T, FSH_SYNC_ONE, 0, ivar, 1, NULL, &cmp_value, 0, NULL);                \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_test_all)                                                           \
    int pshmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)  \
    {                                                                                            \
        return (int)SYNC(T, FSH_SYNC_ALL, 0, ivars, nelems, status, &cmp_value, 0, NULL);        \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_test_any)                                                           \
    size_t pshmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,            \
                                T cmp_value)                                                     \
    {                                                                                            \
        return SYNC(T, FSH_SYNC_ANY, 0, ivars, nelems, status, &cmp_value, 0, NULL);             \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_test_some)                                                          \
    size_t pshmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,   \
                                 int cmp, T cmp_value)                                           \
    {                                                                                            \
        return SYNC(T, FSH_SYNC_SOME, 0, ivars, nelems, status, &cmp_value, 0, indices);         \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_test_all_vector)                                                    \
    int pshmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,        \
                                    T *cmp_values)                                               \
    {                                                                                            \
        return (int)SYNC(T, FSH_SYNC_ALL, 0, ivars, nelems, status, cmp_values, 1, NULL);        \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_test_any_vector)                                                    \
    size_t pshmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,     \
                                       T *cmp_values)                                            \
    {                                                                                            \
        return SYNC(T, FSH_SYNC_ANY, 0, ivars, nelems, status, cmp_values, 1, NULL);             \
    }                                                                                            \
    FSH_PROFILED(shmem_##N##_test_some_vector)                                                   \
    size_t pshmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,               \
                                        const int *status, int cmp, T *cmp_values)               \
    {                                                                                            \
        return SYNC(T, FSH_SYNC_SOME, 0, ivars, nelems, status, cmp_values, 1, indices);         \
    }
#define DEF_SYNC_ROW(T, N, RMA, AMO, EXT, BIT, SYNC_, ...) FSH_IF(SYNC_, DEF_SYNC(T, N))

FSH_TYPE_TABLE(DEF_SYNC_ROW)

/* ------------------------------------------------------------------ deprecated waits */
/* shmem_<T>_wait(ivar, v) is wait_until(ivar, SHMEM_CMP_NE, v); the untyped forms are the long
 * ones (shmem_wait_until is also the C11 generic macro; only pshmem_wait_until is defined). */
#define DEF_DEPRECATED_WAIT_(T, FN)                                                              \
    FSH_PROFILED(FN)                                                                             \
    void FSH_P(FN)(T *ivar, T cmp_value)                                                         \
    {                                                                                            \
        fsh_api_sync(FSH_FN, FSH_SYNC_ONE, 1, ivar, 1, NULL, SHMEM_CMP_NE, &cmp_value, 0,        \
                     sizeof(T), FSH_TYPE_SIGNED(T), NULL);                                       \
    }
#define DEF_DEPRECATED_WAIT(T, N) DEF_DEPRECATED_WAIT_(T, shmem_##N##_wait)

FSH_DEPRECATED_WAIT_TYPES(DEF_DEPRECATED_WAIT)
DEF_DEPRECATED_WAIT_(long, shmem_wait)

FSH_PROFILED(shmem_wait_until)
void pshmem_wait_until(long *ivar, int cmp, long cmp_value)
{
    SYNC(long, FSH_SYNC_ONE, 1, ivar, 1, NULL, &cmp_value, 0, NULL);
}

/* ------------------------------------------------------------------ put with signal */
/* FN(dest, source, nelems, sig_addr, signal, sig_op, pe) moving nelems elements of ETYPE; PT is
 * the pointee type of dest and source (the C type itself, or void for the sized routines). */
#define DEF_SIGNAL(PT, ETYPE, FN, PFX, NBI)                                                      \
    FSH_PROFILED(FN)                                                                             \
    void FSH_P(FN)(FSH_PARAM_##PFX PT *dest, const PT *source, size_t nelems, uint64_t *sig_addr, \
            uint64_t signal, int sig_op, int pe)                                                 \
    {                                                                                            \
        fsh_api_put_signal(FSH_FN, CTX_OF_##PFX, dest, source,                                   \
                           bytes_of(nelems, sizeof(ETYPE)), sig_addr, signal, sig_op, pe, NBI);  \
    }
#define DEF_TYPED_SIGNAL(T, N, PFX)                                                              \
    DEF_SIGNAL(T, T, shmem_##PFX##N##_put_signal, PFX, 0)                                        \
    DEF_SIGNAL(T, T, shmem_##PFX##N##_put_signal_nbi, PFX, 1)
#define DEF_SIGNAL_ROW(T, N, RMA, ...)                                                           \
    FSH_IF(RMA, DEF_TYPED_SIGNAL(T, N, ) DEF_TYPED_SIGNAL(T, N, ctx_))

FSH_TYPE_TABLE(DEF_SIGNAL_ROW)

/* putN_signal: elements of N/8 bytes; putmem_signal: bytes (the `mem` row, as in shmem.h). */
#define DEF_SIZED_SIGNAL_(BITS, ETYPE, PFX)                                                      \
    DEF_SIGNAL(void, ETYPE, shmem_##PFX##put##BITS##_signal, PFX, 0)                             \
    DEF_SIGNAL(void, ETYPE, shmem_##PFX##put##BITS##_signal_nbi, PFX, 1)
#define DEF_SIZED_SIGNAL(BITS, ETYPE)                                                            \
    DEF_SIZED_SIGNAL_(BITS, ETYPE, ) DEF_SIZED_SIGNAL_(BITS, ETYPE, ctx_)

FSH_SIZE_TABLE(DEF_SIZED_SIGNAL)
DEF_SIZED_SIGNAL(mem, unsigned char)
