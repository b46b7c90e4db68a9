/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.c: opens the PE's rails on the provider fabric_provider.c chose.
 *
 * Owns each rail's fabric, domain, address vector, completion queue, RDM endpoint and write
 * counter, the contexts' own endpoints on them (lanes), the description of the provider every
 * other module obeys (fsh_fabric_attr), and shm's region names in /dev/shm. It never posts
 * data operations (xport.c does) and never reads the CQ (progress.c does).
 *
 * Rails: where the first NIC was applied, every further NIC of the list (FABSHMEM_RAILS caps
 * them) gets an endpoint of its own with the same provider and capabilities: a rail. Their
 * addresses travel in the exchange slot after the first's, with their fabrics' ids; at AV
 * insertion fabric_route.c lists, per peer, the ways (my rail, its rail with the same fabric)
 * and spreads operations over them; a way found dead (live.c, xport.c) is skipped.
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

/* The rails and what the provider offers on them. */
static struct {
    struct rail rail[FSH_MAX_RAILS];
    int n;
    int me;                      /* this PE (the routes need it) */
    struct fsh_fabric_attr attr; /* the provider's, as fabric_provider.c filled it */
} rails;

/* The names shm gave its regions in /dev/shm, removed on every path that ends the job. */
static struct {
    char path[128];   /* /dev/shm/<name> of our shm region, or "" */
    char *peer;       /* [pe * SHM_PATH_MAX]: peers' shm regions (ours too), or "" */
    int npeers;       /* entries of peer */
    int guard_fd;     /* write end of the guard's pipe, while guard is set */
    pid_t guard;      /* the guard of path's name during init (see guard_start), or 0 */
} shm_names;

static void guard_start(const char *path);

#define SHM_PATH_MAX 96
#define SHM_PREFIX "fi_shm://fabshmem-"

static int fi_fail(int rc, const char *what)
{
    return fsh_err(rc, "check the provider with 'fi_info -v'; FABSHMEM_LOG=debug shows more",
                   "%s failed on provider %s: %s", what, rails.attr.prov, fi_strerror(-rc));
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
                      "put asks for a completion entry", rails.attr.prov, fi_strerror(-rc));
            return fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
        }
        FSH_DEBUG("provider %s: no write counter (%s); every put asks for a completion entry",
                  rails.attr.prov, fi_strerror(-rc));
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
    const struct fsh_fabric_attr *a = &rails.attr;
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
            snprintf(shm_names.path, sizeof(shm_names.path), "/dev/shm/%s",
                     name + strlen("fi_shm://"));
            guard_start(shm_names.path);
        }
    }
    rc = fi_ep_bind(r->ep, &r->av->fid, 0);
    if (rc == 0) {
        rc = bind_completions(r, first ? cfg->FABSHMEM_PUT_COUNTER != 0 : rails.rail[0].counting);
    }
    /* Whoever posts decides by rail 0 whether a write is counted: every rail must agree. */
    if (rc == 0 && !first && r->counting != rails.rail[0].counting) {
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

/* Rails 1..: the further NICs of the PE's list (FABSHMEM_RAILS caps how many), each its own
 * endpoint. Only where rail 0 is on the NIC asked for: a provider that chose its own domain
 * (shm, or tcp without FABSHMEM_NIC) has one rail. A NIC the provider does not have is an
 * error when the user named it, else it is skipped. */
static int open_rails(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                      const struct fsh_fabric_nic *nic)
{
    long want = cfg->FABSHMEM_RAILS > 0 ? cfg->FABSHMEM_RAILS : FSH_MAX_RAILS;
    if (want > FSH_MAX_RAILS) {
        return fsh_err(-EINVAL, "use 0 (every NIC of the PE's list, at most 4) or 1 to 4",
                       "FABSHMEM_RAILS=%ld is more than %d", cfg->FABSHMEM_RAILS,
                       FSH_MAX_RAILS);
    }
    if (!rails.attr.nic_hint[0] || cfg->FABSHMEM_DOMAIN[0]) {
        return 0;
    }
    for (int i = 1; i < nic->count && rails.n < want; i++) {
        const char *name = nic->names[i];
        bool dup = false;
        for (int k = 0; k < rails.n; k++) {
            dup = dup || strcmp(rails.rail[k].info->domain_attr->name, name) == 0;
        }
        if (dup) {
            continue;
        }
        struct rail *r = &rails.rail[rails.n];
        r->info = fsh_fabric_provider_rail(name, &rails.attr, &r->own);
        if (!r->info) {
            if (nic->forced) {
                return fsh_err(-ENXIO, "set FABSHMEM_NIC to NICs of one provider (fi_info -p "
                               "PROVIDER lists them; for tcp also FI_TCP_IFACE), or "
                               "FABSHMEM_RAILS=1",
                               "FABSHMEM_NIC: provider %s cannot open a rail on '%s'",
                               rails.attr.prov, name);
            }
            FSH_DEBUG("no rail on NIC %s: provider %s has no such domain", name, rails.attr.prov);
            continue;
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
        rails.n++;
    }
    return 0;
}

int fsh_fabric_open(const struct fsh_config *cfg, const struct fsh_boot_info *boot,
                    const struct fsh_fabric_nic *nic)
{
    struct fsh_fabric_attr *a = &rails.attr;
    int rc = fsh_fabric_provider_choose(cfg, boot, nic, a, &rails.rail[0].info);
    if (rc != 0) {
        return rc;
    }
    rails.me = boot->rank;
    rc = open_rail(cfg, boot, &rails.rail[0], true);
    if (rc != 0) {
        return rc;
    }
    rails.n = 1;
    rc = open_rails(cfg, boot, nic);
    if (rc != 0) {
        return rc;
    }
    char mm[96];
    fsh_fabric_provider_mr_str(a->mr_mode, mm, sizeof(mm));
    FSH_INFO("provider %s (profile %s) domain %s%s%s mr_mode %s inject %zu max_msg %zu "
             "cq_data %zu tx_depth %zu rails %d", a->prov, fsh_fabric_provider_profile(), a->domain,
             a->nic_hint[0] ? " (nic hint) " : "", a->nic_hint, mm, a->inject_size,
             a->max_msg_size, a->cq_data_size, a->tx_depth, rails.n);
    return 0;
}

void fsh_fabric_open_none(const struct fsh_boot_info *boot)
{
    memset(&rails.attr, 0, sizeof(rails.attr));
    rails.me = boot->rank;
    rails.n = 0;
    /* What the layers above read of a provider, as if it were an ideal one they never use:
     * no registration, no inject, nothing to wait for at the target. */
    rails.attr.mr_virt_addr = true;
    rails.attr.delivery_complete = true;
    rails.attr.max_msg_size = (size_t)1 << 40;
    rails.attr.rma_iov_limit = 1;
    rails.attr.cq_data_size = 8;
    rails.attr.tx_depth = 64;
    rails.attr.mr_key_size = 8;
    FSH_INFO("no fabric: every PE of the job runs on this node and maps the others' memory");
}

bool fsh_fabric_none(void)
{
    return rails.n == 0;
}

/* The rails' trailer, after rail 0's address in the exchange slot (only with more than one
 * rail: a one-rail PE's slot is its address alone): the rail count, each rail's fabric id,
 * the address of every further rail after its length byte, then the caller's extra bytes (the
 * further rails' memory keys) after theirs. */
int fsh_fabric_getname(void *buf, size_t buflen, const void *extra, size_t extra_len)
{
    if (rails.n == 0) {
        return 0; /* no fabric: no address */
    }
    size_t len = buflen;
    int rc = fi_getname(&rails.rail[0].ep->fid, buf, &len);
    if (rc == 0 && rails.n > 1) {
        uint8_t *t = (uint8_t *)buf + len, *end = (uint8_t *)buf + buflen;
        if ((size_t)(end - t) < 1 + 4 * (size_t)rails.n) {
            rc = -FI_ETOOSMALL;
        } else {
            *t++ = (uint8_t)rails.n;
            for (int i = 0; i < rails.n; i++, t += 4) {
                memcpy(t, &rails.rail[i].fabric_id, 4);
            }
        }
        for (int i = 1; i < rails.n && rc == 0; i++) {
            size_t n = end - t > 1 ? (size_t)(end - t) - 1 : 0;
            rc = n ? fi_getname(&rails.rail[i].ep->fid, t + 1, &n) : -FI_ETOOSMALL;
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
        return fsh_err(-EOVERFLOW, rails.n > 1 ? "use fewer rails (FABSHMEM_RAILS)" : "report the provider; fabshmem's address slot is too small",
                       "provider %s: the addresses of %d rail(s) need more than the %zu "
                       "bytes of the exchange slot", rails.attr.prov, rails.n, buflen);
    }
    if (rc != 0) {
        return fi_fail(rc, "fi_getname");
    }
    rails.attr.addrlen = len;
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
    shm_names.guard = (pid_t)pid;
    shm_names.guard_fd = p[1];
}

/* The name is gone for good (init's end): the guard may go. Not on the paths that end the job:
 * a thread of the PE may still be creating the region there, and the guard's removal after the
 * PE is dead is the one that cannot come too early. */
static void guard_stop(void)
{
    if (shm_names.guard > 0) {
        ssize_t n = write(shm_names.guard_fd, "d", 1);
        (void)n;
        close(shm_names.guard_fd);
        (void)waitpid(shm_names.guard, NULL, __WCLONE);
        shm_names.guard = 0;
    }
}

/* The /dev/shm files of the shm regions our PEs named (fi_setname above), for the abort path. */
static void remember_shm_regions(const uint8_t *slots, const uint16_t *lens, int npes)
{
    shm_names.peer = calloc((size_t)npes, SHM_PATH_MAX);
    if (!shm_names.peer) {
        return; /* only cleanup is lost */
    }
    shm_names.npeers = npes;
    for (int i = 0; i < npes; i++) {
        const char *a = (const char *)slots + (size_t)i * FSH_ADDR_MAX;
        size_t n = strnlen(a, lens[i]);
        size_t skip = strlen("fi_shm://");
        if (n > strlen(SHM_PREFIX) && n - skip + strlen("/dev/shm/") < SHM_PATH_MAX &&
            strncmp(a, SHM_PREFIX, strlen(SHM_PREFIX)) == 0) {
            snprintf(&shm_names.peer[(size_t)i * SHM_PATH_MAX], SHM_PATH_MAX, "/dev/shm/%.*s",
                     (int)(n - skip), a + skip);
        }
    }
}

int fsh_fabric_insert_peers(const uint8_t *slots, const uint16_t *lens, int npes)
{
    struct fsh_route_rail mine[FSH_MAX_RAILS];
    for (int i = 0; i < rails.n; i++) {
        mine[i] = (struct fsh_route_rail){rails.rail[i].av, rails.rail[i].fabric_id,
                                          rails.rail[i].info->domain_attr->name};
    }
    int rc = fsh_fabric_route_insert(&rails.attr, mine, rails.n, rails.me, slots, lens, npes);
    if (fsh_fabric_named_regions()) {
        remember_shm_regions(slots, lens, npes);
    }
    return rc;
}

void fsh_fabric_describe(char *buf, size_t len)
{
    if (rails.n == 0) {
        snprintf(buf, len, "none: every PE runs on this node and maps the others' memory "
                 "(FABSHMEM_FABRIC=always opens a provider all the same)");
        return;
    }
    char mm[96], nics[FSH_MAX_RAILS * 72] = "";
    const char *fabric = rails.rail[0].info->fabric_attr->name;
    fsh_fabric_provider_mr_str(rails.attr.mr_mode, mm, sizeof(mm));
    for (int i = 0, at = 0; i < rails.n && rails.n > 1; i++) {
        at += snprintf(nics + at, sizeof(nics) - (size_t)at, "%s%s", i ? ", " : " (",
                       rails.rail[i].info->domain_attr->name);
        if (i == rails.n - 1) {
            snprintf(nics + at, sizeof(nics) - (size_t)at, ")");
        }
    }
    snprintf(buf, len,
             "provider %s, fabric %s (profile %s), domain %s, rails %d%s, address %zu bytes, "
             "mr_mode %s%s%s, inject %zu, max message %zu, remote segments per write %zu, immediate "
             "data %zu bytes, tx depth %zu, atomics %s, delivery-complete %s, %s progress, "
             "write counter %s",
             rails.attr.prov, fabric ? fabric : "-", fsh_fabric_provider_profile(),
             rails.attr.domain, rails.n, nics,
             rails.attr.addrlen, mm,
             rails.attr.mr_local && !(rails.attr.mr_mode & FI_MR_LOCAL) ? " (+local forced)" : "",
             rails.attr.mr_virt_addr ? "" : " (offset addressing)", rails.attr.inject_size,
             rails.attr.max_msg_size, rails.attr.rma_iov_limit, rails.attr.cq_data_size,
             rails.attr.tx_depth, rails.attr.has_atomics ? "yes" : "no",
             rails.attr.delivery_complete ? "yes" : "no",
             rails.attr.manual_progress ? "manual" : "auto",
             rails.rail[0].counting ? "yes (with selective completion)" : "no");
}

void fsh_fabric_unlink_shared(void)
{
    if (shm_names.path[0]) {
        unlink(shm_names.path);
    }
    /* Once every PE has connected to every peer (init reads from each: shm maps a region at
     * the first operation to it) the names can go, and init removes them. Before that, a PE
     * killed outright (SIGKILL) removes nothing, so whoever of the job ends through here
     * removes every region it knows. Mappings outlive names: unlinking hurts no live peer. */
    for (int i = 0; shm_names.peer && i < shm_names.npeers; i++) {
        if (shm_names.peer[(size_t)i * SHM_PATH_MAX]) {
            unlink(&shm_names.peer[(size_t)i * SHM_PATH_MAX]);
        }
    }
}

bool fsh_fabric_named_regions(void)
{
    return rails.attr.addr_format == FI_ADDR_STR && strcmp(rails.attr.prov, "shm") == 0;
}

void fsh_fabric_names_gone(void)
{
    guard_stop();
}

void fsh_fabric_close(void)
{
    for (int i = FSH_MAX_RAILS - 1; i >= 0; i--) {
        close_rail(&rails.rail[i]);
    }
    fsh_fabric_provider_close();
    fsh_fabric_route_close();
    free(shm_names.peer);
    memset(&rails, 0, sizeof(rails));
    memset(&shm_names, 0, sizeof(shm_names));
}

const struct fsh_fabric_attr *fsh_fabric_attr(void)
{
    return &rails.attr;
}

int fsh_fabric_nrails(void)
{
    return rails.n;
}

const char *fsh_fabric_rail_name(int rail)
{
    return rails.rail[rail].info->domain_attr->name;
}

struct fid_domain *fsh_fabric_domain(int rail)
{
    return rails.rail[rail].domain;
}

struct fid_ep *fsh_fabric_ep(int rail)
{
    return rails.rail[rail].ep;
}

struct fid_cq *fsh_fabric_cq(int rail)
{
    return rails.rail[rail].cq;
}

const char *fsh_fabric_lanes_why_not(void)
{
    if (rails.n == 0) {
        return "the job opened no fabric";
    }
    if (!fsh_fabric_provider_threads()) {
        return "the program did not ask for SHMEM_THREAD_MULTIPLE, so one thread calls at a time";
    }
    if (!rails.attr.thread_safe) {
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
    struct rail *r = &rails.rail[rail];
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
                       rails.attr.prov, r->info->domain_attr->name, fi_strerror(rc < 0 ? -rc : rc));
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
    memcpy(buf, &rails.rail[rail].fabric_id, 4);
    buf[4] = (uint8_t)rail;
    *len = l + FSH_LANE_NAME_HEAD;
    return 0;
}

/* One lane name's address into rail r's AV, counted in into[r]. */
static int insert_lane(int r, const uint8_t *name, size_t alen, size_t *into)
{
    fi_addr_t addr;
    int got = fi_av_insert(rails.rail[r].av, name + FSH_LANE_NAME_HEAD, 1, &addr, 0, NULL);
    into[r] += got == 1;
    return got == 1 ? 0 : fsh_err(got < 0 ? got : -EPROTO, "set FABSHMEM_CTX_ENDPOINTS=0",
                                  "fi_av_insert of a context's endpoint address (%zu bytes) on "
                                  "%s, rail %s, failed: %s", alen, rails.attr.prov,
                                  rails.rail[r].info->domain_attr->name,
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
        for (int r = 0; r < rails.n && rc == 0; r++) {
            if (rails.rail[r].fabric_id == id) {
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
    for (int r = 0, at = 0; r < rails.n; r++) {
        at += snprintf(said + at, sizeof(said) - (size_t)at, "%s%zu into rail %s's AV",
                       r ? ", " : "", into[r], rails.rail[r].info->domain_attr->name);
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
    return rails.rail[0].counting;
}

void fsh_fabric_writes(uint64_t *done, uint64_t *failed)
{
    *done = *failed = 0;
    for (int i = 0; i < rails.n; i++) {
        *done += fi_cntr_read(rails.rail[i].wcntr);
        *failed += fi_cntr_readerr(rails.rail[i].wcntr);
    }
}
