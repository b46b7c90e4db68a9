// SPDX-License-Identifier: BSD-3-Clause
/*
 * ep_device: the expert-parallel exchange's GPU path (include/shmemx_ep_device.h) from real
 * kernels, 2 PEs on one GPU (or more), its buffers in the device heap; judged against the host
 * reference (shmemx_ep_*, a second handle in the host heap) run on the same inputs. Needs a
 * GPU; run by tests/gpu/device_check.sh (step ep_device):
 *
 *   nvcc -arch=native -I<build>/include -Iinclude tests/gpu/ep_device.cu -L<build>/.libs \
 *        -lfabshmem -o ep_device
 *   FABSHMEM_DEVICE_HEAP_SIZE=256M SHMEM_SYMMETRIC_SIZE=256M mpirun -n 2 ./ep_device
 *
 * Shape (options): -M tokens (128), -H hidden (7168), -k topk (8), 8 experts per PE, FP8-sized
 * dispatch elements with 32 scale bytes, bfloat16 combine, inexact random weights (so the
 * combined tokens match only if the GPU path adds the same terms in the same order and rounds
 * the same way). Calls, each judged byte for byte (rows, sources, tokens, scales, layout,
 * combined tokens): the block forms from this program's own kernels (3 blocks per phase), the
 * stream launchers, the same captured in a CUDA graph and launched twice, and the block forms
 * with every peer through the proxy (peer_base cleared). Then an expert id out of range on
 * every PE: the phase records SHMEMX_EP_ERR_EXPERT (and prints one line). Then -i iterations
 * (20) of dispatch and of combine through the launchers, timed with events: prints
 * `ep_device: dispatch_us X combine_us Y` (medians) before `ep_device: PASS` or `FAIL (...)`.
 */
#include <cuda_runtime.h>
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_ep_device.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails, me, npes;
static size_t M = 128, H = 7168;
static int K = 8, ITERS = 20;
#define SB 32

#define CHECK(c, ...)                                                                          \
    do {                                                                                       \
        if (!(c)) {                                                                            \
            if (fails++ < 10) {                                                                \
                printf("  PE %d: ", me);                                                       \
                printf(__VA_ARGS__);                                                           \
                printf("\n");                                                                  \
            }                                                                                  \
        }                                                                                      \
    } while (0)

#define CUDA(x)                                                                                \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("ep_device: FAIL (%s: %s)\n", #x, cudaGetErrorString(e_));                  \
            shmem_global_exit(1);                                                              \
        }                                                                                      \
    } while (0)

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The "expert": exact in bfloat16, the same bits on host and GPU. */
__host__ __device__ static uint16_t expert_bf16(int e, unsigned char b)
{
    float f = (float)((int)((b + (unsigned)e * 7u) % 13u) - 6) * 0.125f;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

struct inputs {
    size_t n;
    unsigned char *tok, *sc; /* host */
    int32_t *idx;
    float *w;
};

static void make_inputs(struct inputs *in, int call)
{
    int E = 8 * npes;
    in->n = call % 3 == 0 ? M : (size_t)(mix((uint64_t)call * 977 + (uint64_t)me) % (M + 1));
    for (size_t t = 0; t < in->n; t++) {
        for (size_t i = 0; i < H; i++) {
            in->tok[t * H + i] = (unsigned char)mix(((uint64_t)call << 40) ^ (t << 20) ^ i ^
                                                    ((uint64_t)me << 60));
        }
        for (size_t i = 0; i < SB; i++) {
            in->sc[t * SB + i] = (unsigned char)mix((t << 8) ^ i ^ 0xabc ^ (uint64_t)call);
        }
        for (int j = 0; j < K; j++) {
            uint64_t r = mix((uint64_t)call * 131 + t * 17 + (uint64_t)j + (uint64_t)me * 7919);
            int32_t e;
            int ok;
            do {
                e = (int32_t)(r % (uint64_t)E);
                ok = 1;
                for (int i = 0; i < j; i++) {
                    ok &= in->idx[t * K + i] != e;
                }
                r = mix(r);
            } while (!ok);
            in->idx[t * K + j] = r % 9 == 0 ? -1 : e;
            in->w[t * K + j] = (float)(r % 100003) / 77773.0f;
        }
    }
}

__global__ void k_dsend(shmemx_device_t h, shmemx_ep_device_t d, const void *tok,
                        const void *sc, const int32_t *idx, const float *w, size_t n)
{
    shmemx_dev_ep_dispatch_send_block(h, d, tok, sc, idx, w, n);
}
__global__ void k_drecv(shmemx_device_t h, shmemx_ep_device_t d)
{
    shmemx_dev_ep_dispatch_recv_block(h, d);
}
__global__ void k_csend(shmemx_device_t h, shmemx_ep_device_t d, const void *eout)
{
    shmemx_dev_ep_combine_send_block(h, d, eout);
}
__global__ void k_crecv(shmemx_device_t h, shmemx_ep_device_t d, void *out)
{
    shmemx_dev_ep_combine_recv_block(h, d, out);
}

/* The experts on the received rows (rows past the total are left alone). */
__global__ void k_experts(shmemx_ep_device_t d, uint16_t *eout)
{
    uint64_t total = shmemx_dev_ep_total(d);
    for (uint64_t r = blockIdx.x; r < total; r += gridDim.x) {
        int le = 0;
        while (le + 1 < d.L && r >= d.eoffset[le] + d.ecount[le]) {
            le++;
        }
        for (uint64_t x = threadIdx.x; x < d.hidden; x += blockDim.x) {
            eout[r * d.hidden + x] = expert_bf16(d.me * d.L + le,
                                                 ((const unsigned char *)d.out_tokens)[r * d.tok_bytes + x]);
        }
    }
}

struct devbufs {
    unsigned char *tok, *sc;
    int32_t *idx;
    float *w;
    uint16_t *eout, *out;
};

enum how { KERNELS, LAUNCHERS, GRAPH };

/* One call through the GPU path on stream s. */
static void gpu_call(shmemx_device_t h, shmemx_ep_device_t d, const struct devbufs *b, size_t n,
                     enum how how, cudaStream_t s)
{
    if (how == KERNELS) {
        k_dsend<<<3, 128, 0, s>>>(h, d, b->tok, b->sc, b->idx, b->w, n);
        k_drecv<<<3, 128, 0, s>>>(h, d);
        k_experts<<<64, 256, 0, s>>>(d, b->eout);
        k_csend<<<3, 128, 0, s>>>(h, d, b->eout);
        k_crecv<<<3, 128, 0, s>>>(h, d, b->out);
    } else {
        CUDA(shmemx_ep_dispatch_send_on_stream(h, d, b->tok, b->sc, b->idx, b->w, n, s));
        CUDA(shmemx_ep_dispatch_recv_on_stream(h, d, s));
        k_experts<<<64, 256, 0, s>>>(d, b->eout);
        CUDA(shmemx_ep_combine_send_on_stream(h, d, b->eout, s));
        CUDA(shmemx_ep_combine_recv_on_stream(h, d, b->out, s));
    }
    CUDA(cudaGetLastError());
}

/* The reference's call on the same inputs; returns its recv and out. */
static void ref_call(shmemx_ep_t ref, const struct inputs *in, shmemx_ep_recv_t *r,
                     uint16_t *eout, uint16_t *out)
{
    shmemx_ep_dispatch_send(ref, in->tok, in->sc, in->idx, in->w, in->n);
    shmemx_ep_dispatch_recv(ref, r);
    for (int le = 0; le < r->local_experts; le++) {
        for (size_t x = 0; x < r->expert_count[le]; x++) {
            size_t row = r->expert_offset[le] + x;
            for (size_t i = 0; i < H; i++) {
                eout[row * H + i] = expert_bf16(r->first_expert + le,
                                                ((const unsigned char *)r->tokens)[row * H + i]);
            }
        }
    }
    shmemx_ep_combine_send(ref, eout);
    shmemx_ep_combine_recv(ref, out);
}

/* The GPU path's results against the reference's. */
static void judge(const char *what, shmemx_ep_device_t d, const shmemx_ep_recv_t *r,
                  const uint16_t *ref_out, const struct devbufs *b, size_t n)
{
    struct shmemx_ep_dev_state st;
    CUDA(cudaMemcpy(&st, d.st, sizeof(st), cudaMemcpyDeviceToHost));
    CHECK(st.error == 0 && st.state == SHMEMX_EP_ST_IDLE, "%s: error %d, state %u", what,
          (int)st.error, st.state);
    CHECK(st.total == r->total, "%s: %llu rows received, the reference %zu", what,
          (unsigned long long)st.total, r->total);
    size_t rows = st.total < r->total ? st.total : r->total, L = (size_t)d.L;
    size_t *cnt = (size_t *)malloc(2 * L * sizeof(size_t));
    int *src = (int *)malloc(2 * rows * sizeof(int) + 1);
    unsigned char *bytes = (unsigned char *)malloc(rows * (H + SB) + 1);
    uint16_t *out = (uint16_t *)malloc(n * H * 2 + 2);
    CUDA(cudaMemcpy(cnt, d.ecount, L * sizeof(size_t), cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(cnt + L, d.eoffset, L * sizeof(size_t), cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(src, d.src_pe, rows * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(src + rows, d.src_token, rows * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(bytes, d.out_tokens, rows * H, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(bytes + rows * H, d.out_scales, rows * SB, cudaMemcpyDeviceToHost));
    CUDA(cudaMemcpy(out, b->out, n * H * 2, cudaMemcpyDeviceToHost));
    CHECK(memcmp(cnt, r->expert_count, L * sizeof(size_t)) == 0 &&
              memcmp(cnt + L, r->expert_offset, L * sizeof(size_t)) == 0,
          "%s: the expert layout differs", what);
    CHECK(memcmp(src, r->src_pe, rows * sizeof(int)) == 0 &&
              memcmp(src + rows, r->src_token, rows * sizeof(int)) == 0,
          "%s: the rows' sources differ", what);
    CHECK(memcmp(bytes, r->tokens, rows * H) == 0, "%s: the tokens' bytes differ", what);
    CHECK(memcmp(bytes + rows * H, r->scales, rows * SB) == 0, "%s: the scales differ", what);
    size_t diff = 0;
    for (size_t i = 0; i < n * H; i++) {
        diff += out[i] != ref_out[i];
    }
    CHECK(diff == 0, "%s: %zu of %zu combined elements differ from the reference", what, diff,
          n * H);
    free(cnt);
    free(src);
    free(bytes);
    free(out);
}

/* cudaStreamSynchronize with a deadline: a GPU path that never completes (a lost signal) ends
 * the job in 30 s naming the step, instead of spending the lent machine's minutes. */
static void sync_or_die(cudaStream_t s, const char *what)
{
    double start = shmemx_wtime();
    cudaError_t e;
    while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
        if (shmemx_wtime() - start > 30.0) {
            printf("ep_device: FAIL (PE %d: %s did not complete in 30 s)\n", me, what);
            fflush(stdout);
            shmem_global_exit(1);
        }
    }
    CUDA(e);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-M")) {
            M = (size_t)atol(argv[i + 1]);
        } else if (!strcmp(argv[i], "-H")) {
            H = (size_t)atol(argv[i + 1]);
        } else if (!strcmp(argv[i], "-k")) {
            K = atoi(argv[i + 1]);
            K = K < 1 || K > 64 ? 8 : K;
        } else if (!strcmp(argv[i], "-i")) {
            ITERS = atoi(argv[i + 1]);
        }
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    shmemx_device_t h;
    if (shmemx_device_handle(&h) != 0 || h.win_size == 0) {
        printf("ep_device: FAIL (no device API handle with a device heap: set "
               "FABSHMEM_DEVICE_HEAP_SIZE and run on a GPU)\n");
        shmem_finalize();
        return 1;
    }
    shmemx_ep_config_t cfg = {};
    cfg.max_tokens = M;
    cfg.hidden = H;
    cfg.dispatch_elem_bytes = 1;
    cfg.combine_type = SHMEMX_EP_BFLOAT16;
    cfg.num_experts = 8 * npes;
    cfg.topk = K;
    cfg.scale_bytes = SB;
    shmemx_ep_t ref = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    cfg.device_heap = 1;
    shmemx_ep_t ep = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    shmemx_ep_device_t d;
    shmemx_ep_device_handle(ep, &d);
    size_t cap = (size_t)npes * M * (size_t)(K < 8 ? K : 8);
    struct inputs in;
    in.tok = (unsigned char *)malloc(M * H);
    in.sc = (unsigned char *)malloc(M * SB);
    in.idx = (int32_t *)malloc(M * K * sizeof(int32_t));
    in.w = (float *)malloc(M * K * sizeof(float));
    uint16_t *ref_eout = (uint16_t *)malloc(cap * H * 2), *ref_out = (uint16_t *)malloc(M * H * 2);
    struct devbufs b;
    CUDA(cudaMalloc((void **)&b.tok, M * H));
    CUDA(cudaMalloc((void **)&b.sc, M * SB));
    CUDA(cudaMalloc((void **)&b.idx, M * K * sizeof(int32_t)));
    CUDA(cudaMalloc((void **)&b.w, M * K * sizeof(float)));
    CUDA(cudaMalloc((void **)&b.eout, cap * H * 2));
    CUDA(cudaMalloc((void **)&b.out, M * H * 2));
    cudaStream_t s;
    CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    shmemx_device_t proxied = h;
    proxied.peer_base = NULL;
    const char *names[] = {"kernels", "launchers", "graph", "graph again", "proxied kernels"};
    cudaGraphExec_t exec = NULL;
    for (int call = 0; call < 5; call++) {
        make_inputs(&in, call == 3 ? 2 : call); /* the graph keeps call 2's n and buffers */
        CUDA(cudaMemcpy(b.tok, in.tok, in.n * H, cudaMemcpyHostToDevice));
        CUDA(cudaMemcpy(b.sc, in.sc, in.n * SB, cudaMemcpyHostToDevice));
        CUDA(cudaMemcpy(b.idx, in.idx, in.n * K * sizeof(int32_t), cudaMemcpyHostToDevice));
        CUDA(cudaMemcpy(b.w, in.w, in.n * K * sizeof(float), cudaMemcpyHostToDevice));
        CUDA(cudaMemset(b.out, 0xee, M * H * 2));
        if (call == 2) { /* captured once with n fixed, launched for calls 2 and 3 */
            cudaGraph_t g;
            CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            gpu_call(h, d, &b, in.n, LAUNCHERS, s);
            CUDA(cudaStreamEndCapture(s, &g));
            CUDA(cudaGraphInstantiate(&exec, g, 0));
            CUDA(cudaGraphDestroy(g));
        }
        if (call == 2 || call == 3) {
            CUDA(cudaGraphLaunch(exec, s));
        } else {
            gpu_call(call == 4 ? proxied : h, d, &b, in.n, call == 1 ? LAUNCHERS : KERNELS, s);
        }
        sync_or_die(s, names[call]);
        shmemx_ep_recv_t r;
        ref_call(ref, &in, &r, ref_eout, ref_out);
        judge(names[call], d, &r, ref_out, &b, in.n);
    }
    CUDA(cudaGraphExecDestroy(exec));
    shmem_barrier_all();

    /* Timing: dispatch (send + receive kernels) and combine, through the launchers. */
    make_inputs(&in, 0);
    CUDA(cudaMemcpy(b.tok, in.tok, in.n * H, cudaMemcpyHostToDevice));
    CUDA(cudaMemcpy(b.sc, in.sc, in.n * SB, cudaMemcpyHostToDevice));
    CUDA(cudaMemcpy(b.idx, in.idx, in.n * K * sizeof(int32_t), cudaMemcpyHostToDevice));
    CUDA(cudaMemcpy(b.w, in.w, in.n * K * sizeof(float), cudaMemcpyHostToDevice));
    cudaEvent_t ev[4];
    for (int i = 0; i < 4; i++) {
        CUDA(cudaEventCreate(&ev[i]));
    }
    float *td = (float *)malloc(sizeof(float) * (size_t)ITERS), *tc = (float *)malloc(sizeof(float) * (size_t)ITERS);
    for (int it = 0; it < ITERS; it++) {
        CUDA(cudaEventRecord(ev[0], s));
        CUDA(shmemx_ep_dispatch_send_on_stream(h, d, b.tok, b.sc, b.idx, b.w, in.n, s));
        CUDA(shmemx_ep_dispatch_recv_on_stream(h, d, s));
        CUDA(cudaEventRecord(ev[1], s));
        k_experts<<<64, 256, 0, s>>>(d, b.eout);
        CUDA(cudaEventRecord(ev[2], s));
        CUDA(shmemx_ep_combine_send_on_stream(h, d, b.eout, s));
        CUDA(shmemx_ep_combine_recv_on_stream(h, d, b.out, s));
        CUDA(cudaEventRecord(ev[3], s));
        sync_or_die(s, "a timed exchange");
        CUDA(cudaEventElapsedTime(&td[it], ev[0], ev[1]));
        CUDA(cudaEventElapsedTime(&tc[it], ev[2], ev[3]));
    }
    qsort(td, (size_t)ITERS, sizeof(float), cmp_float);
    qsort(tc, (size_t)ITERS, sizeof(float), cmp_float);
    if (me == 0) {
        printf("ep_device: dispatch_us %.1f combine_us %.1f (%d PEs, %zu tokens, hidden %zu, "
               "top-%d of %d, median of %d)\n",
               1000.0 * td[ITERS / 2], 1000.0 * tc[ITERS / 2], npes, M, H, K, 8 * npes, ITERS);
    }
    shmem_barrier_all();

    /* An expert id out of range on every PE (nobody waits): recorded, no message sent. */
    cfg.max_tokens = 4;
    cfg.hidden = 8;
    shmemx_ep_t bad = shmemx_ep_create(SHMEM_TEAM_WORLD, &cfg);
    shmemx_ep_device_t db;
    shmemx_ep_device_handle(bad, &db);
    int32_t bidx[4 * 64];
    for (int i = 0; i < 4 * K && i < 4 * 64; i++) {
        bidx[i] = i == 0 ? 8 * npes : -1; /* token 0 only: one possible cause */
    }
    CUDA(cudaMemcpy(b.idx, bidx, sizeof(int32_t) * 4 * (size_t)K, cudaMemcpyHostToDevice));
    CUDA(shmemx_ep_dispatch_send_on_stream(h, db, b.tok, b.sc, b.idx, b.w, 4, s));
    sync_or_die(s, "the bad dispatch");
    struct shmemx_ep_dev_state st;
    CUDA(cudaMemcpy(&st, db.st, sizeof(st), cudaMemcpyDeviceToHost));
    CHECK(st.error == SHMEMX_EP_ERR_EXPERT && st.err_a == 0 && st.err_c == 8 * npes &&
              st.seq == 0,
          "bad expert: error %d (%lld, %lld, %lld), call %llu", (int)st.error,
          (long long)st.err_a, (long long)st.err_b, (long long)st.err_c,
          (unsigned long long)st.seq);
    shmemx_ep_destroy(bad);
    shmemx_ep_destroy(ep);
    shmemx_ep_destroy(ref);
    if (me == 0 || fails) {
        printf("ep_device: %s (PE %d: %d checks failed)\n", fails ? "FAIL" : "PASS", me, fails);
    }
    shmem_finalize();
    return fails ? 1 : 0;
}
