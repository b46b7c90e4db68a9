#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# signal_mpirun.sh: SIGINT (^C) and SIGTERM sent to mpirun while 3 PEs run barriers
# (tests/faults/fault_pe.c, mode forever), on shm and tcp. Each case must end within
# $FSH_FAULT_BOUND seconds (default 30) of the signal, mpirun exiting non-zero, with no process
# of the job left and no fabshmem file left in /dev/shm (as root the job gets a private
# /dev/shm, see fault_lib.sh). Prints `faults/mpirun_<sig> [<provider>]: PASS (exit N, X s
# after the signal)`.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fault_name=signal_mpirun
. "$top_srcdir/tests/faults/fault_lib.sh"

for sig in INT TERM; do
    for prov in shm tcp; do
        lbl="faults/mpirun_sig$(echo $sig | tr 'A-Z' 'a-z') [$prov]"
        tag="fsh-$$-sig$sig-$prov"
        fault_start "$sig-$prov" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n 3 \
            -x FI_PROVIDER="$prov" -x FI_TCP_IFACE=lo -x SHMEM_SYMMETRIC_SIZE=16M \
            "$prog" forever "$tag"
        # Signal mpirun once every PE is in its loop.
        why=""
        if fault_ready 3; then
            ts=$(now)
            kill -s "$sig" "$pid"
        fi
        fault_wait
        after=$(echo "$t0 + $fault_secs - ${ts:-$t0}" | bc)
        if [ -n "$why" ]; then
            :
        elif [ "$fault_rc" = 124 ] || [ "$fault_rc" = 137 ] && [ "$(echo "$after > $bound" | bc)" = 1 ]; then
            why="hung: mpirun did not end within ${limit}s"
        elif [ "$fault_rc" = 0 ]; then
            why="mpirun exited 0"
        elif [ "$(echo "$after > $bound" | bc)" = 1 ]; then
            why="ended ${after}s after SIG$sig, bound ${bound}s"
        fi
        detail="exit $fault_rc, $(printf '%.1f' "$after") s after SIG$sig"
        fault_verdict "$lbl" "$tag"
    done
done
fault_exit
