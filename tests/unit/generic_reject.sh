#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# generic_reject.sh: a C11 generic routine called on a type outside its spec table must not
# compile. Each case below is a one-line call that the header's _Generic selection has to
# refuse (naming the selection, fsh_generic_type_not_in_spec_table or, for shmem_sync,
# shmem_team_sync in the error, so a typo in the case cannot pass for a refusal); controls of
# the same shapes must compile.
# Run by `make check` with top_srcdir and CC set; exits 0 pass, 1 fail, 77 skip.

top_srcdir=${top_srcdir:-${0%/*}/../..}
# fabshmem_version.h is configured into the build tree (a VPATH build keeps it apart from shmem.h).
top_builddir=${top_builddir:-.}
cc=${CC:-cc}
name=generic_reject

if ! command -v "${cc%% *}" >/dev/null 2>&1; then
    echo "$name: SKIP (no C compiler: set CC)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/generic_reject.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# compile BODY: 0 when the function with BODY compiles; the compiler's errors in $tmp/err.
compile() {
    cat >"$tmp/case.c" <<EOC
#include <shmem.h>
struct pair { int a, b; };
float f[4]; double _Complex z[4]; long double ld[4]; struct pair st[4]; short sh[4];
char ch[4]; unsigned int ui[4]; double d[4]; long l[4]; int32_t i32[4];
void f_case(void);
void f_case(void) { $1; }
EOC
    # shellcheck disable=SC2086 # CC may carry flags
    $cc -std=c11 -Wno-deprecated-declarations -I"$top_builddir/include" \
        -I"$top_srcdir/include" -c -o "$tmp/case.o" \
        "$tmp/case.c" 2>"$tmp/err"
}

fails=0
# Controls: the same shapes on types of the tables compile.
for ok in 'shmem_atomic_and(ui, 1u, 0)' 'shmem_atomic_and(i32, 1, 0)' \
    'shmem_sum_reduce(SHMEM_TEAM_WORLD, z, z, 4)' 'shmem_put(l, l, 4, 0)' \
    'shmem_finc(l, 0)' 'shmem_sync(SHMEM_TEAM_WORLD)'; do
    if ! compile "$ok"; then
        echo "  $name: FAIL (control does not compile: $ok)"
        sed 's/^/    /' "$tmp/err" | head -n 5
        fails=$((fails + 1))
    fi
done
# Each: a bitwise AMO on float and on short, a swap on a struct, fetch_inc on double, an
# and-reduction on long double and float, max on a complex, put of structs, wait_until on
# char, the deprecated finc on unsigned int, shmem_sync with neither 1 nor 4 arguments, an
# exscan of structs.
for bad in 'shmem_atomic_and(f, 1.0f, 0)' 'shmem_atomic_fetch_or(SHMEM_CTX_DEFAULT, sh, 1, 0)' \
    'shmem_atomic_swap(st, st[0], 0)' 'shmem_atomic_fetch_inc(d, 0)' \
    'shmem_and_reduce(SHMEM_TEAM_WORLD, ld, ld, 4)' 'shmem_xor_reduce(SHMEM_TEAM_WORLD, f, f, 4)' \
    'shmem_max_reduce(SHMEM_TEAM_WORLD, z, z, 4)' 'shmem_put(st, st, 4, 0)' \
    'shmem_wait_until(ch, SHMEM_CMP_EQ, 0)' 'shmem_finc(ui, 0)' 'shmem_sync(0, 0)' \
    'shmem_sum_exscan(SHMEM_TEAM_WORLD, st, st, 4)'; do
    if compile "$bad"; then
        echo "  $name: FAIL (compiles, but the type is not in the routine's table: $bad)"
        fails=$((fails + 1))
    elif ! grep -q -e "_Generic" -e "fsh_generic_type_not_in_spec_table" -e "shmem_team_sync" \
        "$tmp/err"; then
        echo "  $name: FAIL (refused, but not by the generic selection: $bad)"
        sed 's/^/    /' "$tmp/err" | head -n 5
        fails=$((fails + 1))
    fi
done
if [ "$fails" -gt 0 ]; then
    echo "$name: FAIL ($fails cases)"
    exit 1
fi
echo "$name: PASS"
