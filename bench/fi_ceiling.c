/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_ceiling: what the fabric itself delivers, measured with raw libfabric on the provider and
 * domain fabshmem would open, so fabshmem's figures can be read as a fraction of it. Also the
 * single-core memcpy bandwidth, the ceiling of any on-node copy.
 *
 *   mpirun -n 2 -x FI_PROVIDER=shm ./bench/fi_ceiling [-b 8] [-e 1M] [--csv]
 *
 * Rank 0 is active, rank 1 passive (it only drives progress, as a manual-progress provider needs
 * from a target). The endpoint is asked with the runtime's own fi_getinfo hints
 * (fsh_fabric_getinfo: RDM, RMA caps, FI_DELIVERY_COMPLETE when the provider has it, the
 * registration modes EFA needs offered and obeyed); the provider is FABSHMEM_PROVIDER or
 * FI_PROVIDER, else the first of the runtime's default order that answers. Addresses, keys and
 * buffer bases go through the runtime's PMIx bootstrap (fsh_boot_allgather). Tests:
 *   fi_write_lat      fi_write + wait for its completion        (ceiling of put_lat)
 * (Writes go as fabshmem posts puts: fi_writemsg with FI_INJECT up to the provider's inject
 * size, a completion always requested, FI_DELIVERY_COMPLETE where the provider offers it.)
 *   fi_copy_post_lat  memcpy of size bytes from private memory into the registered buffer,
 *                     then fi_write from there, timed until the post returns (the completion
 *                     is reaped outside the timing): what a blocking put that copies its
 *                     source into a bounce slot needs at least   (ceiling of put_ret)
 *   fi_read_lat       fi_read + wait for its completion         (ceiling of get_lat)
 *   fi_writedata_lat  ping-pong of fi_writedata, the target seeing the immediate data in its CQ:
 *                     half a round trip                         (ceiling of put_signal_lat)
 *   fi_write_bw       rounds of WINDOW fi_write, then every completion: MB/s (ceiling of put_bw)
 *   fi_write_rate     the same in messages: Mmsg/s              (ceiling of put_rate)
 *   fi_inject_write_rate  rounds of WINDOW injected writes without completion entries, then a
 *                     write counter reaching them all: Mmsg/s, sizes up to the inject size
 *                     (the best legal small-put rate: how SOS counts its puts). Posted as
 *                     fi_writemsg(FI_INJECT) at the endpoint's completion level, with the CQ
 *                     bound FI_SELECTIVE_COMPLETION: fi_inject_write itself takes the
 *                     endpoint's default level, and on shm (1.17) that sends it by
 *                     process_vm_writev, at 0.4 Mmsg/s against 1.05 this way
 *   fi_inject_flush_rate  rounds of WINDOW injected writes (transmit complete, no completion
 *                     entry), then ONE flush that completes only when they have all landed:
 *                     Mmsg/s over the window, the flush included, sizes up to the inject size
 *                     (the best legal put_rate: WINDOW nbi puts + quiet). The flush, by the
 *                     ordering the endpoint reports (tx_attr->msg_order): with FI_ORDER_WAW and
 *                     FI_DELIVERY_COMPLETE, one delivery-complete 8-byte write; else with
 *                     FI_ORDER_RAW one 8-byte fi_read; else no one operation can flush, and the
 *                     stream is posted delivery-complete and waited for on the write counter
 *                     (the section's title names which)
 *   fi_inject_flush_lat  one injected write + the same flush, until the flush completes
 *                     (the best legal put_lat, put + quiet, up to the inject size)
 *   fi_fetch_atomic_rate  rounds of WINDOW fetching atomics (FI_BXOR on one uint64 word,
 *                     each with its completion), then every completion: Mops/s; a non-fetching
 *                     AMO posted as a fetching one so that its completion means applied
 *                     (ceiling of amo's add_rate and gups_rate on the fetching way)
 *   fi_inject_atomic_flush_rate  rounds of WINDOW injected plain atomics (FI_BXOR on one uint64
 *                     word, transmit complete, no completion entry, counted by the write
 *                     counter), then ONE fetching atomic read of that word, which the provider
 *                     orders after them (FI_ORDER_ATOMIC_RAW, or FI_ORDER_RAW, in tx and rx
 *                     msg_order) and which completes only once applied: Mops/s over the window,
 *                     the flush included (the best legal add_rate/gups_rate: WINDOW
 *                     non-fetching AMOs + quiet). n/a without that order. Both atomic rows
 *                     need an endpoint with FI_ATOMIC (asked first, as fabshmem does); the
 *                     target checks its word after an out-of-band fence (#wrong)
 *   memcpy_bw         rounds of WINDOW memcpy of size bytes, one core: MB/s
 *   cuda_h2d_bw       with FABSHMEM_DEVICE_HEAP_SIZE set and a GPU: rounds of WINDOW driver
 *                     copies host -> GPU from page-locked memory, each complete on return, as
 *                     the target of a staged put copies (ceiling of rma's device target on the
 *                     staging path); the driver is FABSHMEM_CUDA_LIB, else libcuda.so.1
 *   cuda_d2d_bw       the same rounds of driver copies GPU -> GPU between two buffers of this
 *                     rank's GPU, each complete on return: the copy a put between two device
 *                     heaps of one GPU (or one node, mapped) cannot beat (ceiling of rma's
 *                     devdev target)
 * The last write of each size carries a pattern that rank 1 checks (#wrong).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bootstrap.h"
#include "cuda.h"
#include "fabric.h"
#include "progress.h"

#define ADDR_MAX 240
#define DONE UINT64_C(0xd0e0000000000000) /* immediate data that ends a passive phase */

/* What each rank publishes. */
struct card {
    uint8_t addr[ADDR_MAX];
    uint64_t addrlen, base, key;
    char host[64];
};

static const struct bench_desc desc = {
    .name = "fi_ceiling",
    .tests = "fi_write_lat,fi_copy_post_lat,fi_read_lat,fi_writedata_lat,fi_write_bw,fi_write_rate,"
             "fi_inject_write_rate,fi_inject_flush_rate,fi_inject_flush_lat,fi_fetch_atomic_rate,"
             "fi_inject_atomic_flush_rate,memcpy_bw,cuda_h2d_bw,"
             "cuda_d2d_bw",
    .targets = "",
    .defaults = "",
};

static struct {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_cntr *cntr;   /* completed writes, injected ones included (NULL: no counters) */
    uint64_t writes;         /* writes posted, to compare with it */
    struct fid_mr *mr;
    void *desc;
    uint8_t *buf; /* [0, max): local source/sink; [max, 2 max): what peers write and read;
                   * then a local and a remote control word, then the word flushes write and
                   * read (FLUSH_OFF) */
    uint8_t *src; /* [0, max): private (unregistered) memory, fi_copy_post_lat's source */
    size_t max;
    struct fi_context2 *ctx; /* one per operation in flight (the hints ask FI_CONTEXT2) */
    int window;
    uint64_t remote_base, remote_key;
    fi_addr_t peer;
    long pending;            /* my operations not yet completed */
    uint64_t last_data;      /* the immediate data of the last remote event */
    long remote_events;
    uint64_t write_flags;    /* FI_COMPLETION, and FI_DELIVERY_COMPLETE when the provider has it */
    size_t inject_size;
    int flush;               /* how fi_inject_flush_* complete the stream: FLUSH_* */
    bool atomics;            /* the endpoint has FI_ATOMIC */
    bool atomic_raw;         /* ... and orders an atomic fetch after atomic updates */
} F;

enum { FLUSH_WRITE, FLUSH_READ, FLUSH_COUNTER };
static const char *const flush_name[] = {
    "one delivery-complete 8-byte write (the provider orders WAW)",
    "one 8-byte fi_read (the provider orders RAW, no delivery-complete write after writes)",
    "no ordered flush (neither WAW with delivery complete nor RAW): delivery-complete injects "
    "waited for on the write counter",
    "no ordered flush (neither WAW with delivery complete nor RAW) and no delivery complete: "
    "injects waited for on the write counter, which counts writes that LEFT, not landed (not a "
    "legal quiet)",
};
#define BUF_EXTRA 64 /* past 2 max: control words, the flush word, the atomics' words */
#define FLUSH_OFF(max) (2 * (max) + 16)   /* the flush word: written and read by flushes */
#define ATOMIC_OFF(max) (2 * (max) + 32)  /* the atomics' target word; + 8: operand, + 16:
                                           * result */

static struct bench_opts opts;
static double *samples;
static int rank, npes;

static void __attribute__((noreturn)) die(const char *what, int rc)
{
    fprintf(stderr, "fi_ceiling: rank %d: %s: %s\n", rank, what, fi_strerror(-rc));
    fsh_boot_abort(1, "fi_ceiling failed");
}

/* Reads the CQ once: my completions (their context is one of mine) lower `pending`; anything
 * else is a remote event carrying immediate data. Classified by context, never by flags (tcp's
 * rxm and sockets flag completions differently). */
static int poll_cq(void)
{
    struct fi_cq_data_entry e[16];
    ssize_t n = fi_cq_read(F.cq, e, 16);
    if (n == -FI_EAGAIN) {
        return 0;
    }
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        fi_cq_readerr(F.cq, &err, 0);
        fprintf(stderr, "fi_ceiling: rank %d: completion error: %s (%s)\n", rank,
                fi_strerror(err.err),
                fi_cq_strerror(F.cq, err.prov_errno, err.err_data, NULL, 0));
        fsh_boot_abort(1, "fi_ceiling failed");
    }
    if (n < 0) {
        die("fi_cq_read", (int)n);
    }
    for (ssize_t i = 0; i < n; i++) {
        struct fi_context2 *c = e[i].op_context;
        if (c && c >= F.ctx && c < F.ctx + F.window) {
            F.pending--;
        } else {
            F.last_data = e[i].data;
            F.remote_events++;
        }
    }
    return (int)n;
}

/* The passive rank's progress. An empty poll yields the core only when the node has more
 * ranks than cores, and first pauses about FABSHMEM_POLL_GAP_NS nanoseconds (gap_relax CPU
 * spin-wait hints; 0, the default: none): the rules of fabshmem's waits with nothing of their
 * own in flight (FABSHMEM_YIELD=auto, progress.c), so both sides of a comparison wait the same
 * way. */
static int yield_when_idle;
static unsigned gap_relax;

static void serve(void)
{
    if (poll_cq() == 0) {
        for (unsigned i = 0; i < gap_relax; i++) {
            fsh_cpu_relax();
        }
        if (yield_when_idle) {
            sched_yield();
        }
    }
}

/* Posts one operation (0 write, 1 read, 2 writedata with data, 3 a control message: writedata
 * of 8 bytes to the peer's control word) from local offset to the peer's remote area, retrying
 * on EAGAIN with progress. */
static void post(int kind, size_t off, size_t len, uint64_t data, int slot)
{
    ssize_t rc;
    uint64_t raddr = F.remote_base + F.max + off;
    if (kind == 3) { /* a control message: 8 bytes into the peer's control word, after the data */
        kind = 2;
        off = 2 * F.max;
        len = 8;
        raddr = F.remote_base + 2 * F.max + 8;
    }
    for (;;) {
        if (kind == 1) {
            struct iovec iov = {.iov_base = F.buf + off, .iov_len = len};
            struct fi_rma_iov riov = {.addr = raddr, .len = len, .key = F.remote_key};
            struct fi_msg_rma m = {.msg_iov = &iov, .desc = &F.desc, .iov_count = 1,
                                   .addr = F.peer, .rma_iov = &riov, .rma_iov_count = 1,
                                   .context = &F.ctx[slot]};
            rc = fi_readmsg(F.ep, &m, F.write_flags);
        } else {
            /* as fabshmem posts a put: injected up to the provider's inject size, still with a
             * completion (delivery complete where offered) */
            struct iovec iov = {.iov_base = F.buf + off, .iov_len = len};
            void *ldesc = F.desc;
            struct fi_rma_iov riov = {.addr = raddr, .len = len, .key = F.remote_key};
            struct fi_msg_rma m = {.msg_iov = &iov, .desc = &ldesc, .iov_count = 1,
                                   .addr = F.peer, .rma_iov = &riov, .rma_iov_count = 1,
                                   .context = &F.ctx[slot], .data = data};
            /* writedata as fabshmem posts it: transmit-complete, the target's event is what
             * says it landed */
            uint64_t flags = (kind == 2 ? (F.write_flags & ~(uint64_t)FI_DELIVERY_COMPLETE) |
                                              FI_REMOTE_CQ_DATA
                                        : F.write_flags) |
                             (len <= F.inject_size ? FI_INJECT : 0);
            rc = fi_writemsg(F.ep, &m, flags);
        }
        if (rc == 0) {
            F.pending++;
            F.writes += kind != 1;
            return;
        }
        if (rc != -FI_EAGAIN) {
            die(kind == 1 ? "fi_read" : "fi_writemsg", (int)rc);
        }
        poll_cq();
    }
}

static void wait_pending(void)
{
    while (F.pending > 0) {
        poll_cq();
    }
}

/* An injected write of [0, len) to the peer's remote area, with no completion entry (the write
 * counter counts it); EAGAIN retried with progress. */
static void inject_flags(size_t len, uint64_t flags)
{
    for (;;) {
        struct iovec iov = {.iov_base = F.buf, .iov_len = len};
        struct fi_rma_iov riov = {.addr = F.remote_base + F.max, .len = len, .key = F.remote_key};
        struct fi_msg_rma m = {.msg_iov = &iov, .desc = &F.desc, .iov_count = 1, .addr = F.peer,
                               .rma_iov = &riov, .rma_iov_count = 1};
        ssize_t rc = fi_writemsg(F.ep, &m, flags);
        if (rc == 0) {
            F.writes++;
            return;
        }
        if (rc != -FI_EAGAIN) {
            die("fi_writemsg (FI_INJECT)", (int)rc);
        }
        poll_cq();
    }
}

static void inject(size_t len)
{
    inject_flags(len, FI_INJECT | (F.write_flags & FI_DELIVERY_COMPLETE));
}

/* The cheapest legal stream write: injected, transmit complete (the flush completes it), no
 * completion entry; delivery complete only where no flush is ordered after it. */
static void inject_stream(size_t len)
{
    inject_flags(len, FI_INJECT | (F.flush == FLUSH_COUNTER ? FI_DELIVERY_COMPLETE : 0));
}

/* Until the write counter has every write posted so far. */
static void wait_writes(void)
{
    while (fi_cntr_read(F.cntr) < F.writes) {
        if (fi_cntr_readerr(F.cntr) > 0) {
            die("fi_cntr_read (a write failed)", -FI_EIO);
        }
        poll_cq();
    }
}

/* Completes every write posted before it: one operation the provider orders after them that
 * completes only once it (and so they) landed; or, with no such order, the write counter. */
static void flush(void)
{
    if (F.flush == FLUSH_COUNTER) {
        wait_writes();
        return;
    }
    size_t off = FLUSH_OFF(F.max);
    uint64_t raddr = F.remote_base + off;
    struct iovec iov = {.iov_base = F.buf + off + 8, .iov_len = 8};
    struct fi_rma_iov riov = {.addr = raddr, .len = 8, .key = F.remote_key};
    struct fi_msg_rma m = {.msg_iov = &iov, .desc = &F.desc, .iov_count = 1, .addr = F.peer,
                           .rma_iov = &riov, .rma_iov_count = 1, .context = &F.ctx[0]};
    for (;;) {
        ssize_t rc = F.flush == FLUSH_READ
                         ? fi_readmsg(F.ep, &m, FI_COMPLETION)
                         : fi_writemsg(F.ep, &m,
                                       FI_COMPLETION | FI_DELIVERY_COMPLETE |
                                           (8 <= F.inject_size ? FI_INJECT : 0));
        if (rc == 0) {
            F.pending++;
            F.writes += F.flush == FLUSH_WRITE;
            break;
        }
        if (rc != -FI_EAGAIN) {
            die(F.flush == FLUSH_READ ? "fi_readmsg (flush)" : "fi_writemsg (flush)", (int)rc);
        }
        poll_cq();
    }
    wait_pending();
}

static void wait_event(uint64_t data)
{
    while (F.remote_events == 0 || F.last_data != data) {
        poll_cq();
    }
}

/* Rank 1's count of wrong bytes or values, sent to rank 0 in the immediate data of a DONE
 * message; both ranks return it. */
static long share_wrong(long wrong)
{
    if (rank == 1) {
        post(3, 0, 0, DONE | 0x100000 | (uint64_t)wrong, 0);
        wait_pending();
    } else if (rank == 0) {
        while (F.remote_events == 0 || (F.last_data & ~UINT64_C(0xfffff)) != (DONE | 0x100000)) {
            poll_cq();
        }
        wrong = (long)(F.last_data & 0xfffff);
        F.last_data = 0;
    }
    fsh_boot_fence(0, serve);
    return wrong;
}

/* Rank 1 counts the wrong bytes of its remote area (pattern size * 8 + tag); shared as above. */
static long report_wrong(size_t size, uint64_t tag)
{
    return share_wrong(rank == 1 ? bench_count_wrong(F.buf + F.max, size, size * 8 + tag) : 0);
}

/* A phase boundary: the passive rank serves until the active one says DONE; then both fence. */
static void phase_end(uint64_t tag)
{
    if (rank == 0) {
        post(3, 0, 0, DONE | tag, 0);
        wait_pending();
    } else if (rank == 1) {
        while (F.remote_events == 0 || F.last_data != (DONE | tag)) {
            serve();
        }
    }
    fsh_boot_fence(0, serve);
}

/* kind as post()'s, or 4: fi_copy_post_lat (a copy into the buffer and a write from it, timed
 * until the post returns). */
static double time_lat(int kind, size_t size, double *best)
{
    for (int i = -opts.warmup; i < opts.iters; i++) {
        double t0 = bench_now_us();
        if (kind == 4) {
            memcpy(F.buf, F.src, size);
            post(0, 0, size, 0, 0);
        } else {
            post(kind, 0, size, 0, 0);
            wait_pending();
        }
        if (i >= 0) {
            samples[i] = bench_now_us() - t0;
        }
        wait_pending();
    }
    return bench_stats(samples, opts.iters, best);
}

static double time_pingpong(size_t size, double *best)
{
    uint64_t seq = 0;
    for (int i = -opts.warmup; i < opts.iters; i++) {
        seq++;
        if (rank == 0) {
            double t0 = bench_now_us();
            post(2, 0, size, seq, 0);
            wait_event(seq);
            wait_pending();
            if (i >= 0) {
                samples[i] = (bench_now_us() - t0) / 2;
            }
        } else {
            wait_event(seq);
            post(2, 0, size, seq, 0);
            wait_pending();
        }
    }
    return rank == 0 ? bench_stats(samples, opts.iters, best) : 0;
}

/* Rounds of WINDOW writes (fi_writemsg with completions, or with inject injected writes
 * counted by the write counter), each round timed to its last completion. */
static double time_window(size_t size, double *best, bool inject_them, bool flush_them)
{
    int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    int warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
    for (int r = -warm; r < rounds; r++) {
        double t0 = bench_now_us();
        for (int w = 0; w < opts.window; w++) {
            if (flush_them) {
                inject_stream(size);
            } else if (inject_them) {
                inject(size);
            } else {
                post(0, 0, size, 0, w);
            }
        }
        if (flush_them) {
            flush();
        } else if (inject_them) {
            wait_writes();
        } else {
            wait_pending();
        }
        if (r >= 0) {
            samples[r] = bench_now_us() - t0;
        }
    }
    return bench_stats(samples, rounds, best);
}

static long check_write(size_t size, uint64_t tag, bool by_inject);

static void inject_test(void)
{
    const char *name = "fi_inject_write_rate";
    if (!bench_want(&opts, name)) {
        return;
    }
    if (!F.cntr) {
        bench_note("%s: n/a (the provider opens no write counter)", name);
        return;
    }
    bench_section(name, "fabric", "Mmsg/s",
                  "WINDOW injected writes, then the write counter, per round");
    for (size_t size = opts.min; size <= opts.max && size <= F.inject_size;
         size = bench_next_size(&opts, size)) {
        double med = 1, best = 1, per = opts.window;
        if (rank == 0) {
            med = time_window(size, &best, true, false);
        }
        phase_end(3);
        bench_row(size, per / med, per / best, check_write(size, 9, true));
    }
}

/* iters of one injected write + the flush, each timed until the flush completes. */
static double time_inject_flush(size_t size, double *best)
{
    for (int i = -opts.warmup; i < opts.iters; i++) {
        double t0 = bench_now_us();
        inject_stream(size);
        flush();
        if (i >= 0) {
            samples[i] = bench_now_us() - t0;
        }
    }
    return bench_stats(samples, opts.iters, best);
}

/* The data check of fi_inject_flush_*: n injected writes into the same place, each with a
 * pattern of its own, the last the checked one, then one flush; then rank 1 looks at its memory
 * after an out-of-band fence only (the bootstrap's, no fabric message that could itself order
 * after the writes), so what it finds landed is what the flush completed. */
static long check_flush(size_t size, uint64_t tag, int n)
{
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            bench_fill(F.buf, size, size * 8 + tag + (uint64_t)(n - 1 - i) * 0x1000);
            inject_stream(size);
        }
        flush();
    }
    fsh_boot_fence(0, serve);
    return report_wrong(size, tag);
}

static void flush_test(const char *name, int rate)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    if (F.flush == FLUSH_COUNTER && !F.cntr) {
        bench_note("%s: n/a (the provider orders no flush after writes and opens no write "
                   "counter)", name);
        return;
    }
    int how = F.flush == FLUSH_COUNTER && !(F.write_flags & FI_DELIVERY_COMPLETE) ? 3 : F.flush;
    char what[320];
    snprintf(what, sizeof(what), "%s, then %s",
             rate ? "WINDOW injected writes per round" : "one injected write", flush_name[how]);
    bench_section(name, "fabric", rate ? "Mmsg/s" : "us", what);
    for (size_t size = opts.min; size <= opts.max && size <= F.inject_size;
         size = bench_next_size(&opts, size)) {
        double med = 1, best = 1, per = opts.window;
        if (rank == 0) {
            med = rate ? time_window(size, &best, false, true) : time_inject_flush(size, &best);
        }
        phase_end(rate ? 12 : 13);
        long wrong = check_flush(size, rate ? 14 : 15, rate ? opts.window : 1);
        if (rate) {
            bench_row(size, per / med, per / best, wrong);
        } else {
            bench_row(size, med, best, wrong);
        }
    }
}

/* One atomic on the peer's atomic word: fetch 0 plain (injected, no completion entry, counted),
 * 1 fetching xor with a completion, 2 fetching read with a completion (the flush). EAGAIN
 * retried with progress. */
static void post_atomic(int fetch, uint64_t operand)
{
    size_t off = ATOMIC_OFF(F.max);
    uint64_t *op = (uint64_t *)(F.buf + off + 8);
    *op = operand;
    struct fi_ioc ioc = {.addr = op, .count = 1};
    struct fi_ioc res = {.addr = F.buf + off + 16, .count = 1};
    struct fi_rma_ioc rioc = {.addr = F.remote_base + off, .count = 1, .key = F.remote_key};
    struct fi_msg_atomic m = {.msg_iov = &ioc, .desc = &F.desc, .iov_count = 1, .addr = F.peer,
                              .rma_iov = &rioc, .rma_iov_count = 1, .datatype = FI_UINT64,
                              .op = fetch == 2 ? FI_ATOMIC_READ : FI_BXOR,
                              .context = &F.ctx[0]};
    for (;;) {
        ssize_t rc = fetch ? fi_fetch_atomicmsg(F.ep, &m, &res, &F.desc, 1, FI_COMPLETION)
                           : fi_atomicmsg(F.ep, &m, FI_INJECT);
        if (rc == 0) {
            F.pending += fetch != 0;
            F.writes += fetch == 0; /* the write counter counts atomic updates */
            return;
        }
        if (rc != -FI_EAGAIN) {
            die(fetch ? "fi_fetch_atomicmsg" : "fi_atomicmsg (FI_INJECT)", (int)rc);
        }
        poll_cq();
    }
}

/* The operand of the i-th atomic of a run (both ranks know the sequence). */
static uint64_t atomic_operand(long i)
{
    return (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL;
}

/* Rounds of WINDOW xors on the peer's word: fetching ones and every completion, or injected
 * ones and one fetching read. *n counts the xors. */
static double time_atomics(bool inject_them, double *best, long *n)
{
    int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    int warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
    for (int r = -warm; r < rounds; r++) {
        double t0 = bench_now_us();
        for (int w = 0; w < opts.window; w++) {
            post_atomic(inject_them ? 0 : 1, atomic_operand((*n)++));
        }
        if (inject_them) {
            post_atomic(2, 0);
        }
        wait_pending();
        if (r >= 0) {
            samples[r] = bench_now_us() - t0;
        }
    }
    return bench_stats(samples, rounds, best);
}

static void atomic_test(const char *name, bool inject_them)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    if (!F.atomics || (inject_them && (!F.atomic_raw || !F.cntr || F.inject_size < 8))) {
        bench_note("%s: n/a (%s)", name,
                   !F.atomics      ? "the provider opened no endpoint with FI_ATOMIC"
                   : !F.atomic_raw ? "the provider orders no atomic fetch after atomic updates"
                                   : "no write counter or no inject");
        return;
    }
    bench_section(name, "fabric", "Mops/s",
                  inject_them ? "WINDOW injected fi_atomic (xor, uint64) per round, then one "
                                "fetching read the provider orders after them"
                              : "WINDOW fi_fetch_atomic (xor, uint64), then every completion, "
                                "per round");
    uint64_t *word = (uint64_t *)(F.buf + ATOMIC_OFF(F.max));
    if (rank == 1) {
        *word = 0;
    }
    fsh_boot_fence(0, serve);
    double med = 1, best = 1, per = opts.window;
    long n = 0;
    if (rank == 0) {
        med = time_atomics(inject_them, &best, &n);
        if (inject_them) {
            wait_writes(); /* the counter too, so later rows start with it drained */
        }
    }
    phase_end(16);
    /* rank 1 looks at its word after the out-of-band fence only */
    long rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    long warm = opts.warmup / 10 > 1 ? opts.warmup / 10 : 1;
    long total = (rounds + warm) * opts.window;
    long wrong = 0;
    if (rank == 1) {
        uint64_t want = 0;
        for (long i = 0; i < total; i++) {
            want ^= atomic_operand(i);
        }
        wrong = *word != want;
    }
    wrong = share_wrong(wrong);
    bench_row(sizeof(uint64_t), per / med, per / best, wrong);
}

static double time_memcpy(size_t size, double *best)
{
    int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    for (int r = -1; r < rounds; r++) {
        double t0 = bench_now_us();
        for (int w = 0; w < opts.window; w++) {
            memcpy(F.buf + F.max, F.buf, size);
            __asm__ __volatile__("" ::: "memory"); /* keep every copy */
        }
        if (r >= 0) {
            samples[r] = bench_now_us() - t0;
        }
    }
    return bench_stats(samples, rounds, best);
}

/* Rank 0 writes the pattern (by fi_writemsg, or injected and counted by the write counter);
 * rank 1 checks its remote area. Returns rank 1's count to rank 0
 * through the immediate data of the DONE message's reply (a second phase). */
static long check_write(size_t size, uint64_t tag, bool by_inject)
{
    if (rank == 0) {
        bench_fill(F.buf, size, size * 8 + tag);
        if (by_inject) {
            inject(size);
            wait_writes();
        } else {
            post(0, 0, size, 0, 0);
            wait_pending();
        }
    }
    phase_end(tag);
    return report_wrong(size, tag);
}

static void lat_test(const char *name, int kind, const char *what)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    bench_section(name, "fabric", "us", what);
    for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size)) {
        double med = 0, best = 0;
        if (kind == 2) {
            med = time_pingpong(size, &best);
            fsh_boot_fence(0, serve);
        } else {
            if (rank == 0) {
                med = time_lat(kind, size, &best);
            }
            phase_end(1);
        }
        bench_row(size, med, best, check_write(size, (uint64_t)kind + 1, false));
    }
}

static void window_test(const char *name, int rate, const char *what)
{
    if (!bench_want(&opts, name)) {
        return;
    }
    bench_section(name, "fabric", rate ? "Mmsg/s" : "MB/s", what);
    for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size)) {
        double med = 1, best = 1, per = rate ? opts.window : (double)size * opts.window;
        if (rank == 0) {
            med = time_window(size, &best, false, false);
        }
        phase_end(2);
        bench_row(size, per / med, per / best, check_write(size, 4 + (uint64_t)rate, false));
    }
}

static void memcpy_test(void)
{
    if (!bench_want(&opts, "memcpy_bw")) {
        return;
    }
    bench_section("memcpy_bw", "local", "MB/s", "WINDOW memcpy of size bytes per round, one core");
    for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size)) {
        double med = 1, best = 1, per = (double)size * opts.window;
        long wrong = 0;
        if (rank == 0) {
            med = time_memcpy(size, &best);
            bench_fill(F.buf, size, size);
            memcpy(F.buf + F.max, F.buf, size);
            wrong = bench_count_wrong(F.buf + F.max, size, size);
        }
        fsh_boot_fence(0, serve);
        bench_row(size, per / med, per / best, wrong);
    }
}

/* Rounds of WINDOW driver copies src -> dst of size bytes; the median round in us on rank 0
 * (*best: the fastest), -1 when a copy failed. */
static double time_copies(void *dst, const void *src, size_t size, double *best)
{
    int rounds = opts.iters / 10 > 3 ? opts.iters / 10 : 3;
    for (int r = -1; r < rounds; r++) {
        double t0 = bench_now_us();
        for (int w = 0; w < opts.window; w++) {
            if (fsh_cuda_copy(dst, src, size) != 0) {
                return -1;
            }
        }
        if (r >= 0) {
            samples[r] = bench_now_us() - t0;
        }
    }
    return bench_stats(samples, rounds, best);
}

/* One section of driver copies: h2d from page-locked F.buf into dev, or d2d from dev into
 * dev + F.max. The data check sends the pattern the same way and reads it back to the host. */
static void copy_section(const char *name, int d2d, unsigned char *dev, int pinned)
{
    const char *what = d2d ? "WINDOW driver copies GPU -> GPU (two buffers of one GPU) per round"
                     : pinned ? "WINDOW driver copies host -> GPU per round, page-locked source"
                              : "WINDOW driver copies host -> GPU per round, pageable source";
    bench_section(name, "local", "MB/s", what);
    for (size_t size = opts.min; size <= opts.max; size = bench_next_size(&opts, size)) {
        double med = 1, best = 1, per = (double)size * opts.window;
        long wrong = 0;
        if (rank == 0) {
            unsigned char *dst = d2d ? dev + F.max : dev;
            const void *src = d2d ? (const void *)dev : F.buf;
            med = time_copies(dst, src, size, &best);
            bench_fill(F.buf, size, size + (size_t)d2d);
            if (med < 0 || fsh_cuda_copy(dev, F.buf, size) != 0 ||
                (d2d && (fsh_cuda_memset(dst, 0, size) != 0 ||
                         fsh_cuda_copy(dst, dev, size) != 0)) ||
                fsh_cuda_copy(F.buf + F.max, dst, size) != 0) {
                wrong = (long)size;
                med = best = 1;
            } else {
                wrong = bench_count_wrong(F.buf + F.max, size, size + (size_t)d2d);
            }
        }
        fsh_boot_fence(0, serve);
        bench_row(size, per / med, per / best, wrong);
    }
}

static void cuda_test(void)
{
    int h2d = bench_want(&opts, "cuda_h2d_bw"), d2d = bench_want(&opts, "cuda_d2d_bw");
    if (!h2d && !d2d) {
        return;
    }
    const char *names = h2d && d2d ? "cuda_h2d_bw, cuda_d2d_bw" : h2d ? "cuda_h2d_bw"
                                                                      : "cuda_d2d_bw";
    const char *heap = getenv("FABSHMEM_DEVICE_HEAP_SIZE");
    if (!heap || !heap[0] || strcmp(heap, "0") == 0) {
        bench_note("%s: not run (FABSHMEM_DEVICE_HEAP_SIZE is not set: no GPU asked for)", names);
        return;
    }
    const char *lib = getenv("FABSHMEM_CUDA_LIB");
    unsigned char *dev = NULL;
    /* [0, max): the h2d target and d2d source; [max, 2 max): the d2d destination */
    int ok = fsh_cuda_open(lib ? lib : "", NULL, rank) == 0 && (dev = fsh_cuda_alloc(2 * F.max));
    if (!ok) {
        bench_note("%s: not run (%s)", names, fsh_cuda_reason());
        fsh_cuda_close();
        return;
    }
    int pinned = fsh_cuda_host_register(F.buf, F.max) == 0;
    if (h2d) {
        copy_section("cuda_h2d_bw", 0, dev, pinned);
    }
    if (d2d) {
        copy_section("cuda_d2d_bw", 1, dev, pinned);
    }
    if (pinned) {
        fsh_cuda_host_unregister(F.buf);
    }
    fsh_cuda_free(dev);
    fsh_cuda_close();
}

static const char *choose_provider(void)
{
    const char *p = getenv("FABSHMEM_PROVIDER");
    if (!p || !p[0]) {
        p = getenv("FI_PROVIDER");
    }
    return p && p[0] ? p : NULL;
}

static void open_fabric(void)
{
    const uint64_t rma = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    const uint64_t offer = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    const char *prov = choose_provider();
    size_t norder = 0;
    const char *const *order = fsh_fabric_default_order(&norder);
    int rc = -FI_ENODATA;
    for (size_t i = 0; rc != 0 && i < (prov ? 1 : norder); i++) {
        const char *p = prov ? prov : order[i];
        /* with FI_ATOMIC first, as fabshmem asks (its atomics rows need it) */
        for (int a = 0; a < 2 && rc != 0; a++) {
            uint64_t caps = a == 0 ? rma | FI_ATOMIC : rma;
            rc = fsh_fabric_getinfo(p, NULL, offer, caps, FI_DELIVERY_COMPLETE, &F.info);
            if (rc != 0) {
                rc = fsh_fabric_getinfo(p, NULL, offer, caps, 0, &F.info);
            }
        }
    }
    if (rc != 0) {
        die("fi_getinfo (set FI_PROVIDER to a provider fi_info lists)", rc);
    }
    if ((rc = fi_fabric(F.info->fabric_attr, &F.fabric, NULL)) ||
        (rc = fi_domain(F.fabric, F.info, &F.domain, NULL))) {
        die("fi_fabric/fi_domain", rc);
    }
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA, .size = 0};
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    if ((rc = fi_cq_open(F.domain, &cqa, &F.cq, NULL)) ||
        (rc = fi_av_open(F.domain, &ava, &F.av, NULL)) ||
        (rc = fi_endpoint(F.domain, F.info, &F.ep, NULL)) ||
        (rc = fi_ep_bind(F.ep, &F.cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
        (rc = fi_ep_bind(F.ep, &F.av->fid, 0))) {
        die("endpoint setup", rc);
    }
    struct fi_cntr_attr cna = {.events = FI_CNTR_EVENTS_COMP};
    if (fi_cntr_open(F.domain, &cna, &F.cntr, NULL) != 0) {
        F.cntr = NULL;
    } else if (fi_ep_bind(F.ep, &F.cntr->fid, FI_WRITE) != 0) {
        fi_close(&F.cntr->fid);
        F.cntr = NULL;
    }
    if ((rc = fi_enable(F.ep))) {
        die("fi_enable", rc);
    }
    /* page-aligned: FI_MR_ALLOCATED providers want real allocations, EFA pins pages */
    if (posix_memalign((void **)&F.buf, 4096, 2 * F.max + BUF_EXTRA)) {
        die("posix_memalign", -FI_ENOMEM);
    }
    memset(F.buf, 0x5a, 2 * F.max + BUF_EXTRA);
    uint64_t mr_mode = (uint64_t)F.info->domain_attr->mr_mode;
    rc = fi_mr_reg(F.domain, F.buf, 2 * F.max + BUF_EXTRA,
                   FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 1, 0, &F.mr, NULL);
    if (rc) {
        die("fi_mr_reg", rc);
    }
    F.desc = (mr_mode & FI_MR_LOCAL) ? fi_mr_desc(F.mr) : NULL;
    F.write_flags = FI_COMPLETION | (F.info->tx_attr->op_flags & FI_DELIVERY_COMPLETE);
    F.inject_size = F.info->tx_attr->inject_size;
    /* the flush of fi_inject_flush_*: what the endpoint orders after writes (1.x's names and
     * 2.x's RMA-only ones) */
    uint64_t msg_order = F.info->tx_attr->msg_order;
    uint64_t waw = FI_ORDER_WAW, raw = FI_ORDER_RAW;
#ifdef FI_ORDER_RMA_WAW
    waw |= FI_ORDER_RMA_WAW;
    raw |= FI_ORDER_RMA_RAW;
#endif
    F.atomics = (F.info->caps & FI_ATOMIC) != 0;
    uint64_t araw = FI_ORDER_RAW | FI_ORDER_ATOMIC_RAW; /* 1.x's RAW names atomics too */
    F.atomic_raw = (msg_order & araw) && (F.info->rx_attr->msg_order & araw);
    F.flush = (msg_order & waw) && (F.write_flags & FI_DELIVERY_COMPLETE) ? FLUSH_WRITE
              : (msg_order & raw)                                     ? FLUSH_READ
                                                                    : FLUSH_COUNTER;
}

static void exchange(void)
{
    struct card mine = {0}, *all = calloc((size_t)npes, sizeof(struct card));
    size_t len = ADDR_MAX;
    int rc = fi_getname(&F.ep->fid, mine.addr, &len);
    if (rc || !all) {
        die("fi_getname", rc ? rc : -FI_ENOMEM);
    }
    uint64_t mr_mode = (uint64_t)F.info->domain_attr->mr_mode;
    mine.addrlen = len;
    mine.base = (mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)F.buf : 0;
    mine.key = fi_mr_key(F.mr);
    gethostname(mine.host, sizeof(mine.host) - 1);
    if ((rc = fsh_boot_allgather(&mine, sizeof(mine), all, 60))) {
        die("bootstrap all-gather", rc);
    }
    int peer = 1 - rank;
    if (fi_av_insert(F.av, all[peer].addr, 1, &F.peer, 0, NULL) != 1) {
        die("fi_av_insert", -FI_EINVAL);
    }
    F.remote_base = all[peer].base;
    F.remote_key = all[peer].key;
    /* hosts, distinct, in rank order */
    char hosts[512] = "";
    for (int r = 0; r < npes; r++) {
        if (!strstr(hosts, all[r].host)) {
            snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), "%s%s",
                     hosts[0] ? "," : "", all[r].host);
        }
    }
    char lib[128];
    snprintf(lib, sizeof(lib), "raw libfabric %u.%u, domain %s", FI_MAJOR(fi_version()),
             FI_MINOR(fi_version()), F.info->domain_attr->name);
    bench_start(&opts, &desc, rank, npes, lib, F.info->fabric_attr->prov_name, hosts);
    free(all);
}

int main(int argc, char **argv)
{
    bench_parse(&opts, &desc, argc, argv);
    struct fsh_boot_info boot;
    int rc = fsh_boot_init(&boot);
    if (rc) {
        fprintf(stderr, "fi_ceiling: no bootstrap: %s\n", strerror(-rc));
        return 1;
    }
    rank = boot.rank;
    npes = boot.size;
    if (npes != 2) {
        if (rank == 0) {
            fprintf(stderr, "fi_ceiling: runs on exactly 2 ranks (mpirun -n 2), not %d\n", npes);
        }
        fsh_boot_fini();
        return 2;
    }
    /* Wait and bind as fabshmem does with its defaults (FABSHMEM_YIELD=auto, FABSHMEM_BIND=auto):
     * with no more ranks than cores on the node, spin, each rank on a core of its own (left
     * unbound, two spinning ranks may share a core and every round trip waits for the
     * scheduler); with more, yield when idle and stay unbound. */
    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    yield_when_idle = boot.local_size > ncpu;
    if (!yield_when_idle) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(boot.local_rank % ncpu, &set);
        sched_setaffinity(0, sizeof(set), &set);
    }
    F.max = opts.max;
    F.window = opts.window;
    F.ctx = calloc((size_t)opts.window, sizeof(*F.ctx));
    F.src = calloc(1, F.max);
    samples = malloc(sizeof(double) * (size_t)(opts.iters > 3 ? opts.iters : 3));
    if (!F.ctx || !samples || !F.src) {
        return 1;
    }
    open_fabric();
    const char *gap_env = getenv("FABSHMEM_POLL_GAP_NS");
    long gap = gap_env && *gap_env ? strtol(gap_env, NULL, 10) : 0;
    gap_relax = gap > 0 && gap <= 100000 ? fsh_relax_count(gap) : 0;
    exchange();
    fsh_boot_fence(0, serve);
    lat_test("fi_write_lat", 0, "fi_write + its completion, rank 0 -> rank 1");
    lat_test("fi_copy_post_lat", 4,
             "memcpy from private memory into the registered buffer + fi_write from it, until "
             "the post returns");
    lat_test("fi_read_lat", 1, "fi_read + its completion, rank 0 <- rank 1");
    lat_test("fi_writedata_lat", 2,
             "ping-pong of fi_writedata seen in the target's CQ, half round trip");
    window_test("fi_write_bw", 0, "WINDOW fi_write, then every completion, per round");
    window_test("fi_write_rate", 1, "WINDOW fi_write, then every completion, per round");
    inject_test();
    flush_test("fi_inject_flush_rate", 1);
    flush_test("fi_inject_flush_lat", 0);
    atomic_test("fi_fetch_atomic_rate", false);
    atomic_test("fi_inject_atomic_flush_rate", true);
    memcpy_test();
    cuda_test();
    rc = bench_finish();
    fsh_boot_fence(0, serve);
    fi_close(&F.mr->fid);
    fi_close(&F.ep->fid);
    if (F.cntr) {
        fi_close(&F.cntr->fid);
    }
    fi_close(&F.av->fid);
    fi_close(&F.cq->fid);
    fi_close(&F.domain->fid);
    fi_close(&F.fabric->fid);
    fi_freeinfo(F.info);
    free(F.buf);
    free(F.ctx);
    free(F.src);
    free(samples);
    fsh_boot_fini();
    return rc;
}
