/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cuda.h: the CUDA driver, loaded at run time.
 *
 * The library never links libcuda: fsh_cuda_open() dlopens it (FABSHMEM_CUDA_LIB, default
 * libcuda.so.1), resolves the few driver entry points the runtime uses, picks this PE's GPU and
 * makes its primary context current. Without a driver, a GPU, or a build with CUDA headers
 * (--with-cuda), it ends in a clean "no GPU" state with the reason, never an error: one library
 * serves hosts with and without GPUs. CUDA result codes are translated here and nowhere else.
 *
 * Pointers: device memory is addressed through the driver's unified address space, so a
 * device address is carried as a plain pointer (uintptr_t of a CUdeviceptr) everywhere else.
 */
#ifndef FSH_CUDA_H
#define FSH_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Load the driver and open the GPU of this PE. Returns 0 with a GPU, -ENODEV (not recorded:
 * fsh_cuda_reason() says why) without one. lib: the library to dlopen, "" for libcuda.so.1;
 * busid: the topology's PCI bus id of this PE's GPU, or NULL to take local_rank mod count. */
int fsh_cuda_open(const char *lib, const char *busid, int local_rank);
void fsh_cuda_close(void);
bool fsh_cuda_ready(void);
/* Why there is no GPU ("no GPU: ..."), or which GPU is in use. */
const char *fsh_cuda_reason(void);

/* Device memory. NULL (error recorded) on failure. */
void *fsh_cuda_alloc(size_t len);
void fsh_cuda_free(void *p);
/* Is p device memory (false without a GPU)? */
bool fsh_cuda_is_device(const void *p);
/* Copies that have completed on return (the data is visible to the GPU, or to the host);
 * either side may be host or device memory. Safe from any thread (makes the context current). */
int fsh_cuda_copy(void *dst, const void *src, size_t len);
/* Several copies, one synchronization (each costs a round trip to the GPU, 5-20 us): queued on
 * the one stream in the order of the calls, so each lands after the ones queued before it;
 * complete only once fsh_cuda_sync() (or a synchronized copy after them) returned. A host
 * source may be reused on return (the driver stages pageable memory); a host destination is
 * written only by then. Host to host is copied at once, after what is queued. */
int fsh_cuda_copy_async(void *dst, const void *src, size_t len);
/* Queue the 8-byte write of value to the device address dev, after what is queued. Its
 * callers serialize (one staging word: devmap.c calls it under the engine lock). */
int fsh_cuda_write64_async(void *dev, uint64_t value);
/* Wait for everything queued: complete, and visible to the GPU and the host, on return. */
int fsh_cuda_sync(void);
int fsh_cuda_memset(void *dst, int c, size_t len);
/* Page-lock host memory for faster copies; failure is harmless (returns -errno, not recorded). */
int fsh_cuda_host_register(void *p, size_t len);
void fsh_cuda_host_unregister(void *p);
/* A dmabuf file descriptor for [p, p+len) of device memory, or -errno (not recorded). p and
 * len must be multiples of the host page size (the device heap is). */
int fsh_cuda_dmabuf_fd(void *p, size_t len, int *fd);
/* The CUdevice ordinal in use (FI_HMEM_CUDA registration names it), -1 without a GPU. */
int fsh_cuda_device(void);
/* Make every GPUDirect RDMA write that has reached this GPU visible to later CUDA work and to
 * the driver's copies (cuFlushGPUDirectRDMAWrites, owner scope). Called before a signal or a
 * synchronization that guards NIC-written device data takes effect. */
int fsh_cuda_flush_rdma(void);

/* CUDA IPC: device memory of one process mapped into another of the same node (the device
 * heap's same-node path). A handle is FSH_CUDA_IPC_BYTES opaque bytes. Failures are not
 * recorded: they return -errno and write the reason (with the CUDA error) into why, since a
 * refused mapping only means the caller falls back. Opening a handle of this very process is
 * refused by the driver (the caller never asks). */
#define FSH_CUDA_IPC_BYTES 64
/* The handle of the cuMemAlloc'ed block at base. */
int fsh_cuda_ipc_export(void *base, void *handle, char *why, size_t len);
/* Map a peer's handle here (peer access enabled as needed); *p: where it is mapped. */
int fsh_cuda_ipc_open(const void *handle, void **p, char *why, size_t len);
void fsh_cuda_ipc_close(void *p);

/* ------------------------------------------------------------------ stream-ordered operations
 * (api_stream.c) and the device API (api_device.c, proxy.c). A stream is the caller's
 * CUstream / cudaStream_t, carried as void * (NULL: the legacy default stream). Errors are
 * recorded with cause and fix. */

/* Page-locked host memory mapped for the device (cuMemHostAlloc, DEVICEMAP): the host address,
 * and in *devptr the address the GPU (kernels, the stream memory operations) use for the same
 * bytes; zeroed. NULL (error recorded) on failure. */
void *fsh_cuda_host_alloc(size_t len, void **devptr);
void fsh_cuda_host_free(void *p);
/* Is stream a live stream of this PE's context? 0, or -EINVAL naming the driver's answer. */
int fsh_cuda_stream_check(void *stream);
/* Is stream capturing into a graph now? */
int fsh_cuda_stream_capturing(void *stream, bool *capturing);
/* Can a resource be tied to a captured graph's life (CUDA user objects)? NULL if so, else the
 * entry point the driver lacks (or why not). */
const char *fsh_cuda_graph_ties_missing(void);
/* Tie fn(arg) to the graph stream is capturing into: the driver calls it, on a thread of its
 * own (no CUDA call and no blocking allowed there), once the graph, every graph instantiated
 * from it and every launch of those are gone. 0; -ENOTSUP (not recorded) where the driver
 * lacks user objects; else the error, recorded (fn then never runs). */
int fsh_cuda_stream_tie(void *stream, void (*fn)(void *), void *arg);
/* Can the stream memory operations (32-bit write and wait) be used here? true, or false with
 * why; info gets the device's memory-operation attributes either way. Tried once on a stream
 * of fabshmem's own (a write, then a wait on what it wrote, synchronized); after
 * fsh_cuda_stream_prepare, its answer without a CUDA call. */
bool fsh_cuda_stream_memops(char *why, size_t why_len, char *info, size_t info_len);

/* A stream-ordered call's slot (api_stream.c): its go and done words on cache lines of their
 * own. */
#define FSH_CUDA_STREAM_SLOT_BYTES 128
/* At the device heap's start (devmem.c): the stream-ordered calls' table, bytes of host memory
 * mapped for the GPU (zeroed), and the memory-operation probe. Done here, before the program
 * has a stream, because both are implicit synchronization points or synchronize: done by the
 * first stream call, they waited for a program's stream held at that moment (a host function
 * waiting for the program, a wait for a later signal), which never moved. An error is kept for
 * fsh_cuda_stream_words; the table is freed by fsh_cuda_close. */
void fsh_cuda_stream_prepare(size_t bytes);
/* The prepared table: 0 with its host address, the GPU's address of it and its size, or the
 * error of the preparation, recorded again. */
int fsh_cuda_stream_words(void **words, void **dev, size_t *bytes);
/* Queue on stream: a 32-bit write of value to dev (a device address), or a wait until the
 * 32-bit word at dev equals value; a host function (runs on the driver's thread). */
int fsh_cuda_stream_write32(void *stream, void *dev, uint32_t value);
int fsh_cuda_stream_wait32(void *stream, void *dev, uint32_t value);
int fsh_cuda_stream_host_fn(void *stream, void (*fn)(void *), void *arg);

#endif
