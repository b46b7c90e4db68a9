# SPDX-License-Identifier: BSD-3-Clause
# netns_lib.sh: simulated hosts on one machine, for the multi-host tests (sourced).
#
# mh_setup N     (needs $top_srcdir) creates a bridge namespace and N host namespaces (fsh<tag>h0..), each joined to
#                the bridge by a veth whose host end is called fsh0 in every host (so one
#                FI_TCP_IFACE / if_include value fits all), with 198.51.100.(10+i)/24 (a
#                documentation range: the machine's own interfaces hold 192.0.2.x); writes
#                $mh_dir/hostfile (h0..h(N-1), 2 slots each) and exports MPIRUN, the launcher
#                wrapper below. mh_setup N L gives each host L links (rails): link k >= 1 is
#                fsh<k> on a bridge and subnet of its own, 198.18.k.(10+i)/24 (the benchmarking
#                range), so tcp sees one fabric per link. Everything is removed by mh_teardown, which mh_setup arranges
#                to run at exit whatever happens (trap), killing what still runs inside.
# mh_ns I        the namespace of host I
# mh_tests       the integration tests every multi-host run takes (one-sided layer, collectives)
# mh_run_tests LABEL TESTS...  runs them through tests/run_test.sh (tcp-hosts, as the caller set
#                FSH_TEST_*), relabelled `[LABEL np=N]`, counting failures in $nfail
# mh_skip        exits 77 with the reason when the machine cannot do this (not root, no ip
#                netns, no mpirun)
# The launcher wrapper (mpirun_netns.sh) starts mpirun inside host 0 with its own hostname,
# the hostfile, the rsh agent (rsh_netns.sh: enters the host's namespace instead of ssh) and
# the interface restrictions; `exec` all the way, so a timeout around it reaches mpirun.

mh_tag=$(printf '%x' $(($$ % 65536)))
mh_dir=$(mktemp -d "${TMPDIR:-/tmp}/fsh_mh.XXXXXX") || exit 1
mh_hosts=0
mh_links=1
# coll_test.h takes each host's PEs, for SHMEM_TEAM_SHARED, from the launcher's local rank and size.
mh_tests="rma_putget_mem rma_typed rma_sized rma_strided rma_nbi_quiet rma_static barrier_all
    signal_order signal_many amo_counters amo_tickets amo_cswap amo_domain lock_rmw wait_ops
    ctx_independent intranode_ptr coll_teams coll_barrier coll_alltoall coll_alltoallv
    coll_bcast_collect coll_reduce"

mh_run_tests() {
    label=$1
    shift
    for t in "$@"; do
        sh "$top_srcdir/tests/run_test.sh" "$top_builddir/tests/mpi/$t" >"$mh_dir/$t.out" 2>&1 ||
            nfail=$((nfail + 1))
        sed -e "s/ \\[tcp-hosts np=/ [$label np=/" "$mh_dir/$t.out"
    done
}

mh_skip() {
    if [ "$(id -u)" != 0 ]; then
        echo "multihost: SKIP (needs root for network namespaces)"
        exit 77
    fi
    if ! command -v ip >/dev/null 2>&1 || ! ip netns list >/dev/null 2>&1; then
        echo "multihost: SKIP (no 'ip netns' here)"
        exit 77
    fi
    if ! command -v "${MPIRUN_REAL:-mpirun}" >/dev/null 2>&1 || ! command -v unshare >/dev/null 2>&1; then
        echo "multihost: SKIP (needs mpirun and unshare)"
        exit 77
    fi
}

mh_ns() {
    echo "fsh${mh_tag}h$1"
}

mh_teardown() {
    for i in $(seq 0 $((mh_hosts - 1))) br; do
        ns=$(mh_ns "$i")
        pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
        if [ -n "$pids" ]; then
            # shellcheck disable=SC2086 # a list of pids, all started inside our namespaces
            kill -9 $pids 2>/dev/null
        fi
        ip netns del "$ns" 2>/dev/null
    done
    rm -rf "$mh_dir"
}

mh_setup() {
    mh_hosts=$1
    mh_links=${2:-1}
    trap 'mh_teardown' EXIT
    trap 'exit 130' INT TERM
    br=$(mh_ns br)
    ip netns add "$br" && ip -n "$br" link add br0 type bridge && ip -n "$br" link set br0 up &&
        ip -n "$br" link set lo up || return 1
    for k in $(seq 1 $((mh_links - 1))); do
        ip -n "$br" link add "br$k" type bridge && ip -n "$br" link set "br$k" up || return 1
    done
    : >"$mh_dir/hostfile"
    : >"$mh_dir/hosts"
    for i in $(seq 0 $((mh_hosts - 1))); do
        ns=$(mh_ns "$i")
        ip netns add "$ns" &&
            ip link add "fsh${mh_tag}p$i" type veth peer name "fsh${mh_tag}q$i" &&
            ip link set "fsh${mh_tag}p$i" netns "$ns" &&
            ip link set "fsh${mh_tag}q$i" netns "$br" &&
            ip -n "$ns" link set "fsh${mh_tag}p$i" name fsh0 &&
            ip -n "$ns" addr add "198.51.100.$((10 + i))/24" dev fsh0 &&
            ip -n "$ns" link set fsh0 up && ip -n "$ns" link set lo up &&
            ip -n "$br" link set "fsh${mh_tag}q$i" master br0 &&
            ip -n "$br" link set "fsh${mh_tag}q$i" up || return 1
        for k in $(seq 1 $((mh_links - 1))); do
            ip link add "fsh${mh_tag}p${i}l$k" type veth peer name "fsh${mh_tag}q${i}l$k" &&
                ip link set "fsh${mh_tag}p${i}l$k" netns "$ns" &&
                ip link set "fsh${mh_tag}q${i}l$k" netns "$br" &&
                ip -n "$ns" link set "fsh${mh_tag}p${i}l$k" name "fsh$k" &&
                ip -n "$ns" addr add "198.18.$k.$((10 + i))/24" dev "fsh$k" &&
                ip -n "$ns" link set "fsh$k" up &&
                ip -n "$br" link set "fsh${mh_tag}q${i}l$k" master "br$k" &&
                ip -n "$br" link set "fsh${mh_tag}q${i}l$k" up || return 1
        done
        echo "h$i slots=2" >>"$mh_dir/hostfile"
        echo "h$i $ns" >>"$mh_dir/hosts"
    done
    here=$(cd "$top_srcdir/tests/multihost" && pwd)
    MH_DIR=$mh_dir
    MPIRUN=$here/mpirun_netns.sh
    export MH_DIR MPIRUN
}

# mh_wait_up: until every host's fsh0 (and further links) is up (the veth's carrier comes a moment after the bridge
# port; ping is not always installed, so the link state is what is checked).
mh_wait_up() {
    for i in $(seq 0 $((mh_hosts - 1))); do
        for k in $(seq 0 $((mh_links - 1))); do
            n=0
            until ip -n "$(mh_ns "$i")" link show "fsh$k" 2>/dev/null | grep -q 'state UP'; do
                n=$((n + 1))
                [ $n -lt 50 ] || return 1
                sleep 0.1
            done
        done
    done
}
