/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * barrier.c: synchronization of a team, as a dissemination algorithm, and the collectives'
 * setup.
 *
 * Round k (k = 0 .. ceil(log2 N)-1): team PE i sends one arrival to PE (i + 2^k) mod N and
 * waits for the one from PE (i - 2^k) mod N. After the last round every PE has heard, directly
 * or transitively, from every other, so nobody leaves before everybody arrived. N need not be
 * a power of two, and the 2^k mod N are distinct, so each round hears from a different PE.
 *
 * An arrival is a data-less counted write (notify.c): back-to-back barriers need no reset or
 * epoch, since a peer that already sends the next barrier's arrival only raises its own count.
 * The barrier that ends an allocation carries the allocation's fingerprint (fingerprint.h:
 * size, alignment, resulting offset), which the receiver compares with its own: met by a
 * different allocation, or by a plain barrier or another collective (which send none), it ends
 * the job naming both calls instead of letting the PEs go on out of step. A plain barrier
 * carries none, so it costs what it did (its mismatches with fingerprinted calls are named by
 * their side); nor does the finalize sync (a PE may finalize while a peer still waits in a
 * collective: liveness names that).
 * barrier_all completes every earlier put (quiet) before its first arrival, and an arrival is
 * counted only after its write landed, so data put before a barrier is visible after it.
 *
 * The same rounds carrying an 8-byte word (an AND over the team) are notify.c's
 * fsh_notify_and_word: team creation needs them, and it sits below the collectives of coll.h.
 */
#include "coll.h"

#include "backend.h"
#include "notify.h"
#include "rma.h"
#include "rt.h"

int fsh_coll_init(const int *node_of, unsigned max_teams)
{
    int rc = fsh_notify_init(fsh_rt.npes, max_teams);
    if (rc == 0) {
        rc = fsh_team_init(fsh_rt.pe, fsh_rt.npes, node_of, max_teams);
    }
    return rc;
}

void fsh_coll_fini(void)
{
    fsh_team_fini();
    fsh_notify_fini();
}

static int sync_on(struct fsh_team *t, const char *what, uint16_t fp)
{
    int n = t->size, me = t->my_pe;
    struct fsh_notify_batch b;
    fsh_notify_batch_init(&b, t);
    int rc = 0;
    for (int dist = 1; dist < n && rc == 0; dist *= 2) {
        int from = (me - dist + n) % n;
        rc = fsh_notify_signal_fp(&b, (me + dist) % n, fp);
        if (rc == 0) {
            fsh_notify_expect(t, from, 1);
            rc = fsh_notify_wait(t, from, what);
        }
        if (rc == 0) {
            rc = fsh_notify_fp_check(t, from, fp, false);
        }
    }
    int crc = fsh_notify_complete(&b, what);
    if (rc == 0 && crc == 0) {
        fsh_backend_guard(); /* peers' NIC writes into our GPU memory are visible after a sync */
    }
    return rc ? rc : crc;
}

int fsh_coll_sync(struct fsh_team *t, const char *what)
{
    return sync_on(t, what, 0);
}

int fsh_coll_sync_fp(struct fsh_team *t, const char *what, uint16_t fp)
{
    return sync_on(t, what, fp);
}

int fsh_coll_finalize_sync(void)
{
    struct fsh_team fin = fsh_team_world;
    fin.nr = fsh_notify_final();
    return sync_on(&fin, "shmem_finalize", 0);
}

int fsh_coll_barrier_all(void)
{
    int rc = fsh_rma_quiet_all();
    return rc ? rc : fsh_coll_sync(&fsh_team_world, "shmem_barrier_all");
}

int fsh_coll_barrier_all_fp(uint16_t fp)
{
    int rc = fsh_rma_quiet_all();
    return rc ? rc : sync_on(&fsh_team_world, "shmem_barrier_all", fp);
}

int fsh_coll_sync_all(void)
{
    return fsh_coll_sync(&fsh_team_world, "shmem_sync_all");
}
