/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock.h: the distributed locks of shmem_set_lock/shmem_test_lock/shmem_clear_lock.
 */
#ifndef FSH_LOCK_H
#define FSH_LOCK_H

#include <stddef.h>
#include <stdint.h>

#include "mr.h"

/* The table of locks this PE waits for or holds (symmetric: every PE calls it at the same point
 * of init); a set_lock that waits interval seconds checks the lock word's consistency. */
int fsh_lock_init(double interval);
/* The heap bytes fsh_lock_init takes (the memory model's figure). */
size_t fsh_lock_heap_bytes(void);
/* The lock is the symmetric long at (seg, off), the user's addr; its copy on PE 0 is the one
 * that counts. */
int fsh_lock_set(enum fsh_seg seg, uint64_t off, const void *addr);
/* *acquired 1 when acquired, 0 when held by someone else. */
int fsh_lock_test(enum fsh_seg seg, uint64_t off, const void *addr, int *acquired);
int fsh_lock_clear(enum fsh_seg seg, uint64_t off, const void *addr);

#endif
