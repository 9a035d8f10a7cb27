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
    of tokens 16 w + g and 16 w + g + 8;
  - its fp8 V reads (8 bytes): lane (g, c) reads bytes 64 P + 8 g of token 2 c + (i % 2) + 8 (i / 2);
  - ldmatrix (16-bit K and V): 8 lanes at 8 consecutive tokens, one granule.
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
        "const unsigned char *krow0 = kt + (tw + g) * G::pitch_k, *krow1 = krow0 + 8 * G::pitch_k;",
        "const unsigned char *src0 = krow0 + swz(64 * j + 16 * qc, tw + g, 7, 4);",
        "const unsigned char *src1 = krow1 + swz(64 * j + 16 * qc, tw + g + 8, 7, 4);",
        "const int t = tw + 2 * qc + (i & 1) + 8 * (i >> 1);",
        "const unsigned char *src = vt + t * G::pitch_v + swz(64 * P + 8 * g, t, 7, 4);",
        "const int t = tw + (lane & 7);",
        "ldsm_x4(r, krow + swz(2 * (32 * jj + 8 * (lane >> 3)), t, 7, 4));",
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


def mma_f8_k(s):
    """Warp w (tw = 16 w), lane (g, c) = (l >> 2, l & 3): granule 4 j + c of token tw + g (src0) and
    tw + g + 8 (src1)."""
    out = []
    for w in range(4):
        for half in range(2):
            for j in range(2):
                out.append(ragged_banks.wavefronts(
                    [place(s, 16 * w + (l >> 2) + 8 * half, 4 * j + (l & 3), pitch=128) for l in range(32)], 16))
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
    checks += [("tensor-core fp8 K reads", mma_f8_k, 4), ("tensor-core fp8 V reads (8 B)", mma_f8_v, 2),
               ("ldmatrix K / V^T rows", ldmatrix, 4)]
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
    print("ok: the decode kernels' swizzled K/V accesses meet no bank twice")


if __name__ == "__main__":
    main()
