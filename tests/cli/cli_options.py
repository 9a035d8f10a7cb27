#!/usr/bin/env python3
"""The `pagedattn` CLI's option handling, on the CPU (no GPU needed).

An option an op would ignore is refused (exit 2) with one line naming it, a
--preset included; a preset sets only what the command line did not give;
values are parsed whole (no truncation, no empty list entries); the host
memory bounds count every buffer, and a shape the op refuses is refused
before its problem is built; sweeps run every point and the user's values;
`plan --json` has the flags' caps. Each case is a defect found by an audit
of the CLI (2026-12-02, D1..D17; 2026-12-05 a second): it failed before the fix.

Then (2026-12-03) the first test of each usage error and message that
scripts/refusal-coverage.py --cli found no test reaching, and output that
cannot be written (a full disk: /dev/full) failing the command, which exited
0 with its output lost before.

  tests/cli/cli_options.py build/benchmarks/pagedattn
"""
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

CPU = ["--device", "cpu", "--iters", "1", "--warmup", "0"]
SMALL = ["--seqs", "1", "--ctx", "32", "--heads", "2/1", "--head-size", "64"]


def limit_memory():
    # 4 GB of address space: a run that tries a giant allocation fails at once
    # rather than filling the machine (the cases below never need 1 GB).
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@functools.lru_cache(maxsize=None)
def sanitized(cli):
    # AddressSanitizer reserves terabytes of shadow address space at start, so
    # under the ASan build (scripts/test.sh) the limit would kill every run:
    # there the refusals are judged without it.
    with open(cli, "rb") as f:
        return b"__asan_init" in f.read()


def run(cli, args, timeout=60, limit=False, stdout_to=None):
    out = open(stdout_to, "w") if stdout_to else subprocess.PIPE
    try:
        p = subprocess.run([cli] + args, stdout=out, stderr=subprocess.PIPE, text=True, timeout=timeout,
                           preexec_fn=limit_memory if limit and not sanitized(cli) else None)
        return p.returncode, p.stdout or "", p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""
    finally:
        if stdout_to:
            out.close()


def rows(out):
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


# A row's GB/s and TFLOP/s are its bytes and FLOPs over its median time (us_median, printed to
# the nanosecond: the slack is that rounding), and the median lies between min and max.
# (tests/cli/bench_rows_interp.py imports it.)
def rates_wrong(r):
    us = r["us_median"]
    if not r["us_min"] <= us <= r["us_max"]:
        return f"median {us} outside min..max {r['us_min']}..{r['us_max']}"
    for work, rate, per_us in (("bytes", "gbps", 1e3), ("flops", "tflops", 1e6)):
        want = r[work] / (us * per_us) if r[work] > 0 and us > 0 else 0.0
        if abs(r[rate] - want) > 1e-5 * want + want * 5e-4 / max(us, 1e-3):
            return f"{rate} {r[rate]}, want {work} / us_median = {want:.6g}"
    return None


def visible_pairs(q_len, k_len, causal, window):
    """(query, key) pairs of one sequence the masks leave, key by key, as prefill.h and ragged.h
    write them: query i at q_pos = k_len - q_len + i; key j masked when j > q_pos (causal), when
    q_pos - j >= window, and, where no causal mask applies, when j - q_pos >= window."""
    n = 0
    for i in range(q_len):
        qp = k_len - q_len + i
        for j in range(k_len):
            n += not ((causal and j > qp) or (window and qp - j >= window)
                      or (window and not causal and j - qp >= window))
    return n


def main():
    cli = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="pa-cli-")
    bad = []

    def case(name, args, rc=2, says=None, check=None, timeout=60, limit=False, stdout_to=None):
        got, out, err = run(cli, args, timeout, limit, stdout_to)
        why = None
        if got != rc:
            why = f"exit {got}, want {rc}"
        elif says and any(s not in err for s in ([says] if isinstance(says, str) else says)):
            why = f"stderr lacks {says!r}"
        elif check:
            why = check(out, err)
        print(f"{'ok  ' if why is None else 'FAIL'} {name}" + (f": {why}" if why else ""))
        if why:
            print("     pagedattn " + " ".join(args)[:300])
            for line in (err.strip().splitlines() or [""])[-2:]:
                print("     " + line[:300])
            bad.append(name)

    def one_row(**want):
        def check(out, err):
            r = rows(out)
            if len(r) != 1:
                return f"{len(r)} JSON rows, want 1"
            diff = {k: (r[0].get(k), v) for k, v in want.items() if r[0].get(k) != v}
            return f"row has (got, want) {diff}" if diff else rates_wrong(r[0])
        return check

    # D1: options an op never reads are refused, not ignored
    case("D1 decode refuses --qlen", ["bench", "decode"] + CPU + SMALL + ["--qlen", "5"], says="--qlen")
    case("D1 decode refuses --decodes", ["bench", "decode"] + CPU + SMALL + ["--decodes", "3"], says="--decodes")
    case("D1 cache refuses --variant", ["bench", "cache"] + CPU + ["--seqs", "1", "--variant", "bogus"],
         says="--variant")
    case("D1 cache refuses --ctx", ["bench", "cache"] + CPU + ["--seqs", "1", "--ctx", "99999"], says="--ctx")
    case("D1 ragged refuses --variant", ["bench", "ragged"] + CPU + SMALL + ["--variant", "bogus"], says="--variant")
    case("D1 prompt refuses --block-size", ["bench", "prefill"] + CPU + SMALL + ["--block-size", "7"],
         says="--block-size")
    case("D1 blocks refuses --qlen", ["bench", "blocks"] + CPU + SMALL + ["--qlen", "4"], says="--qlen")
    case("D1 convert refuses --seqs", ["bench", "convert"] + CPU + ["--seqs", "9"], says="--seqs")
    case("D1 check refuses --iters", ["check", "decode", "--iters", "7"], says="--iters")
    case("D1 check refuses --device", ["check", "cache", "--device", "cpu"], says="--device")
    case("D1 check convert refuses --cache-dtype", ["check", "convert", "--cache-dtype", "fp8_e4m3"],
         says="--cache-dtype")
    case("D1 check merge refuses --cache-dtype", ["check", "merge", "--cache-dtype", "fp8_e4m3"], says="--cache-dtype")
    case("D1 merge refuses --ctx", ["bench", "merge"] + CPU + ["--ctx", "64"], says="--ctx")
    case("D1 check baseline takes one --ctx", ["check", "baseline", "--ctx", "64,128"], says="--ctx")
    # D17: a usage error is exit 2 before any GPU probe, and --json on check creates no file
    case("D17 check decode --variant bogus is usage", ["check", "decode", "--variant", "bogus"], says="bogus")
    jf = os.path.join(tmp, "check.json")
    case("D17 check --json refused, no file", ["check", "decode", "--json", jf], says="--json",
         check=lambda out, err: "the file was created" if os.path.exists(jf) else None)
    # D3: a --preset does not lift the refusals of the options the command line gives
    case("D3 cache --preset --alibi", ["bench", "cache"] + CPU + ["--seqs", "1", "--preset", "llama3-8b", "--alibi"],
         says="--alibi")
    case("D3 prompt --preset --layout", ["bench", "prefill"] + CPU + ["--seqs", "1", "--ctx", "16", "--preset",
                                                                      "llama3-8b", "--layout", "nhd"],
         says="--layout")
    case("D3 ragged --preset --layout nhd", ["bench", "ragged"] + CPU + ["--seqs", "1", "--ctx", "16", "--preset",
                                                                        "llama3-8b", "--layout", "nhd"],
         says="--layout")
    case("D3 convert --preset --alibi", ["bench", "convert"] + CPU + ["--preset", "llama3-8b", "--alibi"],
         says="--alibi")
    # D4: an option given before --preset wins over it as one given after does
    for order in (["--window", "8", "--preset", "gpt-oss"], ["--preset", "gpt-oss", "--window", "8"]):
        case("D4 " + " ".join(order), ["bench", "decode"] + CPU + ["--seqs", "1", "--ctx", "32", "--json", "-"] + order,
             rc=0, check=one_row(window=8, heads=64, sinks=1))
    # (2026-12-07) a flag's feature survives a preset without it: --sinks beside llama3-8b (no sinks)
    case("D4 --sinks before --preset", ["bench", "decode"] + CPU + ["--seqs", "1", "--ctx", "32", "--sinks",
                                                                    "--preset", "llama3-8b", "--json", "-"],
         rc=0, check=one_row(heads=32, kv_heads=8, sinks=1))
    case("D4 --heads before --preset", ["bench", "decode"] + CPU + ["--seqs", "1", "--ctx", "32", "--heads", "4/1",
                                                                   "--preset", "gpt-oss", "--json", "-"],
         rc=0, check=one_row(heads=4, kv_heads=1, head_size=64, sinks=1))
    case("D4 bench all refuses --heads", ["bench", "all", "--ops", "decode", "--batches", "1", "--ctx", "16",
                                          "--heads", "4/1"] + CPU, says="--heads")
    # D2: bench convert --json writes its row
    cj = os.path.join(tmp, "convert.json")
    case("D2 bench convert --json", ["bench", "convert"] + CPU + ["--json", cj], rc=0,
         check=lambda out, err: None if os.path.exists(cj) and len(rows(open(cj).read())) == 1
         and rows(open(cj).read())[0]["op"] == "convert" else "no convert row in the file")
    # bench merge --json writes its row (merge_attn_states' CPU reference at the CPU default size)
    mj = os.path.join(tmp, "merge.json")
    case("bench merge --json", ["bench", "merge"] + CPU + ["--json", mj], rc=0,
         check=lambda out, err: None if os.path.exists(mj) and len(rows(open(mj).read())) == 1
         and {k: rows(open(mj).read())[0][k] for k in ("op", "impl", "seqs", "heads", "head_size", "dtype")}
         == {"op": "merge", "impl": "cpu-ref", "seqs": 1024, "heads": 32, "head_size": 128, "dtype": "f16"}
         else "no merge row of 1024 tokens x 32 heads x 128 in the file")
    case("bench merge --seqs --heads --head-size", ["bench", "merge"] + CPU + ["--seqs", "7", "--heads", "3/1",
                                                                              "--head-size", "100", "--dtype",
                                                                              "bf16", "--json", "-"],
         rc=0, check=one_row(op="merge", seqs=7, heads=3, head_size=100, dtype="bf16",
                             bytes=7 * 3 * (3 * 100 * 2 + 3 * 4)))  # two rows read, one written; 3 lse
    # merge has no fp8 kernel: a usage error (exit 2) before any GPU probe, check and bench alike
    case("bench merge --dtype fp8_e4m3", ["bench", "merge"] + CPU + ["--dtype", "fp8_e4m3"], says="--dtype fp8_e4m3")
    case("check merge --dtype fp8_e5m2", ["check", "merge", "--dtype", "fp8_e5m2"], says="--dtype fp8_e5m2")
    case("merge --soft-cap", ["bench", "merge"] + CPU + ["--soft-cap", "30"], says="--soft-cap is an attention option")
    case("merge past 8 GB", ["bench", "merge"] + CPU + ["--seqs", "65536", "--heads", "1024/1024", "--head-size",
                                                        "256", "--dtype", "f32"], says="at most 8 GB", limit=True)
    # D5: a sweep runs every point (32 batch sizes x 17 lengths = 544, past the old 512)
    case("D5 sweep of 544 points", ["bench", "--preset", "llama3-70b-tp8", "--ops", "decode", "--batches",
                                    ",".join(str(b) for b in range(1, 33)), "--ctx",
                                    ",".join(str(c) for c in range(1, 18)), "--max-tokens", "100000", "--json",
                                    "-"] + CPU, rc=0, timeout=300,
         check=lambda out, err: None if len(rows(out)) == 544 else f"{len(rows(out))} rows, want 544")
    # D6: the ragged sweep takes the user's --qlen as given
    case("D6 ragged sweep --qlen 64 --ctx 16", ["bench", "--preset", "llama3-8b", "--ops", "ragged", "--batches", "2",
                                               "--ctx", "16", "--qlen", "64", "--json", "-"] + CPU, rc=0,
         check=one_row(qlen=64, ctx=16))
    # The ragged bench's bytes under a window (2026-12-06): K and V of the keys some row sees, the last
    # q_len + window - 1 of the sequence's ctx + q_len, as decode's bytes count a window's keys; it
    # counted every key (2x the bandwidth of the mistral-7b preset, window 4096 over 8K contexts).
    # One KV head of 64 dims in bf16: 256 bytes of K and V a key, and Q and O 256 bytes a row each head pair.
    # FLOPs: 4 x head size x query heads a visible (query, key) pair (2026-12-07, the figures' mutation
    # pass), the pairs counted key by key under ragged.h's masks; and a window reaching past the
    # sequence's start counts its 64 keys, no more.
    for name, q, w, keys in (("prefill chunk under a window", 4, 16, 4 + 16 - 1), ("decode under a window", 1, 16, 16),
                             ("decode without a window", 1, 0, 60 + 1), ("window past the start", 4, 100, 64)):
        case(f"ragged bench bytes and flops: {name}",
             ["bench", "ragged"] + CPU + ["--seqs", "1", "--qlen", str(q), "--ctx", "60", "--heads", "2/1",
                                          "--head-size", "64", "--dtype", "bf16", "--window", str(w), "--json", "-"],
             rc=0, check=one_row(bytes=keys * 2 * 64 * 2 + 2 * q * 2 * 64 * 2,
                                 flops=4 * 64 * 2 * visible_pairs(q, 60 + q, True, w)))
    # Each op's bytes and FLOPs (2026-12-07, a blind mutation pass over the figures: only ragged's
    # bytes were held), worked by hand from what the op reads and writes (include/pagedattn/*.h):
    # a wrong count misstates every GB/s, TFLOP/s and % of roof a report quotes.
    # Decode: K and V of the keys each sequence attends (all 40, or the last --window 16; decode.h)
    # at the fp8 cache's byte, Q and O rows of the 4 query heads in bf16. Three iterations: the
    # rates are of the median (rates_wrong).
    for w, keys in ((0, 40), (16, 16)):
        case(f"decode bench bytes: window {w}", ["bench", "decode"] + CPU + ["--iters", "3", "--seqs", "2", "--ctx",
                                                                          "40", "--heads", "4/2", "--head-size", "64",
                                                                          "--block-size", "16", "--dtype", "bf16",
                                                                          "--cache-dtype", "fp8_e4m3", "--window",
                                                                          str(w), "--json", "-"],
             rc=0, check=one_row(bytes=2 * keys * 2 * (2 * 64 * 1) + 2 * 2 * (4 * 64 * 2)))
    # Prefill's FLOPs: 4 x head size x query heads a visible pair (prefill.h's masks, visible_pairs):
    # a causal prompt, an encoder (non-causal; a window reaches both sides), context attention (5 new
    # tokens over 12 cached and themselves), cross-attention (5 decoder tokens over 12 encoder keys).
    for variant, ctx, qlen, w, pairs in (("prompt", 20, None, 0, visible_pairs(20, 20, True, 0)),
                                         ("prompt", 20, None, 5, visible_pairs(20, 20, True, 5)),
                                         ("encoder", 20, None, 0, 20 * 20),
                                         ("encoder", 20, None, 5, visible_pairs(20, 20, False, 5)),
                                         ("context", 12, 5, 0, visible_pairs(5, 17, True, 0)),
                                         ("cross", 12, 5, 0, 5 * 12)):
        case(f"prefill bench flops: {variant} window {w}",
             ["bench", "prefill"] + CPU + ["--variant", variant, "--seqs", "2", "--ctx", str(ctx), "--heads", "4/2",
                                           "--head-size", "32", "--window", str(w), "--json", "-"]
             + (["--qlen", str(qlen)] if qlen else []), rc=0, check=one_row(flops=4 * 32 * 4 * 2 * pairs))
    # reshape_and_cache: K and V of 3 x 5 tokens (2 KV heads of 64) read in bf16 and written in fp8,
    # and an int64 slot a token (cache_ops.h).
    case("cache bench bytes", ["bench", "cache"] + CPU + ["--seqs", "3", "--qlen", "5", "--heads", "4/2",
                                                          "--head-size", "64", "--dtype", "bf16", "--cache-dtype",
                                                          "fp8_e4m3", "--json", "-"],
         rc=0, check=one_row(bytes=2 * 15 * 2 * 64 * (2 + 1) + 15 * 8))
    # Block moves: 2 sequences of 20 tokens hold 2 blocks of 16 each; a block is 16 x 2 KV heads x 64
    # bytes (fp8) in K and again in V. A swap moves each once; copy reads and writes them, in 3 layers.
    for variant, layers, times in (("swap-out", 1, 1), ("copy", 3, 2)):
        case(f"blocks bench bytes: {variant}", ["bench", "blocks"] + CPU + ["--variant", variant, "--layers",
                                                                             str(layers), "--seqs", "2", "--ctx", "20",
                                                                             "--heads", "2/2", "--head-size", "64",
                                                                             "--block-size", "16", "--cache-dtype",
                                                                             "fp8_e4m3", "--json", "-"],
             rc=0, check=one_row(bytes=times * layers * 2 * 2 * 2 * (16 * 2 * 64)))
    # convert: n f32 read and n fp8 written (n is the row's note)
    case("convert bench bytes", ["bench", "convert"] + CPU + ["--dtype", "fp8_e4m3", "--json", "-"], rc=0,
         check=lambda out, err: one_row(bytes=int(rows(out)[0]["note"].split()[0][2:]) * (4 + 1))(out, err)
         if len(rows(out)) == 1 else "no row")
    # Timings: the median of two iterations is their mean; and they are microseconds: three
    # iterations of the CPU reference's small prompt (about 0.1 s each) are more than a twentieth of
    # the command's wall time (start-up, a GPU probe included, is the rest), and no more than all of it.
    def mean_of_two(out, err):
        r = rows(out)
        if len(r) != 1:
            return f"{len(r)} JSON rows, want 1"
        lo, med, hi = r[0]["us_min"], r[0]["us_median"], r[0]["us_max"]
        return None if abs(med - (lo + hi) / 2) <= 2e-3 else f"median {med} of two iterations, {lo} and {hi}"
    case("median of two", ["bench", "decode"] + CPU + SMALL + ["--iters", "2", "--json", "-"], rc=0,
         check=mean_of_two)

    def microseconds(out, err):
        wall_us, r = (time.monotonic() - t0) * 1e6, rows(out)
        timed = sum(r[0][k] for k in ("us_min", "us_median", "us_max")) if len(r) == 1 else 0
        return None if 0.05 * wall_us <= timed <= wall_us else f"3 iterations took {timed:.0f} us of {wall_us:.0f}"
    t0 = time.monotonic()
    case("cpu timings in microseconds", ["bench", "prefill", "--device", "cpu", "--iters", "3", "--warmup", "0",
                                         "--json", "-"], rc=0, check=microseconds)
    # A row's JSON names the memory roof it was judged against, and "none" where none was measured
    # (2026-12-07): CPU rows and rows without bytes said "copy" beside roof_gbps 0, and the swaps'
    # rows, judged against the pinned-host link, said "copy" too (the GPU half: blocks sets the kind).
    for name, args in (("decode", ["decode"] + SMALL), ("prompt", ["prefill"] + SMALL),
                       ("cache", ["cache", "--seqs", "1", "--heads", "2/1", "--head-size", "64"])):
        case(f"cpu row names no memory roof: {name}", ["bench"] + args + CPU + ["--json", "-"], rc=0,
             check=one_row(roof_gbps=0.0, roof_gbps_kind="none"))
    # D7: a sweep refuses what no swept op takes, and an empty --ops
    case("D7 sweep refuses --decodes", ["bench", "--preset", "llama3-8b", "--ops", "ragged", "--batches", "2", "--ctx",
                                        "16", "--decodes", "7"] + CPU, says="--decodes")
    case("D7 cache sweep refuses --variant", ["bench", "--preset", "llama3-8b", "--ops", "cache", "--batches", "1",
                                              "--qlen", "4", "--variant", "bogus"] + CPU, says="--variant")
    case("D7 --ops ,", ["bench", "--preset", "llama3-8b", "--ops", ","] + CPU, says="--ops")
    case("D7 --ops ''", ["bench", "all", "--ops", ""] + CPU, says="--ops")
    # D8: a value too long for the parser's buffer is refused, not truncated
    case("D8 long --heads", ["bench", "decode"] + CPU + ["--seqs", "1", "--ctx", "16", "--head-size", "64", "--heads",
                                                         "2/" + "0" * 60 + "1xyz"], says="--heads")
    case("D8 long --ctx", ["bench", "decode"] + CPU + ["--seqs", "1", "--heads", "2/1", "--head-size", "64", "--ctx",
                                                       "0" * 509 + "16junk"], says="--ctx")
    case("D8 long --batches", ["bench", "--preset", "llama3-8b", "--ops", "decode", "--ctx", "16", "--batches",
                               "0" * 510 + "1junk"] + CPU, says="--batches")
    # D9: empty list entries are refused
    for v in ("1,,2", ",16,"):
        case(f"D9 --ctx {v}", ["bench", "decode"] + CPU + ["--seqs", "1", "--heads", "2/1", "--head-size", "64",
                                                           "--ctx", v], says=["--ctx", "has an empty value"])
    case("D9 --batches 1,,2", ["bench", "--preset", "llama3-8b", "--ops", "decode", "--ctx", "16", "--batches",
                               "1,,2"] + CPU, says="--batches")
    # D10: --soft-cap of nothing, or of a value a float rounds to 0; and (2026-12-05) a blank, a sign or
    # hex, which strtod took and the integers' rule refuses; and (2026-12-07) one past a float's
    # greatest (3.4e38), finite as a double
    for v in ("", "1e-50", " 5", "+5", "-0", "0x10", "1e39"):
        case(f"D10 --soft-cap {v!r}", ["bench", "decode"] + CPU + SMALL + ["--soft-cap", v], says="--soft-cap")
    for v in ("30", "0.5", ".5", "1e3"):
        case(f"--soft-cap {v!r} taken", ["bench", "decode"] + CPU + SMALL + ["--soft-cap", v], rc=0)
    # D11: the host-memory bounds count Q and O (17 GB of queries here)
    case("D11 decode bound counts Q and O", ["bench", "decode"] + CPU + ["--heads", "4096/8", "--head-size", "256",
                                                                         "--dtype", "f32", "--seqs", "4096", "--ctx",
                                                                         "8"], says="at most 8 GB", limit=True)
    case("D11 ragged bound counts Q and O", ["bench", "ragged"] + CPU + ["--heads", "4096/1", "--head-size", "256",
                                                                         "--dtype", "f32", "--seqs", "1", "--qlen",
                                                                         "4096", "--ctx", "1"],
         says="at most 8 GB", limit=True)
    # D12: check baseline has the benches' bound (a usage error before any GPU probe)
    case("D12 check baseline bound", ["check", "baseline", "--seqs", "64", "--ctx", "4194304"], says="at most 8 GB",
         limit=True)
    # D13: a shape the op refuses is refused before its problem is built (it took 20 s)
    case("D13 ragged head size 1, large batch", ["bench", "ragged"] + CPU + ["--heads", "1/1", "--head-size", "1",
                                                                             "--seqs", "256", "--ctx", "1000000",
                                                                             "--cache-dtype", "fp8_e4m3"],
         says="head_size 1", timeout=10, limit=True)
    case("D13 encoder head size 3, large batch", ["bench", "prefill"] + CPU + ["--heads", "1/1", "--head-size", "3",
                                                                               "--seqs", "64", "--ctx", "1000000",
                                                                               "--variant", "encoder"],
         says="head_size 3", timeout=5, limit=True)
    # D14: plan --json has the flags' caps
    for key, val in (("padded", 2000000000), ("padded", -2), ("slices_per_block", 2147483647)):
        pj = os.path.join(tmp, f"plan-{key}-{val}.json")
        with open(pj, "w") as f:
            json.dump({"computed": [0], "scheduled": [1], key: val}, f)
        case(f"D14 plan --json {key} {val}", ["plan", "--json", pj], says=key, limit=True)
    case("D14 plan --slices-per-block cap", ["plan", "--computed", "0", "--scheduled", "1", "--slices-per-block",
                                             "2147483647"], says="16777216", limit=True)
    # D15: cross blocks past INT32_MAX are refused, not wrapped negative
    case("D15 plan cross block ids", ["plan", "--block-size", "1", "--computed", "0", "--scheduled", "1",
                                      "--block-table", "2147483646", "--encoder-lens", "3"], says="int32")
    # D16: an explicit shape runs as given (even at the default's values), an explicit --iters too
    case("D16 ragged explicit default shape", ["bench", "ragged"] + CPU + ["--seqs", "8", "--ctx", "1024", "--heads",
                                                                           "32/8", "--head-size", "128", "--json",
                                                                           "-"],
         rc=0, check=one_row(seqs=8, ctx=1024, heads=32, kv_heads=8))
    case("D16 prefill keeps --iters", ["bench", "prefill", "--device", "cpu", "--warmup", "0", "--iters", "5", "--json",
                                       "-"], rc=0, says="no shape given", check=one_row(iters=5))
    # the no-shape message says what each variant runs, and the row agrees (it said "256 tokens"
    # for every variant, where context adds 64 new tokens and cross has 64 decoder tokens)
    for v, says, want in (("prompt", "256 tokens a sequence", dict(ctx=256, qlen=256)),
                          ("context", "a 256-token context and 64 new tokens", dict(ctx=256, qlen=64)),
                          ("cross", "64 decoder tokens over 256 encoder keys", dict(ctx=256, qlen=64))):
        case(f"prefill {v} without a shape", ["bench", "prefill", "--device", "cpu", "--variant", v, "--iters", "1",
                                              "--warmup", "0", "--json", "-"], rc=0, says=says,
             check=one_row(**want))
    # Follow-ups (2026-12-03) of the audit's unconfirmed suspicions:
    # integers are digits with an optional '-' (strtoll took blanks and '+')
    for v in (" 16", "+16", "\t16"):
        case(f"int {v!r}", ["bench", "decode"] + CPU + ["--seqs", "1", "--heads", "2/1", "--head-size", "64",
                                                         "--ctx", v], says="--ctx")
    case("int list ' 2'", ["bench", "decode"] + CPU + ["--seqs", "1", "--heads", "2/1", "--head-size", "64",
                                                       "--ctx", "16, 32"], says="--ctx")
    # (2026-12-07) a KV head count of 0 is refused by the parser (1..4096); the last --cache-dtype wins,
    # auto (= --dtype) after an explicit one included
    case("--heads 2/0", ["bench", "decode"] + CPU + ["--seqs", "1", "--ctx", "32", "--head-size", "64", "--heads",
                                                     "2/0"], says="--heads (kv): 0 outside 1..4096")
    case("--cache-dtype auto after fp8_e4m3", ["bench", "decode"] + CPU + SMALL + ["--cache-dtype", "fp8_e4m3",
                                                                                 "--cache-dtype", "auto", "--json",
                                                                                 "-"],
         rc=0, check=one_row(dtype="f16", cache_dtype="f16"))
    # blocks moves --cache-dtype; --dtype beside an explicit one would be ignored
    case("blocks --dtype with --cache-dtype", ["bench", "blocks"] + CPU + SMALL + ["--dtype", "f32", "--cache-dtype",
                                                                                  "f16"], says="--dtype")
    case("blocks --dtype with --cache-dtype auto", ["bench", "blocks"] + CPU + SMALL + ["--dtype", "f32",
                                                                                       "--cache-dtype", "auto",
                                                                                       "--json", "-"],
         rc=0, check=one_row(cache_dtype="f32"))
    # plan --json: an empty computed or scheduled array says so (it said they were missing)
    pe = os.path.join(tmp, "plan-empty.json")
    with open(pe, "w") as f:
        json.dump({"computed": [], "scheduled": []}, f)
    case("plan --json empty arrays", ["plan", "--json", pe], says="is empty")
    # (2026-12-07) each array on its own, a value past int32 and text after the object
    for key, text in (("computed", '{"computed": [], "scheduled": [1]}'),
                      ("scheduled", '{"computed": [0], "scheduled": []}'),
                      ("int32", '{"computed": [2147483648], "scheduled": [1]}'),
                      ("trailing", '{"computed": [0], "scheduled": [1]} 7')):
        pk = os.path.join(tmp, f"plan-bad-{key}.json")
        with open(pk, "w") as f:
            f.write(text)
        case(f"plan --json {key}", ["plan", "--json", pk],
             says={"computed": '"computed" is empty', "scheduled": '"scheduled" is empty',
                   "int32": "line 1: integer out of int32 range",
                   "trailing": "trailing characters after the object"}[key])
    # A third audit (2026-12-07). A sweep point over the bound is said and counted; a sweep that
    # yields no row (every point left out or refused) is a usage error, as `bench OP` with those
    # options is (both exited 0 with "0 points skipped"); --seqs beside --batches is refused (the
    # earlier one vanished); plan --json's empty encoder_lens is refused (the cross fields vanished).
    sweep = ["bench", "--preset", "llama3-8b", "--ops", "decode"] + CPU
    case("sweep point over the bound is said", sweep + ["--seqs", "1", "--ctx", "64,8192", "--json", "-"], rc=0,
         says=["1 point(s) of batch x ctx above", "1 left out"], check=one_row(ctx=64))
    case("sweep with no row left", sweep + ["--seqs", "1", "--ctx", "8192"], says="no row")
    case("sweep whose every point refuses", sweep + ["--seqs", "1", "--ctx", "16", "--variant", "v1"],
         says="no row")
    for order in (["--seqs", "4", "--batches", "1"], ["--batches", "1", "--seqs", "4"]):
        case("sweep --seqs and --batches " + order[0], sweep + order + ["--ctx", "16"], says="both given")
    pz = os.path.join(tmp, "plan-empty-encoder.json")
    with open(pz, "w") as f:
        json.dump({"computed": [0, 5], "scheduled": [4, 1], "encoder_lens": []}, f)
    case("plan --json empty encoder_lens", ["plan", "--json", pz], says='"encoder_lens" is empty')
    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(cli)), "..", "tests", "interp", "pagedattn-interp")):
        # check baseline's one sequence was one key long whatever --ctx said, and its ragged case
        # never took --qlen below 3 sequences; with --json - the interpreter's notes left stdout to the rows
        case("check baseline --interp takes --ctx at one sequence",
             ["check", "baseline", "--interp", "--seqs", "1", "--ctx", "64", "--heads", "2/1", "--head-size", "32"],
             rc=0, check=lambda out, err: None if "max ctx 64)" in out and "1 seqs, 37 query rows" in out
             else "no 'max ctx 64' decode case or 37-row ragged case in its output")
        case("bench --interp --json - keeps stdout to the rows",
             ["bench", "decode", "--interp", "--seqs", "1", "--ctx", "16", "--heads", "2/1", "--head-size", "32",
              "--json", "-"], rc=0,
             check=lambda out, err: None if out.strip() and all(line.startswith("{") for line in out.splitlines())
             else "stdout holds more than JSON rows")
    # prefill's bound counts O (10.6 GB here; it passed as 2e9 elements of Q/K/V)
    case("prefill bound counts O", ["bench", "prefill"] + CPU + ["--dtype", "f32", "--heads", "1/1", "--head-size",
                                                                 "256", "--seqs", "1", "--ctx", "2600000"],
         says="at most 8 GB", limit=True)
    # and its cache (context variant: 17 GB of f32 cache under a 4-token query)
    case("context bound counts the cache", ["bench", "prefill"] + CPU + ["--variant", "context", "--dtype", "f32",
                                                                         "--cache-dtype", "f32", "--heads", "8/8",
                                                                         "--head-size", "256", "--seqs", "1",
                                                                         "--qlen", "4", "--ctx", "1100000"],
         says="at most 8 GB", limit=True)
    # with K and V both (2026-12-07): 16 sequences of 80000 f32 tokens, 8 KV heads of 128, are 10.5 GB
    # of cache; with K alone the bound saw 5.9 GB in all and let the problem be built
    case("context bound counts K and V of the cache", ["bench", "prefill"] + CPU + [
        "--variant", "context", "--dtype", "f32", "--cache-dtype", "f32", "--heads", "8/8", "--head-size", "128",
        "--seqs", "16", "--qlen", "1", "--ctx", "80000"], says="at most 8 GB", limit=True)
    # The CLI audit of 2026-12-05, each failing before its fix:
    # `pagedattn --interp` alone read argv[1] past the flag it had removed (a segfault);
    case("--interp alone is usage", ["--interp"], says="usage: pagedattn")
    # the CPU reference's scratch (every KV head of the longest sequence's K and V in f32) counts
    # toward the bound where the reference runs: 1M keys x 8 heads x 128 is 8 GB more than the cache
    big_k = ["--seqs", "1", "--ctx", "1000000", "--qlen", "1", "--heads", "8/8", "--head-size", "128"]
    case("prefill bound counts the reference's scratch", ["bench", "prefill"] + CPU + ["--variant", "context"] + big_k,
         says="the reference's scratch", limit=True)
    case("ragged bound counts the reference's scratch", ["bench", "ragged"] + CPU + big_k,
         says="the reference's scratch", limit=True)
    # merge on the CPU is bounded at the tokens the CPU run takes (1024), not the GPU's (8192)
    case("merge on the CPU bounded at its own tokens", ["bench", "merge"] + CPU + ["--heads", "160/1", "--head-size",
                                                                                 "512", "--dtype", "f32"], rc=0)
    case("merge on the GPU's tokens still bounded", ["bench", "merge"] + CPU + ["--seqs", "8192", "--heads", "160/1",
                                                                              "--head-size", "512", "--dtype", "f32"],
         says="at most 8 GB", limit=True)
    # check's bound counts its copy of the GPU's output: 4 x 65536 x 36 rows of 256 f32 and an lse are
    # 9.7 GB (three were 7.3 GB: the check went on to look for a GPU, exit 3)
    case("check merge bound counts the copy back", ["check", "merge", "--seqs", "65536", "--heads", "36/1",
                                                    "--head-size", "256", "--dtype", "f32"], says="at most 8 GB",
         limit=True)
    # plan names a negative encoder length (it named the slot mapping's capacity)
    case("plan names a negative encoder length", ["plan", "--computed", "1,2", "--scheduled", "3,2", "--encoder-lens",
                                                  "4,-1"], says="request 1: encoder_seq_lens -1 < 0")
    # a sweep's bad --seqs is said once (the sweep's first look at it printed it too)
    case("sweep says a bad --seqs once", ["bench", "--preset", "llama3-8b", "--seqs", "0"], says="--seqs",
         check=lambda out, err: None if err.count("--seqs") == 1 else f"said {err.count('--seqs')} times")
    # decode's --variant picks a GPU entry: the CPU reference would ignore it
    case("decode on the CPU refuses --variant", ["bench", "decode"] + CPU + SMALL + ["--variant", "v1"],
         says="--variant v1 picks a GPU entry")
    # --scales-per-head (fp8 caches: a k_scale and v_scale per KV head, 2026-12-04): refused over a
    # cache that is not fp8 (the scales would change nothing), by an op that reads no scale (blocks
    # moves bytes) or no cache (the prompt variants), and in a sweep over a 16-bit cache; before any
    # GPU probe (check too). Taken by the ops that read an fp8 cache: their rows say so.
    for op, extra in (("decode", SMALL), ("cache", ["--seqs", "1"]), ("ragged", SMALL),
                      ("prefill", SMALL + ["--variant", "context", "--qlen", "4"])):
        case(f"{op} --scales-per-head over f16", ["bench", op] + CPU + extra + ["--scales-per-head"],
             says=["--scales-per-head", "fp8 caches only", "this cache is f16"])
    case("check decode --scales-per-head over bf16", ["check", "decode", "--dtype", "bf16", "--scales-per-head"],
         says=["--scales-per-head", "fp8 caches only", "this cache is bf16"])
    case("check baseline --scales-per-head over f16", ["check", "baseline", "--scales-per-head"],
         says="fp8 caches only")
    case("blocks refuses --scales-per-head", ["bench", "blocks"] + CPU + SMALL + ["--cache-dtype", "fp8_e4m3",
                                                                                  "--scales-per-head"],
         says=["--scales-per-head would be ignored", "read no fp8 scale"])
    case("check blocks refuses --scales-per-head", ["check", "blocks", "--cache-dtype", "fp8_e5m2",
                                                    "--scales-per-head"], says="--scales-per-head would be ignored")
    case("prompt refuses --scales-per-head", ["bench", "prefill"] + CPU + SMALL + ["--scales-per-head"],
         says=["--scales-per-head would be ignored", "only --variant context reads a cache"])
    case("convert refuses --scales-per-head", ["bench", "convert"] + CPU + ["--scales-per-head"],
         says="--scales-per-head would be ignored")
    case("sweep --scales-per-head over f16", ["bench", "--preset", "llama3-8b", "--ops", "decode", "--batches", "1",
                                              "--ctx", "16", "--scales-per-head"] + CPU, says="fp8 caches only")
    for op, extra in (("decode", SMALL), ("cache", ["--seqs", "2", "--heads", "4/2", "--head-size", "64"]),
                      ("ragged", SMALL + ["--heads", "4/2"]),
                      ("prefill", SMALL + ["--heads", "4/2", "--variant", "context", "--qlen", "4"])):
        for order in (["--scales-per-head", "--preset", "llama3-8b"], ["--preset", "llama3-8b", "--scales-per-head"]):
            case(f"{op} {' '.join(order)} row", ["bench", op] + CPU + extra + ["--cache-dtype", "fp8_e4m3",
                                                                              "--json", "-"] + order,
                 rc=0, check=one_row(scales_per_head=True, cache_dtype="fp8_e4m3", preset="llama3-8b"))
    case("decode fp8 without --scales-per-head row", ["bench", "decode"] + CPU + SMALL + ["--cache-dtype", "fp8_e5m2",
                                                                                          "--json", "-"],
         rc=0, check=one_row(scales_per_head=False, cache_dtype="fp8_e5m2"))
    case("sweep --scales-per-head rows", ["bench", "--preset", "llama3-8b", "--ops", "decode,prefill", "--batches",
                                          "1", "--ctx", "16", "--cache-dtype", "fp8_e4m3", "--scales-per-head",
                                          "--json", "-"] + CPU, rc=0,
         check=lambda out, err: None if sorted((r["op"], r["scales_per_head"]) for r in rows(out))
         == [("decode", True), ("prompt", False)] else f"rows {[(r['op'], r['scales_per_head']) for r in rows(out)]}")
    # info --json is JSON (the no-device reason is a driver's message)
    case("info --json parses", ["info", "--json"], rc=0,
         check=lambda out, err: None if isinstance(json.loads(out), dict) else "not a JSON object")
    # and what must still run
    case("sweep on the CPU", ["bench", "--preset", "llama3-8b", "--ops", "decode,cache", "--batches", "1", "--ctx",
                              "16", "--json", "-"] + CPU, rc=0,
         check=lambda out, err: None if len(rows(out)) == 5 else f"{len(rows(out))} rows, want 5")
    case("swap with --layers 1", ["bench", "blocks"] + CPU + ["--variant", "swap-out", "--layers", "1", "--seqs", "2",
                                                              "--ctx", "64"], rc=0)

    # The refusals and messages no test reached (scripts/refusal-coverage.py --cli, 2026-12-03): the
    # first test of each. Commands and options:
    case("no command", [], says="usage: pagedattn COMMAND")
    case("unknown command", ["bogus"], says="unknown command 'bogus'")
    case("--interp on info", ["info", "--interp"], says="--interp is for check and bench")
    case("info's unknown option", ["info", "--bogus"], says="pagedattn info: unknown option '--bogus'")
    case("check's unknown op", ["check", "bogus"], says="unknown op 'bogus'")
    case("bench's unknown op", ["bench", "bogus"] + CPU, says="unknown op 'bogus'")
    case("unknown option", ["bench", "decode"] + CPU + ["--bogus"], says="unknown option '--bogus'")
    case("option without its value", ["bench", "decode", "--seqs"], says="--seqs needs a value")
    case("empty integer", ["bench", "decode"] + CPU + ["--seqs", ""], says="--seqs needs a value")
    case("empty list", ["bench", "decode"] + CPU + ["--ctx", ""], says="--ctx needs at least one value")
    case("33 lengths", ["bench", "decode"] + CPU + ["--ctx", ",".join(["16"] * 33)], says="at most 32 values")
    case("--device tpu", ["bench", "decode", "--device", "tpu"], says="--device must be cpu or gpu")
    case("--heads without KV", ["bench", "decode"] + CPU + ["--heads", "32"], says="--heads takes Q/KV")
    case("unknown dtype", ["bench", "decode"] + CPU + ["--dtype", "f99"], says="unknown dtype 'f99'")
    case("unknown layout", ["bench", "decode"] + CPU + ["--layout", "bogus"], says="unknown KV layout 'bogus'")
    case("unknown preset", ["bench", "decode"] + CPU + ["--preset", "bogus"], says="unknown preset 'bogus'")
    case("--json in a missing directory", ["bench", "decode"] + CPU + SMALL + ["--json",
                                                                            os.path.join(tmp, "none", "x.json")],
         says="cannot open for writing")
    for op, known in (("decode", "v1, v2, auto, all"), ("prefill", "prompt, encoder, context, cross"),
                      ("blocks", "swap-out, swap-in, copy")):
        case(f"{op} --variant bogus", ["bench", op] + CPU + ["--variant", "bogus"], says=known)
    case("sweep option without its value", ["bench", "--preset", "llama3-8b", "--ops"], says="--ops needs a value")
    case("bench options without an op", ["bench", "--seqs", "1"], says="name an op")
    case("sweep --variant bogus", ["bench", "--preset", "llama3-8b", "--ops", "decode", "--variant", "bogus"] + CPU,
         says="unknown --variant 'bogus' for decode")
    # shapes an op refuses, with the library's reason or the benchmark's bounds
    for op, extra in (("decode", ["--ctx", "16"]), ("blocks", ["--ctx", "16"]), ("cache", ["--qlen", "4"]),
                      ("prefill", ["--ctx", "16", "--variant", "context"])):
        case(f"{op} head size 3 in the vllm layout", ["bench", op] + CPU + ["--seqs", "1", "--heads", "2/1",
                                                                            "--head-size", "3"] + extra,
             says="head_size 3 must be a multiple of x = 8")
    for op, extra in (("prefill", ["--variant", "context"]), ("ragged", [])):
        case(f"{op} heads 3/2", ["bench", op] + CPU + ["--seqs", "1", "--ctx", "16", "--heads", "3/2", "--head-size",
                                                      "64"] + extra, says="3 is not a multiple of")
    case("blocks past int32 blocks", ["bench", "blocks"] + CPU + ["--seqs", "65536", "--ctx", "100000",
                                                                  "--block-size", "1"], says="blocks is too many")
    case("blocks past 8 GB", ["bench", "blocks"] + CPU + ["--seqs", "64", "--ctx", "100000", "--heads", "8/8",
                                                          "--head-size", "128", "--layers", "64", "--variant", "copy"],
         says="at most 8 GB", limit=True)
    case("cache past 2^28 tokens", ["bench", "cache"] + CPU + ["--seqs", "65536", "--qlen", "100000"],
         says="tokens is too many")
    case("cache past 8 GB", ["bench", "cache"] + CPU + ["--seqs", "256", "--qlen", "100000", "--heads", "8/8",
                                                        "--head-size", "256"], says="at most 8 GB", limit=True)
    # and counts K and V in: 25 x 15625 tokens of 8 x 256 f32 are 6.4 GB of input, and their fp8 cache
    # (a pool of twice their blocks) 3.2 GB more (2026-12-07; K alone let 6.4 GB through)
    case("cache bound counts K and V in", ["bench", "cache"] + CPU + ["--seqs", "25", "--qlen", "15625", "--heads",
                                                                      "8/8", "--head-size", "256", "--dtype", "f32",
                                                                      "--cache-dtype", "fp8_e4m3"],
         says="at most 8 GB", limit=True)
    case("cache of fp8 input", ["bench", "cache"] + CPU + ["--dtype", "fp8_e4m3"], says="input dtype fp8_e4m3")
    case("cache f32 into f16", ["bench", "cache"] + CPU + ["--dtype", "f32", "--cache-dtype", "f16"],
         says="f32 -> f16 unsupported")
    case("check baseline --layout combined", ["check", "baseline", "--layout", "combined"],
         says="the ragged case always runs on the combined layout")
    # a sweep skips the op that refuses the preset's options, once, and runs the rest
    case("sweep skips ragged under --alibi", ["bench", "--preset", "llama3-8b", "--ops", "decode,ragged", "--alibi",
                                              "--batches", "1", "--ctx", "16", "--json", "-"] + CPU, rc=0,
         says=["ragged attention has no ALiBi", "skipping ragged for llama3-8b"], check=one_row(op="decode"))
    case("ragged without a shape", ["bench", "ragged"] + CPU + ["--json", "-"], rc=0, says="no shape given",
         check=one_row(seqs=4, heads=8, kv_heads=2, ctx=256))
    # plan's own parser and bounds
    one = ["plan", "--computed", "0", "--scheduled", "1"]
    case("plan without a batch", ["plan"], says="needs --computed and --scheduled, or --json")
    case("plan without --scheduled", ["plan", "--computed", "0", "--block-size", "8"],
         says="--computed and --scheduled (or a --json file with both) are required")
    case("plan flag without its value", one + ["--computed"], says="--computed needs a value")
    case("plan's unknown flag", one + ["--bogus", "1"], says="unknown flag '--bogus'")
    case("plan lengths differ", ["plan", "--computed", "0,1", "--scheduled", "1"], says="different lengths")
    case("plan encoder lengths differ", one + ["--encoder-lens", "1,2"],
         says="--encoder-lens has a different length")
    case("plan block-table rows differ", one + ["--block-table", "1;2"],
         says="--block-table has a different number of rows")
    case("plan block size 0", one + ["--block-size", "0"], says="block_size must be > 0")
    case("plan empty value", ["plan", "--computed", "0", "--scheduled", "1,,2"], says="value 1 is empty")
    case("plan value too long", ["plan", "--computed", "0", "--scheduled", "1" + "0" * 40], says="value 0 is too long")
    case("plan --json missing", ["plan", "--json", os.path.join(tmp, "none.json")], says="No such file")
    # a directory opens but does not read: it said "line 1: expected '{'"
    case("plan --json a directory", ["plan", "--json", tmp], says="Is a directory")
    big = os.path.join(tmp, "big.json")
    with open(big, "w") as f:
        f.write(" " * (1 << 26) + "{}")
    case("plan --json past 64 MiB", ["plan", "--json", big], says="larger than 67108864 bytes", limit=True)
    case("plan block-table of 65537 rows", one + ["--block-table", ";" * 65536], says="too many rows or entries",
         limit=True)
    case("plan block-table past 2^24 entries", one + ["--block-table", ",".join(["0"] * 300) + ";" * 65535],
         says="65536 x 300 entries", limit=True)
    case("plan past 2^24 tokens", ["plan", "--computed", "0", "--scheduled", "20000000"],
         says="the CLI plans at most 16777216", limit=True)
    case("plan's allocation past 2^24 blocks", ["plan", "--computed", "1000", "--scheduled", "16777216",
                                                "--block-size", "1"], says="needs 16778216 blocks", limit=True)
    case("plan past 2^24 slices", ["plan", "--computed", "0", "--scheduled", "16777216", "--block-size", "1",
                                   "--slices-per-block", "10"], says="16777220 KV-update slices", limit=True,
         timeout=120)
    lc = os.path.join(tmp, "local.json")
    with open(lc, "w") as f:  # 65000 requests whose two new tokens straddle a chunk: 130000 x 256 pages
        json.dump({"block_size": 1, "computed": [255] * 65000, "scheduled": [2] * 65000, "chunk": 256}, f)
    case("plan's virtual batches past 2^24 pages", ["plan", "--json", lc], says="130000 virtual batches x 256 pages",
         limit=True, timeout=120)
    case("plan's builder refuses", one + ["--chunk", "1"], says="invalid argument: local attention")
    case("bench plan's unknown flag", ["bench", "plan", "--bogus"], says="unknown flag '--bogus'")
    # plan's arrays, worked by hand from its help and metadata.h (2026-12-07, a mutation pass: no case
    # read them). Blocks of 4; request 0 computes 0 + 3 (a prefill: more than one new token), request 1
    # 5 + 1 (a decode). Default table: contiguous blocks, cdiv(3, 4) = 1 -> [0], cdiv(6, 4) = 2 -> [1, 2],
    # rows padded with 0. Slots: 0, 1, 2; position 5 is block 2 offset 1 -> 9; padded to 6 with -1.
    # Cross blocks follow the decoder's (3 onward): 5 keys -> [3, 4], 2 -> [5]; cross slots only for
    # the prefill: 12..16. Slices: (0, 0, 3) and (9, 3, 1), padded to 4 (0, 0, 0). Chunks of 4: request
    # 0's 3 keys in one, request 1's query at 5 in the chunk from 4 (2 keys, block_table[1][1] = 2).
    def plan_is(**want):
        def check(out, err):
            got = json.loads(out)
            diff = {k: (got[k.split(".")[0]][k.split(".")[1]], v) for k, v in want.items()
                    if got[k.split(".")[0]][k.split(".")[1]] != v}
            return f"(got, want) {diff}" if diff else None
        return check
    worked = ["plan", "--block-size", "4", "--computed", "0,5", "--scheduled", "3,1", "--padded", "6",
              "--encoder-lens", "5,2", "--slices-per-block", "4", "--chunk", "4"]
    case("plan's worked example", worked, rc=0,
         check=plan_is(**{"common.block_table": [[0, 0], [1, 2]], "common.slot_mapping": [0, 1, 2, 9, -1, -1],
                          "common.seq_lens": [3, 6], "prompt_decode.num_prefills": 1,
                          "prompt_decode.context_lens": [0, 5],
                          "prompt_decode.cross_block_tables": [[3, 4], [5, 0]],
                          "prompt_decode.cross_slot_mapping": [12, 13, 14, 15, 16],
                          "ragged.num_slices_padded": 4, "ragged.slices": [[0, 9, 0, 0], [0, 3, 0, 0], [3, 1, 0, 0]],
                          "local_attention.seqlens_k_local": [3, 2], "local_attention.block_table_local": [[0], [2]]}))
    # a given table's largest id is 0: the cross blocks start at 1, not over block 0
    case("plan's cross blocks after a table of block 0", ["plan", "--block-size", "4", "--computed", "0",
                                                          "--scheduled", "1", "--block-table", "0",
                                                          "--encoder-lens", "1", "--prefills", "1"], rc=0,
         check=plan_is(**{"prompt_decode.cross_block_tables": [[1]], "prompt_decode.cross_slot_mapping": [4]}))
    # --json's block_table of one empty row is one column of block 0, as --block-table's empty row
    pr = os.path.join(tmp, "plan-one-empty-row.json")
    with open(pr, "w") as f:
        json.dump({"block_size": 4, "computed": [0], "scheduled": [1], "block_table": [[]]}, f)
    case("plan --json block_table [[]]", ["plan", "--json", pr], rc=0,
         check=plan_is(**{"common.block_table": [[0]], "common.slot_mapping": [0]}))
    # --json's "prefills": 0 is taken as given (all decodes), not as the default's leading prefill
    pp = os.path.join(tmp, "plan-prefills-0.json")
    with open(pp, "w") as f:
        json.dump({"block_size": 4, "computed": [0, 5], "scheduled": [3, 1], "prefills": 0}, f)
    case("plan --json prefills 0", ["plan", "--json", pp], rc=0,
         check=plan_is(**{"prompt_decode.num_prefills": 0, "prompt_decode.num_decode_tokens": 4}))
    # without a GPU: a check says how to run without one (exit 3), a bench times the CPU reference
    if json.loads(run(cli, ["info", "--json"])[1] or "{}").get("device") is None:
        for op in ("decode", "ragged", "merge"):
            case(f"check {op} without a GPU", ["check", op], rc=3, says=f"pagedattn check {op} --interp")
        case("check baseline without a GPU", ["check", "baseline"], rc=3, says="needs a CUDA GPU")
        case("bench --device gpu without a GPU", ["bench", "decode", "--device", "gpu"] + SMALL, rc=3,
             says="no CUDA device")
        case("sweep --device gpu without a GPU", ["bench", "--preset", "llama3-8b", "--device", "gpu"], rc=3,
             says="no CUDA device")
        case("sweep without a GPU", ["bench", "--preset", "llama3-8b", "--ops", "decode", "--batches", "1", "--ctx",
                                     "16", "--iters", "1", "--warmup", "0", "--json", "-"], rc=0,
             says="sweeping the CPU reference", check=one_row(op="decode", preset="llama3-8b", seqs=1, ctx=16))
        case("bench without a GPU", ["bench", "decode", "--iters", "1", "--warmup", "0", "--json", "-"] + SMALL, rc=0,
             says="timing the CPU reference", check=one_row(seqs=1, ctx=32))
    # output that cannot be written fails the command (it exited 0 with the output lost)
    if os.path.exists("/dev/full"):
        case("plan into a full disk", one, rc=1, says="writing to standard output failed", stdout_to="/dev/full")
        case("info --json into a full disk", ["info", "--json"], rc=1, says="writing to standard output failed",
             stdout_to="/dev/full")
        case("--json - into a full disk", ["bench", "decode"] + CPU + SMALL + ["--json", "-"], rc=1,
             says=["writing a JSON row to - failed", "1 JSON row(s) could not be written"], stdout_to="/dev/full")
        case("--json FILE on a full disk", ["bench", "convert"] + CPU + ["--json", "/dev/full"], rc=1,
             says="writing a JSON row to /dev/full failed")

    print(f"cli_options: {len(bad)} failed" + (": " + ", ".join(bad) if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
