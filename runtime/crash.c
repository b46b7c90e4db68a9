/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash.c: the report of a fatal signal taken inside the library (crash.h), and nothing else.
 *
 * The handler runs in a process that may be broken (a smashed heap, a lock held by the
 * interrupted code), so it uses only async-signal-safe calls: write(2) of lines formatted on
 * its stack, backtrace() (its unwinder is loaded at install, so the handler's first call does
 * not dlopen), and dladdr() to name frames, which glibc's own backtrace_symbols_fd uses too.
 * Whether fabshmem code is on the stack is decided by address: the library's executable
 * segments are found once at install (dl_iterate_phdr), and the interrupted PC and every frame
 * are compared with them. One report per process: a handler that returns for a fault it
 * resolved (the program's own, chained to) is not reported about again.
 *
 * The handler never decides the signal's outcome. After the report it calls the handler the
 * signal had before shmem_init, as that handler would have been called; with none, it resets
 * the default action and raises the signal again, which stays pending until the handler
 * returns and then ends the process exactly as the signal would have (a fault re-executed
 * would do the same; a signal sent by kill(2) would not come back by itself).
 *
 * The PE's thread gets an alternate signal stack when it has none, so a stack overflow inside
 * the library is reported too.
 */
#define _GNU_SOURCE
#include "crash.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "rt.h"

__thread const char *fsh_crash_routine __attribute__((tls_model("initial-exec")));

#define NSIGS 5
#define NRANGES 4
#define NFRAMES 48
#define ALTSTACK (64 * 1024)

static const int sigs[NSIGS] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static struct {
    bool on;
    struct sigaction prev[NSIGS]; /* what each signal had before install */
    uintptr_t lo[NRANGES], hi[NRANGES]; /* the library's executable segments */
    int nranges;
    void *altstack; /* ours, installed for the thread of shmem_init; NULL: none */
} crash_handler;

static int reported;

/* ------------------------------------------------------------------ async-signal-safe output */

struct line {
    char buf[512];
    size_t n;
};

static void put(struct line *l, const char *s)
{
    while (s && *s && l->n < sizeof(l->buf) - 1) {
        l->buf[l->n++] = *s++;
    }
}

static void put_num(struct line *l, uintptr_t v, unsigned base)
{
    char d[24];
    int k = 0;
    do {
        d[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && k < (int)sizeof(d));
    if (base == 16) {
        put(l, "0x");
    }
    while (k > 0 && l->n < sizeof(l->buf) - 1) {
        l->buf[l->n++] = d[--k];
    }
}

static void put_int(struct line *l, long v)
{
    if (v < 0) {
        put(l, "-");
        v = -v;
    }
    put_num(l, (uintptr_t)v, 10);
}

static void emit(struct line *l)
{
    l->buf[l->n++] = '\n';
    for (size_t off = 0; off < l->n;) {
        ssize_t w = write(STDERR_FILENO, l->buf + off, l->n - off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            break;
        }
        off += (size_t)w;
    }
    l->n = 0;
}

/* ------------------------------------------------------------------ where the crash is */

static bool ours(uintptr_t pc)
{
    for (int i = 0; i < crash_handler.nranges; i++) {
        if (pc >= crash_handler.lo[i] && pc < crash_handler.hi[i]) {
            return true;
        }
    }
    return false;
}

static int find_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + p->p_vaddr;
        mine = p->p_type == PT_LOAD && me >= lo && me < lo + p->p_memsz;
    }
    if (!mine) {
        return 0;
    }
    for (int i = 0; i < info->dlpi_phnum && crash_handler.nranges < NRANGES; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
            crash_handler.lo[crash_handler.nranges] = info->dlpi_addr + p->p_vaddr;
            crash_handler.hi[crash_handler.nranges] =
                crash_handler.lo[crash_handler.nranges] + p->p_memsz;
            crash_handler.nranges++;
        }
    }
    return 1;
}

static uintptr_t context_pc(const void *ucv)
{
    const ucontext_t *uc = ucv;
#if defined(__x86_64__)
    return uc ? (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] : 0;
#elif defined(__aarch64__)
    return uc ? (uintptr_t)uc->uc_mcontext.pc : 0;
#else
    (void)uc;
    return 0;
#endif
}

static const char *signame(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "SIGABRT";
    }
}

/* What the kernel says about the fault, e.g. "address 0x10 not mapped". */
static void put_cause(struct line *l, int sig, const siginfo_t *si)
{
    if (si->si_code <= 0) {
        if (si->si_pid == getpid()) {
            put(l, sig == SIGABRT ? "abort() called" : "raised by the process itself");
        } else {
            put(l, "sent by process ");
            put_int(l, si->si_pid);
        }
        return;
    }
    switch (sig) {
    case SIGSEGV:
    case SIGBUS:
        put(l, "address ");
        put_num(l, (uintptr_t)si->si_addr, 16);
        put(l, sig == SIGBUS ? (si->si_code == BUS_ADRALN ? " misaligned"
                                : si->si_code == BUS_ADRERR ? " beyond the end of its mapped object"
                                                            : " not accessible")
            : si->si_code == SEGV_MAPERR ? " not mapped"
            : si->si_code == SEGV_ACCERR ? " not accessible (protection)"
                                         : " invalid");
        break;
    case SIGFPE:
        put(l, si->si_code == FPE_INTDIV ? "integer division by zero"
               : si->si_code == FPE_INTOVF ? "integer overflow"
                                           : "arithmetic exception");
        break;
    case SIGILL:
        put(l, "illegal instruction at ");
        put_num(l, (uintptr_t)si->si_addr, 16);
        break;
    default:
        put(l, "abort");
        break;
    }
}

/* "PE 0/2 (host:pid): " */
static void put_who(struct line *l)
{
    put(l, "fabshmem: ");
    if (fsh_rt.pe >= 0) {
        put(l, "PE ");
        put_int(l, fsh_rt.pe);
        put(l, "/");
        put_int(l, fsh_rt.npes);
        put(l, " ");
    }
    put(l, "(");
    put(l, fsh_rt.host);
    put(l, ":");
    put_int(l, getpid());
    put(l, "): ");
}

/* "#3 /lib/libc.so.6(memcpy+0x20)[0x7f..]": one frame, one write. */
static void frame(int k, void *addr)
{
    struct line l = {.n = 0};
    put(&l, "fabshmem:   #");
    put_int(&l, k);
    put(&l, " ");
    Dl_info info;
    if (dladdr(addr, &info) && info.dli_fname) {
        put(&l, info.dli_fname);
        put(&l, "(");
        if (info.dli_sname) {
            put(&l, info.dli_sname);
            put(&l, "+");
            put_num(&l, (uintptr_t)addr - (uintptr_t)info.dli_saddr, 16);
        } else {
            put(&l, "+");
            put_num(&l, (uintptr_t)addr - (uintptr_t)info.dli_fbase, 16);
        }
        put(&l, ")");
    }
    put(&l, "[");
    put_num(&l, (uintptr_t)addr, 16);
    put(&l, "]");
    emit(&l);
}

static void report(int sig, const siginfo_t *si, bool pc_ours, void *const *frames, int first,
                   int n)
{
    const char *fn = fsh_crash_routine;
    struct line l = {.n = 0};
    put_who(&l);
    put(&l, fn ? fn : "a fabshmem thread");
    put(&l, ": ");
    put(&l, signame(sig));
    put(&l, " (");
    put_cause(&l, sig, si);
    put(&l, si->si_code <= 0 ? ") while in fabshmem"
            : pc_ours       ? ") inside fabshmem"
                            : ") in a library fabshmem called");
    emit(&l);
    put(&l, "fabshmem: fix: ");
    if (fn && si->si_code > 0) {
        put(&l, "check the arguments of ");
        put(&l, fn);
        put(&l, " (a local buffer too short, freed or not mapped crashes it like any copy); if "
                "they are right, this is a fabshmem bug: report it with the backtrace below");
    } else if (si->si_code > 0) {
        put(&l, "this is a fabshmem bug: report it with the backtrace below");
    } else {
        put(&l, "see the sender's reason; the backtrace below shows where this PE was");
    }
    emit(&l);
    put(&l, "fabshmem: backtrace of PE ");
    put_int(&l, fsh_rt.pe);
    put(&l, ", innermost call first (addr2line -f -e FILE OFFSET names a frame FILE(+OFFSET)):");
    emit(&l);
    for (int i = first; i < n; i++) {
        frame(i - first, frames[i]);
    }
}

/* ------------------------------------------------------------------ the handler */

static void chain(int k, int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *p = &crash_handler.prev[k];
    if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
        p->sa_sigaction(sig, si, uc);
        return;
    }
    if (!(p->sa_flags & SA_SIGINFO) && p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    if (!(p->sa_flags & SA_SIGINFO) && p->sa_handler == SIG_IGN && si->si_code <= 0) {
        return; /* sent, and ignored before: still ignored (a fault cannot be ignored) */
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* pending until this handler returns: then the default action */
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    int k = 0;
    while (k < NSIGS - 1 && sigs[k] != sig) {
        k++;
    }
    void *frames[NFRAMES];
    int n = backtrace(frames, NFRAMES);
    /* frames[0] is this handler, then the kernel's return trampoline, then the interrupted
     * code (its exact PC when the unwinder knows the signal frame). */
    uintptr_t pc = context_pc(uc);
    int first = n > 2 ? 2 : n;
    for (int i = 1; i < n && pc; i++) {
        if ((uintptr_t)frames[i] == pc) {
            first = i;
            break;
        }
    }
    bool inside = pc && ours(pc);
    for (int i = first; i < n && !inside; i++) {
        inside = ours((uintptr_t)frames[i]);
    }
    if (inside && __atomic_exchange_n(&reported, 1, __ATOMIC_ACQ_REL) == 0) {
        report(sig, si, pc && ours(pc), frames, first, n);
    }
    chain(k, sig, si, uc);
    errno = saved;
}

void fsh_crash_install(void)
{
    if (crash_handler.on) {
        return;
    }
    crash_handler.nranges = 0;
    dl_iterate_phdr(find_ranges, (void *)(uintptr_t)&fsh_crash_install);
    void *prime[2];
    (void)backtrace(prime, 2); /* loads the unwinder now, not in the handler */
    stack_t old;
    if (sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE)) {
        void *p = mmap(NULL, ALTSTACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        stack_t ss = {.ss_sp = p, .ss_size = ALTSTACK, .ss_flags = 0};
        if (p != MAP_FAILED && sigaltstack(&ss, NULL) == 0) {
            crash_handler.altstack = p;
        } else if (p != MAP_FAILED) {
            munmap(p, ALTSTACK);
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < NSIGS; k++) {
        if (sigaction(sigs[k], &sa, &crash_handler.prev[k]) != 0) {
            memset(&crash_handler.prev[k], 0, sizeof(crash_handler.prev[k]));
            crash_handler.prev[k].sa_handler = SIG_DFL;
        }
    }
    __atomic_store_n(&reported, 0, __ATOMIC_RELAXED);
    crash_handler.on = true;
}

void fsh_crash_remove(void)
{
    if (!crash_handler.on) {
        return;
    }
    for (int k = 0; k < NSIGS; k++) {
        struct sigaction cur;
        if (sigaction(sigs[k], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_signal) {
            sigaction(sigs[k], &crash_handler.prev[k], NULL);
        }
    }
    stack_t cur;
    if (crash_handler.altstack && sigaltstack(NULL, &cur) == 0 &&
        cur.ss_sp == crash_handler.altstack && !(cur.ss_flags & SS_ONSTACK)) {
        stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
        if (sigaltstack(&off, NULL) == 0) {
            munmap(crash_handler.altstack, ALTSTACK);
        }
    }
    crash_handler.altstack = NULL;
    crash_handler.on = false;
}
