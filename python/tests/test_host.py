"""The host layer against seed 002's worked example and against plain Python
written from the documented semantics, on random batches."""
import types

import numpy as np
import pytest

import pagedattn as pa


def test_local_attention_seed_example():
    # seed 002 (vLLM utils.make_local_attention_virtual_batches), the example in its comments
    bt = np.arange(30, dtype=np.int32).reshape(3, 10)
    q, cu, k, btl = pa.make_local_attention_virtual_batches(4, np.array([0, 4, 14, 19], np.int32),
                                                            np.array([6, 17, 9], np.int32), bt, block_size=2)
    assert q.tolist() == [2, 2, 1, 4, 4, 1, 4, 1]
    assert cu.tolist() == [0, 2, 4, 5, 9, 13, 14, 18, 19]
    assert k.tolist() == [4, 2, 4, 4, 4, 1, 4, 1]
    assert btl.tolist() == [[0, 1], [2, 3], [12, 13], [14, 15], [16, 17], [18, 19], [22, 23], [24, 25]]


def local_batches_py(C, qsl, seq_lens, bt, bs):
    """Each (request, chunk touched by its queries) pair, straight from the definition."""
    q, k, rows = [], [], []
    for r, n in enumerate(seq_lens):
        ql = qsl[r + 1] - qsl[r]
        first = (n - ql) // C if ql else (n - 1) // C
        last = (n - 1) // C
        for c in range(first, last + 1):
            lo, hi = c * C, (c + 1) * C
            q.append(max(0, min(hi, n) - max(lo, n - ql)))
            k.append(min(C, n - lo))
            rows.append([bt[r][min(lo // bs + j, bt.shape[1] - 1)] for j in range(C // bs)])
    return q, [0] + list(np.cumsum(q)), k, rows


@pytest.mark.parametrize("seed", range(6))
def test_local_attention_random(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    bs = int(rng.choice([1, 2, 4, 8]))
    C = bs * int(rng.integers(1, 5))
    qlens = rng.integers(0, 20, n)
    seq = qlens + rng.integers(0, 30, n)
    seq = np.maximum(seq, np.maximum(qlens, 1)).astype(np.int32)
    qsl = np.concatenate([[0], np.cumsum(qlens)]).astype(np.int32)
    width = int(-(-seq.max() // bs)) + int(rng.integers(0, 3))
    bt = rng.integers(0, 1000, (n, width)).astype(np.int32)
    got = pa.make_local_attention_virtual_batches(C, qsl, seq, bt, block_size=bs)
    q, cu, k, rows = local_batches_py(C, qsl.tolist(), seq.tolist(), bt, bs)
    assert got[0].tolist() == q
    assert got[1].tolist() == [int(x) for x in cu]
    assert got[2].tolist() == k
    assert np.asarray(got[3]).tolist() == [[int(x) for x in r] for r in rows]


class FakeInputBatch:
    def __init__(self, ids):
        self.req_ids = list(ids)
        self.swaps = []

    def swap_states(self, i, j):
        self.swaps.append((i, j))
        self.req_ids[i], self.req_ids[j] = self.req_ids[j], self.req_ids[i]


class FakeSchedulerOutput:
    def __init__(self, tokens):
        self.num_scheduled_tokens = tokens


def reorder_py(tokens, thr):
    """vLLM's minimal-swap rule as documented: the i-th decode from the back
    swaps with the i-th prefill from the front until a decode is already in place."""
    dec = [i for i, t in enumerate(tokens) if t <= thr]
    pre = [i for i, t in enumerate(tokens) if t > thr]
    swaps = []
    for i in range(1, min(len(dec), len(pre)) + 1):
        d = dec[len(dec) - i]
        if d < len(dec):
            break
        swaps.append((pre[i - 1], d))
    return swaps


@pytest.mark.parametrize("seed", range(8))
def test_reorder_and_split_random(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(0, 12))
    thr = int(rng.integers(1, 3))
    toks = rng.choice([1, 1, 2, 5, 17], n).astype(np.int32)
    ids = [f"r{i}" for i in range(n)]
    batch = FakeInputBatch(ids)
    sched = FakeSchedulerOutput(dict(zip(ids, toks.tolist())))
    modified = pa.reorder_batch_to_split_decodes_and_prefills(batch, sched, decode_threshold=thr)
    want = reorder_py(toks.tolist(), thr)
    assert batch.swaps == want and modified == bool(want)

    # the array form, in place, with a permutation
    arr = toks.copy()
    perm = np.arange(n, dtype=np.int32)
    assert pa.reorder_num_scheduled_tokens(arr, thr, perm) == bool(want)
    expect = toks.copy()
    for a, b in want:
        expect[[a, b]] = expect[[b, a]]
    assert arr.tolist() == expect.tolist()
    assert [ids[i] for i in perm] == batch.req_ids

    # the split of the reordered batch
    m = pa.build_common_attention_metadata(np.zeros(n, np.int32), arr, np.zeros((n, 4), np.int32), 16)
    nd = int(sum(1 for t in arr if t <= thr))
    assert pa.split_decodes_and_prefills(m, thr) == (nd, n - nd, int(arr[:nd].sum()), int(arr[nd:].sum()))


def test_split_rejects_unordered_batch():
    m = pa.build_common_attention_metadata(np.zeros(3, np.int32), np.array([5, 1, 1], np.int32),
                                           np.zeros((3, 1), np.int32), 16)
    with pytest.raises(ValueError, match="request"):
        pa.split_decodes_and_prefills(m)


def common_py(computed, sched, bt, bs, padded):
    qsl = [0]
    slots = []
    for r, (c, s) in enumerate(zip(computed, sched)):
        qsl.append(qsl[-1] + s)
        for pos in range(c, c + s):
            slots.append(int(bt[r][pos // bs]) * bs + pos % bs)
    slots += [-1] * (max(padded, len(slots)) - len(slots))
    return qsl, [c + s for c, s in zip(computed, sched)], slots


def slices_py(computed, sched, bt, bs):
    out, start = [], 0
    for r, (c, s) in enumerate(zip(computed, sched)):
        pos = c
        while pos < c + s:
            n = min(bs - pos % bs, c + s - pos)
            out.append((int(bt[r][pos // bs]) * bs + pos % bs, start, n))
            start += n
            pos += n
    return out


@pytest.mark.parametrize("seed", range(6))
def test_common_metadata_and_slices_random(seed):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 8))
    bs = int(rng.choice([1, 4, 16]))
    computed = rng.integers(0, 40, n).astype(np.int32)
    sched = rng.integers(0, 20, n).astype(np.int32)
    width = int(-(-(computed + sched).max() // bs)) + 1
    bt = rng.permutation(n * width).reshape(n, width).astype(np.int32)
    padded = int(sched.sum()) + int(rng.integers(0, 5))
    m = pa.build_common_attention_metadata(computed, sched, bt, bs, padded_num_tokens=padded)
    qsl, seq, slots = common_py(computed.tolist(), sched.tolist(), bt, bs, padded)
    assert m.query_start_loc.tolist() == qsl and m.seq_lens.tolist() == seq
    assert m.slot_mapping.tolist() == slots
    assert m.num_actual_tokens == int(sched.sum()) and m.max_query_len == int(sched.max())
    slices, ns = pa.kv_update_slices(m, num_slices_per_block=4)
    want = [x for x in slices_py(computed.tolist(), sched.tolist(), bt, bs)]
    assert ns == len(want) and slices.shape[1] % 4 == 0 and slices.shape[1] >= ns
    assert [tuple(slices[:, i]) for i in range(ns)] == want
    assert not slices[:, ns:].any()
    assert slices.shape[1] <= pa.kv_update_slices_upper_bound(n, max(int(sched.sum()), 1), bs, 4)


def test_slices_drive_kv_cache_update():
    """The builder's slices, fed to kv_cache_update, write the new tokens where the slot mapping says."""
    rng = np.random.default_rng(7)
    computed, sched = np.array([3, 0, 9], np.int32), np.array([6, 2, 5], np.int32)
    bs, CH, D = 4, 2, 8
    bt = np.array([[4, 1, 6, 0], [2, 3, 5, 7], [8, 9, 10, 11]], np.int32)
    m = pa.build_common_attention_metadata(computed, sched, bt, bs)
    slices, ns = pa.kv_update_slices(m, num_slices_per_block=8)
    new_kv = rng.standard_normal((int(sched.sum()), CH, D)).astype(np.float32)
    cache = np.zeros((12 * bs, CH, D), np.float32)
    pa.kv_cache_update(new_kv, slices, cache, np.array([ns], np.int32), page_size=bs, num_slices_per_block=8)
    want = np.zeros_like(cache)
    want[m.slot_mapping.astype(np.int64)] = new_kv
    np.testing.assert_array_equal(cache, want)


def next_pow2(n):
    return 1 if n < 1 else 1 << (int(n) - 1).bit_length()


@pytest.mark.parametrize("max_model_len", [1, 100, 2048, 4097, 32768, 1 << 20])
def test_page_sizes(max_model_len):
    assert pa.get_page_size(max_model_len) == min(max(next_pow2(max_model_len) // 16, 16), 256)
    for seqs in (1, 8, 256, 1024):
        per_req = (1 << 20) // 2 // seqs // 4
        assert pa.get_min_page_size(max_model_len, seqs) == next_pow2(-(-max_model_len // per_req))


def test_page_size_from_config():
    class Cfg:
        class model_config:
            max_model_len = 1024

        class scheduler_config:
            max_num_seqs = 512
    assert pa.get_page_size(Cfg) == 64
    assert pa.get_min_page_size(Cfg) == pa.get_min_page_size(1024, 512)


@pytest.mark.parametrize("max_seq_len,num_seqs,num_heads", [(512, 1, 1), (513, 1, 8), (513, 16, 33), (8192, 64, 32),
                                                             (8193, 512, 64), (100, 1, 1)])
def test_v1_v2_rule(max_seq_len, num_seqs, num_heads):
    parts = -(-max_seq_len // 512)
    want = max_seq_len <= 8192 and (parts == 1 or num_seqs * num_heads > 512)
    assert pa.use_paged_attention_v1(max_seq_len, num_seqs, num_heads) == want
    plan = pa.decode_plan(num_seqs, num_heads, 1, 64, 16, max_seq_len)
    assert plan["use_v1"] == want and plan["max_num_partitions"] == parts


def test_metadata_slot_mapping_feeds_reshape_and_cache_then_decode():
    """One serving step on the CPU path: the builder's int64 slot mapping goes
    straight into reshape_and_cache_flash, then decode attends over the history
    (context written earlier + the new token), compared with plain attention."""
    from refattn import attend
    rng = np.random.default_rng(21)
    KVH, H, D, bs = 2, 4, 32, 8
    computed = np.array([5, 0, 11], np.int32)
    sched = np.array([1, 1, 1], np.int32)
    bt = np.array([[7, 2, 0, 0], [5, 0, 0, 0], [1, 3, 6, 4]], np.int32)
    kc = np.zeros((8, bs, KVH, D), np.float32)
    vc = np.zeros_like(kc)
    hist_k = [rng.standard_normal((c + 1, KVH, D)).astype(np.float32) for c in computed]
    hist_v = [rng.standard_normal((c + 1, KVH, D)).astype(np.float32) for c in computed]
    # earlier steps: the context, through a metadata build of their own
    m0 = pa.build_common_attention_metadata(np.zeros(3, np.int32), computed, bt, bs)
    pa.reshape_and_cache_flash(np.concatenate([k[:-1] for k in hist_k]), np.concatenate([v[:-1] for v in hist_v]),
                               kc, vc, m0.slot_mapping)
    # this step: one new token each, padded to 8 tokens as a CUDA-graph size would
    m = pa.build_common_attention_metadata(computed, sched, bt, bs, padded_num_tokens=8)
    assert m.slot_mapping.dtype == np.int64 and (m.slot_mapping[3:] == -1).all()
    new_k = np.zeros((8, KVH, D), np.float32)
    new_v = np.zeros((8, KVH, D), np.float32)
    new_k[:3] = [k[-1] for k in hist_k]
    new_v[:3] = [v[-1] for v in hist_v]
    pa.reshape_and_cache_flash(new_k, new_v, kc, vc, m.slot_mapping)
    q = rng.standard_normal((3, H, D)).astype(np.float32)
    out = np.zeros_like(q)
    pa.paged_attention_decode(out, q, kc, vc, KVH, 0.25, bt, m.seq_lens, bs, m.max_seq_len)
    for s in range(3):
        np.testing.assert_allclose(out[s], attend(q[s:s + 1], hist_k[s], hist_v[s], 0.25)[0], atol=1e-5)


# ---- audit fixes: argument checks of the host layer --------------------------------------------------------


def test_block_table_without_columns_refused():
    """A [num_reqs, 0] table has no block ids: refused (it was taken as one column wide, and the
    slots made of ids read outside it), whether fresh or a view of a wider table."""
    base = np.full((2, 4), 111, np.int32)
    for bt in (np.zeros((2, 0), np.int32), base[:, :0]):
        with pytest.raises(ValueError, match=r"block_table has shape \[2, 0\]: block_table row too narrow"):
            pa.build_common_attention_metadata(np.zeros(2, np.int32), np.array([1, 2], np.int32), bt, 16)
    m = pa.build_common_attention_metadata(np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros((0, 0), np.int32),
                                           16)  # no requests: nothing to read
    assert m.num_reqs == 0 and m.slot_mapping.shape == (0,)


def test_reorder_arrays_agree_with_the_callbacks():
    """on_swap sees each swap; the arrays end holding exactly the swaps it saw return, also when it
    raises (C finished every swap on the array while the callbacks had stopped)."""
    base = np.array([9, 7, 1, 8, 1, 1, 6, 1], np.int32)
    for fail_at in (None, 0, 1, 2):
        t, perm, seen = base.copy(), np.arange(8, dtype=np.int32), []

        def on_swap(a, b):
            if len(seen) == fail_at:
                raise KeyError("stop")
            seen.append((a, b))

        try:
            moved = pa.reorder_num_scheduled_tokens(t, 1, perm, on_swap=on_swap)
            assert fail_at is None and moved
        except KeyError:
            assert fail_at is not None
        want, wperm = base.copy(), np.arange(8)
        for a, b in seen:
            want[[a, b]], wperm[[a, b]] = want[[b, a]], wperm[[b, a]]
        assert t.tolist() == want.tolist() and perm.tolist() == wperm.tolist(), (fail_at, seen)
        assert (base[perm] == t).all()
        if fail_at is None:
            assert len(seen) >= 3 and all(v <= 1 for v in t[:4]) and all(v > 1 for v in t[4:])


def test_hand_made_metadata_writes_nothing():
    """Constructing the dataclass leaves the caller's slot_mapping alone (it wrote -1 from
    num_actual_tokens on, so a negative count overwrote the array's tail before any check)."""
    ref = pa.build_common_attention_metadata(np.array([0, 3], np.int32), np.array([3, 2], np.int32),
                                             np.array([[5, 6], [7, 8]], np.int32), 4, padded_num_tokens=8)
    assert ref.slot_mapping.tolist()[5:] == [-1, -1, -1]  # the builder pads
    for n in (-2, 1, 5):
        sm = np.arange(100, 108, dtype=ref.slot_mapping.dtype)
        pa.CommonAttentionMetadata(**{**ref.__dict__, "slot_mapping": sm, "num_actual_tokens": n})
        assert sm.tolist() == list(range(100, 108)), n


def test_kv_update_slices_check_hand_made_metadata():
    """The dataclass is public: a hand-made one is checked (and its arrays taken as C-contiguous
    int32) before C reads it, so a strided block table or int64 arrays give the slices of the
    metadata they hold, and arrays too short for num_reqs are refused."""
    computed, sched, bs = np.array([0, 3], np.int32), np.array([3, 2], np.int32), 4
    bt = np.array([[5, 6], [7, 8]], np.int32)
    ref = pa.build_common_attention_metadata(computed, sched, bt, bs)
    want = slices_py(computed.tolist(), sched.tolist(), bt, bs)

    def got(**kw):
        s, n = pa.kv_update_slices(pa.CommonAttentionMetadata(**{**ref.__dict__, **kw}))
        return [tuple(int(v) for v in s[:, i]) for i in range(n)]

    assert got() == want
    wide = np.zeros((2, 10), np.int32)
    wide[:, :2] = bt
    assert got(block_table_tensor=wide[:, :2]) == want
    assert got(block_table_tensor=bt.astype(np.int64), query_start_loc_cpu=ref.query_start_loc_cpu.astype(np.int64),
               seq_lens_cpu=ref.seq_lens_cpu.astype(np.int64),
               num_computed_tokens_cpu=ref.num_computed_tokens_cpu.astype(np.int64)) == want
    bad = [(r"block_table_tensor has 1 rows for num_reqs 2", dict(block_table_tensor=bt[:1])),
           (r"seq_lens_cpu has 1 entries for num_reqs 2", dict(seq_lens_cpu=ref.seq_lens_cpu[:1])),
           (r"query_start_loc_cpu has 2 entries for num_reqs 2", dict(query_start_loc_cpu=ref.query_start_loc_cpu[:2])),
           (r"num_computed_tokens_cpu has 1 entries", dict(num_computed_tokens_cpu=ref.num_computed_tokens_cpu[:1])),
           (r"block_table_tensor must have 2 dimension", dict(block_table_tensor=bt.ravel())),
           (r"block_table_tensor has no columns", dict(block_table_tensor=np.zeros((2, 0), np.int32))),
           (r"seq_lens_cpu has values outside int32", dict(seq_lens_cpu=ref.seq_lens_cpu + np.int64(2 ** 32))),
           (r"slot_mapping must be a 1-D C-contiguous int64", dict(slot_mapping=ref.slot_mapping.astype(np.int32))),
           (r"num_reqs 4294967298 does not fit in int32", dict(num_reqs=2 ** 32 + 2))]
    for msg, kw in bad:
        with pytest.raises(ValueError, match=msg):
            got(**kw)


def test_reorder_refuses_perm_sharing_the_tokens():
    """perm=tokens applied every swap twice to one array (undone: True returned, nothing moved);
    the library refuses perm over the tokens, and nothing is written."""
    buf = np.array([5, 5, 1, 1, 0], np.int32)
    t = buf[:4]
    for perm in (t, buf[1:]):
        for on_swap in (None, lambda a, b: None):  # with a callback the library sees copies: checked before
            with pytest.raises(ValueError, match="output perm overlaps the input num_scheduled_tokens"):
                pa.reorder_num_scheduled_tokens(t, 1, perm=perm, on_swap=on_swap)
            assert buf.tolist() == [5, 5, 1, 1, 0]
    perm = np.arange(4, dtype=np.int32)
    assert pa.reorder_num_scheduled_tokens(t, 1, perm=perm)
    assert t.tolist() == [1, 1, 5, 5] and perm.tolist() == [3, 2, 1, 0]


def test_reorder_needs_a_1d_array():
    """The in-place reorder works on shape[0] ints: anything but a 1-D array is refused and left
    as it was (a writable [5, 0] view would have had 5 ints of the memory behind it reordered)."""
    base = np.array([5, 1, 5, 1, 1, 99, 99], np.int32)
    for t in (np.lib.stride_tricks.as_strided(base, (5, 0), (4, 4)), np.array([[5, 1], [1, 5]], np.int32),
              np.array(5, np.int32)):
        before = t.copy()
        with pytest.raises(ValueError, match="num_scheduled_tokens must be a 1-D array"):
            pa.reorder_num_scheduled_tokens(t)
        np.testing.assert_array_equal(t, before)
    assert base.tolist() == [5, 1, 5, 1, 1, 99, 99]
    with pytest.raises(ValueError, match="perm must be a 1-D array"):
        pa.reorder_num_scheduled_tokens(np.array([5, 1], np.int32), perm=np.zeros((1, 2), np.int32))


def test_host_ints_beyond_int32_refused_not_wrapped():
    big = 2 ** 32 + 100
    bad = [
        ("use_paged_attention_v1: max_seq_len", lambda: pa.use_paged_attention_v1(big, 1, 1)),
        ("decode_plan: max_seq_len", lambda: pa.decode_plan(1, 1, 1, 64, 16, big)),
        ("build_common_attention_metadata: block_size",
         lambda: pa.build_common_attention_metadata(np.array([0]), np.array([3]), np.array([[7]], np.int32),
                                                    2 ** 32 + 16)),
        ("build_common_attention_metadata: padded_num_tokens",
         lambda: pa.build_common_attention_metadata(np.array([0]), np.array([3]), np.array([[7]], np.int32), 16,
                                                    padded_num_tokens=big)),
        ("kv_update_slices_upper_bound: num_tokens", lambda: pa.kv_update_slices_upper_bound(1, 2 ** 32 + 64, 16)),
        ("get_min_page_size: max_num_seqs", lambda: pa.get_min_page_size(2 ** 40, 2 ** 32 + 1)),
        ("get_min_page_size: max_model_len", lambda: pa.get_min_page_size(2 ** 64, 1)),  # an int64 argument
        ("get_page_size: max_model_len", lambda: pa.get_page_size(2 ** 64)),
        ("split_decodes_and_prefills: decode_threshold",
         lambda: pa.split_decodes_and_prefills(pa.build_common_attention_metadata(
             np.zeros(1, np.int32), np.ones(1, np.int32), np.zeros((1, 1), np.int32), 16), big)),
        ("reorder_num_scheduled_tokens: decode_threshold",
         lambda: pa.reorder_num_scheduled_tokens(np.array([5, 1], np.int32), big)),
        ("make_local_attention_virtual_batches: attn_chunk_size",
         lambda: pa.make_local_attention_virtual_batches(2 ** 32 + 4, np.array([0, 1], np.int32),
                                                         np.array([1], np.int32), np.zeros((1, 1), np.int32), 2)),
    ]
    for msg, f in bad:
        with pytest.raises(ValueError, match=f"^{msg} -?[0-9]+ does not fit in int"):
            f()
    # what fits is taken: a max_seq_len past 8192 is v2, whatever the batch
    assert pa.use_paged_attention_v1(2 ** 31 - 1, 1, 1) is False


def test_min_page_size_needs_max_num_seqs_with_a_number():
    with pytest.raises(TypeError, match="get_min_page_size: max_num_seqs is required"):
        pa.get_min_page_size(1024)


# ---- gaps a mutation pass of python/pagedattn found (python/tests/mutants.py) ----------------------


def test_host_index_arrays_int32_bounds():
    """Index arrays are converted to int32 when every value fits, [-2^31, 2^31 - 1]: 2^31 and
    -2^31 - 1 are refused (they would wrap), the bounds themselves are not refused as such."""
    bt = np.zeros((1, 1), np.int32)
    for bad in (2 ** 31, -2 ** 31 - 1):
        with pytest.raises(ValueError, match="num_computed_tokens has values outside int32"):
            pa.build_common_attention_metadata(np.array([bad], np.int64), np.array([1], np.int32), bt, 16)
        with pytest.raises(ValueError, match="seq_lens_np has values outside int32"):
            pa.make_local_attention_virtual_batches(4, np.array([0, 1], np.int32), np.array([bad], np.int64), bt, 2)
    for edge in (2 ** 31 - 1, -2 ** 31):  # past the conversion: the library's checks name the request
        with pytest.raises(ValueError, match="^build_common_attention_metadata: request 0: "):
            pa.build_common_attention_metadata(np.array([edge], np.int64), np.array([1], np.int32), bt, 16)


def test_in_place_reorder_refuses_read_only_arrays():
    """reorder_num_scheduled_tokens writes its arrays: a read-only one is refused and left as it was."""
    t = np.array([5, 1, 1], np.int32)
    t.flags.writeable = False
    with pytest.raises(ValueError, match="num_scheduled_tokens is updated in place, so it must be a writable"):
        pa.reorder_num_scheduled_tokens(t)
    assert t.tolist() == [5, 1, 1]
    w = np.array([5, 1, 1], np.int32)
    perm = np.arange(3, dtype=np.int32)
    perm.flags.writeable = False
    with pytest.raises(ValueError, match="perm is updated in place, so it must be a writable"):
        pa.reorder_num_scheduled_tokens(w, perm=perm)
    assert w.tolist() == [5, 1, 1] and perm.tolist() == [0, 1, 2]


def test_reorder_errors_name_the_function_called():
    """The library's refusals (a negative count, a bad decode_threshold) name the function the caller
    called, with or without an on_swap callback, not the other reorder."""
    calls = [(lambda t, th: pa.reorder_num_scheduled_tokens(t, th), "reorder_num_scheduled_tokens"),
             (lambda t, th: pa.reorder_num_scheduled_tokens(t, th, on_swap=lambda i, j: None),
              "reorder_num_scheduled_tokens"),
             (lambda t, th: pa.reorder_batch_to_split_decodes_and_prefills(
                 types.SimpleNamespace(req_ids=list(range(len(t))), swap_states=lambda i, j: None),
                 types.SimpleNamespace(num_scheduled_tokens=dict(enumerate(t.tolist()))), th),
              "reorder_batch_to_split_decodes_and_prefills")]
    for call, name in calls:
        with pytest.raises(ValueError, match=f"^{name}: .*request 1: num_scheduled_tokens must be >= 0"):
            call(np.array([5, -1], np.int32), 1)
        with pytest.raises(ValueError, match=f"^{name}: decode_threshold 4294967296 does not fit in int32"):
            call(np.array([5, 1], np.int32), 2 ** 32)
