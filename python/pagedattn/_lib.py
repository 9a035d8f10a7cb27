"""Loading libpagedattn.so with ctypes and turning pa_status into exceptions."""
import ctypes as C
import ctypes.util
import os

from . import _abi as A

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("PAGEDATTN_LIB")
    if env:
        return [env]  # an explicit choice is never second-guessed
    out = [os.path.join(_HERE, "libpagedattn.so")]
    found = ctypes.util.find_library("pagedattn")
    if found:
        out.append(found)
    out += ["libpagedattn.so.0", "libpagedattn.so"]
    return out


def _load():
    errors = []
    for path in _candidates():
        try:
            return C.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("pagedattn: cannot load libpagedattn.so (set PAGEDATTN_LIB to its path); tried:\n  "
                      + "\n  ".join(errors))


lib, lib_path = _load()

_P = C.c_void_p
_S = C.c_int  # pa_status
_I32, _I64, _SZ = C.c_int32, C.c_int64, C.c_size_t


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


def _ptr(cls):
    return C.POINTER(cls)


_proto("pa_version", C.c_char_p)
_proto("pa_version_number", C.c_int)
_proto("pa_status_string", C.c_char_p, C.c_int)
_proto("pa_last_error", C.c_char_p)
_proto("pa_abi_sizeof", _SZ, C.c_char_p)
_proto("pa_abi_offsetof", _I64, C.c_char_p, C.c_char_p)
_proto("pa_device_count", C.c_int)
_proto("pa_device_info", _S, C.c_int, _ptr(A.DeviceProps))
_proto("pa_dtype_name", C.c_char_p, C.c_int)
# decode
for _n in ("pa_decode_validate", "pa_ref_paged_decode"):
    _proto(_n, _S, _ptr(A.DecodeParams))
_proto("pa_paged_attention_v1", _S, _ptr(A.DecodeParams), _P)
for _n in ("pa_paged_attention_v2_workspace_size", "pa_paged_attention_decode_workspace_size"):
    _proto(_n, _S, _ptr(A.DecodeParams), C.POINTER(_SZ))
for _n in ("pa_paged_attention_v2", "pa_paged_attention_decode"):
    _proto(_n, _S, _ptr(A.DecodeParams), _P, _SZ, _P)
# cache ops
_proto("pa_reshape_and_cache", _S, _ptr(A.KvInput), _P, _ptr(A.KvCache), _P)
_proto("pa_ref_reshape_and_cache", _S, _ptr(A.KvInput), _P, _ptr(A.KvCache))
_proto("pa_kv_cache_update", _S, _P, C.c_int, _I64, _I64, _P, _P, _I32, _ptr(A.KvCache), _P)
_proto("pa_ref_kv_cache_update", _S, _P, C.c_int, _I64, _I64, _P, _P, _I32, _ptr(A.KvCache))
_proto("pa_swap_blocks", _S, _P, _P, _I64, _P, _I64, _I64, _I64, _P)
_proto("pa_ref_swap_blocks", _S, _P, _P, _I64, _P, _I64, _I64, _I64)
_proto("pa_copy_blocks", _S, _P, _P, _I32, _P, _I64, _I64, C.c_int, _I64, _P)
_proto("pa_ref_copy_blocks", _S, _P, _P, _I32, _P, _I64, _I64, C.c_int, _I64)
_proto("pa_kv_cache_validate", _S, _ptr(A.KvCache))
_proto("pa_convert", _S, _P, C.c_int, _P, C.c_int, _I64, _P, _P)
_proto("pa_ref_convert", _S, _P, C.c_int, _P, C.c_int, _I64, _P)
# prefill
_proto("pa_set_prefill_path", _S, C.c_int)
_proto("pa_get_prefill_path", C.c_int)
_proto("pa_prefill_hopper_available", C.c_int)
_proto("pa_context_attention", _S, _ptr(A.ContextAttentionParams), _P)
_proto("pa_ref_context_attention", _S, _ptr(A.ContextAttentionParams))
_proto("pa_prompt_attention", _S, _ptr(A.PromptAttentionParams), _P)
_proto("pa_ref_prompt_attention", _S, _ptr(A.PromptAttentionParams))
_proto("pa_mixed_attention_workspace_size", _S, _ptr(A.MixedAttentionParams), C.POINTER(_SZ))
_proto("pa_mixed_attention", _S, _ptr(A.MixedAttentionParams), _P, _SZ, _P)
_proto("pa_ref_mixed_attention", _S, _ptr(A.MixedAttentionParams))
# ragged
_proto("pa_ragged_workspace_size", _S, _ptr(A.RaggedParams), C.POINTER(_SZ))
_proto("pa_ragged_paged_attention", _S, _ptr(A.RaggedParams), _P, _SZ, _P)
_proto("pa_ref_ragged_paged_attention", _S, _ptr(A.RaggedParams))
# merging partial attention states
_proto("pa_merge_attn_states_validate", _S, _ptr(A.MergeAttnStatesParams))
_proto("pa_merge_attn_states", _S, _ptr(A.MergeAttnStatesParams), _P)
_proto("pa_ref_merge_attn_states", _S, _ptr(A.MergeAttnStatesParams))
# host layer
_proto("pa_reorder_batch_to_split_decodes_and_prefills", _S, _P, _I32, _I32, _P, _P, _P, _P, _P)
_proto("pa_split_decodes_and_prefills", _S, _P, _I32, _I32, _ptr(A.BatchSplit))
_proto("pa_local_attention_size", _S, _ptr(A.LocalAttentionParams), C.POINTER(_I32), C.POINTER(_I32))
_proto("pa_make_local_attention_virtual_batches", _S, _ptr(A.LocalAttentionParams), _ptr(A.LocalAttentionOut),
       C.POINTER(_I32))
_proto("pa_build_common_metadata", _S, _ptr(A.Batch), _I32, _ptr(A.CommonMetadata))
_proto("pa_kv_update_slices_count", _S, _ptr(A.CommonMetadata), _I32, C.POINTER(_I32), C.POINTER(_I32))
_proto("pa_kv_update_slices_upper_bound", _S, _I32, _I32, _I32, _I32, C.POINTER(_I32))
_proto("pa_build_kv_update_slices", _S, _ptr(A.CommonMetadata), _I32, _P, _I32, C.POINTER(_I32),
       C.POINTER(_I32))
_proto("pa_decode_use_v1", C.c_int, _I32, _I32, _I32)
_proto("pa_decode_make_plan", _S, _I32, _I32, _I32, _I32, _I32, _I32, _ptr(A.DecodePlan))
_proto("pa_get_page_size", _S, _I64, C.POINTER(_I32))
_proto("pa_get_min_page_size", _S, _I64, _I32, C.POINTER(_I32))
_proto("pa_cuda_min_page_size", _S, _I64, _I32, _SZ, C.POINTER(_I32))

_mismatch = A.abi_mismatches(lib)
if _mismatch:
    raise ImportError(f"pagedattn: the ctypes mirrors in _abi.py do not match {lib_path}:\n  "
                      + "\n  ".join(_mismatch))


class CudaError(RuntimeError):
    """A CUDA runtime call failed (PA_ERR_CUDA) or no device (PA_ERR_NO_DEVICE)."""


def check(status, what):
    """Raises the documented exception for a pa_status other than PA_SUCCESS:
    ValueError for PA_ERR_INVALID_ARGUMENT and PA_ERR_WORKSPACE_TOO_SMALL (a
    caller's workspace short of the op's size: bad input, as ops.py says),
    NotImplementedError for PA_ERR_UNSUPPORTED, RuntimeError (CudaError for CUDA
    and no-device) otherwise.
    The text is `what: <pa_last_error()>` (the library's text alone where it already
    starts with `what:`)."""
    if status == A.PA_SUCCESS:
        return
    detail = (lib.pa_last_error() or b"").decode(errors="replace")
    name = (lib.pa_status_string(status) or b"?").decode()
    msg = detail if detail.startswith(f"{what}: ") else f"{what}: {detail}" if detail else f"{what}: {name}"
    if status in (A.PA_ERR_INVALID_ARGUMENT, A.PA_ERR_WORKSPACE_TOO_SMALL):
        raise ValueError(msg)
    if status == A.PA_ERR_UNSUPPORTED:
        raise NotImplementedError(msg)
    if status in (A.PA_ERR_CUDA, A.PA_ERR_NO_DEVICE):
        raise CudaError(f"{msg} ({name})")
    raise RuntimeError(f"{msg} ({name})")
