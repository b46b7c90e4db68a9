/*
 * progress.h: the completion queue, the per-operation records, and the one wait loop.
 *
 * Every fabric operation carries a struct fsh_op from a fixed pool; its completion bumps the
 * counters of the tracks it belongs to (a context's, and optionally a blocking call's own).
 * Remote events (immediate data of a write aimed at us) are dispatched by the kind in their top
 * four bits to the handler registered for it. Every blocking wait in the runtime is
 * fsh_progress_wait(): it polls, yields when oversubscribed, and ends with a report naming the
 * operation and the peer after FABSHMEM_TIMEOUT seconds.
 */
#ifndef FSH_PROGRESS_H
#define FSH_PROGRESS_H

#include <rdma/fabric.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Counts of operations posted and completed; quiet waits for equality. */
struct fsh_op_track {
    uint64_t posted;
    uint64_t completed;
};

enum fsh_op_kind { FSH_OP_PUT = 1, FSH_OP_GET, FSH_OP_PUT_IMM, FSH_OP_ATOMIC };

struct fsh_op {
    struct fi_context2 fi;       /* provider scratch space (FI_CONTEXT2 mode); stays first */
    struct fsh_op_track *track;  /* the context's track */
    struct fsh_op_track *sync;   /* a blocking call's own track, or NULL */
    struct fid_mr *tmp_mr;       /* temporary registration, released on completion */
    size_t len;
    int kind;                    /* enum fsh_op_kind, for error reports */
    int pe;
    struct fsh_op *next_free;
};

/* Immediate data (32 bits; EFA carries 4 bytes): kind in bits 31..28, the rest the kind's. */
#define FSH_IMM_KIND_SHIFT 28
#define FSH_IMM_PAYLOAD_MASK ((1u << FSH_IMM_KIND_SHIFT) - 1)
enum fsh_imm_kind { FSH_IMM_COLL = 1, FSH_IMM_NKINDS = 16 };
typedef void (*fsh_imm_handler)(uint32_t payload);

int fsh_progress_init(size_t depth, bool yield, double timeout_s);
void fsh_progress_fini(void);
int fsh_progress_register_imm(enum fsh_imm_kind kind, fsh_imm_handler fn);

/* An operation record; polls while the pool is empty. NULL (error recorded) on timeout or a
 * fabric error. */
struct fsh_op *fsh_progress_op_get(int kind, int pe, size_t len);
/* Give back a record whose operation was never posted. */
void fsh_progress_op_put(struct fsh_op *op);

/* Read the CQ once and dispatch. >= 0 events handled, or -errno after a fabric error (the
 * error is recorded with the peer and the operation). */
int fsh_progress_poll(void);

/* Poll until done(arg) is true. what/peer name the wait in the timeout report (peer -1: none). */
typedef bool (*fsh_done_fn)(const void *arg);
int fsh_progress_wait(fsh_done_fn done, const void *arg, const char *what, int peer);
/* Poll until every operation of the track completed. */
int fsh_progress_wait_track(const struct fsh_op_track *t, const char *what);

/* Called by busy loops that are not waits (EAGAIN retries): yields when oversubscribed and
 * returns -ETIMEDOUT (recorded) once FABSHMEM_TIMEOUT has passed since *start (0: now). */
int fsh_progress_backoff(double *start, const char *what, int peer);

/* Operations posted and not yet completed, all tracks together (for reports). */
uint64_t fsh_progress_inflight(void);

#endif
