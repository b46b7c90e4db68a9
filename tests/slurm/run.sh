#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh: Slurm as a launcher. Starts a one-node Slurm cluster on this machine (munged,
# slurmctld, slurmd, with their key, sockets, state, spool and logs under one temporary
# directory and ports of their own, so an installed Slurm and other runs are not touched),
# runs the examples and some tests/mpi programs under `srun --mpi=pmix` at 1..4 tasks and once
# through `sbatch`, then cancels what is left, stops the daemons and removes the directory,
# whatever happens (trap). One PASS/FAIL line per case.
# Needs root (munged runs as user munge, slurmd as root); installs slurm-wlm and munge with
# apt-get when they are missing. Not under make check: it starts daemons as root, may install
# packages, and takes 30-60 s on 2 cores. Run by `make check-slurm` with top_builddir set (the programs
# must be built: make check-slurm builds them). Exits 0 pass, 1 fail, 77 skip (with the reason).
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
name=slurm
# shellcheck source=tests/slurm/slurm_lib.sh
. "$top_srcdir/tests/slurm/slurm_lib.sh"

sl_need
cases="examples/hello examples/ring_put tests/mpi/init_query tests/mpi/barrier_all tests/mpi/coll_reduce"
for p in $cases; do
    [ -x "$top_builddir/$p" ] || skip "$top_builddir/$p not built: run make check-slurm"
done
bld=$(cd "$top_builddir" && pwd)

sl_dir=$(mktemp -d "${TMPDIR:-/tmp}/fsh_slurm.XXXXXX") || exit 1
mkdir -p "$sl_dir/spool"
export SLURM_CONF=$sl_dir/slurm.conf
trap 'sl_stop; rm -rf "$sl_dir"' EXIT
trap 'exit 1' INT TERM HUP PIPE
sl_munged_start
sl_hw

host=$(hostname -s)
# Ports of this run (two adjacent and free), so another run or a real slurmctld on the
# default 6817/6818 does not answer.
sl_ports
port=$sl_port
{
    cat <<CONF
ClusterName=fshtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmdSpoolDir=$sl_dir/spool
SlurmdPidFile=$sl_dir/slurmd.pid
SlurmdLogFile=$sl_dir/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$sl_cpus RealMemory=$sl_mem State=UNKNOWN
PartitionName=fsh Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
CONF
    sl_conf_common
} >"$SLURM_CONF"

slurmctld -D -i -f "$SLURM_CONF" >"$sl_dir/slurmctld.out" 2>&1 &
sl_daemon slurmctld "$sl_dir/slurmctld.log" $!
slurmd -D -f "$SLURM_CONF" >"$sl_dir/slurmd.out" 2>&1 &
sl_daemon slurmd "$sl_dir/slurmd.log" $!
sl_wait_idle "$host"
srun --mpi=list 2>&1 | grep -q pmix ||
    skip "srun --mpi=list shows no pmix plugin: $(srun --mpi=list 2>&1 | tr '\n' ' ')"
echo "$name: cluster up in $SECONDS s (node $host, CPUs=$sl_cpus, $(srun --version))"

for n in 1 2 3 4; do
    sl_run_case "srun-n$n/hello" "PE 0 counted $n of $n PEs: OK" \
        srun --mpi=pmix -n "$n" -O "$bld/examples/hello"
done
for n in 2 4; do
    sl_run_case "srun-n$n/ring_put" "ring_put: $n PEs .*: OK" \
        srun --mpi=pmix -n "$n" -O "$bld/examples/ring_put"
done
sl_run_case "srun-n2/init_query" "init_query: PASS" \
    srun --mpi=pmix -n 2 -O "$bld/tests/mpi/init_query"
sl_run_case "srun-n4/barrier_all" "barrier_all: PASS" \
    srun --mpi=pmix -n 4 -O "$bld/tests/mpi/barrier_all"
sl_run_case "srun-n3/coll_reduce" "coll_reduce: PASS" \
    srun --mpi=pmix -n 3 -O "$bld/tests/mpi/coll_reduce"

# A batch job as users write one: #SBATCH lines, srun inside; sbatch --wait returns its status.
cat >"$sl_dir/job.sh" <<JOB
#!/bin/sh
#SBATCH --job-name=fsh_hello
#SBATCH --ntasks=2
#SBATCH --oversubscribe
#SBATCH --time=2
srun --mpi=pmix $bld/examples/hello
JOB
sl_run_case "sbatch-n2/hello" "PE 0 counted 2 of 2 PEs: OK" \
    sh -c "sbatch --wait --output='$sl_dir/job.out' '$sl_dir/job.sh' && cat '$sl_dir/job.out'"

sl_verdict "$name" "$sl_dir/slurmd.log"
