"""The CUDA path's wiring, on a machine without a GPU: arrays that announce kDLCUDA
(test_errors.FakeCuda) take every op down its CUDA branch, and a stand-in for the
library (monkeypatched over pagedattn.ops.lib) records each C call instead of
launching it. What reaches the launch is checked against what the caller gave:
the explicit `stream=` (or 0, the legacy default stream, without torch or cupy),
copy_blocks' address tables, and nothing launched after a refusal. No kernel
runs here, so the same tests pass on a GPU machine."""
import ctypes as C

import numpy as np
import pytest

import pagedattn as pa
from refattn import Paged, mixed_batch
from test_errors import FakeCuda, decode_problem

STREAM = 0x5EED


class FakeLib:
    """Records (name, args) of every pa_* call and returns PA_SUCCESS; workspace sizes stay 0."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        if not name.startswith("pa_"):
            raise AttributeError(name)

        def call(*args):
            self.calls.append((name, args))
            return 0

        return call

    def names(self):
        return [n for n, _ in self.calls]

    def launch(self, name):
        got = [a for n, a in self.calls if n == name]
        assert len(got) == 1, (name, self.names())
        return got[0]


@pytest.fixture
def fake(monkeypatch):
    f = FakeLib()
    monkeypatch.setattr(pa.ops, "lib", f)
    return f


def cuda(*arrays):
    return [FakeCuda(a) for a in arrays]


def _decode_args():
    p = decode_problem()
    o, q, kc, vc, bt, sl = cuda(p["out"], p["query"], p["key_cache"], p["value_cache"], p["block_tables"],
                                p["seq_lens"])
    return (o, q, kc, vc, 2, p["scale"], bt, sl, 16, 9)


def _op_calls():
    """(name of the C launch, a function running the op on fake CUDA arrays with the given stream)."""
    rng = np.random.default_rng(60)
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "nhd", np.float32, 4, 2, 32, 16, [(5, 3)], [7])
    fkc, fvc, fq, fk, fv, fbt, fsl, fstart = cuda(kc, vc, q, k, v, pg.block_tables, seq_lens, start)
    cq = np.array([0, 3], np.int32)
    kv = np.zeros((4, 8, 4, 32), np.float32)
    slices = np.zeros((3, 8), np.int32)

    def v2(s):
        o, q_, kc_, vc_, *rest = _decode_args()
        pa.paged_attention_v2(o, None, None, None, q_, kc_, vc_, *rest, stream=s)

    return [
        ("pa_paged_attention_v1", lambda s: pa.paged_attention_v1(*_decode_args(), stream=s)),
        ("pa_paged_attention_v2", v2),
        ("pa_paged_attention_decode", lambda s: pa.paged_attention_decode(*_decode_args(), stream=s)),
        ("pa_reshape_and_cache", lambda s: pa.reshape_and_cache_flash(
            *cuda(k[:2], v[:2], kc, vc, np.array([0, 1], np.int64)), stream=s)),
        ("pa_convert", lambda s: pa.convert_fp8(*cuda(np.zeros(8, np.uint8), np.ones(8, np.float32),
                                                      np.ones(1, np.float32)), stream=s)),
        ("pa_swap_blocks", lambda s: pa.swap_blocks(FakeCuda(np.ones((4, 8), np.float32)), np.zeros((4, 8), np.float32),
                                                    np.array([[0, 1]], np.int64), stream=s)),
        ("pa_copy_blocks", lambda s: pa.copy_blocks(cuda(np.ones((4, 8), np.float32)), None,
                                                    FakeCuda(np.array([[0, 1]], np.int64)), stream=s)),
        ("pa_context_attention", lambda s: pa.context_attention_fwd(
            FakeCuda(q[:3]), fk, fv, FakeCuda(np.zeros_like(q[:3])), "auto", fkc, fvc, fbt, fstart,
            FakeCuda(seq_lens[:1]), 8, 3, stream=s)),
        ("pa_mixed_attention", lambda s: pa.mixed_attention(fq, fk, fv, fkc, fvc, fbt, fsl, fstart, 1, 3, 3, 8, 7,
                                                            out=FakeCuda(np.zeros_like(q)), stream=s)),
        ("pa_prompt_attention", lambda s: pa.prompt_attention(*cuda(q[:3], k, v, cq), 3,
                                                              out=FakeCuda(np.zeros_like(q[:3])), stream=s)),
        ("pa_ragged_paged_attention", lambda s: pa.ragged_paged_attention(
            *cuda(q[:3], kv, np.array([3], np.int32), np.zeros((1, 1), np.int32), cq, np.array([1], np.int32)),
            out=FakeCuda(np.zeros_like(q[:3])), workspace=FakeCuda(np.zeros(16, np.uint8)), stream=s)),
        ("pa_kv_cache_update", lambda s: pa.kv_cache_update(
            *cuda(np.zeros((2, 4, 32), np.float32), slices, np.zeros((32, 4, 32), np.float32), np.array([0], np.int32)),
            page_size=8, stream=s)),
        ("pa_merge_attn_states", lambda s: pa.merge_attn_states(
            *cuda(np.zeros((3, 4, 32), np.float16), q[:3].astype(np.float16), np.zeros((4, 3), np.float32),
                  q[:3].astype(np.float16), np.zeros((4, 3), np.float32)), stream=s)),
    ]


@pytest.mark.parametrize("launch,run", _op_calls(), ids=[n for n, _ in _op_calls()])
def test_every_cuda_launch_gets_the_callers_stream(fake, launch, run):
    run(STREAM)
    assert fake.launch(launch)[-1] == STREAM
    assert not any(n.startswith("pa_ref_") for n in fake.names())  # CUDA arrays: no CPU reference
    fake.calls.clear()
    run(None)  # no torch / cupy array: the legacy default stream
    assert fake.launch(launch)[-1] == 0


def test_copy_blocks_address_tables_on_cuda(fake):
    """On CUDA the layers' addresses go to C as int64 tables (copied to the device; on the host
    here): keys in the first, values in the second, in layer order."""
    keys = [np.full((4, 8), i, np.float32) for i in range(3)]
    vals = [np.full((4, 8), 10 + i, np.float32) for i in range(3)]
    pa.copy_blocks(cuda(*keys), cuda(*vals), FakeCuda(np.array([[0, 1], [2, 3]], np.int64)))
    kp, vp, L, m, n, per_block, dtype, nb, stream = fake.launch("pa_copy_blocks")
    assert (L, n, per_block, dtype, nb) == (3, 2, 8, pa._abi.PA_DTYPE_F32, 4)
    assert list((C.c_int64 * 3).from_address(kp)) == [a.ctypes.data for a in keys]
    assert list((C.c_int64 * 3).from_address(vp)) == [a.ctypes.data for a in vals]


def test_python_number_scales_checked_before_a_launch(fake):
    """A CUDA launch cannot look at a scale (it lives on the device; only the CPU references
    read it), so a Python number is checked before it is copied there: 0, a negative or a NaN
    is a ValueError and nothing is launched."""
    x, q = np.ones(8, np.float32), np.zeros(8, np.uint8)
    for bad in (0.0, 0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=f"convert_fp8: scale = {bad!r} must be finite and > 0"):
            pa.convert_fp8(*cuda(q, x), bad)
    pg = Paged(np.random.default_rng(61), [3], 2, 32, 16, np.float32)
    kc = np.zeros((pg.num_blocks, 16, 2, 32), np.uint8)
    for name in ("k_scale", "v_scale"):
        with pytest.raises(ValueError, match=f"reshape_and_cache_flash: {name} = 0.0 must be finite and > 0"):
            pa.reshape_and_cache_flash(*cuda(pg.K[0], pg.V[0], kc, kc.copy(), np.arange(3, dtype=np.int64)), "fp8",
                                       **dict(dict(k_scale=FakeCuda(np.ones(1, np.float32)),
                                                   v_scale=FakeCuda(np.ones(1, np.float32))), **{name: 0.0}))
    assert fake.calls == []


def test_merge_attn_states_params_on_cuda(fake):
    """What the CUDA launch of merge_attn_states receives: the arrays' addresses in vLLM's argument
    order (prefix before suffix), strided token rows as out / prefix / suffix strides, and a
    transposed [T, H] lse (FlashInfer's) as head stride 1 and token stride H."""
    T, H, D = 5, 4, 8
    obuf = np.zeros((T, H + 1, D), np.float16)
    pre, suf = np.zeros((T, 2, H, D), np.float16), np.zeros((T, H, D), np.float16)
    lse = [np.zeros((T, H), np.float32) for _ in range(3)]
    out = obuf[:, :H]
    pa.merge_attn_states(*cuda(out, pre[:, 1], lse[0].T, suf, lse[1].T, lse[2].T), stream=STREAM)
    ref, stream = fake.launch("pa_merge_attn_states")
    p = ref._obj
    assert stream == STREAM
    assert isinstance(p, pa._abi.MergeAttnStatesParams)
    assert (p.dtype, p.num_tokens, p.num_heads, p.head_size) == (pa._abi.PA_DTYPE_F16, T, H, D)
    assert (p.output, p.prefix_output, p.suffix_output) == (out.ctypes.data, pre[:, 1].ctypes.data, suf.ctypes.data)
    assert (p.out_stride, p.prefix_stride, p.suffix_stride) == ((H + 1) * D, 2 * H * D, H * D)
    assert (p.prefix_lse, p.suffix_lse, p.output_lse) == tuple(x.ctypes.data for x in lse)
    assert (p.lse_head_stride, p.lse_token_stride) == (1, H)
    fake.calls.clear()
    pa.merge_attn_states(*cuda(out, pre[:, 1], lse[0].T, suf, lse[1].T))
    p = fake.launch("pa_merge_attn_states")[0]._obj
    assert p.output_lse is None
    fake.calls.clear()
    with pytest.raises(ValueError, match="output_lse has strides"):
        pa.merge_attn_states(*cuda(out, pre[:, 1], lse[0].T, suf, lse[1].T, np.zeros((H, T), np.float32)))
    assert fake.calls == []
