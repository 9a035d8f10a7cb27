#!/usr/bin/env bash
# scripts/gpu-check.sh without a GPU, so a GPU lease is not the first run of an
# edit to it. The script runs as written, on a copy of the tree, with these
# stand-ins on PATH and in its build directory:
#   pagedattn          `info` describes a Hopper device; every other command runs
#                      in pagedattn-interp (the CLI on interpret mode, -Dinterp=true)
#                      with PAGEDATTN_CLI_SHRINK=1: the command's head size, query
#                      heads per KV head, dtypes, layout, variant and features as
#                      written, one KV head, at most 2 sequences of 160 tokens, so
#                      each is refused or run as on the GPU; a preset sweep
#                      (`bench --preset NAME`) checks its preset. A command repeated
#                      with the same PAGEDATTN_* settings keeps its first exit code
#   tests/gpu/test_*   Criterion programs that pass one test and write their TAP
#   compute-sanitizer  runs the program after its options, writes a clean log
#   ncu                runs the command after its options (the CLI's), prints nothing
#   nvidia-smi, serve_loop
# Sections: tests, sanitize, checks, serve, bench and ncu of the full plan, then
# the short plan's own defaults (PA_PLAN=short, its tests and sanitizers), then
# its deadline (checks and bench under a 12 s PA_DEADLINE_S: skipped lines). The
# Python package and the side by side need torch on a GPU and are left out (the side
# by side's script and the other Python scripts gpu-check.sh calls are compiled).
# Fails when the script exits non-zero, a section's header is missing from the
# report, any CLI command exits non-zero (each is listed with its exit code), or
# a name in the sanitizers' Criterion filters matches no test of the GPU programs.
#   scripts/gpu-check-dry.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd) || exit 1
interp_cli=$build/tests/interp/pagedattn-interp
if [ ! -x "$interp_cli" ]; then
    echo "gpu-check-dry: $interp_cli not built (meson setup -Dinterp=true)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fake=$work/build
mkdir -p "$work/bin" "$fake/benchmarks" "$fake/tests/gpu" "$work/repo/scripts" "$work/repo/benchmarks"
cp "$root/scripts/gpu-check.sh" "$root/scripts/crit_unreached.py" "$root/scripts/plant_runs.py" "$root/scripts/ncu_rows.py" "$root/scripts/plot" "$root/scripts/hopper_item_overhead.py" \
    "$work/repo/scripts/"
echo dry-run >"$fake/COMMIT"
calls=$work/calls.txt
: >"$calls"
: >"$work/filters.txt"
: >"$work/memo.txt"

cat >"$fake/benchmarks/pagedattn" <<EOF
#!/usr/bin/env bash
if [ "\${1:-}" = info ]; then
    if [ "\${2:-}" = --json ]; then
        echo '{"device": {"name": "Dry Run"}, "prefill_hopper": true}'
    else
        printf 'pagedattn (gpu-check-dry)\n\ndevice: Dry Run (a stand-in)\n\n'
    fi
    exit 0
fi
args=("\$@")
if [ "\${1:-}" = bench ] && { [ "\${2:-}" = all ] || [ "\${2:-}" = --preset ]; }; then
    # A preset sweep is GPU-only; check that the preset exists.
    args=(check decode --preset "\${3:-}")
    [ "\${2:-}" = all ] && args=(check decode)
fi
# A command run before with the same arguments and PAGEDATTN_* settings (the ncu section
# profiles benchmarks the bench section ran) is not run again: its exit code stands. One that
# writes --json FILE runs each time.
key="\$(env | grep '^PAGEDATTN_' | LC_ALL=C sort | tr '\n' ' ')\$*"
rc=\$(K="\$key" awk -F '\t' '\$2 == ENVIRON["K"] { print \$1; exit }' "$work/memo.txt")
if [ -z "\$rc" ] || [[ " \$* " == *" --json "* ]]; then
    PAGEDATTN_CLI_SHRINK=1 "$interp_cli" "\${args[@]}" >>"$work/cli.log" 2>&1
    rc=\$?
    printf '%s\t%s\n' "\$rc" "\$key" >>"$work/memo.txt"
fi
echo "\$rc \$*" >>"$calls"
echo "(dry run: pagedattn \$* -> exit \$rc)"
exit \$rc
EOF

cat >"$work/test_prog" <<EOF
#!/usr/bin/env bash
# (PA_DRY_CUT=1: a second test, dry::slow, outlasts the time box)
tap=
for a in "\$@"; do
    case "\$a" in
    --list) printf 'dry: 2 tests\\n\\u251c\\u2500\\u2500 run\\n\\u2514\\u2500\\u2500 slow\\n'; exit 0 ;;
    --tap=*) tap=\${a#--tap=} ;;
    --filter=*) echo "\${a#--filter=}" >>"$work/filters.txt" ;;
    esac
done
echo "[PASS] dry::run: (0.00s)"
[ "\${PA_DRY_CUT:-0}" = 1 ] && exec sleep 30
[ -n "\$tap" ] && printf 'TAP version 13\\n1..1\\nok 1 - dry::run\\n' >"\$tap"
EOF
for t in test_cache_ops test_decode test_gpu_basic test_prefill test_ptx_twins test_ragged; do
    cp "$work/test_prog" "$fake/tests/gpu/$t"
done
printf '#!/usr/bin/env bash\necho "PASS (serve_loop stand-in)"\n' >"$fake/serve_loop"

cat >"$work/bin/compute-sanitizer" <<'EOF'
#!/usr/bin/env bash
log=
while [ $# -gt 0 ]; do
    case "$1" in
    --log-file) log=$2; shift 2 ;;
    --tool | --error-exitcode | --target-processes) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
[ -n "$log" ] && echo "========= ERROR SUMMARY: 0 errors" >"${log//%p/$$}"
exec "$@"
EOF
cat >"$work/bin/ncu" <<'EOF'
#!/usr/bin/env bash
if [ "${1:-}" = --query-metrics ]; then
    printf 'sm__pipe_tensor_op_gmma_cycles_active  x\nsm__inst_executed_pipe_tensor_op_gmma  x\n'
    exit 0
fi
# gpu-check profiles $CLI, which starts with env
while [ $# -gt 0 ] && [ "$1" != env ]; do shift; done
[ $# -gt 0 ] && "$@" >/dev/null
EOF
cat >"$work/bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
case "$*" in *compute_cap*) echo 9.0 ;; *) echo dry-run ;; esac
EOF
chmod +x "$fake/benchmarks/pagedattn" "$fake"/tests/gpu/* "$fake/serve_loop" "$work"/bin/*

status=0
# The Python scripts it calls compile (side_by_side.py needs torch on a GPU to run).
for py in benchmarks/side_by_side.py scripts/plot scripts/ncu_rows.py scripts/hopper_item_overhead.py; do
    python3 -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' "$root/$py" ||
        { echo "gpu-check-dry: $py does not compile"; status=1; }
done
# ncu_rows.py keeps every metric of a launch: two whose names differ in the unit alone
# (smsp__inst_executed.sum, sm__inst_executed.avg.per_cycle_active) were one key until 2026-12-07,
# and the instruction count budget.py needs was lost under the IPC.
rows=$(printf '%s\n' 'some program output' \
    '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"' \
    '"0","decode_mma_kernel(params)","smsp__inst_executed.sum","inst","123456"' \
    '"0","decode_mma_kernel(params)","sm__inst_executed.avg.per_cycle_active","inst/cycle","2.14"' \
    '"0","decode_mma_kernel(params)","dram__throughput.avg.pct_of_peak_sustained_elapsed","%","82.3"' |
    python3 "$root/scripts/ncu_rows.py")
for want in "smsp__inst_executed.sum=123456" "sm__inst_executed.avg=2.14" "throughput=82.3"; do
    grep -qF "$want" <<<"$rows" || { echo "gpu-check-dry: ncu_rows.py lost $want:"; echo "$rows"; status=1; }
done
# The shrink itself: a GPU-sized shape runs as one group of its heads, 2 sequences of 160 tokens;
# heads that are no multiple of the KV heads are kept, and refused.
shape=$(PAGEDATTN_CLI_SHRINK=1 "$interp_cli" bench decode --seqs 64 --ctx 4096 --heads 32/8 2>&1)
grep -q "b=2 h=4/1x128 ctx=160 " <<<"$shape" ||
    { echo "gpu-check-dry: PAGEDATTN_CLI_SHRINK=1 ran 64 x 4096 tokens, heads 32/8 as:"; echo "$shape"; status=1; }
shape=$(PAGEDATTN_CLI_SHRINK=1 "$interp_cli" check decode --heads 30/8 2>&1)
grep -q "num_heads 30 is not a multiple of num_kv_heads 8" <<<"$shape" ||
    { echo "gpu-check-dry: PAGEDATTN_CLI_SHRINK=1 did not keep heads 30/8 to be refused:"; echo "$shape"; status=1; }
run_plan() { # label, then environment assignments
    local label=$1
    shift
    (cd "$work/repo" && env PATH="$work/bin:$PATH" PA_BUILD_DIR="$fake" "$@" bash scripts/gpu-check.sh) \
        >"$work/$label.out" 2>&1
    local rc=$?
    local report
    report=$(ls "$work"/repo/benchmarks/results/gpu-check-*-Dry-Run.md 2>/dev/null | head -1)
    echo "gpu-check-dry: $label: exit $rc, $(wc -l <"$calls") CLI commands so far"
    if [ $rc -ne 0 ] || [ -z "$report" ]; then
        echo "gpu-check-dry: $label: gpu-check.sh failed (exit $rc); its output ends:"
        tail -20 "$work/$label.out"
        status=1
        return
    fi
    for want in "${SECTIONS_WANTED[@]}"; do
        grep -q "^## $want" "$report" || {
            echo "gpu-check-dry: $label: the report has no '## $want' section"
            status=1
        }
    done
    if [ -n "${EXPECT:-}" ] && ! grep -qF -- "$EXPECT" "$report"; then
        echo "gpu-check-dry: $label: the report has no line with: $EXPECT; it has:"
        grep -A3 -E "^(plain|memcheck) " "$report"
        status=1
    fi
    grep -n "unbound variable\|command not found\|syntax error" "$work/$label.out" && status=1
    rm -rf "$work"/repo/benchmarks/results
}

SECTIONS_WANTED=("GPU tests" "compute-sanitizer" "checks" "serve_loop" "benchmarks" "ncu")
run_plan full PA_SECTIONS="tests sanitize checks serve bench ncu" PA_SAN_BACKGROUND=1 PA_BENCH_PRESETS=llama3-8b
SECTIONS_WANTED=("GPU tests" "compute-sanitizer")
# (the 99 KiB devices' compact tests run under each of their three setups)
EXPECT="99k-racecheck test_ragged" run_plan short PA_PLAN=short PA_SECTIONS="tests sanitize"
# A program cut off by its box: the report names the tests it did not reach as a follow-up run.
EXPECT="not reached: 1 of 2 tests; the rest in a follow-up run: PA_SECTIONS=sanitize PA_SAN_TOOLS=memcheck PA_SAN_PROGRAMS=test_cache_ops PA_SAN_FILTER_test_cache_ops='@(dry/slow)'" \
    run_plan cut PA_DRY_CUT=1 PA_SECTIONS="tests sanitize" PA_SAN_BACKGROUND=1 PA_SAN_TOOLS=memcheck PA_TEST_SECONDS=2 PA_SAN_SECONDS=2 PA_COMPACT_SECONDS=2
# The short plan's deadline: past it each command is skipped with a line, which the report's
# deadline section lists, and the JSON rows measured so far are in $OUT.
mkdir -p "$work/out"
SECTIONS_WANTED=("checks" "benchmarks" "deadline")
EXPECT="skipped (deadline, at +" run_plan deadline PA_PLAN=short PA_SECTIONS="checks bench" PA_DEADLINE_S=12 \
    OUT="$work/out"
[ -s "$work/out/logs.tgz" ] || { echo "gpu-check-dry: deadline: no logs.tgz in \$OUT"; status=1; }

# Every alternative of every Criterion filter the sanitizers were given names at least one
# test of the real GPU programs (a renamed test would drop out of a sanitizer's subset unseen).
for prog in "$build"/tests/gpu/test_*; do
    "$prog" --list 2>/dev/null | awk '/^[A-Za-z0-9_]+: [0-9]+ tests?$/ {s = $1; sub(":", "", s); next} {print s "/" $NF}'
done >"$work/tests.txt"
if ! python3 - "$work/filters.txt" "$work/tests.txt" <<'PY'; then
import fnmatch, sys
names = [l.strip() for l in open(sys.argv[2]) if l.strip()]
bad = 0
for f in sorted({l.strip() for l in open(sys.argv[1]) if l.strip()}):
    if f[:2] in ("@(", "!(") and f.endswith(")"):
        inner, alts, depth, cur = f[2:-1], [], 0, ""
        for ch in inner:
            depth += ch == "("
            depth -= ch == ")"
            if ch == "|" and depth == 0:
                alts.append(cur)
                cur = ""
            else:
                cur += ch
        alts.append(cur)
    else:
        alts = [f]
    for a in alts:
        if "(" not in a and not any(fnmatch.fnmatchcase(n, a) for n in names):
            print(f"gpu-check-dry: no GPU test matches '{a}' (filter {f[:60]}...)")
            bad = 1
if not bad:
    print(f"gpu-check-dry: {len(names)} GPU tests; every name in the sanitizers' filters matches one")
sys.exit(bad)
PY
    status=1
fi

failed=$(awk '$1 != 0' "$calls")
if [ -n "$failed" ]; then
    echo "gpu-check-dry: CLI commands that exit non-zero (exit code, command):"
    echo "$failed"
    echo "gpu-check-dry: the CLI's messages:"
    grep -E "^pagedattn" "$work/cli.log" | sort | uniq -c | head -20
    status=1
fi
echo "gpu-check-dry: $(wc -l <"$calls") CLI commands ($(wc -l <"$work/memo.txt") run, the rest repeats), $(awk '$1 == 0' "$calls" | wc -l) ran here as they would on the GPU"
exit $status
