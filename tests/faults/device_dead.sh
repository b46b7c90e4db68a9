#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# device_dead.sh: a device-API wait whose peer is killed ends with SHMEMX_DEV_EPROXY instead of
# hanging (tests/faults/device_dead.c, 2 PEs, PE 1 SIGKILLed), on shm and on tcp, with the
# launcher told not to abort the job (so only fabshmem's own liveness probe, through the
# proxy's idle wait, can end the wait). Each case must print device_dead: PASS within
# $FSH_FAULT_BOUND seconds (default 30) and log the proxy's line naming PE 1.
# Run by `make check` with top_srcdir, top_builddir and MPIRUN set; exits 0 pass, 1 fail.

top_builddir=${top_builddir:-.}
mpirun=${MPIRUN:-mpirun}
prog=$(cd "$top_builddir/tests/faults" 2>/dev/null && pwd)/device_dead
bound=${FSH_FAULT_BOUND:-30}
if [ ! -x "$prog" ]; then
    echo "faults/device_dead: FAIL (no executable $prog)"
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/device_dead.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
for prov in shm tcp; do
    mode=auto
    [ "$prov" = tcp ] && mode=fabric
    # The verdict is PE 0's line; mpirun itself may linger over the killed PE (without its
    # abort), so it is ended here once the line is out or the bound has passed.
    "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n 2 \
        --mca orte_abort_on_non_zero_status 0 -x FI_PROVIDER=$prov -x FI_TCP_IFACE=lo \
        -x FABSHMEM_INTRANODE=$mode "$prog" >"$tmp/$prov.out" 2>&1 &
    pid=$!
    i=0
    while [ $i -lt $((bound * 2 + 20)) ] && ! grep -q '^device_dead: ' "$tmp/$prov.out"; do
        sleep 0.5
        i=$((i + 1))
    done
    sleep 1
    kill "$pid" 2>/dev/null && sleep 2 && kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    line=$(grep -m 1 '^device_dead: ' "$tmp/$prov.out")
    secs=$(echo "$line" | sed -n 's/.*after \([0-9.]*\) s.*/\1/p')
    if [ -z "$line" ]; then
        why="hung: no verdict within $((bound + 10)) s"
    elif ! echo "$line" | grep -q ': PASS'; then
        why="$line"
    elif [ "${secs%.*}" -ge "$bound" ]; then
        why="the wait took $secs s (bound $bound)"
    elif ! grep -q 'device API proxy stops: PE 1 .*gone' "$tmp/$prov.out"; then
        why="no proxy line naming PE 1"
    else
        echo "faults/device_dead [$prov]: PASS ${line#device_dead: PASS }"
        continue
    fi
    fail=1
    echo "faults/device_dead [$prov]: FAIL ($why)"
    sed 's/^/    /' "$tmp/$prov.out" | tail -n 20
done
exit $fail
