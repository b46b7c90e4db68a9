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
int fsh_cuda_copy_async(void *dst, const void *src, size_t len)
{
    return fsh_cuda_copy(dst, src, len);
}
int fsh_cuda_write64_async(void *dev, uint64_t value)
{
    (void)dev;
    (void)value;
    return -ENODEV;
}
int fsh_cuda_sync(void)
{
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
int fsh_cuda_ipc_export(void *base, void *handle, char *why, size_t len)
{
    (void)base;
    (void)handle;
    snprintf(why, len, "%s", reason);
    return -ENODEV;
}
int fsh_cuda_ipc_open(const void *handle, void **p, char *why, size_t len)
{
    (void)handle;
    (void)p;
    snprintf(why, len, "%s", reason);
    return -ENODEV;
}
void fsh_cuda_ipc_close(void *p)
{
    (void)p;
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
int fsh_cuda_stream_check(void *stream)
{
    (void)stream;
    return fsh_err(-ENODEV, "build with --with-cuda and run on a host with a GPU", "%s", reason);
}
int fsh_cuda_stream_capturing(void *stream, bool *capturing)
{
    (void)stream;
    *capturing = false;
    return -ENODEV;
}
const char *fsh_cuda_graph_ties_missing(void)
{
    return reason;
}
int fsh_cuda_stream_tie(void *stream, void (*fn)(void *), void *arg)
{
    (void)stream;
    (void)fn;
    (void)arg;
    return -ENOTSUP;
}
bool fsh_cuda_stream_memops(char *why, size_t why_len, char *info, size_t info_len)
{
    snprintf(why, why_len, "%s", reason);
    snprintf(info, info_len, "none");
    return false;
}
void fsh_cuda_stream_prepare(size_t bytes)
{
    (void)bytes;
}
int fsh_cuda_stream_words(void **words, void **dev, size_t *bytes)
{
    (void)words;
    (void)dev;
    (void)bytes;
    return fsh_err(-ENODEV, "build with --with-cuda and run on a host with a GPU", "%s", reason);
}
int fsh_cuda_stream_write32(void *stream, void *dev, uint32_t value)
{
    (void)stream;
    (void)dev;
    (void)value;
    return -ENODEV;
}
int fsh_cuda_stream_wait32(void *stream, void *dev, uint32_t value)
{
    (void)stream;
    (void)dev;
    (void)value;
    return -ENODEV;
}
int fsh_cuda_stream_host_fn(void *stream, void (*fn)(void *), void *arg)
{
    (void)stream;
    (void)fn;
    (void)arg;
    return -ENODEV;
}

#else

#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <strings.h>

#define STR_(x) #x
#define STR(x) STR_(x)

#define BOUNCE_BYTES 64 /* the largest read fsh_cuda_copy lands in its page-locked bounce */

/* One pointer per entry point, typed from the header's own prototype. */
#define CU_FUNCS(X)                                                                            \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)     \
    X(cuDeviceGetPCIBusId) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)            \
    X(cuCtxSetCurrent) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)    \
    X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy)                \
    X(cuStreamSynchronize) X(cuPointerGetAttribute) X(cuMemHostRegister)                        \
    X(cuMemHostUnregister) X(cuMemGetHandleForAddressRange) X(cuFlushGPUDirectRDMAWrites)

/* The stream-ordered operations' and the device API's entry points: looked up like the others,
 * but a driver without them still opens the GPU (those calls then say what is missing). */
#define CU_STREAM_FUNCS(X)                                                                     \
    X(cuMemHostAlloc) X(cuMemHostGetDevicePointer) X(cuMemFreeHost) X(cuStreamGetCtx)          \
    X(cuStreamIsCapturing) X(cuLaunchHostFunc) X(cuDeviceGetAttribute)                         \
    X(cuStreamWriteValue32) X(cuStreamWaitValue32)

/* User objects: a captured stream-ordered call's slot is returned when its graph is gone.
 * Optional: without them such slots stay the graph's until shmem_finalize. */
#define CU_GRAPH_FUNCS(X)                                                                      \
    X(cuStreamGetCaptureInfo) X(cuUserObjectCreate) X(cuGraphRetainUserObject)

static struct {
    void *lib;
    bool ready;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
#define X(f) __typeof__(&f) f;
    CU_FUNCS(X)
    CU_STREAM_FUNCS(X)
    CU_GRAPH_FUNCS(X)
#undef X
    const char *stream_missing; /* the first of CU_STREAM_FUNCS the driver lacks, or NULL */
    const char *graph_missing;  /* the first of CU_GRAPH_FUNCS the driver lacks, or NULL */
    uint64_t *word;         /* page-locked staging of fsh_cuda_write64_async (at first use) */
    uint8_t *bounce;        /* page-locked landing of small reads (fsh_cuda_copy), or NULL */
    int bounce_busy;
    uint64_t word_pageable; /* its stand-in where page-locked memory is refused */
} cu;

/* What fsh_cuda_stream_prepare made: the stream-ordered calls' table and the probe's answer,
 * or the error it met. Reset by fsh_cuda_close. */
static struct {
    bool done;
    int rc;
    char msg[512];
    char fix[256];
    void *words;
    void *dev;
    size_t bytes;
    bool memops;
    char why[256];
    char attrs[128];
} prep;

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
#define X(f)                                                                                   \
    cu.f = (__typeof__(&f))dlsym(cu.lib, STR(f));                                              \
    if (!cu.f && !cu.stream_missing) {                                                         \
        cu.stream_missing = STR(f);                                                            \
    }
    CU_STREAM_FUNCS(X)
#undef X
#define X(f)                                                                                   \
    cu.f = (__typeof__(&f))dlsym(cu.lib, STR(f));                                              \
    if (!cu.f && !cu.graph_missing) {                                                          \
        cu.graph_missing = STR(f);                                                             \
    }
    CU_GRAPH_FUNCS(X)
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
    /* Optional: without them small reads land in their destination directly and a signal's
     * word is written from pageable memory. Allocated here, never later: a page-locked
     * allocation is an implicit synchronization of every stream, which would wait for a user
     * stream held behind the stream-ordered operation that asked for it (docs/stream.md). */
    if (!cu.cuMemHostAlloc ||
        cu.cuMemHostAlloc((void **)&cu.bounce, BOUNCE_BYTES, 0) != CUDA_SUCCESS) {
        cu.bounce = NULL;
    }
    if (!cu.cuMemHostAlloc ||
        cu.cuMemHostAlloc((void **)&cu.word, sizeof(*cu.word), 0) != CUDA_SUCCESS) {
        cu.word = NULL;
    }
    cu.ready = true;
    return 0;
}

void fsh_cuda_close(void)
{
    if (prep.words) {
        fsh_cuda_host_free(prep.words);
    }
    memset(&prep, 0, sizeof(prep));
    if (cu.ready) {
        cu.cuCtxSetCurrent(cu.ctx);
        if (cu.word && cu.cuMemFreeHost) {
            cu.cuMemFreeHost(cu.word);
        }
        if (cu.bounce && cu.cuMemFreeHost) {
            cu.cuMemFreeHost(cu.bounce);
        }
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

/* Is p device memory? (The context is current.) */
static bool device_ptr(const void *p)
{
    unsigned int type = 0;
    /* Host memory the driver never saw answers CUDA_ERROR_INVALID_VALUE: not device memory. */
    return p &&
           cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_DEVICE;
}

bool fsh_cuda_is_device(const void *p)
{
    return cu.ready && p && current() == 0 && device_ptr(p);
}

/* Queue one copy on our stream (the context current), ddev and sdev saying which sides are
 * device memory (at least one). */
static CUresult enqueue(void *dst, const void *src, size_t len, bool ddev, bool sdev)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, s = (CUdeviceptr)(uintptr_t)src;
    return ddev && sdev ? cu.cuMemcpyDtoDAsync(d, s, len, cu.stream)
           : ddev       ? cu.cuMemcpyHtoDAsync(d, src, len, cu.stream)
                        : cu.cuMemcpyDtoHAsync(dst, s, len, cu.stream);
}

int fsh_cuda_copy(void *dst, const void *src, size_t len)
{
    int rc = current();
    if (rc != 0 || len == 0) {
        return rc;
    }
    bool ddev = device_ptr(dst), sdev = device_ptr(src);
    if (!ddev && !sdev) {
        memcpy(dst, src, len);
        return 0;
    }
    /* A small read (a wait's poll, an atomic's read) lands in the page-locked bounce, which the
     * copy engine writes directly (into pageable memory the driver stages: 9.9 against 7.5 us
     * for 8 B on an H200). One caller at a time; another meanwhile copies directly. */
    bool bounce = !ddev && len <= BOUNCE_BYTES && cu.bounce &&
                  !__atomic_exchange_n(&cu.bounce_busy, 1, __ATOMIC_ACQUIRE);
    CUresult r = enqueue(bounce ? cu.bounce : dst, src, len, ddev, sdev);
    /* Synchronize: the copy is complete, and visible to the GPU, before anything that
     * depends on it (an acknowledgement, a signal). */
    if (r == CUDA_SUCCESS) {
        r = cu.cuStreamSynchronize(cu.stream);
    }
    if (bounce) {
        if (r == CUDA_SUCCESS) {
            memcpy(dst, cu.bounce, len);
        }
        __atomic_store_n(&cu.bounce_busy, 0, __ATOMIC_RELEASE);
    }
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "device copy");
}

int fsh_cuda_copy_async(void *dst, const void *src, size_t len)
{
    int rc = current();
    if (rc != 0 || len == 0) {
        return rc;
    }
    bool ddev = device_ptr(dst), sdev = device_ptr(src);
    CUresult r;
    if (ddev || sdev) {
        r = enqueue(dst, src, len, ddev, sdev);
    } else {
        /* Nothing for the stream: after what is queued, to keep the order. */
        r = cu.cuStreamSynchronize(cu.stream);
        if (r == CUDA_SUCCESS) {
            memcpy(dst, src, len);
        }
    }
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "queueing a device copy");
}

int fsh_cuda_write64_async(void *dev, uint64_t value)
{
    int rc = current();
    if (rc != 0) {
        return rc;
    }
    /* From page-locked memory the copy reads the word when it runs, after the copies queued
     * before it; from pageable memory the driver stages it first (and may wait for the stream
     * to do so), so the word is free again either way once the stream is synchronized. */
    uint64_t *from = cu.word ? cu.word : &cu.word_pageable;
    *from = value;
    CUresult r = cu.cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)dev, from, sizeof(value), cu.stream);
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "queueing a device word's write");
}

int fsh_cuda_sync(void)
{
    int rc = current();
    if (rc != 0) {
        return rc;
    }
    CUresult r = cu.cuStreamSynchronize(cu.stream);
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "device copies");
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

/* ---------------------------------------------------------------- CUDA IPC (devmap's mapping)
 * Resolved at first use, not with CU_FUNCS: a driver without them loses only the mapping
 * (the device heap falls back to its other paths), not the GPU. */
static struct {
    __typeof__(&cuIpcGetMemHandle) get;
    __typeof__(&cuIpcOpenMemHandle) open;
    __typeof__(&cuIpcCloseMemHandle) close;
} ipc;

_Static_assert(sizeof(CUipcMemHandle) == FSH_CUDA_IPC_BYTES, "CUDA IPC handle size");

static int ipc_ready(char *why, size_t len)
{
    if (!cu.ready) {
        snprintf(why, len, "%s", reason);
        return -ENODEV;
    }
    /* Looked up at each use (a few at init): never stale across a close and a reopen. */
    ipc.get = (__typeof__(ipc.get))dlsym(cu.lib, STR(cuIpcGetMemHandle));
    ipc.open = (__typeof__(ipc.open))dlsym(cu.lib, STR(cuIpcOpenMemHandle));
    ipc.close = (__typeof__(ipc.close))dlsym(cu.lib, STR(cuIpcCloseMemHandle));
    if (!ipc.get || !ipc.open || !ipc.close) {
        snprintf(why, len, "the CUDA driver lacks cuIpcGetMemHandle/cuIpcOpenMemHandle");
        return -EOPNOTSUPP;
    }
    CUresult r = cu.cuCtxSetCurrent(cu.ctx);
    if (r != CUDA_SUCCESS) {
        snprintf(why, len, "cuCtxSetCurrent failed: CUDA error %d (%s)", (int)r, cu_str(r));
        return -EIO;
    }
    return 0;
}

int fsh_cuda_ipc_export(void *base, void *handle, char *why, size_t len)
{
    int rc = ipc_ready(why, len);
    if (rc != 0) {
        return rc;
    }
    CUipcMemHandle h;
    CUresult r = ipc.get(&h, (CUdeviceptr)(uintptr_t)base);
    if (r != CUDA_SUCCESS) {
        snprintf(why, len, "cuIpcGetMemHandle failed: CUDA error %d (%s)", (int)r, cu_str(r));
        return -EIO;
    }
    memcpy(handle, &h, sizeof(h));
    return 0;
}

int fsh_cuda_ipc_open(const void *handle, void **p, char *why, size_t len)
{
    int rc = ipc_ready(why, len);
    if (rc != 0) {
        return rc;
    }
    CUipcMemHandle h;
    memcpy(&h, handle, sizeof(h));
    CUdeviceptr d;
    CUresult r = ipc.open(&d, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (r != CUDA_SUCCESS) {
        snprintf(why, len, "cuIpcOpenMemHandle failed: CUDA error %d (%s)", (int)r, cu_str(r));
        return -EIO;
    }
    *p = (void *)(uintptr_t)d;
    return 0;
}

void fsh_cuda_ipc_close(void *p)
{
    if (p && cu.ready && ipc.close && cu.cuCtxSetCurrent(cu.ctx) == CUDA_SUCCESS) {
        ipc.close((CUdeviceptr)(uintptr_t)p);
    }
}

/* ------------------------------------------------------------------ stream-ordered operations */

/* The message of the error just recorded, which the caller reports as a reason instead. */
static const char *taken_err(void)
{
    static __thread char msg[512];
    const struct fsh_error *e = fsh_err_last();
    snprintf(msg, sizeof(msg), "%s", e ? e->msg : "unknown error");
    fsh_err_clear();
    return msg;
}

static int need_stream_funcs(void)
{
    int rc = current();
    if (rc == 0 && cu.stream_missing) {
        rc = fsh_err(-ENOSYS, "update the NVIDIA driver (CUDA 12 or later)",
                     "the CUDA driver lacks %s, which the stream-ordered calls need",
                     cu.stream_missing);
    }
    return rc;
}

void *fsh_cuda_host_alloc(size_t len, void **devptr)
{
    if (need_stream_funcs() != 0) {
        return NULL;
    }
    void *p = NULL;
    CUresult r = cu.cuMemHostAlloc(&p, len, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (r != CUDA_SUCCESS) {
        cu_err(r, "cuMemHostAlloc of host memory mapped for the GPU");
        return NULL;
    }
    CUdeviceptr d = 0;
    r = cu.cuMemHostGetDevicePointer(&d, p, 0);
    if (r != CUDA_SUCCESS) {
        cu_err(r, "cuMemHostGetDevicePointer");
        cu.cuMemFreeHost(p);
        return NULL;
    }
    memset(p, 0, len);
    *devptr = (void *)(uintptr_t)d;
    return p;
}

void fsh_cuda_host_free(void *p)
{
    if (p && need_stream_funcs() == 0) {
        cu.cuMemFreeHost(p);
    }
}

int fsh_cuda_stream_check(void *stream)
{
    int rc = need_stream_funcs();
    if (rc != 0) {
        return rc;
    }
    CUcontext ctx = NULL;
    CUresult r = cu.cuStreamGetCtx((CUstream)stream, &ctx);
    if (r != CUDA_SUCCESS) {
        return fsh_err(-EINVAL, "pass a CUstream or cudaStream_t created on this PE's GPU and not yet destroyed (NULL: the default stream)",
                       "%p is not a stream the CUDA driver knows (cuStreamGetCtx: CUDA error %d, %s)",
                       stream, (int)r, cu_str(r));
    }
    if (ctx != cu.ctx) {
        return fsh_err(-EINVAL, "create the stream in the device's primary context (the CUDA runtime's), on this PE's GPU",
                       "stream %p belongs to another CUDA context than fabshmem's (%s)", stream,
                       reason);
    }
    return 0;
}

int fsh_cuda_stream_capturing(void *stream, bool *capturing)
{
    int rc = need_stream_funcs();
    if (rc != 0) {
        return rc;
    }
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = cu.cuStreamIsCapturing((CUstream)stream, &st);
    if (r != CUDA_SUCCESS) {
        return cu_err(r, "cuStreamIsCapturing");
    }
    if (st == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
        return fsh_err(-EINVAL, "end the capture (cuStreamEndCapture / cudaStreamEndCapture) and capture again",
                       "the stream's graph capture was invalidated by an earlier call");
    }
    *capturing = st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return 0;
}

const char *fsh_cuda_graph_ties_missing(void)
{
    return !cu.ready ? reason : cu.graph_missing;
}

int fsh_cuda_stream_tie(void *stream, void (*fn)(void *), void *arg)
{
    if (fsh_cuda_graph_ties_missing()) {
        return -ENOTSUP;
    }
    int rc = current();
    if (rc != 0) {
        return rc;
    }
    /* The graph being captured (valid until the capture ends): the user object's one reference
     * moves to it; instantiated graphs and their launches take their own (CUDA Programming
     * Guide, "CUDA User Objects"). */
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph graph = NULL;
    CUresult r = cu.cuStreamGetCaptureInfo((CUstream)stream, &st, NULL, &graph, NULL, NULL, NULL);
    if (r != CUDA_SUCCESS) {
        return cu_err(r, "cuStreamGetCaptureInfo");
    }
    if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE || !graph) {
        return fsh_err(-EINVAL, "end the capture (cuStreamEndCapture / cudaStreamEndCapture) and capture again",
                       "the stream's capture is %s", st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "invalidated" : "not active");
    }
    CUuserObject obj = NULL;
    r = cu.cuUserObjectCreate(&obj, arg, fn, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC);
    if (r != CUDA_SUCCESS) {
        return cu_err(r, "cuUserObjectCreate");
    }
    r = cu.cuGraphRetainUserObject(graph, obj, 1, CU_GRAPH_USER_OBJECT_MOVE);
    if (r != CUDA_SUCCESS) {
        /* Not released: that would run fn while the capture goes on with the slot in it. One
         * user object is left behind, and the caller keeps the slot for good. */
        return cu_err(r, "cuGraphRetainUserObject");
    }
    return 0;
}

static bool probe_memops(char *why, size_t why_len, char *info, size_t info_len);

bool fsh_cuda_stream_memops(char *why, size_t why_len, char *info, size_t info_len)
{
    if (prep.done) {
        snprintf(why, why_len, "%s", prep.why);
        snprintf(info, info_len, "%s", prep.attrs);
        return prep.memops;
    }
    return probe_memops(why, why_len, info, info_len);
}

void fsh_cuda_stream_prepare(size_t bytes)
{
    if (prep.done) {
        return;
    }
    prep.memops = probe_memops(prep.why, sizeof(prep.why), prep.attrs, sizeof(prep.attrs));
    void *dev = NULL;
    prep.words = fsh_cuda_host_alloc(bytes, &dev);
    if (prep.words) {
        prep.dev = dev;
        prep.bytes = bytes;
    } else {
        /* Kept for the first stream call; the heap and everything else work without it. */
        const struct fsh_error *e = fsh_err_last();
        prep.rc = e ? e->code : -ENOMEM;
        snprintf(prep.msg, sizeof(prep.msg), "%s", e ? e->msg : "unknown error");
        snprintf(prep.fix, sizeof(prep.fix), "%s", e ? e->fix : "");
        fsh_err_clear();
    }
    prep.done = true;
}

int fsh_cuda_stream_words(void **words, void **dev, size_t *bytes)
{
    if (!prep.done) {
        return fsh_err(-EINVAL, "", "the stream-ordered calls' table was not prepared (no device heap started)");
    }
    if (!prep.words) {
        return fsh_err(prep.rc, prep.fix, "preparing the stream-ordered calls at shmem_init: %s",
                       prep.msg);
    }
    *words = prep.words;
    *dev = prep.dev;
    *bytes = prep.bytes;
    return 0;
}

static bool probe_memops(char *why, size_t why_len, char *info, size_t info_len)
{
    snprintf(info, info_len, "unknown");
    if (need_stream_funcs() != 0) {
        snprintf(why, why_len, "%s", taken_err());
        return false;
    }
    int b64 = -1, nor = -1;
    cu.cuDeviceGetAttribute(&b64, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, cu.dev);
    cu.cuDeviceGetAttribute(&nor, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, cu.dev);
    snprintf(info, info_len, "64-bit memory operations %s, wait NOR %s",
             b64 < 0 ? "unknown" : b64 ? "yes" : "no", nor < 0 ? "unknown" : nor ? "yes" : "no");
    /* The 32-bit write and wait (EQ) are what fabshmem uses; CUDA 12 made them core (no
     * attribute says whether they work on host-mapped memory here): try them once. */
    void *dev = NULL;
    uint32_t *word = fsh_cuda_host_alloc(sizeof(uint32_t), &dev);
    if (!word) {
        snprintf(why, why_len, "no host memory mapped for the GPU: %s", taken_err());
        return false;
    }
    *word = 0;
    CUresult r = cu.cuStreamWriteValue32(cu.stream, (CUdeviceptr)(uintptr_t)dev, 7, 0);
    if (r == CUDA_SUCCESS) {
        r = cu.cuStreamWaitValue32(cu.stream, (CUdeviceptr)(uintptr_t)dev, 7,
                                   CU_STREAM_WAIT_VALUE_EQ);
    }
    if (r == CUDA_SUCCESS) {
        r = cu.cuStreamSynchronize(cu.stream);
    }
    bool ok = r == CUDA_SUCCESS && __atomic_load_n(word, __ATOMIC_ACQUIRE) == 7;
    if (!ok) {
        snprintf(why, why_len, "cuStreamWriteValue32/cuStreamWaitValue32 on host-mapped memory %s (CUDA error %d, %s)",
                 r == CUDA_SUCCESS ? "did not write the word" : "failed", (int)r, cu_str(r));
    }
    fsh_cuda_host_free(word);
    return ok;
}

int fsh_cuda_stream_write32(void *stream, void *dev, uint32_t value)
{
    CUresult r = cu.cuStreamWriteValue32((CUstream)stream, (CUdeviceptr)(uintptr_t)dev, value, 0);
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "cuStreamWriteValue32");
}

int fsh_cuda_stream_wait32(void *stream, void *dev, uint32_t value)
{
    CUresult r = cu.cuStreamWaitValue32((CUstream)stream, (CUdeviceptr)(uintptr_t)dev, value,
                                        CU_STREAM_WAIT_VALUE_EQ);
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "cuStreamWaitValue32");
}

int fsh_cuda_stream_host_fn(void *stream, void (*fn)(void *), void *arg)
{
    CUresult r = cu.cuLaunchHostFunc((CUstream)stream, fn, arg);
    return r == CUDA_SUCCESS ? 0 : cu_err(r, "cuLaunchHostFunc");
}

#endif
