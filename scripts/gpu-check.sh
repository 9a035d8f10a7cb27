#!/usr/bin/env bash
# On a machine with a GPU: the GPU tests, the four compute-sanitizer setups,
# `pagedattn check` for every op, serve_loop on the GPU, the benchmarks and the
# side-by-side against FlashInfer and PyTorch SDPA, in one command, writing one
# dated report under benchmarks/results/. Order: the correctness sections
# (tests, python, checks, serve; with PA_SAN_BACKGROUND=1 the sanitizers run
# beside them), then the timed ones on a quiet GPU (side, bench, ncu).
#
#   scripts/gpu-check.sh                     build natively into build-gpu/ (needs Criterion)
#   PA_BUILD_DIR=.carry/build PA_CRITERION_LIBS=.carry/crit scripts/gpu-check.sh
#                                            use the tree scripts/gpu-pack.sh made elsewhere
#                                            (for a GPU machine without Criterion)
#   PA_SECTIONS="tests python sanitize checks serve bench side ncu"   which parts to run (default all)
#   PA_PLAN=short                            one call inside a 15-minute device lease (about 9 minutes
#                                            of command time; the machine's start takes the rest):
#                                            tests with the sanitizers beside them (at nice 15), the Python
#                                            package's tests (about 15 s; a 90 s box), checks, benchmarks without
#                                            the preset sweep, the Hopper prefill items no GPU has run yet (heads
#                                            256 and 192, the FP8 path) before the decode sweeps; 60 random draws
#                                            per test, 200 s sanitizer boxes, a 540 s deadline. Each knob below still
#                                            overrides it; the side-by-side and ncu sections want a second lease.
#                                            Its checks and benchmarks are about 175 CLI commands (55 checks, 120
#                                            benchmarks, most of them decode over caches of up to 1 GiB, filled on
#                                            every core, about 2.7 s each), each one process with its own CUDA
#                                            context: more than the deadline leaves them, so the section's
#                                            last commands (the Hopper prompts and context at heads 128 and
#                                            under, which run 12 measured, then the end of the decode sweeps)
#                                            are skipped at it. Run it with timeout_s about 570.
#   PA_DEADLINE_S=540                        seconds from the script's start after which no command starts
#                                            (default: none; 540 under PA_PLAN=short, where PA_DEADLINE_S=
#                                            sets none): each skipped one leaves a "skipped (deadline)" line,
#                                            and every time box (tests, sanitizers, checks, benchmarks) is cut
#                                            to end by it, so the report, the JSON and the logs reach $OUT
#                                            inside the call's limit
#   PA_PY_SECONDS=600                        time box of the Python package's tests (90 under PA_PLAN=short)
#   PA_SAN_SECONDS=300                       time box of each sanitizer run (they run side by side)
#   PA_COMPACT_SECONDS=240                   time box of each run of the 99 KiB devices' compact-tile
#                                            tests (tests section: test_prefill and test_ragged under
#                                            PAGEDATTN_SMEM_LIMIT=101376; plain, memcheck and racecheck,
#                                            the six runs side by side, beside the plain programs)
#   PA_SAN_PROGRAMS=test_decode              which GPU test programs the sanitizers run (a glob; default all)
#   PA_WHEELS=.whl                           wheels (flashinfer-python, apache-tvm-ffi) to install
#                                            into /tmp/site for the side-by-side; scripts/gpu-wheels.sh
#                                            downloads them here at pinned versions (carry .whl too)
#   PA_FI_WARM_SECONDS=420                   time box of FlashInfer's JIT warm-up (in the background,
#                                            head 128 bf16 first); the side-by-side times FlashInfer
#                                            only on the modules it finished
#   PA_SAN_ENV="PA_TEST_SHRINK=4 PA_TEST_MAX_CASES=6"
#                                            environment of the sanitized programs only (smaller
#                                            cases, as the interp suites run them)
#   PA_SAN_TOOLS="memcheck initcheck"       which sanitizer tools run (default all four)
#   PA_SAN_FILTER_test_prefill='prefill_hopper*/*'
#                                            a program's Criterion filter for every tool (replaces
#                                            the built-in subsets below; one variable per program).
#                                            A program its box cut off gets a line in the report naming
#                                            the tests it did not reach, as such a follow-up call's settings
#   PA_BENCH_PRESETS="llama3-8b"             the preset sweeps of the bench section ("" for none)
#   PA_BENCH_CONTEXT_PATHS="hopper mma"      the prefill paths the context benchmarks compare
#   PA_NCU_SECONDS=150 PA_NCU_FP8=1          each ncu run's box; 0 skips the FP8 path's
#   PA_NCU_RUNS="decode prefill hopper fp8 stalls decode64"
#                                            which ncu runs (default all; `stalls`: the Hopper prompt's
#                                            warp states at heads 128 and 64, about a minute: PA_PLAN=short
#                                            with PA_SECTIONS="... bench ncu" and PA_NCU_RUNS=stalls runs it
#                                            if the bench section leaves time before the deadline, which it
#                                            now seldom does; `decode64`: decode v1's
#                                            memory tables and warp states at heads 128 and 64)
#   PA_TEST_RANDOM_SEED=N PA_TEST_RANDOM_CASES=150
#                                            the random-configuration tests (decode_random,
#                                            prefill_random, ragged_gpu/random_configurations,
#                                            and cache_ops' four: reshape_and_cache, kv_cache_update,
#                                            swap_blocks, copy_blocks):
#                                            seed (default: the clock, printed in the report) and
#                                            draws per test; PA_SAN_RANDOM_CASES=8 under the sanitizers
#   PA_SAN_NICE=15 PA_FI_NICE=5              CPU priority of the sanitizers and of FlashInfer's JIT
#                                            when they run beside the plain tests, whose CPU
#                                            references are the long poles (default 0; PA_SAN_NICE 15
#                                            under PA_PLAN=short)
# scripts/gpu-check-dry.sh runs this script without a GPU, on stand-ins, every CLI command of it
# in interpret mode (meson test gpu_check_dry, in CI): run it after editing this file.
# Output: benchmarks/results/gpu-check-<date>-<device>.md, its .json rows, the
# side-by-side table and logs; copied into $OUT when that is set.
set -uo pipefail
# The deadline counts from here: the build below (when there is no carried one) is inside it.
T0=$(date +%s)
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
BUILD=${PA_BUILD_DIR:-build-gpu}
if [ "${PA_PLAN:-}" = short ]; then
    : "${PA_SECTIONS:=tests python sanitize checks serve bench}" "${PA_SAN_BACKGROUND:=1}" "${PA_SAN_SECONDS:=200}"
    : "${PA_TEST_RANDOM_CASES:=60}" "${PA_TEST_SECONDS:=300}" "${PA_BENCH_PRESETS=}"
    # The sanitizers at nice 15, so the plain tests' CPU references (the section's long poles) come
    # first on the 16 cores; a 90 s box for the Python tests (about 15 s), so a hung one costs
    # little; and a deadline that leaves a 570 s command 30 s to bring its output back.
    : "${PA_SAN_NICE:=15}" "${PA_PY_SECONDS:=90}" "${PA_DEADLINE_S=540}"
    export PA_SECTIONS PA_SAN_BACKGROUND PA_SAN_SECONDS PA_TEST_RANDOM_CASES PA_TEST_SECONDS PA_BENCH_PRESETS
    export PA_SAN_NICE PA_PY_SECONDS PA_DEADLINE_S
fi
SECTIONS=" ${PA_SECTIONS:-tests python sanitize checks serve bench side ncu} "
SAN_SECONDS=${PA_SAN_SECONDS:-300}
want() { [[ "$SECTIONS" == *" $1 "* ]]; }
NCU_RUNS=" ${PA_NCU_RUNS:-decode prefill hopper fp8 stalls decode64} "
ncu_run() { [[ "$NCU_RUNS" == *" $1 "* ]]; }
# Criterion's runtime (and the libcudart it was built with) for our own programs
# only: Python keeps the machine's libraries.
LIBS_ENV="${LD_LIBRARY_PATH:-}"
if [ -n "${PA_CRITERION_LIBS:-}" ]; then
    LIBS_ENV="$(cd "$PA_CRITERION_LIBS" && pwd)${LIBS_ENV:+:$LIBS_ENV}"
fi

if [ ! -x "$BUILD/benchmarks/pagedattn" ]; then
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
    # Hopper: sm_90a, so the wgmma wrappers exist (test_ptx_twins compares them with their twin).
    [ "$arch" = 90 ] && arch=90a
    [ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" -Dgpu_archs="$arch" >/dev/null || exit 1
    ninja -C "$BUILD" >/dev/null || exit 1
    cuda_home=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
    cc -O2 -std=c11 -Iinclude -I"$cuda_home/include" -o "$BUILD/serve_loop" examples/serve_loop.c \
        -L"$BUILD" -Wl,-rpath,"$(cd "$BUILD" && pwd)" -lpagedattn -L"$cuda_home/lib64" -lcudart -lm || exit 1
fi
BUILD=$(cd "$BUILD" && pwd)
CLI="env LD_LIBRARY_PATH=$LIBS_ENV $BUILD/benchmarks/pagedattn"
commit=$(cat "$BUILD/COMMIT" 2>/dev/null | tr '\n' ' ' || true)
[ -n "$commit" ] || commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dev=$($CLI info --json | python3 -c 'import json,sys; d=json.load(sys.stdin)["device"]; print((d or {}).get("name","none").replace(" ","-"))')
stamp=$(date -u +%Y-%m-%d)
mkdir -p benchmarks/results
tag="$stamp-$dev${PA_REPORT_SUFFIX:-}"
report="benchmarks/results/gpu-check-$tag.md"
json="benchmarks/results/gpu-check-$tag.json"
logs="benchmarks/results/gpu-check-$tag-logs"
mkdir -p "$logs"
: >"$json"
: >"$logs/deadline.txt"

# The deadline (PA_DEADLINE_S seconds after T0): every time box is cut to end by it, and a
# command with under 5 s left is skipped, so a slow tests section costs the last benchmarks
# rather than the call's whole output (a command the device tool kills at its limit brings back
# only what is already under $OUT).
DEADLINE=${PA_DEADLINE_S:-}
left_s() { # seconds left before the deadline (a day when there is none)
    if [ -n "$DEADLINE" ]; then echo $((T0 + DEADLINE - $(date +%s))); else echo 86400; fi
}
fit() { # a time box in seconds, cut to what is left before the deadline (at least 1: `timeout 0` never ends)
    local l
    l=$(left_s)
    [ "$l" -ge 1 ] || l=1
    if [ "$1" -gt "$l" ]; then echo "$l"; else echo "$1"; fi
}
# box SECONDS COMMAND...: `timeout SECONDS COMMAND...` with the box cut to the deadline. A command
# skipped there (its box cut under 5 s), or cut short by it, gets a line where its output would be
# and one in $logs/deadline.txt (the report lists them at its end), and exits 0: no "(failed: rc
# N)" beside it. After each command the JSON rows so far go into $OUT, so a call killed at its
# limit still brings back every row it measured.
box() {
    local asked=$1 t what rc
    t=$(fit "$1")
    shift
    what="$(env | grep '^PAGEDATTN_' | LC_ALL=C sort | tr '\n' ' ')$*"
    what=${what/"$CLI"/pagedattn}
    if [ "$t" -lt "$asked" ] && [ "$t" -lt 5 ]; then
        echo "skipped (deadline, at +$(($(date +%s) - T0)) s): $what" | tee -a "$ROOT/$logs/deadline.txt"
        return 0
    fi
    timeout -k 10 "$t" "$@" # (-k: a program that ignores SIGTERM must not hold the call past its box)
    rc=$?
    [ -n "${OUT:-}" ] && [ -s "$ROOT/$json" ] && cp "$ROOT/$json" "$OUT"/ 2>/dev/null
    if [ $rc -eq 124 ] && [ "$t" -lt "$asked" ]; then
        echo "cut (deadline: its ${asked} s box cut to ${t} s): $what" | tee -a "$ROOT/$logs/deadline.txt"
        return 0
    fi
    return $rc
}
# The JSON and the logs so far into $OUT, after each section: a later one may outlive the call.
# (tar exits 1 when a file changed as it read it, a sanitizer's log say; the archive holds.)
save_out() {
    [ -n "${OUT:-}" ] || return 0
    cp "$ROOT/$json" "$OUT"/ 2>/dev/null
    tar czf "$OUT/logs.tgz.part" -C "$ROOT/benchmarks/results" "$(basename "$logs")" 2>/dev/null
    [ $? -le 1 ] && mv "$OUT/logs.tgz.part" "$OUT/logs.tgz"
}

# One Criterion program: prints "NAME  P passed, F failed, S skipped" from its TAP.
run_prog() { # label timeout tap-dir prog [wrapper...]
    local label=$1 t=$2 dir=$3 prog=$4
    shift 4
    local name
    name=$(basename "$prog")
    # The box cut to the deadline; past it (cut under 5 s), a line instead of the run.
    local asked=$t
    t=$(fit "$asked")
    if [ "$t" -lt "$asked" ] && [ "$t" -lt 5 ]; then
        printf '%-13s %-18s skipped (deadline, at +%d s)\n' "$label" "$name" $(($(date +%s) - T0)) |
            tee -a "$ROOT/$logs/deadline.txt"
        return 0
    fi
    local tap="$dir/$name.tap" log="$dir/$name.log"
    local filter=()
    [ -n "${PA_CRIT_FILTER:-}" ] && filter=(--filter="$PA_CRIT_FILTER")
    # --verbose: each test's start, verdict and time in the log as it happens, so a program cut
    # off by its box still says which tests passed (its TAP file is written only at the end).
    timeout -k 10 "$t" env LD_LIBRARY_PATH="$LIBS_ENV" "$@" "$prog" --tap="$tap" --verbose ${PA_CRIT_JOBS:+-j$PA_CRIT_JOBS} \
        "${filter[@]}" >"$log" 2>&1
    local rc=$?
    local p=0 f=0 s=0
    if [ -f "$tap" ]; then
        p=$(grep -E '^ok ' "$tap" | grep -vc '# SKIP')
        s=$(grep -cE '^ok .*# SKIP' "$tap")
        f=$(grep -cE '^not ok ' "$tap")
    fi
    local extra=""
    local left=()
    if [ $rc -eq 124 ]; then
        extra=" (TIMED OUT after ${t}s; its log: $(grep -c '^\[PASS\]' "$log") passed, $(grep -c '^\[FAIL\]' "$log") failed before the cut)"
        # The tests past the cut, as the filter of a follow-up run (Criterion's order is fixed:
        # the same tests are cut every time unless a run names them).
        env LD_LIBRARY_PATH="$LIBS_ENV" "$prog" --list >"$dir/$name.list" 2>/dev/null
        mapfile -t left < <(python3 "$ROOT/scripts/crit_unreached.py" "$dir/$name.list" "$log" "${PA_CRIT_FILTER:-*}")
    fi
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && extra=" (exit $rc)"
    printf '%-13s %-18s %3d passed, %d failed, %d skipped%s\n' "$label" "$name" "$p" "$f" "$s" "$extra"
    if [ ${#left[@]} -gt 0 ]; then
        local again="PA_SECTIONS=sanitize PA_SAN_TOOLS=$label PA_SAN_PROGRAMS=$name PA_SAN_FILTER_$name"
        [ "$label" = plain ] && again="PA_SECTIONS=tests PA_CRIT_FILTER" # (other programs: no test matches)
        [[ "$label" == 99k-* ]] && again="(the tests section's 99 KiB runs: $name under PAGEDATTN_SMEM_LIMIT=101376) --filter"
        local q="'"
        echo "    not reached: ${left[0]} tests${left[1]:+; the rest in a follow-up run: $again=$q${left[1]}$q}"
    fi
    if [ "$f" -gt 0 ] || [ $rc -ne 0 ]; then
        grep -E '^not ok |^  ' "$tap" 2>/dev/null | head -30
        grep -E 'ERROR SUMMARY|========= [A-Z]|Invalid|Race|Uninit|Barrier|error' "$log" | sort | uniq -c | sort -rn | head -15
    fi
}

# A fresh seed each run, so every GPU run draws new configurations; a failure
# names the seed and the configuration to redraw (tests/common/testutil.h).
export PA_TEST_RANDOM_SEED=${PA_TEST_RANDOM_SEED:-$T0}
export PA_TEST_RANDOM_CASES=${PA_TEST_RANDOM_CASES:-150}
{
    echo "# GPU check $stamp"
    echo
    echo "- commit: $commit"
    echo "- device: $($CLI info | sed -n 3,5p | tr '\n' ' ')"
    echo "- driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); nvcc: $(nvcc --version 2>/dev/null | tail -2 | head -1)"
    echo "- sections: $SECTIONS"
    echo "- random-configuration tests: PA_TEST_RANDOM_SEED=$PA_TEST_RANDOM_SEED, $PA_TEST_RANDOM_CASES per test (${PA_SAN_RANDOM_CASES:-8} under the sanitizers)"
    echo

    if want side && [ -n "${PA_WHEELS:-}" ]; then
        # FlashInfer compiles its kernels on first use: install and warm it up in
        # the background while the tests run.
        (python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
            "$PA_WHEELS"/*.whl && PYTHONPATH=/tmp/site FLASHINFER_CUDA_ARCH_LIST=9.0 MAX_JOBS=${PA_FI_JOBS:-8} \
            timeout -k 10 "$(fit "${PA_FI_WARM_SECONDS:-420}")" nice -n "${PA_FI_NICE:-0}" python3 benchmarks/side_by_side.py --warm-flashinfer \
            --fi-ready "$logs/fi-ready.txt") >"$logs/flashinfer-warm.log" 2>&1 &
        warm_pid=$!
    fi

    # Sanitizer filters (Criterion extglob on suite/test). Two tests are left out
    # everywhere: their time is the CPU reference (150 s each without a tool),
    # and their kernels run in the other tests. racecheck, whose cost grows with
    # every shared-memory access, runs a subset that still reaches every kernel.
    # The cache_offsets_past_32_bits tests are left out too: each takes up to 16
    # GiB of device memory (caches past 2^32 bytes), which 24 sanitized programs
    # beside each other cannot all have; the plain tests run them.
    FAR='decode_views/cache_offsets_past_32_bits|prefill_gpu/cache_offsets_past_32_bits|ragged_gpu/cache_offsets_past_32_bits|cache_ops/cache_offsets_past_32_bits'
    # The route walks too (cache_routes, prefill_routes, ragged_routes; decode_routes is
    # outside SAN_DECODE's list): some 2600 small launches over most of the library's kernel
    # instances, each instrumented on first use, in boxes that the programs without them
    # already outgrew (2026-11-27: 250 s). Their kernels run in the sanitized tests
    # above; interpret mode's bounds checks run every walk in CI; the plain GPU tests
    # run them. PA_SAN_FILTER_test_prefill='prefill_routes/*' (and so on) sanitizes them.
    WALKS='cache_routes/*|prefill_routes/*|ragged_routes/*'
    # A test that makes a CUDA call fail on purpose (an invalid device number: the pending error
    # the library must leave for its owner), which compute-sanitizer reports as an API error.
    API_ERR='gpu_basic/a_pending_cuda_error_is_left_for_its_owner'
    SAN_ALL="!(prefill_gpu/vllm_prefix_prefill_grid|ragged_gpu/device_plan_matches_host|$FAR|$WALKS|$API_ERR)"
    RACE_DECODE='@(decode_random/*|decode_graph/*|decode_device_checks/*|decode_long/mqa_f32_e5m2_window|decode_grid/head_size_32|decode_grid/head_size_128|decode_api/*|decode_batch_sizes/*|decode_features/lse*)'
    # memcheck/initcheck/synccheck on test_decode: the whole program outgrew a
    # 240 s box beside the others (2026-11-23); this subset reaches every
    # instance family (compile-time and runtime geometry, each layout, fp8,
    # features, graphs, batch sizes, the merge under PDL). PA_SAN_DECODE_FILTER='*' runs it all.
    SAN_DECODE=${PA_SAN_DECODE_FILTER:-'@(decode_views/strided_flash_and_query_stride|decode_views/query_stride_on_tensor_cores|decode_long/mqa_f32_e5m2_window|decode_layout/*|decode_grid/head_size_80|decode_grid/head_size_128|decode_graph/*|decode_fixed/*|decode_features/*|decode_device_checks/*|decode_api/*|decode_batch_sizes/*|decode_pdl/*|decode_random/*)'}
    RACE_PREFILL='@(prefill_random/*|prefill_gpu/smallest_cases|prefill_gpu/mixed_batch|prefill_gpu/graph_replay_reads_new_lengths|prefill_gpu/bad_device_data_skips_the_sequence|prefill_gpu/strided_and_unaligned_sources|prefill_gpu/prompt_attention_types|prefill_gpu/prompt_rows_with_no_visible_key_are_zeros|prefill_gpu/lse*|prefill_gpu/cache_only|prefill_gpu/cascade*|prefill_gpu/f32_queries|prefill_gpu/rejects_unsupported_head_size_without_launching|prefill_hopper*/*)'
    RACE_RAGGED='@(ragged_gpu/random_configurations|ragged_gpu/num_seqs_below_max|ragged_gpu/bad_device_lengths_are_skipped|ragged_gpu/soft_mask_value|ragged_gpu/odd_page_sizes|ragged_gpu/forced_kv_splits|ragged_gpu/graph_replay_with_new_batch|ragged_gpu/jax_grid|ragged_bad_gpu/*)'
    san_filter() { # tool program
        # PA_SAN_FILTER_<program> (say PA_SAN_FILTER_test_prefill) replaces the program's filters
        # below for every tool: a follow-up run over what an earlier one did not reach.
        local own
        own="PA_SAN_FILTER_$(basename "$2")"
        if [ -n "${!own:-}" ]; then
            echo "${!own}"
        elif [ "$1" = racecheck ]; then
            case "$(basename "$2")" in
            test_decode) echo "$RACE_DECODE" ;;
            test_prefill) echo "$RACE_PREFILL" ;;
            test_ragged) echo "$RACE_RAGGED" ;;
            *) echo "$SAN_ALL" ;;
            esac
        elif [ "$(basename "$2")" = test_decode ]; then
            echo "$SAN_DECODE"
        else
            echo "$SAN_ALL"
        fi
    }
    san_start() {
        san_t0=$(date +%s)
        san_pids=()
        for tool in ${PA_SAN_TOOLS:-memcheck racecheck initcheck synccheck}; do
            mkdir -p "$logs/$tool"
            for prog in "$BUILD"/tests/gpu/${PA_SAN_PROGRAMS:-test_*}; do
                [ -f "$prog" ] && [ -x "$prog" ] || continue # (a native build's test_X.p object dirs match too)
                PA_CRIT_JOBS=${PA_SAN_JOBS:-2} PA_CRIT_FILTER=$(san_filter "$tool" "$prog") \
                    run_prog "$tool" "$SAN_SECONDS" "$logs/$tool" "$prog" \
                    nice -n "${PA_SAN_NICE:-0}" env PA_TEST_RANDOM_CASES="${PA_SAN_RANDOM_CASES:-8}" ${PA_SAN_ENV:-} compute-sanitizer --tool "$tool" --error-exitcode=1 --target-processes all \
                    --log-file "$logs/$tool/$(basename "$prog").san.%p" >"$logs/$tool/$(basename "$prog").summary" 2>&1 &
                san_pids+=($!)
            done
        done
    }
    san_report() {
        wait "${san_pids[@]}"
        echo "## compute-sanitizer (${PA_SAN_TOOLS:-memcheck racecheck initcheck synccheck}; every program and tool side by side, ${SAN_SECONDS}s box each)"
        for v in $(compgen -v PA_SAN_FILTER_); do echo "$v='${!v}' (replaces the filters below)"; done
        echo "programs: ${PA_SAN_PROGRAMS:-test_*}; environment: ${PA_SAN_ENV:-(none)}; filters: memcheck/initcheck/synccheck '$SAN_ALL' (decode '$SAN_DECODE'); racecheck: decode '$RACE_DECODE', prefill '$RACE_PREFILL', ragged '$RACE_RAGGED', the rest all"
        echo '```'
        for tool in ${PA_SAN_TOOLS:-memcheck racecheck initcheck synccheck}; do
            cat "$logs/$tool"/*.summary
            cat "$logs/$tool"/*.san.* 2>/dev/null | grep -E 'ERROR SUMMARY: [1-9]|^========= (Error|Warning|Invalid|Race|Uninit|Barrier|Program hit)' |
                sed 's/\[[0-9]* hazards\]//' | sort | uniq -c | sort -rn | head -10
            echo "$tool: $(cat "$logs/$tool"/*.san.* 2>/dev/null | grep -c 'ERROR SUMMARY: 0 errors') processes with 0 errors," \
                "$(cat "$logs/$tool"/*.san.* 2>/dev/null | grep -cE 'ERROR SUMMARY: [1-9]') with errors," \
                "$(cat "$logs/$tool"/*.san.* 2>/dev/null | grep -cE 'RACECHECK SUMMARY: [1-9]') racecheck summaries with hazards"
        done
        echo "(took $(($(date +%s) - san_t0)) s)"
        echo '```'
    }
    # PA_SAN_BACKGROUND=1 runs the sanitizers beside the plain tests (faster, for
    # correctness runs; not while benchmarking).
    if want sanitize && [ "${PA_SAN_BACKGROUND:-0}" = 1 ]; then san_start; fi

    if want tests; then
        echo "## GPU tests (the programs side by side)"
        echo '```'
        t0=$(date +%s)
        test_pids=()
        for prog in "$BUILD"/tests/gpu/test_*; do
            [ -f "$prog" ] && [ -x "$prog" ] || continue # (a native build's test_X.p object dirs match too)
            # Beside the sanitizers, fewer jobs: 5 programs x 16 jobs plus 20
            # sanitized programs ran an 80 GB H100 out of memory once.
            PA_CRIT_JOBS=${PA_TEST_JOBS:-$([ "${PA_SAN_BACKGROUND:-0}" = 1 ] && echo 6)} \
                run_prog plain "${PA_TEST_SECONDS:-400}" "$logs" "$prog" >"$logs/$(basename "$prog").summary" 2>&1 &
            test_pids+=($!)
        done
        # The compact tiles and shape of 99 KiB devices (compute capability 8.6, 8.9, 12.x), which
        # an H100 takes under PAGEDATTN_SMEM_LIMIT=101376 (csrc/shared/launch_status.h; the tests
        # skip on it otherwise), plainly and under memcheck and racecheck, beside the programs.
        # Each program and setup its own run, the six side by side (3 tests, 2 jobs each): one after
        # the other, the two programs' boxes made the section up to 480 s, past the plain programs'.
        compact='@(prefill_gpu/compact_tiles_on_a_99_KiB_device|ragged_gpu/compact_slots_on_a_99_KiB_device|ragged_gpu/smem_limit_variable_lowers_the_devices_limit)'
        for tool in plain memcheck racecheck; do
            mkdir -p "$logs/compact-$tool"
            wrap=(env PAGEDATTN_SMEM_LIMIT=101376)
            [ $tool = plain ] || wrap+=(compute-sanitizer --tool "$tool" --error-exitcode=1 --target-processes all)
            for prog in test_prefill test_ragged; do
                PA_CRIT_FILTER=$compact PA_CRIT_JOBS=2 run_prog "99k-$tool" "${PA_COMPACT_SECONDS:-240}" \
                    "$logs/compact-$tool" "$BUILD/tests/gpu/$prog" "${wrap[@]}" >"$logs/compact-$tool-$prog.summary" 2>&1 &
                test_pids+=($!)
            done
        done
        wait "${test_pids[@]}"
        cat "$logs"/test_*.summary "$logs"/compact-{plain,memcheck,racecheck}-test_{prefill,ragged}.summary
        echo "(took $(($(date +%s) - t0)) s)"
        echo '```'
        save_out
    fi

    if want python; then
        # The package on torch CUDA tensors (test_gpu.py: every op family, the
        # caller's stream, a CUDA-graph replay), against this build's library.
        echo "## Python package (pytest python/tests, torch on CUDA) (at +$(($(date +%s) - T0)) s)"
        echo '```'
        (cd "$ROOT/python/tests" && PYTHONPATH="$ROOT/python" PAGEDATTN_LIB="$BUILD/libpagedattn.so" \
            box "${PA_PY_SECONDS:-600}" python3 -m pytest -q -rs -p no:cacheprovider . 2>&1 | tail -15)
        echo '```'
        save_out
    fi

    if want checks; then
        echo "## checks (at +$(($(date +%s) - T0)) s)"
        echo '```'
        for dt in f16 bf16 fp8_e4m3 fp8_e5m2; do box 60 $CLI check convert --dtype "$dt"; done
        # merge_attn_states: 4096 tokens x 32 heads x 128 in 16-byte chunks; head 100 in f16 one element a thread
        for dt in f16 bf16 f32; do box 60 $CLI check merge --dtype "$dt"; done
        box 60 $CLI check merge --dtype f16 --seqs 1000 --heads 8/8 --head-size 100
        for args in "" "--layout vllm --dtype f16" "--layout hnd --cache-dtype fp8_e4m3 --alibi" \
            "--window 100 --soft-cap 30 --ctx 2049"; do
            box 120 $CLI check decode $args
        done
        box 120 $CLI check prefill
        box 120 $CLI check prefill --variant cross --seqs 4 --qlen 200 --ctx 1500 --dtype bf16
        box 120 $CLI check ragged
        # attention sinks (gpt-oss: 64/8 heads, head 64; a window of 128 on alternate layers)
        box 120 $CLI check decode --preset gpt-oss --dtype bf16 --layout nhd --ctx 3000 --variant all
        box 120 $CLI check decode --preset gpt-oss --dtype bf16 --layout nhd --ctx 3000 --window 128
        box 120 $CLI check prefill --preset gpt-oss --dtype bf16 --seqs 2 --ctx 1024
        box 120 $CLI check prefill --preset gpt-oss --dtype bf16 --variant context --layout nhd --seqs 2 \
            --qlen 256 --ctx 1024
        box 120 $CLI check ragged --preset gpt-oss --dtype bf16 --seqs 2 --qlen 128 --decodes 6 --ctx 2000
        # head 96 over fp8 caches (Phi-3.5-mini), on tensor cores since 2026-11-29: both layouts
        box 120 $CLI check decode --preset phi3.5-mini --dtype bf16 --cache-dtype fp8_e4m3 --layout nhd --variant all
        box 120 $CLI check decode --preset phi3.5-mini --cache-dtype fp8_e5m2 --layout vllm --ctx 3000
        # head 192 (Nemotron-4 340B at TP 8: group 12, two head blocks), on tensor cores since 2026-11-30
        box 120 $CLI check decode --preset nemotron4-340b-tp8 --dtype bf16 --layout nhd --variant all
        box 120 $CLI check decode --preset nemotron4-340b-tp8 --dtype bf16 --cache-dtype fp8_e4m3 --layout vllm --ctx 3000
        # head 64 with two head blocks (Falcon-40B at TP 8: group 16; Falcon-7B: 71 heads over one KV
        # head, five CTAs of 15), on tensor cores since 2026-11-30; fp8 over flash layouts on the long tile
        box 120 $CLI check decode --preset falcon-40b-tp8 --dtype bf16 --layout nhd --variant all
        box 120 $CLI check decode --preset falcon-40b-tp8 --dtype bf16 --cache-dtype fp8_e4m3 --layout hnd --ctx 3000
        box 120 $CLI check decode --preset falcon-7b --dtype f16 --cache-dtype fp8_e5m2 --layout nhd --variant all
        box 120 $CLI check baseline
        box 120 $CLI check baseline --layout nhd --dtype bf16 --window 100 --soft-cap 30 --ctx 2049
        box 120 $CLI check baseline --layout hnd --cache-dtype fp8_e4m3 --alibi --heads 8/1 --head-size 256
        box 120 $CLI check baseline --preset gpt-oss --dtype bf16 --layout nhd --ctx 3000 --seqs 2
        # fp8 scales per KV head (pa_kv_cache.scales_per_head, 2026-12-04): the CLI's problems give each
        # KV head its own k_scale and v_scale and upload the whole arrays; decode (every entry, GQA 4
        # and 7), context attention (and the FP8 path where the Hopper kernel runs), a mixed ragged
        # step, the baseline's cases, and reshape_and_cache in the loop below
        box 120 $CLI check decode --layout hnd --cache-dtype fp8_e4m3 --scales-per-head --variant all
        box 120 $CLI check decode --preset qwen2.5-7b --dtype bf16 --cache-dtype fp8_e5m2 --layout nhd --ctx 3000 \
            --scales-per-head
        box 120 $CLI check prefill --variant context --layout nhd --dtype bf16 --cache-dtype fp8_e5m2 --seqs 2 \
            --qlen 256 --ctx 1024 --scales-per-head
        if $CLI info --json | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("prefill_hopper") else 1)'; then
            PAGEDATTN_PREFILL_PATH=hopper-fp8 box 120 $CLI check prefill --variant context --layout nhd --dtype bf16 \
                --cache-dtype fp8_e4m3 --seqs 2 --qlen 256 --ctx 1024 --scales-per-head
        fi
        box 120 $CLI check ragged --dtype bf16 --cache-dtype fp8_e4m3 --seqs 2 --qlen 128 --decodes 6 --ctx 2000 \
            --scales-per-head
        box 120 $CLI check baseline --layout nhd --dtype bf16 --cache-dtype fp8_e4m3 --scales-per-head
        for layout in vllm nhd hnd combined; do
            box 60 $CLI check cache --layout "$layout" --seqs 64 --qlen 37
            box 60 $CLI check cache --layout "$layout" --cache-dtype fp8_e4m3 --seqs 7 --qlen 113
            box 60 $CLI check cache --layout "$layout" --cache-dtype fp8_e5m2 --seqs 7 --qlen 113 --scales-per-head
        done
        # swap_blocks out and in, copy_blocks over layers: byte for byte, at the bench section's size too
        for args in "--variant swap-out --layout hnd --block-size 32" "--variant swap-in --layout combined" \
            "--variant copy --layers 32 --seqs 4 --ctx 256" "--variant swap-out --seqs 16 --ctx 4096 --layout nhd" \
            "--variant swap-in --seqs 16 --ctx 4096 --layout nhd" "--variant copy --seqs 16 --ctx 4096 --layout nhd"; do
            box 120 $CLI check blocks $args
        done
        echo '```'
        save_out
    fi

    if want serve; then
        echo "## serve_loop (examples/serve_loop.c): continuous batching on the GPU vs unpaged attention (at +$(($(date +%s) - T0)) s)"
        echo '```'
        for args in "" "--dtype bf16" "--cache-dtype fp8_e4m3" "--window 40 --soft-cap 30"; do
            echo "\$ serve_loop --device both $args"
            box 120 env LD_LIBRARY_PATH="$LIBS_ENV" "$BUILD/serve_loop" --device both $args 2>&1 | tail -4
        done
        echo '```'
        save_out
    fi

    if want sanitize; then
        [ "${PA_SAN_BACKGROUND:-0}" = 1 ] || san_start
        san_report
        save_out
    fi

    if want side; then
        echo "## side by side (benchmarks/side_by_side.py; at +$(($(date +%s) - T0)) s)"
        fi_ready=()
        if [ -n "${warm_pid:-}" ]; then
            wait "$warm_pid"
            echo "flashinfer warm-up: $(tail -1 "$logs/flashinfer-warm.log");" \
                "modules ready: $(tr '\n' ',' <"$logs/fi-ready.txt" 2>/dev/null)"
            export PYTHONPATH=/tmp/site
            fi_ready=(--fi-ready "$logs/fi-ready.txt")
        fi
        PA_COMMIT="$commit" FLASHINFER_CUDA_ARCH_LIST=9.0 box "${PA_SIDE_SECONDS:-300}" python3 benchmarks/side_by_side.py \
            --lib "$BUILD/libpagedattn.so" --out "$logs" "${fi_ready[@]}" ${PA_SIDE_ARGS:-} >"$logs/side_by_side.log" 2>&1 || echo "side_by_side.py: exit $? (see its log)"
        cat "$logs/side_by_side.md" 2>/dev/null || tail -20 "$logs/side_by_side.log"
        # Its bar charts (scripts/plot reads the report as it stands; no GPU time of note).
        if [ -s "$logs/side_by_side.json" ]; then
            box 60 python3 scripts/plot "$logs/side_by_side.json" --out "$logs/plots" ||
                echo "(charts not made here: run scripts/plot side_by_side.json where matplotlib is installed)"
            # The Hopper prefill kernel's per-item cost, fitted on its one-CTA-per-item rows, and the
            # persistent grid's measured rate beside what that fit predicts for it.
            box 30 python3 scripts/hopper_item_overhead.py "$logs/side_by_side.json" || true
        fi
        save_out
    fi

    if want bench; then
        echo "## benchmarks (pagedattn bench) (at +$(($(date +%s) - T0)) s)"
        echo '```'
        box 60 $CLI bench convert --dtype bf16 --json "$json"
        # merge_attn_states at 8192 tokens x 32 heads x 128: two rows read, one written (the copy roof)
        for dt in bf16 f16; do box 60 $CLI bench merge --dtype "$dt" --json "$json"; done
        box 60 $CLI bench cache --json "$json"
        # The cache ops at serving sizes, against their roofs (issue 15 item 3).
        # reshape_and_cache for a prefill step: 8 x 2048 new tokens, Llama-3-8B's 8 KV heads x 128,
        # every layout, bf16 and fp8 (the copy roof; K and V read once and written once).
        for lc in "vllm bf16" "nhd bf16" "hnd bf16" "combined bf16" "vllm fp8_e4m3" "nhd fp8_e4m3"; do
            set -- $lc
            box 60 $CLI bench cache --seqs 8 --qlen 2048 --heads 32/8 --head-size 128 --dtype bf16 \
                --layout "$1" --cache-dtype "$2" --json "$json" || echo "(failed: rc $?)"
        done
        # swap_blocks: 16 sequences x 4K tokens of one layer (4096 blocks of 32 KiB, K and V) out to
        # pinned host memory and back, against one large pinned copy each way; copy_blocks: the
        # same 4096 pairs in one layer, and a fork's 64 pairs in 32 layers (the copy roof).
        for v in swap-out swap-in copy; do
            box 120 $CLI bench blocks --variant $v --seqs 16 --ctx 4096 --heads 32/8 --head-size 128 \
                --dtype bf16 --layout nhd --json "$json" || echo "(failed: rc $?)"
        done
        box 60 $CLI bench blocks --variant copy --layers 32 --seqs 4 --ctx 256 --heads 32/8 --head-size 128 \
            --dtype bf16 --layout vllm --json "$json" || echo "(failed: rc $?)"
        for preset in ${PA_BENCH_PRESETS-llama3-8b}; do
            box 240 $CLI bench --preset "$preset" --json "$json"
        done
        # The Hopper prefill kernel's benchmarks (below, after the decode sweeps; the short plan runs
        # the items no GPU has run yet here, before them, since its deadline cuts the section's end).
        hopper=0
        $CLI info --json | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin).get("prefill_hopper") else 1)' &&
            hopper=1
        ctx_paths=${PA_BENCH_CONTEXT_PATHS:-hopper-fp8 hopper mma}
        bench_prompts() { # head sizes
            # Prompt attention at each padded head size the Hopper kernel serves, on both paths
            # (heads 192 and 256: 64-key tiles since 2026-11-30, the budgets' predictions to check).
            # Since 2026-12-01 the lazy softmax reference and mma.sync's new-key copies by pointer
            # steps: the budget predicts mma.sync at head 128 about 329 TFLOP/s (286 measured on
            # the H100 before; budget-notes/lazy-softmax-reference-2026-12-01.md,
            # prefill-new-key-copies-2026-12-01.md), and the Hopper consumer's tile 12.6% shorter.
            local hs path
            for hs in "$@"; do
                for path in hopper mma; do
                    echo "prompt, head $hs, PAGEDATTN_PREFILL_PATH=$path:"
                    PAGEDATTN_PREFILL_PATH=$path box 120 $CLI bench prefill --seqs 4 --ctx 4096 --heads 32/8 \
                        --head-size $hs --dtype bf16 || echo "(failed: rc $?)"
                done
            done
        }
        bench_context() { # paths
            # Context attention (512 new tokens over a 4K prefix) on each cache kind it serves, then
            # the same on mma.sync: issue 14 asks every layout and fp8 within 10% of the flash one.
            # hopper-fp8: the FP8 path (e4m3 wgmma) on the e4m3 caches, against the same on hopper.
            local path lc layout cd
            for path in "$@"; do
                for lc in "nhd bf16" "vllm bf16" "nhd fp8_e4m3" "vllm fp8_e4m3"; do
                    read -r layout cd <<<"$lc"
                    [ "$path" = hopper-fp8 ] && [ "$cd" = bf16 ] && continue
                    echo "context on $layout / $cd, PAGEDATTN_PREFILL_PATH=$path:"
                    PAGEDATTN_PREFILL_PATH=$path box 60 $CLI bench prefill --variant context --seqs 4 \
                        --ctx 4096 --qlen 512 --heads 32/8 --head-size 128 --dtype bf16 --layout "$layout" \
                        --cache-dtype "$cd" || echo "(failed: rc $?)"
                done
            done
        }
        bench_context_wide() {
            # Heads 256 (Gemma 2 and 3) and 192 context over 16-bit and fp8 flash caches on both
            # paths: the Hopper kernel serves them since 2026-11-30 (budget notes: about 39% and 32%
            # of 989 TFLOP/s at head 256; hopper-head192-2026-11-30.md at 192).
            local hs cd path
            for hs in 256 192; do
                for cd in bf16 fp8_e4m3; do
                    for path in hopper mma; do
                        echo "context at head $hs on nhd / $cd, PAGEDATTN_PREFILL_PATH=$path:"
                        PAGEDATTN_PREFILL_PATH=$path box 60 $CLI bench prefill --variant context --seqs 4 \
                            --ctx 4096 --qlen 512 --heads 32/8 --head-size $hs --dtype bf16 --layout nhd \
                            --cache-dtype "$cd" || echo "(failed: rc $?)"
                    done
                done
            done
        }
        if [ "$hopper" = 1 ] && [ "${PA_PLAN:-}" = short ]; then
            # What no GPU has run yet (prompts and context at heads 256 and 192, the FP8 path) before
            # the decode sweeps, most of which earlier leases measured: the deadline cuts those.
            bench_prompts 256 192
            [[ " $ctx_paths " == *" hopper-fp8 "* ]] && bench_context hopper-fp8
            bench_context_wide
        fi
        # The decode merge with and without programmatic dependent launch (PAGEDATTN_DECODE_PDL=0 is
        # the plain launch): the recommended entry and v2 at a small and a large batch.
        for shape in "--seqs 1 --ctx 4096" "--seqs 64 --ctx 4096" "--seqs 1 --ctx 32768"; do
            for pdl in 1 0; do
                for v in auto v2; do
                    echo "decode $shape --variant $v, PAGEDATTN_DECODE_PDL=$pdl:"
                    PAGEDATTN_DECODE_PDL=$pdl box 60 $CLI bench decode $shape --heads 32/8 --head-size 128 \
                        --dtype bf16 --layout nhd --variant $v || echo "(failed: rc $?)"
                done
            done
        done
        # fp8 decode at head 64 (53% recommended / 58% v1 of the copy roof at 64 x 4K, 2026-11-27, on
        # 64-token tiles at 6 CTAs an SM). Since 2026-11-28 it runs 128-token tiles at 4 CTAs an SM
        # (128 KiB of tiles in flight, was 96) and whole fp8 tiles skip their masks: 30% fewer warp
        # instructions a byte, so at the old IPC the budget predicts v1 about 80% and the recommended
        # entry about 60% (budget-notes/decode-long-tile-2026-11-28.md, decode-fp8-masks-2026-11-28.md).
        # If the IPC falls with 4 warps a scheduler instead of 6, the figures fall short of that; the
        # sweep over the batch shows how v1 and the recommended entry fill the SMs.
        for seqs in 32 64 128 256; do
            for v in v1 auto; do
                echo "decode fp8 head 64, --seqs $seqs --variant $v:"
                box 60 $CLI bench decode --seqs $seqs --ctx 4096 --heads 32/8 --head-size 64 --dtype bf16 \
                    --cache-dtype fp8_e4m3 --layout nhd --variant $v || echo "(failed: rc $?)"
            done
        done
        # The recommended entry's smallest split (PAGEDATTN_DECODE_MIN_SPLIT, 256 by default) against a
        # CTA's own cost at small heads: at 64 x 4K a 256-token split gives an fp8 head-32 or head-64
        # CTA two 128-token tiles, and the budget puts the CTA's cost beside its loop's (fp8 head 32:
        # 32% of the copy roof with it, 44% on the common path; head 64: 58%, 75%; v1, where it is
        # spread over the whole sequence, 100%: budget-notes/decode-head32-mma-2026-11-30.md). Larger
        # splits cut that cost a tile but leave a batch of one fewer CTAs; both ends, to decide the
        # rule (full plan only: a short lease's bench section is full).
        # Both plans: the H200 prediction (budget-decode-2026-12-02.md). The same instructions a tile
        # need 1.43x the issue rate for the same fraction of an H200's roof; the recommended entry's
        # fp8 head-128 tile at 64 x 4K, its split's CTA cost included, needs 2.46 IPC for 90% of it
        # (78% at the 2.14 measured on the H100), v1's 1.47, and with 1024-token splits the CTA cost
        # a tile falls to a quarter. Predicted: v1 ahead of the recommended entry by more than the
        # H100's 6 points, and 1024-token splits worth more than the H100's one point.
        for ms in 256 1024; do
            echo "decode fp8 head 128 --seqs 64 --ctx 4096 --variant auto, PAGEDATTN_DECODE_MIN_SPLIT=$ms:"
            PAGEDATTN_DECODE_MIN_SPLIT=$ms box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads 32/8 \
                --head-size 128 --dtype bf16 --cache-dtype fp8_e4m3 --layout nhd --variant auto ||
                echo "(failed: rc $?)"
        done
        echo "decode fp8 head 128 --seqs 64 --ctx 4096 --variant v1:"
        box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads 32/8 --head-size 128 --dtype bf16 \
            --cache-dtype fp8_e4m3 --layout nhd --variant v1 || echo "(failed: rc $?)"
        if [ "${PA_PLAN:-}" != short ]; then
            for hs in 32 64; do
                for shape in "--seqs 64 --ctx 4096" "--seqs 1 --ctx 4096" "--seqs 1 --ctx 32768"; do
                    for ms in 256 1024; do
                        echo "decode fp8 head $hs $shape --variant auto, PAGEDATTN_DECODE_MIN_SPLIT=$ms:"
                        PAGEDATTN_DECODE_MIN_SPLIT=$ms box 60 $CLI bench decode $shape --heads 32/8 \
                            --head-size $hs --dtype bf16 --cache-dtype fp8_e4m3 --layout nhd --variant auto ||
                            echo "(failed: rc $?)"
                    done
                done
            done
        fi
        # The same kernel (same geometry, same instructions a tile) over HND: there a KV head's page is
        # 16 x 64 contiguous bytes, in NHD each token's row of a head is 64 bytes with the other heads'
        # rows between. The shapes whose token rows are short fell furthest from the roof (fp8 head 64:
        # 64 B, 53%; bf16 head 64 and fp8 head 128: 128 B, 71-72%; 256-512 B rows: 86-95%). If HND
        # reaches the 16-bit shapes' 86-95% here, DRAM access granularity bounds NHD, not the kernel.
        for layout in nhd hnd; do
            for shape in "--head-size 64 --dtype bf16 --cache-dtype fp8_e4m3" "--head-size 64 --dtype bf16" \
                "--head-size 128 --dtype bf16 --cache-dtype fp8_e4m3"; do
                for v in v1 auto; do
                    echo "decode $shape --layout $layout --variant $v (64 x 4K, 32/8):"
                    box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads 32/8 $shape --layout $layout \
                        --variant $v || echo "(failed: rc $?)"
                done
            done
        done
        # Group 16 over a bf16 cache, v1 against the recommended entry (88% / 73% of the copy roof on
        # 2026-11-27): since 2026-11-29 the splits' partial rows are 16-bit, which halves their
        # traffic (13% of the KV bytes there, 6.4% now); predicted about 76.5% for the recommended
        # entry (budget-notes/decode-partials-16bit-2026-11-29.md; the fp8 lines below: 54% to about 58%).
        for v in v1 auto; do
            echo "decode bf16 --heads 64/4 --variant $v (64 x 4K, head 128):"
            box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads 64/4 --head-size 128 --dtype bf16 \
                --layout nhd --variant $v || echo "(failed: rc $?)"
        done
        # Head 96 (Phi-3.5-mini's 32/32) over fp8 beside bf16: fp8 left the CUDA-core kernel on
        # 2026-11-29; the budget allows 64% at the measured 2.14 IPC with the CTA overhead, 81% on the
        # common path (bf16 head 96: 100%; budget-notes/decode-head96-fp8-mma-2026-11-29.md).
        for cd in bf16 fp8_e4m3; do
            for v in v1 auto; do
                echo "decode head 96 --cache-dtype $cd --variant $v (64 x 4K, 32/32):"
                box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads 32/32 --head-size 96 --dtype bf16 \
                    --cache-dtype $cd --layout nhd --variant $v || echo "(failed: rc $?)"
            done
        done
        # Head 192 (Nemotron-4 340B, 96/8: group 12, two head blocks) on tensor cores since
        # 2026-11-30 (it ran the runtime-shaped CUDA-core kernel): 16- and 32-token tiles of 6 KiB, the
        # budget's predictions in budget-notes/decode-head192-mma-2026-11-30.md.
        # (v1 beside the recommended entry at 32/8 bf16 only: a short lease's bench section is full)
        for run in "bf16 32/8 v1" "bf16 32/8 auto" "fp8_e4m3 32/8 auto" "bf16 96/8 auto" "fp8_e4m3 96/8 auto"; do
            set -- $run
            echo "decode head 192 --cache-dtype $1 --heads $2 --variant $3 (64 x 4K, bf16):"
            box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads $2 --head-size 192 \
                --dtype bf16 --cache-dtype $1 --layout nhd --variant $3 || echo "(failed: rc $?)"
        done
        # Heads 80 (Phi-2, 32/32), 112, 32 and 120 on tensor cores since 2026-11-30 (they ran the runtime-shaped
        # CUDA-core kernel): 16-bit padded rows with an odd last k-step and m-block, fp8 a quarter block
        # (budget-notes/decode-heads80-112-mma-2026-11-30.md). Heads 32 and 120 likewise (head 32's 4 KiB
        # tiles, head 120's last k-step of 8 dims: budget-notes/decode-head32-mma-2026-11-30.md).
        # Head 64 at group 16 (Falcon-40B's 128/8) takes two head blocks since 2026-11-30 (it ran the
        # CUDA-core kernel): budget-notes/decode-head64-group16-mma-2026-11-30.md.
        for run in "80 32/32 bf16" "112 32/8 bf16" "80 32/32 fp8_e4m3" "32 32/8 bf16" "120 32/8 bf16" \
            "64 128/8 bf16" "64 128/8 fp8_e4m3"; do
            set -- $run
            echo "decode head $1 --heads $2 --cache-dtype $3 --variant auto (64 x 4K, bf16):"
            box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads $2 --head-size $1 --dtype bf16 \
                --cache-dtype $3 --layout nhd --variant auto || echo "(failed: rc $?)"
        done
        # fp8 at head 128 and group 16, e4m3 against e5m2 (e5m2 converts by byte permutes since
        # 2026-11-28: 31 fewer warp instructions a tile per warp; whole fp8 tiles skip their masks).
        # Since 2026-12-01 the tensor-core kernel's softmax reference is lazy, so a warp skips O's
        # rescale in almost every tile (with the exact max it ran in 68-100% of a split's tiles): at
        # e4m3 group 16 the budget predicts v1 69% -> about 73% and the recommended entry 54% -> about
        # 57%, if the IPC holds (budget-notes/decode-lazy-reference-2026-12-01.md).
        for cd in fp8_e4m3 fp8_e5m2; do
            for heads in 32/8 64/4; do
                for v in v1 auto; do
                    echo "decode fp8 --cache-dtype $cd --heads $heads --variant $v (64 x 4K, head 128):"
                    box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads $heads --head-size 128 --dtype bf16 \
                        --cache-dtype $cd --layout nhd --variant $v || echo "(failed: rc $?)"
                done
            done
        done
        # fp8 scales per KV head (--scales-per-head, 2026-12-04) beside the one scale, at the same shape
        # and data: what loading each KV head's k_scale and v_scale instead of one pair costs (the second
        # row ends "(fp8 scales per KV head)"; not in the JSON, like the fp8 rows around it: scripts/plot
        # keeps the last row of a point, so the two would be one there).
        for sph in "" "--scales-per-head"; do
            echo "decode fp8 --cache-dtype fp8_e4m3 ${sph:-(one scale)} --variant auto (64 x 4K, 32/8, head 128):"
            box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads 32/8 --head-size 128 --dtype bf16 \
                --cache-dtype fp8_e4m3 --layout nhd --variant auto $sph || echo "(failed: rc $?)"
        done
        # fp8 at head 128 over vLLM's layout and at head 256 (Gemma-2's 16/8) over NHD: built for 4 CTAs
        # an SM since 2026-11-29 (3 before; 128 registers, same instructions; NHD at head 128 already
        # ran 4). The budget's bound does not move; a fourth warp a scheduler is what may.
        for shape in "--layout vllm --heads 32/8 --head-size 128" "--layout nhd --heads 16/8 --head-size 256"; do
            for v in v1 auto; do
                echo "decode fp8 $shape --variant $v (64 x 4K):"
                box 60 $CLI bench decode --seqs 64 --ctx 4096 $shape --dtype bf16 --cache-dtype fp8_e4m3 \
                    --variant $v || echo "(failed: rc $?)"
            done
        done
        # Attention sinks (gpt-oss's shape: 64/8 heads, head 64, bf16) with and without: the
        # budget notes (sinks-2026-11-29.md, ragged-sinks-2026-11-29.md) predict a load's latency
        # at each one-split decode CTA's and each prefill item's end, about 0.2-0.3 us, and 0.8%
        # more instructions in the ragged mixed step; nothing in the tile loops.
        for sk in "" "--sinks"; do
            for v in v1 auto; do
                echo "decode gpt-oss shape $sk --variant $v (64 x 4K):"
                box 60 $CLI bench decode --seqs 64 --ctx 4096 --heads 64/8 --head-size 64 --dtype bf16 \
                    --layout nhd --variant $v $sk || echo "(failed: rc $?)"
            done
            echo "prefill gpt-oss shape $sk (4 x 4K prompts):"
            box 60 $CLI bench prefill --seqs 4 --ctx 4096 --heads 64/8 --head-size 64 --dtype bf16 $sk \
                || echo "(failed: rc $?)"
            echo "ragged gpt-oss shape $sk (4 x 512 prefill + 60 decodes at 4K):"
            box 120 $CLI bench ragged --seqs 4 --qlen 512 --decodes 60 --ctx 4096 --heads 64/8 --head-size 64 \
                --dtype bf16 $sk || echo "(failed: rc $?)"
        done
        # Issue 14's ragged goal: the mixed step (4 x 512 prefill + 60 decodes at 4K) in one launch,
        # then its prefill and decode parts as separate launches; the sum of the parts is the bar.
        for part in "--seqs 4 --qlen 512 --decodes 60" "--seqs 4 --qlen 512" "--seqs 60 --qlen 1"; do
            echo "ragged $part:"
            box 120 $CLI bench ragged $part --ctx 4096 --heads 32/8 --head-size 128 --dtype bf16 \
                || echo "(failed: rc $?)"
        done
        # The Hopper prefill kernel, where this device and build run it, against mma.sync (not in
        # the JSON: its rows would carry the same names as the mma.sync kernel's).
        if [ "$hopper" = 1 ]; then
            if [ "${PA_PLAN:-}" = short ]; then
                # (the short plan ran heads 256 and 192 and the FP8 path above)
                bench_prompts 128 96 64
                bench_context ${ctx_paths//hopper-fp8/}
            else
                bench_prompts 128 96 64 256 192
                bench_context $ctx_paths
                bench_context_wide
            fi
        fi
        echo '```'
        echo "## plots"
        echo '```'
        box 60 python3 scripts/plot "$json" --out "$logs/plots" || echo "(plots not made here: run scripts/plot $json where matplotlib is installed)"
        echo '```'
        save_out
    fi

    if want ncu && command -v ncu >/dev/null; then
        echo "## ncu: DRAM throughput of decode, tensor-pipe use of prefill (at +$(($(date +%s) - T0)) s)"
        echo '```'
        # Every profiled run with --clock-control none: by default ncu locks the card at its base
        # clocks, which changes its settings (the lease's rules ask us to measure the card as found)
        # and makes its durations disagree with the bench section's event timings at boost clocks.
        # smsp__inst_executed.sum and the IPC: what scripts/budget.py's calibrated column needs
        m=dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__inst_executed.avg.per_cycle_active,sm__cycles_elapsed.avg.per_second
        # bf16 head 128 NHD runs decode_mma_kernel since 2026-11-23 (the split kernel before); with
        # the merge kernel after each (3 of each): run 12's recommended entry took 418 us at 64 x 4K
        # where ncu gave its split kernel 395-400 us and v1 ran in 386, so the merge and the gap
        # before it cost about 20 us there; this says how much of it is the merge kernel itself.
        ncu_run decode && box "${PA_NCU_SECONDS:-150}" ncu --clock-control none --metrics "$m" -k regex:'decode_(split|mma|merge)_kernel' --launch-skip 4 --launch-count 6 --csv \
            $CLI bench decode --seqs 64 --ctx 4096 --heads 32/8 --head-size 128 --dtype bf16 --layout nhd \
            >"$logs/ncu-decode.csv" 2>"$logs/ncu-decode.err"
        # (mma.sync asked for: AUTO sends prompts to the Hopper kernel on sm_90a)
        ncu_run prefill && PAGEDATTN_PREFILL_PATH=mma box "${PA_NCU_SECONDS:-150}" ncu --clock-control none --metrics "$m" -k regex:prefill_mma_kernel --launch-skip 2 --launch-count 3 --csv \
            $CLI bench prefill --seqs 4 --ctx 4096 --heads 32/8 --head-size 128 --dtype bf16 \
            >"$logs/ncu-prefill.csv" 2>"$logs/ncu-prefill.err"
        # The Hopper kernel: wgmma's tensor-pipe counters, by the names this ncu lists for the chip
        # (sm__pipe_tensor_op_gmma_cycles_active read n/a on an H100 with ncu 2025.3, 2026-11-27):
        # every tensor-pipe metric it has, as a percentage of peak where it counts cycles.
        ncu --query-metrics --chip gh100 >"$logs/ncu-metrics-gh100.txt" 2>&1
        mh=$(awk '{print $1}' "$logs/ncu-metrics-gh100.txt" | grep -E '^sm__(pipe|inst_executed_pipe)_tensor' | sort -u |
            awk '{print $1 (/cycles_active/ ? ".avg.pct_of_peak_sustained_active" : ".sum")}' | tr '\n' ',')
        mh=${mh}gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
        ncu_run hopper && PAGEDATTN_PREFILL_PATH=hopper box "${PA_NCU_SECONDS:-150}" ncu --clock-control none --metrics "$mh" -k regex:prefill_wgmma_kernel --launch-skip 2 \
            --launch-count 3 --csv $CLI bench prefill --seqs 4 --ctx 4096 --heads 32/8 --head-size 128 --dtype bf16 \
            >"$logs/ncu-prefill-hopper.csv" 2>"$logs/ncu-prefill-hopper.err"
        # The FP8 path: context attention over an e4m3 cache (its only shape), QGMMA on the same pipe.
        ncu_run fp8 && [ "${PA_NCU_FP8:-1}" = 1 ] && PAGEDATTN_PREFILL_PATH=hopper-fp8 box "${PA_NCU_SECONDS:-150}" ncu --clock-control none --metrics "$mh" -k regex:prefill_wgmma_kernel \
            --launch-skip 2 --launch-count 3 --csv $CLI bench prefill --variant context --seqs 4 --ctx 4096 \
            --qlen 512 --heads 32/8 --head-size 128 --dtype bf16 --layout nhd --cache-dtype fp8_e4m3 \
            >"$logs/ncu-prefill-hopper-fp8.csv" 2>"$logs/ncu-prefill-hopper-fp8.err"
        # Where the Hopper prompt's clocks go. Run 12 (b=4 x 4K causal, 32/8, one CTA an SM) took about
        # 4200-4700 clocks a key tile at head 128 and 2900-3300 at head 64, against in-step bounds near
        # 2000-2200 and 1060: about 2000 clocks a tile unexplained at both head sizes, which points at
        # something both share (the producer's copies, K/V re-read from L2 by every row block, the ring's
        # depth) more than at the softmax. The warp states (stall reasons), the schedulers' issue and
        # the memory traffic of one launch at each head size say which.
        if ncu_run stalls; then
            for hs in 128 64; do
                PAGEDATTN_PREFILL_PATH=hopper box "${PA_NCU_SECONDS:-150}" ncu --clock-control none --print-details all \
                    --section SpeedOfLight --section WarpStateStats \
                    --section SchedulerStats --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
                    --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats \
                    -k regex:prefill_wgmma_kernel --launch-skip 2 --launch-count 1 \
                    $CLI bench prefill --seqs 4 --ctx 4096 --heads 32/8 --head-size $hs --dtype bf16 \
                    >"$logs/ncu-prefill-hopper-stalls-h$hs.txt" 2>"$logs/ncu-prefill-hopper-stalls-h$hs.err"
                echo "ncu-prefill-hopper-stalls-h$hs.txt (warp states, head $hs):"
                grep -iE "Stall|Warp Cycles|Issued Warp|Eligible|No Eligible|Active Warps|L2 Hit|Mem Busy|Max Bandwidth|DRAM Throughput|Duration" \
                    "$logs/ncu-prefill-hopper-stalls-h$hs.txt" | head -40
            done
        fi
        # Why decode at head 64 trails head 128 with the same 16 KiB tiles, the same CTAs an SM and the
        # same warp instructions a tile (budget-decode-2026-11-29.md): on 2026-11-27 v1 reached 79% of
        # the copy roof at head 64 and 93% at head 128 (GQA 32/8, b=64 x 4K, bf16, NHD), FlashInfer 85%
        # and 96%. A head-64 token row is 128 bytes with the next token 1 KiB on (256 and 2 KiB at head
        # 128), and a 64-token tile spans four pages where head 128's 32 tokens span two. v1 has one
        # CTA per sequence and KV head, so neither splits nor the merge are in it. The memory tables
        # (sectors a request, L2 hit rates, DRAM throughput) and the warp states at both head sizes
        # say whether the loss is in the DRAM's access pattern or in the CTA's latency.
        if ncu_run decode64; then
            for hs in 128 64; do
                box "${PA_NCU_SECONDS:-150}" ncu --clock-control none --print-details all --section SpeedOfLight \
                    --section MemoryWorkloadAnalysis \
                    --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy \
                    --section LaunchStats -k regex:decode_mma_kernel --launch-skip 2 --launch-count 1 \
                    $CLI bench decode --variant v1 --seqs 64 --ctx 4096 --heads 32/8 --head-size $hs --dtype bf16 \
                    --layout nhd >"$logs/ncu-decode-v1-h$hs.txt" 2>"$logs/ncu-decode-v1-h$hs.err"
                echo "ncu-decode-v1-h$hs.txt (memory and warp states, head $hs):"
                grep -iE "Stall|Warp Cycles|Eligible|Active Warps|Achieved Occupancy|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|DRAM Throughput|Memory Throughput|Duration" \
                    "$logs/ncu-decode-v1-h$hs.txt" | head -40
            done
        fi
        for f in "$logs/ncu-decode.csv" "$logs/ncu-prefill.csv" "$logs/ncu-prefill-hopper.csv" \
            "$logs/ncu-prefill-hopper-fp8.csv"; do
            [ -s "$f" ] || continue
            echo "$(basename "$f")"
            python3 scripts/ncu_rows.py <"$f"
        done
        echo '```'
        save_out
    fi

    # What the deadline left out, in one place: the follow-up call's list. (A skipped ncu or
    # side-by-side run's line went into that run's own output file: this is where it shows.)
    if [ -s "$logs/deadline.txt" ]; then
        echo "## deadline: PA_DEADLINE_S=$DEADLINE; $(grep -c 'skipped (deadline' "$logs/deadline.txt") skipped, $(grep -c '^cut (deadline' "$logs/deadline.txt") cut short"
        echo '```'
        cat "$logs/deadline.txt"
        echo '```'
    fi
} 2>&1 | tee "$report" ${OUT:+"$OUT/$(basename "$report")"}
if [ -n "${OUT:-}" ]; then
    cp "$report" "$OUT"/ 2>/dev/null
    save_out
fi
echo "report: $report (the whole check took $(($(date +%s) - T0)) s)"
