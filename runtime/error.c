/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * error.c: keeps the first recorded error (cause, fix, where) until the API boundary reports it.
 *
 * "First wins": once a cause is recorded, callers further up that merely propagate the code
 * cannot overwrite it with a vaguer message. Per thread: two threads' causes never mix. Also
 * logged at debug level when recorded, so a recovered error is still visible with
 * FABSHMEM_LOG=debug.
 */
#include "error.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

/* Each thread keeps its own record: threads posting on contexts of their own fail and recover
 * apart, and neither may overwrite, clear or report the other's cause. The job's record is
 * the first cause any thread recorded and has not cleared: a thread that fails on an error
 * another thread detected (the progress thread read a fabric error; the program's wait then
 * ends with -EIO) finds it through fsh_err_last(), which prefers the thread's own. */
static _Thread_local struct fsh_error last;
static _Thread_local int pending;
static _Thread_local struct fsh_error seen; /* the job's record, as this thread last read it */
static struct {
    pthread_mutex_t lock;
    struct fsh_error e;
    const void *owner; /* the recording thread's `last` */
    int pending;
} job = {.lock = PTHREAD_MUTEX_INITIALIZER};

int fsh_err_set(int code, const char *file, int line, const char *fix, const char *fmt, ...)
{
    if (pending) {
        return code;
    }
    last.code = code;
    last.file = file;
    last.line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last.msg, sizeof(last.msg), fmt, ap);
    va_end(ap);
    snprintf(last.fix, sizeof(last.fix), "%s", fix ? fix : "");
    pending = 1;
    pthread_mutex_lock(&job.lock);
    if (!job.pending) {
        job.e = last;
        job.owner = &last;
        job.pending = 1;
    }
    pthread_mutex_unlock(&job.lock);
    FSH_DEBUG("error %d recorded at %s:%d: %s", code, file, line, last.msg);
    return code;
}

const struct fsh_error *fsh_err_last(void)
{
    if (pending) {
        return &last;
    }
    pthread_mutex_lock(&job.lock);
    int any = job.pending;
    if (any) {
        seen = job.e;
    }
    pthread_mutex_unlock(&job.lock);
    return any ? &seen : NULL;
}

void fsh_err_clear(void)
{
    /* What fsh_err_last() returns here is no longer pending: this thread's own record (and the
     * job's, when it is that one), or else the job's. */
    pthread_mutex_lock(&job.lock);
    if (!pending || job.owner == &last) {
        job.pending = 0;
    }
    pthread_mutex_unlock(&job.lock);
    pending = 0;
}
