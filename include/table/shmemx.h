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

/* ------------------------------------------------------------------ expert parallelism (MoE)
 * The mixture-of-experts exchange (docs/ep.md): dispatch sends each token to the PEs that own
 * its top-k experts; combine brings the experts' outputs back to the token's owner, summed with
 * the top-k weights. These calls are the host reference (host memory, driven by the calling
 * thread); the GPU path, include/shmemx_ep_device.h, has the same semantics and wire protocol
 * (PEs on either path exchange with each other) and runs from kernels or streams.
 *
 * Shape (shmemx_ep_config_t), the same on every PE:
 *   max_tokens   tokens a PE may dispatch per call (n <= max_tokens);
 *   hidden       elements per token;
 *   dispatch_elem_bytes   1, 2 or 4: a dispatched element is opaque bytes (FP8, BF16, ...);
 *   combine_type SHMEMX_EP_FLOAT32 or SHMEMX_EP_BFLOAT16: the element type of expert outputs
 *                and of combine's result (bfloat16 = the upper half of an IEEE float);
 *   num_experts  experts in all, a multiple of the team's size: team PE p owns experts
 *                p*L .. p*L+L-1, L = num_experts / team size ("local experts");
 *   topk         experts per token, 1 <= topk <= num_experts;
 *   scale_bytes  optional opaque bytes per token carried with it (FP8 scales; 0 = none);
 *   device_heap  1: the symmetric buffers in the device heap (FABSHMEM_DEVICE_HEAP_SIZE must
 *                leave room), for the GPU path only; 0 (default): the host heap, both paths.
 *
 * shmemx_ep_create(team, config) is collective: every PE of the program calls it at once (it
 * allocates symmetric memory once, like shmem_malloc), each with the team of its EP group: the
 * world team, or a split of it (e.g. shmem_team_split_strided into groups; groups may differ in
 * size and shape, and every PE is in one). Every PE of a group passes the same team and config,
 * every PE the same device_heap (else the job ends naming the PE). Each PE's block is the largest
 * any group needs: SHMEM_SYMMETRIC_SIZE must leave room for the largest
 * shmemx_ep_heap_bytes(config, group size). No call allocates symmetric memory after it.
 * shmemx_ep_destroy is collective the same way and frees it.
 *
 * A call sequence on each PE is: dispatch_send, dispatch_recv, then optionally combine_send,
 * combine_recv, and again. Every PE of the team takes part in every dispatch (n may be 0) and
 * in every combine, in the same order. Between a send half and its receive half the caller may
 * compute; it must not modify tokens, scales, topk_idx, topk_weights (dispatch) or expert_out
 * (combine) in between. The send half returns as soon as everything is posted; the receive half
 * waits, per source PE, for that PE's counts and data (never a barrier; a dead peer ends the job
 * naming it, as every wait does).
 *
 * shmemx_ep_dispatch_send(ep, tokens, scales, topk_idx, topk_weights, n):
 *   tokens [n x hidden] elements of dispatch_elem_bytes; scales [n x scale_bytes] (NULL when
 *   scale_bytes is 0); topk_idx [n x topk] int32 expert ids, -1 for "none" (each id at most once
 *   per token); topk_weights [n x topk] float, the weight of each expert in combine.
 * shmemx_ep_dispatch_recv(ep, &recv) fills recv with this PE's received rows, expert-major:
 *   for local expert e (0..L-1) rows expert_offset[e] .. +expert_count[e]-1 of tokens (rows of
 *   hidden elements) and scales; within an expert, rows are ordered by source team PE, then by
 *   source token index. src_pe[r] (team PE) and src_token[r] (its index in that PE's call) say
 *   where row r came from. The arrays are owned by the handle and stay valid until the next
 *   dispatch_recv or destroy.
 * shmemx_ep_combine_send(ep, expert_out): expert_out [recv.total x hidden] of combine_type, the
 *   expert outputs in the layout of the last dispatch_recv (row r: expert output for row r).
 * shmemx_ep_combine_recv(ep, out): out [n x hidden] of combine_type, n = this PE's last
 *   dispatch n: out[t] = sum over j of topk_weights[t][j] * expert_out(row of (t, topk_idx[t][j])),
 *   zero for a token with no expert. Each expert PE sums its own experts' terms for a token in
 *   float and sends the partial sum in combine_type; the owner adds the partials of the PEs in
 *   team order in float and rounds once to combine_type (bit-exact when the terms are exactly
 *   representable; otherwise within the rounding of those steps).
 * All return 0. Bad arguments (a shape that cannot work, n > max_tokens, an expert id outside
 * [-1, num_experts), a repeated id, calls out of order) end the job naming cause and fix. */
typedef struct shmemx_ep *shmemx_ep_t;
enum { SHMEMX_EP_FLOAT32 = 1, SHMEMX_EP_BFLOAT16 = 2 };
typedef struct {
    size_t max_tokens;
    size_t hidden;
    size_t dispatch_elem_bytes;
    int combine_type;
    int num_experts;
    int topk;
    size_t scale_bytes;
    int device_heap;
} shmemx_ep_config_t;
typedef struct {
    size_t total;                /* rows received (a token counts once per local expert) */
    int local_experts;           /* L */
    int first_expert;            /* global id of local expert 0 */
    const void *tokens;          /* [total x hidden] of dispatch_elem_bytes */
    const void *scales;          /* [total x scale_bytes], NULL when scale_bytes is 0 */
    const size_t *expert_count;  /* [L] */
    const size_t *expert_offset; /* [L] first row of each local expert */
    const int *src_pe;           /* [total] team PE of the row's token */
    const int *src_token;        /* [total] its index in that PE's dispatch */
} shmemx_ep_recv_t;
/* Bytes of symmetric heap one handle of this shape takes at npes PEs (0: shape invalid). */
FSH_API size_t shmemx_ep_heap_bytes(const shmemx_ep_config_t *config, int npes);
FSH_API shmemx_ep_t shmemx_ep_create(shmem_team_t team, const shmemx_ep_config_t *config);
FSH_API void shmemx_ep_destroy(shmemx_ep_t ep);
FSH_API int shmemx_ep_dispatch_send(shmemx_ep_t ep, const void *tokens, const void *scales,
                                    const int32_t *topk_idx, const float *topk_weights,
                                    size_t n);
FSH_API int shmemx_ep_dispatch_recv(shmemx_ep_t ep, shmemx_ep_recv_t *recv);
FSH_API int shmemx_ep_combine_send(shmemx_ep_t ep, const void *expert_out);
FSH_API int shmemx_ep_combine_recv(shmemx_ep_t ep, void *out);

#ifdef __cplusplus
}
#endif

#endif /* FABSHMEM_SHMEMX_H */
