#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_test.sh PROGRAM: runs one MPI test program over the whole matrix and prints one line per
# case:
#     <name> [<config> np=<n>]: PASS | FAIL (exit N) | FAIL (timed out after Ns) | SKIP (reason)
#     <name> [singleton]: ...
# and, for a failing case, the last 30 lines of its output, indented (so tests/summary.sh
# counts only the case lines). Exit status: 0 when no case failed (skips allowed), 1 when any
# failed, 77 when every case skipped.
#
# The matrix:
#   configurations  $FSH_TEST_CONFIGS (default "shm tcp shm-efamr shm-nodes2", plus the test's
#                   .configs; a full run adds tcp-efadirect-chaos once, at 3 PEs or the
#                   test's largest count, to a test whose .configs names no efa-direct
#                   configuration). Only shm and shm-nodes2 use the intra-node path (PEs of a node
#                   map each other's memory); the others set FABSHMEM_INTRANODE=fabric, so every
#                   operation crosses the provider:
#       shm        FI_PROVIDER=shm, intra-node path on: all PEs load/store, CPU atomics
#       shm-nodes2 shm with FABSHMEM_SIM_NODES=2 (from 2 PEs): two pretend nodes, so PEs reach
#                  some peers by load/store and others through the provider, and AMOs all go
#                  through the provider (the one-atomicity-domain rule of a multi-node job)
#       tcp        FI_PROVIDER=tcp FI_TCP_NODELAY=1, and FI_TCP_IFACE=lo when the caller set no
#                  interface and libfabric's tcp provider accepts lo here
#       tcp-hosts  tcp with the intra-node path on: for jobs that really span hosts
#                  (tests/multihost), where PEs of a host load/store and the others use tcp
#       shm-efamr  FI_PROVIDER=shm FABSHMEM_MR_MODE=local,allocated,prov_key: no virt_addr, so
#                  remote addresses are offsets and every buffer passes a local descriptor, as
#                  on EFA
#       shm-efadirect  shm with FABSHMEM_PROVIDER_PROFILE=efa-direct: the provider used as EFA's
#                  lean fabric allows (no provider atomics: AMOs applied by the target's
#                  engine; local descriptors; one remote segment per write; 4-byte immediate;
#                  no delivery-complete)
#       tcp-efadirect  tcp with the same profile
#       tcp-count  tcp with FABSHMEM_REMOTE_COMPLETION=count: quiet learns from the targets'
#                  arrival counts that puts landed, with the provider's atomics (which the
#                  profile refuses) and contexts' endpoints opened as they are made
#       shm-efadirect-chaos, tcp-efadirect-chaos  the profile under FABSHMEM_CHAOS=reorder,delay
#       shm-chaos  shm with FABSHMEM_CHAOS=reorder,delay: the transport holds back posted
#                  operations and remote events and releases them in random order, as EFA's
#                  SRD may deliver them
#       tcp-chaos  tcp (same settings as above) with FABSHMEM_CHAOS=reorder,delay
#       shm-gpudirect    shm (intra-node path on) with the device heap registered with the
#                  provider (FABSHMEM_DEVICE_PATH=cuda, FABSHMEM_DEVICE_IFACE=system) over the
#                  mock driver's host-visible memory (MOCK_CUDA_HOST_VISIBLE=1): the direct
#                  registration path end to end, which no provider here offers for GPU memory
#                  (FABSHMEM_DEVICE_MAP=0: same-node peers' device heaps are not mapped, so the
#                  provider moves their device data too)
#       efamr-gpudirect  the same through the provider only, with shm-efamr's MR mode
#   PE counts       $FSH_TEST_NPS (default "1 2 3 4"), each run as
#       timeout $FSH_TEST_TIMEOUT (default 120) $MPIRUN --allow-run-as-root --oversubscribe
#               --bind-to none -n NP -x VAR... $FSH_MPIRUN_ARGS PROGRAM
#   plus one singleton run: the program started directly, without a launcher, FI_PROVIDER=shm
#   (skipped when FSH_TEST_SINGLETON=0).
#   Quick mode (the default of `make check`): unless FSH_TEST_FULL=1 (`make check-full`, what CI
#   runs) or the caller chose configurations or PE counts, each test runs once: shm (the
#   default path) at 2 PEs, or at the first PE count of its .nps when 2 is not in it.
#
# Live progress: when fd 9 is open (`make check 9>&1`, as .ci/run does), every case's line is
# also written there as it ends, with its time in seconds; the log keeps the line without it.
#
# Per-test files beside the source, tests/mpi/<name>.*, all optional ('#' starts a comment):
#   <name>.nps  the PE counts this test runs with (intersected with $FSH_TEST_NPS when the
#               caller set it); without 1 in it, the singleton run is skipped too.
#   <name>.env  VAR=value lines (one per line, no quoting) applied to every run of the test,
#               over everything else (the test needs them: e.g. a heap size).
#   <name>.configs  configurations this test runs IN ADDITION to the default ones (e.g.
#               "shm-chaos tcp-chaos" for tests of ordering and completion). Used only when the
#               caller did not set $FSH_TEST_CONFIGS: a caller's list is run exactly, for every
#               test (FSH_TEST_CONFIGS=shm-chaos runs the whole suite under chaos).
#
# Environment of every run: SHMEM_SYMMETRIC_SIZE=64M unless the caller set it (keeps 4 PEs
# small); every FABSHMEM_*, SHMEM_* and FI_* variable of the caller; then the configuration's
# variables; then <name>.env. All are passed to the PEs with mpirun -x.

prog=$1
if [ -z "$prog" ]; then
    echo "usage: $0 PROGRAM" >&2
    exit 2
fi
name=$(basename "$prog")
if [ -z "$top_srcdir" ]; then
    top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
fi
testdir=$top_srcdir/tests/mpi
mpirun=${MPIRUN:-mpirun}
limit=${FSH_TEST_TIMEOUT:-120}
quick=0
if [ "$FSH_TEST_FULL" != 1 ] && [ -z "$FSH_TEST_CONFIGS" ] && [ -z "$FSH_TEST_NPS" ]; then
    quick=1
fi
configs=${FSH_TEST_CONFIGS:-"shm tcp shm-efamr shm-nodes2"}
[ "$quick" = 1 ] && configs=shm

# Strip comments and join the words of a .nps or .configs file's lines.
words() {
    sed -e 's/#.*//' "$1" | tr -s ' \t\n' '   '
}

if [ "$quick" = 0 ] && [ -z "$FSH_TEST_CONFIGS" ] && [ -f "$testdir/$name.configs" ]; then
    for c in $(words "$testdir/$name.configs"); do
        case " $configs " in *" $c "*) ;; *) configs="$configs $c" ;; esac
    done
fi

nps=${FSH_TEST_NPS:-"1 2 3 4"}
singleton=${FSH_TEST_SINGLETON:-1}
if [ -f "$testdir/$name.nps" ]; then
    file_nps=$(words "$testdir/$name.nps")
    if [ -n "$FSH_TEST_NPS" ]; then
        nps=""
        for n in $file_nps; do
            case " $FSH_TEST_NPS " in *" $n "*) nps="$nps $n" ;; esac
        done
    else
        nps=$file_nps
    fi
    case " $file_nps " in *" 1 "*) ;; *) singleton=0 ;; esac
fi
if [ "$quick" = 1 ]; then
    singleton=0
    case " $nps " in
    *" 2 "*) nps=2 ;;
    *) for n in $nps; do nps=$n; break; done ;;
    esac
fi

# The caller's variables that every PE must see.
caller_vars=$(env | grep -E '^(FABSHMEM|SHMEM|FI)_[A-Za-z0-9_]*=' | cut -d= -f1 | sort -u)

# tcp over loopback: use lo unless the caller chose an interface or libfabric rejects lo (or
# the caller names the interfaces as rails: MH_RAILS=1 with FABSHMEM_NIC).
tcp_iface=""
if [ -z "$FI_TCP_IFACE" ] && [ "$MH_RAILS" != 1 ]; then
    case " $configs " in
    *" tcp "* | *" tcp-chaos "* | *" tcp-hosts "* | *" tcp-count "* | *" tcp-efadirect "* | *" tcp-efadirect-chaos "*)
        if ! command -v fi_info >/dev/null 2>&1 ||
            FI_TCP_IFACE=lo fi_info -p tcp >/dev/null 2>&1; then
            tcp_iface=lo
        fi
        ;;
    esac
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsh_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

npass=0
nfail=0
nskip=0

. "$top_srcdir/tests/progress.sh"

# run_case LABEL CONFIG NP: one run; NP=0 means the singleton (no launcher).
run_case() {
    label=$1
    fsh_case_start
    out=$tmp/out
    (
        exec >"$out" 2>&1 </dev/null
        names=$caller_vars
        if [ -z "$SHMEM_SYMMETRIC_SIZE" ]; then
            export SHMEM_SYMMETRIC_SIZE=64M
            names="$names SHMEM_SYMMETRIC_SIZE"
        fi
        case $2 in
        *-chaos)
            export FABSHMEM_CHAOS=reorder,delay
            names="$names FABSHMEM_CHAOS"
            ;;
        esac
        case $2 in
        *-efadirect | *-efadirect-chaos)
            export FABSHMEM_PROVIDER_PROFILE=efa-direct
            names="$names FABSHMEM_PROVIDER_PROFILE"
            ;;
        esac
        case $2 in
        tcp-count)
            export FABSHMEM_REMOTE_COMPLETION=count
            names="$names FABSHMEM_REMOTE_COMPLETION"
            ;;
        esac
        case $2 in
        *-gpudirect)
            export FABSHMEM_DEVICE_PATH=cuda FABSHMEM_DEVICE_IFACE=system MOCK_CUDA_HOST_VISIBLE=1
            export FABSHMEM_DEVICE_MAP=0
            names="$names FABSHMEM_DEVICE_PATH FABSHMEM_DEVICE_IFACE MOCK_CUDA_HOST_VISIBLE"
            names="$names FABSHMEM_DEVICE_MAP"
            ;;
        esac
        case $2 in
        shm | shm-nodes2 | tcp-hosts | shm-gpudirect) ;;
        *)
            export FABSHMEM_INTRANODE=fabric
            names="$names FABSHMEM_INTRANODE"
            ;;
        esac
        case $2 in
        shm | shm-chaos | shm-gpudirect | shm-efadirect | shm-efadirect-chaos)
            export FI_PROVIDER=shm
            ;;
        shm-nodes2)
            export FI_PROVIDER=shm
            if [ "$3" -ge 2 ]; then
                export FABSHMEM_SIM_NODES=2
                names="$names FABSHMEM_SIM_NODES"
            fi
            ;;
        tcp | tcp-chaos | tcp-hosts | tcp-count | tcp-efadirect | tcp-efadirect-chaos)
            export FI_PROVIDER=tcp FI_TCP_NODELAY=1
            names="$names FI_TCP_NODELAY"
            if [ -n "$tcp_iface" ]; then
                export FI_TCP_IFACE="$tcp_iface"
                names="$names FI_TCP_IFACE"
            fi
            ;;
        shm-efamr | efamr-gpudirect)
            export FI_PROVIDER=shm FABSHMEM_MR_MODE=local,allocated,prov_key
            names="$names FABSHMEM_MR_MODE"
            ;;
        *)
            echo "run_test.sh: unknown configuration '$2' (known: shm shm-nodes2 tcp tcp-hosts tcp-count shm-efamr shm-chaos tcp-chaos shm-efadirect tcp-efadirect shm-efadirect-chaos tcp-efadirect-chaos shm-gpudirect efamr-gpudirect)"
            exit 99
            ;;
        esac
        names="$names FI_PROVIDER"
        if [ -f "$testdir/$name.env" ]; then
            while IFS= read -r kv; do
                kv=$(printf '%s\n' "${kv%%#*}" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
                case $kv in
                [A-Za-z_]*=*)
                    export "${kv?}"
                    names="$names ${kv%%=*}"
                    ;;
                "") ;;
                *)
                    echo "run_test.sh: $testdir/$name.env: not VAR=value: $kv"
                    exit 99
                    ;;
                esac
            done <"$testdir/$name.env"
        fi
        if [ "$3" = 0 ]; then
            exec timeout -k 10 "$limit" "$prog"
        fi
        xargs=""
        for v in $(echo "$names" | tr ' ' '\n' | sort -u); do
            xargs="$xargs -x $v"
        done
        # shellcheck disable=SC2086 # word splitting of the argument lists is intended
        exec timeout -k 10 "$limit" "$mpirun" --allow-run-as-root --oversubscribe \
            --bind-to none -n "$3" $xargs $FSH_MPIRUN_ARGS "$prog"
    )
    rc=$?
    case $rc in
    0)
        fsh_verdict "$label: PASS"
        npass=$((npass + 1))
        ;;
    77)
        why=$(sed -n 's/.*: SKIP (\(.*\))$/\1/p' "$out" | head -n 1)
        fsh_verdict "$label: SKIP (${why:-exit 77})"
        nskip=$((nskip + 1))
        ;;
    *)
        case $rc in
        124 | 137) fsh_verdict "$label: FAIL (timed out after ${limit}s)" ;;
        99) fsh_verdict "$label: FAIL (runner: $(head -n 1 "$out"))" ;;
        *) fsh_verdict "$label: FAIL (exit $rc)" ;;
        esac
        tail -n 30 "$out" | sed 's/^/    /'
        nfail=$((nfail + 1))
        ;;
    esac
}

if [ ! -x "$prog" ]; then
    echo "$name: FAIL (no executable $prog)"
    exit 1
fi

for c in $configs; do
    for n in $nps; do
        run_case "$name [$c np=$n]" "$c" "$n"
    done
done
# The full run also takes every test through EFA's lean fabric as the profile makes it (no
# provider atomics, no delivery-complete: quiet counts arrivals), reordered and delayed, once:
# at 3 PEs where the test runs 3, else at its largest count.
if [ "$quick" = 0 ] && [ -z "$FSH_TEST_CONFIGS" ]; then
    case " $configs " in
    *efadirect*) ;;
    *)
        np=""
        for n in $nps; do
            [ "$n" = 3 ] && np=3
            [ "$np" != 3 ] && np=$n
        done
        if [ -n "$np" ]; then
            run_case "$name [tcp-efadirect-chaos np=$np]" tcp-efadirect-chaos "$np"
        fi
        ;;
    esac
fi
if [ "$singleton" != 0 ]; then
    run_case "$name [singleton]" shm 0
fi

if [ "$nfail" -gt 0 ]; then
    exit 1
fi
if [ "$npass" -eq 0 ] && [ "$nskip" -gt 0 ]; then
    exit 77
fi
exit 0
