/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shmem_table.h: the one type table of the typed OpenSHMEM API, and the short type lists of
 * the deprecated typed routines. Not installed. The table form of shmem.h (include/table/)
 * expands the typed prototypes, the C11 generic lists and the C++ overloads from it, and
 * tools/gen_header writes them out into the flat shmem.h that is installed; the library
 * expands its definitions from it (runtime/api_typed*.c, runtime/types.h, collectives/).
 * Macros only, so it is included after shmem.h, which declares what the rows name
 * (FSH_COMPLEXD, FSH_COMPLEXF, struct fsh_u128).
 *
 * Adding a row declares and defines every routine of the spec tables it joins.
 *
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
 *   GENERIC  how the type takes part in C11 _Generic selection, where a type may be listed only
 *            once: 1 for the distinct standard types; W for the exact-width typedefs
 *            (int8_t..uint64_t), which usually name one of those and so are listed in a second
 *            selection, reached only when the first has no match (a table may hold int32_t but
 *            not int: the bitwise AMOs); 0 for size_t and ptrdiff_t, always one of the standard
 *            types, each of which is in every table that holds them.
 * FSH_TYPE_TABLE(X) calls X(CTYPE, NAME, RMA, ..., RARITH, GEN) for each row with GEN as 0 or 1
 * (W counting as 0); FSH_TYPE_TABLE_W(X) does the same with GEN 1 for the W rows only.
 */
#ifndef FSH_SHMEM_TABLE_H
#define FSH_SHMEM_TABLE_H

/*  M(E, CTYPE,              NAME,       RMA AMO EXT BIT SYNC RBIT RMM RAR GEN) */
#define FSH_TYPE_ROWS(M, E)                                                  \
    M(E, float,              float,      1,  0,  1,  0,  0,   0,   1,  1,  1) \
    M(E, double,             double,     1,  0,  1,  0,  0,   0,   1,  1,  1) \
    M(E, long double,        longdouble, 1,  0,  0,  0,  0,   0,   1,  1,  1) \
    M(E, char,               char,       1,  0,  0,  0,  0,   0,   1,  1,  1) \
    M(E, signed char,        schar,      1,  0,  0,  0,  0,   0,   1,  1,  1) \
    M(E, short,              short,      1,  0,  0,  0,  1,   0,   1,  1,  1) \
    M(E, int,                int,        1,  1,  1,  0,  1,   0,   1,  1,  1) \
    M(E, long,               long,       1,  1,  1,  0,  1,   0,   1,  1,  1) \
    M(E, long long,          longlong,   1,  1,  1,  0,  1,   0,   1,  1,  1) \
    M(E, unsigned char,      uchar,      1,  0,  0,  0,  0,   1,   1,  1,  1) \
    M(E, unsigned short,     ushort,     1,  0,  0,  0,  1,   1,   1,  1,  1) \
    M(E, unsigned int,       uint,       1,  1,  1,  1,  1,   1,   1,  1,  1) \
    M(E, unsigned long,      ulong,      1,  1,  1,  1,  1,   1,   1,  1,  1) \
    M(E, unsigned long long, ulonglong,  1,  1,  1,  1,  1,   1,   1,  1,  1) \
    M(E, int8_t,             int8,       1,  0,  0,  0,  0,   1,   1,  1,  W) \
    M(E, int16_t,            int16,      1,  0,  0,  0,  0,   1,   1,  1,  W) \
    M(E, int32_t,            int32,      1,  1,  1,  1,  1,   1,   1,  1,  W) \
    M(E, int64_t,            int64,      1,  1,  1,  1,  1,   1,   1,  1,  W) \
    M(E, uint8_t,            uint8,      1,  0,  0,  0,  0,   1,   1,  1,  W) \
    M(E, uint16_t,           uint16,     1,  0,  0,  0,  0,   1,   1,  1,  W) \
    M(E, uint32_t,           uint32,     1,  1,  1,  1,  1,   1,   1,  1,  W) \
    M(E, uint64_t,           uint64,     1,  1,  1,  1,  1,   1,   1,  1,  W) \
    M(E, size_t,             size,       1,  1,  1,  0,  1,   1,   1,  1,  0) \
    M(E, ptrdiff_t,          ptrdiff,    1,  1,  1,  0,  1,   0,   1,  1,  0) \
    FSH_TYPE_ROWS_COMPLEX(M, E)

/* Complex types exist only for sum/prod reductions (and the scans); shmem.h spells them
 * FSH_COMPLEXD and FSH_COMPLEXF (C and C++ name them differently). */
#define FSH_TYPE_ROWS_COMPLEX(M, E)                                          \
    M(E, FSH_COMPLEXD,       complexd,   0,  0,  0,  0,  0,   0,   0,  1,  1) \
    M(E, FSH_COMPLEXF,       complexf,   0,  0,  0,  0,  0,   0,   0,  1,  1)

/* The two views of the GENERIC column, and the row handed on with it. */
#define FSH_GEN_FIRST_0 0
#define FSH_GEN_FIRST_1 1
#define FSH_GEN_FIRST_W 0
#define FSH_GEN_SECOND_0 0
#define FSH_GEN_SECOND_1 0
#define FSH_GEN_SECOND_W 1
#define FSH_ROW_CALL(X, ...) X(__VA_ARGS__)
#define FSH_ROW_FIRST(X, T, N, R, A, E, B, S, RB, RM, RA, G)                                     \
    FSH_ROW_CALL(X, T, N, R, A, E, B, S, RB, RM, RA, FSH_GEN_FIRST_##G)
#define FSH_ROW_SECOND(X, T, N, R, A, E, B, S, RB, RM, RA, G)                                    \
    FSH_ROW_CALL(X, T, N, R, A, E, B, S, RB, RM, RA, FSH_GEN_SECOND_##G)
#define FSH_TYPE_TABLE(X) FSH_TYPE_ROWS(FSH_ROW_FIRST, X)
#define FSH_TYPE_TABLE_W(X) FSH_TYPE_ROWS(FSH_ROW_SECOND, X)

/* Expand ARGS only when a table column is 1. */
#define FSH_IF_0(...)
#define FSH_IF_1(...) __VA_ARGS__
#define FSH_IF(flag, ...) FSH_IF_##flag(__VA_ARGS__)
/* ... only when both are 1. */
#define FSH_IF_00(...)
#define FSH_IF_01(...)
#define FSH_IF_10(...)
#define FSH_IF_11(...) __VA_ARGS__
#define FSH_IF2(a, b, ...) FSH_IF_##a##b(__VA_ARGS__)

/* The sized RMA routines (putN/getN/iputN/igetN) exist for these bit widths; 128 moves
 * 16-byte elements. */
#define FSH_SIZE_TABLE(X) X(8, uint8_t) X(16, uint16_t) X(32, uint32_t) X(64, uint64_t) \
    X(128, struct fsh_u128)

/* The typed families are written once for both forms: PFX is empty for the plain form and ctx_ for the
 * ctx form, and FSH_PARAM_##PFX opens the parameter list with the context only in the latter
 * (a prefix token, unlike a macro argument holding a comma, can be passed on safely). */
#define FSH_PARAM_
#define FSH_PARAM_ctx_ shmem_ctx_t ctx,

/* The deprecated AMO names (shmem_TYPENAME_cswap/finc/inc/fadd/add, fetch/set/swap): OpenSHMEM
 * 1.4 deprecated them with the same type tables as their replacements, and Sandia OpenSHMEM
 * keeps them for every row (1.3 had them for int, long and long long, fetch/set/swap also for
 * float and double). The typed names exist for every row of the AMO (EXTAMO) column, the
 * deprecated generics (shmem_cswap, ...) for its distinct standard types (GENERIC 1): the
 * exact-width and size_t/ptrdiff_t rows name one of those, and a C11 selection or a set of C++
 * overloads may list a type only once. The deprecated typed wait has 1.3's list and short. */
#define FSH_DEP_ROW(X, T, N, R, A, E, B, S, RB, RM, RA, G) FSH_IF(A, X(T, N))
#define FSH_DEP_ROW_EXT(X, T, N, R, A, E, B, S, RB, RM, RA, G) FSH_IF(E, X(T, N))
#define FSH_IF2X(a, b, ...) FSH_IF2(a, b, __VA_ARGS__)
#define FSH_DEP_GROW(X, T, N, R, A, E, B, S, RB, RM, RA, G)                                      \
    FSH_IF2X(A, FSH_GEN_FIRST_##G, X(T, N))
#define FSH_DEP_GROW_EXT(X, T, N, R, A, E, B, S, RB, RM, RA, G)                                  \
    FSH_IF2X(E, FSH_GEN_FIRST_##G, X(T, N))
#define FSH_DEPRECATED_AMO_TYPES(X) FSH_TYPE_ROWS(FSH_DEP_ROW, X)
#define FSH_DEPRECATED_EXTAMO_TYPES(X) FSH_TYPE_ROWS(FSH_DEP_ROW_EXT, X)
#define FSH_DEPRECATED_AMO_GENERIC(X) FSH_TYPE_ROWS(FSH_DEP_GROW, X)
#define FSH_DEPRECATED_EXTAMO_GENERIC(X) FSH_TYPE_ROWS(FSH_DEP_GROW_EXT, X)
#define FSH_DEPRECATED_WAIT_TYPES(X)                                                             \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)

/* The deprecated active-set reductions exist for the types OpenSHMEM 1.4 had. */
#define FSH_DEPRECATED_REDUCE_INT_TYPES(X) X(short, short) X(int, int) X(long, long)             \
    X(long long, longlong)
#define FSH_DEPRECATED_REDUCE_FLOAT_TYPES(X) X(float, float) X(double, double)                   \
    X(long double, longdouble)

#endif /* FSH_SHMEM_TABLE_H */
