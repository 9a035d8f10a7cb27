#!/usr/bin/env python3
"""Warp instructions one warp issues per tile on the tensor-core decode kernel's common path,
counted as a path through the tile loop's SASS (sm_90), including the kernels whose loop holds
runtime-trip loops (vLLM's layout), which budget.py's per-tile count cannot weight.

For each decode_mma_kernel instance of the chosen instance files it prints:
  - the static size of the tile loop and its nested loops;
  - `path`: the heaviest path from the loop's head to its back edge that avoids the nested loops,
    the code the common case branches around (budget.COMMON_PATH_SKIPS: the soft cap and ALiBi, the
    table refill) and cold code. On the flash instances this equals budget.py's common-path count.
  - for each nested loop of the tile loop: its back edge's line and its body's heaviest path,
    avoiding the code RARE names (a unit the window start falls inside, copied byte by byte;
    units under 16 bytes). Multiply that by the loop's trips per tile and add it to `path`.

The vLLM layout's value copies were such a loop (HS / 32 trips at heads 96..128, HS / 16 at 16-bit
head 64, HS / 64 at head 256), until issue_tile's short path unrolled them for 16-byte units.
benchmarks/results/budget-notes/decode-loader-2026-11-25.md uses this script, before that change
(--root on a worktree of the older commit) and after it.

  scripts/decode_loop_path.py [--build build] [--root CHECKOUT] [--cubin FILE ...] [instance ...]
  (instances: names of cuda/decode/instances/decode_*.cu, default qbf16_cbf16 qbf16_ce4m3)
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import budget as B  # noqa: E402

# Code a well-formed tile with 16-byte units does not run inside the vLLM value-copy loop (by
# source line, matched in the files named): the byte-by-byte copy of a unit the window start
# falls inside, copy_unit's byte loop, and the 8- and 4-byte cp.async forms.
RARE = [("cuda/decode/decode_kernel.cuh", r"const unsigned char \*src = vc \+ base \+ \(int64_t\)d \* p\.v_dim_bytes;"),
        ("cuda/decode/decode_kernel.cuh", r"const int q = vpos \+ b / esz;"),
        ("cuda/decode/decode_kernel.cuh", r"dst\[b\] = q >= lo && q < hi \? src\[b\] : \(unsigned char\)0;"),
        ("cuda/decode/decode_kernel.cuh", r"dst\[b\] = b < src_bytes \? src\[b\] : \(unsigned char\)0;"),
        ("cuda/ptx.cuh", r"cp\.async\.ca\.shared\.global \[%0\], \[%1\], 8, %2"),
        ("cuda/ptx.cuh", r"cp\.async\.ca\.shared\.global \[%0\], \[%1\], 4, %2")]


def analyse(cubin, nvdisasm):
    funcs = B.disassemble(nvdisasm, cubin)
    B.resolve_labels(nvdisasm, cubin, funcs)
    rare = B.marker_lines(RARE)
    rows = []
    for name, insts in funcs.items():
        s = B.short_name(name)
        if "decode_mma_kernel" not in s:
            continue
        raw = B.loops_of(insts)
        loops, sel = B.laminar_loops(insts, raw), B.decode_select_loop(insts, raw)
        nested = [l for l in loops if sel["lo"] <= l["lo"] and l["hi"] <= sel["hi"] and (l["lo"], l["hi"]) != (sel["lo"], sel["hi"])]
        in_nested = set()
        for l in nested:
            in_nested.update(range(l["lo"], l["hi"] + 1))
        skip = B.skipped_in_common_path(insts, sel["lo"], sel["hi"], B.common_path_lines())
        cold = B.cold_code(insts)
        hp = B.heaviest_path(insts, sel["lo"], [sel["hi"]], lambda k: 1, lambda k: k in in_nested or k in skip or k in cold, [])
        bodies = []
        for l in nested:
            outer = [m for m in nested if m["lo"] <= l["lo"] and l["hi"] <= m["hi"] and m is not l]
            if outer:
                continue  # reported with its enclosing loop
            inner = set()
            for m in nested:
                if l["lo"] <= m["lo"] and m["hi"] <= l["hi"] and m is not l:
                    inner.update(range(m["lo"], m["hi"] + 1))
            bp = B.heaviest_path(insts, l["lo"], [l["hi"]], lambda k: 1,
                                 lambda k: k in inner or k in cold or insts[k]["line"] in rare, [])
            bodies.append((insts[l["hi"]]["line"], l["hi"] - l["lo"] + 1, len(bp[0]) if bp else None))
        rows.append((s, sel["hi"] - sel["lo"] + 1, len(nested), len(hp[0]) if hp else None, bodies))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(B.ROOT, "build"))
    ap.add_argument("--cubin", action="append", default=[], help="analyse this cubin instead of compiling")
    ap.add_argument("--root", help="another checkout (e.g. a git worktree of an older commit): compile its"
                    " sources with --build's flags and read its source lines")
    ap.add_argument("instances", nargs="*", default=["qbf16_cbf16", "qbf16_ce4m3"])
    a = ap.parse_args()
    nvdisasm = B.find_tool("nvdisasm", "nvidia-cuda-nvdisasm")
    cubins = a.cubin
    if not cubins:
        os.makedirs(os.path.join(a.build, "budget"), exist_ok=True)
        for i in a.instances:
            src = "cuda/decode/instances/decode_%s.cu" % i
            c = os.path.join(a.build, "budget", "loop_path_%s%s.cubin" % (i, "_root" if a.root else ""))
            # the build's flags for this checkout's file, applied to the --root checkout's
            cwd, args = B.build_command(a.build, src)
            cmd = args + ["-cubin", "-arch=sm_90", "-lineinfo", "-o", c, os.path.join(a.root or B.ROOT, src)]
            r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("decode_loop_path.py: nvcc failed on %s:\n%s" % (src, r.stderr))
            cubins.append(c)
    if a.root:
        B.ROOT = os.path.abspath(a.root)
        B._SRC.clear()
    for c in cubins:
        print("## %s" % os.path.basename(c))
        for s, n, nn, path, bodies in sorted(analyse(c, nvdisasm)):
            extra = "; ".join("nested loop %s: body %s (static %d)" % (ln, b, st) for ln, st, b in bodies)
            print("%-42s loop %4d, %d nested; path %s%s" % (s, n, nn, path, ("; " + extra) if extra else ""))


if __name__ == "__main__":
    main()
