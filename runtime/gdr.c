/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gdr.c: GDRCopy loaded with dlopen, and the only code that calls it (gdr.h says what for).
 *
 * Owns the library handle, the resolved entry points, the one pinned and mapped range (the
 * device heap's whole GPU pages) and the counters of reads and writes taken through it. The
 * range is fixed between open and close, so the hot path (fsh_gdr_read, fsh_gdr_write) reads
 * it without a lock from any thread; GDRCopy's copy calls keep no state.
 *
 * GDRCopy's API (gdrapi.h, 2.x) as documented, declared here, not included: gdr_open() returns
 * a handle (NULL when its driver, /dev/gdrdrv, cannot be opened); gdr_pin_buffer(g, addr, size,
 * p2p_token 0, va_space 0, &mh) pins GPU pages; gdr_map(g, mh, &va, size) maps them into this
 * process; gdr_get_info_v2 (gdr_get_info before 2.3: the same leading fields) says which virtual
 * range the mapping starts at; gdr_copy_to_mapping / gdr_copy_from_mapping(mh, ...) copy with
 * the store and load widths a write-combined BAR mapping wants; gdr_unmap, gdr_unpin_buffer and
 * gdr_close undo it, in that order. Results are 0 or an errno value. gdr_mh_t is a struct of one
 * unsigned long passed by value.
 *
 * Never exits, never prints but through the log. A write through the mapping is posted: it is
 * followed by a full fence and a read back of the last word, which returns only once the posted
 * writes before it reached the GPU (PCIe never lets a read pass a write on the same path), so
 * "returned" means "in the GPU's memory", as for cuda.c's synchronized copies.
 */
#include "gdr.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "log.h"

/* GDRCopy's types, as its API documents them. */
struct gdr_mh {
    unsigned long h;
};
struct gdr_info_v2 {
    uint64_t va;
    uint64_t mapped_size;
    uint32_t page_size;
    uint64_t tm_cycles;
    uint32_t cycles_per_ms;
    unsigned mapped : 1;
    unsigned wc_mapping : 1;
    int mapping_type;
};

static struct {
    void *lib;
    const char *name; /* the library loaded */
    void *g;          /* gdr_t */
    struct gdr_mh mh;
    bool pinned;
    uint8_t *lo, *hi; /* the device range mapped */
    uint8_t *map;     /* where lo is mapped here, or NULL */
    void *(*open)(void);
    int (*close)(void *g);
    int (*pin)(void *g, unsigned long addr, size_t size, uint64_t token, uint32_t va_space,
               struct gdr_mh *mh);
    int (*unpin)(void *g, struct gdr_mh mh);
    int (*info)(void *g, struct gdr_mh mh, struct gdr_info_v2 *info);
    int (*map_fn)(void *g, struct gdr_mh mh, void **va, size_t size);
    int (*unmap)(void *g, struct gdr_mh mh, void *va, size_t size);
    int (*to)(struct gdr_mh mh, void *map, const void *src, size_t size);
    int (*from)(struct gdr_mh mh, void *dst, const void *map, size_t size);
} gdr;

static uint64_t reads, writes; /* through the mapping (atomic) */
static char line[384] = "GDRCopy: not used (no device heap)";
static char full[512];

static void unload(void)
{
    if (gdr.map) {
        (void)gdr.unmap(gdr.g, gdr.mh, gdr.map, (size_t)(gdr.hi - gdr.lo));
    }
    if (gdr.pinned) {
        (void)gdr.unpin(gdr.g, gdr.mh);
    }
    if (gdr.g) {
        (void)gdr.close(gdr.g);
    }
    if (gdr.lib) {
        dlclose(gdr.lib);
    }
    memset(&gdr, 0, sizeof(gdr));
}

/* GDRCopy cannot be had: the line says why; an error (with fix) when it was required. */
static int __attribute__((format(printf, 3, 4)))
unavailable(enum fsh_gdr_mode mode, const char *fix, const char *fmt, ...)
{
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    unload();
    snprintf(line, sizeof(line), "GDRCopy: not used (%s)", why);
    if (mode == FSH_GDR_ON) {
        return fsh_err(-ENODEV, fix, "FABSHMEM_GDRCOPY=on but GDRCopy cannot be used: %s", why);
    }
    FSH_INFO("%s", line);
    return -ENODEV;
}

static const char *const fix_lib =
    "install GDRCopy (libgdrapi.so.2 and its gdrdrv module) or set FABSHMEM_GDRCOPY=auto";

static int load(enum fsh_gdr_mode mode, const char *lib)
{
    char err[200] = "";
    const char *names[] = {"libgdrapi.so.2", "libgdrapi.so"};
    for (size_t i = 0; i < (lib && lib[0] ? 1 : 2) && !gdr.lib; i++) {
        gdr.name = lib && lib[0] ? lib : names[i];
        gdr.lib = dlopen(gdr.name, RTLD_NOW | RTLD_LOCAL);
        if (!gdr.lib && !err[0]) {
            const char *e = dlerror();
            snprintf(err, sizeof(err), "%s", e ? e : gdr.name);
        }
    }
    if (!gdr.lib) {
        return unavailable(mode, fix_lib, "library missing: %s", err);
    }
    const char *missing = NULL;
#define SYM(field, name)                                                                       \
    gdr.field = (__typeof__(gdr.field))dlsym(gdr.lib, name);                                   \
    if (!gdr.field && !missing) {                                                              \
        missing = name;                                                                        \
    }
    SYM(open, "gdr_open")
    SYM(close, "gdr_close")
    SYM(pin, "gdr_pin_buffer")
    SYM(unpin, "gdr_unpin_buffer")
    SYM(map_fn, "gdr_map")
    SYM(unmap, "gdr_unmap")
    SYM(to, "gdr_copy_to_mapping")
    SYM(from, "gdr_copy_from_mapping")
#undef SYM
    /* 2.3 renamed it (the v1 record is the v2 one's leading fields, all that is read here). */
    gdr.info = (__typeof__(gdr.info))dlsym(gdr.lib, "gdr_get_info_v2");
    if (!gdr.info) {
        gdr.info = (__typeof__(gdr.info))dlsym(gdr.lib, "gdr_get_info");
    }
    if (missing || !gdr.info) {
        const char *name = gdr.name;
        return unavailable(mode, fix_lib, "%s lacks %s (not GDRCopy 2.x)", name,
                           missing ? missing : "gdr_get_info_v2");
    }
    return 0;
}

int fsh_gdr_open(enum fsh_gdr_mode mode, const char *lib, void *dev, size_t len)
{
    unload();
    if (mode == FSH_GDR_OFF) {
        snprintf(line, sizeof(line), "GDRCopy: not used (FABSHMEM_GDRCOPY=off)");
        return -ENODEV;
    }
    int rc = load(mode, lib);
    if (rc != 0) {
        return rc;
    }
    gdr.g = gdr.open();
    if (!gdr.g) {
        struct stat st;
        if (stat("/dev/gdrdrv", &st) != 0) {
            return unavailable(mode,
                               "load GDRCopy's kernel module (modprobe gdrdrv, or its "
                               "insmod.sh) or set FABSHMEM_GDRCOPY=auto",
                               "/dev/gdrdrv missing: the gdrdrv module is not loaded");
        }
        return unavailable(mode, "check /dev/gdrdrv's permissions, or set FABSHMEM_GDRCOPY=auto",
                           "gdr_open failed although /dev/gdrdrv exists");
    }
    /* Whole GPU pages only: the heap's partial first and last pages stay with the driver. */
    uintptr_t a = ((uintptr_t)dev + FSH_GDR_PAGE - 1) & ~(uintptr_t)(FSH_GDR_PAGE - 1);
    uintptr_t b = ((uintptr_t)dev + len) & ~(uintptr_t)(FSH_GDR_PAGE - 1);
    if (b <= a) {
        return unavailable(mode, "raise FABSHMEM_DEVICE_HEAP_SIZE or set FABSHMEM_GDRCOPY=auto",
                           "the device heap (%zu bytes) holds no whole 64 KiB GPU page", len);
    }
    const char *fix_pin = "GDRCopy needs GPUDirect RDMA (a data-center GPU, its driver's "
                          "peer memory support); or set FABSHMEM_GDRCOPY=auto";
    rc = gdr.pin(gdr.g, (unsigned long)a, b - a, 0, 0, &gdr.mh);
    if (rc != 0) {
        return unavailable(mode, fix_pin, "pin refused: gdr_pin_buffer of %zu bytes at %p: %s",
                           (size_t)(b - a), (void *)a, strerror(rc));
    }
    gdr.pinned = true;
    void *va = NULL;
    rc = gdr.map_fn(gdr.g, gdr.mh, &va, b - a);
    if (rc != 0 || !va) {
        return unavailable(mode, fix_pin, "map refused: gdr_map of %zu bytes: %s",
                           (size_t)(b - a), strerror(rc ? rc : EFAULT));
    }
    gdr.map = va;
    gdr.lo = (uint8_t *)a;
    gdr.hi = (uint8_t *)b;
    struct gdr_info_v2 info;
    memset(&info, 0, sizeof(info));
    rc = gdr.info(gdr.g, gdr.mh, &info);
    /* The mapping starts at the pinned range's first page; anything else would shift every
     * address by an offset this code does not apply. */
    if (rc != 0 || info.va != (uint64_t)a || info.mapped_size < (uint64_t)(b - a)) {
        return unavailable(mode, fix_pin,
                           "gdr_get_info: the mapping is at %#llx (%llu bytes), not at the "
                           "pinned %p (%zu bytes)%s%s",
                           (unsigned long long)info.va, (unsigned long long)info.mapped_size,
                           (void *)a, (size_t)(b - a), rc ? ": " : "", rc ? strerror(rc) : "");
    }
    snprintf(line, sizeof(line), "GDRCopy: in use (%s; %zu bytes of the device heap mapped)",
             gdr.name, (size_t)(b - a));
    FSH_INFO("%s", line);
    return 0;
}

void fsh_gdr_close(void)
{
    unload();
    snprintf(line, sizeof(line), "GDRCopy: not used (no device heap)");
}

const char *fsh_gdr_describe(void)
{
    if (!gdr.map) {
        return line;
    }
    snprintf(full, sizeof(full), "%s; reads %llu, writes %llu through it", line,
             (unsigned long long)__atomic_load_n(&reads, __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&writes, __ATOMIC_RELAXED));
    return full;
}

bool fsh_gdr_covers(const void *dev, size_t len)
{
    const uint8_t *p = dev;
    return gdr.map && p >= gdr.lo && p < gdr.hi && len <= (size_t)(gdr.hi - p);
}

int fsh_gdr_read(void *dst, const void *dev, size_t len)
{
    if (len > FSH_GDR_READ_MAX || !fsh_gdr_covers(dev, len)) {
        return 1;
    }
    const uint8_t *at = gdr.map + ((const uint8_t *)dev - gdr.lo);
    /* An aligned word is one load (never torn: a kernel's or the driver's aligned store of it
     * lands whole); acquire, so what the word guards is read after it. */
    if (len == 8 && ((uintptr_t)at & 7) == 0) {
        uint64_t v = __atomic_load_n((const volatile uint64_t *)at, __ATOMIC_ACQUIRE);
        memcpy(dst, &v, 8);
    } else if (len == 4 && ((uintptr_t)at & 3) == 0) {
        uint32_t v = __atomic_load_n((const volatile uint32_t *)at, __ATOMIC_ACQUIRE);
        memcpy(dst, &v, 4);
    } else if (gdr.from(gdr.mh, dst, at, len) != 0) {
        return 1;
    }
    /* Loads from a write-combining mapping are weakly ordered, even on x86, where an acquire
     * load is a plain one: a full fence keeps later reads (what the word guards) after it. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_add_fetch(&reads, 1, __ATOMIC_RELAXED);
    return 0;
}

int fsh_gdr_write(void *dev, const void *src, size_t len)
{
    if (len == 0 || len > FSH_GDR_WRITE_MAX || !fsh_gdr_covers(dev, len)) {
        return 1;
    }
    uint8_t *at = gdr.map + ((uint8_t *)dev - gdr.lo);
    if (len == 8 && ((uintptr_t)at & 7) == 0) {
        uint64_t v;
        memcpy(&v, src, 8);
        __atomic_store_n((volatile uint64_t *)at, v, __ATOMIC_RELEASE);
    } else if (gdr.to(gdr.mh, at, src, len) != 0) {
        return 1;
    }
    /* Drain the write-combining buffers, then read the last byte back: the read completes only
     * after the posted writes ahead of it reached the GPU's memory. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    (void)__atomic_load_n((const volatile uint8_t *)(at + len - 1), __ATOMIC_ACQUIRE);
    __atomic_add_fetch(&writes, 1, __ATOMIC_RELAXED);
    return 0;
}
