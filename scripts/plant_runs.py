#!/usr/bin/env python3
"""The runs of CI that a planted bug is tried in (scripts/plant-bugs.sh).

Reads plants on stdin, one a line: NAME, PROGRAM (its path in BUILD), FILTER
and the plant's settings (NAME=VALUE words), separated by \\x1f. Prints, for
each plant, one line per CI run that fits it, in meson's order: NAME, the run's
test name, its environment (NAME=VALUE words) and the command to run (its words
separated by \\x1e), separated by \\x1f. A plant no run fits gets one line
whose run is "-" and whose command is the reason.

A CI run of a test program (tests/interp/test_x_interp, or its ThreadSanitizer
build test_x_interp_tsan) is a meson test of it. It fits when its environment
holds every one of the plant's settings and its --filter selects every test
FILTER selects; the command then runs the program on FILTER alone. For
tests/interp/pagedattn-interp, FILTER is a glob over the names of CI's tests
that run the CLI on the interpreter (pagedattn check --interp, the CLI sweep),
and each is run as meson gives it.

Usage: plant_runs.py BUILD < plants
"""
import ctypes
import fnmatch
import json
import os
import re
import subprocess
import sys

_libc_fnmatch = ctypes.CDLL(None).fnmatch
FNM_EXTMATCH = 1 << 5  # glibc


def matches(pattern, test_id):
    """As Criterion and mini_criterion match --filter: fnmatch with extended globs."""
    return _libc_fnmatch(pattern.encode(), test_id.encode(), FNM_EXTMATCH) == 0


def parse_list(text):
    """Test ids (suite/name) from a program's --list: Criterion prints every
    test as a tree, whatever the filter; mini_criterion prints the ids."""
    ids, suite = [], None
    for line in text.splitlines():
        line = line.rstrip()
        if m := re.fullmatch(r"(\S+): \d+ tests?", line):
            suite = m.group(1)
        elif m := re.fullmatch(r"[\u251c\u2514]\u2500\u2500 (\S+).*", line):
            if suite:
                ids.append(f"{suite}/{m.group(1)}")
        elif re.fullmatch(r"[^/\s]+/[^/\s]+", line):
            ids.append(line)
    return ids


def main():
    build = sys.argv[1]
    tests = json.loads(subprocess.run(["meson", "introspect", build, "--tests"], check=True,
                                      capture_output=True, text=True).stdout)
    listed = {}

    def ids(exe):
        if exe not in listed:
            path = os.path.join(build, exe)
            out = subprocess.run([path, "--list"], capture_output=True, text=True).stdout \
                if os.access(path, os.X_OK) else ""
            listed[exe] = parse_list(out)
        return listed[exe]

    def selects(exe, pattern):
        return {t for t in ids(exe) if matches(pattern, t)}

    for line in sys.stdin:
        name, exe, flt, settings = (line.rstrip("\n").split("\x1f") + [""] * 4)[:4]
        want = settings.split()
        cli = exe.endswith("/pagedattn-interp")
        mine = set() if cli else selects(exe, flt)
        fit = []
        for t in tests:
            cmd = t["cmd"]
            if not all(w in run_env(t) for w in want):
                continue
            if cli:
                if fnmatch.fnmatchcase(t["name"], flt) and (
                        "--interp" in cmd or any(a.endswith("/pagedattn-interp") for a in cmd)):
                    fit.append((t, cmd))
            elif mine and cmd[0].endswith("/" + exe):
                run_filter = next((a[9:] for a in cmd if a.startswith("--filter=")), "*")
                if mine <= selects(exe, run_filter):
                    fit.append((t, [cmd[0], f"--filter={flt}"]))
        for t, cmd in fit:
            print(name, t["name"], " ".join(run_env(t)), "\x1e".join(cmd), sep="\x1f")
        if not fit:
            what = "in none of CI's runs" if cli or mine else "no test matches"
            print(name, "-", "", f"{what}: {exe} '{flt}'" + (f" with {settings}" if settings else ""),
                  sep="\x1f")


def run_env(t):
    """A meson test's environment as NAME=VALUE words."""
    return [f"{k}={v}" for k, v in t["env"].items()]


if __name__ == "__main__":
    main()
