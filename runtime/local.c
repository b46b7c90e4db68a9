/*
 * local.c: PEs on one node map each other's symmetric segments.
 *
 * Setup (init.c calls these in order):
 *   1. fsh_local_init decides: with FABSHMEM_INTRANODE=auto and other PEs on the node, share.
 *   2. The heap is mapped from a memfd (fsh_local_heap_fd); the program's data+bss are moved
 *      onto a memfd (fsh_local_share_data): the pages are copied into the memfd (all-zero
 *      pages are skipped, so an untouched bss costs nothing) and the memfd is mapped over the
 *      same addresses with MAP_FIXED. This happens before any registration and before the
 *      progress thread starts, while no other library thread runs. (Application threads that
 *      write globals during shmem_init would lose those writes: OpenSHMEM programs initialize
 *      first.)
 *   3. The exchange carries (pid, fd, length) per segment; each PE opens /proc/<pid>/fd/<fd>
 *      of every PE on its node and maps it. That open needs the kernel's ptrace "read" access
 *      to the peer (same user, peer dumpable), which Yama's ptrace_scope does not restrict (it
 *      restricts attaching). Cross-memory attach (process_vm_readv/writev) needs the stricter
 *      attach access and costs a system call per transfer, so it would never be a useful
 *      fallback: a peer that cannot be mapped is reached through the fabric (info message).
 *   4. After the init barrier every peer has mapped: the descriptors are closed. Nothing has a
 *      name in /dev/shm at any time, so no crash can leave a file behind.
 *
 * Which PEs take the path: those whose heap this PE mapped (and their static data when that
 * was shared too), and with mode auto the PE itself. Everything else uses the fabric. The
 * choice is per (pair, segment) and fixed after init, so one location never mixes the paths.
 *
 * Memory ordering, for the callers:
 *   - A local put is a memcpy into the peer's mapping: complete when it returns. quiet and
 *     fence issue a full fence (__atomic_thread_fence(SEQ_CST)), which orders those stores
 *     before any later store (a flag, a signal) on every architecture; on x86 it is the
 *     store-buffer drain TSO leaves out.
 *   - A local put-with-signal stores the data, then updates the signal with a release atomic;
 *     a waiter's acquire load of the signal then sees the data.
 *   - A collective's local write stores the data, then adds its arrivals to the receiver's
 *     counter with a release atomic (notify.c); the receiver loads the counter with acquire.
 *
 * AMOs: one atomicity domain for the whole job. CPU atomics on mapped memory are atomic with
 * each other, but not with the fabric's atomics (a provider may apply those with a plain
 * read-modify-write in the target's progress engine). So the rule is all or nothing, decided
 * once at init and the same on every PE (an AND over the job): when every PE is on one node
 * and every PE mapped all the others, every AMO (also on static data, also to oneself) is a
 * CPU atomic on mapped memory; otherwise every AMO, also to a local peer or oneself, goes
 * through the fabric. Puts and gets do not need this: they are not atomic with each other.
 */
#define _GNU_SOURCE
#include "local.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "heap.h"
#include "log.h"
#include "rt.h"

struct fsh_local fsh_local;

#if defined(__SANITIZE_THREAD__)
#define FSH_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FSH_TSAN 1
#endif
#endif
#ifndef FSH_TSAN
#define FSH_TSAN 0
#endif

/* What a PE publishes: where its segments can be opened, and how long they are. */
struct blob {
    int32_t pid;
    int32_t fd[FSH_NSEGS];   /* -1: not shared */
    uint32_t page_off;       /* the data segment's start within its first page */
    uint64_t len[FSH_NSEGS]; /* bytes to map */
};

struct mapping {
    void *addr;
    size_t len;
};

static struct {
    bool share; /* memfds, exchange, peers mapped */
    bool self;  /* this PE reaches itself by load/store */
    int npes;
    struct blob mine;
    struct blob *peers;    /* [pe] */
    struct mapping *maps;  /* [pe * FSH_NSEGS + seg]: peers' segments mapped here */
    int mapped;            /* peers mapped */
} lo;

int fsh_local_parse_mode(const char *value, enum fsh_intranode *mode)
{
    if (strcmp(value, "auto") == 0 || value[0] == '\0') {
        *mode = FSH_INTRANODE_AUTO;
    } else if (strcmp(value, "fabric") == 0) {
        *mode = FSH_INTRANODE_FABRIC;
    } else {
        return fsh_err(-EINVAL, "use FABSHMEM_INTRANODE=auto (load/store between PEs of a node) or fabric",
                       "FABSHMEM_INTRANODE='%s' is neither auto nor fabric", value);
    }
    return 0;
}

int fsh_local_init(enum fsh_intranode mode, int npes, int local_size)
{
    memset(&lo, 0, sizeof(lo));
    lo.npes = npes;
    lo.self = mode == FSH_INTRANODE_AUTO;
    lo.share = lo.self && local_size > 1;
    lo.mine.pid = (int32_t)getpid();
    for (int s = 0; s < FSH_NSEGS; s++) {
        lo.mine.fd[s] = -1;
    }
    fsh_local.cpu_atomics = false;
    fsh_local.base = NULL;
    /* Kept in both modes: the pids tell live.c whether a PE of this node still runs. */
    lo.peers = calloc((size_t)npes, sizeof(*lo.peers));
    if (!lo.peers) {
        return fsh_err(-ENOMEM, "", "out of memory for the intra-node table of %d PEs", npes);
    }
    if (!lo.self) {
        return 0;
    }
    fsh_local.base = calloc((size_t)npes * FSH_NSEGS, sizeof(*fsh_local.base));
    lo.maps = calloc((size_t)npes * FSH_NSEGS, sizeof(*lo.maps));
    if (!fsh_local.base || !lo.peers || !lo.maps) {
        return fsh_err(-ENOMEM, "", "out of memory for the intra-node table of %d PEs", npes);
    }
    return 0;
}

static int make_memfd(const char *name, size_t size)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) {
        FSH_INFO("memfd_create: %s; PEs on this node use the fabric", strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        FSH_INFO("memfd of %zu bytes: %s; PEs on this node use the fabric", size, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int fsh_local_heap_fd(size_t size)
{
    lo.mine.len[FSH_SEG_HEAP] = size; /* published even when not shared: peers then know */
    if (!lo.share) {
        return -1;
    }
    int fd = make_memfd("fabshmem-heap", size);
    if (fd < 0) {
        lo.share = false;
        return -1;
    }
    lo.mine.fd[FSH_SEG_HEAP] = fd;
    return fd;
}

/* The data segment is read whole, redzones that AddressSanitizer puts between globals
 * included: these two functions read it uninstrumented (the attribute), and write it to the
 * memfd with the raw system call (ASan's pwrite interceptor would check the source range). */
#define WHOLE_SEGMENT __attribute__((no_sanitize_address))

static WHOLE_SEGMENT bool all_zero(const uint8_t *p, size_t n)
{
    const uint64_t *w = (const uint64_t *)p;
    for (size_t i = 0; i < n / sizeof(uint64_t); i++) {
        if (w[i]) {
            return false;
        }
    }
    return true;
}

/* Copy [lo, hi) into fd at offset 0, skipping all-zero pages (a memfd reads as zeros). */
static WHOLE_SEGMENT int copy_pages(int fd, const uint8_t *from, size_t len, size_t page)
{
    for (size_t at = 0; at < len;) {
        if (all_zero(from + at, page)) {
            at += page;
            continue;
        }
        size_t run = page;
        while (at + run < len && !all_zero(from + at + run, page)) {
            run += page;
        }
        for (size_t done = 0; done < run;) {
            ssize_t n = syscall(SYS_pwrite64, fd, from + at + done, run - done,
                                (off_t)(at + done));
            if (n <= 0) {
                return -1;
            }
            done += (size_t)n;
        }
        at += run;
    }
    return 0;
}

void fsh_local_share_data(void *base, size_t len)
{
    if (!lo.self || len == 0) {
        return;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)base & ~(page - 1);
    uintptr_t end = ((uintptr_t)base + len + page - 1) & ~(page - 1);
    size_t span = end - start;
    lo.mine.len[FSH_SEG_DATA] = span; /* published even when not shared: peers then know */
    if (!lo.share) {
        return;
    }
#if FSH_TSAN
    /* ThreadSanitizer's runtime lives in the executable's data and its background thread
     * writes it at any time: a copy could lose those writes. Static data goes through the
     * fabric in such a build. */
    FSH_INFO("ThreadSanitizer build: the data segment is not shared");
    return;
#endif
    int fd = make_memfd("fabshmem-data", span);
    if (fd < 0) {
        return;
    }
    if (copy_pages(fd, (const uint8_t *)start, span, page) != 0) {
        FSH_INFO("copying the data segment into a memfd: %s; its RMA between PEs of this node "
                 "goes through the fabric", strerror(errno));
        close(fd);
        return;
    }
    /* From here to the mmap nothing may write the segment: this thread only runs the lines
     * below, and the library has started no thread yet. */
    if (mmap((void *)start, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
        MAP_FAILED) {
        /* MAP_FIXED fails before it replaces anything (the range is valid and writable). */
        FSH_INFO("mapping the data segment shared: %s; its RMA between PEs of this node goes "
                 "through the fabric", strerror(errno));
        close(fd);
        return;
    }
    lo.mine.fd[FSH_SEG_DATA] = fd;
    lo.mine.page_off = (uint32_t)((uintptr_t)base - start);
}

size_t fsh_local_blob_size(void)
{
    return sizeof(struct blob);
}

void fsh_local_blob_pack(void *blob)
{
    memcpy(blob, &lo.mine, sizeof(lo.mine));
}

void fsh_local_blob_unpack(int pe, const void *blob)
{
    if (lo.peers) {
        memcpy(&lo.peers[pe], blob, sizeof(struct blob));
    }
}

/* Map segment seg of peer pe; false (info message) when it cannot be. */
static bool map_peer(int pe, enum fsh_seg seg)
{
    const struct blob *b = &lo.peers[pe];
    if (b->len[seg] == 0) {
        return true; /* nothing to map (a program without data) */
    }
    if (b->fd[seg] < 0) {
        /* It has the segment but could not share it. */
        FSH_INFO("PE %d did not share its %s segment: reached through the fabric", pe,
                 seg == FSH_SEG_HEAP ? "heap" : "data");
        return false;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)b->pid, (int)b->fd[seg]);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        FSH_INFO("cannot open PE %d's memory (%s: %s; a different user, or not dumpable): "
                 "reached through the fabric", pe, path, strerror(errno));
        return false;
    }
    uint8_t *p = fsh_heap_map(b->len[seg], fd);
    close(fd);
    if (!p) {
        FSH_INFO("cannot map PE %d's %s segment (%s): reached through the fabric", pe,
                 seg == FSH_SEG_HEAP ? "heap" : "data", fsh_err_last()->msg);
        fsh_err_clear();
        return false;
    }
    lo.maps[(size_t)pe * FSH_NSEGS + seg] = (struct mapping){p, b->len[seg]};
    fsh_local.base[(size_t)pe * FSH_NSEGS + seg] = p + (seg == FSH_SEG_DATA ? b->page_off : 0);
    return true;
}

static void unmap_peer(int pe)
{
    for (int s = 0; s < FSH_NSEGS; s++) {
        struct mapping *m = &lo.maps[(size_t)pe * FSH_NSEGS + s];
        if (m->addr) {
            munmap(m->addr, m->len);
        }
        m->addr = NULL;
        fsh_local.base[(size_t)pe * FSH_NSEGS + s] = NULL;
    }
}

int fsh_local_attach(const int *node_of, bool *all_mapped)
{
    *all_mapped = lo.self;
    if (!lo.self) {
        return 0;
    }
    int me = fsh_rt.pe;
    /* Our own host segments are reached by plain copies; the device heap never is (GPU
     * memory is not host-addressable: devmem.c moves it). */
    for (int s = 0; s < FSH_NSEGS; s++) {
        if (s != FSH_SEG_DEVICE) {
            fsh_local.base[(size_t)me * FSH_NSEGS + s] = fsh_mr_local_addr((enum fsh_seg)s, 0);
        }
    }
    for (int pe = 0; pe < lo.npes; pe++) {
        if (pe == me || node_of[pe] != node_of[me]) {
            continue;
        }
        if (!lo.share || !map_peer(pe, FSH_SEG_HEAP)) {
            unmap_peer(pe);
            *all_mapped = false;
            continue;
        }
        if (!map_peer(pe, FSH_SEG_DATA)) {
            *all_mapped = false; /* its static data through the fabric, so AMOs too */
        }
        lo.mapped++;
    }
    return 0;
}

void fsh_local_attached_everywhere(void)
{
    for (int s = 0; s < FSH_NSEGS; s++) {
        if (lo.mine.fd[s] >= 0) {
            close(lo.mine.fd[s]);
            lo.mine.fd[s] = -1;
        }
    }
}

void fsh_local_fini(void)
{
    fsh_local_attached_everywhere();
    if (lo.maps) {
        for (int pe = 0; pe < lo.npes; pe++) {
            if (pe != fsh_rt.pe) {
                unmap_peer(pe);
            }
        }
    }
    free(fsh_local.base);
    free(lo.peers);
    free(lo.maps);
    memset(&lo, 0, sizeof(lo));
    memset(&fsh_local, 0, sizeof(fsh_local));
}

int fsh_local_pid(int pe)
{
    return lo.peers && pe >= 0 && pe < lo.npes ? (int)lo.peers[pe].pid : 0;
}

void fsh_local_describe(char *buf, size_t len)
{
    if (!lo.self) {
        snprintf(buf, len, "fabric for every PE (FABSHMEM_INTRANODE=fabric)");
        return;
    }
    snprintf(buf, len, "load/store to itself and %d PE(s) of this node%s, %s", lo.mapped,
             lo.share ? "" : " (no sharing)",
             fsh_local.cpu_atomics ? "AMOs as CPU atomics (one node)" : "AMOs through the fabric");
}
