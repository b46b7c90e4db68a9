/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_gdr: the host's own small reads and writes of its device heap go through GDRCopy's
 * mapping (runtime/gdr.c), not driver copies, on the mock driver and the mock GDRCopy
 * (tests/gpu/libmockgdr.so, named by FABSHMEM_GDRCOPY_LIB). Driver calls are counted by the
 * mock driver (each driver copy and each synchronization is a round trip to a real GPU).
 *
 * Each PE sends to the next (a ring; itself at 1 PE), ROUNDS rounds of:
 *   - shmem_putmem_signal of 64 B device heap to device heap, SET r, and a
 *     shmem_signal_wait_until on its own device word for r from the previous PE: the wait's
 *     polls may not copy with the driver at all (before: one device-to-host copy and one
 *     synchronization per poll); the 64 bytes are checked right after the wait;
 *   - shmem_atomic_fetch_add on its own device word (applied by this CPU: no driver copy; before:
 *     a read and a write back, each synchronized), the value checked, and shmem_atomic_add on
 *     the next PE's (staged to its owner's CPU on another node, applied here on a mapped heap);
 *   - shmem_putmem_signal of 64 B from host memory into its own device heap with a SET: no
 *     synchronization (before: one).
 * At the end every remote add is checked, and the info line must say GDRCopy is in use, with
 * reads through it counted, and the mock must hold one mapping (it aborts the process if
 * finalize leaks one).
 *
 * Built -DGDR_MISSING (gpu_gdr_missing): FABSHMEM_GDRCOPY_LIB names no library, so auto falls
 * back: the info line names the missing library, the data is the same, and every wait copies
 * with the driver (the counts above are real). On a real driver there is nothing to count: it
 * skips.
 */
#include <dlfcn.h>

#include "../gpu/gpu_test.h"

#ifdef GDR_MISSING
#define NAME "gpu_gdr_missing"
#else
#define NAME "gpu_gdr"
#endif
#ifndef FSH_MOCK_GDR
#define FSH_MOCK_GDR ""
#endif
#define ROUNDS 20
#define LEN 64

static unsigned long (*cuda_calls)(const char *);
static unsigned long (*cuda_syncs)(void);

static unsigned long copies(void)
{
    return cuda_calls("cuMemcpyDtoHAsync_v2") + cuda_calls("cuMemcpyHtoDAsync_v2") +
           cuda_calls("cuMemcpyDtoDAsync_v2");
}

static unsigned long pattern(int pe, int round, int i)
{
    return ((unsigned long)pe << 40) ^ ((unsigned long)round << 20) ^ (unsigned long)i * 2654435761u;
}

int main(void)
{
#ifdef GDR_MISSING
    setenv("FABSHMEM_GDRCOPY_LIB", "/nonexistent/libgdrapi.so.2", 1);
#else
    if (FSH_MOCK_GDR[0]) {
        setenv("FABSHMEM_GDRCOPY_LIB", FSH_MOCK_GDR, 0);
    }
#endif
    gpu_test_start(NAME);
    const char *lib = getenv("FABSHMEM_CUDA_LIB");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    *(void **)&cuda_calls = h ? dlsym(h, "mock_cuda_calls") : NULL;
    *(void **)&cuda_syncs = h ? dlsym(h, "mock_cuda_syncs") : NULL;
    if (!cuda_calls || !cuda_syncs) {
        if (FSH_MOCK_CUDA[0] && lib && strcmp(lib, FSH_MOCK_CUDA) == 0) {
            t_check(0, "the mock driver %s has no mock_cuda_calls", lib);
        }
        shmem_finalize();
        t_skip(NAME, "not the mock driver: no driver call counts");
    }
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    const char *info = shmemx_device_info();
#ifdef GDR_MISSING
    t_check(strstr(info, "GDRCopy: not used (library missing: /nonexistent/libgdrapi.so.2") != NULL,
            "the info line does not name the missing GDRCopy library: %s", info);
#else
    t_check(strstr(info, "GDRCopy: in use") != NULL, "GDRCopy is not in use: %s", info);
    const char *glib = getenv("FABSHMEM_GDRCOPY_LIB");
    void *g = glib ? dlopen(glib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    unsigned long (*gdr_calls)(const char *) = NULL;
    int (*gdr_live)(void) = NULL;
    *(void **)&gdr_calls = g ? dlsym(g, "mock_gdr_calls") : NULL;
    *(void **)&gdr_live = g ? dlsym(g, "mock_gdr_live") : NULL;
    t_check(gdr_calls && gdr_live, "the mock GDRCopy %s is not loaded", glib ? glib : "(unset)");
#endif
    unsigned long *data = shmemx_calloc_device(2 * LEN / sizeof(long), sizeof(long));
    unsigned long *src = shmemx_malloc_device(LEN);
    uint64_t *sig = shmemx_calloc_device(2, sizeof(uint64_t));
    long *ctr = shmemx_calloc_device(2, sizeof(long));
    t_check(data && src && sig && ctr, "device heap allocations failed");
    size_t n = LEN / sizeof(long);
    unsigned long host[LEN / sizeof(long)], got[LEN / sizeof(long)];
    unsigned long wait_copies = 0, wait_syncs = 0, amo_copies = 0, self_syncs = 0;
    shmem_barrier_all();
    for (int r = 1; r <= ROUNDS; r++) {
        for (size_t i = 0; i < n; i++) {
            host[i] = pattern(me, r, (int)i);
        }
        shmem_putmem(src, host, LEN, me);
        shmem_putmem_signal(data, src, LEN, &sig[0], (uint64_t)r, SHMEM_SIGNAL_SET, to);
        unsigned long c0 = cuda_calls("cuMemcpyDtoHAsync_v2"), s0 = cuda_syncs();
        uint64_t v = shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, (uint64_t)r);
        wait_copies += cuda_calls("cuMemcpyDtoHAsync_v2") - c0;
        wait_syncs += cuda_syncs() - s0;
        t_check(v == (uint64_t)r, "round %d: shmem_signal_wait_until returned %llu", r,
                (unsigned long long)v);
        shmem_getmem(got, data, LEN, me);
        for (size_t i = 0; i < n; i++) {
            t_check(got[i] == pattern(from, r, (int)i),
                    "round %d: word %zu from PE %d is %#lx, not %#lx, once its signal was seen", r,
                    i, from, got[i], pattern(from, r, (int)i));
        }
        /* Our own device word, applied by this CPU. */
        c0 = copies();
        long old = shmem_long_atomic_fetch_add(&ctr[0], 3, me);
        amo_copies += copies() - c0;
        t_check(old == 3L * (r - 1), "round %d: fetch_add on our own device word returned %ld, "
                "not %ld", r, old, 3L * (r - 1));
        shmem_long_atomic_add(&ctr[1], 1, to);
        /* From host memory into our own heap with its signal. */
        s0 = cuda_syncs();
        shmem_putmem_signal(data + n, host, LEN, &sig[1], (uint64_t)r, SHMEM_SIGNAL_SET, me);
        self_syncs += cuda_syncs() - s0;
        v = shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, (uint64_t)r);
        shmem_getmem(got, data + n, LEN, me);
        for (size_t i = 0; i < n; i++) {
            t_check(got[i] == host[i], "round %d: word %zu of the put-with-signal to ourselves "
                    "is %#lx, not %#lx", r, i, got[i], host[i]);
        }
        shmem_barrier_all(); /* the next round's SET overwrites data the receiver checked */
    }
    long adds = shmem_long_atomic_fetch(&ctr[1], me);
    t_check(adds == ROUNDS, "%ld remote adds landed on our device word, not %d", adds, ROUNDS);
    info = shmemx_device_info();
#ifdef GDR_MISSING
    /* Each wait polled at least once with a driver copy: the fallback, and the count is real. */
    t_check(wait_copies >= ROUNDS, "%d waits on a device word took %lu driver copies without "
            "GDRCopy (at least one each)", ROUNDS, wait_copies);
#else
    t_check(wait_copies == 0 && wait_syncs == 0,
            "%d waits on a device word took %lu device-to-host driver copies and %lu "
            "synchronizations (none with GDRCopy)", ROUNDS, wait_copies, wait_syncs);
    t_check(amo_copies == 0, "%d atomics on our own device word took %lu driver copies (none "
            "with GDRCopy)", ROUNDS, amo_copies);
    t_check(self_syncs == 0, "%d host-to-own-heap puts with signal took %lu synchronizations "
            "(none with GDRCopy)", ROUNDS, self_syncs);
    const char *at = strstr(info, "; reads ");
    unsigned long reads = at ? strtoul(at + 8, NULL, 10) : 0;
    t_check(reads >= 3UL * ROUNDS, "the info line counts %lu reads through GDRCopy (at least %d "
            "expected): %s", reads, 3 * ROUNDS, info);
    t_check(gdr_calls && gdr_calls("gdr_map") == 1 && gdr_live() == 1,
            "the mock GDRCopy saw %lu gdr_map calls and holds %d pinned buffers (1 and 1)",
            gdr_calls ? gdr_calls("gdr_map") : 0, gdr_calls ? gdr_live() : 0);
#endif
    if (me == 0) {
        printf("  PE 0: over %d rounds: wait driver copies %lu, synchronizations %lu; own-word "
               "atomic copies %lu; put-with-signal to itself synchronizations %lu\n", ROUNDS,
               wait_copies, wait_syncs, amo_copies, self_syncs);
    }
    shmem_barrier_all();
    shmemx_free_device(ctr);
    shmemx_free_device(sig);
    shmemx_free_device(src);
    shmemx_free_device(data);
    shmem_finalize();
    return t_finish(NAME);
}
