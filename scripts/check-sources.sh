#!/usr/bin/env bash
# Source contract of interpret mode (cuda/ptx.cuh): inline PTX (`asm`), kernel
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
echo "check-sources ok: asm, <<< and __shared__ only in cuda/ptx.cuh"
