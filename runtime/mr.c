/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.c: memory registration of the symmetric segments, and address translation.
 *
 * Owns the local registrations (one per segment, plus short-lived ones for private buffers when
 * the provider needs local descriptors) and the table of every peer's segment bases and keys.
 * Addressing follows the provider's mr_mode and is never guessed: with FI_MR_VIRT_ADDR a remote
 * address is the peer's virtual address, otherwise an offset into the registered region; with
 * FI_MR_PROV_KEY the key is whatever the provider made, so keys are always read back with
 * fi_mr_key() and exchanged. With several rails (fabric.c) every registration is made on each
 * rail's domain; rail 0's keys travel in init's exchange blob, the others' in the exchange
 * slot's rail trailer (fabric.c), so every key is exchanged in the one all-gather too.
 */
#define _GNU_SOURCE
#include "mr.h"

#include <errno.h>
#include <link.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bootstrap.h"
#include "error.h"
#include "fabric.h"
#include "log.h"

struct seg_local {
    uint8_t *base;
    size_t len;
    struct fid_mr *mr[FSH_MAX_RAILS];
    void *desc[FSH_MAX_RAILS];
    uint64_t key[FSH_MAX_RAILS];
};
#define XKEYS (FSH_MAX_RAILS - 1) /* keys of rails 1.. per segment */

/* What a peer publishes per segment. */
struct seg_remote {
    uint64_t raddr; /* virtual base (FI_MR_VIRT_ADDR) or 0 (offset addressing) */
    uint64_t key;
    uint64_t len;
};

static struct {
    struct seg_local local[FSH_NSEGS];
    struct seg_remote *remote; /* [pe * FSH_NSEGS + seg] */
    uint64_t *xkeys;           /* [(pe * FSH_NSEGS + seg) * XKEYS + rail - 1], multi-rail only */
    int npes;
    uint64_t next_key;
} mr_segs;

int fsh_mr_init(int npes)
{
    mr_segs.remote = calloc((size_t)npes * FSH_NSEGS, sizeof(*mr_segs.remote));
    if (!mr_segs.remote) {
        return fsh_err(-ENOMEM, "", "out of memory for %d peers' segment tables", npes);
    }
    mr_segs.npes = npes;
    mr_segs.next_key = FSH_NSEGS * FSH_MAX_RAILS; /* above every segment key of every rail */
    return 0;
}

static void close_all(struct fid_mr **mr)
{
    for (int r = 0; r < FSH_MAX_RAILS; r++) {
        if (mr[r]) {
            fi_close(&mr[r]->fid);
            mr[r] = NULL;
        }
    }
}

void fsh_mr_fini(void)
{
    for (int s = 0; s < FSH_NSEGS; s++) {
        close_all(mr_segs.local[s].mr);
    }
    free(mr_segs.remote);
    free(mr_segs.xkeys);
    memset(&mr_segs, 0, sizeof(mr_segs));
}

struct phdr_search {
    uintptr_t start, end;
    int found;
};

static int find_exe(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct phdr_search *s = arg;
    /* The first object is the executable itself. */
    uintptr_t relro_end = 0, rw_start = 0, rw_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            if (!rw_start || lo < rw_start) {
                rw_start = lo;
            }
            if (lo + ph->p_memsz > rw_end) {
                rw_end = lo + ph->p_memsz;
            }
        } else if (ph->p_type == PT_GNU_RELRO) {
            /* The loader makes this part read-only after relocation: registering it for
             * remote write would fail on pinning providers, and nothing symmetric lives there. */
            long page = sysconf(_SC_PAGESIZE);
            relro_end = (lo + ph->p_memsz + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
        }
    }
    if (relro_end > rw_start && relro_end <= rw_end) {
        rw_start = relro_end;
    }
    s->start = rw_start;
    s->end = rw_end;
    s->found = rw_end > rw_start;
    return 1; /* stop after the executable */
}

int fsh_mr_find_data_segment(void **base, size_t *len)
{
    struct phdr_search s = {0};
    dl_iterate_phdr(find_exe, &s);
    if (!s.found) {
        *base = NULL;
        *len = 0;
        return 0;
    }
    *base = (void *)s.start;
    *len = s.end - s.start;
    return 0;
}

static void human(size_t bytes, char *buf, size_t len)
{
    if (bytes >= ((size_t)1 << 30) && bytes % ((size_t)1 << 30) == 0) {
        snprintf(buf, len, "%zu GiB", bytes >> 30);
    } else if (bytes >= ((size_t)1 << 20)) {
        snprintf(buf, len, "%zu MiB", bytes >> 20);
    } else {
        snprintf(buf, len, "%zu KiB", bytes >> 10);
    }
}

bool fsh_mr_has_ipc_lock(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) {
        return 0;
    }
    char line[256];
    unsigned long long eff = 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "CapEff: %llx", &eff) == 1) {
            break;
        }
    }
    fclose(f);
    return (eff >> 14) & 1; /* CAP_IPC_LOCK */
}

int fsh_mr_check_memlock(size_t bytes)
{
    if (!fsh_fabric_attr()->pins_memory) {
        return 0;
    }
    bytes *= (size_t)fsh_fabric_nrails(); /* each rail pins it again */
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= bytes || fsh_mr_has_ipc_lock()) {
        return 0;
    }
    char lim[32], need[32];
    human((size_t)rl.rlim_cur, lim, sizeof(lim));
    human(bytes, need, sizeof(need));
    return fsh_err(-ENOMEM,
                   "run with ulimit -l unlimited (memlock in /etc/security/limits.conf, or LimitMEMLOCK=infinity for a service), or lower SHMEM_SYMMETRIC_SIZE",
                   "memlock limit %s is too low to register %s of symmetric memory on provider %s",
                   lim, need, fsh_fabric_attr()->prov);
}

static int reg(int rail, void *base, size_t len, uint64_t access, uint64_t key,
               struct fid_mr **mr)
{
    int rc = fi_mr_reg(fsh_fabric_domain(rail), base, len, access, 0, key, 0, mr, NULL);
    if (rc != 0) {
        /* Not closed by us: libfabric 2.7's tcp frees the region it leaves here on failure. */
        *mr = NULL;
        char need[32];
        human(len, need, sizeof(need));
        return fsh_err(rc, rc == -FI_ENOMEM || rc == -ENOMEM ? "raise the memlock limit (ulimit -l unlimited) or lower SHMEM_SYMMETRIC_SIZE" : "FABSHMEM_LOG=debug and FI_LOG_LEVEL=warn show the provider's view",
                       "registering %s at %p with %s on %s failed: %s", need, base,
                       fsh_fabric_attr()->prov, fsh_fabric_rail_name(rail), fi_strerror(-rc));
    }
    return 0;
}

/* A registration of this PE's own use (bounce buffers, temporary ones), whose key nobody is
 * told: the next free key. A key may be taken already where the provider also keeps keys it
 * chose (libfabric 2.7's ofi_rxm over tcp: -FI_ENOKEY), so the next ones are tried. */
static int reg_local(int rail, void *base, size_t len, struct fid_mr **mr)
{
    int rc, tries = 0;
    do {
        /* Atomic: contexts' endpoints register their bounce slots at once (lane.c). */
        uint64_t key = __atomic_fetch_add(&mr_segs.next_key, 1, __ATOMIC_RELAXED);
        rc = reg(rail, base, len, FI_READ | FI_WRITE, key, mr);
    } while (rc == -FI_ENOKEY && ++tries < 64);
    if (rc == 0 && tries > 0) {
        fsh_err_clear(); /* the taken keys are no news */
    }
    return rc;
}

/* The key asked for segment seg on rail r. Where keys are the provider's (FI_MR_PROV_KEY), a
 * real provider ignores it and chooses per domain; one that takes it (shm, tcp under
 * FABSHMEM_MR_MODE=prov_key or the efa-direct profile) is given a different one on every rail,
 * so that a key sent to the wrong rail fails there as it would on EFA. */
static uint64_t seg_key(enum fsh_seg seg, int r)
{
    return (uint64_t)seg + (fsh_fabric_attr()->mr_prov_key ? (uint64_t)r * FSH_NSEGS : 0);
}

/* Descriptor and key of rail r's registration of l. */
static int took_key(struct seg_local *l, int r)
{
    l->desc[r] = fi_mr_desc(l->mr[r]);
    l->key[r] = fi_mr_key(l->mr[r]);
    if (l->key[r] == FI_KEY_NOTAVAIL) {
        return fsh_err(-ENOTSUP, "choose a provider without FI_MR_RAW keys",
                       "provider %s needs raw memory keys", fsh_fabric_attr()->prov);
    }
    return 0;
}

int fsh_mr_reg_segment(enum fsh_seg seg, void *base, size_t len)
{
    struct seg_local *l = &mr_segs.local[seg];
    l->base = base;
    l->len = len;
    if (len == 0) {
        return 0;
    }
    for (int r = 0; r < fsh_fabric_nrails(); r++) {
        int rc = reg(r, base, len, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
                     seg_key(seg, r), &l->mr[r]);
        if (rc != 0) {
            return rc;
        }
        rc = took_key(l, r);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int fsh_mr_reg_device(enum fsh_seg seg, void *base, size_t len, int cuda_dev, int dmabuf_fd,
                      bool system)
{
    struct seg_local *l = &mr_segs.local[seg];
    struct iovec iov = {base, len};
    struct fi_mr_attr attr = {
        .mr_iov = &iov,
        .iov_count = 1,
        .access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
        .requested_key = (uint64_t)seg,
        .iface = system ? FI_HMEM_SYSTEM : FI_HMEM_CUDA,
        .device.cuda = system ? 0 : cuda_dev,
    };
    uint64_t flags = 0;
#ifdef FI_MR_DMABUF
    /* The whole heap is one dmabuf: offset 0, and base_addr is the address RMA names it by. */
    struct fi_mr_dmabuf dmabuf = {.fd = dmabuf_fd, .offset = 0, .len = len, .base_addr = base};
    if (dmabuf_fd >= 0) {
        attr.dmabuf = &dmabuf;
        flags = FI_MR_DMABUF;
    }
#else
    if (dmabuf_fd >= 0) {
        return fsh_err(-ENOTSUP, "build fabshmem against libfabric >= 1.20",
                       "this libfabric has no FI_MR_DMABUF");
    }
#endif
    l->base = base;
    l->len = len;
    for (int r = 0; r < fsh_fabric_nrails(); r++) {
        attr.requested_key = seg_key(seg, r);
        int rc = fi_mr_regattr(fsh_fabric_domain(r), &attr, flags, &l->mr[r]);
        if (rc != 0) {
            l->mr[r] = NULL;
            fsh_mr_dereg_segment(seg);
            return fsh_err(rc, "FABSHMEM_DEVICE_PATH=staging works on any provider; FI_LOG_LEVEL=warn shows the provider's view",
                           "registering %zu bytes of GPU memory at %p with %s (%s) on %s "
                           "failed: %s", len, base, fsh_fabric_attr()->prov,
                           dmabuf_fd >= 0 ? "dmabuf" : system ? "FI_HMEM_SYSTEM" : "FI_HMEM_CUDA",
                           fsh_fabric_rail_name(r), fi_strerror(-rc));
        }
        rc = took_key(l, r);
        if (rc != 0) {
            fsh_mr_dereg_segment(seg);
            return rc;
        }
    }
    return 0;
}

void fsh_mr_dereg_segment(enum fsh_seg seg)
{
    struct seg_local *l = &mr_segs.local[seg];
    close_all(l->mr);
    memset(l, 0, sizeof(*l));
}

/* What a PE publishes of a segment registered after init's exchange: rail 0's record and the
 * other rails' keys. */
struct seg_late {
    struct seg_remote r;
    uint64_t xkey[XKEYS];
};

int fsh_mr_exchange_segment(enum fsh_seg seg, double timeout)
{
    const struct seg_local *l = &mr_segs.local[seg];
    struct seg_late mine = {
        .r = {.raddr = fsh_fabric_attr()->mr_virt_addr ? (uint64_t)(uintptr_t)l->base : 0,
              .key = l->key[0],
              .len = l->len},
    };
    memcpy(mine.xkey, &l->key[1], sizeof(mine.xkey));
    struct seg_late *all = calloc((size_t)mr_segs.npes, sizeof(*all));
    if (!all) {
        return fsh_err(-ENOMEM, "", "out of memory for %d peers' segment records", mr_segs.npes);
    }
    int rc = fsh_boot_allgather(&mine, sizeof(mine), all, timeout);
    for (int pe = 0; pe < mr_segs.npes && rc == 0; pe++) {
        size_t at = (size_t)pe * FSH_NSEGS + seg;
        mr_segs.remote[at] = all[pe].r;
        if (mr_segs.xkeys) {
            memcpy(&mr_segs.xkeys[at * XKEYS], all[pe].xkey, sizeof(all[pe].xkey));
        }
    }
    free(all);
    return rc;
}

size_t fsh_mr_rail_keys_pack(void *buf, size_t room)
{
    int rails = fsh_fabric_nrails();
    size_t per = rails > 1 ? (size_t)(rails - 1) * sizeof(uint64_t) : 0;
    if (per == 0 || room < FSH_NSEGS * per) {
        return 0;
    }
    for (int s = 0; s < FSH_NSEGS; s++) {
        memcpy((uint8_t *)buf + s * per, &mr_segs.local[s].key[1], per);
    }
    return FSH_NSEGS * per;
}

int fsh_mr_rail_keys_unpack(int pe, const void *buf, size_t n)
{
    size_t per = n / FSH_NSEGS;
    if (n % (FSH_NSEGS * sizeof(uint64_t)) != 0 || per > XKEYS * sizeof(uint64_t)) {
        return fsh_err(-EPROTO, "run every PE with the same fabshmem",
                       "PE %d's rail keys are malformed (%zu bytes)", pe, n);
    }
    if (!mr_segs.xkeys) {
        mr_segs.xkeys = calloc((size_t)mr_segs.npes * FSH_NSEGS * XKEYS, sizeof(uint64_t));
        if (!mr_segs.xkeys) {
            return fsh_err(-ENOMEM, "", "out of memory for %d peers' rail keys", mr_segs.npes);
        }
    }
    for (int s = 0; s < FSH_NSEGS; s++) {
        memcpy(&mr_segs.xkeys[((size_t)pe * FSH_NSEGS + (size_t)s) * XKEYS],
               (const uint8_t *)buf + (size_t)s * per, per);
    }
    return 0;
}

void fsh_mr_set_segment(enum fsh_seg seg, void *base, size_t len)
{
    struct seg_local *l = &mr_segs.local[seg];
    l->base = base;
    l->len = len;
}

size_t fsh_mr_blob_size(void)
{
    return sizeof(struct seg_remote) * FSH_NSEGS;
}

void fsh_mr_blob_pack(void *blob)
{
    struct seg_remote r[FSH_NSEGS];
    bool virt = fsh_fabric_attr()->mr_virt_addr;
    for (int s = 0; s < FSH_NSEGS; s++) {
        r[s].raddr = virt ? (uint64_t)(uintptr_t)mr_segs.local[s].base : 0;
        r[s].key = mr_segs.local[s].key[0];
        r[s].len = mr_segs.local[s].len;
    }
    memcpy(blob, r, sizeof(r));
}

void fsh_mr_blob_unpack(int pe, const void *blob)
{
    memcpy(&mr_segs.remote[(size_t)pe * FSH_NSEGS], blob, sizeof(struct seg_remote) * FSH_NSEGS);
}

int fsh_mr_lookup(const void *addr, size_t len, enum fsh_seg *seg, uint64_t *off)
{
    uintptr_t a = (uintptr_t)addr;
    for (int s = 0; s < FSH_NSEGS; s++) {
        const struct seg_local *l = &mr_segs.local[s];
        uintptr_t b = (uintptr_t)l->base;
        if (l->len && a >= b && a - b <= l->len && len <= l->len - (a - b)) {
            *seg = (enum fsh_seg)s;
            *off = a - b;
            return 0;
        }
    }
    return -EFAULT;
}

void fsh_mr_remote(int pe, enum fsh_seg seg, uint64_t off, uint64_t *raddr, uint64_t *key)
{
    const struct seg_remote *r = &mr_segs.remote[(size_t)pe * FSH_NSEGS + seg];
    *raddr = r->raddr + off;
    *key = r->key;
}

uint64_t fsh_mr_key_on(int pe, int dst, uint64_t key0)
{
    if (dst == 0 || !mr_segs.xkeys) {
        return key0;
    }
    for (int s = 0; s < FSH_NSEGS; s++) {
        size_t at = (size_t)pe * FSH_NSEGS + (size_t)s;
        if (mr_segs.remote[at].key == key0 && mr_segs.remote[at].len) {
            return mr_segs.xkeys[at * XKEYS + (size_t)dst - 1];
        }
    }
    return key0;
}

void *fsh_mr_local_addr(enum fsh_seg seg, uint64_t off)
{
    return mr_segs.local[seg].base + off;
}

struct fsh_mr_set {
    struct fid_mr *mr[FSH_MAX_RAILS];
    void *desc[FSH_MAX_RAILS];
};

void fsh_mr_dereg_local(struct fsh_mr_set *set)
{
    if (set) {
        close_all(set->mr);
        free(set);
    }
}

int fsh_mr_reg_local(void *buf, size_t len, struct fsh_mr_set **out)
{
    struct fsh_mr_set *set = calloc(1, sizeof(*set));
    *out = NULL;
    if (!set) {
        return fsh_err(-ENOMEM, "", "out of memory for a registration");
    }
    for (int r = 0; r < fsh_fabric_nrails(); r++) {
        int rc = reg_local(r, buf, len, &set->mr[r]);
        if (rc != 0) {
            fsh_mr_dereg_local(set);
            return rc;
        }
        set->desc[r] = fi_mr_desc(set->mr[r]);
    }
    *out = set;
    return 0;
}

void *fsh_mr_set_desc(const struct fsh_mr_set *set, int rail)
{
    return set->desc[rail];
}

bool fsh_mr_is_device(const void *addr, size_t len)
{
    const struct seg_local *l = &mr_segs.local[FSH_SEG_DEVICE];
    uintptr_t a = (uintptr_t)addr, b = (uintptr_t)l->base;
    return l->mr[0] && a >= b && a - b <= l->len && len <= l->len - (a - b);
}

/* A temporary registration's handle is the provider's struct fid_mr itself, under a name that
 * needs no libfabric header where it is held (progress.h, rma_post.c). */
static struct fid_mr *tmp_fid(struct fsh_mr_tmp *tmp)
{
    return (struct fid_mr *)(void *)tmp;
}

int fsh_mr_desc(const void *addr, size_t len, int rail, void **desc, struct fsh_mr_tmp **tmp)
{
    enum fsh_seg seg;
    uint64_t off;
    *tmp = NULL;
    if (fsh_mr_lookup(addr, len, &seg, &off) == 0) {
        *desc = mr_segs.local[seg].desc[rail];
        return 0;
    }
    if (!fsh_fabric_attr()->mr_local) {
        *desc = NULL;
        return 0;
    }
    /* A private buffer on a provider that needs local descriptors: register it for the
     * duration of the operation. Keys must be unique in the domain unless the provider picks
     * them. */
    struct fid_mr *mr = NULL;
    int rc = reg_local(rail, (void *)addr, len, &mr);
    if (rc != 0) {
        return rc;
    }
    *desc = fi_mr_desc(mr);
    *tmp = (struct fsh_mr_tmp *)(void *)mr;
    return 0;
}

void fsh_mr_release(struct fsh_mr_tmp *tmp)
{
    fi_close(&tmp_fid(tmp)->fid);
}
