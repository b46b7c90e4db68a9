/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stream_misuse: the stream-ordered calls refuse bad use with a message naming the routine, the
 * cause and the fix. One program, the case chosen by STREAM_CASE (each .expect sets it; this
 * program's own .expect is bad_stream):
 *   before_init  shmemx_quiet_on_stream before shmem_init
 *   no_heap      a stream call with the device heap off (FABSHMEM_DEVICE_HEAP_SIZE unset)
 *   bad_stream   a pointer that is no stream of the driver
 *   bad_sig_op   put-with-signal with an operation that is neither SET nor ADD
 *   graph_slots  more calls captured into a graph than FABSHMEM_STREAM_SLOTS (2) slots
 *   memops       FABSHMEM_STREAM_MODE=memops where the mock has no stream memory operations
 * Runs on the mock CUDA driver (built --with-cuda only, so is this test).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmemx.h>

#include "../gpu/stream_drv.h"

int main(void)
{
    const char *c = getenv("STREAM_CASE");
    c = c ? c : "bad_stream";
    setenv("FABSHMEM_CUDA_LIB", FSH_MOCK_CUDA, 0);
    if (strcmp(c, "before_init") == 0) {
        shmemx_quiet_on_stream(NULL);
        printf("stream_misuse: shmemx_quiet_on_stream returned before shmem_init\n");
        return 0;
    }
    shmem_init();
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    if (strcmp(c, "bad_stream") == 0) {
        shmemx_quiet_on_stream((void *)(uintptr_t)0x1234);
    } else if (strcmp(c, "bad_sig_op") == 0) {
        shmemx_putmem_signal_on_stream(NULL, NULL, 0, sig, 1, 7, 0, NULL);
    } else if (strcmp(c, "graph_slots") == 0) {
        drv_open();
        void *s = NULL, *g = NULL;
        DRV(drv.stream_create(&s, 1));
        DRV(drv.begin_capture(s, 0));
        for (int i = 0; i < 3; i++) {
            shmemx_quiet_on_stream(s);
        }
        DRV(drv.end_capture(s, &g));
    } else {
        shmemx_barrier_all_on_stream(NULL); /* no_heap, memops */
    }
    printf("stream_misuse: case %s returned\n", c);
    shmem_finalize();
    return 0;
}
