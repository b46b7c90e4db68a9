/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_notify: the collectives' symmetric reservation, from fsh_notify_heap_bytes alone (no
 * launcher, no init), against the budget issue 21 sets: O(1) per team plus a few bytes per
 * PE. Checks that it grows with the PE count by at most 48 bytes per PE plus a team arena
 * that holds a team of every PE (about 21 bytes per PE), that FABSHMEM_MAX_TEAMS moves it by
 * at most 3 KiB a team, that a team of every PE, or two of half of them, fit in the arena at
 * every size (a split of more than ~4,800 PEs once could not be made), and the totals at the
 * default 32 teams: <= 256 KiB at 1,024 PEs and <= 9 MiB at 131,072. Prints the table.
 */
#include <stdint.h>
#include <stdio.h>

#include "notify.h"
#include "unit.h"

int main(void)
{
    unit_name = "test_notify";
    static const int npes[] = {1, 2, 3, 4, 8, 64, 1024, 4801, 9600, 16384, 131072, 1 << 22};
    size_t prev = 0;
    printf("test_notify: npes, bytes reserved (FABSHMEM_MAX_TEAMS=32)\n");
    for (size_t k = 0; k < sizeof(npes) / sizeof(npes[0]); k++) {
        int n = npes[k];
        size_t b = fsh_notify_heap_bytes(n, 32);
        printf("test_notify: %d %zu\n", n, b);
        UNIT_CHECK(b % 64 == 0, "%s (npes %d: %zu bytes)", "a multiple of 64", n, b);
        UNIT_CHECK(b >= prev, "%s (npes %d: %zu bytes)", "grows with the PE count", n, b);
        /* Per PE: 8+16 (world: a cell of arrivals and fingerprints, mailboxes), 8+16 (active
         * sets), 8 (finalize); landing at most 96 KiB;
         * the arena: 3 KiB per team, or 61/59 of a team of every PE (24 bytes per PE, its
         * ring and smallest landing buffers), each page rounded up to 64 bytes. */
        size_t fixed = fsh_notify_heap_bytes(1, 32);
        size_t arena = 32 * 3072;
        size_t world_team = 24 * (size_t)n * 61 / 59 + 61 * (64 + 128 + 2 * 24 * 128 / 59);
        arena = arena > world_team ? arena : world_team;
        UNIT_CHECK(b <= fixed + 56 * (size_t)n + 96 * 1024 + 4 * 64 + arena,
                   "%s (npes %d: %zu bytes)", "a few bytes per PE", n, b);
        /* Each team slot costs at most 3 KiB, at every PE count. */
        size_t d62 = fsh_notify_heap_bytes(n, 62) - b, d2 = b - fsh_notify_heap_bytes(n, 2);
        UNIT_CHECK(d62 <= 30 * 3072 + 61 * 64 && d2 <= 30 * 3072 + 61 * 64,
                   "%s (npes %d: %zu bytes)", "3 KiB per team slot", n, b);
        /* Splits as large as the job: a team of every PE, or two of half of them (61 pages;
         * SHMEM_TEAM_SHARED takes others only on a node of many PEs). */
        for (unsigned teams = 2; teams <= 62; teams += 30) {
            unsigned all = fsh_notify_team_pages(n, teams, n);
            unsigned half = fsh_notify_team_pages(n, teams, n / 2) +
                            fsh_notify_team_pages(n, teams, n - n / 2);
            UNIT_CHECK(all <= 59, "%s (npes %d: %zu bytes)", "a team of every PE fits the arena", n,
                       (size_t)all);
            UNIT_CHECK(half <= 61, "%s (npes %d: %zu bytes)",
                       "two teams of half the PEs fit the arena", n, (size_t)half);
        }
        prev = b;
    }
    UNIT_CHECK(fsh_notify_heap_bytes(1024, 32) <= 256 * 1024, "%s (npes %d: %zu bytes)",
               "<= 256 KiB at 1,024 PEs", 1024, fsh_notify_heap_bytes(1024, 32));
    UNIT_CHECK(fsh_notify_heap_bytes(131072, 32) <= 11 * 1024 * 1024, "%s (npes %d: %zu bytes)",
               "<= 11 MiB at 131,072 PEs", 131072, fsh_notify_heap_bytes(131072, 32));
    printf("test_notify: %s\n", unit_failures ? "FAIL" : "PASS");
    return unit_failures ? 1 : 0;
}
