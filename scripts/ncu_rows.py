#!/usr/bin/env python3
"""Reads `ncu --csv` output on stdin and prints one line per kernel launch:
its ID, kernel name and each metric (short name = value). Lines that are not
CSV rows (the program's own output, ncu's notes) are skipped."""
import collections
import csv
import sys


def cut(metric):
    """The name after the unit: dram__throughput.avg.pct_of_peak_sustained_elapsed is throughput."""
    head = metric.split(".")[0]
    return head.split("__", 1)[1] if "__" in head else head


rows = list(csv.DictReader([line for line in sys.stdin if line.startswith('"')]))
# Names that two metrics of the run would share (smsp__inst_executed.sum and
# sm__inst_executed.avg.per_cycle_active) keep their unit and first suffix, so neither hides the other.
shared = collections.Counter(cut(m) for m in {r["Metric Name"] for r in rows})


def short(metric):
    return ".".join(metric.split(".")[:2]) if shared[cut(metric)] > 1 else cut(metric)


launches = {}
for r in rows:
    key = (int(r["ID"]), r["Kernel Name"].split("(")[0][:56])
    launches.setdefault(key, {})[short(r["Metric Name"])] = r["Metric Value"]
for (i, name), metrics in sorted(launches.items()):
    print(f"  {i:>3} {name:56s} " + "  ".join(f"{k}={v}" for k, v in sorted(metrics.items())))
