/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash.h: a crash inside the library says which PE, in which routine, and where.
 *
 * From shmem_init to shmem_finalize, SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT taken while
 * fabshmem code is on the thread's stack (a shmem_ routine runs, or a library thread) print,
 * before the launcher reports the signal:
 *   fabshmem: PE 0/2 (host:pid): shmem_putmem: SIGSEGV (address 0x7f.. not mapped) in fabshmem
 *   fabshmem: fix: ...
 *   fabshmem: backtrace of PE 0 (pid N), innermost first:
 *   fabshmem:   #0 /path/libfabshmem.so.0(+0x1234)[0x7f..]
 * then the signal takes its course unchanged: the handler that was there before (the
 * program's, a sanitizer's) is called, or the default action ends the process with that
 * signal, so the exit status is the same as without fabshmem. A crash in the program's own code
 * prints nothing. The routine is the OpenSHMEM entry point this thread called last
 * (fsh_crash_enter, from the API's entry check): with fabshmem code on the stack, the one that
 * runs.
 */
#ifndef FSH_CRASH_H
#define FSH_CRASH_H

/* The OpenSHMEM routine this thread entered last; NULL on a thread that never called one (a
 * library thread). initial-exec: a store costs one instruction on every API call. */
extern __thread const char *fsh_crash_routine __attribute__((tls_model("initial-exec")));

static inline void fsh_crash_enter(const char *fn)
{
    fsh_crash_routine = fn;
}

/* shmem_init: the handlers in, the one a signal had before kept to be called after the report
 * (a handler installed later by the program replaces ours, as it would replace any). */
void fsh_crash_install(void);
/* shmem_finalize: each signal gets back the handler it had before (unless the program changed
 * it since, which then stays). */
void fsh_crash_remove(void);

#endif
