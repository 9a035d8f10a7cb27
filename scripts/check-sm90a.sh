#!/usr/bin/env bash
# The sm_90a code compiles clean: the Hopper prefill kernel (cuda/prefill/inst_hopper.cu)
# and the wgmma twin test kernels (tests/common/ptx_twin_device.cu), built for sm_90a with the
# build's own flags (-Werror=all-warnings, ptxas spill warnings). A build for sm_80/sm_90 compiles
# those kernels' bodies out (they need wgmma), so without this step a warning or a spill in them
# would first show on the GPU machine, whose build includes 90a.
#   scripts/check-sm90a.sh BUILD_DIR
set -uo pipefail
build=${1:-build}
cd "$build" || exit 1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for src in cuda/prefill/inst_hopper.cu tests/common/ptx_twin_device.cu; do
    cmd=$(python3 - "$src" <<'PY'
import json, sys
for c in json.load(open("compile_commands.json")):
    if c["file"].endswith(sys.argv[1]) and "interp" not in c["output"]:
        print(c["command"])
        break
PY
)
    if [ -z "$cmd" ]; then
        echo "check-sm90a: $src is not in $build/compile_commands.json"
        status=1
        continue
    fi
    # Same flags; only the targets (sm_90a SASS) and the output change.
    cmd=$(echo "$cmd" | sed -E 's/-gencode=[^ ]+//g; s/ -MD -MT [^ ]+ -MF [^ ]+//; s/ -o [^ ]+ / /')
    if eval "$cmd -gencode=arch=compute_90a,code=sm_90a -o $out/$(basename "$src").o" >"$out/log" 2>&1; then
        echo "check-sm90a: $src ok"
    else
        echo "check-sm90a: $src FAILED"
        cat "$out/log"
        status=1
    fi
done
exit $status
