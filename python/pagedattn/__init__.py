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
from .host import (CommonAttentionMetadata, build_common_attention_metadata, decode_plan, get_min_page_size,
                   get_page_size, kv_update_slices, kv_update_slices_upper_bound, make_local_attention_virtual_batches,
                   reorder_batch_to_split_decodes_and_prefills, reorder_num_scheduled_tokens,
                   split_decodes_and_prefills, use_paged_attention_v1)
from .ops import (context_attention_fwd, copy_blocks, kv_cache_update, paged_attention_decode, paged_attention_v1,
                  paged_attention_v2, paged_attention_workspace_size, ragged_paged_attention, reshape_and_cache,
                  reshape_and_cache_flash, swap_blocks)

__version__ = lib.pa_version().decode()


def device_count():
    """CUDA devices the library sees (0 without a driver or device)."""
    return lib.pa_device_count()


def device_info(device=0):
    """The library's view of CUDA device `device` as a dict (CudaError without one)."""
    import ctypes
    from ._lib import check
    p = _abi.DeviceProps()
    check(lib.pa_device_info(int(device), ctypes.byref(p)), "device_info")
    return {"name": p.name.decode(errors="replace"), "device": p.device, "sm_count": p.sm_count,
            "compute_capability": f"{p.cc_major}.{p.cc_minor}", "smem_per_block_optin": p.smem_per_block_optin,
            "l2_bytes": p.l2_bytes, "total_mem_bytes": p.total_mem_bytes, "driver_version": p.driver_version,
            "runtime_version": p.runtime_version}


__all__ = ["CudaError", "lib_path", "device_count", "device_info", "__version__"] + ops.__all__ + host.__all__
