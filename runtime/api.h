/*
 * api.h: the type-erased entry points behind the generated typed API.
 *
 * api_typed.c expands FSH_TYPE_TABLE into hundreds of shmem_<T>_* functions; each body is one
 * call into these routines with a byte count or element size, so all argument checking and
 * logic stays in ordinary, debuggable C in api.c. `fn` is the public routine's name (__func__)
 * and is used only in error messages.
 */
#ifndef FSH_API_H
#define FSH_API_H

#include <stddef.h>
#include <shmem.h>

/* Contiguous put/get of nbytes. nbi != 0: return before completion (shmem_quiet completes). */
void fsh_api_put(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                 int pe, int nbi);
void fsh_api_get(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                 int pe, int nbi);

/* Strided put/get: nelems elements of esize bytes; dst/sst are strides in elements (spec). */
void fsh_api_iput(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t esize, int pe);
void fsh_api_iget(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t esize, int pe);

#endif
