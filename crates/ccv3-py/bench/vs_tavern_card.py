#!/usr/bin/env python3
"""ccv3 beside tavern-card (pip `tavern-card==0.1.1`), the issue 29 targets; not a test.

    target/bindings/venv/bin/pip install tavern-card==0.1.1
    python3 ../shared/peers/gen.py --out /tmp/gen
    PY=target/bindings/venv/bin/python
    # 1. read_card from the path, card by card (target: 2.5x tavern-card):
    $PY crates/ccv3-py/bench/vs_tavern_card.py card /tmp/gen/card_5MB_post.png \
        /tmp/gen/card_0.5MB_post.png /tmp/gen/cardsmall_0.5MB_post.png --rounds 30
    # 2. a folder of 1,000 files (hard links cycling over the PNG cards both read), read_cards
    #    with 2 threads against a tavern-card loop (target: 3x on 2 cores):
    $PY crates/ccv3-py/bench/vs_tavern_card.py make-folder /tmp/cards1000 --count 1000 \
        ../shared/corpus/png/*.png /tmp/gen/cardsmall_0.5MB_*.png /tmp/gen/card_0.5MB_*.png \
        /tmp/gen/card_5MB_*.png
    $PY crates/ccv3-py/bench/vs_tavern_card.py folder /tmp/cards1000 --rounds 5

`--baseline SITE` adds the rows of another build of ccv3 (SITE: the site-packages folder holding its
`ccv3` package, e.g. a second venv with main's wheel), loaded in the same process under another
name, so that before and after run interleaved too.

Both readers start from the path: tavern-card is given the file's bytes (`parse_png_card(open(path,
"rb").read())`, it has no path reader), ccv3 the path (`read_card(path)`, which skips a PNG's
image data). Rows run in turns, one call (or one pass over the folder) of each per round, so that
load on the machine hits them alike; every figure is a median over rounds, every ratio the median
of the per-round ratios. Wall time and the process's CPU time (all threads) are both given; the
load average is printed before and after: on a shared machine the CPU ratios move less.
"""

import argparse
import os
import statistics
import sys
import time

import ccv3
import tavern_card


def tavern_read(path):
    """tavern-card's read of a card file: the bytes, then its PNG parser."""
    with open(path, "rb") as f:
        return tavern_card.parse_png_card(f.read())


BASELINE = None


def load_baseline(site):
    """The `ccv3` package in `site` (another build), imported as `ccv3_baseline`: a copy of the
    package folder under that name, so that its extension loads beside this one."""
    import importlib
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="ccv3-baseline-")
    shutil.copytree(os.path.join(site, "ccv3"), os.path.join(tmp, "ccv3_baseline"))
    sys.path.insert(0, tmp)
    return importlib.import_module("ccv3_baseline")


def load():
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def interleaved(rows, rounds, warmup=1):
    """Milliseconds of each row in every round, the rows called in turns."""
    for _, fn in rows:
        for _ in range(warmup):
            fn()
    times = {name: [] for name, _ in rows}
    for _ in range(rounds):
        for name, fn in rows:
            t = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t) * 1000)
    return times


def report(times, base):
    """Prints each row's median and its median per-round ratio to `base` (the peer)."""
    for name, v in times.items():
        ratio = statistics.median(b / x for b, x in zip(times[base], v))
        print(f"  {name:40s} {statistics.median(v):10.2f} ms median, {min(v):10.2f} min, "
              f"{ratio:5.2f}x {base}")


def cpu_timed(cpu, name, fn):
    """`fn`, adding the process's CPU time of each call (all its threads) to `cpu[name]`."""
    def run():
        c = time.process_time()
        fn()
        cpu[name].append((time.process_time() - c) * 1000)
    return run


def report_cpu(cpu, base):
    """Prints each row's median CPU time and its median per-round ratio to `base`."""
    for name, v in cpu.items():
        ratio = statistics.median(b / x for b, x in zip(cpu[base], v))
        print(f"  {name:40s} {statistics.median(v):10.2f} ms CPU median, {ratio:5.2f}x {base}")


def cmd_card(a):
    for path in a.files:
        size = os.path.getsize(path)
        print(f"{path}: {size / 1e6:.2f} MB, {a.rounds} rounds, {load()}")
        rows = [
            ("tavern-card", lambda: tavern_read(path)),
            ("ccv3.read_card(path)", lambda: ccv3.read_card(path)),
        ]
        if BASELINE:
            rows.append(("baseline read_card(path)", lambda: BASELINE.read_card(path)))
        cpu = {name: [] for name, _ in rows}
        report(interleaved([(n, cpu_timed(cpu, n, f)) for n, f in rows], a.rounds), "tavern-card")
        report_cpu(cpu, "tavern-card")
    print(f"after: {load()}")


def both_read(path):
    try:
        tavern_read(path)
        ccv3.read_card(path)
        return True
    except Exception as e:  # tavern-card refuses files over 10 MB, and some cards
        print(f"left out {path}: {type(e).__name__}: {str(e)[:80]}", file=sys.stderr)
        return False


def cmd_make_folder(a):
    files = [f for f in a.files if both_read(f)]
    if not files:
        sys.exit("no file both readers read")
    os.makedirs(a.dir, exist_ok=True)
    for i in range(a.count):
        src = files[i % len(files)]
        dst = os.path.join(a.dir, f"{i:04d}_{os.path.basename(src)}")
        if not os.path.exists(dst):
            os.link(src, dst)
    print(f"{a.dir}: {a.count} hard links over {len(files)} files")


def cmd_folder(a):
    files = sorted(os.path.join(a.dir, n) for n in os.listdir(a.dir))
    size = sum(os.path.getsize(f) for f in files)
    print(f"{a.dir}: {len(files)} files, {size / 1e6:.0f} MB, {os.cpu_count()} cores, "
          f"{a.rounds} rounds, {load()}")

    # Each card is dropped once read, as an importer that stores it would.
    def tavern_loop():
        for f in files:
            tavern_read(f)

    def ccv3_loop():
        for f in files:
            ccv3.read_card(f)

    def batch(threads):
        def run():
            for _, card in ccv3.read_cards(files, threads=threads):
                if isinstance(card, Exception):
                    raise card
        return run

    rows = [("tavern-card loop", tavern_loop), ("ccv3.read_card loop", ccv3_loop)]
    rows += [(f"ccv3.read_cards(threads={t})", batch(t)) for t in a.threads]
    if BASELINE:
        def baseline_batch(threads):
            def run():
                for _, card in BASELINE.read_cards(files, threads=threads):
                    if isinstance(card, Exception):
                        raise card
            return run
        rows += [(f"baseline read_cards(threads={t})", baseline_batch(t)) for t in a.threads]
    cpu = {name: [] for name, _ in rows}
    times = interleaved([(n, cpu_timed(cpu, n, f)) for n, f in rows], a.rounds, warmup=0)
    report(times, "tavern-card loop")
    report_cpu(cpu, "tavern-card loop")
    print(f"after: {load()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("card")
    c.add_argument("files", nargs="+")
    c.add_argument("--rounds", type=int, default=30)
    m = sub.add_parser("make-folder")
    m.add_argument("dir")
    m.add_argument("files", nargs="+")
    m.add_argument("--count", type=int, default=1000)
    f = sub.add_parser("folder")
    f.add_argument("dir")
    f.add_argument("--rounds", type=int, default=5)
    f.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--baseline", metavar="SITE",
                    help="also time the ccv3 package in SITE (another build), interleaved")
    a = ap.parse_args()
    if a.baseline:
        global BASELINE
        BASELINE = load_baseline(a.baseline)
    {"card": cmd_card, "make-folder": cmd_make_folder, "folder": cmd_folder}[a.cmd](a)


if __name__ == "__main__":
    main()
