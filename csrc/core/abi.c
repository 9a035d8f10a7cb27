/* ABI facts for bindings that mirror the public structs without a compiler
 * (the Python package's ctypes mirrors): sizeof of each public struct and the
 * offset of each field, as this library was compiled. A binding compares its
 * own layout with these at load time, so a header change cannot drift from it
 * silently. */
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "pagedattn/pagedattn.h"

typedef struct abi_field {
    const char *type;
    const char *field; /* NULL: the row gives sizeof(type) */
    size_t value;
} abi_field;

#define PA_SZ(T)                                                                                                       \
    { #T, NULL, sizeof(T) }
#define PA_OFF(T, F)                                                                                                   \
    { #T, #F, offsetof(T, F) }

static const abi_field abi_table[] = {
    PA_SZ(pa_kv_cache),
    PA_OFF(pa_kv_cache, layout),
    PA_OFF(pa_kv_cache, dtype),
    PA_OFF(pa_kv_cache, key),
    PA_OFF(pa_kv_cache, value),
    PA_OFF(pa_kv_cache, num_blocks),
    PA_OFF(pa_kv_cache, block_size),
    PA_OFF(pa_kv_cache, num_kv_heads),
    PA_OFF(pa_kv_cache, head_size),
    PA_OFF(pa_kv_cache, block_stride),
    PA_OFF(pa_kv_cache, page_stride),
    PA_OFF(pa_kv_cache, head_stride),
    PA_OFF(pa_kv_cache, k_scale),
    PA_OFF(pa_kv_cache, v_scale),
    PA_OFF(pa_kv_cache, scales_per_head),

    PA_SZ(pa_decode_params),
    PA_OFF(pa_decode_params, out),
    PA_OFF(pa_decode_params, query),
    PA_OFF(pa_decode_params, q_stride),
    PA_OFF(pa_decode_params, q_dtype),
    PA_OFF(pa_decode_params, kv),
    PA_OFF(pa_decode_params, block_tables),
    PA_OFF(pa_decode_params, block_table_stride),
    PA_OFF(pa_decode_params, seq_lens),
    PA_OFF(pa_decode_params, num_seqs),
    PA_OFF(pa_decode_params, num_heads),
    PA_OFF(pa_decode_params, max_seq_len),
    PA_OFF(pa_decode_params, scale),
    PA_OFF(pa_decode_params, alibi_slopes),
    PA_OFF(pa_decode_params, sliding_window),
    PA_OFF(pa_decode_params, soft_cap),
    PA_OFF(pa_decode_params, tp_rank),
    PA_OFF(pa_decode_params, bs_local_blocks),
    PA_OFF(pa_decode_params, bs_vert_stride),
    PA_OFF(pa_decode_params, bs_block_size),
    PA_OFF(pa_decode_params, bs_head_sliding_step),
    PA_OFF(pa_decode_params, sinks),
    PA_OFF(pa_decode_params, lse),
    PA_OFF(pa_decode_params, lse_head_stride),
    PA_OFF(pa_decode_params, lse_token_stride),

    PA_SZ(pa_kv_input),
    PA_OFF(pa_kv_input, key),
    PA_OFF(pa_kv_input, value),
    PA_OFF(pa_kv_input, dtype),
    PA_OFF(pa_kv_input, num_tokens),
    PA_OFF(pa_kv_input, key_token_stride),
    PA_OFF(pa_kv_input, key_head_stride),
    PA_OFF(pa_kv_input, value_token_stride),
    PA_OFF(pa_kv_input, value_head_stride),

    PA_SZ(pa_context_attention_params),
    PA_OFF(pa_context_attention_params, out),
    PA_OFF(pa_context_attention_params, query),
    PA_OFF(pa_context_attention_params, key),
    PA_OFF(pa_context_attention_params, value),
    PA_OFF(pa_context_attention_params, q_stride),
    PA_OFF(pa_context_attention_params, k_stride),
    PA_OFF(pa_context_attention_params, v_stride),
    PA_OFF(pa_context_attention_params, q_dtype),
    PA_OFF(pa_context_attention_params, kv),
    PA_OFF(pa_context_attention_params, block_tables),
    PA_OFF(pa_context_attention_params, block_table_stride),
    PA_OFF(pa_context_attention_params, query_start_loc),
    PA_OFF(pa_context_attention_params, seq_lens),
    PA_OFF(pa_context_attention_params, num_seqs),
    PA_OFF(pa_context_attention_params, num_heads),
    PA_OFF(pa_context_attention_params, num_tokens),
    PA_OFF(pa_context_attention_params, max_query_len),
    PA_OFF(pa_context_attention_params, max_seq_len),
    PA_OFF(pa_context_attention_params, scale),
    PA_OFF(pa_context_attention_params, alibi_slopes),
    PA_OFF(pa_context_attention_params, sliding_window),
    PA_OFF(pa_context_attention_params, soft_cap),
    PA_OFF(pa_context_attention_params, sinks),
    PA_OFF(pa_context_attention_params, lse),
    PA_OFF(pa_context_attention_params, cache_only),
    PA_OFF(pa_context_attention_params, lse_head_stride),
    PA_OFF(pa_context_attention_params, lse_token_stride),

    PA_SZ(pa_prompt_attention_params),
    PA_OFF(pa_prompt_attention_params, out),
    PA_OFF(pa_prompt_attention_params, query),
    PA_OFF(pa_prompt_attention_params, key),
    PA_OFF(pa_prompt_attention_params, value),
    PA_OFF(pa_prompt_attention_params, q_stride),
    PA_OFF(pa_prompt_attention_params, k_stride),
    PA_OFF(pa_prompt_attention_params, v_stride),
    PA_OFF(pa_prompt_attention_params, dtype),
    PA_OFF(pa_prompt_attention_params, attn_type),
    PA_OFF(pa_prompt_attention_params, cu_seqlens_q),
    PA_OFF(pa_prompt_attention_params, cu_seqlens_k),
    PA_OFF(pa_prompt_attention_params, num_seqs),
    PA_OFF(pa_prompt_attention_params, num_heads),
    PA_OFF(pa_prompt_attention_params, num_kv_heads),
    PA_OFF(pa_prompt_attention_params, head_size),
    PA_OFF(pa_prompt_attention_params, num_q_tokens),
    PA_OFF(pa_prompt_attention_params, num_k_tokens),
    PA_OFF(pa_prompt_attention_params, max_seqlen_q),
    PA_OFF(pa_prompt_attention_params, max_seqlen_k),
    PA_OFF(pa_prompt_attention_params, scale),
    PA_OFF(pa_prompt_attention_params, alibi_slopes),
    PA_OFF(pa_prompt_attention_params, sliding_window),
    PA_OFF(pa_prompt_attention_params, soft_cap),
    PA_OFF(pa_prompt_attention_params, sinks),
    PA_OFF(pa_prompt_attention_params, lse),
    PA_OFF(pa_prompt_attention_params, lse_head_stride),
    PA_OFF(pa_prompt_attention_params, lse_token_stride),

    PA_SZ(pa_mixed_attention_params),
    PA_OFF(pa_mixed_attention_params, out),
    PA_OFF(pa_mixed_attention_params, query),
    PA_OFF(pa_mixed_attention_params, key),
    PA_OFF(pa_mixed_attention_params, value),
    PA_OFF(pa_mixed_attention_params, q_stride),
    PA_OFF(pa_mixed_attention_params, k_stride),
    PA_OFF(pa_mixed_attention_params, v_stride),
    PA_OFF(pa_mixed_attention_params, q_dtype),
    PA_OFF(pa_mixed_attention_params, kv),
    PA_OFF(pa_mixed_attention_params, block_tables),
    PA_OFF(pa_mixed_attention_params, block_table_stride),
    PA_OFF(pa_mixed_attention_params, seq_lens),
    PA_OFF(pa_mixed_attention_params, query_start_loc),
    PA_OFF(pa_mixed_attention_params, num_prefills),
    PA_OFF(pa_mixed_attention_params, num_prefill_tokens),
    PA_OFF(pa_mixed_attention_params, num_decode_tokens),
    PA_OFF(pa_mixed_attention_params, num_heads),
    PA_OFF(pa_mixed_attention_params, max_prefill_query_len),
    PA_OFF(pa_mixed_attention_params, max_prefill_seq_len),
    PA_OFF(pa_mixed_attention_params, max_decode_seq_len),
    PA_OFF(pa_mixed_attention_params, scale),
    PA_OFF(pa_mixed_attention_params, alibi_slopes),
    PA_OFF(pa_mixed_attention_params, sliding_window),
    PA_OFF(pa_mixed_attention_params, soft_cap),
    PA_OFF(pa_mixed_attention_params, sinks),
    PA_OFF(pa_mixed_attention_params, lse),
    PA_OFF(pa_mixed_attention_params, lse_head_stride),
    PA_OFF(pa_mixed_attention_params, lse_token_stride),

    PA_SZ(pa_ragged_params),
    PA_OFF(pa_ragged_params, out),
    PA_OFF(pa_ragged_params, q),
    PA_OFF(pa_ragged_params, q_dtype),
    PA_OFF(pa_ragged_params, kv),
    PA_OFF(pa_ragged_params, kv_lens),
    PA_OFF(pa_ragged_params, page_indices),
    PA_OFF(pa_ragged_params, pages_per_seq),
    PA_OFF(pa_ragged_params, cu_q_lens),
    PA_OFF(pa_ragged_params, num_seqs),
    PA_OFF(pa_ragged_params, max_num_seqs),
    PA_OFF(pa_ragged_params, max_num_batched_tokens),
    PA_OFF(pa_ragged_params, num_q_heads),
    PA_OFF(pa_ragged_params, sm_scale),
    PA_OFF(pa_ragged_params, sliding_window),
    PA_OFF(pa_ragged_params, soft_cap),
    PA_OFF(pa_ragged_params, mask_value),
    PA_OFF(pa_ragged_params, kv_split_tokens),
    PA_OFF(pa_ragged_params, sinks),
    PA_OFF(pa_ragged_params, lse),
    PA_OFF(pa_ragged_params, lse_head_stride),
    PA_OFF(pa_ragged_params, lse_token_stride),

    PA_SZ(pa_batch_split),
    PA_OFF(pa_batch_split, num_decodes),
    PA_OFF(pa_batch_split, num_prefills),
    PA_OFF(pa_batch_split, num_decode_tokens),
    PA_OFF(pa_batch_split, num_prefill_tokens),

    PA_SZ(pa_local_attention_params),
    PA_OFF(pa_local_attention_params, attn_chunk_size),
    PA_OFF(pa_local_attention_params, block_size),
    PA_OFF(pa_local_attention_params, num_reqs),
    PA_OFF(pa_local_attention_params, query_start_loc),
    PA_OFF(pa_local_attention_params, seq_lens),
    PA_OFF(pa_local_attention_params, block_table),
    PA_OFF(pa_local_attention_params, block_table_width),
    PA_OFF(pa_local_attention_params, block_table_stride),

    PA_SZ(pa_local_attention_out),
    PA_OFF(pa_local_attention_out, capacity),
    PA_OFF(pa_local_attention_out, seqlens_q_local),
    PA_OFF(pa_local_attention_out, cu_seqlens_q_local),
    PA_OFF(pa_local_attention_out, seqlens_k_local),
    PA_OFF(pa_local_attention_out, block_table_local),
    PA_OFF(pa_local_attention_out, table_fill),

    PA_SZ(pa_batch),
    PA_OFF(pa_batch, num_reqs),
    PA_OFF(pa_batch, num_computed_tokens),
    PA_OFF(pa_batch, num_scheduled_tokens),
    PA_OFF(pa_batch, block_size),
    PA_OFF(pa_batch, block_table),
    PA_OFF(pa_batch, block_table_stride),

    PA_SZ(pa_common_metadata),
    PA_OFF(pa_common_metadata, query_start_loc),
    PA_OFF(pa_common_metadata, seq_lens),
    PA_OFF(pa_common_metadata, num_computed_tokens),
    PA_OFF(pa_common_metadata, slot_mapping),
    PA_OFF(pa_common_metadata, slot_mapping_capacity),
    PA_OFF(pa_common_metadata, num_reqs),
    PA_OFF(pa_common_metadata, num_actual_tokens),
    PA_OFF(pa_common_metadata, padded_num_tokens),
    PA_OFF(pa_common_metadata, max_query_len),
    PA_OFF(pa_common_metadata, max_seq_len),
    PA_OFF(pa_common_metadata, block_size),
    PA_OFF(pa_common_metadata, block_table),
    PA_OFF(pa_common_metadata, block_table_stride),

    PA_SZ(pa_decode_plan),
    PA_OFF(pa_decode_plan, use_v1),
    PA_OFF(pa_decode_plan, max_num_partitions),
    PA_OFF(pa_decode_plan, tmp_out_elems),
    PA_OFF(pa_decode_plan, exp_sums_elems),
    PA_OFF(pa_decode_plan, max_logits_elems),

    PA_SZ(pa_merge_attn_states_params),
    PA_OFF(pa_merge_attn_states_params, dtype),
    PA_OFF(pa_merge_attn_states_params, num_tokens),
    PA_OFF(pa_merge_attn_states_params, num_heads),
    PA_OFF(pa_merge_attn_states_params, head_size),
    PA_OFF(pa_merge_attn_states_params, output),
    PA_OFF(pa_merge_attn_states_params, prefix_output),
    PA_OFF(pa_merge_attn_states_params, suffix_output),
    PA_OFF(pa_merge_attn_states_params, out_stride),
    PA_OFF(pa_merge_attn_states_params, prefix_stride),
    PA_OFF(pa_merge_attn_states_params, suffix_stride),
    PA_OFF(pa_merge_attn_states_params, output_lse),
    PA_OFF(pa_merge_attn_states_params, prefix_lse),
    PA_OFF(pa_merge_attn_states_params, suffix_lse),
    PA_OFF(pa_merge_attn_states_params, lse_head_stride),
    PA_OFF(pa_merge_attn_states_params, lse_token_stride),

    PA_SZ(pa_device_props),
    PA_OFF(pa_device_props, name),
    PA_OFF(pa_device_props, device),
    PA_OFF(pa_device_props, sm_count),
    PA_OFF(pa_device_props, cc_major),
    PA_OFF(pa_device_props, cc_minor),
    PA_OFF(pa_device_props, smem_per_block_optin),
    PA_OFF(pa_device_props, l2_bytes),
    PA_OFF(pa_device_props, total_mem_bytes),
    PA_OFF(pa_device_props, driver_version),
    PA_OFF(pa_device_props, runtime_version),
};

static const abi_field *abi_find(const char *type, const char *field) {
    if (!type)
        return NULL;
    for (size_t i = 0; i < sizeof abi_table / sizeof abi_table[0]; i++) {
        const abi_field *r = &abi_table[i];
        if (strcmp(r->type, type) != 0)
            continue;
        if (field == NULL ? r->field == NULL : (r->field != NULL && strcmp(r->field, field) == 0))
            return r;
    }
    return NULL;
}

PA_API size_t pa_abi_sizeof(const char *type_name) {
    const abi_field *r = abi_find(type_name, NULL);
    return r ? r->value : 0;
}

PA_API int64_t pa_abi_offsetof(const char *type_name, const char *field_name) {
    if (!field_name)
        return -1;
    const abi_field *r = abi_find(type_name, field_name);
    return r ? (int64_t)r->value : -1;
}
