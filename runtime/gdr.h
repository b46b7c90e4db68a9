/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdr.h: GDRCopy, loaded at run time: the device heap's GPU pages mapped into this process, so
 * that the host reads and writes a few bytes of it with loads and stores across PCIe instead of
 * a driver copy and a stream synchronization (each a round trip to the GPU, 5-20 us).
 *
 * Optional everywhere: the library (libgdrapi.so.2, then libgdrapi.so, or FABSHMEM_GDRCOPY_LIB)
 * is dlopen'ed, never linked, and its few entry points are declared in gdr.c from GDRCopy's
 * documented API (no gdrapi.h needed to build). Without it, its kernel module (/dev/gdrdrv), or
 * when the driver refuses to pin the heap, every access stays a driver copy and describe() says
 * why; FABSHMEM_GDRCOPY=on turns that into an init error with cause and fix.
 *
 * What is mapped: the whole 64 KiB GPU pages inside [dev, dev+len) (GDRCopy pins and maps GPU
 * pages; the heap's first and last partial pages, if any, stay with the driver). Reads and
 * writes through the mapping are coherent with the GPU's memory, not with work queued on a
 * stream: callers only use them where every driver copy to the same bytes was synchronized
 * (cuda.c's copies all are) and, for data a kernel or the NIC writes, where a flag guards it.
 */
#ifndef FSH_GDR_H
#define FSH_GDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FABSHMEM_GDRCOPY's words, in env.c's order. */
enum fsh_gdr_mode { FSH_GDR_AUTO, FSH_GDR_ON, FSH_GDR_OFF };

/* GDRCopy's GPU page: pins and mappings are whole pages of this size. */
#define FSH_GDR_PAGE ((size_t)64 * 1024)
/* The largest read and write taken through the mapping. A read is uncached, one PCIe round trip
 * per few bytes (GDRCopy's copylat: a few hundred bytes cost what a driver copy does); a write
 * is posted, write-combined, cheap up to kilobytes. Larger transfers stay driver copies. */
#define FSH_GDR_READ_MAX 256
#define FSH_GDR_WRITE_MAX 4096

/* Load GDRCopy (lib: FABSHMEM_GDRCOPY_LIB, "" for the default names) and map the GPU pages of
 * [dev, dev+len), a cuMemAlloc'ed block of this PE's GPU. 0 when mapped; -ENODEV when mode is
 * off or GDRCopy cannot be had (not recorded for auto: fsh_gdr_describe says why; recorded,
 * with the fix, for on). */
int fsh_gdr_open(enum fsh_gdr_mode mode, const char *lib, void *dev, size_t len);
/* Unmap, unpin, close and unload (before the block is freed). */
void fsh_gdr_close(void);
/* One line: "GDRCopy: in use (...)" with the bytes mapped and the reads and writes taken
 * through the mapping, or "GDRCopy: not used (why)". */
const char *fsh_gdr_describe(void);

/* Copy len bytes of device memory at dev (inside the mapped pages, len <= FSH_GDR_READ_MAX)
 * into host memory dst through the mapping: 0. 1 when it cannot be done that way (not mapped,
 * too long): the caller copies with the driver. Aligned words of 4 and 8 bytes are one load. */
int fsh_gdr_read(void *dst, const void *dev, size_t len);
/* Likewise from host memory src into device memory (len <= FSH_GDR_WRITE_MAX): 0 once the
 * bytes are in the GPU's memory (a fence and a read back through the mapping flush the posted
 * writes), 1 when the caller must copy with the driver. */
int fsh_gdr_write(void *dev, const void *src, size_t len);
/* Is [dev, dev+len) inside the mapped pages? */
bool fsh_gdr_covers(const void *dev, size_t len);

#endif
