// Decode attention on tensor cores (issue 13, items 2, 4 and 5): heads 32,
// 64, 80, 96, 112, 128, 192 and 256 (and 120 with a 16-bit cache), a flash
// layout or vLLM's, a
// 16-bit query with a cache of its dtype or fp8, up to 8 query heads per CTA
// (MHA and GQA groups up to 8; at heads 64, 128 and 192 up to 16 in two head
// blocks: groups 9..16, and larger groups, MQA's included, in the host's CTAs
// of up to 16 heads), no block-sparse mask.
// Same CTA decomposition, splits, loader (issue_tile), outputs and merge as
// decode_split_kernel (decode_kernel.cuh); only the arithmetic of a tile
// differs.
//
// Why: on CUDA cores a 16 KiB tile costs 4300 (bf16) to 6300 (fp8) warp
// instructions, most of them FFMA and conversions (4 heads x 2 x 128 MACs per
// token), which caps fp8 at 65-80% of the copy roof and leaves bf16 issue-bound
// at the IPC an H100 reaches (budget-decode-2026-11-23.md). On mma.sync
// m16n8k16 (f32 accumulate) a warp's share of a tile is 16 HMMA plus the
// fragment loads. FlashInfer does the same for GQA (its tensor-core decode
// runs the prefill kernel's tiles); it departs from FlashAttention-2 in
// putting the query heads, not query tokens, on the M dimension. The fp8 path
// here departs from both for Q.K and puts keys on M (below).
//
// Layout of the work. Token group tg owns tokens WT tg .. WT tg + WT-1 of
// every tile (WT = 16 of a 64-token tile: fp8, and 16-bit at heads 32 and 64; 32 of
// fp8 head 64's 128-token tile on a flash layout, below; 8 of head 128's
// 32-token 16-bit tile; at heads 192 and 256, 8 of 16 or 16 of 32 fp8
// tokens) and keeps its own online-softmax state; the groups' states merge
// once, in order, at the end (split-K inside the CTA; no barrier per tile
// beyond the pipeline's). A group is one warp, or two at heads 192 and 256:
// both compute the group's S, each keeps half of O's dims (see the kernel).
//   16-bit: S = Q K^T  M = query heads (rows 0..7; rows 8..15 zero), N = the
//              warp's 8 tokens (head 64: two n-blocks of 8), K = the head's
//              dims (HS / 16 k-steps).
//   fp8:    S^T = K Q^T  M = the warp's 16 tokens, N = the 8 query heads,
//              K = the head's dims. With heads on M, 16 tokens took 16 MMAs of
//              which half the rows were zero, and each MMA a fresh
//              {q, 0, q, 0} register quad (40 moves a tile); tokens on M
//              fill it: 8 MMAs, the converted K words as the A operand.
//   O^T += V^T P^T   M = dims (HS / 16 m-blocks), N = heads (8), K = 16
//              tokens (head 128's 16-bit warp has 8 and pads the other 8
//              with zeros). P^T's B fragment (tokens 2c.. in b0, 8+2c.. in
//              b1, head g) is, for 16-bit, S's C fragments (head g, tokens
//              2c..2c+1 of n-block 0 and 1) packed: no shuffle. For fp8, S^T's C fragment holds tokens g and g+8 of
//              heads 2c, 2c+1: packed, each token half is an 8x8 b16 matrix
//              whose transpose is b0 (b1): one movmatrix each.
// 16-bit caches: K's B fragments by ldmatrix, V^T's A fragments by
// ldmatrix.trans, straight from the swizzled rows. vLLM's layout: the loader
// keeps its values as V^T rows (a row of the tile's tokens per dim, vt_at), so
// plain ldmatrix gives V^T's A fragments; with fp8 there, S^T's rows are
// permuted (mma_tok) so that a lane's four P.V tokens are one 4-byte word of a
// V^T row.
// fp8 at head 64 moves 4 KiB of K a 64-token tile, so the costs a tile pays
// once (the pipeline's wait and barrier, the block-table test, the softmax's
// shuffles and rescale test, the loop) weigh twice what they do at head 128,
// and each token's address was worked out by both threads that copy its row.
// On a flash layout it takes 128-token tiles instead (dec_long_tile, FixGeo's
// LT): a warp's 32 tokens are MT = 2 M blocks of S^T, each with its own Q.K
// and P.V MMAs (two independent chains a warp) under one softmax update, and
// issue_long_tile resolves each token's address once. The K rows are unpadded
// 64 bytes there (a quarter warp's 16-byte K reads, tokens g, g + 1 at 4
// granules each, are 128 contiguous bytes: no conflict), so 3 stages fit in
// 54 KiB and 4 CTAs an SM, 128 KiB of tiles in flight (6 CTAs of 64-token
// tiles had 96). V keeps dec_geometry's padded 80-byte rows (without the pad,
// P.V's 8-byte reads of tokens 2c.. would meet one bank 4 times); so do both
// over vLLM's layout, which keeps 64-token tiles (its K reads meet a bank
// twice a quarter warp there, as the split kernel's did). The tile is the
// one place this kernel's shape depends on the cache's dtype: it amortises
// the per-tile costs that fp8's half-size rows leave per byte.
// fp8 caches: no ldmatrix for bytes on sm_90, so two permutations (a dot
// product does not care about the order of its terms) let plain loads serve:
//   - Q.K's k index: k-step 4j+s takes (logical dims 2c, 2c+1, 2c+8, 2c+9)
//     from physical dims 64j + 16c + 4s + {0,1,2,3} (j < HS / 64), so lane c reads 16
//     contiguous K bytes of each of its tokens g, g+8 (LDS.128) and word s
//     converts to a0 / a1 (low half, token g / g+8) and a2 / a3 (high half).
//     Q^T's B fragment uses the same map (b0 = dims 2c.., b1 = 2c+8.., head g:
//     the registers an A fragment of Q's rows would hold).
//   - P.V's m index (dims): m-block mb, row r <-> physical dim
//     64(mb >> 2) + 8(r & 7) + 2(mb & 3) + (r >> 3). Lane (g, c) loads 8
//     bytes of dims 64P + 8g .. +7 for its tokens 2c, 2c+1, 2c+8, 2c+9 (four
//     LDS.64) and pairs them in registers (one byte permute per two dims of
//     two tokens) into words whose 16-bit halves are the token pairs a0..a3
//     of the V^T fragment take. The epilogue maps the dims back.
//   - Head 96 (fp8 since 2026-11-29): the first 64 dims are a block as
//     above; the last 32 a half block with half the span a lane: k-steps 4
//     and 5 take dims 64 + 8c + 4s + {0..3} (LDS.64 of each token g, g+8),
//     and m-blocks 4 and 5 dims 64 + 4(r & 7) + 2(mb & 3) + (r >> 3) (LDS.32
//     of each token: one permute per two dims again). Rows are dec_geometry's
//     padded 112 bytes (64-token tiles): V's reads take their least
//     wavefronts; K's 16- and 8-byte reads meet a bank twice (no pitch under
//     192 bytes avoids both), which the tile's 2 x 6 KiB from memory leave
//     far off the critical path.
//   - Heads 80 and 112 (2026-11-30): a quarter block of the last 16 dims
//     after the full blocks (80) or the full and the half block (112), with a
//     quarter of the span: k-step KS - 1 takes dims b + 4c + {0..3} (LDS.32
//     of each token g, g+8), m-block MB - 1 dims b + 2(r & 7) + (r >> 3)
//     (2 bytes of each token; the permute's byte pair 0, 1). Rows are
//     dec_geometry's 80 and 112 bytes (5 and 7 granules, unpadded), 64-token
//     tiles; K's reads meet a bank twice, as head 96's.
//   - Head 32 (2026-11-30): the half block alone (k-steps 0, 1 from one
//     LDS.64 of each token g, g+8; m-blocks 0, 1 from LDS.32). On a flash
//     layout the long tile, as head 64's: 128 tokens, MT = 2, K rows unpadded
//     32 bytes (a half warp's 8-byte reads of tokens g, g+1, .. are 128
//     contiguous bytes), V rows padded to 48 (3 granules: the 4-byte reads of
//     tokens 2c.. 96 bytes apart meet no bank twice); over vLLM's layout
//     64-token tiles of 48-byte rows, where K's reads meet a bank twice (the
//     permuted tokens 0, 1, 4, 5 of a half warp), as head 96's half block's.
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

constexpr int MMA_ROWS = 8; // query heads per head block (S's rows, P.V's n-block)
// The lazy softmax reference's threshold in the natural-log units of this
// kernel's logits: the tile code's SoftmaxN::kLazy (8 log2 units), so
// P = exp(x - reference) stays at most 2^8.
constexpr float kLazyNat = pa::tile::SoftmaxN<1>::kLazy / pa::tile::kLog2e;

// Byte permute (PRMT) and its token-pair selectors: attn_tile.cuh.
using ::pa::ptx::ex2;     // ex2.approx.ftz.f32
using ::pa::tile::kLog2e; // the softmax's exponents in base 2
using ::pa::tile::PAIR_D01;
using ::pa::tile::PAIR_D23;
using ::pa::tile::prmt;

// fp8 dim blocks of a warp's hd dims: hd / 64 blocks of 64, then a half block
// of 32 where hd % 64 >= 32 (heads 96, 112; each warp's 96 dims at head 192),
// then a quarter block of 16 where hd % 32 == 16 (heads 80, 112). k-step or
// m-block i lies in a block of f8_size dims from dim f8_base, as its step
// f8_step (4 a full block, 2 a half, 1 a quarter). A lane (column qc for K,
// row g for V) takes f8_size / 4 bytes of each K row of the block, f8_size / 8
// of each V row.
constexpr int f8_size(int hd, int i) {
    return i < 4 * (hd / 64) ? 64 : hd % 64 >= 32 && i < 4 * (hd / 64) + 2 ? 32 : 16;
}
constexpr int f8_base(int hd, int i) {
    return i < 4 * (hd / 64) ? 64 * (i >> 2) : 64 * (hd / 64) + (f8_size(hd, i) == 16 && hd % 64 >= 32 ? 32 : 0);
}
constexpr int f8_step(int hd, int i) {
    return i < 4 * (hd / 64) ? i & 3 : i - 4 * (hd / 64) - (f8_size(hd, i) == 16 && hd % 64 >= 32 ? 2 : 0);
}
// N 4-byte words of the 4N-aligned shared bytes at p: one LDS.128, LDS.64 or LDS.32.
template <int N> PA_DEC_DEV void lds_words(const unsigned char *p, uint32_t (&w)[N]) {
    static_assert(N == 1 || N == 2 || N == 4, "lds_words: 4, 8 or 16 bytes");
    PA_DEC_ALIGNED(p, 4 * N);
    if constexpr (N == 4) {
        const uint4 u = *reinterpret_cast<const uint4 *>(p);
        w[0] = u.x;
        w[1] = u.y;
        w[2] = u.z;
        w[3] = u.w;
    } else if constexpr (N == 2) {
        const uint2 u = *reinterpret_cast<const uint2 *>(p);
        w[0] = u.x;
        w[1] = u.y;
    } else {
        w[0] = *reinterpret_cast<const uint32_t *>(p);
    }
}
// Physical dim of P.V's m-block mb, row r, of a warp's HD dims (see the header).
template <bool F8, int HD> PA_DEC_DEV int pv_dim(int mb, int r) {
    return F8 ? f8_base(HD, mb) + f8_size(HD, mb) / 8 * (r & 7) + 2 * f8_step(HD, mb) + (r >> 3) : 16 * mb + r;
}
// Physical dim of Q.K's k-step ks, lane column qc, half (dims 2c.. or 2c+8..), element e.
template <bool F8, int HS> PA_DEC_DEV int qk_dim(int ks, int qc, int half, int e) {
    return F8 ? f8_base(HS, ks) + f8_size(HS, ks) / 4 * qc + 4 * f8_step(HS, ks) + 2 * half + e
              : 16 * ks + 2 * qc + 8 * half + e;
}

// 4 CTAs per SM (128 registers at most) for every instance but 16-bit
// caches at head 256 (148-149 registers: 3 CTAs), at head 192 over vLLM's
// layout (149 under 3 CTAs' bound; it spills at 128) and two head blocks
// (below). 16-bit flash at head 192 took 128 under 3 CTAs' bound.
// fp8 at heads 128 and 256 once needed about 150 registers and spilled at
// 128, so they were built for 3 CTAs; on 2026-11-29 they took 107-136 under
// that bound and fit 128 under 4 with the same instructions, bar a register
// move or two (sm_80 to sm_90: no spill, no stack), and 4 CTAs fit their
// shared memory (at most 56.6 KiB a CTA). fp8 at head 96 (24 accumulators,
// 12 of Q) needs 94 (flash) and 117 (vLLM's layout) unbounded.
// The loader's geometry (it does not depend on the head groups): flash
// layouts, or vLLM's (VL).
template <bool VL, int HS, int CT> struct MmaGeo { using type = FixGeo<HS, CT, 1>; };
template <int HS, int CT> struct MmaGeo<true, HS, CT> { using type = FixGeoV<HS, CT>; };

// Physical token (of the warp's WT) behind logical token j of S^T's rows, fp8
// with vLLM's layout: logical 2c, 2c+1, 2c+8, 2c+9 (lane column c's P.V
// operand) sit at 4c .. 4c+3, so one 4-byte load of a V^T row gives a0/a2.
// Identity otherwise.
template <bool PERM> PA_DEC_DEV int mma_tok(int j) { return PERM ? 4 * ((j & 7) >> 1) + 2 * (j >> 3) + (j & 1) : j; }

// HB head blocks of MMA_ROWS query heads (1, or 2 for CTAs of 9..16 query
// heads at heads 64, 128 and 192): 16-bit S's rows 8..15 hold heads 8..15 and
// P.V runs one MMA per head block on the same V^T fragment; fp8's S^T takes
// one n-block of heads per head block. Two head blocks double the
// accumulators: at heads 128 and 192, 3 CTAs per SM (168 registers; fp8 fits
// in 162-168 at sm_90 without spilling, and 3 CTAs keep half as many bytes
// again in flight as the 2 that its 182 unbounded registers allowed); at head
// 64 (16 accumulators a head block) 4, in 106 to 128 registers without a
// spill. Below sm_90, fp8 at head 192 with two head blocks is built for 2
// CTAs: there ptxas needs a few registers more than 3 CTAs' 168 (e5m2 spilled
// 4-16 bytes outside the tile loop at sm_80, 86 and 89; e4m3 sat at 168),
// and a register-edge instance spills again at the next compiler or code
// change (scripts/check-sm8x.sh checks every target). 2 CTAs there hold a
// third fewer bytes in flight; not measured on those GPUs.
// mma_min_ctas: the CTAs per SM each instance is built for (the
// others: see the register note above).
// Head sizes the kernel serves: 32, 64, 80, 96, 112, 128, 192 and 256 (the
// fp8 permutations take 64 dims at a time, then a half block of 32 and a
// quarter of 16 (f8_size); at head 32 the half block alone; 16-bit: an odd
// number of k-steps and m-blocks at heads 80 and 112, the last pair's
// ldmatrix loading one of them twice), and 120 with a 16-bit cache: a last
// k-step and m-block of 8 dims, whose other 8 (120..127, past the row) are
// zero in Q, never loaded from K and V (the x4's fourth matrix loads the
// third again and reads as zero) and never stored by the epilogue. fp8 at
// head 120 would need an eighth block of the permutations: CUDA cores.
// (PA_DEC_MMA_HEAD: csrc/shared/decode_internal.h, the host's list too)
constexpr bool mma_head_ok(int ct, int hs) { return PA_DEC_MMA_HEAD(hs, pa::is_fp8(ct)); }
// Two head blocks (GQA groups 9..16 in one CTA, and MQA's and larger groups'
// CTAs of up to 16 heads): heads 64, 128 and 192.
constexpr bool mma_two_blocks_ok(int hs) { return PA_DEC_MMA_TWO_BLOCKS(hs); }

// From sm_100 on (sm_100, 103, 110, 120, 121: Blackwell's targets), a 16-bit
// cache at head 192 in flash layouts with one head block is built for 3 CTAs
// as well: at sm_90 it fits 4 CTAs' 128 registers (126), but ptxas spilled 32
// bytes for sm_100 and 36 for sm_120 there (2026-12-05, nvcc 13.0;
// scripts/check-sm8x.sh with PA_SM8X_ARCHS). Not measured on those GPUs.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kDecSm8x = true; // (the host pass and interpret mode: false; the bound is the device code's)
#else
constexpr bool kDecSm8x = false;
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
constexpr bool kDecSm100 = true; // (the host pass and interpret mode: false, as kDecSm8x)
#else
constexpr bool kDecSm100 = false;
#endif
constexpr int mma_min_ctas(bool f8, bool vl, int hs, int hb) {
    return kDecSm8x && f8 && hb > 1 && hs == 192                                        ? 2
           : (hb > 1 && hs > 64) || (hs > 128 && !f8 && (hs != 192 || vl || kDecSm100)) ? 3
                                                                                        : PA_DEC_MIN_CTAS;
}

template <int QT, int CT, bool VL, int HS, int HB>
PA_DEC_GLOBAL void __launch_bounds__(NT, mma_min_ctas(pa::is_fp8(CT), VL, HS, HB))
    decode_mma_kernel(const pa_dec_kparams p) {
    constexpr bool F8 = pa::is_fp8(CT);
    static_assert(F8 ? (QT == 1 || QT == 2) : (CT == QT && (CT == 1 || CT == 2)),
                  "decode_mma_kernel: a 16-bit query with its own dtype's cache or fp8");
    constexpr int MDT = F8 ? 1 : CT; // the MMA's input type: f16 for fp8, else the cache's
    using G = typename MmaGeo<VL, HS, CT>::type;
    constexpr bool PERM = VL && F8;    // S^T's rows permuted (mma_tok)
    constexpr bool PERM_D = F8 && !VL; // P.V's dims permuted (pv_dim)
    // Whole tiles skip the logit masks (all_in, below) on the fp8 path: there
    // a lane holds 4 logits (8 at head 64) and the masks cost 2-9% of a tile's
    // instructions (budget-decode-2026-11-28.md); a 16-bit lane holds 2 or 4,
    // and the test and branch cost about what they save there.
    constexpr bool SKIP_MASKS = F8;
    // A warp's WT tokens (a token group) fill S^T's M (fp8: 16) or NB
    // n-blocks of 8 (16-bit). The NTG = T / WT token groups of a tile take
    // DS = NW / NTG warps each: DS = 2 at heads 192 and 256, whose tiles have
    // 16 (16-bit) or 32 (fp8) tokens. The DS warps of a group compute the same S (and so
    // the same softmax state) and split P.V's dims: HD each, from dh. KS
    // k-steps (Q.K) of 16 dims, MB m-blocks (P.V).
    // fp8 at head 64 (FixGeo's LT) has 128-token tiles: a warp's 32 tokens are
    // MT = 2 blocks of 16 on S^T's M, sharing one softmax update.
    constexpr int T = G::tile, MT = F8 && T > 16 * NW ? T / (16 * NW) : 1;
    constexpr int WT = F8 ? 16 * MT : (T / NW > 8 ? T / NW : 8), NTG = T / WT, DS = NW / NTG;
    static_assert(MT == 1 || (MT == 2 && F8 && !VL && (HS == 64 || HS == 32)),
                  "decode_mma_kernel: two M blocks a warp at fp8 heads 64 and 32");
    constexpr int HD = HS / DS, KS = (HS + 15) / 16, MB = (HD + 15) / 16, NB = F8 ? 1 : WT / 8;
    static_assert(mma_head_ok(CT, HS), "decode_mma_kernel: head 32, 64, 80, 96, 112, 128, 192 or 256 (120: 16-bit)");
    // fp8's permutations: 64-dim blocks, a half block of 32 and a quarter of 16
    // in rows without a swizzle (heads 80, 96 and 112, and each warp's 96 dims
    // at head 192); 16-bit: pairs of k-steps and m-blocks (one ldmatrix x4 a
    // pair; an odd last one at heads 80 and 112 takes x4's first two
    // matrices; a last k-step of 8 dims at head 120, whose other 8 read as
    // zero), any swizzle.
    static_assert((HD % 16 == 0 || (!F8 && HD % 16 == 8)) && (!F8 || HD % 64 == 0 || (G::swz_k == 0 && G::swz_v == 0)),
                  "decode_mma_kernel: fp8's half and quarter blocks in rows without a swizzle");
    static_assert(HB == 1 || (HB == 2 && mma_two_blocks_ok(HS)),
                  "decode_mma_kernel: two head blocks at heads 64, 128, 192");
    constexpr int NHC = HB * MMA_ROWS; // query heads a CTA serves, at most
    static_assert(NTG * WT == T && NTG * DS == NW && (F8 ? WT == 16 * MT : (WT == 8 || WT == 16)),
                  "decode_mma_kernel: a warp's tokens fill S^T's M (fp8) or one or two n-blocks (16-bit)");
    // K rows: swizzled whole rows of 8+ granules (ldmatrix's and the fp8
    // reads' 8 rows meet 8 granule positions), or rows without a swizzle:
    // fp8 head 64's (unpadded 64 bytes with the long tile; dec_geometry's
    // padded 80 over vLLM's layout, where its 16-byte reads meet a bank
    // twice, as the split kernel's), 16-bit head 96's 208, padded (13
    // granules: ldmatrix's 8 rows meet 8 granule positions), and fp8 head
    // 192's 208 (12 granules padded to 13, as head 96's 112 bytes: the 16-byte
    // K reads meet a bank twice, the V reads none; scripts/decode_banks.py).
    // 16-bit heads 80 and 112: 176 and 240 bytes (11 and 15 granules), as 96's;
    // head 120: 240, unpadded (15 granules); head 32: 80 (16-bit) and 48 bytes
    // (fp8 over vLLM's layout; the long tile's K rows are unpadded 32 bytes).
    // Rows are padded exactly when they are not a whole number of 8 granules.
    constexpr bool PADDED = F8 ? HS % 128 != 0 : HS % 64 != 0;
    static_assert(
        T * HS * G::esz == (F8 && HS == 64          ? 4096 * MT
                            : HS == 32              ? 2048 * G::esz * MT
                            : HS == 96 || HS == 192 ? 6144
                            : HS == 80              ? 5120
                            : HS == 112             ? 7168
                            : HS == 120             ? 7680
                                                    : 8192) &&
            G::pitch_k % 16 == 0 && (G::swz_k == 7 ? G::pitch_k == HS * G::esz && G::pitch_k >= 128 : PADDED),
        "decode_mma_kernel: 8 KiB K tiles of swizzled rows (2-7 KiB at heads 32 to 112 and 192; some padded)");
    static_assert(!PADDED || (F8 && HS <= 64) || G::pitch_k / 16 % 2 == 1,
                  "decode_mma_kernel: padded rows (heads 32 to 112, 192) an odd number of granules");
    static_assert(VL || (G::gv_shift == 4 && (G::swz_v == 7 ? G::pitch_v == HS * G::esz : PADDED)),
                  "decode_mma_kernel: flash V tiles like K's");
    PA_DEC_SMEM(smem);
    const G geo(p);
    using qt = typename pa::elt<QT>::type;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, qc = lane & 3;          // fragment row group and column pair
    const int tg = warp / DS, dh = HD * (warp % DS); // the warp's token group and first P.V dim

    cta_ctx c;
    c.smem = smem;
    bool one; // the sequence has one split: the CTA writes the output itself
    int ntiles;
    if (!begin_cta<QT>(p, c, G::esz, HS, T, one, ntiles))
        return;
    // The KV head's fp8 scales (one for all heads unless scales_per_head).
    const float ks_ = (F8 && p.k_scale) ? p.k_scale[c.kvh * p.scale_hs] : 1.0f;
    const float vs = (F8 && p.v_scale) ? p.v_scale[c.kvh * p.scale_hs] : 1.0f;

    for (int s = 0; s < NS - 1; s++) {
        issue_tile<CT, SKIP_MASKS, true>(p, geo, c, s, ntiles);
        cp_commit();
    }
    // Whole tiles: every token inside [win_lo, L), which are tiles w_lo ..
    // w_hi of the split (e0 is the window start rounded down to a tile), and
    // no corrupt block id in any table window the CTA has staged so far
    // (c.bad_seen, set by the refill that staged it, before the tile was
    // issued). Their logits skip the token and head masks (below), on the
    // fp8 path only (SKIP_MASKS).
    const int w_lo = c.win_lo > c.e0 ? 1 : 0, w_hi = (c.L - c.e0) / T - 1;

    // Q -> fragments in registers, head g + 8b of head block b (zero for
    // heads >= nh), k-step ks: dims 2c..2c+1 and 2c+8..2c+9 through qk_dim.
    // 16-bit: S's A fragment (a0, a2 from block 0; a1, a3 from block 1, or
    // zero rows 8..15 with one block); fp8: Q^T's B fragment of n-block b
    // (b0, b1; column g). A register's two dims are adjacent and the first is
    // even, so it is one 4-byte word of the query row: one load when the host
    // found every row 4-byte aligned (q_words), else two 2-byte loads. The
    // words are the MMA's input as they stand, except for a bf16 query over
    // an fp8 cache (f16 MMAs: scaled and converted below).
    uint32_t qa[KS][HB][2];
    const bool q_words = p.q_words != 0;
#pragma unroll
    for (int b = 0; b < HB; b++) {
        // a head past nh reads the CTA's last row (always there) and keeps zeros:
        // loads without a branch around each
        const bool row_on = g + MMA_ROWS * b < c.nh;
        const int hrow = row_on ? g + MMA_ROWS * b : c.nh - 1;
        const uint16_t *qrow =
            static_cast<const uint16_t *>(p.query) + (int64_t)c.seq * p.q_stride + (int64_t)(c.h0 + hrow) * HS;
        if (q_words) {
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint16_t *src = qrow + qk_dim<F8, HS>(ks, qc, h, 0);
                    PA_DEC_ALIGNED(src, 4);
                    // (head 120: the last k-step's dims 120.. do not exist: zero, not loaded)
                    const bool in = HS % 16 == 0 || qk_dim<F8, HS>(ks, qc, h, 0) < HS;
                    const uint32_t w = in ? *reinterpret_cast<const uint32_t *>(src) : 0u;
                    qa[ks][b][h] = row_on ? w : 0u;
                }
        } else {
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint16_t *src = qrow + qk_dim<F8, HS>(ks, qc, h, 0);
                    const bool in = HS % 16 == 0 || qk_dim<F8, HS>(ks, qc, h, 0) < HS;
                    const uint32_t w = in ? (uint32_t)src[0] | (uint32_t)src[1] << 16 : 0u;
                    qa[ks][b][h] = row_on ? w : 0u;
                }
        }
    }
    int qe = 0;
    if constexpr (F8 && QT == 2) { // bf16 -> f16: a power-of-two scale
        // a bf16 is the high half of its f32: one shift or mask a value
        float qf[KS][HB][2][2];
        float mx = 0.0f;
#pragma unroll
        for (int ks = 0; ks < KS; ks++)
#pragma unroll
            for (int b = 0; b < HB; b++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint32_t w = qa[ks][b][h], lo = w << 16, hi = w & 0xffff0000u;
                    memcpy(&qf[ks][b][h][0], &lo, 4);
                    memcpy(&qf[ks][b][h][1], &hi, 4);
                    mx = fmaxf(mx, fmaxf(fabsf(qf[ks][b][h][0]), fabsf(qf[ks][b][h][1])));
                }
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, shfl_xor(mx, o));
        // the same in every warp (every warp holds all of Q)
        qe = pa::tile::f16_fit_exponent(mx);
        const float sc = ldexpf(1.0f, -qe);
#pragma unroll
        for (int ks = 0; ks < KS; ks++)
#pragma unroll
            for (int b = 0; b < HB; b++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    qa[ks][b][h] = pa::tile::pack2<MDT>(qf[ks][b][h][0] * sc, qf[ks][b][h][1] * sc);
    } else {
        static_assert(MDT == QT, "decode_mma_kernel: the query's words are the MMA's input");
    }

    const float qk_scale = p.scale * ks_ * ldexpf(1.0f, qe);
    const float cap = p.soft_cap, inv_cap = cap > 0.0f ? 1.0f / cap : 0.0f;
    const bool plain = !(cap > 0.0f) && p.alibi == nullptr; // no per-logit feature: the common case

    // The lane's heads (HL of them, head slot k holding head hd(k)) and
    // logits (NL; logit i of slot i % HL at tile token tk(i)): 16-bit S rows
    // are heads, so a lane holds heads g + 8b (slot b) at tokens 2qc, 2qc+1
    // of each n-block (j = i / HL: 8 (j >> 1) + 2qc + (j & 1)); fp8 S^T rows
    // are tokens, so a lane holds heads 8b + 2qc, 8b + 2qc + 1 (slots 2b,
    // 2b + 1) at tokens g and g + 8 (j = i / HL).
    constexpr int HL = F8 ? 2 * HB : HB, NL = F8 ? 2 * MT * HL : 2 * NB * HL;
    const int tw = WT * tg; // the warp's first token in a tile
    auto hk = [](int i) { return i % HL; };
    auto tk = [&](int i) {
        const int j = i / HL;
        return F8 ? tw + mma_tok<PERM>(g + 8 * j) : tw + 8 * (j >> 1) + 2 * qc + (j & 1);
    };
    auto hd = [&](int k) { return F8 ? MMA_ROWS * (k >> 1) + 2 * qc + (k & 1) : g + MMA_ROWS * k; };
    bool head_on[HL];
    // m_run: each head's softmax reference (the same in the lanes that share the head), at most
    // kLazyNat below its running max; l_run: the partial sum of exp(x - m_run)
    float slope[HL], m_run[HL], l_run[HL];
#pragma unroll
    for (int k = 0; k < HL; k++) {
        const int h = hd(k);
        head_on[k] = h < c.nh;
        slope[k] = (p.alibi && head_on[k]) ? p.alibi[c.h0 + h] : 0.0f;
        m_run[k] = -INFINITY;
        l_run[k] = 0.0f;
    }

    // O^T: m-block mb (dims dh + ...), head block b, (dim row g / g+8) x
    // (head 8b + 2qc / 8b + 2qc + 1)
    float acc[MB][HB][4];
#pragma unroll
    for (int mb = 0; mb < MB; mb++)
#pragma unroll
        for (int b = 0; b < HB; b++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                acc[mb][b][i] = 0.0f;

    for (int it = 0; it < ntiles; it++) {
        cp_wait<NS - 2>();
        bar(); // tile `it` visible to all; stage (it - 1) % NS free
        issue_tile<CT, SKIP_MASKS>(p, geo, c, it + NS - 1, ntiles);
        cp_commit();
        const bool all_in = SKIP_MASKS && it >= w_lo && it <= w_hi && !c.bad_seen; // the same in every thread

        const int st = it % NS;
        const int t0 = c.e0 + it * T;
        const unsigned char *kt = smem + st * G::stage_k_bytes;
        const unsigned char *vt = smem + p.off_v + st * G::stage_v_bytes;
        const unsigned char *tok = smem + p.off_tok + st * TOK_STRIDE;

        float x[NL]; // the lane's logits, unscaled
        if constexpr (F8) {
            // ---- S^T = K Q^T: M = the warp's 16 tokens, N = 8 heads, K = 128
            // dims in 8 k-steps; Q^T's B fragment is Q's A fragment above.
            // Lane (g, c) reads 16 contiguous bytes of tokens g and g + 8 per
            // 64 dims: word s of them is k-step 4j + s's a0/a2 (token g) and
            // a1/a3 (token g + 8), through qk_dim's permutation. ----
            float sf[MT][HB][4] = {};
#pragma unroll
            for (int m = 0; m < MT; m++) { // M block m: the warp's tokens 16m ..
                const int tr0 = tw + 16 * m + mma_tok<PERM>(g),
                          tr1 = tw + 16 * m + mma_tok<PERM>(g + 8); // rows g, g + 8
                const unsigned char *krow0 = kt + tr0 * G::pitch_k, *krow1 = kt + tr1 * G::pitch_k;
                // k-step ks from word x0 of token g's bytes and x1 of token g + 8's
                auto qk_step = [&](uint32_t x0, uint32_t x1, int ks) {
                    const uint32_t a[4] = {fp8x2_to_f16x2<CT>(x0), fp8x2_to_f16x2<CT>(x1), fp8x2_hi_to_f16x2<CT>(x0),
                                           fp8x2_hi_to_f16x2<CT>(x1)};
#pragma unroll
                    for (int b = 0; b < HB; b++)
                        mma16816<MDT>(sf[m][b], a, qa[ks][b][0], qa[ks][b][1]);
                };
#pragma unroll
                for (int j = 0; j < HS / 64; j++) {
                    uint32_t w0[4], w1[4];
                    lds_words(krow0 + swz(64 * j + 16 * qc, tr0, G::swz_k, 4), w0);
                    lds_words(krow1 + swz(64 * j + 16 * qc, tr1, G::swz_k, 4), w1);
#pragma unroll
                    for (int s = 0; s < 4; s++)
                        qk_step(w0[s], w1[s], 4 * j + s);
                }
                if constexpr (HS % 64 >= 32) {
                    // the half block (heads 32, 96, 112): 8 bytes of each token, k-steps 4 j and 4 j + 1
                    constexpr int j = HS / 64;
                    uint32_t w0[2], w1[2];
                    lds_words(krow0 + swz(64 * j + 8 * qc, tr0, G::swz_k, 4), w0);
                    lds_words(krow1 + swz(64 * j + 8 * qc, tr1, G::swz_k, 4), w1);
                    qk_step(w0[0], w1[0], 4 * j);
                    qk_step(w0[1], w1[1], 4 * j + 1);
                }
                if constexpr (HS % 32 != 0) {
                    // the quarter block (heads 80, 112): 4 bytes of each token, the last k-step
                    constexpr int b0 = f8_base(HS, KS - 1);
                    uint32_t w0[1], w1[1];
                    lds_words(krow0 + swz(b0 + 4 * qc, tr0, G::swz_k, 4), w0);
                    lds_words(krow1 + swz(b0 + 4 * qc, tr1, G::swz_k, 4), w1);
                    qk_step(w0[0], w1[0], KS - 1);
                }
            }
#pragma unroll
            for (int m = 0; m < MT; m++)
#pragma unroll
                for (int b = 0; b < HB; b++)
#pragma unroll
                    for (int i = 0; i < 4; i++) // (token 16m + g, heads 8b + 2qc, +1), then token 16m + g + 8
                        x[HL * (2 * m + (i >> 1)) + 2 * b + (i & 1)] = sf[m][b][i];
        } else {
            // ---- S = Q K^T: M = heads (rows 0..7; 8..15 heads 8..15 or zero), N = the
            // warp's 8 tokens of n-block nb, K = HS dims. ldmatrix: lane l
            // points at row l & 7 (token tw + 8 nb + (l & 7)) of matrix l >> 3
            // (8 dims); register j = K[token g][dims 2c..] of matrix j, i.e.
            // b0/b1 of k-steps 2jj and 2jj + 1. ----
#pragma unroll
            for (int nb = 0; nb < NB; nb++) {
                float sf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                const int t = tw + 8 * nb + (lane & 7);
                const unsigned char *krow = kt + t * G::pitch_k;
#pragma unroll
                for (int jj = 0; jj < (KS + 1) / 2; jj++) {
                    // an odd last k-step (heads 80, 112): matrices 2 and 3 load 0 and 1 again;
                    // a last k-step of 8 dims (head 120): matrix 3 (dims 120..127, past the row)
                    // loads matrix 2 again and reads as zero
                    const bool half = HS % 16 != 0 && jj == KS / 2 - 1;
                    const int mk = KS % 2 != 0 && jj == KS / 2 ? (lane >> 3) & 1 : half ? min(lane >> 3, 2) : lane >> 3;
                    uint32_t r[4];
                    ldsm_x4(r, krow + swz(2 * (32 * jj + 8 * mk), t, G::swz_k, 4));
                    if (half)
                        r[3] = 0u;
#pragma unroll
                    for (int s = 0; s < 2 && 2 * jj + s < KS; s++) {
                        const uint32_t a[4] = {qa[2 * jj + s][0][0], HB > 1 ? qa[2 * jj + s][HB - 1][0] : 0u,
                                               qa[2 * jj + s][0][1], HB > 1 ? qa[2 * jj + s][HB - 1][1] : 0u};
                        mma16816<MDT>(sf, a, r[2 * s], r[2 * s + 1]);
                    }
                }
#pragma unroll
                for (int b = 0; b < HB; b++) { // head g + 8b, tokens 8 nb + 2qc, +1
                    x[HL * 2 * nb + b] = sf[2 * b];
                    x[HL * (2 * nb + 1) + b] = sf[2 * b + 1];
                }
            }
        }

        // ---- logits: scale; soft cap and ALiBi only when asked for (a
        // branch the whole CTA takes alike); masked tokens and heads -inf,
        // except in whole tiles (fp8): there every token is attended, and a head
        // past nh has a zero query row, so its logits are finite (0, or NaN
        // from a non-finite key, as for every head) and stay in its own row of
        // S, its P column and its O column, which nothing writes out ----
#pragma unroll
        for (int i = 0; i < NL; i++)
            x[i] *= qk_scale;
        if (!plain) {
#pragma unroll
            for (int i = 0; i < NL; i++) {
                if (cap > 0.0f)
                    x[i] = cap * tanhf(x[i] * inv_cap);
                x[i] += slope[hk(i)] * (float)(t0 + tk(i) - c.L + 1);
            }
        }
        if (!all_in) {
#pragma unroll
            for (int i = 0; i < NL; i++)
                x[i] = head_on[hk(i)] && tok[tk(i)] != 0 ? x[i] : -INFINITY;
        }

        // ---- online softmax per head: the max over the warp's tokens ----
        float alpha[HL];
        bool moved = false;
#pragma unroll
        for (int k = 0; k < HL; k++) {
            // 16-bit: head g's tokens are in its quad; fp8: head 2qc + k's in the lanes of column qc
            float mx = -INFINITY;
#pragma unroll
            for (int i = k; i < NL; i += HL)
                mx = fmaxf(mx, x[i]);
#pragma unroll
            for (int o = F8 ? 4 : 1; o < (F8 ? 32 : 4); o <<= 1)
                mx = fmaxf(mx, shfl_xor(mx, o));
            // Lazy reference (SoftmaxN's, attn_tile.cuh; FlashAttention-4's rescale
            // threshold): the head's reference moves only when the tile's max passes it
            // by more than kLazyNat (8 log2 units), so once a split's first keys are in
            // almost no tile moves it and the warp branches past O's rescale below;
            // until then P = exp(x - m_run) is at most 256, well inside the MMA's 16-bit
            // P, and the sums, the epilogue's merge of the token groups, the split's
            // max_logits and the sink all take the same reference. -inf + kLazyNat is
            // -inf: a head's first key always moves it; a NaN max never does.
            const float m_new = mx > m_run[k] + kLazyNat ? mx : m_run[k];
            // m_new = -inf: no key of this head yet (or a head past nh); its
            // probabilities are 0. exp(x - m) = 2^(x log2 e - m log2 e): one
            // FFMA and ex2.approx.ftz a logit, as FlashAttention computes them
            // (a result below 2^-126 is 0). alpha's exponent is a difference
            // first, so alpha is exactly 1 when the reference did not move; it
            // is 1 too while the head had no reference (m_run -inf: its sum
            // and O columns are still the zeros a factor would keep), so a
            // CTA's first tile skips the rescale as well.
            const float m_use = m_new == -INFINITY ? 0.0f : m_new, ml = m_use * kLog2e;
            alpha[k] = m_run[k] == -INFINITY ? 1.0f : ex2((m_run[k] - m_use) * kLog2e);
            float psum = 0.0f;
#pragma unroll
            for (int i = k; i < NL; i += HL) {
                x[i] = ex2(fmaf(x[i], kLog2e, -ml)); // exp(-inf) = 0
                psum += x[i];
            }
            m_run[k] = m_new;
            l_run[k] = l_run[k] * alpha[k] + psum;
            moved = moved || alpha[k] != 1.0f;
        }

        // ---- P^T's B fragment (tokens 2qc.. in b0, 8 + 2qc.. in b1, head
        // g). 16-bit: S's C fragments as they stand (n-block 0 in b0, 1 in
        // b1; b1 zero with one n-block, 8 tokens a warp). fp8:
        // S^T's C fragment is its transpose, an 8x8 b16 matrix per token
        // half: one movmatrix each. ----
        uint32_t pb0[MT][HB], pb1[MT][HB]; // M block m's (the warp's tokens 16m ..), head block b's
#pragma unroll
        for (int m = 0; m < MT; m++)
#pragma unroll
            for (int b = 0; b < HB; b++) {
                if constexpr (F8) {
                    const int j0 = HL * 2 * m, j1 = HL * (2 * m + 1); // tokens 16m + g, 16m + g + 8
                    pb0[m][b] = movmatrix_trans(pa::tile::pack2<MDT>(x[j0 + 2 * b], x[j0 + 2 * b + 1]));
                    pb1[m][b] = movmatrix_trans(pa::tile::pack2<MDT>(x[j1 + 2 * b], x[j1 + 2 * b + 1]));
                } else {
                    pb0[m][b] = pa::tile::pack2<MDT>(x[b], x[HL + b]);
                    pb1[m][b] = NB == 2 ? pa::tile::pack2<MDT>(x[2 * HL + b], x[3 * HL + b]) : 0u;
                }
            }

        // ---- rescale O^T's columns (heads 8b + 2qc, +1), skipped by the whole
        // warp when no head's reference moved (alpha is 1 exactly then), the
        // usual case once the first tiles are in (the lazy reference above).
        // fp8 lanes hold those heads' alphas; 16-bit ones fetch them from
        // quads 2qc and 2qc+1. ----
        float mv = moved ? 1.0f : 0.0f;
#pragma unroll
        for (int o = F8 ? 1 : 4; o < (F8 ? 4 : 32); o <<= 1)
            mv = fmaxf(mv, shfl_xor(mv, o));
        if (mv != 0.0f) {
#pragma unroll
            for (int b = 0; b < HB; b++) {
                float a_lo, a_hi;
                if constexpr (F8) {
                    a_lo = alpha[2 * b];
                    a_hi = alpha[2 * b + 1];
                } else {
                    a_lo = shfl_idx(alpha[b], 8 * qc);
                    a_hi = shfl_idx(alpha[b], 8 * qc + 4);
                }
#pragma unroll
                for (int mb = 0; mb < MB; mb++) {
                    acc[mb][b][0] *= a_lo;
                    acc[mb][b][1] *= a_hi;
                    acc[mb][b][2] *= a_lo;
                    acc[mb][b][3] *= a_hi;
                }
            }
        }

        // ---- O^T += V^T P^T ----
        if constexpr (VL && F8) {
            // vLLM's V^T rows (vt_at). Lane (g, c) reads physical tokens
            // 4c .. 4c+3 (logical 2c, 2c+1, 2c+8, 2c+9) of dims dh + 16 mb + g
            // (a0 low, a2 high) and dh + 16 mb + g + 8 (a1, a3); rows VS apart
            // keep the swizzle's map (16; 32 for the 32-byte rows of heads 192 and 256), so
            // VS / 16 pairs of addresses serve every m-block.
            constexpr int VS = vt_same_map(16, G::vt_rs, G::vt_ks) ? 16 : 32, NVB = VS / 16;
            static_assert(vt_same_map(VS, G::vt_rs, G::vt_ks) && MB % NVB == 0, "decode_mma_kernel: fp8 V^T m-blocks");
            const int tph = tw + 4 * qc;
            const unsigned char *vb[NVB][2];
#pragma unroll
            for (int v = 0; v < NVB; v++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    vb[v][h] = vt + vt_at(dh + 16 * v + 8 * h + g, tph, G::vt_rs, G::vt_ks);
#pragma unroll
            for (int mb = 0; mb < MB; mb++) {
                const unsigned char *s0 = vb[mb % NVB][0] + (mb / NVB) * VS * G::pitch_v,
                                    *s1 = vb[mb % NVB][1] + (mb / NVB) * VS * G::pitch_v;
                PA_DEC_ALIGNED(s0, 4);
                PA_DEC_ALIGNED(s1, 4);
                const uint32_t w0 = *reinterpret_cast<const uint32_t *>(s0),
                               w1 = *reinterpret_cast<const uint32_t *>(s1);
                const uint32_t a[4] = {fp8x2_to_f16x2<CT>(w0), fp8x2_to_f16x2<CT>(w1), fp8x2_hi_to_f16x2<CT>(w0),
                                       fp8x2_hi_to_f16x2<CT>(w1)};
#pragma unroll
                for (int b = 0; b < HB; b++)
                    mma16816<MDT>(acc[mb][b], a, pb0[0][b], pb1[0][b]);
            }
        } else if constexpr (F8) {
#pragma unroll
            for (int m = 0; m < MT; m++) {
                // the lane's V rows: tokens 2qc, 2qc+1, 8+2qc, 9+2qc of M block m's 16
                int vtok[4];
#pragma unroll
                for (int i = 0; i < 4; i++)
                    vtok[i] = tw + 16 * m + 2 * qc + (i & 1) + 8 * (i >> 1);
                // m-block mb from w[i], 4 bytes (dims d0 .. d0 + 3) of token i of those:
                // dims d0 + 2 (q & 1) and the next are its rows g and g + 8.
                // X: tokens 2qc, 2qc+1 of both dims; Y: tokens 8+2qc, 9+2qc.
                auto pv_step = [&](const uint32_t *w, int q, int mb) {
                    const uint32_t sel = q % 2 == 0 ? PAIR_D01 : PAIR_D23;
                    const uint32_t X = prmt(w[0], w[1], sel), Y = prmt(w[2], w[3], sel);
                    const uint32_t a[4] = {fp8x2_to_f16x2<CT>(X), fp8x2_hi_to_f16x2<CT>(X), fp8x2_to_f16x2<CT>(Y),
                                           fp8x2_hi_to_f16x2<CT>(Y)};
#pragma unroll
                    for (int b = 0; b < HB; b++)
                        mma16816<MDT>(acc[mb][b], a, pb0[m][b], pb1[m][b]);
                };
#pragma unroll
                for (int P = 0; P < HD / 64; P++) {
                    uint32_t lo[4], hi[4]; // bytes 0..3 and 4..7 of the 8 dims, per token
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int t = vtok[i];
                        const unsigned char *src = vt + t * G::pitch_v + swz(dh + 64 * P + 8 * g, t, G::swz_v, 4);
                        PA_DEC_ALIGNED(src, 8);
                        const uint2 u = *reinterpret_cast<const uint2 *>(src);
                        lo[i] = u.x;
                        hi[i] = u.y;
                    }
                    // dims dh + 64P + 8g + d, d = 0..7: m-block 4P + (d >> 1), row g + 8 (d & 1)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        pv_step(q < 2 ? lo : hi, q, 4 * P + q);
                }
                if constexpr (HD % 64 >= 32) {
                    // the half block (heads 32, 96, 112; head 192's 96 dims a warp): 4 bytes of each
                    // token, dims dh + 64P + 4g + d, d = 0..3: m-block 4P + (d >> 1), row g + 8 (d & 1)
                    constexpr int P = HD / 64;
                    uint32_t w[4];
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int t = vtok[i];
                        const unsigned char *src = vt + t * G::pitch_v + swz(dh + 64 * P + 4 * g, t, G::swz_v, 4);
                        PA_DEC_ALIGNED(src, 4);
                        w[i] = *reinterpret_cast<const uint32_t *>(src);
                    }
                    pv_step(w, 0, 4 * P);
                    pv_step(w, 1, 4 * P + 1);
                }
                if constexpr (HD % 32 != 0) {
                    // the quarter block (heads 80, 112): 2 bytes of each token, dims dh + b0 + 2g
                    // + d, d = 0, 1: the last m-block, row g + 8 d (the words' bytes 0 and 1)
                    constexpr int b0 = f8_base(HD, MB - 1);
                    uint32_t w[4];
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int t = vtok[i];
                        const unsigned char *src = vt + t * G::pitch_v + swz(dh + b0 + 2 * g, t, G::swz_v, 4);
                        PA_DEC_ALIGNED(src, 2);
                        w[i] = *reinterpret_cast<const uint16_t *>(src);
                    }
                    pv_step(w, 0, MB - 1);
                }
            }
        } else {
            // 16-bit: V^T's A fragments of m-blocks 2 jj, 2 jj + 1 from one
            // ldmatrix per n-block nb: register j = V^T[dim g of matrix
            // j][tokens 8 nb + 2c, +1], a0 and a1 (nb 0) or a2 and a3 (nb 1)
            // of the two m-blocks (with one n-block, a2 and a3's tokens 8..15
            // do not exist: zero).
            //   flash: V rows by token, ldmatrix.trans, lane l pointing at token
            //     tw + 8 nb + (l & 7), dims dh + 32 jj + 8 (l >> 3);
            //   vLLM: the loader's V^T rows (vt_at), plain ldmatrix, lane l
            //     pointing at the warp's 8 tokens 8 nb.. of dim dh + 32 jj + 8
            //     (l >> 3) + (l & 7) (rows 32 apart keep the swizzle's map).
            // An odd last m-block (heads 80, 112): lanes 16..31 load lanes
            // 0..15's matrices again (vrow_t: vLLM's rows of dims 0..15 of the pair).
            // A last m-block of 8 dims (head 120): lanes 24..31 load matrix 2
            // again (vrow_t: vLLM's rows of dims 0..23 of the pair) and matrix 3's
            // registers (rows 8..15: dims 120..127) read as zero.
            static_assert(!VL || vt_same_map(32, G::vt_rs, G::vt_ks), "decode_mma_kernel: 16-bit V^T m-blocks");
            int tv[NB];
            const unsigned char *vrow[NB], *vrow_t[NB];
#pragma unroll
            for (int nb = 0; nb < NB; nb++) {
                tv[nb] = tw + 8 * nb + (lane & 7);
                vrow[nb] =
                    VL ? vt + vt_at(dh + 8 * (lane >> 3) + (lane & 7), (tw + 8 * nb) * G::esz, G::vt_rs, G::vt_ks)
                       : vt + tv[nb] * G::pitch_v;
                vrow_t[nb] = VL && (MB % 2 != 0 || HD % 16 != 0)
                                 ? vt + vt_at(dh + 8 * (MB % 2 != 0 ? (lane >> 3) & 1 : min(lane >> 3, 2)) + (lane & 7),
                                              (tw + 8 * nb) * G::esz, G::vt_rs, G::vt_ks)
                                 : vrow[nb];
            }
#pragma unroll
            for (int jj = 0; jj < (MB + 1) / 2; jj++) {
                const bool odd = MB % 2 != 0 && jj == MB / 2, half = HD % 16 != 0 && jj == MB / 2 - 1;
                const int mv = odd ? (lane >> 3) & 1 : half ? min(lane >> 3, 2) : lane >> 3; // the lane's 8x8 matrix
                uint32_t r[2][4] = {};
#pragma unroll
                for (int nb = 0; nb < NB; nb++) {
                    if constexpr (VL)
                        ldsm_x4(r[nb], (odd || half ? vrow_t[nb] : vrow[nb]) + 32 * jj * G::pitch_v);
                    else
                        ldsm_x4_trans(r[nb], vrow[nb] + swz(2 * (dh + 32 * jj + 8 * mv), tv[nb], G::swz_v, 4));
                    if (half)
                        r[nb][3] = 0u;
                }
#pragma unroll
                for (int s = 0; s < 2 && 2 * jj + s < MB; s++) {
                    const uint32_t a[4] = {r[0][2 * s], r[0][2 * s + 1], r[1][2 * s], r[1][2 * s + 1]};
#pragma unroll
                    for (int b = 0; b < HB; b++)
                        mma16816<MDT>(acc[2 * jj + s][b], a, pb0[0][b], pb1[0][b]);
                }
            }
        }
    }
    cp_wait<0>();
    bar(); // every tile read: the tile buffers hold the warps' results now

    // ---- epilogue: merge the token groups in order ----
    // The CTA's sequence and heads, from blockIdx again: kept from
    // begin_cta across the tile loop, they cost the instances at their
    // register bound spills (fp8 at sm_86 and sm_89, 16-bit head 192 at sm_90)
    // once the lse output needed the sequence and first head apart.
    int seq, kvh, h0;
    cta_coords(p, (int)::pa::ptx::ctaid_x_again(), seq, kvh, h0);
    const int nh = min(p.hpc, (kvh + 1) * p.group - h0);
    // Each head's sum over the warp's lanes that hold it (16-bit: its quad;
    // fp8: the column's 8 rows).
#pragma unroll
    for (int k = 0; k < HL; k++)
#pragma unroll
        for (int o = F8 ? 4 : 1; o < (F8 ? 32 : 4); o <<= 1)
            l_run[k] += shfl_xor(l_run[k], o);
    // [NTG][NHC heads][RS]: rows of HS floats (a group's DS warps each
    // write their HD dims), RS apart so that a warp's stores of its fragments
    // meet no bank more than once (16-bit dims) or twice (fp8's permuted
    // dims); scripts/decode_banks.py checks both. A group's warps hold the
    // same max and sum (the same S): its first warp writes them.
    constexpr int RS = F8 && !VL ? HS + 3 : HS + 4;
    float *red = reinterpret_cast<float *>(smem);
    float *wm = red + NTG * NHC * RS; // [NTG][NHC], past red, inside the tile stages
    float *wl = wm + NTG * NHC;
    if (dh == 0 && (F8 ? g == 0 : qc == 0)) {
#pragma unroll
        for (int k = 0; k < HL; k++) {
            wm[tg * NHC + hd(k)] = m_run[k];
            wl[tg * NHC + hd(k)] = l_run[k];
        }
    }
    bar();
    // This lane's heads 8b + 2qc and 8b + 2qc + 1 (O^T's columns): the factor
    // of its token group. Threads 0..NHC-1 also total head tid's sum over the
    // groups once: v_scale / sum (1 / sum for a partial row, whose v_scale and
    // sink the merge applies) in hr for the output loop below, and with
    // several splits the split's sum and max in exp_sums and max_logits.
    float fac[HB][2];
#pragma unroll
    for (int b = 0; b < HB; b++)
#pragma unroll
        for (int k = 0; k < 2; k++) {
            const int h = MMA_ROWS * b + 2 * qc + k;
            float mm = -INFINITY;
            for (int w = 0; w < NTG; w++)
                mm = fmaxf(mm, wm[w * NHC + h]);
            const float mw = wm[tg * NHC + h];
            fac[b][k] = mw == -INFINITY ? 0.0f : ex2((mw - mm) * kLog2e);
        }
    float *hr = wl + NTG * NHC;
    static_assert((NTG * NHC * RS + 2 * NTG * NHC + NHC) * 4 <= NS * (G::stage_k_bytes + G::stage_v_bytes),
                  "decode_mma_kernel: the epilogue's buffers fit in the tile stages");
    float lse_v = 0.0f;
    if (tid < NHC) {
        float mm = -INFINITY, l = 0.0f;
        for (int w = 0; w < NTG; w++)
            mm = fmaxf(mm, wm[w * NHC + tid]);
        for (int w = 0; w < NTG; w++) {
            const float mw = wm[w * NHC + tid];
            l += wl[w * NHC + tid] * (mw == -INFINITY ? 0.0f : ex2((mw - mm) * kLog2e));
        }
        // (partial rows: the merge applies v_scale and the sink)
        const float ld = one && l > 0.0f && tid < nh ? l + sink_term(p, h0 + tid, mm) : l;
        hr[tid] = l > 0.0f ? (one ? vs : 1.0f) / ld : 0.0f;
        // (stored below, once acc is out of registers; heads past nh have none, nor a sink to read)
        lse_v = p.lse && tid < nh ? lse_of(p, h0 + tid, ld, mm) : 0.0f;
        if (!one && tid < nh) {
            const int64_t row = ((int64_t)seq * p.num_heads + h0 + tid) * p.max_splits + blockIdx.y;
            p.exp_sums[row] = l;
            p.max_logits[row] = mm;
        }
    }
#pragma unroll
    for (int mb = 0; mb < MB; mb++)
#pragma unroll
        for (int b = 0; b < HB; b++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int h = MMA_ROWS * b + 2 * qc + (i & 1), d = dh + pv_dim<PERM_D, HD>(mb, g + 8 * (i >> 1));
                if (HD % 16 == 0 || pv_dim<PERM_D, HD>(mb, g + 8 * (i >> 1)) < HD) // (head 120: dims 120..127 are none)
                    red[(tg * NHC + h) * RS + d] = acc[mb][b][i] * fac[b][i & 1];
            }
    if (one && tid < nh)
        store_lse(p, seq, h0 + tid, lse_v);
    bar();
    // Output: thread tid writes dim d0 = tid % HS (and d0 + NT at head 256,
    // and at head 192 for d0 < 64)
    // of heads hp, hp + HP, .. (hp = tid / HS; HP = NT / HS heads a pass: two
    // at head 64, one otherwise; at head 96 threads 96.. have none). The
    // groups' rows are already scaled to the head's max. The loop is unrolled
    // over the CTA's NHC head slots; a head costs its NTG shared loads, the
    // sum and one store per dim: the split's result (o), or its partial row
    // in the output's type (t, which steps by the rows of HP heads).
    // heads a pass, dims a thread (at head 192 the second only for threads 0..63)
    constexpr int HP = HS < NT ? NT / HS : 1, DPT = HS > NT ? (HS + NT - 1) / NT : 1;
    static_assert((DPT * NT >= HS || HS < NT) && NHC % HP == 0, "decode_mma_kernel: whole output rows");
    const int hp = HS < NT ? tid / HS : 0, d0 = tid - hp * HS;
    if (hp < HP) {
        const int64_t row0 = (int64_t)seq * p.num_heads + h0 + hp;
        qt *o = static_cast<qt *>(p.out) + row0 * HS + d0;
        qt *t = static_cast<qt *>(p.tmp_out); // NULL with one split at most
        if (!one)
            t += (row0 * p.max_splits + blockIdx.y) * HS + d0;
        const int64_t ts = (int64_t)p.max_splits * HS * HP;
#pragma unroll
        for (int i = 0; i < NHC / HP; i++) {
            const int h = hp + HP * i;
            if (h >= nh)
                break;
            const float r = hr[h];
#pragma unroll
            for (int k = 0; k < DPT; k++) {
                if (HS % NT != 0 && HS > NT && d0 + k * NT >= HS)
                    break;
                float s = 0.0f;
#pragma unroll
                for (int w = 0; w < NTG; w++)
                    s += red[(w * NHC + h) * RS + d0 + k * NT];
                if (one)
                    o[HP * HS * i + k * NT] = pa::from_float<QT>(s * r);
                else
                    t[k * NT] = pa::from_float<QT>(s * r);
            }
            if (!one)
                t += ts;
        }
    }
}

} // namespace pa_dec
