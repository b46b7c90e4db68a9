/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * local.c: PEs on one node map each other's symmetric segments.
 *
 * Setup (init.c calls these in order):
 *   1. fsh_local_init decides: with FABSHMEM_INTRANODE=auto and other PEs on the node, share.
 *   2. The heap is mapped from a memfd (fsh_local_heap_fd); the program's data+bss are moved
 *      onto a memfd (fsh_local_share_data): the pages are copied into the memfd (all-zero
 *      pages are skipped, so an untouched bss costs nothing) and the memfd is mapped over the
 *      same addresses with MAP_FIXED. This happens before any registration and before the
 *      progress thread starts; the segment is read-only meanwhile, so a store by a thread the
 *      program started before shmem_init waits for the move instead of being lost (move_data).
 *   3. The exchange carries (pid, fd, length) per segment; each PE opens /proc/<pid>/fd/<fd>
 *      of every PE on its node and maps it. That open needs the kernel's ptrace "read" access
 *      to the peer (same user, peer dumpable), which Yama's ptrace_scope does not restrict (it
 *      restricts attaching). Cross-memory attach (process_vm_readv/writev) needs the stricter
 *      attach access and costs a system call per transfer, so it would never be a useful
 *      fallback: a peer that cannot be mapped is reached through the fabric (info message).
 *   4. After the init barrier every peer has mapped. Nothing has a name in /dev/shm at any
 *      time, so no crash can leave a file behind. This PE keeps its own two descriptors (they
 *      are close-on-exec): fork needs them (below).
 *
 * fork: a child must get private copies of its memory, but MAP_SHARED pages stay shared over
 * fork. A pthread_atfork child handler (registered once, at the first shmem_init) therefore
 * replaces each of this PE's own memfd mappings in the child by a private anonymous copy at the
 * same address (mremap over it), copying only the memfd's data extents (SEEK_DATA/SEEK_HOLE),
 * so an untouched 512 MiB heap costs nothing; the child then closes the memfds. Peers' segments
 * mapped here are replaced by PROT_NONE reservations: the child may make no OpenSHMEM call
 * (it is marked forked and finalized, so the at-exit finalize does not run in it, and a call
 * ends the child with a message), a stray store
 * through an old shmem_ptr faults instead of landing in a peer, and a long-lived child does not
 * keep the peers' memory alive after the job. The parent waits (a pipe) until the child has
 * its copy, so the copy is the memory as it was at fork for the forking thread; a peer's put
 * or another thread's store landing during the fork may or may not be in the child's copy, as
 * with any memory written concurrently. posix_spawn, vfork and system() run no atfork handler:
 * their child execs (the memfds are close-on-exec).
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
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
    uint64_t host; /* the process space the pid is in (host_key), 0: unknown */
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
    char why[192];         /* the first peer that could not be mapped, and why */
} peer_maps;

/* This PE's own memfd mappings, for the fork child handler. The data segment stays on its
 * memfd after shmem_finalize, so its entry outlives peer_maps. */
struct own_seg {
    uint8_t *addr; /* NULL: nothing to make private */
    size_t len;
    int fd;
};

static struct {
    pthread_mutex_t lock; /* one fork at a time owns the pipe */
    bool registered;
    struct own_seg seg[FSH_NSEGS];
    int pipe[2]; /* child -> parent: "my copy is taken" */
} fork_copy = {.lock = PTHREAD_MUTEX_INITIALIZER, .pipe = {-1, -1}};

static void fork_prepare(void)
{
    pthread_mutex_lock(&fork_copy.lock);
    fork_copy.pipe[0] = fork_copy.pipe[1] = -1;
    bool any = false;
    for (int s = 0; s < FSH_NSEGS; s++) {
        any = any || fork_copy.seg[s].addr;
    }
    if (any && pipe2(fork_copy.pipe, O_CLOEXEC) != 0) {
        fork_copy.pipe[0] = fork_copy.pipe[1] =
            -1; /* the child copies all the same, unsynchronized */
    }
}

static void fork_parent(void)
{
    /* Our write end closed first: if fork failed, no child holds one and read sees EOF. */
    if (fork_copy.pipe[1] >= 0) {
        close(fork_copy.pipe[1]);
    }
    if (fork_copy.pipe[0] >= 0) {
        char c;
        while (read(fork_copy.pipe[0], &c, 1) < 0 && errno == EINTR) {
        }
        close(fork_copy.pipe[0]);
    }
    fork_copy.pipe[0] = fork_copy.pipe[1] = -1;
    pthread_mutex_unlock(&fork_copy.lock);
}

/* In the child, so only async-signal-safe calls. A failure cannot be left behind (the child
 * would write its parent's memory): it is reported and the child exits with status 70. */
static void fork_fail(const char *what)
{
    static const char head[] = "fabshmem: forked child of a PE: ";
    static const char tail[] = "; the child exits (status 70)\n";
    if (write(STDERR_FILENO, head, sizeof(head) - 1) < 0 ||
        write(STDERR_FILENO, what, strlen(what)) < 0 ||
        write(STDERR_FILENO, tail, sizeof(tail) - 1) < 0) {
        _exit(70);
    }
    _exit(70);
}

/* The copy is made in 2 MiB pages where whole 2 MiB blocks hold data (the heap base is 2 MiB
 * aligned and mremap keeps the pages), so a large written heap is copied with few faults;
 * sparse data stays in small pages, which never makes the child's copy larger than the data. */
#define HUGE ((size_t)2 << 20)

static void make_private(const struct own_seg *sg)
{
    uint8_t *raw = mmap(NULL, sg->len + HUGE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        fork_fail("no memory for a private copy of symmetric memory");
    }
    /* copy: congruent with sg->addr modulo 2 MiB, inside raw; the rest of raw goes back. */
    size_t lead = ((uintptr_t)sg->addr - (uintptr_t)raw) & (HUGE - 1);
    uint8_t *copy = raw + lead;
    if (lead) {
        munmap(raw, lead);
    }
    munmap(copy + sg->len, HUGE - lead);
    /* Only the extents that hold pages: a hole reads as zeros, and so does the fresh copy. The
     * memfd is read with pread (no shared file offset moves but lseek's, which nobody uses).
     * The advice only saves time, so its failure (an older kernel) changes nothing. */
    off_t len = (off_t)sg->len;
    for (off_t at = 0; at < len;) {
        off_t data = lseek(sg->fd, at, SEEK_DATA);
        if (data < 0 || data >= len) {
            break; /* ENXIO: no data past at */
        }
        off_t hole = lseek(sg->fd, data, SEEK_HOLE);
        if (hole < 0 || hole > len) {
            hole = len;
        }
        uintptr_t hb = ((uintptr_t)(copy + data) + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
        uintptr_t he = (uintptr_t)(copy + hole) & ~(uintptr_t)(HUGE - 1);
#ifdef MADV_HUGEPAGE
        if (he > hb) {
            (void)madvise((void *)hb, he - hb, MADV_HUGEPAGE);
        }
#endif
#ifdef MADV_POPULATE_WRITE
        (void)madvise(copy + data, (size_t)(hole - data), MADV_POPULATE_WRITE);
#endif
        for (off_t o = data; o < hole;) {
            ssize_t n = pread(sg->fd, copy + o, (size_t)(hole - o), o);
            if (n <= 0) {
                fork_fail("copying symmetric memory");
            }
            o += n;
        }
        at = hole;
    }
    /* One system call replaces the shared mapping by the copy, so no instant has neither. */
    if (mremap(copy, sg->len, sg->len, MREMAP_MAYMOVE | MREMAP_FIXED, sg->addr) == MAP_FAILED) {
        fork_fail("replacing symmetric memory by a private copy");
    }
}

static void fork_child(void)
{
    /* The data segment first: with the library linked statically, fork_copy and peer_maps live
     * in it, and until it is private every store there would land in the parent. */
    static const enum fsh_seg order[] = {FSH_SEG_DATA, FSH_SEG_HEAP};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        if (fork_copy.seg[order[i]].addr) {
            make_private(&fork_copy.seg[order[i]]);
        }
    }
    for (int s = 0; s < FSH_NSEGS; s++) {
        if (fork_copy.seg[s].addr) {
            close(fork_copy.seg[s].fd);
            fork_copy.seg[s] = (struct own_seg){NULL, 0, -1};
        }
    }
    for (size_t i = 0; peer_maps.maps && i < (size_t)peer_maps.npes * FSH_NSEGS; i++) {
        if (peer_maps.maps[i].addr &&
            mmap(peer_maps.maps[i].addr, peer_maps.maps[i].len, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED) {
            fork_fail("unmapping a peer's symmetric memory");
        }
    }
    /* The child is not a PE, also when forked after shmem_finalize: no at-exit finalize (it
     * would join its parent's barrier) nor bootstrap's end (its parent's PMIx connection), and
     * an OpenSHMEM call in it ends the child (not the job) with a message saying why. */
    if (fsh_rt.state == FSH_STATE_RUNNING) {
        fsh_rt.state = FSH_STATE_FINALIZED;
    }
    fsh_rt.forked = true;
    if (fork_copy.pipe[1] >= 0) {
        char c = 1;
        if (write(fork_copy.pipe[1], &c, 1) < 0) {
            c = 0; /* the parent then sees EOF at our exit: the same */
        }
        close(fork_copy.pipe[1]);
        close(fork_copy.pipe[0]);
    }
    fork_copy.pipe[0] = fork_copy.pipe[1] = -1;
    pthread_mutex_unlock(&fork_copy.lock);
}

/* This PE's memfd mapping of seg, made private in a forked child (addr NULL: forget it). */
static void fork_track(enum fsh_seg seg, void *addr, size_t len, int fd)
{
    pthread_mutex_lock(&fork_copy.lock);
    fork_copy.seg[seg] = (struct own_seg){addr, len, addr ? fd : -1};
    pthread_mutex_unlock(&fork_copy.lock);
}

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

/* FNV-1a over bytes, continuing from h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
    }
    return h;
}

/* Which process space this PE's pid is in: a hash of the kernel's boot id, the pid namespace
 * and the host name. Two PEs with the same key see each other in /proc: a PE on a pretend node
 * (FABSHMEM_SIM_NODES) or in another network namespace of this machine can still be looked up
 * as a process. The host name keeps apart "hosts" that a test made with their own UTS
 * namespaces (tests/multihost: they are to look remote); the pid namespace keeps apart
 * containers of one kernel. 0 when any part cannot be read. */
static uint64_t host_key(void)
{
    char boot[64] = "", host[256] = "";
    struct stat ns;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, boot, sizeof(boot) - 1) : -1;
    if (fd >= 0) {
        close(fd);
    }
    if (n <= 0 || stat("/proc/self/ns/pid", &ns) != 0 || gethostname(host, sizeof(host) - 1) != 0) {
        return 0;
    }
    uint64_t h = fnv(0xcbf29ce484222325ull, boot, (size_t)n);
    h = fnv(h, &ns.st_dev, sizeof(ns.st_dev));
    h = fnv(h, &ns.st_ino, sizeof(ns.st_ino));
    h = fnv(h, host, strlen(host));
    return h ? h : 1;
}

int fsh_local_init(enum fsh_intranode mode, int npes, int local_size)
{
    memset(&peer_maps, 0, sizeof(peer_maps));
    peer_maps.npes = npes;
    peer_maps.self = mode == FSH_INTRANODE_AUTO;
    peer_maps.share = peer_maps.self && local_size > 1;
    peer_maps.mine.pid = (int32_t)getpid();
    peer_maps.mine.host = host_key();
    for (int s = 0; s < FSH_NSEGS; s++) {
        peer_maps.mine.fd[s] = -1;
    }
    fsh_local.cpu_atomics = false;
    fsh_local.base = NULL;
    if (!fork_copy.registered) {
        /* Also without shared memory: a forked child must not run the at-exit finalize. */
        int rc = pthread_atfork(fork_prepare, fork_parent, fork_child);
        if (rc != 0) {
            return fsh_err(-rc, "", "pthread_atfork: %s", strerror(rc));
        }
        fork_copy.registered = true;
    }
    /* Kept in both modes: the pids tell live.c whether a PE of this node still runs. */
    peer_maps.peers = calloc((size_t)npes, sizeof(*peer_maps.peers));
    if (!peer_maps.peers) {
        return fsh_err(-ENOMEM, "", "out of memory for the intra-node table of %d PEs", npes);
    }
    if (!peer_maps.self) {
        return 0;
    }
    fsh_local.base = calloc((size_t)npes * FSH_NSEGS, sizeof(*fsh_local.base));
    peer_maps.maps = calloc((size_t)npes * FSH_NSEGS, sizeof(*peer_maps.maps));
    if (!fsh_local.base || !peer_maps.peers || !peer_maps.maps) {
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
    peer_maps.mine.len[FSH_SEG_HEAP] = size; /* published even when not shared: peers then know */
    if (!peer_maps.share) {
        return -1;
    }
    int fd = make_memfd("fabshmem-heap", size);
    if (fd < 0) {
        peer_maps.share = false;
        return -1;
    }
    peer_maps.mine.fd[FSH_SEG_HEAP] = fd;
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

/* Copy [from, from + len) into fd at offset 0, skipping all-zero pages (a memfd reads as zeros). */
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

/*
 * The move of the data segment onto its memfd must lose no store of a thread the program (or
 * a runtime it links: OpenMP, an I/O library) started before shmem_init. So the segment is
 * read-only from before the copy until the memfd is mapped over it: a store in the window
 * faults, and the handler below holds that thread until the move is done, then returns, so the
 * store is made again, on the memfd's pages. The moving thread writes nothing in the segment
 * in the window (when the library is linked statically its own statics are there too: the
 * window's code only reads them, and its only library call, syscall, is resolved before), and
 * a fault of its own there is a bug that crashes rather than waits. The kernel's own stores do
 * not fault: a read(2) by another thread into a global buffer fails with EFAULT in the window
 * (docs/intranode.md, "Threads started before shmem_init").
 *
 * The handler stays installed for the life of the process: a thread that faulted in the window
 * may be delivered its signal only after the window (it was preempted between the fault and
 * the delivery), and must then retry, not die. Any other SIGSEGV, and a second fault at the
 * same address in a row in one thread (the page really is not writable), goes to the handler
 * that was there before (or the default action).
 */
static struct {
    uintptr_t start, end;
    int moving;       /* the segment is read-only for the move */
    long mover;       /* its thread id */
    bool installed;
    struct sigaction prev;
} seg_move;

static __thread uintptr_t retried __attribute__((tls_model("initial-exec")));

static void move_fault(int sig, siginfo_t *si, void *ctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    if (a >= seg_move.start && a < seg_move.end && syscall(SYS_gettid) != seg_move.mover) {
        if (__atomic_load_n(&seg_move.moving, __ATOMIC_ACQUIRE)) {
            while (__atomic_load_n(&seg_move.moving, __ATOMIC_ACQUIRE)) {
                syscall(SYS_sched_yield);
            }
            retried = a;
            return;
        }
        if (retried != a) {
            retried = a; /* faulted in the window, delivered after it: retry once */
            return;
        }
    }
    retried = 0;
    if (seg_move.prev.sa_handler == SIG_DFL || seg_move.prev.sa_handler == SIG_IGN) {
        /* The default action, taken by the faulting instruction when it runs again (a fault
         * cannot be ignored). */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGSEGV, &dfl, NULL);
    } else if (seg_move.prev.sa_flags & SA_SIGINFO) {
        seg_move.prev.sa_sigaction(sig, si, ctx);
    } else {
        seg_move.prev.sa_handler(sig);
    }
}

static int move_data(int fd, uintptr_t start, size_t span, size_t page)
{
    if (!seg_move.installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = move_fault;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSEGV, &sa, &seg_move.prev) != 0) {
            return -1;
        }
        seg_move.installed = true;
    }
    seg_move.start = start;
    seg_move.end = start + span;
    seg_move.mover = syscall(SYS_gettid); /* also binds syscall before the window */
    __atomic_store_n(&seg_move.moving, 1, __ATOMIC_RELEASE);
    int rc = -1;
    if (syscall(SYS_mprotect, start, span, PROT_READ) == 0) {
        /* The window: from here to the mmap this thread stores nothing in the segment. MAP_FIXED
         * fails before it replaces anything. */
        if (copy_pages(fd, (const uint8_t *)start, span, page) == 0 &&
            (void *)syscall(SYS_mmap, start, span, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_FIXED, fd, (off_t)0) != MAP_FAILED) {
            rc = 0;
        } else {
            int e = errno;
            syscall(SYS_mprotect, start, span, PROT_READ | PROT_WRITE);
            errno = e;
        }
    }
    __atomic_store_n(&seg_move.moving, 0, __ATOMIC_RELEASE);
    return rc;
}

void fsh_local_share_data(void *base, size_t len)
{
    if (!peer_maps.self || len == 0) {
        return;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)base & ~(page - 1);
    uintptr_t end = ((uintptr_t)base + len + page - 1) & ~(page - 1);
    size_t span = end - start;
    peer_maps.mine.len[FSH_SEG_DATA] = span; /* published even when not shared: peers then know */
    if (!peer_maps.share) {
        return;
    }
#if FSH_TSAN
    /* ThreadSanitizer's runtime lives in the executable's data and its background thread
     * writes it at any time: a copy could lose those writes. Static data goes through the
     * fabric in such a build. */
    FSH_INFO("ThreadSanitizer build: the data segment is not shared");
    return;
#endif
    peer_maps.mine.page_off = (uint32_t)((uintptr_t)base - start);
    if (fork_copy.seg[FSH_SEG_DATA].addr == (uint8_t *)start &&
        fork_copy.seg[FSH_SEG_DATA].len == span) {
        /* An earlier shmem_init of this process moved it already (it stays on its memfd). */
        peer_maps.mine.fd[FSH_SEG_DATA] = fork_copy.seg[FSH_SEG_DATA].fd;
        return;
    }
    int fd = make_memfd("fabshmem-data", span);
    if (fd < 0) {
        return;
    }
    if (move_data(fd, start, span, page) != 0) {
        FSH_INFO("moving the data segment onto a memfd: %s; its RMA between PEs of this node "
                 "goes through the fabric", strerror(errno));
        close(fd);
        return;
    }
    peer_maps.mine.fd[FSH_SEG_DATA] = fd;
    fork_track(FSH_SEG_DATA, (void *)start, span, fd);
}

size_t fsh_local_blob_size(void)
{
    return sizeof(struct blob);
}

void fsh_local_blob_pack(void *blob)
{
    memcpy(blob, &peer_maps.mine, sizeof(peer_maps.mine));
}

void fsh_local_blob_unpack(int pe, const void *blob)
{
    if (peer_maps.peers) {
        memcpy(&peer_maps.peers[pe], blob, sizeof(struct blob));
    }
}

/* A peer that cannot be mapped: said at info level (it is reached through the fabric), the
 * first kept for fsh_local_unmapped (a job without a fabric cannot reach it at all). */
static bool not_mapped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool not_mapped(const char *fmt, ...)
{
    char msg[sizeof(peer_maps.why)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    FSH_INFO("%s: reached through the fabric", msg);
    if (!peer_maps.why[0]) {
        memcpy(peer_maps.why, msg, sizeof(msg));
    }
    return false;
}

/* Map segment seg of peer pe; false (not_mapped) when it cannot be. */
static bool map_peer(int pe, enum fsh_seg seg)
{
    const struct blob *b = &peer_maps.peers[pe];
    const char *what = seg == FSH_SEG_HEAP ? "heap" : "data";
    if (b->len[seg] == 0) {
        return true; /* nothing to map (a program without data) */
    }
    if (b->fd[seg] < 0) {
        /* It has the segment but could not share it. */
        return not_mapped("PE %d did not share its %s segment (its FABSHMEM_LOG=info says why)",
                          pe, what);
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)b->pid, (int)b->fd[seg]);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return not_mapped("cannot open PE %d's memory (%s: %s; a different user, or not "
                          "dumpable)", pe, path, strerror(errno));
    }
    uint8_t *p = fsh_heap_map(b->len[seg], fd);
    close(fd);
    if (!p) {
        not_mapped("cannot map PE %d's %s segment (%s)", pe, what, fsh_err_last()->msg);
        fsh_err_clear();
        return false;
    }
    peer_maps.maps[(size_t)pe * FSH_NSEGS + seg] = (struct mapping){p, b->len[seg]};
    fsh_local.base[(size_t)pe * FSH_NSEGS + seg] = p + (seg == FSH_SEG_DATA ? b->page_off : 0);
    return true;
}

static void unmap_peer(int pe)
{
    for (int s = 0; s < FSH_NSEGS; s++) {
        struct mapping *m = &peer_maps.maps[(size_t)pe * FSH_NSEGS + s];
        if (m->addr) {
            munmap(m->addr, m->len);
        }
        m->addr = NULL;
        fsh_local.base[(size_t)pe * FSH_NSEGS + s] = NULL;
    }
}

int fsh_local_attach(const int *node_of, bool *all_mapped)
{
    *all_mapped = peer_maps.self;
    if (!peer_maps.self) {
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
    if (peer_maps.mine.fd[FSH_SEG_HEAP] >= 0) {
        fork_track(FSH_SEG_HEAP, fsh_mr_local_addr(FSH_SEG_HEAP, 0),
                   peer_maps.mine.len[FSH_SEG_HEAP], peer_maps.mine.fd[FSH_SEG_HEAP]);
    }
    for (int pe = 0; pe < peer_maps.npes; pe++) {
        if (pe == me || node_of[pe] != node_of[me]) {
            continue;
        }
        if (!peer_maps.share && !peer_maps.why[0]) {
            not_mapped("this PE could not share its memory with PE %d (memfd_create failed; "
                       "FABSHMEM_LOG=info says why)", pe);
        }
        if (!peer_maps.share || !map_peer(pe, FSH_SEG_HEAP)) {
            unmap_peer(pe);
            *all_mapped = false;
            continue;
        }
        if (!map_peer(pe, FSH_SEG_DATA)) {
            *all_mapped = false; /* its static data through the fabric, so AMOs too */
        }
        peer_maps.mapped++;
    }
    return 0;
}

void fsh_local_fini(void)
{
    /* The heap is unmapped next (init.c): its memfd goes. The data segment stays on its memfd
     * for the rest of the process, so a fork after shmem_finalize still needs that one. */
    fork_track(FSH_SEG_HEAP, NULL, 0, -1);
    if (peer_maps.mine.fd[FSH_SEG_HEAP] >= 0) {
        close(peer_maps.mine.fd[FSH_SEG_HEAP]);
    }
    if (peer_maps.maps) {
        for (int pe = 0; pe < peer_maps.npes; pe++) {
            if (pe != fsh_rt.pe) {
                unmap_peer(pe);
            }
        }
    }
    free(fsh_local.base);
    free(peer_maps.peers);
    free(peer_maps.maps);
    memset(&peer_maps, 0, sizeof(peer_maps));
    memset(&fsh_local, 0, sizeof(fsh_local));
}

bool fsh_local_shares_data(void)
{
    return !FSH_TSAN;
}

const char *fsh_local_unmapped(void)
{
    return peer_maps.why[0] ? peer_maps.why : "every peer mapped";
}

int fsh_local_pid(int pe)
{
    return peer_maps.peers && pe >= 0 && pe < peer_maps.npes ? (int)peer_maps.peers[pe].pid : 0;
}

int fsh_local_visible_pid(int pe)
{
    if (!peer_maps.peers || pe < 0 || pe >= peer_maps.npes || peer_maps.mine.host == 0 ||
        peer_maps.peers[pe].host != peer_maps.mine.host) {
        return 0;
    }
    return (int)peer_maps.peers[pe].pid;
}

void fsh_local_describe(char *buf, size_t len)
{
    if (!peer_maps.self) {
        snprintf(buf, len, "fabric for every PE (FABSHMEM_INTRANODE=fabric)");
        return;
    }
    snprintf(buf, len, "load/store to itself and %d PE(s) of this node%s, %s", peer_maps.mapped,
             peer_maps.share ? "" : " (no sharing)",
             fsh_local.cpu_atomics ? "AMOs as CPU atomics (one node)" : "AMOs through the fabric");
}
