#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# link_down.sh: the network under a running job goes away. 2 PEs run barriers
# (tests/faults/fault_pe.c, mode forever) over tcp (FABSHMEM_INTRANODE=fabric FI_PROVIDER=tcp
# FI_TCP_IFACE=lo) inside a network namespace of their own; once both are in their loop the
# namespace's loopback link is taken down. Every PE is alive and waits in the library, but no
# operation can ever arrive: a PE must name its peer as unreachable within $FSH_LINK_BOUND
# seconds (default 16; before: nothing for 88 s; at the default probe interval of 2 s it is
# named after 5 intervals) and the job must end (within
# $FSH_FAULT_LIMIT, default 60: ending goes through the launcher, whose own connections used
# that link too). Needs root and `ip netns` (skipped otherwise). Prints `faults/link_down [tcp]:
# PASS (named X s after the cut, exit N)`.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fault_name=link_down
. "$top_srcdir/tests/faults/fault_lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null 2>&1 || ! ip netns list >/dev/null 2>&1; then
    echo "faults/link_down: SKIP (needs root and ip netns)"
    exit 77
fi
ns=fshld$$
if ! ip netns add "$ns" 2>/dev/null; then
    echo "faults/link_down: SKIP (cannot create a network namespace)"
    exit 77
fi
trap 'ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null; ip netns del "$ns" 2>/dev/null; rm -rf "$tmp"' EXIT
ip netns exec "$ns" ip link set lo up

bound=${FSH_LINK_BOUND:-16}
lbl="faults/link_down [tcp]"
tag="fsh-$$-linkdown"
fault_start linkdown ip netns exec "$ns" "$mpirun" --allow-run-as-root --oversubscribe \
    --bind-to none -n 2 -x FABSHMEM_INTRANODE=fabric -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo \
    -x SHMEM_SYMMETRIC_SIZE=16M "$prog" forever "$tag"
why=""
named=""
if fault_ready 2; then
    sleep 1
    ts=$(now)
    ip netns exec "$ns" ip link set lo down
    # The message counts, not the job's end: the launcher's abort crosses the dead link too.
    while kill -0 "$fault_pid" 2>/dev/null && [ -z "$named" ]; do
        if grep -Eq '^fabshmem: PE [01]/2 \([^)]*\): [a-z_]+: PE [01] does not answer a fabric probe for [0-9]+ s' "$out"; then
            named=$(echo "$(now) - $ts" | bc)
        fi
        sleep 0.2
    done
fi
fault_wait
if [ -z "$named" ] && grep -Eq '^fabshmem: PE [01]/2 \([^)]*\): [a-z_]+: PE [01] does not answer a fabric probe' "$out"; then
    named=$(echo "$t0 + $fault_secs - $ts" | bc)
fi
if [ -n "$why" ]; then
    :
elif [ -z "$named" ]; then
    why="no PE named its peer unreachable (exit $fault_rc after ${fault_secs}s)"
elif [ "$(echo "$named > $bound" | bc)" = 1 ]; then
    why="named ${named}s after the cut, bound ${bound}s"
elif [ "$fault_rc" = 0 ]; then
    why="mpirun exited 0"
fi
detail="named $(printf '%.1f' "${named:-0}") s after the cut, exit $fault_rc"
fault_verdict "$lbl" "$tag"
fault_exit
