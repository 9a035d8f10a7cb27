#!/usr/bin/env python3
"""Mutation check of the Python package (python/pagedattn/*.py); CI runs only --check.

Plants each mutant below in the package sources, one at a time, runs the whole
pytest suite of python/tests against the built library, restores the file, and
reports which tests killed it. Exit 0 when every mutant was killed, 1 when one
survived, 2 when a mutant's text no longer occurs exactly once in its file (the
code moved on: update the mutant). The sources are restored after each run, also
on an error, Ctrl-C or SIGTERM.

    python3 python/tests/mutants.py [--lib PATH] [--list] [--check] [--equivalent] [ID ...]

--lib: libpagedattn.so to load (default $PAGEDATTN_LIB, else build/libpagedattn.so);
IDs: run only those mutants; --equivalent: run the equivalent ones instead (they
must survive: each says why no input can tell it from the original); --check:
only check that every mutant's text (the equivalent ones' too) occurs exactly
once, running nothing (seconds; scripts/test.sh runs it, so CI does: four had
gone stale unnoticed until 2026-12-07).

The mutants: the 27 survivors of a blind pass of 72 hand-written mutants on
2026-12-03, each closed by a test since (the test is named with it); the bug the
pass found (c_stride, fixed); three of the CUDA path's wiring; three of
merge_attn_states' wiring; three of the prefill ops' lse output (return_lse / lse) and one of cache_only;
two of the decode ops' lse output; five of the lse in strided views and mixed_attention's lse; four of
ragged_paged_attention's lse; six of the CUDA path's streams and exports (2026-12-07); two of
copy_blocks' overlapping caches and one of written tensors that require grad; and a few killed
ones worth keeping. Run time: about
3 minutes on two cores (about 4 s a mutant: one whole pytest run each).
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(TESTS))
PKG = os.path.join(ROOT, "python", "pagedattn")

# (id, file in python/pagedattn, text, its replacement, what the bug is; the test that kills it)
MUTANTS = [
    # ---- survivors of the blind pass, each closed by the test named
    ("dl-lanes-unchecked", "_dlpack.py", "    if t.dtype.lanes != 1:", "    if t.dtype.lanes == 0:",
     "vector dtypes taken as scalars; test_dlpack.test_vector_dtypes_refused"),
    ("dl-contig-size1-strict", "_dlpack.py", "return all(s == w or d == 1 for", "return all(s == w for",
     "a size-1 dimension must have the row-major stride; test_errors.test_size_one_dimensions_take_any_stride"),
    ("dl-bf16-itemsize", "_dlpack.py", '"float16": 2, "bfloat16": 2,', '"float16": 2, "bfloat16": 4,',
     "bfloat16 taken as 4 bytes; test_dlpack.test_bf16_vllm_cache_packs_eight_elements"),
    ("t-cudahost-not-host", "_tensor.py", "return v.device_type in (kDLCPU, kDLCUDAHost)",
     "return v.device_type == kDLCPU",
     "pinned host arrays taken as device arrays; test_errors.test_pinned_host_arrays_run_the_cpu_reference"),
    ("t-same-device-id-unchecked", "_tensor.py",
     "if on_host(v) == cuda or (cuda and v.device_id != first.device_id):", "if on_host(v) == cuda:",
     "two CUDA devices in one call; test_errors.test_two_cuda_devices_in_one_call_refused"),
    ("t-int-lo-off-by-one", "_tensor.py", "    if not lo <= v <= hi:", "    if not lo < v <= hi:",
     "-2^31 refused; test_errors.test_int32_bounds_are_inclusive"),
    ("t-fp8-any-float8-storage", "_tensor.py", 'if v.dtype == "uint8" or PA_DTYPES.get(v.dtype) == want:',
     'if v.dtype in ("uint8", "float8_e4m3fn", "float8_e5m2"):',
     "float8 storage of the other format accepted; test_dlpack.test_float8_storage_must_match_the_named_format"),
    ("t-c-stride-size1-raw", "_tensor.py",
     "    if v.numel == 0 or v.shape[dim] == 1:\n        return 0\n    s = v.strides[dim]\n    if s <= 0:\n",
     "    if v.numel == 0:\n        return 0\n    s = v.strides[dim]\n    if s <= 0 and v.shape[dim] > 1:\n",
     "a one-element dimension's stride passed to C, which refuses a negative or short one (the bug fixed "
     "2026-12-03); test_ops.test_one_row_tensors_take_any_row_stride"),
    ("o-scale-zero-allowed", "ops.py", "if not (math.isfinite(s) and s > 0):", "if not (math.isfinite(s) and s >= 0):",
     "a scale of 0 sent to a CUDA launch; test_cuda_path.test_python_number_scales_checked_before_a_launch"),
    ("o-scale-device-unchecked", "ops.py",
     "    if on_host(v) != on_host(cache_v) or (not on_host(v) and v.device_id != cache_v.device_id):", "    if False:",
     "scale on another device; test_errors.test_scale_tensor_on_another_device_refused"),
    ("o-vllm-vc-contig-dropped", "ops.py", "    need_contiguous(op, kc)\n    need_contiguous(op, vc)\n",
     "    need_contiguous(op, kc)\n", "vLLM value_cache contiguity; test_errors.test_non_contiguous_value_cache"),
    ("o-heads-stride-unchecked", "ops.py",
     "if x.numel and (x.strides[2] != 1 or (x.shape[1] > 1 and x.strides[1] != head_size)):",
     "if x.numel and x.strides[2] != 1:", "heads not adjacent; test_errors.test_heads_must_be_adjacent"),
    ("o-writekv-value-stride-from-key", "ops.py", "value_token_stride=c_stride(op, v, 0)",
     "value_token_stride=c_stride(op, k, 0)",
     "value's row stride from key; test_ops.test_key_and_value_rows_at_different_strides"),
    ("o-decode-softcap-dropped", "ops.py", '    p.soft_cap = real(op, "logits_soft_cap", logits_soft_cap or 0.0)\n', "",
     "decode's logits_soft_cap dropped; test_ops.test_decode_logits_soft_cap"),
    ("o-v2-parts-off-by-one", "ops.py", "parts = -(-int(max_seq_len) // 512)", "parts = int(max_seq_len) // 512 + 1",
     "v2 scratch partitions at multiples of 512; test_errors.test_v2_scratch_partitions_at_multiples_of_512"),
    ("o-wsize-dotted-name", "ops.py", 'or dtype).rsplit(".", 1)[-1]', 'or dtype).split(".", 1)[0]',
     "'torch.float16' read as 'torch'; test_ops.test_workspace_size_dtype_spelled_like_torch"),
    ("o-v1-stream-dropped", "ops.py",
     "check(lib.pa_paged_attention_v1(C.byref(p), stream_handle(op, t.values(), stream)), op)",
     "check(lib.pa_paged_attention_v1(C.byref(p), stream_handle(op, t.values(), None)), op)",
     "v1 ignores stream=; test_cuda_path.test_every_cuda_launch_gets_the_callers_stream"),
    ("o-softmax-default-over-d", "ops.py",
     "return real(op, name, scale) if scale is not None else 1.0 / math.sqrt(head_size)",
     "return real(op, name, scale) if scale is not None else 1.0 / head_size",
     "default scale 1/d; test_ops.test_prefill_default_scale_is_one_over_sqrt_head_size"),
    ("o-prompt-default-scale-heads", "ops.py",
     'scale=_softmax_scale(op, "softmax_scale", softmax_scale, head_size), alibi_slopes=alibi,',
     'scale=_softmax_scale(op, "softmax_scale", softmax_scale, num_heads), alibi_slopes=alibi,',
     "prompt default scale from num_heads; test_ops.test_prefill_default_scale_is_one_over_sqrt_head_size"),
    ("o-prompt-v-stride-from-k", "ops.py",
     "k_stride=c_stride(op, kv_, 0), v_stride=c_stride(op, vv, 0), dtype=PA_DTYPES[qv.dtype],",
     "k_stride=c_stride(op, kv_, 0), v_stride=c_stride(op, kv_, 0), dtype=PA_DTYPES[qv.dtype],",
     "prompt v row stride from k; test_ops.test_key_and_value_rows_at_different_strides"),
    ("o-context-v-stride-from-k", "ops.py",
     "v_stride=c_stride(op, vv, 0) if vv is not None else 0,",
     "v_stride=c_stride(op, kv_, 0) if vv is not None else 0,",
     "context v row stride from k; test_ops.test_key_and_value_rows_at_different_strides"),
    ("o-prefill-out-contig-dropped", "ops.py",
     "    need_dtype(op, o, (q.dtype,))\n    need_contiguous(op, o)\n    return cache",
     "    need_dtype(op, o, (q.dtype,))\n    return cache",
     "strided prefill out; test_errors.test_prefill_out_must_be_contiguous"),
    ("o-ragged-q-contig-dropped", "ops.py",
     "    need_dtype(op, qv, QUERY_DTYPES)\n    need_contiguous(op, qv)\n    need_ndim(op, t[\"kv_pages\"], 4)",
     "    need_dtype(op, qv, QUERY_DTYPES)\n    need_ndim(op, t[\"kv_pages\"], 4)",
     "strided ragged q; test_errors.test_ragged_q_and_page_indices_must_be_contiguous"),
    ("o-ragged-pages-contig-dropped", "ops.py", "    need_ndim(op, pi, 2)\n    need_contiguous(op, pi)\n",
     "    need_ndim(op, pi, 2)\n",
     "column slice of page_indices; test_errors.test_ragged_q_and_page_indices_must_be_contiguous"),
    ("l-no-device-not-cudaerror", "_lib.py", "    if status in (A.PA_ERR_CUDA, A.PA_ERR_NO_DEVICE):",
     "    if status == A.PA_ERR_CUDA:",
     "no device a plain RuntimeError; test_errors.test_status_codes_become_the_documented_exceptions"),
    ("h-i32-hi-off-by-one", "host.py", "x.max() >= 2 ** 31", "x.max() > 2 ** 31",
     "2^31 wraps in host index arrays; test_host.test_host_index_arrays_int32_bounds"),
    ("h-mutable-readonly", "host.py", "x.flags.c_contiguous and x.flags.writeable)", "x.flags.c_contiguous)",
     "read-only arrays reordered; test_host.test_in_place_reorder_refuses_read_only_arrays"),
    ("i-prefill-paths-order", "__init__.py", '_PREFILL_PATHS = ("auto", "mma", "hopper", "hopper-fp8")',
     '_PREFILL_PATHS = ("auto", "hopper", "mma", "hopper-fp8")',
     "path names off the enum; test_errors.test_prefill_path_names_are_the_header_enum"),
    # ---- the CUDA path's wiring (test_cuda_path.py, a stand-in library)
    ("o-workspace-stream-dropped", "ops.py",
     "ws_ptr, ws_bytes, stream_handle(op, [v for v in t.values() if v is not None], stream)),",
     "ws_ptr, ws_bytes, stream_handle(op, [v for v in t.values() if v is not None], None)),",
     "v2 / decode / mixed ignore stream="),
    ("o-swap-stream-dropped", "ops.py", "stream_handle(op, cuda_views, stream)), op)",
     "stream_handle(op, cuda_views, None)), op)", "swap_blocks ignores stream="),
    ("o-copy-cuda-values-from-keys", "ops.py", 'vpt = (small_array(ref.obj, [x.ptr for x in vvs], "int64"',
     'vpt = (small_array(ref.obj, [x.ptr for x in kvs], "int64"', "copy_blocks' CUDA value table from the keys"),
    # ---- merge_attn_states' wiring (2026-12-04), each killed by the test named
    ("o-merge-lse-swapped", "ops.py",
     'prefix_lse=t["prefix_lse"].ptr,\n                suffix_lse=t["suffix_lse"].ptr,',
     'prefix_lse=t["suffix_lse"].ptr,\n                suffix_lse=t["prefix_lse"].ptr,',
     "prefix and suffix lse swapped; test_merge.test_merge_matches_attention_over_all_keys"),
    ("o-merge-row-strides-dropped", "ops.py",
     "out_stride=out_stride, prefix_stride=prefix_stride, suffix_stride=suffix_stride",
     "out_stride=0, prefix_stride=0, suffix_stride=0",
     "strided token rows read as packed ones; test_merge.test_merge_strided_token_rows_and_lse"),
    ("o-merge-lse-layout-unchecked", "ops.py", "        if s != lse_strides[0]:", "        if False:",
     "lse tensors of other layouts read with prefix_lse's strides; test_merge.test_merge_refusals_write_nothing"),
    # ---- the prefill ops' lse output (2026-12-05), each killed by the test named
    ("o-prompt-lse-dropped", "ops.py", "sinks=sink_ptr, **lse_fields)", "sinks=sink_ptr, lse=None)",
     "prompt_attention returns an lse the library never wrote; "
     "test_lse.test_prompt_attention_lse_matches_the_definition"),
    ("o-context-lse-dropped", "ops.py", "cache_only=1 if cache_only else 0, **lse_fields)",
     "cache_only=1 if cache_only else 0)",
     "context_attention_fwd returns an lse the library never wrote; "
     "test_lse.test_context_attention_lse_matches_the_definition"),
    ("o-cache-only-dropped", "ops.py", "cache_only=1 if cache_only else 0, **lse_fields)",
     "cache_only=0, **lse_fields)",
     "context_attention_fwd's cache_only never reaches the library (the queries' own keys read and "
     "causally masked); test_lse.test_cascade_over_a_shared_prefix_in_the_cache"),
    ("o-lse-new-zeroed", "ops.py", '"float32", fill=-math.inf)', '"float32", zero=True)',
     "a new lse reads 0 (weight 1 in a merge) in rows no sequence covers, not -inf; "
     "test_lse.test_rows_without_a_key"),
    # ---- the decode ops' lse output (2026-12-05), each killed by the test named
    ("o-decode-lse-dropped", "ops.py",
     'sinks=_head_floats(op, t["sinks"], num_heads), **lse_fields)\n    return p, cuda',
     'sinks=_head_floats(op, t["sinks"], num_heads))\n    return p, cuda',
     "the decode ops return an lse the library never wrote (-inf, or the caller's); "
     "test_decode_lse.test_decode_lse_matches_the_definition"),
    ("o-decode-lse-shape-transposed", "ops.py",
     "lse_fields, lse = _lse_output(op, lse, return_lse, q, num_heads, num_seqs, keep, \"num_seqs\")",
     "lse_fields, lse = _lse_output(op, lse, return_lse, q, num_seqs, num_heads, keep, \"num_seqs\")",
     "the decode lse made and checked as [num_seqs, num_heads] (the library writes [num_heads, num_seqs]); "
     "test_decode_lse.test_decode_lse_matches_the_definition fails, and since 2026-12-05 the suite then crashes: "
     "the new lse's strides go to C with num_heads and num_seqs unswapped, so the reference writes past it"),
    # ---- the lse in strided views and mixed_attention's lse (2026-12-05), each killed by the test named
    ("o-lse-strides-dropped", "ops.py",
     "return dict(lse=lv.ptr, lse_head_stride=c_stride(op, lv, 0), lse_token_stride=c_stride(op, lv, 1)), lse",
     "return dict(lse=lv.ptr), lse",
     "a caller's lse view written in the default [num_heads, tokens] layout from its first float (every op); "
     "test_lse_strides.test_strided_lse_is_the_contiguous_one"),
    ("o-lse-raw-strides", "ops.py",
     "    for dim in (0, 1):\n        if lv.numel and lv.shape[dim] > 1 and lv.strides[dim] <= 0:",
     "    return dict(lse=lv.ptr, lse_head_stride=lv.strides[0], lse_token_stride=lv.strides[1]), lse\n"
     "    for dim in (0, 1):\n        if lv.numel and lv.shape[dim] > 1 and lv.strides[dim] <= 0:",
     "the framework's strides passed as they are: a broadcast's 0 read by C as the default layout (written, not "
     "refused), a one-element dimension's negative stride refused; "
     "test_lse.test_prompt_attention_lse_refusals_write_nothing, "
     "test_lse_strides.test_a_dimension_of_one_element_takes_any_stride"),
    ("o-mixed-lse-dropped", "ops.py",
     'sinks=_head_floats(op, t["sinks"], num_heads),\n        **lse_fields)\n    _workspace_call',
     'sinks=_head_floats(op, t["sinks"], num_heads))\n    _workspace_call',
     "mixed_attention returns an lse the library never wrote; "
     "test_lse_strides.test_mixed_attention_lse_matches_the_definition"),
    ("o-mixed-lse-over-query-rows", "ops.py",
     "lse_fields, lse = _lse_output(op, lse, return_lse, qv, num_heads, NP + D, keep)",
     "lse_fields, lse = _lse_output(op, lse, return_lse, qv, num_heads, qv.shape[0], keep)",
     "mixed_attention's lse sized by query's rows (padding past the decodes included), not the batch's tokens; "
     "test_lse_strides.test_mixed_attention_lse_refusals_write_nothing"),
    ("o-mixed-lse-not-returned", "ops.py",
     "stream, lib.pa_ref_mixed_attention)\n    return out if lse is None else (out, lse)",
     "stream, lib.pa_ref_mixed_attention)\n    return out",
     "mixed_attention drops the lse it wrote; test_lse_strides.test_mixed_attention_returns_out_or_out_and_lse"),
    # ---- ragged_paged_attention's lse output (2026-12-05), each killed by the test named
    ("o-ragged-lse-dropped", "ops.py", 'sinks=_head_floats(op, t["sinks"], H), **lse_fields)',
     'sinks=_head_floats(op, t["sinks"], H))',
     "ragged_paged_attention returns an lse the library never wrote (-inf, or the caller's); "
     "test_ragged_lse.test_ragged_lse_matches_the_definition"),
    ("o-ragged-lse-strides-dropped", "ops.py", 'sinks=_head_floats(op, t["sinks"], H), **lse_fields)',
     'sinks=_head_floats(op, t["sinks"], H), lse=lse_fields["lse"])',
     "a caller's ragged lse view written in the default [num_q_heads, max_num_batched_tokens] layout from its "
     "first float; test_ragged_lse.test_ragged_lse_in_strided_views"),
    ("o-ragged-lse-heads-tokens-swapped", "ops.py",
     'lse_fields, lse = _lse_output(op, lse, return_lse, qv, H, T, keep, "max_num_batched_tokens")',
     'lse_fields, lse = _lse_output(op, lse, return_lse, qv, T, H, keep, "max_num_batched_tokens")',
     "the ragged lse made and checked as [max_num_batched_tokens, num_q_heads] (the library writes [num_q_heads, "
     "max_num_batched_tokens]); test_ragged_lse.test_ragged_lse_refusals_write_nothing"),
    ("o-ragged-lse-not-returned", "ops.py",
     "check(lib.pa_ref_ragged_paged_attention(C.byref(p)), op)\n    return out if lse is None else (out, lse)",
     "check(lib.pa_ref_ragged_paged_attention(C.byref(p)), op)\n    return out",
     "ragged_paged_attention drops the lse it wrote; test_ragged_lse.test_ragged_returns_out_or_out_and_lse"),
    ("o-ragged-empty-batch-skips-the-library", "ops.py",
     "    # No query row or no sequence (an empty batch) still goes to C",
     "    if T == 0 or max_num_seqs == 0:\n        return out if lse is None else (out, lse)\n"
     "    # No query row or no sequence (an empty batch) still goes to C",
     "an empty ragged batch returned before the library's checks (a bad sliding_window passes); "
     "test_ops.test_ragged_empty_batch_is_validated"),
    # ---- instructive ones the suite already killed
    ("abi-decode-window-float", "_abi.py", '("sliding_window", _i32), ("soft_cap", _f32), ("tp_rank", _i32)',
     '("sliding_window", _f32), ("soft_cap", _f32), ("tp_rank", _i32)',
     "a field of the right size and offset but the wrong type: abi_mismatches cannot see it, "
     "test_ops.test_decode_attention_sinks can"),
    ("abi-check-offsets-skipped", "_abi.py", "            if c_off != py_off:", "            if c_off is None:",
     "abi_mismatches compares sizes only; test_errors.test_abi_check_catches_a_drifted_mirror"),
    ("dl-byte-offset-dropped", "_dlpack.py", "ptr = (t.data or 0) + t.byte_offset", "ptr = t.data or 0",
     "byte_offset ignored (NumPy never sets it); test_dlpack.test_bf16_null_strides_and_byte_offset"),
    ("t-c-stride-allows-zero", "_tensor.py", "    if s <= 0:\n        raise", "    if s < 0:\n        raise",
     "broadcast rows read as contiguous ones; test_errors.test_broadcast_rows_refused_everywhere_a_stride_reaches_c"),
    ("t-int-hi-off-by-one", "_tensor.py", "lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1",
     "lo, hi = -(1 << (bits - 1)), (1 << (bits - 1))", "2^31 wraps to -2^31 in an int32 field"),
    ("o-scales-swapped", "ops.py", 'kv_ = _scale_view(op, "k_scale", k_scale, kc_view, keep, nh)',
     'kv_ = _scale_view(op, "k_scale", v_scale, kc_view, keep, nh)', "k_scale slot gets v_scale"),
    ("o-writekv-flash-ntokens-swapped", "ops.py", "num_tokens = sm.shape[0] if flash else k.shape[0]",
     "num_tokens = k.shape[0] if flash else sm.shape[0]", "which of key / slot_mapping counts the tokens"),
    ("o-decode-options-dropped", "ops.py",
     "v_scale, 0, 0, 0, 64, 0, sinks, return_lse, lse)\n    _decode_options(op, p, sliding_window, logits_soft_cap)\n",
     "v_scale, 0, 0, 0, 64, 0, sinks, return_lse, lse)\n",
     "paged_attention_decode drops sliding_window and logits_soft_cap"),
    ("o-context-maxlens-swapped", "ops.py",
     'max_query_len=i32(op, "max_input_len", max_input_len), max_seq_len=i32(op, "max_seq_len", max_seq_len),',
     'max_query_len=i32(op, "max_seq_len", max_seq_len), max_seq_len=i32(op, "max_input_len", max_input_len),',
     "context_attention_fwd's two bounds swapped"),
    ("o-copy-values-from-keys", "ops.py", "varr = (C.c_void_p * L)(*[x.ptr for x in vvs]) if vvs else None",
     "varr = (C.c_void_p * L)(*[x.ptr for x in kvs]) if vvs else None", "copy_blocks' host value table from keys"),
    ("h-slot-mapping-unpadded", "host.py", "slot_mapping=sm[:out.padded_num_tokens]",
     "slot_mapping=sm[:out.num_actual_tokens]", "slot_mapping loses its -1 padding"),
    # ---- the CUDA path's streams and exports (2026-12-07), each killed by the test named
    ("d-export-stream-none", "_dlpack.py", '[{"stream": -1, **versioned}, {"stream": -1}] if cuda else []',
     '[]', "CUDA arrays exported with no stream (legacy-stream sync, breaks graph capture); "
     "test_cuda_path.test_cuda_arrays_are_exported_with_no_synchronisation"),
    ("t-launch-no-device-scope", "_tensor.py", "scope.enter_context(torch.cuda.device(dev))", "pass",
     "an explicit stream equal to the current one leaves another device current; "
     "test_cuda_path.test_explicit_stream_makes_the_tensors_device_current"),
    ("t-torch-cupy-mix-allowed", "_tensor.py", 'if {"torch", "cupy"} <= fws:', "if False:",
     "torch and cupy allocate on unordered streams; test_cuda_path.test_torch_and_cupy_in_one_call_need_a_stream"),
    ("o-ragged-workspace-strided", "ops.py",
     "keep.append(wv)\n        need_contiguous(op, wv)\n", "keep.append(wv)\n",
     "a broadcast ragged workspace is overrun; test_cuda_path.test_ragged_workspace_must_be_contiguous"),
    ("d-no-detach", "_dlpack.py", "return obj.detach()", "return obj",
     "a tensor that requires grad cannot be exported; test_cuda_path.test_torch_tensors_that_require_grad_or_are_float8"),
    ("d-float8-dtype-lost", "_dlpack.py", "        dtype = dtype_name\n", "        pass\n",
     "a torch float8 tensor exported as uint8 loses its format; "
     "test_cuda_path.test_torch_tensors_that_require_grad_or_are_float8"),
    # ---- the refusals of overlapping copy_blocks caches and of written tensors that require grad
    ("o-copy-layers-overlap", "ops.py", "if a.ptr != b.ptr and _overlap(a.ptr, span, b.ptr, span):", "if False:",
     "copy_blocks' caches that share bytes are accepted; "
     "test_refusals.test_copy_blocks_layers_sharing_bytes_refused"),
    ("o-copy-same-buffer-refused", "ops.py", "if a.ptr != b.ptr and _overlap(a.ptr, span, b.ptr, span):",
     "if _overlap(a.ptr, span, b.ptr, span):",
     "copy_blocks refuses one buffer named twice; test_refusals.test_copy_blocks_layers_sharing_bytes_refused"),
    ("d-grad-output-written", "_dlpack.py", "        if writable:\n            raise ValueError(f\"{name} is written",
     "        if False:\n            raise ValueError(f\"{name} is written",
     "an output that requires grad is written behind autograd; "
     "test_cuda_path.test_torch_outputs_and_caches_that_require_grad_refused"),
]

# Mutants no input can tell from the original: kept to be rerun (--equivalent), not counted.
EQUIVALENT = [
    ("o-flash-bs1-layout", "ops.py", "layout = A.PA_LAYOUT_FLASH_NHD if (bs == 1 or sp >= sh)",
     "layout = A.PA_LAYOUT_FLASH_NHD if (sp >= sh)",
     "block_size 1: the only token offset is 0, so the page stride never multiplies anything and both flash "
     "layouts address block * block_stride + head * head_stride + d (kv_cache.h); equal bytes written for "
     "strides 0, 1, 3, 16, 32, 1000 and 1..3 heads"),
    ("o-block-table-width-zero", "ops.py", "    return max(width, 1)  #", "    return width  #",
     "width 0 reaches C only for a table without rows, i.e. no sequences, and decode.c / prefill.c return "
     "before checking block_table_stride when num_seqs is 0"),
]


def run_pytest(lib, tmp):
    env = dict(os.environ, PAGEDATTN_LIB=lib, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPYCACHEPREFIX=tmp)  # no stale bytecode of a mutant or of the original
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", "--tb=no", TESTS]
    try:
        r = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return 1, ["(timed out)"], ""
    out = r.stdout + r.stderr
    failed = sorted(set(re.findall(r"^(?:FAILED|ERROR) \S+?::(\S+)", out, re.M)))
    if r.returncode and not failed:
        failed = ["(no test ran: " + (out.strip().splitlines() or ["?"])[-1][:100] + ")"]
    return r.returncode, failed, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.environ.get("PAGEDATTN_LIB", os.path.join(ROOT, "build", "libpagedattn.so")))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--equivalent", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("ids", nargs="*")
    a = ap.parse_args()
    todo = [m for m in (EQUIVALENT if a.equivalent else MUTANTS) if not a.ids or m[0] in a.ids]
    if a.check:
        stale = 0
        for mid, fname, old, _, _ in MUTANTS + EQUIVALENT:
            with open(os.path.join(PKG, fname)) as f:
                n = f.read().count(old)
            if n != 1:
                print(f"STALE    {mid}: its text occurs {n} times in {fname}")
                stale += 1
        print(f"{len(MUTANTS) + len(EQUIVALENT) - stale} of {len(MUTANTS) + len(EQUIVALENT)} mutants find their "
              f"text; {stale} stale")
        return 2 if stale else 0
    if a.list:
        for mid, fname, _, _, what in todo:
            print(f"{mid:34s} {fname:12s} {what}")
        return 0
    a.lib = os.path.abspath(a.lib)  # pytest runs in a scratch directory
    if not os.path.exists(a.lib):
        print(f"mutants: no library at {a.lib} (build it, or pass --lib / PAGEDATTN_LIB)")
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))  # unwinds through the finally below
    tmp = tempfile.mkdtemp(prefix="pa-py-mutants-")
    t0 = time.time()
    rc, failed, out = run_pytest(a.lib, tmp)
    if rc:
        print("mutants: the suite fails without a mutant:\n" + out[-3000:])
        return 2
    survived, stale = [], []
    for mid, fname, old, new, what in todo:
        path = os.path.join(PKG, fname)
        with open(path) as f:
            src = f.read()
        if src.count(old) != 1:
            print(f"STALE    {mid}: its text occurs {src.count(old)} times in {fname}")
            stale.append(mid)
            continue
        try:
            with open(path, "w") as f:
                f.write(src.replace(old, new))
            rc, failed, _ = run_pytest(a.lib, tmp)
        finally:
            with open(path, "w") as f:
                f.write(src)
        if rc:
            more = f" +{len(failed) - 4}" if len(failed) > 4 else ""
            print(f"killed   {mid:34s} by {', '.join(failed[:4])}{more}", flush=True)
        else:
            print(f"SURVIVED {mid:34s} {what}", flush=True)
            survived.append(mid)
    n = len(todo)
    print(f"{n} mutants, {n - len(survived) - len(stale)} killed, {len(survived)} survived, {len(stale)} stale "
          f"({time.time() - t0:.0f} s)")
    if a.equivalent:
        return 0 if len(survived) == n else 1  # an "equivalent" mutant that a test kills was not one
    return 2 if stale else 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
