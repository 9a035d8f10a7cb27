// Prefill attention on Hopper (sm_90a): the opt-in path of issue 14 item 6,
// FlashAttention-3's structure on this library's problem (context attention
// over the paged cache plus new tokens, and varlen prompt attention). The CPU
// reference (csrc/reference/prefill.c) is the specification; the selector
// (prefill_launch.cu) sends a launch here only when the caller opted in
// (pa_set_prefill_path), the device is sm_90, the library holds sm_90a code and
// pa_prefill_hopper_eligible() accepts the parameters.
//
// A work item = 128 query rows (GQA-packed as in prefill_kernel.cuh) of one
// (sequence, KV head). A CTA runs one item, or with persistent CTAs
// (launch_wgmma, PERSIST) its share of them in turn (item_index); three
// warpgroups:
//   warpgroup 0, the producer (setmaxnreg 56; 72 on the FP8 path, at HP 64 and 96 and at HP 256
//     over fp8 caches, 40 at HP 256 otherwise):
//     copies the Q tile once and then every 128-key (HP 256: 64-key) K and V tile into a two-stage
//     ring with cp.async, each
//     thread's 16-byte chunks placed in wgmma's 128-byte-swizzled K-major
//     layout; cp.async.mbarrier.arrive.noinc on the stage's `full` barrier
//     makes the arrival when the thread's copies land. It waits on the stage's
//     `empty` barrier before refilling it. K and V have barriers of their own.
//   warpgroups 1 and 2, the consumers (setmaxnreg 224; 216; 232 at HP 256, 216 there over fp8), 64 rows each: wait on
//     `full`, S = Q K^T by wgmma (both operands in shared memory, N = 128
//     keys, or 64), masks and the online softmax in registers (the accumulator layout
//     is mma.sync's C fragment repeated over N, so attn_tile.cuh's Softmax
//     serves), O += P V by wgmma with P from registers (the A operand) and V
//     from shared memory (N-major B), then each warp arrives on `empty`. As in
//     FA3, Q K^T of tile t + 1 and P V of tile t are in flight while the warps
//     do tile t + 1's softmax, and the two consumer warpgroups take turns to
//     issue their wgmma (FA3's ping-pong, named barriers 2 and 3).
// Across a persistent CTA's items, as in FA3's persistent kernels, the ring's barriers run on
// (tile t of an item is the CTA's tile g + t) and the producer starts the next
// item (its block-id check, Q, first K and V tiles) as soon as the consumers
// are done with the last item's Q (bar_q_empty, after its last Q K^T), under
// their last softmax, P V and output.
// Where this departs from FlashAttention-3 (hopper/mainloop_fwd_sm90_tma_gmma_ws):
//   - Items are dealt to CTAs statically (FA3's causal scheduler takes them
//     from an atomic counter, which needs a zeroed word per launch: a
//     workspace or a memset this entry point does not have): round-robin,
//     which leaves the busiest CTA about 3% above the average on the causal
//     prompts modelled (scripts/hopper_item_overhead.py).
//   - K/V arrive by cp.async from a producer warpgroup for every source (the
//     paged cache goes through the block table row by row, as FA3's paged
//     non-TMA path does); no TMA, so no tensor map per call.
//   - Each consumer thread fences the async proxy after its `full` wait (the
//     tile was written by cp.async, the generic proxy, and wgmma reads through
//     the async proxy); FA3 relies on the barrier alone.
//   - fp8 caches: FA3's FP8 path runs e4m3 wgmma, with Q and P quantised to
//     e4m3 and V transposed in shared memory for the K-major operand fp8
//     needs. Here, by default, the producer converts the raw tiles to the
//     query dtype (exactly) and the consumers run the same 16-bit wgmma:
//     results keep the semantics of the library's reference (K/V dequantised,
//     Q and P in the query dtype) at half of FP8's peak rate. The FP8 path
//     (HCfg's F8, opt-in PA_PREFILL_PATH_HOPPER_FP8, e4m3 caches at HP 128)
//     runs e4m3 wgmma as FA3 does, with the departures written at f8_key.
// Shapes served: f16/bf16 queries, head sizes up to 64 (HP 64), 65..96 (HP
// 96), 97..128 (HP 128), 129..192 (HP 192) and 193..256 (HP 256); in context mode a cache in a flash layout or
// vLLM's, of the query dtype or fp8 (at HP 192 and 256, a flash layout), on the host's cp.async paths (16-byte
// aligned rows; vLLM blocks of a multiple of 8, or 16 for fp8). Everything else stays on the
// mma.sync kernel.
// HP 192 (Nemotron-4 340B's head 192; heads 129..191 padded): 64-key tiles as
// at HP 256, three 64-element panels a row, so a stage is 48 KiB and the CTA
// 145 KiB (193 KiB over fp8 caches, with HP 128's two raw K and V staging
// pairs); per tile a consumer warpgroup issues 12 wgmma m64n64k16 (Q K^T)
// and 4 m64n192k16 (P V); O takes 96 registers (setmaxnreg 216, the producer
// 72). FlashAttention-3 takes 96- or 112-key tiles at head 192 (TMA); here
// the tiles are powers of 2 (whole_tiles), and 128 keys do not fit: two
// stages of 96 KiB beside Q's 48 KiB.
// HP 256 (Gemma 2 and 3): 64-key tiles, so a stage is 64 KiB and the CTA 193
// KiB; per tile a consumer warpgroup issues 16 wgmma m64n64k16 (Q K^T) and 4
// m64n256k16 (P V); O takes 128 of its 232 registers. FlashAttention-3 takes
// 80-key tiles there (64 under a sliding window; TMA loads); here the tiles are whole
// 16-row producer passes and powers of 2 (whole_tiles), and the cp.async
// producer keeps 40 registers. Over fp8 caches the CTA has 225 KiB, room for
// one raw K and one raw V staging tile (HCfg's kRawPairs), and the producer
// takes 72 registers.
#pragma once

#include "prefill_kernel.cuh"

#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace pa_prefill_h {

// Where cache tiles come from (new keys are always packed rows):
//   kFlash: a flash layout (NHD, HND, combined) of the query dtype; rows of
//           head_size contiguous elements.
//   kVllm:  vLLM's layout of the query dtype: keys [blocks, heads, head / 8,
//           block, 8] (a row's 16-byte chunks block x 16 bytes apart) and
//           values [blocks, heads, head, block], copied as V^T tiles.
//   kFlashFp8, kVllmFp8: the same layouts holding fp8 (e4m3 or e5m2). The
//           producer copies a tile's raw bytes into a staging buffer of its
//           own, then converts them into the stage the consumers read, in the
//           query dtype (exact: every fp8 value is a 16-bit float; V times
//           v_scale, and k_scale joins the score scale), so the tensor work is
//           the same 16-bit wgmma.
enum { kFlash = 0, kVllm = 1, kFlashFp8 = 2, kVllmFp8 = 3 };

// The ring's barriers in their one array: stage st's `full` K and V (the
// producer's copies landed) and `empty` K and V (every consumer warp is done).
enum { kFullK = 0, kFullV = 2, kEmptyK = 4, kEmptyV = 6 };

// F8_: the FP8 path (opt-in, PA_PREFILL_PATH_HOPPER_FP8): e4m3 caches at HP
// 128, both products on e4m3 wgmma (m64n128k32). Every tile the consumers
// read is e4m3, 128 bytes a row: Q quantised per row by the consumers, K
// (cache tiles copied as they stand, new keys quantised with 1 / k_scale)
// and V^T (built by the producer from raw cache tiles, or new values
// quantised with 1 / v_scale, keys permuted within each 16: f8_key below).
template <int HP_, int DT_, int KV_, bool F8_ = false> struct HCfg {
    static_assert(HP_ == 64 || HP_ == 96 || HP_ == 128 || HP_ == 192 || HP_ == 256,
                  "the Hopper prefill kernel serves HP 64, 96, 128, 192 and 256");
    static_assert(KV_ >= kFlash && KV_ <= kVllmFp8, "cache kinds: flash or vLLM, 16-bit or fp8");
    // HP 192: 64-key tiles as at HP 256 (copy_vt's V^T tiles are two 64-key
    // panels, so vLLM's layout stays on mma.sync there too).
    // HP 256: Q is 64 KiB and a stage's K and V 64 KiB at 64 keys; fp8
    // staging fits one raw K and one raw V tile (16 KiB each) beside them
    // (kRawPairs), and vLLM's layout (a second P V loop over V^T tiles)
    // leaves the consumers too few registers (24 bytes spilled with whole
    // 64-bit descriptor adds, 23 R2UR among the wgmmas with desc_at's
    // low-word adds; 2026-11-30).
    static_assert(HP_ <= 128 || KV_ == kFlash || KV_ == kFlashFp8, "HP 192 and 256: prompts and flash caches");
    static_assert(!F8_ || (HP_ == 128 && (KV_ == kFlashFp8 || KV_ == kVllmFp8)), "the FP8 path: fp8 caches, HP 128");
    static constexpr int HP = HP_, kDT = DT_, KV = KV_;
    static constexpr bool kF8 = F8_;
    static constexpr bool kFp8 = KV_ == kFlashFp8 || KV_ == kVllmFp8; // raw fp8 cache tiles, converted
    static constexpr bool kVt = KV_ == kVllm || KV_ == kVllmFp8;      // cache tiles' V read as V^T
    using T = typename pa::elt<DT_>::type;
    // Query rows (two consumer warpgroups of 64) and keys per tile. HP 256
    // takes 64-key tiles: O (128 registers a consumer thread) leaves room for
    // S and P of 64 keys (32 + 16), not of 128, and two stages of 128 keys
    // would not fit beside Q (FlashAttention-3 takes 80 at head 256 with TMA;
    // here tiles are whole 16-row producer passes and whole_tiles' powers of 2).
    // HP 192 too: two stages of 128 keys (192 KiB) do not fit beside Q (48).
    static constexpr int BM = 128, BN = HP_ > 128 ? 64 : 128;
    static constexpr int kThreads = 384; // producer warpgroup + two consumer warpgroups
    // setmaxnreg budgets: what the producer gives up (168 at launch, 384
    // threads) the consumers take: 128 x (P + 2 C) must fit the CTA's pool,
    // 168 x 384 = 64512 (setmaxnreg.inc waits forever otherwise;
    // scripts/check-sm90a.sh checks that ptxas allocates the 168). The
    // producer takes all the consumers leave it: 72 where they need 216 (the
    // FP8 path's hold P in half the registers; at HP 64 and 96, O is half or
    // three quarters of HP 128's; at HP 192, O is 96 but S and P of 64 keys
    // half of HP 128's), else 56; at HP 256 the consumers take 232 (O
    // alone is 128) and leave the producer 40, which its 16-bit copies fit
    // without spilling. Over fp8 caches at HP 256 the producer converts as
    // well and takes 72, the consumers 216 (at 56 and 224 the persistent
    // producer spilled 8 bytes, at 40 and 232 both spilled 28-48; 2026-11-30).
    // The FP8 path's producer transposes V in registers; the item loop
    // (persistent CTAs) holds its state there too.
    static constexpr bool kLeanConsumers = F8_ || HP_ <= 96 || HP_ == 192;
    static constexpr int kProducerRegs = HP_ == 256       ? (kFp8 ? 72 : 40)
                                         : kLeanConsumers ? 72
                                                          : 56,
                         kConsumerRegs = HP_ == 256       ? (kFp8 ? 216 : 232)
                                         : kLeanConsumers ? 216
                                                          : 224;
    static constexpr int kLaunchRegs = (65536 / kThreads) & ~7;
    static_assert(128 * (kProducerRegs + 2 * kConsumerRegs) <= kLaunchRegs * kThreads,
                  "setmaxnreg: within the CTA's pool");
    static constexpr int kCPR = HP / 8; // 16-byte chunks per row
    // A tile is whole 64-element panels (HP 96: the second half empty); an
    // e4m3 tile is one panel of 128 bytes a row.
    static constexpr int kPanels = F8_ ? 1 : (HP + 63) / 64;
    static constexpr uint32_t q_bytes = BM * 128 * kPanels, kv_bytes = BN * 128 * kPanels;
    // A stage: K, then V; on the FP8 path V^T has 8 more rows, all e4m3 ones
    // (written once), so P V's last 8 columns are P's row sums (kOnes).
    static constexpr uint32_t kOnes = F8_ ? 1024 : 0, stage_bytes = 2 * kv_bytes + kOnes;
    // Q, then K and V of stage 0, then of stage 1; 1024 bytes of slack to put
    // the tiles on a 1024-byte boundary of the shared window (the swizzle
    // pattern's period, so the descriptors' base offset is 0).
    // fp8: two staging buffers each for raw K and V (a tile's bytes, HP x BN),
    // so tile t + 1's copy is in flight while tile t is converted: 225 KiB at
    // HP 128, within the 227 KiB a CTA may have. At HP 256 one each (kRawPairs
    // 1; 225 KiB): K of t + 1 is copied while V of t is converted, and V of
    // t + 1 while K of t + 1 is. HP 192 keeps two pairs of its 64-key tiles
    // (12 KiB each; 193 KiB).
    // F8: staging for raw V only (K tiles are copied as they stand).
    // An F8 buffer has 32 bytes more than a tile's (raw_slot's padding).
    static constexpr uint32_t raw_bytes = BN * HP + (F8_ ? 32 : 0);
    static constexpr int kRawPairs = HP_ == 256 ? 1 : 2;
    static constexpr uint32_t smem_bytes =
        1024 + q_bytes + 2 * stage_bytes + (kFp8 ? (F8_ ? 2 : 2 * kRawPairs) * raw_bytes : 0);
    static_assert(smem_bytes + 128 <= 232448, "a CTA's shared memory (and the static barriers) within 227 KiB");
    // One consumer warp's view for attn_tile.cuh's Softmax: 16 rows x BN keys.
    using SC = pa::tile::Cfg<HP, 64, BN, DT_, 16>;
};

// Which of a warp's 16 row pairs lane pair h copies, so that each phase of
// 8 lanes of a 16-byte shared store (cp.async's write included) hits 8
// distinct 16-byte bank groups (scripts/hopper_banks.py; in order, rows 0..3
// of a phase collide in pairs, twice the wavefronts). copy_rows_as: a phase is
// 4 rows x chunks {2 k, 2 k + 1}, so its rows take x = row % 8 of one parity
// ({0, 2, 4, 6}, then {1, 3, 5, 7}); convert_rows: chunks {4 j, 4 j + 2} (and
// + 1), so x in {0, 1, 4, 5}, then {2, 3, 6, 7}. Rows r and r + 16 keep their
// common swizzle.
__device__ __forceinline__ int rows_conflict_free16(int h) { return ((h & 3) << 1) | ((h >> 2) & 1) | (h & 8); }
__device__ __forceinline__ int rows_conflict_free8(int h) { return (h & 9) | ((h & 2) << 1) | ((h & 4) >> 1); }

// Tile layout (Q, K and V alike): 64-element column panels one after
// another, rows 128 bytes apart within a panel, 16-byte chunk c of row r at
// chunk c ^ (r % 8) of the row: the 128-byte swizzle, as
// pa::ptx::twin::wgmma_addr reads K-major (Q, K) and N-major (V) operands.
// Copies rows [R w, R w + R) of a tile of ROWS rows, R = ROWS / 4 (w: the
// producer warp; 128-row tiles (Q, and K and V but at HP 256) take R = 32,
// HP 256's 64-key tiles R = 16); lane l < R holds off = row R w + l's first
// element in `base` (< 0: absent, zero filled). Two lanes share a row, each
// taking every other 16-byte chunk, so a warp instruction reads 16 rows x 32
// contiguous bytes (whole sectors); lane l copies rows R w + rp + 16 p (p <
// R / 16; rp = rows_conflict_free16(l / 2), a permutation of 0..15), which
// have the same row % 8, so the swizzled chunk offsets are the same four
// values for each and every copy is an add and the cp.async (the row, panel
// and pass are immediates).
// FULL: the head fills the padded head (no column to zero-fill), so whether
// a chunk is copied is the row's, fixed per pass. An absent row's copies
// (ignore-src) read nothing; their source address is formed but not used.
// cs: elements from one 16-byte chunk of a row to the next (8 for contiguous
// rows; block x 8 for vLLM's key cache).
template <class H, int ROWS, bool FULL>
__device__ __forceinline__ void copy_rows_as(uint8_t *tile, const typename H::T *base, int64_t off, int w, int lane,
                                             int head_size, int64_t cs) {
    static_assert(ROWS == 128 || ROWS == 64, "tiles of 128 or 64 rows: four producer warps of 32 or 16");
    constexpr int R = ROWS / 4, J = H::kCPR / 2; // rows per warp, chunk pairs per row
    const int q = lane & 1, rp = rows_conflict_free16(lane >> 1), x = rp & 7;
    uint8_t *d0 = tile + (R * w + rp) * 128;
#pragma unroll
    for (int p = 0; p < R / 16; p++) {
        const int64_t ro = __shfl_sync(0xffffffffu, off, rp + 16 * p);
        const typename H::T *src = base + (ro >= 0 ? ro : 0) + q * cs;
        const bool row = ro >= 0;
#pragma unroll
        for (int j = 0; j < J; j++) {
            const bool copy = row && (FULL || (2 * j + q) * 8 < head_size);
            uint8_t *dst = d0 + p * 16 * 128 + (j >> 2) * ROWS * 128 + (((2 * (j & 3) + q) ^ x) << 4);
            pa::ptx::cp_async16_or_zero(dst, src, copy);
            src += 2 * cs; // an immediate offset when cs is a constant; else one add, nothing to hoist
        }
    }
}
template <class H, int ROWS = H::BN>
__device__ __forceinline__ void copy_rows(uint8_t *tile, const typename H::T *base, int64_t off, int w, int lane,
                                          int head_size, int64_t cs = 8) {
    if (head_size >= H::HP)
        copy_rows_as<H, ROWS, true>(tile, base, off, w, lane, head_size, cs);
    else
        copy_rows_as<H, ROWS, false>(tile, base, off, w, lane, head_size, cs);
}

// vLLM's value cache: where cache key kc's values begin (row d = 0 of its
// block, through the block table), or 0 from end on (nothing is read there).
__device__ __forceinline__ int64_t vt_key_offset(const pa_prefill_kparams &p, int s, int kvh, int kc, int end) {
    int64_t ko, vo;
    pa_prefill::key_row_offsets(p, s, kvh, 0, kc, end, true, 0, 0, ko, vo);
    return vo >= 0 ? vo : 0;
}

// A V^T tile of vLLM's value cache [blocks, heads, head, block] for the keys
// [ks, min(ks + 128, end)): rows d (HP of them, zeros from head_size on), the
// keys along them in two 64-key panels; the 16-byte chunk c of row d (keys
// 8 c.. 8 c + 7, of one block: ks is a multiple of 16 and the block size of 8)
// at chunk (c % 8) ^ (d % 8) of row d of panel c / 8, which is how wgmma reads
// a K-major B operand (pa::ptx::twin::wgmma_addr). Thread (w, lane) copies
// chunk column c = lane % 16 of rows d = 2 w + lane / 16 + 8 i: one
// block-table lookup per tile, one swizzled chunk position for all its rows,
// and each copy an add (d x block) and the cp.async. A chunk that crosses end
// copies its keys in range and zero-fills the rest (a padded page's garbage
// must not reach P V: 0 x NaN is NaN).
template <class H>
__device__ __forceinline__ void copy_vt(uint8_t *tile, const typename H::T *base, const pa_prefill_kparams &p, int s,
                                        int kvh, int ks, int end, int w, int lane, int head_size) {
    static_assert(H::BN == 128 || !H::kVt, "V^T tiles of 128 keys: two 64-key panels");
    const int c = lane & 15, dr = 2 * w + (lane >> 4), kc = ks + 8 * c;
    const int n = min(8, end - kc);
    const int64_t off = vt_key_offset(p, s, kvh, kc, end);
    const int bytes = n > 0 ? 2 * n : 0;
    const int64_t step = 8 * (int64_t)p.g.block_size; // 8 rows on
    const typename H::T *src = base + off + dr * (int64_t)p.g.block_size;
    uint8_t *dst = tile + (c >> 3) * (H::HP * 128) + dr * 128 + (((c & 7) ^ dr) << 4);
    // Rows past the head copy nothing (src-size 0: the address is not read).
    // Not unrolled further: ptxas would hoist every row's offset out of the
    // tile loop and spill them under the producer's 56 registers.
#pragma unroll 4
    for (int i = 0; i < H::HP / 8; i++) {
        pa::ptx::cp_async(dst, src, 16, dr + 8 * i < head_size ? bytes : 0);
        src += step;
        dst += 1024;
    }
}

// ---- fp8 cache tiles (kFlashFp8, kVllmFp8) ------------------------------------
// Each producer thread copies raw 16-byte chunks (16 fp8 elements) into
// staging slots of its own, (k x 128 + thread) x 16 bytes for its k-th chunk
// (a warp's 32 slots are 512 contiguous bytes: no bank conflicts), waits for
// them with cp.async.wait_group, and converts exactly those chunks: no thread
// reads another's copies, so no barrier is needed between copy and
// conversion. A chunk becomes two 16-byte chunks of the tile, in the same
// swizzled layout copy_rows and copy_vt write. Absent rows and columns are
// zero-filled raw bytes, which convert to zeros.

// 16 fp8 elements (e4m3, or e5m2 with E5M2) to 16 elements of DT, times s
// when SCALE.
template <int DT, bool E5M2, bool SCALE>
__device__ __forceinline__ void cvt16(const uint4 v, float sc, uint4 &lo, uint4 &hi) {
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    uint32_t o[8];
#pragma unroll
    for (int e = 0; e < 8; e++)
        o[e] = pa::tile::fp8x2_to<DT, E5M2, SCALE>(w[e >> 1] >> (16 * (e & 1)), sc);
    lo = make_uint4(o[0], o[1], o[2], o[3]);
    hi = make_uint4(o[4], o[5], o[6], o[7]);
}

// Raw rows (K of either layout, V of the flash one): the rows and lanes of
// copy_rows_as, two lanes per row taking every other raw chunk; cs: bytes
// from one raw chunk of a row to the next (16, or block x 16 for vLLM's key
// cache). Rows start 16-byte aligned (the host's cp.async rule), but a head
// of an odd multiple of 8 (a flash cache with padded strides) ends mid-chunk:
// that chunk copies its 8 bytes and zero-fills the rest, since the padding
// may hold anything and 0 x NaN in Q K^T is NaN.
//
// The staging slot of row R = B w + 16 p + rows_conflict_free8(l / 2) (B =
// BN / 4 rows a warp: 32 in two passes p, or 16 in one at HP 256), raw
// chunk C = 2 j + l % 2 (tid = 32 w + l), in 16-byte units: (p J + j) x 128
// + tid, where convert_rows reads each thread's own slots back (the 16-bit
// path). The FP8 path's vt_from_rows gathers one chunk of 8 rows 16 apart (R
// / 16 = 2 w + p = 0..7) a quarter warp, all 8 in 2 bank groups that way (4
// wavefronts, not 1); its slots are (p J + j) x 128 + 2 p + (tid ^ key(w)),
// key(w) = bit 0 of w at bit 0 and bit 1 of w at bit 2, which puts them in 8
// (scripts/hopper_banks.py). Neither costs the copy a register (the key is
// the thread's own, 2 p an immediate), and neither touches bits 1 and 4, which
// vt_from_rows' keys step through. 2 p: 32 bytes of padding in each buffer.
// The 16-bit path keeps the plain slots: its producer is at its 56 registers.
template <class H> __device__ __forceinline__ int raw_slot(int p, int j, int tid) {
    constexpr int J = H::HP / 32;
    const int w = tid >> 5;
    return H::kF8 ? (p * J + j) * 128 + 2 * p + (tid ^ ((w & 1) | ((w & 2) << 1))) : (p * J + j) * 128 + tid;
}
template <class H>
__device__ __forceinline__ void copy_raw_rows(uint8_t *raw, const uint8_t *base, int64_t off, int w, int lane,
                                              int head_size, int64_t cs) {
    constexpr int J = H::HP / 32; // raw chunks per lane and row
    const int q = lane & 1, rp = rows_conflict_free8(lane >> 1), tid = 32 * w + lane;
#pragma unroll
    for (int p = 0; p < H::BN / 64; p++) {
        const int64_t ro = __shfl_sync(0xffffffffu, off, rp + 16 * p);
        const uint8_t *src = base + (ro >= 0 ? ro : 0) + q * cs;
        const bool row = ro >= 0;
#pragma unroll
        for (int j = 0; j < J; j++) {
            const int left = head_size - (2 * j + q) * 16;
            pa::ptx::cp_async(raw + raw_slot<H>(p, j, tid) * 16, src, 16, row && left > 0 ? min(left, 16) : 0);
            src += 2 * cs;
        }
    }
}
template <class H, bool E5M2, bool SCALE>
__device__ __forceinline__ void convert_rows(uint8_t *tile, const uint8_t *raw, int w, int lane, float sc) {
    constexpr int J = H::HP / 32, R = H::BN / 4; // raw chunks per lane and row; rows per warp
    const int q = lane & 1, rp = rows_conflict_free8(lane >> 1), x = rp & 7, tid = 32 * w + lane;
#pragma unroll
    for (int p = 0; p < R / 16; p++)
#pragma unroll
        for (int j = 0; j < J; j++) {
            uint4 lo, hi;
            cvt16<H::kDT, E5M2, SCALE>(*reinterpret_cast<const uint4 *>(raw + raw_slot<H>(p, j, tid) * 16), sc, lo, hi);
            const int c = 4 * j + 2 * q; // the first of its two 16-bit chunks in the row
            uint8_t *row = tile + (R * w + rp + 16 * p) * 128 + (c >> 3) * (H::BN * 128);
            *reinterpret_cast<uint4 *>(row + (((c & 7) ^ x) << 4)) = lo;
            *reinterpret_cast<uint4 *>(row + ((((c + 1) & 7) ^ x) << 4)) = hi;
        }
}

// Raw V^T (vLLM's fp8 value cache): raw chunk c holds keys 16 c.. 16 c + 15
// of one block (the block size is a multiple of 16), rows d = 4 w + r + 16 i;
// a chunk that crosses end is zero-filled past it. Lane l takes c = l % 4 +
// 4 (l / 16) and r = (l / 4) % 4, so a phase of 8 lanes converts chunks 0..3
// (one panel) of two rows whose swizzles differ in the low bit: its stores
// hit 8 distinct bank groups (with c = l % 8 and one row, panels 0 and 1
// collide; scripts/hopper_banks.py).
// The FP8 path (H::kF8) writes e4m3 chunks as they stand, one per raw chunk:
// there lane l takes c = l % 8 and r = l / 8, so a phase of 8 lanes is one
// row's 8 chunks, whose swizzled places are all distinct.
template <class H> __device__ __forceinline__ int vt_chunk8(int lane) {
    return H::kF8 ? (lane & 7) : (lane & 3) | ((lane >> 4) << 2);
}
template <class H> __device__ __forceinline__ int vt_row8(int lane) { return H::kF8 ? lane >> 3 : (lane >> 2) & 3; }
template <class H>
__device__ __forceinline__ void copy_raw_vt(uint8_t *raw, const uint8_t *base, const pa_prefill_kparams &p, int s,
                                            int kvh, int ks, int end, int w, int lane, int head_size) {
    const int c = vt_chunk8<H>(lane), dr = 4 * w + vt_row8<H>(lane), kc = ks + 16 * c, tid = 32 * w + lane;
    const int n = min(16, end - kc);
    const int64_t off = vt_key_offset(p, s, kvh, kc, end);
    const int bytes = n > 0 ? n : 0;
    const int64_t step = 16 * (int64_t)p.g.block_size;
    const uint8_t *src = base + off + dr * (int64_t)p.g.block_size;
#pragma unroll 4
    for (int i = 0; i < H::HP / 16; i++) {
        pa::ptx::cp_async(raw + (i * 128 + tid) * 16, src, 16, dr + 16 * i < head_size ? bytes : 0);
        src += step;
    }
}
template <class H, bool E5M2>
__device__ __forceinline__ void convert_vt(uint8_t *tile, const uint8_t *raw, int w, int lane, float sc) {
    const int c = vt_chunk8<H>(lane), dr = 4 * w + vt_row8<H>(lane), x = dr & 7, tid = 32 * w + lane, c0 = (2 * c) & 7;
    uint8_t *row = tile + (c >> 2) * (H::HP * 128) + dr * 128;
#pragma unroll
    for (int i = 0; i < H::HP / 16; i++) {
        uint4 lo, hi;
        cvt16<H::kDT, E5M2, true>(*reinterpret_cast<const uint4 *>(raw + (i * 128 + tid) * 16), sc, lo, hi);
        *reinterpret_cast<uint4 *>(row + i * 2048 + ((c0 ^ x) << 4)) = lo;
        *reinterpret_cast<uint4 *>(row + i * 2048 + (((c0 + 1) ^ x) << 4)) = hi;
    }
}

// ---- the FP8 path (H::kF8) -----------------------------------------------------
// e4m3 tiles, K-major with the 128-byte swizzle: byte k of row r at
// r x 128 + ((k / 16) ^ (r % 8)) x 16 + k % 16. Q and K: rows of the head.
// V^T: rows d of 128 keys, where the byte at key column k holds
// V[16 (k / 16) + f8_key(k % 16)][d]. The permutation is what lets P go from
// the Q K^T accumulators straight into the P V wgmma's A registers: lane
// (g, c)'s accumulators of n8 blocks 4kk and 4kk + 1, row g, are keys 2c, 2c+1,
// 8+2c, 9+2c of the 32 keys at 32 kk, and the register a0 of the k32 step kk
// is columns 4c..4c+3 (ptx.cuh). FlashAttention-3 permutes the P registers
// across the quad instead (byte permutes and shuffles); here the producer's
// transpose, which V needs anyway, places the keys, and P costs nothing but
// its conversion.
__device__ __forceinline__ int f8_key(int k) { return 2 * (k >> 2) + (k & 1) + 8 * ((k >> 1) & 1); }

// Four floats to four e4m3 bytes (a the lowest), rounded and saturated.
__device__ __forceinline__ uint32_t e4m3x4(float a, float b, float c, float d) {
    return pa::tile::e4m3x2(a, b) | (pa::tile::e4m3x2(c, d) << 16);
}
// 1 / s for an fp8 cache's scale s (finite, > 0), the factor new keys and
// values are quantised with: a scale past 2^126 takes its quotient at a
// quarter (__fdividef gives 0 there; 1 / s is then subnormal, 2^-128..2^-126),
// one under 2^-126 counts as 2^-126 (so the factor is at most 2^126, and a
// zero element's product 0, not NaN).
__device__ __forceinline__ float scale_recip(float s) {
    return s > 0x1p126f ? 0.25f * __fdividef(1.0f, 0.25f * s) : __fdividef(1.0f, fmaxf(s, 0x1p-126f));
}
// 8 elements of DT times `mul`, to 8 e4m3 bytes.
template <int DT> __device__ __forceinline__ uint2 quant8(const uint4 v, float mul) {
    const float2 a = pa::tile::unpack2<DT>(v.x), b = pa::tile::unpack2<DT>(v.y);
    const float2 c = pa::tile::unpack2<DT>(v.z), d = pa::tile::unpack2<DT>(v.w);
    return make_uint2(e4m3x4(a.x * mul, a.y * mul, b.x * mul, b.y * mul),
                      e4m3x4(c.x * mul, c.y * mul, d.x * mul, d.y * mul));
}
// 16 elements of DT (lo: the first 8) times `mul`, to 16 e4m3 bytes.
template <int DT> __device__ __forceinline__ uint4 quant16(const uint4 lo, const uint4 hi, float mul) {
    const uint2 a = quant8<DT>(lo, mul), b = quant8<DT>(hi, mul);
    return make_uint4(a.x, a.y, b.x, b.y);
}

// K rows of the cache (e4m3, as they stand) into a K tile: copy_rows_as's
// rows and lanes, two lanes per row taking every other 16-byte chunk (8 per
// row). cs: bytes from one chunk of a row to the next (16, or block x 16 for
// vLLM's key cache). A chunk that crosses the head copies its part and
// zero-fills the rest (the padding may hold NaN; 0 x NaN is NaN).
template <class H>
__device__ __forceinline__ void copy_rows8(uint8_t *tile, const uint8_t *base, int64_t off, int w, int lane,
                                           int head_size, int64_t cs) {
    const int q = lane & 1, rp = rows_conflict_free16(lane >> 1), x = rp & 7;
    uint8_t *d0 = tile + (32 * w + rp) * 128;
#pragma unroll
    for (int p = 0; p < 2; p++) {
        const int64_t ro = __shfl_sync(0xffffffffu, off, rp + 16 * p);
        const uint8_t *src = base + (ro >= 0 ? ro : 0) + q * cs;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int left = head_size - (2 * j + q) * 16;
            pa::ptx::cp_async(d0 + p * 16 * 128 + (((2 * j + q) ^ x) << 4), src, 16,
                              ro >= 0 && left > 0 ? min(left, 16) : 0);
            src += 2 * cs;
        }
    }
}
// New keys (DT rows, at off elements; < 0 absent) quantised with `mul` into a
// K tile: the rows and chunks of copy_rows8, each chunk two 16-byte loads.
template <class H>
__device__ __forceinline__ void quant_rows(uint8_t *tile, const typename H::T *base, int64_t off, int w, int lane,
                                           int head_size, float mul) {
    const int q = lane & 1, rp = rows_conflict_free16(lane >> 1), x = rp & 7;
    uint8_t *d0 = tile + (32 * w + rp) * 128;
    const uint4 z = make_uint4(0, 0, 0, 0);
#pragma unroll 1 // one row's loads at a time in the producer's 64 registers
    for (int p = 0; p < 2; p++) {
        const int64_t ro = __shfl_sync(0xffffffffu, off, rp + 16 * p);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int e = (2 * j + q) * 16; // the chunk's first element
            const typename H::T *src = base + (ro >= 0 ? ro : 0) + e;
            const uint4 lo = ro >= 0 && e < head_size ? *reinterpret_cast<const uint4 *>(src) : z;
            const uint4 hi = ro >= 0 && e + 8 < head_size ? *reinterpret_cast<const uint4 *>(src + 8) : z;
            *reinterpret_cast<uint4 *>(d0 + p * 16 * 128 + (((2 * j + q) ^ x) << 4)) = quant16<H::kDT>(lo, hi, mul);
        }
    }
}

// Four keys' 16 bytes of d (r[i]: key f8_key(4 wq + i) of a 16-key chunk kc,
// bytes d0..d0+15 of its row) transposed into the V^T tile: row d0 + b gets
// the four keys' byte b as the word at key column 16 kc + 4 wq. A warp's 32
// lanes take the 32 (kc, wq), in any order, so each 4-byte store of the warp
// hits 32 distinct banks (row d's chunk kc sits at (kc ^ d % 8) x 16). d0 is a
// multiple of 16, so rows d0 + b and d0 + b + 8 share the swizzle b % 8: the
// row's place is `at` (d0 x 128 + 16 kc + 4 wq, plus the tile's offset from
// base, a multiple of 1024) with bits 4-6 XORed by b % 8 (nothing else of `at`
// reaches them), plus b x 128. The tile's offset in `at` keeps ptxas from
// hoisting the eight XORed places out of the tile loop (they change with the
// stage), which would take eight of the producer's 64 registers per call site.
__device__ __forceinline__ void vt_store4(uint8_t *base, const uint4 (&r)[4], uint32_t at) {
    const uint32_t a[4] = {r[0].x, r[0].y, r[0].z, r[0].w}, b[4] = {r[1].x, r[1].y, r[1].z, r[1].w};
    const uint32_t c[4] = {r[2].x, r[2].y, r[2].z, r[2].w}, e[4] = {r[3].x, r[3].y, r[3].z, r[3].w};
    uint32_t out[16]; // out[b]: row d0 + b
#pragma unroll
    for (int x = 0; x < 4; x++) {
        using pa::tile::prmt;
        const uint32_t ab01 = prmt(a[x], b[x], 0x5140), ce01 = prmt(c[x], e[x], 0x5140);
        const uint32_t ab23 = prmt(a[x], b[x], 0x7362), ce23 = prmt(c[x], e[x], 0x7362);
        out[4 * x] = prmt(ab01, ce01, 0x5410);
        out[4 * x + 1] = prmt(ab01, ce01, 0x7632);
        out[4 * x + 2] = prmt(ab23, ce23, 0x5410);
        out[4 * x + 3] = prmt(ab23, ce23, 0x7632);
    }
#pragma unroll
    for (int sw = 0; sw < 8; sw++) {
        uint8_t *row = base + (at ^ ((uint32_t)sw << 4));
        *reinterpret_cast<uint32_t *>(row + sw * 128) = out[sw];
        *reinterpret_cast<uint32_t *>(row + (sw + 8) * 128) = out[sw + 8];
    }
}
// The V^T tile from raw V rows of a flash cache in staging (copy_raw_rows's
// slots, raw_slot: row R, chunk C at (p J + j) x 128 + 2 p + (tid ^ key(w'))
// with R = 32 w' + 16 p + rows_conflict_free8(l / 2) (its own inverse), C =
// 2 j + l % 2, tid = 32 w' + l). Warp w takes the 16-byte d chunks w and w + 4.
// The slots are other threads' copies: the caller synchronises the producers
// first. Lanes take (kc, wq) = (l % 8, l / 8), so each quarter warp reads one
// chunk of 8 rows 16 apart, which raw_slot spreads over the 8 bank groups
// (vt_store4 takes any assignment of the 32 (kc, wq)).
template <class H>
__device__ __forceinline__ void vt_from_rows(uint8_t *base, uint32_t vt, const uint8_t *raw, int w, int lane) {
    constexpr int J = H::HP / 32;
    static_assert(J == 4, "the FP8 path's rows: 128 bytes, two lanes of four chunks each");
    const int kc = lane & 7, wq = lane >> 3;
    // Key i of the lane is R = 16 kc + f8_key(4 wq + i) = 16 kc + 2 wq + (i & 1) + 8 (i >> 1): warp
    // w' = R / 32 = kc / 2, pass p = kc % 2, and rows_conflict_free8 (bits 1 and 2 swapped) of R % 16
    // moves wq's bits and leaves i's, so key i's l is key 0's plus 2 (i & 1) + 16 (i >> 1); d chunk
    // dc = w + 4 h is j = w / 2 + 2 h, q = w % 2: h = 1 is 2 x 128 x 16 bytes on. raw_slot's key
    // (bits 0 and 2) and key 0's tid leave bits 1 and 4 alone, so key i's unit is key 0's plus
    // 2 (i & 1) + 16 (i >> 1).
    const int tid0 = 32 * (kc >> 1) + 4 * (wq >> 1) + 8 * (wq & 1) + (w & 1);
    const uint8_t *slot = raw + raw_slot<H>(kc & 1, w >> 1, tid0) * 16;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        uint4 r[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            r[i] = *reinterpret_cast<const uint4 *>(slot + h * 4096 + (2 * (i & 1) + 16 * (i >> 1)) * 16);
        vt_store4(base, r, vt + (uint32_t)(16 * (w + 4 * h)) * 128u + 16u * kc + 4u * wq);
    }
}
// The V^T tile from new values (DT rows of the packed source, vo(key) their
// offsets, < 0 absent) quantised with `mul`: vt_from_rows's work split, each
// key's 16 elements two 16-byte loads.
template <class H, class RowOff>
__device__ __forceinline__ void vt_from_new(uint8_t *sbase, uint32_t vt, const typename H::T *base, const RowOff &vo,
                                            int w, int lane, int head_size, float mul) {
    const int kc = lane >> 2, wq = lane & 3;
    const uint4 z = make_uint4(0, 0, 0, 0);
    // Rolled, and each key's two halves converted as they arrive: the
    // producer's 64 registers hold one d chunk's loads at a time.
#pragma unroll 1
    for (int h = 0; h < 2; h++) {
        const int dc = w + 4 * h, e = 16 * dc;
        uint4 r[4];
#pragma unroll
        for (int half = 0; half < 2; half++) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int64_t off = vo(16 * kc + f8_key(4 * wq + i));
                const uint4 v = off >= 0 && e + 8 * half < head_size
                                    ? *reinterpret_cast<const uint4 *>(base + off + e + 8 * half)
                                    : z;
                const uint2 q = quant8<H::kDT>(v, mul);
                if (half == 0) {
                    r[i].x = q.x;
                    r[i].y = q.y;
                } else {
                    r[i].z = q.x;
                    r[i].w = q.y;
                }
            }
        }
        vt_store4(sbase, r, vt + (uint32_t)e * 128u + 16u * kc + 4u * wq);
    }
}
// The V^T tile from vLLM's value cache in staging (copy_raw_vt's own slots:
// chunk c = l % 8 of rows d = 4 w + l / 8 + 16 i): each chunk's 16 keys
// permuted by f8_key and stored as they are. Output word m holds keys 2m,
// 2m+1, 8+2m, 9+2m: halves of raw words m / 2 and 2 + m / 2.
template <class H> __device__ __forceinline__ void vt_permute(uint8_t *vt, const uint8_t *raw, int w, int lane) {
    const int c = vt_chunk8<H>(lane), dr = 4 * w + vt_row8<H>(lane), tid = 32 * w + lane;
#pragma unroll
    for (int i = 0; i < H::HP / 16; i++) {
        using pa::tile::prmt;
        const uint4 v = *reinterpret_cast<const uint4 *>(raw + (i * 128 + tid) * 16);
        const uint4 o =
            make_uint4(prmt(v.x, v.z, 0x5410), prmt(v.x, v.z, 0x7632), prmt(v.y, v.w, 0x5410), prmt(v.y, v.w, 0x7632));
        const int d = dr + 16 * i;
        *reinterpret_cast<uint4 *>(vt + d * 128 + ((c ^ (d & 7)) << 4)) = o;
    }
}

// Descriptors (pa::ptx::twin::wgmma_desc): 128-byte swizzle, 8-row groups
// 1024 bytes apart (SBO); for V read N-major the 64-element panels are LBO =
// 128 rows x 128 bytes apart (a V^T tile is read K-major, as K is). A k16 step moves the start address, which is
// the descriptor's low field in 16-byte units: adding (bytes >> 4) to a
// descriptor moves it (no carry: shared addresses stay below 2^18), so each
// wgmma costs one 64-bit add of a constant, as CUTLASS's descriptor iterators
// do.
__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo) {
    return pa::ptx::twin::wgmma_desc(addr, lbo, 1024, 128);
}
// LO: the add on the low word only, so all descriptors share one high word.
// ptxas hoists every step's descriptor out of the tile loops; as whole 64-bit
// values, the instances with a second P V loop (V^T tiles) spilled. The
// others keep the 64-bit add, a few instructions per tile fewer.
template <bool LO = false> __device__ __forceinline__ uint64_t desc_at(uint64_t d, uint32_t bytes) {
    if (LO)
        return (d & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)d + (bytes >> 4));
    return d + (uint64_t)(bytes >> 4);
}

// Tile u of the CTA's run through the two-stage ring (u = g + t below): its
// stage's byte offset among a kind's four barriers (off = 8 x (u & 1)) and its
// phase's parity ((u >> 1) & 1); next() is tile u + 1's (the stage flips, the
// phase with it when the stage wraps to 0). A consumer step forms tile t's
// once and takes t + 1's from it, for its two waits, two releases and two
// descriptors; each had derived its own from g + t. (Carried from step to
// step, it cost 5 instructions a tile fewer but two registers, and spilled
// the persistent instances over fp8 caches at HP 128.)
struct RingPos {
    uint32_t off, par;
    static __device__ __forceinline__ RingPos of(uint32_t u) { return RingPos{(u & 1u) << 3, (u >> 1) & 1u}; }
    __device__ __forceinline__ RingPos next() const { return RingPos{off ^ 8u, par ^ (off >> 3)}; }
};

// The key tiles j = 0 .. n - 1 of a segment (tile j's first key base + j BN,
// the segment's end ke) that rows qpos_lo .. qpos_hi see whole: [x, y), empty
// when y <= x. A tile needs masks when the segment ends inside it (ke < ks +
// BN), its last key lies past the first row's far side (ks + BN - 1 > far, far
// = pa_prefill::far_key(causal, window, qpos_lo): a causal row before it, or a non-causal
// window that ends before it), or a window that ends after its first key for
// some row (qpos_hi - ks >= window), ks = base + j BN. The first two hold for
// a suffix of the js, the third for a prefix: what is left is one range.
template <int BN>
__device__ __forceinline__ int2 whole_tiles(int base, int n, int ke, int far, int qpos_hi, int window) {
    static_assert((BN & (BN - 1)) == 0, "whole_tiles: BN a power of 2 (>> is floor division)");
    constexpr int L = __builtin_ctz(BN);
    int y = min(n, (ke - base) >> L);                                            // base + (j + 1) BN <= ke
    if (far < INT_MAX)                                                           // (base >= 0: no overflow)
        y = min(y, (far - base + 1) >> L);                                       // base + j BN + BN - 1 <= far
    const int x = window > 0 ? max(0, ((qpos_hi - base - window) >> L) + 1) : 0; // base + j BN > qpos_hi - window
    return make_int2(x, y);
}

// ---- work items ----------------------------------------------------------------
// An item is what one CTA of the 2026-11-27 grid did: 128 query rows (from m0)
// of sequence s and KV head kvh, against the key tiles of their span. A
// persistent CTA (launch_wgmma) runs items blockIdx.x + G k, k = 0, 1, ...
// (G = gridDim.x): on scripts/hopper_item_overhead.py's causal prompts the
// busiest CTA gets 3% more than the average (the hardware's dynamic order on
// the one-item grid: 0.1-2.4%); alternating the rounds' direction made it 23%
// at b=1 x 16K. With one CTA per item it is the old grid exactly.
struct Item {
    int s, kvh, m0, rows;
    pa_prefill::Seq sq;
    pa_prefill::Span sp;
};
__host__ __device__ __forceinline__ int item_m_tiles(const pa_prefill_kparams &p, int bm) {
    return (int)(((int64_t)p.max_q_len * (p.num_heads / p.num_kv_heads) + bm - 1) / bm);
}
// Item i: query tiles fastest (heaviest, i.e. latest causal rows, first), then
// sequences, then KV heads, as the old grid's x, y and z. False when it has no
// rows to compute (past the last item in a CTA's last round, the sequence's
// lengths are bad, or it is shorter than m0): every role of the CTA skips it
// alike.
template <int BM, int BN>
__device__ __forceinline__ bool item_at(const pa_prefill_kparams &p, int i, int n_items, int m_tiles, Item &it) {
    if (i >= n_items)
        return false;
    const int r = i / m_tiles;
    it.s = r % p.num_seqs;
    it.kvh = r / p.num_seqs;
    it.m0 = (m_tiles - 1 - (i - r * m_tiles)) * BM;
    if (!pa_prefill::load_seq(p, it.s, it.sq))
        return false;
    const int group = p.num_heads / p.num_kv_heads;
    it.rows = it.sq.q_len * group;
    if (it.m0 >= it.rows)
        return false;
    it.sp = pa_prefill::key_span<BM, BN>(p, it.sq, it.m0, group);
    return true;
}
// This CTA's item of round k (k = 0, 1, ...), or -1 past the last round (in
// the last round it may lie past the last item: item_at skips it). The
// launcher keeps n_items + gridDim.x within int.
__device__ __forceinline__ int item_index(int k, int n_items) {
    const int base = k * (int)gridDim.x;
    return base < n_items ? base + (int)blockIdx.x : -1;
}

// PERSIST: the CTA runs items in rounds (item_index); without it each CTA
// runs item blockIdx.x and no loop surrounds the tile loops (the grid the
// H100 measured, and the default launch). The two are separate instances; with
// the warpgroup index warp-uniform (cw below) their consumer tiles cost 558 and
// 547 warp instructions at head 128 (budget-notes/hopper-uniform-cw-2026-11-28.md).
template <class H, bool PERSIST>
__global__ void __launch_bounds__(384, 1) prefill_wgmma_kernel(const pa_prefill_kparams p) {
#if PA_WGMMA_OK || defined(PA_INTERPRET)
    using T = typename H::T;
    using SC = typename H::SC;
    constexpr int BM = H::BM, BN = H::BN, HP = H::HP, DT = H::kDT;
    PA_DYNAMIC_SMEM(unsigned char, smem_raw);
    // bar_q: an item's Q has landed (16-bit paths) and its verdict is in
    // item_ok; bar_q_empty: the consumers are done with the item's Q (and
    // verdict), so the producer may start the next.
    PA_STATIC_SMEM(bar_q, uint64_t);
    PA_STATIC_SMEM(bar_q_empty, uint64_t);
    // Per stage, K and V apart (as FA3's two pipelines): a K stage is free once
    // its Q K^T is done, long before the P V that reads its V. One array (stage
    // st's full K at kFullK + st, and so on), so each role holds one address
    // for all eight (pa::ptx::MBar).
    PA_STATIC_SMEM(ring, uint64_t[8]);
    // Per item (by the parity of its number nq among the CTA's items): whether
    // its block ids are all in range, and each producer warp's finding.
    PA_STATIC_SMEM(item_ok, int[2]);
    PA_STATIC_SMEM(bad_w, int[2][4]);

    const int group = p.num_heads / p.num_kv_heads;
    // The work items' count (< 2^31 - gridDim.x: launch_wgmma), formed by each
    // role for itself: one count for both, live across the roles' setmaxnreg,
    // was spilled in the persistent instances over fp8 caches at HP 128.
    auto items = [&](int &m_tiles) {
        m_tiles = item_m_tiles(p, BM);
        return m_tiles * p.num_seqs * p.num_kv_heads;
    };

    // The tiles on a 1024-byte boundary of the shared window.
    const uint32_t win0 = pa::ptx::smem_window_addr(smem_raw);
    uint8_t *smem = smem_raw + ((1024u - (win0 & 1023u)) & 1023u);
    const uint32_t win = pa::ptx::smem_window_addr(smem);
    uint8_t *q_tile = smem;
    auto k_tile = [&](int st) { return smem + H::q_bytes + (uint32_t)st * H::stage_bytes; };
    auto v_tile = [&](int st) { return smem + H::q_bytes + (uint32_t)st * H::stage_bytes + H::kv_bytes; };

    if (threadIdx.x == 0) {
        pa::ptx::mbar_init(&bar_q, 129);     // every producer thread's (Q's copies), and thread 0's verdict
        pa::ptx::mbar_init(&bar_q_empty, 8); // every consumer warp
        for (int i = 0; i < 2; i++) {
            pa::ptx::mbar_init(&ring[kFullK + i], 128); // every producer thread, when its copies land
            pa::ptx::mbar_init(&ring[kFullV + i], 128);
            pa::ptx::mbar_init(&ring[kEmptyK + i], 8); // every consumer warp, when done with the stage
            pa::ptx::mbar_init(&ring[kEmptyV + i], 8);
        }
    }
    if constexpr (H::kF8) {
        // The rows of ones after each stage's V^T (e4m3 1.0 is 0x38), 2 x 1024
        // bytes, written once by the first 128 threads; the fence and the
        // barrier order them before any wgmma reads them.
        if (threadIdx.x < 128) {
            *reinterpret_cast<uint4 *>(v_tile(threadIdx.x >> 6) + H::kv_bytes + (threadIdx.x & 63) * 16) =
                make_uint4(0x38383838u, 0x38383838u, 0x38383838u, 0x38383838u);
            pa::ptx::fence_proxy_async();
        }
    }
    __syncthreads();

    const int wg = threadIdx.x / 128, w = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    // The ring's barriers by stage, from the address each role forms once
    // (rb, in its own registers: see pa::ptx::MBar); the producer's by stage
    // index (rb.at(kFullK + st) and so on), the consumers' by RingPos. (One
    // form for both spilled or cost more, 2026-11-28: a RingPos of the stage
    // index with next() spilled 4 bytes in the persistent instances over
    // flash fp8 caches at HP 128, and with t + 1's formed from g + t + 1 it
    // cost 5 warp instructions a consumer tile; the producer addressing its
    // barriers through RingPos::of spilled the same instances.)
    pa::ptx::MBar rb;
    auto full_k = [&](RingPos r) { return rb.at(kFullK).plus(r.off); };
    auto full_v = [&](RingPos r) { return rb.at(kFullV).plus(r.off); };
    auto empty_k = [&](RingPos r) { return rb.at(kEmptyK).plus(r.off); };
    auto empty_v = [&](RingPos r) { return rb.at(kEmptyV).plus(r.off); };
    if (wg == 0) {
        // ---- producer ------------------------------------------------------------
        pa::ptx::setmaxnreg_dec<H::kProducerRegs>();
        rb = pa::ptx::mbar_ref_warp(ring);
        // (Bounded at HP 256 over fp8 caches, as the consumers' below: unbounded,
        // its sign word was kept in a uniform register there and spilled.)
        const int hs = HP == 256 && H::kFp8 ? min(max(p.head_size, 1), HP) : p.head_size;
        int m_tiles;
        const int n_items = items(m_tiles);
        // The ring's tiles run on across the CTA's items: tile t of an item is
        // the CTA's tile g + t (stage (g + t) & 1, phase ((g + t) >> 1) & 1;
        // 32 bits, which wrap keeping both). A stage's `empty` barrier is waited
        // for from the CTA's third tile on (primed once g >= 2).
        uint32_t g = 0;
        bool primed = false;
        int nq = 0; // the CTA's items so far (bar_q's and bar_q_empty's phases)
        Item it;
        // (The consumers' loop has the same head; one helper holding it spilled
        // the fp8 producers at 56 registers.)
        for (int k = 0; PERSIST || k < 1; k++) {
            const int item = item_index(k, n_items);
            if (item < 0)
                break;
            if (!item_at<BM, BN>(p, item, n_items, m_tiles, it))
                continue;
            const int s = it.s, kvh = it.kvh, m0 = it.m0, rows = it.rows;
            const pa_prefill::Seq &sq = it.sq;
            const int k_end = it.sp.k_end, k_begin = it.sp.k_begin, c_end = it.sp.c_end, nt_c = it.sp.nt_c;
            const int p_begin = it.sp.p_begin, n_tiles = it.sp.n_tiles;
            auto tile_start = [&](int t) { return t < nt_c ? k_begin + t * BN : p_begin + (t - nt_c) * BN; };
            auto tile_end = [&](int t) { return t < nt_c ? c_end : k_end; };

            // The item's start: once the consumers are done with the last
            // item's Q, its rows' order and (context mode) its block ids are
            // checked (a bad one skips the item, as it skips the CTA of the
            // mma.sync grid), thread 0 publishes the verdict and the 16-bit
            // paths copy Q. bar_q's phase nq completes when Q has landed and
            // the verdict is written. The check's barrier also tells every
            // producer thread that all are done with the last item's staging
            // buffers (the FP8 path's raw V is read across threads; that path
            // is context mode only).
            if (nq > 0)
                pa::ptx::mbar_wait(&bar_q_empty, (nq - 1) & 1);
            // pa_prefill::seq_ok over the producers: the item's rows after every
            // earlier sequence's and (context mode) its block ids in range.
            int bad = pa_prefill::seq_bad_share<128>(p, s, sq);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                bad |= __shfl_xor_sync(0xffffffffu, bad, o);
            if (lane == 0)
                bad_w[nq & 1][w] = bad;
            pa::ptx::named_sync(1, 128);
            const int *bw = bad_w[nq & 1];
            const bool ok = !(bw[0] | bw[1] | bw[2] | bw[3]);
            if (!H::kF8 && ok && n_tiles > 0) {
                const int r = 32 * w + lane, gr = m0 + r;
                int64_t off = -1;
                if (gr < rows) {
                    const int tok = gr / group, head = kvh * group + gr % group;
                    off = (int64_t)(sq.q0 + tok) * p.q_stride + (int64_t)head * hs;
                }
                copy_rows<H, BM>(q_tile, static_cast<const T *>(p.query), off, w, lane, hs);
                pa::ptx::mbar_cp_arrive(&bar_q);
            } else {
                pa::ptx::mbar_arrive(&bar_q);
            }
            if (threadIdx.x == 0) {
                item_ok[nq & 1] = ok ? 1 : 0;
                pa::ptx::mbar_arrive(&bar_q);
            }
            nq++;
            if (!ok)
                continue;

            if constexpr (H::kF8) {
                // Per tile t (stage st): K; then, once every producer's raw V of t
                // has landed (and all are done with the staging buffer t + 1 will
                // use), the raw V of t + 1 is issued and V^T of t built under it.
                // The sources and scales are read from the parameters where they are
                // used (constant memory), not held: the producer has 64 registers.
                uint8_t *raw0 = smem + H::q_bytes + 2 * H::stage_bytes;
                auto raw_v = [&](int t) { return raw0 + (uint32_t)(t & 1) * H::raw_bytes; };
                auto issue_raw_v = [&](int t) {
                    const uint8_t *v8 = static_cast<const uint8_t *>(p.value_cache);
                    if (H::kVt) {
                        copy_raw_vt<H>(raw_v(t), v8, p, s, kvh, tile_start(t), tile_end(t), w, lane, hs);
                    } else {
                        int64_t ko, vo;
                        pa_prefill::key_row_offsets(p, s, kvh, hs, tile_start(t) + 32 * w + lane, tile_end(t), true,
                                                    sq.k_row0, sq.n_cache, ko, vo);
                        copy_raw_rows<H>(raw_v(t), v8, vo, w, lane, hs, 16);
                    }
                    pa::tile::cp_async_commit();
                };
                if (nt_c > 0)
                    issue_raw_v(0);
                for (int t = 0; t < n_tiles; t++) {
                    const uint32_t gt = g + (uint32_t)t;
                    const int st = (int)(gt & 1u), ph = (int)(((gt >> 1) + 1u) & 1u);
                    const bool wait_empty = primed || gt >= 2u;
                    const bool cache = t < nt_c;
                    int64_t ko, vo;
                    pa_prefill::key_row_offsets(p, s, kvh, hs, tile_start(t) + 32 * w + lane, tile_end(t), cache,
                                                sq.k_row0, sq.n_cache, ko, vo);
                    if (wait_empty)
                        pa::ptx::mbar_wait(rb.at(kEmptyK + st), ph);
                    if (cache) {
                        copy_rows8<H>(k_tile(st), static_cast<const uint8_t *>(p.key_cache), ko, w, lane, hs,
                                      H::kVt ? (int64_t)p.g.block_size * 16 : 16);
                        pa::ptx::mbar_cp_arrive(rb.at(kFullK + st));
                        pa::tile::cp_async_wait<0>(); // this thread's raw V of t (and K) landed
                        pa::ptx::named_sync(1, 128);  // every producer's; staging (t + 1) & 1 is free
                        if (t + 1 < nt_c)
                            issue_raw_v(t + 1);
                    } else {
                        quant_rows<H>(k_tile(st), static_cast<const T *>(p.key_new), ko, w, lane, hs,
                                      scale_recip(p.k_scale ? p.k_scale[kvh * p.scale_hs] : 1.0f));
                        pa::ptx::fence_proxy_async();
                        pa::ptx::mbar_arrive(rb.at(kFullK + st));
                    }
                    if (wait_empty)
                        pa::ptx::mbar_wait(rb.at(kEmptyV + st), ph);
                    if (cache && H::kVt) {
                        vt_permute<H>(v_tile(st), raw_v(t), w, lane);
                    } else if (cache) {
                        vt_from_rows<H>(smem, (uint32_t)(v_tile(st) - smem), raw_v(t), w, lane);
                    } else {
                        const int ks = tile_start(t), ke = tile_end(t);
                        vt_from_new<H>(
                            smem, (uint32_t)(v_tile(st) - smem), static_cast<const T *>(p.value_new),
                            [&](int kk) {
                                return ks + kk < ke
                                           ? (sq.k_row0 + (ks + kk - sq.n_cache)) * p.v_stride + (int64_t)kvh * hs
                                           : (int64_t)-1;
                            },
                            w, lane, hs, scale_recip(p.v_scale ? p.v_scale[kvh * p.scale_hs] : 1.0f));
                    }
                    pa::ptx::fence_proxy_async();
                    pa::ptx::mbar_arrive(rb.at(kFullV + st));
                }
            } else {
                const T *kc = static_cast<const T *>(p.key_cache), *vc = static_cast<const T *>(p.value_cache);
                const T *kn = static_cast<const T *>(p.key_new), *vn = static_cast<const T *>(p.value_new);
                // fp8 cache tiles: raw tile t in staging buffer t & 1, copied a tile
                // ahead of its conversion (one cp.async group per tile). One pair
                // of buffers (kRawPairs 1, HP 256): raw K and raw V are groups of
                // their own, each refilled with tile t + 1 as soon as tile t's
                // conversion has read it, so K of t + 1 lands under V of t's
                // conversion and V of t + 1 under K of t + 1's.
                constexpr int RB = BN / 4; // rows a producer warp: lane l < RB holds row RB w + l
                uint8_t *raw0 = smem + H::q_bytes + 2 * H::stage_bytes;
                auto raw_k = [&](int t) {
                    return raw0 + (H::kRawPairs == 2 ? (uint32_t)(t & 1) * 2u * H::raw_bytes : 0u);
                };
                auto raw_v = [&](int t) {
                    return raw0 + (H::kRawPairs == 2 ? (uint32_t)(t & 1) * 2u * H::raw_bytes : 0u) + H::raw_bytes;
                };
                // Cache tile t's K and V row offsets for this lane's row (RB w +
                // lane; none past the warp's RB rows).
                auto raw_offsets = [&](int t, int64_t &ko, int64_t &vo) {
                    const int ke = tile_end(t);
                    pa_prefill::key_row_offsets(p, s, kvh, hs, lane < RB ? tile_start(t) + RB * w + lane : ke, ke, true,
                                                sq.k_row0, sq.n_cache, ko, vo);
                };
                // kRawPairs 1 (HP 256, the flash layout): issue_raw_k(t) leaves
                // tile t's V row offsets in vo_next for issue_raw_v(t).
                int64_t vo_next = -1;
                auto issue_raw_k = [&](int t) {
                    int64_t ko;
                    raw_offsets(t, ko, vo_next);
                    copy_raw_rows<H>(raw_k(t), static_cast<const uint8_t *>(p.key_cache), ko, w, lane, hs, 16);
                    pa::tile::cp_async_commit();
                };
                auto issue_raw_v = [&](int t) {
                    copy_raw_rows<H>(raw_v(t), static_cast<const uint8_t *>(p.value_cache), vo_next, w, lane, hs, 16);
                    pa::tile::cp_async_commit();
                };
                auto issue_raw = [&](int t) { // kRawPairs 2: RB rows a warp (32 at 128 keys, 16 at HP 192's 64)
                    const uint8_t *k8 = static_cast<const uint8_t *>(p.key_cache);
                    const uint8_t *v8 = static_cast<const uint8_t *>(p.value_cache);
                    int64_t ko, vo;
                    raw_offsets(t, ko, vo);
                    copy_raw_rows<H>(raw_k(t), k8, ko, w, lane, hs, H::kVt ? (int64_t)p.g.block_size * 16 : 16);
                    if (H::kVt)
                        copy_raw_vt<H>(raw_v(t), v8, p, s, kvh, tile_start(t), tile_end(t), w, lane, hs);
                    else
                        copy_raw_rows<H>(raw_v(t), v8, vo, w, lane, hs, 16);
                    pa::tile::cp_async_commit();
                };
                // Tile t's raw bytes (this thread's chunks) to stage st, then the
                // stage's `full` arrivals: the writes are the generic proxy's and
                // wgmma reads through the async proxy, hence the fence before them.
                const float vs = H::kFp8 && p.v_scale ? p.v_scale[kvh * p.scale_hs] : 1.0f;
                auto convert_k = [&](auto e5m2, int t, int st, int ph, bool wait_empty) {
                    constexpr bool E5M2 = decltype(e5m2)::value;
                    if (wait_empty)
                        pa::ptx::mbar_wait(rb.at(kEmptyK + st), ph);
                    convert_rows<H, E5M2, false>(k_tile(st), raw_k(t), w, lane, 1.0f);
                    pa::ptx::fence_proxy_async();
                    pa::ptx::mbar_arrive(rb.at(kFullK + st));
                };
                auto convert_v = [&](auto e5m2, int t, int st, int ph, bool wait_empty) {
                    constexpr bool E5M2 = decltype(e5m2)::value;
                    if (wait_empty)
                        pa::ptx::mbar_wait(rb.at(kEmptyV + st), ph);
                    if (H::kVt)
                        convert_vt<H, E5M2>(v_tile(st), raw_v(t), w, lane, vs);
                    else
                        convert_rows<H, E5M2, true>(v_tile(st), raw_v(t), w, lane, vs);
                    pa::ptx::fence_proxy_async();
                    pa::ptx::mbar_arrive(rb.at(kFullV + st));
                };
                auto convert = [&](auto e5m2, int t, int st, int ph, bool wait_empty) {
                    convert_k(e5m2, t, st, ph, wait_empty);
                    convert_v(e5m2, t, st, ph, wait_empty);
                };
                if (H::kFp8 && nt_c > 0) {
                    if constexpr (H::kRawPairs == 2) {
                        issue_raw(0);
                    } else {
                        issue_raw_k(0);
                        issue_raw_v(0);
                    }
                }
                for (int t = 0; t < n_tiles; t++) {
                    const uint32_t gt = g + (uint32_t)t;
                    const int st = (int)(gt & 1u), ph = (int)(((gt >> 1) + 1u) & 1u);
                    const bool wait_empty = primed || gt >= 2u;
                    const bool cache = t < nt_c;
                    if (H::kFp8 && cache && H::kRawPairs == 1) {
                        // In flight: raw K and V of t (this thread's groups, in order).
                        auto step = [&](auto e5m2) {
                            pa::tile::cp_async_wait<1>(); // raw K of t has landed
                            convert_k(e5m2, t, st, ph, wait_empty);
                            if (t + 1 < nt_c) {
                                issue_raw_k(t + 1);
                                pa::tile::cp_async_wait<1>(); // raw V of t has landed
                            } else {
                                pa::tile::cp_async_wait<0>();
                            }
                            convert_v(e5m2, t, st, ph, wait_empty);
                            if (t + 1 < nt_c)
                                issue_raw_v(t + 1);
                        };
                        if (p.cache_dtype == PA_DTYPE_FP8_E5M2)
                            step(std::true_type{});
                        else
                            step(std::false_type{});
                        continue;
                    }
                    if (H::kFp8 && cache) {
                        if (t + 1 < nt_c) {
                            issue_raw(t + 1);
                            pa::tile::cp_async_wait<1>(); // raw tile t has landed
                        } else {
                            pa::tile::cp_async_wait<0>();
                        }
                        if (p.cache_dtype == PA_DTYPE_FP8_E5M2)
                            convert(std::true_type{}, t, st, ph, wait_empty);
                        else
                            convert(std::false_type{}, t, st, ph, wait_empty);
                        continue;
                    }
                    // Rows RB w.. of the tile: 4 warps x RB rows = BN; lane l < RB
                    // holds row RB w + l's offsets (the others none: HP 256's
                    // RB = 16 leaves half the lanes without a row).
                    const int ke = tile_end(t);
                    int64_t ko, vo;
                    pa_prefill::key_row_offsets(p, s, kvh, hs, lane < RB ? tile_start(t) + RB * w + lane : ke, ke,
                                                cache, sq.k_row0, sq.n_cache, ko, vo);
                    if (wait_empty)
                        pa::ptx::mbar_wait(rb.at(kEmptyK + st), ph);
                    if (H::KV == kVllm && cache)
                        copy_rows<H>(k_tile(st), kc, ko, w, lane, hs, (int64_t)p.g.block_size * 8);
                    else
                        copy_rows<H>(k_tile(st), cache ? kc : kn, ko, w, lane, hs);
                    pa::ptx::mbar_cp_arrive(rb.at(kFullK + st));
                    if (wait_empty)
                        pa::ptx::mbar_wait(rb.at(kEmptyV + st), ph);
                    if (H::KV == kVllm && cache)
                        copy_vt<H>(v_tile(st), vc, p, s, kvh, tile_start(t), tile_end(t), w, lane, hs);
                    else
                        copy_rows<H>(v_tile(st), cache ? vc : vn, vo, w, lane, hs);
                    pa::ptx::mbar_cp_arrive(rb.at(kFullV + st));
                }
            }
            primed = primed || g + (uint32_t)n_tiles >= 2u;
            g += (uint32_t)n_tiles;
        }
        pa::tile::cp_async_commit();
        pa::tile::cp_async_wait<0>();
        return;
    }
    // ---- consumers -------------------------------------------------------------------
    pa::ptx::setmaxnreg_inc<H::kConsumerRegs>();
    // Rows [64 cw, 64 cw + 64) of the CTA's tile. cw is broadcast from lane 0
    // (as CUTLASS's canonical_warp_group_idx) so that ptxas knows it is
    // warp-uniform: the wgmma descriptors built from it then live in uniform
    // registers. Computed from threadIdx alone they were vector registers,
    // moved to uniform ones before every wgmma (R2UR), and around the
    // persistent item loop rebuilt with 64-bit vector adds at each k-step
    // (budget-notes/hopper-uniform-cw-2026-11-28.md).
    const int cw = __shfl_sync(0xffffffffu, wg - 1, 0);
    // The same for the tiles' and the barriers' shared-window addresses: ptxas
    // re-derived both from the CTA id (S2UR SR_CgaCtaId) inside the tile loop,
    // for each wait's barrier and each tile's descriptors, 27-44 warp
    // instructions a tile (heads 128 to 64); broadcast once, they stay in
    // uniform registers (budget-notes/hopper-smem-addresses-2026-11-28.md).
    const uint32_t cwin = __shfl_sync(0xffffffffu, win, 0);
    rb = pa::ptx::mbar_ref_warp(ring);
    // The head size, validated on the host (1..HP); the bounds tell nvcc it is
    // positive, so its 64-bit uses need no sign word. (Each role reads its own:
    // one hs for both, read before the roles split, had ptxas keep that sign
    // word live from the kernel's start and spill it in the persistent f16
    // instance over vLLM's fp8 cache at HP 64; the bounds on the producer's
    // made the 56-register producer of HP 128 over that cache spill instead.)
    const int hs = min(max(p.head_size, 1), HP);
    int m_tiles;
    const int n_items = items(m_tiles);
    const int r0 = 64 * cw + 16 * w + lane / 4; // this thread's rows r0 and r0 + 8
    const float scale = p.scale, cap = p.soft_cap;
    const float inv_cap = cap > 0.0f ? 1.0f / cap : 0.0f;
    using pa::tile::kLog2e;
    const int causal = p.causal, window = p.window;
    const bool alibi = p.alibi_slopes != nullptr;
    // A consumer warp is done with a stage's K (or V), or with an item's Q:
    // its lane 0 arrives.
    auto release = [&](auto bar) { // an MBar or bar_q_empty
        __syncwarp();
        if (lane == 0)
            pa::ptx::mbar_arrive(bar);
    };
    // The ring's tiles run on across the CTA's items, as the producer's:
    // tile t of an item is the CTA's tile g + t (only the parities matter).
    uint32_t g = 0;
    int nq = 0;
    Item it;
    for (int k = 0; PERSIST || k < 1; k++) {
        const int item = item_index(k, n_items);
        if (item < 0)
            break;
        if (!item_at<BM, BN>(p, item, n_items, m_tiles, it))
            continue;
        // The producer's verdict on the item's rows and block ids (and, on
        // the 16-bit paths, its Q) is in once bar_q's phase nq completes.
        pa::ptx::mbar_wait(&bar_q, nq & 1);
        const bool item_good = item_ok[nq & 1] != 0;
        nq++;
        if (!item_good) {
            if (PERSIST) // (bar_q_empty gates only a persistent CTA's next item)
                release(&bar_q_empty);
            continue;
        }
        const int kvh = it.kvh, m0 = it.m0, rows = it.rows;
        // fp8 cache tiles: K was converted exactly, so its scale (the item's KV
        // head's) joins the score scale.
        const float c_scale = H::kFp8 && p.k_scale ? scale * p.k_scale[kvh * p.scale_hs] : scale;
        const pa_prefill::Seq &sq = it.sq;
        const int shift = it.sp.shift, qpos_hi = it.sp.qpos_hi, k_end = it.sp.k_end;
        const int far = pa_prefill::far_key(causal, window, it.sp.qpos_lo);
        const int k_begin = it.sp.k_begin, c_end = it.sp.c_end, nt_c = it.sp.nt_c;
        const int p_begin = it.sp.p_begin, n_tiles = it.sp.n_tiles;
        auto tile_start = [&](int t) { return t < nt_c ? k_begin + t * BN : p_begin + (t - nt_c) * BN; };
        auto tile_end = [&](int t) { return t < nt_c ? c_end : k_end; };
        int qpos[2];
        float slope[2];
        for (int h = 0; h < 2; h++) {
            const int gr = m0 + r0 + 8 * h, gc = gr < rows ? gr : rows - 1;
            qpos[h] = shift + gc / group;
            slope[h] = p.alibi_slopes ? p.alibi_slopes[kvh * group + gc % group] : 0.0f;
        }

        // O; on the FP8 path one more n8 block, P's row sums (the ones of V^T):
        // o[HP / 8][2 h] (and every other element of the block) is row h's.
        constexpr int kOB = HP / 8 + (H::kF8 ? 1 : 0), kON = 8 * kOB;
        float o[kOB][4];
        pa::tile::zero_acc(o);
        typename SC::Softmax sm;
        sm.init();
        // FP8: this thread's rows' Q quantisation factors (the row's largest |q|
        // over 448, e4m3's largest); the scores are sums of Q/qs times K/k_scale.
        float qs[2] = {1.0f, 1.0f};
        if constexpr (H::kF8) {
            if (n_tiles > 0) {
                // Quad lane c = lane % 4 takes the row's 8-element chunks c, c+4,
                // c+8 and c+12, so the quad holds the whole row.
                const int c = lane & 3;
                uint4 v[2][4];
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int gr = m0 + r0 + 8 * h;
                    const T *row = static_cast<const T *>(p.query);
                    bool ok = gr < rows;
                    if (ok) {
                        const int tok = gr / group, head = kvh * group + gr % group;
                        row += (int64_t)(sq.q0 + tok) * p.q_stride + (int64_t)head * hs;
                    }
                    float mx = 0.0f;
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int e = 8 * (c + 4 * i);
                        v[h][i] = ok && e < hs ? *reinterpret_cast<const uint4 *>(row + e) : make_uint4(0, 0, 0, 0);
                        const uint32_t wd[4] = {v[h][i].x, v[h][i].y, v[h][i].z, v[h][i].w};
#pragma unroll
                        for (int k = 0; k < 4; k++) {
                            const float2 f = pa::tile::unpack2<DT>(wd[k]);
                            mx = fmaxf(mx, fmaxf(fabsf(f.x), fabsf(f.y)));
                        }
                    }
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                    // The largest |q| taken as at least 2^-117, so qs stays a normal
                    // float and 448 / mx finite, and its quotient formed at a quarter
                    // of it (__fdividef's divisor must stay under 2^126). A row of
                    // zeros gets zero scores either way.
                    const float mc = fmaxf(mx, 0x1p-117f);
                    qs[h] = mc * (1.0f / 448.0f);
                    const float inv = __fdividef(112.0f, 0.25f * mc);
                    const int r = 64 * cw + 16 * w + lane / 4 + 8 * h;
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int cc = c + 4 * i; // 8-element chunk: half of e4m3 chunk cc / 2
                        *reinterpret_cast<uint2 *>(q_tile + r * 128 + (((cc >> 1) ^ (r & 7)) << 4) + (cc & 1) * 8) =
                            quant8<DT>(v[h][i], inv);
                    }
                }
                // The warpgroup's wgmma reads its 64 rows of Q through the async proxy.
                pa::ptx::fence_proxy_async();
                pa::ptx::named_sync(4 + cw, 128);
            }
        }
        // An item with no key tile reads no Q: the producer may go on at once.
        if (PERSIST && n_tiles == 0)
            release(&bar_q_empty);
        // Stage st's K and V follow stage 0's by st x (K + V) bytes.
        const uint64_t dq = desc(cwin + (uint32_t)(64 * cw) * 128u, 16);
        const uint64_t dk0 = desc(cwin + (uint32_t)(k_tile(0) - smem), 16);
        const uint64_t dv0 = desc(cwin + (uint32_t)(v_tile(0) - smem), (uint32_t)BN * 128u);
        const uint64_t dvt0 = desc(cwin + (uint32_t)(v_tile(0) - smem), 16); // a V^T tile (kVllm cache tiles)
        auto stage_at = [&](uint64_t d0, RingPos r) { return desc_at<H::kVt>(d0, (r.off >> 3) * H::stage_bytes); };
        // The item's first tile's ring position.
        const RingPos first = RingPos::of(g);

        // S = Q K^T of tile t into sc, issued and committed (not waited for): k16
        // step kk is 32 bytes into panel kk / 4 of Q and K.
        float sc[BN / 8][4];
        // ACQ: wait for the stage's K (V) and fence the async proxy first; a
        // step (below) acquires both tiles itself, under one fence.
        auto issue_qk = [&](auto acq, RingPos r) {
            if constexpr (decltype(acq)::value) {
                pa::ptx::mbar_wait(full_k(r), (int)r.par);
                pa::ptx::fence_proxy_async();
            }
            const uint64_t dk = stage_at(dk0, r);
            pa::ptx::wgmma_pin(sc);
            pa::ptx::wgmma_fence();
            if constexpr (H::kF8) {
                // e4m3, k32 step kk: 32 bytes into the rows of Q and K.
#pragma unroll
                for (int kk = 0; kk < HP / 32; kk++)
                    pa::ptx::wgmma_ss_e4m3<BN>(reinterpret_cast<float(&)[BN / 2]>(sc), desc_at(dq, 32u * kk),
                                               desc_at(dk, 32u * kk), kk > 0);
            } else {
#pragma unroll
                for (int kk = 0; kk < HP / 16; kk++) {
                    const uint32_t kb = (uint32_t)(kk >> 2) * (uint32_t)BN * 128u + (uint32_t)(kk & 3) * 32u;
                    const uint32_t qb = (uint32_t)(kk >> 2) * (uint32_t)BM * 128u + (uint32_t)(kk & 3) * 32u;
                    pa::ptx::wgmma_ss<DT, BN, false, false>(reinterpret_cast<float(&)[BN / 2]>(sc),
                                                            desc_at<H::kVt>(dq, qb), desc_at<H::kVt>(dk, kb), kk > 0);
                }
            }
            pa::ptx::wgmma_commit();
            pa::ptx::wgmma_pin(sc);
        };
        // Tile t's scores in sc (complete) to probabilities in place; each row's
        // factor for the old sums and O in corr.
        float corr[2];
        // Without soft cap or ALiBi, and at a positive scale ls, the logit scale
        // rides on the exponent's multiply, edge tiles too (a masked -inf times
        // it stays -inf), so an edge tile costs one compare and select per score
        // (two with a window).
        auto folds = [&](float ls) { return !alibi && !(cap > 0.0f) && ls > 0.0f; };
        // WHOLE: the caller knows tile t to be one of whole_t's (below): no
        // masks, the scale folded, nothing to test.
        auto softmax = [&](auto whole_c, int t) {
            constexpr bool WHOLE = decltype(whole_c)::value;
            const int ks = tile_start(t), ke = tile_end(t);
            // FP8 path: new keys were quantised with 1 / k_scale too.
            const float ts = H::kFp8 && (H::kF8 || t < nt_c) ? c_scale : scale;
            const bool edge = ke < ks + BN || ks + BN - 1 > far || (window > 0 && qpos_hi - ks >= window);
            const bool fold = WHOLE || folds(ts);
            // Each row's factor to the logit: ts, times the row's qs on the FP8
            // path (1 otherwise, folded away).
            const float tsr[2] = {ts * qs[0], ts * qs[1]};
#ifdef PA_INTERPRET
            if (WHOLE && (edge || !folds(ts)))
                ::pa_interp::fatal("prefill_wgmma: a tile of whole_t needs masks or the general loop", __FILE__,
                                   __LINE__);
#endif
            if (!WHOLE && (edge || !fold)) {
                // Key kp of this thread's column: ks + 8 j + c0 (+1); a row's masks
                // are bounds on it (causal: kp <= qp; window: kp > qp - window,
                // and for a non-causal row kp < qp + window; segment: kp < ke).
                const int c0 = ks + (lane & 3) * 2;
                if (fold && window <= 0) {
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int hi = min(ke, causal ? qpos[h] + 1 : ke) - c0; // kp - c0 < hi
#pragma unroll
                        for (int j = 0; j < BN / 8; j++)
#pragma unroll
                            for (int e = 0; e < 2; e++)
                                sc[j][2 * h + e] = j * 8 + e < hi ? sc[j][2 * h + e] : -INFINITY;
                    }
                } else if (fold) {
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        // kp - c0 < hi (no overflow: ke - qpos[h] <= the sequence's queries)
                        const int hi = (causal ? min(ke, qpos[h] + 1) : qpos[h] + min(window, ke - qpos[h])) - c0;
                        const int lo = qpos[h] - window + 1 - c0; // kp - c0 >= lo
#pragma unroll
                        for (int j = 0; j < BN / 8; j++)
#pragma unroll
                            for (int e = 0; e < 2; e++) {
                                const int d = j * 8 + e;
                                sc[j][2 * h + e] = d < hi && d >= lo ? sc[j][2 * h + e] : -INFINITY;
                            }
                    }
                } else {
                    // A row sees keys kp - qp < fwd after its own: none when
                    // causal, a window's W - 1 (prefill.h), else all. ALiBi's
                    // -slope |kp - qp| is the causal slope (kp - qp) on every key
                    // a causal row sees, and costs no more (FFMA's -|x|).
                    const int fwd = causal ? 1 : window > 0 ? window : INT_MAX;
#pragma unroll
                    for (int j = 0; j < BN / 8; j++)
#pragma unroll
                        for (int i = 0; i < 4; i++) {
                            const int h = i >> 1, kp = c0 + j * 8 + (i & 1), qp = qpos[h];
                            float x = sc[j][i] * tsr[h];
                            if (cap > 0.0f)
                                x = cap * tanhf(x * inv_cap);
                            if (alibi)
                                x -= slope[h] * fabsf((float)(kp - qp));
                            const bool masked = kp >= ke || kp - qp >= fwd || (window > 0 && qp - kp >= window);
                            sc[j][i] = masked ? -INFINITY : x;
                        }
                }
            }
            if constexpr (H::kF8) {
                // P is lifted by 2^8 (SoftmaxN::exponents_rows), against the exact
                // running max (no lazy reference: P must stay within e4m3's 448).
                const float mul[2] = {fold ? tsr[0] * kLog2e : kLog2e, fold ? tsr[1] * kLog2e : kLog2e};
                sm.template exponents_rows<SC, false, false>(sc, mul, 8.0f, corr); // sums: P V's ones
            } else {
                sm.template exponents<SC>(sc, fold ? ts * kLog2e : kLog2e, corr);
            }
        };

        // FlashAttention-3's ping-pong between the two consumer warpgroups: they
        // take turns to issue their wgmma (named barrier 2 + cw: "warpgroup cw may
        // issue"), so one's softmax runs under the other's tensor work instead of
        // beside it. Warpgroup 1 lets warpgroup 0 go first, and skips its last
        // hand-back, so every generation completes (each warpgroup issues
        // n_tiles + 1 times).
        auto turn_wait = [&]() { pa::ptx::named_sync(2 + cw, 256); };
        auto turn_pass = [&](bool last) {
            if (!(last && cw == 1))
                pa::ptx::named_arrive(2 + (1 - cw), 256);
        };
        if (n_tiles > 0 && cw == 1)
            pa::ptx::named_arrive(2, 256);

        // FlashAttention-3's overlap within the warpgroup: while the tensor cores
        // run Q K^T of tile t + 1 and then P V of tile t, the warps take tile
        // t + 1's softmax. Registers: sc (tile t + 1's scores), pk (tile t's P,
        // which the P V in flight reads) and o (which it accumulates) are each
        // touched only once the wgmma that uses them has been waited for.
        // P as the P V wgmma's A registers: pairs of DT per n8 block, or on the
        // FP8 path the four registers of each k32 step (f8_key: no shuffles).
        std::conditional_t<H::kF8, uint32_t[BN / 32][4], uint32_t[BN / 8][2]> pk;
        auto pack_p = [&]() {
            if constexpr (H::kF8) {
#pragma unroll
                for (int kk = 0; kk < BN / 32; kk++) {
                    const float(&a)[4] = sc[4 * kk], (&b)[4] = sc[4 * kk + 1];
                    const float(&c)[4] = sc[4 * kk + 2], (&d)[4] = sc[4 * kk + 3];
                    pk[kk][0] = e4m3x4(a[0], a[1], b[0], b[1]);
                    pk[kk][1] = e4m3x4(a[2], a[3], b[2], b[3]);
                    pk[kk][2] = e4m3x4(c[0], c[1], d[0], d[1]);
                    pk[kk][3] = e4m3x4(c[2], c[3], d[2], d[3]);
                }
            } else {
                sm.template pack<SC>(sc, pk);
            }
        };
        if (n_tiles > 0) {
            turn_wait();
            issue_qk(std::true_type{}, first);
            turn_pass(false);
            pa::ptx::wgmma_wait<0>();
            pa::ptx::wgmma_pin(sc);
            release(empty_k(first));
            if (PERSIST && n_tiles == 1) // the item's last Q K^T is done
                release(&bar_q_empty);
            softmax(std::false_type{}, 0);
            pack_p(); // o is zero: nothing to rescale
        }
        // O += P V of tile t, issued and committed: k16 step kk is keys 16 kk..,
        // 16 rows of 128 bytes on (V, N-major); for a V^T tile (VT, vLLM's cache
        // tiles) it is 32 bytes into panel kk / 4, as Q K^T steps through K.
        // Whether B is N-major is an immediate of the instruction, so the two are
        // separate code, chosen by the caller outside any runtime branch of the
        // steady-state loop (ptxas serialises wgmma under one: C7514).
        auto issue_pv = [&](auto acq, auto vt, RingPos r) {
            constexpr bool VT = decltype(vt)::value;
            if constexpr (decltype(acq)::value) {
                pa::ptx::mbar_wait(full_v(r), (int)r.par);
                pa::ptx::fence_proxy_async();
            }
            const uint64_t dv = stage_at(VT ? dvt0 : dv0, r);
            pa::ptx::wgmma_pin(o);
            pa::ptx::wgmma_pin(pk);
            pa::ptx::wgmma_fence();
            if constexpr (H::kF8) {
                // e4m3, k32 step kk: keys 32 kk.. (in f8_key order), 32 bytes into V^T's rows.
#pragma unroll
                for (int kk = 0; kk < BN / 32; kk++)
                    pa::ptx::wgmma_rs_e4m3<kON>(reinterpret_cast<float(&)[kON / 2]>(o), pk[kk], desc_at(dv, 32u * kk),
                                                1);
            } else {
#pragma unroll
                for (int kk = 0; kk < BN / 16; kk++) {
                    // A: pk[2 kk] and pk[2 kk + 1], four registers the P V in
                    // flight reads until its wait (not a copy that ends here).
                    const uint32_t(&a)[4] = reinterpret_cast<const uint32_t(&)[4]>(pk[2 * kk]);
                    const uint32_t vb = VT ? (uint32_t)(kk >> 2) * (uint32_t)HP * 128u + (uint32_t)(kk & 3) * 32u
                                           : (uint32_t)kk * 2048u;
                    pa::ptx::wgmma_rs<DT, HP, !VT>(reinterpret_cast<float(&)[HP / 2]>(o), a, desc_at<H::kVt>(dv, vb),
                                                   1);
                }
            }
            pa::ptx::wgmma_commit();
            pa::ptx::wgmma_pin(o);
            pa::ptx::wgmma_pin(pk);
        };
        // The last tile is peeled off the loop, so every pass has both groups in
        // flight (ptxas serialises the wgmma when a conditional Q K^T leaves the
        // group count at the wait_group unknown).
        // With vLLM's cache the cache tiles' P V reads V^T: a loop of its own
        // over them, then the new-key tiles' loop.
        auto step = [&](auto vt, auto whole, int t) {
            const RingPos cur = RingPos::of(g + (uint32_t)t), nx = cur.next(); // tile t's, t + 1's
            turn_wait();
            // Tile t's V, then tile t + 1's K, then one proxy fence for both
            // (a fence is 6 instructions: 4 of them placeholders). Each producer
            // thread issues V of t before K of t + 1, so waiting for V first
            // hardly delays Q K^T; correctness needs only both waits before
            // the fence.
            pa::ptx::mbar_wait(full_v(cur), (int)cur.par);
            pa::ptx::mbar_wait(full_k(nx), (int)nx.par);
            pa::ptx::fence_proxy_async();
            issue_qk(std::false_type{}, nx);
            issue_pv(std::false_type{}, vt, cur);
            turn_pass(false);
            pa::ptx::wgmma_wait<1>(); // Q K^T of t + 1 is done; P V of t may run on
            pa::ptx::wgmma_pin(sc);
            release(empty_k(nx));
            if (PERSIST && t + 2 == n_tiles) // the item's last Q K^T is done: the producer may load the next Q
                release(&bar_q_empty);
            softmax(whole, t + 1);
            pa::ptx::wgmma_wait<0>();
            pa::ptx::wgmma_pin(o);
            pa::ptx::wgmma_pin(pk);
            release(empty_v(cur));
            // O's rescale only where a row's reference moved (corr is exactly 1
            // otherwise, and x 1 changes nothing): a warp none of whose rows
            // moved branches past it. With the lazy reference (SoftmaxN::kLazy)
            // almost every tile after a row's first moves none; the FP8 path
            // keeps the exact max, and late in a long context most of its tiles
            // move no row's.
            if (corr[0] != 1.0f || corr[1] != 1.0f) {
                if constexpr (H::kF8) {
#pragma unroll
                    for (int j = 0; j < kOB; j++) // the row sums too
                        for (int i = 0; i < 4; i++)
                            o[j][i] *= corr[i >> 1];
                } else {
                    sm.template rescale<SC>(o, corr);
                }
            }
            pack_p();
        };
        auto last = [&](auto vt) {
            const RingPos cur = RingPos::of(g + (uint32_t)(n_tiles - 1));
            turn_wait();
            issue_pv(std::true_type{}, vt, cur);
            turn_pass(true);
            pa::ptx::wgmma_wait<0>();
            pa::ptx::wgmma_pin(o);
            release(empty_v(cur));
        };
        // The FP8 path reads V^T tiles throughout (dvt0's descriptor).
        using VtTile = std::integral_constant<bool, H::kVt || H::kF8>;
        using VTile = std::integral_constant<bool, H::kF8>;
        // The tiles that need neither masks nor the general loop: whole ones
        // (whole_tiles) where the scale folds. The scales of the cache tiles
        // and the new keys' differ with an fp8 cache off the FP8 path; of the
        // two segments' ranges, one (both where they meet, else the longer).
        // Steps t in [f0, f1) (softmax of t + 1) run a loop of their own that
        // tests no tile, the others (a few an item) the general step.
        int f0 = 0, f1 = 0;
        {
            const bool fold_n = folds(H::kF8 ? c_scale : scale);
            const bool fold_c = H::kFp8 ? folds(c_scale) : fold_n;
            const int2 wc = whole_tiles<BN>(k_begin, nt_c, c_end, far, qpos_hi, window);
            const int2 wn = whole_tiles<BN>(p_begin, n_tiles - nt_c, k_end, far, qpos_hi, window);
            const int nc = fold_c ? max(0, wc.y - wc.x) : 0, nn = fold_n ? max(0, wn.y - wn.x) : 0;
            if (nc > 0 && nn > 0 && wc.y == nt_c && wn.x == 0) {
                f0 = wc.x;
                f1 = nt_c + wn.y;
            } else if (nc >= nn) {
                f0 = wc.x;
                f1 = wc.x + nc;
            } else {
                f0 = nt_c + wn.x;
                f1 = nt_c + wn.x + nn;
            }
            f0 -= 1;
            f1 -= 1;
        }
        int t = 0;
        auto run = [&](auto vt, int e) {
            while (t < e) {
                if (t >= f0 && t < f1) {
                    const int stop = min(e, f1);
                    for (; t < stop; t++)
                        step(vt, std::true_type{}, t);
                } else {
                    step(vt, std::false_type{}, t);
                    t++;
                }
            }
        };
        if (H::kVt && !H::kF8)
            run(VtTile{}, min(n_tiles - 1, nt_c));
        run(VTile{}, n_tiles - 1);
        if (n_tiles > 0) {
            if (H::kVt && !H::kF8 && n_tiles - 1 < nt_c)
                last(VtTile{});
            else
                last(VTile{});
        }
        if constexpr (H::kF8) {
            // Row h's sum of P (as rounded to e4m3: the weights P V used) is in
            // every column of the last block; each thread has its rows' whole sums.
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const float l = o[HP / 8][2 * h], inv = l > 0.0f ? __fdividef(1.0f, l) : 0.0f;
#pragma unroll
                for (int j = 0; j < HP / 8; j++) {
                    o[j][2 * h] *= inv;
                    o[j][2 * h + 1] *= inv;
                }
            }
        } else {
            sm.template finalize<SC>(o);
        }

        // Output rows [tokens, heads, head]: two elements per store. The FP8
        // path's V tiles hold V / v_scale throughout: v_scale is applied here.
        const float ov = H::kF8 && p.v_scale ? p.v_scale[kvh * p.scale_hs] : 1.0f;
        T *out = static_cast<T *>(p.out);
        const int c0 = (lane & 3) * 2;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int gr = m0 + r0 + 8 * h;
            if (gr >= rows)
                continue;
            const int tok = gr / group, head = kvh * group + gr % group;
            T *row = out + ((int64_t)(sq.q0 + tok) * p.num_heads + head) * hs;
            // Attention sinks: O / l becomes O / (l + e^(sink - max)), here, where
            // the row's head is known (held from the item's start, or formed
            // before the normalisation, it spilled at head 128): a factor
            // l / (l + exp2(sink log2 e - m)) (MUFU.RCP, as finalize's), both
            // terms lifted by 2^8 on the FP8 path (l: its P V's sum; else the
            // softmax's, summed by finalize).
            float f = ov;
            constexpr float lift = H::kF8 ? 8.0f : 0.0f;
            const float l = H::kF8 ? o[HP / 8][2 * h] : sm.l[h];
            const bool sink = p.sinks && l > 0.0f;
            const float ls = sink ? l + pa::tile::ex2(fmaf(p.sinks[head], kLog2e, lift - sm.m[h])) : l;
            if (sink)
                f *= __fdividef(l, ls);
            // The row's log-sum-exp (prefill.h): the sum
            // (with its sink) times 2^(m - lift), in natural log; one lane of
            // the quad holding the row writes it.
            if (p.lse && (lane & 3) == 0)
                *pa_prefill::lse_at(p, head, sq.q0 + tok) =
                    pa_prefill::row_lse(p, head, ls, (sm.m[h] - lift) * 0.6931471805599453f + logf(ls));
#pragma unroll
            for (int j = 0; j < HP / 8; j++)
                if (j * 8 < hs)
                    *reinterpret_cast<uint32_t *>(row + j * 8 + c0) =
                        pa::tile::pack2<DT>(o[j][2 * h] * f, o[j][2 * h + 1] * f);
        }
        g += (uint32_t)n_tiles;
    }
#else
    (void)p;
    __trap();
#endif
}

// CTAs of the launch for n_items items: one per item (the grid the H100
// measured on 2026-11-27), unless the environment variable
// PAGEDATTN_PREFILL_PERSISTENT, read at each launch, asks for persistent CTAs:
// "on" for one per SM (the kernel's shared memory and registers allow one), a
// number n > 0 for at most n; "off", 0 or anything else for one per item.
// Persistent CTAs start an item's first loads under the last one's final tiles
// and output (FlashAttention-3's scheduling) but pay for it in the tile loop
// (PERSIST above); which wins is for a GPU to measure. Outputs are bitwise the
// same either way: an item's work does not depend on the CTA that runs it.
inline long long wgmma_persistent_ctas() {
    const char *e = getenv("PAGEDATTN_PREFILL_PERSISTENT");
    if (!e)
        return 0;
    if (strcmp(e, "on") == 0) {
        int dev = 0, sms = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0) {
            (void)cudaGetLastError();
            return 0;
        }
        return sms;
    }
    char *end = nullptr;
    const long long v = strtoll(e, &end, 10);
    return end != e && *end == '\0' && v > 0 ? v : 0;
}

template <int HP, int DT, int KV, bool F8 = false>
cudaError_t launch_wgmma(const pa_prefill_kparams &p, cudaStream_t stream) {
    using H = HCfg<HP, DT, KV, F8>;
    const long long n_items = (long long)item_m_tiles(p, H::BM) * p.num_seqs * p.num_kv_heads;
    if (n_items == 0)
        return cudaSuccess;
    const long long want = wgmma_persistent_ctas();
    const bool persist = want > 0 && want < n_items;
    const long long ctas = persist ? want : n_items;
    // The kernel numbers items in int; pa_prefill_hopper_head keeps launches
    // with more than 2^30 of them on mma.sync.
    if (n_items + ctas > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    auto kernel = persist ? prefill_wgmma_kernel<H, true> : prefill_wgmma_kernel<H, false>;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)H::smem_bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); // not left for the caller's next launch check
        return e;
    }
    PA_LAUNCH((unsigned)ctas, H::kThreads, H::smem_bytes, stream, kernel)(p);
    return cudaGetLastError();
}

} // namespace pa_prefill_h
