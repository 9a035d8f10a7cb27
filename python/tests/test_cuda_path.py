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


class RecordingCuda(FakeCuda):
    """A FakeCuda that notes the keyword arguments of each __dlpack__ call (`asked`), and refuses
    the stream value -1 like a producer of an older array API when `old_api`."""

    def __init__(self, a, asked, old_api=False):
        super().__init__(a)
        self.asked, self.old_api = asked, old_api

    def __dlpack__(self, **kwargs):
        self.asked.append(kwargs)
        if self.old_api and kwargs.get("stream") == -1:
            raise BufferError("stream -1 is not supported")
        return super().__dlpack__(**{k: v for k, v in kwargs.items() if k == "stream"})


@pytest.mark.parametrize("old_api", (False, True))
def test_cuda_arrays_are_exported_with_no_synchronisation(fake, old_api):
    """A CUDA array is asked for its capsule with stream=-1 (the protocol's "no
    synchronisation"): the kernels run on the producer's current stream. Asked with no stream, a
    producer that takes None for the legacy default stream (some torch releases) makes that
    stream wait on its own at every array, which inside a CUDA graph capture is an error that
    ends the capture. A producer that refuses -1 is asked again without it."""
    asked = []
    o, q, kc, vc, *rest = _decode_args()
    pa.paged_attention_v1(*[RecordingCuda(x.a, asked, old_api) for x in (o, q, kc, vc)], *rest)
    assert fake.launch("pa_paged_attention_v1")
    assert len(asked) >= 4, asked
    if old_api:  # each asked with -1 first, then without a stream
        assert [a for a in asked if "stream" not in a] and all(a.get("stream", -1) == -1 for a in asked), asked
    else:
        assert all(a.get("stream") == -1 for a in asked), asked


def test_host_arrays_are_exported_without_a_stream():
    """A host array is never given a stream (NumPy refuses any stream but None)."""
    asked = []

    class HostRecorder:
        def __init__(self, a):
            self.a = a

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            asked.append(kwargs)
            return self.a.__dlpack__(**kwargs)

    x = np.linspace(-3, 3, 8).astype(np.float32)
    got = np.zeros(8, np.uint8)
    pa.convert_fp8(got, HostRecorder(x), 0.5)
    assert asked and all("stream" not in a for a in asked), asked


def test_ragged_workspace_must_be_contiguous(fake):
    """C is told the ragged workspace is numel * itemsize contiguous bytes from its address: a
    broadcast one-byte buffer (stride 0) or a column of a larger array would be written past its
    end or across its neighbours. It is refused, as the decode and mixed workspaces are, and
    nothing is launched."""
    from numpy.lib.stride_tricks import as_strided
    q = np.zeros((3, 4, 32), np.float32)
    kv = np.zeros((4, 8, 4, 32), np.float32)
    cq = np.array([0, 3], np.int32)
    one = np.zeros(1, np.uint8)
    grid = np.zeros((64, 4), np.uint8)
    for ws in (as_strided(one, shape=(1 << 20,), strides=(0,)), grid[:, 0]):
        with pytest.raises(ValueError, match="ragged_paged_attention: workspace"):
            pa.ragged_paged_attention(*cuda(q, kv, np.array([3], np.int32), np.zeros((1, 1), np.int32), cq,
                                            np.array([1], np.int32)),
                                      out=FakeCuda(np.zeros_like(q)), workspace=FakeCuda(ws), stream=STREAM)
    assert "pa_ragged_paged_attention" not in fake.names()


# ---- a stand-in torch (CI has no torch; test_gpu.py runs the real one) ----------------------------


def _fake_torch(monkeypatch, current_stream=STREAM):
    """A torch module with what _tensor's stream and device scopes use; state["device"] is the
    current device, state["entered"] the streams made current."""
    import contextlib
    import sys
    import types

    state = {"device": 0, "entered": []}

    @contextlib.contextmanager
    def device(d):
        prev, state["device"] = state["device"], d.index
        try:
            yield
        finally:
            state["device"] = prev

    @contextlib.contextmanager
    def stream(s):
        state["entered"].append(s)
        yield

    class Stream:
        pass

    cuda = types.SimpleNamespace(
        Stream=Stream, device=device, stream=stream,
        current_stream=lambda dev=None: types.SimpleNamespace(cuda_stream=current_stream),
        ExternalStream=lambda ptr, device=None: ("external", ptr, device.index))
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda, uint8="uint8"))
    return state


TorchTensor = type("Tensor", (), {"__module__": "torch"})


def _torch_cuda_tensor(index):
    import types
    t = TorchTensor()
    t.is_cuda, t.device = True, types.SimpleNamespace(type="cuda", index=index)
    return t


@pytest.mark.parametrize("explicit", (STREAM, 0x1234))
def test_explicit_stream_makes_the_tensors_device_current(monkeypatch, explicit):
    """With tensors on cuda:1 while cuda:0 is current, an explicit stream that is the tensors'
    current stream entered no stream scope, so cuda:0 stayed current: the C entry launches on
    the current device (core.h), so a device-0 launch on device-1 memory. The tensors' device is
    made current for the op whatever the stream."""
    from pagedattn import _tensor
    state = _fake_torch(monkeypatch)
    with _tensor._launch_stream("op", [_torch_cuda_tensor(1)], explicit):
        seen = state["device"]
        entered = list(state["entered"])
    assert seen == 1
    assert state["device"] == 0  # restored after the op
    assert entered == ([] if explicit == STREAM else [("external", explicit, 1)])


def test_torch_and_cupy_in_one_call_need_a_stream(monkeypatch):
    """torch and cupy each allocate on their own current stream; with no explicit stream nothing
    orders one against the launch on the other's, so the mix is refused; with one it is made
    current in both and the call goes on."""
    import types
    from pagedattn import _tensor
    Cupy = type("ndarray", (), {"__module__": "cupy._core.core"})
    mixed = [types.SimpleNamespace(obj=TorchTensor(), device_id=0), types.SimpleNamespace(obj=Cupy(), device_id=0)]
    with pytest.raises(ValueError, match="op: torch tensors and cupy arrays in one call need an explicit stream="):
        _tensor.stream_handle("op", mixed, None)
    assert _tensor.stream_handle("op", mixed, 77) == 77


class _TorchHost(TorchTensor):
    """A torch-like CPU tensor over a NumPy array: `requires_grad` ones refuse export as torch
    does; a float8 `dtype` one refuses it as releases without DLPack float8 codes do."""
    __module__ = "torch"

    def __init__(self, a, requires_grad=False, dtype=None):
        self.a, self.requires_grad, self._dtype = a, requires_grad, dtype

    @property
    def dtype(self):
        return type("dtype", (), {"__str__": lambda _: self._dtype or f"torch.{self.a.dtype}"})()

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if self._dtype:
            raise BufferError(f"{self._dtype} has no DLPack code")
        return self.a.__dlpack__()

    def detach(self):
        return _TorchHost(self.a, False, self._dtype)

    def view(self, dtype):
        assert dtype == "uint8" and self.a.dtype == np.uint8
        return _TorchHost(self.a)


def test_torch_tensors_that_require_grad_or_are_float8(monkeypatch):
    """A tensor that requires grad (an nn.Parameter passed as sinks, say) goes out detached: torch
    refuses to export it, and the library only touches its storage. A float8 tensor that the
    release cannot export goes out as its uint8 alias with the float8 format kept: here a
    float8_e5m2 destination under kv_dtype 'auto' writes what e5m2 over uint8 storage writes."""
    _fake_torch(monkeypatch)
    x = np.linspace(-3, 3, 16).astype(np.float32)
    want = np.zeros(16, np.uint8)
    pa.convert_fp8(want, x, 0.5, "fp8_e5m2")
    got = np.zeros(16, np.uint8)
    scale = np.array([0.5], np.float32)  # (a Python number would be copied by torch.tensor)
    pa.convert_fp8(_TorchHost(got, dtype="torch.float8_e5m2"), _TorchHost(x, requires_grad=True), scale, "auto")
    np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="convert_fp8: dst_cache: cannot be exported through DLPack: "
                                        "torch.float8_e4m3fnuz has no DLPack code"):
        pa.convert_fp8(_TorchHost(got, dtype="torch.float8_e4m3fnuz"), x, scale, "fp8")


def test_torch_outputs_and_caches_that_require_grad_refused(monkeypatch):
    """The library writes outputs and caches through their addresses, which autograd does not see
    (torch's own in-place ops refuse a leaf that requires grad): such a tensor went out detached and
    was written. Now an argument an op writes that requires grad is a ValueError naming it, nothing
    written; one it only reads still goes out detached and gives the same result."""
    _fake_torch(monkeypatch)
    msg = "is written in place but requires grad"
    x = np.linspace(-3, 3, 16).astype(np.float32)
    f8 = np.zeros(16, np.uint8)
    pa.convert_fp8(f8, x, np.array([0.5], np.float32), "fp8")
    dst = np.full(16, 7, np.float32)
    with pytest.raises(ValueError, match=f"^convert_fp8: dst_cache {msg}"):
        pa.convert_fp8(_TorchHost(dst, requires_grad=True), f8, np.array([0.5], np.float32), "fp8")
    assert (dst == 7).all()

    p = decode_problem()
    want = np.zeros_like(p["out"])
    pa.paged_attention_v1(**dict(p, out=want))
    with pytest.raises(ValueError, match=f"^paged_attention_v1: out {msg}"):
        pa.paged_attention_v1(**dict(p, out=_TorchHost(p["out"], requires_grad=True)))
    assert (p["out"] == 7).all()
    lse = np.full((4, 2), 7, np.float32)
    with pytest.raises(ValueError, match=f"^paged_attention_v1: lse {msg}"):
        pa.paged_attention_v1(**dict(p, lse=_TorchHost(lse, requires_grad=True)))
    assert (p["out"] == 7).all() and (lse == 7).all()
    pa.paged_attention_v1(**dict(p, query=_TorchHost(p["query"], requires_grad=True)))  # read: detached
    np.testing.assert_array_equal(p["out"], want)

    kc, vc = p["key_cache"], p["value_cache"]
    kept = kc.copy(), vc.copy()
    k = np.ones((1, 2, 32), np.float32)
    with pytest.raises(ValueError, match=f"^reshape_and_cache: value_cache {msg}"):
        pa.reshape_and_cache(k, k, kc, _TorchHost(vc, requires_grad=True), np.array([0], np.int64))
    with pytest.raises(ValueError, match=rf"^copy_blocks: key_caches\[1\] {msg}"):
        pa.copy_blocks([kc, _TorchHost(kc.copy(), requires_grad=True)], None, np.array([[0, 1]], np.int64))
    np.testing.assert_array_equal(kc, kept[0])
    np.testing.assert_array_equal(vc, kept[1])
