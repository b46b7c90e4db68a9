#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# layers_cycles.sh: layers.sh finds an include cycle within a layer. On a copy of the tree's
# runtime/, collectives/, include/ listing, docs/architecture.md and tests/unit/layers.allow,
# layers.sh must pass unchanged, then fail naming the cycle once an include closes one: the two
# that issue 37 removed from collectives/ (notify.c including team.h; team.c including coll.h,
# which includes team.h) and one in the operations layer (amo.c including lock.h). Run by
# `make check` with top_srcdir set; exits 0 pass, 1 fail.

top_srcdir=${top_srcdir:-${0%/*}/../..}
name=layers_cycles
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers_cycles.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# A fresh copy of what layers.sh reads.
copy() {
    rm -rf "$tmp/tree"
    mkdir -p "$tmp/tree/docs" "$tmp/tree/tests/unit" "$tmp/tree/include/table" \
        "$tmp/tree/runtime" "$tmp/tree/collectives" || exit 1
    for f in "$top_srcdir"/runtime/*.[ch] "$top_srcdir"/runtime/*.def \
        "$top_srcdir"/collectives/*.[ch]; do
        [ -f "$f" ] && cp "$f" "$tmp/tree/${f#"$top_srcdir"/}"
    done
    cp "$top_srcdir/docs/architecture.md" "$tmp/tree/docs/" || exit 1
    cp "$top_srcdir/tests/unit/layers.allow" "$tmp/tree/tests/unit/" || exit 1
    for f in "$top_srcdir"/include/* "$top_srcdir"/include/table/*; do
        [ -f "$f" ] || continue
        case $f in
        */table/*) : >"$tmp/tree/include/table/${f##*/}" ;;
        *) : >"$tmp/tree/include/${f##*/}" ;;
        esac
    done
}

# run CASE FILE INCLUDE WANT: FILE of the copy gets `#include "INCLUDE"` after its first
# include; layers.sh must fail and print WANT (empty FILE: the copy as it is, which must pass).
failed=0
run() {
    copy
    if [ -n "$2" ]; then
        awk -v inc="$3" '{ print } !done && /^#include / { print "#include \"" inc "\""; done = 1 }' \
            "$tmp/tree/$2" >"$tmp/edited" && cp "$tmp/edited" "$tmp/tree/$2" || exit 1
    fi
    out=$(top_srcdir="$tmp/tree" sh "$top_srcdir/tests/unit/layers.sh" 2>&1)
    rc=$?
    if [ -z "$2" ]; then
        if [ $rc -ne 0 ]; then
            echo "$name: FAIL ($1: layers.sh fails on the unchanged copy)"
            echo "$out" | sed 's/^/    /'
            failed=1
        fi
    elif [ $rc -eq 0 ]; then
        echo "$name: FAIL ($1: layers.sh passes with $2 including $3)"
        failed=1
    elif ! echo "$out" | grep -qF "$4"; then
        echo "$name: FAIL ($1: layers.sh fails without naming '$4')"
        echo "$out" | sed 's/^/    /'
        failed=1
    fi
}

run unchanged "" "" ""
run notify-team collectives/notify.c team.h "include cycle among notify team"
run team-coll collectives/team.c coll.h "include cycle among coll team"
run amo-lock runtime/amo.c lock.h "include cycle among amo lock"
[ $failed -eq 0 ] || exit 1
echo "$name: PASS (the tree passes; 3 include cycles put into a copy are each found and named)"
