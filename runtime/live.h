/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * live.h: is a peer still there? The liveness word and the probes of blocked waits.
 *
 * Every PE keeps one 8-byte word in its symmetric heap saying what it is doing (running, in
 * shmem_finalize, leaving through exit() without it, with the status) and whether it serves
 * fabric reads without calling the library (a progress thread, or a provider with automatic
 * progress). The progress engine calls live.c's probe (fsh_progress_set_probe) when a wait
 * has lasted a probe interval, and every interval after: a peer of this node is looked up as a
 * process (/proc/<pid>/stat), a peer elsewhere is asked with a 16-byte fabric read of its word
 * and heartbeat. Only a peer that is gone, unreachable, or (for a wait that needs the peer to
 * act) gone into finalize or exit ends the wait; a slow live peer is waited for forever, and
 * so is a stopped one (with a warning now and then). The word's block also says what this PE
 * waits in, so that PE 0 names a deadlock (every PE waiting in the library, nothing moving)
 * and ends the job (live.c).
 */
#ifndef FSH_LIVE_H
#define FSH_LIVE_H

#include <stdbool.h>
#include <stddef.h>

enum fsh_live_state {
    FSH_LIVE_INIT = 0,     /* the heap is still zero: the PE has not published anything */
    FSH_LIVE_RUNNING = 1,
    FSH_LIVE_FINALIZE = 2, /* in shmem_finalize */
    FSH_LIVE_EXIT = 3      /* exit(status) without shmem_finalize (0: finalizing implicitly) */
};

/* After the exchange and the heap (the word is the heap's next allocation, so at the same
 * offset on every PE). node_of[pe]: the node of each PE (a PE of this node is checked as a
 * process). interval: seconds between probes (FABSHMEM_PROBE_INTERVAL), validated here.
 * proc_remote: look in /proc at a PE of another node that runs on this machine all the same
 * (FABSHMEM_PROC_REMOTE). */
int fsh_live_init(const int *node_of, double interval, bool proc_remote);
/* The heap bytes fsh_live_init takes (the memory model's figure). */
size_t fsh_live_heap_bytes(void);
/* No more probes (finalize: every PE has arrived); the reads in flight complete first. */
void fsh_live_stop(void);
void fsh_live_fini(void);

/* Another thread of the library acts for this PE from now on (the stream calls' worker,
 * api_stream.c): a wait of the program's thread may then end without any PE's program acting,
 * so it never counts as a single-threaded PE's wait in a deadlock (W_ONE). */
void fsh_live_helper_thread(void);

/* Publish this PE's state. EXIT is never replaced by FINALIZE (an exit finalizes implicitly). */
void fsh_live_publish(enum fsh_live_state state, int status);

#endif
