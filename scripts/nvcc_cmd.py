#!/usr/bin/env python3
"""The build's own nvcc command for a CUDA source, from BUILD/compile_commands.json,
with its targets (-gencode), dependency-file flags (-MD -MT -MF) and output (-o)
taken out, so that a script compiles the same source with the same flags for
another target or into another file. The command runs in BUILD. Shared by
check-sm90a.sh, check-sm8x.sh, hopper-reg-headroom.sh and budget.py (and through
it decode_loop_path.py).

  scripts/nvcc_cmd.py BUILD SOURCE          the command for SOURCE (a path that the
                                            entry's file ends with), `-c SOURCE` kept
  scripts/nvcc_cmd.py --all BUILD [SUB...]  "FILE<TAB>COMMAND" for every CUDA source of
                                            the build whose path contains a SUB (all
                                            without), the source a plain argument (for
                                            -cubin and -ptx, which -c excludes)

Interpret mode's units (host C++ of the same sources) are not CUDA commands and
are left out. Exit 1 when a SOURCE is not in the build.
"""
import json
import os
import re
import sys


def entries(build):
    """The build's CUDA compile commands, the first one of each source."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        cc = json.load(f)
    seen, out = set(), []
    for c in cc:
        if not c["file"].endswith(".cu") or "interp" in c["output"] or c["file"] in seen:
            continue
        seen.add(c["file"])
        out.append(c)
    return out


def find(build, src):
    """The entry of the source whose path ends with src, or None."""
    if src.startswith("./"):
        src = src[2:]
    for c in entries(build):
        if c["file"] == src or c["file"].endswith("/" + src):
            return c
    return None


def command(entry, source="keep"):
    """entry's command without targets, dependency files and output. source:
    "keep" leaves `-c FILE`, "plain" leaves FILE alone, "drop" removes both."""
    cmd = re.sub(r" ?-gencode=\S+", "", entry["command"])
    cmd = re.sub(r" -MD -MT \S+ -MF \S+", "", cmd)
    cmd = re.sub(r" -o \S+", "", cmd)
    if source != "keep":
        cmd = re.sub(r" -c (\S+)", (r" \1" if source == "plain" else ""), cmd)
    return cmd


def main(argv):
    if argv[:1] == ["--all"] and len(argv) >= 2:
        build, want = argv[1], argv[2:]
        for c in entries(build):
            if not want or any(w in c["file"] for w in want):
                print("%s\t%s" % (c["file"], command(c, "plain")))
        return 0
    if len(argv) != 2:
        sys.exit(__doc__)
    c = find(argv[0], argv[1])
    if c is None:
        print("nvcc_cmd: %s is not in %s/compile_commands.json" % (argv[1], argv[0]), file=sys.stderr)
        return 1
    print(command(c))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
