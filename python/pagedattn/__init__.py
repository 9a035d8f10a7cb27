"""pagedattn: paged-KV-cache attention (libpagedattn) on any DLPack tensor.

    import pagedattn
    pagedattn.paged_attention_decode(out, query, key_cache, value_cache, num_kv_heads, scale,
                                     block_tables, seq_lens, block_size, max_seq_len)

CUDA tensors (torch, cupy, jax) run the CUDA kernels on the caller's current
stream; host tensors (NumPy) run the CPU reference. See pagedattn.ops for the
vLLM-compatible ops and pagedattn.host for the host layer (batch metadata).
`python -m pagedattn info` prints the library, where it was loaded from, and
the CUDA device.
"""
from . import _abi, host, ops
from ._lib import CudaError, lib, lib_path
from .host import (SLOT_MAPPING_DTYPE, CommonAttentionMetadata, build_common_attention_metadata, decode_plan,
                   get_min_page_size, get_page_size, kv_update_slices, kv_update_slices_upper_bound,
                   make_local_attention_virtual_batches, reorder_batch_to_split_decodes_and_prefills,
                   reorder_num_scheduled_tokens, split_decodes_and_prefills, use_paged_attention_v1)
from .ops import (context_attention_fwd, convert_fp8, copy_blocks, kv_cache_update, merge_attn_states,
                  mixed_attention, paged_attention_decode, paged_attention_v1, paged_attention_v2,
                  paged_attention_workspace_size, prompt_attention, ragged_paged_attention, reshape_and_cache,
                  reshape_and_cache_flash, swap_blocks)

__version__ = lib.pa_version().decode()


def device_count():
    """CUDA devices the library sees (0 without a driver or device)."""
    return lib.pa_device_count()


def device_info(device=0):
    """The library's view of CUDA device `device` as a dict (CudaError without one; ValueError for an
    index that is negative or past the devices)."""
    import ctypes
    from ._lib import check
    from ._tensor import i32
    p = _abi.DeviceProps()
    check(lib.pa_device_info(i32("device_info", "device", device), ctypes.byref(p)), "device_info")
    return {"name": p.name.decode(errors="replace"), "device": p.device, "sm_count": p.sm_count,
            "compute_capability": f"{p.cc_major}.{p.cc_minor}", "smem_per_block_optin": p.smem_per_block_optin,
            "l2_bytes": p.l2_bytes, "total_mem_bytes": p.total_mem_bytes, "driver_version": p.driver_version,
            "runtime_version": p.runtime_version}


_PREFILL_PATHS = ("auto", "mma", "hopper", "hopper-fp8")


def set_prefill_path(path):
    """Which prefill kernel runs, process-wide: "auto" (the default: as "hopper"), "mma" (mma.sync for
    every launch), "hopper" (the sm_90a kernel wherever it
    applies: an sm_90 GPU, a library built for 90a, f16/bf16, heads up to 128, flash or vLLM caches of
    the query dtype or fp8, and heads 129..256 for prompts and flash caches (16-bit or fp8); other
    launches keep mma.sync), or
    "hopper-fp8" ("hopper", with context attention over e4m3 caches at heads 97..128 on FP8 tensor cores:
    Q and P rounded to e4m3, results within pa_tolerance_fp8_path, not the 16-bit path's)."""
    from ._lib import check
    if path not in _PREFILL_PATHS:
        raise ValueError(f"prefill path {path!r}: expected one of {', '.join(_PREFILL_PATHS)}")
    check(lib.pa_set_prefill_path(_PREFILL_PATHS.index(path)), "set_prefill_path")


def get_prefill_path():
    """The prefill path in force ("auto", "mma", "hopper" or "hopper-fp8"; PAGEDATTN_PREFILL_PATH until one is
    set)."""
    return _PREFILL_PATHS[lib.pa_get_prefill_path()]


def prefill_hopper_available():
    """Whether the Hopper prefill kernel can run here (an sm_90 GPU and a library built for 90a)."""
    return bool(lib.pa_prefill_hopper_available())


__all__ = (["CudaError", "lib_path", "device_count", "device_info", "__version__", "set_prefill_path",
            "get_prefill_path", "prefill_hopper_available"] + ops.__all__ + host.__all__)
