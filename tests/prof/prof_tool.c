/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * prof_tool.c: a profiling tool for tests/mpi/prof_interpose, as a user would write one with
 * the OpenSHMEM profiling interface: a shared library, LD_PRELOADed (or linked before
 * libfabshmem), that defines some shmem_ routines, counts the calls and forwards each to its
 * pshmem_ name. Its shmem_pcontrol takes the spec's tool-defined levels: level 3 with a long *
 * copies the counts there (see enum below), so the program learns what the tool saw; the
 * other levels do nothing.
 */
#include <stdarg.h>
#include <stddef.h>

#include <pshmem.h>

enum { C_PUTMEM, C_INT_PUT, C_BARRIER_ALL, C_MALLOC, C_FREE, C_PCONTROL, C_N };
static long counts[C_N];

#define TOOL __attribute__((visibility("default")))

TOOL void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    counts[C_PUTMEM]++;
    pshmem_putmem(dest, source, nelems, pe);
}

TOOL void shmem_int_put(int *dest, const int *source, size_t nelems, int pe)
{
    counts[C_INT_PUT]++;
    pshmem_int_put(dest, source, nelems, pe);
}

TOOL void shmem_barrier_all(void)
{
    counts[C_BARRIER_ALL]++;
    pshmem_barrier_all();
}

TOOL void *shmem_malloc(size_t size)
{
    counts[C_MALLOC]++;
    return pshmem_malloc(size);
}

TOOL void shmem_free(void *ptr)
{
    counts[C_FREE]++;
    pshmem_free(ptr);
}

TOOL void shmem_pcontrol(int level, ...)
{
    counts[C_PCONTROL]++;
    if (level == 3) {
        va_list ap;
        va_start(ap, level);
        long *out = va_arg(ap, long *);
        va_end(ap);
        for (int i = 0; i < C_N; i++) {
            out[i] = counts[i];
        }
    }
    pshmem_pcontrol(level);
}
