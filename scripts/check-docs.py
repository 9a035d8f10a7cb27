#!/usr/bin/env python3
"""The living documents' references (README.md, tests/interp/README.md): every
Criterion test a backticked `suite/name` names (globs allowed) exists in tests/,
and every relative markdown link and backticked repository path resolves.
CHANGELOG.md and benchmarks/results/ are records of their day and are not
checked. Exit 1 listing each stale reference."""
import fnmatch
import glob
import os
import re
import subprocess
import sys

DOCS = ["README.md", "tests/interp/README.md"]
ROOTS = ("scripts", "tests", "csrc", "cuda", "include", "benchmarks", "python", "examples", ".ci")


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], check=True,
                           capture_output=True, text=True).stdout.split()
    tests, suites = set(), set()
    for f in files:
        if f.startswith("tests/") and f.endswith((".c", ".cpp", ".cu")):
            with open(f, encoding="utf-8") as fh:
                for m in re.finditer(r"^\s*(?:Test|ParameterizedTest|Theory)\(\s*(\w+)\s*,\s*(\w+)", fh.read(), re.M):
                    tests.add(m.group(1) + "/" + m.group(2))
                    suites.add(m.group(1))
    bad = []
    for doc in DOCS:
        with open(doc, encoding="utf-8") as fh:
            text = fh.read()

        def where(m):
            return f"{doc}:{text.count(chr(10), 0, m.start()) + 1}"

        for m in re.finditer(r"`(\w+)/([\w*]+)`", text):
            pat = m.group(1) + "/" + m.group(2)
            if m.group(1) in suites and not fnmatch.filter(tests, pat):
                bad.append(f"{where(m)}: no test {pat}")
        for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(doc), target))):
                bad.append(f"{where(m)}: link {target} does not resolve")
        for m in re.finditer(r"`((?:%s)/[\w./*-]+)`" % "|".join(re.escape(r) for r in ROOTS), text):
            path = m.group(1).rstrip(".")
            if "*" in path and glob.glob(path):
                continue
            if not os.path.exists(path):
                bad.append(f"{where(m)}: no path {path}")
    if bad:
        print("check-docs: stale references:\n" + "\n".join(bad))
        return 1
    print(f"check-docs ok: {len(DOCS)} documents; every test name ({len(tests)} tests), link and path resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
