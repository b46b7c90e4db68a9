#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# device_check_dry.sh: tests/gpu/device_check.sh --dry-run on this GPU-less machine, reusing the
# build `make check` just made: the build step (make), the GPU tests and benchmarks on the mock
# driver, nvcc compiles where nvcc is. Fails when the script fails (a step failed), or when its
# table lacks what every dry run must show: the build and the device-heap tests passed, the
# benchmark rows filled with numbers, the GPU-only steps printed. Skips (77) in a build without
# CUDA headers (no mock driver to run on) and in a build outside the source tree.
name=device_check_dry
top_srcdir=${top_srcdir:-${0%/*}/../..}
top_builddir=${top_builddir:-.}
if [ ! -e "$top_builddir/tests/gpu/libmockcuda.so" ]; then
    echo "$name: SKIP (no tests/gpu/libmockcuda.so: configured without CUDA headers)"
    exit 77
fi
if [ "$(cd "$top_builddir" && pwd)" != "$(cd "$top_srcdir" && pwd)" ]; then
    echo "$name: SKIP (a build outside the source tree: device_check.sh builds in the source tree)"
    exit 77
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/fsh_devcheck.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
OUT=$out DEVICE_CHECK_JOBS=2 DEVICE_CHECK_BUDGET=240 \
    bash "$top_srcdir/tests/gpu/device_check.sh" --dry-run --reuse-build >"$out/run.log" 2>&1
rc=$?
fail() {
    echo "$name: FAIL ($1)"
    tail -n 60 "$out/run.log" | sed 's/^/    /'
    exit 1
}
[ "$rc" = 0 ] || fail "device_check.sh --dry-run exited $rc"
t=$out/table.md
[ -f "$t" ] || fail "no table.md"
for step in build heap_staging amo_staging heap_cuda amo_cuda ceiling put_devdev put_signal; do
    grep -q "^| $step | .* | pass" "$t" || fail "step $step did not pass"
done
grep -q '^| heap_dmabuf | .* | dry run: would run' "$t" || fail "heap_dmabuf not printed"
for row in put_devdev_64K put_devdev_4M put_signal_host_8B; do
    grep -Eq "^\| $row \| [0-9.]+ \| " "$t" || fail "row $row has no value"
done
echo "$name: PASS ($(grep -c '^| ' "$t") table lines)"
