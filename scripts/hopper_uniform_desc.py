#!/usr/bin/env python3
"""The Hopper prefill kernel's wgmma descriptors stay in uniform registers.

    python3 scripts/hopper_uniform_desc.py OBJECT     (scripts/check-sm90a.sh)
    python3 scripts/hopper_uniform_desc.py --locate   (prints cuobjdump's path, or exits 1)

OBJECT: an object or cubin built for sm_90a from cuda/prefill/inst_hopper.cu,
read through `cuobjdump -sass` (found as scripts/budget.py finds its tools;
without one the check says so and passes). cuobjdump disassembles through
nvdisasm since CUDA 13.5 (the PyPI wheels are separate), so --locate finds
both or neither, and cuobjdump runs with nvdisasm's folder first on PATH. In every prefill_wgmma_kernel
instance, no R2UR
may sit among the wgmmas of one batch (from a batch's first wgmma to the one
that commits it, gsb0). A wgmma takes its descriptors from uniform registers
only, so an R2UR there means ptxas keeps a descriptor in vector registers and
moves it before each wgmma (often rebuilding it with 64-bit vector adds too).
That happened while the consumer warpgroup index came from threadIdx alone:
16-42 such R2UR in the one-item instances above HP 64 and up to 84 in the
persistent ones (budget-notes/hopper-uniform-cw-2026-11-28.md). The one-item
instances at HP 64 and 96 over flash caches kept 4 and 8 after that fix, until
the consumers formed the tiles' shared-window address once through a lane-0
shuffle too (budget-notes/hopper-smem-addresses-2026-11-28.md): every instance
has 0 since. An instance may hold up to MAX_R2UR = 4, room for a compiler's
stray move, well below the 8-84 this guards against.
Exits 1 and names the instances above it; 2 when it finds no instance, or
one with no wgmma batch (the check would be vacuous).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from budget import locate_tool  # noqa: E402

GMMA = re.compile(r"^[HQ]GMMA\.")
MAX_R2UR = 4


def functions(text):
    """{mangled name: [(address, instruction text without predicate)]}."""
    out, cur = {}, None
    for raw in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", raw)
        if m:
            cur = m.group(1)
            out[cur] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", raw)
        if m and cur:
            body = re.sub(r"^@!?U?P[T0-9]+\s+", "", m.group(2).strip())
            out[cur].append((int(m.group(1), 16), body))
    return out


def r2ur_in_batches(insts):
    """(R2UR among the wgmmas of one batch, batches committed)."""
    n = batches = pending = 0
    open_batch = False
    for _, body in insts:
        if GMMA.match(body):
            if open_batch:
                n += pending
            pending = 0
            open_batch = "gsb0" not in body
            batches += 0 if open_batch else 1
        elif body.startswith("R2UR"):
            pending += 1 if open_batch else 0
        elif body.startswith(("WARPGROUP", "BAR", "SYNCS", "BRA", "EXIT", "RET")):
            open_batch, pending = False, 0
    return n, batches


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tool, disasm = locate_tool("cuobjdump"), locate_tool("nvdisasm")
    if not disasm:
        tool = None
    if sys.argv[1] == "--locate":
        if tool:
            print(tool)
        return 0 if tool else 1
    if not tool:
        print("hopper_uniform_desc: uniform wgmma descriptors not checked (no cuobjdump and nvdisasm)")
        return 0
    env = dict(os.environ, PATH=os.path.dirname(disasm) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([tool, "-sass", sys.argv[1]], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print("hopper_uniform_desc: cuobjdump failed on %s:\n%s" % (sys.argv[1], r.stderr))
        return 1
    funcs = {n: i for n, i in functions(r.stdout).items() if "prefill_wgmma_kernel" in n}
    if not funcs:
        print("hopper_uniform_desc: no prefill_wgmma_kernel in %s" % sys.argv[1])
        return 2
    bad, empty, worst = [], [], 0
    for name, insts in sorted(funcs.items()):
        n, batches = r2ur_in_batches(insts)
        if batches == 0:
            empty.append(name)
        elif n > MAX_R2UR:
            bad.append("%s: %d R2UR among the wgmmas of its %d batches (at most %d)" % (name, n, batches, MAX_R2UR))
        worst = max(worst, n)
    for b in bad:
        print("hopper_uniform_desc: " + b)
    for e in empty:
        print("hopper_uniform_desc: %s: no wgmma batch found" % e)
    if empty:
        return 2
    if bad:
        return 1
    print("hopper_uniform_desc: at most %d R2UR among the wgmmas of each of %d instances (limit %d)"
          % (worst, len(funcs), MAX_R2UR))
    return 0


if __name__ == "__main__":
    sys.exit(main())
