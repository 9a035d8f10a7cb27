#!/usr/bin/env python3
"""Which refusals of the host layer no test reaches.

Every refusal in csrc/ goes through pa_fail (PA_REQUIRE's body included). This
script copies the working tree into a scratch directory, makes pa_fail in that
copy record the file and line of the site that called it (a macro around the
real function; nothing else changes), builds it, runs the given meson suites
(and the Python package's tests when a venv with pytest is at hand), and lists
each site in csrc/ that returned an error in no test. A site no test reaches is
a refusal whose removal no test could notice: write a test for it, or say why
it cannot be reached.

    python3 scripts/refusal-coverage.py [--suites host,interp] [--tests GLOB] [--work /tmp/pa-refcov]
                                        [--python VENV_PYTHON] [--out report.md] [--reuse] [--cli]

--cli asks the same of the `pagedattn` CLI, whose usage errors do not go through
pa_fail: the scratch build's C code is compiled with gcov (--coverage), and the
report adds each line of benchmarks/*.c that writes to stderr (fprintf(stderr,
usage_error, fputs(..., stderr)) and that no test executed, in pagedattn and
pagedattn-interp together. Lines compiled into neither program (another
#ifdef's branch) are not counted. Its scratch build is another one
(/tmp/pa-clicov by default), with the ThreadSanitizer programs that
pagedattn-interp belongs to: about 20 minutes to build, 25 to run.

The scratch build is host code plus interpret mode (device code as unoptimised
PTX, no ThreadSanitizer): about 10 minutes to build on 2 cores, then the suites.
--reuse keeps an existing scratch build and only re-runs (after a tree edit it
re-copies the sources; ninja rebuilds what changed).
"""
import argparse
import collections
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HOOK_DECL = """
/* refusal-coverage.py: record the calling site, then fail as usual */
#ifdef __cplusplus
extern "C"
#endif
    void
    pa_refcov_hit(const char *file, int line);
#define pa_fail(...) (pa_refcov_hit(__FILE__, __LINE__), pa_fail(__VA_ARGS__))
"""

HOOK_DEF = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
void pa_refcov_hit(const char *file, int line) {
    const char *path = getenv("PA_REFCOV");
    if (!path)
        return;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%s:%d\n", file, line);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) {
        if (n > 0 && write(fd, buf, (size_t)n) < 0) {
        }
        close(fd);
    }
}
"""


def call_end(text, i):
    """The index of the parenthesis that closes the one at text[i] (string literals skipped)."""
    depth = 0
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                break
        elif text[i] == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        i += 1
    return i


def sites(src_root):
    """{(relpath, first_line): (last_line, text)} of every PA_REQUIRE( and pa_fail( call in csrc/
    (not the macro's body, pa_fail's own declaration and definition, or comments)."""
    out = {}
    texts = {}
    for dirpath, _, files in os.walk(os.path.join(src_root, "csrc")):
        for f in files:
            if f.endswith((".c", ".h")):
                path = os.path.join(dirpath, f)
                texts[os.path.relpath(path, src_root)] = open(path).read()
    # Macros that wrap a refusal (kv_cache.c's SIZE_REQUIRE): their uses are the sites.
    names = ["PA_REQUIRE", "pa_fail"]
    for text in texts.values():
        for m in re.finditer(r"#define\s+(\w+)\((?:[^\n]*\\\n)*[^\n]*", text):
            if m.group(1) not in names and re.search(r"\b(PA_REQUIRE|pa_fail)\(", m.group(0)):
                names.append(m.group(1))
    call = re.compile(r"\b(" + "|".join(names) + r")\(")
    for rel, text in texts.items():
        for m in call.finditer(text):
            start = m.start()
            line_start = text.rfind("\n", 0, start) + 1
            prefix = text[line_start:start]
            if prefix.lstrip().startswith(("#define", "/*", "*", "//")) or re.search(r"pa_status\s*\(?$", prefix):
                continue
            if line_start >= 2 and text[line_start - 2] == "\\":  # inside a multi-line macro's body
                continue
            i = call_end(text, m.end() - 1)
            body = " ".join(text[start:i + 1].split())
            if "__VA_ARGS__" in body:
                continue
            first = text.count("\n", 0, start) + 1
            last = text.count("\n", 0, i) + 1
            out[(rel, first)] = (last, body)
    return out


def cli_sites(src_root):
    """{(relpath, first_line): (last_line, text)} of each statement in benchmarks/*.c that writes to
    stderr: fprintf(stderr, ...), fputs(..., stderr), or a call of cmd_plan.c's usage_error."""
    out = {}
    bench = os.path.join(src_root, "benchmarks")
    for f in sorted(os.listdir(bench)):
        if not f.endswith(".c"):
            continue
        rel = os.path.join("benchmarks", f)
        text = open(os.path.join(bench, f)).read()
        for m in re.finditer(r"\b(fprintf\(\s*stderr|fputs\(|usage_error\()", text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            prefix = text[line_start:m.start()]
            if prefix.lstrip().startswith(("/*", "*", "//", "#")) or re.search(r"\bint\s+$", prefix):
                continue  # a comment, a macro, usage_error's definition
            end = call_end(text, text.find("(", m.start()))
            body = " ".join(text[m.start():end + 1].split())
            if m.group(1) == "fputs(" and not re.search(r",\s*stderr\s*\)$", body):
                continue
            out[(rel, text.count("\n", 0, m.start()) + 1)] = (text.count("\n", 0, end) + 1, body)
    return out


def cli_unreached(src, build):
    """The CLI's stderr sites no test executed, from the gcov counts of every object built from
    benchmarks/*.c (pagedattn and pagedattn-interp), summed by source line. Objects of other sources
    are not read (their paths in the build name no benchmarks/ file)."""
    counts = collections.defaultdict(int)  # (relpath, line) -> executions; present = compiled
    for dirpath, _, fs in os.walk(build):
        for f in fs:
            if not f.endswith(".gcda") or "benchmarks" not in os.path.relpath(os.path.join(dirpath, f), build):
                continue
            r = subprocess.run(["gcov", "--json-format", "--stdout", os.path.join(dirpath, f)], cwd=build,
                               capture_output=True)
            for doc in r.stdout.decode().splitlines():
                if not doc.strip().startswith("{"):
                    continue
                for fl in json.loads(doc).get("files", []):
                    path = os.path.normpath(os.path.join(build, fl["file"]))
                    rel = os.path.relpath(path, src)
                    if not rel.startswith("benchmarks/"):
                        continue
                    for ln in fl["lines"]:
                        counts[(rel, ln["line_number"])] += ln["count"]
    missing, total = [], 0
    for (rel, first), (last, body) in sorted(cli_sites(src).items()):
        seen = [counts[(rel, n)] for n in range(first, last + 1) if (rel, n) in counts]
        if not seen:
            continue  # compiled into neither program
        total += 1
        if max(seen) == 0:
            missing.append((rel, first, body))
    return missing, total


def run(cmd, **kw):
    print("+", " ".join(cmd) if isinstance(cmd, list) else cmd, flush=True)
    return subprocess.run(cmd, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suites", default="host,interp")
    ap.add_argument("--tests", help="only the suites' tests whose names match one of these globs "
                    "(e.g. 'pagedattn*,gpu_check_dry')")
    ap.add_argument("--work", help="scratch directory (default /tmp/pa-refcov, with --cli /tmp/pa-clicov)")
    ap.add_argument("--cli", action="store_true", help="also list the CLI's stderr lines no test executed (gcov)")
    ap.add_argument("--python", help="a Python with pytest (and numpy) to run python/tests against the scratch build")
    ap.add_argument("--out", help="markdown report (default: print)")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report-only", action="store_true",
                    help="no build, no tests: the report from the scratch directory's hits so far")
    a = ap.parse_args()
    a.work = a.work or ("/tmp/pa-clicov" if a.cli else "/tmp/pa-refcov")

    src = os.path.join(a.work, "src")
    build = os.path.join(a.work, "build")
    hits_file = os.path.join(a.work, "hits.txt")
    if a.report_only:
        return report(a, src, build, hits_file, [])
    if not a.reuse and os.path.exists(a.work):
        shutil.rmtree(a.work)
    os.makedirs(src, exist_ok=True)
    # the working tree's tracked and untracked-but-not-ignored files
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in files:
        if not f or not os.path.isfile(os.path.join(ROOT, f)):
            continue
        dst = os.path.join(src, f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        s = os.path.join(ROOT, f)
        if not os.path.exists(dst) or open(s, "rb").read() != open(dst, "rb").read():
            shutil.copy2(s, dst)
    internal = os.path.join(src, "csrc/core/internal.h")
    t = open(internal).read()
    decl = "pa_status pa_fail(pa_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));"
    if HOOK_DECL not in t:
        assert t.count(decl) == 1, "pa_fail's declaration moved: update refusal-coverage.py"
        open(internal, "w").write(t + HOOK_DECL)  # at the end: no line of the file moves
    core = os.path.join(src, "csrc/core/core.c")
    t = open(core).read()
    defn = "pa_status pa_fail(pa_status s, const char *fmt, ...) {"
    if HOOK_DEF not in t:
        assert t.count(defn) == 1, "pa_fail's definition moved: update refusal-coverage.py"
        open(core, "w").write(t.replace(defn, "pa_status(pa_fail)(pa_status s, const char *fmt, ...) {") + HOOK_DEF)

    if not os.path.exists(os.path.join(build, "build.ninja")):
        # gcov: C objects instrumented; every linker, nvcc's included, given libgcov.
        cov = ["-Dc_args=--coverage", "-Dc_link_args=--coverage", "-Dcpp_link_args=--coverage",
               "-Dcuda_link_args=-lgcov"] if a.cli else []
        # The CLI's interpret-mode tests (pagedattn-interp) are built with the ThreadSanitizer programs.
        r = run(["meson", "setup", build, src, "-Dgpu_archs=90", "-Dgpu_code=ptx-unoptimized",
                 "-Dinterp_tsan=" + ("true" if a.cli else "false"), "-Dbuildtype=debugoptimized"] + cov,
                capture_output=True, text=True)
        if r.returncode:
            sys.exit(r.stdout + r.stderr)
    if run(["ninja", "-C", build, "-j", str(a.jobs)], stdout=subprocess.DEVNULL).returncode:
        sys.exit("scratch build failed")
    if os.path.exists(hits_file):
        os.remove(hits_file)
    for dirpath, _, fs in os.walk(build):  # gcov counts of an earlier run
        for f in fs:
            if f.endswith(".gcda"):
                os.remove(os.path.join(dirpath, f))
    env = dict(os.environ, PA_REFCOV=hits_file)
    failed = []
    for s in a.suites.split(","):
        names = []
        if a.tests:  # the suite's tests whose names match (meson test --list: "suite - project:name")
            listed = run(["meson", "test", "-C", build, "--no-rebuild", "--list", "--suite", s], capture_output=True,
                         text=True).stdout.split("\n")
            names = [ln.rpartition(":")[2] for ln in listed if ":" in ln]
            names = [n for n in names if any(fnmatch.fnmatch(n, g) for g in a.tests.split(","))]
            if not names:
                continue
        r = run(["meson", "test", "-C", build, "--no-rebuild", "--num-processes", str(a.jobs), "--suite", s,
                 "--timeout-multiplier", "3"] + names, env=env, capture_output=True, text=True)
        tail = r.stdout.strip().splitlines()[-8:]
        print("\n".join(tail))
        if r.returncode:
            failed.append(s)
    if a.python:
        lib = os.path.join(build, "libpagedattn.so")
        r = run([a.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(src, "python/tests")],
                env=dict(env, PAGEDATTN_LIB=lib, PYTHONPATH=os.path.join(src, "python")), cwd=build,
                capture_output=True, text=True)
        print("\n".join(r.stdout.strip().splitlines()[-3:]))
        if r.returncode:
            failed.append("python")
    return report(a, src, build, hits_file, failed)


def report(a, src, build, hits_file, failed):
    hits = collections.Counter()
    if os.path.exists(hits_file):
        for ln in open(hits_file):
            f, _, n = ln.strip().rpartition(":")
            # __FILE__ is the path meson gave the compiler: relative to the build dir or absolute
            f = os.path.normpath(os.path.join(build, f)) if not os.path.isabs(f) else f
            hits[(os.path.relpath(f, src), int(n))] += 1
    all_sites = sites(src)
    by_file = collections.defaultdict(list)
    for (rel, first), (last, body) in all_sites.items():
        by_file[rel].append((first, last, body))
    reached = set()
    for (rel, n), _ in hits.items():
        for first, last, _ in by_file.get(rel, []):
            if first <= n <= last:
                reached.add((rel, first))
    missing = sorted(k for k in all_sites if k not in reached)
    lines = [f"# Refusals no test reaches ({len(missing)} of {len(all_sites)} sites in csrc/)", "",
             f"Suites: {a.suites}{' (tests ' + a.tests + ')' if a.tests else ''}"
             f"{' + python/tests' if a.python else ''}"
             f"{'; FAILED: ' + ', '.join(failed) if failed else ''}.", ""]
    for rel, first in missing:
        last, body = all_sites[(rel, first)]
        lines.append(f"- `{rel}:{first}` {body[:300]}")
    if a.cli:
        cli_missing, cli_total = cli_unreached(src, build)
        lines += ["", f"# The CLI's stderr lines no test executes ({len(cli_missing)} of {cli_total} in benchmarks/*.c)", ""]
        for rel, first, body in cli_missing:
            lines.append(f"- `{rel}:{first}` {body[:300]}")
    text = "\n".join(lines) + "\n"
    if a.out:
        open(a.out, "w").write(text)
        print(f"{len(missing)} of {len(all_sites)} refusal sites unreached; written to {a.out}")
    else:
        print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
