#!/usr/bin/env python3
"""Shared-memory wavefronts of the decode kernels' swizzled K and V rows (cuda/decode/decode_kernel.cuh,
decode_mma.cuh), from the kernels' index formulas written out here.

No GPU is needed. The bank model is ragged_banks.py's: 32 banks of 4 bytes, 16-byte accesses a
quarter warp at a time, 8-byte ones a half warp; a phase takes as many wavefronts as the most
distinct words one bank must deliver. Rows are 16-byte granules, 8 or more a row (the swizzled
geometries: swz_k / swz_v = 7, pitch a multiple of 128 bytes); granule c of row t sits at
c ^ s(t) % 8.

Checked with the kernel's s(t) = t ^ 4 (t % 2) (swz) and shown with the plain s(t) = t, per access:
  - the K/V copies' cp.async writes (issue_tile): flash layouts, tpt threads a token on consecutive
    lanes, each taking every tpt-th granule, tpt = 1, 2, 4, 8; vLLM's key cache, lanes on
    consecutive tokens of one granule;
  - the split kernel's K reads: lane l of a 32-item group takes token l % 2^tw and granule l >> tw
    (tw = tw_shift = 0..3);
  - the tensor-core kernel's fp8 K reads (S^T = K Q^T): lane (g, c) of warp w reads granule 4 j + c
    of tokens 16 w + g and 16 w + g + 8 (over vLLM's layout, of tokens 16 w + mma_tok(g) and
    16 w + mma_tok(g + 8)); at fp8 head 64's 128-token tile (flash layouts), of both M blocks m of
    the warp's 32 tokens, 32 w + 16 m + g (+ 8), in unpadded 64-byte rows; at head 96 (padded
    112-byte rows) also the half block's 8 bytes at 64 + 8 c (both 2-way: rows 112 bytes apart);
  - its fp8 V reads (8 bytes): lane (g, c) reads bytes 64 P + 8 g of token 2 c + (i % 2) + 8 (i / 2)
    (+ 16 m at the 128-token tile; head 96's half block: 4 bytes at 64 + 4 g; the quarter block of
    heads 80 and 112: K 4 bytes at b + 4 c, V 2 bytes at b + 2 g); at head 192 (padded
    208-byte rows) K as head 96's 16-byte reads (2-way) and V in each warp's 96 dims dh.. (a block
    and a half block), at their least; at head 32 (rows padded to 48 bytes) the half block alone
    (its 8-byte K reads 2-way, as head 96's);
  - that tile's copies (issue_long_tile): pass h, lane pair on token 64 h + tid / 2, granules
    tid % 2 + 2 r, into 64-byte K rows and 80-byte V rows (2 tokens x 2 granules a quarter warp
    meet a bank twice, allowed as head 96's copies); at head 32 one granule pair a token, 32-byte
    K rows and 48-byte V rows (the V copies 2-way);
  - ldmatrix (16-bit K and V): 8 lanes at 8 consecutive tokens, one granule (heads 80 and 112: the
    odd last k-step's and m-block's x4 repeats its first two matrices);
  - the tensor-core kernel's epilogue stores of its O^T fragments (rows RS floats apart; for fp8's
    permuted dims no row stride from 128 to 144 does better than 2-way, so 2 is the least there),
    and its output loop's reads of those rows (a thread per dim, two heads a pass at head 64);
  - vLLM's layout, whose values the copies keep as V^T rows (a row of the tile's T tokens per dim,
    2^rs = T esz bytes, unpadded; vt_at moves granule c of row d to c ^ s(d >> ks) inside its
    128-byte line, ks = 7 - rs below 128-byte rows, else 0): the copies (a quarter warp fills one
    line); the tensor-core kernel's readers, 16-bit by ldmatrix (8 lanes on 8 consecutive dim
    rows), fp8 by 4-byte loads (lane (g, c) at dim row 16 mb + g (+ 8) and token 4 c); the split
    kernel's P.V reads (thread tid: dim rows tid % C8 + j C8, 8 tokens from 8 mt, mt = pr + S k) at
    heads 64, 96, 128 and 256. Two kinds are 2-way at most and allowed: fp8 reads 8 bytes a lane,
    and the 16 lanes of a phase read the same half of their granules, which no granule permutation
    separates; at head 96 (C8 = 12) a quarter warp reads rows 8..11 at one token granule and rows
    0..3 at the next, which meet the same positions (the padded layout before had the same counts
    there). Where rows C8 apart keep vt_at's map (vt_same_map), the kernel adds j C8 2^rs to one
    address: checked here.
The formulas are also looked for, as written, in the sources: a changed formula fails the check
until this script follows it.

Usage: python3 scripts/decode_banks.py
"""
import os
import re
import sys

import ragged_banks  # scripts/: the same bank model

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FORMULAS = {
    "cuda/decode/decode_kernel.cuh": [
        "int swz(int b, int t, int mask, int gs) { return b ^ (((t ^ ((t & 1) << 2)) & mask) << gs); }",
        "const int t = geo.vllm_v ? tid & ((1 << lt) - 1) : tid >> geo.tpt_shift;",
        "const int u0 = geo.vllm_v ? tid >> lt : tid & (tpt - 1);",
        "const int u = u0 + r * tpt;",
        "unsigned char *dst = row + swz(u * unit, t, geo.swz_k, 4);",
        "const int dsi = l >> geo.tw_shift, tl = l & ((1 << geo.tw_shift) - 1);",
        "t = ((wi & ((1 << geo.wpg_shift) - 1)) << geo.tw_shift) + tl;",
        "load16<CT>(krow + swz(ch * 16, t, geo.swz_k, 4), kf);",
        "int vt_at(int d, int b, int rs, int ks) { return swz((d << rs) + b, d >> ks, 7, 4); }",
        "return (n << rs) % 1024 == 0 && (n >> ks) % 8 == 0;",
        "const int pair = tid & (pairs - 1), j = pair >> p.pr_shift, u = pair & ((1 << p.pr_shift) - 1);",
        "for (int d = tid >> p.pairs_shift; d < hs; d += NT >> p.pairs_shift) {",
        "unsigned char *dst = vdst0 + vt_at(d, pair * unit, geo.vt_rs, geo.vt_ks);",
        "const int pc8 = tid % C8, prest = tid / C8;",
        "const int half = tid & 1, a = (tid >> 1) + H * half, pos = t0 + a;",
        "const int t = H * h + (tid >> 1);",
        "cp_async16_or_zero(krow + swz(16 * (half + 2 * r), t, G::swz_k, 4), kc + src + 32 * r, on);",
        "cp_async16_or_zero(vrow + swz(16 * (half + 2 * r), t, G::swz_v, G::gv_shift), vc + src + 32 * r, on);",
        "const int pgg = prest % geo.pv_groups, pr = prest / geo.pv_groups;",
        "const bool vt_same = vt_same_map(C8, geo.vt_rs, geo.vt_ks);",
        "const int vt_step = C8 << geo.vt_rs;",
        "for (int mt = pr; mt < T / 8; mt += geo.pv_slices) {",
        "const int b = tl0 * esz + 16 * h;",
        "const int a0 = vt_at(pc8, b, geo.vt_rs, geo.vt_ks);",
        "va[h][j] = a0 + j * vt_step;",
        "va[h][j] = vt_at(pc8 + j * C8, b, geo.vt_rs, geo.vt_ks);",
    ],
    "cuda/decode/decode_mma.cuh": [
        "return PERM ? 4 * ((j & 7) >> 1) + 2 * (j >> 3) + (j & 1) : j;",
        "const int tr0 = tw + 16 * m + mma_tok<PERM>(g), tr1 = tw + 16 * m + mma_tok<PERM>(g + 8);",
        "lds_words(krow0 + swz(64 * j + 16 * qc, tr0, G::swz_k, 4), w0);",
        "lds_words(krow1 + swz(64 * j + 16 * qc, tr1, G::swz_k, 4), w1);",
        "vtok[i] = tw + 16 * m + 2 * qc + (i & 1) + 8 * (i >> 1);",
        "const int t = vtok[i];",
        "const unsigned char *src = vt + t * G::pitch_v + swz(dh + 64 * P + 8 * g, t, G::swz_v, 4);",
        "const unsigned char *src = vt + t * G::pitch_v + swz(dh + 64 * P + 4 * g, t, G::swz_v, 4);",
        "lds_words(krow0 + swz(64 * j + 8 * qc, tr0, G::swz_k, 4), w0);",
        "lds_words(krow1 + swz(64 * j + 8 * qc, tr1, G::swz_k, 4), w1);",
        "return i < 4 * (hd / 64) ? 64 : hd % 64 >= 32 && i < 4 * (hd / 64) + 2 ? 32 : 16;",
        "return i < 4 * (hd / 64) ? 64 * (i >> 2) : 64 * (hd / 64) + (f8_size(hd, i) == 16 && hd % 64 >= 32 ? 32 : 0);",
        "return i < 4 * (hd / 64) ? i & 3 : i - 4 * (hd / 64) - (f8_size(hd, i) == 16 && hd % 64 >= 32 ? 2 : 0);",
        "return F8 ? f8_base(HD, mb) + f8_size(HD, mb) / 8 * (r & 7) + 2 * f8_step(HD, mb) + (r >> 3) : 16 * mb + r;",
        "constexpr int b0 = f8_base(HS, KS - 1);",
        "lds_words(krow0 + swz(b0 + 4 * qc, tr0, G::swz_k, 4), w0);",
        "constexpr int b0 = f8_base(HD, MB - 1);",
        "const unsigned char *src = vt + t * G::pitch_v + swz(dh + b0 + 2 * g, t, G::swz_v, 4);",
        "const int t = tw + 8 * nb + (lane & 7);",
        "const int mk = KS % 2 != 0 && jj == KS / 2 ? (lane >> 3) & 1 : half ? min(lane >> 3, 2) : lane >> 3;",
        "const bool half = HS % 16 != 0 && jj == KS / 2 - 1;",
        "ldsm_x4(r, krow + swz(2 * (32 * jj + 8 * mk), t, G::swz_k, 4));",
        "tv[nb] = tw + 8 * nb + (lane & 7);",
        "const int mv = odd ? (lane >> 3) & 1 : half ? min(lane >> 3, 2) : lane >> 3;",
        "const bool odd = MB % 2 != 0 && jj == MB / 2, half = HD % 16 != 0 && jj == MB / 2 - 1;",
        "ldsm_x4_trans(r[nb], vrow[nb] + swz(2 * (dh + 32 * jj + 8 * mv), tv[nb], G::swz_v, 4));",
        "constexpr int T = G::tile, MT = F8 && T > 16 * NW ? T / (16 * NW) : 1;",
        "constexpr int WT = F8 ? 16 * MT : (T / NW > 8 ? T / NW : 8), NTG = T / WT, DS = NW / NTG;",
        "const int tg = warp / DS, dh = HD * (warp % DS);",
        "const int tw = WT * tg;",
        "const int tph = tw + 4 * qc;",
        "constexpr int VS = vt_same_map(16, G::vt_rs, G::vt_ks) ? 16 : 32, NVB = VS / 16;",
        "vb[v][h] = vt + vt_at(dh + 16 * v + 8 * h + g, tph, G::vt_rs, G::vt_ks);",
        "const unsigned char *s0 = vb[mb % NVB][0] + (mb / NVB) * VS * G::pitch_v,",
        "*s1 = vb[mb % NVB][1] + (mb / NVB) * VS * G::pitch_v;",
        "vrow[nb] = VL ? vt + vt_at(dh + 8 * (lane >> 3) + (lane & 7), (tw + 8 * nb) * G::esz, G::vt_rs, G::vt_ks)",
        "ldsm_x4(r[nb], (odd || half ? vrow_t[nb] : vrow[nb]) + 32 * jj * G::pitch_v);",
        "vrow_t[nb] = VL && (MB % 2 != 0 || HD % 16 != 0) ? vt + vt_at(dh + 8 * (MB % 2 != 0 ? (lane >> 3) & 1 : min(lane >> 3, 2)) + (lane & 7), (tw + 8 * nb) * G::esz,",
        "constexpr int RS = F8 && !VL ? HS + 3 : HS + 4;",
        "const int h = MMA_ROWS * b + 2 * qc + (i & 1), d = dh + pv_dim<PERM_D, HD>(mb, g + 8 * (i >> 1));",
        "red[(tg * NHC + h) * RS + d] = acc[mb][b][i] * fac[b][i & 1];",
        "constexpr int HP = HS < NT ? NT / HS : 1, DPT = HS > NT ? (HS + NT - 1) / NT : 1;",
        "if (HS % NT != 0 && HS > NT && d0 + k * NT >= HS)",
        "const int hp = HS < NT ? tid / HS : 0, d0 = tid - hp * HS;",
        "const int h = hp + HP * i;",
        "s += red[(w * NHC + h) * RS + d0 + k * NT];",
    ],
}


def kernel_s(t):
    return (t ^ ((t & 1) << 2)) & 7


def plain_s(t):
    return t & 7


def place(s, t, granule, byte=0, pitch=256):
    """Byte address of `byte` in logical granule `granule` of row t (rows `pitch` bytes apart)."""
    return t * pitch + (((granule & ~7) | ((granule & 7) ^ s(t))) << 4) + byte


def copies(s, tpt, units=16, pitch=256):
    """issue_tile's flash-layout copies: lane l -> token l / tpt, granules l % tpt + tpt r (a last
    partial pass where tpt does not divide the units: heads 80 and 112, its idle lanes left out)."""
    out = []
    for r in range(-(-units // tpt)):
        for w in range(4):
            addrs = [place(s, (32 * w + l) // tpt, (32 * w + l) % tpt + tpt * r, pitch=pitch)
                     if (32 * w + l) % tpt + tpt * r < units else None for l in range(32)]
            out.append(waves(addrs, 16))
    return out


def long_copies(pitch, units=4):
    """issue_long_tile's copies (fp8 heads 64 and 32 (units 2), 128-token tiles, no swizzle): lane l
    of warp w, tid = 32 w + l, pass h -> token 64 h + tid / 2, granule tid % 2 + 2 r."""
    return [ragged_banks.wavefronts([place(no_s, 64 * h + (32 * w + l) // 2, l % 2 + 2 * r, pitch=pitch)
                                     for l in range(32)], 16)
            for h in range(2) for r in range(units // 2) for w in range(4)]


def vllm_key_copies(s, T=32, units=16, pitch=256):
    """vLLM's key cache: lane l -> token l % T, granule l / T + (128 / T) r (128 threads; a last
    partial pass at heads 80 and 112, its idle lanes left out)."""
    out = []
    for r in range(-(-units * T // 128)):
        for w in range(4):
            addrs = [place(s, (32 * w + l) % T, (32 * w + l) // T + (128 // T) * r, pitch=pitch)
                     if (32 * w + l) // T + (128 // T) * r < units else None for l in range(32)]
            if any(a is not None for a in addrs):
                out.append(waves(addrs, 16))
    return out


def split_k_reads(s, tw, chunks=16):
    """The split kernel's logits: lane l reads granule (l >> tw) + ds r of token l % 2^tw."""
    ds = 32 >> tw
    out = []
    for r in range((chunks + ds - 1) // ds):
        out.append(ragged_banks.wavefronts(
            [place(s, l & ((1 << tw) - 1), ((l >> tw) + ds * r) % chunks) for l in range(32)], 16))
    return out


def mma_tok(j, perm):
    """decode_mma.cuh's mma_tok: S^T's row j -> the warp's token (fp8 over vLLM's layout: permuted)."""
    return 4 * ((j & 7) >> 1) + 2 * (j >> 3) + (j & 1) if perm else j


def no_s(t):
    return 0


def f8_rows(s, hs, pitch64=80, pitch=None):
    """fp8 K / flash V rows of the tensor-core kernel: heads 128 and 256 swizzled rows of hs bytes;
    head 64 rows without a swizzle (4 granules: G::swz_k = G::swz_v = 0), pitch64 bytes apart:
    dec_geometry's padded 80, or the long tile's unpadded 64-byte K rows; heads 96 and 192
    dec_geometry's padded 112 and 208 (7 and 13 granules, no swizzle), head 32 its padded 48 (3);
    pitch: rows of that many bytes, no swizzle (head 32's long tile: unpadded 32-byte K rows)."""
    if pitch is not None:
        return no_s, pitch
    if hs % 128 == 0:
        return s, hs
    return {96: (no_s, 112), 192: (no_s, 208), 80: (no_s, 80), 112: (no_s, 112), 32: (no_s, 48)}.get(hs, (no_s, pitch64))


def mma_hd(hs):
    """P.V's dims a warp (HD): the head's, or half of them at heads 192 and 256 (two warps a token
    group)."""
    return hs if hs <= 128 else hs // 2


def f8_size(hd, i):
    """decode_mma.cuh's f8_size: the dims of the fp8 block holding k-step (m-block) i of a warp's hd
    dims: 64, then a half block of 32 (hd % 64 >= 32), then a quarter of 16 (hd % 32 == 16)."""
    return 64 if i < 4 * (hd // 64) else 32 if hd % 64 >= 32 and i < 4 * (hd // 64) + 2 else 16


def f8_base(hd, i):
    q = f8_size(hd, i) == 16 and hd % 64 >= 32
    return 64 * (i >> 2) if i < 4 * (hd // 64) else 64 * (hd // 64) + (32 if q else 0)


def f8_step(hd, i):
    q = f8_size(hd, i) == 16 and hd % 64 >= 32
    return i & 3 if i < 4 * (hd // 64) else i - 4 * (hd // 64) - (2 if q else 0)


def f8_blocks(hd):
    """The fp8 blocks of hd dims: [(first dim, size)]."""
    out = []
    for i in range(hd // 16):
        if f8_step(hd, i) == 0:
            out.append((f8_base(hd, i), f8_size(hd, i)))
    return out


def waves(addrs, width):
    """ragged_banks.wavefronts, with idle lanes (None: phase_wavefronts) and 2-byte accesses (32
    lanes a phase, a word's two halves one word)."""
    if width != 2:
        return phase_wavefronts(addrs, width)[0] if None in addrs else ragged_banks.wavefronts(addrs, width)
    banks = {}
    for a in addrs:
        banks.setdefault(a // 4 % 32, set()).add(a // 4)
    return max(len(v) for v in banks.values())


def mma_groups(hs, esz):
    """The tensor-core kernel's token groups: (tokens per group WT, groups NTG) of a tile of T tokens
    (dec_geometry's: 8 KiB of K, 6 at heads 96 and 192); at heads 192 and 256 two warps share a group
    and split P.V's dims."""
    T, _ = vt_geometry(hs, esz)
    WT = 16 if esz == 1 else max(8, T // 4)
    return WT, T // WT


def mma_f8_k(s, perm=False, hs=128, mt=1, pitch64=80, half_block=None, sizes=None, pitch=None):
    """Token group tg (tw = 16 mt tg), M block m < mt (two at fp8 head 64's 128-token tile), lane
    (g, c) = (l >> 2, l & 3): granule 4 j + c of token tw + 16 m + mma_tok(g) (krow0) and tw + 16 m +
    mma_tok(g + 8) (krow1), j < hs / 64; a half block's 8 bytes at b + 8 c of both (heads 96, 112),
    a quarter block's 4 at b + 4 c (heads 80, 112). sizes: the block sizes to check (half_block True:
    {32}, False: {64})."""
    s, pitch = f8_rows(s, hs, pitch64, pitch)
    if half_block is not None:
        sizes = {32} if half_block else {64}
    out = []
    for w in range(mma_groups(hs, 1)[1] // mt):
        for m in range(mt):
            for half in range(2):
                tok = lambda l: 16 * (mt * w + m) + mma_tok((l >> 2) + 8 * half, perm)
                for base, size in f8_blocks(hs):
                    if sizes is not None and size not in sizes:
                        continue
                    span = size // 4
                    out.append(waves([place(s, tok(l), (base + span * (l & 3)) >> 4, (base + span * (l & 3)) & 15,
                                            pitch=pitch) for l in range(32)], span))
    return out


def mma_f8_v(s, hs=128, mt=1, half_block=None, sizes=None):
    """Lane (g, c) of the warp with dims dh.. reads 8 bytes at dh + 64 P + 8 g of token 16 m + 2 c +
    (i % 2) + 8 (i / 2) of the warp's, m < mt; a half block of 32 dims (head 96's last, each warp's
    last at head 192, head 112's second) 4 bytes at dh + b + 4 g, a quarter block of 16 (heads 80
    and 112) 2 bytes at dh + b + 2 g (sizes, half_block: as mma_f8_k's)."""
    s, pitch = f8_rows(s, hs)
    hd = mma_hd(hs)
    if half_block is not None:
        sizes = {32} if half_block else {64}
    out = []
    for dh in range(0, hs, hd):
        for m in range(mt):
            for base, size in f8_blocks(hd):
                if sizes is not None and size not in sizes:
                    continue
                span = size // 8
                for i in range(4):
                    addrs = []
                    for l in range(32):
                        g, c = l >> 2, l & 3
                        t = 16 * m + 2 * c + (i & 1) + 8 * (i >> 1)
                        b = dh + base + span * g
                        addrs.append(place(s, t, b >> 4, b & 15, pitch=pitch))
                    out.append(waves(addrs, span))
    return out


def rows16(s, hs):
    """16-bit K / flash V rows: hs * 2 bytes swizzled (8k granules), else dec_geometry's padded rows of
    an odd number of granules, no swizzle (head 96: 208 bytes)."""
    g = 2 * hs // 16
    return (s, 2 * hs) if g % 8 == 0 else (no_s, 16 * (g + 1 if g % 2 == 0 else g))


def ldmatrix(s, hs=128):
    """16-bit K (ldmatrix) and flash V (ldmatrix.trans) rows of hs * 2 bytes (head 96: padded):
    n-block nb's 8-lane matrix m reads tokens 8 nb + 0..7 at granule 4 jj + m (one n-block at heads
    96, 128 and 256, two at 64; the V reads of head 256's two warps a group cover the jj of their
    dims)."""
    s, pitch = rows16(s, hs)
    out = []
    for nb in range(mma_groups(hs, 2)[0] // 8):
        for jj in range(-(-hs // 32)):
            # an odd last k-step or m-block (heads 80, 112): matrices 2 and 3 repeat 0 and 1
            # a last k-step or m-block of 8 dims (head 120): matrix 3 repeats 2
            mat = ((lambda l: (l >> 3) & 1) if 32 * jj + 16 >= hs else
                   (lambda l: min(l >> 3, 2)) if 32 * jj + 24 == hs else (lambda l: l >> 3))
            out.append(ragged_banks.wavefronts(
                [place(s, 8 * nb + (l & 7), 4 * jj + mat(l), pitch=pitch) for l in range(32)], 16))
    return out


def pv_dim(f8, mb, r, hd=128):
    """decode_mma.cuh's pv_dim: the dim of P.V's m-block mb, row r, of a warp's hd dims (fp8 flash:
    permuted)."""
    return f8_base(hd, mb) + f8_size(hd, mb) // 8 * (r & 7) + 2 * f8_step(hd, mb) + (r >> 3) if f8 else 16 * mb + r


def epilogue_stores(f8, rs, hs=128, hb=1):
    """The epilogue's stores of the warps' O^T fragments: lane (g, c), element i of m-block mb,
    head block b -> float (8 b + 2 c + (i & 1)) rs + dh + pv_dim(mb, g + 8 (i >> 1)); dh = 0, or 0
    and 128 at head 256 (the two warps of a token group, 8 m-blocks each; 0 and 96 at head 192, 6);
    b < hb (two head blocks: CTAs of 9..16 query heads at heads 64, 128 and 192)."""
    hd = mma_hd(hs)
    return [ragged_banks.wavefronts([4 * ((8 * b + 2 * (l & 3) + (i & 1)) * rs + dh +
                                          pv_dim(f8, mb, (l >> 2) + 8 * (i >> 1), hd)) for l in range(32)], 4)
            for dh in range(0, hs, hd) for mb in range(-(-hd // 16)) for b in range(hb) for i in range(4)
            if hd % 16 == 0 or mb < hd // 16 or i < 2]  # (head 120: m-block 7's rows 8..15, dims 120.., none)


def epilogue_output_reads(rs, hs=128, hb=1, ntg=4):
    """The output loop's reads of those rows: thread tid (warp w, lane l) takes dim d0 = tid % hs
    (and d0 + 128 at head 256, and at head 192 where it is under 192) of head slots hp + HP i (hp =
    tid / hs, HP = 128 / hs heads a pass below head 128, else 1; threads with hp >= HP idle: head
    96's last warp), float (g NHC + h) rs + d0 + 128 k of each token group g. -> [(wavefronts,
    least)] per warp access."""
    nt, nhc = 128, 8 * hb
    hp_n, dpt = (nt // hs if hs < nt else 1), max(1, -(-hs // nt))
    out = []
    for w in range(nt // 32):
        for i in range(nhc // hp_n):
            for k in range(dpt):
                for g in range(ntg):
                    addrs = []
                    for l in range(32):
                        tid = 32 * w + l
                        hp = tid // hs if hs < nt else 0
                        d0 = tid - hp * hs
                        live = hp < hp_n and d0 + k * nt < hs
                        addrs.append(4 * ((g * nhc + hp + hp_n * i) * rs + d0 + k * nt) if live else None)
                    if any(a is not None for a in addrs):
                        out.append(phase_wavefronts(addrs, 4))
    return out


def phase_wavefronts(addrs, width):
    """ragged_banks.wavefronts with idle lanes (None) left out of their phase (a phase's live
    addresses, repeated to 32 lanes, give each of the 32 / per phases the same count), and the
    least: each phase's live bytes / 128, rounded up. -> (wavefronts, least)"""
    per = {16: 8, 8: 16, 4: 32}[width]
    total = least = 0
    for p in range(0, 32, per):
        live = [a for a in addrs[p:p + per] if a is not None]
        if live:
            total += ragged_banks.wavefronts((live * 32)[:32], width) // (32 // per)
            least += -(-len(live) * width // 128)
    return total, least


def vt_ks(rs):
    return 0 if rs >= 7 else 7 - rs


def vt_at(s, d, b, rs):
    """decode_kernel.cuh's vt_at: byte b of V^T row d (rows 2^rs bytes), granule moved by s(d >> ks)."""
    return ((d << rs) + b) ^ (s(d >> vt_ks(rs)) << 4)


def vt_same_map(n, rs):
    return (n << rs) % 1024 == 0 and (n >> vt_ks(rs)) % 8 == 0


def pow2_floor(v):
    r = 1
    while r <= v // 2:
        r *= 2
    return r


def vt_geometry(hs, esz):
    """dec_geometry's tile and V^T row for head hs, esz-byte elements: (T, rs)."""
    T = min(max(pow2_floor(8192 // (hs * esz)), 8), 64)
    return T, (T * esz).bit_length() - 1


def vllm_v_copies(s, rs, hs=128, unit=16):
    """issue_tile's value copies: thread tid -> row tid >> pairs_shift (+ 128 / pairs a round),
    byte pair * unit, pair = tid % pairs, pairs = 2^rs / unit (a last partial round at heads 80 and
    112: rows under hs, the other lanes left out)."""
    pairs = (1 << rs) // unit
    out = []
    for r in range(-(-hs * pairs // 128)):
        for w in range(4):
            rows = [(32 * w + l) // pairs + (128 // pairs) * r for l in range(32)]
            addrs = [vt_at(s, d, ((32 * w + l) % pairs) * unit, rs) if d < hs else None for l, d in enumerate(rows)]
            if any(a is not None for a in addrs):
                out.append(waves(addrs, unit))
    return out


def vllm_v_ldmatrix(s, hs=128):
    """16-bit (head 128: T 32, 64-byte rows; head 64: T 64, 128-byte rows, two n-blocks; head 256: T
    16, 32-byte rows, two warps a token group): token group tg's lane l -> row 32 jj + 8 (l >> 3) +
    (l & 7) (dh + ..: the jj of the warp's dims), byte (WT tg + 8 nb) 2."""
    T, rs = vt_geometry(hs, 2)
    WT, ntg = mma_groups(hs, 2)
    assert vt_same_map(32, rs)  # the kernel's static_assert: one address per n-block
    # an odd last m-block (heads 80, 112); one of 8 dims (head 120): matrix 3 repeats 2
    mat = lambda jj, l: (l >> 3) & 1 if 32 * jj + 16 >= hs else min(l >> 3, 2) if 32 * jj + 24 == hs else l >> 3
    return [ragged_banks.wavefronts([vt_at(s, 32 * jj + 8 * mat(jj, l) + (l & 7), (WT * tg + 8 * nb) * 2, rs)
                                     for l in range(32)], 16)
            for tg in range(ntg) for nb in range(WT // 8) for jj in range(-(-hs // 32))]


def vllm_v_f8(s, hs=128):
    """fp8 (T 64, 64-byte rows; head 256: T 32, 32-byte rows): token group tg's lane (g, c) -> rows
    16 mb + g (+ 8) (dh + ..: the warp's dims), byte 16 tg + 4 c. The kernel keeps VS / 16 address
    pairs, VS the least of 16 and 32 whose rows keep the map (vt_same_map)."""
    T, rs = vt_geometry(hs, 1)
    vs = 16 if vt_same_map(16, rs) else 32
    assert vt_same_map(vs, rs)
    return [ragged_banks.wavefronts([vt_at(s, 16 * mb + 8 * half + (l >> 2), 16 * tg + 4 * (l & 3), rs)
                                     for l in range(32)], 4)
            for tg in range(mma_groups(hs, 1)[1]) for mb in range(hs // 16) for half in range(2)]


def vllm_v_split(s, hs, esz, group=4):
    """The split kernel's P.V reads: thread tid -> pc8 = tid % C8, pr = tid / C8 / NG; row pc8 + j C8,
    bytes 8 esz mt (+ 16: fp32's second granule), mt = pr + S k < T / 8; 8 esz bytes (fp32: two 16)."""
    T, rs = vt_geometry(hs, esz)
    C8, ng = hs // 8, (group + 3) // 4
    S, width = 128 // (ng * C8), min(16, 8 * esz)
    out = []
    for w in range(4):
        for k in range((T // 8 + S - 1) // S):
            for j in range(8):
                for h in range(2 if esz == 4 else 1):
                    addrs = []
                    for l in range(32):
                        tid = 32 * w + l
                        pc8, mt = tid % C8, (tid // C8) // ng + k * S
                        a = vt_at(s, pc8 + j * C8, 8 * mt * esz + 16 * h, rs) if mt < T // 8 else None
                        if a is not None and vt_same_map(C8, rs) and s is kernel_s:
                            assert a == vt_at(s, pc8, 8 * mt * esz + 16 * h, rs) + (j * C8 << rs), (hs, esz)
                        addrs.append(a)
                    if any(a is not None for a in addrs):
                        out.append(phase_wavefronts(addrs, width))
    return out


def missing_formulas():
    norm = lambda x: re.sub(r"\s+", "", x)
    miss = []
    for path, fs in FORMULAS.items():
        src = norm(open(os.path.join(ROOT, path)).read())
        miss += ["%s: %s" % (path, f) for f in fs if norm(f) not in src]
    return miss


def main():
    bad = []
    checks = [("flash copies, %d threads a token" % tpt, (lambda s, tpt=tpt: copies(s, tpt)), 4)
              for tpt in (1, 2, 4, 8)]
    checks.append(("vLLM key copies, lanes on tokens", vllm_key_copies, 4))
    checks += [("split kernel K reads, tw_shift %d" % tw, (lambda s, tw=tw: split_k_reads(s, tw)), 4)
               for tw in range(4)]
    checks += [("tensor-core fp8 K reads", mma_f8_k, 4),
               ("tensor-core fp8 K reads, vLLM's layout (rows permuted)", lambda s: mma_f8_k(s, True), 4),
               ("tensor-core fp8 V reads (8 B)", mma_f8_v, 2),
               ("ldmatrix K / V^T rows", ldmatrix, 4)]
    # head 64 over vLLM's layout: fp8's padded 80-byte K rows meet a bank twice in a quarter warp (as the
    # split kernel's); flash layouts take the 128-token tile (below)
    checks += [("tensor-core fp8 K reads, head 64, vLLM's layout (2-way allowed)", lambda s: mma_f8_k(s, True, hs=64), 8),
               ("tensor-core fp8 V reads (8 B), head 64", lambda s: mma_f8_v(s, hs=64), 2),
               # the long tile (flash layouts): unpadded 64-byte K rows, two M blocks a warp
               ("tensor-core fp8 K reads, head 64, 128-token tile (64-byte rows)",
                lambda s: mma_f8_k(s, hs=64, mt=2, pitch64=64), 4),
               ("tensor-core fp8 V reads (8 B), head 64, 128-token tile", lambda s: mma_f8_v(s, hs=64, mt=2), 2),
               # its copies: 2 tokens x 2 granules a quarter warp meet a bank twice (as head 96's)
               ("long-tile K copies, 64-byte rows (2-way allowed)", lambda s: long_copies(64), 8),
               ("long-tile V copies, 80-byte rows (2-way allowed)", lambda s: long_copies(80), 8),
               ("ldmatrix K / V^T rows, head 64 (two n-blocks)", lambda s: ldmatrix(s, hs=64), 4),
               ("tensor-core fp8 K reads, head 256", lambda s: mma_f8_k(s, hs=256), 4),
               ("tensor-core fp8 K reads, head 256, vLLM's layout", lambda s: mma_f8_k(s, True, hs=256), 4),
               ("tensor-core fp8 V reads (8 B), head 256", lambda s: mma_f8_v(s, hs=256), 2),
               ("ldmatrix K / V^T rows, head 256", lambda s: ldmatrix(s, hs=256), 4)]
    # head 96, 16-bit caches: padded 208-byte rows (13 granules, no swizzle); the loader's copies
    # (shared with the split kernel) meet a bank twice in a quarter warp there: 2 tokens x 4 granules
    checks += [("ldmatrix K / V^T rows, head 96 (208-byte rows)", lambda s: ldmatrix(s, hs=96), 4),
               ("vLLM V^T ldmatrix, 16-bit, head 96 (tensor cores)", lambda s: vllm_v_ldmatrix(s, 96), 4),
               ("epilogue O^T stores, head 96, 16-bit (row stride 100)", lambda s: epilogue_stores(False, 100, 96), 1),
               ("flash copies, head 96, 4 threads a token (208-byte rows; 2-way allowed)",
                lambda s: copies(no_s, 4, 12, 208), 8)]
    # head 96, fp8 caches: padded 112-byte rows (7 granules, no swizzle). A quarter warp's 16-byte K
    # reads take 64 bytes of two tokens (rows 112 bytes apart: they meet in 12 banks) and a half
    # warp's 8-byte reads of the half block 32 bytes of four: 2-way at most, which no pitch below
    # 192 bytes avoids for both; the V reads (8 and 4 bytes) take their least
    checks += [("tensor-core fp8 K reads, head 96 (112-byte rows; 2-way allowed)",
                lambda s: mma_f8_k(s, hs=96, half_block=False), 8),
               ("tensor-core fp8 K reads (8 B), head 96's half block (2-way allowed)",
                lambda s: mma_f8_k(s, hs=96, half_block=True), 4),
               ("tensor-core fp8 K reads, head 96, vLLM's layout (2-way allowed)",
                lambda s: mma_f8_k(s, True, hs=96, half_block=False), 8),
               ("tensor-core fp8 K reads (8 B), head 96's half block, vLLM's layout (2-way allowed)",
                lambda s: mma_f8_k(s, True, hs=96, half_block=True), 4),
               ("tensor-core fp8 V reads (8 B), head 96", lambda s: mma_f8_v(s, hs=96, half_block=False), 2),
               ("tensor-core fp8 V reads (4 B), head 96's half block", lambda s: mma_f8_v(s, hs=96, half_block=True), 1),
               ("vLLM V^T 4-byte reads, fp8, head 96 (tensor cores)", lambda s: vllm_v_f8(s, 96), 1),
               ("epilogue O^T stores, head 96, fp8 flash (row stride 99)", lambda s: epilogue_stores(True, 99, 96), 2),
               ("flash copies, head 96, fp8, 2 threads a token (112-byte rows; 2-way allowed)",
                lambda s: copies(no_s, 2, 6, 112), 8)]
    # head 192: 16-bit rows of 384 bytes (24 granules) swizzled, 16-token tiles; fp8 rows of 192 bytes
    # padded to 208 (13 granules, no swizzle; 32-token tiles): the 16-byte K reads take 64 bytes of two
    # tokens 208 bytes apart (2-way, as head 96's); two warps a token group, 96 dims each for P.V
    # (fp8: a 64-dim block and a half block, its own dims dh..), the V reads at their least
    checks += [("ldmatrix K / V^T rows, head 192", lambda s: ldmatrix(s, hs=192), 4),
               ("vLLM V^T ldmatrix, 16-bit, head 192 (tensor cores)", lambda s: vllm_v_ldmatrix(s, 192), 4),
               ("flash copies, head 192, 8 threads a token", lambda s: copies(s, 8, 24, 384), 4),
               ("vLLM key copies, head 192, 16-bit", lambda s: vllm_key_copies(s, 16, 24, 384), 4),
               ("epilogue O^T stores, head 192, 16-bit (row stride 196)", lambda s: epilogue_stores(False, 196, 192), 1),
               ("epilogue O^T stores, head 192, two head blocks, 16-bit (row stride 196)",
                lambda s: epilogue_stores(False, 196, 192, 2), 1),
               ("tensor-core fp8 K reads, head 192 (208-byte rows; 2-way allowed)", lambda s: mma_f8_k(s, hs=192), 8),
               ("tensor-core fp8 K reads, head 192, vLLM's layout (2-way allowed)",
                lambda s: mma_f8_k(s, True, hs=192), 8),
               ("tensor-core fp8 V reads (8 B), head 192", lambda s: mma_f8_v(s, hs=192, half_block=False), 2),
               ("tensor-core fp8 V reads (4 B), head 192's half blocks", lambda s: mma_f8_v(s, hs=192, half_block=True),
                1),
               ("vLLM V^T 4-byte reads, fp8, head 192 (tensor cores)", lambda s: vllm_v_f8(s, 192), 1),
               ("epilogue O^T stores, head 192, fp8 flash (row stride 195)", lambda s: epilogue_stores(True, 195, 192), 2),
               ("epilogue O^T stores, head 192, two head blocks, fp8 flash (row stride 195)",
                lambda s: epilogue_stores(True, 195, 192, 2), 2),
               ("flash copies, head 192, fp8, 4 threads a token (208-byte rows; 2-way allowed)",
                lambda s: copies(no_s, 4, 12, 208), 8),
               ("vLLM key copies, head 192, fp8 (208-byte rows)", lambda s: vllm_key_copies(no_s, 32, 12, 208), 4)]
    # heads 80 and 112, 16-bit caches: padded 176- and 240-byte rows (11 and 15 granules, no swizzle),
    # 32-token tiles; an odd last k-step and m-block (x4's second pair repeats the first); the copies'
    # last pass to the first units % 4 threads of a token (2-way allowed, as head 96's); vLLM's V^T
    # rows of 64 bytes, a last pass of the first 16 dims. Head 120 likewise: unpadded 240-byte rows (15
    # granules), a last k-step and m-block of 8 dims (x4's fourth matrix repeats the third), its 120
    # V^T rows a last pass of 24
    for hs, pitch in ((80, 176), (112, 240), (120, 240)):
        checks += [("ldmatrix K / V^T rows, head %d (%d-byte rows)" % (hs, pitch), lambda s, hs=hs: ldmatrix(s, hs=hs), 4),
                   ("vLLM V^T ldmatrix, 16-bit, head %d (tensor cores)" % hs, lambda s, hs=hs: vllm_v_ldmatrix(s, hs), 4),
                   ("epilogue O^T stores, head %d, 16-bit (row stride %d)" % (hs, hs + 4),
                    lambda s, hs=hs: epilogue_stores(False, hs + 4, hs), 1),
                   ("flash copies, head %d, 4 threads a token (%d-byte rows; 2-way allowed)" % (hs, pitch),
                    lambda s, hs=hs, pitch=pitch: copies(no_s, 4, hs // 8, pitch), 8),
                   ("vLLM key copies, head %d, 16-bit (%d-byte rows)" % (hs, pitch),
                    lambda s, hs=hs, pitch=pitch: vllm_key_copies(no_s, 32, hs // 8, pitch), 4),
                   ("vLLM V^T copies, head %d, 64-byte rows" % hs, lambda s, hs=hs: vllm_v_copies(s, 6, hs), 4)]
    # heads 80 and 112, fp8 caches: unpadded 80- and 112-byte rows (5 and 7 granules), 64-token tiles; a
    # quarter block of 16 dims after the full (and at 112 the half) block
    for hs in (80, 112):
        checks += [("tensor-core fp8 K reads (16 B), head %d (2-way allowed)" % hs,
                    lambda s, hs=hs: mma_f8_k(s, hs=hs, sizes={64}), 8),
                   ("tensor-core fp8 K reads (4 B), head %d's quarter block" % hs,
                    lambda s, hs=hs: mma_f8_k(s, hs=hs, sizes={16}), 1),
                   ("tensor-core fp8 K reads, head %d, vLLM's layout (2-way allowed)" % hs,
                    lambda s, hs=hs: mma_f8_k(s, True, hs=hs, sizes={64}), 8),
                   # (vLLM's permuted rows: tokens 0, 1, 4, 5, .. of 80 or 112 bytes meet a bank twice)
                   ("tensor-core fp8 K reads (4 B), head %d's quarter block, vLLM's layout (2-way allowed)" % hs,
                    lambda s, hs=hs: mma_f8_k(s, True, hs=hs, sizes={16}), 2),
                   ("tensor-core fp8 V reads (8 B), head %d" % hs, lambda s, hs=hs: mma_f8_v(s, hs=hs, sizes={64}), 2),
                   ("tensor-core fp8 V reads (2 B), head %d's quarter block" % hs,
                    lambda s, hs=hs: mma_f8_v(s, hs=hs, sizes={16}), 1),
                   ("vLLM V^T 4-byte reads, fp8, head %d (tensor cores)" % hs, lambda s, hs=hs: vllm_v_f8(s, hs), 1),
                   # the quarter block's 4 stores a lane are 3-way at every odd stride (its dims 2 g
                   # apart put 32 lanes on 16 banks; only strides of 8 mod 16 pair them, which put the
                   # full blocks' stores 8-way): once a CTA, allowed
                   ("epilogue O^T stores, head %d, fp8 flash (row stride %d; the quarter block 3-way)" % (hs, hs + 3),
                    lambda s, hs=hs: epilogue_stores(True, hs + 3, hs), 3),
                   ("flash copies, head %d, fp8, 2 threads a token (%d-byte rows; 2-way allowed)" % (hs, hs),
                    lambda s, hs=hs: copies(no_s, 2, hs // 16, hs), 8),
                   ("vLLM key copies, head %d, fp8 (%d-byte rows)" % (hs, hs),
                    lambda s, hs=hs: vllm_key_copies(no_s, 64, hs // 16, hs), 4)]
    checks += [("tensor-core fp8 K reads (8 B), head 112's half block (2-way allowed)",
                lambda s: mma_f8_k(s, hs=112, sizes={32}), 4),
               ("tensor-core fp8 V reads (4 B), head 112's half block", lambda s: mma_f8_v(s, hs=112, sizes={32}), 1)]
    # head 32: 16-bit 64-token tiles, rows of 64 bytes padded to 80 (5 granules), two n-blocks a warp
    # and one ldmatrix x4 pair, the copies 2 threads a token (2-way allowed, as head 96's); fp8 a half
    # block alone (8 K bytes a lane, 4 V bytes a token): on flash layouts head 64's 128-token tile
    # (K rows unpadded 32 bytes, V rows padded to 48: the V copies 2-way, as head 64's 80-byte ones),
    # over vLLM's layout 64-token tiles of 48-byte rows (a half warp's 4 permuted tokens 0, 1, 4, 5
    # meet a bank twice: 2-way allowed)
    checks += [("ldmatrix K / V^T rows, head 32 (80-byte rows)", lambda s: ldmatrix(s, hs=32), 4),
               ("vLLM V^T ldmatrix, 16-bit, head 32 (tensor cores)", lambda s: vllm_v_ldmatrix(s, 32), 4),
               ("epilogue O^T stores, head 32, 16-bit (row stride 36)", lambda s: epilogue_stores(False, 36, 32), 1),
               ("flash copies, head 32, 2 threads a token (80-byte rows; 2-way allowed)",
                lambda s: copies(no_s, 2, 4, 80), 8),
               ("vLLM key copies, head 32, 16-bit (80-byte rows)", lambda s: vllm_key_copies(no_s, 64, 4, 80), 4),
               ("vLLM V^T copies, head 32, 16-bit, 128-byte rows", lambda s: vllm_v_copies(s, 7, 32), 4),
               ("tensor-core fp8 K reads (8 B), head 32, 128-token tile (32-byte rows)",
                lambda s: mma_f8_k(s, hs=32, mt=2, sizes={32}, pitch=32), 2),
               ("tensor-core fp8 K reads (8 B), head 32, vLLM's layout (2-way allowed)",
                lambda s: mma_f8_k(s, True, hs=32, sizes={32}), 4),
               ("tensor-core fp8 V reads (4 B), head 32, 128-token tile (48-byte rows)",
                lambda s: mma_f8_v(s, hs=32, mt=2, sizes={32}), 1),
               ("tensor-core fp8 V reads (4 B), head 32, vLLM's layout's 64-token tile",
                lambda s: mma_f8_v(s, hs=32, sizes={32}), 1),
               ("vLLM V^T 4-byte reads, fp8, head 32 (tensor cores)", lambda s: vllm_v_f8(s, 32), 1),
               ("epilogue O^T stores, head 32, fp8 flash (row stride 35)", lambda s: epilogue_stores(True, 35, 32), 2),
               ("long-tile K copies, head 32, 32-byte rows", lambda s: long_copies(32, 2), 4),
               ("long-tile V copies, head 32, 48-byte rows (2-way allowed)", lambda s: long_copies(48, 2), 8),
               ("vLLM key copies, head 32, fp8 (48-byte rows)", lambda s: vllm_key_copies(no_s, 64, 2, 48), 4),
               ("vLLM V^T copies, head 32, fp8, 64-byte rows", lambda s: vllm_v_copies(s, 6, 32), 4)]
    checks += [("epilogue O^T stores, 16-bit dims (row stride 132)", lambda s: epilogue_stores(False, 132), 1),
               ("epilogue O^T stores, fp8 flash dims (row stride 131)", lambda s: epilogue_stores(True, 131), 2),
               ("epilogue O^T stores, head 64, 16-bit (row stride 68)", lambda s: epilogue_stores(False, 68, 64), 1),
               ("epilogue O^T stores, head 64, fp8 flash (row stride 67)", lambda s: epilogue_stores(True, 67, 64), 2),
               ("epilogue O^T stores, head 64, two head blocks, 16-bit (row stride 68)",
                lambda s: epilogue_stores(False, 68, 64, 2), 1),
               ("epilogue O^T stores, head 64, two head blocks, fp8 flash (row stride 67)",
                lambda s: epilogue_stores(True, 67, 64, 2), 2),
               ("epilogue O^T stores, head 256, 16-bit (row stride 260)", lambda s: epilogue_stores(False, 260, 256), 1),
               ("epilogue O^T stores, head 256, fp8 flash (row stride 259)", lambda s: epilogue_stores(True, 259, 256), 2),
               ("epilogue O^T stores, two head blocks, 16-bit (row stride 132)",
                lambda s: epilogue_stores(False, 132, 128, 2), 1),
               ("epilogue O^T stores, two head blocks, fp8 flash (row stride 131)",
                lambda s: epilogue_stores(True, 131, 128, 2), 2)]
    # the output loop's reads of the merged rows (thread-per-dim: any row stride is conflict-free;
    # head 64 covers two heads a pass, head 96 leaves its last warp idle)
    outs = [("epilogue output reads, head %d%s (row stride %d)" % (hs, ", two head blocks" if hb > 1 else "", rs),
             hs, hb, rs) for hs, hb, rs in ((128, 1, 131), (128, 1, 132), (128, 2, 131), (64, 1, 67), (64, 1, 68), (64, 2, 67), (64, 2, 68),
                                            (96, 1, 99), (96, 1, 100), (256, 1, 259), (256, 1, 260),
                                            (192, 1, 195), (192, 1, 196), (192, 2, 195), (192, 2, 196),
                                            (80, 1, 84), (112, 1, 116), (80, 1, 83), (112, 1, 115),
                                            (32, 1, 35), (32, 1, 36), (120, 1, 124))]
    checks += [("vLLM V^T copies, %d-byte rows" % (1 << rs), (lambda s, rs=rs: vllm_v_copies(s, rs)), 4)
               for rs in (5, 6, 7, 8)]
    checks += [("vLLM V^T ldmatrix, 16-bit (tensor cores)", vllm_v_ldmatrix, 4),
               ("vLLM V^T 4-byte reads, fp8 (tensor cores)", vllm_v_f8, 1),
               ("vLLM V^T ldmatrix, 16-bit, head 64 (tensor cores)", lambda s: vllm_v_ldmatrix(s, 64), 4),
               ("vLLM V^T 4-byte reads, fp8, head 64 (tensor cores)", lambda s: vllm_v_f8(s, 64), 1),
               ("vLLM V^T ldmatrix, 16-bit, head 256 (tensor cores)", lambda s: vllm_v_ldmatrix(s, 256), 4),
               ("vLLM V^T 4-byte reads, fp8, head 256 (tensor cores)", lambda s: vllm_v_f8(s, 256), 1)]
    # the split kernel: per access, at most `allowed` times its least (the 2-way cases: see the header)
    splits = [(hs, esz, 2 if esz == 1 or hs == 96 else 1) for hs, esz in
              ((64, 2), (128, 2), (256, 2), (96, 2), (128, 4), (64, 1), (128, 1), (256, 1), (96, 1))]
    print("| access | s(t) = t ^ 4 (t % 2) (kernel) | s(t) = t | least |")
    print("| --- | --- | --- | --- |")
    for name, f, least in checks:
        k, p = f(kernel_s), f(plain_s)
        print("| %s | %.2f | %.2f | %d |" % (name, sum(k) / len(k), sum(p) / len(p), least))
        if max(k) > least:
            bad.append("%s: %.2f wavefronts per warp access, least %d" % (name, sum(k) / len(k), least))
    for hs, esz, allowed in splits:
        k, p = vllm_v_split(kernel_s, hs, esz), vllm_v_split(plain_s, hs, esz)
        avg = lambda v, i: sum(x[i] for x in v) / len(v)
        name = "vLLM V^T split-kernel reads, head %d, %d-byte elements" % (hs, esz)
        print("| %s | %.2f | %.2f | %.2f%s |" % (name, avg(k, 0), avg(p, 0), avg(k, 1), " (x2 allowed)" if allowed > 1 else ""))
        if any(n > allowed * least for n, least in k):
            bad.append("%s: %.2f wavefronts per warp access, least %.2f" % (name, avg(k, 0), avg(k, 1)))
    for name, hs, hb, rs in outs:
        v = epilogue_output_reads(rs, hs, hb, mma_groups(hs, 1 if rs % 2 else 2)[1])
        print("| %s | %.2f | - | %.2f |" % (name, sum(x[0] for x in v) / len(v), sum(x[1] for x in v) / len(v)))
        if any(n > least for n, least in v):
            bad.append("%s: more than its least wavefronts" % name)
    bad += ["not in the source as modelled: " + m for m in missing_formulas()]
    if bad:
        sys.exit("decode_banks.py:\n  " + "\n  ".join(bad))
    print("ok: every modelled access takes its least wavefronts (allowed 2-way: the fp8 epilogue stores, the"
          " tensor-core kernel's fp8 K reads at heads 32 and 64 over vLLM's layout and at heads 80 to 112 and 192, the split kernel's"
          " fp8 and head-96 V^T reads, the copies into the padded rows of heads 32 to 112 and 192, the long tile's copies;"
          " 3-way: the fp8 quarter block's epilogue stores at heads 80 and 112, once a CTA)")


if __name__ == "__main__":
    main()
