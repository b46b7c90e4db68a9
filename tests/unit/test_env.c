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
#include "unit.h"

static void size_ok(const char *s, size_t want)
{
    size_t got = 0;
    char what[128];
    snprintf(what, sizeof(what), "size '%s' == %zu", s, want);
    UNIT_CHECK(fsh_env_parse_size(s, &got) == 0 && got == want, "%s", what);
}

static void size_bad(const char *s)
{
    size_t got = 12345;
    char what[128];
    snprintf(what, sizeof(what), "size '%s' rejected, output untouched", s);
    UNIT_CHECK(fsh_env_parse_size(s, &got) == -EINVAL && got == 12345, "%s", what);
}

int main(void)
{
    unit_name = "test_env";
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
    UNIT_CHECK(fsh_env_parse_bool("1", &b) == 0 && b, "bool 1");
    UNIT_CHECK(fsh_env_parse_bool("yes", &b) == 0 && b, "bool yes");
    UNIT_CHECK(fsh_env_parse_bool("ON", &b) == 0 && b, "bool ON");
    UNIT_CHECK(fsh_env_parse_bool("false", &b) == 0 && !b, "bool false");
    UNIT_CHECK(fsh_env_parse_bool("0", &b) == 0 && !b, "bool 0");
    UNIT_CHECK(fsh_env_parse_bool("maybe", &b) == -EINVAL, "bool maybe rejected");

    UNIT_CHECK(strcmp(fsh_env_nearest("FABSHMEM_TIMOUT"), "FABSHMEM_TIMEOUT") == 0,
               "nearest(FABSHMEM_TIMOUT) == FABSHMEM_TIMEOUT");
    UNIT_CHECK(strcmp(fsh_env_nearest("SHMEM_SYMMETRIC_SIZ"), "SHMEM_SYMMETRIC_SIZE") == 0,
               "nearest(SHMEM_SYMMETRIC_SIZ)");

    /* Defaults when nothing is set. */
    unsetenv("SHMEM_SYMMETRIC_SIZE");
    unsetenv("FABSHMEM_TIMEOUT");
    UNIT_CHECK(fsh_env_load() == 0, "load with defaults");
    UNIT_CHECK(fsh_env()->SHMEM_SYMMETRIC_SIZE == (size_t)512 << 20, "default heap 512M");
    UNIT_CHECK(fsh_env()->FABSHMEM_TIMEOUT == 0.0, "default timeout 0 (off)");
    UNIT_CHECK(fsh_env()->FABSHMEM_PROBE_INTERVAL == 2.0, "default probe interval 2");
    UNIT_CHECK(!fsh_env_is_set("SHMEM_SYMMETRIC_SIZE"), "default is not 'set'");

    /* Set values are parsed and marked. */
    setenv("SHMEM_SYMMETRIC_SIZE", "2G", 1);
    setenv("FABSHMEM_TIMEOUT", "2.5", 1);
    UNIT_CHECK(fsh_env_load() == 0, "load with values");
    UNIT_CHECK(fsh_env()->SHMEM_SYMMETRIC_SIZE == (size_t)2 << 30, "SHMEM_SYMMETRIC_SIZE=2G");
    UNIT_CHECK(fsh_env()->FABSHMEM_TIMEOUT == 2.5, "FABSHMEM_TIMEOUT=2.5");
    UNIT_CHECK(fsh_env_is_set("SHMEM_SYMMETRIC_SIZE"), "set is 'set'");

    /* A malformed value fails, and the recorded message names variable, value and fix. */
    setenv("SHMEM_SYMMETRIC_SIZE", "abc", 1);
    fsh_err_clear();
    UNIT_CHECK(fsh_env_load() == -EINVAL, "malformed size fails the load");
    const struct fsh_error *e = fsh_err_last();
    UNIT_CHECK(e && strstr(e->msg, "SHMEM_SYMMETRIC_SIZE='abc' is not a size") != NULL,
               "message names variable and value");
    UNIT_CHECK(e && strstr(e->fix, "512M") != NULL, "fix shows an accepted form");

    setenv("SHMEM_SYMMETRIC_SIZE", "1G", 1);
    setenv("FABSHMEM_TIMEOUT", "soon", 1);
    fsh_err_clear();
    UNIT_CHECK(fsh_env_load() == -EINVAL, "malformed number fails the load");
    e = fsh_err_last();
    UNIT_CHECK(e && strstr(e->msg, "FABSHMEM_TIMEOUT='soon'") != NULL, "number message");

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
        UNIT_CHECK(rc == -EINVAL && e && strstr(e->msg, bad[i][0]) &&
                       strstr(e->msg, "out of range"),
                   "%s", bad[i][0]);
        unsetenv(bad[i][0]);
    }
    setenv("FABSHMEM_INJECT_SIZE", "-1", 1);
    setenv("FABSHMEM_TX_DEPTH", "0", 1);
    setenv("FABSHMEM_TIMEOUT", "0", 1);
    UNIT_CHECK(fsh_env_load() == 0, "range edges accepted");

    /* Every setting is checked at load, whether or not a job uses it (issue 35): the words of
     * the word-valued rows, provider-name syntax, GPU lists, and the ranges of rows that were
     * checked only where used (an AMO inbox count on a job with CPU atomics, rails). */
    static const char *const refused[][2] = {
        {"FABSHMEM_PROVIDER_PROFILE", "efa_direct"}, {"FABSHMEM_REMOTE_COMPLETION", "counted"},
        {"FABSHMEM_MR_MODE", "local,virtaddr"},      {"FABSHMEM_DEVICE_PATH", "gdrcopy"},
        {"FABSHMEM_DEVICE_IFACE", "gpu"},            {"FABSHMEM_NIC_POLICY", "closest"},
        {"FABSHMEM_BIND", "off"},                    {"FABSHMEM_YIELD", "sometimes"},
        {"FABSHMEM_PROGRESS_THREAD", "yes"},         {"FABSHMEM_FABRIC", "never"},
        {"FABSHMEM_CHAOS", "reorder,shuffle"},       {"FABSHMEM_PROVIDER", "shm,tcp"},
        {"FABSHMEM_PROVIDER", "^tcp"},               {"FABSHMEM_PROVIDER", "tcp;"},
        {"FABSHMEM_PROVIDER", "tcp ofi_rxm"},        {"FABSHMEM_GPU", "0,x"},
        {"FABSHMEM_GPU", "-1"},                      {"FABSHMEM_AMO_PEERS", "0"},
        {"FABSHMEM_AMO_PEERS", "255"},               {"FABSHMEM_SIGNAL_PEERS", "0"},
        {"FABSHMEM_DEVICE_PEERS", "0"},              {"FABSHMEM_DEVICE_CHUNK", "0"},
        {"FABSHMEM_RAILS", "-1"},                    {"FABSHMEM_RAILS", "5"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        setenv(refused[i][0], refused[i][1], 1);
        fsh_err_clear();
        int rc = fsh_env_load();
        e = fsh_err_last();
        char what[160];
        snprintf(what, sizeof(what), "%s=%s refused, the message naming it", refused[i][0],
                 refused[i][1]);
        UNIT_CHECK(rc == -EINVAL && e && strstr(e->msg, refused[i][0]) && e->fix[0], "%s", what);
        unsetenv(refused[i][0]);
    }
    static const char *const taken[][2] = {
        {"FABSHMEM_PROVIDER", "tcp;ofi_rxm"}, {"FABSHMEM_PROVIDER", "efa-direct"},
        {"FABSHMEM_PROVIDER", ""},            {"FABSHMEM_GPU", "0,0,1,1"},
        {"FABSHMEM_GPU", "0, 1"},             {"FABSHMEM_RAILS", "4"},
        {"FABSHMEM_DEVICE_CHUNK", "1"},       {"FABSHMEM_AMO_PEERS", "254"},
        {"FABSHMEM_CHAOS", ""},               {"FABSHMEM_MR_MODE", ""},
    };
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
        setenv(taken[i][0], taken[i][1], 1);
        char what[160];
        snprintf(what, sizeof(what), "%s='%s' accepted", taken[i][0], taken[i][1]);
        UNIT_CHECK(fsh_env_load() == 0, "%s", what);
        unsetenv(taken[i][0]);
    }

    /* The parsed words, as the modules read them: the index in the row's words, the bits of a
     * set, and the words themselves. */
    setenv("FABSHMEM_PROVIDER_PROFILE", "efa-direct", 1);
    setenv("FABSHMEM_MR_MODE", "virt_addr,prov_key", 1);
    setenv("FABSHMEM_DEVICE_PATH", "auto", 1);
    UNIT_CHECK(fsh_env_load() == 0, "load with words");
    UNIT_CHECK(fsh_env_word_index("FABSHMEM_PROVIDER_PROFILE") == 1, "efa-direct is word 1");
    UNIT_CHECK(fsh_env_word_set("FABSHMEM_MR_MODE") == ((1u << 1) | (1u << 3)), "mr_mode bits");
    UNIT_CHECK(fsh_env_word_index("FABSHMEM_DEVICE_PATH") == 0, "auto is word 0");
    UNIT_CHECK(fsh_env_word_index("FABSHMEM_REMOTE_COMPLETION") == 0, "default auto");
    UNIT_CHECK(fsh_env_word_index("FABSHMEM_MR_MODE") == -1, "a set has no index");
    UNIT_CHECK(fsh_env_word_index("FABSHMEM_TIMEOUT") == -1, "no words for a number");
    size_t n = 0;
    const char *const *w = fsh_env_words("FABSHMEM_PROVIDER_PROFILE", &n);
    UNIT_CHECK(n == 2 && w && strcmp(w[1], "efa-direct") == 0, "profile words");
    /* The rows the modules read by name all have words. */
    static const char *const worded[] = {
        "FABSHMEM_PROVIDER_PROFILE", "FABSHMEM_REMOTE_COMPLETION", "FABSHMEM_MR_MODE",
        "FABSHMEM_DEVICE_PATH", "FABSHMEM_DEVICE_IFACE", "FABSHMEM_NIC_POLICY", "FABSHMEM_BIND",
        "FABSHMEM_YIELD", "FABSHMEM_PROGRESS_THREAD", "FABSHMEM_FABRIC", "FABSHMEM_CHAOS",
    };
    for (size_t i = 0; i < sizeof(worded) / sizeof(worded[0]); i++) {
        UNIT_CHECK(fsh_env_words(worded[i], &n) != NULL && n >= 2, "%s", worded[i]);
    }
    unsetenv("FABSHMEM_PROVIDER_PROFILE");
    unsetenv("FABSHMEM_MR_MODE");
    unsetenv("FABSHMEM_DEVICE_PATH");

    /* Which unknown variables are warned about, and as what: every FABSHMEM_ one, a SHMEM_
     * near miss of ours, another implementation's name of a spec variable; not the SHMEM_
     * variables of other implementations, nor ours. */
    static const char *const meant[][2] = {
        {"SHMEM_SYMMETRIC_SIZ", "SHMEM_SYMMETRIC_SIZE"},
        {"SHMEM_SYMETRIC_SIZE", "SHMEM_SYMMETRIC_SIZE"},
        {"SHMEM_INF", "SHMEM_INFO"},                     {"SHMEM_DEBG", "SHMEM_DEBUG"},
        {"SHMEM_VERSON", "SHMEM_VERSION"},               {"FABSHMEM_TIMOUT", "FABSHMEM_TIMEOUT"},
        {"SHMEM_OFI_PROVIDER", NULL},                    {"SHMEM_BOUNCE_SIZE", NULL},
        {"SHMEM_CC", NULL},                              {"SHMEM_OFI_DOMAIN", NULL},
        {"SHMEM_SYMMETRIC_SIZE", NULL},                  {"SHMEM_INFO", NULL},
        {"SMA_FOO", NULL},                               {"OMPI_COMM_WORLD_SIZE", NULL},
    };
    for (size_t i = 0; i < sizeof(meant) / sizeof(meant[0]); i++) {
        bool other = true;
        const char *m = fsh_env_meant(meant[i][0], &other);
        char what[160];
        snprintf(what, sizeof(what), "meant(%s) == %s", meant[i][0],
                 meant[i][1] ? meant[i][1] : "none");
        UNIT_CHECK(!other && (meant[i][1] ? m && strcmp(m, meant[i][1]) == 0 : m == NULL), "%s",
                   what);
    }
    bool other = false;
    const char *m = fsh_env_meant("SMA_SYMMETRIC_SIZE", &other);
    UNIT_CHECK(other && m && strcmp(m, "SHMEM_SYMMETRIC_SIZE") == 0,
               "SMA_SYMMETRIC_SIZE is another's");
    m = fsh_env_meant("SHMEM_SYMMETRIC_HEAP_SIZE", &other);
    UNIT_CHECK(other && m && strcmp(m, "SHMEM_SYMMETRIC_SIZE") == 0,
               "OSHMEM's heap size is another's");

    return unit_exit();
}
