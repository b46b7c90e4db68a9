#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# api_symbols.sh: the exported symbols of libfabshmem.so against tests/data/shmem_api_symbols.txt.
#
# The list is data, generated once from the spec's tables and reviewed: every routine in it must
# be exported as a function (none may go missing when the type table or a macro changes), and
# nothing else may be exported except shmemx_* extensions and the SHMEM_CTX_DEFAULT,
# SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED objects, so internal fsh_* symbols hidden by
# -fvisibility=hidden stay hidden.
# Run by `make check` with top_srcdir and top_builddir set; exits 0 pass, 1 fail, 77 skip.

top_srcdir=${top_srcdir:-${0%/*}/../..}
top_builddir=${top_builddir:-.}
list=$top_srcdir/tests/data/shmem_api_symbols.txt
lib=$top_builddir/.libs/libfabshmem.so
la=$top_builddir/libfabshmem.la

fail() {
    echo "api_symbols: FAIL ($1)"
    exit 1
}

if ! command -v nm >/dev/null 2>&1; then
    echo "api_symbols: SKIP (nm not found: install binutils)"
    exit 77
fi
if [ ! -r "$list" ]; then
    fail "cannot read $list"
fi
if [ ! -e "$lib" ]; then
    # A static-only build (--disable-shared) has no dynamic symbol table to check.
    if [ -r "$la" ] && grep -q "^dlname=''" "$la"; then
        echo "api_symbols: SKIP (no shared library: built with --disable-shared)"
        exit 77
    fi
    fail "$lib not found: build the library first"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/api_symbols.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# The list must be sorted and free of duplicates for comm, and to keep diffs of it readable.
LC_ALL=C sort -u "$list" >"$tmp/want"
if ! cmp -s "$tmp/want" "$list"; then
    fail "$list is not sorted with LC_ALL=C sort -u"
fi

if ! nm -D --defined-only "$lib" >"$tmp/nm" 2>"$tmp/nm.err"; then
    cat "$tmp/nm.err"
    fail "nm -D failed on $lib"
fi
# Lines are "ADDRESS TYPE NAME[@VERSION]". T/W/i are code (global, weak, ifunc); A marks
# linker-made absolute symbols (version nodes); _init, _fini, _edata, _end and __bss_start are
# the linker's own, exported by some binutils versions. Everything else is a data object.
awk -v funcs="$tmp/funcs" -v others="$tmp/others" '
    NF >= 3 {
        name = $3
        sub(/@.*/, "", name)
        if ($2 == "A" || name ~ /^(_init|_fini|_edata|_end|__bss_start)$/) {
            next
        }
        if ($2 == "T" || $2 == "W" || $2 == "i") {
            print name >funcs
        } else {
            print name >others
        }
    }' "$tmp/nm"
touch "$tmp/funcs" "$tmp/others"
LC_ALL=C sort -u "$tmp/funcs" >"$tmp/have"
LC_ALL=C sort -u "$tmp/funcs" "$tmp/others" >"$tmp/all"

LC_ALL=C comm -23 "$tmp/want" "$tmp/have" >"$tmp/missing"
LC_ALL=C comm -13 "$tmp/want" "$tmp/all" |
    grep -v -e '^shmemx_' -e '^SHMEM_CTX_DEFAULT$' -e '^SHMEM_TEAM_WORLD$' \
        -e '^SHMEM_TEAM_SHARED$' >"$tmp/extra"
nmissing=$(wc -l <"$tmp/missing" | tr -d ' ')
nextra=$(wc -l <"$tmp/extra" | tr -d ' ')
nwant=$(wc -l <"$tmp/want" | tr -d ' ')

# SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED are the objects the spec requires
# the library to define (shmem.h declares them extern).
nctx=0
for obj in SHMEM_CTX_DEFAULT SHMEM_TEAM_WORLD SHMEM_TEAM_SHARED; do
    if ! grep -qx "$obj" "$tmp/others"; then
        echo "not exported as an object: $obj"
        nctx=1
    fi
done
while read -r sym; do
    echo "missing: $sym"
done <"$tmp/missing"
while read -r sym; do
    echo "exported but not in the list: $sym"
done <"$tmp/extra"

# The profiling interface: every listed routine has two names, the implementation strong
# under p<name> (pshmem_putmem, pstart_pes) and <name> a weak alias of it, so that a tool may
# define <name> and forward to p<name>.
awk '$2 == "W" { sub(/@.*/, "", $3); print $3 }' "$tmp/nm" | LC_ALL=C sort -u >"$tmp/weak"
grep -v '^p' "$tmp/want" >"$tmp/want_shmem" || true
LC_ALL=C comm -23 "$tmp/want_shmem" "$tmp/weak" | sed 's/^/not a weak alias (no tool could replace it): /' >"$tmp/bad_prof"
sed 's/^/p/' "$tmp/want_shmem" | LC_ALL=C sort | LC_ALL=C comm -23 - "$tmp/want" |
    sed 's/^/no profiling twin listed: /' >>"$tmp/bad_prof"
grep '^p' "$tmp/weak" | sed 's/^/a profiling name is weak: /' >>"$tmp/bad_prof" || true
cat "$tmp/bad_prof"
nweak=$(wc -l <"$tmp/bad_prof" | tr -d ' ')

if [ "$nmissing" -ne 0 ] || [ "$nextra" -ne 0 ] || [ "$nctx" -ne 0 ] || [ "$nweak" -ne 0 ]; then
    fail "$nmissing missing, $nextra unexpected, of $nwant listed; list: $list"
fi
echo "api_symbols: PASS ($nwant symbols)"
exit 0
