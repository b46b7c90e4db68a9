#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# compare.sh: fabshmem against its peer (Open MPI's OSHMEM) and against the ceiling (raw
# libfabric on the same provider, and memcpy), all in one run, on this node.
#
#   bash bench/compare.sh [-r ROUNDS] [-e MAX] [-n ITERS] [-p PROVIDER] [-N "2 4"] [-o DIR]
#                         [-c OSHCC] [-x VAR=VALUE]... [-q]
#
#   -r ROUNDS   rounds (default 3); each round runs every program once, fabshmem and the peer
#               in alternating order, so slow phases of a shared machine hit both; a figure is
#               the median over the rounds of each run's median
#   -e MAX      largest size (default 1M); sizes are the powers of two from 8 B
#   -n ITERS    timed iterations per size (default 100; warm-up ITERS/10)
#   -p PROV     libfabric provider of fabshmem and fi_ceiling (default shm)
#   -N "2 4"    PE counts of the collective benchmark (default "2 4")
#   -o DIR      output (default bench/plots): headline.txt (the target sizes), compare.txt (every
#               row), summary.csv, latency.png,
#               bandwidth.png, coll.png, raw/ (every run's CSV)
#   -x VAR=VAL  passed to fabshmem's PEs (mpirun -x), e.g. -x FABSHMEM_INTRANODE=fabric;
#               repeatable
#   -c OSHCC    the peer's compiler wrapper (default /usr/bin/oshcc, Open MPI's OSHMEM). Another
#               OpenSHMEM's oshcc (e.g. Sandia OpenSHMEM's, built with PMIx and
#               --enable-manual-progress) is run under the same mpirun with FI_PROVIDER and
#               SHMEM_OFI_PROVIDER set to PROV, so it uses the same libfabric provider
#   -q          quick: 2 rounds, 30 iterations, sizes to 64K (a check that it all works)
#   -s          no runs: the table and plots again from DIR/raw of an earlier run
#
# Needs: a built tree (make), mpirun. Optional: /usr/bin/oshcc (else the peer columns say n/a),
# gnuplot (else the plots are skipped, with the reason). The peer is built here from the same
# sources (bench/rma.c, amo.c, coll.c, bench.c) with oshcc, and run with --mca osc ^rdma (Debian's
# build otherwise segfaults in shmem_finalize).
#
# Columns of the table: fabshmem and peer figures (us or MB/s, Mmsg/s, Mops/s); ratio =
# fabshmem's speed over the peer's (peer time / fabshmem time, or fabshmem rate / peer rate), so
# > 1 means fabshmem is faster; ceiling = the fi_ceiling figure of the same size (put_lat,
# put_nbi_lat: the better of fi_inject_flush_lat (up to the inject size) and fi_write_lat;
# get_lat: fi_read_lat, put_signal_lat: fi_writedata_lat, put_bw: fi_write_bw, put_rate: the
# better of fi_inject_flush_rate and fi_inject_write_rate, up to the inject size; put_ret:
# fi_copy_post_lat) and of_ceil =
# fabshmem's speed as a fraction of it; for put_bw also
# of_memcpy against single-core memcpy. Nothing here judges a number: it prints them.
set -u
cd "$(dirname "$0")/.."
top=$(pwd)

rounds=3 max=1M iters=100 prov=shm nps="2 4" out=bench/plots quick=0 skip=0 peer_cc=/usr/bin/oshcc
peer_short=OSHMEM peer_name="Open MPI OSHMEM"
xargs_fsh=()
while getopts "r:e:n:p:N:o:c:x:qsh" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    e) max=$OPTARG ;;
    n) iters=$OPTARG ;;
    p) prov=$OPTARG ;;
    N) nps=$OPTARG ;;
    o) out=$OPTARG ;;
    c) peer_cc=$OPTARG ;;
    x) xargs_fsh+=(-x "$OPTARG") ;;
    q) quick=1 ;;
    s) skip=1 ;;
    *) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
if [ "$quick" = 1 ]; then
    rounds=2 iters=30 max=64K
fi
warm=$((iters / 10 > 1 ? iters / 10 : 1))

for p in bench/rma bench/amo bench/coll bench/fi_ceiling; do
    [ -x "$p" ] || { echo "compare.sh: $p is not built: run make first" >&2; exit 1; }
done
mkdir -p "$out/raw" || exit 1
if [ "$skip" = 1 ]; then
    # the settings of the run that made raw/ (for the table's header)
    [ -f "$out/raw/settings" ] && . "$out/raw/settings"
else
    rm -f "$out"/raw/*.csv "$out"/raw/*.log
fi

root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
mpirun=(mpirun "${root[@]}" --oversubscribe --bind-to none)
fsh_env=(-x FI_PROVIDER="$prov" -x SHMEM_SYMMETRIC_SIZE=256M)
[ "$prov" = tcp ] && fsh_env+=(-x FI_TCP_IFACE=lo -x FI_TCP_NODELAY=1)

# ---- the peer, from the same sources
peerdir=bench/peer
[ "$skip" = 1 ] || peer_ok=0 peer_why=""
if [ "$skip" = 1 ]; then
    :
elif [ ! -x "$peer_cc" ]; then
    peer_why="no $peer_cc (apt-get install libopenmpi-dev)"
else
    mkdir -p "$peerdir"
    peer_ok=1
    for b in rma amo coll; do
        if ! "$peer_cc" -O2 -Ibench -o "$peerdir/$b" "bench/$b.c" bench/bench.c \
            >"$peerdir/$b.build.log" 2>&1; then
            peer_ok=0 peer_why="oshcc failed on bench/$b.c (see $peerdir/$b.build.log)"
        fi
    done
fi
[ "$peer_ok" = 1 ] || [ "$skip" = 1 ] || echo "compare.sh: peer skipped: $peer_why" >&2

rma_args=(-b 8 -e "$max" -n "$iters" -w "$warm" -T heap,static
          -t put_lat,put_nbi_lat,get_lat,put_bw,put_rate,bibw,put_signal_lat --csv)
amo_args=(-n "$((iters * 5))" -w "$((warm * 5))" -T heap,static --csv)
coll_args=(-b 8 -e "$max" -n "$iters" -w "$warm" --csv)
ceil_args=(-b 8 -e "$max" -n "$iters" -w "$warm" --csv)

# run LABEL NP LIB PROGRAM ARGS...: one run, its CSV rows (prefixed by the library) kept.
run() {
    local label=$1 np=$2 lib=$3
    shift 3
    local f="$out/raw/${label}.csv" cmd
    if [ "$lib" = peer ] && [ "$peer_cc" = /usr/bin/oshcc ]; then
        # OSHMEM 4.1 reads SMA_SYMMETRIC_SIZE (or SHMEM_SYMMETRIC_HEAP_SIZE), not SHMEM_SYMMETRIC_SIZE.
        cmd=("${mpirun[@]}" --mca osc ^rdma -x SMA_SYMMETRIC_SIZE=256M -n "$np" "$@")
    elif [ "$lib" = peer ]; then
        cmd=("${mpirun[@]}" "${fsh_env[@]}" -x SHMEM_OFI_PROVIDER="$prov" -n "$np" "$@")
    else
        cmd=("${mpirun[@]}" "${fsh_env[@]}" "${xargs_fsh[@]}" -n "$np" "$@")
    fi
    echo "+ ${cmd[*]}" >"$f.log"
    if ! timeout -k 10 600 nice "${cmd[@]}" >"$f.out" 2>>"$f.log"; then
        echo "compare.sh: $label failed (exit $?; see $f.log)" >&2
    fi
    grep -E '^[a-z_0-9]+,[a-z]+,[0-9]+,[0-9]+,' "$f.out" | sed "s/^/$lib,/" >"$f"
    rm -f "$f.out"
}

if [ "$skip" = 1 ]; then
    rounds_run=0
else
    rounds_run=$rounds
    run_stamp="$(date -u '+%Y-%m-%d %H:%M UTC'), fabshmem $(git describe --always --dirty 2>/dev/null)"
    if [ "$peer_cc" = /usr/bin/oshcc ]; then
        peer_short=OSHMEM
        peer_name="Open MPI OSHMEM ($(ompi_info --version 2>/dev/null | head -n1 | sed 's/.*v//'))"
    else
        peer_short=peer peer_name=$peer_cc
    fi
    printf 'rounds=%q iters=%q prov=%q nps=%q peer_ok=%q peer_why=%q run_stamp=%q peer_cc=%q peer_short=%q peer_name=%q\n' "$rounds" \
        "$iters" "$prov" "$nps" "$peer_ok" "$peer_why" "$run_stamp" "$peer_cc" "$peer_short" \
        "$peer_name" >"$out/raw/settings"
    printf 'xargs_fsh=(%s)\n' "${xargs_fsh[*]:-}" >>"$out/raw/settings"
fi
for ((r = 1; r <= rounds_run; r++)); do
    echo "compare.sh: round $r of $rounds" >&2
    order="fabshmem peer"
    [ $((r % 2)) = 0 ] && order="peer fabshmem"
    run "ceiling_r$r" 2 ceiling ./bench/fi_ceiling "${ceil_args[@]}"
    for lib in $order; do
        [ "$lib" = peer ] && [ "$peer_ok" = 0 ] && continue
        dir=./bench
        [ "$lib" = peer ] && dir=./$peerdir
        run "${lib}_rma_r$r" 2 "$lib" "$dir/rma" "${rma_args[@]}"
        run "${lib}_amo_r$r" 2 "$lib" "$dir/amo" "${amo_args[@]}"
        for np in $nps; do
            run "${lib}_coll_np${np}_r$r" "$np" "$lib" "$dir/coll" "${coll_args[@]}"
        done
    done
done

# ---- the median over rounds: lib,test,target,npes,size,value,unit
cat "$out"/raw/*.csv | awk -F, '
    { k = $1 "," $2 "," $3 "," $4 "," $5; n[k]++; v[k, n[k]] = $6; unit[k] = $8; bad[k] += $9 }
    END {
        for (k in n) {
            m = n[k]
            for (i = 1; i <= m; i++) a[i] = v[k, i] + 0
            for (i = 2; i <= m; i++) { x = a[i]; j = i - 1; while (j > 0 && a[j] > x) { a[j + 1] = a[j]; j-- } a[j + 1] = x }
            med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
            printf "%s,%.4f,%s,%d\n", k, med, unit[k], bad[k]
        }
    }' | sort -t, -k1,1 -k2,2 -k3,3 -k4,4n -k5,5n >"$out/summary.csv"

# ---- the table
{
    echo "# fabshmem vs $( [ "$peer_ok" = 1 ] && echo "$peer_name" || echo "peer: n/a ($peer_why)")"
    echo "# run ${run_stamp:-(unknown time)} on $(hostname), $(nproc) cores; provider $prov ${xargs_fsh[*]}"
    echo "# median over $rounds rounds of each run's median ($iters iterations); ratio > 1: fabshmem faster"
    awk -F, '
        { k = $2 "," $3 "," $4 "," $5; val[$1, k] = $6; unit[k] = $7; if (!($1 == "ceiling")) keys[k] = 1 }
        function speed(x, u) { return u == "us" ? (x > 0 ? 1 / x : 0) : x }
        function fmt(x) { return x == "" ? "n/a" : sprintf(x >= 100 ? "%.0f" : x >= 1 ? "%.2f" : "%.3f", x) }
        END {
            ce["get_lat"] = "fi_read_lat"; ce["put_signal_lat"] = "fi_writedata_lat"
            ce["put_bw"] = "fi_write_bw"; ce["put_rate"] = "fi_inject_flush_rate"; ce["put_ret"] = "fi_copy_post_lat"
            # a second legal way (cf): the ceiling is the better of the two with a figure there
            cf["put_rate"] = "fi_inject_write_rate"
            cf["put_lat"] = "fi_write_lat"; cf["put_nbi_lat"] = "fi_write_lat"
            ce["put_lat"] = "fi_inject_flush_lat"; ce["put_nbi_lat"] = "fi_inject_flush_lat"
            printf "%-24s %-7s %3s %8s %10s %10s %7s %10s %8s %9s\n", "test", "target", "np", "size",
                   "fabshmem", "peer", "ratio", "ceiling", "of_ceil", "of_memcpy"
            n = 0
            for (k in keys) order[++n] = k
            # sort: test, target, np, size
            for (i = 2; i <= n; i++) { x = order[i]; j = i - 1
                while (j > 0 && before(x, order[j])) { order[j + 1] = order[j]; j-- } order[j + 1] = x }
            for (i = 1; i <= n; i++) {
                k = order[i]; split(k, f, ","); u = unit[k]
                fs = ((("fabshmem", k) in val)) ? val["fabshmem", k] : ""
                pk = k; peer = ((("peer", k) in val)) ? val["peer", k] : ""
                note = ""
                if (peer == "" && f[1] ~ /^alltoall(_busbw)?$/) {
                    pk = f[1]; sub(/^alltoall/, "alltoall64", pk); pk = pk "," f[2] "," f[3] "," f[4]
                    if (("peer", pk) in val) { peer = val["peer", pk]; note = " (peer: alltoall64)" }
                }
                ratio = (fs != "" && peer != "" && speed(peer, u) > 0) ? speed(fs, u) / speed(peer, u) : ""
                c = ""; oc = ""; om = ""
                if (f[1] in ce) {
                    ck = ce[f[1]] ",fabric,2," f[4]
                    if (f[1] in cf) {
                        fk = cf[f[1]] ",fabric,2," f[4]
                        if (!(("ceiling", ck) in val) || ((("ceiling", fk) in val) && speed(val["ceiling", fk], u) > speed(val["ceiling", ck], u))) ck = fk
                    }
                    if (("ceiling", ck) in val) { c = val["ceiling", ck]; if (fs != "" && speed(c, u) > 0) oc = speed(fs, u) / speed(c, u) }
                }
                if (f[1] == "put_bw" && (("ceiling", "memcpy_bw,local,2," f[4]) in val) && fs != "")
                    om = fs / val["ceiling", "memcpy_bw,local,2," f[4]]
                printf "%-24s %-7s %3s %8s %10s %10s %7s %10s %8s %9s%s\n", f[1] " (" u ")", f[2], f[3], f[4],
                       fmt(fs), fmt(peer), fmt(ratio), c == "" ? "-" : fmt(c), oc == "" ? "-" : fmt(oc),
                       om == "" ? "-" : fmt(om), note
            }
        }
        function before(a, b,   x, y) {
            split(a, x, ","); split(b, y, ",")
            if (x[1] != y[1]) return x[1] < y[1]
            if (x[2] != y[2]) return x[2] < y[2]
            if (x[3] != y[3]) return x[3] + 0 < y[3] + 0
            return x[4] + 0 < y[4] + 0
        }' "$out/summary.csv" | sed -e 's/  *$//'
    bad=$(awk -F, '$8 != 0' "$out/summary.csv" | wc -l)
    echo "# rows with wrong data: $bad"
} >"$out/compare.txt"
# The headline: the sizes and tests of the project's targets (8 B, 1 KiB, 64 KiB, 1 MiB).
{
    sed -n '1,3p' "$out/compare.txt"
    awk 'NR == 4 || (($1 ~ /^(put_lat|get_lat|put_bw|put_signal_lat|fadd_lat|cswap_lat|barrier|alltoall|alltoall64|alltoall_busbw|broadcast64|broadcast64_sep|sum_to_all|sum_to_all_sep)$/) &&
         ($5 == 0 || $5 == 8 || $5 == 1024 || $5 == 65536 || $5 == 1048576))' "$out/compare.txt"
    echo "# all sizes and tests: $out/compare.txt"
} >"$out/headline.txt"
cat "$out/headline.txt"

# ---- plots
plot_why=""
if ! command -v gnuplot >/dev/null 2>&1; then
    plot_why="gnuplot is not installed (apt-get install gnuplot-nox)"
elif ! gnuplot -e 'set terminal pngcairo' </dev/null >/dev/null 2>&1 &&
    ! gnuplot -e 'set terminal png' </dev/null >/dev/null 2>&1; then
    plot_why="this gnuplot has no PNG terminal"
fi
if [ -n "$plot_why" ]; then
    echo "compare.sh: plots skipped: $plot_why"
    exit 0
fi
term="pngcairo size 1000,640 font ',10'"
gnuplot -e 'set terminal pngcairo' </dev/null >/dev/null 2>&1 || term="png size 1000,640"
dat="$out/raw/plot"
mkdir -p "$dat"
# series LIB TEST TARGET NP -> a data file "size value"
series() {
    awk -F, -v l="$1" -v t="$2" -v g="$3" -v p="$4" '$1 == l && $2 == t && $3 == g && $4 == p { print $5, $6 }' \
        "$out/summary.csv" >"$dat/$1_$2_$3_$4.dat"
    echo "$dat/$1_$2_$3_$4.dat"
}
line() { # FILE TITLE -> a plot clause, or nothing for an empty series
    [ -s "$1" ] && printf "'%s' using 1:2 with linespoints title '%s', " "$1" "$2"
}
both() { # TEST WHAT: fabshmem's and the peer's series of TEST, heap and static targets
    for t in heap static; do
        line "$(series fabshmem "$1" $t 2)" "fabshmem $2 ($t)"
        line "$(series peer "$1" $t 2)" "$peer_short $2 ($t)"
    done
}
lat=$(both put_lat "put+quiet")
lat+=$(line "$(series fabshmem put_signal_lat heap 2)" "fabshmem put-with-signal ping-pong (heap)")
lat+=$(line "$(series ceiling fi_write_lat fabric 2)" "raw libfabric fi_write ($prov)")
bw=$(both put_bw "put nbi window")
bw+=$(line "$(series ceiling fi_write_bw fabric 2)" "raw libfabric fi_write window ($prov)")
bw+=$(line "$(series ceiling memcpy_bw local 2)" "memcpy, one core")
coll=""
for np in $nps; do
    coll+=$(line "$(series fabshmem alltoall heap "$np")" "fabshmem alltoallmem, $np PEs")
    coll+=$(line "$(series fabshmem alltoall64 heap "$np")" "fabshmem alltoall64, $np PEs")
    coll+=$(line "$(series peer alltoall64 heap "$np")" "$peer_short alltoall64, $np PEs")
done
stamp="$(date -u '+%Y-%m-%d') $(hostname), 2 PEs, $prov ${xargs_fsh[*]}"
gnuplot <<EOF
set terminal $term
set termoption noenhanced
set logscale xy
set grid
set key below
set xlabel 'message size (bytes)'
set output '$out/latency.png'
set title 'put latency, PE 0 -> PE 1 ($stamp)'
set ylabel 'microseconds (median)'
plot ${lat%, }
set output '$out/bandwidth.png'
set title 'put bandwidth, window of nbi puts + quiet ($stamp)'
set ylabel 'MB/s (median round)'
plot ${bw%, }
set output '$out/coll.png'
set title 'all-to-all time per call, slowest PE ($(date -u '+%Y-%m-%d') $(hostname))'
set ylabel 'microseconds (median)'
set xlabel 'block size per PE pair (bytes)'
plot ${coll%, }
EOF
echo "compare.sh: plots: $out/latency.png $out/bandwidth.png $out/coll.png"
