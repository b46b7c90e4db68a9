#!/usr/bin/env bash
# After 'make install': the installed oshcc, oshrun, pkg-config file and headers build and run a
# real program (one put around a ring), as a user outside the source tree would; fabshmem-info
# runs and prints its map.
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
"$prefix/bin/oshcc" -o "$work/ring" "$work/ring.c"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --exists fabshmem
cc -o "$work/ring_pc" "$work/ring.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs fabshmem)
"$work/ring"
"$prefix/bin/oshrun" -n 2 "$work/ring_pc"
test -f "$prefix/lib/libfabshmem.a"
"$prefix/bin/fabshmem-info" --local-size 2 | grep -q '^map for 2 local rank'
echo "install_check: PASS"
