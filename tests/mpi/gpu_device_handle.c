/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_device_handle: where a GPU device-API handle's words live (docs/device-api.md, "The
 * handle"), on the mock driver here (tests/gpu/libmockcuda.so) or on a real one.
 *
 * What a kernel touches on every call must be device memory, not host-mapped memory (each
 * access of which crosses PCIe on a GPU): the ring claims (h.claim), the peer table
 * (h.peer_base) and the device barrier's epoch (h.epoch, read and written by every
 * shmemx_dev_barrier_all). The driver is asked (cuPointerGetAttribute, MEMORY_TYPE: the mock
 * answers only for its cuMemAlloc allocations, INVALID_VALUE for anything else, as the driver
 * does for memory it never saw): each must be device memory, zeroed (read back with a driver
 * copy), and the host-mapped counters (h.chan) must not be. The host handle's epoch is host
 * memory the CPU reads (0) and not the GPU handle's.
 * The barrier itself runs in tests/mpi/device_proxy (CPU threads, host handle) and, with the
 * GPU handle, in tests/gpu/device_api.cu on a GPU.
 */
#include <dlfcn.h>
#include <string.h>

#include "../gpu/gpu_test.h"
#include "../gpu/stream_drv.h"

#include <shmemx_device.h>

#define NAME "gpu_device_handle"
#define MEMTYPE_DEVICE 2 /* CU_MEMORYTYPE_DEVICE */
#define MEMTYPE_ATTR 2   /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */

static int (*pointer_attr)(void *data, int attr, uint64_t p);

/* The driver's memory type of p, or -(CUDA error). */
static int memtype(const void *p)
{
    unsigned t = 0;
    int rc = pointer_attr(&t, MEMTYPE_ATTR, (uint64_t)(uintptr_t)p);
    return rc == 0 ? (int)t : -rc;
}

/* n bytes at device address p, read with a driver copy: all zero? */
static int zeroed(const void *p, size_t n, void *s)
{
    uint8_t *got = drv_pinned(n);
    memset(got, 0xee, n);
    DRV(drv.dtoh(got, (uint64_t)(uintptr_t)p, n, s));
    DRV(drv.stream_sync(s));
    int z = 1;
    for (size_t i = 0; i < n; i++) {
        z = z && got[i] == 0;
    }
    DRV(drv.host_free(got));
    return z;
}

int main(void)
{
    gpu_test_start(NAME);
    int me = shmem_my_pe();
    drv_open();
    const char *path = getenv("FABSHMEM_CUDA_LIB");
    void *lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    *(void **)&pointer_attr = lib ? drv_sym(lib, "cuPointerGetAttribute") : NULL;
    shmemx_device_t g, h;
    if (!t_check(shmemx_device_handle(&g) == 0 && shmemx_device_handle_host(&h) == 0,
                 "no device handle")) {
        shmem_finalize();
        return t_finish(NAME);
    }
    void *s = NULL;
    DRV(drv.stream_create(&s, 1));
    t_check(g.channel == -1 && h.channel == 0, "handle kinds: GPU channel %d, host channel %d",
            g.channel, h.channel);
    t_check(memtype(g.epoch) == MEMTYPE_DEVICE,
            "the GPU handle's barrier epoch %p is not device memory (driver answer %d)",
            (void *)g.epoch, memtype(g.epoch));
    t_check(memtype(g.claim) == MEMTYPE_DEVICE,
            "the GPU handle's claims %p are not device memory (driver answer %d)",
            (void *)g.claim, memtype(g.claim));
    t_check(memtype(g.peer_base) == MEMTYPE_DEVICE,
            "the GPU handle's peer table %p is not device memory (driver answer %d)",
            (const void *)g.peer_base, memtype(g.peer_base));
    t_check(memtype(g.chan) != MEMTYPE_DEVICE,
            "the GPU handle's ring counters %p are device memory, not host-mapped",
            (void *)g.chan);
    if (memtype(g.epoch) == MEMTYPE_DEVICE) {
        t_check(zeroed(g.epoch, sizeof(uint64_t), s), "the GPU handle's epoch is not zero");
        t_check((uintptr_t)g.epoch % 8 == 0, "the GPU handle's epoch %p is misaligned",
                (void *)g.epoch);
    }
    t_check(h.epoch != g.epoch && memtype(h.epoch) != MEMTYPE_DEVICE && *h.epoch == 0,
            "the host handle's epoch %p (GPU handle's %p) is not host memory holding 0",
            (void *)h.epoch, (void *)g.epoch);
    if (me == 0) {
        printf("  GPU handle: epoch %p, claims %p (device memory); host handle epoch %p\n",
               (void *)g.epoch, (void *)g.claim, (void *)h.epoch);
    }
    DRV(drv.stream_destroy(s));
    shmem_barrier_all();
    shmem_finalize();
    return t_finish(NAME);
}
