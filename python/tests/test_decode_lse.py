"""The log-sum-exp output of the decode ops (paged_attention_v1, paged_attention_v2,
paged_attention_decode: return_lse= / lse=) on NumPy arrays (the CPU reference) against attention
computed here in float64 (test_lse.attend_lse): each sequence's query row at position seq_len - 1,
per head the natural log of its softmax denominator, log(e^sinks[h] + sum_j e^x_j) over the keys it
attends (include/pagedattn/decode.h), -inf for a head with neither key nor sink, sinks[h] for one
with a sink but no key (block-sparse); the output the same with or without it; cascade attention (a
decode over each sequence's first blocks and one over the rest, merged by merge_attn_states) against
one decode over all of them; the refusals; and the CUDA path's wiring (a stand-in library, as
test_cuda_path.py). tests/test_gpu.py runs it on a GPU."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import pagedattn as pa
from refattn import Paged, fp8_values
from test_cuda_path import STREAM, FakeLib
from test_errors import FakeCuda, decode_problem
from test_lse import LOOSE, TOL, _misaligned_lse, _round, attend_lse
from test_merge import Rows

ENTRIES = ["v1", "v2", "decode"]
# per head (the first H of them): -inf is no sink, 30 outweighs every key of these problems
SINKS = [1.5, -np.inf, 30.0, 0.0, -0.5, 2.0, 3.0, -3.0]


def decode(entry, out, args, **kw):
    """One decode entry over args (query .. max_seq_len, then alibi_slopes, kv_cache_dtype, k_scale,
    v_scale if given) and what it returns; v2 without vLLM's scratch tensors (None)."""
    if entry == "v1":
        return pa.paged_attention_v1(out, *args, **kw)
    if entry == "v2":
        return pa.paged_attention_v2(out, None, None, None, *args, **kw)
    return pa.paged_attention_decode(out, *args, **kw)


def decode_reference(q, K, V, scale, kept=None, **kw):
    """(out [H, d], lse [H]) of one sequence's query row q [H, d] at position L - 1 over its keys
    K, V [L, KVH, d] (key j at position j), in float64 by attend_lse (kw: alibi, window, soft_cap,
    sinks). kept(h): the positions head h attends (block-sparse), all of them when None; only
    position-free options (soft_cap, sinks) go with it."""
    L = K.shape[0]
    if kept is None:
        out, lse = attend_lse(q[None], K, V, scale, [L - 1], **kw)
        return out[0], lse[:, 0]
    assert kw.get("alibi") is None and not kw.get("window")
    H, kvh = q.shape[0], K.shape[1]
    out, lse = np.zeros(q.shape), np.zeros(H)
    sinks = kw.pop("sinks", None)
    for h in range(H):
        j, g = kept(h), h // (H // kvh)
        o, s = attend_lse(q[None, h:h + 1], K[j][:, g:g + 1], V[j][:, g:g + 1], scale, [L - 1],
                          sinks=None if sinks is None else sinks[h:h + 1], **kw)
        out[h], lse[h] = o[0, 0], s[0, 0]
    return out, lse


def _paged(rng, layout, dtype, lens, KVH, D, BS, **kw):
    """(Paged histories holding values of the dtype, key_cache, value_cache as the ops take them);
    bfloat16 (NumPy has none) as DLPack producers of the flash NHD layout."""
    pg = Paged(rng, lens, KVH, D, BS, "float16" if dtype == "float16" else "float32", **kw)
    if dtype != "bfloat16":
        return (pg, *pg.fill(layout))
    assert layout == "nhd"
    pg.K = [_round(k, dtype) for k in pg.K]
    pg.V = [_round(v, dtype) for v in pg.V]
    kc, vc = pg.fill(layout)
    return pg, Rows(kc, dtype).tensor, Rows(vc, dtype).tensor


def _options(rng, H, opts):
    """The op's keyword arguments (alibi_slopes positional: the tenth of args) and the reference's."""
    op, ref, alibi = {}, {}, None
    if opts.get("alibi"):
        alibi = ref["alibi"] = rng.uniform(0.05, 0.5, H).astype(np.float32)
    if opts.get("sinks"):
        op["sinks"] = ref["sinks"] = np.array(SINKS[:H], np.float32)
    if opts.get("window"):
        op["sliding_window"] = ref["window"] = opts["window"]
    if opts.get("soft_cap"):
        op["logits_soft_cap"] = ref["soft_cap"] = opts["soft_cap"]
    return op, ref, alibi


# ---- against the definition -----------------------------------------------------------------------------------

CASES = [  # id, layout, dtype, heads, kv heads, head size, block size, seq lens, options
    ("gqa", "vllm", "float32", 4, 2, 32, 16, [1, 17, 40], {}),
    ("sinks-alibi-cap-window", "nhd", "float16", 8, 2, 32, 8, [5, 33, 70],
     dict(sinks=True, alibi=True, soft_cap=1.2, window=11)),
    ("mha-window", "hnd", "float32", 6, 6, 16, 32, [64, 3, 31], dict(window=5)),
    ("bf16-sinks-alibi", "nhd", "bfloat16", 4, 1, 32, 16, [9, 48], dict(sinks=True, alibi=True)),
    ("long-sinks-cap", "nhd", "float16", 4, 2, 64, 16, [600, 1100, 513], dict(sinks=True, soft_cap=2.0)),
]


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("layout,dtype,H,KVH,D,BS,lens,opts", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_decode_lse_matches_the_definition(entry, layout, dtype, H, KVH, D, BS, lens, opts):
    """float32 / float16 ask with return_lse=True (a new NumPy lse comes back); bfloat16 (a DLPack
    producer the package cannot allocate for) gives its own lse, returned as given."""
    rng = np.random.default_rng(101)
    pg, kc, vc = _paged(rng, layout, dtype, lens, KVH, D, BS)
    S = len(lens)
    q = Rows(1.5 * rng.standard_normal((S, H, D)).astype(np.float32), dtype)
    out = Rows(np.full((S, H, D), 7.0), dtype)
    kw, ref_kw, alibi = _options(rng, H, opts)
    args = (q.tensor, kc, vc, KVH, 0.3, pg.block_tables, np.array(lens, np.int32), BS, max(lens), alibi)
    if dtype == "bfloat16":
        lse = np.full((H, S), 7, np.float32)
        assert decode(entry, out.tensor, args, lse=lse, **kw) is lse
    else:
        lse = decode(entry, out.tensor, args, return_lse=True, **kw)
        assert isinstance(lse, np.ndarray) and lse.dtype == np.float32 and lse.shape == (H, S)
        assert lse.flags.c_contiguous
    qv = q.values()
    for s in range(S):
        ref_out, ref_lse = decode_reference(qv[s], pg.K[s], pg.V[s], 0.3, **ref_kw)
        np.testing.assert_allclose(lse[:, s], ref_lse, rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(out.values()[s], ref_out, rtol=TOL[dtype], atol=TOL[dtype])
    assert np.isfinite(lse).all()
    if opts.get("sinks") and H > 2:  # the large sink (30) is the head's lse, near enough
        assert (np.abs(lse[2] - 30) < 1e-3).all()


def _fp8_codes(rng, fmt, shape, bound=4.0):
    """Random bytes of the fp8 format whose values (by its definition) are finite and within +-bound."""
    val = fp8_values(fmt)
    ok = np.flatnonzero(np.isfinite(val) & (np.abs(val) <= bound))
    return ok[rng.integers(0, ok.size, shape)].astype(np.uint8)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("layout,fmt,kv_dtype,per_head", [("vllm", "e4m3", "fp8", False),
                                                           ("nhd", "e5m2", "fp8_e5m2", True)])
def test_decode_lse_over_an_fp8_cache(entry, layout, fmt, kv_dtype, per_head):
    """An fp8 cache of random bytes: the reference reads each byte by the format's definition
    (refattn.fp8_values) times its scale (one, or one per KV head), then attends in float64."""
    rng = np.random.default_rng(102)
    H, KVH, D, BS, lens = 6, 3, 32, 16, [7, 40, 23]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    pg.dtype = np.dtype(np.uint8)  # fp8 storage: the vLLM layout packs x = 16 bytes
    pg.K = [_fp8_codes(rng, fmt, k.shape) for k in pg.K]
    pg.V = [_fp8_codes(rng, fmt, v.shape) for v in pg.V]
    kc, vc = pg.fill(layout, filler=0)
    ks = np.array([0.05, 0.11, 0.02] if per_head else [0.07], np.float32)
    vs = np.array([0.3, 0.06, 0.9] if per_head else [0.4], np.float32)
    S = len(lens)
    q = rng.standard_normal((S, H, D)).astype(np.float32)
    out = np.full_like(q, 7)
    sinks = np.array(SINKS[:H], np.float32)
    args = (q, kc, vc, KVH, 0.25, pg.block_tables, np.array(lens, np.int32), BS, max(lens), None, kv_dtype, ks, vs)
    lse = decode(entry, out, args, sinks=sinks, return_lse=True)
    val = fp8_values(fmt)
    for s in range(S):
        K = val[pg.K[s].astype(np.int64)] * ks.astype(np.float64)[None, :, None]
        V = val[pg.V[s].astype(np.int64)] * vs.astype(np.float64)[None, :, None]
        ref_out, ref_lse = decode_reference(q[s], K, V, 0.25, sinks=sinks)
        np.testing.assert_allclose(lse[:, s], ref_lse, rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(out[s], ref_out, rtol=1e-5, atol=1e-5)


# ---- block-sparse: heads that attend no key --------------------------------------------------------------------


def blocksparse_kept(L, h, kvh, H, KVH, local, vert, bs_block, step, tp_rank=0):
    """The positions of a seq_len-L sequence head h (KV head kvh) attends under vLLM's block-sparse
    rule: key block k (bs_block tokens) is local when k > (L - 1) // bs_block - local, remote when
    (k + offset) % vert == 0, offset = (tp_rank * H + h) * step + 1 (step >= 0: per query head) or
    (tp_rank * KVH + kvh) * -step + 1 (per KV head)."""
    offset = (tp_rank * H + h) * step + 1 if step >= 0 else (tp_rank * KVH + kvh) * -step + 1
    j = np.arange(L)
    kb = j // bs_block
    return j[((kb + offset) % vert == 0) | (kb > (L - 1) // bs_block - local)]


@pytest.mark.parametrize("entry", ["v1", "v2"])  # paged_attention_decode takes no block-sparse arguments
@pytest.mark.parametrize("with_sinks", [False, True])
@pytest.mark.parametrize("local,vert,step", [(0, 2, 1), (1, 3, -1), (0, 3, 2)])
def test_blocksparse_heads_without_a_key(entry, with_sinks, local, vert, step):
    """With no local block a head whose offset misses every remote block of a short sequence attends
    no key: its output is zeros and its lse -inf, or its sink (-inf for a head whose sink is -inf)."""
    rng = np.random.default_rng(103)
    H, KVH, D, BS, BSB, lens = 4, 2, 16, 16, 32, [10, 40, 70, 100]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    kc, vc = pg.fill("nhd")
    S = len(lens)
    q = rng.standard_normal((S, H, D)).astype(np.float32)
    out = np.full_like(q, 7)
    sinks = np.array([-np.inf, 1.5, 30.0, -0.5], np.float32) if with_sinks else None
    lse = np.full((H, S), 7, np.float32)
    args = (q, kc, vc, KVH, 0.3, pg.block_tables, np.array(lens, np.int32), BS, max(lens))
    assert decode(entry, out, args, blocksparse_local_blocks=local, blocksparse_vert_stride=vert,
                  blocksparse_block_size=BSB, blocksparse_head_sliding_step=step, logits_soft_cap=1.5, sinks=sinks,
                  lse=lse) is lse
    no_key = dropped = 0
    for s, L in enumerate(lens):
        def kept(h):
            return blocksparse_kept(L, h, h // (H // KVH), H, KVH, local, vert, BSB, step)
        ref_out, ref_lse = decode_reference(q[s], pg.K[s], pg.V[s], 0.3, kept, soft_cap=1.5, sinks=sinks)
        np.testing.assert_allclose(lse[:, s], ref_lse, rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(out[s], ref_out, rtol=1e-5, atol=1e-5)
        for h in range(H):
            if kept(h).size == 0:
                no_key += 1
                assert lse[h, s] == (-np.inf if sinks is None else sinks[h]) and (out[s, h] == 0).all()
            dropped += L - kept(h).size
    assert dropped > 0 and (no_key > 0) == (local == 0)


# ---- what comes back, and the output without it ----------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
def test_lse_is_returned_and_the_output_is_the_same_without_it(entry):
    """None without return_lse / lse; return_lse=True makes a new float32 [num_heads, num_seqs] NumPy
    lse; a caller's lse is written in place and returned as given (with return_lse too); the output
    is bitwise the same in all four calls."""
    rng = np.random.default_rng(104)
    H, KVH, D, BS, lens = 8, 2, 32, 16, [3, 40, 700]
    pg = Paged(rng, lens, KVH, D, BS, np.float16)
    kc, vc = pg.fill("vllm")
    S = len(lens)
    q = rng.standard_normal((S, H, D)).astype(np.float16)
    alibi = rng.uniform(0.05, 0.5, H).astype(np.float32)
    args = (q, kc, vc, KVH, 0.3, pg.block_tables, np.array(lens, np.int32), BS, max(lens), alibi)
    kw = dict(sinks=np.array(SINKS, np.float32), sliding_window=100, logits_soft_cap=1.1)
    outs = [np.full_like(q, np.nan) for _ in range(5)]
    assert decode(entry, outs[0], args, **kw) is None
    assert decode(entry, outs[1], args, return_lse=False, **kw) is None
    new = decode(entry, outs[2], args, return_lse=True, **kw)
    assert isinstance(new, np.ndarray) and new.dtype == np.float32 and new.shape == (H, S) and new.flags.c_contiguous
    mine, mine2 = np.full((H, S), 7, np.float32), np.full((H, S), 7, np.float32)
    assert decode(entry, outs[3], args, lse=mine, **kw) is mine
    assert decode(entry, outs[4], args, lse=mine2, return_lse=True, **kw) is mine2
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
    assert np.isfinite(outs[0]).all()
    np.testing.assert_array_equal(mine, new)
    np.testing.assert_array_equal(mine2, new)
    for s in range(S):
        _, ref_lse = decode_reference(q[s], pg.K[s], pg.V[s], 0.3, alibi=alibi, window=100, soft_cap=1.1,
                                      sinks=kw["sinks"])
        np.testing.assert_allclose(new[:, s], ref_lse, rtol=1e-6, atol=2e-6)


def test_empty_batch_gives_an_empty_lse():
    H, KVH, D, BS = 3, 1, 16, 16
    kc = np.full((2, BS, KVH, D), 7, np.float32)
    z = np.zeros((0, H, D), np.float32)
    args = (z, kc, kc, KVH, 0.1, np.zeros((0, 1), np.int32), np.zeros(0, np.int32), BS, 16)
    for entry in ENTRIES:
        lse = decode(entry, np.zeros((0, H, D), np.float32), args, return_lse=True)
        assert lse.shape == (H, 0) and lse.dtype == np.float32
        mine = np.zeros((H, 0), np.float32)
        assert decode(entry, np.zeros((0, H, D), np.float32), args, lse=mine) is mine


# ---- cascade: each sequence's first blocks and the rest, merged --------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("opts", [{}, dict(sinks=True), dict(sinks=True, soft_cap=0.9)],
                         ids=["plain", "sinks", "sinks-cap"])
def test_cascade_merges_into_one_decode_over_all_keys(entry, dtype, opts):
    """Decode over the first cut[s] keys of each sequence (seq_lens = cut, a multiple of the block
    size; the sinks here) and over the rest (each block table row shifted left by cut[s] / block_size,
    seq_lens - cut), merged by merge_attn_states: the output and lse of one decode over all keys, and
    of the float64 definition. (ALiBi and a sliding window count from the sequence's last position,
    so a part does not see them as the whole does: left out.)"""
    rng = np.random.default_rng(105)
    H, KVH, D, BS = 4, 2, 32, 16
    lens, cuts = [40, 33, 600, 17, 520], [32, 16, 512, 16, 16]
    pg, kc, vc = _paged(rng, "nhd", dtype, lens, KVH, D, BS)
    S, width = len(lens), pg.block_tables.shape[1]
    q = Rows(2 * rng.standard_normal((S, H, D)).astype(np.float32), dtype)
    kw, ref_kw, _ = _options(rng, H, opts)
    no_sinks = {k: v for k, v in kw.items() if k != "sinks"}
    tables = pg.block_tables
    rest = np.full_like(tables, -7)  # junk past the used columns, as in the whole table
    for s, c in enumerate(cuts):
        rest[s, :width - c // BS] = tables[s, c // BS:]
    lens_a, lens_b = np.array(cuts, np.int32), np.array([n - c for n, c in zip(lens, cuts)], np.int32)

    def call(table, seq_lens, op_kw):
        out, lse = Rows(np.full((S, H, D), 7.0), dtype), np.full((H, S), 7, np.float32)
        args = (q.tensor, kc, vc, KVH, 0.25, table, seq_lens, BS, int(seq_lens.max()))
        assert decode(entry, out.tensor, args, lse=lse, **op_kw) is lse
        return out, lse

    part_a, lse_a = call(tables, lens_a, kw)
    part_b, lse_b = call(rest, lens_b, no_sinks)
    whole, lse_w = call(tables, np.array(lens, np.int32), kw)
    merged, lse_m = Rows(np.full((S, H, D), 7.0), dtype), np.full((H, S), 7, np.float32)
    pa.merge_attn_states(merged.tensor, part_a.tensor, lse_a, part_b.tensor, lse_b, lse_m)
    tol = LOOSE[dtype]
    np.testing.assert_allclose(merged.values(), whole.values(), rtol=tol, atol=tol)
    np.testing.assert_allclose(lse_m, lse_w, rtol=1e-6, atol=1e-5)
    qv = q.values()
    for s in range(S):
        ref_out, ref_lse = decode_reference(qv[s], pg.K[s], pg.V[s], 0.25, **ref_kw)
        np.testing.assert_allclose(merged.values()[s], ref_out, rtol=tol, atol=tol)
        np.testing.assert_allclose(lse_m[:, s], ref_lse, rtol=1e-6, atol=1e-5)
        c = cuts[s]  # and each part against the definition over its keys
        _, ref_a = decode_reference(qv[s], pg.K[s][:c], pg.V[s][:c], 0.25, **ref_kw)
        _, ref_b = decode_reference(qv[s], pg.K[s][c:], pg.V[s][c:], 0.25,
                                    **{k: v for k, v in ref_kw.items() if k != "sinks"})
        np.testing.assert_allclose(lse_a[:, s], ref_a, rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(lse_b[:, s], ref_b, rtol=1e-6, atol=2e-6)
    # the parts differ from the whole: a merge that returned one part, or an lse that did not
    # weigh them, would fail above
    whole_v = whole.values()
    assert np.abs(whole_v - part_a.values()).max() > 10 * tol and np.abs(whole_v - part_b.values()).max() > 10 * tol


# ---- refusals ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ENTRIES)
def test_decode_lse_refusals_write_nothing(entry):
    op = {"v1": "paged_attention_v1", "v2": "paged_attention_v2", "decode": "paged_attention_decode"}[entry]
    p = decode_problem()
    o, q = p["out"], p["query"]
    q0 = q.copy()
    S, H = q.shape[0], q.shape[1]
    args = (q, p["key_cache"], p["value_cache"], p["num_kv_heads"], p["scale"], p["block_tables"], p["seq_lens"],
            p["block_size"], p["max_seq_len"])
    wide = np.full((H, S + 3), 7, np.float32)
    col, spill = np.full((H, 1), 7, np.float32), np.full(H * S, 7, np.float32)
    bad = [
        (np.full((S, H), 7, np.float32), rf"^{op}: lse has shape \[2, 4\]; expected \[4, 2\] \(\[num_heads, "
                                          r"num_seqs\]: the query's heads and num_seqs\)"),
        (np.full((1, H, S), 7, np.float32), r"lse has shape \[1, 4, 2\]; expected \[4, 2\]"),
        (np.full((H, S + 1), 7, np.float32), r"lse has shape \[4, 3\]; expected \[4, 2\]"),
        (np.full((H, S), 7, np.float64), rf"^{op}: lse has dtype float64; expected float32$"),
        (np.full((H, S), 7, np.float16), r"lse has dtype float16; expected float32"),
        # strided views pass (test_lse_strides.py) but a broadcast or reversed dimension does not
        (as_strided(col, (H, S), (4, 0)), rf"^{op}: lse has stride 0 in dimension 1 \(size 2\), got strides "
                                          r"\[1, 0\]; an output takes positive strides only"),
        (wide[:, S - 1::-1], r"lse has stride -1 in dimension 1 \(size 2\), got strides \[5, -1\]"),
        (wide[::-1, :S], r"lse has stride -5 in dimension 0 \(size 4\)"),
        (FakeCuda(np.full((H, S), 7, np.float32)), rf"^{op}: lse is on cuda:0 but query is on cpu:0"),
        # the library's own refusals
        (o.reshape(-1)[:H * S].reshape(H, S), rf"^{op}: decode: lse overlaps out"),
        (o.reshape(-1)[-H * S:].reshape(H, S), r"lse overlaps out"),
        (q.reshape(-1)[3:3 + H * S].reshape(H, S), r"lse overlaps query"),
        (_misaligned_lse(H, S), r"lse must be 4-byte aligned"),
        (as_strided(spill, (H, S), (4, 4)), rf"^{op}: decode: lse strides \(head 1, token 1\) put two \(head, "
                                            r"token\) pairs on one float"),
        (as_strided(spill, (H, S), (4, 8)), r"decode: lse strides \(head 1, token 2\) put two"),
    ]
    for lse, msg in bad:
        for kw in (dict(lse=lse), dict(lse=lse, return_lse=True)):
            with pytest.raises(ValueError, match=msg):
                decode(entry, o, args, **kw)
            assert (o == 7).all(), msg
            np.testing.assert_array_equal(q, q0)
    assert (wide == 7).all() and (col == 7).all() and (spill == 7).all()


# ---- the CUDA path's wiring (no kernel runs) ---------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch):
    f = FakeLib()
    monkeypatch.setattr(pa.ops, "lib", f)
    return f


@pytest.mark.parametrize("entry,launch", [("v1", "pa_paged_attention_v1"), ("v2", "pa_paged_attention_v2"),
                                          ("decode", "pa_paged_attention_decode")])
def test_lse_reaches_the_cuda_launches(fake, entry, launch):
    """On CUDA arrays the lse's address goes into the params of the launch (NULL without one), the
    caller's lse comes back, and an lse of the wrong shape or on another device is refused before
    any launch."""
    p = decode_problem()
    o, q, kc, vc, bt, sl = (FakeCuda(p[k]) for k in ("out", "query", "key_cache", "value_cache", "block_tables",
                                                      "seq_lens"))
    args = (q, kc, vc, 2, p["scale"], bt, sl, 16, 9)
    lse = np.zeros((4, 2), np.float32)
    flse = FakeCuda(lse)
    assert decode(entry, o, args, lse=flse, stream=STREAM) is flse
    ref, stream = fake.launch(launch)[0], fake.launch(launch)[-1]
    assert stream == STREAM and ref._obj.lse == lse.ctypes.data and ref._obj.out == p["out"].ctypes.data
    assert (ref._obj.num_heads, ref._obj.num_seqs) == (4, 2)
    fake.calls.clear()
    assert decode(entry, o, args) is None
    assert fake.launch(launch)[0]._obj.lse is None
    fake.calls.clear()
    with pytest.raises(ValueError, match="lse is on cpu:0 but query is on cuda:0"):
        decode(entry, o, args, lse=lse)
    with pytest.raises(ValueError, match="lse is on cuda:1 but query is on cuda:0"):
        decode(entry, o, args, lse=FakeCuda(lse, 1))
    with pytest.raises(ValueError, match=r"lse has shape \[2, 4\]; expected \[4, 2\]"):
        decode(entry, o, args, lse=FakeCuda(np.zeros((2, 4), np.float32)))
    assert fake.calls == []
