#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# layers.sh: the layering rule holds. The layers are written once, in docs/architecture.md's
# fenced block ```layers (`layer N: module ...`, a higher N is a higher layer; a module is
# every file of runtime/ and collectives/ with that name before its extension: x.c, x.h, x.def).
# Every `#include "..."` in those files must name a file of the same layer or a lower one, or
# a public header (include/) or config.h; every file must belong to a layer; and no file above
# the layer of xport (the transport) may include <rdma/...> or name libfabric (fi_*(), FI_*,
# struct fid*, enum fi_*, fi_addr_t) outside comments and strings. Nor may includes form a
# cycle, within a layer too (x.c or x.h including y.h makes module x depend on module y). The
# exceptions known today are in tests/unit/layers.allow (`file -> header` or `cycle: a b c`,
# with why and what removes it): each must still occur, so the list only shrinks. Run by
# `make check` with top_srcdir set; exits 0 pass, 1 fail.

top_srcdir=${top_srcdir:-${0%/*}/../..}
name=layers
doc=$top_srcdir/docs/architecture.md
allow=$top_srcdir/tests/unit/layers.allow

for f in "$doc" "$allow"; do
    if [ ! -f "$f" ]; then
        echo "$name: FAIL (no $f)"
        exit 1
    fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# module layer, one per line, from the document's block (comments after # dropped).
awk '/^```layers[ \t]*$/ { on = 1; next }
     on && /^```/ { exit }
     on {
         sub(/#.*/, "")
         if ($1 != "layer") { next }
         n = $2
         sub(/:$/, "", n)
         for (i = 3; i <= NF; i++) { print $i, n }
     }' "$doc" >"$tmp/layers"
if [ ! -s "$tmp/layers" ]; then
    echo "$name: FAIL (docs/architecture.md has no \`\`\`layers block of 'layer N: module ...' lines)"
    exit 1
fi

# Every include of a source file, as: file line "header" or <header>.
(
    cd "$top_srcdir" || exit 1
    for f in runtime/*.c runtime/*.h runtime/*.def collectives/*.c collectives/*.h; do
        [ -f "$f" ] && echo "$f"
    done >"$tmp/files"
    while read -r f; do
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$f" |
            sed -n 's/^\([0-9]*\):[^"<]*\(["<][^">]*[">]\).*/\1 \2/p' |
            while read -r line inc; do echo "$f $line $inc"; done
    done <"$tmp/files"
) >"$tmp/includes" || exit 1
# The public headers: include/'s, and those written from include/table/ into the build tree.
{ ls "$top_srcdir/include"; ls "$top_srcdir/include/table"; } >"$tmp/public"

# Judge each include; a violation is printed as `file -> header` (the allowlist's key), a tab,
# and the explanation.
awk -v layers="$tmp/layers" -v files="$tmp/files" -v public="$tmp/public" '
    function base(p) { sub(/.*\//, "", p); return p }
    function module(p) { p = base(p); sub(/\.[^.]*$/, "", p); return p }
    BEGIN {
        while ((getline l < layers) > 0) {
            split(l, w, " ")
            if (w[1] in layer) {
                print "docs/architecture.md: module " w[1] " is in layers " layer[w[1]] " and " w[2] > "/dev/stderr"
                bad = 1
            }
            layer[w[1]] = w[2] + 0
        }
        while ((getline l < files) > 0) { tree[base(l)] = 1; nfiles++; file[nfiles] = l }
        while ((getline l < public) > 0) { pub[l] = 1; sub(/\.in$/, "", l); pub[l] = 1 }
        xport = ("xport" in layer) ? layer["xport"] : -1
        for (i = 1; i <= nfiles; i++) { has[module(file[i])] = 1 }
        for (m in layer) {
            if (!(m in has)) {
                print "docs/architecture.md: module " m " (layer " layer[m] ") has no file" > "/dev/stderr"
                bad = 1
            }
        }
        for (i = 1; i <= nfiles; i++) {
            if (!(module(file[i]) in layer)) {
                printf "%s -> (no layer)\t%s belongs to no layer of docs/architecture.md\n", file[i], file[i]
            }
        }
    }
    {
        f = $1; line = $2; inc = $3
        if (!(module(f) in layer)) { next }
        me = layer[module(f)]
        h = inc
        gsub(/[<>"]/, "", h)
        if (inc ~ /^</) {
            if (h ~ /^rdma\// && me > xport) {
                printf "%s -> %s\t%s:%s: %s (layer %d) includes %s above the transport (xport, layer %d)\n", f, inc, f, line, f, me, inc, xport
            }
            next
        }
        checked++
        if (base(h) in tree) {
            them = layer[module(h)]
            if (them > me) {
                printf "%s -> %s\t%s:%s: %s (layer %d) includes %s of a higher layer (%d)\n", f, h, f, line, f, me, h, them
            }
        } else if (!(h in pub) && h != "config.h") {
            printf "%s -> %s\t%s:%s: %s is neither a file of runtime/ or collectives/ nor a public header\n", f, h, f, line, h
        }
    }
    END { print checked > "/dev/stderr"; exit bad }
' "$tmp/includes" >"$tmp/found" 2>"$tmp/checked" || {
    echo "$name: FAIL (docs/architecture.md's layers block names a module twice, or one without files)"
    sed -e '$d' -e 's/^/    /' "$tmp/checked"
    exit 1
}
checked=$(tail -n 1 "$tmp/checked")

# No include cycle either, within a layer too. Module x depends on module y when a file of x
# includes a file of y (x.c or x.h including y.h); a set of modules each of which reaches every
# other through such includes is one finding, keyed `cycle: a b c` (its modules, sorted), and
# explained by the includes inside the set.
awk -v files="$tmp/files" '
    function module(p) { sub(/.*\//, "", p); sub(/\.[^.]*$/, "", p); return p }
    BEGIN {
        while ((getline l < files) > 0) {
            m = module(l)
            sub(/.*\//, "", l)
            mod[l] = m
            if (!(m in id)) { id[m] = ++n; name[n] = m }
        }
    }
    $3 ~ /^"/ {
        h = $3
        gsub(/"/, "", h)
        sub(/.*\//, "", h)
        if (!(h in mod)) { next }
        a = id[module($1)]; b = id[mod[h]]
        if (a == b) { next }
        if ((a, b) in edge) { edge[a, b] = edge[a, b] ", " }
        edge[a, b] = edge[a, b] $1 ":" $2 " includes " h
        reach[a, b] = 1
    }
    END {
        for (k = 1; k <= n; k++) {
            for (i = 1; i <= n; i++) {
                if (!((i, k) in reach)) { continue }
                for (j = 1; j <= n; j++) {
                    if ((k, j) in reach) { reach[i, j] = 1 }
                }
            }
        }
        for (i = 1; i <= n; i++) {
            if (!((i, i) in reach) || (i in done)) { continue }
            c = 0
            for (j = 1; j <= n; j++) {
                if (j == i || ((i, j) in reach && (j, i) in reach)) { done[j] = 1; set[++c] = name[j] }
            }
            for (p = 2; p <= c; p++) {
                for (q = p; q > 1 && set[q - 1] > set[q]; q--) { t = set[q]; set[q] = set[q - 1]; set[q - 1] = t }
            }
            key = "cycle:"
            for (p = 1; p <= c; p++) { key = key " " set[p] }
            for (a = 1; a <= n; a++) {
                for (b = 1; b <= n; b++) {
                    if ((a, b) in edge && (a, i) in reach && (i, a) in reach &&
                        (b, i) in reach && (i, b) in reach) {
                        printf "%s\tinclude cycle among %s: %s -> %s (%s)\n", key, substr(key, 8), name[a], name[b], edge[a, b]
                    }
                }
            }
        }
    }
' "$tmp/includes" >>"$tmp/found" || exit 1

# The allowlist's keys: `file -> header`, comments and blank lines dropped.
sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$allow" | sort -u >"$tmp/allowed"
cut -f 1 "$tmp/found" | sort -u >"$tmp/keys"

new=$(cut -f 1 "$tmp/found" | sort -u | grep -vxF -f "$tmp/allowed" || true)
gone=$(grep -vxF -f "$tmp/keys" "$tmp/allowed" || true)
if [ -n "$new$gone" ]; then
    [ -n "$new" ] && n=$(echo "$new" | wc -l) || n=0
    [ -n "$gone" ] && g=$(echo "$gone" | wc -l) || g=0
    echo "$name: FAIL ($n violation(s) of docs/architecture.md's layers or include cycle(s), $g line(s) of tests/unit/layers.allow no longer occurring)"
    [ -z "$new" ] || echo "$new" | while read -r key; do
        awk -F '\t' -v k="$key" '$1 == k { print "    " $2 }' "$tmp/found"
    done
    [ -z "$gone" ] || echo "$gone" | sed 's/^/    no longer occurs, remove from layers.allow: /'
    exit 1
fi
# Nor does a file above the transport name libfabric without including it (a header below
# could bring the names): no fi_*() call, FI_* constant, struct fid*, enum fi_* or fi_addr_t
# outside comments and string literals. No exceptions: the allowlist has none for these.
awk 'NR == FNR { layer[$1] = $2; next }
     { m = $0; sub(/.*\//, "", m); sub(/\.[^.]*$/, "", m) }
     (m in layer) && ("xport" in layer) && layer[m] > layer["xport"]' \
    "$tmp/layers" "$tmp/files" >"$tmp/above"
(
    cd "$top_srcdir" || exit 1
    # shellcheck disable=SC2046 # file names of runtime/ and collectives/ have no spaces
    awk -v q="'" '
        # The line without its comments and literals (a block comment may span lines).
        function code(s, out, c) {
            out = ""
            while (s != "") {
                if (incomment) {
                    if (!index(s, "*/")) { return out }
                    s = substr(s, index(s, "*/") + 2)
                    incomment = 0
                    continue
                }
                if (!match(s, "/[*]|//|\"|" q)) { return out s }
                out = out substr(s, 1, RSTART - 1)
                c = substr(s, RSTART, RLENGTH)
                s = substr(s, RSTART)
                if (c == "//") { return out }
                if (c == "/*") { incomment = 1; s = substr(s, 3); continue }
                s = match(s, "^" c "([^\\\\" c "]|\\\\.)*" c) ? substr(s, RLENGTH + 1) : ""
                out = out c c
            }
            return out
        }
        FNR == 1 { incomment = 0 }
        code($0) ~ /(^|[^A-Za-z0-9_])(fi_[a-z0-9_]+[ \t]*\(|FI_[A-Z0-9_]+|struct[ \t]+fid|enum[ \t]+fi_|fi_addr_t)/ {
            print "    " FILENAME ":" FNR ": " $0
        }' $(cat "$tmp/above")
) >"$tmp/names" || exit 1
if [ -s "$tmp/names" ]; then
    echo "$name: FAIL (libfabric names above the transport, xport: give them a place in xport, fabric, mr or progress)"
    cat "$tmp/names"
    exit 1
fi
echo "$name: PASS ($checked includes checked, no include cycle but $(grep -c '^cycle:' "$tmp/allowed") known, $(grep -vc '^cycle:' "$tmp/allowed") other known violations allowed, $(wc -l <"$tmp/above") files above the transport free of libfabric names)"
