/*
 * lock.h: the distributed locks of shmem_set_lock/shmem_test_lock/shmem_clear_lock.
 */
#ifndef FSH_LOCK_H
#define FSH_LOCK_H

#include <stdint.h>

#include "mr.h"

/* The lock is the symmetric long at (seg, off); its copy on PE 0 is the one that counts. */
int fsh_lock_set(enum fsh_seg seg, uint64_t off);
/* 0 when acquired, 1 when held by someone else (the spec's return values). */
int fsh_lock_test(enum fsh_seg seg, uint64_t off, int *acquired);
int fsh_lock_clear(enum fsh_seg seg, uint64_t off);

#endif
