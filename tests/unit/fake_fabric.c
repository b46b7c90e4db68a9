/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_fabric.c: the fake transport of the unit tests (what it does: fake.h).
 *
 * It defines every function of fabric.h and mr.h that the protocol modules and the engine
 * call, so a unit test that links this object before libfsh_core.a gets the real xport.c,
 * progress.c and the protocols above them on a wire the test controls; libfabric's inline
 * calls (fi_writemsg, fi_cq_read, ...) reach it through the operation tables of the endpoints
 * and queues it hands out. Nothing here is compiled into the library.
 *
 * Addressing: a path's fi_addr is pe << 4 | the peer's rail; a remote address is the offset in
 * the segment (no FI_MR_VIRT_ADDR); a key is (rail << 8) | (segment + 1), so a key names the
 * rail it is valid on, and the fake refuses one used on another rail's way. A descriptor is
 * (void *)(0xde5c0 + rail).
 */
#define _GNU_SOURCE
#include "fake.h"

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "error.h"
#include "fabric.h"
#include "heap.h"
#include "log.h"
#include "mr.h"
#include "progress.h"
#include "rt.h"
#include "xport.h"

#define MAXPE 64
#define DATA_SEG_BYTES (64 * 1024)

struct fake_cq;

struct wop {
    int type; /* FSH_X_WRITE / FSH_X_READ */
    int pe, rail, dst;
    unsigned way;
    struct fake_cq *cq; /* where its completion goes: its endpoint's (NULL: that lane closed) */
    void *context;
    uint64_t flags;
    void *local;
    size_t len;
    uint8_t *copy; /* the payload, copied at post (inject) or before the source is freed */
    struct fi_rma_iov rma[FSH_XREQ_SEGS];
    size_t nrma;
    uint64_t data;
    bool landed, done, failed;
    int events; /* of this op still pending */
    uint64_t seq;
};

struct ev {
    struct fake_event e;
    struct wop *op;
};

struct fake_cq {
    struct fid_cq cq;
    int rail;
    bool lane;    /* a lane's: its reads deliver nothing (the engine's rail 0 reads do) */
    struct fi_cq_data_entry *ent;
    size_t nent, cap;
    struct fi_cq_err_entry *err;
    size_t nerr, errcap;
};

struct fake_ep {
    struct fid_ep ep;
    int rail;
    struct fake_cq *cq; /* its completions' queue */
};

/* A lane's endpoint and queue on one rail (fsh_fabric_lane_open); the open ones listed, so
 * that closing one forgets its completions still on the wire. */
struct fake_lane {
    struct fake_ep ep;
    struct fake_cq cq;
    struct fake_lane *next;
};

static struct {
    struct fake_config cfg;
    struct fsh_fabric_attr attr;
    struct fake_cq cq[FSH_MAX_RAILS];
    struct fake_ep ep[FSH_MAX_RAILS];
    struct ev *ev;
    size_t nev, evcap;
    uint64_t rng;
    bool (*gate)(const struct fake_event *e);
    void (*tick)(void);
    bool dead[MAXPE][FSH_MAX_RAILS];    /* the wire's view: the way fails */
    bool rt_dead[MAXPE][FSH_MAX_RAILS]; /* the runtime's: it took the way out of use */
    unsigned deaths;
    uint64_t writes_done, writes_failed;
    bool dup_next;
    uint64_t tries; /* posts tried, for eagain_every */
    unsigned full_next; /* the next posts that find the queue full (fake_full_next) */
    struct fake_lane *lanes;
    struct fake_stats st;
    unsigned violations;
    void *heap;
    uint8_t *data;
    bool delivering;
} fk;

static uint8_t data_seg[DATA_SEG_BYTES] __attribute__((aligned(4096)));

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
    fk.violations++;
    va_list ap;
    va_start(ap, fmt);
    printf("fake transport: violation: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static uint64_t rnd(void)
{
    fk.rng ^= fk.rng >> 12;
    fk.rng ^= fk.rng << 25;
    fk.rng ^= fk.rng >> 27;
    return fk.rng * 2685821657736338717ULL;
}

static void *desc_of(int rail)
{
    return (void *)(uintptr_t)(0xde5c0 + rail);
}

/* ------------------------------------------------------------------ segments (mr.h) */

struct fsh_mr_set {
    int unused;
};

static uint8_t *seg_base(int seg, size_t *len)
{
    if (seg == FSH_SEG_HEAP) {
        *len = fk.cfg.heap_size;
        return fk.heap;
    }
    if (seg == FSH_SEG_DATA) {
        *len = DATA_SEG_BYTES;
        return data_seg;
    }
    *len = 0;
    return NULL;
}

int fsh_mr_lookup(const void *addr, size_t len, enum fsh_seg *seg, uint64_t *off)
{
    for (int s = FSH_SEG_HEAP; s <= FSH_SEG_DATA; s++) {
        size_t n;
        uintptr_t b = (uintptr_t)seg_base(s, &n), a = (uintptr_t)addr;
        if (b && a >= b && a - b <= n && len <= n - (a - b)) {
            *seg = (enum fsh_seg)s;
            *off = a - b;
            return 0;
        }
    }
    return -EFAULT;
}

void fsh_mr_remote(int pe, enum fsh_seg seg, uint64_t off, uint64_t *raddr, uint64_t *key)
{
    (void)pe;
    *raddr = off;
    *key = (uint64_t)seg + 1;
}

uint64_t fsh_mr_key_on(int pe, int dst, uint64_t key0)
{
    (void)pe;
    return key0 | (uint64_t)dst << 8;
}

void *fsh_mr_local_addr(enum fsh_seg seg, uint64_t off)
{
    size_t n;
    uint8_t *b = seg_base(seg, &n);
    return b ? b + off : NULL;
}

int fsh_mr_reg_local(void *buf, size_t len, struct fsh_mr_set **set)
{
    (void)buf;
    (void)len;
    *set = calloc(1, sizeof(**set));
    return *set ? 0 : fsh_err(-ENOMEM, "", "fake: out of memory");
}

void *fsh_mr_set_desc(const struct fsh_mr_set *set, int rail)
{
    (void)set;
    return desc_of(rail);
}

void fsh_mr_dereg_local(struct fsh_mr_set *set)
{
    free(set);
}

bool fsh_mr_is_device(const void *addr, size_t len)
{
    (void)addr;
    (void)len;
    return false;
}

int fsh_mr_desc(const void *addr, size_t len, int rail, void **desc, struct fsh_mr_tmp **tmp)
{
    (void)addr;
    (void)len;
    *desc = desc_of(rail);
    *tmp = NULL;
    return 0;
}

void fsh_mr_release(struct fsh_mr_tmp *tmp)
{
    (void)tmp;
}

/* ------------------------------------------------------------------ routes (fabric.h) */

const struct fsh_fabric_attr *fsh_fabric_attr(void)
{
    return &fk.attr;
}

bool fsh_fabric_none(void)
{
    return false;
}

int fsh_fabric_nrails(void)
{
    return fk.cfg.nrails;
}

const char *fsh_fabric_rail_name(int rail)
{
    static const char *const names[] = {"fake0", "fake1", "fake2", "fake3"};
    return rail >= 0 && rail < FSH_MAX_RAILS ? names[rail] : "fake?";
}

struct fid_domain *fsh_fabric_domain(int rail)
{
    (void)rail;
    return NULL;
}

struct fid_ep *fsh_fabric_ep(int rail)
{
    return &fk.ep[rail].ep;
}

struct fid_cq *fsh_fabric_cq(int rail)
{
    return &fk.cq[rail].cq;
}

bool fsh_fabric_counts_writes(void)
{
    return fk.cfg.counts_writes;
}

void fsh_fabric_writes(uint64_t *done, uint64_t *failed)
{
    *done = fk.writes_done;
    *failed = fk.writes_failed;
}

bool fsh_fabric_multirail(void)
{
    return fk.cfg.nrails > 1;
}

unsigned fsh_fabric_deaths(void)
{
    return __atomic_load_n(&fk.deaths, __ATOMIC_ACQUIRE);
}

unsigned fsh_fabric_ways_all(int pe)
{
    (void)pe;
    return (unsigned)fk.cfg.nrails;
}

bool fsh_fabric_way_alive(int pe, unsigned way)
{
    return way < (unsigned)fk.cfg.nrails && !fk.rt_dead[pe][way];
}

unsigned fsh_fabric_ways(int pe)
{
    unsigned n = 0;
    for (unsigned w = 0; w < (unsigned)fk.cfg.nrails; w++) {
        n += fsh_fabric_way_alive(pe, w);
    }
    return n;
}

static struct fsh_path path_of(int pe, unsigned way)
{
    return (struct fsh_path){.rail = (int)way, .dst = (int)way,
                             .addr = (uint64_t)pe << 4 | way, .way = way};
}

struct fsh_path fsh_fabric_path_way(int pe, unsigned way)
{
    for (unsigned i = 0; i < (unsigned)fk.cfg.nrails; i++) {
        unsigned w = (way + i) % (unsigned)fk.cfg.nrails;
        if (fsh_fabric_way_alive(pe, w)) {
            return path_of(pe, w);
        }
    }
    return path_of(pe, way % (unsigned)fk.cfg.nrails);
}

struct fsh_path fsh_fabric_path(int pe, unsigned k)
{
    unsigned live = fsh_fabric_ways(pe);
    if (live == 0) {
        return path_of(pe, 0);
    }
    unsigned want = k % live;
    for (unsigned w = 0; w < (unsigned)fk.cfg.nrails; w++) {
        if (fsh_fabric_way_alive(pe, w) && want-- == 0) {
            return path_of(pe, w);
        }
    }
    return path_of(pe, 0);
}

unsigned fsh_fabric_k_of_way(int pe, unsigned way)
{
    unsigned k = 0;
    for (unsigned w = 0; w < way && w < (unsigned)fk.cfg.nrails; w++) {
        k += fsh_fabric_way_alive(pe, w);
    }
    return k;
}

struct fsh_path fsh_fabric_path_atomic(int pe)
{
    return fsh_fabric_path_way(pe, 0);
}

unsigned fsh_fabric_kill_way(int pe, unsigned way, const char *why)
{
    if (fsh_fabric_way_alive(pe, way)) {
        fk.rt_dead[pe][way] = true;
        __atomic_add_fetch(&fk.deaths, 1, __ATOMIC_RELEASE);
        FSH_INFO("fake: way %u to PE %d out of use: %s", way, pe, why ? why : "");
    }
    return fsh_fabric_ways(pe);
}

/* Lanes exist here only for tests that open one themselves (fsh_lane_open): rma.c is told
 * there are none, so no context of the protocol tests gets one. */
bool fsh_fabric_lanes_possible(void)
{
    return false;
}

const char *fsh_fabric_lanes_why_not(void)
{
    return "the fake transport gives lanes only to tests that open them";
}

static struct fi_ops_rma rma_ops;
static struct fi_ops_cq cq_ops;

int fsh_fabric_lane_open(int rail, struct fid_ep **ep, struct fid_cq **cq, size_t depth)
{
    (void)depth;
    struct fake_lane *l = calloc(1, sizeof(*l));
    if (!l) {
        return fsh_err(-ENOMEM, "", "fake: out of memory for a lane");
    }
    l->cq.rail = rail;
    l->cq.lane = true;
    l->cq.cq.ops = &cq_ops;
    l->ep.rail = rail;
    l->ep.cq = &l->cq;
    l->ep.ep.rma = &rma_ops;
    l->next = fk.lanes;
    fk.lanes = l;
    *ep = &l->ep.ep;
    *cq = &l->cq.cq;
    return 0;
}

int fsh_fabric_lane_name(int rail, struct fid_ep *ep, uint8_t *buf, size_t *len)
{
    (void)rail;
    (void)ep;
    (void)buf;
    (void)len;
    return fsh_err(-ENOTSUP, "", "the fake transport's lanes have no address");
}

void fsh_fabric_lane_close(struct fid_ep *ep, struct fid_cq *cq)
{
    (void)cq;
    for (struct fake_lane **p = &fk.lanes; *p; p = &(*p)->next) {
        struct fake_lane *l = *p;
        if (&l->ep.ep != ep) {
            continue;
        }
        for (size_t i = 0; i < fk.nev; i++) {
            if (fk.ev[i].op->cq == &l->cq) {
                fk.ev[i].op->cq = NULL;
            }
        }
        *p = l->next;
        free(l->cq.ent);
        free(l->cq.err);
        free(l);
        return;
    }
}

/* ------------------------------------------------------------------ the wire */

static void ev_add(struct wop *op, enum fake_event_kind kind)
{
    if (fk.nev == fk.evcap) {
        fk.evcap = fk.evcap ? 2 * fk.evcap : 256;
        fk.ev = realloc(fk.ev, fk.evcap * sizeof(*fk.ev));
        if (!fk.ev) {
            abort();
        }
    }
    uint64_t imm = op->data;
    if (fk.cfg.cq_data_size < 8) {
        imm &= 0xFFFFFFFFull;
    }
    fk.ev[fk.nev++] = (struct ev){
        .e = {.kind = kind, .type = op->type, .pe = op->pe, .way = op->way, .len = op->len,
              .has_imm = (op->flags & FI_REMOTE_CQ_DATA) != 0, .imm = imm, .seq = op->seq},
        .op = op};
    op->events++;
}

static void ev_remove(size_t i)
{
    struct wop *op = fk.ev[i].op;
    fk.ev[i] = fk.ev[--fk.nev];
    if (--op->events == 0) {
        free(op->copy);
        free(op);
    }
}

static void cq_push(struct fake_cq *q, const struct fi_cq_data_entry *e)
{
    if (q->nent == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->ent = realloc(q->ent, q->cap * sizeof(*q->ent));
        if (!q->ent) {
            abort();
        }
    }
    q->ent[q->nent++] = *e;
}

static void cq_push_err(struct fake_cq *q, const struct fi_cq_err_entry *e)
{
    if (q->nerr == q->errcap) {
        q->errcap = q->errcap ? 2 * q->errcap : 16;
        q->err = realloc(q->err, q->errcap * sizeof(*q->err));
        if (!q->err) {
            abort();
        }
    }
    q->err[q->nerr++] = *e;
}

/* The target's bytes of remote segment i of op: NULL (a violation) when its key or range is
 * wrong. */
static uint8_t *target_of(const struct wop *op, size_t i)
{
    const struct fi_rma_iov *r = &op->rma[i];
    int rail = (int)(r->key >> 8), seg = (int)(r->key & 0xff) - 1;
    if (rail != op->dst) {
        violation("%s #%llu to PE %d on way %u carries a key of rail %d, but reaches rail %d",
                  op->type == FSH_X_WRITE ? "write" : "read", (unsigned long long)op->seq, op->pe,
                  op->way, rail, op->dst);
        return NULL;
    }
    size_t n;
    uint8_t *b = seg_base(seg, &n);
    if (!b || r->addr > n || r->len > n - r->addr) {
        violation("%s #%llu to PE %d: [%llu, +%zu) is outside segment %d (%zu bytes)",
                  op->type == FSH_X_WRITE ? "write" : "read", (unsigned long long)op->seq, op->pe,
                  (unsigned long long)r->addr, (size_t)r->len, seg, n);
        return NULL;
    }
    return b + r->addr;
}

static void land(struct wop *op)
{
    op->landed = true;
    fk.st.landed++;
    if (op->type == FSH_X_READ) {
        uint8_t *src = target_of(op, 0);
        if (src) {
            memcpy(op->local, src, op->len);
        }
        return;
    }
    const uint8_t *from = op->copy ? op->copy : op->local;
    for (size_t i = 0; i < op->nrma; i++) {
        uint8_t *dst = target_of(op, i);
        if (dst) {
            memcpy(dst, from, op->rma[i].len);
        }
        from += op->rma[i].len;
    }
    if (op->flags & FI_REMOTE_CQ_DATA) {
        /* shm reports a target's completion with context 0x1: the engine must not take it
         * for one of its records. */
        struct fi_cq_data_entry e = {.op_context = (void *)1,
                                     .flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
                                     .len = op->len, .data = op->data};
        if (fk.cfg.cq_data_size < 8) {
            e.data &= 0xFFFFFFFFull;
        }
        cq_push(&fk.cq[op->dst], &e);
        fk.st.remote_events++;
    }
}

static void done(struct wop *op)
{
    op->done = true;
    if (op->type == FSH_X_WRITE && !op->landed && !op->copy) {
        /* Complete before landing (not delivery complete): the source is the caller's again
         * once it sees the completion, so the wire keeps a copy. */
        op->copy = malloc(op->len ? op->len : 1);
        if (!op->copy) {
            abort();
        }
        memcpy(op->copy, op->local, op->len);
    }
    if (op->failed) {
        struct fi_cq_err_entry e = {.op_context = op->context, .err = FI_ECONNRESET,
                                    .len = op->len};
        if (op->cq) {
            cq_push_err(op->cq, &e);
        }
        fk.st.errors++;
        if (!(op->flags & FI_COMPLETION)) {
            fk.writes_failed++;
        }
        return;
    }
    fk.st.done++;
    if (!(op->flags & FI_COMPLETION)) {
        fk.writes_done++;
        return;
    }
    struct fi_cq_data_entry e = {
        .op_context = op->context,
        .flags = FI_RMA | (op->type == FSH_X_WRITE ? FI_WRITE : FI_READ), .len = op->len};
    if (!op->cq) {
        return; /* its lane closed */
    }
    cq_push(op->cq, &e);
    if (fk.dup_next) {
        fk.dup_next = false;
        cq_push(op->cq, &e);
    }
}

bool fake_eligible(size_t i)
{
    const struct ev *v = &fk.ev[i];
    if (fk.gate && !fk.gate(&v->e)) {
        return false;
    }
    if (v->e.kind == FAKE_LAND) {
        return true;
    }
    const struct wop *op = v->op;
    bool after_land = op->type == FSH_X_READ ||
                      ((op->flags & FI_DELIVERY_COMPLETE) && fk.cfg.delivery_complete);
    return !after_land || op->landed || op->failed;
}

int fake_deliver(size_t i)
{
    if (i >= fk.nev || !fake_eligible(i)) {
        return -EAGAIN;
    }
    struct ev v = fk.ev[i];
    if (v.e.kind == FAKE_LAND) {
        land(v.op);
    } else {
        done(v.op);
    }
    ev_remove(i);
    return 0;
}

size_t fake_pending(void)
{
    return fk.nev;
}

const struct fake_event *fake_event_at(size_t i)
{
    return i < fk.nev ? &fk.ev[i].e : NULL;
}

long fake_find(enum fake_event_kind kind, int imm_kind)
{
    for (size_t i = 0; i < fk.nev; i++) {
        const struct fake_event *e = &fk.ev[i].e;
        if (e->kind != kind) {
            continue;
        }
        int ik = e->has_imm ? (int)((uint32_t)e->imm >> FSH_IMM_KIND_SHIFT) : -1;
        if (imm_kind == 0 || ik == imm_kind) {
            return (long)i;
        }
    }
    return -1;
}

/* Deliver one eligible event picked at random: false when none is eligible. */
static bool deliver_random(void)
{
    size_t n = 0;
    for (size_t i = 0; i < fk.nev; i++) {
        n += fake_eligible(i);
    }
    if (n == 0) {
        return false;
    }
    size_t pick = (size_t)(rnd() % n);
    for (size_t i = 0; i < fk.nev; i++) {
        if (fake_eligible(i) && pick-- == 0) {
            fake_deliver(i);
            break;
        }
    }
    return true;
}

size_t fake_drain(void)
{
    size_t n = 0;
    while (deliver_random()) {
        n++;
    }
    return n;
}

void fake_set_gate(bool (*gate)(const struct fake_event *e))
{
    fk.gate = gate;
}

void fake_set_tick(void (*tick)(void))
{
    fk.tick = tick;
}

void fake_set_mode(enum fake_mode mode)
{
    fk.cfg.mode = mode;
}

void fake_remote_event(uint64_t imm)
{
    struct fi_cq_data_entry e = {.op_context = NULL,
                                 .flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
                                 .data = imm};
    cq_push(&fk.cq[0], &e);
    fk.st.remote_events++;
}

void fake_fail_way(int pe, unsigned way)
{
    fk.dead[pe][way] = true;
    for (size_t i = 0; i < fk.nev;) {
        struct wop *op = fk.ev[i].op;
        if (op->pe == pe && op->way == way && !op->done) {
            op->failed = true;
            if (fk.ev[i].e.kind == FAKE_LAND) {
                ev_remove(i); /* lost with the way */
                continue;
            }
        }
        i++;
    }
}

void fake_full_next(unsigned n)
{
    fk.full_next = n;
}

void fake_duplicate_next_done(void)
{
    fk.dup_next = true;
}

const struct fake_stats *fake_stats(void)
{
    return &fk.st;
}

unsigned fake_violations(void)
{
    return fk.violations;
}

void *fake_data_segment(void)
{
    return data_seg;
}

/* ------------------------------------------------------------------ the endpoint */

static ssize_t post(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags, int type)
{
    int rail = ((struct fake_ep *)ep)->rail;
    int pe = (int)(msg->addr >> 4), dst = (int)(msg->addr & 15);
    if (pe < 0 || pe >= fk.cfg.npes || dst >= fk.cfg.nrails) {
        violation("post to fi_addr 0x%llx, which no peer has", (unsigned long long)msg->addr);
        return -FI_EINVAL;
    }
    if (fk.full_next > 0 || (fk.cfg.eagain_every && ++fk.tries % fk.cfg.eagain_every == 0)) {
        fk.full_next -= fk.full_next > 0;
        fk.st.eagain++;
        return -FI_EAGAIN; /* the queue is full: the caller polls and tries again */
    }
    unsigned way = (unsigned)dst;
    if (rail != dst) {
        violation("post on rail %d to PE %d's rail %d: no way joins them", rail, pe, dst);
    }
    if (fk.rt_dead[pe][way]) {
        violation("post to PE %d on way %u, which the runtime took out of use", pe, way);
    }
    if (fk.cfg.mr_local && !(flags & FI_INJECT) && msg->desc && msg->desc[0] != desc_of(rail)) {
        violation("post on rail %d with a descriptor of another rail", rail);
    }
    if (fk.cfg.cq_data_size < 8 && (flags & FI_REMOTE_CQ_DATA) && (msg->data >> 32) != 0) {
        violation("immediate data 0x%llx does not fit the provider's 4 bytes",
                  (unsigned long long)msg->data);
    }
    if (msg->rma_iov_count > fk.cfg.rma_iov_limit) {
        violation("a %s to %zu remote segments; the provider takes %zu",
                  type == FSH_X_WRITE ? "write" : "read", msg->rma_iov_count,
                  fk.cfg.rma_iov_limit);
    }
    struct wop *op = calloc(1, sizeof(*op));
    if (!op) {
        return -FI_ENOMEM;
    }
    op->type = type;
    op->pe = pe;
    op->rail = rail;
    op->cq = ((struct fake_ep *)ep)->cq;
    op->dst = dst;
    op->way = way;
    op->context = msg->context;
    op->flags = flags;
    op->local = msg->msg_iov[0].iov_base;
    op->len = msg->msg_iov[0].iov_len;
    op->nrma = msg->rma_iov_count;
    memcpy(op->rma, msg->rma_iov, op->nrma * sizeof(op->rma[0]));
    op->data = msg->data;
    op->seq = fk.st.posted++;
    if (way < 4) {
        fk.st.posted_on_way[way]++;
    }
    if (type == FSH_X_WRITE && (flags & FI_INJECT)) {
        if (op->len > fk.cfg.inject_size) {
            violation("inject of %zu bytes; the provider injects %zu", op->len,
                      fk.cfg.inject_size);
        }
        op->copy = malloc(op->len ? op->len : 1);
        if (!op->copy) {
            abort();
        }
        memcpy(op->copy, op->local, op->len);
    }
    if (fk.dead[pe][way]) {
        op->failed = true; /* the way is broken: nothing lands, the completion is an error */
    } else {
        ev_add(op, FAKE_LAND);
    }
    ev_add(op, FAKE_DONE);
    return 0;
}

static ssize_t ep_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    return post(ep, msg, flags, FSH_X_WRITE);
}

static ssize_t ep_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    return post(ep, msg, flags, FSH_X_READ);
}

static struct fi_ops_rma rma_ops = {
    .size = sizeof(struct fi_ops_rma), .readmsg = ep_readmsg, .writemsg = ep_writemsg};

/* ------------------------------------------------------------------ the completion queue */

static ssize_t cq_read(struct fid_cq *cq, void *buf, size_t count)
{
    struct fake_cq *q = (struct fake_cq *)cq;
    if (q->rail == 0 && !q->lane && !fk.delivering) {
        fk.delivering = true;
        if (fk.tick) {
            fk.tick();
        }
        if (fk.cfg.mode == FAKE_AUTO) {
            unsigned n = 1 + (unsigned)(rnd() % 4);
            while (n-- && deliver_random()) {
            }
        }
        fk.delivering = false;
    }
    if (q->nent == 0) {
        return q->nerr ? -FI_EAVAIL : -FI_EAGAIN;
    }
    size_t n = q->nent < count ? q->nent : count;
    memcpy(buf, q->ent, n * sizeof(*q->ent));
    memmove(q->ent, q->ent + n, (q->nent - n) * sizeof(*q->ent));
    q->nent -= n;
    return (ssize_t)n;
}

static ssize_t cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *buf, uint64_t flags)
{
    (void)flags;
    struct fake_cq *q = (struct fake_cq *)cq;
    if (q->nerr == 0) {
        return -FI_EAGAIN;
    }
    *buf = q->err[0];
    memmove(q->err, q->err + 1, (q->nerr - 1) * sizeof(*q->err));
    q->nerr--;
    return 1;
}

static const char *cq_strerror(struct fid_cq *cq, int prov_errno, const void *err_data,
                               char *buf, size_t len)
{
    (void)cq;
    (void)prov_errno;
    (void)err_data;
    snprintf(buf, len, "fake transport: the way failed");
    return buf;
}

static struct fi_ops_cq cq_ops = {
    .size = sizeof(struct fi_ops_cq), .read = cq_read, .readerr = cq_readerr,
    .strerror = cq_strerror};

/* ------------------------------------------------------------------ start and stop */

struct fake_config fake_lean(uint64_t seed)
{
    return (struct fake_config){
        .npes = 2, .nrails = 1, .inject_size = 32, .max_msg_size = 8192, .rma_iov_limit = 1,
        .cq_data_size = 4, .delivery_complete = true, .count_arrivals = false,
        .mr_local = true, .depth = 64, .heap_size = 4u << 20, .seed = seed, .chaos = false,
        .mode = FAKE_AUTO, .timeout = 5};
}

int fake_start(const struct fake_config *cfg)
{
    memset(&fk, 0, sizeof(fk));
    fk.cfg = *cfg;
    if (cfg->npes < 2 || cfg->npes > MAXPE || cfg->nrails < 1 || cfg->nrails > FSH_MAX_RAILS) {
        return -EINVAL;
    }
    fk.rng = cfg->seed * 0x9e3779b97f4a7c15ULL + 7;
    int rc = fsh_env_load();
    if (rc != 0) {
        return rc;
    }
    int level = fsh_log_parse_level(fsh_env()->FABSHMEM_LOG);
    fsh_rt = (struct fsh_rt){.pe = 0, .npes = cfg->npes, .local_rank = 0, .local_size = 1,
                             .node_id = 0, .num_nodes = cfg->npes,
                             .log_level = level < 0 ? FSH_LOG_WARN : level,
                             .state = FSH_STATE_RUNNING, .thread_level = 0, .host = "fake",
                             .pid = (int)getpid()};
    struct fsh_fabric_attr *a = &fk.attr;
    snprintf(a->prov, sizeof(a->prov), "fake");
    snprintf(a->domain, sizeof(a->domain), "fake0");
    a->mr_local = cfg->mr_local;
    a->has_atomics = false;
    a->delivery_complete = cfg->delivery_complete;
    a->count_arrivals = cfg->count_arrivals;
    a->manual_progress = true;
    a->inject_size = cfg->inject_size;
    a->max_msg_size = cfg->max_msg_size;
    a->rma_iov_limit = cfg->rma_iov_limit;
    a->cq_data_size = cfg->cq_data_size;
    a->tx_depth = cfg->depth;
    a->mr_key_size = 8;
    for (int r = 0; r < FSH_MAX_RAILS; r++) {
        fk.cq[r].rail = r;
        fk.cq[r].cq.ops = &cq_ops;
        fk.ep[r].rail = r;
        fk.ep[r].cq = &fk.cq[r];
        fk.ep[r].ep.rma = &rma_ops;
    }
    fk.heap = aligned_alloc(4096, cfg->heap_size);
    if (!fk.heap) {
        return -ENOMEM;
    }
    memset(fk.heap, 0, cfg->heap_size);
    memset(data_seg, 0, sizeof(data_seg));
    struct fsh_progress_config pc = {.depth = cfg->depth, .yield = false,
                                     .timeout = cfg->timeout, .user_timeout = cfg->timeout,
                                     .chaos_delay = cfg->chaos, .seed = cfg->seed};
    rc = fsh_progress_init(&pc);
    if (rc == 0) {
        rc = fsh_xport_init(cfg->chaos);
    }
    if (rc == 0) {
        rc = fsh_heap_init(fk.heap, cfg->heap_size);
    }
    return rc;
}

void fake_stop(void)
{
    fsh_xport_fini();
    fsh_progress_fini();
    fsh_heap_fini();
    while (fk.nev) {
        ev_remove(fk.nev - 1);
    }
    free(fk.ev);
    for (int r = 0; r < FSH_MAX_RAILS; r++) {
        free(fk.cq[r].ent);
        free(fk.cq[r].err);
    }
    free(fk.heap);
    memset(&fk, 0, sizeof(fk));
}

uint64_t fake_heap_off(const void *p, size_t len)
{
    enum fsh_seg seg;
    uint64_t off = 0;
    if (fsh_mr_lookup(p, len, &seg, &off) != 0 || seg != FSH_SEG_HEAP) {
        fprintf(stderr, "fake: %p (%zu bytes) is not in the symmetric heap\n", p, len);
        abort();
    }
    return off;
}
