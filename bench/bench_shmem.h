/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_shmem.h: what the OpenSHMEM benchmarks share beyond the driver: the feature checks that
 * let one source build against OpenSHMEM 1.4 (Open MPI's OSHMEM) and 1.5 (fabshmem), start-up
 * (library name, hosts) and the cross-PE reductions of results. Standard API only, and only
 * what 1.4 has: reductions are puts to PE 0 and a barrier, not 1.5 team reductions.
 */
#ifndef FSH_BENCH_SHMEM_H
#define FSH_BENCH_SHMEM_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<shmemx.h>)
#include <shmemx.h>
#endif
#endif

#include "bench.h"

/* OpenSHMEM 1.5: teams, shmem_alltoallmem, the _nbi fetching atomics. */
#define BENCH_SHMEM_15 (SHMEM_MAJOR_VERSION > 1 || SHMEM_MINOR_VERSION >= 5)
/* put-with-signal (1.5; a 1.4 library has no SHMEM_SIGNAL_SET). */
#ifdef SHMEM_SIGNAL_SET
#define BENCH_HAVE_SIGNAL 1
#else
#define BENCH_HAVE_SIGNAL 0
#endif
/* fabshmem's shmemx_alltoallvmem. */
#ifdef FABSHMEM_SHMEMX_H
#define BENCH_HAVE_ALLTOALLV 1
#else
#define BENCH_HAVE_ALLTOALLV 0
#endif
/* fabshmem's device heap (shmemx_malloc_device): rma's device target. */
#ifdef FABSHMEM_SHMEMX_H
#define BENCH_HAVE_DEVICE 1
#else
#define BENCH_HAVE_DEVICE 0
#endif

#define BENCH_MAX_PES 1024
#define BENCH_HOST_LEN 64

/* Symmetric scratch of the reductions below (statics are symmetric). */
static double bench_dslot[BENCH_MAX_PES];
static long bench_lslot[BENCH_MAX_PES];
static char bench_hostslot[BENCH_MAX_PES][BENCH_HOST_LEN];

/* shmem_init's companion: refuses too many PEs, gathers the host names, prints the header. */
static inline void bench_shmem_start(const struct bench_opts *o, const struct bench_desc *d)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes > BENCH_MAX_PES) {
        if (me == 0) {
            fprintf(stderr, "%s: at most %d PEs\n", d->name, BENCH_MAX_PES);
        }
        shmem_global_exit(2);
    }
    char host[BENCH_HOST_LEN] = "";
    gethostname(host, sizeof(host) - 1);
    shmem_putmem(bench_hostslot[me], host, sizeof(host), 0);
    shmem_barrier_all();
    char name[SHMEM_MAX_NAME_LEN + 32];
    int major, minor;
    shmem_info_get_name(name);
    shmem_info_get_version(&major, &minor);
    snprintf(name + strlen(name), sizeof(name) - strlen(name), " (OpenSHMEM %d.%d)", major, minor);
    char *hosts = NULL;
    if (me == 0) {
        /* distinct names, in PE order */
        hosts = calloc((size_t)npes, BENCH_HOST_LEN + 1);
        for (int pe = 0; hosts && pe < npes; pe++) {
            const char *h = bench_hostslot[pe];
            int seen = 0;
            for (int q = 0; q < pe; q++) {
                seen |= strcmp(bench_hostslot[q], h) == 0;
            }
            if (!seen) {
                strcat(strcat(hosts, hosts[0] ? "," : ""), h);
            }
        }
    }
    const char *prov = getenv("FABSHMEM_PROVIDER");
    if (!prov || !prov[0]) {
        prov = getenv("FI_PROVIDER");
    }
    bench_start(o, d, me, npes, name, prov, hosts);
    free(hosts);
    shmem_barrier_all();
}

/* The largest of every PE's v, valid on PE 0 (collective). */
static inline double bench_max(double v)
{
    int me = shmem_my_pe();
    shmem_barrier_all();
    shmem_double_p(&bench_dslot[me], v, 0);
    shmem_barrier_all();
    double m = v;
    if (me == 0) {
        for (int pe = 0; pe < shmem_n_pes(); pe++) {
            m = bench_dslot[pe] > m ? bench_dslot[pe] : m;
        }
    }
    return m;
}

/* The sum of every PE's v, valid on PE 0 (collective). */
static inline long bench_sum(long v)
{
    int me = shmem_my_pe();
    shmem_barrier_all();
    shmem_long_p(&bench_lslot[me], v, 0);
    shmem_barrier_all();
    long s = 0;
    if (me == 0) {
        for (int pe = 0; pe < shmem_n_pes(); pe++) {
            s += bench_lslot[pe];
        }
    }
    return s;
}

#endif
