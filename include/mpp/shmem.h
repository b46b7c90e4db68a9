/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpp/shmem.h: the SGI/Cray path of the OpenSHMEM header, which older programs (and those
 * written for Cray SHMEM, Open MPI's OSHMEM or Sandia OpenSHMEM, which install it too) include.
 * It is fabshmem's shmem.h and nothing else.
 */
#ifndef FABSHMEM_MPP_SHMEM_H
#define FABSHMEM_MPP_SHMEM_H

#include <shmem.h>

#endif
