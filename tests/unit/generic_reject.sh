#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# generic_reject.sh: a generic routine called on a type outside its spec table must not compile,
# in C (the C11 generics) and in C++ (shmem.h's overloads). Each case below is a one-line call
# that has to be refused, and for the right reason, so a typo in the case cannot pass for a
# refusal: in C by the header's _Generic selection (the error names the selection,
# fsh_generic_type_not_in_spec_table or, for shmem_sync, shmem_team_sync), in C++ for want of
# an overload ("no matching function"; g++ says "invalid conversion from" where one candidate
# differs only in signedness). Controls of the same shapes must compile. C++ adds cases of its
# own (pointers of two types, std::complex<long double>, shmem_sync on a context).
# Run by `make check` with top_srcdir, CC and CXX set; exits 0 pass, 1 fail, 77 skip. Without a
# C++ compiler only C is checked.

top_srcdir=${top_srcdir:-${0%/*}/../..}
# fabshmem_version.h is configured into the build tree (a VPATH build keeps it apart from shmem.h).
top_builddir=${top_builddir:-.}
cc=${CC:-cc}
cxx=${CXX:-c++}
name=generic_reject

if ! command -v "${cc%% *}" >/dev/null 2>&1; then
    echo "$name: SKIP (no C compiler: set CC)"
    exit 77
fi
langs=c
command -v "${cxx%% *}" >/dev/null 2>&1 && langs="c cc"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/generic_reject.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# compile LANG BODY: 0 when the function with BODY compiles as LANG (c or cc); the compiler's
# errors in $tmp/err.
compile() {
    if [ "$1" = c ]; then
        set -- "$1" "$2" "$cc -std=c11" 'double _Complex' 'long double _Complex' 'struct pair' void
    else
        set -- "$1" "$2" "$cxx -std=c++11" 'std::complex<double>' 'std::complex<long double>' \
            pair ''
    fi
    cat >"$tmp/case.$1" <<EOC
#include <shmem.h>
struct pair { int a, b; };
float f[4]; $4 z[4]; $5 zl[4]; long double ld[4]; $6 st[4]; short sh[4];
char ch[4]; unsigned int ui[4]; double d[4]; long l[4]; int i[4]; int32_t i32[4]; int64_t i64[4];
void f_case($7);
void f_case($7) { $2; }
EOC
    # shellcheck disable=SC2086 # CC and CXX may carry flags
    $3 -Wno-deprecated-declarations -I"$top_builddir/include" -I"$top_srcdir/include" \
        -c -o "$tmp/case.o" "$tmp/case.$1" 2>"$tmp/err"
}

# Controls: the same shapes on types of the tables compile.
controls='shmem_atomic_and(ui, 1u, 0)|shmem_atomic_and(i32, 1, 0)|shmem_sum_reduce(SHMEM_TEAM_WORLD, z, z, 4)|shmem_put(l, l, 4, 0)|shmem_finc(l, 0)|shmem_finc(ui, 0)|shmem_sync(SHMEM_TEAM_WORLD)|shmem_atomic_fetch_xor(SHMEM_CTX_DEFAULT, i64, 1, 0)'
# Each: a bitwise AMO on float and on short, a swap on a struct, fetch_inc on double, an
# and-reduction on long double and float, max on a complex, put of structs, wait_until on
# char, the deprecated finc on double, shmem_sync with neither 1 nor 4 arguments, an
# exscan of structs.
cases='shmem_atomic_and(f, 1.0f, 0)|shmem_atomic_fetch_or(SHMEM_CTX_DEFAULT, sh, 1, 0)|shmem_atomic_swap(st, st[0], 0)|shmem_atomic_fetch_inc(d, 0)|shmem_and_reduce(SHMEM_TEAM_WORLD, ld, ld, 4)|shmem_xor_reduce(SHMEM_TEAM_WORLD, f, f, 4)|shmem_max_reduce(SHMEM_TEAM_WORLD, z, z, 4)|shmem_put(st, st, 4, 0)|shmem_wait_until(ch, SHMEM_CMP_EQ, 0)|shmem_finc(d, 0)|shmem_sync(0, 0)|shmem_sum_exscan(SHMEM_TEAM_WORLD, st, st, 4)'
# C++'s own: a put between pointers of two types, a complex type of no row, a fetch on long
# double, test on float, shmem_sync on a context, mixed pointers in an _nbi AMO, the
# deprecated swap on short.
cxx_cases='shmem_put(l, i, 4, 0)|shmem_get(SHMEM_CTX_DEFAULT, i, f, 4, 0)|shmem_sum_reduce(SHMEM_TEAM_WORLD, zl, zl, 4)|shmem_atomic_fetch(ld, 0)|shmem_test(f, SHMEM_CMP_EQ, 0)|shmem_sync(SHMEM_CTX_DEFAULT)|shmem_atomic_compare_swap_nbi(i, l, 0, 1, 0)|shmem_swap(sh, (short)1, 0)'

fails=0
IFS_SAVE=$IFS
for lang in $langs; do
    # The refusals' words, one a line, for grep -f.
    if [ "$lang" = c ]; then
        printf '%s\n' _Generic fsh_generic_type_not_in_spec_table shmem_team_sync >"$tmp/refusal"
        bad=$cases
    else
        printf '%s\n' 'no matching function' 'invalid conversion from' >"$tmp/refusal"
        bad="$cases|$cxx_cases"
    fi
    IFS='|'
    for ok in $controls; do
        IFS=$IFS_SAVE
        if ! compile "$lang" "$ok"; then
            echo "  $name: FAIL ($lang: control does not compile: $ok)"
            sed 's/^/    /' "$tmp/err" | head -n 5
            fails=$((fails + 1))
        fi
    done
    IFS='|'
    for b in $bad; do
        IFS=$IFS_SAVE
        if compile "$lang" "$b"; then
            echo "  $name: FAIL ($lang: compiles, but the type is not in the routine's table: $b)"
            fails=$((fails + 1))
        elif ! grep -q -f "$tmp/refusal" "$tmp/err"; then
            echo "  $name: FAIL ($lang: refused, but not by the generic selection: $b)"
            sed 's/^/    /' "$tmp/err" | head -n 5
            fails=$((fails + 1))
        fi
    done
    IFS=$IFS_SAVE
done
if [ "$fails" -gt 0 ]; then
    echo "$name: FAIL ($fails cases)"
    exit 1
fi
echo "$name: PASS ($langs)"
