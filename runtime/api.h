/* SPDX-License-Identifier: BSD-3-Clause */
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
#include <stdint.h>
#include <pshmem.h>
#include <shmem.h>

#include "amo.h"
#include "wait.h"

/* The profiling interface (pshmem.h): every public routine is defined as pshmem_<name>, and
 * FSH_PROFILED(shmem_<name>) before it exports shmem_<name> as a weak alias of it, so a tool
 * that defines shmem_<name> (linked first, or LD_PRELOADed) takes the program's calls and
 * forwards them to pshmem_<name>. The library itself never calls a shmem_ name: a tool sees
 * only the program's calls. FSH_P(shmem_x) is pshmem_x, for a name passed as a macro argument;
 * FSH_FN is the name the user called (shmem_x, __func__ without its p) for messages. */
#define FSH_PROFILED(name) extern __typeof__(p##name) name __attribute__((weak, alias("p" #name)));
#define FSH_P(name) p##name
#define FSH_FN (__func__ + 1)

/* nelems * esize, or SIZE_MAX when the product overflows: a wrapped count would look like a
 * small valid transfer, while SIZE_MAX is always rejected by api.c as exceeding the address
 * space, so the overflow is reported instead of silently moving the wrong amount. */
static inline size_t bytes_of(size_t nelems, size_t esize)
{
    if (esize != 0 && nelems > SIZE_MAX / esize) {
        return SIZE_MAX;
    }
    return nelems * esize;
}

/* Contiguous put/get of nbytes. nbi != 0: return before completion (shmem_quiet completes). */
/* shmem_ctx_create and shmem_team_create_ctx: options checked, a context on team (NULL:
 * world), drawing on its reservation of endpoints (may be NULL). 0, or 1 and
 * SHMEM_CTX_INVALID (the spec's failure). */
struct fsh_lane_reserve;
int fsh_api_ctx_create(const char *fn, long options, void *team,
                       struct fsh_lane_reserve *reserve, shmem_ctx_t *ctx);
void fsh_api_put(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                 int pe, int nbi);
void fsh_api_get(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, size_t nbytes,
                 int pe, int nbi);

/* Strided put/get: nelems elements of esize bytes; dst/sst are strides in elements (spec). */
void fsh_api_iput(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t esize, int pe);
void fsh_api_iget(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t esize, int pe);
/* Blocked strided put/get (OpenSHMEM 1.6 ibput/ibget): nblocks blocks of bsize elements, block
 * i from src + i*sst to dest + i*dst; strides in elements, at least bsize. */
void fsh_api_ibput(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                   ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe);
void fsh_api_ibget(const char *fn, shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                   ptrdiff_t sst, size_t bsize, size_t nblocks, size_t esize, int pe);

/* ------------------------------------------------------------------ atomics */
/* enum fsh_amo_op (FSH_AMO_FETCH, ...) is in amo.h. */
/* One atomic on the size-byte object at symmetric `target` of pe. value: the operand (NULL for
 * fetch/inc/fetch_inc); cond: the compare value (cswap only); fetch: where the old value goes
 * (NULL for the non-fetching ops). size is 4 or 8: every AMO type is bit-exact on the
 * unsigned integer of its size (amo.c). nbi != 0 (fetching _nbi forms): *fetch is valid after
 * shmem_quiet. */
void fsh_api_amo(const char *fn, shmem_ctx_t ctx, int op, void *target, const void *value,
                 const void *cond, void *fetch, size_t size, int pe, int nbi);

/* ------------------------------------------------------------------ point-to-point sync */
/* enum fsh_sync_mode (FSH_SYNC_ONE, ...) is in wait.h. */
/* Compare ivars[i] (esize bytes, signed or not) with values[vector ? i : 0] under cmp
 * (SHMEM_CMP_*), skipping every i whose status[i] != 0 (status may be NULL).
 * block != 0: wait until satisfied, driving progress; else test (after one progress pass).
 *   ONE  (wait_until/test on one ivar, nelems 1): 1 if satisfied, else 0
 *   ALL  1 if every unmasked element is satisfied (none unmasked: 1), else 0
 *   ANY  the index of one satisfied element; SIZE_MAX if none (or all masked)
 *   SOME stores the indices of all satisfied elements in indices[], returns how many
 *        (a wait returns as soon as at least one is; 0 only when all are masked). */
size_t fsh_api_sync(const char *fn, int mode, int block, void *ivars, size_t nelems,
                    const int *status, int cmp, const void *values, int vector, size_t esize,
                    int is_signed, size_t *indices);

/* ------------------------------------------------------------------ put with signal */
/* nbytes at dest of pe, then the 64-bit signal at sig_addr of pe updated with sig_op
 * (SHMEM_SIGNAL_SET/ADD); the signal is never visible before the data. */
void fsh_api_put_signal(const char *fn, shmem_ctx_t ctx, void *dest, const void *src,
                        size_t nbytes, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                        int nbi);

/* ------------------------------------------------------------------ collectives */
/* The team collectives, nelems elements of esize bytes (1 for the *mem forms); the int is
 * the routine's return value. reduce's type and op are enum fsh_red_type / fsh_red_op. */
int fsh_api_alltoall(const char *fn, shmem_team_t team, void *dest, const void *src,
                     size_t nelems, size_t esize);
int fsh_api_alltoalls(const char *fn, shmem_team_t team, void *dest, const void *src,
                      ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize);
int fsh_api_broadcast(const char *fn, shmem_team_t team, void *dest, const void *src,
                      size_t nelems, int root, size_t esize);
int fsh_api_collect(const char *fn, shmem_team_t team, void *dest, const void *src,
                    size_t nelems, size_t esize, int fixed);
int fsh_api_reduce(const char *fn, shmem_team_t team, void *dest, const void *src,
                   size_t nreduce, size_t esize, int type, int op);
int fsh_api_alltoallv(const char *fn, shmem_team_t team, void *dest, size_t dest_nelems,
                      const void *src, const size_t *send_counts, const size_t *send_displs,
                      size_t *recv_counts, size_t *recv_displs, size_t esize);
/* The deprecated active-set reductions (shmem_<T>_<op>_to_all). */
void fsh_api_to_all(const char *fn, void *dest, const void *src, int nreduce, int start,
                    int log_stride, int size, size_t esize, int type, int op);

#endif
