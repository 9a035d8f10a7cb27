// Ragged paged attention for f32 queries (cache f32 or fp8): plain f32 FMAs,
// since tensor cores would round q and k below f32 and miss the f32
// tolerance. Same work items and epilogue as the tensor-core kernel; 8 warps
// share each 32-key K/V tile (f32 in shared memory, one key per lane), warp w
// owns rows w * rpw .. w * rpw + rpw - 1 with rpw = 8 for a prefill tile and 2
// for a decode item (<= 16 rows), so a decode reads each K/V byte once for its
// GQA group and no warp computes rows it does not have.
#pragma once

#include "ragged_common.cuh"

namespace pa {
namespace rg {

constexpr int kSimtWarps = 8;
constexpr int kSimtThreads = kSimtWarps * 32;
constexpr int kSimtKeys = 32;
constexpr int kSimtRows = 8; // rows per warp, at most

template <int HP> constexpr size_t simt_smem_bytes() {
    // Q [64][HP], K and V [32][HP + 1], P [warps][8][32]
    return sizeof(float) * ((size_t)64 * HP + 2 * (size_t)kSimtKeys * (HP + 1) + kSimtWarps * kSimtRows * kSimtKeys);
}

// Head 64 is held to 3 CTAs an SM (at most 85 registers; it needs about 80
// and ptxas took 95 once the lse output's row pass was in, which left 2):
// shared memory allows 5. Heads 128 and 256 take 2 and 1 whatever the bound.
template <int HP>
__global__ void __launch_bounds__(kSimtThreads, HP == 64 ? 3 : 1)
    ragged_simt_kernel(const __grid_constant__ pa_rg_launch P) {
    constexpr int KS = HP + 1; // odd stride: lane-indexed keys hit distinct banks
    constexpr int NJ = HP / 32;
    PA_DYNAMIC_SMEM(unsigned char, smem);
    float *qs = reinterpret_cast<float *>(smem);
    float *ks = qs + 64 * HP;
    float *vs = ks + kSimtKeys * KS;
    float *ps = vs + kSimtKeys * KS;
    PA_STATIC_SMEM(s_idx, int);
    PA_STATIC_SMEM(s_flag, int);
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int hs = P.head_size;
    const bool fp8 = P.kv_dtype != 0;
    const bool e5m2 = P.kv_dtype == 4;
    const int num_items = hdr(P)->num_items;
    const float *q = static_cast<const float *>(P.q);
    float *pw = ps + w * kSimtRows * kSimtKeys;

    for (;;) {
        const int idx = next_item(P, &s_idx);
        if (idx >= num_items)
            break;
        const Item c = load_item(P, idx);
        const float k_scale = fp8 && P.k_scale ? P.k_scale[c.it.kvh * P.scale_hs] : 1.0f; // the item's KV head's
        const float v_scale = fp8 && P.v_scale ? P.v_scale[c.it.kvh * P.scale_hs] : 1.0f;
        const int rpw = c.it.nrows <= PA_RG_DEC_ROWS ? 2 : kSimtRows;
        const int hs4 = hs / 4;
        for (int u = threadIdx.x; u < 64 * hs4; u += kSimtThreads) {
            const int r = u / hs4, d = (u % hs4) * 4;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (r < c.it.nrows)
                v = *reinterpret_cast<const float4 *>(q + row_offset(P, c, c.it.row0 + r) + d);
            *reinterpret_cast<float4 *>(qs + r * HP + d) = v;
        }
        int qp[kSimtRows];
        float m[kSimtRows], l[kSimtRows], o[kSimtRows][NJ];
#pragma unroll
        for (int i = 0; i < kSimtRows; i++) {
            qp[i] = q_pos(P, c, c.it.row0 + w * rpw + i);
            m[i] = -INFINITY;
            l[i] = 0.0f;
#pragma unroll
            for (int j = 0; j < NJ; j++)
                o[i][j] = 0.0f;
        }

        for (int k0 = c.it.k_lo; k0 < c.it.k_hi; k0 += kSimtKeys) {
            __syncthreads(); // previous tile consumed (and Q stored, on the first)
            // K/V rows: units of 4 f32 (16 bytes) or 8 fp8 elements (8 bytes: a
            // row of head 40 or 120 is not a whole number of 16-byte units, and
            // its rows are only 8-byte aligned), converted to f32.
            const int per = fp8 ? 8 : 4, units = hs / per;
            for (int u = threadIdx.x; u < 2 * kSimtKeys * units; u += kSimtThreads) {
                const int which = u / (kSimtKeys * units), rem = u % (kSimtKeys * units);
                const int r = rem / units, d = (rem % units) * per;
                const int key = k0 + r;
                float *dst = (which ? vs : ks) + r * KS + d;
                const int64_t off = key < c.it.k_hi ? kv_row(P, c, key, which) : -1;
                if (off < 0) {
                    for (int e = 0; e < per; e++)
                        dst[e] = 0.0f;
                } else if (!fp8) {
                    const float4 v = *reinterpret_cast<const float4 *>(static_cast<const float *>(P.kv) + off + d);
                    dst[0] = v.x, dst[1] = v.y, dst[2] = v.z, dst[3] = v.w;
                } else {
                    const uint2 raw = *reinterpret_cast<const uint2 *>(static_cast<const uint8_t *>(P.kv) + off + d);
                    const uint8_t *b = reinterpret_cast<const uint8_t *>(&raw);
                    const float sc = which ? v_scale : k_scale;
#pragma unroll
                    for (int e = 0; e < 8; e++)
                        dst[e] = (e5m2 ? pa::to_float<4>(b[e]) : pa::to_float<3>(b[e])) * sc;
                }
            }
            __syncthreads();

            // S: lane = key; rows of this warp.
            float s[kSimtRows];
#pragma unroll
            for (int i = 0; i < kSimtRows; i++)
                s[i] = 0.0f;
            const float *kr = ks + lane * KS;
            const float *qr = qs + (w * rpw) * HP;
            for (int d = 0; d < hs; d++) {
                const float kd = kr[d];
#pragma unroll
                for (int i = 0; i < kSimtRows; i++)
                    if (i < rpw)
                        s[i] = fmaf(qr[i * HP + d], kd, s[i]);
            }
#pragma unroll
            for (int i = 0; i < kSimtRows; i++) {
                if (i >= rpw)
                    break;
                const float x = logit(P, c, s[i], k0 + lane, qp[i], P.sm_scale);
                float mx = x;
#pragma unroll
                for (int sh = 16; sh > 0; sh >>= 1)
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, sh));
                const float mnew = fmaxf(m[i], mx);
                const float p = mnew == -INFINITY ? 0.0f : __expf(x - mnew);
                const float corr = m[i] == -INFINITY ? 0.0f : __expf(m[i] - mnew);
                float sum = p;
#pragma unroll
                for (int sh = 16; sh > 0; sh >>= 1)
                    sum += __shfl_xor_sync(0xffffffffu, sum, sh);
                m[i] = mnew;
                l[i] = l[i] * corr + sum;
                pw[i * kSimtKeys + lane] = p;
#pragma unroll
                for (int j = 0; j < NJ; j++)
                    o[i][j] *= corr;
            }
            __syncwarp();
            const int nk = c.it.k_hi - k0 < kSimtKeys ? c.it.k_hi - k0 : kSimtKeys;
            for (int k = 0; k < nk; k++) {
                float v[NJ];
#pragma unroll
                for (int j = 0; j < NJ; j++)
                    v[j] = lane + 32 * j < hs ? vs[k * KS + lane + 32 * j] : 0.0f;
#pragma unroll
                for (int i = 0; i < kSimtRows; i++) {
                    if (i < rpw) {
                        const float pk = pw[i * kSimtKeys + k];
#pragma unroll
                        for (int j = 0; j < NJ; j++)
                            o[i][j] = fmaf(pk, v[j], o[i][j]);
                    }
                }
            }
            __syncwarp();
        }
        __syncthreads(); // Q and the tiles are free: stage the rows over Q

        float *st = qs;
        float *st_lse = ks;
#pragma unroll
        for (int i = 0; i < kSimtRows; i++) {
            if (i < rpw) {
                const int r = w * rpw + i;
                const float inv = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;
#pragma unroll
                for (int j = 0; j < NJ; j++)
                    st[r * HP + lane + 32 * j] = o[i][j] * inv;
                if (lane == 0)
                    st_lse[r] = l[i] > 0.0f ? m[i] + __logf(l[i]) : -INFINITY;
            }
        }
        __syncthreads();
        epilogue<0, HP, kSimtThreads>(P, c, st, st_lse, 1, 0, &s_flag);
        __syncthreads();
    }
}

} // namespace rg
} // namespace pa
