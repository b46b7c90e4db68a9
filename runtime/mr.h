/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.h: registered symmetric segments and remote address translation.
 *
 * Symmetric segments: the symmetric heap, the executable's data+bss, and the optional device heap. Each is
 * registered once; its key and base are exchanged at init. A symmetric address is (segment,
 * offset), and the same offset names the same object on every PE even though the segments sit
 * at different virtual addresses (ASLR, PIE).
 */
#ifndef FSH_MR_H
#define FSH_MR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A private buffer registered on every rail (fabric.h): fsh_mr_reg_local makes one. */
struct fsh_mr_set;

/* FSH_SEG_DEVICE: the device heap on the PE's GPU (devmem.c), length 0 when off. On the staging
 * path it is not registered with the NIC and never mapped by peers: only devmem.c reaches it. */
enum fsh_seg { FSH_SEG_HEAP = 0, FSH_SEG_DATA, FSH_SEG_DEVICE, FSH_NSEGS };

int fsh_mr_init(int npes);
void fsh_mr_fini(void);

/* The executable's writable data: .data and .bss, without the RELRO part. */
int fsh_mr_find_data_segment(void **base, size_t *len);
/* Fails with cause and fix when registering `bytes` would exceed RLIMIT_MEMLOCK on a provider
 * that pins memory. */
int fsh_mr_check_memlock(size_t bytes);
/* Does this process hold CAP_IPC_LOCK (then the kernel ignores RLIMIT_MEMLOCK)? */
bool fsh_mr_has_ipc_lock(void);
int fsh_mr_reg_segment(enum fsh_seg seg, void *base, size_t len);
/* Make [base, base+len) segment seg for lookups without registering it (the device heap on the
 * staging path: the NIC never touches it). len 0 removes it. */
void fsh_mr_set_segment(enum fsh_seg seg, void *base, size_t len);

/* Register GPU memory [base, base+len) as segment seg (after init's exchange): as a dmabuf
 * (FI_MR_DMABUF) when dmabuf_fd >= 0, else with iface FI_HMEM_CUDA on CUdevice cuda_dev
 * (FI_HMEM_SYSTEM when system: tests with a mock driver whose device memory is host memory). */
int fsh_mr_reg_device(enum fsh_seg seg, void *base, size_t len, int cuda_dev, int dmabuf_fd,
                      bool system);
/* Close segment seg's registration and forget it. */
void fsh_mr_dereg_segment(enum fsh_seg seg);
/* Publish segment seg (registered after the init exchange) to every PE: collective. */
int fsh_mr_exchange_segment(enum fsh_seg seg, double timeout);

/* The segments' keys of every rail but the first, packed into buf (room bytes): their length,
 * 0 with one rail. They travel in the exchange slot (fsh_fabric_getname's extra). */
size_t fsh_mr_rail_keys_pack(void *buf, size_t room);
/* pe's keys of its further rails, as packed (n bytes). */
int fsh_mr_rail_keys_unpack(int pe, const void *buf, size_t n);

/* The per-PE part of the exchange blob (rail 0's keys). */
size_t fsh_mr_blob_size(void);
void fsh_mr_blob_pack(void *blob);
void fsh_mr_blob_unpack(int pe, const void *blob);

/* Which segment holds [addr, addr+len); -EFAULT when none holds all of it. */
int fsh_mr_lookup(const void *addr, size_t len, enum fsh_seg *seg, uint64_t *off);
/* The remote address and key of (seg, off) on pe, the key of pe's first rail. */
void fsh_mr_remote(int pe, enum fsh_seg seg, uint64_t off, uint64_t *raddr, uint64_t *key);
/* The key, on pe's rail dst, of the region whose key on its first rail is key0. */
uint64_t fsh_mr_key_on(int pe, int dst, uint64_t key0);
/* Local address of (seg, off) on this PE. */
void *fsh_mr_local_addr(enum fsh_seg seg, uint64_t off);

/* Register private memory the runtime reuses for many operations (bounce buffers); the
 * descriptor stays valid until fsh_mr_dereg_local. */
int fsh_mr_reg_local(void *buf, size_t len, struct fsh_mr_set **set);
/* Its descriptor on rail `rail`. */
void *fsh_mr_set_desc(const struct fsh_mr_set *set, int rail);
void fsh_mr_dereg_local(struct fsh_mr_set *set);

/* Is [addr, addr+len) in the device heap registered with the provider (dmabuf or cuda path)?
 * Such a buffer always goes with its descriptor, whatever the MR mode, and is never injected:
 * the descriptor is how the provider learns it is GPU memory (without one, shm copies it
 * with memcpy: a crash on a real GPU). */
bool fsh_mr_is_device(const void *addr, size_t len);
/* A temporary registration of a private buffer, opaque outside mr.c (it is the provider's). */
struct fsh_mr_tmp;
/* A descriptor for a local buffer on rail `rail`: the segment's when it lies in one, else a
 * temporary registration (*tmp set, to be released when the operation completes). */
int fsh_mr_desc(const void *addr, size_t len, int rail, void **desc, struct fsh_mr_tmp **tmp);
/* Close a temporary registration fsh_mr_desc made. */
void fsh_mr_release(struct fsh_mr_tmp *tmp);

#endif
