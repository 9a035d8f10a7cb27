#!/usr/bin/env python3
"""exits.py CODE PROGRAM [ARGS...]: runs PROGRAM and passes (exit 0) only when it exits with
status CODE. The CLI's refusal tests want its usage error (2), where meson's should_fail would
pass any failure, a crash by a signal included."""
import subprocess
import sys


def main():
    want = int(sys.argv[1])
    r = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    if r.returncode != want:
        how = f"killed by signal {-r.returncode}" if r.returncode < 0 else f"exit status {r.returncode}"
        print(f"exits.py: {how}, expected exit status {want}")
        return 1
    if want == 2 and "usage" not in (r.stdout + r.stderr).lower() and not r.stderr.strip():
        print("exits.py: exit status 2 with no message")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
