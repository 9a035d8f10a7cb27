#!/usr/bin/env python3
"""Lines of the kernels (cuda/) that no test of the interp suite ran.

scripts/interp-line-coverage.sh builds interpret mode with gcov and runs the
interp suite; gcovr then writes one JSON report. A template's line appears
once per instance there; this script adds a line's counts over every instance
(a line counts as run when any instance ran it) and lists, file by file, the
lines no instance ran, in runs of nearby lines with their source. Lines of
templates never instantiated, and branches `if constexpr` removed, are not in
the report at all: scripts/kernel_coverage.py checks that every shipped
instance runs; this is the level below, the runtime branches inside them.

Usage: interp_line_coverage.py REPORT.json [SUBSTRING ...]
  SUBSTRING  list only the files whose path contains one (all by default);
             the summary line of every file is printed either way
Exit 0 (a report, not a gate).
"""
import collections
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    report = json.load(open(sys.argv[1]))
    want = sys.argv[2:]
    per_file = {}
    for f in report["files"]:
        counts = collections.defaultdict(int)
        for line in f["lines"]:
            if line.get("gcovr/noncode"):
                continue
            counts[line["line_number"]] += line["count"]
        per_file[f["file"]] = counts
    total = run = 0
    for name in sorted(per_file):
        counts = per_file[name]
        missed = sorted(n for n, c in counts.items() if c == 0)
        total += len(counts)
        run += len(counts) - len(missed)
        print(f"{name:55s} {len(counts) - len(missed):5d} of {len(counts):5d} lines run")
        if not missed or (want and not any(w in name for w in want)):
            continue
        source = open(os.path.join(ROOT, name)).read().split("\n")
        runs = []
        for n in missed:
            if runs and n - runs[-1][-1] <= 2:
                runs[-1].append(n)
            else:
                runs.append([n])
        for r in runs:
            for n in range(r[0], r[-1] + 1):
                print(f"    {n:5d}{'*' if n in missed else ' '} {source[n - 1].rstrip()[:110]}")
            print()
    print(f"all: {run} of {total} lines run in interpret mode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
