/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h: leveled diagnostics, one line each, prefixed with the PE, host and pid.
 *
 *   fabshmem[3 host:pid] WARN fabric.c:212 provider tcp lacks FI_ATOMIC, emulating
 *
 * The threshold comes from FABSHMEM_LOG (SHMEM_DEBUG=1 means debug); it is read into fsh_rt
 * once at init. Below the threshold a call costs one compare.
 */
#ifndef FSH_LOG_H
#define FSH_LOG_H

#include "rt.h"

/* enum fsh_log_level (FSH_LOG_ERROR .. FSH_LOG_TRACE) is rt.h's, beside the threshold. */

void fsh_log_write(int level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Parse a level name ("warn", "debug", ...); -1 when unknown. */
int fsh_log_parse_level(const char *name);

#define FSH_LOG(level, ...)                                                                   \
    do {                                                                                      \
        if ((level) <= fsh_rt.log_level) {                                                    \
            fsh_log_write((level), __FILE__, __LINE__, __VA_ARGS__);                          \
        }                                                                                     \
    } while (0)
#define FSH_ERROR(...) FSH_LOG(FSH_LOG_ERROR, __VA_ARGS__)
#define FSH_WARN(...) FSH_LOG(FSH_LOG_WARN, __VA_ARGS__)
#define FSH_INFO(...) FSH_LOG(FSH_LOG_INFO, __VA_ARGS__)
#define FSH_DEBUG(...) FSH_LOG(FSH_LOG_DEBUG, __VA_ARGS__)
#define FSH_TRACE(...) FSH_LOG(FSH_LOG_TRACE, __VA_ARGS__)

#endif
