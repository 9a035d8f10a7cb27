#!/usr/bin/env python3
"""What a change did to the instruction budget: compares two runs of scripts/budget.py
(before and after, each with --out REPORT.md --json ROWS.json) and prints

  - the kernel instances whose registers or CTAs per SM changed (the report's
    resources table: instance, kernel, regs, ..., CTAs/SM), and the range of the
    register changes;
  - for each target shape (the JSON rows, matched by shape and kernel), every
    numeric field that changed (decode: per_warp, overhead, frac_ipc_measured, ...;
    prefill and ragged: warp_insts, smem_bytes and the bounds);
  - decode: the spread of frac_ipc_measured's change over the shapes.

Usage: python3 scripts/budget_diff.py BEFORE.md BEFORE.json AFTER.md AFTER.json
  e.g. (the parent commit's in a worktree: git worktree add /tmp/base HEAD; meson setup
  /tmp/base/build; python3 scripts/budget.py --build /tmp/base/build ...)
"""
import json
import statistics
import sys


def resources(path):
    """{(instance, kernel): row} from the report's resources table (10 columns, regs numeric)."""
    out = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("| "):
                continue
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) == 10 and c[2].isdigit():
                out[(c[0], c[1])] = c
    return out


def key(row):
    return json.dumps({k: row[k] for k in ("instance", "shape", "kernel") if k in row}, sort_keys=True)


def numeric_changes(a, b, prefix=""):
    out = {}
    for k, v in b.items():
        if k not in a:
            continue
        if isinstance(v, dict) and isinstance(a[k], dict):
            out.update(numeric_changes(a[k], v, prefix + k + "."))
        elif isinstance(v, (int, float)) and isinstance(a[k], (int, float)) and a[k] != v:
            out[prefix + k] = (a[k], v)
    return out


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    ra, rb = resources(argv[1]), resources(argv[3])
    regs = sorted((int(rb[k][2]) - int(ra[k][2]), k, ra[k][2], rb[k][2]) for k in rb if k in ra and ra[k][2] != rb[k][2])
    occ = [(k, ra[k][8], rb[k][8]) for k in rb if k in ra and ra[k][8] != rb[k][8]]
    print(f"instances: {len(ra)} before, {len(rb)} after; registers changed in {len(regs)}", end="")
    print(f" ({regs[0][0]:+d} to {regs[-1][0]:+d})" if regs else "")
    for d, k, x, y in regs:
        print(f"  regs {x} -> {y}  {k[0]}  {k[1]}")
    print(f"CTAs per SM changed in {len(occ)}")
    for k, x, y in occ:
        print(f"  {k[0]}  {k[1]}: {x} -> {y}")
    ja, jb = json.load(open(argv[2])), json.load(open(argv[4]))
    ka = {key(r): r for r in ja}
    fracs = []
    for r in jb:
        a = ka.get(key(r))
        if a is None:
            print(f"new shape: {key(r)}")
            continue
        ch = numeric_changes(a, r)
        if "frac_ipc_measured" in r and r["frac_ipc_measured"] is not None and a.get("frac_ipc_measured") is not None:
            fracs.append(r["frac_ipc_measured"] - a["frac_ipc_measured"])
        if ch:
            print(f"{r.get('shape', '')[:48]:48}  {r.get('kernel', '')[-40:]}")
            for f, (x, y) in ch.items():
                print(f"    {f}: {x:.6g} -> {y:.6g}")
    if fracs:
        print(f"frac_ipc_measured change over {len(fracs)} shapes: {min(fracs) * 100:+.2f} to {max(fracs) * 100:+.2f} "
              f"points, {statistics.mean(fracs) * 100:+.3f} on average")


if __name__ == "__main__":
    main(sys.argv)
