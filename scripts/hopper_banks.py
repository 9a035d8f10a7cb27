#!/usr/bin/env python3
"""Shared-memory wavefronts of the Hopper prefill producer's stores (cuda/prefill/prefill_wgmma.cuh),
from the kernel's index formulas written out here: for each warp-wide 16-byte store (cp.async's
shared write or st.shared.v4), 4 phases of 8 lanes, each phase needing as many wavefronts as the most
lanes that hit one 16-byte bank group at different addresses (32 banks x 4 B = 128 B per wavefront).
Ideal: 4 wavefronts per warp store. Run: python3 scripts/hopper_banks.py"""


def wavefronts(addrs):
    total = 0
    for ph in range(4):
        groups = {}
        for a in addrs[8 * ph:8 * ph + 8]:
            groups.setdefault((a % 128) // 16, set()).add(a)
        total += max(len(v) for v in groups.values())
    return total


def rows16(h, remap):  # copy_rows_as: lane pair h = lane >> 1 -> tile row
    return ((h & 3) << 1) | ((h >> 2) & 1) | (h & 8) if remap else h


def rows8(h, remap):  # copy_raw_rows / convert_rows
    return (h & 9) | ((h & 2) << 1) | ((h & 4) >> 1) if remap else h


def copy_rows(remap, hp=128, BN=128):
    """cp.async of a 16-bit K/V/Q tile: per (pass, chunk pair) one warp store."""
    out = []
    for p in range(2):
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
    for p in range(2):
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


def vt_lane(lane, remap):  # copy_raw_vt / convert_vt: (raw chunk column c, row dr within the warp's 4)
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


def main():
    print("| producer store | lanes to rows | wavefronts per warp store (ideal 4) |")
    print("| --- | --- | --- |")
    for name, f in (("copy_rows (16-bit Q, K, V)", copy_rows), ("convert_rows (fp8 K, V)", convert_rows),
                    ("convert_vt (fp8 vLLM V^T)", convert_vt)):
        for remap in (False, True):
            v = f(remap)
            print("| %s | %s | %.2f |" % (name, "permuted" if remap else "in order", sum(v) / len(v)))
    v = copy_vt()
    print("| copy_vt (16-bit vLLM V^T) | as is | %.2f |" % (sum(v) / len(v)))


if __name__ == "__main__":
    main()
