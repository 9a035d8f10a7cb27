#!/usr/bin/env bash
# The sm_90a code compiles clean: the Hopper prefill kernel (cuda/prefill/inst_hopper.cu)
# and the wgmma twin test kernels (tests/common/ptx_twin_device.cu), built for sm_90a with the
# build's own flags (-Werror=all-warnings, ptxas spill warnings). A build for sm_80/sm_90 compiles
# those kernels' bodies out (they need wgmma), so without this step a warning or a spill in them
# would first show on the GPU machine, whose build includes 90a. It also checks that
# ptxas gave each Hopper prefill kernel enough registers at launch for its setmaxnreg budgets,
# and (where cuobjdump is found) that their wgmma descriptors stay in uniform registers.
#   scripts/check-sm90a.sh BUILD_DIR
set -uo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$build" || exit 1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for src in cuda/prefill/inst_hopper.cu tests/common/ptx_twin_device.cu; do
    # Same flags (scripts/nvcc_cmd.py); only the targets (sm_90a SASS) and the output change.
    if ! cmd=$(python3 "$root/scripts/nvcc_cmd.py" . "$src"); then
        status=1
        continue
    fi
    # Every build has ptxas's spill gate (meson.build); add it should a build dir predate that.
    case "$cmd" in *-warn-spills*) ;; *) cmd="$cmd -Xptxas=-warn-spills,-warn-lmem-usage" ;; esac
    case "$cmd" in *-Werror=all-warnings*) ;; *) cmd="$cmd -Werror=all-warnings" ;; esac # (-Dwerror=false)
    if eval "$cmd -gencode=arch=compute_90a,code=sm_90a -Xptxas=-v -o $out/$(basename "$src").o" >"$out/log" 2>&1; then
        echo "check-sm90a: $src ok"
        # setmaxnreg moves registers between warpgroups within the CTA's pool,
        # the registers per thread at launch x 384: if ptxas allocated fewer
        # than the consumers' setmaxnreg.inc needs, it waits forever on the GPU.
        if [ "$src" = cuda/prefill/inst_hopper.cu ] &&
            ! python3 - "$out/log" "$root/cuda/prefill/prefill_wgmma.cuh" <<'PY'; then
import re, sys
log, hdr = open(sys.argv[1]).read(), open(sys.argv[2]).read()
# (whitespace-tolerant: clang-format lays the nested conditionals out over lines)
# HP 256 has a budget for fp8 caches and one for the rest: (kFp8 ? F : S).
b = r"HP_ == 256\s*\?\s*\(\s*kFp8\s*\?\s*(\d+)\s*:\s*(\d+)\s*\)\s*:\s*kLeanConsumers\s*\?\s*(\d+)\s*:\s*(\d+)"
m = re.search(r"kProducerRegs\s*=\s*" + b + r",\s*kConsumerRegs\s*=\s*" + b + ";", hdr)
lean = re.search(r"kLeanConsumers = ([^;]+);", hdr)
t = re.search(r"kThreads = (\d+);", hdr)
if not m or not t or not lean:
    sys.exit("check-sm90a: setmaxnreg budgets or kThreads not found in prefill_wgmma.cuh")
g = [int(m.group(i)) for i in range(1, 9)]
need = {(256, True): (g[0], g[4]), (256, False): (g[1], g[5]), True: (g[2], g[6]), False: (g[3], g[7])}
threads, n, bad = int(t.group(1)), 0, 0
for block in log.split("Compiling entry function '")[1:]:
    fn = block.split("'", 1)[0]
    used = re.search(r"Used (\d+) registers", block)
    if "prefill_wgmma_kernel" not in fn or not used:
        continue
    regs = used.group(1)
    cfg = re.search(r"HCfgILi(\d+)ELi\d+ELi(\d+)ELb([01])E", fn)
    hp, kv = int(cfg.group(1)), int(cfg.group(2))  # kv 2, 3: fp8 caches (kFlashFp8, kVllmFp8)
    # (kLeanConsumers' C++ condition over HP_ and F8_, read as Python)
    is_lean = eval(lean.group(1).replace("||", " or ").replace("&&", " and "), {},
                   {"HP_": hp, "F8_": cfg.group(3) == "1"})
    p, c = need[(256, kv >= 2)] if hp == 256 else need[bool(is_lean)]
    pool, want = int(regs) * threads, 128 * (p + 2 * c)
    n += 1
    if pool < want:
        bad += 1
        print("check-sm90a: %s: %s registers at launch, a pool of %d; setmaxnreg %d/%d needs %d"
              % (fn, regs, pool, p, c, want))
if n == 0:
    sys.exit("check-sm90a: no prefill_wgmma_kernel in ptxas -v's output")
if bad:
    sys.exit("check-sm90a: %d of %d Hopper kernels would wait forever in setmaxnreg.inc" % (bad, n))
print("check-sm90a: setmaxnreg pool covers the budgets of %d Hopper kernels" % n)
PY
            status=1
        fi
        # The wgmma descriptors stay in uniform registers (scripts/hopper_uniform_desc.py, which
        # reads the SASS when it finds cuobjdump; scripts/deps.sh installs one under test.sh).
        if [ "$src" = cuda/prefill/inst_hopper.cu ] &&
            ! python3 "$root/scripts/hopper_uniform_desc.py" "$out/$(basename "$src").o" |
            sed 's/^hopper_uniform_desc/check-sm90a/'; then
            status=1
        fi
    else
        echo "check-sm90a: $src FAILED"
        cat "$out/log"
        status=1
    fi
done
exit $status
