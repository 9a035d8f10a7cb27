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

Each log line also gives the threads of a CTA the kernel ran with (since
2026-12-07): the interpreter runs C++ builds of the kernels, so it cannot
know what a GPU refuses to launch, and this script holds every CTA size a test
launched to the kernel's SASS on each architecture the library carries: at
most its launch bounds (EIATTR_MAX_THREADS in its .nv.info section, from
__launch_bounds__), and its registers (cuobjdump -res-usage) times the CTA's
warps, each warp's allocation rounded up to 256, within the 64 K registers one
CTA may hold (every architecture from sm_75 to sm_121). Either fails such a
launch on a GPU (too many resources requested for launch) while interpret mode
runs it.

Usage: kernel_coverage.py BUILD LOG [--list]
  --list  print every shipped kernel with the count of log lines that name it
          (a test process's first run of it at a CTA size), then check as usual
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
from budget import locate_tool, parse_res_usage  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOW = os.path.join(ROOT, "tests", "interp", "kernels-not-run.txt")

# nvcc names an anonymous namespace after its file (_GLOBAL__N__<hash>_<n>_<file>_cu_<hash>);
# a host compiler says "(anonymous namespace)".
ANON = re.compile(r"_GLOBAL__N__[0-9A-Za-z_]+?::")


# Registers: a CTA may hold 64 K 32-bit registers on every architecture the library builds
# for, allocated a warp at a time in units of 256 (CUDA's occupancy calculator).
CTA_REGISTERS = 65536
REG_UNIT = 256


def cta_registers(regs, threads):
    """The registers a CTA of `threads` threads holds at `regs` registers a thread: each of its
    ceil(threads / 32) warps takes regs x 32, rounded up to a multiple of REG_UNIT."""
    per_warp = -(-regs * 32 // REG_UNIT) * REG_UNIT
    return -(-threads // 32) * per_warp


def launch_problems(launches, limits):
    """What a GPU would refuse of the CTA sizes the tests launched.

    launches: demangled kernel name -> set of threads a CTA; limits: demangled name -> {arch:
    (registers a thread, launch bounds' most threads or None)}. One line a (kernel, arch,
    threads) that does not fit; a kernel with no limits (not in the SASS) is coverage's
    concern, not this."""
    out = []
    for name in sorted(launches):
        for arch, (regs, most) in sorted(limits.get(name, {}).items()):
            for t in sorted(launches[name]):
                if most is not None and t > most:
                    out.append("%s: %d threads a CTA, over the %d its launch bounds allow on %s" % (name, t, most, arch))
                elif cta_registers(regs, t) > CTA_REGISTERS:
                    out.append("%s: %d threads a CTA at %d registers each hold %d registers on %s, over %d"
                               % (name, t, regs, cta_registers(regs, t), arch, CTA_REGISTERS))
    return out


def elf_lines(text):
    """(arch, line) for each line of cuobjdump's output inside an ELF (not a PTX) part."""
    arch, elf = None, False
    for line in text.splitlines():
        if line.startswith("Fatbin "):
            elf, arch = line.startswith("Fatbin elf"), None
        elif line.startswith("arch = "):
            arch = line.split("=", 1)[1].strip()
        elif elf and arch:
            yield arch, line


def registers_of(res_usage):
    """(mangled kernel, arch) -> registers a thread, from `cuobjdump -res-usage` (each ELF
    part's text read by budget.py's parser)."""
    per_arch = collections.defaultdict(list)
    for arch, line in elf_lines(res_usage):
        per_arch[arch].append(line)
    return {(fn, arch): r["regs"] for arch, lines in per_arch.items()
            for fn, r in parse_res_usage("\n".join(lines)).items()}


def launch_bounds_of(elf):
    """(mangled kernel, arch) -> the most threads a CTA its launch bounds allow, from the
    EIATTR_MAX_THREADS attribute of its .nv.info section in `cuobjdump -elf` (x * y * z)."""
    out, fn, attr = {}, None, None
    for arch, line in elf_lines(elf):
        if line.startswith("."):
            fn = line[len(".nv.info."):].strip() if line.startswith(".nv.info.") else None
            attr = None
        elif fn and "Attribute:" in line:
            attr = line.split("Attribute:", 1)[1].strip()
        elif fn and attr == "EIATTR_MAX_THREADS" and "Value:" in line:
            x, y, z = (int(v, 16) for v in line.split("Value:", 1)[1].split()[:3])
            out[(fn, arch)] = x * y * z
            attr = None
    return out


def sass_limits(build, res_usage):
    """Demangled kernel name -> {arch: (registers a thread, most threads or None)}, from the
    library's `cuobjdump -res-usage` text (read once, in main) and its `cuobjdump -elf`."""
    regs, most = registers_of(res_usage), launch_bounds_of(cuobjdump(build, "-elf"))
    mangled = sorted({f for f, _ in regs})
    names = dict(zip(mangled, demangle(mangled)))
    out = collections.defaultdict(dict)
    for (f, arch), r in regs.items():
        out[names[f]][arch] = (r, most.get((f, arch)))
    return out


def cuobjdump(build, flag):
    """cuobjdump FLAG over BUILD/libpagedattn.so, its text (exit 3 without cuobjdump)."""
    tool = locate_tool("cuobjdump")
    if not tool:
        print("kernel_coverage: cuobjdump not found (scripts/deps.sh with PA_WANT_SASS=1 installs it)")
        sys.exit(3)
    lib = os.path.join(build, "libpagedattn.so")
    return subprocess.run([tool, flag, lib], capture_output=True, text=True, check=True).stdout


def demangle(names):
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    return [ANON.sub("(anonymous namespace)::", n) for n in out.stdout.splitlines()]


def shipped(res_usage):
    """The demangled kernels the library's `cuobjdump -res-usage` text names."""
    names = sorted(set(re.findall(r"^\s*Function (\S+?):?\s", res_usage, re.M)))
    if not names:
        sys.exit("kernel_coverage: cuobjdump found no kernel in libpagedattn.so")
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
    """Demangled kernel name -> the number of log lines (a process's first run of it at a CTA
    size), and demangled kernel name -> the set of CTA sizes (threads) it ran with."""
    per_obj = collections.defaultdict(list)
    with open(log) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3 or not parts[2].isdigit():
                sys.exit("kernel_coverage: %s: a line not 'OBJECT ADDRESS THREADS': %r" % (log, line))
            per_obj[parts[0]].append((int(parts[1], 16), int(parts[2])))
    # A program gone or rebuilt since it ran cannot be read: its runs are left out
    # (with a note), which can only add kernels to the list of those not run.
    count = collections.Counter()
    sizes = collections.defaultdict(set)
    for obj, runs in sorted(per_obj.items()):
        if not os.path.exists(obj):
            print("kernel_coverage: note: %s names %s, which is gone: its %d runs are left out" % (log, obj, len(runs)))
            continue
        table = symbols(obj)
        named = [(table[a][0], t) for a, t in runs if a in table]
        if len(named) < len(runs):
            print("kernel_coverage: note: %d of %s's %d runs name no function in it (rebuilt since?): left out"
                  % (len(runs) - len(named), obj, len(runs)))
        mangled = sorted({m for m, _ in named})
        by_mangled = dict(zip(mangled, demangle(mangled)))
        for m, t in named:
            count[by_mangled[m]] += 1
            sizes[by_mangled[m]].add(t)
    return count, sizes


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
    res_usage = cuobjdump(build, "-res-usage")
    ships = shipped(res_usage)
    try:
        ran, sizes = launched(log)
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
    refused = launch_problems(sizes, sass_limits(build, res_usage))
    for line in refused:
        print("kernel_coverage: a GPU would refuse this launch: " + line)
    bad += len(refused)
    print("kernel_coverage: %d kernels shipped, %d ran in interpret mode, %d listed as not run, %d CTA sizes "
          "checked against their SASS, %d problems"
          % (len(ships), len(ships & set(ran)), len(ships & set(allow)), sum(len(v) for v in sizes.values()), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
