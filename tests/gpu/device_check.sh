#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# device_check.sh: the one command that checks and measures fabshmem's GPU side on a machine
# with an NVIDIA GPU (the lent machine: one H100/H200, CUDA 13, Open MPI, no network), in under
# 8 minutes. From the repository root:
#
#     bash tests/gpu/device_check.sh              # on the GPU machine
#     bash tests/gpu/device_check.sh --dry-run    # anywhere: what needs no GPU, the mock for the rest
#
# It builds fabshmem (autogen if needed, configure --with-cuda, make), runs every GPU test on
# the real driver (FABSHMEM_CUDA_LIB=libcuda.so.1), then the benchmarks, and prints two
# markdown tables, also saved as $OUT/table.md: the steps (result, seconds, log) and the
# benchmark rows (value, ceiling or target, ratio, pass/miss). Logs: one per step, and the
# benchmarks' CSV, under $OUT/logs ($OUT defaults to ./device_check_out). Exit 0 when no build, test or benchmark step failed (a
# benchmark that misses its target is not a failure; a wrong byte is), 1 otherwise, 2 on bad
# arguments.
#
# Options:
#   --dry-run       no GPU: build, nvcc compiles, the GPU tests and benchmarks on the mock driver
#                   (tests/gpu/libmockcuda.so, small matrices), the rest printed ("would run")
#   --reuse-build   keep an existing configured tree (make only); the dry run in make check uses it
#   --only REGEX    run only the steps whose name matches (the build always runs)
#   --strict        a step whose program is absent fails the run too
#   --pack          end with $OUT holding only table.md, run.log and logs.tar.gz (the lent
#                   machine returns at most 8 files from $OUT)
# Environment:
#   OUT                     where logs and table.md go (default ./device_check_out)
#   DEVICE_CHECK_OFI        prefix of a CUDA-enabled libfabric (built and carried as
#                           tests/gpu/README.md says): fabshmem is built against it and the
#                           cuda and dmabuf paths are tested; without it those steps say so
#   DEVICE_CHECK_OFI_SRC    instead: a libfabric source tree, or a .tar.gz of one, with its
#                           configure generated (>= 1.20): the run builds it first, --with-cuda,
#                           into a scratch prefix, and uses that (tests/gpu/README.md)
#   DEVICE_CHECK_NVSHMEM    NVSHMEM prefix (include/, lib/); default: the Python package
#                           nvidia-nvshmem-cu13 (site-packages/nvidia/nvshmem) when python3 has it
#   DEVICE_CHECK_BUDGET     seconds for the whole run (default 450; a step never starts with
#                           less than 15 left, and its timeout is cut to what is left)
#   DEVICE_CHECK_JOBS       make -j (default: the number of cores)
#   DEVICE_CHECK_MPS        auto (default): a CUDA MPS daemon of the run's own (nvidia-cuda-mps-
#                           control -d) serves the steps whose needs name mps (the kernel ping-
#                           pongs: without MPS two processes' kernels on one GPU run time-sliced,
#                           never at once, and a ping-pong between them waits for context
#                           switches, seen timing out on an H200); 1: every step under MPS;
#                           0: none. The steps table says which step ran under MPS
#   CUDA_HOME               default /usr/local/cuda
#   DEVICE_CHECK_GDRCOPY_LIB  the GDRCopy library of the gdrcopy step (default: libgdrapi.so.2
#                           where ldconfig knows it)
#   DEVICE_CHECK_CUDA_LIB   the driver of a real run (default libcuda.so.1); naming the mock
#                           runs the real run's matrices and sizes without a GPU (a rehearsal)
#
# The steps are the STEPS table below, one row each; the benchmark rows are the ROWS table.
# Extending: add a row to STEPS (name | kind | needs | timeout | dry | program | command) and, for
# a benchmark, the rows it fills to ROWS; a step's command calls `emit ROW VALUE [CEILING]`.
#   kind     build | test | bench | peer (a peer step's failure is reported, not counted)
#   needs    what the machine must have, comma-separated: gpu, nvcc, cudaofi (a CUDA-enabled
#            libfabric: DEVICE_CHECK_OFI), nvshmem (headers and libraries), mps (runs under CUDA
#            MPS where it starts, else without, as the table says); - for nothing
#   dry      in --dry-run: run (as is), mock (the command runs with DC_MOCK=1: the mock
#            driver, small sizes), compile (DC_COMPILE_ONLY=1: nvcc -c only), print
#   program  a file (or glob) the step needs in the tree: without it the step is "absent"
#            (a feature not merged yet), not failed; - for none

set -u
if [ "${DC_STEP:-0}" = 1 ]; then
    # a step's subshell sources this file for its functions; the run's settings come in DC_*
    TOP=$DC_TOP OUT=$DC_OUT LOGS=$DC_OUT/logs WORK=$DC_WORK DRY=$DC_DRY REUSE=$DC_REUSE
    cd "$TOP" || exit 2
else
    cd "$(dirname "$0")/../.." || exit 2
    TOP=$(pwd)
    DRY=0 REUSE=0 ONLY="" STRICT=0 PACK=0
    while [ $# -gt 0 ]; do
        case $1 in
        --dry-run) DRY=1 ;;
        --reuse-build) REUSE=1 ;;
        --only) ONLY=${2:-}; shift ;;
        --strict) STRICT=1 ;;
        --pack) PACK=1 ;;
        -h | --help) sed -n '3,51p' "$0"; exit 0 ;;
        *) echo "device_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
        esac
        shift
    done
    OUT=${OUT:-./device_check_out}
    mkdir -p "$OUT/logs" || exit 2
    OUT=$(cd "$OUT" && pwd)
    LOGS=$OUT/logs
    rm -f "$LOGS"/* "$OUT/table.md" "$OUT/logs.tar.gz"
    : >"$LOGS/rows.tsv"
    : >"$LOGS/steps.tsv"
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/device_check.XXXXXX") || exit 2
    trap 'rm -rf "$WORK"' EXIT
    export DC_TOP=$TOP DC_OUT=$OUT DC_WORK=$WORK DC_DRY=$DRY DC_REUSE=$REUSE
fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
JOBS=${DEVICE_CHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}
BUDGET=${DEVICE_CHECK_BUDGET:-450}
T0=$(date +%s)
LAUNCH="mpirun --allow-run-as-root --oversubscribe --bind-to none"
MOCK=$TOP/tests/gpu/libmockcuda.so
MOCK_GDR=$TOP/tests/gpu/libmockgdr.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

OFI=${DEVICE_CHECK_OFI:-}
if [ -n "$OFI" ]; then
    case $OFI in /*) ;; *) OFI=$TOP/$OFI ;; esac
fi

# ------------------------------------------------------------------------------ the steps
# name          | kind  | needs        | timeout | dry     | program                    | command
STEPS='
libfabric       | build | -            | 150     | run     | -                          | build_ofi
build           | build | -            | 200     | run     | -                          | do_build
nvcc_header     | build | nvcc         | 60      | run     | include/shmemx_device.h    | nvcc_header
ceiling         | bench | gpu          | 45      | mock    | -                          | bench_ceiling
put_devdev      | bench | gpu          | 60      | mock    | -                          | bench_put_devdev
put_signal      | bench | gpu          | 45      | mock    | -                          | bench_put_signal
gdrcopy         | bench | gpu,mps      | 60      | mock    | runtime/gdr.c              | bench_gdrcopy
heap_staging    | test  | gpu          | 90      | mock    | -                          | gpu_test gpu_device_heap staging
amo_staging     | test  | gpu          | 75      | mock    | -                          | gpu_test gpu_device_amo staging
nvshmem         | peer  | gpu,nvcc,nvshmem,mps | 75 | compile | bench/gpu/nvshmem_pingpong.cu | nvshmem_peer
heap_cuda       | test  | gpu,cudaofi  | 60      | mock    | -                          | gpu_test gpu_device_heap cuda
amo_cuda        | test  | gpu,cudaofi  | 50      | mock    | -                          | gpu_test gpu_device_amo cuda
heap_dmabuf     | test  | gpu,cudaofi  | 40      | print   | -                          | gpu_test gpu_device_heap dmabuf
gpu_other       | test  | gpu          | 90      | mock    | tests/mpi/gpu_*.c          | gpu_other_tests
device_kernels  | test  | gpu,nvcc     | 90      | compile | tests/gpu/*.cu             | cu_tests
ep_device       | test  | gpu,nvcc,mps | 90      | compile | tests/gpu/ep_device.cu     | ep_device_gpu
kernel_pingpong | bench | gpu,nvcc,mps | 60      | compile | bench/device_pingpong.cu   | bench_kernel_pp
proxy_rate      | bench | gpu          | 90      | mock    | bench/devproxy.c           | bench_proxy_rate
idle_quiet      | bench | gpu,nvcc     | 45      | compile | bench/device_pingpong.cu   | bench_idle_quiet
stream_signal   | bench | gpu          | 45      | mock    | bench/stream.c             | bench_stream
'

# ------------------------------------------------------------------------------ the rows
# row                 | unit    | rule      | limit | step
#   rule: ratio_min / ratio_max (value over the ceiling the step emits, against limit),
#         max / min (value against limit), peer (no verdict: a reference)
ROWS='
put_devdev_64K        | MB/s    | ratio_min | 0.8   | put_devdev
put_devdev_256K       | MB/s    | ratio_min | 0.8   | put_devdev
put_devdev_1M         | MB/s    | ratio_min | 0.8   | put_devdev
put_devdev_4M         | MB/s    | ratio_min | 0.8   | put_devdev
put_signal_host_8B    | us      | max       | 10    | put_signal
put_signal_hostheap_8B | us     | peer      | -     | put_signal
put_signal_gdr_8B     | us      | max       | 10    | gdrcopy
put_signal_nogdr_8B   | us      | peer      | -     | gdrcopy
kernel_pp_mapping_8B  | us      | max       | 2     | kernel_pingpong
kernel_pp_proxy_8B    | us      | max       | 5     | kernel_pingpong
proxy_desc_rate       | Mdesc/s | min       | 5     | proxy_rate
proxy_desc_rate_4threads | Mdesc/s | min    | 5     | proxy_rate
idle_device_quiet     | us      | max       | 1     | idle_quiet
stream_put_signal     | us      | ratio_max | 1.3   | stream_signal
ep_dispatch_128       | us      | peer      | -     | ep_device
ep_combine_128        | us      | peer      | -     | ep_device
nvshmem_pp_8B         | us      | peer      | -     | nvshmem
'

# ------------------------------------------------------------------------------ helpers
log() { printf '%s\n' "$*"; }
now() { date +%s; }
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

# emit ROW VALUE [CEILING]: a benchmark row's value (and the ceiling it is set against)
emit() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$LOGS/rows.tsv"; }

# csv_field FILE TEST TARGET SIZE: the median of that row of a bench CSV (empty if none)
csv_field() {
    awk -F, -v t="$2" -v g="$3" -v s="$4" '$1 == t && $2 == g && $4 == s { v = $5 } END { print v }' "$1"
}
# csv_wrong FILE: rows with #wrong > 0
csv_wrong() { awk -F, 'NF == 8 && $1 != "test" && $8 != 0 { n++ } END { print n + 0 }' "$1"; }

# the driver a GPU step uses: the real one, or the mock in a dry run
driver_env() {
    if [ "${DC_MOCK:-0}" = 1 ]; then
        export FABSHMEM_CUDA_LIB=$MOCK
    else
        export FABSHMEM_CUDA_LIB=${DEVICE_CHECK_CUDA_LIB:-libcuda.so.1}
    fi
    if [ -n "$OFI" ]; then
        # libfabric's CUDA code loads libcudart: CUDA's library directory too
        export LD_LIBRARY_PATH=$OFI/lib:$OFI/lib64:$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}
    fi
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} # mpirun -x names it
}

have_gpu() { [ "$DRY" = 0 ]; }
gpu_arch() {
    local cc
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
    echo "sm_${cc:-90}"
}

# ------------------------------------------------------------------------------ step commands
# a CUDA-enabled libfabric from DEVICE_CHECK_OFI_SRC, installed into $OFI (only shm, tcp, rxm:
# what the tests use; CUDA loaded at run time as fabshmem loads it)
build_ofi() {
    unset MAKEFLAGS MFLAGS MAKELEVEL
    local src=$DEVICE_CHECK_OFI_SRC dir
    case $src in /*) ;; *) src=$TOP/$src ;; esac
    if [ -f "$src" ]; then
        mkdir -p "$WORK/ofi_src" && tar xzf "$src" -C "$WORK/ofi_src" || return 1
        dir=$(dirname "$(find "$WORK/ofi_src" -maxdepth 2 -name configure | head -n1)")
    else
        dir=$src
    fi
    [ -x "$dir/configure" ] || { log "no configure in $src (run its ./autogen.sh first)"; return 1; }
    log "libfabric source: $dir"
    mkdir -p "$WORK/ofi_build" && cd "$WORK/ofi_build" || return 1
    "$dir/configure" --prefix="$OFI" --with-cuda="$CUDA_HOME" --enable-cuda-dlopen --enable-only \
        --enable-shm --enable-tcp --enable-rxm --disable-static >configure.log 2>&1 ||
        { tail -n 20 configure.log; return 1; }
    make -j"$JOBS" install >make.log 2>&1 || { grep -i -m 10 error make.log; return 1; }
    "$OFI/bin/fi_info" --version
}

do_build() {
    unset MAKEFLAGS MFLAGS MAKELEVEL
    for t in pkg-config mpirun "$CUDA_HOME/bin/nvcc"; do
        command -v "$t" >/dev/null 2>&1 || log "note: $t not found"
    done
    for m in libfabric pmix hwloc; do
        log "pkg-config $m: $(pkg-config --modversion $m 2>&1)"
    done
    [ -n "$OFI" ] && log "CUDA-enabled libfabric: $OFI ($(ls "$OFI"/lib*/libfabric.so* 2>/dev/null | head -n1))"
    if [ "$REUSE" = 1 ] && [ -f Makefile ] && [ -f config.status ]; then
        log "reusing the configured tree (--reuse-build)"
    else
        if [ ! -f configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
            if ! command -v autoreconf >/dev/null 2>&1; then
                log "no autoreconf here and no up-to-date configure: run ./autogen.sh where"
                log "autotools exist and carry configure Makefile.in aclocal.m4 config.h.in config"
                return 1
            fi
            ./autogen.sh || return 1
        else
            # carried outputs: make them newer than their sources so make never reruns automake
            touch aclocal.m4 && touch configure config.h.in Makefile.in
        fi
        local ofi_opt=""
        [ -n "$OFI" ] && ofi_opt="--with-ofi=$OFI"
        # shellcheck disable=SC2086 # ofi_opt is one word or none
        ./configure --with-cuda="$CUDA_HOME" $ofi_opt || return 1
    fi
    make -j"$JOBS" device-check-build
}

# nvcc compiles the installed device header in a user kernel (when the device API exists)
nvcc_header() {
    local f=$WORK/nvcc_header.cu
    printf '#include <shmemx_device.h>\n__global__ void k(int *p) { *p = 1; }\n' >"$f"
    "$CUDA_HOME/bin/nvcc" -std=c++17 -arch="$(gpu_arch)" -Werror all-warnings -Iinclude \
        -c "$f" -o "$WORK/nvcc_header.o"
}

# fi_ceiling's copy ceilings (GPU -> GPU, host -> GPU), the sizes of the put rows
bench_ceiling() {
    driver_env
    local sizes="-b 64k -e 4M -f 4 -n 50 -W 16"
    [ "${DC_MOCK:-0}" = 1 ] && sizes="-b 64k -e 4M -f 4 -n 3 -w 1 -W 2"
    # shellcheck disable=SC2086
    $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
        -x LD_LIBRARY_PATH ./bench/fi_ceiling $sizes -t cuda_d2d_bw,cuda_h2d_bw --csv \
        >"$LOGS/ceiling.csv" || return 1
    cat "$LOGS/ceiling.csv"
    [ "$(csv_wrong "$LOGS/ceiling.csv")" = 0 ] || { log "rows with wrong data"; return 1; }
    [ -n "$(csv_field "$LOGS/ceiling.csv" cuda_d2d_bw local 65536)" ] || { log "no cuda_d2d_bw row"; return 1; }
}

# put bandwidth from PE 0's device heap into PE 1's, against cuda_d2d_bw of the same size
bench_put_devdev() {
    driver_env
    local sizes="-b 64k -e 4M -f 4 -n 50 -W 16"
    [ "${DC_MOCK:-0}" = 1 ] && sizes="-b 64k -e 4M -f 4 -n 3 -w 1 -W 2"
    # shellcheck disable=SC2086
    $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
        -x LD_LIBRARY_PATH -x SHMEM_SYMMETRIC_SIZE=128M ./bench/rma -T devdev -t put_bw $sizes --csv \
        >"$LOGS/put_devdev.csv" || return 1
    cat "$LOGS/put_devdev.csv"
    [ "$(csv_wrong "$LOGS/put_devdev.csv")" = 0 ] || { log "rows with wrong data"; return 1; }
    local n s v c missing=0
    for n in 64K:65536 256K:262144 1M:1048576 4M:4194304; do
        s=${n#*:}
        v=$(csv_field "$LOGS/put_devdev.csv" put_bw devdev "$s")
        c=""
        [ -f "$LOGS/ceiling.csv" ] && c=$(csv_field "$LOGS/ceiling.csv" cuda_d2d_bw local "$s")
        if [ -z "$v" ]; then
            missing=1
            continue
        fi
        emit "put_devdev_${n%%:*}" "$v" "$c"
    done
    [ "$missing" = 0 ] || { log "a put_bw/devdev size is missing"; return 1; }
}

# put-with-signal ping-pong, 8 B, device heap to device heap, host API
bench_put_signal() {
    driver_env
    local iters="-n 1000 -w 100"
    [ "${DC_MOCK:-0}" = 1 ] && iters="-n 20 -w 2"
    # shellcheck disable=SC2086
    $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
        -x LD_LIBRARY_PATH ./bench/rma -T devdev,heap -t put_signal_lat -b 8 -e 8 $iters --csv \
        >"$LOGS/put_signal.csv" || return 1
    cat "$LOGS/put_signal.csv"
    [ "$(csv_wrong "$LOGS/put_signal.csv")" = 0 ] || { log "rows with wrong data"; return 1; }
    local v h
    v=$(csv_field "$LOGS/put_signal.csv" put_signal_lat devdev 8)
    h=$(csv_field "$LOGS/put_signal.csv" put_signal_lat heap 8)
    [ -n "$v" ] && [ -n "$h" ] || { log "no put_signal_lat/devdev or heap row"; return 1; }
    emit put_signal_host_8B "$v"
    emit put_signal_hostheap_8B "$h"
    # the paths this configuration took (intra-node, put-with-signal, device heap): PE 0's info
    # shellcheck disable=SC2086
    $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
        -x LD_LIBRARY_PATH -x SHMEM_INFO=1 ./bench/rma -T heap -t put_signal_lat -b 8 -e 8 \
        -n 10 -w 1 | grep -E '^  (job|fabric|intra-node|put-with-signal|device heap):' 
}

# GDRCopy (runtime/gdr.c): is it on this machine (libgdrapi, /dev/gdrdrv) and does the runtime
# use it? If so, the host-API put-with-signal ping-pong into device memory with it (the wait
# polls the signal through the mapping) and without (a driver copy per poll). Not found or not
# usable: the step says why (exit 3: "absent (...)"), which fails nothing.
bench_gdrcopy() {
    driver_env
    local iters="-n 1000 -w 100" why="" info
    if [ "${DC_MOCK:-0}" = 1 ]; then
        iters="-n 20 -w 2"
        export FABSHMEM_GDRCOPY_LIB=$MOCK_GDR
    else
        export FABSHMEM_GDRCOPY_LIB=${DEVICE_CHECK_GDRCOPY_LIB:-}
        if [ -z "$FABSHMEM_GDRCOPY_LIB" ] && ! ldconfig -p 2>/dev/null | grep -q 'libgdrapi\.so'; then
            why="libgdrapi.so not installed"
        fi
        [ -e /dev/gdrdrv ] || why="${why:+$why; }/dev/gdrdrv missing (gdrdrv module not loaded)"
    fi
    # what the runtime says about it (PE 0's device heap line)
    # shellcheck disable=SC2086
    info=$($LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
        -x FABSHMEM_GDRCOPY_LIB -x LD_LIBRARY_PATH -x SHMEM_INFO=1 ./bench/rma -T devdev \
        -t put_signal_lat -b 8 -e 8 -n 2 -w 1 2>&1 | grep -o 'GDRCopy: [^;]*' | head -n1)
    log "the runtime: ${info:-no GDRCopy line (no device heap?)}"
    if [ -n "$why" ]; then
        log "GDRCopy not found here: $why"
        exit 3
    fi
    case $info in "GDRCopy: in use"*) ;; *) log "GDRCopy found but not used: $info"; exit 3 ;; esac
    local mode v
    for mode in on off; do
        # shellcheck disable=SC2086
        $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
            -x FABSHMEM_GDRCOPY_LIB -x FABSHMEM_GDRCOPY=$mode -x LD_LIBRARY_PATH ./bench/rma \
            -T devdev -t put_signal_lat -b 8 -e 8 $iters --csv >"$LOGS/gdrcopy_$mode.csv" || return 1
        cat "$LOGS/gdrcopy_$mode.csv"
        [ "$(csv_wrong "$LOGS/gdrcopy_$mode.csv")" = 0 ] || { log "rows with wrong data"; return 1; }
        v=$(csv_field "$LOGS/gdrcopy_$mode.csv" put_signal_lat devdev 8)
        [ -n "$v" ] || { log "no put_signal_lat/devdev row (FABSHMEM_GDRCOPY=$mode)"; return 1; }
        [ $mode = on ] && emit put_signal_gdr_8B "$v" || emit put_signal_nogdr_8B "$v"
    done
}

# gpu_test NAME PATH: tests/mpi/NAME over its configurations on one registration path
gpu_test() {
    local name=$1 path=$2 configs nps=${3:-"2 3"}
    driver_env
    case $path in
    staging)
        configs="shm tcp shm-efamr shm-nodes2 shm-chaos"
        # with a CUDA libfabric auto would take cuda: staging is forced
        [ -n "$OFI" ] && export FABSHMEM_DEVICE_PATH=staging
        ;;
    # not tcp: libfabric's tcp provider lists no FI_HMEM (2.6; rxm drops it without the core's),
    # so a forced cuda path is refused there at init, as it must be (seen on an H200)
    cuda) configs="shm shm-efamr shm-nodes2 shm-chaos"; export FABSHMEM_DEVICE_PATH=cuda ;;
    dmabuf) configs="shm shm-nodes2"; export FABSHMEM_DEVICE_PATH=dmabuf ;;
    esac
    if [ "${DC_MOCK:-0}" = 1 ]; then
        # the mock: staging on shm and tcp, the direct path over its host-visible memory
        case $path in
        staging) configs="shm tcp" ;;
        *) configs="shm-gpudirect"; unset FABSHMEM_DEVICE_PATH ;;
        esac
        nps=2
    fi
    FSH_TEST_CONFIGS=$configs FSH_TEST_NPS=$nps FSH_TEST_TIMEOUT=60 \
        sh tests/run_test.sh "tests/mpi/$name"
}

# every other tests/mpi/gpu_*.c (the mapping, the stream calls, ...), staging or auto path
gpu_other_tests() {
    local f name rc=0 n=0
    for f in tests/mpi/gpu_*.c; do
        name=$(basename "$f" .c)
        case $name in gpu_device_heap | gpu_device_amo | gpu_no_gpu) continue ;; esac
        n=$((n + 1))
        if [ ! -x "tests/mpi/$name" ]; then
            log "$name: FAIL (not built: is it in Makefile.am's MPI_TESTS?)"
            rc=1
            continue
        fi
        (
            driver_env
            local configs="shm tcp shm-nodes2" nps="2 3"
            [ "${DC_MOCK:-0}" = 1 ] && configs=shm nps=2
            FSH_TEST_CONFIGS=$configs FSH_TEST_NPS=$nps FSH_TEST_TIMEOUT=60 \
                sh tests/run_test.sh "tests/mpi/$name"
        ) || rc=1
    done
    if [ "$n" = 0 ]; then
        log "no tests/mpi/gpu_*.c beyond the device-heap tests"
        return 3
    fi
    return $rc
}

# every tests/gpu/*.cu: nvcc against the tree's headers and library, then 2 PEs on the GPU
cu_tests() {
    local f name rc=0 arch
    arch=$(gpu_arch)
    for f in tests/gpu/*.cu; do
        name=$(basename "$f" .cu)
        [ "$name" = ep_device ] && continue # its own step, ep_device
        log "== $name: nvcc -arch=$arch"
        if [ "${DC_COMPILE_ONLY:-0}" = 1 ]; then
            "$CUDA_HOME/bin/nvcc" -std=c++17 -arch="$arch" -Werror all-warnings -Iinclude -Itests \
                -c "$f" -o "$WORK/$name.o" || rc=1
            continue
        fi
        "$CUDA_HOME/bin/nvcc" -std=c++17 -arch="$arch" -Werror all-warnings -Iinclude -Itests \
            "$f" -o "$WORK/$name" -L.libs -lfabshmem -Xlinker -rpath="$TOP/.libs" || { rc=1; continue; }
        (
            driver_env
            # shellcheck disable=SC2086
            $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
                -x LD_LIBRARY_PATH "$WORK/$name"
        ) || rc=1
    done
    return $rc
}

# the expert-parallel exchange's GPU path (tests/gpu/ep_device.cu): dispatch and combine from
# the program's kernels, the stream launchers, a CUDA graph and through the proxy, each judged
# against the host reference on the same inputs; then an input error recorded; then dispatch
# and combine timed through the launchers (128 tokens, hidden 7168, top-8 of 16, 2 PEs)
ep_device_gpu() {
    local arch out=$LOGS/ep_device.txt d c
    arch=$(gpu_arch)
    if [ "${DC_COMPILE_ONLY:-0}" = 1 ]; then
        "$CUDA_HOME/bin/nvcc" -std=c++17 -arch="$arch" -Werror all-warnings -Iinclude \
            -c tests/gpu/ep_device.cu -o "$WORK/ep_device.o"
        return
    fi
    "$CUDA_HOME/bin/nvcc" -std=c++17 -arch="$arch" -Werror all-warnings -Iinclude \
        tests/gpu/ep_device.cu -o "$WORK/ep_device" -L.libs -lfabshmem \
        -Xlinker -rpath="$TOP/.libs" || return 1
    (
        driver_env
        # shellcheck disable=SC2086
        $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=256M \
            -x SHMEM_SYMMETRIC_SIZE=256M -x FABSHMEM_CUDA_LIB -x LD_LIBRARY_PATH \
            "$WORK/ep_device" -M 128 -H 7168 -k 8 -i 20
    ) >"$out" 2>&1
    local rc=$?
    cat "$out"
    [ $rc = 0 ] && grep -q '^ep_device: PASS' "$out" || return 1
    d=$(awk '/^ep_device: dispatch_us/ { print $3 }' "$out")
    c=$(awk '/^ep_device: dispatch_us/ { print $5 }' "$out")
    [ -n "$d" ] && emit ep_dispatch_128 "$d"
    [ -n "$c" ] && emit ep_combine_128 "$c"
    [ -n "$d" ] || { log "no ep_device timing line"; return 1; }
}

# nvcc of bench/device_pingpong.cu into $WORK/device_pingpong, once per run (kernel_pingpong
# and idle_quiet both run it); in the dry run a compile only
build_pingpong() {
    local arch
    arch=$(gpu_arch)
    if [ "${DC_COMPILE_ONLY:-0}" = 1 ]; then
        "$CUDA_HOME/bin/nvcc" -std=c++17 -arch="$arch" -Werror all-warnings -Iinclude \
            -c bench/device_pingpong.cu -o "$WORK/device_pingpong.o"
        return
    fi
    [ -x "$WORK/device_pingpong" ] && return 0
    "$CUDA_HOME/bin/nvcc" -std=c++17 -arch="$arch" -Werror all-warnings -Iinclude \
        bench/device_pingpong.cu -o "$WORK/device_pingpong" -L.libs -lfabshmem \
        -Xlinker -rpath="$TOP/.libs"
}

# the device API's 8 B put-with-signal ping-pong from kernels: through the mapping (same GPU,
# peers' heaps mapped) and through the proxy, beside the host API's, on the GPU
bench_kernel_pp() {
    local out=$LOGS/kernel_pingpong.txt
    build_pingpong || return 1
    [ "${DC_COMPILE_ONLY:-0}" = 1 ] && return 0
    (
        driver_env
        # shellcheck disable=SC2086
        $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
            -x LD_LIBRARY_PATH "$WORK/device_pingpong" -n 1000 -r 5
    ) >"$out" 2>&1
    local rc=$?
    cat "$out"
    [ $rc = 0 ] || return 1
    # rows: "  kernel, mapping   USEC  WRONG  target" (the label says "(not mapped: proxy)"
    # when the peer's heap is not mapped), "  kernel, proxy ...", "  host API ..."
    awk '/^  kernel, mapping/ || /^  kernel, proxy/ || /^  host API/ { if ($(NF-3) != 0) bad = 1 }
         END { exit bad }' "$out" || { log "wrong data in a ping-pong"; return 1; }
    local m p
    m=$(awk '/^  kernel, mapping  / { print $3 }' "$out")
    p=$(awk '/^  kernel, proxy/ { print $3 }' "$out")
    [ -n "$m" ] && emit kernel_pp_mapping_8B "$m"
    [ -n "$p" ] && emit kernel_pp_proxy_8B "$p"
    [ -n "$p" ] || { log "no kernel, proxy row"; return 1; }
}

# shmemx_dev_quiet with nothing in flight, timed in the kernel (bench/device_pingpong -q, one
# PE: a proxied put and its quiet first, then 1000 idle quiets per kernel, median of 5)
bench_idle_quiet() {
    local out=$LOGS/idle_quiet.txt
    build_pingpong || return 1
    [ "${DC_COMPILE_ONLY:-0}" = 1 ] && return 0
    (
        driver_env
        # shellcheck disable=SC2086
        $LAUNCH -n 1 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
            -x LD_LIBRARY_PATH "$WORK/device_pingpong" -q -n 1000 -r 5
    ) >"$out" 2>&1
    local rc=$?
    cat "$out"
    [ $rc = 0 ] || return 1
    # "  idle quiet   USEC  RC  <= 1 us", "  idle quiet, block  USEC  RC"
    local v
    v=$(awk '$1 == "idle" && $2 == "quiet" && $4 == 0 { print $3 }' "$out")
    [ -n "$v" ] || { log "no idle quiet row with rc 0"; return 1; }
    emit idle_device_quiet "$v"
}

# descriptors per second of one proxy thread (bench/devproxy: CPU threads produce into the
# rings the GPU would use, the proxy drains them through put-with-signal)
bench_proxy_rate() {
    driver_env
    local n="-n 200000 -i 2000 -r 3" out=$LOGS/proxy_rate.txt
    [ "${DC_MOCK:-0}" = 1 ] && n="-n 20000 -i 200 -r 1"
    # shellcheck disable=SC2086
    $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
        -x LD_LIBRARY_PATH ./bench/devproxy $n >"$out" 2>&1 || { cat "$out"; return 1; }
    cat "$out"
    # "  desc_rate  PROXY M  HOST M  RATIO  WRONG  ..."
    local v wrong
    v=$(awk '$1 == "desc_rate" { print $2 }' "$out")
    wrong=$(awk '$1 == "desc_rate" || $1 == "put_signal_lat" { w += $7 } END { print w + 0 }' "$out")
    [ "$wrong" = 0 ] || { log "wrong data in devproxy"; return 1; }
    [ -n "$v" ] || { log "no desc_rate row"; return 1; }
    emit proxy_desc_rate "$v"
    # four proxy threads (FABSHMEM_DEVICE_PROXIES) drained by eight producers: the rate per
    # thread, from "# per proxy thread: desc_rate X M/s, ..."
    out=$LOGS/proxy_rate4.txt
    # shellcheck disable=SC2086
    $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
        -x FABSHMEM_DEVICE_PROXIES=4 -x LD_LIBRARY_PATH ./bench/devproxy $n -p 8 >"$out" 2>&1 ||
        { cat "$out"; return 1; }
    cat "$out"
    wrong=$(awk '$1 == "desc_rate" || $1 == "put_signal_lat" { w += $7 } END { print w + 0 }' "$out")
    [ "$wrong" = 0 ] || { log "wrong data in devproxy with 4 proxy threads"; return 1; }
    v=$(awk '/^# per proxy thread:/ { print $6 }' "$out")
    [ -n "$v" ] || { log "no per-thread line with 4 proxy threads"; return 1; }
    emit proxy_desc_rate_4threads "$v"
}

# a stream-ordered put-with-signal (and its stream synchronize) against a launch plus the same
# copy on a stream, 8 B (bench/stream)
bench_stream() {
    driver_env
    local iters="-n 500 -w 50"
    [ "${DC_MOCK:-0}" = 1 ] && iters="-n 20 -w 2"
    # shellcheck disable=SC2086
    $LAUNCH -n 2 -x FI_PROVIDER=shm -x FABSHMEM_DEVICE_HEAP_SIZE=64M -x FABSHMEM_CUDA_LIB \
        -x LD_LIBRARY_PATH ./bench/stream -b 8 -e 8 $iters --csv >"$LOGS/stream.csv" || return 1
    cat "$LOGS/stream.csv"
    [ "$(csv_wrong "$LOGS/stream.csv")" = 0 ] || { log "rows with wrong data"; return 1; }
    local v c
    v=$(csv_field "$LOGS/stream.csv" put_signal_stream device 8)
    c=$(csv_field "$LOGS/stream.csv" launch_copy device 8)
    [ -n "$v" ] && [ -n "$c" ] || { log "no put_signal_stream/launch_copy row"; return 1; }
    emit stream_put_signal "$v" "$c"
}

# NVSHMEM's prefix: DEVICE_CHECK_NVSHMEM, else the Python package's directory
nvshmem_home() {
    if [ -n "${DEVICE_CHECK_NVSHMEM:-}" ]; then
        echo "$DEVICE_CHECK_NVSHMEM"
        return
    fi
    python3 - 2>/dev/null <<'EOF'
import importlib.util
spec = importlib.util.find_spec("nvidia.nvshmem")
if spec and spec.submodule_search_locations:
    print(list(spec.submodule_search_locations)[0])
EOF
}

# the peer: NVSHMEM's own 8-byte put-with-signal ping-pong, device to device, from a kernel
nvshmem_peer() {
    local home inc lib arch host dev
    home=$(nvshmem_home)
    inc=$home/include
    [ -d "$home/src/include" ] && inc=$home/src/include # a source tree (compile check only)
    lib=$home/lib
    log "NVSHMEM: ${home:-none}"
    arch=$(gpu_arch)
    if [ "${DC_COMPILE_ONLY:-0}" = 1 ]; then
        "$CUDA_HOME/bin/nvcc" -std=c++17 -rdc=true -arch="$arch" -Werror all-warnings -I"$inc" \
            -c bench/gpu/nvshmem_pingpong.cu -o "$WORK/nvshmem_pingpong.o"
        return
    fi
    host=$(ls "$lib"/libnvshmem_host.so* 2>/dev/null | head -n1)
    dev=$lib/libnvshmem_device.a
    [ -n "$host" ] && [ -f "$dev" ] || { log "no libnvshmem_host.so or libnvshmem_device.a in $lib"; return 1; }
    # nvcc takes no .so.N as an input file: the host library goes to the linker as is
    "$CUDA_HOME/bin/nvcc" -std=c++17 -rdc=true -arch="$arch" -I"$inc" bench/gpu/nvshmem_pingpong.cu \
        -o "$WORK/nvshmem_pingpong" "$dev" -Xlinker "$host" -Xlinker -rpath="$lib" || return 1
    local dir
    dir=$(mktemp -d "$WORK/nvshmem_pp.XXXXXX")
    # the unique-id bootstrap over loopback; no network transport (one GPU, one node)
    LD_LIBRARY_PATH=$lib:${LD_LIBRARY_PATH:-} $LAUNCH -n 2 -x LD_LIBRARY_PATH \
        -x NVSHMEM_PP_DIR="$dir" -x NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo \
        -x NVSHMEM_REMOTE_TRANSPORT=none -x NVSHMEM_SYMMETRIC_SIZE=64M \
        "$WORK/nvshmem_pingpong" -s 8 -n 200 -r 5 -w 20 >"$LOGS/nvshmem.csv"
    local rc=$?
    rm -rf "$dir"
    cat "$LOGS/nvshmem.csv"
    [ $rc = 0 ] || return 1
    local v
    v=$(csv_field "$LOGS/nvshmem.csv" nvshmem_put_signal_lat devdev 8)
    [ -n "$v" ] || { log "no nvshmem_put_signal_lat row"; return 1; }
    emit nvshmem_pp_8B "$v"
}

# ------------------------------------------------------------------------------ the runner
# needs_missing NEEDS: what of NEEDS this machine (or this run) lacks, empty when nothing
needs_missing() {
    local n miss=""
    for n in ${1//,/ }; do
        case $n in
        -) ;;
        gpu) [ "$DRY" = 1 ] && miss="$miss gpu(dry run)" ;;
        nvcc) [ -x "$CUDA_HOME/bin/nvcc" ] || miss="$miss nvcc" ;;
        cudaofi) [ -n "$OFI" ] || miss="$miss cudaofi(DEVICE_CHECK_OFI unset)" ;;
        mps) ;; # never missing: the step runs without MPS where it did not start
        nvshmem)
            local h
            h=$(nvshmem_home)
            if [ -z "$h" ]; then
                miss="$miss nvshmem(no nvidia-nvshmem package in python3, DEVICE_CHECK_NVSHMEM unset)"
            elif [ ! -f "$h/include/nvshmem.h" ] && [ ! -f "$h/src/include/nvshmem.h" ]; then
                miss="$miss nvshmem(no include/nvshmem.h under $h)"
            fi
            ;;
        *) miss="$miss $n(unknown)" ;;
        esac
    done
    echo "${miss# }"
}

# record NAME KIND NEEDS RESULT SECONDS: one line of the steps table
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$LOGS/steps.tsv"; }

FAILED=0
BUILD_OK=1
run_step() {
    local name=$1 kind=$2 needs=$3 limit=$4 dry=$5 prog=$6 cmd=$7
    local logf=$LOGS/$name.log
    if [ -n "$ONLY" ] && [ "$kind" != build ] && ! [[ $name =~ $ONLY ]]; then
        return
    fi
    if [ "$prog" != - ] && ! compgen -G "$prog" >/dev/null; then
        record "$name" "$kind" "$needs" "absent (no $prog)" -
        [ "$STRICT" = 1 ] && FAILED=1
        return
    fi
    if [ "$BUILD_OK" = 0 ] && [ "$kind" != build ]; then
        record "$name" "$kind" "$needs" "not run (the build failed)" -
        [ "$kind" != peer ] && FAILED=1
        return
    fi
    local miss env=""
    [ "$cmd" = build_ofi ] && [ -z "${DEVICE_CHECK_OFI_SRC:-}" ] && return
    miss=$(needs_missing "$needs")
    if [ "$DRY" = 1 ]; then
        miss=${miss//gpu(dry run)/}
        miss=$(trim "$miss")
        case $dry in
        mock) env="DC_MOCK=1" ;;
        compile) env="DC_COMPILE_ONLY=1" ;;
        print)
            record "$name" "$kind" "$needs" "dry run: would run \`$cmd\`" -
            log "[dry] $name: would run: $cmd"
            return
            ;;
        esac
        if [ -n "$miss" ] && [ "$dry" = compile ] && [ "$miss" != "${miss/nvshmem/}" ]; then
            record "$name" "$kind" "$needs" "absent ($miss)" -
            return
        fi
        # a cudaofi step runs on the mock's direct path without one
        miss=$(trim "${miss//cudaofi(DEVICE_CHECK_OFI unset)/}")
    fi
    if [ -n "$miss" ]; then
        record "$name" "$kind" "$needs" "not available here: $miss" -
        log "$name: not available here: $miss"
        [ "$STRICT" = 1 ] && FAILED=1
        return
    fi
    local left=$((BUDGET - ($(now) - T0)))
    if [ "$left" -lt 15 ]; then
        record "$name" "$kind" "$needs" "not run (the ${BUDGET}s budget is spent)" -
        [ "$kind" != peer ] && FAILED=1
        return
    fi
    [ "$limit" -gt $((left - 5)) ] && limit=$((left - 5))
    local under_mps=0
    if [ "$MPS" = on ] && { [ "${DEVICE_CHECK_MPS:-auto}" = 1 ] || [[ ,$needs, == *,mps,* ]]; }; then
        env="$env $MPS_ENV" under_mps=1
    fi
    log "== $name ($kind, needs $needs, up to ${limit}s${env:+, $env}): $cmd"
    local start rc
    start=$(now)
    # the step runs in a subshell of this script (its functions), bounded by timeout
    # shellcheck disable=SC2086 # env: assignments, split into words
    env $env DC_STEP=1 timeout -k 5 "$limit" bash -c "source '$TOP/tests/gpu/device_check.sh' --as-library; $cmd" \
        >"$logf" 2>&1 </dev/null
    rc=$?
    local secs=$(($(now) - start)) result
    case $rc in
    0) result=pass ;;
    3) result="absent ($(tail -n 1 "$logf"))" rc=0 ;;
    124 | 137) result="FAIL (timed out after ${limit}s)" ;;
    *) result="FAIL (exit $rc)" ;;
    esac
    if [ $rc != 0 ]; then
        [ "$kind" = peer ] && result="${result/FAIL/error}" || FAILED=1
        [ "$kind" = build ] && [ "$name" = build ] && BUILD_OK=0
        if [ "$cmd" = build_ofi ]; then
            # the rest runs on the system's libfabric; the cudaofi steps say why not
            OFI="" DEVICE_CHECK_OFI=""
            export DEVICE_CHECK_OFI
        fi
        tail -n 15 "$logf" | sed 's/^/    /'
    fi
    [ "$under_mps" = 1 ] && result="$result (under MPS)"
    if [ "$DRY" = 1 ] && [ "$rc" = 0 ] && [ "$result" = pass ]; then
        [ "$dry" = mock ] && result="pass (mock driver)"
        [ "$dry" = compile ] && result="pass (compiled only)"
    fi
    record "$name" "$kind" "$needs" "$result" "$secs"
    log "   $name: $result (${secs}s, log $logf)"
}

# the steps table, then the benchmark rows, as markdown
table() {
    echo "## device_check: $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo
    if [ "$DRY" = 1 ]; then
        echo "Dry run: no GPU; the GPU steps ran on the mock driver, their numbers are not judged."
    else
        echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1); CUDA MPS: $MPS$([ "$MPS" = on ] && [ "${DEVICE_CHECK_MPS:-auto}" != 1 ] && echo ' (for the steps that need it)')"
    fi
    local lf=${OFI:-"the system one"}
    echo "libfabric: $lf; NVSHMEM: $(nvshmem_home || true)"
    echo
    echo "| step | kind | needs | result | s | log |"
    echo "|---|---|---|---|---|---|"
    while IFS=$'\t' read -r n k d r s; do
        local l=-
        [ -f "$LOGS/$n.log" ] && l=logs/$n.log
        echo "| $n | $k | $d | $r | $s | $l |"
    done <"$LOGS/steps.tsv"
    echo
    echo "| row | value | unit | ceiling / target | ratio | verdict |"
    echo "|---|---|---|---|---|---|"
    local line row unit rule limit step v c ratio verdict target st
    while IFS= read -r line; do
        [ -z "$(trim "$line")" ] && continue
        IFS='|' read -r row unit rule limit step <<<"$line"
        row=$(trim "$row") unit=$(trim "$unit") rule=$(trim "$rule") limit=$(trim "$limit") step=$(trim "$step")
        v=$(awk -F'\t' -v r="$row" '$1 == r { v = $2 } END { print v }' "$LOGS/rows.tsv")
        c=$(awk -F'\t' -v r="$row" '$1 == r { v = $3 } END { print v }' "$LOGS/rows.tsv")
        if [ -z "$v" ]; then
            st=$(awk -F'\t' -v n="$step" '$1 == n { v = $4 } END { print v }' "$LOGS/steps.tsv")
            if [ -n "$st" ]; then
                st="no value (step $step: $st)"
            elif grep -Eq "^$step +\|" <<<"$STEPS"; then
                st="not run (step $step was not selected)"
            else
                st="absent (no step $step in this script yet)"
            fi
            echo "| $row | - | $unit | - | - | $st |"
            continue
        fi
        read -r target ratio verdict < <(awk -v v="$v" -v c="$c" -v rule="$rule" -v lim="$limit" 'BEGIN {
            if (rule == "ratio_min" || rule == "ratio_max") {
                if (c == "" || c + 0 == 0) { print "none", "-", "no-ceiling"; exit }
                r = v / c
                ok = rule == "ratio_min" ? r >= lim : r <= lim
                printf "%.6g(x%s) %.3f %s\n", c, lim, r, ok ? "pass" : "miss"
            } else if (rule == "max" || rule == "min") {
                r = v / lim
                ok = rule == "max" ? v <= lim : v >= lim
                printf "%s%s %.3f %s\n", rule == "max" ? "<=" : ">=", lim, r, ok ? "pass" : "miss"
            } else {
                print "-", "-", "peer"
            }
        }')
        case $rule in
        ratio_min) target="${target%%(*} (ratio >= $limit)" ;;
        ratio_max) target="${target%%(*} (ratio <= $limit)" ;;
        esac
        [ "$verdict" = no-ceiling ] && target="no ceiling measured" verdict="miss"
        [ "$DRY" = 1 ] && verdict="mock (not judged)"
        echo "| $row | $v | $unit | $target | $ratio | $verdict |"
    done <<<"$ROWS"
}

# CUDA MPS: a control daemon of this run's own (pipes and logs in $WORK), started unless
# DEVICE_CHECK_MPS=0; a step runs under it when MPS_ENV is in its environment (run_step)
MPS=off MPS_ENV=""
mps_start() {
    [ "${DEVICE_CHECK_MPS:-auto}" != 0 ] && [ "$DRY" = 0 ] || return 0
    if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
        MPS="not started (no nvidia-cuda-mps-control)"
        return 0
    fi
    local pipe=$WORK/mps_pipe logd=$WORK/mps_log
    mkdir -p "$pipe" "$logd"
    if CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logd \
        nvidia-cuda-mps-control -d >"$LOGS/mps.log" 2>&1; then
        MPS=on MPS_ENV="CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$logd"
    else
        MPS="failed to start (logs/mps.log)"
    fi
}
mps_stop() {
    if [ "$MPS" = on ]; then
        # shellcheck disable=SC2086 # MPS_ENV is two assignments
        echo quit | env $MPS_ENV nvidia-cuda-mps-control >>"$LOGS/mps.log" 2>&1
    fi
    return 0
}

main() {
    log "device_check: $([ "$DRY" = 1 ] && echo 'dry run, ')budget ${BUDGET}s, logs in $LOGS"
    if [ -n "${DEVICE_CHECK_OFI_SRC:-}" ] && [ -z "$OFI" ]; then
        OFI=$WORK/cudaofi
        export DEVICE_CHECK_OFI=$OFI
    fi
    mps_start
    local line name kind needs limit dry prog cmd
    while IFS= read -r line; do
        [ -z "$(trim "$line")" ] && continue
        IFS='|' read -r name kind needs limit dry prog cmd <<<"$line"
        run_step "$(trim "$name")" "$(trim "$kind")" "$(trim "$needs")" "$(trim "$limit")" \
            "$(trim "$dry")" "$(trim "$prog")" "$(trim "$cmd")"
    done <<<"$STEPS"
    mps_stop
    table >"$OUT/table.md"
    echo
    cat "$OUT/table.md"
    echo
    log "device_check: $([ $FAILED = 0 ] && echo 'no step failed' || echo 'a step FAILED') ($(($(now) - T0))s)"
    if [ "$PACK" = 1 ]; then
        tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$LOGS"
    fi
    return $FAILED
}

# sourced by a step's subshell: the functions only
if [ "${DC_STEP:-0}" = 1 ]; then
    return 0 2>/dev/null
fi
if [ "$PACK" = 1 ]; then
    main 2>&1 | tee "$OUT/run.log"
    exit "${PIPESTATUS[0]}"
fi
main
