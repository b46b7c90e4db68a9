#!/usr/bin/env python3
"""make_synthetic.py: writes the synthetic hwloc XML topologies of tests/data/topologies/.

No public hwloc XML of a p5.48xlarge exists, and none of a GPU-less EFA machine, so these two
are described here and written in hwloc 2's XML format (hwloc loads them like any other; check
with `lstopo-no-graphics --input FILE --whole-io`). Run it from this directory; the output is
committed, so the build never runs it.

  synthetic-p5-like.xml   2 sockets (NUMA 0, 1), 8 cores x 2 PUs each; per socket 2 host
                          bridges, each with 2 PCIe switches; each switch holds 1 GPU (H100,
                          10de:2330) and 4 EFA (1d0f:efa1): 8 GPUs, 32 EFA. Also an ENA
                          (network only), EC2's virtual VGA and an NVSwitch: none of them is a
                          GPU or a fabric NIC.
  synthetic-cpu-2efa.xml  2 sockets of 4 cores x 1 PU, no GPU, one EFA per socket (an HPC
                          instance like hpc6a/c5n): CPU-anchored PEs take their socket's EFA.
"""


def bitmap(bits):
    """hwloc's bitmap text: 32-bit words, most significant first."""
    v = 0
    for b in bits:
        v |= 1 << b
    words = []
    while True:
        words.append("0x%08x" % (v & 0xFFFFFFFF))
        v >>= 32
        if not v:
            break
    return ",".join(reversed(words))


class Gen:
    def __init__(self):
        self.gp = 0
        self.out = []

    def idx(self):
        self.gp += 1
        return self.gp

    def line(self, depth, text):
        self.out.append("  " * depth + text)


def cpu_side(g, desc, npkg, ncores, nthreads, io_of_pkg):
    """Machine > Package > (NUMANode, Core > PU), then each package's I/O from io_of_pkg."""
    npu = npkg * ncores * nthreads
    allpus = bitmap(range(npu))
    allnodes = bitmap(range(npkg))
    g.line(1, '<object type="Machine" os_index="0" cpuset="%s" complete_cpuset="%s" '
              'allowed_cpuset="%s" nodeset="%s" complete_nodeset="%s" allowed_nodeset="%s" '
              'gp_index="%d">' % (allpus, allpus, allpus, allnodes, allnodes, allnodes, g.idx()))
    core_id = 0
    for p in range(npkg):
        pus = [t * npkg * ncores + p * ncores + c for c in range(ncores) for t in range(nthreads)]
        cs, ns = bitmap(pus), bitmap([p])
        g.line(2, '<object type="Package" os_index="%d" cpuset="%s" complete_cpuset="%s" '
                  'nodeset="%s" complete_nodeset="%s" gp_index="%d">' % (p, cs, cs, ns, ns, g.idx()))
        g.line(3, '<object type="NUMANode" os_index="%d" cpuset="%s" complete_cpuset="%s" '
                  'nodeset="%s" complete_nodeset="%s" gp_index="%d" local_memory="%d"/>'
               % (p, cs, cs, ns, ns, g.idx(), 64 << 30))
        for c in range(ncores):
            cpus = [t * npkg * ncores + p * ncores + c for t in range(nthreads)]
            ccs = bitmap(cpus)
            g.line(3, '<object type="Core" os_index="%d" cpuset="%s" complete_cpuset="%s" '
                      'nodeset="%s" complete_nodeset="%s" gp_index="%d">'
                   % (core_id, ccs, ccs, ns, ns, g.idx()))
            core_id += 1
            for pu in cpus:
                b = bitmap([pu])
                g.line(4, '<object type="PU" os_index="%d" cpuset="%s" complete_cpuset="%s" '
                          'nodeset="%s" complete_nodeset="%s" gp_index="%d"/>'
                       % (pu, b, b, ns, ns, g.idx()))
            g.line(3, '</object>')
        io_of_pkg(g, p, 3)
        g.line(2, '</object>')
    g.line(1, '</object>')


def pci(g, depth, bus, cls, vendor, device, osdevs=(), dev=0):
    """A PCI device with OS devices: (name, osdev_type) with 2 network, 3 OpenFabrics."""
    busid = "0000:%02x:%02x.0" % (bus, dev)
    tail = "" if osdevs else "/"
    g.line(depth, '<object type="PCIDev" gp_index="%d" pci_busid="%s" '
                  'pci_type="%04x [%04x:%04x] [%04x:0000] 00" pci_link_speed="0.000000"%s>'
           % (g.idx(), busid, cls, vendor, device, vendor, tail))
    for name, t in osdevs:
        g.line(depth + 1, '<object type="OSDev" gp_index="%d" name="%s" osdev_type="%d"/>'
               % (g.idx(), name, t))
    if osdevs:
        g.line(depth, '</object>')


def host_bridge(g, depth, lo, hi):
    g.line(depth, '<object type="Bridge" gp_index="%d" bridge_type="0-1" depth="0" '
                  'bridge_pci="0000:[%02x-%02x]">' % (g.idx(), lo, hi))


def switch(g, depth, bus, lo, hi, level):
    g.line(depth, '<object type="Bridge" gp_index="%d" bridge_type="1-1" depth="%d" '
                  'bridge_pci="0000:[%02x-%02x]" pci_busid="0000:%02x:00.0" '
                  'pci_type="0604 [1d0f:0200] [1d0f:0200] 00" pci_link_speed="0.000000">'
           % (g.idx(), level, lo, hi, bus))


def efa_name(bus):
    return "rdmap%ds0" % bus


def p5_io(g, pkg, d):
    for h in range(2):
        hb = pkg * 2 + h
        lo = 0x10 + 0x40 * hb
        host_bridge(g, d, lo - 1, lo + 0x3f)
        if hb == 0:
            pci(g, d + 1, lo - 1, 0x0200, 0x1d0f, 0xec20, [("enp%ds0" % (lo - 1), 2)])
            pci(g, d + 1, lo - 1, 0x0300, 0x1d0f, 0x1111, dev=1)
        if hb == 3:
            pci(g, d + 1, lo - 1, 0x0680, 0x10de, 0x22a3)
        for s in range(2):
            base = lo + 0x20 * s
            switch(g, d + 1, base, base + 1, base + 0x1f, 1)
            for k in range(5):
                port_bus = base + 2 + k
                g.line(d + 2, '<object type="Bridge" gp_index="%d" bridge_type="1-1" depth="2" '
                              'bridge_pci="0000:[%02x-%02x]" pci_busid="0000:%02x:%02x.0" '
                              'pci_type="0604 [1d0f:0200] [1d0f:0200] 00" '
                              'pci_link_speed="0.000000">'
                       % (g.idx(), port_bus, port_bus, base + 1, k))
                if k == 0:
                    pci(g, d + 3, port_bus, 0x0302, 0x10de, 0x2330,
                        [("card%d" % (hb * 2 + s), 1)])
                else:
                    pci(g, d + 3, port_bus, 0x0200, 0x1d0f, 0xefa1, [(efa_name(port_bus), 3)])
                g.line(d + 2, '</object>')
            g.line(d + 1, '</object>')
        g.line(d, '</object>')


def cpu2efa_io(g, pkg, d):
    lo = 0x10 + 0x80 * pkg
    host_bridge(g, d, lo, lo + 0x10)
    if pkg == 0:
        pci(g, d + 1, lo, 0x0200, 0x1d0f, 0xec20, [("ens5", 2)])
    pci(g, d + 1, lo + 1, 0x0200, 0x1d0f, 0xefa1, [(efa_name(lo + 1), 3)])
    g.line(d, '</object>')


def write(path, desc, *args):
    g = Gen()
    g.line(0, '<?xml version="1.0" encoding="UTF-8"?>')
    g.line(0, '<!DOCTYPE topology SYSTEM "hwloc2.dtd">')
    g.line(0, '<topology version="2.0">')
    cpu_side(g, desc, *args)
    g.line(0, '</topology>')
    with open(path, "w") as f:
        f.write("\n".join(g.out) + "\n")


write("synthetic-p5-like.xml", "p5.48xlarge-like, 8 GPU, 32 EFA", 2, 8, 2, p5_io)
write("synthetic-cpu-2efa.xml", "2 sockets, no GPU, one EFA per socket", 2, 4, 1, cpu2efa_io)
