#!/usr/bin/env python3
"""NumPy baseline for `pagedattn bench plan`.

Builds the same host metadata as the C library for the same batches (same LCG,
same seed, same sizes) the way vLLM's model runners do it on the CPU: vectorised
NumPy (cumsum for query_start_loc, a batched arange for positions, a gather from
the flattened block table for the slot mapping, and the TPU runner's slice
construction for the KV-update slices). Prints the median microseconds per step
in the same format as `pagedattn bench plan`, so the two can be compared:

    pagedattn bench plan
    python3 scripts/numpy_plan_baseline.py

Needs only NumPy (`pip install numpy`).
"""
import argparse
import time

import numpy as np

BLOCK_SIZE = 16
SLICES_PER_BLOCK = 8
MASK64 = (1 << 64) - 1


def lcg_stream(seed):
    x = seed & MASK64
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) & MASK64
        yield x >> 33


def make_batch(n, seed):
    """Mirror of make_bench_batch in benchmarks/cmd_plan.c."""
    g = lcg_stream(seed)
    comp0, sched0 = [], []
    for _ in range(n):
        prefill = next(g) % 100 < 10
        sched0.append(16 + next(g) % 497 if prefill else 1)
        comp0.append(next(g) % 4000)
    order = [r for r in range(n) if sched0[r] > 1] + [r for r in range(n) if sched0[r] <= 1]
    comp = np.array([comp0[r] for r in order], dtype=np.int32)
    sched = np.array([sched0[r] for r in order], dtype=np.int32)
    nblocks = (comp + sched + BLOCK_SIZE - 1) // BLOCK_SIZE
    stride = max(1, int(nblocks.max()))
    bt = np.zeros((n, stride), dtype=np.int32)
    nxt = 0
    for r in range(n):
        k = int(nblocks[r])
        bt[r, :k] = np.arange(nxt, nxt + k, dtype=np.int32)
        nxt += k
    num_prefills = int((sched > 1).sum())
    return comp, sched, bt, num_prefills


def build(comp, sched, bt, num_prefills, padded_num_tokens=0):
    n = comp.shape[0]
    stride = bt.shape[1]
    # common metadata
    query_start_loc = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(sched, out=query_start_loc[1:])
    seq_lens = comp + sched
    num_computed_tokens = comp.copy()
    total = int(query_start_loc[-1])
    max_query_len = int(sched.max()) if n else 0
    # positions: batched arange, as vLLM's _prepare_inputs
    req_indices = np.repeat(np.arange(n, dtype=np.int32), sched)
    cu = np.cumsum(sched)
    arange = np.arange(total, dtype=np.int32) - np.repeat(cu - sched, sched)
    positions = comp[req_indices] + arange
    block_idx = req_indices * stride + positions // BLOCK_SIZE
    block_numbers = bt.reshape(-1)[block_idx]
    padded = max(padded_num_tokens, total)
    # int64, as vLLM's slot_mapping (and pa_build_common_metadata's)
    slot_mapping = np.full(padded, -1, dtype=np.int64)
    np.add(block_numbers * BLOCK_SIZE, positions % BLOCK_SIZE, out=slot_mapping[:total])
    # decode/prompt builder
    seq_start_loc = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(seq_lens, out=seq_start_loc[1:])
    num_prefill_tokens = int(query_start_loc[num_prefills])
    max_prefill_seq_len = int(seq_lens[:num_prefills].max()) if num_prefills else 0
    max_decode_seq_len = int(seq_lens[num_prefills:].max()) if num_prefills < n else 0
    max_decode_query_len = int(sched[num_prefills:].max()) if num_prefills < n else 0
    # KV-update slices, as the TPU runner's _get_slot_mapping_metadata
    slices_start = comp
    slices_end = comp + sched
    local_block_start_idx = slices_start // BLOCK_SIZE
    local_block_end_idx = (slices_end - 1) // BLOCK_SIZE
    global_block_start_idx = np.arange(n, dtype=np.int32) * stride + local_block_start_idx
    block_lens = local_block_end_idx - local_block_start_idx + 1
    global_block_start_idx = np.repeat(global_block_start_idx, block_lens)
    slice_arange = np.concatenate([np.arange(k, dtype=np.int32) for k in block_lens])
    global_block_indices = global_block_start_idx + slice_arange
    slice_blocks = bt.reshape(-1)[global_block_indices]
    total_block_len = int(block_lens.sum())
    bounds = np.repeat(np.array([[0, BLOCK_SIZE]], dtype=np.int32), total_block_len, axis=0)
    cu_block_lens = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(block_lens, out=cu_block_lens[1:])
    for r in range(n):
        bounds[cu_block_lens[r]][0] = slices_start[r] % BLOCK_SIZE
        bounds[cu_block_lens[r + 1] - 1][1] = (slices_end[r] - 1) % BLOCK_SIZE + 1
    slice_lens = bounds[:, 1] - bounds[:, 0]
    cu_slice_lens = np.zeros(total_block_len + 1, dtype=np.int32)
    np.cumsum(slice_lens, out=cu_slice_lens[1:])
    kv_cache_start = bounds[:, 0] + slice_blocks * BLOCK_SIZE
    slices = np.stack([kv_cache_start, cu_slice_lens[:-1], slice_lens], axis=1)
    padded_slices = -(-total_block_len // SLICES_PER_BLOCK) * SLICES_PER_BLOCK
    slices = np.pad(slices, [[0, padded_slices - total_block_len], [0, 0]], constant_values=0)
    return dict(query_start_loc=query_start_loc, seq_lens=seq_lens, num_computed_tokens=num_computed_tokens,
                slot_mapping=slot_mapping, max_query_len=max_query_len, seq_start_loc=seq_start_loc,
                num_prefill_tokens=num_prefill_tokens, max_prefill_seq_len=max_prefill_seq_len,
                max_decode_seq_len=max_decode_seq_len, max_decode_query_len=max_decode_query_len,
                slices=slices, num_slices=total_block_len)


CHUNK = 8192


def reorder(sched, decode_threshold=1):
    """Decodes first with the fewest swaps, as vLLM's builder reorders its
    persistent batch (a Python loop over the requests there too); returns the
    permutation (new position -> old request)."""
    n = sched.shape[0]
    decodes, prefills = [], []
    for i in range(n):
        (decodes if sched[i] <= decode_threshold else prefills).append(i)
    perm = list(range(n))
    nd = len(decodes)
    for i in range(1, min(nd, len(prefills)) + 1):
        d = decodes[nd - i]
        if d < nd:
            break
        p = prefills[i - 1]
        perm[p], perm[d] = perm[d], perm[p]
    return perm


def local_virtual_batches(query_start_loc, seq_lens, bt, chunk=CHUNK, used_only=False):
    """Chunked local attention's virtual batches, vectorised: each (request,
    chunk touched by its queries) pair becomes a virtual request with its
    query / key lengths and its row of block_table pages (clipped to the last
    column), as include/pagedattn/batch.h defines them. used_only: only the
    first ceil(seqlens_k / BLOCK_SIZE) columns of each row are written (the
    pages a kernel reads, PA_LOCAL_TABLE_USED), with a batched arange over
    those columns into an uninitialised table."""
    q = np.diff(query_start_loc)
    k = seq_lens
    pages = chunk // BLOCK_SIZE
    width = bt.shape[1]
    start = k - q
    first = np.minimum(chunk - start % chunk, q)
    blocks = 1 + (q - first + chunk - 1) // chunk
    nv = int(blocks.sum())
    req = np.repeat(np.arange(q.shape[0]), blocks)
    j = np.arange(nv) - np.repeat(np.cumsum(blocks) - blocks, blocks)
    seqlens_q = np.where(j == 0, first[req], np.minimum(q[req] - first[req] - chunk * (j - 1), chunk))
    last_keys = np.where(k % chunk == 0, chunk, k % chunk)
    seqlens_k = np.where(j == blocks[req] - 1, last_keys[req], chunk)
    kstart = k[req] - last_keys[req] - (blocks[req] - 1 - j) * chunk
    if used_only:
        used = (seqlens_k + BLOCK_SIZE - 1) // BLOCK_SIZE
        vrep = np.repeat(np.arange(nv), used)
        c = np.arange(int(used.sum())) - np.repeat(np.cumsum(used) - used, used)
        cols = np.minimum(kstart[vrep] // BLOCK_SIZE + c, width - 1)
        block_table_local = np.empty((nv, pages), dtype=np.int32)
        block_table_local.reshape(-1)[vrep * pages + c] = bt[req[vrep], cols]
    else:
        cols = np.minimum(kstart[:, None] // BLOCK_SIZE + np.arange(pages)[None, :], width - 1)
        block_table_local = bt[req[:, None], cols]
    cu_seqlens_q = np.zeros(nv + 1, dtype=np.int32)
    np.cumsum(seqlens_q, out=cu_seqlens_q[1:])
    return seqlens_q.astype(np.int32), cu_seqlens_q, seqlens_k.astype(np.int32), block_table_local


def build_local(comp, sched, bt, used_only=False):
    """vLLM's builder steps for chunked local attention: reorder, common
    metadata with the slot mapping, local virtual batches."""
    perm = reorder(sched)
    out = build(comp, sched, bt, 0)
    lv = local_virtual_batches(out["query_start_loc"], out["seq_lens"], bt, used_only=used_only)
    return perm, out, lv


def check_used_columns(full, used):
    """The used-only table agrees with the full one where a kernel reads."""
    for a, b in zip(full[:3], used[:3]):
        assert np.array_equal(a, b)
    ncols = (full[2] + BLOCK_SIZE - 1) // BLOCK_SIZE
    mask = np.arange(full[3].shape[1])[None, :] < ncols[:, None]
    assert np.array_equal(full[3][mask], used[3][mask])


def timed(fn, reps):
    """fn's last result and its sorted times in microseconds over reps calls, after 3 warm-up calls."""
    for _ in range(3):
        res = fn()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        res = fn()
        t.append((time.perf_counter() - t0) * 1e6)
    t.sort()
    return res, t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=0, help="samples per size (default 300 / 100 / 30)")
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    print("# numpy baseline: common metadata + slot mapping + decode/prompt fields + KV-update slices, "
          "block_size 16, slices_per_block 8")
    print("%-6s %-8s %-8s %-8s %-8s %12s %12s %12s" % ("reqs", "prefill", "tokens", "slots", "slices", "median_us",
                                                      "p10_us", "p90_us"))
    for n, default_reps in ((8, 300), (256, 100), (4096, 30)):
        comp, sched, bt, num_prefills = make_batch(n, a.seed + n)
        reps = a.reps or default_reps
        out, t = timed(lambda: build(comp, sched, bt, num_prefills), reps)
        print("%-6d %-8d %-8d %-8d %-8d %12.3f %12.3f %12.3f" % (
            n, num_prefills, int(sched.sum()), out["slot_mapping"].shape[0], out["num_slices"], t[len(t) // 2],
            t[len(t) // 10], t[len(t) * 9 // 10]))
    print("# numpy baseline local: reorder + common metadata (slot mapping) + local virtual batches, "
          "attn_chunk_size %d, block_size 16" % CHUNK)
    print("%-6s %-8s %-8s %-8s %-8s %-6s %10s %12s %12s %12s" % (
        "reqs", "prefill", "tokens", "virtual", "pages", "table", "table_KiB", "median_us", "p10_us", "p90_us"))
    for n, default_reps in ((8, 300), (256, 100), (4096, 30)):
        comp, sched, bt, num_prefills = make_batch(n, a.seed + n)
        reps = a.reps or default_reps
        lvs = []
        for fill, used_only in (("full", False), ("used", True)):
            res, t = timed(lambda: build_local(comp, sched, bt, used_only), reps)
            lv = res[2]
            lvs.append(lv)
            cols = lv[3].size if not used_only else int(((lv[2] + BLOCK_SIZE - 1) // BLOCK_SIZE).sum())
            print("%-6d %-8d %-8d %-8d %-8d %-6s %10.1f %12.3f %12.3f %12.3f" % (
                n, num_prefills, int(sched.sum()), lv[0].shape[0], lv[3].shape[1], fill, cols * 4 / 1024,
                t[len(t) // 2], t[len(t) // 10], t[len(t) * 9 // 10]))
        check_used_columns(*lvs)


if __name__ == "__main__":
    main()
