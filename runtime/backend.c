/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend.c: the installed memory backend (backend.h). Owns one pointer, set by init.c when a
 * backend (the device heap) came up on every PE and cleared at finalize; never changed while
 * operations run, so readers take it without a lock.
 */
#include "backend.h"

const struct fsh_backend *fsh_backend_active;

void fsh_backend_set(const struct fsh_backend *b)
{
    fsh_backend_active = b;
}
