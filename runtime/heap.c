/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap.c: first-fit allocator over the symmetric heap, with coalescing.
 *
 * Blocks form one address-ordered list that tiles the heap exactly: live and free blocks
 * alternate freely, but two free blocks are never adjacent (free merges them). The list nodes
 * are ordinary private memory, never inside the heap: the heap is remotely writable, its
 * bookkeeping must not be. Decisions depend only on the call sequence, never on addresses or
 * time, so every PE that makes the same calls gets the same offsets.
 *
 * Costs are linear in the number of blocks, which stays small for symmetric allocations (they
 * are collective and therefore coarse-grained).
 */
#include "heap.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"

struct block {
    size_t off, size;
    bool live;
    struct block *prev, *next;
};

/* Two instances: the symmetric heap, and the device heap (FABSHMEM_DEVICE_HEAP_SIZE) whose
 * addresses are GPU addresses the allocator only computes with, never dereferences. */
struct heap {
    uint8_t *base;
    size_t size;
    struct block *head;
    /* Every block before scan is live: first fit starts there, past the reservations made at
     * init (the collectives' scratch and the like), which a shmem_malloc + shmem_free pair
     * walked twice. Derived from the call sequence only, so offsets stay the same on every PE. */
    struct block *scan;
    const char *var; /* the variable that sizes it, for messages */
};
static struct heap heaps[FSH_HEAP_NKINDS];

static void stats(const struct heap *h, struct fsh_heap_stats *st);

/* The heap base is aligned to 1 GiB (address space only: the excess is unmapped at once), so an
 * alignment up to that, taken relative to the base as every PE's offsets must be equal, is an
 * absolute alignment too (with 2 MiB, shmem_align(4M) was misaligned on most PEs). */
#define HEAP_BASE_ALIGN ((size_t)1 << 30)

void *fsh_heap_map(size_t size, int fd)
{
    /* Reserve enough address space to align, then put the memory at the aligned base. */
    size_t span = size + HEAP_BASE_ALIGN;
    uint8_t *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fsh_err(-errno, "lower SHMEM_SYMMETRIC_SIZE or raise the address-space limit (ulimit -v)",
                "cannot reserve %zu bytes of address space for symmetric memory: %s", size,
                strerror(errno));
        return NULL;
    }
    uint8_t *base = (uint8_t *)(((uintptr_t)p + HEAP_BASE_ALIGN - 1) & ~(HEAP_BASE_ALIGN - 1));
    int flags = MAP_FIXED | (fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
    if (mmap(base, size, PROT_READ | PROT_WRITE, flags, fd, 0) == MAP_FAILED) {
        int e = errno;
        munmap(p, span);
        fsh_err(-e, "lower SHMEM_SYMMETRIC_SIZE, or FABSHMEM_INTRANODE=fabric",
                "cannot map %zu bytes of symmetric memory%s: %s", size,
                fd >= 0 ? " (shared)" : "", strerror(e));
        return NULL;
    }
    if (base > p) {
        munmap(p, (size_t)(base - p));
    }
    size_t tail = (size_t)((p + span) - (base + size));
    if (tail) {
        munmap(base + size, tail);
    }
    return base;
}

void fsh_heap_unmap(void *base, size_t size)
{
    if (base) {
        munmap(base, size);
    }
}

/* List nodes that splits and merges gave back, kept for the next split (at most SPARE_MAX):
 * shmem_malloc and shmem_free each split or merge once, and a calloc and a free per pair were
 * a measurable part of a pair's time on 2 PEs (bench/RESULTS.md, issue 35). */
#define SPARE_MAX 64
static struct {
    struct block *head;
    unsigned n;
} spare;

static struct block *node(size_t off, size_t size, bool live)
{
    struct block *b = spare.head;
    if (b) {
        spare.head = b->next;
        spare.n--;
    } else {
        b = malloc(sizeof(*b));
    }
    if (b) {
        *b = (struct block){.off = off, .size = size, .live = live};
    }
    return b;
}

static void unnode(struct block *b)
{
    if (spare.n < SPARE_MAX) {
        b->next = spare.head;
        spare.head = b;
        spare.n++;
    } else {
        free(b);
    }
}

static int init(struct heap *h, void *base, size_t size, const char *var)
{
    h->var = var;
    h->base = base;
    h->size = size;
    h->head = h->scan = node(0, size, false);
    if (!h->head) {
        return fsh_err(-ENOMEM, "", "out of memory for heap bookkeeping");
    }
    return 0;
}

static void fini(struct heap *h)
{
    struct block *b = h->head;
    while (b) {
        struct block *n = b->next;
        free(b);
        b = n;
    }
    memset(h, 0, sizeof(*h));
    while (spare.head) {
        b = spare.head;
        spare.head = b->next;
        free(b);
    }
    spare.n = 0;
}

/* Split b so that it keeps its first `size` bytes; the rest becomes a new block after it. */
static int split(struct block *b, size_t size, bool rest_live)
{
    if (b->size == size) {
        return 0;
    }
    struct block *r = node(b->off + size, b->size - size, rest_live);
    if (!r) {
        return -ENOMEM;
    }
    r->prev = b;
    r->next = b->next;
    if (b->next) {
        b->next->prev = r;
    }
    b->next = r;
    b->size = size;
    return 0;
}

/* b, free now, may lie before the scan start. */
static void freed(struct heap *h, struct block *b)
{
    if (!h->scan || b->off < h->scan->off) {
        h->scan = b;
    }
}

/* Merge b with its free neighbours; returns the surviving block. */
static struct block *coalesce(struct heap *h, struct block *b)
{
    if (b->next && !b->next->live) {
        struct block *n = b->next;
        b->size += n->size;
        b->next = n->next;
        if (n->next) {
            n->next->prev = b;
        }
        if (h->scan == n) {
            h->scan = b;
        }
        unnode(n);
    }
    if (b->prev && !b->prev->live) {
        struct block *p = b->prev;
        p->size += b->size;
        p->next = b->next;
        if (b->next) {
            b->next->prev = p;
        }
        if (h->scan == b) {
            h->scan = p;
        }
        unnode(b);
        b = p;
    }
    freed(h, b);
    return b;
}

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) & ~(a - 1);
}

static void *alloc(struct heap *h, size_t size, size_t align)
{
    if (align & (align - 1)) {
        fsh_err(-EINVAL, "use a power of two", "alignment %zu is not a power of two", align);
        return NULL;
    }
    if (align < FSH_HEAP_MIN_ALIGN) {
        align = FSH_HEAP_MIN_ALIGN;
    }
    if (align > HEAP_BASE_ALIGN && h == &heaps[FSH_HEAP_HOST]) {
        fsh_err(-EINVAL, "use an alignment of at most 1 GiB",
                "alignment %zu is beyond the symmetric heap base's alignment of %zu: no offset "
                "would be aligned on every PE", align, HEAP_BASE_ALIGN);
        return NULL;
    }
    if (size > h->size) {
        goto exhausted;
    }
    size = round_up(size ? size : 1, FSH_HEAP_MIN_ALIGN);
    while (h->scan && h->scan->live) {
        h->scan = h->scan->next;
    }
    for (struct block *b = h->scan; b; b = b->next) {
        if (b->live) {
            continue;
        }
        /* Alignment is relative to the heap base, which is page aligned, so the offset is the
         * same on every PE and so is the resulting address alignment. */
        size_t start = round_up(b->off, align);
        size_t lead = start - b->off;
        if (lead > b->size || b->size - lead < size) {
            continue;
        }
        if (lead && split(b, lead, false) != 0) {
            goto nomem;
        }
        struct block *a = lead ? b->next : b;
        if (split(a, size, false) != 0) {
            goto nomem;
        }
        a->live = true;
        return h->base + a->off;
    }
exhausted:;
    struct fsh_heap_stats st;
    stats(h, &st);
    char fix[128];
    snprintf(fix, sizeof(fix), "raise %s (e.g. %s=2G) or free blocks", h->var, h->var);
    fsh_err(-ENOMEM, fix,
            "%s heap exhausted: %zu bytes requested, %zu free in %zu pieces (largest %zu) of %zu",
            h == &heaps[FSH_HEAP_DEVICE] ? "device" : "symmetric", size, st.free, st.free_blocks,
            st.largest_free, st.size);
    return NULL;
nomem:
    fsh_err(-ENOMEM, "", "out of memory for heap bookkeeping");
    return NULL;
}

static struct block *find_live(struct heap *h, const void *p)
{
    if (!h->base || (const uint8_t *)p < h->base || (const uint8_t *)p >= h->base + h->size) {
        return NULL;
    }
    size_t off = (size_t)((const uint8_t *)p - h->base);
    struct block *b = h->scan && h->scan->off <= off ? h->scan : h->head;
    for (; b && b->off <= off; b = b->next) {
        if (b->off == off) {
            return b->live ? b : NULL;
        }
    }
    return NULL;
}

static int free_block(struct heap *h, void *p)
{
    struct block *b = find_live(h, p);
    if (!b) {
        return fsh_err(-EINVAL, "pass a pointer returned by shmem_malloc/shmem_align/shmem_calloc/shmem_realloc, once",
                       "%p is not a live symmetric block (freed twice, or not from the symmetric heap)",
                       p);
    }
    b->live = false;
    coalesce(h, b);
    return 0;
}

size_t fsh_heap_block_size(const void *p)
{
    struct block *b = find_live(&heaps[FSH_HEAP_HOST], p);
    return b ? b->size : 0;
}

bool fsh_heap_in_live_block(const void *p, size_t len)
{
    const struct heap *h = &heaps[FSH_HEAP_HOST];
    if (!h->base || (const uint8_t *)p < h->base) {
        return false;
    }
    size_t off = (size_t)((const uint8_t *)p - h->base);
    for (struct block *b = h->head; b && b->off <= off; b = b->next) {
        if (off < b->off + b->size) {
            return b->live && len <= b->off + b->size - off;
        }
    }
    return false;
}

void *fsh_heap_realloc(void *p, size_t size)
{
    struct heap *h = &heaps[FSH_HEAP_HOST];
    struct block *b = find_live(h, p);
    if (!b) {
        fsh_err(-EINVAL, "pass a pointer returned by a symmetric allocation routine",
                "%p is not a live symmetric block", p);
        return NULL;
    }
    size_t want = round_up(size ? size : 1, FSH_HEAP_MIN_ALIGN);
    if (size > h->size) {
        return alloc(h, size, 0); /* records the exhaustion */
    }
    if (want <= b->size) {
        /* Shrink in place; the tail becomes free and merges with what follows. */
        if (want < b->size) {
            if (split(b, want, false) != 0) {
                fsh_err(-ENOMEM, "", "out of memory for heap bookkeeping");
                return NULL;
            }
            coalesce(h, b->next);
        }
        return p;
    }
    struct block *n = b->next;
    if (n && !n->live && b->size + n->size >= want) {
        /* Grow into the free neighbour. */
        if (split(n, want - b->size, false) != 0) {
            fsh_err(-ENOMEM, "", "out of memory for heap bookkeeping");
            return NULL;
        }
        b->size += n->size;
        b->next = n->next;
        if (n->next) {
            n->next->prev = b;
        }
        if (h->scan == n) {
            h->scan = b;
        }
        unnode(n);
        return p;
    }
    void *q = alloc(h, size, 0);
    if (!q) {
        return NULL;
    }
    memcpy(q, p, b->size);
    free_block(h, p);
    return q;
}

static void stats(const struct heap *h, struct fsh_heap_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->size = h->size;
    for (struct block *b = h->head; b; b = b->next) {
        st->blocks++;
        if (b->live) {
            st->used += b->size;
        } else {
            st->free += b->size;
            st->free_blocks++;
            if (b->size > st->largest_free) {
                st->largest_free = b->size;
            }
        }
    }
}

int fsh_heap_check(void)
{
    const struct heap *h = &heaps[FSH_HEAP_HOST];
    size_t expect = 0;
    const struct block *prev = NULL;
    bool scanned = h->scan == NULL; /* NULL: every block is live */
    for (const struct block *b = h->head; b; prev = b, b = b->next) {
        if (b->off != expect || b->size == 0 || b->prev != prev) {
            return -1; /* gap, overlap, empty block or broken links */
        }
        scanned = scanned || b == h->scan;
        if (!scanned && !b->live) {
            return -5; /* a free block before the scan start: first fit would miss it */
        }
        if (prev && !prev->live && !b->live) {
            return -2; /* adjacent free blocks were not merged */
        }
        if (b->live && b->off % FSH_HEAP_MIN_ALIGN) {
            return -3;
        }
        expect = b->off + b->size;
    }
    if (!scanned) {
        return -6; /* the scan start is not in the list */
    }
    return expect == h->size ? 0 : -4;
}

/* The two instances' entry points. */
int fsh_heap_init(void *base, size_t size)
{
    return init(&heaps[FSH_HEAP_HOST], base, size, "SHMEM_SYMMETRIC_SIZE");
}

void fsh_heap_fini(void)
{
    fini(&heaps[FSH_HEAP_HOST]);
}

void *fsh_heap_alloc(size_t size, size_t align)
{
    return alloc(&heaps[FSH_HEAP_HOST], size, align);
}

void *fsh_heap_reserve(size_t size, size_t align, const char *what, const char *alt)
{
    void *p = alloc(&heaps[FSH_HEAP_HOST], size, align);
    if (p || fsh_err_last()->code != -ENOMEM) {
        return p;
    }
    fsh_err_clear(); /* this report replaces alloc's */
    struct fsh_heap_stats st;
    stats(&heaps[FSH_HEAP_HOST], &st);
    /* What init has taken so far plus this, and as much again for the application, in MiB. */
    size_t need = ((st.size - st.free + size) * 2 + (1u << 20) - 1) >> 20;
    char fix[256];
    snprintf(fix, sizeof(fix), "raise SHMEM_SYMMETRIC_SIZE (%zuM would leave as much again to "
             "the application)%s%s", need, alt && alt[0] ? ", or " : "", alt ? alt : "");
    fsh_err(-ENOMEM, fix,
            "%s needs %zu bytes of the symmetric heap, but %zu of its %zu are free: the job cannot "
            "start with SHMEM_SYMMETRIC_SIZE=%zu", what, size, st.largest_free, st.size, st.size);
    return NULL;
}

int fsh_heap_free(void *p)
{
    return free_block(&heaps[FSH_HEAP_HOST], p);
}

void fsh_heap_stats(struct fsh_heap_stats *st)
{
    stats(&heaps[FSH_HEAP_HOST], st);
}

int fsh_heap_dev_init(void *base, size_t size)
{
    return init(&heaps[FSH_HEAP_DEVICE], base, size, "FABSHMEM_DEVICE_HEAP_SIZE");
}

void fsh_heap_dev_fini(void)
{
    fini(&heaps[FSH_HEAP_DEVICE]);
}

void *fsh_heap_dev_alloc(size_t size, size_t align)
{
    return alloc(&heaps[FSH_HEAP_DEVICE], size, align);
}

int fsh_heap_dev_free(void *p)
{
    return free_block(&heaps[FSH_HEAP_DEVICE], p);
}
