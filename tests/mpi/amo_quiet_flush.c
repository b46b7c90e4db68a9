/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * amo_quiet_flush: after shmem_quiet, every one of many non-fetching AMOs (add, inc, xor, or,
 * and, set; 4- and 8-byte) to several PEs is applied in the targets' memory, as each target
 * itself sees it with no library call of its own in between; and AMOs after shmem_fence
 * follow the puts and AMOs before it.
 *
 * Where the provider orders an atomic fetch after atomic updates (shm, tcp;ofi_rxm), the
 * non-fetching AMOs after the first to a target are injected, transmit-complete, and quiet
 * completes them with one fetching read per target (runtime/amo.c). That they were applied
 * cannot be checked through the library (a fetch would travel behind them and find them
 * whatever quiet did), so the check goes around it, as tests/mpi/rma_quiet_flush does: PE 0
 * sends every other PE WORDS words' worth of AMOs (OPS each, of one commutative kind per word,
 * since AMOs to one word are unordered without a fence), on the default context or a private
 * one, calls quiet (or pe_quiet, or fence + quiet), then raises a flag in a memory-mapped
 * file. The targets spin on that flag without calling the library, then read their words from
 * their own memory: each must hold the value the AMOs make. The targets' progress threads are
 * slow (.env: 5 ms, doubling while idle), and a provider applies atomics at a target only when
 * that target's progress runs, so a quiet that returned before its flush completed (the flush
 * left out, posted before held operations, or not waited for) leaves stale words nearly every
 * round. Each round starts with a fence check: put w = a; fence; add w += 1, and set w = b;
 * fence; set w = c: the target must see a + 1 and c. The timing that makes a stale word
 * visible is arranged through the mapped file too: PE 0 starts a round once every target has
 * left the barrier before it (whose polls would apply the AMOs), and sends the bulk only once
 * every target saw the add after the fence applied (else the target's progress pass that
 * completes that add, the first AMO to it and so a fetching one, would apply the bulk too).
 * Every PE runs on one host (every configuration here does); PE 0 removes the file at the end.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../test.h"

#define NAME "amo_quiet_flush"
#define ROUNDS 20
#define WORDS 14 /* two of each kind */
#define OPS 6    /* AMOs per word per round */
#define APPLIED(r) ((uint64_t)(r) | (uint64_t)1 << 32) /* a target's flag: the add landed */

enum kind { ADD64, INC32, XOR64, XOR32, OR64, AND64, SET64, NKINDS };

static const char *const kind_name[] = {"add (uint64)", "inc (uint32)", "xor (uint64)",
                                        "xor (uint32)", "or (uint64)",  "and (uint64)",
                                        "set (uint64)"};

/* Word i of a target: uint64 at w64[i], or uint32 at w32[i] for the 32-bit kinds. */
static enum kind kind_of(int i)
{
    return (enum kind)(i % NKINDS);
}

static uint64_t operand(int r, int pe, int i, int k)
{
    return t_mix(((uint64_t)r << 40) ^ ((uint64_t)pe << 24) ^ ((uint64_t)i << 8) ^ (uint64_t)k);
}

/* The value of word i at target pe at the start of a round (the target stores it itself). */
static uint64_t base(enum kind k)
{
    return k == AND64 ? ~(uint64_t)0 : 0;
}

/* What the AMOs of round r make of word i at target pe. */
static uint64_t expect(int r, int pe, int i)
{
    enum kind kd = kind_of(i);
    uint64_t v = base(kd);
    for (int k = 0; k < OPS; k++) {
        uint64_t x = operand(r, pe, i, k);
        switch (kd) {
        case ADD64: v += x; break;
        case INC32: v = (uint32_t)(v + 1); break;
        case XOR64: v ^= x; break;
        case XOR32: v = (uint32_t)(v ^ x); break;
        case OR64: v |= x & (x >> 7); break;          /* a few bits each, not all at once */
        case AND64: v &= ~(x & (x >> 7)); break;
        default: v = k == 0 ? x : v; break;           /* one set per round */
        }
    }
    return v;
}

static void send(shmem_ctx_t c, uint64_t *w64, uint32_t *w32, int r, int pe, int i)
{
    enum kind kd = kind_of(i);
    for (int k = 0; k < OPS; k++) {
        uint64_t x = operand(r, pe, i, k);
        switch (kd) {
        case ADD64: shmem_ctx_uint64_atomic_add(c, &w64[i], x, pe); break;
        case INC32: shmem_ctx_uint32_atomic_inc(c, &w32[i], pe); break;
        case XOR64: shmem_ctx_uint64_atomic_xor(c, &w64[i], x, pe); break;
        case XOR32: shmem_ctx_uint32_atomic_xor(c, &w32[i], (uint32_t)x, pe); break;
        case OR64: shmem_ctx_uint64_atomic_or(c, &w64[i], x & (x >> 7), pe); break;
        case AND64: shmem_ctx_uint64_atomic_and(c, &w64[i], ~(x & (x >> 7)), pe); break;
        default:
            if (k == 0) {
                shmem_ctx_uint64_atomic_set(c, &w64[i], x, pe);
            }
            break;
        }
    }
}

static uint64_t fence_a(int r)
{
    return t_mix((uint64_t)r * 77 + 1);
}

static uint64_t fence_c(int r)
{
    return t_mix((uint64_t)r * 77 + 2) | 1;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_SERIALIZED, &provided);
    t_start(NAME);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    uint64_t *w64 = shmem_calloc(WORDS + 2, sizeof(uint64_t)); /* + the two fence words */
    uint32_t *w32 = shmem_calloc(WORDS, sizeof(uint32_t));
    long *pid0 = shmem_calloc(1, sizeof(long));
    if (!t_check(w64 && w32 && pid0, "allocation failed") || npes < 2) {
        shmem_finalize();
        return t_finish(NAME);
    }
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        ctx = SHMEM_CTX_DEFAULT;
    }
    if (me == 0) {
        *pid0 = (long)getpid();
        for (int pe = 1; pe < npes; pe++) {
            shmem_long_p(pid0, *pid0, pe);
        }
    }
    shmem_barrier_all();
    char path[96];
    snprintf(path, sizeof(path), "/dev/shm/fabshmem-test-amo-flush-%ld", *pid0);
    int fd = -1;
    if (me == 0) {
        fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
        t_check(fd >= 0 && ftruncate(fd, 4096) == 0, "cannot create %s", path);
    }
    shmem_barrier_all(); /* the file exists */
    if (me != 0) {
        fd = open(path, O_RDWR);
        t_check(fd >= 0, "cannot open %s", path);
    }
    void *m = fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    volatile uint64_t *flag = m == MAP_FAILED ? NULL : m;
    if (fd >= 0) {
        close(fd);
    }
    shmem_barrier_all(); /* every PE has it mapped: the name may go, so no run leaves it */
    if (me == 0) {
        unlink(path);
    }
    static int ok;
    ok = t_check(flag != NULL, "cannot map %s", path);
    shmem_int_min_reduce(SHMEM_TEAM_WORLD, &ok, &ok, 1); /* all go or none */
    int *pes = malloc(sizeof(int) * (size_t)npes);
    for (int pe = 1; pe < npes; pe++) {
        pes[pe - 1] = pe;
    }
    size_t stale = 0, rounds_stale = 0;
    static const char *const how_name[] = {"quiet", "pe_quiet", "fence+quiet",
                                           "private ctx quiet"};
    for (int r = 1; r <= ROUNDS && ok; r++) {
        int how = r % 4;
        if (me != 0) {
            for (int i = 0; i < WORDS; i++) {
                w64[i] = kind_of(i) == INC32 || kind_of(i) == XOR32 ? 0 : base(kind_of(i));
                w32[i] = 0;
            }
            w64[WORDS] = w64[WORDS + 1] = 0;
        }
        shmem_barrier_all(); /* the words are at their base before any AMO */
        if (me != 0) {
            __atomic_store_n(&flag[me], (uint64_t)r, __ATOMIC_RELEASE);
        }
        if (me == 0) {
            /* Every target out of the barrier, where its polls would apply the AMOs. */
            for (int pe = 1; pe < npes; pe++) {
                while (__atomic_load_n(&flag[pe], __ATOMIC_ACQUIRE) != (uint64_t)r) {
                }
            }
            shmem_ctx_t c = how == 3 ? ctx : SHMEM_CTX_DEFAULT;
            /* The fence check first: what follows the fence is what quiet alone completes (a
             * check after the bulk would have the fence complete the bulk). */
            for (int pe = 1; pe < npes; pe++) {
                shmem_ctx_uint64_p(c, &w64[WORDS], fence_a(r), pe);
                shmem_ctx_uint64_atomic_set(c, &w64[WORDS + 1], 1, pe);
            }
            shmem_ctx_fence(c);
            for (int pe = 1; pe < npes; pe++) {
                shmem_ctx_uint64_atomic_add(c, &w64[WORDS], 1, pe);
                shmem_ctx_uint64_atomic_set(c, &w64[WORDS + 1], fence_c(r), pe);
            }
            /* The bulk only once every target applied the add (its progress ran past it): what
             * the add's own completion waits for then says nothing about the bulk. */
            for (int pe = 1; pe < npes; pe++) {
                while (__atomic_load_n(&flag[pe], __ATOMIC_ACQUIRE) != APPLIED(r)) {
                }
            }
            /* interleaved over the targets, so several are dirty at once */
            for (int i = 0; i < WORDS; i++) {
                for (int pe = 1; pe < npes; pe++) {
                    send(c, w64, w32, r, pe, i);
                }
            }
            if (how == 1) {
                shmem_pe_quiet(pes, npes - 1);
            } else if (how == 2) {
                shmem_fence();
                shmem_quiet();
            } else {
                shmem_ctx_quiet(c);
            }
            __atomic_store_n(flag, (uint64_t)r, __ATOMIC_RELEASE);
        } else {
            while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != (uint64_t)r) {
                /* no library call: nothing of ours applies the AMOs */
                if (__atomic_load_n(&w64[WORDS], __ATOMIC_ACQUIRE) == fence_a(r) + 1) {
                    __atomic_store_n(&flag[me], APPLIED(r), __ATOMIC_RELEASE);
                }
            }
            size_t bad = 0;
            for (int i = 0; i < WORDS + 2; i++) {
                uint64_t want = i == WORDS       ? fence_a(r) + 1
                                : i == WORDS + 1 ? fence_c(r)
                                                 : expect(r, me, i);
                int narrow = i < WORDS && (kind_of(i) == INC32 || kind_of(i) == XOR32);
                uint64_t got = narrow ? __atomic_load_n(&w32[i], __ATOMIC_ACQUIRE)
                                      : __atomic_load_n(&w64[i], __ATOMIC_ACQUIRE);
                if (got != want) {
                    bad++;
                    t_check(0, "round %d (%s): word %d (%s) is 0x%llx after quiet, the AMOs make "
                            "0x%llx", r, how_name[how], i,
                            i == WORDS ? "put; fence; add" : i == WORDS + 1 ? "set; fence; set"
                                                                           : kind_name[kind_of(i)],
                            (unsigned long long)got, (unsigned long long)want);
                }
            }
            stale += bad;
            rounds_stale += bad > 0;
        }
    }
    shmem_barrier_all();
    if (me != 0) {
        printf("%s: PE %d: %zu words in %zu of %d rounds were stale after quiet\n", NAME, me,
               stale, rounds_stale, ROUNDS);
    }
    if (flag) {
        munmap((void *)flag, 4096);
    }
    if (ctx != SHMEM_CTX_DEFAULT) {
        shmem_ctx_destroy(ctx);
    }
    free(pes);
    shmem_free(pid0);
    shmem_free(w32);
    shmem_free(w64);
    shmem_finalize();
    return t_finish(NAME);
}
