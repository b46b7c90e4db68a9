/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unit.h: the one check of the unit tests (tests/unit/test_*.c), and cases run apart.
 *
 * UNIT_CHECK(cond, fmt, ...) counts a failure and prints where and what (the condition and the
 * message, with the values the caller gives) when cond is false; it never returns early, so a
 * test reports every check that failed. unit_case() runs one case in a child process of its
 * own: the runtime's modules keep their state in statics, so each case starts from a clean
 * process, a crash or a hang (alarm) fails that case alone and is named, and the parent sums
 * the failures. unit_exit() prints "<test>: PASS" or "<test>: FAIL (n checks failed)" and
 * gives the exit status make check reads.
 */
#ifndef FSH_UNIT_H
#define FSH_UNIT_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int unit_failures;
static const char *unit_name = "unit";

static inline void unit_check_at(bool ok, const char *file, int line, const char *cond,
                                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static inline void unit_check_at(bool ok, const char *file, int line, const char *cond,
                                 const char *fmt, ...)
{
    if (ok) {
        return;
    }
    unit_failures++;
    printf("%s: check failed at %s:%d: %s: ", unit_name, file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

#define UNIT_CHECK(cond, ...) unit_check_at(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

/* Run fn in a child process, with limit_s seconds before it is killed (a hang fails it). */
static inline void unit_case(const char *name, void (*fn)(void), unsigned limit_s)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(limit_s);
        unit_failures = 0;
        fn();
        fflush(stdout);
        _exit(unit_failures > 100 ? 100 : unit_failures);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) {
        UNIT_CHECK(false, "case %s: fork or wait failed", name);
        return;
    }
    if (WIFSIGNALED(st)) {
        UNIT_CHECK(false, "case %s: killed by signal %d%s", name, WTERMSIG(st),
                   WTERMSIG(st) == SIGALRM ? " (over its time limit: a hang)" : "");
    } else if (WEXITSTATUS(st) != 0) {
        unit_failures += WEXITSTATUS(st);
        printf("%s: case %s: %d check(s) failed\n", unit_name, name, WEXITSTATUS(st));
    } else {
        printf("%s: case %s: ok\n", unit_name, name);
    }
}

static inline int unit_exit(void)
{
    if (unit_failures) {
        printf("%s: FAIL (%d checks failed)\n", unit_name, unit_failures);
        return 1;
    }
    printf("%s: PASS\n", unit_name);
    return 0;
}

#endif
