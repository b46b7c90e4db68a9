/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mock_gdr.c: a stand-in for GDRCopy's libgdrapi.so.2 over the mock CUDA driver
 * (tests/gpu/libmockcuda.so), for testing runtime/gdr.c on hosts without a GPU.
 *
 * The mock driver's device memory is a memfd mapped PROT_NONE (a runtime that loads or stores
 * it directly dies). gdr_map maps the pinned pages of that memfd a second time, readable and
 * writable, at another address: the BAR mapping of a real GPU, the one legitimate way for the
 * host to touch device memory. The mock finds the memfd through the mock driver's
 * mock_cuda_backing, in the driver the runtime loaded (dlopen(FABSHMEM_CUDA_LIB, RTLD_NOLOAD)).
 *
 * As strict as the documented API and stricter where the runtime must be careful anyway: a pin
 * must start and end on a 64 KiB GPU page and lie inside one cuMemAlloc allocation; gdr_map
 * maps a pinned handle once, its whole size; gdr_unmap takes back exactly that; a handle is
 * unpinned only once unmapped; the copy calls take only addresses inside a mapping of their
 * handle. Every refusal is an errno value, as the library returns. gdr_close (and the library's
 * unloading while a handle is open) with buffers still pinned or mapped prints what leaked and
 * aborts the process, so a test that leaks fails.
 *
 * Calls are counted per entry point: mock_gdr_calls(name) (e.g. "gdr_map",
 * "gdr_copy_from_mapping") is exported for tests, found like the mock driver's counts
 * (dlopen(FABSHMEM_GDRCOPY_LIB, RTLD_NOLOAD)); mock_gdr_live() is the number of handles pinned.
 * MOCK_GDR_OPEN=fail makes gdr_open fail (no /dev/gdrdrv); MOCK_GDR_PIN=<errno> makes
 * gdr_pin_buffer refuse with that value (a GPU or driver without GPUDirect RDMA).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE ((uintptr_t)64 * 1024)
#define MAX_HANDLES 16
#define MAX_COUNTED 16

/* The library's types, as documented. */
typedef struct mock_gdr *gdr_t;
typedef struct {
    unsigned long h;
} gdr_mh_t;
typedef struct {
    uint64_t va;
    uint64_t mapped_size;
    uint32_t page_size;
    uint64_t tm_cycles;
    uint32_t cycles_per_ms;
    unsigned mapped : 1;
    unsigned wc_mapping : 1;
    int mapping_type;
} gdr_info_v2_t;

struct mock_gdr {
    int open;
};

static struct {
    pthread_mutex_t lock;
    struct mock_gdr g;
    int opens;
    struct {
        int used;
        uintptr_t va; /* the pinned device range */
        size_t len;
        int fd;
        size_t off;
        uint8_t *map; /* its mapping, or NULL */
    } h[MAX_HANDLES];
    const char *name[MAX_COUNTED];
    unsigned long n[MAX_COUNTED];
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void count(const char *fn)
{
    pthread_mutex_lock(&st.lock);
    int i = 0;
    while (i < MAX_COUNTED && st.name[i] && st.name[i] != fn) {
        i++;
    }
    if (i < MAX_COUNTED) {
        st.name[i] = fn;
        st.n[i]++;
    }
    pthread_mutex_unlock(&st.lock);
}
#define COUNT() count(__func__)

unsigned long mock_gdr_calls(const char *name);
unsigned long mock_gdr_calls(const char *name)
{
    unsigned long v = 0;
    pthread_mutex_lock(&st.lock);
    for (int i = 0; i < MAX_COUNTED && st.name[i]; i++) {
        if (strcmp(st.name[i], name) == 0) {
            v = st.n[i];
        }
    }
    pthread_mutex_unlock(&st.lock);
    return v;
}

int mock_gdr_live(void);
int mock_gdr_live(void)
{
    int n = 0;
    pthread_mutex_lock(&st.lock);
    for (int i = 0; i < MAX_HANDLES; i++) {
        n += st.h[i].used;
    }
    pthread_mutex_unlock(&st.lock);
    return n;
}

static void __attribute__((format(printf, 1, 2))) complain(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mock_gdr[%d]: ", (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The handle's slot, or -1 (caller holds the lock). */
static int slot(gdr_t g, gdr_mh_t mh)
{
    int i = (int)mh.h - 1;
    return g == &st.g && st.g.open && i >= 0 && i < MAX_HANDLES && st.h[i].used ? i : -1;
}

gdr_t gdr_open(void);
gdr_t gdr_open(void)
{
    COUNT();
    const char *e = getenv("MOCK_GDR_OPEN");
    if (e && strcmp(e, "fail") == 0) {
        errno = ENOENT;
        return NULL;
    }
    pthread_mutex_lock(&st.lock);
    st.g.open = 1;
    st.opens++;
    pthread_mutex_unlock(&st.lock);
    return &st.g;
}

/* Leaks end the process: a runtime that forgets to unmap or unpin fails its test. */
static void check_leaks(const char *when)
{
    int pinned = 0, mapped = 0;
    for (int i = 0; i < MAX_HANDLES; i++) {
        pinned += st.h[i].used;
        mapped += st.h[i].used && st.h[i].map;
    }
    if (pinned) {
        complain("%s with %d buffers still pinned (%d mapped): leaked", when, pinned, mapped);
        abort();
    }
}

int gdr_close(gdr_t g);
int gdr_close(gdr_t g)
{
    COUNT();
    pthread_mutex_lock(&st.lock);
    if (g != &st.g || !st.g.open) {
        pthread_mutex_unlock(&st.lock);
        return EINVAL;
    }
    check_leaks("gdr_close");
    if (--st.opens == 0) {
        st.g.open = 0;
    }
    pthread_mutex_unlock(&st.lock);
    return 0;
}

__attribute__((destructor)) static void unloaded(void)
{
    if (st.g.open) {
        complain("libgdrapi unloaded with gdr_open's handle still open (no gdr_close)");
        check_leaks("unloading");
    }
}

/* The memfd behind [va, va+len) from the mock driver the runtime loaded. */
static int backing(uintptr_t va, size_t len, int *fd, size_t *off)
{
    const char *lib = getenv("FABSHMEM_CUDA_LIB");
    void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    int (*fn)(uintptr_t, size_t, int *, size_t *) = NULL;
    if (h) {
        *(void **)&fn = dlsym(h, "mock_cuda_backing");
        dlclose(h); /* NOLOAD took a reference */
    }
    return fn ? fn(va, len, fd, off) : -1;
}

int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t token, uint32_t va_space,
                   gdr_mh_t *handle);
int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t token, uint32_t va_space,
                   gdr_mh_t *handle)
{
    COUNT();
    const char *e = getenv("MOCK_GDR_PIN");
    if (e && atoi(e) > 0) {
        return atoi(e);
    }
    if (g != &st.g || !st.g.open || !handle || token || va_space) {
        return EINVAL;
    }
    if (size == 0 || addr % PAGE || size % PAGE) {
        complain("gdr_pin_buffer: %#lx + %zu is not whole 64 KiB GPU pages", addr, size);
        return EINVAL;
    }
    int fd;
    size_t off;
    if (backing(addr, size, &fd, &off) != 0) {
        complain("gdr_pin_buffer: %#lx + %zu is not inside one device allocation", addr, size);
        return EINVAL;
    }
    pthread_mutex_lock(&st.lock);
    int i = 0;
    while (i < MAX_HANDLES && st.h[i].used) {
        i++;
    }
    if (i == MAX_HANDLES) {
        pthread_mutex_unlock(&st.lock);
        return ENOMEM;
    }
    st.h[i].used = 1;
    st.h[i].va = addr;
    st.h[i].len = size;
    st.h[i].fd = fd;
    st.h[i].off = off;
    st.h[i].map = NULL;
    handle->h = (unsigned long)i + 1;
    pthread_mutex_unlock(&st.lock);
    return 0;
}

int gdr_unpin_buffer(gdr_t g, gdr_mh_t mh);
int gdr_unpin_buffer(gdr_t g, gdr_mh_t mh)
{
    COUNT();
    pthread_mutex_lock(&st.lock);
    int i = slot(g, mh), rc = 0;
    if (i < 0) {
        rc = EINVAL;
    } else if (st.h[i].map) {
        complain("gdr_unpin_buffer: handle %lu is still mapped (gdr_unmap first)", mh.h);
        rc = EBUSY;
    } else {
        st.h[i].used = 0;
    }
    pthread_mutex_unlock(&st.lock);
    return rc;
}

int gdr_get_info_v2(gdr_t g, gdr_mh_t mh, gdr_info_v2_t *info);
int gdr_get_info_v2(gdr_t g, gdr_mh_t mh, gdr_info_v2_t *info)
{
    COUNT();
    pthread_mutex_lock(&st.lock);
    int i = slot(g, mh);
    if (i >= 0 && info) {
        memset(info, 0, sizeof(*info));
        info->va = st.h[i].va;
        info->mapped_size = st.h[i].len;
        info->page_size = (uint32_t)PAGE;
        info->mapped = st.h[i].map != NULL;
        info->wc_mapping = 1;
        info->mapping_type = 1; /* GDR_MAPPING_TYPE_WC */
    }
    pthread_mutex_unlock(&st.lock);
    return i >= 0 && info ? 0 : EINVAL;
}

int gdr_map(gdr_t g, gdr_mh_t mh, void **va, size_t size);
int gdr_map(gdr_t g, gdr_mh_t mh, void **va, size_t size)
{
    COUNT();
    pthread_mutex_lock(&st.lock);
    int i = slot(g, mh), rc = 0;
    if (i < 0 || !va) {
        rc = EINVAL;
    } else if (st.h[i].map || size != st.h[i].len) {
        complain("gdr_map: handle %lu already mapped, or %zu is not its pinned size", mh.h, size);
        rc = EINVAL;
    } else {
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, st.h[i].fd,
                       (off_t)st.h[i].off);
        if (m == MAP_FAILED) {
            rc = errno;
        } else {
            st.h[i].map = m;
            *va = m;
        }
    }
    pthread_mutex_unlock(&st.lock);
    return rc;
}

int gdr_unmap(gdr_t g, gdr_mh_t mh, void *va, size_t size);
int gdr_unmap(gdr_t g, gdr_mh_t mh, void *va, size_t size)
{
    COUNT();
    pthread_mutex_lock(&st.lock);
    int i = slot(g, mh), rc = 0;
    if (i < 0 || !st.h[i].map || va != st.h[i].map || size != st.h[i].len) {
        complain("gdr_unmap: handle %lu has no mapping at %p of %zu bytes", mh.h, va, size);
        rc = EINVAL;
    } else {
        munmap(st.h[i].map, size);
        st.h[i].map = NULL;
    }
    pthread_mutex_unlock(&st.lock);
    return rc;
}

/* Is [p, p+n) inside handle mh's mapping? */
static int in_mapping(gdr_mh_t mh, const void *p, size_t n)
{
    pthread_mutex_lock(&st.lock);
    int i = slot(&st.g, mh);
    const uint8_t *m = i >= 0 ? st.h[i].map : NULL;
    int ok = m && (const uint8_t *)p >= m && n <= st.h[i].len - (size_t)((const uint8_t *)p - m);
    pthread_mutex_unlock(&st.lock);
    if (!ok) {
        complain("gdr_copy_*_mapping: %p + %zu is not inside handle %lu's mapping", p, n, mh.h);
    }
    return ok;
}

int gdr_copy_to_mapping(gdr_mh_t mh, void *map_d_ptr, const void *h_ptr, size_t size);
int gdr_copy_to_mapping(gdr_mh_t mh, void *map_d_ptr, const void *h_ptr, size_t size)
{
    COUNT();
    if (!in_mapping(mh, map_d_ptr, size)) {
        return EINVAL;
    }
    memcpy(map_d_ptr, h_ptr, size);
    return 0;
}

int gdr_copy_from_mapping(gdr_mh_t mh, void *h_ptr, const void *map_d_ptr, size_t size);
int gdr_copy_from_mapping(gdr_mh_t mh, void *h_ptr, const void *map_d_ptr, size_t size)
{
    COUNT();
    if (!in_mapping(mh, map_d_ptr, size)) {
        return EINVAL;
    }
    memcpy(h_ptr, map_d_ptr, size);
    return 0;
}
