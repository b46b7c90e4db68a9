/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init.h: the job's lifecycle (init, finalize, global exit) and the fatal-error exit.
 */
#ifndef FSH_INIT_H
#define FSH_INIT_H

/* shmem_init_thread: bring every module up in order. Fatal errors end the job here. Called
 * while initialized, it only counts (nested initialization) and reports the level in force. */
void fsh_init_run(const char *fn, int requested, int *provided);
/* shmem_finalize: quiet, barrier, then take every module down in reverse order; a finalize
 * matching a nested initialization only quiets. */
void fsh_init_finalize(const char *fn);
/* shmem_global_exit: end every PE of the job with status. */
void fsh_init_global_exit(int status) __attribute__((noreturn));

/* fn runs first in the finalize that ends the library, before its quiet: a module above init
 * (the stream calls' worker, api_stream.c) stops its thread there. One hook; NULL removes it. */
void fsh_init_on_finalize(void (*fn)(void));

/* Print the two-line report and end the whole job through the launcher:
 *   fabshmem: PE 3/8 (host:pid): shmem_putmem: PE 9 out of range [0,8)
 *   fabshmem: fix: PEs are numbered 0..shmem_n_pes()-1                   */
void fsh_init_fatal(const char *fn, const char *fix, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
/* The same for an error a module recorded (fsh_err); rc is what it returned. */
void fsh_init_fatal_err(const char *fn, int rc) __attribute__((noreturn));

#endif
