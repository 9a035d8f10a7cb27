#!/usr/bin/env bash
# The wheels gpu-check.sh's side-by-side installs on the GPU machine (PA_WHEELS=.whl), which
# has no FlashInfer and no network: downloaded here, for its Python 3.12, at pinned versions so
# that runs on different days compare the same peer. FlashInfer 0.5.3 is what every side-by-side
# so far ran (runs 1-13, 2026-11-22 to 2026-11-27, in their JSON's "flashinfer"); its
# apache-tvm-ffi was not recorded then, and 0.1.15.post2 is the newest 0.1.x (what 0.5.3 asks
# for) on 2026-12-06. Only these two: torch and the rest of FlashInfer's needs are on that
# machine already, and its JIT uses nvcc and ninja there.
#   scripts/gpu-wheels.sh            (then carry [".carry.tgz", ".whl"] and PA_WHEELS=.whl)
# PA_FLASHINFER_VERSION and PA_TVM_FFI_VERSION override the pins (say so in the report).
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
FI=${PA_FLASHINFER_VERSION:-0.5.3}
TVM=${PA_TVM_FFI_VERSION:-0.1.15.post2}
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >>.git/info/exclude
rm -rf .whl
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl "flashinfer-python==$FI" "apache-tvm-ffi==$TVM"
n=$(find .whl -type f -name '*.whl' | wc -l)
[ "$n" -eq 2 ] || { echo "gpu-wheels: expected 2 wheels in .whl, found $n" >&2; exit 1; }
du -sh .whl
