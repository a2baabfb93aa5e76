#!/usr/bin/env python3
"""Runs commands interleaved and prints the median wall and CPU time of each (issue 16: before
and after numbers from one run on a shared machine, where load swings between runs).

    python3 scripts/bench-pair.py ROUNDS 'LABEL=COMMAND' 'LABEL=COMMAND' ...

Each round runs every command once, in the order given, output dropped; round 0 warms the page
cache and is not counted. CPU is the child's user + system time (`getrusage`), which moves less
with the load than wall time. A command is split like a shell word list (`shlex`); use
`sh -c '...'` for more, such as removing a database before a fresh `ccv3 index`.
"""
import resource
import shlex
import subprocess
import sys
import time


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    cmds = [arg.split("=", 1) for arg in sys.argv[2:]]
    runs = {label: [] for label, _ in cmds}
    for r in range(rounds + 1):
        for label, cmd in cmds:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(shlex.split(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if r > 0:
                user = after.ru_utime - before.ru_utime
                sys_ = after.ru_stime - before.ru_stime
                runs[label].append((wall, user, sys_))
    for label, _ in cmds:
        xs = runs[label]
        print(
            f"{label}: wall {median([x[0] for x in xs]):.3f} s, "
            f"CPU {median([x[1] + x[2] for x in xs]):.3f} s "
            f"(user {median([x[1] for x in xs]):.3f}, sys {median([x[2] for x in xs]):.3f})"
        )


if __name__ == "__main__":
    main()
