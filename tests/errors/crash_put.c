/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crash_put: a crash inside the library names the PE, the routine and where. PE 0 passes
 * shmem_putmem a local source that is not mapped (a page it unmapped: not NULL, which the API
 * refuses with a message, but any stale pointer looks the same), so the copy inside the library
 * faults: SIGSEGV on the load/store path (crash_put.expect) and inside the provider on the
 * fabric path (crash_put_fabric.expect). The report comes before the launcher's, and the PE
 * still dies of SIGSEGV. With CRASH_PUT_HANDLER=1 in its environment the program first
 * installs its own SIGSEGV handler, which says so and ends the process with status 3: the
 * library's report comes first and then the program's handler is called
 * (crash_put_chained.expect). PE 1 waits in a barrier meanwhile.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <shmem.h>

static void on_segv(int sig)
{
    static const char msg[] = "crash_put: the program's own SIGSEGV handler was called\n";
    (void)sig;
    (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
    _exit(3);
}

int main(void)
{
    const char *h = getenv("CRASH_PUT_HANDLER");
    if (h && strcmp(h, "1") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_segv;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
    }
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *dest = shmem_malloc(64);
    long page = sysconf(_SC_PAGESIZE);
    char *gone = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!dest || gone == MAP_FAILED || munmap(gone, (size_t)page) != 0) {
        printf("crash_put: FAIL (setup)\n");
        return 1;
    }
    if (me == 0) {
        fprintf(stderr, "crash_put: PE 0 puts from unmapped %p\n", (void *)gone);
        shmem_putmem(dest, gone, 8, (me + 1) % npes);
        shmem_quiet();
        printf("crash_put: FAIL (shmem_putmem from an unmapped page returned)\n");
        return 1;
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
