/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rma_put_batch: small puts to fabric peers are batched on every context (FABSHMEM_PUT_BATCH,
 * runtime/rma_session.c) without changing what a program sees, and they do go as fewer writes.
 * Each PE puts to its right neighbour, which checks every byte.
 *
 * 1. Scattered 8-byte puts (every other element, shmem_p), consecutive ones (put_nbi), blocking
 *    puts of 1..24 bytes, puts on a private context; quiet, barrier: all there.
 * 2. Fence: rounds of scattered puts, shmem_fence, a flag put; the neighbour waits for each
 *    flag and finds that round's data. The same with put-with-signal after the fence.
 * 3. Where the provider orders one endpoint's writes (no chaos, not the efa-direct profile),
 *    unfenced overlapping puts keep that order: 100 puts to one word leave the last value; a
 *    small put, a large overlapping one (never batched) and a small one after it land in that
 *    order.
 * 4. A held put is not held while its PE waits: a token goes round the ring with no quiet.
 * 5. The count: with FABSHMEM_LOG=info (the .env) finalize logs "put batches: N puts went as M
 *    writes, K in a write with a put they overlap" on stderr, which this program reads back
 *    from a file it points stderr to: where a neighbour is reached through the fabric, at
 *    least this PE's small puts were batched and M < N; on shm and tcp (not the efa-direct
 *    profile: one segment a write), at least half the puts to one word shared a write with an
 *    earlier one. Without batching there is no such line, and the test fails; with batches
 *    that post at every overlap K is 0.
 */
#include <fcntl.h>
#include <unistd.h>

#include "../test.h"

#define NAME "rma_put_batch"
#define NSC 256     /* scattered puts (every other long) */
#define NCONS 256   /* consecutive puts */
#define NBLK 64     /* blocking puts of 1..24 bytes, 32 bytes apart */
#define ROUNDS 20   /* fenced rounds */
#define RPUT 16     /* puts a round */
#define NSAME 100   /* puts to one word */
#define BIG 16384   /* never batched (above half of any inject size) */

static int me, npes, left, right;
static long *scat, *cons, *priv, *fenced, *same, *flag, *token, *sigdata;
static uint64_t *sig;
static uint8_t *blk, *big, *bigsrc;

static long val(int pe, long salt, long i)
{
    return (long)t_mix((uint64_t)pe * 1000003u + (uint64_t)salt * 7919u + (uint64_t)i);
}

static size_t blen(int i)
{
    return 1 + (size_t)i % 24;
}

static void basic(void)
{
    for (int i = 0; i < NSC; i++) {
        shmem_long_p(&scat[2 * i], val(me, 1, i), right);
    }
    for (int i = 0; i < NCONS; i++) {
        long v = val(me, 2, i);
        shmem_long_put_nbi(&cons[i], &v, 1, right);
    }
    uint8_t s[24];
    for (int i = 0; i < NBLK; i++) {
        for (size_t k = 0; k < blen(i); k++) {
            s[k] = t_byte(me, 3 + (uint64_t)i, k);
        }
        shmem_putmem(blk + 32 * i, s, blen(i), right); /* s is reused at once */
    }
    shmem_ctx_t ctx;
    int have_ctx = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0;
    for (int i = 0; i < NSC; i++) {
        long v = val(me, 4, i);
        if (have_ctx) {
            shmem_ctx_long_put(ctx, &priv[3 * i], &v, 1, right);
        } else {
            shmem_long_put(&priv[3 * i], &v, 1, right);
        }
    }
    if (have_ctx) {
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    shmem_quiet();
    shmem_barrier_all();
    long bad = 0;
    for (int i = 0; i < NSC; i++) {
        bad += scat[2 * i] != val(left, 1, i) || scat[2 * i + 1] != 0;
        bad += priv[3 * i] != val(left, 4, i);
    }
    for (int i = 0; i < NCONS; i++) {
        bad += cons[i] != val(left, 2, i);
    }
    for (int i = 0; i < NBLK; i++) {
        for (size_t k = 0; k < blen(i); k++) {
            bad += blk[32 * i + k] != t_byte(left, 3 + (uint64_t)i, k);
        }
    }
    t_check(bad == 0, "scattered, consecutive, blocking and private-context puts: %ld wrong", bad);
}

static void fence_rounds(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < RPUT; i++) {
            shmem_long_p(&fenced[(r * RPUT + i) * 2], val(me, 10 + r, i), right);
        }
        shmem_fence();
        shmem_long_p(flag, r + 1, right);
    }
    long bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        shmem_long_wait_until(flag, SHMEM_CMP_GE, r + 1);
        for (int i = 0; i < RPUT; i++) {
            bad += fenced[(r * RPUT + i) * 2] != val(left, 10 + r, i);
        }
    }
    t_check(bad == 0, "puts before a fence, seen once the flag after it came: %ld wrong", bad);
#if defined(SHMEM_MAJOR_VERSION) && (SHMEM_MAJOR_VERSION > 1 || SHMEM_MINOR_VERSION >= 5)
    for (int i = 0; i < RPUT; i++) {
        shmem_long_p(&sigdata[2 * i], val(me, 40, i), right);
    }
    shmem_fence();
    long last = val(me, 41, 0);
    shmem_putmem_signal(&sigdata[2 * RPUT], &last, sizeof(long), sig, 1, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    bad = sigdata[2 * RPUT] != val(left, 41, 0);
    for (int i = 0; i < RPUT; i++) {
        bad += sigdata[2 * i] != val(left, 40, i);
    }
    t_check(bad == 0, "puts before a fence and a put-with-signal: %ld wrong", bad);
#endif
    shmem_barrier_all();
}

static void ordered(void)
{
    const char *chaos = getenv("FABSHMEM_CHAOS");
    const char *prof = getenv("FABSHMEM_PROVIDER_PROFILE");
    int in_order = !(chaos && *chaos) && !(prof && *prof);
    for (long i = 0; i < NSAME; i++) {
        shmem_long_p(&same[0], val(me, 50, i), right);
    }
    /* a small put, a large one over it, a small one inside the large one's range */
    long a = val(me, 51, 0), b = val(me, 52, 0);
    t_fill(bigsrc, BIG, me, 53);
    shmem_long_p((long *)big, a, right);
    shmem_putmem(big, bigsrc, BIG, right);
    shmem_long_put((long *)(big + 64), &b, 1, right);
    shmem_quiet();
    shmem_barrier_all();
    if (in_order) {
        t_check(same[0] == val(left, 50, NSAME - 1), "100 puts to one word: the last one's value "
                "%ld expected, %ld found", val(left, 50, NSAME - 1), same[0]);
        long got_b;
        memcpy(&got_b, big + 64, sizeof(long));
        t_check(got_b == val(left, 52, 0), "a small put after a large one over it lost");
        t_fill(bigsrc, BIG, left, 53);
        memcpy(bigsrc + 64, &got_b, sizeof(long));
        t_check(memcmp(big, bigsrc, BIG) == 0, "a small put, then a large one over it: the large "
                "one's data expected");
    }
    shmem_barrier_all();
}

static void ring(void)
{
    /* PE 0 starts; each passes the token on once it has it, with no quiet in between. */
    if (me == 0) {
        shmem_long_p(token, 1, right);
    }
    shmem_long_wait_until(token, SHMEM_CMP_EQ, 1);
    if (me != 0) {
        shmem_long_p(token, 1, right);
    }
    shmem_barrier_all();
    t_check(*token == 1, "the token did not come round");
}

/* The finalize line, from the file stderr went to. */
static void count_check(const char *path, int fabric, int shared_ok)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    unsigned long long puts = 0, writes = 0, over = 0;
    int found = 0;
    while (f && fgets(line, sizeof(line), f)) {
        const char *p = strstr(line, "put batches: ");
        if (p && sscanf(p, "put batches: %llu puts went as %llu writes, %llu", &puts, &writes,
                        &over) >= 2) {
            found = 1;
        }
        if (!p && strstr(line, " ERROR ")) {
            fputs(line, stdout);
        }
    }
    if (f) {
        fclose(f);
    }
    unlink(path);
    if (!fabric) {
        return; /* the neighbour is mapped: no put reaches the fabric */
    }
    long mine = NSC * 2 + NCONS + NBLK + ROUNDS * (RPUT + 1) + RPUT + NSAME + 3;
    t_check(found, "no \"put batches\" line at finalize (FABSHMEM_LOG=info): small puts were not "
            "batched");
    t_check(!found || puts >= (unsigned long long)mine, "%llu puts batched, fewer than this PE's "
            "%ld small puts", puts, mine);
    t_check(!found || writes < puts, "%llu puts went as %llu writes: no fewer", puts, writes);
    /* shm and tcp;ofi_rxm apply a write's segments in order: the 100 puts to one word (and
     * the small put under the large one's) share writes, up to 4 to a write */
    if (shared_ok) {
        t_check(!found || over >= NSAME / 2, "only %llu puts shared a write with a held put they "
                "overlap (%d puts to one word were issued)", over, NSAME);
    }
    if (found && me == 0) {
        printf("  %s: PE 0: %llu small puts went as %llu writes, %llu of them in a write with a "
               "put they overlap\n", NAME, puts, writes, over);
    }
}

int main(void)
{
    char path[] = "/tmp/rma_put_batch.XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    if (fd >= 0) {
        dup2(fd, 2);
        close(fd);
    }
    shmem_init();
    t_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    left = (me + npes - 1) % npes;
    right = (me + 1) % npes;
    scat = shmem_calloc(2 * NSC, sizeof(long));
    cons = shmem_calloc(NCONS, sizeof(long));
    priv = shmem_calloc(3 * NSC, sizeof(long));
    fenced = shmem_calloc(2 * ROUNDS * RPUT, sizeof(long));
    sigdata = shmem_calloc(2 * RPUT + 1, sizeof(long));
    same = shmem_calloc(1, sizeof(long));
    flag = shmem_calloc(1, sizeof(long));
    token = shmem_calloc(1, sizeof(long));
    sig = shmem_calloc(1, sizeof(uint64_t));
    blk = shmem_calloc(NBLK, 32);
    big = shmem_calloc(1, BIG);
    bigsrc = malloc(BIG);
    if (!scat || !cons || !priv || !fenced || !sigdata || !same || !flag || !token || !sig ||
        !blk || !big || !bigsrc) {
        t_check(0, "allocation");
        return t_finish(NAME);
    }
    int fabric = npes > 1 && shmem_ptr(scat, right) == NULL;
    basic();
    fence_rounds();
    ordered();
    ring();
    shmem_barrier_all();
    shmem_finalize();
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    /* one write takes 4 segments on shm and tcp, 1 under the efa-direct profile */
    const char *prof = getenv("FABSHMEM_PROVIDER_PROFILE");
    count_check(path, fabric, !(prof && *prof));
    return t_finish(NAME);
}
