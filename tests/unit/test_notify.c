/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_notify: the collectives' symmetric reservation, from fsh_notify_heap_bytes alone (no
 * launcher, no init), against the budget issue 21 sets: O(1) per team plus a few bytes per
 * PE. Checks that it grows with the PE count by at most 48 bytes per PE, that FABSHMEM_MAX_TEAMS
 * moves it by the team arena only (3 KiB a team, whatever the PE count), and the totals at
 * the default 32 teams: <= 256 KiB at 1,024 PEs and <= 6 MiB at 131,072. Prints the table.
 */
#include <stdint.h>
#include <stdio.h>

#include "notify.h"

static int failed;

static void check(int ok, const char *what, int npes, size_t got)
{
    if (!ok) {
        failed++;
        printf("test_notify: check failed: %s (npes %d: %zu bytes)\n", what, npes, got);
    }
}

int main(void)
{
    static const int npes[] = {1, 2, 3, 4, 8, 64, 1024, 16384, 131072};
    size_t prev = 0;
    printf("test_notify: npes, bytes reserved (FABSHMEM_MAX_TEAMS=32)\n");
    for (size_t k = 0; k < sizeof(npes) / sizeof(npes[0]); k++) {
        int n = npes[k];
        size_t b = fsh_notify_heap_bytes(n, 32);
        printf("test_notify: %d %zu\n", n, b);
        check(b % 64 == 0, "a multiple of 64", n, b);
        check(b >= prev, "grows with the PE count", n, b);
        /* Per PE: 4+16 (world), 4+16 (active sets), 4 (finalize); landing at most 96 KiB. */
        size_t fixed = fsh_notify_heap_bytes(1, 32);
        check(b <= fixed + 48 * (size_t)n + 96 * 1024 + 4 * 64, "a few bytes per PE", n, b);
        /* Teams cost the arena only, the same at every PE count. */
        size_t d62 = fsh_notify_heap_bytes(n, 62) - b, d2 = b - fsh_notify_heap_bytes(n, 2);
        check(d62 == fsh_notify_heap_bytes(1, 62) - fixed, "MAX_TEAMS independent of npes", n, b);
        check(d62 <= 30 * 3072 + 61 * 64 && d2 <= 30 * 3072 + 61 * 64, "3 KiB per team slot", n,
              b);
        prev = b;
    }
    check(fsh_notify_heap_bytes(1024, 32) <= 256 * 1024, "<= 256 KiB at 1,024 PEs", 1024,
          fsh_notify_heap_bytes(1024, 32));
    check(fsh_notify_heap_bytes(131072, 32) <= 6 * 1024 * 1024, "<= 6 MiB at 131,072 PEs",
          131072, fsh_notify_heap_bytes(131072, 32));
    printf("test_notify: %s\n", failed ? "FAIL" : "PASS");
    return failed ? 1 : 0;
}
