/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_repeat: OpenSHMEM 1.6 lets a program initialize the library again after shmem_finalize;
 * every round must get a working library anew: heap, static data, AMOs, put-with-signal,
 * teams, contexts (a BATCH session on the default one, left open at the first finalize) and
 * collectives, checked by data in each round, with the round's own pattern so that a value
 * left over from an earlier round is caught. shmem_query_initialized follows the rounds, and
 * what a round holds is given back by its finalize: its heap is unmapped, and the file
 * descriptors, threads and file mappings (memfds, /dev/shm) counted after each later finalize
 * equal those after the first.
 * FSH_INIT_ROUNDS sets the number of rounds (default 3); round 1 asks SHMEM_THREAD_MULTIPLE.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "../test.h"

#define N 256

static uint64_t sdata[N];
static uint64_t sig;
static long counter;
static long team_sum;
static long team_src;

/* Entries of a /proc directory (open descriptors, threads). */
static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    if (!d) {
        return -1;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n - 1; /* the descriptor opendir itself holds, or nothing for task/ */
}

/* Mappings of files (memfds and /dev/shm included), and whether addr lies in any mapping.
 * Anonymous mappings are not counted: malloc makes arenas for threads as it pleases. */
static int count_maps(uintptr_t addr, int *holds)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0;
    char line[512];
    *holds = 0;
    if (!f) {
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo = 0, hi = 0;
        char path[256] = "";
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &lo, &hi, path) < 2) {
            continue;
        }
        n += path[0] == '/' || strncmp(path, "memfd:", 6) == 0;
        *holds |= addr >= lo && addr < hi;
    }
    fclose(f);
    return n;
}

/* A block of the round's heap: after finalize no mapping may hold it. */
static uintptr_t round_heap;

static void one_round(int round)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    uint64_t salt = 0x1000u * (uint64_t)(round + 1);

    /* Heap: a fresh allocation, written by the previous PE. */
    uint64_t *heap = shmem_malloc(N * sizeof(uint64_t));
    uint64_t *src = malloc(N * sizeof(uint64_t));
    t_check(heap != NULL && src != NULL, "round %d: shmem_malloc returned NULL", round);
    if (!heap || !src) {
        return;
    }
    round_heap = (uintptr_t)heap;
    /* A BATCH session on the default context (round 0 leaves it open at finalize). */
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    t_fill(src, N * sizeof(uint64_t), me, salt);
    shmem_putmem(heap, src, N * sizeof(uint64_t), next);
    /* Static data: the same variable in every round, a new pattern. */
    t_fill(src, N * sizeof(uint64_t), me, salt + 1);
    shmem_putmem(sdata, src, N * sizeof(uint64_t), next);
    if (round > 0) {
        shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    }
    shmem_barrier_all();
    t_verify(heap, N * sizeof(uint64_t), prev, salt, "round %d: heap data from PE %d", round,
             prev);
    t_verify(sdata, N * sizeof(uint64_t), prev, salt + 1,
             "round %d: static data from PE %d", round, prev);

    /* AMOs on static data. */
    if (me == 0) {
        counter = 0;
    }
    shmem_barrier_all();
    long old = shmem_long_atomic_fetch_add(&counter, me + 1 + round, 0);
    t_check(old >= 0, "round %d: fetch_add returned %ld", round, old);
    shmem_barrier_all();
    if (me == 0) {
        long want = (long)npes * (npes + 1) / 2 + (long)npes * round;
        t_check(counter == want, "round %d: counter %ld, want %ld", round, counter, want);
    }

    /* Put-with-signal into the heap. */
    sig = 0;
    shmem_barrier_all();
    t_fill(src, 64, me, salt + 2);
    shmem_putmem_signal(heap, src, 64, &sig, (uint64_t)(round + 1), SHMEM_SIGNAL_SET, next);
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, (uint64_t)(round + 1));
    t_verify(heap, 64, prev, salt + 2, "round %d: put-with-signal data from PE %d", round, prev);
    shmem_barrier_all();

    /* A context of its own. */
    shmem_ctx_t ctx;
    int rc = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx);
    t_check(rc == 0, "round %d: shmem_ctx_create: %d", round, rc);
    if (rc == 0) {
        t_fill(src, N * sizeof(uint64_t), me, salt + 3);
        shmem_ctx_putmem(ctx, heap, src, N * sizeof(uint64_t), next);
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    shmem_barrier_all();
    t_verify(heap, N * sizeof(uint64_t), prev, salt + 3, "round %d: context put from PE %d",
             round, prev);

    /* A team of the even PEs: its reduction, then it goes. */
    shmem_team_t even;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even);
    if (even != SHMEM_TEAM_INVALID) {
        team_src = me + round;
        shmem_long_sum_reduce(even, &team_sum, &team_src, 1);
        long want = 0;
        for (int pe = 0; pe < npes; pe += 2) {
            want += pe + round;
        }
        t_check(team_sum == want, "round %d: team sum %ld, want %ld", round, team_sum, want);
        t_check(shmem_team_my_pe(even) == me / 2, "round %d: team rank %d, want %d", round,
                shmem_team_my_pe(even), me / 2);
        shmem_team_destroy(even);
    } else {
        t_check(me % 2 == 1, "round %d: PE %d is not in the even team", round, me);
    }

    /* A broadcast from a root that moves with the round. */
    int root = round % npes;
    t_fill(src, N * sizeof(uint64_t), root, salt + 4);
    shmem_broadcastmem(SHMEM_TEAM_WORLD, heap, src, N * sizeof(uint64_t), root);
    t_verify(heap, N * sizeof(uint64_t), root, salt + 4, "round %d: broadcast from PE %d",
             round, root);

    shmem_barrier_all();
    shmem_free(heap);
    free(src);
}

int main(void)
{
    int rounds = getenv("FSH_INIT_ROUNDS") ? atoi(getenv("FSH_INIT_ROUNDS")) : 3;
    int first_pe = -1, first_npes = -1;
    int fds = -1, threads = -1, maps = -1;
    for (int round = 0; round < rounds; round++) {
        int initialized = -1;
        shmem_query_initialized(&initialized);
        t_check(initialized == 0, "round %d: query_initialized %d before init", round,
                initialized);
        if (round == 1) {
            int provided = -1;
            int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
            t_check(rc == 0 && provided == SHMEM_THREAD_MULTIPLE,
                    "round %d: init_thread rc %d provided %d", round, rc, provided);
        } else {
            shmem_init();
        }
        t_start("init_repeat");
        shmem_query_initialized(&initialized);
        t_check(initialized == 1, "round %d: query_initialized %d after init", round,
                initialized);
        if (round == 0) {
            first_pe = shmem_my_pe();
            first_npes = shmem_n_pes();
        }
        t_check(shmem_my_pe() == first_pe && shmem_n_pes() == first_npes,
                "round %d: PE %d of %d, was %d of %d", round, shmem_my_pe(), shmem_n_pes(),
                first_pe, first_npes);
        one_round(round);
        shmem_finalize();
        shmem_query_initialized(&initialized);
        t_check(initialized == 0, "round %d: query_initialized %d after finalize", round,
                initialized);
        int held;
        int f = count_dir("/proc/self/fd"), t = count_dir("/proc/self/task");
        int m = count_maps(round_heap, &held);
        t_check(!held, "round %d: the heap (block at %#lx) is still mapped after finalize",
                round, (unsigned long)round_heap);
        if (round == 0) {
            fds = f, threads = t, maps = m;
        } else {
            t_check(f == fds, "round %d: %d descriptors open after finalize, %d after the first",
                    round, f, fds);
            t_check(t == threads, "round %d: %d threads after finalize, %d after the first",
                    round, t, threads);
            t_check(m == maps, "round %d: %d file mappings after finalize, %d after the first",
                    round, m, maps);
        }
    }
    return t_finish("init_repeat");
}
