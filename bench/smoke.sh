#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# smoke.sh FILE.smoke: one short, untimed run of a benchmark or example under mpirun (shm), for
# make check. Prints one case line in run_test.sh's format, which tests/summary.sh counts:
#     bench_<name> [shm np=<n>]: PASS | FAIL (why)
# followed, for a failure, by the run's last 30 lines, indented. Exit 0 or 1.
#
# FILE.smoke is sourced (sh syntax), all optional but prog:
#   prog=bench/rma          the program, relative to the build tree
#   args="-b 8 -e 4k"       its arguments (benchmarks also get --csv)
#   np=2                    PEs
#   kind=bench|example      bench (default): the CSV must hold, for every TEST/TARGET word of
#                           $expect, a row of every size in $sizes, and every #wrong must be 0;
#                           example: only the exit status (an example checks its own data)
#   expect="put_lat/heap"   sizes="8 4096"    (barrier/world@0: that one size only)
#   env="VAR=value ..."     more variables for the PEs ($top_builddir may appear in values)
#   needs=FILE              a build product the run needs (the mock CUDA driver): SKIP (77)
#                           when the build has none (configured without CUDA headers)
# Every run: FI_PROVIDER=shm, SHMEM_SYMMETRIC_SIZE=64M unless the caller set it, bounded by
# $FSH_TEST_TIMEOUT (default 120) seconds.

spec=$1
if [ ! -f "$spec" ]; then
    echo "usage: $0 FILE.smoke" >&2
    exit 2
fi
name=$(basename "$spec" .smoke)
top_builddir=${top_builddir:-.}
prog="" args="" np=2 kind=bench expect="" sizes="" env="" needs=""
. "$spec"

mpirun=${MPIRUN:-mpirun}
limit=${FSH_TEST_TIMEOUT:-120}
label="bench_$name [shm np=$np]"
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$top_srcdir/tests/progress.sh"
fsh_case_start
SHMEM_SYMMETRIC_SIZE=${SHMEM_SYMMETRIC_SIZE:-64M}
export SHMEM_SYMMETRIC_SIZE

out=$(mktemp "${TMPDIR:-/tmp}/fsh_smoke.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT

fail() {
    fsh_verdict "$label: FAIL ($1)"
    tail -n 30 "$out" | sed 's/^/    /'
    exit 1
}

if [ ! -x "$top_builddir/$prog" ]; then
    fsh_verdict "$label: FAIL (no executable $top_builddir/$prog)"
    exit 1
fi
if [ -n "$needs" ] && [ ! -e "$top_builddir/$needs" ]; then
    fsh_verdict "$label: SKIP (no $needs: configured without CUDA headers)"
    exit 77
fi
xenv=""
for kv in $env; do
    export "${kv?}"
    xenv="$xenv -x ${kv%%=*}"
done
csv=""
[ "$kind" = bench ] && csv=--csv
# shellcheck disable=SC2086 # the argument list is split on purpose
timeout -k 10 "$limit" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n "$np" \
    -x FI_PROVIDER=shm -x SHMEM_SYMMETRIC_SIZE $xenv "$top_builddir/$prog" $args $csv >"$out" 2>&1 </dev/null
rc=$?
case $rc in
0) ;;
124 | 137) fail "timed out after ${limit}s" ;;
*) fail "exit $rc" ;;
esac

if [ "$kind" = bench ]; then
    bad=$(awk -F, 'NF == 8 && $1 != "test" && $8 != 0 { n++ } END { print n + 0 }' "$out")
    [ "$bad" = 0 ] || fail "$bad rows with #wrong > 0"
    for want in $expect; do
        these=$sizes
        case $want in *@*) these=${want#*@} want=${want%@*} ;; esac
        for size in $these; do
            grep -q "^${want%/*},${want#*/},$np,$size," "$out" || fail "no row $want size $size"
        done
    done
fi
fsh_verdict "$label: PASS"
exit 0
