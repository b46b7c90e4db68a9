/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_stream: the stream-ordered calls (shmemx_*_on_stream), data-verified, on the mock CUDA
 * driver here (tests/gpu/libmockcuda.so, whose streams run their operations on threads of
 * their own after the call returned) or on a real one (FABSHMEM_CUDA_LIB=libcuda.so.1).
 *
 * Each PE has a stream whose first operation is a gate (a host function that waits until the
 * test opens it), then per round:
 *   copy host pattern -> device source (the stream's own copy: a put that ran at call time, or
 *     before the stream reached it, would send the stale source);
 *   put_signal_on_stream of the source into the right neighbour's device block, SET round;
 *   signal_wait_until_on_stream for our own signal == round (from the left neighbour);
 *   copy of the received device block -> host (ordered after the wait: a wait that did not
 *     hold the stream lets the copy read stale data);
 *   quiet_on_stream, barrier_all_on_stream (the left neighbour's next put comes after it);
 *   copy host pattern -> device a2a source, alltoallmem_on_stream, copy a2a dest -> host.
 * Every call must return with the gate closed (a call that waited for its stream would hang:
 * the test opens the gate only after the calls returned, and fails on the timeout), and before
 * the gate opens nothing of the round may have happened here. Then the gate opens, the stream
 * is synchronized and everything is checked.
 * A captured graph (put_signal, wait, reset of the signal word, copy out, barrier) launched
 * GRAPH_LAUNCHES times gives that many correct rounds; nothing runs at capture.
 * Then CHURN graphs, each captured, instantiated, launched once and destroyed (the graph before
 * its launch, the executable graph right after it): their slots must come back (CUDA user
 * objects), since together they use more than FABSHMEM_STREAM_SLOTS; each launch's put and
 * signal is checked, and on the mock that every slot's user object was destroyed.
 * Then more calls than there are slots, with no gate: MANY single-word puts with signal ADD,
 * a wait for the count, every word and the count checked.
 * Every host buffer a stream copies to or from is pinned (drv_pinned): on a real driver a copy
 * into pageable memory returns only once its stream ran it, which the closed gate forbids (the
 * mock blocks the same way; this test hung on an H200 with malloc'd buffers). First that rule
 * itself: a pageable copy behind a slow host function returns with the function run and the
 * bytes copied; the same buffer registered (cuMemHostRegister) takes a copy behind the closed
 * gate without waiting, and is not registered any more once unregistered.
 * STREAM_HOSTFN (gpu_stream_hostfn): the same with the stream memory operations unsupported
 * by the mock (MOCK_CUDA_STREAM_MEMOPS=0), so the library serves streams with cuLaunchHostFunc.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/gpu_test.h"
#include "../gpu/stream_drv.h"

#ifdef STREAM_HOSTFN
#define NAME "gpu_stream_hostfn"
#else
#define NAME "gpu_stream"
#endif
#define N 4096 /* uint64_t per put: 32 KiB, several staging chunks with 8K chunks */
#define ROUNDS 3
#define GRAPH_LAUNCHES 5
#define A2A 16 /* uint64_t per PE pair */

static int me, npes, right, left;

/* Where each PE is, for a hang: the watchdog ends the test with that step named once no step
 * began for STALL_S seconds (before the runner's timeout, which would name nothing: a hang on
 * a GPU is otherwise a bare "timed out"). */
#define STALL_S 40
static const char *step_name = "start";
static long step_at;

static long now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec;
}

static void step(const char *what)
{
    __atomic_store_n(&step_at, now_s(), __ATOMIC_RELEASE);
    __atomic_store_n(&step_name, what, __ATOMIC_RELEASE);
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        sleep(1);
        long idle = now_s() - __atomic_load_n(&step_at, __ATOMIC_ACQUIRE);
        if (idle >= STALL_S) {
            printf("%s: FAIL (PE %d/%d: no progress for %ld s, stuck at: %s)\n", NAME, me, npes,
                   idle, __atomic_load_n(&step_name, __ATOMIC_ACQUIRE));
            fflush(stdout);
            _exit(1);
        }
    }
    return NULL;
}

static uint64_t value(int pe, int round, size_t i)
{
    return t_pattern(pe * 1000 + round, i);
}

static void rounds(void *s)
{
    uint64_t *dsrc = shmemx_malloc_device(N * sizeof(uint64_t));
    uint64_t *ddst = shmemx_malloc_device(N * sizeof(uint64_t));
    uint64_t *asrc = shmemx_malloc_device((size_t)npes * A2A * sizeof(uint64_t));
    uint64_t *adst = shmemx_malloc_device((size_t)npes * A2A * sizeof(uint64_t));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    uint64_t *pat = drv_pinned(ROUNDS * N * sizeof(uint64_t));
    uint64_t *got = drv_pinned(ROUNDS * N * sizeof(uint64_t));
    uint64_t *apat = drv_pinned((size_t)ROUNDS * npes * A2A * sizeof(uint64_t));
    uint64_t *agot = drv_pinned((size_t)ROUNDS * npes * A2A * sizeof(uint64_t));
    if (!t_check(dsrc && ddst && asrc && adst && sig, "allocation failed")) {
        exit(1);
    }
    memset(got, 0xee, ROUNDS * N * sizeof(uint64_t));
    memset(agot, 0xee, (size_t)ROUNDS * npes * A2A * sizeof(uint64_t));
    for (int r = 0; r < ROUNDS; r++) {
        for (size_t i = 0; i < N; i++) {
            pat[r * N + i] = value(me, r + 1, i);
        }
        for (int j = 0; j < npes; j++) {
            for (size_t i = 0; i < A2A; i++) {
                /* what PE me sends PE j in round r */
                apat[((size_t)r * npes + j) * A2A + i] = value(me * 64 + j, r + 100, i);
            }
        }
    }
    shmem_barrier_all();

    int gate = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    step("rounds: gate queued");
    DRV(drv.host_fn(s, drv_gate_fn, &gate));
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t *mine = pat + (size_t)r * N, *back = got + (size_t)r * N;
        size_t abytes = (size_t)npes * A2A * sizeof(uint64_t);
        step(r == 0 ? "rounds: copy in, gate closed" : "rounds: next round, gate closed");
        DRV(drv.htod((uint64_t)(uintptr_t)dsrc, mine, N * sizeof(uint64_t), s));
        step(r == 0 ? "rounds: first stream call (the library starts its worker), gate closed"
                    : "rounds: put_signal_on_stream, gate closed");
        shmemx_putmem_signal_on_stream(ddst, dsrc, N * sizeof(uint64_t), sig, (uint64_t)r + 1,
                                       SHMEM_SIGNAL_SET, right, s);
        step("rounds: signal_wait_until_on_stream, gate closed");
        shmemx_signal_wait_until_on_stream(sig, SHMEM_CMP_EQ, (uint64_t)r + 1, s);
        step("rounds: copy out (pinned), gate closed");
        DRV(drv.dtoh(back, (uint64_t)(uintptr_t)ddst, N * sizeof(uint64_t), s));
        step("rounds: quiet and barrier_all on the stream, gate closed");
        shmemx_quiet_on_stream(s);
        shmemx_barrier_all_on_stream(s);
        step("rounds: all-to-all copy in and alltoallmem_on_stream, gate closed");
        DRV(drv.htod((uint64_t)(uintptr_t)asrc, apat + (size_t)r * npes * A2A, abytes, s));
        shmemx_alltoallmem_on_stream(SHMEM_TEAM_WORLD, adst, asrc, A2A * sizeof(uint64_t), s);
        step("rounds: all-to-all copy out (pinned), gate closed");
        DRV(drv.dtoh(agot + (size_t)r * npes * A2A, (uint64_t)(uintptr_t)adst, abytes, s));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* The gate is closed: the calls returned without their stream, and nothing ran here yet. */
    t_check(drv.stream_query(s) == DRV_NOT_READY, "the stream finished with its gate closed");
    size_t stale = 0;
    for (size_t i = 0; i < ROUNDS * N; i++) {
        stale += got[i] == 0xeeeeeeeeeeeeeeeeULL;
    }
    t_check(stale == ROUNDS * N, "%zu words were copied out before the gate opened",
            ROUNDS * N - stale);
    step("rounds: gate opened, stream synchronize (the rounds run)");
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    DRV(drv.stream_sync(s));
    step("rounds: checking");
    double enq = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (me == 0) {
        printf("  %d rounds of 6 stream calls enqueued in %.1f ms with the gate closed\n", ROUNDS,
               enq * 1e3);
    }

    for (int r = 0; r < ROUNDS; r++) {
        size_t bad = 0, first = N;
        for (size_t i = 0; i < N; i++) {
            if (got[(size_t)r * N + i] != value(left, r + 1, i)) {
                bad++;
                first = first < i ? first : i;
            }
        }
        t_check(bad == 0, "round %d: %zu of %d words from PE %d wrong after the signal wait "
                "(first at %zu)", r + 1, bad, N, left, first);
        size_t abad = 0;
        for (int j = 0; j < npes; j++) {
            for (size_t i = 0; i < A2A; i++) {
                abad += agot[((size_t)r * npes + j) * A2A + i] != value(j * 64 + me, r + 100, i);
            }
        }
        t_check(abad == 0, "round %d: %zu all-to-all words wrong", r + 1, abad);
    }
    t_check(*sig == ROUNDS, "signal %llu, expected %d", (unsigned long long)*sig, ROUNDS);
    shmem_barrier_all();
    shmem_free(sig);
    shmemx_free_device(adst);
    shmemx_free_device(asrc);
    shmemx_free_device(ddst);
    shmemx_free_device(dsrc);
    DRV(drv.host_free(pat));
    DRV(drv.host_free(got));
    DRV(drv.host_free(apat));
    DRV(drv.host_free(agot));
}

/* The driver's rule behind the pinned buffers, checked on whatever driver runs the test: a copy
 * into pageable host memory returns only once its stream ran it (CUDA's "API synchronization
 * behavior"). A host function that takes a while, then such a copy: when the copy returns, the
 * function has finished and the bytes are there. */
static void slow_fn(void *arg)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
}

static void pageable(void *s)
{
    uint64_t *d = shmemx_malloc_device(N * sizeof(uint64_t));
    uint64_t *host = NULL;
    if (posix_memalign((void **)&host, 4096, N * sizeof(uint64_t)) != 0) {
        host = NULL;
    }
    if (!t_check(d && host, "allocation failed")) {
        exit(1);
    }
    for (size_t i = 0; i < N; i++) {
        host[i] = value(me, 400, i);
    }
    shmem_putmem(d, host, N * sizeof(uint64_t), me);
    memset(host, 0xee, N * sizeof(uint64_t));
    int ran = 0;
    step("pageable: copy into pageable memory behind a 200 ms host function");
    DRV(drv.host_fn(s, slow_fn, &ran));
    DRV(drv.dtoh(host, (uint64_t)(uintptr_t)d, N * sizeof(uint64_t), s));
    t_check(__atomic_load_n(&ran, __ATOMIC_ACQUIRE) == 1,
            "a copy into pageable host memory returned before its stream ran what preceded it");
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) {
        bad += host[i] != value(me, 400, i);
    }
    t_check(bad == 0, "%zu of %d words not yet copied when the pageable copy returned", bad, N);
    DRV(drv.stream_sync(s));

    /* The same memory registered (cuMemHostRegister) is pinned: a copy into it queued behind a
     * closed gate returns (else the test hangs and fails on its timeout) and has not run. */
    step("pageable: cuMemHostRegister");
    DRV(drv.host_register(host, N * sizeof(uint64_t), 0));
    memset(host, 0xee, N * sizeof(uint64_t));
    int gate = 0;
    step("pageable: copy into registered memory behind the closed gate");
    DRV(drv.host_fn(s, drv_gate_fn, &gate));
    DRV(drv.dtoh(host, (uint64_t)(uintptr_t)d, N * sizeof(uint64_t), s));
    t_check(drv.stream_query(s) == DRV_NOT_READY,
            "the stream finished with its gate closed (registered memory)");
    step("pageable: gate opened, stream synchronize");
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    DRV(drv.stream_sync(s));
    bad = 0;
    for (size_t i = 0; i < N; i++) {
        bad += host[i] != value(me, 400, i);
    }
    t_check(bad == 0, "%zu of %d words wrong after a copy into registered memory", bad, N);
    step("pageable: cuMemHostUnregister");
    DRV(drv.host_unregister(host));
    int rc = drv.host_unregister(host);
    t_check(rc == DRV_NOT_REGISTERED, "unregistering twice gave CUDA error %d, not %d", rc,
            DRV_NOT_REGISTERED);
    shmem_barrier_all();
    shmemx_free_device(d);
    free(host);
}

/* A graph: captured once, launched GRAPH_LAUNCHES times, each launch one verified round. The
 * signal word is in the device heap so the stream itself can reset it after the wait. */
static void graph(void *s)
{
    uint64_t *dsrc = shmemx_malloc_device(N * sizeof(uint64_t));
    uint64_t *ddst = shmemx_malloc_device(N * sizeof(uint64_t));
    uint64_t *dsig = shmemx_calloc_device(1, sizeof(uint64_t));
    /* Pinned: what a graph copies to or from host memory must be (see the header). */
    uint64_t *pat = drv_pinned(N * sizeof(uint64_t)), *got = drv_pinned(N * sizeof(uint64_t));
    if (!t_check(dsrc && ddst && dsig, "allocation failed")) {
        exit(1);
    }
    shmem_barrier_all();
    void *g = NULL, *exec = NULL;
    step("graph: capture");
    DRV(drv.begin_capture(s, 0));
    DRV(drv.htod((uint64_t)(uintptr_t)dsrc, pat, N * sizeof(uint64_t), s));
    shmemx_putmem_signal_on_stream(ddst, dsrc, N * sizeof(uint64_t), dsig, 1, SHMEM_SIGNAL_SET,
                                   right, s);
    shmemx_signal_wait_until_on_stream(dsig, SHMEM_CMP_EQ, 1, s);
    DRV(drv.memset8((uint64_t)(uintptr_t)dsig, 0, sizeof(uint64_t), s));
    DRV(drv.dtoh(got, (uint64_t)(uintptr_t)ddst, N * sizeof(uint64_t), s));
    shmemx_barrier_all_on_stream(s);
    DRV(drv.end_capture(s, &g));
    DRV(drv.instantiate(&exec, g, 0));
    /* Captured, not run: no PE's put reached us (a host barrier: every PE has captured). */
    shmem_barrier_all();
    uint64_t sigv = 1;
    shmem_getmem(&sigv, dsig, sizeof(sigv), me);
    t_check(sigv == 0, "the signal word is %llu after capture alone", (unsigned long long)sigv);
    shmem_barrier_all(); /* every PE looked before any launches (the left PE's put lands here) */

    for (int k = 1; k <= GRAPH_LAUNCHES; k++) {
        for (size_t i = 0; i < N; i++) {
            pat[i] = value(me, 200 + k, i);
        }
        memset(got, 0xee, N * sizeof(uint64_t));
        step("graph: launch and stream synchronize");
        DRV(drv.launch(exec, s));
        DRV(drv.stream_sync(s));
        size_t bad = 0;
        for (size_t i = 0; i < N; i++) {
            bad += got[i] != value(left, 200 + k, i);
        }
        t_check(bad == 0, "graph launch %d: %zu of %d words from PE %d wrong", k, bad, N, left);
    }
    DRV(drv.exec_destroy(exec));
    DRV(drv.graph_destroy(g));
    shmem_barrier_all();
    shmemx_free_device(dsig);
    shmemx_free_device(ddst);
    shmemx_free_device(dsrc);
    DRV(drv.host_free(pat));
    DRV(drv.host_free(got));
}

/* Graphs made and destroyed one after the other, CHURN * 2 slots in all: more than the 256 slots
 * (FABSHMEM_STREAM_SLOTS' default), so slots kept until shmem_finalize run out (the job ends
 * with "all 256 stream slots are kept by captured CUDA graphs"). */
#define CHURN 150
static void graph_churn(void *s)
{
    uint64_t *recv = shmem_calloc(CHURN, sizeof(uint64_t));
    uint64_t *count = shmem_calloc(1, sizeof(uint64_t));
    uint64_t *send = drv_pinned(CHURN * sizeof(uint64_t));
    if (!t_check(recv && count, "allocation failed")) {
        exit(1);
    }
    for (size_t i = 0; i < CHURN; i++) {
        send[i] = value(me, 400, i);
    }
    unsigned long (*destroyed)(void) = NULL;
    if (FSH_MOCK_CUDA[0]) {
        void *lib = dlopen(FSH_MOCK_CUDA, RTLD_NOW | RTLD_NOLOAD);
        *(void **)&destroyed = lib ? dlsym(lib, "mock_cuda_uobj_destroyed") : NULL;
        t_check(destroyed != NULL, "the mock driver has no mock_cuda_uobj_destroyed");
    }
    unsigned long destroyed0 = destroyed ? destroyed() : 0;
    shmem_barrier_all();
    step("graph churn: capture, launch, destroy");
    for (size_t i = 0; i < CHURN; i++) {
        void *g = NULL, *exec = NULL;
        DRV(drv.begin_capture(s, 0));
        shmemx_putmem_signal_on_stream(recv + i, send + i, sizeof(uint64_t), count, 1,
                                       SHMEM_SIGNAL_ADD, right, s);
        shmemx_quiet_on_stream(s);
        DRV(drv.end_capture(s, &g));
        DRV(drv.instantiate(&exec, g, 0));
        DRV(drv.graph_destroy(g)); /* the executable graph still holds the slots */
        DRV(drv.launch(exec, s));
        DRV(drv.exec_destroy(exec)); /* the launch still holds them */
        DRV(drv.stream_sync(s));
    }
    step("graph churn: wait for the left neighbour's signals");
    shmem_signal_wait_until(count, SHMEM_CMP_EQ, CHURN);
    size_t bad = 0;
    for (size_t i = 0; i < CHURN; i++) {
        bad += recv[i] != value(left, 400, i);
    }
    t_check(bad == 0, "graph churn: %zu of %d words from PE %d wrong", bad, CHURN, left);
    if (destroyed) {
        /* The driver runs destructors later, on its own thread: give it time. */
        step("graph churn: user objects destroyed");
        for (int k = 0; k < 2000 && destroyed() - destroyed0 < 2 * CHURN; k++) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
        /* At least: graph()'s own may land in this window too. */
        t_check(destroyed() - destroyed0 >= 2 * CHURN,
                "graph churn: %lu of %d user objects destroyed", destroyed() - destroyed0,
                2 * CHURN);
    }
    shmem_barrier_all();
    shmem_free(count);
    shmem_free(recv);
    DRV(drv.host_free(send));
}

/* More calls than slots (FABSHMEM_STREAM_SLOTS, 256 by default) with no gate: slots are taken
 * again as soon as their stream reset them, and each put lands in its own word. */
#define MANY 300
static void many(void *s)
{
    uint64_t *recv = shmem_calloc(MANY, sizeof(uint64_t));
    uint64_t *count = shmem_calloc(1, sizeof(uint64_t));
    uint64_t *send = malloc(MANY * sizeof(uint64_t));
    if (!t_check(recv && count && send, "allocation failed")) {
        exit(1);
    }
    for (size_t i = 0; i < MANY; i++) {
        send[i] = value(me, 300, i);
    }
    shmem_barrier_all();
    step("many: queueing more calls than slots");
    for (size_t i = 0; i < MANY; i++) {
        shmemx_putmem_signal_on_stream(recv + i, send + i, sizeof(uint64_t), count, 1,
                                       SHMEM_SIGNAL_ADD, right, s);
    }
    shmemx_signal_wait_until_on_stream(count, SHMEM_CMP_GE, MANY, s);
    step("many: stream synchronize");
    DRV(drv.stream_sync(s));
    size_t bad = 0;
    for (size_t i = 0; i < MANY; i++) {
        bad += recv[i] != value(left, 300, i);
    }
    t_check(bad == 0, "%zu of %d single-word puts wrong", bad, MANY);
    t_check(*count == MANY, "count %llu after %d signal adds", (unsigned long long)*count, MANY);
    shmem_barrier_all();
    shmem_free(count);
    shmem_free(recv);
    free(send);
}

int main(void)
{
#ifdef STREAM_HOSTFN
    /* The mock is told it has no memory operations (the library must find that out and fall
     * back); a real driver is not, so there the fallback is asked for. */
    setenv("MOCK_CUDA_STREAM_MEMOPS", "0", 1);
    const char *lib = getenv("FABSHMEM_CUDA_LIB");
    if (lib && lib[0] && strcmp(lib, FSH_MOCK_CUDA) != 0) {
        setenv("FABSHMEM_STREAM_MODE", "hostfunc", 0);
    }
#endif
    step("shmem_init");
    pthread_t dog;
    if (pthread_create(&dog, NULL, watchdog, NULL) != 0) {
        printf("%s: FAIL (cannot start the watchdog thread)\n", NAME);
        return 1;
    }
    gpu_test_start(NAME);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    drv_open();
    void *s = NULL;
    DRV(drv.stream_create(&s, 1));
    step("pageable");
    pageable(s);
    rounds(s);
    graph(s);
    graph_churn(s);
    many(s);
    if (me == 0) {
        printf("  %s\n", shmemx_stream_info());
    }
#ifdef STREAM_HOSTFN
    t_check(strstr(shmemx_stream_info(), "cuLaunchHostFunc") != NULL,
            "streams not served by cuLaunchHostFunc: %s", shmemx_stream_info());
#else
    if (FSH_MOCK_CUDA[0]) {
        t_check(strstr(shmemx_stream_info(), "cuStreamWriteValue32") != NULL,
                "streams not served by the memory operations: %s", shmemx_stream_info());
    }
#endif
    step("stream destroy and shmem_finalize");
    DRV(drv.stream_destroy(s));
    shmem_finalize();
    return t_finish(NAME);
}
