/* libpagedattn: decode attention over a paged KV cache (vLLM's forward_decode).
 *
 * One query token per sequence attends to that sequence's whole cached history
 * (seq_lens[s] tokens, found through block_tables[s]).
 */
#ifndef PAGEDATTN_DECODE_H
#define PAGEDATTN_DECODE_H

#include "pagedattn/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pa_decode_params {
    void *out;                   /* [num_seqs, num_heads, head_size], q_dtype, contiguous */
    const void *query;           /* [num_seqs, num_heads, head_size], q_dtype; rows q_stride apart */
    int64_t q_stride;            /* elements between sequences; 0 = num_heads * head_size */
    pa_dtype q_dtype;            /* f32, f16 or bf16 */
    pa_kv_cache kv;              /* any layout but PA_LAYOUT_COMBINED */
    const int32_t *block_tables; /* [num_seqs, block_table_stride] physical block ids */
    int32_t block_table_stride;  /* max_num_blocks_per_seq */
    const int32_t *seq_lens;     /* [num_seqs], each in 1..max_seq_len */
    int32_t num_seqs;
    int32_t num_heads;   /* query heads; a multiple of kv.num_kv_heads */
    int32_t max_seq_len; /* host-side upper bound on seq_lens (sizes the grid); at most
                          * 2^31 - 257 (int32 key positions plus a tile); v2 (and its
                          * workspace query) at most 65535 x 512 = 33553920, one grid
                          * row a partition */
    /* softmax scale, usually 1/sqrt(head_size); any finite value (negative and 0
     * too). The logits (scale x q.k, in nats) should stay below about 5e6 in
     * magnitude, far past any model's: beyond it the f32 logit's own rounding
     * (2^-24 of it, in log2 units) reaches the tensor-core kernels' 16-bit and
     * fp8 probabilities, which can overflow (inf or NaN rows; an audit found
     * them at 5e7, 2026-12-05). The CPU references have no such bound. The
     * same bound holds for an ALiBi bias, and the dot q.k itself must be
     * finite in f32 (the kernels form it before the scale: bf16 or f32 rows
     * of 1e20 overflow it), with an fp8 cache's keys as stored too (most
     * kernels form it before k_scale as well). A NaN in q, K or V leaves
     * its rows unspecified: NaN on the tensor cores, zeros with an lse of
     * -inf on CUDA cores and in the split entries' merge (a weight-0 part
     * there). */
    float scale;
    const float *alibi_slopes; /* [num_heads] or NULL; adds slope * (pos - seq_len + 1) */
    int32_t sliding_window;    /* 0 = off; key at pos masked if (seq_len-1) - pos >= window */
    float soft_cap;            /* 0 = off; logits become cap * tanh(logit / cap). Else in
                                * [FLT_MIN, 2^126]: a subnormal cap has no float reciprocal,
                                * and a larger one changes no logit within the bound above
                                * (pass 0); PA_ERR_INVALID_ARGUMENT otherwise */
    /* vLLM block-sparse attention (enabled when bs_vert_stride > 1): a KV block
     * of bs_block_size tokens is attended when it is local (within
     * bs_local_blocks of the query's block) or remote ((id + offset) %
     * vert_stride == 0, offset sliding per head by bs_head_sliding_step, on
     * query heads when >= 0 and on KV heads when < 0). */
    int32_t tp_rank;
    int32_t bs_local_blocks;
    int32_t bs_vert_stride;
    int32_t bs_block_size;
    int32_t bs_head_sliding_step;
    /* Attention sinks (gpt-oss): [num_heads] f32 or NULL. Head h's softmax
     * takes one more logit, sinks[h] (in the units of the logits above:
     * after scale, soft cap and ALiBi), whose value is zero, so each output
     * row is sum_j e^x_j v_j / (e^sinks[h] + sum_j e^x_j). -inf is no sink;
     * a head that attends no token still gets zeros. */
    const float *sinks;
    /* Log-sum-exp output (FlashAttention's softmax_lse), NULL for none: f32
     * [num_heads, num_seqs] (lse[h * num_seqs + s], the layout of the prefill
     * entries' lse and pa_merge_attn_states' default, merge.h), device memory
     * (host memory for the reference), 4-byte aligned, clear of out, query and
     * the workspace. Each head gets the natural log of its softmax
     * denominator, log(e^sinks[h] + sum_j e^x_j) over the keys it attends, in
     * the units of the logits (after scale, soft cap and ALiBi; the sink term
     * only with sinks): -inf when it attends no key and has no sink, sinks[h]
     * when it has one. A sequence whose seq_len is out of range (its output is
     * zeros) gets -inf. The output and lse are one partial attention state, so
     * decode over a shared prefix's blocks and over each sequence's own (the
     * sinks given to one of the two) merge into attention over all of them
     * (cascade attention), as do the partial states of a sequence's context
     * split over several GPUs (vLLM's decode context parallelism). The same in
     * every entry; the output is the same with or without it. A sink far
     * above the head's logits (where e^(sink - max) overflows f32, past about
     * 88) gives an lse of the sink itself, which log(e^sink + sum_j e^x_j) is
     * to the float there, and zeros; a +inf sink gives +inf, which
     * pa_merge_attn_states reads as a part with no key (the output is zeros
     * either way). */
    float *lse;
    /* lse's layout, as pa_merge_attn_states' (merge.h), the sequences as its
     * tokens: (head h, sequence s) at h * lse_head_stride + s *
     * lse_token_stride floats; 0 gives the default (head stride num_seqs,
     * token stride 1: the [num_heads, num_seqs] above). FlashInfer's
     * [num_seqs, num_heads] is head stride 1 and token stride num_heads (its
     * lse values are base 2, these natural logs: merge.h); a
     * slice of a wider array (the decode rows of a mixed batch's [num_heads,
     * tokens], say) keeps that array's strides. Distinct pairs must fall on
     * distinct floats (one stride spanning the other's whole extent); floats
     * between them are not written. The overlap checks above take the
     * layout's whole span, first element to last, gaps included. A layout
     * whose last element lies 2^61 - 1 floats or more in (the bytes up to
     * its end, 4 (index + 1), past int64) is refused
     * (PA_ERR_INVALID_ARGUMENT), in every entry that takes an lse. */
    int64_t lse_head_stride;
    int64_t lse_token_stride;
} pa_decode_params;

/* Checks every field that can be checked without reading device memory.
 * PA_ERR_INVALID_ARGUMENT or PA_ERR_UNSUPPORTED with a message. What a call
 * writes shares no byte with what it reads: out, lse (and, in the GPU
 * entries, the workspace) apart from the query rows, the cache's key and value
 * buffers and fp8 scales, block_tables ([num_seqs, block_table_stride], whole
 * rows), seq_lens, alibi_slopes and sinks, and from each other; an overlap is
 * PA_ERR_INVALID_ARGUMENT ("decode: output out overlaps the input kv.key"),
 * checked after every other field. (A CTA writes its rows and partials while
 * others still read these; out over its own query rows is refused too.) */
PA_API pa_status pa_decode_validate(const pa_decode_params *p);

/* CPU reference (all pointers host memory, seq_lens/block tables read on the
 * host). Plain loops, f64 softmax: the specification the kernels are tested
 * against. Also checks each seq_len and every block id of the sequence from
 * the first block holding a key inside a sliding window on (one wholly before
 * the window is read by neither the reference nor the GPU entries; blocks
 * block-sparse attention leaves out are checked all the same), an fp8
 * cache's k_scale / v_scale (finite and > 0) and the ALiBi slopes (finite),
 * before writing anything. A head that attends no token gets zeros. */
PA_API pa_status pa_ref_paged_decode(const pa_decode_params *p);

/* ---- GPU entries --------------------------------------------------------------
 *
 * All pointers are device memory (kv.k_scale / kv.v_scale too). Each entry
 * validates *p on the host (pa_decode_validate plus: query, out and caches
 * aligned to their element size, workspace aligned to 16 bytes), then launches
 * asynchronously on `stream`. No allocation, synchronisation or host<->device
 * copy happens inside, so a captured CUDA graph replays with new seq_lens and
 * block tables (the contents of device memory; num_seqs, max_seq_len and the
 * pointers are fixed by the capture). Needs sm_80 or newer.
 *
 * seq_lens and block tables are read on the device and never trusted:
 *   - a seq_len outside 1..max_seq_len makes that sequence's output zeros;
 *   - a block id outside 0..kv.num_blocks-1 makes that block's tokens count as
 *     masked (never read), as if the block were dropped by block-sparse;
 *   - a query head that attends no token at all gets zeros.
 * Supported: head sizes every multiple of 8 from 8 to 256 (vLLM's 32, 64, 80,
 * 96, 112, 120, 128, 192 and 256 among them; the kernel each takes is below);
 * block sizes 8,16,32,64,128; query f32/f16/bf16 with a cache of the same
 * dtype or fp8 (e4m3, e5m2); the vLLM, flash NHD and flash HND layouts
 * (strided flash views included; the vLLM key layout needs head_size a
 * multiple of x = 16 bytes of the cache dtype: 8 for 16-bit, 16 for fp8, as in
 * vLLM, so fp8 at head 120 takes a flash layout); GQA/MQA (num_heads a multiple of
 * kv.num_kv_heads); ALiBi, sliding window, soft cap and vLLM block-sparse in
 * any combination, and attention sinks with any of them.
 *
 * Every entry serves a whole GQA group from one CTA (each K/V byte read once
 * per split; a group above 16 heads takes several CTAs of up to 16) and
 * accumulates in f32. Which kernel runs depends on the shape only, never on
 * the batch:
 *   tensor cores (mma.sync): an f16/bf16 query at head 32, 64, 80, 96, 112,
 *     128, 192 or 256 with a cache of its dtype or fp8, or at head 120 with a
 *     cache of its dtype; the flash layouts or vLLM's, the keys (and flash
 *     values) copyable in 16-byte units (cache pointers and strides 16-byte
 *     aligned); no block-sparse mask; CTAs of up to 8 query heads (up to 16
 *     at heads 64, 128 and 192). Q.K and P.V run on tensor cores with the
 *     probabilities rounded to the MMA's input type: the cache's dtype, or
 *     f16 for an fp8 cache (a bf16 query is then scaled by a power of two
 *     first, its largest |q| to [2^14, 2^15), so nothing overflows: its
 *     elements under 2^-29 of that largest lose bits in f16 and those under
 *     2^-40 become 0; scale x k_scale x the largest |q| must stay under
 *     2^140, which the logit bound above implies unless the keys are zero
 *     where the query is largest; the ragged kernel does the same).
 *   CUDA cores: every other shape (f32 queries, the other head sizes, fp8 at
 *     head 120, block-sparse, caches copyable only in narrower units, CTAs of
 *     more than 8 heads at heads 32, 80, 96, 112, 120 and 256).
 * The entries differ in how a sequence is cut:
 *
 *   v1    one pass over the whole sequence; no workspace.
 *   v2    vLLM's 512-token partitions (PA_DECODE_PARTITION_SIZE) and a reduce
 *         step. Workspace from pa_paged_attention_v2_workspace_size, with
 *         P = ceil(max_seq_len / 512), laid out as (each part starting at a
 *         multiple of 256 bytes):
 *           tmp_out    [num_seqs, num_heads, P, head_size]  each partition's
 *                      normalised output in the output's type (f32, f16 or
 *                      bf16, as vLLM keeps tmp_out and FlashInfer its tmp_v:
 *                      4 or 2 bytes an element), before an fp8 cache's v_scale
 *                      (the reduce applies it). So a split output carries
 *                      the 16-bit rounding of each partition's own output:
 *                      where partitions cancel (a sum of +1s and -1s whose
 *                      average is 1e-3) the error is half an ulp of the
 *                      partitions' outputs, not of the result (FlashAttention-2
 *                      keeps its split partials in f32); v1 has none.
 *           exp_sums   [num_seqs, num_heads, P]  f32 sum of exp(logit - max)
 *           max_logits [num_seqs, num_heads, P]  f32 max logit of the partition
 *         A sequence of at most 512 tokens is written directly (no reduce).
 *         When P == 1 the size is 0 and workspace may be NULL.
 *   recommended (pa_paged_attention_decode) splits a sequence of len tokens
 *         into max(256, next_pow2(ceil(len / 64))) tokens per split (one split
 *         up to 256 tokens, at most 64 splits), merged in split order. Split
 *         boundaries depend only on that sequence's length, so its output is
 *         bitwise identical whatever else is in the batch and whatever the
 *         batch size. Workspace: the layout above with
 *         P = min(64, ceil(max_seq_len / 256)).
 *         The environment variable PAGEDATTN_DECODE_MIN_SPLIT, read at each
 *         call, replaces the smallest split 256 with a power of two up to
 *         8192 (other values are ignored): fewer, longer splits, so less
 *         per-split work at large batches and less parallelism at small ones.
 *         Outputs stay batch-invariant for any one value (not across values),
 *         and the workspace query does not depend on it.
 *         The trade-off: small splits keep a small batch's GPU busy (batch
 *         1 x 4K: 16 CTAs per KV head), but at a large batch every split
 *         still pays a pipeline fill, a partial round trip and the merge. On
 *         an H100 (benchmarks/results/gpu-report-2026-11-27-H100.md) that is
 *         86% of the copy roof at batch 64 x 4K GQA 32/8 bf16 against v1's
 *         93%; MHA 32/32 reaches 94%. Letting one CTA run several of a
 *         sequence's splits (bitwise the same) was measured slower, not
 *         faster (2026-11-23), so large GQA batches that want the last points
 *         can call v1, at the price of batch invariance.
 *   v2 and the recommended entry launch the merge with programmatic
 *         dependent launch on devices of compute capability 9.0 and up (in a
 *         library built for sm_90 or later): it may start while the split
 *         kernel's last CTAs run and waits for their results on the device.
 *         Stream order and CUDA-graph capture are unchanged for the caller.
 *         PAGEDATTN_DECODE_PDL=0, read at each call, launches it plainly.
 *
 * pa_decode_use_v1 (heuristics.h) is vLLM's v1/v2 choice; the recommended
 * entry needs no choice. The workspace-size queries read only num_seqs,
 * num_heads, kv.num_kv_heads, kv.head_size, max_seq_len and q_dtype (and
 * return 0 for num_seqs == 0). A zeroed q_dtype (PA_DTYPE_F32) sizes tmp_out
 * for f32, which serves any query dtype; f16 and bf16 need half of it (since
 * 2026-11-29). A workspace smaller than asked for gives
 * PA_ERR_WORKSPACE_TOO_SMALL, whatever its pointer (NULL too), and nothing is
 * launched; one large enough must be non-NULL and 16-byte aligned
 * (PA_ERR_INVALID_ARGUMENT). */
PA_API pa_status pa_paged_attention_v1(const pa_decode_params *p, pa_stream stream);

PA_API pa_status pa_paged_attention_v2_workspace_size(const pa_decode_params *p, size_t *bytes);
PA_API pa_status pa_paged_attention_v2(const pa_decode_params *p, void *workspace, size_t workspace_bytes,
                                       pa_stream stream);

PA_API pa_status pa_paged_attention_decode_workspace_size(const pa_decode_params *p, size_t *bytes);
PA_API pa_status pa_paged_attention_decode(const pa_decode_params *p, void *workspace, size_t workspace_bytes,
                                           pa_stream stream);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_DECODE_H */
