#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpirun_netns.sh ARGS...: mpirun started on simulated host h0 (netns_lib.sh) for a job over
# the hosts of $MH_DIR/hostfile: rsh agent rsh_netns.sh, no tree spawn, Open MPI's own traffic
# and libfabric's tcp on the veth fsh0, and keepalives short enough that a dead link ends the
# job. ARGS are mpirun's usual arguments (tests/run_test.sh passes -n, -x, the program).
# MH_RAILS=1: libfabric's tcp is not confined to fsh0 (FABSHMEM_NIC names the links).
here=$(cd "$(dirname "$0")" && pwd)
ns=$(awk '$1 == "h0" { print $2 }' "$MH_DIR/hosts")
if [ "$MH_RAILS" = 1 ]; then
    unset FI_TCP_IFACE
    iface=""
else
    export FI_TCP_IFACE=fsh0
    iface="-x FI_TCP_IFACE"
fi
# shellcheck disable=SC2086 # $iface is one option and its word, or nothing
exec ip netns exec "$ns" unshare --uts sh -c 'hostname h0; exec "$@"' sh \
    "${MPIRUN_REAL:-mpirun}" --hostfile "$MH_DIR/hostfile" \
    --mca plm_rsh_agent "$here/rsh_netns.sh" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include fsh0 --mca btl_tcp_if_include fsh0 \
    --mca oob_tcp_keepalive_time 5 --mca oob_tcp_keepalive_intvl 2 --mca oob_tcp_keepalive_probes 3 \
    $iface -x MH_DIR "$@"
