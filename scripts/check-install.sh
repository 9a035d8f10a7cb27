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
# Then a project that takes the source tree as a Meson subproject:
# dependency('pagedattn') must find the tree's pagedattn_dep
# (meson.override_dependency) with the public headers only. Configured and
# the consumer's object compiled; not linked, which would compile every
# kernel again.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
PREFIX=$(mktemp -d /tmp/pagedattn-prefix.XXXXXX)
WORK=$(mktemp -d /tmp/pagedattn-example.XXXXXX)
SUB=$(mktemp -d /tmp/pagedattn-subproject.XXXXXX)
# the build's own prefix is put back afterwards (it was reset to /usr/local whatever it was)
OLD_PREFIX=$(meson introspect "$BUILD" --buildoptions |
    python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
trap 'rm -rf "$PREFIX" "$WORK" "$SUB"; meson configure "$BUILD" -Dprefix="$OLD_PREFIX" >/dev/null 2>&1 || true' EXIT
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

mkdir "$SUB/subprojects"
ln -s "$PWD" "$SUB/subprojects/pagedattn"
cp examples/hello_decode.c "$SUB"/
cat >"$SUB/meson.build" <<'EOF'
project('consumer', 'c', default_options : ['c_std=c11'])
executable('hello_decode', 'hello_decode.c',
  dependencies : [dependency('pagedattn', version : '>= 0.1'), meson.get_compiler('c').find_library('m')])
EOF
env -u PKG_CONFIG_PATH meson setup "$SUB/build" "$SUB" --force-fallback-for=pagedattn -Dpagedattn:tests=false >"$SUB/setup.log" 2>&1 || { cat "$SUB/setup.log"; exit 1; }
obj=$(ninja -C "$SUB/build" -t targets all | sed -n 's|^\(hello_decode\.p/[^:]*\.o\): .*|\1|p')
[ -n "$obj" ] || { echo "the consumer's object is not in its build"; exit 1; }
ninja -C "$SUB/build" "$obj" >/dev/null
# (ninja's query output is taken whole before grep reads it: ninja writes it a line
# at a time, and under pipefail a grep -q that stops at its match can kill ninja
# with SIGPIPE and fail the check with the link there, as CI once did)
query=$(ninja -C "$SUB/build" -t query hello_decode)
if ! grep -q 'libpagedattn\.so' <<<"$query"; then
    echo "the consumer does not link libpagedattn through dependency('pagedattn')"
    exit 1
fi
echo "meson subproject: dependency('pagedattn') found pagedattn_dep; hello_decode.c compiled against it"
