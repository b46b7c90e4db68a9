#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# cxx_reject.sh: the C++ overloads of shmem.h, like the C11 generics (generic_reject.sh), must
# refuse a type outside the routine's spec table: each case below is a one-line call that has
# to fail with "no matching function" (so a typo in the case cannot pass for a refusal; g++
# says "invalid conversion from" instead where one candidate differs only in signedness), and
# controls of the same shapes must compile. Cases C++ adds: pointers of two types, a
# std::complex<long double> reduction, shmem_sync with neither a team nor the four arguments.
# Run by `make check` with top_srcdir, top_builddir and CXX set; exits 0 pass, 1 fail, 77 skip.

top_srcdir=${top_srcdir:-${0%/*}/../..}
top_builddir=${top_builddir:-.}
cxx=${CXX:-c++}
name=cxx_reject

if ! command -v "${cxx%% *}" >/dev/null 2>&1; then
    echo "$name: SKIP (no C++ compiler: set CXX)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cxx_reject.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# compile BODY: 0 when the function with BODY compiles; the compiler's errors in $tmp/err.
compile() {
    cat >"$tmp/case.cc" <<EOC
#include <shmem.h>
struct pair { int a, b; };
float f[4]; std::complex<double> z[4]; std::complex<long double> zl[4]; long double ld[4];
pair st[4]; short sh[4]; char ch[4]; unsigned int ui[4]; double d[4]; long l[4]; int i[4];
int32_t i32[4]; int64_t i64[4];
void f_case();
void f_case() { $1; }
EOC
    # shellcheck disable=SC2086 # CXX may carry flags
    $cxx -std=c++11 -Wno-deprecated-declarations -I"$top_builddir/include" \
        -I"$top_srcdir/include" -c -o "$tmp/case.o" "$tmp/case.cc" 2>"$tmp/err"
}

fails=0
# Controls: the same shapes on types of the tables compile.
for ok in 'shmem_atomic_and(ui, 1u, 0)' 'shmem_atomic_and(i32, 1, 0)' \
    'shmem_atomic_fetch_xor(SHMEM_CTX_DEFAULT, i64, 1, 0)' \
    'shmem_sum_reduce(SHMEM_TEAM_WORLD, z, z, 4)' 'shmem_put(l, l, 4, 0)' \
    'shmem_finc(l, 0)' 'shmem_sync(SHMEM_TEAM_WORLD)' 'shmem_sync(0, 0, 1, l)' \
    'shmem_wait_until(ch + 0 == 0 ? sh : sh, SHMEM_CMP_EQ, 0)'; do
    if ! compile "$ok"; then
        echo "  $name: FAIL (control does not compile: $ok)"
        sed 's/^/    /' "$tmp/err" | head -n 5
        fails=$((fails + 1))
    fi
done
# generic_reject.sh's cases, then C++'s own.
for bad in 'shmem_atomic_and(f, 1.0f, 0)' 'shmem_atomic_fetch_or(SHMEM_CTX_DEFAULT, sh, 1, 0)' \
    'shmem_atomic_swap(st, st[0], 0)' 'shmem_atomic_fetch_inc(d, 0)' \
    'shmem_and_reduce(SHMEM_TEAM_WORLD, ld, ld, 4)' 'shmem_xor_reduce(SHMEM_TEAM_WORLD, f, f, 4)' \
    'shmem_max_reduce(SHMEM_TEAM_WORLD, z, z, 4)' 'shmem_put(st, st, 4, 0)' \
    'shmem_wait_until(ch, SHMEM_CMP_EQ, 0)' 'shmem_finc(ui, 0)' 'shmem_sync(0, 0)' \
    'shmem_sum_exscan(SHMEM_TEAM_WORLD, st, st, 4)' \
    'shmem_put(l, i, 4, 0)' 'shmem_get(SHMEM_CTX_DEFAULT, i, f, 4, 0)' \
    'shmem_sum_reduce(SHMEM_TEAM_WORLD, zl, zl, 4)' 'shmem_atomic_fetch(ld, 0)' \
    'shmem_test(f, SHMEM_CMP_EQ, 0)' 'shmem_sync(SHMEM_CTX_DEFAULT)' \
    'shmem_atomic_compare_swap_nbi(i, l, 0, 1, 0)' 'shmem_swap(ui, 1u, 0)'; do
    if compile "$bad"; then
        echo "  $name: FAIL (compiles, but the type is not in the routine's table: $bad)"
        fails=$((fails + 1))
    elif ! grep -q -e "no matching function" -e "invalid conversion from" "$tmp/err"; then
        echo "  $name: FAIL (refused, but not for want of an overload: $bad)"
        sed 's/^/    /' "$tmp/err" | head -n 5
        fails=$((fails + 1))
    fi
done
if [ "$fails" -gt 0 ]; then
    echo "$name: FAIL ($fails cases)"
    exit 1
fi
echo "$name: PASS"
