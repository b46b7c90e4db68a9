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
 * Streams run for real (mock_stream.c): each created stream, and the legacy stream 0, has a
 * worker thread executing its queued operations in order (copies, memsets, stream write/wait
 * value, host functions) after the call returned, so a program that forgets a synchronization
 * reads stale data here as on a GPU. Graph capture (mock_graph.c) records a stream's operations
 * instead of running them; a launched graph replays them on a stream. User objects
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
 *
 * The files: this one (init, devices, contexts, device memory, copies, pointer attributes, IPC,
 * pinned and host-mapped memory, call counts), mock_stream.c (streams, stream memory operations,
 * host functions, the worker threads and the allocation fence), mock_graph.c (capture and
 * graphs), mock_uobj.c (user objects); the state they share is in mock_cuda_int.h.
 */
#define _GNU_SOURCE /* memfd_create */
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mock_cuda_int.h"

struct mock_mem_state mock_mem = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---------------------------------------------------------------- call counts */

#define MAX_COUNTED 96

static struct {
    const char *name[MAX_COUNTED]; /* an entry point's __func__ (its exported name) */
    unsigned long n[MAX_COUNTED];
    int used;
    pthread_mutex_t lock;
} calls = {.lock = PTHREAD_MUTEX_INITIALIZER};

void mock_count(const char *fn)
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

void mock_uobj_count(const char *fn)
{
    mock_count(fn);
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
int mock_find(uintptr_t p, size_t len)
{
    for (int i = 0; i < mock_mem.n; i++) {
        if (p >= mock_mem.a[i].base && p - mock_mem.a[i].base <= mock_mem.a[i].len &&
            len <= mock_mem.a[i].len - (p - mock_mem.a[i].base)) {
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

void mock_open_rw(uintptr_t p, size_t len, int on)
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
        *v = mock_memops_supported();
        return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        *v = 1;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE; /* an attribute the mock does not model */
    }
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    COUNT();
    (void)d;
    *c = (CUcontext)&mock_mem.ctx_token;
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
    return c == (CUcontext)&mock_mem.ctx_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* Record a mapping of len bytes at m; CUDA_ERROR_OUT_OF_MEMORY when the table is full. */
static CUresult track(void *m, size_t len, int fd, int ipc)
{
    pthread_mutex_lock(&mock_mem.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    if (mock_mem.n < MAX_ALLOCS) {
        mock_mem.a[mock_mem.n].base = (uintptr_t)m;
        mock_mem.a[mock_mem.n].len = len;
        mock_mem.a[mock_mem.n].fd = fd;
        mock_mem.a[mock_mem.n].ipc = ipc;
        mock_mem.n++;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mock_mem.lock);
    return r;
}

static void *map_fd(int fd, size_t len)
{
    void *m = mmap(NULL, len, host_visible() ? PROT_READ | PROT_WRITE : PROT_NONE,
                   MAP_SHARED | MAP_NORESERVE, fd, 0);
    return m == MAP_FAILED ? NULL : m;
}

/* map_fd at a 64 KiB boundary, GDRCopy's GPU page: the driver's large allocations start on a
 * 2 MiB one in practice, and a heap that did not would leave its first words unpinnable. */
static void *map_fd_aligned(int fd, size_t len)
{
    const size_t align = 64 * 1024;
    size_t span = (len + 4095) / 4096 * 4096;
    uint8_t *r = mmap(NULL, span + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    if (r == MAP_FAILED) {
        return NULL;
    }
    uint8_t *a = (uint8_t *)(((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1));
    void *m = mmap(a, len, host_visible() ? PROT_READ | PROT_WRITE : PROT_NONE,
                   MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0);
    if (m == MAP_FAILED) {
        munmap(r, span + align);
        return NULL;
    }
    if (a > r) {
        munmap(r, (size_t)(a - r));
    }
    if (r + span + align > a + span) {
        munmap(a + span, (size_t)(r + span + align - (a + span)));
    }
    return m;
}

/* For the mock GDRCopy (mock_gdr.c, which finds it with dlsym): the memfd behind [p, p+len) of
 * one cuMemAlloc allocation of this process and p's offset in it; -1 for anything else (host
 * memory, an IPC import, a range over two allocations). */
int mock_cuda_backing(uintptr_t p, size_t len, int *fd, size_t *off);
int mock_cuda_backing(uintptr_t p, size_t len, int *fd, size_t *off)
{
    pthread_mutex_lock(&mock_mem.lock);
    int i = mock_find(p, len);
    int ok = i >= 0 && !mock_mem.a[i].ipc && mock_mem.a[i].fd >= 0;
    if (ok) {
        *fd = mock_mem.a[i].fd;
        *off = p - mock_mem.a[i].base;
    }
    pthread_mutex_unlock(&mock_mem.lock);
    return ok ? 0 : -1;
}

/* Device memory is a memfd (pages only once written), so a peer process can map it (IPC). */
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t len)
{
    COUNT();
    if (mock_fence() != CUDA_SUCCESS) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int fd = memfd_create("mock-cuda", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    void *m = map_fd_aligned(fd, len);
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
    munmap((void *)mock_mem.a[i].base, mock_mem.a[i].len);
    if (mock_mem.a[i].fd >= 0) {
        close(mock_mem.a[i].fd);
    }
    mock_mem.a[i] = mock_mem.a[--mock_mem.n];
}

CUresult CUDAAPI cuMemFree(CUdeviceptr p)
{
    COUNT();
    pthread_mutex_lock(&mock_mem.lock);
    int i = mock_find((uintptr_t)p, 0);
    if (i < 0 || mock_mem.a[i].base != (uintptr_t)p || mock_mem.a[i].ipc) {
        pthread_mutex_unlock(&mock_mem.lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    untrack(i);
    pthread_mutex_unlock(&mock_mem.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    COUNT();
    return mock_submit_copy(st, (uintptr_t)d, 1, (uintptr_t)s, 0, n, -1);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    COUNT();
    return mock_submit_copy(st, (uintptr_t)d, 0, (uintptr_t)s, 1, n, -1);
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    COUNT();
    return mock_submit_copy(st, (uintptr_t)d, 1, (uintptr_t)s, 1, n, -1);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char c, size_t n, CUstream st)
{
    COUNT();
    return mock_submit_copy(st, (uintptr_t)d, 1, 0, 0, n, c);
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    COUNT();
    if (attr != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    pthread_mutex_lock(&mock_mem.lock);
    int i = mock_find((uintptr_t)p, 1);
    pthread_mutex_unlock(&mock_mem.lock);
    if (i < 0) {
        return CUDA_ERROR_INVALID_VALUE; /* memory the driver never saw, as the real one */
    }
    *(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
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
    pthread_mutex_lock(&mock_mem.lock);
    int i = mock_find((uintptr_t)p, 0);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (i >= 0 && mock_mem.a[i].base == (uintptr_t)p && !mock_mem.a[i].ipc) {
        struct mock_ipc m = {MOCK_IPC_MAGIC, (int32_t)getpid(), mock_mem.a[i].fd,
                             mock_mem.a[i].len};
        memset(h, 0, sizeof(*h));
        memcpy(h->reserved, &m, sizeof(m));
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mock_mem.lock);
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
    pthread_mutex_lock(&mock_mem.lock);
    int i = mock_find((uintptr_t)p, 0);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (i >= 0 && mock_mem.a[i].base == (uintptr_t)p && mock_mem.a[i].ipc) {
        untrack(i);
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mock_mem.lock);
    return r;
}

/* ---------------------------------------------------------------- pinned and host-mapped memory
 *
 * Host memory is pinned when it came from cuMemHostAlloc or lies in a cuMemHostRegister range;
 * both tables live in mock_ms (mock_cuda_int.h), under its lock.
 *
 * Host-mapped memory (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP) is one memfd mapped twice:
 * the host address, and a different "device" address that cuMemHostGetDevicePointer gives,
 * the same bytes. Stream memory operations accept only device addresses (device memory, or
 * such a device mapping): a host pointer passed for one is CUDA_ERROR_INVALID_VALUE. */

/* Whether [p, p+n) is pinned host memory: within one cuMemHostAlloc allocation (either of its
 * mappings) or one cuMemHostRegister range. */
int mock_pinned(uintptr_t p, size_t n)
{
    int yes = 0;
    pthread_mutex_lock(&mock_ms.lock);
    for (int i = 0; i < MAX_HOST_ALLOCS && !yes; i++) {
        size_t len = mock_ms.h[i].len;
        uintptr_t h = mock_ms.h[i].host, d = mock_ms.h[i].dev;
        yes = len && ((p >= h && p - h <= len && n <= len - (p - h)) ||
                      (d && p >= d && p - d <= len && n <= len - (p - d)));
    }
    for (int i = 0; i < MAX_HOST_REGS && !yes; i++) {
        uintptr_t b = mock_ms.reg[i].base;
        size_t len = mock_ms.reg[i].len;
        yes = len && p >= b && p - b <= len && n <= len - (p - b);
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return yes;
}

static CUresult host_register(uintptr_t p, size_t n)
{
    pthread_mutex_lock(&mock_ms.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    int free_i = -1;
    for (int i = 0; i < MAX_HOST_REGS; i++) {
        uintptr_t b = mock_ms.reg[i].base;
        if (!mock_ms.reg[i].len) {
            free_i = free_i < 0 ? i : free_i;
        } else if (p < b + mock_ms.reg[i].len && b < p + n) {
            r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED; /* overlaps a registered range */
            free_i = -2;
            break;
        }
    }
    if (free_i >= 0) {
        mock_ms.reg[free_i].base = p;
        mock_ms.reg[free_i].len = n;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return r;
}

static CUresult host_unregister(uintptr_t p)
{
    pthread_mutex_lock(&mock_ms.lock);
    CUresult r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED; /* as the driver: only a range's start */
    for (int i = 0; i < MAX_HOST_REGS; i++) {
        if (mock_ms.reg[i].len && mock_ms.reg[i].base == p) {
            mock_ms.reg[i].len = 0;
            r = CUDA_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return r;
}

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

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t len, unsigned int flags)
{
    COUNT();
    if (!pp || len == 0 ||
        (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                             CU_MEMHOSTALLOC_WRITECOMBINED))) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (mock_fence() != CUDA_SUCCESS) {
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
    pthread_mutex_lock(&mock_ms.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < MAX_HOST_ALLOCS; i++) {
        if (!mock_ms.h[i].len) {
            mock_ms.h[i].host = (uintptr_t)host;
            mock_ms.h[i].dev = (uintptr_t)dev; /* 0: not mapped for the device */
            mock_ms.h[i].len = n;
            r = CUDA_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
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
    pthread_mutex_lock(&mock_ms.lock);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < MAX_HOST_ALLOCS; i++) {
        uintptr_t h = mock_ms.h[i].host;
        if (mock_ms.h[i].len && mock_ms.h[i].dev && (uintptr_t)p >= h &&
            (uintptr_t)p - h < mock_ms.h[i].len) {
            *out = (CUdeviceptr)(mock_ms.h[i].dev + ((uintptr_t)p - h));
            r = CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return r;
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    COUNT();
    pthread_mutex_lock(&mock_ms.lock);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < MAX_HOST_ALLOCS; i++) {
        if (mock_ms.h[i].len && mock_ms.h[i].host == (uintptr_t)p) {
            munmap((void *)mock_ms.h[i].host, mock_ms.h[i].len);
            if (mock_ms.h[i].dev) {
                munmap((void *)mock_ms.h[i].dev, mock_ms.h[i].len);
            }
            mock_ms.h[i].len = 0;
            r = CUDA_SUCCESS;
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return r;
}
