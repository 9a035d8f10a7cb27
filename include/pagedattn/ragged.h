/* libpagedattn: ragged paged attention: one launch for a mixed prefill+decode
 * batch over the combined K/V cache (vLLM's TPU ragged_paged_attention, the
 * JAX Pallas kernel and its reference define the semantics).
 *
 * A batch is a list of sequences. Sequence s contributes the query rows
 * cu_q_lens[s] .. cu_q_lens[s+1]-1 (q_len = their count) and has kv_lens[s]
 * tokens in the cache, the new ones included (q_len <= kv_len). Query row i of
 * sequence s sits at position q_pos = kv_lens[s] - q_len + i; it attends to the
 * keys at k_pos in [0, kv_lens[s]) through page_indices[s]; a key is masked if
 *     k_pos > q_pos                                       (causal)
 *  or sliding_window > 0 and q_pos - sliding_window >= k_pos   (window)
 * Decode rows (q_len 1), chunked-prefill rows and whole prompts mix freely.
 *
 * Numerics (JAX's reference, written down in pa_ref_ragged_paged_attention):
 *   k, v   read from the cache; with an fp8 cache dequantised as
 *          (float)stored * scale and rounded to the query dtype
 *   x      = sm_scale * dot(q, k) accumulated in f32 (f64 in the reference)
 *   x      = soft_cap * tanh(x / soft_cap)          when soft_cap > 0
 *   x      = x + mask_value                          when the key is masked
 *   p      = softmax over the sequence's keys (f32 / f64), rounded to the
 *            value dtype (the query dtype) before P.V as JAX does
 *   out    = sum p * v accumulated in f32, rounded to the query dtype
 * Attention sinks (gpt-oss; tpu-inference's attention_sink), when sinks is not
 * NULL: head h's softmax takes one more logit, sinks[h] (natural-log units
 * like x, after the soft cap and the mask, neither of which touches it), with
 * no value: p_k = e^x_k / (e^sinks[h] + sum_j e^x_j), then rounded as above.
 * -inf is no sink; +inf makes every row of the head zero; NaN is refused by
 * the reference (the kernels cannot check device data and give NaN rows).
 * mask_value is ADDED to a masked logit as in JAX. With the default (or any
 * mask_value <= PA_RAGGED_HARD_MASK) exp() of a masked logit underflows to
 * exactly 0 in f32 for every logit below 1e29 in magnitude, so the kernels skip
 * masked key ranges without reading them; a milder mask_value (say -1e4) makes
 * every key of [0, kv_len) contribute, exactly as in JAX, and the kernels read
 * them all.
 *
 * Differences from JAX, decided here:
 *   sliding_window  0 = none (JAX: None); < 0 is an error (JAX rejects <= 0).
 *   soft_cap        0 = none (JAX: None; JAX rejects 0.0); else in [FLT_MIN,
 *                   2^126] (decode.h); anything else (< 0, NaN, subnormal,
 *                   larger) is an error.
 *   mask_value      0 = JAX's DEFAULT_MASK_VALUE (-0.7 * FLT_MAX); must be
 *                   finite (an infinite mask would give inf - inf = NaN).
 *   k_scale/v_scale kv.k_scale / kv.v_scale (device floats, NULL = 1.0) apply to
 *                   fp8 caches only, as everywhere in this library (JAX applies
 *                   a scale it is given to any cache: pass none for a 16-bit
 *                   one, or fold it into sm_scale and the output).
 *
 * Device-side data the host cannot see (num_seqs, cu_q_lens, kv_lens,
 * page_indices) is read by the kernels, so one CUDA graph captured at the
 * padded maximum (max_num_seqs, max_num_batched_tokens) replays for any batch.
 * The kernels bounds-check it and SKIP (leave its output rows untouched) a
 * sequence with q_len < 0, q_len > kv_len, kv_len > pages_per_seq * page_size,
 * rows outside [0, max_num_batched_tokens), or rows that start before an
 * earlier sequence's rows end (cu_q_lens decreasing: no two sequences write
 * one row); num_seqs is clamped to
 * [0, max_num_seqs]. A page id outside [0, num_pages) is never dereferenced:
 * that page reads as zeros and the sequence's output is meaningless (the CPU
 * reference rejects all of these with a message instead).
 *
 * Work decomposition (GPU): a one-CTA planner kernel turns cu_q_lens / kv_lens /
 * num_seqs into a work list in the caller's workspace; one attention launch
 * then runs every item (persistent CTAs, dynamic fetch). A sequence whose
 * q_len * (num_q_heads / num_kv_heads) <= 16 is a decode sequence: one 16-row
 * item per KV head (its query heads of one GQA group packed as rows), the CTA's
 * warps split the keys; longer sequences are cut into query tiles of 128 rows
 * (f16/bf16 queries up to head 128, 32 rows per warp) or 64 rows (larger heads,
 * f32 queries). Long
 * KV ranges are split into chunks whose size depends only on the sequence's
 * own lengths (and the fixed constants below), and the partial results are
 * merged in a fixed order by the last CTA to finish, so a sequence's output is
 * bitwise independent of the rest of the batch (batch invariant).
 */
#ifndef PAGEDATTN_RAGGED_H
#define PAGEDATTN_RAGGED_H

#include "pagedattn/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* JAX's DEFAULT_MASK_VALUE, used when mask_value is 0. */
#define PA_RAGGED_DEFAULT_MASK_VALUE (-0.7f * 3.40282346638528859812e+38f)
/* mask_value at or below this masks hard (masked keys contribute exactly 0 and
 * are not read); above it masked keys are read and contribute as in JAX. */
#define PA_RAGGED_HARD_MASK (-1e30f)

typedef struct pa_ragged_params {
    void *out;                   /* [max_num_batched_tokens, num_q_heads, head_size], q_dtype, contiguous;
                                    rows outside live sequences are left untouched */
    const void *q;               /* [max_num_batched_tokens, num_q_heads, head_size], q_dtype, contiguous */
    pa_dtype q_dtype;            /* f32, f16, bf16 */
    pa_kv_cache kv;              /* layout PA_LAYOUT_COMBINED: [num_pages, page_size, 2*kv_heads, head]
                                    (num_pages = kv.num_blocks, page_size = kv.block_size); dtype q_dtype
                                    or fp8 e4m3/e5m2 with kv.k_scale/kv.v_scale */
    const int32_t *kv_lens;      /* [max_num_seqs]: tokens in the cache for each sequence, new ones included */
    const int32_t *page_indices; /* [max_num_seqs, pages_per_seq]: page ids of each sequence, in order */
    int32_t pages_per_seq;       /* columns of page_indices; kv_len <= pages_per_seq * page_size */
    const int32_t *cu_q_lens;    /* [max_num_seqs + 1]: query rows of sequence s are cu_q_lens[s] ..
                                    cu_q_lens[s+1]-1 */
    const int32_t *num_seqs;     /* [1]: live sequences (<= max_num_seqs); read on the device */
    int32_t max_num_seqs;        /* either 0: an empty batch, a no-op (see pa_ragged_paged_attention) */
    int32_t max_num_batched_tokens;
    int32_t num_q_heads;    /* multiple of kv.num_kv_heads */
    float sm_scale;         /* multiplies q.k (JAX's sm_scale; usually 1/sqrt(head_size)); logits bounded
                             * as decode.h's scale, and decode items over fp8 pages take a bf16
                             * query into f16 as decode's tensor-core kernels do (decode.h) */
    int32_t sliding_window; /* 0 = none; key masked if q_pos - sliding_window >= k_pos */
    float soft_cap;         /* 0 = none; cap * tanh(x / cap) before masking */
    float mask_value;       /* 0 = default (JAX's DEFAULT_MASK_VALUE = -0.7 * FLT_MAX); added to masked logits */
    /* ---- optional (zero = automatic); added after the agreed fields ---- */
    int32_t kv_split_tokens;  /* 0 = automatic; else every sequence's keys are split into chunks of this many
                                 tokens (a multiple of 64), each its own work item, merged afterwards. For
                                 tests and tuning: small values raise the workspace size. */
    const float *sinks;       /* [num_q_heads] f32 or NULL: attention sinks (see the top of this header) */
    float *lse;               /* [num_q_heads, max_num_batched_tokens] f32 or NULL: log-sum-exp (see below) */
    int64_t lse_head_stride;  /* lse's layout (as context attention's, prefill.h); 0 = max_num_batched_tokens */
    int64_t lse_token_stride; /* 0 = 1 */
} pa_ragged_params;

/* Log-sum-exp output: `lse`, when not NULL, f32 in device memory (host memory
 * for the reference), 4-byte aligned, gets for every query row the call
 * writes (query row t of the batch, head h) the natural log of that row's
 * softmax denominator,
 *     lse = log(e^sinks[h] + sum_k e^x_k)   over k_pos in [0, kv_len),
 * x_k as above: mask_value added to a masked key's logit (with the default
 * hard mask its term is exactly 0), the sink term only with sinks; a +inf
 * sink gives +inf (which pa_merge_attn_states reads as a part with no key,
 * FlashAttention-2's convention). Rows the call leaves untouched (outside the
 * live sequences, or skipped: see the device-side data above) leave their
 * lse unwritten. It is laid out as context attention's lse (prefill.h) with
 * tokens = max_num_batched_tokens: (h, t) at h * lse_head_stride + t *
 * lse_token_stride floats, 0 giving the default [num_q_heads,
 * max_num_batched_tokens]; FlashInfer's [tokens, heads] is head stride 1 and
 * token stride num_q_heads (its lse values are base 2, these natural logs:
 * merge.h). A row's output and lse are one partial attention
 * state: calls over disjoint keys of the same query rows merge with
 * pa_merge_attn_states (merge.h) into attention over all of them (give the
 * sinks to one call only). The masks place query rows by kv_len, so such a
 * split is exact where they leave every key of both calls visible: decode
 * rows over a shared prefix's pages, then over each sequence's own (cascade
 * attention). lse must not overlap out, q, the cache or the workspace (the
 * whole layout's span, gaps included, is checked). More generally, what a call
 * writes (out, lse, the workspace) shares no byte with what it reads (q, the
 * cache and its fp8 scales, kv_lens, page_indices, cu_q_lens, num_seqs and
 * sinks, each over the extent its max_* sizes give) or with each other: an
 * overlap is PA_ERR_INVALID_ARGUMENT ("ragged: output out overlaps the input
 * kv.key"), checked after every other field (the workspace in the entry). */

/* Supported (GPU and reference alike):
 *   q_dtype    f32, f16, bf16; cache dtype = q_dtype, or fp8 e4m3 / e5m2
 *   head_size  every multiple of 8 from 8 to 256 (64, 128 and 256 run without
 *              padding; others run in the next of these with the extra
 *              dimensions skipped)
 *   any page size >= 1, any GQA ratio num_q_heads / num_kv_heads.
 * Pointers q, out and kv.key must be 16-byte aligned (cudaMalloc's are). */

/* Host-visible checks only (shapes, dtypes, options, NULLs, alignment); nothing
 * is read through the pointers. PA_ERR_INVALID_ARGUMENT or PA_ERR_UNSUPPORTED
 * with a message naming the field. */
PA_API pa_status pa_ragged_validate(const pa_ragged_params *p);

/* Bytes of device workspace pa_ragged_paged_attention needs for these
 * host-visible sizes (max_num_seqs, max_num_batched_tokens, pages_per_seq *
 * page_size, heads, head_size, q_dtype, kv_split_tokens): the work list plus
 * room for the partial results of the worst batch those sizes allow. The
 * contents of the device arrays do not matter, so one workspace serves every
 * step (and every layer) of a captured graph. p is validated whole first, as
 * pa_ragged_validate does: its pointers must be those of a real call (non-NULL,
 * aligned, apart), not placeholders (unlike the decode entries' size queries,
 * which read the shape fields alone). */
PA_API pa_status pa_ragged_workspace_size(const pa_ragged_params *p, size_t *bytes); /* 0 for an empty batch */

/* GPU entry: validates, then launches the planner and the attention kernel on
 * `stream` (asynchronous; no allocation, no sync, no host<->device copy; every
 * pointer in p is device memory, num_seqs included). workspace: device memory
 * of at least pa_ragged_workspace_size bytes, 256-byte aligned, not shared with
 * a concurrent launch; its contents need no initialisation.
 * PA_ERR_WORKSPACE_TOO_SMALL when workspace_bytes is short, whatever the
 * pointer (NULL too); PA_ERR_INVALID_ARGUMENT when it is long enough but NULL
 * or not 256-byte aligned. An empty batch
 * (max_num_seqs or max_num_batched_tokens 0, the other >= 0) is a no-op here
 * and in the reference, as an empty batch is in the other ops: the sizes,
 * dtypes, cache (kv.key too) and options are validated, but no other pointer
 * is looked at (NULL passes, the workspace too), nothing is launched and
 * nothing is written. On a device whose CTAs hold 99 KiB of shared memory
 * (compute capability 8.6, 8.9, 12.x), the 16-bit kernel at heads above 64
 * runs with key slots of half the width (its full ones take 104448 bytes, and
 * 101376 plus static at head 256); the f32 kernel above head 128 (139520
 * bytes) is refused there with PA_ERR_UNSUPPORTED naming the bytes, with
 * nothing launched (the planner included). */
PA_API pa_status pa_ragged_paged_attention(const pa_ragged_params *p, void *workspace, size_t workspace_bytes,
                                           pa_stream stream);

/* CPU reference: every pointer is host memory (num_seqs, scales too). Follows
 * the JAX reference's numerics (see the top of this header): logits and
 * softmax in f64; probabilities rounded to the value dtype (= q_dtype, since
 * an fp8 value is dequantised into the query dtype) before P.V, as JAX's
 * `.astype(v.dtype)` does; P.V accumulated in f64; output rounded to q_dtype.
 * Checks num_seqs, cu_q_lens (non-decreasing, within [0,
 * max_num_batched_tokens]), kv_lens (q_len <= kv_len <= pages_per_seq *
 * page_size) and every page id it reads, and rejects bad ones with a message
 * naming the sequence before writing anything; so is an fp8 cache's k_scale /
 * v_scale that is not finite and > 0. kv_split_tokens is ignored. */
PA_API pa_status pa_ref_ragged_paged_attention(const pa_ragged_params *p);

/* ---- page size guidance for the CUDA kernels ----------------------------------
 * The kernels take any page size >= 1: K/V rows are gathered row by row
 * through the page table (each token's K and V rows of one KV head are
 * adjacent in the combined layout, 2 * head_size elements), in 64-key tiles.
 * What page size changes is the number of page-table reads (one per token
 * row, cached) and nothing else, so:
 *   - prefer a power of two >= 16 (a shift instead of a division per row;
 *     16..256 expected within a few percent of each other: TO BE MEASURED);
 *   - page sizes below 8 cost extra page-table traffic (TO BE MEASURED);
 *   - there is no shared-memory limit on pages_per_seq (page ids are not
 *     staged), unlike the TPU rule of pa_get_min_page_size.
 * pa_ragged_preferred_page_size returns the vLLM ragged backend's choice
 * (pa_get_page_size: next_power_of_2(max_model_len) / 16 clamped to [16, 256]),
 * which suits the CUDA kernels too. */
PA_API pa_status pa_ragged_preferred_page_size(int64_t max_model_len, int32_t *page_size);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_RAGGED_H */
