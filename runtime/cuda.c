/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda.c: the CUDA driver loaded with dlopen, and the only code that calls it.
 *
 * Owns the library handle, the resolved entry points, this PE's device, its primary context and
 * one stream for copies. Invariants: every call into the driver first makes the context current
 * on the calling thread (the progress thread copies too), and every copy is synchronized on the
 * stream before it returns, so "returned" means "complete" (a signal applied after it never
 * outruns its data). It never exits and never prints except through the log; a missing driver
 * or GPU is a state ("no GPU: <reason>"), not an error.
 *
 * Entry points are looked up by the names cuda.h's macros give them (cuMemAlloc is
 * cuMemAlloc_v2), so the ABI is the one the headers describe. Built without CUDA headers
 * (configure without --with-cuda) there is no ABI to load against: fsh_cuda_open then reports
 * "built without CUDA headers" and the device heap stays off.
 */
#ifdef HAVE_CONFIG_H
#include "config.h" /* FSH_HAVE_CUDA */
#endif
#include "cuda.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "log.h"

static char reason[256] = "no GPU: the CUDA driver was not loaded";

#ifndef FSH_HAVE_CUDA

int fsh_cuda_open(const char *lib, const char *busid, int local_rank)
{
    (void)lib;
    (void)busid;
    (void)local_rank;
    snprintf(reason, sizeof(reason), "no GPU: fabshmem was built without CUDA headers (configure --with-cuda)");
    return -ENODEV;
}
void fsh_cuda_close(void) {}
bool fsh_cuda_ready(void)
{
    return false;
}
const char *fsh_cuda_reason(void)
{
    return reason;
}
void *fsh_cuda_alloc(size_t len)
{
    fsh_err(-ENODEV, "build with --with-cuda and run on a host with a GPU", "%s (%zu bytes)",
            reason, len);
    return NULL;
}
void fsh_cuda_free(void *p)
{
    (void)p;
}
bool fsh_cuda_is_device(const void *p)
{
    (void)p;
    return false;
}
int fsh_cuda_copy(void *dst, const void *src, size_t len)
{
    (void)dst;
    (void)src;
    (void)len;
    return -ENODEV;
}
int fsh_cuda_memset(void *dst, int c, size_t len)
{
    (void)dst;
    (void)c;
    (void)len;
    return -ENODEV;
}
int fsh_cuda_host_register(void *p, size_t len)
{
    (void)p;
    (void)len;
    return -ENODEV;
}
void fsh_cuda_host_unregister(void *p)
{
    (void)p;
}
int fsh_cuda_dmabuf_fd(void *p, size_t len, int *fd)
{
    (void)p;
    (void)len;
    (void)fd;
    return -ENODEV;
}
int fsh_cuda_device(void)
{
    return -1;
}
int fsh_cuda_flush_rdma(void)
{
    return -ENODEV;
}
void *fsh_cuda_host_alloc(size_t len, void **devptr)
{
    (void)devptr;
    fsh_err(-ENODEV, "build with --with-cuda and run on a host with a GPU", "%s (%zu bytes)",
            reason, len);
    return NULL;
}
void fsh_cuda_host_free(void *p)
{
    (void)p;
}

#else

#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <strings.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* One pointer per entry point, typed from the header's own prototype. */
#define CU_FUNCS(X)                                                                            \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)     \
    X(cuDeviceGetPCIBusId) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)            \
    X(cuCtxSetCurrent) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)    \
    X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy)                \
    X(cuStreamSynchronize) X(cuPointerGetAttribute) X(cuMemHostRegister)                        \
    X(cuMemHostUnregister) X(cuMemGetHandleForAddressRange) X(cuFlushGPUDirectRDMAWrites)     \
    CU_FUNCS_HOSTMAP(X)

/* The device API's host-mapped memory (fsh_cuda_host_alloc). */
#define CU_FUNCS_HOSTMAP(X) X(cuMemHostAlloc) X(cuMemHostGetDevicePointer) X(cuMemFreeHost)

static struct {
    void *lib;
    bool ready;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
#define X(f) __typeof__(&f) f;
    CU_FUNCS(X)
#undef X
} cu;

static const char *cu_str(CUresult r)
{
    const char *s = NULL;
    if (cu.cuGetErrorString && cu.cuGetErrorString(r, &s) == CUDA_SUCCESS && s) {
        return s;
    }
    return "unknown CUDA error";
}

/* CUDA result -> -errno, with the cause recorded once. */
static int cu_err(CUresult r, const char *what)
{
    int code = r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO;
    return fsh_err(code,
                   r == CUDA_ERROR_OUT_OF_MEMORY ? "lower FABSHMEM_DEVICE_HEAP_SIZE" : "FABSHMEM_LOG=debug shows the GPU in use",
                   "%s failed: CUDA error %d (%s)", what, (int)r, cu_str(r));
}

static int __attribute__((format(printf, 1, 2))) no_gpu(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (cu.lib) {
        dlclose(cu.lib);
    }
    memset(&cu, 0, sizeof(cu));
    FSH_DEBUG("%s", reason);
    return -ENODEV;
}

static int pick_device(const char *busid, int local_rank, int count)
{
    for (int i = 0; busid && busid[0] && i < count; i++) {
        CUdevice d;
        char id[32];
        if (cu.cuDeviceGet(&d, i) == CUDA_SUCCESS &&
            cu.cuDeviceGetPCIBusId(id, (int)sizeof(id), d) == CUDA_SUCCESS &&
            strcasecmp(id, busid) == 0) {
            return i;
        }
    }
    return local_rank % count;
}

int fsh_cuda_open(const char *lib, const char *busid, int local_rank)
{
    const char *path = lib && lib[0] ? lib : "libcuda.so.1";
    cu.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!cu.lib) {
        const char *e = dlerror();
        return no_gpu("no GPU: cannot load the CUDA driver (%s)", e ? e : path);
    }
#define X(f)                                                                                   \
    cu.f = (__typeof__(&f))dlsym(cu.lib, STR(f));                                              \
    if (!cu.f) {                                                                               \
        return no_gpu("no GPU: the CUDA driver lacks %s (older than these headers)", STR(f));  \
    }
    CU_FUNCS(X)
#undef X
    CUresult r = cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
        /* 100: no device; 35: the driver is older than the runtime expects. */
        return no_gpu("no GPU: cuInit failed (%s, CUDA error %d)", cu_str(r), (int)r);
    }
    int count = 0;
    r = cu.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count <= 0) {
        return no_gpu("no GPU: the CUDA driver sees no device (CUDA error %d)", (int)r);
    }
    int ordinal = pick_device(busid, local_rank, count);
    r = cu.cuDeviceGet(&cu.dev, ordinal);
    if (r == CUDA_SUCCESS) {
        r = cu.cuDevicePrimaryCtxRetain(&cu.ctx, cu.dev);
    }
    if (r == CUDA_SUCCESS) {
        r = cu.cuCtxSetCurrent(cu.ctx);
    }
    if (r == CUDA_SUCCESS) {
        r = cu.cuStreamCreate(&cu.stream, CU_STREAM_NON_BLOCKING);
    }
    if (r != CUDA_SUCCESS) {
        return no_gpu("no GPU: cannot open the device (%s, CUDA error %d)", cu_str(r), (int)r);
    }
    int ver = 0;
    cu.cuDriverGetVersion(&ver);
    char id[32] = "?";
    cu.cuDeviceGetPCIBusId(id, (int)sizeof(id), cu.dev);
    snprintf(reason, sizeof(reason), "GPU %d of %d (%s), driver %d.%d, from %s", ordinal, count, id,
             ver / 1000, ver % 1000 / 10, path);
    cu.ready = true;
    return 0;
}

void fsh_cuda_close(void)
{
    if (cu.ready) {
        cu.cuCtxSetCurrent(cu.ctx);
        cu.cuStreamDestroy(cu.stream);
        cu.cuDevicePrimaryCtxRelease(cu.dev);
    }
    if (cu.lib) {
        dlclose(cu.lib);
    }
    memset(&cu, 0, sizeof(cu));
}

bool fsh_cuda_ready(void)
{
    return cu.ready;
}

const char *fsh_cuda_reason(void)
{
    return reason;
}

/* The context is per thread in the driver: make it current wherever we are called from. */
static int current(void)
{
    if (!cu.ready) {
        return fsh_err(-ENODEV, "run on a host with a GPU", "%s", reason);
    }
    CUresult r = cu.cuCtxSetCurrent(cu.ctx);
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "cuCtxSetCurrent");
}

void *fsh_cuda_alloc(size_t len)
{
    if (current() != 0) {
        return NULL;
    }
    CUdeviceptr p;
    CUresult r = cu.cuMemAlloc(&p, len);
    if (r != CUDA_SUCCESS) {
        cu_err(r, "cuMemAlloc of the device heap");
        return NULL;
    }
    return (void *)(uintptr_t)p;
}

void fsh_cuda_free(void *p)
{
    if (p && current() == 0) {
        cu.cuMemFree((CUdeviceptr)(uintptr_t)p);
    }
}

bool fsh_cuda_is_device(const void *p)
{
    if (!cu.ready || !p) {
        return false;
    }
    unsigned int type = 0;
    /* Host memory the driver never saw answers CUDA_ERROR_INVALID_VALUE: not device memory. */
    return current() == 0 &&
           cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_DEVICE;
}

int fsh_cuda_copy(void *dst, const void *src, size_t len)
{
    int rc = current();
    if (rc != 0 || len == 0) {
        return rc;
    }
    bool ddev = fsh_cuda_is_device(dst), sdev = fsh_cuda_is_device(src);
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, s = (CUdeviceptr)(uintptr_t)src;
    CUresult r;
    if (ddev && sdev) {
        r = cu.cuMemcpyDtoDAsync(d, s, len, cu.stream);
    } else if (ddev) {
        r = cu.cuMemcpyHtoDAsync(d, src, len, cu.stream);
    } else if (sdev) {
        r = cu.cuMemcpyDtoHAsync(dst, s, len, cu.stream);
    } else {
        memcpy(dst, src, len);
        return 0;
    }
    /* Synchronize: the copy is complete, and visible to the GPU, before anything that
     * depends on it (an acknowledgement, a signal). */
    if (r == CUDA_SUCCESS) {
        r = cu.cuStreamSynchronize(cu.stream);
    }
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "device copy");
}

int fsh_cuda_memset(void *dst, int c, size_t len)
{
    int rc = current();
    if (rc != 0 || len == 0) {
        return rc;
    }
    CUresult r = cu.cuMemsetD8Async((CUdeviceptr)(uintptr_t)dst, (unsigned char)c, len, cu.stream);
    if (r == CUDA_SUCCESS) {
        r = cu.cuStreamSynchronize(cu.stream);
    }
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "device memset");
}

int fsh_cuda_host_register(void *p, size_t len)
{
    if (!cu.ready || cu.cuCtxSetCurrent(cu.ctx) != CUDA_SUCCESS) {
        return -ENODEV;
    }
    return cu.cuMemHostRegister(p, len, 0) == CUDA_SUCCESS ? 0 : -EIO;
}

void fsh_cuda_host_unregister(void *p)
{
    if (cu.ready && cu.cuCtxSetCurrent(cu.ctx) == CUDA_SUCCESS) {
        cu.cuMemHostUnregister(p);
    }
}

int fsh_cuda_dmabuf_fd(void *p, size_t len, int *fd)
{
    if (!cu.ready || cu.cuCtxSetCurrent(cu.ctx) != CUDA_SUCCESS) {
        return -ENODEV;
    }
    int h = -1;
    CUresult r = cu.cuMemGetHandleForAddressRange(&h, (CUdeviceptr)(uintptr_t)p, len,
                                                  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (r != CUDA_SUCCESS) {
        return -EOPNOTSUPP;
    }
    *fd = h;
    return 0;
}

int fsh_cuda_device(void)
{
    return cu.ready ? (int)cu.dev : -1;
}

int fsh_cuda_flush_rdma(void)
{
    int rc = current();
    if (rc != 0) {
        return rc;
    }
    CUresult r = cu.cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                               CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "cuFlushGPUDirectRDMAWrites");
}

/* The device API's host-mapped memory. */
void *fsh_cuda_host_alloc(size_t len, void **devptr)
{
    if (current() != 0) {
        return NULL;
    }
    void *p = NULL;
    CUresult r = cu.cuMemHostAlloc(&p, len, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
        cu_err(r, "cuMemHostAlloc (DEVICEMAP) of the device API's rings");
        return NULL;
    }
    CUdeviceptr d = 0;
    r = cu.cuMemHostGetDevicePointer(&d, p, 0);
    if (r != CUDA_SUCCESS) {
        cu.cuMemFreeHost(p);
        cu_err(r, "cuMemHostGetDevicePointer of the device API's rings");
        return NULL;
    }
    memset(p, 0, len);
    *devptr = (void *)(uintptr_t)d;
    return p;
}

void fsh_cuda_host_free(void *p)
{
    if (p && current() == 0) {
        cu.cuMemFreeHost(p);
    }
}

#endif
