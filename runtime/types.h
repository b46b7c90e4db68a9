/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * types.h: what the library knows about each row of FSH_TYPE_TABLE at run time: its size, the
 * spec tables it belongs to, and the libfabric datatype (enum fi_datatype) that carries it.
 *
 * The datatype is computed from the C type, never written per row: by size, by whether the
 * type is signed, and by whether it is an integer, a real floating type or a complex one. So
 * `long` is FI_INT64 on LP64 and FI_INT32 on ILP32, `size_t` follows the platform, and `char`
 * is FI_INT8 or FI_UINT8 as the ABI decides. A type with no libfabric equivalent maps to -1,
 * which tests/unit/test_types.c reports. This header is C only (it uses _Complex and
 * _Generic) and holds no state: the table is a static const array in each includer.
 */
#ifndef FSH_TYPES_H
#define FSH_TYPES_H

#include <stddef.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>

#include <shmem.h>
#include <shmem_table.h>

/* Bit flags for the 0/1 columns of FSH_TYPE_TABLE, in table order. */
#define FSH_COL_RMA (1u << 0)     /* standard RMA types */
#define FSH_COL_AMO (1u << 1)     /* standard AMO types */
#define FSH_COL_EXTAMO (1u << 2)  /* extended AMO types (fetch/set/swap) */
#define FSH_COL_BITAMO (1u << 3)  /* bitwise AMO types (and/or/xor) */
#define FSH_COL_SYNC (1u << 4)    /* point-to-point synchronization types */
#define FSH_COL_RBIT (1u << 5)    /* and/or/xor reduction types */
#define FSH_COL_RMINMAX (1u << 6) /* min/max reduction types */
#define FSH_COL_RARITH (1u << 7)  /* sum/prod reduction types */
#define FSH_COL_GENERIC (1u << 8) /* takes part in C11 _Generic selection */

/* The kind of a type, the `is_float` argument of fsh_type_fi(). */
#define FSH_KIND_INT 0
#define FSH_KIND_FLOAT 1
#define FSH_KIND_COMPLEX 2

/* Properties of a C type as constant expressions, usable in static initializers.
 * Signedness goes through long double because a complex value cannot be compared with `<`
 * (the conversion keeps the real part; for complex types the answer is unused). A type is
 * floating when 0.5 survives conversion to it. */
#define FSH_TYPE_SIGNED(T) ((long double)((T)-1) < 0)
#define FSH_TYPE_KIND(T)                                                                         \
    (_Generic((T)0, float _Complex: 1, double _Complex: 1, long double _Complex: 1, default: 0)  \
         ? FSH_KIND_COMPLEX                                                                      \
         : ((T)0.5 != (T)0) ? FSH_KIND_FLOAT : FSH_KIND_INT)

/* The libfabric datatype of a type of `size` bytes, or -1 when libfabric has none. When two
 * C types share a size (long double may equal double) the first, most widely supported, wins:
 * the representation is the same. */
#define FSH_TYPE_FI(size, is_signed, is_float)                                                   \
    ((is_float) == FSH_KIND_COMPLEX                                                              \
         ? ((size) == sizeof(float _Complex)         ? (int)FI_FLOAT_COMPLEX                     \
            : (size) == sizeof(double _Complex)      ? (int)FI_DOUBLE_COMPLEX                    \
            : (size) == sizeof(long double _Complex) ? (int)FI_LONG_DOUBLE_COMPLEX               \
                                                     : -1)                                       \
     : (is_float) == FSH_KIND_FLOAT                                                              \
         ? ((size) == sizeof(float)         ? (int)FI_FLOAT                                      \
            : (size) == sizeof(double)      ? (int)FI_DOUBLE                                     \
            : (size) == sizeof(long double) ? (int)FI_LONG_DOUBLE                                \
                                            : -1)                                                \
     : (size) == 1 ? ((is_signed) ? (int)FI_INT8 : (int)FI_UINT8)                                \
     : (size) == 2 ? ((is_signed) ? (int)FI_INT16 : (int)FI_UINT16)                              \
     : (size) == 4 ? ((is_signed) ? (int)FI_INT32 : (int)FI_UINT32)                              \
     : (size) == 8 ? ((is_signed) ? (int)FI_INT64 : (int)FI_UINT64)                              \
                   : -1)

/* The libfabric datatype of C type T, as a constant expression (for generated AMO tables). */
#define FSH_TYPE_FI_OF(T) FSH_TYPE_FI(sizeof(T), FSH_TYPE_SIGNED(T), FSH_TYPE_KIND(T))

/* The same map as a function, for sizes and kinds known only at run time. is_float is one of
 * FSH_KIND_INT, FSH_KIND_FLOAT, FSH_KIND_COMPLEX. */
static inline int fsh_type_fi(size_t size, int is_signed, int is_float)
{
    return FSH_TYPE_FI(size, is_signed, is_float);
}

struct fsh_type_info {
    const char *name; /* the spec's TYPENAME: "int", "longdouble", "uint64", ... */
    size_t size;      /* sizeof the C type */
    int fi_dt;        /* enum fi_datatype, or -1 if libfabric has no equivalent */
    unsigned cols;    /* FSH_COL_* memberships */
};

#define FSH_TYPE_INFO_ROW(CTYPE, NAME, RMA, AMO, EXT, BIT, SYNC, RBIT, RMM, RAR, GEN)            \
    {#NAME, sizeof(CTYPE), FSH_TYPE_FI_OF(CTYPE),                                                \
     (RMA) * FSH_COL_RMA | (AMO) * FSH_COL_AMO | (EXT) * FSH_COL_EXTAMO |                        \
         (BIT) * FSH_COL_BITAMO | (SYNC) * FSH_COL_SYNC | (RBIT) * FSH_COL_RBIT |                \
         (RMM) * FSH_COL_RMINMAX | (RAR) * FSH_COL_RARITH | (GEN) * FSH_COL_GENERIC},
#define FSH_TYPE_COUNT_ROW(...) +1

/* The number of rows, as an integer constant expression. */
#define FSH_NTYPES (0 FSH_TYPE_TABLE(FSH_TYPE_COUNT_ROW))

/* One entry per FSH_TYPE_TABLE row, in table order. */
static const struct fsh_type_info fsh_type_infos[FSH_NTYPES] = {
    FSH_TYPE_TABLE(FSH_TYPE_INFO_ROW)
};

#endif /* FSH_TYPES_H */
