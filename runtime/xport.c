/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xport.c: posting operations to the endpoint.
 *
 * Owns the calls fi_writemsg, fi_readmsg, fi_atomicmsg, fi_fetch_atomicmsg and
 * fi_compare_atomicmsg, their -FI_EAGAIN handling, and the chaos "reorder" queue. A write
 * without a record (op NULL) is counted by the write counter and marks its track. An operation
 * counts as posted (its tracks' posted counters grow) when xport accepts it, held or not, so
 * quiet waits for held operations too: the poll hook releases them, in random order, while
 * anybody waits. An injected operation's payload is copied when it is held, since the caller
 * may reuse its buffer as soon as the call returns; a non-injected one keeps pointing at the
 * caller's buffer, which the API keeps valid until completion anyway.
 *
 * Requests carry the keys of the target's first rail; issue() puts in those of the rail the
 * request's way reaches (fsh_mr_key_on). In a multi-rail job xport keeps a copy of every
 * request with a record (its injected payload too), so that when a way dies (live.c finds it)
 * what was in flight on it goes again on another: reads and writes without immediate data,
 * which land the same bytes twice at worst. An atomic or a write with immediate data may have
 * landed or not, and twice would be wrong: one of those in flight on a dead way ends the job,
 * with the rail and the operation named. A context's own endpoint (a lane) keeps its copies
 * in its records' keep space, and posts them again on its own endpoint of the new way's rail.
 * Whoever finds a way dead (a failed operation, a probe) takes it out of use; each poller, the
 * engine and every lane, posts again its own records' when its next poll sees the death
 * (fsh_fabric_deaths), under its own lock.
 */
#include "xport.h"

#include <errno.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fabric.h"
#include "log.h"
#include "mr.h"

#define HOLD_MAX 32
/* A lane of a multi-rail job injects writes up to this size (its records keep a copy). */
#define LANE_INJECT_MAX 256

struct held {
    struct fsh_xreq r;
    uint8_t payload[64]; /* copy of an injected payload (writes up to inject size use heap) */
    void *big;           /* heap copy when the payload does not fit above */
};

static struct {
    bool reorder;
    struct held *held;
    size_t nheld;
    bool releasing;
    struct fsh_xreq *saved; /* [record index]: the request as posted (multi-rail only) */
    uint8_t *payloads;      /* [record index][inject size]: injected payloads of saved */
    size_t inject;
    size_t lane_inject;     /* the largest write a lane injects in a multi-rail job */
    int nrails;             /* the fabric's, at init: 0 when the job opened none */
} xport_reqs;

static const char *type_name(int type)
{
    switch (type) {
    case FSH_X_WRITE: return "write";
    case FSH_X_READ: return "read";
    default: return "atomic";
    }
}

/* The key, on the rail r's way reaches, of the region whose first-rail key is key0: no lookup
 * on a first rail (every operation of a one-rail job). */
static inline uint64_t key_of(const struct fsh_xreq *r, uint64_t key0)
{
    return r->path.dst ? fsh_mr_key_on(r->pe, r->path.dst, key0) : key0;
}

/* The one map from fabshmem's datatypes to libfabric's (inline: atomics pass with constant
 * kind, so it folds to a test of the size). */
static inline int datatype(size_t size, bool is_signed, bool is_float, bool is_complex)
{
    if (is_complex) {
        return size == sizeof(float _Complex)         ? FI_FLOAT_COMPLEX
               : size == sizeof(double _Complex)      ? FI_DOUBLE_COMPLEX
               : size == sizeof(long double _Complex) ? FI_LONG_DOUBLE_COMPLEX
                                                      : -1;
    }
    if (is_float) {
        return size == sizeof(float)         ? FI_FLOAT
               : size == sizeof(double)      ? FI_DOUBLE
               : size == sizeof(long double) ? FI_LONG_DOUBLE
                                             : -1;
    }
    switch (size) {
    case 1: return is_signed ? FI_INT8 : FI_UINT8;
    case 2: return is_signed ? FI_INT16 : FI_UINT16;
    case 4: return is_signed ? FI_INT32 : FI_UINT32;
    case 8: return is_signed ? FI_INT64 : FI_UINT64;
    default: return -1;
    }
}

int fsh_xport_datatype(size_t size, bool is_signed, bool is_float, bool is_complex)
{
    return datatype(size, is_signed, is_float, is_complex);
}

/* libfabric's op for each FSH_XA_*. */
static const enum fi_op fi_op_of[] = {
    [FSH_XA_READ] = FI_ATOMIC_READ, [FSH_XA_WRITE] = FI_ATOMIC_WRITE, [FSH_XA_CSWAP] = FI_CSWAP,
    [FSH_XA_SUM] = FI_SUM,          [FSH_XA_BAND] = FI_BAND,          [FSH_XA_BOR] = FI_BOR,
    [FSH_XA_BXOR] = FI_BXOR,
};

bool fsh_xport_atomic_ok(int op, int type, size_t size)
{
    int dt = datatype(size, false, false, false);
    if (op < FSH_XA_READ || op > FSH_XA_BXOR || dt < 0) {
        return false;
    }
    uint64_t flags = type == FSH_X_COMPARE ? FI_COMPARE_ATOMIC
                     : type == FSH_X_FETCH ? FI_FETCH_ATOMIC
                                           : 0;
    struct fi_atomic_attr attr;
    return fi_query_atomic(fsh_fabric_domain(0), (enum fi_datatype)dt, fi_op_of[op], &attr,
                           flags) == 0 &&
           attr.count >= 1;
}

/* Does the write counter (bound FI_WRITE) count an operation of this type? Writes and atomic
 * updates (fi_ep_bind(3): "RMA write or base atomic operation"), not fetches. */
static inline bool counts_as_write(int type)
{
    return type == FSH_X_WRITE || type == FSH_X_ATOMIC;
}

/* libfabric's flags for a request's FSH_XF_* (inline: every operation passes here). */
static inline uint64_t fi_flags(unsigned f)
{
    return ((f & FSH_XF_COMPLETION) ? FI_COMPLETION : 0) | ((f & FSH_XF_INJECT) ? FI_INJECT : 0) |
           ((f & FSH_XF_DELIVERED) ? FI_DELIVERY_COMPLETE : 0) |
           ((f & FSH_XF_IMM) ? FI_REMOTE_CQ_DATA : 0);
}

static ssize_t issue(struct fid_ep *ep, struct fsh_xreq *r)
{
    fi_addr_t peer = r->path.addr;
    uint64_t flags = fi_flags(r->flags);
    if (r->type == FSH_X_WRITE || r->type == FSH_X_READ) {
        struct iovec iov = {.iov_base = r->local, .iov_len = r->len};
        struct fi_rma_iov rma[FSH_XREQ_SEGS] = {
            {.addr = r->raddr, .len = r->len, .key = key_of(r, r->key)}};
        size_t nrma = r->nseg ? r->nseg : 1;
        for (size_t i = 0; i < r->nseg; i++) {
            rma[i] = (struct fi_rma_iov){.addr = r->seg[i].addr, .len = r->seg[i].len,
                                         .key = key_of(r, r->seg[i].key)};
        }
        struct fi_msg_rma msg = {
            .msg_iov = &iov, .desc = &r->desc, .iov_count = 1, .addr = peer,
            .rma_iov = rma, .rma_iov_count = nrma, .context = r->op, .data = r->data,
        };
        return r->type == FSH_X_WRITE ? fi_writemsg(ep, &msg, flags)
                                      : fi_readmsg(ep, &msg, flags);
    }
    struct fi_ioc ioc = {.addr = r->local, .count = 1};
    struct fi_rma_ioc rma = {.addr = r->raddr, .count = 1, .key = key_of(r, r->key)};
    struct fi_msg_atomic msg = {
        .msg_iov = &ioc, .desc = &r->desc, .iov_count = 1, .addr = peer, .rma_iov = &rma,
        .rma_iov_count = 1, .datatype = (enum fi_datatype)datatype(r->len, false, false, false),
        .op = fi_op_of[r->atomic_op], .context = r->op, .data = r->data,
    };
    struct fi_ioc res = {.addr = r->result, .count = 1};
    if (r->type == FSH_X_ATOMIC) {
        return fi_atomicmsg(ep, &msg, flags);
    }
    if (r->type == FSH_X_FETCH) {
        return fi_fetch_atomicmsg(ep, &msg, &res, &r->result_desc, 1, flags);
    }
    struct fi_ioc cmp = {.addr = (void *)r->compare, .count = 1};
    return fi_compare_atomicmsg(ep, &msg, &cmp, &r->compare_desc, 1, &res, &r->result_desc, 1,
                                flags);
}

/* Issue, retrying while the provider's queue is full (polling the lane's queue, when it goes
 * on a lane, else the engine's). */
static int issue_retry(struct fsh_xreq *r, struct fsh_lane *lane)
{
    struct fsh_wait_clock start = {0};
    struct fid_ep *ep = lane ? fsh_lane_ep(lane, r->path.rail) : fsh_fabric_ep(r->path.rail);
    for (;;) {
        ssize_t rc = issue(ep, r);
        FSH_TRACE("post %s of %zu bytes to PE %d%s imm 0x%08x: %s", type_name(r->type), r->len,
                  r->pe, (r->flags & FSH_XF_INJECT) ? " (inject)" : "", (unsigned)r->data,
                  rc == 0 ? "posted" : fi_strerror((int)-rc));
        if (rc == 0) {
            return 0;
        }
        if (rc != -FI_EAGAIN) {
            return fsh_err((int)rc, "FABSHMEM_LOG=debug and FI_LOG_LEVEL=warn show the provider's view",
                           "posting a %s of %zu bytes to PE %d failed: %s", type_name(r->type),
                           r->len, r->pe, fi_strerror((int)-rc));
        }
        int err = lane ? fsh_lane_poll(lane) : fsh_progress_poll();
        if (err == 0 && lane) {
            /* Not with the lane's lock: a liveness probe takes the engine's, and quiet of all
             * contexts holds that one while it polls this lane. */
            fsh_lane_unlock(lane);
            err = fsh_progress_backoff(&start, "provider queue full", r->pe);
            fsh_lane_lock(lane);
        } else if (err == 0) {
            err = fsh_progress_backoff(&start, "provider queue full", r->pe);
        }
        if (err < 0) {
            return err;
        }
    }
}

/* r's way died before r was issued: the next live way, with a descriptor for its rail (a
 * bounce slot's, the engine's or lane's; else the new temporary registration, if one is
 * needed, goes to rec, and the old one, made for the dead rail and never used, is closed). rec
 * is r's record: in a multi-rail job, the only one where a way dies, every operation has one
 * (no counted writes). */
static int reroute(struct fsh_xreq *r, struct fsh_op *rec, struct fsh_lane *lane)
{
    struct fsh_path p = fsh_fabric_path_way(r->pe, r->path.way);
    if (r->desc && rec->bounce) {
        r->desc = lane ? fsh_lane_bounce_desc(lane, p.rail) : fsh_progress_bounce_desc(p.rail);
    } else if (r->desc && p.rail != r->path.rail) {
        struct fsh_mr_tmp *tmp = NULL;
        int rc = fsh_mr_desc(r->local, r->len, p.rail, &r->desc, &tmp);
        if (rc != 0) {
            return rc;
        }
        if (rec->tmp_mr) {
            fsh_mr_release(rec->tmp_mr);
        }
        rec->tmp_mr = tmp;
    }
    r->path = p;
    rec->way = p.way;
    return 0;
}

/* Post one held operation (random pick). */
static int release_one(void)
{
    size_t k = (size_t)(fsh_progress_random() % xport_reqs.nheld);
    struct held h = xport_reqs.held[k];
    xport_reqs.held[k] = xport_reqs.held[--xport_reqs.nheld];
    if (h.big) {
        h.r.local = h.big;
    } else if (h.r.flags & FSH_XF_INJECT) {
        h.r.local = h.payload;
    }
    int rc = fsh_fabric_way_alive(h.r.pe, h.r.path.way) ? 0 : reroute(&h.r, h.r.op, NULL);
    if (rc == 0) {
        rc = issue_retry(&h.r, NULL);
    }
    free(h.big);
    if (rc != 0) {
        /* Counted as posted but never issued: quiet must report the error, not wait. */
        fsh_progress_op_unissued(h.r.op, counts_as_write(h.r.type));
    }
    return rc;
}

/* Poll hook: while anybody polls, held operations trickle out in random order. */
static void release_some(void)
{
    if (xport_reqs.releasing || xport_reqs.nheld == 0) {
        return;
    }
    xport_reqs.releasing = true;
    size_t n = xport_reqs.nheld / 2 + 1;
    while (n-- && xport_reqs.nheld) {
        if (release_one() != 0) {
            break;
        }
    }
    xport_reqs.releasing = false;
}

int fsh_xport_release_held(void)
{
    FSH_ASSERT_ENGINE_HELD();
    if (xport_reqs.releasing) {
        return 0; /* a release in progress (its poll ran us): it issues the rest */
    }
    xport_reqs.releasing = true;
    int rc = 0;
    while (rc == 0 && xport_reqs.nheld) {
        rc = release_one();
    }
    xport_reqs.releasing = false;
    return rc;
}

int fsh_xport_init(bool chaos_reorder)
{
    xport_reqs.nrails = fsh_fabric_nrails();
    xport_reqs.reorder = chaos_reorder;
    if (chaos_reorder) {
        xport_reqs.held = calloc(HOLD_MAX, sizeof(*xport_reqs.held));
        if (!xport_reqs.held) {
            return fsh_err(-ENOMEM, "", "out of memory for FABSHMEM_CHAOS");
        }
        fsh_progress_set_poll_hook(release_some);
        FSH_INFO("FABSHMEM_CHAOS=reorder: about one operation in three is held back and posted later, out of order");
    }
    return 0;
}

void fsh_xport_fini(void)
{
    free(xport_reqs.held);
    free(xport_reqs.saved);
    free(xport_reqs.payloads);
    memset(&xport_reqs, 0, sizeof(xport_reqs));
}

static int hold(struct fsh_xreq *r)
{
    if (xport_reqs.nheld == HOLD_MAX) {
        xport_reqs.releasing = true;
        int rc = release_one();
        xport_reqs.releasing = false;
        if (rc != 0) {
            return rc;
        }
    }
    struct held *h = &xport_reqs.held[xport_reqs.nheld];
    memset(h, 0, sizeof(*h));
    h->r = *r;
    if (r->flags & FSH_XF_INJECT) {
        /* The caller may reuse its buffer on return: keep a copy. */
        if (r->len <= sizeof(h->payload)) {
            memcpy(h->payload, r->local, r->len);
        } else {
            h->big = malloc(r->len);
            if (!h->big) {
                return fsh_err(-ENOMEM, "", "out of memory holding an operation back");
            }
            memcpy(h->big, r->local, r->len);
        }
    }
    xport_reqs.nheld++;
    return 0;
}

static void give_back(struct fsh_xreq *r)
{
    if (r->op) {
        fsh_progress_op_put(r->op);
    }
}

/* Keep a copy of r under its record (multi-rail), its injected payload with it. */
static void save(const struct fsh_xreq *r)
{
    size_t i = fsh_progress_op_index(r->op);
    xport_reqs.saved[i] = *r;
    if ((r->flags & FSH_XF_INJECT) && r->len <= xport_reqs.inject) {
        memcpy(xport_reqs.payloads + i * xport_reqs.inject, r->local, r->len);
        xport_reqs.saved[i].local = xport_reqs.payloads + i * xport_reqs.inject;
    }
}

int fsh_xport_post(struct fsh_xreq *r)
{
    FSH_ASSERT_ENGINE_HELD();
    if (r->path.rail >= xport_reqs.nrails) {
        /* No fabric (a one-node job): every peer is mapped, so nothing should come here. */
        give_back(r);
        return fsh_err(-EHOSTUNREACH, "set FABSHMEM_FABRIC=always to open a provider for what memory mapping cannot reach",
                       "a %s of %zu bytes to PE %d needs the fabric, and this one-node job "
                       "opened none", type_name(r->type), r->len, r->pe);
    }
    if (r->op) {
        r->op->way = r->path.way;
        if (xport_reqs.saved) {
            save(r);
        }
    }
    /* Reorder about one operation in three: enough to mix every pattern up, while most
     * traffic still flows. Reads and fetching atomics are held too: their results must not be
     * assumed early either. */
    if (xport_reqs.reorder && !xport_reqs.releasing && fsh_progress_random() % 3 == 0) {
        int rc = hold(r);
        if (rc != 0) {
            give_back(r);
            return rc;
        }
        fsh_progress_op_posted(r->op, r->counted, counts_as_write(r->type));
        return 0;
    }
    int rc = issue_retry(r, NULL);
    if (rc != 0) {
        give_back(r);
        return rc;
    }
    fsh_progress_op_posted(r->op, r->counted, counts_as_write(r->type));
    return 0;
}

/* Keep a copy of r in its lane record's keep space (multi-rail), its injected payload with it
 * (at most lane_inject bytes: fsh_xport_lane_inject). */
static struct fsh_xreq *save_lane(struct fsh_lane *lane, const struct fsh_xreq *r)
{
    struct fsh_xreq *k = fsh_lane_keep(lane, r->op);
    *k = *r;
    if (r->flags & FSH_XF_INJECT) {
        memcpy(k + 1, r->local, r->len);
        k->local = k + 1;
    }
    return k;
}

size_t fsh_xport_lane_inject(void)
{
    return xport_reqs.saved ? xport_reqs.lane_inject : SIZE_MAX;
}

int fsh_xport_post_lane(struct fsh_lane *lane, struct fsh_xreq *r)
{
    FSH_ASSERT_LANE_ONCE(lane); /* let go while a full queue is waited out */
    r->op->way = r->path.way;
    if (xport_reqs.saved) {
        save_lane(lane, r);
    }
    int rc = issue_retry(r, lane);
    if (rc != 0) {
        fsh_lane_op_unposted(lane, r->op);
        return rc;
    }
    /* Not counted as a write: the engine's write counter never sees a lane's operations
     * (only the op's tracks are touched, under the lane's lock). */
    fsh_progress_op_posted(r->op, NULL, false);
    return 0;
}

static int fail_way(struct fsh_lane *lane, int pe, unsigned way, const char *why);

int fsh_xport_enable_failover(void)
{
    size_t depth = fsh_progress_depth();
    xport_reqs.inject = fsh_fabric_attr()->inject_size;
    xport_reqs.lane_inject =
        xport_reqs.inject < LANE_INJECT_MAX ? xport_reqs.inject : LANE_INJECT_MAX;
    xport_reqs.saved = calloc(depth, sizeof(*xport_reqs.saved));
    xport_reqs.payloads = calloc(depth, xport_reqs.inject ? xport_reqs.inject : 1);
    if (!xport_reqs.saved || !xport_reqs.payloads) {
        return fsh_err(-ENOMEM, "lower FABSHMEM_TX_DEPTH, or FABSHMEM_RAILS=1",
                       "out of memory for the copies of %zu requests (multi-rail)", depth);
    }
    /* Every write with a record, so that each can be posted again. */
    fsh_progress_stop_counting_writes();
    size_t keep = (sizeof(struct fsh_xreq) + xport_reqs.lane_inject + 7) & ~(size_t)7;
    return fsh_progress_set_way_hook(fail_way, keep);
}

/* Is rec's operation held back (chaos), not yet issued? Then release_one reroutes it. */
static bool is_held(const struct fsh_op *rec)
{
    for (size_t k = 0; k < xport_reqs.nheld; k++) {
        if (xport_reqs.held[k].r.op == rec) {
            return true;
        }
    }
    return false;
}

static bool idempotent(const struct fsh_xreq *r)
{
    return (r->type == FSH_X_READ || r->type == FSH_X_WRITE) && !(r->flags & FSH_XF_IMM);
}

static int unreachable(int pe)
{
    return fsh_err(-EHOSTUNREACH, "check that PE's node and the network to it",
                   "PE %d answers on none of its rails: unreachable", pe);
}

/* Is record o in flight on a dead way, and neither posted again yet nor held back (chaos)? */
static bool stranded(const struct fsh_op *o, struct fsh_lane *lane)
{
    return o->kind && !o->orphan && !fsh_fabric_way_alive(o->pe, o->way) &&
           (lane || !is_held(o));
}

/* Post again, each on a live way, what the records (lane's, or with lane NULL the engine's) had
 * in flight on ways now dead; each old record becomes an orphan. Caller holds their lock. */
static int sweep(struct fsh_lane *lane)
{
    if (lane) {
        FSH_ASSERT_LANE_HELD(lane);
    } else {
        FSH_ASSERT_ENGINE_HELD();
    }
    int err = 0;
    size_t depth = lane ? fsh_lane_depth(lane) : fsh_progress_depth();
    for (size_t i = 0; i < depth; i++) {
        struct fsh_op *o = lane ? fsh_lane_op_at(lane, i) : fsh_progress_op_at(i);
        if (!stranded(o, lane)) {
            continue;
        }
        if (fsh_fabric_ways(o->pe) == 0) {
            err = err ? err : unreachable(o->pe);
            continue;
        }
        struct fsh_xreq r = lane ? *(struct fsh_xreq *)fsh_lane_keep(lane, o) : xport_reqs.saved[i];
        if (!idempotent(&r)) {
            err = err ? err : fsh_err(-EHOSTUNREACH, "FABSHMEM_RAILS=1 avoids the rail; check the link of that NIC",
                                      "%s of %zu bytes to PE %d was in flight on rail %s when "
                                      "that way stopped answering: it may have landed or not, "
                                      "and going again could apply it twice",
                                      r.type == FSH_X_WRITE ? "a write with immediate data"
                                                            : "an atomic",
                                      r.len, o->pe, fsh_fabric_rail_name(r.path.rail));
            continue;
        }
        struct fsh_op *n = lane ? fsh_lane_op_get(lane, o->kind, o->pe, o->len)
                                : fsh_progress_op_get(o->kind, o->pe, o->len);
        if (!n) {
            return fsh_err_last() ? fsh_err_last()->code : -EIO;
        }
        /* Getting n polled when no record was free: o may have completed, or gone again in a
         * sweep that poll ran, meanwhile (its record may even carry a new operation now). */
        r = lane ? *(struct fsh_xreq *)fsh_lane_keep(lane, o) : xport_reqs.saved[i];
        if (!stranded(o, lane) || !idempotent(&r)) {
            /* Record i is looked at again (i wraps from 0 and back: unsigned). */
            if (lane) {
                fsh_lane_op_unposted(lane, n);
            } else {
                fsh_progress_op_put(n);
            }
            i--;
            continue;
        }
        n->track = o->track;
        n->sync = o->sync;
        n->copy_dst = o->copy_dst;
        n->copy_src = o->copy_src;
        n->copy_len = o->copy_len;
        n->bounce = o->bounce; /* the source: the new record gives it back */
        o->bounce = NULL;
        o->orphan = true;
        r.op = n;
        int rc = reroute(&r, n, lane);
        if (rc == 0) {
            if (lane) {
                rc = issue_retry(save_lane(lane, &r), lane);
            } else {
                save(&r);
                rc = issue_retry(&xport_reqs.saved[fsh_progress_op_index(n)], NULL);
            }
        }
        if (rc != 0) {
            if (lane) {
                fsh_lane_op_unposted(lane, n);
            } else {
                fsh_progress_op_unissued(n, false);
            }
            return rc;
        }
    }
    return err;
}

/* The way hook (progress.h), for the engine (lane NULL) and the lanes: pe >= 0 names a way
 * found dead, pe < 0 asks only for a sweep. */
static int fail_way(struct fsh_lane *lane, int pe, unsigned way, const char *why)
{
    if (pe >= 0 && fsh_fabric_way_alive(pe, way)) {
        fsh_fabric_kill_way(pe, way, why);
    }
    int rc = sweep(lane);
    return pe >= 0 && fsh_fabric_ways(pe) == 0 ? unreachable(pe) : rc;
}

int fsh_xport_fail_way(int pe, unsigned way, const char *why)
{
    FSH_ASSERT_ENGINE_HELD();
    return xport_reqs.saved ? fail_way(NULL, pe, way, why) : 0;
}
