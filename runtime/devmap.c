/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devmap.c: the same-node mapping of the peers' device heaps, and the AMO lock of a heap
 * (devmem.c owns the heap itself, its registration path and the staging protocol).
 *
 * Same node: mapped, not staged (FABSHMEM_DEVICE_MAP=1, the default). At start every PE
 * exports its heap (cuIpcGetMemHandle of the one cuMemAlloc) and all-gathers the handles with
 * its node id; each maps the heaps of the other PEs of its node (cuIpcOpenMemHandle, peer
 * access enabled as needed), per peer: one the driver refuses stays on devmem.c's paths, with
 * the reason in fsh_dev_describe. A put or get on a mapped peer's device heap is then one
 * driver copy between the local buffer (host or GPU) and the mapping, synchronized before it
 * returns, like the copies into our own heap: complete at the target on return, so a signal
 * sent after it still never outruns the data; a put-with-signal whose signal word is in the
 * device heap queues the copy and the signal's write on the one stream and synchronizes once
 * (fsh_devmap_put_signal). Likewise a GPU buffer meeting a host segment
 * that local.c mapped is one copy into or out of that mapping, not a bounce. The mapping is
 * per pair and fixed after start, so one location never mixes paths within a pair.
 * Atomics: the driver has no read-modify-write a copy engine applies (only a kernel could do
 * one), so a device AMO is always read, apply, write back by a CPU. Its atomicity comes from
 * the heap's AMO lock, a word in the owner's host heap (beside the outbox, symmetric) that
 * whoever applies an AMO on that heap holds around the two copies: the owner for its own calls
 * and for the staged requests of other PEs (its handler), and a same-node peer that mapped
 * both the device heap and the owner's host heap (local.c), which then applies it itself
 * through the mapping, no request. One domain per heap whatever the path, and no job-wide
 * agreement needed: a peer that cannot reach the lock word stages, as before. (Not atomic with
 * a GPU kernel writing the word at the same moment, as before.)
 */
#include "devmem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amo_op.h"
#include "bootstrap.h"
#include "cuda.h"
#include "devheap.h"
#include "error.h"
#include "gdr.h"
#include "local.h"
#include "log.h"
#include "progress.h"
#include "rt.h"

void *fsh_dev_peer_base(int pe)
{
    if (!fsh_dev_on || pe < 0 || pe >= fsh_rt.npes) {
        return NULL;
    }
    return pe == fsh_rt.pe ? fsh_devheap.base : fsh_devheap.peer ? fsh_devheap.peer[pe] : NULL;
}

/* The device-AMO lock of a heap: a word in its owner's host heap (after the outbox), taken
 * around every read-modify-write of that heap by whoever applies it, the owner (its own calls,
 * its handler) or a same-node peer through the mapping. Held only for two driver copies, never
 * while waiting for anything else; taken inside the engine lock, never the other way round. */
static int amo_lock(uint32_t *w)
{
    struct fsh_wait_clock clock = {0};
    uint32_t free_ = 0;
    while (!__atomic_compare_exchange_n(w, &free_, (uint32_t)fsh_rt.pe + 1, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        /* free_ now names the holder (PE + 1): yield on a crowded node, and name it when it
         * died holding the lock (or FABSHMEM_TIMEOUT passed), like every other wait. */
        int rc = fsh_progress_backoff(&clock, "a device atomic's heap lock", (int)free_ - 1);
        if (rc < 0) {
            return rc;
        }
        free_ = 0;
    }
    return 0;
}

/* An AMO on the object at off of the device heap at heap (ours, or a mapped peer's whose lock
 * is lock), on a host copy of it: read, apply, write back (a fetch writes nothing). Atomic with
 * respect to every other device AMO on that heap: all of them run under its lock. */
int fsh_devmap_apply(uint8_t *heap, uint32_t *lock, int op, uint64_t off, const void *value,
                     const void *cond, void *fetch, size_t size)
{
    FSH_ASSERT_ENGINE_HELD();
    uint64_t word = 0, old = 0;
    if (off > fsh_devheap.size || size > fsh_devheap.size - off) {
        return fsh_err(-EFAULT, "", "atomic at offset %llu is outside the device heap",
                       (unsigned long long)off);
    }
    int rc = amo_lock(lock);
    if (rc < 0) {
        return rc;
    }
    /* A SET replaces the word: nothing to read (one synchronized copy, not two). */
    /* Our own heap's words through GDRCopy where mapped (fsh_devheap_copy), else the driver. */
    rc = op == FSH_AMO_SET ? 0 : fsh_devheap_copy(&word, heap + off, size);
    if (rc == 0) {
        fsh_amo_apply(op, &word, value, cond, &old, size);
        if (op != FSH_AMO_FETCH) {
            rc = fsh_devheap_copy(heap + off, &word, size); /* complete: before the release */
        }
    }
    __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
    if (rc == 0 && fetch) {
        memcpy(fetch, &old, size);
    }
    return rc;
}

/* A put-with-signal whose data (len bytes from src to dst; len 0: none) and signal word (off
 * in the device heap at heap, whose AMO lock is lock) this PE's driver reaches: the data copy
 * and the signal's write queued on the one stream, in that order, and one synchronization
 * (each costs a GPU round trip, where the data, the read, the write back of a device AMO each
 * synchronized cost three): the stream lands the signal after the data, complete at the
 * target on return. SET is that one write under the heap's AMO lock (atomic with respect to
 * the other device AMOs, as before); other ops read the word once the data is in, apply,
 * write back: two synchronizations. The engine lock held. */
int fsh_devmap_put_signal(void *dst, const void *src, size_t len, uint8_t *heap, uint32_t *lock,
                          int op, uint64_t off, uint64_t value)
{
    FSH_ASSERT_ENGINE_HELD();
    if (off > fsh_devheap.size || sizeof(uint64_t) > fsh_devheap.size - off) {
        return fsh_err(-EFAULT, "", "signal at offset %llu is outside the device heap",
                       (unsigned long long)off);
    }
    if (fsh_gdr_covers(heap + off, sizeof(uint64_t))) {
        /* Our own heap with GDRCopy: the data in first (complete on return), then the signal
         * read and written through the mapping under the lock: no synchronization for it. */
        int rc = len ? fsh_devheap_copy(dst, src, len) : 0;
        if (rc == 0) {
            rc = fsh_devmap_apply(heap, lock, op, off, &value, NULL, NULL, sizeof(uint64_t));
        }
        return rc;
    }
    int rc = len ? fsh_cuda_copy_async(dst, src, len) : 0;
    if (rc == 0) {
        rc = amo_lock(lock);
        if (rc < 0) {
            (void)fsh_cuda_sync(); /* the data copy still reads src: done before we return */
            return rc;
        }
        uint64_t word = value;
        if (op != FSH_AMO_SET) {
            /* synchronized: the data is in too */
            rc = fsh_cuda_copy(&word, heap + off, sizeof(word));
            if (rc == 0) {
                fsh_amo_apply(op, &word, &value, NULL, NULL, sizeof(word));
            }
        }
        if (rc == 0) {
            rc = fsh_cuda_write64_async(heap + off, word);
        }
        int sync_rc = fsh_cuda_sync(); /* before the release: the next holder reads what we wrote */
        __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
        return rc ? rc : sync_rc;
    }
    return rc;
}

/* pe's device-AMO lock word when both its device heap and its host heap are mapped here (then
 * this PE applies its AMOs on pe's heap itself), else NULL (a staging request). */
uint32_t *fsh_devmap_peer_lock(int pe)
{
    return fsh_devheap.peer && fsh_devheap.peer[pe]
               ? fsh_local_addr(pe, FSH_SEG_HEAP, fsh_devheap.amo_lock_off)
               : NULL;
}

/* Where (seg, off) of pe is in this process when one driver copy can reach it: our own or a
 * mapped peer's device heap, or a host segment local.c mapped (the local side is then GPU
 * memory, else the backend would not be asked); NULL: staging, the fabric or a bounce. */
uint8_t *fsh_devmap_at(enum fsh_seg seg, uint64_t off, int pe)
{
    if (seg == FSH_SEG_DEVICE) {
        return fsh_devheap.peer && fsh_devheap.peer[pe] ? fsh_devheap.peer[pe] + off : NULL;
    }
    return fsh_local_addr(pe, seg, off);
}

int fsh_devmap_copy(void *dst, const void *src, size_t len, int pe)
{
    if (pe != fsh_rt.pe) {
        __atomic_add_fetch(&fsh_devheap.through_map, 1, __ATOMIC_RELAXED);
    }
    return fsh_devheap_copy(dst, src, len); /* our own heap: GDRCopy where mapped */
}

/* What each PE publishes for the same-node mapping. */
struct map_rec {
    int32_t node;
    int32_t exported; /* handle is valid */
    uint64_t size;
    uint8_t handle[FSH_CUDA_IPC_BYTES];
};

/* Export our heap, all-gather the handles (every PE calls this, whatever it decided), map the
 * heaps of our node's other PEs. A refusal only leaves that peer on the other paths. */
int fsh_devmap_open(const struct fsh_config *cfg)
{
    int npes = fsh_rt.npes, me = fsh_rt.pe;
    fsh_devheap.peer = calloc((size_t)npes, sizeof(*fsh_devheap.peer));
    if (!fsh_devheap.peer) {
        return fsh_err(-ENOMEM, "", "out of memory for %d peers' device heap mappings", npes);
    }
    fsh_devheap.peer[me] = fsh_devheap.base;
    struct map_rec mine = {.node = fsh_rt.node_id, .size = fsh_devheap.size};
    char why[200] = "";
    if (!cfg->FABSHMEM_DEVICE_MAP) {
        snprintf(why, sizeof(why), "FABSHMEM_DEVICE_MAP=0");
    } else if (fsh_cuda_ipc_export(fsh_devheap.base, mine.handle, why, sizeof(why)) == 0) {
        mine.exported = 1;
    }
    struct map_rec *all = npes > 1 ? calloc((size_t)npes, sizeof(*all)) : NULL;
    if (npes > 1 && !all) {
        return fsh_err(-ENOMEM, "", "out of memory for %d peers' device heap handles", npes);
    }
    int rc = npes > 1 ? fsh_boot_allgather(&mine, sizeof(mine), all, cfg->FABSHMEM_TIMEOUT) : 0;
    char first[200] = ""; /* the first peer not mapped, and why */
    for (int pe = 0; pe < npes && rc == 0; pe++) {
        if (pe == me || all[pe].node != mine.node) {
            continue;
        }
        fsh_devheap.node_peers++;
        char no[200] = "";
        void *p = NULL;
        if (!mine.exported) {
            snprintf(no, sizeof(no), "%s", why); /* our reason holds for every peer */
        } else if (!all[pe].exported) {
            snprintf(no, sizeof(no), "it did not export its heap (its SHMEM_INFO says why)");
        } else if (all[pe].size != fsh_devheap.size) {
            snprintf(no, sizeof(no), "its heap is %llu bytes, not %zu",
                     (unsigned long long)all[pe].size, fsh_devheap.size);
        } else if (fsh_cuda_ipc_open(all[pe].handle, &p, no, sizeof(no)) == 0) {
            fsh_devheap.peer[pe] = p;
            fsh_devheap.mapped++;
            continue;
        }
        FSH_INFO("device heap of PE %d (same node) not mapped: %s", pe, no);
        if (!first[0]) {
            snprintf(first, sizeof(first), "PE %d: %s", pe, no);
        }
    }
    free(all);
    if (rc != 0) {
        return rc;
    }
    if (fsh_devheap.node_peers == 0) {
        snprintf(fsh_devheap.map_why, sizeof(fsh_devheap.map_why), "no other PE on this node");
    } else if (fsh_devheap.mapped == 0 && !mine.exported) {
        snprintf(fsh_devheap.map_why, sizeof(fsh_devheap.map_why), "not mapped (%s)", why);
    } else {
        snprintf(fsh_devheap.map_why, sizeof(fsh_devheap.map_why),
                 "mapped %d of %d peers' heaps (CUDA IPC)%s%s", fsh_devheap.mapped,
                 fsh_devheap.node_peers, first[0] ? "; first not mapped: " : "", first);
    }
    return 0;
}

void fsh_devmap_close(void)
{
    for (int pe = 0; fsh_devheap.peer && pe < fsh_rt.npes; pe++) {
        if (pe != fsh_rt.pe && fsh_devheap.peer[pe]) {
            fsh_cuda_ipc_close(fsh_devheap.peer[pe]);
        }
    }
    free(fsh_devheap.peer);
    fsh_devheap.peer = NULL;
}
