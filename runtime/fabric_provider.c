/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_provider.c: chooses the libfabric provider and the NIC, and says what they offer.
 *
 * Owns the choice (fi_getinfo's list, the entry for rail 0 and for each further rail) and how
 * struct fsh_fabric_attr is filled from it: the provider limits everyone else obeys (inject
 * size, message size, mr_mode, immediate-data size, queue depth). It opens nothing: fabric.c
 * opens the rails on the entries chosen here.
 *
 * Provider choice: FABSHMEM_PROVIDER or FI_PROVIDER when set; otherwise the first that works of
 * efa-direct (the efa provider's lean fabric, libfabric >= 2.0: taken with the profile's limits
 * below, unless the job needs what it lacks), efa, verbs;ofi_rxm, shm (only when every PE is on
 * this node) and tcp;ofi_rxm. Each is asked
 * for an RDM endpoint with RMA (atomics when available) and delivery-complete semantics: a
 * completion then means the data is visible at the target, which is what shmem_quiet promises
 * (without it, rma_post.c has targets count arrivals: FABSHMEM_REMOTE_COMPLETION).
 * No ordering between RMA operations is assumed beyond what the provider reports in msg_order
 * (order_waw, order_raw: rma_post.c completes injected puts with one ordered operation per
 * target where they are set), and none under the efa-direct profile.
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
 * Rails: a further NIC of the list must offer what rail 0's does, in the same provider
 * (fsh_fabric_provider_rail); fabric.c opens it.
 */
#include "fabric_provider.h"

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h> /* FI_MR_DMABUF: without it, dmabuf looks absent from any libfabric */
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"

static struct {
    struct fi_info *list; /* what fi_getinfo returned for rail 0; info is the entry opened */
    struct fi_info *info;
    bool want_hmem;     /* a device heap may be registered directly: ask for FI_HMEM first */
    bool efa_direct;    /* efa-direct, or the profile: use no more than it has */
    bool hmem_required; /* probe(): only with FI_HMEM (efa-direct for a GPU job) */
    int completion;     /* FABSHMEM_REMOTE_COMPLETION: COMPLETION_AUTO, _DELIVERY or _COUNT */
    bool want_safe;     /* ask for FI_THREAD_SAFE first (contexts' own endpoints, used at once
                         * by different threads: fsh_fabric_want_threads) */
    const char *fi_provider; /* FI_PROVIDER, which names the provider when prov is NULL */
} choice;

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

void fsh_fabric_provider_mr_str(uint64_t mode, char *buf, size_t len)
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

/* Headers of 1.20 or later define FI_MR_DMABUF in fi_domain.h: a build against them that does
 * not see it would silently refuse every dmabuf registration (as happened once, when this file
 * lost the include). */
#if (FI_MAJOR_VERSION > 1 || FI_MINOR_VERSION >= 20) && !defined(FI_MR_DMABUF)
#error "libfabric >= 1.20 headers without FI_MR_DMABUF: include <rdma/fi_domain.h>"
#endif

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
    /* The RMA orderings quiet's flush uses (rma_post.c), where the provider has them at no
     * cost: shm and tcp;ofi_rxm report them only when asked (1.17 and 2.x alike). Never asked
     * of efa, whose SRD is unordered (ordering would be emulated) and whose efa-direct has
     * none. Without them, the same hints without any. */
    uint64_t order = FI_ORDER_WAW | FI_ORDER_RAW;
#ifdef FI_ORDER_RMA_WAW
    order |= FI_ORDER_RMA_WAW | FI_ORDER_RMA_RAW;
#endif
    const char *name = prov ? prov : choice.fi_provider;
    if (!name || !name[0] || strstr(name, "efa") || choice.efa_direct) {
        order = 0; /* efa, or whatever libfabric picks (it may be efa) */
    }
    int rc = -FI_ENODATA;
    for (int o = order ? 0 : 1; o < 2 && rc != 0; o++) {
        hints->tx_attr->msg_order = o == 0 ? order : 0;
        if (choice.want_safe) {
            /* Endpoints of one domain used at once by different threads (contexts' own): the
             * provider must guard what they share. A provider without it keeps the engine
             * lock. */
            hints->domain_attr->threading = FI_THREAD_SAFE;
            rc = fi_getinfo(api_version(caps), NULL, NULL, 0, hints, out);
            hints->domain_attr->threading = FI_THREAD_DOMAIN;
        }
        if (rc != 0) {
            rc = fi_getinfo(api_version(caps), NULL, NULL, 0, hints, out);
        }
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
    uint64_t refused = choice.efa_direct ? FI_ATOMIC | FI_DELIVERY_COMPLETE : 0;
    /* With a device heap to register, FI_HMEM (and FI_MR_HMEM) first: providers enable GPU
     * memory only when asked. Without it, the same list: the staging path needs nothing. */
    for (size_t i = 0; choice.want_hmem && i < sizeof(tries) / sizeof(tries[0]); i++) {
        if ((tries[i][0] | tries[i][1]) & refused) {
            continue;
        }
        rc = fsh_fabric_getinfo(prov, domain, mr_offer | FI_MR_HMEM, tries[i][0] | FI_HMEM,
                                tries[i][1], out);
        if (rc == 0) {
            return 0;
        }
    }
    for (size_t i = 0; !choice.hmem_required && i < sizeof(tries) / sizeof(tries[0]); i++) {
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

/* Point choice.info at the entry of the probed list whose domain is name. */
static bool has_domain(const char *name)
{
    for (struct fi_info *i = choice.list; i; i = i->next) {
        if (strcmp(i->domain_attr->name, name) == 0) {
            choice.info = i;
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
    for (struct fi_info *i = choice.list; i; i = i->next) {
        if (!strstr(seen, i->domain_attr->name) && used < sizeof(seen)) {
            used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%s%s", used ? "," : "",
                                     i->domain_attr->name);
        }
    }
    snprintf(prov_name, sizeof(prov_name), "%s", choice.list->fabric_attr->prov_name);
    fi_freeinfo(choice.list);
    choice.list = choice.info = NULL;
    return fsh_err(-ENXIO, fix, "%s: provider %s has no domain '%s' (its domains: %s)", var,
                   prov_name, name, seen);
}

/* Probe one provider (NULL: libfabric's own order under FI_PROVIDER) and, when a NIC applies,
 * make choice.info the entry on that NIC (a->nic_hint names it). Returns 0, the probe's
 * -FI_E* when the provider is not usable, or -ENXIO (recorded) when a forced NIC is not among
 * its domains. */
static int probe_on(const char *prov, const struct fsh_config *cfg,
                    const struct fsh_fabric_nic *nic, uint64_t mr_offer,
                    struct fsh_fabric_attr *a)
{
    const char *want = NULL;
    if (!cfg->FABSHMEM_DOMAIN[0] && nic && nic->count > 0 && nic->names[0] && nic->names[0][0]) {
        want = nic->names[0];
    }
    const char *hint = cfg->FABSHMEM_DOMAIN[0] ? cfg->FABSHMEM_DOMAIN
                                               : (hint_filters(prov) ? want : NULL);
    int rc = probe(prov, hint, mr_offer, &choice.list);
    if (rc != 0 && want && hint == want && !nic->forced) {
        /* The nearest NIC is not one of this provider's domains: let the provider choose. */
        FSH_DEBUG("provider %s has no domain %s; not using the NIC hint", prov, want);
        rc = probe(prov, NULL, mr_offer, &choice.list);
    }
    if (rc != 0) {
        return rc;
    }
    choice.info = choice.list;
    const char *got = choice.list->fabric_attr->prov_name;
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
            snprintf(a->nic_hint, sizeof(a->nic_hint), "%s", want);
        } else {
            FSH_DEBUG("provider %s offers no domain %s; the provider chooses", got, want);
        }
        return 0;
    }
    rc = pick_domain(want, "FABSHMEM_NIC",
                         "set FABSHMEM_NIC to one of the provider's domains (fi_info -p PROVIDER "
                         "lists them; for tcp also set FI_TCP_IFACE), or unset it");
    if (rc == 0) {
        snprintf(a->nic_hint, sizeof(a->nic_hint), "%s", want);
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
    return choice.completion != COMPLETION_DELIVERY;
}

/* probe_on() for efa-direct: with its limits applied to what is asked (refused otherwise). */
static int probe_direct(const struct fsh_config *cfg, const struct fsh_fabric_nic *nic,
                        uint64_t mr_offer, struct fsh_fabric_attr *a)
{
    bool profile = choice.efa_direct;
    choice.efa_direct = true;
    choice.hmem_required = choice.want_hmem;
    int rc = probe_on(EFA_DIRECT, cfg, nic, mr_offer, a);
    choice.hmem_required = false;
    if (rc != 0) {
        choice.efa_direct = profile;
    }
    return rc;
}

static int choose(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                  const struct fsh_fabric_nic *nic, uint64_t mr_offer,
                  struct fsh_fabric_attr *a)
{
    const char *forced = cfg->FABSHMEM_PROVIDER[0] ? cfg->FABSHMEM_PROVIDER : NULL;
    if (forced && strcmp(forced, EFA_DIRECT) == 0) {
        choice.efa_direct = true;
    }
    choice.fi_provider = cfg->FI_PROVIDER;
    if (forced || cfg->FI_PROVIDER[0]) {
        /* With only FI_PROVIDER set, libfabric filters its own list (FI_PROVIDER=tcp gives
         * tcp;ofi_rxm for RDM); prov_name NULL lets it do that. */
        int rc = probe_on(forced, cfg, nic, mr_offer, a);
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
        int rc = direct ? probe_direct(cfg, nic, mr_offer, a)
                        : probe_on(default_order[i], cfg, nic, mr_offer, a);
        if (rc == 0 || rc == -ENXIO) {
            return rc;
        }
        FSH_DEBUG("provider %s not usable here", default_order[i]);
    }
    return fsh_err(-ENODEV, "install a libfabric provider (libfabric-bin lists them: fi_info -t FI_EP_RDM)",
                   "no libfabric provider offers FI_EP_RDM with RMA (tried efa-direct, efa, verbs;ofi_rxm, %stcp;ofi_rxm)",
                   one_node ? "shm, " : "");
}

static void fill_attr(const struct fsh_config *cfg, uint64_t mr_offer,
                      struct fsh_fabric_attr *a)
{
    struct fi_info *fi = choice.info;
    snprintf(a->prov, sizeof(a->prov), "%s", fi->fabric_attr->prov_name);
    snprintf(a->domain, sizeof(a->domain), "%s", fi->domain_attr->name);
    a->addr_format = fi->addr_format;
    a->mr_mode = (uint64_t)fi->domain_attr->mr_mode;
    /* A FABSHMEM_MR_MODE given by the user is not only offered but obeyed: the EFA code paths
     * (local descriptors, provider keys, registration of allocated memory only) then run on
     * providers that would not require them. Virtual addressing always follows the provider. */
    uint64_t obey = a->mr_mode | (fsh_env_is_set("FABSHMEM_MR_MODE") ? mr_offer : 0);
    if (choice.efa_direct) {
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
    uint64_t waw = FI_ORDER_WAW, raw = FI_ORDER_RAW;
#ifdef FI_ORDER_RMA_WAW
    waw |= FI_ORDER_RMA_WAW; /* libfabric 2.x names RMA's own orderings apart */
    raw |= FI_ORDER_RMA_RAW;
#endif
    a->order_waw = (fi->tx_attr->msg_order & waw) != 0;
    a->order_raw = (fi->tx_attr->msg_order & raw) != 0;
    uint64_t araw = FI_ORDER_RAW | FI_ORDER_ATOMIC_RAW; /* 1.x's RAW names atomics too */
    a->order_atomic_raw = (fi->tx_attr->msg_order & araw) && (fi->rx_attr->msg_order & araw);
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
    if (choice.efa_direct) {
        /* probe() asked for neither atomics nor delivery-complete; the rest is clamped. */
        a->has_atomics = false;
        a->delivery_complete = false;
        a->order_waw = false; /* efa-direct orders nothing */
        a->order_raw = false;
        a->order_atomic_raw = false;
        a->rma_iov_limit = 1;
        a->cq_data_size = a->cq_data_size < 4 ? a->cq_data_size : 4;
        a->av_first = true;
    }
    a->count_arrivals = choice.completion == COMPLETION_COUNT ||
                        (choice.completion == COMPLETION_AUTO && !a->delivery_complete);
    if (!a->delivery_complete && choice.completion == COMPLETION_DELIVERY) {
        FSH_WARN("provider %s lacks FI_DELIVERY_COMPLETE and FABSHMEM_REMOTE_COMPLETION="
                 "delivery: quiet trusts its completions to mean the data is at the target",
                 a->prov);
    }
}

int fsh_fabric_provider_choose(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                               const struct fsh_fabric_nic *nic, struct fsh_fabric_attr *attr,
                               struct fi_info **info)
{
    /* The words were checked at load (env.c), for every job. */
    uint64_t mr_offer = mr_mode_offered();
    choice.efa_direct = fsh_env_word_index("FABSHMEM_PROVIDER_PROFILE") == 1;
    choice.completion = fsh_env_word_index("FABSHMEM_REMOTE_COMPLETION");
    choice.want_hmem = cfg->FABSHMEM_DEVICE_HEAP_SIZE > 0 &&
                       strcmp(cfg->FABSHMEM_DEVICE_PATH, "staging") != 0;
    int rc = choose(cfg, boot, nic, mr_offer, attr);
    if (rc != 0) {
        return rc;
    }
    choice.efa_direct = choice.efa_direct || is_efa_direct(choice.info);
    fill_attr(cfg, mr_offer, attr);
    if (attr->cq_data_size < 4) {
        return fsh_err(-ENOTSUP, "choose a provider with remote CQ data (efa, shm, tcp)",
                       "provider %s carries %zu bytes of immediate data; fabshmem needs 4",
                       attr->prov, attr->cq_data_size);
    }
    if (attr->mr_key_size > 8) {
        return fsh_err(-ENOTSUP, "choose another provider",
                       "provider %s uses %zu-byte memory keys; fabshmem supports up to 8",
                       attr->prov, attr->mr_key_size);
    }
    *info = choice.info;
    return 0;
}

/* A further rail's entry: rail 0's list has one for it where the provider lists every
 * interface (tcp); efa and verbs are asked with the name as domain hint. */
struct fi_info *fsh_fabric_provider_rail(const char *name, struct fsh_fabric_attr *attr,
                                         struct fi_info **own)
{
    const struct fi_info *f = choice.info;
    struct fi_info *got = NULL;
    *own = NULL;
    for (struct fi_info *i = choice.list; i && !got; i = i->next) {
        if (strcmp(i->domain_attr->name, name) == 0) {
            got = i;
        }
    }
    if (!got && hint_filters(f->fabric_attr->prov_name) &&
        probe(is_efa_direct(f) ? EFA_DIRECT : f->fabric_attr->prov_name, name,
              mr_mode_offered(), own) == 0) {
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
                got->domain_attr->cq_data_size < attr->cq_data_size)) {
        FSH_WARN("NIC %s offers other capabilities than rail 0's %s on provider %s: not used "
                 "as a rail", name, f->domain_attr->name, f->fabric_attr->prov_name);
        got = NULL;
    }
    if (!got && *own) {
        fi_freeinfo(*own);
        *own = NULL;
    }
    if (got && got->tx_attr->inject_size < attr->inject_size) {
        attr->inject_size = got->tx_attr->inject_size;
    }
    if (got && got->ep_attr->max_msg_size < attr->max_msg_size) {
        attr->max_msg_size = got->ep_attr->max_msg_size;
    }
    return got;
}

/* FABSHMEM_PROVIDER_PROFILE's words (env.c): native, efa-direct. */
const char *fsh_fabric_provider_profile(void)
{
    return fsh_env_words("FABSHMEM_PROVIDER_PROFILE", NULL)[choice.efa_direct];
}

void fsh_fabric_want_threads(bool on)
{
    choice.want_safe = on;
}

bool fsh_fabric_provider_threads(void)
{
    return choice.want_safe;
}

void fsh_fabric_provider_close(void)
{
    if (choice.list) {
        fi_freeinfo(choice.list);
    }
    memset(&choice, 0, sizeof(choice));
}
