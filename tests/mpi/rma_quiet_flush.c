/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_quiet_flush: after shmem_quiet, every one of a stream of small (injected) puts is in the
 * target's memory, as the target itself sees it, with no library call of its own in between.
 *
 * Where the provider orders writes (shm, tcp;ofi_rxm), injected puts after the first to a
 * target are posted transmit-complete and quiet completes them with one ordered flush per
 * target (runtime/rma_post.c). Their landing cannot be checked with a get: the get travels
 * behind the puts and would find them whatever quiet did. So the check goes around the
 * library: PE 0 puts WORDS words into PE 1's heap (one put each, new values every round, on
 * the default context or a private one, or the same words as one batch of a session), calls
 * quiet (or pe_quiet, or fence + quiet), then raises a flag in a memory-mapped file. PE 1
 * spins on that flag without calling the library and then reads the words from its own
 * memory: each must hold its new value. The progress thread is slow here (.env: 5 ms,
 * doubling while idle), so a quiet that returned before the flush completed (a flush left
 * out, posted before the puts, or not waited for) leaves PE 1 reading old words nearly every
 * round: the target applies the writes only when its progress thread next runs.
 * PE 1 finds PE 0's file by PE 0's pid, sent through the heap before the rounds; PE 0 removes
 * the file at the end. Both PEs run on one host (every configuration here does).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../test.h"

#define NAME "rma_quiet_flush"
#define ROUNDS 24
#define WORDS 16

static uint64_t value(int r, int i)
{
    return t_mix(((uint64_t)r << 32) | (uint64_t)i) | 1;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_SERIALIZED, &provided);
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    uint64_t *word = shmem_calloc(WORDS, sizeof(uint64_t));
    long *pid0 = shmem_calloc(1, sizeof(long));
    if (!t_check(word && pid0, "allocation failed") || npes < 2) {
        shmem_finalize();
        return t_finish(NAME);
    }
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        ctx = SHMEM_CTX_DEFAULT;
    }
    if (me == 0) {
        *pid0 = (long)getpid();
        shmem_long_p(pid0, *pid0, 1);
    }
    shmem_barrier_all();
    char path[96];
    snprintf(path, sizeof(path), "/dev/shm/fabshmem-test-quiet-flush-%ld", *pid0);
    volatile uint64_t *flag = NULL;
    if (me <= 1) {
        int fd = -1;
        if (me == 0) {
            fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
            t_check(fd >= 0 && ftruncate(fd, 4096) == 0, "cannot create %s", path);
        }
        shmem_barrier_all(); /* the file exists */
        if (me == 1) {
            fd = open(path, O_RDWR);
            t_check(fd >= 0, "cannot open %s", path);
        }
        void *m = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                          : MAP_FAILED;
        flag = m == MAP_FAILED ? NULL : m;
        if (fd >= 0) {
            close(fd);
        }
    } else {
        shmem_barrier_all();
    }
    shmem_barrier_all(); /* PE 1 has it mapped: the name may go, so no run leaves it behind */
    if (me == 0) {
        unlink(path);
    }
    static int ok;
    ok = t_check(me > 1 || flag != NULL, "cannot map %s", path);
    shmem_int_min_reduce(SHMEM_TEAM_WORLD, &ok, &ok, 1); /* all go or none */
    size_t stale = 0, rounds_stale = 0;
    for (int r = 1; r <= ROUNDS && ok; r++) {
        shmem_barrier_all();
        int how = r % 5; /* quiet, pe_quiet, fence + quiet, private context, session batch */
        if (me == 0) {
            shmem_ctx_t c = how == 3 ? ctx : SHMEM_CTX_DEFAULT;
            if (how == 4) {
                shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, NULL, 0);
            }
            for (int i = 0; i < WORDS; i++) {
                shmem_ctx_uint64_p(c, &word[i], value(r, i), 1);
            }
            if (how == 1) {
                int pes[1] = {1};
                shmem_pe_quiet(pes, 1);
            } else if (how == 2) {
                shmem_fence();
                shmem_quiet();
            } else {
                shmem_ctx_quiet(c);
            }
            if (how == 4) {
                shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
            }
            __atomic_store_n(flag, (uint64_t)r, __ATOMIC_RELEASE);
        } else if (me == 1) {
            while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != (uint64_t)r) {
                /* no library call: nothing of ours moves the puts */
            }
            size_t bad = 0;
            for (int i = 0; i < WORDS; i++) {
                uint64_t got = __atomic_load_n(&word[i], __ATOMIC_ACQUIRE);
                if (got != value(r, i)) {
                    bad++;
                    t_check(0, "round %d (%s): word %d is 0x%llx after quiet, the put wrote 0x%llx",
                            r, how == 0 ? "quiet" : how == 1 ? "pe_quiet" : how == 2 ? "fence+quiet"
                               : how == 3 ? "private ctx quiet" : "session batch + quiet",
                            i, (unsigned long long)got, (unsigned long long)value(r, i));
                }
            }
            stale += bad;
            rounds_stale += bad > 0;
        }
    }
    shmem_barrier_all();
    if (me == 1) {
        printf("%s: %zu words in %zu of %d rounds were stale after quiet\n", NAME, stale,
               rounds_stale, ROUNDS);
    }
    if (flag) {
        munmap((void *)flag, 4096);
    }
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_ctx_destroy(ctx);
    }
    shmem_free(pid0);
    shmem_free(word);
    shmem_finalize();
    return t_finish(NAME);
}
