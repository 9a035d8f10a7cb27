#!/usr/bin/env python3
"""Instruction budget of pa_convert's kernel (cuda/convert.cu), from its sm_90 SASS, against the
copy roof, calibrated on the one conversion a GPU has timed.

The kernel is a copy: a thread loads a chunk of the source (16 bytes), converts it in registers and
stores it. So the question is the copy roof's: do the instruction stream or the loads in flight hold
it below the roof? For each of the 25 (source, destination) dtype pairs:
  1. compile with the build's own nvcc flags to an sm_90 cubin (budget.compile_cubin): registers,
     spills (ptxas -v), local memory (cuobjdump -res-usage), CTAs of 256 threads an SM;
  2. disassemble (nvdisasm, branch targets resolved) and take the longest forward path from the
     entry to an EXIT that holds one 16-byte load (budget.longest_forward_path: one trip of the
     chunk loop and one of the element loop; the float division's slow path, a subroutine only a
     denormal, infinite or zero operand takes, avoided with its call): what a warp issues where
     each thread converts one chunk (every input of up to 2^19 x 256 chunks, 32 M elements of
     f32, 134 M of fp8), counted in full though a thread that takes a chunk skips the element
     loop's body unless it also takes a tail element;
  3. bound the rate two ways:
       issue:     SMs x 4 warp instructions a clock x clock x bytes a warp moves / path length;
       in flight: the source bytes a resident warp has loading (32 threads x one chunk) x resident
                  warps, against roof x latency (Little's law).
The latency is calibrated, not assumed: the H100 report of 2026-11-27 (run 12) timed f32 to bf16
over 67 M elements at 1947 GB/s (bytes read + written) with the kernel before chunks (one 4-byte load
a thread, --baseline's source). Little's law gives the latency that rate implies for the loads that
kernel held in flight: bytes in flight an SM x SMs / rate. Where that kernel was also near its issue
bound the latency is overstated, which only makes the chunked kernel's in-flight ratios pessimistic.
A GPU measurement (pagedattn bench convert under issue 15) overrules all of it.

Usage: python3 scripts/convert_budget.py [--build build] [--baseline REV] [--out FILE.md]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import budget  # noqa: E402  (scripts/budget.py: the shared compile, SASS and machine helpers)

SRC = "cuda/convert.cu"
THREADS = 256  # kThreads
DTYPES = {0: ("f32", 4), 1: ("f16", 2), 2: ("bf16", 2), 3: ("e4m3", 1), 4: ("e5m2", 1)}
# The measurement the latency is calibrated on (gpu-report-2026-11-27-H100.md, "Other ops", run 12).
CALIB = dict(src=0, dst=2, gbs=1947.0, report="benchmarks/results/gpu-report-2026-11-27-H100.md")
BASELINE = "e6616ff"
IPC_DECODE = 2.14  # warp instructions a clock an SM, ncu on the H100 for decode (budget.py's calibration)  # the last commit whose kernel took one element a thread (4-byte f32 loads)


def instances(build, text, work, tag):
    """{(src, dst): dict(regs, spill, local, path)} of the kernel in text (None: the file)."""
    ptxas, res, funcs = budget.copy_kernel_sass(build, SRC, work, tag, text)
    out = {}
    for name, insts in funcs.items():
        m = re.search(r"convert_kernelILi(\d)ELi(\d)E", name)
        if not m:
            continue
        info, ru = ptxas.get(name, {}), res.get(name, {})
        regs = info.get("regs", ru.get("regs", 0))
        ctas, limit = budget.ctas_per_sm(regs, THREADS, 0)
        # the path a thread with a chunk takes: one 16-byte load (the kernel before chunks: none)
        need = [("chunk load", lambda ins: ins["op"].startswith("LDG") and ".128" in ins["op"],
                 1 if text is None else 0)]
        out[(int(m.group(1)), int(m.group(2)))] = dict(
            regs=regs, spill=info.get("spill_st", 0) + info.get("spill_ld", 0), local=ru.get("local", 0),
            path=budget.longest_forward_path(insts, lambda ins: ins["op"].startswith("CALL"), need),
            ctas=ctas, limit=limit)
    return out


def at_ipc(rows, m, into_fp8):
    """[(source dtypes, least fraction of m's roof)] over the pairs into fp8 (or the others) at IPC_DECODE,
    grouped by source width (f32, 16-bit, fp8)."""
    groups = {}
    for (s, d), r in rows.items():
        if (DTYPES[d][0] in ("e4m3", "e5m2")) != into_fp8:
            continue
        vec = 16 // DTYPES[s][1]
        f = min(1.0, budget.roof_fraction(32 * (16 + vec * DTYPES[d][1]), r["path"], m, ipc=IPC_DECODE)[1])
        g = {4: "f32", 2: "f16 and bf16", 1: "fp8"}[DTYPES[s][1]]
        groups[g] = min(groups.get(g, 1.0), f)
    return [(g, groups[g]) for g in ("f32", "f16 and bf16", "fp8") if g in groups]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", default=BASELINE, help="the commit of the calibrated kernel's source")
    ap.add_argument("--out")
    a = ap.parse_args()
    old_text = subprocess.run(["git", "show", "%s:%s" % (a.baseline, SRC)], cwd=budget.ROOT, capture_output=True,
                              text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as work:
        new = instances(a.build, None, work, "new")
        old = instances(a.build, old_text, work, "old")
    h100, h200 = budget.H100, budget.H200
    # Calibration: the old kernel's f32 -> bf16 loads in flight (one 4-byte element a thread).
    c = old[(CALIB["src"], CALIB["dst"])]
    old_inflight = c["ctas"] * THREADS * DTYPES[CALIB["src"]][1]  # bytes an SM
    latency_ns = old_inflight * h100["sms"] / CALIB["gbs"]  # bytes / (GB/s) = ns
    g_old, f_old = budget.roof_fraction(32 * (4 + 2), c["path"], h100)
    out = []
    w = out.append
    w("# pa_convert: instruction budget (sm_90 SASS)\n")
    w("Made by `python3 scripts/convert_budget.py` from %s, against the kernel at %s for the calibration. "
      "Machines: H100 SXM (copy roof %.0f GB/s measured) and H200 (%.0f GB/s, the device tool's copy), "
      "%d SMs at %.3f GHz issuing 4 warp instructions a clock each.\n"
      % (budget.made_from(SRC),
         a.baseline, h100["roof_gbs"], h200["roof_gbs"], h100["sms"], h100["clock_ghz"]))
    w("## Calibration\n")
    w("The kernel at %s (one element a thread) converted f32 to bf16 at %.0f GB/s on the H100 (%s, run 12), "
      "%.0f%% of the copy roof. It has %d registers, so %d CTAs of %d threads an SM (%s), each thread with one "
      "4-byte load in flight: %.1f KiB an SM. Little's law: %.1f KiB x %d SMs / %.0f GB/s = **%.0f ns**, the "
      "latency those loads saw (CTA turnover included: each thread converted one element and exited). Its "
      "issue bound was %.0f GB/s (%.2fx the roof; %d warp instructions for 192 bytes), so the loads in "
      "flight, not the issue slots, held it at %.0f%%.\n"
      % (a.baseline, CALIB["gbs"], CALIB["report"], 100 * CALIB["gbs"] / h100["roof_gbs"], c["regs"], c["ctas"],
         THREADS, c["limit"], old_inflight / 1024, old_inflight / 1024, h100["sms"], CALIB["gbs"], latency_ns,
         g_old, f_old, c["path"], 100 * CALIB["gbs"] / h100["roof_gbs"]))
    need = [m["roof_gbs"] * latency_ns / m["sms"] for m in (h100, h200)]  # bytes an SM at that latency
    w("## The chunked kernel\n")
    w("Per (source, destination) pair: the chunk (source bytes of one 16-byte load, destination bytes it "
      "makes), registers and spills, CTAs an SM, the warp instructions of one chunk a thread (the longest "
      "forward path), the bounds by issue, and the source bytes in flight an SM against what the roof "
      "needs at %.0f ns (%.1f KiB on the H100, %.1f KiB on the H200). The rate allowed is the least of the "
      "roof, the issue bound and the in-flight bound (in flight / latency).\n"
      % (latency_ns, need[0] / 1024, need[1] / 1024))
    w("| source -> destination | chunk in / out | regs | spills / local | CTAs/SM (limit) | warp insts a chunk "
      "| issue bound, H100 / H200 | in flight an SM | in flight / needed, H100 / H200 | allowed, H100 / H200 |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    worst = [1.0, 1.0]
    for (s, d) in sorted(new):
        r = new[(s, d)]
        (sn, ss), (dn, ds) = DTYPES[s], DTYPES[d]
        vec = 16 // ss
        warp_bytes = 32 * (16 + vec * ds)
        g100, f100 = budget.roof_fraction(warp_bytes, r["path"], h100)
        g200, f200 = budget.roof_fraction(warp_bytes, r["path"], h200)
        inflight = r["ctas"] * THREADS * 16
        lat_gbs = inflight * h100["sms"] / latency_ns  # the in-flight bound, GB/s of source bytes
        # source bytes are 16 / (16 + out) of the bytes moved
        lat_total = lat_gbs * warp_bytes / (32 * 16)
        allowed = [min(1.0, f, lat_total / m["roof_gbs"]) for f, m in ((f100, h100), (f200, h200))]
        worst = [min(worst[0], allowed[0]), min(worst[1], allowed[1])]
        w("| %s -> %s | 16 / %d B | %d | %d / %d | %d (%s) | %d | %.2fx / %.2fx | %.0f KiB | %.1fx / %.1fx | "
          "%.0f%% / %.0f%% |"
          % (sn, dn, vec * ds, r["regs"], r["spill"], r["local"], r["ctas"], r["limit"], r["path"], f100, f200,
             inflight / 1024, inflight / need[0], inflight / need[1], 100 * allowed[0], 100 * allowed[1]))
    w("")
    f32_bf16 = new[(0, 2)]
    w("Reading: the calibrated conversion, f32 to bf16, held %.1f KiB of loads in flight an SM and reached %.0f%% "
      "of the roof; the chunked kernel holds %.0f KiB (%d CTAs of 16 bytes a thread), %.1fx what the H100's roof "
      "needs at the calibrated latency, and its issue bound is %.2fx the roof. Over all 25 pairs the least rate "
      "allowed is %.0f%% of the H100's roof and %.0f%% of the H200's. That is a bound, not a prediction of "
      "the rate: DRAM efficiency, the launch and the last wave remain (67 M elements of f32 to bf16 are 402 MB: "
      "about 134 us at the H100's roof, against one launch of a few us). An input off 16 bytes (a tensor slice "
      "at an odd element) takes the element loop for all of it, the calibrated kernel's rate. Not yet run on a GPU.\n"
      % (old_inflight / 1024, 100 * CALIB["gbs"] / h100["roof_gbs"], f32_bf16["ctas"] * THREADS * 16 / 1024,
         f32_bf16["ctas"], f32_bf16["ctas"] * THREADS * 16 / need[0],
         budget.roof_fraction(32 * 24, f32_bf16["path"], h100)[1], 100 * worst[0], 100 * worst[1]))
    w("The issue bounds take the SMs' issue limit, 4 warp instructions a clock. The pairs into fp8 are the ones "
      "it can bind: each element pays an IEEE division by the scale (the scale's reciprocal and its refinement, "
      "the quotient and its correction, and the check that sends a denormal or huge operand to the slow path: "
      "about 10 of its instructions), kept because the reference and vLLM's cache writes divide, and a product "
      "with the reciprocal differs from the quotient in the last bit now and then, which near an fp8 rounding "
      "boundary changes the stored code (`gpu_basic/convert_quotients_next_to_fp8_midpoints` and "
      "`cache_ops/fp8_codes_next_to_midpoints` fail a kernel that multiplies). A quotient that took the product "
      "where no fp8 midpoint lies within a few steps of it, and divided only there (exact by the product's error "
      "bound), was tried on 2026-12-08: its check cost more than the division's fast path saves (bf16 to e4m3, "
      "235 warp instructions a chunk against 190), so it was not kept. At %.2f warp instructions a clock (what ncu measured for decode on the "
      "H100, a bound here, not a measurement of this kernel) the pairs into fp8 would be held to %s of the "
      "H100's roof; every pair into f32, f16 or bf16 %s."
      % (IPC_DECODE, ", ".join("%.0f%% from %s" % (100 * f, g) for g, f in at_ipc(new, h100, True)),
         "stays at the roof" if all(f >= 1.0 for g, f in at_ipc(new, h100, False)) else
         "too would fall below it (%s)" % ", ".join("%.0f%% from %s" % (100 * f, g) for g, f in at_ipc(new, h100, False))))
    budget.emit_report(out, a.out)


if __name__ == "__main__":
    main()
