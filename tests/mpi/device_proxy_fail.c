/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device_proxy_fail: a proxy that fails never leaves device waits hanging. Each PE posts, with
 * the header's own producer (shmemx_dev_post_), a descriptor the proxy must refuse (a PE out of
 * range), then waits on a signal nobody will send, quiets, and blocks in a full ring: every one
 * of them must return SHMEMX_DEV_EPROXY (bounded by the runner's timeout), the error word must
 * say EINVAL, and shmem_finalize must still end cleanly with the proxy stopped.
 */
#include <errno.h>

#include "../test.h"
#include <shmemx_device.h>

#define NAME "device_proxy_fail"

int main(void)
{
    shmem_init();
    t_start(NAME);
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    shmemx_device_t h;
    if (shmemx_device_handle_host(&h) != 0) {
        t_check(0, "shmemx_device_handle_host failed");
        return t_finish(NAME);
    }
    t_check(shmemx_dev_quiet(h) == 0, "an idle quiet failed");
    uint64_t w[7] = {SHMEMX_DEV_OP_PUT_SIGNAL | (uint64_t)h.heap_seg << 8 |
                         (uint64_t)h.heap_seg << 12 | (uint64_t)h.npes << 24,
                     0, 0, 0, 0, 1, 0};
    uint64_t t;
    int rc = shmemx_dev_post_(h, w, &t);
    t_check(rc == 0, "posting returned %d", rc);
    rc = shmemx_dev_signal_wait_until(h, sig, SHMEMX_DEV_CMP_GE, 1, NULL);
    t_check(rc == SHMEMX_DEV_EPROXY, "signal wait returned %d, want SHMEMX_DEV_EPROXY", rc);
    rc = shmemx_dev_quiet(h);
    t_check(rc == SHMEMX_DEV_EPROXY, "quiet returned %d, want SHMEMX_DEV_EPROXY", rc);
    /* Nothing is taken any more: filling the ring ends in the credit wait, which must fail. */
    uint64_t src = 5;
    rc = 0;
    for (uint64_t i = 0; i <= h.nslots + 1 && rc == 0; i++) {
        rc = shmemx_dev_put_nbi(h, sig, &src, 8, shmem_my_pe());
    }
    t_check(rc == SHMEMX_DEV_EPROXY, "a full ring returned %d, want SHMEMX_DEV_EPROXY", rc);
    uint64_t e = __atomic_load_n(h.error, __ATOMIC_ACQUIRE);
    t_check((e & 0xffffffffu) == EINVAL, "error word %#llx, want errno EINVAL",
            (unsigned long long)e);
    t_check(__atomic_load_n(sig, __ATOMIC_ACQUIRE) == 0, "the refused signal arrived");
    shmem_barrier_all();
    int code = t_finish(NAME);
    shmem_finalize();
    return code;
}
