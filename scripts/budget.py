#!/usr/bin/env python3
"""Instruction budget of the hot kernels, counted from their sm_90 SASS.

For every instance of a kernel family (today: decode; prefill and ragged can be
added to FAMILIES, issue 14 item 7) this script

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
     that the instruction stream allows (capped at 100%).

The tools: cuobjdump and nvdisasm from PATH, /usr/local/cuda/bin, or a pip
install of nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm under /tmp/nvtools
(done here when neither is found; --no-install prints the command instead).

Usage: python3 scripts/budget.py [--build build] [--family decode]
                                 [--out benchmarks/results/budget-decode-DATE.md]
                                 [--label before] [--json rows.json]
"""
import argparse
import datetime
import glob
import json
import os
import pickle
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

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
    smem_per_cta_reserved=1024,  # sm_90 reserves 1 KiB of shared memory per CTA
    smem_per_cta_max=227 * 1024,
    threads_per_sm=2048,
    ctas_per_sm=32,
    schedulers=4,
)

# ---- tools ---------------------------------------------------------------------------
PIP_CMD = "pip install --target /tmp/nvtools nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"


def find_tool(name, install):
    cands = [shutil.which(name), "/usr/local/cuda/bin/" + name]
    cands += sorted(glob.glob("/tmp/nvtools/nvidia/*/bin/" + name))
    cands += sorted(glob.glob("/tmp/nvtools/nvidia/*/*/bin/" + name))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    if not install:
        sys.exit("budget.py: %s not found; install it with:\n  %s" % (name, PIP_CMD))
    print("budget.py: %s not found; running: %s" % (name, PIP_CMD), file=sys.stderr)
    subprocess.run(shlex.split(PIP_CMD), check=True, stdout=subprocess.DEVNULL)
    return find_tool(name, False)


# ---- compile --------------------------------------------------------------------------


def build_command(build, src):
    """The build's nvcc command for src, turned into a -cubin for sm_90."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        cc = json.load(f)
    want = os.path.realpath(os.path.join(ROOT, src))
    for c in cc:
        if os.path.realpath(os.path.join(c["directory"], c["file"])) == want:
            args = shlex.split(c["command"])
            out, skip = [], False
            for a in args:
                if skip:
                    skip = False
                    continue
                if a in ("-o", "-c"):
                    skip = True
                    continue
                if a.startswith("-gencode") or a.startswith("-Xptxas") or a.startswith("-Werror"):
                    continue
                out.append(a)
            return c["directory"], out
    sys.exit("budget.py: %s is not in %s/compile_commands.json (meson setup %s -Dgpu_archs=90)" % (src, build, build))


def compile_cubin(build, src, cubin):
    cwd, args = build_command(build, src)
    cmd = args + ["-cubin", "-arch=sm_90", "-lineinfo", "-Xptxas=-v", "-o", cubin, os.path.join(ROOT, src)]
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
    return info


def res_usage(cuobjdump, cubin):
    out = subprocess.run([cuobjdump, "-res-usage", cubin], capture_output=True, text=True, check=True).stdout
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


def divisions(insts, lo, hi):
    """Software 32-bit integer divisions/remainders (the I2F.*RP + MUFU.RCP reciprocal
    sequence nvcc emits for a runtime divisor) and calls (64-bit division)."""
    n = sum(1 for k in range(lo, hi + 1) if insts[k]["op"].startswith("I2F") and ".RP" in insts[k]["op"])
    calls = sum(1 for k in range(lo, hi + 1) if insts[k]["op"].startswith("CALL"))
    return n, calls


# ---- occupancy ---------------------------------------------------------------------


def ctas_per_sm(regs, threads, smem_bytes, m=H100):
    warps = (threads + 31) // 32
    regs_warp = (max(regs, 1) * 32 + m["reg_alloc_unit"] - 1) // m["reg_alloc_unit"] * m["reg_alloc_unit"]
    by_regs = m["regs_per_sm"] // (regs_warp * warps)
    by_threads = m["threads_per_sm"] // threads
    smem = smem_bytes + m["smem_per_cta_reserved"]
    by_smem = m["smem_per_sm"] // smem if smem_bytes > 0 else m["ctas_per_sm"]
    n = min(by_regs, by_threads, by_smem, m["ctas_per_sm"])
    limit = [k for k, v in (("registers", by_regs), ("threads", by_threads), ("shared memory", by_smem),
                            ("CTA slots", m["ctas_per_sm"])) if v == n]
    return n, "/".join(limit)


def roof_fraction(bytes_per_tile, warp_insts_per_tile, m=H100, ipc=None):
    ipc = ipc or m["issue_per_clock"]
    gbs = m["sms"] * ipc * m["clock_ghz"] * bytes_per_tile / warp_insts_per_tile
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


def decode_geometry(hs, esz, group, swizzle=True):
    """csrc/ops/decode.c dec_geometry for a flash layout (swizzle=False: as of f7f2891)."""
    nt = 128
    hb = hs * esz
    kchunks = (hb + 15) // 16
    headq = kchunks * (16 // esz)
    T = min(max(pow2_floor(8192 // hb), 8), 64)
    head_chunks = (group + 15) // 16
    hpc = (group + head_chunks - 1) // head_chunks
    pv_groups = (hpc + 3) // 4
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
        pk = kchunks * 16 if kchunks % 8 == 0 else pitch(hb)
        pv = hb if hb % gv == 0 and (hb // gv) % 8 == 0 else pitch(hb)
    else:
        pk = pv = pitch(hb)
    stage_k = T * pk
    stage_v = T * pv
    tiles = 3 * (stage_k + stage_v)
    red = pv_slices * hpc * hs * 4
    off_q = (max(tiles, red) + 15) // 16 * 16
    smem = off_q + hpc * headq * 4 + hpc * T * 4 + 3 * 16 * 4 + 3 * 64 + 64 * 4
    return dict(T=T, hpc=hpc, pv_slices=pv_slices, ds=ds, kchunks=kchunks, smem=smem, threads=nt,
                tpt=nt // T, units=hb // 16)


def auto_part(L):
    want = (L + 63) // 64
    part = 256
    while part < want:
        part *= 2
    return part


def decode_model(inst, shape):
    """Model of the runtime-shaped kernel, head 128 NHD block 16."""
    q, c = inst
    esz = DT[c][1]
    group = shape["heads"] // shape["kv_heads"]
    g = decode_geometry(128, esz, group)
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
    # and 16-byte copies (NG <= 2), the tensor-core kernel for a 16-bit query,
    # FixGeo<128, CT, NG> for an f32 one; DynGeo otherwise.
    if ng <= 2 and q != "f32":
        kernel = r"decode_mma_kernel"
    else:
        kernel = r"FixGeoILi128ELi%dELi%dE" % (DT[c][0], ng) if ng <= 2 else r"DynGeo"
    return dict(bytes_per_tile=T * 128 * esz * 2, tile_tokens=T, threads=g["threads"], smem=g["smem"],
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


# ---- analysis ---------------------------------------------------------------------------------


def analyse(fam, build, cuobjdump, nvdisasm, src, workdir):
    inst = fam["instance"](src)
    cubin = os.path.join(workdir, os.path.basename(src).replace(".cu", ".cubin"))
    ptx = ptxas_info(compile_cubin(build, src, cubin))
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
            r["outside"] = len(insts) - total
            r["_insts"], r["_sel"], r["_nested"] = insts, sel, nested
        rows.append(r)
    return rows


def per_tile(r, trips):
    """Warp instructions one warp issues per tile: the loop body with each nested
    loop weighted by trips(ops of the loop) (its executions per tile); None when
    trips is None or returns None for a nested loop (a runtime trip count)."""
    if "loop" not in r:
        return None
    insts, sel, nested = r["_insts"], r["_sel"], r["_nested"]
    ws = []
    for l in nested:
        t = trips([insts[k]["op"] for k in range(l["lo"], l["hi"] + 1)]) if trips else None
        if t is None:
            return None
        ws.append((l, t))

    def weight(k):
        w = 1
        for l, t in ws:
            if l["lo"] <= k <= l["hi"]:
                w *= t
        return w

    return count_body(insts, sel["lo"], sel["hi"], weight)


def short_name(mangled):
    try:
        d = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip()
    except OSError:
        return mangled
    d = re.sub(r"\(.*\)$", "", d).replace("pa_dec::", "").replace("void ", "")
    return d


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


def report(fam_name, fam, rows, label, m=H100):
    L = []
    w = L.append
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "cuda", "csrc"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    w("## %s: %s kernel at %s%s (%s)" % (label, fam_name, commit, " + working tree" if dirty else "", date))
    w("")
    w("### Resources (ptxas -v, cuobjdump -res-usage; CTAs/SM for head 128, block 16, NHD)")
    w("")
    w("| instance (q/cache) | kernel | regs | spill st/ld bytes | stack | local | static smem | dyn smem MHA / GQA 32/8 | CTAs/SM MHA / GQA (limit) | warps/scheduler |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        p, res = r["ptxas"], r["res"]
        regs = p.get("regs", res.get("regs", 0))
        kname = short_name(r["kernel"])
        q, c = r["instance"]
        mods = [fam["model"](r["instance"], s) for s in (fam["shapes"][0], fam["shapes"][1])]
        occ = [ctas_per_sm(regs, md["threads"], md["smem"] + res.get("smem_static", 0), m) for md in mods]
        wps = occ[0][0] * mods[0]["threads"] // 32 / m["schedulers"]
        w("| %s/%s | %s | %d | %d/%d | %d | %d | %d | %d / %d | %d / %d (%s) | %g |" % (
            q, c, kname, regs, p.get("spill_st", -1), p.get("spill_ld", -1), p.get("stack", -1), res.get("local", -1),
            res.get("smem_static", 0), mods[0]["smem"], mods[1]["smem"], occ[0][0], occ[1][0], occ[0][1], wps))
    w("")
    w("### Steady-state loop (SASS, per warp)")
    w("")
    classes = [n for n, _ in CLASSES]
    w("| instance | kernel | loop (addresses, back edge file:line) | static insts | nested loops | per tile (nested loops weighted, GQA 32/8 model) | software divisions | " +
      " | ".join(classes) + " | outside the loop |")
    w("| --- | --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in classes) + " | --- |")
    for r in rows:
        if "loop" not in r:
            continue
        lp = r["loop"]
        pt = per_tile(r, fam["model"](r["instance"], fam["shapes"][1])["trips"])
        w("| %s/%s | %s | 0x%x-0x%x (back edge %s) | %d | %d | %s | %d (+%d calls) | %s | %d |" % (
            r["instance"][0], r["instance"][1], short_name(r["kernel"]), lp["lo"], lp["hi"], lp["line"], lp["static"],
            len(lp["nested"]), "%.0f" % pt[1] if pt else "-", lp["divisions"], lp["calls"],
            " | ".join("%d" % lp["counts"][c] for c in classes), r["outside"]))
    w("")
    w("### Issue-slot roof (%d SMs x %d warp instructions/clock x %.3f GHz, copy roof %.0f GB/s)" % (
        m["sms"], m["issue_per_clock"], m["clock_ghz"], m["roof_gbs"]))
    w("")
    w("| instance | shape | kernel the launcher picks | tile: tokens, bytes | warp insts per tile per CTA (loop) | + CTA overhead per tile | bytes per warp inst | max % of roof, 4 IPC (loop only) | max % of roof, 4 IPC (with overhead) | at the measured 2.14 IPC (with overhead) | predicted (calibrated, below) |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
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
                w("| %s/%s | %s | no kernel matching %s |  |  |  |  |  |  |" % (inst[0], inst[1], s["name"], md["kernel"]))
                continue
            if pt is None:
                w("| %s/%s | %s | %s | %d, %d B | not countable statically (%d nested runtime loops; static body %d) | | | | | |" % (
                    r["instance"][0], r["instance"][1], s["name"], short_name(r["kernel"]), md["tile_tokens"],
                    md["bytes_per_tile"], len(r["loop"]["nested"]), r["loop"]["static"]))
                continue
            f1 = roof_fraction(md["bytes_per_tile"], wi, m)[1]
            f2 = roof_fraction(md["bytes_per_tile"], wi + ov, m)[1]
            f3 = roof_fraction(md["bytes_per_tile"], wi + ov, m, ipc=CALIBRATION["ipc"])[1]
            # Only the kernel the calibration measured gets a calibrated figure.
            calibrated = re.search(c2["kernel"], r["kernel"]) is not None
            f4 = roof_fraction(md["bytes_per_tile"], (wi + ov) * exec_ratio, mc, ipc=c2["ipc"])[1] if calibrated else None
            out.append(dict(instance=list(r["instance"]), shape=s["name"], kernel=short_name(r["kernel"]),
                            per_warp=pt[1], per_cta=wi, overhead=ov, bytes=md["bytes_per_tile"], frac=f1,
                            frac_overhead=f2, frac_ipc_measured=f3, frac_predicted=f4))
            w("| %s/%s | %s | %s | %d, %d B | %.0f | %.0f | %.2f | %s | %s | %s | %s |" % (
                r["instance"][0], r["instance"][1], s["name"], short_name(r["kernel"]), md["tile_tokens"],
                md["bytes_per_tile"], wi, ov, md["bytes_per_tile"] / wi, pct(min(1, f1)), pct(min(1, f2)),
                pct(min(1, f3)), pct(min(1, f4)) if f4 is not None else "- (not measured)"))
    if exec_ratio:
        w("")
        w("`predicted`: the count times %.2f (executed / counted, %s %s/%s on an H100), at %.2f GHz and %.2f IPC"
          " (what the H100 reached at 4 warps per scheduler), against the measured %s there"
          " (gpu-report-2026-11-23-H100.md). Bandwidth, not issue, caps the rest. Only rows of the kernel"
          " that was measured (%s) get it; `- (not measured)` marks a kernel no GPU has run yet." % (
              exec_ratio, c2["shape"], c2["instance"][0], c2["instance"][1], c2["clock_ghz"], c2["ipc"],
              pct(c2["measured"]), c2["kernel"]))
        w("")
        w("Checked against the other shapes measured on the H100:")
        w("")
        for c in c2["checks"]:
            w("- " + c)
    w("")
    return "\n".join(L), out


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
        " 2048 / threads, 228 KiB / (smem + 1 KiB reserved), 32).",
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
        " fraction of the roof the instruction stream allows. `with overhead` adds the CTA's instructions outside"
        " the loop (each counted once) spread over its tiles (recommended entry: 256-token splits at 4K, 512 at"
        " 32K); the merge kernel is not counted." % (m["issue_per_clock"], m["sms"], m["sms"],
                                                    m["issue_per_clock"], m["clock_ghz"], m["roof_gbs"]),
        "",
        "Shapes (issue 13): head 128, block 16, NHD, bf16 query; cache bf16 (2 B) or fp8 e4m3 (1 B); MHA 32/32 and"
        " GQA 32/8; batch 64 x 4K and batch 1 x 32K. Bytes per tile = tile tokens x head 128 x element size x 2"
        " (K and V) for one KV head.",
        "",
    ])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--family", default="decode", choices=sorted(FAMILIES))
    ap.add_argument("--label", default="Budget")
    ap.add_argument("--out", help="markdown file to write (default: print)")
    ap.add_argument("--append", action="store_true", help="append to --out instead of replacing it")
    ap.add_argument("--json", help="also write the roof rows as JSON")
    ap.add_argument("--no-install", action="store_true", help="print the pip command instead of installing the tools")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reuse", action="store_true", help="reuse the last analysis (build/budget/FAMILY.pickle)")
    ap.add_argument("--notes", help="markdown file appended after the tables (the reading of them)")
    args = ap.parse_args()
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
    text, out = report(args.family, fam, rows, args.label)
    if args.out:
        with open(args.out, "a" if args.append else "w") as f:
            if not args.append:
                f.write(method_text(args.family) + "\n" + calibration_text() + "\n")
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
    return 1 if spills else 0


if __name__ == "__main__":
    sys.exit(main())
