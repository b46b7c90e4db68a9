/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_types.c: checks runtime/types.h (the size, signedness and kind of every FSH_TYPE_TABLE
 * row) and, through it, the transport's map to libfabric datatypes (fsh_xport_datatype),
 * against expectations written independently of both.
 *
 * The expected names, sizes and kinds below are the spec's type lists typed out again, and the
 * expected datatypes come from <limits.h>/<stdint.h> facts (is char signed? is long 64 bits?)
 * rather than from the macros under test, so a wrong table row, a wrong column or a wrong
 * datatype rule makes this fail. The column counts are the sizes of the spec's tables
 * (OpenSHMEM 1.5, tables of RMA, AMO, synchronization and reduction types). No launcher and
 * no library state: a plain main that exits 0 on pass and 1 on failure.
 */
#include <complex.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fi_atomic.h>

#include "types.h"
#include "unit.h"
#include "xport.h"

/* A row's check: what was checked (of the type name, if any), the value got and the one wanted. */
#define CHECK_ROW(ok, what, name, got, want)                                                      \
    UNIT_CHECK(ok, "%s%s%s: got %ld, want %ld", what, (name) ? " of " : "",                      \
               (name) ? (const char *)(name) : "", (long)(got), (long)(want))

/* Expected integer datatype, by size and signedness, written out with a switch so that it
 * does not share code with fsh_xport_datatype. */
static int int_dt(size_t size, int is_signed)
{
    switch (size) {
    case 1:
        return is_signed ? FI_INT8 : FI_UINT8;
    case 2:
        return is_signed ? FI_INT16 : FI_UINT16;
    case 4:
        return is_signed ? FI_INT32 : FI_UINT32;
    case 8:
        return is_signed ? FI_INT64 : FI_UINT64;
    default:
        return -2;
    }
}

/* Size in bytes of one element of a libfabric datatype, as libfabric defines them. */
static size_t fi_size(int dt)
{
    switch (dt) {
    case FI_INT8:
    case FI_UINT8:
        return 1;
    case FI_INT16:
    case FI_UINT16:
        return 2;
    case FI_INT32:
    case FI_UINT32:
        return 4;
    case FI_INT64:
    case FI_UINT64:
        return 8;
    case FI_FLOAT:
        return sizeof(float);
    case FI_DOUBLE:
        return sizeof(double);
    case FI_FLOAT_COMPLEX:
        return 2 * sizeof(float);
    case FI_DOUBLE_COMPLEX:
        return 2 * sizeof(double);
    case FI_LONG_DOUBLE:
        return sizeof(long double);
    case FI_LONG_DOUBLE_COMPLEX:
        return 2 * sizeof(long double);
    default:
        return 0;
    }
}

/* The transport's datatype for a row, from what types.h says of it. */
static int row_dt(const struct fsh_type_info *t)
{
    return fsh_xport_datatype(t->size, t->is_signed, t->kind == FSH_KIND_FLOAT,
                              t->kind == FSH_KIND_COMPLEX);
}

struct expect {
    const char *name;
    size_t size;
    int is_signed;
    int kind;
    int fi_dt;
};

int main(void)
{
    unit_name = "test_types";
    const int char_signed = CHAR_MIN < 0;
    /* long double is carried as itself unless it is just double under another name */
    const int ld_dt = sizeof(long double) == sizeof(double) ? FI_DOUBLE : FI_LONG_DOUBLE;
    const struct expect exp[] = {
        {"float", sizeof(float), 1, FSH_KIND_FLOAT, FI_FLOAT},
        {"double", sizeof(double), 1, FSH_KIND_FLOAT, FI_DOUBLE},
        {"longdouble", sizeof(long double), 1, FSH_KIND_FLOAT, ld_dt},
        {"char", sizeof(char), char_signed, FSH_KIND_INT, int_dt(1, char_signed)},
        {"schar", sizeof(signed char), 1, FSH_KIND_INT, FI_INT8},
        {"short", sizeof(short), 1, FSH_KIND_INT, int_dt(sizeof(short), 1)},
        {"int", sizeof(int), 1, FSH_KIND_INT, int_dt(sizeof(int), 1)},
        {"long", sizeof(long), 1, FSH_KIND_INT,
         LONG_MAX == INT64_MAX ? FI_INT64 : int_dt(sizeof(long), 1)},
        {"longlong", sizeof(long long), 1, FSH_KIND_INT, int_dt(sizeof(long long), 1)},
        {"uchar", sizeof(unsigned char), 0, FSH_KIND_INT, FI_UINT8},
        {"ushort", sizeof(unsigned short), 0, FSH_KIND_INT, int_dt(sizeof(unsigned short), 0)},
        {"uint", sizeof(unsigned int), 0, FSH_KIND_INT, int_dt(sizeof(unsigned int), 0)},
        {"ulong", sizeof(unsigned long), 0, FSH_KIND_INT,
         ULONG_MAX == UINT64_MAX ? FI_UINT64 : int_dt(sizeof(unsigned long), 0)},
        {"ulonglong", sizeof(unsigned long long), 0, FSH_KIND_INT,
         int_dt(sizeof(unsigned long long), 0)},
        {"int8", 1, 1, FSH_KIND_INT, FI_INT8},
        {"int16", 2, 1, FSH_KIND_INT, FI_INT16},
        {"int32", 4, 1, FSH_KIND_INT, FI_INT32},
        {"int64", 8, 1, FSH_KIND_INT, FI_INT64},
        {"uint8", 1, 0, FSH_KIND_INT, FI_UINT8},
        {"uint16", 2, 0, FSH_KIND_INT, FI_UINT16},
        {"uint32", 4, 0, FSH_KIND_INT, FI_UINT32},
        {"uint64", 8, 0, FSH_KIND_INT, FI_UINT64},
        {"size", sizeof(size_t), 0, FSH_KIND_INT,
         SIZE_MAX == UINT64_MAX ? FI_UINT64 : int_dt(sizeof(size_t), 0)},
        {"ptrdiff", sizeof(ptrdiff_t), 1, FSH_KIND_INT,
         PTRDIFF_MAX == INT64_MAX ? FI_INT64 : int_dt(sizeof(ptrdiff_t), 1)},
        {"complexd", sizeof(double _Complex), 1, FSH_KIND_COMPLEX, FI_DOUBLE_COMPLEX},
        {"complexf", sizeof(float _Complex), 1, FSH_KIND_COMPLEX, FI_FLOAT_COMPLEX},
    };
    const size_t nexp = sizeof(exp) / sizeof(exp[0]);
    const size_t ninfo = sizeof(fsh_type_infos) / sizeof(fsh_type_infos[0]);

    CHECK_ROW(FSH_NTYPES == ninfo, "FSH_NTYPES vs array length", NULL, (long)FSH_NTYPES,
              (long)ninfo);
    CHECK_ROW(ninfo == nexp, "number of type rows", NULL, (long)ninfo, (long)nexp);

    /* Every row is expected, unique, and has the expected size and datatype. */
    for (size_t i = 0; i < ninfo; i++) {
        const struct fsh_type_info *t = &fsh_type_infos[i];
        const struct expect *e = NULL;
        int seen = 0;

        for (size_t j = 0; j < nexp; j++) {
            if (strcmp(exp[j].name, t->name) == 0) {
                e = &exp[j];
            }
        }
        for (size_t j = 0; j < ninfo; j++) {
            seen += strcmp(fsh_type_infos[j].name, t->name) == 0;
        }
        CHECK_ROW(seen == 1, "occurrences of name", t->name, seen, 1);
        CHECK_ROW(e != NULL, "row is a spec type", t->name, 0, 1);
        if (e == NULL) {
            continue;
        }
        CHECK_ROW(t->size == e->size, "size", t->name, (long)t->size, (long)e->size);
        CHECK_ROW(t->is_signed == e->is_signed, "signedness", t->name, t->is_signed, e->is_signed);
        CHECK_ROW(t->kind == e->kind, "kind", t->name, t->kind, e->kind);
        int dt = row_dt(t);
        CHECK_ROW(dt == e->fi_dt, "fi datatype", t->name, dt, e->fi_dt);
        CHECK_ROW(dt >= 0 && fi_size(dt) == t->size, "fi datatype size", t->name, (long)fi_size(dt),
              (long)t->size);
    }
    /* ... and every expected type is in the table. */
    for (size_t j = 0; j < nexp; j++) {
        int found = 0;

        for (size_t i = 0; i < ninfo; i++) {
            found += strcmp(exp[j].name, fsh_type_infos[i].name) == 0;
        }
        CHECK_ROW(found == 1, "rows named", exp[j].name, found, 1);
    }

    /* The datatype rule on its own, including what must not map. */
    CHECK_ROW(fsh_xport_datatype(1, true, false, false) == FI_INT8, "datatype(1, signed)", NULL,
          fsh_xport_datatype(1, true, false, false), FI_INT8);
    CHECK_ROW(fsh_xport_datatype(8, false, false, false) == FI_UINT64, "datatype(8, unsigned)",
              NULL,
          fsh_xport_datatype(8, false, false, false), FI_UINT64);
    CHECK_ROW(fsh_xport_datatype(3, true, false, false) == -1, "datatype(3 bytes)", NULL,
          fsh_xport_datatype(3, true, false, false), -1);
    CHECK_ROW(fsh_xport_datatype(2, true, true, false) == -1, "datatype(2-byte float)", NULL,
          fsh_xport_datatype(2, true, true, false), -1);
    CHECK_ROW(fsh_xport_datatype(2 * sizeof(float), true, false, true) == FI_FLOAT_COMPLEX,
          "datatype(float complex)", NULL,
          fsh_xport_datatype(2 * sizeof(float), true, false, true), FI_FLOAT_COMPLEX);

    /* Column memberships: the sizes of the spec's tables. */
    static const struct {
        unsigned col;
        const char *name;
        int want;
    } cols[] = {
        {FSH_COL_RMA, "RMA types", 24},
        {FSH_COL_AMO, "standard AMO types", 12},
        {FSH_COL_EXTAMO, "extended AMO types", 14},
        {FSH_COL_BITAMO, "bitwise AMO types", 7},
        {FSH_COL_SYNC, "point-to-point sync types", 14},
        {FSH_COL_RBIT, "and/or/xor reduction types", 14},
        {FSH_COL_RMINMAX, "min/max reduction types", 24},
        {FSH_COL_RARITH, "sum/prod reduction types", 26},
        /* the 14 basic C types and the 2 complex ones: the types the first _Generic selection
         * lists (the exact-width typedefs have a second; size_t and ptrdiff_t need none) */
        {FSH_COL_GENERIC, "_Generic types", 16},
    };
    for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
        int n = 0;

        for (size_t i = 0; i < ninfo; i++) {
            n += (fsh_type_infos[i].cols & cols[c].col) != 0;
        }
        CHECK_ROW(n == cols[c].want, "count", cols[c].name, n, cols[c].want);
    }
    /* Every AMO type is also an RMA type, and the extended AMO types include the standard ones. */
    for (size_t i = 0; i < ninfo; i++) {
        unsigned k = fsh_type_infos[i].cols;

        CHECK_ROW(!(k & (FSH_COL_AMO | FSH_COL_EXTAMO | FSH_COL_BITAMO)) || (k & FSH_COL_RMA),
              "AMO type without RMA", fsh_type_infos[i].name, 0, 1);
        CHECK_ROW(!(k & FSH_COL_AMO) || (k & FSH_COL_EXTAMO), "standard AMO type not extended",
              fsh_type_infos[i].name, 0, 1);
    }

    if (unit_failures) {
        printf("test_types: FAIL (%d checks failed)\n", unit_failures);
        return 1;
    }
    printf("test_types: PASS (%zu types)\n", ninfo);
    return 0;
}
