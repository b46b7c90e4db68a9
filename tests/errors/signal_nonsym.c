/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal_nonsym: shmem_putmem_signal whose signal word is a stack variable (not symmetric)
 * ends the job, naming the address. The data destination is symmetric, so only sig_addr is
 * wrong. PE 0 makes the bad call; the other PEs wait in a barrier.
 */
#include <stdint.h>
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *buf = shmem_malloc(64);
    char src[8] = "abcdefg";
    uint64_t stack_sig = 0;
    if (me == 0) {
        shmem_putmem_signal(buf, src, sizeof(src), &stack_sig, 1, SHMEM_SIGNAL_SET,
                            (me + 1) % npes);
        printf("signal_nonsym: shmem_putmem_signal with a stack sig_addr returned\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    return stack_sig == 1;
}
