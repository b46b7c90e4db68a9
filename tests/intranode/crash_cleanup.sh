#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# crash_cleanup.sh: a job whose PE 1 is killed with SIGKILL ends within a bounded time, with a
# non-zero exit, no PE left running, and nothing of it left in /dev/shm: the intra-node path
# names nothing there (memfds), and the shm provider's regions (one per PE, named
# fabshmem-<pid>-<rank>-*) are removed by the PEs the launcher terminates, the dead one's too.
# Prints one case line per configuration: crash_cleanup [CONFIG np=3]: PASS | FAIL (why).

if [ -z "$top_srcdir" ]; then
    top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
fi
top_builddir=${top_builddir:-.}
prog=$top_builddir/tests/intranode/crash_peer
mpirun=${MPIRUN:-mpirun}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsh_crash.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

run() {
    label="crash_cleanup [$1 np=3]"
    shift
    start=$(date +%s)
    timeout -k 5 60 "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n 3 \
        -x FI_PROVIDER=shm -x SHMEM_SYMMETRIC_SIZE=16M "$@" "$prog" >"$tmp/out" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    pids=$(sed -n 's/^crash_peer: PE [0-9]* pid \([0-9]*\)$/\1/p' "$tmp/out")
    why=""
    # mpirun exits with 128+9 when a PE died of SIGKILL: time tells a hang from that.
    if [ "$rc" = 0 ]; then
        why="mpirun exited 0 after a PE was killed"
    elif [ "$secs" -ge 60 ]; then
        why="hung: still running after 60 s"
    elif [ "$(echo "$pids" | wc -w)" != 3 ]; then
        why="the PEs did not all report their pid"
    fi
    # mpirun may return before the PEs it terminated are gone: give them 10 s.
    waited=0
    while [ "$waited" -lt 10 ]; do
        alive=""
        for p in $pids; do
            if kill -0 "$p" 2>/dev/null; then
                alive="$alive $p"
            fi
        done
        [ -z "$alive" ] && break
        sleep 1
        waited=$((waited + 1))
    done
    if [ -n "$alive" ]; then
        why="${why:+$why; }PE processes still run 10 s after mpirun ended:$alive"
    fi
    for p in $pids; do
        left=$(ls /dev/shm 2>/dev/null | grep "^fabshmem-$p-")
        if [ -n "$left" ]; then
            why="${why:+$why; }left in /dev/shm: $left"
            rm -f /dev/shm/fabshmem-"$p"-*
        fi
    done
    if [ -z "$why" ]; then
        echo "$label: PASS"
        echo "    (ended in ${secs}s, mpirun exit $rc, PEs gone ${waited}s later)"
    else
        echo "$label: FAIL ($why)"
        sed 's/^/    /' "$tmp/out" | tail -n 20
        failed=1
    fi
}

if [ ! -x "$prog" ]; then
    echo "crash_cleanup [shm np=3]: FAIL (no executable $prog)"
    exit 1
fi
run shm
run shm-fabric -x FABSHMEM_INTRANODE=fabric
exit $failed
