/* SPDX-License-Identifier: BSD-3-Clause */
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
 * are unaffected by changes to the system clock. Callable before shmem_init. HAVE_SHMEMX_WTIME
 * says it is there, as Sandia OpenSHMEM's shmemx.h does: programs written for it define their
 * own static shmemx_wtime without it, which would clash with this declaration. */
#define HAVE_SHMEMX_WTIME 1
FSH_API double shmemx_wtime(void);

/* ------------------------------------------------------------------ GPU memory: the device heap
 * A second symmetric heap of FABSHMEM_DEVICE_HEAP_SIZE bytes (default 0: off) on each PE's GPU
 * (the topology's choice; CUDA is loaded at run time, so the same library runs without one).
 *
 *   shmemx_malloc_device / shmemx_calloc_device / shmemx_free_device: collective and
 *   deterministic exactly like shmem_malloc / shmem_calloc / shmem_free (same calls on every PE,
 *   barrier after allocation and before free). Without a GPU on every PE, or with
 *   FABSHMEM_DEVICE_HEAP_SIZE=0, they return NULL with a warning that says why.
 *
 * The pointers are CUDA device pointers (usable in kernels and cudaMemcpy). With them:
 *   - shmem_putmem/getmem and the typed put/get (blocking and _nbi), any combination of host
 *     and device heaps, remote or local; a local buffer may be host or GPU memory;
 *   - shmem_put_signal / _nbi with dest and/or the signal word in the device heap: the signal
 *     is applied only after the data is in the target's memory (GPU memory included);
 *   - every atomic (standard, extended, bitwise; 4 and 8 bytes) on a device-heap object, and
 *     shmem_signal_fetch / shmem_signal_wait_until / shmem_TYPE_wait_until* / test* on device
 *     words: device AMOs are applied by the owning PE's CPU on a copy of the word, one at a
 *     time, so they are atomic with respect to each other (not to a GPU kernel writing the
 *     same word meanwhile);
 *   - strided put/get (shmem_TYPE_iput/iget) with either side in GPU memory (element by element);
 *   - shmem_alltoallmem / shmem_TYPE_alltoall and shmemx_alltoallv with a device dest and/or
 *     source.
 * Not supported on device memory (the job ends with a message saying so): locks, the other
 * collectives' dest.
 * Operations that involve GPU memory complete before they return (_nbi included).
 * shmemx_device_info() says how peers' GPU memory is reached (SHMEM_INFO=1 prints it too). */
FSH_API void *shmemx_malloc_device(size_t size);
FSH_API void *shmemx_calloc_device(size_t count, size_t size);
FSH_API void shmemx_free_device(void *ptr);
/* Bytes of the device heap on every PE; 0 when it is off. */
FSH_API size_t shmemx_device_heap_size(void);
/* One line: size, GPU and registration path, or why the device heap is off ("no GPU: ..."). */
FSH_API const char *shmemx_device_info(void);

/* ------------------------------------------------------------------ stream-ordered calls
 * (docs/stream.md). Each call puts its operation on a CUDA stream and returns at once: the
 * operation runs when the stream reaches it (after the kernels and copies queued before it),
 * and what the stream queues after it starts only once it completed. No host synchronization;
 * the calls may be captured into a CUDA graph, and each launch of the graph runs them again.
 * `stream` is a CUstream or cudaStream_t of this PE's GPU (the primary context, the CUDA
 * runtime's), passed as void * so no CUDA header is needed; NULL is the legacy default stream
 * (which cannot be captured). They need the device heap (FABSHMEM_DEVICE_HEAP_SIZE); buffers
 * may be host or device symmetric memory. While a stream holds such calls, do not call a host
 * collective on the same team, and synchronize the streams before shmem_finalize.
 *   putmem_signal: shmem_putmem_signal (SHMEM_SIGNAL_SET or _ADD), complete at the target
 *     when the stream moves on (the source may be reused);
 *   signal_wait_until: the stream waits until the local signal word satisfies cmp;
 *   quiet: every put of this PE issued so far, on streams or not, is complete;
 *   barrier_all: shmem_barrier_all; alltoallmem: shmem_alltoallmem on team.
 * shmemx_stream_info() says how streams are served (SHMEM_INFO=1 prints it at first use). */
FSH_API void shmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nbytes,
                                            uint64_t *sig_addr, uint64_t signal, int sig_op,
                                            int pe, void *stream);
FSH_API void shmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp,
                                                uint64_t cmp_value, void *stream);
FSH_API void shmemx_quiet_on_stream(void *stream);
FSH_API void shmemx_barrier_all_on_stream(void *stream);
FSH_API void shmemx_alltoallmem_on_stream(shmem_team_t team, void *dest, const void *source,
                                          size_t nelems, void *stream);
FSH_API const char *shmemx_stream_info(void);

/* ------------------------------------------------------------------ all-to-all, variable sizes
 * shmemx_alltoallvmem: every PE of the team sends a different amount to every other (the MoE
 * token-dispatch pattern), and receivers learn the amounts at run time.
 *
 *   PE i sends send_counts[j] bytes, read from source + send_displs[j], to team PE j
 *   (source is any local memory; send_counts and send_displs have one entry per team PE).
 *   Blocks land in dest back to back in team PE order: on return recv_counts[j] holds the
 *   bytes that came from PE j and recv_displs[j] where they start in dest (a prefix sum,
 *   computed on the receiver; recv_displs[0] == 0).
 *   dest is symmetric and has room for dest_size bytes on this PE.
 *
 * Counts travel first, one small write per peer; each receiver computes the displacements and
 * answers every sender with its offset; then each sender writes its block with one signalled
 * write per peer. Returns 0 on success. If the blocks bound for a PE would not fit in its
 * dest_size, that PE receives nothing, its senders skip it, and the call returns nonzero on it
 * and on every PE that had data for it (the other pairs are exchanged normally).
 *
 * Typed forms count elements of the type instead of bytes (shmemx_int_alltoallv, ...), for
 * the spec's standard RMA types, and shmemx_alltoallv(team, dest, ...) selects one by the type
 * of dest in C11. */
FSH_API int shmemx_alltoallvmem(shmem_team_t team, void *dest, size_t dest_size,
                                const void *source, const size_t *send_counts,
                                const size_t *send_displs, size_t *recv_counts,
                                size_t *recv_displs);
/* flat-header: omit */
#define FSH_DECL_ALLTOALLV(CTYPE, NAME)                                                          \
    FSH_API int shmemx_##NAME##_alltoallv(shmem_team_t team, CTYPE *dest, size_t dest_nelems,    \
                                          const CTYPE *source, const size_t *send_counts,        \
                                          const size_t *send_displs, size_t *recv_counts,        \
                                          size_t *recv_displs);
#define FSH_DECL_ALLTOALLV_ROW(CTYPE, NAME, RMA, ...) FSH_IF(RMA, FSH_DECL_ALLTOALLV(CTYPE, NAME))
/* flat-header: end */
/* flat-header: expand */
FSH_TYPE_TABLE(FSH_DECL_ALLTOALLV_ROW)
/* flat-header: end */

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
/* flat-header: omit */
#define FSH_GA_X_alltoallv(T, N, R, A, E, B, S, x, y, z, GEN)                                    \
    FSH_IF2(R, GEN, , T *: shmemx_##N##_alltoallv)
/* flat-header: end */
/* flat-header: expand */
#define FSH_GL_X_alltoallv(x) FSH_GSELECT(x, FSH_GA_X_alltoallv)
/* flat-header: end */
#define shmemx_alltoallv(team, dest, ...) FSH_GL_X_alltoallv(dest)(team, dest, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif

#endif /* FABSHMEM_SHMEMX_H */
