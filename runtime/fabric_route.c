/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric_route.c: the ways from this PE to every peer, and failover between them.
 *
 * Owns the peers' addresses in this PE's address vectors (FI_AV_TABLE on rail 0: fi_addr ==
 * PE) and, when any PE of the job has more than one rail, the ways to each peer: my rail, its
 * rail on the same fabric, the address of that rail in my rail's AV. Every PE's slot of init's
 * exchange carries its rails after its address (fsh_fabric_getname writes them, fabric.c);
 * at insertion each PE lists, per peer, its ways, and fsh_fabric_path spreads operations over
 * them. A way found dead (live.c, xport.c) is taken out of use (fsh_fabric_kill_way) and
 * skipped from then on. It posts nothing and opens nothing: fabric.c opens the rails and
 * hands them over; xport.c posts on the paths chosen here.
 */
#include "fabric_route.h"

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "log.h"

/* The ways to one peer, when the job has more than one rail: my rail src[i] reaches its rail
 * dst[i] at addr[i]; operation k to the peer takes way (me + peer + k) mod n, so a PE's
 * traffic to many peers, and many PEs' traffic to one, spread over the rails at both ends. A
 * way found dead is skipped: its operations take the next live one. */
struct route {
    uint8_t n;
    uint8_t dead; /* bit per way taken out of use (fsh_fabric_kill_way) */
    uint8_t src[FSH_MAX_RAILS], dst[FSH_MAX_RAILS];
    fi_addr_t addr[FSH_MAX_RAILS];
};

static struct {
    fi_addr_t *addr;      /* [pe]: rail 0's address of every peer's rail 0 */
    struct route *route;  /* [pe], when any PE of the job has more than one rail */
    unsigned deaths;      /* ways taken out of use so far (fsh_fabric_deaths) */
    int me;
    int nrails;
    struct fsh_route_rail rail[FSH_MAX_RAILS]; /* mine, as fabric.c handed them */
} peers;

/* A peer's rails as its slot's trailer (fsh_fabric_getname) tells them: count, fabric ids, and
 * the address of rail j (j >= 1) with its length. A slot without a trailer is one rail. */
struct peer_rails {
    int n;
    uint32_t id[FSH_MAX_RAILS];
    const uint8_t *addr[FSH_MAX_RAILS];
    size_t len[FSH_MAX_RAILS];
};

/* Parse a slot's trailer: the rails into pr, and where the extra bytes begin (NULL for a
 * one-rail slot). */
static int parse_trailer(const uint8_t *slot, size_t len0, struct peer_rails *pr,
                         const uint8_t **extra)
{
    const uint8_t *t = slot + len0, *end = slot + FSH_ADDR_MAX;
    memset(pr, 0, sizeof(*pr));
    pr->n = t < end ? *t : 0;
    *extra = NULL;
    if (pr->n <= 1) {
        pr->n = 1;
        pr->id[0] = peers.rail[0].fabric_id; /* one rail: reached as rail 0 always was */
        return 0;
    }
    if (pr->n > FSH_MAX_RAILS || (size_t)(end - t) < 1 + 4 * (size_t)pr->n) {
        return -EPROTO;
    }
    t++;
    for (int j = 0; j < pr->n; j++, t += 4) {
        memcpy(&pr->id[j], t, 4);
    }
    for (int j = 1; j < pr->n; j++) {
        if (t >= end || (size_t)(end - t) < 1u + *t) {
            return -EPROTO;
        }
        pr->len[j] = *t;
        pr->addr[j] = t + 1;
        t += 1 + *t;
    }
    if (t >= end || (size_t)(end - t) < 1u + *t) {
        return -EPROTO;
    }
    *extra = t;
    return 0;
}

const uint8_t *fsh_fabric_slot_extra(const uint8_t *slot, size_t len0, size_t *n)
{
    struct peer_rails pr;
    const uint8_t *extra;
    if (len0 >= FSH_ADDR_MAX || parse_trailer(slot, len0, &pr, &extra) != 0 || !extra) {
        *n = 0;
        return NULL;
    }
    *n = *extra;
    return extra + 1;
}

/* With more than one rail anywhere in the job: the ways to every peer (struct route), each
 * further peer rail inserted into the AV of the rail of ours that reaches it. */
static int build_routes(const uint8_t *slots, const uint16_t *lens, int npes)
{
    bool multi = peers.nrails > 1;
    for (int p = 0; p < npes && !multi; p++) {
        const uint8_t *slot = slots + (size_t)p * FSH_ADDR_MAX;
        multi = lens[p] < FSH_ADDR_MAX && slot[lens[p]] > 1;
    }
    if (!multi) {
        return 0;
    }
    peers.route = calloc((size_t)npes, sizeof(*peers.route));
    if (!peers.route) {
        return fsh_err(-ENOMEM, "", "out of memory for the rails to %d peers", npes);
    }
    for (int p = 0; p < npes; p++) {
        struct peer_rails pr;
        const uint8_t *extra;
        if (parse_trailer(slots + (size_t)p * FSH_ADDR_MAX, lens[p], &pr, &extra) != 0) {
            return fsh_err(-EPROTO, "run every PE with the same fabshmem",
                           "PE %d's rail addresses are malformed", p);
        }
        /* Which of its rails each of mine reaches (equal fabric ids). */
        int reach[FSH_MAX_RAILS][FSH_MAX_RAILS], nreach[FSH_MAX_RAILS] = {0};
        int usable[FSH_MAX_RAILS], nu = 0, w_max = 0;
        for (int i = 0; i < peers.nrails; i++) {
            for (int j = 0; j < pr.n; j++) {
                if (pr.id[j] == peers.rail[i].fabric_id) {
                    reach[i][nreach[i]++] = j;
                }
            }
            if (nreach[i]) {
                usable[nu++] = i;
                w_max = nreach[i] > w_max ? nreach[i] : w_max;
            }
        }
        if (nu == 0) {
            return fsh_err(-ENETUNREACH, "give every PE NICs on the same networks (FABSHMEM_NIC), or FABSHMEM_RAILS=1",
                           "no rail of this PE reaches a rail of PE %d (their fabrics differ)",
                           p);
        }
        struct route *r = &peers.route[p];
        r->n = (uint8_t)(nu > w_max ? nu : w_max);
        for (int w = 0; w < r->n; w++) {
            int i = usable[w % nu];
            int j = reach[i][(w + peers.me) % nreach[i]];
            r->src[w] = (uint8_t)i;
            r->dst[w] = (uint8_t)j;
            if (i == 0 && j == 0) {
                r->addr[w] = peers.addr[p];
                continue;
            }
            for (int v = 0; v < w; v++) {
                if (r->src[v] == i && r->dst[v] == j) {
                    r->addr[w] = r->addr[v];
                    goto next;
                }
            }
            const void *a = j == 0 ? slots + (size_t)p * FSH_ADDR_MAX : pr.addr[j];
            if (fi_av_insert(peers.rail[i].av, a, 1, &r->addr[w], 0, NULL) != 1) {
                return fsh_err(-EPROTO, "check that all PEs can reach each other on every rail, or FABSHMEM_RAILS=1",
                               "fi_av_insert of PE %d's rail %d on rail %s failed", p, j,
                               peers.rail[i].name);
            }
        next:;
        }
    }
    return 0;
}

int fsh_fabric_route_insert(const struct fsh_fabric_attr *a, const struct fsh_route_rail *mine,
                            int nrails, int me, const uint8_t *slots, const uint16_t *lens,
                            int npes)
{
    if (npes <= 0) {
        return fsh_err(-EINVAL, "", "no peers to insert");
    }
    if (nrails == 0) {
        return 0; /* no fabric: exchange.c's layout check made sure nobody has an address */
    }
    peers.me = me;
    peers.nrails = nrails;
    memcpy(peers.rail, mine, (size_t)nrails * sizeof(*mine));
    /* String addresses (shm) go in back to back, each with its NUL; binary addresses (efa: 32
     * bytes, tcp: sockaddr) at a fixed stride, which requires equal lengths. */
    bool str = a->addr_format == FI_ADDR_STR;
    size_t stride = lens[0];
    size_t total = 0;
    for (int i = 0; i < npes; i++) {
        if (!str && lens[i] != stride) {
            return fsh_err(-EPROTO, "run every PE with the same provider (FI_PROVIDER)",
                           "PE %d's address is %u bytes, PE 0's is %zu", i, lens[i], stride);
        }
        total += lens[i] + (str ? 1 : 0);
    }
    uint8_t *packed = malloc(total ? total : 1);
    peers.addr = calloc((size_t)npes, sizeof(fi_addr_t));
    if (!packed || !peers.addr) {
        free(packed);
        return fsh_err(-ENOMEM, "", "out of memory for %d peer addresses", npes);
    }
    size_t off = 0;
    for (int i = 0; i < npes; i++) {
        const uint8_t *addr = slots + (size_t)i * FSH_ADDR_MAX;
        memcpy(packed + off, addr, lens[i]);
        off += lens[i];
        if (str && (lens[i] == 0 || addr[lens[i] - 1] != '\0')) {
            packed[off++] = '\0';
        }
    }
    int n = fi_av_insert(peers.rail[0].av, packed, (size_t)npes, peers.addr, 0, NULL);
    free(packed);
    if (n != npes) {
        return fsh_err(n < 0 ? n : -EPROTO, "check that all PEs can reach each other on this provider",
                       "fi_av_insert of %d peers on %s inserted %d: %s", npes, a->prov, n,
                       n < 0 ? fi_strerror(-n) : "some addresses were rejected");
    }
    return build_routes(slots, lens, npes);
}

void fsh_fabric_route_close(void)
{
    free(peers.addr);
    free(peers.route);
    memset(&peers, 0, sizeof(peers));
}

/* The dead ways' bits: set atomically by whoever finds a way dead (the engine, a context's
 * endpoint), read without a lock. */
static inline unsigned dead_of(const struct route *r)
{
    return __atomic_load_n(&r->dead, __ATOMIC_ACQUIRE);
}

unsigned fsh_fabric_deaths(void)
{
    return __atomic_load_n(&peers.deaths, __ATOMIC_ACQUIRE);
}

bool fsh_fabric_multirail(void)
{
    return peers.route != NULL;
}

unsigned fsh_fabric_ways(int pe)
{
    if (!peers.route) {
        return 1;
    }
    const struct route *r = &peers.route[pe];
    return (unsigned)r->n - (unsigned)__builtin_popcount(dead_of(r));
}

unsigned fsh_fabric_ways_all(int pe)
{
    return peers.route ? peers.route[pe].n : 1;
}

bool fsh_fabric_way_alive(int pe, unsigned way)
{
    return !peers.route || !(dead_of(&peers.route[pe]) & (1u << way));
}

static struct fsh_path way_path(int pe, unsigned w)
{
    const struct route *r = &peers.route[pe];
    return (struct fsh_path){r->src[w], r->dst[w], r->addr[w], w};
}

/* Way w, or the next live one after it (w itself when none is). */
static unsigned live_from(const struct route *r, unsigned w)
{
    unsigned dead = dead_of(r);
    for (unsigned t = 0; t < r->n; t++) {
        unsigned v = (w + t) % r->n;
        if (!(dead & (1u << v))) {
            return v;
        }
    }
    return w;
}

/* The one way of a one-rail job (no address at all without a fabric: xport.c refuses the
 * operation before it would be posted). */
static inline struct fsh_path rail0_path(int pe)
{
    return (struct fsh_path){0, 0, peers.addr ? peers.addr[pe] : FI_ADDR_NOTAVAIL, 0};
}

struct fsh_path fsh_fabric_path(int pe, unsigned k)
{
    if (!peers.route) {
        return rail0_path(pe);
    }
    const struct route *r = &peers.route[pe];
    return way_path(pe, live_from(r, ((unsigned)peers.me + (unsigned)pe + k) % r->n));
}

unsigned fsh_fabric_k_of_way(int pe, unsigned way)
{
    unsigned n = fsh_fabric_ways_all(pe);
    return (way + n - ((unsigned)peers.me + (unsigned)pe) % n) % n;
}

struct fsh_path fsh_fabric_path_way(int pe, unsigned way)
{
    if (!peers.route) {
        return rail0_path(pe);
    }
    return way_path(pe, live_from(&peers.route[pe], way));
}

struct fsh_path fsh_fabric_path_atomic(int pe)
{
    if (!peers.route) {
        return rail0_path(pe);
    }
    const struct route *r = &peers.route[pe];
    for (unsigned w = 0; w < r->n; w++) {
        if (r->dst[w] == 0 && !(dead_of(r) & (1u << w))) {
            return way_path(pe, w);
        }
    }
    return way_path(pe, live_from(r, 0));
}

unsigned fsh_fabric_kill_way(int pe, unsigned way, const char *why)
{
    struct route *r = &peers.route[pe];
    uint8_t was = __atomic_fetch_or(&r->dead, (uint8_t)(1u << way), __ATOMIC_ACQ_REL);
    if (!(was & (1u << way))) {
        __atomic_fetch_add(&peers.deaths, 1, __ATOMIC_RELEASE);
        unsigned left = fsh_fabric_ways(pe);
        FSH_WARN("rail %s: PE %d (its rail %d) %s: taken out of use, %u of %u way(s) to PE %d "
                 "left", peers.rail[r->src[way]].name, pe, r->dst[way], why,
                 left, r->n, pe);
    }
    return fsh_fabric_ways(pe);
}
