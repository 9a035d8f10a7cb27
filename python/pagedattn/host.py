"""The host layer on NumPy arrays, with the names and semantics of vLLM's
v1/attention/backends/utils.py and the ragged (TPU) backend (seed 002, 000):
batch reordering and splitting, chunked-local-attention virtual batches,
common metadata with the slot mapping, KV-update slices, page sizes and the
decode v1/v2 choice. Each call runs the C host layer (csrc/host/batch.c,
metadata.c, heuristics.c) on the arrays' memory; where vLLM mutates in place,
so does this. Bad input raises ValueError naming the request and field.
"""
import ctypes as C
from dataclasses import dataclass

import numpy as np

from . import _abi as A
from ._lib import check, lib
from ._tensor import cstruct, i32, i64

__all__ = ["CommonAttentionMetadata", "build_common_attention_metadata", "split_decodes_and_prefills",
           "reorder_batch_to_split_decodes_and_prefills", "reorder_num_scheduled_tokens",
           "make_local_attention_virtual_batches", "kv_update_slices", "kv_update_slices_upper_bound",
           "get_page_size", "get_min_page_size", "use_paged_attention_v1", "decode_plan", "SLOT_MAPPING_DTYPE"]

# dtype of the common metadata's slot mapping as the C builder writes it (the
# one place that knows it): int64, what reshape_and_cache reads and vLLM uses.
SLOT_MAPPING_DTYPE = np.dtype(np.int64)


def _i32(x, name, op, ndim=None):
    """A C-contiguous int32 NumPy array with x's values (x itself when it
    already is one). Values that do not fit int32 are a ValueError."""
    if not isinstance(x, np.ndarray):
        if hasattr(x, "__dlpack__"):
            try:
                x = np.from_dlpack(x)
            except (RuntimeError, BufferError, TypeError) as e:
                raise ValueError(f"{op}: {name} must be a host array: {e}") from e
        else:
            x = np.asarray(x)
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{op}: {name} must have {ndim} dimension(s), got shape {list(x.shape)}")
    if x.dtype == np.int32 and x.flags.c_contiguous:
        return x
    if x.dtype.kind not in "iu" and not (x.size == 0 and x.dtype.kind == "f"):
        raise ValueError(f"{op}: {name} must hold integers, got dtype {x.dtype}")
    if x.size and (x.min() < -2 ** 31 or x.max() >= 2 ** 31):
        raise ValueError(f"{op}: {name} has values outside int32")
    return np.ascontiguousarray(x, dtype=np.int32)


def _mutable_i32(x, name, op):
    if not (isinstance(x, np.ndarray) and x.dtype == np.int32 and x.flags.c_contiguous and x.flags.writeable):
        raise ValueError(f"{op}: {name} is updated in place, so it must be a writable C-contiguous int32 NumPy "
                         f"array (got {type(x).__name__} {getattr(x, 'dtype', '')})")
    if x.ndim != 1:
        raise ValueError(f"{op}: {name} must be a 1-D array (one entry per request), got shape {list(x.shape)}")
    return x


# ---- common metadata ----------------------------------------------------------------------------------------


@dataclass
class CommonAttentionMetadata:
    """vLLM's CommonAttentionMetadata, host side (the *_cpu fields and the
    device fields are the same NumPy arrays here; copy them to the device with
    your framework). Making one writes nothing: build_common_attention_metadata
    pads slot_mapping past num_actual_tokens with -1 (reshape_and_cache skips
    those slots); a hand-made one's slot_mapping is taken as given."""
    query_start_loc: np.ndarray
    query_start_loc_cpu: np.ndarray
    seq_lens: np.ndarray
    seq_lens_cpu: np.ndarray
    num_computed_tokens_cpu: np.ndarray
    num_reqs: int
    num_actual_tokens: int
    max_query_len: int
    block_table_tensor: np.ndarray
    slot_mapping: np.ndarray
    max_seq_len: int = 0
    block_size: int = 0

    def _c(self, op):
        """(a pa_common_metadata over these arrays, the arrays it points into). The fields are
        checked first (the dataclass may be made by hand): the index arrays are taken as
        C-contiguous int32 (converted, values checked, where they are not), long enough for
        num_reqs, and the block table's row stride is its width."""
        n = i32(op, "num_reqs", self.num_reqs)
        if n < 0:
            raise ValueError(f"{op}: num_reqs {n} < 0")
        qsl = _i32(self.query_start_loc_cpu, "query_start_loc_cpu", op, 1)
        sl = _i32(self.seq_lens_cpu, "seq_lens_cpu", op, 1)
        nct = _i32(self.num_computed_tokens_cpu, "num_computed_tokens_cpu", op, 1)
        bt = _i32(self.block_table_tensor, "block_table_tensor", op, 2)
        for name, a, need in (("query_start_loc_cpu", qsl, n + 1), ("seq_lens_cpu", sl, n),
                              ("num_computed_tokens_cpu", nct, n), ("block_table_tensor", bt, n)):
            if a.shape[0] < need:
                raise ValueError(f"{op}: {name} has {a.shape[0]} {'rows' if a.ndim == 2 else 'entries'} for "
                                 f"num_reqs {n}")
        if n and bt.shape[1] < 1:
            raise ValueError(f"{op}: block_table_tensor has no columns for its {n} requests")
        sm = self.slot_mapping
        if not (isinstance(sm, np.ndarray) and sm.ndim == 1 and sm.dtype == SLOT_MAPPING_DTYPE and
                sm.flags.c_contiguous):
            raise ValueError(f"{op}: slot_mapping must be a 1-D C-contiguous {SLOT_MAPPING_DTYPE} NumPy array, got "
                             f"{type(sm).__name__} {getattr(sm, 'dtype', '')} {list(getattr(sm, 'shape', ()))}")
        c = cstruct(op, A.CommonMetadata, query_start_loc=qsl.ctypes.data, seq_lens=sl.ctypes.data,
                    num_computed_tokens=nct.ctypes.data, slot_mapping=sm.ctypes.data if sm.size else None,
                    slot_mapping_capacity=sm.shape[0], num_reqs=n, num_actual_tokens=self.num_actual_tokens,
                    padded_num_tokens=sm.shape[0], max_query_len=self.max_query_len, max_seq_len=self.max_seq_len,
                    block_size=self.block_size, block_table=bt.ctypes.data, block_table_stride=bt.shape[1])
        return c, (qsl, sl, nct, bt, sm)


def build_common_attention_metadata(num_computed_tokens, num_scheduled_tokens, block_table, block_size,
                                    padded_num_tokens=0):
    """Builds the step's CommonAttentionMetadata (pa_build_common_metadata).

    num_computed_tokens   [num_reqs] tokens already in the cache per request
    num_scheduled_tokens  [num_reqs] new tokens per request
    block_table           int32 [num_reqs, max_num_blocks_per_req] physical block ids
    block_size            tokens per cache block
    padded_num_tokens     0 = num_actual_tokens, else the (e.g. CUDA-graph) token count; slots
                          [num_actual_tokens, padded_num_tokens) are -1
    Returns query_start_loc [num_reqs + 1], seq_lens [num_reqs] (computed + scheduled),
    slot_mapping int64 [padded_num_tokens] (token t of request r at position
    pos = computed[r] + t goes to block_table[r][pos // block_size] * block_size + pos % block_size).
    """
    op = "build_common_attention_metadata"
    nct = _i32(num_computed_tokens, "num_computed_tokens", op, 1)
    nst = _i32(num_scheduled_tokens, "num_scheduled_tokens", op, 1)
    bt = _i32(block_table, "block_table", op, 2)
    n = nct.shape[0]
    if nst.shape[0] != n:
        raise ValueError(f"{op}: num_scheduled_tokens has {nst.shape[0]} entries, num_computed_tokens {n}")
    if bt.shape[0] < n:
        raise ValueError(f"{op}: block_table has {bt.shape[0]} rows for {n} requests")
    if n and bt.shape[1] < 1:
        raise ValueError(f"{op}: block_table has shape {list(bt.shape)}: block_table row too narrow (no columns) "
                         f"for its {n} requests")
    total = i32(op, "the total of num_scheduled_tokens", nst.astype(np.int64).sum())
    padded_num_tokens = i32(op, "padded_num_tokens", padded_num_tokens)
    cap = max(padded_num_tokens, total, 0)
    qsl = np.zeros(n + 1, np.int32)
    sl = np.zeros(n, np.int32)
    nc = np.zeros(n, np.int32)
    sm = np.full(cap, -1, SLOT_MAPPING_DTYPE)
    out = A.CommonMetadata(query_start_loc=qsl.ctypes.data, seq_lens=sl.ctypes.data,
                           num_computed_tokens=nc.ctypes.data, slot_mapping=sm.ctypes.data if cap else None,
                           slot_mapping_capacity=cap)
    b = cstruct(op, A.Batch, num_reqs=n, num_computed_tokens=nct.ctypes.data, num_scheduled_tokens=nst.ctypes.data,
                block_size=i32(op, "block_size", block_size), block_table=bt.ctypes.data,
                block_table_stride=bt.shape[1])
    check(lib.pa_build_common_metadata(C.byref(b), padded_num_tokens, C.byref(out)), op)
    return CommonAttentionMetadata(query_start_loc=qsl, query_start_loc_cpu=qsl, seq_lens=sl, seq_lens_cpu=sl,
                                   num_computed_tokens_cpu=nc, num_reqs=out.num_reqs,
                                   num_actual_tokens=out.num_actual_tokens, max_query_len=out.max_query_len,
                                   block_table_tensor=bt, slot_mapping=sm[:out.padded_num_tokens],
                                   max_seq_len=out.max_seq_len, block_size=out.block_size)


# ---- decode / prefill split -------------------------------------------------------------------------------


def split_decodes_and_prefills(common_attn_metadata, decode_threshold=1):
    """Assuming a reordered batch, the boundary between decodes (query_len <=
    decode_threshold, at the front) and prefills. Returns (num_decodes,
    num_prefills, num_decode_tokens, num_prefill_tokens). A batch that is not
    reordered is a ValueError naming the request (vLLM asserts)."""
    op = "split_decodes_and_prefills"
    m = common_attn_metadata
    qsl = _i32(getattr(m, "query_start_loc_cpu", getattr(m, "query_start_loc", None)), "query_start_loc_cpu", op, 1)
    n = i32(op, "num_reqs", m.num_reqs)
    if qsl.shape[0] < n + 1:
        raise ValueError(f"{op}: query_start_loc_cpu has {qsl.shape[0]} entries for {n} requests")
    out = A.BatchSplit()
    check(lib.pa_split_decodes_and_prefills(qsl.ctypes.data, n, i32(op, "decode_threshold", decode_threshold),
                                            C.byref(out)), op)
    return out.num_decodes, out.num_prefills, out.num_decode_tokens, out.num_prefill_tokens


_SWAP_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_int32, C.c_int32)


def _reorder(op, tokens, decode_threshold, on_swap, perm, tokens_out):
    """Runs C's reorder for the public function `op` (which its errors name), calling on_swap(i, j)
    per swap until one raises. Returns (modified, the swaps whose callbacks returned, the first
    exception or None); the caller re-raises it."""
    n = i32(op, "the number of requests", tokens.shape[0])
    decode_threshold = i32(op, "decode_threshold", decode_threshold)
    errors, done = [], []

    def cb(_user, a, b):
        if on_swap is not None and not errors:
            try:
                on_swap(a, b)
                done.append((a, b))
            except BaseException as e:  # noqa: BLE001 - re-raised after the C call
                errors.append(e)

    fn = _SWAP_FN(cb) if on_swap is not None else None
    modified = C.c_int(0)
    check(lib.pa_reorder_batch_to_split_decodes_and_prefills(
        tokens.ctypes.data if n else None, n, decode_threshold, C.cast(fn, C.c_void_p) if fn else None, None,
        perm.ctypes.data if perm is not None else None, tokens_out.ctypes.data if tokens_out is not None else None,
        C.byref(modified)), op)
    return bool(modified.value), done, (errors[0] if errors else None)


def reorder_batch_to_split_decodes_and_prefills(input_batch, scheduler_output, decode_threshold=1):
    """vLLM's reorder: moves every request with at most decode_threshold
    scheduled tokens to the front with the fewest swaps, calling
    input_batch.swap_states(i, j) for each swap (as vLLM does). input_batch
    needs req_ids and swap_states; scheduler_output needs
    num_scheduled_tokens (a dict req_id -> count). Returns True if the batch
    was modified."""
    op = "reorder_batch_to_split_decodes_and_prefills"
    ids = list(input_batch.req_ids)
    try:
        tokens = np.array([scheduler_output.num_scheduled_tokens[r] for r in ids], dtype=np.int64)
    except KeyError as e:
        raise ValueError(f"{op}: request {e.args[0]!r} of input_batch has no num_scheduled_tokens entry") from e
    tokens = _i32(tokens, "num_scheduled_tokens", op, 1)
    modified, _, error = _reorder(op, tokens, decode_threshold, input_batch.swap_states, None, None)
    if error is not None:  # the swaps before it were made, as a raising swap_states leaves vLLM's batch
        raise error
    return modified


def reorder_num_scheduled_tokens(num_scheduled_tokens, decode_threshold=1, perm=None, on_swap=None):
    """The same reorder on arrays, in place: num_scheduled_tokens (writable
    1-D int32 NumPy array) gets the swaps applied, perm (optional int32 array the
    caller initialised, e.g. to arange) has its entries swapped alongside, and
    on_swap(i, j) is called per swap. Returns True if anything moved. When on_swap
    raises, the exception is re-raised with the arrays holding the swaps whose
    callbacks returned, so they agree with the caller's state."""
    op = "reorder_num_scheduled_tokens"
    t = _mutable_i32(num_scheduled_tokens, "num_scheduled_tokens", op)
    if perm is not None:
        _mutable_i32(perm, "perm", op)
        if perm.shape != t.shape:
            raise ValueError(f"{op}: perm has shape {list(perm.shape)}, num_scheduled_tokens {list(t.shape)}")
        # the library refuses this itself, but with on_swap it sees copies: the write-back would mix them
        if np.shares_memory(perm, t):
            raise ValueError(f"{op}: reorder: output perm overlaps the input num_scheduled_tokens")
    if on_swap is None:
        return _reorder(op, t, decode_threshold, None, perm, t)[0]
    # C reorders copies; the caller's arrays take its result, or only the swaps reported before a failure
    work, pw = t.copy(), (perm.copy() if perm is not None else None)
    modified, done, error = _reorder(op, work, decode_threshold, on_swap, pw, work)
    if error is None:
        t[:] = work
        if perm is not None:
            perm[:] = pw
        return modified
    for a, b in done:
        t[[a, b]] = t[[b, a]]
        if perm is not None:
            perm[[a, b]] = perm[[b, a]]
    raise error


# ---- chunked local attention ----------------------------------------------------------------------------


def make_local_attention_virtual_batches(attn_chunk_size, query_start_loc_np, seq_lens_np, block_table,
                                         block_size=0):
    """Splits each request into virtual requests of one attn_chunk_size-aligned
    chunk each (vLLM's make_local_attention_virtual_batches). Returns
    (seqlens_q_local, cu_seqlens_q_local, seqlens_k_local, block_table_local),
    int32 arrays of [nv], [nv + 1], [nv], [nv, attn_chunk_size // block_size];
    block_table_local is a torch tensor when block_table was one.

    query_start_loc_np  [num_reqs + 1], seq_lens_np [num_reqs], block_table [num_reqs, width]
    block_size must be > 0 and divide attn_chunk_size.
    """
    op = "make_local_attention_virtual_batches"
    qsl = _i32(query_start_loc_np, "query_start_loc_np", op, 1)
    sl = _i32(seq_lens_np, "seq_lens_np", op, 1)
    is_torch = type(block_table).__module__.split(".")[0] == "torch"
    bt = _i32(block_table.cpu() if is_torch else block_table, "block_table", op, 2)
    n = sl.shape[0]
    if qsl.shape[0] != n + 1:
        raise ValueError(f"{op}: query_start_loc_np has {qsl.shape[0]} entries; expected num_reqs + 1 = {n + 1}")
    if bt.shape[0] < n:
        raise ValueError(f"{op}: block_table has {bt.shape[0]} rows for {n} requests")
    p = cstruct(op, A.LocalAttentionParams, attn_chunk_size=i32(op, "attn_chunk_size", attn_chunk_size),
                block_size=i32(op, "block_size", block_size), num_reqs=n,
                query_start_loc=qsl.ctypes.data, seq_lens=sl.ctypes.data, block_table=bt.ctypes.data,
                block_table_width=bt.shape[1], block_table_stride=bt.shape[1])
    nv, pages = C.c_int32(0), C.c_int32(0)
    check(lib.pa_local_attention_size(C.byref(p), C.byref(nv), C.byref(pages)), op)
    q = np.zeros(nv.value, np.int32)
    cu = np.zeros(nv.value + 1, np.int32)
    k = np.zeros(nv.value, np.int32)
    btl = np.zeros((nv.value, pages.value), np.int32)
    out = A.LocalAttentionOut(capacity=nv.value, seqlens_q_local=q.ctypes.data, cu_seqlens_q_local=cu.ctypes.data,
                              seqlens_k_local=k.ctypes.data, block_table_local=btl.ctypes.data)
    check(lib.pa_make_local_attention_virtual_batches(C.byref(p), C.byref(out), C.byref(nv)), op)
    if is_torch:
        import torch
        btl = torch.from_numpy(btl).to(block_table.device)
    return q, cu, k, btl


# ---- KV-update slices (ragged backend) --------------------------------------------------------------------


def kv_update_slices_upper_bound(num_reqs, num_tokens, block_size, num_slices_per_block=8):
    """Padded slice count that suffices for any batch of at most num_reqs
    requests and num_tokens new tokens (size the slices buffer once)."""
    op = "kv_update_slices_upper_bound"
    out = C.c_int32(0)
    check(lib.pa_kv_update_slices_upper_bound(i32(op, "num_reqs", num_reqs), i32(op, "num_tokens", num_tokens),
                                              i32(op, "block_size", block_size),
                                              i32(op, "num_slices_per_block", num_slices_per_block), C.byref(out)), op)
    return out.value


def kv_update_slices(common_attn_metadata, num_slices_per_block=8, capacity=None):
    """The KV-update slices of a step (vLLM's TPU runner's slot-mapping
    slices): one (kv_cache_start, new_kv_start, slice_len) per cache block a
    request's new tokens touch, requests in order. Returns (slices, num_slices):
    slices int32 [3, capacity] field-major (what kv_cache_update takes),
    columns past num_slices (0, 0, 0); capacity defaults to the exact padded
    count (a multiple of num_slices_per_block). A CommonAttentionMetadata made by
    hand is checked first: integer index arrays long enough for num_reqs (taken
    as C-contiguous int32, converted where they are not), an int64 slot_mapping."""
    op = "kv_update_slices"
    c, keep = common_attn_metadata._c(op)
    spb = i32(op, "num_slices_per_block", num_slices_per_block)
    ns, nsp = C.c_int32(0), C.c_int32(0)
    check(lib.pa_kv_update_slices_count(C.byref(c), spb, C.byref(ns), C.byref(nsp)), op)
    cap = nsp.value if capacity is None else i32(op, "capacity", capacity)
    if cap < 0:
        raise ValueError(f"{op}: capacity {cap} < 0")
    slices = np.zeros((3, cap), np.int32)
    check(lib.pa_build_kv_update_slices(C.byref(c), spb, slices.ctypes.data if cap else None, cap, C.byref(ns),
                                        C.byref(nsp)), op)
    del keep  # the arrays c points into lived until here
    return slices, ns.value


# ---- page sizes, v1/v2 --------------------------------------------------------------------------------------


def _model_len(op, x):
    return i64(op, "max_model_len", x.model_config.max_model_len if hasattr(x, "model_config") else x)


def get_page_size(max_model_len):
    """vLLM's ragged backend page size: next_power_of_2(max_model_len) // 16
    clamped to [16, 256]. Takes an int or a vllm_config."""
    out = C.c_int32(0)
    check(lib.pa_get_page_size(_model_len("get_page_size", max_model_len), C.byref(out)), "get_page_size")
    return out.value


def get_min_page_size(max_model_len, max_num_seqs=None):
    """vLLM's ragged backend minimum page size (the block table in half of the
    TPU's 1 MiB SMEM). get_min_page_size(vllm_config) or
    get_min_page_size(max_model_len, max_num_seqs); a number without max_num_seqs
    is a TypeError."""
    op = "get_min_page_size"
    if max_num_seqs is None:
        if not hasattr(max_model_len, "scheduler_config"):
            raise TypeError(f"{op}: max_num_seqs is required with max_model_len given as a number "
                            "(get_min_page_size(max_model_len, max_num_seqs) or get_min_page_size(vllm_config))")
        max_num_seqs = max_model_len.scheduler_config.max_num_seqs
    out = C.c_int32(0)
    check(lib.pa_get_min_page_size(_model_len(op, max_model_len), i32(op, "max_num_seqs", max_num_seqs),
                                   C.byref(out)), op)
    return out.value


def use_paged_attention_v1(max_seq_len, num_seqs, num_heads):
    """vLLM's rule: v1 when max_seq_len <= 8192 and (one 512-token partition or
    num_seqs * num_heads > 512), else v2."""
    op = "use_paged_attention_v1"
    return bool(lib.pa_decode_use_v1(i32(op, "max_seq_len", max_seq_len), i32(op, "num_seqs", num_seqs),
                                     i32(op, "num_heads", num_heads)))


def decode_plan(num_seqs, num_heads, num_kv_heads, head_size, block_size, max_seq_len):
    """The checked v1/v2 choice with v2's scratch sizes (elements) as a dict."""
    op = "decode_plan"
    out = A.DecodePlan()
    check(lib.pa_decode_make_plan(i32(op, "num_seqs", num_seqs), i32(op, "num_heads", num_heads),
                                  i32(op, "num_kv_heads", num_kv_heads), i32(op, "head_size", head_size),
                                  i32(op, "block_size", block_size), i32(op, "max_seq_len", max_seq_len),
                                  C.byref(out)), op)
    return {"use_v1": bool(out.use_v1), "max_num_partitions": out.max_num_partitions,
            "tmp_out_elems": out.tmp_out_elems, "exp_sums_elems": out.exp_sums_elems,
            "max_logits_elems": out.max_logits_elems}
