/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_progress: the progress engine's operation records (runtime/progress.c) on the fake
 * transport.
 *
 * - pool: with 8 records, 40 puts and gets in flight at once take records as the earlier
 *   ones complete (fsh_progress_op_get polls while the pool is empty); each is counted once
 *   on the context's track and the blocking calls' own tracks, gets copy the target's bytes
 *   out, and every record is back, each at its own index.
 * - duplicate: a provider that reports a completion twice: the second is refused (the record
 *   is no longer in flight), the counts stay right, and the pool still hands out 8 distinct
 *   records.
 * - failure: an operation that fails (one way only: no failover) ends the wait with the error,
 *   naming the operation and the PE, counts its record complete so nothing waits for it, and
 *   every later wait fails at once.
 * - counted: injected puts that go without a record, counted by the rails' write counters:
 *   quiet waits for the counter to reach the mark of the last one, completions held back.
 * - eagain: a provider whose queue is full at every third post: each operation is posted
 *   once it has room (xport polls meanwhile, and the completions it reads make the room),
 *   none is lost or posted twice.
 * - lane_full: a lane's post finds the provider's queue full while a remote event that asks
 *   for an answer (an AMO request, applied by its target: amo.c) waits in the engine's CQ; the
 *   poll that waits out the full queue reads it, and the answer is posted on the engine's path
 *   (a post hook) and finds the queue full in turn. That post may back off (probe, take the
 *   engine lock), so it must run with no lane lock held (progress.h, the lock contract): a
 *   second thread takes the lane's lock while the answer is posted, the answer and the lane's
 *   write are each posted once and land, and --enable-debug builds' checks stay silent (the
 *   old engine polled under the lane's lock: the second thread could not take it, and debug
 *   builds aborted in fsh_progress_backoff).
 * - remote: a remote event with a context that is no record (shm's 0x1, or NULL) goes to the
 *   handler its immediate kind names, with its payload (and high bits where the provider has
 *   8 bytes); an unknown kind is dropped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "fabric.h"
#include "fake.h"
#include "heap.h"
#include "mr.h"
#include "progress.h"
#include "rma.h"
#include "unit.h"
#include "xport.h"

static size_t in_use(void)
{
    size_t n = 0;
    for (size_t i = 0; i < fsh_progress_depth(); i++) {
        n += fsh_progress_op_at(i)->kind != 0;
    }
    return n;
}

static int start(struct fake_config c)
{
    int rc = fake_start(&c);
    UNIT_CHECK(rc == 0, "start: %d", rc);
    return rc;
}

static void pool(void)
{
    struct fake_config c = fake_lean(1);
    c.depth = 8;
    c.chaos = true;
    if (start(c) != 0) {
        return;
    }
    uint8_t *remote = fsh_heap_alloc(40 * 256, 64);
    static uint8_t src[40][256], got[40][256];
    for (int i = 0; i < 40; i++) {
        memset(src[i], 0x20 + i, 256);
        memset(remote + i * 256, 0x80 + i, 256);
    }
    struct fsh_op_track sync = {0, 0, 0};
    for (int i = 0; i < 40; i++) {
        int rc = i % 2 ? fsh_rma_read(&fsh_ctx_default, &sync, got[i], 256, 1, FSH_SEG_HEAP,
                                      fake_heap_off(remote + i * 256, 256))
                       : fsh_rma_put(&fsh_ctx_default, FSH_SEG_HEAP,
                                     fake_heap_off(remote + i * 256, 256), src[i], 256, 1, true);
        UNIT_CHECK(rc == 0, "operation %d: %d", i, rc);
    }
    int rc = fsh_progress_wait_track(&sync, "test: the gets");
    rc = rc ? rc : fsh_rma_quiet(&fsh_ctx_default);
    UNIT_CHECK(rc == 0, "waits: %d", rc);
    UNIT_CHECK(sync.posted == 20 && sync.completed == 20, "the gets' own track: %llu/%llu",
               (unsigned long long)sync.posted, (unsigned long long)sync.completed);
    const struct fsh_op_track *t = &fsh_ctx_default.track;
    UNIT_CHECK(t->posted == 40 && t->completed == 40, "the context's track: %llu/%llu",
               (unsigned long long)t->posted, (unsigned long long)t->completed);
    for (int i = 0; i < 40; i++) {
        uint8_t want = i % 2 ? (uint8_t)(0x80 + i) : (uint8_t)(0x20 + i);
        const uint8_t *p = i % 2 ? got[i] : remote + i * 256;
        UNIT_CHECK(p[0] == want && p[255] == want, "operation %d moved its bytes", i);
    }
    UNIT_CHECK(in_use() == 0, "every record back (%zu in use)", in_use());
    for (size_t i = 0; i < fsh_progress_depth(); i++) {
        UNIT_CHECK(fsh_progress_op_index(fsh_progress_op_at(i)) == i, "record %zu's index", i);
    }
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

static void duplicate(void)
{
    struct fake_config c = fake_lean(2);
    c.depth = 8;
    if (start(c) != 0) {
        return;
    }
    uint64_t *w = fsh_heap_alloc(8, 8);
    *w = 99;
    uint64_t v = 0;
    fake_duplicate_next_done();
    int rc = fsh_rma_get(&fsh_ctx_default, &v, FSH_SEG_HEAP, fake_heap_off(w, 8), 8, 1, false);
    for (int i = 0; i < 4; i++) {
        fsh_progress_poll();
    }
    UNIT_CHECK(rc == 0 && v == 99, "the get: %d, %llu", rc, (unsigned long long)v);
    const struct fsh_op_track *t = &fsh_ctx_default.track;
    UNIT_CHECK(t->posted == 1 && t->completed == 1, "counted once: %llu/%llu",
               (unsigned long long)t->posted, (unsigned long long)t->completed);
    struct fsh_op *ops[8];
    fsh_progress_lock();
    for (int i = 0; i < 8; i++) {
        ops[i] = fsh_progress_op_get(FSH_OP_PUT, 1, 8);
        UNIT_CHECK(ops[i] != NULL, "record %d of 8", i);
        for (int j = 0; j < i && ops[i]; j++) {
            UNIT_CHECK(ops[i] != ops[j], "records %d and %d differ", i, j);
        }
    }
    for (int i = 0; i < 8; i++) {
        if (ops[i]) {
            fsh_progress_op_put(ops[i]);
        }
    }
    fsh_progress_unlock();
    UNIT_CHECK(in_use() == 0, "all back (%zu)", in_use());
}

static void failure(void)
{
    if (start(fake_lean(3)) != 0) {
        return;
    }
    uint8_t *remote = fsh_heap_alloc(4096, 64);
    static uint8_t src[4096];
    fake_fail_way(1, 0);
    int rc = fsh_rma_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(remote, 4096), src, 4096, 1,
                         false);
    UNIT_CHECK(rc == -ECONNRESET, "the put fails with the provider's error: %d", rc);
    const struct fsh_error *e = fsh_err_last();
    UNIT_CHECK(e && strstr(e->msg, "put of 4096 bytes to PE 1 failed"),
               "the error names the operation and the PE: %s", e ? e->msg : "(none)");
    UNIT_CHECK(fsh_ctx_default.track.posted == fsh_ctx_default.track.completed,
               "its record counted complete");
    UNIT_CHECK(in_use() == 0, "and given back (%zu)", in_use());
    uint64_t v;
    rc = fsh_rma_get(&fsh_ctx_default, &v, FSH_SEG_HEAP, 0, 8, 1, false);
    UNIT_CHECK(rc != 0, "a later wait fails at once: %d", rc);
}

static unsigned ticks;
static void tick(void)
{
    ticks++;
}
static bool hold_done(const struct fake_event *e)
{
    return e->kind != FAKE_DONE || ticks >= 30;
}

static void counted(void)
{
    struct fake_config c = fake_lean(4);
    c.counts_writes = true;
    if (start(c) != 0) {
        return;
    }
    UNIT_CHECK(fsh_progress_counts_writes(), "writes counted");
    uint8_t *remote = fsh_heap_alloc(20 * 16, 64);
    uint8_t src[16];
    fake_set_tick(tick);
    fake_set_gate(hold_done);
    for (int i = 0; i < 20; i++) {
        memset(src, 0x30 + i, sizeof(src));
        int rc = fsh_rma_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(remote + i * 16, 16), src,
                             16, 1, true);
        UNIT_CHECK(rc == 0, "put %d: %d", i, rc);
    }
    UNIT_CHECK(in_use() == 0 && fsh_ctx_default.track.posted == 0,
               "injected puts took no record (%zu, %llu)", in_use(),
               (unsigned long long)fsh_ctx_default.track.posted);
    int rc = fsh_rma_quiet(&fsh_ctx_default);
    UNIT_CHECK(rc == 0, "quiet: %d", rc);
    UNIT_CHECK(fake_stats()->done == 20, "quiet returned after the counter counted all 20 (%llu)",
               (unsigned long long)fake_stats()->done);
    UNIT_CHECK(remote[0] == 0x30 && remote[19 * 16 + 15] == 0x30 + 19, "the data landed");
    fake_set_gate(NULL);
}

static void eagain(void)
{
    struct fake_config c = fake_lean(6);
    c.depth = 8;
    c.eagain_every = 3;
    if (start(c) != 0) {
        return;
    }
    uint8_t *remote = fsh_heap_alloc(30 * 64, 64);
    static uint8_t src[30][64];
    uint64_t got[30];
    for (int i = 0; i < 30; i++) {
        memset(src[i], 0x50 + i, 64);
        int rc = fsh_rma_put(&fsh_ctx_default, FSH_SEG_HEAP, fake_heap_off(remote + i * 64, 64),
                             src[i], 64, 1, i % 2 == 0);
        UNIT_CHECK(rc == 0, "put %d: %d", i, rc);
    }
    int rc = fsh_rma_quiet(&fsh_ctx_default);
    for (int i = 0; i < 30 && rc == 0; i++) {
        rc = fsh_rma_get(&fsh_ctx_default, &got[i], FSH_SEG_HEAP, fake_heap_off(remote + i * 64, 8), 8,
                         1, false);
        UNIT_CHECK(rc == 0 && got[i] == 0x0101010101010101ULL * (uint64_t)(0x50 + i),
                   "get %d after quiet: %d, 0x%llx", i, rc, (unsigned long long)got[i]);
    }
    UNIT_CHECK(rc == 0, "quiet and gets: %d", rc);
    UNIT_CHECK(fake_stats()->eagain >= 20, "the queue was full %llu times",
               (unsigned long long)fake_stats()->eagain);
    UNIT_CHECK(fake_stats()->posted == 60, "each of the 60 operations posted once (%llu)",
               (unsigned long long)fake_stats()->posted);
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

static uint32_t got_payload, got_high;
static int got_calls;
static void handler(uint32_t payload, uint32_t high)
{
    got_payload = payload;
    got_high = high;
    got_calls++;
}

static void remote(void)
{
    struct fake_config c = fake_lean(5);
    c.cq_data_size = 8;
    if (start(c) != 0) {
        return;
    }
    UNIT_CHECK(fsh_progress_register_imm(FSH_IMM_COLL, handler) == 0, "handler registered");
    UNIT_CHECK(fsh_progress_register_imm(FSH_IMM_COLL, handler) != 0, "a kind is taken once");
    fake_remote_event((uint64_t)0xABCD << 32 | (uint64_t)FSH_IMM_COLL << FSH_IMM_KIND_SHIFT |
                      0x123456);
    fsh_progress_poll();
    UNIT_CHECK(got_calls == 1 && got_payload == 0x123456 && got_high == 0xABCD,
               "the handler got its payload and high bits (%d: 0x%x 0x%x)", got_calls,
               got_payload, got_high);
    fake_remote_event((uint64_t)15 << FSH_IMM_KIND_SHIFT | 1); /* no handler */
    int n = fsh_progress_poll();
    UNIT_CHECK(n >= 0 && got_calls == 1, "an unknown kind is dropped (%d)", n);
    /* A write with immediate data looped back: its target event (context 0x1) is a remote
     * event, not a completion of some record. */
    uint64_t *w = fsh_heap_alloc(8, 8);
    static uint64_t v = 5;
    int rc = fsh_rma_write(&fsh_ctx_default, NULL, &v, 8, 1, FSH_SEG_HEAP, fake_heap_off(w, 8), true,
                           (uint64_t)FSH_IMM_COLL << FSH_IMM_KIND_SHIFT | 77);
    rc = rc ? rc : fsh_rma_quiet(&fsh_ctx_default);
    for (int i = 0; i < 8; i++) {
        fsh_progress_poll();
    }
    UNIT_CHECK(rc == 0 && got_calls == 2 && got_payload == 77 && *w == 5,
               "the looped-back write's event reached the handler (%d, %u)", got_calls,
               got_payload);
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
}

/* lane_full: the answer's state, written by the engine's handler and post hook. */
static struct fsh_lane *full_lane;
static bool answer_due, in_hook;
static int answers, lane_taken;
static uint64_t *answer_dst;
static uint64_t answer_val = 0xA115;
static struct fsh_op_track answer_track;

static void request(uint32_t payload, uint32_t high)
{
    (void)payload;
    (void)high;
    answer_due = true; /* a handler never posts: the post hook answers */
}

static void *take_lane(void *arg)
{
    (void)arg;
    fsh_lane_lock(full_lane);
    __atomic_store_n(&lane_taken, 1, __ATOMIC_RELEASE);
    fsh_lane_unlock(full_lane);
    return NULL;
}

/* Can another thread take the lane's lock now (waits up to 2 s)? The thread is joined by the
 * caller once the lane is surely free. */
static bool lane_free_now(pthread_t *t)
{
    __atomic_store_n(&lane_taken, 0, __ATOMIC_RELEASE);
    if (pthread_create(t, NULL, take_lane, NULL) != 0) {
        return false;
    }
    for (int i = 0; i < 2000 && !__atomic_load_n(&lane_taken, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return __atomic_load_n(&lane_taken, __ATOMIC_ACQUIRE);
}

static pthread_t taker;
static bool taker_started, free_at_answer;

/* As amo.c's answers: posted on the engine's path at a poll's end. */
static int answer(void)
{
    if (!answer_due || in_hook) {
        return 0; /* a post that polls runs the hooks again */
    }
    in_hook = true;
    answer_due = false;
    free_at_answer = lane_free_now(&taker);
    taker_started = true;
    struct fsh_op *op = fsh_progress_op_get(FSH_OP_PUT, 1, 8);
    int rc = op ? 0 : -EIO;
    if (op) {
        op->track = &answer_track;
        struct fsh_xreq r = {.type = FSH_X_WRITE, .op = op, .pe = 1,
                             .path = fsh_fabric_path(1, 0), .local = &answer_val, .len = 8,
                             .flags = FSH_XF_COMPLETION | FSH_XF_DELIVERED};
        struct fsh_mr_tmp *tmp = NULL;
        fsh_mr_desc(&answer_val, 8, r.path.rail, &r.desc, &tmp);
        fsh_mr_remote(1, FSH_SEG_HEAP, fake_heap_off(answer_dst, 8), &r.raddr, &r.key);
        rc = fsh_xport_post(&r);
        answers++;
    }
    in_hook = false;
    return rc;
}

static void lane_full(void)
{
    struct fake_config c = fake_lean(7);
    if (start(c) != 0) {
        return;
    }
    UNIT_CHECK(fsh_progress_register_imm(FSH_IMM_AMO, request) == 0, "handler registered");
    fsh_progress_set_post_hook(FSH_POST_ANSWERS, answer);
    UNIT_CHECK(fsh_lane_open(&full_lane) == 0, "a lane opened: %s",
               fsh_err_last() ? fsh_err_last()->msg : "");
    if (!full_lane) {
        return;
    }
    answer_dst = fsh_heap_alloc(8, 8);
    uint64_t *lane_dst = fsh_heap_alloc(8, 8);
    static uint64_t lane_val = 0x1A7E;
    struct fsh_op_track lane_track = {0, 0, 0};
    /* The request waits in the engine's CQ; the lane's post and then the answer's find the
     * queue full once each. */
    fake_remote_event((uint64_t)FSH_IMM_AMO << FSH_IMM_KIND_SHIFT | 1);
    fake_full_next(2);
    fsh_lane_lock(full_lane);
    struct fsh_op *op = fsh_lane_op_get(full_lane, FSH_OP_PUT, 1, 8);
    int rc = op ? 0 : -EIO;
    if (op) {
        op->track = &lane_track;
        op->sync = NULL;
        struct fsh_xreq r = {.type = FSH_X_WRITE, .op = op, .pe = 1,
                             .path = fsh_fabric_path(1, 0), .local = &lane_val, .len = 8,
                             .flags = FSH_XF_COMPLETION | FSH_XF_DELIVERED};
        struct fsh_mr_tmp *tmp = NULL;
        fsh_mr_desc(&lane_val, 8, r.path.rail, &r.desc, &tmp);
        fsh_mr_remote(1, FSH_SEG_HEAP, fake_heap_off(lane_dst, 8), &r.raddr, &r.key);
        rc = fsh_xport_post_lane(full_lane, &r);
    }
    fsh_lane_unlock(full_lane);
    if (taker_started) {
        pthread_join(taker, NULL);
    }
    UNIT_CHECK(rc == 0, "the lane's post: %d", rc);
    UNIT_CHECK(answers == 1, "the answer was posted once, during the lane's post (%d)", answers);
    UNIT_CHECK(free_at_answer, "no lane lock was held while the answer was posted (another "
               "thread took the lane's lock meanwhile)");
    rc = fsh_lane_wait_track(full_lane, &lane_track, "the lane's write");
    UNIT_CHECK(rc == 0, "the lane's write completed: %d", rc);
    rc = fsh_progress_wait_track(&answer_track, "the answer");
    UNIT_CHECK(rc == 0, "the answer completed: %d", rc);
    UNIT_CHECK(*lane_dst == 0x1A7E && *answer_dst == 0xA115,
               "both writes landed (0x%llx, 0x%llx)", (unsigned long long)*lane_dst,
               (unsigned long long)*answer_dst);
    UNIT_CHECK(fake_stats()->eagain == 2 && fake_stats()->posted == 2,
               "two full queues, two posts (%llu, %llu)",
               (unsigned long long)fake_stats()->eagain, (unsigned long long)fake_stats()->posted);
    UNIT_CHECK(fake_violations() == 0, "no wire violation");
    fsh_lane_close(full_lane);
}

int main(void)
{
    unit_name = "test_progress";
    unit_case("pool", pool, 60);
    unit_case("duplicate", duplicate, 60);
    unit_case("failure", failure, 60);
    unit_case("counted", counted, 60);
    unit_case("eagain", eagain, 60);
    unit_case("remote", remote, 60);
    unit_case("lane_full", lane_full, 60);
    return unit_exit();
}
