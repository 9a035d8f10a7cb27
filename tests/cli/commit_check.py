#!/usr/bin/env python3
"""The commit the `pagedattn` CLI reports is the one it was built from.

Its --version line and `info --json` (and, through the same macro, every
benchmark row: benchmarks/report.c) name a commit. Until 2026-12-05 it was read
once, when meson configured the build, so a build dir configured before later
commits went on naming the old one: run 12's rows on the H100 said b9a007c
while the build was of 7b3e6ad. Now meson's vcs_tag runs scripts/git-commit.sh
at every build.

1. The CLI's commit, without its "+uncommitted" mark, is `git rev-parse
   --short HEAD` of the source tree now ("unknown" outside a git checkout).
2. scripts/git-commit.sh in a scratch repository: a clean tree gives the hash
   alone; a tracked file changed, in the work tree or only staged, adds
   "+uncommitted"; a change under benchmarks/results/ or an untracked file does
   not; outside a repository it exits non-zero (meson then writes "unknown").

  tests/cli/commit_check.py build/benchmarks/pagedattn SOURCE_ROOT
"""
import json
import os
import re
import subprocess
import sys
import tempfile

cli, root = sys.argv[1], sys.argv[2]
script = os.path.join(root, "scripts", "git-commit.sh")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def git(cwd, *args):
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=cwd, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", "-C", cwd, *args], capture_output=True, text=True, env=env)


# 1. the CLI against the tree
head = git(root, "rev-parse", "--short", "HEAD")
want = head.stdout.strip() if head.returncode == 0 else "unknown"
out = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout
m = re.search(r"\(commit ([^)]*)\)", out)
got = m.group(1) if m else None
check(got is not None and got.split("+")[0] == want, f"--version names commit {got!r}, the tree's HEAD is {want!r}")
info = subprocess.run([cli, "info", "--json"], capture_output=True, text=True)
try:
    got_json = json.loads(info.stdout)["commit"]
except (ValueError, KeyError) as e:
    got_json = f"unparsed: {e}"
check(got_json == got, f"info --json names the same commit ({got_json!r})")

# 2. the script in a scratch repository
with tempfile.TemporaryDirectory() as d:
    repo = os.path.join(d, "r")
    os.makedirs(os.path.join(repo, "benchmarks", "results"))
    for path in ("a.c", "benchmarks/results/r.md"):
        with open(os.path.join(repo, path), "w") as f:
            f.write("one\n")
    if git(repo, "init", "-q").returncode or git(repo, "add", ".").returncode or \
            git(repo, "commit", "-q", "-m", "x").returncode:
        sys.exit("commit_check: cannot make a scratch git repository")
    h = git(repo, "rev-parse", "--short", "HEAD").stdout.strip()

    def run_script(cwd_arg):
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=d)
        return subprocess.run(["sh", script, cwd_arg], capture_output=True, text=True, env=env)

    def state(what, want):
        r = run_script(repo)
        check(r.returncode == 0 and r.stdout == want + "\n", f"{what}: {r.stdout.strip()!r} (want {want!r})")

    state("clean tree", h)
    with open(os.path.join(repo, "benchmarks", "results", "r.md"), "a") as f:
        f.write("a report written after the run\n")
    state("a report under benchmarks/results/ changed", h)
    with open(os.path.join(repo, "new.c"), "w") as f:
        f.write("untracked\n")
    state("an untracked file", h)
    with open(os.path.join(repo, "a.c"), "a") as f:
        f.write("two\n")
    state("a tracked file changed", h + "+uncommitted")
    git(repo, "add", "a.c")
    state("the change staged only", h + "+uncommitted")
    git(repo, "commit", "-q", "-m", "y")
    h2 = git(repo, "rev-parse", "--short", "HEAD").stdout.strip()
    check(h2 != h, "the second commit has another hash")
    state("committed", h2)
    outside = os.path.join(d, "plain")
    os.makedirs(outside)
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=d, GIT_CONFIG_NOSYSTEM="1", HOME=d)
    r = subprocess.run(["sh", script, outside], capture_output=True, text=True, env=env)
    check(r.returncode != 0 and r.stdout == "", f"outside a repository: exit {r.returncode}, {r.stdout.strip()!r}")

if failures:
    print(f"commit_check: {len(failures)} failed")
    sys.exit(1)
print("commit_check: all passed")
