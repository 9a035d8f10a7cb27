"""merge_attn_states on NumPy arrays (the CPU reference) against attention computed
directly in float64: the keys split into two disjoint parts, each part's output and
natural-log logsumexp formed here, merged by the op, and compared with attention over
all the keys (include/pagedattn/merge.h's semantics and edge cases)."""
import numpy as np
import pytest

import pagedattn as pa
from test_dlpack import Producer, bf16_to_f32, to_bf16_bits

# dtype -> (one rounding of the merged row: rtol, atol), (against attention over all keys:
# the parts rounded to dtype once, then the merge rounded once)
TIGHT = {"float32": (1e-6, 1e-6), "float16": (2 ** -10, 1e-6), "bfloat16": (2 ** -7, 1e-5)}
LOOSE = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


def attend_parts(rng, T, H, D, n_keys, split, scale=0.5):
    """Q [T, H, D], K, V [n_keys, H, D]; per token and head, the softmax attention over keys
    [0, split) (prefix), [split, n_keys) (suffix) and all of them, with each one's logsumexp
    [H, T], all in float64."""
    q = rng.standard_normal((T, H, D))
    k = rng.standard_normal((n_keys, H, D))
    v = rng.standard_normal((n_keys, H, D))
    s = np.einsum("thd,nhd->thn", q, k) * scale  # [T, H, n_keys]

    def part(lo, hi):
        x = s[:, :, lo:hi]
        m = x.max(axis=2, keepdims=True)
        e = np.exp(x - m)
        out = np.einsum("thn,nhd->thd", e / e.sum(axis=2, keepdims=True), v[lo:hi])
        lse = np.ascontiguousarray((m[:, :, 0] + np.log(e.sum(axis=2))).T)  # [H, T]
        return out, lse

    return part(0, split), part(split, n_keys), part(0, n_keys)


def merge64(a, la, b, lb):
    """The merge by its definition, in float64, from the stored parts (a, b [T, H, D]; la, lb [H, T])."""
    la, lb = np.asarray(la, np.float64).T[:, :, None], np.asarray(lb, np.float64).T[:, :, None]
    m = np.maximum(la, lb)
    ea, eb = np.exp(la - m), np.exp(lb - m)
    return (ea * np.asarray(a, np.float64) + eb * np.asarray(b, np.float64)) / (ea + eb)


class Rows:
    """A [T, H, D] tensor of `dtype` with NumPy storage: float32 and float16 as NumPy arrays,
    bfloat16 as uint16 bits behind a DLPack producer (NumPy has no bfloat16)."""

    def __init__(self, values, dtype):
        self.dtype, self.shape = dtype, values.shape
        if dtype == "bfloat16":
            self.store = to_bf16_bits(values.astype(np.float32)).ravel()
            self.tensor = Producer(self.store, values.shape, 4, 16, 0)
        else:
            self.store = values.astype(dtype)
            self.tensor = self.store

    def values(self):
        if self.dtype == "bfloat16":
            return bf16_to_f32(self.store).reshape(self.shape).astype(np.float64)
        return self.store.astype(np.float64)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("T,H,D,n_keys,split", [(7, 4, 64, 40, 9), (3, 2, 24, 5, 4), (1, 1, 8, 2, 1)])
def test_merge_matches_attention_over_all_keys(dtype, T, H, D, n_keys, split):
    rng = np.random.default_rng(T * 100 + D)
    (pa_out, pa_lse), (sa_out, sa_lse), (full, full_lse) = attend_parts(rng, T, H, D, n_keys, split)
    prefix, suffix = Rows(pa_out, dtype), Rows(sa_out, dtype)
    prefix_lse, suffix_lse = pa_lse.astype(np.float32), sa_lse.astype(np.float32)
    out = Rows(np.full((T, H, D), 7.0), dtype)
    out_lse = np.full((H, T), 7.0, np.float32)
    pa.merge_attn_states(out.tensor, prefix.tensor, prefix_lse, suffix.tensor, suffix_lse, out_lse)
    got = out.values()
    rtol, atol = TIGHT[dtype]
    np.testing.assert_allclose(got, merge64(prefix.values(), prefix_lse, suffix.values(), suffix_lse), rtol=rtol,
                               atol=atol)
    tol = LOOSE[dtype]
    np.testing.assert_allclose(got, full, rtol=tol, atol=tol)
    np.testing.assert_allclose(out_lse, full_lse, rtol=1e-6, atol=1e-5)
    # the parts differ from the whole: a merge that returned either part would fail above
    assert np.abs(full - pa_out).max() > 10 * tol and np.abs(full - sa_out).max() > 10 * tol


def test_merge_without_output_lse_and_with_lopsided_parts():
    """output_lse None writes no lse; a part whose lse is far below the other's (weight e^-100)
    leaves the other's rows as they are, and the merged lse is the larger one."""
    rng = np.random.default_rng(5)
    T, H, D = 4, 3, 16
    a, b = rng.standard_normal((2, T, H, D)).astype(np.float32)
    la = rng.standard_normal((H, T)).astype(np.float32)
    lb = la - 100
    out = np.full_like(a, 7)
    pa.merge_attn_states(out, a, la, b, lb)
    np.testing.assert_allclose(out, a, rtol=1e-6, atol=1e-6)
    out_lse = np.full((H, T), 7, np.float32)
    pa.merge_attn_states(out, a, la, b, lb, out_lse)
    np.testing.assert_allclose(out_lse, la, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_merge_edge_cases(dtype):
    """Per (token, head) row, merge.h's cases: +inf read as -inf; a part of weight 0 counts for nothing (its
    row NaN here) and the other's row comes out exactly; both -inf (or +inf) give zeros and -inf;
    a NaN lse gives NaN; equal lse the mean."""
    inf, nan = np.inf, np.nan
    cases = [  # (prefix lse, suffix lse, NaN in the prefix row, NaN in the suffix row)
        (inf, 0.3, True, False),    # FlashAttention-2's empty prefix: the suffix exactly
        (-inf, 1.5, True, False),   # an empty prefix: the suffix exactly
        (-2.0, -inf, False, True),  # an empty suffix: the prefix exactly
        (0.25, inf, False, True),   # +inf suffix: the prefix exactly
        (-inf, -inf, True, True),   # both empty: zeros, lse -inf
        (inf, inf, True, True),     # both +inf, read as -inf: zeros, lse -inf
        (inf, -inf, True, True),
        (nan, 0.5, False, False),   # NaN lse: NaN
        (0.5, nan, False, False),
        (0.75, 0.75, False, False),  # equal weights: the mean
    ]
    T, H, D = len(cases), 2, 8
    rng = np.random.default_rng(9)
    a = rng.standard_normal((T, H, D)).astype(dtype)
    b = rng.standard_normal((T, H, D)).astype(dtype)
    la = np.zeros((H, T), np.float32)
    lb = np.zeros((H, T), np.float32)
    for t, (x, y, nan_a, nan_b) in enumerate(cases):
        la[:, t], lb[:, t] = x, y
        if nan_a:
            a[t] = nan
        if nan_b:
            b[t] = nan
    out = np.full((T, H, D), 7, dtype)
    out_lse = np.full((H, T), 7, np.float32)
    pa.merge_attn_states(out, a, la, b, lb, out_lse)
    f32 = np.float32
    np.testing.assert_array_equal(out[0], b[0])
    np.testing.assert_array_equal(out_lse[:, 0], f32(0.3))
    np.testing.assert_array_equal(out[1], b[1])
    np.testing.assert_array_equal(out_lse[:, 1], f32(1.5))
    np.testing.assert_array_equal(out[2], a[2])
    np.testing.assert_array_equal(out_lse[:, 2], f32(-2.0))
    np.testing.assert_array_equal(out[3], a[3])
    np.testing.assert_array_equal(out_lse[:, 3], f32(0.25))
    for t in (4, 5, 6):
        assert (out[t] == 0).all() and not np.signbit(out[t]).any(), (t, out[t])
        assert (out_lse[:, t] == -inf).all(), (t, out_lse[:, t])
    for t in (7, 8):
        assert np.isnan(out[t]).all() and np.isnan(out_lse[:, t]).all(), t
    np.testing.assert_allclose(out[9].astype(np.float64), (a[9].astype(np.float64) + b[9]) / 2,
                               rtol=TIGHT[np.dtype(dtype).name][0], atol=1e-6)
    np.testing.assert_allclose(out_lse[:, 9], 0.75 + np.log(2), rtol=1e-6)


def _parts(seed, T=5, H=3, D=16, dtype=np.float32):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((2, T, H, D)).astype(dtype)
    la, lb = (2 * rng.standard_normal((2, H, T))).astype(np.float32)
    return a, la, b, lb


@pytest.mark.parametrize("which", ["prefix", "suffix"])
def test_merge_in_place(which):
    a, la, b, lb = _parts(11)
    want = merge64(a, la, b, lb)
    out = a if which == "prefix" else b
    pa.merge_attn_states(out, a, la, b, lb)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_merge_strided_token_rows_and_lse():
    """Token rows further apart than num_heads * head_size (slices of wider buffers) for all three
    outputs, and lse tensors [H, T] sliced from wider ones (head stride T + 3): nothing outside
    the views is written."""
    T, H, D = 6, 4, 8
    a, la, b, lb = _parts(12, T, H, D)
    want = merge64(a, la, b, lb)
    pbuf = np.zeros((T, 2, H, D), np.float32)
    pbuf[:, 1] = a
    sbuf = np.zeros((T, H * D + 5), np.float32)
    sbuf[:, :H * D] = b.reshape(T, H * D)
    suffix = sbuf[:, :H * D].reshape(T, H, D)  # rows H * D + 5 apart
    assert np.shares_memory(suffix, sbuf) and suffix.strides[0] == (H * D + 5) * 4
    obuf = np.full((T, H + 1, D), 7, np.float32)
    lbuf = np.full((3, H, T + 3), 7, np.float32)
    lbuf[0, :, :T], lbuf[1, :, :T] = la, lb
    pa.merge_attn_states(obuf[:, :H], pbuf[:, 1], lbuf[0, :, :T], suffix, lbuf[1, :, :T], lbuf[2, :, :T])
    np.testing.assert_allclose(obuf[:, :H], want, rtol=1e-6, atol=1e-6)
    assert (obuf[:, H] == 7).all()  # the padding head between rows
    m = np.maximum(la, lb).astype(np.float64)
    np.testing.assert_allclose(lbuf[2, :, :T], m + np.log(np.exp(la - m) + np.exp(lb - m)), rtol=1e-6, atol=1e-6)
    assert (lbuf[:, :, T:] == 7).all()


@pytest.mark.parametrize("T,H", [(5, 3), (1, 4), (4, 1)])
def test_merge_flashinfer_token_major_lse_through_a_transposed_view(T, H):
    """FlashInfer's lse is [num_tokens, num_heads]; its transpose ([H, T] with strides (1, H)) is
    vLLM's shape, and the op reads and writes it through the strides."""
    a, la, b, lb = _parts(13, T, H)
    want = merge64(a, la, b, lb)
    la_th, lb_th = np.ascontiguousarray(la.T), np.ascontiguousarray(lb.T)  # [T, H] memory
    lo_th = np.full((T, H), 7, np.float32)
    out = np.full_like(a, 7)
    pa.merge_attn_states(out, a, la_th.T, b, lb_th.T, lo_th.T)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    m = np.maximum(la, lb).astype(np.float64)
    np.testing.assert_allclose(lo_th.T, m + np.log(np.exp(la - m) + np.exp(lb - m)), rtol=1e-6, atol=1e-6)


def test_merge_refusals_write_nothing():
    T, H, D = 4, 2, 8
    a, la, b, lb = _parts(14, T, H, D)
    out = np.full_like(a, 7)
    out_lse = np.full((H, T), 7, np.float32)
    ok = dict(output=out, prefix_output=a, prefix_lse=la, suffix_output=b, suffix_lse=lb, output_lse=out_lse)
    bad = [
        (dict(output=out.astype(np.float64)), "merge_attn_states: output has dtype float64; expected float32 or "
                                              "float16 or bfloat16"),
        (dict(prefix_output=a.astype(np.float16)), "prefix_output has dtype float16; expected float32"),
        (dict(suffix_output=b[:, :, :4].copy()), "suffix_output has shape \\[4, 2, 4\\]; expected \\[4, 2, 8\\]"),
        (dict(prefix_output=a.reshape(T, 1, H, D)), "prefix_output has shape \\[4, 1, 2, 8\\]"),
        (dict(output=out[0]), "output must have 3 dimensions"),
        (dict(prefix_lse=la.astype(np.float64)), "prefix_lse has dtype float64; expected float32"),
        (dict(suffix_lse=lb.astype(np.float16)), "suffix_lse has dtype float16; expected float32"),
        (dict(output_lse=out_lse.astype(np.float64)), "output_lse has dtype float64; expected float32"),
        (dict(suffix_lse=np.ascontiguousarray(lb.T)), "suffix_lse has shape \\[4, 2\\]; expected \\[2, 4\\]"),
        (dict(prefix_lse=la[None]), "prefix_lse must have 2 dimensions"),
        # one layout for the three lse tensors
        (dict(output_lse=np.ascontiguousarray(out_lse.T).T), "output_lse has strides \\[1, 2\\] but prefix_lse "
                                                             "\\[4, 1\\]; the lse tensors share one layout"),
        (dict(suffix_lse=np.ascontiguousarray(lb.T).T), "suffix_lse has strides \\[1, 2\\] but prefix_lse"),
        # heads not contiguous: [T, H, D] over [T, D, H] memory
        (dict(prefix_output=np.ascontiguousarray(a.transpose(0, 2, 1)).transpose(0, 2, 1)),
         "prefix_output must have contiguous heads \\(strides \\[\\*, 8, 1\\]\\)"),
        # a broadcast lse (stride 0 over the tokens)
        (dict(prefix_lse=np.lib.stride_tricks.as_strided(la, (H, T), (4 * T, 0))),
         "prefix_lse has stride 0 in dimension 1"),
        # the C op's own refusals: overlaps
        (dict(output_lse=la), "output_lse overlaps prefix_lse"),
    ]
    for kw, msg in bad:
        args = dict(ok, **kw)
        with pytest.raises(ValueError, match=msg):
            pa.merge_attn_states(**args)
        assert (out == 7).all() and (out_lse == 7).all(), msg
        assert (args["output"] == 7).all(), msg
    # output one row past prefix_output in the same buffer: overlapping, not in place
    pbuf = np.full((T + 1, H, D), 7, np.float32)
    pbuf[:T] = a
    with pytest.raises(ValueError, match="output overlaps prefix_output \\(in place it must be the same pointer"):
        pa.merge_attn_states(pbuf[1:], pbuf[:T], la, b, lb)
    np.testing.assert_array_equal(pbuf[:T], a)
    assert (pbuf[T] == 7).all()
    with pytest.raises(TypeError, match="merge_attn_states: suffix_lse: expected a tensor"):
        pa.merge_attn_states(out, a, la, b, None)
    assert (out == 7).all()


def test_merge_mixed_devices_refused():
    from test_errors import FakeCuda
    a, la, b, lb = _parts(15)
    out = np.full_like(a, 7)
    with pytest.raises(ValueError, match="suffix_lse is on cuda:0 but output is on cpu"):
        pa.merge_attn_states(out, a, la, b, FakeCuda(lb))
    assert (out == 7).all()


def test_merge_empty_batch_is_a_no_op():
    H, D = 3, 16
    out = np.zeros((0, H, D), np.float32)
    a, b = np.zeros((0, H, D), np.float32), np.zeros((0, H, D), np.float32)
    la, lb, lo = (np.zeros((H, 0), np.float32) for _ in range(3))
    pa.merge_attn_states(out, a, la, b, lb, lo)
    pa.merge_attn_states(out, a, la, b, lb)
    pa.merge_attn_states(out, a, la.T.T, b, lb, np.zeros((0, H), np.float32).T)  # any strides when empty
