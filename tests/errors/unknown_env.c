/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unknown_env: a misspelt FABSHMEM_ variable draws a warning naming the nearest valid variable;
 * it is not fatal, the program runs normally (a put to itself, checked) and exits 0.
 */
#include <stdio.h>
#include <string.h>

#include <shmem.h>

static char dest[32];

int main(void)
{
    shmem_init();
    char src[32] = "unknown_env data";
    shmem_putmem(dest, src, sizeof(src), shmem_my_pe());
    shmem_barrier_all();
    int ok = memcmp(dest, src, sizeof(src)) == 0;
    shmem_finalize();
    printf("unknown_env: %s\n", ok ? "PASS" : "FAIL (put to self lost)");
    return ok ? 0 : 1;
}
