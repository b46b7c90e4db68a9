/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_cuda_int.h: the state and functions shared by the mock driver's files (mock_cuda.c:
 * devices, memory, copies, IPC, host memory; mock_stream.c: streams; mock_graph.c: capture and
 * graphs), not exported. mock_cuda.c's header says what the mock models.
 */
#ifndef FSH_MOCK_CUDA_INT_H
#define FSH_MOCK_CUDA_INT_H

#include <cuda.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "mock_uobj.h"

/* ---------------------------------------------------------------- device memory (mock_cuda.c) */

#define MAX_ALLOCS 256

struct mock_mem_state {

    pthread_mutex_t lock;
    struct {
        uintptr_t base;
        size_t len;
        int fd;   /* the memfd behind it (exported: -1 for an imported mapping) */
        int ipc;  /* imported with cuIpcOpenMemHandle */
    } a[MAX_ALLOCS];
    int n;
    int ctx_token;
};
MOCK_HIDDEN extern struct mock_mem_state mock_mem;

/* Count a call of the entry point fn (its __func__). */
MOCK_HIDDEN void mock_count(const char *fn);
#define COUNT() mock_count(__func__)

/* Index of the allocation holding [p, p+len), or -1. Caller holds mock_mem.lock. */
MOCK_HIDDEN int mock_find(uintptr_t p, size_t len);
/* Open (or close again) the pages of [p, p+len) for the mock's own access. */
MOCK_HIDDEN void mock_open_rw(uintptr_t p, size_t len, int on);
/* Whether [p, p+n) is pinned host memory: within one cuMemHostAlloc allocation (either of its
 * mappings) or one cuMemHostRegister range. */
MOCK_HIDDEN int mock_pinned(uintptr_t p, size_t n);

/* ---------------------------------------------------------------- streams (mock_stream.c)
 *
 * Host-mapped memory (cuMemHostAlloc's h[]) and cuMemHostRegister's ranges (reg[]) are kept here
 * too, under the same lock, for the stream memory operations' address checks.
 */

#define MAX_STREAMS 64
#define MAX_GRAPHS 64
#define MAX_HOST_ALLOCS 64
#define MAX_HOST_REGS 64

enum mop_kind { MOP_COPY, MOP_MEMSET, MOP_WRITE, MOP_WAIT, MOP_HOSTFN, MOP_UOBJ_DROP };

struct mop {
    enum mop_kind kind;
    uintptr_t dst, src;
    int dst_dev, src_dev;
    size_t n;          /* bytes (copy, memset); 4 or 8 (write, wait) */
    uint64_t value;    /* memset byte; the value written or waited for */
    unsigned flags;    /* CU_STREAM_WAIT_VALUE_* */
    CUhostFn fn;
    void *arg;
    unsigned long seq; /* its place in its stream's queue (1, 2, ...), set when queued */
    const struct mfence *fence; /* the last fence before it was queued, or NULL */
    struct mop *next;
};

struct mgraph {
    struct mop *head, *tail;
    int is_exec;       /* a CUgraphExec (instantiated) or a CUgraph */
    int used;
};

struct mstream {
    int used;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;  /* an operation was queued; the queue became empty */
    struct mop *head, *tail;
    int busy;             /* the worker runs an operation */
    unsigned long queued; /* operations queued so far (the last one's seq) */
    unsigned long ran;    /* the seq of the last operation the worker finished */
    unsigned long life;   /* which stream this slot holds (a destroyed one's slot is reused) */
    int stop;
    struct mgraph *capture; /* capturing into this graph, or NULL */
    int capture_broken;   /* an illegal call during capture (cuStreamSynchronize) */
};

/* An allocation's implicit synchronization: what each stream had queued at that moment. Kept
 * for the process's life (allocations are few; operations point at them). */
struct mfence {
    unsigned long upto[MAX_STREAMS];
    unsigned long life[MAX_STREAMS];
};

struct mock_stream_state {
    pthread_mutex_t lock;
    struct mstream s[MAX_STREAMS]; /* s[0]: the legacy stream 0 */
    const struct mfence *fence;    /* the last one; atomic */
    unsigned long lives;
    struct mgraph g[MAX_GRAPHS];
    struct {
        uintptr_t host, dev;
        size_t len;
    } h[MAX_HOST_ALLOCS];
    struct {
        uintptr_t base;
        size_t len;       /* 0: a free entry */
    } reg[MAX_HOST_REGS]; /* cuMemHostRegister's ranges */
};
MOCK_HIDDEN extern struct mock_stream_state mock_ms;

/* Whether the stream memory operations are supported (MOCK_CUDA_STREAM_MEMOPS). */
MOCK_HIDDEN int mock_memops_supported(void);
/* The stream behind a handle: 0 is the legacy stream (started at first use), else one of ours
 * and alive. NULL for anything else, as the driver answers CUDA_ERROR_INVALID_HANDLE. */
MOCK_HIDDEN struct mstream *mock_stream_of(CUstream h);
/* Append op to the list head..tail. */
MOCK_HIDDEN void mock_append(struct mop **head, struct mop **tail, struct mop *op);
/* A zeroed operation of that kind, or NULL when out of memory. */
MOCK_HIDDEN struct mop *mock_new_op(enum mop_kind kind);
/* An allocation's implicit synchronization (see mock_cuda.c's header): later operations, on
 * any stream, start only once every stream ran what it had queued before. */
MOCK_HIDDEN CUresult mock_fence(void);
/* Queue one copy (memset_value < 0) or memset on stream st, or record it while capturing. */
MOCK_HIDDEN CUresult mock_submit_copy(CUstream st, uintptr_t dst, int dst_dev, uintptr_t src,
                                      int src_dev, size_t n, int memset_value);

#endif
