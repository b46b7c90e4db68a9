/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_topology: the local rank -> GPU, NIC(s), cores map on hwloc XML topologies of real and
 * synthetic machines, without a launcher.
 *
 * Every expected map below was written by hand from the topology files (the PCI tree: which EFA
 * sits under the same switch or host bridge as which GPU; the NUMA node's PUs), as listed in
 * tests/data/topologies/README.md, never printed by the code under test:
 *   aws-p4d.24xlarge   8 A100, 4 EFA, 2 GPUs per host bridge share its EFA
 *   aws-p5en.48xlarge  8 H200, 16 EFA, 2 GPUs + 4 EFA per switch: 2 EFA per GPU
 *   synthetic-p5-like  8 GPUs, 32 EFA, 1 GPU + 4 EFA per switch: 4 EFA per GPU
 *   synthetic-cpu-2efa no GPU, one EFA per socket
 *   this-vm            this development VM: no GPU, no RDMA device, eth0
 * plus CUDA_VISIBLE_DEVICES, FABSHMEM_GPU, FABSHMEM_NIC and the policies, a bad XML path, and
 * this machine read live (which must load whatever it holds).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "topology.h"
#include "unit.h"

static struct fsh_topo_machine *load(const char *name)
{
    const char *top = getenv("top_srcdir");
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/data/topologies/%s", top ? top : ".", name);
    struct fsh_topo_machine *m;
    if (fsh_topo_load(path, "test", &m) != 0) {
        unit_failures++;
        printf("  test_topology: cannot load %s: %s\n", path, fsh_err_last()->msg);
        return NULL;
    }
    return m;
}

/* One expected rank: GPU bus id ("-" none), NIC list ("a,b"), via, cores ("-" unbound). */
struct want {
    const char *gpu, *nics, *via, *cores;
};

static void expect_map(const char *label, const struct fsh_topo_machine *m,
                       const struct fsh_topo_opts *o, const struct want *w)
{
    struct fsh_topo_pe *pes = calloc((size_t)o->local_size, sizeof(*pes));
    if (!pes || fsh_topo_map(m, o, pes, NULL) != 0) {
        unit_failures++;
        printf("  test_topology: %s: map failed\n", label);
        free(pes);
        return;
    }
    for (int r = 0; r < o->local_size; r++) {
        const struct fsh_topo_pe *pe = &pes[r];
        const char *gpu = pe->gpu >= 0 ? m->gpus[pe->gpu].busid : "-";
        char nics[1024] = "";
        size_t used = 0;
        for (int i = 0; i < pe->nnics; i++) {
            used += (size_t)snprintf(nics + used, sizeof(nics) - used, "%s%s", i ? "," : "",
                                     pe->nics[i]);
        }
        char cores[256];
        fsh_topo_cores_str(m, pe, cores, sizeof(cores));
        UNIT_CHECK(strcmp(gpu, w[r].gpu) == 0, "%s rank %d: GPU %s", label, r, gpu);
        UNIT_CHECK(strcmp(nics, w[r].nics) == 0, "%s rank %d: NICs %s", label, r, nics);
        UNIT_CHECK(strcmp(fsh_topo_via_name(pe->via), w[r].via) == 0, "%s rank %d: via %s", label,
                   r, fsh_topo_via_name(pe->via));
        if (w[r].cores) {
            UNIT_CHECK(strcmp(cores, w[r].cores) == 0, "%s rank %d: cores %s", label, r, cores);
        }
    }
    free(pes);
}

static void test_p4d(void)
{
    struct fsh_topo_machine *m = load("aws-p4d.24xlarge.xml");
    if (!m) {
        return;
    }
    UNIT_CHECK(m->ngpus == 8 && m->nnics == 4 && m->nnuma == 2, "%s%d%s: 8 GPUs, 4 NICs, 2 NUMA",
               "p4d", 0, "");
    /* NUMA0 = PUs 0-23,48-71 (24 cores), NUMA1 = 24-47,72-95; 4 ranks per node: 6 cores. */
    static const struct want eight[] = {
        {"0000:10:1c.0", "rdmap16s27", "host-bridge", "0-5,48-53"},
        {"0000:10:1d.0", "rdmap16s27", "host-bridge", "6-11,54-59"},
        {"0000:20:1c.0", "rdmap32s27", "host-bridge", "12-17,60-65"},
        {"0000:20:1d.0", "rdmap32s27", "host-bridge", "18-23,66-71"},
        {"0000:90:1c.0", "rdmap144s27", "host-bridge", "24-29,72-77"},
        {"0000:90:1d.0", "rdmap144s27", "host-bridge", "30-35,78-83"},
        {"0000:a0:1c.0", "rdmap160s27", "host-bridge", "36-41,84-89"},
        {"0000:a0:1d.0", "rdmap160s27", "host-bridge", "42-47,90-95"},
    };
    struct fsh_topo_opts o = {.local_size = 8};
    expect_map("p4d np=8", m, &o, eight);

    /* 16 PEs: two per GPU, all four of a host bridge on its one EFA; 3 cores each. */
    struct want sixteen[16];
    for (int r = 0; r < 16; r++) {
        sixteen[r] = eight[r % 8];
        sixteen[r].cores = NULL;
    }
    o.local_size = 16;
    expect_map("p4d np=16", m, &o, sixteen);

    /* CUDA_VISIBLE_DEVICES=2,3: both on the second host bridge. */
    static const struct want vis23[] = {
        {"0000:20:1c.0", "rdmap32s27", "host-bridge", "0-11,48-59"},
        {"0000:20:1d.0", "rdmap32s27", "host-bridge", "12-23,60-71"},
    };
    o = (struct fsh_topo_opts){.local_size = 2, .visible = "2,3"};
    expect_map("p4d CUDA_VISIBLE_DEVICES=2,3", m, &o, vis23);

    /* CUDA stops at the first index that does not exist: "1,9,2" is GPU 1 only. */
    static const struct want vis1[] = {
        {"0000:10:1d.0", "rdmap16s27", "host-bridge", "0-11,48-59"},
        {"0000:10:1d.0", "rdmap16s27", "host-bridge", "12-23,60-71"},
    };
    o.visible = "1,9,2";
    expect_map("p4d CUDA_VISIBLE_DEVICES=1,9,2", m, &o, vis1);

    /* UUIDs cannot be mapped without the driver: every GPU, and a warning. */
    bool uuid = false;
    struct fsh_topo_pe pes[2];
    o.visible = "GPU-8f2c1d4e-0000-0000-0000-000000000000";
    UNIT_CHECK(fsh_topo_map(m, &o, pes, &uuid) == 0 && uuid && pes[1].gpu == 1,
               "%s%d%s: UUID list -> all GPUs with a warning", "p4d", 0, "");

    /* No visible GPU: ranks anchor on the NUMA nodes and take their socket's two EFAs. */
    static const struct want nogpu[] = {
        {"-", "rdmap16s27,rdmap32s27", "same-socket", "0-23,48-71"},
        {"-", "rdmap144s27,rdmap160s27", "same-socket", "24-47,72-95"},
    };
    o.visible = "";
    expect_map("p4d CUDA_VISIBLE_DEVICES=''", m, &o, nogpu);

    /* FABSHMEM_GPU=0,0,1,1: GPU per local rank; the NUMA node's cores split four ways. */
    static const struct want ov[] = {
        {"0000:10:1c.0", "rdmap16s27", "host-bridge", "0-5,48-53"},
        {"0000:10:1c.0", "rdmap16s27", "host-bridge", "6-11,54-59"},
        {"0000:10:1d.0", "rdmap16s27", "host-bridge", "12-17,60-65"},
        {"0000:10:1d.0", "rdmap16s27", "host-bridge", "18-23,66-71"},
    };
    o = (struct fsh_topo_opts){.local_size = 4, .gpu = "0,0,1,1"};
    expect_map("p4d FABSHMEM_GPU=0,0,1,1", m, &o, ov);
    struct fsh_topo_pe four[4];
    o.gpu = "9";
    UNIT_CHECK(fsh_topo_map(m, &o, four, NULL) == -EINVAL &&
               strstr(fsh_err_last()->msg, "FABSHMEM_GPU") != NULL,
               "%s%d%s: FABSHMEM_GPU=9 rejected, naming the variable", "p4d", 0, "");
    fsh_err_clear();

    /* roundrobin ignores the topology; FABSHMEM_NIC overrides everything. */
    static const struct want rr[] = {
        {"0000:10:1c.0", "rdmap16s27", "roundrobin", NULL},
        {"0000:10:1d.0", "rdmap32s27", "roundrobin", NULL},
        {"0000:20:1c.0", "rdmap144s27", "roundrobin", NULL},
        {"0000:20:1d.0", "rdmap160s27", "roundrobin", NULL},
        {"0000:90:1c.0", "rdmap16s27", "roundrobin", NULL},
    };
    o = (struct fsh_topo_opts){.local_size = 5, .policy = FSH_TOPO_ROUNDROBIN};
    expect_map("p4d FABSHMEM_NIC_POLICY=roundrobin", m, &o, rr);
    static const struct want forced[] = {
        {"0000:10:1c.0", "rdmap160s27,lo", "FABSHMEM_NIC", NULL},
        {"0000:10:1d.0", "lo,rdmap160s27", "FABSHMEM_NIC", NULL},
        {"0000:20:1c.0", "rdmap160s27,lo", "FABSHMEM_NIC", NULL},
    };
    o = (struct fsh_topo_opts){.local_size = 3, .nic = "rdmap160s27,lo"};
    expect_map("p4d FABSHMEM_NIC=rdmap160s27,lo", m, &o, forced);
    UNIT_CHECK(fsh_topo_map(m, &o, four, NULL) == 0 && four[0].nic_index[0] == 3 &&
               four[0].nic_index[1] == -1,
               "%s%d%s: forced names resolve to NIC indexes (-1 when unknown)", "p4d", 0, "");
    fsh_topo_free(m);
}

static void test_p5en(void)
{
    struct fsh_topo_machine *m = load("aws-p5en.48xlarge.xml");
    if (!m) {
        return;
    }
    UNIT_CHECK(m->ngpus == 8 && m->nnics == 16, "%s%d%s: 8 GPUs, 16 NICs", "p5en", 0, "");
    /* Four EFA tie for the two GPUs of a switch: each GPU's PE takes two. NUMA0 = PUs
     * 0-47,96-143: 12 cores per rank. */
    static const struct want eight[] = {
        {"0000:59:00.0", "rdmap85s0,rdmap86s0", "pcie-switch", "0-11,96-107"},
        {"0000:5a:00.0", "rdmap87s0,rdmap88s0", "pcie-switch", "12-23,108-119"},
        {"0000:72:00.0", "rdmap110s0,rdmap111s0", "pcie-switch", "24-35,120-131"},
        {"0000:73:00.0", "rdmap112s0,rdmap113s0", "pcie-switch", "36-47,132-143"},
        {"0000:8b:00.0", "rdmap135s0,rdmap136s0", "pcie-switch", "48-59,144-155"},
        {"0000:8c:00.0", "rdmap137s0,rdmap138s0", "pcie-switch", "60-71,156-167"},
        {"0000:a4:00.0", "rdmap160s0,rdmap161s0", "pcie-switch", "72-83,168-179"},
        {"0000:a5:00.0", "rdmap162s0,rdmap163s0", "pcie-switch", "84-95,180-191"},
    };
    struct fsh_topo_opts o = {.local_size = 8};
    expect_map("p5en np=8", m, &o, eight);

    /* One PE per node on GPU 0 alone: all four of its switch's EFA. */
    static const struct want one[] = {
        {"0000:59:00.0", "rdmap85s0,rdmap86s0,rdmap87s0,rdmap88s0", "pcie-switch",
         "0-47,96-143"},
    };
    o.local_size = 1;
    expect_map("p5en np=1", m, &o, one);

    /* policy all: the PE's own two first, then the rest of its switch, then every other. */
    struct fsh_topo_pe pes[8];
    o = (struct fsh_topo_opts){.local_size = 8, .policy = FSH_TOPO_ALL};
    UNIT_CHECK(fsh_topo_map(m, &o, pes, NULL) == 0 && pes[1].nnics == 16 &&
               strcmp(pes[1].nics[0], "rdmap87s0") == 0 &&
               strcmp(pes[1].nics[1], "rdmap88s0") == 0 && strcmp(pes[1].nics[2], "rdmap85s0") == 0,
               "%s%d%s: policy all lists 16 NICs, the PE's own first", "p5en", 1, "");
    fsh_topo_free(m);
}

/* The synthetic p5: switch i (i = 0..7) sits at bus 0x10 + 0x20 i with its GPU at bus +2 and
 * its four EFA at +3..+6, named rdmap<bus in decimal>s0 (see make_synthetic.py). */
static void test_p5_like(void)
{
    struct fsh_topo_machine *m = load("synthetic-p5-like.xml");
    if (!m) {
        return;
    }
    UNIT_CHECK(m->ngpus == 8 && m->nnics == 32, "%s%d%s: 8 GPUs (not the VGA, not the NVSwitch), "
          "32 EFA (not the ENA)", "p5-like", 0, "");
    static const struct want eight[] = {
        {"0000:12:00.0", "rdmap19s0,rdmap20s0,rdmap21s0,rdmap22s0", "pcie-switch", "0-1,16-17"},
        {"0000:32:00.0", "rdmap51s0,rdmap52s0,rdmap53s0,rdmap54s0", "pcie-switch", "2-3,18-19"},
        {"0000:52:00.0", "rdmap83s0,rdmap84s0,rdmap85s0,rdmap86s0", "pcie-switch", "4-5,20-21"},
        {"0000:72:00.0", "rdmap115s0,rdmap116s0,rdmap117s0,rdmap118s0", "pcie-switch",
         "6-7,22-23"},
        {"0000:92:00.0", "rdmap147s0,rdmap148s0,rdmap149s0,rdmap150s0", "pcie-switch",
         "8-9,24-25"},
        {"0000:b2:00.0", "rdmap179s0,rdmap180s0,rdmap181s0,rdmap182s0", "pcie-switch",
         "10-11,26-27"},
        {"0000:d2:00.0", "rdmap211s0,rdmap212s0,rdmap213s0,rdmap214s0", "pcie-switch",
         "12-13,28-29"},
        {"0000:f2:00.0", "rdmap243s0,rdmap244s0,rdmap245s0,rdmap246s0", "pcie-switch",
         "14-15,30-31"},
    };
    struct fsh_topo_opts o = {.local_size = 8};
    expect_map("p5-like np=8", m, &o, eight);
    /* Two PEs per GPU split its four EFA; eight PEs per socket get one core each. */
    static const struct want two[] = {
        {"0000:12:00.0", "rdmap19s0,rdmap20s0", "pcie-switch", "0,16"},
        {"0000:32:00.0", "rdmap51s0,rdmap52s0", "pcie-switch", "1,17"},
    };
    struct want sixteen[16];
    for (int r = 0; r < 16; r++) {
        sixteen[r] = (struct want){eight[r % 8].gpu, NULL, "pcie-switch", NULL};
    }
    sixteen[0] = two[0];
    sixteen[1] = two[1];
    sixteen[8] = (struct want){"0000:12:00.0", "rdmap21s0,rdmap22s0", "pcie-switch", "4,20"};
    static const char *const rest[] = {
        "", "", "rdmap83s0,rdmap84s0", "rdmap115s0,rdmap116s0", "rdmap147s0,rdmap148s0",
        "rdmap179s0,rdmap180s0", "rdmap211s0,rdmap212s0", "rdmap243s0,rdmap244s0",
        "", "rdmap53s0,rdmap54s0", "rdmap85s0,rdmap86s0", "rdmap117s0,rdmap118s0",
        "rdmap149s0,rdmap150s0", "rdmap181s0,rdmap182s0", "rdmap213s0,rdmap214s0",
        "rdmap245s0,rdmap246s0"};
    for (int r = 2; r < 16; r++) {
        if (r != 8) {
            sixteen[r].nics = rest[r];
        }
    }
    o.local_size = 16;
    expect_map("p5-like np=16", m, &o, sixteen);
    fsh_topo_free(m);
}

static void test_cpu_only(void)
{
    struct fsh_topo_machine *m = load("synthetic-cpu-2efa.xml");
    if (!m) {
        return;
    }
    UNIT_CHECK(m->ngpus == 0 && m->nnics == 2, "%s%d%s: no GPU, 2 EFA (not the ENA)", "cpu-2efa", 0,
               "");
    /* Ranks fill socket 0 first (PUs 0-3), then socket 1 (PUs 4-7); each takes its socket's EFA
     * (bus 0x11 = rdmap17s0, bus 0x91 = rdmap145s0). */
    static const struct want four[] = {
        {"-", "rdmap17s0", "same-socket", "0-1"},
        {"-", "rdmap17s0", "same-socket", "2-3"},
        {"-", "rdmap145s0", "same-socket", "4-5"},
        {"-", "rdmap145s0", "same-socket", "6-7"},
    };
    struct fsh_topo_opts o = {.local_size = 4};
    expect_map("cpu-2efa np=4", m, &o, four);
    /* Ten PEs: more than a socket's 4 cores each, so nobody is bound. */
    struct want ten[10];
    for (int r = 0; r < 10; r++) {
        ten[r] = (struct want){"-", r < 5 ? "rdmap17s0" : "rdmap145s0", "same-socket", "-"};
    }
    o.local_size = 10;
    expect_map("cpu-2efa np=10", m, &o, ten);
    fsh_topo_free(m);
}

static void test_this_vm(void)
{
    struct fsh_topo_machine *m = load("this-vm.xml");
    if (!m) {
        return;
    }
    /* One socket, 2 cores, virtio NIC eth0 and no RDMA device: the network interface stands in
     * (the tcp provider's domain is named after it). */
    UNIT_CHECK(m->ngpus == 0 && m->nnics == 1 && !m->nics[0].rdma && !m->this_system,
               "%s%d%s: no GPU, one network NIC, not this system", "this-vm", 0, "");
    static const struct want one[] = {{"-", "eth0", "same-socket", "0-1"}};
    static const struct want two[] = {{"-", "eth0", "same-socket", "0"},
                                      {"-", "eth0", "same-socket", "1"}};
    static const struct want three[] = {{"-", "eth0", "same-socket", "-"},
                                        {"-", "eth0", "same-socket", "-"},
                                        {"-", "eth0", "same-socket", "-"}};
    struct fsh_topo_opts o = {.local_size = 1};
    expect_map("this-vm np=1", m, &o, one);
    o.local_size = 2;
    expect_map("this-vm np=2", m, &o, two);
    o.local_size = 3;
    expect_map("this-vm np=3", m, &o, three);
    fsh_topo_free(m);
}

static void test_live_and_errors(void)
{
    /* This machine, whatever it holds: loads, and every rank gets a well-formed entry. */
    struct fsh_topo_machine *m;
    int rc = fsh_topo_load(NULL, NULL, &m);
    UNIT_CHECK(rc == 0, "%s%d%s: this machine loads", "live", rc, "");
    if (rc == 0) {
        struct fsh_topo_pe pes[4];
        struct fsh_topo_opts o = {.local_size = 4};
        UNIT_CHECK(m->this_system && m->nnuma >= 1 && fsh_topo_map(m, &o, pes, NULL) == 0 &&
                   pes[3].nnics <= FSH_TOPO_MAX_NICS && pes[3].numa >= 0,
                   "%s%d%s: map of 4 ranks", "live", 0, "");
        fsh_topo_free(m);
    }
    rc = fsh_topo_load("/nonexistent/topo.xml", "FABSHMEM_TOPOLOGY_XML", &m);
    UNIT_CHECK(rc == -ENOENT && m == NULL &&
               strstr(fsh_err_last()->msg, "FABSHMEM_TOPOLOGY_XML=/nonexistent/topo.xml") &&
               strstr(fsh_err_last()->fix, "lstopo"),
               "%s%d%s: a missing XML names the variable and the fix", "errors", rc, "");
    fsh_err_clear();
    const char *top = getenv("top_srcdir");
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/unit/test_topology.c", top ? top : ".");
    rc = fsh_topo_load(path, "HWLOC_XMLFILE", &m);
    UNIT_CHECK(rc == -EINVAL && strstr(fsh_err_last()->msg, "HWLOC_XMLFILE"),
               "%s%d%s: a file that is not XML is rejected", "errors", rc, "");
    fsh_err_clear();
}

int main(void)
{
    unit_name = "test_topology";
    test_p4d();
    test_p5en();
    test_p5_like();
    test_cpu_only();
    test_this_vm();
    test_live_and_errors();
    if (unit_failures) {
        printf("test_topology: FAIL (%d checks failed)\n", unit_failures);
        return 1;
    }
    printf("test_topology: PASS\n");
    return 0;
}
