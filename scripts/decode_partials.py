#!/usr/bin/env python3
"""What the decode splits' partial rows cost in memory traffic, f32 against the
output's 16-bit type, and what the difference predicts for the shapes the H100
measured (gpu-report-2026-11-27-H100.md).

    python3 scripts/decode_partials.py [--roof GBPS] [--markdown]

A sequence cut into S splits (v2, the recommended entry) has each split CTA
write, per query head, a partial row of head_size values plus its sum and max
(f32 each); the merge kernel reads them back. The KV bytes the splits read
are num_kv_heads x len x head_size x 2 (K and V) x the cache element's size.
Partials add, per (sequence, query head, split), head_size x e + 8 bytes
written and read again (e = 4 for f32 rows, 2 for rows in the output's
16-bit type, as vLLM's paged_attention_v2 and FlashInfer's split-KV decode
keep them; the sums and maxima stay f32).

The prediction assumes the bytes saved were moved at the measured copy roof
(2998 GB/s read + write on that H100): t_new = t_old - saved / roof, where
t_old = KV bytes / (measured fraction x roof). It is an estimate of traffic,
not of latency: at batch 1 the merge is bound by its trips to memory
(budget-notes/decode-merge-loads-2026-11-29.md), which 16-bit rows do not
change.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from budget import auto_part  # noqa: E402  (the recommended entry's split length, decode.h)

ROOF_GBPS = 2998.0  # copy roof measured in run 11 (gpu-report-2026-11-27-H100.md)

# (label, num_heads, num_kv_heads, head_size, batch, len, cache bytes per element,
#  recommended entry's measured fraction of the copy roof on 2026-11-27 or None)
SHAPES = [
    ("GQA 32/8 head 128, b=64 x 4K, bf16", 32, 8, 128, 64, 4096, 2, 0.86),
    ("GQA 32/8 head 128, b=128 x 2K, bf16", 32, 8, 128, 128, 2048, 2, 0.85),
    ("GQA 32/8 head 128, b=16 x 32K, bf16", 32, 8, 128, 16, 32768, 2, 0.91),
    ("MHA 32/32 head 128, b=64 x 4K, bf16", 32, 32, 128, 64, 4096, 2, 0.94),
    ("GQA 32/8 head 64, b=64 x 4K, bf16", 32, 8, 64, 64, 4096, 2, 0.72),
    ("GQA 16/8 head 256, b=64 x 4K, bf16", 16, 8, 256, 64, 4096, 2, 0.95),
    ("group 16 (64/4) head 128, b=64 x 4K, bf16", 64, 4, 128, 64, 4096, 2, 0.73),
    ("GQA 32/8 head 128, b=64 x 4K, fp8", 32, 8, 128, 64, 4096, 1, 0.71),
    ("GQA 32/8 head 128, b=16 x 32K, fp8", 32, 8, 128, 16, 32768, 1, 0.76),
    ("GQA 32/8 head 64, b=64 x 4K, fp8", 32, 8, 64, 64, 4096, 1, 0.53),
    ("group 16 (64/4) head 128, b=64 x 4K, fp8", 64, 4, 128, 64, 4096, 1, 0.54),
]


def row(shape, roof):
    label, h, kvh, hs, b, length, esz, frac = shape
    s = -(-length // auto_part(length))  # the recommended entry's splits
    kv = b * kvh * length * hs * 2 * esz
    rows = b * h * s if s > 1 else 0
    part32 = 2 * rows * (hs * 4 + 8)  # written by the split kernel, read by the merge
    part16 = 2 * rows * (hs * 2 + 8)
    out = dict(label=label, splits=s, kv_mb=kv / 1e6, p32_mb=part32 / 1e6, p16_mb=part16 / 1e6,
               share32=part32 / kv, share16=part16 / kv)
    if frac is not None:
        t_old = kv / (frac * roof * 1e9)
        t_new = t_old - (part32 - part16) / (roof * 1e9)
        out.update(measured=frac, t_old_us=t_old * 1e6, t_new_us=t_new * 1e6, predicted=kv / (t_new * roof * 1e9))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--roof", type=float, default=ROOF_GBPS, help="copy roof, GB/s (default: the H100's 2998)")
    ap.add_argument("--markdown", action="store_true", help="a markdown table")
    a = ap.parse_args()
    hdr = ["shape (recommended entry)", "splits", "KV MB", "partials f32 MB (share)", "16-bit MB (share)",
           "measured (2026-11-27)", "time then, us", "predicted time, us", "predicted % of roof"]
    rows = [row(sh, a.roof) for sh in SHAPES]
    if a.markdown:
        print("| " + " | ".join(hdr) + " |")
        print("|" + " --- |" * len(hdr))
    for r in rows:
        cells = [r["label"], str(r["splits"]), f"{r['kv_mb']:.0f}", f"{r['p32_mb']:.1f} ({r['share32']:.1%})",
                 f"{r['p16_mb']:.1f} ({r['share16']:.1%})", f"{r['measured']:.0%}", f"{r['t_old_us']:.0f}",
                 f"{r['t_new_us']:.0f}", f"{r['predicted']:.1%}"]
        print(("| " + " | ".join(cells) + " |") if a.markdown else "  ".join(cells))


if __name__ == "__main__":
    main()
