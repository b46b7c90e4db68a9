#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rsh_netns.sh HOST COMMAND...: mpirun's rsh agent for the simulated hosts of netns_lib.sh. Runs
# COMMAND in HOST's network namespace with its own UTS namespace named HOST, as ssh would run it
# on that host. The host-to-namespace map is $MH_DIR/hosts.
while [ $# -gt 0 ]; do
    case $1 in
    -*) shift ;; # ssh options mpirun may add (-x, ...)
    *) break ;;
    esac
done
host=$1
shift
ns=$(awk -v h="$host" '$1 == h { print $2 }' "$MH_DIR/hosts")
if [ -z "$ns" ]; then
    echo "rsh_netns.sh: unknown host '$host' (see $MH_DIR/hosts)" >&2
    exit 255
fi
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0"; exec sh -c "$1"' "$host" "$*"
