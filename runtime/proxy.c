/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proxy.c: the device API's CPU proxy. It owns the rings GPU threads write descriptors into
 * (include/shmemx_device.h says their format), the error word kernels check, and the thread
 * that drains the rings and posts what they ask for through the runtime's own put and
 * put-with-signal (rma.c, signal.c, the device heap's backend): no wire protocol of its own,
 * so a signal is applied only after its data landed on every fabric, efa-direct included.
 *
 * FABSHMEM_DEVICE_PROXIES threads (a worker each), started by the first shmemx_device_handle,
 * not hooks of the progress thread: the progress thread polls under the engine lock, where a
 * hook must not post, while a proxy posts as any application thread does under
 * SHMEM_THREAD_MULTIPLE (its own context, the lock contract of docs/architecture.md
 * unchanged: it holds no lock of its own while it calls the runtime). Ring c is drained by
 * worker c mod the thread count and by no other, so a ring's order and fences hold as with
 * one thread; each worker publishes its own rings' tail and done, so a quiet, which waits for
 * every ring it concerns to reach its head, needs no change (quiet_all covers rings of every
 * worker). Each binds itself to the PUs near the GPU (topology.c's set, inside the process's
 * binding; else it keeps the PE's binding) and is named fsh-proxy<i> (top -H, the tests).
 *
 * A round (per worker): take what each of its rings holds (up to ROUND descriptors per ring;
 * a ring's round ends after a fence), publish the rings' tails (the producers' credits), post
 * the round grouped by peer (stable, by counting: a peer's operations keep their order;
 * adjacent puts whose destinations and sources are contiguous merged into one, up to
 * MERGE_MAX bytes, and into a put-with-signal that continues them), quiet the worker's
 * context, then publish each of its rings' done count. So done covers only operations
 * complete at their targets, and a fence is a round boundary. With nothing to take it waits
 * in the engine's wait (polling the fabric for the signals kernels of this PE wait on; probing
 * peers as every wait does), until one of its rings has a descriptor or it is told to stop;
 * only worker 0 does so, the others look at their rings alone (one poller is enough, and idle
 * workers would otherwise take turns at the engine lock with the program's threads).
 *
 * Failure: an operation, quiet or wait that fails (a dead peer, a refused descriptor) stores
 * errno | (pe + 1) << 32 in the error word, logs the recorded cause naming the worker, and
 * halts every worker: none posts again (one that took descriptors after the halt drops them),
 * so kernels waiting on any ring or a signal see the word and return SHMEMX_DEV_EPROXY
 * instead of hanging.
 *
 * Never: it never writes a descriptor, never posts from a handler, and never touches a ring
 * slot it has not been given (tags of the lap it expects on all eight words).
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "proxy.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amo_op.h"
#include "backend.h"
#include "cuda.h"
#include "devmem.h"
#include "env.h"
#include "error.h"
#include "heap.h"
#include "log.h"
#include "mr.h"
#include "progress.h"
#include "rma.h"
#include "rt.h"
#include "signal.h"
#include "topology.h"

#define ROUND 256 /* descriptors taken from one ring per round */
#define MERGE_MAX (64 * 1024) /* the most bytes adjacent descriptors are merged into */

struct item {
    uint32_t op, pe, sig_op, idx;
    enum fsh_seg dseg, sseg;
    uint64_t doff, soff, len, value;
    const void *src;
};

/* One proxy thread: the rings it alone drains, its context, its round's buffers and counts.
 * Only its thread touches it between start and fini (the counts are read atomically). */
struct worker {
    unsigned id;
    pthread_t thread;
    struct fsh_ctx *ctx;
    unsigned nown;       /* rings it drains */
    unsigned *own;       /* their numbers: id, id + nproxy, ... */
    uint64_t *taken;     /* per ring of its own: the next slot to take */
    struct item *items;  /* the round as taken */
    struct item *sorted; /* the round grouped by peer */
    uint32_t *count;     /* npes + 1: the grouping's counts */
    uint64_t descs, posts, rounds; /* atomic: for the benchmark and tests */
};

static struct {
    long want_chan, want_slots, want_proxies;
    bool started, cuda;
    int stop;                     /* atomic: finalize; each worker ends after its round */
    int halt;                     /* atomic: a worker failed; nobody posts again */
    unsigned nproxy;              /* workers */
    struct worker *w;
    unsigned nchan;               /* rings per handle */
    unsigned nring;               /* rings: nchan, twice that with a GPU (GPU's, then host's) */
    uint64_t nslots;
    size_t bytes;
    uint8_t *mem, *dmem;          /* host and device addresses of the one block */
    struct shmemx_dev_chan *chan; /* host addresses */
    struct shmemx_dev_desc *ring;
    struct shmemx_dev_claim *claim; /* nring producer sides, host memory */
    struct shmemx_dev_claim *dclaim; /* the GPU handles' nchan, device memory, or NULL */
    uint64_t *depoch; /* the GPU handles' barrier epoch, after dclaim (device memory), or NULL */
    uint64_t *error, *epoch;
    void **peer_base;
    void **dpeer;                 /* peer_base copied to device memory (GPU handles), or NULL */
    uint64_t *barrier;
} px;

int fsh_proxy_init(const struct fsh_config *cfg)
{
    px.want_chan = cfg->FABSHMEM_DEVICE_CHANNELS;
    px.want_slots = cfg->FABSHMEM_DEVICE_RING;
    if (px.want_chan < 1 || px.want_chan > 64) {
        return fsh_err(-EINVAL, "set FABSHMEM_DEVICE_CHANNELS to 1..64",
                       "FABSHMEM_DEVICE_CHANNELS=%ld is out of range", px.want_chan);
    }
    px.want_proxies = cfg->FABSHMEM_DEVICE_PROXIES;
    if (px.want_proxies < 0 || px.want_proxies > px.want_chan) {
        return fsh_err(-EINVAL,
                       "set FABSHMEM_DEVICE_PROXIES to 0 (auto) or 1..FABSHMEM_DEVICE_CHANNELS "
                       "(a ring is drained by one thread), or raise FABSHMEM_DEVICE_CHANNELS",
                       "FABSHMEM_DEVICE_PROXIES=%ld with FABSHMEM_DEVICE_CHANNELS=%ld",
                       px.want_proxies, px.want_chan);
    }
    if (px.want_slots < 2 || px.want_slots > (1L << 20) || (px.want_slots & (px.want_slots - 1))) {
        return fsh_err(-EINVAL, "set FABSHMEM_DEVICE_RING to a power of two in 2..1048576",
                       "FABSHMEM_DEVICE_RING=%ld is not a power of two in range", px.want_slots);
    }
    return 0;
}

bool fsh_proxy_started(void)
{
    return px.started;
}

void fsh_proxy_stats(uint64_t *descs, uint64_t *posts, uint64_t *rounds)
{
    *descs = *posts = *rounds = 0;
    for (unsigned i = 0; px.started && i < px.nproxy; i++) {
        *descs += __atomic_load_n(&px.w[i].descs, __ATOMIC_RELAXED);
        *posts += __atomic_load_n(&px.w[i].posts, __ATOMIC_RELAXED);
        *rounds += __atomic_load_n(&px.w[i].rounds, __ATOMIC_RELAXED);
    }
}

static bool halted(void)
{
    return __atomic_load_n(&px.halt, __ATOMIC_ACQUIRE) != 0;
}

/* The error word: once, the first cause; and every worker halts. The halt is stored before
 * the word, so whoever sees the word (a producer about to post) finds the halt set by any
 * worker that takes what it posts next. */
static void fail(const struct worker *w, int rc, int pe)
{
    const struct fsh_error *e = fsh_err_last();
    char who[32] = "";
    if (pe >= 0) {
        snprintf(who, sizeof(who), ", to PE %d", pe);
    }
    uint64_t word = (uint64_t)(uint32_t)(-rc ? -rc : EIO) | (uint64_t)(uint32_t)(pe + 1) << 32;
    uint64_t zero = 0;
    __atomic_store_n(&px.halt, 1, __ATOMIC_SEQ_CST);
    if (__atomic_compare_exchange_n(px.error, &zero, word, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED)) {
        FSH_ERROR("device API proxy stops: %s (%s%s), in proxy thread %u of %u%s; kernels "
                  "waiting on its rings or on signals get SHMEMX_DEV_EPROXY",
                  e && e->code ? e->msg : "an operation failed", strerror(-rc), who, w->id,
                  px.nproxy, px.nproxy > 1 ? ", which stops every other" : "");
    } else {
        FSH_DEBUG("device API proxy stops: %s (%s%s), in proxy thread %u of %u too",
                  e && e->code ? e->msg : "an operation failed", strerror(-rc), who, w->id,
                  px.nproxy);
    }
}

/* Ring c's slot for sequence s. */
static const struct shmemx_dev_desc *slot(unsigned c, uint64_t s)
{
    return &px.ring[(uint64_t)c * px.nslots + (s & (px.nslots - 1))];
}

/* Is d the descriptor of sequence s: all eight words of s's lap, word 7 = s? Nothing is
 * copied out: decode reads the words again from the slot, which stays as it is until the
 * tail passes it (published after the take), so from L1. Copying them through an array made
 * the decoder's wide loads wait on eight narrow stores (a store-forwarding stall per
 * descriptor, a third of a proxy thread's time at full rate). */
static bool complete(const struct shmemx_dev_desc *d, uint64_t s)
{
    uint64_t tag = (s / px.nslots) & 1 ? 0 : SHMEMX_DEV_TAG;
    for (int i = 0; i < 7; i++) {
        if ((__atomic_load_n(&d->w[i], __ATOMIC_ACQUIRE) & SHMEMX_DEV_TAG) != tag) {
            return false;
        }
    }
    return __atomic_load_n(&d->w[7], __ATOMIC_ACQUIRE) == ((s & SHMEMX_DEV_PAYLOAD) | tag);
}

/* Word i of a complete descriptor, without its tag. */
static uint64_t word(const struct shmemx_dev_desc *d, int i)
{
    return __atomic_load_n(&d->w[i], __ATOMIC_RELAXED) & SHMEMX_DEV_PAYLOAD;
}

static bool seg_ok(uint64_t seg)
{
    return seg == FSH_SEG_HEAP || (seg == FSH_SEG_DEVICE && fsh_backend_segment(FSH_SEG_DEVICE));
}

/* Decode and check one descriptor: 0, or -EINVAL (recorded) for one no producer of the header
 * writes (a corrupted ring or a wrong handle). */
static int decode(const struct shmemx_dev_desc *d, unsigned c, uint64_t s, struct item *it)
{
    uint64_t w0 = word(d, 0);
    it->op = (uint32_t)(w0 & 0xff);
    it->dseg = (enum fsh_seg)((w0 >> 8) & 0xf);
    it->sseg = (enum fsh_seg)((w0 >> 12) & 0xf);
    it->sig_op = (uint32_t)((w0 >> 16) & 0xf);
    it->pe = (uint32_t)(w0 >> 24);
    it->doff = word(d, 1);
    it->src = (const void *)(uintptr_t)word(d, 2);
    it->len = word(d, 3);
    it->soff = word(d, 4);
    it->value = (word(d, 5) & 0xffffffffu) | word(d, 6) << 32;
    const char *bad = NULL;
    enum fsh_seg seg;
    uint64_t off;
    if (it->op == SHMEMX_DEV_OP_FENCE) {
        return 0;
    }
    if (it->op != SHMEMX_DEV_OP_PUT && it->op != SHMEMX_DEV_OP_PUT_SIGNAL) {
        bad = "unknown operation";
    } else if (it->pe >= (uint32_t)fsh_rt.npes) {
        bad = "PE out of range";
    } else if (it->len && (!seg_ok(it->dseg) ||
                           fsh_mr_lookup(fsh_mr_local_addr(it->dseg, it->doff), it->len, &seg,
                                         &off) != 0)) {
        bad = "destination outside the symmetric heaps";
    } else if (it->op == SHMEMX_DEV_OP_PUT_SIGNAL &&
               (!seg_ok(it->sseg) || it->soff % 8 ||
                it->sig_op > SHMEMX_DEV_SIGNAL_ADD ||
                fsh_mr_lookup(fsh_mr_local_addr(it->sseg, it->soff), 8, &seg, &off) != 0)) {
        bad = "bad signal word or operation";
    }
    if (bad) {
        return fsh_err(-EINVAL, "write descriptors only with shmemx_device.h's functions and "
                                "the handle of this PE",
                       "device API ring %u slot %llu: %s (op %u, PE %u, seg %u/%u, offset "
                       "%llu, length %llu)",
                       c, (unsigned long long)s, bad, it->op, it->pe, (unsigned)it->dseg,
                       (unsigned)it->sseg, (unsigned long long)it->doff,
                       (unsigned long long)it->len);
    }
    return 0;
}

/* Take what ring c (the worker's k-th) holds, up to room items (a fence ends the take).
 * Publishes the tail. */
static int take(struct worker *w, unsigned k, struct item *out, size_t room, size_t *n)
{
    unsigned c = w->own[k];
    uint64_t s = w->taken[k];
    *n = 0;
    while (*n < room && complete(slot(c, s), s)) {
        int rc = decode(slot(c, s), c, s, &out[*n]);
        if (rc != 0) {
            return rc;
        }
        s++;
        if (out[(*n)++].op == SHMEMX_DEV_OP_FENCE) {
            break;
        }
    }
    if (*n) {
        w->taken[k] = s;
        __atomic_store_n(&px.chan[c].tail, s, __ATOMIC_RELEASE);
    }
    return 0;
}

static int by_peer(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->pe != y->pe) {
        return x->pe < y->pe ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The round grouped by peer, each peer's items in the order taken. Most rounds need nothing
 * (a ring's burst to one peer, or already in peer order); else a counting sort, O(n + npes),
 * where the PEs are not many more than the items; qsort only beyond. (qsort was a third of a
 * proxy thread's time at full rate: a merge sort through a comparison call per step.) */
static struct item *group(struct worker *w, size_t n)
{
    struct item *it = w->items;
    size_t i = 1;
    while (i < n && it[i].pe >= it[i - 1].pe) {
        i++;
    }
    if (i >= n) {
        return it;
    }
    size_t npes = (size_t)fsh_rt.npes;
    if (npes > 4 * n + 256) {
        for (size_t j = 0; j < n; j++) {
            it[j].idx = (uint32_t)j;
        }
        qsort(it, n, sizeof(it[0]), by_peer);
        return it;
    }
    uint32_t *cnt = w->count;
    memset(cnt, 0, (npes + 1) * sizeof(cnt[0]));
    for (size_t j = 0; j < n; j++) {
        cnt[it[j].pe + 1]++;
    }
    for (size_t p = 1; p <= npes; p++) {
        cnt[p] += cnt[p - 1];
    }
    for (size_t j = 0; j < n; j++) {
        w->sorted[cnt[it[j].pe]++] = it[j];
    }
    return w->sorted;
}

/* One descriptor, through the same calls the host API makes for it (api.c). */
static int post(struct fsh_ctx *ctx, const struct item *it)
{
    int pe = (int)it->pe;
    size_t len = it->len;
    if (it->op == SHMEMX_DEV_OP_FENCE) {
        return 0;
    }
    if (it->op == SHMEMX_DEV_OP_PUT) {
        if (fsh_backend_involved(it->dseg, it->src)) {
            return fsh_backend_put(ctx, it->dseg, it->doff, it->src, len, pe);
        }
        return fsh_rma_put(ctx, it->dseg, it->doff, it->src, len, pe, true);
    }
    int op = it->sig_op == SHMEMX_DEV_SIGNAL_ADD ? FSH_AMO_ADD : FSH_AMO_SET;
    int rc = 0;
    if (it->sseg == FSH_SEG_DEVICE) {
        /* A device signal word: the data complete first, then the word as a device atomic. */
        if (len && fsh_backend_involved(it->dseg, it->src)) {
            rc = fsh_backend_put(ctx, it->dseg, it->doff, it->src, len, pe);
        } else if (len) {
            rc = fsh_rma_put(ctx, it->dseg, it->doff, it->src, len, pe, false);
            rc = rc ? rc : fsh_rma_quiet(ctx);
        }
        return rc ? rc : fsh_backend_amo(op, it->soff, &it->value, NULL, NULL, 8, pe);
    }
    if (len && fsh_backend_involved(it->dseg, it->src)) {
        rc = fsh_backend_put(ctx, it->dseg, it->doff, it->src, len, pe);
        len = 0;
    }
    return rc ? rc
              : fsh_signal_put(ctx, it->dseg, it->doff, it->src, len, it->sseg, it->soff,
                               it->value, (int)it->sig_op, pe, true);
}

/* What kind of memory a source is, for merging: pieces of one put must agree (the backend's
 * device memory or not; one symmetric segment, or none). */
static int src_kind(const struct item *it)
{
    enum fsh_seg seg;
    uint64_t off;
    int sym = fsh_mr_lookup(it->src, it->len, &seg, &off) == 0 ? 1 + (int)seg : 0;
    return sym * 2 + (fsh_backend_involved(it->dseg, it->src) ? 1 : 0);
}

/* Can b's data continue m's (a PUT, merged so far) in one operation? Same peer and
 * destination segment, the destination and the source both contiguous, sources of one kind,
 * at most MERGE_MAX bytes in all. b is a PUT or a PUT_SIGNAL with data (whose signal then
 * follows all of it, as a put-with-signal's does). *kind: m's source kind, found on the first
 * pair that is contiguous (-1 until then): scattered puts, which never merge, pay no lookup. */
static bool joins(const struct item *m, int *kind, const struct item *b)
{
    if (!(b->pe == m->pe && (b->op == SHMEMX_DEV_OP_PUT || b->op == SHMEMX_DEV_OP_PUT_SIGNAL) &&
          b->len > 0 && b->dseg == m->dseg && m->len + b->len <= MERGE_MAX &&
          m->doff + m->len == b->doff && (const char *)m->src + m->len == (const char *)b->src)) {
        return false;
    }
    if (*kind < 0) {
        *kind = src_kind(m);
    }
    return src_kind(b) == *kind;
}

/* Post items[i..], merging a run of contiguous PUTs (ended by a PUT_SIGNAL that continues
 * them, if any) into one operation; *next: the first item not posted. Merging changes no
 * promise: the round's operations are unordered until its quiet anyway (a fence ends a
 * round), and done is published only after that quiet. */
static int post_run(struct fsh_ctx *ctx, const struct item *items, size_t i, size_t n,
                    size_t *next)
{
    struct item m = items[i];
    size_t j = i + 1;
    if (m.op == SHMEMX_DEV_OP_PUT && m.len > 0 && m.len < MERGE_MAX && j < n &&
        items[j].pe == m.pe) {
        int kind = -1;
        while (j < n && m.op == SHMEMX_DEV_OP_PUT && joins(&m, &kind, &items[j])) {
            const struct item *b = &items[j++];
            m.len += b->len;
            if (b->op == SHMEMX_DEV_OP_PUT_SIGNAL) {
                m.op = b->op;
                m.sseg = b->sseg;
                m.soff = b->soff;
                m.sig_op = b->sig_op;
                m.value = b->value;
            }
        }
    }
    *next = j;
    return post(ctx, &m);
}

/* One round of worker w; *took: descriptors taken. */
static int round_once(struct worker *w, size_t *took)
{
    size_t n = 0;
    for (unsigned k = 0; k < w->nown; k++) {
        size_t got;
        int rc = take(w, k, w->items + n, ROUND, &got);
        if (rc != 0) {
            fail(w, rc, -1);
            return rc;
        }
        n += got;
    }
    *took = n;
    if (n == 0) {
        return 0;
    }
    if (halted()) {
        return -ECANCELED; /* another worker failed: what was taken is never posted */
    }
    const struct item *items = group(w, n);
    uint64_t posts = 0;
    for (size_t i = 0, next; i < n; i = next, posts++) {
        int rc = post_run(w->ctx, items, i, n, &next);
        if (rc != 0) {
            fail(w, rc, (int)items[i].pe);
            return rc;
        }
    }
    int rc = fsh_rma_quiet(w->ctx);
    if (rc != 0) {
        fail(w, rc, -1);
        return rc;
    }
    /* Counted before done is published: a quiet that saw done (acquire) sees the counts. */
    __atomic_add_fetch(&w->descs, n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&w->posts, posts, __ATOMIC_RELAXED);
    __atomic_add_fetch(&w->rounds, 1, __ATOMIC_RELAXED);
    for (unsigned k = 0; k < w->nown; k++) {
        __atomic_store_n(&px.chan[w->own[k]].done, w->taken[k], __ATOMIC_RELEASE);
    }
    return 0;
}

/* The idle wait's end: one of w's rings has its next descriptor's first word, or stop. */
static bool work_or_stop(const void *arg)
{
    const struct worker *w = arg;
    if (__atomic_load_n(&px.stop, __ATOMIC_ACQUIRE) || halted()) {
        return true;
    }
    for (unsigned k = 0; k < w->nown; k++) {
        unsigned c = w->own[k];
        uint64_t s = w->taken[k];
        uint64_t tag = (s / px.nslots) & 1 ? 0 : SHMEMX_DEV_TAG;
        if ((__atomic_load_n(&slot(c, s)->w[0], __ATOMIC_ACQUIRE) & SHMEMX_DEV_TAG) == tag) {
            return true;
        }
    }
    /* Nothing yet: let the CPU go. A proxy may share a core with the program's host thread
     * (or, in the tests, with the CPU producers it waits for); where the core is its own,
     * sched_yield returns at once. */
    sched_yield();
    return false;
}

static void *proxy_main(void *arg)
{
    struct worker *w = arg;
    char where[192];
    fsh_topo_bind_thread_near(where, sizeof(where));
    FSH_DEBUG("device API proxy thread %u of %u: %u ring(s) from %u, PUs %s", w->id, px.nproxy,
              w->nown, w->own[0], where);
    while (!__atomic_load_n(&px.stop, __ATOMIC_ACQUIRE) && !halted()) {
        size_t took = 0;
        if (round_once(w, &took) != 0) {
            break;
        }
        if (took) {
            continue;
        }
        if (w->id > 0) {
            /* One idle proxy polling the fabric (thread 0, for the signals kernels wait on
             * and the peers' probes) is enough: the others look at their rings only, and
             * leave the engine lock to the program's threads. */
            while (!work_or_stop(w)) {
            }
            continue;
        }
        int rc = fsh_progress_wait_watched(work_or_stop, w,
                                           "device API proxy: waiting for descriptors", NULL, 0);
        if (rc == -ETIMEDOUT) {
            fsh_err_clear(); /* FABSHMEM_WAIT_TIMEOUT bounds user waits, not an idle proxy */
            continue;
        }
        if (rc != 0 && !__atomic_load_n(&px.stop, __ATOMIC_ACQUIRE) && !halted()) {
            fail(w, rc, -1);
            break;
        }
    }
    return NULL;
}

static void free_workers(void)
{
    for (unsigned i = 0; px.w && i < px.nproxy; i++) {
        struct worker *w = &px.w[i];
        free(w->own);
        free(w->taken);
        free(w->items);
        free(w->sorted);
        free(w->count);
    }
    free(px.w);
    px.w = NULL;
}

/* How many workers: the setting, or auto: one per 3 cores of the PE's share near its GPU
 * (the others stay the program's host thread's, the progress thread's and the launches'),
 * 1..4 (UCCL-EP's count per GPU; 4 threads at >= 5 M descriptors/s each pass what a GPU's
 * NICs take in small messages), at most one per channel. 1 where the share is unknown. */
static unsigned proxies_wanted(void)
{
    long n = px.want_proxies;
    if (n == 0) {
        n = fsh_topo_near_cores() / 3;
        n = n < 1 ? 1 : n > 4 ? 4 : n;
    }
    return (unsigned)(n > (long)px.nchan ? (long)px.nchan : n);
}

/* The workers and their rings: ring c to worker c mod the count. */
static int alloc_workers(void)
{
    px.nproxy = proxies_wanted();
    px.w = calloc(px.nproxy, sizeof(px.w[0]));
    if (!px.w) {
        return -ENOMEM;
    }
    for (unsigned i = 0; i < px.nproxy; i++) {
        struct worker *w = &px.w[i];
        w->id = i;
        w->nown = (px.nring - i + px.nproxy - 1) / px.nproxy;
        w->own = calloc(w->nown, sizeof(w->own[0]));
        w->taken = calloc(w->nown, sizeof(w->taken[0]));
        w->items = calloc((size_t)w->nown * ROUND, sizeof(w->items[0]));
        w->sorted = calloc((size_t)w->nown * ROUND, sizeof(w->sorted[0]));
        w->count = calloc((size_t)fsh_rt.npes + 1, sizeof(w->count[0]));
        if (!w->own || !w->taken || !w->items || !w->sorted || !w->count) {
            return -ENOMEM;
        }
        for (unsigned k = 0; k < w->nown; k++) {
            w->own[k] = i + k * px.nproxy;
        }
    }
    return 0;
}

/* Stop and join the first n workers, destroy their contexts. */
static void stop_workers(unsigned n)
{
    __atomic_store_n(&px.stop, 1, __ATOMIC_RELEASE);
    for (unsigned i = 0; i < n; i++) {
        pthread_join(px.w[i].thread, NULL);
    }
    for (unsigned i = 0; i < px.nproxy; i++) {
        if (px.w[i].ctx) {
            fsh_rma_ctx_destroy(px.w[i].ctx);
            px.w[i].ctx = NULL;
        }
    }
}

static void free_block(void)
{
    if (px.cuda) {
        fsh_cuda_free(px.dpeer);
        fsh_cuda_free(px.dclaim);
        fsh_cuda_host_free(px.mem);
    } else {
        free(px.mem);
    }
    free_workers();
    px.mem = px.dmem = NULL;
    px.dpeer = NULL;
    px.dclaim = NULL;
    px.depoch = NULL;
}

int fsh_proxy_start(uint64_t *barrier)
{
    if (px.started) {
        return 0;
    }
    px.nchan = (unsigned)px.want_chan;
    px.nslots = (uint64_t)px.want_slots;
    px.cuda = fsh_cuda_ready();
    /* A GPU handle claims slots in device memory, which CPU threads cannot reach: so host
     * handles get rings of their own (never two claim counters for one ring). */
    px.nring = px.cuda ? 2 * px.nchan : px.nchan;
    size_t chans = px.nring * sizeof(struct shmemx_dev_chan);
    size_t ring = px.nring * px.nslots * sizeof(struct shmemx_dev_desc);
    size_t claims = px.nring * sizeof(struct shmemx_dev_claim);
    size_t words = 2 * 64; /* error, the host handles' epoch: a cache line each */
    px.bytes = chans + ring + claims + words + (size_t)fsh_rt.npes * sizeof(void *);
    if (px.cuda) {
        void *d = NULL;
        px.mem = fsh_cuda_host_alloc(px.bytes, &d);
        px.dmem = d;
    } else {
        /* No GPU open: the rings serve CPU producers only (the tests, the benchmark). */
        px.mem = aligned_alloc(64, (px.bytes + 63) & ~(size_t)63);
        px.dmem = px.mem;
        if (px.mem) {
            memset(px.mem, 0, px.bytes);
        } else {
            fsh_err(-ENOMEM, "lower FABSHMEM_DEVICE_RING or FABSHMEM_DEVICE_CHANNELS",
                    "device API rings: %zu bytes", px.bytes);
        }
    }
    int wrc = px.mem ? alloc_workers() : 0;
    if (!px.mem || wrc != 0) {
        free_block();
        return fsh_err_last() && fsh_err_last()->code
                   ? fsh_err_last()->code
                   : fsh_err(-ENOMEM, "free host memory", "device API proxy state");
    }
    px.chan = (struct shmemx_dev_chan *)px.mem;
    px.ring = (struct shmemx_dev_desc *)(px.mem + chans);
    px.claim = (struct shmemx_dev_claim *)(px.mem + chans + ring);
    px.error = (uint64_t *)(px.mem + chans + ring + claims);
    px.epoch = (uint64_t *)(px.mem + chans + ring + claims + 64);
    px.peer_base = (void **)(px.mem + chans + ring + claims + words);
    for (int pe = 0; pe < fsh_rt.npes; pe++) {
        px.peer_base[pe] = fsh_dev_peer_base(pe);
    }
    if (px.cuda) {
        /* A kernel reads its peer's entry on every put: from device memory that is an L2
         * hit, from the host-mapped block a PCIe round trip (about a microsecond). The
         * mapping is fixed after start, so a copy taken now stays true. The same for the
         * claim counters a kernel adds to and the completions it last saw, and for the
         * device barrier's epoch, which only the barrier's thread reads and writes (zeroed:
         * a line after the claims). */
        size_t len = (size_t)fsh_rt.npes * sizeof(void *);
        size_t clen = px.nchan * sizeof(struct shmemx_dev_claim) + 64;
        px.dpeer = fsh_cuda_alloc(len);
        px.dclaim = fsh_cuda_alloc(clen);
        px.depoch = px.dclaim ? (uint64_t *)(px.dclaim + px.nchan) : NULL;
        int crc = px.dpeer && px.dclaim ? fsh_cuda_copy(px.dpeer, px.peer_base, len) : -ENOMEM;
        crc = crc ? crc : fsh_cuda_memset(px.dclaim, 0, clen);
        if (crc != 0) {
            free_block();
            return fsh_err(crc, "free some GPU memory",
                           "device API: the peer table, ring claims and barrier epoch in device "
                           "memory (%zu bytes)",
                           len + clen);
        }
    }
    px.barrier = barrier;
    int rc = 0;
    for (unsigned i = 0; i < px.nproxy && rc == 0; i++) {
        rc = fsh_rma_ctx_create(0, NULL, NULL, &px.w[i].ctx);
    }
    if (rc != 0) {
        stop_workers(0);
        free_block();
        return rc;
    }
    /* The proxy posts beside the program's threads: the engine lock becomes real, and
     * injected writes get records (as under SHMEM_THREAD_MULTIPLE: a write counter drains
     * only while nobody posts). */
    fsh_progress_enable_locking();
    if (fsh_progress_counts_writes()) {
        fsh_progress_stop_counting_writes();
    }
    __atomic_store_n(&px.stop, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&px.halt, 0, __ATOMIC_RELEASE);
    for (unsigned i = 0; i < px.nproxy; i++) {
        rc = pthread_create(&px.w[i].thread, NULL, proxy_main, &px.w[i]);
        if (rc != 0) {
            stop_workers(i);
            free_block();
            return fsh_err(-rc, "raise the process's thread limit or lower FABSHMEM_DEVICE_PROXIES",
                           "device API proxy thread %u of %u: %s", i, px.nproxy, strerror(rc));
        }
        char name[16]; /* named before start returns, so a program sees them all */
        snprintf(name, sizeof(name), "fsh-proxy%u", i % 64);
        pthread_setname_np(px.w[i].thread, name);
    }
    px.started = true;
    FSH_DEBUG("device API proxy: %u ring(s) of %llu descriptors, %s memory, %u thread(s)",
              px.nring, (unsigned long long)px.nslots, px.cuda ? "host-mapped" : "host",
              px.nproxy);
    return 0;
}

void fsh_proxy_handle(shmemx_device_t *h, bool host)
{
    uint8_t *base = host || !px.cuda ? px.mem : px.dmem;
    memset(h, 0, sizeof(*h));
    h->pe = fsh_rt.pe;
    h->npes = fsh_rt.npes;
    h->nchan = (int)px.nchan;
    h->channel = host ? 0 : -1;
    h->nslots = px.nslots;
    /* With a GPU the host handle's rings are the second nchan (host addresses). */
    unsigned first = host && px.cuda ? px.nchan : 0;
    h->chan = (struct shmemx_dev_chan *)(base + ((uint8_t *)px.chan - px.mem)) + first;
    h->ring = (struct shmemx_dev_desc *)(base + ((uint8_t *)px.ring - px.mem)) +
              (uint64_t)first * px.nslots;
    h->claim = host || !px.cuda ? px.claim + first : px.dclaim;
    h->error = (const uint64_t *)(base + ((uint8_t *)px.error - px.mem));
    h->epoch = host || !px.cuda ? px.epoch : px.depoch;
    h->peer_base = host || !px.cuda
                       ? (void *const *)(base + ((uint8_t *)px.peer_base - px.mem))
                       : (void *const *)px.dpeer;
    h->win_base = (uint64_t)(uintptr_t)fsh_dev_peer_base(fsh_rt.pe);
    h->win_size = h->win_base ? fsh_dev_heap_size() : 0;
    h->win_seg = FSH_SEG_DEVICE;
    h->heap_seg = FSH_SEG_HEAP;
    struct fsh_heap_stats st;
    fsh_heap_stats(&st);
    h->heap_base = (uint64_t)(uintptr_t)fsh_mr_local_addr(FSH_SEG_HEAP, 0);
    h->heap_size = st.size;
    h->barrier = px.barrier;
}

void fsh_proxy_fini(void)
{
    if (!px.started) {
        return;
    }
    stop_workers(px.nproxy);
    free_block();
    px.started = false;
    px.nproxy = 0;
}
