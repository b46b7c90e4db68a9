#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# kill_init.sh: SIGKILL during shmem_init, while the shm provider's region files exist in
# /dev/shm (from the endpoint's creation until init's barrier removes their names), 3 PEs on
# shm: one PE, every PE at once, or mpirun; at the files' appearance and a little later. No
# fabshmem file may be left in the job's private /dev/shm and no process of the job may be
# left, within $FSH_FAULT_BOUND seconds (default 30). FABSHMEM_FABRIC=always: a one-node job
# would open no provider, and so make no file. Prints `faults/kill_init_<what>
# [+<delay>s]: PASS (exit N, files at the kill: K)`. Needs root (a private /dev/shm per job,
# which the runner inspects through /proc/<pid>/root).

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
fault_name=kill_init
. "$top_srcdir/tests/faults/fault_lib.sh"

if [ "$private_shm" != 1 ]; then
    echo "faults/kill_init: SKIP (needs root for a private /dev/shm per job)"
    exit 77
fi

# The processes of the job that are PEs (not their guards: fabshmem-guard).
pes_of() {
    for p in $(fault_orphans "$1"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = fault_pe ] && echo "$p"
    done
}

export FSH_FAULT_SETTLE=$bound
for what in pe all mpirun; do
    for delay in 0 0.05; do
        lbl="faults/kill_init_$what [+${delay}s]"
        # The files live for a fraction of a second: on a loaded machine a poll may miss them,
        # and then the case is tried again (3 tries) rather than judged.
        try=0
        files=0
        while [ "$files" = 0 ] && [ $try -lt 3 ]; do
            try=$((try + 1))
            tag="fsh-$$-init-$what-$delay-$try"
            fault_start "$what-$delay-$try" "$mpirun" --allow-run-as-root --oversubscribe \
                --bind-to none -n 3 -x FI_PROVIDER=shm -x FABSHMEM_FABRIC=always \
                -x SHMEM_SYMMETRIC_SIZE=16M "$prog" forever "$tag"
            why=""
            i=0
            while [ $i -lt 2000 ]; do
                mp=$(fault_mpirun_pid)
                if [ -n "$mp" ]; then
                    # A glob, not ls: the window can be short, and a poll must not fork.
                    set -- "/proc/$mp/root/dev/shm/fabshmem"*
                    if [ -e "$1" ]; then
                        files=$#
                        break
                    fi
                fi
                sleep 0.002
                i=$((i + 1))
            done
            if [ "$files" = 0 ]; then
                why="no shm region file seen during init (3 tries)"
                kill -9 "$mp" 2>/dev/null
                fault_wait
                continue
            else
                sleep "$delay"
                case $what in
                pe) kill -9 $(pes_of "$tag" | head -n 1) 2>/dev/null ;;
                all) kill -9 $(pes_of "$tag") 2>/dev/null ;;
                mpirun) kill -9 "$mp" ;;
                esac
            fi
            fault_wait
            # With mpirun gone the PEs end by themselves: wait for them within the bound.
            j=0
            while [ -n "$(fault_orphans "$tag")" ] && [ $j -lt $((bound * 10)) ]; do
                sleep 0.1
                j=$((j + 1))
            done
        done
        detail="exit $fault_rc, files at the kill: $files"
        fault_verdict "$lbl" "$tag"
    done
done
fault_exit
