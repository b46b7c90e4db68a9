/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_handlers: the library's crash report (runtime/crash.c) takes nothing from the program.
 *   1. A SIGBUS handler the program installed before shmem_init is still called, after the
 *      library's (a SIGBUS sent to itself while no routine runs: no report, just the program's
 *      handler, which counts).
 *   2. After shmem_finalize every signal the library watched has its handler from before
 *      shmem_init again: the program's SIGBUS handler, whatever SIGILL and SIGABRT had (the
 *      default, or one a library installed when it was loaded: libfabric's psm provider
 *      pulls in libinfinipath, whose constructor takes a dozen signals in a singleton run);
 *      between init and finalize the library's is in place. Not SIGSEGV: the move of the
 *      data segment keeps a handler of its own for the life of the process (local.c), which
 *      passes every other fault on to the one it found.
 *   3. A handler the program installs between init and finalize (SIGFPE) stays after finalize.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "../test.h"

static volatile sig_atomic_t bus_calls;

static void on_bus(int sig)
{
    (void)sig;
    bus_calls++;
}

static void on_fpe(int sig)
{
    (void)sig;
}

/* The address of sig's handler, whichever kind (SIG_DFL is 0). */
static uintptr_t handler_of(int sig)
{
    struct sigaction sa;
    sigaction(sig, NULL, &sa);
    return (sa.sa_flags & SA_SIGINFO) ? (uintptr_t)sa.sa_sigaction : (uintptr_t)sa.sa_handler;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_bus;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
    static const int watched[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    enum { NW = sizeof(watched) / sizeof(watched[0]) };
    uintptr_t before[NW];
    for (int i = 0; i < NW; i++) {
        before[i] = handler_of(watched[i]);
    }
    shmem_init();
    t_start("crash_handlers");
    for (int i = 0; i < NW; i++) {
        t_check(handler_of(watched[i]) != before[i], "signal %d: no library handler after shmem_init",
                watched[i]);
    }
    raise(SIGBUS);
    t_check(bus_calls == 1, "the program's SIGBUS handler was called %d times, not once",
            (int)bus_calls);
    sa.sa_handler = on_fpe;
    sigaction(SIGFPE, &sa, NULL);
    shmem_barrier_all();
    shmem_finalize();
    t_check(handler_of(SIGBUS) == (uintptr_t)on_bus, "SIGBUS: not the program's handler after finalize");
    t_check(handler_of(SIGFPE) == (uintptr_t)on_fpe, "SIGFPE: the program's later handler was replaced");
    t_check(handler_of(SIGILL) == before[3], "SIGILL: not the handler from before init after finalize");
    t_check(handler_of(SIGABRT) == before[4], "SIGABRT: not the handler from before init after finalize");
    return t_finish("crash_handlers");
}
