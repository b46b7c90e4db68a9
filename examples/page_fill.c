/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * page_fill: one PE asks another to fill N random pages of its buffer, and checks every byte.
 *
 *   mpirun -n 2 ./examples/page_fill [-n PAGES] [-s SEED]
 *
 * PE 0 (the requester) owns a symmetric buffer of BUF_PAGES pages, all zero. It picks N distinct
 * pages at random and sends PE 1 (the filler) a request {seed, N, page list} with one
 * put-with-signal. The filler draws N pages' worth of 64-bit words from MT19937-64 seeded with
 * `seed` and writes each page straight into the requester's buffer with an RDMA write that
 * carries a signal (SHMEM_SIGNAL_ADD 1 on the requester's counter). When the counter reaches N
 * every page has landed (a signal is never visible before its data), and the requester
 * regenerates the same stream and compares every byte of the buffer: the requested pages must
 * hold the generator's words, all others must still be zero. Needs OpenSHMEM 1.5 (signals).
 *
 * MT19937-64 (Matsumoto and Nishimura; 64-bit form by Nishimura, ACM TOMACS 2000) is written
 * out below: a 312-word state, the twist with matrix 0xB5026F5AA96619E9, and the tempering
 * shifts (29, 17, 37, 43). It is the generator behind C++'s std::mt19937_64, whose standard
 * fixes the 10000th output of the default seed (5489): the program checks it first.
 * Exit status 0 when everything matches, 1 otherwise.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096
#define BUF_PAGES 1024 /* 4 MiB */
#define MAX_REQ 1024

/* ---- MT19937-64 ---- */
#define MT_N 312
#define MT_M 156
#define MT_MATRIX UINT64_C(0xB5026F5AA96619E9)
#define MT_UPPER UINT64_C(0xFFFFFFFF80000000) /* the top 33 bits */
#define MT_LOWER UINT64_C(0x000000007FFFFFFF) /* the low 31 bits */

struct mt64 {
    uint64_t s[MT_N];
    int next; /* index of the next word to temper; MT_N means "twist first" */
};

static void mt64_seed(struct mt64 *g, uint64_t seed)
{
    g->s[0] = seed;
    for (int i = 1; i < MT_N; i++) {
        uint64_t prev = g->s[i - 1];
        g->s[i] = UINT64_C(6364136223846793005) * (prev ^ (prev >> 62)) + (uint64_t)i;
    }
    g->next = MT_N;
}

/* Regenerates all MT_N words of the state. */
static void mt64_twist(struct mt64 *g)
{
    for (int i = 0; i < MT_N; i++) {
        uint64_t y = (g->s[i] & MT_UPPER) | (g->s[(i + 1) % MT_N] & MT_LOWER);
        uint64_t v = g->s[(i + MT_M) % MT_N] ^ (y >> 1);
        if (y & 1) {
            v ^= MT_MATRIX;
        }
        g->s[i] = v;
    }
    g->next = 0;
}

static uint64_t mt64_next(struct mt64 *g)
{
    if (g->next >= MT_N) {
        mt64_twist(g);
    }
    uint64_t x = g->s[g->next++];
    x ^= (x >> 29) & UINT64_C(0x5555555555555555);
    x ^= (x << 17) & UINT64_C(0x71D67FFFEB9A0000);
    x ^= (x << 37) & UINT64_C(0xFFF7EEE000000000);
    x ^= x >> 43;
    return x;
}

/* One page of the stream: PAGE/8 consecutive words. */
static void mt64_page(struct mt64 *g, unsigned char *page)
{
    for (size_t i = 0; i < PAGE; i += 8) {
        uint64_t w = mt64_next(g);
        memcpy(page + i, &w, 8);
    }
}

/* ---- the request and the two roles ---- */
struct request {
    uint64_t seed, npages;
    uint32_t pages[MAX_REQ];
};

static struct request req;  /* on the filler */
static uint64_t req_signal; /* on the filler: 1 when a request arrived */
static uint64_t filled;     /* on the requester: pages landed */

static void fill(unsigned char *buf, int requester)
{
    shmem_signal_wait_until(&req_signal, SHMEM_CMP_EQ, 1);
    struct mt64 g;
    mt64_seed(&g, req.seed);
    unsigned char page[PAGE];
    for (uint64_t k = 0; k < req.npages; k++) {
        mt64_page(&g, page);
        /* the page's RDMA write and its notification, in one call */
        shmem_putmem_signal(buf + (size_t)req.pages[k] * PAGE, page, PAGE, &filled, 1,
                            SHMEM_SIGNAL_ADD, requester);
    }
}

/* Bytes of the requester's buffer that are not what the request implies. */
static long verify(const unsigned char *buf, const struct request *r)
{
    static unsigned char expect[BUF_PAGES][PAGE]; /* zero except the requested pages */
    struct mt64 g;
    mt64_seed(&g, r->seed);
    for (uint64_t k = 0; k < r->npages; k++) {
        mt64_page(&g, expect[r->pages[k]]);
    }
    long wrong = 0;
    for (size_t i = 0; i < (size_t)BUF_PAGES * PAGE; i++) {
        wrong += buf[i] != ((unsigned char *)expect)[i];
    }
    return wrong;
}

int main(int argc, char **argv)
{
    uint64_t seed = 20260101;
    int npages = 64, opt;
    while ((opt = getopt(argc, argv, "n:s:")) != -1) {
        switch (opt) {
        case 'n': npages = atoi(optarg); break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        default: fprintf(stderr, "usage: %s [-n PAGES] [-s SEED]\n", argv[0]); return 2;
        }
    }
    if (npages < 1 || npages > MAX_REQ || npages > BUF_PAGES) {
        fprintf(stderr, "page_fill: -n must be 1..%d\n", BUF_PAGES < MAX_REQ ? BUF_PAGES : MAX_REQ);
        return 2;
    }

    /* The generator first: std::mt19937_64's 10000th output for the default seed 5489. */
    struct mt64 g;
    mt64_seed(&g, 5489);
    uint64_t x = 0;
    for (int i = 0; i < 10000; i++) {
        x = mt64_next(&g);
    }
    if (x != UINT64_C(9981545732273789042)) {
        fprintf(stderr, "page_fill: MT19937-64 self-check failed (%llu)\n", (unsigned long long)x);
        return 1;
    }

    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int requester = 0, filler = npes > 1 ? 1 : 0;
    unsigned char *buf = shmem_malloc((size_t)BUF_PAGES * PAGE);
    if (!buf) {
        fprintf(stderr, "page_fill: shmem_malloc of %d pages failed\n", BUF_PAGES);
        shmem_global_exit(1);
    }
    memset(buf, 0, (size_t)BUF_PAGES * PAGE);
    shmem_barrier_all();

    static struct request mine;
    if (me == requester) {
        /* N distinct pages, from a generator of their own (seed + 1) */
        static unsigned char taken[BUF_PAGES];
        struct mt64 pick;
        mt64_seed(&pick, seed + 1);
        mine.seed = seed;
        mine.npages = (uint64_t)npages;
        for (int k = 0; k < npages;) {
            uint32_t p = (uint32_t)(mt64_next(&pick) % BUF_PAGES);
            if (!taken[p]) {
                taken[p] = 1;
                mine.pages[k++] = p;
            }
        }
        shmem_putmem_signal(&req, &mine, sizeof(mine), &req_signal, 1, SHMEM_SIGNAL_SET, filler);
    }
    if (me == filler) {
        fill(buf, requester);
    }
    long wrong = 0;
    if (me == requester) {
        shmem_signal_wait_until(&filled, SHMEM_CMP_GE, (uint64_t)npages);
        wrong = verify(buf, &mine);
        printf("page_fill: PE %d filled %d random pages of PE %d's %d-page buffer with "
               "MT19937-64(seed %llu) by put-with-signal; every byte checked: %s (%ld wrong)\n",
               filler, npages, requester, BUF_PAGES, (unsigned long long)seed,
               wrong ? "WRONG" : "OK", wrong);
    }
    shmem_barrier_all();
    shmem_free(buf);
    shmem_finalize();
    return wrong ? 1 : 0;
}
