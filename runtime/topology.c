/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology.c: which GPU, which NIC(s) and which cores each PE of a node uses, and the binding.
 *
 * Owns the hwloc topology of this node (or of a stored XML file), its reduction to plain data
 * (GPUs, fabric NICs, NUMA nodes with their cores, each with its ancestor chain), the map from
 * local rank to GPU, NIC(s) and cores, and the CPU binding of this PE. The map is a pure
 * function of the plain data, so the unit tests run it on real machines' XML files.
 *
 * Rules of the map:
 *   - GPU: local rank r takes visible GPU r mod n (CUDA_VISIBLE_DEVICES order), unless
 *     FABSHMEM_GPU says otherwise. Without a GPU a PE is anchored to a NUMA node instead (local
 *     ranks spread over the NUMA nodes in blocks, as a launcher maps by core).
 *   - NIC: the NICs whose common ancestor with the anchor is the closest (first in the anchor's
 *     ancestor chain: same PCIe switch, then host bridge, then package; across sockets the
 *     smallest NUMA distance). The PEs that share one such set split it: two PEs on four equally
 *     near NICs take two each (p5en), eight PEs on one NIC all take it (there is nothing else
 *     near). The whole slice is kept, first NIC first: the endpoint opens on it, and the RMA
 *     layer may stripe over the rest.
 *   - Cores: the cores of the anchor's NUMA node, split evenly between the PEs anchored there;
 *     no binding when there are fewer cores than PEs.
 * hwloc_get_common_ancestor_obj() is never used: it is wrong for I/O objects in hwloc 2.9, so
 * chains are walked here. This module never opens anything of libfabric and never fails init
 * because hwloc found nothing: no GPU means CPU-anchored PEs, no NIC means no hint.
 */
#include "topology.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "log.h"

/* ---------------------------------------------------------------- reading hwloc */

static enum fsh_topo_kind kind_of(hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_BRIDGE) {
        return o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ? FSH_TOPO_HOSTBRIDGE
                                                                     : FSH_TOPO_SWITCH;
    }
    if (o->type == HWLOC_OBJ_PCI_DEVICE || o->type == HWLOC_OBJ_OS_DEVICE) {
        return FSH_TOPO_PCI;
    }
    return o->parent ? FSH_TOPO_CPU : FSH_TOPO_MACHINE;
}

static void fill_chain(hwloc_obj_t o, struct fsh_topo_chain *c)
{
    c->n = 0;
    for (; o && c->n < FSH_TOPO_CHAIN; o = o->parent) {
        c->id[c->n] = o->gp_index;
        c->kind[c->n] = (uint8_t)kind_of(o);
        c->n++;
    }
}

static void busid_str(hwloc_obj_t pci, char *buf, size_t len)
{
    snprintf(buf, len, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
             pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static hwloc_obj_t pci_ancestor(hwloc_obj_t o)
{
    for (; o; o = o->parent) {
        if (o->type == HWLOC_OBJ_PCI_DEVICE) {
            return o;
        }
    }
    return NULL;
}

/* Index in m->numa of the first NUMA node (with cores) local to an I/O object. */
static int numa_of(const struct fsh_topo_machine *m, hwloc_topology_t t, hwloc_obj_t o)
{
    hwloc_obj_t cpu = hwloc_get_non_io_ancestor_obj(t, o);
    if (!cpu || !cpu->nodeset) {
        return -1;
    }
    for (int i = 0; i < m->nnuma; i++) {
        if (hwloc_bitmap_isset(cpu->nodeset, m->numa[i].os_index) && m->numa[i].ncores > 0) {
            return i;
        }
    }
    return -1;
}

/* A GPU: any PCI 3D controller, or a VGA/display controller from a GPU vendor (NVIDIA, AMD).
 * The vendor test keeps out the BMC's VGA (ASPEED) and EC2's virtual display (1d0f:1111). */
static bool is_gpu(hwloc_obj_t pci)
{
    unsigned cls = pci->attr->pcidev.class_id, vendor = pci->attr->pcidev.vendor_id;
    if (cls == 0x0302) {
        return true;
    }
    return (cls >> 8) == 0x03 && (vendor == 0x10de || vendor == 0x1002);
}

static int cmp_gpu(const void *a, const void *b)
{
    return strcmp(((const struct fsh_topo_gpu *)a)->busid, ((const struct fsh_topo_gpu *)b)->busid);
}

static int cmp_nic(const void *a, const void *b)
{
    const struct fsh_topo_nic *x = a, *y = b;
    int c = strcmp(x->busid, y->busid);
    return c ? c : strcmp(x->name, y->name);
}

static int read_numa(struct fsh_topo_machine *m, hwloc_topology_t t)
{
    int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    int ncores_all = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    hwloc_obj_type_t core_type = ncores_all > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    m->numa = calloc(n > 0 ? (size_t)n : 1, sizeof(*m->numa));
    if (!m->numa) {
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
        struct fsh_topo_numa *z = &m->numa[m->nnuma++];
        z->os_index = node->os_index;
        z->cpuset = hwloc_bitmap_dup(node->cpuset);
        fill_chain(node->parent, &z->chain);
        int total = hwloc_get_nbobjs_by_type(t, core_type);
        z->cores = calloc(total > 0 ? (size_t)total : 1, sizeof(hwloc_bitmap_t));
        if (!z->cpuset || !z->cores) {
            return -ENOMEM;
        }
        for (int c = 0; c < total; c++) {
            hwloc_obj_t core = hwloc_get_obj_by_type(t, core_type, (unsigned)c);
            if (!hwloc_bitmap_iszero(core->cpuset) &&
                hwloc_bitmap_isincluded(core->cpuset, node->cpuset)) {
                z->cores[z->ncores++] = hwloc_bitmap_dup(core->cpuset);
            }
        }
    }
    return 0;
}

static void read_distances(struct fsh_topo_machine *m, hwloc_topology_t t)
{
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (m->nnuma < 2 || hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &d, 0, 0) != 0 ||
        nr < 1) {
        return;
    }
    m->dist = calloc((size_t)m->nnuma * (size_t)m->nnuma, sizeof(unsigned));
    for (int i = 0; m->dist && i < m->nnuma; i++) {
        for (int j = 0; j < m->nnuma; j++) {
            unsigned v = i == j ? 10 : 20; /* the ACPI SLIT convention when hwloc lacks a pair */
            for (unsigned a = 0; a < d->nbobjs; a++) {
                for (unsigned b = 0; b < d->nbobjs; b++) {
                    if (d->objs[a]->os_index == m->numa[i].os_index &&
                        d->objs[b]->os_index == m->numa[j].os_index) {
                        v = (unsigned)d->values[a * d->nbobjs + b];
                    }
                }
            }
            m->dist[i * m->nnuma + j] = v;
        }
    }
    hwloc_distances_release(t, d);
}

static int read_gpus(struct fsh_topo_machine *m, hwloc_topology_t t)
{
    int n = 0;
    for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(t, p));) {
        n += is_gpu(p);
    }
    m->gpus = calloc(n > 0 ? (size_t)n : 1, sizeof(*m->gpus));
    if (!m->gpus) {
        return -ENOMEM;
    }
    for (hwloc_obj_t p = NULL; (p = hwloc_get_next_pcidev(t, p));) {
        if (!is_gpu(p)) {
            continue;
        }
        struct fsh_topo_gpu *g = &m->gpus[m->ngpus++];
        busid_str(p, g->busid, sizeof(g->busid));
        g->vendor = p->attr->pcidev.vendor_id;
        g->device = p->attr->pcidev.device_id;
        /* OS device names vary (cuda0, nvml0, card0, none at all): kept for display only. */
        for (hwloc_obj_t c = p->io_first_child; c; c = c->next_sibling) {
            if (c->type == HWLOC_OBJ_OS_DEVICE && c->name && strncmp(c->name, "renderD", 7) != 0 &&
                (!g->osdev[0] || strncmp(c->name, "cuda", 4) == 0)) {
                snprintf(g->osdev, sizeof(g->osdev), "%s", c->name);
            }
        }
        g->numa = numa_of(m, t, p);
        fill_chain(p, &g->chain);
    }
    qsort(m->gpus, (size_t)m->ngpus, sizeof(*m->gpus), cmp_gpu);
    return 0;
}

/* Fabric NICs are the OpenFabrics OS devices (EFA's rdmapXsY, mlx5_N). A machine without any
 * (this development VM) offers its PCI network interfaces instead: the tcp provider's domains
 * are named after them. */
static bool is_nic(hwloc_obj_t o, bool want_rdma)
{
    if (o->type != HWLOC_OBJ_OS_DEVICE || !o->name) {
        return false;
    }
    if (want_rdma) {
        return o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
    }
    return o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && pci_ancestor(o) != NULL;
}

static int read_nics(struct fsh_topo_machine *m, hwloc_topology_t t)
{
    int n_rdma = 0, n_net = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(t, o));) {
        n_rdma += is_nic(o, true);
        n_net += is_nic(o, false);
    }
    bool rdma = n_rdma > 0;
    int n = rdma ? n_rdma : n_net;
    m->nics = calloc(n > 0 ? (size_t)n : 1, sizeof(*m->nics));
    if (!m->nics) {
        return -ENOMEM;
    }
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(t, o));) {
        if (!is_nic(o, rdma)) {
            continue;
        }
        struct fsh_topo_nic *x = &m->nics[m->nnics++];
        snprintf(x->name, sizeof(x->name), "%s", o->name);
        x->rdma = rdma;
        hwloc_obj_t pci = pci_ancestor(o);
        if (pci) {
            busid_str(pci, x->busid, sizeof(x->busid));
            x->vendor = pci->attr->pcidev.vendor_id;
            x->device = pci->attr->pcidev.device_id;
            /* EFA PCI ids: 1d0f:efa0 .. efa3 (one per generation so far). */
            x->efa = x->vendor == 0x1d0f && (x->device & 0xfff0) == 0xefa0;
            for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
                if (rdma && c->type == HWLOC_OBJ_OS_DEVICE && c->name &&
                    c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
                    snprintf(x->netdev, sizeof(x->netdev), "%s", c->name);
                }
            }
        }
        hwloc_obj_t at = pci ? pci : o->parent;
        x->numa = numa_of(m, t, at);
        fill_chain(at, &x->chain);
    }
    qsort(m->nics, (size_t)m->nnics, sizeof(*m->nics), cmp_nic);
    return 0;
}

/* This machine (xml NULL or "", shared NULL), an XML file, or this machine as another PE of the
 * node read it (shared: its XML export). */
static int load(const char *xml, const char *var, const char *shared, size_t shared_len,
                struct fsh_topo_machine **out)
{
    *out = NULL;
    struct fsh_topo_machine *m = calloc(1, sizeof(*m));
    if (!m) {
        return fsh_err(-ENOMEM, "", "out of memory for the topology");
    }
    bool from_xml = xml && xml[0];
    snprintf(m->source, sizeof(m->source), "%s",
             from_xml ? xml : shared ? "this machine (the node leader's copy)" : "this machine");
    if (from_xml && access(xml, R_OK) != 0) {
        int e = errno;
        fsh_topo_free(m);
        return fsh_err(-e,
                       "point it at an hwloc XML file (write one with 'lstopo --whole-io FILE.xml' "
                       "on a compute node), or unset it to read this machine",
                       "%s=%s: cannot read the topology file: %s", var ? var : "topology", xml,
                       strerror(e));
    }
    int rc = -EINVAL;
    if (hwloc_topology_init(&m->topo) != 0) {
        free(m);
        return fsh_err(-ENOMEM, "", "hwloc_topology_init failed");
    }
    /* I/O objects are filtered out by default, even from XML: keep them all. */
    hwloc_topology_set_io_types_filter(m->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!from_xml && shared) {
        /* Another PE of this node read it: the same machine, so binding to it is right. */
        hwloc_topology_set_flags(m->topo, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
        if (hwloc_topology_set_xmlbuffer(m->topo, shared, (int)shared_len) != 0) {
            rc = fsh_err(-EINVAL, "all PEs must run the same fabshmem and hwloc",
                         "hwloc cannot use the node leader's topology: %s", strerror(errno));
            goto free_m;
        }
    }
    if (from_xml && hwloc_topology_set_xml(m->topo, xml) != 0) {
        rc = fsh_err(-EINVAL, "check that the file is an hwloc XML topology (lstopo FILE.xml)",
                     "%s=%s: hwloc cannot use it: %s", var ? var : "topology", xml,
                     strerror(errno));
        goto free_m;
    }
    if (hwloc_topology_load(m->topo) != 0) {
        if (from_xml) {
            rc = fsh_err(-EINVAL, "check that the file is an hwloc XML topology (lstopo FILE.xml)",
                         "%s=%s: hwloc cannot load it: %s", var ? var : "topology", xml,
                         strerror(errno));
        } else {
            rc = fsh_err(-EINVAL, "", "hwloc cannot load this machine's topology: %s",
                         strerror(errno));
        }
        goto free_m;
    }
    m->this_system = hwloc_topology_is_thissystem(m->topo) != 0;
    rc = read_numa(m, m->topo);
    if (rc == 0) {
        read_distances(m, m->topo);
        rc = read_gpus(m, m->topo);
    }
    if (rc == 0) {
        rc = read_nics(m, m->topo);
    }
    if (rc != 0) {
        rc = fsh_err(rc, "", "reading the topology of %s: %s", m->source, strerror(-rc));
        goto free_m;
    }
    *out = m;
    return 0;
free_m:
    fsh_topo_free(m);
    return rc;
}

int fsh_topo_load(const char *xml, const char *var, struct fsh_topo_machine **out)
{
    return load(xml, var, NULL, 0, out);
}

void fsh_topo_free(struct fsh_topo_machine *m)
{
    if (!m) {
        return;
    }
    for (int i = 0; i < m->nnuma; i++) {
        for (int c = 0; c < m->numa[i].ncores; c++) {
            hwloc_bitmap_free(m->numa[i].cores[c]);
        }
        free(m->numa[i].cores);
        hwloc_bitmap_free(m->numa[i].cpuset);
    }
    free(m->numa);
    free(m->gpus);
    free(m->nics);
    free(m->dist);
    if (m->topo) {
        hwloc_topology_destroy(m->topo);
    }
    free(m);
}

/* ---------------------------------------------------------------- the map (pure) */

int fsh_topo_visible(const struct fsh_topo_machine *m, const char *visible, int *idx, int max,
                     bool *uuid_warning)
{
    int n = 0;
    if (!visible) {
        for (int i = 0; i < m->ngpus && n < max; i++) {
            idx[n++] = i;
        }
        return n;
    }
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", visible);
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok && n < max;
         tok = strtok_r(NULL, ", ", &save)) {
        char *end;
        long v = strtol(tok, &end, 10);
        if (end == tok || *end != '\0') {
            /* GPU-<uuid> or MIG-<uuid>: only the driver knows which device that is. */
            if (uuid_warning) {
                *uuid_warning = true;
            }
            return fsh_topo_visible(m, NULL, idx, max, NULL);
        }
        /* CUDA stops at the first index that does not exist, and so do we. */
        if (v < 0 || v >= m->ngpus) {
            break;
        }
        idx[n++] = (int)v;
    }
    return n;
}

/* How far two chains are apart: the position in `from` of the first object also in `to`;
 * FSH_TOPO_CHAIN when they share nothing. */
static int meet(const struct fsh_topo_chain *from, const struct fsh_topo_chain *to, int *kind)
{
    for (int i = 0; i < from->n; i++) {
        for (int j = 0; j < to->n; j++) {
            if (from->id[i] == to->id[j]) {
                *kind = from->kind[i];
                return i;
            }
        }
    }
    *kind = FSH_TOPO_MACHINE;
    return FSH_TOPO_CHAIN;
}

static unsigned numa_dist(const struct fsh_topo_machine *m, int a, int b)
{
    if (a < 0 || b < 0) {
        return 1000;
    }
    if (m->dist) {
        return m->dist[a * m->nnuma + b];
    }
    return a == b ? 10 : 20;
}

static enum fsh_topo_via via_of(int kind)
{
    switch (kind) {
    case FSH_TOPO_PCI:
    case FSH_TOPO_SWITCH: return FSH_TOPO_VIA_SWITCH;
    case FSH_TOPO_HOSTBRIDGE: return FSH_TOPO_VIA_HOSTBRIDGE;
    case FSH_TOPO_CPU: return FSH_TOPO_VIA_CPU;
    default: return FSH_TOPO_VIA_MACHINE;
    }
}

/* The set of NICs nearest an anchor (chain + NUMA node), as a bit per NIC in `near`. */
static enum fsh_topo_via nearest_set(const struct fsh_topo_machine *m,
                                     const struct fsh_topo_chain *anchor, int anchor_numa,
                                     unsigned char *near)
{
    long best = -1;
    int best_kind = FSH_TOPO_MACHINE;
    long *score = calloc(m->nnics > 0 ? (size_t)m->nnics : 1, sizeof(long));
    if (!score) {
        return FSH_TOPO_VIA_NONE;
    }
    for (int i = 0; i < m->nnics; i++) {
        int kind;
        long pos = meet(anchor, &m->nics[i].chain, &kind);
        /* Across sockets every NIC meets the anchor at the root: NUMA distance decides. */
        score[i] = pos * 100000 + (kind == FSH_TOPO_MACHINE ? numa_dist(m, anchor_numa,
                                                                        m->nics[i].numa) : 0);
        if (best < 0 || score[i] < best) {
            best = score[i];
            best_kind = kind;
        }
    }
    bool same_numa = false;
    for (int i = 0; i < m->nnics; i++) {
        near[i] = score[i] == best;
        same_numa |= near[i] && anchor_numa >= 0 && m->nics[i].numa == anchor_numa;
    }
    free(score);
    if (!m->nnics) {
        return FSH_TOPO_VIA_NONE;
    }
    /* I/O hung at the root of a one-socket machine is still on the PE's own NUMA node. */
    return best_kind == FSH_TOPO_MACHINE && same_numa ? FSH_TOPO_VIA_CPU : via_of(best_kind);
}

static void add_nic(const struct fsh_topo_machine *m, struct fsh_topo_pe *pe, int i)
{
    for (int k = 0; k < pe->nnics; k++) {
        if (pe->nic_index[k] == i) {
            return;
        }
    }
    if (pe->nnics < FSH_TOPO_MAX_NICS) {
        snprintf(pe->nics[pe->nnics], FSH_TOPO_NAME, "%s", m->nics[i].name);
        pe->nic_index[pe->nnics++] = i;
    }
}

static int nic_by_name(const struct fsh_topo_machine *m, const char *name)
{
    for (int i = 0; i < m->nnics; i++) {
        if (strcmp(m->nics[i].name, name) == 0 || strcmp(m->nics[i].netdev, name) == 0) {
            return i;
        }
    }
    return -1;
}

/* FABSHMEM_NIC=a,b,...: local rank r opens on entry r mod n and keeps the others after it. */
static void forced_nics(const struct fsh_topo_machine *m, const char *spec, int r,
                        struct fsh_topo_pe *pe)
{
    char buf[1024];
    char *names[FSH_TOPO_MAX_NICS];
    int n = 0;
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok && n < FSH_TOPO_MAX_NICS;
         tok = strtok_r(NULL, ", ", &save)) {
        names[n++] = tok;
    }
    pe->via = FSH_TOPO_VIA_USER;
    for (int k = 0; k < n; k++) {
        const char *name = names[(r + k) % n];
        snprintf(pe->nics[pe->nnics], FSH_TOPO_NAME, "%s", name);
        pe->nic_index[pe->nnics++] = nic_by_name(m, name);
    }
}

/* FABSHMEM_GPU: "" (auto), "i" (every rank) or "i,j,..." (local rank r takes entry r mod n);
 * entries index the visible GPUs. */
static int parse_gpu_override(const char *spec, int nvis, int *list, int max)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", spec ? spec : "");
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok;
         tok = strtok_r(NULL, ", ", &save)) {
        char *end;
        long v = strtol(tok, &end, 10);
        if (end == tok || *end != '\0' || v < 0 || v >= nvis || n >= max) {
            return fsh_err(-EINVAL,
                           "use visible GPU indexes: one for every PE or one per local rank, "
                           "e.g. 0,0,1,1",
                           "FABSHMEM_GPU='%s': '%s' is not a visible GPU (this node has %d)", spec,
                           tok, nvis);
        }
        list[n++] = (int)v;
    }
    return n;
}

int fsh_topo_map(const struct fsh_topo_machine *m, const struct fsh_topo_opts *o,
                 struct fsh_topo_pe *pes, bool *uuid_warning)
{
    int L = o->local_size > 0 ? o->local_size : 1;
    int vis[256], ov[256];
    int nvis = fsh_topo_visible(m, o->visible, vis, 256, uuid_warning);
    int nov = 0;
    if (o->gpu && o->gpu[0]) {
        nov = parse_gpu_override(o->gpu, nvis, ov, 256);
        if (nov < 0) {
            return nov;
        }
    }
    /* NUMA nodes with cores: the anchors of PEs without a GPU. */
    int cpu_numa[256], ncpu = 0;
    for (int i = 0; i < m->nnuma && ncpu < 256; i++) {
        if (m->numa[i].ncores > 0) {
            cpu_numa[ncpu++] = i;
        }
    }
    size_t nn = m->nnics > 0 ? (size_t)m->nnics : 1;
    unsigned char *near = calloc((size_t)L * nn, 1);
    if (!near) {
        return fsh_err(-ENOMEM, "", "out of memory for the topology map of %d PEs", L);
    }
    for (int r = 0; r < L; r++) {
        struct fsh_topo_pe *pe = &pes[r];
        memset(pe, 0, sizeof(*pe));
        pe->gpu = -1;
        pe->numa = -1;
        const struct fsh_topo_chain *anchor = NULL;
        if (nvis > 0) {
            pe->gpu = vis[nov ? ov[r % nov] : r % nvis];
            pe->numa = m->gpus[pe->gpu].numa;
            anchor = &m->gpus[pe->gpu].chain;
        } else if (ncpu > 0) {
            pe->numa = cpu_numa[(long)r * ncpu / L];
            anchor = &m->numa[pe->numa].chain;
        }
        if (anchor) {
            pe->via = nearest_set(m, anchor, pe->numa, near + (size_t)r * nn);
        }
    }
    for (int r = 0; r < L; r++) {
        struct fsh_topo_pe *pe = &pes[r];
        const unsigned char *mine = near + (size_t)r * nn;
        if (o->nic && o->nic[0]) {
            forced_nics(m, o->nic, r, pe);
        } else if (o->policy == FSH_TOPO_ROUNDROBIN && m->nnics > 0) {
            pe->via = FSH_TOPO_VIA_ROUNDROBIN;
            add_nic(m, pe, r % m->nnics);
        } else if (pe->via != FSH_TOPO_VIA_NONE) {
            /* The PEs with the same nearest set share it: this one is the j-th of k. */
            int j = 0, k = 0;
            for (int s = 0; s < L; s++) {
                if (memcmp(near + (size_t)s * nn, mine, nn) == 0) {
                    j += s < r;
                    k++;
                }
            }
            int set[FSH_TOPO_MAX_NICS * 8], ns = 0;
            for (int i = 0; i < m->nnics && ns < FSH_TOPO_MAX_NICS * 8; i++) {
                if (mine[i]) {
                    set[ns++] = i;
                }
            }
            if (ns >= k) {
                for (int i = j * ns / k; i < (j + 1) * ns / k; i++) {
                    add_nic(m, pe, set[i]);
                }
            } else {
                add_nic(m, pe, set[j % ns]);
            }
            if (o->policy == FSH_TOPO_ALL) {
                /* Every NIC, the nearest first: for striping over the whole node. */
                for (int i = 0; i < ns; i++) {
                    add_nic(m, pe, set[i]);
                }
                for (int i = 0; i < m->nnics; i++) {
                    add_nic(m, pe, i);
                }
            }
        }
    }
    /* Cores: the PEs anchored on one NUMA node split its cores in blocks, in rank order. */
    for (int r = 0; r < L; r++) {
        struct fsh_topo_pe *pe = &pes[r];
        if (pe->numa < 0) {
            continue;
        }
        int j = 0, k = 0;
        for (int s = 0; s < L; s++) {
            if (pes[s].numa == pe->numa) {
                j += s < r;
                k++;
            }
        }
        int n = m->numa[pe->numa].ncores;
        if (n >= k) {
            pe->core_first = j * n / k;
            pe->core_count = (j + 1) * n / k - pe->core_first;
        }
    }
    free(near);
    return 0;
}

const char *fsh_topo_via_name(enum fsh_topo_via via)
{
    static const char *const names[] = {"none", "pcie-switch", "host-bridge", "same-socket",
                                        "numa-distance", "roundrobin", "FABSHMEM_NIC"};
    return (unsigned)via < sizeof(names) / sizeof(names[0]) ? names[via] : "?";
}

hwloc_bitmap_t fsh_topo_cpuset(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pe)
{
    if (pe->numa < 0 || pe->core_count == 0) {
        return NULL;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (int c = pe->core_first; set && c < pe->core_first + pe->core_count; c++) {
        hwloc_bitmap_or(set, set, m->numa[pe->numa].cores[c]);
    }
    return set;
}

void fsh_topo_cores_str(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pe, char *buf,
                        size_t len)
{
    hwloc_bitmap_t set = fsh_topo_cpuset(m, pe);
    if (!set) {
        snprintf(buf, len, "-");
        return;
    }
    hwloc_bitmap_list_snprintf(buf, len, set);
    hwloc_bitmap_free(set);
}

void fsh_topo_pe_str(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pe, char *buf,
                     size_t len)
{
    char gpu[96], nics[512], cores[256], numa[16];
    if (pe->gpu >= 0) {
        snprintf(gpu, sizeof(gpu), "%d(%s)", pe->gpu, m->gpus[pe->gpu].busid);
    } else {
        snprintf(gpu, sizeof(gpu), "none");
    }
    size_t used = 0;
    nics[0] = '\0';
    for (int i = 0; i < pe->nnics && used < sizeof(nics); i++) {
        used += (size_t)snprintf(nics + used, sizeof(nics) - used, "%s%s", i ? "," : "",
                                 pe->nics[i]);
    }
    fsh_topo_cores_str(m, pe, cores, sizeof(cores));
    if (pe->numa >= 0) {
        snprintf(numa, sizeof(numa), "%u", m->numa[pe->numa].os_index);
    } else {
        snprintf(numa, sizeof(numa), "-");
    }
    snprintf(buf, len, "gpu=%s nic=%s via=%s cores=%s numa=%s", gpu, pe->nnics ? nics : "-",
             fsh_topo_via_name(pe->via), cores, numa);
}

/* ---------------------------------------------------------------- runtime use */

static struct {
    struct fsh_topo_machine *m;
    struct fsh_topo_pe *pes;
    int local_rank;
    bool forced;
    bool shareable; /* read from this machine here: the node's other PEs may load our export */
    char bind[320]; /* how the binding went, for SHMEM_INFO */
} placement;

static void bind_self(bool none, int local_size)
{
    const struct fsh_topo_pe *pe = &placement.pes[placement.local_rank];
    if (none) {
        snprintf(placement.bind, sizeof(placement.bind), "none(FABSHMEM_BIND)");
        return;
    }
    if (!placement.m->this_system) {
        snprintf(placement.bind, sizeof(placement.bind), "none(topology from %s)",
                 placement.m->source);
        return;
    }
    hwloc_topology_t t = placement.m->topo;
    hwloc_bitmap_t cur = hwloc_bitmap_alloc();
    hwloc_bitmap_t want = fsh_topo_cpuset(placement.m, pe);
    hwloc_const_bitmap_t all = hwloc_topology_get_allowed_cpuset(t);
    if (cur && hwloc_get_cpubind(t, cur, HWLOC_CPUBIND_PROCESS) == 0 &&
        !hwloc_bitmap_isincluded(all, cur)) {
        /* The launcher bound us (--bind-to): its choice stands, but say when it is far. */
        char have[128];
        hwloc_bitmap_list_snprintf(have, sizeof(have), cur);
        snprintf(placement.bind, sizeof(placement.bind), "launcher(%s)", have);
        if (pe->numa >= 0 && !hwloc_bitmap_intersects(cur, placement.m->numa[pe->numa].cpuset)) {
            char near[128];
            hwloc_bitmap_list_snprintf(near, sizeof(near), placement.m->numa[pe->numa].cpuset);
            FSH_WARN("the launcher bound this PE to PUs %s, away from its %s (NUMA node %u, PUs "
                     "%s): traffic crosses the socket link; bind by NUMA node (mpirun --map-by "
                     "numa --bind-to core) or launch with --bind-to none",
                     have, pe->gpu >= 0 ? "GPU" : "NIC", placement.m->numa[pe->numa].os_index,
                     near);
        }
    } else if (want && hwloc_bitmap_isincluded(all, want)) {
        snprintf(placement.bind, sizeof(placement.bind), "none(the PE's share is the whole node)");
    } else if (!want) {
        snprintf(placement.bind, sizeof(placement.bind), "none(%d PEs, too few cores to split)",
                 local_size);
        FSH_DEBUG("not binding: %d local PEs and not enough cores on NUMA node to give each one",
                  local_size);
    } else {
        char list[128];
        hwloc_bitmap_list_snprintf(list, sizeof(list), want);
        if (hwloc_set_cpubind(t, want, HWLOC_CPUBIND_PROCESS) == 0) {
            snprintf(placement.bind, sizeof(placement.bind), "fabshmem(%s)", list);
        } else {
            snprintf(placement.bind, sizeof(placement.bind), "failed(%s)", strerror(errno));
            FSH_INFO("binding to PUs %s failed: %s; running unbound", list, strerror(errno));
        }
    }
    hwloc_bitmap_free(cur);
    hwloc_bitmap_free(want);
}

int fsh_topo_init(const struct fsh_config *cfg, int local_rank, int local_size,
                  const void *shared, size_t shared_len)
{
    /* Their words, checked at load (env.c): enum fsh_topo_policy's order; auto, none. */
    int policy = fsh_env_word_index("FABSHMEM_NIC_POLICY");
    int bind = fsh_env_word_index("FABSHMEM_BIND");
    const char *var = cfg->FABSHMEM_TOPOLOGY_XML[0] ? "FABSHMEM_TOPOLOGY_XML" : "HWLOC_XMLFILE";
    const char *xml = cfg->FABSHMEM_TOPOLOGY_XML[0] ? cfg->FABSHMEM_TOPOLOGY_XML
                                                    : cfg->HWLOC_XMLFILE;
    int rc = load(xml, var, shared_len ? shared : NULL, shared_len, &placement.m);
    if (rc != 0 && !xml[0] && shared_len) {
        /* The leader's copy did not load here: read this machine after all. */
        FSH_DEBUG("the node leader's topology: %s; reading this machine", fsh_err_last()->msg);
        fsh_err_clear();
        rc = load(xml, var, NULL, 0, &placement.m);
    }
    placement.shareable = rc == 0 && !xml[0] && !shared_len;
    if (rc != 0) {
        if (xml[0]) {
            return rc;
        }
        /* This machine could not be read: run without a topology rather than not at all. */
        FSH_WARN("no topology (%s): no NIC hint, no binding", fsh_err_last()->msg);
        fsh_err_clear();
        return 0;
    }
    placement.local_rank = local_rank < local_size ? local_rank : 0;
    placement.pes = calloc((size_t)(local_size > 0 ? local_size : 1), sizeof(*placement.pes));
    if (!placement.pes) {
        return fsh_err(-ENOMEM, "", "out of memory for the topology map");
    }
    struct fsh_topo_opts o = {
        .local_size = local_size,
        .visible = fsh_env_is_set("CUDA_VISIBLE_DEVICES") ? cfg->CUDA_VISIBLE_DEVICES : NULL,
        .gpu = cfg->FABSHMEM_GPU,
        .nic = cfg->FABSHMEM_NIC,
        .policy = (enum fsh_topo_policy)policy,
    };
    bool uuid = false;
    rc = fsh_topo_map(placement.m, &o, placement.pes, &uuid);
    if (rc != 0) {
        return rc;
    }
    if (uuid && local_rank == 0) {
        FSH_WARN("CUDA_VISIBLE_DEVICES='%s' names GPUs by UUID, which only the CUDA driver can "
                 "map: placing PEs as if every GPU were visible", cfg->CUDA_VISIBLE_DEVICES);
    }
    placement.forced = cfg->FABSHMEM_NIC[0] != '\0';
    bind_self(bind == 1, local_size);
    char line[768];
    fsh_topo_pe_str(placement.m, &placement.pes[placement.local_rank], line, sizeof(line));
    FSH_DEBUG("topology of %s: %d GPU(s), %d NIC(s), %d NUMA node(s); local rank %d: %s bind=%s",
              placement.m->source, placement.m->ngpus, placement.m->nnics, placement.m->nnuma,
              local_rank, line, placement.bind);
    return 0;
}

int fsh_topo_export(void **xml, size_t *len)
{
    *xml = NULL;
    *len = 0;
    if (!placement.shareable) {
        return 0;
    }
    char *buf = NULL;
    int n = 0;
    if (hwloc_topology_export_xmlbuffer(placement.m->topo, &buf, &n, 0) != 0 || n <= 0) {
        FSH_DEBUG("hwloc_topology_export_xmlbuffer: %s; the node's PEs read it each",
                  strerror(errno));
        return 0;
    }
    *xml = malloc((size_t)n);
    if (*xml) {
        memcpy(*xml, buf, (size_t)n);
        *len = (size_t)n;
    }
    hwloc_free_xmlbuffer(placement.m->topo, buf);
    return *xml ? 0 : fsh_err(-ENOMEM, "", "out of memory for the topology's XML (%d bytes)", n);
}

void fsh_topo_fini(void)
{
    fsh_topo_free(placement.m);
    free(placement.pes);
    memset(&placement, 0, sizeof(placement));
}

const struct fsh_topo_pe *fsh_topo_mine(void)
{
    return placement.pes ? &placement.pes[placement.local_rank] : NULL;
}

const char *fsh_topo_gpu_busid(int gpu)
{
    return placement.m && gpu >= 0 && gpu < placement.m->ngpus ? placement.m->gpus[gpu].busid
                                                               : NULL;
}

bool fsh_topo_nic_forced(void)
{
    return placement.forced;
}

void fsh_topo_describe(char *buf, size_t len)
{
    if (!placement.pes) {
        snprintf(buf, len, "gpu=- nic=- via=none cores=- numa=- bind=none(no topology)");
        return;
    }
    char line[768];
    fsh_topo_pe_str(placement.m, &placement.pes[placement.local_rank], line, sizeof(line));
    snprintf(buf, len, "%s bind=%s", line, placement.bind);
}

/* The PUs near this PE's GPU that the process may run on, or NULL (unknown or empty). */
static hwloc_bitmap_t near_set(void)
{
    if (!placement.pes || !placement.m->this_system) {
        return NULL;
    }
    const struct fsh_topo_pe *pe = &placement.pes[placement.local_rank];
    if (pe->numa < 0) {
        return NULL;
    }
    hwloc_bitmap_t set = fsh_topo_cpuset(placement.m, pe);
    if (!set) {
        set = hwloc_bitmap_dup(placement.m->numa[pe->numa].cpuset);
    }
    hwloc_bitmap_t cur = hwloc_bitmap_alloc();
    if (set && cur && hwloc_get_cpubind(placement.m->topo, cur, HWLOC_CPUBIND_PROCESS) == 0) {
        hwloc_bitmap_and(set, set, cur);
    }
    hwloc_bitmap_free(cur);
    if (set && hwloc_bitmap_iszero(set)) {
        hwloc_bitmap_free(set);
        set = NULL;
    }
    return set;
}

int fsh_topo_near_cores(void)
{
    hwloc_bitmap_t set = near_set();
    if (!set) {
        return 0;
    }
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(placement.m->topo, set, HWLOC_OBJ_CORE);
    hwloc_bitmap_free(set);
    return n > 0 ? n : 0;
}

int fsh_topo_bind_thread_near(char *buf, size_t len)
{
    hwloc_bitmap_t set = near_set();
    if (!set) {
        snprintf(buf, len, "unbound (no PUs near the GPU known inside the process's binding)");
        return 1;
    }
    char list[128];
    hwloc_bitmap_list_snprintf(list, sizeof(list), set);
    int rc = hwloc_set_cpubind(placement.m->topo, set, HWLOC_CPUBIND_THREAD);
    if (rc == 0) {
        snprintf(buf, len, "%s", list);
    } else {
        snprintf(buf, len, "unbound (binding to PUs %s: %s)", list, strerror(errno));
    }
    hwloc_bitmap_free(set);
    return rc == 0 ? 0 : 1;
}
