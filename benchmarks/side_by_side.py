#!/usr/bin/env python3
"""Side by side on one GPU, in one process, on the same tensors: libpagedattn's
decode and prefill entries against FlashInfer's batch decode and PyTorch SDPA
(flash and cuDNN backends), each output checked against a float32 reference
before it is timed, with the measured copy, read and bf16 GEMM roofs beside them.

    python3 benchmarks/side_by_side.py --lib build/libpagedattn.so --out DIR [--quick]

Writes DIR/side_by_side.json (one row per case and implementation) and
DIR/side_by_side.md (the table). FlashInfer is optional: when `import
flashinfer` fails its rows say why. Timing: CUDA events around each call,
L2 flushed (a 256 MiB read that writes nothing) before each, median of the repeats.

The ctypes structs are the Python package's (python/pagedattn/_abi.py); main()
checks every mirror's size and field offsets against the loaded library.
"""
import argparse
import ctypes as C
import json
import math
import os
import statistics
import sys
import time

# ---- the C ABI (x86-64 SysV) ---------------------------------------------------

PA_F32, PA_F16, PA_BF16, PA_E4M3, PA_E5M2 = 0, 1, 2, 3, 4
PA_LAYOUT_VLLM, PA_LAYOUT_NHD, PA_LAYOUT_HND, PA_LAYOUT_COMBINED = 0, 1, 2, 3
PA_ATTN_DECODER = 0


def _load_abi():
    """The Python package's ctypes mirrors (python/pagedattn/_abi.py: one copy,
    checked field by field against the library), loaded as a plain module so
    this script needs no installed package."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "pagedattn", "_abi.py")
    spec = importlib.util.spec_from_file_location("pagedattn_abi", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_abi = _load_abi()
KvCache, DecodeParams, PromptParams = _abi.KvCache, _abi.DecodeParams, _abi.PromptAttentionParams


def load_lib(path):
    lib = C.CDLL(path)
    lib.pa_last_error.restype = C.c_char_p
    lib.pa_abi_sizeof.restype = C.c_size_t
    lib.pa_abi_sizeof.argtypes = [C.c_char_p]
    lib.pa_abi_offsetof.restype = C.c_int64
    lib.pa_abi_offsetof.argtypes = [C.c_char_p, C.c_char_p]
    for name in ("pa_paged_attention_v1", "pa_prompt_attention"):
        getattr(lib, name).argtypes = [C.c_void_p, C.c_void_p]
        getattr(lib, name).restype = C.c_int
    for name in ("pa_paged_attention_v2", "pa_paged_attention_decode"):
        getattr(lib, name).argtypes = [C.c_void_p, C.c_void_p, C.c_size_t, C.c_void_p]
        getattr(lib, name).restype = C.c_int
    for name in ("pa_paged_attention_v2_workspace_size", "pa_paged_attention_decode_workspace_size"):
        getattr(lib, name).argtypes = [C.c_void_p, C.POINTER(C.c_size_t)]
        getattr(lib, name).restype = C.c_int
    return lib


def ok(lib, status, what):
    if status != 0:
        raise RuntimeError(f"{what}: status {status}: {lib.pa_last_error().decode()}")


# ---- timing ----------------------------------------------------------------------


class Timer:
    def __init__(self, torch, reps):
        self.torch = torch
        self.reps = reps
        # The L2 flush reads 256 MiB and writes nothing (a reduction to one word): the L2 then holds
        # clean lines only. A zero_() left up to the L2's size of dirty lines, whose write-back the
        # timed kernel's misses paid for.
        self.flush = torch.ones(64 << 20, dtype=torch.int32, device="cuda")

    def median_ms(self, fn, reps=None):
        torch = self.torch
        reps = reps or self.reps
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            self.flush.max()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        return statistics.median(times), min(times), max(times)


def rel_err(out, ref):
    o = out.float()
    if not bool(o.isfinite().all()):
        return float("nan")
    return float((o - ref).norm() / ref.norm())


# ---- roofs -----------------------------------------------------------------------


def roofs(torch, timer):
    # Each roof is the best of its repeats (the fastest time), as the CLI takes its roofs
    # (bench_gpu.c): a median roof sits below the device's best and flatters every % of roof
    # beside it. Before 2026-12-07 these were medians.
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    a.random_(0, 255)
    b = torch.empty_like(a)
    _, ms, _ = timer.median_ms(lambda: b.copy_(a), reps=20)
    copy_gbs = 2 * n / (ms * 1e-3) / 1e9
    # Reads alone (a reduction of the same GiB to one word): decode reads the cache and writes
    # little, and a copy's writes cost more than its reads (SDPA's decode passed 100% of the copy
    # roof on 2026-11-27). Decode's roof is the faster of the two streams.
    _, ms, _ = timer.median_ms(lambda: a.view(torch.int32).max(), reps=20)
    read_gbs = n / (ms * 1e-3) / 1e9
    del a, b
    m = 8192
    x = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
    y = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
    _, ms, _ = timer.median_ms(lambda: x @ y, reps=20)
    gemm_tflops = 2 * m ** 3 / (ms * 1e-3) / 1e12
    del x, y
    torch.cuda.empty_cache()
    return copy_gbs, read_gbs, gemm_tflops


# ---- decode ----------------------------------------------------------------------


def decode_io_bytes(lens, hq, hk, d, elt, max_pages):
    """Bytes a decode moves: K and V of each sequence's keys (elt bytes an element), the bf16 query
    and output rows, and the int32 block table (max_pages a row). Pure arithmetic, tested without
    torch (tests/cli/side_by_side_figures.py)."""
    kv_bytes = sum(lens) * hk * d * 2 * elt
    return kv_bytes + 2 * len(lens) * hq * d * 2 + len(lens) * max_pages * 4


def decode_case(torch, lib, timer, fi, rows, roof, batch, ctx, hq=32, hk=8, d=128, bs=16, vary=False, kv="bf16",
                fi_ready=None, min_splits=()):
    dev = "cuda"
    g = torch.Generator(device=dev)
    g.manual_seed(batch * 100003 + ctx)
    if vary:  # lengths spread over [ctx/8, ctx]
        lens = torch.randint(max(1, ctx // 8), ctx + 1, (batch,), generator=g, device=dev).to(torch.int32)
    else:
        lens = torch.full((batch,), ctx, dtype=torch.int32, device=dev)
    lens_h = lens.cpu().tolist()
    pages = [(n + bs - 1) // bs for n in lens_h]
    max_pages = max(pages)
    total_pages = sum(pages)
    num_blocks = total_pages + 8
    perm = torch.randperm(num_blocks, generator=g, device=dev).to(torch.int32)
    tables = torch.zeros(batch, max_pages, dtype=torch.int32, device=dev)
    indices = perm[:total_pages]
    off = 0
    for s, p in enumerate(pages):
        tables[s, :p] = indices[off:off + p]
        off += p
    k = torch.randn(num_blocks, bs, hk, d, dtype=torch.bfloat16, device=dev, generator=g)
    v = torch.randn(num_blocks, bs, hk, d, dtype=torch.bfloat16, device=dev, generator=g)
    q = torch.randn(batch, hq, d, dtype=torch.bfloat16, device=dev, generator=g)
    scale = 1.0 / math.sqrt(d)
    fp8 = kv == "e4m3"
    if fp8:  # an fp8 e4m3 cache with unit scales; the reference reads the stored values (exact in bf16)
        k, v = k.to(torch.float8_e4m3fn), v.to(torch.float8_e4m3fn)
    kr, vr = (k.to(torch.bfloat16), v.to(torch.bfloat16)) if fp8 else (k, v)
    elt = 1 if fp8 else 2

    # float32 reference over the gathered (contiguous) history of each sequence
    ref = torch.empty(batch, hq, d, dtype=torch.float32, device=dev)
    for s in range(batch):
        ids = tables[s, :pages[s]].long()
        ks = kr[ids].reshape(-1, hk, d)[:lens_h[s]].float()
        vs = vr[ids].reshape(-1, hk, d)[:lens_h[s]].float()
        ks = ks.repeat_interleave(hq // hk, dim=1)
        vs = vs.repeat_interleave(hq // hk, dim=1)
        logits = torch.einsum("hd,thd->ht", q[s].float(), ks) * scale
        ref[s] = torch.einsum("ht,thd->hd", logits.softmax(-1), vs)

    io_bytes = decode_io_bytes(lens_h, hq, hk, d, elt, max_pages)
    case = f"decode b={batch} ctx={ctx}{' (varied)' if vary else ''} {hq}/{hk}x{d} {'fp8 e4m3 cache' if fp8 else 'bf16'} page {bs}"

    def record(impl, fn, out):  # out: the output tensor, or a function giving it after fn ran
        try:
            fn()
            torch.cuda.synchronize()
            err = rel_err(out() if callable(out) else out, ref)
            row = {"op": "decode", "case": case, "impl": impl, "rel_err": err, "batch": batch, "ctx": ctx,
                   "bytes": io_bytes}
            if not (err < 2e-2):
                row["error"] = f"rel_err {err:.3g} over 2e-2: not timed"
            else:
                med, lo, hi = timer.median_ms(fn)
                row.update(ms=med, ms_min=lo, ms_max=hi, gbs=io_bytes / (med * 1e-3) / 1e9)
                row["pct_roof"] = 100.0 * row["gbs"] / roof
        except Exception as e:  # noqa: BLE001 - a row per failure, the run goes on
            row = {"op": "decode", "case": case, "impl": impl, "error": f"{type(e).__name__}: {e}"[:300]}
        rows.append(row)
        print(json.dumps(row), flush=True)

    out = torch.full_like(q, float("nan"))
    p = DecodeParams()
    p.out, p.query, p.q_dtype = out.data_ptr(), q.data_ptr(), PA_BF16
    p.kv = KvCache(layout=PA_LAYOUT_NHD, dtype=PA_E4M3 if fp8 else PA_BF16, key=k.data_ptr(), value=v.data_ptr(),
                   num_blocks=num_blocks, block_size=bs, num_kv_heads=hk, head_size=d)
    p.block_tables, p.block_table_stride = tables.data_ptr(), max_pages
    p.seq_lens, p.num_seqs, p.num_heads, p.max_seq_len = lens.data_ptr(), batch, hq, max(lens_h)
    p.scale = scale
    stream = torch.cuda.current_stream().cuda_stream
    for entry in ("decode", "v2"):
        ws_bytes = C.c_size_t(0)
        fn_ws = lib.pa_paged_attention_decode_workspace_size if entry == "decode" else \
            lib.pa_paged_attention_v2_workspace_size
        ok(lib, fn_ws(C.byref(p), C.byref(ws_bytes)), entry + " workspace")
        ws = torch.empty(max(ws_bytes.value, 16), dtype=torch.uint8, device=dev)
        if entry == "decode":
            ws_auto = ws
        call = lib.pa_paged_attention_decode if entry == "decode" else lib.pa_paged_attention_v2
        out.fill_(float("nan"))
        record(f"libpagedattn {entry}",
               lambda call=call, ws=ws: ok(lib, call(C.byref(p), C.c_void_p(ws.data_ptr()), ws.numel(),
                                                     C.c_void_p(stream)), entry), out)
    # The recommended entry at other smallest splits (PAGEDATTN_DECODE_MIN_SPLIT, read at each call;
    # the workspace query does not depend on it).
    for m in min_splits:
        os.environ["PAGEDATTN_DECODE_MIN_SPLIT"] = str(m)
        out.fill_(float("nan"))
        record(f"libpagedattn decode (min split {m})",
               lambda ws=ws_auto: ok(lib, lib.pa_paged_attention_decode(C.byref(p), C.c_void_p(ws.data_ptr()),
                                                                       ws.numel(), C.c_void_p(stream)), "decode"), out)
        del os.environ["PAGEDATTN_DECODE_MIN_SPLIT"]
    # The same entry with its merge launched plainly (PAGEDATTN_DECODE_PDL=0, read at each call): what
    # launching the merge with programmatic dependent launch (the default on sm_90) gains.
    os.environ["PAGEDATTN_DECODE_PDL"] = "0"
    out.fill_(float("nan"))
    record("libpagedattn decode (merge without PDL)",
           lambda ws=ws_auto: ok(lib, lib.pa_paged_attention_decode(C.byref(p), C.c_void_p(ws.data_ptr()),
                                                                   ws.numel(), C.c_void_p(stream)), "decode"), out)
    del os.environ["PAGEDATTN_DECODE_PDL"]
    out.fill_(float("nan"))
    record("libpagedattn v1", lambda: ok(lib, lib.pa_paged_attention_v1(C.byref(p), C.c_void_p(stream)), "v1"), out)

    if isinstance(fi, str):
        rows.append({"op": "decode", "case": case, "impl": "flashinfer", "error": fi})
    else:
        indptr = torch.zeros(batch + 1, dtype=torch.int32, device=dev)
        indptr[1:] = torch.tensor(pages, dtype=torch.int32, device=dev).cumsum(0)
        last = torch.tensor([n - (p_ - 1) * bs for n, p_ in zip(lens_h, pages)], dtype=torch.int32, device=dev)
        for tc in (False, True):
            if fi_ready is not None and (d, kv, tc) not in fi_ready:
                # Compiling a FlashInfer module here would take minutes of the run: only the
                # modules the warm-up finished are timed.
                rows.append({"op": "decode", "case": case, "impl": f"flashinfer {'tensor-core' if tc else 'cuda-core'}",
                             "error": "not compiled in this run's warm-up (device-time box)"})
                continue
            fo = torch.full_like(q, float("nan"))
            try:
                wsb = torch.zeros(128 << 20, dtype=torch.uint8, device=dev)
                w = fi.BatchDecodeWithPagedKVCacheWrapper(wsb, "NHD", use_tensor_cores=tc)
                w.plan(indptr, indices, last, hq, hk, d, bs, q_data_type=torch.bfloat16,
                       kv_data_type=k.dtype, sm_scale=scale)
            except Exception as e:  # noqa: BLE001
                rows.append({"op": "decode", "case": case, "impl": f"flashinfer tc={tc}",
                             "error": f"plan: {type(e).__name__}: {e}"[:300]})
                continue
            record(f"flashinfer {'tensor-core' if tc else 'cuda-core'}",
                   lambda w=w, fo=fo: w.run(q, (k, v), out=fo), fo)

    if not vary and not fp8:  # SDPA over the same data gathered contiguous (gather not timed): a contiguous-KV baseline
        kc = torch.stack([k[tables[s, :pages[s]].long()].reshape(-1, hk, d)[:ctx] for s in range(batch)])
        vc = torch.stack([v[tables[s, :pages[s]].long()].reshape(-1, hk, d)[:ctx] for s in range(batch)])
        kc, vc = kc.transpose(1, 2).contiguous(), vc.transpose(1, 2).contiguous()
        q4 = q.unsqueeze(2)
        held = [None]  # SDPA's own output, kept (no copy in the timed region)

        def sdpa():
            held[0] = torch.nn.functional.scaled_dot_product_attention(q4, kc, vc, scale=scale, enable_gqa=True)

        record("torch sdpa (contiguous KV)", sdpa, lambda: held[0].view(batch, hq, d))
        del kc, vc
    del k, v, kr, vr
    torch.cuda.empty_cache()


# ---- prefill ---------------------------------------------------------------------


def causal_prefill_flops(batch, hq, d, seqlen):
    """Causal prompt FLOPs: QK^T and PV (2 FLOPs a multiply-add each) over the lower triangle."""
    return 4.0 * batch * hq * d * seqlen * (seqlen + 1) / 2


def prefill_case(torch, lib, timer, rows, gemm_roof, batch, seqlen, hq=32, hk=8, d=128):
    dev = "cuda"
    g = torch.Generator(device=dev)
    g.manual_seed(batch * 7919 + seqlen)
    n = batch * seqlen
    q = torch.randn(n, hq, d, dtype=torch.bfloat16, device=dev, generator=g)
    k = torch.randn(n, hk, d, dtype=torch.bfloat16, device=dev, generator=g)
    v = torch.randn(n, hk, d, dtype=torch.bfloat16, device=dev, generator=g)
    cu = torch.arange(0, n + 1, seqlen, dtype=torch.int32, device=dev)
    scale = 1.0 / math.sqrt(d)
    flops = causal_prefill_flops(batch, hq, d, seqlen)
    case = f"prefill causal b={batch} len={seqlen} {hq}/{hk}x{d} bf16"

    q4 = q.view(batch, seqlen, hq, d).transpose(1, 2)
    k4 = k.view(batch, seqlen, hk, d).transpose(1, 2).repeat_interleave(hq // hk, dim=1).contiguous()
    v4 = v.view(batch, seqlen, hk, d).transpose(1, 2).repeat_interleave(hq // hk, dim=1).contiguous()
    q4c = q4.contiguous()
    # reference: SDPA's math path in float32 on a slice of heads (full f32 would not fit for long rows)
    heads_checked = list(range(0, hq, 8))
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        ref = torch.nn.functional.scaled_dot_product_attention(
            q4c[:, heads_checked].float(), k4[:, heads_checked].float(), v4[:, heads_checked].float(),
            is_causal=True, scale=scale)

    def record(impl, fn, out4):
        try:
            fn()
            torch.cuda.synchronize()
            err = rel_err(out4()[:, heads_checked], ref)
            row = {"op": "prefill", "case": case, "impl": impl, "rel_err": err, "batch": batch, "seqlen": seqlen,
                   "flops": flops}
            if not (err < 2e-2):
                row["error"] = f"rel_err {err:.3g} over 2e-2: not timed"
            else:
                med, lo, hi = timer.median_ms(fn, reps=20)
                row.update(ms=med, ms_min=lo, ms_max=hi, tflops=flops / (med * 1e-3) / 1e12)
                row["pct_roof"] = 100.0 * row["tflops"] / gemm_roof
        except Exception as e:  # noqa: BLE001
            row = {"op": "prefill", "case": case, "impl": impl, "error": f"{type(e).__name__}: {e}"[:300]}
        rows.append(row)
        print(json.dumps(row), flush=True)

    out = torch.full_like(q, float("nan"))
    p = PromptParams()
    p.out, p.query, p.key, p.value = out.data_ptr(), q.data_ptr(), k.data_ptr(), v.data_ptr()
    p.dtype, p.attn_type = PA_BF16, PA_ATTN_DECODER
    p.cu_seqlens_q, p.cu_seqlens_k = cu.data_ptr(), None
    p.num_seqs, p.num_heads, p.num_kv_heads, p.head_size = batch, hq, hk, d
    p.num_q_tokens, p.num_k_tokens, p.max_seqlen_q, p.max_seqlen_k = n, n, seqlen, seqlen
    p.scale = scale
    stream = torch.cuda.current_stream().cuda_stream
    PATH_AUTO, PATH_MMA, PATH_HOPPER = 0, 1, 2
    ok(lib, lib.pa_set_prefill_path(PATH_MMA), "set_prefill_path")
    record("libpagedattn prompt (mma.sync)",
           lambda: ok(lib, lib.pa_prompt_attention(C.byref(p), C.c_void_p(stream)), "prompt"),
           lambda: out.view(batch, seqlen, hq, d).transpose(1, 2).float())
    # The sm_90a kernel, where this device and build can run it (the default for prompts there).
    if hasattr(lib, "pa_prefill_hopper_available") and lib.pa_prefill_hopper_available():
        ok(lib, lib.pa_set_prefill_path(PATH_HOPPER), "set_prefill_path")
        out.fill_(float("nan"))
        record("libpagedattn prompt (Hopper wgmma)",
               lambda: ok(lib, lib.pa_prompt_attention(C.byref(p), C.c_void_p(stream)), "prompt"),
               lambda: out.view(batch, seqlen, hq, d).transpose(1, 2).float())
        # The same kernel with persistent CTAs (PAGEDATTN_PREFILL_PERSISTENT=on, read at each launch: one
        # CTA per SM), against the default one CTA per item: scripts/hopper_item_overhead.py fits the
        # default's per-item cost and sets this row beside what hiding part of it would give.
        os.environ["PAGEDATTN_PREFILL_PERSISTENT"] = "on"
        out.fill_(float("nan"))
        record("libpagedattn prompt (Hopper wgmma, persistent CTAs)",
               lambda: ok(lib, lib.pa_prompt_attention(C.byref(p), C.c_void_p(stream)), "prompt"),
               lambda: out.view(batch, seqlen, hq, d).transpose(1, 2).float())
        del os.environ["PAGEDATTN_PREFILL_PERSISTENT"]
    ok(lib, lib.pa_set_prefill_path(PATH_AUTO), "set_prefill_path")

    from torch.nn.attention import SDPBackend, sdpa_kernel
    for name, backend in (("torch sdpa flash", SDPBackend.FLASH_ATTENTION), ("torch sdpa cudnn", SDPBackend.CUDNN_ATTENTION)):
        held = [None]  # SDPA's own output, kept: a copy of it in the timed region cost ~90 us a call
        # (134 MB read and written; 15% of FlashAttention-2's time at b=16 L=1024, run 11)

        def run(backend=backend, held=held):
            with sdpa_kernel(backend):
                held[0] = torch.nn.functional.scaled_dot_product_attention(q4c, k4, v4, is_causal=True, scale=scale)

        record(name, run, lambda held=held: held[0].float())
    del q, k, v, q4c, k4, v4, ref
    torch.cuda.empty_cache()


# Decode cases: (batch, context, varied lengths, KV heads[, query heads, head size]); 32 query heads
# and head 128 unless given. Heads 64 (Llama-3.2-1B) and 256 (Gemma 2) run the tensor-core kernel
# since 2026-11-25, and so does group 16 (64/4, Qwen3-235B's shape) at head 128.
# A 7th field "e4m3" makes the cache fp8 e4m3 (unit scales): the fp8 shapes budget-decode-2026-11-25.md
# predicts (head 128, head 64, group 16).
DECODE_CASES = [(1, 4096, False, 8), (64, 4096, False, 8), (128, 2048, False, 8), (16, 32768, False, 8),
                (128, 4096, True, 8), (1, 32768, False, 8), (64, 4096, False, 32), (1, 32768, False, 32),
                (64, 4096, False, 8, 32, 64), (64, 4096, False, 8, 16, 256), (64, 4096, False, 4, 64, 128),
                (64, 4096, False, 8, 32, 128, "e4m3"), (16, 32768, False, 8, 32, 128, "e4m3"),
                (64, 4096, False, 8, 32, 64, "e4m3"), (64, 4096, False, 4, 64, 128, "e4m3")]


def decode_shape(c):
    """(query heads, KV heads, head size) of a DECODE_CASES entry."""
    return (c[4] if len(c) > 4 else 32), c[3], (c[5] if len(c) > 5 else 128)


def decode_kv(c):
    """The cache dtype of a DECODE_CASES entry: "bf16" or "e4m3"."""
    return c[6] if len(c) > 6 else "bf16"


def fi_modules():
    """FlashInfer's modules the decode cases need, (head size, cache dtype, tensor cores), most
    wanted first: head 128 bf16, then fp8, then the other head sizes. The group size is not part of a
    module (FlashInfer dispatches it at run time), so one head-128 module serves 32/8, 32/32 and 64/4."""
    want = []
    for c in DECODE_CASES:
        for tc in (False, True):
            m = (decode_shape(c)[2], decode_kv(c), tc)
            if m not in want:
                want.append(m)
    return sorted(want, key=lambda m: (m[0] != 128, m[1] != "bf16", m[0], m[2]))


def warm_flashinfer(torch, ready_file=None):
    """Compiles (JIT) FlashInfer's modules in fi_modules() order, appending "HEAD KV TC" to ready_file
    as each becomes usable, so a run whose warm-up is cut short times the modules it has."""
    import flashinfer
    t0 = time.time()
    bs = 16
    indptr = torch.tensor([0, 3, 6], dtype=torch.int32, device="cuda")
    indices = torch.arange(6, dtype=torch.int32, device="cuda")
    last = torch.tensor([5, 16], dtype=torch.int32, device="cuda")
    for d, kv, tc in fi_modules():
        hq, hk = 32, 8
        k = torch.randn(8, bs, hk, d, dtype=torch.bfloat16, device="cuda")
        v = torch.randn_like(k)
        if kv == "e4m3":
            k, v = k.to(torch.float8_e4m3fn), v.to(torch.float8_e4m3fn)
        q = torch.randn(2, hq, d, dtype=torch.bfloat16, device="cuda")
        try:
            w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(torch.zeros(128 << 20, dtype=torch.uint8, device="cuda"),
                                                              "NHD", use_tensor_cores=tc)
            w.plan(indptr, indices, last, hq, hk, d, bs, q_data_type=torch.bfloat16, kv_data_type=k.dtype,
                   sm_scale=1.0 / math.sqrt(d))
            w.run(q, (k, v))
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - one module that fails (say, no fp8 on a path) leaves the others
            print(f"flashinfer head {d} {kv} tensor_cores={tc} failed: {type(e).__name__}: {e}"[:400], flush=True)
            continue
        if ready_file:
            with open(ready_file, "a") as f:
                f.write(f"{d} {kv} {int(tc)}\n")
        print(f"flashinfer {flashinfer.__version__} head {d} {kv} tensor_cores={tc} ready after {time.time() - t0:.0f} s",
              flush=True)


def read_ready(path):
    """The modules a warm-up finished: a set of (head size, cache dtype, tensor cores)."""
    out = set()
    if path and os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 3:
                out.add((int(f[0]), f[1], f[2] == "1"))
    return out


# ---- main ------------------------------------------------------------------------


def table(rows, copy_gbs, read_gbs, gemm_tflops, meta):
    lines = [f"# Side by side: {meta['device']}", "",
             f"- date: {meta['date']}; commit: {meta['commit']}; driver: {meta['driver']}; torch {meta['torch']};"
             f" flashinfer {meta['flashinfer']}",
             f"- measured roofs (each the best of 20 repeats): device-to-device copy {copy_gbs:.0f} GB/s (bytes read + written);"
             f" reads alone {read_gbs:.0f} GB/s (a reduction of 1 GiB); bf16 GEMM 8192^3 {gemm_tflops:.0f} TFLOP/s",
             "- decode: bytes = K+V of every attended token + q + out + block tables; % is of the faster"
             f" of the copy and read roofs ({max(copy_gbs, read_gbs):.0f} GB/s; before 2026-12-06 the copy roof).",
             "- prefill: FLOPs = 4*b*h*d*L(L+1)/2 (causal); % is of the GEMM roof.",
             "- every figure is the median of repeated CUDA-event timings with the L2 flushed before each;"
             " each output was first checked against a float32 reference (rel. L2 error shown).", "",
             "| case | implementation | rel. error | median ms | GB/s or TFLOP/s | % of roof |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['impl']} | {r.get('rel_err', '')} | - | {r['error']} | - |")
            continue
        rate = f"{r['gbs']:.0f} GB/s" if "gbs" in r else f"{r['tflops']:.0f} TFLOP/s"
        lines.append(f"| {r['case']} | {r['impl']} | {r['rel_err']:.1e} | {r['ms']:.4f} | {rate} | {r['pct_roof']:.0f}% |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib")
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true", help="fewer cases and repeats")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--no-flashinfer", action="store_true")
    ap.add_argument("--decode-only", action="store_true", help="skip the prefill cases")
    ap.add_argument("--warm-flashinfer", action="store_true",
                    help="only compile FlashInfer's decode kernels for the benchmark's shapes (JIT), then exit")
    ap.add_argument("--decode-min-splits", default="",
                    help="comma-separated smallest splits (PAGEDATTN_DECODE_MIN_SPLIT) to time the recommended"
                    " decode entry at too, beside its default")
    ap.add_argument("--fi-ready", help="the warm-up's ready file: written by --warm-flashinfer; read by a"
                    " benchmark run, which then times FlashInfer only on the modules listed there")
    a = ap.parse_args()
    import torch
    if a.warm_flashinfer:
        warm_flashinfer(torch, a.fi_ready)
        return
    if not a.lib or not a.out:
        ap.error("--lib and --out are required")
    lib = load_lib(a.lib)
    drift = _abi.abi_mismatches(lib)
    if drift:
        sys.exit("the ctypes mirrors do not match " + a.lib + ":\n  " + "\n  ".join(drift))
    fi = "not tried (--no-flashinfer)"
    fi_version = "-"
    if not a.no_flashinfer:
        try:
            import flashinfer
            fi, fi_version = flashinfer, flashinfer.__version__
        except Exception as e:  # noqa: BLE001
            fi = f"import flashinfer failed: {type(e).__name__}: {e}"[:300]
    timer = Timer(torch, 10 if a.quick else a.reps)
    copy_gbs, read_gbs, gemm_tflops = roofs(torch, timer)
    mem_roof = max(copy_gbs, read_gbs)
    print(f"roofs: copy {copy_gbs:.0f} GB/s, read {read_gbs:.0f} GB/s, bf16 gemm {gemm_tflops:.0f} TFLOP/s",
          flush=True)
    rows = []
    dcases = list(DECODE_CASES)
    pcases = [] if a.decode_only else [(4, 4096), (16, 1024), (1, 16384)]
    if a.quick:
        dcases, pcases = dcases[1:2], pcases[:1]
    fi_ready = read_ready(a.fi_ready) if a.fi_ready else None
    os.makedirs(a.out, exist_ok=True)
    meta = {"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "commit": os.environ.get("PA_COMMIT") or os.popen("git rev-parse --short HEAD 2>/dev/null").read().strip()
            or "unknown",
            "driver": os.popen("nvidia-smi --query-gpu=driver_version --format=csv,noheader").read().strip(),
            "torch": torch.__version__, "flashinfer": fi_version}

    def write(final):
        """The JSON and the table as they stand: after every case, so that a time box or a fault that
        ends the run (a CUDA error outside record() poisons the context) leaves the rows measured."""
        with open(os.path.join(a.out, "side_by_side.json"), "w") as f:
            json.dump({"meta": dict(meta, complete=final), "copy_gbs": copy_gbs, "read_gbs": read_gbs,
                       "decode_roof_gbs": mem_roof, "gemm_tflops": gemm_tflops, "rows": rows}, f, indent=1)
        md = table(rows, copy_gbs, read_gbs, gemm_tflops, meta)
        with open(os.path.join(a.out, "side_by_side.md"), "w") as f:
            f.write(md if final else md + "\n(partial: the run stopped before its last case)\n")
        return md

    done = False
    try:
        for c in dcases:
            hq, hk, d = decode_shape(c)
            decode_case(torch, lib, timer, fi, rows, mem_roof, c[0], c[1], hq=hq, hk=hk, d=d, vary=c[2],
                        kv=decode_kv(c), fi_ready=fi_ready,
                        min_splits=[int(m) for m in a.decode_min_splits.split(",") if m])
            write(False)
        for b, L in pcases:
            prefill_case(torch, lib, timer, rows, gemm_tflops, b, L)
            write(False)
        done = True
    finally:
        md = write(done)
    print(md)


if __name__ == "__main__":
    main()
