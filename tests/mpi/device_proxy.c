/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device_proxy: the device API's ring producer (include/shmemx_device.h, the very code kernels
 * run) driven by CPU threads playing GPU threads, against this PE's real proxy (proxy.c),
 * targets in the host heap. Every byte delivered is checked.
 *
 * 1. pingpong: each PE sends rounds of put-with-signal (SET round) to the next PE, lengths
 *    from 1 B to 64 KiB + 3 (inline, injected, bounced, split); the receiver waits with
 *    shmemx_dev_signal_wait_until, verifies the round's bytes, and answers with a signal-only
 *    ADD: the signal never comes before its data, on every fabric.
 * 2. many: NPROD producer threads share the rings (FABSHMEM_DEVICE_RING=16 in .env, so they
 *    wrap hundreds of times and fill: a producer must see head - tail reach the ring size),
 *    each putting rounds into K slots at every PE plus a counting signal; at the end the
 *    counts and the last K rounds' bytes are checked.
 * 3. blocking, fence, quiet, barrier: a blocking put's source is reusable on return; a
 *    512 KiB put followed by quiet, and puts before shmemx_dev_barrier_all, are visible at
 *    every PE after the barrier (its signals travel after the quiet).
 * 4. torn: a descriptor written in part (the rest of its words still the previous lap's) is
 *    not taken by the proxy (tail and target unchanged for a while); completed, it is.
 * 5. mapped: with every peer's heap mapped here (the intra-node path), a handle whose window
 *    is the host heap takes the mapping path (stores, then a release of the signal).
 * 6. idle quiet: with nothing posted since the last completed quiet, a quiet reads none of the
 *    proxy's words (on a GPU those are PCIe round trips): a handle whose rings, counters and
 *    error word are an inaccessible page must pass quiet and quiet_all; after one more post
 *    the real handle's quiet completes it (its data checked) and the idle quiet holds again.
 * 7. coalesce: rounds of CO_WORDS contiguous 8 B puts (the last a put-with-signal continuing
 *    them) to the next PE must reach the fabric as fewer operations than descriptors (the
 *    proxy merges adjacent contiguous puts: shmemx_device_proxy_stats), with every word and
 *    the signal right; puts with scattered destinations, or contiguous destinations from
 *    scattered sources, must not merge (one operation each) and leave the gaps untouched.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../test.h"
#include <shmemx_device.h>

#define NAME "device_proxy"
#define MAXLEN (65536 + 3)
#define PP_ROUNDS 60
#define NPROD 4
#define MANY_ROUNDS 150
#define K 4
#define SLOT 2048

static int me, npes;
static shmemx_device_t h;
static uint8_t *pp_dst;     /* symmetric: MAXLEN */
static uint64_t *pp_sig;    /* symmetric: [0] data signal, [1] ack */
static uint8_t *many_dst;   /* symmetric: [npes][NPROD][K][SLOT] */
static uint64_t *many_cnt;  /* symmetric: [npes][NPROD] */
static uint64_t *bar_dst;   /* symmetric: [npes] */
static uint8_t *big_dst;    /* symmetric: BIG */
#define BIG (512 * 1024)

#define CO_WORDS 1024
#define CO_ROUNDS 3
static uint64_t *co_run;  /* symmetric: [CO_WORDS], contiguous puts */
static uint64_t *co_gap;  /* symmetric: [2 * CO_WORDS], every other word */
static uint64_t *co_src;  /* symmetric: [CO_WORDS], from every other source word */
static uint64_t *co_sig;  /* symmetric: [1] */

static const size_t pp_len[] = {1, 8, 60, 64, 1000, 4096, 8192, 65536 + 3};

static uint64_t salt_of(int src, int t, int r)
{
    return ((uint64_t)src << 40) ^ ((uint64_t)t << 32) ^ (uint64_t)r;
}

static uint8_t *many_slot(int src, int t, int k)
{
    return many_dst + (((size_t)src * NPROD + (size_t)t) * K + (size_t)k) * SLOT;
}

static size_t many_len(int t, int r)
{
    return 1 + ((size_t)(t * 977 + r * 131) % SLOT);
}

/* ---- 1 ---- */
static void pingpong(void)
{
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    uint8_t *src = malloc(MAXLEN);
    for (int r = 0; r < PP_ROUNDS; r++) {
        size_t len = pp_len[r % (sizeof(pp_len) / sizeof(pp_len[0]))];
        t_fill(src, len, me, salt_of(me, 99, r));
        int rc = shmemx_dev_put_signal_nbi(h, pp_dst, src, len, &pp_sig[0], (uint64_t)r + 1,
                                           SHMEMX_DEV_SIGNAL_SET, next);
        t_check(rc == 0, "pingpong round %d: put_signal_nbi returned %d", r, rc);
        uint64_t seen = 0;
        rc = shmemx_dev_signal_wait_until(h, &pp_sig[0], SHMEMX_DEV_CMP_GE, (uint64_t)r + 1,
                                          &seen);
        t_check(rc == 0 && seen == (uint64_t)r + 1, "pingpong round %d: wait %d, signal %llu",
                r, rc, (unsigned long long)seen);
        t_verify(pp_dst, len, prev, salt_of(prev, 99, r), "pingpong round %d, %zu bytes from PE %d",
                 r, len, prev);
        /* The source may be refilled only once the data left: quiet. Then the ack. */
        rc = shmemx_dev_quiet(h);
        t_check(rc == 0, "pingpong round %d: quiet returned %d", r, rc);
        rc = shmemx_dev_put_signal_nbi(h, NULL, NULL, 0, &pp_sig[1], 1, SHMEMX_DEV_SIGNAL_ADD,
                                       prev);
        t_check(rc == 0, "pingpong round %d: ack returned %d", r, rc);
        rc = shmemx_dev_signal_wait_until(h, &pp_sig[1], SHMEMX_DEV_CMP_GE, (uint64_t)r + 1,
                                          NULL);
        t_check(rc == 0, "pingpong round %d: ack wait returned %d", r, rc);
    }
    free(src);
}

/* ---- 2 ---- */
struct prod {
    int t;
    int errors;
    uint64_t max_backlog;
    pthread_t thread;
};

static void *producer(void *arg)
{
    struct prod *p = arg;
    shmemx_device_t mine = h;
    mine.channel = p->t % h.nchan;
    uint8_t *src = malloc((size_t)K * SLOT);
    for (int r = 0; r < MANY_ROUNDS; r++) {
        int k = r % K;
        size_t len = many_len(p->t, r);
        uint8_t *s = src + (size_t)k * SLOT;
        if (k == 0 && r > 0 && shmemx_dev_quiet(mine) != 0) { /* the K sources are reused */
            p->errors++;
        }
        t_fill(s, len, me, salt_of(me, p->t, r));
        for (int i = 0; i < npes; i++) {
            int pe = (me + i) % npes;
            struct shmemx_dev_chan *c = &mine.chan[mine.channel];
            uint64_t backlog = __atomic_load_n(&mine.claim[mine.channel].head, __ATOMIC_ACQUIRE) -
                               __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE);
            if (backlog > p->max_backlog) {
                p->max_backlog = backlog;
            }
            if (shmemx_dev_put_nbi(mine, many_slot(me, p->t, k), s, len, pe) != 0 ||
                shmemx_dev_put_signal_nbi(mine, NULL, NULL, 0, &many_cnt[me * NPROD + p->t], 1,
                                          SHMEMX_DEV_SIGNAL_ADD, pe) != 0) {
                p->errors++;
            }
        }
    }
    if (shmemx_dev_quiet(mine) != 0) {
        p->errors++;
    }
    free(src);
    return NULL;
}

static void many(void)
{
    struct prod p[NPROD];
    for (int t = 0; t < NPROD; t++) {
        p[t] = (struct prod){.t = t};
        pthread_create(&p[t].thread, NULL, producer, &p[t]);
    }
    uint64_t most = 0;
    for (int t = 0; t < NPROD; t++) {
        pthread_join(p[t].thread, NULL);
        t_check(p[t].errors == 0, "many: producer %d had %d failed calls", t, p[t].errors);
        most = p[t].max_backlog > most ? p[t].max_backlog : most;
    }
    /* Claims beyond the ring's size mean producers waited for credits: the ring was full. */
    t_check(most >= h.nslots, "many: the rings never filled (largest backlog %llu of %llu slots)",
            (unsigned long long)most, (unsigned long long)h.nslots);
    if (me == 0) {
        printf("  many: largest backlog %llu on rings of %llu\n", (unsigned long long)most,
               (unsigned long long)h.nslots);
    }
    shmem_barrier_all();
    for (int src = 0; src < npes; src++) {
        for (int t = 0; t < NPROD; t++) {
            uint64_t n = __atomic_load_n(&many_cnt[src * NPROD + t], __ATOMIC_ACQUIRE);
            t_check(n == MANY_ROUNDS, "many: %llu signals from PE %d producer %d, want %d",
                    (unsigned long long)n, src, t, MANY_ROUNDS);
            for (int r = MANY_ROUNDS - K; r < MANY_ROUNDS; r++) {
                t_verify(many_slot(src, t, r % K), many_len(t, r), src, salt_of(src, t, r),
                         "many: PE %d producer %d round %d", src, t, r);
            }
        }
    }
}

/* ---- 3 ---- */
static void blocking_barrier(void)
{
    uint64_t v;
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    uint8_t *big = malloc(BIG);
    for (int round = 1; round <= 5; round++) {
        /* A large put in many pieces, then quiet: done must mean landed, so the barrier's
         * signals (sent after it) cannot overtake it. */
        t_fill(big, BIG, me, salt_of(me, 77, round));
        int qrc = shmemx_dev_put_nbi(h, big_dst, big, BIG, next);
        qrc = qrc ? qrc : shmemx_dev_quiet(h);
        t_check(qrc == 0, "barrier round %d: big put / quiet returned %d", round, qrc);
        for (int pe = 0; pe < npes; pe++) {
            v = (uint64_t)round * 1000 + (uint64_t)me;
            /* blocking: v may change at once */
            int rc = shmemx_dev_put(h, &bar_dst[me], &v, sizeof(v), pe);
            v = 0xdeadbeef;
            t_check(rc == 0, "barrier round %d: put returned %d", round, rc);
        }
        int rc = shmemx_dev_fence(h);
        t_check(rc == 0, "fence returned %d", rc);
        rc = shmemx_dev_barrier_all(h);
        t_check(rc == 0, "barrier round %d: barrier returned %d", round, rc);
        t_verify(big_dst, BIG, prev, salt_of(prev, 77, round),
                 "barrier round %d: %d bytes from PE %d after its quiet", round, BIG, prev);
        for (int src = 0; src < npes; src++) {
            uint64_t got = __atomic_load_n(&bar_dst[src], __ATOMIC_ACQUIRE);
            t_check(got == (uint64_t)round * 1000 + (uint64_t)src,
                    "barrier round %d: word of PE %d is %llu", round, src,
                    (unsigned long long)got);
        }
        /* Nobody may write the next round before everyone read this one. */
        rc = shmemx_dev_barrier_all(h);
        t_check(rc == 0, "barrier round %d: second barrier returned %d", round, rc);
    }
    free(big);
}

/* ---- 4 ---- */
static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void torn(void)
{
    /* One thread only, ring 0: write the descriptor of a put-with-signal to the next PE by
     * hand, as shmemx_dev_post_ does, but stop halfway. */
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    shmemx_device_t mine = h;
    mine.channel = 0;
    uint8_t src[64];
    t_fill(src, sizeof(src), me, 4242);
    uint64_t doff = (uint64_t)(uintptr_t)pp_dst - h.heap_base;
    uint64_t soff = (uint64_t)(uintptr_t)&pp_sig[0] - h.heap_base;
    uint64_t w[8] = {SHMEMX_DEV_OP_PUT_SIGNAL | (uint64_t)h.heap_seg << 8 |
                         (uint64_t)h.heap_seg << 12 | (uint64_t)SHMEMX_DEV_SIGNAL_SET << 16 |
                         (uint64_t)next << 24,
                     doff, (uint64_t)(uintptr_t)src, sizeof(src), soff, 777, 0, 0};
    int rc = shmemx_dev_quiet(mine);
    t_check(rc == 0, "torn: quiet returned %d", rc);
    struct shmemx_dev_chan *c = &mine.chan[0];
    uint64_t s = __atomic_fetch_add(&mine.claim[0].head, 1, __ATOMIC_ACQ_REL);
    t_check(s - __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE) < h.nslots, "torn: ring 0 not idle");
    struct shmemx_dev_desc *d = &h.ring[s & (h.nslots - 1)];
    uint64_t tag = (s / h.nslots) & 1 ? 0 : SHMEMX_DEV_TAG;
    w[7] = s;
    /* Which words to leave stale varies by PE: the last ones, the first ones, the middle one. */
    int from = me % 3 == 0 ? 0 : me % 3 == 1 ? 3 : 1;
    int to = me % 3 == 0 ? 5 : me % 3 == 1 ? 8 : 8;
    for (int i = from; i < to; i++) {
        if (!(me % 3 == 2 && i == 4)) {
            __atomic_store_n(&d->w[i], w[i] | tag, __ATOMIC_RELEASE);
        }
    }
    shmem_barrier_all(); /* everybody's torn descriptor is out */
    /* Keep the proxy busy on ring 1 meanwhile, so it looks at ring 0 in every round (an idle
     * proxy only wakes for a slot's first word). */
    shmemx_device_t other = h;
    other.channel = 1 % h.nchan;
    uint64_t busy = 0;
    for (int i = 0; i < 30; i++) {
        rc = shmemx_dev_put_signal(other, NULL, NULL, 0, &pp_sig[1], 1, SHMEMX_DEV_SIGNAL_ADD,
                                   me);
        t_check(rc == 0, "torn: busy signal returned %d", rc);
        sleep_ms(10);
    }
    busy = __atomic_load_n(&pp_sig[1], __ATOMIC_ACQUIRE);
    t_check(busy >= 30, "torn: %llu of the busy signals arrived", (unsigned long long)busy);
    uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE);
    t_check(tail == s, "torn: the proxy took a torn descriptor (tail %llu, slot %llu)",
            (unsigned long long)tail, (unsigned long long)s);
    uint64_t sig = __atomic_load_n(&pp_sig[0], __ATOMIC_ACQUIRE);
    shmem_barrier_all(); /* everybody looked before anyone completes */
    t_check(sig != 777, "torn: a torn descriptor's signal arrived");
    for (int i = 0; i < 8; i++) {
        __atomic_store_n(&d->w[i], w[i] | tag, __ATOMIC_RELEASE);
    }
    uint64_t seen = 0;
    rc = shmemx_dev_signal_wait_until(h, &pp_sig[0], SHMEMX_DEV_CMP_EQ, 777, &seen);
    t_check(rc == 0, "torn: wait returned %d", rc);
    t_verify(pp_dst, sizeof(src), prev, 4242, "torn: the completed descriptor's data from PE %d",
             prev);
    rc = shmemx_dev_quiet(mine);
    t_check(rc == 0, "torn: last quiet returned %d", rc);
}

/* ---- 5 ---- */
static void mapped(void)
{
    void **base = malloc(sizeof(void *) * (size_t)npes);
    int all = 1;
    for (int pe = 0; pe < npes; pe++) {
        base[pe] = shmem_ptr((void *)(uintptr_t)h.heap_base, pe);
        all = all && base[pe];
    }
    if (!all) {
        free(base);
        return; /* fabric configurations: nothing is mapped */
    }
    shmemx_device_t m = h;
    m.peer_base = base;
    m.win_base = h.heap_base;
    m.win_size = h.heap_size;
    m.win_seg = h.heap_seg;
    uint64_t desc_before = __atomic_load_n(&m.claim[0].head, __ATOMIC_ACQUIRE);
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    uint8_t *src = malloc(MAXLEN);
    shmem_barrier_all();
    for (int r = 0; r < 8; r++) {
        size_t len = pp_len[r];
        t_fill(src, len, me, salt_of(me, 55, r));
        int rc = shmemx_dev_put_signal_nbi(m, pp_dst, src, len, &pp_sig[0], 1000 + (uint64_t)r,
                                           SHMEMX_DEV_SIGNAL_SET, next);
        rc = rc ? rc : shmemx_dev_signal_wait_until(m, &pp_sig[0], SHMEMX_DEV_CMP_EQ,
                                                    1000 + (uint64_t)r, NULL);
        t_check(rc == 0, "mapped round %d: %d", r, rc);
        t_verify(pp_dst, len, prev, salt_of(prev, 55, r), "mapped round %d from PE %d", r, prev);
        rc = shmemx_dev_barrier_all(m);
        t_check(rc == 0, "mapped round %d: barrier %d", r, rc);
    }
    if (me == 0) {
        printf("  mapped: %d PEs reached through the mapping\n", npes);
    }
    t_check(__atomic_load_n(&m.claim[0].head, __ATOMIC_ACQUIRE) == desc_before,
            "mapped: descriptors were posted although every peer is mapped");
    free(src);
    free(base);
}

/* ---- 6 ---- */
static void idle_quiet(void)
{
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    long page = sysconf(_SC_PAGESIZE);
    void *none = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    t_check(none != MAP_FAILED, "idle quiet: mmap failed");
    if (none == MAP_FAILED) {
        return;
    }
    shmemx_device_t blind = h; /* any read of the proxy's words faults */
    blind.chan = none;
    blind.ring = none;
    blind.error = none;
    uint8_t src[256];
    for (int r = 0; r < 3; r++) {
        int rc = shmemx_dev_quiet_all(h);
        t_check(rc == 0, "idle quiet round %d: quiet_all returned %d", r, rc);
        for (int i = 0; i < 1000; i++) {
            rc = shmemx_dev_quiet(blind);
            rc = rc ? rc : shmemx_dev_quiet_all(blind);
            if (rc != 0) {
                t_check(0, "idle quiet round %d: blind quiet returned %d", r, rc);
                break;
            }
        }
        /* Something outstanding: the real handle's quiet must wait for it (the data is
         * checked at the target after the barrier). */
        t_fill(src, sizeof(src), me, salt_of(me, 66, r));
        rc = shmemx_dev_put_nbi(h, pp_dst, src, sizeof(src), next);
        rc = rc ? rc : shmemx_dev_quiet(h);
        t_check(rc == 0, "idle quiet round %d: put / quiet returned %d", r, rc);
        t_check(__atomic_load_n(&h.claim[0].done_seen, __ATOMIC_ACQUIRE) ==
                    __atomic_load_n(&h.claim[0].head, __ATOMIC_ACQUIRE),
                "idle quiet round %d: done seen %llu, head %llu", r,
                (unsigned long long)h.claim[0].done_seen, (unsigned long long)h.claim[0].head);
        shmem_barrier_all();
        t_verify(pp_dst, sizeof(src), prev, salt_of(prev, 66, r),
                 "idle quiet round %d: data from PE %d after its quiet", r, prev);
        shmem_barrier_all();
    }
    munmap(none, (size_t)page);
}

/* ---- 7 ---- */
static uint64_t co_value(int pe, int r, size_t i)
{
    return salt_of(pe, 77, r) * 2654435761u + i;
}

static void coalesce(void)
{
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    uint64_t *src = malloc(2 * CO_WORDS * sizeof(uint64_t));
    if (!t_check(src != NULL, "coalesce: no memory")) {
        return;
    }
    for (int r = 0; r < CO_ROUNDS; r++) {
        memset(co_gap, 0, 2 * CO_WORDS * sizeof(uint64_t));
        memset(co_src, 0, CO_WORDS * sizeof(uint64_t));
        for (size_t i = 0; i < 2 * CO_WORDS; i++) {
            src[i] = co_value(me, r, i);
        }
        shmem_barrier_all(); /* the gaps are zero everywhere before anyone puts */
        uint64_t d0, p0, d1, p1, d2, p2;
        shmemx_device_proxy_stats(&d0, &p0, NULL);
        int rc = 0;
        for (size_t i = 0; i + 1 < CO_WORDS && rc == 0; i++) {
            rc = shmemx_dev_put_nbi(h, &co_run[i], &src[i], 8, next);
        }
        rc = rc ? rc : shmemx_dev_put_signal_nbi(h, &co_run[CO_WORDS - 1], &src[CO_WORDS - 1], 8,
                                                 co_sig, (uint64_t)r + 1,
                                                 SHMEMX_DEV_SIGNAL_SET, next);
        rc = rc ? rc : shmemx_dev_quiet(h);
        shmemx_device_proxy_stats(&d1, &p1, NULL);
        for (size_t i = 0; i < CO_WORDS && rc == 0; i++) {
            rc = shmemx_dev_put_nbi(h, &co_gap[2 * i], &src[i], 8, next);
            rc = rc ? rc : shmemx_dev_put_nbi(h, &co_src[i], &src[2 * i], 8, next);
        }
        rc = rc ? rc : shmemx_dev_quiet(h);
        shmemx_device_proxy_stats(&d2, &p2, NULL);
        t_check(rc == 0, "coalesce round %d: puts returned %d", r, rc);
        t_check(d1 - d0 == CO_WORDS && p1 - p0 < d1 - d0,
                "coalesce round %d: %llu contiguous 8 B puts took %llu operations (merged: "
                "fewer)", r, (unsigned long long)(d1 - d0), (unsigned long long)(p1 - p0));
        t_check(d2 - d1 == 2 * CO_WORDS && p2 - p1 == d2 - d1,
                "coalesce round %d: %llu scattered puts took %llu operations (none may merge)",
                r, (unsigned long long)(d2 - d1), (unsigned long long)(p2 - p1));
        rc = shmemx_dev_signal_wait_until(h, co_sig, SHMEMX_DEV_CMP_EQ, (uint64_t)r + 1, NULL);
        t_check(rc == 0, "coalesce round %d: signal wait returned %d", r, rc);
        shmem_barrier_all(); /* every PE's puts quieted */
        size_t bad_run = 0, bad_gap = 0, bad_src = 0;
        for (size_t i = 0; i < CO_WORDS; i++) {
            bad_run += co_run[i] != co_value(prev, r, i);
            bad_gap += co_gap[2 * i] != co_value(prev, r, i) || co_gap[2 * i + 1] != 0;
            bad_src += co_src[i] != co_value(prev, r, 2 * i);
        }
        t_check(bad_run + bad_gap + bad_src == 0,
                "coalesce round %d from PE %d: %zu contiguous, %zu scattered-destination, %zu "
                "scattered-source words wrong", r, prev, bad_run, bad_gap, bad_src);
        if (me == 0 && r == 0) {
            printf("  coalesce: %d contiguous puts + put-with-signal in %llu operations; %d "
                   "scattered in %llu\n", CO_WORDS, (unsigned long long)(p1 - p0),
                   2 * CO_WORDS, (unsigned long long)(p2 - p1));
        }
        shmem_barrier_all();
    }
    free(src);
}

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    pp_dst = shmem_calloc(1, MAXLEN);
    pp_sig = shmem_calloc(2, sizeof(uint64_t));
    many_dst = shmem_calloc((size_t)npes * NPROD * K, SLOT);
    many_cnt = shmem_calloc((size_t)npes * NPROD, sizeof(uint64_t));
    bar_dst = shmem_calloc((size_t)npes, sizeof(uint64_t));
    big_dst = shmem_calloc(1, BIG);
    co_run = shmem_calloc(CO_WORDS, sizeof(uint64_t));
    co_gap = shmem_calloc(2 * CO_WORDS, sizeof(uint64_t));
    co_src = shmem_calloc(CO_WORDS, sizeof(uint64_t));
    co_sig = shmem_calloc(1, sizeof(uint64_t));
    if (shmemx_device_handle_host(&h) != 0) {
        t_check(0, "shmemx_device_handle_host failed");
        return t_finish(NAME);
    }
    t_check(h.pe == me && h.npes == npes && h.nchan >= 1 && h.nslots >= 2,
            "handle: pe %d npes %d nchan %d nslots %llu", h.pe, h.npes, h.nchan,
            (unsigned long long)h.nslots);
    pingpong();
    shmem_barrier_all();
    many();
    shmem_barrier_all();
    blocking_barrier();
    shmem_barrier_all();
    pp_sig[0] = 0;
    shmem_barrier_all();
    torn();
    shmem_barrier_all();
    mapped();
    shmem_barrier_all();
    idle_quiet();
    shmem_barrier_all();
    coalesce();
    shmem_barrier_all();
    t_check(__atomic_load_n(h.error, __ATOMIC_ACQUIRE) == 0, "the proxy's error word is %llx",
            (unsigned long long)*h.error);
    return t_finish(NAME);
}
