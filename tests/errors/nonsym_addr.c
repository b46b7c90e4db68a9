/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nonsym_addr: shmem_putmem whose destination is a stack array (not symmetric) ends the job,
 * naming the address. PE 0 makes the bad call; the other PEs wait in a barrier.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char stack_buf[64] = {0};
    char src[8] = "abcdefg";
    if (me == 0) {
        shmem_putmem(stack_buf, src, sizeof(src), (me + 1) % npes);
        printf("nonsym_addr: shmem_putmem to a stack address returned\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    return stack_buf[0] == 'a';
}
