// Ragged paged attention: device pieces shared by the planner, the tensor-core
// kernel (ragged_mma.cuh, f16/bf16 queries) and the SIMT kernel (ragged_simt.cuh,
// f32 queries): workspace views, the per-item context, K/V row addressing in
// the combined layout, the masking rule, and the epilogue that writes a tile's
// rows (directly, or as a partial result merged by the last CTA of its tile).
#pragma once

#include <math.h>
#include <stdint.h>

#include "ragged_internal.h"
#include "../dtype.cuh"

namespace pa {
namespace rg {

struct Hdr {
    int num_items, fetch, num_merges, part_rows;
};

__device__ __forceinline__ Hdr *hdr(const pa_rg_launch &P) { return static_cast<Hdr *>(P.ws); }
__device__ __forceinline__ pa_rg_item *items(const pa_rg_launch &P) {
    return reinterpret_cast<pa_rg_item *>(static_cast<char *>(P.ws) + P.wl.off_items);
}
__device__ __forceinline__ pa_rg_merge *merges(const pa_rg_launch &P) {
    return reinterpret_cast<pa_rg_merge *>(static_cast<char *>(P.ws) + P.wl.off_merges);
}
__device__ __forceinline__ int *counters(const pa_rg_launch &P) {
    return reinterpret_cast<int *>(static_cast<char *>(P.ws) + P.wl.off_counters);
}
__device__ __forceinline__ float *part_lse(const pa_rg_launch &P) {
    return reinterpret_cast<float *>(static_cast<char *>(P.ws) + P.wl.off_ml);
}
template <class T> __device__ __forceinline__ T *part_o(const pa_rg_launch &P) {
    return reinterpret_cast<T *>(static_cast<char *>(P.ws) + P.wl.off_o);
}

// What a CTA needs to know about its item, read once per item.
struct Item {
    pa_rg_item it;
    int q_len, kv_len, q_base, group;
    const int32_t *pages;
};

__device__ __forceinline__ Item load_item(const pa_rg_launch &P, int idx) {
    Item c;
    c.it = items(P)[idx];
    const int s = c.it.seq;
    c.q_base = P.cu_q_lens[s];
    c.q_len = P.cu_q_lens[s + 1] - c.q_base;
    c.kv_len = P.kv_lens[s];
    c.group = P.num_q_heads / P.num_kv_heads;
    c.pages = P.page_indices + (int64_t)s * P.pages_per_seq;
    return c;
}

// Packed row pr is token pr / group, query head kvh * group + pr % group. The
// division is P.group_div's multiply-high: the group is a launch constant, so
// `/` would be a software division per call.
__device__ __forceinline__ int row_head(const Item &c, int pr, int tok) {
    return c.it.kvh * c.group + (pr - tok * c.group);
}
// Element offset of packed row pr in q / out.
__device__ __forceinline__ int64_t row_offset(const pa_rg_launch &P, const Item &c, int pr) {
    const int tok = pa_kv_divide(P.group_div, pr);
    return ((int64_t)(c.q_base + tok) * P.num_q_heads + row_head(c, pr, tok)) * P.head_size;
}
// The attention sink of packed row pr's head, as a weight e^(sink - m) beside
// a sum of exponentials taken at max m (natural log); 0 without sinks (and
// for a -inf sink), so the caller's sum is unchanged bit for bit.
__device__ __forceinline__ float sink_weight(const pa_rg_launch &P, const Item &c, int pr, float m) {
    if (P.sinks == nullptr)
        return 0.0f;
    return __expf(__ldg(P.sinks + row_head(c, pr, pa_kv_divide(P.group_div, pr))) - m);
}

// The largest of n partial log-sum-exps part(j), and that log-sum-exp
// merged: max + log(sum of e^(part - max)), -inf when every part is -inf (the
// epilogue's key slices, the last CTA's chunks).
template <class Part> __device__ __forceinline__ float parts_max(int n, const Part &part) {
    float mx = -INFINITY;
    for (int j = 0; j < n; j++)
        mx = fmaxf(mx, part(j));
    return mx;
}
template <class Part> __device__ __forceinline__ float parts_lse(int n, const Part &part) {
    const float mx = parts_max(n, part);
    float wsum = 0.0f;
    for (int j = 0; j < n; j++) {
        const float ls = part(j);
        wsum += ls == -INFINITY ? 0.0f : __expf(ls - mx);
    }
    return wsum > 0.0f ? mx + __logf(wsum) : -INFINITY;
}

// The caller's lse (ragged.h) of packed row pr: `keys` is the log-sum-exp of
// the row's keys (-inf: none); the sink's term is added here at the larger of
// the two, so that neither exponential overflows (a +inf sink gives +inf, a
// -inf one leaves keys as it is, bit for bit).
__device__ __forceinline__ void store_lse(const pa_rg_launch &P, const Item &c, int pr, float keys) {
    const int tok = pa_kv_divide(P.group_div, pr), h = row_head(c, pr, tok);
    float v = keys;
    if (P.sinks != nullptr) {
        const float sink = __ldg(P.sinks + h), m = fmaxf(keys, sink);
        v = keys == -INFINITY || sink == INFINITY ? sink : m + __logf(__expf(keys - m) + __expf(sink - m));
    }
    P.lse[(int64_t)h * P.lse_hs + (int64_t)(c.q_base + tok) * P.lse_ts] = v;
}

// Position of packed row pr (rows past the item are clamped to its last row,
// so padding rows see a valid key range and never produce NaN).
__device__ __forceinline__ int q_pos(const pa_rg_launch &P, const Item &c, int pr) {
    const int last = c.it.row0 + c.it.nrows - 1;
    return c.kv_len - c.q_len + pa_kv_divide(P.group_div, pr < last ? pr : last);
}

// Element offset of key `key`'s K (which 0) or V (which 1) row of the item's KV
// head, or -1 when its page id is out of range (the row then reads as zeros).
__device__ __forceinline__ int64_t kv_row(const pa_rg_launch &P, const Item &c, int key, int which) {
    int page, tok;
    if (P.page_shift >= 0) {
        page = key >> P.page_shift;
        tok = key & (P.page_size - 1);
    } else {
        page = key / P.page_size;
        tok = key - page * P.page_size;
    }
    const int blk = c.pages[page];
    if ((unsigned)blk >= (unsigned)P.num_pages)
        return -1;
    return (((int64_t)blk * P.page_size + tok) * (2 * P.num_kv_heads) + 2 * c.it.kvh + which) * P.head_size;
}

// The logit of (row at q_pos qp, key) from the raw dot: scale, soft cap, then
// the mask. Keys outside the item's range do not exist (-inf). A hard mask
// value becomes -inf (exp underflows to 0 for it anyway, and an added
// -0.7 * FLT_MAX would overflow to -inf times log2(e) later); a mild one is
// added, as in JAX.
// `scale` is P.sm_scale, or with the K scale of an fp8 cache folded in by a
// kernel that dequantises without it. logit_unmasked is the same for a key in
// the item's range that the mask leaves visible.
__device__ __forceinline__ float logit_unmasked(const pa_rg_launch &P, float dot, float scale) {
    float x = dot * scale;
    // The fast division: an IEEE one calls a slow path per score, and the call
    // makes a kernel at its register limit spill the accumulators live across it.
    if (P.soft_cap > 0.0f)
        x = P.soft_cap * tanhf(__fdividef(x, P.soft_cap));
    return x;
}
__device__ __forceinline__ float logit(const pa_rg_launch &P, const Item &c, float dot, int key, int qp, float scale) {
    if (key < c.it.k_lo || key >= c.it.k_hi)
        return -INFINITY;
    float x = logit_unmasked(P, dot, scale);
    const bool masked = key > qp || (P.window > 0 && qp - P.window >= key);
    if (masked)
        x = P.hard_mask ? -INFINITY : x + P.mask_value;
    return x;
}

// ---- 8-element groups of an output row --------------------------------------------
template <int DT> __device__ __forceinline__ void store8(typename pa::elt<DT>::type *dst, const float (&v)[8]) {
    if constexpr (DT == 0) {
        reinterpret_cast<float4 *>(dst)[0] = make_float4(v[0], v[1], v[2], v[3]);
        reinterpret_cast<float4 *>(dst)[1] = make_float4(v[4], v[5], v[6], v[7]);
    } else {
        union {
            uint4 u;
            typename pa::elt<DT>::type e[8];
        } x;
#pragma unroll
        for (int i = 0; i < 8; i++)
            x.e[i] = pa::from_float<DT>(v[i]);
        *reinterpret_cast<uint4 *>(dst) = x.u;
    }
}

// L2 loads (__ldcg): partial results written by other CTAs of this launch.
template <int DT> __device__ __forceinline__ void load8_cg(const typename pa::elt<DT>::type *src, float (&v)[8]) {
    if constexpr (DT == 0) {
        const float4 a = __ldcg(reinterpret_cast<const float4 *>(src));
        const float4 b = __ldcg(reinterpret_cast<const float4 *>(src) + 1);
        v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
    } else {
        union {
            uint4 u;
            typename pa::elt<DT>::type e[8];
        } x;
        x.u = __ldcg(reinterpret_cast<const uint4 *>(src));
#pragma unroll
        for (int i = 0; i < 8; i++)
            v[i] = pa::to_float<DT>(x.e[i]);
    }
}

// ---- epilogue -------------------------------------------------------------------------
// st: f32 staging in shared memory, slice s row r at st[(s * slice_rows + r) * SR]
// (normalised rows; with SWZ the two 4-float halves of each 8 columns are
// swapped where column bit 5 is set, as the tensor-core items store them, so
// a quarter warp's reads of 8 column groups meet 8 bank groups) and
// their log-sum-exp at st_lse[s * slice_rows + r]; nslices
// > 1 when the CTA's warps split the keys of one set of rows (decode items):
// the slices merge here, in slice order. Then the item's rows go to `out`
// (one chunk) or to its partial rows; the CTA that completes a tile's last
// chunk merges all chunks of the tile, in chunk order (batch invariant: the
// same arithmetic whichever CTA finishes last).
// Where column col of a staging row sits under SWZ.
__device__ __forceinline__ int staged_col(int col) { return col ^ (((col >> 5) & 1) << 2); }

template <int DT, int HP, int NT, int SR = HP, bool SWZ = false>
__device__ void epilogue(const pa_rg_launch &P, const Item &c, const float *st, const float *st_lse, int nslices,
                         int slice_rows, int *s_flag) {
    using T = typename pa::elt<DT>::type;
    const int hs = P.head_size, groups = hs / 8, nrows = c.it.nrows;
    T *out = static_cast<T *>(P.out);
    T *po = part_o<T>(P);
    float *pl = part_lse(P);
    // The 8 staged columns from cg * 8 of staging row sr.
    auto staged = [&](int sr, int cg, float(&x)[8]) {
        const float *src = st + sr * SR + cg * 8;
        const int sw = SWZ ? ((cg >> 2) & 1) * 4 : 0;
        const float4 a = *reinterpret_cast<const float4 *>(src + sw);
        const float4 b = *reinterpret_cast<const float4 *>(src + (4 ^ sw));
        x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
    };
    for (int u = threadIdx.x; u < nrows * groups; u += NT) {
        const int r = u / groups, cg = u % groups;
        float v[8], lse;
        if (nslices == 1) {
            staged(r, cg, v);
            lse = st_lse[r];
            // A one-chunk row with a sink: its normalised row times
            // e^lse / (e^lse + e^sink). A chunk's partial row keeps its own
            // softmax; the merge below adds the sink once.
            if (c.it.part < 0 && P.sinks != nullptr) {
                const float keep = lse == -INFINITY ? 0.0f : 1.0f / (1.0f + sink_weight(P, c, c.it.row0 + r, lse));
#pragma unroll
                for (int e = 0; e < 8; e++)
                    v[e] *= keep;
            }
        } else {
            const float mx = parts_max(nslices, [&](int s) { return st_lse[s * slice_rows + r]; });
            float wsum = 0.0f;
#pragma unroll
            for (int e = 0; e < 8; e++)
                v[e] = 0.0f;
            for (int s = 0; s < nslices; s++) {
                const float ls = st_lse[s * slice_rows + r];
                const float w = ls == -INFINITY ? 0.0f : __expf(ls - mx);
                wsum += w;
                float x[8];
                staged(s * slice_rows + r, cg, x);
#pragma unroll
                for (int e = 0; e < 8; e++)
                    v[e] += w * x[e];
            }
            // The sink joins the sum of a one-chunk row (not a partial one's).
            const float sw = c.it.part < 0 && wsum > 0.0f ? sink_weight(P, c, c.it.row0 + r, mx) : 0.0f;
            const float inv = wsum > 0.0f ? 1.0f / (wsum + sw) : 0.0f;
#pragma unroll
            for (int e = 0; e < 8; e++)
                v[e] *= inv;
            lse = wsum > 0.0f ? mx + __logf(wsum) : -INFINITY;
        }
        if (c.it.part < 0) {
            store8<DT>(out + row_offset(P, c, c.it.row0 + r) + cg * 8, v);
        } else {
            store8<DT>(po + (int64_t)(c.it.part + r) * hs + cg * 8, v);
            if (cg == 0)
                pl[c.it.part + r] = lse;
        }
    }
    if (c.it.part < 0) {
        // The caller's lse, a row a thread (not in the loop above, where a
        // warp would take the lse's branch for each of its 8-column groups).
#pragma unroll 1
        for (int r = threadIdx.x; P.lse != nullptr && r < nrows; r += NT)
            store_lse(P, c, c.it.row0 + r, parts_lse(nslices, [&](int s) { return st_lse[s * slice_rows + r]; }));
        return;
    }

    // Last CTA of the tile merges (threadFenceReduction pattern).
    __threadfence();
    __syncthreads();
    const pa_rg_merge m = merges(P)[c.it.merge];
    if (threadIdx.x == 0)
        *s_flag = atomicAdd(&counters(P)[c.it.merge], 1) == m.n_split - 1;
    __syncthreads();
    if (!*s_flag)
        return;
    __threadfence();
    for (int u = threadIdx.x; u < m.nrows * groups; u += NT) {
        const int r = u / groups, cg = u % groups;
        const float mx = parts_max(m.n_split, [&](int j) { return __ldcg(pl + m.part0 + j * m.nrows + r); });
        float v[8], wsum = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; e++)
            v[e] = 0.0f;
        for (int j = 0; j < m.n_split; j++) {
            const int pr = m.part0 + j * m.nrows + r;
            const float ls = __ldcg(pl + pr);
            if (ls == -INFINITY)
                continue;
            const float w = __expf(ls - mx);
            wsum += w;
            float x[8];
            load8_cg<DT>(po + (int64_t)pr * hs + cg * 8, x);
#pragma unroll
            for (int e = 0; e < 8; e++)
                v[e] += w * x[e];
        }
        // The sink, once, beside the chunks' sums.
        const float sw = wsum > 0.0f ? sink_weight(P, c, m.row0 + r, mx) : 0.0f;
        const float inv = wsum > 0.0f ? 1.0f / (wsum + sw) : 0.0f;
#pragma unroll
        for (int e = 0; e < 8; e++)
            v[e] *= inv;
        store8<DT>(out + row_offset(P, c, m.row0 + r) + cg * 8, v);
    }
#pragma unroll 1
    for (int r = threadIdx.x; P.lse != nullptr && r < m.nrows; r += NT)
        store_lse(P, c, m.row0 + r,
                  parts_lse(m.n_split, [&](int j) { return __ldcg(pl + m.part0 + j * m.nrows + r); }));
    if (threadIdx.x == 0)
        counters(P)[c.it.merge] = 0; // ready for the next launch (the planner resets it too)
}

// Dynamic item fetch: every CTA takes the next item until the list is done.
__device__ __forceinline__ int next_item(const pa_rg_launch &P, int *s_idx) {
    if (threadIdx.x == 0)
        *s_idx = atomicAdd(&hdr(P)->fetch, 1);
    __syncthreads();
    const int idx = *s_idx;
    __syncthreads(); // every thread has read s_idx before thread 0 may overwrite it
    return idx;
}

} // namespace rg
} // namespace pa
