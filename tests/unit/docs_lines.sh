#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# docs_lines.sh: the documentation stays readable in a terminal and in review: no line of
# README.md or of docs/*.md is longer than 100 characters (characters, not bytes: UTF-8
# continuation bytes are not counted). Run by `make check` with top_srcdir set; exits 0 pass,
# 1 fail, naming every line too long.

top_srcdir=${top_srcdir:-${0%/*}/../..}
name=docs_lines
max=100

if [ ! -f "$top_srcdir/README.md" ] || [ ! -f "$top_srcdir/docs/architecture.md" ]; then
    echo "$name: FAIL (no $top_srcdir/README.md or $top_srcdir/docs/architecture.md)"
    exit 1
fi
long=$(
    cd "$top_srcdir" || exit 1
    for f in README.md docs/*.md; do
        tr -d '\200-\277' <"$f" |
            LC_ALL=C awk -v f="$f" -v max="$max" 'length > max {
                print "    " f ":" NR ": " length " characters"
            }'
    done
)
nfiles=$(cd "$top_srcdir" && ls README.md docs/*.md | wc -l)
if [ -n "$long" ]; then
    echo "$name: FAIL ($(echo "$long" | wc -l) line(s) over $max characters; wrap them)"
    echo "$long"
    exit 1
fi
echo "$name: PASS ($nfiles files, no line over $max characters)"
