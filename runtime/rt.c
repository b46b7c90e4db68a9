/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rt.c: the runtime identity's one definition.
 *
 * Defined at the bottom of the layers (layer 0, with rt.h) so that every module finds it
 * below itself and a program that runs modules without init.c (the unit tests, sim_scale)
 * links it without pulling the start-up in. Its values before shmem_init: no PE yet, warnings
 * and errors logged. Who writes which field, and when, is in rt.h; nothing here writes it.
 */
#include "rt.h"

struct fsh_rt fsh_rt = {.pe = -1, .npes = 0, .log_level = FSH_LOG_WARN};
