"""README's NumPy decode example runs as written, and its output is attention."""
import os
import re

import numpy as np

from refattn import attend

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_readme_numpy_example_runs_and_is_right():
    text = open(README).read()
    m = re.search(r"<!-- readme-numpy-example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "README lost its NumPy example block"
    ns = {}
    exec(compile(m.group(1), "README.md", "exec"), ns)
    out, q, kc, vc = ns["out"], ns["q"], ns["k_cache"], ns["v_cache"]
    bt, lens, bs, scale = ns["block_tables"], ns["seq_lens"], ns["block"], 1 / np.sqrt(ns["head"])
    for s, n in enumerate(lens):
        K = np.concatenate([kc[b] for b in bt[s]])[:n]  # NHD blocks back to back: [tokens, kv_heads, head]
        V = np.concatenate([vc[b] for b in bt[s]])[:n]
        np.testing.assert_allclose(out[s], attend(q[s:s + 1], K, V, scale)[0], atol=1e-4, rtol=1e-4)
