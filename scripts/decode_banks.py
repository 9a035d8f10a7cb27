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
    16 w + mma_tok(g + 8));
  - its fp8 V reads (8 bytes): lane (g, c) reads bytes 64 P + 8 g of token 2 c + (i % 2) + 8 (i / 2);
  - ldmatrix (16-bit K and V): 8 lanes at 8 consecutive tokens, one granule;
  - the tensor-core kernel's epilogue stores of its O^T fragments (rows RS floats apart; for fp8's
    permuted dims no row stride from 128 to 144 does better than 2-way, so 2 is the least there);
  - vLLM's layout, whose values the copies keep as V^T rows per stored block of sbs tokens
    (pitch: sbs * esz padded to an odd number of granules), read by the tensor-core kernel:
    16-bit by ldmatrix, 8 lanes on 8 consecutive dim rows; fp8 by 4-byte loads, lane (g, c) at
    dim row 16 mb + g (+ 8) and token 4 c. Blocks of 8 fp8 tokens put tokens 0..7 and 8..15 in
    two blocks 128 rows apart, the same banks: 2-way, reported and allowed (vLLM's default
    block is 16).
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
    ],
    "cuda/decode/decode_mma.cuh": [
        "return PERM ? 4 * ((j & 7) >> 1) + 2 * (j >> 3) + (j & 1) : j;",
        "const int tr0 = tw + mma_tok<PERM>(g), tr1 = tw + mma_tok<PERM>(g + 8);",
        "const unsigned char *src0 = krow0 + swz(64 * j + 16 * qc, tr0, 7, 4);",
        "const unsigned char *src1 = krow1 + swz(64 * j + 16 * qc, tr1, 7, 4);",
        "const int t = tw + 2 * qc + (i & 1) + 8 * (i >> 1);",
        "const unsigned char *src = vt + t * G::pitch_v + swz(64 * P + 8 * g, t, 7, 4);",
        "const int t = tw + (lane & 7);",
        "ldsm_x4(r, krow + swz(2 * (32 * jj + 8 * (lane >> 3)), t, 7, 4));",
        "const int tph = tw + 4 * qc;",
        "vt + ((tph >> p.sbs_shift) * HS + g) * geo.pitch_v + (tph & (p.sbs - 1));",
        "vt + ((tw >> p.sbs_shift) * HS + 8 * (lane >> 3) + (lane & 7)) * geo.pitch_v +",
        "ldsm_x4(r, vrow + 32 * jj * geo.pitch_v);",
        "constexpr int RS = F8 && !VL ? HS + 3 : HS + 4;",
        "const int h = 2 * qc + (i & 1), d = pv_dim<F8 && !VL>(mb, g + 8 * (i >> 1));",
        "red[(warp * MMA_ROWS + h) * RS + d] = acc[mb][i] * fac[i & 1];",
    ],
}


def kernel_s(t):
    return (t ^ ((t & 1) << 2)) & 7


def plain_s(t):
    return t & 7


def place(s, t, granule, byte=0, pitch=256):
    """Byte address of `byte` in logical granule `granule` of row t (rows `pitch` bytes apart)."""
    return t * pitch + (((granule & ~7) | ((granule & 7) ^ s(t))) << 4) + byte


def copies(s, tpt, units=16):
    """issue_tile's flash-layout copies: lane l -> token l / tpt, granules l % tpt + tpt r."""
    out = []
    for r in range(units // tpt):
        for w in range(4):
            out.append(ragged_banks.wavefronts(
                [place(s, (32 * w + l) // tpt, (32 * w + l) % tpt + tpt * r) for l in range(32)], 16))
    return out


def vllm_key_copies(s, T=32, units=16):
    """vLLM's key cache: lane l -> token l % T, granule l / T + (128 / T) r (128 threads)."""
    out = []
    for r in range(units * T // 128):
        for w in range(4):
            out.append(ragged_banks.wavefronts(
                [place(s, (32 * w + l) % T, (32 * w + l) // T + (128 // T) * r) for l in range(32)], 16))
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


def mma_f8_k(s, perm=False):
    """Warp w (tw = 16 w), lane (g, c) = (l >> 2, l & 3): granule 4 j + c of token tw + mma_tok(g)
    (src0) and tw + mma_tok(g + 8) (src1)."""
    out = []
    for w in range(4):
        for half in range(2):
            for j in range(2):
                out.append(ragged_banks.wavefronts(
                    [place(s, 16 * w + mma_tok((l >> 2) + 8 * half, perm), 4 * j + (l & 3), pitch=128)
                     for l in range(32)], 16))
    return out


def mma_f8_v(s):
    out = []
    for P in range(2):
        for i in range(4):
            addrs = []
            for l in range(32):
                g, c = l >> 2, l & 3
                t = 2 * c + (i & 1) + 8 * (i >> 1)
                b = 64 * P + 8 * g
                addrs.append(place(s, t, b >> 4, b & 15, pitch=128))
            out.append(ragged_banks.wavefronts(addrs, 8))
    return out


def ldmatrix(s):
    out = []
    for jj in range(4):
        # each 8-lane matrix: tokens 0..7 at granule 4 jj + matrix (rows of 256 bytes at head 128, 16-bit)
        out.append(ragged_banks.wavefronts(
            [place(s, l & 7, 4 * jj + (l >> 3)) for l in range(32)], 16))
    return out


def pv_dim(f8, mb, r):
    """decode_mma.cuh's pv_dim: the dim of P.V's m-block mb, row r (fp8 flash: permuted)."""
    return 64 * (mb >> 2) + 8 * (r & 7) + 2 * (mb & 3) + (r >> 3) if f8 else 16 * mb + r


def epilogue_stores(f8, rs):
    """The epilogue's stores of the warps' O^T fragments: lane (g, c), element i of m-block mb ->
    float (2 c + (i & 1)) rs + pv_dim(mb, g + 8 (i >> 1))."""
    return [ragged_banks.wavefronts([4 * ((2 * (l & 3) + (i & 1)) * rs + pv_dim(f8, mb, (l >> 2) + 8 * (i >> 1)))
                                     for l in range(32)], 4) for mb in range(8) for i in range(4)]


def smem_pitch(b):
    """dec_geometry's pitch: b bytes rounded up to an odd number of 16-byte granules."""
    n = (b + 15) // 16
    return n * 16 + 16 if n % 2 == 0 else n * 16


def vllm_v_ldmatrix(sbs, esz=2):
    """16-bit V^T rows: lane l -> dim row 32 jj + 8 (l >> 3) + (l & 7) of the warp's block."""
    pitch = smem_pitch(sbs * esz)
    return [ragged_banks.wavefronts([(32 * jj + 8 * (l >> 3) + (l & 7)) * pitch for l in range(32)], 16)
            for jj in range(4)]


def vllm_v_f8(sbs, hs=128):
    """fp8 V^T rows: lane (g, c) -> token tph = 4 c of block tph // sbs, dim rows 16 mb + g (+ 8)."""
    pitch = smem_pitch(sbs)
    out = []
    for mb in range(8):
        for half in range(2):
            addrs = []
            for l in range(32):
                g, c = l >> 2, l & 3
                tph = 4 * c
                addrs.append(((tph // sbs) * hs + 16 * mb + 8 * half + g) * pitch + tph % sbs)
            out.append(ragged_banks.wavefronts(addrs, 4))
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
               ("tensor-core fp8 K reads, vLLM's layout (rows permuted)", lambda s: mma_f8_k(s, True), 4), ("tensor-core fp8 V reads (8 B)", mma_f8_v, 2),
               ("ldmatrix K / V^T rows", ldmatrix, 4)]
    checks += [("epilogue O^T stores, 16-bit dims (row stride 132)", lambda s: epilogue_stores(False, 132), 1),
               ("epilogue O^T stores, fp8 flash dims (row stride 131)", lambda s: epilogue_stores(True, 131), 2)]
    checks += [("vLLM V^T ldmatrix, 16-bit, %d-token blocks" % b, (lambda s, b=b: vllm_v_ldmatrix(min(b, 32))), 4)
               for b in (8, 16, 32, 64)]
    checks += [("vLLM V^T 4-byte reads, fp8, %d-token blocks" % b, (lambda s, b=b: vllm_v_f8(min(b, 64))),
                2 if b == 8 else 1) for b in (8, 16, 32, 64, 128)]
    print("| access | s(t) = t ^ 4 (t % 2) (kernel) | s(t) = t | least |")
    print("| --- | --- | --- | --- |")
    for name, f, least in checks:
        k, p = f(kernel_s), f(plain_s)
        print("| %s | %.2f | %.2f | %d |" % (name, sum(k) / len(k), sum(p) / len(p), least))
        if max(k) > least:
            bad.append("%s: %.2f wavefronts per warp access, least %d" % (name, sum(k) / len(k), least))
    bad += ["not in the source as modelled: " + m for m in missing_formulas()]
    if bad:
        sys.exit("decode_banks.py:\n  " + "\n  ".join(bad))
    print("ok: every modelled access takes its least wavefronts (the 2-way cases, fp8 V^T in 8-token blocks and the fp8 epilogue stores, are allowed)")


if __name__ == "__main__":
    main()
