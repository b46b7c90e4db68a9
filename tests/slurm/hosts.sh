#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# hosts.sh: Slurm across two simulated hosts. Builds two hosts h0 and h1 as network namespaces
# on a bridge (tests/multihost/netns_lib.sh: veth fsh0, 198.51.100.10 and .11), runs
# slurmctld on h0 and one slurmd per host, each under its own NodeName, NodeAddr and hostname
# (UTS namespace) with its own spool, TmpFS, pid file and log, one munged for all (its socket
# is a file: namespaces share the filesystem). Then fabshmem programs under
# `srun --mpi=pmix -N 2` at 2 and 4 tasks and once through `sbatch -N 2`, over libfabric's tcp
# on fsh0 between the hosts. Every task prints its host first (task.sh), and each case checks
# that task r ran on the host the block distribution gives it, besides the program's own data
# check and exit status. One PASS/FAIL line per case; the jobs, daemons and namespaces are
# removed at exit, whatever happens (trap). Exits 0 pass, 1 fail, 77 skip (with the reason).
#
# What it takes for slurmd to run in a namespace (found here, Slurm 22.05):
# - Enter the namespace with `nsenter --net`, not `ip netns exec`: the latter mounts a fresh
#   /sys, without /sys/fs/cgroup, and slurmd stops at start ("No filesystem mounted on
#   /sys/fs/cgroup ... Unable to initialize cgroup plugin"), even with proctrack/linuxproc.
# - TmpFS per node (%n): the PMIx plugin makes its client directory
#   TmpFS/spmix_appdir_<uid>_<job>.<step>, and the second slurmd of a step on one /tmp fails
#   the launch ("Cannot create client cli tmpdir ... File exists").
# - The spool directories must exist before slurmd starts.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
export top_srcdir
name=slurm
# shellcheck source=tests/slurm/slurm_lib.sh
. "$top_srcdir/tests/slurm/slurm_lib.sh"
# shellcheck source=tests/multihost/netns_lib.sh
. "$top_srcdir/tests/multihost/netns_lib.sh"
# Sourcing made $mh_dir; mh_setup's trap replaces this one, and the line after it adds the
# jobs and daemons to it.
trap 'sl_stop; mh_teardown' EXIT
trap 'exit 1' INT TERM HUP PIPE

sl_need
if ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
    skip "no 'ip netns' here (iproute2)"
fi
if ! command -v nsenter >/dev/null || ! command -v unshare >/dev/null; then
    skip "needs nsenter and unshare (util-linux)"
fi
for p in examples/hello examples/ring_put tests/mpi/barrier_all tests/mpi/coll_reduce; do
    [ -x "$top_builddir/$p" ] || skip "$top_builddir/$p not built: run make check-slurm"
done
bld=$(cd "$top_builddir" && pwd)
task=$top_srcdir/tests/slurm/task.sh

if ! mh_setup 2 || ! mh_wait_up; then
    echo "$name/2hosts/setup: FAIL (could not build the namespaces and veths; see above)"
    exit 1
fi
# mh_setup's trap removes the namespaces; the jobs and daemons go first.
trap 'sl_stop; mh_teardown' EXIT
trap 'exit 1' INT TERM HUP PIPE
sl_dir=$mh_dir
# Into host I's network namespace: nsenter --net="$(netns I)" (mounts and hostname unchanged;
# nsenter and unshare exec, so $! of a daemon started through them is the daemon).
netns() {
    echo "/run/netns/$(mh_ns "$1")"
}
# The clients (srun, sbatch, sinfo, squeue, scancel) run on h0, beside the controller (a word
# list, for timeout to run).
on_h0=(nsenter --net="$(netns 0)")
sl_client=("${on_h0[@]}")
export SLURM_CONF=$sl_dir/slurm.conf
sl_munged_start
sl_hw

# Each host's ports are its own (a namespace), so Slurm's defaults serve.
{
    cat <<CONF
ClusterName=fshhosts
SlurmctldHost=h0(198.51.100.10)
SlurmctldPort=6817
SlurmdPort=6818
SlurmdSpoolDir=$sl_dir/spool/%n
TmpFS=$sl_dir/tmp/%n
SlurmdPidFile=$sl_dir/slurmd.%n.pid
SlurmdLogFile=$sl_dir/slurmd.%n.log
NodeName=h0 NodeAddr=198.51.100.10 CPUs=$sl_cpus RealMemory=$sl_mem State=UNKNOWN
NodeName=h1 NodeAddr=198.51.100.11 CPUs=$sl_cpus RealMemory=$sl_mem State=UNKNOWN
PartitionName=fsh Nodes=h0,h1 Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
CONF
    sl_conf_common
} >"$SLURM_CONF"

# Every daemon under its host's name (slurmctld checks its own against SlurmctldHost).
nsenter --net="$(netns 0)" unshare --uts sh -c 'hostname h0; exec "$@"' sh \
    slurmctld -D -i -f "$SLURM_CONF" >"$sl_dir/slurmctld.out" 2>&1 &
sl_daemon slurmctld "$sl_dir/slurmctld.log" $!
for i in 0 1; do
    mkdir -p "$sl_dir/spool/h$i" "$sl_dir/tmp/h$i"
    # shellcheck disable=SC2016 # $0 and $1 are sh -c's arguments
    nsenter --net="$(netns "$i")" unshare --uts \
        sh -c 'hostname "$0"; exec slurmd -D -N "$0" -f "$1"' "h$i" "$SLURM_CONF" \
        >"$sl_dir/slurmd.h$i.out" 2>&1 &
    sl_daemon "slurmd on h$i" "$sl_dir/slurmd.h$i.log" $!
done
sl_wait_idle h0 h1
echo "$name/2hosts: cluster up in $SECONDS s (nodes h0 h1 in namespaces $(mh_ns 0)" \
    "$(mh_ns 1), CPUs=$sl_cpus each)"

# fabshmem between the hosts: libfabric's tcp on the veth; between a host's PEs, the intra-node
# path (as multihost.sh's tcp-hosts). Unbound and yielding: every simulated host has the same
# 2 cores.
export FI_PROVIDER=tcp FI_TCP_IFACE=fsh0 FI_TCP_NODELAY=1 FABSHMEM_BIND=none FABSHMEM_YIELD=always
export SHMEM_SYMMETRIC_SIZE=64M

# placed N: the lines that put each of N tasks on its host (-N 2, block distribution: the
# first half on h0).
placed() {
    local r
    for r in $(seq 0 $(($1 - 1))); do
        echo "^task $r of $1 on h$((r * 2 / $1)) (node h$((r * 2 / $1)),"
    done
}
fabric="provider tcp;ofi_rxm.* domain fsh0"
for n in 2 4; do
    sl_run_case "2hosts/srun-N2-n$n/hello" "$(placed $n)
$fabric
PE 0 counted $n of $n PEs: OK" \
        "${on_h0[@]}" env SHMEM_INFO=1 srun --mpi=pmix -N 2 -n "$n" -O "$task" "$bld/examples/hello"
    sl_run_case "2hosts/srun-N2-n$n/ring_put" "$(placed $n)
ring_put: $n PEs .*: OK" \
        "${on_h0[@]}" srun --mpi=pmix -N 2 -n "$n" -O "$task" "$bld/examples/ring_put"
done
sl_run_case "2hosts/srun-N2-n4/barrier_all" "$(placed 4)
barrier_all: PASS" \
    "${on_h0[@]}" srun --mpi=pmix -N 2 -n 4 -O "$task" "$bld/tests/mpi/barrier_all"
sl_run_case "2hosts/srun-N2-n4/coll_reduce" "$(placed 4)
coll_reduce: PASS" \
    "${on_h0[@]}" srun --mpi=pmix -N 2 -n 4 -O "$task" "$bld/tests/mpi/coll_reduce"

# A batch job over both hosts: the script runs on h0, its steps on both.
cat >"$sl_dir/job.sh" <<JOB
#!/bin/sh
#SBATCH --job-name=fsh_hosts
#SBATCH --nodes=2
#SBATCH --ntasks=4
#SBATCH --oversubscribe
#SBATCH --time=2
srun --mpi=pmix $task $bld/examples/hello && srun --mpi=pmix $task $bld/examples/ring_put
JOB
sl_run_case "2hosts/sbatch-N2-n4/hello+ring_put" "$(placed 4)
PE 0 counted 4 of 4 PEs: OK
ring_put: 4 PEs .*: OK" \
    "${on_h0[@]}" sh -c "sbatch --wait --output='$sl_dir/job.out' '$sl_dir/job.sh'; rc=\$?;
        cat '$sl_dir/job.out'; exit \$rc"

sl_verdict "$name/2hosts" "$sl_dir/slurmd.h0.log" "$sl_dir/slurmd.h1.log"
