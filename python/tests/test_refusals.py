"""The Python layer's own refusals that no other test reached (a coverage run of
python/tests on 2026-12-03 listed each `raise` no test executed): every one
here is raised before anything runs, names the argument, and leaves the
caller's arrays as they were. Host arrays only: what needs a GPU is left to
test_gpu.py."""
import math
import types

import numpy as np
import pytest

import pagedattn as pa
from refattn import Paged


def decode_problem(layout="vllm", dtype=np.float32):
    rng = np.random.default_rng(3)
    pg = Paged(rng, [5, 9], 2, 32, 16, dtype)
    kc, vc = pg.fill(layout)
    q = rng.standard_normal((2, 4, 32)).astype(dtype)
    return dict(out=np.full_like(q, 7), query=q, key_cache=kc, value_cache=vc, num_kv_heads=2,
                scale=1 / math.sqrt(32), block_tables=pg.block_tables, seq_lens=np.array([5, 9], np.int32),
                block_size=16, max_seq_len=9)


# ---- caches -------------------------------------------------------------------------------

def test_cache_shapes_and_dtypes():
    p = decode_problem()
    kc, vc = p["key_cache"], p["value_cache"]
    with pytest.raises(ValueError, match="key_cache \\(float32\\) and value_cache \\(float16\\) dtypes differ"):
        pa.paged_attention_v1(**dict(p, value_cache=vc.astype(np.float16)))
    # a 5-D key cache whose last dimension is not 16 bytes of elements
    nb, kvh, hx, bs, x = kc.shape
    with pytest.raises(ValueError, match="key_cache's last dimension is 8; the vLLM layout packs x = 16 bytes / "
                                         "element size = 4"):
        pa.paged_attention_v1(**dict(p, key_cache=kc.reshape(nb, kvh, hx // 2, bs, 2 * x)))
    with pytest.raises(ValueError, match="key_cache must be 5-D \\(vLLM layout\\) or 4-D \\(flash layout\\)"):
        pa.paged_attention_v1(**dict(p, key_cache=kc.reshape(nb, -1)))
    assert (p["out"] == 7).all()

    f = decode_problem("nhd")
    kc, vc = f["key_cache"], f["value_cache"]
    with pytest.raises(ValueError, match="key_cache \\(float32\\) and value_cache \\(float16\\) dtypes differ"):
        pa.paged_attention_v1(**dict(f, value_cache=vc.astype(np.float16)))
    # the same shape at other strides: a transposed copy viewed back
    vt = np.ascontiguousarray(vc.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    with pytest.raises(ValueError, match="value_cache strides .* differ from key_cache strides"):
        pa.paged_attention_v1(**dict(f, value_cache=vt))
    with pytest.raises(ValueError, match="query head_size 16 but the cache's is 32"):
        pa.paged_attention_v1(**dict(f, query=f["query"][:, :, :16].copy(), out=f["out"][:, :, :16].copy()))
    assert (f["out"] == 7).all()


def test_cache_dtype_strings():
    p = decode_problem()
    with pytest.raises(ValueError, match="with kv_cache_dtype 'auto' a cache must be float32, float16, bfloat16, "
                                         "float8_e4m3fn or float8_e5m2"):
        pa.paged_attention_v1(**dict(p, key_cache=np.zeros(p["key_cache"].shape, np.int16),
                                     value_cache=np.zeros(p["value_cache"].shape, np.int16)))
    with pytest.raises(ValueError, match="kv_cache_dtype 'fp8' needs uint8 or the matching float8 storage"):
        pa.paged_attention_v1(**dict(p, kv_cache_dtype="fp8"))
    assert (p["out"] == 7).all()


def test_combined_cache_page_size():
    q = np.zeros((2, 2, 16), np.float32)
    out = np.full_like(q, 7)
    kv = np.zeros((3, 4, 2, 16), np.float32)
    args = (np.array([2], np.int32), np.array([[0]], np.int32), np.array([0, 2], np.int32), np.array([1], np.int32))
    with pytest.raises(ValueError, match="q head_dim 8 but kv_pages' is 16"):
        pa.ragged_paged_attention(q[:, :, :8].copy(), kv, *args, out=out[:, :, :8].copy())
    # kv_cache_update over a flattened [rows, 2 kv_heads, head] cache
    new_kv = np.ones((2, 2, 16), np.float32)
    slices = np.zeros((3, 8), np.int32)
    flat = kv.reshape(12, 2, 16)
    with pytest.raises(ValueError, match="kv_cache has 12 rows, not a positive multiple of page_size 5"):
        pa.kv_cache_update(new_kv, slices, flat, np.array([0], np.int32), page_size=5)
    with pytest.raises(ValueError, match="page_size 5 differs from kv_cache.shape\\[1\\] = 4"):
        pa.kv_cache_update(new_kv, slices, kv, np.array([0], np.int32), page_size=5)
    with pytest.raises(ValueError, match="new_kv has shape \\[2, 4, 16\\]; expected \\[num_tokens, 2, 16\\]"):
        pa.kv_cache_update(np.ones((2, 4, 16), np.float32), slices, kv, np.array([0], np.int32), page_size=4)
    wide = np.ones((2, 2, 32), np.float32)
    with pytest.raises(ValueError, match="new_kv's heads must be contiguous"):
        pa.kv_cache_update(wide[:, :, :16], slices, kv, np.array([0], np.int32), page_size=4)
    with pytest.raises(ValueError, match="slices has shape \\[2, 8\\]; expected \\[3, padded_num_slices\\]"):
        pa.kv_cache_update(new_kv, slices[:2].copy(), kv, np.array([0], np.int32), page_size=4)
    assert not kv.any() and (out == 7).all()


# ---- cache writes and block copies ----------------------------------------------------------

def test_reshape_and_cache_rows():
    rng = np.random.default_rng(4)
    k = rng.standard_normal((3, 2, 16)).astype(np.float32)
    kc = np.zeros((2, 2, 4, 4, 4), np.float32)
    vc = np.zeros((2, 2, 16, 4), np.float32)
    sm = np.array([0, 1, 2], np.int64)
    with pytest.raises(ValueError, match="key has shape \\[3, 2, 8\\]; expected \\[num_tokens, 2, 16\\]"):
        pa.reshape_and_cache(k[:, :, :8].copy(), k, kc, vc, sm)
    with pytest.raises(ValueError, match="key \\(float32\\) and value \\(float16\\) dtypes differ"):
        pa.reshape_and_cache(k, k.astype(np.float16), kc, vc, sm)
    with pytest.raises(ValueError, match="key must have stride 1 in its last dimension"):
        wide = np.repeat(k, 2, axis=2)
        pa.reshape_and_cache(wide[:, :, ::2], k, kc, vc, sm)
    # the flash variant writes slot_mapping's tokens: key shorter than it
    fkc = np.zeros((2, 4, 2, 16), np.float32)
    fvc = np.zeros_like(fkc)
    with pytest.raises(ValueError, match="key has 3 rows, value 3, slot_mapping 4; 4 tokens are written"):
        pa.reshape_and_cache_flash(k, k, fkc, fvc, np.array([0, 1, 2, 3], np.int64))
    assert not kc.any() and not vc.any() and not fkc.any() and not fvc.any()


def test_block_copies():
    dst = np.zeros((4, 8), np.float32)
    with pytest.raises(ValueError, match="src must have a leading num_blocks dimension, got shape \\[0, 8\\]"):
        pa.swap_blocks(np.zeros((0, 8), np.float32), dst, np.array([[0, 1]], np.int64))
    with pytest.raises(ValueError, match="copy_blocks: key_caches is empty"):
        pa.copy_blocks([], None, np.array([[0, 1]], np.int64))
    with pytest.raises(ValueError, match="caches of float64 \\(8-byte elements\\) are not supported"):
        pa.copy_blocks([np.zeros((4, 8), np.float64)], None, np.array([[0, 1]], np.int64))
    assert not dst.any()


def test_copy_blocks_without_blocks():
    """Caches of no blocks (or 0-d) are a ValueError naming the cache, as swap_blocks', with or without
    pairs (the C API refuses num_blocks 0 before its no-pairs no-op)."""
    none, one = np.zeros((0, 2), np.int64), np.array([[0, 1]], np.int64)
    for m in (none, one):
        with pytest.raises(ValueError, match="key_caches\\[0\\] must have a leading num_blocks dimension, got "
                                             "shape \\[0, 2, 8\\]"):
            pa.copy_blocks([np.zeros((0, 2, 8), np.float32)], [np.zeros((0, 2, 8), np.float32)], m)
        with pytest.raises(ValueError, match="key_caches\\[0\\] must have a leading num_blocks dimension, got "
                                             "shape \\[\\]"):
            pa.copy_blocks([np.zeros((), np.float32)], None, m)
        with pytest.raises(ValueError, match="value_caches\\[0\\] must have a leading num_blocks dimension"):
            pa.copy_blocks([np.zeros((3, 8), np.float32)], [np.zeros((0, 8), np.float32)], m)
        with pytest.raises(ValueError, match="key_caches\\[0\\] has shape \\[3, 0\\]: its blocks hold no elements"):
            pa.copy_blocks([np.zeros((3, 0), np.float32)], None, m)
    # with blocks, no pairs stays a no-op
    k = np.arange(24, dtype=np.float32).reshape(3, 8)
    pa.copy_blocks([k], None, none)
    np.testing.assert_array_equal(k, np.arange(24, dtype=np.float32).reshape(3, 8))


# ---- prefill --------------------------------------------------------------------------------

def test_prompt_and_context_shapes():
    q = np.zeros((5, 4, 32), np.float32)
    with pytest.raises(ValueError, match="q must have 3 dimensions, got shape \\[5, 128\\]"):
        pa.prompt_attention(q.reshape(5, 128), q, q, np.array([0, 5], np.int32), 5)
    p = decode_problem("nhd")
    kc, vc = p["key_cache"], p["value_cache"]
    o = np.full((5, 4, 16), 7, np.float32)
    qq = np.zeros((5, 4, 16), np.float32)
    kv = np.zeros((5, 2, 16), np.float32)
    with pytest.raises(ValueError, match="q head_size 16 but the cache's is 32"):
        pa.context_attention_fwd(qq, kv, kv, o, "auto", kc, vc, p["block_tables"], np.array([0], np.int32),
                                 np.array([5], np.int32), 5, 5)
    assert (o == 7).all()


# ---- host layer -----------------------------------------------------------------------------

def _meta():
    return pa.build_common_attention_metadata(np.array([0, 3], np.int32), np.array([3, 2], np.int32),
                                              np.array([[5, 6], [7, 8]], np.int32), 4)


def test_builder_argument_counts():
    with pytest.raises(ValueError, match="num_scheduled_tokens has 1 entries, num_computed_tokens 2"):
        pa.build_common_attention_metadata(np.array([0, 3], np.int32), np.array([3], np.int32),
                                           np.array([[5, 6], [7, 8]], np.int32), 4)
    with pytest.raises(ValueError, match="block_table has 1 rows for 2 requests"):
        pa.build_common_attention_metadata(np.array([0, 3], np.int32), np.array([3, 2], np.int32),
                                           np.array([[5, 6]], np.int32), 4)
    with pytest.raises(ValueError, match="num_computed_tokens must hold integers, got dtype float64"):
        pa.build_common_attention_metadata(np.array([0.0, 3.0]), np.array([3, 2], np.int32),
                                           np.array([[5, 6], [7, 8]], np.int32), 4)

    class NoHost:  # exports DLPack, but not to the host
        def __dlpack__(self, stream=None):
            raise BufferError("device memory")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(ValueError, match="num_computed_tokens must be a host array"):
        pa.build_common_attention_metadata(NoHost(), np.array([3, 2], np.int32),
                                           np.array([[5, 6], [7, 8]], np.int32), 4)


def test_hand_made_metadata_counts():
    m = _meta()
    with pytest.raises(ValueError, match="num_reqs -1 < 0"):
        pa.kv_update_slices(pa.CommonAttentionMetadata(**{**m.__dict__, "num_reqs": -1}))
    with pytest.raises(ValueError, match="capacity -1 < 0"):
        pa.kv_update_slices(m, capacity=-1)
    short = types.SimpleNamespace(query_start_loc_cpu=m.query_start_loc_cpu[:2], num_reqs=2)
    with pytest.raises(ValueError, match="query_start_loc_cpu has 2 entries for 2 requests"):
        pa.split_decodes_and_prefills(short)


def test_reorder_arguments():
    batch = types.SimpleNamespace(req_ids=["a", "b"], swap_states=lambda i, j: None)
    sched = types.SimpleNamespace(num_scheduled_tokens={"a": 3})
    with pytest.raises(ValueError, match="request 'b' of input_batch has no num_scheduled_tokens entry"):
        pa.reorder_batch_to_split_decodes_and_prefills(batch, sched)
    with pytest.raises(ValueError, match="num_scheduled_tokens is updated in place, so it must be a writable "
                                         "C-contiguous int32 NumPy array"):
        pa.reorder_num_scheduled_tokens(np.array([3, 1], np.int64))
    t = np.array([3, 1, 1], np.int32)
    with pytest.raises(ValueError, match="perm has shape \\[2\\], num_scheduled_tokens \\[3\\]"):
        pa.reorder_num_scheduled_tokens(t, perm=np.arange(2, dtype=np.int32))
    assert t.tolist() == [3, 1, 1]

    # a swap_states that raises: the swaps made before it stand, and the error comes through
    class Boom(Exception):
        pass

    def swap(i, j):
        raise Boom(f"swap {i} {j}")

    batch = types.SimpleNamespace(req_ids=["a", "b"], swap_states=swap)
    sched = types.SimpleNamespace(num_scheduled_tokens={"a": 3, "b": 1})
    with pytest.raises(Boom, match="swap 0 1"):
        pa.reorder_batch_to_split_decodes_and_prefills(batch, sched)


def test_local_attention_argument_counts():
    qsl, sl, bt = np.array([0, 2, 5], np.int32), np.array([4, 5], np.int32), np.zeros((2, 4), np.int32)
    with pytest.raises(ValueError, match="query_start_loc_np has 2 entries; expected num_reqs \\+ 1 = 3"):
        pa.make_local_attention_virtual_batches(4, qsl[:2], sl, bt, 2)
    with pytest.raises(ValueError, match="block_table has 1 rows for 2 requests"):
        pa.make_local_attention_virtual_batches(4, qsl, sl, bt[:1], 2)


# ---- DLPack and integers --------------------------------------------------------------------

def test_dlpack_exports_refused():
    p = decode_problem()

    class Unexportable:  # what a producer raises for a tensor it cannot export (torch: requires_grad)
        def __dlpack__(self, stream=None, max_version=None):
            raise BufferError("no export for you")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match="query: cannot be exported through DLPack: no export for you"):
        pa.paged_attention_v1(**dict(p, query=Unexportable()))

    class NotACapsule:
        def __dlpack__(self, stream=None):
            return "capsule"

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match="query: __dlpack__ returned something other than an unconsumed 'dltensor'"):
        pa.paged_attention_v1(**dict(p, query=NotACapsule()))
    with pytest.raises(TypeError, match="query: DLPack dtype code 5 bits 64 is not supported"):
        pa.paged_attention_v1(**dict(p, query=p["query"].astype(np.complex64)))
    assert (p["out"] == 7).all()


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def test_read_only_inputs_taken(tmp_path):
    """Read-only NumPy inputs (flags.writeable False, np.frombuffer of bytes, np.load(mmap_mode='r'))
    export through DLPack's versioned protocol with its READ_ONLY flag and are read as writable
    copies are; read-only caches an op only reads (decode's) too."""
    p = decode_problem()
    want = p["out"].copy()
    pa.paged_attention_v1(**dict(p, out=want))
    np.save(tmp_path / "q.npy", p["query"])
    q_map = np.load(tmp_path / "q.npy", mmap_mode="r")
    sl_bytes = np.frombuffer(p["seq_lens"].tobytes(), np.int32)
    assert not q_map.flags.writeable and not sl_bytes.flags.writeable
    ro = dict(p, query=q_map, seq_lens=sl_bytes, block_tables=_read_only(p["block_tables"]),
              key_cache=_read_only(p["key_cache"]), value_cache=_read_only(p["value_cache"]))
    pa.paged_attention_v1(**ro)
    np.testing.assert_array_equal(p["out"], want)
    src = np.arange(24, dtype=np.float32).reshape(3, 8)
    dst = np.zeros((3, 8), np.float32)
    pa.swap_blocks(_read_only(src), dst, _read_only(np.array([[2, 0]], np.int64)))
    np.testing.assert_array_equal(dst[0], src[2])


def test_read_only_outputs_and_written_caches_refused():
    """What an op writes (outputs, the lse, caches it writes, the copy destinations) must be writable:
    a read-only one is a ValueError naming the op and the argument, and nothing is written."""
    p = decode_problem()
    msg = "is written in place, so it must be writable"
    with pytest.raises(ValueError, match=f"paged_attention_v1: out {msg}"):
        pa.paged_attention_v1(**dict(p, out=_read_only(p["out"])))
    with pytest.raises(ValueError, match=f"paged_attention_v1: lse {msg}"):
        pa.paged_attention_v1(**p, lse=_read_only(np.zeros((4, 2), np.float32)))
    n, h, d = p["query"].shape
    with pytest.raises(ValueError, match=f"paged_attention_v2: tmp_out {msg}"):
        pa.paged_attention_v2(p["out"], None, None, _read_only(np.zeros((n, h, 1, d), np.float32)),
                              *[p[k] for k in ("query", "key_cache", "value_cache", "num_kv_heads", "scale",
                                               "block_tables", "seq_lens", "block_size", "max_seq_len")])
    assert (p["out"] == 7).all()
    k = np.ones((2, 2, 32), np.float32)
    kc, vc = np.zeros((3, 16, 2, 32), np.float32), np.zeros((3, 16, 2, 32), np.float32)
    for name in ("key_cache", "value_cache"):
        caches = dict(key_cache=kc, value_cache=vc)
        caches[name] = _read_only(caches[name])
        with pytest.raises(ValueError, match=f"reshape_and_cache_flash: {name} {msg}"):
            pa.reshape_and_cache_flash(k, k, caches["key_cache"], caches["value_cache"], np.arange(2, dtype=np.int64))
    with pytest.raises(ValueError, match=f"copy_blocks: value_caches\\[0\\] {msg}"):
        pa.copy_blocks([kc], [_read_only(vc)], np.array([[0, 1]], np.int64))
    with pytest.raises(ValueError, match=f"swap_blocks: dst {msg}"):
        pa.swap_blocks(kc, _read_only(vc), np.array([[0, 1]], np.int64))
    with pytest.raises(ValueError, match=f"convert_fp8: dst_cache {msg}"):
        pa.convert_fp8(_read_only(np.zeros(8, np.uint8)), np.ones(8, np.float32))
    combined = np.zeros((2 * 16, 4, 32), np.float32)
    with pytest.raises(ValueError, match=f"kv_cache_update: kv_cache {msg}"):
        pa.kv_cache_update(np.ones((1, 4, 32), np.float32), np.zeros((3, 8), np.int32), _read_only(combined),
                           np.array([0], np.int32), page_size=16)
    a, la = np.ones((2, 4, 32), np.float32), np.zeros((4, 2), np.float32)
    with pytest.raises(ValueError, match=f"merge_attn_states: output {msg}"):
        pa.merge_attn_states(_read_only(a), a, la, a, la)
    with pytest.raises(ValueError, match=f"merge_attn_states: output_lse {msg}"):
        pa.merge_attn_states(np.zeros_like(a), a, la, a, la, _read_only(la))
    q = np.ones((2, 4, 32), np.float32)
    with pytest.raises(ValueError, match=f"ragged_paged_attention: out {msg}"):
        pa.ragged_paged_attention(q, np.zeros((2, 16, 4, 32), np.float32), np.array([2], np.int32),
                                  np.array([[0]], np.int32), np.array([0, 2], np.int32), np.array([1], np.int32),
                                  out=_read_only(np.zeros_like(q)))
    with pytest.raises(ValueError, match=f"prompt_attention: out {msg}"):
        pa.prompt_attention(q, np.ones((2, 2, 32), np.float32), np.ones((2, 2, 32), np.float32),
                            np.array([0, 2], np.int32), 2, out=_read_only(np.zeros_like(q)))
    assert not kc.any() and not vc.any() and not combined.any()


def test_integer_arguments_must_be_integers():
    p = decode_problem()
    with pytest.raises(TypeError, match="max_seq_len must be an integer, got float 9.0"):
        pa.paged_attention_v1(**dict(p, max_seq_len=9.0))
    assert (p["out"] == 7).all()


def test_copy_blocks_layers_sharing_bytes_refused():
    """Distinct layers' caches, and a layer's key and value, that share a byte without being the same
    buffer were accepted: a copy in one wrote into the other's live blocks (a view beginning inside
    another layer's cache, a value cache over the next layer's key cache). Each is a ValueError naming
    both, nothing written, on the host and on CUDA (whose C entry cannot see the layers' addresses).
    The same buffer named twice copies the same bytes twice and stays allowed, and so do adjacent views
    of one buffer (vLLM's [2, num_blocks, ...] key and value halves)."""
    from test_errors import FakeCuda
    rng = np.random.default_rng(11)
    big = rng.standard_normal((24, 8)).astype(np.float32)
    kept = big.copy()
    m = np.array([[0, 1]], np.int64)
    for keys, values, names in (
            ([big[:10], big[5:15]], None, r"key_caches\[0\] and key_caches\[1\]"),
            ([big[:10], big[10:20]], [big[12:22], np.zeros((10, 8), np.float32)],
             r"key_caches\[1\] and value_caches\[0\]"),
            ([big[:10]], [big[2:12]], r"key_caches\[0\] and value_caches\[0\]"),
            ([big[3:13]], [big[:10]], r"key_caches\[0\] and value_caches\[0\]")):
        for wrap in (lambda a: a, FakeCuda):
            with pytest.raises(ValueError, match=rf"^copy_blocks: {names} share bytes"):
                pa.copy_blocks([wrap(a) for a in keys], values and [wrap(a) for a in values],
                               wrap(np.array([[0, 1]], np.int64)))
    np.testing.assert_array_equal(big, kept)
    # refused with no pairs too: the caches are wrong, whatever the mapping holds
    with pytest.raises(ValueError, match="share bytes"):
        pa.copy_blocks([big[:10], big[1:11]], None, np.zeros((0, 2), np.int64))

    want = big.copy()
    want[1], want[11] = want[0], want[10]
    pa.copy_blocks([big[:10]], [big[10:20]], m)  # adjacent halves of one buffer
    np.testing.assert_array_equal(big, want)
    k = rng.standard_normal((6, 8)).astype(np.float32)
    want = k.copy()
    want[4] = want[2]
    pa.copy_blocks([k, k[:]], [k, k], np.array([[2, 4]], np.int64))  # one buffer named four times
    np.testing.assert_array_equal(k, want)
    # swap_blocks' src and dst: the C entries refuse an overlap themselves (both paths)
    kept = big.copy()
    for wrap in (lambda a: a, FakeCuda):
        with pytest.raises(ValueError, match="swap_blocks: the src buffer .* and the dst buffer .* overlap"):
            pa.swap_blocks(wrap(big[:10]), wrap(big[5:15]), m)
    np.testing.assert_array_equal(big, kept)
