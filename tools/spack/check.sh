#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check.sh: build and run fabshmem through its Spack recipe (tools/spack/spack_repo/fabshmem),
# both ways docs/packaging.md's "Spack" section gives: `spack dev-build` of a git checkout
# (fabshmem@main) and `spack install` of the `make dist` tarball from a local mirror
# (fabshmem@<version>); then examples/hello.c, built with each installed fabshmem-oshcc, on 2 PEs
# under mpirun.
#
#   sh tools/spack/check.sh SPACK_DIR [STATE_DIR]
#
# SPACK_DIR: a Spack checkout (bin/spack). STATE_DIR (default: a new /tmp/fabshmem-spack.XXXXXX)
# holds everything Spack writes: its configuration, caches, stages, mirror and install tree;
# nothing is written to SPACK_DIR or to this tree. What is built is this tree's committed HEAD.
# For a Debian 12 machine with the packages .ci/run installs: libfabric, PMIx, hwloc, CUDA
# (CUDA_HOME, default /usr/local/cuda; +cuda is skipped without it) and the build tools are
# declared as externals that Spack must not build. Not run by CI (CI has no Spack). Spack 0.x
# without a clingo module runs its original concretizer (FSH_SPACK_CONCRETIZER=clingo to
# change). Last line: "spack check: PASS" or "spack check: FAIL (why)"; exit 0 or 1.
set -eu

fail() {
    echo "spack check: FAIL ($*)"
    exit 1
}
[ $# -ge 1 ] || fail "usage: sh tools/spack/check.sh SPACK_DIR [STATE_DIR]"
spack_dir=$(cd "$1" && pwd) || fail "no directory $1"
[ -x "$spack_dir/bin/spack" ] || fail "$spack_dir/bin/spack is not there: SPACK_DIR is a Spack checkout"
top=$(cd "$(dirname "$0")/../.." && pwd)
state=${2:-$(mktemp -d /tmp/fabshmem-spack.XXXXXX)}
mkdir -p "$state/config" "$state/cache"
state=$(cd "$state" && pwd)
echo "spack check: state in $state"

# Spack reads the user scope from SPACK_USER_CONFIG_PATH; its caches (and a bootstrap store)
# go under SPACK_USER_CACHE_PATH.
SPACK_USER_CONFIG_PATH=$state/config
SPACK_USER_CACHE_PATH=$state/cache
export SPACK_USER_CONFIG_PATH SPACK_USER_CACHE_PATH
spack() {
    echo "\$ spack $*" >&2
    "$spack_dir/bin/spack" "$@"
}

concretizer=${FSH_SPACK_CONCRETIZER:-}
if [ -z "$concretizer" ]; then
    concretizer=clingo
    case "$("$spack_dir/bin/spack" --version)" in
        0.*) "$spack_dir/bin/spack" python -c 'import clingo' >/dev/null 2>&1 || concretizer=original ;;
    esac
fi
cat >"$state/config/config.yaml" <<EOF
config:
  install_tree:
    root: $state/opt
  build_stage: [$state/stage]
  source_cache: $state/cache/source
  misc_cache: $state/cache/misc
  build_jobs: 2
EOF
if [ "$concretizer" = original ]; then
    echo "  concretizer: original" >>"$state/config/config.yaml"
fi

# Externals: the system's libraries and tools, not buildable, so Spack builds fabshmem only.
pc_version() { pkg-config --modversion "$1" | sed 's/[^0-9.].*//'; }
tool_version() { "$@" 2>&1 | head -n 1 | grep -o '[0-9][0-9.]*[0-9]' | head -n 1; }
external() { # name version prefix
    printf '  %s:\n    buildable: false\n    externals:\n    - spec: %s@%s\n      prefix: %s\n' "$1" "$1" "$2" "$3"
}
for m in libfabric pmix hwloc; do
    pkg-config --exists "$m" || fail "no pkg-config module $m: install libfabric-dev libpmix-dev libhwloc-dev"
done
cuda_home=${CUDA_HOME:-/usr/local/cuda}
cuda_version=
if [ -f "$cuda_home/include/cuda.h" ]; then
    v=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda_home/include/cuda.h")
    cuda_version=$((v / 1000)).$((v % 1000 / 10)).0
fi
{
    echo "packages:"
    external libfabric "$(pc_version libfabric)" "$(pkg-config --variable=prefix libfabric)"
    external pmix "$(pc_version pmix)" "$(pkg-config --variable=prefix pmix)"
    external hwloc "$(pc_version hwloc)" "$(pkg-config --variable=prefix hwloc)"
    [ -z "$cuda_version" ] || external cuda "$cuda_version" "$(cd "$cuda_home" && pwd -P)"
    external pkgconf "$(tool_version pkgconf --version)" /usr
    external autoconf "$(tool_version autoconf --version)" /usr
    external automake "$(tool_version automake --version)" /usr
    external libtool "$(tool_version libtoolize --version)" /usr
    external m4 "$(tool_version m4 --version)" /usr
    external gmake "$(tool_version make --version)" /usr
    external perl "$(tool_version perl -e 'print "$^V\n"')" /usr
} >"$state/config/packages.yaml"
spack compiler find --scope user >/dev/null
cat "$state/config/packages.yaml"

spack repo add --scope user "$top/tools/spack/spack_repo/fabshmem"
spack spec -l fabshmem || fail "spack spec fabshmem"
if [ -n "$cuda_version" ]; then
    spack spec -l fabshmem+cuda || fail "spack spec fabshmem+cuda"
fi

# 1. A git checkout, built where it is by `spack dev-build` as fabshmem@main.
src=$state/src
rm -rf "$src"
git clone -q --branch "$(git -C "$top" rev-parse --abbrev-ref HEAD)" "$top" "$src"
(cd "$src" && spack dev-build fabshmem@main) || fail "spack dev-build fabshmem@main"

# 2. The tarball `make dist` makes of that checkout, from a local mirror, as the release.
version=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'/\1/p" "$src/configure")
(cd "$src" && make -s dist >/dev/null) || fail "make dist"
mkdir -p "$state/mirror/fabshmem"
cp "$src/fabshmem-$version.tar.gz" "$state/mirror/fabshmem/"
spack mirror add --scope user fabshmem-dist "file://$state/mirror"
spack install --no-checksum "fabshmem@$version" || fail "spack install fabshmem@$version"
if [ -n "$cuda_version" ]; then
    spack install --no-checksum "fabshmem@$version+cuda" || fail "spack install fabshmem@$version+cuda"
fi

# 3. hello on 2 PEs with each installed fabshmem.
mpirun=$(command -v mpirun) || fail "no mpirun on PATH: install openmpi-bin"
specs="fabshmem@main fabshmem@$version~cuda"
[ -z "$cuda_version" ] || specs="$specs fabshmem@$version+cuda"
for s in $specs; do
    prefix=$("$spack_dir/bin/spack" location -i "$s") || fail "$s is not installed"
    echo "== $s: $prefix"
    oshcc="$prefix/bin/fabshmem-oshcc"
    # filter_compiler_wrappers: the installed wrapper calls the real compiler, not Spack's.
    cc=$("$oshcc" --showme | cut -d ' ' -f 1)
    case "$cc" in # the wrapper of Spack 0.x, of Spack >= 1.0
        */lib/spack/env/* | */libexec/spack/*) fail "$oshcc calls Spack's compiler wrapper $cc" ;;
    esac
    # The launcher: mpirun as PATH has it when fabshmem-oshrun runs, not a path of the build.
    grep -q '^launcher="${OSHRUN_LAUNCHER:-mpirun}"$' "$prefix/bin/fabshmem-oshrun" ||
        fail "$prefix/bin/fabshmem-oshrun: $(grep '^launcher=' "$prefix/bin/fabshmem-oshrun")"
    # +cuda reached configure: only a build without cuda.h says so.
    heap=$("$prefix/bin/fabshmem-info" --doctor | grep 'device heap') || true
    echo "$heap"
    case "$s" in *+cuda) want=with ;; *) want=without ;; esac
    case "$heap" in *"built without CUDA headers"*) got=without ;; *) got=with ;; esac
    [ "$want" = "$got" ] || fail "$s was built $got CUDA: $heap"
    "$oshcc" -o "$state/hello" "$top/examples/hello.c" || fail "$oshcc examples/hello.c"
    ldd "$state/hello" | grep -q "$prefix/lib/libfabshmem" || fail "hello does not load $prefix's libfabshmem"
    out=$("$mpirun" --allow-run-as-root --oversubscribe -n 2 "$state/hello") || fail "hello of $s exited non-zero: $out"
    echo "$out"
    echo "$out" | grep -q 'PE 0 counted 2 of 2 PEs: OK' || fail "hello of $s did not count 2 PEs"
done
echo "spack check: PASS"
