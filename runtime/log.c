/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c: formats and writes diagnostic lines to stderr.
 *
 * One write(2) per line so lines from PEs sharing a terminal do not interleave mid-line. Never
 * allocates, so it is safe on error paths (out of memory included).
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

int fsh_log_parse_level(const char *name)
{
    for (int i = 0; i < (int)(sizeof(level_names) / sizeof(level_names[0])); i++) {
        if (strcasecmp(name, level_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

void fsh_log_write(int level, const char *file, int line, const char *fmt, ...)
{
    char buf[1024];
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    int n = snprintf(buf, sizeof(buf), "fabshmem[%d %s:%d] %s %s:%d ", fsh_rt.pe, fsh_rt.host,
                     fsh_rt.pid, level_names[level], base, line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof(buf)) {
        int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
        n = (m < 0) ? n : n + m;
    }
    va_end(ap);
    if (n > (int)sizeof(buf) - 2) {
        n = (int)sizeof(buf) - 2;
    }
    buf[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
    (void)w;
}
