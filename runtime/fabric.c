/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.c: chooses the libfabric provider and opens the PE's endpoint.
 *
 * Owns the fabric, domain, address vector (FI_AV_TABLE: fi_addr == PE), completion queue and
 * RDM endpoint, and the provider limits everyone else obeys (inject size, message size, mr_mode,
 * immediate-data size, queue depth). It never posts data operations (rma.c does) and never reads
 * the CQ (progress.c does).
 *
 * Provider choice: FABSHMEM_PROVIDER or FI_PROVIDER when set; otherwise the first that works of
 * efa, verbs;ofi_rxm, shm (only when every PE is on this node) and tcp;ofi_rxm. Each is asked
 * for an RDM endpoint with RMA (atomics when available) and delivery-complete semantics: a
 * completion then means the data is visible at the target, which is what shmem_quiet promises.
 * No ordering between RMA operations is ever assumed, whatever msg_order the provider reports.
 *
 * Profile: FABSHMEM_PROVIDER_PROFILE=efa-direct makes any provider look like EFA's lean fabric
 * (efa-direct) to the rest of the runtime: neither FI_ATOMIC nor FI_DELIVERY_COMPLETE is asked
 * for, local descriptors, provider keys and allocated memory are obeyed as FABSHMEM_MR_MODE
 * would (the same mechanism), one remote segment per write and 4 bytes of immediate data. So
 * the code paths efa-direct needs run, and are tested, on shm and tcp.
 *
 * NIC choice: init passes the NIC topology.c chose (or FABSHMEM_NIC). It goes into the
 * domain-name hint for efa and verbs, whose domains are the NICs; for other providers the entry
 * of that name is taken from fi_getinfo's list when the user forced it (tcp ignores the hint but
 * lists one entry per interface). FABSHMEM_DOMAIN, when set, wins over both.
 */
#define _GNU_SOURCE /* __WCLONE */
#include "fabric.h"

#include <errno.h>
#include <fcntl.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "log.h"

static struct {
    struct fi_info *list; /* what fi_getinfo returned; info is the entry opened */
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_cntr *wcntr; /* completed writes, when the provider counts them */
    bool counting;          /* wcntr bound and the CQ bound for selective completion */
    struct fid_ep *ep;
    fi_addr_t *peers;
    int npes;
    struct fsh_fabric_attr attr;
    bool want_hmem;     /* a device heap may be registered directly: ask for FI_HMEM first */
    bool efa_direct;    /* FABSHMEM_PROVIDER_PROFILE=efa-direct: use no more than it has */
    char shm_path[128]; /* /dev/shm/<name> of our shm region, or "" */
    char *peer_shm;     /* [pe * SHM_PATH_MAX]: peers' shm regions (ours too), or "" */
    int guard_fd;       /* write end of the guard's pipe, while guard is set */
    pid_t guard;        /* the guard of shm_path's name during init (see guard_start), or 0 */
} fab;

static void guard_start(const char *path);

#define SHM_PATH_MAX 96
#define SHM_PREFIX "fi_shm://fabshmem-"

static const char *const default_order[] = {"efa", "verbs;ofi_rxm", "shm", "tcp;ofi_rxm"};
#define NORDER (sizeof(default_order) / sizeof(default_order[0]))

const char *const *fsh_fabric_default_order(size_t *n)
{
    *n = NORDER;
    return default_order;
}

/* The registration modes FABSHMEM_MR_MODE may name, and their bits. */
static const char *const mr_names[] = {"local", "virt_addr", "allocated", "prov_key", "raw", "hmem"};
static const uint64_t mr_values[] = {FI_MR_LOCAL,    FI_MR_VIRT_ADDR, FI_MR_ALLOCATED,
                                     FI_MR_PROV_KEY, FI_MR_RAW,       FI_MR_HMEM};
#define NMR (sizeof(mr_names) / sizeof(mr_names[0]))

static int parse_mr_mode(const char *s, uint64_t *out)
{
    unsigned mask;
    int rc = fsh_env_parse_list("FABSHMEM_MR_MODE", s, mr_names, NMR, &mask);
    *out = 0;
    for (size_t i = 0; i < NMR; i++) {
        *out |= (mask & (1u << i)) ? mr_values[i] : 0;
    }
    return rc;
}

static void mr_mode_str(uint64_t mode, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < NMR; i++) {
        if (mode & mr_values[i]) {
            n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
                                  mr_names[i]);
        }
    }
    if (n == 0) {
        snprintf(buf, len, "none");
    }
}

/* The libfabric API version asked for: 1.14, whose semantics the runtime is written to; 1.20
 * with FI_HMEM where headers and library have it, because only then does the provider read a
 * registration's dmabuf (FI_MR_DMABUF). */
static uint32_t api_version(uint64_t caps)
{
#ifdef FI_MR_DMABUF
    if ((caps & FI_HMEM) && fi_version() >= FI_VERSION(1, 20)) {
        return FI_VERSION(1, 20);
    }
#else
    (void)caps;
#endif
    return FI_VERSION(1, 14);
}

int fsh_fabric_getinfo(const char *prov, const char *domain, uint64_t mr_offer, uint64_t caps,
                        uint64_t op_flags, struct fi_info **out)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints) {
        return -ENOMEM;
    }
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = caps;
    /* Every operation carries its own struct fsh_op, which begins with a fi_context2. */
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode = (int)mr_offer;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
    hints->tx_attr->op_flags = op_flags;
    if (prov) {
        hints->fabric_attr->prov_name = strdup(prov);
    }
    if (domain && domain[0]) {
        hints->domain_attr->name = strdup(domain);
    }
    int rc = fi_getinfo(api_version(caps), NULL, NULL, 0, hints, out);
    fi_freeinfo(hints);
    return rc;
}

/* Ask with the full wish list first, then give up what the provider can live without. */
static int probe(const char *prov, const char *domain, uint64_t mr_offer, struct fi_info **out)
{
    const uint64_t rma = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    const uint64_t tries[][2] = {
        {rma | FI_ATOMIC, FI_DELIVERY_COMPLETE},
        {rma, FI_DELIVERY_COMPLETE},
        {rma | FI_ATOMIC, 0},
        {rma, 0},
    };
    int rc = -FI_ENODATA;
    /* efa-direct offers neither: never ask, so nothing of them is used. */
    uint64_t refused = fab.efa_direct ? FI_ATOMIC | FI_DELIVERY_COMPLETE : 0;
    /* With a device heap to register, FI_HMEM (and FI_MR_HMEM) first: providers enable GPU
     * memory only when asked. Without it, the same list: the staging path needs nothing. */
    for (size_t i = 0; fab.want_hmem && i < sizeof(tries) / sizeof(tries[0]); i++) {
        if ((tries[i][0] | tries[i][1]) & refused) {
            continue;
        }
        rc = fsh_fabric_getinfo(prov, domain, mr_offer | FI_MR_HMEM, tries[i][0] | FI_HMEM,
                                tries[i][1], out);
        if (rc == 0) {
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
        if ((tries[i][0] | tries[i][1]) & refused) {
            continue;
        }
        rc = fsh_fabric_getinfo(prov, domain, mr_offer, tries[i][0], tries[i][1], out);
        if (rc == 0) {
            return 0;
        }
    }
    return rc;
}

/* efa and verbs name their domains after the device and filter on a domain-name hint. */
static bool hint_filters(const char *prov)
{
    return prov && (strncmp(prov, "efa", 3) == 0 || strncmp(prov, "verbs", 5) == 0);
}

/* shm's one domain is not a device; every other provider's domains are NICs or interfaces
 * (tcp: eth0, lo). */
static bool domains_are_nics(const char *prov)
{
    return strncmp(prov, "shm", 3) != 0;
}

/* Point fab.info at the entry of the probed list whose domain is name. */
static bool has_domain(const char *name)
{
    for (struct fi_info *i = fab.list; i; i = i->next) {
        if (strcmp(i->domain_attr->name, name) == 0) {
            fab.info = i;
            return true;
        }
    }
    return false;
}

/* The domain the user named (var: the variable that named it), or -ENXIO (recorded) naming
 * the domains the provider has; the list is released then. */
static int pick_domain(const char *name, const char *var, const char *fix)
{
    if (has_domain(name)) {
        return 0;
    }
    char seen[256] = "", prov_name[64];
    size_t used = 0;
    for (struct fi_info *i = fab.list; i; i = i->next) {
        if (!strstr(seen, i->domain_attr->name) && used < sizeof(seen)) {
            used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%s%s", used ? "," : "",
                                     i->domain_attr->name);
        }
    }
    snprintf(prov_name, sizeof(prov_name), "%s", fab.list->fabric_attr->prov_name);
    fi_freeinfo(fab.list);
    fab.list = fab.info = NULL;
    return fsh_err(-ENXIO, fix, "%s: provider %s has no domain '%s' (its domains: %s)", var,
                   prov_name, name, seen);
}

/* Probe one provider (NULL: libfabric's own order under FI_PROVIDER) and, when a NIC applies,
 * make fab.info the entry on that NIC. Returns 0, the probe's -FI_E* when the provider is not
 * usable, or -ENXIO (recorded) when a forced NIC is not among its domains. */
static int probe_on(const char *prov, const struct fsh_config *cfg,
                    const struct fsh_fabric_nic *nic, uint64_t mr_offer)
{
    const char *want = NULL;
    if (!cfg->FABSHMEM_DOMAIN[0] && nic && nic->name && nic->name[0]) {
        want = nic->name;
    }
    const char *hint = cfg->FABSHMEM_DOMAIN[0] ? cfg->FABSHMEM_DOMAIN
                                               : (hint_filters(prov) ? want : NULL);
    int rc = probe(prov, hint, mr_offer, &fab.list);
    if (rc != 0 && want && hint == want && !nic->forced) {
        /* The nearest NIC is not one of this provider's domains: let the provider choose. */
        FSH_DEBUG("provider %s has no domain %s; not using the NIC hint", prov, want);
        rc = probe(prov, NULL, mr_offer, &fab.list);
    }
    if (rc != 0) {
        return rc;
    }
    fab.info = fab.list;
    const char *got = fab.list->fabric_attr->prov_name;
    if (cfg->FABSHMEM_DOMAIN[0]) {
        /* Providers whose domains are not devices (shm, tcp) ignore the name hint: a domain
         * they do not have must be an error here, not a silent choice of another. */
        return pick_domain(cfg->FABSHMEM_DOMAIN, "FABSHMEM_DOMAIN",
                           "set FABSHMEM_DOMAIN to one of the provider's domains (fi_info -p "
                           "PROVIDER lists them), or unset it");
    }
    bool applies = want && (nic->forced ? domains_are_nics(got) : hint_filters(got));
    if (!applies) {
        if (want) {
            FSH_DEBUG("NIC %s not applied to provider %s (its domains are not NICs)", want, got);
        }
        return 0;
    }
    if (!nic->forced) {
        if (has_domain(want)) {
            snprintf(fab.attr.nic_hint, sizeof(fab.attr.nic_hint), "%s", want);
        } else {
            FSH_DEBUG("provider %s offers no domain %s; the provider chooses", got, want);
        }
        return 0;
    }
    rc = pick_domain(want, "FABSHMEM_NIC",
                         "set FABSHMEM_NIC to one of the provider's domains (fi_info -p PROVIDER "
                         "lists them; for tcp also set FI_TCP_IFACE), or unset it");
    if (rc == 0) {
        snprintf(fab.attr.nic_hint, sizeof(fab.attr.nic_hint), "%s", want);
    }
    return rc;
}

static int choose(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                  const struct fsh_fabric_nic *nic, uint64_t mr_offer)
{
    const char *forced = cfg->FABSHMEM_PROVIDER[0] ? cfg->FABSHMEM_PROVIDER : NULL;
    if (forced || cfg->FI_PROVIDER[0]) {
        /* With only FI_PROVIDER set, libfabric filters its own list (FI_PROVIDER=tcp gives
         * tcp;ofi_rxm for RDM); prov_name NULL lets it do that. */
        int rc = probe_on(forced, cfg, nic, mr_offer);
        if (rc == -ENXIO) {
            return rc;
        }
        if (rc != 0) {
            const char *name = forced ? forced : cfg->FI_PROVIDER;
            return fsh_err(-ENODEV,
                           "unset FI_PROVIDER/FABSHMEM_PROVIDER or choose one listed by 'fi_info -t FI_EP_RDM -c FI_RMA'",
                           "no libfabric provider '%s' offers FI_EP_RDM with RMA%s%s: %s", name,
                           cfg->FABSHMEM_DOMAIN[0] ? " on domain " : "", cfg->FABSHMEM_DOMAIN,
                           fi_strerror(-rc));
        }
        return 0;
    }
    bool one_node = boot->local_size == boot->size;
    for (size_t i = 0; i < NORDER; i++) {
        if (strcmp(default_order[i], "shm") == 0 && !one_node) {
            continue;
        }
        int rc = probe_on(default_order[i], cfg, nic, mr_offer);
        if (rc == 0 || rc == -ENXIO) {
            return rc;
        }
        FSH_DEBUG("provider %s not usable here", default_order[i]);
    }
    return fsh_err(-ENODEV, "install a libfabric provider (libfabric-bin lists them: fi_info -t FI_EP_RDM)",
                   "no libfabric provider offers FI_EP_RDM with RMA (tried efa, verbs;ofi_rxm, %stcp;ofi_rxm)",
                   one_node ? "shm, " : "");
}

static int fi_fail(int rc, const char *what)
{
    return fsh_err(rc, "check the provider with 'fi_info -v'; FABSHMEM_LOG=debug shows more",
                   "%s failed on provider %s: %s", what, fab.attr.prov, fi_strerror(-rc));
}

static void fill_attr(const struct fsh_config *cfg, uint64_t mr_offer)
{
    struct fi_info *fi = fab.info;
    struct fsh_fabric_attr *a = &fab.attr;
    snprintf(a->prov, sizeof(a->prov), "%s", fi->fabric_attr->prov_name);
    snprintf(a->domain, sizeof(a->domain), "%s", fi->domain_attr->name);
    a->addr_format = fi->addr_format;
    a->mr_mode = (uint64_t)fi->domain_attr->mr_mode;
    /* A FABSHMEM_MR_MODE given by the user is not only offered but obeyed: the EFA code paths
     * (local descriptors, provider keys, registration of allocated memory only) then run on
     * providers that would not require them. Virtual addressing always follows the provider. */
    uint64_t obey = a->mr_mode | (fsh_env_is_set("FABSHMEM_MR_MODE") ? mr_offer : 0);
    if (fab.efa_direct) {
        /* efa-direct requires these (virtual addressing it has too, and follows here). */
        obey |= FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    }
    a->mr_local = (obey & FI_MR_LOCAL) != 0;
    a->mr_virt_addr = (a->mr_mode & FI_MR_VIRT_ADDR) != 0;
    a->mr_prov_key = (obey & FI_MR_PROV_KEY) != 0;
    a->mr_allocated = (obey & FI_MR_ALLOCATED) != 0;
    a->pins_memory = a->mr_local || a->mr_allocated || strncmp(a->prov, "efa", 3) == 0 ||
                     strncmp(a->prov, "verbs", 5) == 0;
    a->has_atomics = (fi->caps & FI_ATOMIC) != 0;
    a->has_hmem = (fi->caps & FI_HMEM) != 0;
    a->delivery_complete = (fi->tx_attr->op_flags & FI_DELIVERY_COMPLETE) != 0;
    a->manual_progress = fi->domain_attr->data_progress == FI_PROGRESS_MANUAL;
    a->inject_size = fi->tx_attr->inject_size;
    if (cfg->FABSHMEM_INJECT_SIZE >= 0 && (size_t)cfg->FABSHMEM_INJECT_SIZE < a->inject_size) {
        a->inject_size = (size_t)cfg->FABSHMEM_INJECT_SIZE;
    }
    a->max_msg_size = fi->ep_attr->max_msg_size;
    a->rma_iov_limit = fi->tx_attr->rma_iov_limit ? fi->tx_attr->rma_iov_limit : 1;
    if (cfg->FABSHMEM_MAX_MSG_SIZE && cfg->FABSHMEM_MAX_MSG_SIZE < a->max_msg_size) {
        a->max_msg_size = cfg->FABSHMEM_MAX_MSG_SIZE;
    }
    /* Keep pieces inside the address space arithmetic of every provider. */
    if (a->max_msg_size > ((size_t)1 << 30)) {
        a->max_msg_size = (size_t)1 << 30;
    }
    a->cq_data_size = fi->domain_attr->cq_data_size;
    a->tx_depth = fi->tx_attr->size ? fi->tx_attr->size : 256;
    if (cfg->FABSHMEM_TX_DEPTH > 0) {
        a->tx_depth = (size_t)cfg->FABSHMEM_TX_DEPTH;
    }
    a->mr_key_size = fi->domain_attr->mr_key_size;
    if (fab.efa_direct) {
        /* probe() asked for neither atomics nor delivery-complete; the rest is clamped. */
        a->has_atomics = false;
        a->delivery_complete = false;
        a->rma_iov_limit = 1;
        a->cq_data_size = a->cq_data_size < 4 ? a->cq_data_size : 4;
    }
}

static const char *const profiles[] = {"native", "efa-direct"};

/* The CQ, and where the provider has them a write counter with the CQ bound for selective
 * completion: an injected put then needs no completion entry and no operation record, the
 * counter says when all are done (progress.c). Without a counter every operation asks for its
 * entry, as before. */
static int bind_completions(const struct fsh_config *cfg)
{
    struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    if (cfg->FABSHMEM_PUT_COUNTER && fi_cntr_open(fab.domain, &ca, &fab.wcntr, NULL) == 0) {
        int rc = fi_ep_bind(fab.ep, &fab.wcntr->fid, FI_WRITE);
        if (rc == 0) {
            rc = fi_ep_bind(fab.ep, &fab.cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
            if (rc == 0) {
                fab.counting = true;
                return 0;
            }
            /* The counter stays bound (counting, unread) until close. */
            FSH_DEBUG("provider %s: no selective completion with a write counter (%s); every "
                      "put asks for a completion entry", fab.attr.prov, fi_strerror(-rc));
            return fi_ep_bind(fab.ep, &fab.cq->fid, FI_TRANSMIT | FI_RECV);
        }
        FSH_DEBUG("provider %s: no write counter (%s); every put asks for a completion entry",
                  fab.attr.prov, fi_strerror(-rc));
        fi_close(&fab.wcntr->fid);
        fab.wcntr = NULL;
    }
    return fi_ep_bind(fab.ep, &fab.cq->fid, FI_TRANSMIT | FI_RECV);
}

int fsh_fabric_open(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                    const struct fsh_fabric_nic *nic)
{
    uint64_t mr_offer;
    int rc = parse_mr_mode(cfg->FABSHMEM_MR_MODE, &mr_offer);
    if (rc != 0) {
        return rc;
    }
    int profile;
    rc = fsh_env_parse_choice("FABSHMEM_PROVIDER_PROFILE", cfg->FABSHMEM_PROVIDER_PROFILE,
                              profiles, 2, &profile);
    if (rc != 0) {
        return rc;
    }
    fab.efa_direct = profile == 1;
    fab.want_hmem = cfg->FABSHMEM_DEVICE_HEAP_SIZE > 0 &&
                    strcmp(cfg->FABSHMEM_DEVICE_PATH, "staging") != 0;
    rc = choose(cfg, boot, nic, mr_offer);
    if (rc != 0) {
        return rc;
    }
    fill_attr(cfg, mr_offer);
    struct fsh_fabric_attr *a = &fab.attr;
    if (a->cq_data_size < 4) {
        return fsh_err(-ENOTSUP, "choose a provider with remote CQ data (efa, shm, tcp)",
                       "provider %s carries %zu bytes of immediate data; fabshmem needs 4",
                       a->prov, a->cq_data_size);
    }
    if (a->mr_key_size > 8) {
        return fsh_err(-ENOTSUP, "choose another provider",
                       "provider %s uses %zu-byte memory keys; fabshmem supports up to 8",
                       a->prov, a->mr_key_size);
    }
    if (!a->delivery_complete) {
        FSH_WARN("provider %s%s lacks FI_DELIVERY_COMPLETE: quiet relies on its default "
                 "completion semantics", a->prov, fab.efa_direct ? " (profile efa-direct)" : "");
    }
    fab.npes = boot->size;

    rc = fi_fabric(fab.info->fabric_attr, &fab.fabric, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_fabric");
    }
    rc = fi_domain(fab.fabric, fab.info, &fab.domain, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_domain");
    }
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)boot->size};
    rc = fi_av_open(fab.domain, &av_attr, &fab.av, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_av_open");
    }
    /* Room for every operation we may have in flight plus a burst of remote events (signals,
     * barrier notifications) that arrive without being asked for. */
    struct fi_cq_attr cq_attr = {
        .format = FI_CQ_FORMAT_DATA,
        .size = a->tx_depth * 2 + 4096,
        .wait_obj = FI_WAIT_NONE,
    };
    rc = fi_cq_open(fab.domain, &cq_attr, &fab.cq, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_cq_open");
    }
    rc = fi_endpoint(fab.domain, fab.info, &fab.ep, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_endpoint");
    }
    if (a->addr_format == FI_ADDR_STR && strcmp(a->prov, "shm") == 0) {
        /* shm names its shared-memory region after the pid by default; a region left behind
         * by a killed process then collides with a later process that reuses the pid (EBUSY at
         * fi_enable). A name with a random part cannot collide, and says whose it is. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned salt = (unsigned)(ts.tv_nsec ^ (ts.tv_sec << 20)) ^ ((unsigned)getpid() << 8);
        char name[96];
        snprintf(name, sizeof(name), SHM_PREFIX "%d-%d-%08x", (int)getpid(), boot->rank,
                 salt);
        rc = fi_setname(&fab.ep->fid, name, strlen(name) + 1);
        if (rc != 0) {
            FSH_DEBUG("fi_setname(%s) on shm: %s; keeping the provider's name", name,
                      fi_strerror(-rc));
        } else {
            snprintf(fab.shm_path, sizeof(fab.shm_path), "/dev/shm/%s", name + strlen("fi_shm://"));
            guard_start(fab.shm_path);
        }
    }
    rc = fi_ep_bind(fab.ep, &fab.av->fid, 0);
    if (rc == 0) {
        rc = bind_completions(cfg);
    }
    if (rc != 0) {
        return fi_fail(rc, "fi_ep_bind");
    }
    rc = fi_enable(fab.ep);
    if (rc != 0) {
        return fi_fail(rc, "fi_enable");
    }
    char mm[96];
    mr_mode_str(a->mr_mode, mm, sizeof(mm));
    FSH_INFO("provider %s (profile %s) domain %s%s%s mr_mode %s inject %zu max_msg %zu "
             "cq_data %zu tx_depth %zu", a->prov, profiles[fab.efa_direct], a->domain,
             a->nic_hint[0] ? " (nic hint) " : "", a->nic_hint, mm, a->inject_size,
             a->max_msg_size, a->cq_data_size, a->tx_depth);
    return 0;
}

int fsh_fabric_getname(void *buf, size_t buflen)
{
    size_t len = buflen;
    int rc = fi_getname(&fab.ep->fid, buf, &len);
    if (rc == -FI_ETOOSMALL) {
        return fsh_err(-EOVERFLOW, "report the provider; fabshmem's address slot is too small",
                       "provider %s address is %zu bytes, more than %zu", fab.attr.prov, len,
                       buflen);
    }
    if (rc != 0) {
        return fi_fail(rc, "fi_getname");
    }
    fab.attr.addrlen = len;
    return (int)len;
}

/*
 * The guard of our shm region's name. From fi_enable until init's barrier has every PE mapped
 * every region (fsh_fabric_unlink_shared then removes the names), a PE killed outright would
 * leave its 16 MiB file in /dev/shm, and when every PE of the node dies at once nobody is left
 * to remove it (nor when mpirun is killed while a PE creates its region: that PE's exit path
 * may unlink before the region exists). So a tiny process guards the name for that window: it is made with a raw clone
 * (no fork handlers: nothing of the PE is copied or run, and no SIGCHLD reaches the
 * application), leaves the launcher's process group (a group kill does not take it), is named
 * fabshmem-guard, and blocks reading a pipe. The PE writes one byte when the name is gone and the guard exits; if
 * the PE dies first, the pipe reads end-of-file and the guard removes the name, then exits. It
 * makes system calls only (a child of a threaded process may not take locks).
 */
static void guard_start(const char *path)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        FSH_DEBUG("pipe2 for the shm guard: %s; the name is unguarded during init",
                  strerror(errno));
        return;
    }
    long pid = syscall(SYS_clone, 0L, NULL, NULL, NULL, 0L);
    if (pid == 0) {
        /* Raw system calls only: the libc wrappers may be intercepted (sanitizers), and an
         * interceptor could wait for a lock that a thread of the PE held at the clone. */
        syscall(SYS_close, p[1]);
        syscall(SYS_setsid);
        /* Its own name, so `pkill app` (which matches names) spares it; ps shows what it is. */
        syscall(SYS_prctl, PR_SET_NAME, "fabshmem-guard", 0L, 0L, 0L);
        char c = 0;
        long n;
        do {
            n = syscall(SYS_read, p[0], &c, 1L);
        } while (n < 0 && errno == EINTR);
        if (n != 1) {
            syscall(SYS_unlink, path);
        }
        syscall(SYS_exit_group, 0);
    }
    close(p[0]);
    if (pid < 0) {
        FSH_DEBUG("clone for the shm guard: %s; the name is unguarded during init",
                  strerror(errno));
        close(p[1]);
        return;
    }
    fab.guard = (pid_t)pid;
    fab.guard_fd = p[1];
}

/* The name is gone for good (init's end): the guard may go. Not on the paths that end the job:
 * a thread of the PE may still be creating the region there, and the guard's removal after the
 * PE is dead is the one that cannot come too early. */
static void guard_stop(void)
{
    if (fab.guard > 0) {
        ssize_t n = write(fab.guard_fd, "d", 1);
        (void)n;
        close(fab.guard_fd);
        (void)waitpid(fab.guard, NULL, __WCLONE);
        fab.guard = 0;
    }
}

/* The /dev/shm files of the shm regions our PEs named (fi_setname above), for the abort path. */
static void remember_shm_regions(const uint8_t *slots, const uint16_t *lens, int npes)
{
    fab.peer_shm = calloc((size_t)npes, SHM_PATH_MAX);
    if (!fab.peer_shm) {
        return; /* only cleanup is lost */
    }
    for (int i = 0; i < npes; i++) {
        const char *a = (const char *)slots + (size_t)i * FSH_ADDR_MAX;
        size_t n = strnlen(a, lens[i]);
        size_t skip = strlen("fi_shm://");
        if (n > strlen(SHM_PREFIX) && n - skip + strlen("/dev/shm/") < SHM_PATH_MAX &&
            strncmp(a, SHM_PREFIX, strlen(SHM_PREFIX)) == 0) {
            snprintf(&fab.peer_shm[(size_t)i * SHM_PATH_MAX], SHM_PATH_MAX, "/dev/shm/%.*s",
                     (int)(n - skip), a + skip);
        }
    }
}

int fsh_fabric_insert_peers(const uint8_t *slots, const uint16_t *lens, int npes)
{
    /* String addresses (shm) go in back to back, each with its NUL; binary addresses (efa: 32
     * bytes, tcp: sockaddr) at a fixed stride, which requires equal lengths. */
    if (npes <= 0) {
        return fsh_err(-EINVAL, "", "no peers to insert");
    }
    bool str = fab.attr.addr_format == FI_ADDR_STR;
    size_t stride = lens[0];
    size_t total = 0;
    for (int i = 0; i < npes; i++) {
        if (!str && lens[i] != stride) {
            return fsh_err(-EPROTO, "run every PE with the same provider (FI_PROVIDER)",
                           "PE %d's address is %u bytes, PE 0's is %zu", i, lens[i], stride);
        }
        total += lens[i] + (str ? 1 : 0);
    }
    uint8_t *packed = malloc(total ? total : 1);
    fab.peers = calloc((size_t)npes, sizeof(fi_addr_t));
    if (!packed || !fab.peers) {
        free(packed);
        return fsh_err(-ENOMEM, "", "out of memory for %d peer addresses", npes);
    }
    size_t off = 0;
    for (int i = 0; i < npes; i++) {
        const uint8_t *a = slots + (size_t)i * FSH_ADDR_MAX;
        memcpy(packed + off, a, lens[i]);
        off += lens[i];
        if (str && (lens[i] == 0 || a[lens[i] - 1] != '\0')) {
            packed[off++] = '\0';
        }
    }
    int n = fi_av_insert(fab.av, packed, (size_t)npes, fab.peers, 0, NULL);
    free(packed);
    if (str && strcmp(fab.attr.prov, "shm") == 0) {
        remember_shm_regions(slots, lens, npes);
    }
    if (n != npes) {
        return fsh_err(n < 0 ? n : -EPROTO, "check that all PEs can reach each other on this provider",
                       "fi_av_insert of %d peers on %s inserted %d: %s", npes, fab.attr.prov, n,
                       n < 0 ? fi_strerror(-n) : "some addresses were rejected");
    }
    fab.npes = npes;
    return 0;
}

void fsh_fabric_describe(char *buf, size_t len)
{
    char mm[96];
    mr_mode_str(fab.attr.mr_mode, mm, sizeof(mm));
    snprintf(buf, len,
             "provider %s (profile %s), domain %s, address %zu bytes, mr_mode %s%s%s, "
             "inject %zu, max message %zu, remote segments per write %zu, immediate data %zu "
             "bytes, tx depth %zu, atomics %s, delivery-complete %s, %s progress, write "
             "counter %s",
             fab.attr.prov, profiles[fab.efa_direct], fab.attr.domain, fab.attr.addrlen, mm,
             fab.attr.mr_local && !(fab.attr.mr_mode & FI_MR_LOCAL) ? " (+local forced)" : "",
             fab.attr.mr_virt_addr ? "" : " (offset addressing)", fab.attr.inject_size,
             fab.attr.max_msg_size, fab.attr.rma_iov_limit, fab.attr.cq_data_size,
             fab.attr.tx_depth, fab.attr.has_atomics ? "yes" : "no", fab.attr.delivery_complete ? "yes" : "no",
             fab.attr.manual_progress ? "manual" : "auto",
             fab.counting ? "yes (with selective completion)" : "no");
}

void fsh_fabric_unlink_shared(void)
{
    if (fab.shm_path[0]) {
        unlink(fab.shm_path);
    }
    /* Once every PE has connected to every peer (init reads from each: shm maps a region at
     * the first operation to it) the names can go, and init removes them. Before that, a PE
     * killed outright (SIGKILL) removes nothing, so whoever of the job ends through here
     * removes every region it knows. Mappings outlive names: unlinking hurts no live peer. */
    for (int i = 0; fab.peer_shm && i < fab.npes; i++) {
        if (fab.peer_shm[(size_t)i * SHM_PATH_MAX]) {
            unlink(&fab.peer_shm[(size_t)i * SHM_PATH_MAX]);
        }
    }
}

bool fsh_fabric_named_regions(void)
{
    return fab.attr.addr_format == FI_ADDR_STR && strcmp(fab.attr.prov, "shm") == 0;
}

void fsh_fabric_names_gone(void)
{
    guard_stop();
}

static void close_fid(struct fid *fid, const char *what)
{
    if (fid) {
        int rc = fi_close(fid);
        if (rc != 0) {
            FSH_WARN("closing %s: %s", what, fi_strerror(-rc));
        }
    }
}

void fsh_fabric_close(void)
{
    close_fid(fab.ep ? &fab.ep->fid : NULL, "endpoint");
    close_fid(fab.av ? &fab.av->fid : NULL, "address vector");
    close_fid(fab.cq ? &fab.cq->fid : NULL, "completion queue");
    close_fid(fab.wcntr ? &fab.wcntr->fid : NULL, "write counter");
    close_fid(fab.domain ? &fab.domain->fid : NULL, "domain");
    close_fid(fab.fabric ? &fab.fabric->fid : NULL, "fabric");
    if (fab.list) {
        fi_freeinfo(fab.list);
    }
    free(fab.peers);
    free(fab.peer_shm);
    memset(&fab, 0, sizeof(fab));
}

const struct fsh_fabric_attr *fsh_fabric_attr(void)
{
    return &fab.attr;
}

struct fid_domain *fsh_fabric_domain(void)
{
    return fab.domain;
}

struct fid_ep *fsh_fabric_ep(void)
{
    return fab.ep;
}

struct fid_cq *fsh_fabric_cq(void)
{
    return fab.cq;
}

struct fid_cntr *fsh_fabric_write_counter(void)
{
    return fab.counting ? fab.wcntr : NULL;
}

fi_addr_t fsh_fabric_peer(int pe)
{
    return fab.peers[pe];
}
