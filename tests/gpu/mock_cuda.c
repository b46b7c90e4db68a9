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
 * "no GPU" path. Host-mapped memory (cuMemHostAlloc) is ordinary host memory kept in a table of
 * its own: its device pointer is given only for DEVICEMAP allocations, it is freed only by
 * cuMemFreeHost of its base, and copies count it as host memory, as the driver does.
 * MOCK_CUDA_HOST_VISIBLE=1 leaves device memory readable and writable,
 * so a provider can move it when the runtime registers it as host memory
 * (FABSHMEM_DEVICE_IFACE=system): that runs the direct registration path end to end here,
 * at the price of the PROT_NONE check.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_ALLOCS 256

static struct {
    pthread_mutex_t lock;
    struct {
        uintptr_t base;
        size_t len;
    } a[MAX_ALLOCS];
    int n;
    struct {
        uintptr_t base;
        size_t len;
        unsigned flags;
    } h[MAX_ALLOCS]; /* cuMemHostAlloc's page-locked host memory */
    int nh;
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

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t len)
{
    void *m = mmap(NULL, len, host_visible() ? PROT_READ | PROT_WRITE : PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&mk.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    if (mk.n < MAX_ALLOCS) {
        mk.a[mk.n].base = (uintptr_t)m;
        mk.a[mk.n].len = len;
        mk.n++;
        *p = (CUdeviceptr)(uintptr_t)m;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mk.lock);
    if (r != CUDA_SUCCESS) {
        munmap(m, len);
    }
    return r;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr p)
{
    pthread_mutex_lock(&mk.lock);
    int i = find((uintptr_t)p, 0);
    if (i < 0 || mk.a[i].base != (uintptr_t)p) {
        pthread_mutex_unlock(&mk.lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    munmap((void *)mk.a[i].base, mk.a[i].len);
    mk.a[i] = mk.a[--mk.n];
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

/* Index of the host-mapped allocation holding [p, p+len), or -1. Caller holds the lock. */
static int find_host(uintptr_t p, size_t len)
{
    for (int i = 0; i < mk.nh; i++) {
        if (p >= mk.h[i].base && p - mk.h[i].base <= mk.h[i].len &&
            len <= mk.h[i].len - (p - mk.h[i].base)) {
            return i;
        }
    }
    return -1;
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t len, unsigned int flags)
{
    if (!pp || len == 0 || (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                                                CU_MEMHOSTALLOC_WRITECOMBINED))) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&mk.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    if (mk.nh < MAX_ALLOCS) {
        mk.h[mk.nh].base = (uintptr_t)m;
        mk.h[mk.nh].len = len;
        mk.h[mk.nh].flags = flags;
        mk.nh++;
        *pp = m;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mk.lock);
    if (r != CUDA_SUCCESS) {
        munmap(m, len);
    }
    return r;
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags)
{
    if (flags != 0) {
        return CUDA_ERROR_INVALID_VALUE; /* the driver requires 0 */
    }
    pthread_mutex_lock(&mk.lock);
    int i = find_host((uintptr_t)p, 1);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if (i >= 0 && (mk.h[i].flags & CU_MEMHOSTALLOC_DEVICEMAP)) {
        *d = (CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mk.lock);
    return r;
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    pthread_mutex_lock(&mk.lock);
    int i = find_host((uintptr_t)p, 0);
    if (i < 0 || mk.h[i].base != (uintptr_t)p) {
        pthread_mutex_unlock(&mk.lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    munmap((void *)mk.h[i].base, mk.h[i].len);
    mk.h[i] = mk.h[--mk.nh];
    pthread_mutex_unlock(&mk.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    if (attr != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    pthread_mutex_lock(&mk.lock);
    int i = find((uintptr_t)p, 1), hi = find_host((uintptr_t)p, 1);
    pthread_mutex_unlock(&mk.lock);
    if (i < 0 && hi >= 0) {
        *(unsigned int *)data = CU_MEMORYTYPE_HOST;
        return CUDA_SUCCESS;
    }
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
