"""Independent NumPy definitions for the tests: caches written from the layouts'
definitions in include/pagedattn/kv_cache.h (not through the library), and
attention computed directly in float64."""
import numpy as np


def x_of(dtype):
    return 16 // np.dtype(dtype).itemsize


class Paged:
    """Logical per-sequence K/V histories laid into a paged cache by hand."""

    def __init__(self, rng, seq_lens, num_kv_heads, head_size, block_size, dtype, spare_blocks=3,
                 table_width=None):
        self.seq_lens = list(seq_lens)
        self.kvh, self.d, self.bs, self.dtype = num_kv_heads, head_size, block_size, np.dtype(dtype)
        pages = [(n + block_size - 1) // block_size for n in self.seq_lens]
        self.num_blocks = sum(pages) + spare_blocks
        width = table_width or max(pages + [1])
        ids = rng.permutation(self.num_blocks).astype(np.int32)
        self.block_tables = np.full((len(self.seq_lens), width), -7, np.int32)  # junk past the used columns
        o = 0
        for s, p in enumerate(pages):
            self.block_tables[s, :p] = ids[o:o + p]
            o += p
        self.K = [rng.standard_normal((n, num_kv_heads, head_size)).astype(self.dtype) for n in self.seq_lens]
        self.V = [rng.standard_normal((n, num_kv_heads, head_size)).astype(self.dtype) for n in self.seq_lens]

    def slot(self, s, t):
        return int(self.block_tables[s, t // self.bs]) * self.bs + t % self.bs

    def fill(self, layout, filler=np.nan):
        """(key_cache, value_cache) in `layout` ('vllm', 'nhd', 'hnd' as the
        logical NHD view of HND memory, 'combined' -> one buffer)."""
        nb, bs, h, d = self.num_blocks, self.bs, self.kvh, self.d
        if layout == "vllm":
            x = x_of(self.dtype)
            kc = np.full((nb, h, d // x, bs, x), filler, self.dtype)
            vc = np.full((nb, h, d, bs), filler, self.dtype)
            for s, n in enumerate(self.seq_lens):
                for t in range(n):
                    b, off = divmod(self.slot(s, t), bs)
                    for hh in range(h):
                        for dd in range(d):
                            kc[b, hh, dd // x, off, dd % x] = self.K[s][t, hh, dd]
                            vc[b, hh, dd, off] = self.V[s][t, hh, dd]
            return kc, vc
        if layout == "combined":
            kv = np.full((nb, bs, 2 * h, d), filler, self.dtype)
            for s, n in enumerate(self.seq_lens):
                for t in range(n):
                    b, off = divmod(self.slot(s, t), bs)
                    for hh in range(h):
                        kv[b, off, 2 * hh] = self.K[s][t, hh]
                        kv[b, off, 2 * hh + 1] = self.V[s][t, hh]
            return kv, None
        if layout == "nhd":
            kc = np.full((nb, bs, h, d), filler, self.dtype)
            vc = np.full((nb, bs, h, d), filler, self.dtype)
            for s, n in enumerate(self.seq_lens):
                for t in range(n):
                    b, off = divmod(self.slot(s, t), bs)
                    kc[b, off] = self.K[s][t]
                    vc[b, off] = self.V[s][t]
            return kc, vc
        if layout == "hnd":
            kc = np.full((nb, h, bs, d), filler, self.dtype)
            vc = np.full((nb, h, bs, d), filler, self.dtype)
            for s, n in enumerate(self.seq_lens):
                for t in range(n):
                    b, off = divmod(self.slot(s, t), bs)
                    kc[b, :, off] = self.K[s][t]
                    vc[b, :, off] = self.V[s][t]
            return kc.transpose(0, 2, 1, 3), vc.transpose(0, 2, 1, 3)  # logical [nb, bs, h, d] views
        raise ValueError(layout)


def attend(q, K, V, scale, q_pos=None, alibi=None, window=0, soft_cap=0.0, causal=True, sinks=None):
    """q [nq, H, d]; K, V [nk, KVH, d]; query i at position q_pos[i] sees keys
    j <= q_pos[i] (all keys when q_pos is None or causal is False; the window
    and ALiBi still count from q_pos[i]: the window masks keys at least `window`
    before q_pos[i], and without causal after it too; ALiBi adds
    -alibi[h] * |j - q_pos[i]|, FlashAttention-2's bias). float64 softmax. sinks [H]: head h's
    logits get sinks[h] appended before the softmax, and its weight dropped
    after (gpt-oss's attention sinks); a row with no visible key stays 0."""
    q, K, V = (np.asarray(a, np.float64) for a in (q, K, V))
    nq, H, d = q.shape
    nk, kvh, _ = K.shape
    g = H // kvh
    out = np.zeros((nq, H, d))
    for i in range(nq):
        for h in range(H):
            logits = K[:, h // g] @ q[i, h] * scale
            if soft_cap:
                logits = soft_cap * np.tanh(logits / soft_cap)
            pos = np.arange(nk)
            qp = nk - 1 if q_pos is None else q_pos[i]
            if alibi is not None:
                logits = logits - alibi[h] * np.abs(pos - qp)
            mask = pos > qp if causal else np.zeros(nk, bool)
            if window:
                mask |= (qp - pos) >= window
                if not causal:
                    mask |= (pos - qp) >= window
            if mask.all():
                continue
            logits = np.where(mask, -np.inf, logits)
            if sinks is not None:
                logits = np.append(logits, np.float64(sinks[h]))
            p = np.exp(logits - logits.max())
            out[i, h] = (p / p.sum())[:nk] @ V[:, h // g]
    return out


# JAX's DEFAULT_MASK_VALUE as ragged.h spells it: -0.7f * FLT_MAX, a product of two floats
RAGGED_DEFAULT_MASK = float(np.float32(-0.7) * np.finfo(np.float32).max)


def ragged_reference(q, kv, kv_lens, page_indices, cu_q_lens, num_seqs, sm_scale, window=0, soft_cap=0.0,
                     mask_value=None, sinks=None):
    """(out [T, H, d], lse [H, T]) of the ragged op by include/pagedattn/ragged.h's definition, in
    float64, NaN in the rows no live sequence covers. kv is the combined cache [num_pages,
    page_size, 2 * KVH, d] (K at even, V at odd combined heads); sequence s's rows cu_q_lens[s] ..
    cu_q_lens[s+1]-1 sit at positions kv_len - q_len + i and see the keys k in [0, kv_len) through
    page_indices[s]; a key after the row's position, or at least `window` before it, is masked:
    mask_value (None = JAX's default) is ADDED to its logit, after the soft cap. sinks[h] is one
    more term of head h's denominator, with no value. lse = log(e^sinks[h] + sum_k e^x_k)."""
    q, kv = np.asarray(q, np.float64), np.asarray(kv, np.float64)
    T, H, d = q.shape
    page_size, kvh = kv.shape[1], kv.shape[2] // 2
    g = H // kvh
    mask = RAGGED_DEFAULT_MASK if mask_value is None else float(mask_value)
    out, lse = np.full(q.shape, np.nan), np.full((H, T), np.nan)
    for s in range(int(np.asarray(num_seqs).reshape(-1)[0])):  # the op's int32 [1], or a number
        a, b, L = int(cu_q_lens[s]), int(cu_q_lens[s + 1]), int(kv_lens[s])
        pages = [kv[int(p)] for p in page_indices[s, :-(-L // page_size)]]
        tokens = np.concatenate(pages)[:L] if pages else np.zeros((0, 2 * kvh, d))
        K, V = tokens[:, 0::2], tokens[:, 1::2]  # [L, KVH, d]
        k = np.arange(L)
        for i in range(b - a):
            pos = L - (b - a) + i
            masked = k > pos
            if window:
                masked |= pos - window >= k
            for h in range(H):
                x = sm_scale * (K[:, h // g] @ q[a + i, h])
                if soft_cap:
                    x = soft_cap * np.tanh(x / soft_cap)
                x = x + np.where(masked, mask, 0.0)
                terms = np.append(x, np.float64(sinks[h])) if sinks is not None else x
                m = terms.max()
                e = np.exp(terms - m)
                lse[h, a + i] = m + np.log(e.sum())
                out[a + i, h] = e[:L] @ V[:, h // g] / e.sum()
    return out, lse


def ragged_options(opts, sinks):
    """(ragged_paged_attention's keyword arguments, ragged_reference's) for a case's options:
    sinks (the given array when opts["sinks"]), window, soft_cap and mask_value."""
    op, ref = {}, {}
    if opts.get("sinks"):
        op["sinks"] = ref["sinks"] = sinks
    if opts.get("window"):
        op["sliding_window"] = ref["window"] = opts["window"]
    if opts.get("soft_cap"):
        op["soft_cap"] = ref["soft_cap"] = opts["soft_cap"]
    if opts.get("mask_value") is not None:
        op["mask_value"] = ref["mask_value"] = opts["mask_value"]
    return op, ref


def mixed_batch(rng, layout, dtype, H, KVH, D, BS, prefills, decodes, key_rows_extra=0,
                filler=np.nan):
    """A chunked-prefill step, prefills first, then decodes: prefills are (context,
    query length) pairs, decodes seq_lens. The cache holds each prefill's context
    and each decode's whole history (its own token included), laid out by hand;
    k, v are the prefills' new keys and values (and key_rows_extra rows more).
    Returns (Paged, key_cache, value_cache, q, k, v, query_start_loc, seq_lens)."""
    ctx = [c for c, _ in prefills]
    q_lens = [n for _, n in prefills]
    width = max([-(-n // BS) for n in ctx + decodes] + [0]) + 1  # a junk column past the longest
    pg = Paged(rng, ctx + decodes, KVH, D, BS, dtype, table_width=width)
    kc, vc = pg.fill(layout, filler)
    NP, ND = sum(q_lens), len(decodes)
    q = rng.standard_normal((NP + ND, H, D)).astype(dtype)
    k = rng.standard_normal((NP + key_rows_extra, KVH, D)).astype(dtype)
    v = rng.standard_normal((NP + key_rows_extra, KVH, D)).astype(dtype)
    start = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    seq_lens = np.array([c + n for c, n in prefills] + decodes, np.int32)
    return pg, kc, vc, q, k, v, start, seq_lens


def mixed_reference(pg, q, k, v, start, prefills, decodes, scale, **kw):
    """Each prefill's rows over its context then its new keys (causal, positions after
    the context); each decode's row over its cached history."""
    ref = np.zeros(q.shape)
    for s, (c, n) in enumerate(prefills):
        a, b = start[s], start[s + 1]
        ref[a:b] = attend(q[a:b], np.concatenate([pg.K[s], k[a:b]]), np.concatenate([pg.V[s], v[a:b]]), scale,
                          q_pos=[c + i for i in range(n)], **kw)
    NP, P = int(start[-1]), len(prefills)
    for i, n in enumerate(decodes):
        ref[NP + i] = attend(q[NP + i:NP + i + 1], pg.K[P + i], pg.V[P + i], scale, q_pos=[n - 1], **kw)[0]
    return ref


def fp8_values(fmt):
    """The value of each of the 256 bytes of an fp8 format, by its definition
    (OCP FP8: e4m3 = 1 sign, 4 exponent bits with bias 7, 3 mantissa bits, no
    infinities, S.1111.111 NaN; e5m2 = IEEE-style, bias 15, 2 mantissa bits)."""
    ebits, mbits, bias = (4, 3, 7) if fmt == "e4m3" else (5, 2, 15)
    out = np.empty(256)
    for b in range(256):
        sign = -1.0 if b & 0x80 else 1.0
        e, m = (b >> mbits) & ((1 << ebits) - 1), b & ((1 << mbits) - 1)
        if fmt == "e4m3" and e == 15 and m == 7:
            out[b] = np.nan
        elif fmt == "e5m2" and e == 31:
            out[b] = np.nan if m else sign * np.inf
        elif e == 0:
            out[b] = sign * m / (1 << mbits) * 2.0 ** (1 - bias)
        else:
            out[b] = sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
    return out
