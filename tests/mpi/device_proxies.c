/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device_proxies: several proxy threads (FABSHMEM_DEVICE_PROXIES=3 over 6 rings in .env: ring
 * c is drained by thread c mod 3), driven by twice as many CPU producer threads as rings,
 * running the ring producer of include/shmemx_device.h (the code kernels run). Every byte
 * delivered is checked.
 *
 * 1. threads: the PE runs exactly FABSHMEM_DEVICE_PROXIES threads named fsh-proxy<i>.
 * 2. order: producer t (ring t mod 6) sends rounds to every PE: a block of data, a fence, a
 *    signal-only put-with-signal (SET round + 1), then an 8-byte word twice with a fence
 *    between (2r, then 2r + 1). Each PE's main thread meanwhile watches every (source,
 *    producer) signal and, whenever it moves, checks the data of every round up to it: a
 *    fence orders a ring's operations across proxy rounds and threads, on reordering fabrics
 *    too. At the end every word holds the last odd value.
 * 3. quiet_all: the producers put to every PE and end without a quiet; the main thread's
 *    shmemx_dev_quiet_all must complete every ring's operations, whichever thread drains it
 *    (every ring's done reaches its head; after a barrier every PE finds all the data).
 * 4. failure: a descriptor the proxy must refuse (a PE out of range) on ring 1 (thread 1):
 *    a signal wait returns SHMEMX_DEV_EPROXY, the error word says EINVAL, and every proxy
 *    thread stops: a valid put posted afterwards on ring 0 (thread 0) is never delivered and
 *    its quiet returns SHMEMX_DEV_EPROXY, and no fsh-proxy thread is left running.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../test.h"
#include <shmemx_device.h>

#define NAME "device_proxies"
#define MAXT 32   /* producer threads, at most */
#define ROUNDS 24 /* order rounds per producer and PE */
#define SLOT 600  /* order block bytes, at most */
#define QBYTES 3000

static int me, npes, nprod;
static shmemx_device_t h;
static uint8_t *ord_dst;  /* symmetric: [npes][MAXT][ROUNDS][SLOT] */
static uint64_t *ord_sig; /* symmetric: [npes][MAXT] */
static uint64_t *ord_word; /* symmetric: [npes][MAXT] */
static uint8_t *q_dst;    /* symmetric: [npes][MAXT][QBYTES] */
static uint64_t *f_word;  /* symmetric: [1] */
static uint64_t *f_sig;   /* symmetric: [1] */

static uint64_t salt_of(int src, int t, int r, int part)
{
    return ((uint64_t)part << 48) ^ ((uint64_t)src << 32) ^ ((uint64_t)t << 16) ^ (uint64_t)r;
}

static size_t ord_len(int t, int r)
{
    return 1 + (size_t)(t * 131 + r * 977) % SLOT;
}

static uint8_t *ord_slot(int src, int t, int r)
{
    return ord_dst + (((size_t)src * MAXT + (size_t)t) * ROUNDS + (size_t)r) * SLOT;
}

static uint8_t *q_slot(int src, int t)
{
    return q_dst + ((size_t)src * MAXT + (size_t)t) * QBYTES;
}

/* Threads of this process named fsh-proxy<i>, as a bit set of i (count in *n). */
static unsigned long proxy_threads(int *n)
{
    unsigned long set = 0;
    *n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
        if (f && fgets(comm, sizeof(comm), f)) {
            unsigned i;
            if (sscanf(comm, "fsh-proxy%u", &i) == 1) {
                (*n)++;
                set |= i < 64 ? 1UL << i : 0;
            }
        }
        if (f) {
            fclose(f);
        }
    }
    if (d) {
        closedir(d);
    }
    return set;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- 2 ---- */
struct prod {
    int t, errors;
    pthread_t thread;
    uint8_t *src; /* [ROUNDS][SLOT] for order; [QBYTES] for quiet_all */
    uint64_t words[2 * ROUNDS];
};

static void *order_producer(void *arg)
{
    struct prod *p = arg;
    shmemx_device_t mine = h;
    mine.channel = p->t % h.nchan;
    for (int r = 0; r < ROUNDS; r++) {
        uint8_t *s = p->src + (size_t)r * SLOT;
        t_fill(s, ord_len(p->t, r), me, salt_of(me, p->t, r, 1));
        p->words[2 * r] = 2 * (uint64_t)r;
        p->words[2 * r + 1] = 2 * (uint64_t)r + 1;
        for (int i = 0; i < npes; i++) {
            int pe = (me + i) % npes;
            int rc = shmemx_dev_put_nbi(mine, ord_slot(me, p->t, r), s, ord_len(p->t, r), pe);
            rc = rc ? rc : shmemx_dev_fence(mine);
            rc = rc ? rc
                    : shmemx_dev_put_signal_nbi(mine, NULL, NULL, 0, &ord_sig[me * MAXT + p->t],
                                                (uint64_t)r + 1, SHMEMX_DEV_SIGNAL_SET, pe);
            rc = rc ? rc : shmemx_dev_put_nbi(mine, &ord_word[me * MAXT + p->t],
                                              &p->words[2 * r], 8, pe);
            rc = rc ? rc : shmemx_dev_fence(mine);
            rc = rc ? rc : shmemx_dev_put_nbi(mine, &ord_word[me * MAXT + p->t],
                                              &p->words[2 * r + 1], 8, pe);
            p->errors += rc != 0;
        }
    }
    p->errors += shmemx_dev_quiet(mine) != 0;
    return NULL;
}

static void order(void)
{
    struct prod p[MAXT];
    for (int t = 0; t < nprod; t++) {
        p[t] = (struct prod){.t = t, .src = malloc((size_t)ROUNDS * SLOT)};
    }
    shmem_barrier_all();
    for (int t = 0; t < nprod; t++) {
        pthread_create(&p[t].thread, NULL, order_producer, &p[t]);
    }
    /* Watch every (source, producer) signal while they run. */
    int seen[64][MAXT] = {{0}};
    long checks = 0, bad = 0, left = (long)npes * nprod;
    double until = now_s() + 100;
    while (left > 0 && now_s() < until) {
        for (int src = 0; src < npes && src < 64; src++) {
            for (int t = 0; t < nprod; t++) {
                int v = (int)__atomic_load_n(&ord_sig[src * MAXT + t], __ATOMIC_ACQUIRE);
                if (v < seen[src][t]) {
                    bad += t_check(0, "order: signal of PE %d producer %d went back from %d to "
                                      "%d", src, t, seen[src][t], v) == 0;
                }
                for (int r = seen[src][t]; r < v; r++) {
                    /* Round r's data was fenced before round r's signal (and before v's). */
                    bad += t_verify(ord_slot(src, t, r), ord_len(t, r), src, salt_of(src, t, r, 1),
                                    "order: PE %d producer %d round %d seen with signal %d",
                                    src, t, r, v) != 0;
                    checks++;
                }
                if (v > seen[src][t]) {
                    seen[src][t] = v;
                    left -= v == ROUNDS;
                }
            }
        }
        sched_yield();
    }
    t_check(left == 0, "order: %ld (PE, producer) signals short of %d after 100 s", left, ROUNDS);
    for (int t = 0; t < nprod; t++) {
        pthread_join(p[t].thread, NULL);
        t_check(p[t].errors == 0, "order: producer %d had %d failed calls", t, p[t].errors);
    }
    shmem_barrier_all(); /* every producer quieted */
    for (int src = 0; src < npes; src++) {
        for (int t = 0; t < nprod; t++) {
            uint64_t w = __atomic_load_n(&ord_word[src * MAXT + t], __ATOMIC_ACQUIRE);
            t_check(w == 2 * (uint64_t)ROUNDS - 1,
                    "order: word of PE %d producer %d is %llu, want %d (the fenced last put)",
                    src, t, (unsigned long long)w, 2 * ROUNDS - 1);
        }
    }
    if (me == 0) {
        printf("  order: %d producers on %d rings, %ld rounds checked as their signals came, "
               "%ld wrong\n", nprod, h.nchan, checks, bad);
    }
    for (int t = 0; t < nprod; t++) {
        free(p[t].src);
    }
}

/* ---- 3 ---- */
static void *quiet_producer(void *arg)
{
    struct prod *p = arg;
    shmemx_device_t mine = h;
    mine.channel = p->t % h.nchan;
    t_fill(p->src, QBYTES, me, salt_of(me, p->t, 0, 3));
    for (int i = 0; i < npes; i++) {
        int pe = (me + 1 + i) % npes;
        /* In pieces, so each ring holds many descriptors (and wraps). */
        for (size_t off = 0; off < QBYTES; off += 100) {
            size_t n = QBYTES - off < 100 ? QBYTES - off : 100;
            p->errors += shmemx_dev_put_nbi(mine, q_slot(me, p->t) + off, p->src + off, n, pe) != 0;
        }
    }
    return NULL; /* no quiet: the main thread's quiet_all must cover it */
}

static void quiet_all(void)
{
    struct prod p[MAXT];
    shmem_barrier_all();
    for (int t = 0; t < nprod; t++) {
        p[t] = (struct prod){.t = t, .src = malloc(QBYTES)};
        pthread_create(&p[t].thread, NULL, quiet_producer, &p[t]);
    }
    for (int t = 0; t < nprod; t++) {
        pthread_join(p[t].thread, NULL);
        t_check(p[t].errors == 0, "quiet_all: producer %d had %d failed calls", t, p[t].errors);
    }
    int rc = shmemx_dev_quiet_all(h);
    t_check(rc == 0, "quiet_all returned %d", rc);
    for (int c = 0; c < h.nchan; c++) {
        uint64_t head = __atomic_load_n(&h.claim[c].head, __ATOMIC_ACQUIRE);
        uint64_t done = __atomic_load_n(&h.chan[c].done, __ATOMIC_ACQUIRE);
        t_check(done >= head, "quiet_all: ring %d done %llu short of its head %llu", c,
                (unsigned long long)done, (unsigned long long)head);
    }
    shmem_barrier_all();
    for (int src = 0; src < npes; src++) {
        for (int t = 0; t < nprod; t++) {
            t_verify(q_slot(src, t), QBYTES, src, salt_of(src, t, 0, 3),
                     "quiet_all: PE %d producer %d (ring %d)", src, t, t % h.nchan);
        }
    }
    shmem_barrier_all();
    for (int t = 0; t < nprod; t++) {
        free(p[t].src);
    }
}

/* ---- 4 ---- */
static void failure(int want_threads)
{
    int next = (me + 1) % npes;
    shmemx_device_t one = h, zero = h;
    one.channel = 1 % h.nchan;
    zero.channel = 0;
    t_check(shmemx_dev_quiet_all(h) == 0, "failure: an idle quiet_all failed");
    shmem_barrier_all();
    uint64_t w[7] = {SHMEMX_DEV_OP_PUT_SIGNAL | (uint64_t)h.heap_seg << 8 |
                         (uint64_t)h.heap_seg << 12 | (uint64_t)h.npes << 24,
                     0, 0, 0, 0, 1, 0};
    uint64_t t;
    int rc = shmemx_dev_post_(one, w, &t);
    t_check(rc == 0, "failure: posting returned %d", rc);
    rc = shmemx_dev_signal_wait_until(h, f_sig, SHMEMX_DEV_CMP_GE, 1, NULL);
    t_check(rc == SHMEMX_DEV_EPROXY, "failure: signal wait returned %d, want SHMEMX_DEV_EPROXY",
            rc);
    uint64_t e = __atomic_load_n(h.error, __ATOMIC_ACQUIRE);
    t_check((e & 0xffffffffu) == EINVAL, "failure: error word %#llx, want errno EINVAL",
            (unsigned long long)e);
    /* A valid put on ring 0, which another thread drains: it must never be delivered. */
    static uint64_t v = 0xbadbadULL;
    rc = shmemx_dev_put_nbi(zero, f_word, &v, 8, next);
    t_check(rc == 0 || rc == SHMEMX_DEV_EPROXY, "failure: the put on ring 0 returned %d", rc);
    rc = shmemx_dev_quiet(zero);
    t_check(rc == SHMEMX_DEV_EPROXY, "failure: quiet of ring 0 returned %d, want "
                                     "SHMEMX_DEV_EPROXY (thread 0 went on)", rc);
    int n = 0;
    for (int i = 0; i < 1000; i++) {
        proxy_threads(&n);
        if (n == 0) {
            break;
        }
        sleep_ms(10);
    }
    t_check(n == 0, "failure: %d of %d proxy threads still run 10 s after one failed", n,
            want_threads);
    sleep_ms(100);
    shmem_barrier_all();
    uint64_t got = __atomic_load_n(f_word, __ATOMIC_ACQUIRE);
    t_check(got == 0, "failure: a put posted after the failure was delivered (%#llx)",
            (unsigned long long)got);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    const char *want = getenv("FABSHMEM_DEVICE_PROXIES");
    int want_threads = want ? atoi(want) : 0;
    if (npes > 64 || want_threads < 2) {
        t_skip(NAME, "needs FABSHMEM_DEVICE_PROXIES >= 2 (its .env) and at most 64 PEs");
    }
    ord_dst = shmem_calloc((size_t)npes * MAXT * ROUNDS, SLOT);
    ord_sig = shmem_calloc((size_t)npes * MAXT, sizeof(uint64_t));
    ord_word = shmem_calloc((size_t)npes * MAXT, sizeof(uint64_t));
    q_dst = shmem_calloc((size_t)npes * MAXT, QBYTES);
    f_word = shmem_calloc(1, sizeof(uint64_t));
    f_sig = shmem_calloc(1, sizeof(uint64_t));
    if (shmemx_device_handle_host(&h) != 0) {
        t_check(0, "shmemx_device_handle_host failed");
        return t_finish(NAME);
    }
    nprod = 2 * h.nchan > MAXT ? MAXT : 2 * h.nchan;
    int n = 0;
    unsigned long set = proxy_threads(&n);
    t_check(n == want_threads && set == (1UL << want_threads) - 1,
            "threads: %d fsh-proxy threads (set %#lx), want %d (FABSHMEM_DEVICE_PROXIES)", n,
            set, want_threads);
    order();
    quiet_all();
    t_check(__atomic_load_n(h.error, __ATOMIC_ACQUIRE) == 0, "the proxy's error word is %llx",
            (unsigned long long)*h.error);
    failure(want_threads);
    shmem_barrier_all();
    int code = t_finish(NAME);
    shmem_finalize();
    return code;
}
