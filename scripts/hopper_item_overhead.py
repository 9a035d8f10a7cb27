#!/usr/bin/env python3
"""What a CTA of the Hopper prefill kernel costs beyond its key tiles, from the
H100's measurements, and what persistent CTAs could win back.

    python3 scripts/hopper_item_overhead.py [SIDE_BY_SIDE.json] [--edge-weight W]

Reads the causal-prompt rows of the Hopper kernel in a side-by-side report
(default: benchmarks/results/side-by-side-2026-11-27-H100-run11.json, run on
the one-CTA-per-item grid) and fits

    time = (sum over items of (interior tiles + W x edge tiles) x t + items x c) / SMs

by least squares: t is a 128 x 128 key tile's time on one SM, c what an item
costs besides its tiles (the CTA's launch, its Q and first K/V loads before
the first Q K^T, the un-overlapped first softmax, the last P V, the output
stores). An item is 128 GQA-packed query rows (32 tokens at group 4); its
keys run to its last row's position (causal), in 128-key tiles, the one the
diagonal cuts an edge tile (masks: W, default 1.5, the consumers' issue ratio
846 / 569 in budget-hopper-2026-11-27.md).

Then, for persistent CTAs (PAGEDATTN_PREFILL_PERSISTENT, since 2026-11-28)
that hide a fraction h of c under the previous item's tiles, the predicted
rate. Their tile loop first cost 89 warp instructions per consumer warp and
tile more than the one-item kernel's (budget-notes/hopper-persistent-
2026-11-28.md), and since the warp-uniform warpgroup index 11 (558 against
547 at head 128, budget-notes/hopper-uniform-cw-2026-11-28.md), so what
they trade is mostly the balance table below. Which h the hardware gives is
what a GPU run must measure (side_by_side.py times both).
"""
import argparse
import json
import math
import re
import sys

SMS = 132


def item_weights(b, L, group=4, kv_heads=8, bm=128, bn=128, edge=1.5, per_item=0.0):
    """Each item's cost in tiles (interior + edge x its diagonal tile + per_item), in the kernel's
    item order: query tiles heaviest first, then sequences, then KV heads (item_at)."""
    tok, mt = bm // group, (L * group + bm - 1) // bm
    w = []
    for _ in range(kv_heads * b):
        for x in range(mt):
            k_end = min(L, (mt - 1 - x) * bm // group + tok)
            w.append((k_end + bn - 1) // bn - 1 + edge + per_item)
    return w


def balance(w, sms=SMS):
    """The busiest SM's work over the average: round-robin (item i to CTA i % sms, the persistent
    kernel's order), the same with every other round reversed, and greedy list scheduling in item
    order (the hardware handing each next CTA of the one-item grid to the first free SM)."""
    import heapq
    rr, sn = [0.0] * sms, [0.0] * sms
    for i, x in enumerate(w):
        k, c = divmod(i, sms)
        rr[c] += x
        sn[sms - 1 - c if k & 1 else c] += x
    h = [(0.0, c) for c in range(sms)]
    for x in w:
        t, c = heapq.heappop(h)
        heapq.heappush(h, (t + x, c))
    avg = sum(w) / sms
    return max(rr) / avg - 1, max(sn) / avg - 1, max(t for t, _ in h) / avg - 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", nargs="?", default="benchmarks/results/side-by-side-2026-11-27-H100-run11.json")
    ap.add_argument("--edge-weight", type=float, default=1.5)
    a = ap.parse_args()
    doc = json.load(open(a.report))
    roof = float(doc["gemm_tflops"])
    # The fit takes the one-CTA-per-item launch (the default; every Hopper row
    # before 2026-11-28); rows of persistent CTAs (side_by_side.py since
    # 2026-11-28) are shown beside the prediction.
    rows = [r for r in doc["rows"] if r.get("op") == "prefill" and "Hopper" in r.get("impl", "") and "ms" in r]
    persistent = {r["case"]: r for r in rows if "persistent" in r["impl"]}
    pts = []
    for r in (r for r in rows if "persistent" not in r["impl"]):
        m = re.search(r"b=(\d+) len=(\d+) (\d+)/(\d+)x(\d+)", r["case"])
        b, L, h, kvh, hs = map(int, m.groups())
        if (h, kvh, hs) != (32, 8, 128):
            continue
        w0 = item_weights(b, L, h // kvh, kvh, edge=0.0)  # interior tiles; one diagonal tile an item
        n, ti, te = len(w0), sum(w0), len(w0)
        pts.append(dict(case=r["case"], b=b, L=L, ms=float(r["ms"]), flops=float(r["flops"]), n=n,
                        tiles=ti + a.edge_weight * te))
    if len(pts) < 2:
        sys.exit("hopper_item_overhead: fewer than two Hopper prompt rows in " + a.report)
    # time_us * SMS = tiles * t + n * c: least squares in (t, c).
    sxx = sum(p["tiles"] ** 2 for p in pts)
    sxy = sum(p["tiles"] * p["n"] for p in pts)
    syy = sum(p["n"] ** 2 for p in pts)
    bx = sum(p["tiles"] * p["ms"] * 1e3 * SMS for p in pts)
    by = sum(p["n"] * p["ms"] * 1e3 * SMS for p in pts)
    det = sxx * syy - sxy * sxy
    t = (bx * syy - by * sxy) / det
    c = (sxx * by - sxy * bx) / det
    print(f"# Hopper prefill: a CTA's cost beyond its tiles ({a.report}, GEMM roof {roof:.0f} TFLOP/s)")
    print()
    print(f"Fit over {len(pts)} causal prompts (32/8, head 128, bf16), edge tiles weighted {a.edge_weight}:")
    print(f"a 128 x 128 tile takes {t:.3f} us on an SM ({2 * 2 * 128 ** 3 / t / 1e6:.2f} TFLOP/s an SM,"
          f" {2 * 2 * 128 ** 3 / t / 1e6 * SMS / roof * 100:.0f}% of the roof over {SMS} SMs);"
          f" an item costs {c:.2f} us besides its tiles ({c / t:.2f} tiles' time).")
    print()
    print("| case | items | tiles per item (weighted) | measured | fit | item overhead's share |"
          " persistent, h = 0.25 | h = 0.5 | h = 0.75 | persistent, measured |")
    print("| --- | ---: | ---: | --- | --- | ---: | --- | --- | --- | --- |")
    for p in pts:
        fit = (p["tiles"] * t + p["n"] * c) / SMS / 1e3
        share = p["n"] * c / (p["tiles"] * t + p["n"] * c)
        cells = []
        for h in (0.25, 0.5, 0.75):
            ms = (p["tiles"] * t + p["n"] * c * (1 - h)) / SMS / 1e3
            tf = p["flops"] / ms / 1e9
            cells.append(f"{tf:.0f} TFLOP/s ({tf / roof * 100:.0f}%)")
        meas = p["flops"] / p["ms"] / 1e9
        print(f"| {p['case']} | {p['n']} | {p['tiles'] / p['n']:.2f} | {p['ms']:.3f} ms, {meas:.0f} TFLOP/s"
              f" ({meas / roof * 100:.0f}%) | {fit:.3f} ms | {share * 100:.0f}% | " + " | ".join(cells) + " | "
              + (f"{persistent[p['case']]['tflops']:.0f} TFLOP/s ({persistent[p['case']]['tflops'] / roof * 100:.0f}%)"
                 if p["case"] in persistent else "-") + " |")
    print()
    print("Balance over the SMs (each item weighted by its tiles and the fitted per-item cost): the busiest"
          " SM's work above the average.")
    print()
    print("| case | persistent, round-robin (the kernel's) | every other round reversed | one-item grid (greedy) |")
    print("| --- | ---: | ---: | ---: |")
    for p in pts:
        r, sn, gr = balance(item_weights(p["b"], p["L"], edge=a.edge_weight, per_item=c / t))
        print(f"| {p['case']} | {r * 100:.1f}% | {sn * 100:.1f}% | {gr * 100:.1f}% |")


if __name__ == "__main__":
    main()
