/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_error.c: reading a completion queue's error entry, and telling a failed way (a
 * connection or a link, which another rail may still reach) from a failed operation. The
 * engine (progress.c) and the lanes (lane.c) share both; what a failure does to the operation
 * is fsh_engine_op_error's, in progress.c.
 */
#include "engine.h"

#include <errno.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>

/* Errors that say the way failed (a connection or a link), not the operation: a bad key or a
 * length the target refuses (FI_EACCES, FI_EINVAL, ...) would fail on every rail, and trying
 * another would hide it. FI_ECANCELED counts too: fabshmem never cancels an operation, so one
 * canceled is one the provider dropped with its connection (tcp;ofi_rxm cancels what is in
 * flight on a reset connection: "Operation canceled (Transport endpoint is not connected)"). */
bool fsh_engine_transport_failed(int err)
{
    switch (err) {
    case FI_ECANCELED:
    case FI_EIO:
    case FI_ENOTCONN:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ECONNREFUSED:
    case FI_ETIMEDOUT:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_ENETDOWN:
    case EPIPE:
    case EHOSTDOWN:
        return true;
    default:
        return false;
    }
}

/* Read the error entry at the head of cq into e, and the provider's words for it into buf
 * (*prov). fi_cq_readerr's result: < 0 when there was none to read. */
ssize_t fsh_engine_read_error(struct fid_cq *cq, struct fi_cq_err_entry *e, char *buf, size_t len,
                              const char **prov)
{
    memset(e, 0, sizeof(*e));
    ssize_t rc = fi_cq_readerr(cq, e, 0);
    if (rc >= 0) {
        *prov = fi_cq_strerror(cq, e->prov_errno, e->err_data, buf, len);
    }
    return rc;
}

