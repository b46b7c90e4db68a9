/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabshmem_info.c: the fabshmem-info program — what fabshmem would use on this node, and why.
 *
 * Prints the libfabric providers with the capabilities fabshmem needs, then the map of every
 * local rank to its GPU, NIC(s), cores and NUMA node (like `nvidia-smi topo -m`), computed by
 * the runtime's own topology module, so what it shows is what shmem_init does. --xml runs it on
 * a stored topology; --doctor adds the checks for the misconfigurations users hit most, one
 * `doctor: OK|WARN` line each with cause and fix. It is a tool, not the runtime: it calls
 * libfabric directly, and never opens an endpoint or registers memory.
 */
#include <errno.h>
#include <getopt.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cuda.h"
#include "devmem.h"
#include "env.h"
#include "error.h"
#include "fabric.h"
#include "mr.h"
#include "topology.h"

#define RMA_CAPS (FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)

struct prov {
    const char *name;
    bool usable;      /* RDM with RMA */
    bool atomics, hmem;
    size_t cq_data, inject;
    char domains[256];
    char why[96];
};

/* The runtime's candidates (fsh_fabric_default_order), probed once. */
static struct prov provs[8];
static size_t nprovs;

/* Everything EFA may demand, plus device memory: what a GPU job's registrations need. */
#define MR_OFFER (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_HMEM)

static int getinfo(const char *prov, uint64_t caps, struct fi_info **out)
{
    return fsh_fabric_getinfo(prov, NULL, MR_OFFER, caps, 0, out);
}

static void probe(struct prov *p)
{
    struct fi_info *list = NULL;
    int rc = getinfo(p->name, RMA_CAPS, &list);
    if (rc != 0) {
        snprintf(p->why, sizeof(p->why), "%s", fi_strerror(-rc));
        return;
    }
    p->usable = true;
    p->cq_data = list->domain_attr->cq_data_size;
    p->inject = list->tx_attr->inject_size;
    size_t used = 0;
    for (struct fi_info *i = list; i; i = i->next) {
        const char *d = i->domain_attr->name;
        if (!strstr(p->domains, d) && used < sizeof(p->domains)) {
            used += (size_t)snprintf(p->domains + used, sizeof(p->domains) - used, "%s%s",
                                     used ? "," : "", d);
        }
    }
    fi_freeinfo(list);
    struct fi_info *x = NULL;
    p->atomics = getinfo(p->name, RMA_CAPS | FI_ATOMIC, &x) == 0;
    fi_freeinfo(x);
    x = NULL;
    p->hmem = getinfo(p->name, RMA_CAPS | FI_HMEM, &x) == 0;
    fi_freeinfo(x);
}

static void print_providers(void)
{
    printf("libfabric %u.%u providers in the order fabshmem tries them (FI_EP_RDM with RMA; "
           "fabshmem needs 4 bytes of immediate data, uses atomics and FI_HMEM when offered; "
           "efa-direct is the efa provider's lean fabric, libfabric >= 2.0):\n",
           FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
    size_t n;
    const char *const *order = fsh_fabric_default_order(&n);
    for (nprovs = 0; nprovs < n && nprovs < sizeof(provs) / sizeof(provs[0]); nprovs++) {
        provs[nprovs].name = order[nprovs];
    }
    for (size_t i = 0; i < nprovs; i++) {
        struct prov *p = &provs[i];
        probe(p);
        if (!p->usable) {
            printf("  %-14s no   (%s)\n", p->name, p->why);
            continue;
        }
        printf("  %-14s yes  domains %s; atomics %s, FI_HMEM %s, immediate data %zu, inject %zu\n",
               p->name, p->domains, p->atomics ? "yes" : "no", p->hmem ? "yes" : "no",
               p->cq_data, p->inject);
    }
    printf("  (a job whose PEs all run on one node and map each other's memory opens none of "
           "them: FABSHMEM_FABRIC)\n");
}

static void print_machine(const struct fsh_topo_machine *m)
{
    printf("topology of %s: %d GPU(s), %d %s NIC(s), %d NUMA node(s)\n", m->source, m->ngpus,
           m->nnics, m->nnics && !m->nics[0].rdma ? "network (no RDMA device)" : "RDMA",
           m->nnuma);
    for (int i = 0; i < m->ngpus; i++) {
        const struct fsh_topo_gpu *g = &m->gpus[i];
        printf("  GPU%-3d %s  %04x:%04x  %-12s NUMA %d\n", i, g->busid, g->vendor, g->device,
               g->osdev[0] ? g->osdev : "-", g->numa >= 0 ? (int)m->numa[g->numa].os_index : -1);
    }
    for (int i = 0; i < m->nnics; i++) {
        const struct fsh_topo_nic *x = &m->nics[i];
        printf("  NIC%-3d %-12s %s  %04x:%04x  NUMA %d%s%s%s\n", i, x->name,
               x->busid[0] ? x->busid : "-", x->vendor, x->device,
               x->numa >= 0 ? (int)m->numa[x->numa].os_index : -1, x->efa ? "  EFA" : "",
               x->netdev[0] ? "  netdev " : "", x->netdev);
    }
}

static void print_map(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pes, int n)
{
    long cap = fsh_env()->FABSHMEM_RAILS > 0 ? fsh_env()->FABSHMEM_RAILS : FSH_MAX_RAILS;
    printf("map for %d local rank(s) (a rank opens a rail on each of its first %ld NIC(s) where "
           "the provider's domains are NICs: efa, verbs, or any named by FABSHMEM_NIC):\n", n,
           cap);
    printf("  %-5s %-18s %-48s %-14s %-20s %s\n", "rank", "GPU", "NIC(s)", "via", "cores",
           "NUMA");
    for (int r = 0; r < n; r++) {
        const struct fsh_topo_pe *pe = &pes[r];
        char gpu[40], nics[512], cores[256], numa[16];
        if (pe->gpu >= 0) {
            snprintf(gpu, sizeof(gpu), "%d %s", pe->gpu, m->gpus[pe->gpu].busid);
        } else {
            snprintf(gpu, sizeof(gpu), "-");
        }
        size_t used = 0;
        snprintf(nics, sizeof(nics), "-");
        for (int i = 0; i < pe->nnics && used < sizeof(nics); i++) {
            used += (size_t)snprintf(nics + used, sizeof(nics) - used, "%s%s", i ? "," : "",
                                     pe->nics[i]);
        }
        long rails = pe->nnics < cap ? pe->nnics : cap;
        if (rails > 1 && used < sizeof(nics)) {
            snprintf(nics + used, sizeof(nics) - used, " (%ld rails)", rails);
        }
        fsh_topo_cores_str(m, pe, cores, sizeof(cores));
        snprintf(numa, sizeof(numa), "-");
        if (pe->numa >= 0) {
            snprintf(numa, sizeof(numa), "%u", m->numa[pe->numa].os_index);
        }
        printf("  %-5d %-18s %-48s %-14s %-20s %s\n", r, gpu, nics, fsh_topo_via_name(pe->via),
               cores, numa);
    }
}

/* ------------------------------------------------------------------ doctor */

static int nwarn;

static void ok(const char *fmt, const char *arg)
{
    printf("doctor: OK   ");
    printf(fmt, arg);
    printf("\n");
}

static void warn(const char *what, const char *fix)
{
    nwarn++;
    printf("doctor: WARN %s\n        fix: %s\n", what, fix);
}

/* Two GPUs on one NIC while another NIC carries nothing. */
static void check_sharing(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pes, int n)
{
    if (m->nnics < 2 || m->ngpus < 2) {
        ok("%s", "GPU/NIC sharing: fewer than two GPUs or NICs, nothing to spread");
        return;
    }
    int *gpus_on = calloc((size_t)m->nnics * (size_t)m->ngpus, sizeof(int));
    int used_gpus = 0;
    int *gpu_seen = calloc((size_t)m->ngpus, sizeof(int));
    if (!gpus_on || !gpu_seen) {
        free(gpus_on);
        free(gpu_seen);
        return;
    }
    for (int r = 0; r < n; r++) {
        int g = pes[r].gpu, x = pes[r].nnics ? pes[r].nic_index[0] : -1;
        if (g >= 0 && !gpu_seen[g]++) {
            used_gpus++;
        }
        if (g >= 0 && x >= 0) {
            gpus_on[x * m->ngpus + g] = 1;
        }
    }
    int crowded = -1, idle = -1;
    for (int x = 0; x < m->nnics; x++) {
        int k = 0;
        for (int g = 0; g < m->ngpus; g++) {
            k += gpus_on[x * m->ngpus + g];
        }
        if (k >= 2 && crowded < 0) {
            crowded = x;
        }
        if (k == 0 && idle < 0) {
            idle = x;
        }
    }
    if (crowded >= 0 && idle >= 0 && used_gpus <= m->nnics) {
        char what[256];
        snprintf(what, sizeof(what),
                 "two or more GPUs send through %s while %s carries none (%d GPUs in use, %d NICs)",
                 m->nics[crowded].name, m->nics[idle].name, used_gpus, m->nnics);
        warn(what, "give the PEs GPUs under different PCIe switches (CUDA_VISIBLE_DEVICES or "
                   "FABSHMEM_GPU), or unset FABSHMEM_NIC / FABSHMEM_NIC_POLICY so each GPU "
                   "takes its nearest NIC");
    } else {
        ok("%s", "GPU/NIC sharing: no NIC is shared by GPUs while another one is idle");
    }
    free(gpus_on);
    free(gpu_seen);
}

/* A PE whose cores (or this process's binding) are on another NUMA node than its NIC. */
static void check_binding(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pes, int n)
{
    int far = 0, first = -1;
    for (int r = 0; r < n; r++) {
        int x = pes[r].nnics ? pes[r].nic_index[0] : -1;
        hwloc_bitmap_t set = fsh_topo_cpuset(m, &pes[r]);
        if (x >= 0 && set && m->nics[x].numa >= 0 &&
            !hwloc_bitmap_intersects(set, m->numa[m->nics[x].numa].cpuset)) {
            far++;
            first = first < 0 ? r : first;
        }
        hwloc_bitmap_free(set);
    }
    if (m->this_system && n > 0 && pes[0].nnics && pes[0].nic_index[0] >= 0) {
        /* Run under a launcher (or taskset), this process shows the binding PEs would get. */
        hwloc_bitmap_t cur = hwloc_bitmap_alloc();
        const struct fsh_topo_nic *x = &m->nics[pes[0].nic_index[0]];
        if (cur && hwloc_get_cpubind(m->topo, cur, HWLOC_CPUBIND_PROCESS) == 0 &&
            !hwloc_bitmap_isincluded(hwloc_topology_get_allowed_cpuset(m->topo), cur) &&
            x->numa >= 0 && !hwloc_bitmap_intersects(cur, m->numa[x->numa].cpuset)) {
            far++;
            first = first < 0 ? 0 : first;
        }
        hwloc_bitmap_free(cur);
    }
    if (far) {
        char what[256];
        snprintf(what, sizeof(what),
                 "%d rank(s) bound to cores on another NUMA node than their NIC (first: rank %d, "
                 "NIC %s)", far, first, pes[first].nics[0]);
        warn(what, "let fabshmem bind (FABSHMEM_BIND=auto, mpirun --bind-to none) or bind by "
                   "NUMA node (mpirun --map-by numa); a forced FABSHMEM_NIC should be near the "
                   "PE's GPU");
    } else {
        ok("%s", "binding: every bound rank runs on its NIC's NUMA node");
    }
}

static const char *chosen_provider(const struct fsh_config *cfg)
{
    const char *forced = cfg->FABSHMEM_PROVIDER[0] ? cfg->FABSHMEM_PROVIDER : cfg->FI_PROVIDER;
    if (forced[0]) {
        return forced;
    }
    /* The runtime's order for a job spanning nodes (shm serves only single-node jobs). */
    for (size_t i = 0; i < nprovs; i++) {
        if (provs[i].usable && strcmp(provs[i].name, "shm") != 0) {
            return provs[i].name;
        }
    }
    return "none";
}

/* The candidate named name, or name;utility (efa-direct is not efa). */
static const struct prov *find_prov(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < nprovs; i++) {
        if (strncmp(provs[i].name, name, n) == 0 &&
            (provs[i].name[n] == '\0' || provs[i].name[n] == ';')) {
            return &provs[i];
        }
    }
    return NULL;
}

static void check_provider(const struct fsh_config *cfg, const struct fsh_topo_machine *m)
{
    int nefa = 0;
    for (int i = 0; i < m->nnics; i++) {
        nefa += m->nics[i].efa;
    }
    const char *chosen = chosen_provider(cfg);
    if (nefa == 0) {
        ok("provider: no EFA device in the topology; a multi-node job uses %s", chosen);
    } else if (strncmp(chosen, "efa", 3) != 0) {
        char what[256];
        snprintf(what, sizeof(what),
                 "%d EFA device(s) in the topology but a multi-node job would use %s%s", nefa,
                 chosen, find_prov("efa") && find_prov("efa")->usable
                             ? "" : " (the efa provider is not usable here)");
        warn(what, "install the EFA driver and a libfabric with the efa provider "
                   "(aws-efa-installer; check with fi_info -p efa), and unset FI_PROVIDER / "
                   "FABSHMEM_PROVIDER");
    } else {
        ok("provider: %s on the EFA devices", chosen);
    }
    const struct prov *p = find_prov(chosen);
    if (m->ngpus == 0) {
        ok("%s", "FI_HMEM: no GPU, device memory support not needed");
    } else if (!p || !p->hmem) {
        char what[160];
        snprintf(what, sizeof(what),
                 "%d GPU(s) but provider %s offers no FI_HMEM: GPU buffers cannot be sent "
                 "directly", m->ngpus, chosen);
        warn(what, "use a libfabric built with CUDA support (--with-cuda; the AWS EFA installer's "
                   "is) and the efa provider");
    } else {
        ok("FI_HMEM: provider %s supports device memory", chosen);
    }
}

/* The device heap: can this host load CUDA, and how would peers' GPU memory be reached? */
static void check_device(const struct fsh_config *cfg, const struct fsh_topo_machine *m)
{
    const char *chosen = cfg->FABSHMEM_PROVIDER[0] ? cfg->FABSHMEM_PROVIDER : NULL;
    const struct prov *p = NULL;
    for (size_t i = 0; i < nprovs && !p; i++) {
        if (provs[i].usable && (!chosen || strcmp(provs[i].name, chosen) == 0)) {
            p = &provs[i];
        }
    }
    bool gpu = fsh_cuda_open(cfg->FABSHMEM_CUDA_LIB, NULL, 0) == 0;
    char line[1024], why[512];
    int want = -1;
    if (fsh_dev_parse_path(cfg->FABSHMEM_DEVICE_PATH, &want) != 0) {
        warn(fsh_err_last()->msg, fsh_err_last()->fix);
    }
    /* Would the driver export GPU memory as a dmabuf? Try on a small allocation. */
    bool exportable = false;
    void *probe = gpu ? fsh_cuda_alloc((size_t)2 << 20) : NULL;
    int fd = -1;
    if (probe && fsh_cuda_dmabuf_fd(probe, (size_t)2 << 20, &fd) == 0) {
        exportable = true;
        close(fd);
    }
    fsh_cuda_free(probe);
    /* Whether remote addresses are offsets (no FI_MR_VIRT_ADDR) is settled only when the
     * domain opens; it matters only to shm/tcp, whose plain modes use virtual addresses. */
    struct fsh_dev_prov f = {p ? p->name : NULL, p && p->hmem, true};
    const char *path = fsh_dev_path(want, &f, exportable, why, sizeof(why));
    if (!gpu && m->ngpus == 0) {
        ok("device heap: %s (FABSHMEM_DEVICE_HEAP_SIZE stays off)", fsh_cuda_reason());
    } else if (!gpu) {
        snprintf(line, sizeof(line), "the topology shows %d GPU(s) but %s", m->ngpus,
                 fsh_cuda_reason());
        warn(line, "install the NVIDIA driver (libcuda.so.1), or name it with FABSHMEM_CUDA_LIB");
    } else if (!path) {
        snprintf(line, sizeof(line), "device heap on %s: FABSHMEM_DEVICE_PATH=%s is not possible "
                 "with provider %s (%s)", fsh_cuda_reason(), cfg->FABSHMEM_DEVICE_PATH,
                 p ? p->name : "-", why);
        warn(line, "FABSHMEM_DEVICE_PATH=auto takes the best path available");
    } else if (strcmp(path, "staging") == 0 && want < 0) {
        snprintf(line, sizeof(line), "device heap on %s: path staging with provider %s (%s): RMA "
                 "to peers' GPU memory is bounced through host memory", fsh_cuda_reason(),
                 p ? p->name : "-", why);
        warn(line, "a libfabric built with CUDA support (the AWS EFA installer's) lets the NIC "
                   "reach GPU memory directly (cuda path; dmabuf with libfabric >= 1.20)");
    } else {
        /* Listing FI_HMEM is not registering GPU memory (Debian's shm lists it without CUDA
         * support): shmem_init tries, and says the outcome. */
        snprintf(line, sizeof(line), "device heap on %s: path %s with provider %s%s%s%s%s",
                 fsh_cuda_reason(), path, p ? p->name : "-", why[0] ? " (passed over: " : "",
                 why, why[0] ? ")" : "",
                 strcmp(path, "staging") ? " if the provider registers GPU memory (else staging; "
                                           "SHMEM_INFO=1 shows the outcome)" : "");
        ok("%s", line);
    }
    fsh_cuda_close();
}

static void check_memlock(const struct fsh_config *cfg)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
        ok("%s", "memlock: unlimited");
        return;
    }
    char what[256];
    snprintf(what, sizeof(what), "memlock limit %llu KiB, below the %zu MiB symmetric heap that "
             "EFA and verbs must register", (unsigned long long)rl.rlim_cur / 1024,
             cfg->SHMEM_SYMMETRIC_SIZE >> 20);
    if (rl.rlim_cur >= cfg->SHMEM_SYMMETRIC_SIZE) {
        ok("%s", "memlock: above the symmetric heap size");
    } else if (fsh_mr_has_ipc_lock()) {
        ok("%s", "memlock: limited, but this process holds CAP_IPC_LOCK (root), which lifts it; "
                 "other users need ulimit -l unlimited");
    } else {
        warn(what, "ulimit -l unlimited (memlock in /etc/security/limits.conf, or "
                   "LimitMEMLOCK=infinity for a service), or lower SHMEM_SYMMETRIC_SIZE");
    }
}

static bool truthy(const char *v)
{
    return v[0] && strcmp(v, "0") != 0;
}

static void check_hugepages(const struct fsh_config *cfg)
{
    char thp[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(thp, sizeof(thp), f)) {
            thp[0] = '\0';
        }
        fclose(f);
    }
    long huge = 0;
    f = fopen("/proc/meminfo", "r");
    char line[128];
    while (f && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "HugePages_Total: %ld", &huge) == 1) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    bool hugepages = huge > 0 || strstr(thp, "[always]") != NULL;
    bool fork_safe = truthy(cfg->RDMAV_FORK_SAFE) || truthy(cfg->FI_EFA_FORK_SAFE);
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) == 0) {
        sscanf(u.release, "%d.%d", &major, &minor);
    }
    bool cow_kernel = major > 5 || (major == 5 && minor >= 13);
    if (fork_safe && hugepages && !truthy(cfg->RDMAV_HUGEPAGES_SAFE)) {
        warn("fork protection is on (RDMAV_FORK_SAFE / FI_EFA_FORK_SAFE) and huge pages are in "
             "use, without RDMAV_HUGEPAGES_SAFE: registering huge-page memory can fail or a "
             "forked child can corrupt it",
             "export RDMAV_HUGEPAGES_SAFE=1, or drop the fork protection (kernels >= 5.13 keep "
             "registered memory safe across fork by themselves)");
    } else if (!fork_safe && hugepages && !cow_kernel) {
        warn("huge pages on a kernel older than 5.13 without fork protection: a fork() after "
             "registration (system(), popen()) can corrupt registered memory",
             "export FI_EFA_FORK_SAFE=1 RDMAV_HUGEPAGES_SAFE=1, or avoid fork in the application");
    } else {
        ok("huge pages / fork: %s", hugepages ? "huge pages in use, fork is safe here"
                                              : "no huge pages in use");
    }
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fabshmem-info [--xml FILE] [--local-size N] [--doctor] [--help]\n"
            "  Prints the libfabric providers fabshmem can use and, for every local rank, the\n"
            "  GPU, NIC(s), cores and NUMA node it gets (FABSHMEM_NIC, FABSHMEM_NIC_POLICY,\n"
            "  FABSHMEM_GPU and CUDA_VISIBLE_DEVICES apply as in shmem_init).\n"
            "  --xml FILE      use a stored hwloc XML topology (lstopo --whole-io FILE.xml)\n"
            "  --local-size N  the map for N PEs on the node (default: the visible GPUs, or 1)\n"
            "  --doctor        check the common misconfigurations; exit 1 when one is found\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"xml", required_argument, NULL, 'x'},
                                         {"local-size", required_argument, NULL, 'n'},
                                         {"doctor", no_argument, NULL, 'd'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *xml = NULL;
    int local_size = 0, doctor = 0, c;
    while ((c = getopt_long(argc, argv, "x:n:dh", opts, NULL)) != -1) {
        switch (c) {
        case 'x': xml = optarg; break;
        case 'n': local_size = atoi(optarg); break;
        case 'd': doctor = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc || (local_size <= 0 && local_size != 0)) {
        usage(stderr);
        return 2;
    }
    if (fsh_env_load() != 0) {
        fprintf(stderr, "fabshmem-info: %s\nfabshmem-info: fix: %s\n", fsh_err_last()->msg,
                fsh_err_last()->fix);
        return 2;
    }
    const struct fsh_config *cfg = fsh_env();
    const char *var = "--xml";
    if (!xml) {
        var = cfg->FABSHMEM_TOPOLOGY_XML[0] ? "FABSHMEM_TOPOLOGY_XML" : "HWLOC_XMLFILE";
        xml = cfg->FABSHMEM_TOPOLOGY_XML[0] ? cfg->FABSHMEM_TOPOLOGY_XML : cfg->HWLOC_XMLFILE;
    }
    struct fsh_topo_machine *m;
    if (fsh_topo_load(xml, var, &m) != 0) {
        fprintf(stderr, "fabshmem-info: %s\nfabshmem-info: fix: %s\n", fsh_err_last()->msg,
                fsh_err_last()->fix);
        return 2;
    }
    int policy = fsh_env_word_index("FABSHMEM_NIC_POLICY"); /* checked by fsh_env_load */
    const char *visible = fsh_env_is_set("CUDA_VISIBLE_DEVICES") ? cfg->CUDA_VISIBLE_DEVICES
                                                                 : NULL;
    if (local_size == 0) {
        int idx[256];
        local_size = fsh_topo_visible(m, visible, idx, 256, NULL);
        local_size = local_size > 0 ? local_size : 1;
    }
    struct fsh_topo_pe *pes = calloc((size_t)local_size, sizeof(*pes));
    struct fsh_topo_opts o = {.local_size = local_size, .visible = visible,
                              .gpu = cfg->FABSHMEM_GPU, .nic = cfg->FABSHMEM_NIC,
                              .policy = (enum fsh_topo_policy)policy};
    bool uuid = false;
    if (!pes || fsh_topo_map(m, &o, pes, &uuid) != 0) {
        fprintf(stderr, "fabshmem-info: %s\n", pes ? fsh_err_last()->msg : "out of memory");
        return 2;
    }
    print_providers();
    print_machine(m);
    if (uuid) {
        printf("note: CUDA_VISIBLE_DEVICES names GPUs by UUID; the map assumes all are visible\n");
    }
    print_map(m, pes, local_size);
    if (doctor) {
        check_sharing(m, pes, local_size);
        check_binding(m, pes, local_size);
        check_provider(cfg, m);
        check_memlock(cfg);
        check_hugepages(cfg);
        check_device(cfg, m);
        printf("doctor: %d warning(s)\n", nwarn);
    }
    free(pes);
    fsh_topo_free(m);
    return doctor && nwarn ? 1 : 0;
}
