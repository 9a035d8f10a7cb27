#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds + runs examples/ against
# it through pkg-config, as a user would. Usage: scripts/check-install.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PREFIX=$(mktemp -d /tmp/pagedattn-prefix.XXXXXX)
trap 'rm -rf "$PREFIX"' EXIT
meson configure "$BUILD" -Dprefix="$PREFIX" >/dev/null
meson install -C "$BUILD" --quiet >/dev/null
PCDIR=$(dirname "$(find "$PREFIX" -name pagedattn.pc | head -1)")
export PKG_CONFIG_PATH="$PCDIR"
echo "pkg-config --cflags --libs pagedattn: $(pkg-config --cflags --libs pagedattn)"
WORK=$(mktemp -d /tmp/pagedattn-example.XXXXXX)
cp examples/*.c examples/Makefile "$WORK"/
make -s -C "$WORK"
LD_LIBRARY_PATH="$(pkg-config --variable=libdir pagedattn)" "$WORK"/hello_decode
rm -rf "$WORK"
meson configure "$BUILD" -Dprefix=/usr/local >/dev/null
