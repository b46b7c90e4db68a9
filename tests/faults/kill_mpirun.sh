#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# kill_mpirun.sh: mpirun killed with SIGKILL while 3 PEs run barriers (fault_pe forever) or
# compute without calling the library (fault_pe compute, progress thread off), on shm and tcp.
# Nobody is left to end the PEs: each must notice that its launcher is gone (PMIx's
# lost-connection event, on PMIx's own thread) and end, within $FSH_FAULT_BOUND seconds
# (default 30) of the kill, leaving no process and no fabshmem file in /dev/shm. Their message
# goes to the dead mpirun's pipe, so the test checks the end, not the words. Prints
# `faults/kill_mpirun_<mode> [<provider>]: PASS (X s after the kill)`.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fault_name=kill_mpirun
. "$top_srcdir/tests/faults/fault_lib.sh"

for mode in forever compute; do
    for prov in shm tcp; do
        lbl="faults/kill_mpirun_$mode [$prov]"
        tag="fsh-$$-killmpirun-$mode-$prov"
        fault_start "$mode-$prov" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n 3 \
            -x FI_PROVIDER="$prov" -x FI_TCP_IFACE=lo -x SHMEM_SYMMETRIC_SIZE=16M \
            -x FABSHMEM_PROGRESS_THREAD=off "$prog" "$mode" "$tag"
        why=""
        if fault_ready 3; then
            kill -9 "$pid"
        fi
        ts=$(now)
        # The PEs outlive mpirun by design of this case: wait for them, up to the bound.
        left=""
        while [ -z "$why" ]; do
            left=$(fault_orphans "$tag")
            if [ -z "$left" ] || [ "$(echo "$(now) - $ts > $bound" | bc)" = 1 ]; then
                break
            fi
            sleep 0.1
        done
        after=$(echo "$(now) - $ts" | bc)
        if [ -z "$why" ] && [ -n "$left" ]; then
            why="PEs still running ${bound}s after mpirun's SIGKILL: $left"
            # shellcheck disable=SC2086 # a list of pids, all of this test's job
            kill -9 $left 2>/dev/null
        fi
        fault_wait
        detail="$(printf '%.1f' "$after") s after the kill"
        fault_verdict "$lbl" "$tag"
    done
done
fault_exit
