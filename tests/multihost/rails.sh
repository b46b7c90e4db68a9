#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rails.sh: multi-rail across simulated hosts (netns_lib.sh): 2 hosts, each with two links
# (fsh0 and fsh1 on subnets and bridges of their own, so libfabric's tcp sees two fabrics),
# FABSHMEM_NIC=fsh0,fsh1: every PE opens a rail on each. Skipped (77) without root or
# `ip netns`, and outside the full run. One line per case (tests/summary.sh: `multihost`):
#   1. multihost.sh's tests at np=4 (2 PEs per host), plain and under FABSHMEM_CHAOS, and some
#      with the efa-direct profile (provider keys: every rail has its own),
#      `<test> [multihost-rails np=4]: PASS`;
#   2. `multihost/rails_info`: SHMEM_INFO names both rails;
#   3. `multihost/rails_balance_put` (1 MiB puts between the hosts, 1 PE each: striped) and
#      `multihost/rails_balance_alltoall` (2 PEs per host: spread by peer at both ends): each
#      link's bytes (ip -s link, both hosts, both directions) within 20% of the other's;
#   4. `multihost/rails_cut`: host 1's fsh1 set down while data streams between the hosts: the
#      stream goes on over fsh0, all data verified, both sides warn naming the rail;
#   5. `multihost/rails_reset`: host 1's connections on fsh1 destroyed instead: operations on
#      it fail, and the same holds (the sender warns);
#   6. `multihost/rails_cut_ctx`, `multihost/rails_reset_ctx`: 4. and 5. with the stream on a
#      private context that has an endpoint of its own on each rail.
# And ctx_lanes at np=3 (contexts' own endpoints on both rails; with chaos; under the efa-direct
# profile, whose lanes are published per rail), `ctx_lanes [multihost-rails... np=3]`.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
export top_srcdir
. "$top_srcdir/tests/multihost/netns_lib.sh"
if [ "$FSH_TEST_FULL" != 1 ]; then
    echo "multihost-rails: SKIP (simulated hosts take minutes: make check-full runs them)"
    exit 77
fi
mh_skip
if ! mh_setup 2 2 || ! mh_wait_up; then
    echo "multihost/rails_setup: FAIL (could not build the namespaces and veths; see above)"
    exit 1
fi
nfail=0
export MH_RAILS=1 FABSHMEM_NIC=fsh0,fsh1
export FSH_TEST_CONFIGS=tcp-hosts FSH_TEST_NPS=4 FSH_TEST_SINGLETON=0 FABSHMEM_BIND=none
export FABSHMEM_YIELD=always FSH_TEST_TIMEOUT=${FSH_TEST_TIMEOUT:-120}

# 1. Data over two rails: the tests of multihost.sh, plain and under chaos.
# shellcheck disable=SC2086 # a list of test names
mh_run_tests multihost-rails $mh_tests
# shellcheck disable=SC2086
FABSHMEM_CHAOS=reorder,delay mh_run_tests multihost-rails-chaos $mh_tests
FABSHMEM_PROVIDER_PROFILE=efa-direct mh_run_tests multihost-rails-efadirect rma_putget_mem \
    signal_order amo_tickets
FSH_TEST_NPS=3 mh_run_tests multihost-rails ctx_lanes
FSH_TEST_NPS=3 FABSHMEM_CHAOS=reorder,delay mh_run_tests multihost-rails-chaos ctx_lanes
FSH_TEST_NPS=3 FABSHMEM_PROVIDER_PROFILE=efa-direct FABSHMEM_CHAOS=reorder,delay \
    mh_run_tests multihost-rails-efadirect-chaos ctx_lanes

# bytes NS: "fsh0 fsh1" bytes (received + sent) of the host's two links.
bytes() {
    for k in 0 1; do
        ip -n "$1" -s link show "fsh$k" | awk '/RX:/ { getline; r = $1 } /TX:/ { getline; t = $1 } END { printf "%d ", r + t }'
    done
}

# balance WHAT: each link's bytes while the command after WHAT runs, within 20% of the
# other's on both hosts (and at least 8 MiB each), as `multihost/rails_balance_WHAT`.
balance() {
    what=$1
    shift
    b0=$(bytes "$h0")
    b1=$(bytes "$h1")
    timeout -k 5 120 "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
        -x FABSHMEM_NIC -x FABSHMEM_BIND -x FABSHMEM_YIELD -x FI_PROVIDER=tcp -x SHMEM_INFO=1 \
        "$@" >"$out" 2>&1
    rc=$?
    a0=$(bytes "$h0")
    a1=$(bytes "$h1")
    # shellcheck disable=SC2086 # the before/after counters, eight numbers
    verdict=$(echo $b0 $b1 $a0 $a1 | awk '{
        ok = 1; msg = ""
        for (h = 0; h < 2; h++) {
            d0 = $(5 + 2 * h) - $(1 + 2 * h); d1 = $(6 + 2 * h) - $(2 + 2 * h)
            lo = d0 < d1 ? d0 : d1; hi = d0 < d1 ? d1 : d0
            if (hi < 8 * 1048576 || lo < 0.8 * hi) ok = 0
            msg = msg sprintf("%sh%d fsh0 %.1f MiB fsh1 %.1f MiB", h ? ", " : "", h, d0 / 1048576, d1 / 1048576)
        }
        print (ok ? "PASS" : "FAIL") " (" msg ")"
    }')
    if [ $rc != 0 ]; then
        verdict="FAIL (exit $rc; ${verdict#* (}"
    fi
    echo "multihost/rails_balance_$what: $verdict"
    case $verdict in
    PASS*) ;;
    *)
        sed 's/^/    /' "$out" | tail -n 20
        nfail=$((nfail + 1))
        ;;
    esac
}

# 2. and 3. The bytes on each link: 1 MiB puts, one PE per host (a host's slots are 2, so ppr 1
# keeps them apart), striped; an all-to-all of 2 PEs per host, spread by peer at both ends. The
# benchmarks verify their data (exit 1 otherwise).
h0=$(mh_ns 0)
h1=$(mh_ns 1)
out=$mh_dir/bw.out
balance put --map-by ppr:1:node -n 2 "$top_builddir/bench/rma" -t put_bw -b 1M -e 1M -n 40 -w 4
if grep -q "rails 2 (fsh0, fsh1)" "$out"; then
    echo "multihost/rails_info: PASS ($(grep -o 'rails 2 ([^)]*)' "$out" | head -n 1))"
else
    echo "multihost/rails_info: FAIL (SHMEM_INFO does not name the two rails)"
    sed 's/^/    /' "$out" | tail -n 20
    nfail=$((nfail + 1))
fi
balance alltoall -n 4 "$top_builddir/bench/coll" -t alltoall -b 64k -e 64k -n 100 -w 4

# 4. to 6. A rail breaks while PE 0 (h0) streams puts and gets to PE 1 (h1), every byte
# put and read back verified (tests/faults/rail_stream.c): the way over fsh1 is taken out of use
# with a warning naming the rail, what was in flight on it goes again over fsh0, and the stream
# goes on there.
#   stream_break cut: host 1's fsh1 set down. Both PEs find the way dead (its probes unanswered
#     while fsh0's are answered) and warn.
#   stream_break reset: host 1's TCP connections on fsh1 destroyed (ss -K, again every 0.5 s
#     until PE 0 warns, at most 10 times): PE 0's operations on it fail, and PE 0 warns (PE 1's
#     side of the rail still works: it reconnects).
#   stream_break HOW ctx: the same, PE 0 streaming on a private context with an endpoint of
#     its own on each rail (its debug line says so): the context posts again what it had in
#     flight on fsh1, on its endpoint on fsh0 (rails_HOW_ctx).
#   A third argument is the bytes per put and get (1 MiB: striped over both rails); 4 KiB puts
#   return from bounce slots (the engine's, or the context's), from which what goes again after
#   the cut is posted.
stream_break() {
    how=$1
    name=$how${2:+_$2}
    out=$mh_dir/$name.out
    timeout -k 5 120 "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
        --map-by ppr:1:node -n 2 -x FABSHMEM_NIC -x FABSHMEM_BIND -x FABSHMEM_YIELD \
        -x FI_PROVIDER=tcp -x FABSHMEM_PROBE_INTERVAL=1 ${2:+-x FABSHMEM_LOG=debug} \
        "$top_builddir/tests/faults/rail_stream" 24 "${2:-default}" ${3:-} >"$out" 2>&1 &
    job=$!
    i=0
    while ! grep -q 'rail_stream: ready' "$out" 2>/dev/null && [ $i -lt 300 ] &&
        kill -0 $job 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    sleep 1
    cut=$(date +%s.%N)
    if [ "$how" = cut ]; then
        ip -n "$h1" link set fsh1 down
    else
        # Until PE 0 warns, up to 10 times: a reset while nothing of the stream is in flight on
        # fsh1 fails no operation (the provider reconnects), so there is nothing to take out.
        k=0
        while [ $k -lt 10 ] && ! grep -q "rail fsh1: PE 1 (its rail 1) " "$out"; do
            ip netns exec "$h1" ss -K dst 198.18.1.10 >/dev/null 2>&1
            sleep 0.5
            k=$((k + 1))
        done
    fi
    # The timeline: when each side's warning appears.
    seen0="" seen1=""
    while kill -0 $job 2>/dev/null && { [ -z "$seen0" ] || [ -z "$seen1" ]; }; do
        sleep 0.2
        t=$(echo "$(date +%s.%N) - $cut" | bc)
        [ -z "$seen0" ] && grep -q "rail fsh1: PE 1 (its rail 1) " "$out" && seen0=$t
        [ -z "$seen1" ] && grep -q "rail fsh1: PE 0 (its rail 1) " "$out" && seen1=$t
    done
    wait $job
    rc=$?
    ended=$(echo "$(date +%s.%N) - $cut" | bc)
    ip -n "$h1" link set fsh1 up
    why=""
    [ $rc = 0 ] || why="exit $rc"
    # PE 0 prints the verdict for both; any PE prints a failure.
    grep -q 'rail_stream: PASS' "$out" && ! grep -q 'rail_stream: FAIL' "$out" ||
        why="${why:+$why; }data not verified"
    [ -n "$seen0" ] || why="${why:+$why; }no warning of PE 0 about its way over fsh1 to PE 1"
    [ "$how" != cut ] || [ -n "$seen1" ] ||
        why="${why:+$why; }no warning of PE 1 about its way over fsh1 to PE 0"
    [ -z "$2" ] || grep -q '^fabshmem\[0 .*a context with an endpoint of its own' "$out" ||
        why="${why:+$why; }PE 0's context had no endpoint of its own"
    p1=not
    [ -z "$seen1" ] || p1="$(printf '%.1f' "$seen1") s after it"
    if [ -z "$why" ]; then
        echo "multihost/rails_$name: PASS (PE 0 took fsh1 out $(printf '%.1f' "$seen0") s after it, PE 1 $p1, the stream ended $(printf '%.1f' "$ended") s after it: $(grep -m 1 'rounds' "$out" | sed 's/^[^:]*: //'), all verified; PE 0: $(grep -m 1 'rail fsh1: PE 1' "$out" | sed 's/^.*rail fsh1: PE 1 (its rail 1) //; s/: taken out.*//' | cut -c 1-100))"
    else
        echo "multihost/rails_$name: FAIL ($why)"
        sed 's/^/    /' "$out" | tail -n 30
        nfail=$((nfail + 1))
    fi
}
stream_break cut
stream_break reset "" 4096
stream_break cut ctx 4096
stream_break reset ctx
[ $nfail = 0 ]
