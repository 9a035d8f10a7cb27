// Prefill attention for f32 queries on CUDA cores: the same semantics as the
// tensor-core kernel (prefill_kernel.cuh), written plainly. f32 prefill is a
// correctness path (tests, debugging), not a fast one.
//
// One warp = one (query token, head) row; a CTA holds 4 tokens of one head.
// Keys go 32 at a time: lane j computes the logit of key kb + j (its own dot
// product over the head), the warp takes the chunk's max and sum with shuffles
// (online softmax), then every lane accumulates its head elements
// (d = lane + 32 i) over the chunk's keys, whose weights and row offsets come
// from the owning lane by shuffle. Masked keys are never read.
#include "prefill_kernel.cuh"

namespace {

constexpr int kWarps = 4;
constexpr int kMaxPerLane = PA_PREFILL_MAX_HEAD / 32;

// Element d of a key/value row at `off` (source dtype: f32 or fp8 with scale).
__device__ __forceinline__ float load_elt(const void *base, int kind, int64_t off, float scale) {
    if (kind == 0)
        return static_cast<const float *>(base)[off];
    const uint8_t v = static_cast<const uint8_t *>(base)[off];
    return (kind == 3 ? pa::to_float<3>(v) : pa::to_float<4>(v)) * scale;
}

// At least 4 CTAs an SM (up to 128 registers a thread). With no CTA count
// ptxas held sm_86 to 64 registers, at the edge: the lse's 64-bit address
// (its strides, 2026-12-05) spilled 4-28 bytes at sm_86 and sm_89; now it
// takes 72-82 registers and spills nowhere (check-sm8x, sm_90: 82).
__global__ void __launch_bounds__(kWarps * 32, 4) prefill_f32_kernel(const pa_prefill_kparams p) {
    PA_STATIC_SMEM(q_s, float[kWarps][PA_PREFILL_MAX_HEAD]);
    const int s = blockIdx.y, head = blockIdx.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    pa_prefill::Seq sq;
    if (!pa_prefill::load_seq(p, s, sq))
        return;
    const int tok0 = blockIdx.x * kWarps;
    if (tok0 >= sq.q_len)
        return;
    if (!pa_prefill::seq_ok<kWarps * 32>(p, s, sq))
        return;
    const int tok = tok0 + warp;
    if (tok >= sq.q_len)
        return;
    const int hs = p.head_size, group = p.num_heads / p.num_kv_heads, kvh = head / group;
    const int qpos = sq.k_len - sq.q_len + tok;
    const int k_end = pa_prefill::span_end(p, sq.k_len, qpos);
    const int k_begin = p.window > 0 && qpos >= p.window ? qpos - p.window + 1 : 0;
    const float *q = static_cast<const float *>(p.query) + (int64_t)(sq.q0 + tok) * p.q_stride + (int64_t)head * hs;
    for (int d = lane; d < hs; d += 32)
        q_s[warp][d] = q[d];
    __syncwarp();

    const float slope = p.alibi_slopes ? p.alibi_slopes[head] : 0.0f;
    const float inv_cap = p.soft_cap > 0.0f ? 1.0f / p.soft_cap : 0.0f;
    const float ks = p.k_scale ? p.k_scale[kvh * p.scale_hs] : 1.0f,
                vs = p.v_scale ? p.v_scale[kvh * p.scale_hs] : 1.0f;
    const int kind = p.cache_dtype == PA_DTYPE_F32 ? 0 : p.cache_dtype;
    float acc[kMaxPerLane];
#pragma unroll
    for (int i = 0; i < kMaxPerLane; i++)
        acc[i] = 0.0f;
    float m = -INFINITY, l = 0.0f;

    for (int kb = k_begin; kb < k_end; kb += 32) {
        const int j = kb + lane;
        float x = -INFINITY;
        int64_t ko = -1, vo = -1;
        bool from_cache = false;
        if (j < k_end) {
            if (j < sq.n_cache) {
                const int bs = p.g.block_size;
                const int64_t blk = p.block_tables[(int64_t)s * p.block_table_stride + j / bs];
                ko = pa_kv_key_offset(&p.g, blk, kvh, j % bs, 0);
                vo = pa_kv_value_offset(&p.g, blk, kvh, j % bs, 0);
                from_cache = true;
            } else {
                const int64_t row = sq.k_row0 + (j - sq.n_cache);
                ko = row * p.k_stride + (int64_t)kvh * hs;
                vo = row * p.v_stride + (int64_t)kvh * hs;
            }
            float dot = 0.0f;
            for (int d = 0; d < hs; d++) {
                const float kx = from_cache ? load_elt(p.key_cache, kind, ko + pa_kv_key_offset(&p.g, 0, 0, 0, d), ks)
                                            : static_cast<const float *>(p.key_new)[ko + d];
                dot += q_s[warp][d] * kx;
            }
            x = dot * p.scale;
            if (p.soft_cap > 0.0f)
                x = p.soft_cap * tanhf(x * inv_cap);
            x -= slope * fabsf((float)(j - qpos));
        }
        float mx = x;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        const float m_new = fmaxf(m, mx);
        const float ref = m_new == -INFINITY ? 0.0f : m_new;
        const float corr = expf(m - ref);
        const float w = expf(x - ref); // 0 for masked keys
        float sum = w;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
        l = l * corr + sum;
        m = m_new;
#pragma unroll
        for (int i = 0; i < kMaxPerLane; i++)
            acc[i] *= corr;
        const int n = min(32, k_end - kb);
        for (int jj = 0; jj < n; jj++) {
            const float wj = __shfl_sync(0xffffffffu, w, jj);
            const int64_t vj = __shfl_sync(0xffffffffu, vo, jj);
            const bool cj = __shfl_sync(0xffffffffu, from_cache, jj);
            if (wj == 0.0f)
                continue; // masked (or negligible): its value is never read
#pragma unroll
            for (int i = 0; i < kMaxPerLane; i++) {
                const int d = lane + 32 * i;
                if (d < hs) {
                    const float vx = cj ? load_elt(p.value_cache, kind, vj + pa_kv_value_offset(&p.g, 0, 0, 0, d), vs)
                                        : static_cast<const float *>(p.value_new)[vj + d];
                    acc[i] += wj * vx;
                }
            }
        }
    }
    if (p.sinks && l > 0.0f) // the head's sink: one more term of the sum, with no value
        l += expf(p.sinks[head] - m);
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    float *out = static_cast<float *>(p.out) + ((int64_t)(sq.q0 + tok) * p.num_heads + head) * hs;
#pragma unroll
    for (int i = 0; i < kMaxPerLane; i++) {
        const int d = lane + 32 * i;
        if (d < hs)
            out[d] = acc[i] * inv;
    }
    // The row's log-sum-exp (prefill.h), after the output, where acc is dead.
    if (p.lse && lane == 0)
        *pa_prefill::lse_at(p, head, sq.q0 + tok) = pa_prefill::row_lse(p, head, l, m + logf(l));
}

} // namespace

cudaError_t pa_prefill_f32(const pa_prefill_kparams &p, cudaStream_t stream) {
    const int64_t tiles = ((int64_t)p.max_q_len + kWarps - 1) / kWarps;
    if (tiles == 0 || p.num_seqs == 0)
        return cudaSuccess;
    dim3 grid((unsigned)tiles, (unsigned)p.num_seqs, (unsigned)p.num_heads);
    PA_LAUNCH(grid, kWarps * 32, 0, stream, prefill_f32_kernel)(p);
    return cudaGetLastError();
}
