#!/usr/bin/env python3
"""Instruction budget of reshape_and_cache's per-token kernel (cuda/reshape_and_cache.cu,
reshape_and_cache_kernel: the flash NHD/HND and combined layouts, and vLLM's where its rows are not
aligned), from its sm_90 SASS, against the copy roof.

The kernel takes a CTA row of threads a token (threads per token: the token's 16-byte chunks a KV
head's keys make, all heads, rounded up to a warp, at most 256). At Llama's 8 KV heads of 128
16-bit elements that is 128 chunks: every thread converts one chunk of keys and one of values
and exits, so its whole path is the work of one chunk pair. For each (input, cache) dtype pair the
validators accept:
  1. compile with the build's own nvcc flags to an sm_90 cubin (budget.compile_cubin): registers;
  2. disassemble with branch targets resolved, and take the longest forward path from the entry to
     an EXIT that holds the two 16-byte loads and two vector stores of a chunk pair and avoids the
     element-by-element paths (a head not a multiple of 16 bytes, misaligned rows, vLLM's
     transposed values) and the float division's slow-path call (budget.longest_forward_path);
  3. bound the rate by issue: SMs x IPC x clock x bytes a warp moves / path length, at the issue
     limit (4 warp instructions a clock) and at 2.14 (what ncu measured for decode on the H100;
     not a measurement of this kernel).
Loads in flight do not bind here: each thread has its 32 bytes of loads in flight, more per SM
than pa_convert's chunks, which scripts/convert_budget.py finds 2.6x what the H100's roof needs.
A GPU measurement (issue 15: the cache ops against the copy roof at serving sizes) overrules it.

Usage: python3 scripts/cache_budget.py [--build build] [--out FILE.md]
"""
import argparse
import collections
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import budget  # noqa: E402  (scripts/budget.py: the shared compile, SASS and machine helpers)

SRC = "cuda/reshape_and_cache.cu"
DTYPES = {0: ("f32", 4), 1: ("f16", 2), 2: ("bf16", 2), 3: ("e4m3", 1), 4: ("e5m2", 1)}
IPC_DECODE = 2.14
# The element-by-element statements of the per-token kernel (found by their text in SRC).
ELEMENT_PATHS = ("r[j] = src[j < n ? j : 0];", "kc[pa_kv_key_offset(&p.g, blk, h, off, d0 + j)] = kout[j];",
                 "vc[vo + (int64_t)j * bs] = vout[j];", "vc[pa_kv_value_offset(&p.g, blk, h, off, d0 + j)] = vout[j];")


def line_of(lines, text, in_kernel=True):
    """The 1-based line of SRC holding text: its first in the per-token kernel or after it (in_kernel),
    else its first."""
    start = [k for k, line in enumerate(lines) if "reshape_and_cache_kernel(const pa_rc_params p)" in line]
    found = [k + 1 for k, line in enumerate(lines) if text in line and (not in_kernel or start and k >= start[0])]
    if not found:
        sys.exit("cache_budget.py: %r is not in %s's per-token kernel" % (text, SRC))
    return found[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--out")
    a = ap.parse_args()
    with open(os.path.join(budget.ROOT, SRC)) as f:
        lines = f.read().split("\n")
    rare = {"%s:%d" % (os.path.basename(SRC), k + 1) for k, text in enumerate(lines)
            if any(e in text for e in ELEMENT_PATHS)}
    if len(rare) != len(ELEMENT_PATHS):
        sys.exit("cache_budget.py: found %d of the %d element-by-element statements in %s"
                 % (len(rare), len(ELEMENT_PATHS), SRC))
    with tempfile.TemporaryDirectory() as work:
        ptxas, _, funcs = budget.copy_kernel_sass(a.build, SRC, work, "cache")
    need = [("16-byte loads", lambda ins: ins["op"].startswith("LDG") and ".128" in ins["op"], 2),
            ("stores", lambda ins: ins["op"].startswith("STG"), 2)]
    rows = []
    for name, insts in funcs.items():
        m = re.search(r"reshape_and_cache_kernelILi(\d)ELi(\d)E", name)
        if not m:
            continue
        i, o = int(m.group(1)), int(m.group(2))
        found = budget.forward_path(insts, lambda ins: ins["line"] in rare or ins["op"].startswith("CALL"), need)
        path = len(found)
        by_line = collections.Counter(insts[k]["line"] for k in found)
        vec = 16 // DTYPES[i][1]
        warp_bytes = 32 * (2 * 16 + 2 * vec * DTYPES[o][1])  # keys and values: read 16 bytes, write a chunk
        rows.append(dict(i=i, o=o, regs=ptxas.get(name, {}).get("regs"), path=path, warp_bytes=warp_bytes,
                         by_line=by_line))
    rows.sort(key=lambda r: (r["o"] >= 3, r["i"], r["o"]))
    out = []
    w = out.append
    w("# reshape_and_cache, per-token kernel: instruction budget (sm_90 SASS)\n")
    w("Made by `python3 scripts/cache_budget.py` from %s. One thread a chunk pair (a 16-byte chunk of a "
      "token's keys and the same of its values), the flash layouts' vector path; H100 SXM (copy roof %.0f GB/s "
      "measured) and H200 (%.0f GB/s), %d SMs at %.3f GHz.\n"
      % (budget.made_from(SRC), budget.H100["roof_gbs"], budget.H200["roof_gbs"], budget.H100["sms"],
         budget.H100["clock_ghz"]))
    w("| input -> cache | regs | warp insts a chunk pair | bytes a warp | issue bound at 4 IPC, H100 / H200 "
      "| at %.2f IPC, H100 / H200 |" % IPC_DECODE)
    w("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        f = [budget.roof_fraction(r["warp_bytes"], r["path"], m, ipc=ipc)[1] if r["path"] else 0.0
             for ipc in (None, IPC_DECODE) for m in (budget.H100, budget.H200)]
        w("| %s -> %s | %s | %d | %d | %.2fx / %.2fx | %.2fx / %.2fx |"
          % (DTYPES[r["i"]][0], DTYPES[r["o"]][0], r["regs"], r["path"], r["warp_bytes"], f[0], f[1], f[2], f[3]))
    w("")
    for r in rows:
        if r["i"] == 2 and r["o"] in (2, 3):
            w("Where %s -> %s's %d instructions come from (source lines, the most first): %s.\n"
              % (DTYPES[r["i"]][0], DTYPES[r["o"]][0], r["path"],
                 ", ".join("%s %d" % (line, n) for line, n in r["by_line"].most_common(8))))
    w("(In %s: line %s is the slot's block, %s its offset in the block, %s the chunk's head; kv_index.h's "
      "lines are the layout's offsets; line %s is the division by the fp8 scale.)\n"
      % (SRC, line_of(lines, "const int64_t blk = slot / bs;"), line_of(lines, "const int32_t off = (int32_t)(slot - blk * bs);"),
         line_of(lines, "const int h = c / cph;"), line_of(lines, "pa::to_float<IN>(v) / scale", False)))
    copy = [r for r in rows if r["i"] == r["o"]]
    fp8 = [r for r in rows if r["o"] >= 3]
    w("Reading: a same-dtype write issues %d-%d warp instructions a chunk pair, most of them integer work a "
      "thread of one chunk pair shares with no other: the layout's offsets, the slot's block by a 64-bit "
      "division, the chunk's head by a 32-bit one. Into fp8 the path is %d-%d: each element also "
      "pays an IEEE division by the scale, which the reference and vLLM's cache writes make and a product with "
      "the reciprocal would not match (cache_ops/fp8_codes_next_to_midpoints). So the writes into fp8 can be "
      "issue-bound: at the issue limit about the H100's roof, below the H200's, and at decode's IPC about half "
      "the H100's. A prediction: the cache ops' rates at serving sizes were not measured on the H100 "
      "(gpu-report-2026-11-27-H100.md), so issue 15 has both this and the IPC to measure. Where it binds, the "
      "integer work is the first thing to share (several chunks a thread); the division stays (an exact "
      "faster quotient, tried for pa_convert on 2026-12-08, cost more than it saved: "
      "benchmarks/results/budget-notes/convert-chunks-2026-12-08.md)."
      % (min(r["path"] for r in copy), max(r["path"] for r in copy), min(r["path"] for r in fp8),
         max(r["path"] for r in fp8)))
    budget.emit_report(out, a.out)


if __name__ == "__main__":
    main()
