/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * env.h: the configuration, parsed once from the environment into one immutable struct.
 *
 * Fields are named exactly like the variables (see env.def), so a variable is greppable from
 * its use to its definition. Only env.c calls getenv().
 */
#ifndef FSH_ENV_H
#define FSH_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define FSH_ENV_T_BOOL bool
#define FSH_ENV_T_SIZE size_t
#define FSH_ENV_T_LONG long
#define FSH_ENV_T_DOUBLE double
#define FSH_ENV_T_STR const char *

struct fsh_config {
#define FSH_ENV(name, type, def, help) FSH_ENV_T_##type name;
#include "env.def"
#undef FSH_ENV
};

/* Parse every row; on a malformed value records the error (fsh_err) and returns -EINVAL. */
int fsh_env_load(void);
/* The parsed configuration; valid after fsh_env_load() succeeded. */
const struct fsh_config *fsh_env(void);
/* Warn once about FABSHMEM_* variables that are not in the table, and SHMEM_* or SMA_* ones that
 * look meant for a row (fsh_env_meant), naming that row. */
void fsh_env_warn_unknown(void);
/* The row a variable of the environment that no row has was most likely meant for: any
 * FABSHMEM_* name's nearest row, a SHMEM_* name's only when it is a near miss (other
 * implementations have SHMEM_* variables of their own), and for another OpenSHMEM
 * implementation's name of a spec variable (SMA_SYMMETRIC_SIZE, SHMEM_SYMMETRIC_HEAP_SIZE)
 * ours, with *other set. NULL: none (a row itself, or someone else's variable). */
const char *fsh_env_meant(const char *name, bool *other);
/* True when the variable was given in the environment (not defaulted). */
bool fsh_env_is_set(const char *name);
/* Print every row: name, value, whether it was set, and its help text. */
void fsh_env_print(FILE *out);

/* Parsers, exposed for unit tests. Return 0 or -EINVAL. */
int fsh_env_parse_size(const char *s, size_t *out);
int fsh_env_parse_bool(const char *s, bool *out);
/* Values made of words: `value` is a comma- or space-separated subset of names[0..n-1]
 * (parse_list sets bit i of *mask for names[i]) or exactly one of them (parse_choice sets
 * *index). An unknown word records an error naming var and the accepted words: -EINVAL. */
int fsh_env_parse_list(const char *var, const char *value, const char *const names[], size_t n,
                       unsigned *mask);
int fsh_env_parse_choice(const char *var, const char *value, const char *const names[], size_t n,
                         int *index);

/* The rows whose value is a word of a fixed set (env.c's table, checked by fsh_env_load for
 * every job): the words of row `name` in the order its module numbers them (n set, NULL for
 * another row), the index of the one given (-1 for a row of another kind), and the bits of the
 * set given (bit i: word i) for a comma-separated row. */
const char *const *fsh_env_words(const char *name, size_t *n);
int fsh_env_word_index(const char *name);
unsigned fsh_env_word_set(const char *name);

/* Nearest table name to `name` (edit distance), for "did you mean" hints. */
const char *fsh_env_nearest(const char *name);

#endif
