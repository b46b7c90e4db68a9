/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * types.h: what the library knows about each row of FSH_TYPE_TABLE at run time: its size, its
 * signedness, its kind (integer, real floating or complex) and the spec tables it belongs to.
 *
 * Signedness and kind are computed from the C type, never written per row. They are all the
 * transport needs to carry a value: its map to libfabric's datatypes (fsh_xport_datatype,
 * xport.c) goes by size, signedness and kind, so `long` is a 64-bit integer on LP64 and a
 * 32-bit one on ILP32, `size_t` follows the platform, and `char` is signed or not as the ABI
 * decides; tests/unit/test_types.c checks every row through it. This header is C only (it uses
 * _Complex and _Generic) and holds no state: the table is a static const array in each
 * includer.
 */
#ifndef FSH_TYPES_H
#define FSH_TYPES_H

#include <stdbool.h>
#include <stddef.h>

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

/* The kind of a type. */
#define FSH_KIND_INT 0
#define FSH_KIND_FLOAT 1
#define FSH_KIND_COMPLEX 2

/* Properties of a C type as constant expressions, usable in static initializers.
 * Signedness goes through long double because a complex value cannot be compared with `<`
 * (the conversion keeps the real part: a complex type is as signed as its real part). A type is
 * floating when 0.5 survives conversion to it. */
#define FSH_TYPE_SIGNED(T) ((long double)((T)-1) < 0)
#define FSH_TYPE_KIND(T)                                                                         \
    (_Generic((T)0, float _Complex: 1, double _Complex: 1, long double _Complex: 1, default: 0)  \
         ? FSH_KIND_COMPLEX                                                                      \
         : ((T)0.5 != (T)0) ? FSH_KIND_FLOAT : FSH_KIND_INT)

struct fsh_type_info {
    const char *name; /* the spec's TYPENAME: "int", "longdouble", "uint64", ... */
    size_t size;      /* sizeof the C type */
    bool is_signed;   /* (complex types: their real part's) */
    int kind;         /* FSH_KIND_* */
    unsigned cols;    /* FSH_COL_* memberships */
};

#define FSH_TYPE_INFO_ROW(CTYPE, NAME, RMA, AMO, EXT, BIT, SYNC, RBIT, RMM, RAR, GEN)            \
    {#NAME, sizeof(CTYPE), FSH_TYPE_SIGNED(CTYPE), FSH_TYPE_KIND(CTYPE),                         \
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
