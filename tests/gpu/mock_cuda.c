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
 */
#define _GNU_SOURCE
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
    (void)flags;
    const char *e = getenv("MOCK_CUDA_INIT");
    return e && atoi(e) ? (CUresult)atoi(e) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorString(CUresult r, const char **s)
{
    *s = r == CUDA_ERROR_NO_DEVICE ? "no CUDA-capable device is detected (mock)" : "mock CUDA error";
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *d, int ordinal)
{
    if (ordinal != 0) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *d = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
    (void)d;
    strncpy(id, "0000:00:00.0 (mock)", (size_t)len);
    id[len - 1] = '\0';
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)&mk.ctx_token;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice d)
{
    (void)d;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext c)
{
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

/* Device memory is a memfd (pages only once written), so a peer process can map it (IPC). */
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t len)
{
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

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    (void)st;
    return copy((uintptr_t)d, 1, (uintptr_t)s, 0, n);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    return copy((uintptr_t)d, 0, (uintptr_t)s, 1, n);
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    return copy((uintptr_t)d, 1, (uintptr_t)s, 1, n);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char c, size_t n, CUstream st)
{
    (void)st;
    pthread_mutex_lock(&mk.lock);
    int i = find((uintptr_t)d, n);
    if (i >= 0) {
        open_rw((uintptr_t)d, n, 1);
        memset((void *)(uintptr_t)d, c, n);
        open_rw((uintptr_t)d, n, 0);
    }
    pthread_mutex_unlock(&mk.lock);
    return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void)flags;
    *s = (CUstream)&mk.ctx_token;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
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

CUresult CUDAAPI cuMemHostRegister(void *p, size_t n, unsigned int flags)
{
    (void)p;
    (void)n;
    (void)flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    (void)p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetHandleForAddressRange(void *h, CUdeviceptr p, size_t n,
                                               CUmemRangeHandleType type, unsigned long long fl)
{
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
