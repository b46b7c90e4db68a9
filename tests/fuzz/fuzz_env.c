/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_env: a libFuzzer target for the configuration parser (runtime/env.c).
 *
 * The input is split at its first newline: the first part is a value, the second a variable
 * name. The value goes through every parser (sizes, booleans, word lists, choices, the
 * nearest-name search) and, set as each variable of a few rows of every type, through the whole
 * table's load; the name, prefixed FABSHMEM_, goes through the unknown-variable warning. Nothing
 * may crash, read out of bounds, overflow (UBSan) or leak; a rejected value must leave a
 * recorded error. Built by .ci/sanitize with clang -fsanitize=fuzzer,address,undefined, linked
 * with env.c, error.c and log.c only; fsh_rt (rt.c's) is defined here.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "error.h"
#include "log.h"
#include "rt.h"

struct fsh_rt fsh_rt = {.pe = 0, .npes = 1, .log_level = FSH_LOG_ERROR};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const rows[] = {
    "SHMEM_SYMMETRIC_SIZE", "SHMEM_INFO", "FABSHMEM_TIMEOUT", "FABSHMEM_TX_DEPTH", "FABSHMEM_LOG",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in) {
        return 0;
    }
    memcpy(in, data, size);
    in[size] = '\0';
    char *name = strchr(in, '\n');
    if (name) {
        *name++ = '\0';
    }
    const char *value = in;

    size_t sz;
    bool b;
    unsigned mask;
    int idx;
    static const char *const words[] = {"reorder", "delay", "auto"};
    (void)fsh_env_parse_size(value, &sz);
    (void)fsh_env_parse_bool(value, &b);
    if (fsh_env_parse_list("FUZZ_LIST", value, words, 3, &mask) != 0 && !fsh_err_last()) {
        abort(); /* a rejection always records its cause */
    }
    fsh_err_clear();
    if (fsh_env_parse_choice("FUZZ_CHOICE", value, words, 3, &idx) != 0 && !fsh_err_last()) {
        abort();
    }
    fsh_err_clear();
    (void)fsh_env_nearest(value);

    /* The whole table, with the value in variables of each type. */
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        setenv(rows[i], value, 1);
        if (fsh_env_load() != 0 && !fsh_err_last()) {
            abort();
        }
        fsh_err_clear();
        unsetenv(rows[i]);
    }

    /* An unknown FABSHMEM_ variable named by the input's second line. */
    if (name && name[0] && !strchr(name, '=')) {
        char var[160];
        snprintf(var, sizeof(var), "FABSHMEM_%s", name);
        if (setenv(var, "1", 1) == 0) {
            fsh_env_warn_unknown();
            unsetenv(var);
        }
    }
    free(in);
    return 0;
}
