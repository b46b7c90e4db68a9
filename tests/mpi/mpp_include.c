/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpp_include: a program written for the SGI/Cray header path (<mpp/shmem.h>, <mpp/shmemx.h>),
 * as bale's libgetput and the Cray tests are, builds against fabshmem unchanged and works: the
 * spec's version macros come through, a put around the ring and a sum reduction are checked by
 * data, and an extension (shmemx_wtime, HAVE_SHMEMX_WTIME) is reachable through mpp/shmemx.h.
 * Only the mpp/ headers are included here (not tests/test.h, which includes shmem.h itself).
 */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>
#include <stdio.h>

#if !defined(SHMEM_MAJOR_VERSION) || !defined(SHMEM_MINOR_VERSION) || !defined(HAVE_SHMEMX_WTIME)
#error "mpp/shmem.h or mpp/shmemx.h does not bring in fabshmem's shmem.h and shmemx.h"
#endif

#define N 64

static long ring[N];
static long sum_src, sum_dst;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int prev = (me + npes - 1) % npes;
    long src[N];
    int fails = 0;
    for (int i = 0; i < N; i++) {
        src[i] = 1000L * me + i;
    }
    double t0 = shmemx_wtime();
    shmem_long_put(ring, src, N, (me + 1) % npes);
    shmem_barrier_all();
    for (int i = 0; i < N; i++) {
        if (ring[i] != 1000L * prev + i) {
            if (fails++ < 5) {
                printf("  mpp_include: FAIL (PE %d: ring[%d] = %ld, want %ld)\n", me, i, ring[i],
                       1000L * prev + i);
            }
        }
    }
    sum_src = me + 1;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &sum_dst, &sum_src, 1);
    if (sum_dst != (long)npes * (npes + 1) / 2) {
        printf("  mpp_include: FAIL (PE %d: sum %ld, want %ld)\n", me, sum_dst,
               (long)npes * (npes + 1) / 2);
        fails++;
    }
    if (!(shmemx_wtime() >= t0)) {
        printf("  mpp_include: FAIL (PE %d: shmemx_wtime went backwards)\n", me);
        fails++;
    }
    shmem_finalize();
    if (fails) {
        printf("mpp_include: FAIL (PE %d: %d checks failed)\n", me, fails);
        return 1;
    }
    if (me == 0) {
        printf("mpp_include: PASS (OpenSHMEM %d.%d through <mpp/shmem.h>)\n", SHMEM_MAJOR_VERSION,
               SHMEM_MINOR_VERSION);
    }
    return 0;
}
