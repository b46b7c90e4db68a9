#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# deb_install.sh: build the Debian packages from this tree's distribution files, install them on
# this machine, build examples/hello.c with the installed fabshmem-oshcc and run it on 2 PEs
# under mpirun, then remove the packages again, whatever happened (trap). Also runs lintian on
# the .changes (errors fail, warnings are printed). One PASS/FAIL line per step.
# Run by `make check-packages` (minutes: a whole package build), as root: it installs packages.
# Exits 0 pass, 1 fail, 77 skip (with the reason).
set -u
top_srcdir=${top_srcdir:-$(cd "${0%/*}/../.." && pwd)}
top_builddir=${top_builddir:-.}
name=deb_install
pkgs="libfabshmem0 libfabshmem-dev fabshmem-tools"

skip() { echo "$name: SKIP ($1)"; exit 77; }
[ "$(id -u)" = 0 ] || skip "installs packages: run as root"
for t in dpkg-buildpackage apt-get mpirun make; do
    command -v "$t" >/dev/null || skip "no $t: apt-get install devscripts debhelper openmpi-bin"
done
[ -f "$top_builddir/Makefile" ] || skip "no configured build tree at $top_builddir: run configure"
# Packages that were there before are somebody's: never replace or remove them.
for p in $pkgs; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
        skip "$p is already installed here; remove it first (apt-get purge $pkgs)"
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/deb_install.XXXXXX") || exit 1
installed=no
cleanup() {
    if [ $installed = yes ]; then
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $pkgs >"$tmp/purge.log" 2>&1 ||
            { echo "$name/purge: FAIL (apt-get purge $pkgs; see below)"; cat "$tmp/purge.log"; }
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fails=0
# step NAME LOG CMD...: run CMD with its output in LOG; on failure print LOG's tail.
step() {
    local what=$1 log=$2
    shift 2
    local t0=$SECONDS
    if "$@" >"$log" 2>&1; then
        echo "$name/$what: PASS ($((SECONDS - t0)) s)"
        return 0
    fi
    echo "$name/$what: FAIL ($((SECONDS - t0)) s, log tail:)"
    tail -n 25 "$log" | sed 's/^/    /'
    fails=$((fails + 1))
    return 1
}
finish() {
    if [ "$fails" -gt 0 ]; then
        echo "$name: FAIL ($fails steps)"
        exit 1
    fi
    echo "$name: PASS"
    exit 0
}

# The source is what `make dist` ships (debian/ included), so this also proves that the
# distribution tarball builds the packages.
src=$tmp/src
step distdir "$tmp/distdir.log" make -C "$top_builddir" distdir distdir="$src" top_distdir="$src" ||
    finish
build() { (cd "$src" && dpkg-buildpackage -us -uc -b); }
step dpkg-buildpackage "$tmp/build.log" build || finish
ls "$tmp"/*.deb | sed 's|.*/|    |'
changes=$(ls "$tmp"/fabshmem_*.changes)
if command -v lintian >/dev/null; then
    lintian "$changes" >"$tmp/lintian.log" 2>&1
    sed 's/^/    /' "$tmp/lintian.log"
    if grep -q '^E:' "$tmp/lintian.log"; then
        echo "$name/lintian: FAIL ($(grep -c '^E:' "$tmp/lintian.log") errors)"
        fails=$((fails + 1))
    else
        echo "$name/lintian: PASS ($(grep -c '^W:' "$tmp/lintian.log") warnings)"
    fi
else
    echo "$name/lintian: SKIP (no lintian: apt-get install lintian)"
fi

install_debs() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "$tmp"/libfabshmem0_*.deb "$tmp"/libfabshmem-dev_*.deb "$tmp"/fabshmem-tools_*.deb
}
installed=yes
step install "$tmp/install.log" install_debs || finish

# As a user would: the installed wrapper, headers, library and pkg-config file, no build tree.
step fabshmem-oshcc "$tmp/cc.log" fabshmem-oshcc -o "$tmp/hello" "$top_srcdir/examples/hello.c"
step pkg-config "$tmp/pc.log" sh -c "cc -o '$tmp/hello_pc' '$top_srcdir/examples/hello.c' \
    \$(pkg-config --cflags --libs fabshmem)"
run_hello() {
    ldd "$tmp/hello" | grep -q '/usr/lib/.*/libfabshmem.so.0' || {
        echo "hello does not load the installed libfabshmem.so.0:"
        ldd "$tmp/hello"
        return 1
    }
    timeout 120 mpirun --allow-run-as-root --oversubscribe -n 2 "$tmp/hello" >"$tmp/hello.out" 2>&1
    local rc=$?
    cat "$tmp/hello.out"
    [ $rc = 0 ] && grep -q 'hello from PE 1 of 2' "$tmp/hello.out" &&
        grep -q 'PE 0 counted 2 of 2 PEs: OK' "$tmp/hello.out"
}
step hello-2pe "$tmp/run.log" run_hello && sed 's/^/    /' "$tmp/hello.out"
step fabshmem-oshrun "$tmp/oshrun.log" sh -c "timeout 120 fabshmem-oshrun -n 2 '$tmp/hello_pc' |
    grep -q 'PE 0 counted 2 of 2 PEs: OK'"
step plain-names "$tmp/plain.log" sh -c "PATH=/usr/libexec/fabshmem/bin:\$PATH; \
    oshcc --showme | grep -q -- -lfabshmem && oshrun --version && \
    oshc++ --showme | grep -q -- -lfabshmem && oshCC --showme | grep -q -- -lfabshmem && \
    oshcxx --showme | grep -q -- -lfabshmem"
step fabshmem-oshc++ "$tmp/cxx.log" sh -c "printf '#include <shmem.h>\\nint main() { shmem_init(); \
    shmem_finalize(); return 0; }\\n' > '$tmp/init.cc' && fabshmem-oshc++ -o '$tmp/init' '$tmp/init.cc'"
# The alternatives: a plain name in /usr/bin that a package owns (openmpi-bin's) is untouched;
# every other one is the alternatives system's link to fabshmem's.
check_alternatives() {
    for n in oshcc oshrun oshc++ oshCC oshcxx; do
        if owner=$(dpkg-query -S "/usr/bin/$n" 2>/dev/null); then
            echo "/usr/bin/$n: ${owner%%:*}'s, left alone"
            [ "$(readlink "/usr/bin/$n")" != "/etc/alternatives/$n" ] || return 1
        else
            echo "/usr/bin/$n: $(readlink -f "/usr/bin/$n")"
            [ "$(readlink -f "/usr/bin/$n")" = "$(readlink -f "/usr/libexec/fabshmem/bin/$n")" ] ||
                return 1
        fi
    done
}
step alternatives "$tmp/alt.log" check_alternatives && sed 's/^/    /' "$tmp/alt.log"
step fabshmem-info "$tmp/info.log" fabshmem-info --local-size 2
finish
