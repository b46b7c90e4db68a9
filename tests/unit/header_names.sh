#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# header_names.sh: shmem.h leaves the program's own names alone. It must not define I and
# complex (<complex.h> does, so a program with `int I = 1;` would not compile), and it must compile on its own as C11 (with the complex reductions' prototypes)
# and, when a C++ compiler is there, as C++.
# Run by `make check` with top_srcdir, top_builddir (the configured fabshmem_version.h), CC
# (and CXX) set; exits 0 pass, 1 fail, 77 skip.

top_srcdir=${top_srcdir:-${0%/*}/../..}
top_builddir=${top_builddir:-.}
cc=${CC:-cc}
cxx=${CXX:-c++}
name=header_names

if ! command -v "${cc%% *}" >/dev/null 2>&1; then
    echo "$name: SKIP (no C compiler: set CC)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/header_names.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/names.c" <<'EOC'
#include <shmem.h>
/* Names <complex.h> would take: a program that uses them for itself must compile. */
int I = 1;
int complex = 2;
int use(void);
int use(void) { return I + complex; }
/* The complex reductions still take the C99 types, spelled without the header. */
void sum(double _Complex *d, const double _Complex *s);
void sum(double _Complex *d, const double _Complex *s)
{
    shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, d, s, 1);
}
EOC

fails=0
# shellcheck disable=SC2086 # CC may carry flags
if ! $cc -std=c11 -Wall -Werror -I"$top_builddir/include" -I"$top_srcdir/include" -c -o "$tmp/names.o" "$tmp/names.c" \
    2>"$tmp/err"; then
    echo "$name: FAIL (C: a program using I and complex for itself does not compile)"
    sed 's/^/    /' "$tmp/err" | head -20
    fails=$((fails + 1))
fi
if command -v "${cxx%% *}" >/dev/null 2>&1; then
    printf '#include <shmem.h>\nint I = 1;\nint complex = 2;\nint main() { return I + complex - 3; }\n' \
        >"$tmp/names.cc"
    # shellcheck disable=SC2086
    if ! $cxx -Wall -Werror -I"$top_builddir/include" -I"$top_srcdir/include" -c -o "$tmp/names_cc.o" "$tmp/names.cc" \
        2>"$tmp/err"; then
        echo "$name: FAIL (C++: shmem.h with I and complex as the program's names)"
        sed 's/^/    /' "$tmp/err" | head -20
        fails=$((fails + 1))
    fi
fi
if [ "$fails" -eq 0 ]; then
    echo "$name: PASS"
    exit 0
fi
exit 1
