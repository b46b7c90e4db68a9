#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# summary.sh DIR: counts the cases of every automake test log (*.log) under DIR.
#
# A case is a line that starts in the first column and ends in `: PASS`, `: FAIL (...)` or
# `: SKIP (...)`: the lines run_test.sh prints per configuration and PE count
# (`name [shm np=2]: PASS`, `name [singleton]: PASS`), run_error.sh's `errors/<case>: PASS`, and
# the verdict lines of unit tests and api_symbols. Program output that the runners show under a
# failing case is indented, so it is never counted; test-suite.log (which repeats failing logs)
# is skipped.
#
# Prints the failing cases, a breakdown per configuration (`shm: 40 passed, 0 failed, 0 skipped`;
# every configuration under its own name, e.g. `shm-chaos` and `tcp-chaos` apart from `shm` and
# `tcp`; `singleton`, `errors`, `unit` for the runs outside the matrix, and `faults`, `multihost`,
# `sanitize`, `soak`, `slurm` for the lines of tests/faults, tests/multihost, .ci/sanitize,
# tests/soak and tests/slurm), and as its last line
# exactly `N passed, N failed, N skipped`. Exits 1 when a case failed or none passed.

dir=${1:-.}
if [ ! -d "$dir" ]; then
    echo "usage: $0 DIR (no directory '$dir')" >&2
    exit 2
fi

find "$dir" -type f -name '*.log' ! -name 'test-suite.log' -exec cat {} + 2>/dev/null |
    awk '
    /^[^ \t].*: (PASS|FAIL|SKIP)( \(.*\))?$/ {
        verdict = $0
        sub(/ \(.*\)$/, "", verdict)
        sub(/.*: /, "", verdict)
        cfg = "unit"
        if ($0 ~ /^(faults|multihost|sanitize|soak|slurm)\//) {
            cfg = $0
            sub(/\/.*/, "", cfg)
        } else if (match($0, /^[^ ]+ \[[^]]*\]: /)) {
            cfg = $0
            sub(/^[^ ]+ \[/, "", cfg)
            sub(/[] ].*/, "", cfg)
        } else if ($0 ~ /^errors\//) {
            cfg = "errors"
        }
        if (!(cfg in seen)) {
            seen[cfg] = 1
            order[++ncfg] = cfg
        }
        if (verdict == "PASS") { pass++; cpass[cfg]++ }
        else if (verdict == "FAIL") { fail++; cfail[cfg]++; failed[++nfailed] = $0 }
        else { skip++; cskip[cfg]++ }
    }
    END {
        if (nfailed > 0) {
            print "failed:"
            for (i = 1; i <= nfailed; i++) {
                print "  " failed[i]
            }
        }
        for (i = 1; i <= ncfg; i++) {
            c = order[i]
            printf "%s: %d passed, %d failed, %d skipped\n", c, cpass[c], cfail[c], cskip[c]
        }
        printf "%d passed, %d failed, %d skipped\n", pass, fail, skip
        exit (fail > 0 || pass == 0) ? 1 : 0
    }'
