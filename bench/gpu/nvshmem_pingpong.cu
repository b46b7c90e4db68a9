/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nvshmem_pingpong: the peer row of tests/gpu/device_check.sh. An 8-byte put-with-signal
 * ping-pong between two PEs' GPU memory, started from a kernel, with NVIDIA's NVSHMEM (the
 * image's nvidia-nvshmem-cu13 package): what fabshmem's kernel ping-pong is set against.
 *
 *   mpirun -n 2 ./nvshmem_pingpong [-s 8] [-n 1000] [-r 11] [-w 200]
 *
 * Built by device_check.sh with nvcc -rdc=true against the package's include/ and lib/
 * (libnvshmem_host, libnvshmem_device.a); never built by make (NVSHMEM is not a dependency).
 * Each PE learns its rank and the job size from the launcher's environment (Open MPI's
 * OMPI_COMM_WORLD_RANK/SIZE, else PMIX_RANK with NVSHMEM_PP_NRANKS) and starts NVSHMEM with
 * the unique-id bootstrap: rank 0 writes the id into a file of NVSHMEM_PP_DIR (default /tmp,
 * which must be shared by the PEs: one node), the others read it. So no MPI or PMIx plugin of
 * NVSHMEM's is needed, whatever the launcher.
 *
 * One thread of PE 0 puts size bytes with nvshmem_putmem_signal (SET, value i) into PE 1 and
 * waits for its own signal to reach i; PE 1 waits, checks the data (the first 8 bytes carry i),
 * and answers the same way. A round is one kernel of -n iterations (after a kernel of -w);
 * its time over 2n is one direction. Prints one CSV row as the fabshmem benchmarks do:
 *     test,target,npes,size,median,best,unit,wrong
 *     nvshmem_put_signal_lat,devdev,2,8,<median of -r rounds>,<fastest>,us,<wrong>
 * Exit 0, 1 when a PE saw wrong data, 2 on a setup error (named on stderr).
 */
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#define CHECK_CUDA(call)                                                                          \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "nvshmem_pingpong: %s: %s\n", #call, cudaGetErrorString(e_));         \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

/* One round of iters put-with-signal exchanges; sequence numbers continue from base. wrong
 * counts the iterations whose arriving data did not carry their sequence number. */
__global__ void pingpong(unsigned char *data, unsigned char *src, uint64_t *sig, size_t size,
                         uint64_t base, int iters, int me, unsigned long long *wrong)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) {
        return;
    }
    int peer = 1 - me;
    for (int i = 1; i <= iters; i++) {
        uint64_t seq = base + (uint64_t)i;
        if (me == 1) {
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, seq);
            if (*(volatile uint64_t *)data != seq) {
                (*wrong)++;
            }
        }
        *(uint64_t *)src = seq;
        __threadfence();
        nvshmem_putmem_signal(data, src, size, sig, seq, NVSHMEM_SIGNAL_SET, peer);
        if (me == 0) {
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, seq);
            if (*(volatile uint64_t *)data != seq) {
                (*wrong)++;
            }
        }
    }
}

/* PE 1 sends its count of wrong arrivals to PE 0's word. */
__global__ void send_count(uint64_t *dst, const unsigned long long *wrong)
{
    nvshmem_uint64_p(dst, (uint64_t)*wrong, 0);
    nvshmem_quiet();
}

static int env_int(const char *a, const char *b)
{
    const char *v = getenv(a);
    if (!v || !v[0]) {
        v = b ? getenv(b) : NULL;
    }
    return v && v[0] ? atoi(v) : -1;
}

/* The unique id through a file: rank 0 writes it (rename makes it whole), the others wait up
 * to 60 s for it. */
static void share_uniqueid(int rank, nvshmemx_uniqueid_t *id)
{
    const char *dir = getenv("NVSHMEM_PP_DIR");
    std::string path = std::string(dir && dir[0] ? dir : "/tmp") + "/nvshmem_pingpong.uid";
    if (rank == 0) {
        std::string tmp = path + ".tmp";
        unlink(path.c_str());
        if (nvshmemx_get_uniqueid(id) != 0) {
            fprintf(stderr, "nvshmem_pingpong: nvshmemx_get_uniqueid failed\n");
            exit(2);
        }
        FILE *f = fopen(tmp.c_str(), "wb");
        if (!f || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) != 0 ||
            rename(tmp.c_str(), path.c_str()) != 0) {
            fprintf(stderr, "nvshmem_pingpong: cannot write %s: %s\n", path.c_str(),
                    strerror(errno));
            exit(2);
        }
        return;
    }
    for (int t = 0; t < 6000; t++) {
        FILE *f = fopen(path.c_str(), "rb");
        if (f) {
            size_t got = fread(id, sizeof(*id), 1, f);
            fclose(f);
            if (got == 1) {
                return;
            }
        }
        usleep(10000);
    }
    fprintf(stderr, "nvshmem_pingpong: rank %d: no unique id in %s after 60 s (set "
                    "NVSHMEM_PP_DIR to a directory every PE sees)\n", rank, path.c_str());
    exit(2);
}

int main(int argc, char **argv)
{
    size_t size = 8;
    int iters = 1000, rounds = 11, warm = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-s")) {
            size = strtoull(argv[i + 1], NULL, 0);
        } else if (!strcmp(argv[i], "-n")) {
            iters = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "-r")) {
            rounds = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "-w")) {
            warm = atoi(argv[i + 1]);
        } else {
            fprintf(stderr, "usage: %s [-s BYTES] [-n ITERS] [-r ROUNDS] [-w WARMUP]\n", argv[0]);
            return 2;
        }
    }
    if (size < 8 || iters < 1 || rounds < 1 || warm < 0) {
        fprintf(stderr, "nvshmem_pingpong: -s must be >= 8 (the data carries a sequence "
                        "number), -n and -r >= 1\n");
        return 2;
    }
    int rank = env_int("OMPI_COMM_WORLD_RANK", "PMIX_RANK");
    int nranks = env_int("OMPI_COMM_WORLD_SIZE", "NVSHMEM_PP_NRANKS");
    int local = env_int("OMPI_COMM_WORLD_LOCAL_RANK", NULL);
    if (rank < 0 || nranks != 2) {
        fprintf(stderr, "nvshmem_pingpong: runs on exactly 2 ranks under mpirun (rank %d of "
                        "%d from OMPI_COMM_WORLD_RANK/SIZE)\n", rank, nranks);
        return 2;
    }
    int ndev = 0;
    CHECK_CUDA(cudaGetDeviceCount(&ndev));
    CHECK_CUDA(cudaSetDevice((local >= 0 ? local : rank) % ndev));

    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    share_uniqueid(rank, &id);
    if (nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr) != 0) {
        fprintf(stderr, "nvshmem_pingpong: nvshmemx_set_attr_uniqueid_args failed\n");
        return 2;
    }
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    int me = nvshmem_my_pe();

    unsigned char *data = (unsigned char *)nvshmem_malloc(size);
    unsigned char *src = (unsigned char *)nvshmem_malloc(size);
    uint64_t *sig = (uint64_t *)nvshmem_malloc(sizeof(uint64_t));
    unsigned long long *wrong = NULL;
    if (!data || !src || !sig) {
        fprintf(stderr, "nvshmem_pingpong: nvshmem_malloc of %zu bytes failed\n", size);
        nvshmem_global_exit(2);
    }
    CHECK_CUDA(cudaMalloc(&wrong, sizeof(*wrong)));
    CHECK_CUDA(cudaMemset(wrong, 0, sizeof(*wrong)));
    CHECK_CUDA(cudaMemset(data, 0, size));
    CHECK_CUDA(cudaMemset(src, 0, size));
    CHECK_CUDA(cudaMemset(sig, 0, sizeof(uint64_t)));
    CHECK_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();

    cudaEvent_t t0, t1;
    CHECK_CUDA(cudaEventCreate(&t0));
    CHECK_CUDA(cudaEventCreate(&t1));
    uint64_t base = 0;
    if (warm > 0) {
        pingpong<<<1, 1>>>(data, src, sig, size, base, warm, me, wrong);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaDeviceSynchronize());
        base += (uint64_t)warm;
    }
    std::vector<double> per(rounds);
    for (int r = 0; r < rounds; r++) {
        nvshmem_barrier_all(); /* both kernels start together: no round waits for a launch */
        CHECK_CUDA(cudaEventRecord(t0));
        pingpong<<<1, 1>>>(data, src, sig, size, base, iters, me, wrong);
        CHECK_CUDA(cudaEventRecord(t1));
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaEventSynchronize(t1));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
        per[r] = (double)ms * 1000.0 / (2.0 * iters);
        base += (uint64_t)iters;
    }
    unsigned long long bad = 0;
    CHECK_CUDA(cudaMemcpy(&bad, wrong, sizeof(bad), cudaMemcpyDeviceToHost));
    /* PE 1's count travels to PE 0 through a symmetric word, so one row holds both */
    uint64_t *bad_sym = (uint64_t *)nvshmem_malloc(sizeof(uint64_t));
    uint64_t mine = bad, other = 0;
    CHECK_CUDA(cudaMemset(bad_sym, 0, sizeof(uint64_t)));
    CHECK_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    if (me == 1) {
        send_count<<<1, 1>>>(bad_sym, wrong);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaDeviceSynchronize());
    }
    nvshmem_barrier_all();
    if (me == 0) {
        CHECK_CUDA(cudaMemcpy(&other, bad_sym, sizeof(other), cudaMemcpyDeviceToHost));
    }
    if (me == 0) {
        std::vector<double> s = per;
        std::sort(s.begin(), s.end());
        printf("# nvshmem_pingpong: NVSHMEM %d.%d.%d, 2 PEs, %d rounds of %d iterations, "
               "one thread, nvshmem_putmem_signal + nvshmem_signal_wait_until\n",
               NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
               NVSHMEM_VENDOR_PATCH_VERSION, rounds, iters);
        printf("test,target,npes,size,median,best,unit,wrong\n");
        printf("nvshmem_put_signal_lat,devdev,2,%zu,%.4f,%.4f,us,%llu\n", size, s[s.size() / 2],
               s[0], (unsigned long long)(mine + other));
        fflush(stdout);
    }
    int rc = me == 0 && mine + other != 0 ? 1 : 0;
    nvshmem_free(bad_sym);
    nvshmem_free(sig);
    nvshmem_free(src);
    nvshmem_free(data);
    cudaFree(wrong);
    nvshmem_finalize();
    return rc;
}
