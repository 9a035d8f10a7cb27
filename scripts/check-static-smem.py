#!/usr/bin/env python3
"""Every kernel in BUILD/libpagedattn.so keeps its static shared memory under 16 KiB.

The launchers' fit check (pa_smem_fits, cuda/device_cc.cuh) compares a
kernel's dynamic shared memory with the device's opt-in limit, and asks the
runtime for the kernel's static bytes only when the dynamic ones come within
16 KiB of that limit (one attribute query fewer per launch otherwise). That is
exact only while no kernel declares 16 KiB or more of static shared memory: a
kernel past it would be judged to fit, then fail its launch half way through an
op instead of being refused whole. This script reads the static bytes each
kernel instance carries (cuobjdump -res-usage, the SHARED field) and fails when
one reaches the margin.

Usage: check-static-smem.py BUILD
Exit 0 when every kernel is under the margin, 1 when one is not, 3 when
cuobjdump is not found (scripts/deps.sh with PA_WANT_SASS=1 installs it).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from budget import locate_tool  # noqa: E402

MARGIN = 16 * 1024  # pa_smem_fits' margin under the opt-in limit


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tool = locate_tool("cuobjdump")
    if not tool:
        print("check-static-smem: cuobjdump not found (scripts/deps.sh with PA_WANT_SASS=1 installs it)")
        sys.exit(3)
    lib = os.path.join(sys.argv[1], "libpagedattn.so")
    text = subprocess.run([tool, "-res-usage", lib], capture_output=True, text=True, check=True).stdout
    rows = re.findall(r"^\s*Function (\S+?):?\s*\n[^\n]*?\bSHARED:(\d+)", text, re.M)
    if not rows:
        sys.exit("check-static-smem: cuobjdump found no kernel in " + lib)
    over = [(int(b), name) for name, b in rows if int(b) >= MARGIN]
    most = max(rows, key=lambda r: int(r[1]))
    print(f"check-static-smem: {len(rows)} kernel instances, the most static shared memory {most[1]} bytes ({most[0]})")
    for b, name in sorted(over, reverse=True):
        print(f"check-static-smem: {name} declares {b} bytes of static shared memory, past pa_smem_fits' {MARGIN}")
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
