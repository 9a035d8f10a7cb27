#!/usr/bin/env python3
"""No import circles (issue 18): builds a graph over the project's source files
from two kinds of edge and fails on any cycle.

  include  A -> B when A #includes B (quoted includes, resolved against A's
           folder and the include folders);
  symbol   A -> B when A's object file uses a global symbol that exactly one
           other object file of the same program defines, and B is that
           object's source (nm; from BUILD/compile_commands.json).

Programs: the library (libpagedattn.so) and the CLI (benchmarks/pagedattn).
Weak and header-only symbols (NVTX's, inline and template instances) are not
edges. Prints each cycle as a chain of files; exit 1 when there is one.

  scripts/check-circles.py [BUILD]      (default build)
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
SRC_DIRS = ["include", "csrc", "cuda", "benchmarks"]
INC_DIRS = ["include", "csrc/core", "csrc/shared", "cuda", "benchmarks"]
EXTS = (".c", ".h", ".cu", ".cuh", ".inc", ".cpp")


def rel(p):
    return os.path.relpath(os.path.normpath(p), ROOT)


def sources():
    out = []
    for d in SRC_DIRS:
        for root, _, files in os.walk(os.path.join(ROOT, d)):
            out += [rel(os.path.join(root, f)) for f in files if f.endswith(EXTS)]
    return sorted(out)


def include_edges(files):
    known = set(files)
    edges = {}
    for f in files:
        text = open(os.path.join(ROOT, f), errors="replace").read()
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            name = m.group(1)
            for base in [os.path.dirname(f)] + INC_DIRS:
                cand = rel(os.path.join(ROOT, base, name))
                if cand in known:
                    if cand != f:
                        edges.setdefault(f, set()).add(cand)
                    break
    return edges


def symbol_edges():
    cc = json.load(open(os.path.join(BUILD, "compile_commands.json")))
    programs = {"libpagedattn.so": [], "benchmarks/pagedattn": []}
    for e in cc:
        out = e["output"]
        src = rel(os.path.join(e["directory"], e["file"]))
        if src.split(os.sep)[0] not in SRC_DIRS:
            continue
        if out.startswith("libpagedattn.so") and ".so." in out.split("/")[0]:
            programs["libpagedattn.so"].append((os.path.join(e["directory"], out), src))
        elif out.startswith("benchmarks/pagedattn.p/"):
            programs["benchmarks/pagedattn"].append((os.path.join(e["directory"], out), src))
    edges = {}
    for objs in programs.values():
        defs, undef = {}, {}
        for obj, src in objs:
            if not os.path.exists(obj):
                sys.exit(f"check-circles: {obj} is missing; build first (ninja -C {BUILD})")
            for line in subprocess.run(["nm", obj], capture_output=True, text=True).stdout.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == "U":
                    undef.setdefault(src, set()).add(parts[1])
                elif len(parts) == 3 and parts[1] in "TDBR" and not parts[2].startswith("nvtx"):
                    defs.setdefault(parts[2], set()).add(src)
        for src, names in undef.items():
            for n in names:
                owners = defs.get(n, set())
                if len(owners) == 1:
                    (owner,) = owners
                    if owner != src:
                        edges.setdefault(src, set()).add(owner)
    return edges


def cycles(edges):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    nodes = set(edges) | {b for bs in edges.values() for b in bs}

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    inc = include_edges(sources())
    sym = symbol_edges()
    graph = {}
    for e in (inc, sym):
        for a, bs in e.items():
            graph.setdefault(a, set()).update(bs)
    found = cycles(graph)
    n_inc = sum(len(b) for b in inc.values())
    n_sym = sum(len(b) for b in sym.values())
    for comp in found:
        print("check-circles: files that depend on each other: " + ", ".join(comp))
        for a in comp:
            for b in sorted(graph.get(a, ())):
                if b in comp:
                    kind = "includes" if b in inc.get(a, ()) else "uses symbols of"
                    print(f"    {a} {kind} {b}")
    if found:
        print(f"check-circles: FAILED, {len(found)} circle(s)")
        return 1
    print(f"check-circles ok: {n_inc} include and {n_sym} symbol edges, no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
