/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_device_heap: the device symmetric heap and RMA to and from it, data-verified.
 *
 * Without a GPU it runs against tests/gpu/libmockcuda.so (FABSHMEM_CUDA_LIB, set here when the
 * environment does not name a driver), whose "device memory" is inaccessible to the host
 * except through the mock's own copies, so every path below proves that the runtime moves
 * device data only through the driver and that the staging protocol delivers it intact. It
 * proves nothing about a real GPU: run it with FABSHMEM_CUDA_LIB=libcuda.so.1 on a GPU machine.
 *
 * Cases (sizes 8 B, 1000 B, 300 KB: the last spans several staging chunks with the .env's
 * FABSHMEM_DEVICE_CHUNK=64K), each toward the next PE and toward itself:
 *   - allocation: the same offsets on every PE (free a block, reuse its hole), calloc zeroes;
 *   - put host -> remote device, get remote device -> host;
 *   - put device -> remote device, get remote device -> local device;
 *   - put device -> remote host heap, get remote host heap -> local device;
 *   - put-with-signal (blocking and nbi) into a remote device block, the signal in host memory:
 *     the target waits for the signal, then reads its device block, which must be complete;
 *   - alltoall and alltoallv with device source and dest, and host source / device dest.
 * Device contents are read back through shmem_getmem from the calling PE itself (a driver copy).
 */
#include "../gpu/gpu_test.h"

#ifdef FSH_MOCK_GDR
#define NAME "gpu_device_heap_gdr" /* the same through the mock GDRCopy (gpu_test.h) */
#else
#define NAME "gpu_device_heap"
#endif
#define BIG (300 * 1000)

static int me, npes;

/* Read a device block of this PE into host memory (a driver copy through the library). */
static void dev_read(void *host, const void *dev, size_t n)
{
    shmem_getmem(host, dev, n, me);
}

static void check_alloc(void)
{
    /* Offsets relative to the first block must be equal on every PE. */
    static long offs[4];
    uint8_t *a = shmemx_malloc_device(1000);
    uint8_t *b = shmemx_malloc_device(5000);
    uint8_t *c = shmemx_malloc_device(64);
    shmemx_free_device(b);
    uint8_t *d = shmemx_calloc_device(10, 100); /* fits b's hole */
    t_check(a && c && d, "device allocation failed");
    if (!a || !c || !d) {
        return;
    }
    offs[0] = c - a;
    offs[1] = d - a;
    offs[2] = (long)((uintptr_t)a % 64);
    shmem_barrier_all();
    long peer[4];
    shmem_getmem(peer, offs, sizeof(offs), 0);
    t_check(peer[0] == offs[0] && peer[1] == offs[1], "device offsets differ from PE 0's");
    t_check(offs[2] == 0, "device block not 64-byte aligned");
    t_check(d < c, "calloc did not reuse the freed hole");
    uint8_t z[1000];
    memset(z, 0xff, sizeof(z));
    dev_read(z, d, sizeof(z));
    size_t nz = 0;
    for (size_t i = 0; i < sizeof(z); i++) {
        nz += z[i] != 0;
    }
    t_check(nz == 0, "calloc_device left %zu nonzero bytes", nz);
    shmemx_free_device(d);
    shmemx_free_device(c);
    shmemx_free_device(a);
}

static void check_rma(int to, size_t n, uint64_t salt)
{
    uint8_t *dev = shmemx_malloc_device(n);   /* target of remote writes */
    uint8_t *ldev = shmemx_malloc_device(n);  /* a local device buffer */
    uint8_t *host = shmem_malloc(n);          /* host symmetric */
    uint8_t *buf = malloc(n), *back = malloc(n);
    int from = (me - (to - me) + npes) % npes; /* who writes to me */
    /* host -> remote device; remote device -> host */
    t_fill(buf, n, me, salt);
    shmem_putmem(dev, buf, n, to);
    shmem_barrier_all();
    memset(back, 0, n);
    dev_read(back, dev, n);
    t_verify(back, n, from, salt, "host->device put of %zu bytes from PE %d", n, from);
    memset(back, 0, n);
    shmem_getmem(back, dev, n, to);
    t_verify(back, n, me, salt, "device->host get of %zu bytes from PE %d", n, to);
    shmem_barrier_all();

    /* device -> remote device; remote device -> local device */
    t_fill(buf, n, me, salt + 1);
    shmem_putmem(ldev, buf, n, me);
    shmem_putmem(dev, ldev, n, to);
    shmem_barrier_all();
    dev_read(back, dev, n);
    t_verify(back, n, from, salt + 1, "device->device put of %zu bytes from PE %d", n, from);
    shmem_barrier_all();
    t_fill(buf, n, 99, salt); /* something else first, so the get must overwrite it */
    shmem_putmem(ldev, buf, n, me);
    shmem_getmem(ldev, dev, n, to);
    dev_read(back, ldev, n);
    t_verify(back, n, me, salt + 1, "device->device get of %zu bytes from PE %d", n, to);
    shmem_barrier_all();

    /* device -> remote host heap; remote host heap -> local device */
    t_fill(buf, n, me, salt + 2);
    shmem_putmem(ldev, buf, n, me);
    shmem_putmem(host, ldev, n, to);
    shmem_barrier_all();
    t_verify(host, n, from, salt + 2, "device->host-heap put of %zu bytes from PE %d", n, from);
    shmem_barrier_all();
    shmem_getmem(ldev, host, n, to);
    dev_read(back, ldev, n);
    t_verify(back, n, me, salt + 2, "host-heap->device get of %zu bytes from PE %d", n, to);
    shmem_barrier_all();

    /* put-with-signal into device memory, blocking and nbi */
    static uint64_t sig;
    for (int nbi = 0; nbi < 2; nbi++) {
        sig = 0;
        shmem_barrier_all();
        t_fill(buf, n, me, salt + 3 + (uint64_t)nbi);
        if (nbi) {
            shmem_putmem_signal_nbi(dev, buf, n, &sig, 7, SHMEM_SIGNAL_SET, to);
        } else {
            shmem_putmem_signal(dev, buf, n, &sig, 7, SHMEM_SIGNAL_SET, to);
        }
        shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 7);
        dev_read(back, dev, n);
        t_verify(back, n, from, salt + 3 + (uint64_t)nbi, "put-with-signal%s of %zu bytes into device memory from PE %d",
                 nbi ? "_nbi" : "", n, from);
        shmem_quiet();
        shmem_barrier_all();
    }
    free(buf);
    free(back);
    shmem_free(host);
    shmemx_free_device(ldev);
    shmemx_free_device(dev);
}

static void check_alltoall(size_t blk, uint64_t salt, int host_src)
{
    size_t n = blk * (size_t)npes;
    uint8_t *src = host_src ? shmem_malloc(n) : shmemx_malloc_device(n);
    uint8_t *dst = shmemx_malloc_device(n);
    uint8_t *buf = malloc(n);
    for (int k = 0; k < npes; k++) {
        t_fill(buf + (size_t)k * blk, blk, me * 1000 + k, salt);
    }
    shmem_putmem(src, buf, n, me);
    shmem_barrier_all();
    t_check(shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, blk) == 0, "alltoallmem failed");
    memset(buf, 0, n);
    dev_read(buf, dst, n);
    for (int k = 0; k < npes; k++) {
        t_verify(buf + (size_t)k * blk, blk, k * 1000 + me, salt,
                 "alltoall (%s source) block of %zu bytes from PE %d", host_src ? "host" : "device",
                 blk, k);
    }
    /* alltoallv: PE i sends (i + k) % 3 * blk / 3 + 1 bytes to PE k. */
    size_t sc[64], sd[64], rc[64], rd[64], total = 0;
    for (int k = 0; k < npes; k++) {
        sc[k] = (size_t)((me + k) % 3) * blk / 3 + 1;
        sd[k] = (size_t)k * blk;
        t_fill(buf + sd[k], sc[k], me * 1000 + k, salt + 9);
    }
    shmem_putmem(src, buf, n, me);
    shmem_barrier_all();
    int r = shmemx_alltoallvmem(SHMEM_TEAM_WORLD, dst, n, src, sc, sd, rc, rd);
    t_check(r == 0, "alltoallv returned %d", r);
    memset(buf, 0, n);
    dev_read(buf, dst, n);
    for (int k = 0; k < npes; k++) {
        size_t want = (size_t)((k + me) % 3) * blk / 3 + 1;
        t_check(rc[k] == want && rd[k] == total, "alltoallv count/displ from PE %d: %zu@%zu", k,
                rc[k], rd[k]);
        t_verify(buf + rd[k], rc[k], k * 1000 + me, salt + 9, "alltoallv block from PE %d", k);
        total += want;
    }
    shmem_barrier_all();
    free(buf);
    shmemx_free_device(dst);
    if (host_src) {
        shmem_free(src);
    } else {
        shmemx_free_device(src);
    }
}

int main(void)
{
    gpu_test_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes > 64) {
        shmem_finalize();
        t_skip(NAME, "at most 64 PEs");
    }
    check_alloc();
    static const size_t sizes[] = {8, 1000, BIG};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        check_rma((me + 1) % npes, sizes[i], 100 * i);
        check_rma(me, sizes[i], 100 * i + 50);
    }
    check_alltoall(1000, 7, 0);
    check_alltoall(100000, 8, 0);
    check_alltoall(1000, 9, 1);
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
