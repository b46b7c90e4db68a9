/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * error.c: keeps the first recorded error (cause, fix, where) until the API boundary reports it.
 *
 * "First wins": once a cause is recorded, callers further up that merely propagate the code
 * cannot overwrite it with a vaguer message. Also logged at debug level when recorded, so a
 * recovered error is still visible with FABSHMEM_LOG=debug.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static struct fsh_error last;
static int pending;

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
    FSH_DEBUG("error %d recorded at %s:%d: %s", code, file, line, last.msg);
    return code;
}

const struct fsh_error *fsh_err_last(void)
{
    return pending ? &last : NULL;
}

void fsh_err_clear(void)
{
    pending = 0;
}
