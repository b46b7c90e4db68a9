#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rails.sh [LINKS...]: put bandwidth over 1, 2 (and 4) rails between two simulated hosts.
#
# Builds two network-namespace hosts (tests/multihost/netns_lib.sh) with the largest number of
# links asked (default "2 4"), each link limited by tbf to $FSH_RAIL_RATE (default 200mbit) on
# both hosts, runs bench/rma put_bw (1 PE per host, 1 MiB puts, data verified) with
# FABSHMEM_NIC naming the first L links for L = 1 and each of LINKS, and prints the MB/s and
# the ratio to the one-rail figure, all in the same run. Needs root and `ip netns`. A benchmark,
# not a test: it judges nothing (issue 18 asks >= 1.8x with 2 rails and >= 3.4x with 4).
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
export top_srcdir
. "$top_srcdir/tests/multihost/netns_lib.sh"
mh_skip
links=${*:-2 4}
max=1
for l in $links; do
    [ "$l" -gt "$max" ] && max=$l
done
rate=${FSH_RAIL_RATE:-200mbit}
mh_setup 2 "$max" && mh_wait_up || exit 1
for i in 0 1; do
    for k in $(seq 0 $((max - 1))); do
        ip netns exec "$(mh_ns "$i")" tc qdisc add dev "fsh$k" root tbf rate "$rate" burst 64kb \
            latency 50ms || exit 1
    done
done
export MH_RAILS=1 FABSHMEM_BIND=none FABSHMEM_YIELD=always
echo "rails,MB/s,ratio  (put_bw, 1 MiB puts, 1 PE per host, each link $rate)"
base=""
for l in 1 $links; do
    nic=fsh0
    for k in $(seq 1 $((l - 1))); do
        nic="$nic,fsh$k"
    done
    out=$(FABSHMEM_NIC=$nic timeout -k 5 300 "$MPIRUN" --allow-run-as-root --oversubscribe \
        --bind-to none --map-by ppr:1:node -n 2 -x FABSHMEM_NIC -x FABSHMEM_BIND -x FABSHMEM_YIELD \
        -x FI_PROVIDER=tcp "$top_builddir/bench/rma" -t put_bw -b 1M -e 1M -n "${FSH_RAIL_ITERS:-30}" \
        -w 3 --csv 2>&1)
    # test,target,npes,size,median,best,unit,wrong
    row=$(echo "$out" | grep '^put_bw,')
    bw=$(echo "$row" | cut -d, -f5)
    wrong=$(echo "$row" | cut -d, -f8)
    if [ -z "$bw" ] || [ "$wrong" != 0 ]; then
        echo "$l,failed"
        echo "$out" | tail -n 10
        continue
    fi
    [ -z "$base" ] && base=$bw
    echo "$l,$bw,$(echo "scale=2; $bw / $base" | bc)"
done
