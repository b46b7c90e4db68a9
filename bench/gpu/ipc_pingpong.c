/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipc_pingpong: what one driver operation costs per direction when two processes on one GPU
 * take turns, each writing into (or reading from) the other's memory through a CUDA IPC
 * mapping: the shape of the host API's put-with-signal ping-pong between two PEs sharing a GPU,
 * with no fabshmem in it. Each process forks before cuInit, maps the other's 4 MiB block
 * (cuIpcOpenMemHandle), and for each way and size does N rounds of: one operation on its own
 * non-blocking stream, cuStreamSynchronize, then a flag in shared host memory that the other
 * process spins on before its turn. Prints the median and 10th percentile of half a round.
 * Then, alone (the other process idle), the cost of single calls.
 *
 *   gcc -O2 -I$CUDA_HOME/include bench/gpu/ipc_pingpong.c -o ipc_pingpong \
 *       -L$CUDA_HOME/lib64/stubs -lcuda && ./ipc_pingpong [rounds]
 *
 * Seen on one H200 (driver 580, CUDA 13; 2026-11-28, 2000 and 1000 rounds): a device-to-device
 * copy into the peer 146-147 us per direction from 8 B to 128 KiB, a host-to-device copy into
 * the peer 142-147 us up to 8 KiB (page-locked source: 8.9 us at 32 KiB), a device-to-host copy
 * out of the peer 8.4 us at 8 B; alone, an 8 B device-to-device copy and its synchronization
 * 11.2 us, device-to-host 9.9 (pageable) / 7.5 (page-locked), host-to-device 6.8.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (4u << 20)

static struct shared {
    volatile long bar[2];
    CUipcMemHandle handle[2];
    volatile unsigned long flag[2];
} *sh;
static int me, rounds = 1000;
static CUcontext ctx;
static CUstream stream;
static CUdeviceptr mine, peer;
static void *pinned, *pageable;

static void check(CUresult r, const char *what, int line)
{
    if (r != CUDA_SUCCESS) {
        const char *s = "?";
        cuGetErrorString(r, &s);
        fprintf(stderr, "ipc_pingpong: process %d: %s failed (line %d): CUDA error %d (%s)\n", me,
                what, line, (int)r, s);
        exit(1);
    }
}
#define CK(call) check((call), #call, __LINE__)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void barrier(long v)
{
    sh->bar[me] = v;
    while (sh->bar[1 - me] < v) {
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum way { DTOD_PEER, HTOD_PEER_PAGEABLE, HTOD_PEER_PINNED, DTOH_FROM_PEER, DTOD_OWN,
           HTOD_OWN_PINNED, WRITE64_PEER, DTOD_PEER_WRITE64, WAYS };
static const char *const way_name[WAYS] = {
    "dtod into peer", "htod into peer (pageable)", "htod into peer (pinned)",
    "dtoh out of peer", "dtod own memory", "htod own memory (pinned)",
    "cuStreamWriteValue64 into peer", "dtod + WriteValue64 into peer"};

/* One turn: the operation, then its synchronization. */
static void turn(enum way w, size_t n, unsigned long v)
{
    switch (w) {
    case DTOD_PEER: CK(cuMemcpyDtoDAsync(peer, mine + BLOCK / 2, n, stream)); break;
    case HTOD_PEER_PAGEABLE: CK(cuMemcpyHtoDAsync(peer, pageable, n, stream)); break;
    case HTOD_PEER_PINNED: CK(cuMemcpyHtoDAsync(peer, pinned, n, stream)); break;
    case DTOH_FROM_PEER: CK(cuMemcpyDtoHAsync(pageable, peer, n, stream)); break;
    case DTOD_OWN: CK(cuMemcpyDtoDAsync(mine, mine + BLOCK / 2, n, stream)); break;
    case HTOD_OWN_PINNED: CK(cuMemcpyHtoDAsync(mine, pinned, n, stream)); break;
    case WRITE64_PEER: CK(cuStreamWriteValue64(stream, peer, v, 0)); break;
    case DTOD_PEER_WRITE64:
        CK(cuMemcpyDtoDAsync(peer, mine + BLOCK / 2, n, stream));
        CK(cuStreamWriteValue64(stream, peer + BLOCK / 2 - 64, v, 0));
        break;
    default: break;
    }
    CK(cuStreamSynchronize(stream));
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        rounds = atoi(argv[1]) > 10 ? atoi(argv[1]) : 10;
    }
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memset((void *)sh, 0, sizeof(*sh));
    pid_t child = fork(); /* before cuInit: a forked child cannot use its parent's driver state */
    me = child == 0;
    CUdevice dev;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&mine, BLOCK));
    CK(cuMemHostAlloc(&pinned, BLOCK / 2, 0));
    pageable = calloc(1, BLOCK / 2);
    CK(cuIpcGetMemHandle((CUipcMemHandle *)&sh->handle[me], mine));
    barrier(1);
    CK(cuIpcOpenMemHandle(&peer, sh->handle[1 - me], CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    double *t = malloc(sizeof(double) * (size_t)rounds);
    long b = 2;
    unsigned long v = 0;
    if (me == 0) {
        printf("# ipc_pingpong: 2 processes on one GPU, per direction, %d rounds\n", rounds);
    }
    for (int w = 0; w < WAYS; w++) {
        static const size_t sizes[] = {8, 2048, 8192, 32768, 131072};
        for (size_t k = 0; k < (w == WRITE64_PEER ? 1 : sizeof(sizes) / sizeof(*sizes)); k++) {
            size_t n = sizes[k];
            barrier(b++);
            for (int i = 0; i < rounds; i++) {
                v++;
                double t0 = now_us();
                if (me == 0) {
                    turn((enum way)w, n, v);
                    __atomic_store_n(&sh->flag[1], v, __ATOMIC_RELEASE);
                    while (__atomic_load_n(&sh->flag[0], __ATOMIC_ACQUIRE) < v) {
                    }
                } else {
                    while (__atomic_load_n(&sh->flag[1], __ATOMIC_ACQUIRE) < v) {
                    }
                    turn((enum way)w, n, v);
                    __atomic_store_n(&sh->flag[0], v, __ATOMIC_RELEASE);
                }
                t[i] = (now_us() - t0) / 2;
            }
            qsort(t, (size_t)rounds, sizeof(double), cmp_d);
            if (me == 0) {
                printf("%-32s %7zu B  median %8.2f us  p10 %8.2f us\n", way_name[w], n,
                       t[rounds / 2], t[rounds / 10]);
            }
        }
    }
    barrier(b++);
    if (me == 0) {
        /* Alone: the other process idles at the barrier. */
        for (int w = 0; w < WAYS; w++) {
            double t0 = now_us();
            for (int i = 0; i < rounds; i++) {
                turn((enum way)w, 8, (unsigned long)i);
            }
            printf("alone: %-32s 8 B  %8.2f us\n", way_name[w], (now_us() - t0) / rounds);
        }
    }
    barrier(b++);
    cuIpcCloseMemHandle(peer);
    if (me == 1) {
        return 0;
    }
    waitpid(child, NULL, 0);
    return 0;
}
