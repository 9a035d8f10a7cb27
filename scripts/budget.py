#!/usr/bin/env python3
"""Instruction budget of the hot kernels, counted from their sm_90 SASS.

For every instance of a kernel family (--family decode, the default; prefill
and ragged, issue 14 item 7) this script

  1. compiles the instance source to a cubin with the build's own flags (taken
     from build/compile_commands.json) plus -cubin -arch=sm_90 -lineinfo, and
     reads ptxas -v: registers, spill bytes, stack;
  2. reads cuobjdump -res-usage (registers, static shared memory, local memory)
     and disassembles with nvdisasm -g (SASS with source lines);
  3. finds the steady-state loop in the SASS: every backward branch closes a
     loop [branch target, branch]; the family's `select_loop` picks one (for
     decode: the outermost loop holding both a barrier and an async copy);
  4. counts the loop body by instruction class, and weights the loops nested
     inside it by trip counts from the family's model (a kernel whose inner
     loops are fully unrolled needs no model: its body is its tile);
  5. turns instructions per tile into the issue-slot roof: an SM issues at most
     4 warp instructions per clock (one per sub-partition), so a tile of B bytes
     costing I warp instructions per CTA lets the GPU move at most
         SMs x 4 x clock x B / I  bytes per second,
     which, against the measured copy roof, is the largest fraction of the roof
     that the instruction stream allows (capped at 100%). Only SMs with CTAs
     issue: a grid of C CTAs keeps C / (SMs x ceil(C / SMs)) of the SMs' issue
     slots busy (grid_share; v1 at b=1 x 32K is 8 or 32 CTAs on 132 SMs).

prefill and ragged (the tensor-core kernels) differ in three ways:
  - the roof is the tensor pipe: 4096 dense f16/bf16 FLOP per SM per clock (one
    HMMA.16816 per SM per clock; wgmma the same rate), 949 TFLOP/s at the 1.755
    GHz the model uses (NVIDIA's 989 is the same rate at 1.83 GHz); a tile's useful
    FLOPs against its HMMA count at mma.sync's measured 0.67 HMMA.16816 per SM per
    clock, its warp instructions at 4 per SM per clock, and its shared-memory bytes
    at 128 per SM per clock give three bounds as fractions of that peak, and the
    least of them is what the arithmetic allows;
  - the tile loop is the innermost loop holding an HMMA, a barrier and a
    cp.async (ragged's sits in the persistent CTA's work-item loop);
  - their kernels keep every feature behind runtime branches in one body, so
    a tile is counted along one path: the heaviest path through the loop body
    that avoids the source lines of the features the shape leaves off and
    issues exactly the shape's cp.async count (ragged: and HMMA count), rolled
    copy loops weighted by the trips the family's model gives. Prologue and
    epilogue (per CTA, or per work item) are counted the same way.
  The H100 measurement of the prefill target shape calibrates the count.

The tools: cuobjdump and nvdisasm from PATH, /usr/local/cuda/bin, or a pip
install of nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm under /tmp/nvtools
(done here when neither is found; --no-install prints the command instead).

Usage: python3 scripts/budget.py [--build build] [--family decode|prefill|ragged|hopper]
                                 [--out benchmarks/results/budget-FAMILY-DATE.md [--append]]
                                 [--label before] [--json rows.json] [--notes reading.md]
  e.g. python3 scripts/budget.py --family prefill --out benchmarks/results/budget-prefill-DATE.md
       python3 scripts/budget.py --family ragged --append --out benchmarks/results/budget-prefill-DATE.md
"""
import argparse
import datetime
import glob
import json
import math
import os
import pickle
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
import nvcc_cmd  # scripts/nvcc_cmd.py, beside this file

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# ---- the machine (H100 SXM) --------------------------------------------------------
H100 = dict(
    sms=132,
    issue_per_clock=4,  # warp instructions per clock per SM (4 sub-partitions)
    clock_ghz=1.755,
    roof_gbs=2998.0,  # device-to-device copy measured on the H100 (gpu-report-2026-11-22-H100.md)
    regs_per_sm=65536,
    reg_alloc_unit=256,  # registers are allocated per warp in units of 256
    smem_per_sm=228 * 1024,
    smem_per_cta_reserved=1024,  # sm_90 reserves 1 KiB of shared memory per CTA (in cuobjdump's SHARED: cta_smem)
    smem_per_cta_max=227 * 1024,
    threads_per_sm=2048,
    ctas_per_sm=32,
    schedulers=4,
)
# The H200 (SXM): the H100's processor (132 SMs, the same clocks and issue rate) with
# HBM3e; only the roof differs. 4300 GB/s is the device-to-device copy (bytes read +
# written) measured on this workplace's H200 machines (the device tool's KINDS.md,
# 2026-10-28 and 2026-11-04), not yet by gpu-check; the vendor's figure is 4.8 TB/s.
H200 = dict(H100, roof_gbs=4300.0)

# ---- tools ---------------------------------------------------------------------------
PIP_CMD = "pip install --upgrade --target /tmp/nvtools nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"


def locate_tool(name):
    """The path of a CUDA binary tool (PATH, the toolkit, or PIP_CMD's wheels), or None."""
    cands = [shutil.which(name), "/usr/local/cuda/bin/" + name]
    cands += sorted(glob.glob("/tmp/nvtools/nvidia/*/bin/" + name))
    cands += sorted(glob.glob("/tmp/nvtools/nvidia/*/*/bin/" + name))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


def find_tool(name, install):
    c = locate_tool(name)
    if c:
        return c
    if not install:
        sys.exit("budget.py: %s not found; install it with:\n  %s" % (name, PIP_CMD))
    print("budget.py: %s not found; running: %s" % (name, PIP_CMD), file=sys.stderr)
    subprocess.run(shlex.split(PIP_CMD), check=True, stdout=subprocess.DEVNULL)
    return find_tool(name, False)


# ---- compile --------------------------------------------------------------------------


def build_command(build, src):
    """The build's nvcc command for src (scripts/nvcc_cmd.py), without its ptxas and
    -Werror options, for compile_cubin to make a -cubin for sm_90: (directory, args)."""
    c = nvcc_cmd.find(build, src)
    if c is None:
        sys.exit("budget.py: %s is not in %s/compile_commands.json (meson setup %s -Dgpu_archs=90)" % (src, build, build))
    args = shlex.split(nvcc_cmd.command(c, source="drop"))
    return c["directory"], [a for a in args if not a.startswith("-Xptxas") and not a.startswith("-Werror")]


def compile_cubin(build, src, cubin, arch="sm_90", text=None):
    """ptxas -v's report of src compiled to cubin with the build's flags; with text, that text is
    compiled in src's place (another version of the file: its includes still resolve from src's
    directory)."""
    cwd, args = build_command(build, src)
    path = os.path.join(ROOT, src)
    if text is not None:
        path = cubin + ".cu"
        with open(path, "w") as f:
            f.write(text)
        args = args + ["-I", os.path.dirname(os.path.join(ROOT, src))]
    cmd = args + ["-cubin", "-arch=" + arch, "-lineinfo", "-Xptxas=-v", "-o", cubin, path]
    r = subprocess.run(["nice", "-n", "10"] + cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("budget.py: nvcc failed on %s:\n%s" % (src, r.stderr))
    return r.stderr


def ptxas_info(text):
    """{mangled kernel: dict(regs, spill_st, spill_ld, stack)} from ptxas -v."""
    info, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            cur = m.group(1)
            info.setdefault(cur, {})
            continue
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            cur = m.group(1)
            info.setdefault(cur, {})
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            info[cur].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            info[cur]["regs"] = int(m.group(1))
    # wgmma serialised by ptxas (C7514: register accesses it could not prove safe), named per function.
    for line in text.splitlines():
        m = re.search(r"\(C7514\).*function '(\S+)'", line)
        if m:
            info.setdefault(m.group(1), {})["wgmma_serialized"] = True
    return info


def res_usage(cuobjdump, cubin):
    return parse_res_usage(
        subprocess.run([cuobjdump, "-res-usage", cubin], capture_output=True, text=True, check=True).stdout)


def parse_res_usage(out):
    """Mangled function -> its registers, stack, static shared and local bytes, from the text of
    `cuobjdump -res-usage` over one architecture's code (scripts/kernel_coverage.py splits a
    fatbin's text by architecture first)."""
    res, cur = {}, None
    for line in out.splitlines():
        m = re.search(r"Function (\S+):", line)
        if m:
            cur = m.group(1)
            continue
        m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", line)
        if m and cur:
            res[cur] = dict(regs=int(m.group(1)), stack=int(m.group(2)), smem_static=int(m.group(3)),
                            local=int(m.group(4)))
    return res


# ---- SASS -------------------------------------------------------------------------------


def disassemble(nvdisasm, cubin):
    """{mangled function: [dict(addr, op, text, line, target)]}."""
    out = subprocess.run([nvdisasm, "-g", "-c", cubin], capture_output=True, text=True, check=True).stdout
    funcs, cur, line_no = {}, None, "?:0"
    for raw in out.splitlines():
        m = re.match(r"^\s*\.text\.(\S+):", raw)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = re.search(r'//## File "(.*)", line (\d+)', raw)
        if m:
            line_no = "%s:%s" % (os.path.basename(m.group(1)), m.group(2))
            continue
        m = re.match(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", raw)
        if m and cur:
            body = m.group(2).strip()
            pred = ""
            if body.startswith("@"):
                pred, body = body.split(None, 1)
            op = body.split()[0]
            tgt = None
            if op.startswith("BRA") or op.startswith("BRX") or op.startswith("CALL"):
                t = re.search(r"(0x[0-9a-f]+)\s*$", body)
                if t:
                    tgt = int(t.group(1), 16)
            funcs[cur].append(dict(addr=int(m.group(1), 16), op=op, pred=pred, text=body, line=line_no, target=tgt))
    return funcs


def resolve_labels(nvdisasm, cubin, funcs):
    """nvdisasm -g names branch targets .L_x_N; map them to addresses."""
    out = subprocess.run([nvdisasm, "-g", "-c", cubin], capture_output=True, text=True, check=True).stdout
    labels, pending = {}, []
    for raw in out.splitlines():
        m = re.match(r"^\s*(\.L_x_\d+):", raw)
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"^\s*/\*([0-9a-f]{4,})\*/", raw)
        if m:
            a = int(m.group(1), 16)
            for p in pending:
                labels[p] = a
            pending = []
    for insts in funcs.values():
        for i in insts:
            if i["op"].startswith(("BRA", "BRX", "CALL", "BSSY")):
                m = re.search(r"`?\(?(\.L_x_\d+)\)?", i["text"])
                if m and m.group(1) in labels:
                    i["target"] = labels[m.group(1)]


def loops_of(insts):
    """Backward branches: [dict(head, tail, insts index range)] sorted by span."""
    idx = {i["addr"]: k for k, i in enumerate(insts)}
    loops = []
    for k, i in enumerate(insts):
        if i["op"].startswith("BRA") and i["target"] is not None and i["target"] <= i["addr"] and i["target"] in idx:
            loops.append(dict(lo=idx[i["target"]], hi=k, line=i["line"]))
    # one loop per head: the widest back edge
    best = {}
    for l in loops:
        if l["lo"] not in best or l["hi"] > best[l["lo"]]["hi"]:
            best[l["lo"]] = l
    return sorted(best.values(), key=lambda l: (l["lo"], -l["hi"]))


# Instruction classes, first match wins.
CLASSES = [
    ("async copy (LDGSTS)", r"^LDGSTS|^LDGDEPBAR|^DEPBAR"),
    ("global load/store", r"^LDG|^STG|^LD\b|^ST\b|^RED|^ATOM"),
    ("shared load (LDS/LDSM)", r"^LDS|^LDSM"),
    ("shared store (STS)", r"^STS"),
    ("FP32 FMA/MUL/ADD", r"^FFMA|^FMUL|^FADD|^FMNMX|^FSEL|^FSETP|^FCHK"),
    ("packed half (HFMA2/HMUL2/HADD2)", r"^HFMA2|^HMUL2|^HADD2(?!\.F32)|^HMNMX2|^HSETP2"),
    ("tensor core (HMMA)", r"^HMMA|^IMMA|^QGMMA|^HGMMA"),
    ("conversion (F2F/HADD2.F32/PRMT/F2FP/I2F/F2I)", r"^F2F|^HADD2\.F32|^PRMT|^F2FP|^I2F|^F2I|^I2I"),
    ("special function (MUFU)", r"^MUFU"),
    ("shuffle (SHFL)", r"^SHFL"),
    ("barrier (BAR/WARPSYNC)", r"^BAR|^WARPSYNC|^NANOSLEEP|^MEMBAR"),
    ("branch/convergence (BRA/BSSY/BSYNC/EXIT)", r"^BRA|^BSSY|^BSYNC|^EXIT|^CALL|^RET|^BRX|^JMP"),
    ("address/integer (IMAD/IADD/LEA/SHF/LOP/ISETP/...)", r"^IMAD|^IADD|^VIADD|^LEA|^SHF|^LOP|^ISETP|^IABS|^SEL|^IMNMX|^VIMNMX|^FLO|^POPC|^BMSK|^SGXT|^BREV|^MOV|^P2R|^R2P|^PLOP|^UIADD|^UIMAD|^ULEA|^USHF|^ULOP|^UISETP|^UMOV|^USEL|^ULDC|^LDC|^S2R|^S2UR|^CS2R|^R2UR|^UPLOP|^VOTE|^IDP|^ISCADD"),
    ("other", r"."),
]


def classify(op):
    for name, rx in CLASSES:
        if re.match(rx, op):
            return name
    return "other"


def count_body(insts, lo, hi, weight):
    """Class counts over insts[lo..hi] with weight(k) per instruction."""
    counts = {name: 0.0 for name, _ in CLASSES}
    total = 0.0
    for k in range(lo, hi + 1):
        w = weight(k)
        if w == 0:
            continue
        counts[classify(insts[k]["op"])] += w
        total += w
    return counts, total


def cold_code(insts):
    """Indices no execution reaches on the warp-uniform path: from the entry over fall-throughs and
    branch targets, not into BRA.DIV's target (ptxas's fallback for a shuffle or vote it cannot
    prove convergent, which runs only when the warp has diverged there) nor into CALL targets (the
    subroutines: 64-bit division, the float-division slow path, counted as calls)."""
    idx = {ins["addr"]: k for k, ins in enumerate(insts)}
    if any(ins["op"].startswith(("BRX", "JMX")) for ins in insts):
        return set()  # an indirect branch's targets are unknown here: nothing counts as cold
    seen, todo = set(), [0] if insts else []
    while todo:
        k = todo.pop()
        if k in seen or k >= len(insts):
            continue
        seen.add(k)
        i = insts[k]
        op, pred = i["op"], i["pred"]
        if _never(pred):
            todo.append(k + 1)
            continue
        if op.startswith("BRA"):
            if op.startswith("BRA.DIV"):
                todo.append(k + 1)
                continue
            t = idx.get(i["target"]) if i["target"] is not None else None
            if t is not None:
                todo.append(t)
            if not _uncond(pred) or t is None:
                todo.append(k + 1)
            continue
        if op.startswith(("EXIT", "RET", "BRX", "JMP", "JMX", "KILL")) and _uncond(pred):
            continue
        todo.append(k + 1)
    return set(range(len(insts))) - seen


def divisions(insts, lo, hi):
    """Software 32-bit integer divisions/remainders (the I2F.*RP + MUFU.RCP reciprocal
    sequence nvcc emits for a runtime divisor) and calls (64-bit division)."""
    n = sum(1 for k in range(lo, hi + 1) if insts[k]["op"].startswith("I2F") and ".RP" in insts[k]["op"])
    calls = sum(1 for k in range(lo, hi + 1) if insts[k]["op"].startswith("CALL"))
    return n, calls


# ---- occupancy ---------------------------------------------------------------------


def cta_smem(dyn, res, m=H100):
    """Shared memory one CTA holds: its dynamic bytes plus cuobjdump -res-usage's SHARED, which on sm_90
    already includes the 1 KiB the CTA reserves (nvcc 13.0: an empty sm_90 kernel shows SHARED:1024, one
    whose static array ptxas -v puts at 112 bytes SHARED:1136; for sm_80 the same two show 0 and 112). The
    reserve is so counted once; a kernel with no res-usage entry is given the reserve alone. Before 2026-12-06 the
    reserve was added again on top of SHARED."""
    return dyn + max(res.get("smem_static", 0), m["smem_per_cta_reserved"])


def ctas_per_sm(regs, threads, smem_bytes, m=H100):
    """CTAs per SM and what limits them; smem_bytes is cta_smem's (the 1 KiB reserve included)."""
    warps = (threads + 31) // 32
    regs_warp = (max(regs, 1) * 32 + m["reg_alloc_unit"] - 1) // m["reg_alloc_unit"] * m["reg_alloc_unit"]
    by_regs = m["regs_per_sm"] // (regs_warp * warps)
    by_threads = m["threads_per_sm"] // threads
    by_smem = m["smem_per_sm"] // smem_bytes if smem_bytes > 0 else m["ctas_per_sm"]
    n = min(by_regs, by_threads, by_smem, m["ctas_per_sm"])
    limit = [k for k, v in (("registers", by_regs), ("threads", by_threads), ("shared memory", by_smem),
                            ("CTA slots", m["ctas_per_sm"])) if v == n]
    return n, "/".join(limit)


def grid_share(ctas, m=H100):
    """The share of the SMs' issue slots a launch of `ctas` CTAs of equal work keeps busy. The block
    scheduler spreads CTAs over the SMs and the CTAs an SM holds share its issue slots, so an
    issue-bound launch lasts as long as its busiest SM's ceil(ctas / SMs) CTAs take (the tail of the
    last wave quantised by SM): ctas / (SMs x ceil(ctas / SMs)). A grid of fewer CTAs than SMs (v1 at
    b=1: 8 or 32) keeps ctas / SMs of them busy. None: all SMs (before 2026-12-06, every row)."""
    if not ctas:
        return 1.0
    return ctas / (m["sms"] * math.ceil(ctas / m["sms"]))


def issue_rate(ipc, ctas, warps, occ, m=H100):
    """ipc (warp instructions per clock per busy SM), capped by the warps an SM holds: a scheduler issues
    one warp's instruction a clock, so an SM holding k CTAs of `warps` warps issues at most
    schedulers x min(1, k x warps / schedulers) a clock (a lone CTA of 4 warps: one per scheduler, 4; of
    2 warps: 2). k = min(occupancy, ceil(ctas / SMs))."""
    if not ctas or not warps:
        return ipc
    k = min(occ or m["ctas_per_sm"], math.ceil(ctas / m["sms"]))
    return min(ipc, m["schedulers"] * min(1.0, k * warps / m["schedulers"]))


def roof_fraction(bytes_per_tile, warp_insts_per_tile, m=H100, ipc=None, ctas=None, warps=None, occ=None):
    """(GB/s, fraction of the copy roof) that the issue slots allow a tile of bytes_per_tile bytes
    costing warp_insts_per_tile warp instructions, at ipc per busy SM (4: the issue limit). With ctas
    (the launch's grid), only grid_share of the SMs issue, each capped by issue_rate (warps: a CTA's,
    occ: CTAs per SM); without, all SMs do (the calibration's launch, whose grid is not recorded)."""
    ipc = issue_rate(ipc or m["issue_per_clock"], ctas, warps, occ, m)
    gbs = m["sms"] * grid_share(ctas, m) * ipc * m["clock_ghz"] * bytes_per_tile / warp_insts_per_tile
    return gbs, gbs / m["roof_gbs"]


# ---- families -------------------------------------------------------------------------------
#
# A family names its instance sources, the kernel to read in each, how to pick
# its steady-state loop, and a model: for a shape, the bytes one tile moves,
# the CTA's threads, dynamic shared memory, tiles per CTA, and the trip counts
# of loops nested in the steady-state loop (by the source line of their back
# edge) where the compiler did not unroll them.

DT = {"f32": (0, 4), "f16": (1, 2), "bf16": (2, 2), "e4m3": (3, 1), "e5m2": (4, 1)}

# The shapes of issue 13 (head 128, block 16, NHD, Llama-3 style).
DECODE_SHAPES = [
    dict(name="MHA 32/32, b=64 x 4K", heads=32, kv_heads=32, batch=64, ctx=4096),
    dict(name="GQA 32/8, b=64 x 4K", heads=32, kv_heads=8, batch=64, ctx=4096),
    dict(name="MHA 32/32, b=1 x 32K", heads=32, kv_heads=32, batch=1, ctx=32768),
    dict(name="GQA 32/8, b=1 x 32K", heads=32, kv_heads=8, batch=1, ctx=32768),
    # head 64 (Llama-3.2-1B, gpt-oss): tensor cores since 2026-11-25 (64-token tiles)
    dict(name="MHA 32/32 head 64, b=64 x 4K", heads=32, kv_heads=32, batch=64, ctx=4096, head=64),
    dict(name="GQA 32/8 head 64, b=64 x 4K", heads=32, kv_heads=8, batch=64, ctx=4096, head=64),
    # head 256 (Gemma 2 and 3): tensor cores since 2026-11-25 (16/32-token tiles, two warps a token group)
    dict(name="GQA 16/8 head 256, b=64 x 4K", heads=16, kv_heads=8, batch=64, ctx=4096, head=256),
    # head 96 (Phi-3-mini, Phi-3.5-mini): tensor cores for 16-bit caches since 2026-11-25 (padded 208-byte
    # rows), for fp8 since 2026-11-29 (padded 112-byte rows, a half block of 32 dims)
    dict(name="MHA 32/32 head 96, b=64 x 4K", heads=32, kv_heads=32, batch=64, ctx=4096, head=96),
    # GQA groups of 16 (Qwen3-235B's 64/4, Llama-3.1-405B's 128/8): tensor cores since 2026-11-25 (two head blocks)
    dict(name="GQA 64/4 (group 16), b=64 x 4K", heads=64, kv_heads=4, batch=64, ctx=4096),
    # head 192 (Nemotron-4 340B: 96/8, group 12): tensor cores since 2026-11-30 (16/32-token tiles of 6 KiB,
    # two warps a token group; group 12 takes two head blocks)
    dict(name="GQA 32/8 head 192, b=64 x 4K", heads=32, kv_heads=8, batch=64, ctx=4096, head=192),
    dict(name="GQA 96/8 head 192 (group 12), b=64 x 4K", heads=96, kv_heads=8, batch=64, ctx=4096, head=192),
    # heads 80 (Phi-2: 32/32) and 112: tensor cores since 2026-11-30 (16-bit: padded 176- and 240-byte
    # rows, an odd last k-step and m-block; fp8: a quarter block of 16 dims)
    dict(name="MHA 32/32 head 80, b=64 x 4K", heads=32, kv_heads=32, batch=64, ctx=4096, head=80),
    dict(name="GQA 32/8 head 112, b=64 x 4K", heads=32, kv_heads=8, batch=64, ctx=4096, head=112),
    # head 32 (vLLM's smallest): tensor cores since 2026-11-30 (16-bit: 64-token tiles of 4 KiB, rows
    # padded to 80 bytes; fp8: a half block of 32 dims alone, on flash layouts head 64's 128-token tile)
    dict(name="GQA 32/8 head 32, b=64 x 4K", heads=32, kv_heads=8, batch=64, ctx=4096, head=32),
    # head 120: tensor cores for 16-bit caches since 2026-11-30 (32-token tiles of unpadded 240-byte rows, a
    # last k-step and m-block of 8 dims); fp8 keeps the CUDA-core kernel
    dict(name="GQA 32/8 head 120, b=64 x 4K", heads=32, kv_heads=8, batch=64, ctx=4096, head=120),
    # head 64 at group 16 (Falcon-40B: 128/8; Falcon-7B's 71/1 in CTAs of 15): two head blocks since 2026-11-30
    # (fp8 over flash layouts on the 128-token long tile)
    dict(name="GQA 128/8 head 64 (group 16), b=64 x 4K", heads=128, kv_heads=8, batch=64, ctx=4096, head=64),
]


def decode_select_loop(insts, loops):
    """The tile loop: the outermost loop holding a CTA barrier and an async copy."""
    cands = []
    for l in loops:
        ops = [insts[k]["op"] for k in range(l["lo"], l["hi"] + 1)]
        if any(o.startswith("BAR.SYNC") for o in ops) and any(o.startswith("LDGSTS") for o in ops):
            cands.append(l)
    if not cands:
        return None
    return max(cands, key=lambda l: l["hi"] - l["lo"])


def pow2_floor(v):
    p = 1
    while p <= v // 2:
        p *= 2
    return p


def decode_geometry(hs, esz, group, swizzle=True, vllm_block=None, vllm_padded=False, q16=False):
    """csrc/ops/decode.c dec_geometry for a flash layout (swizzle=False: as of f7f2891), or for vLLM's
    layout with blocks of vllm_block tokens: V^T rows of the tile's T tokens, unpadded (vllm_padded:
    before 2026-11-25, rows per stored block of min(block, T) tokens padded to an odd number of
    granules). q16: a 16-bit query, so that a shape the tensor-core kernel serves has no split-kernel
    regions (dec_tensor_cores, since 2026-11-30) and fp8 at heads 64 and 32 on a flash layout takes
    dec_long_tile's geometry (since 2026-11-28, head 32 since 2026-11-30: 128-token tiles, unpadded K
    rows; at head 64 for any group since 2026-11-30, its CTAs of 9..16 heads taking two head
    blocks)."""
    nt = 128
    hb = hs * esz
    kchunks = (hb + 15) // 16
    headq = kchunks * (16 // esz)
    head_chunks = (group + 15) // 16
    hpc = (group + head_chunks - 1) // head_chunks
    pv_groups = (hpc + 3) // 4
    # dec_tensor_cores (since 2026-11-30: no CUDA-core rows in a shape the tensor-core kernel serves; the
    # models of older geometries, swizzle=False and vllm_padded, keep them)
    tc = (q16 and swizzle and not vllm_padded and (hs in (32, 64, 80, 96, 112, 128, 192, 256) or (hs == 120 and esz == 2))
          and pv_groups <= (4 if hs in (64, 128, 192) else 2))
    lt = tc and esz == 1 and hs in (64, 32) and vllm_block is None
    T = 128 if lt else min(max(pow2_floor(8192 // hb), 8), 64)
    pv_slices = nt // (pv_groups * (hs // 8))
    ds = 1 if pv_groups * T >= nt else pow2_floor(nt // (pv_groups * T))
    ds = min(ds, 32 if kchunks >= 32 else pow2_floor(kchunks))
    if ds * T < 32:
        ds = 32 // T

    def pitch(b):
        r = (b + 15) // 16 * 16
        return r + 16 if (r // 16) % 2 == 0 else r

    if swizzle:  # csrc/ops/decode.c since the swizzle: rows of 8k granules unpadded
        gv = 32 if esz == 4 else 16
        pk = kchunks * 16 if kchunks % 8 == 0 else hb if lt else pitch(hb)
        pv = hb if hb % gv == 0 and (hb // gv) % 8 == 0 else pitch(hb)
    else:
        pk = pv = pitch(hb)
    stage_k = T * pk
    stage_v = T * pv
    if vllm_block is not None:
        sbs = min(vllm_block, T)
        stage_v = (T // sbs) * hs * pitch(sbs * esz) if vllm_padded else hs * T * esz
    tiles = 3 * (stage_k + stage_v)
    red = pv_slices * hpc * hs * 4
    off_q = (max(tiles, red) + 15) // 16 * 16
    smem = off_q + hpc * headq * 4 + hpc * T * 4 + 3 * 16 * 4 + 3 * 128 + 64 * 4
    if tc:  # the tensor-core kernel only: no Q, logit or state rows
        smem = tiles + 3 * 128 + 64 * 4
    return dict(T=T, hpc=hpc, pv_slices=pv_slices, ds=ds, kchunks=kchunks, smem=smem, threads=nt,
                tpt=nt // T, units=hb // 16, stage_v=stage_v)


def auto_part(L):
    want = (L + 63) // 64
    part = 256
    while part < want:
        part *= 2
    return part


def decode_model(inst, shape):
    """Model of the kernel the launcher picks, NHD block 16, head 128 unless the shape says."""
    q, c = inst
    esz = DT[c][1]
    hs = shape.get("head", 128)
    group = shape["heads"] // shape["kv_heads"]
    # (cuda_cores: the CUDA-core kernel's own geometry, with its rows, for its resource row)
    g = decode_geometry(hs, esz, group, q16=q != "f32" and not shape.get("cuda_cores"))
    T = g["T"]
    part = auto_part(shape["ctx"])
    splits = (shape["ctx"] + part - 1) // part
    tiles_per_cta = part // T
    ctas = shape["batch"] * shape["kv_heads"] * ((group + 15) // 16) * splits
    ng = (g["hpc"] + 3) // 4

    def trips(ops):
        # The one loop left in a FixGeo tile: the block-table refill (global
        # loads and shared stores, no copy, no math), once per 64 table entries.
        if any(o.startswith("LDGSTS") or o.startswith("FFMA") or o.startswith("LDS") for o in ops):
            return None
        if any(o.startswith("LDG") for o in ops) and any(o.startswith("STS") for o in ops):
            return T / (64.0 * 16)
        return None

    # The launcher's choice (cuda/decode/decode_launch.cuh): with a flash layout
    # and 16-byte copies (NG <= 2), the tensor-core kernel for a 16-bit query
    # (heads 32, 64, 80, 96, 112, 128, 192 and 256, and 120 with a 16-bit cache;
    # at heads 64, 128 and 192 also NG 3 and 4, two head blocks), FixGeo<128, CT, NG>
    # for an f32 one at head 128; DynGeo otherwise.
    mma_heads = (32, 64, 80, 96, 112, 128, 192, 256) + ((120,) if esz == 2 else ())
    if (ng <= 2 or hs in (64, 128, 192)) and q != "f32" and hs in mma_heads:
        # the flash instance <QT, CT, false, HS, HB> (Lb1E: vLLM's layout)
        kernel = r"decode_mma_kernelILi\d+ELi\d+ELb0ELi%dELi%dEE" % (hs, 1 if ng <= 2 else 2)
    elif ng <= 2 and hs == 128:
        kernel = r"FixGeoILi128ELi%dELi%dE" % (DT[c][0], ng)
    else:
        kernel = r"DynGeo"
    return dict(bytes_per_tile=T * hs * esz * 2, tile_tokens=T, threads=g["threads"], smem=g["smem"],
                tiles_per_cta=tiles_per_cta, ctas=ctas, splits=splits, trips=trips, heads_per_cta=g["hpc"],
                kernel=kernel)


FAMILIES = {
    "decode": dict(
        sources="cuda/decode/instances/decode_q*_c*.cu",
        instance=lambda path: tuple(re.match(r".*decode_q(\w+?)_c(\w+)\.cu$", path).groups()),
        kernel=r"decode_split_kernel|decode_mma_kernel",
        select_loop=decode_select_loop,
        model=decode_model,
        shapes=DECODE_SHAPES,
        roof_instances=[("bf16", "bf16"), ("bf16", "e4m3")],
    ),
}

# What the H100 measured for the kernel of f7f2891 (gpu-report-2026-11-22-H100.md):
# ncu on decode_split_kernel<bf16,bf16>, GQA 32/8 head 128 NHD block 16, b=64 x 4K.
CALIBRATION = dict(
    instance=("bf16", "bf16"),
    shape="GQA 32/8, b=64 x 4K",
    warp_insts=503.3e6,  # executed, whole launch
    tokens_kvheads=64 * 4096 * 8,
    ipc=2.14,  # executed IPC at 4 warps per scheduler (occupancy 24.4%)
    ncu_clock_ghz=1.59,
    ncu_ms=1.14,
    bench_gbs=1271.0,  # side-by-side, v1, not under ncu
)


# The second H100 measurement (gpu-report-2026-11-23-H100.md), on the
# compile-time-geometry kernel this script counts: the executed count per
# (token, KV head) from ncu (run 8, whose per-split work is the current
# kernel's), the clock the benchmarks run at, the IPC that gives the measured
# time, and the measured fraction of the roof (recommended entry, run 10).
CALIBRATION_2 = dict(
    instance=("bf16", "bf16"),
    shape="GQA 32/8, b=64 x 4K",
    executed_per_token_kvhead=269.4e6 / (64 * 4096 * 8),
    # What this script counted for that kernel (decode_split_kernel<2, 2,
    # FixGeo<128, 2, 1>>, commit 48388d5): 4326 loop + 708 overhead warp
    # instructions per 32-token tile. Frozen: the ratio belongs to the kernel
    # that was measured, not to whatever the instance compiles to today.
    counted_per_token_kvhead=(4326 + 708) / 32.0,
    kernel=r"decode_split_kernel",
    clock_ghz=1.98,
    ipc=2.22,
    measured=0.77,
    # The other shapes, measured the same day, against this column:
    checks=[
        "bf16/e4m3 GQA 32/8, b=64 x 4K: predicted 50%, measured 51% (recommended entry, CLI, commit 3e6c8ac).",
        "bf16 MHA 32/32, b=64 x 4K: predicted 77%, measured 94%. The count is the 4-head (GQA) tile's; with one"
        " head per CTA the head loops skip three quarters of the Q.K and P.V work, so MHA executes far fewer"
        " instructions than counted. Weight the count by the shape's heads per CTA before trusting it for MHA.",
        "bf16 GQA 32/8, b=1 x 32K: predicted 83%, measured 55%. One wave of 512 CTAs with 16 tiles each and a"
        " merge launch: latency and parallelism, which an issue-slot count cannot see, bound small batches.",
    ],
)


# What the H100 measured on 2026-11-27 (gpu-report-2026-11-27-H100.md, run 11, commit 261f36f, the
# tensor-core kernel this script counts): the recommended entry and v1, as fractions of the copy
# roof, per (instance, shape). MHA at b=1 x 32K moved between 0.21 and 0.24 ms with its position in
# the run (the report says so); the figure is the slower.
MEASURED_2026_11_27 = {
    (("bf16", "bf16"), "MHA 32/32, b=64 x 4K"): (0.94, 0.95),
    (("bf16", "bf16"), "GQA 32/8, b=64 x 4K"): (0.86, 0.93),
    (("bf16", "bf16"), "MHA 32/32, b=1 x 32K"): (0.74, 0.25),
    (("bf16", "bf16"), "GQA 32/8, b=1 x 32K"): (0.63, 0.06),
    (("bf16", "bf16"), "GQA 32/8 head 64, b=64 x 4K"): (0.72, 0.79),
    (("bf16", "bf16"), "GQA 16/8 head 256, b=64 x 4K"): (0.95, 0.85),
    (("bf16", "bf16"), "GQA 64/4 (group 16), b=64 x 4K"): (0.73, 0.88),
    (("bf16", "e4m3"), "GQA 32/8, b=64 x 4K"): (0.71, 0.77),
    (("bf16", "e4m3"), "GQA 32/8 head 64, b=64 x 4K"): (0.53, 0.58),
    (("bf16", "e4m3"), "GQA 64/4 (group 16), b=64 x 4K"): (0.54, 0.69),
}


# ---- analysis ---------------------------------------------------------------------------------


def analyse(fam, build, cuobjdump, nvdisasm, src, workdir):
    inst = fam["instance"](src)
    cubin = os.path.join(workdir, os.path.basename(src).replace(".cu", ".cubin"))
    ptx = ptxas_info(compile_cubin(build, src, cubin, fam.get("arch", "sm_90")))
    res = res_usage(cuobjdump, cubin)
    funcs = disassemble(nvdisasm, cubin)
    resolve_labels(nvdisasm, cubin, funcs)
    rows = []
    for name, insts in funcs.items():
        if not re.search(fam["kernel"], name):
            continue
        loops = loops_of(insts)
        sel = fam["select_loop"](insts, loops)
        r = dict(instance=inst, src=src, kernel=name, insts=len(insts), ptxas=ptx.get(name, {}), res=res.get(name, {}))
        if sel:
            nested = [l for l in loops if l is not sel and l["lo"] >= sel["lo"] and l["hi"] <= sel["hi"]]
            r["loop"] = dict(lo=insts[sel["lo"]]["addr"], hi=insts[sel["hi"]]["addr"], line=sel["line"],
                             nested=[dict(n=l["hi"] - l["lo"] + 1, line=l["line"]) for l in nested])
            counts, total = count_body(insts, sel["lo"], sel["hi"], lambda k: 1)
            r["loop"]["counts"], r["loop"]["static"] = counts, total
            r["loop"]["divisions"], r["loop"]["calls"] = divisions(insts, sel["lo"], sel["hi"])
            cold = cold_code(insts)
            in_loop = sum(1 for k in cold if sel["lo"] <= k <= sel["hi"])
            r["cold"] = len(cold) - in_loop  # outside the loop, reached only by a diverged warp or a call
            r["outside"] = len(insts) - total - r["cold"]
            r["_insts"], r["_sel"], r["_nested"] = insts, sel, nested
        rows.append(r)
    return rows


# The decode tile's forward branches that the common case takes around code (a source line in
# the branch's condition, relative to a marker line): the tensor-core kernel's soft cap and ALiBi
# (`if (!plain)`), its token and head masks (`if (!all_in)`: since 2026-11-28 only tiles that
# are not whole take them, a sequence's last tile and the window's first), and the loader's
# block-table refill (issue_tile: once per 64 table entries, so once per 1024 tokens at block 16;
# its nested loop is weighted as such already), and since 2026-12-01 O's rescale (`if (mv != 0.0f)`),
# which a warp runs only where a head's lazy reference moved (kLazyNat, 8 log2 units): a split's first
# tile, then almost never (scripts/decode_rescale_model.py; with the exact max it ran in most tiles).
COMMON_PATH_SKIPS = [("cuda/decode/decode_mma.cuh", r"if \(!plain\) \{", 0),
                     ("cuda/decode/decode_mma.cuh", r"if \(!all_in\) \{", 0),
                     ("cuda/decode/decode_mma.cuh", r"if \(mv != 0\.0f\) \{", 0),
                     ("cuda/decode/decode_kernel.cuh", r"refill_table<TRACK, PRE>\(p, c, lb_first\);", -1)]


# A tile whose loader call issues nothing: issue_tile's early return for a tile past the split's
# last (`if (it >= ntiles)`), which the loop's last NS - 1 tiles take, their tiles issued NS - 1
# iterations before (the prologue issued a CTA's first NS - 1). Since 2026-11-30 the budget counts a
# CTA's loop issues once: n tiles issue n - min(n, NS - 1) times in the loop, so per tile the loop
# count drops by min(n, NS - 1) / n of the loader's share (the loop's count with and without it); the
# overhead keeps the prologue's NS - 1 issues. Before, a 2-tile CTA paid 4 issues where it made 2.
ISSUE_SKIP = [("cuda/decode/decode_kernel.cuh", r"if \(it >= ntiles\)", 0)]
DEC_STAGES = 3  # PA_DEC_STAGES (csrc/shared/decode_internal.h), checked in dec_stages()


def dec_stages():
    """PA_DEC_STAGES as csrc/shared/decode_internal.h defines it (an error when it is not DEC_STAGES)."""
    src = "\n".join(_src("csrc/shared/decode_internal.h"))
    m = re.search(r"#define PA_DEC_STAGES (\d+)", src)
    if not m or int(m.group(1)) != DEC_STAGES:
        sys.exit("budget.py: PA_DEC_STAGES is %s, DEC_STAGES %d (update DEC_STAGES)" % (m and m.group(1), DEC_STAGES))
    return DEC_STAGES


def issue_skip_check(r):
    """Exit unless ISSUE_SKIP's branch jumps over every copy the loop issues (LDGSTS): what the
    no_issue count leaves out is the loader's call."""
    insts, sel = r["_insts"], r["_sel"]
    skip = skipped_in_common_path(insts, sel["lo"], sel["hi"], common_path_lines(ISSUE_SKIP))
    left = [k for k in range(sel["lo"], sel["hi"] + 1) if insts[k]["op"].startswith("LDGSTS") and k not in skip]
    if not skip or left:
        sys.exit("budget.py: %s: issue_tile's early return does not skip the loop's copies (%d left; update ISSUE_SKIP)"
                 % (r["kernel"], len(left)))


def common_path_lines(markers=COMMON_PATH_SKIPS):
    """{"file:line"} of the conditions of markers (COMMON_PATH_SKIPS, ISSUE_SKIP)."""
    out = set()
    for rel, marker, off in markers:
        hits = [n for n, t in enumerate(_src(rel), 1) if re.search(marker, t)]
        if len(hits) != 1:
            sys.exit("budget.py: %d lines match %r in %s (update COMMON_PATH_SKIPS)" % (len(hits), marker, rel))
        out.add("%s:%d" % (os.path.basename(rel), hits[0] + off))
    return out


def skipped_in_common_path(insts, lo, hi, lines):
    """Indices in [lo, hi] that a conditional forward branch on one of `lines` jumps over."""
    idx = {ins["addr"]: k for k, ins in enumerate(insts)}
    out = set()
    for k in range(lo, hi + 1):
        i = insts[k]
        if i["op"].startswith("BRA") and i["pred"] and i["line"] in lines and i["target"] is not None:
            t = idx.get(i["target"])
            if t is not None and k < t <= hi + 1:
                out.update(range(k + 1, t))
    return out


def per_tile(r, trips, common=False, no_issue=False):
    """Warp instructions one warp issues per tile: the loop body with each nested
    loop weighted by trips(ops of the loop) (its executions per tile); None when
    trips is None or returns None for a nested loop (a runtime trip count).
    common: without the code COMMON_PATH_SKIPS's branches skip in the common case.
    no_issue: without the loader's call past its early return (ISSUE_SKIP)."""
    if "loop" not in r:
        return None
    insts, sel, nested = r["_insts"], r["_sel"], r["_nested"]
    lines = (common_path_lines() if common else set()) | (common_path_lines(ISSUE_SKIP) if no_issue else set())
    skip = skipped_in_common_path(insts, sel["lo"], sel["hi"], lines) if lines else set()
    ws = []
    for l in nested:
        t = trips([insts[k]["op"] for k in range(l["lo"], l["hi"] + 1)]) if trips else None
        if t is None:
            return None
        ws.append((l, t))

    def weight(k):
        if k in skip:
            return 0
        w = 1
        for l, t in ws:
            if l["lo"] <= k <= l["hi"]:
                w *= t
        return w

    return count_body(insts, sel["lo"], sel["hi"], weight)


# The loops outside the decode tile loop (the CTA's prologue and epilogue), by a source line of
# their back edge, and how often their body runs per CTA: the auto split's doubling loop
# (log2(part / 256): none up to 16K tokens), the prologue's NS - 1 tile issues, and begin_cta's
# zero fill, which only a bad length takes (that path ends at a return, so it is never on a
# counted path).
CTA_LOOPS = [("csrc/shared/decode_internal.h", r"while \(part < want\)", "auto_part"),
             ("cuda/decode/decode_mma.cuh", r"for \(int s = 0; s < NS - 1; s\+\+\)", 2),
             ("cuda/decode/decode_kernel.cuh", r"for \(int i = threadIdx\.x; i < c\.nh \* hs; i \+= NT\)", 1)]


# Code outside the tile loop that a well-formed serving call does not run, by a source line: a
# 16-bit query whose rows are not 4-byte aligned (q_words off: two 2-byte loads a register).
# cta_path keeps its heaviest path off these lines.
CTA_RARE = [("cuda/decode/decode_mma.cuh", r"const uint32_t w = in \? \(uint32_t\)src\[0\] \| \(uint32_t\)src\[1\] << 16 : 0u;")]


def cta_path(r, ctx):
    """Warp instructions on the heaviest path through a decode CTA's prologue (entry to the tile
    loop) plus its epilogue (the loop's exit to an EXIT), the loops there weighted by CTA_LOOPS at
    context length ctx; code only a diverged warp runs (cold_code) avoided. An upper bound of what
    one warp executes outside the loop: every branch takes its heavier side (all of the CTA's head
    slots whatever the shape's group, the refill on both prologue tiles; the output's two stores
    are predicated, so both issue). CTA_RARE's lines are avoided too. None when a loop there has
    no entry in CTA_LOOPS (the reason in the second value)."""
    if "loop" not in r:
        return None, "no tile loop"
    insts, sel = r["_insts"], r["_sel"]
    lines = {}
    for rel, rx, t in CTA_LOOPS:
        n = math.log2(auto_part(ctx) / 256) if t == "auto_part" else t
        for ln in src_lines(rel, rx):
            lines[ln] = n
    loops = [l for l in laminar_loops(insts, loops_of(insts)) if l["hi"] < sel["lo"] or l["lo"] > sel["hi"]]

    def trips(insts_, l, loops_):
        # the back edge's line, or the loop head's (a while's test sits on its own line)
        for k in (l["hi"], l["lo"]):
            if insts_[k]["line"] in lines:
                return lines[insts_[k]["line"]]
        return None

    weight, bad = loop_weight(insts, loops, trips)
    if weight is None:
        return None, "a loop outside the tile loop with no trip count (back edge %s)" % bad["line"]
    cold = cold_code(insts)
    rare = marker_lines(CTA_RARE)
    total = 0.0
    exits = [k for k in range(sel["hi"] + 1, len(insts)) if insts[k]["op"].startswith("EXIT")]
    for start, ends in ((0, [sel["lo"]]), (sel["hi"] + 1, exits)):
        hp = heaviest_path(insts, start, ends, weight, lambda k: k in cold or insts[k]["line"] in rare, [])
        if hp is None:
            return None, "no path from 0x%x" % insts[start]["addr"]
        total += sum(weight(k) for k in hp[0])
    return total, None


def short_name(mangled):
    try:
        d = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip()
    except OSError:
        return mangled
    d = re.sub(r"\(.*\)$", "", d).replace("pa_dec::", "").replace("void ", "")
    return d


def emit_report(lines, path=None):
    """A report's lines, joined, to stdout and, with path, to that file too."""
    text = "\n".join(lines) + "\n"
    if path:
        with open(path, "w") as f:
            f.write(text)
    sys.stdout.write(text)


def made_from(src):
    """`SRC (date, commit C[ with uncommitted cuda/ or csrc/ changes])` for a report's first line."""
    date, commit, dirty = stamp()
    return "%s (%s, commit %s%s)" % (src, date, commit, " with uncommitted cuda/ or csrc/ changes" if dirty else "")


def stamp():
    """(UTC date, short commit, whether cuda/ or csrc/ differ from it) for a report's heading."""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "cuda", "csrc"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    return date, commit, dirty


def mma_params(kernel):
    """(head size HS, head blocks HB) of a decode_mma_kernel<QT, CT, VL, HS, HB> instance; (128, 1) for
    every other kernel."""
    m = re.search(r"decode_mma_kernelILi\d+ELi\d+ELb\dELi(\d+)ELi(\d+)EE", kernel)
    return (int(m.group(1)), int(m.group(2))) if m else (128, 1)


def mma_head(kernel):
    return mma_params(kernel)[0]


def mma_blocks(kernel):
    return mma_params(kernel)[1]


def shape_for(fam, kernel, i):
    """Shape i of the family at the kernel's head size; for a two-head-block instance, the group-16 shape
    (at the kernel's head size: 64, 128 or 192)."""
    if mma_blocks(kernel) > 1:
        return dict([s for s in fam["shapes"] if s["heads"] // s["kv_heads"] > 8][0], head=mma_head(kernel))
    return dict(fam["shapes"][i], head=mma_head(kernel))


def pct(x):
    return "%.0f%%" % (100 * x)


def tile_cost(fam, rows, inst, shape):
    """(model, SASS row, per-tile count, warp instructions per tile per CTA, CTA overhead per tile) of the
    kernel the launcher picks for this instance and shape; row None when no kernel matches, the last two
    None when the loop is not countable statically."""
    md = fam["model"](inst, shape)
    cands = [r for r in rows if r["instance"] == inst and "loop" in r and re.search(md["kernel"], r["kernel"])]
    if not cands:
        return md, None, None, None, None
    r = cands[0]
    pt = per_tile(r, md["trips"])
    if pt is None:
        return md, r, None, None, None
    warps = md["threads"] // 32
    return md, r, pt, pt[1] * warps, r["outside"] * warps / md["tiles_per_cta"]


def path_overhead(md, r, shape):
    """The CTA overhead per tile from cta_path (all warps, per tile of the split), for the
    tensor-core kernel; None for the others (their epilogue loops have no trip counts here)."""
    if "decode_mma_kernel" not in r["kernel"]:
        return None
    n, _ = cta_path(r, shape["ctx"])
    return None if n is None else n * (md["threads"] // 32) / md["tiles_per_cta"]


def vllm_stage_table(w, rows, m=H100):
    """vLLM's layout at head 128, GQA 32/8: the value stage and CTAs per SM by block size, the V^T rows
    unpadded (now) and padded per stored block (before 2026-11-25), at each vLLM instance's registers."""
    w("### vLLM's layout: value stage and CTAs/SM (head 128, GQA 32/8; before: V^T rows per stored block, padded)")
    w("")
    w("| instance (q/cache) | kernel | regs | block | V stage bytes before / now | dyn smem before / now | CTAs/SM before / now |")
    w("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        kname = short_name(r["kernel"])
        if not (kname.endswith(", true, 128, 1>") or "DynGeo" in kname) or r["instance"][0] != "bf16":
            continue
        regs = r["ptxas"].get("regs", r["res"].get("regs", 0))
        esz = DT[r["instance"][1]][1]
        for block in (8, 16, 32):
            # (the tensor-core rows' geometry now leaves out the CUDA-core rows: dec_tensor_cores)
            old, new = (decode_geometry(128, esz, 4, vllm_block=block, vllm_padded=pd, q16="DynGeo" not in kname)
                        for pd in (True, False))
            occ = [ctas_per_sm(regs, g["threads"], cta_smem(g["smem"], r["res"], m), m)[0] for g in (old, new)]
            w("| %s/%s | %s | %d | %d | %d / %d | %d / %d | %d / %d |" % (
                r["instance"][0], r["instance"][1], kname, regs, block, old["stage_v"], new["stage_v"], old["smem"],
                new["smem"], occ[0], occ[1]))
    w("")


def report(fam_name, fam, rows, label, m=H100):
    L = []
    w = L.append
    date, commit, dirty = stamp()
    w("## %s: %s kernel at %s%s (%s)" % (label, fam_name, commit, " + working tree" if dirty else "", date))
    w("")
    w("### Resources (ptxas -v, cuobjdump -res-usage; CTAs/SM for head 128 (the head-32, -64, -80, -96, -112, -120, -192 and -256 tensor-core instances: their head; two head blocks: GQA 64/4, group 16, at their head), block 16, NHD; vLLM's layout"
      " keeps the same stage sizes, its V^T rows unpadded)")
    w("")
    w("| instance (q/cache) | kernel | regs | spill st/ld bytes | stack | local | static smem | dyn smem MHA / GQA 32/8 | CTAs/SM MHA / GQA (limit) | warps/scheduler |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        p, res = r["ptxas"], r["res"]
        regs = p.get("regs", res.get("regs", 0))
        kname = short_name(r["kernel"])
        q, c = r["instance"]
        # heads 64 and 256: their own geometry; two head blocks: group 16
        cc = {} if "decode_mma_kernel" in r["kernel"] or fam_name != "decode" else {"cuda_cores": True}
        mods = [fam["model"](r["instance"], dict(shape_for(fam, r["kernel"], i), **cc)) for i in (0, 1)]
        occ = [ctas_per_sm(regs, md["threads"], cta_smem(md["smem"], res, m), m) for md in mods]
        wps = occ[0][0] * mods[0]["threads"] // 32 / m["schedulers"]
        w("| %s/%s | %s | %d | %d/%d | %d | %d | %d | %d / %d | %d / %d (%s) | %g |" % (
            q, c, kname, regs, p.get("spill_st", -1), p.get("spill_ld", -1), p.get("stack", -1), res.get("local", -1),
            res.get("smem_static", 0), mods[0]["smem"], mods[1]["smem"], occ[0][0], occ[1][0], occ[0][1], wps))
    w("")
    if fam_name == "decode":
        vllm_stage_table(w, rows, m)
    w("### Steady-state loop (SASS, per warp)")
    w("")
    classes = [n for n, _ in CLASSES]
    w("| instance | kernel | loop (addresses, back edge file:line) | static insts | nested loops | per tile (nested loops weighted, GQA 32/8 model) | software divisions | " +
      " | ".join(classes) + " | outside the loop (+ cold) |")
    w("| --- | --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in classes) + " | --- |")
    for r in rows:
        if "loop" not in r:
            continue
        lp = r["loop"]
        pt = per_tile(r, fam["model"](r["instance"], shape_for(fam, r["kernel"], 1))["trips"])
        w("| %s/%s | %s | 0x%x-0x%x (back edge %s) | %d | %d | %s | %d (+%d calls) | %s | %s |" % (
            r["instance"][0], r["instance"][1], short_name(r["kernel"]), lp["lo"], lp["hi"], lp["line"], lp["static"],
            len(lp["nested"]), "%.0f" % pt[1] if pt else "-", lp["divisions"], lp["calls"],
            " | ".join("%d" % lp["counts"][c] for c in classes), "%d (+%d)" % (r["outside"], r["cold"])))
    w("")
    w("### Issue-slot roof (%d SMs x %d warp instructions/clock x %.3f GHz, copy roof %.0f GB/s)" % (
        m["sms"], m["issue_per_clock"], m["clock_ghz"], m["roof_gbs"]))
    w("")
    w("| instance | shape | kernel the launcher picks | tile: tokens, bytes | grid: CTAs (share of the SMs' issue slots busy), recommended / v1 | warp insts per tile per CTA (loop) | + CTA overhead per tile | - the loop's issues the prologue made, per tile (static / common path) | bytes per warp inst | max % of roof, 4 IPC (loop only) | max % of roof, 4 IPC (with overhead) | at the measured 2.14 IPC (with overhead) | loop per CTA, common path | at the measured 2.14 IPC, common path + CTA overhead per tile | CTA overhead per tile, heaviest path | at the measured 2.14 IPC, common path + heaviest-path overhead | v1 at the measured 2.14 IPC (common path, the CTA overhead spread over a whole sequence's tiles) | predicted (calibrated, below) | measured on the H100, 2026-11-27: recommended / v1 | IPC per busy SM the measured v1 implies (common path + v1's overhead, 1.755 / 1.98 GHz) |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    out = []
    # Executed / counted instructions, from CALIBRATION_2's instance and shape
    # (the count is an upper bound: forward branches skip the features that
    # are off); applied to every row.
    c2 = CALIBRATION_2
    exec_ratio = c2["executed_per_token_kvhead"] / c2["counted_per_token_kvhead"]
    mc = dict(m, clock_ghz=c2["clock_ghz"])
    for inst in fam["roof_instances"]:
        for s in fam["shapes"]:
            md, r, pt, wi, ov = tile_cost(fam, rows, inst, s)
            if r is None:
                w("| %s/%s | %s | no kernel matching %s |  |  |  |  |  |  |  |  |  |  |  |" % (inst[0], inst[1], s["name"], md["kernel"]))
                continue
            if pt is None:
                w("| %s/%s | %s | %s | %d, %d B | | not countable statically (%d nested runtime loops; static body %d) | | | | | | | | | |" % (
                    r["instance"][0], r["instance"][1], s["name"], short_name(r["kernel"]), md["tile_tokens"],
                    md["bytes_per_tile"], len(r["loop"]["nested"]), r["loop"]["static"]))
                continue
            warps = md["threads"] // 32
            issue_skip_check(r)
            wic = per_tile(r, md["trips"], common=True)[1] * warps
            # the loader's share of the loop (static, common path), which the CTA's last NS - 1
            # tiles skip (ISSUE_SKIP): per tile, min(n, NS - 1) / n of it is not run
            iss = wi - per_tile(r, md["trips"], no_issue=True)[1] * warps
            iss_c = wic - per_tile(r, md["trips"], common=True, no_issue=True)[1] * warps
            skipf = min(md["tiles_per_cta"], dec_stages() - 1) / md["tiles_per_cta"]
            wi_once, wic_once = wi - skipf * iss, wic - skipf * iss_c
            # The grid (since 2026-12-06): only the SMs with CTAs issue (grid_share), each capped by the
            # warps it holds (issue_rate). v1 runs one split a sequence: ctas / splits CTAs.
            occ = ctas_per_sm(r["ptxas"].get("regs", r["res"].get("regs", 0)), md["threads"],
                              cta_smem(md["smem"], r["res"], m), m)[0]
            g = dict(ctas=md["ctas"], warps=warps, occ=occ)
            g1 = dict(g, ctas=md["ctas"] // md["splits"])
            f1 = roof_fraction(md["bytes_per_tile"], wi, m, **g)[1]
            f2 = roof_fraction(md["bytes_per_tile"], wi_once + ov, m, **g)[1]
            f3 = roof_fraction(md["bytes_per_tile"], wi_once + ov, m, ipc=CALIBRATION["ipc"], **g)[1]
            f5 = roof_fraction(md["bytes_per_tile"], wic_once + ov, m, ipc=CALIBRATION["ipc"], **g)[1]
            ovp = path_overhead(md, r, s)
            f6 = roof_fraction(md["bytes_per_tile"], wic_once + ovp, m, ipc=CALIBRATION["ipc"], **g)[1] if ovp is not None else None
            # Only the kernel the calibration measured gets a calibrated figure (its IPC, 2.22, is the
            # measured time's over all 132 SMs: no grid share on top).
            calibrated = re.search(c2["kernel"], r["kernel"]) is not None
            f4 = roof_fraction(md["bytes_per_tile"], (wi + ov) * exec_ratio, mc, ipc=c2["ipc"])[1] if calibrated else None
            out.append(dict(instance=list(r["instance"]), shape=s["name"], kernel=short_name(r["kernel"]),
                            per_warp=pt[1], per_cta=wi, overhead=ov, bytes=md["bytes_per_tile"], frac=f1,
                            frac_overhead=f2, frac_ipc_measured=f3, frac_predicted=f4, per_cta_common=wic,
                            frac_ipc_measured_common=f5, overhead_path=ovp, frac_ipc_measured_common_path=f6,
                            issue_static=iss, issue_common=iss_c, issue_skipped_per_tile=skipf * iss_c,
                            ctas=g["ctas"], ctas_v1=g1["ctas"], ctas_per_sm=occ, warps=warps,
                            grid_share=grid_share(g["ctas"], m), grid_share_v1=grid_share(g1["ctas"], m)))
            meas = MEASURED_2026_11_27.get((tuple(inst), s["name"]))
            # v1: one split a sequence, so the CTA's overhead spreads over ctx / tile tiles, not a split's
            n1 = max(1, -(-s["ctx"] // md["tile_tokens"]))
            ov1 = r["outside"] * warps / n1
            wic1 = wic - min(n1, dec_stages() - 1) / n1 * iss_c
            f7 = roof_fraction(md["bytes_per_tile"], wic1 + ov1, m, ipc=CALIBRATION["ipc"], **g1)[1]
            # the IPC per busy SM at which that count gives what v1 measured (its grid_share of the SMs)
            ipc_v1 = [meas[1] * m["roof_gbs"] * (wic1 + ov1) / (md["bytes_per_tile"] * m["sms"] * grid_share(g1["ctas"], m)
                                                                 * clk) for clk in (m["clock_ghz"], 1.98)] if meas else None
            out[-1].update(overhead_v1=ov1, frac_v1_ipc_measured=f7, ipc_v1_implied=ipc_v1,
                           insts_recommended=wic_once + ov, insts_v1=wic1 + ov1)
            w("| %s/%s | %s | %s | %d, %d B | %d (%s) / %d (%s) | %.0f | %.0f | %.0f / %.0f | %.2f | %s | %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s |" % (
                r["instance"][0], r["instance"][1], s["name"], short_name(r["kernel"]), md["tile_tokens"],
                md["bytes_per_tile"], g["ctas"], pct(grid_share(g["ctas"], m)), g1["ctas"], pct(grid_share(g1["ctas"], m)),
                wi, ov, skipf * iss, skipf * iss_c, md["bytes_per_tile"] / wi, pct(min(1, f1)), pct(min(1, f2)),
                pct(min(1, f3)), wic, pct(min(1, f5)), "%.0f" % ovp if ovp is not None else "-",
                pct(min(1, f6)) if f6 is not None else "-", pct(min(1, f7)),
                pct(min(1, f4)) if f4 is not None else "- (no executed count)",
                "%s / %s" % (pct(meas[0]), pct(meas[1])) if meas else "-",
                "%.2f / %.2f" % tuple(ipc_v1) if ipc_v1 else "-"))
    if exec_ratio:
        w("")
        w("`predicted`: the count times %.2f (executed / counted, %s %s/%s on an H100), at %.2f GHz and %.2f IPC"
          " (what the H100 reached at 4 warps per scheduler), against the measured %s there"
          " (gpu-report-2026-11-23-H100.md). Bandwidth, not issue, caps the rest. Only rows of the kernel"
          " that was measured (%s) get it; `- (no executed count)` marks a kernel whose executed instructions"
          " no ncu run has counted. The last column is what the H100 measured on 2026-11-27"
          " (gpu-report-2026-11-27-H100.md, whose last section compares the two). Since 2026-12-06 every roof"
          " column but `predicted` counts only the SMs the grid gives work (the `grid` column: CTAs spread over"
          " the %d SMs, an SM's CTAs sharing its issue slots, so a launch takes as long as its busiest SM's"
          " ceil(CTAs / %d) CTAs; v1 at b=1 x 32K is 8 CTAs (GQA) or 32 (MHA), 6%% or 24%% of the SMs), an SM"
          " issuing at most one instruction a clock per scheduler that holds a warp; before, every row assumed all %d"
          " SMs busy, and the v1 IPC column averaged over all of them." % (
              exec_ratio, c2["shape"], c2["instance"][0], c2["instance"][1], c2["clock_ghz"], c2["ipc"],
              pct(c2["measured"]), c2["kernel"], m["sms"], m["sms"], m["sms"]))
        w("")
        w("Checked against the other shapes measured on the H100:")
        w("")
        for c in c2["checks"]:
            w("- " + c)
    w("")
    h200_table(w, out, m)
    return "\n".join(L), out


def ipc_needed(bytes_per_tile, insts, frac, m, ctas=None):
    """The issue rate (warp instructions per clock per busy SM) at which a tile of
    bytes_per_tile bytes costing insts warp instructions moves frac of m's roof, on the
    grid_share of the SMs a grid of ctas CTAs keeps busy (all of them without ctas)."""
    return frac * m["roof_gbs"] * insts / (bytes_per_tile * m["sms"] * grid_share(ctas, m) * m["clock_ghz"])


def h200_table(w, out, m=H100, target=0.9):
    """The roof rows again for the H200: the same instruction counts against its
    roof. A prediction made before any H200 run, for issue 15's comparison."""
    h = H200
    w("### The H200: the issue rate 90%% of its roof needs (copy roof %.0f GB/s, same SMs and clocks)" % h["roof_gbs"])
    w("")
    w("An H200 has the H100's processor and %.2fx its copy roof (%.0f against %.0f GB/s), so a tile's instruction"
      " count must issue %.2fx as fast for the same fraction. Counts as in the table above, common path: the"
      " recommended entry's (its CTA overhead over a split's tiles) and v1's (over a whole sequence's)."
      " `IPC needed` is the issue rate, in warp instructions per clock per busy SM (since 2026-12-06: the SMs the"
      " grid gives work, as above; more than 4 is out of reach) at %.3f GHz (x %.2f at the 1.98 GHz"
      " boost), at which that count moves %.0f%% of the roof; `at 2.14 IPC` is the fraction the rate ncu measured"
      " for the split kernel at 4 warps per scheduler allows. A row needing more than about 2 is predicted"
      " issue-bound on the H200: its instruction count, not the memory, is what to cut. A row needing less is"
      " bound by bytes in flight and latency, which this count does not see (the H100's v1 rows reached the"
      " measured fraction at the IPC in the last column, well under 2.14)." % (
          h["roof_gbs"] / m["roof_gbs"], h["roof_gbs"], m["roof_gbs"], h["roof_gbs"] / m["roof_gbs"],
          m["clock_ghz"], m["clock_ghz"] / 1.98, 100 * target))
    w("")
    w("| instance | shape | kernel | tile bytes | warp insts per tile: recommended / v1 | IPC needed, %.0f%% of the H100's roof:"
      " recommended / v1 | IPC needed, %.0f%% of the H200's roof: recommended / v1 | at %.2f IPC on the H200: recommended / v1"
      " | IPC per busy SM the H100's measured v1 implies (%.3f GHz) |" % (100 * target, 100 * target, CALIBRATION["ipc"], m["clock_ghz"]))
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in out:
        if r.get("insts_recommended") is None:
            continue
        b, ir, i1 = r["bytes"], r["insts_recommended"], r["insts_v1"]
        gs = [dict(ctas=r["ctas"], warps=r["warps"], occ=r["ctas_per_sm"]),
              dict(ctas=r["ctas_v1"], warps=r["warps"], occ=r["ctas_per_sm"])]
        at = [min(1, roof_fraction(b, i, h, ipc=CALIBRATION["ipc"], **g)[1]) for i, g in zip((ir, i1), gs)]
        w("| %s/%s | %s | %s | %d | %.0f / %.0f | %.2f / %.2f | %.2f / %.2f | %s / %s | %s |" % (
            r["instance"][0], r["instance"][1], r["shape"], r["kernel"], b, ir, i1,
            ipc_needed(b, ir, target, m, r["ctas"]), ipc_needed(b, i1, target, m, r["ctas_v1"]),
            ipc_needed(b, ir, target, h, r["ctas"]), ipc_needed(b, i1, target, h, r["ctas_v1"]), pct(at[0]), pct(at[1]),
            "%.2f" % r["ipc_v1_implied"][0] if r.get("ipc_v1_implied") else "-"))
    w("")


def calibration_text(m=H100):
    c = CALIBRATION
    per = c["warp_insts"] / c["tokens_kvheads"]
    bytes_per = 128 * 2 * 2  # K and V of one token, one KV head, bf16 head 128
    ms_ncu = c["warp_insts"] / (m["sms"] * c["ipc"] * c["ncu_clock_ghz"] * 1e9) * 1e3
    g4 = roof_fraction(bytes_per, per, m)
    g214 = roof_fraction(bytes_per, per, m, ipc=c["ipc"])
    g214b = m["sms"] * c["ipc"] * 1.98 * bytes_per / per
    T = [
        "### Calibration against the H100 (kernel of f7f2891, gpu-report-2026-11-22-H100.md)",
        "",
        "ncu on `decode_split_kernel<bf16,bf16>`, %s: %.1f M warp instructions executed for %d x 4096 tokens x 8 KV heads"
        " = **%.0f warp instructions per (token, KV head)**, which moves %d bytes (K and V, head 128, bf16)." % (
            c["shape"], c["warp_insts"] / 1e6, 64, per, bytes_per),
        "",
        "- At the issue limit (4 per clock per SM, %.3f GHz): %.0f GB/s = **%s of the copy roof**: the most this"
        " instruction stream allows." % (m["clock_ghz"], g4[0], pct(g4[1])),
        "- At the IPC ncu measured (%.2f, with 4 warps per scheduler): %.0f GB/s = %s at %.3f GHz; %.0f GB/s = %s at the"
        " 1.98 GHz boost clock of the benchmark runs." % (c["ipc"], g214[0], pct(g214[1]), m["clock_ghz"], g214b,
                                                         pct(g214b / m["roof_gbs"])),
        "- Check of the arithmetic: %.1f M / (132 x %.2f x %.2f GHz) = %.2f ms; ncu measured %.2f ms. The benchmark"
        " measured %.0f GB/s (%s) outside ncu: the budget at the measured IPC predicts it within 7%%." % (
            c["warp_insts"] / 1e6, c["ipc"], c["ncu_clock_ghz"], ms_ncu, c["ncu_ms"], c["bench_gbs"],
            pct(c["bench_gbs"] / m["roof_gbs"])),
        "",
        "So the issue-slot fraction is an upper bound; what a kernel reaches is that bound times achieved IPC / 4,"
        " and achieved IPC was 2.14 at 4 warps per scheduler. A kernel whose budget allows 100% at 4 IPC still"
        " needs enough warps (or independent instructions) per scheduler to issue at 2+ IPC, and then memory"
        " parallelism (bytes in flight) decides the rest.",
        "",
    ]
    return "\n".join(T)


def method_text(fam_name, m=H100):
    return "\n".join([
        "# Instruction budget: %s (generated by scripts/budget.py)" % fam_name,
        "",
        "No GPU was used for this file: every figure is counted from the sm_90 SASS of the instance files, compiled"
        " with the build's flags (build/compile_commands.json) plus `-cubin -arch=sm_90 -lineinfo`, and read with"
        " cuobjdump / nvdisasm (pip: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm). Regenerate with"
        " `python3 scripts/budget.py --out <this file>` (`--append --label After` adds a section).",
        "",
        "Method:",
        "",
        "1. Resources: registers and spill bytes from `ptxas -v`, static shared and local memory from"
        " `cuobjdump -res-usage`, dynamic shared memory from the host's tile geometry (csrc/ops/decode.c, mirrored in"
        " the family's model). CTAs per SM on an H100: min(65536 / (regs rounded to 256 per warp x warps),"
        " 2048 / threads, 228 KiB / (dynamic smem + cuobjdump's static SHARED, which on sm_90 already holds the 1 KiB"
        " a CTA reserves: counted once since 2026-12-06, twice before), 32).",
        "2. The steady-state loop: every backward branch in the SASS closes a loop [target, branch]; for decode"
        " the tile loop is the outermost one that holds both a `BAR.SYNC` and an `LDGSTS`. Its body is counted by"
        " class (the columns below). `software divisions` counts the reciprocal sequences (`I2F.U32.RP` +"
        " `MUFU.RCP` + fix-ups, about 10-20 instructions each) that a runtime 32-bit divisor costs; calls are"
        " subroutines: 64-bit division/remainder, or the float-division slow path.",
        "3. Per tile: when the loop body has no nested loop left (compile-time shapes, fully unrolled), its count"
        " is the per-warp instruction count of one tile, an upper bound (forward branches only skip code);"
        " times the CTA's warps gives warp instructions per tile. A nested loop needs a trip count from the"
        " family's model (for decode: the block-table refill, recognised by its global loads and shared stores,"
        " runs T / (64 x block size) times per tile); a nested loop with a runtime trip count makes the body"
        " `not countable statically`, and the calibration below stands in.",
        "4. Issue-slot roof: an SM issues at most %d warp instructions per clock (one per sub-partition). A tile"
        " of B bytes costing I warp instructions lets %d SMs move at most %d x %d x %.3f GHz x B / I bytes/s;"
        " divided by the copy roof measured on the H100 (%.0f GB/s), capped at 100%%, that is the largest"
        " fraction of the roof the instruction stream allows. Since 2026-12-06 only the SMs the grid gives work"
        " count: CTAs are spread over the SMs and an SM's CTAs share its issue slots, so a launch of C CTAs keeps"
        " C / (%d x ceil(C / %d)) of the issue slots busy (`grid`; v1, one split a sequence, at b=1 x 32K: 8 CTAs"
        " for GQA 32/8, 32 for MHA), and an SM issues at most one instruction a clock per scheduler that holds a"
        " warp (a lone CTA of 4 warps: 4). `with overhead` adds the CTA's instructions outside"
        " the loop (each counted once) spread over its tiles (recommended entry: 256-token splits at 4K, 512 at"
        " 32K); the merge kernel is not counted. Since 2026-11-30 every column with the overhead (but the"
        " calibrated one, which keeps the count it was calibrated with) counts the loader's call once a tile: the"
        " prologue issues a CTA's first NS - 1 = 2 tiles (in the overhead) and the loop's last NS - 1 iterations"
        " skip theirs (issue_tile's early return), so of n tiles a CTA min(n, NS - 1) / n of the loop's loader"
        " share is left out (its own column; the loop's count with and without the call, ISSUE_SKIP). Before,"
        " a CTA of 2 tiles paid 4 issues where it made 2. Cold code is left out of it (since 2026-11-25, the `+ cold`"
        " column): what only a diverged warp reaches (BRA.DIV's fallbacks for shuffles ptxas cannot prove"
        " convergent), the subroutines behind CALL, and the padding after the final EXIT. `common path` (since"
        " 2026-11-25) leaves out of the loop what the common case branches around: the tensor-core kernel's soft"
        " cap and ALiBi (`if (!plain)`), the loader's block-table refill (once per 64 table entries; its"
        " nested loop already weighted so) and, since 2026-12-01, O's rescale, which a warp runs only where a"
        " head's lazy softmax reference moved (by more than 8 log2 units: a split's first tile, then almost"
        " never; scripts/decode_rescale_model.py); the other columns count them, as upper bounds. `heaviest path`"
        " (since 2026-11-25, tensor-core kernel) counts the CTA overhead as executed instead of once each: the"
        " heaviest path from the entry to the tile loop plus from the loop's end to an EXIT, the loops there"
        " weighted by their trips (CTA_LOOPS), cold code avoided, and so is the query's 2-byte load path"
        " (CTA_RARE: rows not 4-byte aligned, which serving calls do not pass). Every branch takes its"
        " heavier side: all of"
        " the CTA's head slots (8, or 16 with two head blocks) whatever the group, both prologue tiles'"
        " refill. A static count misses loops: the epilogue's output loop ran once per head, and counted once"
        " it hid up to 15 of 16 heads' stores." % (
            m["issue_per_clock"], m["sms"], m["sms"], m["issue_per_clock"], m["clock_ghz"], m["roof_gbs"], m["sms"],
            m["sms"]),
        "",
        "Shapes (issue 13): head 128, block 16, NHD, bf16 query; cache bf16 (2 B) or fp8 e4m3 (1 B); MHA 32/32 and"
        " GQA 32/8; batch 64 x 4K and batch 1 x 32K. Bytes per tile = tile tokens x head 128 x element size x 2"
        " (K and V) for one KV head.",
        "",
    ])


# ---- the tensor-core families: prefill and ragged (issue 14 item 7) -----------------------------
#
# Their roof is the tensor pipe, not HBM. A family's model lists, for a shape,
# the kinds of K/V tile its CTAs run (count, useful FLOPs, the source lines of
# features the shape leaves off, the copies a thread issues per tile) and the
# units whose prologue and epilogue are paid once (prefill: CTAs; ragged: work
# items). Their kernels keep every feature in one body behind runtime branches
# (cache or new keys, cp.async or the register path, soft cap, ALiBi), so the
# static loop body counts paths no shape runs: the count per tile is the
# heaviest path through the loop body that (a) avoids the instructions of the
# features left off wherever some path does, and (b) issues exactly the
# shape's cp.async count (and no zero-fill store). A path through an unrolled
# copy loop counts its body times the trip count the model gives.

HMMA_FLOP = 2 * 16 * 8 * 16  # one HMMA.16816 (mma.sync m16n8k16): 2048 FMA
# The tensor pipe's dense peak per SM per clock: 16-bit operands one HMMA.16816 (4096 FLOP) a clock, wgmma
# the same rate; e4m3 twice that. NVIDIA's 989 (16-bit) and 1979 (FP8) TFLOP/s are these x 132 SMs x 1.83
# GHz; at the 1.755 GHz the model uses (H100["clock_ghz"]) the peaks are 949 and 1898 (peak_tflops). Every
# tensor-core percentage is of the peak at the model's clock. Before 2026-12-06 the bounds took 989 at
# 1.755 GHz: 1.042 HMMA.16816 per SM per clock (4269 FLOP; fp8 8543), 4.2% more than the pipe does.
TENSOR_FLOP_PER_SM_CLOCK = 4096
FP8_FLOP_PER_SM_CLOCK = 8192
DATASHEET_TFLOPS = 989.0  # NVIDIA's H100 SXM dense f16/bf16 figure (at 1.83 GHz), quoted beside the model's peak
# mma.sync's own ceiling on sm_90, measured (not the wgmma rate): ncu's 100% of the HMMA pipe was 0.67
# HMMA.16816 per SM per clock in the 2026-11-22 calibration (pipe active 14.73% of 10.53 M active cycles per
# SM: PREFILL_CALIBRATION); run 13 (2026-11-27: pipe active 46.5% at 286 TFLOP/s, gpu-report-2026-11-27-H100.md)
# gives 0.58-0.66 with the launch's 1.924 ms outside ncu at 1.98 or 1.755 GHz. The prefill and ragged
# families' tensor bound (mma.sync kernels: bounds_of) takes this rate since 2026-12-06, not the pipe's peak
# (1 a clock, wgmma's rate), which it took before.
MMA_SYNC_HMMA_PER_CLOCK = 0.67
SMEM_BYTES_PER_CLOCK = 128  # shared memory: 32 banks x 4 B per clock per SM (assumed, as on A100)

# What the H100 measured for prefill_mma_kernel<Cfg<128, 64, 64, bf16>>, causal prompt b=4 x 4096,
# heads 32/8, head 128 (gpu-report-2026-11-22-H100.md and its ncu sections file; the kernel of
# 603e1bb, before the PTX moved into cuda/ptx.cuh), and the same shape in run 7 (2026-11-23).
PREFILL_CALIBRATION = dict(
    shape="causal prompt, b=4 x 4K, 32/8, head 128",
    kernel="pa_prefill::prefill_mma_kernel<pa::tile::Cfg<128, 64, 64, 2> >",  # the kernel the H100 measured
    executed=2012421504,  # warp instructions, ncu (ncu-prefill-sections-2026-11-22-H100.txt)
    ipc=1.45,  # executed IPC (active), 2 warps per scheduler
    sm_clock_ghz=1.48,  # ncu's locked SM clock in that run
    active_cycles=10528946.37,  # SM active cycles, per SM
    ncu_ms=7.27,
    hmma_pipe=0.1473,  # sm__pipe_tensor_op_hmma_cycles_active, of peak sustained (active), run 7 csv
    bench_ms=5.9874,  # side by side, run 7 (gpu-check-2026-11-23-H100-run7.md)
    bench_tflops=92.0,
    gemm_tflops=791.0,  # bf16 GEMM 8192^3 measured in the same run
)


def hmma_per_clock(m=H100):
    """HMMA.16816 per clock per SM at the tensor pipe's dense 16-bit peak: 1, at any clock."""
    return TENSOR_FLOP_PER_SM_CLOCK / HMMA_FLOP


def peak_tflops(m=H100, fp8=False):
    """The dense tensor peak at m's clock: 949 TFLOP/s (16-bit) or 1898 (e4m3) at 1.755 GHz."""
    return (FP8_FLOP_PER_SM_CLOCK if fp8 else TENSOR_FLOP_PER_SM_CLOCK) * m["sms"] * m["clock_ghz"] * 1e9 / 1e12


_SRC = {}


def _src(rel):
    if rel not in _SRC:
        with open(os.path.join(ROOT, rel)) as f:
            _SRC[rel] = f.read().split("\n")
    return _SRC[rel]


def src_lines(rel, rx):
    """{"file:line"} of the lines of ROOT/rel matching rx (an error when none does: the
    marker went stale)."""
    base = os.path.basename(rel)
    out = {"%s:%d" % (base, n) for n, t in enumerate(_src(rel), 1) if re.search(rx, t)}
    if not out:
        sys.exit("budget.py: no line of %s matches %r (update the family's markers)" % (rel, rx))
    return out


def marker_lines(markers):
    """{"file:line"} of every (rel, rx) pair's lines (src_lines)."""
    out = set()
    for rel, rx in markers:
        out.update(src_lines(rel, rx))
    return out


def src_span(rel, start, end):
    """{"file:line"} from the first line matching start through the next line matching end."""
    base = os.path.basename(rel)
    out, on = set(), False
    for n, t in enumerate(_src(rel), 1):
        if not on and re.search(start, t):
            on = True
        elif on and re.search(end, t):
            out.add("%s:%d" % (base, n))
            return out
        if on:
            out.add("%s:%d" % (base, n))
    sys.exit("budget.py: no span %r .. %r in %s (update the family's markers)" % (start, end, rel))


def _uncond(pred):
    return pred in ("", "@PT", "@UPT")


def _never(pred):
    return pred in ("@!PT", "@!UPT")


def _successors(insts, k, start, end, idx):
    """Forward successors of instruction k inside [start, end]; back edges and branches out of the
    region end the path there (not allowed unless k is an end)."""
    i = insts[k]
    op, pred = i["op"], i["pred"]
    nxt = [k + 1] if k + 1 <= end else []
    if _never(pred):
        return nxt
    if op.startswith("BRA"):
        t = idx.get(i["target"]) if i["target"] is not None else None
        tgt = [t] if t is not None and k < t <= end else []
        if _uncond(pred) and not op.startswith("BRA.DIV"):
            return tgt
        return sorted(set(nxt + tgt))
    if op.startswith(("EXIT", "RET", "BRX", "JMP", "JMX", "KILL")) and _uncond(pred):
        return []
    return nxt


def forward_path(insts, rare=None, need=()):
    """The longest forward path from a function's entry to an unconditional EXIT, as instruction
    indices (heaviest_path at weight 1: back edges dropped; CALLs fall through, their subroutines
    after the last EXIT left out): what a warp issues for one trip of each loop, for a copy kernel
    whose thread moves one chunk (scripts/merge_budget.py, convert_budget.py, cache_budget.py).
    rare(inst): instructions the path avoids wherever a path can (a slow path the common case
    skips). need: heaviest_path's [(name, test(inst), count)], instructions the path must hold (a
    chunk's vector load: a path that skips a loop's body is shorter only where the body holds a
    rare instruction). Branch targets must be resolved (resolve_labels) for the path to follow
    them. [] where no path meets need."""
    exits = [k for k, ins in enumerate(insts) if ins["op"].startswith("EXIT") and _uncond(ins["pred"])]
    forbid = (lambda k: rare(insts[k])) if rare else (lambda k: False)
    found = heaviest_path(insts, 0, exits, lambda k: 1, forbid, list(need)) if exits else None
    return found[0] if found else []


def longest_forward_path(insts, rare=None, need=()):
    """len(forward_path(...)): 0 where no path meets need."""
    return len(forward_path(insts, rare, need))


def copy_kernel_sass(build, src, work, tag, text=None):
    """(ptxas -v's info, cuobjdump -res-usage's, {function: instructions} with branch targets
    resolved) of src (or text in its place: compile_cubin) compiled to an sm_90 cubin in work."""
    cubin = os.path.join(work, tag + ".cubin")
    ptxas = ptxas_info(compile_cubin(os.path.abspath(build), src, cubin, text=text))
    res = res_usage(find_tool("cuobjdump", PIP_CMD), cubin)
    nvdisasm = find_tool("nvdisasm", PIP_CMD)
    funcs = disassemble(nvdisasm, cubin)
    resolve_labels(nvdisasm, cubin, funcs)  # branch targets: the paths follow them
    return ptxas, res, funcs


def heaviest_path(insts, start, ends, weight, forbid, need):
    """The heaviest path from instruction start to one of ends (indices, inclusive) over forward
    edges. Instruction k adds weight(k) (its executions per pass: the product of the trip counts
    of the loops around it; back edges are dropped). Instructions with forbid(k) are avoided
    wherever a path avoids them. need: [(name, test(inst), count)]: the path must hold exactly
    count executions of instructions passing test. Returns (path, forbidden instructions it could
    not avoid) or None when no path meets need."""
    ends = set(ends)
    end = max(ends)
    idx = {ins["addr"]: k for k, ins in enumerate(insts)}
    cap = tuple(c for _, _, c in need)
    big = 1e6
    contrib, score = {}, {}
    for k in range(start, end + 1):
        w = weight(k)
        c = []
        for _, test, _ in need:
            if w and test(insts[k]):
                if abs(w - round(w)) > 1e-9:
                    sys.exit("budget.py: a needed count runs a fractional number of times (%s)" % insts[k]["op"])
                c.append(int(round(w)))
            else:
                c.append(0)
        contrib[k] = tuple(c)
        score[k] = w - (big if w and forbid(k) else 0)
    best = {}
    for k in range(end, start - 1, -1):
        ck, sk = contrib[k], score[k]
        d = {}
        if k in ends and all(a <= b for a, b in zip(ck, cap)):
            d[ck] = (sk, None)
        for s in _successors(insts, k, start, end, idx):
            for v, (sc, _) in best.get(s, {}).items():
                nv = tuple(a + b for a, b in zip(v, ck))
                if any(a > b for a, b in zip(nv, cap)):
                    continue
                t = sc + sk
                if nv not in d or t > d[nv][0]:
                    d[nv] = (t, s)
        if d:
            best[k] = d
    if start not in best or cap not in best[start]:
        return None
    path, k, v = [], start, cap
    while k is not None:
        path.append(k)
        nk = best[k][v][1]
        v = tuple(a - b for a, b in zip(v, contrib[k]))
        k = nk
    return path, sum(1 for k in path if weight(k) and forbid(k))


def laminar_loops(insts, loops):
    """Loops that nest properly. A back edge from code placed after the function's end (the
    divergent-warp fallback of a shuffle jumps back into the body) closes no real loop: of two
    partly overlapping ranges the one reaching further down is dropped; so are one-instruction
    self loops (the BRA-to-self after the last EXIT)."""
    ls = [l for l in loops if l["hi"] > l["lo"]]
    changed = True
    while changed:
        changed = False
        for a in ls:
            for b in ls:
                if a is b:
                    continue
                if a["lo"] < b["lo"] <= a["hi"] < b["hi"]:
                    ls.remove(b)
                    changed = True
                    break
            if changed:
                break
    return ls


def loop_weight(insts, loops, trips):
    """weight(k) for the given loops (trips(loop) -> executions of its body per pass), or the
    loop whose trips is None."""
    ws = []
    for l in loops:
        t = trips(insts, l, loops)
        if t is None:
            return None, l
        ws.append((l["lo"], l["hi"], t))

    def weight(k):
        w = 1
        for lo, hi, t in ws:
            if lo <= k <= hi:
                w *= t
        return w

    return weight, None


def smem_bytes(ins):
    """Shared-memory bytes one warp instruction moves (all 32 lanes): LDS/STS by width, ldmatrix by
    matrices (128 B each), and the shared-memory side of cp.async. Placeholders (@!PT) move none,
    nor does a copy loop's predicated zero-fill store."""
    op = ins["op"]
    if _never(ins["pred"]):
        return 0
    if op == "STS.128" and not _uncond(ins["pred"]):
        return 0  # the predicated zero-fill arm beside a cp.async: no row is absent in these shapes
    if op.startswith("LDSM"):
        m = re.search(r"\.(\d)$", op)
        return 128 * int(m.group(1)) if m else 128
    if op.startswith(("LDS", "STS", "LDGSTS")) and not op.startswith("LDGDEPBAR"):
        for suf, b in ((".128", 16), (".64", 8), (".U16", 2), (".S16", 2), (".U8", 1), (".S8", 1)):
            if suf in op:
                return 32 * b
        return 32 * 4
    return 0


def tally(insts, path, weight, regions=()):
    counts = {name: 0.0 for name, _ in CLASSES}
    where = {name: 0.0 for name, _ in regions}
    where["other"] = 0.0
    t = dict(total=0.0, hmma=0.0, smem=0.0, ldsm=0.0, placeholders=0.0, divisions=0.0, calls=0.0)
    for k in path:
        w = weight(k)
        if not w:
            continue
        i = insts[k]
        counts[classify(i["op"])] += w
        ln = i["line"]
        for name, lines in regions:
            if ln in lines or ln.split(":")[0] in lines:
                where[name] += w
                break
        else:
            where["other"] += w
        t["total"] += w
        if i["op"].startswith("HMMA"):
            t["hmma"] += w
        t["smem"] += w * smem_bytes(i)
        if i["op"].startswith("LDSM"):
            t["ldsm"] += w * smem_bytes(i)
        if _never(i["pred"]) and i["op"].startswith("LDS"):
            t["placeholders"] += w
        if i["op"].startswith("I2F") and ".RP" in i["op"]:
            t["divisions"] += w
        if i["op"].startswith("CALL"):
            t["calls"] += w
    t["counts"] = counts
    t["where"] = where
    t["path"] = list(path)
    return t


def mma_tile_loops(insts, loops):
    """The loops holding an HMMA, a CTA barrier and a cp.async (the next tile's copy)."""
    cands = []
    for l in laminar_loops(insts, loops):
        ops = [insts[k]["op"] for k in range(l["lo"], l["hi"] + 1)]
        if (any(o.startswith("HMMA") for o in ops) and any(o.startswith("BAR.SYNC") for o in ops)
                and any(o.startswith("LDGSTS") for o in ops)):
            cands.append(l)
    return cands


def mma_select_loop(insts, loops):
    """The K/V tile loop: the innermost loop holding an HMMA, a CTA barrier and a cp.async (the
    next tile's copy). The ragged kernel's persistent item loop holds it; shuffle fallbacks that
    jump back from the function's end hold no cp.async. (A kernel with a tile loop per item shape,
    ragged's, names each tile kind's loop by a source line in it: mma_shape_costs.)"""
    cands = mma_tile_loops(insts, loops)
    if not cands:
        return None
    return min(cands, key=lambda l: l["hi"] - l["lo"])


def _is_cp_async(i):
    return i["op"].startswith("LDGSTS")


def _is_zero_fill(i):
    # The zero-fill branch of a copy (a row or column that does not exist). Inside unrolled copy
    # loops it is predicated beside the cp.async and issues anyway; unpredicated, it is the other
    # arm of a branch, which a shape with every row present does not take.
    return i["op"] == "STS.128" and i["pred"] == ""


def _is_hmma(i):
    return i["op"].startswith("HMMA")


def _is_ldsm_trans(i):
    return i["op"].startswith("LDSM") and ".MT88" in i["op"]


def _is_store16(i):
    # A 16-byte global store: one output (or partial) row group of 8 elements of 16 bits.
    return i["op"].startswith("STG.E.128")


def copy_trips(per_thread, anchor=_is_cp_async):
    """Trips of a copy loop whose source loop runs per_thread times per thread: the compiler
    unrolls it by the number of copies in its body and peels the remainder."""
    def trips(insts, l, loops=None):
        u = sum(1 for k in range(l["lo"], l["hi"] + 1) if anchor(insts[k]))
        return per_thread // u if u else None
    return trips


def anchored_trips(insts, l, iterations, test, per_iteration=1):
    """iterations of a source loop compiled with an unroll factor read from its body: the number
    of instructions passing test, per_iteration of them per source iteration (the compiler peels
    the remainder; the heaviest path may count up to one unroll's worth of it)."""
    n = sum(1 for k in range(l["lo"], l["hi"] + 1) if test(insts[k]))
    u = n // per_iteration
    return iterations // u if u else None


def mma_path_count(insts, start, ends, loops, trips, forbid_lines, need, regions=(), avoid=()):
    """(tally, forbidden kept, None) of the heaviest path from start to one of ends, the loops
    inside weighted by trips, or (None, None, reason). avoid: instruction indices forbidden as
    the lines are (a nested loop the path is not to enter)."""
    end = max(ends)
    inside = [l for l in loops if l["lo"] >= start and l["hi"] <= end]
    weight, bad = loop_weight(insts, inside, trips)
    if weight is None:
        return None, None, "a nested loop with no trip count in the model (back edge %s)" % bad["line"]

    def forbid(k):
        # Reconvergence marks (BSSY/BSYNC) carry the line of whatever branch they close, and every
        # path through the join executes them: they mark no feature.
        if insts[k]["op"].startswith(("BSSY", "BSYNC")):
            return False
        if k in avoid:
            return True
        ln = insts[k]["line"]
        return ln in forbid_lines or ln.split(":")[0] in forbid_lines

    r = heaviest_path(insts, start, ends, weight, forbid, need)
    if r is None:
        return None, None, "no path meets the copy counts (%s)" % ", ".join("%s %d" % (n, c) for n, _, c in need)
    path, kept = r
    return tally(insts, path, weight, regions), kept, None


PTX = "cuda/ptx.cuh"


def tile_regions():
    """Where the shared tile machinery's instructions come from (attn_tile.cuh, ptx.cuh)."""
    return [
        ("mma.sync (HMMA and its operand moves)", src_span(PTX, r"__device__ __forceinline__ void mma16816\(", r"^}")),
        ("ldmatrix", src_span(PTX, r"__device__ __forceinline__ void ldmatrix_x4\(", r"^}")
         | src_span(PTX, r"__device__ __forceinline__ void ldmatrix_x4_trans\(", r"^}")),
        ("QK^T / PV fragment addressing", src_span(ATTN_TILE, r"void qk\(float", r"^}")
         | src_span(ATTN_TILE, r"void pv\(float", r"^}")),
        ("P to 16 bits (pack2)", src_span(ATTN_TILE, r"uint32_t pack2\(float lo", r"^}")
         | {"cuda_bf16.hpp", "cuda_fp16.hpp"}),
        ("online softmax", src_span(ATTN_TILE, r"^template <int MT> struct SoftmaxN \{", r"^};") | {"sm_30_intrinsics.hpp"}),
        ("score hook (for_each_score)", src_span(ATTN_TILE, r"void for_each_score\(", r"^}")),
        ("cp.async, commit, wait", src_span(PTX, r"__device__ __forceinline__ void cp_async\(void", r"^}")
         | src_lines(PTX, r"__device__ __forceinline__ void cp_async(16|_commit)\(|asm volatile\(\"cp\.async\.wait_group")),
        ("copy loop (copy_tile_async / load_rows_async)", src_span(ATTN_TILE, r"void copy_tile_async\(", r"^}")
         | src_span(ATTN_TILE, r"void load_tile_async\(", r"^}")
         | src_span(ATTN_TILE, r"void load_rows_tile_async\(", r"^}")
         | src_span(ATTN_TILE, r"void load_rows_async\(", r"^}")),
        ("fp8 dequantisation in shared memory (dequant_tile)", src_span(ATTN_TILE, r"void dequant_tile\(", r"^}")
         | {"cuda_fp8.hpp"}),
    ]


# ---- prefill model ------------------------------------------------------------------------------

PREFILL_SHAPES = [
    dict(name="causal prompt, b=4 x 4K, 32/8, head 128", mode="prompt", batch=4, q_len=4096, n_cache=0,
         heads=32, kv_heads=8, head=128, dtype="bf16"),
    dict(name="context: 512 new over a 4K prefix, b=4, 32/8, head 128", mode="context", batch=4, q_len=512,
         n_cache=4096, heads=32, kv_heads=8, head=128, dtype="bf16"),
    dict(name="causal prompt, b=4 x 4K, 32/8, head 64", mode="prompt", batch=4, q_len=4096, n_cache=0,
         heads=32, kv_heads=8, head=64, dtype="bf16"),
    dict(name="causal prompt, b=4 x 4K, 32/8, head 256", mode="prompt", batch=4, q_len=4096, n_cache=0,
         heads=32, kv_heads=8, head=256, dtype="bf16"),
    dict(name="causal prompt, b=4 x 4K, 32/8, head 192", mode="prompt", batch=4, q_len=4096, n_cache=0,
         heads=32, kv_heads=8, head=192, dtype="bf16"),
    # Every cache layout on cp.async (issue 14 item 3): vLLM's value tile copied as V^T, and fp8
    # copied raw and dequantised in shared memory, each beside the NHD bf16 context shape above.
    dict(name="context as above, vLLM layout bf16 (V^T tiles)", mode="context", batch=4, q_len=512,
         n_cache=4096, heads=32, kv_heads=8, head=128, dtype="bf16", layout="vllm"),
    dict(name="context as above, NHD fp8 e4m3 (raw, dequantised)", mode="context", batch=4, q_len=512,
         n_cache=4096, heads=32, kv_heads=8, head=128, dtype="bf16", cache="fp8"),
    dict(name="context as above, vLLM layout fp8 e4m3 (raw V^T)", mode="context", batch=4, q_len=512,
         n_cache=4096, heads=32, kv_heads=8, head=128, dtype="bf16", layout="vllm", cache="fp8"),
]

PF_KERNEL = "cuda/prefill/prefill_kernel.cuh"
ATTN_TILE = "cuda/attn_tile.cuh"


def rescale_lines():
    """The source lines of O's rescale (SoftmaxN::rescale), which a steady tile branches around."""
    return src_span(ATTN_TILE, r"static void rescale\(", r"^    }")


def prefill_geometry(hp, compact=False):
    """cuda/prefill/prefill_kernel.cuh TileCfg<HP, DT> = attn_tile.cuh Cfg<HP, BM, BN, DT, WM>; with
    compact, the half-width key tiles the launcher takes on 99 KiB devices (TileCfg<HP, DT, true>)."""
    bm, wm = (128, 32) if hp <= 128 else (64, 16)
    bn = (64 if hp <= 128 else 32) // (2 if compact else 1)
    stride = hp + 8
    v_slot = max(bn * stride, hp * (bn + 8))  # a V slot also holds a V^T tile (TileCfg's VT)
    smem = (bm * stride + 2 * (bn * stride + v_slot)) * 2
    return dict(bm=bm, bn=bn, wm=wm, threads=bm // wm * 32, smem=smem)


def prefill_work(shape, hp):
    """The CTAs of the launch (csrc/ops/prefill.c grid: m-tiles x sequences x KV heads) and their
    key tiles, as prefill_mma_kernel walks them (causal, no window): cache tiles, new-key tiles,
    and the useful FLOPs (4 x head x visible query-key pairs, every query head)."""
    g = prefill_geometry(hp)
    bm, bn = g["bm"], g["bn"]
    group = shape["heads"] // shape["kv_heads"]
    q_len, n_cache = shape["q_len"], shape["n_cache"]
    k_len = n_cache + q_len
    rows = q_len * group
    m_tiles = (rows + bm - 1) // bm
    shift = k_len - q_len
    nt_c = nt_p = pairs = pairs_c = 0
    # Tiles that need the masks (the kernel's `edge`: the tile ends its segment or
    # crosses the causal diagonal of the CTA's first row) and their visible pairs.
    edge = dict(cache=0, new=0)
    edge_pairs = dict(cache=0, new=0)
    for i in range(m_tiles):
        m0 = i * bm
        tok_hi = min(q_len - 1, (m0 + bm - 1) // group)
        qpos_lo = shift + m0 // group
        k_end = min(k_len, shift + tok_hi + 1)
        c_end = min(k_end, n_cache)
        nt_c += (c_end + bn - 1) // bn if c_end > 0 else 0
        nt_p += (k_end - n_cache + bn - 1) // bn if k_end > n_cache else 0
        vis = [min(k_len, shift + r // group + 1) for r in range(m0, min(m0 + bm, rows))]
        for kind, lo, hi in (("cache", 0, c_end), ("new", n_cache, k_end)):
            for ks in range(lo, hi, bn):
                if hi < ks + bn or ks + bn - 1 > qpos_lo:
                    edge[kind] += 1
                    edge_pairs[kind] += sum(max(0, min(v, hi, ks + bn) - ks) for v in vis)
        for v in vis:
            pairs += v
            pairs_c += min(v, n_cache)
    units = shape["batch"] * shape["kv_heads"]
    f = 4.0 * shape["head"] * units
    return dict(ctas=m_tiles * units, cache_tiles=nt_c * units, new_tiles=nt_p * units, flops=f * pairs,
                cache_flops=f * pairs_c, new_flops=f * (pairs - pairs_c), m_tiles=m_tiles,
                cache_edge_tiles=edge["cache"] * units, new_edge_tiles=edge["new"] * units,
                cache_edge_flops=f * edge_pairs["cache"], new_edge_flops=f * edge_pairs["new"])


def prefill_model(inst, shape):
    dt, hp = inst
    g = prefill_geometry(hp)
    wk = prefill_work(shape, hp)
    chunks = g["bn"] * (hp // 8) // g["threads"]  # 16-byte copies per thread per K (or V) tile
    q_chunks = g["bm"] * (hp // 8) // g["threads"]
    vt = shape.get("layout") == "vllm"  # cache V tiles copied as V^T, read by plain ldmatrix
    raw = shape.get("cache") == "fp8"   # cache tiles copied raw (fp8), dequantised after the barrier
    raw_chunks = g["bn"] * (hp // 16) // g["threads"]
    # ldmatrix.trans per warp per tile: P V from key-row V tiles (none from V^T tiles)
    ldsm_t = g["bn"] // 16 * (hp // 16)
    off = set()
    # Features the shapes leave off: soft cap, ALiBi, the register path (fp8, vLLM values,
    # unaligned rows), and the other key source.
    off |= src_lines(PF_KERNEL, r"tanhf\(x \* walk\.inv_cap\)|slope_tab\[r\] \* \(float\)\(kp - qp\)")
    off |= src_span(ATTN_TILE, r"void load_rows_gather\(", r"^}")
    off |= src_span(PF_KERNEL, r"void load8\(int r, int d0, float", r"^    }")
    if not raw:
        off |= src_span(ATTN_TILE, r"void dequant_tile\(", r"^}") | {"cuda_fp8.hpp"}
        off |= src_span(PF_KERNEL, r"void load_raw\(uint8_t", r"^}")
    if not vt:
        off |= src_span(PF_KERNEL, r"void load_vt\(E \*tile", r"^}")
    cache_only = src_lines(PF_KERNEL, r"p\.block_tables\[\(int64_t\)s \* p\.block_table_stride|pa_kv_key_offset\(|"
                                      r"pa_kv_value_offset\(|const int bi = pa_kv_divide\(") | {"kv_index.h"}
    # Dequantisation runs on raw cache tiles only (and the late issue behind it).
    cache_only |= src_span(ATTN_TILE, r"void dequant_tile\(", r"^}") | {"cuda_fp8.hpp"}
    # So do the V^T and raw copies.
    cache_only |= src_span(PF_KERNEL, r"void load_raw\(uint8_t", r"^}") | src_span(PF_KERNEL, r"void load_vt\(E \*tile", r"^}")
    # And the cache's runs of slots (load_cache_runs: its lambdas; the copies themselves carry
    # copy_rows_runs's lines, which the new keys' strided copies share).
    cache_only |= src_span(PF_KERNEL, r"void load_cache_runs\(typename", r"^}")
    new_only = src_lines(PF_KERNEL, r"const int64_t row = sq\.k_row0|ko = row \* p\.k_stride|vo = row \* p\.v_stride")
    # The new keys' shared row offsets serve only the register path (unaligned packed rows): the
    # shapes' 16-byte rows load by stride (load_rows_strided).
    off |= new_only
    # The new keys' copies (issue_tile's arm after the cache's; the copy loop's own instructions
    # carry attn_tile.cuh's lines, so the arm is known by its address set-up).
    new_copy = src_span(PF_KERNEL, r"void load_rows_strided\(", r"^}") | src_span(PF_KERNEL, r"^        if \(p\.vec_new\) \{", r"^    \};")
    blocks_ok = src_lines(PF_KERNEL, r"for \(int i = threadIdx\.x; i < nb; i \+= THREADS\)")
    order_ok = src_lines(PF_KERNEL, r"for \(int i = threadIdx\.x \+ 1; i < s; i \+= THREADS\)")
    q_rows = src_lines(PF_KERNEL, r"for \(int r = threadIdx\.x; r < BM; r \+= C::kThreads\)")
    copy_loop = (src_span(ATTN_TILE, r"void copy_tile_async\(", r"^}") | src_span(ATTN_TILE, r"void load_tile_async\(", r"^}")
                 | src_span(ATTN_TILE, r"void load_rows_tile_async\(", r"^}"))
    gather_loop = src_span(ATTN_TILE, r"void load_rows_gather\(", r"^}")
    store_loop = src_span(ATTN_TILE, r"void store_rows\(", r"^}")
    context = shape["mode"] == "context"
    nb = (shape["n_cache"] + 15) // 16  # block size 16

    def trips_tile(insts, l, loops):
        if l["line"] in copy_loop:
            return copy_trips(chunks)(insts, l)
        if l["line"] in gather_loop:
            return 0
        return None

    def trips_cta(insts, l, loops):
        if l["line"] in copy_loop:
            # The prologue copies Q (first: its cp.async loops come before its register-path
            # loops), then the first K and V tile.
            first_gather = min([x["lo"] for x in loops if x["line"] in gather_loop] or [l["lo"] + 1])
            return copy_trips(q_chunks if l["lo"] < first_gather else chunks)(insts, l)
        if l["line"] in gather_loop:
            return 0
        if l["line"] in q_rows:  # Q row offsets: BM rows over the CTA's threads
            return anchored_trips(insts, l, (g["bm"] + g["threads"] - 1) // g["threads"],
                                  lambda i: i["op"].startswith("STS"))
        if l["line"] in blocks_ok:  # the block-table check, context mode only
            per = (nb + g["threads"] - 1) // g["threads"] if context else 0
            return anchored_trips(insts, l, per, lambda i: i["op"].startswith("LDG.E"))
        if l["line"] in order_ok:  # the earlier sequences' ends (rows in order): the batch's last sequence's
            per = (max(shape["batch"] - 2, 0) + g["threads"] - 1) // g["threads"]
            return anchored_trips(insts, l, per, lambda i: i["op"].startswith("LDG.E"))
        if l["line"] in store_loop:  # output rows: 16 rows x head/8 groups per warp over 32 lanes
            return anchored_trips(insts, l, g["wm"] * (shape["head"] // 8) // 32,
                                  lambda i: i["op"].startswith("STG.E.128"))
        return None

    # copy_tile_async zero-fills with the copy itself (src-size 0): no zero-fill arm to avoid
    # (an unpredicated STS.128 on the path is the softmax's parked sums, or the dequantisation's
    # stores). The copies a thread issues and the ldmatrix.trans a warp issues pick the arm: raw
    # fp8 or 16-bit copies, key-row V or V^T.
    need_new = [("cp.async", _is_cp_async, 2 * chunks), ("ldmatrix.trans", _is_ldsm_trans, ldsm_t)]
    need_cache = [("cp.async", _is_cp_async, 2 * (raw_chunks if raw else chunks)),
                  ("ldmatrix.trans", _is_ldsm_trans, 0 if vt else ldsm_t)]
    csz = 1 if raw else 2
    kv_bytes = dict(cache=g["bn"] * shape["head"] * 2 * csz, new=g["bn"] * shape["head"] * 2 * 2)
    # Interior tiles take the scale only; edge tiles (segment end, causal
    # diagonal) run the masking lambda (prefill_kernel.cuh's `edge`).
    masks = src_span(PF_KERNEL, r"pa::tile::for_each_score<C>\(sc, \[&\]", r"^            \}\);")
    # O's rescale runs only where a row's reference moved (SoftmaxN::update, lazy by kLazy = 8 log2
    # units since 2026-12-01): a row's first key moves it, and afterwards only a logit 8 log2 units
    # (5.5 natural-log units) past it does. The model gives each CTA one interior tile that moves
    # (its first, where the reference leaves -inf) and none after: the data of these shapes
    # (random rows, logits of a few units) never rises so far, nor does a real prompt once its
    # first keys are in. Edge tiles keep the rescale on their path (an upper bound).
    rescale = rescale_lines()
    first = "cache" if context else "new"
    tiles = []
    # A cache of the query dtype in blocks of a multiple of 8 slots (the shapes' 16) copies its
    # tiles in runs (load_cache_runs), never through the per-row offset table (load_tile_async).
    row_table_copy = (src_span(ATTN_TILE, r"void load_tile_async\(", r"^}")
                      | src_span(ATTN_TILE, r"void load_rows_tile_async\(", r"^}"))
    for kind, name, other in (("cache", "cache tile", new_copy | row_table_copy), ("new", "new-key tile", cache_only)):
        n_all, n_edge = wk[kind + "_tiles"], wk[kind + "_edge_tiles"]
        f_all, f_edge = wk[kind + "_flops"], wk[kind + "_edge_flops"]
        need_tile = need_cache if kind == "cache" else need_new
        n_int = n_all - n_edge
        n_move = min(wk["ctas"], n_int) if kind == first else 0
        if n_move:
            tiles.append(dict(name=name + ", interior, a row's reference moving (O rescaled)", count=n_move,
                              flops=(f_all - f_edge) * n_move / n_int, forbid=off | other | masks, need=need_tile,
                              trips=trips_tile, hmma=g["wm"] // 16 * hp * g["bn"] // 64, kv_bytes=kv_bytes[kind]))
        if n_int - n_move:
            tiles.append(dict(name=name + ", interior", count=n_int - n_move,
                              flops=(f_all - f_edge) * (n_int - n_move) / n_int,
                              forbid=off | other | masks | rescale, need=need_tile, trips=trips_tile,
                              hmma=g["wm"] // 16 * hp * g["bn"] // 64, kv_bytes=kv_bytes[kind]))
        if n_edge:
            tiles.append(dict(name=name + ", edge (masks)", count=n_edge, flops=f_edge,
                              forbid=off | other, need=need_tile, trips=trips_tile,
                              hmma=g["wm"] // 16 * hp * g["bn"] // 64, kv_bytes=kv_bytes[kind]))
    units = [dict(name="CTA", count=wk["ctas"], region="cta", trips=trips_cta,
                  forbid=off | (new_copy if context else cache_only),
                  need=[("cp.async", _is_cp_async, q_chunks + 2 * (raw_chunks if context and raw else chunks))],
                  need_epi=[("16-byte output stores", _is_store16, g["wm"] * (shape["head"] // 8) // 32)],
                  note="Q tile and the first %s K/V tile copied in the prologue" % first)]
    esz = 2
    hbm = shape["batch"] * (2 * shape["q_len"] * shape["heads"] * shape["head"] * esz  # Q in, O out
                            + 2 * shape["n_cache"] * shape["kv_heads"] * shape["head"] * csz
                            + 2 * shape["q_len"] * shape["kv_heads"] * shape["head"] * esz)
    regions = tile_regions() + [
        ("masking lambda (scale, soft-cap test, ALiBi, causal/window)",
         src_span(PF_KERNEL, r"pa::tile::for_each_score<C>\(sc, \[&\]", r"^            \}\);")
         | src_lines(PF_KERNEL, r"const bool edge = ke < ks \+ BN|const bool plain = ")),
        ("copy source addresses (Src, load_tile, issue_tile)",
         src_span(PF_KERNEL, r"int64_t col\(int d\) const", r"bool valid\(int r\) const")
         | src_span(PF_KERNEL, r"void load_tile\(typename C::T", r"^}")
         | src_span(PF_KERNEL, r"void load_raw\(uint8_t", r"^}") | src_span(PF_KERNEL, r"void load_vt\(E \*tile", r"^}")
         | src_span(PF_KERNEL, r"void load_rows_strided\(", r"^}")
         | src_span(PF_KERNEL, r"void copy_rows_runs\(typename", r"^}")
         | src_span(PF_KERNEL, r"void load_cache_runs\(typename", r"^}")
         | src_lines(PF_KERNEL, r"auto stage_of = |auto raw_k = |auto raw_v = ")
         | src_span(PF_KERNEL, r"auto issue_tile = ", r"^    \};")),
        ("next tile's row offsets (tile_rows, block table)", src_span(PF_KERNEL, r"auto tile_rows = ", r"^    \};")
         | src_lines(PF_KERNEL, r"auto tile_start = |auto tile_end = ") | {"kv_index.h"}),
        ("tile loop control, barriers", src_span(PF_KERNEL, r"for \(int t = 0; t < walk\.n_tiles; t\+\+\)", r"^    }")),
    ]
    # The full tiles' kernel (an instance at heads 128 and 256 also holds the compact one).
    kernel = r"prefill_mma_kernelIN2pa4tile3CfgILi%dELi%dELi%dE" % (hp, g["bm"], g["bn"])
    return dict(kernel=kernel, threads=g["threads"], smem=g["smem"], tiles=tiles, units=units,
                regions=regions, flops=wk["flops"], hbm_bytes=hbm, tile_rows=g["bm"], tile_keys=g["bn"],
                work="%d CTAs; %d cache + %d new-key tiles" % (wk["ctas"], wk["cache_tiles"], wk["new_tiles"]))


def prefill_shape_instance(shape):
    return (shape["dtype"], (shape["head"] + 31) // 32 * 32)


# ---- ragged model -------------------------------------------------------------------------------

RG_MMA = "cuda/ragged/ragged_mma.cuh"
RG_COMMON = "cuda/ragged/ragged_common.cuh"
# Whether the ragged shapes' counts include the lse output's row passes (ragged.h; the shapes and
# the benchmarks ask for no lse). PA_BUDGET_RAGGED_LSE=1 counts them.
RG_LSE_COUNTED = os.environ.get("PA_BUDGET_RAGGED_LSE") == "1"
RG_DEC_ROWS, RG_KEY_TILE = 16, 64  # csrc/shared/ragged_internal.h


def rg_tile_rows(hp):
    """pa_rg_tile_rows: 128-row prefill tiles (32 per warp) up to head 128 on f16/bf16, else 64."""
    return 128 if hp <= 128 else 64
RG_DEC_MIN_CHUNK, RG_DEC_MAX_SPLITS, RG_PRE_MIN_CHUNK, RG_PRE_MAX_SPLITS = 512, 16, 2048, 4

# The mixed step of issue 14 (`pagedattn bench ragged --seqs 4 --qlen 512 --decodes 60 --ctx 4096`:
# every sequence has ctx tokens cached, kv_len = ctx + q_len), and its head 64 / 256 variants.
RAGGED_SHAPES = [
    dict(name="mixed: 4 x 512 prefill + 60 decodes, ctx 4K, 32/8, head 128", prefill=4, qlen=512, decodes=60,
         ctx=4096, heads=32, kv_heads=8, head=128, dtype="bf16"),
    dict(name="mixed: 4 x 512 prefill + 60 decodes, ctx 4K, 32/8, head 64", prefill=4, qlen=512, decodes=60,
         ctx=4096, heads=32, kv_heads=8, head=64, dtype="bf16"),
    dict(name="mixed: 4 x 512 prefill + 60 decodes, ctx 4K, 32/8, head 256", prefill=4, qlen=512, decodes=60,
         ctx=4096, heads=32, kv_heads=8, head=256, dtype="bf16"),
    dict(name="mixed as above, head 128, fp8 e4m3 pages (raw: prefill items convert them in shared memory, "
              "decode items read the bytes)", prefill=4, qlen=512,
         decodes=60, ctx=4096, heads=32, kv_heads=8, head=128, dtype="bf16", cache="fp8"),
]


def _cdiv(a, b):
    return (a + b - 1) // b


def ragged_items(q_len, kv_len, group, nkv, pre_rows):
    """csrc/shared/ragged_internal.h pa_rg_plan_seq / pa_rg_tile / pa_rg_tile_item for a hard
    causal mask without window: [(nrows, row0, k_lo, k_hi, split)] of one KV head (every KV head
    gets the same items); pre_rows: the launch's prefill tile rows."""
    rows = q_len * group
    tile_rows = RG_DEC_ROWS if rows <= RG_DEC_ROWS else pre_rows
    n_tiles = _cdiv(rows, tile_rows)
    span_lo, span = 0, kv_len
    n = 1
    if tile_rows == RG_DEC_ROWS:
        n = min(RG_DEC_MAX_SPLITS, _cdiv(span, RG_DEC_MIN_CHUNK))
    elif n_tiles <= RG_PRE_MAX_SPLITS:
        n = min(RG_PRE_MAX_SPLITS // n_tiles, _cdiv(span, RG_PRE_MIN_CHUNK))
    n = max(n, 1)
    chunk = _cdiv(_cdiv(span, n), RG_KEY_TILE) * RG_KEY_TILE
    n_split = max(_cdiv(span, chunk), 1)
    while n_split > 1 and span - (n_split - 1) * chunk < RG_KEY_TILE:
        chunk = _cdiv(_cdiv(span, n_split - 1), RG_KEY_TILE) * RG_KEY_TILE
        n_split = _cdiv(span, chunk)
    items = []
    for t in range(n_tiles):
        row0 = t * tile_rows
        nrows = min(tile_rows, rows - row0)
        lo, hi = 0, kv_len - q_len + (row0 + nrows - 1) // group + 1
        if n_split <= 1:
            items.append((nrows, row0, lo, hi, False))
            continue
        j0, j1 = (lo - span_lo) // chunk, (hi - 1 - span_lo) // chunk + 1
        for c in range(j0, j1):
            c_lo = span_lo + c * chunk
            items.append((nrows, row0, max(lo, c_lo), min(hi, c_lo + chunk), j1 - j0 > 1))
    return items


def ragged_work(shape, slot, pre_rows):
    """Work of the shape's items; tiles are the kernel's key slots (slot keys each)."""
    group = shape["heads"] // shape["kv_heads"]
    nkv = shape["kv_heads"]
    seqs = [(shape["qlen"], shape["ctx"] + shape["qlen"])] * shape["prefill"] + \
           [(1, shape["ctx"] + 1)] * shape["decodes"]
    w = dict(pre_tiles=0, dec_tiles=0, pre_flops=0.0, dec_flops=0.0, pre_items=0, dec_items=0, merges=0,
             kv_bytes=0.0, pre_edge_tiles=0, dec_edge_tiles=0, pre_edge_flops=0.0, dec_edge_flops=0.0)
    for q_len, kv_len in seqs:
        items = ragged_items(q_len, kv_len, group, nkv, pre_rows)
        merged_tiles = set()
        for nrows, row0, k_lo, k_hi, split in items:
            tiles = _cdiv(k_hi - k_lo, slot)
            pairs = 0
            for r in range(row0, row0 + nrows):
                qpos = kv_len - q_len + r // group
                pairs += max(0, min(k_hi, qpos + 1) - k_lo)
            kind = "dec" if nrows <= RG_DEC_ROWS else "pre"
            w[kind + "_tiles"] += tiles * nkv
            w[kind + "_flops"] += 4.0 * shape["head"] * pairs * nkv
            # Edge slots (ragged_mma.cuh `edge`: a key past the item's range or past its first
            # row's causal limit; no window in these shapes) and their useful pairs.
            qmin = kv_len - q_len + row0 // group
            for t in range(tiles):
                k0 = k_lo + t * slot
                if k0 + slot > k_hi or k0 + slot - 1 > qmin:
                    w[kind + "_edge_tiles"] += nkv
                    ep = sum(max(0, min(k_hi, kv_len - q_len + r // group + 1, k0 + slot) - k0)
                             for r in range(row0, row0 + nrows))
                    w[kind + "_edge_flops"] += 4.0 * shape["head"] * ep * nkv
            w[kind + "_items"] += nkv
            if split:
                merged_tiles.add(row0)
        w["merges"] += len(merged_tiles) * nkv
        w["kv_bytes"] += kv_len * nkv * shape["head"] * 2 * (1 if shape.get("cache") == "fp8" else 2)
    tokens = shape["prefill"] * shape["qlen"] + shape["decodes"]
    w["hbm_bytes"] = w["kv_bytes"] + 2 * tokens * shape["heads"] * shape["head"] * 2
    return w


def ragged_geometry(hp, compact=False):
    """cuda/ragged/ragged_mma.cuh MmaShape: two slots of 64 keys (32 at head 256) at every head
    size; prefill tiles of 128 rows, 32 per warp (64, 16 per warp, at head 256); a decode item's
    warps take 16 keys each, in pairs splitting the head in P V at 32 keys. compact: the slots of
    half the keys of 99 KiB devices (MmaShape<HP, true>), whose shared memory is the prefill
    item's f32 output staging where that is larger (mma_smem_bytes)."""
    stages, slot, rows = 2, (64 if hp <= 128 else 32) // (2 if compact else 1), rg_tile_rows(hp)
    stride = hp + 8
    dec_slices = slot // 16
    tiles = (rows * stride + 2 * stages * slot * stride) * 2
    staging = rows * stride * 4 + rows * 4
    return dict(threads=128, stages=stages, slot=slot, rows=rows, wm=rows // 4, dec_slices=dec_slices,
                dec_split=4 // dec_slices, smem=max(tiles, staging),
                kv_copies=slot * (hp // 8) // 128, q_copies=rows * (hp // 8) // 128,
                dec_q_copies=64 * (hp // 8) // 128)


def ragged_model(inst, shape):
    dt, hp = inst
    g = ragged_geometry(hp)
    slot, rows = g["slot"], g["rows"]
    wk = ragged_work(shape, slot, rows)
    off = set()
    off |= src_lines(RG_COMMON, r"x = P\.soft_cap \* tanhf")
    # Page 16 is a power of two: kv_row shifts and masks; the division arm is for other page sizes.
    off |= src_lines(RG_COMMON, r"page = key / P\.page_size;|tok = key - page \* P\.page_size;")
    # A cache of the query dtype (16-byte copies into the slot's tiles) or fp8 pages (8-byte raw
    # copies, converted into stage 0 after a barrier): each has its own instance (FP8).
    raw = shape.get("cache") == "fp8"
    csz = 1 if raw else 2
    dec_only = src_lines(RG_MMA, r"const int kd = k0 \+ 16 \* dslice;|if \(kd >= c\.it\.k_hi\)|x, kd \+ col,")
    pre_only = src_lines(RG_MMA, r"mask_slot<C>\(P, c, s, k0\);|if \(!busy\)")
    # (a prefill slot loop's own lines: mask_slot's; ptxas moves the loop-invariant busy test out)
    pre_mark = src_span(RG_MMA, r"void mask_slot\(const pa_rg_launch", r"^}")
    one_slice = src_lines(RG_COMMON, r"staged\(r, cg, v\);|lse = st_lse\[r\];")
    slices = src_span(RG_COMMON, r"const float mx = parts_max\(nslices,", r"lse = wsum > 0\.0f \? mx \+ __logf")
    direct = src_lines(RG_COMMON, r"store8<DT>\(out \+ row_offset\(P, c, c\.it\.row0 \+ r\)")
    partial = src_lines(RG_COMMON, r"store8<DT>\(po \+ \(int64_t\)\(c\.it\.part \+ r\)|pl\[c\.it\.part \+ r\] = lse;")
    merge = src_span(RG_COMMON, r"Last CTA of the tile merges", r"counters\(P\)\[c\.it\.merge\] = 0;")
    merge_body = src_span(RG_COMMON, r"if \(!\*s_flag\)", r"counters\(P\)\[c\.it\.merge\] = 0;")
    q_loop = src_span(ATTN_TILE, r"void load_rows_async\(", r"^}")
    epi_loop = src_lines(RG_COMMON, r"for \(int u = threadIdx\.x; u < nrows \* groups; u \+= NT\)")
    # parts_max's and parts_lse's loops over partial log-sum-exps: the key slices' in shared memory
    # (LDS) or the chunks' in the workspace (the merge's L2 loads), told apart by those loads.
    parts_loops = src_span(RG_COMMON, r"float parts_max\(int n, const Part", r"^}") | src_span(
        RG_COMMON, r"float parts_lse\(int n, const Part", r"^}")
    sum_loop = src_span(RG_COMMON, r"for \(int s = 0; s < nslices; s\+\+\) \{", r"v\[e\] \+= w \* x\[e\];")
    merge_loop = src_lines(RG_COMMON, r"for \(int u = threadIdx\.x; u < m\.nrows \* groups; u \+= NT\)")
    merge_sum = src_span(RG_COMMON, r"for \(int j = 0; j < m\.n_split; j\+\+\) \{", r"v\[e\] \+= w \* x\[e\];")
    # The caller's lse, a row a thread (after the rows, and after the merge's). The shapes ask for
    # none (RG_LSE_COUNTED = False): the passes' bodies stay off the path, their loops' first tests
    # on it; with it, the model counts them as a call that asks for it would run them.
    lse_rows = src_lines(RG_COMMON, r"for \(int r = threadIdx\.x; P\.lse != nullptr && r < (m\.)?nrows; r \+= NT\)")
    # (a one-chunk item's pass: an item of partial rows never reaches it)
    direct_lse = src_lines(RG_COMMON, r"for \(int r = threadIdx\.x; P\.lse != nullptr && r < nrows; r \+= NT\)"
                           r"|store_lse\(P, c, c\.it\.row0 \+ r")
    if not RG_LSE_COUNTED:
        off |= (src_span(RG_COMMON, r"void store_lse\(const pa_rg_launch", r"^}")
                | src_span(RG_COMMON, r"float parts_lse\(int n, const Part", r"^}"))
    group = shape["heads"] // shape["kv_heads"]
    n_split = len([1 for it in ragged_items(1, shape["ctx"] + 1, group, 1, rows)])
    groups = shape["head"] // 8

    # The slot loop holds one rolled loop, with fp8 pages: the conversion, dequant_tile's BATCH of 2
    # units per thread per trip, slot x head / 8 units per tile over the CTA's threads.
    dq_loop = src_span(ATTN_TILE, r"void dequant_tile\(", r"^}")
    dq_units = slot * (hp // 8) // g["threads"]

    def trips_tile(insts, l, loops):
        if l["line"] in dq_loop:
            return anchored_trips(insts, l, dq_units, lambda i: i["op"] == "STS.128")
        return None

    def trips_item(nrows, nslices, q_copies):
        def trips(insts, l, loops):
            ln = l["line"]
            if ln in q_loop:
                return copy_trips(q_copies)(insts, l)
            if ln in epi_loop:  # not unrolled: ceil(rows x groups / threads) for the busiest warp
                return _cdiv(nrows * groups, g["threads"])
            if ln in parts_loops:
                slices_n = anchored_trips(insts, l, nslices, lambda i: i["op"] == "LDS")
                return slices_n if slices_n is not None else anchored_trips(
                    insts, l, n_split, lambda i: i["op"] == "LDG.E.STRONG.GPU")
            if ln in lse_rows:
                return _cdiv(nrows, g["threads"])
            if ln in sum_loop:
                return anchored_trips(insts, l, nslices, lambda i: i["op"] == "LDS.128", 2)
            if ln in merge_loop:
                return _cdiv(nrows * groups, g["threads"])
            if ln in merge_sum:
                return anchored_trips(insts, l, n_split, lambda i: i["op"] == "LDG.E.128.STRONG.GPU")
            return None
        return trips

    # A raw slot's conversion stores one 16-byte group per 8 elements, unpredicated (as a zero-fill
    # arm would be): slot x head / 8 per K and V over the CTA's threads.
    # K or V copies per thread per slot: 16-byte units of a row; fp8 rows go by 16-byte copies where
    # the head size is a multiple of 16 (load_kv_rows' W), else by 8-byte ones.
    kvc = g["kv_copies"] if not raw else slot * (hp // (16 if shape["head"] % 16 == 0 else 8)) // g["threads"]
    # Decode items on fp8 pages convert nothing in shared memory: they read their MMA fragments
    # from the raw bytes (decode_item_fp8).
    conv_stores = 2 * slot * (hp // 8) // g["threads"] if raw else 0
    need = [("cp.async", _is_cp_async, 2 * kvc), ("zero-fill", _is_zero_fill, 0)]
    # A prefill warp parks its softmax state (max and sum of its 2 x wm / 16 rows) in shared memory
    # after each slot's update: wm / 16 unpredicated STS.128, which the zero-fill count sees too.
    parked = g["wm"] // 16
    pre_need_tile = [("cp.async", _is_cp_async, 2 * kvc), ("zero-fill", _is_zero_fill, conv_stores + parked)]
    tiles = []
    # Interior slots (every key visible to every row) take logit_unmasked; edge slots the whole
    # logit. The interior path avoids logit's own lines and the edge hooks' call sites.
    # Interior prefill slots of these shapes (no soft cap, a positive scale) take the raw dots:
    # the scale rides in the exponent FFMA, and logit_unmasked's pass is skipped.
    masked = (src_span(RG_COMMON, r"float logit\(const pa_rg_launch", r"^}")
              | src_span(RG_MMA, r"void mask_slot\(const pa_rg_launch", r"^}")
              | src_lines(RG_MMA, r"mask_slot<C>\(P, c, s, k0\);|x, kd \+ col, qp\[i\]"))
    unmasked_pass = (src_lines(RG_MMA, r"return logit_unmasked\(P, x, sc\.qk\); }\);$")
                     | src_span(RG_COMMON, r"float logit_unmasked\(const pa_rg_launch", r"^}"))
    pre_kind = "prefill slot (%d rows x %d keys)" % (rows, slot)
    dec_kind = "decode slot (16 rows, %d useful, x %d keys)" % (group, slot)
    # HMMA per warp per slot: prefill wm rows x slot keys x hp (QK and PV); decode 16 keys of
    # scores over the whole head and P V over hp / dec_split columns.
    pre_hmma, dec_hmma = g["wm"] * hp * slot // 1024, hp // 8 + hp // g["dec_split"] // 8
    for kind, name, hmma, other in (("pre", pre_kind, pre_hmma, dec_only), ("dec", dec_kind, dec_hmma, pre_only)):
        n_all, n_edge = wk[kind + "_tiles"], wk[kind + "_edge_tiles"]
        f_all, f_edge = wk[kind + "_flops"], wk[kind + "_edge_flops"]
        interior_off = off | other | masked | (unmasked_pass if kind == "pre" else set())
        # O's rescale only where a row's reference moves (SoftmaxN's lazy reference, as for prefill
        # above): one interior slot an item (its first), the rest steady; edge slots keep it.
        n_int = n_all - n_edge
        n_move = min(wk[kind + "_items"], n_int)
        for sub, n, f, forbid in (("interior, a row's reference moving (O rescaled)", n_move,
                                   (f_all - f_edge) * n_move / max(n_int, 1), interior_off),
                                  ("interior", n_int - n_move, (f_all - f_edge) * (n_int - n_move) / max(n_int, 1),
                                   interior_off | rescale_lines()),
                                  ("edge", n_edge, f_edge, off | other)):
            if not n:
                continue
            # Each item shape has its own slot loop (prefill_item, decode_item): the one holding
            # the shape's own lines.
            t = dict(name="%s, %s" % (name, sub), count=n, flops=f, forbid=forbid,
                     need=(pre_need_tile if kind == "pre" else need) + [("HMMA", _is_hmma, hmma)], trips=trips_tile,
                     hmma=hmma,
                     kv_bytes=slot * shape["head"] * 2 * csz, loop_mark=pre_mark if kind == "pre" else dec_only)
            if kind == "dec":
                t["bytes"] = slot * shape["head"] * 2 * csz
            tiles.append(t)
    pre_kinds = tuple(t["name"] for t in tiles if t["name"].startswith(pre_kind))
    dec_kinds = tuple(t["name"] for t in tiles if t["name"].startswith(dec_kind))
    # Per item, thread 0 stores the item (56 bytes: 3 STS.128 and an STS.64) in shared memory; the
    # heaviest path is warp 0's, and the zero-fill count sees those stores too.
    item_sts = 3
    pre_need = [("cp.async", _is_cp_async, g["q_copies"] + 2 * kvc),
                ("zero-fill", _is_zero_fill, item_sts + parked)]
    # (decode items on fp8 pages load their Q fragments from global memory: no Q copies)
    item_need = [("cp.async", _is_cp_async, (0 if raw else g["dec_q_copies"]) + 2 * kvc),
                 ("zero-fill", _is_zero_fill, item_sts)]
    units = []
    if wk["pre_items"]:
        units.append(dict(name="prefill item", kind=pre_kinds, count=wk["pre_items"], region="item", need=pre_need,
                          need_epi=[("16-byte output stores", _is_store16, _cdiv(rows * groups, g["threads"]))],
                          forbid=off | dec_only | slices | partial | merge, trips=trips_item(rows, 1, g["q_copies"]),
                          loop_mark=pre_mark,
                          note="one chunk: rows written directly"))
    if wk["dec_items"]:
        nm = wk["merges"]
        units.append(dict(name="decode item", kind=dec_kinds, count=wk["dec_items"] - nm, region="item", need=item_need,
                          need_epi=[("16-byte partial stores", _is_store16, _cdiv(group * groups, g["threads"]))],
                          forbid=off | pre_only | one_slice | direct | direct_lse | merge_body,
                          trips=trips_item(group, g["dec_slices"], g["dec_q_copies"]), loop_mark=dec_only,
                          note="%d key slices merged, partial rows stored" % g["dec_slices"]))
        if nm:
            units.append(dict(name="decode item, last of its tile", kind=dec_kinds, count=nm, region="item",
                              need=item_need,
                              need_epi=[("16-byte partial and output stores", _is_store16,
                                         2 * _cdiv(group * groups, g["threads"]))],
                              forbid=off | pre_only | one_slice | direct | direct_lse,
                              trips=trips_item(group, g["dec_slices"], g["dec_q_copies"]), loop_mark=dec_only,
                              note="merges the %d splits" % n_split))
    regions = tile_regions() + [
        ("masking (logit: key range, scale, soft-cap test, causal/window)",
         masked | src_lines(RG_MMA, r"return logit\(P, c, x")),
        ("K/V row lookups (load_kv_rows, kv_row, page table)",
         src_span(RG_MMA, r"void load_kv_rows\(void \*k_tile", r"^}")
         | src_span(RG_COMMON, r"int64_t kv_row\(const pa_rg_launch", r"^}")
         | src_span(RG_MMA, r"auto load_kv = ", r"^    \};")),
        ("slot loop control, barriers",
         src_span(RG_MMA, r"for \(int t = 0; t < nslots; t\+\+\)", r"^    }")),
    ]
    # The mangled name: ragged_mma_kernel<HP, DT, FP8, CPT> holds Lb0 (pages of the query dtype) or
    # Lb1, then Lb0 (the full shape; Lb1: the compact shape of 99 KiB devices, not modelled here).
    return dict(kernel=r"ragged_mma_kernelILi\d+ELi\d+ELb%dELb0E" % (1 if raw else 0), threads=g["threads"],
                smem=g["smem"], tiles=tiles, units=units,
                regions=regions,
                flops=wk["pre_flops"] + wk["dec_flops"], hbm_bytes=wk["hbm_bytes"], tile_rows=rows, tile_keys=slot,
                work="%d prefill items (%d slots), %d decode items in %d-way splits (%d slots), %d merges" % (
                    wk["pre_items"], wk["pre_tiles"], wk["dec_items"], n_split, wk["dec_tiles"], wk["merges"]))


def ragged_shape_instance(shape):
    return (shape["dtype"], 64 if shape["head"] <= 64 else 128 if shape["head"] <= 128 else 256)


# ---- the tensor-core report -------------------------------------------------------------------


def mma_shape_costs(fam, rows, shape, m=H100):
    """Counts of one shape on the kernel its instance runs: per tile kind and per unit kind the
    heaviest-path tally per warp; None entries where a path could not be counted."""
    inst = fam["shape_instance"](shape)
    md = fam["model"](inst, shape)
    cands = [r for r in rows if tuple(r["instance"]) == tuple(inst) and "loop" in r and re.search(md["kernel"], r["kernel"])]
    if not cands:
        return md, None, [], []
    r = cands[0]
    insts, sel0 = r["_insts"], r["_sel"]
    all_loops = laminar_loops(insts, loops_of(insts))
    tile_loops = mma_tile_loops(insts, loops_of(insts))

    def loop_of(x):
        # x["loop_mark"]: source lines of which one sits in the tile or unit's own tile loop.
        mark = x.get("loop_mark")
        if not mark:
            return sel0
        hit = [l for l in tile_loops if any(insts[k]["line"] in mark for k in range(l["lo"], l["hi"] + 1))]
        return min(hit, key=lambda l: l["hi"] - l["lo"]) if hit else None

    kinds = []
    for t in md["tiles"]:
        sel = loop_of(t)
        if sel is None:
            kinds.append(dict(t, tally=None, why="no tile loop holds the kind's marked lines"))
            continue
        loops = [l for l in all_loops if (l["lo"], l["hi"]) != (sel["lo"], sel["hi"])]
        inside = [l for l in loops if sel["lo"] <= l["lo"] and l["hi"] <= sel["hi"]]
        weight, bad = loop_weight(insts, inside, t["trips"])
        if weight is None:
            kinds.append(dict(t, tally=None, why="nested loop without a trip count (back edge %s)" % bad["line"]))
            continue
        tl, kept, why = mma_path_count(insts, sel["lo"], [sel["hi"]], inside, t["trips"], t["forbid"], t["need"],
                                       md.get("regions", ()))
        kinds.append(dict(t, tally=tl, kept=kept, why=why))
    units = []
    for u in md["units"]:
        sel = loop_of(u)
        if sel is None:
            units.append(dict(u, tally=None, why="no tile loop holds the unit's marked lines"))
            continue
        loops = [l for l in all_loops if (l["lo"], l["hi"]) != (sel["lo"], sel["hi"])]
        outer = [l for l in loops if l["lo"] <= sel["lo"] and sel["hi"] <= l["hi"]]
        if u["region"] == "item":
            if not outer:
                units.append(dict(u, tally=None, why="no item loop around the tile loop"))
                continue
            o = min(outer, key=lambda l: l["hi"] - l["lo"])
            pro = (o["lo"], [sel["lo"]])
            epi_ends = [o["hi"]]
        else:
            pro = (0, [sel["lo"]])
            epi_ends = [k for k in range(sel["hi"] + 1, len(insts))
                        if insts[k]["op"].startswith("EXIT") and _uncond(insts[k]["pred"])]
        # (the other shapes' tile loops, and what they hold, are off every path here)
        others = [t for t in tile_loops if not (t["lo"] <= sel["lo"] and sel["hi"] <= t["hi"])]
        rest = [l for l in loops if not (sel["lo"] <= l["lo"] and l["hi"] <= sel["hi"]) and l not in outer
                and not any(t["lo"] <= l["lo"] and l["hi"] <= t["hi"] for t in others)]
        a, ka, wa = mma_path_count(insts, pro[0], pro[1], rest, u["trips"], u["forbid"], u["need"])
        b, kb, wb = (mma_path_count(insts, sel["hi"] + 1, epi_ends, rest, u["trips"], u["forbid"], u["need_epi"])
                     if epi_ends else (None, None, "no EXIT after the tile loop"))
        if a is None or b is None:
            units.append(dict(u, tally=None, why=wa or wb))
            continue
        # The prologue path ends on the loop head, which belongs to the tile loop.
        head = insts[sel["lo"]]
        a["total"] -= 1
        a["counts"][classify(head["op"])] -= 1
        a["smem"] -= smem_bytes(head)
        tl = dict(total=a["total"] + b["total"], smem=a["smem"] + b["smem"], divisions=a["divisions"] + b["divisions"],
                  calls=a["calls"] + b["calls"], counts={c: a["counts"][c] + b["counts"][c] for c in a["counts"]})
        units.append(dict(u, tally=tl, kept=ka + kb, why=None))
    return md, r, kinds, units


def bounds_of(flops, hmma, insts, smem, m=H100, ipc=None, hbm=0.0, tensor_rate=MMA_SYNC_HMMA_PER_CLOCK):
    """Fractions of the dense 16-bit tensor peak at m's clock (peak_tflops: 949 TFLOP/s at 1.755 GHz) that
    the tensor pipe, the issue slots, shared memory and HBM allow
    for work of `flops` useful FLOPs costing hmma HMMA.16816, insts warp instructions and smem
    shared-memory bytes (GPU totals or per tile: the ratios are the same). The HMMA issue at
    tensor_rate per SM per clock: mma.sync's measured ceiling (MMA_SYNC_HMMA_PER_CLOCK), the tensor
    bound being the useful share of the HMMA work times tensor_rate / the peak rate."""
    r = hmma_per_clock(m)
    ideal = flops / HMMA_FLOP / r  # SM-clocks the useful work takes at the peak rate
    out = dict(tensor=ideal / (hmma / tensor_rate) if hmma else None,
               issue=ideal / (insts / (ipc or m["issue_per_clock"])) if insts else None,
               smem=ideal / (smem / SMEM_BYTES_PER_CLOCK) if smem else None)
    if hbm:
        out["hbm"] = ideal / (hbm / (m["roof_gbs"] / m["clock_ghz"]) * m["sms"])
    vals = [v for v in out.values() if v is not None]
    out["min"] = min(vals) if vals else None
    return out


def _p(x):
    return "-" if x is None else "%.0f%%" % (100 * x)


def _owns(unit, kind):
    """Whether a unit kind's prologue and epilogue are spread over tile kind `kind`: its "kind" is
    None (every tile), a tile kind's name, or a tuple of names."""
    k = unit.get("kind")
    return k is None or k == kind or (isinstance(k, tuple) and kind in k)


def mma_report(fam_name, fam, rows, label, m=H100):
    L = []
    w = L.append
    date, commit, dirty = stamp()
    w("## %s: %s kernels at %s%s (%s)" % (label, fam_name, commit, " + working tree" if dirty else "", date))
    w("")
    w(fam["about"])
    w("")
    w("### Resources (ptxas -v, cuobjdump -res-usage; dynamic shared memory from the instance's tile geometry)")
    w("")
    w("| instance | kernel | regs | spill st/ld bytes | stack | local | static smem | dyn smem | CTAs/SM (limit) | warps/scheduler |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        p, res = r["ptxas"], r["res"]
        regs = p.get("regs", res.get("regs", 0))
        geo = fam["geometry"](r["instance"], r["kernel"])
        occ = ctas_per_sm(regs, geo["threads"], cta_smem(geo["smem"], res, m), m)
        w("| %s/h%d | %s | %d | %d/%d | %d | %d | %d | %d | %d (%s) | %g |" % (
            r["instance"][0], r["instance"][1], short_name(r["kernel"]), regs, p.get("spill_st", -1),
            p.get("spill_ld", -1), p.get("stack", -1), res.get("local", -1), res.get("smem_static", 0), geo["smem"],
            occ[0], occ[1], occ[0] * geo["threads"] // 32 / m["schedulers"]))
    w("")
    w("### K/V tile loop (SASS, per warp): the static body, every path")
    w("")
    classes = [n for n, _ in CLASSES]
    w("| instance | kernel | loop (addresses, back edge file:line) | static insts | nested loops | software divisions | " +
      " | ".join(classes) + " | outside the loop (+ cold) |")
    w("| --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in classes) + " | --- |")
    for r in rows:
        if "loop" not in r:
            continue
        lp = r["loop"]
        w("| %s/h%d | %s | 0x%x-0x%x (back edge %s) | %d | %d | %d (+%d calls) | %s | %s |" % (
            r["instance"][0], r["instance"][1], short_name(r["kernel"]), lp["lo"], lp["hi"], lp["line"], lp["static"],
            len(lp["nested"]), lp["divisions"], lp["calls"], " | ".join("%d" % lp["counts"][c] for c in classes),
            "%d (+%d)" % (r["outside"], r["cold"])))
    nol = [r for r in rows if "loop" not in r]
    if nol:
        w("")
        w("No tile loop with HMMA + BAR.SYNC + LDGSTS in: %s (%s)." % (
            ", ".join("%s/h%d %s" % (r["instance"][0], r["instance"][1], short_name(r["kernel"])) for r in nol),
            fam["no_loop_note"]))
    w("")
    w("### The model per shape")
    w("")
    w("| shape | instance | threads | dyn smem | CTAs/SM | tile kind | tiles | per unit (CTA or item) | K/V bytes per tile |"
      " useful FLOP per tile | FLOP of a full tile | HMMA per warp per tile | cp.async per thread per tile |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for s in fam["shapes"]:
        inst = fam["shape_instance"](s)
        md = fam["model"](inst, s)
        rr = [r for r in rows if tuple(r["instance"]) == tuple(inst) and re.search(md["kernel"], r["kernel"])]
        occ = "-"
        if rr:
            regs = rr[0]["ptxas"].get("regs", rr[0]["res"].get("regs", 0))
            occ = "%d" % ctas_per_sm(regs, md["threads"], cta_smem(md["smem"], rr[0]["res"], m), m)[0]
        for k in md["tiles"]:
            units = sum(u["count"] for u in md["units"] if _owns(u, k["name"]))
            cp = [c for n, _, c in k["need"] if n == "cp.async"]
            w("| %s | %s/h%d | %d | %d | %s | %s | %d | %.1f | %d | %.4g | %.4g | %d | %s |" % (
                s["name"], inst[0], inst[1], md["threads"], md["smem"], occ, k["name"], k["count"],
                k["count"] / units, k["kv_bytes"], k["flops"] / k["count"],
                4.0 * md["tile_rows"] * md["tile_keys"] * inst[1], k["hmma"], cp[0] if cp else "-"))
    w("")
    w("### Per tile on each shape's path (per warp; nested copy loops weighted by their trips)")
    w("")
    w("| shape | instance | tile kind | tiles | warp insts per tile | HMMA | shared bytes (of which ldmatrix) | software divisions | " +
      " | ".join(classes) + " | of the shared loads, `@!PT LDS` placeholders | off-feature insts it cannot avoid |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in classes) + " | --- | --- |")
    costs = []
    for s in fam["shapes"]:
        md, r, kinds, units = mma_shape_costs(fam, rows, s, m)
        costs.append((s, md, r, kinds, units))
        inst = fam["shape_instance"](s)
        for k in kinds:
            t = k["tally"]
            if t is None:
                w("| %s | %s/h%d | %s | %d | not counted: %s |" % (s["name"], inst[0], inst[1], k["name"], k["count"], k["why"]))
                continue
            flag = "" if t["hmma"] == k["hmma"] else " (model: %d)" % k["hmma"]
            w("| %s | %s/h%d | %s | %d | %.0f | %.0f%s | %.0f (%.0f) | %.0f | %s | %.0f | %d |" % (
                s["name"], inst[0], inst[1], k["name"], k["count"], t["total"], t["hmma"], flag, t["smem"], t["ldsm"],
                t["divisions"], " | ".join("%.0f" % t["counts"][c] for c in classes), t["placeholders"], k["kept"]))
    w("")
    w("Where a tile's instructions come from (per warp, by the source line nvdisasm gives each instruction;"
      " inlined code carries the line of the function it came from):")
    w("")
    for s, md, r, kinds, units in costs:
        names = [n for n, _ in md.get("regions", ())] + ["other"]
        w("| shape | tile kind | " + " | ".join(names) + " |")
        w("| --- | --- | " + " | ".join("---" for _ in names) + " |")
        for k in kinds:
            if k["tally"] is None:
                continue
            wh = k["tally"]["where"]
            w("| %s | %s | %s |" % (s["name"], k["name"], " | ".join("%.0f" % wh[n] for n in names)))
        w("")
    w("Per unit, outside the tile loop (prologue + epilogue, per warp):")
    w("")
    for s, md, r, kinds, units in costs:
        for u in units:
            if u["tally"] is None:
                w("- %s, %s: not counted (%s)" % (s["name"], u["name"], u["why"]))
            else:
                w("- %s, %s x %d (%s): %.0f warp instructions, %d software divisions" % (
                    s["name"], u["name"], u["count"], u["note"], u["tally"]["total"], u["tally"]["divisions"]))
    w("")
    r_peak = hmma_per_clock(m)
    w("### Bounds (H100 SXM: %d SMs, %.3f GHz; fractions of the dense 16-bit peak there, %.0f TFLOP/s = %.3f"
      " HMMA.16816 per SM per clock (NVIDIA's %.0f is the same rate at 1.83 GHz); 4 warp instructions per SM per"
      " clock; %d B of shared memory per SM per clock)" % (m["sms"], m["clock_ghz"], peak_tflops(m), r_peak,
                                                          DATASHEET_TFLOPS, SMEM_BYTES_PER_CLOCK))
    w("")
    w("| shape | tile kind | useful FLOP per tile | HMMA per tile (CTA) | warp insts per tile (CTA, loop) | + units' share | shared bytes per tile | tensor bound (mma.sync at %.2f HMMA.16816 per SM per clock) | issue bound, 4 IPC | shared-memory bound | the least | at %.2f IPC (measured, 2 warps/scheduler) |" % (MMA_SYNC_HMMA_PER_CLOCK, fam["ipc"]))
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    out, allow = [], []
    for s, md, r, kinds, units in costs:
        if r is None:
            w("| %s | no kernel matching %s |  |  |  |  |  |  |  |  |  |  |" % (s["name"], md["kernel"]))
            continue
        warps = md["threads"] // 32
        tot = dict(flops=0.0, hmma=0.0, insts=0.0, smem=0.0)
        ok = all(k["tally"] is not None for k in kinds)
        uw = sum(u["count"] * u["tally"]["total"] * warps for u in units if u["tally"] is not None)
        us = sum(u["count"] * u["tally"]["smem"] * warps for u in units if u["tally"] is not None)
        ntiles = sum(k["count"] for k in kinds)
        for k in kinds:
            t = k["tally"]
            if t is None:
                continue
            per = dict(flops=k["flops"] / k["count"], hmma=t["hmma"] * warps, insts=t["total"] * warps,
                       smem=t["smem"] * warps)
            # The units' prologue and epilogue, spread over the tiles they run (all tiles when a unit
            # kind names none).
            mine = [u for u in units if u["tally"] is not None and _owns(u, k["name"])]
            over = sum(k2["count"] for k2 in kinds if any(_owns(u, k2["name"]) for u in mine))
            share = sum(u["count"] * u["tally"]["total"] * warps for u in mine) / over
            sshare = sum(u["count"] * u["tally"]["smem"] * warps for u in mine) / over
            b = bounds_of(per["flops"], per["hmma"], per["insts"] + share, per["smem"] + sshare, m)
            bi = bounds_of(per["flops"], per["hmma"], per["insts"] + share, per["smem"] + sshare, m, ipc=fam["ipc"])
            w("| %s | %s | %.3g | %.0f | %.0f | %.0f | %.0f | %s | %s | %s | **%s** | %s |" % (
                s["name"], k["name"], per["flops"], per["hmma"], per["insts"], share, per["smem"] + sshare,
                _p(b["tensor"]), _p(b["issue"]), _p(b["smem"]), _p(b["min"]), _p(min(bi["issue"], b["min"]))))
            for key in tot:
                tot[key] += per[key] * k["count"]
            ideal = per["flops"] / HMMA_FLOP / r_peak
            if "bytes" not in k:  # a bandwidth item (decode tile) is judged against the copy roof below
                allow.append("- %s, %s: %.0f counted (+%.0f units' share); 50%% of %.0f allows %.0f at 4 IPC, %.0f at"
                             " %.2f IPC." % (s["name"], k["name"], t["total"], share / warps, peak_tflops(m),
                                             (ideal / 0.5 * m["issue_per_clock"] - share) / warps,
                                             (ideal / 0.5 * fam["ipc"] - share) / warps, fam["ipc"]))
            if "bytes" in k:
                gbs = m["sms"] * m["issue_per_clock"] * m["clock_ghz"] * k["bytes"] / (per["insts"] + share)
                w("| | (%s as a bandwidth item: %d B of K/V per tile, %.2f B per warp instruction: at 4 IPC %s of"
                  " the %.0f GB/s copy roof, at %.2f IPC %s) | | | | | | | | | | |" % (
                      k["name"], k["bytes"], k["bytes"] / (per["insts"] + share), _p(min(1, gbs / m["roof_gbs"])),
                      m["roof_gbs"], fam["ipc"], _p(min(1, gbs * fam["ipc"] / m["issue_per_clock"] / m["roof_gbs"]))))
        if not ok or len(kinds) == 0:
            continue
        tot["insts"] += uw
        tot["smem"] += us
        b = bounds_of(tot["flops"], tot["hmma"], tot["insts"], tot["smem"], m, hbm=md["hbm_bytes"])
        bi = bounds_of(tot["flops"], tot["hmma"], tot["insts"], tot["smem"], m, ipc=fam["ipc"], hbm=md["hbm_bytes"])
        w("| %s | **whole launch** (%s; HBM bound %s) | %.3g total | %.4g | %.4g | included | %.4g | %s | %s | %s | **%s** | %s |" % (
            s["name"], md["work"], _p(b.get("hbm")), tot["flops"], tot["hmma"], tot["insts"], tot["smem"],
            _p(b["tensor"]), _p(b["issue"]), _p(b["smem"]), _p(b["min"]), _p(min(bi["issue"], b["min"]))))
        out.append(dict(shape=s["name"], instance=list(fam["shape_instance"](s)), kernel=short_name(r["kernel"]),
                        flops=tot["flops"], hmma=tot["hmma"], warp_insts=tot["insts"], smem_bytes=tot["smem"],
                        hbm_bytes=md["hbm_bytes"], bounds=b,
                        tiles={k["name"]: dict(count=k["count"], per_warp=k["tally"]["total"], hmma=k["tally"]["hmma"],
                                               smem=k["tally"]["smem"]) for k in kinds},
                        units={u["name"]: dict(count=u["count"], per_warp=u["tally"]["total"] if u["tally"] else None)
                               for u in units}))
    w("")
    w("Warp instructions per warp per tile that 50%% of %.0f TFLOP/s (the peak at %.3f GHz) leaves (the units' share"
      " taken out first):" % (peak_tflops(m), m["clock_ghz"]))
    w("")
    for a in allow:
        w(a)
    w("")
    calib = fam.get("calibration_rows")
    if calib:
        w(calib(fam, out, m))
    return "\n".join(L), out


def prefill_calibration(fam, out, m=H100):
    c = PREFILL_CALIBRATION
    row = [o for o in out if o["shape"] == c["shape"]]
    if not row:
        return ""
    o = row[0]
    if o["kernel"] != c["kernel"]:
        # Another tile shape than the one measured: the executed / counted ratio and the
        # prediction from it would compare two different kernels.
        return "\n".join([
            "### Calibration against the H100 (the target shape, causal prompt b=4 x 4K, 32/8, head 128, bf16)",
            "",
            "The H100 measured `%s` (run 7: %.0f TFLOP/s; ncu: %.3f G warp instructions executed at %.2f IPC,"
            " 2 warps per scheduler, HMMA pipe active %.2f%% of the cycles). The kernel counted here, `%s`, has"
            " another tile shape and has not run on a GPU, so no executed / counted ratio or calibrated"
            " prediction is given for it. What carries over: the last column of the bounds table applies the"
            " measured IPC (2 warps per scheduler, as here); and that HMMA pipe figure, read as mma.sync's ceiling"
            " (about %.2f HMMA.16816 per SM per clock, %s of the pipe's 1 a clock: %.0f TFLOP/s at %.3f GHz), is"
            " the rate the tensor bound above takes (since 2026-12-06; before, the pipe's peak)." % (
                c["kernel"], c["bench_tflops"], c["executed"] / 1e9, c["ipc"], 100 * c["hmma_pipe"], o["kernel"],
                MMA_SYNC_HMMA_PER_CLOCK, _p(MMA_SYNC_HMMA_PER_CLOCK / hmma_per_clock(m)),
                MMA_SYNC_HMMA_PER_CLOCK * HMMA_FLOP * m["sms"] * m["clock_ghz"] * 1e9 / 1e12, m["clock_ghz"]),
            "",
        ])
    ratio = c["executed"] / o["warp_insts"]
    hm_per_sm = o["hmma"] / m["sms"]
    pipe_rate = hm_per_sm / c["active_cycles"] / c["hmma_pipe"]
    t175 = c["executed"] / (m["sms"] * c["ipc"] * 1.755e9) * 1e3
    t198 = c["executed"] / (m["sms"] * c["ipc"] * 1.98e9) * 1e3
    tn = c["executed"] / (m["sms"] * c["ipc"] * c["sm_clock_ghz"] * 1e9) * 1e3
    pred = o["flops"] / (o["warp_insts"] / (m["sms"] * c["ipc"] * m["clock_ghz"] * 1e9)) / 1e12
    T = [
        "### Calibration against the H100 (the target shape, causal prompt b=4 x 4K, 32/8, head 128, bf16)",
        "",
        "ncu (2026-11-22, kernel of 603e1bb; the kernel here differs by the PTX wrappers' memory clobbers,"
        " commit 6b01fd6) executed **%.3f G warp instructions**; the count above gives %.3f G for the whole"
        " launch (tiles on the heaviest path plus every CTA's prologue and epilogue): executed / counted"
        " = **%.2f**. ncu ran at %.2f GHz with %.2f IPC: %.3f G / (132 x %.2f x %.2f GHz) = %.2f ms; it measured"
        " %.2f ms." % (c["executed"] / 1e9, o["warp_insts"] / 1e9, ratio, c["sm_clock_ghz"], c["ipc"],
                       c["executed"] / 1e9, c["ipc"], c["sm_clock_ghz"], tn, c["ncu_ms"]),
        "",
        "- Outside ncu the benchmark took %.2f ms (%.0f TFLOP/s, %s of the %.0f peak at %.3f GHz, %s of the %.0f TFLOP/s GEMM measured"
        " beside it). The executed count at the same %.2f IPC takes %.2f ms at 1.755 GHz and %.2f ms at 1.98 GHz:"
        " the measurement matches 1.755 GHz at that IPC (the clock under sustained tensor load was not"
        " recorded)." % (
            c["bench_ms"], c["bench_tflops"], _p(c["bench_tflops"] / peak_tflops(m)), peak_tflops(m), m["clock_ghz"],
            _p(c["bench_tflops"] / c["gemm_tflops"]), c["gemm_tflops"], c["ipc"], t175, t198),
        "- Predicted from the count (an upper bound on the executed instructions) at the measured %.2f IPC and"
        " %.3f GHz: %.0f TFLOP/s, against %.0f measured." % (c["ipc"], m["clock_ghz"], pred, c["bench_tflops"]),
        "- The tensor pipe: the count gives %.1f M HMMA.16816 for the launch (%.3f M per SM). ncu saw the HMMA pipe"
        " active %.2f%% of %.2f M active cycles per SM, so its 100%% is %.2f HMMA.16816 per SM per clock: %.0f%%"
        " of the pipe's %.2f (its peak, at any clock). If that is mma.sync's real ceiling on sm_90, the"
        " most mma.sync can deliver is about %.0f TFLOP/s at %.3f GHz (%s of the %.0f peak there), and the issue's"
        " 50%% target asks for %s of the pipe." % (
            o["hmma"] / 1e6, hm_per_sm / 1e6, 100 * c["hmma_pipe"], c["active_cycles"] / 1e6, pipe_rate,
            100 * pipe_rate / hmma_per_clock(m), hmma_per_clock(m),
            pipe_rate * HMMA_FLOP * m["sms"] * m["clock_ghz"] * 1e9 / 1e12, m["clock_ghz"],
            _p(pipe_rate / hmma_per_clock(m)), peak_tflops(m), _p(0.5 * hmma_per_clock(m) / pipe_rate)),
        "",
    ]
    return "\n".join(T)


def mma_method_text(fam_name, m=H100):
    r = hmma_per_clock(m)
    return "\n".join([
        "# Instruction and shared-memory budget: prefill and ragged (generated by scripts/budget.py)",
        "",
        "No GPU was used for this file: every count comes from the sm_90 SASS of the instance files, compiled with"
        " the build's flags (build/compile_commands.json) plus `-cubin -arch=sm_90 -lineinfo` and read with cuobjdump"
        " / nvdisasm. Regenerate with `python3 scripts/budget.py --family prefill --out <this file>` and"
        " `python3 scripts/budget.py --family ragged --out <this file> --append`.",
        "",
        "Method (issue 14 item 7; the decode budget's, with the tensor pipe as the roof):",
        "",
        "1. Resources as for decode: registers and spills from `ptxas -v`, static shared and local memory from"
        " `cuobjdump -res-usage`, dynamic shared memory from the instance's tile geometry (attn_tile.cuh"
        " `Cfg::smem_bytes`); CTAs per SM from registers, threads and shared memory (cuobjdump's SHARED already holds"
        " the 1 KiB reserved per CTA on sm_90; since 2026-12-06 it is not added again).",
        "2. The K/V tile loop: the innermost SASS loop that holds an `HMMA`, a `BAR.SYNC` and an `LDGSTS` (the next"
        " tile's cp.async). For prefill it is the only such loop; for ragged it sits inside the persistent CTA's"
        " work-item loop. Back edges from the function's tail (the divergent-warp fallback of a shuffle) close no"
        " real loop and are dropped.",
        "3. The path of a tile. Both kernels keep every feature behind runtime branches in one body (cache or new"
        " keys, cp.async or the register path for fp8 and vLLM values, soft cap, ALiBi, decode or prefill items),"
        " so the static body counts code no shape runs (the first table). The count per tile is the heaviest"
        " path through the loop body, over forward edges, that avoids the instructions whose source lines belong"
        " to features the shape leaves off (wherever a path avoids them: code the compiler predicated instead of"
        " branching issues anyway and is counted, last column), and that issues exactly the shape's number of"
        " cp.async per thread (and, for ragged, of HMMA: that picks the prefill or the decode arm). Both kernels split tiles"
        " into interior ones (scale only) and edge ones (the whole mask), each kind counted on its own path."
        " Copy loops the"
        " compiler left rolled count their body times the trips the model gives (copies per thread / copies per"
        " unrolled body). The heaviest path is an upper bound on what a warp issues per steady-state tile;"
        " prologue and epilogue (per CTA for prefill, per work item for ragged) are counted the same way and"
        " spread over the tiles.",
        "4. Bounds, as fractions of the tensor pipe's dense f16/bf16 peak at the model's clock: %.0f FLOP per SM per"
        " clock, **%.3f HMMA.16816 (4096 FLOP each) per SM per clock** (wgmma the same rate), over %d SMs at"
        " %.3f GHz %.0f TFLOP/s (NVIDIA's %.0f TFLOP/s is the same rate at 1.83 GHz; before 2026-12-06 the"
        " bounds took 989 at 1.755 GHz, 1.042 HMMA.16816 per SM per clock). With F the useful"
        " FLOPs of a tile (4 x head x visible query-key pairs: QK^T and PV, causal rows and keys only), the time"
        " the work would take at that rate is F / 4096 / %.3f SM-clocks; each bound is that time over the time a"
        " resource needs:" % (TENSOR_FLOP_PER_SM_CLOCK, r, m["sms"], m["clock_ghz"], peak_tflops(m), DATASHEET_TFLOPS,
                              r),
        "   - tensor: HMMA per tile / %.2f, mma.sync's own ceiling as ncu measured it on the H100 (the HMMA pipe's"
        " 100%% was 0.67 HMMA.16816 per SM per clock on 2026-11-22, 0.58-0.66 in run 13; since 2026-12-06, before"
        " the peak rate): the bound is the share of HMMA work that is useful (padding rows, masked keys, decode"
        " items' empty rows) times %s;" % (MMA_SYNC_HMMA_PER_CLOCK, _p(MMA_SYNC_HMMA_PER_CLOCK / r)),
        "   - issue: warp instructions per tile / 4 (one per sub-partition per clock), with the units'"
        " prologue/epilogue share;",
        "   - shared memory: bytes per tile / %d (assumed 32 banks x 4 B per clock per SM, as on A100; H100's"
        " figure is not published as such). Bytes: LDSM = 128 B per 8x8 matrix, LDS/STS by width x 32 lanes,"
        " LDGSTS.128 = 512 B written per warp; every lane active, no bank conflicts." % SMEM_BYTES_PER_CLOCK,
        "   The least of them is the most the arithmetic allows; for a whole launch HBM (unique K/V, Q and O at"
        " the %.0f GB/s copy roof) is added. Achieved IPC is below 4: the last column applies the IPC ncu"
        " measured for prefill (2 warps per scheduler)." % m["roof_gbs"],
        "",
        "The Hopper kernel (wgmma, sm_90a) is counted by `scripts/budget.py --family hopper` in a report of its"
        " own (budget-hopper-*.md).",
        "",
    ])


def prefill_geo_of(inst, kernel):
    hp = inst[1]
    full = prefill_geometry(hp)
    mm = re.search(r"CfgILi\d+ELi\d+ELi(\d+)E", kernel)
    g = prefill_geometry(hp, compact=bool(mm) and int(mm.group(1)) < full["bn"])
    return dict(threads=g["threads"], smem=g["smem"])


def ragged_geo_of(inst, kernel):
    dt, hp = inst
    if "simt" in kernel:
        return dict(threads=256, smem=4 * (64 * hp + 2 * 32 * (hp + 1) + 8 * 8 * 32))
    g = ragged_geometry(hp, compact=re.search(r"ragged_mma_kernelILi\d+ELi\d+ELb\dELb1E", kernel) is not None)
    return dict(threads=g["threads"], smem=g["smem"])


FAMILIES["prefill"] = dict(
    sources="cuda/prefill/inst_*_h*.cu",
    instance=lambda path: (lambda mm: (mm.group(1), int(mm.group(2))))(re.match(r".*inst_(\w+?)_h(\d+)\.cu$", path)),
    kernel=r"prefill_mma_kernel",
    select_loop=mma_select_loop,
    model=prefill_model,
    shapes=PREFILL_SHAPES,
    shape_instance=prefill_shape_instance,
    geometry=prefill_geo_of,
    report=mma_report,
    method=mma_method_text,
    calibration=lambda m=H100: "",
    calibration_rows=prefill_calibration,
    ipc=PREFILL_CALIBRATION["ipc"],
    no_loop_note="",
    about="`prefill_mma_kernel<TileCfg<HP, DT>>` (cuda/prefill/prefill_kernel.cuh): one CTA of 4 warps x one KV"
          " head; up to head 128, 128 query rows (32 per warp, the GQA group packed into rows), else 64 (16 per"
          " warp); BN = 64 keys per tile up to head 128, 32 above; K and V double-buffered with cp.async. Shapes: bf16, heads 32/8, causal, no window, soft cap or"
          " ALiBi; the context shape reads an NHD bf16 cache (block 16) through the cp.async path.",
)

FAMILIES["ragged"] = dict(
    sources="cuda/ragged/instances/ragged_*_hp*.cu",
    instance=lambda path: (lambda mm: (mm.group(1), int(mm.group(2))))(re.match(r".*ragged_(\w+?)_hp(\d+)\.cu$", path)),
    kernel=r"ragged_(mma|simt)_kernel",
    select_loop=mma_select_loop,
    model=ragged_model,
    shapes=RAGGED_SHAPES,
    shape_instance=ragged_shape_instance,
    geometry=ragged_geo_of,
    report=mma_report,
    method=mma_method_text,
    calibration=lambda m=H100: "",
    calibration_rows=None,
    ipc=PREFILL_CALIBRATION["ipc"],
    no_loop_note="the f32 SIMT kernel: no tensor cores, outside this budget",
    about="`ragged_mma_kernel<HP, DT>` (cuda/ragged/ragged_mma.cuh): persistent CTAs of 4 warps fetch work items;"
          " keys walk slots of 64 (32 at head 256), two in flight at every head size; a prefill item is 128 packed"
          " rows (32 per warp; 64, 16 per warp, at head 256) against each slot, a decode item 16 rows (the GQA group, 4 useful here) with each warp on 16 keys"
          " of the slot (at head 256 the warps pair up on 16 keys, each taking half the head in P V);"
          " K/V rows gathered by cp.async through the page table"
          " (combined layout, page 16). Decode items of a 4K context split into chunks merged by the last CTA."
          " Shapes: bf16, heads 32/8, hard causal mask, no window or soft cap. The IPC column borrows prefill's"
          " measured 1.45 (same 2 CTAs x 4 warps per SM at head 128); ragged was not profiled.",
)


# ---- the Hopper prefill kernel (issue 14 items 6 and 7) ----------------------------------------
#
# prefill_wgmma_kernel<HCfg<HP, DT, KV>> (cuda/prefill/prefill_wgmma.cuh), compiled for sm_90a. A CTA
# is a producer warpgroup (cp.async of K and V into a two-stage ring, mbarriers) and two consumer
# warpgroups of 64 query rows; per 128-key tile each consumer warpgroup issues HP/16 wgmma
# m64n128k16 for S = Q K^T and 8 wgmma m64nHPk16 for O += P V (HP 192 and 256: 64-key tiles, HP/16
# m64n64k16 and 4 m64nHPk16). Twelve warps on an SM's four
# sub-partitions: two consumer warps (one per warpgroup) and one producer warp each. Per tile:
#   tensor: a warpgroup's m64nNk16 keeps all four tensor cores busy for 2*64*N*16 / F clocks
#           (F = TENSOR_FLOP_PER_SM_CLOCK, 4096 FLOP per clock per SM: 949 TFLOP/s at 1.755 GHz);
#   issue:  each sub-partition issues 2 consumer-warp paths + 1 producer-warp path, one per clock;
#   MUFU:   16 results per clock per SM, so a warp's MUFU takes 8 clocks of its sub-partition's unit;
#   shared memory: the wgmma operand reads (Q, K and V per consumer warpgroup; P is in registers)
#           and the producer's cp.async writes, at 128 bytes per clock per SM.
# Within a warpgroup the kernel overlaps as FlashAttention-3 does: Q K^T of tile t + 1 and P V of
# tile t are issued together; the softmax of t + 1 runs while P V of t is on the tensor cores; then
# O's rescale and P's packing (the tail) wait for P V. Two schedules bound the tile: "overlapped"
# (the two warpgroups out of phase, each one's softmax and tail under the other's wgmma: the tile
# costs its largest resource) and "in phase" (both warpgroups in step: both Q K^T, then both P V
# beside both softmaxes on each sub-partition, then both tails: tensor/2 + max(tensor/2, 2 x softmax)
# + 2 x tail, the softmax costing the larger of its issue slots and its MUFU time). The kernel's
# ping-pong (FA3's: the warpgroups take turns to issue their wgmma through two named barriers) aims
# at the first; the second is what the same instruction stream allows without it.
# Edge tiles (causal diagonal, segment ends) take the mask path; soft cap and ALiBi are off.
# The FP8 path's instances (HCfg<128, DT, KV, true>, QGMMA m64n128k32 e4m3) are reported apart
# (hopper_fp8_section): the same model against FP8's peak (8192 FLOP per SM per clock: 1898 TFLOP/s at
# 1.755 GHz, NVIDIA's 1979 at 1.83), with e4m3 operand bytes.

HOPPER_SHAPES = [
    dict(name="causal prompt, b=4 x 4K, 32/8, head 128", batch=4, q_len=4096, heads=32, kv_heads=8, head=128),
    dict(name="causal prompt, b=4 x 4K, 32/8, head 64", batch=4, q_len=4096, heads=32, kv_heads=8, head=64),
    dict(name="causal prompt, b=4 x 4K, 32/8, head 96", batch=4, q_len=4096, heads=32, kv_heads=8, head=96),
    # Head 256 (Gemma 2 and 3), the prefill (mma.sync) family's shape.
    dict(name="causal prompt, b=4 x 4K, 32/8, head 256", batch=4, q_len=4096, heads=32, kv_heads=8, head=256),
    # Head 192 (Nemotron-4 340B; heads 129..191 padded to it).
    dict(name="causal prompt, b=4 x 4K, 32/8, head 192", batch=4, q_len=4096, heads=32, kv_heads=8, head=192),
]


def hopper_bn(hp):
    """Keys per tile (HCfg's BN): 64 at HP 192 and 256, else 128."""
    return 64 if hp > 128 else 128


def hopper_raw_tiles(hp):
    """fp8 caches: raw staging tiles of BN x HP bytes (HCfg's 2 x kRawPairs): a K and a V for two
    tiles, one of each at HP 256."""
    return 2 if hp == 256 else 4


def hopper_hp(head):
    """HCfg's HP for a head size (pa_prefill_hopper_head)."""
    return 64 if head <= 64 else 96 if head <= 96 else 128 if head <= 128 else 192 if head <= 192 else 256
HOPPER_SRC = "cuda/prefill/prefill_wgmma.cuh"
HOPPER_KV = {0: "flash", 1: "vLLM", 2: "flash fp8", 3: "vLLM fp8"}  # HCfg's cache kind (kFlash.. kVllmFp8)
# What the H100 measured on 2026-11-27 (gpu-report-2026-11-27-H100.md; `pagedattn bench prefill`,
# run 12, on the kernel this family counts), TFLOP/s of useful (causal) FLOPs: the prompt shapes,
# and context attention's whole launch (its cache tiles and its new keys' tiles) per cache kind.
# torch's bf16 GEMM reached 787-791 TFLOP/s beside them (80% of NVIDIA's 989, 83% of the 949 the bounds use).
HOPPER_MEASURED_2026_11_27 = {
    "causal prompt, b=4 x 4K, 32/8, head 128": 454.0,
    "causal prompt, b=4 x 4K, 32/8, head 64": 320.0,
    "causal prompt, b=4 x 4K, 32/8, head 96": 380.0,
    "flash": 397.0,
    "vLLM": 306.0,
    "flash fp8": 350.0,
    "vLLM fp8": 306.0,
}


def hopper_measured(key):
    """'T TFLOP/s (x% of the peak at the model's clock, 949 at 1.755 GHz)' measured on the H100, or '-'."""
    t = HOPPER_MEASURED_2026_11_27.get(key)
    return "%.0f TFLOP/s (%s)" % (t, pct(t / peak_tflops())) if t else "-"
TILE = "cuda/attn_tile.cuh"


def hopper_loops(insts):
    """(consumer tile loop, producer tile loop): the loops of prefill_wgmma.cuh holding HGMMA, and
    LDGSTS with mbarrier arrivals."""
    ls = laminar_loops(insts, loops_of(insts))
    own = [l for l in ls if os.path.basename(HOPPER_SRC) in l["line"]]

    def holding(*prefixes):
        c = [l for l in own
             if all(any(insts[k]["op"].startswith(p) for k in range(l["lo"], l["hi"] + 1)) for p in prefixes)]
        return min(c, key=lambda l: l["hi"] - l["lo"]) if c else None

    # The producer's tile loop copies (LDGSTS) and arrives on the stages' barriers (SYNCS); a copy
    # loop left rolled inside it (copy_vt, copy_raw_vt) only copies.
    return holding(("HGMMA", "QGMMA")), holding("LDGSTS", "SYNCS")


def _is_gmma(op):
    """A warpgroup MMA: HGMMA (f16/bf16) or QGMMA (e4m3)."""
    return op.startswith(("HGMMA", "QGMMA"))


def hopper_select_loop(insts, loops):
    return hopper_loops(insts)[0]


def hgmma_flop(op):
    m = re.search(r"[HQ]GMMA\.64x(\d+)x(\d+)", op)  # HGMMA x16 for f16/bf16, QGMMA x32 for e4m3
    return 2 * 64 * int(m.group(1)) * int(m.group(2)) if m else 0


def hopper_consumer_paths(insts, cons, steady=False):
    """The consumer loop's heaviest paths: an interior tile ("plain": no mask, soft cap or ALiBi), an
    edge tile ("edge": the bounds-only mask without a window, every instruction of its select
    line), and with steady an interior tile that skips O's rescale (no row's max moved).
    Since 2026-11-28 the tiles an item sees whole run a loop of their own (cons, the innermost
    loop with wgmma), inside the loop that runs the item's other tiles: the edge tile is that
    outer loop's path, the inner loop avoided."""
    mask = src_span(HOPPER_SRC, r"if \(!WHOLE && \(edge \|\| !fold\)\) \{", r"sc\[j\]\[i\] = masked \? -INFINITY : x;")
    cap_alibi = src_span(HOPPER_SRC, r"float x = sc\[j\]\[i\] \* tsr\[h\];", r"sc\[j\]\[i\] = masked \? -INFINITY : x;")
    # The edge tile without a window (its select: one bound); the windowed one is avoided.
    select = src_lines(HOPPER_SRC, r"sc\[j\]\[2 \* h \+ e\] = j \* 8 \+ e < hi")
    windowed = src_lines(HOPPER_SRC, r"sc\[j\]\[2 \* h \+ e\] = d < hi && d >= lo")
    body = range(cons["lo"], cons["hi"] + 1)
    hg = ("HGMMA", lambda i: _is_gmma(i["op"]), sum(1 for k in body if _is_gmma(insts[k]["op"])))
    # The loop of the other tiles: the smallest around cons holding the select line (cons itself
    # for a kernel with one tile loop).
    around = [l for l in laminar_loops(insts, loops_of(insts))
              if l["lo"] <= cons["lo"] and cons["hi"] <= l["hi"]
              and any(insts[k]["line"] in select for k in range(l["lo"], l["hi"] + 1))]
    if not around:
        sys.exit("budget.py: hopper edge path: no loop around the whole tiles' holds the mask select")
    outer = min(around, key=lambda l: l["hi"] - l["lo"])
    inner = set() if (outer["lo"], outer["hi"]) == (cons["lo"], cons["hi"]) else set(body)
    ob = [k for k in range(outer["lo"], outer["hi"] + 1) if k not in inner]
    hg_o = ("HGMMA", hg[1], sum(1 for k in ob if _is_gmma(insts[k]["op"])))
    sel = ("mask select", lambda i: i["line"] in select, sum(1 for k in ob if insts[k]["line"] in select))
    kinds = [("plain", mask | cap_alibi, [hg], cons, ()), ("edge", cap_alibi | windowed, [hg_o, sel], outer, inner)]
    if steady:
        # O's rescale runs only for a warp some of whose rows' max moved: the path past it too.
        rescale = rescale_lines() | src_lines(
            HOPPER_SRC, r"o\[j\]\[i\] \*= corr\[i >> 1\];")
        kinds.append(("steady", mask | cap_alibi | rescale, [hg], cons, ()))
    out = {}
    for kind, forbid_lines, need, loop, avoid in kinds:
        t, kept, why = mma_path_count(insts, loop["lo"], [loop["hi"]], [], lambda *a: 1, forbid_lines, need,
                                      avoid=avoid)
        if t is None:
            sys.exit("budget.py: hopper %s path: %s" % (kind, why))
        t["kept"] = kept
        out[kind] = t
    return out


def hopper_paths(insts, hp):
    """Per-warp tallies of the consumer loop (plain tile, edge tile) and the producer loop (a tile
    of new keys, every row present, the head filling HP), plus the HGMMA FLOPs of a consumer tile."""
    cons, prod = hopper_loops(insts)
    # A cache row's block-table lookup (key_row_offsets, inlined from prefill_kernel.cuh).
    cache = src_span("cuda/prefill/prefill_kernel.cuh", r"if \(cache\) \{", r"\} else \{")
    # The partial-head copy (a column test per chunk) has instructions on this line that the FULL
    # copy mostly folds away: the path with the fewest of them is the full head's.
    # nvdisasm puts the partial head's hoisted column tests on the row's source line, so both lines
    # are avoided (the full head's path holds the row test alone).
    partial = src_lines(HOPPER_SRC, r"const bool copy = row && \(FULL") | src_lines(
        HOPPER_SRC, r"const typename H::T \*src = base \+ \(ro >= 0")
    # steady: an interior tile that moves no row's reference (O not rescaled), the usual tile of the
    # 16-bit path since its reference is lazy (SoftmaxN::kLazy, 2026-12-01).
    out = hopper_consumer_paths(insts, cons, steady=True)
    n_cp = sum(1 for k in range(prod["lo"], prod["hi"] + 1) if insts[k]["op"].startswith("LDGSTS"))
    t, kept, why = mma_path_count(insts, prod["lo"], [prod["hi"]], [], lambda *a: 1, cache | partial,
                                  [("LDGSTS", _is_cp_async, n_cp // 2)])
    if t is None:
        sys.exit("budget.py: hopper producer path: %s" % why)
    out["producer"] = t
    out["hgmma_flop"] = sum(hgmma_flop(insts[k]["op"]) for k in range(cons["lo"], cons["hi"] + 1))
    # The tail (O's rescale and P's packing, after the wait for P V), counted on each consumer path;
    # the packing's conversions carry the lines of cuda_bf16.hpp / cuda_fp16.hpp, which nothing
    # else in the loop converts through.
    tail = rescale_lines() | src_span(TILE, r"static void pack\(", r"^    }")
    tail |= {"cuda_bf16.hpp", "cuda_fp16.hpp"}
    for kind in ("plain", "edge", "steady"):
        t = out[kind]
        t["tail"] = sum(1 for k in t["path"] if insts[k]["line"] in tail or insts[k]["line"].split(":")[0] in tail)
    out["mufu"] = {k: out[k]["counts"]["special function (MUFU)"] for k in ("plain", "edge", "steady")}
    return out


HOPPER_CONTEXT = dict(name="context: 512 new over a 4K prefix, b=4, 32/8, head 128", n_cache=4096, head=128)
# The context shapes whose cache tiles the report bounds, by HP: head 128 over every cache kind, and
# heads 192 and 256 over the flash layout, of the query dtype or fp8, the caches they serve there.
HOPPER_CONTEXTS = {
    128: HOPPER_CONTEXT,
    192: dict(name="context: 512 new over a 4K prefix, b=4, 32/8, head 192", n_cache=4096, head=192),
    256: dict(name="context: 512 new over a 4K prefix, b=4, 32/8, head 256", n_cache=4096, head=256),
}


def hopper_cache_producer(insts, hp, kv):
    """Per-warp tally of the producer loop for one cache tile of instance kind kv (HOPPER_KV): the
    heaviest path that issues the tile's cp.async (a 16-bit tile: HP/8 per row-pair lane for K and
    V, as a new-key tile; fp8: HP/16, the raw copy of the next tile) and avoids the packed new-key
    row arithmetic. The copy loops the compiler keeps rolled (copy_vt, copy_raw_vt: unrolled by
    4) count their body times their trips. For the vLLM instances the cache and new-key copies
    issue the same number of cp.async; the heavier (the cache's: the strided key chunks and the
    V^T block lookups) is the one counted, an upper bound either way."""
    _, prod = hopper_loops(insts)
    new_rows = src_span("cuda/prefill/prefill_kernel.cuh", r"const int64_t row = k_row0 \+ \(pos - n_cache\);",
                        r"v = row \* p\.v_stride")
    vt = src_span(HOPPER_SRC, r"void copy_vt\(", r"^}")
    raw_vt = src_span(HOPPER_SRC, r"void copy_raw_vt\(", r"^}")
    inner = [l for l in laminar_loops(insts, loops_of(insts))
             if prod["lo"] <= l["lo"] and l["hi"] < prod["hi"]]

    def trips(_insts, l, _loops):
        if l["line"] in vt:
            return hp // 8 // 4
        if l["line"] in raw_vt:
            return hp // 16 // 4
        return 1  # an mbarrier wait's retry loop: once when the stage is ready

    fp8 = kv >= 2
    # cp.async per thread and tile: 16-bit K and V, BN/64 passes (2, or 1 at HP 192's and 256's 64-key tiles) x
    # HP/16 each; fp8 raw K and V, BN/64 passes x HP/32 each (a V^T tile: HP/16 rows, the same count).
    n_cp = 2 * (hopper_bn(hp) // 64) * (hp // 32 if fp8 else hp // 16)
    t, kept, why = mma_path_count(insts, prod["lo"], [prod["hi"]], inner, trips, new_rows,
                                  [("LDGSTS", _is_cp_async, n_cp)])
    if t is None:
        sys.exit("budget.py: hopper producer cache tile (kind %s): %s" % (HOPPER_KV[kv], why))
    t["kept"] = kept
    return t


def hopper_tile_clocks(paths, kind, hp, m=H100, prod=None, fp8=False):
    """SM clocks of one CTA tile under each bound (see the section comment)."""
    f_clk = TENSOR_FLOP_PER_SM_CLOCK
    cons, prod = paths[kind], prod or paths["producer"]
    tensor = 2 * paths["hgmma_flop"] / f_clk
    issue = 2 * cons["total"] + prod["total"]
    mufu = 2 * paths["mufu"][kind] * 8
    # wgmma operand reads (Q, K, V per consumer warpgroup), the producer's writes of K and V, and
    # for fp8 its raw copies' writes and its reads of them (BN keys a tile).
    bn = hopper_bn(hp)
    smem = (2 * (64 * hp * 2 + 2 * bn * hp * 2) + 2 * bn * hp * 2 + (4 * bn * hp if fp8 else 0)) \
        / SMEM_BYTES_PER_CLOCK
    tail = cons["tail"]
    soft = max(cons["total"] - cons["counts"]["tensor core (HMMA)"] - tail, paths["mufu"][kind] * 8)
    return dict(tensor=tensor, issue=issue, mufu=mufu, smem=smem, overlapped=max(tensor, issue, mufu, smem),
                in_phase=max(tensor / 2 + max(tensor / 2, 2 * soft) + 2 * tail, issue, smem))


def hopper_work(shape):
    """Per CTA of the causal prompt shape: (plain tiles, edge tiles) and the useful FLOPs, as the
    kernel walks it (BM = 128 packed rows, BN = 128 keys, 64 at HP 192 and 256)."""
    group = shape["heads"] // shape["kv_heads"]
    rows, L = shape["q_len"] * group, shape["q_len"]
    bn = hopper_bn(hopper_hp(shape["head"]))
    ctas, useful = [], 0
    for m0 in range(0, rows, 128):
        lo, hi = m0 // group, min(L - 1, (m0 + 127) // group)
        k_end = hi + 1
        n = (k_end + bn - 1) // bn
        edge = sum(1 for t in range(n) if min(k_end, bn * t + bn) < bn * t + bn or bn * t + bn - 1 > lo)
        ctas.append((n - edge, edge))
        for r in range(m0, min(rows, m0 + 128)):
            useful += 4 * shape["head"] * (r // group + 1)
    return ctas, useful


def hopper_report(fam_name, fam, rows, label, m=H100):
    L = []
    w = L.append
    date, commit, dirty = stamp()
    w("## %s: the Hopper prefill kernel at %s%s (%s)" % (label, commit, " + working tree" if dirty else "", date))
    w("")
    w(fam["about"])
    w("")
    w("### Resources (ptxas -v for sm_90a; the consumers raise their budget with setmaxnreg 224 (216 at HP 64"
      " and 96, at HP 192 and on the FP8 path, 232 at HP 256, 216 at HP 256 over fp8), the producer lowers its"
      " own to 56 (72; 40; 72))")
    w("")
    w("| kernel | regs at launch | spill st/ld bytes | stack | static smem | dyn smem | CTAs/SM | wgmma serialised by ptxas (C7514) |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- |")
    by_hp, by_kind = {}, {}
    f8_rows = {}
    for r in rows:
        mm = re.search(r"HCfgILi(\d+)ELi(\d+)ELi(\d+)ELb([01])E", r["kernel"])
        if not mm:
            continue
        hp, dt, kv = int(mm.group(1)), int(mm.group(2)), int(mm.group(3))
        if mm.group(4) == "1":  # the FP8 path: a section of its own below
            f8_rows[(dt, kv)] = r
            continue
        p, res = r["ptxas"], r["res"]
        dyn = 1024 + 128 * hp * 2 + 4 * hopper_bn(hp) * hp * 2 + (
            hopper_raw_tiles(hp) * hopper_bn(hp) * hp if kv >= 2 else 0)
        w("| HCfg<%d, %s, %s> | %d | %d/%d | %d | %d | %d | %d | %s |" % (
            hp, "f16" if dt == 1 else "bf16", HOPPER_KV[kv], p.get("regs", 0), p.get("spill_st", -1),
            p.get("spill_ld", -1),
            p.get("stack", -1), res.get("smem_static", 0), dyn,
            min(m["smem_per_sm"] // cta_smem(dyn, res, m), 1),
            "YES" if p.get("wgmma_serialized") else "no"))
        if dt == 2 and kv == 0:
            by_hp[hp] = r
        if dt == 2:
            by_kind[(hp, kv)] = r
    w("")
    w("### Per tile and warp (SASS paths of the tile loops)")
    w("")
    classes = [n for n, _ in CLASSES]
    w("| instance | path | warp insts | " + " | ".join(classes) + " |")
    w("| --- | --- | --- | " + " | ".join("---" for _ in classes) + " |")
    paths = {}
    for hp, r in sorted(by_hp.items()):
        paths[hp] = hopper_paths(r["_insts"], hp)
        for kind, what in (("plain", "consumer, interior tile where a row's reference moves (O rescaled)"),
                           ("steady", "consumer, interior tile (no row's reference moving, O not rescaled)"),
                           ("edge", "consumer, edge tile (masks)"),
                           ("producer", "producer, a tile of new keys")):
            t = paths[hp][kind]
            w("| bf16/h%d | %s | %d | %s |" % (hp, what + (" (%d forbidden kept)" % t["kept"]
                                                           if t.get("kept") else ""), t["total"],
                                               " | ".join("%g" % t["counts"][c] for c in classes)))
    cache_prod = {}  # (HP, cache kind): the producer's cache-tile path
    for (hp, kv), r in sorted(by_kind.items()):
        if hp not in HOPPER_CONTEXTS:
            continue
        t = cache_prod[(hp, kv)] = hopper_cache_producer(r["_insts"], hp, kv)
        w("| bf16/h%d, %s | %s | %d | %s |" % (hp, HOPPER_KV[kv], "producer, a cache tile" + (
            " (%d forbidden kept)" % t["kept"] if t.get("kept") else ""), t["total"],
                                              " | ".join("%g" % t["counts"][c] for c in classes)))
    w("")
    w("### Bounds per shape (fractions of %.0f TFLOP/s, the dense 16-bit peak at %.3f GHz: %d FLOP per SM per clock;"
      " NVIDIA's %.0f is the same rate at 1.83 GHz)" % (peak_tflops(m), m["clock_ghz"], TENSOR_FLOP_PER_SM_CLOCK,
                                                        DATASHEET_TFLOPS))
    w("")
    w("| shape | CTAs | tiles per CTA (interior + edge) | useful / computed FLOP | clocks per steady interior tile: tensor / issue"
      " / MUFU / shared memory | overlapped bound | in-phase bound | measured on the H100, 2026-11-27 |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- |")
    out = []
    for sh in fam["shapes"]:
        hp = hopper_hp(sh["head"])
        if hp not in paths:
            continue
        ctas, useful = hopper_work(sh)
        n_plain = sum(a for a, _ in ctas) * sh["batch"] * sh["kv_heads"]
        n_edge = sum(b for _, b in ctas) * sh["batch"] * sh["kv_heads"]
        useful *= sh["batch"] * sh["kv_heads"]
        computed = (n_plain + n_edge) * 2 * paths[hp]["hgmma_flop"]
        cp, ce = hopper_tile_clocks(paths[hp], "plain", hp, m), hopper_tile_clocks(paths[hp], "edge", hp, m)
        cs = hopper_tile_clocks(paths[hp], "steady", hp, m)
        # Each CTA's first interior tile moves its rows' references (they leave -inf; with the lazy
        # reference no later tile of these shapes does): one rescaling tile a CTA, the rest steady.
        n_first = min(len(ctas) * sh["batch"] * sh["kv_heads"], n_plain)
        res = {}
        for b in ("overlapped", "in_phase"):
            clocks = n_first * cp[b] + (n_plain - n_first) * cs[b] + n_edge * ce[b]
            secs = clocks / (m["sms"] * m["clock_ghz"] * 1e9)  # one CTA per SM, all SMs busy
            res[b] = useful / secs / 1e12 / peak_tflops(m)
        w("| %s | %d | %.1f + %.2f | %.2f | %.0f / %.0f / %.0f / %.0f | %s | %s | %s |" % (
            sh["name"], len(ctas) * sh["batch"] * sh["kv_heads"], sum(a for a, _ in ctas) / len(ctas),
            sum(b for _, b in ctas) / len(ctas), useful / computed, cs["tensor"], cs["issue"], cs["mufu"], cs["smem"],
            pct(res["overlapped"]), pct(res["in_phase"]), hopper_measured(sh["name"])))
        out.append(dict(shape=sh["name"], overlapped=res["overlapped"], in_phase=res["in_phase"], tile=cs))
    for hp_c, ctx in sorted(HOPPER_CONTEXTS.items()):
        kinds = {kv: t for (hp, kv), t in cache_prod.items() if hp == hp_c}
        if hp_c not in paths or not kinds:
            continue
        bn = hopper_bn(hp_c)
        w("")
        w("### Context attention: the cache tiles, per cache kind (bf16 queries, head %d)" % hp_c)
        w("")
        w("%s: %d cache tiles of %d keys per CTA, all interior (the cache ends on a tile boundary and no"
          " causal limit reaches into it); the new keys' tiles are the prompt's. The consumer's path is the"
          " prompt's steady interior tile (no row's reference moving: all but the CTA's first; its V^T loop"
          " for vLLM's layout is the same instructions with another operand layout); the producer's is its"
          " cache-tile path above." % (ctx["name"], ctx["n_cache"] // bn, bn))
        w("")
        w("| cache kind | producer insts per tile | clocks per cache tile: tensor / issue / MUFU / shared memory"
          " | overlapped bound | in-phase bound | measured on the H100, 2026-11-27 (whole launch) |")
        w("| --- | --- | --- | --- | --- | --- |")
        for kv, t in sorted(kinds.items()):
            c = hopper_tile_clocks(paths[hp_c], "steady", hp_c, m, prod=t, fp8=kv >= 2)
            useful = 4 * hp_c * 128 * bn  # 128 rows x BN keys, all visible: QK^T and PV, 2 FLOP each
            f_clk = TENSOR_FLOP_PER_SM_CLOCK
            res = {b: useful / f_clk / c[b] for b in ("overlapped", "in_phase")}
            w("| %s | %d | %.0f / %.0f / %.0f / %.0f | %s | %s | %s |" % (
                HOPPER_KV[kv], t["total"], c["tensor"], c["issue"], c["mufu"], c["smem"], pct(res["overlapped"]),
                pct(res["in_phase"]), hopper_measured(HOPPER_KV[kv]) if hp_c == 128 else "-"))
            out.append(dict(shape=ctx["name"] + ", " + HOPPER_KV[kv] + " cache tile",
                            overlapped=res["overlapped"], in_phase=res["in_phase"], tile=c))
    if f8_rows:
        w("")
        w(hopper_fp8_section(f8_rows, m, out))
    w("")
    w("Not modelled: the latency of a tile's hand-off (cp.async, then the `full` barrier, then wgmma), which the"
      " two-stage ring must hide; the prologue (Q) and epilogue (the output rows) per CTA; the tail of the grid"
      " (%d CTAs on 132 SMs, one each). A GPU measurement overrules all of it." % (
          len(hopper_work(fam["shapes"][0])[0]) * fam["shapes"][0]["batch"] * fam["shapes"][0]["kv_heads"]))
    return "\n".join(L), out




def hopper_fp8_section(f8_rows, m, out):
    """The FP8 path's instances (HCfg<128, DT, KV, true>): resources, the consumer's interior and edge
    tile paths and the producer's cache-tile path, and the context attention's cache-tile bound
    against FP8's peak. Per tile the consumer issues 4 wgmma m64n128k32 for Q K^T and 4 for P V; the
    shared-memory traffic is the e4m3 operands' (half the 16-bit bytes) plus the producer's: K by
    cp.async, raw V into staging and back out, and V^T written."""
    L = []
    w = L.append
    hp = 128
    w("### The FP8 path (PA_PREFILL_PATH_HOPPER_FP8): e4m3 wgmma over e4m3 caches, head 128")
    w("")
    w("| kernel | regs at launch | spill st/ld bytes | stack | static smem | dyn smem | wgmma serialised by ptxas (C7514) |")
    w("| --- | --- | --- | --- | --- | --- | --- |")
    for (dt, kv), r in sorted(f8_rows.items()):
        p, res = r["ptxas"], r["res"]
        dyn = 1024 + 128 * hp + 4 * 128 * hp + 2 * 1024 + 2 * 128 * hp
        w("| HCfg<128, %s, %s, FP8> | %d | %d/%d | %d | %d | %d | %s |" % (
            "f16" if dt == 1 else "bf16", HOPPER_KV[kv], p.get("regs", 0), p.get("spill_st", -1),
            p.get("spill_ld", -1), p.get("stack", -1), res.get("smem_static", 0), dyn,
            "YES" if p.get("wgmma_serialized") else "no"))
    w("")
    classes = [n for n, _ in CLASSES]
    w("| instance | path | warp insts | " + " | ".join(classes) + " |")
    w("| --- | --- | --- | " + " | ".join("---" for _ in classes) + " |")
    f_clk = FP8_FLOP_PER_SM_CLOCK
    rows_out = []
    for kv in (2, 3):
        r = f8_rows.get((2, kv))
        if r is None:
            continue
        insts = r["_insts"]
        cons, prod = hopper_loops(insts)
        paths = hopper_consumer_paths(insts, cons, steady=True)
        # The producer's cache tile: K's 8 cp.async per thread and the next raw V's 8, not the
        # new-key quantisation (quant_rows, vt_from_new).
        new_keys = src_span(HOPPER_SRC, r"void quant_rows\(", r"^}") | src_span(HOPPER_SRC, r"void vt_from_new\(", r"^}")
        raw_vt = src_span(HOPPER_SRC, r"void copy_raw_vt\(", r"^}")
        inner = [l for l in laminar_loops(insts, loops_of(insts)) if prod["lo"] <= l["lo"] and l["hi"] < prod["hi"]]
        t, kept, why = mma_path_count(insts, prod["lo"], [prod["hi"]], inner,
                                      lambda _i, l, _l: hp // 16 // 4 if l["line"] in raw_vt else 1, new_keys,
                                      [("LDGSTS", _is_cp_async, 16)])
        if t is None:
            sys.exit("budget.py: hopper FP8 producer cache tile (%s): %s" % (HOPPER_KV[kv], why))
        paths["producer"] = t
        for kind, what in (("plain", "consumer, interior tile"),
                           ("steady", "consumer, interior tile where no row's max moves (O not rescaled)"),
                           ("edge", "consumer, edge tile (masks)"), ("producer", "producer, a cache tile")):
            t = paths[kind]
            w("| bf16/h128, %s | %s | %d | %s |" % (HOPPER_KV[kv], what, t["total"],
                                                    " | ".join("%g" % t["counts"][c] for c in classes)))
        flop = sum(hgmma_flop(insts[k]["op"]) for k in range(cons["lo"], cons["hi"] + 1))
        for kind, label in (("plain", ""), ("steady", ", no row's max moving")):
            cp = paths[kind]
            mufu_w = cp["counts"]["special function (MUFU)"]
            tensor = 2 * flop / f_clk
            issue = 2 * cp["total"] + paths["producer"]["total"]
            mufu = 2 * mufu_w * 8
            # e4m3 operand reads (Q 64 x hp, K 128 x hp and V^T (hp + 8) x 128 with its rows of ones,
            # per consumer warpgroup), the producer's K and V^T writes, raw V's write and read.
            smem = (2 * (64 * hp + 128 * hp + 128 * (hp + 8)) + 4 * 128 * hp) / SMEM_BYTES_PER_CLOCK
            useful = 4 * hp * 128 * 128
            bound = useful / f_clk / max(tensor, issue, mufu, smem)
            rows_out.append((HOPPER_KV[kv] + label, tensor, issue, mufu, smem, bound, flop))
            out.append(dict(shape=HOPPER_CONTEXT["name"] + ", " + HOPPER_KV[kv] + " cache tile, FP8 path" + label,
                            overlapped=bound, in_phase=None,
                            tile=dict(tensor=tensor, issue=issue, mufu=mufu, smem=smem)))
    w("")
    w("Context attention's cache tiles on the FP8 path (%s), against %.0f TFLOP/s (dense FP8 at %.3f GHz: %d FLOP"
      " per SM per clock; NVIDIA's 1979 is the same rate at 1.83 GHz): a tile's clocks under each resource, the"
      " overlapped bound (the largest of them) as a fraction of FP8's peak."
      % (HOPPER_CONTEXT["name"], peak_tflops(m, fp8=True), m["clock_ghz"], FP8_FLOP_PER_SM_CLOCK))
    w("")
    w("| cache kind | HGMMA FLOP per warpgroup tile | clocks per cache tile: tensor / issue / MUFU / shared memory"
      " | overlapped bound (of FP8 peak) | the same in TFLOP/s |")
    w("| --- | --- | --- | --- | --- |")
    for kind, tensor, issue, mufu, smem, bound, flop in rows_out:
        w("| %s | %d | %.0f / %.0f / %.0f / %.0f | %s | %.0f |" % (kind, flop, tensor, issue, mufu, smem, pct(bound),
                                                                  bound * peak_tflops(m, fp8=True)))
    return "\n".join(L)


def hopper_method_text(fam_name, m=H100):
    return ("# Instruction budget: the Hopper prefill kernel (sm_90a)\n\n"
            "Generated by `python3 scripts/budget.py --family hopper --out <this file>` from the sm_90a SASS"
            " (cuobjdump / nvdisasm). The method is in the comment above `HOPPER_SHAPES` in scripts/budget.py.\n")


FAMILIES["hopper"] = dict(
    sources="cuda/prefill/inst_hopper.cu",
    instance=lambda path: ("hopper", 0),
    # The one-item-per-CTA instances (the default launch); PA_BUDGET_HOPPER_PERSISTENT=1 counts the
    # persistent ones (PAGEDATTN_PREFILL_PERSISTENT) instead.
    kernel=(r"prefill_wgmma_kernel.*EELb1EEEv" if os.environ.get("PA_BUDGET_HOPPER_PERSISTENT") == "1"
            else r"prefill_wgmma_kernel.*EELb0EEEv"),
    select_loop=hopper_select_loop,
    arch="sm_90a",
    shapes=HOPPER_SHAPES,
    report=hopper_report,
    method=hopper_method_text,
    calibration=lambda m=H100: "",
    about="`prefill_wgmma_kernel<HCfg<HP, DT, KV>>` (cuda/prefill/prefill_wgmma.cuh), the sm_90a path (the default prefill kernel where it runs): 384"
          " threads (a producer warpgroup and two consumer warpgroups), 128 query rows (the GQA group packed)"
          " against 128-key tiles (64 at HP 192 and 256) in a two-stage ring of mbarriers; S = Q K^T by wgmma from shared memory,"
          " O += P V with P in registers. Shapes: bf16, heads 32/8, causal, no window, soft cap or ALiBi.",
)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--family", default="decode", choices=sorted(FAMILIES),
                    help="kernel family: decode (HBM roof), prefill, ragged or hopper (tensor-pipe roof)")
    ap.add_argument("--label", default="Budget")
    ap.add_argument("--out", help="markdown file to write (default: print)")
    ap.add_argument("--append", action="store_true", help="append to --out instead of replacing it")
    ap.add_argument("--json", help="also write the roof rows as JSON")
    ap.add_argument("--no-install", action="store_true", help="print the pip command instead of installing the tools")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reuse", action="store_true", help="reuse the last analysis (build/budget/FAMILY.pickle)")
    ap.add_argument("--notes", help="markdown file appended after the tables (the reading of them)")
    args = ap.parse_args()
    # nvcc runs in the build directory (its compile_commands.json's), so the
    # cubins' paths must not be relative to here.
    args.build = os.path.abspath(args.build)
    fam = FAMILIES[args.family]
    cuobjdump = find_tool("cuobjdump", not args.no_install)
    nvdisasm = find_tool("nvdisasm", not args.no_install)
    srcs = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, fam["sources"])))
    workdir = os.path.join(args.build, "budget")
    os.makedirs(workdir, exist_ok=True)
    cache = os.path.join(workdir, args.family + ".pickle")
    if args.reuse and os.path.exists(cache):
        with open(cache, "rb") as f:
            parts = pickle.load(f)
    else:
        with ThreadPoolExecutor(args.jobs) as ex:
            parts = list(ex.map(lambda s: analyse(fam, args.build, cuobjdump, nvdisasm, s, workdir), srcs))
        with open(cache, "wb") as f:
            pickle.dump(parts, f)
    rows = [r for p in parts for r in p]
    text, out = fam.get("report", report)(args.family, fam, rows, args.label)
    if args.out:
        with open(args.out, "a" if args.append else "w") as f:
            if not args.append:
                f.write(fam.get("method", method_text)(args.family) + "\n" + fam.get("calibration", calibration_text)() + "\n")
            f.write(text + "\n")
            if args.notes:
                with open(args.notes) as n:
                    f.write(n.read() + "\n")
    else:
        print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    spills = [r for r in rows if r["ptxas"].get("spill_st", 0) or r["ptxas"].get("spill_ld", 0)]
    for r in spills:
        print("budget.py: SPILLS in %s %s" % (r["src"], r["kernel"]), file=sys.stderr)
    serial = [r for r in rows if r["ptxas"].get("wgmma_serialized")]
    for r in serial:
        print("budget.py: ptxas SERIALISED the wgmma of %s %s (C7514)" % (r["src"], r["kernel"]), file=sys.stderr)
    return 1 if spills or serial else 0


if __name__ == "__main__":
    sys.exit(main())
