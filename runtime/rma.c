/*
 * rma.c: puts and gets as libfabric RMA writes and reads.
 *
 * Owns the posting of data operations and their completion accounting per context. Rules kept
 * here:
 *  - No ordering between operations is assumed (EFA's SRD delivers out of order). Quiet waits
 *    for the completion of every operation of the context, and those are requested with
 *    FI_DELIVERY_COMPLETE where the provider has it: complete means visible at the target.
 *  - A put small enough is injected (FI_INJECT): the source may be reused at once, and the
 *    operation still completes later, which quiet counts.
 *  - A transfer larger than the provider's message size is split into pieces.
 *  - -FI_EAGAIN means "make progress and retry"; the retry loop is bounded by FABSHMEM_TIMEOUT.
 *  - Local buffers get a descriptor when the provider needs one (FI_MR_LOCAL): the segment's, or
 *    a temporary registration released when the operation completes.
 * It never reads the CQ itself (progress.c does) and never blocks except through
 * fsh_progress_wait*.
 */
#include "rma.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <string.h>

#include "error.h"
#include "fabric.h"
#include "log.h"

struct fsh_ctx fsh_ctx_default;

/* Post one piece: a write (optionally with immediate data) or a read. */
static int post(struct fsh_ctx *ctx, struct fsh_op_track *sync, int kind, void *local, size_t len,
                int pe, uint64_t raddr, uint64_t key, uint32_t imm)
{
    const struct fsh_fabric_attr *fa = fsh_fabric_attr();
    bool write = kind != FSH_OP_GET;
    bool inject = write && len <= fa->inject_size;
    void *desc = NULL;
    struct fid_mr *tmp = NULL;
    if (!inject && fa->mr_local) {
        int rc = fsh_mr_desc(local, len, &desc, &tmp);
        if (rc != 0) {
            return rc;
        }
    }
    struct fsh_op *op = fsh_progress_op_get(kind, pe, len);
    if (!op) {
        if (tmp) {
            fi_close(&tmp->fid);
        }
        return fsh_err_last() ? fsh_err_last()->code : -EIO;
    }
    op->track = &ctx->track;
    op->sync = sync;
    op->tmp_mr = tmp;

    struct iovec iov = {.iov_base = local, .iov_len = len};
    struct fi_rma_iov rma = {.addr = raddr, .len = len, .key = key};
    struct fi_msg_rma msg = {
        .msg_iov = &iov,
        .desc = &desc,
        .iov_count = 1,
        .addr = fsh_fabric_peer(pe),
        .rma_iov = &rma,
        .rma_iov_count = 1,
        .context = op,
        .data = imm,
    };
    uint64_t flags = FI_COMPLETION;
    if (write) {
        flags |= fa->delivery_complete ? FI_DELIVERY_COMPLETE : 0;
        flags |= inject ? FI_INJECT : 0;
        flags |= (kind == FSH_OP_PUT_IMM) ? FI_REMOTE_CQ_DATA : 0;
    }
    double start = 0;
    int err = 0;
    for (;;) {
        ssize_t rc = write ? fi_writemsg(fsh_fabric_ep(), &msg, flags)
                           : fi_readmsg(fsh_fabric_ep(), &msg, flags);
        if (rc == 0) {
            break;
        }
        if (rc != -FI_EAGAIN) {
            err = fsh_err((int)rc, "FABSHMEM_LOG=debug and FI_LOG_LEVEL=warn show the provider's view",
                          "posting a %s of %zu bytes to PE %d failed: %s",
                          write ? "write" : "read", len, pe, fi_strerror((int)-rc));
            goto release_op;
        }
        /* The provider's queue is full: drain completions, then retry. */
        err = fsh_progress_poll();
        if (err == 0) {
            err = fsh_progress_backoff(&start, write ? "put: provider queue full"
                                                     : "get: provider queue full", pe);
        }
        if (err < 0) {
            goto release_op;
        }
    }
    ctx->track.posted++;
    if (sync) {
        sync->posted++;
    }
    return 0;

release_op:
    op->tmp_mr = NULL;
    fsh_progress_op_put(op);
    if (tmp) {
        fi_close(&tmp->fid);
    }
    return err;
}

/* Post [0, len) in pieces of at most the provider's message size. */
static int post_split(struct fsh_ctx *ctx, struct fsh_op_track *sync, int kind, void *local,
                      enum fsh_seg seg, uint64_t off, size_t len, int pe)
{
    size_t max = fsh_fabric_attr()->max_msg_size;
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);
    for (size_t done = 0; done < len;) {
        size_t n = len - done < max ? len - done : max;
        int rc = post(ctx, sync, kind, (char *)local + done, n, pe, raddr + done, key, 0);
        if (rc != 0) {
            return rc;
        }
        done += n;
    }
    return 0;
}

int fsh_rma_put(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src, size_t len,
                int pe, bool nbi)
{
    if (len == 0) {
        return 0;
    }
    /* An injected put leaves the source free at once; anything larger must complete before a
     * blocking put returns, because the provider reads the source until then. */
    if (nbi || len <= fsh_fabric_attr()->inject_size) {
        return post_split(ctx, NULL, FSH_OP_PUT, (void *)src, seg, off, len, pe);
    }
    struct fsh_op_track sync = {0, 0};
    int rc = post_split(ctx, &sync, FSH_OP_PUT, (void *)src, seg, off, len, pe);
    int wrc = fsh_progress_wait_track(&sync, "put: waiting for the transfer to complete");
    return rc ? rc : wrc;
}

int fsh_rma_get(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, size_t len,
                int pe, bool nbi)
{
    if (len == 0) {
        return 0;
    }
    if (nbi) {
        return post_split(ctx, NULL, FSH_OP_GET, dest, seg, off, len, pe);
    }
    struct fsh_op_track sync = {0, 0};
    int rc = post_split(ctx, &sync, FSH_OP_GET, dest, seg, off, len, pe);
    int wrc = fsh_progress_wait_track(&sync, "get: waiting for the data");
    return rc ? rc : wrc;
}

/* Strided transfers move one element per operation; a stride of 1 on both sides is one
 * contiguous transfer. */
static int strided(struct fsh_ctx *ctx, int kind, char *local, enum fsh_seg seg, uint64_t off,
                   ptrdiff_t rstride, ptrdiff_t lstride, size_t nelems, size_t esize, int pe)
{
    if (nelems == 0) {
        return 0;
    }
    struct fsh_op_track sync = {0, 0};
    int rc = 0;
    if (rstride == 1 && lstride == 1) {
        rc = post_split(ctx, &sync, kind, local, seg, off, nelems * esize, pe);
    } else {
        uint64_t raddr, key;
        fsh_mr_remote(pe, seg, off, &raddr, &key);
        for (size_t i = 0; i < nelems && rc == 0; i++) {
            rc = post(ctx, &sync, kind, local + (ptrdiff_t)i * lstride * (ptrdiff_t)esize, esize,
                      pe, raddr + (uint64_t)((ptrdiff_t)i * rstride * (ptrdiff_t)esize), key, 0);
        }
    }
    int wrc = fsh_progress_wait_track(&sync, kind == FSH_OP_GET ? "iget: waiting for the data"
                                                                : "iput: waiting for the transfer");
    return rc ? rc : wrc;
}

int fsh_rma_iput(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                 ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    return strided(ctx, FSH_OP_PUT, (char *)src, seg, off, dst, sst, nelems, esize, pe);
}

int fsh_rma_iget(struct fsh_ctx *ctx, void *dest, enum fsh_seg seg, uint64_t off, ptrdiff_t dst,
                 ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    return strided(ctx, FSH_OP_GET, dest, seg, off, sst, dst, nelems, esize, pe);
}

int fsh_rma_put_imm(struct fsh_ctx *ctx, enum fsh_seg seg, uint64_t off, const void *src,
                    size_t len, int pe, uint32_t imm)
{
    if (len > fsh_fabric_attr()->max_msg_size) {
        return fsh_err(-EMSGSIZE, "", "a notified put of %zu bytes exceeds the provider's %zu",
                       len, fsh_fabric_attr()->max_msg_size);
    }
    uint64_t raddr, key;
    fsh_mr_remote(pe, seg, off, &raddr, &key);
    return post(ctx, NULL, FSH_OP_PUT_IMM, (void *)src, len, pe, raddr, key, imm);
}

int fsh_rma_quiet(struct fsh_ctx *ctx)
{
    return fsh_progress_wait_track(&ctx->track, "quiet: waiting for outstanding operations");
}

int fsh_rma_fence(struct fsh_ctx *ctx)
{
    return fsh_rma_quiet(ctx);
}
