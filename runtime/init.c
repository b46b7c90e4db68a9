/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init.c: the one place that knows the order modules come up and go down.
 *
 *   init:  the phases of the table below, in order: env, log level, bootstrap (PMIx or
 *          singleton) -> topology (GPU, NIC, binding; read by the node's leader, loaded from
 *          its XML by the others) -> intra-node choice, then a provider on that NIC (or none)
 *          -> progress engine, transport, registrations -> memlock check, heap map (a memfd
 *          when PEs share the node), data+bss moved onto a memfd (idem) -> registration (heap,
 *          data+bss) -> exchange (one all-gather of {address, segment bases and keys,
 *          memfds}) -> AV insert -> peers' segments mapped -> allocator, probes, locks, AMOs,
 *          arrival counts -> collectives, AMO domain agreed -> signals -> device heap (GPU
 *          opened by each, agreed by all) -> threads -> running -> peers connected ->
 *          barrier -> shm provider's region names removed
 *   finalize: quiet -> "in finalize" published -> finalize's own sync (never matched by a
 *             user's barrier) -> probes stopped -> quiet -> fence with progress -> everything
 *             closed in reverse
 *   nested: init while initialized only counts; each finalize but the one matching the
 *             first init only completes this PE's operations (OpenSHMEM 1.6)
 *   exit() without shmem_finalize: status 0 finalizes implicitly; any other status ends the
 *             job at once with that status, naming this PE (on_exit learns the status)
 *
 * It also owns the fatal path: a module records cause and fix (fsh_err), the API boundary
 * calls fsh_init_fatal_err, and this file prints the two-line report and ends the job through
 * the launcher. Modules never exit. What init prints (SHMEM_INFO, the phases' timings) and the
 * checks that only report are init_info.c's.
 */
#define _GNU_SOURCE /* on_exit */
#include "init.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arrive.h"
#include "backend.h"
#include "bootstrap.h"
#include "coll.h"
#include "crash.h"
#include "devmem.h"
#include "env.h"
#include "error.h"
#include "exchange.h"
#include "fabric.h"
#include "heap.h"
#include "init_info.h"
#include "live.h"
#include "lock.h"
#include "local.h"
#include "log.h"
#include "mr.h"
#include "notify.h"
#include "progress.h"
#include "proxy.h"
#include "amo.h"
#include "rma.h"
#include "rma_post.h"
#include "rt.h"
#include "shmem.h"
#include "signal.h"
#include "team.h"
#include "topology.h"
#include "xport.h"

static struct {
    void *heap_base;
    size_t heap_size;
    int atexit_done;
    /* Initializations not yet matched by a shmem_finalize (OpenSHMEM 1.6: init may be called
     * again while initialized; only the finalize matching the first one finalizes). Atomic:
     * at SHMEM_THREAD_MULTIPLE threads may nest their own init/finalize pairs. */
    int depth;
} lifetime;

static void report(const char *fn, const char *fix, const char *msg)
{
    char who[32];
    if (fsh_rt.pe >= 0) {
        snprintf(who, sizeof(who), "PE %d/%d ", fsh_rt.pe, fsh_rt.npes);
    } else {
        who[0] = '\0';
    }
    /* Two lines, one write each, so PEs sharing a terminal do not interleave them. */
    fprintf(stderr, "fabshmem: %s(%s:%d): %s: %s\n", who, fsh_rt.host, fsh_rt.pid, fn, msg);
    if (fix && fix[0]) {
        fprintf(stderr, "fabshmem: fix: %s\n", fix);
    }
    fflush(stderr);
}

static void identify(void)
{
    if (fsh_rt.pid == 0) {
        fsh_rt.pid = (int)getpid();
        if (gethostname(fsh_rt.host, sizeof(fsh_rt.host)) != 0) {
            snprintf(fsh_rt.host, sizeof(fsh_rt.host), "?");
        }
        fsh_rt.host[sizeof(fsh_rt.host) - 1] = '\0';
    }
}

/* A PE killed by the launcher (SIGTERM after a peer aborted, or ^C: SIGINT) removes its
 * shared-memory files, then dies of the signal as it would have. */
static void on_terminate(int sig)
{
    fsh_fabric_unlink_shared();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The launcher is gone (bootstrap.h): no one will end this PE or its peers, so it ends itself,
 * removing its shared-memory files first (a write to a stderr whose reader died must not kill
 * it before that: SIGPIPE is ignored from here on). */
static void launcher_lost(void)
{
    fsh_fabric_unlink_shared();
    signal(SIGPIPE, SIG_IGN);
    report("launcher", "the launcher (mpirun, its daemon, or srun's step) was killed or lost; see its logs",
           "the launcher (PMIx server) is gone; this PE ends");
    _exit(1);
}

static void install_terminate_handlers(void)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        /* Never replace a handler the application installed. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
            struct sigaction sa;
            memset(&sa, 0, sizeof(sa));
            sa.sa_handler = on_terminate;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[i], &sa, NULL);
        }
    }
}

static void __attribute__((noreturn)) end_job(int status, const char *fn, const char *fix,
                                               const char *fmt, va_list ap)
{
    identify();
    char msg[600];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (!fsh_rt.forked) {
        /* First: the report may die of SIGPIPE when the launcher that read our output is
         * gone (mpirun killed during init), and the files must not outlive us. */
        fsh_fabric_unlink_shared();
    }
    report(fn, fix, msg);
    fflush(stdout);
    if (fsh_rt.forked) {
        _exit(1); /* a forked child is no PE: it ends, not its parent's job */
    }
    fsh_boot_abort(status, msg);
}

void fsh_init_fatal(const char *fn, const char *fix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    end_job(1, fn, fix, fmt, ap);
}

static void __attribute__((noreturn)) end_job_with(int status, const char *fn, const char *fix,
                                                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    end_job(status, fn, fix, fmt, ap);
}

void fsh_init_fatal_err(const char *fn, int rc)
{
    const struct fsh_error *e = fsh_err_last();
    if (e) {
        if (fsh_rt.log_level >= FSH_LOG_DEBUG) {
            FSH_DEBUG("error first detected at %s:%d", e->file, e->line);
        }
        fsh_init_fatal(fn, e->fix, "%s", e->msg);
    }
    fsh_init_fatal(fn, "FABSHMEM_LOG=debug shows more", "internal error %d (%s)", rc,
                   strerror(rc < 0 ? -rc : rc));
}

/* Cores of this node. Not the affinity mask: a launcher that binds each PE to one core does not
 * make the PEs share cores. */
static int cores_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* FABSHMEM_YIELD: auto, always, never (env.c checked the word at load). */
static bool want_yield(void)
{
    int i = fsh_env_word_index("FABSHMEM_YIELD");
    return i == 0 ? fsh_rt.oversubscribed : i == 1;
}

/* FABSHMEM_CHAOS: a comma-separated subset of reorder, delay (checked at load). */
static void parse_chaos(bool *reorder, bool *delay)
{
    unsigned mask = fsh_env_word_set("FABSHMEM_CHAOS");
    *reorder = mask & 1u;
    *delay = mask & 2u;
}

/* Nothing ever reaches this PE through the provider: a one-node job where every PE maps every
 * other (AMOs as CPU atomics) and no device heap (whose staging requests use the fabric). */
static bool fabric_idle(void)
{
    return fsh_local.cpu_atomics && !fsh_dev_on;
}

static bool want_progress_thread(void)
{
    int i = fsh_env_word_index("FABSHMEM_PROGRESS_THREAD"); /* auto, on, off, 1, 0 */
    /* auto: when the provider needs target-side progress, or AMOs are applied by the target's
     * engine (no provider atomics), and some PE may reach this one through the fabric: a PE
     * computing without calling the library must not hold up its peers' operations. */
    bool needed = fsh_fabric_attr()->manual_progress || fsh_amo_by_target();
    return i == 0 ? needed && !fabric_idle() : (i == 1 || i == 3);
}

/* FABSHMEM_INTRANODE, and FABSHMEM_SIM_NODES: tests split the PEs of this host into pretend
 * nodes (by blocks of ranks), so the paths between local and remote PEs, and the AMO rule
 * for jobs that span nodes, run here. A fabric is opened with the real layout (boot's). */
static int intranode_setup(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                           enum fsh_intranode *mode_out)
{
    enum fsh_intranode mode;
    int rc = fsh_local_parse_mode(cfg->FABSHMEM_INTRANODE, &mode);
    if (rc != 0) {
        return rc;
    }
    *mode_out = mode;
    long k = cfg->FABSHMEM_SIM_NODES;
    if (k > 1) {
        if (k > fsh_rt.npes || fsh_rt.num_nodes != 1) {
            return fsh_err(-EINVAL, "use 2..shmem_n_pes() on a single host, or unset it",
                           "FABSHMEM_SIM_NODES=%ld with %d PEs on %d node(s)", k, fsh_rt.npes,
                           fsh_rt.num_nodes);
        }
        fsh_rt.node_id = (int)((long)fsh_rt.pe * k / fsh_rt.npes);
        fsh_rt.num_nodes = (int)k;
    }
    return fsh_local_init(mode, fsh_rt.npes, boot->local_size);
}

/* Does the job need a provider? Not when all its PEs run on this node and map each other's
 * memory (FABSHMEM_FABRIC=auto): every operation is then a load, a store or a CPU atomic
 * (local.c), and opening one would cost each PE the provider's start-up, most of a one-node
 * init (libfabric 1.17: about 0.1 s of CPU per process, its verbs provider reading
 * /proc/kallsyms twice even where there is no RDMA device). Decided from what every PE sees
 * alike; the exchange checks that all decided the same. */
static int fabric_wanted(const struct fsh_config *cfg, enum fsh_intranode mode, bool *want)
{
    int always = fsh_env_word_index("FABSHMEM_FABRIC"); /* auto, always */
    *want = always || mode != FSH_INTRANODE_AUTO || fsh_rt.num_nodes > 1 ||
            cfg->FABSHMEM_DEVICE_HEAP_SIZE > 0 || /* the device heap is reached by staging */
            (fsh_rt.npes > 1 && !fsh_local_shares_data());
    return 0;
}

/* The topology, read once per node: the node's leader reads this machine and publishes it as
 * hwloc XML, its other PEs load that. Reading a machine costs a PE tens of milliseconds of CPU
 * (hundreds on GPU nodes), and a node's PEs all read at once; loading the XML costs a fraction
 * of a millisecond. The leader publishes even when it has nothing to share (a configured XML
 * file, an unreadable machine: zero bytes), since its peers wait for it; a peer that cannot
 * fetch or load the copy reads the machine itself. */
#define TOPO_KEY "fabshmem.topo"
static int topology_setup(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                          double timeout)
{
    if (boot->local_size < 2 || boot->node_leader < 0) {
        return fsh_topo_init(cfg, boot->local_rank, boot->local_size, NULL, 0);
    }
    void *xml = NULL;
    size_t len = 0;
    int rc;
    if (boot->rank == boot->node_leader) {
        rc = fsh_topo_init(cfg, boot->local_rank, boot->local_size, NULL, 0);
        if (rc == 0) {
            rc = fsh_topo_export(&xml, &len);
        }
        if (rc == 0) {
            rc = fsh_boot_node_publish(TOPO_KEY, xml, len);
        }
    } else {
        if (fsh_boot_node_fetch(boot->node_leader, TOPO_KEY, &xml, &len, timeout) != 0) {
            FSH_DEBUG("no topology from PE %d (%s): reading this machine", boot->node_leader,
                      fsh_err_last()->msg);
            fsh_err_clear();
        }
        rc = fsh_topo_init(cfg, boot->local_rank, boot->local_size, xml, len);
    }
    free(xml);
    return rc;
}

/* The AMO rule of local.c: CPU atomics only when the job is one node and every PE mapped
 * every other, agreed by all. */
static int agree_amo_domain(bool all_mapped)
{
    uint64_t word = all_mapped && fsh_rt.num_nodes == 1;
    int rc = fsh_notify_and_word(&fsh_team_world, &word);
    fsh_local.cpu_atomics = rc == 0 && word;
    fsh_notify_eager_enable(rc == 0 && word != 0);
    return rc;
}

/* The device heap is on for every PE or for none: each opens its GPU, all agree. It is
 * registered with the NIC only where every PE could (a peer's heap without a key is reached
 * by staging): each tries, all agree again. Then the operations reach it through its backend. */
static int device_setup(const struct fsh_config *cfg)
{
    if (cfg->FABSHMEM_DEVICE_HEAP_SIZE == 0) {
        return 0;
    }
    uint64_t everywhere = fsh_dev_open(cfg) == 0;
    bool registered;
    int rc = fsh_notify_and_word(&fsh_team_world, &everywhere);
    if (rc == 0) {
        rc = fsh_dev_init(cfg, everywhere != 0, &registered);
    }
    if (rc != 0 || !everywhere) {
        return rc;
    }
    uint64_t all_registered = registered;
    rc = fsh_notify_and_word(&fsh_team_world, &all_registered);
    if (rc == 0) {
        rc = fsh_dev_start(cfg, all_registered != 0);
    }
    if (rc == 0) {
        fsh_backend_set(fsh_dev_backend());
    }
    return rc;
}

/* The node of every PE, from the exchange, until the collectives have built the shared team. */
static int *node_of;

/* Every PE's address, node, layout settings, keys and intra-node records, in one all-gather;
 * then every peer into the AV (timed apart: its cost is the provider's). */
static int exchange(double timeout)
{
    struct fsh_exchange x = {0};
    /* On efa-direct contexts' endpoints are opened now, to be published: a target must have
     * an endpoint's address before its first operation reaches it. */
    int rc = fsh_rma_lanes_preopen();
    static uint8_t names[FSH_EXCHANGE_LANES_MAX * FSH_MAX_RAILS * FSH_EXCHANGE_LANE_ADDR_MAX];
    struct fsh_exchange_lanes lanes = {.counted = (uint64_t)fsh_arrive_lanes(),
                                       .published = (size_t)fsh_rma_lanes_published(),
                                       .names = names};
    lanes.n = fsh_rma_lane_names(names, FSH_EXCHANGE_LANE_ADDR_MAX, lanes.published, &lanes.len);
    if (rc == 0) {
        rc = fsh_exchange_pack(&x, fsh_rt.npes, &lanes);
    }
    if (rc == 0) {
        rc = fsh_boot_allgather(x.mine, x.one, x.all, timeout);
    }
    if (rc == 0) {
        rc = fsh_exchange_unpack(&x);
    }
    fsh_init_info_phase("exchange");
    if (rc == 0) {
        rc = fsh_fabric_insert_peers(x.slots, x.lens, fsh_rt.npes);
    }
    if (rc == 0) {
        rc = fsh_exchange_insert_lanes(&x);
    }
    if (rc == 0 && fsh_fabric_attr()->av_first) {
        /* On efa-direct a target must have the initiator in its AV before an RMA reaches
         * it (a device limitation, fi_efa(7)): nobody writes before everybody inserted
         * everybody, contexts' endpoints included (one PMIx fence). */
        rc = fsh_boot_fence(timeout, NULL);
    }
    if (rc == 0 && fsh_fabric_multirail()) {
        rc = fsh_xport_enable_failover();
    }
    /* Contexts' own endpoints and the bounce slots: once the rails of every PE are known. */
    fsh_rma_lanes_init(fsh_env()->FABSHMEM_CTX_ENDPOINTS);
    if (rc == 0) {
        rc = fsh_rma_bounce_init(fsh_env()->FABSHMEM_BOUNCE_SIZE, fsh_env()->FABSHMEM_BOUNCE_SLOTS);
    }
    node_of = x.node_of; /* kept until the collectives are set up */
    x.node_of = NULL;
    fsh_exchange_free(&x);
    return rc;
}

static void finalize_all(const char *fn);

static void at_exit(int status, void *arg)
{
    (void)arg;
    if (fsh_rt.forked) {
        return; /* a child of a PE: its parent's library is not its own */
    }
    if (fsh_rt.state != FSH_STATE_RUNNING) {
        /* The bootstrap outlives shmem_finalize (a later shmem_init may need it) and ends
         * with the process. */
        fsh_boot_fini();
        return;
    }
    fsh_live_publish(FSH_LIVE_EXIT, status);
    if (status != 0) {
        /* A failing PE waits for nobody: the job ends now, with its status. */
        fflush(stdout);
        end_job_with(status, "exit", "call shmem_finalize before leaving main, or shmem_global_exit(status) to end every PE on purpose",
                     "PE %d called exit(%d) without shmem_finalize; the job ends with status %d",
                     fsh_rt.pe, status, status);
    }
    /* A program that returns 0 from main without shmem_finalize is finalized here, so its
     * peers are not left waiting in theirs. Peers still in a collective see the published
     * state and end the job naming this PE. However often it was initialized, it is done. */
    fsh_crash_enter("shmem_finalize (at exit)");
    finalize_all("shmem_finalize (at exit)");
    fsh_boot_fini();
}

/* The shm provider of libfabric >= 1.18 maps a peer's region at the first operation to it,
 * not at AV insert, and the peer maps this PE's region when it takes this PE's name: both
 * need the names in /dev/shm, which init removes once it is done. So every PE reads a word of
 * every peer's heap through the provider (never the intra-node path, which would not connect
 * the provider's endpoints) and waits for all, then the barrier: after it every pair is
 * connected both ways. Without this, a pair's first operation after init waits forever for
 * a region that no longer has a name. */
static int connect_named_peers(void)
{
    uint64_t *sink = malloc(sizeof(uint64_t) * (size_t)fsh_rt.npes);
    if (!sink) {
        return fsh_err(-ENOMEM, "", "out of memory connecting to %d peers", fsh_rt.npes);
    }
    struct fsh_op_track sync = {0, 0, 0};
    int rc = 0;
    for (int pe = 0; pe < fsh_rt.npes && rc == 0; pe++) {
        if (pe != fsh_rt.pe) {
            rc = fsh_rma_read(&fsh_ctx_default, &sync, &sink[pe], sizeof(uint64_t), pe,
                              FSH_SEG_HEAP, 0);
        }
    }
    int wrc = fsh_progress_wait_track(&sync, "init: connecting to the peers through shm");
    free(sink);
    return rc ? rc : wrc;
}

static const char *thread_level_name(int level)
{
    switch (level) {
    case SHMEM_THREAD_SINGLE:
        return "SHMEM_THREAD_SINGLE";
    case SHMEM_THREAD_FUNNELED:
        return "SHMEM_THREAD_FUNNELED";
    case SHMEM_THREAD_SERIALIZED:
        return "SHMEM_THREAD_SERIALIZED";
    case SHMEM_THREAD_MULTIPLE:
        return "SHMEM_THREAD_MULTIPLE";
    default:
        return "an unknown thread level";
    }
}

/* ------------------------------------------------------------------ start-up as phases
 * What the phases share: shmem_init's arguments and what one phase finds for a later one. */
static struct start {
    const char *fn;
    int requested;
    int *provided;
    const struct fsh_config *cfg;
    struct fsh_boot_info boot;
    double timeout;
    bool chaos_reorder, chaos_delay;
    uint64_t seed;
    void *data_base;
    size_t data_len;
    bool all_mapped;
} startup;

/* Environment, log level, bootstrap (PMIx or singleton) and the checks that need the PE's
 * rank. The bootstrap has no undo: it outlives shmem_finalize (a later shmem_init may need it)
 * and ends with the process (at_exit); the fatal path ends the job through it. A bad log level
 * or heap size ends the job here, before anything needs undoing. */
static int start_pmix(struct start *s)
{
    int rc = fsh_env_load();
    if (rc != 0) {
        return rc;
    }
    s->cfg = fsh_env();
    const struct fsh_config *cfg = s->cfg;
    int level = fsh_log_parse_level(cfg->FABSHMEM_LOG);
    if (level < 0) {
        fsh_init_fatal(s->fn, "use error, warn, info, debug or trace", "FABSHMEM_LOG='%s' is not a level",
                       cfg->FABSHMEM_LOG);
    }
    if (cfg->SHMEM_DEBUG && level < FSH_LOG_DEBUG) {
        level = FSH_LOG_DEBUG;
    }
    fsh_rt.log_level = level;
    fsh_rt.checks = cfg->FABSHMEM_CHECK || cfg->SHMEM_DEBUG;
    fsh_rt.state = FSH_STATE_INIT;

    struct fsh_boot_info *boot = &s->boot;
    fsh_boot_set_lost(launcher_lost);
    rc = fsh_boot_init(boot);
    if (rc != 0) {
        return rc;
    }
    fsh_rt.pe = boot->rank;
    fsh_rt.npes = boot->size;
    fsh_rt.local_rank = boot->local_rank;
    fsh_rt.local_size = boot->local_size;
    fsh_rt.node_id = boot->node_id;
    fsh_rt.num_nodes = boot->num_nodes;
    fsh_rt.singleton = boot->singleton;
    fsh_rt.oversubscribed = boot->local_size > cores_online();
    rc = fsh_init_info_rival();
    if (rc != 0) {
        return rc;
    }
    if (fsh_rt.pe == 0) {
        fsh_env_warn_unknown();
    }
    if (cfg->SHMEM_SYMMETRIC_SIZE < 4096) {
        fsh_init_fatal(s->fn, "use at least 4K, e.g. SHMEM_SYMMETRIC_SIZE=512M",
                       "SHMEM_SYMMETRIC_SIZE=%zu is too small", cfg->SHMEM_SYMMETRIC_SIZE);
    }
    return 0;
}

static int start_topology(struct start *s)
{
    s->timeout = s->cfg->FABSHMEM_TIMEOUT;
    parse_chaos(&s->chaos_reorder, &s->chaos_delay);
    s->seed = (uint64_t)s->cfg->FABSHMEM_CHAOS_SEED * 1000003u + (uint64_t)fsh_rt.pe;
    return topology_setup(s->cfg, &s->boot, s->timeout);
}

/* The intra-node mode (local.c, ended by fsh_local_fini after the stops, in finalize_all), then
 * a provider on this PE's NICs, or none. */
static int start_fabric(struct start *s)
{
    const struct fsh_topo_pe *place = fsh_topo_mine();
    struct fsh_fabric_nic nic = {.forced = fsh_topo_nic_forced()};
    for (int i = 0; place && i < place->nnics && nic.count < FSH_MAX_RAILS; i++) {
        nic.names[nic.count++] = place->nics[i];
    }
    /* Before the fabric: libfabric's shm provider installs handlers of its own that clean up
     * and then chain to the handler they found, which must be ours. Installed after it, ours
     * would see a handler that is not SIG_DFL and stand back (the application's rule). */
    install_terminate_handlers();
    enum fsh_intranode mode;
    bool want_fabric;
    int rc = intranode_setup(s->cfg, &s->boot, &mode);
    if (rc == 0) {
        rc = fabric_wanted(s->cfg, mode, &want_fabric);
    }
    if (rc == 0 && want_fabric) {
        /* Threads that post to contexts' own endpoints at once need a thread-safe domain. */
        fsh_fabric_want_threads(s->requested >= SHMEM_THREAD_MULTIPLE &&
                                s->cfg->FABSHMEM_CTX_ENDPOINTS != 0);
        rc = fsh_fabric_open(s->cfg, &s->boot, &nic);
    } else if (rc == 0) {
        fsh_fabric_open_none(&s->boot);
    }
    return rc;
}

static int start_engine(struct start *s)
{
    struct fsh_progress_config pc = {
        .depth = fsh_fabric_attr()->tx_depth,
        .yield = want_yield(),
        .spin = (double)s->cfg->FABSHMEM_SPIN_US * 1e-6,
        .poll_gap_ns = s->cfg->FABSHMEM_POLL_GAP_NS,
        .timeout = s->timeout,
        .user_timeout = s->cfg->FABSHMEM_WAIT_TIMEOUT,
        .chaos_delay = s->chaos_delay,
        .seed = s->seed,
    };
    int rc = fsh_progress_init(&pc);
    if (rc == 0) {
        rc = fsh_xport_init(s->chaos_reorder);
    }
    if (rc == 0) {
        rc = fsh_mr_init(s->boot.size);
    }
    return rc;
}

static void stop_engine(void)
{
    fsh_mr_fini();
    fsh_xport_fini();
    fsh_progress_fini();
}

/* The heap (a memfd when PEs share the node) and data+bss moved onto a memfd. The heap is
 * unmapped after the stops (finalize_all): after fsh_local_fini, which closes its memfd. */
static int start_segments(struct start *s)
{
    lifetime.heap_size = (s->cfg->SHMEM_SYMMETRIC_SIZE + 4095) & ~(size_t)4095;
    fsh_mr_find_data_segment(&s->data_base, &s->data_len);
    int rc = fsh_mr_check_memlock(lifetime.heap_size + s->data_len);
    if (rc == 0) {
        lifetime.heap_base =
            fsh_heap_map(lifetime.heap_size, fsh_local_heap_fd(lifetime.heap_size));
        rc = lifetime.heap_base ? 0 : fsh_err_last()->code;
    }
    if (rc == 0) {
        fsh_local_share_data(s->data_base, s->data_len);
    }
    return rc;
}

/* Deregistered by fsh_mr_fini (the engine's undo). */
static int start_registration(struct start *s)
{
    int rc = fsh_mr_reg_segment(FSH_SEG_HEAP, lifetime.heap_base, lifetime.heap_size);
    if (rc == 0) {
        rc = fsh_mr_reg_segment(FSH_SEG_DATA, s->data_base, s->data_len);
    }
    return rc;
}

/* Two phases on SHMEM_INFO's line: exchange() marks "exchange" itself, the loop "av_insert". */
static int start_av_insert(struct start *s)
{
    return exchange(s->timeout);
}

static int start_mapping(struct start *s)
{
    int rc = fsh_local_attach(node_of, &s->all_mapped);
    if (rc == 0 && !s->all_mapped && fsh_fabric_none()) {
        rc = fsh_err(-EHOSTUNREACH, "set FABSHMEM_FABRIC=always, so that a peer no PE can map is reached through a provider",
                     "PE %d cannot map the memory of every PE of this node (%s), and a job on "
                     "one node opens no fabric", fsh_rt.pe, fsh_local_unmapped());
    }
    return rc;
}

static int start_liveness(struct start *s)
{
    const struct fsh_config *cfg = s->cfg;
    int rc = fsh_heap_init(lifetime.heap_base, lifetime.heap_size);
    if (rc == 0) {
        rc = fsh_init_info_fits(cfg, lifetime.heap_size);
    }
    if (rc == 0) {
        rc = fsh_live_init(node_of, cfg->FABSHMEM_PROBE_INTERVAL, cfg->FABSHMEM_PROC_REMOTE);
    }
    if (rc == 0) {
        rc = fsh_lock_init(cfg->FABSHMEM_PROBE_INTERVAL);
    }
    if (rc == 0) {
        rc = fsh_amo_init(cfg->FABSHMEM_AMO_PEERS);
    }
    if (rc == 0) {
        rc = fsh_arrive_init(fsh_rma_read_words);
    }
    if (rc == 0) {
        rc = fsh_rma_post_flush_init();
    }
    return rc;
}

/* The arrival counts end with the contexts (fsh_rma_fini, the threads' undo). */
static void stop_liveness(void)
{
    fsh_live_fini();
    fsh_amo_fini();
    fsh_heap_fini();
}

static int start_teams(struct start *s)
{
    long teams = s->cfg->FABSHMEM_MAX_TEAMS;
    int rc = fsh_coll_init(node_of, teams < 0 ? 0 : (unsigned)teams);
    if (rc == 0) {
        rc = agree_amo_domain(s->all_mapped);
    }
    free(node_of);
    node_of = NULL;
    return rc;
}

static int start_signals(struct start *s)
{
    return fsh_signal_init(s->cfg->FABSHMEM_SIGNAL_SLOTS, s->cfg->FABSHMEM_SIGNAL_PEERS);
}

static int start_device(struct start *s)
{
    return device_setup(s->cfg);
}

static void stop_device(void)
{
    fsh_backend_set(NULL);
    fsh_dev_fini();
}

static int start_threads(struct start *s)
{
    fsh_init_info_footprint(s->cfg);
    /* Every level is provided: the engine lock makes concurrent calls safe. */
    int requested = s->requested;
    fsh_rt.thread_level = requested > SHMEM_THREAD_MULTIPLE ? SHMEM_THREAD_MULTIPLE : requested;
    if (fsh_rt.thread_level < SHMEM_THREAD_SINGLE) {
        fsh_rt.thread_level = SHMEM_THREAD_SINGLE;
    }
    if (fsh_rt.thread_level >= SHMEM_THREAD_SERIALIZED) {
        /* SERIALIZED: calls from different threads, never at once, but the progress thread
         * may still run beside them; MULTIPLE: calls at once. */
        fsh_progress_enable_locking();
    }
    if (fsh_rt.thread_level == SHMEM_THREAD_MULTIPLE) {
        fsh_progress_stop_counting_writes();
    }
    return want_progress_thread() ? fsh_progress_thread_start(s->cfg->FABSHMEM_PROGRESS_INTERVAL) : 0;
}

static int start_proxy(struct start *s)
{
    return fsh_proxy_init(s->cfg);
}

/* The progress thread, then the contexts: the RMA layer has no start-up step of its own (its
 * contexts, lanes and sessions are made by use, from the exchange on) and ends first, once no
 * thread of the library runs, before anything it posts through. */
static void stop_threads(void)
{
    fsh_progress_thread_stop();
    fsh_rma_fini();
}

/* The library is up from here: provided, the nesting count, RUNNING published, the implicit
 * finalize at exit, then what SHMEM_VERSION and SHMEM_INFO print. */
static int start_info(struct start *s)
{
    const struct fsh_config *cfg = s->cfg;
    if (s->provided) {
        *s->provided = fsh_rt.thread_level;
    }
    __atomic_store_n(&lifetime.depth, 1, __ATOMIC_RELEASE);
    fsh_rt.state = FSH_STATE_RUNNING;
    fsh_live_publish(FSH_LIVE_RUNNING, 0);
    if (!lifetime.atexit_done) {
        on_exit(at_exit, NULL);
        lifetime.atexit_done = 1;
    }
    if (fsh_rt.pe == 0 && cfg->SHMEM_VERSION) {
        printf("fabshmem: %s, OpenSHMEM %d.%d\n", SHMEM_VENDOR_STRING, SHMEM_MAJOR_VERSION,
               SHMEM_MINOR_VERSION);
        fflush(stdout);
    }
    if (fsh_rt.pe == 0 && cfg->SHMEM_INFO) {
        fsh_init_info_print(cfg, lifetime.heap_base, lifetime.heap_size);
    }
    if (cfg->SHMEM_INFO) {
        fsh_init_info_place();
    }
    return 0;
}

/* Nobody may target a peer before its endpoint is in every AV: the exchange fence already
 * ordered that. The barrier also proves the fabric path works end to end, and comes after
 * every PE connected to every peer (connect_named_peers). */
static int start_connect(struct start *s)
{
    (void)s;
    return fsh_fabric_named_regions() ? connect_named_peers() : 0;
}

static int start_barrier(struct start *s)
{
    (void)s;
    int rc = fsh_coll_barrier_all();
    if (rc == 0) {
        /* Every PE connected to every peer through the provider (connect_named_peers) and
         * passed its intra-node attach: from here on nothing of the job needs a name in
         * /dev/shm, so no crash can leave one behind. */
        fsh_fabric_unlink_shared();
        fsh_fabric_names_gone();
    }
    return rc;
}

/* Start-up, in order; each phase's time is what SHMEM_INFO prints under its name. stop undoes
 * start (NULL: nothing of its own to undo, or undone by an earlier phase's stop, as said at
 * its start function); finalize runs the stops in reverse, and so does a failed start-up for
 * the phases it finished. Steps outside the table: the fork and crash handlers around it,
 * finalize's collective steps before it (finalize_all), the intra-node layer and the heap's
 * unmapping after it (finalize_all). */
static const struct {
    const char *name;
    int (*start)(struct start *s);
    void (*stop)(void);
} phases[] = {
    {"pmix", start_pmix, NULL},
    {"topology", start_topology, fsh_topo_fini},
    {"fabric", start_fabric, fsh_fabric_close},
    {"engine", start_engine, stop_engine},
    {"segments", start_segments, NULL},
    {"registration", start_registration, NULL},
    {"av_insert", start_av_insert, NULL},
    {"mapping", start_mapping, NULL},
    {"liveness", start_liveness, stop_liveness},
    {"teams", start_teams, fsh_coll_fini},
    {"signals", start_signals, fsh_signal_fini},
    {"device", start_device, stop_device},
    {"threads", start_threads, stop_threads},
    {"proxy", start_proxy, fsh_proxy_fini}, /* device API: started by its first handle */
    {"info", start_info, NULL},
    {"connect", start_connect, NULL},
    {"barrier", start_barrier, NULL},
};
#define NPHASES ((int)(sizeof(phases) / sizeof(phases[0])))

/* Undoes every phase, last first (finalize). */
static void stop_phases(void)
{
    for (int i = NPHASES - 1; i >= 0; i--) {
        if (phases[i].stop) {
            phases[i].stop();
        }
    }
}

/* A repeated init (OpenSHMEM 1.6): each call needs its own finalize and only the last
 * finalize ends the library. The thread level stays the one the first call chose (the
 * engine's locking was set up for it): provided says so, as the spec lets provided be lower
 * than requested, and a program that asks for more is told. */
static void init_nested(const char *fn, int requested, int *provided)
{
    __atomic_add_fetch(&lifetime.depth, 1, __ATOMIC_ACQ_REL);
    if (provided) {
        *provided = fsh_rt.thread_level;
    }
    if (requested > fsh_rt.thread_level) {
        FSH_WARN("%s(%s) while initialized at %s: the level stays %s (the first "
                 "initialization's); ask for the level in the first call",
                 fn, thread_level_name(requested), thread_level_name(fsh_rt.thread_level),
                 thread_level_name(fsh_rt.thread_level));
    }
}

void fsh_init_run(const char *fn, int requested, int *provided)
{
    identify();
    if (fsh_rt.state == FSH_STATE_RUNNING) {
        init_nested(fn, requested, provided);
        return;
    }
    if (fsh_rt.forked) {
        fsh_init_fatal(fn, "initialize in the PE itself; a child made by fork() may only exec or compute without OpenSHMEM",
                       "called in a child forked from a PE: it is no PE of the job");
    }
    fsh_crash_enter(fn);
    fsh_crash_install();
    memset(&startup, 0, sizeof(startup));
    startup.fn = fn;
    startup.requested = requested;
    startup.provided = provided;
    fsh_init_info_phase(NULL);
    for (int i = 0; i < NPHASES; i++) {
        int rc = phases[i].start(&startup);
        fsh_init_info_phase(phases[i].name);
        if (rc != 0) {
            /* The job ends naming the cause, undoing nothing: the process ends at once (the
             * kernel takes back memory and endpoints, end_job removes the shared names), and
             * an undo could wait on peers or record a cause of its own over this one. */
            fsh_init_fatal_err(fn, rc);
        }
    }
    char times[512];
    fsh_init_info_phases(times, sizeof(times));
    if (fsh_rt.pe == 0 && startup.cfg->SHMEM_INFO) {
        printf("  init: %s (PE 0)\n", times);
        fflush(stdout);
    }
    /* Every PE's own, for a slow PE that PE 0's line does not show. */
    FSH_DEBUG("init: %s", times);
    FSH_DEBUG("initialized: PE %d of %d, local %d of %d", fsh_rt.pe, fsh_rt.npes,
              fsh_rt.local_rank, fsh_rt.local_size);
}

static void progress_once(void)
{
    (void)fsh_progress_poll();
}

static void (*finalize_hook)(void);

void fsh_init_on_finalize(void (*fn)(void))
{
    finalize_hook = fn;
}

/* The finalize that ends the library (the last shmem_finalize, or the implicit one at exit). */
static void finalize_all(const char *fn)
{
    if (fsh_rt.state != FSH_STATE_RUNNING) {
        return;
    }
    if (finalize_hook) {
        finalize_hook(); /* a thread of a module above (stream calls) stops issuing first */
    }
    __atomic_store_n(&lifetime.depth, 0, __ATOMIC_RELEASE);
    /* The device API's proxy completes what it took and stops before finalize's steps (its
     * idle wait probes peers through what fsh_live_stop takes away). */
    fsh_proxy_fini();
    /* Everything this PE issued completes before it says it is in finalize (a peer seeing
     * that has all of it), every PE gets here (on finalize's own slot: a peer still in a
     * barrier is not released by it), and our own notifications are delivered (quiet again)
     * before the endpoint closes. While waiting in the final fence the CQ keeps being read: a
     * peer may still need us to progress its last operations (manual progress). */
    int rc = fsh_rma_quiet_all();
    if (rc == 0) {
        fsh_live_publish(FSH_LIVE_FINALIZE, 0);
        rc = fsh_coll_finalize_sync();
    }
    if (rc == 0) {
        fsh_live_stop();
        rc = fsh_rma_quiet_all();
    }
    if (rc == 0) {
        rc = fsh_boot_fence(fsh_env()->FABSHMEM_TIMEOUT, progress_once);
    }
    if (rc != 0) {
        fsh_init_fatal_err(fn, rc);
    }
    fsh_rt.state = FSH_STATE_FINALIZED;
    stop_phases();
    /* Not in the table: the intra-node layer starts inside the fabric phase but ends after
     * the topology (its peers' mappings outlive every module that reads them), and the heap,
     * mapped by the segments phase, is unmapped once local.c has closed its memfd. */
    fsh_local_fini();
    fsh_heap_unmap(lifetime.heap_base, lifetime.heap_size);
    lifetime.heap_base = NULL;
    fsh_crash_remove();
}

void fsh_init_finalize(const char *fn)
{
    if (fsh_rt.state != FSH_STATE_RUNNING) {
        return;
    }
    if (__atomic_sub_fetch(&lifetime.depth, 1, __ATOMIC_ACQ_REL) > 0) {
        /* A nested finalize: the library stays up for the initializations still open. What
         * this PE issued completes (the local half of finalize), with no collective step: the
         * PEs need not nest alike. */
        int rc = fsh_rma_quiet_all();
        if (rc != 0) {
            fsh_init_fatal_err(fn, rc);
        }
        return;
    }
    finalize_all(fn);
}

void fsh_init_global_exit(int status)
{
    fflush(stdout);
    fflush(stderr);
    char msg[64];
    snprintf(msg, sizeof(msg), "shmem_global_exit(%d) called by PE %d", status, fsh_rt.pe);
    fsh_rt.state = FSH_STATE_FINALIZED; /* no implicit finalize at exit */
    fsh_fabric_unlink_shared();
    fsh_boot_abort(status, msg);
}
