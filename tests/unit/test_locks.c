/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_locks: the lock contract (runtime/progress.h) is checked, and the error record is
 * per thread.
 *
 * Error records (every build): two threads record causes at once and each finds its own,
 * whole, through fsh_err_last(); one clearing leaves the other's; a cause recorded by a thread
 * that ended (the progress thread's fabric error) is what a thread with none of its own finds.
 *
 * Lock checks (--enable-debug builds, where FSH_DEBUG_BUILD compiles them): each case runs in
 * a forked child, a singleton on FI_PROVIDER=shm with a lane of its own, that breaks one rule
 * (or keeps it: the control cases) and must end with SIGABRT and the two lines naming the
 * broken rule and the test's own file:line (or exit 0 silently). Without the checks compiled,
 * that half says so and checks nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <shmem.h>

#include "error.h"
#include "progress.h"
#include "unit.h"

/* ------------------------------------------------------------ error records */

static pthread_barrier_t bar;
static int mixed[2];

static void *recorder(void *arg)
{
    int me = (int)(long)arg;
    char want[64];
    snprintf(want, sizeof(want), "thread %d's cause", me);
    pthread_barrier_wait(&bar);
    (void)fsh_err(-(100 + me), "thread's fix", "thread %d's cause", me);
    pthread_barrier_wait(&bar); /* both recorded before either reads */
    const struct fsh_error *e = fsh_err_last();
    mixed[me] = !e || e->code != -(100 + me) || strcmp(e->msg, want) != 0;
    pthread_barrier_wait(&bar);
    if (me == 0) {
        fsh_err_clear();
    }
    pthread_barrier_wait(&bar); /* thread 0 cleared: thread 1 keeps its own */
    e = fsh_err_last();
    if (me == 1) {
        mixed[me] |= !e || e->code != -101 || strcmp(e->msg, want) != 0;
        fsh_err_clear();
    } else {
        /* Thread 0 has none of its own now: nothing, or thread 1's (the job's first), never
         * its own cleared one. */
        mixed[me] |= e && e->code != -101;
    }
    return NULL;
}

static void *ender(void *arg)
{
    (void)fsh_err(-EIO, "see the peer's messages", "a fabric error read by another thread");
    return NULL;
}

static void error_records(void)
{
    for (int round = 0; round < 50; round++) {
        pthread_t t[2];
        pthread_barrier_init(&bar, NULL, 2);
        for (long i = 0; i < 2; i++) {
            pthread_create(&t[i], NULL, recorder, (void *)i);
        }
        for (int i = 0; i < 2; i++) {
            pthread_join(t[i], NULL);
        }
        pthread_barrier_destroy(&bar);
        fsh_err_clear();
        if (mixed[0] || mixed[1]) {
            UNIT_CHECK(0,
                       "each thread finds its own cause through fsh_err_last, and clearing one "
                       "leaves the other's");
            break;
        }
    }
    /* This thread recorded nothing: it finds the cause an ended thread recorded; its own cause,
     * once recorded, comes first; clearing drops what it saw. */
    pthread_t t;
    pthread_create(&t, NULL, ender, NULL);
    pthread_join(t, NULL);
    const struct fsh_error *e = fsh_err_last();
    UNIT_CHECK(e && e->code == -EIO && strstr(e->msg, "read by another thread"),
               "a thread without a cause finds the one another thread recorded");
    (void)fsh_err(-ENOMEM, "", "main's own cause");
    e = fsh_err_last();
    UNIT_CHECK(e && e->code == -ENOMEM, "a thread's own cause comes before the job's");
    fsh_err_clear();
    e = fsh_err_last();
    UNIT_CHECK(e && e->code == -EIO, "clearing its own cause leaves the other thread's");
    fsh_err_clear();
    UNIT_CHECK(fsh_err_last() == NULL, "clearing the cause it sees leaves none");
}

/* ------------------------------------------------------------ lock checks */

#ifdef FSH_DEBUG_BUILD
/* The cases: each breaks (or, control, keeps) one rule. A lock taken or let go names the
 * caller's line, said on stderr just before (BREAKS_NEXT_LINE); a check at a function's entry
 * names that function and its own file:line. */
#define BREAKS_NEXT_LINE() fprintf(stderr, "breaks at test_locks.c:%d:\n", __LINE__ + 1)
static int broke;

static void no_engine_lock(struct fsh_lane *l)
{
    broke = 1;
    (void)fsh_progress_random();
}

static void engine_after_lane(struct fsh_lane *l)
{
    fsh_lane_lock(l);
    broke = 1;
    BREAKS_NEXT_LINE();
    fsh_progress_lock();
}

static void wait_holding_lane(struct fsh_lane *l)
{
    struct fsh_op_track t = {0, 0, 0};
    fsh_lane_lock(l);
    broke = 1;
    (void)fsh_lane_wait_track(l, &t, "test");
}

static void lane_not_held(struct fsh_lane *l)
{
    broke = 1;
    (void)fsh_lane_bounce_take(l, 8);
}

static void unlock_not_held(struct fsh_lane *l)
{
    broke = 1;
    BREAKS_NEXT_LINE();
    fsh_lane_unlock(l);
}

static void lane_then_lane(struct fsh_lane *l)
{
    struct fsh_lane *other;
    if (fsh_lane_open(&other) != 0) {
        _exit(3);
    }
    fsh_lane_lock(l);
    broke = 1;
    BREAKS_NEXT_LINE();
    fsh_lane_lock(other);
}

/* A full queue's poll (fsh_lane_poll) with the lane held twice: it could let the lane go only
 * once, and the engine's poll, which posts and may back off, would run under it. */
static void full_queue_poll_held_twice(struct fsh_lane *l)
{
    fsh_lane_lock(l);
    fsh_lane_lock(l);
    broke = 1;
    (void)fsh_lane_poll(l);
}

/* Control: the order kept, recursion, trylock-free polls: no message, exit 0. */
static void keeps_the_rules(struct fsh_lane *l)
{
    fsh_progress_lock();
    fsh_progress_lock();
    (void)fsh_progress_random();
    fsh_lane_lock(l);
    fsh_lane_lock(l);
    fsh_lane_unlock(l);
    (void)fsh_lane_poll(l); /* lets the lane go; the engine's poll is recursive */
    fsh_lane_unlock(l);
    fsh_progress_unlock();
    fsh_progress_unlock();
    fsh_lane_lock(l);
    (void)fsh_lane_poll(l); /* lets the lane go; tries the engine */
    fsh_lane_unlock(l);
    struct fsh_op_track t = {0, 0, 0};
    (void)fsh_lane_wait_track(l, &t, "test");
}

struct lock_case {
    const char *name;
    void (*run)(struct fsh_lane *l);
    const char *says;  /* in the first line; NULL: the control, which must pass */
    const char *where; /* its site: NULL, the line BREAKS_NEXT_LINE said */
    const char *rule;  /* in the second */
};

static const struct lock_case cases[] = {
    {"engine state without the engine lock", no_engine_lock,
     "fsh_progress_random runs without the engine lock", "progress.c:",
     "only under the engine lock"},
    {"engine lock blocked on under a lane lock", engine_after_lane,
     "blocks on the engine lock while holding a lane lock", NULL,
     "never blocks on the engine lock"},
    {"a wait with a lane lock held", wait_holding_lane,
     "fsh_lane_wait_track runs with a lane lock held (taken at test_locks.c:", "lane.c:",
     "no wait, probe or backoff starts with a lane lock held"},
    {"lane state without its lock", lane_not_held,
     "fsh_lane_bounce_take runs without its lane's lock", "lane.c:",
     "touched only under its lock"},
    {"a release by a thread that does not hold it", unlock_not_held,
     "releases the lane lock, which this thread does not hold", NULL,
     "only the thread that took"},
    {"a second lane's lock under one", lane_then_lane,
     "blocks on a lane lock while holding another lane's", NULL, "one lane lock at a time"},
    {"a full queue's poll with the lane held twice", full_queue_poll_held_twice,
     "fsh_lane_poll runs with its lane's lock held more than once", "lane.c:",
     "called with its lock held exactly once"},
    {"the rules kept", keeps_the_rules, NULL, NULL, NULL},
};

/* The child: a singleton with a lane, then the case; stderr to fd. */
static void child(const struct lock_case *c, int fd)
{
    setenv("FI_PROVIDER", "shm", 1);
    setenv("SHMEM_SYMMETRIC_SIZE", "8M", 1);
    setenv("FABSHMEM_PROGRESS_THREAD", "off", 1);
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    struct fsh_lane *l;
    if (fsh_lane_open(&l) != 0) {
        fprintf(stderr, "no lane: %s\n", fsh_err_last() ? fsh_err_last()->msg : "");
        _exit(3);
    }
    fflush(stdout);
    dup2(fd, 2);
    c->run(l);
    if (broke) {
        fprintf(stderr, "no check fired\n");
        _exit(4);
    }
    _exit(0);
}

static void run_case(const struct lock_case *c)
{
    int before = unit_failures;
    char path[] = "/tmp/test_locks.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        UNIT_CHECK(0, "mkstemp");
        return;
    }
    unlink(path);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child(c, fd);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    char out[4096] = "";
    ssize_t n = pread(fd, out, sizeof(out) - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    char what[512];
    if (!c->says) {
        snprintf(what, sizeof(what), "%s: exit 0 and no message (exit status %d)", c->name,
                 status);
        UNIT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && !strstr(out, "lock contract"),
                   "%s", what);
    } else {
        /* The site: the line the child said it breaks the rule on, or the checking
         * function's file. */
        char site[96] = "";
        const char *said = strstr(out, "breaks at ");
        if (!c->where && said) {
            int len = (int)strcspn(said + 10, "\n");
            snprintf(site, sizeof(site), "lock contract broken at %.*s", len, said + 10);
        } else if (c->where) {
            snprintf(site, sizeof(site), "lock contract broken at %s", c->where);
        }
        snprintf(what, sizeof(what), "%s: SIGABRT with \"%s... %s\" and the rule \"%s\" "
                 "(status %d)", c->name, site, c->says, c->rule, status);
        UNIT_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && site[0] &&
                       strstr(out, site) && strstr(out, c->says) &&
                       strstr(out, "fabshmem: rule (runtime/progress.h, the lock contract): ") &&
                       strstr(out, c->rule),
                   "%s", what);
    }
    if (unit_failures != before) {
        printf("    child's stderr:\n");
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
            printf("    %s\n", line);
        }
    }
}

static void lock_checks(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int before = unit_failures;
        run_case(&cases[i]);
        printf("test_locks: %s: %s\n", cases[i].name,
               unit_failures == before ? "checked" : "FAILED");
    }
}
#else
static void lock_checks(void)
{
    printf("test_locks: lock checks not compiled in (configure --enable-debug has them): "
           "error records only\n");
}
#endif

int main(void)
{
    unit_name = "test_locks";
    error_records();
    lock_checks();
    return unit_exit();
}
