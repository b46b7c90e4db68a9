#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# nvcc_header.sh: include/shmemx_device.h, the device API, and include/shmemx_ep_device.h, the
# expert-parallel exchange's GPU path, compile with nvcc for sm_90 and sm_100 with warnings as
# errors (host and device), in user kernels that call every device function (and the EP
# path's stream launchers), with no relocatable device code and no libcudart (-c, --cudart
# none); the GPU tests and benchmark (tests/gpu/device_api.cu, tests/gpu/ep_device.cu,
# bench/device_pingpong.cu, run by device_check.sh) compile too; and the headers compile as
# C11 and C++11 host code with $CC and $CXX (the form the tests' CPU producers use). Skipped (77) where no nvcc is found ($NVCC, PATH,
# /usr/local/cuda/bin).
# Run by `make check` with top_srcdir, top_builddir, CC and CXX set; exits 0 pass, 1 fail, 77 skip.

top_srcdir=${top_srcdir:-${0%/*}/../..}
top_builddir=${top_builddir:-.}
name=nvcc_header
nvcc=${NVCC:-$(command -v nvcc 2>/dev/null)}
[ -n "$nvcc" ] || nvcc=/usr/local/cuda/bin/nvcc
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvcc_header.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
inc="-I$top_builddir/include -I$top_srcdir/include"
fail=0

cat >"$tmp/host.c" <<'EOC'
#include <shmemx_device.h>
#include <shmemx_ep_device.h>
int use_ep(shmemx_device_t h, shmemx_ep_device_t d, const void *tok, const int32_t *idx,
           const float *w, void *out, struct shmemx_ep *ep)
{
    return shmemx_dev_ep_dispatch_send(h, d, tok, NULL, idx, w, 1, 0, 1) |
           shmemx_dev_ep_dispatch_recv(h, d, 0, 1) |
           shmemx_dev_ep_combine_send(h, d, out, 0, 1) |
           shmemx_dev_ep_combine_recv(h, d, out, 0, 1) | (int)shmemx_dev_ep_total(d) |
           shmemx_ep_device_handle(ep, &d) | shmemx_ep_device_check(ep);
}
int use(shmemx_device_t h, shmemx_dev_team_t t, char *d, const char *s, uint64_t *sig)
{
    uint64_t v;
    return shmemx_dev_put(h, d, s, 8, 0) | shmemx_dev_put_nbi(h, d, s, 8, 0) |
           shmemx_dev_put_signal(h, d, s, 8, sig, 1, SHMEMX_DEV_SIGNAL_SET, 0) |
           shmemx_dev_put_signal_nbi(h, d, s, 8, sig, 1, SHMEMX_DEV_SIGNAL_ADD, 0) |
           shmemx_dev_signal_wait_until(h, sig, SHMEMX_DEV_CMP_GE, 1, &v) | shmemx_dev_fence(h) |
           shmemx_dev_quiet(h) | shmemx_dev_quiet_all(h) | shmemx_dev_barrier_all(h) |
           shmemx_dev_team_barrier(h, t) | shmemx_device_team(0, &t) |
           shmemx_device_handle(&h) | shmemx_device_handle_host(&h);
}
EOC
if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic $inc -c "$tmp/host.c" -o "$tmp/c.o" 2>"$tmp/err"; then
    echo "  as C11 host code:"; sed 's/^/    /' "$tmp/err"; fail=1
fi
cp "$tmp/host.c" "$tmp/host.cc"
if ! ${CXX:-c++} -std=c++11 -Wall -Wextra -Werror -pedantic $inc -c "$tmp/host.cc" -o "$tmp/cc.o" 2>"$tmp/err"; then
    echo "  as C++11 host code:"; sed 's/^/    /' "$tmp/err"; fail=1
fi

if [ ! -x "$nvcc" ]; then
    [ "$fail" = 0 ] || { echo "$name: FAIL (the host forms)"; exit 1; }
    echo "$name: SKIP (no nvcc: set NVCC or put CUDA's bin in PATH; the host forms compiled)"
    exit 77
fi

cat >"$tmp/user.cu" <<'EOC'
#include <shmemx_device.h>
__global__ void every_call(shmemx_device_t h, shmemx_dev_team_t t, char *dst, const char *src,
                           size_t n, uint64_t *sig, int pe, int *rc)
{
    uint64_t v = 0;
    int r = shmemx_dev_put(h, dst, src, n, pe);
    r |= shmemx_dev_put_nbi(h, dst, src, n, pe);
    r |= shmemx_dev_put_nbi_warp(h, dst, src, n, pe);
    r |= shmemx_dev_put_nbi_block(h, dst, src, n, pe);
    r |= shmemx_dev_put_signal(h, dst, src, n, sig, 1, SHMEMX_DEV_SIGNAL_SET, pe);
    r |= shmemx_dev_put_signal_nbi(h, dst, src, n, sig, 2, SHMEMX_DEV_SIGNAL_ADD, pe);
    r |= shmemx_dev_put_signal_nbi_block(h, dst, src, n, sig, 3, SHMEMX_DEV_SIGNAL_ADD, pe);
    r |= shmemx_dev_signal_wait_until(h, sig, SHMEMX_DEV_CMP_GE, 1, &v);
    r |= shmemx_dev_fence(h);
    r |= shmemx_dev_quiet(h);
    r |= shmemx_dev_quiet_block(h);
    r |= shmemx_dev_quiet_all(h);
    r |= shmemx_dev_barrier_all(h);
    r |= shmemx_dev_barrier_all_block(h);
    r |= shmemx_dev_team_barrier(h, t);
    r |= shmemx_dev_team_barrier_block(h, t);
    rc[threadIdx.x] = r + (int)v;
}
EOC
cat >"$tmp/ep.cu" <<'EOC'
#include <shmemx_ep_device.h>
__global__ void every_ep_call(shmemx_device_t h, shmemx_ep_device_t d, const void *tok,
                              const void *sc, const int32_t *idx, const float *w, size_t n,
                              const void *eout, void *out, int *rc)
{
    int r = shmemx_dev_ep_dispatch_send_block(h, d, tok, sc, idx, w, n);
    r |= shmemx_dev_ep_dispatch_recv_block(h, d);
    r |= shmemx_dev_ep_combine_send_block(h, d, eout);
    r |= shmemx_dev_ep_combine_recv_block(h, d, out);
    r |= shmemx_dev_ep_dispatch_send(h, d, tok, sc, idx, w, n, 0, 1);
    r |= shmemx_dev_ep_dispatch_recv(h, d, 0, 1);
    r |= shmemx_dev_ep_combine_send(h, d, eout, 0, 1);
    r |= shmemx_dev_ep_combine_recv(h, d, out, 0, 1);
    rc[threadIdx.x] = r + (int)shmemx_dev_ep_total(d);
}
int launch_all(shmemx_device_t h, shmemx_ep_device_t d, const void *tok, const void *sc,
               const int32_t *idx, const float *w, size_t n, const void *eout, void *out,
               cudaStream_t s)
{
    return (int)shmemx_ep_dispatch_send_on_stream(h, d, tok, sc, idx, w, n, s) |
           (int)shmemx_ep_dispatch_recv_on_stream(h, d, s) |
           (int)shmemx_ep_combine_send_on_stream(h, d, eout, s) |
           (int)shmemx_ep_combine_recv_on_stream(h, d, out, s);
}
EOC
flags="-Xcompiler -Wall,-Wextra,-Werror --Werror all-warnings --cudart none"
for arch in sm_90 sm_100; do
    if ! "$nvcc" $inc -arch=$arch $flags -c "$tmp/user.cu" -o "$tmp/user_$arch.o" >"$tmp/err" 2>&1; then
        echo "  nvcc -arch=$arch, a kernel calling every device function:"; sed 's/^/    /' "$tmp/err"; fail=1
    fi
    if ! "$nvcc" $inc -arch=$arch $flags -c "$tmp/ep.cu" -o "$tmp/ep_$arch.o" >"$tmp/err" 2>&1; then
        echo "  nvcc -arch=$arch, a kernel calling every EP device function and launcher:"; sed 's/^/    /' "$tmp/err"; fail=1
    fi
done
for src in tests/gpu/device_api.cu tests/gpu/ep_device.cu bench/device_pingpong.cu; do
    if ! "$nvcc" $inc -arch=sm_90 $flags -c "$top_srcdir/$src" -o "$tmp/prog.o" >"$tmp/err" 2>&1; then
        echo "  nvcc -arch=sm_90 -c $src:"; sed 's/^/    /' "$tmp/err"; fail=1
    fi
done
if [ "$fail" = 0 ]; then
    echo "$name: PASS (C11, C++11; nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') for sm_90 and sm_100; device_api.cu, ep_device.cu, device_pingpong.cu)"
    exit 0
fi
echo "$name: FAIL"
exit 1
