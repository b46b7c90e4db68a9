/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * guard.c: the engine's and the lanes' mutexes, and the checks of the lock contract
 * (progress.h) on every take and release of them.
 *
 * Every take and release of the engine's and the lanes' locks goes through these, so that
 * --enable-debug builds (FSH_DEBUG_BUILD) check the contract on every one; in release builds
 * they are the bare pthread calls, inline in guard.h (the engine's: only once locking is real). The checks keep,
 * per thread, how many lane locks it holds and where it took the last; per guard, its holder.
 * Never calls another module but the runtime identity (for the message) and never allocates.
 */
#define _GNU_SOURCE
#include "guard.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"

void fsh_guard_init(struct fsh_guard *g)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    memset(&g->check, 0, sizeof(g->check));
}

void fsh_guard_destroy(struct fsh_guard *g)
{
    pthread_mutex_destroy(&g->mutex);
}

#ifdef FSH_DEBUG_BUILD
/* This thread's lane locks: how many takes it holds in all, and the lane it took last (with
 * where), for the messages. Its address is the thread's identity in struct fsh_guard_check. */
static _Thread_local struct {
    int lanes;
    const struct fsh_guard *lane;
    const char *file;
    int line;
} mine;

static const char *base_name(const char *file)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    return slash ? slash + 1 : file ? file : "?";
}

static void __attribute__((noreturn)) lock_broken(const char *file, int line, const char *what,
                                                   const char *rule)
{
    fprintf(stderr, "fabshmem: PE %d/%d (%s:%d): lock contract broken at %s:%d: %s\n",
            fsh_rt.pe, fsh_rt.npes, fsh_rt.host, (int)getpid(), base_name(file), line, what);
    fprintf(stderr, "fabshmem: rule (runtime/progress.h, the lock contract): %s\n", rule);
    fflush(stderr);
    /* The default action, whatever a library installed (libfabric's psm2 provider catches
     * SIGABRT and exits 1): the process ends by SIGABRT, with a core where they are on. */
    signal(SIGABRT, SIG_DFL);
    abort();
}

static bool held(const struct fsh_guard_check *c)
{
    return __atomic_load_n(&c->owner, __ATOMIC_RELAXED) == (const void *)&mine;
}

static void took(struct fsh_guard_check *c, const char *file, int line)
{
    if (c->depth++ == 0) {
        __atomic_store_n(&c->owner, (const void *)&mine, __ATOMIC_RELAXED);
        c->file = file;
        c->line = line;
    }
}

static void released(struct fsh_guard_check *c, const char *name, const char *file, int line)
{
    if (!held(c) || c->depth <= 0) {
        char what[128];
        snprintf(what, sizeof(what), "releases the %s, which this thread does not hold", name);
        lock_broken(file, line, what, "only the thread that took a lock lets it go, once per take");
    }
    if (--c->depth == 0) {
        __atomic_store_n(&c->owner, NULL, __ATOMIC_RELAXED);
    }
}

/* Before blocking on the engine lock: a lane lock held makes it a deadlock with a quiet of all
 * contexts (engine held, waiting for that lane). Unlocked engine: no other thread may be in
 * it (the program did not ask for threads). */
static void engine_may_block(const struct fsh_guard *g, bool real, const char *file, int line)
{
    if (held(&g->check)) {
        return; /* recursive: does not block */
    }
    if (mine.lanes > 0) {
        char what[192];
        snprintf(what, sizeof(what), "blocks on the engine lock while holding a lane lock (taken "
                 "at %s:%d)", base_name(mine.file), mine.line);
        lock_broken(file, line, what, "a thread holding a lane lock never blocks on the engine "
                    "lock: let the lane lock go first (held once), or trylock the engine");
    }
    if (!real && __atomic_load_n(&g->check.owner, __ATOMIC_RELAXED)) {
        char what[192];
        snprintf(what, sizeof(what), "enters the engine while another thread is in it (since "
                 "%s:%d) and locking is off", base_name(g->check.file), g->check.line);
        lock_broken(file, line, what, "a second thread enters the library only after "
                    "fsh_progress_enable_locking (SHMEM_THREAD_MULTIPLE or the progress thread)");
    }
}

static void lane_may_block(const struct fsh_guard *g, const char *file, int line)
{
    if (mine.lanes > 0 && !held(&g->check)) {
        char what[192];
        snprintf(what, sizeof(what), "blocks on a lane lock while holding another lane's (taken "
                 "at %s:%d)", base_name(mine.file), mine.line);
        lock_broken(file, line, what, "a thread holds one lane lock at a time");
    }
}

static void lane_took(struct fsh_guard *g, const char *file, int line)
{
    if (!held(&g->check)) {
        mine.lane = g;
        mine.file = file;
        mine.line = line;
    }
    took(&g->check, file, line);
    mine.lanes++;
}

static void lane_released(struct fsh_guard *g, const char *file, int line)
{
    released(&g->check, "lane lock", file, line);
    mine.lanes--;
}

void fsh_guard_expect(enum fsh_lock_expect what, const struct fsh_guard *engine,
                      const struct fsh_guard *lane, const char *file, int line, const char *func)
{
    char msg[256];
    switch (what) {
    case FSH_EXPECT_ENGINE:
        if (held(&engine->check)) {
            return;
        }
        snprintf(msg, sizeof(msg), "%s runs without the engine lock", func);
        lock_broken(file, line, msg, "the engine's state (records, tracks, CQ, handlers' state) "
                    "is touched only under the engine lock: fsh_progress_lock() first");
    case FSH_EXPECT_LANE:
    case FSH_EXPECT_LANE_ONCE:
        if (held(&lane->check) && (what == FSH_EXPECT_LANE || lane->check.depth == 1)) {
            return;
        }
        snprintf(msg, sizeof(msg), "%s runs %s", func, held(&lane->check)
                 ? "with its lane's lock held more than once (it must let it go to wait)"
                 : "without its lane's lock");
        lock_broken(file, line, msg, what == FSH_EXPECT_LANE
                    ? "a lane's records, CQs and bounce slots are touched only under its lock"
                    : "a lane's post is called with its lock held exactly once, so that a "
                      "full queue's wait can let it go");
    case FSH_EXPECT_NO_LANE:
        if (mine.lanes == 0) {
            return;
        }
        snprintf(msg, sizeof(msg), "%s runs with a lane lock held (taken at %s:%d)", func,
                 base_name(mine.file), mine.line);
        lock_broken(file, line, msg, "no wait, probe or backoff starts with a lane lock held: it "
                    "may block on the engine lock, which a quiet of all contexts holds while it "
                    "waits for that lane");
    }
}

void fsh_guard_engine_lock(struct fsh_guard *g, bool real, const char *file, int line)
{
    engine_may_block(g, real, file, line);
    if (real) {
        pthread_mutex_lock(&g->mutex);
    }
    took(&g->check, file, line);
}

bool fsh_guard_engine_trylock(struct fsh_guard *g, const char *file, int line)
{
    if (pthread_mutex_trylock(&g->mutex) != 0) {
        return false;
    }
    took(&g->check, file, line);
    return true;
}

void fsh_guard_engine_unlock(struct fsh_guard *g, bool real, const char *file, int line)
{
    released(&g->check, "engine lock", file, line);
    if (real) {
        pthread_mutex_unlock(&g->mutex);
    }
}

void fsh_guard_engine_real(const struct fsh_guard *g, const char *file, int line)
{
    /* A logical holder now would unlock a mutex it never locked. */
    if (__atomic_load_n(&g->check.owner, __ATOMIC_RELAXED)) {
        char what[192];
        snprintf(what, sizeof(what), "makes the engine lock real while it is held (since %s:%d)",
                 base_name(g->check.file), g->check.line);
        lock_broken(file, line, what, "fsh_progress_enable_locking is called with the engine "
                    "lock free, before a second thread enters the library");
    }
}

void fsh_guard_lane_lock(struct fsh_guard *g, const char *file, int line)
{
    lane_may_block(g, file, line);
    pthread_mutex_lock(&g->mutex);
    lane_took(g, file, line);
}

bool fsh_guard_lane_trylock(struct fsh_guard *g, const char *file, int line)
{
    if (pthread_mutex_trylock(&g->mutex) != 0) {
        return false;
    }
    lane_took(g, file, line);
    return true;
}

void fsh_guard_lane_unlock(struct fsh_guard *g, const char *file, int line)
{
    lane_released(g, file, line);
    pthread_mutex_unlock(&g->mutex);
}
#endif
