#!/usr/bin/env bash
# The kernels compile clean for the Ampere and Ada targets too: every CUDA source of the
# library (and of its GPU tests) built with the build's own flags (-Werror=all-warnings,
# ptxas's spill and local-memory warnings) for sm_80, sm_86 and sm_89 in turn. CI builds
# sm_90 alone, so without this a spill that only those targets' register allocation makes
# would first show in a user's build (meson's default gpu_archs is 80;90a). It is how the
# prefill spills on sm_80 (head 128, 124 bytes) and sm_89 (head 96, 4 bytes; the f32 kernel,
# 24) were found and checked fixed (prefill_kernel.cuh's dequant_batch, prefill_f32.cu).
#   scripts/check-sm8x.sh BUILD_DIR [SOURCE_SUBSTRING...]
# With substrings, only the sources whose path contains one of them (CI: the prefill
# instances at 255 registers). PA_SM8X_ARCHS (default "80 86 89") names the targets;
# PA_SM8X_JOBS (default: the CPU count) the parallel compiles; PA_SM8X_TIMES=1 prints each
# compile's seconds. Blackwell's targets take the same check: PA_SM8X_ARCHS="100 103 110 120 121"
# (every source clean on 2026-12-05, after the head-192 decode and head-128 ragged spills there
# were fixed; CI checks those sources at sm_100 and sm_120).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
shift || true
cd "$build" || exit 1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
archs=${PA_SM8X_ARCHS:-80 86 89}
jobs=${PA_SM8X_JOBS:-$(nproc)}
# A target this nvcc does not know (sm_100 and sm_120 came with CUDA 12.8, sm_110 with 13.0) is
# skipped, and said so, rather than failed: the README asks for nvcc 12 or newer.
known=$(nvcc --list-gpu-arch 2>/dev/null)
if [ -n "$known" ]; then
    kept=""
    for a in $archs; do
        if grep -qx "compute_$a" <<<"$known"; then
            kept="$kept $a"
        else
            echo "check-sm8x: sm_$a skipped: $(nvcc --version | tail -2 | head -1) does not know it"
        fi
    done
    archs=${kept# }
    if [ -z "$archs" ]; then
        echo "check-sm8x: no target left to check"
        exit 0
    fi
fi

# One line per source: "path<TAB>command", the command's targets and outputs taken out.
# (scripts/nvcc_cmd.py; sm_90a-only code, PA_HAVE_SM90A, is not built for these targets)
python3 "$root/scripts/nvcc_cmd.py" --all . "$@" |
    sed -E 's/ -DPA_HAVE_SM90A( |$)/\1/; /-warn-spills/! s/$/ -Xptxas=-warn-spills,-warn-lmem-usage/
        /-Werror=all-warnings/! s/$/ -Werror=all-warnings/' >"$out/cmds" # (a build with -Dwerror=false)
n=$(wc -l <"$out/cmds")
if [ "$n" -eq 0 ]; then
    echo "check-sm8x: no CUDA source matched in $build/compile_commands.json"
    exit 1
fi

compile_one() { # arch, index, source, command
    local arch=$1 k=$2 src=$3 cmd=$4 log="$out/$2.$1.log" t0 t1
    t0=$(date +%s)
    if eval "$cmd -cubin -arch=sm_$arch -o $out/$k.$arch.cubin" >"$log" 2>&1; then
        t1=$(date +%s)
        [ "${PA_SM8X_TIMES:-0}" = 1 ] && echo "check-sm8x: sm_$arch $src ok ($((t1 - t0)) s)"
        rm -f "$out/$k.$arch.cubin"
        return 0
    fi
    echo "check-sm8x: sm_$arch $src FAILED"
    grep -E "error|warning|spill|Local memory" "$log" | head -20
    return 1
}
export -f compile_one
export out

status=0
for arch in $archs; do
    k=0
    while IFS=$'\t' read -r src cmd; do
        k=$((k + 1))
        printf '%s\0%s\0%s\0%s\0' "$arch" "$k" "$src" "$cmd"
    done <"$out/cmds"
done | xargs -0 -n 4 -P "$jobs" bash -c 'compile_one "$@"' _ || status=1
if [ $status -eq 0 ]; then
    echo "check-sm8x: $n sources compile clean (no warning, no spill) for sm_${archs// /, sm_}"
fi
exit $status
