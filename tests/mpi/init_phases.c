/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_phases: SHMEM_INFO's line of init phase times accounts for the whole of shmem_init.
 *
 * Every PE sets SHMEM_INFO=1 and sends its stdout to a temporary file for the length of
 * shmem_init, timing the call itself with CLOCK_MONOTONIC. PE 0 then reads its file back and
 * checks the line `  init: NAME T ms, NAME T ms, ..., total T ms (PE 0)`: it is there once,
 * every item parses, the phases the issue names (pmix, topology, fabric, registration,
 * exchange, av_insert, mapping, teams) are among them, no time is negative, the phases add up
 * to the total (within the rounding of the printed tenths: a phase left out of the line shows
 * here), and the total is what the program itself measured around shmem_init (not more, and
 * not less by more than 25 ms or 15%: init's clock starts and stops inside the call).
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include <unistd.h>

#include "../test.h"

#define NAME "init_phases"

static const char *const required[] = {"pmix",     "topology",  "fabric",  "registration",
                                       "exchange", "av_insert", "mapping", "teams"};
#define NREQUIRED (sizeof(required) / sizeof(required[0]))

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Parses "NAME T ms, ..., total T ms" from s; returns the count of phases (or -1 when an item
 * does not parse) and fills their sum and the total; found[k] is set for required[k]. */
static int parse(const char *s, double *sum, double *total, int *found)
{
    int n = 0;
    *sum = 0;
    *total = -1;
    for (;;) {
        char name[64];
        double ms;
        int used = 0;
        if (sscanf(s, " %63[a-z_] %lf ms%n", name, &ms, &used) != 2 || used == 0) {
            return -1;
        }
        s += used;
        if (strcmp(name, "total") == 0) {
            *total = ms;
            return n;
        }
        t_check(ms >= 0, "phase %s took %.1f ms", name, ms);
        for (size_t k = 0; k < NREQUIRED; k++) {
            found[k] |= strcmp(name, required[k]) == 0;
        }
        *sum += ms;
        n++;
        if (*s != ',') {
            return -1;
        }
        s++;
    }
}

int main(void)
{
    setenv("SHMEM_INFO", "1", 1);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    FILE *tmp = tmpfile();
    if (saved < 0 || !tmp || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
        perror(NAME ": redirecting stdout");
        return 1;
    }
    double t0 = now_ms();
    shmem_init();
    double measured = now_ms() - t0;
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    t_start(NAME);

    if (t_state.pe == 0) {
        rewind(tmp);
        char line[1024];
        int lines = 0;
        while (fgets(line, sizeof(line), tmp)) {
            const char *p = strstr(line, "  init: ");
            if (p != line) {
                continue;
            }
            lines++;
            line[strcspn(line, "\n")] = '\0';
            double sum, total;
            int found[NREQUIRED] = {0};
            int n = parse(line + strlen("  init:"), &sum, &total, found);
            if (!t_check(n > 0, "the init line does not parse: %s", line)) {
                continue;
            }
            for (size_t k = 0; k < NREQUIRED; k++) {
                t_check(found[k], "no phase '%s' in the init line: %s", required[k], line);
            }
            /* Each printed time is rounded to 0.05 ms at most. */
            double slack = 0.05 * (n + 1) + 0.01;
            t_check(sum <= total + slack && sum >= total - slack,
                    "the %d phases add up to %.1f ms, the total says %.1f ms", n, sum, total);
            double below = measured * 0.15 > 25 ? measured * 0.15 : 25;
            t_check(total <= measured + 0.1 && total >= measured - below,
                    "the total says %.1f ms, shmem_init took %.1f ms as the program measured it",
                    total, measured);
        }
        t_check(lines == 1, "%d lines '  init: ...' in PE 0's output, want 1", lines);
    }
    fclose(tmp);
    shmem_finalize();
    return t_finish(NAME);
}
