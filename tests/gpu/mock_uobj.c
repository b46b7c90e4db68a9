/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_uobj.c: CUDA user objects for the mock driver (tests/gpu/mock_cuda.c, built into the
 * same libmockcuda.so).
 *
 * As the driver documents them (cuUserObjectCreate and the CUDA Programming Guide, "CUDA User
 * Objects"): an object has a reference count and a destructor; references are owned by the
 * caller (created with the object, cuUserObjectRetain/Release) or by a graph
 * (cuGraphRetainUserObject, with CU_GRAPH_USER_OBJECT_MOVE taking the caller's). An
 * executable graph instantiated from a graph holds references of its own to the graph's
 * objects, and each launch holds them until the launched work ran; so destroying the graph
 * alone, or the executable graph alone, or both while a launch is still queued, never runs the
 * destructor. When the last reference goes, the destructor runs later on one shared thread of
 * the driver's (here: a thread of the mock's), never inside the call that dropped it.
 * Strict as the driver: flags other than CU_USER_OBJECT_NO_DESTRUCTOR_SYNC, a zero count, an
 * object whose references are all gone, releasing or moving more references than the owner
 * holds are CUDA_ERROR_INVALID_VALUE.
 *
 * mock_cuda.c calls the mock_uobj_* functions (mock_uobj.h) where a graph is destroyed,
 * instantiated or launched. mock_cuda_uobj_destroyed() (exported, for tests) counts the
 * destructors run.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>

#include "mock_uobj.h"

struct muobj {
    unsigned long refs; /* all owners together; 0: dead (kept, so a stale handle is refused) */
    CUhostFn fn;
    void *ptr;
    struct muobj *next;      /* every object made */
    struct muobj *next_dead; /* the destructor queue */
};

struct mref {
    const void *owner; /* NULL: the caller's; else a graph, an executable graph, a launch */
    struct muobj *o;
    unsigned long count;
    struct mref *next;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct muobj *all;
    struct mref *refs;
    struct muobj *queue, **queue_tail; /* destructors to run, in order */
    int thread_up;
    unsigned long destroyed;
} mu = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

unsigned long mock_cuda_uobj_destroyed(void);

unsigned long mock_cuda_uobj_destroyed(void)
{
    pthread_mutex_lock(&mu.lock);
    unsigned long n = mu.destroyed;
    pthread_mutex_unlock(&mu.lock);
    return n;
}

/* The driver's shared destructor thread. */
static void *destructor_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu.lock);
    for (;;) {
        while (!mu.queue) {
            pthread_cond_wait(&mu.cond, &mu.lock);
        }
        struct muobj *o = mu.queue;
        mu.queue = o->next_dead;
        if (!mu.queue) {
            mu.queue_tail = NULL;
        }
        pthread_mutex_unlock(&mu.lock);
        o->fn(o->ptr);
        pthread_mutex_lock(&mu.lock);
        mu.destroyed++;
    }
    return NULL;
}

/* Under mu.lock: n references of o go; at the last one its destructor is queued. */
static void unref(struct muobj *o, unsigned long n)
{
    o->refs -= n;
    if (o->refs > 0) {
        return;
    }
    if (!mu.thread_up) {
        pthread_t t;
        if (pthread_create(&t, NULL, destructor_main, NULL) != 0) {
            return; /* the destructor never runs, as when a process exits before it */
        }
        pthread_detach(t);
        mu.thread_up = 1;
    }
    o->next_dead = NULL;
    if (mu.queue_tail) {
        *mu.queue_tail = o;
    } else {
        mu.queue = o;
    }
    mu.queue_tail = &o->next_dead;
    pthread_cond_signal(&mu.cond);
}

/* Under mu.lock: a live object behind handle h, or NULL. */
static struct muobj *live(CUuserObject h)
{
    for (struct muobj *o = mu.all; o; o = o->next) {
        if ((CUuserObject)o == h) {
            return o->refs > 0 ? o : NULL;
        }
    }
    return NULL;
}

/* Under mu.lock: owner's reference entry for o (made when make). */
static struct mref *ref_of(const void *owner, struct muobj *o, int make)
{
    for (struct mref *r = mu.refs; r; r = r->next) {
        if (r->owner == owner && r->o == o) {
            return r;
        }
    }
    if (!make) {
        return NULL;
    }
    struct mref *r = calloc(1, sizeof(*r));
    if (r) {
        r->owner = owner;
        r->o = o;
        r->next = mu.refs;
        mu.refs = r;
    }
    return r;
}

/* Under mu.lock: drop n of owner's references to o (n <= what it holds). */
static void drop(struct mref *r, unsigned long n)
{
    r->count -= n;
    unref(r->o, n);
}

CUresult CUDAAPI cuUserObjectCreate(CUuserObject *out, void *ptr, CUhostFn destroy,
                                    unsigned int count, unsigned int flags)
{
    mock_uobj_count(__func__);
    if (!out || !destroy || count == 0 || count > 0x7fffffffu ||
        flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct muobj *o = calloc(1, sizeof(*o));
    if (!o) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    o->fn = destroy;
    o->ptr = ptr;
    pthread_mutex_lock(&mu.lock);
    struct mref *r = ref_of(NULL, o, 1);
    if (r) {
        o->refs = count;
        r->count = count;
        o->next = mu.all;
        mu.all = o;
    }
    pthread_mutex_unlock(&mu.lock);
    if (!r) {
        free(o);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = (CUuserObject)o;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuUserObjectRetain(CUuserObject h, unsigned int count)
{
    mock_uobj_count(__func__);
    return mock_uobj_add(NULL, h, count, 0);
}

CUresult CUDAAPI cuUserObjectRelease(CUuserObject h, unsigned int count)
{
    mock_uobj_count(__func__);
    return mock_uobj_sub(NULL, h, count);
}

CUresult mock_uobj_add(const void *owner, CUuserObject h, unsigned int count, int move)
{
    if (count == 0 || count > 0x7fffffffu) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&mu.lock);
    CUresult res = CUDA_ERROR_INVALID_VALUE;
    struct muobj *o = live(h);
    struct mref *from = o && move ? ref_of(NULL, o, 0) : NULL;
    if (o && (!move || (from && from->count >= count))) {
        struct mref *r = ref_of(owner, o, 1);
        res = r ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        if (r) {
            r->count += count;
            if (move) {
                from->count -= count; /* moved: the total stays */
            } else {
                o->refs += count;
            }
        }
    }
    pthread_mutex_unlock(&mu.lock);
    return res;
}

CUresult mock_uobj_sub(const void *owner, CUuserObject h, unsigned int count)
{
    if (count == 0 || count > 0x7fffffffu) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_lock(&mu.lock);
    CUresult res = CUDA_ERROR_INVALID_VALUE;
    struct muobj *o = live(h);
    struct mref *r = o ? ref_of(owner, o, 0) : NULL;
    if (r && r->count >= count) {
        drop(r, count);
        res = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mu.lock);
    return res;
}

int mock_uobj_copy(const void *from, const void *to)
{
    int n = 0;
    pthread_mutex_lock(&mu.lock);
    for (struct mref *r = mu.refs; r; r = r->next) {
        if (r->owner != from || r->count == 0) {
            continue;
        }
        struct mref *c = ref_of(to, r->o, 1);
        if (!c) {
            n = -1;
            break;
        }
        c->count += r->count;
        r->o->refs += r->count;
        n++;
    }
    pthread_mutex_unlock(&mu.lock);
    if (n < 0) {
        mock_uobj_drop(to);
    }
    return n;
}

void mock_uobj_drop(const void *owner)
{
    pthread_mutex_lock(&mu.lock);
    for (struct mref **p = &mu.refs; *p;) {
        struct mref *r = *p;
        if (r->owner != owner) {
            p = &r->next;
            continue;
        }
        *p = r->next;
        if (r->count > 0) {
            drop(r, r->count);
        }
        free(r);
    }
    pthread_mutex_unlock(&mu.lock);
}
