/*
 * shmemx.h: fabshmem's extensions to OpenSHMEM.
 *
 * Everything here is outside the specification and named shmemx_*, so a program that uses it
 * says so by including this header; shmem.h stays spec names only. Extensions are exported
 * from libfabshmem like the API, and the symbol test accepts any shmemx_* name.
 */
#ifndef FABSHMEM_SHMEMX_H
#define FABSHMEM_SHMEMX_H

#include "shmem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Wall-clock time in seconds from CLOCK_MONOTONIC: only differences are meaningful, and they
 * are unaffected by changes to the system clock. Callable before shmem_init. */
FSH_API double shmemx_wtime(void);

#ifdef __cplusplus
}
#endif

#endif /* FABSHMEM_SHMEMX_H */
