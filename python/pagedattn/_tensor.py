"""Checks on DLPack views, framework-native allocation and the caller's stream."""
import contextlib
import ctypes as C
import functools
import inspect
import numbers
import operator
import sys

from . import _abi as A
from ._dlpack import framework, kDLCPU, kDLCUDAHost, view

PA_DTYPES = {"float32": A.PA_DTYPE_F32, "float16": A.PA_DTYPE_F16, "bfloat16": A.PA_DTYPE_BF16,
             "float8_e4m3fn": A.PA_DTYPE_FP8_E4M3, "float8_e5m2": A.PA_DTYPE_FP8_E5M2}
QUERY_DTYPES = ("float32", "float16", "bfloat16")
# vLLM's kv_cache_dtype strings
_KV_CACHE_DTYPES = {"fp8": A.PA_DTYPE_FP8_E4M3, "fp8_e4m3": A.PA_DTYPE_FP8_E4M3,
                    "fp8_e5m2": A.PA_DTYPE_FP8_E5M2}


def views(op, optional=(), written=(), **tensors):
    """Views of the given tensors, named `op: argument`. None stays None for the
    arguments named in `optional`; for any other it is a TypeError naming it. The
    arguments named in `written` (outputs, caches the op writes) must be writable:
    a read-only one (DLPack's READ_ONLY flag), or a torch tensor that requires grad, is a
    ValueError naming it."""
    return {k: (None if v is None and k in optional else view(v, f"{op}: {k}", k in written))
            for k, v in tensors.items()}


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
    """Element stride 1 in the last dimension (a head's elements adjacent); an empty tensor passes."""
    if v.numel and v.shape[-1] > 1 and v.strides[-1] != 1:
        raise ValueError(f"{op}: {arg(v)} must have stride 1 in its last dimension, got strides {list(v.strides)}")


def c_stride(op, v, dim):
    """v's stride (elements) in dimension `dim`, to be passed to C, where a stride of 0 means
    "contiguous": a stride <= 0 on a dimension of more than one element (a broadcast / expanded
    or reversed view) is a ValueError. An empty tensor reads nothing, and a dimension of one
    element has no stride that matters (torch and NumPy may give it any, negative or smaller
    than a row, which C would refuse): both are passed as 0."""
    if v.numel == 0 or v.shape[dim] == 1:
        return 0
    s = v.strides[dim]
    if s <= 0:
        raise ValueError(f"{op}: {arg(v)} has stride {s} in dimension {dim} (size {v.shape[dim]}), got strides "
                         f"{list(v.strides)}; broadcast (stride 0, e.g. expand) and reversed views are not "
                         "supported: pass a contiguous copy")
    return s


def _checked_int(op, name, x, bits):
    try:
        v = operator.index(x)  # ints and NumPy integers; a float or a string is not an index
    except TypeError as e:
        raise TypeError(f"{op}: {name} must be an integer, got {type(x).__name__} {x!r}") from e
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not lo <= v <= hi:
        raise ValueError(f"{op}: {name} {v} does not fit in int{bits} [{lo}, {hi}]")
    return v


def i32(op, name, x):
    """int(x), checked to fit the C int32 it goes into (ctypes would wrap it silently)."""
    return _checked_int(op, name, x, 32)


def i64(op, name, x):
    """int(x), checked to fit the C int64 it goes into."""
    return _checked_int(op, name, x, 64)


def real(op, name, x):
    """float(x) for a real number (Python's or NumPy's) or a one-element array or tensor of any shape, which
    k_scale and v_scale take too; anything else is a TypeError naming the argument (NumPy 2 refuses float() of
    a one-element array that is not 0-d, with a message that names neither)."""
    if isinstance(x, numbers.Real):
        return float(x)
    n = x.numel() if callable(getattr(x, "numel", None)) else getattr(x, "size", None)
    if n == 1 and callable(getattr(x, "item", None)):
        v = x.item()
        if isinstance(v, numbers.Real):
            return float(v)
    raise TypeError(f"{op}: {name} must be a real number or a one-element array, got {type(x).__name__} {x!r}")


_INT_BITS = {C.c_int32: 32, C.c_int64: 64}


def cstruct(op, cls, **fields):
    """cls(**fields) with every integer field checked to fit its C type (named by the field)."""
    types = dict(cls._fields_)
    for k, x in fields.items():
        bits = _INT_BITS.get(types[k])
        if bits is not None and x is not None:
            fields[k] = _checked_int(op, k, x, bits)
    return cls(**fields)


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


def empty(like, shape, dtype, zero=False, fill=None):
    """A new tensor of `like`'s framework and device (dtype: a name such as 'uint8'): uninitialised,
    zeroed (zero=True) or filled with the number `fill`."""
    fw = framework(like)
    if fw == "torch":
        import torch
        if fill is not None:
            return torch.full(tuple(shape), fill, dtype=getattr(torch, dtype), device=like.device)
        t = (torch.zeros if zero else torch.empty)(tuple(shape), dtype=getattr(torch, dtype), device=like.device)
        return t
    if fw == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            if fill is not None:
                return cupy.full(tuple(shape), fill, dtype=dtype)
            return (cupy.zeros if zero else cupy.empty)(tuple(shape), dtype=dtype)
    if fw == "numpy":
        import numpy
        if fill is not None:
            return numpy.full(tuple(shape), fill, dtype=dtype)
        return (numpy.zeros if zero else numpy.empty)(tuple(shape), dtype=dtype)
    raise NotImplementedError(f"cannot allocate a {fw} tensor (for outputs and workspace): pass torch, cupy or "
                              "numpy arrays, or give the output / workspace explicitly")


def small_array(like, values, dtype, what):
    """A short tensor holding `values` on `like`'s device, in like's framework
    (a host-to-device copy on CUDA: refused during torch's graph capture, where
    the replays would not repeat it; `what` names the values in that error)."""
    fw = framework(like)
    if fw == "torch":
        import torch
        host = torch.tensor(values, dtype=getattr(torch, dtype))
        if like.device.type != "cuda":
            return host.to(like.device)
        if torch.cuda.is_current_stream_capturing():
            raise ValueError(f"{what} is copied to the GPU at each call, which a CUDA graph's replays would not "
                             "repeat: pass a tensor on the device when capturing")
        # Pinned and non-blocking: the copy is ordered on the current stream with no wait for it
        # (a pageable copy synchronises the stream); torch keeps the pinned block until it ran.
        return host.pin_memory().to(like.device, non_blocking=True)
    if fw == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.asarray(values, dtype=dtype)
    import numpy
    return numpy.asarray(values, dtype=dtype)


def _stream_ptr(op, stream):
    """cudaStream_t (as int) of an explicit stream: an int, a torch.cuda.Stream or a cupy Stream."""
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(f"{op}: stream must be an int, a torch.cuda.Stream or a cupy Stream, got "
                    f"{type(stream).__name__}")


def _cuda_objects(values):
    """The torch and cupy arrays on a CUDA device among an op's arguments (lists and tuples
    searched one level down: copy_blocks' caches), by framework, first seen first."""
    found = {}
    for v in values:
        for x in (v if isinstance(v, (list, tuple)) else (v,)):
            fw = framework(x)
            if fw in found:
                continue
            if fw == "torch" and getattr(x, "is_cuda", False):
                found[fw] = x
            elif fw == "cupy" and hasattr(x, "device") and hasattr(x, "data"):
                found[fw] = x
    return found


@contextlib.contextmanager
def _launch_stream(op, values, stream):
    """The body of an op called with an explicit `stream`, run with that stream as the current
    stream of each framework whose CUDA arrays the op was given (torch, cupy). What the op
    allocates with them (a decode or ragged workspace, scale scalars copied from Python floats,
    outputs it creates and zero-fills, copy_blocks' pointer arrays) then belongs to the launch
    stream: it is written there before the kernels run, and the framework's caching allocator
    hands it out again only to work ordered after them. Allocated on the caller's current stream
    instead, it went back to that stream's pool when the op returned, while the kernels were
    still queued on the other stream: the next allocation there could overwrite a scale before
    a kernel read it, and an output's zero fill could land after the kernel wrote it."""
    ptr = _stream_ptr(op, stream)
    objs = _cuda_objects(values)
    with contextlib.ExitStack() as scope:
        if "torch" in objs:
            import torch
            dev = objs["torch"].device
            # The tensors' device is made current whatever the stream: the C entry launches on the
            # current device (core.h), and a stream that is already current on the tensors' device
            # enters no torch.cuda.stream scope below, which would have made it so.
            scope.enter_context(torch.cuda.device(dev))
            if isinstance(stream, torch.cuda.Stream):
                if stream.device != dev:
                    raise ValueError(f"{op}: stream is on {stream.device} but the tensors are on {dev}")
                s = stream
            elif ptr == torch.cuda.current_stream(dev).cuda_stream:
                s = None
            else:
                s = torch.cuda.ExternalStream(ptr, device=dev)
            if s is not None:
                scope.enter_context(torch.cuda.stream(s))
        if "cupy" in objs:
            import cupy
            scope.enter_context(cupy.cuda.Device(objs["cupy"].device.id))
            if ptr != cupy.cuda.get_current_stream().ptr:
                scope.enter_context(stream if isinstance(stream, cupy.cuda.Stream) else
                                    cupy.cuda.ExternalStream(ptr))
        yield


def stream_scope(fn):
    """Decorator of every op with a keyword-only `stream`: with an explicit stream, the op runs
    under _launch_stream (without one it runs as it is: everything on the current stream)."""
    assert inspect.signature(fn).parameters["stream"].kind is inspect.Parameter.KEYWORD_ONLY, fn.__name__

    @functools.wraps(fn)
    def op(*args, **kwargs):
        stream = kwargs.get("stream")
        if stream is None:
            return fn(*args, **kwargs)
        with _launch_stream(fn.__name__, list(args) + list(kwargs.values()), stream):
            return fn(*args, **kwargs)

    op.stream_scope = True
    return op


def stream_handle(op, cuda_views, stream):
    """cudaStream_t (as int) for a GPU call: the explicit `stream` (an int, a
    torch.cuda.Stream, a cupy Stream), else the current stream of the framework
    the CUDA tensors come from, else 0 (the legacy default stream)."""
    if stream is not None:
        return _stream_ptr(op, stream)
    fws = {framework(v.obj) for v in cuda_views if v is not None}
    if {"torch", "cupy"} <= fws:
        # Each framework allocates (outputs, workspaces, scale copies) on its own current stream,
        # and nothing orders those against the launch on the other's: a kernel could read a scale
        # before its copy lands, and a freed block could be handed out again while queued work
        # still used it. An explicit stream is made current in both (_launch_stream).
        raise ValueError(f"{op}: torch tensors and cupy arrays in one call need an explicit stream=, which "
                         "the op then makes current in both frameworks")
    dev = next(v for v in cuda_views if v is not None).device_id
    if "torch" in fws and "torch" in sys.modules:
        import torch
        if torch.cuda.current_device() != dev:
            raise ValueError(f"{op}: the tensors are on cuda:{dev} but the current device is "
                             f"cuda:{torch.cuda.current_device()}; use `with torch.cuda.device({dev}):`")
        return int(torch.cuda.current_stream(dev).cuda_stream)
    if "cupy" in fws and "cupy" in sys.modules:
        import cupy
        cur = cupy.cuda.runtime.getDevice()
        if cur != dev:
            raise ValueError(f"{op}: the arrays are on cuda:{dev} but cupy's current device is cuda:{cur}; "
                             f"use `with cupy.cuda.Device({dev}):`")
        return int(cupy.cuda.get_current_stream().ptr)
    return 0


def vp(x):
    return C.c_void_p(x) if x else None
