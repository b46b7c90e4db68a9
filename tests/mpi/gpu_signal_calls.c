/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_signal_calls: how many synchronizing driver calls a put-with-signal into a same-node
 * peer's device heap and a host wait on a device signal cost, counted by the mock driver
 * (mock_cuda_syncs(): every cuStreamSynchronize; each is a round trip to a real GPU, 5-20 us).
 * A count, not a time: the mock's copies are memcpy.
 *
 * Each PE sends to the next (a ring; itself at 1 PE) and, where this PE's driver reaches every
 * peer's device heap and AMO lock (one node, the heaps mapped, the host heaps mapped too:
 * shmem_ptr of both non-NULL), holds
 *   - shmem_putmem_signal, 64 B device heap to device heap, SET: at most 1 synchronization
 *     (the data copy and the signal's write on one stream; the old code: 3, the copy, then a
 *     device AMO's read and write back);
 *   - the same with ADD: at most 2 (the read needs the data in first);
 *   - shmem_signal_wait_until on a device word already set: at most 1 (one compared copy; the
 *     old code read the word again under its AMO lock to return it).
 * Elsewhere (another pretend node, FABSHMEM_INTRANODE=fabric) only the data is checked. Every
 * round the receiver checks, right after its wait, that the 64 bytes are the sender's (the
 * mock's stream runs copies on a thread after the call returned, so a signal written before
 * its data would be caught) and that the wait returned the value that satisfied it.
 *
 * On a real driver (FABSHMEM_CUDA_LIB naming one) there is nothing to count: it skips.
 */
#include <dlfcn.h>

#include "../gpu/gpu_test.h"

#define NAME "gpu_signal_calls"
#define ROUNDS 20
#define LEN 64

static unsigned long (*syncs)(void);

static unsigned long pattern(int pe, int round, int i)
{
    return ((unsigned long)pe << 40) ^ ((unsigned long)round << 20) ^ (unsigned long)i * 2654435761u;
}

int main(void)
{
    gpu_test_start(NAME);
    const char *lib = getenv("FABSHMEM_CUDA_LIB");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    *(void **)&syncs = h ? dlsym(h, "mock_cuda_syncs") : NULL;
    if (!syncs) {
        if (FSH_MOCK_CUDA[0] && lib && strcmp(lib, FSH_MOCK_CUDA) == 0) {
            t_check(0, "the mock driver %s has no mock_cuda_syncs", lib);
        }
        shmem_finalize();
        t_skip(NAME, "not the mock driver: no driver call counts");
    }
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    unsigned long *data = shmemx_calloc_device(2 * LEN / sizeof(long), sizeof(long));
    unsigned long *src = shmemx_malloc_device(LEN);
    uint64_t *sig = shmemx_calloc_device(2, sizeof(uint64_t));
    long *probe = shmem_malloc(sizeof(long));
    t_check(data && src && sig && probe, "device heap allocations failed");
    /* Counts are held only where the fast path may apply to every pair: each peer's device heap
     * and host heap reachable here. (Then no PE stages requests to another, so no progress
     * thread synchronizes the driver on their behalf while a call is counted.) */
    int direct = 1;
    for (int pe = 0; pe < npes; pe++) {
        direct = direct && (pe == me || (shmem_ptr(data, pe) && shmem_ptr(probe, pe)));
    }
    unsigned long host[LEN / sizeof(long)], got[LEN / sizeof(long)];
    unsigned long worst_set = 0, worst_add = 0, worst_wait = 0;
    for (int r = 1; r <= ROUNDS; r++) {
        size_t n = LEN / sizeof(long);
        for (size_t i = 0; i < n; i++) {
            host[i] = pattern(me, r, (int)i);
        }
        shmem_putmem(src, host, LEN, me); /* our own device buffer: a driver copy */
        shmem_barrier_all();
        /* SET into data[0..n) and sig[0]; the receiver waits for it, then checks the data. */
        unsigned long before = syncs();
        shmem_putmem_signal(data, src, LEN, &sig[0], (uint64_t)r, SHMEM_SIGNAL_SET, to);
        unsigned long used = syncs() - before;
        worst_set = used > worst_set ? used : worst_set;
        uint64_t v = shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, (uint64_t)r);
        t_check(v == (uint64_t)r, "round %d: shmem_signal_wait_until returned %llu, not %d", r,
                (unsigned long long)v, r);
        shmem_getmem(got, data, LEN, me);
        for (size_t i = 0; i < n; i++) {
            t_check(got[i] == pattern(from, r, (int)i),
                    "round %d: word %zu from PE %d is %#lx, not %#lx, once its SET signal was seen",
                    r, i, from, got[i], pattern(from, r, (int)i));
        }
        /* ADD of 1 into sig[1] with the data into data[n..2n). */
        before = syncs();
        shmem_putmem_signal(data + n, src, LEN, &sig[1], 1, SHMEM_SIGNAL_ADD, to);
        used = syncs() - before;
        worst_add = used > worst_add ? used : worst_add;
        v = shmem_signal_wait_until(&sig[1], SHMEM_CMP_GE, (uint64_t)r);
        t_check(v == (uint64_t)r, "round %d: the ADD signal is %llu, not %d", r,
                (unsigned long long)v, r);
        shmem_getmem(got, data + n, LEN, me);
        for (size_t i = 0; i < n; i++) {
            t_check(got[i] == pattern(from, r, (int)i),
                    "round %d: word %zu from PE %d is %#lx, not %#lx, once its ADD signal was seen",
                    r, i, from, got[i], pattern(from, r, (int)i));
        }
        /* A wait on a word already set: one compared copy. */
        shmem_barrier_all();
        before = syncs();
        v = shmem_signal_wait_until(&sig[0], SHMEM_CMP_GE, (uint64_t)r);
        used = syncs() - before;
        worst_wait = used > worst_wait ? used : worst_wait;
        t_check(v == (uint64_t)r, "round %d: the second wait returned %llu", r,
                (unsigned long long)v);
    }
    if (direct) {
        t_check(worst_set <= 1,
                "a 64 B device put-with-signal SET to PE %d took %lu synchronizing driver calls "
                "(at most 1: the data and the signal on one stream)", to, worst_set);
        t_check(worst_add <= 2,
                "a 64 B device put-with-signal ADD to PE %d took %lu synchronizing driver calls "
                "(at most 2)", to, worst_add);
        t_check(worst_wait <= 1,
                "shmem_signal_wait_until on a device word already set took %lu synchronizing "
                "driver calls (at most 1)", worst_wait);
    }
    if (me == 0) {
        printf("  PE 0 -> PE %d (%s): synchronizing driver calls, worst of %d rounds: SET %lu, "
               "ADD %lu, satisfied wait %lu\n", to, direct ? "held to the bounds" : "not mapped",
               ROUNDS, worst_set, worst_add, worst_wait);
    }
    shmem_barrier_all();
    shmemx_free_device(sig);
    shmemx_free_device(src);
    shmemx_free_device(data);
    shmem_free(probe);
    shmem_finalize();
    return t_finish(NAME);
}
