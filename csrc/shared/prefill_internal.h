/* Private to the prefill op: the one kernel parameter block (plain C, shared by
 * csrc/ and cuda/prefill/), the selector and the launcher.
 *
 * Context and prompt attention are one kernel. A sequence has q_len queries and
 * k_len keys (query i at position k_len - q_len + i); keys [0, n_cache) come
 * from the paged cache and keys [n_cache, k_len) from packed new K/V rows
 * starting at row k_row0:
 *   context: q rows [qsl[s], qsl[s+1]), k_len = seq_lens[s], n_cache = k_len - q_len,
 *            k_row0 = qsl[s] (the new K/V rows are the query rows)
 *   prompt:  q rows [cu_q[s], cu_q[s+1]), k rows [cu_k[s], cu_k[s+1]), n_cache = 0. */
#ifndef PA_PREFILL_INTERNAL_H
#define PA_PREFILL_INTERNAL_H

#include <stdint.h>

#include "kv_index.h"
#include "pagedattn/decode.h"
#include "pagedattn/prefill.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PA_PREFILL_MAX_HEAD 256
#define PA_PREFILL_MAX_SEQS 65535

enum { PA_PREFILL_MODE_PROMPT = 0, PA_PREFILL_MODE_CONTEXT = 1 };

typedef struct pa_prefill_kparams {
    void *out;             /* [num_q_tokens, num_heads, head_size], contiguous */
    const void *query;     /* rows q_stride apart */
    const void *key_new;   /* packed keys, rows k_stride apart */
    const void *value_new; /* packed values, rows v_stride apart */
    int64_t q_stride, k_stride, v_stride;
    /* context mode: the cache */
    const void *key_cache, *value_cache;
    pa_kv_geom g;
    int32_t cache_dtype;
    int32_t num_blocks;
    pa_kv_divider block_div;        /* divides a position by g.block_size */
    pa_kv_linear kl;                /* g's row offsets as a linear form (kv_index.h) */
    const float *k_scale, *v_scale; /* fp8 caches only; NULL = 1 */
    int32_t scale_hs;               /* KV head h's scales at [h * scale_hs]: 1 per head, 0 one for all */
    const int32_t *block_tables;
    int32_t block_table_stride;
    const int32_t *seq_lens; /* context mode */
    const int32_t *cu_q;     /* [num_seqs + 1] */
    const int32_t *cu_k;     /* prompt mode: [num_seqs + 1] */
    int32_t mode;
    int32_t causal;
    int32_t q_dtype;
    int32_t num_seqs, num_heads, num_kv_heads, head_size;
    int32_t num_q_tokens, num_k_tokens;
    int32_t max_q_len, max_k_len;
    float scale;
    float soft_cap;
    const float *alibi_slopes;
    const float *sinks; /* [num_heads] or NULL: natural-log sink logits (prefill.h) */
    float *lse;         /* or NULL: the rows' log-sum-exp (prefill.h), laid out by lse_hs / lse_ts */
    int32_t window;
    /* Host-decided fast paths (pointer / stride alignment): */
    int32_t vec_q;   /* query rows 16-byte aligned: cp.async */
    int32_t vec_new; /* new K and V rows 16-byte aligned */
    int32_t cache_k; /* how cache K tiles load: PA_PREFILL_K_* */
    int32_t cache_v; /* how cache V tiles load: PA_PREFILL_V_* */
    /* Context mode: the queries' own new keys are q_len & own_mask: -1, or 0
     * with cache_only (every key cached: n_cache = k_len = seq_lens[s];
     * prefill.h). Last, so that no field above moves: the Hopper kernel's
     * HP 128 persistent instances, at their register limit, spilled 4 bytes
     * with it beside `mode` (the parameter loads pair differently). */
    int32_t own_mask;
    /* lse's layout (prefill.h): (head h, token t) at h * lse_hs + t * lse_ts. */
    int64_t lse_hs, lse_ts;
} pa_prefill_kparams;

/* Cache tile paths (host-decided from dtype, layout, block size and alignment).
 * RAW: cp.async copies the fp8 bytes to staging tiles, dequantised into the
 * compute dtype in shared memory after the barrier (K and V both, or
 * neither). VT: vLLM's value cache [blocks, heads, head, block] is V
 * transposed; its tiles are copied as they stand, [d][key], 8 (16-bit) or 16
 * (fp8) keys per chunk, so the block size must be a multiple of that. GATHER:
 * through registers (loads, dequantise, st.shared), for whatever else. */
enum { PA_PREFILL_K_GATHER = 0, PA_PREFILL_K_ASYNC = 1, PA_PREFILL_K_RAW = 2 };
enum {
    PA_PREFILL_V_GATHER = 0,
    PA_PREFILL_V_ASYNC = 1,
    PA_PREFILL_V_ASYNC_VT = 2,
    PA_PREFILL_V_RAW = 3,
    PA_PREFILL_V_RAW_VT = 4
};

/* The selector: which kernel runs (q dtype, cache dtype, head size), and so
 * whether the configuration is supported. The tensor-core kernel is
 * instantiated per padded head class (32, 64, ..., 256) and query dtype. */
typedef struct pa_prefill_kernel {
    int32_t tensor_cores; /* 1: mma.sync kernel (f16/bf16); 0: the f32 CUDA-core kernel */
    int32_t head_class;   /* padded head size of the instance */
} pa_prefill_kernel;

/* The kernel a dtype pair and head size take; an error names `op`, the entry
 * whose parameters they are. */
pa_status pa_prefill_select(const char *op, pa_dtype q_dtype, pa_dtype cache_dtype, int32_t head_size,
                            pa_prefill_kernel *out);

/* The Hopper kernel's shape rules (csrc/ops/prefill.c): f16/bf16, 16-byte
 * aligned query and new K/V rows, and in context mode a cache on the cp.async
 * paths (of the query dtype or fp8; a flash layout, or up to head 128 vLLM's
 * with its values as V^T tiles). Returns its padded head size (64, 96, 128,
 * 192 or 256), or 0 where the mma.sync kernel must run. The launcher adds the
 * device and build conditions. */
int pa_prefill_hopper_head(const pa_prefill_kparams *k);
/* The FP8 path's rules (PA_PREFILL_PATH_HOPPER_FP8): the Hopper kernel's at
 * HP 128 in context mode over an e4m3 cache. 1 where it serves the launch. */
int pa_prefill_hopper_fp8(const pa_prefill_kparams *k);
/* The counts of Hopper-kernel launches, 16-bit and FP8 path apart (tests
 * check the path ran): the launcher adds one per launch. */
void pa_prefill_hopper_counted(void);
long pa_prefill_hopper_launches(void);
void pa_prefill_hopper_fp8_counted(void);
long pa_prefill_hopper_fp8_launches(void);

/* Fill the kernel block from validated parameters (csrc/ops/prefill.c). */
void pa_prefill_kparams_from_context(pa_prefill_kparams *k, const pa_context_attention_params *p);
void pa_prefill_kparams_from_prompt(pa_prefill_kparams *k, const pa_prompt_attention_params *p);
/* The two parts of a mixed batch; 0 when the decode part's offsets overflow
 * (its pointers then NULL: pa_mixed_attention_validate refuses that). */
int pa_mixed_split(const pa_mixed_attention_params *m, pa_context_attention_params *prefill, pa_decode_params *decode);
/* The buffers the mixed entry writes (out over all tokens, the whole lse, the
 * workspace: ws NULL when not looked at) share no byte with one either part
 * reads or with each other: the prefill launch writes its rows before the
 * decode launch reads its query rows and writes its partials. Validated
 * fields. */
pa_status pa_mixed_apart(const pa_mixed_attention_params *p, const void *ws, int64_t ws_bytes);
/* What an error in the decode part's checks is prefixed with (pa_error_context):
 * their field names are the decode op's. */
#define PA_MIXED_DECODE_PART                                                                                           \
    "mixed_attention (its decode part, where num_seqs is num_decode_tokens and max_seq_len max_decode_seq_len)"
/* The same for the prefill part's checks, whose field names are context attention's. */
#define PA_MIXED_PREFILL_PART                                                                                          \
    "mixed_attention (its prefill part, where num_tokens is num_prefill_tokens, max_query_len "                        \
    "max_prefill_query_len and max_seq_len max_prefill_seq_len)"
/* The decode reference's check of its host data (csrc/reference/paged_decode.c):
 * each seq_len in 1..max_seq_len and every block id the reference reads (those
 * holding keys inside the sliding window) in 0..num_blocks-1. Rows are named
 * row0 + s, the bound max_name: the mixed reference passes its decode part
 * with the caller's row numbers. The longest seq_len goes to *max_len. */
pa_status pa_ref_decode_check_data(const pa_decode_params *p, const char *who, int row0, const char *max_name,
                                   int *max_len);

/* cuda/prefill/prefill_launch.cu: picks the instance; returns a cudaError_t as int. */
int pa_launch_prefill(const pa_prefill_kparams *p, pa_stream stream);

#ifdef __cplusplus
}
#endif
#endif
