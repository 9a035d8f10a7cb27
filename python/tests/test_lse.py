"""The log-sum-exp output of prompt_attention and context_attention_fwd (return_lse= / lse=) on
NumPy arrays (the CPU reference) against attention computed here in float64: each query row's
natural log of its softmax denominator, log(e^sinks[h] + sum_j e^x_j) over the keys it sees
(include/pagedattn/prefill.h), -inf for a row with neither key nor sink, sinks[h] for one with a
sink but no key; cascade attention (two calls over disjoint keys, merged by merge_attn_states)
against one call over all of them; the refusals; and the CUDA path's wiring (a stand-in library,
as test_cuda_path.py). tests/test_gpu.py runs it on a GPU."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import pagedattn as pa
from refattn import Paged, attend
from test_cuda_path import STREAM, FakeLib
from test_dlpack import Producer, bf16_to_f32, to_bf16_bits
from test_errors import FakeCuda
from test_merge import Rows

DTYPES = ["float32", "float16", "bfloat16"]
# outputs against float64 attention on the inputs as rounded to the dtype (the output rounded once)
TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
# merged halves against one call: each half rounded to the dtype, then the merge rounded once
LOOSE = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}
SINKS = [1.5, -np.inf, 3.0, 0.0, -0.5, 2.0]  # per head (the first H of them); -inf is no sink
# heads 1 and 2 far above the logits: e^(sink - max) overflows float32 (past about 88) and, at 800,
# float64 (past 709); their rows are zeros and their lse the sink
FAR_SINKS = [1.5, 100.0, 800.0, 0.0]


def attend_lse(q, K, V, scale, q_pos, alibi=None, window=0, soft_cap=0.0, causal=True, sinks=None):
    """(out [nq, H, d], lse [H, nq]) of q [nq, H, d] over K, V [nk, KVH, d] by the definition, in
    float64: query i at position q_pos[i], key j at j; causal hides keys j > q_pos[i], the window
    keys j <= q_pos[i] - window and, not causal, keys j >= q_pos[i] + window; ALiBi adds
    -slope * |j - q_pos[i]| after the soft cap; a sink is one more term of the denominator with
    no value."""
    q, K, V = (np.asarray(a, np.float64) for a in (q, K, V))
    nq, H, d = q.shape
    nk, kvh = K.shape[0], K.shape[1]
    g = H // kvh
    out, lse = np.zeros((nq, H, d)), np.full((H, nq), -np.inf)
    j = np.arange(nk)
    for i in range(nq):
        seen = j <= q_pos[i] if causal else np.ones(nk, bool)
        if window:
            seen &= np.abs(q_pos[i] - j) < window if not causal else q_pos[i] - j < window
        for h in range(H):
            x = K[seen, h // g] @ q[i, h] * scale
            if soft_cap:
                x = soft_cap * np.tanh(x / soft_cap)
            if alibi is not None:
                x = x - np.float64(alibi[h]) * np.abs(j[seen] - q_pos[i])
            terms = np.append(x, np.float64(sinks[h])) if sinks is not None else x
            if x.size == 0:  # no key: zeros, and the sink alone (or nothing) in the denominator
                lse[h, i] = terms[0] if terms.size else -np.inf
                continue
            m = terms.max()
            e = np.exp(terms - m)
            out[i, h] = e[:x.size] @ V[seen, h // g] / e.sum()
            lse[h, i] = m + np.log(e.sum())
    return out, lse


def _cu(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


def _round(values, dtype):
    """values (float32) as the dtype holds them, in float32."""
    if dtype == "bfloat16":
        return bf16_to_f32(to_bf16_bits(values)).reshape(values.shape)
    return values.astype(dtype).astype(np.float32)


def test_reference_agrees_with_refattn():
    """attend_lse's outputs are refattn.attend's (its lse is checked against the library below)."""
    rng = np.random.default_rng(70)
    q, K, V = rng.standard_normal((6, 4, 8)), rng.standard_normal((9, 2, 8)), rng.standard_normal((9, 2, 8))
    alibi = np.array([0.1, 0.2, 0.3, 0.4])
    for kw in (dict(), dict(causal=False), dict(alibi=alibi, window=3, soft_cap=0.7), dict(sinks=SINKS[:4]),
               dict(causal=False, alibi=alibi, window=3)):
        pos = [3, 4, 5, 6, 7, 8]
        out, lse = attend_lse(q, K, V, 0.3, pos, **kw)
        np.testing.assert_allclose(out, attend(q, K, V, 0.3, q_pos=pos, **kw), rtol=1e-12, atol=1e-12)
        assert np.isfinite(lse).all()


# ---- prompt attention against the definition ---------------------------------------------------------------

PROMPT_CASES = [  # id, attn_type, heads, kv heads, head size, q lens, k lens (None: self-attention), options
    ("causal-gqa", "decoder", 4, 2, 32, [5, 1, 9], None, {}),
    ("encoder", "encoder", 4, 4, 16, [7, 3], None, {}),
    ("cross", "encoder_decoder", 4, 1, 32, [3, 7, 2], [10, 4, 0], {}),  # the last sequence has no key
    ("causal-longer-keys", "decoder", 6, 2, 16, [3, 4], [8, 4], {}),  # bottom-right causal over cu_seqlens_k
    ("alibi-window-cap", "decoder", 4, 2, 32, [9, 20, 1], None, dict(alibi=True, window=5, soft_cap=0.8)),
    ("sinks-window", "encoder_only", 4, 2, 16, [6, 11], None, dict(sinks=True, window=4)),
    ("encoder-alibi-window", "encoder", 4, 2, 16, [9, 3], None, dict(alibi=True, window=3)),
    ("sinks-cross-alibi-cap", "encoder_decoder", 6, 3, 16, [2, 5], [0, 6], dict(sinks=True, alibi=True,
                                                                                soft_cap=1.5)),
    ("causal-sinks-window", "decoder", 4, 2, 16, [12, 3], None, dict(sinks=True, window=3)),
]


def _options(rng, H, opts):
    """The op's keyword arguments and the reference's for one case's options."""
    op, ref = {}, {}
    if opts.get("alibi"):
        op["alibi_slopes"] = ref["alibi"] = rng.uniform(0.05, 0.5, H).astype(np.float32)
    if opts.get("sinks"):
        op["sinks"] = ref["sinks"] = np.array(SINKS[:H], np.float32)
    if opts.get("window"):
        op["sliding_window"] = ref["window"] = opts["window"]
    if opts.get("soft_cap"):
        op["logits_soft_cap"] = ref["soft_cap"] = opts["soft_cap"]
    return op, ref


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("attn_type,H,KVH,D,q_lens,k_lens,opts", [c[1:] for c in PROMPT_CASES],
                         ids=[c[0] for c in PROMPT_CASES])
def test_prompt_attention_lse_matches_the_definition(dtype, attn_type, H, KVH, D, q_lens, k_lens, opts):
    """float32 / float16 ask with return_lse=True (a new NumPy lse comes back); bfloat16 (no NumPy
    dtype: a DLPack producer the package cannot allocate for) gives out and lse."""
    rng = np.random.default_rng(71)
    self_attn = k_lens is None
    k_lens = q_lens if self_attn else k_lens
    T, NK = sum(q_lens), sum(k_lens)
    q, k, v = (Rows(1.5 * rng.standard_normal(s).astype(np.float32), dtype)
               for s in ((T, H, D), (NK, KVH, D), (NK, KVH, D)))
    cq, ck = _cu(q_lens), _cu(k_lens)
    kw, ref_kw = _options(rng, H, opts)
    if not self_attn:
        kw.update(cu_seqlens_k=ck, max_seqlen_k=max(k_lens))
    if dtype == "bfloat16":
        out, lse = Rows(np.full((T, H, D), 7.0), dtype), np.full((H, T), 7, np.float32)
        got = pa.prompt_attention(q.tensor, k.tensor, v.tensor, cq, max(q_lens), attn_type=attn_type,
                                  softmax_scale=0.3, out=out.tensor, lse=lse, **kw)
        assert got[0] is out.tensor and got[1] is lse
        got_out = out.values()
    else:
        got_out, lse = pa.prompt_attention(q.tensor, k.tensor, v.tensor, cq, max(q_lens), attn_type=attn_type,
                                           softmax_scale=0.3, return_lse=True, **kw)
        assert isinstance(lse, np.ndarray) and lse.dtype == np.float32 and lse.shape == (H, T)
        assert lse.flags.c_contiguous
    qv, kv, vv = q.values(), k.values(), v.values()
    for s, (n, m) in enumerate(zip(q_lens, k_lens)):
        a, b = cq[s], cq[s + 1]
        ref_out, ref_lse = attend_lse(qv[a:b], kv[ck[s]:ck[s + 1]], vv[ck[s]:ck[s + 1]], 0.3,
                                      [m - n + i for i in range(n)], causal=attn_type == "decoder", **ref_kw)
        np.testing.assert_allclose(lse[:, a:b], ref_lse, rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(np.asarray(got_out[a:b], np.float64), ref_out, rtol=TOL[dtype], atol=TOL[dtype])
    assert np.isfinite(lse).any()


def test_without_lse_prompt_attention_returns_out_alone():
    rng = np.random.default_rng(72)
    q = rng.standard_normal((5, 2, 8)).astype(np.float32)
    out = np.zeros_like(q)
    assert pa.prompt_attention(q, q[:, :1], q[:, :1], _cu([5]), 5, out=out) is out
    assert pa.prompt_attention(q, q[:, :1], q[:, :1], _cu([5]), 5, out=out, return_lse=False) is out
    got = pa.prompt_attention(q, q[:, :1], q[:, :1], _cu([5]), 5, out=out, return_lse=True)
    assert isinstance(got, tuple) and len(got) == 2 and got[0] is out


# ---- rows without a key ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("with_sinks", [False, True])
def test_rows_without_a_key(with_sinks):
    """A causal prompt with more queries than keys (query i at k_len - q_len + i < 0 sees none), a
    sequence without keys, and a padding row past cu_seqlens_q[-1] that no sequence covers: the
    rows without a key get zeros and lse -inf, or sinks[h] with sinks (-inf for a head without
    one); the padding row keeps a caller's lse (unwritten) and is -inf in a new one."""
    rng = np.random.default_rng(73)
    H, KVH, D, q_lens, k_lens = 4, 2, 16, [5, 2], [2, 0]
    T = sum(q_lens) + 1  # one padding row
    q = rng.standard_normal((T, H, D)).astype(np.float32)
    k, v = rng.standard_normal((2, sum(k_lens), KVH, D)).astype(np.float32)
    sinks = np.array(SINKS[:H], np.float32) if with_sinks else None
    cq, ck = _cu(q_lens), _cu(k_lens)
    args = (q, k, v, cq, max(q_lens), ck, max(k_lens))
    out, lse = pa.prompt_attention(*args, softmax_scale=0.5, sinks=sinks, return_lse=True)
    mine, mine_lse = np.full_like(q, 7), np.full((H, T), 7, np.float32)
    got = pa.prompt_attention(*args, softmax_scale=0.5, sinks=sinks, out=mine, lse=mine_lse)
    assert got[0] is mine and got[1] is mine_lse
    empty_rows = [0, 1, 2, 5, 6]  # sequence 0's rows at positions -3, -2, -1; sequence 1 has no key
    want = np.full((H, len(empty_rows)), -np.inf, np.float32)
    if with_sinks:
        want[:] = sinks[:, None]
    np.testing.assert_array_equal(lse[:, empty_rows], want)
    np.testing.assert_array_equal(mine_lse[:, empty_rows], want)
    assert (out[empty_rows] == 0).all() and (mine[empty_rows] == 0).all()
    ref_out, ref_lse = attend_lse(q[:5], k[:2], v[:2], 0.5, [-3, -2, -1, 0, 1], sinks=sinks)
    np.testing.assert_allclose(lse[:, :5], ref_lse, rtol=1e-6, atol=2e-6)
    np.testing.assert_allclose(out[:5], ref_out, rtol=1e-5, atol=1e-5)
    assert np.isfinite(lse[:, 3:5]).all()
    # the padding row: not written
    assert (lse[:, 7] == -np.inf).all() and (out[7] == 0).all()
    assert (mine_lse[:, 7] == 7).all() and (mine[7] == 7).all()


# ---- cascade: two calls over disjoint keys, merged ----------------------------------------------------------------


def _pack(parts):
    """Rows of the given [n_s, ...] arrays back to back, and their cu_seqlens."""
    return np.concatenate(parts), _cu([len(p) for p in parts])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["split-keys", "shared-prefix"])
@pytest.mark.parametrize("with_sinks", [False, True, "far"])
def test_cascade_merges_into_one_call_over_all_keys(dtype, mode, with_sinks):
    """split-keys: each sequence's keys cut at a point of its own (0 and k_len included, so one part
    has no key) into two non-causal calls with cu_seqlens_k of their own; shared-prefix: cascade
    attention, a prefix of keys every sequence sees (a non-causal call) and each sequence's own
    keys (a causal prompt), against one causal call over prefix + own keys (bottom-right aligned,
    through cu_seqlens_k). The sinks go to the first part only. merge_attn_states of the two
    (output, lse) pairs is the one call's output, and its merged lse the call's lse. "far" sinks
    (FAR_SINKS): the first part's lse of those heads must be the sink, not +inf, which the merge
    would read as a part with no key."""
    rng = np.random.default_rng(74)
    H, KVH, D = 4, 2, 32
    sinks = dict(sinks=np.array((FAR_SINKS if with_sinks == "far" else SINKS)[:H], np.float32)) if with_sinks else {}
    causal = mode == "shared-prefix"
    if causal:
        q_lens = [4, 1, 6]
        prefix = _round(rng.standard_normal((2, 7, KVH, D)).astype(np.float32), dtype)  # K and V of the prefix
        own_k = [_round(rng.standard_normal((n, KVH, D)).astype(np.float32), dtype) for n in q_lens]
        own_v = [_round(rng.standard_normal((n, KVH, D)).astype(np.float32), dtype) for n in q_lens]
        ka, kb = [prefix[0]] * len(q_lens), own_k
        va, vb = [prefix[1]] * len(q_lens), own_v
        kf = [np.concatenate([p, o]) for p, o in zip(ka, kb)]
        vf = [np.concatenate([p, o]) for p, o in zip(va, vb)]
    else:
        q_lens, k_lens, cuts = [4, 3, 5, 2], [9, 6, 7, 5], [3, 0, 7, 4]
        kf = [_round(rng.standard_normal((n, KVH, D)).astype(np.float32), dtype) for n in k_lens]
        vf = [_round(rng.standard_normal((n, KVH, D)).astype(np.float32), dtype) for n in k_lens]
        ka, kb = [x[:c] for x, c in zip(kf, cuts)], [x[c:] for x, c in zip(kf, cuts)]
        va, vb = [x[:c] for x, c in zip(vf, cuts)], [x[c:] for x, c in zip(vf, cuts)]
    T = sum(q_lens)
    q = Rows(2 * rng.standard_normal((T, H, D)).astype(np.float32), dtype)
    cq = _cu(q_lens)

    def call(keys, values, attn_type, sink_kw):
        (kk, ck), (vv, _) = _pack(keys), _pack(values)
        out, lse = Rows(np.full((T, H, D), 7.0), dtype), np.full((H, T), 7, np.float32)
        pa.prompt_attention(q.tensor, Rows(kk, dtype).tensor, Rows(vv, dtype).tensor, cq, max(q_lens), ck,
                            max(len(x) for x in keys), attn_type=attn_type, softmax_scale=0.25, out=out.tensor,
                            lse=lse, **sink_kw)
        return out, lse

    part_a, lse_a = call(ka, va, "encoder_decoder", sinks)
    part_b, lse_b = call(kb, vb, "decoder" if causal else "encoder_decoder", {})
    whole, lse_w = call(kf, vf, "decoder" if causal else "encoder_decoder", sinks)
    merged, lse_m = Rows(np.full((T, H, D), 7.0), dtype), np.full((H, T), 7, np.float32)
    pa.merge_attn_states(merged.tensor, part_a.tensor, lse_a, part_b.tensor, lse_b, lse_m)
    tol = LOOSE[dtype]
    np.testing.assert_allclose(merged.values(), whole.values(), rtol=tol, atol=tol)
    np.testing.assert_allclose(lse_m, lse_w, rtol=1e-6, atol=1e-5)
    # and both against the definition, over all keys
    qv = q.values()
    for s, n in enumerate(q_lens):
        a, b, m = cq[s], cq[s + 1], len(kf[s])
        ref_out, ref_lse = attend_lse(qv[a:b], kf[s], vf[s], 0.25, [m - n + i for i in range(n)], causal=causal,
                                      **sinks)
        np.testing.assert_allclose(merged.values()[a:b], ref_out, rtol=tol, atol=tol)
        np.testing.assert_allclose(lse_m[:, a:b], ref_lse, rtol=1e-6, atol=1e-5)
    # the parts differ from the whole: a merge that returned one part, or lse that did not weigh
    # them, would fail above
    whole_v = whole.values()
    assert np.abs(whole_v - part_a.values()).max() > 10 * tol and np.abs(whole_v - part_b.values()).max() > 10 * tol
    if not causal:  # sequence 1's first part and sequence 2's second part have no key
        rows1, rows2 = slice(cq[1], cq[2]), slice(cq[2], cq[3])
        want = np.broadcast_to(sinks["sinks"][:, None] if with_sinks else -np.inf, (H, q_lens[1]))
        np.testing.assert_array_equal(lse_a[:, rows1], want)
        assert (part_a.values()[rows1] == 0).all()
        assert (lse_b[:, rows2] == -np.inf).all() and (part_b.values()[rows2] == 0).all()


# ---- context attention against the definition -----------------------------------------------------------------

CONTEXT_CASES = [  # layout, dtype, options
    ("vllm", "float32", {}),
    ("nhd", "float16", dict(sinks=True, alibi=True, soft_cap=1.2, window=11)),
    ("hnd", "float32", dict(window=6)),
    ("nhd", "bfloat16", dict(sinks=True)),
]


@pytest.mark.parametrize("layout,dtype,opts", CONTEXT_CASES)
def test_context_attention_lse_matches_the_definition(layout, dtype, opts):
    """Each new token attends to its sequence's cached context and, causally, to the new tokens up
    to itself (position context_len + i); lse [num_heads, num_tokens] over those keys."""
    rng = np.random.default_rng(75)
    H, KVH, D, BS = 4, 2, 32, 8
    ctx_lens, q_lens = [0, 13, 24], [5, 3, 9]
    store = "float16" if dtype == "float16" else "float32"  # the vLLM layout's x depends on the element size
    pg = Paged(rng, ctx_lens, KVH, D, BS, store, table_width=5)
    for s in range(len(ctx_lens)):
        pg.K[s], pg.V[s] = _round(pg.K[s].astype(np.float32), dtype), _round(pg.V[s].astype(np.float32), dtype)
    kc, vc = pg.fill(layout)
    T = sum(q_lens)
    q, k, v = (Rows(rng.standard_normal(s).astype(np.float32), dtype) for s in ((T, H, D), (T, KVH, D), (T, KVH, D)))
    o = Rows(np.full((T, H, D), 7.0), dtype)
    start = _cu(q_lens)
    seq_lens = np.array([c + n for c, n in zip(ctx_lens, q_lens)], np.int32)
    kw, ref_kw = _options(rng, H, opts)
    if dtype == "bfloat16":  # the flash layout's cache as bf16 DLPack producers (logical [nb, bs, h, d])
        kc, vc = Rows(np.ascontiguousarray(kc), dtype).tensor, Rows(np.ascontiguousarray(vc), dtype).tensor
    args = (q.tensor, k.tensor, v.tensor, o.tensor, "auto", kc, vc, pg.block_tables, start, seq_lens,
            int(seq_lens.max()), max(q_lens))
    if dtype == "bfloat16":
        lse = np.full((H, T), 7, np.float32)
        assert pa.context_attention_fwd(*args, sm_scale=0.3, lse=lse, **kw) is lse
    else:
        lse = pa.context_attention_fwd(*args, sm_scale=0.3, return_lse=True, **kw)
        assert isinstance(lse, np.ndarray) and lse.dtype == np.float32 and lse.shape == (H, T)
    qv, kv, vv = q.values(), k.values(), v.values()
    for s, (c, n) in enumerate(zip(ctx_lens, q_lens)):
        a, b = start[s], start[s + 1]
        ref_out, ref_lse = attend_lse(qv[a:b], np.concatenate([pg.K[s], kv[a:b]]), np.concatenate([pg.V[s], vv[a:b]]),
                                      0.3, [c + i for i in range(n)], **ref_kw)
        np.testing.assert_allclose(lse[:, a:b], ref_lse, rtol=1e-6, atol=2e-6)
        np.testing.assert_allclose(o.values()[a:b], ref_out, rtol=TOL[dtype], atol=TOL[dtype])


def _context_problem(seed=76):
    rng = np.random.default_rng(seed)
    H, KVH, D, BS = 2, 1, 16, 8
    pg = Paged(rng, [5], KVH, D, BS, np.float32)
    kc, vc = pg.fill("nhd")
    q = rng.standard_normal((3, H, D)).astype(np.float32)
    k, v = rng.standard_normal((2, 3, KVH, D)).astype(np.float32)
    o = np.full_like(q, 7)
    return [q, k, v, o, "auto", kc, vc, pg.block_tables, np.array([0, 3], np.int32), np.array([8], np.int32), 8, 3]


def test_context_attention_returns_none_without_lse():
    args = _context_problem()
    assert pa.context_attention_fwd(*args) is None
    assert pa.context_attention_fwd(*args, return_lse=False) is None
    first = args[3].copy()
    lse = pa.context_attention_fwd(*args, return_lse=True)
    assert lse.shape == (2, 3) and np.isfinite(lse).all()
    np.testing.assert_array_equal(args[3], first)  # the same output with the lse asked for


# ---- refusals ------------------------------------------------------------------------------------------------------


def _misaligned_lse(H, T):
    """A float32 [H, T] DLPack tensor one byte into its buffer (not 4-byte aligned)."""
    store = np.zeros(4 * H * T + 4, np.uint8)
    return Producer(store, (H, T), 2, 32, 1)


def test_prompt_attention_lse_refusals_write_nothing():
    rng = np.random.default_rng(77)
    T, H, KVH, D = 6, 2, 1, 8
    q = rng.standard_normal((T, H, D)).astype(np.float32)
    k = rng.standard_normal((T, KVH, D)).astype(np.float32)
    v = rng.standard_normal((T, KVH, D)).astype(np.float32)
    cu = np.array([0, 4, 6], np.int32)
    out = np.full((T, H, D), 7, np.float32)
    q0, k0 = q.copy(), k.copy()
    wide = np.full((H, T + 3), 7, np.float32)
    row, spill = np.full((1, T), 7, np.float32), np.full(H * T, 7, np.float32)
    bad = [
        (np.full((T, H), 7, np.float32), r"^prompt_attention: lse has shape \[6, 2\]; expected \[2, 6\] "
                                         r"\(\[num_heads, num_tokens\]"),
        (np.full((1, H, T), 7, np.float32), r"lse has shape \[1, 2, 6\]; expected \[2, 6\]"),
        (np.full((H, T - 1), 7, np.float32), r"lse has shape \[2, 5\]; expected \[2, 6\]"),
        (np.full((H, T), 7, np.float64), r"^prompt_attention: lse has dtype float64; expected float32$"),
        (np.full((H, T), 7, np.float16), r"lse has dtype float16; expected float32"),
        # strided views pass (test_lse_strides.py) but a broadcast or reversed dimension does not
        (as_strided(row, (H, T), (0, 4)), r"^prompt_attention: lse has stride 0 in dimension 0 \(size 2\), got "
                                          r"strides \[0, 1\]; an output takes positive strides only"),
        (wide[:, T - 1::-1], r"lse has stride -1 in dimension 1 \(size 6\), got strides \[9, -1\]"),
        (FakeCuda(np.full((H, T), 7, np.float32)), r"^prompt_attention: lse is on cuda:0 but q is on cpu:0"),
        # the library's own refusals
        (out.reshape(-1)[:H * T].reshape(H, T), r"^prompt_attention: lse overlaps out"),
        (out.reshape(-1)[5:5 + H * T].reshape(H, T), r"lse overlaps out"),
        (q.reshape(-1)[-H * T:].reshape(H, T), r"lse overlaps query"),
        (k.reshape(-1)[:H * T].reshape(H, T), r"lse overlaps key"),
        (v.reshape(-1)[-H * T:].reshape(H, T), r"lse overlaps value"),
        (_misaligned_lse(H, T), r"lse must be 4-byte aligned"),
        (as_strided(spill, (H, T), (4, 4)), r"^prompt_attention: lse strides \(head 1, token 1\) put two \(head, "
                                            r"token\) pairs on one float"),
    ]
    for lse, msg in bad:
        for kw in (dict(lse=lse), dict(lse=lse, return_lse=True)):
            with pytest.raises(ValueError, match=msg):
                pa.prompt_attention(q, k, v, cu, 4, out=out, **kw)
            assert (out == 7).all(), msg
            np.testing.assert_array_equal(q, q0)
            np.testing.assert_array_equal(k, k0)
    assert (wide == 7).all() and (row == 7).all() and (spill == 7).all()


def test_context_attention_lse_refusals_write_nothing():
    args = _context_problem(78)
    o = args[3]
    H, T = 2, 3
    spill = np.full(H * T, 7, np.float32)
    bad = [
        (np.full((T, H), 7, np.float32), r"^context_attention_fwd: lse has shape \[3, 2\]; expected \[2, 3\]"),
        (np.full((H, T), 7, np.float64), r"^context_attention_fwd: lse has dtype float64; expected float32"),
        (as_strided(spill[:1], (H, T), (0, 0)), r"^context_attention_fwd: lse has stride 0 in dimension 0"),
        (np.full((H, T), 7, np.float32)[:, ::-1], r"^context_attention_fwd: lse has stride -1 in dimension 1"),
        (as_strided(spill, (H, T), (8, 4)), r"^context_attention_fwd: context_attention: lse strides \(head 2, "
                                            r"token 1\) put two"),
        (FakeCuda(np.full((H, T), 7, np.float32)), r"^context_attention_fwd: lse is on cuda:0 but q is on cpu:0"),
        (o.reshape(-1)[:H * T].reshape(H, T), r"^context_attention_fwd: .*lse overlaps out"),
        (args[0].reshape(-1)[:H * T].reshape(H, T), r"lse overlaps query"),
        (_misaligned_lse(H, T), r"lse must be 4-byte aligned"),
    ]
    for lse, msg in bad:
        with pytest.raises(ValueError, match=msg):
            pa.context_attention_fwd(*args, lse=lse)
        assert (o == 7).all(), msg
    assert (spill == 7).all()


def test_empty_batch_gives_an_empty_lse():
    H, KVH, D = 3, 1, 16
    z = np.zeros((0, H, D), np.float32)
    kz = np.zeros((0, KVH, D), np.float32)
    out, lse = pa.prompt_attention(z, kz, kz, np.zeros(1, np.int32), 0, return_lse=True)
    assert out.shape == (0, H, D) and lse.shape == (H, 0) and lse.dtype == np.float32
    mine = np.zeros((H, 0), np.float32)
    assert pa.prompt_attention(z, kz, kz, np.zeros(1, np.int32), 0, lse=mine)[1] is mine


# ---- the CUDA path's wiring (no kernel runs) ---------------------------------------------------------------------


@pytest.fixture
def fake(monkeypatch):
    f = FakeLib()
    monkeypatch.setattr(pa.ops, "lib", f)
    return f


def test_lse_reaches_the_cuda_launches(fake):
    """On CUDA arrays the lse's address goes into the params of the launch (NULL without one), the
    caller's lse comes back, and an lse on another device is refused before any launch."""
    rng = np.random.default_rng(79)
    T, H, KVH, D = 5, 4, 2, 32
    q = rng.standard_normal((T, H, D)).astype(np.float16)
    k = rng.standard_normal((T, KVH, D)).astype(np.float16)
    cu = np.array([0, T], np.int32)
    out, lse = np.zeros_like(q), np.zeros((H, T), np.float32)
    fq, fk, fcu, fout, flse = (FakeCuda(a) for a in (q, k, cu, out, lse))
    got = pa.prompt_attention(fq, fk, fk, fcu, T, out=fout, lse=flse, stream=STREAM)
    assert got[0] is fout and got[1] is flse
    ref, stream = fake.launch("pa_prompt_attention")
    assert stream == STREAM and ref._obj.lse == lse.ctypes.data and ref._obj.out == out.ctypes.data
    fake.calls.clear()
    assert pa.prompt_attention(fq, fk, fk, fcu, T, out=fout) is fout
    assert fake.launch("pa_prompt_attention")[0]._obj.lse is None
    fake.calls.clear()
    with pytest.raises(ValueError, match="prompt_attention: lse is on cpu:0 but q is on cuda:0"):
        pa.prompt_attention(fq, fk, fk, fcu, T, out=fout, lse=lse)
    with pytest.raises(ValueError, match="prompt_attention: lse is on cuda:1 but q is on cuda:0"):
        pa.prompt_attention(fq, fk, fk, fcu, T, out=fout, lse=FakeCuda(lse, 1))
    assert fake.calls == []

    args = [FakeCuda(a) if isinstance(a, np.ndarray) else a for a in _context_problem(80)]
    clse = np.zeros((2, 3), np.float32)
    fclse = FakeCuda(clse)
    assert pa.context_attention_fwd(*args, lse=fclse, stream=STREAM) is fclse
    ref, stream = fake.launch("pa_context_attention")
    assert stream == STREAM and ref._obj.lse == clse.ctypes.data
    fake.calls.clear()
    assert pa.context_attention_fwd(*args) is None
    assert fake.launch("pa_context_attention")[0]._obj.lse is None
    fake.calls.clear()
    with pytest.raises(ValueError, match="context_attention_fwd: lse is on cpu:0 but q is on cuda:0"):
        pa.context_attention_fwd(*args, lse=clse)
    assert fake.calls == []


# ---- cache_only: cascade attention over a shared prefix in the paged cache ---------------------------------------


@pytest.mark.parametrize("with_sinks", [False, True])
def test_cascade_over_a_shared_prefix_in_the_cache(with_sinks):
    """vLLM's cascade attention over a paged cache: every sequence's first P cached tokens are one
    shared prefix (the same blocks). The prefix runs once with cache_only=True, as one sequence of all
    the batch's queries (no mask: k and v None); each sequence's own keys run with its block table past
    the prefix's blocks. Each part against float64 attention, and the two merged by merge_attn_states
    against float64 attention over each whole sequence (prefix, own cached tokens, new tokens causally)."""
    rng = np.random.default_rng(90 + with_sinks)
    H, KVH, D, BS, P = 4, 2, 32, 8, 16
    ctx_lens, q_lens = [24, 16, 40], [5, 1, 7]
    pg = Paged(rng, ctx_lens, KVH, D, BS, np.float32, table_width=6)
    for s in range(1, 3):  # the shared prefix: sequence 0's blocks and tokens
        pg.block_tables[s, :P // BS] = pg.block_tables[0, :P // BS]
        pg.K[s][:P], pg.V[s][:P] = pg.K[0][:P], pg.V[0][:P]
    kc, vc = pg.fill("nhd")
    T = sum(q_lens)
    q = rng.standard_normal((T, H, D)).astype(np.float32)
    k, v = rng.standard_normal((2, T, KVH, D)).astype(np.float32)
    start = _cu(q_lens)
    sinks = np.array(SINKS[:H], np.float32) if with_sinks else None

    out_a = np.full((T, H, D), 7, np.float32)  # the prefix, once for every query
    lse_a = pa.context_attention_fwd(q, None, None, out_a, "auto", kc, vc, pg.block_tables[:1].copy(),
                                     np.array([0, T], np.int32), np.array([P], np.int32), P, T, sm_scale=0.3,
                                     sinks=sinks, return_lse=True, cache_only=True)
    ref_a, ref_lse_a = attend_lse(q, pg.K[0][:P], pg.V[0][:P], 0.3, [0] * T, causal=False, sinks=sinks)
    np.testing.assert_allclose(out_a, ref_a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(lse_a, ref_lse_a, rtol=1e-6, atol=2e-6)

    own = np.zeros_like(pg.block_tables)  # each sequence's table past the prefix
    own[:, :-(P // BS)] = pg.block_tables[:, P // BS:]
    seq_b = np.array([c - P + n for c, n in zip(ctx_lens, q_lens)], np.int32)
    out_b = np.full((T, H, D), 7, np.float32)
    lse_b = pa.context_attention_fwd(q, k, v, out_b, "auto", kc, vc, own, start, seq_b, int(seq_b.max()),
                                     max(q_lens), sm_scale=0.3, return_lse=True)
    merged, merged_lse = np.empty_like(out_a), np.empty_like(lse_a)
    pa.merge_attn_states(merged, out_a, lse_a, out_b, lse_b, merged_lse)
    for s, (c, n) in enumerate(zip(ctx_lens, q_lens)):
        a, b = start[s], start[s + 1]
        ref, ref_lse = attend_lse(q[a:b], np.concatenate([pg.K[s], k[a:b]]), np.concatenate([pg.V[s], v[a:b]]), 0.3,
                                  [c + i for i in range(n)], sinks=sinks)
        np.testing.assert_allclose(merged[a:b], ref, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(merged_lse[:, a:b], ref_lse, rtol=1e-6, atol=4e-6)


def test_cache_only_needs_no_keys_and_refuses_what_needs_positions():
    args = _context_problem()
    q, o = args[0], args[3]
    args[9] = np.array([5], np.int32)  # the 5 cached tokens alone
    lse = pa.context_attention_fwd(q, None, None, o, *args[4:], return_lse=True, cache_only=True)
    assert np.isfinite(lse).all() and np.isfinite(o).all()
    with pytest.raises(ValueError, match=r"k and v are required \(None only with cache_only=True\)"):
        pa.context_attention_fwd(q, None, None, o, *args[4:])
    o[...] = 7
    with pytest.raises(ValueError, match="cache_only takes no ALiBi or sliding window"):
        pa.context_attention_fwd(q, None, None, o, *args[4:], sliding_window=2, cache_only=True)
    assert (o == 7).all()
