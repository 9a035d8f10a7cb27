#!/usr/bin/env python3
"""The tests a Criterion program cut off by its time box did not reach
(scripts/gpu-check.sh), as a filter for a follow-up run.

A GPU lease is short, and a sanitized program that outgrows its box is cut
at the same test every time (Criterion runs tests in a fixed order), so the
tests past the cut are never sanitized unless a follow-up run names them.

Usage: crit_unreached.py LIST LOG FILTER
  LIST    the program's --list output (every test, whatever the filter)
  LOG     its --verbose output: a test whose verdict ([PASS], [FAIL], [SKIP]
          but for "Test is disabled", which is what the filter left out) is
          in it was reached
  FILTER  the --filter the run had ("" or "*" for all)
Prints "N of M": the tests FILTER selects that have no verdict in LOG, of
those it selects; then, if any, the filter that selects them (an extended
glob, as Criterion matches --filter).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plant_runs import matches, parse_list  # noqa: E402


def unreached(list_text, log_text, flt):
    flt = flt or "*"
    wanted = [t for t in parse_list(list_text) if matches(flt, t)]
    done = set()
    for line in log_text.splitlines():
        m = re.match(r"\[(PASS|FAIL|SKIP)\] (\S+?)::(\S+?):?(?:\s|$)(.*)", line)
        if m and not (m.group(1) == "SKIP" and "Test is disabled" in m.group(4)):
            done.add(f"{m.group(2)}/{m.group(3)}")
    return [t for t in wanted if t not in done], len(wanted)


def main():
    with open(sys.argv[1], errors="replace") as f:
        listed = f.read()
    with open(sys.argv[2], errors="replace") as f:
        log = f.read()
    left, total = unreached(listed, log, sys.argv[3] if len(sys.argv) > 3 else "")
    print(f"{len(left)} of {total}")
    if left:
        print("@(" + "|".join(left) + ")")


if __name__ == "__main__":
    main()
