#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# After 'make install': the installed fabshmem-oshcc, fabshmem-oshrun, pkg-config file and
# headers build and run a real program (one put around a ring), as a user outside the source
# tree would; fabshmem-info runs and prints its map; the installed benchmarks run on 2 PEs.
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
