#!/usr/bin/env python3
"""read_cards on many files (threads) beside a loop of read_card, in one process (issue 11
section 5). Medians of a few rounds; not a test.

    target/bindings/venv/bin/python crates/ccv3-py/bench/read_cards.py /tmp/gen/*.png /tmp/gen/card_v*.json

Every row reads every file once and builds every card's dict; `read_cards` reads the files on
its threads with the interpreter released and builds each dict when it is yielded.
"""

import argparse
import os
import statistics
import time

import ccv3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    files = a.files
    size = sum(os.path.getsize(f) for f in files)

    # Each card is dropped once read (keeping 100+ big cards as dicts would measure the
    # machine's memory instead); an error would stop the bench.
    def loop():
        for f in files:
            ccv3.read_card(f)

    def batch(threads):
        def run():
            for path, card in ccv3.read_cards(files, threads=threads):
                if isinstance(card, Exception):
                    raise card
        return run

    rows = [("loop of read_card(path)", loop)]
    rows += [(f"read_cards(threads={t})", batch(t)) for t in (1, 2, None)]
    print(f"{len(files)} files, {size / 1e6:.1f} MB, {os.cpu_count()} cores, ccv3 {ccv3.__version__}")
    wall = {name: [] for name, _ in rows}
    cpu = {name: [] for name, _ in rows}
    for name, fn in rows:  # warm the page cache and the code
        fn()
    for _ in range(a.rounds):
        for name, fn in rows:  # alternated, so that load on the machine hits every row alike
            c, t = time.process_time(), time.perf_counter()
            fn()
            wall[name].append((time.perf_counter() - t) * 1000)
            cpu[name].append((time.process_time() - c) * 1000)
    base = statistics.median(wall[rows[0][0]])
    for name, _ in rows:
        w = statistics.median(wall[name])
        print(f"{name:28s} {w:9.1f} ms wall ({w / len(files):6.2f} ms a file, {base / w:4.2f}x the loop), "
              f"{statistics.median(cpu[name]):9.1f} ms CPU")


if __name__ == "__main__":
    main()
