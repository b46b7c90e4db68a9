/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_device_amo: atomics, signals, waits and strided transfers on the device heap,
 * data-verified.
 *
 * Like gpu_device_heap it runs against tests/gpu/libmockcuda.so unless the environment names a
 * driver, so device words are only ever touched through driver copies (a runtime that loaded
 * one directly would die with SIGSEGV). Cases:
 *   - counters: every PE does K fetch_add(1) / add(1) / inc on a long at every PE (itself too):
 *     exact totals, and each PE's fetched values from one target strictly increase;
 *   - every 4- and 8-byte op (set, fetch, swap, compare_swap hit and miss, fetch_and/or/xor,
 *     and/or/xor, fetch_inc) on unsigned int and unsigned long, plus double swap/fetch,
 *     toward the next PE, each result checked against the model;
 *   - put-with-signal with the signal word in the device heap (data in device and in host
 *     memory; SET and ADD from every PE): shmem_signal_wait_until / shmem_signal_fetch on it,
 *     then the data, which must be complete;
 *   - shmem_long_wait_until and wait_until_all on device variables set by remote atomics;
 *   - shmem_long_iput / iget with a device-heap side and a local device buffer.
 */
#include "../gpu/gpu_test.h"

#ifdef FSH_MOCK_GDR
#define NAME "gpu_device_amo_gdr" /* the same through the mock GDRCopy (gpu_test.h) */
#else
#define NAME "gpu_device_amo"
#endif
#define K 50

static int me, npes;

/* A device word of this PE, read through the library (a driver copy). */
static long dev_long(const long *p)
{
    long v = 0;
    shmem_getmem(&v, p, sizeof(v), me);
    return v;
}

static void check_counters(void)
{
    long *ctr = shmemx_calloc_device(3, sizeof(long));
    t_check(ctr != NULL, "device allocation failed");
    if (!ctr) {
        return;
    }
    shmem_barrier_all();
    for (int t = 0; t < npes; t++) {
        int pe = (me + t) % npes;
        long last = -1;
        for (int i = 0; i < K; i++) {
            long v = shmem_long_atomic_fetch_add(&ctr[0], 1, pe);
            t_check(v > last, "fetch_add from PE %d returned %ld after %ld", pe, v, last);
            last = v;
            shmem_long_atomic_add(&ctr[1], 2, pe);
            shmem_long_atomic_inc(&ctr[2], pe);
        }
    }
    shmem_barrier_all();
    long want = (long)npes * K;
    t_check(dev_long(&ctr[0]) == want, "fetch_add counter %ld, want %ld", dev_long(&ctr[0]), want);
    t_check(dev_long(&ctr[1]) == 2 * want, "add counter %ld, want %ld", dev_long(&ctr[1]), 2 * want);
    t_check(dev_long(&ctr[2]) == want, "inc counter %ld, want %ld", dev_long(&ctr[2]), want);
    shmem_barrier_all();
    shmemx_free_device(ctr);
}

#define EXPECT(what, got, want)                                                                \
    t_check((got) == (want), "%s%d: %s gave %llu, want %llu", #what, (int)(sizeof(got) * 8),   \
            #what, (unsigned long long)(got), (unsigned long long)(want))

/* Each op on one word of the next PE (only this PE writes it), checked against the model m. */
#define CHECK_OPS(T, tname, w, to)                                                             \
    do {                                                                                       \
        T m = (T)0x5a5a5a5a5a5a5a5aULL, v;                                                     \
        shmem_##tname##_atomic_set(w, m, to);                                                  \
        EXPECT(fetch, shmem_##tname##_atomic_fetch(w, to), m);                                 \
        v = shmem_##tname##_atomic_swap(w, (T)12345, to);                                      \
        EXPECT(swap, v, m);                                                                    \
        m = 12345;                                                                             \
        v = shmem_##tname##_atomic_compare_swap(w, (T)1, (T)99, to); /* miss */               \
        EXPECT(compare_swap_miss, v, m);                                                       \
        v = shmem_##tname##_atomic_compare_swap(w, m, (T)0xf0f0f0f0f0f0f0f0ULL, to);           \
        EXPECT(compare_swap_hit, v, m);                                                        \
        m = (T)0xf0f0f0f0f0f0f0f0ULL;                                                          \
        v = shmem_##tname##_atomic_fetch_and(w, (T)0xff00ff00ff00ff00ULL, to);                 \
        EXPECT(fetch_and, v, m);                                                               \
        m &= (T)0xff00ff00ff00ff00ULL;                                                         \
        v = shmem_##tname##_atomic_fetch_or(w, (T)0x0f, to);                                   \
        EXPECT(fetch_or, v, m);                                                                \
        m |= 0x0f;                                                                             \
        v = shmem_##tname##_atomic_fetch_xor(w, (T)0x3c, to);                                  \
        EXPECT(fetch_xor, v, m);                                                               \
        m ^= 0x3c;                                                                             \
        shmem_##tname##_atomic_and(w, (T)0x7f7f7f7f7f7f7f7fULL, to);                           \
        m &= (T)0x7f7f7f7f7f7f7f7fULL;                                                         \
        shmem_##tname##_atomic_or(w, (T)0x100, to);                                            \
        m |= 0x100;                                                                            \
        shmem_##tname##_atomic_xor(w, (T)0x1, to);                                             \
        m ^= 0x1;                                                                              \
        v = shmem_##tname##_atomic_fetch_inc(w, to);                                           \
        EXPECT(fetch_inc, v, m);                                                               \
        m++;                                                                                   \
        EXPECT(final, shmem_##tname##_atomic_fetch(w, to), m);                                 \
    } while (0)

static void check_ops(void)
{
    int to = (me + 1) % npes;
    unsigned int *u32 = shmemx_malloc_device(sizeof(unsigned int));
    unsigned long *u64 = shmemx_malloc_device(sizeof(unsigned long));
    double *d = shmemx_malloc_device(sizeof(double));
    t_check(u32 && u64 && d, "device allocation failed");
    if (!u32 || !u64 || !d) {
        return;
    }
    shmem_barrier_all();
    CHECK_OPS(unsigned int, uint, u32, to);
    CHECK_OPS(unsigned long, ulong, u64, to);
    shmem_double_atomic_set(d, 2.5, to);
    double old = shmem_double_atomic_swap(d, -1.25, to);
    t_check(old == 2.5, "double swap gave %g, want 2.5", old);
    old = shmem_double_atomic_fetch(d, to);
    t_check(old == -1.25, "double fetch gave %g, want -1.25", old);
    shmem_barrier_all();
    shmemx_free_device(d);
    shmemx_free_device(u64);
    shmemx_free_device(u32);
}

static void check_signals(size_t n, uint64_t salt)
{
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    uint64_t *sig = shmemx_calloc_device(3, sizeof(uint64_t)); /* one word per case */
    uint8_t *ddata = shmemx_malloc_device(n);
    uint8_t *hdata = shmem_malloc(n);
    uint8_t *buf = malloc(n), *back = malloc(n);
    t_check(sig && ddata && hdata && buf && back, "allocation failed");
    if (!sig || !ddata || !hdata || !buf || !back) {
        return;
    }
    shmem_barrier_all();
    /* device data, device signal (SET); then host data, device signal (nbi) */
    t_fill(buf, n, me, salt);
    shmem_putmem_signal(ddata, buf, n, &sig[0], 11, SHMEM_SIGNAL_SET, to);
    t_check(shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 11) == 11, "signal_wait_until value");
    memset(back, 0, n);
    shmem_getmem(back, ddata, n, me);
    t_verify(back, n, from, salt, "data before a device signal (%zu bytes into device memory) from PE %d", n, from);
    t_fill(buf, n, me, salt + 1);
    shmem_putmem_signal_nbi(hdata, buf, n, &sig[1], 22, SHMEM_SIGNAL_SET, to);
    shmem_quiet();
    while (shmem_signal_fetch(&sig[1]) != 22) {
    }
    t_verify(hdata, n, from, salt + 1, "data before a device signal (%zu bytes into host memory) from PE %d", n, from);
    /* ADD from every PE into PE 0's third signal */
    shmem_barrier_all();
    shmem_putmem_signal(ddata, buf, me == 0 ? n : 0, &sig[2], (uint64_t)me + 1, SHMEM_SIGNAL_ADD, 0);
    if (me == 0) {
        uint64_t want = (uint64_t)npes * (uint64_t)(npes + 1) / 2;
        uint64_t got = shmem_signal_wait_until(&sig[2], SHMEM_CMP_GE, want);
        t_check(got == want, "device signal ADD total %llu, want %llu", (unsigned long long)got,
                (unsigned long long)want);
    }
    shmem_barrier_all();
    free(back);
    free(buf);
    shmem_free(hdata);
    shmemx_free_device(ddata);
    shmemx_free_device(sig);
}

static void check_waits(void)
{
    long *flag = shmemx_calloc_device(1, sizeof(long));
    long *arr = shmemx_calloc_device((size_t)npes, sizeof(long));
    t_check(flag && arr, "device allocation failed");
    if (!flag || !arr) {
        return;
    }
    shmem_barrier_all();
    int to = (me + 1) % npes;
    shmem_long_atomic_set(flag, 42 + to, to);
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 42 + me);
    t_check(dev_long(flag) == 42 + me, "wait_until on a device long returned early");
    for (int pe = 0; pe < npes; pe++) {
        shmem_long_atomic_set(&arr[me], me + 1, pe);
    }
    shmem_long_wait_until_all(arr, (size_t)npes, NULL, SHMEM_CMP_GE, 1);
    for (int pe = 0; pe < npes; pe++) {
        t_check(dev_long(&arr[pe]) == pe + 1, "wait_until_all: slot %d is %ld", pe, dev_long(&arr[pe]));
    }
    t_check(shmem_long_test(flag, SHMEM_CMP_EQ, 42 + me), "shmem_long_test on a device long");
    shmem_barrier_all();
    shmemx_free_device(arr);
    shmemx_free_device(flag);
}

static void check_strided(void)
{
    enum { N = 40 };
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    long *dst = shmemx_calloc_device(3 * N, sizeof(long)); /* every third element written */
    long *ldev = shmemx_calloc_device(2 * N, sizeof(long));
    long src[2 * N], back[3 * N];
    t_check(dst && ldev, "device allocation failed");
    if (!dst || !ldev) {
        return;
    }
    for (int i = 0; i < 2 * N; i++) {
        src[i] = i % 2 ? -1 : me * 1000 + i / 2;
    }
    shmem_barrier_all();
    shmem_long_iput(dst, src, 3, 2, N, to);
    shmem_barrier_all();
    shmem_getmem(back, dst, sizeof(back), me);
    size_t bad = 0;
    for (int i = 0; i < 3 * N; i++) {
        bad += back[i] != (i % 3 ? 0 : from * 1000 + i / 3);
    }
    t_check(bad == 0, "iput into device memory from PE %d: %zu wrong elements", from, bad);
    /* iget from the next PE's device heap into a local device buffer, every other slot */
    shmem_long_iget(ldev, dst, 2, 3, N, to);
    shmem_getmem(back, ldev, 2 * N * sizeof(long), me);
    bad = 0;
    for (int i = 0; i < 2 * N; i++) {
        bad += back[i] != (i % 2 ? 0 : me * 1000 + i / 2);
    }
    t_check(bad == 0, "iget from device memory of PE %d: %zu wrong elements", to, bad);
    shmem_barrier_all();
    shmemx_free_device(ldev);
    shmemx_free_device(dst);
}

int main(void)
{
    gpu_test_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    check_counters();
    check_ops();
    check_signals(8, 1);
    check_signals(200000, 2);
    check_waits();
    check_strided();
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
