#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# soak.sh [SECONDS] [NP]: the soak test (tests/soak/soak.c: every operation from every PE with
# random sizes and peers, all data verified) for SECONDS in all (default 60 under make
# check-full, the CI setting, 10 under make check; give more for a longer soak), split evenly
# between the shm and tcp providers, NP PEs (default 4). Each run is bounded by its share plus
# 120 s. Prints `soak/<provider>: PASS (PEs, rounds, operations, bytes, seconds)` or FAIL with
# the output.
default_secs=10
[ "$FSH_TEST_FULL" = 1 ] && default_secs=60
secs=${1:-${FSH_SOAK_SECONDS:-$default_secs}}
np=${2:-4}
top_builddir=${top_builddir:-.}
prog=$top_builddir/tests/soak/soak
mpirun=${MPIRUN:-mpirun}
if [ ! -x "$prog" ]; then
    echo "soak: FAIL (no executable $prog)"
    exit 1
fi
share=$(echo "$secs / 2" | bc -l)
limit=$(echo "$share + 120" | bc | cut -d. -f1)
tmp=$(mktemp "${TMPDIR:-/tmp}/fsh_soak.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT
status=0
for prov in shm tcp; do
    timeout -k 5 "$limit" "$mpirun" --allow-run-as-root --oversubscribe --bind-to none -n "$np" \
        -x FI_PROVIDER=$prov -x FI_TCP_IFACE=lo -x FI_TCP_NODELAY=1 -x SHMEM_SYMMETRIC_SIZE=64M \
        "$prog" "$share" >"$tmp" 2>&1
    rc=$?
    line=$(grep -m 1 '^soak: PASS' "$tmp")
    if [ $rc = 0 ] && [ -n "$line" ]; then
        echo "soak/$prov: ${line#soak: }"
    else
        case $rc in
        124 | 137) echo "soak/$prov: FAIL (hung: no end within ${limit}s)" ;;
        *) echo "soak/$prov: FAIL (exit $rc)" ;;
        esac
        tail -n 30 "$tmp" | sed 's/^/    /'
        status=1
    fi
done
exit $status
