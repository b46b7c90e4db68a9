/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_cuda.c: a stand-in for libcuda.so.1, for testing the device heap on hosts without a GPU.
 *
 * It implements exactly the driver entry points runtime/cuda.c resolves, with one fake device.
 * "Device memory" is ordinary host memory from mmap, kept PROT_NONE except while the mock
 * itself copies into or out of it: a runtime that touched device memory directly (a memcpy
 * where a driver copy belongs) dies with SIGSEGV here instead of passing by luck. Copies also
 * check that each side is of the kind the call says (host or device), and
 * cuPointerGetAttribute answers only for the mock's own allocations, as the driver does.
 *
 * What it proves: the protocol and bookkeeping (which side copies what, when, and that data
 * arrives intact). What it cannot prove: anything about a real GPU (DMA visibility, ordering
 * against kernels, dmabuf or FI_HMEM registration, performance). Those need a GPU machine.
 *
 * MOCK_CUDA_INIT=<n> makes cuInit fail with CUDA error n (100: no device), for the
 * "no GPU" path. MOCK_CUDA_HOST_VISIBLE=1 leaves device memory readable and writable,
 * so a provider can move it when the runtime registers it as host memory
 * (FABSHMEM_DEVICE_IFACE=system): that runs the direct registration path end to end here,
 * at the price of the PROT_NONE check.
 *
 * CUDA IPC (cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle): every allocation is a
 * memfd, so another process can map it; the handle names the exporter's (pid, fd) and the
 * importer opens /proc/<pid>/fd/<fd>, mapped PROT_NONE like the exporter's own, so a runtime
 * that loaded or stored through a peer's mapping dies here too. As the driver: a handle is
 * taken of an allocation's base only, opening one's own handle in the exporting process is
 * CUDA_ERROR_INVALID_CONTEXT, flags other than CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS are
 * CUDA_ERROR_INVALID_VALUE, an imported pointer cannot be cuMemFree'd or re-exported, and
 * only an imported one can be closed. MOCK_CUDA_IPC_OPEN=<n> makes cuIpcOpenMemHandle fail
 * with CUDA error n (a driver that refuses the mapping: the runtime's fallback).
 *
 * Streams run for real (the "streams" section at the end): each created stream, and the legacy
 * stream 0, has a worker thread executing its queued operations in order (copies, memsets,
 * stream write/wait value, host functions) after the call returned, so a program that forgets
 * a synchronization reads stale data here as on a GPU. Graph capture records a stream's
 * operations instead of running them; a launched graph replays them on a stream. User objects
 * (mock_uobj.c) are held by graphs, their executable graphs and launches, as the driver's.
 * MOCK_CUDA_STREAM_MEMOPS=0 makes the stream memory operations unsupported (as on a driver or
 * platform without them), for the cuLaunchHostFunc fallback.
 *
 * Pinned and pageable host memory, as CUDA's "API synchronization behavior" page (driver API)
 * states it: a copy from device memory to pageable host memory "returns only once the copy has
 * completed", and for pageable memory that must be staged "the driver may synchronize with the
 * stream". Host memory is pinned when it came from cuMemHostAlloc or lies in a range given to
 * cuMemHostRegister (kept in a table; unregistering a pointer that does not start a range is
 * CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, registering over one is ..._ALREADY_REGISTERED, as the
 * driver answers). A cuMemcpyDtoHAsync into pageable memory, or a cuMemcpyHtoDAsync from it, on
 * a stream that is not capturing, is queued and then waited for: the call returns once the
 * stream ran everything before it and the copy itself. The driver only *may* do that for the
 * host-to-device direction; the mock takes the documented worst case, so a program that queues
 * a pageable copy behind something it releases only after the call returned (a gate, a wait for
 * a later signal) hangs here as it may on a GPU, and the copy reads its source at call time, as
 * the driver's staging does. With pinned memory both stay asynchronous. While a stream
 * captures, a pageable copy is recorded like any other: neither that page, cuStreamBeginCapture
 * nor cuGraphAddMemcpyNode (whose only extra restriction is on managed memory) says the driver
 * refuses one, so the mock does not invent an error; programs should still capture pinned
 * memory only.
 *
 * Implicit synchronization (CUDA C++ Programming Guide, "Implicit Synchronization": two
 * commands from different streams cannot run concurrently if the host thread issues, between
 * them, a page-locked host memory allocation or a device memory allocation, among others):
 * cuMemHostAlloc and cuMemAlloc put up a fence; every operation queued after it, on any stream,
 * starts only once every stream ran what it had queued before it. So a call that allocates
 * pinned memory while a stream is held (a gate, a wait for a signal not yet sent) and then
 * waits for other stream work hangs here as it may on a GPU. The other operations of that
 * list (a synchronous memset or same-device copy, a command to the NULL stream) are not
 * modelled: the mock's copies and memsets are all stream-ordered ones.
 *
 * Calls are counted per entry point (every call, whatever its result), so a test can hold an
 * operation to a number of driver calls, above all of synchronizing ones: each costs a round
 * trip to a real GPU (5-20 us), which the mock's host memory hides. mock_cuda_calls(name) (the
 * entry point's exported name, e.g. "cuStreamSynchronize") and mock_cuda_syncs() (the calls
 * that wait for the GPU: stream and context synchronizations) are exported for tests, which
 * find them with dlopen(FABSHMEM_CUDA_LIB, RTLD_NOLOAD) and dlsym; MOCK_CUDA_COUNT=1 prints
 * every entry point's count to stderr when the process exits.
 */
#define _GNU_SOURCE /* memfd_create */
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mock_uobj.h"

#define MAX_ALLOCS 256

static struct {
    pthread_mutex_t lock;
    struct {
        uintptr_t base;
        size_t len;
        int fd;   /* the memfd behind it (exported: -1 for an imported mapping) */
        int ipc;  /* imported with cuIpcOpenMemHandle */
    } a[MAX_ALLOCS];
    int n;
    int ctx_token;
} mk = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---------------------------------------------------------------- call counts */

#define MAX_COUNTED 96

static struct {
    const char *name[MAX_COUNTED]; /* an entry point's __func__ (its exported name) */
    unsigned long n[MAX_COUNTED];
    int used;
    pthread_mutex_t lock;
} calls = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void count_call(const char *fn)
{
    int used = __atomic_load_n(&calls.used, __ATOMIC_ACQUIRE);
    for (int i = 0; i < used; i++) {
        if (calls.name[i] == fn) {
            __atomic_add_fetch(&calls.n[i], 1, __ATOMIC_RELAXED);
            return;
        }
    }
    pthread_mutex_lock(&calls.lock);
    int i = 0;
    while (i < calls.used && calls.name[i] != fn) {
        i++;
    }
    if (i == calls.used && i < MAX_COUNTED) {
        calls.name[i] = fn;
        __atomic_store_n(&calls.used, i + 1, __ATOMIC_RELEASE);
    }
    if (i < MAX_COUNTED) {
        __atomic_add_fetch(&calls.n[i], 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&calls.lock);
}

#define COUNT() count_call(__func__)

void mock_uobj_count(const char *fn)
{
    count_call(fn);
}

unsigned long mock_cuda_calls(const char *name);
unsigned long mock_cuda_syncs(void);

/* How many times the entry point name was called in this process. */
unsigned long mock_cuda_calls(const char *name)
{
    int used = __atomic_load_n(&calls.used, __ATOMIC_ACQUIRE);
    for (int i = 0; i < used; i++) {
        if (strcmp(calls.name[i], name) == 0) {
            return __atomic_load_n(&calls.n[i], __ATOMIC_RELAXED);
        }
    }
    return 0;
}

/* The calls that wait for the GPU (a real driver's round trip each). The mock implements no
 * synchronous cuMemcpy*; if one is added, it belongs here too. */
unsigned long mock_cuda_syncs(void)
{
    return mock_cuda_calls("cuStreamSynchronize") + mock_cuda_calls("cuCtxSynchronize");
}

__attribute__((destructor)) static void print_counts(void)
{
    const char *e = getenv("MOCK_CUDA_COUNT");
    if (!e || !atoi(e)) {
        return;
    }
    for (int i = 0; i < calls.used; i++) {
        fprintf(stderr, "mock_cuda[%d]: %-32s %lu\n", (int)getpid(), calls.name[i], calls.n[i]);
    }
}

/* Index of the allocation holding [p, p+len), or -1. Caller holds the lock. */
static int find(uintptr_t p, size_t len)
{
    for (int i = 0; i < mk.n; i++) {
        if (p >= mk.a[i].base && p - mk.a[i].base <= mk.a[i].len &&
            len <= mk.a[i].len - (p - mk.a[i].base)) {
            return i;
        }
    }
    return -1;
}

/* Open (or close again) the pages of [p, p+len) for the mock's own access. */
static int host_visible(void)
{
    const char *e = getenv("MOCK_CUDA_HOST_VISIBLE");
    return e && atoi(e);
}

static void open_rw(uintptr_t p, size_t len, int on)
{
    if (host_visible()) {
        return;
    }
    uintptr_t page = 4096, lo = p & ~(page - 1), hi = (p + len + page - 1) & ~(page - 1);
    mprotect((void *)lo, hi - lo, on ? PROT_READ | PROT_WRITE : PROT_NONE);
}

CUresult CUDAAPI cuInit(unsigned int flags)
{
    COUNT();
    (void)flags;
    const char *e = getenv("MOCK_CUDA_INIT");
    return e && atoi(e) ? (CUresult)atoi(e) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *v)
{
    COUNT();
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult r, const char **s)
{
    COUNT();
    *s = r == CUDA_ERROR_NO_DEVICE ? "no CUDA-capable device is detected (mock)" : "mock CUDA error";
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *n)
{
    COUNT();
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *d, int ordinal)
{
    COUNT();
    if (ordinal != 0) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
    COUNT();
    (void)d;
    strncpy(id, "0000:00:00.0 (mock)", (size_t)len);
    id[len - 1] = '\0';
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    COUNT();
    (void)d;
    *c = (CUcontext)&mk.ctx_token;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d)
{
    COUNT();
    (void)d;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext c)
{
    COUNT();
    return c == (CUcontext)&mk.ctx_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* Record a mapping of len bytes at m; CUDA_ERROR_OUT_OF_MEMORY when the table is full. */
static CUresult track(void *m, size_t len, int fd, int ipc)
{
    pthread_mutex_lock(&mk.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    if (mk.n < MAX_ALLOCS) {
        mk.a[mk.n].base = (uintptr_t)m;
        mk.a[mk.n].len = len;
        mk.a[mk.n].fd = fd;
        mk.a[mk.n].ipc = ipc;
        mk.n++;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mk.lock);
    return r;
}

static void *map_fd(int fd, size_t len)
{
    void *m = mmap(NULL, len, host_visible() ? PROT_READ | PROT_WRITE : PROT_NONE,
                   MAP_SHARED | MAP_NORESERVE, fd, 0);
    return m == MAP_FAILED ? NULL : m;
}

/* The streams section's: the implicit synchronization of an allocation (see the header). */
static CUresult fence(void);

/* Device memory is a memfd (pages only once written), so a peer process can map it (IPC). */
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t len)
{
    COUNT();
    if (fence() != CUDA_SUCCESS) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int fd = memfd_create("mock-cuda", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    void *m = map_fd(fd, len);
    if (!m) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (track(m, len, fd, 0) != CUDA_SUCCESS) {
        munmap(m, len);
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

/* Unmap entry i (and close its memfd) and drop it. Caller holds the lock. */
static void untrack(int i)
{
    munmap((void *)mk.a[i].base, mk.a[i].len);
    if (mk.a[i].fd >= 0) {
        close(mk.a[i].fd);
    }
    mk.a[i] = mk.a[--mk.n];
}

CUresult CUDAAPI cuMemFree(CUdeviceptr p)
{
    COUNT();
    pthread_mutex_lock(&mk.lock);
    int i = find((uintptr_t)p, 0);
    if (i < 0 || mk.a[i].base != (uintptr_t)p || mk.a[i].ipc) {
        pthread_mutex_unlock(&mk.lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    untrack(i);
    pthread_mutex_unlock(&mk.lock);
    return CUDA_SUCCESS;
}

/* One copy; dst_dev/src_dev say which sides the call claims are device memory. */
static CUresult copy(uintptr_t dst, int dst_dev, uintptr_t src, int src_dev, size_t len)
{
    pthread_mutex_lock(&mk.lock);
    int di = find(dst, len), si = find(src, len);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if ((di >= 0) == dst_dev && (si >= 0) == src_dev) {
        if (di >= 0) {
            open_rw(dst, len, 1);
        }
        if (si >= 0) {
            open_rw(src, len, 1);
        }
        memmove((void *)dst, (const void *)src, len);
        if (di >= 0) {
            open_rw(dst, len, 0);
        }
        if (si >= 0) {
            open_rw(src, len, 0);
        }
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mk.lock);
    return r;
}

/* The streams section's: queue one operation on stream st (or record it while capturing). */
static CUresult submit_copy(CUstream st, uintptr_t dst, int dst_dev, uintptr_t src, int src_dev,
                            size_t n, int memset_value);

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    COUNT();
    return submit_copy(st, (uintptr_t)d, 1, (uintptr_t)s, 0, n, -1);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    COUNT();
    return submit_copy(st, (uintptr_t)d, 0, (uintptr_t)s, 1, n, -1);
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    COUNT();
    return submit_copy(st, (uintptr_t)d, 1, (uintptr_t)s, 1, n, -1);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char c, size_t n, CUstream st)
{
    COUNT();
    return submit_copy(st, (uintptr_t)d, 1, 0, 0, n, c);
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    COUNT();
    if (attr != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    pthread_mutex_lock(&mk.lock);
    int i = find((uintptr_t)p, 1);
    pthread_mutex_unlock(&mk.lock);
    if (i < 0) {
        return CUDA_ERROR_INVALID_VALUE; /* memory the driver never saw, as the real one */
    }
    *(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
}

/* The streams section's: cuMemHostRegister's ranges are kept with its host allocations. */
static CUresult host_register(uintptr_t p, size_t n);
static CUresult host_unregister(uintptr_t p);

CUresult CUDAAPI cuMemHostRegister(void *p, size_t n, unsigned int flags)
{
    COUNT();
    if (!p || n == 0 ||
        (flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP))) {
        return CUDA_ERROR_INVALID_VALUE; /* the flags the mock models */
    }
    return host_register((uintptr_t)p, n);
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    COUNT();
    return host_unregister((uintptr_t)p);
}

CUresult CUDAAPI cuMemGetHandleForAddressRange(void *h, CUdeviceptr p, size_t n,
                                               CUmemRangeHandleType type, unsigned long long fl)
{
    COUNT();
    (void)h;
    (void)p;
    (void)n;
    (void)type;
    (void)fl;
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* Nothing to flush: no NIC ever writes the mock's memory (the direct paths need FI_HMEM). */
CUresult CUDAAPI cuFlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget t,
                                            CUflushGPUDirectRDMAWritesScope scope)
{
    COUNT();
    (void)t;
    (void)scope;
    return CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- CUDA IPC */

/* What a mock handle carries, in CUipcMemHandle's 64 bytes. */
struct mock_ipc {
    uint64_t magic;
    int32_t pid;
    int32_t fd;
    uint64_t len;
};
#define MOCK_IPC_MAGIC 0x6d6f636b69706321ULL
_Static_assert(sizeof(struct mock_ipc) <= CU_IPC_HANDLE_SIZE, "fits a CUipcMemHandle");

CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
    COUNT();
    pthread_mutex_lock(&mk.lock);
    int i = find((uintptr_t)p, 0);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (i >= 0 && mk.a[i].base == (uintptr_t)p && !mk.a[i].ipc) {
        struct mock_ipc m = {MOCK_IPC_MAGIC, (int32_t)getpid(), mk.a[i].fd, mk.a[i].len};
        memset(h, 0, sizeof(*h));
        memcpy(h->reserved, &m, sizeof(m));
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mk.lock);
    return r;
}

CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
{
    COUNT();
    struct mock_ipc m;
    memcpy(&m, h.reserved, sizeof(m));
    const char *e = getenv("MOCK_CUDA_IPC_OPEN");
    if (e && atoi(e)) {
        return (CUresult)atoi(e);
    }
    if (m.magic != MOCK_IPC_MAGIC || flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (m.pid == (int32_t)getpid()) {
        return CUDA_ERROR_INVALID_CONTEXT; /* as the driver: not in the exporting process */
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)m.pid, (int)m.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size != m.len) {
        if (fd >= 0) {
            close(fd);
        }
        return CUDA_ERROR_INVALID_HANDLE;
    }
    void *q = map_fd(fd, m.len);
    close(fd); /* the mapping keeps the memory */
    if (!q) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (track(q, m.len, -1, 1) != CUDA_SUCCESS) {
        munmap(q, m.len);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *p = (CUdeviceptr)(uintptr_t)q;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr p)
{
    COUNT();
    pthread_mutex_lock(&mk.lock);
    int i = find((uintptr_t)p, 0);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (i >= 0 && mk.a[i].base == (uintptr_t)p && mk.a[i].ipc) {
        untrack(i);
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mk.lock);
    return r;
}

/* ------------------------------------------------------------------ streams, graphs, host-mapped
 *
 * A stream is a queue of operations and a worker thread that runs them in order, after the call
 * that queued them returned. Stream 0 (the legacy stream) is one more such stream, made at its
 * first use; it cannot be captured. While a stream captures, its operations go into the
 * capture's list instead; cuGraphLaunch queues a copy of a graph's list on a stream, as often
 * as it is called. Arguments are checked when an operation is queued or captured (the error
 * code the driver returns for them), never later.
 *
 * Host-mapped memory (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP) is one memfd mapped twice:
 * the host address, and a different "device" address that cuMemHostGetDevicePointer gives,
 * the same bytes. Stream memory operations accept only device addresses (device memory, or
 * such a device mapping): a host pointer passed for one is CUDA_ERROR_INVALID_VALUE. */

#define MAX_STREAMS 64
#define MAX_GRAPHS 64
#define MAX_HOST_ALLOCS 64
#define MAX_HOST_REGS 64

enum mop_kind { MOP_COPY, MOP_MEMSET, MOP_WRITE, MOP_WAIT, MOP_HOSTFN, MOP_UOBJ_DROP };

struct mop {
    enum mop_kind kind;
    uintptr_t dst, src;
    int dst_dev, src_dev;
    size_t n;          /* bytes (copy, memset); 4 or 8 (write, wait) */
    uint64_t value;    /* memset byte; the value written or waited for */
    unsigned flags;    /* CU_STREAM_WAIT_VALUE_* */
    CUhostFn fn;
    void *arg;
    unsigned long seq; /* its place in its stream's queue (1, 2, ...), set when queued */
    const struct mfence *fence; /* the last fence before it was queued, or NULL */
    struct mop *next;
};

struct mgraph {
    struct mop *head, *tail;
    int is_exec;       /* a CUgraphExec (instantiated) or a CUgraph */
    int used;
};

struct mstream {
    int used;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;  /* an operation was queued; the queue became empty */
    struct mop *head, *tail;
    int busy;             /* the worker runs an operation */
    unsigned long queued; /* operations queued so far (the last one's seq) */
    unsigned long ran;    /* the seq of the last operation the worker finished */
    unsigned long life;   /* which stream this slot holds (a destroyed one's slot is reused) */
    int stop;
    struct mgraph *capture; /* capturing into this graph, or NULL */
    int capture_broken;   /* an illegal call during capture (cuStreamSynchronize) */
};

/* An allocation's implicit synchronization: what each stream had queued at that moment. Kept
 * for the process's life (allocations are few; operations point at them). */
struct mfence {
    unsigned long upto[MAX_STREAMS];
    unsigned long life[MAX_STREAMS];
};

static struct {
    pthread_mutex_t lock;
    struct mstream s[MAX_STREAMS]; /* s[0]: the legacy stream 0 */
    const struct mfence *fence;    /* the last one; atomic */
    unsigned long lives;
    struct mgraph g[MAX_GRAPHS];
    struct {
        uintptr_t host, dev;
        size_t len;
    } h[MAX_HOST_ALLOCS];
    struct {
        uintptr_t base;
        size_t len;       /* 0: a free entry */
    } reg[MAX_HOST_REGS]; /* cuMemHostRegister's ranges */
} ms = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int memops_supported(void)
{
    const char *e = getenv("MOCK_CUDA_STREAM_MEMOPS");
    return !e || atoi(e) != 0;
}

static void *stream_main(void *arg);

static int start_stream(struct mstream *s)
{
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->head = s->tail = NULL;
    s->busy = s->stop = 0;
    s->queued = s->ran = 0;
    s->life = ++ms.lives; /* under ms.lock, as every start_stream */
    s->capture = NULL;
    s->capture_broken = 0;
    if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
        return -1;
    }
    s->used = 1;
    return 0;
}

/* The stream behind a handle: 0 is the legacy stream (started at first use), else one of ours
 * and alive. NULL for anything else, as the driver answers CUDA_ERROR_INVALID_HANDLE. */
static struct mstream *stream_of(CUstream h)
{
    pthread_mutex_lock(&ms.lock);
    struct mstream *s = NULL;
    if (h == NULL) {
        s = &ms.s[0];
        if (!s->used && start_stream(s) != 0) {
            s = NULL;
        }
    } else {
        for (int i = 1; i < MAX_STREAMS; i++) {
            if ((CUstream)&ms.s[i] == h && ms.s[i].used) {
                s = &ms.s[i];
            }
        }
    }
    pthread_mutex_unlock(&ms.lock);
    return s;
}

static struct mgraph *graph_of(const void *h, int is_exec)
{
    for (int i = 0; i < MAX_GRAPHS; i++) {
        if ((const void *)&ms.g[i] == h && ms.g[i].used && ms.g[i].is_exec == is_exec) {
            return &ms.g[i];
        }
    }
    return NULL;
}

static void append(struct mop **head, struct mop **tail, struct mop *op)
{
    op->next = NULL;
    if (*tail) {
        (*tail)->next = op;
    } else {
        *head = op;
    }
    *tail = op;
}

/* Queue op on s, or record it in the capture; op is taken over. *seq (if not NULL): op's place
 * in the queue, 0 when it was recorded. */
static CUresult queue_seq(struct mstream *s, struct mop *op, unsigned long *seq)
{
    pthread_mutex_lock(&s->lock);
    unsigned long n = 0;
    if (s->capture) {
        append(&s->capture->head, &s->capture->tail, op);
    } else {
        op->seq = n = ++s->queued;
        op->fence = __atomic_load_n(&ms.fence, __ATOMIC_ACQUIRE);
        append(&s->head, &s->tail, op);
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    if (seq) {
        *seq = n;
    }
    return CUDA_SUCCESS;
}

static CUresult queue(struct mstream *s, struct mop *op)
{
    return queue_seq(s, op, NULL);
}

static CUresult fence(void)
{
    struct mfence *f = calloc(1, sizeof(*f));
    if (!f) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&ms.lock);
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct mstream *s = &ms.s[i];
        if (s->used) {
            pthread_mutex_lock(&s->lock);
            f->upto[i] = s->queued;
            f->life[i] = s->life;
            pthread_mutex_unlock(&s->lock);
        }
    }
    __atomic_store_n(&ms.fence, f, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ms.lock);
    return CUDA_SUCCESS;
}

/* Whether every stream ran what it had queued at fence f (a stream since destroyed did). */
static int fence_passed(const struct mfence *f)
{
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct mstream *s = &ms.s[i];
        if (!f->upto[i]) {
            continue;
        }
        pthread_mutex_lock(&s->lock);
        int done = !s->used || s->life != f->life[i] || s->ran >= f->upto[i];
        pthread_mutex_unlock(&s->lock);
        if (!done) {
            return 0;
        }
    }
    return 1;
}

/* Until s's worker finished the operation queued as seq (and so everything before it). */
static void wait_ran(struct mstream *s, unsigned long seq)
{
    pthread_mutex_lock(&s->lock);
    while (s->ran < seq) {
        pthread_cond_wait(&s->cond, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Whether [p, p+n) is pinned host memory: within one cuMemHostAlloc allocation (either of its
 * mappings) or one cuMemHostRegister range. */
static int pinned(uintptr_t p, size_t n)
{
    int yes = 0;
    pthread_mutex_lock(&ms.lock);
    for (int i = 0; i < MAX_HOST_ALLOCS && !yes; i++) {
        size_t len = ms.h[i].len;
        uintptr_t h = ms.h[i].host, d = ms.h[i].dev;
        yes = len && ((p >= h && p - h <= len && n <= len - (p - h)) ||
                      (d && p >= d && p - d <= len && n <= len - (p - d)));
    }
    for (int i = 0; i < MAX_HOST_REGS && !yes; i++) {
        uintptr_t b = ms.reg[i].base;
        size_t len = ms.reg[i].len;
        yes = len && p >= b && p - b <= len && n <= len - (p - b);
    }
    pthread_mutex_unlock(&ms.lock);
    return yes;
}

static CUresult host_register(uintptr_t p, size_t n)
{
    pthread_mutex_lock(&ms.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    int free_i = -1;
    for (int i = 0; i < MAX_HOST_REGS; i++) {
        uintptr_t b = ms.reg[i].base;
        if (!ms.reg[i].len) {
            free_i = free_i < 0 ? i : free_i;
        } else if (p < b + ms.reg[i].len && b < p + n) {
            r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED; /* overlaps a registered range */
            free_i = -2;
            break;
        }
    }
    if (free_i >= 0) {
        ms.reg[free_i].base = p;
        ms.reg[free_i].len = n;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&ms.lock);
    return r;
}

static CUresult host_unregister(uintptr_t p)
{
    pthread_mutex_lock(&ms.lock);
    CUresult r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED; /* as the driver: only a range's start */
    for (int i = 0; i < MAX_HOST_REGS; i++) {
        if (ms.reg[i].len && ms.reg[i].base == p) {
            ms.reg[i].len = 0;
            r = CUDA_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&ms.lock);
    return r;
}

static struct mop *new_op(enum mop_kind kind)
{
    struct mop *op = calloc(1, sizeof(*op));
    if (op) {
        op->kind = kind;
    }
    return op;
}

/* A device address the stream memory operations may use: device memory (1), a host-mapped
 * allocation's device mapping (2, *host set to its host address), else 0. */
static int device_word(uintptr_t p, size_t n, uintptr_t *host)
{
    pthread_mutex_lock(&mk.lock);
    int i = find(p, n);
    pthread_mutex_unlock(&mk.lock);
    if (i >= 0) {
        *host = p;
        return 1;
    }
    pthread_mutex_lock(&ms.lock);
    int kind = 0;
    for (int j = 0; j < MAX_HOST_ALLOCS; j++) {
        if (ms.h[j].len && p >= ms.h[j].dev && p - ms.h[j].dev <= ms.h[j].len &&
            n <= ms.h[j].len - (p - ms.h[j].dev)) {
            *host = ms.h[j].host + (p - ms.h[j].dev);
            kind = 2;
        }
    }
    pthread_mutex_unlock(&ms.lock);
    return kind;
}

static uint64_t load_word(uintptr_t p, size_t n)
{
    uintptr_t h;
    int kind = device_word(p, n, &h);
    uint64_t v = 0;
    if (kind == 1) {
        pthread_mutex_lock(&mk.lock);
        open_rw(p, n, 1);
    }
    if (kind) {
        v = n == 4 ? __atomic_load_n((uint32_t *)h, __ATOMIC_ACQUIRE)
                   : __atomic_load_n((uint64_t *)h, __ATOMIC_ACQUIRE);
    }
    if (kind == 1) {
        open_rw(p, n, 0);
        pthread_mutex_unlock(&mk.lock);
    }
    return v;
}

static void store_word(uintptr_t p, size_t n, uint64_t v)
{
    uintptr_t h;
    int kind = device_word(p, n, &h);
    if (kind == 1) {
        pthread_mutex_lock(&mk.lock);
        open_rw(p, n, 1);
    }
    if (kind && n == 4) {
        __atomic_store_n((uint32_t *)h, (uint32_t)v, __ATOMIC_RELEASE);
    } else if (kind) {
        __atomic_store_n((uint64_t *)h, v, __ATOMIC_RELEASE);
    }
    if (kind == 1) {
        open_rw(p, n, 0);
        pthread_mutex_unlock(&mk.lock);
    }
}

static int wait_met(uint64_t have, uint64_t want, unsigned flags, size_t n)
{
    switch (flags & 0xf) {
    case CU_STREAM_WAIT_VALUE_GEQ:
        return n == 4 ? (int32_t)((uint32_t)have - (uint32_t)want) >= 0
                      : (int64_t)(have - want) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return have == want;
    case CU_STREAM_WAIT_VALUE_AND: return (have & want) != 0;
    case CU_STREAM_WAIT_VALUE_NOR: return ~(have | want) != 0;
    default: return 0;
    }
}

static void run_op(struct mop *op)
{
    switch (op->kind) {
    case MOP_COPY: copy(op->dst, op->dst_dev, op->src, op->src_dev, op->n); break;
    case MOP_MEMSET:
        pthread_mutex_lock(&mk.lock);
        if (find(op->dst, op->n) >= 0) {
            open_rw(op->dst, op->n, 1);
            memset((void *)op->dst, (int)op->value, op->n);
            open_rw(op->dst, op->n, 0);
        }
        pthread_mutex_unlock(&mk.lock);
        break;
    case MOP_WRITE: store_word(op->dst, op->n, op->value); break;
    case MOP_WAIT: {
        /* As a GPU's wait: polls the word, the stream stays blocked until it holds. */
        unsigned spins = 0;
        while (!wait_met(load_word(op->dst, op->n), op->value, op->flags, op->n)) {
            if (++spins < 64) {
                sched_yield();
            } else {
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
            }
        }
        break;
    }
    case MOP_HOSTFN: op->fn(op->arg); break;
    case MOP_UOBJ_DROP: mock_uobj_drop(op->arg); free(op->arg); break; /* a launch ran */
    }
}

static void *stream_main(void *arg)
{
    struct mstream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->stop) {
            pthread_cond_wait(&s->cond, &s->lock);
        }
        if (!s->head) {
            break; /* stop, with nothing left */
        }
        struct mop *op = s->head;
        s->head = op->next;
        if (!s->head) {
            s->tail = NULL;
        }
        s->busy = 1;
        unsigned long seq = op->seq;
        pthread_mutex_unlock(&s->lock);
        /* An allocation between it and other streams' earlier work: wait for that work. */
        for (unsigned spins = 0; op->fence && !fence_passed(op->fence); spins++) {
            if (spins < 64) {
                sched_yield();
            } else {
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
            }
        }
        run_op(op);
        free(op);
        pthread_mutex_lock(&s->lock);
        s->busy = 0;
        s->ran = seq;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static CUresult submit_copy(CUstream st, uintptr_t dst, int dst_dev, uintptr_t src, int src_dev,
                            size_t n, int memset_value)
{
    struct mstream *s = stream_of(st);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&mk.lock);
    int di = find(dst, n), si = memset_value >= 0 ? -1 : find(src, n);
    pthread_mutex_unlock(&mk.lock);
    if ((di >= 0) != dst_dev || (si >= 0) != src_dev) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct mop *op = new_op(memset_value >= 0 ? MOP_MEMSET : MOP_COPY);
    if (!op) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    op->dst = dst;
    op->dst_dev = dst_dev;
    op->src = src;
    op->src_dev = src_dev;
    op->n = n;
    op->value = memset_value >= 0 ? (uint64_t)memset_value : 0;
    /* A copy to or from pageable host memory returns once it ran (the header says why). */
    int host_side = memset_value < 0 && dst_dev != src_dev;
    int pageable = host_side && !pinned(dst_dev ? src : dst, n);
    unsigned long seq = 0;
    CUresult r = queue_seq(s, op, &seq);
    if (r == CUDA_SUCCESS && pageable && seq) {
        wait_ran(s, seq);
    }
    return r;
}

CUresult CUDAAPI cuStreamCreate(CUstream *out, unsigned int flags)
{
    COUNT();
    if (!out || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&ms.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 1; i < MAX_STREAMS; i++) {
        if (!ms.s[i].used) {
            if (start_stream(&ms.s[i]) == 0) {
                *out = (CUstream)&ms.s[i];
                r = CUDA_SUCCESS;
            }
            break;
        }
    }
    pthread_mutex_unlock(&ms.lock);
    return r;
}

/* The driver lets a destroyed stream finish its work; so does the mock, then ends the thread. */
CUresult CUDAAPI cuStreamDestroy(CUstream h)
{
    COUNT();
    struct mstream *s = h ? stream_of(h) : NULL;
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_mutex_lock(&ms.lock);
    s->used = 0;
    pthread_mutex_unlock(&ms.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream h)
{
    COUNT();
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&s->lock);
    if (s->capture) {
        s->capture_broken = 1; /* the driver invalidates the capture */
        pthread_mutex_unlock(&s->lock);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    while (s->head || s->busy) {
        pthread_cond_wait(&s->cond, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream h)
{
    COUNT();
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&s->lock);
    CUresult r = s->capture ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                 : (s->head || s->busy) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
    pthread_mutex_unlock(&s->lock);
    return r;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream h, CUcontext *ctx)
{
    COUNT();
    if (!stream_of(h) || !ctx) {
        return !ctx ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
    }
    *ctx = (CUcontext)&mk.ctx_token;
    return CUDA_SUCCESS;
}

static CUresult mem_op(CUstream h, enum mop_kind kind, CUdeviceptr addr, uint64_t value,
                       size_t n, unsigned flags)
{
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!memops_supported()) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    uintptr_t host;
    if ((uintptr_t)addr % n != 0 || !device_word((uintptr_t)addr, n, &host)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    unsigned cmp = flags & 0xf;
    if (kind == MOP_WAIT && cmp != CU_STREAM_WAIT_VALUE_GEQ && cmp != CU_STREAM_WAIT_VALUE_EQ &&
        cmp != CU_STREAM_WAIT_VALUE_AND && cmp != CU_STREAM_WAIT_VALUE_NOR) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct mop *op = new_op(kind);
    if (!op) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    op->dst = (uintptr_t)addr;
    op->n = n;
    op->value = value;
    op->flags = flags;
    return queue(s, op);
}

CUresult CUDAAPI cuStreamWriteValue32(CUstream h, CUdeviceptr a, cuuint32_t v, unsigned int fl)
{
    COUNT();
    return mem_op(h, MOP_WRITE, a, v, 4, fl);
}

CUresult CUDAAPI cuStreamWriteValue64(CUstream h, CUdeviceptr a, cuuint64_t v, unsigned int fl)
{
    COUNT();
    return mem_op(h, MOP_WRITE, a, v, 8, fl);
}

CUresult CUDAAPI cuStreamWaitValue32(CUstream h, CUdeviceptr a, cuuint32_t v, unsigned int fl)
{
    COUNT();
    return mem_op(h, MOP_WAIT, a, v, 4, fl);
}

CUresult CUDAAPI cuStreamWaitValue64(CUstream h, CUdeviceptr a, cuuint64_t v, unsigned int fl)
{
    COUNT();
    return mem_op(h, MOP_WAIT, a, v, 8, fl);
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream h, CUhostFn fn, void *arg)
{
    COUNT();
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!fn) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct mop *op = new_op(MOP_HOSTFN);
    if (!op) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    op->fn = fn;
    op->arg = arg;
    return queue(s, op);
}

CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d)
{
    COUNT();
    if (!v) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (d != 0) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS:
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR:
        *v = memops_supported();
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        *v = 1;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE; /* an attribute the mock does not model */
    }
}

/* ---- capture and graphs */

CUresult CUDAAPI cuStreamBeginCapture(CUstream h, CUstreamCaptureMode mode)
{
    COUNT();
    if (h == NULL) {
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
    }
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&ms.lock);
    struct mgraph *g = NULL;
    for (int i = 0; i < MAX_GRAPHS && !g; i++) {
        if (!ms.g[i].used) {
            g = &ms.g[i];
            memset(g, 0, sizeof(*g));
            g->used = 1;
        }
    }
    pthread_mutex_unlock(&ms.lock);
    if (!g) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&s->lock);
    CUresult r = CUDA_SUCCESS;
    if (s->capture) {
        r = CUDA_ERROR_ILLEGAL_STATE;
    } else {
        s->capture = g;
        s->capture_broken = 0;
    }
    pthread_mutex_unlock(&s->lock);
    if (r != CUDA_SUCCESS) {
        g->used = 0;
    }
    return r;
}

static void drop_ops(struct mop *op)
{
    while (op) {
        struct mop *next = op->next;
        free(op);
        op = next;
    }
}

CUresult CUDAAPI cuStreamEndCapture(CUstream h, CUgraph *out)
{
    COUNT();
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!out) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&s->lock);
    struct mgraph *g = s->capture;
    int broken = s->capture_broken;
    s->capture = NULL;
    s->capture_broken = 0;
    pthread_mutex_unlock(&s->lock);
    if (!g) {
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    if (broken) {
        drop_ops(g->head);
        pthread_mutex_lock(&ms.lock);
        mock_uobj_drop(g); /* the driver destroys the graph */
        g->used = 0;
        pthread_mutex_unlock(&ms.lock);
        *out = NULL;
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    *out = (CUgraph)g;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *status)
{
    COUNT();
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!status) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&s->lock);
    *status = !s->capture ? CU_STREAM_CAPTURE_STATUS_NONE
              : s->capture_broken ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                  : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    pthread_mutex_unlock(&s->lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream h, CUstreamCaptureStatus *status,
                                        cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                        const CUgraphEdgeData **edges, size_t *ndeps)
{
    COUNT();
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!status) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&s->lock);
    *status = !s->capture ? CU_STREAM_CAPTURE_STATUS_NONE
              : s->capture_broken ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                  : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    struct mgraph *g = *status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? s->capture : NULL;
    pthread_mutex_unlock(&s->lock);
    if (id) {
        *id = (cuuint64_t)(uintptr_t)g;
    }
    if (graph) {
        *graph = (CUgraph)g;
    }
    if (deps) {
        *deps = NULL; /* nodes are not modelled: the capture is one list */
    }
    if (edges) {
        *edges = NULL;
    }
    if (ndeps) {
        *ndeps = 0;
    }
    return CUDA_SUCCESS;
}

/* References of user objects owned by a graph (not an executable one). */
static CUresult graph_uobj(CUgraph hg, CUuserObject o, unsigned int count, int add, int move)
{
    pthread_mutex_lock(&ms.lock);
    struct mgraph *g = graph_of(hg, 0);
    pthread_mutex_unlock(&ms.lock);
    if (!g || (add && (move & ~CU_GRAPH_USER_OBJECT_MOVE))) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return add ? mock_uobj_add(g, o, count, move) : mock_uobj_sub(g, o, count);
}

CUresult CUDAAPI cuGraphRetainUserObject(CUgraph hg, CUuserObject o, unsigned int count,
                                         unsigned int flags)
{
    COUNT();
    return graph_uobj(hg, o, count, 1, (int)flags);
}

CUresult CUDAAPI cuGraphReleaseUserObject(CUgraph hg, CUuserObject o, unsigned int count)
{
    COUNT();
    return graph_uobj(hg, o, count, 0, 0);
}

/* A copy of a graph's list of operations. */
static struct mop *copy_ops(const struct mop *op, struct mop **tail)
{
    struct mop *head = NULL;
    *tail = NULL;
    for (; op; op = op->next) {
        struct mop *c = malloc(sizeof(*c));
        if (!c) {
            drop_ops(head);
            return NULL;
        }
        *c = *op;
        append(&head, tail, c);
    }
    return head;
}

CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *out, CUgraph hg, unsigned long long flags)
{
    COUNT();
    (void)flags;
    if (!out) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&ms.lock);
    struct mgraph *g = graph_of(hg, 0), *e = NULL;
    for (int i = 0; g && i < MAX_GRAPHS && !e; i++) {
        if (!ms.g[i].used) {
            e = &ms.g[i];
            memset(e, 0, sizeof(*e));
            e->used = 1;
            e->is_exec = 1;
        }
    }
    pthread_mutex_unlock(&ms.lock);
    if (!g) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!e) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->head = copy_ops(g->head, &e->tail);
    if ((g->head && !e->head) || mock_uobj_copy(g, e) < 0) {
        drop_ops(e->head);
        e->used = 0;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec he, CUstream h)
{
    COUNT();
    pthread_mutex_lock(&ms.lock);
    struct mgraph *e = graph_of(he, 1);
    pthread_mutex_unlock(&ms.lock);
    if (!e) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct mstream *s = stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    struct mop *tail, *head = copy_ops(e->head, &tail);
    if (e->head && !head) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* The launch holds the executable graph's user objects until its last operation ran. */
    struct mop *hold = new_op(MOP_UOBJ_DROP);
    void *launch = malloc(1);
    int held = hold && launch ? mock_uobj_copy(e, launch) : -1;
    if (held <= 0) {
        free(hold);
        free(launch);
        if (held < 0) {
            drop_ops(head);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    } else {
        hold->arg = launch;
        append(&head, &tail, hold);
    }
    pthread_mutex_lock(&s->lock);
    CUresult r = CUDA_SUCCESS;
    if (s->capture) {
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* graphs in graphs: not modelled */
    } else if (head) {
        const struct mfence *f = __atomic_load_n(&ms.fence, __ATOMIC_ACQUIRE);
        for (struct mop *op = head; op; op = op->next) {
            op->seq = ++s->queued;
            op->fence = f;
        }
        if (s->tail) {
            s->tail->next = head;
        } else {
            s->head = head;
        }
        s->tail = tail;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    if (r != CUDA_SUCCESS) {
        for (struct mop *op = head; op; op = op->next) {
            if (op->kind == MOP_UOBJ_DROP) {
                mock_uobj_drop(op->arg);
                free(op->arg);
            }
        }
        drop_ops(head);
    }
    return r;
}

static CUresult graph_free(const void *h, int is_exec)
{
    pthread_mutex_lock(&ms.lock);
    struct mgraph *g = graph_of(h, is_exec);
    if (g) {
        drop_ops(g->head);
        g->head = g->tail = NULL;
        mock_uobj_drop(g); /* its launches and executable graphs hold references of their own */
        g->used = 0;
    }
    pthread_mutex_unlock(&ms.lock);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec he)
{
    COUNT();
    return graph_free(he, 1);
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hg)
{
    COUNT();
    return graph_free(hg, 0);
}

/* ---- host-mapped memory */

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t len, unsigned int flags)
{
    COUNT();
    if (!pp || len == 0 ||
        (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                             CU_MEMHOSTALLOC_WRITECOMBINED))) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (fence() != CUDA_SUCCESS) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    size_t page = 4096, n = (len + page - 1) & ~(page - 1);
    int fd = memfd_create("mock_cuda_host", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)n) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    void *host = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void *dev = (flags & CU_MEMHOSTALLOC_DEVICEMAP)
                    ? mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : NULL;
    close(fd);
    if (host == MAP_FAILED || dev == MAP_FAILED) {
        if (host != MAP_FAILED) {
            munmap(host, n);
        }
        if (dev && dev != MAP_FAILED) {
            munmap(dev, n);
        }
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&ms.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < MAX_HOST_ALLOCS; i++) {
        if (!ms.h[i].len) {
            ms.h[i].host = (uintptr_t)host;
            ms.h[i].dev = (uintptr_t)dev; /* 0: not mapped for the device */
            ms.h[i].len = n;
            r = CUDA_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&ms.lock);
    if (r != CUDA_SUCCESS) {
        munmap(host, n);
        if (dev) {
            munmap(dev, n);
        }
        return r;
    }
    *pp = host;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *out, void *p, unsigned int flags)
{
    COUNT();
    if (!out || flags != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&ms.lock);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < MAX_HOST_ALLOCS; i++) {
        uintptr_t h = ms.h[i].host;
        if (ms.h[i].len && ms.h[i].dev && (uintptr_t)p >= h && (uintptr_t)p - h < ms.h[i].len) {
            *out = (CUdeviceptr)(ms.h[i].dev + ((uintptr_t)p - h));
            r = CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&ms.lock);
    return r;
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    COUNT();
    pthread_mutex_lock(&ms.lock);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < MAX_HOST_ALLOCS; i++) {
        if (ms.h[i].len && ms.h[i].host == (uintptr_t)p) {
            munmap((void *)ms.h[i].host, ms.h[i].len);
            if (ms.h[i].dev) {
                munmap((void *)ms.h[i].dev, ms.h[i].len);
            }
            ms.h[i].len = 0;
            r = CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&ms.lock);
    return r;
}
