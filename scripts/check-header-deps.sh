#!/usr/bin/env bash
# Header tracking for CUDA sources (issue 18): after a .cuh changes, ninja must
# rebuild every .cu that includes it. For each header below, touches it (then
# restores its time stamp), asks ninja what it would rebuild (-n, nothing is
# built), and checks that the library objects of every .cu including it,
# directly or through other headers (found here from the #include lines, not
# from the build), are in that list. Exit 1 naming what ninja would not rebuild.
#
#   scripts/check-header-deps.sh [BUILD]      (default build)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
[ -f "$BUILD/build.ninja" ] || { echo "check-header-deps: $BUILD is not a configured build"; exit 1; }
# Objects must be up to date first, or -n lists everything for other reasons.
ninja -C "$BUILD" >/dev/null || { echo "check-header-deps: the build fails"; exit 1; }

# Every .cu under cuda/ that includes $1, directly or through .cuh/.h files.
includers() {
    python3 - "$1" <<'PY'
import os, re, sys
target = os.path.normpath(sys.argv[1])
inc = {}
for root, _, files in os.walk("cuda"):
    for f in files:
        if f.endswith((".cu", ".cuh", ".h", ".inc")):
            p = os.path.normpath(os.path.join(root, f))
            deps = set()
            for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', open(p).read(), re.M):
                deps.add(os.path.normpath(os.path.join(root, m.group(1))))
            inc[p] = deps
def reaches(p, seen):
    if p in seen:
        return False
    seen.add(p)
    return target in inc.get(p, ()) or any(reaches(d, seen) for d in inc.get(p, ()))
for p in sorted(inc):
    if p.endswith(".cu") and reaches(p, set()):
        print(p)
PY
}

status=0
for h in cuda/attn_tile.cuh cuda/decode/decode_kernel.cuh cuda/ragged/ragged_common.cuh cuda/ptx.cuh; do
    [ -f "$h" ] || continue
    stamp=$(stat -c %Y "$h")
    touch "$h"
    plan=$(ninja -C "$BUILD" -n 2>/dev/null | grep -oE 'libpagedattn\.so[^ ]*\.p/[^ :]*\.cu\.o' | sort -u)
    touch -d "@$stamp" "$h"
    want=$(includers "$h")
    missing=0
    for cu in $want; do
        obj="$(echo "$cu" | tr '/' '_').o"
        grep -qF "$obj" <<<"$plan" || { echo "check-header-deps: touching $h does not rebuild $cu"; missing=$((missing + 1)); }
    done
    n=$(echo "$want" | grep -c .)
    if [ "$missing" -eq 0 ]; then
        echo "check-header-deps: $h -> all $n including .cu files rebuild"
    else
        status=1
    fi
done
[ $status -eq 0 ] && echo "check-header-deps ok" || echo "check-header-deps: FAILED (Meson $(meson --version) with nvcc depfiles needs >= 1.4; scripts/deps.sh)"
exit $status
