#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_error.sh PROGRAM | CASE.expect: runs one error test (tests/errors/<case>) and checks that it
# fails the way users are told it fails: its exit status, and its combined stdout+stderr against
# tests/errors/<case>.expect. Given an .expect file, the case is that file and its program is
# the one its `program:` line names (cases that differ only in their environment share one). Prints `errors/<case>: PASS` or `errors/<case>: FAIL (why)` with the
# output indented; exits 0 or 1. A run is bounded by $FSH_ERROR_TIMEOUT (default 60) seconds: a
# hang is a failure ('hung').
#
# The .expect format, one item per line:
#   # text            a comment
#   program: NAME     the program is tests/errors/NAME of the build tree (for a CASE.expect
#                     run; a PROGRAM run ignores it)
#   np: N             run under mpirun with N PEs (default 1); `np: 0` runs the program
#                     directly, without a launcher
#   env: VAR=value    set VAR for the run (repeatable; no quoting, the value is the rest of the
#                     line); passed to every PE
#   env-last: VAR=value   set VAR for the last PE only (repeatable; np >= 2): PEs launched with
#                     different settings, through mpirun's MPMD form (A : B)
#   ulimit: ARGS      `ulimit ARGS` applied in the runner's subshell before launching, e.g.
#                     `ulimit: -l 64`
#   as-root: CMD      when the runner is root, launch through CMD (a command prefix), e.g. to drop
#                     a capability root holds: `as-root: setpriv --inh-caps=-ipc_lock
#                     --bounding-set=-ipc_lock` (with CAP_IPC_LOCK the memlock limit is void)
#   exit: nonzero     the run must exit with a non-zero status (the default)
#   exit: N           the run must exit with status N (0 for a warning that is not fatal)
#   anything else     an extended regular expression (grep -E) that must match at least one
#                     line of the output
# Blank lines are ignored. The caller's FABSHMEM_*, SHMEM_* and FI_* variables are passed on, and
# SHMEM_SYMMETRIC_SIZE is 64M unless the caller or the .expect file sets it.

prog=$1
if [ -z "$prog" ]; then
    echo "usage: $0 PROGRAM" >&2
    exit 2
fi
if [ -z "$top_srcdir" ]; then
    top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
fi
case $prog in
*.expect)
    name=$(basename "$prog" .expect)
    expect=$prog
    [ -f "$expect" ] || expect=$top_srcdir/tests/errors/$name.expect
    prog=$(sed -n 's/^program:[[:space:]]*//p' "$expect" 2>/dev/null | head -n 1)
    prog=${top_builddir:-.}/tests/errors/${prog:-$name}
    ;;
*)
    name=$(basename "$prog")
    expect=$top_srcdir/tests/errors/$name.expect
    ;;
esac
label="errors/$name"
. "$top_srcdir/tests/progress.sh"
fsh_case_start
mpirun=${MPIRUN:-mpirun}
limit=${FSH_ERROR_TIMEOUT:-60}

if [ ! -f "$expect" ]; then
    fsh_verdict "$label: FAIL (no $expect)"
    exit 1
fi
if [ ! -x "$prog" ]; then
    fsh_verdict "$label: FAIL (no executable $prog)"
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsh_err.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

trim() {
    printf '%s\n' "$1" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'
}

np=1
want_exit=nonzero
ulimit_args=""
as_root=""
: >"$tmp/env"
: >"$tmp/regex"
last_args=""
while IFS= read -r line || [ -n "$line" ]; do
    case $line in
    "#"*) ;;
    program:*) ;;
    np:*) np=$(trim "${line#np:}") ;;
    env:*) trim "${line#env:}" >>"$tmp/env" ;;
    env-last:*) last_args="$last_args -x $(trim "${line#env-last:}")" ;;
    ulimit:*) ulimit_args=$(trim "${line#ulimit:}") ;;
    as-root:*) as_root=$(trim "${line#as-root:}") ;;
    exit:*) want_exit=$(trim "${line#exit:}") ;;
    *)
        re=$(trim "$line")
        if [ -n "$re" ]; then
            printf '%s\n' "$re" >>"$tmp/regex"
        fi
        ;;
    esac
done <"$expect"

case $np in
'' | *[!0-9]*)
    fsh_verdict "$label: FAIL (bad 'np: $np' in $expect)"
    exit 1
    ;;
esac

out=$tmp/out
(
    exec >"$out" 2>&1 </dev/null
    names=$(env | grep -E '^(FABSHMEM|SHMEM|FI)_[A-Za-z0-9_]*=' | cut -d= -f1)
    if [ -z "$SHMEM_SYMMETRIC_SIZE" ]; then
        export SHMEM_SYMMETRIC_SIZE=64M
        names="$names SHMEM_SYMMETRIC_SIZE"
    fi
    while IFS= read -r kv; do
        case $kv in
        [A-Za-z_]*=*)
            export "${kv?}"
            names="$names ${kv%%=*}"
            ;;
        *)
            echo "run_error.sh: bad 'env: $kv' in $expect"
            exit 98
            ;;
        esac
    done <"$tmp/env"
    if [ -n "$ulimit_args" ]; then
        # shellcheck disable=SC2086 # the arguments are words by design
        ulimit $ulimit_args || {
            echo "run_error.sh: 'ulimit $ulimit_args' failed"
            exit 98
        }
    fi
    wrap=""
    if [ -n "$as_root" ] && [ "$(id -u)" = 0 ]; then
        wrap=$as_root
    fi
    if [ "$np" = 0 ]; then
        # shellcheck disable=SC2086 # the prefix is words by design
        exec $wrap timeout -k 5 "$limit" "$prog"
    fi
    xargs=""
    for v in $(echo "$names" | tr ' ' '\n' | sort -u); do
        xargs="$xargs -x $v"
    done
    if [ -n "$last_args" ]; then
        # shellcheck disable=SC2086 # word splitting of the argument lists is intended
        exec $wrap timeout -k 5 "$limit" "$mpirun" --allow-run-as-root --oversubscribe \
            --bind-to none $FSH_MPIRUN_ARGS -n $((np - 1)) $xargs "$prog" : \
            -n 1 $xargs $last_args "$prog"
    fi
    # shellcheck disable=SC2086 # word splitting of the argument lists is intended
    exec $wrap timeout -k 5 "$limit" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none \
        -n "$np" $xargs $FSH_MPIRUN_ARGS "$prog"
)
rc=$?

why=""
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    why="hung: no exit within ${limit}s"
elif [ "$rc" = 98 ] && grep -q '^run_error.sh: ' "$out"; then
    why=$(grep '^run_error.sh: ' "$out" | head -n 1)
elif [ "$want_exit" = nonzero ]; then
    if [ "$rc" = 0 ]; then
        why="exit 0, want non-zero"
    fi
elif [ "$rc" != "$want_exit" ]; then
    why="exit $rc, want $want_exit"
fi
if [ -z "$why" ]; then
    while IFS= read -r re; do
        if ! grep -Eq -e "$re" "$out"; then
            why="no output line matches /$re/"
            break
        fi
    done <"$tmp/regex"
fi

if [ -z "$why" ]; then
    fsh_verdict "$label: PASS"
    exit 0
fi
fsh_verdict "$label: FAIL ($why)"
tail -n 40 "$out" | sed 's/^/    /'
exit 1
