/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctx_bad_options: option bits that are not SHMEM_CTX_* are a programming error, not a soft
 * failure: the job ends naming the unknown bits.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    shmem_ctx_t ctx;
    int rc = shmem_ctx_create(0x100, &ctx);
    printf("ctx_bad_options: shmem_ctx_create(0x100) returned %d\n", rc);
    shmem_finalize();
    return 0;
}
