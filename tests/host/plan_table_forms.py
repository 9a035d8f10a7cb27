#!/usr/bin/env python3
"""`pagedattn plan`'s two forms of a block table must lay out the same batch: --block-table's text
rows and --json's arrays, empty rows included (padded with block 0 like short ones; the text form
refused an empty row until 2026-11-30, while --json took []).

  plan_table_forms.py PAGEDATTN_CLI
"""
import json
import subprocess
import sys
import tempfile

cli = sys.argv[1]
cases = [  # (computed, scheduled, text table, the same as JSON rows)
    ([0, 0], [3, 1], "0,1;", [[0, 1], []]),
    ([0, 0, 5], [3, 1, 2], "0,1;;2", [[0, 1], [], [2]]),
    ([17, 0], [1, 20], "4,5;6,7", [[4, 5], [6, 7]]),
]
bad = 0
for computed, scheduled, text, rows in cases:
    a = subprocess.run([cli, "plan", "--block-size", "16", "--computed", ",".join(map(str, computed)),
                        "--scheduled", ",".join(map(str, scheduled)), "--block-table", text],
                       capture_output=True, text=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"computed": computed, "scheduled": scheduled, "block_table": rows, "block_size": 16}, f)
    b = subprocess.run([cli, "plan", "--json", f.name], capture_output=True, text=True)
    if a.returncode != 0 or b.returncode != 0 or a.stdout != b.stdout or not a.stdout.strip():
        bad += 1
        print("FAIL --block-table %r vs --json %s: exit %d / %d\n%s%s" % (
            text, json.dumps(rows), a.returncode, b.returncode, a.stderr, b.stderr))
    else:
        json.loads(a.stdout)  # the output is JSON
        print("ok   --block-table %r == --json %s" % (text, json.dumps(rows)))
sys.exit(1 if bad else 0)
