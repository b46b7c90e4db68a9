/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpp/shmemx.h: the SGI/Cray path of the extensions header, for programs that include it
 * there. It is fabshmem's shmemx.h and nothing else.
 */
#ifndef FABSHMEM_MPP_SHMEMX_H
#define FABSHMEM_MPP_SHMEMX_H

#include <shmemx.h>

#endif
