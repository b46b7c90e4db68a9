/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * guard.h: the mutexes of the engine and of the lanes, checked against the lock contract
 * (progress.h, "The lock contract") in --enable-debug builds.
 *
 * A guard is a recursive pthread mutex and, for the checks, its holder: the holding thread,
 * how often it holds it, and the site (file:line) that took it first. The engine's guard is
 * progress.c's, a lane's is lane.c's; only they lock them, through the functions below, which
 * in release builds are the bare pthread calls (the engine's: only once locking is real). In
 * debug builds every take and release is checked (the engine's blocking lock never under a
 * lane's, one lane's lock at a time, a release only by the holder), and fsh_guard_expect says
 * whether this thread holds what a function assumes. A broken rule ends the process (abort)
 * with two lines naming the site and the rule.
 */
#ifndef FSH_GUARD_H
#define FSH_GUARD_H

#include <pthread.h>
#include <stdbool.h>

/* A guard's holder, as the checks see it; written by the holder only, unused in release
 * builds. */
struct fsh_guard_check {
    const void *owner; /* the holding thread (the address of its thread-local state) */
    int depth;
    const char *file;
    int line;
};

struct fsh_guard {
    pthread_mutex_t mutex;
    struct fsh_guard_check check;
};

/* What a function expects this thread to hold (FSH_ASSERT_*, progress.h). */
enum fsh_lock_expect {
    FSH_EXPECT_ENGINE,
    FSH_EXPECT_LANE,
    FSH_EXPECT_LANE_ONCE,
    FSH_EXPECT_NO_LANE
};

/* A recursive mutex, nobody holding it. */
void fsh_guard_init(struct fsh_guard *g);
void fsh_guard_destroy(struct fsh_guard *g);

/* The site of a take or release: its file and line in debug builds, nothing in release ones
 * (FSH_GUARD_AT in a parameter list, FSH_GUARD_HERE in a call). */
#ifdef FSH_DEBUG_BUILD
#define FSH_GUARD_AT , const char *file, int line
#define FSH_GUARD_HERE , __FILE__, __LINE__
#else
#define FSH_GUARD_AT
#define FSH_GUARD_HERE
#endif

/* The engine's lock: real only when real is true (progress.h: fsh_progress_enable_locking);
 * before, only its logical holder is tracked. The trylock tries the mutex either way. Then a
 * lane's lock. In release builds these are the bare pthread calls, inline. */
#ifdef FSH_DEBUG_BUILD
void fsh_guard_engine_lock(struct fsh_guard *g, bool real FSH_GUARD_AT);
bool fsh_guard_engine_trylock(struct fsh_guard *g FSH_GUARD_AT);
void fsh_guard_engine_unlock(struct fsh_guard *g, bool real FSH_GUARD_AT);
/* Locking becomes real (checked: nobody holds the engine's lock). */
void fsh_guard_engine_real(const struct fsh_guard *g FSH_GUARD_AT);
void fsh_guard_lane_lock(struct fsh_guard *g FSH_GUARD_AT);
bool fsh_guard_lane_trylock(struct fsh_guard *g FSH_GUARD_AT);
void fsh_guard_lane_unlock(struct fsh_guard *g FSH_GUARD_AT);
#else
static inline void fsh_guard_engine_lock(struct fsh_guard *g, bool real)
{
    if (real) {
        pthread_mutex_lock(&g->mutex);
    }
}

static inline bool fsh_guard_engine_trylock(struct fsh_guard *g)
{
    return pthread_mutex_trylock(&g->mutex) == 0;
}

static inline void fsh_guard_engine_unlock(struct fsh_guard *g, bool real)
{
    if (real) {
        pthread_mutex_unlock(&g->mutex);
    }
}

static inline void fsh_guard_engine_real(const struct fsh_guard *g)
{
    (void)g;
}

static inline void fsh_guard_lane_lock(struct fsh_guard *g)
{
    pthread_mutex_lock(&g->mutex);
}

static inline bool fsh_guard_lane_trylock(struct fsh_guard *g)
{
    return pthread_mutex_trylock(&g->mutex) == 0;
}

static inline void fsh_guard_lane_unlock(struct fsh_guard *g)
{
    pthread_mutex_unlock(&g->mutex);
}
#endif

#ifdef FSH_DEBUG_BUILD
/* Does this thread hold what `what` says (engine: the engine's guard; lane: the lane's, for
 * FSH_EXPECT_LANE and _ONCE)? If not, the process ends naming func, file:line and the rule. */
void fsh_guard_expect(enum fsh_lock_expect what, const struct fsh_guard *engine,
                      const struct fsh_guard *lane, const char *file, int line, const char *func);
#endif

#endif
