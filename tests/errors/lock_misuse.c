/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock_misuse: distributed locks used against their rules end the job with the routine, the
 * lock and the fix, never a corrupted lock word or a wait forever. FSH_LOCK_CASE picks the
 * misuse (default clear_unheld):
 *   clear_unheld  PE 0 clears a lock it never set (this served the next ticket: two holders
 *                 later, or a hang)
 *   set_twice     PE 0 sets a lock it holds (waited for itself forever)
 *   test_held     PE 0 tests a lock it holds
 *   word_one      the lock word is 1, not 0, before its first use, and PE 0 sets it (it
 *                 waited for ticket 0, which nobody has, forever)
 *   word_garbage  the lock word holds a large value (more tickets ahead than PEs)
 * Before any misuse, a correct set/clear round on every PE checks that the checks do not
 * refuse the right use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>

static long lock, bad;

int main(void)
{
    const char *c = getenv("FSH_LOCK_CASE");
    c = c ? c : "clear_unheld";
    shmem_init();
    int me = shmem_my_pe();
    shmem_set_lock(&lock);
    shmem_clear_lock(&lock);
    if (shmem_test_lock(&lock) == 0) {
        shmem_clear_lock(&lock);
    }
    shmem_barrier_all();
    if (!strcmp(c, "clear_unheld")) {
        if (me == 0) {
            shmem_clear_lock(&lock);
        }
    } else if (!strcmp(c, "set_twice")) {
        if (me == 0) {
            shmem_set_lock(&lock);
            shmem_set_lock(&lock);
        }
    } else if (!strcmp(c, "test_held")) {
        if (me == 0) {
            shmem_set_lock(&lock);
            (void)shmem_test_lock(&lock);
        }
    } else if (!strcmp(c, "word_one")) {
        bad = 1;
        shmem_barrier_all();
        if (me == 0) {
            shmem_set_lock(&bad);
            shmem_clear_lock(&bad);
        }
    } else if (!strcmp(c, "word_garbage")) {
        bad = 0x0000000700000000L; /* serving 7, next 0 */
        shmem_barrier_all();
        shmem_set_lock(&bad);
        shmem_clear_lock(&bad);
    }
    shmem_barrier_all();
    printf("lock_misuse: %s was not refused\n", c);
    shmem_finalize();
    return 0;
}
