#!/usr/bin/env bash
# The test command. Builds the library and runs every Criterion program (GPU
# tests skip cleanly without a device), then the host tests again under
# AddressSanitizer + UBSan, then a bounded libFuzzer run of the host layer.
# Ends with one plain line: "N passed, N failed, N skipped".
#
# Environment: PA_GPU_ARCHS (default "80;90a"; CI builds "90" to save time),
#              PA_SKIP_ASAN=1, PA_SKIP_FUZZ=1, PA_FUZZ_SECONDS (default 60),
#              PA_SKIP_PYTHON=1 (skips pip install . + pytest of python/tests).
#              PA_SKIP_SASS=1 (no cuobjdump install for check-sm90a's uniform-descriptor check).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
phase_t0=$(date +%s)
PA_WANT_FUZZ=$([ "${PA_SKIP_FUZZ:-0}" = 1 ] && echo 0 || echo 1) \
PA_WANT_PYTHON=$([ "${PA_SKIP_PYTHON:-0}" = 1 ] && echo 0 || echo 1) \
PA_WANT_SASS=$([ "${PA_SKIP_SASS:-0}" = 1 ] && echo 0 || echo 1) source scripts/deps.sh || exit 1
set +e

ARCHS=${PA_GPU_ARCHS:-80;90a}

# Each "== ... ==" header starts a phase; the time each took is listed before the
# last line, so a CI run that grows shows where.
phase_t=$phase_t0 phase_name="dependencies (scripts/deps.sh)" phase_log=""
phase() {
    local now
    now=$(date +%s)
    phase_log+=$(printf '\n%6d s  %s' $((now - phase_t)) "$phase_name")
    phase_t=$now phase_name=$1
    [ "$1" = end ] || echo "== $1 =="
}
# The ASan host tests' build and the pip package check compile the kernels but run none of
# them on a machine without a GPU: there they build unoptimized PTX alone (meson option
# gpu_code), about a quarter of nvcc's time. The main build above checks code generation.
AUX_GPU_CODE=sass
nvidia-smi -L >/dev/null 2>&1 || AUX_GPU_CODE=ptx-unoptimized
status=0
total_pass=0 total_fail=0 total_skip=0

# Counts one build's TAP files and prints a line per program.
tally() {
    local dir=$1 label=$2
    for tap in "$dir"/*.tap; do
        [ -f "$tap" ] || continue
        local p f s
        p=$(grep -E '^ok ' "$tap" | grep -vc '# SKIP')
        s=$(grep -cE '^ok .*# SKIP' "$tap")
        f=$(grep -cE '^not ok ' "$tap")
        printf '%-8s %-28s %3d passed, %d failed, %d skipped\n' "$label" "$(basename "$tap" .tap)" "$p" "$f" "$s"
        total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
    done
    # meson tests that write no TAP file (single checks such as test_prof): one each.
    local log="$dir/meson-logs/testlog.json"
    [ -f "$log" ] || return 0
    local counts
    counts=$(python3 - "$dir" "$log" <<'PY'
import json, os, sys
d, log = sys.argv[1], sys.argv[2]
p = f = s = 0
for line in open(log):
    t = json.loads(line)
    args = " ".join(t.get("command", []))
    if "--tap=" in args:
        # Its TAP file is counted above; a program that died (a crash, a timeout, a kill)
        # before writing a "not ok" line for it counts as one failure here.
        if t["result"] not in ("OK", "EXPECTEDFAIL", "SKIP"):
            tap = next((a[len("--tap="):] for a in t.get("command", []) if a.startswith("--tap=")), "")
            if not (os.path.isfile(tap) and any(l.startswith("not ok ") for l in open(tap))):
                print(f"{t['name']}: {t['result']} with no failing test in its TAP file", file=sys.stderr)
                f += 1
        continue
    name = t["name"].split(" / ")[-1]
    r = t["result"]
    if r in ("OK", "EXPECTEDFAIL"):  # (should_fail tests: a refusal the test expects)
        p += 1
    elif r == "SKIP":
        s += 1
    else:
        f += 1
print(p, f, s)
PY
)
    local p f s
    read -r p f s <<<"$counts"
    if [ -n "$p" ] && [ $((p + f + s)) -gt 0 ]; then
        printf '%-8s %-28s %3d passed, %d failed, %d skipped\n' "$label" "(tests without TAP)" "$p" "$f" "$s"
        total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
    fi
}

phase "build (gpu_archs=$ARCHS)"
if [ ! -f build/build.ninja ]; then
    meson setup build -Dgpu_archs="$ARCHS" >/dev/null || exit 1
else
    # A build configured by another Meson version (scripts/deps.sh may bring a
    # newer one) is set up again from scratch.
    meson configure build -Dgpu_archs="$ARCHS" >/dev/null 2>&1 ||
        meson setup --wipe build -Dgpu_archs="$ARCHS" >/dev/null || exit 1
fi
start=$(date +%s)
ninja -C build || exit 1
echo "build took $(( $(date +%s) - start )) s"

# check-sm90a compiles the Hopper kernels on one core (about 4 minutes on CI's two): it runs
# beside the test suite, whose last minutes leave a core idle, and reports in its place below.
sm90a_log=$(mktemp)
scripts/check-sm90a.sh build >"$sm90a_log" 2>&1 &
sm90a_pid=$!

phase "tests"
rm -f build/*.tap
# Every interpret-mode test process notes the kernels it ran (tests/interp/interp.cpp), for
# scripts/kernel_coverage.py below.
launch_log=$PWD/build/interp-launches.log
rm -f "$launch_log"
PA_INTERP_LAUNCH_LOG=$launch_log meson test -C build --print-errorlogs --verbose 2>&1 | grep -E '^\[====\] Synthesis|^ *[0-9]+/[0-9]+ |FAIL|Ok:|Fail:|Skipped:'
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
tally build main

phase "header tracking: a touched .cuh rebuilds its .cu files (scripts/check-header-deps.sh)"
if scripts/check-header-deps.sh build; then
    echo "build    check-header-deps             1 passed, 0 failed, 0 skipped"
    total_pass=$((total_pass + 1))
else
    echo "build: check-header-deps FAILED"
    total_fail=$((total_fail + 1))
    status=1
fi

# A check script's exit status counted as one result: 0 passed, 3 skipped (a tool it needs is
# missing: cuobjdump), anything else failed.
tally_check() { # name, exit status
    case $2 in
    0)
        printf 'build    %-30s1 passed, 0 failed, 0 skipped\n' "$1"
        total_pass=$((total_pass + 1))
        ;;
    3)
        printf 'build    %-30s0 passed, 0 failed, 1 skipped\n' "$1"
        total_skip=$((total_skip + 1))
        ;;
    *)
        echo "build: $1 FAILED"
        total_fail=$((total_fail + 1))
        status=1
        ;;
    esac
}

phase "every kernel the library ships ran in interpret mode, at CTA sizes a GPU launches (scripts/kernel_coverage.py)"
if [ ! -d build/tests/interp ]; then
    echo "interpret mode not built (-Dinterp=false): skipping"
else
    python3 scripts/kernel_coverage.py build "$launch_log"
    tally_check kernel-coverage $?
fi

phase "every kernel's static shared memory stays under the launchers' fit-check margin (scripts/check-static-smem.py)"
python3 scripts/check-static-smem.py build
tally_check check-static-smem $?

phase "no import circles between files: #include lines and object symbols (scripts/check-circles.py)"
if python3 scripts/check-circles.py build; then
    echo "build    check-circles                 1 passed, 0 failed, 0 skipped"
    total_pass=$((total_pass + 1))
else
    total_fail=$((total_fail + 1))
    status=1
fi

phase "the sm_90a kernels compile clean: -Werror, no spills, uniform wgmma descriptors (scripts/check-sm90a.sh)"
wait "$sm90a_pid"
sm90a_rc=$?
cat "$sm90a_log"
rm -f "$sm90a_log"
if [ "$sm90a_rc" -eq 0 ]; then
    echo "build    check-sm90a                   1 passed, 0 failed, 0 skipped"
    total_pass=$((total_pass + 1))
else
    total_fail=$((total_fail + 1))
    status=1
fi

phase "the kernels nearest the register limit compile without spills for sm_80, sm_89, sm_100 and sm_120 (scripts/check-sm8x.sh)"
# The whole library for sm_80, sm_86 and sm_89 takes minutes on CI's two cores; these are the
# sources whose kernels sit at 255 registers there (prefill mma.sync at heads 96 and 128), the
# f32 prefill kernel, where sm_89 spilled before, and the decode tensor-core instances at their
# bounds (128 registers; fp8 with two head blocks at head 192, whose e5m2 spilled at all three
# targets before 2026-12-05) (run scripts/check-sm8x.sh build for all of it).
# Then Blackwell's sm_100 and sm_120 (since 2026-12-05; about 40 s): the 16-bit decode instances
# (head 192 spilled there at 4 CTAs' 128 registers) and the ragged kernels at head 128, at 255
# registers (the fp8 instance spilled there before its mask took column offsets).
if PA_SM8X_ARCHS="80 89" scripts/check-sm8x.sh build prefill/inst_f16_h96 prefill/inst_bf16_h96 \
    prefill/inst_f16_h128 prefill/inst_bf16_h128 prefill/prefill_f32 decode_qf16_c decode_qbf16_c &&
    PA_SM8X_ARCHS="100 120" scripts/check-sm8x.sh build decode_qf16_cf16 decode_qbf16_cbf16 \
        ragged_f16_hp128 ragged_bf16_hp128; then
    echo "build    check-sm8x                    1 passed, 0 failed, 0 skipped"
    total_pass=$((total_pass + 1))
else
    total_fail=$((total_fail + 1))
    status=1
fi

# The shared-memory layouts' bank checks, each from the kernel's written formulas (no GPU).
bank_check() { # script, result name, what it checks
    phase "$3: no bank conflicts (scripts/$1)"
    if python3 "scripts/$1" >/dev/null; then
        printf 'build    %-30s1 passed, 0 failed, 0 skipped\n' "$2"
        total_pass=$((total_pass + 1))
    else
        total_fail=$((total_fail + 1))
        status=1
    fi
}
bank_check ragged_banks.py check-banks "the ragged kernel's shared-memory layouts"
bank_check hopper_banks.py check-hopper-banks "the Hopper kernel's producer accesses"
bank_check decode_banks.py check-decode-banks "the decode kernels' swizzled K/V rows"

phase "every planted bug still finds its code (PLANT_CHECK=1 scripts/plant-bugs.sh)"
if PLANT_CHECK=1 scripts/plant-bugs.sh; then
    echo "build    check-plants                  1 passed, 0 failed, 0 skipped"
    total_pass=$((total_pass + 1))
else
    total_fail=$((total_fail + 1))
    status=1
fi

phase "every host-layer and Python mutant still finds its code (scripts/mutants.sh, python/tests/mutants.py)"
if MUTANTS_CHECK=1 scripts/mutants.sh && python3 python/tests/mutants.py --check; then
    echo "build    check-mutants                 1 passed, 0 failed, 0 skipped"
    total_pass=$((total_pass + 1))
else
    total_fail=$((total_fail + 1))
    status=1
fi

phase "install + pkg-config + examples/"
if scripts/check-install.sh build; then
    echo "install  check-install                 1 passed, 0 failed, 0 skipped"
    total_pass=$((total_pass + 1))
else
    echo "install: FAILED"
    total_fail=$((total_fail + 1))
    status=1
fi

if [ "${PA_SKIP_PYTHON:-0}" != 1 ]; then
    # The Python package as a user installs it: pip install . (meson-python runs
    # a Meson build of its own: sm_90, no tests; pyproject.toml) into a venv,
    # then pytest over python/tests from outside the source tree so the
    # installed package is the one imported.
    phase "Python package: pip install . into build/pyvenv, pytest python/tests"
    py_ok=1
    [ -x build/pyvenv/bin/python ] || python3 -m venv build/pyvenv || py_ok=0
    if [ $py_ok = 1 ]; then
        build/pyvenv/bin/python -m pip install -q --disable-pip-version-check numpy pytest || py_ok=0
    fi
    if [ $py_ok = 1 ]; then
        start=$(date +%s)
        if build/pyvenv/bin/python -m pip install -q --disable-pip-version-check . -Cbuild-dir=build/pip-build \
            -Csetup-args=-Dgpu_code="$AUX_GPU_CODE" -Ccompile-args=-j"$(nproc)" >build/pip-install.log 2>&1; then
            echo "pip install . took $(( $(date +%s) - start )) s"
        else
            tail -30 build/pip-install.log
            py_ok=0
        fi
    fi
    if [ $py_ok = 1 ]; then
        rm -f build/pytest.xml
        (cd build && pyvenv/bin/python -m pagedattn info && pyvenv/bin/python -m pytest -q -rs -p no:cacheprovider \
            --junitxml=pytest.xml ../python/tests 2>&1 | tail -25)
        counts=$(build/pyvenv/bin/python - <<'PY'
import xml.etree.ElementTree as ET
try:
    root = ET.parse("build/pytest.xml").getroot()
except Exception:
    print("0 1 0"); raise SystemExit
p = f = s = 0
for case in root.iter("testcase"):
    if case.find("failure") is not None or case.find("error") is not None:
        f += 1
    elif case.find("skipped") is not None:
        s += 1
    else:
        p += 1
print(p, f, s)
PY
)
        read -r p f s <<<"$counts"
        [ $((p + f + s)) -gt 0 ] || f=1  # a run that collected nothing is a failure
        printf '%-8s %-28s %3d passed, %d failed, %d skipped\n' python pytest "$p" "$f" "$s"
        total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
        [ "$f" -eq 0 ] || status=1
    else
        echo "python: FAILED (venv or pip install .; see build/pip-install.log)"
        total_fail=$((total_fail + 1))
        status=1
    fi
fi

if [ "${PA_SKIP_ASAN:-0}" != 1 ]; then
    phase "host tests under ASan + UBSan"
    if [ ! -f build-asan/build.ninja ]; then
        meson setup build-asan -Dgpu_archs=90 -Dgpu_code="$AUX_GPU_CODE" -Db_sanitize=address,undefined \
            -Db_lundef=false -Dbuildtype=debugoptimized >/dev/null || exit 1
    else
        meson configure build-asan -Dgpu_code="$AUX_GPU_CODE" >/dev/null || exit 1
    fi
    # The host tests' programs; a test run by a script (python3 ...) names its build targets among
    # its arguments, relative to the build directory (benchmarks/pagedattn).
    hosts=$(meson introspect build-asan --tests | python3 -c '
import json, sys
out = set()
for t in json.load(sys.stdin):
    if "host" in t["suite"][0]:
        c = t["cmd"]
        if "build-asan/" in c[0]:
            out.add(c[0].split("build-asan/", 1)[1])
        else:
            out.update(a for a in c[1:] if "/" in a and not a.startswith(("/", "-")))
print(" ".join(sorted(out)))')
    start=$(date +%s)
    ninja -C build-asan $hosts >build-asan/ninja.log 2>&1 || { tail -30 build-asan/ninja.log; exit 1; }
    echo "ASan build took $(( $(date +%s) - start )) s (gpu_code=$AUX_GPU_CODE)"
    rm -f build-asan/*.tap
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        meson test -C build-asan --no-rebuild --suite host --print-errorlogs --verbose 2>&1 |
        grep -E '^\[====\] Synthesis|^ *[0-9]+/[0-9]+ |FAIL|ERROR: (Address|Undefined)|runtime error'
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    tally build-asan asan
fi

if [ "${PA_SKIP_FUZZ:-0}" != 1 ] && [ -x scripts/fuzz.sh ]; then
    phase "bounded fuzz run"
    if scripts/fuzz.sh "${PA_FUZZ_SECONDS:-60}"; then
        echo "fuzz                                    1 passed, 0 failed, 0 skipped"
        total_pass=$((total_pass + 1))
    else
        echo "fuzz: FAILED"
        total_fail=$((total_fail + 1))
        status=1
    fi
fi

phase end
echo "== time per phase ==${phase_log}"
[ "$total_fail" -eq 0 ] || status=1
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
exit $status
