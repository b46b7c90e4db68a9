/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api_coll.c: the OpenSHMEM team and collective entry points (the untyped ones, and the
 * type-erased routines the generated typed ones in api_typed_coll.c call).
 *
 * Arguments are checked here, as everywhere in the API (api_check.h): a team that is
 * SHMEM_TEAM_INVALID, a root outside the team, a dest that is not symmetric for the whole
 * extent the call will write, or an active set that does not contain the caller ends the job
 * with the routine's name, the cause and the fix. The spec's soft failures (a split without a
 * free team slot, alltoallv without room) return nonzero instead. The deprecated active-set
 * forms run on a transient team (fsh_team_aset) after a synchronization of the set, so that
 * no member is still in the set's previous collective (all but the all-to-alls, which use
 * nothing that call could still hold); a broadcast or reduction over every PE in order runs
 * on the world team instead, with no sync (aset_team).
 *
 * Mismatched arguments are caught in two ways. By default, for free: each collective's
 * messages carry a fingerprint of its arguments (fp(), notify.h) that receivers compare, and
 * a difference ends the job naming both PEs' calls. With FABSHMEM_CHECK=1 also before any
 * data moves (check_same: one more exchange per argument, which costs a round trip).
 */
#include <errno.h>
#include <stdint.h>

#include <shmemx.h>

#include "api.h"
#include "api_check.h"
#include "backend.h"
#include "coll.h"
#include "error.h"
#include "fingerprint.h"
#include "log.h"
#include "notify.h"
#include "team.h"

/* ------------------------------------------------------------------ checks */

static void __attribute__((noreturn)) bad_team(const char *fn, shmem_team_t team)
{
    if (team == SHMEM_TEAM_INVALID) {
        fsh_init_fatal(fn, "pass a team this PE belongs to (a split returns SHMEM_TEAM_INVALID on PEs outside the new team)",
                       "team is SHMEM_TEAM_INVALID");
    }
    fsh_init_fatal(fn, "pass a team from a split that succeeded (or SHMEM_TEAM_WORLD/SHARED) and has not been destroyed",
                   "team %p %s", (void *)team, fsh_team_why(team));
}

static inline struct fsh_team *check_team(const char *fn, shmem_team_t team)
{
    running(fn);
    struct fsh_team *t = fsh_team_of(team);
    if (__builtin_expect(!t, 0)) {
        bad_team(fn, team);
    }
    return t;
}

/* The team of a handle for the routines the spec defines on SHMEM_TEAM_INVALID (NULL for
 * it); any other handle that names no live team ends the job. */
static struct fsh_team *team_or_invalid(const char *fn, shmem_team_t team)
{
    running(fn);
    return team == SHMEM_TEAM_INVALID ? NULL : check_team(fn, team);
}

static void check_out(const char *fn, const void *out, const char *what)
{
    if (!out) {
        fsh_init_fatal(fn, "pass the address of a variable to receive the result",
                       "%s is NULL", what);
    }
}

/* dest of alltoall and alltoallv may be in the device heap; of the others, not (yet).
 * A dest that receives nothing (len 0) is not looked at: OpenSHMEM 1.5 (annex "Undefined
 * Behavior") supports a null pointer with a zero count, and the collectives never address a
 * dest they write nothing into, so every PE still takes part in the call as usual. */
static enum fsh_seg check_dest_any(const char *fn, const void *dest, size_t len)
{
    enum fsh_seg seg = FSH_SEG_HEAP;
    uint64_t off;
    if (len > 0) {
        check_sym(fn, "dest", dest, len, &seg, &off);
    }
    return seg;
}

static void check_dest(const char *fn, const void *dest, size_t len)
{
    check_not_device(fn, "dest", check_dest_any(fn, dest, len));
}

/* The source of a collective other than all-to-all must be host memory: they copy with the CPU. */
static void check_host_source(const char *fn, const void *src, size_t len)
{
    check_local(fn, "source", src, len);
    enum fsh_seg seg = FSH_SEG_HEAP;
    uint64_t off;
    if (len && fsh_mr_lookup(src, len, &seg, &off) != 0) {
        seg = FSH_SEG_HEAP; /* private memory: device only if the driver says so */
    }
    if (len && fsh_backend_involved(seg, src)) {
        check_not_device(fn, "source", FSH_SEG_DEVICE);
    }
}

/* bytes * count, ending the job when it overflows. */
static size_t extent(const char *fn, size_t bytes, size_t count)
{
    size_t n = bytes_of(bytes, count);
    check_size(fn, n);
    return n;
}

/* FABSHMEM_CHECK: every member must pass the same value of arg (nelems, PE_root, a stride);
 * one exchange of words names the first member that differs, before any data moves. */
static void check_same(const char *fn, struct fsh_team *t, const char *arg, uint64_t v)
{
    if (__builtin_expect(!fsh_rt.checks, 1) || t->size == 1) {
        return;
    }
    struct fsh_coll_mismatch mm;
    int rc = fsh_coll_compare(t, v, &mm);
    done(fn, rc < 0 ? rc : 0);
    if (rc > 0) {
        fsh_init_fatal(fn, "every PE of the team (or active set) must pass the same nelems, PE_root and strides to a collective",
                       "PE %d passed %s %llu, PE %d passed %llu (FABSHMEM_CHECK)", fsh_rt.pe, arg,
                       (unsigned long long)v, mm.pe, (unsigned long long)mm.theirs);
    }
}

/* The call's fingerprint on team t (fingerprint.h): the collectives carry and compare it. */
static inline void fp(struct fsh_team *t, enum fsh_fp_kind kind, uint64_t a, uint64_t b,
                      uint64_t c, uint64_t d)
{
    t->fp = fsh_fingerprint_of(kind, a, b, c, d);
}

/* A broadcast that met another member's size: it moved no more than that member asked for;
 * name the sizes (as nelems) and return nonzero (the spec's failure return). */
static int size_mismatch(const char *fn, int rc, const struct fsh_coll_mismatch *mm,
                         size_t nelems, size_t esize)
{
    if (rc != 1 || mm->pe < 0) {
        return rc;
    }
    if (fsh_rt.checks) {
        fsh_init_fatal(fn, "every PE of the team (or active set) must pass the same nelems to a collective",
                       "PE %d passed nelems %zu, PE %d passed %llu (FABSHMEM_CHECK)", fsh_rt.pe,
                       nelems, mm->pe, (unsigned long long)(mm->theirs / esize));
    }
    unsigned long long theirs = mm->theirs / esize;
    FSH_WARN("%s: PE %d passed nelems %zu, PE %d passed %llu: only %llu moved to PE %d; every PE "
             "must pass the same nelems (FABSHMEM_CHECK=1 makes this fatal)", fn, fsh_rt.pe,
             nelems, mm->pe, theirs, theirs < nelems ? theirs : (unsigned long long)nelems,
             mm->pe);
    return 1;
}

/* The collective's return value: soft failures pass through, hard ones end the job. */
static inline int result(const char *fn, int rc)
{
    if (rc < 0) {
        done(fn, rc);
    }
    return rc;
}

/* ------------------------------------------------------------------ teams */

FSH_PROFILED(shmem_team_my_pe)
int pshmem_team_my_pe(shmem_team_t team)
{
    struct fsh_team *t = team_or_invalid(FSH_FN, team);
    return t ? t->my_pe : -1;
}

FSH_PROFILED(shmem_team_n_pes)
int pshmem_team_n_pes(shmem_team_t team)
{
    struct fsh_team *t = team_or_invalid(FSH_FN, team);
    return t ? t->size : -1;
}

FSH_PROFILED(shmem_team_get_config)
int pshmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    struct fsh_team *t = team_or_invalid(FSH_FN, team);
    if (!t || !config) {
        return -1;
    }
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS) {
        config->num_contexts = t->config.num_contexts;
    }
    return 0;
}

FSH_PROFILED(shmem_team_translate_pe)
int pshmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    struct fsh_team *s = team_or_invalid(FSH_FN, src_team);
    struct fsh_team *d = team_or_invalid(FSH_FN, dest_team);
    if (!s || !d || src_pe < 0 || src_pe >= s->size) {
        return -1;
    }
    return fsh_team_index(d, fsh_team_world_pe(s, src_pe));
}

FSH_PROFILED(shmem_team_split_strided)
int pshmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team)
{
    running(FSH_FN);
    check_out(FSH_FN, new_team, "new_team");
    *new_team = SHMEM_TEAM_INVALID;
    struct fsh_team *p = team_or_invalid(FSH_FN, parent_team);
    if (!p) {
        return 1;
    }
    struct fsh_team *t;
    int rc = result(FSH_FN, fsh_team_split_strided(p, start, stride, size, config,
                                                     config_mask, &t));
    if (rc == 0 && t) {
        *new_team = (shmem_team_t)t->handle;
    }
    return rc;
}

FSH_PROFILED(shmem_team_split_2d)
int pshmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team)
{
    running(FSH_FN);
    check_out(FSH_FN, xaxis_team, "xaxis_team");
    check_out(FSH_FN, yaxis_team, "yaxis_team");
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    struct fsh_team *p = team_or_invalid(FSH_FN, parent_team);
    if (!p) {
        return 1;
    }
    struct fsh_team *x, *y;
    int rc = result(FSH_FN, fsh_team_split_2d(p, xrange, xaxis_config, xaxis_mask,
                                                &x, yaxis_config, yaxis_mask, &y));
    if (rc == 0) {
        *xaxis_team = x ? (shmem_team_t)x->handle : SHMEM_TEAM_INVALID;
        *yaxis_team = y ? (shmem_team_t)y->handle : SHMEM_TEAM_INVALID;
    }
    return rc;
}

FSH_PROFILED(shmem_team_destroy)
void pshmem_team_destroy(shmem_team_t team)
{
    struct fsh_team *t = team_or_invalid(FSH_FN, team);
    if (!t) {
        return; /* the spec: no operation on SHMEM_TEAM_INVALID */
    }
    if (t->predefined) {
        fsh_init_fatal(FSH_FN, "destroy only teams made by shmem_team_split_strided or shmem_team_split_2d",
                       "%s cannot be destroyed",
                       team == SHMEM_TEAM_WORLD ? "SHMEM_TEAM_WORLD" : "SHMEM_TEAM_SHARED");
    }
    /* The spec: destroy takes the team's shareable contexts with it; private ones are the
     * owning threads' to destroy first. */
    int priv = fsh_rma_ctx_count_on(t, SHMEM_CTX_PRIVATE);
    if (priv > 0) {
        fsh_init_fatal(FSH_FN, "destroy the contexts created on the team with SHMEM_CTX_PRIVATE (shmem_ctx_destroy) before the team",
                       "%d private context(s) created on this team still exist", priv);
    }
    done(FSH_FN, fsh_rma_ctx_destroy_on(t));
    fsh_team_destroy(t);
}

FSH_PROFILED(shmem_team_create_ctx)
int pshmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    running(FSH_FN);
    check_out(FSH_FN, ctx, "ctx");
    struct fsh_team *t = team_or_invalid(FSH_FN, team);
    if (!t) {
        *ctx = SHMEM_CTX_INVALID;
        return 1;
    }
    if (t == &fsh_team_world) {
        return fsh_api_ctx_create(FSH_FN, options, NULL, NULL, ctx);
    }
    return fsh_api_ctx_create(FSH_FN, options, t, &t->lanes, ctx);
}

FSH_PROFILED(shmem_team_sync)
int pshmem_team_sync(shmem_team_t team)
{
    struct fsh_team *t = check_team(FSH_FN, team);
    return result(FSH_FN, fsh_coll_sync(t, FSH_FN));
}

FSH_PROFILED(shmem_team_ptr)
void *pshmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    struct fsh_team *t = check_team(FSH_FN, team);
    if (pe < 0 || pe >= t->size) {
        return NULL;
    }
    return pshmem_ptr(dest, fsh_team_world_pe(t, pe));
}

/* ------------------------------------------------------------------ type-erased collectives */

int fsh_api_alltoall(const char *fn, shmem_team_t team, void *dest, const void *src,
                     size_t nelems, size_t esize)
{
    struct fsh_team *t = check_team(fn, team);
    size_t bytes = extent(fn, nelems, esize);
    check_dest_any(fn, dest, extent(fn, bytes, (size_t)t->size));
    check_local(fn, "source", src, bytes);
    check_same(fn, t, "nelems", nelems);
    fp(t, FSH_FP_ALLTOALL, nelems, esize, 0, 0);
    return result(fn, fsh_coll_alltoall(t, dest, src, bytes));
}

int fsh_api_alltoalls(const char *fn, shmem_team_t team, void *dest, const void *src,
                      ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize)
{
    struct fsh_team *t = check_team(fn, team);
    if (dst < 1 || sst < 1) {
        fsh_init_fatal(fn, "pass strides of at least 1 element", "dst %td, sst %td", dst, sst);
    }
    size_t n = extent(fn, nelems, (size_t)t->size);
    if (n > 0) {
        check_dest(fn, dest, extent(fn, extent(fn, n - 1, (size_t)dst) + 1, esize));
        check_local(fn, "source", src, 1);
    }
    check_same(fn, t, "nelems", nelems);
    check_same(fn, t, "dst", (uint64_t)dst);
    check_same(fn, t, "sst", (uint64_t)sst);
    fp(t, FSH_FP_ALLTOALLS, nelems, (uint64_t)dst, (uint64_t)sst, esize);
    return result(fn, fsh_coll_alltoalls(t, dest, src, dst, sst, nelems, esize));
}

int fsh_api_broadcast(const char *fn, shmem_team_t team, void *dest, const void *src,
                      size_t nelems, int root, size_t esize)
{
    struct fsh_team *t = check_team(fn, team);
    if (root < 0 || root >= t->size) {
        fsh_init_fatal(fn, "PE_root is a PE number of the team: 0..shmem_team_n_pes(team)-1",
                       "PE_root %d out of range [0,%d)", root, t->size);
    }
    size_t bytes = extent(fn, nelems, esize);
    check_dest(fn, dest, bytes);
    if (t->my_pe == root) {
        check_host_source(fn, src, bytes);
    }
    check_same(fn, t, "nelems", nelems);
    check_same(fn, t, "PE_root", (uint64_t)root);
    fp(t, FSH_FP_BCAST, nelems, (uint64_t)root, esize, 0);
    struct fsh_coll_mismatch mm;
    int rc = fsh_coll_broadcast(t, dest, src, bytes, root, true, &mm);
    return result(fn, size_mismatch(fn, rc, &mm, nelems, esize));
}

int fsh_api_collect(const char *fn, shmem_team_t team, void *dest, const void *src,
                    size_t nelems, size_t esize, int fixed)
{
    struct fsh_team *t = check_team(fn, team);
    size_t bytes = extent(fn, nelems, esize);
    check_host_source(fn, src, bytes);
    if (fixed) {
        check_dest(fn, dest, extent(fn, bytes, (size_t)t->size));
        check_same(fn, t, "nelems", nelems);
        fp(t, FSH_FP_FCOLLECT, nelems, esize, 0, 0);
        return result(fn, fsh_coll_fcollect(t, dest, src, bytes));
    }
    check_dest(fn, dest, bytes);
    return result(fn, fsh_coll_collect(t, dest, src, bytes));
}

int fsh_api_reduce(const char *fn, shmem_team_t team, void *dest, const void *src,
                   size_t nreduce, size_t esize, int type, int op)
{
    struct fsh_team *t = check_team(fn, team);
    size_t bytes = extent(fn, nreduce, esize);
    check_dest(fn, dest, bytes);
    check_host_source(fn, src, bytes);
    check_same(fn, t, "nreduce", nreduce);
    fp(t, FSH_FP_REDUCE, nreduce, (uint64_t)type, (uint64_t)op, esize);
    return result(fn, fsh_coll_reduce(t, dest, src, nreduce, (enum fsh_red_type)type,
                                      (enum fsh_red_op)op));
}

int fsh_api_alltoallv(const char *fn, shmem_team_t team, void *dest, size_t dest_nelems,
                      const void *src, const size_t *send_counts, const size_t *send_displs,
                      size_t *recv_counts, size_t *recv_displs, size_t esize)
{
    struct fsh_team *t = check_team(fn, team);
    if (!send_counts || !send_displs || !recv_counts || !recv_displs) {
        fsh_init_fatal(fn, "pass four arrays of shmem_team_n_pes(team) entries",
                       "a count or displacement array is NULL");
    }
    /* Senders address their blocks through their own dest, so alltoallv needs one even where
     * nothing moves (a NULL dest with zero counts is not supported here yet). */
    size_t room = extent(fn, dest_nelems, esize);
    check_dest_any(fn, dest, room ? room : 1);
    for (int k = 0; k < t->size; k++) {
        check_size(fn, extent(fn, send_displs[k], esize));
        check_size(fn, extent(fn, send_counts[k], esize));
        check_local(fn, "source", src, send_counts[k]);
    }
    t->fp = 0; /* its counts legitimately differ; its device path's sync carries none */
    return result(fn, fsh_coll_alltoallv(t, dest, dest_nelems, src, send_counts, send_displs,
                                         recv_counts, recv_displs, esize));
}

/* The team an active-set collective runs on: the world team itself when the set is every PE
 * in order (PE_start 0, PE_size npes: what most 1.4 codes pass), else a transient team on the
 * active-set region (*world false), which must start with a sync of the set. The world
 * team's steps and scratch serve every PE's calls in one order, whatever form they use, so the
 * set needs no sync there: the collective's own exchanges order it, as for a team call. */
static struct fsh_team *aset_team(const char *fn, struct fsh_team *t, int start, int log_stride,
                                  int size, bool *world)
{
    done(fn, fsh_team_aset(t, start, log_stride, size));
    *world = start == 0 && size == fsh_team_world.size && size > 1;
    return *world ? &fsh_team_world : t;
}

void fsh_api_to_all(const char *fn, void *dest, const void *src, int nreduce, int start,
                    int log_stride, int size, size_t esize, int type, int op)
{
    struct fsh_team aset;
    bool world;
    running(fn);
    struct fsh_team *t = aset_team(fn, &aset, start, log_stride, size, &world);
    if (nreduce < 0) {
        fsh_init_fatal(fn, "pass nreduce >= 0", "nreduce is %d", nreduce);
    }
    size_t bytes = extent(fn, (size_t)nreduce, esize);
    check_dest(fn, dest, bytes);
    check_host_source(fn, src, bytes);
    if (!world) {
        done(fn, fsh_coll_sync(t, fn));
    }
    check_same(fn, t, "nreduce", (uint64_t)nreduce);
    fp(t, FSH_FP_REDUCE, (uint64_t)nreduce, (uint64_t)type, (uint64_t)op, esize);
    done(fn, fsh_coll_reduce(t, dest, src, (size_t)nreduce, (enum fsh_red_type)type,
                             (enum fsh_red_op)op));
}

/* ------------------------------------------------------------------ untyped collectives */

FSH_PROFILED(shmem_alltoallmem)
int pshmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return fsh_api_alltoall(FSH_FN, team, dest, source, nelems, 1);
}

FSH_PROFILED(shmem_alltoallsmem)
int pshmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems)
{
    return fsh_api_alltoalls(FSH_FN, team, dest, source, dst, sst, nelems, 1);
}

FSH_PROFILED(shmem_broadcastmem)
int pshmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root)
{
    return fsh_api_broadcast(FSH_FN, team, dest, source, nelems, PE_root, 1);
}

FSH_PROFILED(shmem_collectmem)
int pshmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return fsh_api_collect(FSH_FN, team, dest, source, nelems, 1, 0);
}

FSH_PROFILED(shmem_fcollectmem)
int pshmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return fsh_api_collect(FSH_FN, team, dest, source, nelems, 1, 1);
}

int shmemx_alltoallvmem(shmem_team_t team, void *dest, size_t dest_size, const void *source,
                        const size_t *send_counts, const size_t *send_displs,
                        size_t *recv_counts, size_t *recv_displs)
{
    return fsh_api_alltoallv(__func__, team, dest, dest_size, source, send_counts, send_displs,
                             recv_counts, recv_displs, 1);
}

/* ------------------------------------------------------------------ deprecated active-set forms */

FSH_PROFILED(shmem_barrier)
void pshmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    struct fsh_team t;
    running(FSH_FN);
    done(FSH_FN, fsh_team_aset(&t, PE_start, logPE_stride, PE_size));
    done(FSH_FN, fsh_rma_quiet_all());
    done(FSH_FN, fsh_coll_sync(&t, FSH_FN));
}

/* (shmem_sync is also the C11 macro that picks the team form; the alias is not expanded, being
 * followed by no parenthesis.) */
FSH_PROFILED(shmem_sync)
void pshmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    struct fsh_team t;
    running(FSH_FN);
    done(FSH_FN, fsh_team_aset(&t, PE_start, logPE_stride, PE_size));
    done(FSH_FN, fsh_coll_sync(&t, FSH_FN));
}

static void aset_alltoalls(const char *fn, void *dest, const void *source, ptrdiff_t dst,
                           ptrdiff_t sst, size_t nelems, size_t esize, int start, int log_stride,
                           int size)
{
    struct fsh_team t;
    running(fn);
    done(fn, fsh_team_aset(&t, start, log_stride, size));
    if (dst < 1 || sst < 1) {
        fsh_init_fatal(fn, "pass strides of at least 1 element", "dst %td, sst %td", dst, sst);
    }
    size_t n = extent(fn, nelems, (size_t)size);
    if (n > 0) {
        check_dest(fn, dest, extent(fn, extent(fn, n - 1, (size_t)dst) + 1, esize));
        check_host_source(fn, source, 1);
    }
    /* An all-to-all writes only into dest and counts its arrivals per pair of PEs, which stay
     * exact across sets (notify.c): it needs neither the set's step numbering nor its scratch,
     * so the sync the other forms start with would only cost a round (dest's readiness is the
     * caller's rule, as for a team). FABSHMEM_CHECK's comparisons use steps: they keep it. */
    if (fsh_rt.checks) {
        done(fn, fsh_coll_sync(&t, fn));
    }
    check_same(fn, &t, "nelems", nelems);
    check_same(fn, &t, "dst", (uint64_t)dst);
    check_same(fn, &t, "sst", (uint64_t)sst);
    fp(&t, FSH_FP_ALLTOALLS, nelems, (uint64_t)dst, (uint64_t)sst, esize);
    done(fn, fsh_coll_alltoalls(&t, dest, source, dst, sst, nelems, esize));
}

static void aset_broadcast(const char *fn, void *dest, const void *source, size_t nelems,
                           int root, size_t esize, int start, int log_stride, int size)
{
    struct fsh_team aset;
    bool world;
    running(fn);
    struct fsh_team *t = aset_team(fn, &aset, start, log_stride, size, &world);
    if (root < 0 || root >= size) {
        fsh_init_fatal(fn, "PE_root is an index into the active set: 0..PE_size-1",
                       "PE_root %d out of range [0,%d)", root, size);
    }
    size_t bytes = extent(fn, nelems, esize);
    check_dest(fn, dest, bytes);
    if (!world) {
        done(fn, fsh_coll_sync(t, fn));
    }
    check_same(fn, t, "nelems", nelems);
    check_same(fn, t, "PE_root", (uint64_t)root);
    fp(t, FSH_FP_BCAST, nelems, (uint64_t)root, esize, 0);
    struct fsh_coll_mismatch mm;
    int rc = fsh_coll_broadcast(t, dest, source, bytes, root, false, &mm);
    rc = size_mismatch(fn, rc, &mm, nelems, esize);
    done(fn, rc < 0 ? rc : 0);
}

static void aset_collect(const char *fn, void *dest, const void *source, size_t nelems,
                         size_t esize, int fixed, int start, int log_stride, int size)
{
    struct fsh_team t;
    running(fn);
    done(fn, fsh_team_aset(&t, start, log_stride, size));
    size_t bytes = extent(fn, nelems, esize);
    check_host_source(fn, source, bytes);
    check_dest(fn, dest, fixed ? extent(fn, bytes, (size_t)size) : bytes);
    done(fn, fsh_coll_sync(&t, fn));
    if (fixed) {
        check_same(fn, &t, "nelems", nelems);
    }
    t.fp = 0;
    if (fixed) {
        fp(&t, FSH_FP_FCOLLECT, nelems, esize, 0, 0);
    }
    done(fn, fixed ? fsh_coll_fcollect(&t, dest, source, bytes)
                   : fsh_coll_collect(&t, dest, source, bytes));
}

#define FSH_DEF_ASET_COLL(BITS)                                                                  \
    FSH_PROFILED(shmem_alltoall##BITS)                                                           \
    void pshmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start,      \
                              int logPE_stride, int PE_size, long *pSync)                        \
    {                                                                                            \
        (void)pSync;                                                                             \
        aset_alltoalls(FSH_FN, dest, source, 1, 1, nelems, BITS / 8, PE_start, logPE_stride,     \
                       PE_size);                                                                 \
    }                                                                                            \
    FSH_PROFILED(shmem_alltoalls##BITS)                                                          \
    void pshmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,    \
                               size_t nelems, int PE_start, int logPE_stride, int PE_size,       \
                               long *pSync)                                                      \
    {                                                                                            \
        (void)pSync;                                                                             \
        aset_alltoalls(FSH_FN, dest, source, dst, sst, nelems, BITS / 8, PE_start,               \
                       logPE_stride, PE_size);                                                   \
    }                                                                                            \
    FSH_PROFILED(shmem_broadcast##BITS)                                                          \
    void pshmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root,      \
                               int PE_start, int logPE_stride, int PE_size, long *pSync)         \
    {                                                                                            \
        (void)pSync;                                                                             \
        aset_broadcast(FSH_FN, dest, source, nelems, PE_root, BITS / 8, PE_start,                \
                       logPE_stride, PE_size);                                                   \
    }                                                                                            \
    FSH_PROFILED(shmem_collect##BITS)                                                            \
    void pshmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start,       \
                             int logPE_stride, int PE_size, long *pSync)                         \
    {                                                                                            \
        (void)pSync;                                                                             \
        aset_collect(FSH_FN, dest, source, nelems, BITS / 8, 0, PE_start, logPE_stride,          \
                     PE_size);                                                                   \
    }                                                                                            \
    FSH_PROFILED(shmem_fcollect##BITS)                                                           \
    void pshmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start,      \
                              int logPE_stride, int PE_size, long *pSync)                        \
    {                                                                                            \
        (void)pSync;                                                                             \
        aset_collect(FSH_FN, dest, source, nelems, BITS / 8, 1, PE_start, logPE_stride,          \
                     PE_size);                                                                   \
    }
FSH_DEF_ASET_COLL(32)
FSH_DEF_ASET_COLL(64)
