"""DLPack parsing against a producer written here with ctypes (not NumPy's):
NULL strides mean row-major, byte_offset is added to data, and bfloat16
(code 4, which NumPy cannot export) is understood."""
import ctypes as C
import math

import numpy as np
import pytest

import pagedattn as pa
from refattn import Paged, attend, fp8_values


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

    def __init__(self, storage, shape, code, bits, pad, lanes=1):
        self.storage, self.shape = storage, shape
        self.code, self.bits, self.pad, self.lanes = code, bits, pad, lanes

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None):
        shape = (C.c_int64 * len(self.shape))(*self.shape)
        m = DLManagedTensor()
        m.dl_tensor = DLTensor(data=self.storage.ctypes.data, device=DLDevice(1, 0), ndim=len(self.shape),
                               dtype=DLDataType(self.code, self.bits, self.lanes), shape=shape, strides=None,
                               byte_offset=self.pad * self.storage.itemsize)
        self._keep = (shape, m)  # the producer owns the memory; the capsule needs no destructor
        return _new(C.addressof(m), b"dltensor", None)


class DLPackVersion(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p),
                ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


class VersionedProducer:
    """A DLPack 1.x producer (capsule 'dltensor_versioned') over a NumPy array, with the given
    flags (bit 0: READ_ONLY) and version; it answers only a caller that passes max_version."""

    def __init__(self, storage, flags=0, version=(1, 0)):
        self.storage, self.flags, self.version, self.asked = storage, flags, version, []

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None, max_version=None):
        self.asked.append(max_version)
        if max_version is None:
            raise BufferError("this producer exports versioned capsules only")
        a = self.storage
        shape = (C.c_int64 * a.ndim)(*a.shape)
        strides = (C.c_int64 * a.ndim)(*[s // a.itemsize for s in a.strides])
        m = DLManagedTensorVersioned()
        m.version = DLPackVersion(*self.version)
        m.flags = self.flags
        m.dl_tensor = DLTensor(data=a.ctypes.data, device=DLDevice(1, 0), ndim=a.ndim,
                               dtype=DLDataType({4: 2, 1: 1}[a.itemsize], a.itemsize * 8, 1), shape=shape,
                               strides=strides, byte_offset=0)
        self._keep = (shape, strides, m)
        return _new(C.addressof(m), b"dltensor_versioned", None)


def test_versioned_capsules_and_the_read_only_flag():
    """A DLManagedTensorVersioned is parsed (its DLTensor after version, manager_ctx, deleter and
    flags): a READ_ONLY one is read as an input, refused as an output; major version 2 is refused;
    max_version (1, 0) is what is asked for."""
    x = np.linspace(-3, 3, 16).astype(np.float32)
    want = np.zeros(16, np.uint8)
    pa.convert_fp8(want, x, 0.5)
    for flags in (0, 1):
        src = VersionedProducer(x, flags=flags)
        got = np.zeros(16, np.uint8)
        pa.convert_fp8(got, src, 0.5)
        np.testing.assert_array_equal(got, want)
        assert src.asked == [(1, 0)]
    dst = np.full(16, 7, np.uint8)
    pa.convert_fp8(VersionedProducer(dst), x, 0.5)  # writable: written
    np.testing.assert_array_equal(dst, want)
    dst[:] = 7
    with pytest.raises(ValueError, match="convert_fp8: dst_cache is written in place, so it must be writable"):
        pa.convert_fp8(VersionedProducer(dst, flags=1), x, 0.5)
    with pytest.raises(TypeError, match="convert_fp8: src_cache: DLPack version 2.0 is not supported"):
        pa.convert_fp8(dst, VersionedProducer(x, version=(2, 0)), 0.5)
    assert (dst == 7).all()


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


# ---- gaps a mutation pass of python/pagedattn found (python/tests/mutants.py) ----------------------


def test_vector_dtypes_refused():
    """DLPack lanes > 1 (e.g. a float32x2 tensor) is no dtype the library knows: a TypeError
    naming the argument, and nothing written."""
    x = np.ones(16, np.float32)
    dst = np.full(8, 7, np.uint8)
    with pytest.raises(TypeError, match=r"convert_fp8: src_cache: vector dtypes \(lanes 2\) are not supported"):
        pa.convert_fp8(dst, Producer(x, (8,), 2, 32, 0, lanes=2))
    assert (dst == 7).all()


def test_bf16_vllm_cache_packs_eight_elements():
    """A bfloat16 vLLM cache packs x = 16 bytes / 2 = 8 elements (kv_cache.h); decode reads it,
    and a bf16 key cache packed as if its elements were 4 bytes (x = 4) is refused."""
    rng = np.random.default_rng(31)
    H, KVH, D, BS, lens = 4, 2, 32, 16, [7, 20]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    for s in range(len(lens)):
        pg.K[s] = bf16_to_f32(to_bf16_bits(pg.K[s]))
        pg.V[s] = bf16_to_f32(to_bf16_bits(pg.V[s]))
    nhd_k, nhd_v = pg.fill("nhd", filler=0)  # [nb, bs, h, d]
    nb = nhd_k.shape[0]
    # key[b, h, d // 8, t, d % 8] and value[b, h, d, t], by the layout's definition
    kc = np.ascontiguousarray(nhd_k.reshape(nb, BS, KVH, D // 8, 8).transpose(0, 2, 3, 1, 4))
    vc = np.ascontiguousarray(nhd_v.transpose(0, 2, 3, 1))
    q = bf16_to_f32(to_bf16_bits(rng.standard_normal((2, H, D))))

    def bf16(a):
        return Producer(to_bf16_bits(a).ravel(), a.shape, 4, 16, 0)

    out_bits = np.zeros(q.size, np.uint16)
    out = Producer(out_bits, q.shape, 4, 16, 0)
    seq_lens = np.array(lens, np.int32)
    pa.paged_attention_v1(out, bf16(q), bf16(kc), bf16(vc), KVH, 0.25, pg.block_tables, seq_lens, BS, 20)
    got = bf16_to_f32(out_bits).reshape(q.shape)
    for s in range(len(lens)):
        np.testing.assert_allclose(got[s], attend(q[s:s + 1], pg.K[s], pg.V[s], 0.25)[0], atol=2e-2, rtol=2e-2)
    k4 = np.ascontiguousarray(nhd_k.reshape(nb, BS, KVH, D // 4, 4).transpose(0, 2, 3, 1, 4))
    with pytest.raises(ValueError, match="key_cache's last dimension is 4; the vLLM layout packs x = 16 bytes / "
                                         "element size = 8"):
        pa.paged_attention_v1(out, bf16(q), bf16(k4), bf16(vc), KVH, 0.25, pg.block_tables, seq_lens, BS, 20)


def test_float8_storage_must_match_the_named_format():
    """float8_e4m3fn (DLPack code 10) and float8_e5m2 (code 12) storage name their format:
    'auto' reads it, the matching name is taken, the other format's name is refused."""
    for fmt, code, other in (("e5m2", 12, "fp8_e4m3"), ("e4m3", 10, "fp8_e5m2")):
        table = fp8_values(fmt)
        b = np.array([x for x in range(256) if np.isfinite(table[x])], np.uint8)  # every finite byte
        for kv_dtype in ("auto", "fp8_" + fmt):
            y = np.full(b.shape, np.nan, np.float32)
            pa.convert_fp8(y, Producer(b, b.shape, code, 8, 0), 0.5, kv_dtype)
            np.testing.assert_array_equal(y, (table[b] * 0.5).astype(np.float32))
        for bad in (other, "fp8") if fmt == "e5m2" else (other,):
            y = np.full(b.shape, 7, np.float32)
            with pytest.raises(ValueError, match=f"src_cache has dtype float8_{fmt}.*; kv_dtype '{bad}' needs uint8 "
                                                 "or the matching float8 storage"):
                pa.convert_fp8(y, Producer(b, b.shape, code, 8, 0), 0.5, bad)
            assert (y == 7).all()
