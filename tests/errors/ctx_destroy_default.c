/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctx_destroy_default: SHMEM_CTX_DEFAULT belongs to the library; destroying it ends the job.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    shmem_ctx_destroy(SHMEM_CTX_DEFAULT);
    printf("ctx_destroy_default: shmem_ctx_destroy(SHMEM_CTX_DEFAULT) returned\n");
    shmem_finalize();
    return 0;
}
