/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait.h: point-to-point synchronization: wait for, or test, local symmetric variables that
 * peers update.
 */
#ifndef FSH_WAIT_H
#define FSH_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fsh_sync_mode { FSH_SYNC_ONE = 1, FSH_SYNC_ALL, FSH_SYNC_ANY, FSH_SYNC_SOME };

/* True when cmp (SHMEM_CMP_*) is a valid comparison. */
bool fsh_wait_cmp_valid(int cmp);
/* a <cmp> b for esize-byte integers (signed or not) stored at a and b. */
bool fsh_wait_compare(const void *a, int cmp, const void *b, size_t esize, bool is_signed);

/* The engine of shmem_<T>_wait_until*, shmem_<T>_test* (see fsh_api_sync in api.h). User
 * waits are bounded by FABSHMEM_WAIT_TIMEOUT only; a timeout returns -ETIMEDOUT in *err. */
size_t fsh_wait_sync(int mode, bool block, void *ivars, size_t nelems, const int *status,
                     int cmp, const void *values, bool vector, size_t esize, bool is_signed,
                     size_t *indices, const char *what, int *err);

/* shmem_signal_wait_until: wait until *sig <cmp> value; returns the value that satisfied it
 * (of a device word, the copy the wait compared). */
uint64_t fsh_wait_signal(uint64_t *sig, int cmp, uint64_t value, const char *what, int *err);

#endif
