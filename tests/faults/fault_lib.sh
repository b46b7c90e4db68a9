# SPDX-License-Identifier: BSD-3-Clause
# fault_lib.sh: what the fault tests share (sourced by tests/faults/*.sh, which set fault_name).
# Sets $prog (tests/faults/fault_pe of the build tree, absolute) and $bound ($FSH_FAULT_BOUND,
# default 30: seconds a case may take from the fault to the job's end).
#
# fault_start LABEL CMD...   runs CMD (an mpirun line) in the background, bounded by
#                            $FSH_FAULT_LIMIT seconds (default 60), with its output in
#                            $tmp/LABEL.out and its pid in $fault_pid; as root (unshare and
#                            mount available) in a private mount namespace whose /dev/shm is a
#                            fresh tmpfs, so every file left there is this job's litter.
# fault_wait                 waits for it; sets $fault_rc and $fault_secs (since fault_start)
# fault_litter               fabshmem files the job left in /dev/shm (empty when none; with a
#                            private /dev/shm, those there when the job's last process ended,
#                            or $FSH_FAULT_SETTLE seconds, default 0, after the launcher ended)
# fault_orphans PATTERN      pids of processes whose command line matches PATTERN
# fault_ready N              waits until N PEs printed `ready`; sets $pid (mpirun's) or $why
# fault_verdict LABEL TAG    the orphan and litter checks, then verdict
# verdict LABEL WHY...       prints `LABEL: PASS ($detail)` or `LABEL: FAIL (why)` and counts
# A test passes its own unique tag as an argument to the program, so the orphan check never
# sees the processes of a test running beside it.

# The program (absolute: the rsh agent and the orphan check see it so) and the time bound.
prog=${top_builddir:-.}/tests/faults/fault_pe
if [ ! -x "$prog" ]; then
    echo "faults/${fault_name:-fault}: FAIL (no executable $prog)"
    exit 1
fi
prog=$(cd "$(dirname "$prog")" && pwd)/fault_pe
bound=${FSH_FAULT_BOUND:-30}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsh_fault.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mpirun=${MPIRUN:-mpirun}
limit=${FSH_FAULT_LIMIT:-60}
nfail=0
npass=0

private_shm=0
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 &&
    unshare -m --propagation private sh -c 'mount -t tmpfs fsh_probe /dev/shm' 2>/dev/null; then
    private_shm=1
fi

now() {
    date +%s.%N
}

fault_start() {
    label=$1
    shift
    out=$tmp/$label.out
    : >"$tmp/$label.shm"
    t0=$(now)
    if [ "$private_shm" = 1 ]; then
        # The inner shell keeps the namespace (and its /dev/shm) alive until the job ended,
        # then lists what is left.
        unshare -m --propagation private sh -c '
            shm_list=$1; settle=$2; shift 2
            mount -t tmpfs -o size=1g fsh_fault /dev/shm || exit 98
            "$@" &
            echo $! >"$shm_list.pid"
            wait $!
            rc=$?
            # PEs (and their name guards) may outlive the launcher by design
            # (kill_mpirun.sh): give them $settle seconds to end before what is left counts as
            # left behind. Judged by the processes in this namespace, not by the files: a PE
            # still creating its region when the launcher died makes its file later, and
            # removes it when it ends.
            # (-ef: the same namespace is the same nsfs inode; no process forked per look.)
            job_alive() {
                for d in /proc/[0-9]*; do
                    [ "${d#/proc/}" != $$ ] && [ "$d/ns/mnt" -ef /proc/$$/ns/mnt ] && return 0
                done
                return 1
            }
            i=0
            while [ $i -lt $((settle * 10)) ] && job_alive; do
                sleep 0.1
                i=$((i + 1))
            done
            ls -A /dev/shm >"$shm_list"
            exit $rc' sh "$tmp/$label.shm" "${FSH_FAULT_SETTLE:-0}" timeout -k 5 "$limit" "$@" >"$out" 2>&1 &
        fault_pid=$!
    else
        ls -A /dev/shm >"$tmp/$label.shm.before" 2>/dev/null
        timeout -k 5 "$limit" "$@" >"$out" 2>&1 &
        fault_pid=$!
        echo "$fault_pid" >"$tmp/$label.shm.pid"
    fi
}

fault_wait() {
    wait "$fault_pid"
    fault_rc=$?
    fault_secs=$(echo "$(now) - $t0" | bc)
    if [ "$private_shm" = 0 ]; then
        ls -A /dev/shm 2>/dev/null | grep -vxF -f "$tmp/$label.shm.before" >"$tmp/$label.shm"
    fi
}

fault_litter() {
    grep '^fabshmem' "$tmp/$label.shm" | tr '\n' ' '
}

fault_orphans() {
    pgrep -f -- "$1" | tr '\n' ' '
}

# fault_verdict LABEL TAG: adds to $why the processes tagged TAG still alive 2 s after the job
# ended (and kills them) and the job's /dev/shm litter, then prints the verdict with $detail.
fault_verdict() {
    orphans=$(fault_orphans "$2")
    if [ -n "$orphans" ]; then
        sleep 2
        orphans=$(fault_orphans "$2")
    fi
    if [ -n "$orphans" ]; then
        why="${why:+$why; }orphan processes: $orphans"
        # shellcheck disable=SC2086 # a list of pids, all of this test's job
        kill -9 $orphans 2>/dev/null
    fi
    litter=$(fault_litter)
    if [ -n "$litter" ]; then
        why="${why:+$why; }left in /dev/shm: $litter"
    fi
    verdict "$1" "$why"
}

# The pid of the job's mpirun (the child of timeout), for signalling it.
fault_mpirun_pid() {
    tpid=$(cat "$tmp/$label.shm.pid" 2>/dev/null)
    [ -n "$tpid" ] && pgrep -P "$tpid" | head -n 1
}

# fault_ready N: waits (up to 30 s) until N PEs printed `ready` and the job's mpirun is known;
# sets $pid to mpirun's pid, or $why when the job did not start.
fault_ready() {
    i=0
    pid=""
    while [ $i -lt 300 ]; do
        n=$(grep -c 'ready$' "$out" 2>/dev/null)
        pid=$(fault_mpirun_pid)
        if [ "${n:-0}" -ge "$1" ] && [ -n "$pid" ]; then
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    why="the job did not start (mpirun pid '$pid')"
    pid=""
    return 1
}

verdict() {
    lbl=$1
    shift
    if [ -n "$*" ]; then
        echo "$lbl: FAIL ($*)"
        sed 's/^/    /' "$out" | tail -n 25
        nfail=$((nfail + 1))
    else
        echo "$lbl: PASS ($detail)"
        npass=$((npass + 1))
    fi
}

fault_exit() {
    [ "$nfail" -eq 0 ]
    exit $?
}
