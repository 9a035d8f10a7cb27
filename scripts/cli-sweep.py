#!/usr/bin/env python3
"""Random `pagedattn check` runs over the CLI's options, in interpret mode.

Each run draws an op (decode, prefill, ragged, cache, blocks, convert,
merge_attn_states, the cuBLAS baseline) and its options (dtypes, cache
layout, head and block sizes, heads, lengths, window, soft cap, ALiBi, sinks,
fp8 scales per KV head, presets) at random and runs `pagedattn-interp check OP --interp ...` on a
small problem, or for three draws in ten `bench OP --interp` (the benchmark's
GPU path once, on the simulated clock).
A run passes when it succeeds (exit 0) or the CLI refuses the options with a
usage error (exit 2, one line saying why); anything else (a failed comparison,
a crash, a timeout) is reported with the command line that reproduces it. The
draws are a function of --seed alone.

  scripts/cli-sweep.py --cli build/tests/interp/pagedattn-interp --seed 1 --runs 100
  scripts/cli-sweep.py --cli ... --seconds 3600 --seed $(date +%s)   (a soak)

On 2026-11-30 a sweep like this found a heap overwrite in the CLI's context
problems (ALiBi and sinks together), and the ragged and baseline checks judging
bf16 rounding the tests allow.
"""
import argparse
import json
import random
import shlex
import subprocess
import sys
import time

DTYPES = [("f16", "auto"), ("bf16", "auto"), ("f32", "auto"), ("bf16", "fp8_e4m3"), ("f16", "fp8_e5m2"),
          ("f32", "fp8_e4m3"), ("bf16", "fp8_e5m2"), ("f16", "fp8_e4m3")]
HEADS = ["4/4", "4/2", "8/1", "16/1", "6/2", "12/4", "32/2"]
HEAD_SIZES = [32, 64, 80, 96, 112, 120, 128, 192, 256]
BLOCK_SIZES = [1, 2, 8, 16, 24, 32, 64, 128]
PRESETS = ["gpt-oss", "gemma2-9b", "phi3.5-mini", "qwen3-235b", "nemotron4-340b-tp8", "falcon-40b-tp8", "falcon-7b"]


def draw(rng, cli):
    op = rng.choice(["decode", "decode", "prefill", "prefill", "ragged", "cache", "blocks", "convert", "merge",
                     "baseline"])
    dt, cdt = rng.choice(DTYPES)
    seed = str(rng.randrange(1 << 30))
    if op == "convert":  # f32 -> --dtype: it reads no cache dtype (the CLI refuses an option an op ignores)
        return [cli, "check", "convert", "--interp", "--dtype", dt, "--seed", seed]
    if op == "merge":  # --seqs tokens, --heads' query heads, --head-size; f32, f16 or bf16 only, no cache
        args = [cli, "check", "merge", "--interp", "--dtype", rng.choice(["f32", "f16", "bf16"]), "--seed", seed,
                "--seqs", str(rng.choice([1, 7, 64, 200])), "--heads", rng.choice(HEADS),
                "--head-size", str(rng.choice(HEAD_SIZES + [1, 3, 100]))]
        if rng.random() < 0.3:
            args[1] = "bench"  # the benchmark's GPU path, once (simulated clock)
        return args
    args = [cli, "check", op, "--interp", "--seqs", str(rng.choice([1, 2, 3])), "--heads", rng.choice(HEADS),
            "--head-size", str(rng.choice(HEAD_SIZES)), "--block-size", str(rng.choice(BLOCK_SIZES)),
            "--ctx", str(rng.choice([1, 5, 17, 64, 100, 257, 600])), "--dtype", dt, "--cache-dtype", cdt,
            "--seed", seed]
    if op == "decode":
        args += ["--variant", rng.choice(["v1", "v2", "auto"]), "--layout", rng.choice(["vllm", "nhd", "hnd"])]
        if rng.random() < 0.15:  # the preset's shape: given heads would win over it
            args += ["--preset", rng.choice(PRESETS)]
            for flag in ("--heads", "--head-size"):
                k = args.index(flag)
                del args[k:k + 2]
    elif op == "prefill":
        v = rng.choice(["context", "context", "prompt", "encoder", "cross"])
        args += ["--variant", v]
        if v in ("context", "cross"):
            args += ["--qlen", str(rng.choice([1, 7, 33, 70]))]
        if v == "context":
            args += ["--layout", rng.choice(["vllm", "nhd", "hnd"])]
        else:  # no cache: the CLI refuses a cache dtype or block size there
            for flag in ("--cache-dtype", "--block-size"):
                k = args.index(flag)
                del args[k:k + 2]
    elif op == "ragged":
        args += ["--qlen", str(rng.choice([1, 9, 40])), "--decodes", str(rng.choice([0, 1, 3]))]
    elif op == "cache":  # --qlen new tokens per sequence (default 1); no context to give
        args += ["--layout", rng.choice(["vllm", "nhd", "hnd", "combined"])]
        k = args.index("--ctx")
        del args[k:k + 2]
    elif op == "blocks":
        v = rng.choice(["swap-out", "swap-in", "copy"])
        args += ["--variant", v, "--layout", rng.choice(["vllm", "nhd", "hnd", "combined"])]
        if v == "copy":
            args += ["--layers", str(rng.choice([1, 2, 3]))]
        if cdt != "auto":  # the blocks are in the cache's type: --dtype only sets --cache-dtype auto's
            k = args.index("--dtype")
            del args[k:k + 2]
    elif op == "baseline":
        args += ["--qlen", str(rng.choice([1, 9, 37])), "--layout", rng.choice(["vllm", "nhd", "hnd"])]
        # The baseline checks its decode, ragged and four prefill problems, each against its
        # reference: at 257 or 600 tokens one run took 25-40 s of the sweep's 210 (seed 1, 60 runs).
        k = args.index("--ctx")
        args[k + 1] = str(min(int(args[k + 1]), 100))
    # an fp8 cache's scales per KV head, on the ops that read one (not blocks: it moves bytes;
    # not the prompt variants, which have no cache; over a 16-bit cache the CLI refuses it)
    if op in ("decode", "prefill", "ragged", "cache", "baseline") and cdt.startswith("fp8") \
            and "--cache-dtype" in args and rng.random() < 0.4:
        args += ["--scales-per-head"]
    if op in ("decode", "prefill", "ragged", "baseline"):
        if rng.random() < 0.25:
            args += ["--window", str(rng.choice([1, 8, 50]))]
        if rng.random() < 0.25:
            args += ["--soft-cap", str(rng.choice([5, 30]))]
        if rng.random() < 0.2 and op != "ragged":
            args += ["--alibi"]
        if rng.random() < 0.25:
            args += ["--sinks"]
    if op not in ("baseline", "convert") and rng.random() < 0.3:
        args[1] = "bench"  # the benchmark's GPU path, once (bench OP --interp)
        if rng.random() < 0.3:
            args += ["--json", "-"]  # the JSON rows on stdout
        if op != "blocks" and rng.random() < 0.3:  # a sweep over two lengths (cache has none)
            more = str(rng.choice([3, 40, 130]))
            if "--ctx" in args:
                k = args.index("--ctx")
                args[k + 1] += "," + more
    return args


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="the interpret-mode CLI (build/tests/interp/pagedattn-interp)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=0, help="stop after this many runs (0: --seconds only)")
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long (0: --runs only)")
    ap.add_argument("--timeout", type=float, default=600, help="one run's limit")
    a = ap.parse_args()
    if a.runs <= 0 and a.seconds <= 0:
        ap.error("give --runs or --seconds")
    rng = random.Random(a.seed)
    end = time.time() + a.seconds if a.seconds > 0 else float("inf")
    n = passed = refused = 0
    bad = []
    took = []  # (seconds, command line) of each run
    while (a.runs <= 0 or n < a.runs) and time.time() < end:
        args = draw(rng, a.cli)
        n += 1
        t0 = time.time()
        try:
            p = subprocess.run(args, capture_output=True, text=True, timeout=a.timeout)
            rc, out = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            rc, out = "timeout", ""
        took.append((time.time() - t0, shlex.join(args[1:])))
        if rc == 0 and "--json" in args:  # every row a JSON object, and at least one
            rows = [l for l in p.stdout.splitlines() if l.startswith("{")]
            try:
                for l in rows:
                    json.loads(l)
            except ValueError as e:
                rc, out = f"0 with a bad JSON row ({e})", out
            if not rows:
                rc = "0 with no JSON row"
        if rc == 0 and "FAIL" not in out:
            passed += 1
        elif rc == 2:
            refused += 1
        else:
            why = [l for l in out.splitlines() if "FAIL" in l or "outside" in l or l.startswith("pagedattn")]
            bad.append((rc, args, (why or out.splitlines() or [""])[-3:]))
            print(f"BAD (exit {rc}): {shlex.join(args)}", flush=True)
            for line in bad[-1][2]:
                print(f"    {line[:300]}", flush=True)
    total = sum(t for t, _ in took)
    for t, cmd in sorted(took, reverse=True)[:3]:
        print(f"cli-sweep: {t:6.1f} s ({100 * t / max(total, 1e-9):.0f}% of {total:.0f} s): {cmd}")
    print(f"cli-sweep: seed {a.seed}: {n} runs, {passed} passed, {refused} refused (exit 2), {len(bad)} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
