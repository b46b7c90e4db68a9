/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signal_bad_op: shmem_putmem_signal with a sig_op that is neither SHMEM_SIGNAL_SET nor
 * SHMEM_SIGNAL_ADD (7) ends the job, naming the value. Everything else is valid. PE 0 makes
 * the bad call; the other PEs wait in a barrier.
 */
#include <stdint.h>
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *buf = shmem_malloc(64);
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    char src[8] = "abcdefg";
    if (me == 0) {
        shmem_putmem_signal(buf, src, sizeof(src), sig, 1, 7, (me + 1) % npes);
        printf("signal_bad_op: shmem_putmem_signal with sig_op 7 returned\n");
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
