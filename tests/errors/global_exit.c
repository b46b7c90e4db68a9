/*
 * global_exit: shmem_global_exit(7) on PE 1 ends the whole job, including PE 0 blocked in a
 * barrier that PE 1 never enters, and the job's exit status is 7.
 */
#include <stdio.h>

#include <shmem.h>

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes < 2) {
        printf("global_exit: needs 2 PEs\n");
        return 1;
    }
    if (me == 1) {
        shmem_global_exit(7);
        printf("global_exit: shmem_global_exit returned\n");
        return 0;
    }
    shmem_barrier_all();
    printf("global_exit: PE %d left the barrier that PE 1 never entered\n", me);
    shmem_finalize();
    return 0;
}
