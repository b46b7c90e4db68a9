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
#include "rt.h"

/* Settings that shape the symmetric layout or the collective protocol: a PE whose value
 * differs would compute other offsets (a put lands elsewhere), other slot counts (a counter
 * doubled), another count of pieces for a collective's message (the receiver counts them with
 * its own FABSHMEM_MAX_MSG_SIZE) or make collective calls the others do not (FABSHMEM_CHECK's
 * comparisons) or send what the other cannot read (a signal in 8 bytes of immediate data to a
 * PE whose provider delivers 4), so init compares them in the exchange and ends with their
 * names instead. */
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
    X(bytes of immediate data per write (the provider; FABSHMEM_PROVIDER_PROFILE),            \
      fsh_fabric_attr()->cq_data_size)                                                          \
    X(quiet counting arrivals at targets (FABSHMEM_REMOTE_COMPLETION; the provider),         \
      fsh_fabric_attr()->count_arrivals)                                                        \
    X(endpoints of contexts counted apart at targets (FABSHMEM_CTX_ENDPOINTS with             \
      SHMEM_THREAD_MULTIPLE), x->counted)                                                      \
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

/* The published lanes' part of a blob: how many, their length, then their addresses. */
static size_t lanes_blob_size(const struct fsh_exchange *x)
{
    return x->published ? 2 * sizeof(uint16_t) + x->published * FSH_EXCHANGE_LANE_ADDR_MAX : 0;
}

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

int fsh_exchange_pack(struct fsh_exchange *x, int npes, const struct fsh_exchange_lanes *lanes)
{
    memset(x, 0, sizeof(*x));
    size_t n = (size_t)npes;
    x->npes = npes;
    x->counted = lanes ? lanes->counted : 0;
    x->published = lanes ? lanes->published : 0;
    x->one = sizeof(struct blob_head) + fsh_mr_blob_size() + fsh_local_blob_size() +
             lanes_blob_size(x);
    x->mine = calloc(1, x->one);
    x->all = calloc(n, x->one);
    x->slots = calloc(n, FSH_ADDR_MAX);
    x->lens = calloc(n, sizeof(uint16_t));
    x->node_of = calloc(n, sizeof(int));
    x->lane_names = calloc(n * x->published + 1, FSH_EXCHANGE_LANE_ADDR_MAX);
    if (!x->mine || !x->all || !x->slots || !x->lens || !x->node_of || !x->lane_names) {
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
    if (x->published) {
        uint8_t *b = x->mine + x->one - lanes_blob_size(x);
        size_t k = lanes->n < x->published ? lanes->n : x->published;
        uint16_t nlen[2] = {(uint16_t)k, lanes->len};
        memcpy(b, nlen, sizeof(nlen));
        memcpy(b + sizeof(nlen), lanes->names, k * FSH_EXCHANGE_LANE_ADDR_MAX);
    }
    return 0;
}

/* Every PE's published lanes, back to back in lane_names (all of one length). */
static int unpack_lanes(struct fsh_exchange *x)
{
    for (size_t i = 0; i < (size_t)x->npes && x->published; i++) {
        const uint8_t *b = x->all + (i + 1) * x->one - lanes_blob_size(x);
        uint16_t nlen[2];
        memcpy(nlen, b, sizeof(nlen));
        if (nlen[0] == 0) {
            continue;
        }
        if (nlen[0] > x->published || nlen[1] > FSH_EXCHANGE_LANE_ADDR_MAX ||
            (x->nlanes > 0 && nlen[1] != x->lane_len)) {
            return fsh_err(-EPROTO, "run every PE with the same provider, or FABSHMEM_CTX_ENDPOINTS=0",
                           "PE %zu published %u endpoints of %u bytes for its contexts (PE "
                           "addresses here are %u bytes, at most %zu endpoints)", i, nlen[0],
                           nlen[1], x->lane_len, x->published);
        }
        x->lane_len = nlen[1];
        memcpy(x->lane_names + x->nlanes * FSH_EXCHANGE_LANE_ADDR_MAX, b + sizeof(nlen),
               (size_t)nlen[0] * FSH_EXCHANGE_LANE_ADDR_MAX);
        x->nlanes += nlen[0];
    }
    return 0;
}

int fsh_exchange_insert_lanes(const struct fsh_exchange *x)
{
    return fsh_fabric_insert_lanes(x->lane_names, x->nlanes, x->lane_len, FSH_EXCHANGE_LANE_ADDR_MAX);
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
    return rc ? rc : unpack_lanes(x);
}

void fsh_exchange_free(struct fsh_exchange *x)
{
    free(x->mine);
    free(x->all);
    free(x->slots);
    free(x->lens);
    free(x->node_of);
    free(x->lane_names);
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
