"""vLLM-compatible ops on DLPack tensors (vllm._custom_ops style).

Every op takes tensors of any framework with __dlpack__ (torch, cupy, jax,
numpy); outputs, and the caches an op writes, are written in place, so they must be
writable (JAX arrays are immutable: inputs only; a read-only one, by DLPack 1.x's READ_ONLY
flag, is a ValueError). Inputs may be read-only (NumPy's flags.writeable False, np.frombuffer,
mmap_mode='r'): DLPack 1.x capsules are asked for, which carry that flag. All tensors of one
call live on one device: CUDA tensors run the kernels asynchronously on the caller's current
stream (torch's or cupy's, or an explicit `stream=`), host tensors run the CPU reference (pa_ref_*), so every op
can be tried with NumPy on a laptop. With an explicit `stream=`, what an op
allocates itself (workspace, scale scalars from Python / NumPy numbers, outputs it
creates, copy_blocks' pointer arrays) is allocated with that stream current
(torch, cupy), so it is ready before the op's kernels and reused only after; the
tensors' device is made current for the call. The launch stream does not wait for
any other: inputs made on another stream, and outputs read on one, are the caller's
to order (an event), as with vLLM's ops. torch tensors and cupy arrays in one call
need an explicit stream (ValueError otherwise: each framework allocates on its own).
CUDA arrays are exported with DLPack's stream -1 (no synchronisation, so graph
capture is undisturbed); a torch tensor that requires grad is exported detached where the op
only reads it, and is a ValueError where the op writes it (an output, an lse, a cache, a workspace:
the library writes through its address, which autograd does not see; torch's own in-place ops
refuse a leaf that requires grad).
Shapes, strides, dtypes and devices are checked before the C call; bad input
raises ValueError (invalid argument, a caller's workspace shorter than the op's
size, a tensor another argument makes required given as None: context_attention_fwd's
k and v without cache_only), NotImplementedError (valid but unsupported
configuration), TypeError (no DLPack, None for a tensor the op always needs, a DLPack device
other than CPU / CUDA) or RuntimeError (a CUDA failure), and nothing is written.
On CUDA, the contents of device arrays (sequence lengths, offsets, block ids,
slot mappings) are read by the kernels, not here: a sequence or slot that
breaks a bound is skipped on the device (its rows left as they were, as the C
headers say), where the CPU path raises ValueError naming it.
Where a view may be strided, its strides must be positive: a broadcast dimension
(stride 0, e.g. torch's expand) or a reversed one is a ValueError. Block tables
are row-major (a column slice of a wider table is refused: pass a contiguous
copy). Integers that go into the library's int32 fields must fit in int32
(ValueError). Empty tensors (0 sequences, tokens or pairs) make an op a no-op.
What an op writes must not share a byte with what it reads or with another buffer it writes
(ValueError naming both): an out over its query or a cache, a cache's key over its value,
swap_blocks' src over its dst, and copy_blocks' caches, two layers' or one layer's key and
value (the same buffer named twice is allowed there: its blocks are copied twice); the in-place
cases an op names (merge_attn_states' output as one of its inputs) excepted.

The log-sum-exp output of the decode, context, prompt, mixed and ragged ops (return_lse= / lse=) is
float32 [num_heads, tokens] on the query's device. One the op makes is contiguous. A caller's may
be any view whose strides are positive where its dimension holds more than one element, as
merge_attn_states' lse tensors: FlashInfer's [tokens, num_heads] lse as its transpose (lse.T; its
values are base-2 log-sum-exps by default, these natural logs: multiply FlashInfer's by ln 2), a
column slice of a wider array (big[:, a:b]), every other column (big[:, ::2]). Only its elements
are written, never the floats between them. A broadcast (stride 0, e.g. expand) or reversed
dimension of more than one element is a ValueError, and so are strides that put two elements on
one float (the library's refusal).

Cache layouts (elements; x = 16 // itemsize of the cache dtype):
    vLLM paged   key_cache   [num_blocks, num_kv_heads, head_size // x, block_size, x]
                 value_cache [num_blocks, num_kv_heads, head_size, block_size]
    flash        key_cache, value_cache [num_blocks, block_size, num_kv_heads, head_size]
                 (NHD; an HND cache is the same logical shape with strides of
                 [num_blocks, num_kv_heads, block_size, head_size] memory, i.e.
                 hnd.permute(0, 2, 1, 3); key and value must share strides)
    combined     kv_cache [num_blocks, block_size, 2 * num_kv_heads, head_size], K at even
                 and V at odd combined heads (ragged path)
fp8 caches: kv_cache_dtype 'fp8' / 'fp8_e4m3' / 'fp8_e5m2' with uint8 (or
float8) storage, k_scale / v_scale float32 tensors of one element on the cache's
device (or Python floats or NumPy real scalars such as np.float32(0.5): copied to the
device, so not during graph capture), or
both of num_kv_heads elements (contiguous): a scale per KV head, vLLM's
per-attention-head scales (pa_kv_cache.scales_per_head). A cache that is not fp8 reads
neither scale, as vLLM's ops do (JAX's ragged kernel would apply them to any cache).
"""
import ctypes as C
import math
import numbers

from . import _abi as A
from ._lib import check, lib
from ._tensor import (PA_DTYPES, QUERY_DTYPES, arg, c_stride, cache_dtype, cstruct, empty, i32, need_contiguous,
                      need_dtype, need_inner_contiguous, need_ndim, need_shape, on_host, real, same_device,
                      small_array, stream_handle, stream_scope, views)
from ._dlpack import view

__all__ = ["reshape_and_cache", "reshape_and_cache_flash", "paged_attention_v1", "paged_attention_v2",
           "paged_attention_decode", "copy_blocks", "swap_blocks", "context_attention_fwd",
           "prompt_attention", "ragged_paged_attention", "kv_cache_update", "paged_attention_workspace_size",
           "convert_fp8", "mixed_attention", "merge_attn_states"]


# ---- cache descriptors ----------------------------------------------------------------------------------


def _scale_view(op, name, s, cache_v, keep, per_head=0):
    """A one-float scale (None for None) on the cache's device, as a view; with per_head > 1, of
    per_head floats (or one)."""
    if s is None:
        return None
    if isinstance(s, numbers.Real):  # int, float (bool too) and NumPy's real scalars (np.float32(0.5))
        if not (math.isfinite(s) and s > 0):
            raise ValueError(f"{op}: {name} = {s!r} must be finite and > 0")
        s = small_array(cache_v.obj, [float(s)], "float32", f"{op}: {name} given as a Python number")
        keep.append(s)
    v = view(s, f"{op}: {name}")
    keep.append(v)
    need_dtype(op, v, ("float32",))
    if v.numel != 1 and not (per_head > 1 and v.numel == per_head):
        heads = f" or one per KV head ({per_head})" if per_head > 1 else ""
        raise ValueError(f"{op}: {name} must hold one float32{heads}, got shape {list(v.shape)}")
    if v.numel > 1:
        need_contiguous(op, v)
    if on_host(v) != on_host(cache_v) or (not on_host(v) and v.device_id != cache_v.device_id):
        raise ValueError(f"{op}: {name} is on {v.device} but the cache is on {cache_v.device}")
    return v


def _scale_ptr(op, name, s, cache_v, keep):
    """Address of a one-float scale (NULL for None) on the cache's device."""
    v = _scale_view(op, name, s, cache_v, keep)
    return None if v is None else v.ptr


def _vllm_cache(op, kc, vc, kv_cache_dtype):
    need_ndim(op, kc, 5)
    need_ndim(op, vc, 4)
    dt = cache_dtype(op, kc, kv_cache_dtype)
    if cache_dtype(op, vc, kv_cache_dtype) != dt:
        raise ValueError(f"{op}: key_cache ({kc.dtype}) and value_cache ({vc.dtype}) dtypes differ")
    nb, kvh, hx, bs, x = kc.shape
    want_x = 16 // (1 if dt >= A.PA_DTYPE_FP8_E4M3 else kc.itemsize)
    if x != want_x:
        raise ValueError(f"{op}: key_cache's last dimension is {x}; the vLLM layout packs x = 16 bytes / "
                         f"element size = {want_x}")
    need_shape(op, vc, (nb, kvh, hx * x, bs), " ([num_blocks, num_kv_heads, head_size, block_size])")
    need_contiguous(op, kc)
    need_contiguous(op, vc)
    return cstruct(op, A.KvCache, layout=A.PA_LAYOUT_VLLM, dtype=dt, key=kc.ptr, value=vc.ptr, num_blocks=nb,
                   block_size=bs, num_kv_heads=kvh, head_size=hx * x)


def _flash_cache(op, kc, vc, kv_cache_dtype):
    need_ndim(op, kc, 4)
    need_ndim(op, vc, 4)
    dt = cache_dtype(op, kc, kv_cache_dtype)
    if cache_dtype(op, vc, kv_cache_dtype) != dt:
        raise ValueError(f"{op}: key_cache ({kc.dtype}) and value_cache ({vc.dtype}) dtypes differ")
    need_shape(op, vc, kc.shape, " (value_cache must match key_cache)")
    if tuple(vc.strides) != tuple(kc.strides):
        raise ValueError(f"{op}: value_cache strides {list(vc.strides)} differ from key_cache strides "
                         f"{list(kc.strides)}; the flash layouts take one set of strides for both")
    need_inner_contiguous(op, kc)
    nb, bs, kvh, hs = kc.shape
    sb, sp, sh = (c_stride(op, kc, i) for i in range(3))
    # NHD when a token's heads lie inside its page (or a block holds one token), HND when a
    # head's tokens do. A dimension of one element has no stride that matters: c_stride passes
    # it to C as 0 (C resolves it to the layout's contiguous value), so an HND cache of
    # block_size 1 is an NHD cache whose page stride is num_kv_heads * head_stride.
    layout = A.PA_LAYOUT_FLASH_NHD if (bs == 1 or sp >= sh) else A.PA_LAYOUT_FLASH_HND
    return cstruct(op, A.KvCache, layout=layout, dtype=dt, key=kc.ptr, value=vc.ptr, num_blocks=nb, block_size=bs,
                   num_kv_heads=kvh, head_size=hs, block_stride=sb, page_stride=sp, head_stride=sh)


def _paged_cache(op, kc, vc, kv_cache_dtype):
    """vLLM layout for a 5-D key cache, flash NHD/HND for a 4-D one."""
    if kc.ndim not in (4, 5):
        raise ValueError(f"{op}: {arg(kc)} must be 5-D (vLLM layout) or 4-D (flash layout), got shape "
                         f"{list(kc.shape)}")
    return _vllm_cache(op, kc, vc, kv_cache_dtype) if kc.ndim == 5 else _flash_cache(op, kc, vc, kv_cache_dtype)


def _combined_cache(op, kv, kv_cache_dtype, page_size=None):
    """kv [num_pages, page_size, 2*kv_heads, head] or flattened [num_pages*page_size, 2*kv_heads, head]."""
    need_ndim(op, kv, (3, 4))
    need_contiguous(op, kv)
    dt = cache_dtype(op, kv, kv_cache_dtype)
    if kv.ndim == 4:
        nb, ps, ch, hs = kv.shape
        if page_size is not None and page_size != ps:
            raise ValueError(f"{op}: page_size {page_size} differs from {arg(kv)}.shape[1] = {ps}")
    else:
        rows, ch, hs = kv.shape
        if page_size is None or page_size <= 0 or rows % page_size:
            raise ValueError(f"{op}: {arg(kv)} has {rows} rows, not a positive multiple of page_size {page_size}")
        ps, nb = page_size, rows // page_size
    if ch % 2:
        raise ValueError(f"{op}: {arg(kv)} has {ch} combined heads; the combined layout holds 2 * num_kv_heads")
    return cstruct(op, A.KvCache, layout=A.PA_LAYOUT_COMBINED, dtype=dt, key=kv.ptr, value=None, num_blocks=nb,
                   block_size=ps, num_kv_heads=ch // 2, head_size=hs)


def _fill_scales(op, cache, kc_view, k_scale, v_scale, keep):
    """The fp8 cache's scales: one of each, or one per KV head for both (scales_per_head)."""
    if cache.dtype in (A.PA_DTYPE_FP8_E4M3, A.PA_DTYPE_FP8_E5M2):
        nh = cache.num_kv_heads
        kv_ = _scale_view(op, "k_scale", k_scale, kc_view, keep, nh)
        vv_ = _scale_view(op, "v_scale", v_scale, kc_view, keep, nh)
        cache.k_scale = None if kv_ is None else kv_.ptr
        cache.v_scale = None if vv_ is None else vv_.ptr
        kn, vn = (1 if v is None else v.numel for v in (kv_, vv_))
        if nh > 1 and (kn > 1) != (vn > 1):  # None counts as one scale (1.0): per head is for both
            kd, vd = ("None" if v is None else f"{v.numel} float(s)" for v in (kv_, vv_))
            raise ValueError(f"{op}: k_scale is {kd} and v_scale {vd}: give one of each, or one per KV "
                             f"head ({nh}) for both")
        cache.scales_per_head = 1 if nh > 1 and (kn > 1 or vn > 1) else 0


def _heads_contiguous(op, x, head_size):
    """x [rows, heads, head_size] with contiguous heads and rows at a positive stride; returns the
    row stride to pass to C (0 for an empty x, which passes)."""
    need_ndim(op, x, 3)
    if x.numel and (x.strides[2] != 1 or (x.shape[1] > 1 and x.strides[1] != head_size)):
        raise ValueError(f"{op}: {arg(x)} must have contiguous heads (strides [*, {head_size}, 1]), got "
                         f"{list(x.strides)}")
    return c_stride(op, x, 0)


def _int_vector(op, v, dtype, n=None, what=""):
    need_dtype(op, v, (dtype,))
    need_ndim(op, v, 1)
    need_contiguous(op, v)
    if n is not None and v.shape[0] < n:
        raise ValueError(f"{op}: {arg(v)} has {v.shape[0]} entries; needs at least {n}{what}")


def _opt(x):
    return 0 if x is None else x


def _block_table(op, bt, rows):
    """Checks an int32 [>= rows, width] row-major block table; returns its width. C takes one
    number for both the row stride and the width it checks the sequence lengths against, so the
    rows must be adjacent (row stride == width: a column slice of a wider table is refused) and
    at least one column wide."""
    need_dtype(op, bt, ("int32",))
    need_ndim(op, bt, 2)
    n, width = bt.shape
    if n < rows:
        raise ValueError(f"{op}: {arg(bt)} has {n} rows for {rows} sequences")
    if n and width < 1:
        raise ValueError(f"{op}: {arg(bt)} has shape {list(bt.shape)}: no columns (block ids) for its rows")
    if not bt.is_contiguous():
        raise ValueError(f"{op}: {arg(bt)} must be contiguous (row-major, row stride = width {width}), got strides "
                         f"{list(bt.strides)} for shape {list(bt.shape)}; pass a contiguous copy (torch: "
                         ".contiguous(), NumPy: np.ascontiguousarray)")
    return max(width, 1)  # an empty table (no rows) has nothing to read; C wants a positive width


def _head_floats(op, al, num_heads):
    """Address of float32 [num_heads] contiguous per-head values, ALiBi slopes or
    attention sinks (None for None)."""
    if al is None:
        return None
    need_dtype(op, al, ("float32",))
    need_shape(op, al, (num_heads,), " ([num_heads])")
    need_contiguous(op, al)
    return al.ptr


def _lse_output(op, lse, return_lse, qv, num_heads, tokens, keep, rows="num_tokens"):
    """(fields, tensor) of an attention op's log-sum-exp output, float32 [num_heads, tokens]
    (head-major: FlashAttention's softmax_lse; a decode's tokens are its sequences) on q's device:
    `fields` are the params' lse, lse_head_stride and lse_token_stride, to pass to cstruct, and
    `tensor` what the op returns; ({"lse": None}, None) when neither `lse` nor `return_lse` asks
    for one. Without `lse` a new contiguous one of q's framework and device is made, filled with
    -inf: the lse of a row the call does not write (it sees no key). A caller's lse may be any view
    whose strides are positive where its dimension holds more than one element, so FlashInfer's
    [tokens, num_heads] lse passes as its transpose and a column slice of a wider array as it is.
    A stride of 0 there (a broadcast) is refused here, since C would read it as its default
    layout's, and so is a negative one; a dimension of one element goes to C as 0 (c_stride), whatever
    stride the framework gave it. The library refuses strides that put two elements on one float."""
    if lse is None and not return_lse:
        return {"lse": None}, None
    if lse is None:
        lse = empty(qv.obj, (num_heads, tokens), "float32", fill=-math.inf)
    lv = view(lse, f"{op}: lse", writable=True)
    keep.append(lv)
    need_dtype(op, lv, ("float32",))
    need_shape(op, lv, (num_heads, tokens), f" ([num_heads, {rows}]: the query's heads and {rows})")
    same_device(op, [qv, lv])
    for dim in (0, 1):
        if lv.numel and lv.shape[dim] > 1 and lv.strides[dim] <= 0:
            raise ValueError(f"{op}: lse has stride {lv.strides[dim]} in dimension {dim} (size {lv.shape[dim]}), got "
                             f"strides {list(lv.strides)}; an output takes positive strides only (a broadcast "
                             f"dimension, stride 0 as from expand, would put every {('head', 'token')[dim]}'s lse on "
                             "one float; a reversed one is not supported): pass a view with positive strides, or "
                             "return_lse=True without lse for a new one")
    return dict(lse=lv.ptr, lse_head_stride=c_stride(op, lv, 0), lse_token_stride=c_stride(op, lv, 1)), lse


# ---- reshape_and_cache ------------------------------------------------------------------------------------


def _write_kv(op, key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale, stream,
              flash):
    t = views(op, (), ("key_cache", "value_cache"), key=key, value=value, key_cache=key_cache,
              value_cache=value_cache, slot_mapping=slot_mapping)
    cuda = same_device(op, t.values())
    keep = [t]
    cache = _flash_cache(op, t["key_cache"], t["value_cache"], kv_cache_dtype) if flash else \
        _vllm_cache(op, t["key_cache"], t["value_cache"], kv_cache_dtype)
    _fill_scales(op, cache, t["key_cache"], k_scale, v_scale, keep)
    k, v, sm = t["key"], t["value"], t["slot_mapping"]
    for x in (k, v):
        need_ndim(op, x, 3)
        need_dtype(op, x, QUERY_DTYPES)
        need_inner_contiguous(op, x)
        if tuple(x.shape[1:]) != (cache.num_kv_heads, cache.head_size):
            raise ValueError(f"{op}: {arg(x)} has shape {list(x.shape)}; expected [num_tokens, "
                             f"{cache.num_kv_heads}, {cache.head_size}] (the cache's heads and head size)")
    if v.dtype != k.dtype:
        raise ValueError(f"{op}: key ({k.dtype}) and value ({v.dtype}) dtypes differ")
    need_dtype(op, sm, ("int64",))
    need_ndim(op, sm, 1)
    need_contiguous(op, sm)
    # vLLM: reshape_and_cache writes key.size(0) tokens, the flash variant
    # slot_mapping.size(0) (key may be padded past it)
    num_tokens = sm.shape[0] if flash else k.shape[0]
    if k.shape[0] < num_tokens or v.shape[0] < num_tokens or sm.shape[0] < num_tokens:
        raise ValueError(f"{op}: key has {k.shape[0]} rows, value {v.shape[0]}, slot_mapping {sm.shape[0]}; "
                         f"{num_tokens} tokens are written")
    inp = cstruct(op, A.KvInput, key=k.ptr, value=v.ptr, dtype=PA_DTYPES[k.dtype], num_tokens=num_tokens,
                  key_token_stride=c_stride(op, k, 0), key_head_stride=c_stride(op, k, 1),
                  value_token_stride=c_stride(op, v, 0), value_head_stride=c_stride(op, v, 1))
    if cuda:
        s = stream_handle(op, t.values(), stream)
        check(lib.pa_reshape_and_cache(C.byref(inp), sm.ptr, C.byref(cache), s), op)
    else:
        check(lib.pa_ref_reshape_and_cache(C.byref(inp), sm.ptr, C.byref(cache)), op)


@stream_scope
def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype="auto", k_scale=None,
                      v_scale=None, *, stream=None):
    """Writes new keys and values into a vLLM-layout paged cache (in place).

    key, value    [num_tokens, num_kv_heads, head_size] f32/f16/bf16 (token and head strides free)
    key_cache     [num_blocks, num_kv_heads, head_size // x, block_size, x], x = 16 // element size
    value_cache   [num_blocks, num_kv_heads, head_size, block_size]
    slot_mapping  int64 [>= num_tokens]: block * block_size + offset; -1 = padding (skipped)
    kv_cache_dtype 'auto' (cache dtype = key dtype) or 'fp8' / 'fp8_e4m3' / 'fp8_e5m2'
    k_scale, v_scale  float32 [1], or [num_kv_heads] for both (fp8 caches: stored = x / scale[h])
    """
    _write_kv("reshape_and_cache", key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale,
              v_scale, stream, flash=False)


@stream_scope
def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype="auto", k_scale=None,
                            v_scale=None, *, stream=None):
    """Writes new keys and values into a flash-layout paged cache (in place).

    key, value    [>= num_tokens, num_kv_heads, head_size] f32/f16/bf16
    key_cache, value_cache  [num_blocks, block_size, num_kv_heads, head_size] (NHD, or an HND cache
                  permuted to this logical shape; strided views allowed, element stride 1); two
                  buffers, or the halves of one [num_blocks, 2, ...] tensor, never views sharing a byte
    slot_mapping  int64 [num_tokens]; -1 = padding (skipped)
    """
    _write_kv("reshape_and_cache_flash", key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale,
              v_scale, stream, flash=True)


@stream_scope
def convert_fp8(dst_cache, src_cache, scale=1.0, kv_dtype="fp8", *, stream=None):
    """Quantises a cache to fp8 or dequantises one (vLLM's ops.convert_fp8). Writes `dst_cache`.

        dst_cache, src_cache  contiguous, the same number of elements; one of them fp8 (uint8 storage
                              under kv_dtype 'fp8' / 'fp8_e4m3' / 'fp8_e5m2', or a float8 dtype), the
                              other float32, float16 or bfloat16
        scale                 a Python float (or NumPy real scalar), or a float32 tensor of one element
                              on the caches' device:
                              fp8 = sat(x / scale) rounded to nearest even, x = fp8 * scale
    kv_dtype 'auto' takes the fp8 format from a float8 dtype (uint8 storage needs a format name).
    """
    op = "convert_fp8"
    t = views(op, (), ("dst_cache",), dst_cache=dst_cache, src_cache=src_cache)
    dv, sv = t["dst_cache"], t["src_cache"]
    cuda = same_device(op, [dv, sv])
    for x in (dv, sv):
        need_contiguous(op, x)
    if dv.numel != sv.numel:
        raise ValueError(f"{op}: dst_cache has {dv.numel} elements but src_cache {sv.numel}")

    def fp8_side(x):
        return x.dtype == "uint8" or x.dtype in ("float8_e4m3fn", "float8_e5m2")

    if fp8_side(dv) == fp8_side(sv):
        raise ValueError(f"{op}: exactly one of dst_cache ({dv.dtype}) and src_cache ({sv.dtype}) must be fp8 "
                         "(uint8 or float8 storage); the other float32, float16 or bfloat16")
    f8, wide = (dv, sv) if fp8_side(dv) else (sv, dv)
    need_dtype(op, wide, QUERY_DTYPES)
    if (kv_dtype or "auto").lower() == "auto" and f8.dtype == "uint8":
        raise ValueError(f"{op}: uint8 storage needs kv_dtype 'fp8', 'fp8_e4m3' or 'fp8_e5m2' (it does not name "
                         "a format)")
    f8_dt = cache_dtype(op, f8, kv_dtype, "kv_dtype")
    keep = [t]
    sp = _scale_ptr(op, "scale", scale, f8, keep)
    args = (dv.ptr, PA_DTYPES[dv.dtype] if dv is wide else f8_dt, sv.ptr, PA_DTYPES[sv.dtype] if sv is wide else f8_dt,
            sv.numel, sp)
    if cuda:
        check(lib.pa_convert(*args, stream_handle(op, [dv, sv], stream)), op)
    else:
        check(lib.pa_ref_convert(*args), op)


# ---- decode --------------------------------------------------------------------------------------------------


def _decode_setup(op, out, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens, block_size,
                  max_seq_len, alibi_slopes, kv_cache_dtype, k_scale, v_scale, tp_rank, bs_local, bs_vert, bs_block,
                  bs_step, sinks=None, return_lse=False, lse=None):
    """The decode params of one call after its checks, and the lse tensor to return (None
    without return_lse / lse: see _lse_output)."""
    t = views(op, ("alibi_slopes", "sinks"), ("out",), out=out, query=query, key_cache=key_cache,
              value_cache=value_cache, block_tables=block_tables, seq_lens=seq_lens, alibi_slopes=alibi_slopes,
              sinks=sinks)
    cuda = same_device(op, t.values())
    keep = [t]
    kc = t["key_cache"]
    cache = _paged_cache(op, kc, t["value_cache"], kv_cache_dtype)
    _fill_scales(op, cache, kc, k_scale, v_scale, keep)
    if num_kv_heads != cache.num_kv_heads:
        raise ValueError(f"{op}: num_kv_heads {num_kv_heads} but the cache holds {cache.num_kv_heads} KV heads")
    if block_size != cache.block_size:
        raise ValueError(f"{op}: block_size {block_size} but the cache's block size is {cache.block_size}")
    q, o = t["query"], t["out"]
    need_ndim(op, q, 3)
    need_dtype(op, q, QUERY_DTYPES)
    num_seqs, num_heads, head_size = q.shape
    if head_size != cache.head_size:
        raise ValueError(f"{op}: query head_size {head_size} but the cache's is {cache.head_size}")
    q_stride = _heads_contiguous(op, q, head_size)
    need_shape(op, o, q.shape, " (out must match query)")
    need_dtype(op, o, (q.dtype,))
    need_contiguous(op, o)
    bt, sl = t["block_tables"], t["seq_lens"]
    bt_stride = _block_table(op, bt, num_seqs)
    _int_vector(op, sl, "int32", num_seqs, " (one per sequence)")
    lse_fields, lse = _lse_output(op, lse, return_lse, q, num_heads, num_seqs, keep, "num_seqs")
    p = cstruct(op, A.DecodeParams, out=o.ptr, query=q.ptr, q_stride=q_stride, q_dtype=PA_DTYPES[q.dtype], kv=cache,
                block_tables=bt.ptr, block_table_stride=bt_stride, seq_lens=sl.ptr, num_seqs=num_seqs,
                num_heads=num_heads, max_seq_len=i32(op, "max_seq_len", max_seq_len), scale=real(op, "scale", scale),
                alibi_slopes=_head_floats(op, t["alibi_slopes"], num_heads), sliding_window=0,
                soft_cap=0.0, tp_rank=i32(op, "tp_rank", tp_rank),
                bs_local_blocks=i32(op, "blocksparse_local_blocks", bs_local),
                bs_vert_stride=i32(op, "blocksparse_vert_stride", bs_vert),
                bs_block_size=i32(op, "blocksparse_block_size", bs_block),
                bs_head_sliding_step=i32(op, "blocksparse_head_sliding_step", bs_step),
                sinks=_head_floats(op, t["sinks"], num_heads), **lse_fields)
    return p, cuda, t, keep, lse


def _decode_options(op, p, sliding_window, logits_soft_cap):
    p.sliding_window = i32(op, "sliding_window", sliding_window or 0)
    p.soft_cap = real(op, "logits_soft_cap", logits_soft_cap or 0.0)


@stream_scope
def paged_attention_v1(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens, block_size,
                       max_seq_len, alibi_slopes=None, kv_cache_dtype="auto", k_scale=None, v_scale=None, tp_rank=0,
                       blocksparse_local_blocks=0, blocksparse_vert_stride=0, blocksparse_block_size=64,
                       blocksparse_head_sliding_step=0, *, sliding_window=None, logits_soft_cap=None, sinks=None,
                       return_lse=False, lse=None, stream=None):
    """Decode attention, one pass per sequence (vLLM's paged_attention_v1). Writes `out`; returns
    None, or the lse with return_lse / lse.

    out, query    [num_seqs, num_heads, head_size] f32/f16/bf16 (query rows may be strided)
    key_cache     [num_blocks, num_kv_heads, head_size // x, block_size, x] (vLLM) or
                  [num_blocks, block_size, num_kv_heads, head_size] (flash NHD/HND)
    value_cache   [num_blocks, num_kv_heads, head_size, block_size] (vLLM) or as key_cache (flash)
    block_tables  int32 [num_seqs, max_num_blocks_per_seq], row-major (contiguous)
    seq_lens      int32 [num_seqs], each in 1..max_seq_len
    alibi_slopes  float32 [num_heads] or None
    sliding_window, logits_soft_cap  keyword extensions (0/None = off)
    sinks         keyword extension: float32 [num_heads] attention sinks (gpt-oss) or None; head
                  h's softmax takes sinks[h] as one more logit (after scale, soft cap and ALiBi)
                  whose value is zero; -inf is no sink
    return_lse, lse  keyword extensions: each sequence's log-sum-exp, float32 [num_heads, num_seqs]
                  (head-major, the prefill ops' layout): written into `lse` (on query's device,
                  apart from out and query, in any layout of positive strides: see the module notes)
                  or, with return_lse and lse None, into a new contiguous one of query's framework
                  and device; either way it is returned. lse[h, s] is the
                  natural log of head h's softmax denominator, log(e^sinks[h] + sum_j e^x_j) over
                  the keys j it attends, x the scaled logits after the soft cap and ALiBi (the sink
                  term only with sinks): -inf for a head with neither key nor sink (block-sparse; on
                  CUDA also a sequence whose seq_len is out of range), sinks[h] for one with a sink
                  but no key. The output is the same with or without it. Decode over a sequence's
                  first keys and over the rest (its block table row past them, sinks given to one
                  of the two) merge with merge_attn_states into decode over all of them (cascade
                  attention; a context split over several GPUs)
    """
    op = "paged_attention_v1"
    p, cuda, t, keep, lse = _decode_setup(op, out, query, key_cache, value_cache, num_kv_heads, scale, block_tables,
                                          seq_lens, block_size, max_seq_len, alibi_slopes, kv_cache_dtype, k_scale,
                                          v_scale, tp_rank, blocksparse_local_blocks, blocksparse_vert_stride,
                                          blocksparse_block_size, blocksparse_head_sliding_step, sinks, return_lse,
                                          lse)
    _decode_options(op, p, sliding_window, logits_soft_cap)
    if cuda:
        check(lib.pa_paged_attention_v1(C.byref(p), stream_handle(op, t.values(), stream)), op)
    else:
        check(lib.pa_ref_paged_decode(C.byref(p)), op)
    return lse


def _workspace_call(op, p, t, cuda, size_fn, run_fn, workspace, stream, ref_fn=None):
    """Runs run_fn(p, workspace, bytes, stream) on CUDA with a workspace of
    size_fn(p) bytes (the caller's `workspace` or a new one of the query's
    framework), or ref_fn(p) (default pa_ref_paged_decode) on the host."""
    if not cuda:
        check((ref_fn or lib.pa_ref_paged_decode)(C.byref(p)), op)
        return
    nbytes = C.c_size_t(0)
    check(size_fn(C.byref(p), C.byref(nbytes)), op)
    ws_ptr, ws_bytes, hold = None, 0, None
    if nbytes.value:
        if workspace is None:
            hold = empty(t["query"].obj, (nbytes.value,), "uint8")
            workspace = hold
        wv = view(workspace, f"{op}: workspace", writable=True)
        need_contiguous(op, wv)
        same_device(op, [t["query"], wv])
        ws_ptr, ws_bytes = wv.ptr, wv.numel * wv.itemsize
    check(run_fn(C.byref(p), ws_ptr, ws_bytes, stream_handle(op, [v for v in t.values() if v is not None], stream)),
          op)


@stream_scope
def paged_attention_v2(out, exp_sum, max_logits, tmp_out, query, key_cache, value_cache, num_kv_heads, scale,
                       block_tables, seq_lens, block_size, max_seq_len, alibi_slopes=None, kv_cache_dtype="auto",
                       k_scale=None, v_scale=None, tp_rank=0, blocksparse_local_blocks=0, blocksparse_vert_stride=0,
                       blocksparse_block_size=64, blocksparse_head_sliding_step=0, *, sliding_window=None,
                       logits_soft_cap=None, sinks=None, return_lse=False, lse=None, workspace=None, stream=None):
    """Decode attention with 512-token partitions and a reduce (vLLM's paged_attention_v2). Writes
    `out`; returns None, or the lse with return_lse / lse (as paged_attention_v1; apart from the
    workspace too).

    Arguments as paged_attention_v1, plus vLLM's scratch tensors, which are
    checked for shape and then not used (their contents afterwards are
    unspecified): the kernel's scratch is one buffer in its own layout, taken
    from `workspace` (a byte tensor on the query's device) or allocated with
    the query's framework for this call.
        exp_sum, max_logits  float32 [num_seqs, num_heads, max_num_partitions]
        tmp_out              [num_seqs, num_heads, max_num_partitions, head_size]
    with max_num_partitions = ceil(max_seq_len / 512).
    """
    op = "paged_attention_v2"
    p, cuda, t, keep, lse = _decode_setup(op, out, query, key_cache, value_cache, num_kv_heads, scale, block_tables,
                                          seq_lens, block_size, max_seq_len, alibi_slopes, kv_cache_dtype, k_scale,
                                          v_scale, tp_rank, blocksparse_local_blocks, blocksparse_vert_stride,
                                          blocksparse_block_size, blocksparse_head_sliding_step, sinks, return_lse,
                                          lse)
    _decode_options(op, p, sliding_window, logits_soft_cap)
    parts = -(-int(max_seq_len) // 512)
    names = ("exp_sum", "max_logits", "tmp_out")  # optional, and written
    scratch = views(op, names, names, exp_sum=exp_sum, max_logits=max_logits, tmp_out=tmp_out)
    n, h, d = t["query"].shape
    for name, shape in (("exp_sum", (n, h, parts)), ("max_logits", (n, h, parts)), ("tmp_out", (n, h, parts, d))):
        if scratch[name] is not None:
            need_shape(op, scratch[name], shape, " ([num_seqs, num_heads, ceil(max_seq_len / 512)"
                       + (", head_size])" if name == "tmp_out" else "])"))
    same_device(op, list(t.values()) + list(scratch.values()))
    _workspace_call(op, p, t, cuda, lib.pa_paged_attention_v2_workspace_size, lib.pa_paged_attention_v2, workspace,
                    stream)
    return lse


@stream_scope
def paged_attention_decode(out, query, key_cache, value_cache, num_kv_heads, scale, block_tables, seq_lens,
                           block_size, max_seq_len, alibi_slopes=None, kv_cache_dtype="auto", k_scale=None,
                           v_scale=None, *, sliding_window=None, logits_soft_cap=None, sinks=None, return_lse=False,
                           lse=None, workspace=None, stream=None):
    """The recommended decode entry: batch-invariant splits (a sequence's output is
    bitwise independent of the rest of the batch), no v1/v2 choice. Writes `out`; returns
    None, or the lse with return_lse / lse (as paged_attention_v1; apart from the workspace too).

    Arguments as paged_attention_v1. The workspace is handled for the caller: a
    uint8 tensor of paged_attention_workspace_size(...) bytes is allocated with
    the query's framework (outside the C entry) unless `workspace` is given. For
    CUDA-graph capture pass a workspace sized for the largest max_seq_len (or let
    torch allocate it from the graph's pool during capture).
    """
    op = "paged_attention_decode"
    p, cuda, t, keep, lse = _decode_setup(op, out, query, key_cache, value_cache, num_kv_heads, scale, block_tables,
                                          seq_lens, block_size, max_seq_len, alibi_slopes, kv_cache_dtype, k_scale,
                                          v_scale, 0, 0, 0, 64, 0, sinks, return_lse, lse)
    _decode_options(op, p, sliding_window, logits_soft_cap)
    _workspace_call(op, p, t, cuda, lib.pa_paged_attention_decode_workspace_size, lib.pa_paged_attention_decode,
                    workspace, stream)
    return lse


def paged_attention_workspace_size(num_seqs, num_heads, num_kv_heads, head_size, max_seq_len, entry="decode",
                                   dtype=None):
    """Bytes of GPU scratch the recommended decode entry ('decode') or v2 ('v2') needs
    (another entry is a ValueError).
    dtype: the query's ('float16', 'bfloat16', 'float32', or a torch / NumPy dtype); the
    partial rows are kept in it, so 16-bit queries need about half. None sizes for float32,
    which serves every query dtype."""
    op = "paged_attention_workspace_size"
    if entry not in ("decode", "v2"):
        raise ValueError(f"{op}: entry {entry!r} is not 'decode' (paged_attention_decode) or 'v2' "
                         "(paged_attention_v2)")
    q_dtype = A.PA_DTYPE_F32
    if dtype is not None:
        # 'bfloat16', torch.bfloat16 ('torch.bfloat16'), np.float16 (a class), np.dtype('float16')
        name = str(getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or dtype).rsplit(".", 1)[-1]
        if name not in QUERY_DTYPES:
            raise ValueError(f"paged_attention_workspace_size: dtype {dtype!r} is not a query dtype "
                             f"({', '.join(QUERY_DTYPES)})")
        q_dtype = PA_DTYPES[name]
    p = cstruct(op, A.DecodeParams, num_seqs=num_seqs, num_heads=num_heads, max_seq_len=max_seq_len, q_dtype=q_dtype,
                kv=cstruct(op, A.KvCache, num_kv_heads=num_kv_heads, head_size=head_size))
    n = C.c_size_t(0)
    fn = lib.pa_paged_attention_decode_workspace_size if entry == "decode" else \
        lib.pa_paged_attention_v2_workspace_size
    check(fn(C.byref(p), C.byref(n)), op)
    return n.value


# ---- block copies -----------------------------------------------------------------------------------------


def _block_mapping(op, m, host_only=False):
    need_dtype(op, m, ("int64",))
    need_ndim(op, m, 2)
    if m.shape[1] != 2:
        raise ValueError(f"{op}: block_mapping has shape {list(m.shape)}; expected [num_pairs, 2]")
    need_contiguous(op, m)
    if host_only and not on_host(m):
        raise ValueError(f"{op}: block_mapping must be a host (CPU) int64 tensor, got one on {m.device}")


@stream_scope
def swap_blocks(src, dst, block_mapping, *, stream=None):
    """Copies whole blocks between two caches (vLLM's swap_blocks): for each pair
    (s, d) of block_mapping, block s of src goes to block d of dst.

    src, dst       [num_blocks, ...] contiguous, same bytes per block; device or
                   (pinned) host memory in any combination; two buffers that share no
                   byte (ValueError: the library's refusal)
    block_mapping  int64 [num_pairs, 2], on the host, not inside dst (ValueError)
    Two host tensors copy on the CPU (pa_ref_swap_blocks); otherwise the copy
    engines run asynchronously on the stream.
    """
    op = "swap_blocks"
    t = views(op, (), ("dst",), src=src, dst=dst, block_mapping=block_mapping)
    s, d, m = t["src"], t["dst"], t["block_mapping"]
    _block_mapping(op, m, host_only=True)
    for x in (s, d):
        need_contiguous(op, x)
        if x.ndim < 1 or x.shape[0] < 1:
            raise ValueError(f"{op}: {arg(x)} must have a leading num_blocks dimension, got shape {list(x.shape)}")
    bb_s = s.numel * s.itemsize // s.shape[0]
    bb_d = d.numel * d.itemsize // d.shape[0]
    if bb_s != bb_d:
        raise ValueError(f"{op}: src blocks are {bb_s} bytes but dst blocks are {bb_d} bytes")
    n = m.shape[0]
    if on_host(s) and on_host(d):
        check(lib.pa_ref_swap_blocks(d.ptr, s.ptr, bb_s, m.ptr, n, s.shape[0], d.shape[0]), op)
    else:
        cuda_views = [x for x in (s, d) if not on_host(x)]
        if len(cuda_views) == 2 and s.device_id != d.device_id:
            raise ValueError(f"{op}: src is on cuda:{s.device_id} and dst on cuda:{d.device_id}")
        check(lib.pa_swap_blocks(d.ptr, s.ptr, bb_s, m.ptr, n, s.shape[0], d.shape[0],
                                 stream_handle(op, cuda_views, stream)), op)


def _overlap(a, a_bytes, b, b_bytes):
    """Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte (an empty one shares none)."""
    return a_bytes > 0 and b_bytes > 0 and a < b + b_bytes and b < a + a_bytes


@stream_scope
def copy_blocks(key_caches, value_caches, block_mapping, *, stream=None):
    """Copies blocks inside every layer's caches (vLLM's copy_blocks), in one launch.

    key_caches    list of num_layers tensors [num_blocks, ...], all the same shape and dtype, contiguous
    value_caches  list of num_layers tensors [num_blocks, ...], all the same shape, contiguous, of the
                  key caches' dtype, num_blocks and elements per block, though not necessarily their
                  shape (vLLM's paged key [num_blocks, num_kv_heads, head_size // x, block_size, x] and
                  value [num_blocks, num_kv_heads, head_size, block_size]); or None / [] for one
                  buffer per layer, e.g. the combined layout
    Caches without blocks (num_blocks 0, or a 0-d tensor) are a ValueError, even with no pairs, and
    so are two caches that share a byte (two layers', or a layer's key and value: a copy in one would
    write into the other's blocks) without being one buffer named twice (the same first byte: its
    blocks are copied twice, the same bytes; vLLM passes a buffer per cache).
    block_mapping int64 [num_pairs, 2] = (src, dst) on the caches' device, not inside a cache (ValueError)
    On CUDA the layer address tables are copied to the device here (vLLM does
    the same), so a graph should capture pa_copy_blocks through the C API.
    """
    op = "copy_blocks"
    if key_caches is None:
        raise TypeError(f"{op}: key_caches is None; expected a list of tensors")
    if not key_caches:
        raise ValueError(f"{op}: key_caches is empty")
    value_caches = list(value_caches or [])
    if value_caches and len(value_caches) != len(key_caches):
        raise ValueError(f"{op}: {len(key_caches)} key caches but {len(value_caches)} value caches")
    kvs = [view(x, f"{op}: key_caches[{i}]", writable=True) for i, x in enumerate(key_caches)]
    vvs = [view(x, f"{op}: value_caches[{i}]", writable=True) for i, x in enumerate(value_caches)]
    m = view(block_mapping, f"{op}: block_mapping")
    cuda = same_device(op, kvs + vvs + [m])
    _block_mapping(op, m)
    ref = kvs[0]
    for x in kvs + vvs:
        need_contiguous(op, x)
        if x.ndim < 1 or x.shape[0] < 1:
            raise ValueError(f"{op}: {arg(x)} must have a leading num_blocks dimension, got shape {list(x.shape)}")
    num_blocks = ref.shape[0]
    numel_per_block = ref.numel // num_blocks
    if numel_per_block < 1:
        raise ValueError(f"{op}: {arg(ref)} has shape {list(ref.shape)}: its blocks hold no elements")
    for x in kvs + vvs:
        need_dtype(op, x, (ref.dtype,))
    # key caches share the first key cache's shape, value caches the first value cache's (vLLM's paged
    # layout gives them different shapes); C copies numel_per_block elements per block in both
    for group, what in ((kvs, "key caches"), (vvs, "value caches")):
        for x in group:
            need_shape(op, x, group[0].shape, f" (every layer's {what} must have one shape)")
    if vvs and (vvs[0].shape[0] != num_blocks or vvs[0].numel // num_blocks != numel_per_block):
        v0 = vvs[0]
        raise ValueError(f"{op}: {arg(v0)} has shape {list(v0.shape)} ({v0.shape[0]} blocks of "
                         f"{v0.numel // v0.shape[0]} elements) but {arg(ref)} has shape {list(ref.shape)} "
                         f"({num_blocks} blocks of {numel_per_block} elements); value caches must have the key "
                         "caches' number of blocks and elements per block")
    dtype = {1: A.PA_DTYPE_FP8_E4M3, 2: A.PA_DTYPE_F16, 4: A.PA_DTYPE_F32}.get(ref.itemsize)
    if dtype is None:
        raise ValueError(f"{op}: caches of {ref.dtype} ({ref.itemsize}-byte elements) are not supported")
    L, n = len(kvs), m.shape[0]
    # Every buffer is num_blocks blocks of one size (checked above) and contiguous, so its bytes are
    # [ptr, ptr + span) exactly. Two that start at one address are one buffer named twice: its blocks
    # are copied twice, the same bytes, harmlessly. Two that share a byte otherwise put a block of one
    # inside the other's live data, which a copy would overwrite. pa_ref_copy_blocks refuses them too,
    # by the same rule, but the device entry cannot see the addresses, so CUDA needs this check; it is
    # made for both, before any copy. Sorted by address, each buffer needs comparing only with the
    # next at another address (the spans are all of one length).
    span = num_blocks * numel_per_block * ref.itemsize
    bufs = sorted(kvs + vvs, key=lambda x: x.ptr)
    for a, b in zip(bufs, bufs[1:]):
        if a.ptr != b.ptr and _overlap(a.ptr, span, b.ptr, span):
            a, b = sorted((a, b), key=(kvs + vvs).index)
            raise ValueError(f"{op}: {arg(a)} and {arg(b)} share bytes (each is {span} bytes, and they start "
                             f"{abs(a.ptr - b.ptr)} bytes apart); a copy in one would write into the other's "
                             "blocks: give each layer's key and value caches their own memory (one buffer "
                             "named twice is allowed: its blocks are copied twice)")
    if cuda:
        # The kernel reads the pairs while it copies, so they must lie apart from every cache. C checks
        # this for host arrays (pa_ref_copy_blocks) but cannot see the layers' addresses on the device;
        # here they are known (the caches are contiguous, so their byte ranges are exact).
        for group, what in ((kvs, "key_caches"), (vvs, "value_caches")):
            for i, x in enumerate(group):
                if _overlap(m.ptr, 16 * n, x.ptr, span):
                    raise ValueError(f"{op}: block_mapping lies in {what}[{i}]; it must be apart from the caches")
        kp = small_array(ref.obj, [x.ptr for x in kvs], "int64", f"{op}: the key caches' address table")
        vpt = (small_array(ref.obj, [x.ptr for x in vvs], "int64", f"{op}: the value caches' address table")
               if vvs else None)
        kpv = view(kp, f"{op}: key pointer table")
        vpv = view(vpt, f"{op}: value pointer table") if vvs else None
        check(lib.pa_copy_blocks(kpv.ptr, vpv.ptr if vpv else None, L, m.ptr, n, numel_per_block, dtype, num_blocks,
                                 stream_handle(op, kvs + [m], stream)), op)
    else:
        karr = (C.c_void_p * L)(*[x.ptr for x in kvs])
        varr = (C.c_void_p * L)(*[x.ptr for x in vvs]) if vvs else None
        check(lib.pa_ref_copy_blocks(karr, varr, L, m.ptr, n, numel_per_block, dtype, num_blocks), op)


# ---- prefill: context (prefix) attention ------------------------------------------------------------------


def _softmax_scale(op, name, scale, head_size):
    return real(op, name, scale) if scale is not None else 1.0 / math.sqrt(head_size)


def _window(op, sliding_window):
    return i32(op, "sliding_window", sliding_window) if sliding_window is not None and sliding_window > 0 else 0


def _prefill_inputs(op, q, k, v, o, kc, vc, kv_cache_dtype, k_scale, v_scale, keep, new_rows):
    """The cache descriptor of a prefill over a paged cache, after checking the
    query q [tokens, num_heads, head_size], the output o (q's shape, contiguous)
    and the new keys and values k, v [rows, num_kv_heads, head_size] (q's dtype,
    heads contiguous, rows strided): rows = q's tokens when new_rows is None, at
    least new_rows otherwise."""
    cache = _paged_cache(op, kc, vc, kv_cache_dtype)
    _fill_scales(op, cache, kc, k_scale, v_scale, keep)
    need_ndim(op, q, 3)
    need_dtype(op, q, QUERY_DTYPES)
    head_size = q.shape[2]
    if head_size != cache.head_size:
        raise ValueError(f"{op}: {arg(q)} head_size {head_size} but the cache's is {cache.head_size}")
    for x in (q, k, v):
        if x is None:  # context_attention_fwd's k and v with cache_only
            continue
        _heads_contiguous(op, x, head_size)  # (their row strides are checked again where they are passed)
        need_dtype(op, x, (q.dtype,))
    for x in (k, v):
        if x is None:
            continue
        if new_rows is None:
            need_shape(op, x, (q.shape[0], cache.num_kv_heads, head_size), " ([num_tokens, num_kv_heads, head_size])")
        elif tuple(x.shape[1:]) != (cache.num_kv_heads, head_size) or x.shape[0] < new_rows:
            raise ValueError(f"{op}: {arg(x)} has shape {list(x.shape)}; expected [>= {new_rows}, "
                             f"{cache.num_kv_heads}, {head_size}] ([num_prefill_tokens or more, num_kv_heads, "
                             "head_size])")
    need_shape(op, o, q.shape, f" ({arg(o)} must match {arg(q)})")
    need_dtype(op, o, (q.dtype,))
    need_contiguous(op, o)
    return cache


@stream_scope
def context_attention_fwd(q, k, v, o, kv_cache_dtype, k_cache, v_cache, b_loc, b_start_loc, b_seq_len, max_seq_len,
                          max_input_len, k_scale=None, v_scale=None, alibi_slopes=None, sliding_window=None,
                          sm_scale=None, skip_decode=False, *, logits_soft_cap=None, sinks=None, return_lse=False,
                          lse=None, cache_only=False, stream=None):
    """Prefix-prefill attention (vLLM's prefix_prefill.context_attention_fwd). Writes `o`; returns
    None, or the lse with return_lse / lse.

    Each sequence's new query tokens attend to its cached context through its
    block table (no mask inside the context), then to their own new K/V causally.
        q, o          [num_tokens, num_heads, head_size] f32/f16/bf16
        k, v          [num_tokens, num_kv_heads, head_size]: K/V of the new tokens
        k_cache       [num_blocks, num_kv_heads, head_size // x, block_size, x] (vLLM) or
                      [num_blocks, block_size, num_kv_heads, head_size] (flash)
        v_cache       [num_blocks, num_kv_heads, head_size, block_size] (vLLM) or as k_cache
        b_loc         int32 [num_seqs, max_blocks]: block table, row-major (contiguous)
        b_start_loc   int32 [num_seqs + 1]: query_start_loc
        b_seq_len     int32 [num_seqs]: context_len + query_len per sequence
        max_seq_len   bound on b_seq_len, 1..b_loc's width x block_size: the block table must cover it (a
                      looser bound is a ValueError). vLLM passes the model maximum, which its block
                      tables (ceil(max_model_len / block_size) columns) cover
        max_input_len bound on the query lengths
        sm_scale      default 1 / sqrt(head_size); sliding_window None or <= 0 = off
        sinks         keyword extension: float32 [num_heads] attention sinks or None (as paged_attention_v1)
        return_lse, lse  keyword extensions: each query row's log-sum-exp, float32 [num_heads, num_tokens]
                      (as prompt_attention's, over the row's context and new keys): written into `lse`
                      (on q's device, in any layout of positive strides: see the module notes) or,
                      with return_lse and lse None, into a new contiguous one of q's framework and
                      device; either way it is returned
        cache_only    keyword extension: each sequence's queries attend to its b_seq_len cached tokens
                      alone, none masked (k and v are not read: None is allowed; a sequence may have
                      more queries than keys; no ALiBi or sliding window). Cascade attention: the
                      shared prefix so, as one sequence of all the batch's queries with the lse, then
                      each sequence's own keys (its block table row past the prefix's blocks,
                      b_seq_len less the prefix) with the lse, merged with merge_attn_states
    skip_decode=True (vLLM skips query_len-1 sequences) is not supported: NotImplementedError.
    """
    op = "context_attention_fwd"
    if skip_decode:
        raise NotImplementedError(f"{op}: skip_decode=True is not supported; split off the decodes with "
                                  "split_decodes_and_prefills and pass only the prefills")
    if not cache_only and (k is None or v is None):
        raise ValueError(f"{op}: k and v are required (None only with cache_only=True)")
    t = views(op, ("alibi_slopes", "sinks", "k", "v"), ("o",), q=q, k=k, v=v, o=o, k_cache=k_cache, v_cache=v_cache,
              b_loc=b_loc, b_start_loc=b_start_loc, b_seq_len=b_seq_len, alibi_slopes=alibi_slopes, sinks=sinks)
    cuda = same_device(op, t.values())
    keep = [t]
    qv, kv_, vv, ov = t["q"], t["k"], t["v"], t["o"]
    cache = _prefill_inputs(op, qv, kv_, vv, ov, t["k_cache"], t["v_cache"], kv_cache_dtype, k_scale, v_scale, keep,
                            None)
    num_tokens, num_heads, head_size = qv.shape
    bl, bsl, bsq = t["b_loc"], t["b_start_loc"], t["b_seq_len"]
    num_seqs = bsq.shape[0] if bsq.ndim == 1 else -1
    _int_vector(op, bsq, "int32")
    _int_vector(op, bsl, "int32", num_seqs + 1, " (num_seqs + 1 start locations)")
    lse_fields, lse = _lse_output(op, lse, return_lse, qv, num_heads, num_tokens, keep)
    p = cstruct(
        op, A.ContextAttentionParams,
        out=ov.ptr, query=qv.ptr, key=kv_.ptr if kv_ is not None else None,
        value=vv.ptr if vv is not None else None, q_stride=c_stride(op, qv, 0),
        k_stride=c_stride(op, kv_, 0) if kv_ is not None else 0, v_stride=c_stride(op, vv, 0) if vv is not None else 0,
        q_dtype=PA_DTYPES[qv.dtype], kv=cache,
        block_tables=bl.ptr,
        block_table_stride=_block_table(op, bl, num_seqs), query_start_loc=bsl.ptr, seq_lens=bsq.ptr,
        num_seqs=num_seqs, num_heads=num_heads, num_tokens=num_tokens,
        max_query_len=i32(op, "max_input_len", max_input_len), max_seq_len=i32(op, "max_seq_len", max_seq_len),
        scale=_softmax_scale(op, "sm_scale", sm_scale, head_size),
        alibi_slopes=_head_floats(op, t["alibi_slopes"], num_heads), sliding_window=_window(op, sliding_window),
        soft_cap=real(op, "logits_soft_cap", logits_soft_cap or 0.0), sinks=_head_floats(op, t["sinks"], num_heads),
        cache_only=1 if cache_only else 0, **lse_fields)
    if cuda:
        check(lib.pa_context_attention(C.byref(p), stream_handle(op, t.values(), stream)), op)
    else:
        check(lib.pa_ref_context_attention(C.byref(p)), op)
    return lse


# ---- mixed prefill + decode batch (chunked prefill) -----------------------------------------------------------


@stream_scope
def mixed_attention(query, key, value, key_cache, value_cache, block_tables, seq_lens, query_start_loc,
                    num_prefills, num_prefill_tokens, max_prefill_query_len, max_prefill_seq_len,
                    max_decode_seq_len, *, num_decode_tokens=None, kv_cache_dtype="auto", k_scale=None,
                    v_scale=None, scale=None, alibi_slopes=None, sliding_window=None, logits_soft_cap=None,
                    sinks=None, out=None, return_lse=False, lse=None, workspace=None, stream=None):
    """Attention for one chunked-prefill step over a paged cache (pa_mixed_attention),
    vLLM's batch layout with the prefills first:

        query rows  |prefill_0|...|prefill_{P-1}|decode_0|...|decode_{D-1}|
                    |<--- num_prefill_tokens -->|<- one row each ->|

    Sequences 0..P-1 (P = num_prefills) are prefills: their query rows
    [query_start_loc[s], query_start_loc[s+1]) attend to their cached context
    (seq_lens[s] - query length tokens, through their block table row) and then
    causally to their own new keys and values in `key` / `value`. Sequences
    P..P+D-1 are decodes of one token whose K/V is already in the cache (write
    every token with reshape_and_cache / reshape_and_cache_flash first, as vLLM
    does). Returns `out`, or (out, lse) with return_lse or lse. Two launches on
    CUDA (prefill, then decode); the CPU reference on host arrays.

        query         [>= num_prefill_tokens + D, num_heads, head_size] f32/f16/bf16; rows may
                      be strided, heads contiguous
        key, value    [>= num_prefill_tokens, num_kv_heads, head_size], query's dtype: the
                      new K/V (vLLM's whole step's key and value do; rows past the prefill
                      tokens are not read)
        key_cache, value_cache  vLLM paged or flash (NHD/HND) layout, as paged_attention_v1
        block_tables  int32 [>= P + D, width], row-major (contiguous)
        seq_lens      int32 [>= P + D]: context + query length per sequence (a decode's
                      includes its own token)
        query_start_loc  int32 [>= P + 1], from 0; query_start_loc[P] <= num_prefill_tokens
        num_decode_tokens  D; None = query's rows - num_prefill_tokens. Fewer leaves query's
                      last rows (padding, say) unread and their out rows unwritten.
        max_prefill_query_len, max_prefill_seq_len, max_decode_seq_len  bounds on the
                      prefills' query lengths and seq_lens and on the decodes' seq_lens (they
                      size the grids; read on the host)
        scale         default 1 / sqrt(head_size); alibi_slopes float32 [num_heads] or None;
                      sliding_window None or <= 0 = off; logits_soft_cap None or 0 = off;
                      sinks float32 [num_heads] attention sinks or None (as paged_attention_v1)
        out           query's shape and dtype, contiguous; None = a new zeroed tensor of query's framework and device
        return_lse    also return each token's log-sum-exp: (out, lse)
        lse           float32 [num_heads, num_prefill_tokens + D] on query's device, apart from out,
                      query, key and value, in any layout of positive strides (see the module notes):
                      where the lse goes (implies return_lse); None with return_lse = a new contiguous
                      one of query's framework and device, filled with -inf. A prefill row's lse is
                      context_attention_fwd's (over its context and its new keys up to itself);
                      decode sequence s's is paged_attention_decode's, at token
                      num_prefill_tokens + s. Prefill rows past query_start_loc[P] are not written.
        workspace     uint8 scratch for the decode part on CUDA (None: allocated with the
                      query's framework for this call; see paged_attention_decode)
    The decode part runs the recommended decode entry, so its head and block sizes
    must be ones paged_attention_decode takes; every check runs before either launch.
    """
    op = "mixed_attention"
    t = views(op, ("alibi_slopes", "sinks"), query=query, key=key, value=value, key_cache=key_cache,
              value_cache=value_cache, block_tables=block_tables, seq_lens=seq_lens, query_start_loc=query_start_loc,
              alibi_slopes=alibi_slopes, sinks=sinks)
    keep = [t]
    qv = t["query"]
    need_ndim(op, qv, 3)
    P, NP = i32(op, "num_prefills", num_prefills), i32(op, "num_prefill_tokens", num_prefill_tokens)
    if P < 0 or NP < 0 or NP > qv.shape[0]:
        raise ValueError(f"{op}: num_prefills ({P}) and num_prefill_tokens ({NP}) must be >= 0 with "
                         f"num_prefill_tokens <= query's {qv.shape[0]} rows")
    D = qv.shape[0] - NP if num_decode_tokens is None else i32(op, "num_decode_tokens", num_decode_tokens)
    if D < 0 or NP + D > qv.shape[0]:
        raise ValueError(f"{op}: num_prefill_tokens {NP} + num_decode_tokens {D} must lie within query's "
                         f"{qv.shape[0]} rows")
    if out is None:
        need_dtype(op, qv, QUERY_DTYPES)
        out = empty(qv.obj, qv.shape, qv.dtype, zero=True)
    ov = view(out, f"{op}: out", writable=True)
    keep.append(ov)
    cache = _prefill_inputs(op, qv, t["key"], t["value"], ov, t["key_cache"], t["value_cache"], kv_cache_dtype,
                            k_scale, v_scale, keep, NP)
    num_heads, head_size = qv.shape[1], qv.shape[2]
    bt, sl, qsl = t["block_tables"], t["seq_lens"], t["query_start_loc"]
    bt_stride = _block_table(op, bt, P + D)
    _int_vector(op, sl, "int32", P + D, " (num_prefills + num_decode_tokens sequences)")
    _int_vector(op, qsl, "int32", P + 1, " (num_prefills + 1 start locations)")
    cuda = same_device(op, list(t.values()) + [ov])
    lse_fields, lse = _lse_output(op, lse, return_lse, qv, num_heads, NP + D, keep)
    kv_, vv = t["key"], t["value"]
    p = cstruct(
        op, A.MixedAttentionParams,
        out=ov.ptr, query=qv.ptr, key=kv_.ptr, value=vv.ptr, q_stride=c_stride(op, qv, 0),
        k_stride=c_stride(op, kv_, 0), v_stride=c_stride(op, vv, 0), q_dtype=PA_DTYPES[qv.dtype], kv=cache,
        block_tables=bt.ptr,
        block_table_stride=bt_stride, seq_lens=sl.ptr, query_start_loc=qsl.ptr, num_prefills=P,
        num_prefill_tokens=NP, num_decode_tokens=D, num_heads=num_heads,
        max_prefill_query_len=i32(op, "max_prefill_query_len", max_prefill_query_len),
        max_prefill_seq_len=i32(op, "max_prefill_seq_len", max_prefill_seq_len),
        max_decode_seq_len=i32(op, "max_decode_seq_len", max_decode_seq_len),
        scale=_softmax_scale(op, "scale", scale, head_size),
        alibi_slopes=_head_floats(op, t["alibi_slopes"], num_heads), sliding_window=_window(op, sliding_window),
        soft_cap=real(op, "logits_soft_cap", logits_soft_cap or 0.0), sinks=_head_floats(op, t["sinks"], num_heads),
        **lse_fields)
    _workspace_call(op, p, t, cuda, lib.pa_mixed_attention_workspace_size, lib.pa_mixed_attention, workspace,
                    stream, lib.pa_ref_mixed_attention)
    return out if lse is None else (out, lse)


# ---- prefill: varlen prompt attention (no cache) ----------------------------------------------------------

_ATTN_TYPES = {"decoder": A.PA_ATTN_DECODER, "encoder": A.PA_ATTN_ENCODER, "encoder_only": A.PA_ATTN_ENCODER_ONLY,
               "encoder_decoder": A.PA_ATTN_ENCODER_DECODER}


@stream_scope
def prompt_attention(q, k, v, cu_seqlens_q, max_seqlen_q, cu_seqlens_k=None, max_seqlen_k=None, *,
                     attn_type="decoder", softmax_scale=None, alibi_slopes=None, sliding_window=None,
                     logits_soft_cap=None, sinks=None, out=None, return_lse=False, lse=None, stream=None):
    """Varlen attention over packed sequences without a KV cache: what vLLM runs for
    prompts of decoder models (causal), for encoders and for encoder/decoder
    cross-attention (flash_attn_varlen_func's arguments, vLLM's AttentionType).
    Returns `out`, or (out, lse) with return_lse or lse.

        q             [num_q_tokens, num_heads, head_size] f32/f16/bf16
        k, v          [num_k_tokens, num_kv_heads, head_size], q's dtype; num_heads a multiple of
                      num_kv_heads. Rows may be strided (q, k, v as views of one packed qkv
                      tensor), heads contiguous (strides [*, head_size, 1]).
        cu_seqlens_q  int32 [num_seqs + 1]: sequence s owns query rows [cu_seqlens_q[s], cu_seqlens_q[s+1])
        max_seqlen_q  bound on every query length (sizes the grid; read on the host)
        cu_seqlens_k  int32 [num_seqs + 1] for the keys, with max_seqlen_k; None = cu_seqlens_q
                      (self-attention: k and v have q's rows). Cross-attention needs it.
        attn_type     "decoder" (causal), "encoder", "encoder_only" (not causal) or
                      "encoder_decoder" (cross-attention, not causal)
        softmax_scale default 1 / sqrt(head_size)
        alibi_slopes  float32 [num_heads] or None
        sliding_window keys at least this far left of the query are masked, and for "encoder" and
                      "encoder_only" right of it too (None or <= 0: off). flash_attn's
                      window_size=(w - 1, 0) with causal=True is sliding_window=w for "decoder",
                      (w - 1, w - 1) with causal=False is w for the other two (vLLM's);
                      "encoder_decoder" refuses a window (NotImplementedError)
        logits_soft_cap  c * tanh(x / c) on the scaled logits (None or 0: off)
        sinks         float32 [num_heads] attention sinks (gpt-oss) or None: head h's softmax takes
                      sinks[h] as one more logit whose value is zero; -inf is no sink
        out           [num_q_tokens, num_heads, head_size], q's dtype, contiguous; None = a new
                      zeroed tensor of q's framework and device
        return_lse    keyword extension: also return each query row's log-sum-exp (FlashAttention's
                      softmax_lse; vllm_flash_attn's return_softmax_lse): (out, lse)
        lse           float32 [num_heads, num_q_tokens] on q's device, apart from out, q, k and v, in
                      any layout of positive strides (see the module notes): where the lse goes
                      (implies return_lse); None with return_lse = a new contiguous one of q's
                      framework and device, -inf in rows no sequence covers
    Positions are bottom-right aligned: query i of a sequence with q_len queries and
    k_len keys sits at k_len - q_len + i, and key j at j (causal masks keys j > that
    position; ALiBi adds -slope * |j - position|, FlashAttention-2's bias: slope * (j -
    position) wherever causal leaves j). A query row that sees no key gets zeros.
    lse[h, t] is the natural log of row t's softmax denominator in head h,
    log(e^sinks[h] + sum_j e^x_j) over the keys j it sees, x the scaled logits after the soft
    cap and ALiBi (the sink term only with sinks): -inf for a row with neither key nor sink,
    sinks[h] for one with a sink but no key. Two calls over disjoint keys of the same queries
    (a shared prefix and each sequence's own keys: cascade attention) merge with
    merge_attn_states into attention over all of them; give sinks to one of the two only.
    """
    op = "prompt_attention"
    if attn_type not in _ATTN_TYPES:
        raise ValueError(f"{op}: attn_type {attn_type!r} is not one of {', '.join(map(repr, _ATTN_TYPES))}")
    t = views(op, ("cu_seqlens_k", "alibi_slopes", "sinks"), q=q, k=k, v=v, cu_seqlens_q=cu_seqlens_q,
              cu_seqlens_k=cu_seqlens_k, alibi_slopes=alibi_slopes, sinks=sinks)
    keep = [t]
    qv, kv_, vv = t["q"], t["k"], t["v"]
    need_ndim(op, qv, 3)
    need_dtype(op, qv, QUERY_DTYPES)
    num_q_tokens, num_heads, head_size = qv.shape
    for x in (qv, kv_, vv):
        _heads_contiguous(op, x, head_size)
        need_dtype(op, x, (qv.dtype,))
    num_k_tokens, num_kv_heads = kv_.shape[0], kv_.shape[1]
    need_shape(op, kv_, (num_k_tokens, num_kv_heads, head_size), " ([num_k_tokens, num_kv_heads, head_size])")
    need_shape(op, vv, kv_.shape, " (v must match k)")
    if num_kv_heads < 1 or num_heads % num_kv_heads:
        raise ValueError(f"{op}: q has {num_heads} heads, not a multiple of k's {num_kv_heads} KV heads")
    csq, csk = t["cu_seqlens_q"], t["cu_seqlens_k"]
    _int_vector(op, csq, "int32", 1, " (num_seqs + 1 start locations)")
    num_seqs = csq.shape[0] - 1
    if csk is None:
        if attn_type == "encoder_decoder":
            raise ValueError(f"{op}: cross-attention (attn_type 'encoder_decoder') needs cu_seqlens_k and "
                             "max_seqlen_k")
        if num_k_tokens != num_q_tokens:
            raise ValueError(f"{op}: without cu_seqlens_k (self-attention) k and v need q's {num_q_tokens} rows, "
                             f"got {num_k_tokens}")
    else:
        _int_vector(op, csk, "int32")
        need_shape(op, csk, (num_seqs + 1,), " (cu_seqlens_q's length)")
        if max_seqlen_k is None:
            raise ValueError(f"{op}: cu_seqlens_k needs max_seqlen_k (a bound on every key length)")
    alibi = _head_floats(op, t["alibi_slopes"], num_heads)
    sink_ptr = _head_floats(op, t["sinks"], num_heads)
    if out is None:
        out = empty(qv.obj, qv.shape, qv.dtype, zero=True)
    ov = view(out, f"{op}: out", writable=True)
    keep.append(ov)
    need_shape(op, ov, qv.shape, " (out must match q)")
    need_dtype(op, ov, (qv.dtype,))
    need_contiguous(op, ov)
    cuda = same_device(op, list(t.values()) + [ov])
    lse_fields, lse = _lse_output(op, lse, return_lse, qv, num_heads, num_q_tokens, keep)
    p = cstruct(
        op, A.PromptAttentionParams,
        out=ov.ptr, query=qv.ptr, key=kv_.ptr, value=vv.ptr, q_stride=c_stride(op, qv, 0),
        k_stride=c_stride(op, kv_, 0), v_stride=c_stride(op, vv, 0), dtype=PA_DTYPES[qv.dtype],
        attn_type=_ATTN_TYPES[attn_type], cu_seqlens_q=csq.ptr,
        cu_seqlens_k=csk.ptr if csk is not None else None, num_seqs=num_seqs, num_heads=num_heads,
        num_kv_heads=num_kv_heads, head_size=head_size, num_q_tokens=num_q_tokens,
        num_k_tokens=num_k_tokens, max_seqlen_q=i32(op, "max_seqlen_q", max_seqlen_q),
        max_seqlen_k=i32(op, "max_seqlen_k", max_seqlen_k) if csk is not None else 0,
        scale=_softmax_scale(op, "softmax_scale", softmax_scale, head_size), alibi_slopes=alibi,
        sliding_window=_window(op, sliding_window),
        soft_cap=real(op, "logits_soft_cap", logits_soft_cap or 0.0), sinks=sink_ptr, **lse_fields)
    if cuda:
        check(lib.pa_prompt_attention(C.byref(p), stream_handle(op, list(t.values()) + [ov], stream)), op)
    else:
        check(lib.pa_ref_prompt_attention(C.byref(p)), op)
    return out if lse is None else (out, lse)


# ---- ragged paged attention and the KV update by slices -------------------------------------------------------


@stream_scope
def ragged_paged_attention(q, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs, *, sm_scale=1.0,
                           sliding_window=None, soft_cap=None, mask_value=None, k_scale=None, v_scale=None,
                           kv_cache_dtype="auto", out=None, workspace=None, num_kv_pages_per_block=None,
                           num_queries_per_block=None, vmem_limit_bytes=None, sinks=None, return_lse=False,
                           lse=None, stream=None):
    """Mixed prefill + decode attention over the combined cache in one launch
    (vLLM's ragged_paged_attention; the JAX reference's numerics). Returns `out`, or
    (out, lse) with return_lse or lse.

    q             [max_num_batched_tokens, num_q_heads, head_dim] f32/f16/bf16, contiguous
    kv_pages      [total_num_pages, page_size, num_combined_kv_heads, head_dim], K at even
                  and V at odd combined heads; dtype q's or fp8 (kv_cache_dtype, k_scale, v_scale)
    kv_lens       int32 [max_num_seqs]: cached tokens per sequence, new ones included
    page_indices  int32 [max_num_seqs, pages_per_seq]
    cu_q_lens     int32 [max_num_seqs + 1]
    num_seqs      int32 [1]: live sequences
    sm_scale      multiplies q.k; sliding_window / soft_cap None = off; mask_value None (or 0.0, C's sentinel) =
                  JAX's default
    sinks         float32 [num_q_heads] attention sinks (gpt-oss; tpu-inference's attention_sink) or
                  None: head h's softmax takes sinks[h] as one more logit whose value is zero
    out           optional [max_num_batched_tokens, num_q_heads, head_dim] in q's dtype; when
                  omitted a zeroed one is allocated with q's framework. Rows outside the live
                  sequences are left as they were.
    return_lse    keyword extension: also return each query row's log-sum-exp: (out, lse)
    lse           float32 [num_q_heads, max_num_batched_tokens] on q's device, apart from out, q,
                  kv_pages (and the workspace), in any layout of positive strides (see the module
                  notes): where the lse goes (implies return_lse); None with return_lse = a new
                  contiguous one of q's framework and device, filled with -inf. lse[h, t] is the
                  natural log of row t's softmax denominator in head h, log(e^sinks[h] + sum_k e^x_k)
                  over the sequence's keys k in [0, kv_len), x_k the scaled logit after the soft cap,
                  plus mask_value where the key is masked (such a term is exactly 0 with the default
                  mask and counts with a milder one, as in the output); the sink term only with sinks.
                  Rows outside the live sequences are not written (they keep a caller's values).
                  Calls over disjoint keys of the same rows merge with merge_attn_states into one
                  over all of them where the masks hide none of either call's keys: decode rows
                  over a shared prefix's pages, then over each sequence's own (cascade attention;
                  give sinks to one call only).
    num_kv_pages_per_block, num_queries_per_block, vmem_limit_bytes: TPU tuning knobs, ignored.
    """
    op = "ragged_paged_attention"
    t = views(op, ("sinks",), q=q, kv_pages=kv_pages, kv_lens=kv_lens, page_indices=page_indices,
              cu_q_lens=cu_q_lens, num_seqs=num_seqs, sinks=sinks)
    cuda = same_device(op, t.values())
    keep = [t]
    qv = t["q"]
    need_ndim(op, qv, 3)
    need_dtype(op, qv, QUERY_DTYPES)
    need_contiguous(op, qv)
    need_ndim(op, t["kv_pages"], 4)
    cache = _combined_cache(op, t["kv_pages"], kv_cache_dtype)
    _fill_scales(op, cache, t["kv_pages"], k_scale, v_scale, keep)
    T, H, D = qv.shape
    if D != cache.head_size:
        raise ValueError(f"{op}: q head_dim {D} but kv_pages' is {cache.head_size}")
    kl, pi, cq, ns = t["kv_lens"], t["page_indices"], t["cu_q_lens"], t["num_seqs"]
    _int_vector(op, kl, "int32")
    max_num_seqs = kl.shape[0]
    need_dtype(op, pi, ("int32",))
    need_ndim(op, pi, 2)
    need_contiguous(op, pi)
    if pi.shape[0] != max_num_seqs:
        raise ValueError(f"{op}: page_indices has {pi.shape[0]} rows but kv_lens {max_num_seqs} entries")
    _int_vector(op, cq, "int32")
    need_shape(op, cq, (max_num_seqs + 1,), " ([max_num_seqs + 1])")
    _int_vector(op, ns, "int32")
    need_shape(op, ns, (1,))
    if out is None:
        out = empty(qv.obj, qv.shape, qv.dtype, zero=True)
    ov = view(out, f"{op}: out", writable=True)
    keep.append(ov)
    same_device(op, [qv, ov])
    need_shape(op, ov, qv.shape, " (out must match q)")
    need_dtype(op, ov, (qv.dtype,))
    need_contiguous(op, ov)
    lse_fields, lse = _lse_output(op, lse, return_lse, qv, H, T, keep, "max_num_batched_tokens")
    # No query row or no sequence (an empty batch) still goes to C, which validates the sizes, cache and
    # options and then does nothing: it reads no pointer but the cache's (those of the empty tensors here
    # may be NULL or dangling), and sizes the workspace 0.
    p = cstruct(op, A.RaggedParams, out=ov.ptr, q=qv.ptr, q_dtype=PA_DTYPES[qv.dtype], kv=cache, kv_lens=kl.ptr,
                page_indices=pi.ptr, pages_per_seq=pi.shape[1], cu_q_lens=cq.ptr, num_seqs=ns.ptr,
                max_num_seqs=max_num_seqs, max_num_batched_tokens=T, num_q_heads=H,
                sm_scale=real(op, "sm_scale", sm_scale),
                sliding_window=i32(op, "sliding_window", sliding_window or 0),
                soft_cap=real(op, "soft_cap", soft_cap or 0.0), mask_value=real(op, "mask_value", mask_value or 0.0),
                sinks=_head_floats(op, t["sinks"], H), **lse_fields)
    if cuda:
        nbytes = C.c_size_t(0)
        check(lib.pa_ragged_workspace_size(C.byref(p), C.byref(nbytes)), op)
        if workspace is None:
            workspace = empty(qv.obj, (max(nbytes.value, 1),), "uint8")
        wv = view(workspace, f"{op}: workspace", writable=True)
        keep.append(wv)
        need_contiguous(op, wv)
        same_device(op, [qv, wv])
        check(lib.pa_ragged_paged_attention(C.byref(p), wv.ptr, wv.numel * wv.itemsize,
                                            stream_handle(op, t.values(), stream)), op)
    else:
        check(lib.pa_ref_ragged_paged_attention(C.byref(p)), op)
    return out if lse is None else (out, lse)


@stream_scope
def kv_cache_update(new_kv, slices, kv_cache, num_kv_update_slices, *, page_size=32, num_slices_per_block=8,
                    kv_cache_dtype="auto", k_scale=None, v_scale=None, stream=None):
    """KV cache update by slices (vLLM's pallas kv_cache_update), in place. Returns kv_cache.

    new_kv                [num_tokens, num_combined_kv_heads, head_dim], K/V interleaved; rows may be strided
    slices                int32 [3, padded_num_slices]: (kv_cache_start, new_kv_start, slice_len) per column
    kv_cache              [total_num_pages * page_size, num_combined_kv_heads, head_dim] (or
                          [total_num_pages, page_size, ...]), contiguous
    num_kv_update_slices  int32 [1]: live slices, read where the kernel runs
    padded_num_slices must be a multiple of num_slices_per_block (as vLLM asserts); a
    slice may be at most page_size rows long.
    """
    op = "kv_cache_update"
    t = views(op, (), ("kv_cache",), new_kv=new_kv, slices=slices, kv_cache=kv_cache,
              num_kv_update_slices=num_kv_update_slices)
    cuda = same_device(op, t.values())
    keep = [t]
    cache = _combined_cache(op, t["kv_cache"], kv_cache_dtype, page_size)
    _fill_scales(op, cache, t["kv_cache"], k_scale, v_scale, keep)
    nk, sl, ns = t["new_kv"], t["slices"], t["num_kv_update_slices"]
    need_ndim(op, nk, 3)
    fp8 = cache.dtype >= A.PA_DTYPE_FP8_E4M3
    need_dtype(op, nk, tuple(k for k, v in PA_DTYPES.items() if v == cache.dtype or (v <= A.PA_DTYPE_BF16 and fp8))
               + (("uint8",) if fp8 else ()))  # uint8: already-quantised bytes, copied as they are
    need_inner_contiguous(op, nk)
    if tuple(nk.shape[1:]) != (2 * cache.num_kv_heads, cache.head_size):
        raise ValueError(f"{op}: new_kv has shape {list(nk.shape)}; expected [num_tokens, "
                         f"{2 * cache.num_kv_heads}, {cache.head_size}] (the cache's combined heads and head_dim)")
    if nk.numel and nk.shape[1] > 1 and nk.strides[1] != cache.head_size:
        raise ValueError(f"{op}: new_kv's heads must be contiguous (strides [*, {cache.head_size}, 1]), got "
                         f"{list(nk.strides)}")
    need_dtype(op, sl, ("int32",))
    need_ndim(op, sl, 2)
    need_contiguous(op, sl)
    if sl.shape[0] != 3:
        raise ValueError(f"{op}: slices has shape {list(sl.shape)}; expected [3, padded_num_slices]")
    if num_slices_per_block <= 0:
        raise ValueError(f"{op}: num_slices_per_block must be > 0, got {num_slices_per_block}")
    if sl.shape[1] % num_slices_per_block:
        raise ValueError(f"{op}: slices has {sl.shape[1]} columns, not a multiple of num_slices_per_block "
                         f"{num_slices_per_block}")
    _int_vector(op, ns, "int32")
    need_shape(op, ns, (1,))
    dt = PA_DTYPES[nk.dtype] if nk.dtype in PA_DTYPES else cache.dtype
    nk_stride, num_cols = c_stride(op, nk, 0), i32(op, "slices.shape[1]", sl.shape[1])
    if cuda:
        check(lib.pa_kv_cache_update(nk.ptr, dt, nk.shape[0], nk_stride, sl.ptr, ns.ptr, num_cols,
                                     C.byref(cache), stream_handle(op, t.values(), stream)), op)
    else:
        check(lib.pa_ref_kv_cache_update(nk.ptr, dt, nk.shape[0], nk_stride, sl.ptr, ns.ptr, num_cols,
                                         C.byref(cache)), op)
    return kv_cache


# ---- merging two partial attention states -------------------------------------------------------------------


def _lse_strides(op, v, num_heads, num_tokens):
    """(head stride, token stride) of a float32 [num_heads, num_tokens] lse view, as C takes them
    (0 for a dimension of one element or an empty view: C's default)."""
    need_dtype(op, v, ("float32",))
    need_ndim(op, v, 2)
    need_shape(op, v, (num_heads, num_tokens), " ([num_heads, num_tokens], as output's heads and tokens)")
    return c_stride(op, v, 0), c_stride(op, v, 1)


@stream_scope
def merge_attn_states(output, prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse=None, *,
                      stream=None):
    """Merges two partial attention states, over disjoint key sets, by their log-sum-exps (vLLM's
    merge_attn_states: cascade attention's shared prefix and own suffix, MLA's chunked context,
    context-parallel shards). Writes `output` (and `output_lse`). prompt_attention,
    context_attention_fwd, mixed_attention, ragged_paged_attention and the decode ops
    (paged_attention_v1 / v2 / decode) give each part's lse (return_lse=True), in this op's layout
    or, given lse=, in any other of positive strides (FlashInfer's through its transpose).

        output, prefix_output, suffix_output  [num_tokens, num_heads, head_size] f32/f16/bf16, one
                      dtype; token rows may be strided, heads contiguous (strides [*, head_size, 1]);
                      output may be prefix_output or suffix_output (in place), else apart from both;
                      apart from the lse tensors either way
        prefix_lse, suffix_lse  float32 [num_heads, num_tokens]: each part's natural-log sum of
                      exp(score) over its keys (FlashAttention's softmax_lse); any positive strides,
                      so FlashInfer's [num_tokens, num_heads] lse passes as its transpose (lse.T),
                      once multiplied by ln 2 (FlashInfer's default lse is base 2)
        output_lse    float32 [num_heads, num_tokens] for the merged lse, or None; apart from every
                      other tensor (merge.h: the C op refuses an overlap)
    The three lse tensors share one layout (the same strides). With a = prefix_lse[h, t] and
    b = suffix_lse[h, t], output[t, h] = (e^a prefix_output[t, h] + e^b suffix_output[t, h]) / (e^a + e^b)
    and output_lse[h, t] = log(e^a + e^b), computed in f32 and rounded once. An lse of +inf is read as
    -inf (a part that saw no key); a part of weight 0 counts for nothing (its rows' values, NaN
    included, are ignored); both -inf give a row of zeros and output_lse -inf; a NaN lse gives NaN.
    """
    op = "merge_attn_states"
    t = views(op, ("output_lse",), ("output", "output_lse"), output=output, prefix_output=prefix_output,
              prefix_lse=prefix_lse, suffix_output=suffix_output, suffix_lse=suffix_lse, output_lse=output_lse)
    cuda = same_device(op, t.values())
    ov, pv, sv = t["output"], t["prefix_output"], t["suffix_output"]
    need_ndim(op, ov, 3)
    need_dtype(op, ov, QUERY_DTYPES)
    num_tokens, num_heads, head_size = ov.shape
    for x in (pv, sv):
        need_dtype(op, x, (ov.dtype,))
        need_shape(op, x, ov.shape, " (output's: [num_tokens, num_heads, head_size])")
    out_stride, prefix_stride, suffix_stride = (_heads_contiguous(op, x, head_size) for x in (ov, pv, sv))
    lses = [t[n] for n in ("prefix_lse", "suffix_lse", "output_lse") if t[n] is not None]
    lse_strides = [_lse_strides(op, x, num_heads, num_tokens) for x in lses]
    for x, s in zip(lses[1:], lse_strides[1:]):
        if s != lse_strides[0]:
            raise ValueError(f"{op}: {arg(x)} has strides {list(x.strides)} but prefix_lse "
                             f"{list(lses[0].strides)}; the lse tensors share one layout (the C op takes one "
                             "head stride and one token stride for all three): give them the same strides")
    lo = t["output_lse"]
    p = cstruct(op, A.MergeAttnStatesParams, dtype=PA_DTYPES[ov.dtype], num_tokens=num_tokens, num_heads=num_heads,
                head_size=head_size, output=ov.ptr, prefix_output=pv.ptr, suffix_output=sv.ptr,
                out_stride=out_stride, prefix_stride=prefix_stride, suffix_stride=suffix_stride,
                output_lse=None if lo is None else lo.ptr, prefix_lse=t["prefix_lse"].ptr,
                suffix_lse=t["suffix_lse"].ptr, lse_head_stride=lse_strides[0][0],
                lse_token_stride=lse_strides[0][1])
    if cuda:
        check(lib.pa_merge_attn_states(C.byref(p), stream_handle(op, t.values(), stream)), op)
    else:
        check(lib.pa_ref_merge_attn_states(C.byref(p)), op)
