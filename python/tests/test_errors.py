"""Bad arguments raise the documented exceptions before anything runs, and
nothing is written."""
import ctypes
import math
import sys

import numpy as np
import pytest

import pagedattn as pa
from pagedattn import _abi
from refattn import Paged, mixed_batch


class FakeCuda:
    """A NumPy array whose DLPack capsule says kDLCUDA (device `device_id`): a CUDA tensor
    as far as the checks can tell, for device-mismatch tests on a machine without a GPU."""
    device_type = 2

    def __init__(self, a, device_id=0):
        self.a, self.device_id = a, device_id

    def __dlpack_device__(self):
        return (self.device_type, self.device_id)

    def __dlpack__(self, stream=None):
        cap = self.a.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        addr = get(cap, b"dltensor")
        ctypes.c_int32.from_address(addr + 8).value = self.device_type  # DLTensor.device.device_type
        ctypes.c_int32.from_address(addr + 12).value = self.device_id  # DLTensor.device.device_id
        return cap


class FakeCudaHost(FakeCuda):
    """A NumPy array announced as kDLCUDAHost (3): pinned host memory, which the ops treat as
    host memory (the CPU reference runs)."""
    device_type = 3


def decode_problem(dtype=np.float32, layout="vllm"):
    rng = np.random.default_rng(1)
    pg = Paged(rng, [5, 9], 2, 32, 16, dtype)
    kc, vc = pg.fill(layout)
    q = rng.standard_normal((2, 4, 32)).astype(dtype)
    out = np.full_like(q, 7)
    return dict(out=out, query=q, key_cache=kc, value_cache=vc, num_kv_heads=2, scale=1 / math.sqrt(32),
                block_tables=pg.block_tables, seq_lens=np.array([5, 9], np.int32), block_size=16, max_seq_len=9)


def untouched(p):
    assert (p["out"] == 7).all()


def test_abi_mirrors_match_library():
    assert _abi.abi_mismatches(pa.lib) == []
    for cls in _abi.MIRRORS:
        assert pa.lib.pa_abi_sizeof(cls._c_name.encode()) == ctypes.sizeof(cls) > 0


def test_abi_check_catches_a_drifted_mirror():
    class Drifted(ctypes.Structure):  # pa_kv_cache without its last field
        _c_name = "pa_kv_cache"
        _fields_ = _abi.KvCache._fields_[:-1]

    class Swapped(ctypes.Structure):  # two int32 fields in the wrong order: same size
        _c_name = "pa_batch_split"
        _fields_ = [_abi.BatchSplit._fields_[i] for i in (1, 0, 2, 3)]

    saved = _abi.MIRRORS
    try:
        _abi.MIRRORS = (Drifted, Swapped)
        bad = _abi.abi_mismatches(pa.lib)
    finally:
        _abi.MIRRORS = saved
    assert any("pa_kv_cache: sizeof" in b for b in bad)
    assert any("pa_batch_split.num_prefills" in b for b in bad)
    assert pa.lib.pa_abi_sizeof(b"no_such_struct") == 0
    assert pa.lib.pa_abi_offsetof(b"pa_kv_cache", b"no_such_field") == -1


def test_wrong_dtype():
    p = decode_problem()
    p["seq_lens"] = p["seq_lens"].astype(np.int64)
    with pytest.raises(ValueError, match="seq_lens has dtype int64"):
        pa.paged_attention_v1(**p)
    untouched(p)
    p = decode_problem()
    p["query"] = p["query"].astype(np.float64)
    with pytest.raises(ValueError, match="query has dtype float64"):
        pa.paged_attention_v1(**p)
    untouched(p)


def test_non_contiguous_output():
    p = decode_problem()
    big = np.full((2, 4, 64), 7, np.float32)
    p["out"] = big[:, :, ::2]
    with pytest.raises(ValueError, match="out must be contiguous"):
        pa.paged_attention_v1(**p)
    assert (big == 7).all()


def test_non_contiguous_cache():
    p = decode_problem()
    kc = p["key_cache"]
    wide = np.zeros(kc.shape[:-1] + (2 * kc.shape[-1],), kc.dtype)
    wide[..., ::2] = kc
    p["key_cache"] = wide[..., ::2]
    with pytest.raises(ValueError, match="key_cache must be contiguous"):
        pa.paged_attention_v1(**p)
    untouched(p)


def test_missing_dlpack():
    p = decode_problem()
    p["query"] = p["query"].tolist()
    with pytest.raises(TypeError, match="query: expected a tensor with __dlpack__"):
        pa.paged_attention_v1(**p)
    untouched(p)


def test_device_mismatch_cuda_query_host_cache():
    p = decode_problem()
    p["query"] = FakeCuda(p["query"])
    with pytest.raises(ValueError, match="same device"):
        pa.paged_attention_decode(**p)
    untouched(p)


def test_shape_mismatches_name_the_argument():
    p = decode_problem()
    with pytest.raises(ValueError, match="num_kv_heads 4 but the cache holds 2"):
        pa.paged_attention_v1(**dict(p, num_kv_heads=4))
    with pytest.raises(ValueError, match="block_size 8 but"):
        pa.paged_attention_v1(**dict(p, block_size=8))
    with pytest.raises(ValueError, match="seq_lens has 1 entries"):
        pa.paged_attention_v1(**dict(p, seq_lens=np.array([5], np.int32)))
    with pytest.raises(ValueError, match="value_cache has shape"):
        pa.paged_attention_v1(**dict(p, value_cache=p["value_cache"][:, :1]))
    untouched(p)


def test_library_rejection_becomes_value_error():
    """A seq_len above max_seq_len passes the Python checks; the C reference
    rejects it (PA_ERR_INVALID_ARGUMENT) and pa_last_error's text comes through."""
    p = decode_problem()
    with pytest.raises(ValueError, match="paged_attention_v1: .*seq"):
        pa.paged_attention_v1(**dict(p, max_seq_len=6))
    untouched(p)


def test_unsupported_becomes_not_implemented():
    with pytest.raises(NotImplementedError, match="skip_decode"):
        pa.context_attention_fwd(*([None] * 12), skip_decode=True)
    # ragged: head_dim 20 is not a multiple of 8 (PA_ERR_UNSUPPORTED from the library)
    q = np.zeros((2, 2, 20), np.float32)
    kv = np.zeros((2, 4, 2, 20), np.float32)
    out = np.full_like(q, 7)
    with pytest.raises(NotImplementedError, match="ragged_paged_attention: .*head"):
        pa.ragged_paged_attention(q, kv, np.array([2], np.int32), np.array([[0, 1]], np.int32),
                                  np.array([0, 2], np.int32), np.array([1], np.int32), out=out)
    assert (out == 7).all()


def test_bad_slot_mapping_dtype_and_kv_cache_dtype():
    rng = np.random.default_rng(2)
    k = rng.standard_normal((3, 2, 16)).astype(np.float32)
    kc = np.zeros((2, 2, 4, 4, 4), np.float32)
    vc = np.zeros((2, 2, 16, 4), np.float32)
    with pytest.raises(ValueError, match="slot_mapping has dtype int32"):
        pa.reshape_and_cache(k, k, kc, vc, np.array([0, 1, 2], np.int32))
    with pytest.raises(ValueError, match="kv_cache_dtype 'int4'"):
        pa.reshape_and_cache(k, k, kc, vc, np.array([0, 1, 2], np.int64), "int4")
    with pytest.raises(ValueError, match="slot 9|token 1|slot"):
        pa.reshape_and_cache(k, k, kc, vc, np.array([0, 99, 2], np.int64))
    assert not kc.any() and not vc.any()


def test_kv_cache_update_padding_multiple():
    with pytest.raises(ValueError, match="multiple of num_slices_per_block"):
        pa.kv_cache_update(np.zeros((2, 2, 8), np.float32), np.zeros((3, 5), np.int32),
                           np.zeros((8, 2, 8), np.float32), np.array([1], np.int32), page_size=4,
                           num_slices_per_block=8)
    # 0 or below is its own error: "16 columns, not a multiple of -8" was false (16 is)
    for spb in (0, -8):
        with pytest.raises(ValueError, match=f"^kv_cache_update: num_slices_per_block must be > 0, got {spb}$"):
            pa.kv_cache_update(np.zeros((2, 2, 8), np.float32), np.zeros((3, 16), np.int32),
                               np.zeros((8, 2, 8), np.float32), np.array([1], np.int32), page_size=4,
                               num_slices_per_block=spb)


def test_block_copy_arguments():
    src = np.ones((4, 8), np.float32)
    dst = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError, match="block_mapping must be a host"):
        pa.swap_blocks(src, dst, FakeCuda(np.array([[0, 1]], np.int64)))
    with pytest.raises(ValueError, match=r"expected \[num_pairs, 2\]"):
        pa.swap_blocks(src, dst, np.array([[0, 1, 2]], np.int64))
    with pytest.raises(ValueError, match="src blocks are 32 bytes but dst blocks are 16"):
        pa.swap_blocks(src, np.zeros((4, 4), np.float32), np.array([[0, 1]], np.int64))
    with pytest.raises(ValueError, match="pair|block"):  # the library's range check, naming the pair
        pa.swap_blocks(src, dst, np.array([[0, 1], [9, 2]], np.int64))
    assert not dst.any()
    with pytest.raises(ValueError, match="2 key caches but 1 value caches"):
        pa.copy_blocks([src, src.copy()], [dst], np.array([[0, 1]], np.int64))
    with pytest.raises(ValueError, match=r"value_caches\[0\] has shape"):
        pa.copy_blocks([src], [np.zeros((5, 8), np.float32)], np.array([[0, 1]], np.int64))
    assert not dst.any()


def test_ragged_and_context_shapes():
    q = np.zeros((4, 2, 32), np.float32)
    kv = np.zeros((3, 4, 2, 32), np.float32)
    good = dict(kv_lens=np.array([2, 1], np.int32), page_indices=np.zeros((2, 1), np.int32),
                cu_q_lens=np.array([0, 2, 3], np.int32), num_seqs=np.array([2], np.int32))
    with pytest.raises(ValueError, match=r"cu_q_lens has shape \[2\]; expected \[3\]"):
        pa.ragged_paged_attention(q, kv, **dict(good, cu_q_lens=np.array([0, 2], np.int32)))
    with pytest.raises(ValueError, match="page_indices has 3 rows but kv_lens 2"):
        pa.ragged_paged_attention(q, kv, **dict(good, page_indices=np.zeros((3, 1), np.int32)))
    with pytest.raises(ValueError, match="kv_pages has 3 combined heads"):
        pa.ragged_paged_attention(q, np.zeros((3, 4, 3, 32), np.float32), **good)
    out = pa.ragged_paged_attention(q, kv, **good)  # the good arguments do run
    assert out.shape == q.shape
    k = np.zeros((4, 1, 32), np.float32)
    kc = np.zeros((2, 1, 8, 8, 4), np.float32)
    vc = np.zeros((2, 1, 32, 8), np.float32)
    o = np.full_like(q, 7)
    with pytest.raises(ValueError, match=r"k has shape \[4, 1, 32\]; expected \[4, 2, 32\]"):
        pa.context_attention_fwd(q, k, k, o, "auto", np.zeros((2, 2, 8, 8, 4), np.float32),
                                 np.zeros((2, 2, 32, 8), np.float32), np.zeros((1, 1), np.int32),
                                 np.array([0, 4], np.int32), np.array([4], np.int32), 4, 4)
    with pytest.raises(ValueError, match="b_start_loc has 1 entries; needs at least 2"):
        pa.context_attention_fwd(q, k, k, o, "auto", kc, vc, np.zeros((1, 1), np.int32), np.array([0], np.int32),
                                 np.array([4], np.int32), 4, 4)
    assert (o == 7).all()


def test_prompt_attention_bad_arguments():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((6, 4, 32)).astype(np.float32)
    k = rng.standard_normal((6, 2, 32)).astype(np.float32)
    cu = np.array([0, 2, 6], np.int32)
    o = np.full_like(q, 7)
    bad = [
        (ValueError, "attn_type 'causal' is not one of", dict(attn_type="causal")),
        (ValueError, r"cross-attention \(attn_type 'encoder_decoder'\) needs cu_seqlens_k",
         dict(attn_type="encoder_decoder")),
        (ValueError, "cu_seqlens_k needs max_seqlen_k", dict(cu_seqlens_k=cu)),
        (ValueError, r"cu_seqlens_k has shape \[2\]; expected \[3\]",
         dict(cu_seqlens_k=np.array([0, 6], np.int32), max_seqlen_k=6)),
        (ValueError, "alibi_slopes has dtype float64", dict(alibi_slopes=np.ones(4))),
        (ValueError, r"alibi_slopes has shape \[2\]; expected \[4\]", dict(alibi_slopes=np.ones(2, np.float32))),
        (ValueError, "out has dtype float16", dict(out=np.zeros(q.shape, np.float16))),
    ]
    for exc, msg, kw in bad:
        with pytest.raises(exc, match=msg):
            pa.prompt_attention(q, k, k, cu, 4, **dict(dict(out=o), **kw))
    with pytest.raises(ValueError, match="k and v need q's 6 rows, got 5"):
        pa.prompt_attention(q, k[:5], k[:5], cu, 4, out=o)
    with pytest.raises(ValueError, match=r"v has shape \[6, 1, 32\]; expected \[6, 2, 32\]"):
        pa.prompt_attention(q, k, k[:, :1], cu, 4, out=o)
    with pytest.raises(ValueError, match="not a multiple of k's 3 KV heads"):
        pa.prompt_attention(q, np.zeros((6, 3, 32), np.float32), np.zeros((6, 3, 32), np.float32), cu, 4, out=o)
    with pytest.raises(ValueError, match="k must have contiguous heads"):
        pa.prompt_attention(q, k[:, :, ::2], k[:, :, ::2], cu, 4, out=o)
    with pytest.raises(ValueError, match="cu_seqlens_q has dtype int64"):
        pa.prompt_attention(q, k, k, cu.astype(np.int64), 4, out=o)
    with pytest.raises(ValueError, match="k is on cuda:0 but q is on cpu:0"):
        pa.prompt_attention(q, FakeCuda(k), k, cu, 4, out=o)
    # The library's own checks (pa_ref_prompt_attention) reach Python as ValueError too:
    # a query length above max_seqlen_q, a head size the kernels do not take.
    with pytest.raises(ValueError, match="^prompt_attention: cu_seqlens_q: sequence 1 has length 4 > the bound 3"):
        pa.prompt_attention(q, k, k, cu, 3, out=o)
    q12, k12, o12 = np.zeros((6, 4, 12), np.float32), np.zeros((6, 2, 12), np.float32), np.full((6, 4, 12), 7.0)
    with pytest.raises((ValueError, NotImplementedError), match="head_size 12"):
        pa.prompt_attention(q12, k12, k12, cu, 4, out=o12.astype(np.float32))
    # cross-attention takes no sliding window (prefill.h; its docstring)
    with pytest.raises(NotImplementedError, match=r"cross-attention \(encoder/decoder\) takes no sliding window"):
        pa.prompt_attention(q, k, k, cu, 4, attn_type="encoder_decoder", cu_seqlens_k=cu, max_seqlen_k=4,
                            sliding_window=3, out=o)
    assert (o == 7).all()
    got = pa.prompt_attention(q, k, k, cu, 4, out=o)  # the good arguments do run
    assert got is o and np.isfinite(o).all()


def test_mixed_attention_bad_arguments():
    rng = np.random.default_rng(4)
    prefills, decodes = [(5, 3), (0, 2)], [7, 4]
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 8, prefills, decodes)
    o = np.full_like(q, 7)
    args = [q, k, v, kc, vc, pg.block_tables, seq_lens, start, 2, 5, 3, 8, 7]
    bad = [
        (r"num_prefills \(2\) and num_prefill_tokens \(8\) must be >= 0 with num_prefill_tokens <= query's 7 rows",
         {9: 8}, {}),
        (r"num_prefill_tokens 5 \+ num_decode_tokens 3 must lie within query's 7 rows", {}, dict(num_decode_tokens=3)),
        (r"key has shape \[4, 2, 32\]; expected \[>= 5, 2, 32\]", {1: k[:4]}, {}),
        (r"value has shape \[5, 1, 32\]", {2: v[:, :1]}, {}),
        ("block_tables has 3 rows for 4 sequences", {5: pg.block_tables[:3]}, {}),
        (r"seq_lens has 3 entries; needs at least 4 \(num_prefills \+ num_decode_tokens sequences\)",
         {6: seq_lens[:3]}, {}),
        (r"query_start_loc has 2 entries; needs at least 3", {7: start[:2]}, {}),
        ("query_start_loc has dtype int64", {7: start.astype(np.int64)}, {}),
        ("out has dtype float16", {}, dict(out=np.zeros(q.shape, np.float16))),
        (r"out has shape \[6, 4, 32\]", {}, dict(out=np.zeros((6, 4, 32), np.float32))),
        (r"alibi_slopes has shape \[2\]; expected \[4\]", {}, dict(alibi_slopes=np.ones(2, np.float32))),
        ("key is on cuda:0 but query is on cpu:0", {1: FakeCuda(k)}, {}),
        ("value_cache has shape", {4: vc[:, :1]}, {}),
        # the library's own checks (pa_ref_mixed_attention): a decode's seq_len over its bound
        ("^mixed_attention: .*seq_len", {12: 6}, {}),
    ]
    for msg, pos, kw in bad:
        a = list(args)
        for i, x in pos.items():
            a[i] = x
        with pytest.raises(ValueError, match=msg):
            pa.mixed_attention(*a, **dict(dict(out=o), **kw))
    assert (o == 7).all()
    # block size 4 suits context attention but not the decode op: refused as a whole, before either part runs
    pg4, kc4, vc4, q4, k4, v4, start4, sl4 = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 4, prefills, decodes)
    o4 = np.full_like(q4, 7)
    with pytest.raises(NotImplementedError, match="block_size 4"):
        pa.mixed_attention(q4, k4, v4, kc4, vc4, pg4.block_tables, sl4, start4, 2, 5, 3, 8, 7, out=o4)
    assert (o4 == 7).all()
    got = pa.mixed_attention(q4, k4, v4, kc4, vc4, pg4.block_tables, sl4, start4, 2, 5, 3, 8, 7,
                             num_decode_tokens=0, out=o4)  # without its decodes the same batch runs
    assert got is o4 and np.isfinite(o4[:5]).all() and (o4[5:] == 7).all()
    got = pa.mixed_attention(*args, out=o)  # the good arguments do run
    assert got is o and np.isfinite(o).all()


def test_strided_alibi_slopes_refused():
    """ALiBi slopes are read as num_heads adjacent floats, so a strided view is refused
    (every op that takes them), not read past its elements."""
    strided = np.ones(8, np.float32)[::2]
    p = decode_problem()
    for entry in (pa.paged_attention_v1, pa.paged_attention_decode):
        with pytest.raises(ValueError, match="alibi_slopes must be contiguous"):
            entry(**dict(p, alibi_slopes=strided))
    untouched(p)
    rng = np.random.default_rng(5)
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 8, [(5, 3)], [7])
    o = np.full_like(q, 7)
    with pytest.raises(ValueError, match="alibi_slopes must be contiguous"):
        pa.context_attention_fwd(q[:3], k, v, o[:3], "auto", kc, vc, pg.block_tables, start, seq_lens[:1], 8, 3,
                                 alibi_slopes=strided)
    with pytest.raises(ValueError, match="alibi_slopes must be contiguous"):
        pa.mixed_attention(q, k, v, kc, vc, pg.block_tables, seq_lens, start, 1, 3, 3, 8, 7, alibi_slopes=strided,
                           out=o)
    with pytest.raises(ValueError, match="alibi_slopes must be contiguous"):
        pa.prompt_attention(q[:3], k, v, start, 3, alibi_slopes=strided, out=o[:3])
    assert (o == 7).all()


def test_convert_fp8_bad_arguments():
    x = np.ones((4, 8), np.float32)
    q = np.full((4, 8), 7, np.uint8)
    bad = [
        ("exactly one of dst_cache \\(float32\\) and src_cache \\(float32\\) must be fp8", (x.copy(), x), {}),
        ("exactly one of dst_cache \\(uint8\\)", (q, q.copy()), {}),
        ("dst_cache has 31 elements but src_cache 32", (np.zeros(31, np.uint8), x), {}),
        ("uint8 storage needs kv_dtype", (q, x), dict(kv_dtype="auto")),
        ("kv_dtype 'int8' is not one of", (q, x), dict(kv_dtype="int8")),
        ("src_cache has dtype float64", (q, np.ones((4, 8))), {}),
        ("scale must hold one float32", (q, x), dict(scale=np.ones(2, np.float32))),
        ("scale = -1.0 must be finite and > 0", (q, x), dict(scale=-1.0)),
        ("scale = 0 must be finite and > 0", (q, x), dict(scale=0)),
        ("scale = nan must be finite and > 0", (q, x), dict(scale=float("nan"))),
        ("must be contiguous", (q, np.ones((8, 4), np.float32).T), {}),
        ("src_cache is on cuda:0 but dst_cache is on cpu:0", (q, FakeCuda(x)), {}),
    ]
    for msg, args, kw in bad:
        with pytest.raises(ValueError, match=msg):
            pa.convert_fp8(*args, **kw)
    assert (q == 7).all()
    pa.convert_fp8(q, x)  # the good arguments do run: 1.0 is e4m3 0x38
    assert (q == 0x38).all()


def test_prefill_path_setting():
    before = pa.get_prefill_path()
    try:
        pa.set_prefill_path("hopper")
        assert pa.get_prefill_path() == "hopper"
        pa.set_prefill_path("hopper-fp8")
        assert pa.get_prefill_path() == "hopper-fp8"
        pa.set_prefill_path("mma")
        assert pa.get_prefill_path() == "mma"
        with pytest.raises(ValueError):
            pa.set_prefill_path("wgmma")
        assert pa.get_prefill_path() == "mma"
    finally:
        pa.set_prefill_path(before)
    # No GPU here, or one that is not sm_90 with a 90a build: False; an H100 with 90a: True.
    assert pa.prefill_hopper_available() in (False, True)
    if pa.device_count() == 0:
        assert pa.prefill_hopper_available() is False


def _python(*args, **env):
    """This interpreter in a child process, with the environment changed by env (None unsets)."""
    import os
    import subprocess
    e = dict(os.environ)
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return subprocess.run([sys.executable, *args], env=e, capture_output=True, text=True, timeout=120)


def test_module_main_info_and_usage():
    """`python -m pagedattn info` (README) prints the package, the library and the device, rc 0;
    anything else prints the usage to stderr, rc 2."""
    r = _python("-m", "pagedattn", "info")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"pagedattn {pa.__version__} (library version number "), lines
    assert any(ln.startswith("library: ") for ln in lines) and any(ln.startswith("package: ") for ln in lines)
    assert any(ln.startswith("CUDA") for ln in lines) and lines[-1].startswith("frameworks: ")
    assert "numpy" in lines[-1]
    for argv in ([], ["infos"], ["--help"]):
        r = _python("-m", "pagedattn", *argv)
        assert r.returncode == 2 and "usage: python -m pagedattn info" in r.stderr, (argv, r)


def test_prefill_path_from_the_environment():
    """get_prefill_path: PAGEDATTN_PREFILL_PATH until a path is set (prefill.h: an unknown value
    is auto), the setter over it; a fresh process each, as the setting is process-wide."""
    code = "import pagedattn as pa; print(pa.get_prefill_path())"
    for value, want in (("mma", "mma"), ("hopper", "hopper"), ("hopper-fp8", "hopper-fp8"), ("wgmma", "auto"),
                        (None, "auto")):
        r = _python("-c", code, PAGEDATTN_PREFILL_PATH=value)
        assert r.returncode == 0 and r.stdout.strip() == want, (value, r)
    r = _python("-c", "import pagedattn as pa; pa.set_prefill_path('hopper'); print(pa.get_prefill_path())",
                PAGEDATTN_PREFILL_PATH="mma")
    assert r.stdout.strip() == "hopper", r


def test_every_op_with_a_stream_runs_under_its_scope():
    """Each public op that takes `stream=` goes through _tensor.stream_scope, which makes an
    explicit stream current while the op allocates (tests/test_gpu.py checks what that does on a
    GPU). A new op added without it fails here."""
    import inspect
    with_stream = [n for n in pa.ops.__all__ if "stream" in inspect.signature(getattr(pa.ops, n)).parameters]
    assert len(with_stream) >= 13, with_stream
    for name in with_stream:
        fn = getattr(pa.ops, name)
        assert getattr(fn, "stream_scope", False), f"{name} does not run under stream_scope"
        assert getattr(pa, name) is fn


def test_explicit_stream_on_host_arrays():
    """Host arrays run the CPU reference whatever stream is named; a stream of a type no framework
    has is refused before anything is written."""
    x = np.linspace(-3, 3, 32, dtype=np.float32).reshape(4, 8)
    a, b = np.zeros((4, 8), np.uint8), np.zeros((4, 8), np.uint8)
    pa.convert_fp8(a, x, 0.5, "fp8")
    pa.convert_fp8(b, x, 0.5, "fp8", stream=12345)
    np.testing.assert_array_equal(a, b)
    c = np.full((4, 8), 7, np.uint8)
    with pytest.raises(TypeError, match="stream must be an int, a torch.cuda.Stream or a cupy Stream, got str"):
        pa.convert_fp8(c, x, 0.5, "fp8", stream="s0")
    assert (c == 7).all()


def test_cupy_arrays_off_the_current_device(monkeypatch):
    """With cupy arrays and no explicit stream the op launches on cupy's current stream, which
    belongs to cupy's current device: arrays on another device are refused with the way out
    named (torch's path has the same check). A stand-in cupy module: CI has no cupy."""
    import types
    from pagedattn import _tensor

    state = {"device": 0}
    stream = types.SimpleNamespace(ptr=0xC0FFEE)
    runtime = types.SimpleNamespace(getDevice=lambda: state["device"])
    cuda = types.SimpleNamespace(runtime=runtime, get_current_stream=lambda: stream)
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))

    Array = type("ndarray", (), {"__module__": "cupy._core.core"})
    views = [types.SimpleNamespace(obj=Array(), device_id=1)]
    with pytest.raises(ValueError, match=r"op: the arrays are on cuda:1 but cupy's current device is cuda:0; "
                                         r"use `with cupy.cuda.Device\(1\):`"):
        _tensor.stream_handle("op", views, None)
    state["device"] = 1
    assert _tensor.stream_handle("op", views, None) == 0xC0FFEE
    assert _tensor.stream_handle("op", views, 77) == 77


def test_torch_small_values_refused_during_graph_capture(monkeypatch):
    """small_array's torch branch: values given as Python numbers (a float k_scale, say) reach a
    CUDA device by a pinned, non-blocking copy, which a captured CUDA graph's replays would not
    repeat, so during capture it refuses, naming the values, before any copy; off CUDA it copies
    plainly. A stand-in torch module: CI has no torch (test_gpu.py runs the real one)."""
    import types
    from pagedattn import _tensor

    calls = []

    class Host:
        def __init__(self, values, dtype):
            self.values, self.dtype = values, dtype

        def pin_memory(self):
            calls.append("pin")
            return self

        def to(self, device, non_blocking=False):
            calls.append(("to", device.type, non_blocking))
            return ("on", device.type, self.dtype, self.values)

    state = {"capturing": True}
    cuda = types.SimpleNamespace(is_current_stream_capturing=lambda: state["capturing"])
    fake = types.SimpleNamespace(tensor=lambda v, dtype: Host(v, dtype), float32="f32", int32="i32", cuda=cuda)
    monkeypatch.setitem(sys.modules, "torch", fake)
    Tensor = type("Tensor", (), {"__module__": "torch"})
    on_gpu, on_cpu = Tensor(), Tensor()
    on_gpu.device, on_cpu.device = types.SimpleNamespace(type="cuda"), types.SimpleNamespace(type="cpu")

    with pytest.raises(ValueError, match=r"^k_scale is copied to the GPU at each call, which a CUDA graph's "
                                         r"replays would not repeat: pass a tensor on the device when capturing$"):
        _tensor.small_array(on_gpu, [0.5], "float32", "k_scale")
    assert calls == []
    state["capturing"] = False
    assert _tensor.small_array(on_gpu, [0.5, 2.0], "float32", "k_scale") == ("on", "cuda", "f32", [0.5, 2.0])
    assert calls == ["pin", ("to", "cuda", True)]
    calls.clear()
    state["capturing"] = True  # (a CPU tensor is never captured: no refusal)
    assert _tensor.small_array(on_cpu, [3], "int32", "lengths") == ("on", "cpu", "i32", [3])
    assert calls == [("to", "cpu", False)]


# ---- audit fixes: strides, block tables, None, devices, int32 ---------------------------------------------


def broadcast_rows(row, n):
    """A writable view repeating row [1, ...] n times with stride 0 (what torch's expand gives)."""
    from numpy.lib.stride_tricks import as_strided
    return as_strided(row, shape=(n,) + row.shape[1:], strides=(0,) + row.strides[1:])


def test_broadcast_rows_refused_everywhere_a_stride_reaches_c():
    """C reads a stride of 0 as "contiguous": a broadcast (stride 0) dimension of more than one
    element would be read as rows past the one real row. Every op refuses it, naming the argument,
    and writes nothing."""
    rng = np.random.default_rng(40)
    p = decode_problem()
    q_b = broadcast_rows(p["query"][:1].copy(), 2)
    for entry in (pa.paged_attention_v1, pa.paged_attention_decode):
        with pytest.raises(ValueError, match="query has stride 0 in dimension 0"):
            entry(**dict(p, query=q_b))
    untouched(p)

    KVH, D, BS, NB = 2, 32, 16, 4
    kc = np.full((NB, BS, KVH, D), 7, np.float32)
    vc = kc.copy()
    k_b = broadcast_rows(rng.standard_normal((1, KVH, D)).astype(np.float32), 4)
    with pytest.raises(ValueError, match="key has stride 0 in dimension 0"):
        pa.reshape_and_cache_flash(k_b, np.ascontiguousarray(k_b), kc, vc, np.arange(4, dtype=np.int64))
    heads_b = np.lib.stride_tricks.as_strided(rng.standard_normal((3, 1, D)).astype(np.float32), shape=(3, KVH, D),
                                              strides=(D * 4, 0, 4))
    with pytest.raises(ValueError, match="value has stride 0 in dimension 1"):
        pa.reshape_and_cache_flash(np.ascontiguousarray(heads_b), heads_b, kc, vc, np.arange(3, dtype=np.int64))
    kc_b = np.lib.stride_tricks.as_strided(kc[:1], shape=kc.shape, strides=(0,) + kc.strides[1:])
    with pytest.raises(ValueError, match="key_cache has stride 0 in dimension 0"):
        pa.reshape_and_cache_flash(np.ascontiguousarray(k_b), np.ascontiguousarray(k_b), kc_b, kc_b,
                                   np.arange(4, dtype=np.int64))
    assert (kc == 7).all() and (vc == 7).all()

    cache = np.full((NB * BS, 2 * KVH, D), 7, np.float32)
    nk_b = broadcast_rows(rng.standard_normal((1, 2 * KVH, D)).astype(np.float32), 4)
    slices = np.zeros((3, 8), np.int32)
    slices[:, 0] = (0, 0, 4)
    with pytest.raises(ValueError, match="new_kv has stride 0 in dimension 0"):
        pa.kv_cache_update(nk_b, slices, cache, np.array([1], np.int32), page_size=BS)
    assert (cache == 7).all()

    q = rng.standard_normal((6, 2, D)).astype(np.float32)
    kv_b = broadcast_rows(rng.standard_normal((1, KVH, D)).astype(np.float32), 6)
    o = np.full_like(q, 7)
    with pytest.raises(ValueError, match="k has stride 0 in dimension 0"):
        pa.prompt_attention(q, kv_b, np.ascontiguousarray(kv_b), np.array([0, 6], np.int32), 6, out=o)
    with pytest.raises(ValueError, match="v has stride 0 in dimension 0"):
        pa.prompt_attention(q, np.ascontiguousarray(kv_b), kv_b, np.array([0, 6], np.int32), 6, out=o)
    assert (o == 7).all()

    pg, kc2, vc2, q2, k2, v2, start, seq_lens = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 8, [(5, 3)], [7])
    o2 = np.full_like(q2, 7)
    q2_b = broadcast_rows(q2[:1].copy(), q2.shape[0])
    with pytest.raises(ValueError, match="query has stride 0 in dimension 0"):
        pa.mixed_attention(q2_b, k2, v2, kc2, vc2, pg.block_tables, seq_lens, start, 1, 3, 3, 8, 7, out=o2)
    k2_b = broadcast_rows(k2[:1].copy(), 3)
    with pytest.raises(ValueError, match="k has stride 0 in dimension 0"):
        pa.context_attention_fwd(q2[:3], k2_b, v2, o2[:3], "auto", kc2, vc2, pg.block_tables, start, seq_lens[:1], 8,
                                 3)
    assert (o2 == 7).all()


def test_broadcast_single_row_is_fine():
    """A dimension of one element has no stride that matters: a one-sequence query broadcast
    with stride 0 gives exactly what its contiguous copy gives."""
    p = decode_problem()
    p1 = dict(p, query=p["query"][1:].copy(), out=np.zeros((1, 4, 32), np.float32), seq_lens=p["seq_lens"][1:],
              block_tables=np.ascontiguousarray(p["block_tables"][1:]))
    want = np.zeros_like(p1["out"])
    pa.paged_attention_v1(**dict(p1, out=want))
    got = np.zeros_like(p1["out"])
    pa.paged_attention_v1(**dict(p1, out=got, query=broadcast_rows(p1["query"], 1)))
    np.testing.assert_array_equal(got, want)
    assert np.isfinite(want).all()


def test_block_table_must_be_row_major():
    """C takes one number for a block table's row stride and width: a column slice of a wider
    table (its row stride > its width) would let sequences read block ids outside the view. Every
    op that takes a block table refuses it, and one without columns, before writing anything."""
    p = decode_problem()
    bt = p["block_tables"]  # [2, 1]: 9 tokens in blocks of 16
    wide = np.zeros((2, 8), np.int32)
    wide[:, :1] = bt
    for entry in (pa.paged_attention_v1, pa.paged_attention_v2, pa.paged_attention_decode):
        kw = dict(exp_sum=None, max_logits=None, tmp_out=None) if entry is pa.paged_attention_v2 else {}
        with pytest.raises(ValueError, match=r"block_tables must be contiguous \(row-major, row stride = width 1\)"):
            entry(**dict(p, block_tables=wide[:, :1]), **kw)
        with pytest.raises(ValueError, match=r"block_tables has shape \[2, 0\]: no columns"):
            entry(**dict(p, block_tables=np.zeros((2, 0), np.int32)), **kw)
        with pytest.raises(ValueError, match=r"block_tables has shape \[2, 0\]: no columns"):
            entry(**dict(p, block_tables=wide[:, :0]), **kw)
    untouched(p)
    # a contiguous table (here a row slice of a taller one) is taken as it is
    tall = np.concatenate([bt, np.full((3, 1), -5, np.int32)])
    a, b = np.zeros_like(p["out"]), np.zeros_like(p["out"])
    pa.paged_attention_v1(**dict(p, out=a))
    pa.paged_attention_v1(**dict(p, out=b, block_tables=tall[:2]))
    np.testing.assert_array_equal(a, b)

    rng = np.random.default_rng(41)
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 8, [(5, 3)], [7])
    o = np.full_like(q, 7)
    w = pg.block_tables.shape[1]
    wide = np.zeros((pg.block_tables.shape[0], w + 3), np.int32)
    wide[:, :w] = pg.block_tables
    with pytest.raises(ValueError, match="b_loc must be contiguous"):
        pa.context_attention_fwd(q[:3], k, v, o[:3], "auto", kc, vc, wide[:, :w], start, seq_lens[:1], 8, 3)
    with pytest.raises(ValueError, match="block_tables must be contiguous"):
        pa.mixed_attention(q, k, v, kc, vc, wide[:, :w], seq_lens, start, 1, 3, 3, 8, 7, out=o)
    assert (o == 7).all()


class ForeignDevice(FakeCuda):
    """A NumPy array whose DLPack capsule announces another device type (10 = kDLROCM)."""

    def __dlpack_device__(self):
        return (10, 0)

    def __dlpack__(self, stream=None):
        cap = self.a.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        ctypes.c_int32.from_address(get(cap, b"dltensor") + 8).value = 10
        return cap


def test_devices_other_than_cpu_and_cuda_refused():
    p = decode_problem()
    for name in ("out", "query", "key_cache", "seq_lens"):
        with pytest.raises(TypeError, match=f"paged_attention_v1: {name}: DLPack device type 10 is not supported"):
            pa.paged_attention_v1(**dict(p, **{name: ForeignDevice(p[name])}))
    untouched(p)
    x = np.ones((4, 8), np.float32)
    q = np.full((4, 8), 7, np.uint8)
    with pytest.raises(TypeError, match="convert_fp8: src_cache: DLPack device type 10"):
        pa.convert_fp8(q, ForeignDevice(x))
    assert (q == 7).all()


def test_none_for_a_required_tensor_is_a_type_error():
    """Only the documented-optional tensors may be None; a required one is a TypeError naming it."""
    p = decode_problem()
    for name in ("out", "query", "key_cache", "value_cache", "block_tables", "seq_lens"):
        for entry in (pa.paged_attention_v1, pa.paged_attention_decode):
            with pytest.raises(TypeError, match=f"{entry.__name__}: {name}: expected a tensor"):
                entry(**dict(p, **{name: None}))
    untouched(p)
    pa.paged_attention_v1(**dict(p, alibi_slopes=None, sinks=None, out=np.zeros_like(p["out"])))  # optional ones

    rng = np.random.default_rng(42)
    q = rng.standard_normal((6, 4, 32)).astype(np.float32)
    k = rng.standard_normal((6, 2, 32)).astype(np.float32)
    cu = np.array([0, 2, 6], np.int32)
    o = np.full_like(q, 7)
    for i, name in enumerate(("q", "k", "v", "cu_seqlens_q")):
        args = [q, k, k, cu]
        args[i] = None
        with pytest.raises(TypeError, match=f"prompt_attention: {name}: expected a tensor"):
            pa.prompt_attention(*args, 4, out=o)
    assert (o == 7).all()
    kc = np.zeros((2, 4, 2, 16), np.float32)
    with pytest.raises(TypeError, match="reshape_and_cache_flash: slot_mapping: expected a tensor"):
        pa.reshape_and_cache_flash(k[:, :, :16].copy(), k[:, :, :16].copy(), kc, kc.copy(), None)
    with pytest.raises(TypeError, match="ragged_paged_attention: kv_lens: expected a tensor"):
        pa.ragged_paged_attention(q, np.zeros((3, 4, 2, 32), np.float32), None, np.zeros((2, 1), np.int32),
                                  np.array([0, 2, 3], np.int32), np.array([2], np.int32))
    with pytest.raises(TypeError, match="kv_cache_update: slices: expected a tensor"):
        pa.kv_cache_update(np.zeros((2, 2, 8), np.float32), None, np.zeros((8, 2, 8), np.float32),
                           np.array([1], np.int32), page_size=4)
    pg, kc2, vc2, q2, k2, v2, start, seq_lens = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 8, [(5, 3)], [7])
    o2 = np.full_like(q2, 7)
    with pytest.raises(TypeError, match="context_attention_fwd: b_loc: expected a tensor"):
        pa.context_attention_fwd(q2[:3], k2, v2, o2[:3], "auto", kc2, vc2, None, start, seq_lens[:1], 8, 3)
    with pytest.raises(TypeError, match="mixed_attention: seq_lens: expected a tensor"):
        pa.mixed_attention(q2, k2, v2, kc2, vc2, pg.block_tables, None, start, 1, 3, 3, 8, 7, out=o2)
    assert (o2 == 7).all()


def test_ints_beyond_int32_refused_not_wrapped():
    """ctypes wraps a Python int into an int32 field modulo 2^32 (2^32 + 4 would be a 4-token
    window): every scalar that goes into one is checked."""
    p = decode_problem()
    big = 2 ** 32 + 4
    bad = [("sliding_window", dict(sliding_window=big)), ("max_seq_len", dict(max_seq_len=2 ** 32 + 9)),
           ("tp_rank", dict(tp_rank=2 ** 31)),
           ("blocksparse_local_blocks", dict(blocksparse_local_blocks=-2 ** 31 - 1))]
    for name, kw in bad:
        with pytest.raises(ValueError, match=f"paged_attention_v1: {name} -?[0-9]+ does not fit in int32"):
            pa.paged_attention_v1(**dict(p, **kw))
    with pytest.raises(ValueError, match="paged_attention_decode: sliding_window .* does not fit in int32"):
        pa.paged_attention_decode(**dict(p, sliding_window=big))
    untouched(p)
    # the largest int32 window is taken: wider than any sequence, the same as no window
    a, b = np.zeros_like(p["out"]), np.zeros_like(p["out"])
    pa.paged_attention_v1(**dict(p, out=a))
    pa.paged_attention_v1(**dict(p, out=b, sliding_window=2 ** 31 - 1))
    np.testing.assert_array_equal(a, b)

    rng = np.random.default_rng(43)
    q = rng.standard_normal((6, 4, 32)).astype(np.float32)
    k = rng.standard_normal((6, 2, 32)).astype(np.float32)
    cu = np.array([0, 2, 6], np.int32)
    o = np.full_like(q, 7)
    with pytest.raises(ValueError, match="prompt_attention: max_seqlen_q .* does not fit in int32"):
        pa.prompt_attention(q, k, k, cu, big, out=o)
    with pytest.raises(ValueError, match="prompt_attention: sliding_window .* does not fit in int32"):
        pa.prompt_attention(q, k, k, cu, 4, sliding_window=big, out=o)
    assert (o == 7).all()
    pg, kc, vc, q2, k2, v2, start, seq_lens = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 8, [(5, 3)], [7])
    o2 = np.full_like(q2, 7)
    with pytest.raises(ValueError, match="context_attention_fwd: max_input_len .* does not fit in int32"):
        pa.context_attention_fwd(q2[:3], k2, v2, o2[:3], "auto", kc, vc, pg.block_tables, start, seq_lens[:1], 8, big)
    with pytest.raises(ValueError, match="mixed_attention: max_decode_seq_len .* does not fit in int32"):
        pa.mixed_attention(q2, k2, v2, kc, vc, pg.block_tables, seq_lens, start, 1, 3, 3, 8, big, out=o2)
    with pytest.raises(ValueError, match="mixed_attention: num_prefills .* does not fit in int32"):
        pa.mixed_attention(q2, k2, v2, kc, vc, pg.block_tables, seq_lens, start, big, 3, 3, 8, 7, out=o2)
    assert (o2 == 7).all()
    qr = np.zeros((4, 2, 32), np.float32)
    outr = np.full_like(qr, 7)
    with pytest.raises(ValueError, match="ragged_paged_attention: sliding_window .* does not fit in int32"):
        pa.ragged_paged_attention(qr, np.zeros((3, 4, 2, 32), np.float32), np.array([2, 1], np.int32),
                                  np.zeros((2, 1), np.int32), np.array([0, 2, 3], np.int32), np.array([2], np.int32),
                                  sliding_window=big, out=outr)
    assert (outr == 7).all()
    with pytest.raises(ValueError, match="paged_attention_workspace_size: num_seqs .* does not fit in int32"):
        pa.paged_attention_workspace_size(2 ** 32 + 2, 8, 2, 64, 2000)
    with pytest.raises(ValueError, match="paged_attention_workspace_size: max_seq_len .* does not fit in int32"):
        pa.paged_attention_workspace_size(2, 8, 2, 64, 2 ** 32 + 2000)


def test_workspace_size_entry_names():
    args = (2, 8, 2, 64, 2000)
    sizes = {e: pa.paged_attention_workspace_size(*args, entry=e) for e in ("decode", "v2")}
    assert sizes["decode"] > 0 and sizes["v2"] > 0 and sizes["decode"] != sizes["v2"]
    assert pa.paged_attention_workspace_size(*args) == sizes["decode"]  # the default
    for entry in ("v1", "Decode", "mixed", "", None):
        with pytest.raises(ValueError, match=f"paged_attention_workspace_size: entry {entry!r} is not 'decode'"):
            pa.paged_attention_workspace_size(*args, entry=entry)


# ---- gaps a mutation pass of python/pagedattn found (python/tests/mutants.py) ----------------------


def test_two_cuda_devices_in_one_call_refused():
    """All CUDA tensors of one call must be on one device: a query on cuda:1 with the rest on
    cuda:0 is refused, naming both, before anything runs."""
    p = decode_problem()
    on0 = {k: FakeCuda(v) if isinstance(v, np.ndarray) else v for k, v in p.items()}
    for entry in (pa.paged_attention_v1, pa.paged_attention_decode):
        with pytest.raises(ValueError, match=f"{entry.__name__}: query is on cuda:1 but out is on cuda:0"):
            entry(**dict(on0, query=FakeCuda(p["query"], device_id=1)))
    untouched(p)


def test_pinned_host_arrays_run_the_cpu_reference():
    """kDLCUDAHost (pinned host memory) is host memory: such arrays, alone or mixed with plain
    host arrays, run the CPU reference and give its result."""
    p = decode_problem()
    want = np.zeros_like(p["out"])
    pa.paged_attention_v1(**dict(p, out=want))
    for pinned in (("out", "query", "key_cache", "value_cache", "block_tables", "seq_lens"), ("query", "key_cache")):
        got = np.zeros_like(p["out"])
        kw = dict(p, out=got)
        for name in pinned:
            kw[name] = FakeCudaHost(kw[name])
        pa.paged_attention_v1(**kw)
        np.testing.assert_array_equal(got, want)
    assert np.isfinite(want).all() and want.any()


def test_size_one_dimensions_take_any_stride():
    """A dimension of one element has no stride that matters (torch gives such dimensions
    arbitrary strides, and an expanded one has stride 0): a one-sequence decode whose out,
    block table and seq_lens carry stride 0 there runs and matches the contiguous call."""
    from numpy.lib.stride_tricks import as_strided
    p = decode_problem()
    one = dict(p, query=p["query"][1:].copy(), seq_lens=p["seq_lens"][1:].copy(),
               block_tables=np.ascontiguousarray(p["block_tables"][1:]))
    want = np.zeros((1, 4, 32), np.float32)
    pa.paged_attention_v1(**dict(one, out=want))
    buf = np.zeros((1, 4, 32), np.float32)
    out = as_strided(buf, shape=(1, 4, 32), strides=(0, 32 * 4, 4))
    bt = as_strided(one["block_tables"], shape=one["block_tables"].shape, strides=(0, 4))
    sl = as_strided(one["seq_lens"], shape=(1,), strides=(0,))
    pa.paged_attention_v1(**dict(one, out=out, block_tables=bt, seq_lens=sl))
    np.testing.assert_array_equal(buf, want)
    assert np.isfinite(want).all() and want.any()


def test_non_contiguous_value_cache():
    p = decode_problem()
    vc = p["value_cache"]
    wide = np.zeros(vc.shape[:-1] + (2 * vc.shape[-1],), vc.dtype)
    wide[..., ::2] = vc
    with pytest.raises(ValueError, match="value_cache must be contiguous"):
        pa.paged_attention_v1(**dict(p, value_cache=wide[..., ::2]))
    untouched(p)


def test_heads_must_be_adjacent():
    """q, k, v rows may be strided but a row's heads must be adjacent (strides [*, head_size, 1]):
    C takes one row stride per tensor. Heads head_size * 2 apart are refused."""
    rng = np.random.default_rng(50)
    q = rng.standard_normal((6, 4, 32)).astype(np.float32)
    wide = rng.standard_normal((6, 2, 64)).astype(np.float32)
    k = np.ascontiguousarray(wide[:, :, :32])
    cu = np.array([0, 2, 6], np.int32)
    o = np.full_like(q, 7)
    with pytest.raises(ValueError, match=r"prompt_attention: k must have contiguous heads \(strides \[\*, 32, 1\]\), "
                                         r"got \[128, 64, 1\]"):
        pa.prompt_attention(q, wide[:, :, :32], k, cu, 4, out=o)
    with pytest.raises(ValueError, match=r"prompt_attention: v must have contiguous heads"):
        pa.prompt_attention(q, k, wide[:, :, :32], cu, 4, out=o)
    qwide = np.repeat(q, 2, axis=2)
    with pytest.raises(ValueError, match=r"prompt_attention: q must have contiguous heads"):
        pa.prompt_attention(qwide[:, :, :32], k, k, cu, 4, out=o)
    assert (o == 7).all()
    pg, kc, vc, q2, k2, v2, start, seq_lens = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 8, [(5, 3)], [7])
    o2 = np.full_like(q2, 7)
    kw2 = np.repeat(k2, 2, axis=2)[:, :, :32]
    with pytest.raises(ValueError, match=r"mixed_attention: key must have contiguous heads"):
        pa.mixed_attention(q2, kw2, v2, kc, vc, pg.block_tables, seq_lens, start, 1, 3, 3, 8, 7, out=o2)
    with pytest.raises(ValueError, match=r"context_attention_fwd: k must have contiguous heads"):
        pa.context_attention_fwd(q2[:3], kw2, v2, o2[:3], "auto", kc, vc, pg.block_tables, start, seq_lens[:1], 8, 3)
    assert (o2 == 7).all()


def test_prefill_out_must_be_contiguous():
    """C writes a prefill's output rows back to back: an out whose rows are strided (a slice of a
    wider buffer) is refused, and the buffer is left as it was."""
    rng = np.random.default_rng(51)
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "vllm", np.float32, 4, 2, 32, 8, [(5, 3)], [7])
    buf = np.full((q.shape[0], 8, 32), 7, np.float32)
    with pytest.raises(ValueError, match="context_attention_fwd: o must be contiguous"):
        pa.context_attention_fwd(q[:3], k, v, buf[:3, :4], "auto", kc, vc, pg.block_tables, start, seq_lens[:1], 8, 3)
    with pytest.raises(ValueError, match="mixed_attention: out must be contiguous"):
        pa.mixed_attention(q, k, v, kc, vc, pg.block_tables, seq_lens, start, 1, 3, 3, 8, 7, out=buf[:, :4])
    with pytest.raises(ValueError, match="prompt_attention: out must be contiguous"):
        pa.prompt_attention(q[:3], k, v, start, 3, out=buf[:3, :4])
    assert (buf == 7).all()


def test_ragged_q_and_page_indices_must_be_contiguous():
    """The ragged op takes no strides for q or page_indices: strided views are refused."""
    qbig = np.zeros((4, 2, 64), np.float32)
    kv = np.zeros((3, 4, 2, 32), np.float32)
    good = dict(kv_lens=np.array([2, 1], np.int32), page_indices=np.zeros((2, 1), np.int32),
                cu_q_lens=np.array([0, 2, 3], np.int32), num_seqs=np.array([2], np.int32))
    out = np.full((4, 2, 32), 7, np.float32)
    with pytest.raises(ValueError, match="ragged_paged_attention: q must be contiguous"):
        pa.ragged_paged_attention(qbig[:, :, :32], kv, **good, out=out)
    wide = np.zeros((2, 3), np.int32)
    with pytest.raises(ValueError, match="ragged_paged_attention: page_indices must be contiguous"):
        pa.ragged_paged_attention(np.zeros((4, 2, 32), np.float32), kv, **dict(good, page_indices=wide[:, :1]),
                                  out=out)
    assert (out == 7).all()


def test_scale_tensor_on_another_device_refused():
    """An fp8 cache's k_scale / v_scale must be on the cache's device."""
    rng = np.random.default_rng(52)
    k = rng.standard_normal((3, 2, 16)).astype(np.float32)
    kc = np.zeros((2, 2, 1, 4, 16), np.uint8)
    vc = np.zeros((2, 2, 16, 4), np.uint8)
    one = np.array([0.5], np.float32)
    sm = np.arange(3, dtype=np.int64)
    with pytest.raises(ValueError, match="reshape_and_cache: k_scale is on cuda but the cache is on cpu"):
        pa.reshape_and_cache(k, k, kc, vc, sm, "fp8", FakeCuda(one), one)
    with pytest.raises(ValueError, match="reshape_and_cache: v_scale is on cuda but the cache is on cpu"):
        pa.reshape_and_cache(k, k, kc, vc, sm, "fp8", one, FakeCuda(one))
    assert not kc.any() and not vc.any()
    pa.reshape_and_cache(k, k, kc, vc, sm, "fp8", one, FakeCudaHost(one))  # pinned host memory is the host
    assert kc.any() and vc.any()


def test_status_codes_become_the_documented_exceptions():
    """pa_status (include/pagedattn/core.h: 1 invalid argument, 2 unsupported, 3 no device,
    4 CUDA, 5 workspace too small, 6 internal) -> ValueError, NotImplementedError, CudaError
    (no device and CUDA), ValueError for a short workspace (the caller's bad input, as ops.py
    says), RuntimeError (the rest); 0 raises nothing."""
    from pagedattn._lib import check
    assert check(0, "op") is None
    for status, exc in ((1, ValueError), (2, NotImplementedError), (3, pa.CudaError), (4, pa.CudaError),
                        (5, ValueError), (6, RuntimeError)):
        with pytest.raises(Exception) as e:
            check(status, "op")
        assert type(e.value) is exc, (status, type(e.value))
        assert str(e.value).startswith("op: ")
    if pa.device_count() == 0:
        with pytest.raises(pa.CudaError, match="device_info: "):
            pa.device_info(0)
    with pytest.raises(ValueError, match="device_info: "):  # as its docstring says
        pa.device_info(-1)


def test_short_workspace_is_a_value_error():
    """A caller's workspace shorter than the op's size is bad input: ValueError, as ops.py says
    (it was the RuntimeError ops.py keeps for CUDA failures), before anything runs."""
    p = decode_problem()
    p["max_seq_len"] = 600  # three splits: a workspace is needed
    p["block_tables"] = np.pad(p["block_tables"], ((0, 0), (0, 37)))  # 38 blocks of 16 a row
    need = pa.paged_attention_workspace_size(2, 4, 2, 32, 600, dtype=np.float32)
    assert need > 16
    on0 = {k: FakeCuda(v) if isinstance(v, np.ndarray) else v for k, v in p.items()}
    with pytest.raises(ValueError, match=f"workspace of 16 bytes; {need} needed"):
        pa.paged_attention_decode(**on0, workspace=FakeCuda(np.zeros(16, np.uint8)))
    untouched(p)


def test_star_import_and_all_agree():
    """Every name in pagedattn.__all__ is in the package (`from pagedattn import *` raised
    AttributeError on SLOT_MAPPING_DTYPE, which host.__all__ names and the package lacked)."""
    ns = {}
    exec("from pagedattn import *", ns)
    missing = [n for n in pa.__all__ if n not in ns]
    assert not missing, missing
    assert pa.SLOT_MAPPING_DTYPE == np.dtype(np.int64)


def test_none_for_a_list_of_caches_is_a_type_error():
    """ops.py: None for a tensor an op always needs is a TypeError (copy_blocks said "key_caches is
    empty", a ValueError); an empty list stays a ValueError."""
    with pytest.raises(TypeError, match="copy_blocks: key_caches is None"):
        pa.copy_blocks(None, None, np.zeros((0, 2), np.int64))
    with pytest.raises(ValueError, match="copy_blocks: key_caches is empty"):
        pa.copy_blocks([], None, np.zeros((0, 2), np.int64))


def test_int32_bounds_are_inclusive():
    """int32 fields take exactly [-2^31, 2^31 - 1]."""
    from pagedattn import _tensor
    for x in (-2 ** 31, -1, 0, 2 ** 31 - 1, np.int64(2 ** 31 - 1), np.int32(-2 ** 31)):
        assert _tensor.i32("op", "x", x) == int(x)
    for x in (-2 ** 31 - 1, 2 ** 31, np.int64(2 ** 31)):
        with pytest.raises(ValueError, match=f"op: x {int(x)} does not fit in int32"):
            _tensor.i32("op", "x", x)
    assert _tensor.i64("op", "x", -2 ** 63) == -2 ** 63 and _tensor.i64("op", "x", 2 ** 63 - 1) == 2 ** 63 - 1
    for x in (-2 ** 63 - 1, 2 ** 63):
        with pytest.raises(ValueError, match="does not fit in int64"):
            _tensor.i64("op", "x", x)


def test_v2_scratch_partitions_at_multiples_of_512():
    """vLLM's scratch shapes use max_num_partitions = ceil(max_seq_len / 512): 1 for 512, 2 for
    513 and 1024. Those shapes are taken (and out is v1's), one more partition is refused."""
    p = decode_problem()
    bt = np.zeros((2, 64), np.int32)  # room for 1024 tokens of blocks of 16
    bt[:, :1] = p["block_tables"]
    want = np.zeros_like(p["out"])
    pa.paged_attention_v1(**dict(p, out=want, block_tables=bt, max_seq_len=1024))
    for msl, parts in ((512, 1), (513, 2), (1024, 2)):
        kw = dict(p, block_tables=bt, max_seq_len=msl)
        for n in (parts - 1, parts + 1):
            if n < 1:
                continue
            with pytest.raises(ValueError, match=rf"exp_sum has shape \[2, 4, {n}\]; expected \[2, 4, {parts}\]"):
                pa.paged_attention_v2(exp_sum=np.zeros((2, 4, n), np.float32),
                                      max_logits=np.zeros((2, 4, parts), np.float32),
                                      tmp_out=np.zeros((2, 4, parts, 32), np.float32), **kw)
        untouched(p)
        got = np.zeros_like(p["out"])
        pa.paged_attention_v2(**dict(kw, out=got), exp_sum=np.zeros((2, 4, parts), np.float32),
                              max_logits=np.zeros((2, 4, parts), np.float32),
                              tmp_out=np.zeros((2, 4, parts, 32), np.float32))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_prefill_path_names_are_the_header_enum():
    """set_prefill_path's names map to pa_prefill_path (include/pagedattn/prefill.h): auto 0,
    mma 1, hopper 2, hopper-fp8 3, as the library itself reports them."""
    before = pa.get_prefill_path()
    try:
        for name, number in (("mma", 1), ("hopper", 2), ("hopper-fp8", 3), ("auto", 0)):
            pa.set_prefill_path(name)
            assert pa.lib.pa_get_prefill_path() == number, name
    finally:
        pa.set_prefill_path(before)


def test_index_data_inside_what_is_written_refused():
    """A block mapping held inside the buffer the copies write was overwritten under them (swap_blocks
    crashed; copy_blocks copied the wrong blocks or crashed), and one cache passed as both key and value
    lost every key (2026-12-07): each is a ValueError now, nothing written. A mapping inside the source
    (read only) and the two halves of a [num_blocks, 2, ...] cache stay fine."""
    rng = np.random.default_rng(5)
    src = rng.standard_normal((10, 64)).astype(np.float32)
    dst = np.zeros((10, 64), np.float32)
    in_dst = dst[3].view(np.int64)[:4].reshape(2, 2)
    in_dst[:] = [[0, 3], [1, 4]]
    before = dst.copy()
    with pytest.raises(ValueError, match="swap_blocks: block_mapping .* lies in the dst buffer"):
        pa.swap_blocks(src, dst, in_dst)
    np.testing.assert_array_equal(dst, before)
    in_src = src[7].view(np.int64)[:4].reshape(2, 2)
    in_src[:] = [[0, 3], [1, 4]]
    pa.swap_blocks(src, dst, in_src)
    np.testing.assert_array_equal(dst[3:5], src[0:2])

    kc = [rng.standard_normal((10, 64)).astype(np.float32) for _ in range(2)]
    vc = [rng.standard_normal((10, 64)).astype(np.float32) for _ in range(2)]
    in_k1 = kc[1][9].view(np.int64)[:4].reshape(2, 2)
    in_k1[:] = [[0, 9], [1, 2]]
    kept = [a.copy() for a in kc + vc]
    with pytest.raises(ValueError, match=r"copy_blocks: block_mapping lies in key_caches\[1\]"):
        pa.copy_blocks(kc, vc, in_k1)
    # on CUDA the package checks it (C cannot see the layers' addresses there): arrays announced as
    # CUDA tensors stop at that check, before anything reaches the device
    in_v0 = vc[0][9].view(np.int64)[:4].reshape(2, 2)
    in_v0[:] = [[0, 9], [1, 2]]
    kept = [a.copy() for a in kc + vc]
    with pytest.raises(ValueError, match=r"copy_blocks: block_mapping lies in value_caches\[0\]"):
        pa.copy_blocks([FakeCuda(a) for a in kc], [FakeCuda(a) for a in vc], FakeCuda(in_v0))
    for a, b in zip(kc + vc, kept):
        np.testing.assert_array_equal(a, b)

    k = rng.standard_normal((2, 2, 16)).astype(np.float32)
    v = rng.standard_normal((2, 2, 16)).astype(np.float32)
    slots = np.array([3, 17], np.int64)
    kv = np.zeros((4, 2, 8, 2, 16), np.float32)
    for kcache, vcache in ((kv[:, 0], kv[:, 0]), (kv[:, 1], kv[:, 1])):
        with pytest.raises(ValueError, match="cache.key and cache.value are the same buffer"):
            pa.reshape_and_cache_flash(k, v, kcache, vcache, slots)
    assert not kv.any()
    # views of one buffer that overlap in part (value a head, or a token, after key): refused, nothing
    # written (until 2026-12-07 only the same view twice was)
    flat = np.zeros((4, 8, 3, 16), np.float32)
    for kcache, vcache in ((flat[:, :, :2], flat[:, :, 1:]), (flat[:, :7, :2], flat[:, 1:, :2])):
        with pytest.raises(ValueError, match="cache.key .* and cache.value .* share bytes"):
            pa.reshape_and_cache_flash(k, v, kcache, vcache, slots)
    assert not flat.any()
    pa.reshape_and_cache_flash(k, v, kv[:, 0], kv[:, 1], slots)
    np.testing.assert_array_equal(kv[0, 0, 3], k[0])
    np.testing.assert_array_equal(kv[0, 1, 3], v[0])
    np.testing.assert_array_equal(kv[2, 0, 1], k[1])
    np.testing.assert_array_equal(kv[2, 1, 1], v[1])


def test_real_scalars_take_one_element_arrays():
    """A softmax scale, soft cap or mask value may be a one-element array of any shape (as k_scale and
    v_scale may): the same result as the number. NumPy 2's float() refuses arrays that are not 0-d, which
    reached the caller as a TypeError naming neither the op nor the argument; other shapes and non-numbers
    are a TypeError naming both."""
    p = decode_problem()
    a, b = np.zeros_like(p["out"]), np.zeros_like(p["out"])
    pa.paged_attention_v1(**dict(p, out=a, logits_soft_cap=30.0))
    pa.paged_attention_v1(**dict(p, out=b, scale=np.array([p["scale"]], np.float32).reshape(1, 1),
                                 logits_soft_cap=np.array([30.0])))
    np.testing.assert_allclose(a, b, rtol=1e-6)
    for bad, what in ((np.array([0.1, 0.2]), "ndarray"), ("0.1", "str")):
        with pytest.raises(TypeError, match=f"paged_attention_v1: scale must be a real number .*got {what}"):
            pa.paged_attention_v1(**dict(p, scale=bad))
    untouched(p)
    rng = np.random.default_rng(6)
    q = rng.standard_normal((6, 4, 32)).astype(np.float32)
    kk = rng.standard_normal((6, 2, 32)).astype(np.float32)
    cu = np.array([0, 2, 6], np.int32)
    o1, o2 = np.zeros_like(q), np.zeros_like(q)
    pa.prompt_attention(q, kk, kk, cu, 4, softmax_scale=0.3, out=o1)
    pa.prompt_attention(q, kk, kk, cu, 4, softmax_scale=np.array([0.3]), out=o2)
    np.testing.assert_allclose(o1, o2, rtol=1e-6)
    with pytest.raises(TypeError, match="ragged_paged_attention: sm_scale must be a real number"):
        pa.ragged_paged_attention(q, np.zeros((3, 4, 2, 32), np.float32), np.array([2, 1], np.int32),
                                  np.zeros((2, 1), np.int32), np.array([0, 2, 3], np.int32), np.array([2], np.int32),
                                  sm_scale=np.ones(3), out=np.zeros_like(q))


def test_device_index_checked_not_wrapped():
    """device_info's index went to C's int through int(): 2^32 reached it as device 0 and 1.9 as 1."""
    with pytest.raises(ValueError, match="device_info: device 4294967296 does not fit in int32"):
        pa.device_info(2 ** 32)
    with pytest.raises(TypeError, match="device_info: device must be an integer"):
        pa.device_info(1.9)


def test_out_overlapping_an_input_refused():
    """An attention op's out sharing a byte with what it reads (README, "Outputs apart from inputs":
    the C entries refuse it, naming both) is a ValueError through the package too, and nothing is
    written: decode's out as its query or inside its key cache, a prompt's out as its query or over
    its values."""
    p = decode_problem()
    p["out"] = p["query"]
    kept = p["query"].copy()
    with pytest.raises(ValueError, match=r"^paged_attention_v1: decode: output out overlaps the input query"):
        pa.paged_attention_v1(**p)
    np.testing.assert_array_equal(p["query"], kept)
    p = decode_problem()
    kc = p["key_cache"]
    kept = kc.copy()
    p["out"] = kc.reshape(-1)[:p["query"].size].reshape(p["query"].shape)
    with pytest.raises(ValueError, match=r"output out overlaps the input kv\.key"):
        pa.paged_attention_v1(**p)
    np.testing.assert_array_equal(kc, kept)

    rng = np.random.default_rng(3)
    q = rng.standard_normal((6, 4, 32)).astype(np.float32)
    k = rng.standard_normal((6, 2, 32)).astype(np.float32)
    cu = np.array([0, 2, 6], np.int32)
    kept = q.copy()
    with pytest.raises(ValueError, match=r"^prompt_attention: output out overlaps the input query"):
        pa.prompt_attention(q, k, k.copy(), cu, 4, out=q)
    np.testing.assert_array_equal(q, kept)
    buf = np.zeros(q.size, np.float32)
    v = buf[:k.size].reshape(k.shape)
    v[...] = rng.standard_normal(k.shape)
    kept = buf.copy()
    with pytest.raises(ValueError, match=r"output out overlaps the input value"):
        pa.prompt_attention(q, k, v, cu, 4, out=buf.reshape(q.shape))
    np.testing.assert_array_equal(buf, kept)
