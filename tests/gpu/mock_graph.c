/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_graph.c: the mock driver's stream capture and graphs (mock_cuda.c's header says what the
 * mock models). While a stream captures, its operations go into the capture's list instead of
 * its queue; cuGraphLaunch queues a copy of a graph's list on a stream, as often as it is
 * called. User objects (mock_uobj.c) are held by graphs, their executable graphs and launches.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mock_cuda_int.h"

static struct mgraph *graph_of(const void *h, int is_exec)
{
    for (int i = 0; i < MAX_GRAPHS; i++) {
        if ((const void *)&mock_ms.g[i] == h && mock_ms.g[i].used &&
            mock_ms.g[i].is_exec == is_exec) {
            return &mock_ms.g[i];
        }
    }
    return NULL;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream h, CUstreamCaptureMode mode)
{
    COUNT();
    if (h == NULL) {
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
    }
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&mock_ms.lock);
    struct mgraph *g = NULL;
    for (int i = 0; i < MAX_GRAPHS && !g; i++) {
        if (!mock_ms.g[i].used) {
            g = &mock_ms.g[i];
            memset(g, 0, sizeof(*g));
            g->used = 1;
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
    if (!g) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&s->lock);
    CUresult r = CUDA_SUCCESS;
    if (s->capture) {
        r = CUDA_ERROR_ILLEGAL_STATE;
    } else {
        s->capture = g;
        s->capture_broken = 0;
    }
    pthread_mutex_unlock(&s->lock);
    if (r != CUDA_SUCCESS) {
        g->used = 0;
    }
    return r;
}

static void drop_ops(struct mop *op)
{
    while (op) {
        struct mop *next = op->next;
        free(op);
        op = next;
    }
}

CUresult CUDAAPI cuStreamEndCapture(CUstream h, CUgraph *out)
{
    COUNT();
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!out) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&s->lock);
    struct mgraph *g = s->capture;
    int broken = s->capture_broken;
    s->capture = NULL;
    s->capture_broken = 0;
    pthread_mutex_unlock(&s->lock);
    if (!g) {
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    if (broken) {
        drop_ops(g->head);
        pthread_mutex_lock(&mock_ms.lock);
        mock_uobj_drop(g); /* the driver destroys the graph */
        g->used = 0;
        pthread_mutex_unlock(&mock_ms.lock);
        *out = NULL;
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    *out = (CUgraph)g;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *status)
{
    COUNT();
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!status) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&s->lock);
    *status = !s->capture ? CU_STREAM_CAPTURE_STATUS_NONE
              : s->capture_broken ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                  : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    pthread_mutex_unlock(&s->lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream h, CUstreamCaptureStatus *status,
                                        cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                                        const CUgraphEdgeData **edges, size_t *ndeps)
{
    COUNT();
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!status) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&s->lock);
    *status = !s->capture ? CU_STREAM_CAPTURE_STATUS_NONE
              : s->capture_broken ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                  : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    struct mgraph *g = *status == CU_STREAM_CAPTURE_STATUS_ACTIVE ? s->capture : NULL;
    pthread_mutex_unlock(&s->lock);
    if (id) {
        *id = (cuuint64_t)(uintptr_t)g;
    }
    if (graph) {
        *graph = (CUgraph)g;
    }
    if (deps) {
        *deps = NULL; /* nodes are not modelled: the capture is one list */
    }
    if (edges) {
        *edges = NULL;
    }
    if (ndeps) {
        *ndeps = 0;
    }
    return CUDA_SUCCESS;
}

/* References of user objects owned by a graph (not an executable one). */
static CUresult graph_uobj(CUgraph hg, CUuserObject o, unsigned int count, int add, int move)
{
    pthread_mutex_lock(&mock_ms.lock);
    struct mgraph *g = graph_of(hg, 0);
    pthread_mutex_unlock(&mock_ms.lock);
    if (!g || (add && (move & ~CU_GRAPH_USER_OBJECT_MOVE))) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return add ? mock_uobj_add(g, o, count, move) : mock_uobj_sub(g, o, count);
}

CUresult CUDAAPI cuGraphRetainUserObject(CUgraph hg, CUuserObject o, unsigned int count,
                                         unsigned int flags)
{
    COUNT();
    return graph_uobj(hg, o, count, 1, (int)flags);
}

CUresult CUDAAPI cuGraphReleaseUserObject(CUgraph hg, CUuserObject o, unsigned int count)
{
    COUNT();
    return graph_uobj(hg, o, count, 0, 0);
}

/* A copy of a graph's list of operations. */
static struct mop *copy_ops(const struct mop *op, struct mop **tail)
{
    struct mop *head = NULL;
    *tail = NULL;
    for (; op; op = op->next) {
        struct mop *c = malloc(sizeof(*c));
        if (!c) {
            drop_ops(head);
            return NULL;
        }
        *c = *op;
        mock_append(&head, tail, c);
    }
    return head;
}

CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *out, CUgraph hg, unsigned long long flags)
{
    COUNT();
    (void)flags;
    if (!out) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&mock_ms.lock);
    struct mgraph *g = graph_of(hg, 0), *e = NULL;
    for (int i = 0; g && i < MAX_GRAPHS && !e; i++) {
        if (!mock_ms.g[i].used) {
            e = &mock_ms.g[i];
            memset(e, 0, sizeof(*e));
            e->used = 1;
            e->is_exec = 1;
        }
    }
    pthread_mutex_unlock(&mock_ms.lock);
    if (!g) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!e) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->head = copy_ops(g->head, &e->tail);
    if ((g->head && !e->head) || mock_uobj_copy(g, e) < 0) {
        drop_ops(e->head);
        e->used = 0;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec he, CUstream h)
{
    COUNT();
    pthread_mutex_lock(&mock_ms.lock);
    struct mgraph *e = graph_of(he, 1);
    pthread_mutex_unlock(&mock_ms.lock);
    if (!e) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct mstream *s = mock_stream_of(h);
    if (!s) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    struct mop *tail, *head = copy_ops(e->head, &tail);
    if (e->head && !head) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* The launch holds the executable graph's user objects until its last operation ran. */
    struct mop *hold = mock_new_op(MOP_UOBJ_DROP);
    void *launch = malloc(1);
    int held = hold && launch ? mock_uobj_copy(e, launch) : -1;
    if (held <= 0) {
        free(hold);
        free(launch);
        if (held < 0) {
            drop_ops(head);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    } else {
        hold->arg = launch;
        mock_append(&head, &tail, hold);
    }
    pthread_mutex_lock(&s->lock);
    CUresult r = CUDA_SUCCESS;
    if (s->capture) {
        r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* graphs in graphs: not modelled */
    } else if (head) {
        const struct mfence *f = __atomic_load_n(&mock_ms.fence, __ATOMIC_ACQUIRE);
        for (struct mop *op = head; op; op = op->next) {
            op->seq = ++s->queued;
            op->fence = f;
        }
        if (s->tail) {
            s->tail->next = head;
        } else {
            s->head = head;
        }
        s->tail = tail;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->lock);
    if (r != CUDA_SUCCESS) {
        for (struct mop *op = head; op; op = op->next) {
            if (op->kind == MOP_UOBJ_DROP) {
                mock_uobj_drop(op->arg);
                free(op->arg);
            }
        }
        drop_ops(head);
    }
    return r;
}

static CUresult graph_free(const void *h, int is_exec)
{
    pthread_mutex_lock(&mock_ms.lock);
    struct mgraph *g = graph_of(h, is_exec);
    if (g) {
        drop_ops(g->head);
        g->head = g->tail = NULL;
        mock_uobj_drop(g); /* its launches and executable graphs hold references of their own */
        g->used = 0;
    }
    pthread_mutex_unlock(&mock_ms.lock);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec he)
{
    COUNT();
    return graph_free(he, 1);
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hg)
{
    COUNT();
    return graph_free(hg, 0);
}
