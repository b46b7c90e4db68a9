/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * footprint.c: the memory model.
 *
 * Each part is the function its module reserves with: nothing here knows a layout. What grows
 * with the job's size is a few bytes per PE (lease answers, read landings, counters); the
 * inboxes are pools of fixed size (lease.c).
 */
#include "footprint.h"

#include <stdio.h>

#include "amo.h"
#include "arrive.h"
#include "devmem.h"
#include "live.h"
#include "lock.h"
#include "notify.h"
#include "rma.h"
#include "rma_post.h"
#include "signal.h"

void fsh_footprint(int npes, const struct fsh_config *cfg, bool device, struct fsh_footprint *f)
{
    long teams = cfg->FABSHMEM_MAX_TEAMS;
    f->name[0] = "liveness";
    f->bytes[0] = fsh_live_heap_bytes();
    f->name[1] = "locks";
    f->bytes[1] = fsh_lock_heap_bytes();
    f->name[2] = "collectives";
    f->bytes[2] = fsh_notify_heap_bytes(npes, teams < 0 ? 0 : (unsigned)teams);
    f->name[3] = "put-with-signal";
    f->bytes[3] = fsh_signal_heap_bytes(npes, cfg->FABSHMEM_SIGNAL_SLOTS,
                                        cfg->FABSHMEM_SIGNAL_PEERS);
    f->name[4] = "device staging";
    f->bytes[4] = device ? fsh_dev_heap_bytes(npes, cfg->FABSHMEM_DEVICE_CHUNK,
                                              cfg->FABSHMEM_DEVICE_PEERS)
                         : 0;
    /* Only when the open fabric has no atomics (0 before a fabric is open: tools, tests). */
    f->name[5] = "atomics' inboxes";
    f->bytes[5] = fsh_amo_by_target() ? fsh_amo_heap_bytes(npes, cfg->FABSHMEM_AMO_PEERS) : 0;
    /* Only when the open fabric's writes are counted at their targets (as above). */
    f->name[6] = "arrival counts";
    f->bytes[6] = fsh_arrive_counts() ? fsh_arrive_heap_bytes(npes) : 0;
    f->name[7] = "quiet's flush word";
    f->bytes[7] = FSH_RMA_POST_FLUSH_BYTES;
    f->total = 0;
    for (int i = 0; i < FSH_FOOTPRINT_PARTS; i++) {
        f->total += f->bytes[i];
    }
}

void fsh_footprint_size(size_t bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    if (u == 0) {
        snprintf(buf, len, "%zu B", bytes);
    } else {
        snprintf(buf, len, "%.1f %s", v, unit[u]);
    }
}

void fsh_footprint_describe(const struct fsh_footprint *f, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < FSH_FOOTPRINT_PARTS && at < len; i++) {
        if (f->bytes[i] == 0) {
            continue;
        }
        char size[32];
        fsh_footprint_size(f->bytes[i], size, sizeof(size));
        at += (size_t)snprintf(buf + at, len - at, "%s%s %s", at ? " + " : "", f->name[i], size);
    }
    if (at < len) {
        char size[32];
        fsh_footprint_size(f->total, size, sizeof(size));
        snprintf(buf + at, len - at, " = %s", size);
    }
}
