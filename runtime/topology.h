/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topology.h: where this PE sits in the node — its GPU, its NIC(s), its cores, its NUMA node.
 *
 * Two layers. fsh_topo_load() reads a topology with hwloc (this machine, or a stored XML file)
 * into plain data: the GPUs, the fabric NICs and the NUMA nodes, each with its chain of
 * ancestors. fsh_topo_map() is a pure function of that data: it decides, for every local rank,
 * the GPU, the NIC(s) and the cores, so unit tests can check the map of any stored machine
 * without a launcher. fsh_topo_init() is the runtime's use of both (plus the CPU binding).
 * This module knows nothing of libfabric: it hands NIC names to whoever opens the endpoint.
 */
#ifndef FSH_TOPOLOGY_H
#define FSH_TOPOLOGY_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "env.h"

#define FSH_TOPO_NAME 48     /* longest NIC / OS-device name kept */
#define FSH_TOPO_CHAIN 40    /* deepest ancestor chain kept (PCI trees are shallow) */
#define FSH_TOPO_MAX_NICS 32 /* NICs one PE may keep (p5: 4 equally near; policy all: every one) */

/* What an ancestor is, for explaining why a NIC is near. */
enum fsh_topo_kind {
    FSH_TOPO_PCI = 0,    /* a PCI device (the device itself) */
    FSH_TOPO_SWITCH,     /* a PCI-to-PCI bridge: a PCIe switch port */
    FSH_TOPO_HOSTBRIDGE, /* a host bridge (root complex) */
    FSH_TOPO_CPU,        /* a CPU-side object below the machine: package, die, group, cache */
    FSH_TOPO_MACHINE,    /* the root: the other socket, reached through the inter-socket link */
};

/* An object's ancestors, from the object itself up to the root: hwloc gp_index and kind. */
struct fsh_topo_chain {
    int n;
    uint64_t id[FSH_TOPO_CHAIN];
    uint8_t kind[FSH_TOPO_CHAIN];
};

struct fsh_topo_gpu {
    char busid[16];               /* "0000:10:1c.0" */
    char osdev[FSH_TOPO_NAME];    /* an OS device name if hwloc has one (cuda0, card0), or "" */
    unsigned vendor, device;
    int numa;                     /* index in machine.numa, -1 when unknown */
    struct fsh_topo_chain chain;
};

struct fsh_topo_nic {
    char name[FSH_TOPO_NAME];     /* the libfabric domain name: rdmap16s27, mlx5_0, or eth0 */
    char netdev[FSH_TOPO_NAME];   /* its network interface, if any (ib0), or "" */
    char busid[16];
    unsigned vendor, device;
    bool rdma;                    /* an OpenFabrics device (false: a plain network interface) */
    bool efa;                     /* an AWS Elastic Fabric Adapter */
    int numa;
    struct fsh_topo_chain chain;
};

struct fsh_topo_numa {
    unsigned os_index;
    hwloc_bitmap_t cpuset;
    int ncores;
    hwloc_bitmap_t *cores;        /* each core's PUs, in hwloc's logical order */
    struct fsh_topo_chain chain;  /* from the NUMA node's CPU-side parent */
};

/* A node's topology as plain data. GPUs and NICs are sorted by PCI bus id (the CUDA order when
 * CUDA_DEVICE_ORDER=PCI_BUS_ID, and the order users read in lspci). */
struct fsh_topo_machine {
    int ngpus, nnics, nnuma;
    struct fsh_topo_gpu *gpus;
    struct fsh_topo_nic *nics;
    struct fsh_topo_numa *numa;
    unsigned *dist;               /* nnuma x nnuma NUMA distances, or NULL when hwloc has none */
    bool this_system;             /* false when loaded from XML: never bind to it */
    char source[256];             /* "this machine" or the XML path */
    hwloc_topology_t topo;
};

/* Load this machine (xml NULL or "") or an hwloc XML file. `var` names the variable the path
 * came from, for the error message. Returns 0 or a recorded negative errno. */
int fsh_topo_load(const char *xml, const char *var, struct fsh_topo_machine **out);
void fsh_topo_free(struct fsh_topo_machine *m);

enum fsh_topo_policy { FSH_TOPO_NEAREST = 0, FSH_TOPO_ROUNDROBIN, FSH_TOPO_ALL };

/* Why a PE got its NIC(s). */
enum fsh_topo_via {
    FSH_TOPO_VIA_NONE = 0, /* no NIC known: the provider picks */
    FSH_TOPO_VIA_SWITCH,   /* same PCIe switch as the GPU (or the CPU's I/O) */
    FSH_TOPO_VIA_HOSTBRIDGE,
    FSH_TOPO_VIA_CPU,      /* same package / NUMA side */
    FSH_TOPO_VIA_MACHINE,  /* only across the socket link: the nearest by NUMA distance */
    FSH_TOPO_VIA_ROUNDROBIN,
    FSH_TOPO_VIA_USER,     /* FABSHMEM_NIC */
};

struct fsh_topo_opts {
    int local_size;
    const char *visible;   /* CUDA_VISIBLE_DEVICES, or NULL when it is not set */
    const char *gpu;       /* FABSHMEM_GPU: "" auto, "i" every rank, "i,j,..." by local rank */
    const char *nic;       /* FABSHMEM_NIC: "" topology, else name[,name] */
    enum fsh_topo_policy policy;
};

/* One local rank's place. */
struct fsh_topo_pe {
    int gpu;               /* index in machine.gpus, -1 without a GPU */
    int numa;              /* index in machine.numa, -1 when unknown */
    int nnics;             /* NIC names, the endpoint's first; more for striping */
    char nics[FSH_TOPO_MAX_NICS][FSH_TOPO_NAME];
    int nic_index[FSH_TOPO_MAX_NICS]; /* index in machine.nics, -1 for a name hwloc does not know */
    enum fsh_topo_via via;
    int core_first, core_count; /* a slice of machine.numa[numa].cores; count 0: do not bind */
};

/* The whole node's map: pes[0 .. o->local_size-1]. Pure: reads m and o only. Returns 0, or
 * -EINVAL (recorded) for a malformed FABSHMEM_GPU. A CUDA_VISIBLE_DEVICES made of UUIDs cannot
 * be mapped without the CUDA driver: every GPU is then used and *uuid_warning set (may be NULL). */
int fsh_topo_map(const struct fsh_topo_machine *m, const struct fsh_topo_opts *o,
                 struct fsh_topo_pe *pes, bool *uuid_warning);

/* The visible GPUs: indexes into m->gpus, in CUDA order. Returns the count (<= max). */
int fsh_topo_visible(const struct fsh_topo_machine *m, const char *visible, int *idx, int max,
                     bool *uuid_warning);

/* Texts for printing. */
const char *fsh_topo_via_name(enum fsh_topo_via via);
/* The PUs of the PE's cores as an hwloc list string ("0-5,48-53"), or "-" when unbound. */
void fsh_topo_cores_str(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pe, char *buf,
                        size_t len);
/* The PUs of the PE's cores (or NULL when unbound); the caller frees it. */
hwloc_bitmap_t fsh_topo_cpuset(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pe);
/* One line: gpu=... nic=... via=... cores=... numa=... */
void fsh_topo_pe_str(const struct fsh_topo_machine *m, const struct fsh_topo_pe *pe, char *buf,
                     size_t len);

/* ---------------------------------------------------------------- runtime use */

/* Load (FABSHMEM_TOPOLOGY_XML, HWLOC_XMLFILE or this machine), map, and bind this PE
 * (FABSHMEM_BIND). Fails only on a bad setting (a wrong XML path, an unknown policy); a machine
 * where hwloc finds no GPU or no NIC simply gives no NIC hint. shared (shared_len bytes, or
 * NULL) is this machine as another PE of the node read it (its fsh_topo_export): loading that
 * takes a fraction of a millisecond where reading the machine takes tens (hundreds with GPUs
 * and NICs to enumerate); a copy that does not load is ignored, and a configured XML file wins
 * over it. */
int fsh_topo_init(const struct fsh_config *cfg, int local_rank, int local_size,
                  const void *shared, size_t shared_len);
/* This machine as fsh_topo_init read it, as hwloc XML (malloc'ed), for the node's other PEs;
 * *len 0 when there is nothing to share (the topology came from a file or another PE, or could
 * not be read). */
int fsh_topo_export(void **xml, size_t *len);
void fsh_topo_fini(void);
/* This PE's entry, or NULL before init or when the topology could not be read. */
const struct fsh_topo_pe *fsh_topo_mine(void);
/* The PCI bus id of machine GPU gpu ("0000:10:1c.0"), NULL when unknown: cuda.c matches it
 * against the driver's devices. */
const char *fsh_topo_gpu_busid(int gpu);
/* True when the NIC came from FABSHMEM_NIC (the user's choice binds every provider). */
bool fsh_topo_nic_forced(void);
/* This PE's line for SHMEM_INFO: the map entry plus how the binding went. */
void fsh_topo_describe(char *buf, size_t len);
/* Helper threads of this PE (the device API's proxies) run near its GPU: the PUs of the PE's
 * cores (its slice of its GPU's NUMA node, else the whole NUMA node's when it was given none),
 * within the PUs the process may run on now (a launcher's binding stands). near_cores: how many
 * whole cores that is, 0 when unknown (no topology, a topology read from a file, no NUMA node,
 * or nothing left inside the process's binding). bind_thread_near binds the calling thread to
 * them: 0 bound (buf: the PU list), 1 left as it was (buf: why), never an error. */
int fsh_topo_near_cores(void);
int fsh_topo_bind_thread_near(char *buf, size_t len);

#endif
