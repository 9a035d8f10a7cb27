#!/usr/bin/env bash
# Build here for sm_90a (Hopper's arch-specific target: every kernel as for
# sm_90, plus the wgmma wrappers, which test_ptx_twins compares with their twin;
# PA_GPU_ARCHS=90 builds without them) and pack what a GPU machine without Criterion needs into
# .carry/ (ignored by git): the library, the CLI, the GPU test programs, serve_loop, and
# Criterion's runtime (gpu-check.sh runs no host test program, so none travels). Interpret mode
# and its ThreadSanitizer build are off here (-Dinterp=false -Dinterp_tsan=false): nothing of
# them travels, so building them would only cost local time. Then, on the GPU machine:
#
#   tar xzf .carry.tgz && PA_BUILD_DIR=.carry/build PA_CRITERION_LIBS=.carry/crit scripts/gpu-check.sh
#
# (the device tool carries it with `carry: [".carry.tgz"]`: .carry/ itself is about 70 MiB, over
# the tool's 64 MiB, and gzip packs it to about 29).
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/deps.sh
BUILD=${PA_PACK_BUILD:-build-sm90}
# A build dir set up by a Meson older than 1.4 has no nvcc depfiles: edited
# .cuh headers would not rebuild the kernels that include them. Set it up again.
if [ -f "$BUILD/meson-info/meson-info.json" ] && ! python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["meson_version"]
sys.exit(0 if (v["major"], v["minor"]) >= (1, 4) else 1)' "$BUILD/meson-info/meson-info.json"; then
    echo "gpu-pack: $BUILD was set up by a Meson older than 1.4 (no CUDA header tracking); setting it up again"
    rm -rf "$BUILD"
fi
ARCHS=${PA_GPU_ARCHS:-90a}
OPTS=(-Dgpu_archs="$ARCHS" -Dinterp=false -Dinterp_tsan=false)
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "${OPTS[@]}" -Dbuildtype=release >/dev/null
else
    # A build dir set up otherwise (for other architectures, say 90 before the Hopper kernels, or
    # with interpret mode on) is switched.
    have=$(meson introspect "$BUILD" --buildoptions | python3 -c '
import json, sys
o = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(o["gpu_archs"], o["interp"], o["interp_tsan"])')
    [ "$have" = "$ARCHS False False" ] || meson configure "$BUILD" "${OPTS[@]}" >/dev/null
fi
ninja -C "$BUILD" >/dev/null
rm -rf .carry/build .carry/crit
mkdir -p .carry/build/tests/gpu .carry/build/benchmarks .carry/crit
# programs and libraries only (not meson's *.p object folders)
find "$BUILD" -maxdepth 1 -name 'libpagedattn.so*' \( -type f -o -type l \) -exec cp -P {} .carry/build/ \;
find "$BUILD"/tests/gpu -maxdepth 1 -type f -name 'test_*' -exec cp {} .carry/build/tests/gpu/ \;
cp "$BUILD"/benchmarks/pagedattn .carry/build/benchmarks/
cuda_home=$(dirname "$(dirname "$(command -v nvcc)")")
cc -O2 -std=c11 -Iinclude -I"$cuda_home/include" -o .carry/build/serve_loop examples/serve_loop.c \
    -L"$BUILD" -Wl,-rpath,'$ORIGIN' -lpagedattn -L"$cuda_home/lib64" -lcudart -lm
# Criterion's runtime (the GPU machine has none): the libcriterion the test programs link and the
# libraries it needs, glibc's aside; and the CUDA runtime the library links, whatever its major.
crit=$(ldd "$BUILD"/tests/gpu/test_decode | awk '/libcriterion\.so/{print $3; exit}')
if [ -z "$crit" ] || [ ! -f "$crit" ]; then
    echo "gpu-pack: the GPU tests link no libcriterion that ldd finds (apt-get install libcriterion-dev)" >&2
    exit 1
fi
for lib in "$crit" $(ldd "$crit" | awk '/=> \//{print $3}'); do
    case $(basename "$lib") in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;;
    *) cp -L "$lib" .carry/crit/ ;;
    esac
done
cudart=$(ldd "$BUILD"/libpagedattn.so | awk '/libcudart\.so/{print $3; exit}')
if [ -z "$cudart" ] || [ ! -f "$cudart" ]; then
    echo "gpu-pack: ldd finds no libcudart for $BUILD/libpagedattn.so" >&2
    exit 1
fi
cp -L "$cudart" .carry/crit/
sh scripts/git-commit.sh . >.carry/build/COMMIT || echo unknown >.carry/build/COMMIT # what the CLI's rows say
tar czf .carry.tgz .carry/build .carry/crit
du -sh .carry .carry.tgz
