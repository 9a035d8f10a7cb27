#!/usr/bin/env bash
# Installs what the build and tests need on a Debian machine, only when missing.
# Safe to run twice. Sourced by the other scripts (it also puts nvcc on PATH).
set -euo pipefail

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="/usr/local/cuda/bin:$PATH"
fi

need=()
command -v meson >/dev/null 2>&1 || need+=(meson)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -f /usr/include/criterion/criterion.h ] || need+=(libcriterion-dev)
if [ "${PA_WANT_FUZZ:-0}" = 1 ]; then
    command -v clang >/dev/null 2>&1 || need+=(clang)
fi
# scripts/plot: Debian's matplotlib (it lives under /usr/bin/python3, which the
# script falls back to when the python3 on PATH lacks it).
if [ "${PA_WANT_PLOT:-0}" = 1 ]; then
    python3 -c 'import matplotlib' >/dev/null 2>&1 || /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1 ||
        need+=(python3-matplotlib)
fi
# The Python package's tests: a venv (Debian splits venv/ensurepip into python3-venv).
if [ "${PA_WANT_PYTHON:-0}" = 1 ]; then
    command -v python3 >/dev/null 2>&1 || need+=(python3)
    python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
fi
if [ ${#need[@]} -gt 0 ]; then
    echo "scripts/deps.sh: installing ${need[*]}"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
# cuobjdump and nvdisasm, for check-sm90a's SASS check (scripts/hopper_uniform_desc.py;
# cuobjdump -sass calls nvdisasm since CUDA 13.5): the toolkit's when it has them, else
# NVIDIA's PyPI wheels into /tmp/nvtools (where scripts/budget.py's locate_tool looks).
# One pip command for both, with --upgrade: pip --target keeps an existing nvidia/ folder
# and drops the second wheel's files otherwise. Without network the check says it was skipped.
if [ "${PA_WANT_SASS:-0}" = 1 ] && ! python3 "$(dirname "${BASH_SOURCE[0]}")/hopper_uniform_desc.py" --locate >/dev/null 2>&1; then
    echo "scripts/deps.sh: installing cuobjdump and nvdisasm (pip: nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm) into /tmp/nvtools"
    python3 -m pip install -q --disable-pip-version-check --retries 0 --timeout 20 --upgrade --target /tmp/nvtools \
        nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >/dev/null 2>&1 || echo "scripts/deps.sh: could not install cuobjdump" >&2
fi
# Meson 1.4 or newer writes nvcc's dependency files, so editing a .cuh rebuilds
# the .cu files that include it (Debian 12's Meson 1.0 tracks no CUDA headers).
# Older: Meson and Ninja from PyPI into a venv of their own, put first on PATH.
# Without network (a GPU machine), the older Meson still builds; only header
# tracking is lost, and scripts/check-header-deps.sh says so.
meson_new_enough() {
    python3 - "$(meson --version 2>/dev/null || echo 0)" <<'PY'
import sys
v = tuple(int(x) for x in (sys.argv[1].split(".") + ["0", "0"])[:2] if x.isdigit())
sys.exit(0 if v >= (1, 4) else 1)
PY
}
PA_TOOLS_VENV=${PA_TOOLS_VENV:-$HOME/.cache/pagedattn-tools}
[ -x "$PA_TOOLS_VENV/bin/meson" ] && export PATH="$PA_TOOLS_VENV/bin:$PATH"
if ! meson_new_enough; then
    echo "scripts/deps.sh: Meson $(meson --version) tracks no CUDA headers; installing Meson >= 1.4 from PyPI into $PA_TOOLS_VENV"
    if python3 -m venv "$PA_TOOLS_VENV" >/dev/null 2>&1 &&
        "$PA_TOOLS_VENV/bin/pip" install -q --disable-pip-version-check 'meson>=1.4' ninja >/dev/null 2>&1; then
        export PATH="$PA_TOOLS_VENV/bin:$PATH"
    else
        echo "scripts/deps.sh: could not install Meson from PyPI; building with Meson $(meson --version) (no .cuh tracking)" >&2
    fi
fi
if ! command -v nvcc >/dev/null 2>&1; then
    echo "scripts/deps.sh: nvcc (the CUDA toolkit) is required to build libpagedattn; install CUDA 12 or newer" >&2
    exit 1
fi
