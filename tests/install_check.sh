#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# After 'make install': the installed fabshmem-oshcc, fabshmem-oshrun, pkg-config file and
# headers build and run a real program (one put around a ring), as a user outside the source
# tree would; fabshmem-info runs and prints its map; the installed benchmarks run on 2 PEs.
# Then mpp/shmem.h, the C++ wrapper under each of its names, and the plain names in bin/.
set -eu
prefix=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/ring.c" <<'SRC'
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
int main(void)
{
    static long seen = -1;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_long_p(&seen, me, (me + 1) % n);
    shmem_barrier_all();
    int ok = seen == (me + n - 1) % n && shmemx_wtime() > 0;
    printf("install_check: PE %d %s\n", me, ok ? "ok" : "WRONG");
    shmem_finalize();
    return ok ? 0 : 1;
}
SRC
"$prefix/bin/fabshmem-oshcc" -o "$work/ring" "$work/ring.c"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --exists fabshmem
cc -o "$work/ring_pc" "$work/ring.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs fabshmem)
"$work/ring"
# fabshmem.pc carries no rpath (it would bake this prefix into every program built with it):
# a program built with pkg-config finds a libfabshmem outside the system paths as any library's
# users do, through LD_LIBRARY_PATH (Open MPI's -x passes it to every PE).
"$prefix/bin/fabshmem-oshrun" -x LD_LIBRARY_PATH="$prefix/lib" -n 2 "$work/ring_pc"
test -f "$prefix/lib/libfabshmem.a"
# The profiling interface: pshmem.h is installed and its names link and run.
cat > "$work/pring.c" <<'SRC'
#include <pshmem.h>
#include <stdio.h>
int main(void)
{
    static long seen = -1;
    pshmem_init();
    int me = pshmem_my_pe(), n = pshmem_n_pes();
    pshmem_long_p(&seen, me, (me + 1) % n);
    pshmem_barrier_all();
    shmem_pcontrol(1);
    int ok = seen == (me + n - 1) % n;
    printf("install_check: pshmem PE %d %s\n", me, ok ? "ok" : "WRONG");
    pshmem_finalize();
    return ok ? 0 : 1;
}
SRC
"$prefix/bin/fabshmem-oshcc" -o "$work/pring" "$work/pring.c"
"$prefix/bin/fabshmem-oshrun" -n 2 "$work/pring"
"$prefix/bin/fabshmem-info" --local-size 2 | grep -q '^map for 2 local rank'
# The installed benchmarks: one size each on 2 PEs, every row's data right (#wrong 0).
for b in rma amo coll; do
    "$prefix/bin/fabshmem-oshrun" -n 2 "$prefix/bin/fabshmem-bench-$b" -b 8 -e 8 -n 5 -w 1 --csv \
        >"$work/bench_$b.csv"
    grep -q '^[a-z]' "$work/bench_$b.csv"
    awk -F, '/^[a-z_0-9]+,/ && $1 != "test" && $NF != 0 { bad = 1 } END { exit bad }' \
        "$work/bench_$b.csv"
done
# The plain names, for scripts that call oshcc/oshrun, live in libexec/fabshmem/bin.
PATH="$prefix/libexec/fabshmem/bin:$PATH" oshcc -o "$work/ring_plain" "$work/ring.c"
PATH="$prefix/libexec/fabshmem/bin:$PATH" oshrun -n 2 "$work/ring_plain" | grep -q 'PE 1 ok'
# The SGI/Cray header path: <mpp/shmem.h> and <mpp/shmemx.h> build the same program.
sed 's|#include <shmem.h>|#include <mpp/shmem.h>|; s|#include <shmemx.h>|#include <mpp/shmemx.h>|' \
    "$work/ring.c" > "$work/ring_mpp.c"
grep -q '<mpp/shmemx.h>' "$work/ring_mpp.c"
"$prefix/bin/fabshmem-oshcc" -o "$work/ring_mpp" "$work/ring_mpp.c"
"$prefix/bin/fabshmem-oshrun" -n 2 "$work/ring_mpp" | grep -q 'PE 1 ok'
echo "install_check: PASS"

# oshcc as the C compiler of a build (CC=oshcc in the environment, make CC=oshcc, ./configure
# CC=oshcc): it must not call itself forever, and SHMEM_CC / a CC with options are honoured.
osh=$prefix/bin/fabshmem-oshcc
CC=$osh timeout 60 "$osh" -o "$work/ring_envcc" "$work/ring.c"
"$work/ring_envcc" | grep -q 'PE 0 ok'
test "$(SHMEM_CC=cc CC=false "$osh" --showme | cut -d' ' -f1)" = cc
CC="cc -std=gnu11" timeout 60 "$osh" -o "$work/ring_ccopt" "$work/ring.c"
mkdir "$work/mk"
cp "$work/ring.c" "$work/mk/"
printf 'ring: ring.c\n\t$(CC) -o $@ ring.c\n' > "$work/mk/Makefile"
timeout 60 make -s -C "$work/mk" CC="$osh" >/dev/null
"$work/mk/ring" | grep -q 'PE 0 ok'
echo "install_check/oshcc_make: PASS"
if command -v autoconf >/dev/null; then
    mkdir "$work/ac"
    cp "$work/ring.c" "$work/ac/"
    cat > "$work/ac/configure.ac" <<'AC'
AC_INIT([ring], [1])
AC_PROG_CC
AC_CHECK_FUNC([shmem_init], [], [AC_MSG_ERROR([oshcc cannot link shmem_init])])
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
AC
    printf 'ring: ring.c\n\t@CC@ -o ring ring.c\n' > "$work/ac/Makefile.in"
    (cd "$work/ac" && autoconf && timeout 120 ./configure -q CC="$osh" && timeout 60 make -s) >/dev/null
    "$work/ac/ring" | grep -q 'PE 0 ok'
    echo "install_check/oshcc_configure: PASS"
fi

# C++: fabshmem-oshc++ and its plain names (oshc++, oshCC, oshcxx in libexec/fabshmem/bin) each
# build a C++ program (shmem.h's C++ overloads) that runs on 2 PEs; SHMEM_CXX is honoured and
# CXX=fabshmem-oshc++ does not loop.
cat > "$work/ring.cc" <<'SRC'
#include <shmem.h>
#include <cstdio>
int main()
{
    static long seen = -1;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_p(&seen, static_cast<long>(me), (me + 1) % n); // the C++ overload of shmem_long_p
    shmem_barrier_all();
    bool ok = seen == (me + n - 1) % n;
    std::printf("install_check: C++ PE %d %s\n", me, ok ? "ok" : "WRONG");
    shmem_finalize();
    return ok ? 0 : 1;
}
SRC
oshcxx=$prefix/bin/fabshmem-oshc++
"$oshcxx" -o "$work/ringxx" "$work/ring.cc"
"$prefix/bin/fabshmem-oshrun" -n 2 "$work/ringxx" | grep -q 'C++ PE 1 ok'
for name in oshc++ oshCC oshcxx; do
    rm -f "$work/ringxx_plain"
    PATH="$prefix/libexec/fabshmem/bin:$PATH" "$name" -o "$work/ringxx_plain" "$work/ring.cc"
    PATH="$prefix/libexec/fabshmem/bin:$PATH" oshrun -n 2 "$work/ringxx_plain" |
        grep -q 'C++ PE 1 ok'
done
test "$(SHMEM_CXX=g++ CXX=false "$oshcxx" --showme | cut -d' ' -f1)" = g++
test "$(OSHCXX_CXX=clang++ SHMEM_CXX=g++ "$oshcxx" --showme | cut -d' ' -f1)" = clang++
CXX=$oshcxx timeout 60 "$oshcxx" -o "$work/ringxx_envcxx" "$work/ring.cc"
"$work/ringxx_envcxx" | grep -q 'C++ PE 0 ok'
echo "install_check/oshc++: PASS"

# The plain names in bin/ (configure's default; FSH_PLAIN_NAMES=no checks an install made with
# --disable-plain-names, which has none there): with PATH=<prefix>/bin first, `make CC=oshcc`
# and `make CXX=oshc++` build with fabshmem, and the programs load libfabshmem and no other
# OpenSHMEM library (Open MPI's /usr/bin/oshcc is not picked).
if [ "${FSH_PLAIN_NAMES:-yes}" = no ]; then
    for name in oshcc oshrun oshc++ oshCC oshcxx; do
        test ! -e "$prefix/bin/$name"
    done
    echo "install_check/plain_names: PASS (none in bin/, as configured)"
else
    mkdir "$work/plain"
    cp "$work/ring.c" "$work/ring.cc" "$work/plain/"
    printf 'all: ring ringxx\nring: ring.c\n\t$(CC) -o $@ ring.c\nringxx: ring.cc\n\t$(CXX) -o $@ ring.cc\n' \
        > "$work/plain/Makefile"
    for name in oshcc oshrun oshc++ oshCC oshcxx; do
        test "$(PATH="$prefix/bin:$PATH" command -v "$name")" = "$prefix/bin/$name"
    done
    PATH="$prefix/bin:$PATH" timeout 120 make -s -C "$work/plain" CC=oshcc CXX=oshc++ >/dev/null
    for prog in ring ringxx; do
        ldd "$work/plain/$prog" | grep -q "$prefix/lib/libfabshmem.so"
        if ldd "$work/plain/$prog" | grep -E 'lib(oshmem|sma)\.so'; then
            echo "install_check: $prog links another OpenSHMEM library"
            exit 1
        fi
        PATH="$prefix/bin:$PATH" oshrun -n 2 "$work/plain/$prog" | grep -q 'PE 1 ok'
    done
    PATH="$prefix/bin:$PATH" oshCC --showme | grep -q -- '-lfabshmem'
    echo "install_check/plain_names: PASS"
fi
