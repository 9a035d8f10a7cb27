"""Reading a tensor of any framework through DLPack (__dlpack__, __dlpack_device__).

The versioned protocol (DLPack 1.x, __dlpack__(max_version=(1, 0))) is asked for first, so a
producer can export a read-only array and say so (NumPy refuses read-only arrays through the
legacy protocol); a producer whose __dlpack__ takes no max_version is asked again without it.
Either capsule ("dltensor_versioned": DLManagedTensorVersioned, "dltensor": DLManagedTensor) is
parsed with ctypes and left unconsumed (not renamed "used_..."), as the DLPack spec lets a
consumer that does not take ownership do: the producer's capsule destructor then calls the
tensor's deleter when the View is dropped, and the View keeps the capsule (and so the memory)
alive while the C call runs. A read-only tensor (DLPACK_FLAG_BITMASK_READ_ONLY) serves as an
input; view(..., writable=True), for what the library writes, refuses it, and a torch tensor
that requires grad too (an input is exported detached).
"""
import ctypes as C

# DLDeviceType
kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
# DLDataTypeCode
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6
kDLFloat8_e4m3fn, kDLFloat8_e5m2 = 10, 12

DEVICE_NAMES = {kDLCPU: "cpu", kDLCUDA: "cuda", kDLCUDAHost: "cuda_host", kDLCUDAManaged: "cuda_managed"}


class _DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class _DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class _DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", _DLDevice), ("ndim", C.c_int32), ("dtype", _DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class _DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


class _DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class _DLManagedTensorVersioned(C.Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p),
                ("flags", C.c_uint64), ("dl_tensor", _DLTensor)]


DLPACK_MAJOR_VERSION = 1  # the major version of the versioned capsules read here
DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0


_capsule_get = C.pythonapi.PyCapsule_GetPointer
_capsule_get.restype = C.c_void_p
_capsule_get.argtypes = [C.py_object, C.c_char_p]
_capsule_valid = C.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = C.c_int
_capsule_valid.argtypes = [C.py_object, C.c_char_p]

# (code, bits) -> our dtype name; numpy/torch/cupy spell these the same way
_DTYPES = {
    (kDLFloat, 32): "float32", (kDLFloat, 16): "float16", (kDLBfloat, 16): "bfloat16", (kDLFloat, 64): "float64",
    (kDLInt, 32): "int32", (kDLInt, 64): "int64", (kDLInt, 8): "int8", (kDLInt, 16): "int16",
    (kDLUInt, 8): "uint8", (kDLUInt, 16): "uint16", (kDLUInt, 32): "uint32", (kDLUInt, 64): "uint64",
    (kDLBool, 8): "bool", (kDLFloat8_e4m3fn, 8): "float8_e4m3fn", (kDLFloat8_e5m2, 8): "float8_e5m2",
}
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int32": 4, "int64": 8, "int8": 1,
            "int16": 2, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1, "float8_e4m3fn": 1,
            "float8_e5m2": 1}


class View:
    """What the C calls need of one tensor: address, shape, strides (elements),
    dtype name, device. `obj` is the framework's tensor itself."""

    __slots__ = ("obj", "name", "ptr", "shape", "strides", "dtype", "device_type", "device_id", "_capsule",
                 "read_only")

    def __init__(self, obj, name, ptr, shape, strides, dtype, device_type, device_id, capsule, read_only=False):
        self.obj, self.name, self.ptr = obj, name, ptr
        self.shape, self.strides, self.dtype = shape, strides, dtype
        self.device_type, self.device_id, self._capsule = device_type, device_id, capsule
        self.read_only = read_only  # the producer's DLPACK_FLAG_BITMASK_READ_ONLY (versioned capsules only)

    @property
    def is_cuda(self):
        return self.device_type in (kDLCUDA, kDLCUDAManaged)

    @property
    def device(self):
        return DEVICE_NAMES.get(self.device_type, f"dlpack device {self.device_type}")

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return ITEMSIZE[self.dtype]

    @property
    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def contiguous_strides(self):
        out, acc = [], 1
        for d in reversed(self.shape):
            out.append(acc)
            acc *= d
        return tuple(reversed(out))

    def is_contiguous(self):
        # dimensions of size 1 may carry any stride (torch and numpy both do that), and so may
        # every dimension of an empty tensor (NumPy 2 exports zero-size arrays with zero strides)
        if self.numel == 0:
            return True
        want = self.contiguous_strides()
        return all(s == w or d == 1 for s, w, d in zip(self.strides, want, self.shape))

    def __repr__(self):
        return f"<{self.name}: {self.dtype}{list(self.shape)} strides {list(self.strides)} on {self.device}>"


def _refuse_read_only(v):
    raise ValueError(f"{v.name} is written in place, so it must be writable, but its producer exports it "
                     "read-only (DLPack's READ_ONLY flag: e.g. a NumPy array with flags.writeable False, "
                     "np.frombuffer of bytes, a mmap_mode='r' array); pass a writable copy")


def _export(obj):
    """obj's DLPack capsule, versioned where the producer can give one.

    A CUDA array is asked for with stream=-1, the protocol's "no synchronisation": the kernels
    run on the producer's current stream (or the caller's explicit `stream`, made current for
    the call: _tensor._launch_stream), so nothing needs ordering. Without a stream a producer
    may take the consumer's to be the legacy default stream (the array API's rule for None,
    which some torch releases follow): it then records an event on its current stream and makes
    the legacy stream wait on it, for every array of every call, and inside CUDA graph capture
    (a side stream) that is an error that ends the capture. A producer that does not take an
    argument (TypeError) or the value -1 (BufferError, ValueError) is asked without it."""
    try:
        cuda = int(obj.__dlpack_device__()[0]) in (kDLCUDA, kDLCUDAManaged)
    except Exception:  # a producer's own error shows when __dlpack__ is called
        cuda = False
    versioned = {"max_version": (DLPACK_MAJOR_VERSION, 0)}
    attempts = ([{"stream": -1, **versioned}, {"stream": -1}] if cuda else []) + [versioned, {}]
    err = None
    for kwargs in attempts:
        try:
            return obj.__dlpack__(**kwargs)
        except TypeError as e:
            err = e
        except (BufferError, ValueError) as e:
            if "stream" not in kwargs:
                raise
            err = e
    raise err


_TORCH_FLOAT8 = {"torch.float8_e4m3fn": "float8_e4m3fn", "torch.float8_e5m2": "float8_e5m2"}


def framework(obj):
    """The top-level module of obj's type: 'torch', 'cupy', 'numpy', 'jax'..."""
    return type(obj).__module__.split(".", 1)[0]


def _detached(obj, name, writable):
    """A torch tensor that requires grad, detached: torch refuses to export it, and the library
    only reads the storage, which the detached alias shares. One the library would write
    (`writable`) is a ValueError instead: the write goes through its address, which autograd does
    not see (torch's own in-place ops refuse a leaf that requires grad). Anything else as it is."""
    if getattr(obj, "requires_grad", False) and framework(obj) == "torch":
        if writable:
            raise ValueError(f"{name} is written in place but requires grad: the library writes through its "
                             "address, which autograd does not see (torch's in-place ops refuse a leaf that "
                             "requires grad); pass a tensor that does not require grad (outputs and caches "
                             "need none), or its .detach() to write its storage knowingly")
        return obj.detach()
    return obj


def _float8_as_uint8(obj):
    """A torch float8 tensor's uint8 alias (same shape and strides) and the float8 dtype name,
    for torch releases whose DLPack exporter has no float8 code; None for anything else."""
    name = _TORCH_FLOAT8.get(str(getattr(obj, "dtype", "")))
    if name is None or framework(obj) != "torch":
        return None
    import torch
    return obj.view(torch.uint8), name


def view(obj, name, writable=False):
    """Parses obj.__dlpack__() into a View. TypeError (naming the argument) when
    obj has no DLPack interface or is not exportable; with writable (an argument the
    library writes), ValueError when the producer exports it read-only or it is a torch
    tensor that requires grad."""
    if isinstance(obj, View):
        if writable and obj.read_only:
            _refuse_read_only(obj)
        return obj
    if not hasattr(obj, "__dlpack__") or not hasattr(obj, "__dlpack_device__"):
        raise TypeError(f"{name}: expected a tensor with __dlpack__/__dlpack_device__ (torch, cupy, jax, numpy), "
                        f"got {type(obj).__name__}")
    exported, dtype_name = _detached(obj, name, writable), None
    try:
        capsule = _export(exported)
    except (BufferError, TypeError, ValueError, RuntimeError) as e:
        alias = _float8_as_uint8(exported)
        if alias is None:
            raise TypeError(f"{name}: cannot be exported through DLPack: {e}") from e
        exported, dtype_name = alias
        try:
            capsule = _export(exported)
        except (BufferError, TypeError, ValueError, RuntimeError):
            raise TypeError(f"{name}: cannot be exported through DLPack: {e}") from e
    read_only = False
    if _capsule_valid(capsule, b"dltensor_versioned"):
        managed = _DLManagedTensorVersioned.from_address(_capsule_get(capsule, b"dltensor_versioned"))
        if managed.version.major != DLPACK_MAJOR_VERSION:
            raise TypeError(f"{name}: DLPack version {managed.version.major}.{managed.version.minor} is not "
                            f"supported (major version {DLPACK_MAJOR_VERSION} was asked for)")
        read_only = bool(managed.flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    elif _capsule_valid(capsule, b"dltensor"):
        managed = _DLManagedTensor.from_address(_capsule_get(capsule, b"dltensor"))
    else:
        raise TypeError(f"{name}: __dlpack__ returned something other than an unconsumed 'dltensor' or "
                        "'dltensor_versioned' capsule")
    t = managed.dl_tensor
    ndim = t.ndim
    shape = tuple(t.shape[i] for i in range(ndim))
    if t.dtype.lanes != 1:
        raise TypeError(f"{name}: vector dtypes (lanes {t.dtype.lanes}) are not supported")
    dtype = _DTYPES.get((t.dtype.code, t.dtype.bits))
    if dtype_name is not None and dtype == "uint8":  # a float8 tensor's uint8 alias (_float8_as_uint8)
        dtype = dtype_name
    if dtype is None:
        raise TypeError(f"{name}: DLPack dtype code {t.dtype.code} bits {t.dtype.bits} is not supported")
    if t.strides:
        strides = tuple(t.strides[i] for i in range(ndim))
    else:  # NULL strides: compact row-major
        strides, acc = [], 1
        for d in reversed(shape):
            strides.append(acc)
            acc *= d
        strides = tuple(reversed(strides))
    if t.device.device_type not in DEVICE_NAMES:
        raise TypeError(f"{name}: DLPack device type {t.device.device_type} is not supported; expected a host "
                        "(CPU, CUDA host) or CUDA (device, managed) tensor")
    ptr = (t.data or 0) + t.byte_offset
    v = View(obj, name, ptr, shape, strides, dtype, t.device.device_type, t.device.device_id, capsule, read_only)
    if writable and read_only:
        _refuse_read_only(v)
    return v
