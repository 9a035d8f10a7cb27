#!/usr/bin/env python3
"""A model of the FP8 prefill path's rounding (PA_PREFILL_PATH_HOPPER_FP8), for
calibrating its tolerance (pa_tolerance_fp8_path in csrc/core/check.c) without a GPU.

It computes context attention two ways on the data the prefill tests make
(benchmarks/prefill_problems.h: Q, K, V uniform in [-1, 1], k_scale 0.05,
v_scale 0.03, the cache holding K / k_scale and V / v_scale in e4m3):
  exact: the CPU reference's semantics (Q and P exact, the cache dequantised);
  FP8 path: each Q row rounded to e4m3 with its own factor (largest |q| / 448),
            new K and V rounded with 1 / k_scale and 1 / v_scale, P = 256 x
            exp(s - max) rounded to e4m3, O = (P V) / sum(P), the sum of the
            rounded P as the kernel takes it on the tensor cores (until
            2026-11-28 the model divided by the unrounded sum),
and prints the largest and the RMS error of the second against the first.
The kernel in interpret mode shows the same figures (tests/gpu/test_prefill.c,
prefill_hopper_fp8/*, prints its largest errors).

Usage: python3 scripts/fp8_path_model.py [--scale-mul 4] [--alibi 0.5] [--trials 4]   (needs numpy)"""
import argparse

import numpy as np


def e4m3(x):
    """Round to OCP e4m3 ("fn"): nearest, ties to even, saturating at 448; subnormals below 2^-6."""
    x = np.asarray(x, dtype=np.float64)
    a = np.minimum(np.abs(x), 448.0)
    e = np.maximum(np.floor(np.log2(np.maximum(a, 1e-300))), -6.0)
    q = 2.0 ** (e - 3)  # the spacing of e4m3 values in [2^e, 2^(e+1))
    return np.sign(x) * np.minimum(np.round(a / q) * q, 448.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--head", type=int, default=128)
    ap.add_argument("--cache", type=int, default=300, help="cached keys")
    ap.add_argument("--new", type=int, default=70, help="new tokens (causal over cache + new)")
    ap.add_argument("--scale-mul", type=float, default=4.0, help="softmax scale times 1/sqrt(head)")
    ap.add_argument("--vary-rows", action="store_true", default=True,
                    help="query rows times 1/2, 1 or 2, as the tests' vary_query_rows")
    ap.add_argument("--alibi", type=float, default=0.0,
                    help="an ALiBi slope (the tests' heads 0 and 1 of 8 have 0.5 and 0.25): "
                         "slope x (key - query position) on every score, exact on both paths")
    ap.add_argument("--trials", type=int, default=4)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    hs, nc, nq = args.head, args.cache, args.new
    scale, ks, vs = args.scale_mul / np.sqrt(hs), 0.05, 0.03
    mask = np.arange(nc + nq)[None, :] <= (nc + np.arange(nq))[:, None]
    bias = args.alibi * (np.arange(nc + nq)[None, :] - (nc + np.arange(nq))[:, None])
    worst_abs, worst_rms = 0.0, 0.0
    for trial in range(args.trials):
        kc = e4m3(rng.uniform(-1, 1, (nc, hs)) / ks) * ks
        vc = e4m3(rng.uniform(-1, 1, (nc, hs)) / vs) * vs
        kn, vn = rng.uniform(-1, 1, (nq, hs)), rng.uniform(-1, 1, (nq, hs))
        k, v = np.vstack([kc, kn]), np.vstack([vc, vn])
        k8, v8 = np.vstack([kc, e4m3(kn / ks) * ks]), np.vstack([vc, e4m3(vn / vs) * vs])
        q = rng.uniform(-1, 1, (nq, hs))
        if args.vary_rows:
            q *= (2.0 ** (np.arange(nq) % 3 - 1))[:, None]
        s = np.where(mask, q @ k.T * scale + bias, -np.inf)
        p = np.exp(s - s.max(1, keepdims=True))
        o = (p @ v) / p.sum(1, keepdims=True)
        qs = np.abs(q).max(1, keepdims=True) / 448.0
        s8 = np.where(mask, (e4m3(q / qs) @ k8.T) * qs * scale + bias, -np.inf)
        p8 = 256.0 * np.exp(s8 - s8.max(1, keepdims=True))
        o8 = (e4m3(p8) @ v8) / e4m3(p8).sum(1, keepdims=True)
        err = np.abs(o8 - o)
        rms = np.sqrt((err ** 2).mean()) / np.sqrt((o ** 2).mean())
        worst_abs, worst_rms = max(worst_abs, err.max()), max(worst_rms, rms)
        print("trial %d: largest error %.4f, RMS error / RMS output %.4f" % (trial, err.max(), rms))
    print("worst: largest error %.4f, RMS error / RMS output %.4f" % (worst_abs, worst_rms))


if __name__ == "__main__":
    main()
