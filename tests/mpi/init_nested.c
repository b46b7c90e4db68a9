/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_nested: OpenSHMEM 1.6 lets shmem_init and shmem_init_thread be called again while the
 * library is initialized; each call needs its own shmem_finalize and only the last one
 * finalizes. The sequence init, init_thread(MULTIPLE), init, then three finalizes: between
 * each step data moves around the ring (static data and a heap block allocated at the first
 * level, which must survive the nested finalizes), shmem_query_initialized stays 1 until the
 * last finalize and is 0 after it, and the nested init_thread reports the level of the first
 * initialization (SINGLE) in provided and in shmem_query_thread. Then the library is
 * initialized again after the last finalize and moves data once more.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../test.h"

#define N 512

static uint64_t sdata[N];
static uint64_t src[N];

/* One step of the sequence: puts into the static array and the heap block from the previous
 * PE of the ring, with the step's own pattern, checked after a barrier. */
static void move_data(uint64_t *heap, int step)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    uint64_t salt = 0x100u * (uint64_t)(step + 1);
    t_fill(src, sizeof(src), me, salt);
    shmem_putmem(sdata, src, sizeof(src), next);
    t_fill(src, sizeof(src), me, salt + 1);
    shmem_putmem(heap, src, sizeof(src), next);
    shmem_barrier_all();
    t_verify(sdata, sizeof(sdata), prev, salt, "step %d: static data from PE %d", step, prev);
    t_verify(heap, sizeof(src), prev, salt + 1, "step %d: heap data from PE %d", step, prev);
    shmem_barrier_all();
}

/* query_initialized must say want; when the library is gone although it must not be, no
 * further call may be made (it would end the job), so the test ends here with its verdict. */
static void expect_initialized(int want, const char *when)
{
    int initialized = -1;
    shmem_query_initialized(&initialized);
    t_check(initialized == want, "query_initialized %d %s, want %d", initialized, when, want);
    if (initialized != want && want == 1) {
        exit(t_finish("init_nested"));
    }
}

int main(void)
{
    expect_initialized(0, "before the first init");
    shmem_init();
    t_start("init_nested");
    expect_initialized(1, "after the first init");
    int level = -1;
    shmem_query_thread(&level);
    t_check(level == SHMEM_THREAD_SINGLE, "thread level %d after shmem_init", level);
    uint64_t *heap = shmem_malloc(sizeof(src));
    t_check(heap != NULL, "shmem_malloc returned NULL");
    if (!heap) {
        return t_finish("init_nested");
    }
    move_data(heap, 0);

    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    t_check(rc == 0, "nested shmem_init_thread returned %d", rc);
    t_check(provided == SHMEM_THREAD_SINGLE,
            "nested shmem_init_thread(MULTIPLE) provided %d, want the first init's %d (SINGLE)",
            provided, SHMEM_THREAD_SINGLE);
    shmem_query_thread(&level);
    t_check(level == SHMEM_THREAD_SINGLE, "thread level %d after the nested init_thread", level);
    expect_initialized(1, "after the nested init_thread");
    move_data(heap, 1);

    shmem_init();
    expect_initialized(1, "after the third init");
    t_check(shmem_my_pe() == t_state.pe && shmem_n_pes() == t_state.npes,
            "PE %d of %d after the third init, was %d of %d", shmem_my_pe(), shmem_n_pes(),
            t_state.pe, t_state.npes);
    move_data(heap, 2);

    shmem_finalize();
    expect_initialized(1, "after the first of three finalizes");
    move_data(heap, 3);
    shmem_finalize();
    expect_initialized(1, "after the second of three finalizes");
    move_data(heap, 4);
    shmem_free(heap);
    shmem_finalize();
    expect_initialized(0, "after the last finalize");

    /* Initialized again: a fresh library, counted from one. */
    shmem_init();
    expect_initialized(1, "after init following the last finalize");
    heap = shmem_malloc(sizeof(src));
    t_check(heap != NULL, "shmem_malloc after re-init returned NULL");
    if (heap) {
        move_data(heap, 5);
        shmem_free(heap);
    }
    shmem_finalize();
    expect_initialized(0, "after the re-initialized library's finalize");
    return t_finish("init_nested");
}
