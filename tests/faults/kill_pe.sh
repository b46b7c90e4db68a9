#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# kill_pe.sh: a PE killed with SIGKILL during a barrier, an all-to-all, a signal wait and an
# atomic (tests/faults/fault_pe.c, 3 PEs, PE 1 dies) on shm and tcp. Each case must end:
#   - within $FSH_FAULT_BOUND seconds (default 30) of the kill, mpirun exiting non-zero;
#   - with a message naming the dead PE (Open MPI's "process rank 1 ... exited on signal 9",
#     or fabshmem's own "PE 1");
#   - with no process of the job left, and no fabshmem file left in /dev/shm.
# Then the same without the launcher's help (--mca orte_abort_on_non_zero_status 0, so mpirun
# lets the survivors run on), and with no FABSHMEM_TIMEOUT: fabshmem itself must end every
# mode, naming PE 1, through a fabric error (tcp: the connection resets) or its liveness probe
# (FABSHMEM_PROBE_INTERVAL, default 2 s: PE 1's process is gone). The atomic mode runs there
# with FABSHMEM_INTRANODE=fabric: on one node with the intra-node path every AMO is a CPU atomic
# on mapped memory, which never waits, so nothing would ever probe (the launcher's abort covers
# that case above).
# (A PE stopped with SIGSTOP is alive and is waited for: tests/faults/stop_pe.sh.)
# Prints one line per case: `faults/kill_<mode> [<provider>]: PASS (exit N, X s after the kill:
# message)`. Needs the program in tests/faults/ of the build tree.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fault_name=kill_pe
. "$top_srcdir/tests/faults/fault_lib.sh"

run() { # LABEL PROVIDER MODE WANT_REGEX [MPIRUN ARGS...]
    lbl=$1 prov=$2 mode=$3 want=$4
    shift 4
    tag="fsh-$$-$mode-$prov"
    fault_start "$mode-$prov" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n 3 \
        -x FI_PROVIDER="$prov" -x FI_TCP_IFACE=lo -x FI_TCP_NODELAY=1 \
        -x SHMEM_SYMMETRIC_SIZE=16M "$@" "$prog" "$mode" "$tag"
    fault_wait
    why=""
    killed=$(sed -n 's/^fault_pe: PE 1 killed at \([0-9.]*\).*/\1/p' "$out" | head -n 1)
    after=""
    if [ -n "$killed" ]; then
        after=$(echo "$t0 + $fault_secs - $killed" | bc)
    fi
    msg=$(grep -E -m 1 "$want" "$out" | cut -c 1-160)
    if [ "$fault_rc" = 124 ] || [ "$fault_rc" = 137 ] && [ -z "$killed" ]; then
        why="hung: no exit within ${limit}s"
    elif [ -z "$killed" ]; then
        why="PE 1 never reached its kill (exit $fault_rc)"
    elif [ "$fault_rc" = 0 ]; then
        why="mpirun exited 0"
    elif [ "$(echo "$after > $bound" | bc)" = 1 ]; then
        why="ended ${after}s after the kill, bound ${bound}s"
    elif [ -z "$msg" ]; then
        why="no message matching /$want/"
    fi
    detail="exit $fault_rc, $(printf '%.1f' "$after") s after the kill: $msg"
    fault_verdict "$lbl" "$tag"
}

dead='(process rank 1 .*exited on signal 9|^fabshmem: .*PE 1)'
for mode in barrier alltoall signal_wait atomic; do
    for prov in shm tcp; do
        run "faults/kill_$mode [$prov]" "$prov" "$mode" "$dead"
    done
done
for mode in barrier alltoall signal_wait atomic; do
    for prov in shm tcp; do
        intranode=auto
        [ "$mode" = atomic ] && intranode=fabric
        run "faults/kill_${mode}_no_launcher_abort [$prov]" "$prov" "$mode" '^fabshmem: PE [02]/3 .*PE 1' \
            --mca orte_abort_on_non_zero_status 0 -x FABSHMEM_INTRANODE=$intranode
    done
done
fault_exit
