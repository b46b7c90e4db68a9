/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stream_drv.h: the few CUDA driver calls the stream tests and bench make themselves (streams,
 * a gate, copies, graph capture), resolved with dlsym from the driver the library loaded
 * (FABSHMEM_CUDA_LIB: the mock here, libcuda.so.1 on a GPU). No CUDA header is needed: the
 * handles are pointers, results ints, device addresses 64-bit, as the driver's ABI has them.
 * Call drv_open() after shmem_init (the library made its context current on this thread).
 *
 * Host buffers that a stream copies to or from come from host_alloc (cuMemHostAlloc, pinned):
 * a real driver returns from a copy into pageable memory only once the stream ran it (and may
 * do the same for one from pageable memory), so a pageable copy queued behind a gate hangs
 * (CUDA's "API synchronization behavior"; the mock does the same).
 */
#ifndef FSH_STREAM_DRV_H
#define FSH_STREAM_DRV_H

#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static struct {
    int (*stream_create)(void **s, unsigned flags);
    int (*stream_destroy)(void *s);
    int (*stream_sync)(void *s);
    int (*stream_query)(void *s);
    int (*host_fn)(void *s, void (*fn)(void *), void *arg);
    int (*htod)(uint64_t dst, const void *src, size_t n, void *s);
    int (*dtoh)(void *dst, uint64_t src, size_t n, void *s);
    int (*dtod)(uint64_t dst, uint64_t src, size_t n, void *s);
    int (*memset8)(uint64_t dst, unsigned char c, size_t n, void *s);
    int (*begin_capture)(void *s, int mode);
    int (*end_capture)(void *s, void **graph);
    int (*instantiate)(void **exec, void *graph, unsigned long long flags);
    int (*launch)(void *exec, void *s);
    int (*exec_destroy)(void *exec);
    int (*graph_destroy)(void *graph);
    int (*host_alloc)(void **p, size_t n, unsigned flags);
    int (*host_free)(void *p);
    int (*host_register)(void *p, size_t n, unsigned flags);
    int (*host_unregister)(void *p);
} drv;

#define DRV_NOT_READY 600 /* CUDA_ERROR_NOT_READY */
#define DRV_NOT_REGISTERED 713 /* CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED */

static inline void *drv_sym(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) {
        printf("stream_drv: the CUDA driver has no %s\n", name);
        exit(1);
    }
    return f;
}

static inline void drv_open(void)
{
    const char *path = getenv("FABSHMEM_CUDA_LIB");
    void *lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("stream_drv: cannot load the CUDA driver: %s\n", dlerror());
        exit(1);
    }
    *(void **)&drv.stream_create = drv_sym(lib, "cuStreamCreate");
    *(void **)&drv.stream_destroy = drv_sym(lib, "cuStreamDestroy_v2");
    *(void **)&drv.stream_sync = drv_sym(lib, "cuStreamSynchronize");
    *(void **)&drv.stream_query = drv_sym(lib, "cuStreamQuery");
    *(void **)&drv.host_fn = drv_sym(lib, "cuLaunchHostFunc");
    *(void **)&drv.htod = drv_sym(lib, "cuMemcpyHtoDAsync_v2");
    *(void **)&drv.dtoh = drv_sym(lib, "cuMemcpyDtoHAsync_v2");
    *(void **)&drv.dtod = drv_sym(lib, "cuMemcpyDtoDAsync_v2");
    *(void **)&drv.memset8 = drv_sym(lib, "cuMemsetD8Async");
    *(void **)&drv.begin_capture = drv_sym(lib, "cuStreamBeginCapture_v2");
    *(void **)&drv.end_capture = drv_sym(lib, "cuStreamEndCapture");
    *(void **)&drv.instantiate = drv_sym(lib, "cuGraphInstantiateWithFlags");
    *(void **)&drv.launch = drv_sym(lib, "cuGraphLaunch");
    *(void **)&drv.exec_destroy = drv_sym(lib, "cuGraphExecDestroy");
    *(void **)&drv.graph_destroy = drv_sym(lib, "cuGraphDestroy");
    *(void **)&drv.host_alloc = drv_sym(lib, "cuMemHostAlloc");
    *(void **)&drv.host_free = drv_sym(lib, "cuMemFreeHost");
    *(void **)&drv.host_register = drv_sym(lib, "cuMemHostRegister_v2");
    *(void **)&drv.host_unregister = drv_sym(lib, "cuMemHostUnregister");
}

/* n bytes of pinned host memory (cuMemHostAlloc, no flags), for stream copies; exits on
 * failure. */
static __attribute__((unused)) void *drv_pinned(size_t n)
{
    void *p = NULL;
    int rc = drv.host_alloc(&p, n, 0);
    if (rc != 0 || !p) {
        printf("stream_drv: cuMemHostAlloc of %zu bytes failed: CUDA error %d\n", n, rc);
        exit(1);
    }
    return p;
}

/* A driver call that must succeed. */
#define DRV(call)                                                                                  \
    do {                                                                                           \
        int drv_rc_ = (call);                                                                      \
        if (drv_rc_ != 0) {                                                                        \
            printf("stream_drv: %s failed: CUDA error %d\n", #call, drv_rc_);                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* A gate on a stream: what the stream queues after it waits until gate_open (a host function,
 * so it works whatever way the library serves streams). */
static __attribute__((unused)) void drv_gate_fn(void *arg)
{
    volatile int *open = arg;
    while (!__atomic_load_n(open, __ATOMIC_ACQUIRE)) {
        sched_yield();
    }
}

#endif
