/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_scale: what init costs one PE of a large job, in time and memory, without the job.
 *
 *   ./bench/sim_scale [-n 1024,16384,131072] [--csv]
 *
 * For each N, a fresh child process pretends to be PE 0 of an N-PE job with one PE per node and
 * runs the real code of init's steps that grow with N, in init's order (runtime/init.c): env,
 * topology, the fabric opened for real (tcp on lo), the intra-node, progress and segment tables,
 * registration of a real heap and of this program's data+bss, this PE's exchange blob packed
 * and the N blobs unpacked by init's own exchange (runtime/exchange.c), fi_av_insert of N
 * addresses (fsh_fabric_insert_peers), the intra-node attach, the heap and the per-module setup
 * (liveness, locks, atomics, collectives, put-with-signal); then finalize's closes. Each step
 * is timed, with the malloc bytes it kept (glibc's mallinfo2: ours and libfabric's), and the
 * process's resident set (VmRSS) moved by it; the run reports the peak RSS growth (ru_maxrss)
 * and the memory model's symmetric-heap footprint (runtime/footprint.h) at N.
 *
 * What it fakes: the bootstrap. The other N-1 PEs' blobs are made here: each a copy of PE 0's
 * with its own node id and its own IPv4 address (127.0.0.2 and up, ports from 1024: distinct
 * addresses, so the provider's AV holds N entries, not one shared). Their segment records
 * (mr.c) and intra-node records (local.c) are PE 0's own: those layouts are private to their
 * modules, and unpacking them is a copy whose cost does not depend on the values.
 *
 * What it cannot do, and says so in its output: anything that needs the peers to be alive. The
 * all-gather itself (PMIx fence and modex), the AMO-domain agreement and the device heap's
 * agreement (collectives), the connection of shm peers and the closing barrier. The progress
 * thread is not started (it holds no per-peer state).
 *
 * The fabricated addresses are sockaddr_in, so the provider is tcp whatever FI_PROVIDER says
 * (the output notes a replaced value); FI_TCP_IFACE defaults to lo. Nothing is connected: the
 * peers' addresses are only inserted. A child per N keeps each N's peak RSS its own and starts
 * every module from a fresh process, as a PE does; the child sends its figures to the parent,
 * which prints them. Nothing is left behind: finalize's closes run, and tcp names nothing in
 * /dev/shm. No figure is asserted.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "amo.h"
#include "bootstrap.h"
#include "coll.h"
#include "env.h"
#include "error.h"
#include "exchange.h"
#include "fabric.h"
#include "footprint.h"
#include "heap.h"
#include "live.h"
#include "local.h"
#include "lock.h"
#include "log.h"
#include "mr.h"
#include "progress.h"
#include "rma_post.h"
#include "rt.h"
#include "signal.h"
#include "topology.h"
#include "xport.h"

/* The steps, in init's order. in_init false: the simulation's own work, not init's. */
enum step {
    S_ENV, S_TOPOLOGY, S_FABRIC, S_INTRANODE, S_PROGRESS, S_SEGMENTS, S_REGISTRATION, S_PACK,
    S_FABRICATE, S_UNPACK, S_AV_INSERT, S_MAPPING, S_HEAP, S_LIVENESS, S_LOCKS, S_AMO,
    S_COLLECTIVES, S_SIGNALS, S_TEARDOWN, NSTEPS
};

static const struct {
    const char *name;
    bool in_init;
    const char *what;
} steps[NSTEPS] = {
    {"env", true, "fsh_env_load"},
    {"topology", true, "fsh_topo_init (hwloc of this machine, binding)"},
    {"fabric", true, "fsh_fabric_open: fi_getinfo, domain, AV of N, CQ, endpoint"},
    {"intranode", true, "fsh_local_init: per-PE intra-node tables"},
    {"progress", true, "fsh_progress_init, fsh_xport_init"},
    {"segments", true, "fsh_mr_init: every PE's segment records"},
    {"registration", true, "heap mapped, heap and data+bss registered"},
    {"pack", true, "exchange buffers for N blobs, this PE's blob packed"},
    {"fabricate", false, "the simulation makes N-1 peers' blobs (no all-gather)"},
    {"unpack", true, "layout check and unpack loop over N blobs"},
    {"av_insert", true, "fsh_fabric_insert_peers: fi_av_insert of N addresses"},
    {"mapping", true, "fsh_local_attach (one PE per node: nothing to map)"},
    {"heap", true, "fsh_heap_init"},
    {"liveness", true, "fsh_live_init"},
    {"locks", true, "fsh_lock_init"},
    {"amo", true, "fsh_amo_init, fsh_rma_post_flush_init (quiet's flush word)"},
    {"collectives", true, "fsh_coll_init: counters, scratch, world and shared teams"},
    {"signals", true, "fsh_signal_init: inbox pool, ring, per-peer state"},
    {"teardown", false, "finalize's closes, in its order"},
};

/* What init does that needs live peers: printed, never faked. */
static const char *const not_simulated[] = {
    "all-gather: fsh_boot_allgather is a PMIx fence and modex over N live processes (its "
    "payload per PE is the blob size below); the simulation copies fabricated blobs instead",
    "AMO domain agreement (fsh_notify_and_word) and the closing init barrier: collectives over "
    "live peers",
    "device heap (fsh_dev_open, fsh_dev_init): a GPU on every PE and an agreement; its staging "
    "inboxes are in the footprint's 'with device heap' figure",
    "connecting shm peers (shm only) and mapping peers of this node: one PE per node here",
    "progress thread: not started; it keeps no per-peer state",
};

struct step_result {
    double ms;
    long long malloc_bytes; /* kept by the step (allocated minus freed) */
    long long rss_kib;      /* VmRSS after minus before */
};

/* A child's figures for one N, sent to the parent through a pipe. */
struct result {
    int npes;
    struct step_result st[NSTEPS];
    long maxrss_start_kib, maxrss_end_kib;
    long vmrss_start_kib, vmrss_init_kib, vmrss_end_kib;
    long long malloc_kept; /* what malloc holds after init's steps more than at the start */
    size_t heap_mapped, heap_reserved, blob_bytes, exchange_bytes;
    struct fsh_footprint fp, fp_dev;
    bool fits_cfg; /* init would accept SHMEM_SYMMETRIC_SIZE as set */
    char prov[64];
    size_t addrlen;
};

/* ---------------------------------------------------------------- measuring */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Bytes malloc has handed out and not taken back, in every arena (mmapped blocks included). */
static long long malloc_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long long)(mi.uordblks + mi.hblkhd);
}

static long vmrss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    long kib = -1;
    char line[256];
    while (f && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return kib;
}

static long maxrss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

struct meter {
    double t;
    long long m;
    long rss;
};

static void meter_start(struct meter *mt)
{
    mt->rss = vmrss_kib();
    mt->m = malloc_in_use();
    mt->t = now_ms();
}

static void meter_stop(const struct meter *mt, struct step_result *r)
{
    r->ms = now_ms() - mt->t;
    r->malloc_bytes = malloc_in_use() - mt->m;
    r->rss_kib = vmrss_kib() - mt->rss;
}

/* ---------------------------------------------------------------- one N, in a child */

/* Ports 1024.. on 127.0.0.2 and up: PE 0 keeps its own 127.0.0.1 address, no two PEs share
 * one. */
#define SIM_PORTS 60000

struct sim {
    int npes;
    const struct fsh_config *cfg;
    struct fsh_boot_info boot;
    void *heap_base;
    size_t heap_size;
    size_t own; /* the memory model's figure for N: the heap must hold it */
    struct fsh_exchange x; /* init's exchange (runtime/exchange.c) */
    int *node_of;          /* kept from it until the collectives, as init keeps it */
};

/* init's exchange frees its buffers after the AV insert; node_of lives on. */
static void free_exchange(struct sim *s)
{
    if (!s->node_of) {
        s->node_of = s->x.node_of;
        s->x.node_of = NULL;
    }
    fsh_exchange_free(&s->x);
}

static int step_env(struct sim *s)
{
    int rc = fsh_env_load();
    if (rc != 0) {
        return rc;
    }
    s->cfg = fsh_env();
    int level = fsh_log_parse_level(s->cfg->FABSHMEM_LOG);
    fsh_rt.log_level = level < 0 ? FSH_LOG_WARN : level;
    fsh_rt.checks = s->cfg->FABSHMEM_CHECK || s->cfg->SHMEM_DEBUG;
    fsh_rt.state = FSH_STATE_INIT;
    /* What fsh_boot_init would have said for PE 0 of N, one PE per node. */
    s->boot = (struct fsh_boot_info){.rank = 0, .size = s->npes, .local_rank = 0,
                                     .local_size = 1, .node_id = 0, .num_nodes = s->npes,
                                     .singleton = 0};
    fsh_rt.pe = 0;
    fsh_rt.npes = s->npes;
    fsh_rt.local_rank = 0;
    fsh_rt.local_size = 1;
    fsh_rt.node_id = 0;
    fsh_rt.num_nodes = s->npes;
    fsh_rt.singleton = false;
    fsh_rt.oversubscribed = false;
    fsh_rt.pid = (int)getpid();
    snprintf(fsh_rt.host, sizeof(fsh_rt.host), "sim");
    return 0;
}

static int step_fabric(struct sim *s)
{
    const struct fsh_topo_pe *place = fsh_topo_mine();
    struct fsh_fabric_nic nic = {.forced = fsh_topo_nic_forced()};
    for (int i = 0; place && i < place->nnics && nic.count < FSH_MAX_RAILS; i++) {
        nic.names[nic.count++] = place->nics[i];
    }
    return fsh_fabric_open(s->cfg, &s->boot, &nic);
}

static int step_intranode(struct sim *s)
{
    enum fsh_intranode mode;
    int rc = fsh_local_parse_mode(s->cfg->FABSHMEM_INTRANODE, &mode);
    return rc ? rc : fsh_local_init(mode, s->npes, s->boot.local_size);
}

static int step_progress(struct sim *s)
{
    struct fsh_progress_config pc = {
        .depth = fsh_fabric_attr()->tx_depth,
        .yield = false, /* one PE per node: never oversubscribed */
        .timeout = s->cfg->FABSHMEM_TIMEOUT,
        .user_timeout = s->cfg->FABSHMEM_WAIT_TIMEOUT,
        .seed = 1,
    };
    int rc = fsh_progress_init(&pc);
    return rc ? rc : fsh_xport_init(false);
}

static int step_registration(struct sim *s)
{
    /* The heap init would map, or one large enough for fabshmem's own state at N (the run says
     * whether SHMEM_SYMMETRIC_SIZE as set would have been accepted). */
    size_t want = (s->cfg->SHMEM_SYMMETRIC_SIZE + 4095) & ~(size_t)4095;
    size_t need = (s->own + ((size_t)4 << 20)) & ~(((size_t)2 << 20) - 1);
    s->heap_size = want > need ? want : need;
    void *data_base;
    size_t data_len;
    fsh_mr_find_data_segment(&data_base, &data_len);
    int rc = fsh_mr_check_memlock(s->heap_size + data_len);
    if (rc == 0) {
        s->heap_base = fsh_heap_map(s->heap_size, fsh_local_heap_fd(s->heap_size));
        rc = s->heap_base ? 0 : fsh_err_last()->code;
    }
    if (rc == 0) {
        fsh_local_share_data(data_base, data_len);
        rc = fsh_mr_reg_segment(FSH_SEG_HEAP, s->heap_base, s->heap_size);
    }
    return rc ? rc : fsh_mr_reg_segment(FSH_SEG_DATA, data_base, data_len);
}

static int step_pack(struct sim *s)
{
    return fsh_exchange_pack(&s->x, s->npes, NULL);
}

/* The all-gather's result as N live PEs would have produced it, PE 0's blob first. */
static int step_fabricate(struct sim *s)
{
    uint8_t addr[FSH_ADDR_MAX];
    struct sockaddr_in sin;
    uint16_t len = fsh_exchange_my_addr(&s->x, addr);
    if (len != sizeof(sin)) {
        return fsh_err(-EAFNOSUPPORT, "run with FI_PROVIDER=tcp and FI_TCP_IFACE=lo (the defaults)",
                       "provider %s gave a %u-byte address; the simulation makes IPv4 "
                       "(sockaddr_in, %zu bytes) addresses for its peers",
                       fsh_fabric_attr()->prov, len, sizeof(sin));
    }
    memcpy(&sin, addr, sizeof(sin));
    if (sin.sin_family != AF_INET) {
        return fsh_err(-EAFNOSUPPORT, "set FI_TCP_IFACE to an interface with an IPv4 address (lo)",
                       "provider %s gave an address of family %d, not IPv4",
                       fsh_fabric_attr()->prov, sin.sin_family);
    }
    memcpy(s->x.all, s->x.mine, s->x.one);
    for (int i = 1; i < s->npes; i++) {
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1 + (uint32_t)(i / SIM_PORTS));
        sin.sin_port = htons((uint16_t)(1024 + i % SIM_PORTS));
        fsh_exchange_fake_peer(&s->x, i, &sin, (uint16_t)sizeof(sin), i);
    }
    return 0;
}

static int run_step(struct sim *s, enum step k)
{
    bool all_mapped;
    long teams = s->cfg ? s->cfg->FABSHMEM_MAX_TEAMS : 0;
    switch (k) {
    case S_ENV:
        return step_env(s);
    case S_TOPOLOGY:
        return fsh_topo_init(s->cfg, s->boot.local_rank, s->boot.local_size, NULL, 0);
    case S_FABRIC:
        return step_fabric(s);
    case S_INTRANODE:
        return step_intranode(s);
    case S_PROGRESS:
        return step_progress(s);
    case S_SEGMENTS:
        return fsh_mr_init(s->npes);
    case S_REGISTRATION:
        return step_registration(s);
    case S_PACK:
        return step_pack(s);
    case S_FABRICATE:
        return step_fabricate(s);
    case S_UNPACK:
        return fsh_exchange_unpack(&s->x);
    case S_AV_INSERT:
        return fsh_fabric_insert_peers(s->x.slots, s->x.lens, s->npes);
    case S_MAPPING:
        return fsh_local_attach(s->node_of, &all_mapped);
    case S_HEAP:
        return fsh_heap_init(s->heap_base, s->heap_size);
    case S_LIVENESS:
        return fsh_live_init(s->node_of, s->cfg->FABSHMEM_PROBE_INTERVAL, true);
    case S_LOCKS:
        return fsh_lock_init(s->cfg->FABSHMEM_PROBE_INTERVAL);
    case S_AMO: {
        int rc = fsh_amo_init(s->cfg->FABSHMEM_AMO_PEERS);
        return rc ? rc : fsh_rma_post_flush_init();
    }
    case S_COLLECTIVES:
        return fsh_coll_init(s->node_of, teams < 0 ? 0 : (unsigned)teams);
    case S_SIGNALS:
        return fsh_signal_init(s->cfg->FABSHMEM_SIGNAL_SLOTS, s->cfg->FABSHMEM_SIGNAL_PEERS);
    default:
        return 0;
    }
}

/* finalize's closes (fsh_init_finalize), in its order, of every module whose init was called
 * (a failed init leaves state its fini frees). */
static void teardown(struct sim *s, enum step reached)
{
    if (reached >= S_SIGNALS) {
        fsh_signal_fini();
    }
    if (reached >= S_COLLECTIVES) {
        fsh_coll_fini();
    }
    if (reached >= S_LIVENESS) {
        fsh_live_fini();
    }
    if (reached >= S_AMO) {
        fsh_rma_post_flush_fini();
        fsh_amo_fini();
    }
    if (reached >= S_HEAP) {
        fsh_heap_fini();
    }
    if (reached >= S_SEGMENTS) {
        fsh_mr_fini();
    }
    if (reached >= S_PROGRESS) {
        fsh_xport_fini();
        fsh_progress_fini();
    }
    if (reached >= S_FABRIC) {
        fsh_fabric_close();
    }
    if (reached >= S_TOPOLOGY) {
        fsh_topo_fini();
    }
    if (reached >= S_INTRANODE) {
        fsh_local_fini();
    }
    fsh_heap_unmap(s->heap_base, s->heap_size);
    s->heap_base = NULL;
    free_exchange(s);
    free(s->node_of);
    s->node_of = NULL;
}

static int simulate(int npes, struct result *r)
{
    struct sim s = {.npes = npes};
    memset(r, 0, sizeof(*r));
    r->npes = npes;
    r->maxrss_start_kib = maxrss_kib();
    r->vmrss_start_kib = vmrss_kib();
    long long malloc_start = malloc_in_use();
    enum step k;
    int rc = 0;
    for (k = S_ENV; k < S_TEARDOWN && rc == 0; k++) {
        struct meter mt;
        meter_start(&mt);
        rc = run_step(&s, k);
        meter_stop(&mt, &r->st[k]);
        if (k == S_ENV && rc == 0) {
            /* The model's figure: a pure function of N and the settings; it sizes the heap. */
            fsh_footprint(npes, s.cfg, false, &r->fp);
            fsh_footprint(npes, s.cfg, true, &r->fp_dev);
            s.own = r->fp.total;
            r->fits_cfg = r->fp.total <= ((s.cfg->SHMEM_SYMMETRIC_SIZE + 4095) & ~(size_t)4095);
        }
        if (k == S_AV_INSERT) {
            /* init's exchange frees its buffers here; node_of lives on until the collectives. */
            r->exchange_bytes = s.x.one * ((size_t)npes + 1) +
                                (size_t)npes * (FSH_ADDR_MAX + sizeof(uint16_t));
            free_exchange(&s);
        }
        if (k == S_COLLECTIVES) {
            free(s.node_of);
            s.node_of = NULL;
        }
    }
    enum step reached = k - 1;
    if (rc != 0) {
        const struct fsh_error *e = fsh_err_last();
        fprintf(stderr, "sim_scale: %d PEs: step %s failed: %s\n", npes, steps[reached].name,
                e ? e->msg : strerror(-rc));
        if (e && e->fix[0]) {
            fprintf(stderr, "sim_scale: fix: %s\n", e->fix);
        }
    } else {
        struct fsh_heap_stats st;
        fsh_heap_stats(&st);
        r->heap_mapped = st.size;
        r->heap_reserved = st.size - st.free;
        r->blob_bytes = s.x.one;
        r->addrlen = fsh_fabric_attr()->addrlen;
        snprintf(r->prov, sizeof(r->prov), "%s", fsh_fabric_attr()->prov);
    }
    r->vmrss_init_kib = vmrss_kib();
    r->malloc_kept = malloc_in_use() - malloc_start;
    struct meter mt;
    meter_start(&mt);
    teardown(&s, reached);
    meter_stop(&mt, &r->st[S_TEARDOWN]);
    r->vmrss_end_kib = vmrss_kib();
    r->maxrss_end_kib = maxrss_kib();
    return rc != 0;
}

/* ---------------------------------------------------------------- the parent: output */

static double mib(double bytes)
{
    return bytes / (1024.0 * 1024.0);
}

static void print_table(const struct result *r)
{
    double init_ms = 0;
    for (int k = 0; k < NSTEPS; k++) {
        init_ms += steps[k].in_init ? r->st[k].ms : 0;
    }
    printf("\n# %d PEs (PE 0 simulated; one PE per node; provider %s, %zu-byte addresses)\n",
           r->npes, r->prov, r->addrlen);
    printf("%-14s %10s %14s %12s %10s  %s\n", "step", "ms", "malloc_kept_B", "B_per_peer",
           "rss_KiB", "what");
    for (int k = 0; k < NSTEPS; k++) {
        const struct step_result *x = &r->st[k];
        printf("%-14s %10.2f %14lld %12.1f %10lld  %s%s\n", steps[k].name, x->ms, x->malloc_bytes,
               (double)x->malloc_bytes / r->npes, x->rss_kib, steps[k].in_init ? "" : "[not init] ",
               steps[k].what);
    }
    printf("# init steps simulated: %.1f ms (without fabricate and teardown)\n", init_ms);
    printf("# exchange: %zu bytes per PE's blob, %.1f MiB gathered at N; %.1f MiB of exchange "
           "buffers freed after the AV insert\n",
           r->blob_bytes, mib((double)r->blob_bytes * r->npes), mib((double)r->exchange_bytes));
    printf("# process: peak RSS (ru_maxrss) %ld -> %ld KiB (+%.1f MiB); VmRSS %ld KiB at start, "
           "%ld after init's steps, %ld after teardown\n",
           r->maxrss_start_kib, r->maxrss_end_kib,
           (double)(r->maxrss_end_kib - r->maxrss_start_kib) / 1024, r->vmrss_start_kib,
           r->vmrss_init_kib, r->vmrss_end_kib);
    char own[320], dev[320];
    fsh_footprint_describe(&r->fp, own, sizeof(own));
    fsh_footprint_describe(&r->fp_dev, dev, sizeof(dev));
    printf("# symmetric heap, fabshmem's own (footprint.h): %s; with the device heap on: %s\n", own,
           dev);
    printf("# heap: %.1f MiB mapped, %zu bytes reserved by init (the model says %zu: %s); "
           "SHMEM_SYMMETRIC_SIZE=%zu %s\n",
           mib((double)r->heap_mapped), r->heap_reserved, r->fp.total,
           r->heap_reserved == r->fp.total ? "equal" : "DIFFERENT: a bug",
           fsh_env()->SHMEM_SYMMETRIC_SIZE,
           r->fits_cfg ? "holds it" : "would be refused at init (the heap here was enlarged)");
}

static void print_csv(const struct result *r)
{
    for (int k = 0; k < NSTEPS; k++) {
        const struct step_result *x = &r->st[k];
        printf("%d,step,%s,%.3f,%lld,%.1f,%lld\n", r->npes, steps[k].name, x->ms, x->malloc_bytes,
               (double)x->malloc_bytes / r->npes, x->rss_kib);
    }
    for (int i = 0; i < FSH_FOOTPRINT_PARTS; i++) {
        printf("%d,footprint,%s,,%zu,%.1f,\n", r->npes, r->fp_dev.name[i], r->fp_dev.bytes[i],
               (double)r->fp_dev.bytes[i] / r->npes);
    }
    printf("%d,footprint,total,,%zu,%.1f,\n", r->npes, r->fp.total, (double)r->fp.total / r->npes);
    printf("%d,footprint,total_with_device,,%zu,%.1f,\n", r->npes, r->fp_dev.total,
           (double)r->fp_dev.total / r->npes);
    printf("%d,heap,reserved,,%zu,,\n", r->npes, r->heap_reserved);
    printf("%d,process,malloc_kept,,%lld,%.1f,\n", r->npes, r->malloc_kept,
           (double)r->malloc_kept / r->npes);
    printf("%d,exchange,blob,,%zu,,\n", r->npes, r->blob_bytes);
    printf("%d,process,maxrss_growth,,%lld,%.1f,%ld\n", r->npes,
           (long long)(r->maxrss_end_kib - r->maxrss_start_kib) * 1024,
           (double)(r->maxrss_end_kib - r->maxrss_start_kib) * 1024 / r->npes,
           r->maxrss_end_kib - r->maxrss_start_kib);
    printf("%d,process,vmrss_start,,,,%ld\n", r->npes, r->vmrss_start_kib);
    printf("%d,process,vmrss_after_init,,,,%ld\n", r->npes, r->vmrss_init_kib);
    printf("%d,process,vmrss_after_teardown,,,,%ld\n", r->npes, r->vmrss_end_kib);
}

static void print_summary(const struct result *rs, int n)
{
    printf("\n# summary (ms; memory of the simulated PE)\n");
    printf("%8s %9s %9s %9s %12s %14s %14s %13s %13s\n", "npes", "init_ms", "unpack_ms",
           "insert_ms", "peak_rss_MiB", "kept_MiB", "heap_own_MiB", "+device_MiB",
           "fits_heap");
    for (int i = 0; i < n; i++) {
        const struct result *r = &rs[i];
        double init_ms = 0;
        for (int k = 0; k < NSTEPS; k++) {
            init_ms += steps[k].in_init ? r->st[k].ms : 0;
        }
        printf("%8d %9.1f %9.2f %9.2f %12.1f %14.1f %14.2f %13.2f %13s\n", r->npes, init_ms,
               r->st[S_UNPACK].ms, r->st[S_AV_INSERT].ms,
               (double)(r->maxrss_end_kib - r->maxrss_start_kib) / 1024,
               mib((double)r->malloc_kept), mib((double)r->fp.total), mib((double)r->fp_dev.total),
               r->fits_cfg ? "yes" : "no");
    }
    printf("# kept_MiB: what malloc holds after init's steps (the exchange buffers and node_of "
           "freed, as init frees them); heap_own: fabshmem's own symmetric-heap reservations, +device "
           "with the device heap on; fits_heap: SHMEM_SYMMETRIC_SIZE as set holds them\n");
}

/* What one more peer costs, step by step: the difference between the smallest and the largest
 * N of the run, over the difference in N. A step whose cost does not depend on N shows ~0 here
 * however large it is (its B_per_peer column above only divides it by N). */
static void print_growth(const struct result *rs, int n, bool csv)
{
    const struct result *a = &rs[0], *b = &rs[0];
    for (int i = 1; i < n; i++) {
        a = rs[i].npes < a->npes ? &rs[i] : a;
        b = rs[i].npes > b->npes ? &rs[i] : b;
    }
    if (a == b) {
        return;
    }
    double dn = (double)(b->npes - a->npes);
    if (!csv) {
        printf("\n# per added peer, from %d to %d PEs (differences over %d PEs)\n", a->npes,
               b->npes, b->npes - a->npes);
        printf("%-14s %12s %12s %12s\n", "step", "ns_per_peer", "B_per_peer", "rss_B_per_peer");
    }
    for (int k = 0; k < NSTEPS; k++) {
        double ns = (b->st[k].ms - a->st[k].ms) * 1e6 / dn;
        double m = (double)(b->st[k].malloc_bytes - a->st[k].malloc_bytes) / dn;
        double rss = (double)(b->st[k].rss_kib - a->st[k].rss_kib) * 1024 / dn;
        if (csv) {
            printf("%d-%d,growth,%s,%.6f,,%.1f,%.1f\n", a->npes, b->npes, steps[k].name, ns / 1e6,
                   m, rss);
        } else {
            printf("%-14s %12.1f %12.1f %12.1f%s\n", steps[k].name, ns, m, rss,
                   steps[k].in_init ? "" : "  [not init]");
        }
    }
    double peak = (double)((b->maxrss_end_kib - b->maxrss_start_kib) -
                           (a->maxrss_end_kib - a->maxrss_start_kib)) * 1024 / dn;
    double own = ((double)b->fp.total - (double)a->fp.total) / dn;
    if (csv) {
        printf("%d-%d,growth,peak_rss,,,%.1f,\n", a->npes, b->npes, peak);
        printf("%d-%d,growth,heap_own,,,%.1f,\n", a->npes, b->npes, own);
    } else {
        printf("# peak RSS: %.1f B per added peer; fabshmem's symmetric heap: %.1f B per added "
               "peer\n", peak, own);
    }
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sim_scale [-n N[,N...]] [--csv]\n"
            "  PE 0 of an N-PE job (one PE per node) in one process: init's real steps with a\n"
            "  fake bootstrap, timed, with the memory they keep and the symmetric-heap model.\n"
            "  -n LIST  PE counts (k = 1024), default 1024,16384,131072\n"
            "  --csv    rows npes,kind,name,ms,bytes,bytes_per_peer,rss_kib\n"
            "  Provider: tcp (FI_PROVIDER is replaced), FI_TCP_IFACE=lo unless set.\n");
}

static int parse_list(const char *arg, int *ns, int max)
{
    int n = 0;
    char *copy = strdup(arg), *save = NULL;
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(w, &end, 10);
        if (*end == 'k' || *end == 'K') {
            v *= 1024;
            end++;
        }
        if (*end != '\0' || v < 2 || v > (1L << 22) || n == max) {
            free(copy);
            return -1;
        }
        ns[n++] = (int)v;
    }
    free(copy);
    return n;
}

/* The simulation opens tcp: it makes IPv4 addresses for its peers. */
static void choose_provider(void)
{
    const char *vars[] = {"FI_PROVIDER", "FABSHMEM_PROVIDER"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = getenv(vars[i]);
        if (v && v[0] && strcmp(v, "tcp") != 0 && strcmp(v, "tcp;ofi_rxm") != 0) {
            printf("# %s=%s replaced by tcp: the simulation makes IPv4 addresses for its peers\n",
                   vars[i], v);
        }
    }
    setenv("FI_PROVIDER", "tcp", 1);
    unsetenv("FABSHMEM_PROVIDER");
    setenv("FI_TCP_IFACE", "lo", 0);
}

int main(int argc, char **argv)
{
    int ns[16] = {1024, 16384, 131072};
    int count = 3;
    bool csv = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0) {
            csv = true;
        } else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            count = parse_list(argv[++i], ns, 16);
            if (count <= 0) {
                fprintf(stderr, "sim_scale: -n takes PE counts from 2 to 4194304, comma-separated "
                        "(1k = 1024), not '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    choose_provider();
    if (fsh_env_load() != 0) {
        const struct fsh_error *e = fsh_err_last();
        fprintf(stderr, "sim_scale: %s\nsim_scale: fix: %s\n", e->msg, e->fix);
        return 1;
    }
    printf("# sim_scale: init's steps for PE 0 of an N-PE job, one process, fake bootstrap; "
           "FI_TCP_IFACE=%s\n", getenv("FI_TCP_IFACE"));
    for (size_t i = 0; i < sizeof(not_simulated) / sizeof(not_simulated[0]); i++) {
        printf("# not simulated: %s\n", not_simulated[i]);
    }
    if (csv) {
        printf("npes,kind,name,ms,bytes,bytes_per_peer,rss_kib\n");
    }
    fflush(stdout);
    struct result *rs = calloc((size_t)count, sizeof(*rs));
    int status = 0;
    for (int i = 0; i < count && rs; i++) {
        int fds[2];
        if (pipe(fds) != 0) {
            perror("sim_scale: pipe");
            return 1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("sim_scale: fork");
            return 1;
        }
        if (pid == 0) {
            close(fds[0]);
            struct result r;
            int rc = simulate(ns[i], &r);
            ssize_t w = rc == 0 ? write(fds[1], &r, sizeof(r)) : 0;
            _exit(rc == 0 && w == (ssize_t)sizeof(r) ? 0 : 1);
        }
        close(fds[1]);
        size_t got = 0;
        while (got < sizeof(rs[i])) {
            ssize_t n = read(fds[0], (char *)&rs[i] + got, sizeof(rs[i]) - got);
            if (n <= 0 && !(n < 0 && errno == EINTR)) {
                break;
            }
            got += n > 0 ? (size_t)n : 0;
        }
        close(fds[0]);
        int ws;
        waitpid(pid, &ws, 0);
        if (got != sizeof(rs[i]) || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
            fprintf(stderr, "sim_scale: the simulation of %d PEs failed (above)\n", ns[i]);
            status = 1;
            break;
        }
        if (csv) {
            print_csv(&rs[i]);
        } else {
            print_table(&rs[i]);
        }
        fflush(stdout);
        if (rs[i].heap_reserved != rs[i].fp.total) {
            /* The one data check: init's reservations and the memory model disagree. */
            fprintf(stderr, "sim_scale: %d PEs: init reserved %zu bytes of the symmetric heap, "
                    "the memory model (runtime/footprint.c) says %zu: one of them is wrong\n",
                    ns[i], rs[i].heap_reserved, rs[i].fp.total);
            status = 1;
        }
    }
    if (status == 0 && rs) {
        if (!csv) {
            print_summary(rs, count);
        }
        print_growth(rs, count, csv);
    }
    free(rs);
    return status;
}
