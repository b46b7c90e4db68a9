/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.c: chooses the libfabric provider and opens the PE's endpoint.
 *
 * Owns the fabric, domain, address vector (FI_AV_TABLE: fi_addr == PE), completion queue and
 * RDM endpoint, and the provider limits everyone else obeys (inject size, message size, mr_mode,
 * immediate-data size, queue depth). It never posts data operations (rma_post.c) and never reads
 * the CQ (progress.c does).
 *
 * Provider choice: FABSHMEM_PROVIDER or FI_PROVIDER when set; otherwise the first that works of
 * efa-direct (the efa provider's lean fabric, libfabric >= 2.0: taken with the profile's limits
 * below, unless the job needs what it lacks), efa, verbs;ofi_rxm, shm (only when every PE is on
 * this node) and tcp;ofi_rxm. Each is asked
 * for an RDM endpoint with RMA (atomics when available) and delivery-complete semantics: a
 * completion then means the data is visible at the target, which is what shmem_quiet promises
 * (without it, rma_post.c has targets count arrivals: FABSHMEM_REMOTE_COMPLETION).
 * No ordering between RMA operations is ever assumed, whatever msg_order the provider reports.
 *
 * Profile: FABSHMEM_PROVIDER_PROFILE=efa-direct makes any provider look like EFA's lean fabric
 * (efa-direct) to the rest of the runtime: neither FI_ATOMIC nor FI_DELIVERY_COMPLETE is asked
 * for, local descriptors, provider keys and allocated memory are obeyed as FABSHMEM_MR_MODE
 * would (the same mechanism), one remote segment per write and 4 bytes of immediate data. So
 * the code paths efa-direct needs run, and are tested, on shm and tcp.
 *
 * NIC choice: init passes the NIC(s) topology.c chose (or FABSHMEM_NIC). The first goes into
 * the domain-name hint for efa and verbs, whose domains are the NICs; for other providers the
 * entry of that name is taken from fi_getinfo's list when the user forced it (tcp ignores the
 * hint but lists one entry per interface). FABSHMEM_DOMAIN, when set, wins over both.
 *
 * Rails: where the first NIC was applied, every further NIC of the list (FABSHMEM_RAILS caps
 * them) gets an endpoint of its own with the same provider and capabilities: a rail. Their
 * addresses travel in the exchange slot after the first's, with their fabrics' ids; at AV
 * insertion each PE lists, per peer, its ways (my rail, its rail with the same fabric) and
 * fsh_fabric_path spreads operations over them. A way found dead (live.c, xport.c) is skipped.
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

/* One rail: an endpoint on one NIC, with its own fabric, domain, address vector, completion
 * queue and write counter. Rail 0 is the NIC the PE would use alone. */
struct rail {
    struct fi_info *own;    /* this rail's fi_getinfo list, when rail 0's has no entry for it */
    struct fi_info *info;   /* the entry opened (in rail 0's list, or in own) */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_cntr *wcntr; /* completed writes, when the provider counts them */
    bool counting;          /* wcntr bound and the CQ bound for selective completion */
    struct fid_ep *ep;
    uint32_t fabric_id;     /* hash of the fabric's name: rails of equal ids reach each other */
};

/* The ways to one peer, when the job has more than one rail: my rail src[i] reaches its rail
 * dst[i] at addr[i]; operation k to the peer takes way (me + peer + k) mod n, so a PE's
 * traffic to many peers, and many PEs' traffic to one, spread over the rails at both ends. A
 * way found dead is skipped: its operations take the next live one. */
struct route {
    uint8_t n;
    uint8_t dead; /* bit per way taken out of use (fsh_fabric_kill_way) */
    uint8_t src[FSH_MAX_RAILS], dst[FSH_MAX_RAILS];
    fi_addr_t addr[FSH_MAX_RAILS];
};

static struct {
    struct fi_info *list; /* what fi_getinfo returned for rail 0; info is the entry opened */
    struct fi_info *info;
    struct rail rail[FSH_MAX_RAILS];
    int nrails;
    fi_addr_t *peers;     /* [pe]: rail 0's address of every peer's rail 0 */
    struct route *routes; /* [pe], when any PE of the job has more than one rail */
    unsigned deaths;      /* ways taken out of use so far (fsh_fabric_deaths) */
    int me;
    int npes;
    struct fsh_fabric_attr attr;
    bool want_hmem;     /* a device heap may be registered directly: ask for FI_HMEM first */
    bool efa_direct;    /* efa-direct, or the profile: use no more than it has */
    bool hmem_required; /* probe(): only with FI_HMEM (efa-direct for a GPU job) */
    int completion;     /* FABSHMEM_REMOTE_COMPLETION: COMPLETION_AUTO, _DELIVERY or _COUNT */
    char shm_path[128]; /* /dev/shm/<name> of our shm region, or "" */
    char *peer_shm;     /* [pe * SHM_PATH_MAX]: peers' shm regions (ours too), or "" */
    bool want_safe;     /* ask for FI_THREAD_SAFE first (contexts' own endpoints, used at once
                         * by different threads: fsh_fabric_want_threads) */
    int guard_fd;       /* write end of the guard's pipe, while guard is set */
    pid_t guard;        /* the guard of shm_path's name during init (see guard_start), or 0 */
} fab;

static void guard_start(const char *path);

#define SHM_PATH_MAX 96
#define SHM_PREFIX "fi_shm://fabshmem-"

/* efa-direct first: EFA's lean fabric (what NCCL's plugin uses on p5), when it offers all this
 * job needs (choose()); efa, its full fabric, otherwise. */
#define EFA_DIRECT "efa-direct"
static const char *const default_order[] = {EFA_DIRECT, "efa", "verbs;ofi_rxm", "shm",
                                            "tcp;ofi_rxm"};
#define NORDER (sizeof(default_order) / sizeof(default_order[0]))

const char *const *fsh_fabric_default_order(size_t *n)
{
    *n = NORDER;
    return default_order;
}

/* The bits of the registration modes FABSHMEM_MR_MODE may name, in the order of its words
 * (env.c, which checks the value at every init). */
static const uint64_t mr_values[] = {FI_MR_LOCAL,    FI_MR_VIRT_ADDR, FI_MR_ALLOCATED,
                                     FI_MR_PROV_KEY, FI_MR_RAW,       FI_MR_HMEM};
#define NMR (sizeof(mr_values) / sizeof(mr_values[0]))

static uint64_t mr_mode_offered(void)
{
    unsigned mask = fsh_env_word_set("FABSHMEM_MR_MODE");
    uint64_t out = 0;
    for (size_t i = 0; i < NMR; i++) {
        out |= (mask & (1u << i)) ? mr_values[i] : 0;
    }
    return out;
}

static void mr_mode_str(uint64_t mode, char *buf, size_t len)
{
    size_t nnames;
    const char *const *mr_names = fsh_env_words("FABSHMEM_MR_MODE", &nnames);
    buf[0] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < NMR && i < nnames; i++) {
        if (mode & mr_values[i]) {
            n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
                                  mr_names[i]);
        }
    }
    if (n == 0) {
        snprintf(buf, len, "none");
    }
}

const char *fsh_fabric_dmabuf_why_not(void)
{
#ifndef FI_MR_DMABUF
    return "fabshmem was built against a libfabric without FI_MR_DMABUF (needs 1.20)";
#else
    if (fi_version() < FI_VERSION(1, 20)) {
        return "the libfabric loaded is older than 1.20 (no FI_MR_DMABUF)";
    }
    return NULL;
#endif
}

/* The libfabric API version asked for: 1.14, whose semantics the runtime is written to; 1.20
 * with FI_HMEM where headers and library have it, because only then does the provider read a
 * registration's dmabuf (FI_MR_DMABUF). */
static uint32_t api_version(uint64_t caps)
{
    if ((caps & FI_HMEM) && !fsh_fabric_dmabuf_why_not()) {
        return FI_VERSION(1, 20);
    }
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
    if (prov && strcmp(prov, EFA_DIRECT) == 0) {
        /* Not a provider: the efa provider's lean fabric (libfabric >= 2.0), by its name. */
        hints->fabric_attr->prov_name = strdup("efa");
        hints->fabric_attr->name = strdup(EFA_DIRECT);
    } else if (prov) {
        hints->fabric_attr->prov_name = strdup(prov);
    }
    if (domain && domain[0]) {
        hints->domain_attr->name = strdup(domain);
    }
    int rc = -FI_ENODATA;
    if (fab.want_safe) {
        /* Endpoints of one domain used at once by different threads (contexts' own): the
         * provider must guard what they share. A provider without it keeps the engine lock. */
        hints->domain_attr->threading = FI_THREAD_SAFE;
        rc = fi_getinfo(api_version(caps), NULL, NULL, 0, hints, out);
        hints->domain_attr->threading = FI_THREAD_DOMAIN;
    }
    if (rc != 0) {
        rc = fi_getinfo(api_version(caps), NULL, NULL, 0, hints, out);
    }
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
    for (size_t i = 0; !fab.hmem_required && i < sizeof(tries) / sizeof(tries[0]); i++) {
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
    if (!cfg->FABSHMEM_DOMAIN[0] && nic && nic->count > 0 && nic->names[0] && nic->names[0][0]) {
        want = nic->names[0];
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

/* Is this entry EFA's lean fabric? Then fabshmem uses no more of it than it offers, as under
 * the efa-direct profile: no provider atomics (AMOs applied by the target), no delivery-complete
 * (quiet counts arrivals), local descriptors, one remote segment, 4 bytes of immediate data. */
static bool is_efa_direct(const struct fi_info *fi)
{
    return fi->fabric_attr->name && strcmp(fi->fabric_attr->name, EFA_DIRECT) == 0;
}

/* How quiet learns that puts landed (FABSHMEM_REMOTE_COMPLETION), decided here with the
 * provider it depends on. */
enum { COMPLETION_AUTO, COMPLETION_DELIVERY, COMPLETION_COUNT }; /* its words' order (env.c) */

/* Does efa-direct offer what this job needs? Not when the user asked quiet to trust the
 * provider's delivery-complete, which it lacks; a GPU job's device heap must be registrable
 * (FI_HMEM, asked in probe()), else efa's full fabric serves it better. */
static bool efa_direct_fits(void)
{
    return fab.completion != COMPLETION_DELIVERY;
}

/* probe_on() for efa-direct: with its limits applied to what is asked (refused otherwise). */
static int probe_direct(const struct fsh_config *cfg, const struct fsh_fabric_nic *nic,
                        uint64_t mr_offer)
{
    bool profile = fab.efa_direct;
    fab.efa_direct = true;
    fab.hmem_required = fab.want_hmem;
    int rc = probe_on(EFA_DIRECT, cfg, nic, mr_offer);
    fab.hmem_required = false;
    if (rc != 0) {
        fab.efa_direct = profile;
    }
    return rc;
}

static int choose(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                  const struct fsh_fabric_nic *nic, uint64_t mr_offer)
{
    const char *forced = cfg->FABSHMEM_PROVIDER[0] ? cfg->FABSHMEM_PROVIDER : NULL;
    if (forced && strcmp(forced, EFA_DIRECT) == 0) {
        fab.efa_direct = true;
    }
    if (forced || cfg->FI_PROVIDER[0]) {
        /* With only FI_PROVIDER set, libfabric filters its own list (FI_PROVIDER=tcp gives
         * tcp;ofi_rxm for RDM); prov_name NULL lets it do that. */
        int rc = probe_on(forced, cfg, nic, mr_offer);
        if (rc == -ENXIO) {
            return rc;
        }
        if (rc != 0) {
            const char *name = forced ? forced : cfg->FI_PROVIDER;
            bool direct = forced && strcmp(forced, EFA_DIRECT) == 0;
            return fsh_err(-ENODEV,
                           direct ? "efa-direct is the efa provider's lean fabric: it needs libfabric >= 2.0 and an EFA device (fi_info -p efa lists it as fabric efa-direct); unset FABSHMEM_PROVIDER to let fabshmem choose"
                                  : "unset FI_PROVIDER/FABSHMEM_PROVIDER or choose one listed by 'fi_info -t FI_EP_RDM -c FI_RMA'",
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
        bool direct = strcmp(default_order[i], EFA_DIRECT) == 0;
        if (direct && !efa_direct_fits()) {
            FSH_DEBUG("efa-direct not tried: FABSHMEM_REMOTE_COMPLETION=delivery needs "
                      "delivery-complete, which it lacks");
            continue;
        }
        int rc = direct ? probe_direct(cfg, nic, mr_offer)
                        : probe_on(default_order[i], cfg, nic, mr_offer);
        if (rc == 0 || rc == -ENXIO) {
            return rc;
        }
        FSH_DEBUG("provider %s not usable here", default_order[i]);
    }
    return fsh_err(-ENODEV, "install a libfabric provider (libfabric-bin lists them: fi_info -t FI_EP_RDM)",
                   "no libfabric provider offers FI_EP_RDM with RMA (tried efa-direct, efa, verbs;ofi_rxm, %stcp;ofi_rxm)",
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
    a->thread_safe = fi->domain_attr->threading == FI_THREAD_SAFE;
    if (fab.efa_direct) {
        /* probe() asked for neither atomics nor delivery-complete; the rest is clamped. */
        a->has_atomics = false;
        a->delivery_complete = false;
        a->rma_iov_limit = 1;
        a->cq_data_size = a->cq_data_size < 4 ? a->cq_data_size : 4;
        a->av_first = true;
    }
    a->count_arrivals = fab.completion == COMPLETION_COUNT ||
                        (fab.completion == COMPLETION_AUTO && !a->delivery_complete);
    if (!a->delivery_complete && fab.completion == COMPLETION_DELIVERY) {
        FSH_WARN("provider %s lacks FI_DELIVERY_COMPLETE and FABSHMEM_REMOTE_COMPLETION="
                 "delivery: quiet trusts its completions to mean the data is at the target",
                 a->prov);
    }
}

/* FABSHMEM_PROVIDER_PROFILE's words (env.c): native, efa-direct. */
static const char *profile_name(void)
{
    return fsh_env_words("FABSHMEM_PROVIDER_PROFILE", NULL)[fab.efa_direct];
}

/* The CQ, and where the provider has them (and want) a write counter with the CQ bound for
 * selective completion: an injected put then needs no completion entry and no operation record,
 * the counter says when all are done (progress.c). Without a counter every operation asks for
 * its entry, as before. */
static int bind_completions(struct rail *r, bool want)
{
    struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    if (want && fi_cntr_open(r->domain, &ca, &r->wcntr, NULL) == 0) {
        int rc = fi_ep_bind(r->ep, &r->wcntr->fid, FI_WRITE);
        if (rc == 0) {
            rc = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
            if (rc == 0) {
                r->counting = true;
                return 0;
            }
            /* The counter stays bound (counting, unread) until close. */
            FSH_DEBUG("provider %s: no selective completion with a write counter (%s); every "
                      "put asks for a completion entry", fab.attr.prov, fi_strerror(-rc));
            return fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
        }
        FSH_DEBUG("provider %s: no write counter (%s); every put asks for a completion entry",
                  fab.attr.prov, fi_strerror(-rc));
        fi_close(&r->wcntr->fid);
        r->wcntr = NULL;
    }
    return fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
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

static void close_rail(struct rail *r)
{
    close_fid(r->ep ? &r->ep->fid : NULL, "endpoint");
    close_fid(r->av ? &r->av->fid : NULL, "address vector");
    close_fid(r->cq ? &r->cq->fid : NULL, "completion queue");
    close_fid(r->wcntr ? &r->wcntr->fid : NULL, "write counter");
    close_fid(r->domain ? &r->domain->fid : NULL, "domain");
    close_fid(r->fabric ? &r->fabric->fid : NULL, "fabric");
    if (r->own) {
        fi_freeinfo(r->own);
    }
    memset(r, 0, sizeof(*r));
}

/* FNV-1a of the fabric's name: tcp names its fabrics after the subnet, efa and verbs after the
 * network, so equal ids mean the two endpoints can reach each other. */
static uint32_t fabric_id(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *c = name ? name : ""; *c; c++) {
        h = (h ^ (uint8_t)*c) * 16777619u;
    }
    return h;
}

/* Open rail r on its info: fabric, domain, AV, CQ, endpoint, counter; enable it. */
static int open_rail(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                     struct rail *r, bool first)
{
    const struct fsh_fabric_attr *a = &fab.attr;
    r->fabric_id = fabric_id(r->info->fabric_attr->name);
    int rc = fi_fabric(r->info->fabric_attr, &r->fabric, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_fabric");
    }
    rc = fi_domain(r->fabric, r->info, &r->domain, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_domain");
    }
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE, .count = (size_t)boot->size};
    rc = fi_av_open(r->domain, &av_attr, &r->av, NULL);
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
    rc = fi_cq_open(r->domain, &cq_attr, &r->cq, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_cq_open");
    }
    rc = fi_endpoint(r->domain, r->info, &r->ep, NULL);
    if (rc != 0) {
        return fi_fail(rc, "fi_endpoint");
    }
    if (first && a->addr_format == FI_ADDR_STR && strcmp(a->prov, "shm") == 0) {
        /* shm names its shared-memory region after the pid by default; a region left behind
         * by a killed process then collides with a later process that reuses the pid (EBUSY at
         * fi_enable). A name with a random part cannot collide, and says whose it is. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned salt = (unsigned)(ts.tv_nsec ^ (ts.tv_sec << 20)) ^ ((unsigned)getpid() << 8);
        char name[96];
        snprintf(name, sizeof(name), SHM_PREFIX "%d-%d-%08x", (int)getpid(), boot->rank,
                 salt);
        rc = fi_setname(&r->ep->fid, name, strlen(name) + 1);
        if (rc != 0) {
            FSH_DEBUG("fi_setname(%s) on shm: %s; keeping the provider's name", name,
                      fi_strerror(-rc));
        } else {
            snprintf(fab.shm_path, sizeof(fab.shm_path), "/dev/shm/%s", name + strlen("fi_shm://"));
            guard_start(fab.shm_path);
        }
    }
    rc = fi_ep_bind(r->ep, &r->av->fid, 0);
    if (rc == 0) {
        rc = bind_completions(r, first ? cfg->FABSHMEM_PUT_COUNTER != 0 : fab.rail[0].counting);
    }
    /* Whoever posts decides by rail 0 whether a write is counted: every rail must agree. */
    if (rc == 0 && !first && r->counting != fab.rail[0].counting) {
        return fsh_err(-ENOTSUP, "", "rail on %s cannot count writes as rail 0 does",
                       r->info->domain_attr->name);
    }
    if (rc != 0) {
        return fi_fail(rc, "fi_ep_bind");
    }
    rc = fi_enable(r->ep);
    if (rc != 0) {
        return fi_fail(rc, "fi_enable");
    }
    return 0;
}

/* The fi_info of a further rail on NIC name: rail 0's list has an entry for it where the
 * provider lists every interface (tcp); efa and verbs are asked with the name as domain hint.
 * It must be the same provider with the same capabilities, registration modes and addresses,
 * so that every rail can carry every operation. NULL (nothing recorded) when not. */
static struct fi_info *rail_info(const char *name, uint64_t mr_offer, struct fi_info **own)
{
    const struct fi_info *f = fab.info;
    struct fi_info *got = NULL;
    *own = NULL;
    for (struct fi_info *i = fab.list; i && !got; i = i->next) {
        if (strcmp(i->domain_attr->name, name) == 0) {
            got = i;
        }
    }
    if (!got && hint_filters(f->fabric_attr->prov_name) &&
        probe(is_efa_direct(f) ? EFA_DIRECT : f->fabric_attr->prov_name, name, mr_offer,
              own) == 0) {
        for (struct fi_info *i = *own; i && !got; i = i->next) {
            if (strcmp(i->domain_attr->name, name) == 0) {
                got = i;
            }
        }
    }
    const uint64_t caps = FI_ATOMIC | FI_HMEM | FI_RMA;
    if (got && (strcmp(got->fabric_attr->prov_name, f->fabric_attr->prov_name) != 0 ||
                is_efa_direct(got) != is_efa_direct(f) ||
                (got->caps & caps) != (f->caps & caps) ||
                got->domain_attr->mr_mode != f->domain_attr->mr_mode ||
                got->addr_format != f->addr_format ||
                (got->tx_attr->op_flags & FI_DELIVERY_COMPLETE) !=
                    (f->tx_attr->op_flags & FI_DELIVERY_COMPLETE) ||
                got->domain_attr->cq_data_size < fab.attr.cq_data_size)) {
        FSH_WARN("NIC %s offers other capabilities than rail 0's %s on provider %s: not used "
                 "as a rail", name, f->domain_attr->name, f->fabric_attr->prov_name);
        got = NULL;
    }
    if (!got && *own) {
        fi_freeinfo(*own);
        *own = NULL;
    }
    return got;
}

/* Rails 1..: the further NICs of the PE's list (FABSHMEM_RAILS caps how many), each its own
 * endpoint. Only where rail 0 is on the NIC asked for: a provider that chose its own domain
 * (shm, or tcp without FABSHMEM_NIC) has one rail. A NIC the provider does not have is an
 * error when the user named it, else it is skipped. */
static int open_rails(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                      const struct fsh_fabric_nic *nic, uint64_t mr_offer)
{
    long want = cfg->FABSHMEM_RAILS > 0 ? cfg->FABSHMEM_RAILS : FSH_MAX_RAILS;
    if (want > FSH_MAX_RAILS) {
        return fsh_err(-EINVAL, "use 0 (every NIC of the PE's list, at most 4) or 1 to 4",
                       "FABSHMEM_RAILS=%ld is more than %d", cfg->FABSHMEM_RAILS,
                       FSH_MAX_RAILS);
    }
    if (!fab.attr.nic_hint[0] || cfg->FABSHMEM_DOMAIN[0]) {
        return 0;
    }
    for (int i = 1; i < nic->count && fab.nrails < want; i++) {
        const char *name = nic->names[i];
        bool dup = false;
        for (int k = 0; k < fab.nrails; k++) {
            dup = dup || strcmp(fab.rail[k].info->domain_attr->name, name) == 0;
        }
        if (dup) {
            continue;
        }
        struct rail *r = &fab.rail[fab.nrails];
        r->info = rail_info(name, mr_offer, &r->own);
        if (!r->info) {
            if (nic->forced) {
                return fsh_err(-ENXIO, "set FABSHMEM_NIC to NICs of one provider (fi_info -p "
                               "PROVIDER lists them; for tcp also FI_TCP_IFACE), or "
                               "FABSHMEM_RAILS=1",
                               "FABSHMEM_NIC: provider %s cannot open a rail on '%s'",
                               fab.attr.prov, name);
            }
            FSH_DEBUG("no rail on NIC %s: provider %s has no such domain", name, fab.attr.prov);
            continue;
        }
        if (r->info->tx_attr->inject_size < fab.attr.inject_size) {
            fab.attr.inject_size = r->info->tx_attr->inject_size;
        }
        if (r->info->ep_attr->max_msg_size < fab.attr.max_msg_size) {
            fab.attr.max_msg_size = r->info->ep_attr->max_msg_size;
        }
        int rc = open_rail(cfg, boot, r, false);
        if (rc != 0 && nic->forced) {
            return rc;
        }
        if (rc != 0) {
            FSH_WARN("no rail on NIC %s: %s", name, fsh_err_last()->msg);
            fsh_err_clear();
            close_rail(r);
            continue;
        }
        fab.nrails++;
    }
    return 0;
}

int fsh_fabric_open(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                    const struct fsh_fabric_nic *nic)
{
    /* The words were checked at load (env.c), for every job. */
    uint64_t mr_offer = mr_mode_offered();
    fab.efa_direct = fsh_env_word_index("FABSHMEM_PROVIDER_PROFILE") == 1;
    fab.completion = fsh_env_word_index("FABSHMEM_REMOTE_COMPLETION");
    fab.want_hmem = cfg->FABSHMEM_DEVICE_HEAP_SIZE > 0 &&
                    strcmp(cfg->FABSHMEM_DEVICE_PATH, "staging") != 0;
    int rc = choose(cfg, boot, nic, mr_offer);
    if (rc != 0) {
        return rc;
    }
    fab.efa_direct = fab.efa_direct || is_efa_direct(fab.info);
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
    fab.npes = boot->size;
    fab.me = boot->rank;
    fab.rail[0].info = fab.info;
    rc = open_rail(cfg, boot, &fab.rail[0], true);
    if (rc != 0) {
        return rc;
    }
    fab.nrails = 1;
    rc = open_rails(cfg, boot, nic, mr_offer);
    if (rc != 0) {
        return rc;
    }
    char mm[96];
    mr_mode_str(a->mr_mode, mm, sizeof(mm));
    FSH_INFO("provider %s (profile %s) domain %s%s%s mr_mode %s inject %zu max_msg %zu "
             "cq_data %zu tx_depth %zu rails %d", a->prov, profile_name(), a->domain,
             a->nic_hint[0] ? " (nic hint) " : "", a->nic_hint, mm, a->inject_size,
             a->max_msg_size, a->cq_data_size, a->tx_depth, fab.nrails);
    return 0;
}

void fsh_fabric_open_none(const struct fsh_boot_info *boot)
{
    memset(&fab.attr, 0, sizeof(fab.attr));
    fab.npes = boot->size;
    fab.me = boot->rank;
    fab.nrails = 0;
    /* What the layers above read of a provider, as if it were an ideal one they never use:
     * no registration, no inject, nothing to wait for at the target. */
    fab.attr.mr_virt_addr = true;
    fab.attr.delivery_complete = true;
    fab.attr.max_msg_size = (size_t)1 << 40;
    fab.attr.rma_iov_limit = 1;
    fab.attr.cq_data_size = 8;
    fab.attr.tx_depth = 64;
    fab.attr.mr_key_size = 8;
    FSH_INFO("no fabric: every PE of the job runs on this node and maps the others' memory");
}

bool fsh_fabric_none(void)
{
    return fab.nrails == 0;
}

/* The rails' trailer, after rail 0's address in the exchange slot (only with more than one
 * rail: a one-rail PE's slot is its address alone): the rail count, each rail's fabric id,
 * the address of every further rail after its length byte, then the caller's extra bytes (the
 * further rails' memory keys) after theirs. */
int fsh_fabric_getname(void *buf, size_t buflen, const void *extra, size_t extra_len)
{
    if (fab.nrails == 0) {
        return 0; /* no fabric: no address */
    }
    size_t len = buflen;
    int rc = fi_getname(&fab.rail[0].ep->fid, buf, &len);
    if (rc == 0 && fab.nrails > 1) {
        uint8_t *t = (uint8_t *)buf + len, *end = (uint8_t *)buf + buflen;
        if ((size_t)(end - t) < 1 + 4 * (size_t)fab.nrails) {
            rc = -FI_ETOOSMALL;
        } else {
            *t++ = (uint8_t)fab.nrails;
            for (int i = 0; i < fab.nrails; i++, t += 4) {
                memcpy(t, &fab.rail[i].fabric_id, 4);
            }
        }
        for (int i = 1; i < fab.nrails && rc == 0; i++) {
            size_t n = end - t > 1 ? (size_t)(end - t) - 1 : 0;
            rc = n ? fi_getname(&fab.rail[i].ep->fid, t + 1, &n) : -FI_ETOOSMALL;
            if (rc == 0 && n > UINT8_MAX) {
                rc = -FI_ETOOSMALL;
            }
            if (rc == 0) {
                *t = (uint8_t)n;
                t += 1 + n;
            }
        }
        if (rc == 0 && (extra_len > UINT8_MAX || (size_t)(end - t) < 1 + extra_len)) {
            rc = -FI_ETOOSMALL;
        } else if (rc == 0) {
            *t = (uint8_t)extra_len;
            memcpy(t + 1, extra, extra_len);
        }
    }
    if (rc == -FI_ETOOSMALL) {
        return fsh_err(-EOVERFLOW, fab.nrails > 1 ? "use fewer rails (FABSHMEM_RAILS)" : "report the provider; fabshmem's address slot is too small",
                       "provider %s: the addresses of %d rail(s) need more than the %zu "
                       "bytes of the exchange slot", fab.attr.prov, fab.nrails, buflen);
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

/* A peer's rails as its slot's trailer tells them: count, fabric ids, and the address of
 * rail j (j >= 1) with its length. A slot without a trailer is one rail. */
struct peer_rails {
    int n;
    uint32_t id[FSH_MAX_RAILS];
    const uint8_t *addr[FSH_MAX_RAILS];
    size_t len[FSH_MAX_RAILS];
};

/* Parse a slot's trailer: the rails into pr, and where the extra bytes begin (NULL for a
 * one-rail slot). */
static int parse_trailer(const uint8_t *slot, size_t len0, struct peer_rails *pr,
                         const uint8_t **extra)
{
    const uint8_t *t = slot + len0, *end = slot + FSH_ADDR_MAX;
    memset(pr, 0, sizeof(*pr));
    pr->n = t < end ? *t : 0;
    *extra = NULL;
    if (pr->n <= 1) {
        pr->n = 1;
        pr->id[0] = fab.rail[0].fabric_id; /* one rail: reached as rail 0 always was */
        return 0;
    }
    if (pr->n > FSH_MAX_RAILS || (size_t)(end - t) < 1 + 4 * (size_t)pr->n) {
        return -EPROTO;
    }
    t++;
    for (int j = 0; j < pr->n; j++, t += 4) {
        memcpy(&pr->id[j], t, 4);
    }
    for (int j = 1; j < pr->n; j++) {
        if (t >= end || (size_t)(end - t) < 1u + *t) {
            return -EPROTO;
        }
        pr->len[j] = *t;
        pr->addr[j] = t + 1;
        t += 1 + *t;
    }
    if (t >= end || (size_t)(end - t) < 1u + *t) {
        return -EPROTO;
    }
    *extra = t;
    return 0;
}

const uint8_t *fsh_fabric_slot_extra(const uint8_t *slot, size_t len0, size_t *n)
{
    struct peer_rails pr;
    const uint8_t *extra;
    if (len0 >= FSH_ADDR_MAX || parse_trailer(slot, len0, &pr, &extra) != 0 || !extra) {
        *n = 0;
        return NULL;
    }
    *n = *extra;
    return extra + 1;
}

/* With more than one rail anywhere in the job: the ways to every peer (struct route), each
 * further peer rail inserted into the AV of the rail of ours that reaches it. */
static int build_routes(const uint8_t *slots, const uint16_t *lens, int npes)
{
    bool multi = fab.nrails > 1;
    for (int p = 0; p < npes && !multi; p++) {
        const uint8_t *slot = slots + (size_t)p * FSH_ADDR_MAX;
        multi = lens[p] < FSH_ADDR_MAX && slot[lens[p]] > 1;
    }
    if (!multi) {
        return 0;
    }
    fab.routes = calloc((size_t)npes, sizeof(*fab.routes));
    if (!fab.routes) {
        return fsh_err(-ENOMEM, "", "out of memory for the rails to %d peers", npes);
    }
    for (int p = 0; p < npes; p++) {
        struct peer_rails pr;
        const uint8_t *extra;
        if (parse_trailer(slots + (size_t)p * FSH_ADDR_MAX, lens[p], &pr, &extra) != 0) {
            return fsh_err(-EPROTO, "run every PE with the same fabshmem",
                           "PE %d's rail addresses are malformed", p);
        }
        /* Which of its rails each of mine reaches (equal fabric ids). */
        int reach[FSH_MAX_RAILS][FSH_MAX_RAILS], nreach[FSH_MAX_RAILS] = {0};
        int usable[FSH_MAX_RAILS], nu = 0, w_max = 0;
        for (int i = 0; i < fab.nrails; i++) {
            for (int j = 0; j < pr.n; j++) {
                if (pr.id[j] == fab.rail[i].fabric_id) {
                    reach[i][nreach[i]++] = j;
                }
            }
            if (nreach[i]) {
                usable[nu++] = i;
                w_max = nreach[i] > w_max ? nreach[i] : w_max;
            }
        }
        if (nu == 0) {
            return fsh_err(-ENETUNREACH, "give every PE NICs on the same networks (FABSHMEM_NIC), or FABSHMEM_RAILS=1",
                           "no rail of this PE reaches a rail of PE %d (their fabrics differ)",
                           p);
        }
        struct route *r = &fab.routes[p];
        r->n = (uint8_t)(nu > w_max ? nu : w_max);
        for (int w = 0; w < r->n; w++) {
            int i = usable[w % nu];
            int j = reach[i][(w + fab.me) % nreach[i]];
            r->src[w] = (uint8_t)i;
            r->dst[w] = (uint8_t)j;
            if (i == 0 && j == 0) {
                r->addr[w] = fab.peers[p];
                continue;
            }
            for (int v = 0; v < w; v++) {
                if (r->src[v] == i && r->dst[v] == j) {
                    r->addr[w] = r->addr[v];
                    goto next;
                }
            }
            const void *a = j == 0 ? slots + (size_t)p * FSH_ADDR_MAX : pr.addr[j];
            if (fi_av_insert(fab.rail[i].av, a, 1, &r->addr[w], 0, NULL) != 1) {
                return fsh_err(-EPROTO, "check that all PEs can reach each other on every rail, or FABSHMEM_RAILS=1",
                               "fi_av_insert of PE %d's rail %d on rail %s failed", p, j,
                               fab.rail[i].info->domain_attr->name);
            }
        next:;
        }
    }
    return 0;
}

int fsh_fabric_insert_peers(const uint8_t *slots, const uint16_t *lens, int npes)
{
    /* String addresses (shm) go in back to back, each with its NUL; binary addresses (efa: 32
     * bytes, tcp: sockaddr) at a fixed stride, which requires equal lengths. */
    if (npes <= 0) {
        return fsh_err(-EINVAL, "", "no peers to insert");
    }
    if (fab.nrails == 0) {
        return 0; /* exchange.c's layout check made sure nobody has an address */
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
    int n = fi_av_insert(fab.rail[0].av, packed, (size_t)npes, fab.peers, 0, NULL);
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
    return build_routes(slots, lens, npes);
}

void fsh_fabric_describe(char *buf, size_t len)
{
    if (fab.nrails == 0) {
        snprintf(buf, len, "none: every PE runs on this node and maps the others' memory "
                 "(FABSHMEM_FABRIC=always opens a provider all the same)");
        return;
    }
    char mm[96], rails[FSH_MAX_RAILS * 72] = "";
    mr_mode_str(fab.attr.mr_mode, mm, sizeof(mm));
    for (int i = 0, at = 0; i < fab.nrails && fab.nrails > 1; i++) {
        at += snprintf(rails + at, sizeof(rails) - (size_t)at, "%s%s", i ? ", " : " (",
                       fab.rail[i].info->domain_attr->name);
        if (i == fab.nrails - 1) {
            snprintf(rails + at, sizeof(rails) - (size_t)at, ")");
        }
    }
    snprintf(buf, len,
             "provider %s, fabric %s (profile %s), domain %s, rails %d%s, address %zu bytes, "
             "mr_mode %s%s%s, inject %zu, max message %zu, remote segments per write %zu, immediate "
             "data %zu bytes, tx depth %zu, atomics %s, delivery-complete %s, %s progress, "
             "write counter %s",
             fab.attr.prov, fab.info->fabric_attr->name ? fab.info->fabric_attr->name : "-",
             profile_name(), fab.attr.domain, fab.nrails, rails,
             fab.attr.addrlen, mm,
             fab.attr.mr_local && !(fab.attr.mr_mode & FI_MR_LOCAL) ? " (+local forced)" : "",
             fab.attr.mr_virt_addr ? "" : " (offset addressing)", fab.attr.inject_size,
             fab.attr.max_msg_size, fab.attr.rma_iov_limit, fab.attr.cq_data_size,
             fab.attr.tx_depth, fab.attr.has_atomics ? "yes" : "no", fab.attr.delivery_complete ? "yes" : "no",
             fab.attr.manual_progress ? "manual" : "auto",
             fab.rail[0].counting ? "yes (with selective completion)" : "no");
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

void fsh_fabric_close(void)
{
    for (int i = FSH_MAX_RAILS - 1; i >= 0; i--) {
        close_rail(&fab.rail[i]);
    }
    if (fab.list) {
        fi_freeinfo(fab.list);
    }
    free(fab.peers);
    free(fab.routes);
    free(fab.peer_shm);
    memset(&fab, 0, sizeof(fab));
}

const struct fsh_fabric_attr *fsh_fabric_attr(void)
{
    return &fab.attr;
}

int fsh_fabric_nrails(void)
{
    return fab.nrails;
}

const char *fsh_fabric_rail_name(int rail)
{
    return fab.rail[rail].info->domain_attr->name;
}

struct fid_domain *fsh_fabric_domain(int rail)
{
    return fab.rail[rail].domain;
}

struct fid_ep *fsh_fabric_ep(int rail)
{
    return fab.rail[rail].ep;
}

struct fid_cq *fsh_fabric_cq(int rail)
{
    return fab.rail[rail].cq;
}

void fsh_fabric_want_threads(bool on)
{
    fab.want_safe = on;
}

const char *fsh_fabric_lanes_why_not(void)
{
    if (fab.nrails == 0) {
        return "the job opened no fabric";
    }
    if (!fab.want_safe) {
        return "the program did not ask for SHMEM_THREAD_MULTIPLE, so one thread calls at a time";
    }
    if (!fab.attr.thread_safe) {
        return "the provider offers no FI_THREAD_SAFE domain";
    }
    if (fsh_fabric_named_regions()) {
        return "shm names every endpoint's region in /dev/shm until its peers mapped it, so "
               "a PE killed outright would leave a context's behind";
    }
    return NULL;
}

bool fsh_fabric_lanes_possible(void)
{
    return fsh_fabric_lanes_why_not() == NULL;
}

int fsh_fabric_lane_open(int rail, struct fid_ep **ep, struct fid_cq **cq, size_t depth)
{
    struct rail *r = &fab.rail[rail];
    *ep = NULL;
    *cq = NULL;
    /* Only its own completions: peers aim at the rails' endpoints alone, so nothing aims here. */
    struct fi_cq_attr cq_attr = {
        .format = FI_CQ_FORMAT_DATA, .size = depth + 64, .wait_obj = FI_WAIT_NONE};
    int rc = fi_cq_open(r->domain, &cq_attr, cq, NULL);
    if (rc == 0) {
        rc = fi_endpoint(r->domain, r->info, ep, NULL);
    }
    if (rc == 0) {
        rc = fi_ep_bind(*ep, &r->av->fid, 0);
    }
    if (rc == 0) {
        rc = fi_ep_bind(*ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV);
    }
    if (rc == 0) {
        rc = fi_enable(*ep);
    }
    if (rc != 0) {
        fsh_fabric_lane_close(*ep, *cq);
        *ep = NULL;
        *cq = NULL;
        return fsh_err(rc < 0 ? rc : -rc, "destroy contexts no longer needed, or set FABSHMEM_CTX_ENDPOINTS lower",
                       "cannot open an endpoint for a context on provider %s, rail %s: %s",
                       fab.attr.prov, r->info->domain_attr->name, fi_strerror(rc < 0 ? -rc : rc));
    }
    return 0;
}

int fsh_fabric_lane_name(int rail, struct fid_ep *ep, uint8_t *buf, size_t *len)
{
    size_t l = *len - FSH_LANE_NAME_HEAD;
    int rc = fi_getname(&ep->fid, buf + FSH_LANE_NAME_HEAD, &l);
    if (rc != 0) {
        return fi_fail(rc, "fi_getname of a context's endpoint");
    }
    memcpy(buf, &fab.rail[rail].fabric_id, 4);
    buf[4] = (uint8_t)rail;
    *len = l + FSH_LANE_NAME_HEAD;
    return 0;
}

/* One lane name's address into rail r's AV, counted in into[r]. */
static int insert_lane(int r, const uint8_t *name, size_t alen, size_t *into)
{
    fi_addr_t addr;
    int got = fi_av_insert(fab.rail[r].av, name + FSH_LANE_NAME_HEAD, 1, &addr, 0, NULL);
    into[r] += got == 1;
    return got == 1 ? 0 : fsh_err(got < 0 ? got : -EPROTO, "set FABSHMEM_CTX_ENDPOINTS=0",
                                  "fi_av_insert of a context's endpoint address (%zu bytes) on "
                                  "%s, rail %s, failed: %s", alen, fab.attr.prov,
                                  fab.rail[r].info->domain_attr->name,
                                  got < 0 ? fi_strerror(-got) : "the address was rejected");
}

/* Each name goes into the AV of every rail of mine on its fabric; a peer's rail 0 that matches
 * none of mine goes into my rail 0, the way one-rail PEs always reach each other. */
int fsh_fabric_insert_lanes(const uint8_t *names, size_t n, size_t len, size_t stride)
{
    if (n == 0) {
        return 0;
    }
    size_t alen = len - FSH_LANE_NAME_HEAD;
    size_t into[FSH_MAX_RAILS] = {0};
    for (size_t i = 0; i < n; i++) {
        const uint8_t *e = names + i * stride;
        uint32_t id;
        memcpy(&id, e, 4);
        bool placed = false;
        int rc = 0;
        for (int r = 0; r < fab.nrails && rc == 0; r++) {
            if (fab.rail[r].fabric_id == id) {
                rc = insert_lane(r, e, alen, into);
                placed = true;
            }
        }
        if (rc == 0 && !placed && e[4] == 0) {
            rc = insert_lane(0, e, alen, into);
        }
        if (rc != 0) {
            return rc;
        }
    }
    char said[FSH_MAX_RAILS * 48] = "";
    for (int r = 0, at = 0; r < fab.nrails; r++) {
        at += snprintf(said + at, sizeof(said) - (size_t)at, "%s%zu into rail %s's AV",
                       r ? ", " : "", into[r], fab.rail[r].info->domain_attr->name);
    }
    FSH_DEBUG("contexts' endpoints of the job, %zu names: %s", n, said);
    return 0;
}

void fsh_fabric_lane_close(struct fid_ep *ep, struct fid_cq *cq)
{
    close_fid(ep ? &ep->fid : NULL, "a context's endpoint");
    close_fid(cq ? &cq->fid : NULL, "a context's completion queue");
}

bool fsh_fabric_counts_writes(void)
{
    return fab.rail[0].counting;
}

void fsh_fabric_writes(uint64_t *done, uint64_t *failed)
{
    *done = *failed = 0;
    for (int i = 0; i < fab.nrails; i++) {
        *done += fi_cntr_read(fab.rail[i].wcntr);
        *failed += fi_cntr_readerr(fab.rail[i].wcntr);
    }
}

/* The dead ways' bits: set atomically by whoever finds a way dead (the engine, a context's
 * endpoint), read without a lock. */
static inline unsigned dead_of(const struct route *r)
{
    return __atomic_load_n(&r->dead, __ATOMIC_ACQUIRE);
}

unsigned fsh_fabric_deaths(void)
{
    return __atomic_load_n(&fab.deaths, __ATOMIC_ACQUIRE);
}

bool fsh_fabric_multirail(void)
{
    return fab.routes != NULL;
}

unsigned fsh_fabric_ways(int pe)
{
    if (!fab.routes) {
        return 1;
    }
    const struct route *r = &fab.routes[pe];
    return (unsigned)r->n - (unsigned)__builtin_popcount(dead_of(r));
}

unsigned fsh_fabric_ways_all(int pe)
{
    return fab.routes ? fab.routes[pe].n : 1;
}

bool fsh_fabric_way_alive(int pe, unsigned way)
{
    return !fab.routes || !(dead_of(&fab.routes[pe]) & (1u << way));
}

static struct fsh_path way_path(int pe, unsigned w)
{
    const struct route *r = &fab.routes[pe];
    return (struct fsh_path){r->src[w], r->dst[w], r->addr[w], w};
}

/* Way w, or the next live one after it (w itself when none is). */
static unsigned live_from(const struct route *r, unsigned w)
{
    unsigned dead = dead_of(r);
    for (unsigned t = 0; t < r->n; t++) {
        unsigned v = (w + t) % r->n;
        if (!(dead & (1u << v))) {
            return v;
        }
    }
    return w;
}

/* The one way of a one-rail job (no address at all without a fabric: xport.c refuses the
 * operation before it would be posted). */
static inline struct fsh_path rail0_path(int pe)
{
    return (struct fsh_path){0, 0, fab.peers ? fab.peers[pe] : FI_ADDR_NOTAVAIL, 0};
}

struct fsh_path fsh_fabric_path(int pe, unsigned k)
{
    if (!fab.routes) {
        return rail0_path(pe);
    }
    const struct route *r = &fab.routes[pe];
    return way_path(pe, live_from(r, ((unsigned)fab.me + (unsigned)pe + k) % r->n));
}

unsigned fsh_fabric_k_of_way(int pe, unsigned way)
{
    unsigned n = fsh_fabric_ways_all(pe);
    return (way + n - ((unsigned)fab.me + (unsigned)pe) % n) % n;
}

struct fsh_path fsh_fabric_path_way(int pe, unsigned way)
{
    if (!fab.routes) {
        return rail0_path(pe);
    }
    return way_path(pe, live_from(&fab.routes[pe], way));
}

struct fsh_path fsh_fabric_path_atomic(int pe)
{
    if (!fab.routes) {
        return rail0_path(pe);
    }
    const struct route *r = &fab.routes[pe];
    for (unsigned w = 0; w < r->n; w++) {
        if (r->dst[w] == 0 && !(dead_of(r) & (1u << w))) {
            return way_path(pe, w);
        }
    }
    return way_path(pe, live_from(r, 0));
}

unsigned fsh_fabric_kill_way(int pe, unsigned way, const char *why)
{
    struct route *r = &fab.routes[pe];
    uint8_t was = __atomic_fetch_or(&r->dead, (uint8_t)(1u << way), __ATOMIC_ACQ_REL);
    if (!(was & (1u << way))) {
        __atomic_fetch_add(&fab.deaths, 1, __ATOMIC_RELEASE);
        unsigned left = fsh_fabric_ways(pe);
        FSH_WARN("rail %s: PE %d (its rail %d) %s: taken out of use, %u of %u way(s) to PE %d "
                 "left", fab.rail[r->src[way]].info->domain_attr->name, pe, r->dst[way], why,
                 left, r->n, pe);
    }
    return fsh_fabric_ways(pe);
}
