/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_info.c: what init tells about the job it brings up, and the checks that only report.
 *
 * SHMEM_INFO's report (PE 0) and each PE's line of the topology map; the phases' timings;
 * fabshmem's own state against the symmetric heap (before any of it is reserved) and against
 * the memory model (after); another OpenSHMEM library loaded in the process. init.c calls
 * these at its phases: nothing here starts, stops or orders a module.
 */
#define _GNU_SOURCE /* dladdr, dl_iterate_phdr */
#include "init_info.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "arrive.h"
#include "bootstrap.h"
#include "devmem.h"
#include "error.h"
#include "fabric.h"
#include "footprint.h"
#include "heap.h"
#include "local.h"
#include "log.h"
#include "progress.h"
#include "rma.h"
#include "rma_post.h"
#include "rma_session.h"
#include "rt.h"
#include "shmem.h"
#include "signal.h"
#include "topology.h"

/* Init's phases on this PE, in milliseconds: wall time (CLOCK_MONOTONIC), so a phase that waits
 * for slower peers (the exchange's fence, the barrier) shows the wait, which is where a crowded
 * node's time goes. The total is measured from the start, not summed, so a phase that went
 * unnamed shows as a gap between the sum and the total. */
#define MAX_PHASES 20
static struct {
    double start, last;
    int n;
    struct {
        const char *name;
        double ms;
    } ph[MAX_PHASES];
} phase_times;

void fsh_init_info_phase(const char *name)
{
    double t = fsh_progress_now() * 1e3;
    if (!name) {
        phase_times.start = t;
        phase_times.n = 0;
    } else if (phase_times.n < MAX_PHASES) {
        phase_times.ph[phase_times.n].name = name;
        phase_times.ph[phase_times.n++].ms = t - phase_times.last;
    }
    phase_times.last = t;
}

void fsh_init_info_phases(char *line, size_t len)
{
    size_t n = 0;
    for (int i = 0; i < phase_times.n && n < len; i++) {
        n += (size_t)snprintf(line + n, len - n, "%s %.1f ms, ", phase_times.ph[i].name,
                              phase_times.ph[i].ms);
    }
    if (n < len) {
        snprintf(line + n, len - n, "total %.1f ms", phase_times.last - phase_times.start);
    }
}

void fsh_init_info_print(const struct fsh_config *cfg, void *heap_base, size_t heap_size)
{
    char fab[512];
    fsh_fabric_describe(fab, sizeof(fab));
    printf("%s (OpenSHMEM %d.%d)\n", SHMEM_VENDOR_STRING, SHMEM_MAJOR_VERSION,
           SHMEM_MINOR_VERSION);
    printf("  job: %d PEs on %d node(s), bootstrap %s, %s\n", fsh_rt.npes,
           fsh_rt.num_nodes ? fsh_rt.num_nodes : 0, fsh_boot_name(),
           fsh_rt.oversubscribed ? "oversubscribed (waits yield the CPU)" : "one core or more per PE");
    printf("  fabric: %s\n", fab);
    if (!fsh_fabric_none()) {
        const char *flushed = fsh_rma_post_flush_describe();
        printf("  puts: %s\n", !fsh_progress_counts_writes() ? "each tracked by its completion entry"
                               : flushed ? flushed
                                         : "injected ones counted by the write counter (no completion entry each)");
        printf("  %s\n", fsh_arrive_describe());
        char lanes[320];
        fsh_rma_lanes_describe(lanes, sizeof(lanes));
        printf("  contexts' own endpoints: %s\n", lanes);
        fsh_rma_bounce_describe(lanes, sizeof(lanes));
        printf("  blocking puts' bounce slots: %s\n", lanes);
        fsh_rma_session_describe(lanes, sizeof(lanes));
        printf("  small puts' batches: %s\n", lanes);
    }
    char loc[160];
    fsh_local_describe(loc, sizeof(loc));
    struct fsh_footprint f;
    char own[320];
    fsh_footprint(fsh_rt.npes, cfg, fsh_dev_on, &f);
    fsh_footprint_describe(&f, own, sizeof(own));
    printf("  symmetric heap: %zu bytes at %p; fabshmem's own: %s (%zu bytes)\n",
           heap_size, heap_base, own, f.total);
    printf("  intra-node: %s\n", loc);
    fsh_signal_print_info();
    printf("  %s\n", fsh_dev_describe());
    printf("  configuration (SHMEM_INFO=1):\n");
    fsh_env_print(stdout);
    fflush(stdout);
}

void fsh_init_info_place(void)
{
    char topo[1024];
    const struct fsh_fabric_attr *a = fsh_fabric_attr();
    fsh_topo_describe(topo, sizeof(topo));
    printf("  topology: PE %d local %d/%d %s endpoint=%s domain=%s hint=%s\n", fsh_rt.pe,
           fsh_rt.local_rank, fsh_rt.local_size, topo, a->prov[0] ? a->prov : "none", a->domain,
           a->nic_hint[0] ? a->nic_hint : "-");
    fflush(stdout);
}

int fsh_init_info_fits(const struct fsh_config *cfg, size_t heap_size)
{
    struct fsh_footprint f;
    fsh_footprint(fsh_rt.npes, cfg, false, &f);
    if (f.total <= heap_size) {
        return 0;
    }
    char own[320], fix[256];
    fsh_footprint_describe(&f, own, sizeof(own));
    /* As much again for the application, in MiB. */
    snprintf(fix, sizeof(fix), "raise SHMEM_SYMMETRIC_SIZE to %zuM or more (fabshmem's own, and as "
             "much again for the application), or lower FABSHMEM_MAX_TEAMS, FABSHMEM_SIGNAL_PEERS "
             "or FABSHMEM_SIGNAL_SLOTS", (2 * f.total + (1u << 20) - 1) >> 20);
    return fsh_err(-ENOMEM, fix,
                   "with %d PEs fabshmem's own state takes %s of the symmetric "
                   "heap, more than SHMEM_SYMMETRIC_SIZE=%zu holds",
                   fsh_rt.npes, own, heap_size);
}

void fsh_init_info_footprint(const struct fsh_config *cfg)
{
    struct fsh_footprint f;
    struct fsh_heap_stats st;
    fsh_footprint(fsh_rt.npes, cfg, fsh_dev_on, &f);
    fsh_heap_stats(&st);
    if (st.size - st.free != f.total) {
        FSH_WARN("fabshmem reserved %zu bytes of the symmetric heap but its memory model says %zu: "
                 "a bug, please report it", st.size - st.free, f.total);
    }
}

/* ------------------------------------------------------------------ another OpenSHMEM
 * A program built with another implementation's oshcc beside fabshmem (Open MPI's /usr/bin/oshcc
 * picked by a build, fabshmem's library on the link line too) has two runtimes whose shmem_*
 * routines the dynamic linker mixes: it crashes far from the cause. Such libraries are known by
 * their file names (an LD_PRELOADed profiling tool defines shmem_* too, so symbols prove
 * nothing). Found only when fabshmem's shmem_init runs: when the other library comes first in
 * the link order, its own shmem_init is the one called. */
static const struct {
    const char *prefix; /* of the file's base name */
    const char *what;
} rivals[] = {
    {"liboshmem.so", "Open MPI's OSHMEM"},
    {"libsma.so", "Sandia OpenSHMEM or Cray SHMEM"},
    {"libshmem.so", "OSSS OpenSHMEM or OSHMPI"},
    {"liboshmpi.so", "OSHMPI"},
};

struct rival_found {
    char path[400];
    const char *what;
};

static int find_rival(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct rival_found *found = arg;
    const char *path = info->dlpi_name;
    if (!path || !path[0]) {
        return 0;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < sizeof(rivals) / sizeof(rivals[0]); i++) {
        if (strncmp(base, rivals[i].prefix, strlen(rivals[i].prefix)) == 0) {
            snprintf(found->path, sizeof(found->path), "%s", path);
            found->what = rivals[i].what;
            return 1;
        }
    }
    return 0;
}

int fsh_init_info_rival(void)
{
    struct rival_found found = {"", NULL};
    if (!dl_iterate_phdr(find_rival, &found)) {
        return 0;
    }
    Dl_info self;
    const char *mine = "libfabshmem";
    if (dladdr((void *)fsh_init_info_rival, &self) && self.dli_fname && self.dli_fname[0]) {
        mine = self.dli_fname;
    }
    return fsh_err(-EEXIST, "build with fabshmem's wrapper only (fabshmem-oshcc, or oshcc of fabshmem's bin/: check `which oshcc`), so that ldd ./program lists no other OpenSHMEM library",
                   "another OpenSHMEM library is loaded in this process: %s (%s), beside "
                   "fabshmem's %s; their shmem_ routines would mix", found.path, found.what,
                   mine);
}
