/* libpagedattn: batch shaping on the host (vLLM's v1 attention backend utils).
 *
 * What a server does with its scheduler's batch before it builds kernel
 * metadata:
 *   - reorder the persistent batch so that "decodes" (requests with at most
 *     decode_threshold scheduled tokens) come first, with the fewest swaps;
 *   - find the decode/prefill boundary of a reordered batch;
 *   - split each request into "virtual" requests of at most attn_chunk_size
 *     tokens for chunked local attention (Llama-4 style), with their own
 *     query/key lengths and block-table rows.
 *
 * All functions run on the host over host arrays, allocate nothing, check every
 * input before writing anything, and return PA_ERR_INVALID_ARGUMENT with a
 * message naming the request index and field on bad input.
 */
#ifndef PAGEDATTN_BATCH_H
#define PAGEDATTN_BATCH_H

#include "pagedattn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called once per swap, in order, with the two request indices (a < b). */
typedef void (*pa_swap_fn)(void *user, int32_t a, int32_t b);

/* Reorders a batch so that every request with num_scheduled_tokens[i] <=
 * decode_threshold (a decode) precedes every other request (a prefill), using
 * vLLM's minimal swap sequence: with num_decodes decodes, for i = 1, 2, ...
 * up to min(num_decodes, num_prefills), the i-th decode counted from the back
 * of the batch is swapped with the i-th prefill counted from the front, and the
 * loop stops at the first such decode already inside [0, num_decodes). The
 * swaps are disjoint pairs (a prefill index below num_decodes, a decode index
 * at or above it), so the order in which they are applied does not matter.
 *
 *   num_scheduled_tokens  [num_reqs] scheduled tokens per request, each >= 0; the
 *                         total must fit in int32. May be NULL when num_reqs == 0.
 *   decode_threshold      >= 0 (vLLM's default is 1).
 *   swap, user            optional callback told each swap (swap the request
 *                         states in the caller's persistent batch there).
 *   perm                  optional [num_reqs]: each swap exchanges perm[a] and
 *                         perm[b]. The caller initialises it (identity gives
 *                         new position -> old request index). It shares no
 *                         byte with num_scheduled_tokens or tokens_out
 *                         (PA_ERR_INVALID_ARGUMENT: each swap would be undone).
 *   tokens_out            optional [num_reqs]: receives num_scheduled_tokens with
 *                         the swaps applied. It may be num_scheduled_tokens
 *                         itself (in place) or a separate array; one that
 *                         partially overlaps it is PA_ERR_INVALID_ARGUMENT.
 *   modified              optional: 1 when at least one swap happened, else 0.
 *
 * Needs no workspace: the decode and prefill positions are found with two
 * cursors (one walking down from the back, one walking up from the front),
 * which visit exactly the indices vLLM's two lists would hold.
 * On error nothing is written and the callback is not called. */
PA_API pa_status pa_reorder_batch_to_split_decodes_and_prefills(const int32_t *num_scheduled_tokens, int32_t num_reqs,
                                                                int32_t decode_threshold, pa_swap_fn swap, void *user,
                                                                int32_t *perm, int32_t *tokens_out, int *modified);

/* Decode/prefill boundary of a reordered batch. Order: decodes first, then
 * prefills (vLLM v1, seed 002). pa_build_prompt_decode_metadata (metadata.h)
 * wants the other order, prefills first (seed 003); its header shows the two
 * side by side. */
typedef struct pa_batch_split {
    int32_t num_decodes;        /* requests with query_len <= decode_threshold (at the front) */
    int32_t num_prefills;       /* the rest */
    int32_t num_decode_tokens;  /* query_start_loc[num_decodes] */
    int32_t num_prefill_tokens; /* query_start_loc[num_reqs] - num_decode_tokens */
} pa_batch_split;

/* From query_start_loc [num_reqs + 1] (query_start_loc[0] == 0, non-decreasing)
 * finds the decode/prefill boundary, as vLLM's split_decodes_and_prefills. A
 * batch that is not reordered (a decode after a prefill) is
 * PA_ERR_INVALID_ARGUMENT naming the offending request, never a wrong answer.
 * decode_threshold >= 0. query_start_loc may be NULL only when num_reqs == 0. */
PA_API pa_status pa_split_decodes_and_prefills(const int32_t *query_start_loc, int32_t num_reqs,
                                               int32_t decode_threshold, pa_batch_split *out);

/* Chunked local attention: each request's queries only see keys in their own
 * attn_chunk_size-aligned chunk of the sequence. Each (request, chunk touched
 * by its queries) pair becomes one virtual request:
 *
 *   seqlens_q_local[v]    queries of the request that lie in that chunk
 *   cu_seqlens_q_local    [nv + 1] exclusive prefix sum of seqlens_q_local (starts at 0)
 *   seqlens_k_local[v]    keys it attends: attn_chunk_size for every chunk but the
 *                         request's last, seq_len - chunk_start for the last
 *   block_table_local     [nv, pages] with pages = attn_chunk_size / block_size:
 *                         row v holds block_table[req][chunk_start/block_size + j],
 *                         the column clipped to block_table_width - 1
 *
 * Example (attn_chunk_size 4, block_size 2, q_seqlens [4,10,5], seq_lens
 * [6,17,9], a 3x10 table holding 0..29): seqlens_q_local [2,2,1,4,4,1,4,1],
 * cu_seqlens_q_local [0,2,4,5,9,13,14,18,19], seqlens_k_local
 * [4,2,4,4,4,1,4,1], block_table_local rows [0,1] [2,3] [12,13] [14,15]
 * [16,17] [18,19] [22,23] [24,25].
 *
 * Requirements: attn_chunk_size > 0, block_size > 0, attn_chunk_size a multiple
 * of block_size, query lengths >= 0 and seq_lens[i] >= max(1, query_len). A
 * request with no query tokens (batch padding) gets one virtual request: the
 * chunk holding its last key, with 0 queries.
 *
 * The block table by default is vLLM's, every column of every row. Most of it
 * is never read: a virtual request with seqlens_k_local[v] keys is attended
 * through its first ceil(seqlens_k_local[v] / block_size) columns only (the
 * decode kernels read the pages holding keys < seq_len, context/prefill the
 * pages holding cached keys, the ragged kernel pages < ceil(kv_len / page)):
 * a decode with 2,000 keys reads 125 of the 512 columns that attn_chunk_size
 * 8192 and block_size 16 give its row. PA_LOCAL_TABLE_USED writes only the
 * columns read (pa_local_attention_out.table_fill). */
typedef struct pa_local_attention_params {
    int32_t attn_chunk_size;
    int32_t block_size; /* tokens per KV-cache block */
    int32_t num_reqs;
    const int32_t *query_start_loc; /* [num_reqs + 1], >= 0, non-decreasing (a slice of a longer one is fine) */
    const int32_t *seq_lens;        /* [num_reqs] keys per request, new tokens included */
    const int32_t *block_table;     /* [num_reqs, block_table_stride] physical block ids */
    int32_t block_table_width;      /* valid columns per row (>= 1 when num_reqs > 0) */
    int32_t block_table_stride;     /* elements between rows; 0 = block_table_width */
} pa_local_attention_params;

/* What the builder writes into block_table_local (pa_local_attention_out.table_fill). */
typedef enum pa_local_table_fill {
    /* Every column of every row, as vLLM: row v, column j holds
     * block_table[req][min(chunk_start / block_size + j, block_table_width - 1)]. */
    PA_LOCAL_TABLE_FULL = 0,
    /* Only the columns a kernel reads: row v's first ceil(seqlens_k_local[v] /
     * block_size) columns, each equal to PA_LOCAL_TABLE_FULL's. The other
     * columns are not written and keep what the buffer held (they are not part
     * of the result: a consumer that reads pages past a sequence's keys needs
     * PA_LOCAL_TABLE_FULL). Every row but a request's last is written whole. */
    PA_LOCAL_TABLE_USED = 1,
} pa_local_table_fill;

typedef struct pa_local_attention_out {
    int32_t capacity;            /* virtual requests the arrays below can hold */
    int32_t *seqlens_q_local;    /* [capacity] */
    int32_t *cu_seqlens_q_local; /* [capacity + 1] */
    int32_t *seqlens_k_local;    /* [capacity] */
    int32_t *block_table_local;  /* [capacity, pages_per_local_batch], rows contiguous */
    int32_t table_fill;          /* pa_local_table_fill; 0 (zero-initialised) = PA_LOCAL_TABLE_FULL */
} pa_local_attention_out;

/* Number of virtual requests (nv) and pages per virtual request for output
 * sizing. Either output pointer may be NULL. Validates like the builder. */
PA_API pa_status pa_local_attention_size(const pa_local_attention_params *p, int32_t *num_virtual_batches,
                                         int32_t *pages_per_local_batch);

/* Fills the four arrays described above (block_table_local as
 * out->table_fill says); *num_virtual_batches (optional) gets nv.
 * out->capacity < nv, a table_fill other than PA_LOCAL_TABLE_FULL or
 * PA_LOCAL_TABLE_USED, and an output array sharing a byte (of what it is
 * written) with an input or another output are PA_ERR_INVALID_ARGUMENT.
 * Nothing is written on error. */
PA_API pa_status pa_make_local_attention_virtual_batches(const pa_local_attention_params *p,
                                                         const pa_local_attention_out *out,
                                                         int32_t *num_virtual_batches);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_BATCH_H */
