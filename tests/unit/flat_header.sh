#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# flat_header.sh: the public headers that are built and installed (shmem.h, pshmem.h, shmemx.h,
# written flat into the build tree's include/ by tools/gen_header) mean exactly what their
# table forms (include/table/, over the type table include/shmem_table.h) expand to. In each
# mode (C99; C11, where the _Generic macros exist; C++11 and the C++ compiler's default, where
# the overloads do) both forms are preprocessed with the same compiler and flags, and
#   - their declarations (the tokens of the three headers, system headers left out; one
#     declaration per line, whitespace that separates no names dropped) must be the same, in
#     the same order;
#   - every macro the flat headers define must expand to the same tokens in both, called with
#     each argument count it accepts (0 to 9 for a variadic one); the table form may define
#     more names only with the FSH_ prefix (its machinery), never a public one;
#   - the flat headers must hold none of the table machinery (FSH_TYPE_TABLE, FSH_IF, ...).
# The first difference fails the test and is shown from both sides.
# Run by `make check` with top_srcdir, top_builddir, CC and CXX set; exits 0 pass, 1 fail, 77 skip.

top_srcdir=${top_srcdir:-${0%/*}/../..}
top_builddir=${top_builddir:-.}
cc=${CC:-cc}
cxx=${CXX:-c++}
name=flat_header
flat=$top_builddir/include
table=$top_srcdir/include/table

for h in shmem.h pshmem.h shmemx.h; do
    if [ ! -f "$flat/$h" ] || [ ! -f "$table/$h" ]; then
        echo "$name: SKIP ($flat/$h or $table/$h missing: run make first)"
        exit 77
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/flat_header.XXXXXX") || exit 1
trap '[ -n "$FSH_KEEP" ] || rm -rf "$tmp"' EXIT

# The flat headers hold no machinery of the table form.
if grep -nE 'FSH_(TYPE_TABLE|TYPE_ROWS|SIZE_TABLE|IF2?|ROW_[A-Z]*|GSELECT|GA_[A-Za-z_]*|CXX_[A-Z_]*|DECL_[A-Z_]*|PDECL[A-Z_]*|DEPRECATED_[A-Z_]*TYPES)\(|shmem_table\.h"|flat-header:' \
    "$flat/shmem.h" "$flat/pshmem.h" "$flat/shmemx.h" >"$tmp/machinery"; then
    echo "$name: FAIL (the flat headers hold table machinery)"
    head -5 "$tmp/machinery" | sed 's/^/    /'
    exit 1
fi

printf '#include <shmem.h>\n#include <pshmem.h>\n#include <shmemx.h>\n' >"$tmp/headers.c"

# Preprocess the headers (-dD: definitions kept in place) and split what came from the
# fabshmem headers into declarations ($2.decl) and macro definitions ($2.macros).
# $1: compiler and flags, $2: output prefix, $3...: -I options.
expand_headers() {
    c=$1 out=$2
    shift 2
    # shellcheck disable=SC2086 # $c is a command with its flags
    if ! $c -E -dD "$@" "$tmp/src.$ext" >"$tmp/pp" 2>"$tmp/err"; then
        echo "$name: FAIL ($mode: $c -E $* failed)"
        head -10 "$tmp/err" | sed 's/^/    /'
        exit 1
    fi
    awk -v decl="$out.decl" -v macros="$out.macros" '
        /^# [0-9]+ "/ { f = $3; gsub(/"/, "", f); sub(/.*\//, "", f)
                        ours = (f == "shmem.h" || f == "pshmem.h" || f == "shmemx.h" ||
                                f == "shmem_table.h" || f == "fabshmem_version.h"); next }
        !ours { next }
        /^#define / || /^#undef / { print > macros; next }
        { print > decl }
    ' "$tmp/pp"
    # One declaration per line; a space kept only between two name characters.
    tr '\n' ' ' <"$out.decl" |
        sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/\([;{}]\)/\1\n/g' |
        sed -e 's/\([^A-Za-z0-9_]\) /\1/g' -e 's/ \([^A-Za-z0-9_]\)/\1/g' -e 's/^ //' -e 's/ $//' \
            -e '/^$/d' >"$out.norm"
}

# The first difference between two normalized files, from both sides.
show_diff() {
    diff "$1" "$2" >"$tmp/diff"
    first=$(grep -m 1 -n '^[0-9]' "$tmp/diff" | cut -d: -f1)
    awk -v from="$first" 'NR >= from && NR < from + 7' "$tmp/diff" | cut -c1-300 | sed 's/^/    /'
}

modes=0
decls=0
calls=0
for mode in c99 c11 c++11 c++; do
    case $mode in
        c99 | c11) comp="$cc -std=$mode" ext=c ;;
        c++11) comp="$cxx -std=c++11" ext=cc ;;
        c++) comp="$cxx" ext=cc ;;
    esac
    if [ "$ext" = cc ] && ! $cxx --version >/dev/null 2>&1; then
        echo "$name: note: no C++ compiler ($cxx), mode $mode left out"
        continue
    fi
    cp "$tmp/headers.c" "$tmp/src.$ext"
    expand_headers "$comp" "$tmp/flat" -I"$flat"
    expand_headers "$comp" "$tmp/table" -I"$table" -I"$flat"
    if ! cmp -s "$tmp/flat.norm" "$tmp/table.norm"; then
        echo "$name: FAIL ($mode: the flat headers declare something else than the table forms; < flat, > table)"
        show_diff "$tmp/flat.norm" "$tmp/table.norm"
        exit 1
    fi
    decls=$(wc -l <"$tmp/flat.norm")

    # Macro names: the flat set within the table set, which adds only FSH_ machinery.
    for f in flat table; do
        sed -n 's/^#define \([A-Za-z0-9_]*\).*/\1/p' "$tmp/$f.macros" | sort -u >"$tmp/$f.names"
    done
    missing=$(comm -23 "$tmp/flat.names" "$tmp/table.names" | head -5 | tr '\n' ' ')
    extra=$(comm -13 "$tmp/flat.names" "$tmp/table.names" | grep -v '^FSH_' | head -5 | tr '\n' ' ')
    if [ -n "$missing$extra" ]; then
        echo "$name: FAIL ($mode: macros only in the flat headers: ${missing:-none}; public macros only in the table forms: ${extra:-none})"
        exit 1
    fi
    # A call of every flat macro with each argument count it takes, expanded by both forms.
    awk '
        /^#define / {
            m = $2
            if (m !~ /\(/) { print m; next }
            sub(/\).*/, "", m)
            nm = m; sub(/\(.*/, "", nm)
            params = m; sub(/^[^(]*\(/, "", params)
            n = (params == "") ? 0 : split(params, p, ",")
            lo = n; hi = n
            if (params ~ /\.\.\.$/) { lo = n - 1; hi = 9 }
            for (k = lo; k <= hi; k++) {
                call = nm "("
                for (i = 1; i <= k; i++) { call = call (i > 1 ? ", " : "") "a" i }
                print call ")"
            }
        }' "$tmp/flat.macros" | sort -u | awk '{ print "fsh_probe " $0 }' >"$tmp/probes"
    cat "$tmp/headers.c" "$tmp/probes" >"$tmp/src.$ext"
    for f in flat table; do
        if [ $f = flat ]; then inc="-I$flat"; else inc="-I$table -I$flat"; fi
        # shellcheck disable=SC2086 # $comp is a command with its flags, $inc two options
        $comp -E -P $inc "$tmp/src.$ext" 2>"$tmp/err" | grep '^fsh_probe' |
            sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/\([^A-Za-z0-9_]\) /\1/g' \
                -e 's/ \([^A-Za-z0-9_]\)/\1/g' >"$tmp/$f.calls"
    done
    if [ "$(wc -l <"$tmp/flat.calls")" -ne "$(wc -l <"$tmp/probes")" ]; then
        echo "$name: FAIL ($mode: $(wc -l <"$tmp/probes") macro calls, $(wc -l <"$tmp/flat.calls") expanded)"
        head -5 "$tmp/err" | sed 's/^/    /'
        exit 1
    fi
    if ! cmp -s "$tmp/flat.calls" "$tmp/table.calls"; then
        at=$(cmp "$tmp/flat.calls" "$tmp/table.calls" | sed -n 's/.* line \([0-9]*\).*/\1/p')
        call=$(sed -n "${at}p" "$tmp/probes" | sed 's/^fsh_probe //')
        echo "$name: FAIL ($mode: $call expands to something else in the flat headers than in the table forms; < flat, > table)"
        show_diff "$tmp/flat.calls" "$tmp/table.calls"
        exit 1
    fi
    calls=$((calls + $(wc -l <"$tmp/probes")))
    modes=$((modes + 1))
done
echo "$name: PASS ($modes modes; $decls declarations in the last, $calls macro calls in all, the same in both forms)"
