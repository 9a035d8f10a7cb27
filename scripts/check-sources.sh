#!/usr/bin/env bash
# Source contracts. Interpret mode's (cuda/ptx.cuh): inline PTX (`asm`), kernel
# launches (`<<<`) and shared-memory declarations (`__shared__`) appear only in
# cuda/ptx.cuh; everything else goes through its wrappers and the macros
# PA_LAUNCH, PA_DYNAMIC_SMEM and PA_STATIC_SMEM. Exit 1 listing each offence.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bad=$(git ls-files --cached --others --exclude-standard '*.cu' '*.cuh' '*.c' '*.h' '*.cpp' |
    grep -v -e '^cuda/ptx\.cuh$' |
    xargs grep -nE '\basm\b[[:space:]]*(volatile[[:space:]]*)?\(|<<<|__shared__' 2>/dev/null)
if [ -n "$bad" ]; then
    echo "check-sources: inline PTX, <<< launches or __shared__ outside cuda/ptx.cuh:"
    echo "$bad"
    exit 1
fi
# Every GPU entry checks for a CUDA error already pending on the thread before its first CUDA call
# (core.h): its NVTX range push, which comes first, stands right after
# PA_TRY(pa_no_pending_cuda_error(...)), or names on its line the entry that checks for it.
bad=$(git ls-files --cached --others --exclude-standard 'csrc/*.c' | xargs awk '
    /PA_RANGE_PUSH\(/ && prev !~ /pa_no_pending_cuda_error\(/ && $0 !~ /checks for a pending error/ {
        print FILENAME ":" FNR ": " $0 }
    { prev = $0 }' 2>/dev/null)
if [ -n "$bad" ]; then
    echo "check-sources: an entry launches without checking for a pending CUDA error first (core.h):"
    echo "$bad"
    exit 1
fi
echo "check-sources ok: asm, <<< and __shared__ only in cuda/ptx.cuh; every entry checks for a pending CUDA error"
