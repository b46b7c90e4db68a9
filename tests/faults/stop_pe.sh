#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# stop_pe.sh: a stopped PE is alive, and is waited for (issue 35). tests/faults/stop_pe.c, 2 PEs
# in a put + barrier loop: PE 1 is stopped with SIGSTOP for $FSH_STOP_SECS seconds (default 30)
# by a helper it forked, then continued. On the default path, the tcp path
# (FABSHMEM_INTRANODE=fabric FI_PROVIDER=tcp), the efa-direct profile and FABSHMEM_SIM_NODES=2
# (PE 1 on a pretend node of its own: probed as a remote PE, and found stopped through /proc as
# it runs on this host) each case must:
#   - exit 0, every PE printing `stop_pe: PE n PASS` (every block received was checked);
#   - show PE 1 paused for most of the stop (the stop happened inside the loop);
#   - show PE 0's warning that PE 1 is stopped (naming its pid, the host and the wait), said
#     once and then at growing intervals: at least 1 and at most 4 times in 30 s (the probe
#     runs every 2 s: one warning per probe would be 12 or more);
#   - leave no process and no /dev/shm file behind.
# Then FABSHMEM_TIMEOUT, the user's opt-in, still ends a wait on a stopped PE: with
# FABSHMEM_TIMEOUT=15 and PE 1 stopped for 60 s the job ends non-zero within 15 +
# $FSH_FAULT_BOUND seconds (default 30) of the start, with the timeout's report and the
# warning before it.
# The cases run at once (a stopped PE costs no CPU). Prints one line per case:
# `faults/stop_<case>: PASS (...)`.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fault_name=stop_pe
. "$top_srcdir/tests/faults/fault_lib.sh"
prog=$(dirname "$prog")/stop_pe
secs=${FSH_STOP_SECS:-30}
limit=$((secs * 2 + 60))
warned="^fabshmem\[0 [^]]*\] WARN [a-z_]+\.c:[0-9]+ PE 1 \(pid [0-9]+ on [^)]+\) is stopped \(SIGSTOP or \^Z\) for [0-9]+ s while PE 0 waits in "

start() { # CASE STOP_SECONDS MPIRUN ARGS...
    case=$1 stop=$2
    shift 2
    fault_start "$case" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n 2 \
        -x FI_TCP_IFACE=lo -x FI_TCP_NODELAY=1 -x SHMEM_SYMMETRIC_SIZE=16M "$@" \
        "$prog" "$stop" "fsh-$$-stop-$case"
    eval "pid_$case=\$fault_pid t0_$case=\$t0"
}

finish() { # CASE: waits for the case's job; sets $out, $fault_rc, $fault_secs
    label=$1
    out=$tmp/$1.out
    eval "fault_pid=\$pid_$1 t0=\$t0_$1"
    fault_wait
    why=""
}

survive() { # CASE
    finish "$1"
    npass=$(grep -c '^stop_pe: PE [01] PASS' "$out")
    paused=$(sed -n 's/^stop_pe: PE 1 PASS (.*longest pause \([0-9.]*\) s)/\1/p' "$out")
    nwarn=$(grep -E -c "$warned" "$out")
    if [ "$fault_rc" = 124 ] || [ "$fault_rc" = 137 ]; then
        why="hung: no exit within ${limit}s"
    elif [ "$fault_rc" != 0 ]; then
        why="exit $fault_rc"
    elif [ "$npass" != 2 ]; then
        why="$npass of 2 PEs passed"
    elif [ "$(echo "${paused:-0} < $secs * 0.8" | bc)" = 1 ]; then
        why="PE 1 paused ${paused:-0} s, not the ${secs} s stop"
    elif [ "$nwarn" -lt 1 ] || [ "$nwarn" -gt 4 ]; then
        why="$nwarn warnings that PE 1 is stopped (want 1 to 4)"
    fi
    detail="exit 0 after $(printf '%.0f' "$fault_secs") s, PE 1 paused $paused s, $nwarn warning(s): $(grep -E -m 1 "$warned" "$out" | sed 's/^[^]]*\] //' | cut -c 1-150)"
    fault_verdict "faults/stop_$1 [$secs s]" "fsh-$$-stop-$1"
}

start default "$secs"
start tcp "$secs" -x FABSHMEM_INTRANODE=fabric -x FI_PROVIDER=tcp
start efa_direct "$secs" -x FABSHMEM_PROVIDER_PROFILE=efa-direct
start sim_nodes "$secs" -x FABSHMEM_SIM_NODES=2
start timeout 60 -x FABSHMEM_TIMEOUT=15

# The timeout case first: it ends first, and fault_wait times a job when it is waited for.
finish timeout
msg=$(grep -E -m 1 '^fabshmem: PE 0/2 .*waited 15 s' "$out" | cut -c 1-160)
if [ "$fault_rc" = 0 ]; then
    why="exit 0"
elif [ "$(echo "$fault_secs > 15 + $bound" | bc)" = 1 ]; then
    why="ended after ${fault_secs}s, bound $((15 + bound))s"
elif [ -z "$msg" ]; then
    why="no report of FABSHMEM_TIMEOUT=15 ('waited 15 s') from PE 0"
elif ! grep -E -q "$warned" "$out"; then
    why="no warning that PE 1 is stopped before the timeout"
fi
detail="exit $fault_rc after $(printf '%.0f' "$fault_secs") s: $msg"
fault_verdict "faults/stop_timeout [FABSHMEM_TIMEOUT=15]" "fsh-$$-stop-timeout"

survive default
survive tcp
survive efa_direct
survive sim_nodes
fault_exit
