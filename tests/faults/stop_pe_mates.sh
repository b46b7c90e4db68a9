#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# stop_pe_mates.sh: a stopped PE of another node, which answers nothing over tcp, is told from
# a cut link by its node-mates (issue 35). tests/faults/stop_pe.c with 4 PEs as 2 pretend nodes
# (FABSHMEM_SIM_NODES=2: PEs 0,1 and 2,3) over tcp (FABSHMEM_INTRANODE=fabric FI_PROVIDER=tcp),
# PE 1 stopped with SIGSTOP for $FSH_STOP_SECS seconds (default 30) in the put + barrier loop,
# then continued. FABSHMEM_PROC_REMOTE=0 keeps PEs 2 and 3 from looking at PE 1 in /proc (it
# runs on this machine): they see it only as from another machine, a fabric probe that goes
# unanswered, and PE 0's liveness block, which says that its node-mate PE 1 is stopped. The
# run must:
#   - exit 0, every PE printing `stop_pe: PE n PASS` (every block received was checked);
#   - show PE 1 paused for most of the stop;
#   - show a warning from PE 2 or 3 that PE 1 is stopped, as its node-mate PE 0 sees, at most
#     4 times per PE in 30 s (at growing intervals), and no `does not answer a fabric probe`;
#   - leave no process and no /dev/shm file behind.
# Before the node-mates' word, PE 2 named PE 1 unreachable after 10 intervals (20 s).
# Prints `faults/stop_pe_mates [N s]: PASS (...)` or `FAIL (why)`.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fault_name=stop_pe_mates
. "$top_srcdir/tests/faults/fault_lib.sh"
prog=$(dirname "$prog")/stop_pe
secs=${FSH_STOP_SECS:-30}
limit=$((secs * 2 + 60))
warned="^fabshmem\[[23] [^]]*\] WARN [a-z_]+\.c:[0-9]+ PE 1 \(on another node, seen stopped by its node-mate PE 0\) is stopped \(SIGSTOP or \^Z\) for [0-9]+ s while PE [23] waits in "

fault_start mates "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n 4 \
    -x FI_TCP_IFACE=lo -x FI_TCP_NODELAY=1 -x SHMEM_SYMMETRIC_SIZE=16M \
    -x FABSHMEM_SIM_NODES=2 -x FABSHMEM_INTRANODE=fabric -x FI_PROVIDER=tcp \
    -x FABSHMEM_PROC_REMOTE=0 "$prog" "$secs" "fsh-$$-stop-mates"
fault_wait
why=""
npass=$(grep -c '^stop_pe: PE [0-3] PASS' "$out")
paused=$(sed -n 's/^stop_pe: PE 1 PASS (.*longest pause \([0-9.]*\) s)/\1/p' "$out")
nwarn=$(grep -E -c "$warned" "$out")
most=$(grep -E "$warned" "$out" | sed 's/^fabshmem\[\([0-9]\) .*/\1/' | sort | uniq -c |
    awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }')
if [ "$fault_rc" = 124 ] || [ "$fault_rc" = 137 ]; then
    why="hung: no exit within ${limit}s"
elif grep -q 'does not answer a fabric probe' "$out"; then
    why="PE 1 named unreachable: $(grep -m 1 'does not answer a fabric probe' "$out" | cut -c 1-160)"
elif [ "$fault_rc" != 0 ]; then
    why="exit $fault_rc"
elif [ "$npass" != 4 ]; then
    why="$npass of 4 PEs passed"
elif [ "$(echo "${paused:-0} < $secs * 0.8" | bc)" = 1 ]; then
    why="PE 1 paused ${paused:-0} s, not the ${secs} s stop"
elif [ "$nwarn" -lt 1 ] || [ "$most" -gt 4 ]; then
    why="$nwarn warnings from PEs 2 and 3 that PE 1 is stopped as PE 0 sees (want 1 or more, at most 4 per PE)"
fi
detail="exit 0 after $(printf '%.0f' "$fault_secs") s, PE 1 paused $paused s, $nwarn warning(s): $(grep -E -m 1 "$warned" "$out" | sed 's/^[^]]*\] //' | cut -c 1-150)"
fault_verdict "faults/stop_pe_mates [$secs s]" "fsh-$$-stop-mates"
fault_exit
