// Decode attention on tensor cores (issue 13, items 2, 4 and 5): head 128, a
// flash layout, a 16-bit query with a cache of its dtype or fp8, up to 8 query
// heads per CTA (MHA and GQA groups up to 8), no block-sparse mask. Same CTA
// decomposition, splits, loader (issue_tile), outputs and merge as
// decode_split_kernel (decode_kernel.cuh); only the arithmetic of a tile
// differs.
//
// Why: on CUDA cores a 16 KiB tile costs 4300 (bf16) to 6300 (fp8) warp
// instructions, most of them FFMA and conversions (4 heads x 2 x 128 MACs per
// token), which caps fp8 at 65-80% of the copy roof and leaves bf16 issue-bound
// at the IPC an H100 reaches (budget-decode-2026-11-23.md). On mma.sync
// m16n8k16 (f32 accumulate) a warp's share of a tile is 16-24 HMMA plus the
// fragment loads. FlashInfer does the same for GQA (its tensor-core decode
// runs the prefill kernel's tiles); it departs from FlashAttention-2 only in
// putting the query heads, not query tokens, on the M dimension.
//
// Layout of the work. Warp w owns tokens WT w .. WT w + WT-1 of every tile (WT
// = 16 of a 64-token fp8 tile, 8 of a 32-token 16-bit tile) and keeps its own
// online-softmax state; the four warps' states merge once, in warp order, at
// the end (split-K inside the CTA; no barrier per tile beyond the pipeline's).
//   S = Q K^T  M = query heads (rows 0..7; rows 8..15 zero), N = WT tokens
//              (WT / 8 n-blocks), K = 128 dims (8 k-steps).
//   O^T += V^T P^T   M = dims (8 m-blocks), N = heads (8), K = 16 tokens (a
//              16-bit tile's 8 tokens pad the other 8 with zeros). P^T's B
//              fragment is S's C fragment (heads g, tokens 2c..2c+1 of each
//              n-block), packed: no shuffle.
// 16-bit caches: K's B fragments by ldmatrix, V^T's A fragments by
// ldmatrix.trans, straight from the swizzled rows.
// fp8 caches: no ldmatrix for bytes on sm_90, so two permutations (a dot
// product does not care about the order of its terms) let plain loads serve:
//   - Q.K's k index: k-step 4j+s takes (logical dims 2c, 2c+1, 2c+8, 2c+9)
//     from physical dims 64j + 16c + 4s + {0,1,2,3}, so lane c reads 16
//     contiguous K bytes per row (LDS.128) and each 4-byte word converts to
//     b0 (low half) and b1 (high half). Q's A fragment uses the same map.
//   - P.V's m index (dims): m-block mb, row r <-> physical dim
//     64(mb >> 2) + 8(r & 7) + 2(mb & 3) + (r >> 3). Lane (g, c) loads 8
//     bytes of dims 64P + 8g .. +7 for its tokens 2c, 2c+1, 2c+8, 2c+9 (four
//     LDS.64) and pairs them in registers (one byte permute per two dims of
//     two tokens) into words whose 16-bit halves are the token pairs a0..a3
//     of the V^T fragment take. The epilogue maps the dims back.
//   fp8 converts exactly to f16 (e4m3, e5m2 both fit), so an fp8 cache runs
//   f16 MMAs: an f16 query exactly; a bf16 query scaled by a power of two 2^-e
//   chosen per CTA so its largest |q| lands in [2^14, 2^15) (f16 has bf16's 8
//   significant bits and more), with 2^e folded into the logit scale.
// P is rounded to the MMA's input type for P.V (FlashAttention-2 rounds it to
// the input dtype). The k and v scales apply once per CTA, as in
// decode_split_kernel.
#pragma once

#include "../attn_tile.cuh" // pack2: two floats -> two halves of the MMA input type
#include "decode_kernel.cuh"

namespace pa_dec {

constexpr int MMA_ROWS = 8; // query heads per CTA the tensor-core kernel serves

// Byte permute (PRMT) and its token-pair selectors: attn_tile.cuh.
using ::pa::tile::PAIR_D01;
using ::pa::tile::PAIR_D23;
using ::pa::tile::prmt;

// Physical dim of P.V's m-block mb, row r (see the header).
template <bool F8> PA_DEC_DEV int pv_dim(int mb, int r) {
    return F8 ? 64 * (mb >> 2) + 8 * (r & 7) + 2 * (mb & 3) + (r >> 3) : 16 * mb + r;
}
// Physical dim of Q.K's k-step ks, lane column qc, half (dims 2c.. or 2c+8..), element e.
template <bool F8> PA_DEC_DEV int qk_dim(int ks, int qc, int half, int e) {
    return F8 ? 64 * (ks >> 2) + 16 * qc + 4 * (ks & 3) + 2 * half + e : 16 * ks + 2 * qc + 8 * half + e;
}

// 4 CTAs per SM for 16-bit caches (about 115 registers). fp8: 3 CTAs (<= 168
// registers): the fragments (32 accumulators, 16 of Q), the conversions and
// the loader's state need about 150, and at 128 ptxas spills. Three CTAs
// still keep two 16 KiB tiles each in flight, about 96 KiB per SM.
template <int QT, int CT>
PA_DEC_GLOBAL void __launch_bounds__(NT, pa::is_fp8(CT) ? 3 : PA_DEC_MIN_CTAS)
    decode_mma_kernel(const pa_dec_kparams p) {
    constexpr bool F8 = pa::is_fp8(CT);
    static_assert(F8 ? (QT == 1 || QT == 2) : (CT == QT && (CT == 1 || CT == 2)),
                  "decode_mma_kernel: a 16-bit query with its own dtype's cache or fp8");
    constexpr int MDT = F8 ? 1 : CT; // the MMA's input type: f16 for fp8, else the cache's
    using G = FixGeo<128, CT, 1>;    // the loader's geometry (it does not depend on the head groups)
    constexpr int T = G::tile, HS = 128, WT = T / NW, NB = WT / 8;
    static_assert(G::swz_k == 7 && G::swz_v == 7 && G::pitch_k == HS * G::esz && G::pitch_v == HS * G::esz &&
                      (F8 ? T == 64 : T == 32),
                  "decode_mma_kernel: 8 KiB tiles of swizzled unpadded rows");
    PA_DEC_SMEM(smem);
    const G geo(p);
    using qt = typename pa::elt<QT>::type;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, qc = lane & 3; // fragment row group and column pair

    cta_ctx c;
    c.smem = smem;
    int nsplit, ntiles;
    if (!begin_cta<QT>(p, c, G::esz, HS, T, nsplit, ntiles))
        return;

    for (int s = 0; s < NS - 1; s++) {
        issue_tile<CT>(p, geo, c, s, ntiles);
        cp_commit();
    }

    // Q -> A fragments in registers (rows g < nh; rows 8..15 are zero), k-step
    // ks: a0 (dims 2c..2c+1) and a2 (2c+8..2c+9) through qk_dim.
    const bool row_on = g < c.nh;
    const qt *qrow = static_cast<const qt *>(p.query) + (int64_t)c.seq * p.q_stride + (int64_t)(c.h0 + g) * HS;
    float qf[8][2][2];
#pragma unroll
    for (int ks = 0; ks < 8; ks++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                qf[ks][h][e] = row_on ? pa::to_float<QT>(qrow[qk_dim<F8>(ks, qc, h, e)]) : 0.0f;
    int qe = 0;
    if constexpr (F8 && QT == 2) { // bf16 -> f16: a power-of-two scale
        float mx = 0.0f;
#pragma unroll
        for (int ks = 0; ks < 8; ks++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                mx = fmaxf(mx, fmaxf(fabsf(qf[ks][h][0]), fabsf(qf[ks][h][1])));
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, shfl_xor(mx, o));
        // the same in every warp (every warp holds all of Q)
        qe = pa::tile::f16_fit_exponent(mx);
        const float sc = ldexpf(1.0f, -qe);
#pragma unroll
        for (int ks = 0; ks < 8; ks++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                qf[ks][h][0] *= sc, qf[ks][h][1] *= sc;
    }
    uint32_t qa[8][2];
#pragma unroll
    for (int ks = 0; ks < 8; ks++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            qa[ks][h] = pa::tile::pack2<MDT>(qf[ks][h][0], qf[ks][h][1]);

    const float ks_ = (F8 && p.k_scale) ? *p.k_scale : 1.0f;
    const float vs = (F8 && p.v_scale) ? *p.v_scale : 1.0f;
    const float qk_scale = p.scale * ks_ * ldexpf(1.0f, qe);
    const float inv_cap = p.soft_cap > 0.0f ? 1.0f / p.soft_cap : 0.0f;
    const float slope = (p.alibi && row_on) ? p.alibi[c.h0 + g] : 0.0f;

    float acc[8][4]; // O^T: m-block mb, (dim row g / g+8) x (head 2qc / 2qc+1)
#pragma unroll
    for (int mb = 0; mb < 8; mb++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            acc[mb][i] = 0.0f;
    float m_run = -INFINITY, l_run = 0.0f; // head g: running max (quad-uniform), this lane's partial sum
    const int tw = WT * warp;              // the warp's first token in a tile

    for (int it = 0; it < ntiles; it++) {
        cp_wait<NS - 2>();
        bar(); // tile `it` visible to all; stage (it - 1) % NS free
        issue_tile<CT>(p, geo, c, it + NS - 1, ntiles);
        cp_commit();

        const int st = it % NS;
        const int t0 = c.e0 + it * T;
        const unsigned char *kt = smem + st * G::stage_k_bytes;
        const unsigned char *vt = smem + p.off_v + st * G::stage_v_bytes;
        const unsigned char *tok = smem + p.off_tok + st * TOK_STRIDE;

        // ---- S = Q K^T: NB n-blocks of 8 tokens ----
        float sfr[NB][4];
#pragma unroll
        for (int nb = 0; nb < NB; nb++) {
#pragma unroll
            for (int i = 0; i < 4; i++)
                sfr[nb][i] = 0.0f;
            if constexpr (F8) {
                const int t = tw + 8 * nb + g; // this lane's B column: token t of the tile
                const unsigned char *krow = kt + t * G::pitch_k;
#pragma unroll
                for (int j = 0; j < 2; j++) {
                    const unsigned char *src = krow + swz(64 * j + 16 * qc, t, 7, 4);
                    PA_DEC_ALIGNED(src, 16);
                    const uint4 u = *reinterpret_cast<const uint4 *>(src);
                    const uint32_t w4[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
                    for (int s = 0; s < 4; s++) {
                        const uint32_t a[4] = {qa[4 * j + s][0], 0u, qa[4 * j + s][1], 0u};
                        mma16816<MDT>(sfr[nb], a, fp8x2_to_f16x2<CT>(w4[s]), fp8x2_to_f16x2<CT>(w4[s] >> 16));
                    }
                }
            } else {
                // ldmatrix: lane l points at row l & 7 (token tw + (l & 7)) of
                // matrix l >> 3 (8 dims); register j = K[token g][dims 2c..] of
                // matrix j, i.e. b0/b1 of k-steps 2jj and 2jj + 1.
                const int t = tw + (lane & 7);
                const unsigned char *krow = kt + t * G::pitch_k;
#pragma unroll
                for (int jj = 0; jj < 4; jj++) {
                    uint32_t r[4];
                    ldsm_x4(r, krow + swz(2 * (32 * jj + 8 * (lane >> 3)), t, 7, 4));
#pragma unroll
                    for (int s = 0; s < 2; s++) {
                        const uint32_t a[4] = {qa[2 * jj + s][0], 0u, qa[2 * jj + s][1], 0u};
                        mma16816<MDT>(sfr[nb], a, r[2 * s], r[2 * s + 1]);
                    }
                }
            }
        }

        // ---- logits of head g, tokens 2qc, 2qc+1 of each n-block ----
        float x[NB][2];
        float mx = -INFINITY;
#pragma unroll
        for (int nb = 0; nb < NB; nb++) {
            const int tl = tw + 8 * nb + 2 * qc;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int pos = t0 + tl + e;
                float v = -INFINITY;
                if (row_on && tok[tl + e] != 0) {
                    v = sfr[nb][e] * qk_scale;
                    if (p.soft_cap > 0.0f)
                        v = p.soft_cap * tanhf(v * inv_cap);
                    if (p.alibi)
                        v += slope * (float)(pos - c.L + 1);
                }
                x[nb][e] = v;
                mx = fmaxf(mx, v);
            }
        }
        mx = fmaxf(mx, shfl_xor(mx, 1));
        mx = fmaxf(mx, shfl_xor(mx, 2));
        const float m_new = fmaxf(m_run, mx);
        float alpha = 1.0f, psum = 0.0f;
        if (m_new != -INFINITY) {
            alpha = m_run == -INFINITY ? 0.0f : fexp(m_run - m_new);
#pragma unroll
            for (int nb = 0; nb < NB; nb++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    x[nb][e] = x[nb][e] == -INFINITY ? 0.0f : fexp(x[nb][e] - m_new);
                    psum += x[nb][e];
                }
        } else {
#pragma unroll
            for (int nb = 0; nb < NB; nb++)
                x[nb][0] = x[nb][1] = 0.0f;
        }
        m_run = m_new;
        l_run = l_run * alpha + psum;
        // P^T B fragment: tokens 2qc.. (b0) and 8+2qc.. (b1, zero for an 8-token warp tile), head g
        const uint32_t pb0 = pa::tile::pack2<MDT>(x[0][0], x[0][1]);
        const uint32_t pb1 = NB == 2 ? pa::tile::pack2<MDT>(x[NB - 1][0], x[NB - 1][1]) : 0u;

        // ---- rescale: columns are heads 2qc and 2qc+1, whose alphas live in
        // quads 2qc and 2qc+1. Skipped by the whole warp when no head's max
        // moved (alpha is 1 exactly then), the usual case once the first
        // tiles are in. ----
        float moved = alpha != 1.0f ? 1.0f : 0.0f; // quad-uniform
        moved = fmaxf(moved, shfl_xor(moved, 4));
        moved = fmaxf(moved, shfl_xor(moved, 8));
        moved = fmaxf(moved, shfl_xor(moved, 16));
        if (moved != 0.0f) {
            const float a_lo = shfl_idx(alpha, 8 * qc), a_hi = shfl_idx(alpha, 8 * qc + 4);
#pragma unroll
            for (int mb = 0; mb < 8; mb++) {
                acc[mb][0] *= a_lo;
                acc[mb][1] *= a_hi;
                acc[mb][2] *= a_lo;
                acc[mb][3] *= a_hi;
            }
        }

        // ---- O^T += V^T P^T ----
        if constexpr (F8) {
            // V rows of tokens 2qc, 2qc+1, 8+2qc, 9+2qc (of the warp's 16)
#pragma unroll
            for (int P = 0; P < 2; P++) {
                uint32_t lo[4], hi[4]; // bytes 0..3 and 4..7 of the 8 dims, per token
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const int t = tw + 2 * qc + (i & 1) + 8 * (i >> 1);
                    const unsigned char *src = vt + t * G::pitch_v + swz(64 * P + 8 * g, t, 7, 4);
                    PA_DEC_ALIGNED(src, 8);
                    const uint2 u = *reinterpret_cast<const uint2 *>(src);
                    lo[i] = u.x;
                    hi[i] = u.y;
                }
                // dims 64P + 8g + d, d = 0..7: m-block 4P + (d >> 1), row g + 8 (d & 1).
                // X: tokens 2qc, 2qc+1 of dims d, d+1 (d = 2q); Y: tokens 8+2qc, 9+2qc.
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const uint32_t *w = q < 2 ? lo : hi;
                    const uint32_t sel = q % 2 == 0 ? PAIR_D01 : PAIR_D23;
                    const uint32_t X = prmt(w[0], w[1], sel), Y = prmt(w[2], w[3], sel);
                    const uint32_t a[4] = {fp8x2_to_f16x2<CT>(X), fp8x2_to_f16x2<CT>(X >> 16), fp8x2_to_f16x2<CT>(Y),
                                           fp8x2_to_f16x2<CT>(Y >> 16)};
                    mma16816<MDT>(acc[4 * P + q], a, pb0, pb1);
                }
            }
        } else {
            // ldmatrix.trans: lane l points at token tw + (l & 7), dims 16 mb' +
            // 8 (l >> 3) for m-blocks mb' = 2 jj, 2 jj + 1; register j = V[tokens
            // 2c, 2c+1][dim g] of matrix j: a0 and a1 of the two m-blocks (the
            // tokens 8..15 of a2, a3 do not exist: zero).
            const int t = tw + (lane & 7);
            const unsigned char *vrow = vt + t * G::pitch_v;
#pragma unroll
            for (int jj = 0; jj < 4; jj++) {
                uint32_t r[4];
                ldsm_x4_trans(r, vrow + swz(2 * (32 * jj + 8 * (lane >> 3)), t, 7, 4));
#pragma unroll
                for (int s = 0; s < 2; s++) {
                    const uint32_t a[4] = {r[2 * s], r[2 * s + 1], 0u, 0u};
                    mma16816<MDT>(acc[2 * jj + s], a, pb0, pb1);
                }
            }
        }
    }
    cp_wait<0>();
    bar(); // every tile read: the tile buffers hold the warps' results now

    // ---- epilogue: merge the four warps in order ----
    const float l_quad = l_run + shfl_xor(l_run, 1);
    const float l_w = l_quad + shfl_xor(l_quad, 2);
    float *red = reinterpret_cast<float *>(smem); // [NW][MMA_ROWS heads][HS]
    float *wm = red + NW * MMA_ROWS * HS;         // [NW][MMA_ROWS], past red, inside the tile stages
    float *wl = wm + NW * MMA_ROWS;
    static_assert((NW * MMA_ROWS * HS + 2 * NW * MMA_ROWS) * 4 <= NS * (G::stage_k_bytes + G::stage_v_bytes),
                  "decode_mma_kernel: the epilogue's buffers fit in the tile stages");
    if (qc == 0) {
        wm[warp * MMA_ROWS + g] = m_run;
        wl[warp * MMA_ROWS + g] = l_w;
    }
    bar();
    // This lane's heads 2qc and 2qc+1: the factor of its warp.
    float fac[2];
#pragma unroll
    for (int k = 0; k < 2; k++) {
        const int h = 2 * qc + k;
        float mm = -INFINITY;
        for (int w = 0; w < NW; w++)
            mm = fmaxf(mm, wm[w * MMA_ROWS + h]);
        const float mw = wm[warp * MMA_ROWS + h];
        fac[k] = mw == -INFINITY ? 0.0f : fexp(mw - mm);
    }
#pragma unroll
    for (int mb = 0; mb < 8; mb++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int h = 2 * qc + (i & 1), d = pv_dim<F8>(mb, g + 8 * (i >> 1));
            red[(warp * MMA_ROWS + h) * HS + d] = acc[mb][i] * fac[i & 1];
        }
    bar();
    for (int i = tid; i < c.nh * HS; i += NT) {
        const int h = i / HS, d = i - h * HS;
        float mm = -INFINITY;
        for (int w = 0; w < NW; w++)
            mm = fmaxf(mm, wm[w * MMA_ROWS + h]);
        float s = 0.0f, l = 0.0f;
        for (int w = 0; w < NW; w++) {
            const float mw = wm[w * MMA_ROWS + h];
            const float f = mw == -INFINITY ? 0.0f : fexp(mw - mm);
            l += wl[w * MMA_ROWS + h] * f;
            s += red[(w * MMA_ROWS + h) * HS + d];
        }
        store_result<QT>(p, c, HS, nsplit, h, d, l > 0.0f ? s / l * vs : 0.0f, l, mm);
    }
}

} // namespace pa_dec
