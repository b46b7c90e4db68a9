/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * exchange.c: the one all-gather of init, and the checks on what it brings.
 */
#include "exchange.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "error.h"
#include "fabric.h"
#include "local.h"
#include "mr.h"
#include "rma.h"
#include "rt.h"

/* Settings that shape the symmetric layout or the collective protocol: a PE whose value
 * differs would compute other offsets (a put lands elsewhere), other slot counts (a counter
 * doubled), another count of pieces for a collective's message (the receiver counts them with
 * its own FABSHMEM_MAX_MSG_SIZE) or make collective calls the others do not (FABSHMEM_CHECK's
 * comparisons), so init compares them in the exchange and ends with their names instead. */
#define LAYOUT_SETTINGS(X)                                                                    \
    X(SHMEM_SYMMETRIC_SIZE, cfg->SHMEM_SYMMETRIC_SIZE)                                        \
    X(FABSHMEM_SIGNAL_SLOTS, cfg->FABSHMEM_SIGNAL_SLOTS)                                      \
    X(FABSHMEM_SIGNAL_PEERS, cfg->FABSHMEM_SIGNAL_PEERS)                                      \
    X(FABSHMEM_MAX_TEAMS, cfg->FABSHMEM_MAX_TEAMS)                                            \
    X(FABSHMEM_DEVICE_HEAP_SIZE, cfg->FABSHMEM_DEVICE_HEAP_SIZE)                              \
    X(FABSHMEM_DEVICE_CHUNK, cfg->FABSHMEM_DEVICE_CHUNK)                                      \
    X(FABSHMEM_DEVICE_PEERS, cfg->FABSHMEM_DEVICE_PEERS)                                      \
    X(FABSHMEM_MAX_MSG_SIZE, cfg->FABSHMEM_MAX_MSG_SIZE)                                      \
    X(FABSHMEM_CHECK (or SHMEM_DEBUG), fsh_rt.checks)                                        \
    X(endpoints of contexts counted apart at targets (FABSHMEM_CTX_ENDPOINTS with             \
      SHMEM_THREAD_MULTIPLE), fsh_rma_counted_lanes())                                         \
    X(a fabric (1: opened; FABSHMEM_FABRIC and FABSHMEM_INTRANODE decide), !fsh_fabric_none())
#define LAYOUT_NAME(name, value) #name,
#define LAYOUT_VALUE(name, value) (uint64_t)(value),
static const char *const layout_names[] = {LAYOUT_SETTINGS(LAYOUT_NAME)};
#define NLAYOUT (sizeof(layout_names) / sizeof(layout_names[0]))

/* The exchange blob of one PE: address length, address, then the segment table. */
struct blob_head {
    int32_t node_id; /* for SHMEM_TEAM_SHARED */
    uint16_t addrlen;
    uint8_t addr[FSH_ADDR_MAX];
    uint64_t layout[NLAYOUT];
};

/* Every PE's layout settings against this PE's: the first that differs ends init, naming the
 * setting, both values and both PEs (every PE reports the same pair: the lowest that differs
 * from PE 0). */
static int check_layout(const uint8_t *all, size_t one, size_t n)
{
    struct blob_head first, other;
    memcpy(&first, all, sizeof(first));
    for (size_t i = 1; i < n; i++) {
        memcpy(&other, all + i * one, sizeof(other));
        for (size_t k = 0; k < NLAYOUT; k++) {
            if (other.layout[k] != first.layout[k]) {
                return fsh_err(-EINVAL, "give every PE the same value (mpirun -x VAR, or export it before launching)",
                               "%s differs between PEs: PE 0 has %llu, PE %zu has %llu; every PE must have the same value",
                               layout_names[k], (unsigned long long)first.layout[k], i,
                               (unsigned long long)other.layout[k]);
            }
        }
    }
    return 0;
}

int fsh_exchange_pack(struct fsh_exchange *x, int npes)
{
    memset(x, 0, sizeof(*x));
    size_t n = (size_t)npes;
    x->npes = npes;
    x->one = sizeof(struct blob_head) + fsh_mr_blob_size() + fsh_local_blob_size();
    x->mine = calloc(1, x->one);
    x->all = calloc(n, x->one);
    x->slots = calloc(n, FSH_ADDR_MAX);
    x->lens = calloc(n, sizeof(uint16_t));
    x->node_of = calloc(n, sizeof(int));
    if (!x->mine || !x->all || !x->slots || !x->lens || !x->node_of) {
        return fsh_err(-ENOMEM, "", "out of memory for the exchange of %zu peers", n);
    }
    struct blob_head head;
    memset(&head, 0, sizeof(head));
    uint64_t keys[FSH_NSEGS * (FSH_MAX_RAILS - 1)];
    size_t nkeys = fsh_mr_rail_keys_pack(keys, sizeof(keys));
    int rc = fsh_fabric_getname(head.addr, sizeof(head.addr), keys, nkeys);
    if (rc < 0) {
        return rc;
    }
    head.addrlen = (uint16_t)rc;
    head.node_id = fsh_rt.node_id;
    const struct fsh_config *cfg = fsh_env();
    const uint64_t layout[] = {LAYOUT_SETTINGS(LAYOUT_VALUE)};
    memcpy(head.layout, layout, sizeof(layout));
    memcpy(x->mine, &head, sizeof(head));
    fsh_mr_blob_pack(x->mine + sizeof(head));
    fsh_local_blob_pack(x->mine + sizeof(head) + fsh_mr_blob_size());
    return 0;
}

int fsh_exchange_unpack(struct fsh_exchange *x)
{
    size_t n = (size_t)x->npes, mr_len = fsh_mr_blob_size();
    int rc = check_layout(x->all, x->one, n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const uint8_t *b = x->all + i * x->one;
        struct blob_head head;
        memcpy(&head, b, sizeof(head));
        x->lens[i] = head.addrlen;
        x->node_of[i] = head.node_id;
        memcpy(x->slots + i * FSH_ADDR_MAX, head.addr, FSH_ADDR_MAX);
        fsh_mr_blob_unpack((int)i, b + sizeof(head));
        size_t nkeys;
        const uint8_t *keys = fsh_fabric_slot_extra(head.addr, head.addrlen, &nkeys);
        if (keys) {
            rc = fsh_mr_rail_keys_unpack((int)i, keys, nkeys);
        }
        fsh_local_blob_unpack((int)i, b + sizeof(head) + mr_len);
    }
    return rc;
}

void fsh_exchange_free(struct fsh_exchange *x)
{
    free(x->mine);
    free(x->all);
    free(x->slots);
    free(x->lens);
    free(x->node_of);
    memset(x, 0, sizeof(*x));
}

void fsh_exchange_fake_peer(struct fsh_exchange *x, int i, const void *addr, uint16_t addrlen,
                            int node)
{
    struct blob_head head;
    uint8_t *b = x->all + (size_t)i * x->one;
    memcpy(b, x->mine, x->one);
    memcpy(&head, b, sizeof(head));
    memset(head.addr, 0, sizeof(head.addr));
    memcpy(head.addr, addr, addrlen < FSH_ADDR_MAX ? addrlen : FSH_ADDR_MAX);
    head.addrlen = addrlen;
    head.node_id = node;
    memcpy(b, &head, sizeof(head));
}

uint16_t fsh_exchange_my_addr(const struct fsh_exchange *x, void *addr)
{
    struct blob_head head;
    memcpy(&head, x->mine, sizeof(head));
    memcpy(addr, head.addr, FSH_ADDR_MAX);
    return head.addrlen;
}
