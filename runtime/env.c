/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * env.c: the only place that reads the environment.
 *
 * Owns the table of env.def, its parsing and its printing. Values are parsed once, at
 * shmem_init, into one struct that never changes afterwards, so no hot path calls getenv().
 * A malformed value is an error naming the variable and an accepted form, whether or not this
 * job uses the setting; an unknown FABSHMEM_* variable (a typo, most often), or a SHMEM_* one
 * close to one of ours, is a warning naming the closest valid one.
 */
#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "log.h"

extern char **environ;

static struct fsh_config config;

enum row_type { T_BOOL, T_SIZE, T_LONG, T_DOUBLE, T_STR };

struct row {
    const char *name;
    enum row_type type;
    const char *def;
    const char *help;
    void *field;
    bool set; /* given in the environment, as opposed to the default */
};

static struct row rows[] = {
#define FSH_ENV(name, type, def, help) {#name, T_##type, def, help, &config.name, false},
#include "env.def"
#undef FSH_ENV
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

int fsh_env_parse_size(const char *s, size_t *out)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    if (!isdigit((unsigned char)*s)) {
        return -EINVAL;
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE) {
        return -EINVAL;
    }
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    /* Accept 512M, 512MB, 512MiB and 512m. */
    if (shift && toupper((unsigned char)end[0]) == 'I' && toupper((unsigned char)end[1]) == 'B') {
        end += 2;
    } else if (toupper((unsigned char)*end) == 'B') {
        end++;
    }
    while (isspace((unsigned char)*end)) {
        end++;
    }
    if (*end != '\0') {
        return -EINVAL;
    }
    if (shift && v > (UINT64_MAX >> shift)) {
        return -EINVAL;
    }
    v <<= shift;
    if (v > SIZE_MAX) {
        return -EINVAL;
    }
    *out = (size_t)v;
    return 0;
}

int fsh_env_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "y", "yes", "on", "true"};
    static const char *const no[] = {"0", "n", "no", "off", "false", ""};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -EINVAL;
}

static void join(const char *const names[], size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < len; i++) {
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
    }
}

static int word_index(const char *word, const char *const names[], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(word, names[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}

int fsh_env_parse_choice(const char *var, const char *value, const char *const names[], size_t n,
                         int *index)
{
    *index = word_index(value, names, n);
    if (*index < 0) {
        char fix[192];
        int k = snprintf(fix, sizeof(fix), "use one of: ");
        join(names, n, fix + k, sizeof(fix) - (size_t)k);
        return fsh_err(-EINVAL, fix, "%s='%s' is not one of the accepted values", var, value);
    }
    return 0;
}

int fsh_env_parse_list(const char *var, const char *value, const char *const names[], size_t n,
                       unsigned *mask)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", value);
    *mask = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok;
         tok = strtok_r(NULL, ", ", &save)) {
        int i = word_index(tok, names, n);
        if (i < 0) {
            char fix[192];
            int k = snprintf(fix, sizeof(fix), "use a comma-separated list of: ");
            join(names, n, fix + k, sizeof(fix) - (size_t)k);
            return fsh_err(-EINVAL, fix, "%s: unknown word '%s'", var, tok);
        }
        *mask |= 1u << i;
    }
    return 0;
}

static int parse_row(struct row *r, const char *v)
{
    char *end;
    switch (r->type) {
    case T_BOOL:
        if (fsh_env_parse_bool(v, r->field) != 0) {
            return fsh_err(-EINVAL, "use 1 or 0 (also yes/no, on/off, true/false)",
                           "%s='%s' is not a boolean", r->name, v);
        }
        return 0;
    case T_SIZE:
        if (fsh_env_parse_size(v, r->field) != 0) {
            return fsh_err(-EINVAL, "use a number with an optional K, M, G or T suffix, e.g. 512M",
                           "%s='%s' is not a size", r->name, v);
        }
        return 0;
    case T_LONG:
        errno = 0;
        *(long *)r->field = strtol(v, &end, 0);
        if (errno != 0 || end == v || *end != '\0') {
            return fsh_err(-EINVAL, "use a whole number", "%s='%s' is not an integer", r->name, v);
        }
        return 0;
    case T_DOUBLE:
        errno = 0;
        *(double *)r->field = strtod(v, &end);
        if (errno != 0 || end == v || *end != '\0') {
            return fsh_err(-EINVAL, "use a number, e.g. 30 or 0.5", "%s='%s' is not a number",
                           r->name, v);
        }
        return 0;
    case T_STR:
        *(const char **)r->field = v;
        return 0;
    }
    return -EINVAL;
}

/* The numeric rows whose valid values are a range (FABSHMEM_PROBE_INTERVAL, 0 or 0.1..3600, is
 * checked by live.c). A value outside is refused at init like a malformed one: a negative
 * queue depth or timeout would otherwise be taken for "the default" or "forever" without a
 * word. */
static const struct limit {
    const char *name;
    double lo, hi;
    const char *fix;
    bool zero_ok; /* 0 means "the provider's" and is accepted besides [lo, hi] */
} limits[] = {
    {"FABSHMEM_TIMEOUT", 0, 1e9, "use seconds >= 0 (0: no limit, the default)", false},
    {"FABSHMEM_WAIT_TIMEOUT", 0, 1e9, "use seconds >= 0 (0: no limit, the default)", false},
    {"FABSHMEM_POLL_GAP_NS", 0, 100000, "use 0 (off, the default) or nanoseconds up to 100000",
     false},
    {"FABSHMEM_TX_DEPTH", 0, 1 << 24, "use 0 (the provider's queue size) or a positive count", false},
    {"FABSHMEM_CTX_ENDPOINTS", -1, 4096, "use -1 (auto), 0 (none) or a count up to 4096", false},
    {"FABSHMEM_INJECT_SIZE", -1, 1 << 30, "use -1 (the provider's limit), 0 (no inject) or bytes", false},
    {"FABSHMEM_BOUNCE_SIZE", -1, 1 << 30, "use -1 (auto), 0 (off) or bytes", false},
    {"FABSHMEM_BOUNCE_SLOTS", 0, 4096, "use 0 (off) or a count up to 4096", false},
    {"FABSHMEM_PROGRESS_INTERVAL", 1, 1e7, "use microseconds between 1 and 10000000", false},
    {"FABSHMEM_SIM_NODES", 0, 1 << 30, "use 0 or 1 (off), or 2..shmem_n_pes()", false},
    /* Checked again where used (a power of two; 2..62 once finalize took its slot), but a
     * long above 2^32 must not wrap into range on its way to an unsigned. */
    {"FABSHMEM_SIGNAL_SLOTS", 1, 64, "use a power of two in 1..64", false},
    {"FABSHMEM_MAX_TEAMS", 2, 62, "set FABSHMEM_MAX_TEAMS to 2..62", false},
    /* Inboxes granted to sources (lease.c: FSH_LEASE_MAX_CHUNKS); checked here for every job,
     * where amo.c, signal.c and devmem.c check them only when they are used. */
    {"FABSHMEM_AMO_PEERS", 1, 254, "use 1 to 254", false},
    {"FABSHMEM_SIGNAL_PEERS", 1, 254, "use 1 to 254", false},
    {"FABSHMEM_DEVICE_PEERS", 1, 254, "use 1 to 254", false},
    /* Bytes a staging request moves: 0 would move nothing. */
    {"FABSHMEM_DEVICE_CHUNK", 1, 1 << 30, "use bytes from 1 to 1G, e.g. 64K (the default)", false},
    /* api_stream.c: slots of the stream-ordered calls. */
    {"FABSHMEM_STREAM_SLOTS", 1, 65536, "use 1 to 65536", false},
    /* fabric_provider.h's FSH_MAX_RAILS; a negative count was taken for 0 (every NIC). */
    {"FABSHMEM_RAILS", 0, 4, "use 0 (every NIC of the list, at most 4) or 1 to 4", false},
    /* Pieces below 8 bytes: libfabric 1.17's shm provider loses some of a put split that
     * finely (rma_putget_mem, rma_nbi_quiet and barrier_all fail at 1..7, pass at 8 and up). */
    {"FABSHMEM_MAX_MSG_SIZE", 8, 1e12, "use 0 (the provider's limit) or at least 8 bytes", true},
};

/* The rows whose value is a word of a fixed set: one of them (ONE) or a comma-separated set of
 * them (SET). Checked at load for every job, whether or not it uses the setting (a job on one
 * node opens no provider, one without a GPU no device heap), so a mistyped word ends
 * shmem_init everywhere, not only where it matters. The words are written here only: a module
 * reads the index of the word (fsh_env_word_index) or the set as bits (fsh_env_word_set), in
 * this order, which is the order of its own numbering (named beside each row). FABSHMEM_LOG
 * (any case) and FABSHMEM_INTRANODE (empty: auto) keep their own parsers (log.c, local.c),
 * which run at every init. */
enum words_kind { ONE, SET };
static struct words {
    const char *name;
    enum words_kind kind;
    const char *const *w;
    size_t n;
    unsigned value; /* the index (ONE) or the bits (SET) of the value parsed */
} words[] = {
#define WORDS(name, kind, ...)                                                                     \
    {#name, kind, (const char *const[]){__VA_ARGS__},                                              \
     sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *), 0}
    /* fabric_provider.c: the profile's index is efa_direct; COMPLETION_*; mr_values' bits. */
    WORDS(FABSHMEM_PROVIDER_PROFILE, ONE, "native", "efa-direct"),
    WORDS(FABSHMEM_REMOTE_COMPLETION, ONE, "auto", "delivery", "count"),
    WORDS(FABSHMEM_MR_MODE, SET, "local", "virt_addr", "allocated", "prov_key", "raw", "hmem"),
    /* devmem.c: the index less one is its enum path (auto: -1); 1 is the system iface. */
    WORDS(FABSHMEM_DEVICE_PATH, ONE, "auto", "staging", "cuda", "dmabuf"),
    WORDS(FABSHMEM_DEVICE_IFACE, ONE, "cuda", "system"),
    /* gdr.c: enum fsh_gdr_mode. */
    WORDS(FABSHMEM_GDRCOPY, ONE, "auto", "on", "off"),
    /* api_stream.c: auto, memops, hostfunc (its enum mode, 0 for auto). */
    WORDS(FABSHMEM_STREAM_MODE, ONE, "auto", "memops", "hostfunc"),
    /* topology.c: enum fsh_topo_policy; 1 leaves the CPU affinity alone. */
    WORDS(FABSHMEM_NIC_POLICY, ONE, "nearest", "roundrobin", "all"),
    WORDS(FABSHMEM_BIND, ONE, "auto", "none"),
    /* init.c: yield, the progress thread, whether to open a provider, the chaos modes. */
    WORDS(FABSHMEM_YIELD, ONE, "auto", "always", "never"),
    WORDS(FABSHMEM_PROGRESS_THREAD, ONE, "auto", "on", "off", "1", "0"),
    WORDS(FABSHMEM_PUT_BATCH, ONE, "auto", "on", "off", "1", "0"),
    WORDS(FABSHMEM_FABRIC, ONE, "auto", "always"),
    WORDS(FABSHMEM_CHAOS, SET, "reorder", "delay"),
#undef WORDS
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

static struct words *words_of(const char *name)
{
    for (size_t i = 0; i < NWORDS; i++) {
        if (strcmp(words[i].name, name) == 0) {
            return &words[i];
        }
    }
    return NULL;
}

static int check_words(const struct row *r)
{
    struct words *w = words_of(r->name);
    if (!w) {
        return 0;
    }
    const char *v = *(const char *const *)r->field;
    if (w->kind == SET) {
        return fsh_env_parse_list(r->name, v, w->w, w->n, &w->value);
    }
    int i;
    int rc = fsh_env_parse_choice(r->name, v, w->w, w->n, &i);
    w->value = rc == 0 ? (unsigned)i : 0;
    return rc;
}

const char *const *fsh_env_words(const char *name, size_t *n)
{
    const struct words *w = words_of(name);
    if (n) {
        *n = w ? w->n : 0;
    }
    return w ? w->w : NULL;
}

int fsh_env_word_index(const char *name)
{
    const struct words *w = words_of(name);
    return w && w->kind == ONE ? (int)w->value : -1;
}

unsigned fsh_env_word_set(const char *name)
{
    const struct words *w = words_of(name);
    return w && w->kind == SET ? w->value : 0;
}

/* FABSHMEM_PROVIDER: the name of one provider as libfabric spells it: a core provider, and
 * optionally its utility provider after ';' (tcp;ofi_rxm), each of letters, digits, '_' and
 * '-'. Whether libfabric has it is known only when a provider is opened (a one-node job opens
 * none); a list, a negation or a space (FI_PROVIDER's syntax, a quoting slip) is refused here. */
static int check_provider(const char *name, const char *v)
{
    bool ok = true;
    size_t part = 0;
    for (const char *c = v; *c && ok; c++) {
        if (*c == ';') {
            ok = part > 0;
            part = 0;
        } else {
            ok = isalnum((unsigned char)*c) || *c == '_' || *c == '-';
            part++;
        }
    }
    if (!ok || part == 0) {
        return fsh_err(-EINVAL, "name one provider as 'fi_info -t FI_EP_RDM' lists it, e.g. efa, "
                       "shm or tcp;ofi_rxm (FI_PROVIDER takes lists), or unset it",
                       "%s='%s' is not a provider name", name, v);
    }
    return 0;
}

/* FABSHMEM_GPU: "" (auto), or visible GPU indexes separated by commas (or spaces). Whether the
 * node has that many GPUs is topology.c's to check (a node without any never looks). */
static int check_gpu(const char *name, const char *v)
{
    if (v[strspn(v, "0123456789, ")] != '\0') {
        return fsh_err(-EINVAL, "use visible GPU indexes: one for every PE or one per local rank, "
                       "e.g. 0,0,1,1; or unset it",
                       "%s='%s' is not a list of GPU indexes", name, v);
    }
    return 0;
}

/* The string rows with a syntax of their own (not a set of words). */
static const struct syntax {
    const char *name;
    int (*check)(const char *name, const char *value);
} syntaxes[] = {
    {"FABSHMEM_PROVIDER", check_provider},
    {"FABSHMEM_GPU", check_gpu},
};

static int check_syntax(const struct row *r)
{
    const char *v = *(const char *const *)r->field;
    for (size_t i = 0; i < sizeof(syntaxes) / sizeof(syntaxes[0]); i++) {
        if (strcmp(syntaxes[i].name, r->name) == 0 && v[0]) { /* empty: unset */
            return syntaxes[i].check(r->name, v);
        }
    }
    return 0;
}

static int check_limit(const struct row *r)
{
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
        const struct limit *l = &limits[i];
        if (strcmp(l->name, r->name) != 0) {
            continue;
        }
        double v = r->type == T_LONG   ? (double)*(long *)r->field
                   : r->type == T_SIZE ? (double)*(size_t *)r->field
                                       : *(double *)r->field;
        /* Written so that NaN is out of range too. */
        if (!(v >= l->lo && v <= l->hi) && !(l->zero_ok && v == 0)) {
            return fsh_err(-EINVAL, l->fix, "%s=%.15g is out of range [%.15g, %.15g]", r->name, v, l->lo,
                           l->hi);
        }
    }
    return 0;
}

int fsh_env_load(void)
{
    for (size_t i = 0; i < NROWS; i++) {
        const char *v = getenv(rows[i].name);
        rows[i].set = (v != NULL);
        int rc = parse_row(&rows[i], v ? v : rows[i].def);
        if (rc == 0 && rows[i].type == T_STR) {
            rc = check_words(&rows[i]);
        }
        if (rc == 0 && rows[i].type == T_STR) {
            rc = check_syntax(&rows[i]);
        }
        if (rc == 0 && rows[i].type != T_BOOL && rows[i].type != T_STR) {
            rc = check_limit(&rows[i]);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

const struct fsh_config *fsh_env(void)
{
    return &config;
}

bool fsh_env_is_set(const char *name)
{
    for (size_t i = 0; i < NROWS; i++) {
        if (strcmp(rows[i].name, name) == 0) {
            return rows[i].set;
        }
    }
    return false;
}

/* Levenshtein distance, bounded to short names; enough for typo hints. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) {
        return SIZE_MAX;
    }
    size_t prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++) {
        prev[j] = j;
    }
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof(size_t) * (lb + 1));
    }
    return prev[lb];
}

const char *fsh_env_nearest(const char *name)
{
    const char *best = rows[0].name;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < NROWS; i++) {
        size_t d = distance(name, rows[i].name);
        if (d < best_d) {
            best_d = d;
            best = rows[i].name;
        }
    }
    return best;
}

/* Other OpenSHMEM implementations' names for what fabshmem reads under the spec's name: SGI's
 * SMA_ names (still read by Open MPI's OSHMEM and Sandia OpenSHMEM) and OSHMEM's (and Cray's)
 * heap size. Set alone, the user meant ours; set beside ours (a script for several
 * libraries), they are another library's business. */
static const char *const others[][2] = {
    {"SMA_SYMMETRIC_SIZE", "SHMEM_SYMMETRIC_SIZE"},
    {"SHMEM_SYMMETRIC_HEAP_SIZE", "SHMEM_SYMMETRIC_SIZE"},
    {"SMA_DEBUG", "SHMEM_DEBUG"},
    {"SMA_INFO", "SHMEM_INFO"},
    {"SMA_VERSION", "SHMEM_VERSION"},
};

static bool is_row(const char *name)
{
    for (size_t i = 0; i < NROWS; i++) {
        if (strcmp(rows[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

const char *fsh_env_meant(const char *name, bool *other)
{
    *other = false;
    if (is_row(name)) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        if (strcmp(others[i][0], name) == 0) {
            *other = true;
            return others[i][1];
        }
    }
    if (strncmp(name, "FABSHMEM_", 9) == 0) {
        return fsh_env_nearest(name); /* every FABSHMEM_ name is ours */
    }
    if (strncmp(name, "SHMEM_", 6) != 0) {
        return NULL;
    }
    /* SHMEM_ names are shared with other implementations (Sandia's SHMEM_OFI_*, SHMEM_CC):
     * only a near miss of one of ours is a typo, about one edit per four letters after the
     * prefix (SHMEM_INFO: 1, SHMEM_SYMMETRIC_SIZE: 3). */
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < NROWS; i++) {
        const char *row = rows[i].name;
        if (strncmp(row, "SHMEM_", 6) != 0) {
            continue;
        }
        size_t d = distance(name, row);
        size_t tolerance = (strlen(row) - 6) / 4;
        if (d <= (tolerance ? tolerance : 1) && d < best_d) {
            best_d = d;
            best = row;
        }
    }
    return best;
}

void fsh_env_warn_unknown(void)
{
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "FABSHMEM_", 9) != 0 && strncmp(*e, "SHMEM_", 6) != 0 &&
            strncmp(*e, "SMA_", 4) != 0) {
            continue;
        }
        char name[128];
        size_t n = strcspn(*e, "=");
        if (n >= sizeof(name)) {
            n = sizeof(name) - 1;
        }
        memcpy(name, *e, n);
        name[n] = '\0';
        bool other;
        const char *meant = fsh_env_meant(name, &other);
        if (meant && other && !fsh_env_is_set(meant)) {
            FSH_WARN("%s is another OpenSHMEM implementation's variable, ignored; fabshmem reads "
                     "%s", name, meant);
        } else if (meant && !other) {
            FSH_WARN("unknown variable %s ignored; did you mean %s? (SHMEM_INFO=1 lists them all)",
                     name, meant);
        }
    }
}

void fsh_env_print(FILE *out)
{
    for (size_t i = 0; i < NROWS; i++) {
        const struct row *r = &rows[i];
        char val[64];
        switch (r->type) {
        case T_BOOL: snprintf(val, sizeof(val), "%d", *(bool *)r->field); break;
        case T_SIZE: snprintf(val, sizeof(val), "%zu", *(size_t *)r->field); break;
        case T_LONG: snprintf(val, sizeof(val), "%ld", *(long *)r->field); break;
        case T_DOUBLE: snprintf(val, sizeof(val), "%g", *(double *)r->field); break;
        case T_STR: snprintf(val, sizeof(val), "%s", *(const char **)r->field); break;
        }
        fprintf(out, "  %-22s %-12s %-8s %s\n", r->name, val[0] ? val : "\"\"",
                r->set ? "(set)" : "(default)", r->help);
    }
}
