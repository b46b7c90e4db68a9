/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.c: the shared benchmark driver (see bench.h): options, size sweep, statistics, and the
 * three outputs (table, --csv, --json FILE). It holds the rows of the run so the JSON file can be
 * written at the end; it never calls OpenSHMEM or libfabric, and it never judges a time.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct row {
    char test[32], target[16], unit[16];
    size_t size;
    double median, best;
    long wrong;
    double ceiling; /* 0: none */
};

static struct {
    const struct bench_opts *o;
    const struct bench_desc *d;
    int rank, npes;
    char library[128], provider[64];
    char *hosts;
    struct row *rows;
    size_t nrows, cap;
    char test[32], target[16], unit[16];
    long total_wrong;
    int csv_header_done;
    struct row *ceil; /* the rows of --ceiling FILE */
    size_t nceil;
    const char *ceil_test; /* the ceiling test of the current section, or NULL */
    const char *ceil_fallback; /* a second legal way: the better of the two, or NULL */
} B;

double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

size_t bench_parse_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
    }
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_stats(double *t, int n, double *min)
{
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    if (min) {
        *min = t[0];
    }
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

void bench_fill(unsigned char *buf, size_t n, unsigned long seed)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = bench_pattern(seed, i);
    }
}

long bench_count_wrong(const unsigned char *buf, size_t n, unsigned long seed)
{
    long wrong = 0;
    for (size_t i = 0; i < n; i++) {
        wrong += buf[i] != bench_pattern(seed, i);
    }
    return wrong;
}

/* 1 when word is one of the comma-separated items of list. */
static int in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) {
            return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* Every item of list must be in known. */
static int check_list(const char *what, const char *list, const char *known)
{
    char item[64];
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        snprintf(item, sizeof(item), "%.*s", (int)len, p);
        if (!in_list(known, item)) {
            fprintf(stderr, "unknown %s '%s' (known: %s)\n", what, item, known);
            return -1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

static void usage(const struct bench_desc *d, FILE *f)
{
    fprintf(f,
            "usage: %s [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-W WINDOW]\n"
            "          [-t TESTS] [-T TARGETS] [--csv] [--json FILE] [--ceiling FILE]\n"
            "  -b, -e     size sweep in bytes (k, M, G suffixes), default 8 .. 1M\n"
            "  -f         size factor between steps, default 2\n"
            "  -n, -w     timed and warm-up iterations per size, default 200 and 20\n"
            "  -W         operations per round of the rate and bandwidth tests, default 64\n"
            "  -t         tests, comma-separated, default all: %s\n"
            "  -T         targets, comma-separated (%s), default %s\n"
            "  --csv      CSV rows instead of the table:\n"
            "             test,target,npes,size,median,best,unit,wrong\n"
            "  --json F   also write metadata, environment and every row to F\n"
            "  --ceiling F  fi_ceiling's --csv output: rows with a ceiling show it and the fraction\n",
            d->name, d->tests, d->targets[0] ? d->targets : "none",
            d->defaults[0] ? d->defaults : "-");
}

void bench_parse(struct bench_opts *o, const struct bench_desc *d, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"csv", no_argument, NULL, 'C'},
        {"json", required_argument, NULL, 'J'},
        {"ceiling", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct bench_opts){.min = 8, .max = 1 << 20, .factor = 2, .iters = 200, .warmup = 20,
                             .window = 64, .targets = d->defaults};
    int opt;
    while ((opt = getopt_long(argc, argv, "b:e:f:n:w:W:t:T:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'b': o->min = bench_parse_size(optarg); break;
        case 'e': o->max = bench_parse_size(optarg); break;
        case 'f': o->factor = atof(optarg); break;
        case 'n': o->iters = atoi(optarg); break;
        case 'w': o->warmup = atoi(optarg); break;
        case 'W': o->window = atoi(optarg); break;
        case 't': o->tests = optarg; break;
        case 'T': o->targets = optarg; break;
        case 'C': o->csv = 1; break;
        case 'J': o->json = optarg; break;
        case 'L': o->ceiling = optarg; break;
        case 'h': usage(d, stdout); exit(0);
        default: usage(d, stderr); exit(2);
        }
    }
    if (o->min == 0) {
        o->min = 1;
    }
    if (optind < argc || o->iters < 1 || o->warmup < 0 || o->window < 1 || o->window > 4096 ||
        o->max < o->min || !(o->factor > 1.0) || check_list("test", o->tests, d->tests) ||
        check_list("target", o->targets, d->targets)) {
        fprintf(stderr, "%s: bad arguments\n", d->name);
        usage(d, stderr);
        exit(2);
    }
}

int bench_want(const struct bench_opts *o, const char *test)
{
    return o->tests == NULL || in_list(o->tests, test);
}

int bench_want_target(const struct bench_opts *o, const char *target)
{
    return in_list(o->targets, target);
}

size_t bench_next_size(const struct bench_opts *o, size_t size)
{
    double next = (double)size * o->factor;
    if (next >= (double)SIZE_MAX / 2) {
        return SIZE_MAX;
    }
    return (size_t)next > size ? (size_t)next : size + 1;
}

/* The fi_ceiling test that bounds test, or NULL; *fallback: a second legal way, or NULL: the
 * ceiling of a size is the better of the two that have a row there (the inject-flush ceilings
 * stop at the inject size, and one injected write + a flush is two operations where one
 * delivery-complete write may be quicker). */
static const char *ceiling_test(const char *test, const char **fallback)
{
    static const char *const map[][3] = {
        /* put + quiet: one injected write + one ordered flush, up to the inject size */
        {"put_lat", "fi_inject_flush_lat", "fi_write_lat"},
        {"put_nbi_lat", "fi_inject_flush_lat", "fi_write_lat"},
        {"get_lat", "fi_read_lat", NULL},       {"get_nbi_lat", "fi_read_lat", NULL},
        {"put_signal_lat", "fi_writedata_lat", NULL}, {"put_bw", "fi_write_bw", NULL},
        /* WINDOW nbi puts + quiet: WINDOW injected writes + one flush, up to the inject size */
        {"put_rate", "fi_inject_flush_rate", "fi_inject_write_rate"},
        {"put_ret", "fi_copy_post_lat", NULL},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (strcmp(map[i][0], test) == 0) {
            *fallback = map[i][2];
            return map[i][1];
        }
    }
    *fallback = NULL;
    return NULL;
}

static void load_ceiling(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench: --ceiling %s: cannot open; no ceiling column\n", path);
        return;
    }
    char line[256];
    size_t cap = 0;
    while (fgets(line, sizeof(line), f)) {
        struct row r = {0};
        int npes;
        if (sscanf(line, "%31[^,],%15[^,],%d,%zu,%lf,%lf,%15[^,],%ld", r.test, r.target, &npes,
                   &r.size, &r.median, &r.best, r.unit, &r.wrong) != 8) {
            continue; /* comments, the header */
        }
        if (B.nceil == cap) {
            cap = cap ? 2 * cap : 64;
            struct row *n = realloc(B.ceil, cap * sizeof(*n));
            if (!n) {
                break;
            }
            B.ceil = n;
        }
        B.ceil[B.nceil++] = r;
    }
    fclose(f);
}

static double ceiling_of(const char *test, size_t size)
{
    for (size_t i = 0; test && i < B.nceil; i++) {
        if (B.ceil[i].size == size && strcmp(B.ceil[i].test, test) == 0) {
            return B.ceil[i].median;
        }
    }
    return 0;
}

static double ceiling_at(size_t size)
{
    double c = ceiling_of(B.ceil_test, size), f = ceiling_of(B.ceil_fallback, size);
    if (c <= 0 || f <= 0) {
        return c > 0 ? c : f;
    }
    int is_time = strcmp(B.unit, "us") == 0;
    return (is_time ? f < c : f > c) ? f : c;
}

/* Speed over the ceiling's speed: for a time the ceiling's time over ours. */
static double fraction(double v, double ceiling, const char *unit)
{
    if (v <= 0 || ceiling <= 0) {
        return 0;
    }
    return strcmp(unit, "us") == 0 ? ceiling / v : v / ceiling;
}

void bench_start(const struct bench_opts *o, const struct bench_desc *d, int rank, int npes,
                 const char *library, const char *provider, const char *hosts)
{
    B.o = o;
    B.d = d;
    B.rank = rank;
    B.npes = npes;
    snprintf(B.library, sizeof(B.library), "%s", library);
    snprintf(B.provider, sizeof(B.provider), "%s", provider && provider[0] ? provider : "default");
    B.hosts = strdup(hosts ? hosts : "");
    if (rank != 0) {
        return;
    }
    if (o->ceiling) {
        load_ceiling(o->ceiling);
    }
    printf("# %s (%s): %d PEs on %s; provider %s\n", d->name, B.library, npes, B.hosts,
           B.provider);
    printf("# sizes %zu..%zu x%g; %d iterations (+%d warm-up), window %d; targets %s\n", o->min,
           o->max, o->factor, o->iters, o->warmup, o->window, o->targets[0] ? o->targets : "-");
    fflush(stdout);
}

void bench_section(const char *test, const char *target, const char *unit, const char *what)
{
    snprintf(B.test, sizeof(B.test), "%s", test);
    snprintf(B.target, sizeof(B.target), "%s", target);
    snprintf(B.unit, sizeof(B.unit), "%s", unit);
    B.ceil_test = B.nceil ? ceiling_test(test, &B.ceil_fallback) : NULL;
    if (B.rank != 0) {
        return;
    }
    int is_time = strcmp(unit, "us") == 0;
    if (B.o->csv) {
        if (!B.csv_header_done) {
            printf("test,target,npes,size,median,best,unit,wrong\n");
            B.csv_header_done = 1;
        }
        printf("# %s (%s): %s\n", test, target, what);
    } else {
        char med[32], best[32];
        snprintf(med, sizeof(med), "median(%s)", unit);
        snprintf(best, sizeof(best), "%s(%s)", is_time ? "min" : "max", unit);
        printf("\n# %s (%s): %s\n# %12s %14s %14s %7s", test, target, what, "size(B)", med, best,
               "#wrong");
        if (B.ceil_test) {
            char ceil[80];
            snprintf(ceil, sizeof(ceil), "%s%s%s(%s)", B.ceil_test, B.ceil_fallback ? "|" : "",
                     B.ceil_fallback ? B.ceil_fallback : "", unit);
            printf(" %22s %8s", ceil, "of_ceil");
        }
        printf("\n");
    }
    fflush(stdout);
}

void bench_row(size_t size, double median, double best, long wrong)
{
    if (B.rank != 0) {
        return;
    }
    B.total_wrong += wrong;
    if (B.nrows == B.cap) {
        B.cap = B.cap ? 2 * B.cap : 64;
        B.rows = realloc(B.rows, B.cap * sizeof(*B.rows));
        if (!B.rows) {
            perror("bench: realloc");
            exit(1);
        }
    }
    struct row *r = &B.rows[B.nrows++];
    snprintf(r->test, sizeof(r->test), "%s", B.test);
    snprintf(r->target, sizeof(r->target), "%s", B.target);
    snprintf(r->unit, sizeof(r->unit), "%s", B.unit);
    r->size = size;
    r->median = median;
    r->best = best;
    r->wrong = wrong;
    r->ceiling = ceiling_at(size);
    if (B.o->csv) {
        printf("%s,%s,%d,%zu,%.4f,%.4f,%s,%ld\n", B.test, B.target, B.npes, size, median, best,
               B.unit, wrong);
    } else {
        printf("  %12zu %14.3f %14.3f %7ld", size, median, best, wrong);
        if (B.ceil_test && r->ceiling > 0) {
            printf(" %22.3f %8.3f", r->ceiling, fraction(median, r->ceiling, B.unit));
        }
        printf("\n");
    }
    fflush(stdout);
}

void bench_note(const char *fmt, ...)
{
    if (B.rank != 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

/* git describe of the source tree the program was run from, when there is one. */
static void git_describe(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    char exe[PATH_MAX], cmd[PATH_MAX + 128];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        return;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
        *slash = '\0';
    }
    /* libtool puts the real binary under .libs/; git finds the tree from either. */
    snprintf(cmd, sizeof(cmd), "git -C '%s' describe --always --dirty 2>/dev/null", exe);
    FILE *p = popen(cmd, "r");
    if (!p) {
        return;
    }
    if (fgets(buf, (int)len, p)) {
        buf[strcspn(buf, "\n")] = '\0';
    } else {
        snprintf(buf, len, "unknown");
    }
    pclose(p);
}

static int write_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    char git[128];
    git_describe(git, sizeof(git));
    fprintf(f, "{\n  \"benchmark\": ");
    json_string(f, B.d->name);
    fprintf(f, ",\n  \"library\": ");
    json_string(f, B.library);
    fprintf(f, ",\n  \"git\": ");
    json_string(f, git);
    fprintf(f, ",\n  \"provider\": ");
    json_string(f, B.provider);
    fprintf(f, ",\n  \"npes\": %d,\n  \"hosts\": ", B.npes);
    json_string(f, B.hosts);
    fprintf(f, ",\n  \"options\": {\"min\": %zu, \"max\": %zu, \"factor\": %g, \"iters\": %d, "
               "\"warmup\": %d, \"window\": %d, \"targets\": ",
            B.o->min, B.o->max, B.o->factor, B.o->iters, B.o->warmup, B.o->window);
    json_string(f, B.o->targets);
    fprintf(f, "},\n  \"ceiling_file\": ");
    json_string(f, B.o->ceiling ? B.o->ceiling : "");
    fprintf(f, ",\n  \"env\": {");
    int first = 1;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "FABSHMEM_", 9) && strncmp(*e, "SHMEM_", 6) && strncmp(*e, "FI_", 3)) {
            continue;
        }
        const char *eq = strchr(*e, '=');
        if (!eq) {
            continue;
        }
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
        fprintf(f, "%s\n    ", first ? "" : ",");
        json_string(f, name);
        fprintf(f, ": ");
        json_string(f, eq + 1);
        first = 0;
    }
    fprintf(f, "%s},\n  \"results\": [", first ? "" : "\n  ");
    for (size_t i = 0; i < B.nrows; i++) {
        const struct row *r = &B.rows[i];
        fprintf(f, "%s\n    {\"test\": \"%s\", \"target\": \"%s\", \"npes\": %d, \"size\": %zu, "
                   "\"median\": %.4f, \"best\": %.4f, \"unit\": \"%s\", \"wrong\": %ld",
                i ? "," : "", r->test, r->target, B.npes, r->size, r->median, r->best, r->unit,
                r->wrong);
        if (r->ceiling > 0) {
            fprintf(f, ", \"ceiling\": %.4f, \"of_ceiling\": %.4f", r->ceiling,
                    fraction(r->median, r->ceiling, r->unit));
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"wrong\": %ld\n}\n", B.total_wrong);
    return fclose(f) == 0 ? 0 : -1;
}

int bench_finish(void)
{
    int rc = 0;
    if (B.rank == 0) {
        printf("# %s\n", B.total_wrong ? "DATA ERRORS: results above are not valid"
                                       : "all data verified");
        fflush(stdout);
        if (B.o->json && write_json(B.o->json) != 0) {
            rc = 1;
        }
        rc |= B.total_wrong != 0;
    }
    free(B.rows);
    free(B.hosts);
    free(B.ceil);
    B.rows = NULL;
    B.hosts = NULL;
    B.ceil = NULL;
    return rc;
}
