"""Every op on NumPy arrays (the CPU path) against refattn.py's independent
NumPy definitions: caches laid out by hand from kv_cache.h, attention in float64."""
import math

import numpy as np
import pytest

import pagedattn as pa
from refattn import Paged, attend, fp8_values, mixed_batch, mixed_reference, x_of

TOL = {np.float32: 2e-5, np.float16: 2e-3}


def close(got, ref, dtype):
    tol = TOL[np.dtype(dtype).type]
    np.testing.assert_allclose(np.asarray(got, np.float64), ref, atol=tol * 4, rtol=tol * 4)


# ---- decode ------------------------------------------------------------------------------------------------

DECODE_CASES = [  # layout, dtype, heads, kv heads, head size, block size, seq lens
    ("vllm", np.float32, 4, 2, 32, 16, [1, 17, 40]),
    ("vllm", np.float16, 8, 8, 64, 8, [33, 5]),
    ("nhd", np.float32, 6, 2, 32, 16, [16, 1, 70]),
    ("hnd", np.float16, 4, 1, 64, 32, [64, 3, 31]),
]


@pytest.mark.parametrize("entry", ["v1", "v2", "decode"])
@pytest.mark.parametrize("layout,dtype,H,KVH,D,BS,lens", DECODE_CASES)
def test_decode_matches_numpy(entry, layout, dtype, H, KVH, D, BS, lens):
    rng = np.random.default_rng(len(lens) * 7 + D)
    pg = Paged(rng, lens, KVH, D, BS, dtype)
    kc, vc = pg.fill(layout)
    q = rng.standard_normal((len(lens), H, D)).astype(dtype)
    out = np.full_like(q, np.nan)
    seq_lens = np.array(lens, np.int32)
    scale = 1 / math.sqrt(D)
    args = (q, kc, vc, KVH, scale, pg.block_tables, seq_lens, BS, max(lens))
    if entry == "v1":
        pa.paged_attention_v1(out, *args)
    elif entry == "v2":
        P = -(-max(lens) // 512)
        pa.paged_attention_v2(out, np.zeros((len(lens), H, P), np.float32), np.zeros((len(lens), H, P), np.float32),
                              np.zeros((len(lens), H, P, D), dtype), *args)
    else:
        pa.paged_attention_decode(out, *args)
    for s, n in enumerate(lens):
        close(out[s], attend(q[s:s + 1], pg.K[s], pg.V[s], scale)[0], dtype)


def test_decode_workspace_size():
    """The layout decode.h documents: partial rows in the query's type (2 or 4 bytes an element),
    exp_sums and max_logits in f32, each part from a multiple of 256 bytes."""
    def r256(x):
        return -(-x // 256) * 256

    def layout(rows, d, esz):
        return r256(rows * d * esz) + 2 * r256(rows * 4)

    splits = 8  # the recommended entry: 256-token splits of 2000 tokens
    assert pa.paged_attention_workspace_size(2, 8, 2, 64, 2000) == layout(2 * 8 * splits, 64, 4)
    for dt, esz in (("float32", 4), ("float16", 2), ("bfloat16", 2), (np.float16, 2), (np.dtype("float32"), 4)):
        assert pa.paged_attention_workspace_size(2, 8, 2, 64, 2000, dtype=dt) == layout(2 * 8 * splits, 64, esz)
    assert pa.paged_attention_workspace_size(2, 8, 2, 64, 2000, entry="v2", dtype="bfloat16") == \
        layout(2 * 8 * 4, 64, 2)
    assert pa.paged_attention_workspace_size(2, 8, 2, 64, 200, dtype="float16") == 0  # one split
    with pytest.raises(ValueError, match="query dtype"):
        pa.paged_attention_workspace_size(2, 8, 2, 64, 2000, dtype="float8_e4m3fn")


def test_decode_alibi_and_strided_query():
    rng = np.random.default_rng(3)
    H, KVH, D, BS, lens = 4, 2, 32, 16, [9, 30]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    kc, vc = pg.fill("vllm")
    qkv = rng.standard_normal((len(lens), 3 * H * D)).astype(np.float32)
    q = qkv[:, :H * D].reshape(len(lens), H, D)  # rows 3*H*D apart, as a slice of a fused projection
    slopes = np.array([0.5, 0.25, 0.125, 0.0625], np.float32)
    out = np.zeros((len(lens), H, D), np.float32)
    pa.paged_attention_v1(out, q, kc, vc, KVH, 0.2, pg.block_tables, np.array(lens, np.int32), BS, 30, slopes)
    for s, n in enumerate(lens):
        close(out[s], attend(q[s:s + 1], pg.K[s], pg.V[s], 0.2, alibi=slopes)[0], np.float32)


def run_decode(entry, out, args, **kw):
    """One of the three decode entries over args (query .. max_seq_len); v2 makes its own scratch."""
    if entry == "v1":
        pa.paged_attention_v1(out, *args, **kw)
    elif entry == "v2":
        pa.paged_attention_v2(out, None, None, None, *args, **kw)
    else:
        pa.paged_attention_decode(out, *args, **kw)


@pytest.mark.parametrize("entry", ["v1", "v2", "decode"])
def test_decode_attention_sinks(entry):
    """gpt-oss's sinks: one logit more per head, of no value (-inf: none)."""
    rng = np.random.default_rng(21)
    H, KVH, D, BS, lens = 8, 2, 32, 16, [1, 40, 600]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    kc, vc = pg.fill("nhd")
    q = rng.standard_normal((len(lens), H, D)).astype(np.float32)
    sinks = np.array([-np.inf, 0.5, 2.0, -1.0, 4.0, 8.0, 1.0, 3.0], np.float32)
    out = np.full_like(q, np.nan)
    args = (q, kc, vc, KVH, 0.3, pg.block_tables, np.array(lens, np.int32), BS, max(lens))
    run_decode(entry, out, args, sliding_window=100, sinks=sinks)
    for s, n in enumerate(lens):
        close(out[s], attend(q[s:s + 1], pg.K[s], pg.V[s], 0.3, window=100, sinks=sinks)[0], np.float32)
    with pytest.raises(ValueError, match="sinks"):
        pa.paged_attention_decode(out, *args, sinks=sinks[:4])


def test_decode_fp8_cache_with_scales():
    """An fp8 e4m3 cache written by reshape_and_cache with a scale, read by decode:
    close to the unquantised attention (e4m3 keeps about 2 significant digits)."""
    rng = np.random.default_rng(11)
    H, KVH, D, BS, lens = 4, 2, 32, 16, [20, 7]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    x = 16
    kc = np.zeros((pg.num_blocks, KVH, D // x, BS, x), np.uint8)
    vc = np.zeros((pg.num_blocks, KVH, D, BS), np.uint8)
    ks, vs = np.array([0.02], np.float32), np.array([0.03], np.float32)
    for s, n in enumerate(lens):
        slots = np.array([pg.slot(s, t) for t in range(n)], np.int64)
        pa.reshape_and_cache(pg.K[s], pg.V[s], kc, vc, slots, "fp8", ks, vs)
    assert kc.any() and vc.any()
    q = rng.standard_normal((len(lens), H, D)).astype(np.float32)
    out = np.zeros_like(q)
    pa.paged_attention_v1(out, q, kc, vc, KVH, 0.15, pg.block_tables, np.array(lens, np.int32), BS, 20, None, "fp8",
                          ks, vs)
    for s in range(len(lens)):
        np.testing.assert_allclose(out[s], attend(q[s:s + 1], pg.K[s], pg.V[s], 0.15)[0], atol=0.08)


def test_fp8_scales_per_kv_head():
    """k_scale and v_scale of num_kv_heads elements (vLLM's per-attention-head scales):
    reshape_and_cache_flash stores head h's rows with its own scales (each byte decodes,
    by the e4m3 definition, to within half a step of x / scale[h]), and decode reads them
    back with them: close to the unquantised attention. A per-head k_scale beside a one-float
    v_scale is refused."""
    rng = np.random.default_rng(12)
    H, KVH, D, BS, lens = 6, 3, 32, 16, [20, 7]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    kc = np.zeros((pg.num_blocks, BS, KVH, D), np.uint8)
    vc = np.zeros((pg.num_blocks, BS, KVH, D), np.uint8)
    ks = np.array([0.02, 0.08, 0.012], np.float32)
    vs = np.array([0.03, 0.015, 0.06], np.float32)
    for s, n in enumerate(lens):
        slots = np.array([pg.slot(s, t) for t in range(n)], np.int64)
        pa.reshape_and_cache_flash(pg.K[s], pg.V[s], kc, vc, slots, "fp8", ks, vs)
        b, off = slots // BS, slots % BS
        val = fp8_values("e4m3")
        for cache, x, sc in ((kc, pg.K[s], ks), (vc, pg.V[s], vs)):
            want = x / sc[None, :, None]
            got = val[cache[b, off].astype(np.int64)]
            np.testing.assert_array_less(np.abs(got - want), np.abs(want) * 0.0625 + 2.0 ** -9)
    q = rng.standard_normal((len(lens), H, D)).astype(np.float32)
    out = np.zeros_like(q)
    pa.paged_attention_v1(out, q, kc, vc, KVH, 0.15, pg.block_tables, np.array(lens, np.int32), BS, 20, None, "fp8",
                          ks, vs)
    for s in range(len(lens)):
        np.testing.assert_allclose(out[s], attend(q[s:s + 1], pg.K[s], pg.V[s], 0.15)[0], atol=0.08)
    with pytest.raises(ValueError, match="one per KV head"):
        pa.paged_attention_v1(out, q, kc, vc, KVH, 0.15, pg.block_tables, np.array(lens, np.int32), BS, 20, None,
                              "fp8", ks, vs[:1])
    with pytest.raises(ValueError, match=r"one float32 or one per KV head \(3\)"):
        pa.paged_attention_v1(out, q, kc, vc, KVH, 0.15, pg.block_tables, np.array(lens, np.int32), BS, 20, None,
                              "fp8", ks[:2], vs[:2])
    # one per KV head is for both: a per-head scale beside None (one scale, 1.0) is refused too
    for k_s, v_s, msg in ((None, vs, "k_scale is None and v_scale 3 float"), (ks, None, "v_scale None")):
        with pytest.raises(ValueError, match=msg):
            pa.paged_attention_v1(out, q, kc, vc, KVH, 0.15, pg.block_tables, np.array(lens, np.int32), BS, 20,
                                  None, "fp8", k_s, v_s)
        with pytest.raises(ValueError, match=msg):
            pa.reshape_and_cache_flash(pg.K[0], pg.V[0], kc, vc, np.arange(lens[0], dtype=np.int64), "fp8", k_s,
                                       v_s)


# ---- cache writes -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_reshape_and_cache_vllm_layout(dtype):
    rng = np.random.default_rng(5)
    T, KVH, D, BS, NB = 11, 2, 32, 8, 5
    x = x_of(dtype)
    key = rng.standard_normal((T, KVH, D)).astype(dtype)
    value = rng.standard_normal((T, KVH, D)).astype(dtype)
    slots = rng.permutation(NB * BS)[:T].astype(np.int64)
    slots[[2, 7]] = -1  # padding: never written
    kc = np.full((NB, KVH, D // x, BS, x), 9, dtype)
    vc = np.full((NB, KVH, D, BS), 9, dtype)
    want_k, want_v = kc.copy(), vc.copy()
    for t, sl in enumerate(slots):
        if sl < 0:
            continue
        b, off = divmod(int(sl), BS)
        for h in range(KVH):
            for d in range(D):
                want_k[b, h, d // x, off, d % x] = key[t, h, d]
                want_v[b, h, d, off] = value[t, h, d]
    pa.reshape_and_cache(key, value, kc, vc, slots, "auto", None, None)
    np.testing.assert_array_equal(kc, want_k)
    np.testing.assert_array_equal(vc, want_v)


@pytest.mark.parametrize("layout", ["nhd", "hnd"])
def test_reshape_and_cache_flash(layout):
    rng = np.random.default_rng(6)
    T, KVH, D, BS, NB = 9, 3, 16, 4, 6
    # keys from a fused [T, 2, KVH, D] buffer: strided rows
    kvbuf = rng.standard_normal((T + 2, 2, KVH, D)).astype(np.float32)
    key, value = kvbuf[:, 0], kvbuf[:, 1]
    slots = rng.permutation(NB * BS)[:T].astype(np.int64)
    slots[4] = -1
    if layout == "nhd":
        kc = np.zeros((NB, BS, KVH, D), np.float32)
        vc = np.zeros((NB, BS, KVH, D), np.float32)
        kview, vview = kc, vc
    else:
        kc = np.zeros((NB, KVH, BS, D), np.float32)
        vc = np.zeros((NB, KVH, BS, D), np.float32)
        kview, vview = kc.transpose(0, 2, 1, 3), vc.transpose(0, 2, 1, 3)
    want_k, want_v = np.zeros_like(kc), np.zeros_like(vc)
    for t, sl in enumerate(slots):
        if sl < 0:
            continue
        b, off = divmod(int(sl), BS)
        if layout == "nhd":
            want_k[b, off], want_v[b, off] = key[t], value[t]
        else:
            want_k[b, :, off], want_v[b, :, off] = key[t], value[t]
    pa.reshape_and_cache_flash(key, value, kview, vview, slots)  # key has 2 extra rows: slot_mapping decides
    np.testing.assert_array_equal(kc, want_k)
    np.testing.assert_array_equal(vc, want_v)


@pytest.mark.parametrize("layout,KVH", [("hnd", 2), ("hnd", 1), ("nhd", 2)])
def test_reshape_and_cache_flash_one_token_blocks(layout, KVH):
    """block_size 1: an HND cache [NB, KVH, 1, D] (permuted to [NB, 1, KVH, D]) is written where
    its definition puts each token, as an NHD one is."""
    rng = np.random.default_rng(16)
    T, D, NB = 5, 16, 7
    key = rng.standard_normal((T, KVH, D)).astype(np.float32)
    value = rng.standard_normal((T, KVH, D)).astype(np.float32)
    slots = np.array([3, 0, -1, 6, 5], np.int64)
    mem = (NB, KVH, 1, D) if layout == "hnd" else (NB, 1, KVH, D)
    kc, vc = np.zeros(mem, np.float32), np.zeros(mem, np.float32)
    kview, vview = (kc.transpose(0, 2, 1, 3), vc.transpose(0, 2, 1, 3)) if layout == "hnd" else (kc, vc)
    want_k, want_v = np.zeros_like(kc), np.zeros_like(vc)
    for t, b in enumerate(slots):
        if b < 0:
            continue
        if layout == "hnd":
            want_k[b, :, 0], want_v[b, :, 0] = key[t], value[t]
        else:
            want_k[b, 0], want_v[b, 0] = key[t], value[t]
    pa.reshape_and_cache_flash(key, value, kview, vview, slots)
    np.testing.assert_array_equal(kc, want_k)
    np.testing.assert_array_equal(vc, want_v)


def test_kv_cache_update_slices():
    rng = np.random.default_rng(8)
    T, CH, D, PS, NP = 10, 4, 16, 4, 6
    new_kv = rng.standard_normal((T, CH, D)).astype(np.float16)
    cache = np.zeros((NP * PS, CH, D), np.float16)
    # (kv_cache_start, new_kv_start, slice_len); the padding column is (0, 0, 0)
    cols = [(5, 0, 3), (12, 3, 4), (0, 7, 2), (21, 9, 1)]
    slices = np.zeros((3, 8), np.int32)
    for i, c in enumerate(cols):
        slices[:, i] = c
    want = cache.copy()
    for cs, ns, n in cols:
        want[cs:cs + n] = new_kv[ns:ns + n]
    ret = pa.kv_cache_update(new_kv, slices, cache, np.array([len(cols)], np.int32), page_size=PS,
                             num_slices_per_block=8)
    assert ret is cache
    np.testing.assert_array_equal(cache, want)


def test_kv_cache_update_quantises_into_fp8_cache():
    """f32 rows into an fp8 e5m2 cache (uint8 storage) with a scale: each stored
    byte decodes (by the e5m2 definition, refattn.fp8_values) to within half an
    e5m2 step of x / scale."""
    rng = np.random.default_rng(10)
    new_kv = rng.standard_normal((4, 2, 16)).astype(np.float32)
    cache = np.zeros((8, 2, 16), np.uint8)
    slices = np.zeros((3, 8), np.int32)
    slices[:, 0] = (2, 0, 4)
    pa.kv_cache_update(new_kv, slices, cache, np.array([1], np.int32), page_size=4, kv_cache_dtype="fp8_e5m2",
                       k_scale=np.array([0.5], np.float32), v_scale=np.array([0.25], np.float32))
    val = fp8_values("e5m2")[cache[2:6].astype(np.int64)]
    scale = np.array([0.5, 0.25])[np.arange(2) % 2][None, :, None]  # combined head 0 is K, 1 is V
    want = new_kv / scale
    assert not cache[:2].any() and not cache[6:].any()
    np.testing.assert_array_less(np.abs(val - want), np.abs(want) * 0.125 + 2.0 ** -16)


@pytest.mark.parametrize("fmt,kv_dtype", [("e4m3", "fp8"), ("e5m2", "fp8_e5m2")])
def test_convert_fp8_both_ways(fmt, kv_dtype):
    """Quantising stores the byte whose value (by the format's definition) is nearest
    to x / scale, saturated at the largest finite value; dequantising gives exactly
    value(byte) * scale for every byte."""
    table = fp8_values(fmt)
    finite = np.isfinite(table)
    top = table[finite].max()
    rng = np.random.default_rng(16)
    scale = 0.37
    x = np.concatenate([rng.standard_normal(502) * 40, rng.standard_normal(200) * 1e-3,
                        [0.0, -0.0, 1e6, -1e6, top * scale, -top * scale]]).astype(np.float32).reshape(2, -1, 2)
    q = np.full(x.shape, 0xAA, np.uint8)
    pa.convert_fp8(q, x, scale, kv_dtype)
    got = table[q.astype(np.int64)]
    want = np.clip(x.astype(np.float64) / np.float32(scale), -top, top)
    err = np.abs(got - want)
    best = np.abs(table[finite][None, :] - want.reshape(-1, 1)).min(axis=1).reshape(want.shape)
    assert np.isfinite(got).all()
    np.testing.assert_array_less(err, best + 1e-12 + 1e-7 * np.abs(want))  # the nearest value

    # a tie (the midpoint of two neighbouring values, exact in float32) rounds to the even code (mantissa
    # bit 0), as ops.py says: every pair of neighbours, both signs, subnormals included
    pos = sorted((table[b], b) for b in range(128) if finite[b] and table[b] > 0)
    pos = [(0.0, 0)] + pos
    mids = np.array([(a + b) / 2 for (a, _), (b, _) in zip(pos, pos[1:])], np.float32)
    even = np.array([ca if ca % 2 == 0 else cb for (_, ca), (_, cb) in zip(pos, pos[1:])], np.uint8)
    assert np.array_equal(mids.astype(np.float64), [(a + b) / 2 for (a, _), (b, _) in zip(pos, pos[1:])])
    ties = np.concatenate([mids, -mids])
    q = np.full(ties.shape, 0xAA, np.uint8)
    pa.convert_fp8(q, ties, 1.0, kv_dtype)
    np.testing.assert_array_equal(q, np.concatenate([even, even | 0x80]))

    every = np.array([b for b in range(256) if finite[b]], np.uint8)
    for dt in (np.float32, np.float16):
        y = np.full(every.shape, np.nan, dt)
        pa.convert_fp8(y, every, np.array([scale], np.float32), kv_dtype)
        np.testing.assert_array_equal(y, (table[every] * np.float32(scale)).astype(np.float32).astype(dt))


@pytest.mark.parametrize("scalar", [np.float32, np.float16, np.float64, np.int32])
def test_numpy_scalar_scales(scalar):
    """k_scale / v_scale / convert_fp8's scale given as a NumPy real scalar (np.float32(0.375), what
    reading a float32 array back gives) act as the same Python float: bytes equal to those of the
    scale as a float32 tensor, values as the e4m3 table says. A bad one is a ValueError as a float's."""
    table = fp8_values("e4m3")
    rng = np.random.default_rng(23)
    k, v = (rng.standard_normal((3, 2, 32)).astype(np.float32) for _ in range(2))
    ks, vs = (0.375, 2.5) if scalar is not np.int32 else (2, 3)
    want_kc = np.zeros((4, 16, 2, 32), np.uint8)
    want_vc = np.zeros_like(want_kc)
    pa.reshape_and_cache_flash(k, v, want_kc, want_vc, np.arange(3, dtype=np.int64), "fp8",
                               np.array([ks], np.float32), np.array([vs], np.float32))
    kc, vc = np.zeros_like(want_kc), np.zeros_like(want_vc)
    pa.reshape_and_cache_flash(k, v, kc, vc, np.arange(3, dtype=np.int64), "fp8", scalar(ks), scalar(vs))
    np.testing.assert_array_equal(kc, want_kc)
    np.testing.assert_array_equal(vc, want_vc)
    q = np.zeros(k.shape, np.uint8)
    pa.convert_fp8(q, k, np.array([ks], np.float32))
    mine = np.full_like(q, 0xAA)
    pa.convert_fp8(mine, k, scalar(ks))
    np.testing.assert_array_equal(mine, q)
    y = np.full(k.shape, np.nan, np.float32)
    pa.convert_fp8(y, q, scalar(vs))
    np.testing.assert_array_equal(y, (table[q.astype(np.int64)] * np.float32(vs)).astype(np.float32))
    bad = [scalar(-1)] + ([scalar(np.nan), scalar(np.inf)] if scalar is not np.int32 else [scalar(0)])
    for b in bad:
        with pytest.raises(ValueError, match="k_scale = .* must be finite and > 0"):
            pa.reshape_and_cache_flash(k, v, kc, vc, np.arange(3, dtype=np.int64), "fp8", b, 1.0)
        with pytest.raises(ValueError, match="convert_fp8: scale = .* must be finite and > 0"):
            pa.convert_fp8(mine, k, b)
    np.testing.assert_array_equal(kc, want_kc)


def test_copy_and_swap_blocks():
    rng = np.random.default_rng(9)
    L, NB = 3, 6
    kcs = [rng.standard_normal((NB, 2, 4, 8)).astype(np.float32) for _ in range(L)]
    vcs = [rng.standard_normal((NB, 2, 4, 8)).astype(np.float32) for _ in range(L)]
    mapping = np.array([[0, 3], [0, 4], [5, 1]], np.int64)
    want_k, want_v = [k.copy() for k in kcs], [v.copy() for v in vcs]
    for w in want_k + want_v:
        for s, d in mapping:
            w[d] = w[s]
    pa.copy_blocks(kcs, vcs, mapping)
    for a, b in zip(kcs + vcs, want_k + want_v):
        np.testing.assert_array_equal(a, b)

    src = rng.standard_normal((NB, 16)).astype(np.float16)
    dst = np.zeros((4, 16), np.float16)
    pairs = np.array([[5, 0], [2, 3], [3, 2]], np.int64)
    pa.swap_blocks(src, dst, pairs)
    want = np.zeros_like(dst)
    for s, d in pairs:
        want[d] = src[s]
    np.testing.assert_array_equal(dst, want)


def test_copy_blocks_vllm_layout():
    """vLLM's paged layout: key [nb, kvh, hs // x, bs, x] and value [nb, kvh, hs, bs] differ in shape but
    hold the same elements per block, which is all pa_copy_blocks needs; both copied as NumPy does."""
    rng = np.random.default_rng(21)
    L, NB, KVH, D, BS = 2, 5, 2, 32, 16
    for dt in (np.float32, np.float16):
        x = 16 // np.dtype(dt).itemsize
        kcs = [rng.standard_normal((NB, KVH, D // x, BS, x)).astype(dt) for _ in range(L)]
        vcs = [rng.standard_normal((NB, KVH, D, BS)).astype(dt) for _ in range(L)]
        mapping = np.array([[0, 3], [0, 4], [2, 1]], np.int64)
        want = [c.copy() for c in kcs + vcs]
        for w in want:
            for s, d in mapping:
                w[d] = w[s]
        pa.copy_blocks(kcs, vcs, mapping)
        for a, b in zip(kcs + vcs, want):
            np.testing.assert_array_equal(a, b)
    # what stays refused: another count of blocks or of elements per block, a dtype, a layer's shape
    k, v = np.zeros((4, 2, 2, 16, 4), np.float32), np.zeros((4, 2, 8, 16), np.float32)
    m = np.array([[0, 1]], np.int64)
    with pytest.raises(ValueError, match="value_caches\\[0\\] has shape \\[4, 2, 8, 8\\] \\(4 blocks of 128"):
        pa.copy_blocks([k], [v[:, :, :, :8].copy()], m)
    with pytest.raises(ValueError, match="value_caches\\[0\\] has shape \\[5, 2, 8, 16\\] \\(5 blocks"):
        pa.copy_blocks([k], [np.zeros((5, 2, 8, 16), np.float32)], m)
    with pytest.raises(ValueError, match="value_caches\\[0\\] has dtype float16; expected float32"):
        pa.copy_blocks([k], [v.astype(np.float16)], m)
    with pytest.raises(ValueError, match="value_caches\\[1\\] has shape \\[4, 256\\]; expected \\[4, 2, 8, 16\\] "
                                         "\\(every layer's value caches must have one shape\\)"):
        pa.copy_blocks([k, k.copy()], [v, v.reshape(4, 256).copy()], m)
    with pytest.raises(ValueError, match="key_caches\\[1\\] has shape \\[4, 256\\]; expected \\[4, 2, 2, 16, 4\\]"):
        pa.copy_blocks([k, k.reshape(4, 256).copy()], [v, v.copy()], m)
    assert not k.any() and not v.any()


# ---- prefill: context attention ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout,dtype", [("vllm", np.float32), ("nhd", np.float16), ("vllm", np.float16)])
def test_context_attention_fwd(layout, dtype):
    rng = np.random.default_rng(12)
    H, KVH, D, BS = 4, 2, 32, 8
    ctx_lens, q_lens = [0, 13, 24], [5, 3, 9]
    pg = Paged(rng, ctx_lens, KVH, D, BS, dtype, table_width=5)  # the cache holds only the context
    kc, vc = pg.fill(layout)
    T = sum(q_lens)
    q = rng.standard_normal((T, H, D)).astype(dtype)
    k = rng.standard_normal((T, KVH, D)).astype(dtype)
    v = rng.standard_normal((T, KVH, D)).astype(dtype)
    o = np.full_like(q, np.nan)
    start = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    seq_lens = np.array([c + n for c, n in zip(ctx_lens, q_lens)], np.int32)
    pa.context_attention_fwd(q, k, v, o, "auto", kc, vc, pg.block_tables, start, seq_lens, int(seq_lens.max()),
                             max(q_lens), sm_scale=0.3)
    for s, (c, n) in enumerate(zip(ctx_lens, q_lens)):
        a, b = start[s], start[s + 1]
        K = np.concatenate([pg.K[s], k[a:b]])
        V = np.concatenate([pg.V[s], v[a:b]])
        close(o[a:b], attend(q[a:b], K, V, 0.3, q_pos=[c + i for i in range(n)]), dtype)


# ---- mixed prefill + decode ---------------------------------------------------------------------------------

MIXED_CASES = [  # layout, dtype, heads, kv heads, head size, block size, prefill (context, query) lengths, decode lens
    ("vllm", np.float32, 4, 2, 32, 8, [(0, 5), (13, 3), (24, 9)], [1, 17, 40]),
    ("nhd", np.float16, 8, 2, 64, 16, [(20, 1), (3, 12)], [33]),
    ("hnd", np.float32, 4, 4, 32, 16, [], [5, 16, 2]),  # decodes only
    ("vllm", np.float16, 4, 1, 64, 16, [(7, 6)], []),  # a prefill only
]


@pytest.mark.parametrize("layout,dtype,H,KVH,D,BS,prefills,decodes", MIXED_CASES)
def test_mixed_attention(layout, dtype, H, KVH, D, BS, prefills, decodes):
    rng = np.random.default_rng(16)
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, layout, dtype, H, KVH, D, BS, prefills, decodes,
                                                        key_rows_extra=len(decodes))  # the whole step's K/V
    P = len(prefills)
    out = pa.mixed_attention(q, k, v, kc, vc, pg.block_tables, seq_lens, start, P, int(start[-1]),
                             max([n for _, n in prefills], default=0), max(seq_lens[:P], default=0),
                             max(decodes, default=0), scale=0.3)
    assert out.shape == q.shape and out.dtype == q.dtype
    close(out, mixed_reference(pg, q, k, v, start, prefills, decodes, 0.3), dtype)


def test_mixed_attention_options_strided_query_and_padding():
    """ALiBi, a sliding window and a soft cap on both parts; the query a strided view of
    a fused projection; two padding rows past the decodes, left unread and unwritten."""
    rng = np.random.default_rng(17)
    H, KVH, D, BS = 4, 2, 32, 16
    prefills, decodes = [(30, 4), (0, 7)], [50, 9]
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "vllm", np.float32, H, KVH, D, BS, prefills, decodes)
    NP, rows = int(start[-1]), q.shape[0] + 2
    qkv = rng.standard_normal((rows, 2 * H * D)).astype(np.float32)
    qkv[:q.shape[0], :H * D] = q.reshape(q.shape[0], -1)
    qs = qkv[:, :H * D].reshape(rows, H, D)  # rows 2 * H * D apart
    alibi = rng.uniform(0.05, 0.5, H).astype(np.float32)
    out = np.full(qs.shape, 7.0, np.float32)
    got = pa.mixed_attention(qs, k, v, kc, vc, pg.block_tables, seq_lens, start, len(prefills), NP, 7, 34, 50,
                             num_decode_tokens=len(decodes), scale=0.4, alibi_slopes=alibi, sliding_window=6,
                             logits_soft_cap=0.9, out=out)
    assert got is out
    ref = mixed_reference(pg, q, k, v, start, prefills, decodes, 0.4, alibi=alibi, window=6, soft_cap=0.9)
    close(out[:q.shape[0]], ref, np.float32)
    assert (out[q.shape[0]:] == 7).all()


@pytest.mark.parametrize("per_head", [False, True])
def test_mixed_attention_fp8_cache(per_head):
    """An e4m3 cache written by reshape_and_cache with scales (contexts and decode
    histories; per_head: a k_scale and a v_scale per KV head), read by both parts:
    close to the unquantised attention."""
    rng = np.random.default_rng(18)
    H, KVH, D, BS = 4, 2, 32, 16
    prefills, decodes = [(21, 5)], [18, 40]
    pg, _, _, q, k, v, start, seq_lens = mixed_batch(rng, "vllm", np.float32, H, KVH, D, BS, prefills, decodes)
    kc = np.zeros((pg.num_blocks, KVH, D // 16, BS, 16), np.uint8)
    vc = np.zeros((pg.num_blocks, KVH, D, BS), np.uint8)
    ks, vs = np.array([0.02], np.float32), np.array([0.03], np.float32)
    if per_head:
        ks, vs = np.array([0.02, 0.045], np.float32), np.array([0.03, 0.012], np.float32)
    for s, n in enumerate(pg.seq_lens):
        slots = np.array([pg.slot(s, t) for t in range(n)], np.int64)
        pa.reshape_and_cache(pg.K[s], pg.V[s], kc, vc, slots, "fp8", ks, vs)
    out = pa.mixed_attention(q, k, v, kc, vc, pg.block_tables, seq_lens, start, 1, 5, 5, 26, 40,
                             kv_cache_dtype="fp8", k_scale=ks, v_scale=vs, scale=0.2)
    exact = mixed_reference(pg, q, k, v, start, prefills, decodes, 0.2)
    # What the cache holds, by the e4m3 definition: the nearest finite value to x / scale
    # (saturated at 448), times the scale. The prefills' new keys stay unquantised.
    table = fp8_values("e4m3")
    finite = np.unique(table[np.isfinite(table)])

    def quantised(x, scale):  # x [tokens, kv heads, head]; scale [1] or [kv heads]
        scale = scale.astype(np.float64).reshape(1, -1, 1)
        y = np.clip(x.astype(np.float64) / scale, -448.0, 448.0)
        i = np.clip(np.searchsorted(finite, y), 1, len(finite) - 1)
        lo, hi = finite[i - 1], finite[i]
        return np.where(y - lo <= hi - y, lo, hi) * scale

    pg.K = [quantised(x, ks) for x in pg.K]
    pg.V = [quantised(x, vs) for x in pg.V]
    ref = mixed_reference(pg, q, k, v, start, prefills, decodes, 0.2)
    close(out, ref, np.float32)
    assert np.abs(out - exact).max() > 1e-3  # the cache really was quantised


# ---- prefill: varlen prompt attention ---------------------------------------------------------------------

PROMPT_CASES = [  # attn_type, dtype, heads, kv heads, head size, query lengths, key lengths (None: self)
    ("decoder", np.float32, 4, 2, 32, [5, 1, 0, 17], None),
    ("decoder", np.float16, 8, 2, 64, [4, 6, 3], [9, 6, 1]),  # bottom-right causal; seq 2 has rows before key 0
    ("encoder", np.float16, 4, 4, 32, [7, 2], None),
    ("encoder_only", np.float32, 6, 3, 40, [3, 12], None),
    ("encoder_decoder", np.float32, 4, 1, 32, [3, 7, 2], [10, 4, 0]),  # cross: key lengths of their own
]


def _cu(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


@pytest.mark.parametrize("attn_type,dtype,H,KVH,D,q_lens,k_lens", PROMPT_CASES)
def test_prompt_attention(attn_type, dtype, H, KVH, D, q_lens, k_lens):
    rng = np.random.default_rng(14)
    self_attn = k_lens is None
    k_lens = q_lens if self_attn else k_lens
    q = rng.standard_normal((sum(q_lens), H, D)).astype(dtype)
    k = rng.standard_normal((sum(k_lens), KVH, D)).astype(dtype)
    v = rng.standard_normal((sum(k_lens), KVH, D)).astype(dtype)
    cq, ck = _cu(q_lens), _cu(k_lens)
    kw = {} if self_attn else dict(cu_seqlens_k=ck, max_seqlen_k=max(k_lens))
    out = pa.prompt_attention(q, k, v, cq, max(q_lens), attn_type=attn_type, softmax_scale=0.2, **kw)
    assert out.shape == q.shape and out.dtype == q.dtype
    for s, (n, m) in enumerate(zip(q_lens, k_lens)):
        ref = attend(q[cq[s]:cq[s + 1]], k[ck[s]:ck[s + 1]], v[ck[s]:ck[s + 1]], 0.2,
                     q_pos=[m - n + i for i in range(n)], causal=attn_type == "decoder")
        close(out[cq[s]:cq[s + 1]], ref, dtype)


@pytest.mark.parametrize("attn_type", ["decoder", "encoder"])
def test_prompt_attention_packed_qkv_alibi_window_cap(attn_type):
    """q, k and v as strided views of one [tokens, H + 2 KVH, D] projection; ALiBi, a
    sliding window and a soft cap at once, into a caller's out."""
    rng = np.random.default_rng(15)
    H, KVH, D, lens = 4, 2, 32, [9, 20, 1]
    qkv = rng.standard_normal((sum(lens), H + 2 * KVH, D)).astype(np.float32)
    q, k, v = qkv[:, :H], qkv[:, H:H + KVH], qkv[:, H + KVH:]
    alibi = rng.uniform(0.05, 0.5, H).astype(np.float32)
    out = np.full(q.shape, np.nan, np.float32)
    cq = _cu(lens)
    got = pa.prompt_attention(q, k, v, cq, max(lens), attn_type=attn_type, softmax_scale=0.4, alibi_slopes=alibi,
                              sliding_window=5, logits_soft_cap=0.8, out=out)
    assert got is out
    for s, n in enumerate(lens):
        a, b = cq[s], cq[s + 1]
        ref = attend(q[a:b], k[a:b], v[a:b], 0.4, q_pos=list(range(n)), alibi=alibi, window=5, soft_cap=0.8,
                     causal=attn_type == "decoder")
        close(out[a:b], ref, np.float32)


@pytest.mark.parametrize("attn_type", ["decoder", "encoder"])
def test_prompt_attention_sinks(attn_type):
    rng = np.random.default_rng(22)
    H, KVH, D, lens = 4, 2, 32, [9, 20, 1]
    q = rng.standard_normal((sum(lens), H, D)).astype(np.float32)
    k = rng.standard_normal((sum(lens), KVH, D)).astype(np.float32)
    v = rng.standard_normal((sum(lens), KVH, D)).astype(np.float32)
    sinks = np.array([1.5, -np.inf, 3.0, 0.0], np.float32)
    cq = _cu(lens)
    out = pa.prompt_attention(q, k, v, cq, max(lens), attn_type=attn_type, softmax_scale=0.4, sliding_window=6,
                              sinks=sinks)
    for s, n in enumerate(lens):
        a, b = cq[s], cq[s + 1]
        ref = attend(q[a:b], k[a:b], v[a:b], 0.4, q_pos=list(range(n)), window=6, causal=attn_type == "decoder",
                     sinks=sinks)
        close(out[a:b], ref, np.float32)


def test_context_and_mixed_attention_sinks():
    """Both parts of a chunked-prefill step, and context_attention_fwd over its prefills."""
    rng = np.random.default_rng(23)
    H, KVH, D, BS = 4, 2, 32, 16
    prefills, decodes = [(30, 4), (0, 7)], [50, 9]
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "nhd", np.float32, H, KVH, D, BS, prefills, decodes)
    sinks = np.array([2.5, 0.0, -np.inf, 5.0], np.float32)
    NP = int(start[-1])
    out = pa.mixed_attention(q, k, v, kc, vc, pg.block_tables, seq_lens, start, len(prefills), NP, 7, 34, 50,
                             scale=0.4, sinks=sinks)
    ref = mixed_reference(pg, q, k, v, start, prefills, decodes, 0.4, sinks=sinks)
    close(out, ref, np.float32)
    o = np.full((NP, H, D), np.nan, np.float32)
    pa.context_attention_fwd(q[:NP], k, v, o, "auto", kc, vc, pg.block_tables[:2], start, seq_lens[:2], 34, 7,
                             sm_scale=0.4, sinks=sinks)
    close(o, ref[:NP], np.float32)


# ---- ragged --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_ragged_paged_attention(dtype):
    rng = np.random.default_rng(13)
    H, KVH, D, PS = 4, 2, 32, 8
    kv_lens, q_lens = [9, 1, 30, 17], [9, 1, 4, 1]  # a prompt, decodes, a chunked prefill
    max_seqs, max_tokens = 6, 20
    pg = Paged(rng, kv_lens, KVH, D, PS, dtype, table_width=5)
    kv, _ = pg.fill("combined")
    q = rng.standard_normal((max_tokens, H, D)).astype(dtype)
    cu = np.zeros(max_seqs + 1, np.int32)
    cu[1:len(q_lens) + 1] = np.cumsum(q_lens)
    cu[len(q_lens) + 1:] = cu[len(q_lens)]
    lens = np.zeros(max_seqs, np.int32)
    lens[:len(kv_lens)] = kv_lens
    pages = np.zeros((max_seqs, 5), np.int32)
    pages[:len(kv_lens)] = pg.block_tables
    out = pa.ragged_paged_attention(q, kv, lens, pages, cu, np.array([len(kv_lens)], np.int32), sm_scale=0.25)
    assert out.shape == q.shape and out.dtype == q.dtype
    for s, (n, m) in enumerate(zip(kv_lens, q_lens)):
        a, b = cu[s], cu[s + 1]
        ref = attend(q[a:b], pg.K[s], pg.V[s], 0.25, q_pos=[n - m + i for i in range(m)])
        close(out[a:b], ref, dtype)
    assert not out[cu[len(q_lens)]:].any()  # rows past the live sequences untouched (zeros)


def test_ragged_attention_sinks():
    """gpt-oss's sinks on the ragged op (tpu-inference's attention_sink): one logit more per
    head, after the soft cap, of no value (-inf: none)."""
    rng = np.random.default_rng(15)
    H, KVH, D, PS = 4, 2, 16, 4
    kv_lens, q_lens = [12, 7, 20], [3, 7, 1]
    pg = Paged(rng, kv_lens, KVH, D, PS, np.float32)
    kv, _ = pg.fill("combined")
    q = rng.standard_normal((11, H, D)).astype(np.float32)
    cu = np.array([0, 3, 10, 11], np.int32)
    sinks = np.array([1.5, -np.inf, 4.0, -0.5], np.float32)
    out = pa.ragged_paged_attention(q, kv, np.array(kv_lens, np.int32), pg.block_tables, cu, np.array([3], np.int32),
                                    sm_scale=0.5, sliding_window=5, soft_cap=2.0, sinks=sinks)
    for s, (n, m) in enumerate(zip(kv_lens, q_lens)):
        ref = attend(q[cu[s]:cu[s + 1]], pg.K[s], pg.V[s], 0.5, q_pos=[n - m + i for i in range(m)], window=5,
                     soft_cap=2.0, sinks=sinks)
        close(out[cu[s]:cu[s + 1]], ref, np.float32)
    with pytest.raises(ValueError, match="sinks"):
        pa.ragged_paged_attention(q, kv, np.array(kv_lens, np.int32), pg.block_tables, cu, np.array([3], np.int32),
                                  sinks=sinks[:2])


def test_ragged_sliding_window_and_soft_cap():
    rng = np.random.default_rng(14)
    H, KVH, D, PS = 2, 1, 16, 4
    kv_lens, q_lens = [12, 7], [3, 7]
    pg = Paged(rng, kv_lens, KVH, D, PS, np.float32)
    kv, _ = pg.fill("combined")
    q = rng.standard_normal((10, H, D)).astype(np.float32)
    cu = np.array([0, 3, 10], np.int32)
    out = pa.ragged_paged_attention(q, kv, np.array(kv_lens, np.int32), pg.block_tables, cu, np.array([2], np.int32),
                                    sm_scale=0.5, sliding_window=4, soft_cap=3.0)
    for s, (n, m) in enumerate(zip(kv_lens, q_lens)):
        ref = attend(q[cu[s]:cu[s + 1]], pg.K[s], pg.V[s], 0.5, q_pos=[n - m + i for i in range(m)], window=4,
                     soft_cap=3.0)
        close(out[cu[s]:cu[s + 1]], ref, np.float32)


# ---- empty batches ---------------------------------------------------------------------------------------


def test_empty_batches_are_no_ops():
    """0 sequences, tokens or pairs: NumPy 2 gives such arrays all-zero strides, which are
    contiguous (there is nothing to lay out); every op runs as the no-op the library makes it."""
    H, KVH, D, BS = 4, 2, 32, 16

    def z(*shape, dtype=np.float32):
        return np.zeros(shape, dtype)

    kc = np.full((3, BS, KVH, D), 7, np.float32)
    vc = kc.copy()
    bt, sl = z(0, 1, dtype=np.int32), z(0, dtype=np.int32)
    pa.paged_attention_v1(z(0, H, D), z(0, H, D), kc, vc, KVH, 0.1, bt, sl, BS, 16)
    pa.paged_attention_v2(z(0, H, D), None, None, None, z(0, H, D), kc, vc, KVH, 0.1, bt, sl, BS, 16)
    pa.paged_attention_decode(z(0, H, D), z(0, H, D), kc, vc, KVH, 0.1, bt, sl, BS, 16)
    pa.reshape_and_cache_flash(z(0, KVH, D), z(0, KVH, D), kc, vc, z(0, dtype=np.int64))
    assert (kc == 7).all() and (vc == 7).all()
    x = 16 // 4
    vk, vv = np.full((2, KVH, D // x, BS, x), 7, np.float32), np.full((2, KVH, D, BS), 7, np.float32)
    pa.reshape_and_cache(z(0, KVH, D), z(0, KVH, D), vk, vv, z(0, dtype=np.int64))
    assert (vk == 7).all() and (vv == 7).all()
    cache = np.full((2 * BS, 2 * KVH, D), 7, np.float32)
    pa.kv_cache_update(z(0, 2 * KVH, D), z(3, 8, dtype=np.int32), cache, np.array([0], np.int32), page_size=BS)
    assert (cache == 7).all()
    out = pa.prompt_attention(z(0, H, D), z(0, KVH, D), z(0, KVH, D), z(1, dtype=np.int32), 0)
    assert out.shape == (0, H, D)
    pa.context_attention_fwd(z(0, H, D), z(0, KVH, D), z(0, KVH, D), z(0, H, D), "auto", kc, vc, bt,
                             z(1, dtype=np.int32), sl, 16, 0)
    pa.mixed_attention(z(0, H, D), z(0, KVH, D), z(0, KVH, D), kc, vc, bt, sl, z(1, dtype=np.int32), 0, 0, 0, 0, 0,
                       out=z(0, H, D))
    assert (kc == 7).all() and (vc == 7).all()
    src, dst = np.arange(12, dtype=np.float32).reshape(3, 4), np.full((3, 4), 7, np.float32)
    pa.swap_blocks(src, dst, z(0, 2, dtype=np.int64))
    assert (dst == 7).all()
    before = src.copy()
    pa.copy_blocks([src], [dst], z(0, 2, dtype=np.int64))
    np.testing.assert_array_equal(src, before)
    assert (dst == 7).all()
    pa.convert_fp8(z(0, dtype=np.uint8), z(0))


def test_ragged_empty_batch_is_validated():
    """An empty ragged batch (no token rows, or no sequences) goes through the library's checks, then is
    the documented no-op: out (zeroed when the op makes it) and the lse (-inf) are returned, a caller's
    out and lse are left as they were."""
    H, KVH, D, PS = 4, 2, 32, 8
    kv = np.full((4, PS, 2 * KVH, D), 7, np.float32)
    for T, S in ((8, 0), (0, 2), (0, 0)):
        args = (np.zeros(S, np.int32), np.zeros((S, 2), np.int32), np.zeros(S + 1, np.int32), np.zeros(1, np.int32))
        q = np.ones((T, H, D), np.float32)
        with pytest.raises(ValueError, match="sliding_window must be >= 0 \\(0 = none\\), got -3"):
            pa.ragged_paged_attention(q, kv, *args, sliding_window=-3)
        with pytest.raises(ValueError, match="soft_cap must be 0 \\(none\\) or in \\[FLT_MIN, 2\\^126\\], got -1"):
            pa.ragged_paged_attention(q, kv, *args, soft_cap=-1.0)
        # a subnormal cap: 1e-40 is 9.99995e-41 as a float
        with pytest.raises(ValueError, match="soft_cap must be 0 \\(none\\) or in \\[FLT_MIN, 2\\^126\\], got 9.99995e-41"):
            pa.ragged_paged_attention(q, kv, *args, soft_cap=1e-40)
        with pytest.raises(ValueError, match="num_q_heads 3 is not a multiple of kv.num_kv_heads 2"):
            pa.ragged_paged_attention(np.ones((T, 3, D), np.float32), kv, *args)
        with pytest.raises(NotImplementedError, match="head_size 12 unsupported"):
            pa.ragged_paged_attention(np.ones((T, H, 12), np.float32), np.zeros((4, PS, 2 * KVH, 12), np.float32),
                                      *args)
        out = pa.ragged_paged_attention(q, kv, *args, sliding_window=4, soft_cap=2.0)
        np.testing.assert_array_equal(out, np.zeros((T, H, D), np.float32))
        out, lse = pa.ragged_paged_attention(q, kv, *args, return_lse=True)
        np.testing.assert_array_equal(out, np.zeros((T, H, D), np.float32))
        np.testing.assert_array_equal(lse, np.full((H, T), -np.inf, np.float32))
        mine, mine_lse = np.full((T, H, D), 5, np.float32), np.full((H, T), 5, np.float32)
        got = pa.ragged_paged_attention(q, kv, *args, out=mine, lse=mine_lse)
        assert got[0] is mine and got[1] is mine_lse
        assert (mine == 5).all() and (mine_lse == 5).all()
    assert (kv == 7).all()


# ---- gaps a mutation pass of python/pagedattn found (python/tests/mutants.py) ----------------------


@pytest.mark.parametrize("entry", ["v1", "v2", "decode"])
def test_decode_logits_soft_cap(entry):
    """logits_soft_cap c: each scaled logit x becomes c * tanh(x / c) before the softmax."""
    rng = np.random.default_rng(55)
    H, KVH, D, BS, lens = 4, 2, 32, 16, [3, 40, 700]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    kc, vc = pg.fill("vllm")
    q = rng.standard_normal((len(lens), H, D)).astype(np.float32)
    out = np.full_like(q, np.nan)
    args = (q, kc, vc, KVH, 0.3, pg.block_tables, np.array(lens, np.int32), BS, max(lens))
    run_decode(entry, out, args, logits_soft_cap=0.7)
    for s in range(len(lens)):
        ref = attend(q[s:s + 1], pg.K[s], pg.V[s], 0.3, soft_cap=0.7)[0]
        close(out[s], ref, np.float32)
        assert np.abs(ref - attend(q[s:s + 1], pg.K[s], pg.V[s], 0.3)[0]).max() > 1e-2  # the cap matters here


def test_prefill_default_scale_is_one_over_sqrt_head_size():
    """Without a scale, prompt_attention, context_attention_fwd and mixed_attention use
    1 / sqrt(head_size) (here 1 / sqrt(32), with 4 heads: neither 1/4 nor 1/32 nor 1/2)."""
    rng = np.random.default_rng(56)
    H, KVH, D, BS = 4, 2, 32, 8
    prefills, decodes = [(5, 3), (0, 4)], [9]
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "vllm", np.float32, H, KVH, D, BS, prefills, decodes)
    scale = 1 / math.sqrt(D)
    ref = mixed_reference(pg, q, k, v, start, prefills, decodes, scale)
    NP = int(start[-1])
    out = pa.mixed_attention(q, k, v, kc, vc, pg.block_tables, seq_lens, start, 2, NP, 4, 8, 9)
    close(out, ref, np.float32)
    o = np.full((NP, H, D), np.nan, np.float32)
    pa.context_attention_fwd(q[:NP], k, v, o, "auto", kc, vc, pg.block_tables[:2], start, seq_lens[:2], 8, 4)
    close(o, ref[:NP], np.float32)
    cu = np.array([0, 3, 7], np.int32)
    got = pa.prompt_attention(q[:NP], k, v, cu, 4)
    for s in range(2):
        a, b = cu[s], cu[s + 1]
        close(got[a:b], attend(q[a:b], k[a:b], v[a:b], scale, q_pos=list(range(b - a))), np.float32)


def test_key_and_value_rows_at_different_strides():
    """key and value are separate views: each op passes each one's own row stride (here key
    contiguous, value every third row of a wider buffer)."""
    rng = np.random.default_rng(57)
    H, KVH, D, BS, T = 4, 2, 32, 8, 7
    key = rng.standard_normal((T, KVH, D)).astype(np.float32)
    vbuf = rng.standard_normal((3 * T, KVH, D)).astype(np.float32)
    value = vbuf[::3]
    slots = np.array([3, 17, 0, -1, 9, 22, 30], np.int64)

    # cache writes, against the layouts' definitions
    x = x_of(np.float32)
    kc, vc = np.zeros((4, KVH, D // x, BS, x), np.float32), np.zeros((4, KVH, D, BS), np.float32)
    pa.reshape_and_cache(key, value, kc, vc, slots)
    fk, fv = np.zeros((4, BS, KVH, D), np.float32), np.zeros((4, BS, KVH, D), np.float32)
    pa.reshape_and_cache_flash(key, value, fk, fv, slots)
    for t, sl in enumerate(slots):
        if sl < 0:
            continue
        b, off = divmod(int(sl), BS)
        np.testing.assert_array_equal(vc[b, :, :, off], value[t])
        np.testing.assert_array_equal(kc[b, :, :, off, :].reshape(KVH, D), key[t])
        np.testing.assert_array_equal(fv[b, off], value[t])
        np.testing.assert_array_equal(fk[b, off], key[t])

    # prompt attention (self, causal)
    q = rng.standard_normal((T, H, D)).astype(np.float32)
    cu = np.array([0, 3, T], np.int32)
    got = pa.prompt_attention(q, key, value, cu, 4, softmax_scale=0.3)
    for s in range(2):
        a, b = cu[s], cu[s + 1]
        close(got[a:b], attend(q[a:b], key[a:b], value[a:b], 0.3, q_pos=list(range(b - a))), np.float32)

    # context attention and mixed attention: the new keys and values of two prefills
    prefills, decodes = [(5, 3), (9, 4)], [6]
    pg, kc2, vc2, q2, k2, v2, start, seq_lens = mixed_batch(rng, "nhd", np.float32, H, KVH, D, BS, prefills, decodes)
    NP = int(start[-1])
    vb = np.zeros((2 * NP, KVH, D), np.float32)
    vb[::2] = v2
    ref = mixed_reference(pg, q2, k2, v2, start, prefills, decodes, 0.3)
    o = np.full((NP, H, D), np.nan, np.float32)
    pa.context_attention_fwd(q2[:NP], k2, vb[::2], o, "auto", kc2, vc2, pg.block_tables[:2], start, seq_lens[:2], 13,
                             4, sm_scale=0.3)
    close(o, ref[:NP], np.float32)
    out = pa.mixed_attention(q2, k2, vb[::2], kc2, vc2, pg.block_tables, seq_lens, start, 2, NP, 4, 13, 6, scale=0.3)
    close(out, ref, np.float32)


def test_workspace_size_dtype_spelled_like_torch():
    """A dtype whose text is 'torch.float16' (what str(torch.float16) gives; torch dtypes have
    no .name) sizes for 2-byte partial rows, as 'float16' does."""
    class TorchLikeDtype:
        def __init__(self, text):
            self.text = text

        def __str__(self):
            return self.text

    def r256(x):
        return -(-x // 256) * 256

    rows = 2 * 8 * 8  # 2 sequences, 8 heads, 8 splits of 256 tokens for 2000
    for text, esz in (("torch.float16", 2), ("torch.bfloat16", 2), ("torch.float32", 4)):
        assert pa.paged_attention_workspace_size(2, 8, 2, 64, 2000, dtype=TorchLikeDtype(text)) == \
            r256(rows * 64 * esz) + 2 * r256(rows * 4), text
    with pytest.raises(ValueError, match="query dtype"):
        pa.paged_attention_workspace_size(2, 8, 2, 64, 2000, dtype=TorchLikeDtype("torch.int8"))


def one_row(a, how):
    """a [1, ...] with its size-1 leading dimension at another stride: 'permuted' (torch's
    x[h, 1, d].permute(1, 0, 2): stride = one head's elements, less than a row), 'reversed'
    (a[::-1]: negative) or 'far' (an unrelated large stride)."""
    from numpy.lib.stride_tricks import as_strided
    assert a.shape[0] == 1
    if how == "permuted":
        t = np.empty((a.shape[1], 1) + a.shape[2:], a.dtype)  # [h, 1, d] memory
        t[:, 0] = a[0]
        return t.swapaxes(0, 1)
    if how == "reversed":
        return a[::-1]
    return as_strided(a, shape=a.shape, strides=(10 ** 6,) + a.strides[1:])


@pytest.mark.parametrize("how", ["permuted", "reversed", "far"])
def test_one_row_tensors_take_any_row_stride(how):
    """A dimension of one element has no stride that matters: a one-token query, key, value or
    new_kv whose row stride is smaller than a row, negative or unrelated gives what the layout
    and attention definitions say (torch's .contiguous() keeps such strides, so a caller
    cannot always avoid them)."""
    rng = np.random.default_rng(58)
    H, KVH, D, BS = 4, 2, 32, 16
    assert one_row(np.zeros((1, H, D), np.float32), how).strides[0] != H * D * 4  # really another stride

    # decode of one sequence
    pg = Paged(rng, [20], KVH, D, BS, np.float32)
    kc, vc = pg.fill("nhd")
    q = rng.standard_normal((1, H, D)).astype(np.float32)
    ref = attend(q, pg.K[0], pg.V[0], 0.3)
    for entry in (pa.paged_attention_v1, pa.paged_attention_decode):
        out = np.full_like(q, np.nan)
        entry(out, one_row(q, how), kc, vc, KVH, 0.3, pg.block_tables, np.array([20], np.int32), BS, 20)
        close(out, ref, np.float32)

    # prompt attention and context attention of one token
    k1 = rng.standard_normal((1, KVH, D)).astype(np.float32)
    v1 = rng.standard_normal((1, KVH, D)).astype(np.float32)
    got = pa.prompt_attention(one_row(q, how), one_row(k1, how), one_row(v1, how), np.array([0, 1], np.int32), 1,
                              softmax_scale=0.3)
    close(got, attend(q, k1, v1, 0.3), np.float32)
    o = np.full_like(q, np.nan)
    pa.context_attention_fwd(one_row(q, how), one_row(k1, how), one_row(v1, how), o, "auto", kc, vc, pg.block_tables,
                             np.array([0, 1], np.int32), np.array([21], np.int32), 21, 1, sm_scale=0.3)
    close(o, attend(q, np.concatenate([pg.K[0], k1]), np.concatenate([pg.V[0], v1]), 0.3, q_pos=[20]), np.float32)

    # cache writes of one token: vLLM, flash and by slices
    x = x_of(np.float32)
    vk, vv = np.zeros((2, KVH, D // x, BS, x), np.float32), np.zeros((2, KVH, D, BS), np.float32)
    pa.reshape_and_cache(one_row(k1, how), one_row(v1, how), vk, vv, np.array([19], np.int64))
    np.testing.assert_array_equal(vk[1, :, :, 3, :].reshape(KVH, D), k1[0])
    np.testing.assert_array_equal(vv[1, :, :, 3], v1[0])
    fk, fv = np.zeros((2, BS, KVH, D), np.float32), np.zeros((2, BS, KVH, D), np.float32)
    pa.reshape_and_cache_flash(one_row(k1, how), one_row(v1, how), fk, fv, np.array([19], np.int64))
    np.testing.assert_array_equal(fk[1, 3], k1[0])
    np.testing.assert_array_equal(fv[1, 3], v1[0])
    nk = rng.standard_normal((1, 2 * KVH, D)).astype(np.float32)
    cache = np.zeros((4 * 8, 2 * KVH, D), np.float32)
    slices = np.zeros((3, 8), np.int32)
    slices[:, 0] = (13, 0, 1)
    pa.kv_cache_update(one_row(nk, how), slices, cache, np.array([1], np.int32), page_size=8)
    want = np.zeros_like(cache)
    want[13] = nk[0]
    np.testing.assert_array_equal(cache, want)
