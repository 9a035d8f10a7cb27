#!/usr/bin/env python3
"""Shared-memory bank conflicts of the ragged kernel's fp8 decode item (decode_item_fp8 in
cuda/ragged/ragged_mma.cuh), from its written address formulas, at heads 64, 128 and 256.

No GPU is needed. The model: 32 banks of 4 bytes; a warp's 16-byte accesses are served a
quarter warp (8 lanes) at a time, its 8-byte ones a half warp at a time, and a phase takes as
many wavefronts as the most distinct 4-byte words any one bank must deliver. The least is
32 x width / 128 wavefronts per access.

Checked, per warp and slot:
  - Q.K: lane (g, c) loads 16 bytes of K row 16 dslice + 8 nb + g at dims 64 j + 16 c;
  - P.V: lane (g, c) loads 8 bytes of V rows 16 dslice + 2c + {0, 1, 8, 9} at dims
    col0 + 64 v + 8 g (col0 = the warp's half of the head at 256);
and once per item the f32 staging stores (16 bytes; rows HP + 8 floats apart, the two 4-float
halves of each 8 swapped where dim bit 5 is set). Also the 16-bit items' staging (prefill_item and
decode_item: float2 stores, rows HP + 8 floats apart, halves swapped alike), the epilogue's reads
of the staging (a quarter warp: 8 column groups of a row), and load_kv_rows' cp.async writes, one or
two 16-byte chunks a lane: on 16-bit pages, and on fp8 pages (raw_swz rows for decode items, dense
rows for prefill items).

Each check runs twice: with the kernel's layouts (must be free of conflicts; the exit status
says) and with the plain ones (dense rows, no swap), to show what the layouts buy.

Usage: python3 scripts/ragged_banks.py
"""
import sys


def raw_swz(hp, r, b):
    """ragged_mma.cuh raw_swz<HP>: byte b of raw row r."""
    m = ((((r if hp >= 128 else 0) ^ (r >> 1)) & 1) << 2) | (((r >> 2) & 1) << 1)
    return (r * hp + b) ^ (m << 4)


def wavefronts(addrs, width):
    per = {16: 8, 8: 16, 4: 32}[width]
    total = 0
    for p in range(0, 32, per):
        banks = {}
        for a in addrs[p:p + per]:
            for w in range(width // 4):
                word = a // 4 + w
                banks.setdefault(word % 32, set()).add(word)
        total += max(len(v) for v in banks.values())
    return total


def check(hp, swizzled):
    place = (lambda r, b: raw_swz(hp, r, b)) if swizzled else (lambda r, b: r * hp + b)
    kc, dec_hp = hp // 64, hp if hp <= 128 else 128
    vc, slices, parts = dec_hp // 64, 4 if hp <= 128 else 2, 1 if hp <= 128 else 2
    out = {}

    def add(kind, addrs, width):
        n, ideal = wavefronts(addrs, width), 32 * width // 128
        tot = out.setdefault(kind, [0, 0])
        tot[0] += n
        tot[1] += ideal

    for ds in range(slices):
        for nb in range(2):
            for j in range(kc):
                add("Q.K loads (16 B)", [place(16 * ds + 8 * nb + (l >> 2), 64 * j + 16 * (l & 3)) for l in range(32)],
                    16)
        for part in range(parts):
            for v in range(vc):
                for i in range(4):
                    add("P.V loads (8 B)", [place(16 * ds + 2 * (l & 3) + (i & 1) + 8 * (i >> 1),
                                                  part * dec_hp + 64 * v + 8 * (l >> 2)) for l in range(32)], 8)
    sr = hp + 8 if swizzled else hp
    for ds in range(slices):
        for part in range(parts):
            for h in range(2):
                for v in range(vc):
                    for e in range(2):
                        for half in range(2):
                            addrs = []
                            for l in range(32):
                                g, c = l >> 2, l & 3
                                xo = (c >> 1) * 4 if swizzled else 0
                                col = part * dec_hp + 64 * v + 16 * c + 8 * e + ((4 * half) ^ xo)
                                addrs.append(4 * ((16 * ds + g + 8 * h) * sr + col))
                            add("staging stores (16 B, per item)", addrs, 16)
    return out


def swz_col(col):
    """epilogue's SWZ (ragged_common.cuh): the two 4-float halves of each 8 columns swapped where
    column bit 5 is set."""
    return col ^ (((col >> 5) & 1) << 2)


def float2_staging(hp, sr, swz=True):
    """prefill_item's and decode_item's staging stores (16-bit pages): lane (g, c) stores a float2
    at row g (+ 8, + the warp's block) and column 8 j + 2 c (under epilogue's SWZ), rows sr floats
    apart."""
    n = ideal = 0
    for rblock in (0, 8, 16, 24):
        for j in range(hp // 8):
            addrs = [4 * ((rblock + (l >> 2)) * sr + (swz_col if swz else int)(8 * j + 2 * (l & 3)))
                     for l in range(32)]
            n += wavefronts(addrs, 8)
            ideal += 2
    return n, ideal


def epilogue_reads(hp, sr, swz):
    """epilogue's reads of the f32 staging (ragged_common.cuh, `staged`): thread u takes row
    u / (hp / 8) and column group cg = u % (hp / 8); its first 16-byte load is the group's half at
    offset sw (4 floats where column bit 5 is set under SWZ, else 0), its second the other."""
    groups, n, ideal = hp // 8, 0, 0
    for u0 in range(0, 2 * groups, 32):  # two rows' worth of warps
        for half in (0, 1):
            addrs = []
            for l in range(32):
                r, cg = (u0 + l) // groups, (u0 + l) % groups
                sw = ((cg >> 2) & 1) * 4 if swz else 0
                addrs.append(4 * (r * sr + cg * 8 + (sw if half == 0 else 4 ^ sw)))
            n += wavefronts(addrs, 16)
            ideal += 4
    return n, ideal


def copies(hp, ch, chunks, place):
    """load_kv_rows' 16-byte cp.async destinations, per warp and slot (K's; V's are alike): thread
    t copies the chunks t % G + G j (j < ch) of rows t / G + (128 / G) i, G = chunks / ch lanes a
    row, in slots of 64 keys (32 at head 256); place(row, chunk) is the byte address."""
    g_lanes, rows = chunks // ch, 64 if hp <= 128 else 32
    n = ideal = 0
    for w in range(4):
        for i in range(rows * g_lanes // 128):
            for j in range(ch):
                addrs = []
                for l in range(32):
                    t = 32 * w + l
                    addrs.append(place(t // g_lanes + (128 // g_lanes) * i, t % g_lanes + g_lanes * j))
                n += wavefronts(addrs, 16)
                ideal += 4
    return n, ideal


def kv_copies(hp, ch):
    """16-bit pages: rows HP + 8 elements (2 bytes each) apart."""
    return copies(hp, ch, hp // 8, lambda r, c: 2 * (hp + 8) * r + 16 * c)


def raw_copies(hp, ch, swizzled):
    """fp8 pages: rows of HP bytes, raw_swz for a decode item, dense for a prefill item's conversion."""
    if swizzled:
        return copies(hp, ch, hp // 16, lambda r, c: raw_swz(hp, r, 16 * c))
    return copies(hp, ch, hp // 16, lambda r, c: r * hp + 16 * c)


def main():
    bad = False
    for hp in (64, 128, 256):
        for swizzled in (True, False):
            res = check(hp, swizzled)
            label = "kernel layouts" if swizzled else "plain layouts "
            cells = ", ".join("%s %d/%d wavefronts" % (k, n, ideal) for k, (n, ideal) in res.items())
            print("head %3d, %s: %s" % (hp, label, cells))
            if swizzled and any(n > ideal for n, ideal in res.values()):
                bad = True
    for hp in (64, 128, 256):
        for sr, label in ((hp + 8, "kernel rows (HP + 8)"), (hp, "rows HP apart")):
            n, ideal = float2_staging(hp, sr)
            print("head %3d, 16-bit items' staging, %s: %d/%d wavefronts" % (hp, label, n, ideal))
            if sr == hp + 8 and n > ideal:
                bad = True
    for hp in (64, 128, 256):
        for swz, label in ((True, "kernel (halves swapped at column bit 5)"), (False, "halves in order")):
            n, ideal = epilogue_reads(hp, hp + 8, swz)
            print("head %3d, epilogue's staging reads, %s: %d/%d wavefronts" % (hp, label, n, ideal))
            if swz and n > ideal:
                bad = True
    for hp in (64, 128, 256):
        kernel = 2 if hp >= 128 else 1  # load_kv_rows' CH: two chunks a lane where a row is 256 bytes or more
        for ch in (1, 2):
            n, ideal = kv_copies(hp, ch)
            label = "kernel" if ch == kernel else "not used"
            print("head %3d, 16-bit K/V copies, %d chunk(s) a lane (%s): %d/%d wavefronts" % (hp, ch, label, n, ideal))
            if ch == kernel and n > ideal:
                bad = True
    for hp in (64, 128, 256):
        for swizzled, item in ((True, "decode items, raw_swz"), (False, "prefill items, dense")):
            # load_kv_rows' CH for RAW 16-byte copies
            kernel = 2 if hp >= 256 or (swizzled and hp == 128) else 1
            for ch in (1, 2):
                n, ideal = raw_copies(hp, ch, swizzled)
                label = "kernel" if ch == kernel else "not used"
                print("head %3d, fp8 K/V copies (%s), %d chunk(s) a lane (%s): %d/%d wavefronts"
                      % (hp, item, ch, label, n, ideal))
                if ch == kernel and n > ideal:
                    bad = True
    if bad:
        sys.exit("ragged_banks.py: the kernel's layouts conflict")
    print("ok: the decode and prefill items' shared loads, K/V copies and staging stores meet no bank twice")


if __name__ == "__main__":
    main()
