/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * topo_domain: each PE's endpoint opens on the domain the topology module chose for it.
 *
 * Every PE runs with SHMEM_INFO=1, which makes it print its line of the topology map at init
 * (`topology: PE n ... nic=A,B via=... endpoint=PROV domain=D hint=H`); the test captures its
 * own stdout during shmem_init and reads that line. Checks:
 *   - a NIC hint that was applied is the PE's first chosen NIC, and the domain opened is it;
 *   - on tcp, FABSHMEM_NIC set to the runner's interface (FI_TCP_IFACE, lo here) is obeyed:
 *     hint and domain are that interface, via is FABSHMEM_NIC;
 *   - on shm, whose one domain is not a NIC, a FABSHMEM_NIC given to odd ranks is not applied
 *     and does not stop the endpoint from opening;
 * then one put around the ring proves the endpoints work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test.h"

/* The value of `key=` in line, up to the next space, or "" when absent. */
static void field(const char *line, const char *key, char *out, size_t len)
{
    out[0] = '\0';
    const char *p = strstr(line, key);
    if (!p) {
        return;
    }
    p += strlen(key);
    size_t n = strcspn(p, " \n");
    if (n >= len) {
        n = len - 1;
    }
    memcpy(out, p, n);
    out[n] = '\0';
}

int main(void)
{
    const char *prov = getenv("FI_PROVIDER");
    const char *iface = getenv("FI_TCP_IFACE");
    const char *rank = getenv("PMIX_RANK");
    char forced[64] = "";
    if (prov && strcmp(prov, "tcp") == 0 && iface && iface[0]) {
        snprintf(forced, sizeof(forced), "%s", iface);
        setenv("FABSHMEM_NIC", forced, 1);
    } else if (prov && strcmp(prov, "shm") == 0 && rank && atoi(rank) % 2 == 1) {
        setenv("FABSHMEM_NIC", "lo", 1);
    }
    setenv("SHMEM_INFO", "1", 1);

    /* Capture what shmem_init prints. */
    fflush(stdout);
    int saved = dup(1);
    FILE *cap = tmpfile();
    if (saved < 0 || !cap || dup2(fileno(cap), 1) < 0) {
        t_skip("topo_domain", "cannot capture stdout");
    }
    shmem_init();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    t_start("topo_domain");
    int me = shmem_my_pe(), n = shmem_n_pes();

    char want[64], line[2048], mine[2048] = "";
    snprintf(want, sizeof(want), "topology: PE %d local ", me);
    rewind(cap);
    while (fgets(line, sizeof(line), cap)) {
        const char *p = strstr(line, want);
        if (p) {
            snprintf(mine, sizeof(mine), "%s", p);
        }
    }
    fclose(cap);
    t_check(mine[0] != '\0', "no '%s...' line in the SHMEM_INFO output", want);
    char nic[512], via[64], endpoint[64], domain[64], hint[64];
    field(mine, "nic=", nic, sizeof(nic));
    field(mine, "via=", via, sizeof(via));
    field(mine, "endpoint=", endpoint, sizeof(endpoint));
    field(mine, "domain=", domain, sizeof(domain));
    field(mine, "hint=", hint, sizeof(hint));
    size_t first = strcspn(nic, ",");
    if (mine[0] && strcmp(hint, "-") != 0) {
        t_check(strcmp(domain, hint) == 0, "endpoint opened on %s, chosen %s", domain, hint);
        t_check(strlen(hint) == first && strncmp(nic, hint, first) == 0,
                "hint %s is not the first chosen NIC (%s)", hint, nic);
    }
    if (mine[0] && forced[0]) {
        t_check(strcmp(hint, forced) == 0 && strcmp(domain, forced) == 0,
                "FABSHMEM_NIC=%s on %s: hint %s, domain %s", forced, endpoint, hint, domain);
        t_check(strcmp(via, "FABSHMEM_NIC") == 0, "via %s with FABSHMEM_NIC set", via);
    }
    if (mine[0] && strcmp(endpoint, "shm") == 0) {
        t_check(strcmp(hint, "-") == 0, "a NIC hint (%s) applied to shm", hint);
    }

    static int got = -1;
    shmem_int_p(&got, me, (me + 1) % n);
    shmem_barrier_all();
    t_check(got == (me + n - 1) % n, "ring put: got %d, want %d", got, (me + n - 1) % n);
    int rc = t_finish(NULL);
    shmem_finalize();
    return rc;
}
