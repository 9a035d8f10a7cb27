// Ragged paged attention: the planner kernel and the launcher.
//
// The planner is one CTA that reads num_seqs, cu_q_lens and kv_lens on the
// device and writes the work list into the caller's workspace, so the launch
// pair can be captured in a CUDA graph once and replayed for any batch. It is
// the device twin of pa_rg_plan_host (csrc/ops/ragged.c): two passes (prefill
// sequences first, so the long items start first under dynamic fetching, then
// decode sequences), sequences in order, each sequence's items tile by tile
// (heaviest first, pa_rg_tile_at) as pa_rg_tile_item enumerates them: one warp per sequence, 32 tiles at a time
// (a warp scan gives each tile's item, merge and partial-row offsets), the
// lanes sharing each tile's items, so planning is linear in tiles and items. A sequence is live when pa_rg_seq_live
// holds and its rows start at or after the end of every earlier sequence's rows: garbage that would overlap rows (and
// overflow the workspace bound) is skipped.
#include <cuda_runtime.h>
#include <limits.h>

#include "launchers.h"
#include "ragged_common.cuh"
#include "ragged_launch.cuh"

namespace {

constexpr int kPlanThreads = 512;
constexpr int kPlanWarps = kPlanThreads / 32;

// Exclusive block scans over kPlanThreads threads; *total gets the reduction.
__device__ int scan_sum(int v, int *sw, int *total) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int x = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d)
            x += y;
    }
    if (lane == 31)
        sw[w] = x;
    __syncthreads();
    if (w == 0) {
        int y = lane < kPlanWarps ? sw[lane] : 0;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const int z = __shfl_up_sync(0xffffffffu, y, d);
            if (lane >= d)
                y += z;
        }
        if (lane < kPlanWarps)
            sw[lane] = y;
    }
    __syncthreads();
    const int before = w > 0 ? sw[w - 1] : 0;
    *total = sw[kPlanWarps - 1];
    __syncthreads();
    return before + x - v;
}

__device__ int scan_max(int v, int *sw, int *total) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int x = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d)
            x = max(x, y);
    }
    int excl = __shfl_up_sync(0xffffffffu, x, 1);
    if (lane == 0)
        excl = INT_MIN;
    if (lane == 31)
        sw[w] = x;
    __syncthreads();
    if (w == 0) {
        int y = lane < kPlanWarps ? sw[lane] : INT_MIN;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const int z = __shfl_up_sync(0xffffffffu, y, d);
            if (lane >= d)
                y = max(y, z);
        }
        if (lane < kPlanWarps)
            sw[lane] = y;
    }
    __syncthreads();
    const int before = w > 0 ? sw[w - 1] : INT_MIN;
    *total = sw[kPlanWarps - 1];
    __syncthreads();
    return max(before, excl);
}

__global__ void __launch_bounds__(kPlanThreads) ragged_plan_kernel(const __grid_constant__ pa_rg_launch P) {
    PA_STATIC_SMEM(sw, int[32]);
    PA_STATIC_SMEM(s_cnt, int[kPlanThreads]);
    PA_STATIC_SMEM(s_oi, int[kPlanThreads]);
    PA_STATIC_SMEM(s_om, int[kPlanThreads]);
    PA_STATIC_SMEM(s_op, int[kPlanThreads]);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    int ns = *P.num_seqs;
    ns = ns < 0 ? 0 : (ns > P.max_num_seqs ? P.max_num_seqs : ns);
    const int max_kv = P.pages_per_seq * P.page_size;
    // Splits depend on the kv_split_tokens option and each sequence's own
    // lengths only, never on the batch (batch invariance).
    const int32_t split = P.split_tokens;
    pa_rg_seq_args a;
    a.group = P.num_q_heads / P.num_kv_heads;
    a.window = P.window;
    a.hard = P.hard_mask;
    a.nkv = P.num_kv_heads;
    pa_rg_item *items = pa::rg::items(P);
    pa_rg_merge *merges = pa::rg::merges(P);
    int *counters = pa::rg::counters(P);
    long long run_i = 0, run_m = 0, run_p = 0;

    for (int pass = 0; pass < 2; pass++) {
        int run_end = 0;
        // (base in 64 bits: at ns past 2^31 - 512 an int base wrapped negative
        // after its last pass and the loop read before the arrays)
        for (long long base = 0; base < ns; base += kPlanThreads) {
            const bool in = base + tid < ns;
            const int s = in ? (int)(base + tid) : 0;
            const int q0 = in ? P.cu_q_lens[s] : 0, q1 = in ? P.cu_q_lens[s + 1] : 0;
            const int kv = in ? P.kv_lens[s] : 0;
            int chunk_end = 0;
            const int prev_end = max(run_end, scan_max(in ? q1 : INT_MIN, sw, &chunk_end));
            run_end = max(run_end, chunk_end);
            pa_rg_seq_counts cnt = {0, 0, 0};
            if (in && q0 >= prev_end) {
                const int q_len = pa_rg_seq_live(q0, q1, kv, P.max_tokens, max_kv);
                if (q_len > 0) {
                    pa_rg_seq_args sa = a;
                    sa.q_len = q_len;
                    sa.kv_len = kv;
                    const pa_rg_seq_plan sp = pa_rg_plan_seq(q_len, kv, a.group, a.window, a.hard, split, P.tile_rows);
                    if ((sp.tile_rows == PA_RG_DEC_ROWS) == (pass == 1))
                        cnt = pa_rg_count_seq(&sp, &sa);
                }
            }
            int ti = 0, tm = 0, tp = 0;
            const int oi = scan_sum(cnt.items, sw, &ti);
            const int om = scan_sum(cnt.merges, sw, &tm);
            const int op = scan_sum(cnt.part_rows, sw, &tp);
            s_cnt[tid] = cnt.items;
            s_oi[tid] = (int)run_i + oi;
            s_om[tid] = (int)run_m + om;
            s_op[tid] = (int)run_p + op;
            __syncthreads();
            // One warp per sequence writes its items.
            for (int k = warp; k < kPlanThreads; k += kPlanWarps) {
                if (s_cnt[k] == 0)
                    continue;
                const int s2 = base + k;
                pa_rg_seq_args sa = a;
                sa.kv_len = P.kv_lens[s2];
                sa.q_len = P.cu_q_lens[s2 + 1] - P.cu_q_lens[s2];
                const pa_rg_seq_plan sp =
                    pa_rg_plan_seq(sa.q_len, sa.kv_len, a.group, a.window, a.hard, split, P.tile_rows);
                int ib = 0, mb = 0, pb = 0; // this sequence's items, merges, partial rows so far
                for (int t0 = 0; t0 < sp.n_tiles; t0 += 32) {
                    pa_rg_seq_counts tc = {0, 0, 0};
                    if (t0 + lane < sp.n_tiles)
                        tc = pa_rg_tile_counts(&sp, &sa, pa_rg_tile_at(&sp, t0 + lane));
                    int xi = tc.items, xm = tc.merges, xp = tc.part_rows; // inclusive warp scans
#pragma unroll
                    for (int d = 1; d < 32; d <<= 1) {
                        const int yi = __shfl_up_sync(0xffffffffu, xi, d);
                        const int ym = __shfl_up_sync(0xffffffffu, xm, d);
                        const int yp = __shfl_up_sync(0xffffffffu, xp, d);
                        if (lane >= d)
                            xi += yi, xm += ym, xp += yp;
                    }
                    const int nt = min(32, sp.n_tiles - t0);
                    for (int u = 0; u < nt; u++) { // the chunk's tiles in turn; lanes share a tile's items
                        const int n_u = __shfl_sync(0xffffffffu, tc.items, u);
                        const int ei = ib + __shfl_sync(0xffffffffu, xi - tc.items, u);
                        const int em = mb + __shfl_sync(0xffffffffu, xm - tc.merges, u);
                        const int ep = pb + __shfl_sync(0xffffffffu, xp - tc.part_rows, u);
                        for (int j = lane; j < n_u; j += 32) {
                            pa_rg_item it;
                            int first = 0, nc = 0;
                            pa_rg_tile_item(&sp, &sa, pa_rg_tile_at(&sp, t0 + u), j, em, ep, &it, &first, &nc);
                            it.seq = s2;
                            if (it.part >= 0) {
                                it.part += s_op[k];
                                it.merge += s_om[k];
                                if (first && it.merge < P.wl.max_merges) {
                                    pa_rg_merge m;
                                    m.seq = s2;
                                    m.kvh = it.kvh;
                                    m.row0 = it.row0;
                                    m.nrows = it.nrows;
                                    m.part0 = it.part;
                                    m.n_split = nc;
                                    m.pad0 = m.pad1 = 0;
                                    merges[it.merge] = m;
                                    counters[it.merge] = 0;
                                }
                            }
                            const long long at = (long long)s_oi[k] + ei + j;
                            if (at < P.wl.max_items)
                                items[at] = it;
                        }
                    }
                    ib += __shfl_sync(0xffffffffu, xi, 31);
                    mb += __shfl_sync(0xffffffffu, xm, 31);
                    pb += __shfl_sync(0xffffffffu, xp, 31);
                }
            }
            run_i += ti;
            run_m += tm;
            run_p += tp;
            __syncthreads();
        }
    }
    if (tid == 0) {
        pa::rg::Hdr h;
        // Beyond the bound only with data the bound excludes: do nothing rather
        // than write past the workspace.
        const bool fits = run_i <= P.wl.max_items && run_m <= P.wl.max_merges && run_p <= P.wl.max_part_rows;
        h.num_items = fits ? (int)run_i : 0;
        h.fetch = 0;
        h.num_merges = (int)run_m;
        h.part_rows = (int)run_p;
        *pa::rg::hdr(P) = h;
    }
}

} // namespace

// The attention instance for p, launched or (launch false) only made ready.
static int attention(const pa_rg_launch *p, cudaStream_t st, bool launch) {
    const int hp = p->head_size <= 64 ? 64 : p->head_size <= 128 ? 128 : 256;
#define PA_RG_DISPATCH(dt, h)                                                                                          \
    if (p->q_dtype == PA_DTYPE_##dt##_ID && hp == h)                                                                   \
        return pa_rg_attn_##dt##_##h(p, st, launch);
    enum { PA_DTYPE_f32_ID = 0, PA_DTYPE_f16_ID = 1, PA_DTYPE_bf16_ID = 2 };
    PA_RG_INSTANCES(PA_RG_DISPATCH)
#undef PA_RG_DISPATCH
    return (int)cudaErrorInvalidValue;
}

extern "C" int pa_launch_ragged(const pa_rg_launch *p, pa_stream stream) {
    cudaStream_t st = reinterpret_cast<cudaStream_t>(stream);
    // The attention kernel's setup first: an instance the device cannot hold
    // is refused with nothing launched, the planner included.
    if (const int e = attention(p, st, false))
        return e;
    PA_LAUNCH(1, kPlanThreads, 0, st, ragged_plan_kernel)(*p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return (int)e;
    return attention(p, st, true);
}
