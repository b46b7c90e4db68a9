/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_env: configuration parsing without a launcher — size suffixes, booleans, rejection of
 * malformed values with a message naming the variable, the "did you mean" hint, and defaults.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "error.h"
#include "rt.h"

static int failed;

static void check(int ok, const char *what)
{
    if (!ok) {
        failed++;
        printf("test_env: check failed: %s\n", what);
    }
}

static void size_ok(const char *s, size_t want)
{
    size_t got = 0;
    char what[128];
    snprintf(what, sizeof(what), "size '%s' == %zu", s, want);
    check(fsh_env_parse_size(s, &got) == 0 && got == want, what);
}

static void size_bad(const char *s)
{
    size_t got = 12345;
    char what[128];
    snprintf(what, sizeof(what), "size '%s' rejected, output untouched", s);
    check(fsh_env_parse_size(s, &got) == -EINVAL && got == 12345, what);
}

int main(void)
{
    size_ok("0", 0);
    size_ok("4096", 4096);
    size_ok("1K", 1024);
    size_ok("1k", 1024);
    size_ok("512M", (size_t)512 << 20);
    size_ok("512MB", (size_t)512 << 20);
    size_ok("512MiB", (size_t)512 << 20);
    size_ok("2G", (size_t)2 << 30);
    size_ok("3T", (size_t)3 << 40);
    size_ok(" 64M ", (size_t)64 << 20);
    size_bad("");
    size_bad("abc");
    size_bad("-1");
    size_bad("12Q");
    size_bad("1.5G");
    size_bad("M");
    size_bad("99999999999999999999");
    size_bad("16777216T"); /* 2^64: overflows */

    bool b = false;
    check(fsh_env_parse_bool("1", &b) == 0 && b, "bool 1");
    check(fsh_env_parse_bool("yes", &b) == 0 && b, "bool yes");
    check(fsh_env_parse_bool("ON", &b) == 0 && b, "bool ON");
    check(fsh_env_parse_bool("false", &b) == 0 && !b, "bool false");
    check(fsh_env_parse_bool("0", &b) == 0 && !b, "bool 0");
    check(fsh_env_parse_bool("maybe", &b) == -EINVAL, "bool maybe rejected");

    check(strcmp(fsh_env_nearest("FABSHMEM_TIMOUT"), "FABSHMEM_TIMEOUT") == 0,
          "nearest(FABSHMEM_TIMOUT) == FABSHMEM_TIMEOUT");
    check(strcmp(fsh_env_nearest("SHMEM_SYMMETRIC_SIZ"), "SHMEM_SYMMETRIC_SIZE") == 0,
          "nearest(SHMEM_SYMMETRIC_SIZ)");

    /* Defaults when nothing is set. */
    unsetenv("SHMEM_SYMMETRIC_SIZE");
    unsetenv("FABSHMEM_TIMEOUT");
    check(fsh_env_load() == 0, "load with defaults");
    check(fsh_env()->SHMEM_SYMMETRIC_SIZE == (size_t)512 << 20, "default heap 512M");
    check(fsh_env()->FABSHMEM_TIMEOUT == 0.0, "default timeout 0 (off)");
    check(fsh_env()->FABSHMEM_PROBE_INTERVAL == 2.0, "default probe interval 2");
    check(!fsh_env_is_set("SHMEM_SYMMETRIC_SIZE"), "default is not 'set'");

    /* Set values are parsed and marked. */
    setenv("SHMEM_SYMMETRIC_SIZE", "2G", 1);
    setenv("FABSHMEM_TIMEOUT", "2.5", 1);
    check(fsh_env_load() == 0, "load with values");
    check(fsh_env()->SHMEM_SYMMETRIC_SIZE == (size_t)2 << 30, "SHMEM_SYMMETRIC_SIZE=2G");
    check(fsh_env()->FABSHMEM_TIMEOUT == 2.5, "FABSHMEM_TIMEOUT=2.5");
    check(fsh_env_is_set("SHMEM_SYMMETRIC_SIZE"), "set is 'set'");

    /* A malformed value fails, and the recorded message names variable, value and fix. */
    setenv("SHMEM_SYMMETRIC_SIZE", "abc", 1);
    fsh_err_clear();
    check(fsh_env_load() == -EINVAL, "malformed size fails the load");
    const struct fsh_error *e = fsh_err_last();
    check(e && strstr(e->msg, "SHMEM_SYMMETRIC_SIZE='abc' is not a size") != NULL,
          "message names variable and value");
    check(e && strstr(e->fix, "512M") != NULL, "fix shows an accepted form");

    setenv("SHMEM_SYMMETRIC_SIZE", "1G", 1);
    setenv("FABSHMEM_TIMEOUT", "soon", 1);
    fsh_err_clear();
    check(fsh_env_load() == -EINVAL, "malformed number fails the load");
    e = fsh_err_last();
    check(e && strstr(e->msg, "FABSHMEM_TIMEOUT='soon'") != NULL, "number message");

    /* Values outside a row's range are refused (NaN included), and the edges are accepted. */
    static const char *const bad[][2] = {
        {"FABSHMEM_TIMEOUT", "-5"},   {"FABSHMEM_TIMEOUT", "nan"},  {"FABSHMEM_TIMEOUT", "inf"},
        {"FABSHMEM_TX_DEPTH", "-1"},  {"FABSHMEM_SIM_NODES", "-1"}, {"FABSHMEM_INJECT_SIZE", "-2"},
        {"FABSHMEM_WAIT_TIMEOUT", "-1"}, {"FABSHMEM_PROGRESS_INTERVAL", "0"},
    };
    unsetenv("FABSHMEM_TIMEOUT");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv(bad[i][0], bad[i][1], 1);
        fsh_err_clear();
        int rc = fsh_env_load();
        e = fsh_err_last();
        check(rc == -EINVAL && e && strstr(e->msg, bad[i][0]) && strstr(e->msg, "out of range"),
              bad[i][0]);
        unsetenv(bad[i][0]);
    }
    setenv("FABSHMEM_INJECT_SIZE", "-1", 1);
    setenv("FABSHMEM_TX_DEPTH", "0", 1);
    setenv("FABSHMEM_TIMEOUT", "0", 1);
    check(fsh_env_load() == 0, "range edges accepted");

    if (failed) {
        printf("test_env: FAIL (%d checks failed)\n", failed);
        return 1;
    }
    printf("test_env: PASS\n");
    return 0;
}
