#!/usr/bin/env bash
# How near its register limit each Hopper prefill instance is: compiles
# cuda/prefill/inst_hopper.cu for sm_90a with the build's flags (as
# scripts/check-sm90a.sh does, spills allowed) after lowering every consumer's
# setmaxnreg budget (kConsumerRegs, both values) by DELTA registers, and prints
# each instance's spill bytes. An instance that still compiles without a spill
# has at least DELTA registers to spare. No GPU; about 1.5 minutes.
#   scripts/hopper-reg-headroom.sh [BUILD_DIR] [DELTA]   (defaults: build, 8)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd) || exit 1
delta=${2:-8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A copy of the sources with the budgets lowered (the working tree as it stands).
cp -r "$root/cuda" "$root/include" "$root/csrc" "$tmp/" || exit 1
python3 - "$tmp/cuda/prefill/prefill_wgmma.cuh" "$delta" <<'PY' || exit 1
import re, sys
path, d = sys.argv[1], int(sys.argv[2])
s = open(path).read()
# (whitespace-tolerant: clang-format lays the nested conditionals out over lines)
pat = (r"kConsumerRegs\s*=\s*HP_ == 256\s*\?\s*\(\s*kFp8\s*\?\s*(\d+)\s*:\s*(\d+)\s*\)\s*:\s*"
       r"kLeanConsumers\s*\?\s*(\d+)\s*:\s*(\d+);")
m = re.search(pat, s)
if not m:
    sys.exit("hopper-reg-headroom: kConsumerRegs not found in prefill_wgmma.cuh")
hf, h, a, b = (int(m.group(i)) - d for i in (1, 2, 3, 4))
print("consumer budgets lowered by %d: HP 256 fp8 %s -> %d, HP 256 %s -> %d, lean %s -> %d, others %s -> %d"
      % (d, m.group(1), hf, m.group(2), h, m.group(3), a, m.group(4), b))
open(path, "w").write(re.sub(pat, "kConsumerRegs = HP_ == 256 ? (kFp8 ? %d : %d) : kLeanConsumers ? %d : %d;"
                             % (hf, h, a, b), s))
PY
cmd=$(python3 "$root/scripts/nvcc_cmd.py" "$build" cuda/prefill/inst_hopper.cu) || exit 1
# The build's flags with the copy's sources: only the targets, the output and -Werror change.
cmd=${cmd//-Werror=all-warnings/}
cmd=$(echo "$cmd" | sed -E "s#\.\./cuda/#$tmp/cuda/#g; s#-I\.\./#-I$tmp/#g; s# -I\.\. # -I$tmp #")
cd "$build" || exit 1
if ! eval "$cmd -gencode=arch=compute_90a,code=sm_90a -Xptxas=-v -o $tmp/h.o" >"$tmp/log" 2>&1; then
    cat "$tmp/log"
    exit 1
fi
python3 - "$tmp/log" <<'PY'
import re, sys
n = tight = 0
for block in open(sys.argv[1]).read().split("Compiling entry function '")[1:]:
    fn = block.split("'", 1)[0]
    m = re.search(r"HCfgILi(\d+)ELi(\d+)ELi(\d+)ELb([01])EEELb([01])E", fn)
    if "prefill_wgmma_kernel" not in fn or not m:
        continue
    sp = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", block)
    st, ld = (int(sp.group(1)), int(sp.group(2))) if sp else (0, 0)
    n += 1
    if st or ld:
        tight += 1
        kv = ["flash", "vLLM", "flash fp8", "vLLM fp8"][int(m.group(3))]
        print("spills: HCfg<%s, %s, %s%s>%s: %d bytes stored, %d loaded"
              % (m.group(1), "f16" if m.group(2) == "1" else "bf16", kv, ", FP8" if m.group(4) == "1" else "",
                 " persistent" if m.group(5) == "1" else "", st, ld))
print("%d of %d instances compile without a spill at the lowered budgets" % (n - tight, n))
PY
