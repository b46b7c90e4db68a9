/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * error.h: the first function that detects an error records its cause and fix, once.
 *
 * Internal functions return 0 or a negative errno (libfabric's -FI_E* pass through). The detector
 * calls fsh_err(code, fix, fmt, ...), which keeps the message, the fix and file:line and returns
 * code, so callers simply propagate the int. The API boundary (api.c, init.c) turns a recorded
 * error into the two-line fatal report. Nothing here exits.
 */
#ifndef FSH_ERROR_H
#define FSH_ERROR_H

struct fsh_error {
    int code;
    const char *file;
    int line;
    char msg[512];
    char fix[256];
};

int fsh_err_set(int code, const char *file, int line, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define fsh_err(code, fix, ...) fsh_err_set((code), __FILE__, __LINE__, (fix), __VA_ARGS__)

/* The calling thread's recorded error; when it has none, the first error another thread
 * recorded and did not clear (a copy); NULL when none is pending. */
const struct fsh_error *fsh_err_last(void);
/* What fsh_err_last() returns is no longer pending (the thread recovered from it). */
void fsh_err_clear(void);

#endif
