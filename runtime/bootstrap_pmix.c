/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bootstrap_pmix.c: the job's identity and the address exchange through PMIx.
 *
 * Reads rank, size, local rank/size, node id and node count; an all-gather is one
 * PMIx_Put/Commit/Fence(collect data) followed by a local PMIx_Get per peer (the fence already
 * brought the data here). What a node's PEs share (the topology) is one PMIx_Put of local
 * scope by the node's leader; a peer's PMIx_Get of it is held by the local PMIx server until
 * the leader commits, so no fence is needed for it. PMIx status codes are translated here and nowhere else. Every fence
 * carries PMIX_TIMEOUT so a PE that never arrives ends the job with a message instead of a hang.
 *
 * The launcher's death is watched: PMIx raises PMIX_ERR_LOST_CONNECTION on its own thread about
 * a second after the server (mpirun, orted, slurmstepd) is gone, whatever this PE is doing; the
 * handler ends the PE (fsh_boot_lost), since no launcher is left to end it and its peers.
 * Measured under Open MPI 4.1.4 / OpenPMIx 4.2.2: that event arrives; no event at all arrives
 * for a peer's death (the launcher ends the job itself, unless told not to).
 */
#include <errno.h>
#include <pmix.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "error.h"
#include "log.h"

/* Seconds a PE waits in PMIx_Abort for the launcher to end it before it ends itself. */
#define ABORT_GRACE_S 10

static pmix_proc_t me;
static int initialized;
static unsigned exchange_seq;
static size_t lost_ref;
static int lost_registered;
static int leaving; /* finalize or abort under way: the connection closes on purpose */

static int pmix_to_errno(pmix_status_t rc)
{
    switch (rc) {
    case PMIX_SUCCESS: return 0;
    case PMIX_ERR_TIMEOUT: return -ETIMEDOUT;
    case PMIX_ERR_NOMEM: return -ENOMEM;
    case PMIX_ERR_NOT_FOUND: return -ENOENT;
    case PMIX_ERR_UNREACH: return -EHOSTUNREACH;
    default: return -EIO;
    }
}

/* PMIx reports job attributes with different integer widths; accept any of them. */
static int get_int(const pmix_proc_t *proc, const char *key, int *out)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) {
        return fsh_err(pmix_to_errno(rc), "check that the launcher supports PMIx (mpirun, srun --mpi=pmix, prterun)",
                       "PMIx_Get(%s) failed: %s", key, PMIx_Error_string(rc));
    }
    int ok = 1;
    switch (val->type) {
    case PMIX_UINT32: *out = (int)val->data.uint32; break;
    case PMIX_UINT16: *out = (int)val->data.uint16; break;
    case PMIX_INT: *out = val->data.integer; break;
    case PMIX_UINT: *out = (int)val->data.uint; break;
    case PMIX_INT32: *out = (int)val->data.int32; break;
    case PMIX_UINT64: *out = (int)val->data.uint64; break;
    case PMIX_PROC_RANK: *out = (int)val->data.rank; break;
    default: ok = 0; break;
    }
    PMIX_VALUE_RELEASE(val);
    if (!ok) {
        return fsh_err(-EPROTO, "report this launcher and PMIx version", "PMIx key %s has unexpected type", key);
    }
    return 0;
}

/* The lowest rank of PMIX_LOCAL_PEERS ("3,4,5"), or -1 when the launcher does not say. */
static int node_leader(void)
{
    pmix_proc_t job = me;
    job.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *val = NULL;
    if (PMIx_Get(&job, PMIX_LOCAL_PEERS, NULL, 0, &val) != PMIX_SUCCESS) {
        return -1;
    }
    long low = -1;
    if (val->type == PMIX_STRING && val->data.string) {
        for (const char *p = val->data.string; *p;) {
            char *end;
            long r = strtol(p, &end, 10);
            if (end == p) {
                break;
            }
            low = (low < 0 || r < low) ? r : low;
            p = *end == ',' ? end + 1 : end;
        }
    }
    PMIX_VALUE_RELEASE(val);
    return (int)low;
}

static void lost(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                 size_t ninfo, pmix_info_t *results, size_t nresults,
                 pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (!__atomic_load_n(&leaving, __ATOMIC_ACQUIRE)) {
        fsh_boot_lost();
    }
    if (cbfunc) {
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
    }
}

static void watch_launcher(void)
{
    pmix_status_t codes[] = {PMIX_ERR_LOST_CONNECTION, PMIX_ERR_LOST_CONNECTION_TO_SERVER};
    pmix_status_t rc = PMIx_Register_event_handler(codes, sizeof(codes) / sizeof(codes[0]), NULL,
                                                   0, lost, NULL, NULL);
    if (rc < 0) {
        FSH_WARN("PMIx_Register_event_handler: %s; a PE will not notice its launcher's death",
                 PMIx_Error_string(rc));
        return;
    }
    lost_ref = (size_t)rc;
    lost_registered = 1;
}

/* PMIx stays up from the first shmem_init to the process's end (pmix_fini at exit), so that
 * a program may initialize OpenSHMEM again after shmem_finalize (1.6): a client that finalized
 * PMIx cannot rejoin its job, and a launcher takes a process that exits without PMIx_Finalize
 * for one that died. A later init only reads the job's identity again. */
static int pmix_init(struct fsh_boot_info *info)
{
    if (!initialized) {
        pmix_status_t rc = PMIx_Init(&me, NULL, 0);
        if (rc != PMIX_SUCCESS) {
            /* No launcher: the caller falls back to a singleton. PMIx_Init may still have set
             * up some state; release it. */
            PMIx_Finalize(NULL, 0);
            return pmix_to_errno(rc);
        }
        initialized = 1;
        __atomic_store_n(&leaving, 0, __ATOMIC_RELEASE);
        watch_launcher();
    }
    pmix_proc_t job = me;
    job.rank = PMIX_RANK_WILDCARD;
    memset(info, 0, sizeof(*info));
    info->rank = (int)me.rank;
    int err = get_int(&job, PMIX_JOB_SIZE, &info->size);
    if (err == 0) {
        err = get_int(&me, PMIX_LOCAL_RANK, &info->local_rank);
    }
    if (err == 0) {
        err = get_int(&job, PMIX_LOCAL_SIZE, &info->local_size);
    }
    if (err == 0 && get_int(&me, PMIX_NODEID, &info->node_id) != 0) {
        fsh_err_clear();
        info->node_id = 0;
    }
    if (err == 0 && get_int(&job, PMIX_NUM_NODES, &info->num_nodes) != 0) {
        fsh_err_clear();
        info->num_nodes = (info->local_size == info->size) ? 1 : 0; /* 0: unknown, >1 */
    }
    info->node_leader = err == 0 ? node_leader() : -1;
    return err;
}

struct fence_wait {
    volatile int done;
    pmix_status_t status;
};

static void fence_done(pmix_status_t status, void *cbdata)
{
    struct fence_wait *w = cbdata;
    w->status = status;
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

/* A fence, collecting data or not. Without progress it blocks in PMIx; with progress it uses
 * the non-blocking fence and runs progress() until PMIx calls back. PMIX_TIMEOUT bounds both. */
static int fence_impl(int collect, double timeout_s, void (*progress)(void))
{
    pmix_info_t info[2];
    size_t ninfo = 0;
    bool flag = collect ? true : false;
    int timeout = (timeout_s > 0 && timeout_s < 2e9) ? (int)(timeout_s + 0.999) : 0;
    PMIX_INFO_LOAD(&info[ninfo], PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    ninfo++;
    if (timeout > 0) {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_TIMEOUT, &timeout, PMIX_INT);
        ninfo++;
    }
    pmix_status_t rc;
    if (!progress) {
        rc = PMIx_Fence(NULL, 0, info, ninfo);
    } else {
        struct fence_wait w = {0, PMIX_SUCCESS};
        rc = PMIx_Fence_nb(NULL, 0, info, ninfo, fence_done, &w);
        if (rc == PMIX_SUCCESS) {
            while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE)) {
                progress();
                sched_yield();
            }
            rc = w.status;
        }
    }
    for (size_t i = 0; i < ninfo; i++) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    if (rc != PMIX_SUCCESS) {
        return fsh_err(pmix_to_errno(rc),
                       rc == PMIX_ERR_TIMEOUT ? "a PE did not reach shmem_init/shmem_finalize in time: check that every PE calls it; raise FABSHMEM_TIMEOUT for slow starts"
                                              : "a PE may have died; see the launcher's messages",
                       "PMIx_Fence failed: %s", PMIx_Error_string(rc));
    }
    return 0;
}

/* Publish len bytes under key (PMIX_GLOBAL: the job; PMIX_LOCAL: this node's PEs). */
static int put_bytes(pmix_scope_t scope, const char *key, const void *data, size_t len)
{
    pmix_value_t val;
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)data;
    val.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(scope, key, &val);
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Commit();
    }
    if (rc != PMIX_SUCCESS) {
        return fsh_err(pmix_to_errno(rc), "see the launcher's messages",
                       "PMIx_Put/Commit of %s (%zu bytes) failed: %s", key, len,
                       PMIx_Error_string(rc));
    }
    return 0;
}

static int pmix_allgather(const void *mine, size_t len, void *all, double timeout_s)
{
    char key[PMIX_MAX_KEYLEN];
    snprintf(key, sizeof(key), "fabshmem.x%u", exchange_seq++);
    int err = put_bytes(PMIX_GLOBAL, key, mine, len);
    if (err != 0) {
        return err;
    }
    pmix_status_t rc;
    err = fence_impl(1, timeout_s, NULL);
    if (err != 0) {
        return err;
    }
    pmix_proc_t job = me;
    pmix_value_t *v = NULL;
    uint32_t size = 0;
    job.rank = PMIX_RANK_WILDCARD;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc == PMIX_SUCCESS) {
        size = v->data.uint32;
        PMIX_VALUE_RELEASE(v);
    }
    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t peer = me;
        peer.rank = r;
        rc = PMIx_Get(&peer, key, NULL, 0, &v);
        if (rc != PMIX_SUCCESS) {
            return fsh_err(pmix_to_errno(rc), "see the launcher's messages",
                           "PMIx_Get of PE %u's %s failed: %s", r, key, PMIx_Error_string(rc));
        }
        if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != len) {
            size_t got = v->data.bo.size;
            PMIX_VALUE_RELEASE(v);
            return fsh_err(-EPROTO, "all PEs must run the same fabshmem build and configuration",
                           "PE %u published %zu bytes, expected %zu", r, got, len);
        }
        memcpy((char *)all + (size_t)r * len, v->data.bo.bytes, len);
        PMIX_VALUE_RELEASE(v);
    }
    return 0;
}

static int pmix_node_publish(const char *key, const void *data, size_t len)
{
    return put_bytes(PMIX_LOCAL, key, data, len);
}

static int pmix_node_fetch(int leader, const char *key, void **data, size_t *len,
                           double timeout_s)
{
    *data = NULL;
    *len = 0;
    pmix_proc_t from = me;
    from.rank = (pmix_rank_t)leader;
    pmix_info_t info;
    size_t ninfo = 0;
    int timeout = (timeout_s > 0 && timeout_s < 2e9) ? (int)(timeout_s + 0.999) : 0;
    if (timeout > 0) {
        PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
        ninfo = 1;
    }
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&from, key, ninfo ? &info : NULL, ninfo, &v);
    if (ninfo) {
        PMIX_INFO_DESTRUCT(&info);
    }
    if (rc != PMIX_SUCCESS) {
        return fsh_err(pmix_to_errno(rc), "see the launcher's messages; raise FABSHMEM_TIMEOUT for slow starts",
                       "PMIx_Get of PE %d's %s failed: %s", leader, key, PMIx_Error_string(rc));
    }
    int err = 0;
    if (v->type != PMIX_BYTE_OBJECT) {
        err = fsh_err(-EPROTO, "all PEs must run the same fabshmem build",
                      "PE %d's %s is not a byte object", leader, key);
    } else if (v->data.bo.size > 0) {
        *data = malloc(v->data.bo.size);
        if (!*data) {
            err = fsh_err(-ENOMEM, "", "out of memory for %zu bytes of %s", v->data.bo.size, key);
        } else {
            memcpy(*data, v->data.bo.bytes, v->data.bo.size);
            *len = v->data.bo.size;
        }
    }
    PMIX_VALUE_RELEASE(v);
    return err;
}

static int pmix_fence(double timeout_s, void (*progress)(void))
{
    return fence_impl(0, timeout_s, progress);
}

static void __attribute__((noreturn)) pmix_abort(int status, const char *msg)
{
    if (initialized) {
        /* Ends every PE of the job through the launcher. A launcher that cannot act (its
         * daemon on this host cut off from mpirun) may never answer: SIGALRM's default action
         * ends this process after ABORT_GRACE_S seconds, so no PE outlives a failed job. */
        __atomic_store_n(&leaving, 1, __ATOMIC_RELEASE);
        signal(SIGALRM, SIG_DFL);
        alarm(ABORT_GRACE_S);
        /* The status as given, 0 included: Open MPI 4.1's mpirun then ends the other PEs and
         * exits with it (quietly for 0), as shmem_global_exit(0) must. */
        PMIx_Abort(status, msg, NULL, 0);
    }
    _exit(status);
}

static void pmix_fini(void)
{
    if (initialized) {
        __atomic_store_n(&leaving, 1, __ATOMIC_RELEASE);
        if (lost_registered) {
            PMIx_Deregister_event_handler(lost_ref, NULL, NULL);
            lost_registered = 0;
        }
        /* A launcher that does not hear of it takes the process for one that died ("exiting
         * improperly"): say so if PMIx could not tell it. */
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        if (rc != PMIX_SUCCESS) {
            FSH_WARN("PMIx_Finalize failed (%s): the launcher may report this PE as having "
                     "exited improperly", PMIx_Error_string(rc));
        }
        initialized = 0;
    }
}

const struct fsh_boot_ops fsh_boot_pmix_ops = {
    .name = "pmix",
    .init = pmix_init,
    .allgather = pmix_allgather,
    .fence = pmix_fence,
    .node_publish = pmix_node_publish,
    .node_fetch = pmix_node_fetch,
    .abort = pmix_abort,
    .fini = pmix_fini,
};
