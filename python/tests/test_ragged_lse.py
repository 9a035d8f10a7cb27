"""ragged_paged_attention's log-sum-exp output (return_lse= / lse=) on NumPy arrays (the CPU
reference) against refattn.ragged_reference, include/pagedattn/ragged.h's definition computed here
in float64 from q and the combined cache: for every query row of a live sequence, per head, the
natural log of its softmax denominator, log(e^sinks[h] + sum_k e^x_k) over the sequence's keys,
mask_value added to a masked key's logit (a term of exactly 0 with the default mask, one that counts
with a milder mask_value); rows outside the live sequences left as they were (-inf in a new lse).
Then the layouts of positive strides (FlashInfer's [tokens, num_heads] through its transpose, padded
rows, column slices) with every float outside the view untouched; what the op returns; cascade
attention over decode rows (each sequence's first pages and the rest, merged by merge_attn_states)
against one call over all the pages; the refusals; and the CUDA path's wiring (a stand-in library,
as test_cuda_path.py). tests/test_gpu.py runs it on a GPU."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import pagedattn as pa
from refattn import Paged, attend, ragged_options, ragged_reference
from test_cuda_path import STREAM, FakeLib
from test_errors import FakeCuda
from test_lse import LOOSE, _misaligned_lse
from test_lse_strides import SENTINEL, assert_bits_equal, lse_views
from test_merge import Rows

# per head (the first H of them): -inf is no sink, 30 outweighs every key of these problems
SINKS = [1.5, -np.inf, 30.0, -0.5, 0.0, 2.0]
# outputs against float64 attention (the library rounds each probability to the dtype first)
OUT_TOL = {"float32": 8e-5, "float16": 8e-3}
SCALE = 0.3


def ragged_problem(seed, dtype="float32", H=4, KVH=2, D=32, PS=8, kv_lens=(9, 1, 30, 17, 12, 40),
                   q_lens=(9, 1, 4, 1, 0, 1), max_num_seqs=8, pad_rows=3):
    """A mixed batch (a whole prompt, decodes, a chunked prefill, a sequence without query rows)
    in a combined cache laid out by hand (NaN in the slots no sequence fills), padded as vLLM pads
    it: sequences past the live ones (junk kv_lens and page rows, cu_q_lens repeated) and pad_rows
    query rows past the last sequence's. `rows`: the query rows the live sequences cover."""
    rng = np.random.default_rng(seed)
    S, rows = len(kv_lens), sum(q_lens)
    width = max(-(-n // PS) for n in kv_lens) + 1  # a junk column past the longest
    pg = Paged(rng, kv_lens, KVH, D, PS, dtype, table_width=width)
    kv, _ = pg.fill("combined")
    T = rows + pad_rows
    q = rng.standard_normal((T, H, D)).astype(dtype)
    lens = np.full(max_num_seqs, 5, np.int32)
    lens[:S] = kv_lens
    pages = np.full((max_num_seqs, width), -7, np.int32)
    pages[:S] = pg.block_tables
    cu = np.full(max_num_seqs + 1, rows, np.int32)
    cu[:S + 1] = np.concatenate([[0], np.cumsum(q_lens)])
    return dict(pg=pg, kv=kv, q=q, args=(lens, pages, cu, np.array([S], np.int32)), H=H, T=T, rows=rows,
                q_lens=list(q_lens), kv_lens=list(kv_lens))


def _options(H, opts):
    """The op's keyword arguments and ragged_reference's for one case's options (SINKS' first H)."""
    return ragged_options(opts, np.array(SINKS[:H], np.float32))


CASES = [  # id, options
    ("plain", {}),
    ("sinks", dict(sinks=True)),
    ("window-cap", dict(window=5, soft_cap=2.0)),
    ("mild-mask", dict(window=6, mask_value=-3.0)),
    ("everything", dict(sinks=True, window=7, soft_cap=1.5, mask_value=-2.5)),
]


def test_reference_agrees_with_refattn():
    """ragged_reference's outputs (the default mask) are refattn.attend's for each sequence, its
    rows at kv_len - q_len + i; the rows no sequence covers are NaN (its lse is checked against the
    library below)."""
    m = ragged_problem(129)
    q, kv, args, pg = m["q"], m["kv"], m["args"], m["pg"]
    cu = args[2]
    for opts in ({}, dict(window=5, soft_cap=2.0), dict(sinks=True, window=3)):
        _, ref_kw = _options(m["H"], opts)
        out, lse = ragged_reference(q, kv, *args, SCALE, **ref_kw)
        kw = dict(window=ref_kw.get("window", 0), soft_cap=ref_kw.get("soft_cap", 0.0), sinks=ref_kw.get("sinks"))
        for s, (n, L) in enumerate(zip(m["q_lens"], m["kv_lens"])):
            a, b = cu[s], cu[s + 1]
            want = attend(q[a:b], pg.K[s], pg.V[s], SCALE, q_pos=[L - n + i for i in range(n)], **kw)
            np.testing.assert_allclose(out[a:b], want, rtol=1e-12, atol=1e-12)
        assert np.isfinite(lse[:, :m["rows"]]).all() and np.isnan(lse[:, m["rows"]:]).all()
        assert np.isnan(out[m["rows"]:]).all()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("opts", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_ragged_lse_matches_the_definition(dtype, opts):
    """return_lse=True: a new contiguous float32 [num_q_heads, max_num_batched_tokens] lse holding
    each live row's lse by the definition and -inf in the padding rows (the new output's are zeros);
    into a caller's lse (and out) the same bits, the padding rows keeping what was there."""
    m = ragged_problem(130, dtype)
    H, T, rows = m["H"], m["T"], m["rows"]
    q, kv, args = m["q"], m["kv"], m["args"]
    op_kw, ref_kw = _options(H, opts)
    out, lse = pa.ragged_paged_attention(q, kv, *args, sm_scale=SCALE, return_lse=True, **op_kw)
    assert isinstance(lse, np.ndarray) and lse.dtype == np.float32 and lse.shape == (H, T)
    assert lse.flags.c_contiguous
    ref_out, ref_lse = ragged_reference(q, kv, *args, SCALE, **ref_kw)
    np.testing.assert_allclose(lse[:, :rows], ref_lse[:, :rows], rtol=1e-6, atol=2e-6)
    np.testing.assert_allclose(out[:rows], ref_out[:rows], rtol=OUT_TOL[dtype], atol=OUT_TOL[dtype])
    assert (lse[:, rows:] == -np.inf).all() and (out[rows:] == 0).all()
    if "mask_value" in opts:  # the masked keys count here: the default mask's lse is another one
        _, hard = ragged_reference(q, kv, *args, SCALE, **dict(ref_kw, mask_value=None))
        assert np.abs(hard[:, :rows] - ref_lse[:, :rows]).max() > 1e-2
    if "sinks" in opts:  # the -inf sink is none; the large one is the whole denominator, near enough
        _, no_sinks = ragged_reference(q, kv, *args, SCALE, **dict(ref_kw, sinks=None))
        np.testing.assert_allclose(lse[1, :rows], no_sinks[1, :rows], rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(lse[2, :rows], 30.0, rtol=1e-6)
        assert (np.abs(lse[0, :rows] - no_sinks[0, :rows]) > 1e-3).all()

    mine_out, mine = np.full_like(q, 7), np.full((H, T), SENTINEL, np.float32)
    got = pa.ragged_paged_attention(q, kv, *args, sm_scale=SCALE, out=mine_out, lse=mine, **op_kw)
    assert got[0] is mine_out and got[1] is mine
    assert_bits_equal(mine[:, :rows], lse[:, :rows])
    assert_bits_equal(mine_out[:rows], out[:rows])
    assert (mine[:, rows:] == SENTINEL).all() and (mine_out[rows:] == 7).all()


@pytest.mark.parametrize("opts", [{}, CASES[-1][1]], ids=["plain", "everything"])
def test_ragged_lse_in_strided_views(opts):
    """Each layout of test_lse_strides.lse_views (FlashInfer's [tokens, num_heads] as its transpose,
    with and without padding between its rows, a column slice of a wider array, every other column,
    every third head), given as lse= (alone and with return_lse=True), comes back as given and holds
    the contiguous lse bit for bit in the live rows; its padding rows and every float of the buffer
    outside the view keep the sentinel; the output is the same."""
    m = ragged_problem(131)
    H, T, rows = m["H"], m["T"], m["rows"]
    op_kw, _ = _options(H, opts)

    def run(**kw):
        out = np.full_like(m["q"], 7)
        got = pa.ragged_paged_attention(m["q"], m["kv"], *m["args"], sm_scale=SCALE, out=out, **op_kw, **kw)
        assert got[0] is out
        return out, got[1]

    out0, lse0 = run(return_lse=True)
    assert np.isfinite(lse0[:, :rows]).all()
    for name, lse, buf, mask in lse_views(H, T):
        for kw in (dict(lse=lse), dict(lse=lse, return_lse=True)):
            buf[...] = SENTINEL
            out, got = run(**kw)
            assert got is lse, name
            assert_bits_equal(lse[:, :rows], lse0[:, :rows], name)
            assert (lse[:, rows:] == SENTINEL).all(), name
            assert_bits_equal(out, out0, name)
            assert (buf[~mask] == SENTINEL).all(), name


def test_ragged_returns_out_or_out_and_lse():
    """out alone without return_lse / lse, as before; (out, a new lse) with return_lse=True; (out,
    the caller's lse) with lse; the output bit for bit the same in all."""
    m = ragged_problem(132)
    q, kv, args, H, T, rows = m["q"], m["kv"], m["args"], m["H"], m["T"], m["rows"]
    out0 = pa.ragged_paged_attention(q, kv, *args, sm_scale=SCALE)
    assert isinstance(out0, np.ndarray) and out0.shape == q.shape
    mine = np.full_like(q, 7)
    assert pa.ragged_paged_attention(q, kv, *args, sm_scale=SCALE, out=mine) is mine
    assert pa.ragged_paged_attention(q, kv, *args, sm_scale=SCALE, out=mine, return_lse=False) is mine
    got = pa.ragged_paged_attention(q, kv, *args, sm_scale=SCALE, return_lse=True)
    assert isinstance(got, tuple) and len(got) == 2
    out1, new = got
    assert isinstance(new, np.ndarray) and new.dtype == np.float32 and new.shape == (H, T)
    lse = np.full((H, T), 7, np.float32)
    out2, got_lse = pa.ragged_paged_attention(q, kv, *args, sm_scale=SCALE, lse=lse)
    assert got_lse is lse
    for o in (out1, out2):
        assert_bits_equal(o, out0)
    assert_bits_equal(mine[:rows], out0[:rows])
    assert_bits_equal(lse[:, :rows], new[:, :rows])
    assert (lse[:, rows:] == 7).all() and (new[:, rows:] == -np.inf).all()


def test_empty_batch_is_a_no_op():
    """No query row (q of 0 tokens) or no sequence (kv_lens of 0 entries): the op writes nothing and
    returns out, and (out, lse) with an lse of 0 rows or of every row untouched; the package
    returns before calling the library (whose empty batch is a no-op too). Bad arguments are still
    refused."""
    m = ragged_problem(141)
    q, kv, (lens, pages, cu, ns), H = m["q"], m["kv"], m["args"], m["H"]
    q0 = q[:0]
    out = pa.ragged_paged_attention(q0, kv, lens, pages, cu, ns, sm_scale=SCALE)
    assert out.shape == q0.shape
    out, lse = pa.ragged_paged_attention(q0, kv, lens, pages, cu, ns, sm_scale=SCALE, return_lse=True)
    assert out.shape == q0.shape and lse.shape == (H, 0)
    mine, lse7 = np.full_like(q, 7), np.full((H, q.shape[0]), 7, np.float32)
    got = pa.ragged_paged_attention(q, kv, lens[:0], pages[:0], cu[:1], ns, sm_scale=SCALE, out=mine, lse=lse7)
    assert got[0] is mine and got[1] is lse7
    assert (mine == 7).all() and (lse7 == 7).all()
    with pytest.raises(ValueError, match=r"lse has shape"):
        pa.ragged_paged_attention(q0, kv, lens, pages, cu, ns, lse=np.zeros((H, 1), np.float32))


# ---- cascade: each decode row over its sequence's first pages and the rest, merged ------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["default", "flashinfer"])
@pytest.mark.parametrize("opts", [{}, dict(sinks=True, soft_cap=1.5)], ids=["plain", "sinks-cap"])
def test_cascade_of_decode_rows_merges_into_one_call(dtype, layout, opts):
    """Decode rows (one query row per sequence, at kv_len - 1) over each sequence's first cut[s]
    pages (kv_lens = cut * page_size; the sinks here) and over the rest (page_indices rows shifted
    left by cut[s], kv_lens less the cut), each lse into a caller's tensor (FlashInfer's layout
    through its transpose, or the default), merged by merge_attn_states: one call's output and lse
    over all the pages, and the float64 definition's. Every key of a decode row is visible in each
    part, so the split is exact; the two padding rows keep the caller's values in both parts."""
    rng = np.random.default_rng(133)
    H, KVH, D, PS = 4, 2, 32, 8
    kv_lens, cuts = [40, 17, 300, 9, 64], [4, 1, 30, 1, 7]  # cuts in whole pages; both parts have keys
    S, max_num_seqs = len(kv_lens), 7
    T = S + 2
    width = max(-(-n // PS) for n in kv_lens)
    pg = Paged(rng, kv_lens, KVH, D, PS, np.float32, table_width=width)
    kv = Rows(pg.fill("combined")[0], dtype)  # the values as the dtype holds them: kv.values()
    q = Rows(2 * rng.standard_normal((T, H, D)).astype(np.float32), dtype)
    whole = np.full((max_num_seqs, width), -7, np.int32)  # junk past the used pages and sequences
    whole[:S] = pg.block_tables
    rest = np.full_like(whole, -7)
    for s, c in enumerate(cuts):
        rest[s, :width - c] = whole[s, c:]
    lens_w, lens_a, lens_b = (np.full(max_num_seqs, 3, np.int32) for _ in range(3))
    lens_w[:S], lens_a[:S] = kv_lens, [c * PS for c in cuts]
    lens_b[:S] = lens_w[:S] - lens_a[:S]
    cu = np.full(max_num_seqs + 1, S, np.int32)
    cu[:S + 1] = np.arange(S + 1)
    ns = np.array([S], np.int32)
    op_kw, ref_kw = _options(H, opts)
    no_sinks, ref_no_sinks = ({k: v for k, v in x.items() if k != "sinks"} for x in (op_kw, ref_kw))

    def new_lse():
        return np.full((H, T), 7, np.float32) if layout == "default" else np.full((T, H), 7, np.float32).T

    def call(pages, lens, kw):
        out, lse = Rows(np.full((T, H, D), 7.0), dtype), new_lse()
        got = pa.ragged_paged_attention(q.tensor, kv.tensor, lens, pages, cu, ns, sm_scale=SCALE, out=out.tensor,
                                        lse=lse, **kw)
        assert got[0] is out.tensor and got[1] is lse
        assert (out.values()[S:] == 7).all() and (lse[:, S:] == 7).all()
        return out, lse

    part_a, lse_a = call(whole, lens_a, op_kw)
    part_b, lse_b = call(rest, lens_b, no_sinks)
    full, lse_w = call(whole, lens_w, op_kw)
    merged, lse_m = Rows(np.full((T, H, D), 7.0), dtype), new_lse()
    pa.merge_attn_states(merged.tensor, part_a.tensor, lse_a, part_b.tensor, lse_b, lse_m)
    tol = LOOSE[dtype]
    got = merged.values()[:S]
    np.testing.assert_allclose(got, full.values()[:S], rtol=tol, atol=tol)
    np.testing.assert_allclose(lse_m[:, :S], lse_w[:, :S], rtol=1e-6, atol=1e-5)
    qv, kvv = q.values(), kv.values()
    ref_out, ref_lse = ragged_reference(qv, kvv, lens_w, whole, cu, S, SCALE, **ref_kw)
    np.testing.assert_allclose(got, ref_out[:S], rtol=tol, atol=tol)
    np.testing.assert_allclose(lse_m[:, :S], ref_lse[:, :S], rtol=1e-6, atol=1e-5)
    _, ref_a = ragged_reference(qv, kvv, lens_a, whole, cu, S, SCALE, **ref_kw)  # each part by the definition
    _, ref_b = ragged_reference(qv, kvv, lens_b, rest, cu, S, SCALE, **ref_no_sinks)
    np.testing.assert_allclose(lse_a[:, :S], ref_a[:, :S], rtol=1e-6, atol=2e-6)
    np.testing.assert_allclose(lse_b[:, :S], ref_b[:, :S], rtol=1e-6, atol=2e-6)
    # the parts differ from the whole: a merge that returned one part, or an lse that did not weigh
    # them, would fail above
    full_v = full.values()[:S]
    assert np.abs(full_v - part_a.values()[:S]).max() > 10 * tol
    assert np.abs(full_v - part_b.values()[:S]).max() > 10 * tol


# ---- refusals ------------------------------------------------------------------------------------------------------


def test_ragged_lse_refusals_write_nothing():
    m = ragged_problem(134, pad_rows=2)
    H, T, rows = m["H"], m["T"], m["rows"]
    q, kv, args = m["q"], m["kv"], m["args"]
    out = np.full_like(q, 7)
    q0, kv0 = q.copy(), kv.copy()
    wide = np.full((H, T + 3), 7, np.float32)
    col, row, spill = np.full((H, 1), 7, np.float32), np.full((1, T), 7, np.float32), np.full(H * T, 7, np.float32)
    op = "^ragged_paged_attention: "
    bad = [
        (np.full((T, H), 7, np.float32), rf"{op}lse has shape \[{T}, {H}\]; expected \[{H}, {T}\] "
                                         r"\(\[num_heads, max_num_batched_tokens\]"),
        (np.full((H, T - 1), 7, np.float32), rf"{op}lse has shape \[{H}, {T - 1}\]; expected \[{H}, {T}\]"),
        (np.full((H, rows), 7, np.float32), rf"lse has shape \[{H}, {rows}\]; expected \[{H}, {T}\]"),  # live rows
        (np.full((H + 1, T), 7, np.float32), rf"lse has shape \[{H + 1}, {T}\]; expected \[{H}, {T}\]"),
        (np.full((1, H, T), 7, np.float32), rf"lse has shape \[1, {H}, {T}\]"),
        (np.full((H, T), 7, np.float64), rf"{op}lse has dtype float64; expected float32$"),
        (np.full((H, T), 7, np.float16), r"lse has dtype float16; expected float32"),
        (FakeCuda(np.full((H, T), 7, np.float32)), rf"{op}lse is on cuda:0 but q is on cpu:0"),
        # strided views pass, but a broadcast or reversed dimension does not
        (as_strided(col, (H, T), (4, 0)), rf"{op}lse has stride 0 in dimension 1 \(size {T}\), got strides \[1, 0\]; "
                                          r"an output takes positive strides only"),
        (as_strided(row, (H, T), (0, 4)), rf"{op}lse has stride 0 in dimension 0 \(size {H}\)"),
        (wide[:, T - 1::-1], rf"{op}lse has stride -1 in dimension 1 \(size {T}\)"),
        (wide[::-1, :T], rf"{op}lse has stride -\d+ in dimension 0"),
        # the library's own refusals
        (as_strided(spill, (H, T), (4, 4)), rf"{op}ragged: lse strides \(head 1, token 1\) put two \(head, token\) "
                                            r"pairs on one float"),
        (as_strided(spill, (H, T), (8, 4)), rf"{op}ragged: lse strides \(head 2, token 1\) put two"),
        (out.reshape(-1)[5:5 + H * T].reshape(H, T), rf"{op}ragged: lse overlaps out"),
        (q.reshape(-1)[-H * T:].reshape(H, T), rf"{op}ragged: lse overlaps q"),
        (kv.reshape(-1)[:H * T].reshape(H, T), rf"{op}ragged: lse overlaps the cache"),
        (_misaligned_lse(H, T), rf"{op}ragged: lse \(0x[0-9a-f]+\) must be aligned to 4 bytes"),
    ]
    for lse, msg in bad:
        for kw in (dict(lse=lse), dict(lse=lse, return_lse=True)):
            with pytest.raises(ValueError, match=msg):
                pa.ragged_paged_attention(q, kv, *args, sm_scale=SCALE, out=out, **kw)
            assert (out == 7).all(), msg
            np.testing.assert_array_equal(q, q0)
            np.testing.assert_array_equal(kv, kv0)
    assert (wide == 7).all() and (col == 7).all() and (row == 7).all() and (spill == 7).all()


# ---- the CUDA path's wiring (no kernel runs) ---------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch):
    f = FakeLib()
    monkeypatch.setattr(pa.ops, "lib", f)
    return f


def test_lse_reaches_the_cuda_launch(fake):
    """On CUDA arrays the view's address and element strides go into the launch's params
    (FlashInfer's layout as head stride 1 and token stride num_q_heads, a column slice with the wide
    array's row stride), the caller's lse comes back; no lse is NULL with strides 0 and the output
    comes back alone; a broadcast, reversed or other-device lse is refused before any call."""
    m = ragged_problem(135)
    H, T = m["H"], m["T"]
    ins = [FakeCuda(a) for a in (m["q"], m["kv"], *m["args"])]
    fout, ws = FakeCuda(np.zeros_like(m["q"])), FakeCuda(np.zeros(256, np.uint8))

    def run(**kw):
        return pa.ragged_paged_attention(*ins, sm_scale=SCALE, out=fout, workspace=ws, stream=STREAM, **kw)

    cases = [
        (np.zeros((T, H), np.float32), lambda b: b.T, (1, H)),
        (np.zeros((T, H + 3), np.float32), lambda b: b[:, 1:1 + H].T, (1, H + 3)),
        (np.zeros((H, T + 5), np.float32), lambda b: b[:, 2:2 + T], (T + 5, 1)),
        (np.zeros((H, 2 * T), np.float32), lambda b: b[:, ::2], (2 * T, 2)),
        (np.zeros((H, T), np.float32), lambda b: b, (T, 1)),
    ]
    for buf, cut, strides in cases:
        lse = cut(buf)
        flse = FakeCuda(lse)
        got = run(lse=flse)
        assert got[0] is fout and got[1] is flse
        ref, ws_ptr, _, stream = fake.launch("pa_ragged_paged_attention")
        p = ref._obj
        assert stream == STREAM and p.lse == lse.ctypes.data, strides
        assert (p.lse_head_stride, p.lse_token_stride) == strides
        assert p.out == fout.a.ctypes.data and ws_ptr == ws.a.ctypes.data
        fake.calls.clear()
    assert run() is fout
    p = fake.launch("pa_ragged_paged_attention")[0]._obj
    assert p.lse is None and (p.lse_head_stride, p.lse_token_stride) == (0, 0)
    fake.calls.clear()
    bad = [
        (FakeCuda(as_strided(np.zeros((H, 1), np.float32), (H, T), (4, 0))), r"lse has stride 0 in dimension 1"),
        (FakeCuda(np.zeros((H, T), np.float32)[:, ::-1]), r"lse has stride -1 in dimension 1"),
        (np.zeros((H, T), np.float32), r"^ragged_paged_attention: lse is on cpu:0 but q is on cuda:0"),
        (FakeCuda(np.zeros((H, T), np.float32), 1), r"^ragged_paged_attention: lse is on cuda:1 but q is on cuda:0"),
    ]
    for lse, msg in bad:
        with pytest.raises(ValueError, match=msg):
            run(lse=lse)
    assert fake.calls == []
