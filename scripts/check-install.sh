#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds + runs examples/ against
# it through pkg-config, as a user would. Usage: scripts/check-install.sh [BUILD_DIR]
#   hello_decode  one decode step on the CPU reference, checked by hand
#   cascade_decode  cascade attention on the CPU reference: a shared prefix once
#                 (context attention, cache only), each sequence's own tokens
#                 (decode), merged by their lse (FlashInfer's layout) = one decode
#   serve_loop    a continuous-batching loop (host layer, cache writes, ragged
#                 attention) checked against unpaged attention: on the CPU
#                 reference ops always, and on the GPU too when there is one
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
PREFIX=$(mktemp -d /tmp/pagedattn-prefix.XXXXXX)
WORK=$(mktemp -d /tmp/pagedattn-example.XXXXXX)
# the build's own prefix is put back afterwards (it was reset to /usr/local whatever it was)
OLD_PREFIX=$(meson introspect "$BUILD" --buildoptions |
    python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
trap 'rm -rf "$PREFIX" "$WORK"; meson configure "$BUILD" -Dprefix="$OLD_PREFIX" >/dev/null 2>&1 || true' EXIT
meson configure "$BUILD" -Dprefix="$PREFIX" >/dev/null
meson install -C "$BUILD" --quiet >/dev/null
PCDIR=$(dirname "$(find "$PREFIX" -name pagedattn.pc | head -1)")
export PKG_CONFIG_PATH="$PCDIR"
echo "pkg-config --cflags --libs pagedattn: $(pkg-config --cflags --libs pagedattn)"
cp examples/*.c examples/Makefile "$WORK"/
make -s -C "$WORK"
libdir=$(pkg-config --variable=libdir pagedattn)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$WORK"/hello_decode
"$WORK"/cascade_decode
"$WORK"/serve_loop --device both
