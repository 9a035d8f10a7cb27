#!/usr/bin/env python3
"""The figures of `pagedattn bench OP`'s GPU rows, in interpret mode (no GPU needed).

`bench OP --interp` runs the GPU benchmark path on the CPU: the device copies,
the roofs, the kernels and the cuBLAS baseline, timed with CUDA events on the
fake runtime's simulated clock (tests/interp/README.md, "The simulated clock"),
so every time there is the same at every run. Each op's row must hold, from its
own fields:

- gbps = bytes / (us_median x 1e3), tflops = flops / (us_median x 1e6);
- pct_roof = 100 x the larger of gbps / roof_gbps and tflops / roof_tflops (a
  roof of 0 gives 0), "bound" naming that one ("memory" on a tie, "" at 0);
- speedup_vs_baseline = baseline_us / us_median, and baseline_pct_roof the
  same 100 x larger fraction at baseline_us (both 0 without a baseline);
- the roof kind of its op (bench_gpu.h, the ops' headers): the read stream for
  decode and ragged, the device copy for the cache op, copy_blocks and merge,
  the pinned-host link in the swap's direction for the swaps (swap-in host to
  device), none for prefill (no bytes; interpret mode has no GEMM roof);
- a swap is one copy of its bytes over the link its roof measures, so on the
  simulated clock it reaches its roof exactly: pct_roof 100;
- one roof a kind in every row, and each roof what the clock's model gives its
  measurement (hand arithmetic from the model, not a timing): the copy roof,
  1 MiB device to device at 1 ps a byte with bytes read and written counted,
  2 x 1 MiB / 1.048576 us = 2000 GB/s; the read roof, 1 MiB read in one 5 us
  launch, 1048576 / 5000 ns = 209.7152 GB/s; host to device 20 ps a byte,
  50 GB/s; device to host 40 ps a byte, 25 GB/s.

Convert is left out (64 Mi elements: 16 s here); its row is merge's code.

  tests/cli/bench_rows_interp.py build/benchmarks/pagedattn
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_options import rates_wrong, rows  # noqa: E402

HEADS = ["--heads", "8/2"]
RUNS = [
    ["decode", "--variant", "all", "--seqs", "2", "--ctx", "100"] + HEADS,
    ["ragged", "--seqs", "1", "--decodes", "2", "--ctx", "100", "--qlen", "16"] + HEADS,
    ["prefill", "--variant", "context", "--seqs", "2", "--ctx", "64", "--qlen", "20"] + HEADS,
    ["cache", "--seqs", "2"] + HEADS,
    ["blocks", "--variant", "copy", "--layers", "2", "--seqs", "2"] + HEADS,
    ["blocks", "--variant", "swap-in", "--seqs", "2"] + HEADS,
    ["blocks", "--variant", "swap-out", "--seqs", "2"] + HEADS,
    ["merge", "--seqs", "20", "--heads", "4/4"],
]
KIND = {"decode": "read", "ragged": "read", "prefill": "none", "reshape_and_cache": "copy", "copy_blocks": "copy",
        "merge": "copy", "swap_blocks_in": "pinned-h2d", "swap_blocks_out": "pinned-d2h"}
ROOF = {"copy": 2000.0, "read": 1048576 / 5000, "pinned-h2d": 50.0, "pinned-d2h": 25.0}


def near(got, want, rel=1e-4, abs_=2e-3):
    return abs(got - want) <= rel * abs(want) + abs_


def pct(work, us, per_us, roof):
    return 100.0 * work / (us * per_us) / roof if work > 0 and us > 0 and roof > 0 else 0.0


def row_wrong(r):
    why = rates_wrong(r)
    if why:
        return why
    us, base = r["us_median"], r["baseline_us"]
    if us <= 0:
        return f"us_median {us}: the simulated clock gives every GPU row a time"
    kind = KIND.get(r["op"])
    if kind is None:
        return f"op {r['op']} has no roof kind here"
    if r["roof_gbps_kind"] != kind:
        return f"roof_gbps_kind {r['roof_gbps_kind']}, want {kind}"
    mem = pct(r["bytes"], us, 1e3, r["roof_gbps"])
    comp = pct(r["flops"], us, 1e6, r["roof_tflops"])
    bound = "" if mem <= 0 and comp <= 0 else "memory" if mem >= comp else "compute"
    if not near(r["pct_roof"], max(mem, comp)):
        return f"pct_roof {r['pct_roof']}, want 100 x max({mem / 100:.6g}, {comp / 100:.6g}) = {max(mem, comp):.6g}"
    if r["bound"] != bound:
        return f"bound {r['bound']!r}, want {bound!r} (% of the memory roof {mem:.6g}, of the compute roof {comp:.6g})"
    want = max(pct(r["bytes"], base, 1e3, r["roof_gbps"]), pct(r["flops"], base, 1e6, r["roof_tflops"]))
    if not near(r["baseline_pct_roof"], want):
        return f"baseline_pct_roof {r['baseline_pct_roof']}, want {want:.6g} (the larger fraction at baseline_us {base})"
    want = base / us if base > 0 else 0.0
    if not near(r["speedup_vs_baseline"], want, abs_=2e-4):
        return f"speedup_vs_baseline {r['speedup_vs_baseline']}, want baseline_us / us_median = {want:.6g}"
    if kind.startswith("pinned") and not near(r["pct_roof"], 100.0):
        return f"pct_roof {r['pct_roof']}: a swap is its link's copy, 100% of it on the simulated clock"
    if kind in ROOF and not near(r["roof_gbps"], ROOF[kind], rel=1e-5):
        return f"{kind} roof {r['roof_gbps']} GB/s, want {ROOF[kind]:.6g} from the simulated clock's model"
    return None


def main():
    cli, failed, seen = sys.argv[1], 0, {}
    for args in RUNS:
        cmd = [cli, "bench"] + args + ["--interp", "--json", "-"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        got = rows(p.stdout) if p.returncode == 0 else []
        if not got:
            print(f"FAIL {' '.join(args)}: exit {p.returncode}, {len(got)} rows\n{p.stderr[-2000:]}")
            failed += 1
        for r in got:
            why = row_wrong(r)
            kind = r["roof_gbps_kind"]
            if not why and kind in seen and seen[kind][0] != r["roof_gbps"]:
                why = f"{kind} roof {r['roof_gbps']}, {seen[kind][1]} had {seen[kind][0]}: one roof a kind"
            seen.setdefault(kind, (r["roof_gbps"], r["op"]))
            print(f"{'FAIL' if why else 'ok  '} {r['op']} {r['impl']}: " + (why or
                  f"{r['us_median']} us, {r['pct_roof']}% of {kind} {r['roof_gbps']}, x{r['speedup_vs_baseline']}"))
            failed += why is not None
    print(f"{failed} failed" if failed else "all rows hold")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
