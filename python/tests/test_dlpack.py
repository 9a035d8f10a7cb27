"""DLPack parsing against a producer written here with ctypes (not NumPy's):
NULL strides mean row-major, byte_offset is added to data, and bfloat16
(code 4, which NumPy cannot export) is understood."""
import ctypes as C
import math

import numpy as np

import pagedattn as pa
from refattn import Paged, attend


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)), ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


_new = C.pythonapi.PyCapsule_New
_new.restype = C.py_object
_new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]


class Producer:
    """A bf16 (or other) tensor over a NumPy buffer, exported with NULL strides
    and a byte offset of `pad` elements."""

    def __init__(self, storage, shape, code, bits, pad):
        self.storage, self.shape = storage, shape
        self.code, self.bits, self.pad = code, bits, pad

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None):
        shape = (C.c_int64 * len(self.shape))(*self.shape)
        m = DLManagedTensor()
        m.dl_tensor = DLTensor(data=self.storage.ctypes.data, device=DLDevice(1, 0), ndim=len(self.shape),
                               dtype=DLDataType(self.code, self.bits, 1), shape=shape, strides=None,
                               byte_offset=self.pad * self.storage.itemsize)
        self._keep = (shape, m)  # the producer owns the memory; the capsule needs no destructor
        return _new(C.addressof(m), b"dltensor", None)


def to_bf16_bits(x):
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_bf16_null_strides_and_byte_offset():
    rng = np.random.default_rng(30)
    H, KVH, D, BS, lens = 4, 2, 32, 16, [7, 20]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    for s in range(len(lens)):  # the history as bf16 sees it
        pg.K[s] = bf16_to_f32(to_bf16_bits(pg.K[s]))
        pg.V[s] = bf16_to_f32(to_bf16_bits(pg.V[s]))
    kc, vc = pg.fill("nhd", filler=0)
    q = bf16_to_f32(to_bf16_bits(rng.standard_normal((2, H, D))))
    pad = 5  # elements before each tensor's data: only byte_offset points past them

    def make(values_f32):
        store = np.concatenate([np.full(pad, 0xFFFF, np.uint16), to_bf16_bits(values_f32).ravel()])
        return store, Producer(store, values_f32.shape, 4, 16, pad)

    _, tq = make(q)
    _, tk = make(kc)
    _, tv = make(vc)
    out_store, tout = make(np.zeros_like(q))
    pa.paged_attention_v1(tout, tq, tk, tv, KVH, 1 / math.sqrt(D), pg.block_tables, np.array(lens, np.int32), BS,
                          20)
    assert (out_store[:pad] == 0xFFFF).all()  # nothing written before the offset
    got = bf16_to_f32(out_store[pad:]).reshape(q.shape)
    for s in range(len(lens)):
        np.testing.assert_allclose(got[s], attend(q[s:s + 1], pg.K[s], pg.V[s], 1 / math.sqrt(D))[0], atol=2e-2,
                                   rtol=2e-2)
