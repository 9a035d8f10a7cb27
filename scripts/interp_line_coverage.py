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

With --instances it lists instead the functions (template instances, device
helpers and lambdas inlined into a kernel) that never ran while another
instance of the same template (same file and line) did: a path some kernel
instance runs and another never does, which the union above hides (a V^T
copy that ran at head 224 for f16 queries but not bf16, say). Some are dead
by construction (an instance whose launcher never takes that branch); the
rest want a test (prefill_gpu/mma_sync_every_instance_and_cache_path came of
the first such list, 2026-12-06).

With --instance-lines it goes one level further, to lines: a line some
instance ran that another instance, which did run its function, never ran
(a branch inside a helper that ran, which --instances cannot see: the soft
mask of the ragged kernel's compact head-128 slots, 2026-12-07). Runs of
such lines with the same instances are printed together, with the source of
the run's first line and each instance's name up to its arguments.

Usage: interp_line_coverage.py REPORT.json [--instances | --instance-lines] [SUBSTRING ...]
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
        print(__doc__[__doc__.index("Usage:"):].strip(), file=sys.stderr)
        return 2
    report = json.load(open(sys.argv[1]))
    want = [a for a in sys.argv[2:] if a not in ("--instances", "--instance-lines")]
    if "--instances" in sys.argv[2:]:
        return instances(report, want)
    if "--instance-lines" in sys.argv[2:]:
        return instance_lines(report, want)
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


def instances(report, want):
    """The functions never run beside a sibling instance that ran."""
    total = 0
    for f in sorted(report["files"], key=lambda f: f["file"]):
        by_line = collections.defaultdict(list)
        for fn in f.get("functions", []):
            by_line[fn["lineno"]].append(fn)
        idle = []
        for lineno, fns in sorted(by_line.items()):
            if any(fn.get("execution_count", 0) for fn in fns):
                idle += [(lineno, fn) for fn in fns if not fn.get("execution_count", 0)]
        if not idle:
            continue
        total += len(idle)
        print(f"{f['file']:55s} {len(idle):5d} instances never run beside a sibling that ran")
        if want and not any(w in f["file"] for w in want):
            continue
        for lineno, fn in idle:
            name = fn.get("demangled_name") or fn.get("name", "?")
            print(f"    {lineno:5d} {name[:200]}")
    print(f"all: {total} instances never run beside a sibling that ran")
    return 0



def short(name):
    """A function's name up to its argument list (template arguments kept)."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0 and not name.startswith("operator", i - 8):
            return name[:i]
    return name


def instance_lines(report, want):
    """Lines an instance skipped although it ran their function and a sibling ran them."""
    total_lines = total_misses = 0
    for f in sorted(report["files"], key=lambda f: f["file"]):
        counts = collections.defaultdict(int)  # (line, function) -> count
        fn_ran = collections.defaultdict(int)  # function -> count over its lines here
        for line in f["lines"]:
            if line.get("gcovr/noncode"):
                continue
            fn = line.get("function_name") or "?"
            counts[(line["line_number"], fn)] += line["count"]
            fn_ran[fn] += line["count"]
        by_line = collections.defaultdict(dict)
        for (n, fn), c in counts.items():
            by_line[n][fn] = c
        skipped = {}
        for n, fns in by_line.items():
            if any(fns.values()):
                miss = frozenset(short(fn) for fn, c in fns.items() if c == 0 and fn_ran[fn] > 0)
                if miss:
                    skipped[n] = miss
        if not skipped:
            continue
        misses = sum(len(m) for m in skipped.values())
        total_lines += len(skipped)
        total_misses += misses
        print(f"{f['file']:55s} {len(skipped):5d} lines skipped by {misses} instances that ran their function")
        if want and not any(w in f["file"] for w in want):
            continue
        source = open(os.path.join(ROOT, f["file"])).read().split("\n")
        runs = []
        for n in sorted(skipped):
            if runs and skipped[runs[-1][-1]] == skipped[n] and n - runs[-1][-1] <= 3:
                runs[-1].append(n)
            else:
                runs.append([n])
        for r in runs:
            where = f"{r[0]}" if len(r) == 1 else f"{r[0]}-{r[-1]}"
            print(f"    {where:>9s} {source[r[0] - 1].strip()[:100]}")
            for name in sorted(skipped[r[0]]):
                print(f"              {name[:160]}")
    print(f"all: {total_lines} lines skipped by {total_misses} instances that ran their function")
    return 0


if __name__ == "__main__":
    sys.exit(main())
