/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test.h: the few helpers every fabshmem test program shares.
 *
 * A test checks data, never just "it did not crash": t_check() counts a failed condition and
 * prints its detail (the first T_MAX_DETAILS of them, indented so that tests/summary.sh counts
 * only the one verdict line per program), t_finish() prints the verdict line
 * `name: PASS` or `name: FAIL (N checks failed)` and returns the exit code, t_skip() prints
 * `name: SKIP (reason)` and exits 77 (automake's "skipped").
 *
 * Data comes from t_pattern(): a deterministic hash of (pe, index), so a byte that is stale,
 * misplaced, or written by the wrong PE differs from what the checker expects with probability
 * 255/256 per byte. t_fill()/t_verify() apply it to whole buffers; a "salt" gives every buffer
 * (and every round of a test) its own pattern, so data left over from an earlier step or
 * copied to the wrong offset is caught too.
 *
 * Everything is static and marked unused: each test program includes this header once and uses
 * what it needs without warnings. Call t_start() right after shmem_init() so that messages name
 * the PE; t_check() never calls into the library, so it is safe before init and after finalize.
 * It compiles as C++ too (tests/mpi/cxx_generics.cc), hence the casts from void *.
 */
#ifndef FSH_TEST_H
#define FSH_TEST_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>

#define T_MAX_DETAILS 10
#define T_UNUSED __attribute__((unused))

/* The state of one test program: its name, this PE (-1 until t_start), failure count. */
static struct {
    const char *name;
    int pe;
    int npes;
    long fails;
} t_state T_UNUSED = {"test", -1, 0, 0};

/* Record the test's name and this PE's identity; call right after shmem_init(). */
static inline T_UNUSED void t_start(const char *name)
{
    t_state.name = name;
    t_state.pe = shmem_my_pe();
    t_state.npes = shmem_n_pes();
    /* Several PEs share one output pipe: line buffering keeps each PE's lines whole. */
    setvbuf(stdout, NULL, _IOLBF, 0);
}

/* Count a failure when cond is false; print its detail for the first few. Returns cond. */
static inline T_UNUSED __attribute__((format(printf, 2, 3))) int t_check(int cond,
                                                                        const char *fmt, ...)
{
    if (cond) {
        return 1;
    }
    t_state.fails++;
    if (t_state.fails <= T_MAX_DETAILS) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (t_state.pe >= 0) {
            printf("  %s: FAIL (PE %d/%d: %s)\n", t_state.name, t_state.pe, t_state.npes, msg);
        } else {
            printf("  %s: FAIL (%s)\n", t_state.name, msg);
        }
        fflush(stdout);
    } else if (t_state.fails == T_MAX_DETAILS + 1) {
        printf("  %s: (further failures not shown)\n", t_state.name);
        fflush(stdout);
    }
    return 0;
}

/* Print the verdict line and return the program's exit code (0 pass, 1 fail). With several PEs
 * only PE 0 prints PASS (one line per run); every failing PE prints its own FAIL line. */
static inline T_UNUSED int t_finish(const char *name)
{
    if (name == NULL) {
        name = t_state.name;
    }
    if (t_state.fails == 0) {
        if (t_state.pe <= 0) {
            printf("%s: PASS\n", name);
        }
        fflush(stdout);
        return 0;
    }
    if (t_state.pe >= 0) {
        printf("%s: FAIL (PE %d: %ld checks failed)\n", name, t_state.pe, t_state.fails);
    } else {
        printf("%s: FAIL (%ld checks failed)\n", name, t_state.fails);
    }
    fflush(stdout);
    return 1;
}

/* The test cannot run here (every PE must decide the same way): report why, exit 77. */
static inline T_UNUSED __attribute__((noreturn)) void t_skip(const char *name, const char *reason)
{
    printf("%s: SKIP (%s)\n", name, reason);
    fflush(stdout);
    exit(77);
}

/* ------------------------------------------------------------------ data patterns */

/* splitmix64's finaliser: a bijection on 64 bits with good avalanche. */
static inline T_UNUSED uint64_t t_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The value PE `pe` stores at element `index`: distinct for every (pe, index) pair in practice.
 * Use t_pattern8/16/32 for narrower elements (they take different bits of the same hash). */
static inline T_UNUSED uint64_t t_pattern(int pe, uint64_t index)
{
    return t_mix(t_mix((uint64_t)(uint32_t)pe * 0x100000001b3ULL + 0x5bd1e995ULL) ^ index);
}
static inline T_UNUSED uint8_t t_pattern8(int pe, uint64_t index)
{
    return (uint8_t)(t_pattern(pe, index) >> 24);
}
static inline T_UNUSED uint16_t t_pattern16(int pe, uint64_t index)
{
    return (uint16_t)(t_pattern(pe, index) >> 16);
}
static inline T_UNUSED uint32_t t_pattern32(int pe, uint64_t index)
{
    return (uint32_t)(t_pattern(pe, index) >> 8);
}

/* Byte i of the buffer pattern (pe, salt): 8 bytes per hash so large buffers fill quickly. */
static inline T_UNUSED uint8_t t_byte(int pe, uint64_t salt, size_t i)
{
    uint64_t seed = t_pattern(pe, salt ^ 0xb0f7e5ULL);
    return (uint8_t)(t_mix(seed + i / 8) >> (8 * (i % 8)));
}

/* Fill n bytes with the pattern (pe, salt). */
static inline T_UNUSED void t_fill(void *buf, size_t n, int pe, uint64_t salt)
{
    uint8_t *p = (uint8_t *)buf;
    uint64_t seed = t_pattern(pe, salt ^ 0xb0f7e5ULL);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = t_mix(seed + i / 8);
        for (int b = 0; b < 8; b++) {
            p[i + b] = (uint8_t)(w >> (8 * b));
        }
    }
    for (; i < n; i++) {
        p[i] = t_byte(pe, salt, i);
    }
}

/* Count one failure for a buffer: `what` (a printf format, with its arguments in ap) labels it,
 * then how many of its n bytes were `how`, and the first of them. For the verifiers. */
static inline T_UNUSED void t_bytes_failed(const char *what, va_list ap, const char *how,
                                           size_t bad, size_t n, size_t first, unsigned got,
                                           unsigned want)
{
    char label[256];
    vsnprintf(label, sizeof(label), what, ap);
    t_check(0, "%s: %zu of %zu bytes %s, first at offset %zu (got 0x%02x, want 0x%02x)", label,
            bad, n, how, first, got, want);
}

/* Check that n bytes hold the pattern (pe, salt): one t_check for the whole buffer, whose
 * detail names `what`, the first wrong offset and the number of wrong bytes. Returns the number
 * of wrong bytes (0 when correct). */
static inline T_UNUSED __attribute__((format(printf, 5, 6))) size_t
t_verify(const void *buf, size_t n, int pe, uint64_t salt, const char *what, ...)
{
    const uint8_t *p = (const uint8_t *)buf;
    uint64_t seed = t_pattern(pe, salt ^ 0xb0f7e5ULL);
    size_t bad = 0, first = 0;
    uint8_t got = 0, want = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t w = (uint8_t)(t_mix(seed + i / 8) >> (8 * (i % 8)));
        if (p[i] != w) {
            if (bad == 0) {
                first = i;
                got = p[i];
                want = w;
            }
            bad++;
        }
    }
    if (bad != 0) {
        va_list ap;
        va_start(ap, what);
        t_bytes_failed(what, ap, "wrong", bad, n, first, got, want);
        va_end(ap);
    }
    return bad;
}

/* Compare n bytes with an expected buffer: one t_check, detail as for t_verify. */
static inline T_UNUSED __attribute__((format(printf, 4, 5))) size_t
t_compare(const void *got, const void *want, size_t n, const char *what, ...)
{
    const uint8_t *g = (const uint8_t *)got, *w = (const uint8_t *)want;
    if (memcmp(got, want, n) == 0) {
        return 0;
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        if (g[i] != w[i]) {
            if (bad == 0) {
                first = i;
            }
            bad++;
        }
    }
    char label[256];
    va_list ap;
    va_start(ap, what);
    vsnprintf(label, sizeof(label), what, ap);
    va_end(ap);
    t_check(0, "%s: %zu of %zu bytes wrong, first at offset %zu (got 0x%02x, want 0x%02x)",
            label, bad, n, first, g[first], w[first]);
    return bad;
}

#endif /* FSH_TEST_H */
