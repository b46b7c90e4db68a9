/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_device_map: PEs of one node map each other's device heaps (CUDA IPC); data-verified, and
 * proven by the library's own counters (shmemx_device_info) to go over the mapping, never
 * through staging, for every same-node peer, while peers of another node (FABSHMEM_SIM_NODES)
 * stay on the staging path.
 *
 * Like the other device-heap tests it runs on tests/gpu/libmockcuda.so unless the environment
 * names a driver; the mock's IPC maps a peer's "device memory" PROT_NONE, so the runtime can
 * only have moved the data with driver copies. Cases, toward every PE in turn (itself too):
 *   - shmem_ptr of a peer's device block: non-NULL exactly for mapped peers; a driver copy
 *     through it (what a kernel's store would be) is seen by the owner, and a driver copy out
 *     of it reads what the owner wrote;
 *   - put and get of 8 B, 1000 B and 300 KB, host and device local buffers, into and out of the
 *     peer's device block; and a device buffer to and from the peer's host heap;
 *     the counters: mapped peers take no staged request and no bounce, the others do;
 *   - put-with-signal rounds (300 KB, SET and ADD, blocking and nbi, signal in the host heap
 *     and in the device heap): the receiver checks every byte once it sees the signal;
 *   - all-to-all with device source and destination;
 *   - fetch-add from every PE on every PE's device word at once: exact totals and increasing
 *     fetched values, through the mapping where the peer's host heap is mapped too (the heap's
 *     AMO lock lives there), staged to the owner otherwise, by the counters.
 * Built a second time as gpu_device_map_off (-DMAP_OFF): the last PE runs with
 * FABSHMEM_DEVICE_MAP=0 and the others with a mock driver that refuses cuIpcOpenMemHandle
 * (MOCK_CUDA_IPC_OPEN=217); then no heap is mapped, shmem_ptr of a peer's device block is NULL,
 * each PE's info line says why, and the same data checks pass over the fallback.
 * FABSHMEM_DEVICE_MAP=0 in the environment (the gpudirect configurations, which keep the
 * provider moving same-node device data) is honoured: nothing mapped, the same data checks.
 */
#include <dlfcn.h>
#include <strings.h>

#include "../gpu/gpu_test.h"

#ifdef MAP_OFF
#define NAME "gpu_device_map_off"
#else
#define NAME "gpu_device_map"
#endif
#define BIG (300 * 1000)
#define ROUNDS 8

static int me, npes, sim_nodes;
static int mock; /* running on the mock driver */
static int split; /* gpu_device_map_off on the mock: the last PE off, the others refused */
static int all_off; /* every PE runs with FABSHMEM_DEVICE_MAP=0 (e.g. the gpudirect configs) */

struct counts {
    unsigned long long put, get, amo, through, amo_mapped, bounced;
};

static struct counts counts(void)
{
    struct counts c = {0, 0, 0, 0, 0, 0};
    const char *s = strstr(shmemx_device_info(), "requests staged: ");
    int n = s ? sscanf(s, "requests staged: %llu put, %llu get, %llu atomic; copies through "
                          "mappings: %llu; atomics through mappings: %llu; bounced: %llu",
                       &c.put, &c.get, &c.amo, &c.through, &c.amo_mapped, &c.bounced)
              : 0;
    t_check(n == 6, "no counters in the device info line: %s", shmemx_device_info());
    return c;
}

static int node_of(int pe)
{
    return sim_nodes > 1 ? (int)((long)pe * sim_nodes / npes) : 0;
}

/* Should this PE have mapped pe's device heap? */
static int want_mapped(int pe)
{
    return pe == me || (!split && !all_off && node_of(pe) == node_of(me));
}

static int staging(void)
{
    return strstr(shmemx_device_info(), "path: staging") != NULL;
}

static void check_info(void)
{
    const char *info = shmemx_device_info();
    int peers = 0, first = -1;
    for (int pe = 0; pe < npes; pe++) {
        if (pe != me && node_of(pe) == node_of(me)) {
            peers++;
            first = first < 0 ? pe : first;
        }
    }
    char want[200];
    if (peers == 0) {
        snprintf(want, sizeof(want), "same node: no other PE on this node");
    } else if (all_off || (split && me == npes - 1)) {
        snprintf(want, sizeof(want), "same node: not mapped (FABSHMEM_DEVICE_MAP=0)");
    } else if (split) {
        if (first == npes - 1) {
            snprintf(want, sizeof(want), "same node: mapped 0 of %d peers' heaps (CUDA IPC); "
                     "first not mapped: PE %d: it did not export its heap", peers, first);
        } else {
            snprintf(want, sizeof(want), "same node: mapped 0 of %d peers' heaps (CUDA IPC); "
                     "first not mapped: PE %d: cuIpcOpenMemHandle failed: CUDA error 217", peers,
                     first);
        }
    } else {
        snprintf(want, sizeof(want), "same node: mapped %d of %d peers' heaps (CUDA IPC);", peers,
                 peers);
    }
    t_check(strstr(info, want) != NULL, "device info line lacks '%s': %s", want, info);
}

/* The driver this PE's library loaded (the mock or libcuda): a user's own driver calls on the
 * pointer shmem_ptr gave, as a kernel's loads and stores would be. */
typedef int (*htod_fn)(unsigned long long, const void *, size_t, void *);
typedef int (*dtoh_fn)(void *, unsigned long long, size_t, void *);
typedef int (*sync_fn)(void *);
static htod_fn htod;
static dtoh_fn dtoh;
static sync_fn ssync;

static void load_driver(void)
{
    const char *lib = getenv("FABSHMEM_CUDA_LIB");
    void *h = dlopen(lib && lib[0] ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    t_check(h != NULL, "cannot dlopen the driver: %s", dlerror());
    if (h) {
        htod = (htod_fn)dlsym(h, "cuMemcpyHtoDAsync_v2");
        dtoh = (dtoh_fn)dlsym(h, "cuMemcpyDtoHAsync_v2");
        ssync = (sync_fn)dlsym(h, "cuStreamSynchronize");
    }
    t_check(htod && dtoh && ssync, "the driver lacks cuMemcpyHtoDAsync_v2/cuStreamSynchronize");
}

static void check_ptr(void)
{
    size_t n = 4096;
    uint8_t *dev = shmemx_malloc_device(n);
    uint8_t *buf = malloc(n);
    for (int d = 1; d < npes; d++) {
        int to = (me + d) % npes, from = (me - d + npes) % npes;
        uint8_t *p = shmem_ptr(dev, to);
        t_check((p != NULL) == want_mapped(to), "shmem_ptr of PE %d's device block is %p", to,
                (void *)p);
        int put = p && htod && ssync;
        shmem_barrier_all();
        if (put) {
            t_fill(buf, n, me, 500 + (uint64_t)d);
            t_check(htod((unsigned long long)(uintptr_t)p, buf, n, NULL) == 0 && ssync(NULL) == 0,
                    "driver copy through shmem_ptr(%d) failed", to);
        }
        shmem_barrier_all();
        if (want_mapped(from)) {
            shmem_getmem(buf, dev, n, me);
            t_verify(buf, n, from, 500 + (uint64_t)d, "a store through PE %d's shmem_ptr", from);
        }
        /* The owner writes; this PE reads through the pointer. */
        t_fill(buf, n, me, 600 + (uint64_t)d);
        shmem_putmem(dev, buf, n, me);
        shmem_barrier_all();
        if (put) {
            memset(buf, 0, n);
            t_check(dtoh(buf, (unsigned long long)(uintptr_t)p, n, NULL) == 0 && ssync(NULL) == 0,
                    "driver copy out of shmem_ptr(%d) failed", to);
            t_verify(buf, n, to, 600 + (uint64_t)d, "a load through shmem_ptr(%d)", to);
        }
        shmem_barrier_all();
    }
    t_check(shmem_ptr(dev, me) == dev, "shmem_ptr of my own device block");
    free(buf);
    shmemx_free_device(dev);
}

/* Every combination toward to (round d: from writes to me); the counters say which path. */
static void check_rma(int d, size_t n, uint64_t salt)
{
    int to = (me + d) % npes, from = (me - d + npes) % npes;
    uint8_t *dev = shmemx_malloc_device(n);
    uint8_t *ldev = shmemx_malloc_device(n);
    uint8_t *host = shmem_malloc(n);
    uint8_t *buf = malloc(n), *back = malloc(n);
    /* Our own host heap may be reached through the provider (FABSHMEM_INTRANODE=fabric) even
     * though shmem_ptr gives it: only a peer's answer says whether local.c mapped it. */
    int host_mapped = to != me && shmem_ptr(host, to) != NULL;
    shmem_barrier_all();
    struct counts c0 = counts();

    t_fill(buf, n, me, salt); /* host -> peer device */
    shmem_putmem(dev, buf, n, to);
    shmem_barrier_all();
    shmem_getmem(back, dev, n, me);
    t_verify(back, n, from, salt, "host->device put of %zu bytes from PE %d", n, from);
    memset(back, 0, n); /* peer device -> host */
    shmem_getmem(back, dev, n, to);
    t_verify(back, n, me, salt, "device->host get of %zu bytes from PE %d", n, to);
    shmem_barrier_all();

    t_fill(buf, n, me, salt + 1); /* device -> peer device, peer device -> device */
    shmem_putmem(ldev, buf, n, me);
    shmem_putmem(dev, ldev, n, to);
    shmem_barrier_all();
    shmem_getmem(back, dev, n, me);
    t_verify(back, n, from, salt + 1, "device->device put of %zu bytes from PE %d", n, from);
    shmem_barrier_all();
    t_fill(buf, n, 99, salt);
    shmem_putmem(ldev, buf, n, me);
    shmem_getmem(ldev, dev, n, to);
    shmem_getmem(back, ldev, n, me);
    t_verify(back, n, me, salt + 1, "device->device get of %zu bytes from PE %d", n, to);
    shmem_barrier_all();

    t_fill(buf, n, me, salt + 2); /* device -> peer host heap, and back */
    shmem_putmem(ldev, buf, n, me);
    shmem_putmem(host, ldev, n, to);
    shmem_barrier_all();
    t_verify(host, n, from, salt + 2, "device->host-heap put of %zu bytes from PE %d", n, from);
    shmem_barrier_all();
    shmem_getmem(ldev, host, n, to);
    shmem_getmem(back, ldev, n, me);
    t_verify(back, n, me, salt + 2, "host-heap->device get of %zu bytes from PE %d", n, to);

    struct counts c1 = counts();
    if (want_mapped(to)) {
        t_check(c1.put == c0.put && c1.get == c0.get,
                "PE %d is mapped, yet %llu puts and %llu gets were staged", to, c1.put - c0.put,
                c1.get - c0.get);
        /* 4 device-heap transfers, 2 into or out of a mapped host heap */
        unsigned long long want = to == me ? 0 : host_mapped ? 6 : 4;
        t_check(c1.through - c0.through == want, "%llu copies through PE %d's mapping, want %llu",
                c1.through - c0.through, to, want);
    } else if (staging()) {
        /* only the 2 transfers to and from its host heap, when local.c mapped it */
        t_check(c1.put > c0.put && c1.get > c0.get &&
                    c1.through - c0.through == (host_mapped ? 2u : 0u),
                "PE %d is not mapped, yet not staged (%llu puts, %llu gets; %llu mapped copies)",
                to, c1.put - c0.put, c1.get - c0.get, c1.through - c0.through);
    }
    if (host_mapped) {
        t_check(c1.bounced == c0.bounced, "%llu bounces toward PE %d's mapped host heap",
                c1.bounced - c0.bounced, to);
    }
    shmem_barrier_all();
    free(buf);
    free(back);
    shmem_free(host);
    shmemx_free_device(ldev);
    shmemx_free_device(dev);
}

/* Rounds of put-with-signal toward the next PE: the receiver must see every byte of round r
 * once it sees round r's signal; an acknowledgement paces the sender. */
static void check_signal(int dev_sig, int add, int nbi)
{
    int to = (me + 1) % npes, from = (me - 1 + npes) % npes;
    uint8_t *dev = shmemx_malloc_device(BIG);
    uint64_t *sig = dev_sig ? shmemx_calloc_device(1, sizeof(uint64_t)) : shmem_calloc(1, 8);
    static uint64_t ack;
    uint8_t *buf = malloc(BIG), *back = malloc(BIG);
    ack = 0;
    shmem_barrier_all();
    for (uint64_t r = 1; r <= ROUNDS; r++) {
        uint64_t salt = 1000 + r * 8 + (uint64_t)(dev_sig * 4 + add * 2 + nbi);
        t_fill(buf, BIG, me, salt);
        uint64_t v = add ? 1 : r;
        if (nbi) {
            shmem_putmem_signal_nbi(dev, buf, BIG, sig, v, add ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET,
                                    to);
        } else {
            shmem_putmem_signal(dev, buf, BIG, sig, v, add ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET, to);
        }
        shmem_signal_wait_until(sig, SHMEM_CMP_GE, r);
        shmem_getmem(back, dev, BIG, me);
        t_verify(back, BIG, from, salt, "round %llu of put-with-signal (%s, %s signal%s) from PE %d",
                 (unsigned long long)r, add ? "ADD" : "SET", dev_sig ? "device" : "host",
                 nbi ? ", nbi" : "", from);
        shmem_quiet();
        shmem_uint64_atomic_set(&ack, r, from); /* from may overwrite dev again */
        shmem_wait_until(&ack, SHMEM_CMP_GE, r);
    }
    shmem_barrier_all();
    free(buf);
    free(back);
    if (dev_sig) {
        shmemx_free_device(sig);
    } else {
        shmem_free(sig);
    }
    shmemx_free_device(dev);
}

static void check_alltoall(size_t blk, uint64_t salt)
{
    size_t n = blk * (size_t)npes;
    uint8_t *src = shmemx_malloc_device(n);
    uint8_t *dst = shmemx_malloc_device(n);
    uint8_t *buf = malloc(n);
    for (int k = 0; k < npes; k++) {
        t_fill(buf + (size_t)k * blk, blk, me * 1000 + k, salt);
    }
    shmem_putmem(src, buf, n, me);
    shmem_barrier_all();
    struct counts c0 = counts();
    t_check(shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, blk) == 0, "alltoallmem failed");
    struct counts c1 = counts();
    memset(buf, 0, n);
    shmem_getmem(buf, dst, n, me);
    int all = 1;
    for (int k = 0; k < npes; k++) {
        all = all && want_mapped(k);
        t_verify(buf + (size_t)k * blk, blk, k * 1000 + me, salt,
                 "alltoall block of %zu bytes from PE %d", blk, k);
    }
    if (all) {
        t_check(c1.put == c0.put && c1.get == c0.get, "all-to-all between mapped PEs staged %llu "
                "puts", c1.put - c0.put);
    }
    shmem_barrier_all();
    free(buf);
    shmemx_free_device(dst);
    shmemx_free_device(src);
}

/* Every PE adds to one PE's counter at once (the owner too), each PE in turn: one atomicity
 * domain whether an atomic is applied through the mapping (a same-node peer whose host heap,
 * where the heap's AMO lock lives, is mapped too) or by the owner (a staging request, or its
 * own). Fetched values strictly increase; the totals are exact (a lost update shows as a short
 * count). */
#define AMOS 100
static void check_amo(void)
{
    long *ctr = shmemx_calloc_device(1, sizeof(long));
    long *probe = shmem_malloc(sizeof(long)); /* the heap, like the lock (static data may not
                                               * be shared: ThreadSanitizer builds) */
    shmem_barrier_all();
    for (int to = 0; to < npes; to++) {
        shmem_barrier_all(); /* all at one target at once */
        int lock_mapped = to != me && want_mapped(to) && shmem_ptr(probe, to) != NULL;
        struct counts c0 = counts();
        long last = -1;
        for (int i = 0; i < AMOS; i++) {
            long v = shmem_long_atomic_fetch_add(ctr, 1, to);
            t_check(v > last, "fetch_add from PE %d returned %ld after %ld", to, v, last);
            last = v;
        }
        struct counts c1 = counts();
        if (lock_mapped) {
            t_check(c1.amo == c0.amo && c1.amo_mapped - c0.amo_mapped == AMOS,
                    "PE %d is mapped, yet %llu atomics staged, %llu through the mapping", to,
                    c1.amo - c0.amo, c1.amo_mapped - c0.amo_mapped);
        } else if (to != me) {
            t_check(c1.amo - c0.amo == AMOS && c1.amo_mapped == c0.amo_mapped,
                    "PE %d: %llu atomics staged, %llu through a mapping; want %d staged", to,
                    c1.amo - c0.amo, c1.amo_mapped - c0.amo_mapped, AMOS);
        }
    }
    shmem_barrier_all();
    long v = 0;
    shmem_getmem(&v, ctr, sizeof(v), me);
    t_check(v == (long)AMOS * npes, "device counter %ld, want %ld", v, (long)AMOS * npes);
    shmem_barrier_all();
    shmem_free(probe);
    shmemx_free_device(ctr);
}

int main(void)
{
    const char *lib = getenv("FABSHMEM_CUDA_LIB");
    mock = FSH_MOCK_CUDA[0] && (!lib || strcmp(lib, FSH_MOCK_CUDA) == 0);
#ifdef MAP_OFF
    /* Before init: the last PE turns the mapping off, the others get a driver that refuses it
     * (the mock only; on a real driver every PE turns it off). */
    const char *rank = getenv("PMIX_RANK"), *size = getenv("OMPI_COMM_WORLD_SIZE");
    split = rank && size && mock;
    if (!split || atoi(rank) == atoi(size) - 1) {
        setenv("FABSHMEM_DEVICE_MAP", "0", 1);
    } else {
        setenv("FABSHMEM_DEVICE_MAP", "1", 1); /* over a caller's 0: the refusal is the point */
        setenv("MOCK_CUDA_IPC_OPEN", "217", 1); /* CUDA_ERROR_PEER_ACCESS_UNSUPPORTED */
    }
#endif
    const char *m = getenv("FABSHMEM_DEVICE_MAP");
    all_off = !split && m && (strcmp(m, "0") == 0 || strcasecmp(m, "no") == 0 ||
                              strcasecmp(m, "off") == 0 || strcasecmp(m, "false") == 0);
    gpu_test_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    const char *k = getenv("FABSHMEM_SIM_NODES");
    sim_nodes = k ? atoi(k) : 0;
    load_driver();
    check_info();
    check_ptr();
    static const size_t sizes[] = {8, 1000, BIG};
    for (int d = 0; d < npes; d++) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            check_rma(d, sizes[i], 100 * i + (uint64_t)d * 10);
        }
    }
    for (int v = 0; v < 8; v++) {
        check_signal(v & 4, v & 2, v & 1);
    }
    check_alltoall(1000, 7);
    check_alltoall(100000, 8);
    check_amo();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
