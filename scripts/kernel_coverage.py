#!/usr/bin/env python3
"""Every kernel the library ships ran in interpret mode.

The library's SASS (cuobjdump over BUILD/libpagedattn.so) names each kernel
instance a GPU build carries; the interpreter, run with
PA_INTERP_LAUNCH_LOG=LOG (tests/interp/interp.cpp), appends to LOG the object
and symbol-table address of each kernel a test process ran. (The tests that
launch kernels without checking their results, the CLI's bench commands and
gpu_check_dry, run with the variable empty: tests/interp/meson.build.) This script names those
addresses with nm, and lists the shipped kernels no test ran: code that
nothing checks before a GPU does (a kernel counts as verified only on a GPU;
interpret mode is what guards the rest).

A kernel no test runs on purpose goes in tests/interp/kernels-not-run.txt, one
demangled name a line (after a tab, the reason); a line there that names no
shipped kernel, or one a test did run, is an error too, so the list stays true.

Usage: kernel_coverage.py BUILD LOG [--list]
  --list  print every shipped kernel with the count of test processes that
          ran it, then check as usual
Exit 0 when every shipped kernel ran or is listed with a reason, 1 otherwise,
2 when the log is missing or unreadable, 3 when cuobjdump is not found
(scripts/deps.sh with PA_WANT_SASS=1 installs it): nothing was checked.
"""
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from budget import locate_tool  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOW = os.path.join(ROOT, "tests", "interp", "kernels-not-run.txt")

# nvcc names an anonymous namespace after its file (_GLOBAL__N__<hash>_<n>_<file>_cu_<hash>);
# a host compiler says "(anonymous namespace)".
ANON = re.compile(r"_GLOBAL__N__[0-9A-Za-z_]+?::")


def demangle(names):
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    return [ANON.sub("(anonymous namespace)::", n) for n in out.stdout.splitlines()]


def shipped(build):
    tool = locate_tool("cuobjdump")
    if not tool:
        print("kernel_coverage: cuobjdump not found (scripts/deps.sh with PA_WANT_SASS=1 installs it)")
        sys.exit(3)
    lib = os.path.join(build, "libpagedattn.so")
    text = subprocess.run([tool, "-res-usage", lib], capture_output=True, text=True, check=True).stdout
    names = sorted(set(re.findall(r"^\s*Function (\S+?):?\s", text, re.M)))
    if not names:
        sys.exit("kernel_coverage: cuobjdump found no kernel in " + lib)
    return set(demangle(names))


def symbols(obj):
    """Address -> mangled function names, from obj's symbol table."""
    text = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True, check=True).stdout
    table = collections.defaultdict(list)
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            table[int(parts[0], 16)].append(parts[2])
    return table


def launched(log):
    """Demangled kernel name -> the number of log lines (a process's first run of it)."""
    per_obj = collections.defaultdict(list)
    with open(log) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 2:
                sys.exit("kernel_coverage: %s: a line not 'OBJECT ADDRESS': %r" % (log, line))
            per_obj[parts[0]].append(int(parts[1], 16))
    # A program gone or rebuilt since it ran cannot be read: its runs are left out
    # (with a note), which can only add kernels to the list of those not run.
    count = collections.Counter()
    for obj, runs in sorted(per_obj.items()):
        if not os.path.exists(obj):
            print("kernel_coverage: note: %s names %s, which is gone: its %d runs are left out" % (log, obj, len(runs)))
            continue
        table = symbols(obj)
        mangled = [table[a][0] for a in runs if a in table]
        if len(mangled) < len(runs):
            print("kernel_coverage: note: %d of %s's %d runs name no function in it (rebuilt since?): left out"
                  % (len(runs) - len(mangled), obj, len(runs)))
        count.update(demangle(mangled))
    return count


def allowed():
    """Demangled name -> reason, from tests/interp/kernels-not-run.txt."""
    out = {}
    if os.path.exists(ALLOW):
        with open(ALLOW) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                name, _, why = line.rstrip("\n").partition("\t")
                out[name.strip()] = why.strip()
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--list"]
    if len(args) != 2:
        sys.exit(__doc__)
    build, log = args
    if not os.path.exists(log):
        print("kernel_coverage: %s not found: no interpret-mode test ran with PA_INTERP_LAUNCH_LOG" % log)
        return 2
    ships = shipped(build)
    try:
        ran = launched(log)
    except (OSError, subprocess.CalledProcessError) as e:
        print("kernel_coverage: %s: %s" % (log, e))
        return 2
    allow = allowed()
    if "--list" in sys.argv:
        for k in sorted(ships):
            print("%6d  %s" % (ran.get(k, 0), k))
    bad = 0
    for k in sorted(ships - set(ran) - set(allow)):
        print("kernel_coverage: shipped, never run in interpret mode: " + k)
        bad += 1
    for k, why in sorted(allow.items()):
        if k not in ships:
            print("kernel_coverage: %s lists a kernel the library does not ship: %s" % (os.path.relpath(ALLOW, ROOT), k))
            bad += 1
        elif k in ran:
            print("kernel_coverage: %s lists a kernel a test ran: %s" % (os.path.relpath(ALLOW, ROOT), k))
            bad += 1
        elif not why:
            print("kernel_coverage: %s gives no reason for %s" % (os.path.relpath(ALLOW, ROOT), k))
            bad += 1
    print("kernel_coverage: %d kernels shipped, %d ran in interpret mode, %d listed as not run, %d problems"
          % (len(ships), len(ships & set(ran)), len(ships & set(allow)), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
