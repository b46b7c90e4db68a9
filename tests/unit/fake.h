/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake.h: a fake transport under the real protocol modules, for unit tests in one process.
 *
 * fake_fabric.c defines the functions of fabric.h and mr.h (the layer below xport.c and
 * progress.c) and hands xport and the engine endpoints and completion queues whose libfabric
 * operation tables are its own, so the real xport.c, progress.c, rma.c, signal.c, lease.c,
 * arrive.c and amo.c run unchanged on it (link-time substitution: a unit test links
 * fake_fabric.o before libfsh_core.a, and the archive's fabric.o and mr.o are never pulled).
 *
 * The process is PE 0 of an npes-PE job, and the fake plays every peer by loopback: the
 * memory of PE p is this process's own segments, so a write to PE 1 lands here and its
 * immediate data is a remote event of this PE's engine. The one PE's protocol state thus
 * plays both ends of every protocol (initiator toward PE 1, target of "PE 0"), each end with
 * its own state, as two PEs would; peers beyond that (a third source of lease claims) are
 * played by the test, which sends their remote events with fake_remote_event().
 *
 * Every operation posted becomes two events on the wire: LAND (the data reaches the target's
 * memory, and with immediate data its remote event is queued on the target's CQ; a read's data
 * reaches the initiator's buffer) and DONE (the initiator's completion entry). They happen in
 * any order the provider could give: a read's or atomic's DONE after its LAND, a write's DONE
 * after its LAND when it asked delivery-complete of a delivery-complete provider, else in
 * either order. Which event happens when is chosen by the fake's seeded random stream at each
 * read of rail 0's CQ (FAKE_AUTO), by the test alone (FAKE_MANUAL), and a gate may hold events
 * back in either mode. The runtime's own chaos orders (FABSHMEM_CHAOS=reorder,delay: xport's
 * held posts, the engine's shuffled CQ entries) run on top when the config asks for them.
 *
 * Multi-rail: nrails rails here and at every peer, way w from rail w to the peer's rail w.
 * fake_fail_way() makes a way fail: what is in flight on it does not land, its completions
 * come as error entries (FI_ECONNRESET), and anything posted on it later fails the same way.
 *
 * Lanes (fsh_lane_open): a test may open one; it gets an endpoint and completion queue of its
 * own on every rail, which only its own operations complete on (reading it delivers nothing:
 * events happen at reads of the engine's rail 0 queue, as above). The protocol modules are
 * told there are none (fsh_fabric_lanes_possible), so their contexts never take one.
 *
 * The fake checks what a NIC would refuse and counts each as a violation (fake_violations()):
 * a key of another rail than the way reaches, a write outside the target's segment, a post on
 * a way already known dead (after the runtime took it out of use), a descriptor of another
 * rail (with mr_local), a completion context that is not an operation record it was given.
 */
#ifndef FSH_FAKE_H
#define FSH_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fake_mode { FAKE_AUTO = 0, FAKE_MANUAL };

struct fake_config {
    int npes;             /* this process is PE 0 of npes (>= 2) */
    int nrails;           /* 1..4, here and at every peer */
    size_t inject_size;
    size_t max_msg_size;
    size_t rma_iov_limit;
    size_t cq_data_size;  /* 4 (EFA) or 8 */
    bool delivery_complete;
    bool count_arrivals;  /* targets count plain writes (FABSHMEM_REMOTE_COMPLETION) */
    bool mr_local;        /* every local buffer carries its rail's descriptor */
    bool counts_writes;   /* the rails count completed writes (injected puts go without a
                           * record or completion entry) */
    unsigned eagain_every; /* every n-th post finds the provider's queue full (-FI_EAGAIN) */
    size_t depth;         /* operation records */
    size_t heap_size;
    uint64_t seed;        /* the fake's order, and the runtime's chaos seed */
    bool chaos;           /* also FABSHMEM_CHAOS=reorder,delay (xport.c, progress.c) */
    enum fake_mode mode;
    double timeout;       /* the runtime's internal wait limit, seconds (a hang ends there) */
};

/* A lean provider: efa-direct's limits (4-byte immediate data, one remote segment per write,
 * a 32-byte inject, no atomics, descriptors on every buffer), with the given order seed, but
 * delivery complete, as a consistent config without counted arrivals must be (the runtime
 * counts arrivals wherever writes are not delivery complete: test_arrive sets both). Writes
 * with immediate data never ask it, so their completion may still come before they land. */
struct fake_config fake_lean(uint64_t seed);

/* Bring up what the protocols stand on: env, the runtime identity, the engine, xport, the
 * segments (heap_size bytes of heap, 64 KiB of data segment) and the heap. 0 or -errno. */
int fake_start(const struct fake_config *cfg);
void fake_stop(void);
/* The data segment's base (FSH_SEG_DATA offset 0). */
void *fake_data_segment(void);
/* The symmetric heap offset of [p, p+len); a range outside the heap is the test's own bug: it
 * is named and the case aborts (unit_case reports it as failed). */
uint64_t fake_heap_off(const void *p, size_t len);

enum fake_event_kind { FAKE_LAND = 1, FAKE_DONE };
struct fake_event {
    enum fake_event_kind kind;
    int type;        /* FSH_X_WRITE / FSH_X_READ */
    int pe;
    unsigned way;
    size_t len;
    bool has_imm;
    uint64_t imm;    /* as the target sees it (cut to cq_data_size bytes) */
    uint64_t seq;    /* the operation's post number, from 0 */
};

/* Events on the wire now, and whether each may happen now (its order rules and the gate). */
size_t fake_pending(void);
const struct fake_event *fake_event_at(size_t i);
bool fake_eligible(size_t i);
/* Make event i happen now (0), or -EAGAIN when its order rules do not allow it yet. */
int fake_deliver(size_t i);
/* The first pending event with this kind and immediate kind (bits 31..28; 0: any, without
 * immediate data: -1), or -1. */
long fake_find(enum fake_event_kind kind, int imm_kind);
/* Deliver every eligible event, in the fake's random order, until none is left or eligible. */
size_t fake_drain(void);

/* An event may happen only when gate(e) is true (NULL: always). */
void fake_set_gate(bool (*gate)(const struct fake_event *e));
/* Called at every read of rail 0's CQ, before anything is delivered (invariant checks). */
void fake_set_tick(void (*tick)(void));
void fake_set_mode(enum fake_mode mode);

/* A remote event (immediate data imm) from a peer the test plays, queued on rail 0's CQ. */
void fake_remote_event(uint64_t imm);
/* Way `way` to pe fails now (see above). */
void fake_fail_way(int pe, unsigned way);
/* The next n posts, on any endpoint, find the provider's queue full (-FI_EAGAIN). */
void fake_full_next(unsigned n);
/* Report the next completion of a live operation twice (a provider bug the engine must
 * survive). */
void fake_duplicate_next_done(void);

/* Statistics. */
struct fake_stats {
    uint64_t posted, landed, done, errors, remote_events, eagain;
    uint64_t posted_on_way[4];
};
const struct fake_stats *fake_stats(void);
/* Violations of what a NIC accepts (see above), each printed once when it happens. */
unsigned fake_violations(void);

#endif
