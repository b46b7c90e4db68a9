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
name=slurm
skip() { echo "$name: SKIP ($1)"; exit 77; }

[ "$(id -u)" = 0 ] || skip "starts munged and slurmd: run as root"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v munged >/dev/null; then
    command -v apt-get >/dev/null || skip "no slurmctld/slurmd/munged and no apt-get to install them"
    echo "$name: installing slurm-wlm munge (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null 2>&1 ||
        skip "apt-get install slurm-wlm munge failed (no package archive reachable?)"
fi
id munge >/dev/null 2>&1 || skip "no user munge (the munge package creates it): reinstall munge"
cases="examples/hello examples/ring_put tests/mpi/init_query tests/mpi/barrier_all tests/mpi/coll_reduce"
for p in $cases; do
    [ -x "$top_builddir/$p" ] || skip "$top_builddir/$p not built: run make check-slurm"
done
bld=$(cd "$top_builddir" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsh_slurm.XXXXXX") || exit 1
# munged runs as munge and refuses a key or socket whose directories others may write to, or a
# socket directory that clients cannot enter.
chmod 755 "$tmp"
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool"
chown munge: "$tmp/munge"
chmod 755 "$tmp/munge"
ctld_pid="" slurmd_pid="" munged_pid=""
export SLURM_CONF=$tmp/slurm.conf
# Cleanup order: jobs first (so no slurmstepd is orphaned), then the daemons, by the ids we
# started; a daemon that ignores TERM for 10 s gets KILL.
cleanup() {
    if [ -n "$ctld_pid" ]; then
        scancel --quiet --full -u root >/dev/null 2>&1
        for _ in $(seq 20); do
            [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.5
        done
    fi
    for pid in $slurmd_pid $ctld_pid $munged_pid; do
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 20); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL "$pid" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# On a failed start, the daemon's log says why.
daemon_fail() {
    echo "$name: FAIL ($1)"
    [ -f "$2" ] && tail -n 20 "$2" | sed 's/^/    /'
    exit 1
}

# munged with its own key and socket.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chown munge: "$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
sock=$tmp/munge/munge.socket
runuser -u munge -- munged --key-file="$tmp/munge/munge.key" --socket="$sock" \
    --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
    --seed-file="$tmp/munge/munged.seed" >"$tmp/munged.out" 2>&1 ||
    { cat "$tmp/munged.out"; daemon_fail "munged did not start" "$tmp/munge/munged.log"; }
munged_pid=$(cat "$tmp/munge/munged.pid")

# The node line must not claim more than slurmd finds (a higher count drains the node as INVAL).
host=$(hostname -s)
hw=$(slurmd -C 2>/dev/null | head -n 1)
cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$hw")
mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
[ -n "$cpus" ] && [ -n "$mem" ] || skip "slurmd -C printed no CPUs/RealMemory: $hw"
mem=$((mem * 9 / 10))
# Ports of this run (two adjacent, from the process id), so another run or a real slurmctld
# on the default 6817/6818 does not answer.
port=$((20000 + ($$ % 20000) * 2))
cat >"$SLURM_CONF" <<CONF
ClusterName=fshtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=fsh Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
CONF

slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
slurmd_pid=$!
state=""
for _ in $(seq 60); do
    kill -0 "$ctld_pid" 2>/dev/null || daemon_fail "slurmctld exited" "$tmp/slurmctld.log"
    kill -0 "$slurmd_pid" 2>/dev/null || daemon_fail "slurmd exited" "$tmp/slurmd.log"
    state=$(sinfo -h -n "$host" -o %t 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.5
done
[ "$state" = idle ] || daemon_fail "node $host is '$state', not idle, after 30 s" "$tmp/slurmctld.log"
srun --mpi=list 2>&1 | grep -q pmix ||
    skip "srun --mpi=list shows no pmix plugin: $(srun --mpi=list 2>&1 | tr '\n' ' ')"
echo "$name: cluster up in $SECONDS s (node $host, CPUs=$cpus, $(srun --version))"

fails=0
# run_case LABEL EXPECT CMD...: CMD must exit 0 and print a line matching EXPECT.
run_case() {
    local label=$1 expect=$2 t0=$SECONDS
    shift 2
    local out=$tmp/case.out
    timeout 120 "$@" >"$out" 2>&1
    local rc=$?
    if [ $rc = 0 ] && grep -q -e "$expect" "$out"; then
        echo "$name/$label: PASS ($((SECONDS - t0)) s)"
    else
        echo "$name/$label: FAIL (exit $rc, $((SECONDS - t0)) s; output tail:)"
        tail -n 15 "$out" | sed 's/^/    /'
        fails=$((fails + 1))
    fi
}
for n in 1 2 3 4; do
    run_case "srun-n$n/hello" "PE 0 counted $n of $n PEs: OK" \
        srun --mpi=pmix -n "$n" -O "$bld/examples/hello"
done
for n in 2 4; do
    run_case "srun-n$n/ring_put" "ring_put: $n PEs .*: OK" \
        srun --mpi=pmix -n "$n" -O "$bld/examples/ring_put"
done
run_case "srun-n2/init_query" "init_query: PASS" \
    srun --mpi=pmix -n 2 -O "$bld/tests/mpi/init_query"
run_case "srun-n4/barrier_all" "barrier_all: PASS" \
    srun --mpi=pmix -n 4 -O "$bld/tests/mpi/barrier_all"
run_case "srun-n3/coll_reduce" "coll_reduce: PASS" \
    srun --mpi=pmix -n 3 -O "$bld/tests/mpi/coll_reduce"

# A batch job as users write one: #SBATCH lines, srun inside; sbatch --wait returns its status.
cat >"$tmp/job.sh" <<JOB
#!/bin/sh
#SBATCH --job-name=fsh_hello
#SBATCH --ntasks=2
#SBATCH --oversubscribe
#SBATCH --time=2
srun --mpi=pmix $bld/examples/hello
JOB
run_case "sbatch-n2/hello" "PE 0 counted 2 of 2 PEs: OK" \
    sh -c "sbatch --wait --output='$tmp/job.out' '$tmp/job.sh' && cat '$tmp/job.out'"

# The verdict is worded so that tests/summary.sh counts the cases above, not it as one more.
if [ "$fails" -gt 0 ]; then
    echo "$name: $fails cases failed ($SECONDS s); slurmd log tail:"
    tail -n 20 "$tmp/slurmd.log" | sed 's/^/    /'
    exit 1
fi
echo "$name: every case passed ($SECONDS s)"
