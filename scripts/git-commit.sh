#!/bin/sh
# The commit a build is made from, for the CLI's --version and result rows and
# gpu-pack.sh's COMMIT: the short hash, with "+uncommitted" after it when a
# tracked file differs from it (benchmarks/results/ aside: reports written
# after a run do not change what ran). Meson runs it at every build (vcs_tag in
# benchmarks/meson.build), so a commit made after configuring is not missed.
# Usage: git-commit.sh SOURCE_ROOT. Exit 1 outside a git checkout (meson then
# writes "unknown").
cd "${1:-.}" || exit 1
c=$(git rev-parse --short HEAD 2>/dev/null) || exit 1
git diff --quiet HEAD -- . ':!benchmarks/results' 2>/dev/null || c="$c+uncommitted"
printf '%s\n' "$c"
