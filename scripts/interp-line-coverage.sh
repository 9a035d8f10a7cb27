#!/usr/bin/env bash
# Line coverage of the kernels in interpret mode: the interp suite's GPU test
# programs built with gcov (--coverage on the host compiler, which compiles
# the kernels there), run with the suite's own filters and environment, then
# scripts/interp_line_coverage.py lists the lines of cuda/ no test ran (a
# template's line counts as run when any instance ran it). Not part of CI:
# the build takes about 5 minutes on two cores and the run about an hour
# (gcov slows interpret mode about fourfold; decode's program alone took 32
# minutes on 2026-12-06). Run it on an idle machine after adding kernel code:
#   scripts/interp-line-coverage.sh [BUILD_DIR [REPORT_ARGS...]]   (default build-cov)
# Writes BUILD_DIR/interp-lines.json (gcovr) and prints the report;
# PA_COV_REPORT_ONLY=1 reports on the counts a run left there, running nothing.
# REPORT_ARGS go to scripts/interp_line_coverage.py (--instances: the kernel
# instances that never ran a helper another instance of its template ran;
# --instance-lines: the lines an instance skipped so, within functions it ran).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/deps.sh || exit 1
set +e
dir=${1:-build-cov}
if [ ! -f "$dir/build.ninja" ]; then
    # PTX unoptimised: the library's own device code never runs here; the
    # interp programs compile the kernels for the host with the flags below.
    meson setup "$dir" -Dgpu_archs=90 -Dgpu_code=ptx-unoptimized -Dinterp_tsan=false \
        -Dc_args=--coverage -Dcpp_args=--coverage -Dc_link_args=--coverage -Dcpp_link_args=--coverage \
        >/dev/null || exit 1
fi
command -v gcovr >/dev/null || python3 -m pip install -q gcovr || exit 1
if [ "${PA_COV_REPORT_ONLY:-0}" != 1 ]; then
    # Only the interp suite's programs (the rest, the CLI among them, links
    # through nvcc, which takes no --coverage).
    mapfile -t progs < <(meson introspect "$dir" --tests | python3 -c '
import json, os, sys
d = os.path.realpath(sys.argv[1])
for c in sorted({t["cmd"][0] for t in json.load(sys.stdin) if t["suite"] == ["pagedattn:interp"]}):
    print(os.path.relpath(os.path.realpath(c), d))
' "$dir")
    [ "${#progs[@]}" -gt 0 ] || exit 1
    ninja -C "$dir" "${progs[@]}" || exit 1
    find "$dir" -name '*.gcda' -delete
    # Each interp-suite test as meson would run it (args, filters, environment),
    # one after another, without meson's timeouts.
    meson introspect "$dir" --tests | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin):
    if t["suite"] == ["pagedattn:interp"]:
        env = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in t["env"].items())
        print(t["name"] + "\t" + "env " + env + " " + " ".join(shlex.quote(c) for c in t["cmd"]))
' | while IFS=$'\t' read -r name cmd; do
        start=$(date +%s)
        (cd "$dir" && eval "$cmd" >"interp-lines-$name.log" 2>&1)
        echo "$name: exit $?, $(( $(date +%s) - start )) s"
    done
fi
gcovr -r . --object-directory "$dir" --filter "$PWD/cuda/" --gcov-ignore-errors=all \
    --gcov-ignore-parse-errors=all --gcov-suspicious-hits-threshold 0 --json "$dir/interp-lines.json" || exit 1
python3 scripts/interp_line_coverage.py "$dir/interp-lines.json" "${@:2}"
