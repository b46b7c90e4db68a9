/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devproxy: the device API's proxy measured without a GPU: CPU threads run the ring producer
 * of include/shmemx_device.h (the code kernels run) against the real proxy, 2 PEs, host-heap
 * targets, and the same operations through the host API in the same run:
 *
 *   desc_rate       8-byte put_nbi descriptors per second through the proxy threads
 *                   (FABSHMEM_DEVICE_PROXIES; PE 0's producer threads, producer t on ring t mod
 *                   channels, post n of them to PE 1, then quiet), against the host API's
 *                   shmem_putmem_nbi rate from one thread (n puts, then quiet); the
 *                   destinations every other word, so the proxy merges none of them;
 *   desc_rate_run   the same with contiguous destinations (and sources): runs the proxy
 *                   merges into one put each (up to 64 KiB); "posts" is how many it made;
 *   put_signal_lat  8-byte put-with-signal ping-pong, per direction, through the proxy,
 *                   against shmem_putmem_signal on the host; ratio = host / proxy (>= 0.9 is
 *                   the target: the proxy adds at most ~10%).
 *
 *   mpirun -n 2 [-x FI_PROVIDER=tcp -x FABSHMEM_INTRANODE=fabric] bench/devproxy \
 *       [-n descriptors] [-i pingpong iterations] [-r repetitions] [-p producer threads]
 *
 * Medians of -r repetitions; every payload is checked (#wrong). Not bench.c's driver: two
 * fixed tests, a producer thread count and one ratio per row are all it has. For the rates
 * it also prints the rate per proxy thread, and descriptors per second of the proxy threads'
 * CPU time (their schedstat, idle polls included): what one thread would do with a core of
 * its own, where the machine has fewer cores than threads.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmem.h>
#include <shmemx.h>
#include <shmemx_device.h>

#include "bench.h"

static shmemx_device_t h;
static uint64_t *dst, *sig;
static long ndesc = 200000;
static int nprod = 1;
static int stride = 2; /* destination words per descriptor: 2 scattered, 1 contiguous */

/* The proxy threads: the threads the first handle started (so also a library that does not
 * name them fsh-proxy<i>, for A/B runs against older ones); their ids, and CPU time. */
static int proxy_tid[64], nproxy;

/* The thread ids of this process (at most max). */
static int thread_ids(int *ids, int max)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < max) {
        if (e->d_name[0] != '.') {
            ids[n++] = atoi(e->d_name);
        }
    }
    if (d) {
        closedir(d);
    }
    return n;
}

/* before: the ids thread_ids gave before the first handle. */
static void find_proxies(const int *before, int nbefore)
{
    int now[256], n = thread_ids(now, 256);
    for (int i = 0; i < n && nproxy < 64; i++) {
        int old = 0;
        for (int j = 0; j < nbefore && !old; j++) {
            old = now[i] == before[j];
        }
        if (!old) {
            proxy_tid[nproxy++] = now[i];
        }
    }
}

/* Nanoseconds the proxy threads ran on a CPU so far. */
static double proxy_cpu_ns(void)
{
    double ns = 0;
    for (int i = 0; i < nproxy; i++) {
        char path[64];
        unsigned long long run = 0;
        snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", proxy_tid[i]);
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%llu", &run) == 1) {
            ns += (double)run;
        }
        if (f) {
            fclose(f);
        }
    }
    return ns;
}

struct prod {
    int t;
    long n;
    uint64_t base;
    int rc;
    pthread_t th;
};

static void *producer(void *arg)
{
    struct prod *p = arg;
    shmemx_device_t mine = h;
    mine.channel = p->t % h.nchan;
    uint64_t *src = malloc(sizeof(uint64_t) * 1024);
    for (long i = 0; i < p->n && p->rc == 0; i++) {
        uint64_t *s = &src[i % 1024];
        if (i % 1024 == 0 && i > 0) {
            p->rc = shmemx_dev_quiet(mine); /* the sources are reused */
        }
        *s = p->base + (uint64_t)i;
        p->rc = p->rc ? p->rc
                      : shmemx_dev_put_nbi(mine, &dst[(p->t * 1024 + i % 1024) * stride], s, 8, 1);
    }
    p->rc = p->rc ? p->rc : shmemx_dev_quiet(mine);
    free(src);
    return NULL;
}

/* PE 0 posts; descriptors per second; *wrong: words at PE 1 not as last sent; *cpu_rate:
 * descriptors per second of the proxy threads' CPU time. */
static double rate_proxy(uint64_t base, long *wrong, double *cpu_rate)
{
    double rate = 0;
    struct prod p[16];
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        double c0 = proxy_cpu_ns();
        double t0 = bench_now_us();
        for (int t = 0; t < nprod; t++) {
            p[t] = (struct prod){.t = t, .n = ndesc / nprod, .base = base};
            pthread_create(&p[t].th, NULL, producer, &p[t]);
        }
        for (int t = 0; t < nprod; t++) {
            pthread_join(p[t].th, NULL);
            *wrong += p[t].rc != 0;
        }
        rate = (double)(ndesc / nprod * nprod) * 1e6 / (bench_now_us() - t0);
        double cpu = proxy_cpu_ns() - c0;
        *cpu_rate = cpu > 0 ? (double)(ndesc / nprod * nprod) * 1e9 / cpu : 0;
    }
    shmem_barrier_all();
    if (shmem_my_pe() == 1) {
        for (int t = 0; t < nprod; t++) {
            long n = ndesc / nprod;
            for (long i = n - 1024 > 0 ? n - 1024 : 0; i < n; i++) {
                *wrong += dst[(t * 1024 + i % 1024) * stride] != base + (uint64_t)i;
            }
        }
    }
    return rate;
}

static double rate_host(uint64_t base, long *wrong)
{
    double rate = 0;
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        uint64_t *src = malloc(sizeof(uint64_t) * 1024);
        double t0 = bench_now_us();
        for (long i = 0; i < ndesc; i++) {
            if (i % 1024 == 0 && i > 0) {
                shmem_quiet();
            }
            src[i % 1024] = base + (uint64_t)i;
            shmem_putmem_nbi(&dst[i % 1024], &src[i % 1024], 8, 1);
        }
        shmem_quiet();
        rate = (double)ndesc * 1e6 / (bench_now_us() - t0);
        free(src);
    }
    shmem_barrier_all();
    if (shmem_my_pe() == 1) {
        for (long i = ndesc - 1024 > 0 ? ndesc - 1024 : 0; i < ndesc; i++) {
            *wrong += dst[i % 1024] != base + (uint64_t)i;
        }
    }
    return rate;
}

/* Per direction, microseconds. sig[0]: PE 1's incoming, sig[1]: PE 0's. */
static double lat(int proxy, int iters, uint64_t base, long *wrong)
{
    int me = shmem_my_pe(), peer = 1 - me;
    static uint64_t src; /* nbi: read by the time the peer answers; quiet before return */
    shmem_barrier_all();
    double t0 = bench_now_us();
    for (int i = 1; i <= iters; i++) {
        uint64_t v = base + (uint64_t)i;
        if (me == 0) {
            src = v; /* PE 1's answer says the last put read it */
            if (proxy) {
                shmemx_dev_put_signal_nbi(h, &dst[0], &src, 8, &sig[0], v, SHMEMX_DEV_SIGNAL_SET, peer);
                shmemx_dev_signal_wait_until(h, &sig[1], SHMEMX_DEV_CMP_EQ, v, NULL);
            } else {
                shmem_putmem_signal_nbi(&dst[0], &src, 8, &sig[0], v, SHMEM_SIGNAL_SET, peer);
                shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, v);
            }
            *wrong += __atomic_load_n(&dst[1], __ATOMIC_ACQUIRE) != v;
        } else {
            if (proxy) {
                shmemx_dev_signal_wait_until(h, &sig[0], SHMEMX_DEV_CMP_EQ, v, NULL);
            } else {
                shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, v);
            }
            *wrong += __atomic_load_n(&dst[0], __ATOMIC_ACQUIRE) != v;
            src = v; /* PE 0's put came after our last one was read */
            if (proxy) {
                shmemx_dev_put_signal_nbi(h, &dst[1], &src, 8, &sig[1], v, SHMEMX_DEV_SIGNAL_SET, peer);
            } else {
                shmem_putmem_signal_nbi(&dst[1], &src, 8, &sig[1], v, SHMEM_SIGNAL_SET, peer);
            }
        }
    }
    double us = (bench_now_us() - t0) / (2.0 * iters);
    if (proxy) {
        shmemx_dev_quiet(h);
    } else {
        shmem_quiet();
    }
    shmem_barrier_all();
    return us;
}

int main(int argc, char **argv)
{
    int iters = 2000, reps = 5, c;
    while ((c = getopt(argc, argv, "n:i:r:p:")) != -1) {
        switch (c) {
        case 'n': ndesc = atol(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'r': reps = atoi(optarg) < 1 ? 1 : atoi(optarg) > 64 ? 64 : atoi(optarg); break;
        case 'p': nprod = atoi(optarg) < 1 ? 1 : atoi(optarg) > 16 ? 16 : atoi(optarg); break;
        default:
            fprintf(stderr, "usage: devproxy [-n descriptors] [-i iterations] [-r reps] "
                            "[-p producers]\n");
            return 2;
        }
    }
    shmem_init();
    if (shmem_n_pes() != 2) {
        if (shmem_my_pe() == 0) {
            fprintf(stderr, "devproxy: run with 2 PEs\n");
        }
        shmem_finalize();
        return 2;
    }
    dst = shmem_calloc(2 * 16 * 1024, sizeof(uint64_t));
    sig = shmem_calloc(8, sizeof(uint64_t));
    int before[256], nbefore = thread_ids(before, 256);
    if (shmemx_device_handle_host(&h) != 0) {
        fprintf(stderr, "devproxy: no device API handle\n");
        shmem_finalize();
        return 1;
    }
    find_proxies(before, nbefore);
    double rp[64], rr[64], rh[64], lp[64], lh[64], cp[64], cr[64];
    long wrong_rp = 0, wrong_rh = 0, wrong_lp = 0, wrong_lh = 0;
    uint64_t base = 1, d0, p0, d1, p1, run_descs = 0, run_posts = 0;
    for (int r = 0; r < reps; r++) {
        stride = 2;
        rp[r] = rate_proxy(base, &wrong_rp, &cp[r]);
        base += (uint64_t)ndesc;
        stride = 1;
        shmemx_device_proxy_stats(&d0, &p0, NULL);
        rr[r] = rate_proxy(base, &wrong_rp, &cr[r]);
        shmemx_device_proxy_stats(&d1, &p1, NULL);
        run_descs += d1 - d0;
        run_posts += p1 - p0;
        base += (uint64_t)ndesc;
        rh[r] = rate_host(base, &wrong_rh);
        base += (uint64_t)ndesc;
        lp[r] = lat(1, iters, base, &wrong_lp);
        base += (uint64_t)iters;
        lh[r] = lat(0, iters, base, &wrong_lh);
        base += (uint64_t)iters;
    }
    long w[4] = {wrong_rp, wrong_rh, wrong_lp, wrong_lh}, all[4];
    static long sw[4], sall[4];
    memcpy(sw, w, sizeof(w));
    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sall, sw, 4);
    memcpy(all, sall, sizeof(all));
    if (shmem_my_pe() == 0) {
        const char *prov = getenv("FI_PROVIDER");
        const char *intra = getenv("FABSHMEM_INTRANODE");
        const char *prof = getenv("FABSHMEM_PROVIDER_PROFILE");
        double mrp = bench_stats(rp, reps, NULL), mrh = bench_stats(rh, reps, NULL);
        double mrr = bench_stats(rr, reps, NULL);
        double mcp = bench_stats(cp, reps, NULL), mcr = bench_stats(cr, reps, NULL);
        int np = nproxy > 0 ? nproxy : 1;
        double mlp = bench_stats(lp, reps, NULL), mlh = bench_stats(lh, reps, NULL);
        printf("# devproxy: 2 PEs, %d producer thread(s), %d proxy thread(s), %d ring(s) of "
               "%llu; provider %s, intranode %s, profile %s; median of %d\n",
               nprod, nproxy, h.nchan, (unsigned long long)h.nslots, prov ? prov : "(default)",
               intra ? intra : "(default)", prof ? prof : "native", reps);
        printf("# %-16s %14s %14s %8s %8s  %s\n", "test", "proxy", "host API", "ratio", "#wrong",
               "ratio is");
        printf("  %-16s %12.3f M %12.3f M %8.3f %8ld  proxy/host, descriptors/s vs puts/s\n",
               "desc_rate", mrp / 1e6, mrh / 1e6, mrp / mrh, all[0] + all[1]);
        printf("  %-16s %12.3f M %12.3f M %8.3f %8s  proxy/host; %llu descriptors in %llu "
               "posts\n", "desc_rate_run", mrr / 1e6, mrh / 1e6, mrr / mrh, "above",
               (unsigned long long)run_descs, (unsigned long long)run_posts);
        printf("  %-16s %11.2f us %11.2f us %8.3f %8ld  host/proxy latency (target >= 0.9)\n",
               "put_signal_lat", mlp, mlh, mlh / mlp, all[2] + all[3]);
        printf("# per proxy thread: desc_rate %.3f M/s, desc_rate_run %.3f M/s; per second of "
               "the proxy threads' CPU time: %.3f M, %.3f M\n",
               mrp / 1e6 / np, mrr / 1e6 / np, mcp / 1e6, mcr / 1e6);
    }
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}
