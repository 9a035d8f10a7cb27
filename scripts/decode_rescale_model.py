#!/usr/bin/env python3
"""How often the tensor-core decode kernel rescales O: the exact running max against the lazy
reference (kLazyNat: 8 log2 units = 5.545 natural-log units, cuda/decode/decode_mma.cuh).

A warp of decode_mma_kernel (cuda/decode/decode_mma.cuh) keeps its own softmax state over its WT
tokens of each tile, for the heads of its CTA (up to 8 a head block, two head blocks at groups above
8), and multiplies its O accumulators by the heads' factors only when some head's reference moved in
that tile (`if (mv != 0.0f)`). A CTA's first tile always moves every head's (from -inf), so the
question is the later tiles of a split (the recommended entry: 256 tokens at 4K) or of a whole
sequence (v1).

Exact max: with the logits of one head independent and identically distributed (any continuous
law), the largest of the first j WT tokens is among the last WT with probability 1 / j, so a head
moves at tile j with probability 1 / j and a warp of H heads rescales with probability
1 - (1 - 1 / j)^H. Lazy reference: the head moves only when the tile's max passes the reference by
more than 5.545, which depends on the law's spread: simulated here for normal logits of standard
deviation sigma (natural-log units: the logits after the softmax scale). Real logits are not
independent (an attention sink at position 0 is usually a row's largest, which makes both rules move
less); the model is the case where the exact rule moves most.

Prints, per shape, the expected fraction of a CTA's tiles after its first that rescale under each
rule. Pure Python (no numpy); seeded, so the figures are reproducible.
"""
import argparse
import math
import random

LAZY = 8.0 * math.log(2.0)

# (shape, tokens a warp per tile WT, tiles a CTA: recommended split / v1 at 4K, heads a warp)
SHAPES = [
    ("bf16 head 128, GQA 32/8 (4 heads a CTA)", 8, (8, 128), 4),
    ("bf16 head 128, group 8", 8, (8, 128), 8),
    ("bf16 head 128, group 16 (two head blocks)", 8, (8, 128), 16),
    ("bf16 head 64, GQA 32/8", 16, (4, 64), 4),
    ("e4m3 head 128, GQA 32/8", 16, (4, 64), 4),
    ("e4m3 head 128, group 16", 16, (4, 64), 16),
    ("e4m3 head 64 (128-token tile), GQA 32/8", 32, (2, 32), 4),
]


def exact_fraction(tiles, heads):
    """Expected fraction of tiles 2..tiles in which some head's exact max moves."""
    if tiles < 2:
        return 0.0
    return sum(1.0 - (1.0 - 1.0 / j) ** heads for j in range(2, tiles + 1)) / (tiles - 1)


def lazy_fraction(tiles, heads, wt, sigma, trials, rng):
    """Monte Carlo: fraction of tiles 2..tiles in which some head's lazy reference moves."""
    if tiles < 2:
        return 0.0
    moved_tiles = 0
    for _ in range(trials):
        ref = [max(rng.gauss(0.0, sigma) for _ in range(wt)) for _ in range(heads)]
        for _ in range(1, tiles):
            any_moved = False
            for h in range(heads):
                mx = max(rng.gauss(0.0, sigma) for _ in range(wt))
                if mx > ref[h] + LAZY:
                    ref[h] = mx
                    any_moved = True
            moved_tiles += any_moved
    return moved_tiles / (trials * (tiles - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sigmas", default="1,2,3", help="standard deviations of the logits (natural-log units)")
    ap.add_argument("--trials", type=int, default=400, help="simulated CTAs per shape and sigma (split); v1 uses a tenth")
    ap.add_argument("--seed", type=int, default=20261201)
    a = ap.parse_args()
    sigmas = [float(s) for s in a.sigmas.split(",")]
    rng = random.Random(a.seed)
    print("Fraction of a CTA's tiles after its first in which a warp rescales O (threshold %.3f)\n" % LAZY)
    head = "| shape | CTA | tiles | exact max | " + " | ".join("lazy, sigma %g" % s for s in sigmas) + " |"
    print(head)
    print("|" + " --- |" * (4 + len(sigmas)))
    for name, wt, (t_rec, t_v1), heads in SHAPES:
        for what, tiles, trials in (("recommended (256-token split)", t_rec, a.trials),
                                    ("v1 (4K tokens)", t_v1, max(1, a.trials // 10))):
            lz = ["%.4f" % lazy_fraction(tiles, heads, wt, s, trials, rng) for s in sigmas]
            print("| %s | %s | %d | %.3f | %s |" % (name, what, tiles, exact_fraction(tiles, heads), " | ".join(lz)))


if __name__ == "__main__":
    main()
