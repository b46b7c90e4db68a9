# SPDX-License-Identifier: BSD-3-Clause
# progress.sh, sourced by the test runners (run_test.sh, run_error.sh, bench/smoke.sh): a case's
# verdict line goes to stdout, which automake's harness keeps in the test's log (tests/summary.sh
# counts it there), and, with the case's time, to fd 9 when that is open: `make check 9>&1`
# (.ci/run) shows every case as it ends, where the log would only show once a program is done.

# Start the clock of a case.
fsh_case_start() {
    fsh_case_t0=$(date +%s.%N)
}

# fsh_verdict LINE: print the case's line; on fd 9 with " (T s)" after it.
fsh_verdict() {
    echo "$1"
    fsh_case_t=$(awk -v s="$fsh_case_t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    { printf '%s (%s s)\n' "$1" "$fsh_case_t" >&9; } 2>/dev/null
}
