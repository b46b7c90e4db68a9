/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * poller.c: the progress thread (FABSHMEM_PROGRESS_THREAD), which polls the engine and every
 * open lane while the program computes, so that with manual data progress what peers aim at
 * this PE (reads, atomics, remote completions) moves without a call into the library.
 *
 * It polls through the engine's own entry points (the engine lock for the engine, a trylock
 * for each lane: engine.h) and never waits for a lane's owner. Starting it makes the engine
 * lock real first; the engine's fini stops it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "error.h"
#include "fabric.h"
#include "progress.h"

static struct {
    pthread_t thread;
    bool running;
    volatile int stop;
    long interval_us;
    long sleep_max_us; /* the longest idle sleep */
} poller;

bool fsh_progress_serves(void)
{
    return poller.running || !fsh_fabric_attr()->manual_progress;
}


/* Polls while there is traffic; when a poll finds nothing it sleeps, doubling the sleep from
 * FABSHMEM_PROGRESS_INTERVAL up to 16 times that while nothing happens, so an idle PE costs
 * almost no CPU and a busy one is served within an interval. */
static void *thread_main(void *arg)
{
    long sleep_us = poller.interval_us, max_us = poller.sleep_max_us;
    while (!__atomic_load_n(&poller.stop, __ATOMIC_ACQUIRE)) {
        int n = fsh_progress_poll();
        if (n >= 0 && fsh_lane_any_open()) {
            int m = fsh_lane_poll_open();
            n = m < 0 ? m : n + m;
        }
        if (n < 0) {
            /* The error is recorded; the application's next call reports it. */
            break;
        }
        if (n > 0) {
            sleep_us = poller.interval_us;
            continue;
        }
        struct timespec ts = {sleep_us / 1000000, (sleep_us % 1000000) * 1000};
        nanosleep(&ts, NULL);
        if (sleep_us < max_us) {
            sleep_us *= 2;
        }
    }
    return NULL;
}

int fsh_progress_thread_start(long interval_us)
{
    poller.interval_us = interval_us > 0 ? interval_us : 1;
    /* Idle sleeps stay well below a probe interval: peers read our heartbeat to tell a stopped
     * process from an idle one. Fixed here, before the thread exists: finalize clears the
     * probe while the thread still runs. */
    poller.sleep_max_us = poller.interval_us * 16;
    if (fsh_engine_probe_interval() > 0 && poller.sleep_max_us > (long)(fsh_engine_probe_interval() * 1e6 / 4)) {
        poller.sleep_max_us = (long)(fsh_engine_probe_interval() * 1e6 / 4);
    }
    poller.stop = 0;
    fsh_progress_enable_locking();
    int rc = pthread_create(&poller.thread, NULL, thread_main, NULL);
    if (rc != 0) {
        return fsh_err(-rc, "set FABSHMEM_PROGRESS_THREAD=off", "cannot start the progress thread: %s",
                       strerror(rc));
    }
    poller.running = true;
    return 0;
}

void fsh_progress_thread_stop(void)
{
    if (poller.running) {
        __atomic_store_n(&poller.stop, 1, __ATOMIC_RELEASE);
        pthread_join(poller.thread, NULL);
        poller.running = false;
    }
}
