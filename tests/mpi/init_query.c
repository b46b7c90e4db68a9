/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * init_query: shmem_init_thread and the query routines report a consistent job.
 *
 * Checks: init_thread returns 0 with a usable thread level (at least FUNNELED, which any
 * implementation can give) that shmem_query_thread repeats; my_pe/n_pes are in range and the
 * PE numbers form a permutation of 0..n-1 (each PE writes its number into PE 0's table, PE 0
 * checks every slot); version is 1.6; the name is non-empty and fits SHMEM_MAX_NAME_LEN;
 * pe_accessible is 1 for every PE and 0 outside the range; addr_accessible is 1 for heap and
 * global symmetric data and 0 for the stack; shmem_ptr of one's own heap is the address itself;
 * shmem_query_initialized (OpenSHMEM 1.6) says 0 before shmem_init, 1 after it and 0 after
 * shmem_finalize.
 */
#include "../test.h"

#define NAME "init_query"
#define MAX_PES 4096

static int pe_table[MAX_PES];   /* symmetric (.bss): PE p writes p + 1000 into slot p on PE 0 */
static long global_var = 42;    /* symmetric (.data) */

int main(void)
{
    /* OpenSHMEM 1.6 shmem_query_initialized: 0 before init (callable then), 1 after. */
    int before = -1, after = -1, finalized = -1;
    shmem_query_initialized(&before);
    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_FUNNELED, &provided);
    t_start(NAME);
    shmem_query_initialized(&after);
    t_check(before == 0, "shmem_query_initialized before shmem_init says %d, want 0", before);
    t_check(after == 1, "shmem_query_initialized after shmem_init says %d, want 1", after);
    t_check(rc == 0, "shmem_init_thread returned %d, want 0", rc);
    t_check(provided >= SHMEM_THREAD_FUNNELED && provided <= SHMEM_THREAD_MULTIPLE,
            "provided thread level %d, want FUNNELED (%d)..MULTIPLE (%d)", provided,
            SHMEM_THREAD_FUNNELED, SHMEM_THREAD_MULTIPLE);
    int queried = -1;
    shmem_query_thread(&queried);
    t_check(queried == provided, "shmem_query_thread says %d, init_thread said %d", queried,
            provided);

    int me = shmem_my_pe(), npes = shmem_n_pes();
    t_check(npes >= 1 && npes <= MAX_PES, "shmem_n_pes() = %d", npes);
    t_check(me >= 0 && me < npes, "shmem_my_pe() = %d not in [0,%d)", me, npes);
    if (npes < 1 || npes > MAX_PES || me < 0 || me >= npes) {
        shmem_finalize();
        return t_finish(NAME);
    }

    /* Distinct PE numbers: PE 0 receives every PE's number in that PE's slot. */
    int mine = me + 1000;
    shmem_putmem(&pe_table[me], &mine, sizeof(mine), 0);
    shmem_barrier_all();
    if (me == 0) {
        for (int p = 0; p < npes; p++) {
            t_check(pe_table[p] == p + 1000, "pe_table[%d] = %d, want %d (PE numbers not a "
                    "permutation?)", p, pe_table[p], p + 1000);
        }
    }

    int major = -1, minor = -1;
    shmem_info_get_version(&major, &minor);
    t_check(major == 1 && minor == 6, "version %d.%d, want 1.6", major, minor);
    t_check(SHMEM_MAJOR_VERSION == 1 && SHMEM_MINOR_VERSION == 6, "header version %d.%d",
            SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);

    char name[SHMEM_MAX_NAME_LEN + 16];
    memset(name, 'X', sizeof(name));
    shmem_info_get_name(name);
    size_t len = strnlen(name, sizeof(name));
    t_check(len > 0, "shmem_info_get_name returned an empty string");
    t_check(len < SHMEM_MAX_NAME_LEN, "name not terminated within SHMEM_MAX_NAME_LEN (%zu)", len);
    for (size_t i = SHMEM_MAX_NAME_LEN; i < sizeof(name); i++) {
        if (!t_check(name[i] == 'X', "shmem_info_get_name wrote past SHMEM_MAX_NAME_LEN")) {
            break;
        }
    }

    for (int p = 0; p < npes; p++) {
        t_check(shmem_pe_accessible(p) == 1, "shmem_pe_accessible(%d) = 0", p);
    }
    t_check(shmem_pe_accessible(-1) == 0, "shmem_pe_accessible(-1) != 0");
    t_check(shmem_pe_accessible(npes) == 0, "shmem_pe_accessible(npes=%d) != 0", npes);

    long *heap = shmem_malloc(64 * sizeof(long));
    t_check(heap != NULL, "shmem_malloc(512) returned NULL");
    long stack_var = 7;
    for (int p = 0; p < npes; p++) {
        if (heap != NULL) {
            t_check(shmem_addr_accessible(heap, p) == 1, "addr_accessible(heap, %d) = 0", p);
            t_check(shmem_addr_accessible(heap + 63, p) == 1, "addr_accessible(heap+63, %d) = 0",
                    p);
        }
        t_check(shmem_addr_accessible(&global_var, p) == 1, "addr_accessible(&global, %d) = 0",
                p);
        t_check(shmem_addr_accessible(&pe_table[MAX_PES - 1], p) == 1,
                "addr_accessible(&bss_array[last], %d) = 0", p);
        t_check(shmem_addr_accessible(&stack_var, p) == 0, "addr_accessible(&stack, %d) = 1",
                p);
    }
    if (heap != NULL) {
        void *self = shmem_ptr(heap, me);
        t_check(self == (void *)heap, "shmem_ptr(heap, me) = %p, want %p", self, (void *)heap);
        /* Through the pointer: the same memory. */
        if (self != NULL) {
            heap[5] = 12345;
            t_check(((long *)self)[5] == 12345, "shmem_ptr(heap, me) does not alias heap");
        }
    }
    t_check(global_var == 42, "global_var changed to %ld", global_var);

    shmem_barrier_all();
    shmem_free(heap);
    shmem_finalize();
    shmem_query_initialized(&finalized); /* 0 after finalize (and callable then) */
    t_check(finalized == 0, "shmem_query_initialized after shmem_finalize says %d, want 0",
            finalized);
    return t_finish(NAME);
}
