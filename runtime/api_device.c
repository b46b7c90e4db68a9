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

static int handle(const char *fn, shmemx_device_t *h, bool host)
{
    running(fn);
    if (!h) {
        fsh_init_fatal(fn, "pass the address of a shmemx_device_t", "handle is NULL");
    }
    if (!fsh_proxy_started()) {
        uint64_t *bar = fsh_dev_on ? shmemx_malloc_device(64) : pshmem_malloc(64);
        int rc = bar ? 0 : -ENOMEM;
        if (bar && fsh_dev_on) {
            rc = fsh_dev_memset(bar, 0, 64);
        } else if (bar) {
            memset(bar, 0, 64);
        }
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
