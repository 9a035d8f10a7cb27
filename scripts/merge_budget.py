#!/usr/bin/env python3
"""Instruction budget of pa_merge_attn_states' kernel (cuda/merge_states.cu), from its sm_90 SASS.

The kernel is a copy: per row chunk a thread loads 16 bytes (or one element) of each part,
writes as many, and the row's two lse floats are read once a thread. So the question is the
copy roof's: does the instruction stream or the bytes in flight hold it below the roof?

For each of the six instances (f32, f16, bf16; 16-byte chunks or one element a thread):
  1. compile with the build's own nvcc flags to an sm_90 cubin (scripts/budget.py's
     compile_cubin): registers, spills, stack (ptxas -v), local memory (cuobjdump -res-usage);
  2. disassemble (nvdisasm) and find the longest path from the entry to an EXIT that takes no
     back edge and enters no subroutine (the float division's slow path, which only a
     denormal or infinite operand takes): the instructions a warp issues for a row chunk
     of one pass, which is every thread's whole work where a row has at most 128 chunks
     (every head up to 1024 f16/bf16 or 512 f32 elements on 16-byte chunks);
  3. bound the copy rate two ways:
       issue:     SMs x 4 warp instructions a clock x clock x bytes a warp moves / path length;
       in flight: bytes of loads a resident warp has outstanding (its 32 threads' two chunks)
                  x resident warps, against roof x latency (Little's law), at an assumed
                  loaded-HBM latency (LATENCY_NS below: an assumption, not a measurement).
The fraction of the copy roof the instruction stream allows is the issue bound over the roof
(capped at 1); a GPU measurement (pagedattn bench merge under issue 15) overrules it.

Usage: python3 scripts/merge_budget.py [--build build] [--out FILE.md]
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import budget  # noqa: E402  (scripts/budget.py: the shared compile, SASS and machine helpers)

SRC = "cuda/merge_states.cu"
THREADS = 128  # kThreads
LATENCY_NS = 800.0  # assumed latency of a global load under load on Hopper HBM (not measured here)
DTYPES = {0: ("f32", 4), 1: ("f16", 2), 2: ("bf16", 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--out")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        ptxas, res, funcs = budget.copy_kernel_sass(a.build, SRC, work, "merge")
    rows = []
    for name, insts in funcs.items():
        m = re.search(r"merge_states_kernelILi(\d)ELi(\d)E", name)
        if not m:
            continue
        dt, vec = int(m.group(1)), int(m.group(2))
        label, es = DTYPES[dt]
        info, ru = ptxas.get(name, {}), res.get(name, {})
        path = budget.longest_forward_path(insts)
        chunk = vec * es
        warp_bytes = 32 * 3 * chunk + 32 * 12  # rows: 2 reads + 1 write; lse: 2 reads + 1 write a thread
        ctas, limit = budget.ctas_per_sm(info.get("regs", ru.get("regs", 0)), THREADS, 0)
        rows.append(dict(label=label, vec=vec, chunk=chunk, regs=info.get("regs"), spill=info.get("spill_st", 0)
                         + info.get("spill_ld", 0), local=ru.get("local", 0), path=path,
                         warp_bytes=warp_bytes, ctas=ctas, limit=limit))
    rows.sort(key=lambda r: (r["label"] != "f32", r["label"], -r["vec"]))
    out = []
    w = out.append
    w("# pa_merge_attn_states: instruction budget (sm_90 SASS)\n")
    w("Made by `python3 scripts/merge_budget.py` from %s. Per instance: registers and spills "
      "(ptxas -v), local memory (cuobjdump -res-usage), CTAs of %d threads per SM, and the longest "
      "path a warp issues for one row chunk a thread (entry to EXIT, no back edge, no subroutine). "
      "Bytes a warp moves: 32 threads x (two chunks read, one written) plus the lse pair read and the "
      "merged lse written (12 bytes a thread, counted in full though threads of a row share the "
      "pair's sectors). Machines: H100 SXM (copy roof %.0f GB/s measured) and H200 (%.0f GB/s, the "
      "device tool's copy), 132 SMs at %.3f GHz issuing 4 warp instructions a clock each.\n"
      % (budget.made_from(SRC), THREADS, budget.H100["roof_gbs"], budget.H200["roof_gbs"], budget.H100["clock_ghz"]))
    w("| dtype | chunk | regs | spills / local | CTAs/SM (limit) | warp insts a chunk | bytes a warp | "
      "issue bound, H100 | issue bound, H200 | loads in flight an SM | needed at %d ns, H100 / H200 |"
      % LATENCY_NS)
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        g100, f100 = budget.roof_fraction(r["warp_bytes"], r["path"], budget.H100)
        g200, f200 = budget.roof_fraction(r["warp_bytes"], r["path"], budget.H200)
        inflight = r["ctas"] * THREADS * 2 * r["chunk"]  # bytes of row loads outstanding an SM
        need = [m["roof_gbs"] * LATENCY_NS / m["sms"] for m in (budget.H100, budget.H200)]  # bytes an SM
        w("| %s | %d B | %s | %d / %d | %d (%s) | %d | %.0f | %.0f GB/s = %.2fx roof | %.0f GB/s = %.2fx roof | "
          "%.1f KiB | %.1f / %.1f KiB (%.1fx / %.1fx) |"
          % (r["label"], r["chunk"], r["regs"], r["spill"], r["local"], r["ctas"], r["limit"], r["path"],
             r["warp_bytes"], g100, g100 / budget.H100["roof_gbs"], g200, g200 / budget.H200["roof_gbs"],
             inflight / 1024, need[0] / 1024, need[1] / 1024, inflight / need[0], inflight / need[1]))
    w("")
    w("Reading: where both ratios pass 1 for an instance, neither the instruction stream nor the loads "
      "in flight keep it from the copy roof; what is left is the DRAM's own efficiency and, at small "
      "problems, the launch and the tail (a decode batch of 256 tokens x 32 heads x head 128 in f16 is "
      "6 MiB moved: about 2 us at the H100's roof, on the order of a launch). The one-element "
      "instances serve only heads whose bytes are not a multiple of 16, or misaligned or oddly "
      "strided rows; vLLM's shapes all take 16-byte chunks.")
    budget.emit_report(out, a.out)


if __name__ == "__main__":
    main()
