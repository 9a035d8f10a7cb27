#!/usr/bin/env python3
"""Reads `ncu --csv` output on stdin and prints one line per kernel launch:
its ID, kernel name and each metric (short name = value). Lines that are not
CSV rows (the program's own output, ncu's notes) are skipped."""
import csv
import sys


def short(metric, names):
    """The name after the unit (dram__throughput.avg... is throughput), unless another metric of the
    run shares it (smsp__inst_executed.sum and sm__inst_executed.avg.per_cycle_active): then the unit
    and the first suffix stay, smsp__inst_executed.sum and sm__inst_executed.avg, so neither hides
    the other."""
    def cut(m):
        head = m.split(".")[0]
        return head.split("__", 1)[1] if "__" in head else head
    if sum(cut(m) == cut(metric) for m in names) > 1:
        return ".".join(metric.split(".")[:2])
    return cut(metric)


rows = list(csv.DictReader([line for line in sys.stdin if line.startswith('"')]))
names = {r["Metric Name"] for r in rows}
launches = {}
for r in rows:
    key = (int(r["ID"]), r["Kernel Name"].split("(")[0][:56])
    launches.setdefault(key, {})[short(r["Metric Name"], names)] = r["Metric Value"]
for (i, name), metrics in sorted(launches.items()):
    print(f"  {i:>3} {name:56s} " + "  ".join(f"{k}={v}" for k, v in sorted(metrics.items())))
