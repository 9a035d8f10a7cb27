"""ctypes mirrors of the public C structs (include/pagedattn/*.h), x86-64 / aarch64 LP64.

Each mirror lists the C fields in order with the same types. abi_mismatches(lib)
compares ctypes.sizeof and every field offset with what the loaded library
reports through pa_abi_sizeof / pa_abi_offsetof (csrc/core/abi.c), so a header
change that is not made here fails loudly at import instead of drifting.
"""
import ctypes as C

# enum values (stable numbers in the headers)
PA_SUCCESS = 0
PA_ERR_INVALID_ARGUMENT = 1
PA_ERR_UNSUPPORTED = 2
PA_ERR_NO_DEVICE = 3
PA_ERR_CUDA = 4
PA_ERR_WORKSPACE_TOO_SMALL = 5
PA_ERR_INTERNAL = 6

PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16, PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2 = 0, 1, 2, 3, 4
PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND, PA_LAYOUT_COMBINED = 0, 1, 2, 3
PA_ATTN_DECODER, PA_ATTN_ENCODER, PA_ATTN_ENCODER_ONLY, PA_ATTN_ENCODER_DECODER = 0, 1, 2, 3

_enum = C.c_int  # C enums are int-sized on the supported ABIs
_i32, _i64, _f32, _ptr, _size = C.c_int32, C.c_int64, C.c_float, C.c_void_p, C.c_size_t


class KvCache(C.Structure):
    _c_name = "pa_kv_cache"
    _fields_ = [("layout", _enum), ("dtype", _enum), ("key", _ptr), ("value", _ptr),
                ("num_blocks", _i32), ("block_size", _i32), ("num_kv_heads", _i32), ("head_size", _i32),
                ("block_stride", _i64), ("page_stride", _i64), ("head_stride", _i64),
                ("k_scale", _ptr), ("v_scale", _ptr), ("scales_per_head", _i32)]


class DecodeParams(C.Structure):
    _c_name = "pa_decode_params"
    _fields_ = [("out", _ptr), ("query", _ptr), ("q_stride", _i64), ("q_dtype", _enum), ("kv", KvCache),
                ("block_tables", _ptr), ("block_table_stride", _i32), ("seq_lens", _ptr), ("num_seqs", _i32),
                ("num_heads", _i32), ("max_seq_len", _i32), ("scale", _f32), ("alibi_slopes", _ptr),
                ("sliding_window", _i32), ("soft_cap", _f32), ("tp_rank", _i32), ("bs_local_blocks", _i32),
                ("bs_vert_stride", _i32), ("bs_block_size", _i32), ("bs_head_sliding_step", _i32), ("sinks", _ptr),
                ("lse", _ptr), ("lse_head_stride", _i64), ("lse_token_stride", _i64)]


class KvInput(C.Structure):
    _c_name = "pa_kv_input"
    _fields_ = [("key", _ptr), ("value", _ptr), ("dtype", _enum), ("num_tokens", _i64),
                ("key_token_stride", _i64), ("key_head_stride", _i64),
                ("value_token_stride", _i64), ("value_head_stride", _i64)]


class ContextAttentionParams(C.Structure):
    _c_name = "pa_context_attention_params"
    _fields_ = [("out", _ptr), ("query", _ptr), ("key", _ptr), ("value", _ptr),
                ("q_stride", _i64), ("k_stride", _i64), ("v_stride", _i64), ("q_dtype", _enum), ("kv", KvCache),
                ("block_tables", _ptr), ("block_table_stride", _i32), ("query_start_loc", _ptr),
                ("seq_lens", _ptr), ("num_seqs", _i32), ("num_heads", _i32), ("num_tokens", _i32),
                ("max_query_len", _i32), ("max_seq_len", _i32), ("scale", _f32), ("alibi_slopes", _ptr),
                ("sliding_window", _i32), ("soft_cap", _f32), ("sinks", _ptr),
                ("lse", _ptr), ("cache_only", _i32), ("lse_head_stride", _i64), ("lse_token_stride", _i64)]


class PromptAttentionParams(C.Structure):
    _c_name = "pa_prompt_attention_params"
    _fields_ = [("out", _ptr), ("query", _ptr), ("key", _ptr), ("value", _ptr),
                ("q_stride", _i64), ("k_stride", _i64), ("v_stride", _i64), ("dtype", _enum),
                ("attn_type", _enum), ("cu_seqlens_q", _ptr), ("cu_seqlens_k", _ptr),
                ("num_seqs", _i32), ("num_heads", _i32), ("num_kv_heads", _i32), ("head_size", _i32),
                ("num_q_tokens", _i32), ("num_k_tokens", _i32), ("max_seqlen_q", _i32), ("max_seqlen_k", _i32),
                ("scale", _f32), ("alibi_slopes", _ptr), ("sliding_window", _i32), ("soft_cap", _f32), ("sinks", _ptr),
                ("lse", _ptr), ("lse_head_stride", _i64), ("lse_token_stride", _i64)]


class MixedAttentionParams(C.Structure):
    _c_name = "pa_mixed_attention_params"
    _fields_ = [("out", _ptr), ("query", _ptr), ("key", _ptr), ("value", _ptr),
                ("q_stride", _i64), ("k_stride", _i64), ("v_stride", _i64), ("q_dtype", _enum), ("kv", KvCache),
                ("block_tables", _ptr), ("block_table_stride", _i32), ("seq_lens", _ptr),
                ("query_start_loc", _ptr), ("num_prefills", _i32), ("num_prefill_tokens", _i32),
                ("num_decode_tokens", _i32), ("num_heads", _i32), ("max_prefill_query_len", _i32),
                ("max_prefill_seq_len", _i32), ("max_decode_seq_len", _i32), ("scale", _f32),
                ("alibi_slopes", _ptr), ("sliding_window", _i32), ("soft_cap", _f32), ("sinks", _ptr),
                ("lse", _ptr), ("lse_head_stride", _i64), ("lse_token_stride", _i64)]


class RaggedParams(C.Structure):
    _c_name = "pa_ragged_params"
    _fields_ = [("out", _ptr), ("q", _ptr), ("q_dtype", _enum), ("kv", KvCache), ("kv_lens", _ptr),
                ("page_indices", _ptr), ("pages_per_seq", _i32), ("cu_q_lens", _ptr), ("num_seqs", _ptr),
                ("max_num_seqs", _i32), ("max_num_batched_tokens", _i32), ("num_q_heads", _i32),
                ("sm_scale", _f32), ("sliding_window", _i32), ("soft_cap", _f32), ("mask_value", _f32),
                ("kv_split_tokens", _i32), ("sinks", _ptr), ("lse", _ptr), ("lse_head_stride", _i64),
                ("lse_token_stride", _i64)]


class BatchSplit(C.Structure):
    _c_name = "pa_batch_split"
    _fields_ = [("num_decodes", _i32), ("num_prefills", _i32), ("num_decode_tokens", _i32),
                ("num_prefill_tokens", _i32)]


class LocalAttentionParams(C.Structure):
    _c_name = "pa_local_attention_params"
    _fields_ = [("attn_chunk_size", _i32), ("block_size", _i32), ("num_reqs", _i32), ("query_start_loc", _ptr),
                ("seq_lens", _ptr), ("block_table", _ptr), ("block_table_width", _i32),
                ("block_table_stride", _i32)]


class LocalAttentionOut(C.Structure):
    _c_name = "pa_local_attention_out"
    _fields_ = [("capacity", _i32), ("seqlens_q_local", _ptr), ("cu_seqlens_q_local", _ptr),
                ("seqlens_k_local", _ptr), ("block_table_local", _ptr), ("table_fill", _i32)]


class Batch(C.Structure):
    _c_name = "pa_batch"
    _fields_ = [("num_reqs", _i32), ("num_computed_tokens", _ptr), ("num_scheduled_tokens", _ptr),
                ("block_size", _i32), ("block_table", _ptr), ("block_table_stride", _i32)]


class CommonMetadata(C.Structure):
    _c_name = "pa_common_metadata"
    _fields_ = [("query_start_loc", _ptr), ("seq_lens", _ptr), ("num_computed_tokens", _ptr),
                ("slot_mapping", _ptr), ("slot_mapping_capacity", _i32), ("num_reqs", _i32),
                ("num_actual_tokens", _i32), ("padded_num_tokens", _i32), ("max_query_len", _i32),
                ("max_seq_len", _i32), ("block_size", _i32), ("block_table", _ptr), ("block_table_stride", _i32)]


class DecodePlan(C.Structure):
    _c_name = "pa_decode_plan"
    _fields_ = [("use_v1", _i32), ("max_num_partitions", _i32), ("tmp_out_elems", _i64),
                ("exp_sums_elems", _i64), ("max_logits_elems", _i64)]


class MergeAttnStatesParams(C.Structure):
    _c_name = "pa_merge_attn_states_params"
    _fields_ = [("dtype", _enum), ("num_tokens", _i32), ("num_heads", _i32), ("head_size", _i32),
                ("output", _ptr), ("prefix_output", _ptr), ("suffix_output", _ptr), ("out_stride", _i64),
                ("prefix_stride", _i64), ("suffix_stride", _i64), ("output_lse", _ptr), ("prefix_lse", _ptr),
                ("suffix_lse", _ptr), ("lse_head_stride", _i64), ("lse_token_stride", _i64)]


class DeviceProps(C.Structure):
    _c_name = "pa_device_props"
    _fields_ = [("name", C.c_char * 256), ("device", C.c_int), ("sm_count", C.c_int), ("cc_major", C.c_int),
                ("cc_minor", C.c_int), ("smem_per_block_optin", _size), ("l2_bytes", _size),
                ("total_mem_bytes", _size), ("driver_version", C.c_int), ("runtime_version", C.c_int)]


MIRRORS = (KvCache, DecodeParams, KvInput, ContextAttentionParams, PromptAttentionParams, MixedAttentionParams,
           RaggedParams, BatchSplit, LocalAttentionParams, LocalAttentionOut, Batch, CommonMetadata, DecodePlan,
           MergeAttnStatesParams, DeviceProps)


def abi_mismatches(lib):
    """Every difference between the mirrors and the library's own layout, as text."""
    bad = []
    for cls in MIRRORS:
        name = cls._c_name.encode()
        c_size = lib.pa_abi_sizeof(name)
        if c_size != C.sizeof(cls):
            bad.append(f"{cls._c_name}: sizeof {C.sizeof(cls)} in Python, {c_size} in the library")
        for fname, _ in cls._fields_:
            c_off = lib.pa_abi_offsetof(name, fname.encode())
            py_off = getattr(cls, fname).offset
            if c_off != py_off:
                bad.append(f"{cls._c_name}.{fname}: offset {py_off} in Python, {c_off} in the library")
    return bad
