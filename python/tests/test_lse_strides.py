"""The log-sum-exp output (return_lse= / lse=) in views of any positive strides, which reach the
library as lse_head_stride and lse_token_stride (include/pagedattn/decode.h, prefill.h), on NumPy
arrays (the CPU reference): for the three decode entries, context_attention_fwd, prompt_attention
and mixed_attention, FlashInfer's [tokens, num_heads] lse through its transpose (with and without
padding between its rows), a column slice of a wider array, every other column and every third
head, each equal bit for bit to the contiguous lse, the output the same, and every float of the
buffer outside the view untouched; a dimension of one element, whose stride does not matter.
mixed_attention's lse (new with this file): its prefill rows against float64 attention from the
definition and bit for bit context_attention_fwd's, its decode rows against the definition and bit
for bit paged_attention_decode's, at num_prefill_tokens + s; rows it skips left as they were; what
it returns; its refusals. And the strides reaching the CUDA launches (a stand-in library, as
test_cuda_path.py). The other ops' refusals of broadcast, reversed and colliding layouts are in
test_lse.py and test_decode_lse.py; tests/test_gpu.py runs strided views on a GPU."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import pagedattn as pa
from refattn import Paged, mixed_batch
from test_cuda_path import STREAM, FakeLib
from test_decode_lse import decode, decode_reference
from test_errors import FakeCuda
from test_lse import SINKS, TOL, _cu, _misaligned_lse, _options, attend_lse

SENTINEL = np.float32(-12345.5)  # what a caller's buffer holds where the lse must not be written


def _same(a):
    return a


def lse_views(H, T):
    """(name, float32 [H, T] view, its buffer filled with SENTINEL, mask of the buffer's floats the
    view covers) for each strided layout."""
    layouts = [
        ("flashinfer", (T, H), lambda b: b.T),  # [tokens, heads]: head stride 1, token stride H
        ("flashinfer-padded-rows", (T, H + 3), lambda b: b[:, 1:1 + H].T),
        ("column-slice", (H, T + 5), lambda b: b[:, 2:2 + T]),
        ("every-other-column", (H, 2 * T), lambda b: b[:, ::2]),
        ("every-third-head", (3 * H, T), lambda b: b[1::3]),
    ]
    for name, shape, cut in layouts:
        buf = np.full(shape, SENTINEL, np.float32)
        mask = np.zeros(shape, bool)
        cut(mask)[...] = True
        yield name, cut(buf), buf, mask


def assert_bits_equal(got, want, what=""):
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint32),
                                  np.ascontiguousarray(want).view(np.uint32), err_msg=what)


# ---- the problems: run(wrap, **kw) -> (out, what the op returned as its lse) ----------------------------------
# wrap is applied to every array argument (FakeCuda for the CUDA path's wiring); the lse is given in kw.


def decode_problem(entry):
    rng = np.random.default_rng(110)
    H, KVH, D, BS, lens = 4, 2, 32, 16, [3, 40, 600]
    pg = Paged(rng, lens, KVH, D, BS, np.float32)
    kc, vc = pg.fill("nhd")
    q = rng.standard_normal((len(lens), H, D)).astype(np.float32)
    sinks = np.array(SINKS[:H], np.float32)

    def run(wrap=_same, **kw):
        out = np.full_like(q, 7)
        args = (wrap(q), wrap(kc), wrap(vc), KVH, 0.3, wrap(pg.block_tables), wrap(np.array(lens, np.int32)), BS,
                max(lens))
        return out, decode(entry, wrap(out), args, sinks=wrap(sinks), logits_soft_cap=1.5, **kw)

    return run, H, len(lens)


def context_problem():
    rng = np.random.default_rng(111)
    H, KVH, D, BS, ctx_lens, q_lens = 4, 2, 32, 8, [0, 13, 24], [5, 3, 9]
    pg = Paged(rng, ctx_lens, KVH, D, BS, np.float32, table_width=5)
    kc, vc = pg.fill("vllm")
    T = sum(q_lens)
    q = rng.standard_normal((T, H, D)).astype(np.float32)
    k, v = rng.standard_normal((2, T, KVH, D)).astype(np.float32)
    start = _cu(q_lens)
    seq_lens = np.array([c + n for c, n in zip(ctx_lens, q_lens)], np.int32)

    def run(wrap=_same, **kw):
        o = np.full_like(q, 7)
        got = pa.context_attention_fwd(wrap(q), wrap(k), wrap(v), wrap(o), "auto", wrap(kc), wrap(vc),
                                       wrap(pg.block_tables), wrap(start), wrap(seq_lens), int(seq_lens.max()),
                                       max(q_lens), sm_scale=0.3, sliding_window=11, **kw)
        return o, got

    return run, H, T


def prompt_problem():
    """Cross-attention whose last sequence has no key: its rows' lse is -inf, written as any other."""
    rng = np.random.default_rng(112)
    H, KVH, D, q_lens, k_lens = 4, 1, 32, [3, 7, 2], [10, 4, 0]
    T = sum(q_lens)
    q = rng.standard_normal((T, H, D)).astype(np.float32)
    k, v = rng.standard_normal((2, sum(k_lens), KVH, D)).astype(np.float32)
    cq, ck = _cu(q_lens), _cu(k_lens)

    def run(wrap=_same, **kw):
        out = np.full_like(q, 7)
        wout = wrap(out)
        got = pa.prompt_attention(wrap(q), wrap(k), wrap(v), wrap(cq), max(q_lens), wrap(ck), max(k_lens),
                                  attn_type="encoder_decoder", softmax_scale=0.3, out=wout, **kw)
        if isinstance(got, tuple):
            assert got[0] is wout
            return out, got[1]
        assert got is wout
        return out, None

    return run, H, T


def mixed_problem(seed=113, layout="nhd", dtype=np.float32, H=4, KVH=2, D=32, BS=8, prefills=((5, 3), (0, 4)),
                  decodes=(7, 20, 1), gap=0, pad=0, opts=None):
    """A chunked-prefill step (mixed_batch) with `gap` query rows after the prefills' that no
    sequence covers (num_prefill_tokens counts them) and `pad` rows past the decodes' (not read:
    num_decode_tokens leaves them out). Returns (run, H, tokens of the lse, everything else)."""
    rng = np.random.default_rng(seed)
    prefills, decodes = list(prefills), list(decodes)
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, layout, dtype, H, KVH, D, BS, prefills, decodes,
                                                       key_rows_extra=gap)
    NP, P, ND = int(start[-1]), len(prefills), len(decodes)
    gap_rows, pad_rows = (rng.standard_normal((n, H, D)).astype(dtype) for n in (gap, pad))
    q = np.concatenate([q[:NP], gap_rows, q[NP:], pad_rows])
    op_kw, ref_kw = _options(rng, H, opts or {})
    bounds = (max(n for _, n in prefills), max(c + n for c, n in prefills), max(decodes, default=0))

    def run(wrap=_same, **kw):
        out = np.full_like(q, 7)
        wout = wrap(out)
        got = pa.mixed_attention(wrap(q), wrap(k), wrap(v), wrap(kc), wrap(vc), wrap(pg.block_tables),
                                 wrap(seq_lens), wrap(start), P, NP + gap, *bounds, num_decode_tokens=ND, scale=0.3,
                                 out=wout, **{n: wrap(x) if isinstance(x, np.ndarray) else x for n, x in op_kw.items()},
                                 **kw)
        if isinstance(got, tuple):
            assert got[0] is wout
            return out, got[1]
        assert got is wout
        return out, None

    return run, H, NP + gap + ND, dict(pg=pg, kc=kc, vc=vc, q=q, k=k, v=v, start=start, seq_lens=seq_lens, NP=NP,
                                       P=P, prefills=prefills, decodes=decodes, op_kw=op_kw, ref_kw=ref_kw,
                                       bounds=bounds)


PROBLEMS = {
    "v1": lambda: decode_problem("v1"),
    "v2": lambda: decode_problem("v2"),
    "decode": lambda: decode_problem("decode"),
    "context": context_problem,
    "prompt": prompt_problem,
    "mixed": lambda: mixed_problem(pad=1)[:3],
}
LAUNCHES = {"v1": "pa_paged_attention_v1", "v2": "pa_paged_attention_v2", "decode": "pa_paged_attention_decode",
            "context": "pa_context_attention", "prompt": "pa_prompt_attention", "mixed": "pa_mixed_attention"}


# ---- strided views against the contiguous lse ------------------------------------------------------------------


@pytest.mark.parametrize("op", list(PROBLEMS))
def test_strided_lse_is_the_contiguous_one(op):
    """Each layout, given as lse= (alone and with return_lse=True), comes back as given and holds the
    contiguous lse bit for bit; the output is the same; the buffer's other floats keep the sentinel."""
    run, H, T = PROBLEMS[op]()
    out0, lse0 = run(return_lse=True)
    assert lse0.shape == (H, T) and lse0.flags.c_contiguous and np.isfinite(out0).all()
    assert (lse0 != SENTINEL).all() and (lse0 != -np.inf).any()
    for name, lse, buf, mask in lse_views(H, T):
        for kw in (dict(lse=lse), dict(lse=lse, return_lse=True)):
            buf[...] = SENTINEL
            out, got = run(**kw)
            assert got is lse, name
            assert_bits_equal(lse, lse0, name)
            assert_bits_equal(out, out0, name)
            assert (buf[~mask] == SENTINEL).all(), name


@pytest.mark.parametrize("op", ["decode", "prompt"])
def test_a_dimension_of_one_element_takes_any_stride(op):
    """One sequence (decode) or one query row (prompt): the token dimension's stride is never used, so
    any, negative or 0 included, is accepted (passed to C as 0, its default); likewise one head's."""
    rng = np.random.default_rng(114)
    for H in (1, 4):
        KVH, D, BS, L = 1, 32, 16, 40
        pg = Paged(rng, [L], KVH, D, BS, np.float32)
        kc, vc = pg.fill("nhd")
        q = rng.standard_normal((1, H, D)).astype(np.float32)
        k, v = rng.standard_normal((2, L, KVH, D)).astype(np.float32)

        def run(lse):
            out = np.full_like(q, 7)
            if op == "decode":
                got = pa.paged_attention_decode(out, q, kc, vc, KVH, 0.3, pg.block_tables, np.array([L], np.int32),
                                                BS, L, lse=lse, return_lse=True)
            else:
                got = pa.prompt_attention(q, k, v, _cu([1]), 1, _cu([L]), L, attn_type="encoder_decoder",
                                          softmax_scale=0.3, out=out, lse=lse, return_lse=True)[1]
            return out, got

        out0, lse0 = run(None)
        assert lse0.shape == (H, 1) and np.isfinite(lse0).all()
        buf = np.full(16, SENTINEL, np.float32)
        for strides in ((4, 0), (4, -4), (4, 4), (4, 40)) + (((0, 4), (-8, 4), (8, 8)) if H == 1 else ()):
            buf[...] = SENTINEL
            lse = as_strided(buf[8:], (H, 1), strides)
            out, got = run(lse)
            assert got is lse
            assert_bits_equal(lse, lse0, str(strides))
            assert_bits_equal(out, out0, str(strides))
            assert (buf != SENTINEL).sum() == H, strides


# ---- mixed_attention's lse ---------------------------------------------------------------------------------------

MIXED_CASES = [  # layout, dtype, options
    ("nhd", "float32", {}),
    ("vllm", "float16", dict(sinks=True, alibi=True, soft_cap=1.2, window=11)),
    ("hnd", "float32", dict(window=5, sinks=True)),
]


@pytest.mark.parametrize("layout,dtype,opts", MIXED_CASES)
def test_mixed_attention_lse_matches_the_definition(layout, dtype, opts):
    """A prefill row's lse over its context and its new keys up to itself, a decode sequence's over its
    history at token num_prefill_tokens + s, in float64 by the definition; bit for bit what
    context_attention_fwd gives the prefills and paged_attention_decode the decodes. A gap row (counted
    in num_prefill_tokens, past query_start_loc[P]) is -inf in a new lse and keeps a caller's value."""
    run, H, T, m = mixed_problem(120, layout, np.dtype(dtype), H=4, KVH=2, D=32, BS=8,
                                 prefills=[(5, 3), (0, 4), (17, 6)], decodes=[7, 20, 1, 33], gap=1, pad=2, opts=opts)
    out, lse = run(return_lse=True)
    assert lse.shape == (H, T) and lse.dtype == np.float32 and lse.flags.c_contiguous
    pg, q, k, v, start, NP, P = m["pg"], m["q"], m["k"], m["v"], m["start"], m["NP"], m["P"]
    ref_kw, tol = m["ref_kw"], TOL[dtype]
    for s, (c, n) in enumerate(m["prefills"]):
        a, b = start[s], start[s + 1]
        ref_out, ref_lse = attend_lse(q[a:b], np.concatenate([pg.K[s], k[a:b]]), np.concatenate([pg.V[s], v[a:b]]),
                                      0.3, [c + i for i in range(n)], **ref_kw)
        np.testing.assert_allclose(lse[:, a:b], ref_lse, rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(out[a:b], ref_out, rtol=tol, atol=tol)
    assert (lse[:, NP] == -np.inf).all() and (out[NP] == 7).all()  # the gap row: not written
    for i, L in enumerate(m["decodes"]):
        ref_out, ref_lse = decode_reference(q[NP + 1 + i], pg.K[P + i], pg.V[P + i], 0.3, **ref_kw)
        np.testing.assert_allclose(lse[:, NP + 1 + i], ref_lse, rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(out[NP + 1 + i], ref_out, rtol=tol, atol=tol)
    assert (out[T:] == 7).all()  # the padding rows past the decodes
    assert np.isfinite(lse[:, :NP]).all() and np.isfinite(lse[:, NP + 1:]).all()

    # the prefills alone through context_attention_fwd, the decodes through paged_attention_decode
    op_kw, bt, sl, ND = m["op_kw"], pg.block_tables, m["seq_lens"], len(m["decodes"])
    o_ctx = np.full_like(q[:NP], 7)
    ctx_lse = pa.context_attention_fwd(q[:NP], k[:NP], v[:NP], o_ctx, "auto", m["kc"], m["vc"], bt[:P].copy(), start,
                                       sl[:P].copy(), m["bounds"][1], m["bounds"][0], sm_scale=0.3, return_lse=True,
                                       **op_kw)
    assert_bits_equal(lse[:, :NP], ctx_lse, "prefill rows")
    assert_bits_equal(out[:NP], o_ctx, "prefill rows")
    o_dec = np.full_like(q[:ND], 7)
    alibi = op_kw.get("alibi_slopes")
    dec_lse = pa.paged_attention_decode(o_dec, q[NP + 1:T], m["kc"], m["vc"], 2, 0.3, bt[P:].copy(), sl[P:].copy(), 8,
                                        m["bounds"][2], alibi,
                                        **{n: x for n, x in op_kw.items() if n != "alibi_slopes"}, return_lse=True)
    assert_bits_equal(lse[:, NP + 1:], dec_lse, "decode rows")
    assert_bits_equal(out[NP + 1:T], o_dec, "decode rows")

    # and into FlashInfer's layout inside wider rows: the gap row keeps what the caller had there
    buf = np.full((T, H + 2), SENTINEL, np.float32)
    out2, got = run(lse=buf[:, 1:1 + H].T)
    assert_bits_equal(out2, out)
    assert_bits_equal(np.delete(buf[:, 1:1 + H], NP, 0).T, np.delete(lse, NP, 1))
    assert (buf[NP] == SENTINEL).all() and (buf[:, [0, H + 1]] == SENTINEL).all()


def test_mixed_attention_returns_out_or_out_and_lse():
    """out alone without return_lse / lse, as before; (out, a new lse) with return_lse=True;
    (out, the caller's lse) with lse (and return_lse); the output bit for bit the same in all."""
    run, H, T = PROBLEMS["mixed"]()
    out0, none = run()
    assert none is None
    assert run(return_lse=False)[1] is None
    out1, new = run(return_lse=True)
    assert isinstance(new, np.ndarray) and new.dtype == np.float32 and new.shape == (H, T) and new.flags.c_contiguous
    mine = np.full((H, T), 7, np.float32)
    out2, got = run(lse=mine)
    assert got is mine
    for o in (out1, out2):
        assert_bits_equal(o, out0)
    assert_bits_equal(mine, new)


def test_mixed_attention_empty_decode_part_and_empty_batch():
    """No decodes: the lse covers the prefill tokens; nothing at all: an empty [num_heads, 0] lse."""
    run, H, T, m = mixed_problem(121, decodes=(), opts=None)
    out, lse = run(return_lse=True)
    assert lse.shape == (H, m["NP"]) and np.isfinite(lse).all()
    z = np.zeros((0, H, 32), np.float32)
    kz, kc = np.zeros((0, 2, 32), np.float32), np.zeros((2, 8, 2, 32), np.float32)
    got_out, got = pa.mixed_attention(z, kz, kz, kc, kc, np.zeros((0, 1), np.int32), np.zeros(0, np.int32),
                                      np.zeros(1, np.int32), 0, 0, 0, 0, 0, return_lse=True)
    assert got_out.shape == (0, H, 32) and got.shape == (H, 0) and got.dtype == np.float32


def test_mixed_attention_lse_refusals_write_nothing():
    run, H, T, m = mixed_problem(122, pad=1)
    NP = m["NP"]
    wide = np.full((H, T + 3), 7, np.float32)
    col, spill = np.full((H, 1), 7, np.float32), np.full(H * T, 7, np.float32)
    q = m["q"]
    q0 = q.copy()
    bad = [
        (np.full((T, H), 7, np.float32), rf"^mixed_attention: lse has shape \[{T}, {H}\]; expected \[{H}, {T}\] "
                                         r"\(\[num_heads, num_tokens\]"),
        (np.full((H, T + 1), 7, np.float32), rf"lse has shape \[{H}, {T + 1}\]; expected \[{H}, {T}\]"),  # q's rows
        (np.full((H, NP), 7, np.float32), rf"lse has shape \[{H}, {NP}\]; expected \[{H}, {T}\]"),
        (np.full((1, H, T), 7, np.float32), rf"lse has shape \[1, {H}, {T}\]"),
        (np.full((H, T), 7, np.float64), r"^mixed_attention: lse has dtype float64; expected float32$"),
        (np.full((H, T), 7, np.float16), r"lse has dtype float16; expected float32"),
        (FakeCuda(np.full((H, T), 7, np.float32)), r"^mixed_attention: lse is on cuda:0 but query is on cpu:0"),
        (as_strided(col, (H, T), (4, 0)), rf"^mixed_attention: lse has stride 0 in dimension 1 \(size {T}\), got "
                                          r"strides \[1, 0\]; an output takes positive strides only"),
        (as_strided(col, (H, T), (0, 0)), r"^mixed_attention: lse has stride 0 in dimension 0"),
        (wide[:, T - 1::-1], rf"^mixed_attention: lse has stride -1 in dimension 1 \(size {T}\)"),
        (wide[::-1, :T], r"^mixed_attention: lse has stride -\d+ in dimension 0"),
        # the library's own refusals
        (as_strided(spill, (H, T), (4, 4)), r"^mixed_attention: lse strides \(head 1, token 1\) put two \(head, "
                                            r"token\) pairs on one float"),
        (as_strided(spill, (H, T), (8, 4)), r"^mixed_attention: lse strides \(head 2, token 1\) put two"),
        (q.reshape(-1)[:H * T].reshape(H, T), r"^mixed_attention: .*lse overlaps query"),
        (_misaligned_lse(H, T), r"lse must be 4-byte aligned"),
    ]
    for lse, msg in bad:
        for kw in (dict(lse=lse), dict(lse=lse, return_lse=True)):
            with pytest.raises(ValueError, match=msg):
                run(**kw)
            np.testing.assert_array_equal(q, q0)
    assert (wide == 7).all() and (col == 7).all() and (spill == 7).all()
    # an lse over the output: the run's own out is made inside run, so pass one by hand
    out = np.full_like(q, 7)
    with pytest.raises(ValueError, match=r"^mixed_attention: .*lse overlaps out"):
        pa.mixed_attention(q, m["k"], m["v"], m["kc"], m["vc"], m["pg"].block_tables, m["seq_lens"], m["start"],
                           m["P"], NP, *m["bounds"], num_decode_tokens=len(m["decodes"]), out=out,
                           lse=out.reshape(-1)[5:5 + H * T].reshape(H, T))
    assert (out == 7).all()


# ---- the CUDA path's wiring (no kernel runs) ---------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch):
    f = FakeLib()
    monkeypatch.setattr(pa.ops, "lib", f)
    return f


@pytest.mark.parametrize("op", list(PROBLEMS))
def test_strides_reach_the_cuda_launches(fake, op):
    """The view's address and element strides go into the launch's params: FlashInfer's layout as
    head stride 1 and token stride num_heads, a column slice with the wide array's row stride; no lse
    is NULL with strides 0; a broadcast or reversed lse is refused before any call."""
    run, H, T = PROBLEMS[op]()
    launch = LAUNCHES[op]
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
        assert run(FakeCuda, lse=flse, stream=STREAM)[1] is flse
        p, stream = fake.launch(launch)[0]._obj, fake.launch(launch)[-1]
        assert stream == STREAM and p.lse == lse.ctypes.data, strides
        assert (p.lse_head_stride, p.lse_token_stride) == strides
        fake.calls.clear()
    run(FakeCuda)
    p = fake.launch(launch)[0]._obj
    assert p.lse is None and (p.lse_head_stride, p.lse_token_stride) == (0, 0)
    fake.calls.clear()
    for lse in (as_strided(np.zeros((H, 1), np.float32), (H, T), (4, 0)), np.zeros((H, T), np.float32)[:, ::-1]):
        with pytest.raises(ValueError, match=r"lse has stride -?[01] in dimension 1"):
            run(FakeCuda, lse=FakeCuda(lse))
    assert fake.calls == []
