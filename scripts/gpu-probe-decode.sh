#!/usr/bin/env bash
# On a GPU machine: where the decode entries' time goes. For each entry (v1, v2,
# auto) and shape, ncu's duration, DRAM throughput, active warps and executed
# instructions of every decode kernel launch (split and merge separately), at the
# clocks the card runs at (--clock-control none); then the CLI's own timings for
# MHA and fp8 beside GQA bf16. Writes $OUT/probe-decode.txt (or ./probe-decode.txt).
#   PA_PROBE_SHAPES="64 4096 32/8,1 4096 32/8"  (seqs ctx heads, comma-separated)
#   PA_PROBE_VARIANTS="v1 auto"   PA_PROBE_BENCH=0 (skip the CLI timings)
#   PA_BUILD_DIR=.carry/build PA_CRITERION_LIBS=.carry/crit scripts/gpu-probe-decode.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${PA_BUILD_DIR:-build-gpu}/benchmarks/pagedattn
if [ -n "${PA_CRITERION_LIBS:-}" ]; then
    crit=$(cd "$PA_CRITERION_LIBS" && pwd)
    export LD_LIBRARY_PATH="$crit${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
out=${OUT:-.}/probe-decode.txt
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,launch__grid_size
{
    echo "# decode probe $(date -u +%F) commit $(cat "${PA_BUILD_DIR:-build-gpu}/COMMIT" 2>/dev/null | tr '\n' ' ')"
    IFS=, read -ra shapes <<<"${PA_PROBE_SHAPES:-64 4096 32/8,1 4096 32/8,16 32768 32/8,64 4096 32/32}"
    for shape in "${shapes[@]}"; do
        set -- $shape
        for v in ${PA_PROBE_VARIANTS:-v1 v2 auto}; do
            echo "## ncu $v seqs=$1 ctx=$2 heads=$3 bf16 nhd"
            timeout 60 ncu --clock-control none --metrics "$m" -k regex:decode_ --launch-skip 8 --launch-count 4 --csv \
                "$B" bench decode --variant "$v" --seqs "$1" --ctx "$2" --heads "$3" --head-size 128 --dtype bf16 \
                --layout nhd --iters 4 --warmup 3 2>&1 | python3 scripts/ncu_rows.py
        done
    done
    [ "${PA_PROBE_BENCH:-1}" = 1 ] || exit 0
    echo "## pagedattn bench decode (CUDA events, L2 flushed, median)"
    for args in "--heads 32/8" "--heads 32/32" "--heads 32/8 --cache-dtype fp8_e4m3" "--heads 32/32 --cache-dtype fp8_e4m3"; do
        for v in v1 auto; do
            echo "\$ bench decode --variant $v --seqs 64 --ctx 4096 $args"
            timeout 60 "$B" bench decode --variant "$v" --seqs 64 --ctx 4096 $args --head-size 128 --dtype bf16 --layout nhd \
                --iters 20 2>&1 | tail -3
        done
        echo "\$ bench decode --variant auto --seqs 1 --ctx 32768 $args"
        timeout 60 "$B" bench decode --variant auto --seqs 1 --ctx 32768 $args --head-size 128 --dtype bf16 --layout nhd \
            --iters 20 2>&1 | tail -3
    done
} 2>&1 | tee "$out"
