/* The cuBLAS baseline: attention over a paged cache as a careful but naive GPU
 * user writes it with a BLAS library, printed beside every attention figure of
 * `pagedattn bench` and usable as a second GPU reference for shapes too large
 * for the CPU reference.
 *
 * Five launches on the legacy default stream:
 *   1. gather   the paged K and V of every sequence (any layout, any cache dtype,
 *               fp8 dequantised with k_scale / v_scale) into contiguous
 *               Kc, Vc [num_seqs * kv_heads, max_kv_len, head] in the compute
 *               dtype (the query dtype), rows past kv_len zeroed;
 *      and      the queries into Qc [num_seqs * kv_heads, max_q_len * group, head]:
 *               the `group` query heads sharing a KV head become extra rows of
 *               one matrix, so GQA costs no K/V copies (what SDPA's enable_gqa
 *               does), rows past q_len zeroed;
 *   2. GEMM     S = Qc . Kc^T, one cublasGemmStridedBatchedEx over
 *               num_seqs * kv_heads matrices, f32 accumulate, f32 scores;
 *   3. softmax  one CTA per score row: scale, soft cap, alibi, masks (bottom-right
 *               causal, sliding window, local chunks, kv_len), max, exp, sum (the
 *               head's sink joins the max and the sum); the probabilities P are
 *               written in the compute dtype;
 *   4. GEMM     O = P . Vc, f32 output;
 *   5. scatter  O back to out [num_tokens, num_heads, head] in the query dtype.
 * Everything is padded to max_q_len x max_kv_len per sequence, as a batched
 * GEMM needs: a batch with very different lengths pays for the longest one.
 *
 * Masking follows the library's ops: query row t of sequence s (q_len rows)
 * sits at position q_pos = kv_len - q_len + t; key k_pos is visible when
 *   k_pos < kv_len, k_pos <= q_pos (bottom-right causal; decode has q_len 1;
 *   off with non_causal),
 *   sliding_window == 0 or q_pos - k_pos < sliding_window,
 *   local_chunk == 0 or k_pos / local_chunk == q_pos / local_chunk;
 * logits are x = scale * q.k, then soft_cap * tanh(x / soft_cap) when soft_cap
 * > 0, then + alibi_slopes[h] * (k_pos - q_pos) when slopes are given. With
 * sinks, head h's softmax takes one more logit, sinks[h], that has no value (the
 * ops' definition, decode.h): P_k = e^x_k / (e^sinks[h] + sum_j e^x_j); -inf is
 * no sink, +inf gives the head zeros. A row with no visible key outputs zeros.
 *
 * Every pointer in pa_baseline_problem is DEVICE memory; the int fields are
 * host values. The baseline is a benchmark tool, not library API: it allocates
 * its workspace and a cuBLAS handle in pa_baseline_create. */
#ifndef PA_BASELINE_H
#define PA_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "bench_gpu.h"
#include "pagedattn/pagedattn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pa_baseline_problem {
    void *out;                   /* [num_tokens, num_heads, head_size], q_dtype */
    const void *q;               /* [num_tokens, num_heads, head_size], q_dtype; rows q_stride apart */
    int64_t q_stride;            /* elements between query rows; 0 = num_heads * head_size */
    pa_dtype q_dtype;            /* f32, f16, bf16: also the GEMM input dtype */
    pa_kv_cache kv;              /* any layout; k_scale / v_scale device floats (or NULL). kv.key may be
                                    NULL when every key comes from new_k (num_kv_heads, head_size still set) */
    const int32_t *block_tables; /* [num_seqs, block_table_stride] */
    int32_t block_table_stride;
    const int32_t *cu_q_lens; /* [num_seqs + 1] query rows per sequence; NULL = one row per sequence (decode) */
    /* Keys per sequence (kv_len), new tokens included: kv_lens[s]; when kv_lens
     * is NULL, cu_k_lens[s+1] - cu_k_lens[s], or the query length when that is
     * NULL too (self-attention over the new tokens only). */
    const int32_t *kv_lens;   /* [num_seqs] or NULL */
    const int32_t *cu_k_lens; /* [num_seqs + 1] or NULL: rows of new_k / new_v per sequence */
    /* Optional K/V of new tokens that are not in the cache (context attention,
     * prompt attention): the last n keys of sequence s, n = its cu_k_lens span
     * (or its query length), are rows cu_k_lens[s] (or cu_q_lens[s]) onward of
     * these; the keys before them come from the cache. NULL = all in the cache. */
    const void *new_k;    /* [rows, kv_heads, head_size], q_dtype; rows new_k_stride apart */
    const void *new_v;    /* same shape, rows new_v_stride apart */
    int64_t new_k_stride; /* 0 = kv_heads * head_size */
    int64_t new_v_stride;
    int32_t num_seqs;
    int32_t num_tokens; /* query rows in q / out (num_seqs for decode) */
    int32_t num_heads;  /* multiple of kv.num_kv_heads */
    int32_t max_q_len;  /* host upper bounds: they size the padded matrices */
    int32_t max_kv_len;
    float scale;
    float soft_cap;
    int32_t sliding_window;
    int32_t local_chunk;
    int32_t non_causal;        /* 1 = no causal mask (encoder and cross attention) */
    const float *alibi_slopes; /* [num_heads] or NULL */
    const float *sinks;        /* [num_heads] or NULL: attention sinks (above) */
} pa_baseline_problem;

typedef struct pa_baseline pa_baseline;

/* Device bytes the baseline allocates for this problem (padded Q/K/V copies,
 * scores, probabilities, output), or 0 if the problem is invalid. */
size_t pa_baseline_workspace_bytes(const pa_baseline_problem *pb);

/* Validates the problem, allocates the workspace and a cuBLAS handle. Returns
 * 0 on success; 1 with one line in `why` (may be NULL) otherwise, e.g. when the
 * workspace would not fit in free device memory. The problem is copied. */
int pa_baseline_create(const pa_baseline_problem *pb, pa_baseline **out, char *why, size_t why_len);
/* Enqueues the five steps on the default stream. 0 on success. */
int pa_baseline_launch(pa_baseline *b);
void pa_baseline_destroy(pa_baseline *b);

/* Create + pa_bench_time_gpu (warm-up, L2 flush, events) + destroy. Returns 0
 * and fills *t, or 1 with the reason in `why` (baseline skipped). */
int pa_baseline_time(const pa_baseline_problem *pb, int warmup, int iters, pa_timing *t, char *why, size_t why_len);

/* Second reference: runs the baseline once and copies out to the host as
 * floats, out_host [num_tokens * num_heads * head_size]. pb->out may be NULL
 * (the baseline then uses its own buffer). Returns 0 on success. */
int pa_baseline_run(const pa_baseline_problem *pb, float *out_host, char *why, size_t why_len);

/* Baseline problems from the ops' descriptors (every pointer device memory):
 * the same attention, for the baseline column and as a second reference.
 *   decode   block-sparse settings are not modelled;
 *   ragged   the host values the descriptor keeps on the device are passed in
 *            (num_seqs, query rows, longest query and key lengths); a mild
 *            mask_value (> PA_RAGGED_HARD_MASK) is not modelled: masked keys
 *            get weight 0;
 *   context  cached context through the cache, new tokens from key/value;
 *   prompt   self-attention (cu_seqlens_k NULL) or cross attention. */
void pa_baseline_from_decode(const pa_decode_params *dev, pa_baseline_problem *pb);
void pa_baseline_from_ragged(const pa_ragged_params *dev, int32_t num_seqs, int32_t num_tokens, int32_t max_q_len,
                             int32_t max_kv_len, pa_baseline_problem *pb);
void pa_baseline_from_context(const pa_context_attention_params *dev, pa_baseline_problem *pb);
void pa_baseline_from_prompt(const pa_prompt_attention_params *dev, pa_baseline_problem *pb);

/* For the op benches: times the baseline on `pb` and puts the median into
 * r->baseline_us, or, when it cannot run (too large for free memory, ...),
 * leaves baseline_us 0 and says why in r->note (a static string). Returns 0
 * when the baseline ran. Implemented in report.c. */
struct pa_bench_row;
int pa_bench_baseline(const pa_baseline_problem *pb, int warmup, int iters, struct pa_bench_row *r);

/* `pagedattn check baseline` (check_baseline.c): the baseline against the
 * decode and ragged CPU references on the options' shape. A PA_CLI_EXIT_* code. */
struct pa_op_opts;
int pa_check_baseline(const struct pa_op_opts *o);
/* Its usage errors (a layout it cannot take, a problem past the host-memory
 * bound), checked before any GPU probe: one line and PA_CLI_EXIT_USAGE, or 0. */
int pa_check_baseline_usage(const struct pa_op_opts *o);

#ifdef __cplusplus
}
#endif
#endif
