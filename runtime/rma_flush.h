/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_flush.h: quiet's completion of counted injected puts by one ordered operation per target
 * PE written since the last flush. For rma_post.c (which marks targets) and rma.c (quiet).
 */
#ifndef FSH_RMA_FLUSH_H
#define FSH_RMA_FLUSH_H

#include <stdbool.h>

struct fsh_ctx;

/* How quiet completes counted puts. */
enum fsh_flush_mode {
    FSH_FLUSH_NONE,  /* each counted put is delivery-complete; the write counter is quiet's */
    FSH_FLUSH_WRITE, /* one delivery-complete 8-byte write per dirty target (FI_ORDER_WAW) */
    FSH_FLUSH_READ,  /* one 8-byte read per dirty target (FI_ORDER_RAW) */
};

/* What fsh_rma_flush_init reserves of the symmetric heap, on every PE. */
#define FSH_RMA_FLUSH_HEAP_BYTES 64

/* Reserve the flush word (always, so the heap's layout does not depend on the provider) and
 * choose the mode from the provider's ordering. After fsh_arrive_init. */
int fsh_rma_flush_init(void);
void fsh_rma_flush_fini(void);

/* FSH_FLUSH_NONE, or the flush that completes counted puts posted transmit-complete. */
enum fsh_flush_mode fsh_rma_flush_mode(void);

/* A counted put to pe is about to be posted (mode not NONE): true when it may go
 * transmit-complete, the next quiet flushing pe; false when it must stay delivery-complete
 * (the first to pe since the last flush). Caller holds the engine lock. */
bool fsh_rma_flush_mark(int pe);

/* Post one flush to every PE marked since the last call, on ctx's track, and wait for them:
 * on return every counted put posted before the call is in its target's memory. */
int fsh_rma_flush(struct fsh_ctx *ctx);

/* SHMEM_INFO's line. */
const char *fsh_rma_flush_describe(void);

#endif
