/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.h: the shared benchmark driver (bench.c). It owns the command line every benchmark takes,
 * the size sweep, the statistics (median and minimum of CLOCK_MONOTONIC samples) and the output:
 * an OSU-like table under '#' metadata lines by default, CSV with --csv, and a JSON file with
 * --json FILE (metadata, environment, every row). It knows nothing of OpenSHMEM or libfabric, so
 * the OpenSHMEM benchmarks (rma, amo, coll, also built with other implementations' oshcc) and the
 * raw libfabric ceiling (fi_ceiling) print the same rows:
 *
 *     test,target,npes,size,median,best,unit,wrong
 *
 * `best` is the minimum for a time and the maximum for a rate. `wrong` counts the bytes (or
 * values) that a data check after the timed loop found not as sent. Only rank 0 prints; every
 * other rank may call the same functions, which then do nothing. No time is ever asserted.
 *
 * With --ceiling FILE (fi_ceiling's CSV, measured just before on the same provider) the table
 * and the JSON rows of the tests that have a ceiling (put_lat, put_nbi_lat: the better of
 * fi_inject_flush_lat and fi_write_lat; get_lat: fi_read_lat, put_signal_lat: fi_writedata_lat,
 * put_bw: fi_write_bw, put_rate: the better of fi_inject_flush_rate and fi_inject_write_rate,
 * up to the inject size; put_ret: fi_copy_post_lat)
 * also carry it and the fraction of it reached (speed over the ceiling's speed). The CSV rows
 * keep their eight columns.
 */
#ifndef FSH_BENCH_H
#define FSH_BENCH_H

#include <stddef.h>

struct bench_opts {
    size_t min, max;      /* -b, -e: the size sweep, bytes */
    double factor;        /* -f: each size is the previous times this (at least +1) */
    int iters, warmup;    /* -n, -w: timed and untimed iterations per size */
    int window;           /* -W: operations in flight per round of the rate/bandwidth tests */
    int csv;              /* --csv: CSV rows on stdout instead of the table */
    const char *json;     /* --json FILE */
    const char *tests;    /* -t LIST: the tests to run (comma-separated), NULL: all */
    const char *targets;  /* -T LIST: heap, static */
    const char *ceiling;  /* --ceiling FILE: fi_ceiling's --csv output of the same run */
};

/* What a benchmark tells the driver about itself, for -h and the metadata. */
struct bench_desc {
    const char *name;      /* "rma" */
    const char *tests;     /* every test it has, comma-separated, for -h and -t checking */
    const char *targets;   /* targets it supports, comma-separated ("" when not applicable) */
    const char *defaults;  /* default -T */
};

/* Parses the command line (before any library init, so -h works without a launcher). Returns
 * 0, or exits with status 2 and the usage on a bad argument, 0 after -h. */
void bench_parse(struct bench_opts *o, const struct bench_desc *d, int argc, char **argv);

/* Rank 0 prints the '#' header: program, library, npes, hosts (comma-separated), options. */
void bench_start(const struct bench_opts *o, const struct bench_desc *d, int rank, int npes,
                 const char *library, const char *provider, const char *hosts);

/* 1 when test (and target) is selected by -t (-T). */
int bench_want(const struct bench_opts *o, const char *test);
int bench_want_target(const struct bench_opts *o, const char *target);

/* The next size of the sweep after size; > o->max ends it. */
size_t bench_next_size(const struct bench_opts *o, size_t size);

/* Starts a section of rows (one test on one target): the table prints a header naming what
 * is timed. unit "us" is a time (best = min); anything else is a rate (best = max). */
void bench_section(const char *test, const char *target, const char *unit, const char *what);
void bench_row(size_t size, double median, double best, long wrong);
/* A '#' line in the table and in CSV (e.g. "n/a: this OpenSHMEM has no put-with-signal"). */
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The last line (data verified or not); writes the JSON file. Returns the exit status: 0, or 1
 * when a row had wrong data. */
int bench_finish(void);

/* Sorts t[0..n) and returns its median; *min gets the smallest. */
double bench_stats(double *t, int n, double *min);
double bench_now_us(void);
/* "64", "4k", "2M", "1G" */
size_t bench_parse_size(const char *s);
/* The byte pattern of the data checks: a function of (seed, index). */
static inline unsigned char bench_pattern(unsigned long seed, size_t i)
{
    return (unsigned char)(i * 131u + seed * 7u + (i >> 8) * 17u + 1u);
}
void bench_fill(unsigned char *buf, size_t n, unsigned long seed);
/* Bytes of buf[0..n) that differ from bench_pattern(seed, i). */
long bench_count_wrong(const unsigned char *buf, size_t n, unsigned long seed);

#endif
