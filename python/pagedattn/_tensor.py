"""Checks on DLPack views, framework-native allocation and the caller's stream."""
import ctypes as C
import sys

from . import _abi as A
from ._dlpack import kDLCPU, kDLCUDAHost, view

PA_DTYPES = {"float32": A.PA_DTYPE_F32, "float16": A.PA_DTYPE_F16, "bfloat16": A.PA_DTYPE_BF16,
             "float8_e4m3fn": A.PA_DTYPE_FP8_E4M3, "float8_e5m2": A.PA_DTYPE_FP8_E5M2}
QUERY_DTYPES = ("float32", "float16", "bfloat16")
# vLLM's kv_cache_dtype strings
_KV_CACHE_DTYPES = {"fp8": A.PA_DTYPE_FP8_E4M3, "fp8_e4m3": A.PA_DTYPE_FP8_E4M3,
                    "fp8_e5m2": A.PA_DTYPE_FP8_E5M2}


def views(op, **tensors):
    """Views of the given tensors (None stays None), named `op: argument`."""
    return {k: (None if v is None else view(v, f"{op}: {k}")) for k, v in tensors.items()}


def on_host(v):
    return v.device_type in (kDLCPU, kDLCUDAHost)


def same_device(op, vs):
    """All live views on the host, or all on one CUDA device; returns True for CUDA.
    A mix raises ValueError naming both arguments before anything runs."""
    vs = [v for v in vs if v is not None]
    first = vs[0]
    cuda = not on_host(first)
    for v in vs[1:]:
        if on_host(v) == cuda or (cuda and v.device_id != first.device_id):
            raise ValueError(f"{op}: {v.name.split(': ')[-1]} is on {v.device}:{v.device_id} but "
                             f"{first.name.split(': ')[-1]} is on {first.device}:{first.device_id}; "
                             "every tensor of one call must be on the same device (host arrays run the CPU "
                             "reference, CUDA arrays the kernels)")
    return cuda


def arg(v):
    return v.name.split(": ", 1)[-1]


def need_dtype(op, v, allowed):
    if v.dtype not in allowed:
        raise ValueError(f"{op}: {arg(v)} has dtype {v.dtype}; expected {' or '.join(allowed)}")


def need_ndim(op, v, ndims):
    if isinstance(ndims, int):
        ndims = (ndims,)
    if v.ndim not in ndims:
        raise ValueError(f"{op}: {arg(v)} must have {' or '.join(map(str, ndims))} dimensions, got shape "
                         f"{list(v.shape)}")


def need_shape(op, v, shape, what=""):
    if tuple(v.shape) != tuple(shape):
        raise ValueError(f"{op}: {arg(v)} has shape {list(v.shape)}; expected {list(shape)}{what}")


def need_contiguous(op, v):
    if not v.is_contiguous():
        raise ValueError(f"{op}: {arg(v)} must be contiguous (row-major), got strides {list(v.strides)} for shape "
                         f"{list(v.shape)}")


def need_inner_contiguous(op, v):
    """Element stride 1 in the last dimension (a head's elements adjacent)."""
    if v.shape[-1] > 1 and v.strides[-1] != 1:
        raise ValueError(f"{op}: {arg(v)} must have stride 1 in its last dimension, got strides {list(v.strides)}")


def cache_dtype(op, v, kv_cache_dtype, what="kv_cache_dtype"):
    """pa_dtype of a cache tensor under vLLM's kv_cache_dtype string (the argument `what`)."""
    kvd = (kv_cache_dtype or "auto").lower()
    if kvd == "auto":
        if v.dtype not in PA_DTYPES:
            raise ValueError(f"{op}: {arg(v)} has dtype {v.dtype}; with {what} 'auto' a cache must be "
                             "float32, float16, bfloat16, float8_e4m3fn or float8_e5m2")
        return PA_DTYPES[v.dtype]
    if kvd not in _KV_CACHE_DTYPES:
        raise ValueError(f"{op}: {what} {kv_cache_dtype!r} is not one of 'auto', 'fp8', 'fp8_e4m3', "
                         "'fp8_e5m2'")
    want = _KV_CACHE_DTYPES[kvd]
    if v.dtype == "uint8" or PA_DTYPES.get(v.dtype) == want:
        return want
    raise ValueError(f"{op}: {arg(v)} has dtype {v.dtype}; {what} {kv_cache_dtype!r} needs uint8 or "
                     "the matching float8 storage")


def framework(obj):
    return type(obj).__module__.split(".", 1)[0]


def empty(like, shape, dtype, zero=False):
    """A new tensor of `like`'s framework and device (dtype: a name such as 'uint8')."""
    fw = framework(like)
    if fw == "torch":
        import torch
        t = (torch.zeros if zero else torch.empty)(tuple(shape), dtype=getattr(torch, dtype), device=like.device)
        return t
    if fw == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return (cupy.zeros if zero else cupy.empty)(tuple(shape), dtype=dtype)
    if fw == "numpy":
        import numpy
        return (numpy.zeros if zero else numpy.empty)(tuple(shape), dtype=dtype)
    raise NotImplementedError(f"cannot allocate a {fw} tensor (for outputs and workspace): pass torch, cupy or "
                              "numpy arrays, or give the output / workspace explicitly")


def small_array(like, values, dtype):
    """A short tensor holding `values` on `like`'s device, in like's framework
    (a host-to-device copy on CUDA: not for use during graph capture)."""
    fw = framework(like)
    if fw == "torch":
        import torch
        return torch.tensor(values, dtype=getattr(torch, dtype), device=like.device)
    if fw == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.asarray(values, dtype=dtype)
    import numpy
    return numpy.asarray(values, dtype=dtype)


def stream_handle(op, cuda_views, stream):
    """cudaStream_t (as int) for a GPU call: the explicit `stream` (an int, a
    torch.cuda.Stream, a cupy Stream), else the current stream of the framework
    the CUDA tensors come from, else 0 (the legacy default stream)."""
    if stream is not None:
        if isinstance(stream, int):
            return stream
        for attr in ("cuda_stream", "ptr"):
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        raise TypeError(f"{op}: stream must be an int, a torch.cuda.Stream or a cupy Stream, got "
                        f"{type(stream).__name__}")
    fws = {framework(v.obj) for v in cuda_views if v is not None}
    dev = next(v for v in cuda_views if v is not None).device_id
    if "torch" in fws and "torch" in sys.modules:
        import torch
        if torch.cuda.current_device() != dev:
            raise ValueError(f"{op}: the tensors are on cuda:{dev} but the current device is "
                             f"cuda:{torch.cuda.current_device()}; use `with torch.cuda.device({dev}):`")
        return int(torch.cuda.current_stream(dev).cuda_stream)
    if "cupy" in fws and "cupy" in sys.modules:
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)
    return 0


def vp(x):
    return C.c_void_p(x) if x else None
