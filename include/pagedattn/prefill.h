/* libpagedattn: prefill attention.
 *
 *   - context (prefix) attention, vLLM's forward_prefix / context_attention_fwd:
 *     the new query tokens of each sequence attend to the sequence's cached
 *     context through its block table (no causal mask inside the context), then
 *     to their own new K/V causally;
 *   - varlen prompt attention without a cache (what vLLM's xFormers backend ran
 *     for prompts): decoder self-attention (causal), encoder attention
 *     (non-causal) and encoder/decoder cross-attention (query and key lengths
 *     differ);
 *   - a mixed prefill + decode batch in the xFormers layout (prefill tokens
 *     first, then one token per decode sequence) in one host call.
 *
 * POSITIONS AND MASKS (one rule for every entry)
 *   A sequence has q_len query tokens and k_len keys. Key j sits at position j;
 *   query i sits at position q_pos(i) = k_len - q_len + i ("bottom-right"
 *   alignment: the last query lines up with the last key). For context
 *   attention k_len = seq_len, keys [0, seq_len - q_len) come from the cache
 *   (the context) and keys [seq_len - q_len, seq_len) are the new tokens, so
 *   query i is token seq_len - q_len + i of the sequence, as in vLLM.
 *     causal (context attention, PA_ATTN_DECODER): key j is masked when j > q_pos(i)
 *     sliding window W > 0: key j is masked when q_pos(i) - j >= W, and where no
 *                        causal mask applies (PA_ATTN_ENCODER, _ENCODER_ONLY) when
 *                        j - q_pos(i) >= W too: a causal row sees W keys ending at
 *                        its own (vLLM's window_size (W - 1, 0)), a non-causal one
 *                        W - 1 keys either side of its own (vLLM's (W - 1, W - 1) for
 *                        encoder and encoder-only layers: bidirectional models with
 *                        local attention). Cross-attention (PA_ATTN_ENCODER_DECODER)
 *                        refuses a window (PA_ERR_UNSUPPORTED): a decoder query's
 *                        position and an encoder key's measure no distance.
 *     logits: x = scale * q.k; soft cap c > 0: x = c * tanh(x / c);
 *             ALiBi: x -= slope[head] * |j - q_pos(i)|, which is vLLM's
 *             slope * (j - q_pos(i)) wherever the causal mask leaves key j, and
 *             FlashAttention-2's symmetric bias for non-causal attention. The lse
 *             (below) is of these logits: FlashAttention-2's causal lse under
 *             ALiBi (bias slope * j) is this one plus slope * q_pos(i).
 *   A query row that sees no key at all (a causal prompt with q_len > k_len,
 *   whose first q_len - k_len rows lie before the first key, or k_len = 0)
 *   gets an output of zeros.
 *
 * SHAPES: packed tensors are [tokens, heads, head_size] with the element stride 1,
 * rows (tokens) `*_stride` elements apart (0 = heads * head_size); outputs are
 * contiguous and in the query dtype. Head sizes: any multiple of 8 up to 256.
 * Query dtypes f32, f16, bf16 (f16/bf16 run on tensor cores); the cache dtype
 * equals the query dtype or is fp8 (e4m3/e5m2 with kv.k_scale/v_scale). Any
 * positive block size, any cache layout but PA_LAYOUT_COMBINED.
 *
 * DEVICE DATA AND BOUNDS: lengths, start locations, block tables and scales are
 * read on the device (a captured CUDA graph replays with new contents). The
 * host passes upper bounds (max_query_len, max_seq_len, token counts) that size
 * the grid. A sequence whose device data break those bounds (a q_len above
 * max_query_len or seq_len, start locations out of order or past the token
 * count, a block id outside the cache) is skipped: its output rows are not
 * written. Out of order includes rows that start before an earlier
 * sequence's rows end (query_start_loc[s] or cu_seqlens_q[s] below entry i
 * for some 0 < i < s, a skipped sequence's end too, as in ragged.h), so no two
 * sequences write one row. The CPU references read the same data on the host
 * and reject it.
 */
#ifndef PAGEDATTN_PREFILL_H
#define PAGEDATTN_PREFILL_H

#include "pagedattn/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* vLLM's AttentionType. Stable numbers. */
typedef enum pa_attn_type {
    PA_ATTN_DECODER = 0,         /* causal self-attention */
    PA_ATTN_ENCODER = 1,         /* non-causal self-attention (encoder of an encoder/decoder model) */
    PA_ATTN_ENCODER_ONLY = 2,    /* non-causal self-attention (encoder-only model) */
    PA_ATTN_ENCODER_DECODER = 3, /* cross-attention: decoder queries over encoder keys, non-causal */
} pa_attn_type;

/* Attention sinks (gpt-oss), in every params struct below: sinks[h], f32 in
 * device memory (host memory for the references), is one more logit of head
 * h's softmax, in the units of the scores (after scale, soft cap and ALiBi),
 * whose value is zero: a row's output is sum_j e^x_j v_j / (e^sinks[h] +
 * sum_j e^x_j) over its visible keys. -inf is no sink; a row that sees no key
 * still gives zeros. The references refuse a NaN sink. */

/* Log-sum-exp output (FlashAttention's softmax_lse), in the context and prompt
 * params: `lse`, when not NULL, f32 [num_heads, tokens] (head-major, row
 * lse[h * tokens + t]; tokens = num_tokens or num_q_tokens) in device memory
 * (host memory for the references), 4-byte aligned, gets for every query row
 * it writes the natural log of that row's softmax denominator,
 *     lse = log(e^sinks[h] + sum_j e^x_j)   over the row's visible keys,
 * in the units of the scores (after scale, soft cap and ALiBi; the sink term
 * only with sinks). A row with neither key nor sink gets -inf (its output is
 * zeros); one with a sink but no key gets sinks[h]. A row's output and lse are
 * one partial attention state: two calls over disjoint keys of the same
 * queries (a shared prefix and each sequence's own tokens, say: cascade
 * attention) merge with pa_merge_attn_states (merge.h, whose default lse
 * layout this is) into attention over all of the keys. Give the sinks to one
 * of the two calls only. lse must not overlap out, query, key or value; rows
 * the call skips (see DEVICE DATA AND BOUNDS) leave their lse unwritten.
 * lse_head_stride and lse_token_stride lay it out as pa_merge_attn_states'
 * lse (merge.h): (head h, token t) at h * lse_head_stride + t *
 * lse_token_stride floats, 0 giving the default (head stride tokens, token
 * stride 1: [num_heads, tokens]); FlashInfer's [tokens, num_heads] is head
 * stride 1 and token stride num_heads (its lse values are base 2, these
 * natural logs: merge.h). Distinct pairs must fall on distinct
 * floats; floats between them are not written. The overlap checks take the
 * layout's whole span, first element to last, gaps included. A sink far
 * above a row's logits (where e^(sink - max) overflows f32, past about 88)
 * gives an lse of the sink itself, which the formula above is to the float
 * there, and zeros; a +inf sink gives +inf, which pa_merge_attn_states reads
 * as a part with no key (the output is zeros either way). */

/* ---- context (prefix) attention -------------------------------------------------- */

/* Cache only (cascade attention's shared prefix): with cache_only = 1 the
 * query rows of sequence s attend to its seq_lens[s] cached tokens alone, all
 * of them (no mask): key and value are not read (NULL is allowed), a
 * query_len may exceed seq_len (max_query_len may exceed max_seq_len), and
 * seq_len 0 gives zeros (max_seq_len, a bound, stays >= 1 even when every
 * seq_len is 0: an empty shared prefix passes 1). ALiBi and a sliding window,
 * which need the queries' positions among the keys, are refused. A cascade runs the shared prefix so,
 * as one sequence of all the batch's query tokens over the prefix's blocks
 * with lse, then each sequence's own keys as usual (cache_only 0, its block
 * table row starting past the prefix's blocks, seq_lens less the prefix),
 * also with lse, and merges the two with pa_merge_attn_states (merge.h). */

typedef struct pa_context_attention_params {
    void *out;                      /* [num_tokens, num_heads, head_size], q_dtype, contiguous */
    const void *query;              /* [num_tokens, num_heads, head_size], q_dtype; rows q_stride apart */
    const void *key;                /* [num_tokens, kv.num_kv_heads, head_size], q_dtype: K of the new tokens */
    const void *value;              /* [num_tokens, kv.num_kv_heads, head_size], q_dtype: V of the new tokens */
    int64_t q_stride;               /* elements between query rows; 0 = num_heads * head_size */
    int64_t k_stride;               /* elements between key rows; 0 = num_kv_heads * head_size */
    int64_t v_stride;               /* elements between value rows; 0 = num_kv_heads * head_size */
    pa_dtype q_dtype;               /* f32, f16 or bf16: query, key, value and out */
    pa_kv_cache kv;                 /* the cached context; any layout but PA_LAYOUT_COMBINED */
    const int32_t *block_tables;    /* [num_seqs, block_table_stride]; the first
                                       cdiv(context_len, block_size) entries are read */
    int32_t block_table_stride;     /* max_num_blocks_per_seq */
    const int32_t *query_start_loc; /* [num_seqs + 1]: sequence s owns tokens
                                       [query_start_loc[s], query_start_loc[s + 1]) */
    const int32_t *seq_lens;        /* [num_seqs]: context_len + query_len of each sequence */
    int32_t num_seqs;               /* <= 65535 */
    int32_t num_heads;              /* query heads; a multiple of kv.num_kv_heads, <= 65535 */
    int32_t num_tokens;             /* rows of query/key/value/out; query_start_loc[num_seqs] <= this */
    int32_t max_query_len;          /* host-side bound on every query_len (sizes the grid); times the GQA
                                       group (num_heads / kv.num_kv_heads) at most 2^31 - 257 */
    int32_t max_seq_len;            /* host-side bound on every seq_len; >= max_query_len; at most 2^31 - 257 */
    float scale;                    /* softmax scale, usually 1/sqrt(head_size); logits bounded as decode.h's */
    const float *alibi_slopes;      /* [num_heads] or NULL */
    int32_t sliding_window;         /* 0 = off, else W > 0 (see the masks above) */
    float soft_cap;                 /* 0 = off, else in [FLT_MIN, 2^126] (decode.h) */
    const float *sinks;             /* [num_heads] or NULL: attention sinks (see above) */
    float *lse;                     /* [num_heads, num_tokens] f32 or NULL: log-sum-exp (see above) */
    int32_t cache_only;             /* 0, or 1: attend to the cache alone (see above) */
    int64_t lse_head_stride;        /* lse's layout (see above); 0 = num_tokens */
    int64_t lse_token_stride;       /* 0 = 1 */
} pa_context_attention_params;

/* Checks every field that can be checked without reading device memory.
 * PA_ERR_INVALID_ARGUMENT or PA_ERR_UNSUPPORTED with a message. Here and in
 * the prompt and mixed entries, what a call writes shares no byte with what
 * it reads: out and lse apart from the query, key and value rows, the cache's
 * key and value buffers and fp8 scales, block_tables (whole rows of
 * block_table_stride), query_start_loc, seq_lens (cu_seqlens_q and _k for
 * prompts), alibi_slopes and sinks, and from each other (the mixed entry's
 * workspace too, over both parts' buffers); an overlap is
 * PA_ERR_INVALID_ARGUMENT ("context_attention: output out overlaps the input
 * kv.key"), checked after every other field. Tiles write their rows while
 * other CTAs still read these; out over its own query rows is refused too. */
PA_API pa_status pa_context_attention_validate(const pa_context_attention_params *p);

/* GPU entry: one launch, asynchronous on `stream`, no workspace. On a device
 * whose CTAs hold 99 KiB of shared memory (compute capability 8.6, 8.9,
 * 12.x), the 16-bit kernel at heads 97-128 and 225-256 runs with key tiles of
 * half the width (the full ones take 104 and 106 KiB); every prefill entry
 * does. A kernel past a device's limit is refused with PA_ERR_UNSUPPORTED
 * naming the bytes, with nothing launched. */
PA_API pa_status pa_context_attention(const pa_context_attention_params *p, pa_stream stream);

/* CPU reference (all pointers host memory). Plain loops, f64 softmax: the
 * specification. Also checks the start locations, lengths and every block id
 * of each sequence's context (those wholly before a sliding window too: the
 * GPU entry skips a sequence with any out of range, read or not), an fp8
 * cache's k_scale / v_scale (finite and > 0) and the ALiBi slopes (finite),
 * before writing anything. */
PA_API pa_status pa_ref_context_attention(const pa_context_attention_params *p);

/* ---- varlen prompt attention (no cache) ----------------------------------------- */

typedef struct pa_prompt_attention_params {
    void *out;                   /* [num_q_tokens, num_heads, head_size], dtype, contiguous */
    const void *query;           /* [num_q_tokens, num_heads, head_size]; rows q_stride apart */
    const void *key;             /* [num_k_tokens, num_kv_heads, head_size]; rows k_stride apart */
    const void *value;           /* [num_k_tokens, num_kv_heads, head_size]; rows v_stride apart */
    int64_t q_stride;            /* 0 = num_heads * head_size */
    int64_t k_stride;            /* 0 = num_kv_heads * head_size */
    int64_t v_stride;            /* 0 = num_kv_heads * head_size */
    pa_dtype dtype;              /* f32, f16 or bf16: every tensor */
    pa_attn_type attn_type;      /* PA_ATTN_DECODER is causal, the others are not */
    const int32_t *cu_seqlens_q; /* [num_seqs + 1]: queries of sequence s are rows
                                    [cu_seqlens_q[s], cu_seqlens_q[s + 1]) */
    const int32_t *cu_seqlens_k; /* [num_seqs + 1] for the keys; NULL = cu_seqlens_q
                                    (self-attention; required for PA_ATTN_ENCODER_DECODER) */
    int32_t num_seqs;            /* <= 65535 */
    int32_t num_heads;           /* a multiple of num_kv_heads, <= 65535 */
    int32_t num_kv_heads;
    int32_t head_size;
    int32_t num_q_tokens;      /* rows of query/out */
    int32_t num_k_tokens;      /* rows of key/value; ignored when cu_seqlens_k is NULL */
    int32_t max_seqlen_q;      /* host-side bound on every query length; times the GQA group
                                  (num_heads / num_kv_heads) at most 2^31 - 257 */
    int32_t max_seqlen_k;      /* host-side bound on every key length, at most 2^31 - 257; ignored when
                                * cu_seqlens_k is NULL */
    float scale;               /* logits bounded as decode.h's scale */
    const float *alibi_slopes; /* [num_heads] or NULL */
    int32_t sliding_window;    /* 0 = off */
    float soft_cap;            /* 0 = off, else in [FLT_MIN, 2^126] (decode.h) */
    const float *sinks;        /* [num_heads] or NULL: attention sinks (see above) */
    float *lse;                /* [num_heads, num_q_tokens] f32 or NULL: log-sum-exp (see above) */
    int64_t lse_head_stride;   /* lse's layout (see above); 0 = num_q_tokens */
    int64_t lse_token_stride;  /* 0 = 1 */
} pa_prompt_attention_params;

PA_API pa_status pa_prompt_attention_validate(const pa_prompt_attention_params *p);
PA_API pa_status pa_prompt_attention(const pa_prompt_attention_params *p, pa_stream stream);
/* CPU reference: also checks the start locations and the ALiBi slopes (finite). */
PA_API pa_status pa_ref_prompt_attention(const pa_prompt_attention_params *p);

/* ---- which prefill kernel runs (process-wide) ----------------------------------
 *
 * PA_PREFILL_PATH_MMA runs the mma.sync kernels (sm_80 and later).
 * PA_PREFILL_PATH_HOPPER asks for the sm_90a kernel (warp-specialised, wgmma,
 * mbarrier pipeline) wherever it applies: an sm_90 device, a library built for
 * sm_90a (gpu_archs containing 90a), f16 or bf16, head sizes up to 128, in
 * context mode a cache in a flash layout or vLLM's (of the query dtype or fp8)
 * and 16-byte aligned rows (vLLM blocks of a multiple of 8, or 16 for fp8),
 * 16-byte aligned query and new key/value rows and a 4-byte aligned output;
 * head sizes 129..256 for prompts and for caches in a flash layout, of the
 * query dtype or fp8 (since 2026-11-30, interpret mode only); other launches keep
 * the mma.sync kernels. PA_PREFILL_PATH_AUTO (the
 * default) does the same: on an H100 the Hopper kernel passed its GPU tests and
 * the four compute-sanitizer tools, and ran prompt attention at 1.6x and
 * context attention at 1.3-1.8x the mma.sync kernel's rate
 * (benchmarks/results/gpu-report-2026-11-27-H100.md). PA_PREFILL_PATH_MMA
 * keeps every launch on mma.sync.
 *
 * PA_PREFILL_PATH_HOPPER_FP8 is PA_PREFILL_PATH_HOPPER, except that context
 * attention over an e4m3 cache at head sizes 97..128 runs both products on
 * FP8 tensor cores (e4m3 wgmma, twice the 16-bit rate), as FlashAttention-3's
 * FP8 path does: each query row is quantised to e4m3 with a factor of its own
 * (its largest |q| / 448, the largest |q| taken as at least 2^-117 so the
 * factor stays a normal float), the probabilities are rounded to e4m3 (times
 * 256, so the small ones stay normal; the softmax divides by the sum of the
 * rounded values, taken on the tensor cores), and new keys and values are
 * quantised with 1 / k_scale and 1 / v_scale, as pa_reshape_and_cache stores
 * them (a scale under 2^-126, subnormal, counts as 2^-126 there). Results
 * are then within pa_tolerance_fp8_path(), not pa_tolerance_for(): the price
 * of the rate. Other launches run as under PA_PREFILL_PATH_HOPPER.
 *
 * The Hopper kernel runs one CTA per work item (128 query rows of a sequence
 * and KV head). The environment variable PAGEDATTN_PREFILL_PERSISTENT, read at
 * each launch, asks for persistent CTAs instead (FlashAttention-3's
 * scheduling: each CTA takes its share of the items in turn, an item's first
 * loads under the previous one's last tiles and output): "on" for one per SM,
 * a number n > 0 for at most n; "off", 0 or unset for one per item. Opt-in
 * until a GPU has measured it (since 2026-11-28, interpret mode only); outputs
 * are bitwise the same either way.
 *
 * When pa_set_prefill_path was never called, the environment variable
 * PAGEDATTN_PREFILL_PATH (auto, mma, hopper or hopper-fp8) decides; an unknown
 * value is AUTO. Once it is called, the variable is never read again (AUTO is
 * AUTO, not the variable's choice). The path is the process's, every thread's
 * launches take it, and a launch captured into a CUDA graph keeps the kernel
 * of its capture. PA_ERR_INVALID_ARGUMENT for a value outside the enum. */
typedef enum pa_prefill_path {
    PA_PREFILL_PATH_AUTO = 0,
    PA_PREFILL_PATH_MMA = 1,
    PA_PREFILL_PATH_HOPPER = 2,
    PA_PREFILL_PATH_HOPPER_FP8 = 3
} pa_prefill_path;
PA_API pa_status pa_set_prefill_path(pa_prefill_path path);
PA_API pa_prefill_path pa_get_prefill_path(void);
/* 1 when the Hopper kernel can run on the current device: an sm_90 GPU and a
 * library built for 90a. 0 otherwise (no GPU included). A query, no launch. */
PA_API int pa_prefill_hopper_available(void);

/* ---- mixed prefill + decode batch (vLLM's chunked-prefill layout) ------------------
 *
 *   |<-- num_prefill_tokens -->|<-- num_decode_tokens -->|
 *   |prefill_0|...|prefill_P-1|decode_0|...|decode_D-1|
 *
 * Sequences [0, num_prefills) are prefills (context attention over the cache
 * plus their new K/V); sequences [num_prefills, num_prefills + num_decode_tokens)
 * are decodes of one token each, whose K/V is already in the cache (write it
 * with pa_reshape_and_cache first, as vLLM does). The prefill part runs on the
 * context-attention kernel and the decode part on pa_paged_attention_decode, so
 * a batch with decode tokens must suit both (head and block sizes the decode
 * op supports; a batch of prefills alone is held to context attention's rules
 * only), and both parts are validated before either is launched. Device data
 * are held to each part's own rules: a prefill sequence whose data break its
 * bounds is skipped, its rows not written (DEVICE DATA AND BOUNDS above); a
 * decode's seq_len out of range gives its row zeros, and a block id outside
 * the cache counts that block's tokens as masked (decode.h). Its lse (optional) is
 * the prefill entries' over all of the batch's tokens, [num_heads,
 * num_prefill_tokens + num_decode_tokens] by default: the prefill rows' as
 * context attention writes them, then each decode sequence's as decode does,
 * at its token. */
typedef struct pa_mixed_attention_params {
    void *out;         /* [num_prefill_tokens + num_decode_tokens, num_heads, head_size], contiguous */
    const void *query; /* [num_prefill_tokens + num_decode_tokens, num_heads, head_size]; rows q_stride apart */
    const void *key;   /* [num_prefill_tokens, num_kv_heads, head_size]: new K of the prefill tokens */
    const void *value; /* [num_prefill_tokens, num_kv_heads, head_size] */
    int64_t q_stride, k_stride, v_stride; /* as in pa_context_attention_params */
    pa_dtype q_dtype;
    pa_kv_cache kv;
    const int32_t *block_tables; /* [num_prefills + num_decode_tokens, block_table_stride] */
    int32_t block_table_stride;
    const int32_t *seq_lens;        /* [num_prefills + num_decode_tokens] */
    const int32_t *query_start_loc; /* [num_prefills + 1] (entries past it are not read), starting at 0 */
    int32_t num_prefills;
    int32_t num_prefill_tokens;    /* query_start_loc[num_prefills] <= this */
    int32_t num_decode_tokens;     /* decode sequences */
    int32_t num_heads;             /* <= 65535 (the prefill part's limit, even with no prefills) */
    int32_t max_prefill_query_len; /* bound on the prefills' query lengths */
    int32_t max_prefill_seq_len;   /* bound on the prefills' seq_lens */
    int32_t max_decode_seq_len;    /* bound on the decodes' seq_lens */
    float scale;                   /* logits bounded as decode.h's scale */
    const float *alibi_slopes;
    int32_t sliding_window;
    float soft_cap;           /* 0 = off, else in [FLT_MIN, 2^126] (decode.h) */
    const float *sinks;       /* [num_heads] or NULL: attention sinks, both parts */
    float *lse;               /* [num_heads, num_prefill_tokens + num_decode_tokens] f32 or NULL: log-sum-exp */
    int64_t lse_head_stride;  /* lse's layout (as context attention's); 0 = the batch's tokens */
    int64_t lse_token_stride; /* 0 = 1 */
} pa_mixed_attention_params;

PA_API pa_status pa_mixed_attention_validate(const pa_mixed_attention_params *p);
/* Bytes of device scratch pa_mixed_attention needs (the decode part's). p is
 * validated whole first (pa_mixed_attention_validate): its pointers must be
 * those of a real call, not placeholders. */
PA_API pa_status pa_mixed_attention_workspace_size(const pa_mixed_attention_params *p, size_t *bytes);
/* Two launches on `stream` (prefill part, then decode part). The workspace
 * is checked as the decode entry's: PA_ERR_WORKSPACE_TOO_SMALL when shorter
 * than pa_mixed_attention_workspace_size, whatever the pointer; when the
 * decode part needs any, non-NULL and 16-byte aligned. */
PA_API pa_status pa_mixed_attention(const pa_mixed_attention_params *p, void *workspace, size_t workspace_bytes,
                                    pa_stream stream);
/* CPU reference: pa_ref_context_attention on the prefills, pa_ref_paged_decode on the decodes. */
PA_API pa_status pa_ref_mixed_attention(const pa_mixed_attention_params *p);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_PREFILL_H */
