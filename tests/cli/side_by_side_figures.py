#!/usr/bin/env python3
"""benchmarks/side_by_side.py's figures, without torch or a GPU: the bytes a decode moves and a
causal prompt's FLOPs, which every GB/s, TFLOP/s and % of roof of its reports divides by, worked
by hand (2026-12-07, the figures' mutation pass; nothing held them before).

  tests/cli/side_by_side_figures.py benchmarks/side_by_side.py
"""
import importlib.util
import sys


def main():
    spec = importlib.util.spec_from_file_location("side_by_side", sys.argv[1])
    sbs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sbs)  # imports torch only in main()
    bad = []

    def want(name, got, expect):
        print(f"{'ok  ' if got == expect else 'FAIL'} {name}" + ("" if got == expect else f": {got}, want {expect}"))
        if got != expect:
            bad.append(name)

    # 2 sequences of 40 keys, heads 4/2 of 64, pages of 16 (a table row of 3): K and V are
    # 40 x 2 KV heads x 64 elements each a sequence, at 1 byte (fp8) or 2 (bf16); Q and O one bf16
    # row of 4 x 64 each a sequence; the table 3 int32 a sequence.
    for name, elt in (("fp8", 1), ("bf16", 2)):
        kv = 2 * (40 * 2 * 64) * 2 * elt
        want(f"decode bytes, {name} cache", sbs.decode_io_bytes([40, 40], 4, 2, 64, elt, 3),
             kv + 2 * (4 * 64 * 2) * 2 + 2 * 3 * 4)
    # Varied lengths: each sequence's own keys
    want("decode bytes, lengths 10 and 30", sbs.decode_io_bytes([10, 30], 4, 2, 64, 2, 2),
         (10 + 30) * 2 * 64 * 2 * 2 + 2 * (4 * 64 * 2) * 2 + 2 * 2 * 4)
    # A causal prompt of 20: query i sees keys 0..i, 210 pairs; 4 FLOPs a pair and dimension, 4 heads, 2 sequences
    pairs = sum(i + 1 for i in range(20))
    want("causal prefill flops", sbs.causal_prefill_flops(2, 4, 32, 20), 4.0 * 32 * 4 * 2 * pairs)
    print(f"side_by_side_figures: {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
