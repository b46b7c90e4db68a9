/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_tickets: atomic_fetch_add / atomic_fetch_inc hand out unique tickets. Every PE takes
 * T tickets from one counter (alternating fetch_add of 1 and fetch_inc), checks that its own
 * tickets grow strictly, and puts them into PE 0's gather array; after a barrier PE 0 checks
 * that the union is exactly 0..T*npes-1, each once. Run for several types and call forms
 * (typed, ctx on SHMEM_CTX_DEFAULT, C11 generic), with the counter on PE 0 and on the last PE.
 */
#include "../test.h"

#define NAME "amo_tickets"
#define T 600

static int me, npes;

/* PE 0 checks the gathered tickets (as unsigned long long) form 0..T*npes-1 exactly. */
static void check_union(const unsigned long long *all, const char *what)
{
    long total = (long)T * npes;
    char *seen = calloc((size_t)total, 1);
    if (!t_check(seen != NULL, "%s: calloc failed", what)) {
        return;
    }
    long bad = 0;
    for (long k = 0; k < total; k++) {
        unsigned long long v = all[k];
        if (v >= (unsigned long long)total || seen[v]) {
            if (bad++ < 5) {
                t_check(0, "%s: PE %ld's ticket #%ld is %llu (%s)", what, k / T, k % T, v,
                        v >= (unsigned long long)total ? "out of range" : "duplicate");
            }
            continue;
        }
        seen[v] = 1;
    }
    long missing = 0;
    for (long v = 0; v < total; v++) {
        missing += !seen[v];
    }
    t_check(missing == 0, "%s: %ld tickets never handed out", what, missing);
    free(seen);
}

/* FA(ctr, pe) takes one ticket with fetch_add of 1, FI(ctr, pe) with fetch_inc. */
#define TICKETS(TY, TN, FA, FI)                                                                   \
    static void tickets_##TN(int owner)                                                           \
    {                                                                                             \
        TY *ctr = shmem_calloc(1, sizeof(TY));                                                    \
        unsigned long long *all = shmem_calloc((size_t)npes * T, sizeof(unsigned long long));     \
        unsigned long long *mine = malloc(T * sizeof(unsigned long long));                        \
        if (!t_check(ctr && all && mine, #TN ": allocation failed")) {                            \
            return;                                                                               \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        for (int i = 0; i < T; i++) {                                                             \
            TY t = (i % 2) ? FI(ctr, owner) : FA(ctr, owner);                                     \
            mine[i] = (unsigned long long)t;                                                      \
            t_check(i == 0 || mine[i] > mine[i - 1],                                              \
                    #TN " (counter on PE %d): ticket #%d is %llu after %llu", owner, i, mine[i],  \
                    mine[i > 0 ? i - 1 : 0]);                                                     \
        }                                                                                         \
        shmem_putmem(all + (size_t)me * T, mine, T * sizeof(unsigned long long), 0);              \
        shmem_barrier_all();                                                                      \
        if (me == 0) {                                                                            \
            char what[64];                                                                        \
            snprintf(what, sizeof(what), #TN " (counter on PE %d)", owner);                       \
            check_union(all, what);                                                               \
        }                                                                                         \
        if (me == owner) {                                                                        \
            t_check(*ctr == (TY)((long)T * npes), #TN ": counter ends at %llu, want %ld",         \
                    (unsigned long long)*ctr, (long)T * npes);                                    \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        free(mine);                                                                               \
        shmem_free(all);                                                                          \
        shmem_free(ctr);                                                                          \
    }

#define LONG_FA(c, pe) shmem_long_atomic_fetch_add(c, 1, pe)
#define LONG_FI(c, pe) shmem_long_atomic_fetch_inc(c, pe)
#define INT_FA(c, pe) shmem_ctx_int_atomic_fetch_add(SHMEM_CTX_DEFAULT, c, 1, pe)
#define INT_FI(c, pe) shmem_ctx_int_atomic_fetch_inc(SHMEM_CTX_DEFAULT, c, pe)
#define U64_FA(c, pe) shmem_uint64_atomic_fetch_add(c, 1, pe)
#define U64_FI(c, pe) shmem_uint64_atomic_fetch_inc(c, pe)
#define SIZE_FA(c, pe) shmem_atomic_fetch_add(c, (size_t)1, pe)
#define SIZE_FI(c, pe) shmem_atomic_fetch_inc(c, pe)
#define U32_FA(c, pe) shmem_atomic_fetch_add(SHMEM_CTX_DEFAULT, c, (unsigned int)1, pe)
#define U32_FI(c, pe) shmem_atomic_fetch_inc(SHMEM_CTX_DEFAULT, c, pe)

TICKETS(long, long, LONG_FA, LONG_FI)
TICKETS(int, int_ctx, INT_FA, INT_FI)
TICKETS(uint64_t, uint64, U64_FA, U64_FI)
TICKETS(size_t, size_generic, SIZE_FA, SIZE_FI)
TICKETS(unsigned int, uint_generic_ctx, U32_FA, U32_FI)

int main(void)
{
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();

    for (int owner = 0; owner < npes; owner += (npes > 1 ? npes - 1 : 1)) {
        tickets_long(owner);
        tickets_int_ctx(owner);
        tickets_uint64(owner);
        tickets_size_generic(owner);
        tickets_uint_generic_ctx(owner);
    }

    shmem_finalize();
    return t_finish(NAME);
}
