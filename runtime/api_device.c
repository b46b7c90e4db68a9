/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_device.c: the host side of the device API (include/shmemx_device.h): the handle.
 *
 * The first call on every PE is collective: it allocates the barrier's symmetric word (in the
 * device heap when it is on, else in the host heap), zeroes it, waits for every PE, and starts
 * this PE's proxy (proxy.c). Later calls only fill the handle in.
 */
#include <errno.h>
#include <string.h>

#include "api_check.h"
#include "cuda.h"
#include "devmem.h"
#include "error.h"
#include "log.h"
#include "proxy.h"
#include "pshmem.h"
#include "shmem.h"
#include "shmemx.h"
#include "shmemx_device.h"

/* Device teams: TEAMS symmetric lines after the world barrier's (in the device heap when it is
 * on), each free or held by one team here; a team's members agree on a line free at all of
 * them (an AND reduction of their free masks, in `scratch`, host heap). */
#define TEAMS 64
#define LINE 64
static uint64_t *pool;    /* (1 + TEAMS) lines: the world barrier's, then the teams' */
static uint64_t *scratch; /* symmetric: [0] this PE's free mask, [1] the team's */
static uint64_t team_free = ~0ULL;

static int handle(const char *fn, shmemx_device_t *h, bool host)
{
    running(fn);
    if (!h) {
        fsh_init_fatal(fn, "pass the address of a shmemx_device_t", "handle is NULL");
    }
    if (!fsh_proxy_started()) {
        size_t len = (1 + TEAMS) * LINE;
        uint64_t *bar = fsh_dev_on ? shmemx_malloc_device(len) : pshmem_malloc(len);
        scratch = pshmem_malloc(2 * sizeof(uint64_t));
        int rc = bar && scratch ? 0 : -ENOMEM;
        if (bar && fsh_dev_on) {
            rc = fsh_dev_memset(bar, 0, len);
        } else if (bar) {
            memset(bar, 0, len);
        }
        pool = bar;
        team_free = ~0ULL;
        pshmem_barrier_all(); /* every word zeroed before a peer's first barrier adds to it */
        if (rc == 0) {
            rc = fsh_proxy_start(bar);
        }
        if (rc != 0) {
            const struct fsh_error *e = fsh_err_last();
            FSH_WARN("%s: no device API: %s", fn, e && e->code ? e->msg : "the barrier word");
            return -1;
        }
    }
    fsh_proxy_handle(h, host);
    return 0;
}

__attribute__((visibility("default"))) int shmemx_device_handle(shmemx_device_t *h)
{
    return handle(__func__, h, !fsh_cuda_ready());
}

__attribute__((visibility("default"))) int shmemx_device_handle_host(shmemx_device_t *h)
{
    return handle(__func__, h, true);
}

__attribute__((visibility("default"))) int shmemx_device_team(struct fsh_team *team,
                                                              shmemx_dev_team_t *t)
{
    const char *fn = __func__;
    running(fn);
    if (!t) {
        fsh_init_fatal(fn, "pass the address of a shmemx_dev_team_t", "handle is NULL");
    }
    memset(t, 0, sizeof(*t));
    t->my = -1;
    if (!fsh_proxy_started() || !pool) {
        FSH_WARN("%s: no device team: call shmemx_device_handle (on every PE) first", fn);
        return -1;
    }
    if (team == SHMEM_TEAM_INVALID) {
        FSH_WARN("%s: no device team: SHMEM_TEAM_INVALID (this PE is not in the team)", fn);
        return -1;
    }
    int n = pshmem_team_n_pes(team), my = pshmem_team_my_pe(team);
    int start = pshmem_team_translate_pe(team, 0, SHMEM_TEAM_WORLD);
    int stride = n > 1 ? pshmem_team_translate_pe(team, 1, SHMEM_TEAM_WORLD) - start : 1;
    for (int i = 2; i < n; i++) {
        if (pshmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD) != start + i * stride) {
            FSH_WARN("%s: no device team: its PE %d is world PE %d, not start %d + %d * "
                     "stride %d (device teams must be strided: split the world team)",
                     fn, i, pshmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD), start, i,
                     stride);
            return -1;
        }
    }
    if (n < 1 || my < 0 || start < 0 || stride < 1) {
        FSH_WARN("%s: no device team: size %d, index %d, start %d, stride %d", fn, n, my, start,
                 stride);
        return -1;
    }
    /* A line free at every member (all see the same result, so all fail alike). */
    scratch[0] = team_free;
    pshmem_uint64_and_reduce(team, &scratch[1], &scratch[0], 1);
    uint64_t common = scratch[1];
    if (common == 0) {
        FSH_WARN("%s: no device team: all %d lines are held at some member (release unused "
                 "ones with shmemx_device_team_free)",
                 fn, TEAMS);
        return -1;
    }
    int idx = __builtin_ctzll(common);
    uint64_t *line = pool + (size_t)(1 + idx) * (LINE / sizeof(uint64_t));
    int rc = 0;
    if (fsh_dev_on) {
        rc = fsh_dev_memset(line, 0, LINE);
    } else {
        memset(line, 0, LINE);
    }
    if (rc == 0) {
        team_free &= ~(1ULL << idx);
    }
    pshmem_team_sync(team); /* every member's line zeroed before anyone's barrier adds to it */
    if (rc != 0) {
        FSH_WARN("%s: no device team: zeroing its line failed (%s)", fn, strerror(-rc));
        return -1;
    }
    *t = (shmemx_dev_team_t){.start = start, .stride = stride, .size = n, .my = my, .sync = line};
    return 0;
}

__attribute__((visibility("default"))) void shmemx_device_team_free(shmemx_dev_team_t *t)
{
    running(__func__);
    if (!t || !t->sync || !pool) {
        return;
    }
    size_t line = (size_t)(t->sync - pool) / (LINE / sizeof(uint64_t));
    if (line >= 1 && line <= TEAMS) {
        team_free |= 1ULL << (line - 1);
    }
    t->sync = NULL;
    t->my = -1;
}

__attribute__((visibility("default"))) void shmemx_device_proxy_stats(uint64_t *descs,
                                                                      uint64_t *posts,
                                                                      uint64_t *rounds)
{
    uint64_t d = 0, p = 0, r = 0;
    if (fsh_proxy_started()) {
        fsh_proxy_stats(&d, &p, &r);
    }
    if (descs) {
        *descs = d;
    }
    if (posts) {
        *posts = p;
    }
    if (rounds) {
        *rounds = r;
    }
}
