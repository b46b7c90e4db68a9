#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# cxx_headers.sh: shmem.h, pshmem.h and shmemx.h compile as C++11, C++14 and C++17 with g++ and
# clang++ (those found: $CXX, then clang++) under -Wall -Wextra -Werror -pedantic, and a
# program calling the C++ overloads compiles there: plain and ctx forms, an exact-width type
# whose routine has no standard type of its identity (int32_t for the bitwise AMOs), the
# complex reductions on std::complex, both forms of shmem_sync, a deprecated generic, the
# pshmem_ names the overloads shadow. Return types are checked by static_assert; which routine
# each call reaches is tests/mpi/cxx_generics' job. The headers must also still compile as C99
# and C11 with $CC.
# Run by `make check` with top_srcdir, top_builddir, CC and CXX set; exits 0 pass, 1 fail, 77 skip.

top_srcdir=${top_srcdir:-${0%/*}/../..}
top_builddir=${top_builddir:-.}
cc=${CC:-cc}
cxx=${CXX:-c++}
name=cxx_headers

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cxx_headers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/use.cc" <<'EOC'
#include <shmem.h>
#include <shmemx.h>
#include <pshmem.h>

#include <complex>
#include <type_traits>

#define SAME(a, b) static_assert(std::is_same<a, b>::value, #a " is not " #b)

int i[4];
int32_t i32[4];
int64_t i64[4];
unsigned long ul[4];
long double ld[4];
short sh[4];
std::complex<double> zd[4];
std::complex<float> zf[4];
long psync[SHMEM_SYNC_SIZE];

int run();
int run()
{
    shmem_put(i, i + 1, 1, 0);
    shmem_put(SHMEM_CTX_DEFAULT, ld, ld + 1, 1, 0);
    shmem_iget(ul, ul, 1, 1, 2, 0);
    shmem_ibput(SHMEM_CTX_DEFAULT, sh, sh, 2, 2, 1, 1, 0);
    shmem_put_signal(i, i, 1, reinterpret_cast<uint64_t *>(psync), 1, SHMEM_SIGNAL_ADD, 0);
    SAME(decltype(shmem_g(static_cast<const long double *>(ld), 0)), long double);
    SAME(decltype(shmem_g(SHMEM_CTX_DEFAULT, sh, 0)), short);
    SAME(decltype(shmem_atomic_fetch_and(i32, 1, 0)), int32_t);
    SAME(decltype(shmem_atomic_fetch_xor(SHMEM_CTX_DEFAULT, i64, 1, 0)), int64_t);
    SAME(decltype(shmem_atomic_compare_swap(ul, 1UL, 2UL, 0)), unsigned long);
    SAME(decltype(shmem_atomic_fetch(static_cast<const int *>(i), 0)), int);
    SAME(decltype(shmem_test_any(i, 4, nullptr, SHMEM_CMP_EQ, 0)), size_t);
    shmem_atomic_or(i, 1, 0); /* int32_t's routine: int is not in the bitwise table */
    shmem_atomic_fetch_inc_nbi(SHMEM_CTX_DEFAULT, ul, ul + 1, 0);
    shmem_wait_until(sh, SHMEM_CMP_NE, static_cast<short>(1));
    long l = 0;
    shmem_wait_until(&l, SHMEM_CMP_EQ, 0L); /* the long overload, not the deprecated C routine */
    int rc = shmem_sum_reduce(SHMEM_TEAM_WORLD, zd, zd, 4);
    rc |= shmem_prod_reduce(SHMEM_TEAM_WORLD, zf, zf, 4);
    rc |= shmem_sum_inscan(SHMEM_TEAM_WORLD, zf, zf, 4);
    rc |= shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, zd, zd, 4);
    rc |= shmem_xor_reduce(SHMEM_TEAM_WORLD, i64, i64, 4);
    rc |= shmem_broadcast(SHMEM_TEAM_WORLD, ld, ld, 4, 0);
    rc |= shmem_sync(SHMEM_TEAM_WORLD);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    shmem_sync(0, 0, 1, psync);
    rc |= shmem_finc(i, 0) + static_cast<int>(shmem_swap(&l, 1L, 0));
    shmem_complexf_prod_to_all(zf, zf, 4, 0, 0, 1, zf, psync);
    void (*aset)(int, int, int, long *) = pshmem_sync;
    long (*swp)(long *, long, int) = pshmem_swap;
#pragma GCC diagnostic pop
    void (*wu)(long *, int, long) = pshmem_wait_until;
    return rc + (aset != nullptr) + (swp != nullptr) + (wu != nullptr) + static_cast<int>(shmemx_wtime());
}
EOC
# The deprecated generics must warn where a program calls them, and only there.
cat >"$tmp/dep.cc" <<'EOC'
#include <shmem.h>
static int x;
int f();
int f() { return shmem_finc(&x, 0); }
EOC

fails=0
ran=0
compilers=$cxx
command -v clang++ >/dev/null 2>&1 && [ "${cxx%% *}" != clang++ ] && compilers="$compilers|clang++"
IFS_SAVE=$IFS
IFS='|'
for c in $compilers; do
    IFS=$IFS_SAVE
    if ! command -v "${c%% *}" >/dev/null 2>&1; then
        continue
    fi
    for std in c++11 c++14 c++17; do
        ran=$((ran + 1))
        # shellcheck disable=SC2086 # CXX may carry flags
        if ! $c -std=$std -Wall -Wextra -Werror -pedantic -I"$top_builddir/include" \
            -I"$top_srcdir/include" -c -o "$tmp/use.o" "$tmp/use.cc" 2>"$tmp/err"; then
            echo "  $name: FAIL ($c -std=$std: the headers or the overloads do not compile)"
            sed 's/^/    /' "$tmp/err" | head -n 15
            fails=$((fails + 1))
        fi
    done
    # shellcheck disable=SC2086
    $c -std=c++11 -Wall -I"$top_builddir/include" -I"$top_srcdir/include" -c -o "$tmp/dep.o" \
        "$tmp/dep.cc" 2>"$tmp/err"
    if ! grep -q "deprecated" "$tmp/err" || ! grep -q "dep.cc:4" "$tmp/err"; then
        echo "  $name: FAIL ($c: calling the deprecated shmem_finc gives no deprecation warning at the call)"
        sed 's/^/    /' "$tmp/err" | head -n 10
        fails=$((fails + 1))
    fi
    IFS='|'
done
IFS=$IFS_SAVE
if [ "$ran" -eq 0 ]; then
    echo "$name: SKIP (no C++ compiler: set CXX)"
    exit 77
fi

# C is untouched: the three headers compile as C99 and C11.
printf '#include <shmem.h>\n#include <shmemx.h>\n#include <pshmem.h>\nint f(void);\nint f(void) { return shmem_my_pe(); }\n' \
    >"$tmp/c.c"
for std in c99 c11; do
    # shellcheck disable=SC2086 # CC may carry flags
    if ! $cc -std=$std -Wall -Wextra -Werror -I"$top_builddir/include" -I"$top_srcdir/include" \
        -c -o "$tmp/c.o" "$tmp/c.c" 2>"$tmp/err"; then
        echo "  $name: FAIL ($cc -std=$std: the headers do not compile as C)"
        sed 's/^/    /' "$tmp/err" | head -n 10
        fails=$((fails + 1))
    fi
done
if [ "$fails" -gt 0 ]; then
    echo "$name: FAIL ($fails cases)"
    exit 1
fi
echo "$name: PASS ($ran C++ compiles)"
