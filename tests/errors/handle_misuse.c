/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handle_misuse: team and context handles that name nothing live end the job with the routine,
 * the cause and the fix, never a crash in the C library or a wait: FSH_HANDLE_CASE picks the
 * misuse (the default: a collective on a destroyed team). Each case's .expect names it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shmem.h>

static long word;

static shmem_team_t evens(void)
{
    shmem_team_t t = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (shmem_n_pes() + 1) / 2, NULL, 0, &t);
    return t;
}

int main(void)
{
    const char *c = getenv("FSH_HANDLE_CASE");
    c = c ? c : "team_after_destroy";
    shmem_init();
    int me = shmem_my_pe();
    if (!strcmp(c, "team_after_destroy")) {
        shmem_team_t t = evens();
        shmem_team_destroy(t);
        if (me == 0) {
            shmem_team_sync(t);
        }
    } else if (!strcmp(c, "team_reused")) {
        /* The destroyed team's slot holds a new team: the old handle still does not pass. */
        shmem_team_t t = evens();
        shmem_team_destroy(t);
        shmem_team_t u = evens();
        if (me == 0) {
            printf("handle_misuse: old %p new %p\n", (void *)t, (void *)u);
            fflush(stdout);
            shmem_team_n_pes(t);
        }
    } else if (!strcmp(c, "team_double_destroy")) {
        shmem_team_t t = evens();
        shmem_team_destroy(t);
        shmem_team_destroy(t);
    } else if (!strcmp(c, "team_split_null")) {
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), NULL, 0, NULL);
    } else if (!strcmp(c, "team_2d_null")) {
        shmem_team_t x;
        shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &x, NULL, 0, NULL);
    } else if (!strcmp(c, "team_garbage")) {
        shmem_team_t t;
        memset(&t, 0x5a, sizeof(t));
        shmem_team_sync(t);
    } else if (!strcmp(c, "ctx_after_destroy")) {
        shmem_ctx_t x;
        shmem_ctx_create(0, &x);
        shmem_ctx_destroy(x);
        shmem_ctx_long_p(x, &word, 1, (me + 1) % shmem_n_pes());
    } else if (!strcmp(c, "ctx_double_destroy")) {
        shmem_ctx_t x;
        shmem_ctx_create(SHMEM_CTX_PRIVATE, &x);
        shmem_ctx_destroy(x);
        shmem_ctx_destroy(x);
    } else if (!strcmp(c, "ctx_create_null")) {
        shmem_ctx_create(0, NULL);
    } else if (!strcmp(c, "ctx_garbage")) {
        shmem_ctx_t x = (shmem_ctx_t)&word;
        shmem_ctx_quiet(x);
    } else if (!strcmp(c, "ctx_of_destroyed_team")) {
        /* Destroying a team destroys its shareable contexts (spec). */
        shmem_team_t t = evens();
        shmem_ctx_t x = SHMEM_CTX_INVALID;
        if (t != SHMEM_TEAM_INVALID) {
            shmem_team_create_ctx(t, 0, &x);
        }
        shmem_team_destroy(t);
        if (me == 0) {
            shmem_ctx_long_p(x, &word, 1, 0);
        }
    } else if (!strcmp(c, "team_private_ctx")) {
        shmem_team_t t = evens();
        shmem_ctx_t x;
        if (t != SHMEM_TEAM_INVALID) {
            shmem_team_create_ctx(t, SHMEM_CTX_PRIVATE, &x);
        }
        shmem_team_destroy(t);
    }
    printf("handle_misuse: case %s returned\n", c);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
