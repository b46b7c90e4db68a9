/*
 * progress.c: the progress engine.
 *
 * Owns the operation pool and the CQ reading. With manual data progress (shm, tcp;ofi_rxm, efa)
 * nothing moves, including reads and writes aimed at this PE, unless someone reads the CQ, so
 * every blocking call loops here. Completions are classified by their operation context, never
 * by their flags: providers disagree on flags (tcp;ofi_rxm marks a target completion
 * REMOTE_WRITE|REMOTE_CQ_DATA without FI_RMA; sockets sets FI_REMOTE_CQ_DATA on the
 * initiator's own completion). A completion whose context is not one of our operation
 * records is a remote event; its immediate data selects the handler.
 *
 * A fabric error is reported once with the operation, the peer and the provider's words, and
 * propagated as -errno: the API boundary ends the job, because a lost put cannot be recovered.
 */
#include "progress.h"

#include <errno.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "fabric.h"
#include "log.h"
#include "rt.h"

static struct {
    struct fsh_op *pool;
    struct fsh_op *free;
    size_t depth;
    size_t in_use;
    bool yield;
    double timeout;
    fsh_imm_handler handlers[FSH_IMM_NKINDS];
    int failed; /* a fabric error was seen: every later wait fails at once */
} pg;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int fsh_progress_init(size_t depth, bool yield, double timeout_s)
{
    pg.pool = calloc(depth, sizeof(*pg.pool));
    if (!pg.pool) {
        return fsh_err(-ENOMEM, "lower FABSHMEM_TX_DEPTH", "cannot allocate %zu operation records",
                       depth);
    }
    for (size_t i = 0; i < depth; i++) {
        pg.pool[i].next_free = (i + 1 < depth) ? &pg.pool[i + 1] : NULL;
    }
    pg.free = pg.pool;
    pg.depth = depth;
    pg.in_use = 0;
    pg.yield = yield;
    pg.timeout = timeout_s;
    pg.failed = 0;
    return 0;
}

void fsh_progress_fini(void)
{
    free(pg.pool);
    memset(&pg, 0, sizeof(pg));
}

int fsh_progress_register_imm(enum fsh_imm_kind kind, fsh_imm_handler fn)
{
    if (kind <= 0 || kind >= FSH_IMM_NKINDS || pg.handlers[kind]) {
        return fsh_err(-EINVAL, "", "immediate-data kind %d invalid or taken", kind);
    }
    pg.handlers[kind] = fn;
    return 0;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case FSH_OP_PUT: return "put";
    case FSH_OP_GET: return "get";
    case FSH_OP_PUT_IMM: return "put with notification";
    case FSH_OP_ATOMIC: return "atomic";
    default: return "operation";
    }
}

/* Our operation record, or NULL when the completion is someone else's: a remote event. Target
 * completions do not reliably carry a NULL context (shm reports 0x1 for a write with immediate
 * data), so membership in our pool is the test. */
static struct fsh_op *own_op(void *context)
{
    uintptr_t c = (uintptr_t)context, lo = (uintptr_t)pg.pool;
    if (c < lo || c >= lo + pg.depth * sizeof(struct fsh_op) || (c - lo) % sizeof(struct fsh_op)) {
        return NULL;
    }
    return context;
}

static void complete(struct fsh_op *op)
{
    if (op->tmp_mr) {
        fi_close(&op->tmp_mr->fid);
    }
    op->track->completed++;
    if (op->sync) {
        op->sync->completed++;
    }
    fsh_progress_op_put(op);
}

static int report_error(void)
{
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof(e));
    ssize_t rc = fi_cq_readerr(fsh_fabric_cq(), &e, 0);
    if (rc < 0) {
        return (rc == -FI_EAGAIN) ? 0 : (int)rc;
    }
    char provbuf[256];
    const char *prov = fi_cq_strerror(fsh_fabric_cq(), e.prov_errno, e.err_data, provbuf,
                                      sizeof(provbuf));
    struct fsh_op *op = own_op(e.op_context);
    pg.failed = 1;
    if (op) {
        int err = fsh_err(-(int)e.err, "the peer PE may have died or become unreachable; see its messages and the launcher's",
                          "%s of %zu bytes to PE %d failed: %s (%s)", kind_name(op->kind),
                          op->len, op->pe, fi_strerror((int)e.err), prov ? prov : "");
        complete(op);
        return err;
    }
    return fsh_err(-(int)e.err, "a peer PE may have died; see its messages and the launcher's",
                   "a remote operation aimed at this PE failed: %s (%s)", fi_strerror((int)e.err),
                   prov ? prov : "");
}

int fsh_progress_poll(void)
{
    struct fi_cq_data_entry ev[16];
    ssize_t n = fi_cq_read(fsh_fabric_cq(), ev, 16);
    if (n == -FI_EAGAIN) {
        return pg.failed ? -EIO : 0;
    }
    if (n == -FI_EAVAIL) {
        return report_error();
    }
    if (n < 0) {
        pg.failed = 1;
        return fsh_err((int)n, "", "reading the completion queue failed: %s", fi_strerror((int)-n));
    }
    for (ssize_t i = 0; i < n; i++) {
        struct fsh_op *op = own_op(ev[i].op_context);
        if (op) {
            complete(op);
            continue;
        }
        if (ev[i].flags & FI_REMOTE_CQ_DATA) {
            uint32_t imm = (uint32_t)ev[i].data;
            unsigned kind = imm >> FSH_IMM_KIND_SHIFT;
            if (kind < FSH_IMM_NKINDS && pg.handlers[kind]) {
                pg.handlers[kind](imm & FSH_IMM_PAYLOAD_MASK);
            } else {
                FSH_WARN("remote event with unknown kind %u (immediate 0x%08x) dropped", kind, imm);
            }
        }
    }
    return (int)n;
}

int fsh_progress_backoff(double *start, const char *what, int peer)
{
    if (*start == 0) {
        *start = now();
        return 0;
    }
    if (pg.yield) {
        sched_yield();
    }
    if (pg.timeout > 0 && now() - *start > pg.timeout) {
        char who[32] = "";
        if (peer >= 0) {
            snprintf(who, sizeof(who), " for PE %d", peer);
        }
        return fsh_err(-ETIMEDOUT,
                       "a peer may be stuck or dead, or never entering the matching call; raise FABSHMEM_TIMEOUT if the work is just slow",
                       "%s: waited %.0f s%s with %llu operation(s) in flight and no end in sight",
                       what, pg.timeout, who, (unsigned long long)pg.in_use);
    }
    return 0;
}

int fsh_progress_wait(fsh_done_fn done, const void *arg, const char *what, int peer)
{
    double start = 0;
    unsigned idle = 0;
    for (;;) {
        int n = fsh_progress_poll();
        if (n < 0) {
            return n;
        }
        if (done(arg)) {
            return 0;
        }
        if (n > 0) {
            idle = 0;
            continue;
        }
        /* Check the clock (and yield) only every so often: clock_gettime is not free. */
        if (++idle % 64 == 0 || pg.yield) {
            int rc = fsh_progress_backoff(&start, what, peer);
            if (rc != 0) {
                return rc;
            }
        }
    }
}

static bool track_done(const void *arg)
{
    const struct fsh_op_track *t = arg;
    return t->completed == t->posted;
}

int fsh_progress_wait_track(const struct fsh_op_track *t, const char *what)
{
    if (t->completed == t->posted) {
        return pg.failed ? -EIO : 0;
    }
    return fsh_progress_wait(track_done, t, what, -1);
}

static bool pool_available(const void *arg)
{
    return pg.free != NULL;
}

struct fsh_op *fsh_progress_op_get(int kind, int pe, size_t len)
{
    if (!pg.free && fsh_progress_wait(pool_available, NULL, "waiting for a free operation slot", pe) != 0) {
        return NULL;
    }
    struct fsh_op *op = pg.free;
    pg.free = op->next_free;
    pg.in_use++;
    op->kind = kind;
    op->pe = pe;
    op->len = len;
    op->sync = NULL;
    op->tmp_mr = NULL;
    return op;
}

void fsh_progress_op_put(struct fsh_op *op)
{
    op->next_free = pg.free;
    pg.free = op;
    pg.in_use--;
}

uint64_t fsh_progress_inflight(void)
{
    return pg.in_use;
}
