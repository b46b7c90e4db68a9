#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scale.sh: shmem_init time, barrier_all latency and a small all-to-all's latency against the
# PE count on this one node, for fabshmem (one node; and FABSHMEM_SIM_NODES=2, so half the
# pairs go through the provider) and its peer (Open MPI's OSHMEM), all in one run.
#
#   bash bench/scale.sh [-r ROUNDS] [-N "2 4 8 16 32 64"] [-n ITERS] [-o DIR] [-c OSHCC]
#                       [-x VAR=VALUE]... [-q] [-s]
#
#   -r ROUNDS   rounds (default 3); each round runs every library once at every PE count, the
#               order of the libraries rotating between rounds so slow phases of a shared
#               machine hit all; a figure is the median over the rounds
#   -N LIST     PE counts (default "2 4 8 16 32 64"); the node is oversubscribed above its
#               core count (mpirun --oversubscribe --bind-to none)
#   -n ITERS    timed barriers and all-to-alls per run (default 50; warm-up ITERS/10)
#   -o DIR      output (default bench/plots/scale): scale.txt (the table), summary.csv (the
#               medians), phases.txt (fabshmem's SHMEM_INFO init phases, median per phase),
#               raw/ (every run's CSV, log and phase line)
#   -c OSHCC    one more peer: another OpenSHMEM's wrapper (e.g. /opt/sos/bin/oshcc, Sandia
#               OpenSHMEM), run under the same mpirun on FI_PROVIDER=tcp (it cannot open
#               Debian's shm: see README.md)
#   -x VAR=VAL  passed to fabshmem's PEs (mpirun -x), e.g. -x LD_LIBRARY_PATH=/opt/lf/lib to
#               run fabshmem on another libfabric; repeatable
#   -q          quick: 1 round at 2 and 4 PEs, 10 iterations (a check that it all works)
#   -s          no runs: the tables again from DIR/raw of an earlier run
#
# Every run is bench/coll -t init,barrier,alltoall64 -b 8 -e 8: `init` is shmem_init timed by
# each PE (the slowest PE's), `barrier` shmem_barrier_all, `alltoall64` the active-set
# shmem_alltoall64 of 8 B per PE pair (the one all-to-all OpenSHMEM 1.4 has too). fabshmem runs
# on FI_PROVIDER=shm with SHMEM_INFO=1, whose `init:` line (PE 0's phases) goes to phases.txt;
# OSHMEM runs under oshrun with --mca osc ^rdma (Debian's build otherwise segfaults in
# shmem_finalize) and SHMEM_SYMMETRIC_HEAP_SIZE; every library gets a 64 MiB heap. The peer is
# built here from the same sources with its oshcc (into DIR/peer). Nothing here judges a number.
set -u
cd "$(dirname "$0")/.." || exit 1

rounds=3 nps="2 4 8 16 32 64" iters=50 out=bench/plots/scale extra_cc="" skip=0
xargs_fsh=()
while getopts "r:N:n:o:c:x:qsh" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    N) nps=$OPTARG ;;
    n) iters=$OPTARG ;;
    o) out=$OPTARG ;;
    c) extra_cc=$OPTARG ;;
    x) xargs_fsh+=(-x "$OPTARG") ;;
    q) rounds=1 nps="2 4" iters=10 ;;
    s) skip=1 ;;
    *) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
warm=$((iters / 10 > 1 ? iters / 10 : 1))
if [ "$skip" = 1 ]; then
    [ -d "$out/raw" ] || { echo "scale.sh: no $out/raw to make tables from" >&2; exit 1; }
else
    [ -x bench/coll ] || { echo "scale.sh: bench/coll is not built: run make first" >&2; exit 1; }
    mkdir -p "$out/raw" "$out/peer" || exit 1
    rm -f "$out"/raw/*
fi

root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
args=(-t init,barrier,alltoall64 -b 8 -e 8 -n "$iters" -w "$warm" --csv)
heap=64M

# The libraries of this run: fabshmem, fabshmem_sim2, oshmem (when its oshcc builds coll), and
# the extra peer of -c.
libs="fabshmem fabshmem_sim2"
stamp="$(date -u '+%Y-%m-%d %H:%M UTC'), fabshmem $(git describe --always --dirty 2>/dev/null)"
build_peer() { # NAME OSHCC
    if [ ! -x "$2" ]; then
        echo "scale.sh: $1 skipped: no $2" >&2
    elif ! "$2" -O2 -Ibench -o "$out/peer/$1_coll" bench/coll.c bench/bench.c \
        >"$out/peer/$1.build.log" 2>&1; then
        echo "scale.sh: $1 skipped: $2 failed on bench/coll.c (see $out/peer/$1.build.log)" >&2
    else
        libs="$libs $1"
    fi
}
if [ "$skip" = 1 ]; then
    # the settings of the run that made raw/ (for the table's header)
    # shellcheck disable=SC1091 # written by an earlier run of this script
    [ -f "$out/raw/settings" ] && . "$out/raw/settings"
else
    build_peer oshmem /usr/bin/oshcc
    [ -n "$extra_cc" ] && build_peer other "$extra_cc"
    printf 'libs=%q rounds=%q stamp=%q extra_cc=%q\n' "$libs" "$rounds" "$stamp" "$extra_cc" \
        >"$out/raw/settings"
    printf 'xargs_fsh=(%s)\n' "${xargs_fsh[*]:-}" >>"$out/raw/settings"
fi

# run LIB NP ROUND: one run; its CSV rows (prefixed by the library) and, for fabshmem, PE 0's
# init phase line are kept.
run() {
    local lib=$1 np=$2 r=$3 cmd
    local f="$out/raw/${lib}_np${np}_r$r"
    case $lib in
    fabshmem | fabshmem_sim2)
        cmd=(mpirun "${root[@]}" --oversubscribe --bind-to none -n "$np" -x FI_PROVIDER=shm
             -x SHMEM_SYMMETRIC_SIZE="$heap" -x SHMEM_INFO=1)
        [ "$lib" = fabshmem_sim2 ] && cmd+=(-x FABSHMEM_SIM_NODES=2)
        cmd+=("${xargs_fsh[@]}" ./bench/coll)
        ;;
    oshmem)
        cmd=(oshrun "${root[@]}" --oversubscribe --bind-to none --mca osc ^rdma -np "$np"
             -x SHMEM_SYMMETRIC_HEAP_SIZE="$heap" "$out/peer/oshmem_coll") ;;
    other)
        cmd=(mpirun "${root[@]}" --oversubscribe --bind-to none -n "$np" -x FI_PROVIDER=tcp
             -x SHMEM_OFI_PROVIDER=tcp -x FI_TCP_IFACE=lo -x SHMEM_SYMMETRIC_SIZE="$heap"
             "$out/peer/other_coll") ;;
    esac
    echo "+ ${cmd[*]} ${args[*]}" >"$f.log"
    if ! timeout -k 10 600 "${cmd[@]}" "${args[@]}" >"$f.out" 2>>"$f.log" </dev/null; then
        echo "scale.sh: $lib at $np PEs, round $r failed (see $f.log)" >&2
        cat "$f.out" >>"$f.log"
    fi
    grep -E '^[a-z_0-9]+,[a-z]+,[0-9]+,[0-9]+,' "$f.out" | sed "s/^/$lib,/" >"$f.csv"
    # "  init: pmix 12.1 ms, ..., total 98.0 ms (PE 0)" -> lib,np,phase,ms rows
    grep '^  init: ' "$f.out" | sed -e 's/^  init: //' -e 's/ (PE 0)$//' | tr ',' '\n' |
        awk -v l="$lib" -v n="$np" 'NF == 3 { print l "," n "," $1 "," $2 }' >"$f.phases"
    rm -f "$f.out"
}

[ "$skip" = 1 ] || echo "scale.sh: libraries: $libs; PEs: $nps; $rounds round(s)" >&2
nlibs=$(echo "$libs" | wc -w)
for ((r = 1; r <= rounds && !skip; r++)); do
    # this round's order: the list rotated by r - 1
    order=$(echo "$libs" | awk -v s=$(((r - 1) % nlibs)) '{ for (i = 0; i < NF; i++) printf "%s ", $((i + s) % NF + 1) }')
    for np in $nps; do
        echo "scale.sh: round $r of $rounds, $np PEs: $order" >&2
        for lib in $order; do
            run "$lib" "$np" "$r"
        done
    done
done

# The median over rounds of each figure: lib,test,npes,value,unit,wrong (init in ms).
median='function med(k,   m, i, j, x) {
            m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i] + 0
            for (i = 2; i <= m; i++) { x = a[i]; j = i - 1; while (j > 0 && a[j] > x) { a[j + 1] = a[j]; j-- } a[j + 1] = x }
            return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }'
cat "$out"/raw/*.csv 2>/dev/null | awk -F, "$median"'
    $2 !~ /_busbw$/ { k = $1 "," $2 "," $4; n[k]++; v[k, n[k]] = ($2 == "init" ? $6 / 1000 : $6)
                      u[k] = ($2 == "init" ? "ms" : $8); bad[k] += $9 }
    END { for (k in n) printf "%s,%.3f,%s,%d\n", k, med(k), u[k], bad[k] }' |
    sort -t, -k1,1 -k2,2 -k3,3n >"$out/summary.csv"

{
    echo "# init, barrier_all and alltoall64 (8 B) against the PE count: $stamp"
    echo "# $(hostname), $(nproc) cores; median over $rounds round(s); init = slowest PE's shmem_init"
    echo "# fabshmem: shm${xargs_fsh[*]:+ ${xargs_fsh[*]}}; fabshmem_sim2: shm, FABSHMEM_SIM_NODES=2; oshmem: Open MPI $(ompi_info --version 2>/dev/null | head -n1 | sed 's/.*v//') oshrun --mca osc ^rdma"
    [ -n "$extra_cc" ] && echo "# other: $extra_cc on tcp"
    echo "# ratio: oshmem's time over fabshmem's (> 1: fabshmem faster)"
    # a block per test: a row per PE count, a column per library, and ratio = OSHMEM's time
    # over fabshmem's (> 1: fabshmem faster)
    awk -F, -v libs="$libs" '
        { val[$1 "," $2 "," $3] = $4; nps[$3] = 1; bad += $6 }
        function f(x) { return sprintf(x >= 100 ? "%.0f" : x >= 1 ? "%.1f" : "%.2f", x) }
        END {
            nl = split(libs, L, " ")
            split("init barrier alltoall64", T, " ")
            split("shmem_init (ms, slowest PE)|shmem_barrier_all (us)|shmem_alltoall64, 8 B per pair (us)", W, "|")
            m = 0; for (p in nps) np[++m] = p + 0
            for (i = 2; i <= m; i++) { x = np[i]; j = i - 1; while (j > 0 && np[j] > x) { np[j + 1] = np[j]; j-- } np[j + 1] = x }
            for (t = 1; t <= 3; t++) {
                printf "\n# %s\n%4s", W[t], "np"
                for (i = 1; i <= nl; i++) printf " %14s", L[i]
                printf " %7s\n", "ratio"
                for (k = 1; k <= m; k++) {
                    printf "%4d", np[k]
                    for (i = 1; i <= nl; i++) {
                        key = L[i] "," T[t] "," np[k]
                        printf " %14s", (key in val) ? f(val[key]) : "-"
                    }
                    a = "fabshmem," T[t] "," np[k]; o = "oshmem," T[t] "," np[k]
                    r = (a in val) && (o in val) && val[a] > 0 ? sprintf("%.2f", val[o] / val[a]) : "-"
                    printf " %7s\n", r
                }
            }
            printf "\n# rows with wrong data: %d\n", bad
        }' "$out/summary.csv"
} >"$out/scale.txt"

# fabshmem's init phases (PE 0), median per phase over rounds: a row per library and PE count.
cat "$out"/raw/*.phases 2>/dev/null | awk -F, "$median"'
    { k = $1 "," $2 "," $3; if (!(k in n)) { ord[$1 "," $2] = ord[$1 "," $2] " " $3 }
      n[k]++; v[k, n[k]] = $4 }
    END {
        for (r in ord) {
            line = r ":"; c = split(ord[r], P, " ")
            for (i = 1; i <= c; i++) line = line sprintf(" %s %.1f", P[i], med(r "," P[i]))
            print line
        }
    }' | sort -t, -k1,1 -k2,2n | sed 's/,/ np=/' >"$out/phases.txt"

cat "$out/scale.txt"
echo "# fabshmem's init phases (ms, PE 0, median): $out/phases.txt"
