#!/usr/bin/env python3
"""Shared-memory wavefronts of the Hopper prefill producer's accesses (cuda/prefill/prefill_wgmma.cuh),
16-bit and FP8 paths, from the kernel's index formulas written out here.

No GPU is needed. The model: 32 banks of 4 bytes; a warp's 16-byte accesses are served a quarter
warp (8 lanes) at a time, its 8-byte ones a half warp and its 4-byte ones the whole warp, and a
phase takes as many wavefronts as the most distinct 4-byte words any one bank must deliver. The
least is 32 x width / 128 wavefronts per warp access (4 for 16 bytes, 1 for 4 bytes).

Each access is counted with the kernel's lane-to-row assignment (it must meet the least; the exit
status says) and, where the kernel chose one to avoid conflicts, with the plain one, to show what
the choice buys. The formulas modelled here are also looked for, as written, in the kernel's source:
a kernel whose formula changed fails the check until this script is brought along.

Usage: python3 scripts/hopper_banks.py
"""
import os
import re
import sys

import ragged_banks  # scripts/: the same bank model

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cuda", "prefill", "prefill_wgmma.cuh")

# The kernel's formulas that the functions below model (whitespace-insensitive).
FORMULAS = [
    "int rows_conflict_free16(int h) { return ((h & 3) << 1) | ((h >> 2) & 1) | (h & 8); }",
    "int rows_conflict_free8(int h) { return (h & 9) | ((h & 2) << 1) | ((h & 4) >> 1); }",
    "return H::kF8 ? (p * J + j) * 128 + 2 * p + (tid ^ ((w & 1) | ((w & 2) << 1))) : (p * J + j) * 128 + tid;",
    "static constexpr uint32_t raw_bytes = BN * HP + (F8_ ? 32 : 0);",
    "pa::ptx::cp_async(raw + raw_slot<H>(p, j, tid) * 16,",
    "*reinterpret_cast<const uint4 *>(raw + raw_slot<H>(p, j, tid) * 16)",
    "const int kc = lane & 7, wq = lane >> 3;",
    "const int tid0 = 32 * (kc >> 1) + 4 * (wq >> 1) + 8 * (wq & 1) + (w & 1);",
    "const uint8_t *slot = raw + raw_slot<H>(kc & 1, w >> 1, tid0) * 16;",
    "slot + h * 4096 + (2 * (i & 1) + 16 * (i >> 1)) * 16",
    "vt + (uint32_t)(16 * (w + 4 * h)) * 128u + 16u * kc + 4u * wq",
    "uint8_t *row = base + (at ^ ((uint32_t)sw << 4));",
    "return H::kF8 ? (lane & 7) : (lane & 3) | ((lane >> 4) << 2);",
    "return H::kF8 ? lane >> 3 : (lane >> 2) & 3;",
    "*reinterpret_cast<uint4 *>(vt + d * 128 + ((c ^ (d & 7)) << 4)) = o;",
    "pa::ptx::cp_async(d0 + p * 16 * 128 + (((2 * j + q) ^ x) << 4), src, 16,",
    "*reinterpret_cast<uint4 *>(d0 + p * 16 * 128 + (((2 * j + q) ^ x) << 4)) = quant16<H::kDT>(lo, hi, mul);",
]


def wavefronts(addrs, width=16):  # the model of ragged_banks.py, the same for both kernels
    return ragged_banks.wavefronts(addrs, width)


def rows16(h, remap):  # copy_rows_as / copy_rows8 / quant_rows: lane pair h = lane >> 1 -> tile row
    return ((h & 3) << 1) | ((h >> 2) & 1) | (h & 8) if remap else h


def rows8(h, remap):  # copy_raw_rows / convert_rows
    return (h & 9) | ((h & 2) << 1) | ((h & 4) >> 1) if remap else h


def raw_slot(p, j, tid, J, swizzled):  # copy_raw_rows' staging unit (16 bytes): FP8 path swizzled, 16-bit plain
    w = tid >> 5
    return (p * J + j) * 128 + (2 * p + (tid ^ ((w & 1) | ((w & 2) << 1))) if swizzled else tid)


# ---- the 16-bit path -------------------------------------------------------------------------------

def copy_rows(remap, hp=128, BN=128):
    """cp.async of a 16-bit K/V/Q tile: per (pass, chunk pair) one warp store (BN / 64 passes)."""
    out = []
    for p in range(BN // 64):
        for j in range(hp // 16):
            addrs = []
            for lane in range(32):
                q, rp = lane & 1, rows16(lane >> 1, remap)
                x = rp & 7
                addrs.append((rp + 16 * p) * 128 + (j >> 2) * BN * 128 + (((2 * (j & 3) + q) ^ x) << 4))
            out.append(wavefronts(addrs))
    return out


def convert_rows(remap, hp=128, BN=128):
    """st.shared of an fp8 row tile's converted chunks: lo and hi stores per (pass, raw chunk)."""
    out = []
    for p in range(BN // 64):
        for j in range(hp // 32):
            for half in range(2):
                addrs = []
                for lane in range(32):
                    q, rp = lane & 1, rows8(lane >> 1, remap)
                    x, c = rp & 7, 4 * j + 2 * q
                    row = (rp + 16 * p) * 128 + (c >> 3) * BN * 128
                    addrs.append(row + ((((c + half) & 7) ^ x) << 4))
                out.append(wavefronts(addrs))
    return out


def raw_rows(swizzled, hp=128, BN=128):
    """copy_raw_rows' cp.async into staging and convert_rows' loads from it (the same thread's slot):
    per (warp, pass, raw chunk) one warp access."""
    J = hp // 32
    out = []
    for w in range(4):
        for p in range(BN // 64):
            for j in range(J):
                out.append(wavefronts([raw_slot(p, j, 32 * w + lane, J, swizzled) * 16 for lane in range(32)]))
    return out


def vt_lane(lane, remap):  # copy_raw_vt / convert_vt (16-bit path): (raw chunk column c, row dr within the warp's 4)
    if remap:
        return (lane & 3) | ((lane >> 4) << 2), (lane >> 2) & 3
    return lane & 7, lane >> 3


def convert_vt(remap, hp=128):
    out = []
    for w in range(4):
        for i in range(hp // 16):
            for half in range(2):
                addrs = []
                for lane in range(32):
                    c, d = vt_lane(lane, remap)
                    dr = 4 * w + d
                    x, c0 = dr & 7, (2 * c) & 7
                    addrs.append((c >> 2) * hp * 128 + dr * 128 + i * 2048 + (((c0 + half) ^ x) << 4))
                out.append(wavefronts(addrs))
    return out


def copy_vt(hp=128):
    """cp.async of a 16-bit V^T tile (copy_vt): chunk c = lane % 16 of row 2 w + lane / 16."""
    out = []
    for w in range(4):
        for i in range(hp // 8):
            addrs = []
            for lane in range(32):
                c, dr = lane & 15, 2 * w + (lane >> 4)
                addrs.append((c >> 3) * hp * 128 + dr * 128 + i * 1024 + (((c & 7) ^ dr) << 4))
            out.append(wavefronts(addrs))
    return out


# ---- the FP8 path (H::kF8, head 128: rows of 128 e4m3 bytes) ----------------------------------------

def rows8_tile(remap):
    """copy_rows8's cp.async (cache K) and quant_rows' stores (new K): row rp + 16 p of the warp's 32,
    chunk 2 j + q, per (pass, j) one warp store."""
    out = []
    for w in range(4):
        for p in range(2):
            for j in range(4):
                addrs = []
                for lane in range(32):
                    q, rp = lane & 1, rows16(lane >> 1, remap)
                    addrs.append((32 * w + rp) * 128 + p * 16 * 128 + (((2 * j + q) ^ (rp & 7)) << 4))
                out.append(wavefronts(addrs))
    return out


def vt_from_rows(kernel):
    """vt_from_rows' loads of raw V rows from staging: key i of lane (kc, wq) is row 16 kc +
    f8_key(4 wq + i), d chunk w + 4 h. The kernel: (kc, wq) = (l % 8, l / 8) over raw_slot's XOR;
    plain: (l / 4, l % 4) over unswizzled slots (the kernel before 2026-11-24)."""
    J = 4
    out = []
    for w in range(4):
        for h in range(2):
            for i in range(4):
                addrs = []
                for lane in range(32):
                    kc, wq = (lane & 7, lane >> 3) if kernel else (lane >> 2, lane & 3)
                    R = 16 * kc + 2 * wq + (i & 1) + 8 * (i >> 1)  # the key's row in the tile
                    wr, p, l2 = R >> 5, (R >> 4) & 1, rows8(R & 15, True)  # rows_conflict_free8 is its own inverse
                    C = w + 4 * h  # the 16-byte d chunk
                    tid = 32 * wr + 2 * l2 + (C & 1)
                    addrs.append(raw_slot(p, C >> 1, tid, J, kernel) * 16)
                    if kernel:  # the kernel's address: key 0's raw_slot plus the key's step
                        tid0 = 32 * (kc >> 1) + 4 * (wq >> 1) + 8 * (wq & 1) + (w & 1)
                        folded = raw_slot(kc & 1, w >> 1, tid0, J, True) + 256 * h + 2 * (i & 1) + 16 * (i >> 1)
                        if folded != addrs[-1] // 16:
                            sys.exit("hopper_banks.py: vt_from_rows' slot %d is not raw_slot's %d (lane %d,"
                                     " key %d, h %d, w %d)" % (folded, addrs[-1] // 16, lane, i, h, w))
                out.append(wavefronts(addrs))
    return out


def vt_store4(kernel):
    """vt_store4's 4-byte stores into the V^T tile (base 1024-aligned): row d0 + sw (+ 8), word
    16 kc + 4 wq with bits 4-6 XORed by sw; the warp's lanes cover the 32 (kc, wq)."""
    out = []
    for w in range(4):
        for h in range(2):
            for sw in range(8):
                for extra in (0, 8):
                    addrs = []
                    for lane in range(32):
                        kc, wq = (lane & 7, lane >> 3) if kernel else (lane >> 2, lane & 3)
                        at = 3 * 1024 + 16 * (w + 4 * h) * 128 + 16 * kc + 4 * wq
                        addrs.append((at ^ (sw << 4)) + (sw + extra) * 128)
                    out.append(wavefronts(addrs, 4))
    return out


def vt_permute():
    """vt_permute's stores (vLLM's fp8 V^T as it stands): chunk c = l % 8 of row d = 4 w + l / 8 + 16 i."""
    out = []
    for w in range(4):
        for i in range(8):
            addrs = []
            for lane in range(32):
                c, d = lane & 7, 4 * w + (lane >> 3) + 16 * i
                addrs.append(d * 128 + ((c ^ (d & 7)) << 4))
            out.append(wavefronts(addrs))
    return out


def raw_slots_fit():
    """The FP8 path's raw_slot is one-to-one over a buffer's (pass, chunk, thread) and stays within
    raw_bytes (BN x HP + 32, BN = 128) at head 128 (and would at 64 and 96); the 16-bit path's plain
    slots within BN x HP at HP 192 and 256's 64-key tiles."""
    bad = []
    # (head, keys a tile, the FP8 path's swizzled slots, the buffer's bytes)
    for hp, bn, swz, size in [(hp, 128, True, 128 * hp + 32) for hp in (64, 96, 128)] + \
            [(hp, 64, False, 64 * hp) for hp in (192, 256)]:
        J = hp // 32
        units = [raw_slot(p, j, tid, J, swz) for p in range(bn // 64) for j in range(J) for tid in range(128)]
        if len(set(units)) != len(units) or min(units) < 0 or max(units) >= size // 16:
            bad.append("raw_slot at head %d, %d keys: %d units for %d slots, highest %d of %d" % (
                hp, bn, len(set(units)), len(units), max(units), size // 16))
    return bad


def formulas_in_source():
    norm = lambda s: re.sub(r"\s+", "", s)
    src = norm(open(SRC).read())
    return [f for f in FORMULAS if norm(f) not in src]


def main():
    bad = []
    print("| producer access | lanes | wavefronts per warp access (least) |")
    print("| --- | --- | --- |")

    def row(name, label, v, least, kernel):
        mean = sum(v) / len(v)
        print("| %s | %s | %.2f (%d) |" % (name, label, mean, least))
        if kernel and max(v) > least:
            bad.append("%s (%s): %.2f wavefronts, least %d" % (name, label, mean, least))

    for name, f in (("copy_rows (16-bit Q, K, V)", copy_rows), ("convert_rows (16-bit path, fp8 K, V)", convert_rows),
                    ("convert_vt (16-bit path, fp8 vLLM V^T)", convert_vt),
                    ("copy_rows8 / quant_rows (FP8 path, K)", rows8_tile)):
        row(name, "kernel (rows permuted)", f(True), 4, True)
        row(name, "in order", f(False), 4, False)
    # HP 192 and 256: 64-key tiles (one pass a warp), three and four panels a row.
    for hp in (192, 256):
        row("copy_rows (16-bit K, V), HP %d, 64 keys" % hp, "kernel (rows permuted)", copy_rows(True, hp, 64), 4,
            True)
        row("convert_rows (16-bit path, fp8 K, V), HP %d, 64 keys" % hp, "kernel (rows permuted)",
            convert_rows(True, hp, 64), 4, True)
        row("copy_raw_rows / convert_rows' loads, HP %d, 64 keys" % hp, "kernel (plain slots)",
            raw_rows(False, hp, 64), 4, True)
    row("copy_vt (16-bit vLLM V^T)", "kernel", copy_vt(), 4, True)
    row("copy_raw_rows (FP8 path, flash V rows)", "kernel (raw_slot's swizzle)", raw_rows(True), 4, True)
    row("copy_raw_rows / convert_rows' loads (16-bit path, fp8 K, V rows)", "kernel (plain slots)", raw_rows(False), 4,
        True)
    row("vt_from_rows loads (FP8 path, flash V)", "kernel (l % 8, raw_slot)", vt_from_rows(True), 4, True)
    row("vt_from_rows loads (FP8 path, flash V)", "l / 4, unswizzled", vt_from_rows(False), 4, False)
    row("vt_store4 (FP8 path, V^T words)", "kernel", vt_store4(True), 1, True)
    row("vt_store4 (FP8 path, V^T words)", "l / 4", vt_store4(False), 1, False)
    row("vt_permute (FP8 path, vLLM V^T)", "kernel", vt_permute(), 4, True)
    bad += raw_slots_fit()
    missing = formulas_in_source()
    for f in missing:
        bad.append("not in %s as modelled: %s" % (os.path.relpath(SRC), f))
    if bad:
        sys.exit("hopper_banks.py:\n  " + "\n  ".join(bad))
    print("ok: the Hopper producer's shared-memory accesses meet no bank twice (%d formulas found in the source)"
          % len(FORMULAS))


if __name__ == "__main__":
    main()
