"""torch on CUDA: the kernels against refattn.py, the caller's stream, and a
CUDA-graph capture of a decode step replayed with new seq_lens and block
tables. Skipped without torch or without a CUDA device."""
import math

import numpy as np
import pytest

import pagedattn as pa
from refattn import Paged, attend, mixed_batch, mixed_reference, ragged_options, ragged_reference

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or pa.device_count() == 0:
    pytest.skip("no CUDA device", allow_module_level=True)


def to_cuda(a):
    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def make(seed, lens, H=8, KVH=2, D=128, BS=16, layout="nhd", dtype=np.float16, spare=4):
    rng = np.random.default_rng(seed)
    pg = Paged(rng, lens, KVH, D, BS, dtype, spare_blocks=spare)
    kc, vc = pg.fill(layout, filler=0)
    q = rng.standard_normal((len(lens), H, D)).astype(dtype)
    return pg, kc, vc, q


@pytest.mark.parametrize("entry", ["v1", "v2", "decode"])
@pytest.mark.parametrize("layout", ["vllm", "nhd", "hnd"])
def test_decode_on_cuda(entry, layout):
    lens = [1, 100, 700, 1500]
    pg, kc, vc, q = make(1, lens, layout=layout)
    tk, tv = to_cuda(kc), to_cuda(vc)
    if layout == "hnd":  # keep the HND memory, pass the logical NHD view
        tk = to_cuda(np.ascontiguousarray(kc.transpose(0, 2, 1, 3))).permute(0, 2, 1, 3)
        tv = to_cuda(np.ascontiguousarray(vc.transpose(0, 2, 1, 3))).permute(0, 2, 1, 3)
    tq, out = to_cuda(q), torch.full(q.shape, float("nan"), dtype=torch.float16, device="cuda")
    args = (tq, tk, tv, 2, 1 / math.sqrt(128), to_cuda(pg.block_tables), to_cuda(np.array(lens, np.int32)), 16,
            max(lens))
    if entry == "v1":
        pa.paged_attention_v1(out, *args)
    elif entry == "v2":
        P = -(-max(lens) // 512)
        pa.paged_attention_v2(out, torch.empty(4, 8, P, device="cuda"), torch.empty(4, 8, P, device="cuda"),
                              torch.empty(4, 8, P, 128, dtype=torch.float16, device="cuda"), *args)
    else:
        pa.paged_attention_decode(out, *args)
    torch.cuda.synchronize()
    got = out.cpu().numpy()
    for s in range(len(lens)):
        np.testing.assert_allclose(got[s], attend(q[s:s + 1], pg.K[s], pg.V[s], 1 / math.sqrt(128))[0], atol=3e-3,
                                   rtol=3e-3)


def test_runs_on_the_current_torch_stream():
    lens = [300, 20]
    pg, kc, vc, q = make(2, lens)
    s = torch.cuda.Stream()
    out = torch.zeros(q.shape, dtype=torch.float16, device="cuda")
    args = (to_cuda(q), to_cuda(kc), to_cuda(vc), 2, 0.1, to_cuda(pg.block_tables), to_cuda(np.array(lens, np.int32)),
            16, 300)
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(50_000_000)  # keeps s busy for a while
        out.fill_(float("nan"))  # runs on s after the sleep: a launch on any other stream would be overwritten
        pa.paged_attention_decode(out, *args)
        done = torch.cuda.Event()
        done.record(s)
    done.synchronize()
    got = out.cpu().numpy()
    for i in range(len(lens)):
        np.testing.assert_allclose(got[i], attend(q[i:i + 1], pg.K[i], pg.V[i], 0.1)[0], atol=3e-3, rtol=3e-3)


def _busy(stream, cycles=400_000_000):
    """Queues a spin of about 0.2 s on `stream` (torch's test kernel), so work queued on another
    stream meanwhile runs first."""
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("torch.cuda._sleep is not available")
    with torch.cuda.stream(stream):
        torch.cuda._sleep(cycles)


def test_explicit_stream_zero_fills_a_new_output_on_that_stream():
    """prompt_attention without `out` on an explicit stream s while the current stream is busy:
    the output's zero fill must be ordered before the kernel that writes it. Made on the current
    stream, the fill ran after the sleep there, over what the kernel had written on s."""
    rng = np.random.default_rng(9)
    q_lens, H, KVH, D = [64, 200], 8, 2, 128
    q, k, v = (rng.standard_normal((sum(q_lens), h, D)).astype(np.float16) for h in (H, KVH, KVH))
    cq = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    args = [to_cuda(a) for a in (q, k, v, cq)]
    s = torch.cuda.Stream()
    torch.cuda.synchronize()
    _busy(torch.cuda.current_stream())
    out = pa.prompt_attention(*args, max(q_lens), softmax_scale=0.1, stream=s)
    torch.cuda.synchronize()
    got = out.float().cpu().numpy()
    for i, n in enumerate(q_lens):
        ref = attend(q[cq[i]:cq[i + 1]], k[cq[i]:cq[i + 1]], v[cq[i]:cq[i + 1]], 0.1, q_pos=list(range(n)))
        np.testing.assert_allclose(got[cq[i]:cq[i + 1]], ref, atol=4e-3, rtol=4e-3)


def test_explicit_stream_keeps_its_scale_scalar_until_the_kernel_read_it():
    """convert_fp8 with a Python float scale on an explicit stream s that is busy: the scale is
    copied to a one-element tensor the kernel reads when s gets to it. Allocated on the current
    stream, that tensor went back to the current stream's pool when the op returned, and the
    allocations that follow there (5000 one-element tensors of 1000.0, run at once) reused and
    overwrote it first."""
    rng = np.random.default_rng(10)
    x = (rng.standard_normal((64, 8, 128)) * 30).astype(np.float16)
    want = np.zeros(x.shape, np.uint8)
    pa.convert_fp8(want, x, 0.5, "fp8")
    tx, tq = to_cuda(x), torch.zeros(x.shape, dtype=torch.uint8, device="cuda")
    s = torch.cuda.Stream()
    torch.cuda.synchronize()
    _busy(s)
    pa.convert_fp8(tq, tx, 0.5, "fp8", stream=s)
    junk = [torch.full((1,), 1000.0, device="cuda") for _ in range(5000)]
    torch.cuda.synchronize()
    del junk
    np.testing.assert_array_equal(tq.cpu().numpy(), want)


def test_explicit_stream_allocates_with_that_stream_current():
    """What an op allocates for itself under an explicit stream (the decode workspace, a scale
    copied from a float, a new output) is made with that stream current, and the current stream
    is the caller's again afterwards; an explicit stream that is the current one changes nothing."""
    from pagedattn import _tensor, ops
    seen = []
    real_empty, real_small = _tensor.empty, _tensor.small_array

    def spy(real):
        def f(*a, **kw):
            seen.append(torch.cuda.current_stream().cuda_stream)
            return real(*a, **kw)
        return f

    lens = [300, 20]
    pg, kc, vc, q = make(11, lens)
    kc8 = to_cuda(kc.astype(np.float32)).to(torch.float8_e4m3fn).view(torch.uint8)
    vc8 = to_cuda(vc.astype(np.float32)).to(torch.float8_e4m3fn).view(torch.uint8)
    out = torch.zeros(q.shape, dtype=torch.float16, device="cuda")
    args = (to_cuda(q), kc8, vc8, 2, 0.1, to_cuda(pg.block_tables), to_cuda(np.array(lens, np.int32)), 16, 300,
            None, "fp8", 1.0, 1.0)
    s = torch.cuda.Stream()
    caller = torch.cuda.current_stream().cuda_stream
    try:
        ops.empty, ops.small_array = spy(real_empty), spy(real_small)
        pa.paged_attention_decode(out, *args, stream=s)
        assert len(seen) == 3 and set(seen) == {s.cuda_stream}, seen  # workspace, k_scale, v_scale
        assert torch.cuda.current_stream().cuda_stream == caller
        seen.clear()
        pa.paged_attention_decode(out, *args, stream=caller)
        pa.paged_attention_decode(out, *args, stream=torch.cuda.current_stream())
        assert len(seen) == 6 and set(seen) == {caller}, seen
        seen.clear()
        pa.paged_attention_decode(out, *args, stream=int(s.cuda_stream))
        assert len(seen) == 3 and set(seen) == {s.cuda_stream}, seen
    finally:
        ops.empty, ops.small_array = real_empty, real_small
    torch.cuda.synchronize()


def test_python_float_scale_refused_during_graph_capture():
    """A scale given as a Python float is copied to the GPU at each call; a captured graph would
    replay the kernel without the copy, so capture refuses it with a clear error (a tensor scale
    captures fine: the decode graph test below)."""
    x = torch.ones((4, 8), dtype=torch.float16, device="cuda")
    tq = torch.zeros((4, 8), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(ValueError, match="convert_fp8: scale given as a Python number is copied to the GPU"):
        with torch.cuda.graph(g):
            pa.convert_fp8(tq, x, 0.5, "fp8")
    torch.cuda.synchronize()


def test_cuda_graph_decode_replays_with_new_lengths_and_tables():
    H, KVH, D, BS, MAXLEN = 8, 2, 128, 16, 1024
    lens_a, lens_b = [50, 1000, 7], [900, 3, 513]
    pg_a, kc_a, vc_a, q_a = make(3, lens_a, spare=0)
    pg_b, kc_b, vc_b, q_b = make(4, lens_b, spare=0)
    nb = max(pg_a.num_blocks, pg_b.num_blocks)
    width = -(-MAXLEN // BS)
    kc = torch.zeros((nb,) + kc_a.shape[1:], dtype=torch.float16, device="cuda")
    vc = torch.zeros_like(kc)
    q = torch.zeros(q_a.shape, dtype=torch.float16, device="cuda")
    out = torch.zeros_like(q)
    tables = torch.zeros((3, width), dtype=torch.int32, device="cuda")
    seq_lens = torch.ones(3, dtype=torch.int32, device="cuda")
    ws = torch.empty(pa.paged_attention_workspace_size(3, H, KVH, D, MAXLEN), dtype=torch.uint8, device="cuda")

    def load(pg, k, v, qq):
        kc.zero_(), vc.zero_()
        kc[:pg.num_blocks].copy_(to_cuda(k))
        vc[:pg.num_blocks].copy_(to_cuda(v))
        q.copy_(to_cuda(qq))
        tables.zero_()
        tables[:, :pg.block_tables.shape[1]].copy_(to_cuda(np.maximum(pg.block_tables, 0)))
        seq_lens.copy_(to_cuda(np.array(pg.seq_lens, np.int32)))

    def step():
        pa.paged_attention_decode(out, q, kc, vc, KVH, 1 / math.sqrt(D), tables, seq_lens, BS, MAXLEN, workspace=ws)

    load(pg_a, kc_a, vc_a, q_a)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        step()  # warm-up outside capture
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    for pg, k, v, qq in ((pg_a, kc_a, vc_a, q_a), (pg_b, kc_b, vc_b, q_b)):
        load(pg, k, v, qq)
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        got = out.cpu().numpy()
        for i in range(3):
            ref = attend(qq[i:i + 1], pg.K[i], pg.V[i], 1 / math.sqrt(D))[0]
            np.testing.assert_allclose(got[i], ref, atol=3e-3, rtol=3e-3)


def test_ragged_on_cuda_matches_cpu_reference_path():
    rng = np.random.default_rng(5)
    H, KVH, D, PS = 8, 2, 128, 16
    kv_lens, q_lens = [40, 1, 300], [40, 1, 7]
    pg = Paged(rng, kv_lens, KVH, D, PS, np.float16)
    kv, _ = pg.fill("combined", filler=0)
    T = sum(q_lens)
    q = rng.standard_normal((T, H, D)).astype(np.float16)
    cu = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    args = (np.array(kv_lens, np.int32), pg.block_tables, cu, np.array([3], np.int32))
    host = pa.ragged_paged_attention(q, kv, *args, sm_scale=0.09)
    dev = pa.ragged_paged_attention(to_cuda(q), to_cuda(kv), *[to_cuda(a) for a in args], sm_scale=0.09)
    torch.cuda.synchronize()
    for s, (n, m) in enumerate(zip(kv_lens, q_lens)):
        ref = attend(q[cu[s]:cu[s + 1]], pg.K[s], pg.V[s], 0.09, q_pos=[n - m + i for i in range(m)])
        np.testing.assert_allclose(host[cu[s]:cu[s + 1]], ref, atol=4e-3, rtol=4e-3)
        np.testing.assert_allclose(dev.cpu().numpy()[cu[s]:cu[s + 1]], ref, atol=4e-3, rtol=4e-3)


def test_ragged_sinks_on_cuda():
    """gpt-oss's shape on the ragged op: head 64, GQA 8, a window of 128, sinks per head."""
    rng = np.random.default_rng(6)
    H, KVH, D, PS = 16, 2, 64, 16
    kv_lens, q_lens = [200, 1, 700, 90], [200, 1, 33, 1]
    pg = Paged(rng, kv_lens, KVH, D, PS, np.float16)
    kv, _ = pg.fill("combined", filler=0)
    q = rng.standard_normal((sum(q_lens), H, D)).astype(np.float16)
    cu = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    sinks = np.array([-np.inf, 0.5, 2.0, -1.0, 4.0, 8.0, 1.0, 3.0] * 2, np.float32)
    args = (np.array(kv_lens, np.int32), pg.block_tables, cu, np.array([4], np.int32))
    dev = pa.ragged_paged_attention(to_cuda(q), to_cuda(kv), *[to_cuda(a) for a in args], sm_scale=0.125,
                                    sliding_window=128, sinks=to_cuda(sinks))
    torch.cuda.synchronize()
    got = dev.cpu().numpy()
    for s, (n, m) in enumerate(zip(kv_lens, q_lens)):
        ref = attend(q[cu[s]:cu[s + 1]], pg.K[s], pg.V[s], 0.125, q_pos=[n - m + i for i in range(m)], window=128,
                     sinks=sinks)
        np.testing.assert_allclose(got[cu[s]:cu[s + 1]], ref, atol=4e-3, rtol=4e-3)


@pytest.mark.parametrize("entry", ["v1", "decode"])
def test_decode_sinks_on_cuda(entry):
    """gpt-oss's shape: head 64, GQA 8, a window of 128, sinks per head (bf16)."""
    lens = [1, 100, 700, 1500]
    pg, kc, vc, q = make(9, lens, H=16, D=64)
    sinks = np.array([-np.inf, 0.5, 2.0, -1.0, 4.0, 8.0, 1.0, 3.0] * 2, np.float32)
    tq = to_cuda(q).to(torch.bfloat16)
    out = torch.empty(q.shape, dtype=torch.bfloat16, device="cuda")
    args = (tq, to_cuda(kc).to(torch.bfloat16), to_cuda(vc).to(torch.bfloat16), 2, 0.125, to_cuda(pg.block_tables),
            to_cuda(np.array(lens, np.int32)), 16, max(lens))
    fn = pa.paged_attention_v1 if entry == "v1" else pa.paged_attention_decode
    fn(out, *args, sliding_window=128, sinks=to_cuda(sinks))
    torch.cuda.synchronize()
    got = out.float().cpu().numpy()
    qr = tq.float().cpu().numpy()
    for s in range(len(lens)):
        kr = torch.from_numpy(pg.K[s]).to(torch.bfloat16).float().numpy()
        vr = torch.from_numpy(pg.V[s]).to(torch.bfloat16).float().numpy()
        np.testing.assert_allclose(got[s], attend(qr[s:s + 1], kr, vr, 0.125, window=128, sinks=sinks)[0],
                                   atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("attn_type,dtype,D,q_lens,k_lens", [
    ("decoder", torch.float16, 128, [1, 100, 333], None),
    ("encoder", torch.bfloat16, 64, [77, 5], None),
    ("encoder_decoder", torch.float16, 96, [3, 40], [200, 17]),
])
def test_prompt_attention_on_cuda(attn_type, dtype, D, q_lens, k_lens):
    rng = np.random.default_rng(6)
    H, KVH = 8, 2
    k_lens_ = q_lens if k_lens is None else k_lens
    q = rng.standard_normal((sum(q_lens), H, D)).astype(np.float32)
    k = rng.standard_normal((sum(k_lens_), KVH, D)).astype(np.float32)
    v = rng.standard_normal((sum(k_lens_), KVH, D)).astype(np.float32)
    cq = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    ck = np.concatenate([[0], np.cumsum(k_lens_)]).astype(np.int32)
    tq, tk, tv = (torch.from_numpy(a).to("cuda", dtype) for a in (q, k, v))
    kw = {} if k_lens is None else dict(cu_seqlens_k=to_cuda(ck), max_seqlen_k=max(k_lens))
    out = pa.prompt_attention(tq, tk, tv, to_cuda(cq), max(q_lens), attn_type=attn_type, softmax_scale=0.1, **kw)
    torch.cuda.synchronize()
    assert out.dtype == dtype and out.is_cuda
    got = out.float().cpu().numpy()
    # the reference sees the inputs as rounded to the kernel's dtype
    qr, kr, vr = (t.float().cpu().numpy() for t in (tq, tk, tv))
    tol = 4e-3 if dtype == torch.float16 else 2e-2
    for s, (n, m) in enumerate(zip(q_lens, k_lens_)):
        ref = attend(qr[cq[s]:cq[s + 1]], kr[ck[s]:ck[s + 1]], vr[ck[s]:ck[s + 1]], 0.1,
                     q_pos=[m - n + i for i in range(n)], causal=attn_type == "decoder")
        np.testing.assert_allclose(got[cq[s]:cq[s + 1]], ref, atol=tol, rtol=tol)


def test_convert_fp8_on_cuda_matches_host():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((64, 8, 128)) * 30).astype(np.float16)
    q = np.zeros(x.shape, np.uint8)
    pa.convert_fp8(q, x, 0.5, "fp8")
    tq = torch.zeros(x.shape, dtype=torch.uint8, device="cuda")
    pa.convert_fp8(tq, to_cuda(x), torch.tensor([0.5], device="cuda"), "fp8")
    back = torch.empty(x.shape, dtype=torch.bfloat16, device="cuda")
    pa.convert_fp8(back, tq, 0.5, "fp8")
    torch.cuda.synchronize()
    np.testing.assert_array_equal(tq.cpu().numpy(), q)
    hb = np.zeros(x.shape, np.float32)
    pa.convert_fp8(hb, q, 0.5, "fp8")
    np.testing.assert_array_equal(back.float().cpu().numpy(), hb)  # e4m3 x 0.5 is exact in bf16


@pytest.mark.parametrize("layout,dtype", [("vllm", torch.float16), ("nhd", torch.bfloat16)])
def test_mixed_attention_on_cuda(layout, dtype):
    """A chunked-prefill step (two prefills with contexts, three decodes) on the GPU
    against the NumPy reference on the inputs as rounded to the kernel's dtype. (The
    vLLM layout packs x = 16 bytes of elements, so its cache is built in float16 itself;
    the flash layout does not depend on the dtype and is rounded from float32.)"""
    rng = np.random.default_rng(8)
    H, KVH, D, BS = 8, 2, 128, 16
    prefills, decodes = [(300, 70), (0, 129)], [1, 517, 2000]
    build = np.float16 if dtype == torch.float16 else np.float32
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, layout, build, H, KVH, D, BS, prefills, decodes,
                                                       filler=0)
    dev = [torch.from_numpy(np.ascontiguousarray(a)).to("cuda", dtype) for a in (q, k, v, kc, vc)]
    P = len(prefills)
    out = pa.mixed_attention(*dev, to_cuda(pg.block_tables), to_cuda(seq_lens), to_cuda(start), P, int(start[-1]),
                             129, 370, 2000, scale=0.09)
    torch.cuda.synchronize()
    assert out.dtype == dtype and out.is_cuda
    qr, kr, vr = (t.float().cpu().numpy() for t in dev[:3])
    for s in range(len(pg.K)):  # the cached histories as rounded to dtype too
        pg.K[s] = torch.from_numpy(pg.K[s]).to(dtype).float().numpy()
        pg.V[s] = torch.from_numpy(pg.V[s]).to(dtype).float().numpy()
    ref = mixed_reference(pg, qr, kr, vr, start, prefills, decodes, 0.09)
    tol = 4e-3 if dtype == torch.float16 else 2e-2
    np.testing.assert_allclose(out.float().cpu().numpy(), ref, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype,D", [(torch.float32, 128), (torch.float16, 128), (torch.bfloat16, 64),
                                     (torch.float16, 13)])
def test_merge_attn_states_on_cuda(dtype, D):
    """merge_attn_states' kernel (16-byte chunks where the head allows, one element a thread at
    head 13) against the merge by its definition in float64, on the parts as rounded to dtype:
    token rows (H + 1) * D apart, FlashInfer's [T, H] lse through its transpose, FlashAttention-2's
    empty prefix (+inf lse, NaN rows: the suffix rows exactly) and both parts empty (zeros, -inf)."""
    rng = np.random.default_rng(10)
    T, H = 37, 8
    a, b = rng.standard_normal((2, T, H, D)).astype(np.float32)
    la, lb = (3 * rng.standard_normal((2, T, H))).astype(np.float32)  # [T, H]
    la[0], a[0] = np.inf, np.nan
    la[1], lb[1], a[1], b[1] = -np.inf, -np.inf, np.nan, np.nan
    ta, tb = (torch.from_numpy(x).to("cuda", dtype) for x in (a, b))
    ar, br = ta.float().cpu().numpy().astype(np.float64), tb.float().cpu().numpy().astype(np.float64)
    obuf = torch.full((T, H + 1, D), 7.0, dtype=dtype, device="cuda")
    lo = torch.full((T, H), 7.0, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    pa.merge_attn_states(obuf[:, :H], ta, to_cuda(la).T, tb, to_cuda(lb).T, lo.T, stream=s)
    s.synchronize()
    got, got_lse = obuf.float().cpu().numpy(), lo.cpu().numpy()
    assert (got[:, H] == 7).all()
    np.testing.assert_array_equal(got[0, :H], br[0])
    np.testing.assert_array_equal(got_lse[0], lb[0])
    assert (got[1, :H] == 0).all() and (got_lse[1] == -np.inf).all()
    x, y = la[2:].astype(np.float64)[:, :, None], lb[2:].astype(np.float64)[:, :, None]
    m = np.maximum(x, y)
    ea, eb = np.exp(x - m), np.exp(y - m)
    tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dtype]
    np.testing.assert_allclose(got[2:, :H], (ea * ar[2:] + eb * br[2:]) / (ea + eb), atol=tol, rtol=tol)
    np.testing.assert_allclose(got_lse[2:], (m + np.log(ea + eb))[:, :, 0], atol=1e-5, rtol=1e-5)


# ---- the log-sum-exp output (return_lse / lse) -------------------------------------------------------------------


@pytest.mark.parametrize("dtype,sinks", [(torch.float16, False), (torch.bfloat16, True), (torch.float32, False)])
def test_prompt_attention_lse_on_cuda(dtype, sinks):
    """return_lse=True on CUDA tensors: a new float32 [num_heads, num_q_tokens] CUDA tensor holding each
    row's log-sum-exp, against the float64 definition on the inputs as rounded to dtype; causal over
    cu_seqlens_k with more queries than keys in the first sequence (rows without a key: -inf, or the
    sink) and a padding row past cu_seqlens_q[-1] (-inf in the new lse, zeros in the new out)."""
    from test_lse import SINKS, attend_lse
    rng = np.random.default_rng(11)
    H, KVH, D = 8, 2, 128 if dtype != torch.float32 else 64
    q_lens, k_lens = [5, 100, 333], [2, 300, 333]
    T = sum(q_lens) + 1
    q = rng.standard_normal((T, H, D)).astype(np.float32)
    k = rng.standard_normal((sum(k_lens), KVH, D)).astype(np.float32)
    v = rng.standard_normal((sum(k_lens), KVH, D)).astype(np.float32)
    cq = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    ck = np.concatenate([[0], np.cumsum(k_lens)]).astype(np.int32)
    tq, tk, tv = (torch.from_numpy(a).to("cuda", dtype) for a in (q, k, v))
    sk = np.array(SINKS + [0.5, -1.0], np.float32)[:H] if sinks else None
    out, lse = pa.prompt_attention(tq, tk, tv, to_cuda(cq), max(q_lens), to_cuda(ck), max(k_lens), softmax_scale=0.1,
                                   sinks=None if sk is None else to_cuda(sk), return_lse=True)
    torch.cuda.synchronize()
    assert lse.is_cuda and lse.dtype == torch.float32 and tuple(lse.shape) == (H, T) and lse.is_contiguous()
    got, got_lse = out.float().cpu().numpy(), lse.cpu().numpy()
    qr, kr, vr = (t.float().cpu().numpy() for t in (tq, tk, tv))
    tol = {torch.float32: 1e-4, torch.float16: 4e-3, torch.bfloat16: 2e-2}[dtype]
    for s, (n, m) in enumerate(zip(q_lens, k_lens)):
        a, b = cq[s], cq[s + 1]
        ref, ref_lse = attend_lse(qr[a:b], kr[ck[s]:ck[s + 1]], vr[ck[s]:ck[s + 1]], 0.1,
                                  [m - n + i for i in range(n)], sinks=sk)
        np.testing.assert_allclose(got[a:b], ref, atol=tol, rtol=tol)
        np.testing.assert_allclose(got_lse[:, a:b], ref_lse, atol=1e-3, rtol=1e-4)
    want = np.full((H, 3), -np.inf, np.float32) if sk is None else np.repeat(sk[:, None], 3, 1)
    np.testing.assert_array_equal(got_lse[:, :3], want)
    assert (got[:3] == 0).all() and (got[T - 1] == 0).all() and (got_lse[:, T - 1] == -np.inf).all()


def test_cascade_prefix_and_suffix_merge_on_cuda():
    """Cascade attention on the GPU: a shared prefix of 700 keys (a non-causal call over a copy per
    sequence) and each sequence's own keys (a causal prompt), each with its lse written into a
    caller's tensor on an explicit stream, merged by merge_attn_states, against one causal call
    over prefix + own keys (its output and lse)."""
    rng = np.random.default_rng(12)
    H, KVH, D, P, q_lens, dtype = 8, 2, 128, 700, [64, 1, 190], torch.bfloat16
    T, S = sum(q_lens), len(q_lens)
    pk, pv = rng.standard_normal((2, P, KVH, D)).astype(np.float32)
    own_k = [rng.standard_normal((n, KVH, D)).astype(np.float32) for n in q_lens]
    own_v = [rng.standard_normal((n, KVH, D)).astype(np.float32) for n in q_lens]
    cq = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to("cuda", dtype)  # noqa: E731
    tq = dev(rng.standard_normal((T, H, D)))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())

    def call(keys, values, attn_type):
        ck = np.concatenate([[0], np.cumsum([len(x) for x in keys])]).astype(np.int32)
        out = torch.empty((T, H, D), dtype=dtype, device="cuda")
        lse = torch.full((H, T), 7.0, device="cuda")
        got = pa.prompt_attention(tq, dev(np.concatenate(keys)), dev(np.concatenate(values)), to_cuda(cq),
                                  max(q_lens), to_cuda(ck), max(len(x) for x in keys), attn_type=attn_type,
                                  softmax_scale=0.09, out=out, lse=lse, stream=s)
        assert got[0] is out and got[1] is lse
        return out, lse

    with torch.cuda.stream(s):
        pre, pre_lse = call([pk] * S, [pv] * S, "encoder_decoder")
        suf, suf_lse = call(own_k, own_v, "decoder")
        whole, whole_lse = call([np.concatenate([pk, x]) for x in own_k], [np.concatenate([pv, x]) for x in own_v],
                                "decoder")
        merged = torch.empty_like(whole)
        merged_lse = torch.full((H, T), 7.0, device="cuda")
    pa.merge_attn_states(merged, pre, pre_lse, suf, suf_lse, merged_lse, stream=s)
    s.synchronize()
    np.testing.assert_allclose(merged.float().cpu().numpy(), whole.float().cpu().numpy(), atol=3e-2, rtol=3e-2)
    np.testing.assert_allclose(merged_lse.cpu().numpy(), whole_lse.cpu().numpy(), atol=1e-3, rtol=1e-4)
    assert np.isfinite(whole_lse.cpu().numpy()).all()


@pytest.mark.parametrize("layout,dtype", [("vllm", torch.float16), ("nhd", torch.bfloat16)])
def test_context_attention_lse_on_cuda(layout, dtype):
    """context_attention_fwd with a caller's lse on CUDA (returned as given): each new token's
    log-sum-exp over its cached context and its own new keys, against the float64 definition on
    the inputs as rounded to dtype."""
    from test_lse import attend_lse
    rng = np.random.default_rng(13)
    H, KVH, D, BS = 8, 2, 128, 16
    prefills = [(300, 70), (0, 129), (17, 1)]
    build = np.float16 if dtype == torch.float16 else np.float32
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, layout, build, H, KVH, D, BS, prefills, [], filler=0)
    tq, tk, tv, tkc, tvc = (torch.from_numpy(np.ascontiguousarray(a)).to("cuda", dtype) for a in (q, k, v, kc, vc))
    T = int(start[-1])
    o = torch.zeros((T, H, D), dtype=dtype, device="cuda")
    lse = torch.full((H, T), 7.0, device="cuda")
    got = pa.context_attention_fwd(tq, tk, tv, o, "auto", tkc, tvc, to_cuda(pg.block_tables), to_cuda(start),
                                   to_cuda(seq_lens), int(seq_lens.max()), 129, sm_scale=0.09, lse=lse)
    assert got is lse
    torch.cuda.synchronize()
    qr, kr, vr = (t.float().cpu().numpy() for t in (tq, tk, tv))
    got_o, got_lse = o.float().cpu().numpy(), lse.cpu().numpy()
    tol = 4e-3 if dtype == torch.float16 else 2e-2
    for s, (c, n) in enumerate(prefills):
        a, b = start[s], start[s + 1]
        K = np.concatenate([torch.from_numpy(pg.K[s]).to(dtype).float().numpy(), kr[a:b]])
        V = np.concatenate([torch.from_numpy(pg.V[s]).to(dtype).float().numpy(), vr[a:b]])
        ref, ref_lse = attend_lse(qr[a:b], K, V, 0.09, [c + i for i in range(n)])
        np.testing.assert_allclose(got_o[a:b], ref, atol=tol, rtol=tol)
        np.testing.assert_allclose(got_lse[:, a:b], ref_lse, atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("entry", ["v1", "v2", "decode"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_decode_lse_on_cuda(entry, dtype):
    """return_lse=True on the GPU decode entries: a new float32 [num_heads, num_seqs] CUDA tensor
    holding each sequence's log-sum-exp over its keys (sinks, a -inf and a large one among them; a
    sliding window and a soft cap; sequences over several splits and partitions), against the
    float64 definition on the inputs as rounded to dtype; the output bit for bit the same without it."""
    from test_decode_lse import SINKS, decode, decode_reference
    rng = np.random.default_rng(14)
    H, KVH, D, BS = 8, 2, 128 if dtype != torch.float32 else 64, 16
    lens = [1, 100, 700, 1500, 2049]
    pg = Paged(rng, lens, KVH, D, BS, np.float32, spare_blocks=4)
    kc, vc = pg.fill("nhd", filler=0)
    S = len(lens)
    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to("cuda", dtype)  # noqa: E731
    tq, tk, tv = dev(rng.standard_normal((S, H, D))), dev(kc), dev(vc)
    sk = np.array(SINKS, np.float32)
    args = (tq, tk, tv, KVH, 0.09, to_cuda(pg.block_tables), to_cuda(np.array(lens, np.int32)), BS, max(lens))
    kw = dict(sinks=to_cuda(sk), sliding_window=1000, logits_soft_cap=30.0)
    out = torch.full((S, H, D), float("nan"), dtype=dtype, device="cuda")
    plain = torch.full_like(out, float("nan"))
    lse = decode(entry, out, args, return_lse=True, **kw)
    assert decode(entry, plain, args, **kw) is None
    torch.cuda.synchronize()
    assert lse.is_cuda and lse.dtype == torch.float32 and tuple(lse.shape) == (H, S) and lse.is_contiguous()
    assert torch.equal(out, plain)
    got, got_lse, qr = out.float().cpu().numpy(), lse.cpu().numpy(), tq.float().cpu().numpy()
    tol = {torch.float32: 1e-4, torch.float16: 4e-3, torch.bfloat16: 2e-2}[dtype]
    for s in range(S):
        K, V = (torch.from_numpy(x).to(dtype).float().numpy() for x in (pg.K[s], pg.V[s]))
        ref, ref_lse = decode_reference(qr[s], K, V, 0.09, window=1000, soft_cap=30.0, sinks=sk)
        np.testing.assert_allclose(got[s], ref, atol=tol, rtol=tol)
        np.testing.assert_allclose(got_lse[:, s], ref_lse, atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("entry", ["v1", "v2"])
@pytest.mark.parametrize("with_sinks", [False, True])
def test_decode_lse_of_blocksparse_heads_without_a_key_on_cuda(entry, with_sinks):
    """Block-sparse without local blocks: the even heads see no key of the one-block sequence
    (zeros; lse -inf, or the head's sink, -inf for head 0), the others against the definition."""
    from test_decode_lse import blocksparse_kept, decode, decode_reference
    rng = np.random.default_rng(15)
    H, KVH, D, BS, BSB, lens = 8, 2, 128, 16, 64, [10, 100, 1500]
    pg = Paged(rng, lens, KVH, D, BS, np.float16, spare_blocks=4)
    kc, vc = pg.fill("nhd", filler=0)
    S = len(lens)
    q = rng.standard_normal((S, H, D)).astype(np.float16)
    sk = np.array([-np.inf, 1.5, 30.0, -0.5, 2.0, 0.0, 1.0, -1.0], np.float32) if with_sinks else None
    out = torch.full((S, H, D), float("nan"), dtype=torch.float16, device="cuda")
    lse = torch.full((H, S), 7.0, device="cuda")
    args = (to_cuda(q), to_cuda(kc), to_cuda(vc), KVH, 0.09, to_cuda(pg.block_tables),
            to_cuda(np.array(lens, np.int32)), BS, max(lens))
    assert decode(entry, out, args, blocksparse_local_blocks=0, blocksparse_vert_stride=2,
                  blocksparse_block_size=BSB, blocksparse_head_sliding_step=1,
                  sinks=None if sk is None else to_cuda(sk), lse=lse) is lse
    torch.cuda.synchronize()
    got, got_lse = out.float().cpu().numpy(), lse.cpu().numpy()
    for s, L in enumerate(lens):
        def kept(h):
            return blocksparse_kept(L, h, h // (H // KVH), H, KVH, 0, 2, BSB, 1)
        ref, ref_lse = decode_reference(q[s], pg.K[s], pg.V[s], 0.09, kept, sinks=sk)
        np.testing.assert_allclose(got[s], ref, atol=4e-3, rtol=4e-3)
        np.testing.assert_allclose(got_lse[:, s], ref_lse, atol=1e-3, rtol=1e-4)
    want = np.full(H // 2, -np.inf, np.float32) if sk is None else sk[::2]
    np.testing.assert_array_equal(got_lse[::2, 0], want)
    assert (got[0, ::2] == 0).all()


@pytest.mark.parametrize("entry", ["v2", "decode"])
def test_decode_cascade_merges_on_cuda(entry):
    """Decode over each sequence's first blocks (the sinks there) and over the rest (the block table
    rows shifted past them), each lse into a caller's tensor on an explicit stream, merged by
    merge_attn_states: one decode over all the keys (its output and lse)."""
    from test_decode_lse import decode
    rng = np.random.default_rng(16)
    H, KVH, D, BS, dtype = 8, 2, 128, 16, torch.bfloat16
    lens, cuts = [40, 700, 2049, 530], [32, 512, 1024, 16]
    pg = Paged(rng, lens, KVH, D, BS, np.float32, spare_blocks=4)
    kc, vc = pg.fill("nhd", filler=0)
    S, width = len(lens), pg.block_tables.shape[1]
    rest = np.zeros_like(pg.block_tables)
    for s, c in enumerate(cuts):
        rest[s, :width - c // BS] = pg.block_tables[s, c // BS:]
    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to("cuda", dtype)  # noqa: E731
    tq, tk, tv = dev(rng.standard_normal((S, H, D))), dev(kc), dev(vc)
    sinks = to_cuda(np.array([1.5, -np.inf, 3.0, 0.0, -0.5, 2.0, 30.0, -3.0], np.float32))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())

    def call(table, seq_lens, **kw):
        out = torch.empty((S, H, D), dtype=dtype, device="cuda")
        lse = torch.full((H, S), 7.0, device="cuda")
        seq_lens = np.array(seq_lens, np.int32)
        args = (tq, tk, tv, KVH, 0.09, to_cuda(table), to_cuda(seq_lens), BS, int(seq_lens.max()))
        assert decode(entry, out, args, lse=lse, stream=stream, **kw) is lse
        return out, lse

    with torch.cuda.stream(stream):
        a, a_lse = call(pg.block_tables, cuts, sinks=sinks)
        b, b_lse = call(rest, [n - c for n, c in zip(lens, cuts)])
        whole, whole_lse = call(pg.block_tables, lens, sinks=sinks)
        merged = torch.empty_like(whole)
        merged_lse = torch.full((H, S), 7.0, device="cuda")
    pa.merge_attn_states(merged, a, a_lse, b, b_lse, merged_lse, stream=stream)
    stream.synchronize()
    np.testing.assert_allclose(merged.float().cpu().numpy(), whole.float().cpu().numpy(), atol=3e-2, rtol=3e-2)
    np.testing.assert_allclose(merged_lse.cpu().numpy(), whole_lse.cpu().numpy(), atol=1e-3, rtol=1e-4)
    assert np.isfinite(whole_lse.cpu().numpy()).all()


@pytest.mark.parametrize("entry", ["v2", "decode"])
def test_decode_lse_inside_the_workspace_refused(entry):
    """An lse inside the caller's workspace (the library's refusal: nothing launched, out untouched)."""
    from test_decode_lse import decode
    lens = [1500, 20]
    pg, kc, vc, q = make(17, lens)
    H, S = q.shape[1], q.shape[0]
    nbytes = pa.paged_attention_workspace_size(S, H, 2, 128, max(lens), entry=entry, dtype="float16")
    assert nbytes >= 4 * H * S
    ws = torch.zeros(nbytes, dtype=torch.uint8, device="cuda")
    lse = ws[:4 * H * S].view(torch.float32).view(H, S)
    out = torch.full(q.shape, 7.0, dtype=torch.float16, device="cuda")
    args = (to_cuda(q), to_cuda(kc), to_cuda(vc), 2, 0.09, to_cuda(pg.block_tables), to_cuda(np.array(lens, np.int32)),
            16, max(lens))
    with pytest.raises(ValueError, match="lse overlaps the workspace"):
        decode(entry, out, args, lse=lse, workspace=ws)
    torch.cuda.synchronize()
    assert (out == 7).all() and (ws == 0).all()


def _cuda_lse_run(op):
    """(run(**kw) -> (out, returned lse), num_heads, tokens, reference) of one op on CUDA float16
    tensors; reference() checks a contiguous lse against the float64 definition (mixed and ragged only)."""
    from test_decode_lse import decode, decode_reference
    from test_lse import attend_lse
    dt = torch.float16
    if op in ("decode", "v2"):
        lens = [1, 100, 700, 1500]
        pg, kc, vc, q = make(18, lens)
        args = (to_cuda(q), to_cuda(kc), to_cuda(vc), 2, 0.09, to_cuda(pg.block_tables),
                to_cuda(np.array(lens, np.int32)), 16, max(lens))

        def run(**kw):
            out = torch.full(q.shape, 7.0, dtype=dt, device="cuda")
            return out, decode(op, out, args, **kw)

        return run, q.shape[1], len(lens), None
    if op == "ragged":  # every row live (no padding row): the whole lse is written
        tq, tkv, targs, host = _ragged_cuda_problem(23, dt, [1, 300, 700, 90], [1, 300, 33, 1])

        def run(**kw):
            return pa.ragged_paged_attention(tq, tkv, *targs, sm_scale=0.09, **kw)

        def reference(out, lse):
            ref, ref_lse = ragged_reference(*host, 0.09)
            np.testing.assert_allclose(out.float().cpu().numpy(), ref, atol=4e-3, rtol=4e-3)
            np.testing.assert_allclose(lse.cpu().numpy(), ref_lse, atol=1e-3, rtol=1e-4)

        return run, tq.shape[1], tq.shape[0], reference
    rng = np.random.default_rng(19)
    H, KVH, D, BS = 8, 2, 128, 16
    if op == "prompt":
        q_lens = [5, 100, 33]
        T = sum(q_lens)
        tq, tk, tv = (to_cuda(rng.standard_normal((T, h, D))).to(dt) for h in (H, KVH, KVH))
        cq = to_cuda(np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32))

        def run(**kw):
            got = pa.prompt_attention(tq, tk, tv, cq, max(q_lens), softmax_scale=0.09, **kw)
            return got if isinstance(got, tuple) else (got, None)

        return run, H, T, None
    prefills, decodes = ([(300, 70), (0, 129), (17, 1)], []) if op == "context" else ([(300, 70), (0, 129)],
                                                                                      [1, 517, 2000])
    pg, kc, vc, q, k, v, start, seq_lens = mixed_batch(rng, "nhd", np.float32, H, KVH, D, BS, prefills, decodes,
                                                       filler=0)
    tq, tk, tv, tkc, tvc = (torch.from_numpy(np.ascontiguousarray(a)).to("cuda", dt) for a in (q, k, v, kc, vc))
    NP, P = int(start[-1]), len(prefills)
    T = NP + len(decodes)
    if op == "context":
        def run(**kw):
            o = torch.full((T, H, D), 7.0, dtype=dt, device="cuda")
            return o, pa.context_attention_fwd(tq, tk, tv, o, "auto", tkc, tvc, to_cuda(pg.block_tables),
                                               to_cuda(start), to_cuda(seq_lens), int(seq_lens.max()), 129,
                                               sm_scale=0.09, **kw)

        return run, H, T, None

    def run(**kw):
        return pa.mixed_attention(tq, tk, tv, tkc, tvc, to_cuda(pg.block_tables), to_cuda(seq_lens), to_cuda(start),
                                  P, NP, 129, 370, 2000, scale=0.09, **kw)

    def reference(out, lse):
        qr, kr, vr = (t.float().cpu().numpy() for t in (tq, tk, tv))
        K = [torch.from_numpy(x).to(dt).float().numpy() for x in pg.K]
        V = [torch.from_numpy(x).to(dt).float().numpy() for x in pg.V]
        got_o, got_lse = out.float().cpu().numpy(), lse.cpu().numpy()
        for s, (c, n) in enumerate(prefills):
            a, b = start[s], start[s + 1]
            ref, ref_lse = attend_lse(qr[a:b], np.concatenate([K[s], kr[a:b]]), np.concatenate([V[s], vr[a:b]]), 0.09,
                                      [c + i for i in range(n)])
            np.testing.assert_allclose(got_o[a:b], ref, atol=4e-3, rtol=4e-3)
            np.testing.assert_allclose(got_lse[:, a:b], ref_lse, atol=1e-3, rtol=1e-4)
        for i in range(len(decodes)):
            ref, ref_lse = decode_reference(qr[NP + i], K[P + i], V[P + i], 0.09)
            np.testing.assert_allclose(got_o[NP + i], ref, atol=4e-3, rtol=4e-3)
            np.testing.assert_allclose(got_lse[:, NP + i], ref_lse, atol=1e-3, rtol=1e-4)

    return run, H, T, reference


@pytest.mark.parametrize("op", ["decode", "v2", "prompt", "context", "mixed", "ragged"])
def test_lse_in_strided_views_on_cuda(op):
    """The lse into FlashInfer's [tokens, num_heads] layout (torch.empty(T, H).t()), a column slice
    of a wider tensor and every other column of one, each pre-filled with a sentinel: bit for bit
    the contiguous lse, the output the same, the floats outside the view kept; mixed_attention's lse
    (prefill rows, then each decode sequence's) and ragged_paged_attention's against the float64
    definition; an expanded lse refused."""
    run, H, T, reference = _cuda_lse_run(op)
    out0, lse0 = run(return_lse=True)
    torch.cuda.synchronize()
    assert lse0.is_cuda and lse0.dtype == torch.float32 and tuple(lse0.shape) == (H, T) and lse0.is_contiguous()
    if reference is not None:
        reference(out0, lse0)
    sentinel = -12345.5
    layouts = [
        ((T, H), lambda b: b.t()),
        ((H, T + 5), lambda b: b[:, 2:2 + T]),
        ((H, 2 * T), lambda b: b[:, ::2]),
    ]
    for shape, cut in layouts:
        buf = torch.full(shape, sentinel, device="cuda")
        lse = cut(buf)
        out, got = run(lse=lse)
        assert got is lse
        torch.cuda.synchronize()
        assert torch.equal(lse.contiguous().view(torch.int32), lse0.view(torch.int32)), shape
        assert torch.equal(out.contiguous().view(torch.int16), out0.contiguous().view(torch.int16)), shape
        outside = torch.ones(shape, dtype=torch.bool, device="cuda")
        cut(outside)[...] = False
        assert (buf[outside] == sentinel).all(), shape
    col = torch.full((H, 1), 7.0, device="cuda")
    with pytest.raises(ValueError, match=r"lse has stride 0 in dimension 1 .*an output takes positive strides only"):
        run(lse=col.expand(H, T))  # a broadcast: C would read its token stride 0 as the default
    torch.cuda.synchronize()
    assert (col == 7).all()


# ---- ragged_paged_attention's lse ---------------------------------------------------------------------------------


def _ragged_cuda_problem(seed, dtype, kv_lens, q_lens, pad_rows=0, H=8, KVH=2, D=128, PS=16):
    """(q and the combined cache as CUDA tensors of dtype, the index arrays on CUDA, the arguments
    of refattn.ragged_reference: q and the cache as dtype holds them, in float32, and the index
    arrays), pad_rows query rows past the last sequence's."""
    rng = np.random.default_rng(seed)
    pg = Paged(rng, kv_lens, KVH, D, PS, np.float32, spare_blocks=4)
    kv, _ = pg.fill("combined", filler=0)
    T = sum(q_lens) + pad_rows
    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to("cuda", dtype)  # noqa: E731
    tq, tkv = dev(rng.standard_normal((T, H, D))), dev(kv)
    cu = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    args = (np.array(kv_lens, np.int32), pg.block_tables, cu, np.array([len(kv_lens)], np.int32))
    return tq, tkv, [to_cuda(a) for a in args], (tq.float().cpu().numpy(), tkv.float().cpu().numpy(), *args)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("opts", [{}, dict(sinks=True, window=128, soft_cap=30.0), dict(window=100, mask_value=-4.0)],
                         ids=["plain", "sinks-window-cap", "mild-mask"])
def test_ragged_lse_on_cuda(dtype, opts):
    """return_lse=True on CUDA tensors: a new float32 [num_q_heads, max_num_batched_tokens] CUDA
    tensor holding each live row's lse (decode rows, a whole prompt, chunked prefills over long
    contexts; sinks, a -inf and a large one among them; a milder mask_value, whose masked keys count)
    against refattn.ragged_reference on the inputs as rounded to dtype, -inf in the padding rows
    (zeros in the new out); the output bit for bit the same without it; a caller's lse the same bits,
    its padding rows kept."""
    H, D = 8, 128 if dtype != torch.float32 else 64
    kv_lens, q_lens = [1, 300, 2100, 90, 700], [1, 300, 37, 1, 129]
    tq, tkv, targs, host = _ragged_cuda_problem(20, dtype, kv_lens, q_lens, pad_rows=3, H=H, D=D)
    T, R = tq.shape[0], sum(q_lens)
    sk = np.array([-np.inf, 0.5, 2.0, -1.0, 4.0, 30.0, 1.0, 3.0], np.float32)
    kw, ref_kw = ragged_options(opts, sk)
    if "sinks" in kw:
        kw["sinks"] = to_cuda(sk)
    out, lse = pa.ragged_paged_attention(tq, tkv, *targs, sm_scale=0.09, return_lse=True, **kw)
    plain = pa.ragged_paged_attention(tq, tkv, *targs, sm_scale=0.09, **kw)
    mine = torch.full((H, T), 7.0, device="cuda")
    assert pa.ragged_paged_attention(tq, tkv, *targs, sm_scale=0.09, lse=mine, **kw)[1] is mine
    torch.cuda.synchronize()
    assert lse.is_cuda and lse.dtype == torch.float32 and tuple(lse.shape) == (H, T) and lse.is_contiguous()
    assert torch.equal(out, plain)
    got, got_lse = out.float().cpu().numpy(), lse.cpu().numpy()
    ref, ref_lse = ragged_reference(*host, 0.09, **ref_kw)
    tol = {torch.float32: 1e-4, torch.float16: 4e-3, torch.bfloat16: 2e-2}[dtype]
    np.testing.assert_allclose(got[:R], ref[:R], atol=tol, rtol=tol)
    np.testing.assert_allclose(got_lse[:, :R], ref_lse[:, :R], atol=1e-3, rtol=1e-4)
    assert (got_lse[:, R:] == -np.inf).all() and (got[R:] == 0).all()
    mine = mine.cpu().numpy()
    np.testing.assert_array_equal(mine[:, :R], got_lse[:, :R])
    assert (mine[:, R:] == 7).all()


def test_ragged_cascade_of_decode_rows_on_cuda():
    """Decode rows over each sequence's first pages (the sinks there) and over the rest (the
    page_indices rows shifted past them), each lse into FlashInfer's [tokens, num_heads] layout
    through its transpose, merged by merge_attn_states: one call over all the pages (its output and lse)."""
    rng = np.random.default_rng(21)
    H, KVH, D, PS, dtype = 8, 2, 128, 16, torch.bfloat16
    kv_lens, cuts = [40, 700, 2049, 530], [2, 32, 64, 1]  # cuts in pages
    pg = Paged(rng, kv_lens, KVH, D, PS, np.float32, spare_blocks=4)
    kv, _ = pg.fill("combined", filler=0)
    S, width = len(kv_lens), pg.block_tables.shape[1]
    rest = np.zeros_like(pg.block_tables)
    for s, c in enumerate(cuts):
        rest[s, :width - c] = pg.block_tables[s, c:]
    dev = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to("cuda", dtype)  # noqa: E731
    tq, tkv = dev(rng.standard_normal((S, H, D))), dev(kv)
    cu, ns = to_cuda(np.arange(S + 1, dtype=np.int32)), to_cuda(np.array([S], np.int32))
    sinks = to_cuda(np.array([1.5, -np.inf, 3.0, 0.0, -0.5, 2.0, 30.0, -3.0], np.float32))

    def call(table, lens, **kw):
        out = torch.empty((S, H, D), dtype=dtype, device="cuda")
        lse = torch.full((S, H), 7.0, device="cuda").t()
        got = pa.ragged_paged_attention(tq, tkv, to_cuda(np.array(lens, np.int32)), to_cuda(table), cu, ns,
                                        sm_scale=0.09, out=out, lse=lse, **kw)
        assert got[0] is out and got[1] is lse
        return out, lse

    a, a_lse = call(pg.block_tables, [c * PS for c in cuts], sinks=sinks)
    b, b_lse = call(rest, [n - c * PS for n, c in zip(kv_lens, cuts)])
    whole, whole_lse = call(pg.block_tables, kv_lens, sinks=sinks)
    merged = torch.empty_like(whole)
    merged_lse = torch.full((S, H), 7.0, device="cuda").t()
    pa.merge_attn_states(merged, a, a_lse, b, b_lse, merged_lse)
    torch.cuda.synchronize()
    np.testing.assert_allclose(merged.float().cpu().numpy(), whole.float().cpu().numpy(), atol=3e-2, rtol=3e-2)
    np.testing.assert_allclose(merged_lse.cpu().numpy(), whole_lse.cpu().numpy(), atol=1e-3, rtol=1e-4)
    assert np.isfinite(whole_lse.cpu().numpy()).all()


def test_ragged_lse_inside_the_workspace_refused():
    """An lse inside the caller's workspace (the library's refusal: nothing launched, out untouched)."""
    tq, tkv, targs, _ = _ragged_cuda_problem(22, torch.float16, [300, 1], [20, 1])
    T, H = tq.shape[0], tq.shape[1]
    ws = torch.zeros(64 << 20, dtype=torch.uint8, device="cuda")
    lse = ws[:4 * H * T].view(torch.float32).view(H, T)
    out = torch.full(tq.shape, 7.0, dtype=torch.float16, device="cuda")
    with pytest.raises(ValueError, match="lse overlaps the workspace"):
        pa.ragged_paged_attention(tq, tkv, *targs, out=out, lse=lse, workspace=ws)
    torch.cuda.synchronize()
    assert (out == 7).all() and (ws == 0).all()
