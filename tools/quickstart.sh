#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Quick start on a fresh Debian 12 machine (run as root, or with sudo available):
#   bash tools/quickstart.sh        install dependencies, build, run the examples and the RMA
#                                   benchmark with 2 PEs under mpirun (the main job)
#   bash .ci/run                    install dependencies, build, and run the whole test suite
set -eu
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
if command -v apt-get >/dev/null; then
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        build-essential autoconf automake libtool pkg-config libfabric-dev libfabric-bin \
        libpmix-dev openmpi-bin libopenmpi-dev libhwloc-dev hwloc >/dev/null
fi
[ -x configure ] || ./autogen.sh >/dev/null
[ -f Makefile ] || ./configure --prefix="$(pwd)/_inst" >/dev/null
make -j"$(nproc)" >/dev/null
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
for example in hello ring_put signal_pc page_fill; do
    echo "+ mpirun -n 2 ./examples/$example"
    mpirun $root --oversubscribe --bind-to none -n 2 ./examples/$example
done
echo "+ mpirun -n 2 ./bench/rma -e 4M   (SHMEM_INFO=1 prints the fabric chosen)"
exec mpirun $root --oversubscribe --bind-to none -n 2 -x SHMEM_INFO=1 ./bench/rma -e 4M
