# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash disable=SC2154 # $name and $sl_dir are the caller's
# slurm_lib.sh: what the Slurm tests (run.sh: one node; hosts.sh: two simulated hosts) share
# (sourced, bash). The caller sets $name (the prefix of every line it prints) and $sl_dir (the
# temporary directory that holds the key, sockets, state, spool and logs, and that the caller
# removes); everything here starts processes only by ids it keeps, so stopping them never
# touches an installed Slurm or another run.
#
# sl_need             exits 77 with the reason unless root with slurmctld, slurmd and munged
#                     (installs slurm-wlm and munge with apt-get when they are missing)
# sl_munged_start     munged with its own key and socket under $sl_dir/munge ($sl_sock)
# sl_hw               $sl_cpus and $sl_mem for node lines, from `slurmd -C`
# sl_ports            $sl_port: the first of two adjacent TCP ports that nothing on this host
#                     uses, below the kernel's ephemeral range (which connections take from)
# sl_conf_common      prints the slurm.conf lines that do not depend on the cluster's shape
# sl_daemon NAME LOG PID  records a daemon: sl_wait_idle names it (and shows LOG) if it exits,
#                     sl_stop stops it (after the jobs; the last recorded first, munged last)
# sl_wait_idle NODE.. until every NODE is idle; fails the run when a daemon exits
# sl_run_case LABEL EXPECT CMD...  one PASS/FAIL line (counted in $sl_passes, $sl_fails)
# sl_verdict WHAT LOG...  `WHAT: N passed, N failed (T s)` and, after a failure, the LOGs'
#                     tails; returns 1 when a case failed
# sl_stop             cancels the jobs, then stops the recorded daemons
# Client commands (squeue, scancel, sinfo) run through the words of the array $sl_client (none,
# or a command that enters the network namespace where the controller is reachable).
sl_passes=0
sl_fails=0
sl_pids=""
declare -A sl_name sl_log
sl_client=()

skip() {
    echo "$name: SKIP ($1)"
    exit 77
}

sl_need() {
    [ "$(id -u)" = 0 ] || skip "starts munged and slurmd: run as root"
    if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
        ! command -v munged >/dev/null; then
        command -v apt-get >/dev/null ||
            skip "no slurmctld/slurmd/munged and no apt-get to install them"
        echo "$name: installing slurm-wlm munge (apt-get)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null 2>&1 ||
            skip "apt-get install slurm-wlm munge failed (no package archive reachable?)"
    fi
    id munge >/dev/null 2>&1 || skip "no user munge (the munge package creates it): reinstall munge"
}

# On a failed start, the daemon's log says why.
sl_daemon_fail() {
    echo "$name: FAIL ($1)"
    [ -f "$2" ] && tail -n 20 "$2" | sed 's/^/    /'
    exit 1
}

sl_munged_start() {
    # munged runs as munge and refuses a key or socket whose directories others may write
    # to, or a socket directory that clients cannot enter.
    chmod 755 "$sl_dir"
    mkdir -p "$sl_dir/munge"
    chown munge: "$sl_dir/munge"
    chmod 755 "$sl_dir/munge"
    dd if=/dev/urandom of="$sl_dir/munge/munge.key" bs=1024 count=1 status=none
    chown munge: "$sl_dir/munge/munge.key"
    chmod 400 "$sl_dir/munge/munge.key"
    sl_sock=$sl_dir/munge/munge.socket
    runuser -u munge -- munged --key-file="$sl_dir/munge/munge.key" --socket="$sl_sock" \
        --pid-file="$sl_dir/munge/munged.pid" --log-file="$sl_dir/munge/munged.log" \
        --seed-file="$sl_dir/munge/munged.seed" >"$sl_dir/munged.out" 2>&1 || {
        cat "$sl_dir/munged.out"
        sl_daemon_fail "munged did not start" "$sl_dir/munge/munged.log"
    }
    sl_munged_pid=$(cat "$sl_dir/munge/munged.pid")
}

# The node line must not claim more than slurmd finds (a higher count drains the node as INVAL).
sl_hw() {
    local hw
    hw=$(slurmd -C 2>/dev/null | head -n 1)
    sl_cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$hw")
    sl_mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")
    if [ -z "$sl_cpus" ] || [ -z "$sl_mem" ]; then
        skip "slurmd -C printed no CPUs/RealMemory: $hw"
    fi
    sl_mem=$((sl_mem * 9 / 10))
}

# A port from the process id alone (as before) once met a port in use on a CI machine:
# slurmctld then exits with "Address already in use". Ports in any state in /proc/net/tcp*
# count as used; the search starts from the process id so that parallel runs spread out.
sl_ports() {
    local lo used try p
    lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    lo=${lo:-32768}
    used=" "
    while read -r p; do
        used="$used$((16#$p)) "
    done < <(awk 'FNR > 1 { n = split($2, a, ":"); print a[n] }' /proc/net/tcp \
        /proc/net/tcp6 2>/dev/null)
    for try in $(seq 0 999); do
        p=$((10000 + (($$ + try * 7919) % ((lo - 10002) / 2)) * 2))
        case $used in
        *" $p "* | *" $((p + 1)) "*) continue ;;
        esac
        # shellcheck disable=SC2034 # the caller's
        sl_port=$p
        return 0
    done
    skip "no two free adjacent ports in 10000..$lo"
}

sl_conf_common() {
    mkdir -p "$sl_dir/state"
    cat <<CONF
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sl_sock
StateSaveLocation=$sl_dir/state
SlurmctldPidFile=$sl_dir/slurmctld.pid
SlurmctldLogFile=$sl_dir/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
CONF
}

sl_daemon() {
    sl_pids="$3 $sl_pids"
    sl_name[$3]=$1
    sl_log[$3]=$2
}

# sl_wait_idle NODE...: every NODE idle within 30 s, or the run fails with the controller's log.
sl_wait_idle() {
    local pid node state="" bad=""
    for _ in $(seq 60); do
        for pid in $sl_pids; do
            kill -0 "$pid" 2>/dev/null || sl_daemon_fail "${sl_name[$pid]} exited" "${sl_log[$pid]}"
        done
        bad=""
        for node in "$@"; do
            state=$("${sl_client[@]}" sinfo -h -n "$node" -o %t 2>/dev/null)
            [ "$state" = idle ] || bad="$bad $node is '$state'"
        done
        [ -z "$bad" ] && return 0
        sleep 0.5
    done
    sl_daemon_fail "not idle after 30 s:$bad" "$sl_dir/slurmctld.log"
}

# sl_run_case LABEL EXPECT CMD...: CMD must exit 0 within 120 s and print a line matching each
# line of EXPECT (grep patterns); a failure names the first pattern missing.
sl_run_case() {
    local label=$1 expect=$2 t0=$SECONDS pat missing=""
    shift 2
    local out=$sl_dir/case.out rc
    # In the background, so that a signal's trap runs at once rather than when the case ends.
    timeout 120 "$@" >"$out" 2>&1 &
    sl_case_pid=$!
    wait "$sl_case_pid"
    rc=$?
    sl_case_pid=""
    while IFS= read -r pat; do
        grep -q -e "$pat" "$out" || {
            missing=$pat
            break
        }
    done <<<"$expect"
    if [ $rc = 0 ] && [ -z "$missing" ]; then
        echo "$name/$label: PASS ($((SECONDS - t0)) s)"
        sl_passes=$((sl_passes + 1))
    else
        [ -n "$missing" ] && missing=", no line matching $missing"
        echo "$name/$label: FAIL (exit $rc, $((SECONDS - t0)) s$missing; output tail:)"
        tail -n 15 "$out" | sed 's/^/    /'
        sl_fails=$((sl_fails + 1))
    fi
}

# The verdict is worded so that tests/summary.sh counts the cases, not it as one more.
sl_verdict() {
    local what=$1 log
    shift
    echo "$what: $sl_passes passed, $sl_fails failed ($SECONDS s)"
    [ "$sl_fails" = 0 ] && return 0
    for log in "$@"; do
        echo "  tail of $(basename "$log"):"
        tail -n 15 "$log" | sed 's/^/    /'
    done
    return 1
}

# The running case's timeout (which passes the signal on), the jobs (so no slurmstepd is
# orphaned), then the daemons, by the ids we started; a daemon
# that ignores TERM for 10 s gets KILL.
sl_stop() {
    local pid
    [ -n "${sl_case_pid:-}" ] && kill "$sl_case_pid" 2>/dev/null
    if [ -n "$sl_pids" ]; then
        "${sl_client[@]}" scancel --quiet --full -u root >/dev/null 2>&1
        for _ in $(seq 20); do
            [ -z "$("${sl_client[@]}" squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.5
        done
    fi
    for pid in $sl_pids ${sl_munged_pid:-}; do
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 20); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL "$pid" 2>/dev/null
    done
    sl_pids="" sl_munged_pid=""
}
