/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_test.h: the start shared by the device-heap tests. Without a driver named in the
 * environment they run on tests/gpu/libmockcuda.so (FSH_MOCK_CUDA, set by Makefile.am where
 * the build has CUDA headers and so the mock). There the device heap must come up: without one
 * they fail with the library's reason (a regression that turns it off must not pass as a skip).
 * Only a build without CUDA headers (no mock) skips.
 */
#ifndef FSH_GPU_TEST_H
#define FSH_GPU_TEST_H

#include <shmemx.h>

#include "../test.h"

#ifndef FSH_MOCK_CUDA
#define FSH_MOCK_CUDA ""
#endif

/* shmem_init, t_start, and the skip; returns with a device heap on every PE. */
static inline void gpu_test_start(const char *name)
{
    if (FSH_MOCK_CUDA[0]) {
        setenv("FABSHMEM_CUDA_LIB", FSH_MOCK_CUDA, 0);
    }
#ifdef FSH_MOCK_GDR
    /* A _gdr variant: the host's own device words through the mock GDRCopy, which must be used. */
    setenv("FABSHMEM_GDRCOPY_LIB", FSH_MOCK_GDR, 0);
#endif
    shmem_init();
    t_start(name);
    if (shmemx_device_heap_size() == 0) {
        char why[600];
        snprintf(why, sizeof(why), "%s", shmemx_device_info());
        shmem_finalize();
        if (FSH_MOCK_CUDA[0]) {
            printf("%s: FAIL (PE %d: no device heap although the mock driver was built: %s)\n",
                   name, t_state.pe, why);
            exit(1);
        }
        t_skip(name, why);
    }
#ifdef FSH_MOCK_GDR
    if (FSH_MOCK_CUDA[0] && !strstr(shmemx_device_info(), "GDRCopy: in use")) {
        printf("%s: FAIL (PE %d: the mock GDRCopy is not in use: %s)\n", name, t_state.pe,
               shmemx_device_info());
        exit(1);
    }
#endif
    if (shmem_my_pe() == 0) {
        printf("  %s\n", shmemx_device_info()); /* the registration path, in the log */
    }
}

#endif
