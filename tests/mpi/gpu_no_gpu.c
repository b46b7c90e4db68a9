/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_no_gpu: FABSHMEM_DEVICE_HEAP_SIZE set on a host without a GPU (the real loader: no
 * FABSHMEM_CUDA_LIB). Init must succeed, the device heap must be off on every PE with a reason
 * that starts "no GPU", shmemx_malloc_device must return NULL (after its barrier, on every PE),
 * and host symmetric memory must work as usual. On a host with a GPU the test skips.
 */
#include <shmemx.h>

#include "../test.h"

#define NAME "gpu_no_gpu"

int main(void)
{
    shmem_init();
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    const char *info = shmemx_device_info();
    if (shmemx_device_heap_size() != 0) {
        char why[600];
        snprintf(why, sizeof(why), "this host has a GPU: %s", info);
        shmem_finalize();
        t_skip(NAME, why);
    }
    if (me == 0) {
        printf("  %s\n", info);
    }
    t_check(strstr(info, "device heap: off (") == info, "unexpected info line: %s", info);
    t_check(strstr(info, "no GPU") != NULL || strstr(info, "has no GPU") != NULL,
            "info line does not say why: %s", info);
    void *p = shmemx_malloc_device(4096);
    t_check(p == NULL, "shmemx_malloc_device returned %p without a GPU", p);
    void *q = shmemx_calloc_device(4, 1024);
    t_check(q == NULL, "shmemx_calloc_device returned %p without a GPU", q);
    shmemx_free_device(NULL);
    /* The host heap is unaffected. */
    long *x = shmem_malloc(sizeof(long));
    *x = -1;
    shmem_barrier_all();
    shmem_long_p(x, me, (me + 1) % npes);
    shmem_barrier_all();
    t_check(*x == (me - 1 + npes) % npes, "host put after the failed device allocation: %ld", *x);
    shmem_free(x);
    int rc = t_finish(NAME);
    shmem_finalize();
    return rc;
}
