/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xport.h: the one place that hands operations to libfabric.
 *
 * rma_post.c and amo.c describe an operation (struct fsh_xreq) in fabshmem's terms and xport posts
 * it in libfabric's: its flags, atomic op and datatype are mapped here, so that no header read
 * above the transport includes <rdma/...>. It retries -FI_EAGAIN with progress (bounded by
 * FABSHMEM_TIMEOUT), accounts it to its tracks once posted, and under FABSHMEM_CHAOS=reorder
 * may hold it back and post it later, out of order with its neighbours, the way SRD may
 * deliver.
 */
#ifndef FSH_XPORT_H
#define FSH_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric.h"
#include "progress.h"

enum fsh_xreq_type { FSH_X_WRITE = 1, FSH_X_READ, FSH_X_ATOMIC, FSH_X_FETCH, FSH_X_COMPARE };

/* What a request asks of the provider (struct fsh_xreq's flags); xport.c turns them into
 * libfabric's, so that nobody above the transport names those. */
enum fsh_xreq_flag {
    FSH_XF_COMPLETION = 1u << 0, /* a completion entry of its own (not a counted write) */
    FSH_XF_INJECT = 1u << 1,     /* the payload is copied at once: the source is free on return */
    FSH_XF_DELIVERED = 1u << 2,  /* complete means visible at the target (delivery complete) */
    FSH_XF_IMM = 1u << 3,        /* `data` reaches the target's completion queue */
};

/* The atomic operations a request may carry (struct fsh_xreq's atomic_op), on unsigned
 * integers of len bytes (4 or 8); xport.c maps them to libfabric's. */
enum fsh_xatomic_op {
    FSH_XA_READ = 1, /* fetch */
    FSH_XA_WRITE,    /* set, or swap when fetching */
    FSH_XA_CSWAP,
    FSH_XA_SUM,
    FSH_XA_BAND,
    FSH_XA_BOR,
    FSH_XA_BXOR,
};

/* A write may scatter its one local buffer over up to this many remote segments (a session's
 * batch, rma_session.c), as far as the provider's rma_iov_limit allows. */
#define FSH_XREQ_SEGS 4
struct fsh_xseg {
    uint64_t addr, len, key;
};

struct fsh_xreq {
    int type;
    struct fsh_op *op;    /* context of the operation; its track and sync get the counts;
                           * NULL: an injected write without completion entry (the write
                           * counter counts it), which marks the track `counted` */
    struct fsh_op_track *counted;
    int pe;
    struct fsh_path path; /* the rail it goes on and the peer's rail it reaches; desc and the
                           * keys are that of those rails (fsh_fabric_path) */
    void *local;          /* write source / read destination / atomic operand */
    size_t len;           /* bytes (write/read), or an atomic's word size (one element) */
    void *desc;           /* local descriptor of `local` on path.rail, or NULL */
    uint64_t raddr, key;  /* the remote side, when nseg is 0 */
    struct fsh_xseg seg[FSH_XREQ_SEGS]; /* writes: the remote segments, in order, when nseg > 0
                                         * (their lengths add up to len) */
    size_t nseg;
    uint64_t data;        /* immediate data (with FSH_XF_IMM) */
    unsigned flags;       /* FSH_XF_* */
    /* atomics */
    int atomic_op;                 /* FSH_XA_* */
    void *result, *result_desc;    /* fetch/compare: where the old value lands */
    const void *compare;           /* compare: the value compared against */
    void *compare_desc;
};

int fsh_xport_init(bool chaos_reorder);
/* Can the provider do atomic op (FSH_XA_*) posted as type (FSH_X_ATOMIC, _FETCH, _COMPARE) on
 * unsigned integers of size bytes? Asks it (fi_query_atomic on rail 0): for init, not per AMO. */
bool fsh_xport_atomic_ok(int op, int type, size_t size);
/* libfabric's datatype (enum fi_datatype) for a value of size bytes: an integer, signed or not,
 * or with is_float a real floating type, with is_complex a complex one; -1 when libfabric has
 * none. When two C types share a size (long double may equal double) the first, most widely
 * supported, wins: the representation is the same. */
int fsh_xport_datatype(size_t size, bool is_signed, bool is_float, bool is_complex);
void fsh_xport_fini(void);
/* Issue every operation FABSHMEM_CHAOS=reorder holds back (in random order), so that what is
 * posted next follows them all. Caller holds the engine lock. */
int fsh_xport_release_held(void);
/* Post (or, under chaos, hold) the operation. Caller holds the engine lock. 0 or -errno
 * (recorded); on error the record has been given back. */
int fsh_xport_post(struct fsh_xreq *r);
/* Post on a context's own endpoint (progress.h's lanes), on its rail r->path.rail: r->op is a
 * record of the lane, and always set. No chaos. In a multi-rail job a copy goes into the
 * record's keep space, for failover, injected payload included: such a lane injects no more
 * than fsh_xport_lane_inject() bytes (SIZE_MAX: no limit). Caller holds the lane's lock once
 * (it is let go while a full queue is waited out). 0 or -errno (recorded); on error the
 * record has been given back. */
int fsh_xport_post_lane(struct fsh_lane *lane, struct fsh_xreq *r);
size_t fsh_xport_lane_inject(void);

/* Multi-rail: keep a copy of every request, the engine's and the lanes', so that a dead way's
 * can go again (every write then has a record: no counted writes). Called by init once the
 * job is known multi-rail. */
int fsh_xport_enable_failover(void);
/* Way `way` to pe is dead (why: what showed it, for the warning: live.c's unanswered probes, or
 * a failed operation): take it out of use and post again on a live way what the engine had in
 * flight on it (each lane does the same with its own at its next poll). pe < 0: only the
 * posting again, for ways that died since. A write with immediate data or an atomic in flight
 * there cannot go again safely: -EHOSTUNREACH (recorded) names it; so does a pe with no live
 * way left. 0 otherwise. Caller holds the engine lock. */
int fsh_xport_fail_way(int pe, unsigned way, const char *why);

#endif
