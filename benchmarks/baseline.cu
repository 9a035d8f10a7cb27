// The cuBLAS baseline (see baseline.h): gather, GEMM, softmax, GEMM, scatter.
// Written the way a GPU user without a fused kernel would: correct, simple
// kernels around two vendor GEMMs. It is what our kernels must beat, and with
// f32 scores and an f32 output it is accurate enough to be a second reference.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "../cuda/dtype.cuh"
#include "baseline.h"
#include "kv_index.h"

// Outside the anonymous namespace: struct pa_baseline holds one.
struct bl_dims {
    int32_t num_seqs, kv_heads, group, head, max_q, max_kv, num_heads;
};

namespace {

constexpr int kThreads = 256;

// Per-sequence lengths, as baseline.h defines them (decode: one query row).
struct bl_lens {
    const int32_t *cu_q, *kv_lens, *cu_k;
    bool has_new; // new_k / new_v given
};
__device__ __forceinline__ int q_len_of(const int32_t *cu, int s) { return cu ? cu[s + 1] - cu[s] : 1; }
__device__ __forceinline__ int q_start_of(const int32_t *cu, int s) { return cu ? cu[s] : s; }
__device__ __forceinline__ int new_len_of(const bl_lens &l, int s) {
    return l.cu_k ? l.cu_k[s + 1] - l.cu_k[s] : q_len_of(l.cu_q, s);
}
__device__ __forceinline__ int kv_len_of(const bl_lens &l, int s) {
    return l.kv_lens ? l.kv_lens[s] : new_len_of(l, s);
}

template <int DT> __device__ __forceinline__ void store_as(void *base, int64_t i, float v) {
    reinterpret_cast<typename pa::elt<DT>::type *>(base)[i] = pa::from_float<DT>(v);
}

struct bl_new_kv {
    const void *k, *v;
    int64_t k_stride, v_stride;
};

// 1a. Paged K/V (and new K/V not in the cache) -> contiguous [seq * kv_heads,
// max_kv, head] in the compute dtype CT. Rows past kv_len are zero: padding
// must not put NaN into P.V.
template <int CDT, int CT>
__global__ void gather_kv(void *kc, void *vc, const void *key, const void *value, pa_kv_geom g,
                          const int32_t *block_tables, int32_t bt_stride, bl_lens ln, bl_new_kv nk,
                          const float *k_scale, const float *v_scale, int scale_hs, bl_dims dm) {
    using ct = typename pa::elt<CDT>::type;
    using nt = typename pa::elt<CT>::type;
    const int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x;
    if (i >= (int64_t)dm.max_kv * dm.head)
        return;
    const int b = blockIdx.y, s = b / dm.kv_heads, h = b % dm.kv_heads;
    const int t = (int)(i / dm.head), d = (int)(i % dm.head);
    const int64_t dst = (int64_t)b * dm.max_kv * dm.head + i;
    const int kl = kv_len_of(ln, s), first_new = ln.has_new ? kl - new_len_of(ln, s) : kl;
    float kx = 0.0f, vx = 0.0f;
    if (t >= first_new && t < kl) {
        const int64_t row = (ln.cu_k ? ln.cu_k[s] : q_start_of(ln.cu_q, s)) + (t - first_new);
        kx = pa::to_float<CT>(reinterpret_cast<const nt *>(nk.k)[row * nk.k_stride + (int64_t)h * dm.head + d]);
        vx = pa::to_float<CT>(reinterpret_cast<const nt *>(nk.v)[row * nk.v_stride + (int64_t)h * dm.head + d]);
    } else if (t < kl) {
        const int64_t blk = block_tables[(int64_t)s * bt_stride + t / g.block_size];
        const int tok = t % g.block_size;
        kx = pa::to_float<CDT>(reinterpret_cast<const ct *>(key)[pa_kv_key_offset(&g, blk, h, tok, d)]);
        vx = pa::to_float<CDT>(reinterpret_cast<const ct *>(value)[pa_kv_value_offset(&g, blk, h, tok, d)]);
        if (pa::is_fp8(CDT)) {
            kx *= k_scale ? k_scale[h * scale_hs] : 1.0f; // KV head h's (scales_per_head) or the one
            vx *= v_scale ? v_scale[h * scale_hs] : 1.0f;
        }
    }
    store_as<CT>(kc, dst, kx);
    store_as<CT>(vc, dst, vx);
}

// 1b. Queries -> [seq * kv_heads, max_q * group, head]: row t * group + g of
// matrix (s, kvh) is query head kvh * group + g of the sequence's row t.
template <int QT> __global__ void gather_q(void *qc, const void *q, int64_t q_stride, const int32_t *cu_q, bl_dims dm) {
    using qt = typename pa::elt<QT>::type;
    const int64_t rows = (int64_t)dm.max_q * dm.group;
    const int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x;
    if (i >= rows * dm.head)
        return;
    const int b = blockIdx.y, s = b / dm.kv_heads, kvh = b % dm.kv_heads;
    const int r = (int)(i / dm.head), d = (int)(i % dm.head), t = r / dm.group, gi = r % dm.group;
    qt v = pa::from_float<QT>(0.0f);
    if (t < q_len_of(cu_q, s)) {
        const int64_t row = q_start_of(cu_q, s) + t;
        v = reinterpret_cast<const qt *>(q)[row * q_stride + (int64_t)(kvh * dm.group + gi) * dm.head + d];
    }
    reinterpret_cast<qt *>(qc)[(int64_t)b * rows * dm.head + i] = v;
}

struct bl_mask {
    float scale, soft_cap;
    int32_t window, chunk, non_causal;
    const float *alibi, *sinks;
};

__device__ __forceinline__ float block_reduce(float v, bool is_max) {
    PA_STATIC_SMEM(red, float[kThreads / 32]);
    for (int o = 16; o > 0; o >>= 1) {
        const float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, w) : v + w;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads(); // red[] may still be read by the previous reduction
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < kThreads / 32; w++)
        v = is_max ? fmaxf(v, red[w]) : v + red[w];
    return v;
}

// 3. One CTA per score row: logits, masks, softmax; P in the compute dtype.
// Three passes over the row in global memory, as a plain softmax kernel does.
// A sink is one more logit without a value: it enters the max and the sum,
// never P.
template <int PT> __global__ void softmax_rows(void *p, const float *sc, bl_lens ln, bl_dims dm, bl_mask mk) {
    const int64_t rows = (int64_t)dm.max_q * dm.group;
    const int r = blockIdx.x, b = blockIdx.y, s = b / dm.kv_heads, kvh = b % dm.kv_heads;
    const int t = r / dm.group, h = kvh * dm.group + r % dm.group;
    const float *row = sc + ((int64_t)b * rows + r) * dm.max_kv;
    const int64_t prow = ((int64_t)b * rows + r) * dm.max_kv;
    const int ql = q_len_of(ln.cu_q, s), kl = kv_len_of(ln, s);
    const int q_pos = kl - ql + t;
    const float slope = mk.alibi ? mk.alibi[h] : 0.0f, sink = mk.sinks ? mk.sinks[h] : -INFINITY;
    auto logit = [&](int k) -> float {
        const bool visible = t < ql && k < kl && (mk.non_causal || k <= q_pos) &&
                             (mk.window <= 0 || (q_pos - k < mk.window && (!mk.non_causal || k - q_pos < mk.window))) &&
                             (mk.chunk <= 0 || k / mk.chunk == q_pos / mk.chunk);
        if (!visible)
            return -INFINITY;
        float x = mk.scale * row[k];
        if (mk.soft_cap > 0.0f)
            x = mk.soft_cap * tanhf(x / mk.soft_cap);
        return x - slope * fabsf((float)(k - q_pos)); // prefill.h: slope * (k - q_pos) where causal
    };
    float mx = -INFINITY;
    for (int k = threadIdx.x; k < dm.max_kv; k += kThreads)
        mx = fmaxf(mx, logit(k));
    mx = block_reduce(mx, true);
    if (sink == INFINITY) // all of the head's weight on the sink: zeros
        mx = -INFINITY;
    else if (mx != -INFINITY) // a row that sees no key stays zero, sink or not
        mx = fmaxf(mx, sink);
    float sum = 0.0f;
    if (mx != -INFINITY)
        for (int k = threadIdx.x; k < dm.max_kv; k += kThreads) {
            const float x = logit(k);
            sum += x == -INFINITY ? 0.0f : __expf(x - mx);
        }
    sum = block_reduce(sum, false);
    if (mx != -INFINITY && sink != -INFINITY)
        sum += __expf(sink - mx);
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (int k = threadIdx.x; k < dm.max_kv; k += kThreads) {
        const float x = mx == -INFINITY ? -INFINITY : logit(k);
        store_as<PT>(p, prow + k, x == -INFINITY ? 0.0f : __expf(x - mx) * inv);
    }
}

// 5. f32 output matrices -> out [num_tokens, num_heads, head] in the query dtype.
template <int QT> __global__ void scatter_out(void *out, const float *o, const int32_t *cu_q, bl_dims dm) {
    const int64_t rows = (int64_t)dm.max_q * dm.group;
    const int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x;
    if (i >= rows * dm.head)
        return;
    const int b = blockIdx.y, s = b / dm.kv_heads, kvh = b % dm.kv_heads;
    const int r = (int)(i / dm.head), d = (int)(i % dm.head), t = r / dm.group, gi = r % dm.group;
    if (t >= q_len_of(cu_q, s))
        return;
    const int64_t row = q_start_of(cu_q, s) + t;
    store_as<QT>(out, (row * dm.num_heads + kvh * dm.group + gi) * dm.head + d, o[(int64_t)b * rows * dm.head + i]);
}

cudaDataType cuda_type(pa_dtype t) {
    return t == PA_DTYPE_F16 ? CUDA_R_16F : t == PA_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

} // namespace

struct pa_baseline {
    pa_baseline_problem pb;
    bl_dims dm;
    pa_kv_geom g;
    cublasHandle_t cublas;
    void *ws;
    void *qc, *kc, *vc, *pr, *out;
    float *sc, *o;
};

static size_t round256(size_t n) { return (n + 255) & ~(size_t)255; }

// Bytes of the six work buffers (create() bounds the counts first).
static void bl_sizes(const pa_baseline_problem *pb, size_t sz[6]) {
    const size_t es = pa_dtype_size(pb->q_dtype), H = (size_t)pb->num_heads, D = (size_t)pb->kv.head_size;
    const size_t S = (size_t)pb->num_seqs, KVH = (size_t)pb->kv.num_kv_heads;
    const size_t mq = (size_t)pb->max_q_len, mk = (size_t)pb->max_kv_len;
    sz[0] = round256(S * H * mq * D * es);             // qc
    sz[1] = round256(S * KVH * mk * D * es);           // kc
    sz[2] = sz[1];                                     // vc
    sz[3] = round256(S * H * mq * mk * sizeof(float)); // scores
    sz[4] = round256(S * H * mq * mk * es);            // probabilities
    sz[5] = round256(S * H * mq * D * sizeof(float));  // f32 output
}

__attribute__((format(printf, 3, 4))) static int bl_fail(char *why, size_t len, const char *fmt, ...) {
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return 1;
}

extern "C" size_t pa_baseline_workspace_bytes(const pa_baseline_problem *pb) {
    size_t sz[6];
    if (!pb || pb->num_seqs <= 0 || pb->max_q_len <= 0 || pb->max_kv_len <= 0)
        return 0;
    bl_sizes(pb, sz);
    size_t total = 0;
    for (size_t x : sz)
        total += x;
    if (!pb->out)
        total += round256((size_t)pb->num_tokens * pb->num_heads * pb->kv.head_size * pa_dtype_size(pb->q_dtype));
    return total;
}

extern "C" int pa_baseline_create(const pa_baseline_problem *pb, pa_baseline **out, char *why, size_t why_len) {
    *out = NULL;
    if (pb->kv.key && pa_kv_cache_validate(&pb->kv) != PA_SUCCESS)
        return bl_fail(why, why_len, "baseline: %s", pa_last_error());
    if (!pb->kv.key && (!pb->new_k || !pb->new_v || pb->kv_lens))
        return bl_fail(why, why_len, "baseline: no cache (kv.key NULL) needs new_k/new_v and kv_lens NULL");
    if (!pb->new_k != !pb->new_v)
        return bl_fail(why, why_len, "baseline: new_k and new_v go together");
    if (pb->kv.num_kv_heads <= 0 || pb->kv.head_size <= 0)
        return bl_fail(why, why_len, "baseline: kv heads %d, head size %d", pb->kv.num_kv_heads, pb->kv.head_size);
    if (pb->q_dtype != PA_DTYPE_F32 && pb->q_dtype != PA_DTYPE_F16 && pb->q_dtype != PA_DTYPE_BF16)
        return bl_fail(why, why_len, "baseline: query dtype %s is not f32/f16/bf16", pa_dtype_name(pb->q_dtype));
    if (pb->num_heads <= 0 || pb->num_heads % pb->kv.num_kv_heads)
        return bl_fail(why, why_len, "baseline: num_heads %d is not a multiple of kv heads %d", pb->num_heads,
                       pb->kv.num_kv_heads);
    if (pb->num_seqs <= 0 || pb->max_q_len <= 0 || pb->max_kv_len <= 0 || pb->num_tokens <= 0)
        return bl_fail(why, why_len, "baseline: empty problem (num_seqs %d, max_q_len %d, max_kv_len %d)", pb->num_seqs,
                       pb->max_q_len, pb->max_kv_len);
    if ((long long)pb->num_seqs * pb->kv.num_kv_heads > 65535)
        return bl_fail(why, why_len, "baseline: num_seqs * kv_heads = %lld > 65535",
                       (long long)pb->num_seqs * pb->kv.num_kv_heads);
    const long long rows = (long long)pb->max_q_len * (pb->num_heads / pb->kv.num_kv_heads);
    if (rows > (1LL << 30) || (long long)pb->max_kv_len * pb->kv.head_size > (1LL << 30))
        return bl_fail(why, why_len, "baseline: padded matrices too large (%lld rows)", rows);
    const size_t need = pa_baseline_workspace_bytes(pb);
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return bl_fail(why, why_len, "baseline: cudaMemGetInfo failed");
    if (need > free_b / 10 * 9)
        return bl_fail(why, why_len, "baseline skipped: its padded buffers need %zu MiB, more than free memory",
                       need >> 20);

    pa_baseline *b = (pa_baseline *)calloc(1, sizeof *b);
    if (!b)
        return bl_fail(why, why_len, "baseline: out of host memory");
    b->pb = *pb;
    const int group = pb->num_heads / pb->kv.num_kv_heads;
    b->dm = bl_dims{pb->num_seqs,  pb->kv.num_kv_heads, group,        pb->kv.head_size,
                    pb->max_q_len, pb->max_kv_len,      pb->num_heads};
    if (!b->pb.q_stride)
        b->pb.q_stride = (int64_t)pb->num_heads * pb->kv.head_size;
    if (!b->pb.new_k_stride)
        b->pb.new_k_stride = (int64_t)pb->kv.num_kv_heads * pb->kv.head_size;
    if (!b->pb.new_v_stride)
        b->pb.new_v_stride = (int64_t)pb->kv.num_kv_heads * pb->kv.head_size;
    b->g = pa_kv_geom_make(pb->kv.layout, (int)pa_dtype_size(pb->kv.dtype), pb->kv.block_size, pb->kv.num_kv_heads,
                           pb->kv.head_size, pb->kv.block_stride, pb->kv.page_stride, pb->kv.head_stride);
    if (cudaMalloc(&b->ws, need) != cudaSuccess) {
        (void)cudaGetLastError();
        free(b);
        return bl_fail(why, why_len, "baseline skipped: cudaMalloc of %zu MiB failed", need >> 20);
    }
    if (cublasCreate(&b->cublas) != CUBLAS_STATUS_SUCCESS) {
        cudaFree(b->ws);
        free(b);
        return bl_fail(why, why_len, "baseline: cublasCreate failed");
    }
    size_t sz[6];
    bl_sizes(pb, sz);
    char *p = (char *)b->ws;
    b->qc = p, p += sz[0];
    b->kc = p, p += sz[1];
    b->vc = p, p += sz[2];
    b->sc = (float *)p, p += sz[3];
    b->pr = p, p += sz[4];
    b->o = (float *)p, p += sz[5];
    b->out = pb->out ? pb->out : p;
    *out = b;
    return 0;
}

extern "C" void pa_baseline_destroy(pa_baseline *b) {
    if (!b)
        return;
    cublasDestroy(b->cublas);
    cudaFree(b->ws);
    free(b);
}

static bl_lens lens_of(const pa_baseline_problem &pb) {
    return bl_lens{pb.cu_q_lens, pb.kv_lens, pb.cu_k_lens, pb.new_k != NULL};
}

template <int CT> static void launch_gather_kv(pa_baseline *b, dim3 grid) {
    const pa_baseline_problem &pb = b->pb;
    const void *value = pb.kv.layout == PA_LAYOUT_COMBINED || !pb.kv.value ? pb.kv.key : pb.kv.value;
    const bl_new_kv nk{pb.new_k, pb.new_v, pb.new_k_stride, pb.new_v_stride};
#define PA_BL_GKV(CDT)                                                                                                 \
    PA_LAUNCH(grid, kThreads, 0, 0, gather_kv<CDT, CT>)                                                                \
    (b->kc, b->vc, pb.kv.key, value, b->g, pb.block_tables, pb.block_table_stride, lens_of(pb), nk, pb.kv.k_scale,     \
     pb.kv.v_scale, pb.kv.scales_per_head ? 1 : 0, b->dm)
    switch (pb.kv.dtype) {
    case PA_DTYPE_F32: PA_BL_GKV(0); break;
    case PA_DTYPE_F16: PA_BL_GKV(1); break;
    case PA_DTYPE_BF16: PA_BL_GKV(2); break;
    case PA_DTYPE_FP8_E4M3: PA_BL_GKV(3); break;
    default: PA_BL_GKV(4); break;
    }
#undef PA_BL_GKV
}

template <int QT> static int launch_all(pa_baseline *b) {
    const pa_baseline_problem &pb = b->pb;
    const bl_dims dm = b->dm;
    const int64_t qrows = (int64_t)dm.max_q * dm.group, batch = (int64_t)dm.num_seqs * dm.kv_heads;
    const unsigned gy = (unsigned)batch;
    launch_gather_kv<QT>(b, dim3((unsigned)(((int64_t)dm.max_kv * dm.head + kThreads - 1) / kThreads), gy));
    const dim3 qgrid((unsigned)((qrows * dm.head + kThreads - 1) / kThreads), gy);
    PA_LAUNCH(qgrid, kThreads, 0, 0, gather_q<QT>)(b->qc, pb.q, pb.q_stride, pb.cu_q_lens, dm);
    if (cudaGetLastError() != cudaSuccess)
        return 1;
    // Row-major S[q_rows][max_kv] = Qc . Kc^T is column-major S^T = Kc^T(as stored) . Qc.
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType ct = cuda_type(pb.q_dtype);
    if (cublasGemmStridedBatchedEx(b->cublas, CUBLAS_OP_T, CUBLAS_OP_N, dm.max_kv, (int)qrows, dm.head, &one, b->kc, ct,
                                   dm.head, (long long)dm.max_kv * dm.head, b->qc, ct, dm.head,
                                   (long long)qrows * dm.head, &zero, b->sc, CUDA_R_32F, dm.max_kv,
                                   (long long)qrows * dm.max_kv, (int)batch, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
        return 1;
    const bl_mask mk{pb.scale,      pb.soft_cap,     pb.sliding_window, pb.local_chunk,
                     pb.non_causal, pb.alibi_slopes, pb.sinks};
    PA_LAUNCH(dim3((unsigned)qrows, gy), kThreads, 0, 0, softmax_rows<QT>)(b->pr, b->sc, lens_of(pb), dm, mk);
    if (cudaGetLastError() != cudaSuccess)
        return 1;
    // Row-major O[q_rows][head] = P . Vc is column-major O^T = Vc^T(as stored) . P^T(as stored).
    if (cublasGemmStridedBatchedEx(b->cublas, CUBLAS_OP_N, CUBLAS_OP_N, dm.head, (int)qrows, dm.max_kv, &one, b->vc, ct,
                                   dm.head, (long long)dm.max_kv * dm.head, b->pr, ct, dm.max_kv,
                                   (long long)qrows * dm.max_kv, &zero, b->o, CUDA_R_32F, dm.head,
                                   (long long)qrows * dm.head, (int)batch, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
        return 1;
    PA_LAUNCH(qgrid, kThreads, 0, 0, scatter_out<QT>)(b->out, b->o, pb.cu_q_lens, dm);
    return cudaGetLastError() != cudaSuccess;
}

extern "C" int pa_baseline_launch(pa_baseline *b) {
    switch (b->pb.q_dtype) {
    case PA_DTYPE_F32: return launch_all<0>(b);
    case PA_DTYPE_F16: return launch_all<1>(b);
    default: return launch_all<2>(b);
    }
}

static int launch_cb(void *ctx) { return pa_baseline_launch((pa_baseline *)ctx); }

extern "C" int pa_baseline_time(const pa_baseline_problem *pb, int warmup, int iters, pa_timing *t, char *why,
                                size_t why_len) {
    pa_baseline *b = NULL;
    if (pa_baseline_create(pb, &b, why, why_len))
        return 1;
    int rc = pa_bench_time_gpu("baseline", launch_cb, b, warmup, iters, t);
    if (rc)
        bl_fail(why, why_len, "baseline: launch failed: %s", cudaGetErrorString(cudaGetLastError()));
    pa_baseline_destroy(b);
    return rc;
}

extern "C" int pa_baseline_run(const pa_baseline_problem *pb, float *out_host, char *why, size_t why_len) {
    pa_baseline *b = NULL;
    if (pa_baseline_create(pb, &b, why, why_len))
        return 1;
    const size_t n = (size_t)pb->num_tokens * pb->num_heads * pb->kv.head_size, es = pa_dtype_size(pb->q_dtype);
    int rc = pa_baseline_launch(b);
    void *tmp = malloc(n * es + 16);
    if (rc == 0 && (!tmp || cudaMemcpy(tmp, b->out, n * es, cudaMemcpyDeviceToHost) != cudaSuccess))
        rc = 1;
    if (rc == 0)
        for (size_t i = 0; i < n; i++)
            out_host[i] = pa_load_as_float(pb->q_dtype, tmp, i);
    if (rc)
        bl_fail(why, why_len, "baseline: run failed: %s", cudaGetErrorString(cudaGetLastError()));
    free(tmp);
    pa_baseline_destroy(b);
    return rc;
}

extern "C" void pa_baseline_from_decode(const pa_decode_params *dev, pa_baseline_problem *pb) {
    memset(pb, 0, sizeof *pb);
    pb->out = dev->out;
    pb->q = dev->query;
    pb->q_stride = dev->q_stride;
    pb->q_dtype = dev->q_dtype;
    pb->kv = dev->kv;
    pb->block_tables = dev->block_tables;
    pb->block_table_stride = dev->block_table_stride;
    pb->kv_lens = dev->seq_lens;
    pb->cu_q_lens = NULL;
    pb->num_seqs = dev->num_seqs;
    pb->num_tokens = dev->num_seqs;
    pb->num_heads = dev->num_heads;
    pb->max_q_len = 1;
    pb->max_kv_len = dev->max_seq_len;
    pb->scale = dev->scale;
    pb->soft_cap = dev->soft_cap;
    pb->sliding_window = dev->sliding_window;
    pb->alibi_slopes = dev->alibi_slopes;
    pb->sinks = dev->sinks;
}

extern "C" void pa_baseline_from_ragged(const pa_ragged_params *dev, int32_t num_seqs, int32_t num_tokens,
                                        int32_t max_q_len, int32_t max_kv_len, pa_baseline_problem *pb) {
    memset(pb, 0, sizeof *pb);
    pb->out = dev->out;
    pb->q = dev->q;
    pb->q_dtype = dev->q_dtype;
    pb->kv = dev->kv;
    pb->block_tables = dev->page_indices;
    pb->block_table_stride = dev->pages_per_seq;
    pb->kv_lens = dev->kv_lens;
    pb->cu_q_lens = dev->cu_q_lens;
    pb->num_seqs = num_seqs;
    pb->num_tokens = num_tokens;
    pb->num_heads = dev->num_q_heads;
    pb->max_q_len = max_q_len;
    pb->max_kv_len = max_kv_len;
    pb->scale = dev->sm_scale;
    pb->soft_cap = dev->soft_cap;
    pb->sliding_window = dev->sliding_window;
    pb->sinks = dev->sinks;
}

extern "C" void pa_baseline_from_context(const pa_context_attention_params *dev, pa_baseline_problem *pb) {
    memset(pb, 0, sizeof *pb);
    pb->out = dev->out;
    pb->q = dev->query;
    pb->q_stride = dev->q_stride;
    pb->q_dtype = dev->q_dtype;
    pb->kv = dev->kv;
    pb->block_tables = dev->block_tables;
    pb->block_table_stride = dev->block_table_stride;
    pb->cu_q_lens = dev->query_start_loc;
    pb->kv_lens = dev->seq_lens;
    pb->new_k = dev->key;
    pb->new_v = dev->value;
    pb->new_k_stride = dev->k_stride;
    pb->new_v_stride = dev->v_stride;
    pb->num_seqs = dev->num_seqs;
    pb->num_tokens = dev->num_tokens;
    pb->num_heads = dev->num_heads;
    pb->max_q_len = dev->max_query_len;
    pb->max_kv_len = dev->max_seq_len;
    pb->scale = dev->scale;
    pb->soft_cap = dev->soft_cap;
    pb->sliding_window = dev->sliding_window;
    pb->alibi_slopes = dev->alibi_slopes;
    pb->sinks = dev->sinks;
}

extern "C" void pa_baseline_from_prompt(const pa_prompt_attention_params *dev, pa_baseline_problem *pb) {
    memset(pb, 0, sizeof *pb);
    pb->out = dev->out;
    pb->q = dev->query;
    pb->q_stride = dev->q_stride;
    pb->q_dtype = dev->dtype;
    pb->kv.layout = PA_LAYOUT_FLASH_NHD; /* no cache: only the geometry is used */
    pb->kv.dtype = dev->dtype;
    pb->kv.num_kv_heads = dev->num_kv_heads;
    pb->kv.head_size = dev->head_size;
    pb->kv.block_size = 1;
    pb->cu_q_lens = dev->cu_seqlens_q;
    pb->cu_k_lens = dev->cu_seqlens_k;
    pb->new_k = dev->key;
    pb->new_v = dev->value;
    pb->new_k_stride = dev->k_stride;
    pb->new_v_stride = dev->v_stride;
    pb->num_seqs = dev->num_seqs;
    pb->num_tokens = dev->num_q_tokens;
    pb->num_heads = dev->num_heads;
    pb->max_q_len = dev->max_seqlen_q;
    pb->max_kv_len = dev->cu_seqlens_k ? dev->max_seqlen_k : dev->max_seqlen_q;
    pb->scale = dev->scale;
    pb->soft_cap = dev->soft_cap;
    pb->sliding_window = dev->sliding_window;
    pb->non_causal = dev->attn_type != PA_ATTN_DECODER;
    pb->alibi_slopes = dev->alibi_slopes;
    pb->sinks = dev->sinks;
}
