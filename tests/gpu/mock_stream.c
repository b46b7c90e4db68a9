/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_stream.c: the mock driver's streams (mock_cuda.c's header says what the mock models).
 *
 * A stream is a queue of operations and a worker thread that runs them in order, after the call
 * that queued them returned. Stream 0 (the legacy stream) is one more such stream, made at its
 * first use; it cannot be captured. While a stream captures (mock_graph.c), its operations go
 * into the capture's list instead. Arguments are checked when an operation is queued or
 * captured (the error code the driver returns for them), never later.
 *
 * Here too: the stream memory operations (write and wait value, on device addresses only),
 * host functions, the pageable copies that return once they ran, and the implicit
 * synchronization of allocations (mock_fence).
 */
#include <cuda.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock_cuda_int.h"

struct mock_stream_state mock_ms = {.lock = PTHREAD_MUTEX_INITIALIZER};

int mock_memops_supported(void)
{
    const char *e = getenv("MOCK_CUDA_STREAM_MEMOPS");
    return !e || atoi(e) != 0;
}

static void *stream_main(void *arg);

static int start_stream(struct mstream *s)
{
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->head = s->tail = NULL;
    s->busy = s->stop = 0;
    s->queued = s->ran = 0;
    s->life = ++mock_ms.lives; /* under mock_ms.lock, as every start_stream */
    s->capture = NULL;
    s->capture_broken = 0;
    if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
        return -1;
    }
    s->used = 1;
    return 0;
}

/* The stream behind a handle: 0 is the legacy stream (started at first use), else one of ours
 * and alive. NULL for anything else, as the driver answers CUDA_ERROR_INVALID_HANDLE. */
struct mstream *mock_stream_of(CUstream h)
{
    pthread_mutex_lock(&mock_ms.lock);
    struct mstream *s = NULL;
    if (h == NULL) {
        s = &mock_ms.s[0];
        if (!s->used && start_stream(s) != 0) {
            s = NULL;
        }
    } else {
        for (int i = 1; i < MAX_STREAMS; i++) {
            if ((CUstream)&mock_ms.s[i] == h && mock_ms.s[i].used) {
                s = &mock_ms.s[i];
            }
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return s;
}

void mock_append(struct mop **head, struct mop **tail, struct mop *op)
{
    op->next = NULL;
    if (*tail) {
        (*tail)->next = op;
    } else {
        *head = op;
    }
    *tail = op;
}

/* Queue op on s, or record it in the capture; op is taken over. *seq (if not NULL): op's place
 * in the queue, 0 when it was recorded. */
static CUresult queue_seq(struct mstream *s, struct mop *op, unsigned long *seq)
{
    pthread_mutex_lock(&s->lock);
    unsigned long n = 0;
    if (s->capture) {
        mock_append(&s->capture->head, &s->capture->tail, op);
    } else {
        op->seq = n = ++s->queued;
        op->fence = __atomic_load_n(&mock_ms.fence, __ATOMIC_ACQUIRE);
        mock_append(&s->head, &s->tail, op);
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    if (seq) {
        *seq = n;
    }
    return CUDA_SUCCESS;
}

static CUresult queue(struct mstream *s, struct mop *op)
{
    return queue_seq(s, op, NULL);
}

CUresult mock_fence(void)
{
    struct mfence *f = calloc(1, sizeof(*f));
    if (!f) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&mock_ms.lock);
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct mstream *s = &mock_ms.s[i];
        if (s->used) {
            pthread_mutex_lock(&s->lock);
            f->upto[i] = s->queued;
            f->life[i] = s->life;
            pthread_mutex_unlock(&s->lock);
        }
    }
    __atomic_store_n(&mock_ms.fence, f, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mock_ms.lock);
    return CUDA_SUCCESS;
}

/* Whether every stream ran what it had queued at fence f (a stream since destroyed did). */
static int fence_passed(const struct mfence *f)
{
    for (int i = 0; i < MAX_STREAMS; i++) {
        struct mstream *s = &mock_ms.s[i];
        if (!f->upto[i]) {
            continue;
        }
        pthread_mutex_lock(&s->lock);
        int done = !s->used || s->life != f->life[i] || s->ran >= f->upto[i];
        pthread_mutex_unlock(&s->lock);
        if (!done) {
            return 0;
        }
    }
    return 1;
}

/* Until s's worker finished the operation queued as seq (and so everything before it). */
static void wait_ran(struct mstream *s, unsigned long seq)
{
    pthread_mutex_lock(&s->lock);
    while (s->ran < seq) {
        pthread_cond_wait(&s->cond, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

struct mop *mock_new_op(enum mop_kind kind)
{
    struct mop *op = calloc(1, sizeof(*op));
    if (op) {
        op->kind = kind;
    }
    return op;
}

/* A device address the stream memory operations may use: device memory (1), a host-mapped
 * allocation's device mapping (2, *host set to its host address), else 0. */
static int device_word(uintptr_t p, size_t n, uintptr_t *host)
{
    pthread_mutex_lock(&mock_mem.lock);
    int i = mock_find(p, n);
    pthread_mutex_unlock(&mock_mem.lock);
    if (i >= 0) {
        *host = p;
        return 1;
    }
    pthread_mutex_lock(&mock_ms.lock);
    int kind = 0;
    for (int j = 0; j < MAX_HOST_ALLOCS; j++) {
        if (mock_ms.h[j].len && p >= mock_ms.h[j].dev && p - mock_ms.h[j].dev <= mock_ms.h[j].len &&
            n <= mock_ms.h[j].len - (p - mock_ms.h[j].dev)) {
            *host = mock_ms.h[j].host + (p - mock_ms.h[j].dev);
            kind = 2;
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return kind;
}

static uint64_t load_word(uintptr_t p, size_t n)
{
    uintptr_t h;
    int kind = device_word(p, n, &h);
    uint64_t v = 0;
    if (kind == 1) {
        pthread_mutex_lock(&mock_mem.lock);
        mock_open_rw(p, n, 1);
    }
    if (kind) {
        v = n == 4 ? __atomic_load_n((uint32_t *)h, __ATOMIC_ACQUIRE)
                   : __atomic_load_n((uint64_t *)h, __ATOMIC_ACQUIRE);
    }
    if (kind == 1) {
        mock_open_rw(p, n, 0);
        pthread_mutex_unlock(&mock_mem.lock);
    }
    return v;
}

static void store_word(uintptr_t p, size_t n, uint64_t v)
{
    uintptr_t h;
    int kind = device_word(p, n, &h);
    if (kind == 1) {
        pthread_mutex_lock(&mock_mem.lock);
        mock_open_rw(p, n, 1);
    }
    if (kind && n == 4) {
        __atomic_store_n((uint32_t *)h, (uint32_t)v, __ATOMIC_RELEASE);
    } else if (kind) {
        __atomic_store_n((uint64_t *)h, v, __ATOMIC_RELEASE);
    }
    if (kind == 1) {
        mock_open_rw(p, n, 0);
        pthread_mutex_unlock(&mock_mem.lock);
    }
}

static int wait_met(uint64_t have, uint64_t want, unsigned flags, size_t n)
{
    switch (flags & 0xf) {
    case CU_STREAM_WAIT_VALUE_GEQ:
        return n == 4 ? (int32_t)((uint32_t)have - (uint32_t)want) >= 0
                      : (int64_t)(have - want) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return have == want;
    case CU_STREAM_WAIT_VALUE_AND: return (have & want) != 0;
    case CU_STREAM_WAIT_VALUE_NOR: return ~(have | want) != 0;
    default: return 0;
    }
}

/* One copy; dst_dev/src_dev say which sides the call claims are device memory. */
static CUresult copy(uintptr_t dst, int dst_dev, uintptr_t src, int src_dev, size_t len)
{
    pthread_mutex_lock(&mock_mem.lock);
    int di = mock_find(dst, len), si = mock_find(src, len);
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    if ((di >= 0) == dst_dev && (si >= 0) == src_dev) {
        if (di >= 0) {
            mock_open_rw(dst, len, 1);
        }
        if (si >= 0) {
            mock_open_rw(src, len, 1);
        }
        memmove((void *)dst, (const void *)src, len);
        if (di >= 0) {
            mock_open_rw(dst, len, 0);
        }
        if (si >= 0) {
            mock_open_rw(src, len, 0);
        }
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mock_mem.lock);
    return r;
}

static void run_op(struct mop *op)
{
    switch (op->kind) {
    case MOP_COPY: copy(op->dst, op->dst_dev, op->src, op->src_dev, op->n); break;
    case MOP_MEMSET:
        pthread_mutex_lock(&mock_mem.lock);
        if (mock_find(op->dst, op->n) >= 0) {
            mock_open_rw(op->dst, op->n, 1);
            memset((void *)op->dst, (int)op->value, op->n);
            mock_open_rw(op->dst, op->n, 0);
        }
        pthread_mutex_unlock(&mock_mem.lock);
        break;
    case MOP_WRITE: store_word(op->dst, op->n, op->value); break;
    case MOP_WAIT: {
        /* As a GPU's wait: polls the word, the stream stays blocked until it holds. */
        unsigned spins = 0;
        while (!wait_met(load_word(op->dst, op->n), op->value, op->flags, op->n)) {
            if (++spins < 64) {
                sched_yield();
            } else {
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
            }
        }
        break;
    }
    case MOP_HOSTFN: op->fn(op->arg); break;
    case MOP_UOBJ_DROP: mock_uobj_drop(op->arg); free(op->arg); break; /* a launch ran */
    }
}

static void *stream_main(void *arg)
{
    struct mstream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->head && !s->stop) {
            pthread_cond_wait(&s->cond, &s->lock);
        }
        if (!s->head) {
            break; /* stop, with nothing left */
        }
        struct mop *op = s->head;
        s->head = op->next;
        if (!s->head) {
            s->tail = NULL;
        }
        s->busy = 1;
        unsigned long seq = op->seq;
        pthread_mutex_unlock(&s->lock);
        /* An allocation between it and other streams' earlier work: wait for that work. */
        for (unsigned spins = 0; op->fence && !fence_passed(op->fence); spins++) {
            if (spins < 64) {
                sched_yield();
            } else {
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
            }
        }
        run_op(op);
        free(op);
        pthread_mutex_lock(&s->lock);
        s->busy = 0;
        s->ran = seq;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

CUresult mock_submit_copy(CUstream st, uintptr_t dst, int dst_dev, uintptr_t src, int src_dev,
                          size_t n, int memset_value)
{
    struct mstream *s = mock_stream_of(st);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&mock_mem.lock);
    int di = mock_find(dst, n), si = memset_value >= 0 ? -1 : mock_find(src, n);
    pthread_mutex_unlock(&mock_mem.lock);
    if ((di >= 0) != dst_dev || (si >= 0) != src_dev) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct mop *op = mock_new_op(memset_value >= 0 ? MOP_MEMSET : MOP_COPY);
    if (!op) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    op->dst = dst;
    op->dst_dev = dst_dev;
    op->src = src;
    op->src_dev = src_dev;
    op->n = n;
    op->value = memset_value >= 0 ? (uint64_t)memset_value : 0;
    /* A copy to or from pageable host memory returns once it ran (the header says why). */
    int host_side = memset_value < 0 && dst_dev != src_dev;
    int pageable = host_side && !mock_pinned(dst_dev ? src : dst, n);
    unsigned long seq = 0;
    CUresult r = queue_seq(s, op, &seq);
    if (r == CUDA_SUCCESS && pageable && seq) {
        wait_ran(s, seq);
    }
    return r;
}

CUresult CUDAAPI cuStreamCreate(CUstream *out, unsigned int flags)
{
    COUNT();
    if (!out || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&mock_ms.lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 1; i < MAX_STREAMS; i++) {
        if (!mock_ms.s[i].used) {
            if (start_stream(&mock_ms.s[i]) == 0) {
                *out = (CUstream)&mock_ms.s[i];
                r = CUDA_SUCCESS;
            }
            break;
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return r;
}

/* The driver lets a destroyed stream finish its work; so does the mock, then ends the thread. */
CUresult CUDAAPI cuStreamDestroy(CUstream h)
{
    COUNT();
    struct mstream *s = h ? mock_stream_of(h) : NULL;
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_mutex_lock(&mock_ms.lock);
    s->used = 0;
    pthread_mutex_unlock(&mock_ms.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream h)
{
    COUNT();
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&s->lock);
    if (s->capture) {
        s->capture_broken = 1; /* the driver invalidates the capture */
        pthread_mutex_unlock(&s->lock);
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    while (s->head || s->busy) {
        pthread_cond_wait(&s->cond, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream h)
{
    COUNT();
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&s->lock);
    CUresult r = s->capture ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                 : (s->head || s->busy) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
    pthread_mutex_unlock(&s->lock);
    return r;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream h, CUcontext *ctx)
{
    COUNT();
    if (!mock_stream_of(h) || !ctx) {
        return !ctx ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
    }
    *ctx = (CUcontext)&mock_mem.ctx_token;
    return CUDA_SUCCESS;
}

static CUresult mem_op(CUstream h, enum mop_kind kind, CUdeviceptr addr, uint64_t value,
                       size_t n, unsigned flags)
{
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!mock_memops_supported()) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    uintptr_t host;
    if ((uintptr_t)addr % n != 0 || !device_word((uintptr_t)addr, n, &host)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    unsigned cmp = flags & 0xf;
    if (kind == MOP_WAIT && cmp != CU_STREAM_WAIT_VALUE_GEQ && cmp != CU_STREAM_WAIT_VALUE_EQ &&
        cmp != CU_STREAM_WAIT_VALUE_AND && cmp != CU_STREAM_WAIT_VALUE_NOR) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct mop *op = mock_new_op(kind);
    if (!op) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    op->dst = (uintptr_t)addr;
    op->n = n;
    op->value = value;
    op->flags = flags;
    return queue(s, op);
}

CUresult CUDAAPI cuStreamWriteValue32(CUstream h, CUdeviceptr a, cuuint32_t v, unsigned int fl)
{
    COUNT();
    return mem_op(h, MOP_WRITE, a, v, 4, fl);
}

CUresult CUDAAPI cuStreamWriteValue64(CUstream h, CUdeviceptr a, cuuint64_t v, unsigned int fl)
{
    COUNT();
    return mem_op(h, MOP_WRITE, a, v, 8, fl);
}

CUresult CUDAAPI cuStreamWaitValue32(CUstream h, CUdeviceptr a, cuuint32_t v, unsigned int fl)
{
    COUNT();
    return mem_op(h, MOP_WAIT, a, v, 4, fl);
}

CUresult CUDAAPI cuStreamWaitValue64(CUstream h, CUdeviceptr a, cuuint64_t v, unsigned int fl)
{
    COUNT();
    return mem_op(h, MOP_WAIT, a, v, 8, fl);
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream h, CUhostFn fn, void *arg)
{
    COUNT();
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!fn) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct mop *op = mock_new_op(MOP_HOSTFN);
    if (!op) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    op->fn = fn;
    op->arg = arg;
    return queue(s, op);
}
