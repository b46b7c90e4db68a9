#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dispatch.sh: automake's LOG_COMPILER. Called as `dispatch.sh ./tests/<kind>/<name>`, it hands
# the program to the runner its kind needs:
#   tests/mpi/*     -> tests/run_test.sh (every provider configuration and PE count)
#   tests/errors/*  -> tests/run_error.sh (must fail, output must match <case>.expect; a
#                      case.expect alone runs the program its `program:` line names)
#   anything else   -> run directly (unit tests)
# The runners are found through $top_srcdir, which the Makefile exports; without it, this
# script's own directory is taken to be tests/ of the source tree.

if [ -z "$top_srcdir" ]; then
    top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
    export top_srcdir
fi

case "$1" in
*tests/mpi/*) exec /bin/sh "$top_srcdir/tests/run_test.sh" "$@" ;;
*tests/errors/*) exec /bin/sh "$top_srcdir/tests/run_error.sh" "$@" ;;
*) exec "$@" ;;
esac
